"""`while_loop` and `fori_loop`: the `while` primitive.

``while[cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts] *cconsts *bconsts *carry``
iterates ``carry = body(*bconsts, *carry)`` while ``cond(*cconsts, *carry)``.
It is differentiable in forward mode only (its trip count is dynamic);
reverse mode raises JAX's error. `fori_loop` with concrete bounds is a `scan`
instead, so it is reverse-differentiable too.
"""
from __future__ import annotations

import weakref

import numpy as np

from xjax._src import core
from xjax._src import dispatch
from xjax._src import executable_cache
from xjax._src import errors
from xjax._src.config import config
from xjax._src import dtypes
from xjax._src import effects
from xjax._src import tree_util
from xjax._src import traceback_util
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import lowering
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters import discharge
from xjax._src.lax.control_flow import common
from xjax._src.lax.control_flow.conditionals import _bcast_select_n, abstractify
from xjax._src.lax.elementwise import _const, add, convert_element_type, lt
from xjax._src.lax.reductions import reduce_or


@traceback_util.api_boundary
def trace_cond_and_body(cond_fun, body_fun, in_tree, avals):
  """`cond_fun` and `body_fun` traced on carries of `avals` (flattened from `in_tree`),
  with while_loop's check that cond returns a boolean scalar.

  Returns (cond_jaxpr, cond_consts, body_jaxpr, body_consts, body_tree).
  """
  cond_jaxpr, cond_consts, cond_tree = common.trace_to_jaxpr(cond_fun, in_tree, avals,
                                                             "while_cond")
  body_jaxpr, body_consts, body_tree = common.trace_to_jaxpr(body_fun, in_tree, avals,
                                                             "while_body")
  if not tree_util.treedef_is_leaf(cond_tree) or len(cond_jaxpr.out_avals) != 1:
    raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {cond_tree}.")
  pred = cond_jaxpr.out_avals[0]
  if pred.shape != () or pred.dtype != np.bool_:
    raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                    f"[{pred!r}].")
  return cond_jaxpr, cond_consts, body_jaxpr, body_consts, body_tree


def _as_array(x):
  return x if isinstance(x, (core.Tracer, dispatch.Array)) else dispatch.device_put_value(x)


def while_loop(cond_fun, body_fun, init_val):
  """Repeats ``val = body_fun(val)`` while ``cond_fun(val)``; returns the final `val`.

  Args:
    cond_fun: a function of the carry returning a boolean scalar.
    body_fun: a function of the carry returning a carry of the same structure and types.
    init_val: the initial carry (a pytree of arrays).

  Returns:
    The carry after the last iteration.

  Raises:
    TypeError: `cond_fun` does not return a boolean scalar, or `body_fun`
      changes the carry's structure or types.

  Differentiable in forward mode only. Mirrors `jax.lax.while_loop`.
  """
  if not (callable(body_fun) and callable(cond_fun)):
    raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
  if config.jax_disable_jit:
    # As JAX: the loop runs in Python, unless the condition needs a traced value (vmap).
    try:
      val = tree_util.tree_map(_as_array, init_val)
      while cond_fun(val):
        val = tree_util.tree_map(_as_array, body_fun(val))
      return val
    except errors.ConcretizationTypeError:
      pass
  leaves, tree = tree_util.tree_flatten(init_val)
  avals = [abstractify(x) for x in leaves]
  in_tree = tree_util.tree_structure((init_val,))
  create = lambda avals: trace_cond_and_body(cond_fun, body_fun, in_tree, avals)
  cond_jaxpr, cond_consts, body_jaxpr, body_consts, body_tree = create(avals)
  n_bc = len(body_consts)
  body_out = body_jaxpr.out_avals
  if len(body_out) != len(avals):
    common.check_carry_type("while_loop body", body_fun, tree, avals, body_tree, body_out)
  leaves, changed = common.promote_weak_typed_inputs(leaves, avals, body_out)
  if changed:
    avals = [core.get_aval(x) for x in leaves]
    cond_jaxpr, cond_consts, body_jaxpr, body_consts, body_tree = create(avals)
    n_bc = len(body_consts)
  common.check_carry_type("while_loop body", body_fun, tree, avals, body_tree,
                          body_jaxpr.out_avals)
  # Carries the body passes through unchanged and cond does not read become body consts.
  fwd = common.jaxpr_forwarding(body_jaxpr.jaxpr)
  carry_nofwd = [n_bc + i != f for i, f in enumerate(fwd)]
  n_cc = len(cond_consts)
  cond_dced, keep = pe.dce_jaxpr(cond_jaxpr.jaxpr, [True], [True] * n_cc + carry_nofwd)
  move_to_const = [not k for k in keep[n_cc:]]
  new_consts = []
  if any(move_to_const):
    cond_jaxpr = core.ClosedJaxpr(cond_dced, cond_jaxpr.consts)
    body_jaxpr = common.prune_outputs(body_jaxpr, [not m for m in move_to_const])
    body_jaxpr = common.move_binders_to_front(body_jaxpr, [False] * n_bc + move_to_const)
    leaves, new_consts = common.partition_list(move_to_const, leaves)
    body_consts = [*new_consts, *body_consts]
  outs = while_p.bind(*cond_consts, *body_consts, *leaves, cond_nconsts=len(cond_consts),
                      cond_jaxpr=cond_jaxpr, body_nconsts=len(body_consts),
                      body_jaxpr=body_jaxpr)
  if any(move_to_const):
    outs = common.merge_lists(move_to_const, outs, new_consts)
  return tree_util.tree_unflatten(body_tree, outs)


while_p = core.Primitive("while", multiple_results=True)


@while_p.def_abstract_eval
def _while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
  carry = avals[cond_nconsts + body_nconsts:]
  if not all(map(common.typematch, carry, body_jaxpr.out_avals)):
    raise TypeError("internal: while carry types do not match its body's outputs")
  return list(body_jaxpr.out_avals)


def _split(xs, *sizes):
  out, i = [], 0
  for n in sizes:
    out.append(list(xs[i:i + n]))
    i += n
  out.append(list(xs[i:]))
  return out


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
  nonzeros = [type(t) is not ad.Zero for t in tangents]
  cconsts, bconsts, init = _split(primals, cond_nconsts, body_nconsts)
  _, bconst_nz, init_nz = _split(nonzeros, cond_nconsts, body_nconsts)
  n_carry = len(init)
  carry_nz = init_nz
  for _ in range(1 + n_carry):
    body_jvp, out_nz = ad.jvp_jaxpr_nonzeros(body_jaxpr, bconst_nz + carry_nz, carry_nz)
    if out_nz == carry_nz:
      break
    carry_nz = [a or b for a, b in zip(carry_nz, out_nz)]
  # body_jvp binders: (bconsts, carry, bconst tangents, carry tangents): consts first.
  n_bct, n_ct = sum(bconst_nz), sum(carry_nz)
  v = body_jvp.jaxpr.invars
  bc, carry, bct, ct = _split(v, body_nconsts, n_carry, n_bct)
  body_jvp = core.ClosedJaxpr(body_jvp.jaxpr.replace(invars=[*bc, *bct, *carry, *ct]),
                              body_jvp.consts)
  cond_invars = cond_jaxpr.jaxpr.invars
  extra = [core.Var(a.to_tangent_aval()) for a, nz in zip(body_jaxpr.in_avals[body_nconsts:],
                                                          carry_nz) if nz]
  cond_aug = core.ClosedJaxpr(cond_jaxpr.jaxpr.replace(invars=[*cond_invars, *extra]),
                              cond_jaxpr.consts)
  _, bconst_t, init_t = _split(tangents, cond_nconsts, body_nconsts)
  bconst_t = [t for t, nz in zip(bconst_t, bconst_nz) if nz]
  init_t = [ad.instantiate_zeros(t) for t, nz in zip(init_t, carry_nz) if nz]
  outs = while_p.bind(*cconsts, *bconsts, *bconst_t, *init, *init_t, cond_nconsts=cond_nconsts,
                      cond_jaxpr=cond_aug, body_nconsts=body_nconsts + n_bct,
                      body_jaxpr=body_jvp)
  primals_out, tangents_nz = outs[:n_carry], iter(outs[n_carry:])
  tangents_out = [next(tangents_nz) if nz else ad.Zero(a.to_tangent_aval())
                  for a, nz in zip(body_jaxpr.out_avals, carry_nz)]
  return primals_out, tangents_out


def _while_partial_eval(trace, args, unknowns, *, cond_jaxpr, body_jaxpr, cond_nconsts,
                        body_nconsts):
  params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                body_nconsts=body_nconsts)
  cconst_uk, bconst_uk, carry_uk = _split(unknowns, cond_nconsts, body_nconsts)
  n_carry = len(carry_uk)
  for _ in range(1 + n_carry):
    out_uk = pe.partial_eval_jaxpr(body_jaxpr, bconst_uk + carry_uk)[2]
    if all(not o or c for o, c in zip(out_uk, carry_uk)):
      break
    carry_uk = [a or b for a, b in zip(carry_uk, out_uk)]
  cond_known, _, (cond_uk,), n_cond_res = pe.partial_eval_jaxpr(cond_jaxpr,
                                                                 cconst_uk + carry_uk)
  if cond_uk or all(unknowns):
    return trace.stage(while_p, args, params)
  cond_known = common.prune_outputs(cond_known, [True] + [False] * n_cond_res)
  # The known carries run in a known loop (whose body still computes, and drops,
  # the residuals, as JAX's does); the whole loop is staged for the unknown ones,
  # recomputing the known carries.
  known, _, _, num_res = pe.partial_eval_jaxpr(body_jaxpr, bconst_uk + carry_uk,
                                               instantiate=carry_uk)
  n_known = n_carry - sum(carry_uk)
  known = common.prune_outputs(known, [True] * n_known + [False] * num_res)
  cconsts, bconsts, carry = _split(args, cond_nconsts, body_nconsts)
  keep = lambda xs, uks: [x for x, u in zip(xs, uks) if not u]
  with core.set_current_trace(trace.parent_trace):
    known_outs = while_p.bind(
        *keep(cconsts, cconst_uk), *keep(bconsts, bconst_uk), *keep(carry, carry_uk),
        cond_jaxpr=cond_known, body_jaxpr=known,
        cond_nconsts=cond_nconsts - sum(cconst_uk), body_nconsts=body_nconsts - sum(bconst_uk))
  staged = trace.stage(while_p, args, params)
  staged_uk = [s for s, u in zip(staged, carry_uk) if u]
  return common.merge_lists(carry_uk, known_outs, staged_uk)


def _while_transpose(cts, *args, **params):
  raise ValueError("Reverse-mode differentiation does not work for lax.while_loop or "
                   "lax.fori_loop with dynamic start/stop values. Try using lax.scan, or "
                   "using fori_loop with static start/stop.")


while_p.def_jvp(_while_jvp)
while_p.def_partial_eval(_while_partial_eval)
while_p.def_transpose(_while_transpose)


@while_p.def_batch
def _while_batch(axis_data, args, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts,
                 body_nconsts):
  size = axis_data.size
  bat = [d is not batching.not_mapped for d in dims]
  cconst_bat, bconst_bat, carry_bat = _split(bat, cond_nconsts, body_nconsts)
  n_carry = len(carry_bat)
  for _ in range(1 + n_carry):
    _, out_bat = batching.batch_jaxpr(body_jaxpr, axis_data, bconst_bat + carry_bat, carry_bat)
    if list(out_bat) == carry_bat:
      break
    carry_bat = [a or b for a, b in zip(carry_bat, out_bat)]
  _, (pred_bat,) = batching.batch_jaxpr(cond_jaxpr, axis_data, cconst_bat + carry_bat, False)
  if pred_bat:
    # Lanes finish at different times: run while any lane runs, keeping finished lanes' carry.
    carry_bat = [True] * n_carry
  body_b, _ = batching.batch_jaxpr(body_jaxpr, axis_data, bconst_bat + carry_bat, carry_bat)
  cond_b, _ = batching.batch_jaxpr(cond_jaxpr, axis_data, cconst_bat + carry_bat, False)
  args = [batching.moveaxis(x, d, 0) if b else x for x, d, b in zip(args, dims, bat)]
  cconsts, bconsts, carry = _split(args, cond_nconsts, body_nconsts)
  carry = [batching.bdim_at_front(x, d, size) if cb and not b else x
           for x, d, b, cb in zip(carry, dims[cond_nconsts + body_nconsts:],
                                  bat[cond_nconsts + body_nconsts:], carry_bat)]
  if not pred_bat:
    outs = while_p.bind(*cconsts, *bconsts, *carry, cond_jaxpr=cond_b, body_jaxpr=body_b,
                        cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
    return outs, [0 if b else batching.not_mapped for b in carry_bat]
  cc_avals = [core.get_aval(x) for x in cconsts]
  bc_avals = [core.get_aval(x) for x in bconsts]
  carry_avals = [core.get_aval(x) for x in carry]

  def new_cond(*args):
    (pred,) = core.jaxpr_as_fun(cond_b)(*args)
    return [reduce_or(pred, (0,))]

  def new_body(*args):
    cc, bc, old = _split(args, cond_nconsts, body_nconsts)
    (pred,) = core.jaxpr_as_fun(cond_b)(*cc, *old)
    new = core.jaxpr_as_fun(body_b)(*bc, *old)
    return [_bcast_select_n(pred, o, n) for o, n in zip(old, new)]

  cond_j = pe.trace_to_jaxpr(new_cond, [*cc_avals, *carry_avals])
  body_j = pe.trace_to_jaxpr(new_body, [*cc_avals, *bc_avals, *carry_avals])
  outs = while_p.bind(*cconsts, *cconsts, *bconsts, *carry, cond_jaxpr=cond_j, body_jaxpr=body_j,
                      cond_nconsts=cond_nconsts, body_nconsts=cond_nconsts + body_nconsts)
  return outs, [0] * n_carry


@while_p.def_lowering
def _while_lowering(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
  # Ordered effects in the loop chain through a token carried last.
  ordered = effects.has_ordered(cond_jaxpr.jaxpr.effects | body_jaxpr.jaxpr.effects)
  operands = [*args, ctx.ordered_token()] if ordered else list(args)
  types = [v.type for v in operands]
  n = cond_nconsts + body_nconsts
  n_args = len(args)

  def cond_region(sub, vals):
    if ordered:
      sub.token = vals[n_args]
    consts = [sub.constant(np.asarray(c)) for c in cond_jaxpr.consts]
    return lowering.lower_jaxpr_body(sub, cond_jaxpr.jaxpr, consts,
                                     [*vals[:cond_nconsts], *vals[n:n_args]])

  def body_region(sub, vals):
    if ordered:
      sub.token = vals[n_args]
    consts = [sub.constant(np.asarray(c)) for c in body_jaxpr.consts]
    outs = lowering.lower_jaxpr_body(sub, body_jaxpr.jaxpr, consts,
                                     list(vals[cond_nconsts:n_args]))
    return [*vals[:n], *outs, *([sub.token] if ordered else [])]

  regions = [common.region(ctx, types, cond_region), common.region(ctx, types, body_region)]
  outs = ctx.op("stablehlo.while", operands, types, regions=regions)
  if ordered:
    ctx.token = outs[n_args]
  return outs[n:n_args]


# ----------------------------------------------------------------------------
# fori_loop

_scan_bodies: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_while_bodies: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
executable_cache.on_clear(_scan_bodies.clear)
executable_cache.on_clear(_while_bodies.clear)


def _cached_wrapper(cache, body_fun, make):
  try:
    wrapper = cache.get(body_fun)
  except TypeError:
    return make(lambda: body_fun)
  if wrapper is None:
    ref = weakref.ref(body_fun)
    wrapper = cache[body_fun] = make(ref)
  return wrapper


def _fori_scan_body(get_body):
  def scanned_fun(loop_carry, _):
    i, x = loop_carry
    return (i + 1, get_body()(i, x)), None
  return scanned_fun


def _fori_while_body(get_body):
  def while_body_fun(loop_carry):
    i, upper, x = loop_carry
    return add(i, _const(i, 1)), upper, get_body()(i, x)
  return while_body_fun


def _fori_cond_fun(loop_carry):
  i, upper, _ = loop_carry
  return lt(i, upper)


def _concrete_int(x):
  if isinstance(x, core.Tracer):
    value = x.to_concrete_value()
    return None if value is None else int(value)
  return int(x)


@traceback_util.api_boundary
def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
  """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``; returns the final `val`.

  With concrete (Python or known) bounds the loop is a `scan`, so it is
  reverse-differentiable; with traced bounds it is a `while_loop`
  (forward-mode differentiable only).

  Args:
    lower, upper: integer loop bounds (of one dtype, up to weak types).
    body_fun: ``(i, val) -> val``, keeping `val`'s structure and types.
    init_val: the initial value (a pytree of arrays).
    unroll: with concrete bounds, iterations per loop step (as `scan`'s `unroll`).

  Returns:
    The value after the last iteration.

  Mirrors `jax.lax.fori_loop`.
  """
  if not callable(body_fun):
    raise TypeError("lax.fori_loop: body_fun argument should be callable.")
  lower_dtype = dtypes.dtype(lower, canonicalize=True)
  upper_dtype = dtypes.dtype(upper, canonicalize=True)
  if lower_dtype == upper_dtype:
    dtype = lower_dtype
  else:
    dtype = None
    if (np.issubdtype(lower_dtype, np.signedinteger)
        and np.issubdtype(upper_dtype, np.signedinteger)):
      lower_weak, upper_weak = dtypes.is_weakly_typed(lower), dtypes.is_weakly_typed(upper)
      if lower_weak and not upper_weak:
        dtype = upper_dtype
      elif upper_weak and not lower_weak:
        dtype = lower_dtype
    if dtype is None:
      raise TypeError("lower and upper arguments to fori_loop must have equal types, "
                      f"got {lower_dtype.name} and {upper_dtype.name}")
  try:
    lower_, upper_ = _concrete_int(lower), _concrete_int(upper)
  except (TypeError, ValueError):
    lower_ = upper_ = None
  if lower_ is not None and upper_ is not None:
    from xjax._src.lax.control_flow.scan import scan
    if config.jax_disable_jit and upper_ <= lower_:
      return init_val  # a Python scan cannot run zero iterations (it has no output type)
    scan_body = _cached_wrapper(_scan_bodies, body_fun, _fori_scan_body)
    (_, result), _ = scan(scan_body, (lower_, init_val), None,
                          length=max(upper_ - lower_, 0),
                          unroll=False if unroll is None else unroll)
    return result
  if unroll is not None and unroll is not False and unroll != 1:
    raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are "
                     "statically known.")
  if lower_dtype != dtype:
    lower = convert_element_type(lower, dtype)
  if upper_dtype != dtype:
    upper = convert_element_type(upper, dtype)
  while_body = _cached_wrapper(_while_bodies, body_fun, _fori_while_body)
  _, _, result = while_loop(_fori_cond_fun, while_body, (lower, upper, init_val))
  return result


# ----------------------------------------------------------------------------
# Refs: the discharge rule (state/discharge.py) threading ref values through the loop


@while_p.def_discharge
def _while_discharge(ref_ids, in_avals, args, *, cond_jaxpr, body_jaxpr, cond_nconsts,
                     body_nconsts):
  n_c, n_b = cond_nconsts, body_nconsts
  if any(r is not None for r in ref_ids[n_c + n_b:]):
    raise NotImplementedError("while_loop with refs as carries is not supported; close "
                              "over the ref instead.")
  # The distinct refs (by variable) read by cond or body become leading carries.
  uniq: list = []
  for r in ref_ids[:n_c + n_b]:
    if r is not None and all(r is not u for u in uniq):
      uniq.append(r)
  pos = {id(r): i for i, r in enumerate(uniq)}
  k = len(uniq)
  ref_vals = [None] * k
  for r, a in zip(ref_ids, args):
    if r is not None:
      ref_vals[pos[id(r)]] = a
  cconsts, bconsts, carry = args[:n_c], args[n_c:n_c + n_b], args[n_c + n_b:]
  c_ids, b_ids = ref_ids[:n_c], ref_ids[n_c:n_c + n_b]
  c_disch, b_disch = discharge.discharged_closed(cond_jaxpr), discharge.discharged_closed(body_jaxpr)
  c_plain = [a for a, r in zip(cconsts, c_ids) if r is None]
  b_plain = [a for a, r in zip(bconsts, b_ids) if r is None]
  carry_avals = list(body_jaxpr.in_avals[n_b:])
  ref_avals = [r.aval.inner_aval for r in uniq]

  def full_consts(ids, plain, refs):
    it = iter(plain)
    return [refs[pos[id(r)]] if r is not None else next(it) for r in ids]

  def cond_fun(*xs):
    plain, refs, rest = xs[:len(c_plain)], xs[len(c_plain):len(c_plain) + k], \
        xs[len(c_plain) + k:]
    outs = core.eval_jaxpr(c_disch.jaxpr, c_disch.consts,
                           *full_consts(c_ids, plain, refs), *rest)
    return outs[:1]

  def body_fun(*xs):
    plain, refs, rest = xs[:len(b_plain)], list(xs[len(b_plain):len(b_plain) + k]), \
        xs[len(b_plain) + k:]
    outs = core.eval_jaxpr(b_disch.jaxpr, b_disch.consts,
                           *full_consts(b_ids, plain, refs), *rest)
    n_carry = len(rest)
    finals = iter(outs[n_carry:])
    for r in b_ids:
      if r is not None:
        refs[pos[id(r)]] = next(finals)
    return [*refs, *outs[:n_carry]]

  c_avals = [*(core.get_aval(a) for a in c_plain), *ref_avals, *carry_avals]
  b_avals = [*(core.get_aval(a) for a in b_plain), *ref_avals, *carry_avals]
  c_new, c_consts = discharge.consts_as_args(pe.trace_to_jaxpr(cond_fun, c_avals))
  b_new, b_consts = discharge.consts_as_args(pe.trace_to_jaxpr(body_fun, b_avals))
  outs = while_p.bind(*c_consts, *c_plain, *b_consts, *b_plain, *ref_vals, *carry,
                      cond_nconsts=len(c_consts) + len(c_plain), cond_jaxpr=c_new,
                      body_nconsts=len(b_consts) + len(b_plain), body_jaxpr=b_new)
  finals = outs[:k]
  return [finals[pos[id(r)]] if r is not None else None for r in ref_ids], outs[k:]
