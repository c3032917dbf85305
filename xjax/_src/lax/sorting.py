"""Sorting: sort (several operands, lexicographic keys), sort_key_val, top_k.

`sort` lowers to `stablehlo.sort` with a comparator region written in lax
ops (traced on scalars, as the reductions' regions are). Its order on floats
is JAX's: -inf < ... < inf < NaN, with -0.0 equal to 0.0 and all NaNs equal;
complex keys compare by (real, imag). `top_k` lowers to `chlo.top_k`, whose
order puts NaN first and -0.0 below 0.0.

Both are differentiated as JAX does: the tangents are permuted like the
values (a gather along the sorted axis, the other axes as batching dims), so
functions that only reorder (median, quantiles) get gradients and functions
of the order alone (argsort, ranks) get zero ones.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import stablehlo as hlo
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.lax import elementwise as ew
from xjax._src.lax.gather_scatter import GatherDimensionNumbers, GatherScatterMode, gather
from xjax._src.lax.reductions import fun_region
from xjax._src.lax.structural import broadcast_in_dim, broadcasted_iota, expand_dims, reshape
from xjax._src.lax.utils import standard_primitive


def _canonicalize_axis(axis, ndim: int) -> int:
  axis = operator.index(axis)
  if not -ndim <= axis < ndim:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
  return axis + ndim if axis < 0 else axis


# ----------------------------------------------------------------------------
# sort


def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
  """Sorts `operand` along `dimension`; with several operands, sorts them together.

  Floats sort as -inf < ... < inf < NaN, with -0.0 and 0.0 equal (a stable
  sort keeps their order) and all NaNs equal; complex values sort by real
  part, then imaginary part. With a sequence of operands, the first
  `num_keys` are the keys, compared lexicographically, and every operand is
  permuted the same way.

  Args:
    operand: an array, or a sequence of arrays of equal shapes.
    dimension: the axis to sort along (negative counts from the end).
    is_stable: keep the input order of equal keys.
    num_keys: how many leading operands are keys.

  Returns:
    The sorted array, or a tuple of the permuted operands.

  Raises:
    TypeError: no operands, or operands of different shapes.
    ValueError: `num_keys` out of range, or `dimension` out of range.

  Mirrors `jax.lax.sort`.
  """
  if isinstance(operand, (list, tuple)):
    if len(operand) == 0:
      raise TypeError("Sort requires at least one operand")
    if not 1 <= num_keys <= len(operand):
      raise ValueError(f"num_keys={num_keys} must be between 1 and len(operand)={len(operand)}")
    dimension = _canonicalize_axis(dimension, core.get_aval(operand[0]).ndim)
    return tuple(sort_p.bind(*operand, dimension=dimension, is_stable=bool(is_stable),
                             num_keys=int(num_keys)))
  if num_keys != 1:
    raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
  dimension = _canonicalize_axis(dimension, core.get_aval(operand).ndim)
  return sort_p.bind(operand, dimension=dimension, is_stable=bool(is_stable), num_keys=1)[0]


def _sort_abstract_eval(*avals, dimension, is_stable, num_keys):
  if any(a.shape != avals[0].shape for a in avals[1:]):
    shapes = " ".join(str(a.shape) for a in avals)
    raise TypeError(f"Arguments to sort must have equal shapes, got: {shapes}")
  return list(avals)


def _take_along(t, idx, axis):
  """``t`` permuted along `axis` by `idx`: integer indices with a trailing index vector of 1."""
  ndim = core.get_aval(idx).ndim - 1
  others = tuple(d for d in range(ndim) if d != axis)
  dnums = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,),
                                 start_index_map=(axis,), operand_batching_dims=others,
                                 start_indices_batching_dims=others)
  return gather(t, idx, dnums, (1,) * ndim, mode=GatherScatterMode.PROMISE_IN_BOUNDS)


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
  # Sort an iota along with the operands: it is the permutation the tangents follow.
  shape = core.get_aval(primals[0]).shape
  index_dtype = np.dtype(np.uint32 if max(shape, default=0) <= np.iinfo(np.uint32).max
                         else np.uint64)
  iota = broadcasted_iota(index_dtype, shape, dimension)
  *outs, perm = sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable,
                            num_keys=num_keys)
  idx = expand_dims(perm, (len(shape),))
  # Integer operands' float0 tangents stay zero.
  tangents_out = [ad.Zero.from_primal_value(o)
                  if type(t) is ad.Zero or core.get_aval(t).dtype == dtypes.float0
                  else _take_along(t, idx, dimension) for o, t in zip(outs, tangents)]
  return outs, tangents_out


def _float_lt(x, y):
  """x < y in the order -inf < ... < inf < NaN, on floats."""
  return ew.bitwise_or(ew.lt(x, y), ew.bitwise_and(ew.ne(y, y), ew.eq(x, x)))


def _float_eq(x, y):
  """x == y in that order: -0.0 equals 0.0 and every NaN equals every NaN."""
  return ew.bitwise_or(ew.eq(x, y), ew.bitwise_and(ew.ne(x, x), ew.ne(y, y)))


def _sort_keys(x, y):
  """The (lt, eq) comparisons of one key operand, split into real keys."""
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    pairs = [(ew.real(x), ew.real(y)), (ew.imag(x), ew.imag(y))]
  else:
    pairs = [(x, y)]
  if dtypes.issubdtype(pairs[0][0].dtype, np.floating):
    return [(_float_lt(a, b), _float_eq(a, b)) for a, b in pairs]
  return [(ew.lt(a, b), ew.eq(a, b)) for a, b in pairs]


def _sort_comparator(*args, num_keys):
  """lhs < rhs, lexicographically on the keys; `args` alternate lhs_i, rhs_i per operand."""
  keys = [k for i in range(num_keys) for k in _sort_keys(args[2 * i], args[2 * i + 1])]
  result = None
  for lt, eq in reversed(keys):
    result = lt if result is None else ew.bitwise_or(lt, ew.bitwise_and(eq, result))
  return [result]


def _sort_lowering(ctx, *operands, dimension, is_stable, num_keys):
  scalars = [core.ShapedArray((), a.dtype) for a in ctx.avals_in]
  region = fun_region(ctx, functools.partial(_sort_comparator, num_keys=num_keys),
                      [s for a in scalars for s in (a, a)])
  attrs = f"dimension = {dimension} : i64, is_stable = {'true' if is_stable else 'false'}"
  return ctx.op("stablehlo.sort", list(operands), [hlo.aval_type(a) for a in ctx.avals_out],
                attrs, [region])


sort_p = standard_primitive("sort", _sort_abstract_eval, _sort_lowering, multiple_results=True)
sort_p.def_jvp(_sort_jvp)


def _sort_batch(axis_data, args, dims, *, dimension, is_stable, num_keys):
  """All operands take the first batched one's batch axis; `dimension` shifts past it."""
  shape, bdim = next((np.shape(x), d) for x, d in zip(args, dims) if d is not batching.not_mapped)
  others = tuple(i for i in range(len(shape)) if i != bdim)
  args = [broadcast_in_dim(x, shape, others) if d is batching.not_mapped
          else batching.moveaxis(x, d, bdim) for x, d in zip(args, dims)]
  outs = sort_p.bind(*args, dimension=dimension + (bdim <= dimension), is_stable=is_stable,
                     num_keys=num_keys)
  return outs, [bdim] * len(outs)


sort_p.def_batch(_sort_batch)


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
  """Sorts `keys` along `dimension` and permutes `values` the same way.

  Args:
    keys: an array.
    values: an array of keys' shape.
    dimension: the axis to sort along (negative counts from the end).
    is_stable: keep the input order of equal keys.

  Returns:
    The pair (sorted keys, permuted values).

  Raises:
    TypeError: the shapes differ.
    ValueError: `dimension` is out of range.

  Mirrors `jax.lax.sort_key_val`.
  """
  dimension = _canonicalize_axis(dimension, core.get_aval(keys).ndim)
  k, v = sort_p.bind(keys, values, dimension=dimension, is_stable=bool(is_stable), num_keys=1)
  return k, v


# ----------------------------------------------------------------------------
# top_k


def top_k(operand, k: int, *, axis: int = -1):
  """The `k` largest entries of `operand` along `axis`, largest first, and their indices.

  NaN counts as the largest value and -0.0 as smaller than 0.0; among equal
  values the lower index comes first.

  Args:
    operand: an array of rank at least 1 and a real or bool dtype.
    k: how many entries to keep, at most the size of `axis`.
    axis: the axis to search (negative counts from the end; default the last).

  Returns:
    A list ``[values, indices]``: values of operand's dtype and int32 indices,
    both of operand's shape with `axis` of size `k`.

  Raises:
    ValueError: `k` is negative or too large, `axis` is out of range, or the
      operand is complex.
    TypeError: the operand is a scalar.

  Mirrors `jax.lax.top_k`.
  """
  k = int(k)
  if k < 0:
    raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
  axis = _canonicalize_axis(axis, core.get_aval(operand).ndim)
  return top_k_p.bind(operand, k=k, axis=axis)


def _top_k_abstract_eval(operand, *, k, axis):
  if dtypes.issubdtype(operand.dtype, np.complexfloating):
    raise ValueError("top_k is not compatible with complex inputs.")
  if k < 0:
    raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
  if operand.ndim == 0:
    raise TypeError(f"top_k operand must have >= 1 dimension, got {operand.shape}")
  if not 0 <= axis < operand.ndim:
    raise ValueError(f"axis argument out of range: axis={axis} for operand.shape={operand.shape}")
  shape = list(operand.shape)
  int32_max = int(np.iinfo(np.int32).max)
  if shape[axis] > int32_max + 1:
    raise ValueError("top_k returns int32 indices, which will overflow for array dimensions "
                     f"larger than the maximum int32 ({int32_max}). Got "
                     f"operand.shape={operand.shape}")
  if shape[axis] < k:
    raise ValueError("k argument to top_k must be no larger than size along axis; "
                     f"got k={k} with shape={shape} and axis={axis}")
  shape[axis] = k
  # Both results keep the operand's weak type, as in JAX.
  return [operand.update(shape=shape), operand.update(shape=shape, dtype=np.dtype(np.int32))]


def _top_k_jvp(primals, tangents, *, k, axis):
  values, indices = top_k_p.bind(*primals, k=k, axis=axis)
  t, = tangents
  t_values = ad.Zero.from_primal_value(values) if type(t) is ad.Zero else \
      _take_along(t, reshape(indices, (*core.get_aval(indices).shape, 1)), axis)
  return [values, indices], [t_values, ad.Zero.from_primal_value(indices)]


def _top_k_lowering(ctx, x, *, k, axis):
  aval = ctx.avals_in[0]
  last = aval.ndim - 1
  perm = list(range(aval.ndim))
  perm[axis], perm[last] = last, axis  # a swap: its own inverse

  def transpose(v, shape, dtype):
    return ctx.op1("stablehlo.transpose", [v], hlo.tensor_type(shape, dtype),
                   f"permutation = {hlo.i64_array(perm)}")

  if axis != last:
    x = transpose(x, [aval.shape[p] for p in perm], aval.dtype)
  out_shape = [ctx.avals_out[0].shape[p] for p in perm]
  values, indices = ctx.op("chlo.top_k", [x], [hlo.tensor_type(out_shape, aval.dtype),
                                               hlo.tensor_type(out_shape, np.int32)],
                           f"k = {k} : i64")
  if axis != last:
    values = transpose(values, ctx.avals_out[0].shape, aval.dtype)
    indices = transpose(indices, ctx.avals_out[1].shape, np.int32)
  return [values, indices]


top_k_p = standard_primitive("top_k", _top_k_abstract_eval, _top_k_lowering,
                             multiple_results=True)
top_k_p.def_jvp(_top_k_jvp)


def _top_k_batch(axis_data, args, dims, *, k, axis):
  (x,), (bdim,) = args, dims
  return top_k_p.bind(x, k=k, axis=axis + (bdim <= axis)), [bdim, bdim]


top_k_p.def_batch(_top_k_batch)
