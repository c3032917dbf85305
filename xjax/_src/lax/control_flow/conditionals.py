"""`cond` and `switch`: the `cond` primitive, whose branches are closed jaxprs.

``cond[branches=(b0, b1, ...)] index *operands`` applies ``branches[index]``
to the operands. `lax.cond` binds it with ``(false_fun, true_fun)`` and the
predicate converted to int32; `lax.switch` clamps its index into range.
Values the branches close over are explicit leading operands (shared by all
branches). Under vmap with a batched index, the cond becomes a `select_n` over
every branch's outputs; under linearization the branches split into a known
cond (computing the residuals of every branch) and an unknown one.

`platform_dependent` binds the same primitive with one more param,
``branches_platforms`` (the lowering platforms of each branch, `None` for the
default), and a `platform_index` index; its lowering keeps only the branch of
the platform being lowered for. An ordinary cond has no such param.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from xjax._src import core
from xjax._src import dispatch
from xjax._src.config import config
from xjax._src import dtypes
from xjax._src import effects
from xjax._src import stablehlo as hlo
from xjax._src import tree_util
from xjax._src import traceback_util
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import lowering
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters import discharge
from xjax._src.lax.control_flow import common
from xjax._src.lax.control_flow import platform
from xjax._src.lax.ad_util import stop_gradient
from xjax._src.lax.elementwise import clamp, convert_element_type, eq, select_n
from xjax._src.lax.structural import broadcast_in_dim, full

_no_operand = object()


def abstractify(x) -> core.ShapedArray:
  """The aval of an operand, or JAX's TypeError for a non-array value."""
  try:
    return core.get_aval(x)
  except (TypeError, OverflowError):
    raise TypeError(f"Argument '{x}' of type '{type(x)}' is not a valid JAX type") from None


def _operands(operands, operand):
  if operand is not _no_operand:
    if operands:
      raise TypeError("if 'operand' keyword is passed then no positional operands can be "
                      f"passed, got operand={operand!r} and positional operands {operands}")
    return (operand,)
  return operands


@traceback_util.api_boundary
def cond(pred, true_fun, false_fun, *operands, operand=_no_operand):
  """Applies ``true_fun(*operands)`` if `pred` else ``false_fun(*operands)``.

  Both branches are traced; only the selected one runs. Under `vmap` with a
  batched predicate both run and the results are selected elementwise.

  Args:
    pred: a boolean or numeric scalar (numbers are compared with 0).
    true_fun, false_fun: functions of the operands returning pytrees of the
      same structure and types.
    *operands: the branches' arguments (pytrees of arrays).

  Returns:
    The selected branch's output.

  Raises:
    TypeError: `pred` is not a scalar boolean or number; the branches' outputs differ.

  Mirrors `jax.lax.cond`.
  """
  if not (callable(true_fun) and callable(false_fun)):
    if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
      x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
      return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
    raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
  operands = _operands(operands, operand)
  if pred is None:
    raise TypeError("cond predicate is None")
  if isinstance(pred, Sequence) or np.ndim(pred) != 0:
    raise TypeError(f"Pred must be a scalar, got {pred} of " +
                    (f"type {type(pred)}" if isinstance(pred, Sequence)
                     else f"shape {np.shape(pred)}."))
  try:
    pred_dtype = dtypes.result_type(pred)
  except TypeError as err:
    raise TypeError(f"Pred type must be either boolean or number, got {pred}.") from err
  if pred_dtype.kind != "b":
    if pred_dtype.kind in "iuf":
      pred = pred != 0
    else:
      raise TypeError(f"Pred type must be either boolean or number, got {pred_dtype}.")
  if config.jax_disable_jit and not isinstance(pred, core.Tracer):
    return (true_fun if pred else false_fun)(*operands)  # as JAX: the branch runs in Python
  index = convert_element_type(pred, np.int32)
  return _bind_branches(index, (false_fun, true_fun), operands, "cond",
                        ("true_fun", "false_fun"), reference=1)


@traceback_util.api_boundary
def switch(index, branches, *operands, operand=_no_operand):
  """Applies ``branches[index](*operands)``, with `index` clamped into range.

  Args:
    index: an integer scalar.
    branches: a sequence of functions with outputs of equal structure and types.
    *operands: the branches' arguments.

  Returns:
    The selected branch's output.

  Mirrors `jax.lax.switch`.
  """
  if not all(callable(b) for b in branches):
    raise TypeError("lax.switch: branches argument should be a sequence of callables.")
  operands = _operands(operands, operand)
  if len(np.shape(index)) != 0:
    raise TypeError(f"Branch index must be scalar, got {index} of shape {np.shape(index)}.")
  try:
    index_dtype = dtypes.result_type(index)
  except TypeError as err:
    raise TypeError(f"Index type must be an integer, got {index}.") from err
  if index_dtype.kind not in "iu":
    raise TypeError(f"Index type must be an integer, got {index} as {index_dtype}")
  branches = tuple(branches)
  if not branches:
    raise ValueError("Empty branch sequence")
  if len(branches) == 1:
    return branches[0](*operands)
  if config.jax_disable_jit and not isinstance(index, core.Tracer):
    return branches[min(max(int(index), 0), len(branches) - 1)](*operands)
  index = convert_element_type(index, np.int32)
  index = clamp(np.array(0, np.int32), index, np.array(len(branches) - 1, np.int32))
  return _bind_branches(index, branches, operands, "switch", None, reference=0)


@traceback_util.api_boundary
def platform_dependent(*args, default=None, **per_platform):
  """Applies the function given for the platform the computation is lowered for.

  Every function is traced; the choice is made when the computation is lowered
  (eagerly: at once, for the default backend), and only the chosen branch is
  compiled. Functions passed for several platforms are traced once. Under
  transformations it behaves as `switch` does.

  Args:
    *args: the branches' arguments (pytrees of arrays).
    default: the function for platforms not named in `per_platform`, or None.
    **per_platform: a function for each named lowering platform, e.g.
      ``cpu=...``, ``cuda=...``, ``rocm=...``, ``tpu=...``; each takes `*args`
      and all return pytrees of the same structure and types.

  Returns:
    ``per_platform[platform](*args)``, or ``default(*args)`` where `platform`
    has no entry.

  Raises:
    TypeError: a branch is not callable; the branches' outputs differ.
    ValueError: a branch is given for 'gpu' (name 'cuda' or 'rocm' instead).
    NotImplementedError: at lowering, when the platform has no branch and
      there is no `default`.

  Mirrors `jax.lax.platform_dependent`.
  """
  groups: list[tuple[list[str], object]] = []
  for name, fun in per_platform.items():
    if not callable(fun):
      raise TypeError(f"lax.platform_dependent: the '{name}' branch must be a callable.")
    if name == "gpu":
      raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
    same = next((g for g in groups if g[1] == fun), None)
    if same is None:
      groups.append(([name], fun))
    else:
      same[0].append(name)
  branches = [fun for _, fun in groups]
  branches_platforms = tuple(tuple(names) for names, _ in groups)
  if default is not None:
    if not callable(default):
      raise TypeError("lax.platform_dependent: the 'default' branch must be a callable.")
    branches.append(default)
    branches_platforms += (None,)
  index = platform.platform_index_p.bind(platforms=branches_platforms)
  value = index.to_concrete_value() if isinstance(index, core.Tracer) else index
  if value is not None:
    return branches[int(value)](*args)
  return _bind_branches(index, branches, args, "switch", None, reference=0,
                        branches_platforms=branches_platforms)


def _bind_branches(index, funs, operands, api_name, names, reference, **params):
  """Traces each branch, checks their outputs agree, and binds `cond_p` (with `params`)."""
  leaves, in_tree = tree_util.tree_flatten(operands)
  avals = [abstractify(x) for x in leaves]
  traced = [common.trace_to_jaxpr(f, in_tree, avals, api_name) for f in funs]
  ref_jaxpr, _, ref_tree = traced[reference]
  for i, (jaxpr, _, tree) in enumerate(traced):
    if i == reference:
      continue
    if names is not None:
      name1, name2 = names
    else:
      name1, name2 = "branch 0", f"branch{i}"
    common.check_branch_outputs(api_name, name1, name2, funs[reference], funs[i], ref_tree,
                                ref_jaxpr.out_avals, tree, jaxpr.out_avals)
  jaxprs, consts = common.join_consts([t[0] for t in traced], [t[1] for t in traced])
  # Outputs that every branch forwards from the same input are not outputs of the cond.
  fwds = [common.jaxpr_forwarding(j.jaxpr) for j in jaxprs]
  in_fwd = [f[0] if len(set(f)) == 1 else None for f in zip(*fwds)]
  keep = [f is None for f in in_fwd]
  if not all(keep):
    jaxprs = [common.prune_outputs(j, keep) for j in jaxprs]
  all_inputs = [*consts, *leaves]
  outs = iter(cond_p.bind(index, *all_inputs, branches=tuple(jaxprs), **params))
  out = [next(outs) if f is None else _as_array(all_inputs[f]) for f in in_fwd]
  return tree_util.tree_unflatten(ref_tree, out)


def _as_array(x):
  """A forwarded input as the cond's output: an Array (on the device, as JAX's
  `lax.asarray`), keeping a Python scalar's weak type."""
  if isinstance(x, (core.Tracer, dispatch.Array)):
    return x
  return dispatch.device_put_value(x, weak_type=core.get_aval(x).weak_type)


cond_p = core.Primitive("cond", multiple_results=True)


@cond_p.def_abstract_eval
def _cond_abstract_eval(index, *avals, branches, **params):
  common.typecheck_param("cond", branches, "branches", "tuple of ClosedJaxpr",
                         type(branches) is tuple
                         and all(type(b) is core.ClosedJaxpr for b in branches))
  if not branches:
    raise core.JaxprTypeError("cond requires at least one branch function")
  if index.shape != () or index.dtype != np.int32:
    raise TypeError(f"cond index must be an int32 scalar, got {index.str_short()}")
  for b in branches:
    if len(b.in_avals) != len(avals) or not all(map(common.typematch, b.in_avals, avals)):
      raise TypeError("internal: cond branch input types do not match its operands")
  return list(branches[0].out_avals)


def _cond_jvp(primals, tangents, *, branches, **params):
  index, *ops = primals
  nonzeros = [type(t) is not ad.Zero for t in tangents[1:]]
  n_out = len(branches[0].out_avals)
  out_nz = [False] * n_out
  for b in branches:
    _, nz = ad.jvp_jaxpr_nonzeros(b, nonzeros, [False] * n_out)
    out_nz = [a or c for a, c in zip(out_nz, nz)]
  branches_jvp = tuple(ad.jvp_jaxpr_nonzeros(b, nonzeros, out_nz)[0] for b in branches)
  nz_tangents = [t for t, nz in zip(tangents[1:], nonzeros) if nz]
  outs = cond_p.bind(index, *ops, *nz_tangents, branches=branches_jvp, **params)
  primals_out, tangents_nz = outs[:n_out], iter(outs[n_out:])
  tangents_out = [next(tangents_nz) if nz else ad.Zero(a.to_tangent_aval())
                  for a, nz in zip(branches[0].out_avals, out_nz)]
  return primals_out, tangents_out


def _zeros(aval):
  return full(aval.shape, 0, aval.dtype)


def _cond_partial_eval(trace, args, unknowns, *, branches, **params):
  index_uk, ops_uk = unknowns[0], list(unknowns[1:])
  if index_uk:
    return trace.stage(cond_p, args, dict(branches=branches, **params))
  n_out = len(branches[0].out_avals)
  out_uk = [False] * n_out
  for b in branches:
    out_uk = [a or c for a, c in zip(out_uk, pe.partial_eval_jaxpr(b, ops_uk)[2])]
  splits = [pe.partial_eval_jaxpr(b, ops_uk, instantiate=out_uk) for b in branches]
  n_known_out = n_out - sum(out_uk)
  all_res_avals, res_slots = _merge_branch_residuals(
      [known.out_avals[n_known_out:] for known, _, _, _ in splits])

  def known_branch(known, slots):
    # Every branch returns every residual slot: its own residuals in their slots,
    # `empty2` placeholders in the others.
    def fun(*args):
      outs = core.jaxpr_as_fun(known)(*args)
      residuals = [common.empty_like(a) for a in all_res_avals]
      for slot, r in zip(slots, outs[n_known_out:]):
        residuals[slot] = r
      return [*outs[:n_known_out], *residuals]
    return pe.trace_to_jaxpr(fun, known.in_avals)

  # Every unknown branch takes every residual slot, reading only its own; the
  # binders of the slots it ignores are shared by all branches (as in JAX).
  unused_vars = [core.Var(a) for a in all_res_avals]

  def unknown_branch(unknown, slots):
    invars = unknown.jaxpr.invars
    res_vars = list(unused_vars)
    for slot, v in zip(slots, invars[:len(slots)]):
      res_vars[slot] = v
    return core.ClosedJaxpr(unknown.jaxpr.replace(invars=[*res_vars, *invars[len(slots):]]),
                            unknown.consts)

  known_ops = [a for a, uk in zip(args[1:], ops_uk) if not uk]
  known_branches = tuple(known_branch(s[0], slots) for s, slots in zip(splits, res_slots))
  with core.set_current_trace(trace.parent_trace):
    known_outs = cond_p.bind(args[0], *known_ops, branches=known_branches, **params)
  residuals = known_outs[n_known_out:]
  unknown_ops = [a for a, uk in zip(args[1:], ops_uk) if uk]
  unknown_branches = tuple(unknown_branch(s[1], slots) for s, slots in zip(splits, res_slots))
  unknown_outs = trace.stage(cond_p, [args[0], *residuals, *unknown_ops],
                             dict(branches=unknown_branches, **params))
  return common.merge_lists(out_uk, known_outs[:n_known_out], unknown_outs)


def _merge_branch_residuals(branch_res_avals):
  """Shares residual slots between branches, as JAX does.

  The k-th residual of type T of every branch goes in one slot; slots are
  ordered by first appearance, branch by branch. Returns (slot avals, per
  branch: the slot of each of its residuals).
  """
  slots: dict = {}
  per_branch = []
  for avals in branch_res_avals:
    seen: dict = {}
    mine = []
    for a in avals:
      key = (a, seen.get(a, 0))
      seen[a] = key[1] + 1
      mine.append(slots.setdefault(key, len(slots)))
    per_branch.append(mine)
  slot_avals = [a for a, _ in slots]
  return slot_avals, per_branch


def _cond_transpose(cts, index, *ops, branches, **params):
  assert not ad.is_undefined_primal(index), "internal: cond index is linear"
  linear = [ad.is_undefined_primal(x) for x in ops]
  res = [x for x, lin in zip(ops, linear) if not lin]
  res_avals = [core.get_aval(x) for x in res]
  ct_avals = [a.to_tangent_aval() for a in branches[0].out_avals]
  cts = [ad.instantiate_zeros(ct) for ct in cts]

  def transposed(branch):
    def fun(*args):
      res_iter, ct_args = iter(args[:len(res)]), args[len(res):]
      primals = [ad.UndefinedPrimal(a) if lin else next(res_iter)
                 for a, lin in zip(branch.in_avals, linear)]
      cts_in = ad.backward_pass(branch.jaxpr, branch.consts, primals, list(ct_args))
      return [_instantiate(ct, a.to_tangent_aval()) for ct, a, lin
              in zip(cts_in, branch.in_avals, linear) if lin]
    return pe.trace_to_jaxpr(fun, [*res_avals, *ct_avals])

  outs = cond_p.bind(index, *res, *cts, branches=tuple(transposed(b) for b in branches),
                     **params)
  outs = iter(outs)
  return [None, *(next(outs) if lin else None for lin in linear)]


def _instantiate(ct, aval):
  if ct is None or type(ct) is ad.Zero:
    return _zeros(aval)
  return ct


def _cond_dce_rule(used_outputs, eqn):
  """Drops the outputs nothing uses, and the operands no branch then reads."""
  if not any(used_outputs) and not core.is_live_regardless(eqn):
    return [False] * len(eqn.invars), None
  branches = eqn.params["branches"]
  used_ops = [False] * (len(eqn.invars) - 1)
  for b in branches:
    used = pe.dce_jaxpr(b.jaxpr, used_outputs)[1]
    used_ops = [a or c for a, c in zip(used_ops, used)]
  new_branches = tuple(core.ClosedJaxpr(pe.dce_jaxpr(b.jaxpr, used_outputs, used_ops)[0],
                                        b.consts) for b in branches)
  used_inputs = [True, *used_ops]
  new_eqn = eqn.replace(
      invars=[v for v, u in zip(eqn.invars, used_inputs) if u],
      outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u],
      params=dict(eqn.params, branches=new_branches))
  return used_inputs, new_eqn


cond_p.def_jvp(_cond_jvp)
cond_p.def_partial_eval(_cond_partial_eval)
cond_p.def_transpose(_cond_transpose)
cond_p.dce_rule = _cond_dce_rule


@cond_p.def_batch
def _cond_batch(axis_data, args, dims, *, branches, **params):
  (index, *ops), (index_dim, *op_dims) = args, dims
  if "branches_platforms" in params and index_dim is not batching.not_mapped:
    # A platform_dependent index is the same for every member: make it afresh.
    index = platform.platform_index_p.bind(platforms=params["branches_platforms"])
    index_dim = batching.not_mapped
  in_batched = [d is not batching.not_mapped for d in op_dims]
  ops = [batching.moveaxis(x, d, 0) if b else x for x, d, b in zip(ops, op_dims, in_batched)]
  n_out = len(branches[0].out_avals)
  if index_dim is not batching.not_mapped:
    # A batched predicate: run every branch on every member, then select per
    # member. Each branch sees its operands through a stop_gradient in the
    # members that do not take it, so a branch's NaN derivatives (log of a
    # negative, say) cannot leak into the others' gradients, as in JAX.
    index = batching.moveaxis(index, index_dim, 0)
    ops = [x if b else batching.broadcast(x, axis_data.size, 0) for x, b in zip(ops, in_batched)]
    all_batched = [True] * len(ops)
    results = []
    for i, branch in enumerate(branches):
      taken = eq(index, np.array(i, core.get_aval(index).dtype))
      guarded = [_bcast_select_n(taken, stop_gradient(x), x) for x in ops]
      batched = batching.batch_jaxpr(branch, axis_data, all_batched, True)[0]
      results.append(core.jaxpr_as_fun(batched)(*guarded))
    outs = [_bcast_select_n(index, *cases) for cases in zip(*results)]
    return outs, [0] * n_out
  out_batched = [False] * n_out
  for b in branches:
    out_batched = [a or c for a, c in
                   zip(out_batched, batching.batch_jaxpr(b, axis_data, in_batched, False)[1])]
  batched = tuple(batching.batch_jaxpr(b, axis_data, in_batched, out_batched)[0]
                  for b in branches)
  outs = cond_p.bind(index, *ops, branches=batched, **params)
  return outs, [0 if b else batching.not_mapped for b in out_batched]


def _bcast_select_n(which, *cases):
  shape = np.shape(cases[0])
  if np.ndim(which) != len(shape):
    which = broadcast_in_dim(which, shape, tuple(range(np.ndim(which))))
  return select_n(which, *cases)


@cond_p.def_lowering
def _cond_lowering(ctx, index, *ops, branches, **params):
  if (branches_platforms := params.get("branches_platforms")) is not None:
    # platform_dependent: only the branch of the lowering platform is emitted.
    chosen = platform.branch_for_platform(branches_platforms, platform.lowering_platform())
    branch = branches[chosen]
    consts = [ctx.constant(np.asarray(c)) for c in branch.consts]
    return lowering.lower_jaxpr_body(ctx, branch.jaxpr, consts, list(ops))
  out_types = [hlo.aval_type(a) for a in ctx.avals_out]
  # Ordered effects in a branch chain from the enclosing token; each branch
  # returns its last token after its outputs.
  ordered = any(effects.has_ordered(b.jaxpr.effects) for b in branches)
  token = ctx.ordered_token() if ordered else None

  def body(branch):
    def emit(sub, _):
      sub.token = token
      consts = [sub.constant(np.asarray(c)) for c in branch.consts]
      outs = lowering.lower_jaxpr_body(sub, branch.jaxpr, consts, list(ops))
      return [*outs, sub.ordered_token()] if ordered else outs
    return common.region(ctx, [], emit)

  regions = [body(b) for b in branches]
  if not ordered:
    return ctx.op("stablehlo.case", [index], out_types, regions=regions)
  outs = ctx.op("stablehlo.case", [index], [*out_types, hlo.TOKEN_TYPE], regions=regions)
  ctx.token = outs[-1]
  return outs[:-1]


def select(pred, on_true, on_false):
  """Elementwise ``on_true if pred else on_false`` (the batched form of `cond`).

  Args:
    pred: a boolean array of the operands' shape, or a boolean scalar.
    on_true, on_false: arrays of one shape and dtype.

  Returns:
    An array of the operands' shape and dtype.

  Mirrors `jax.lax.select`.
  """
  return select_n(pred, on_false, on_true)


# ----------------------------------------------------------------------------
# Refs: the discharge rule (state/discharge.py) threading ref values through the branches


@cond_p.def_discharge
def _cond_discharge(ref_ids, in_avals, args, *, branches, **params):
  index, *ops = args
  converted = [discharge.consts_as_args(discharge.discharged_closed(b)) for b in branches]
  jaxprs, consts = common.join_consts(
      [core.ClosedJaxpr(j.jaxpr, []) for j, _ in converted], [c for _, c in converted])
  n_out = len(branches[0].out_avals)
  outs = cond_p.bind(index, *consts, *ops, branches=tuple(jaxprs), **params)
  finals = iter(outs[n_out:])
  return [next(finals) if r is not None else None for r in ref_ids], outs[:n_out]
