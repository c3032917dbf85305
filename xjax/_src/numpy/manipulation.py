"""Array manipulation: append, block, delete, insert, resize, rot90, unstack, dsplit, rollaxis.

Each function is composed from the shape functions of `lax_numpy`, from
indexing and (for unstack) from `lax.unstack`; none adds a primitive.
Static arguments (axes, shapes, rotation counts) are Python values, as in
JAX: the functions that JAX jit-compiles are jitted here with the same
static argument names, so passing a traced or unhashable value there gives
JAX's errors.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax import stacking as lax_stacking
from xjax._src.lax import structural as lax_structural
from xjax._src.numpy import creation
from xjax._src.numpy import lax_numpy
from xjax._src.numpy import reductions
from xjax._src.numpy import sorting
from xjax._src.numpy import ufuncs
from xjax._src.numpy import util
from xjax._src.numpy.util import canonicalize_axis, check_arraylike, ensure_arraylike

_asarray = ufuncs._asarray


def _along(axis: int, index):
  """The index tuple selecting `index` along `axis` and everything along the axes before it."""
  return (slice(None),) * axis + (index,)


# ----------------------------------------------------------------------------
# append and block


@jit(static_argnames=("axis",))
def append(arr, values, axis: int | None = None):
  """`values` joined to the end of `arr`, along `axis` (both flattened when None).

  Args:
    arr: an array.
    values: an array; with an `axis`, its shape must match `arr`'s off that
      axis.
    axis: a static axis, or None to flatten both arguments first.

  Returns:
    The joined array, of the promoted dtype.

  Raises:
    ValueError: `axis` is given and an argument is 0-d, or `axis` is out of
      range.
    TypeError: the shapes differ off `axis`, or in rank.

  >>> import xjax.numpy as jnp
  >>> jnp.append(jnp.array([1, 2]), jnp.array([[3, 4]]))
  Array([1, 2, 3, 4], dtype=int32)

  Mirrors `jax.numpy.append`.
  """
  if axis is None:
    return lax_numpy.concatenate([lax_numpy.ravel(arr), lax_numpy.ravel(values)], 0)
  return lax_numpy.concatenate([arr, values], axis=axis)


def _block(xs):
  """`xs` assembled, with the nesting depth of its lists (1 for a leaf)."""
  if isinstance(xs, tuple):
    raise ValueError(f"jax.numpy.block does not allow tuples, got {xs}")
  if not isinstance(xs, list):
    return creation.asarray(xs), 1
  if not xs:
    raise ValueError("jax.numpy.block does not allow empty list arguments")
  parts, depths = zip(*(_block(x) for x in xs), strict=True)
  depth = depths[0]
  if any(d != depth for d in depths[1:]):
    raise ValueError("Mismatched list depths in jax.numpy.block")
  # The innermost lists join along the last axis, the next level along the one
  # before, and so on; every part first gets leading unit axes up to a common rank.
  rank = max(depth, *(util.ndim(p) for p in parts))
  parts = [_expand_leading(p, rank) for p in parts]
  return lax_numpy.concatenate(parts, axis=-depth), depth + 1


def _expand_leading(x, rank: int):
  lead = rank - util.ndim(x)
  return lax_structural.expand_dims(x, tuple(range(lead))) if lead > 0 else x


@jit
def block(arrays):
  """An array assembled from nested lists of blocks.

  The innermost lists are joined along the last axis, the lists holding
  them along the second-to-last axis, and so on. Blocks get leading unit
  dimensions up to the rank of the result, which is the larger of the
  nesting depth and the largest block rank.

  Args:
    arrays: an array or scalar, or nested lists of them (every branch nested
      to the same depth).

  Returns:
    The assembled array, of the promoted dtype.

  Raises:
    ValueError: a tuple or an empty list appears, or the list depths differ.
    TypeError: the blocks do not fit together.

  >>> import xjax.numpy as jnp
  >>> jnp.block([[jnp.eye(2), jnp.zeros((2, 1))], [jnp.ones((1, 3))]])
  Array([[1., 0., 0.],
         [0., 1., 0.],
         [1., 1., 1.]], dtype=float32)

  Mirrors `jax.numpy.block`.
  """
  return _block(arrays)[0]


# ----------------------------------------------------------------------------
# delete and insert


def delete(arr, obj, axis: int | None = None, *, assume_unique_indices: bool = False):
  """`arr` without the entries `obj` along `axis` (flattened first when None).

  `obj` may be an integer, a slice, an integer array or a boolean mask. The
  output size depends on `obj`, so an array `obj` must be concrete, except
  with ``assume_unique_indices=True``: the integer indices are then trusted
  to be distinct and in range, and may be traced (under `jit` or `vmap`).

  Args:
    arr: an array.
    obj: the entries to delete: an int, a slice, an integer array (negative
      values count from the end) or a boolean array of length
      ``arr.shape[axis]``.
    axis: the axis to delete along; None flattens `arr` first.
    assume_unique_indices: promise that an integer `obj` holds no duplicates
      and no out-of-range values. The result is unspecified if it does.

  Returns:
    An array of `arr`'s dtype, shorter along `axis`.

  Raises:
    TypeError: `obj` is a list or tuple (pass an array).
    ValueError: an integer `obj` or `axis` is out of range, `obj` has neither
      integer nor boolean dtype, or a boolean `obj` has the wrong length.
    IndexError: an integer array `obj` holds an out-of-range index.
    ConcretizationTypeError: `obj` is traced and ``assume_unique_indices`` is
      False.

  >>> import xjax.numpy as jnp
  >>> jnp.delete(jnp.arange(6), jnp.array([0, 2]))
  Array([1, 3, 4, 5], dtype=int32)

  Mirrors `jax.numpy.delete`.
  """
  a = ensure_arraylike("delete", arr)
  if axis is None:
    a, axis = lax_numpy.ravel(a), 0
  axis = canonicalize_axis(axis, util.ndim(a))
  n = util.shape(a)[axis]
  try:
    index = operator.index(obj)
  except TypeError:
    pass
  else:  # one static position: the two slices around it
    index = canonicalize_axis(index, n)
    return lax_numpy.concatenate([a[_along(axis, slice(0, index))],
                                  a[_along(axis, slice(index + 1, None))]], axis=axis)
  if isinstance(obj, slice):
    keep = np.ones(n, dtype=bool)
    keep[obj] = False
    return a[_along(axis, np.flatnonzero(keep))]
  check_arraylike("delete", a, obj)
  obj = util._unwrap(obj)
  if assume_unique_indices and dtypes.issubdtype(util.dtype_of(obj), np.integer):
    return a[_along(axis, _kept_positions(obj, n))]
  obj = np.asarray(util.concrete_or_error(obj, "'obj' array argument of jnp.delete()"))
  if dtypes.issubdtype(obj.dtype, np.integer):
    keep = np.ones(n, dtype=bool)
    keep[obj] = False
  elif obj.dtype == np.bool_:
    if obj.shape != (n,):
      raise ValueError("np.delete(arr, obj): for boolean indices, obj must be one-dimensional "
                       "with length matching specified axis.")
    keep = ~obj
  else:
    raise ValueError(f"np.delete(arr, obj): got obj.dtype={obj.dtype}; must be integer or bool.")
  return a[_along(axis, np.flatnonzero(keep))]


def _kept_positions(obj, n: int):
  """The positions in [0, n) that survive deleting the distinct indices `obj` (maybe traced).

  With the deleted indices sorted as d_0 <= d_1 <= ..., set e_m = d_m - m;
  the j-th survivor is then j + #{m : e_m <= j}.
  """
  deleted = lax_numpy.ravel(_asarray(obj))
  deleted = ufuncs.clip(util.where_(deleted < 0, deleted + n, deleted), 0, n)
  k = util.shape(deleted)[0]
  if k == 0:
    return np.arange(n)
  shifted = sorting.sort(deleted) - creation.arange(k, dtype=util.dtype_of(deleted))
  survivors = n - k
  # bincount counts each e_m <= 0 at slot 0 and drops those >= survivors.
  counts = lax_numpy.bincount(shifted, length=max(survivors, 0))
  return creation.arange(max(survivors, 0)) + reductions.cumsum(counts)


def insert(arr, obj, values, axis: int | None = None):
  """`arr` with `values` inserted before the positions `obj` along `axis`.

  Args:
    arr: an array.
    obj: where to insert: an int, a slice, or a 1-D integer array (negative
      values count from the end; values beyond the ends are clipped). It may
      be traced. For a scalar `obj`, the first axis of `values` becomes
      `axis`; for an array `obj`, entry i of `obj` takes slice i of
      `values` along `axis`.
    values: the values to insert, cast to `arr`'s dtype; they broadcast to
      the inserted slots.
    axis: the static axis to insert along; None flattens `arr` first.

  Returns:
    An array of `arr`'s dtype (and weak type), longer along `axis`.

  Raises:
    TypeError: an argument is a list or tuple (pass an array).
    ValueError: `obj` has more than one dimension or a non-integer dtype, or
      `axis` is out of range, or `values` do not broadcast to the slots.
    ConcretizationTypeError: `axis` is traced.

  >>> import xjax.numpy as jnp
  >>> jnp.insert(jnp.arange(4), jnp.array([1, 3]), jnp.array([-1, -2]))
  Array([ 0, -1,  1,  2, -2,  3], dtype=int32)

  Mirrors `jax.numpy.insert`.
  """
  a, _, values = ensure_arraylike("insert", arr, 0 if isinstance(obj, slice) else obj, values)
  if axis is None:
    a, axis = lax_numpy.ravel(a), 0
  axis = util.concrete_or_error(axis, "axis argument of jnp.insert()")
  axis = canonicalize_axis(axis, util.ndim(a))
  n = util.shape(a)[axis]
  if isinstance(obj, slice):
    indices = np.arange(*obj.indices(n))
  else:
    indices = util._unwrap(obj)
  if util.ndim(indices) > 1:
    raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, or a scalar; "
                     f"got {obj}")
  if not dtypes.issubdtype(util.dtype_of(indices), np.integer):
    if math.prod(util.shape(indices)) == 0 and isinstance(indices, np.ndarray):
      indices = indices.astype(dtypes.default_int_dtype())
    else:
      raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
  values = creation.array(values, ndmin=util.ndim(a), dtype=util.dtype_of(a), copy=False)
  if math.prod(util.shape(indices)) == 1:
    if util.ndim(indices) == 0:  # a scalar position: values' first axis is `axis`
      values = lax_numpy.moveaxis(values, 0, axis)
    indices = lax_numpy.broadcast_to(lax_numpy.ravel(_asarray(indices)),
                                     (util.shape(values)[axis],))
  n_insert = util.broadcast_shapes(util.shape(indices), (util.shape(values)[axis],))[0]
  indices = _asarray(indices)
  indices = ufuncs.clip(util.where_(indices < 0, indices + n, indices), 0, n)
  # An inserted value lands after the values inserted before it (ties keep their
  # order); an original entry i moves right by the number of insertions at or before i.
  rank = sorting.argsort(sorting.argsort(indices))
  values_at = indices + rank.astype(util.dtype_of(indices))
  counts = lax_numpy.bincount(indices, length=n + 1)[:n]
  arr_at = creation.arange(n, dtype=util.dtype_of(counts)) + reductions.cumsum(counts)
  out_shape = list(util.shape(a))
  out_shape[axis] += n_insert
  out = creation.zeros_like(a, shape=tuple(out_shape))
  out = out.at[_along(axis, values_at)].set(values)
  return out.at[_along(axis, arr_at)].set(a)


# ----------------------------------------------------------------------------
# resize, rot90, unstack, dsplit, rollaxis


@jit(static_argnames=("new_shape",))
def resize(a, new_shape):
  """`a` flattened, repeated as often as needed, and cut to `new_shape`.

  Args:
    a: an array or scalar.
    new_shape: a static int or tuple of ints.

  Returns:
    An array of shape `new_shape` and `a`'s dtype; zeros when `a` is empty.

  Raises:
    ValueError: an element of `new_shape` is negative, or `new_shape` is not
      hashable (a list: pass a tuple).
    TypeError: an element of `new_shape` is not an integer.

  >>> import xjax.numpy as jnp
  >>> jnp.resize(jnp.array([1, 2, 3]), (2, 4))
  Array([[1, 2, 3, 1],
         [2, 3, 1, 2]], dtype=int32)

  Mirrors `jax.numpy.resize`.
  """
  check_arraylike("resize", a)
  new_shape = lax_numpy._index_tuple(new_shape)
  if any(d < 0 for d in new_shape):
    raise ValueError("all elements of `new_shape` must be non-negative")
  flat = lax_numpy.ravel(a)
  size, new_size = util.shape(flat)[0], math.prod(new_shape)
  if size == 0 or new_size == 0:
    return creation.zeros_like(flat, shape=new_shape)
  repeats = -(-new_size // size)
  return lax_numpy.reshape(lax_numpy.tile(flat, repeats)[:new_size], new_shape)


@jit(static_argnames=("k", "axes"))
def rot90(m, k: int = 1, axes: tuple[int, int] = (0, 1)):
  """`m` rotated by 90 degrees `k` times, in the plane of `axes`, from the first towards the second.

  Args:
    m: an array of at least two dimensions.
    k: the static number of quarter turns (negative turns the other way).
    axes: two distinct static axes spanning the plane of rotation.

  Returns:
    The rotated array.

  Raises:
    ValueError: `m` has fewer than two dimensions, `axes` are equal, out of
      range or not two, or `axes` is a list (unhashable: pass a tuple).

  >>> import xjax.numpy as jnp
  >>> jnp.rot90(jnp.array([[1, 2], [3, 4]]))
  Array([[2, 4],
         [1, 3]], dtype=int32)

  Mirrors `jax.numpy.rot90`.
  """
  m = ensure_arraylike("rot90", m)
  nd = util.ndim(m)
  if nd < 2:
    raise ValueError("rot90 requires its first argument to have ndim at least two, but got "
                     f"first argument of shape {util.shape(m)}, which has ndim {nd}")
  ax1, ax2 = axes
  ax1, ax2 = canonicalize_axis(ax1, nd), canonicalize_axis(ax2, nd)
  if ax1 == ax2:
    raise ValueError("Axes must be different")
  k = k % 4
  if k == 0:
    return _asarray(m)
  if k == 2:
    return lax_numpy.flip(lax_numpy.flip(m, ax1), ax2)
  perm = list(range(nd))
  perm[ax1], perm[ax2] = ax2, ax1
  if k == 1:  # reverse the second axis, then swap
    return lax_numpy.transpose(lax_numpy.flip(m, ax2), perm)
  return lax_numpy.flip(lax_numpy.transpose(m, perm), ax2)


@jit(static_argnames=("axis",), inline=True)
def unstack(x, /, *, axis: int = 0):
  """The slices of `x` along `axis`, as a tuple.

  Args:
    x: an array of at least one dimension.
    axis: the static axis to unstack.

  Returns:
    A tuple of ``x.shape[axis]`` arrays, each of `x`'s shape without `axis`.

  Raises:
    ValueError: `axis` is out of range (always for a 0-d `x`).

  >>> import xjax.numpy as jnp
  >>> jnp.unstack(jnp.array([[1, 2], [3, 4]]), axis=1)
  (Array([1, 3], dtype=int32), Array([2, 4], dtype=int32))

  Mirrors `jax.numpy.unstack`.
  """
  return lax_stacking.unstack(ensure_arraylike("unstack", x), axis=axis)


def dsplit(ary, indices_or_sections):
  """`ary` split along its third axis into equal sections, or at the given indices.

  Args:
    ary: an array of at least three dimensions.
    indices_or_sections: the number of equal sections, or the static split
      points.

  Returns:
    A list of arrays.

  Raises:
    IndexError: `ary` has fewer than three dimensions.
    ValueError: the sections are not equal.

  >>> import xjax.numpy as jnp
  >>> [p.shape for p in jnp.dsplit(jnp.zeros((1, 2, 6)), [1, 4])]
  [(1, 2, 1), (1, 2, 3), (1, 2, 2)]

  Mirrors `jax.numpy.dsplit`.
  """
  ary = ensure_arraylike("dsplit", ary)
  if util.ndim(ary) < 3:
    raise IndexError("tuple index out of range: jnp.dsplit needs an array of at least 3 "
                     f"dimensions, got shape {util.shape(ary)}")
  return lax_numpy.split(ary, indices_or_sections, axis=2)


@jit(static_argnames=("axis", "start"))
def rollaxis(a, axis: int, start: int = 0):
  """`a` with axis `axis` moved to sit before the axis now at position `start`.

  NumPy's older form of `moveaxis`: the axis moves to position `start` when
  `start` <= `axis`, and to ``start - 1`` when `start` > `axis` (so that it
  lands just before the original axis `start`).

  Args:
    a: an array.
    axis: the static axis to move.
    start: the static position in [-ndim, ndim] before which it goes.

  Returns:
    The array with its axes permuted.

  Raises:
    ValueError: `axis` or `start` is out of range.
    TypeError: `start` is not an integer.

  >>> import xjax.numpy as jnp
  >>> jnp.rollaxis(jnp.zeros((2, 3, 4)), 2, 1).shape
  (2, 4, 3)

  Mirrors `jax.numpy.rollaxis`.
  """
  a = ensure_arraylike("rollaxis", a)
  start = operator.index(start)
  nd = util.ndim(a)
  axis = canonicalize_axis(axis, nd)
  if not -nd <= start <= nd:
    raise ValueError(f"{start=} must satisfy {-nd}<=start<={nd}")
  start = start + nd if start < 0 else start
  if start > axis:
    start -= 1
  return lax_numpy.moveaxis(a, axis, start)
