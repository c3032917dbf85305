"""`scan` and `map`: the `scan` primitive.

``scan[jaxpr, length, num_consts, num_carry, reverse, unroll] *consts *init *xs``
runs ``carry, y = jaxpr(*consts, *carry, *x)`` over the leading axis of the
`xs`, stacking the `y`s. It lowers to one StableHLO `while` (so compile time
does not grow with `length`), is differentiable in both modes (partial
evaluation saves per-iteration residuals as extra stacked outputs, computes
loop-invariant ones once before the loop and reads forwarded consts and xs
directly, as JAX does; the transpose is a scan in the other direction), has a
dead-code rule, and batches its carry to a fixpoint.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from xjax._src import core
from xjax._src import errors
from xjax._src.config import config
from xjax._src import tree_util
from xjax._src import traceback_util
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import lowering
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters import discharge
from xjax._src.lax.control_flow import common
from xjax._src.lax.control_flow.conditionals import abstractify
from xjax._src.lax.control_flow.loops import _split, while_loop
from xjax._src.lax.elementwise import lt
from xjax._src.lax.misc_ops import empty
from xjax._src.lax.slicing import (dynamic_index_in_dim, dynamic_update_index_in_dim, index_in_dim,
                                   slice_in_dim)
from xjax._src.lax.structural import concatenate, expand_dims, full, reshape
from xjax._src.vmap import vmap


def _python_scan(f, init, xs_leaves, xs_tree, length, reverse):
  """`scan` under `disable_jit`, as in JAX: `f` runs in Python on each slice in turn."""
  if length == 0:
    raise ValueError("zero-length scan is not supported in disable_jit() mode because the "
                     "output type is unknown.")
  steps = range(length - 1, -1, -1) if reverse else range(length)
  carry, ys = init, []
  for i in steps:
    x = tree_util.tree_unflatten(xs_tree, [index_in_dim(v, i, keepdims=False)
                                           for v in xs_leaves])
    carry, y = f(carry, x)
    ys.append(y)
  if reverse:
    ys.reverse()
  stack = lambda *ys: concatenate([expand_dims(y, (0,)) for y in ys], 0)
  return carry, tree_util.tree_map(stack, *ys)


@traceback_util.api_boundary
def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
  """Scans `f` over the leading axis of `xs`, carrying state.

  Semantics (with ``xs=None`` meaning `length` iterations with ``x=None``)::

    carry = init
    for x in xs:            # reversed(xs) when reverse=True
      carry, y = f(carry, x)
      ys.append(y)
    return carry, stack(ys)

  Args:
    f: ``(carry, x) -> (carry, y)``, keeping the carry's structure and types.
    init: the initial carry (a pytree of arrays).
    xs: a pytree of arrays with a common leading axis, or None.
    length: the number of iterations (required when `xs` is None).
    reverse: scan from the end of `xs` to its start.
    unroll: iterations per loop step (True: all of them).

  Returns:
    ``(final carry, stacked ys)``.

  Raises:
    TypeError: `f` changes the carry's structure or types, or does not return a pair.
    ValueError: the leading axes disagree with each other or with `length`, or
      `length` is negative.

  Mirrors `jax.lax.scan`.
  """
  if not callable(f):
    raise TypeError("lax.scan: f argument should be a callable.")
  init_leaves, init_tree = tree_util.tree_flatten(init)
  xs_leaves, xs_tree = tree_util.tree_flatten(xs)
  init_avals = [abstractify(x) for x in init_leaves]
  xs_avals = [abstractify(x) for x in xs_leaves]
  length = _infer_length(xs_leaves, length)
  if config.jax_disable_jit:
    return _python_scan(f, init, xs_leaves, xs_tree, length, reverse)
  x_avals = [a.update(shape=a.shape[1:]) for a in xs_avals]
  in_tree = tree_util.tree_structure((init, xs))

  def create(carry_avals):
    jaxpr, consts, out_tree = common.trace_to_jaxpr(f, in_tree, [*carry_avals, *x_avals], "scan")
    children = (tree_util.treedef_children(out_tree)
                if out_tree.num_nodes > 1 and not tree_util.treedef_is_leaf(out_tree) else [])
    if type(tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves)) is not tuple or \
        len(children) != 2:
      shown = tree_util.tree_unflatten(out_tree, jaxpr.out_avals)
      raise TypeError(f"scan body output must be a pair, got {_show(shown)}.")
    return jaxpr, consts, children[0], children[1]

  jaxpr, consts, carry_tree, ys_tree = create(init_avals)
  n_carry = len(init_avals)
  carry_out = jaxpr.out_avals[:carry_tree.num_leaves]
  if carry_tree.num_leaves != n_carry:
    common.check_carry_type("scan body", f, init_tree, init_avals, carry_tree, carry_out)
  init_leaves, changed = common.promote_weak_typed_inputs(init_leaves, init_avals, carry_out)
  if changed:
    init_avals = [core.get_aval(x) for x in init_leaves]
    jaxpr, consts, carry_tree, ys_tree = create(init_avals)
  common.check_carry_type("scan body", f, init_tree, init_avals, carry_tree,
                          jaxpr.out_avals[:n_carry])
  unroll = _concrete(unroll, "The `unroll` argument to `scan` expects a concrete `int` or "
                     "`bool` value.")
  if isinstance(unroll, (bool, np.bool_)):
    unroll = max(length, 1) if unroll else 1
  unroll = int(unroll)
  if unroll < 0:
    raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
  num_consts, num_xs = len(consts), len(xs_leaves)
  num_ys = len(jaxpr.out_avals) - n_carry
  args = [*init_leaves, *xs_leaves]
  # A carry the body forwards unchanged is read-only: it becomes a const.
  fwd = common.jaxpr_forwarding(jaxpr.jaxpr)
  carry_fwd, ext_fwd = fwd[:n_carry], fwd[n_carry:]
  move_to_const = [num_consts + i == f for i, f in enumerate(carry_fwd)]
  new_consts = []
  if any(move_to_const):
    jaxpr = common.prune_outputs(jaxpr, [not m for m in move_to_const] + [True] * num_ys)
    jaxpr = common.move_binders_to_front(
        jaxpr, [False] * num_consts + move_to_const + [False] * num_xs)
    args, new_consts = common.partition_list(move_to_const + [False] * num_xs, args)
    consts = [*new_consts, *consts]
    n_carry -= len(new_consts)
  # A y that is an x unchanged is not an output: the x is returned.
  ext_to_ext = [i - len(consts) if i is not None and i >= n_carry + len(consts) else None
                for i in ext_fwd]
  jaxpr = common.prune_outputs(jaxpr, [True] * n_carry + [i is None for i in ext_to_ext])
  out = scan_p.bind(*consts, *args, reverse=reverse, length=length, jaxpr=jaxpr,
                    num_consts=len(consts), num_carry=n_carry, unroll=unroll)
  carry_out, ys = out[:n_carry], iter(out[n_carry:])
  ys = [next(ys) if i is None else args[i] for i in ext_to_ext]
  if any(move_to_const):
    carry_out = common.merge_lists(move_to_const, carry_out, new_consts)
  return (tree_util.tree_unflatten(carry_tree, carry_out),
          tree_util.tree_unflatten(ys_tree, ys))


def _show(tree):
  return tree_util.tree_map(str, tree) if not isinstance(tree, core.ShapedArray) else str(tree)


def _concrete(x, msg: str):
  """`x`, or its value when it is a tracer with a known one; JAX's ConcretizationTypeError
  with `msg` for a traced value."""
  if isinstance(x, core.Tracer):
    value = x.to_concrete_value()
    if value is None:
      raise errors.ConcretizationTypeError(x, msg)
    x = value
  return np.asarray(x).item() if not isinstance(x, (bool, int)) and np.ndim(x) == 0 else x


def _infer_length(xs_leaves, length) -> int:
  try:
    lengths = [x.shape[0] for x in xs_leaves]
  except (AttributeError, IndexError):
    bad = ", ".join(str(x) for x in xs_leaves if not np.shape(x))
    raise ValueError(f"scan got value with no leading axis to scan over: {bad}.") from None
  if length is not None:
    length = int(_concrete(length, "The `length` argument to `scan` expects a concrete `int` "
                           "value. For scan-like iteration with a dynamic length, use "
                           "`while_loop` or `fori_loop`."))
    if length < 0:  # JAX hands XLA a malformed module here; the size is checked first
      raise ValueError(f"scan got `length` argument of {length}, which is negative.")
    if not all(length == n for n in lengths):
      raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                       f"leading axis sizes {lengths}.")
    return length
  unique = set(lengths)
  if len(unique) > 1:
    raise ValueError("scan got values with different leading axis sizes: "
                     f"{', '.join(str(n) for n in lengths)}.")
  if not unique:
    raise ValueError("scan got no values to scan over and `length` not provided.")
  return unique.pop()


@traceback_util.api_boundary
def map(f, xs, *, batch_size=None):  # noqa: A001 - JAX's name
  """Maps `f` over the leading axis of `xs` with a `scan` (sequentially).

  Args:
    f: a function of one slice of `xs` (a pytree).
    xs: a pytree of arrays with a common leading axis.
    batch_size: if given, `f` is vmapped over chunks of this many slices
      (the remainder runs as one more vmapped call); 0, or a size over the
      axis, vmaps `f` over all of it at once, as in JAX.

  Returns:
    The stacked outputs of `f`.

  Raises:
    ValueError: a negative `batch_size`.

  Mirrors `jax.lax.map`.
  """
  if batch_size is not None:
    scan_xs, remainder_xs = _batch_and_remainder(xs, batch_size)
    if scan_xs is None:
      return vmap(f)(remainder_xs)
    g = lambda _, x: ((), vmap(f)(x))
    _, scan_ys = scan(g, (), scan_xs)
    flatten = lambda x: reshape(x, (x.shape[0] * x.shape[1], *x.shape[2:]))
    ys = tree_util.tree_map(flatten, scan_ys)
    if remainder_xs is not None:
      remainder_ys = vmap(f)(remainder_xs)
      ys = tree_util.tree_map(lambda a, b: concatenate([a, b], 0), ys, remainder_ys)
    return ys
  g = lambda _, x: ((), f(x))
  _, ys = scan(g, (), xs)
  return ys


def _batch_and_remainder(xs, batch_size: int):
  """(the batches to scan over, stacked, or None; the remainder, or None)."""
  if batch_size < 0:
    raise ValueError(f"batch_size must be a non-negative integer, got {batch_size}.")
  leaves, tree = tree_util.tree_flatten(xs)
  n = leaves[0].shape[0]
  num_batches, rem = divmod(n, batch_size) if batch_size else (0, n)
  if num_batches == 0:
    return None, xs
  scan_leaves = [reshape(slice_in_dim(x, 0, num_batches * batch_size) if rem else x,
                         (num_batches, batch_size, *x.shape[1:])) for x in leaves]
  rem_leaves = [slice_in_dim(x, num_batches * batch_size, n) for x in leaves] if rem else None
  return (tree_util.tree_unflatten(tree, scan_leaves),
          None if rem_leaves is None else tree_util.tree_unflatten(tree, rem_leaves))


# ----------------------------------------------------------------------------
# scan_p

scan_p = core.Primitive("scan", multiple_results=True)


def _stacked(length, aval):
  return aval.update(shape=(length, *aval.shape))


@scan_p.def_abstract_eval
def _scan_abstract_eval(*avals, reverse, length, jaxpr, num_consts, num_carry, unroll):
  tc = partial(common.typecheck_param, "scan")
  tc(reverse, "reverse", "bool", type(reverse) is bool)
  for name, v in (("num_consts", num_consts), ("num_carry", num_carry), ("unroll", unroll)):
    tc(v, name, "non-negative int", type(v) is int and v >= 0)
  tc(jaxpr, "jaxpr", "ClosedJaxpr", type(jaxpr) is core.ClosedJaxpr)
  tc(length, "length", "non-negative int", length >= 0)
  if len(avals) != len(jaxpr.in_avals):
    raise TypeError("internal: scan operands do not match its jaxpr")
  carry_out = jaxpr.out_avals[:num_carry]
  return [*carry_out, *(_stacked(length, a) for a in jaxpr.out_avals[num_carry:])]


def _scan_jvp(primals, tangents, *, reverse, length, jaxpr, num_consts, num_carry, unroll):
  nonzeros = [type(t) is not ad.Zero for t in tangents]
  const_nz, init_nz, xs_nz = _split(nonzeros, num_consts, num_carry)
  num_ys = len(jaxpr.out_avals) - num_carry
  carry_nz = init_nz
  for _ in range(1 + num_carry):
    jvp, out_nz = ad.jvp_jaxpr_nonzeros(jaxpr, const_nz + carry_nz + xs_nz,
                                   carry_nz + [False] * num_ys)
    if out_nz[:num_carry] == carry_nz:
      break
    carry_nz = [a or b for a, b in zip(carry_nz, out_nz)]
  n_ct, n_cart, n_xt = sum(const_nz), sum(carry_nz), sum(xs_nz)
  n_xs = len(xs_nz)
  c, car, x, ct, cart, xt = _split(jvp.jaxpr.invars, num_consts, num_carry, n_xs, n_ct, n_cart)
  out_nz_ys = out_nz[num_carry:]
  co, yo, cot, yot = _split(jvp.jaxpr.outvars, num_carry, num_ys, n_cart)
  jvp = core.ClosedJaxpr(jvp.jaxpr.replace(invars=[*c, *ct, *car, *cart, *x, *xt],
                                           outvars=[*co, *cot, *yo, *yot]), jvp.consts)
  consts, init, xs = _split(primals, num_consts, num_carry)
  consts_t, init_t, xs_t = _split(tangents, num_consts, num_carry)
  consts_t = [t for t, nz in zip(consts_t, const_nz) if nz]
  init_t = [ad.instantiate_zeros(t) for t, nz in zip(init_t, carry_nz) if nz]
  xs_t = [t for t, nz in zip(xs_t, xs_nz) if nz]
  outs = scan_p.bind(*consts, *consts_t, *init, *init_t, *xs, *xs_t, reverse=reverse,
                     length=length, jaxpr=jvp, num_consts=num_consts + n_ct,
                     num_carry=num_carry + n_cart, unroll=unroll)
  carry_out, carry_t, ys, ys_t = _split(outs, num_carry, n_cart, num_ys)
  carry_t, ys_t = iter(carry_t), iter(ys_t)
  avals_out = _scan_abstract_eval(*jaxpr.in_avals, reverse=reverse, length=length, jaxpr=jaxpr,
                                  num_consts=num_consts, num_carry=num_carry, unroll=unroll)
  nz_out = carry_nz + out_nz_ys
  tangents_out = []
  for i, (a, nz) in enumerate(zip(avals_out, nz_out)):
    if not nz:
      tangents_out.append(ad.Zero(a.to_tangent_aval()))
    else:
      tangents_out.append(next(carry_t) if i < num_carry else next(ys_t))
  return [*carry_out, *ys], tangents_out


def _scan_partial_eval(trace, args, unknowns, *, reverse, length, jaxpr, num_consts, num_carry,
                       unroll):
  const_uk, carry_uk, xs_uk = _split(unknowns, num_consts, num_carry)
  num_ys = len(jaxpr.out_avals) - num_carry
  for _ in range(1 + num_carry):
    known, unknown, out_uk, num_res = pe.partial_eval_jaxpr(
        jaxpr, const_uk + carry_uk + xs_uk, instantiate=carry_uk + [False] * num_ys)
    if out_uk[:num_carry] == carry_uk:
      break
    carry_uk = [a or b for a, b in zip(carry_uk, out_uk)]
  uks = const_uk + carry_uk + xs_uk
  params = dict(reverse=reverse, length=length, unroll=unroll)
  known_args = [a for a, u in zip(args, uks) if not u]
  n_known_out = len(known.out_avals) - num_res
  n_kconsts, n_kcarry = num_consts - sum(const_uk), num_carry - sum(carry_uk)
  # Residuals that merely forward a known const (or a constant the body closes
  # over) or the current element of a known xs are not outputs of the known
  # scan: the unknown scan reads the value itself, as JAX forwards them.
  forwarded = _forwarded_residuals(known, n_known_out, known_args, n_kconsts, n_kcarry)
  known = core.ClosedJaxpr(known.jaxpr.replace(outvars=[
      *known.jaxpr.outvars[:n_known_out],
      *(v for v, f in zip(known.jaxpr.outvars[n_known_out:], forwarded) if f is None)]),
      known.consts)
  # Residuals that depend on the known consts only are computed once, before
  # the loop, instead of once per iteration (JAX's const hoisting).
  with core.set_current_trace(trace.parent_trace):
    known, hoisted_res, new_consts = _hoist_loop_invariants(known, known_args[:n_kconsts],
                                                            n_known_out)
  if known.out_avals or known.jaxpr.effects:
    with core.set_current_trace(trace.parent_trace):
      known_outs = scan_p.bind(*new_consts, *known_args[n_kconsts:], jaxpr=known,
                               num_consts=len(new_consts), num_carry=n_kcarry, **params)
  else:
    known_outs = []
  computed = iter(known_outs[n_known_out:])
  hoisted = iter(hoisted_res)
  residuals, is_const = [], []
  for f in forwarded:
    if f is not None:
      residuals.append(f[1])
      is_const.append(f[0] == "const")
    else:
      h = next(hoisted)
      residuals.append(next(computed) if h is None else h)
      is_const.append(h is not None)
  assert next(computed, None) is None, "internal: scan residuals"
  # The unknown scan reads the loop-invariant residuals as consts (first) and
  # the others as xs (last), each group in residual order.
  res_vars, rest = unknown.jaxpr.invars[:num_res], unknown.jaxpr.invars[num_res:]
  const_vars, x_vars = common.partition_list(is_const, res_vars)[::-1]
  unknown = core.ClosedJaxpr(unknown.jaxpr.replace(invars=[*const_vars, *rest, *x_vars]),
                             unknown.consts)
  const_res, x_res = common.partition_list(is_const, residuals)[::-1]
  unknown_args = [a for a, u in zip(args, uks) if u]
  unknown_outs = trace.stage(scan_p, [*const_res, *unknown_args, *x_res], dict(
      jaxpr=unknown, num_consts=len(const_res) + sum(const_uk), num_carry=sum(carry_uk),
      **params))
  return common.merge_lists(out_uk, known_outs[:n_known_out], unknown_outs)


def _hoist_loop_invariants(known, consts, n_known_out):
  """Splits the known scan body into its loop-invariant part, run now in the
  current trace, and the rest.

  Returns (body, hoisted, new_consts): `body` computes the known outputs and the
  residuals that vary per iteration, reading `new_consts` (the values of the
  invariant part it needs) as its consts; `hoisted` has, per residual of
  `known`, its value if it is loop-invariant, else None.
  """
  trace = _HoistTrace(core.current_trace())
  varying = [trace.new_arg(a) for a in known.in_avals[len(consts):]]
  with core.set_current_trace(trace):
    try:
      outs = core.eval_jaxpr(known.jaxpr, known.consts, *consts, *varying)
    finally:
      trace.invalidate()
  res = outs[n_known_out:]
  hoisted = [None if trace.is_unknown(r) else r for r in res]
  body = trace.to_jaxpr([*outs[:n_known_out], *(r for r, h in zip(res, hoisted) if h is None)])
  body, new_consts = pe.convert_constvars_jaxpr(body)
  return body, hoisted, new_consts


class _HoistTrace(pe.PartialEvalTrace):
  """Runs the equations whose operands are all loop-invariant now; stages the
  others whole (no partial evaluation inside them: a `checkpoint` or an inner
  loop of the body stays as it is)."""
  __slots__ = ()

  def process_primitive(self, primitive, args, params):
    if any(self.is_unknown(x) for x in args):
      return self.stage(primitive, args, params)
    with core.set_current_trace(self.parent_trace):
      return primitive.bind(*args, **params)


def _forwarded_residuals(known, n_known_out, known_args, n_consts, n_carry):
  """Per residual of the known scan body: ("const", value) if it is a known const
  (or a constant the body closes over), ("xs", stacked value) if it is a known
  xs element, None if it is computed by the body. NumPy values are not
  forwarded (as in JAX)."""
  jaxpr = known.jaxpr
  sources = {}
  for v, c in zip(jaxpr.constvars, known.consts):
    sources[v] = ("const", c)
  for i, v in enumerate(jaxpr.invars):
    if isinstance(known_args[i], np.ndarray):
      continue
    if i < n_consts:
      sources[v] = ("const", known_args[i])
    elif i >= n_consts + n_carry:
      sources[v] = ("xs", known_args[i])
  return [sources.get(v) if type(v) is core.Var else None
          for v in jaxpr.outvars[n_known_out:]]


def _zeros(aval):
  return full(aval.shape, 0, aval.dtype)


def _instantiate(ct, aval):
  if ct is None or type(ct) is ad.Zero:
    return _zeros(aval)
  return ct


def _scan_transpose(cts, *args, reverse, length, jaxpr, num_consts, num_carry, unroll):
  consts, init, xs = _split(args, num_consts, num_carry)
  const_lin = [ad.is_undefined_primal(c) for c in consts]
  xs_lin = [ad.is_undefined_primal(x) for x in xs]
  res_consts = [c for c, lin in zip(consts, const_lin) if not lin]
  res_xs = [x for x, lin in zip(xs, xs_lin) if not lin]
  in_avals = jaxpr.in_avals
  const_avals, carry_avals, x_avals = _split(in_avals, num_consts, num_carry)
  lin_const_avals = [a.to_tangent_aval() for a, lin in zip(const_avals, const_lin) if lin]
  carry_ct_avals = [a.to_tangent_aval() for a in carry_avals]
  y_ct_avals = [a.to_tangent_aval() for a in jaxpr.out_avals[num_carry:]]
  ct_carry = [_instantiate(ct, a) for ct, a in zip(cts[:num_carry], carry_ct_avals)]
  ct_ys = [_instantiate(ct, _stacked(length, a)) for ct, a in zip(cts[num_carry:], y_ct_avals)]
  n_res_c, n_lin_c = len(res_consts), len(lin_const_avals)

  def body(*vals):
    rc, acc, ctc, cty, rx = _split(vals, n_res_c, n_lin_c, num_carry, len(y_ct_avals))
    rc, rx = iter(rc), iter(rx)
    primals = [*(ad.UndefinedPrimal(a) if lin else next(rc) for a, lin in zip(const_avals, const_lin)),
               *(ad.UndefinedPrimal(a) for a in carry_avals),
               *(ad.UndefinedPrimal(a) if lin else next(rx) for a, lin in zip(x_avals, xs_lin))]
    # The accumulated const cotangents seed the backward pass (as cotangents of
    # extra leading outputs that are those consts), so each contribution is
    # added to them as soon as it is made, as JAX's accumulators do.
    lin_const_vars = [v for v, lin in zip(jaxpr.jaxpr.invars[:num_consts], const_lin) if lin]
    seeded = jaxpr.jaxpr.replace(outvars=[*lin_const_vars, *jaxpr.jaxpr.outvars])
    cts_in = ad.backward_pass(seeded, jaxpr.consts, primals, [*acc, *ctc, *cty])
    ct_c, ct_car, ct_x = _split(cts_in, num_consts, num_carry)
    new_acc = [_instantiate(ct, a.to_tangent_aval()) for ct, a, lin
               in zip(ct_c, const_avals, const_lin) if lin]
    return [*new_acc, *(_instantiate(ct, a) for ct, a in zip(ct_car, carry_ct_avals)),
            *(_instantiate(ct, a.to_tangent_aval()) for ct, a, lin in zip(ct_x, x_avals, xs_lin)
              if lin)]

  res_x_avals = [core.get_aval(x).update(shape=core.get_aval(x).shape[1:]) for x in res_xs]
  trans = pe.trace_to_jaxpr(body, [*(core.get_aval(c) for c in res_consts), *lin_const_avals,
                                   *carry_ct_avals, *y_ct_avals, *res_x_avals])
  acc0 = [_zeros(a) for a in lin_const_avals]
  outs = scan_p.bind(*res_consts, *acc0, *ct_carry, *ct_ys, *res_xs, reverse=not reverse,
                     length=length, jaxpr=trans, num_consts=n_res_c,
                     num_carry=n_lin_c + num_carry, unroll=unroll)
  ct_consts, ct_init, ct_xs = _split(outs, n_lin_c, num_carry)
  ct_consts, ct_xs = iter(ct_consts), iter(ct_xs)
  return [*(next(ct_consts) if lin else None for lin in const_lin), *ct_init,
          *(next(ct_xs) if lin else None for lin in xs_lin)]


def _scan_dce_rule(used_outputs, eqn):
  """Drops the outputs nothing uses (a carry only if its next value is unused
  too), and the operands the remaining body does not read."""
  if not any(used_outputs) and not core.is_live_regardless(eqn):
    return [False] * len(eqn.invars), None
  params = eqn.params
  jaxpr, num_consts, num_carry = params["jaxpr"], params["num_consts"], params["num_carry"]
  num_xs = len(jaxpr.in_avals) - num_consts - num_carry
  used_carry, used_ys = used_outputs[:num_carry], used_outputs[num_carry:]
  for _ in range(1 + num_carry):
    used_outs = used_carry + used_ys
    body, used_inputs = pe.dce_jaxpr(
        jaxpr.jaxpr, used_outs, [False] * num_consts + used_carry + [False] * num_xs)
    used_consts, used_carry_in, _ = _split(used_inputs, num_consts, num_carry)
    if used_carry_in == used_carry:
      break
    used_carry = [a or b for a, b in zip(used_carry, used_carry_in)]
  new_eqn = eqn.replace(
      invars=[v for v, u in zip(eqn.invars, used_inputs) if u],
      outvars=[v for v, u in zip(eqn.outvars, used_outs) if u],
      params=dict(params, jaxpr=core.ClosedJaxpr(body, jaxpr.consts),
                  num_consts=sum(used_consts), num_carry=sum(used_carry)))
  return used_inputs, new_eqn


scan_p.def_jvp(_scan_jvp)
scan_p.def_partial_eval(_scan_partial_eval)
scan_p.def_transpose(_scan_transpose)
scan_p.dce_rule = _scan_dce_rule


@scan_p.def_batch
def _scan_batch(axis_data, args, dims, *, reverse, length, jaxpr, num_consts, num_carry, unroll):
  size = axis_data.size
  bat = [d is not batching.not_mapped for d in dims]
  const_bat, carry_bat, xs_bat = _split(bat, num_consts, num_carry)
  num_ys = len(jaxpr.out_avals) - num_carry
  for _ in range(1 + num_carry):
    batched, out_bat = batching.batch_jaxpr(jaxpr, axis_data, const_bat + carry_bat + xs_bat,
                                            carry_bat + [False] * num_ys)
    if list(out_bat[:num_carry]) == carry_bat:
      break
    carry_bat = [a or b for a, b in zip(carry_bat, out_bat)]
  consts, init, xs = _split(args, num_consts, num_carry)
  const_dims, init_dims, xs_dims = _split(dims, num_consts, num_carry)
  consts = [batching.moveaxis(x, d, 0) if b else x for x, d, b in zip(consts, const_dims, const_bat)]
  init = [batching.bdim_at_front(x, d, size) if b else x
          for x, d, b in zip(init, init_dims, carry_bat)]
  xs = [batching.moveaxis(x, d, 1) if b else x for x, d, b in zip(xs, xs_dims, xs_bat)]
  outs = scan_p.bind(*consts, *init, *xs, reverse=reverse, length=length, jaxpr=batched,
                     num_consts=num_consts, num_carry=num_carry, unroll=unroll)
  out_dims = [(0 if i < num_carry else 1) if b else batching.not_mapped
              for i, b in enumerate(out_bat)]
  return outs, out_dims


def _scan_as_while(*args, reverse, length, jaxpr, num_consts, num_carry, unroll):
  """The scan written with `while_loop` and dynamic slicing (its lowering)."""
  consts, carry, xs = _split(args, num_consts, num_carry)
  y_avals = jaxpr.out_avals[num_carry:]
  step = core.jaxpr_as_fun(jaxpr)
  unroll = length if unroll == 0 else max(1, min(unroll, max(length, 1)))
  num_trips, remainder = divmod(length, unroll)

  def one(i, carry, ys):
    x = [dynamic_index_in_dim(x, i, keepdims=False) for x in xs]
    outs = step(*consts, *carry, *x)
    ys = [dynamic_update_index_in_dim(y, o, i, 0) for y, o in zip(ys, outs[num_carry:])]
    return list(outs[:num_carry]), ys

  def index(t):  # the t-th iteration reads element i
    return length - 1 - t if reverse else t

  # Buffers for the stacked outputs (overwritten); extended dtypes (keys, ...) have no zero.
  ys = [empty((length, *a.shape), a.dtype) if core.is_extended(a)
        else full((length, *a.shape), 0, a.dtype) for a in y_avals]
  if num_trips > 1 or (num_trips == 1 and remainder):
    def body(state):
      k, carry, ys = state
      for j in range(unroll):
        carry, ys = one(index(k * unroll + j), carry, ys)
      return k + np.int32(1), carry, ys

    _, carry, ys = while_loop(lambda s: lt(s[0], np.int32(num_trips)), body,
                              (np.int32(0), carry, ys))
    start = num_trips * unroll
  else:
    start = 0
  for t in range(start, length):
    carry, ys = one(np.int32(index(t)), carry, ys)
  return [*carry, *ys]


@scan_p.def_lowering
def _scan_lowering(ctx, *args, **params):
  avals_in, avals_out = ctx.avals_in, ctx.avals_out
  closed = pe.trace_to_jaxpr(lambda *xs: _scan_as_while(*xs, **params), avals_in)
  consts = [ctx.constant(np.asarray(c)) for c in closed.consts]
  outs = lowering.lower_jaxpr_body(ctx, closed.jaxpr, consts, list(args))
  ctx.avals_in, ctx.avals_out = avals_in, avals_out
  return outs


# ----------------------------------------------------------------------------
# Refs: the discharge rule (state/discharge.py) threading ref values through the scan


@scan_p.def_discharge
def _scan_discharge(ref_ids, in_avals, args, *, jaxpr, num_consts, num_carry, **params):
  ref_mask = [r is not None for r in ref_ids]
  if any(ref_mask[num_consts:]):
    raise NotImplementedError("scan with refs as carries or scanned-over inputs is not "
                              "supported; close over the ref instead.")
  mask = ref_mask[:num_consts]
  k = sum(mask)
  disch = discharge.discharged_closed(jaxpr)
  consts, refs = common.partition(mask, args[:num_consts])
  body = common.ref_loop_body(disch, mask, num_consts)
  body_avals = [*(a for a, m in zip(disch.in_avals[:num_consts], mask) if not m),
                *(a for a, m in zip(disch.in_avals[:num_consts], mask) if m),
                *disch.in_avals[num_consts:]]
  new, new_consts = discharge.consts_as_args(pe.trace_to_jaxpr(body, body_avals))
  n_consts = len(new_consts) + len(consts)
  outs = scan_p.bind(*new_consts, *consts, *refs, *args[num_consts:], jaxpr=new,
                     num_consts=n_consts, num_carry=k + num_carry, **params)
  finals = iter(outs[:k])
  return [next(finals) if m else None for m in ref_mask], outs[k:]
