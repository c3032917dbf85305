"""Set operations: unique and its Array API forms, union1d, intersect1d, setdiff1d, setxor1d, isin.

Everything is built on one stable lexicographic `lax.sort` of the rows along
the unique axis, followed by a mask of where each run of equal rows starts.
The number of results depends on the values, so without `size` these
functions read concrete values (and raise a ConcretizationTypeError under
`jit` or `vmap`, as JAX does). With a static `size` the output has exactly
`size` entries: surplus results are dropped and missing ones are padded.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax import elementwise as lax
from xjax._src.lax import reductions as lax_reductions
from xjax._src.lax import slicing as lax_slicing
from xjax._src.lax import sorting as lax_sorting
from xjax._src.lax import structural as lax_structural
from xjax._src.numpy import creation, indexing, lax_numpy, reductions, statistics, ufuncs, util
from xjax._src.numpy.util import dtype_of, ensure_arraylike, shape, where_

_UNIQUE_SIZE_HINT = (
    "To make jnp.unique() compatible with JIT and other transforms, you can specify "
    "a concrete value for the size argument, which will determine the output size.")


def _static_size(size, context: str) -> int | None:
  """`size` as a non-negative Python int (None stays None); traced sizes raise JAX's error."""
  if size is None:
    return None
  size = util.concrete_int(size, context)
  if size < 0:
    raise TypeError(f"size must be a non-negative integer; got size={size}.")
  return size


def _iota(n: int, dtype=None):
  return lax_structural.broadcasted_iota(dtype or dtypes.default_int_dtype(), (n,), 0)


def _first(x, n: int):
  return lax_slicing.slice_in_dim(x, 0, n, axis=0)


def _drop_first(x):
  return lax_slicing.slice_in_dim(x, 1, shape(x)[0], axis=0)


def _gather_fill(x, idx, fill):
  """x[idx] for a 1-D x, with `fill` where idx is out of range."""
  if shape(x)[0] == 0:
    return creation.full(shape(idx), fill, dtype_of(x))
  return x.at[idx].get(mode="fill", fill_value=fill)


# ----------------------------------------------------------------------------
# unique


@jit(static_argnames=("equal_nan",))
def _sort_rows(rows, equal_nan: bool):
  """The rows (slices along axis 0) of `rows` in stable lexicographic order.

  Returns:
    (sorted rows, starts, perm): starts[i] is True where sorted row i begins a
    run of equal rows; perm[i] is the source index of sorted row i. Complex
    NaNs are first made nan+0j, so that they all sort (and compare) together.
  """
  n = shape(rows)[0]
  if dtypes.issubdtype(dtype_of(rows), np.complexfloating):
    rows = where_(ufuncs.isnan(rows), np.array(np.nan, dtype_of(rows)), rows)
  width = math.prod(shape(rows)[1:])
  keys = lax_structural.reshape(rows, (n, width))
  columns = [lax_structural.reshape(lax_slicing.slice_in_dim(keys, j, j + 1, axis=1), (n,))
             for j in range(width)]
  *_, perm = lax_sorting.sort([*columns, _iota(n)], dimension=0, is_stable=True,
                              num_keys=max(width, 1))
  ordered = indexing.take(rows, perm, axis=0)
  later, earlier = _drop_first(ordered), _first(ordered, n - 1)
  differs = ufuncs.not_equal(later, earlier)
  if equal_nan and dtypes.issubdtype(dtype_of(rows), np.inexact):
    both_nan = ufuncs.logical_and(ufuncs.isnan(later), ufuncs.isnan(earlier))
    differs = ufuncs.logical_and(differs, ufuncs.logical_not(both_nan))
  differs = reductions.any(differs, axis=tuple(range(1, util.ndim(rows))))
  starts = lax_numpy.concatenate([creation.ones(1, bool), differs])
  return ordered, starts, perm


@jit(static_argnames=("size",))
def _group(ordered, starts, perm, fill_value, size: int):
  """Values, first indices, inverse and counts of the first `size` runs of equal rows.

  Slots past the number of runs hold `fill_value` (or the smallest row when it
  is None), the first sorted row's index, and a count of 0.
  """
  n = shape(starts)[0]
  num_unique = reductions.sum(starts)
  ind = lax_numpy.nonzero(starts, size=size)[0]
  values = indexing.take(ordered, ind, axis=0)
  if fill_value is not None:
    fill = lax.convert_element_type(creation.asarray(fill_value), dtype_of(values))
    valid = ufuncs.less(_iota(size), num_unique)
    valid = lax_structural.reshape(valid, (size,) + (1,) * (util.ndim(values) - 1))
    values = where_(valid, values, fill)
  index = indexing.take(perm, ind)
  rank = lax.sub(reductions.cumsum(starts, dtype=dtypes.default_int_dtype()), np.array(1, dtypes.default_int_dtype()))
  inverse = creation.zeros(n, dtypes.default_int_dtype()).at[perm].set(rank)
  bounds = lax_numpy.nonzero(starts, size=size + 1, fill_value=n)[0]
  counts = lax.sub(_drop_first(bounds), _first(bounds, size))
  return values, index, inverse, counts, num_unique


def _unique_rows(rows, size, fill_value, equal_nan):
  """unique along axis 0 of `rows`: (values, index, inverse, counts, num_unique).

  `size` None means "as many as there are", which reads a concrete count.
  """
  n = shape(rows)[0]
  int_dtype = dtypes.default_int_dtype()
  if n == 0:
    if size and fill_value is None:
      raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                       "fill_value must be specified")
    values = rows
    if size:
      values = creation.full((size, *shape(rows)[1:]), fill_value, dtype_of(rows))
    empty = creation.zeros(0, int_dtype)
    return values, empty, empty, empty, np.array(0, int_dtype)
  ordered, starts, perm = _sort_rows(rows, equal_nan=equal_nan)
  if size is None:
    size = util.concrete_int(reductions.sum(starts),
                             "The error arose in jnp.unique(). " + _UNIQUE_SIZE_HINT)
    fill_value = None
  return _group(ordered, starts, perm, fill_value, size=size)


def unique(ar, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value=None,
           sorted: bool = True):  # noqa: A002 - JAX's name
  """The sorted unique elements of `ar` (or unique slices along `axis`).

  Without `size`, the number of results depends on the values, so `ar` must
  be concrete (not traced). Under `jit` or `vmap` pass a static `size`: the
  first `size` unique values are returned, padded with `fill_value` (default:
  the smallest value) when there are fewer.

  Args:
    ar: an array.
    return_index: also return the index of each value's first occurrence.
    return_inverse: also return, for each element, the index of its value in
      the result: of `ar`'s shape when axis is None, else of length
      ``ar.shape[axis]``.
    return_counts: also return the number of occurrences of each value.
    axis: the axis whose slices are compared; None flattens `ar` first.
    equal_nan: treat all NaNs as one value (complex NaNs always become
      ``nan+0j``).
    size: the static number of results.
    fill_value: the value of padding entries (only used with `size`).
    sorted: unused; results are always sorted, as in JAX.

  Returns:
    The unique values, or a tuple starting with them followed by the
    requested index, inverse and count arrays (default integer dtype). With
    `size`, padding slots get the index of the smallest element and a count
    of 0; the inverse is not affected by `size`.

  Raises:
    ConcretizationTypeError: `size` is None and `ar` is traced, or `size` is traced.
    TypeError: `ar` is not array-like, or `size` is not a non-negative integer.
    ValueError: `axis` is out of bounds, or `ar` is empty along the axis and
      `size` > 0 without `fill_value`.

  >>> import xjax.numpy as jnp
  >>> jnp.unique(jnp.array([3, 1, 3, 2]), return_counts=True)
  (Array([1, 2, 3], dtype=int32), Array([1, 1, 2], dtype=int32))
  >>> jnp.unique(jnp.array([3, 1, 3]), size=4, fill_value=-1)
  Array([ 1,  3, -1, -1], dtype=int32)

  Mirrors `jax.numpy.unique`.
  """
  del sorted  # Always sorted, as in JAX.
  arr = ensure_arraylike("unique", ar)
  if size is None:
    util.concrete_or_error(arr, "The error arose for the first argument of jnp.unique(). "
                           + _UNIQUE_SIZE_HINT)
  else:
    size = _static_size(size, "The error arose for the size argument of jnp.unique(). "
                        + _UNIQUE_SIZE_HINT)
  arr_shape = shape(arr)
  if axis is None:
    rows, dim = lax_structural.reshape(arr, (math.prod(arr_shape),)), 0
  else:
    dim = util.canonicalize_axis(axis, len(arr_shape))
    rows = lax_numpy.moveaxis(arr, dim, 0)
  values, index, inverse, counts, _ = _unique_rows(rows, size, fill_value, equal_nan)
  if axis is None:
    inverse = lax_structural.reshape(inverse, arr_shape)
  result = (lax_numpy.moveaxis(values, 0, dim),)
  result += (index,) * return_index + (inverse,) * return_inverse + (counts,) * return_counts
  return result[0] if len(result) == 1 else result


class _UniqueAllResult(NamedTuple):
  """The result of `unique_all`: values, first indices, inverse indices and counts."""
  values: object
  indices: object
  inverse_indices: object
  counts: object


class _UniqueCountsResult(NamedTuple):
  """The result of `unique_counts`: values and counts."""
  values: object
  counts: object


class _UniqueInverseResult(NamedTuple):
  """The result of `unique_inverse`: values and inverse indices (of the input's shape)."""
  values: object
  inverse_indices: object


def unique_all(x, /, *, size: int | None = None, fill_value=None) -> _UniqueAllResult:
  """The unique values of `x`, with first indices, inverse indices and counts.

  NaNs are distinct values here (``equal_nan=False``), as the Array API asks.

  Args:
    x: an array (flattened).
    size, fill_value: as in `unique`.

  Returns:
    A named tuple ``(values, indices, inverse_indices, counts)``;
    inverse_indices has x's shape.

  Raises:
    ConcretizationTypeError: `size` is None and `x` is traced.

  >>> import xjax.numpy as jnp
  >>> jnp.unique_all(jnp.array([2, 1, 2])).counts
  Array([1, 2], dtype=int32)

  Mirrors `jax.numpy.unique_all`.
  """
  x = ensure_arraylike("unique_all", x)
  values, indices, inverse, counts = unique(x, return_index=True, return_inverse=True,
                                            return_counts=True, equal_nan=False, size=size,
                                            fill_value=fill_value)
  return _UniqueAllResult(values, indices, inverse, counts)


def unique_counts(x, /, *, size: int | None = None, fill_value=None) -> _UniqueCountsResult:
  """The unique values of `x` and their counts (NaNs distinct).

  Args:
    x: an array (flattened).
    size, fill_value: as in `unique`.

  Returns:
    A named tuple ``(values, counts)``.

  Raises:
    ConcretizationTypeError: `size` is None and `x` is traced.

  >>> import xjax.numpy as jnp
  >>> jnp.unique_counts(jnp.array([2, 1, 2]))
  _UniqueCountsResult(values=Array([1, 2], dtype=int32), counts=Array([1, 2], dtype=int32))

  Mirrors `jax.numpy.unique_counts`.
  """
  x = ensure_arraylike("unique_counts", x)
  values, counts = unique(x, return_counts=True, equal_nan=False, size=size,
                          fill_value=fill_value)
  return _UniqueCountsResult(values, counts)


def unique_inverse(x, /, *, size: int | None = None, fill_value=None) -> _UniqueInverseResult:
  """The unique values of `x` and, per element, the index of its value (NaNs distinct).

  Args:
    x: an array.
    size, fill_value: as in `unique`.

  Returns:
    A named tuple ``(values, inverse_indices)``; inverse_indices has x's
    shape, and ``values[inverse_indices]`` rebuilds x.

  Raises:
    ConcretizationTypeError: `size` is None and `x` is traced.

  >>> import xjax.numpy as jnp
  >>> jnp.unique_inverse(jnp.array([2, 1, 2])).inverse_indices
  Array([1, 0, 1], dtype=int32)

  Mirrors `jax.numpy.unique_inverse`.
  """
  x = ensure_arraylike("unique_inverse", x)
  values, inverse = unique(x, return_inverse=True, equal_nan=False, size=size,
                           fill_value=fill_value)
  return _UniqueInverseResult(values, inverse)


def unique_values(x, /, *, size: int | None = None, fill_value=None):
  """The sorted unique values of `x` (NaNs distinct).

  Args:
    x: an array (flattened).
    size, fill_value: as in `unique`.

  Returns:
    A 1-D array of x's dtype.

  Raises:
    ConcretizationTypeError: `size` is None and `x` is traced.

  >>> import xjax.numpy as jnp
  >>> jnp.unique_values(jnp.array([2, 1, 2]))
  Array([1, 2], dtype=int32)

  Mirrors `jax.numpy.unique_values`.
  """
  x = ensure_arraylike("unique_values", x)
  return unique(x, equal_nan=False, size=size, fill_value=fill_value)


# ----------------------------------------------------------------------------
# Two-set operations


def _pad_results(vals, num_results, fill_value):
  """`vals` with slots at or past `num_results` replaced by `fill_value`.

  With no fill_value, JAX pads with the smallest result (0 if there is none).
  """
  size = shape(vals)[0]
  valid = ufuncs.less(_iota(size), num_results)
  if fill_value is not None:
    return where_(valid, vals, fill_value)
  if size == 0:
    return vals
  vals = where_(valid, vals, reductions.max(vals))
  return where_(valid, vals, reductions.min(vals))


def union1d(ar1, ar2, *, size: int | None = None, fill_value=None):
  """The sorted unique values that are in `ar1` or in `ar2` (both flattened).

  Args:
    ar1, ar2: arrays; their dtypes are promoted together.
    size, fill_value: as in `unique`.

  Returns:
    A 1-D array of the promoted dtype.

  Raises:
    ConcretizationTypeError: `size` is None and an input is traced, or
      `size` is traced.

  >>> import xjax.numpy as jnp
  >>> jnp.union1d(jnp.array([3, 1]), jnp.array([2, 3]))
  Array([1, 2, 3], dtype=int32)

  Mirrors `jax.numpy.union1d`.
  """
  ar1, ar2 = ensure_arraylike("union1d", ar1, ar2)
  if size is None:
    util.concrete_or_error(ar1, "The error arose in union1d()")
    util.concrete_or_error(ar2, "The error arose in union1d()")
  else:
    size = _static_size(size, "The error arose in union1d()")
  return unique(lax_numpy.concatenate((ar1, ar2), axis=None), size=size, fill_value=fill_value)


def _unique_padded(arr):
  """1-D `arr`'s unique values padded to len(arr), their first indices, and how many there are."""
  values, index, _, _, num_unique = _unique_rows(arr, shape(arr)[0], 0, True)
  return values, index, num_unique


def _concat_unique(arr1, arr2):
  """The unique values of arr1, then those of arr2, packed at the front of one array.

  Returns (packed, num_unique1, num_unique2, first_indices1, first_indices2);
  packed has length len(arr1) + len(arr2), and its tail past the unique
  values is padding.
  """
  u1, ind1, num1 = _unique_padded(arr1)
  u2, ind2, num2 = _unique_padded(arr2)
  packed = creation.zeros(shape(arr1)[0] + shape(arr2)[0], dtype_of(arr1))
  packed = lax_slicing.dynamic_update_slice(packed, u1, (np.array(0, dtypes.default_int_dtype()),))
  start2 = lax.convert_element_type(num1, dtypes.default_int_dtype())
  packed = lax_slicing.dynamic_update_slice(packed, u2, (start2,))
  return packed, num1, num2, ind1, ind2


@jit(static_argnames=("assume_unique", "return_indices", "size"))
def _intersect1d_size(arr1, arr2, fill_value, assume_unique: bool, return_indices: bool,
                      size: int):
  n1, n2 = shape(arr1)[0], shape(arr2)[0]
  if assume_unique:
    num1, num2 = n1, n2
    arr = lax_numpy.concatenate([arr1, arr2])
    aux, order = lax_sorting.sort([arr, _iota(n1 + n2)], is_stable=True, num_keys=1)
    valid = creation.ones(n1 + n2, bool)
  else:
    arr, num1, num2, ind1, ind2 = _concat_unique(arr1, arr2)
    valid = ufuncs.less(_iota(n1 + n2), lax.add(num1, num2))
    # Valid entries first, then by value; equal values stay in arr1-then-arr2 order.
    _, aux, order = lax_sorting.sort([ufuncs.logical_not(valid), arr, _iota(n1 + n2)],
                                     is_stable=True, num_keys=2)
  if n1 + n2:
    # A value is in both sets when it equals its sorted successor (each set holds it once).
    hit = ufuncs.logical_and(ufuncs.equal(_drop_first(aux), _first(aux, n1 + n2 - 1)),
                             _drop_first(valid))
    num_results = reductions.sum(hit)
    at = lax_numpy.nonzero(hit, size=size, fill_value=n1 + n2)[0]
    vals = _gather_fill(aux, at, 0)
  else:
    num_results = np.array(0, dtypes.default_int_dtype())
    at = creation.zeros(0, dtypes.default_int_dtype())
    vals = creation.zeros(size, dtype_of(aux))
  vals = _pad_results(vals, num_results, fill_value)
  if not return_indices:
    return vals
  padded = ufuncs.greater_equal(_iota(shape(at)[0]), num_results)
  idx1 = where_(padded, n1, _gather_fill(order, at, n1))
  idx2 = where_(padded, n2, lax.sub(_gather_fill(order, lax.add(at, np.array(1, dtype_of(at))), n2),
                                    lax.convert_element_type(num1, dtypes.default_int_dtype())))
  if not assume_unique:
    idx1, idx2 = _gather_fill(ind1, idx1, n1), _gather_fill(ind2, idx2, n2)
  return vals, idx1, idx2


def intersect1d(ar1, ar2, assume_unique: bool = False, return_indices: bool = False, *,
                size: int | None = None, fill_value=None):
  """The sorted unique values that are in both `ar1` and `ar2` (both flattened).

  Args:
    ar1, ar2: arrays; their dtypes are promoted together.
    assume_unique: promise that each input has no repeated values (faster;
      a broken promise gives wrong results).
    return_indices: also return, per result, the index of its first
      occurrence in the flattened ar1 and ar2.
    size: the static number of results (needed under `jit`).
    fill_value: the value of padding slots (default: the smallest result);
      padding index slots hold len(ar1) and len(ar2).

  Returns:
    The 1-D intersection, or ``(values, indices1, indices2)``.

  Raises:
    ConcretizationTypeError: `size` is None and an input is traced
      (NonConcreteBooleanIndexError with `assume_unique`).

  >>> import xjax.numpy as jnp
  >>> jnp.intersect1d(jnp.array([1, 2, 3]), jnp.array([3, 1, 5]))
  Array([1, 3], dtype=int32)

  Mirrors `jax.numpy.intersect1d`.
  """
  ar1, ar2 = ensure_arraylike("intersect1d", ar1, ar2)
  arr1, arr2 = util.promote_dtypes(ar1, ar2)
  arr1, arr2 = lax_numpy.ravel(arr1), lax_numpy.ravel(arr2)
  if size is not None:
    size = _static_size(size, "The error arose in intersect1d()")
    return _intersect1d_size(arr1, arr2, fill_value, assume_unique=assume_unique,
                             return_indices=return_indices, size=size)
  if not assume_unique:
    arr1, ind1 = unique(arr1, return_index=True)
    arr2, ind2 = unique(arr2, return_index=True)
    index_dtype = dtypes.default_int_dtype()
  else:
    index_dtype = np.dtype(np.int32 if shape(arr1)[0] + shape(arr2)[0] < 2 ** 31 else np.int64)
    index_dtype = dtypes.canonicalize_dtype(index_dtype)
  values, idx1, idx2, hit = _intersect1d_sorted(arr1, arr2, index_dtype=index_dtype)
  if not return_indices:
    return values[hit]
  idx1, idx2 = idx1[hit], idx2[hit]
  if not assume_unique:
    idx1, idx2 = indexing.take(ind1, idx1), indexing.take(ind2, idx2)
  return values[hit], idx1, idx2


@jit(static_argnames=("index_dtype",))
def _intersect1d_sorted(arr1, arr2, index_dtype):
  """For sorted concat(arr1, arr2) (each without repeats): each entry but the last, where it
  came from in arr1 and its successor in arr2, and whether it equals its successor."""
  n1, n = shape(arr1)[0], shape(arr1)[0] + shape(arr2)[0]
  if n == 0:
    empty = creation.zeros(0, index_dtype)
    return arr1, empty, empty, creation.zeros(0, bool)
  aux, order = lax_sorting.sort([lax_numpy.concatenate([arr1, arr2]), _iota(n, index_dtype)],
                                is_stable=True, num_keys=1)
  hit = ufuncs.equal(_drop_first(aux), _first(aux, n - 1))
  return (_first(aux, n - 1), _first(order, n - 1),
          lax.sub(_drop_first(order), np.array(n1, index_dtype)), hit)


def setdiff1d(ar1, ar2, assume_unique: bool = False, *, size: int | None = None,
              fill_value=None):
  """The sorted unique values of `ar1` that are not in `ar2` (both flattened).

  Args:
    ar1, ar2: arrays; the result has ar1's dtype (values are compared in
      the promoted dtype).
    assume_unique: promise that ar1 has no repeated values; it is then not
      deduplicated or sorted.
    size: the static number of results (needed under `jit`).
    fill_value: the value of padding slots (default 0).

  Returns:
    A 1-D array of ar1's dtype.

  Raises:
    ConcretizationTypeError: `size` is None and ar1 is traced, or `size` is traced.

  >>> import xjax.numpy as jnp
  >>> jnp.setdiff1d(jnp.array([4, 1, 2, 1]), jnp.array([2, 5]))
  Array([1, 4], dtype=int32)

  Mirrors `jax.numpy.setdiff1d`.
  """
  arr1, arr2 = ensure_arraylike("setdiff1d", ar1, ar2)
  arr1, arr2 = lax_numpy.ravel(arr1), lax_numpy.ravel(arr2)
  if size is None:
    util.concrete_or_error(arr1, "The error arose in setdiff1d()")
  else:
    size = _static_size(size, "The error arose in setdiff1d()")
  fill = lax.convert_element_type(creation.asarray(0 if fill_value is None else fill_value),
                                  dtype_of(arr1))
  if shape(arr1)[0] == 0:
    return creation.full(size or 0, fill, dtype_of(arr1))
  if size is None:
    if not assume_unique:
      arr1 = unique(arr1)
    return arr1[_in1d(arr1, arr2, invert=True, method="auto", assume_unique=assume_unique)]
  return _setdiff1d_size(arr1, arr2, fill, assume_unique=assume_unique, size=size)


@jit(static_argnames=("assume_unique", "size"))
def _setdiff1d_size(arr1, arr2, fill, assume_unique: bool, size: int):
  n1 = shape(arr1)[0]
  if assume_unique:
    keep = _in1d(arr1, arr2, invert=True, method="auto", assume_unique=True)
  else:
    arr1, _, num_unique = _unique_padded(arr1)
    keep = ufuncs.logical_and(_in1d(arr1, arr2, invert=True, method="auto", assume_unique=False),
                              ufuncs.less(_iota(n1), num_unique))
  picked = indexing.take(arr1, lax_numpy.nonzero(keep, size=size)[0]) if size else arr1[:0]
  return where_(ufuncs.less(_iota(size), reductions.sum(keep)), picked, fill)


def setxor1d(ar1, ar2, assume_unique: bool = False, *, size: int | None = None,
             fill_value=None):
  """The sorted unique values that are in exactly one of `ar1` and `ar2` (both flattened).

  Args:
    ar1, ar2: arrays; their dtypes are promoted together.
    assume_unique: promise that each input has no repeated values.
    size: the static number of results (needed under `jit`).
    fill_value: the value of padding slots (default: the smallest result).

  Returns:
    A 1-D array of the promoted dtype.

  Raises:
    ConcretizationTypeError: `size` is None and an input is traced
      (NonConcreteBooleanIndexError with `assume_unique`).

  >>> import xjax.numpy as jnp
  >>> jnp.setxor1d(jnp.array([1, 2, 3]), jnp.array([3, 4]))
  Array([1, 2, 4], dtype=int32)

  Mirrors `jax.numpy.setxor1d`.
  """
  ar1, ar2 = ensure_arraylike("setxor1d", ar1, ar2)
  arr1, arr2 = util.promote_dtypes(lax_numpy.ravel(ar1), lax_numpy.ravel(ar2))
  if size is not None:
    size = _static_size(size, "The error arose in setxor1d()")
    return _setxor1d_size(arr1, arr2, fill_value, assume_unique=assume_unique, size=size)
  if not assume_unique:
    arr1, arr2 = unique(arr1), unique(arr2)
  aux, keep = _setxor1d_sorted(arr1, arr2)
  return aux[keep]


@jit
def _setxor1d_sorted(arr1, arr2):
  """Sorted concat(arr1, arr2), and where it holds a value that occurs once."""
  aux = lax_numpy.concatenate([arr1, arr2])
  if shape(aux)[0] == 0:
    return aux, creation.zeros(0, bool)
  aux = lax_sorting.sort(aux, is_stable=True)
  return aux, _singletons(aux, shape(aux)[0])


def _singletons(aux, length):
  """Where sorted 1-D `aux` holds a value that occurs once among its first `length` entries."""
  n = shape(aux)[0]
  differs = ufuncs.not_equal(_drop_first(aux), _first(aux, n - 1))
  yes = creation.ones(1, bool)
  before = lax_numpy.concatenate([yes, differs])
  after = ufuncs.logical_or(lax_numpy.concatenate([differs, yes]),
                            ufuncs.equal(_iota(n), ufuncs.subtract(length, 1)))
  return ufuncs.logical_and(ufuncs.logical_and(before, after), ufuncs.less(_iota(n), length))


@jit(static_argnames=("assume_unique", "size"))
def _setxor1d_size(arr1, arr2, fill_value, assume_unique: bool, size: int):
  n = shape(arr1)[0] + shape(arr2)[0]
  if n == 0:
    return _pad_results(creation.zeros(size, dtype_of(arr1)), 0, fill_value)
  if assume_unique:
    aux, length = lax_sorting.sort(lax_numpy.concatenate([arr1, arr2])), n
  else:
    arr, num1, num2, _, _ = _concat_unique(arr1, arr2)
    length = lax.add(num1, num2)
    valid = ufuncs.less(_iota(n), length)
    _, aux = lax_sorting.sort([ufuncs.logical_not(valid), arr], is_stable=True, num_keys=2)
  keep = _singletons(aux, length)
  vals = _gather_fill(aux, lax_numpy.nonzero(keep, size=size, fill_value=n)[0], 0)
  return _pad_results(vals, reductions.sum(keep), fill_value)


# ----------------------------------------------------------------------------
# isin

_ISIN_METHODS = ("auto", "compare_all", "binary_search", "sort")


@jit(static_argnames=("invert", "method", "assume_unique"))
def _in1d(ar1, ar2, invert: bool, method: str, assume_unique: bool):
  """Whether each element of the flattened ar1 is in ar2 (negated with `invert`), 1-D."""
  arr1, arr2 = util.promote_dtypes(*ensure_arraylike("in1d", ar1, ar2))
  arr1, arr2 = lax_numpy.ravel(arr1), lax_numpy.ravel(arr2)
  n1, n2 = shape(arr1)[0], shape(arr2)[0]
  if n1 == 0 or n2 == 0:
    return creation.full(n1, invert, bool)
  if method in ("auto", "compare_all"):
    equal = ufuncs.equal(lax_structural.reshape(arr1, (n1, 1)),
                         lax_structural.reshape(arr2, (1, n2)))
    found = reductions.any(equal, axis=1)
  elif method == "binary_search":
    arr2 = lax_sorting.sort(arr2)
    found = ufuncs.equal(arr1, indexing.take(arr2, statistics.searchsorted(arr2, arr1),
                                             mode="clip"))
  elif method == "sort":
    found = _in1d_sort(arr1, arr2)
  else:
    raise ValueError(f"{method=} is not implemented; options are 'compare_all', "
                     "'binary_search', 'sort', and 'auto'")
  return ufuncs.logical_not(found) if invert else found


def _in1d_sort(arr1, arr2):
  """`in1d` by one sort of both arrays: ar2's entries sort before equal ar1 entries, so an ar1
  entry is found when the run of equal values it belongs to starts with an ar2 entry."""
  n1, n2 = shape(arr1)[0], shape(arr2)[0]
  n = n1 + n2
  from_arr1 = lax_numpy.concatenate([creation.ones(n1, bool), creation.zeros(n2, bool)])
  values = lax_numpy.concatenate([arr1, arr2])
  values, from_arr1, order = lax_sorting.sort([values, from_arr1, _iota(n)], is_stable=True,
                                              num_keys=2)
  iota = _iota(n)
  run_start = ufuncs.not_equal(_drop_first(values), _first(values, n - 1))
  run_start = lax_numpy.concatenate([creation.ones(1, bool), run_start])
  start_of_run = lax_reductions.cummax(where_(run_start, iota, np.array(0, dtype_of(iota))))
  found = ufuncs.logical_and(from_arr1,
                             ufuncs.logical_not(indexing.take(from_arr1, start_of_run)))
  # Back to ar1's order: sorted position p came from order[p]; ar2's entries (>= n1) drop.
  return creation.zeros(n1, bool).at[order].set(found, mode="drop")


def isin(element, test_elements, assume_unique: bool = False, invert: bool = False, *,
         method="auto"):
  """Whether each element of `element` occurs in `test_elements`.

  Args:
    element: an array.
    test_elements: an array (flattened); dtypes are promoted for comparison,
      and NaN is never found.
    assume_unique: promise that both inputs hold no repeated values (unused
      by the default method).
    invert: return the negation (``not in``).
    method: "auto" or "compare_all" (an all-pairs comparison, O(n*m) memory),
      "binary_search" (sort `test_elements` and search) or "sort" (one joint
      sort).

  Returns:
    A boolean array of element's shape.

  Raises:
    ValueError: an unknown `method` (when neither input is empty).

  >>> import xjax.numpy as jnp
  >>> jnp.isin(jnp.array([1, 2, 3]), jnp.array([3, 1]))
  Array([ True, False,  True], dtype=bool)

  Mirrors `jax.numpy.isin`.
  """
  element, test_elements = ensure_arraylike("isin", element, test_elements)
  result = _in1d(element, test_elements, invert=invert, method=method,
                 assume_unique=assume_unique)
  return lax_structural.reshape(result, shape(element))
