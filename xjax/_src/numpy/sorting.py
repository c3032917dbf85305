"""Sorting: sort, argsort, lexsort, partition over `lax.sort` (non-inline jits, as in JAX)."""
from __future__ import annotations

import operator

import numpy as np

from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax import elementwise as lax_elementwise
from xjax._src.lax import slicing as lax_slicing
from xjax._src.lax import sorting as lax_sorting
from xjax._src.lax import structural as lax_structural
from xjax._src.numpy import util


def _prepare(name, a, axis, kind, order):
  arr = util.ensure_arraylike(name, a)
  if kind is not None:
    raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or "
                    "stable=False to specify sort stability.")
  if order is not None:
    raise TypeError(f"'order' argument to {name} is not supported.")
  if axis is None:
    arr = lax_structural.reshape(arr, (util.aval_of(arr).size,))
    axis = 0
  return arr, util.canonicalize_axis(axis, util.ndim(arr))


@jit(static_argnames=("axis", "kind", "order", "stable", "descending"))
def sort(a, axis: int | None = -1, *, kind=None, order=None, stable: bool = True,
         descending: bool = False):
  """`a` sorted along `axis` (flattened when None).

  NaNs sort to the end; complex values sort by real, then imaginary part.

  Args:
    a: an array.
    axis: the axis to sort along.
    kind, order: unsupported (use `stable`).
    stable: keep the order of equal elements.
    descending: sort from largest to smallest.

  Returns:
    The sorted array.

  Mirrors `jax.numpy.sort`.
  """
  arr, dim = _prepare("sort", a, axis, kind, order)
  result = lax_sorting.sort(arr, dimension=dim, is_stable=stable)
  return lax_structural.rev(result, (dim,)) if descending else result


@jit(static_argnames=("axis", "kind", "order", "stable", "descending", "dtype"))
def argsort(a, axis: int | None = -1, *, kind=None, order=None, stable: bool = True,
            descending: bool = False, dtype=None):
  """The indices that sort `a` along `axis` (of the flattened array when None).

  Args:
    a: an array.
    axis: the axis to sort along.
    kind, order: unsupported (use `stable`).
    stable: equal elements keep their order.
    descending: sort from largest to smallest.
    dtype: the index dtype (default: the default integer dtype).

  Returns:
    An integer array of a's shape (1-D when axis is None).

  Mirrors `jax.numpy.argsort`.
  """
  arr, dim = _prepare("argsort", a, axis, kind, order)
  if dtype is not None:
    idx_dtype = dtypes.check_user_dtype_supported(dtype, "argsort")
  elif util.shape(arr)[dim] >= 2 ** 31:
    idx_dtype = np.dtype(np.int64)
  else:
    idx_dtype = dtypes.default_int_dtype()
  iota = lax_structural.broadcasted_iota(idx_dtype, util.shape(arr), dim)
  if descending and stable:
    # Reversed first, so that equal elements keep their order after the final reversal.
    arr = lax_structural.rev(arr, (dim,))
    iota = lax_structural.rev(iota, (dim,))
  _, indices = lax_sorting.sort_key_val(arr, iota, dimension=dim, is_stable=stable)
  return lax_structural.rev(indices, (dim,)) if descending else indices


@jit(static_argnames=("axis",))
def lexsort(keys, axis: int = -1):
  """The indices that sort by several keys, the *last* key primary (a stable sort).

  Args:
    keys: a sequence of arrays of one shape (or a 2-D array, one key per row).
    axis: the axis to sort along.

  Returns:
    An integer array of the keys' shape.

  Raises:
    TypeError: no keys.
    ValueError: keys of different shapes.

  Mirrors `jax.numpy.lexsort`.
  """
  key_list = [util.ensure_arraylike("lexsort", k) for k in (
      keys if isinstance(keys, (tuple, list)) else list(keys))]
  if not key_list:
    raise TypeError("need sequence of keys with len > 0 in lexsort")
  if len({util.shape(k) for k in key_list}) > 1:
    raise ValueError("all keys need to be the same shape")
  shape = util.shape(key_list[0])
  if not shape:
    return lax_structural.full((), 0, dtypes.default_int_dtype())
  dim = util.canonicalize_axis(axis, len(shape))
  iota = lax_structural.broadcasted_iota(dtypes.default_int_dtype(), shape, dim)
  *_, indices = lax_sorting.sort([*reversed(key_list), iota], dimension=dim, is_stable=True,
                                 num_keys=len(key_list))
  return indices


@jit
def sort_complex(a):
  """`a` sorted along its last axis, as a complex array (mirrors `jax.numpy.sort_complex`).

  Args:
    a: an array.

  Returns:
    The sorted values, converted to the complex type matching `a`'s precision.
  """
  a = util.ensure_arraylike("sort_complex", a)
  out = lax_sorting.sort(a, dimension=-1)
  complex_dtype = dtypes.to_complex_dtype(util.dtype_of(out))
  return lax_elementwise.convert_element_type(out, complex_dtype)


def _partition_prepare(name, a, kth, axis):
  arr = util.ensure_arraylike(name, a)
  kth = operator.index(kth)
  dim = util.canonicalize_axis(axis, util.ndim(arr))
  n = util.shape(arr)[dim]
  if not -n <= kth < n:
    raise ValueError(f"kth={kth} is out of bounds for an axis of size {n} in {name}")
  if kth < 0:
    kth += n
  return arr, kth, dim, n


@jit(static_argnames=("kth", "axis"))
def partition(a, kth: int, axis: int = -1):
  """A copy of `a` whose `kth` element along `axis` is where a full sort would put it.

  Elements before it are no larger, elements after it no smaller (NaN counts as
  largest). As in JAX, the first part is in ascending and the rest in
  descending order.

  Args:
    a: an array.
    kth: the index to partition at (an int; negative counts from the end).
    axis: the axis along which to partition.

  Returns:
    An array of `a`'s shape and dtype.

  Raises:
    TypeError: `kth` is not an integer.
    ValueError: `kth` is out of bounds for the axis.

  Mirrors `jax.numpy.partition`.
  """
  arr, kth, dim, n = _partition_prepare("partition", a, kth, axis)
  ordered = lax_sorting.sort(arr, dimension=dim)
  bottom = lax_slicing.slice_in_dim(ordered, 0, kth + 1, axis=dim)
  top = lax_structural.rev(lax_slicing.slice_in_dim(ordered, kth + 1, n, axis=dim), (dim,))
  return lax_structural.concatenate([bottom, top], dim)


@jit(static_argnames=("kth", "axis"))
def argpartition(a, kth: int, axis: int = -1):
  """The indices that partition `a` at `kth` along `axis` (see `partition`).

  Args:
    a: an array.
    kth: the index to partition at (an int; negative counts from the end).
    axis: the axis along which to partition.

  Returns:
    An integer array of `a`'s shape: `take_along_axis(a, result, axis)` is
    partitioned.

  Raises:
    TypeError: `kth` is not an integer.
    ValueError: `kth` is out of bounds for the axis.

  Mirrors `jax.numpy.argpartition`.
  """
  arr, kth, dim, n = _partition_prepare("argpartition", a, kth, axis)
  order = argsort(arr, axis=dim)
  bottom = lax_slicing.slice_in_dim(order, 0, kth + 1, axis=dim)
  top = lax_structural.rev(lax_slicing.slice_in_dim(order, kth + 1, n, axis=dim), (dim,))
  return lax_structural.concatenate([bottom, top], dim)
