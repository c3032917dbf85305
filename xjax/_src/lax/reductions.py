"""Reductions: the monoid reductions, the generic `reduce`, argmax/argmin, cumulative ops.

Every reduction lowers to one `stablehlo.reduce` whose region combines two
scalars. The region is written in lax ops (`add`, `max`, a (value, index)
chooser for argmax, ...), traced to a jaxpr on scalar avals and lowered into
the region, so each combining rule is stated once, in the same terms JAX
uses. The cumulative reductions lower, as JAX does on CPU, to a
`stablehlo.reduce_window` whose window spans the whole axis, padded so that
output i sees inputs 0..i (XLA rewrites that window into a prefix scan).

Differentiation follows JAX: reduce_sum and cumsum are linear; reduce_max
and reduce_min send the tangent to the maximal elements (averaged over
ties); reduce_prod and the generic reduce differentiate a balanced tree of
their combining function, and cumprod, cummax, cummin and cumlogsumexp a
parallel prefix scan of theirs, so zeros and ties need no special case;
the bitwise reductions and argmax/argmin have zero tangents.
"""
from __future__ import annotations

import functools

import numpy as np

from xjax._src import core
from xjax._src import executable_cache
from xjax._src import dtypes
from xjax._src import source_info
from xjax._src import stablehlo as hlo
from xjax._src import tree_util
from xjax._src.config import config
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.lowering import lower_jaxpr_body
from xjax._src.lax import elementwise as ew
from xjax._src.lax.slicing import slice_in_dim
from xjax._src.lax.structural import broadcast_in_dim, concatenate, full, pad, reshape
from xjax._src.lax.utils import KINDS, standard_primitive

# ----------------------------------------------------------------------------
# Shared helpers: regions from lax functions, identities, shape and dtype rules


def jaxpr_region(ctx, closed: core.ClosedJaxpr) -> str:
  """A region whose block arguments are `closed`'s invars and which returns its outvars."""
  def body(sub, args):
    consts = [sub.constant(np.asarray(c)) for c in closed.consts]
    return lower_jaxpr_body(sub, closed.jaxpr, consts, args)
  return ctx.region([hlo.aval_type(a) for a in closed.in_avals], body)


def fun_region(ctx, fun, avals) -> str:
  """A region computing `fun` (lax ops on scalars, returning a list) of its block arguments."""
  return jaxpr_region(ctx, pe.trace_to_jaxpr(lambda *args: list(fun(*args)), list(avals)))


def _sum_identity(dtype):
  return np.zeros((), dtype)


def _prod_identity(dtype):
  return np.ones((), dtype)


def _max_identity(dtype):
  """The identity of max: -inf (or the lowest finite value), the integer min, False."""
  dtype = np.dtype(dtype)
  if dtypes.issubdtype(dtype, np.inexact):
    real = ew._real_dtype(dtype)
    lowest = -np.inf if _has_inf(real) else float(dtypes.finfo(real).min)
    return np.array(lowest, dtype)
  if dtype == np.bool_:
    return np.array(False)
  return np.array(dtypes.iinfo(dtype).min, dtype)


def _min_identity(dtype):
  """The identity of min: +inf (or the highest finite value), the integer max, True."""
  dtype = np.dtype(dtype)
  if dtypes.issubdtype(dtype, np.inexact):
    real = ew._real_dtype(dtype)
    highest = np.inf if _has_inf(real) else float(dtypes.finfo(real).max)
    return np.array(highest, dtype)
  if dtype == np.bool_:
    return np.array(True)
  return np.array(dtypes.iinfo(dtype).max, dtype)


def _has_inf(dtype) -> bool:
  with np.errstate(over="ignore", invalid="ignore"):
    return bool(np.isinf(np.array(np.inf, dtype)))


def _and_identity(dtype):
  return np.array(-1).astype(dtype)  # all bits set (True for bool)


def _or_identity(dtype):
  return np.zeros((), dtype)


def _complex_choose(cmp, x, y):
  """max/min of complex scalars, ordered lexicographically by (real, imag)."""
  re_x, re_y = ew.real(x), ew.real(y)
  x_wins = ew.select_n(ew.eq(re_x, re_y), cmp(re_x, re_y), cmp(ew.imag(x), ew.imag(y)))
  return ew.select_n(x_wins, y, x)


def _max_combine(x, y):
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    return _complex_choose(ew.gt, x, y)
  return ew.max(x, y)


def _min_combine(x, y):
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    return _complex_choose(ew.lt, x, y)
  return ew.min(x, y)


def _reduced_shape(operand, axes) -> tuple[int, ...]:
  """The shape left after removing `axes` (unique, each in [0, ndim))."""
  if len(axes) != len(set(axes)):
    raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")
  if not all(0 <= a < operand.ndim for a in axes):
    raise ValueError(f"reduction axes {axes} contains out-of-bounds indices for "
                     f"{operand.str_short()}.")
  return tuple(d for i, d in enumerate(operand.shape) if i not in axes)


def _deleted_shape(shape, dims) -> tuple[int, ...]:
  """`shape` without `dims`, with NumPy's IndexError for an index out of range."""
  remaining = np.delete(np.array(shape, dtype=np.int64), dims)  # raises NumPy's IndexError
  return tuple(int(d) for d in remaining)


def _check_number(name, operand) -> None:
  if operand.dtype not in KINDS["num"]:
    raise TypeError(f"{name} does not accept dtype {operand.dtype.name}. Accepted dtypes "
                    "are subtypes of number.")


def _canonical_axes(axes) -> tuple[int, ...]:
  return tuple(int(a) for a in axes)


def _monoid_reduce_lowering(identity, combine):
  """A lowering emitting `stablehlo.reduce` over `axes` with `combine` and its identity."""
  def lowering(ctx, x, *, axes, **_):
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    scalar = core.ShapedArray((), aval_in.dtype)
    init = ctx.constant(identity(aval_in.dtype))
    region = fun_region(ctx, lambda a, b: [combine(a, b)], [scalar, scalar])
    return ctx.op1("stablehlo.reduce", [x, init], hlo.aval_type(aval_out),
                   f"dimensions = {hlo.i64_array(axes)}", [region])
  return lowering


def _jvp_of(fun, primals, tangents):
  """The output tangents of `fun` (flat lists in and out) at `primals` along `tangents`."""
  return ad.jvp_flat(fun, list(primals), list(tangents))[1]


def _tree_reduce(combine, inits, operands, axes):
  """`combine` (elementwise on arrays, returning a list) applied as a balanced tree over `axes`.

  The reduced axes are flattened to one leading axis, which is halved until
  one element is left (an odd half is padded with the init values).
  """
  shape = core.get_aval(operands[0]).shape
  rest = tuple(d for i, d in enumerate(shape) if i not in axes)
  perm = (*axes, *(i for i in range(len(shape)) if i not in axes))
  n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
  xs = [reshape(x, (n, *rest), perm) for x in operands]
  if n == 0:
    return [full(rest, init) for init in inits]
  while n > 1:
    half = (n + 1) // 2
    lo = [slice_in_dim(x, 0, half) for x in xs]
    hi = [slice_in_dim(x, half, n) for x in xs]
    if n % 2:
      config = ((0, 1, 0),) + ((0, 0, 0),) * len(rest)
      hi = [pad(x, init, config) for x, init in zip(hi, inits)]
    xs, n = combine(*lo, *hi), half
  return [reshape(x, rest) for x in xs]


def _prefix_scan(combine, identity, x, *, axis, reverse):
  """The inclusive scan of `combine` along `axis`, by recursive doubling (Hillis-Steele).

  Step k combines each element with the one 2**k before it (after it, when
  `reverse`); the shifted copy is a pad that brings in `identity`.
  """
  aval = core.get_aval(x)
  n, k = aval.shape[axis], 1
  ident = identity(aval.dtype)
  while k < n:
    config = [(0, 0, 0)] * aval.ndim
    config[axis] = (-k, k, 0) if reverse else (k, -k, 0)
    shifted = pad(x, ident, config)
    x = combine(x, shifted) if reverse else combine(shifted, x)
    k *= 2
  return x


def _cumulative_jvp(prim, combine, identity):
  """JAX's rule: the tangent of a parallel prefix scan of `combine` (not of the reduce_window)."""
  def jvp(primals, tangents, *, axis, reverse):
    out = prim.bind(*primals, axis=axis, reverse=reverse)
    scan = functools.partial(_prefix_scan, combine, identity, axis=axis, reverse=reverse)
    t_out, = _jvp_of(lambda x: [scan(x)], primals, tangents)
    return out, t_out
  return jvp


# ----------------------------------------------------------------------------
# reduce_sum


def reduce_sum(operand, axes, *, out_sharding=None):
  """Sums `operand` over `axes`.

  The sum accumulates in the operand's dtype (no widening of narrow types, unlike
  `xjax.numpy.sum`). Summing over no axes returns the operand; summing an empty
  axis gives 0.

  Args:
    operand: an array of a numeric (not bool) dtype.
    axes: a sequence of distinct axes, each in ``[0, operand.ndim)``.
    out_sharding: accepted for compatibility; must be None.

  Returns:
    An array of operand's dtype whose shape is operand's with `axes` removed.

  Raises:
    ValueError: an axis is repeated or out of range.
    TypeError: operand's dtype is bool or not numeric.

  Mirrors `jax.lax.reduce_sum`.
  """
  return reduce_sum_p.bind(operand, axes=_canonical_axes(axes), out_sharding=out_sharding)


def _reduce_sum_abstract_eval(operand, *, axes, out_sharding):
  shape = _reduced_shape(operand, axes)
  _check_number("reduce_sum", operand)
  if (operand.dtype in (np.float16, dtypes.bfloat16) and not config.jax_allow_f16_reductions
      and not all(operand.shape[d] == 1 for d in axes)):
    raise ValueError(f"reduce_sum on operand {operand.str_short(True)} is not allowed when "
                     "jax_allow_f16_reductions=False.")
  return core.ShapedArray(shape, operand.dtype, operand.weak_type)


def _reduce_sum_transpose(ct, operand, *, axes, out_sharding):
  shape = operand.aval.shape
  return [broadcast_in_dim(ct, shape, tuple(d for d in range(len(shape)) if d not in axes),
                           out_sharding=operand.aval.sharding)]  # the operand's type, as JAX


reduce_sum_p = standard_primitive("reduce_sum", _reduce_sum_abstract_eval,
                                  _monoid_reduce_lowering(_sum_identity, ew.add))
ad.deflinear(reduce_sum_p, _reduce_sum_transpose)
batching.defreducer(reduce_sum_p)


# ----------------------------------------------------------------------------
# reduce_prod


def reduce_prod(operand, axes):
  """Multiplies the elements of `operand` over `axes`.

  The product accumulates in the operand's dtype; an empty axis gives 1.

  Args:
    operand: an array of a numeric (not bool) dtype.
    axes: a sequence of distinct axes, each in ``[0, operand.ndim)``.

  Returns:
    An array of operand's dtype whose shape is operand's with `axes` removed.

  Raises:
    ValueError: an axis is repeated or out of range.
    TypeError: operand's dtype is bool or not numeric.

  Mirrors `jax.lax.reduce_prod`.
  """
  return reduce_prod_p.bind(operand, axes=_canonical_axes(axes))


def _reduce_prod_abstract_eval(operand, *, axes):
  shape = _reduced_shape(operand, axes)
  _check_number("reduce_prod", operand)
  return core.ShapedArray(shape, operand.dtype, operand.weak_type)


def _reduce_prod_jvp(primals, tangents, *, axes):
  # The tangent of a tree of products: right where some elements are zero.
  out = reduce_prod_p.bind(*primals, axes=axes)
  one = _prod_identity(core.get_aval(primals[0]).dtype)
  t_out, = _jvp_of(lambda x: _tree_reduce(lambda a, b: [ew.mul(a, b)], [one], [x], axes),
                   primals, tangents)
  return out, t_out


reduce_prod_p = standard_primitive("reduce_prod", _reduce_prod_abstract_eval,
                                   _monoid_reduce_lowering(_prod_identity, ew.mul))
reduce_prod_p.def_jvp(_reduce_prod_jvp)
batching.defreducer(reduce_prod_p)


# ----------------------------------------------------------------------------
# reduce_max


def reduce_max(operand, axes):
  """The maximum of `operand` over `axes`.

  A NaN anywhere in a reduced slice makes that result NaN. Complex values are
  ordered lexicographically by (real, imag). An empty axis gives the identity:
  -inf for floats, the dtype's minimum for integers, False for bool.

  Args:
    operand: an array of any numeric or bool dtype.
    axes: a sequence of distinct axes, each in ``[0, operand.ndim)``.

  Returns:
    An array of operand's dtype whose shape is operand's with `axes` removed.

  Raises:
    ValueError: an axis is repeated or out of range.

  Mirrors `jax.lax.reduce_max`.
  """
  return reduce_max_p.bind(operand, axes=_canonical_axes(axes))


def _reduce_max_abstract_eval(operand, *, axes):
  return core.ShapedArray(_reduced_shape(operand, axes), operand.dtype, operand.weak_type)


def _reduce_chooser_jvp(t, ans, operand, *, axes):
  """The mean of the tangents at the positions where operand equals the result (max or min)."""
  shape = core.get_aval(operand).shape
  kept = tuple(d for d in range(len(shape)) if d not in axes)
  dtype = core.get_aval(t).dtype
  location = ew.convert_element_type(ew.eq(operand, broadcast_in_dim(ans, shape, kept)), dtype)
  counts = reduce_sum(location, axes)
  return ew.div(reduce_sum(ew.mul(t, location), axes), counts)


reduce_max_p = standard_primitive("reduce_max", _reduce_max_abstract_eval,
                                  _monoid_reduce_lowering(_max_identity, _max_combine))
ad.defjvp2(reduce_max_p, _reduce_chooser_jvp)
batching.defreducer(reduce_max_p)


# ----------------------------------------------------------------------------
# reduce_min


def reduce_min(operand, axes):
  """The minimum of `operand` over `axes`.

  A NaN anywhere in a reduced slice makes that result NaN. Complex values are
  ordered lexicographically by (real, imag). An empty axis gives the identity:
  +inf for floats, the dtype's maximum for integers, True for bool.

  Args:
    operand: an array of any numeric or bool dtype.
    axes: a sequence of distinct axes, each in ``[0, operand.ndim)``.

  Returns:
    An array of operand's dtype whose shape is operand's with `axes` removed.

  Raises:
    ValueError: an axis is repeated or out of range.

  Mirrors `jax.lax.reduce_min`.
  """
  return reduce_min_p.bind(operand, axes=_canonical_axes(axes))


def _reduce_min_abstract_eval(operand, *, axes):
  return core.ShapedArray(_reduced_shape(operand, axes), operand.dtype, operand.weak_type)


reduce_min_p = standard_primitive("reduce_min", _reduce_min_abstract_eval,
                                  _monoid_reduce_lowering(_min_identity, _min_combine))
ad.defjvp2(reduce_min_p, _reduce_chooser_jvp)
batching.defreducer(reduce_min_p)


# ----------------------------------------------------------------------------
# reduce_and, reduce_or, reduce_xor: bitwise (logical, for bool) reductions


def _logical_reduce_abstract_eval(operand, *, axes):
  """Shared by the bitwise reductions: bool or integer operands; never weakly typed."""
  if operand.dtype != np.bool_ and operand.dtype not in KINDS["int"]:
    raise TypeError("logical reduction requires operand dtype bool or int, got "
                    f"{operand.dtype.name}.")
  _deleted_shape(operand.shape, axes)  # NumPy's IndexError for an axis out of range, as JAX
  shape = _reduced_shape(operand, axes)  # refuses negative or repeated axes too
  return core.ShapedArray(shape, operand.dtype, False)


def reduce_and(operand, axes):
  """The bitwise AND (logical AND, for bool) of `operand` over `axes`.

  An empty axis gives all bits set (True for bool).

  Args:
    operand: an array of a bool or integer dtype.
    axes: a sequence of distinct axes, each in ``[0, operand.ndim)``.

  Returns:
    An array of operand's dtype whose shape is operand's with `axes` removed.

  Raises:
    TypeError: operand's dtype is not bool or integer.
    IndexError: an axis is out of range.

  Mirrors `jax.lax.reduce_and`.
  """
  return reduce_and_p.bind(operand, axes=_canonical_axes(axes))


reduce_and_p = standard_primitive("reduce_and", _logical_reduce_abstract_eval,
                                  _monoid_reduce_lowering(_and_identity, ew.bitwise_and))
ad.defjvp_zero(reduce_and_p)
batching.defreducer(reduce_and_p)


def reduce_or(operand, axes):
  """The bitwise OR (logical OR, for bool) of `operand` over `axes`.

  An empty axis gives 0 (False for bool).

  Args:
    operand: an array of a bool or integer dtype.
    axes: a sequence of distinct axes, each in ``[0, operand.ndim)``.

  Returns:
    An array of operand's dtype whose shape is operand's with `axes` removed.

  Raises:
    TypeError: operand's dtype is not bool or integer.
    IndexError: an axis is out of range.

  Mirrors `jax.lax.reduce_or`.
  """
  return reduce_or_p.bind(operand, axes=_canonical_axes(axes))


reduce_or_p = standard_primitive("reduce_or", _logical_reduce_abstract_eval,
                                 _monoid_reduce_lowering(_or_identity, ew.bitwise_or))
ad.defjvp_zero(reduce_or_p)
batching.defreducer(reduce_or_p)


def reduce_xor(operand, axes):
  """The bitwise XOR (parity, for bool) of `operand` over `axes`.

  An empty axis gives 0 (False for bool).

  Args:
    operand: an array of a bool or integer dtype.
    axes: a sequence of distinct axes, each in ``[0, operand.ndim)``.

  Returns:
    An array of operand's dtype whose shape is operand's with `axes` removed.

  Raises:
    TypeError: operand's dtype is not bool or integer.
    IndexError: an axis is out of range.

  Mirrors `jax.lax.reduce_xor`.
  """
  return reduce_xor_p.bind(operand, axes=_canonical_axes(axes))


reduce_xor_p = standard_primitive("reduce_xor", _logical_reduce_abstract_eval,
                                  _monoid_reduce_lowering(_or_identity, ew.bitwise_xor))
ad.defjvp_zero(reduce_xor_p)
batching.defreducer(reduce_xor_p)


# ----------------------------------------------------------------------------
# reduce: a reduction with a user-given combining function

_MONOIDS = (
    (ew.add, _sum_identity, reduce_sum, False),
    (ew.mul, _prod_identity, reduce_prod, False),
    (ew.bitwise_or, _or_identity, reduce_or, True),
    (ew.bitwise_and, _and_identity, reduce_and, True),
    (ew.bitwise_xor, _or_identity, reduce_xor, True),
    (ew.max, _max_identity, reduce_max, False),
    (ew.min, _min_identity, reduce_min, False),
)


def reduce(operands, init_values, computation, dimensions):
  """Reduces `operands` over `dimensions` with `computation`, starting from `init_values`.

  ``computation(xs, ys)`` takes two pytrees shaped like `init_values` (of
  scalars) and returns one; together with `init_values` it must form a monoid
  (associative, with `init_values` its identity), since XLA may combine the
  elements in any order. A single operand reduced with `lax.add`, `lax.mul`,
  `lax.max`, `lax.min` or a bitwise op from its known identity becomes the
  matching `reduce_*` primitive, as in JAX.

  Args:
    operands: a pytree of arrays of equal shapes.
    init_values: a pytree of scalars with the same structure and dtypes.
    computation: the combining function.
    dimensions: the axes to reduce.

  Returns:
    A pytree (the structure `computation` returns) of arrays whose shapes are
    the operands' with `dimensions` removed.

  Raises:
    ValueError: the structures differ, or an initial value is not a scalar.
    TypeError: an operand's dtype differs from its initial value's.

  Mirrors `jax.lax.reduce`.
  """
  flat_operands, operand_tree = tree_util.tree_flatten(operands)
  flat_inits, init_tree = tree_util.tree_flatten(init_values)
  if operand_tree != init_tree:
    raise ValueError("Operands must have the same tree structure as init_values: "
                     f"{operand_tree} vs. {init_tree}")
  dimensions = _canonical_axes(dimensions)
  monoid_reducer = _monoid_reducer(computation, flat_inits)
  if monoid_reducer is not None:
    weak_type = (all(dtypes.is_weakly_typed(x) for x in flat_operands)
                 and all(dtypes.is_weakly_typed(x) for x in flat_inits))
    out = monoid_reducer(flat_operands[0], dimensions)
    return ew.convert_element_type(out, core.get_aval(out).dtype, weak_type=weak_type)
  init_avals = tuple(core.get_aval(x) for x in flat_inits)
  closed_jaxpr, out_tree = _reduction_jaxpr(computation, init_avals, init_tree,
                                              core.trace_context())
  outs = reduce_p.bind(*flat_operands, *flat_inits, computation=computation,
                       jaxpr=closed_jaxpr, dimensions=dimensions)
  return tree_util.tree_unflatten(out_tree, outs)


def _concrete_scalar(x):
  """The value of a scalar known at trace time, else None."""
  value = x.to_concrete_value() if isinstance(x, core.Tracer) else x
  if value is None or np.shape(value) != ():
    return None
  return np.asarray(value)


def _monoid_reducer(computation, flat_inits):
  """The `reduce_*` wrapper `computation` with this identity amounts to, or None."""
  if len(flat_inits) != 1:
    return None
  value = _concrete_scalar(flat_inits[0])
  if value is None:
    return None
  dtype = core.get_aval(flat_inits[0]).dtype
  for op, identity, reducer, bitwise in _MONOIDS:
    if computation is op:
      if bitwise and not (dtype == np.bool_ or dtype in KINDS["int"]):
        return None
      return reducer if np.equal(value, identity(dtype)) else None
  return None


@functools.lru_cache(maxsize=512)
def _reduction_jaxpr(computation, init_avals, init_tree, context):
  """`computation` traced on scalar avals (cached, so equal calls share one jaxpr)."""
  in_tree = tree_util.tree_structure((init_tree.unflatten(init_avals),) * 2)

  def flat_computation(*flat_args):
    xs, ys = tree_util.tree_unflatten(in_tree, flat_args)
    flat_outs, out_tree = tree_util.tree_flatten(computation(xs, ys))
    for out in flat_outs:
      if not core.valid_jaxtype(out):
        raise TypeError(f"function {source_info.fun_sourceinfo(computation)} traced for "
                        f"reduce comp returned a value of type {type(out)}, which is not a "
                        "valid JAX type")
    store.append(out_tree)
    return flat_outs

  store = []
  closed = pe.trace_to_jaxpr(flat_computation, [*init_avals, *init_avals])
  if any(isinstance(c, core.Tracer) for c in closed.consts):
    raise NotImplementedError("Reduction computations can't close over Tracers.")
  return closed, store[0]


executable_cache.on_clear(_reduction_jaxpr.cache_clear)


def _reduce_abstract_eval(*avals, computation, jaxpr, dimensions):
  operands, inits = avals[:len(avals) // 2], avals[len(avals) // 2:]
  if any(a.shape != () for a in inits):
    raise ValueError(f"reduce found non-scalar initial value: {[a.shape for a in inits]}")
  shapes = [_deleted_shape(op.shape, dimensions) for op in operands]
  if [op.dtype for op in operands] != [a.dtype for a in inits]:
    raise TypeError("reduce operand dtypes should match corresponding initial value dtypes, "
                    f"got operands={list(operands)} and initial_values={list(inits)}")
  return [core.ShapedArray(shape, op.dtype, op.weak_type and init.weak_type)
          for shape, op, init in zip(shapes, operands, inits, strict=True)]


def _reduce_jvp(primals, tangents, *, computation, jaxpr, dimensions):
  """JAX's rule: the tangent of a balanced tree of `computation` over the reduced axes.

  The computation's jaxpr (traced on scalars) is applied to whole arrays, so
  it may use elementwise primitives only (as every combining function of
  scalars built from lax elementwise ops does).
  """
  n = len(primals) // 2
  if any(type(t) is not ad.Zero for t in tangents[n:]):
    raise NotImplementedError("Gradient of general lax.reduce with non-zero tangents for "
                              "initial values to reduction not implemented")
  out = reduce_p.bind(*primals, computation=computation, jaxpr=jaxpr, dimensions=dimensions)
  operands, inits = primals[:n], primals[n:]
  combine = functools.partial(core.eval_jaxpr, jaxpr.jaxpr, jaxpr.consts)
  return out, _jvp_of(lambda *xs: _tree_reduce(combine, inits, xs, dimensions),
                      operands, tangents[:n])


def _reduce_lowering(ctx, *args, computation, jaxpr, dimensions):
  return ctx.op("stablehlo.reduce", list(args), [hlo.aval_type(a) for a in ctx.avals_out],
                f"dimensions = {hlo.i64_array(dimensions)}", [jaxpr_region(ctx, jaxpr)])


reduce_p = standard_primitive("reduce", _reduce_abstract_eval, _reduce_lowering,
                              multiple_results=True)
reduce_p.def_jvp(_reduce_jvp)


def _init_dims(bdim):
  # A batched initial value has shape (B,); a shared one is rank 0.
  return () if bdim is batching.not_mapped else (0,)


def _reduce_batch(axis_data, args, dims, *, computation, jaxpr, dimensions):
  """Batch axes of the operands go first and the reduced dimensions shift past them.

  JAX refuses batched initial values; here each member's initial value is
  joined to its operand along the first reduced dimension, and member 0's
  serves as the shared one (in a monoid the identity is unique, so this is
  exact whenever each initial value is an identity, as `reduce` requires).
  """
  n = len(args) // 2
  size = axis_data.size
  operands = [batching.bdim_at_front(x, d, size) for x, d in zip(args[:n], dims[:n])]
  inits, init_dims = args[n:], dims[n:]
  dimensions = tuple(d + 1 for d in dimensions)
  if dimensions and any(d is not batching.not_mapped for d in init_dims):
    joined = dimensions[0]
    shape = tuple(1 if i == joined else k for i, k in enumerate(np.shape(operands[0])))
    operands = [concatenate([broadcast_in_dim(i, shape, _init_dims(d)), x], joined)
                for x, i, d in zip(operands, inits, init_dims)]
  inits = [i if d is batching.not_mapped else reshape(slice_in_dim(i, 0, 1), ())
           for i, d in zip(inits, init_dims)]
  outs = reduce_p.bind(*operands, *inits, computation=computation, jaxpr=jaxpr,
                       dimensions=dimensions)
  return outs, [0] * n


reduce_p.def_batch(_reduce_batch)


# ----------------------------------------------------------------------------
# argmax, argmin


def _argminmax_abstract_eval(operand, *, axes, index_dtype):
  axis, = axes
  if not 0 <= axis < operand.ndim:
    raise ValueError(f"Invalid axis {axis} for operand shape {operand.shape}")
  if operand.shape[axis] < 1:
    raise ValueError("argmin and argmax require non-empty reduced dimension. "
                     f"operand.shape={operand.shape} axis={axis}")
  if index_dtype not in KINDS["int"]:
    raise TypeError(f"index_dtype must be an integer type, but got {index_dtype.name}")
  shape = tuple(d for i, d in enumerate(operand.shape) if i != axis)
  return core.ShapedArray(shape, index_dtype, False)


def _argminmax_combine(better, v1, i1, v2, i2):
  """Chooses between (value, index) pairs: NaN wins, then `better`; ties go to the lower index.

  The rule is symmetric in its two pairs, so XLA may combine in any order.
  """
  nan1, nan2 = ew.ne(v1, v1), ew.ne(v2, v2)
  first_wins = ew.bitwise_or(better(v1, v2), ew.bitwise_and(nan1, ew.bitwise_not(nan2)))
  tie = ew.bitwise_or(ew.eq(v1, v2), ew.bitwise_and(nan1, nan2))
  first_wins = ew.bitwise_or(first_wins, ew.bitwise_and(tie, ew.lt(i1, i2)))
  return [ew.select_n(first_wins, v2, v1), ew.select_n(first_wins, i2, i1)]


def _argminmax_lowering(better, identity, ctx, x, *, axes, index_dtype):
  aval = ctx.avals_in[0]
  if dtypes.issubdtype(aval.dtype, np.complexfloating):
    raise TypeError(f"{better.__name__} does not accept dtype {aval.dtype.name} at position 0. "
                    "Accepted dtypes at position 0 are subtypes of integer, floating, bool.")
  axis, = axes
  index_type = hlo.tensor_type(aval.shape, index_dtype)
  iota = ctx.op1("stablehlo.iota", [], index_type, f"iota_dimension = {axis} : i64")
  value_scalar, index_scalar = core.ShapedArray((), aval.dtype), core.ShapedArray((), index_dtype)
  region = fun_region(ctx, functools.partial(_argminmax_combine, better),
                      [value_scalar, index_scalar, value_scalar, index_scalar])
  inits = [ctx.constant(identity(aval.dtype)), ctx.constant(np.zeros((), index_dtype))]
  out = ctx.avals_out[0]
  _, indices = ctx.op("stablehlo.reduce", [x, iota, *inits],
                      [hlo.tensor_type(out.shape, aval.dtype), hlo.aval_type(out)],
                      f"dimensions = {hlo.i64_array(axes)}", [region])
  return indices


def argmax(operand, axis, index_dtype):
  """The index of the maximum of `operand` along `axis`.

  A NaN counts as larger than every number; among equal maxima (or several
  NaNs) the first index wins.

  Args:
    operand: an array of a real numeric or bool dtype, non-empty along `axis`.
    axis: the axis to reduce, in ``[0, operand.ndim)`` (negative axes are refused).
    index_dtype: the integer dtype of the result.

  Returns:
    An array of `index_dtype` whose shape is operand's without `axis`.

  Raises:
    ValueError: `axis` is out of range or the axis is empty.
    TypeError: `index_dtype` is not an integer dtype.

  Mirrors `jax.lax.argmax`.
  """
  index_dtype = dtypes.check_user_dtype_supported(index_dtype, "argmax")
  return argmax_p.bind(operand, axes=(int(axis),), index_dtype=index_dtype)


argmax_p = standard_primitive(
    "argmax", _argminmax_abstract_eval,
    functools.partial(_argminmax_lowering, ew.gt, _max_identity))
ad.defjvp_zero(argmax_p)
batching.defreducer(argmax_p)


def argmin(operand, axis, index_dtype):
  """The index of the minimum of `operand` along `axis`.

  A NaN counts as smaller than every number; among equal minima (or several
  NaNs) the first index wins.

  Args:
    operand: an array of a real numeric or bool dtype, non-empty along `axis`.
    axis: the axis to reduce, in ``[0, operand.ndim)`` (negative axes are refused).
    index_dtype: the integer dtype of the result.

  Returns:
    An array of `index_dtype` whose shape is operand's without `axis`.

  Raises:
    ValueError: `axis` is out of range or the axis is empty.
    TypeError: `index_dtype` is not an integer dtype.

  Mirrors `jax.lax.argmin`.
  """
  index_dtype = dtypes.check_user_dtype_supported(index_dtype, "argmin")
  return argmin_p.bind(operand, axes=(int(axis),), index_dtype=index_dtype)


argmin_p = standard_primitive(
    "argmin", _argminmax_abstract_eval,
    functools.partial(_argminmax_lowering, ew.lt, _min_identity))
ad.defjvp_zero(argmin_p)
batching.defreducer(argmin_p)


# ----------------------------------------------------------------------------
# Cumulative reductions: cumsum, cumprod, cummax, cummin, cumlogsumexp


def _cumulative_abstract_eval(name):
  def abstract_eval(operand, *, axis, reverse):
    if axis < 0:
      raise ValueError("XLA operations do not allow negative axes")
    if axis >= operand.ndim:
      raise ValueError(f"axis {axis} is out of bounds for array of shape {operand.shape}")
    _check_number(name, operand)
    return operand
  return abstract_eval


def _cumulative_lowering(identity, combine):
  """A `stablehlo.reduce_window` whose window covers the axis, padded so out[i] sees in[:i+1]."""
  def lowering(ctx, x, *, axis, reverse):
    aval = ctx.avals_in[0]
    n = aval.shape[axis]
    if n == 0:
      return x
    ones = [1] * aval.ndim
    window = list(ones)
    window[axis] = n
    padding = [[0, 0] for _ in ones]
    padding[axis] = [0, n - 1] if reverse else [n - 1, 0]
    init = ctx.constant(identity(aval.dtype))
    scalar = core.ShapedArray((), aval.dtype)
    region = fun_region(ctx, lambda a, b: [combine(a, b)], [scalar, scalar])
    attrs = (f"window_dimensions = {hlo.i64_array(window)}, "
             f"window_strides = {hlo.i64_array(ones)}, "
             f"padding = {hlo.dense_i64(padding, (aval.ndim, 2))}")
    return ctx.op1("stablehlo.reduce_window", [x, init], hlo.aval_type(aval), attrs, [region])
  return lowering


def _cumulative_batch(prim):
  """The batch axis stays where it is; `axis` shifts past it."""
  def rule(axis_data, args, dims, *, axis, reverse):
    (x,), (bdim,) = args, dims
    return prim.bind(x, axis=axis + (bdim <= axis), reverse=reverse), bdim
  return rule


def cumsum(operand, axis: int = 0, reverse: bool = False):
  """The running sum of `operand` along `axis` (from the end when `reverse`).

  Args:
    operand: an array of a numeric (not bool) dtype.
    axis: a non-negative axis of operand.
    reverse: accumulate from the last element toward the first.

  Returns:
    An array of operand's shape and dtype.

  Raises:
    ValueError: `axis` is negative or out of range.
    TypeError: operand's dtype is bool or not numeric.

  Mirrors `jax.lax.cumsum`.
  """
  return cumsum_p.bind(operand, axis=int(axis), reverse=bool(reverse))


def _cumsum_transpose(ct, operand, *, axis, reverse):
  return [cumsum(ct, axis, not reverse)]


cumsum_p = standard_primitive("cumsum", _cumulative_abstract_eval("cumsum"),
                              _cumulative_lowering(_sum_identity, ew.add))
ad.deflinear(cumsum_p, _cumsum_transpose)
cumsum_p.def_batch(_cumulative_batch(cumsum_p))


def cumprod(operand, axis: int = 0, reverse: bool = False):
  """The running product of `operand` along `axis` (from the end when `reverse`).

  Args:
    operand: an array of a numeric (not bool) dtype.
    axis: a non-negative axis of operand.
    reverse: accumulate from the last element toward the first.

  Returns:
    An array of operand's shape and dtype.

  Raises:
    ValueError: `axis` is negative or out of range.
    TypeError: operand's dtype is bool or not numeric.

  Mirrors `jax.lax.cumprod`.
  """
  return cumprod_p.bind(operand, axis=int(axis), reverse=bool(reverse))


cumprod_p = standard_primitive("cumprod", _cumulative_abstract_eval("cumprod"),
                               _cumulative_lowering(_prod_identity, ew.mul))
cumprod_p.def_jvp(_cumulative_jvp(cumprod_p, ew.mul, _prod_identity))
cumprod_p.def_batch(_cumulative_batch(cumprod_p))


def cummax(operand, axis: int = 0, reverse: bool = False):
  """The running maximum of `operand` along `axis`; a NaN stays from where it appears.

  Args:
    operand: an array of a numeric (not bool) dtype.
    axis: a non-negative axis of operand.
    reverse: accumulate from the last element toward the first.

  Returns:
    An array of operand's shape and dtype.

  Raises:
    ValueError: `axis` is negative or out of range.
    TypeError: operand's dtype is bool or not numeric.

  Mirrors `jax.lax.cummax`.
  """
  return cummax_p.bind(operand, axis=int(axis), reverse=bool(reverse))


cummax_p = standard_primitive("cummax", _cumulative_abstract_eval("cummax"),
                              _cumulative_lowering(_max_identity, _max_combine))
cummax_p.def_jvp(_cumulative_jvp(cummax_p, _max_combine, _max_identity))
cummax_p.def_batch(_cumulative_batch(cummax_p))


def cummin(operand, axis: int = 0, reverse: bool = False):
  """The running minimum of `operand` along `axis`; a NaN stays from where it appears.

  Args:
    operand: an array of a numeric (not bool) dtype.
    axis: a non-negative axis of operand.
    reverse: accumulate from the last element toward the first.

  Returns:
    An array of operand's shape and dtype.

  Raises:
    ValueError: `axis` is negative or out of range.
    TypeError: operand's dtype is bool or not numeric.

  Mirrors `jax.lax.cummin`.
  """
  return cummin_p.bind(operand, axis=int(axis), reverse=bool(reverse))


cummin_p = standard_primitive("cummin", _cumulative_abstract_eval("cummin"),
                              _cumulative_lowering(_min_identity, _min_combine))
cummin_p.def_jvp(_cumulative_jvp(cummin_p, _min_combine, _min_identity))
cummin_p.def_batch(_cumulative_batch(cummin_p))


def _wrap_between(x, bound):
  """`x` wrapped into [-bound, bound)."""
  bound, two_bound = ew._const(x, bound), ew._const(x, 2 * bound)
  r = ew.rem(ew.add(x, bound), two_bound)
  r = ew.select_n(ew.lt(r, ew._const(r, 0)), r, ew.add(r, two_bound))
  return ew.sub(r, bound)


def _logaddexp(x, y):
  """log(exp(x) + exp(y)) without overflow, for real or complex scalars."""
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    amax = _max_combine(x, y)
    # log(e^x + e^y) = amax + log1p(e^(x + y - 2 amax)), since one of x, y is amax
    out = ew.add(amax, ew.log1p(ew.exp(ew.sub(ew.add(x, y), ew.mul(amax, ew._const(amax, 2))))))
    return ew.complex(ew.real(out), _wrap_between(ew.imag(out), np.pi))
  amax = ew.max(x, y)
  delta = ew.sub(x, y)
  # delta is NaN for a NaN input or for infinities of one sign: then x + y is the answer
  return ew.select_n(ew.ne(delta, delta),
                     ew.add(amax, ew.log1p(ew.exp(ew.neg(ew.abs(delta))))), ew.add(x, y))


def _neg_inf(dtype):
  return np.array(-np.inf, dtype)  # an integer dtype raises OverflowError, as in JAX


def cumlogsumexp(operand, axis: int = 0, reverse: bool = False):
  """The running log(sum(exp(x))) of `operand` along `axis`, computed stably.

  Args:
    operand: an array of a floating-point or complex dtype.
    axis: a non-negative axis of operand.
    reverse: accumulate from the last element toward the first.

  Returns:
    An array of operand's shape and dtype.

  Raises:
    ValueError: `axis` is negative or out of range.
    TypeError: operand's dtype is bool or not numeric.
    OverflowError: operand has an integer dtype (when it is lowered, as in JAX).

  Mirrors `jax.lax.cumlogsumexp`.
  """
  return cumlogsumexp_p.bind(operand, axis=int(axis), reverse=bool(reverse))


cumlogsumexp_p = standard_primitive("cumlogsumexp", _cumulative_abstract_eval("cumlogsumexp"),
                                    _cumulative_lowering(_neg_inf, _logaddexp))
cumlogsumexp_p.def_jvp(_cumulative_jvp(cumlogsumexp_p, _logaddexp, _neg_inf))
cumlogsumexp_p.def_batch(_cumulative_batch(cumlogsumexp_p))
