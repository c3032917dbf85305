"""Shape manipulation and assorted jnp functions over lax.

reshape, ravel, transpose and their kin, squeeze/expand_dims/atleast_*,
broadcasting, joining (concatenate, stack, the *stack family) and splitting,
tile, repeat, flip, pad, where, nonzero, the closeness tests, and the small
shape and dtype queries (`shape`, `ndim`, `size`, `result_type`, ...).
"""
from __future__ import annotations

import builtins
import math
import operator
import warnings

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src.array import Array
from xjax._src.jit import jit
from xjax._src.lax import elementwise as lax
from xjax._src.lax import slicing as lax_slicing
from xjax._src.lax import stacking as lax_stacking
from xjax._src.lax import structural as lax_structural
from xjax._src.numpy import creation
from xjax._src.numpy import indexing
from xjax._src.numpy import reductions
from xjax._src.numpy import ufuncs
from xjax._src.numpy import util
from xjax._src.random import prng  # typed keys in stack/concatenate
from xjax._src.numpy.util import (canonicalize_axis, check_arraylike, check_no_out, dtype_of,
                                  ensure_arraylike, where_)

_asarray = ufuncs._asarray


def _index_tuple(axis) -> tuple[int, ...]:
  try:
    return (operator.index(axis),)
  except TypeError:
    return tuple(operator.index(a) for a in axis)


# ----------------------------------------------------------------------------
# Queries


def _warn_not_arraylike(name: str, a) -> None:
  # As JAX (since 2025-02): lists and other non-arrays still work here, with a warning.
  if not util.is_arraylike(a):
    warnings.warn(f"{name} requires ndarray or scalar arguments, got {type(a)} at position 0. "
                  "In a future JAX release this will be an error.", DeprecationWarning,
                  stacklevel=3)


def shape(a) -> tuple[int, ...]:
  """The shape of an array-like, or of any object with a ``shape`` attribute, such as a
  SciPy sparse matrix, which is returned as given. Other inputs (lists) warn
  (DeprecationWarning), as in JAX (mirrors `jax.numpy.shape`)."""
  if hasattr(a, "shape"):
    return a.shape
  _warn_not_arraylike("shape", a)
  return np.shape(util._unwrap(a))


def ndim(a) -> int:
  """The number of dimensions of an array-like, or of any object with an ``ndim``
  attribute; other inputs (lists) warn (DeprecationWarning), as in JAX (mirrors
  `jax.numpy.ndim`)."""
  if hasattr(a, "ndim"):
    return a.ndim
  _warn_not_arraylike("ndim", a)
  return np.ndim(util._unwrap(a))


def size(a, axis: int | tuple[int, ...] | None = None) -> int:
  """The number of elements of an array-like, or along `axis` (an int or a tuple of
  distinct axes; ValueError "repeated axis" otherwise). Non-arrays (lists) warn
  (DeprecationWarning), as in JAX (mirrors `jax.numpy.size`)."""
  _warn_not_arraylike("size", a)
  if axis is None and hasattr(a, "size"):
    return a.size
  s = shape(a)
  if axis is None:
    return math.prod(s)
  axes = tuple(canonicalize_axis(ax, len(s))
               for ax in (axis if isinstance(axis, (tuple, list)) else (axis,)))
  if len(set(axes)) != len(axes):
    raise ValueError(f"repeated axis: {axis}")
  return math.prod(s[i] for i in axes)


def issubdtype(arg1, arg2) -> bool:
  """Whether dtype `arg1` is a sub-dtype of `arg2` in NumPy's hierarchy, with JAX's dtypes
  (bfloat16, the float8s, int4, key dtypes) placed in it.

  Args:
    arg1: a dtype or dtype-like (a scalar type, a string).
    arg2: a dtype, dtype-like, or an abstract NumPy type such as ``np.floating``.

  Returns:
    A bool.

  Mirrors `jax.numpy.issubdtype`.
  """
  return dtypes.issubdtype(arg1, arg2)


def result_type(*args):
  """The dtype of combining `args` under JAX's promotion rules (mirrors `jax.numpy.result_type`)."""
  return dtypes.result_type(*args)


def promote_types(a, b) -> np.dtype:
  """The promoted dtype of two dtypes (mirrors `jax.numpy.promote_types`)."""
  return dtypes.promote_types(a, b)


def can_cast(from_, to, casting: str = "safe") -> bool:
  """NumPy's `can_cast` on the dtype of `from_` (mirrors `jax.numpy.can_cast`)."""
  if isinstance(from_, (Array, core.Tracer)):
    from_ = from_.dtype
  return bool(np.can_cast(np.dtype(from_), np.dtype(to), casting=casting))


def iscomplexobj(x) -> bool:
  """Whether `x` has a complex dtype (mirrors `jax.numpy.iscomplexobj`)."""
  if x is None:
    return False
  try:
    typ = x.dtype.type
  except AttributeError:
    typ = dtype_of(creation.asarray(x)).type  # lists may hold tracers
  return issubclass(typ, np.complexfloating)


def isscalar(element) -> bool:
  """Whether `element` is a scalar: a Python/NumPy scalar or a 0-d array (mirrors
  `jax.numpy.isscalar`)."""
  if isinstance(element, (np.ndarray, Array, core.Tracer)):
    return util.ndim(element) == 0
  return isinstance(element, (np.generic, bool, int, float, complex))


# ----------------------------------------------------------------------------
# Reshaping and transposing


def _compute_newshape(a, newshape) -> tuple[int, ...]:
  """Resolves a -1 in `newshape`, with JAX's errors for impossible shapes."""
  orig = newshape
  try:
    iter(newshape)
  except TypeError:
    newshape = [newshape]
  newshape = core.canonicalize_shape(newshape)
  arr_shape = util.shape(a)
  arr_size = math.prod(arr_shape)
  neg1s = [i for i, d in enumerate(newshape) if d == -1]
  if len(neg1s) > 1:
    raise TypeError(f"can only specify one unknown axis size with a `-1` value, got {orig}")
  if neg1s:
    (i,) = neg1s
    others = math.prod(newshape[:i] + newshape[i + 1:])
    if others == 0 or arr_size % others:
      raise TypeError(f"cannot reshape array of shape {arr_shape} (size {arr_size}) into shape "
                      f"{orig} because the product of specified axis sizes ({others}) does not "
                      f"evenly divide {arr_size}")
    return (*newshape[:i], arr_size // others, *newshape[i + 1:])
  if arr_size != math.prod(newshape):
    raise TypeError(f"cannot reshape array of shape {arr_shape} (size {arr_size}) into shape "
                    f"{orig} (size {math.prod(newshape)})")
  return newshape


def reshape(a, shape=None, order: str = "C", *, copy: bool | None = None, out_sharding=None):
  """`a` with a new shape holding the same elements (one dimension may be -1).

  Args:
    a: an array or scalar.
    shape: an int or a sequence of ints; one may be -1 (inferred).
    order: "C" (row-major) or "F" (column-major).
    copy: accepted for NumPy compatibility (arrays are immutable).
    out_sharding: None, or a NamedSharding or PartitionSpec (over the context
      mesh) the result is typed and laid out as (see `lax.reshape`).

  Returns:
    The reshaped array.

  Raises:
    TypeError: the sizes differ, or more than one -1 (JAX's messages).

  >>> import xjax.numpy as jnp
  >>> jnp.reshape(jnp.arange(6), (2, -1))
  Array([[0, 1, 2],
         [3, 4, 5]], dtype=int32)

  Mirrors `jax.numpy.reshape`.
  """
  a = ensure_arraylike("reshape", a)
  if shape is None:
    raise TypeError("reshape() missing required argument 'shape'")
  return _reshape(a, shape, order=order, out_sharding=out_sharding)


def _reshape(a, *args, order: str = "C", out_sharding=None):
  newshape = _compute_newshape(a, args[0] if len(args) == 1 else args)
  if order == "C":
    return lax_structural.reshape(a, newshape, out_sharding=out_sharding)
  if out_sharding is not None:
    raise NotImplementedError("jnp.reshape: out_sharding with order='F' is not supported by "
                              "xjax.")
  if order == "F":
    dims = list(range(util.ndim(a)))[::-1]
    out = lax_structural.reshape(a, newshape[::-1], dims)
    return lax_structural.transpose(out, tuple(range(len(newshape)))[::-1])
  if order == "A":
    raise NotImplementedError("np.reshape order=A is not implemented.")
  raise ValueError(f"Unexpected value for 'order' argument: {order}.")


@jit(static_argnames=("order",), inline=True)
def ravel(a, order: str = "C"):
  """`a` flattened to one dimension (mirrors `jax.numpy.ravel`)."""
  a = ensure_arraylike("ravel", a)
  if order == "K":
    raise NotImplementedError("Ravel not implemented for order='K'.")
  return _reshape(a, (math.prod(util.shape(a)),), order=order)


def transpose(a, axes=None):
  """`a` with its axes permuted (reversed when `axes` is None).

  Args:
    a: an array.
    axes: a permutation of the axes (negative values allowed).

  Returns:
    The transposed array.

  Raises:
    TypeError: `axes` is not a permutation.

  Mirrors `jax.numpy.transpose`.
  """
  a = ensure_arraylike("transpose", a)
  nd = util.ndim(a)
  axes = list(range(nd))[::-1] if axes is None else axes
  return lax_structural.transpose(a, tuple(canonicalize_axis(i, nd) for i in axes))


def permute_dims(a, /, axes):
  """The array API's `transpose` (mirrors `jax.numpy.permute_dims`)."""
  return transpose(a, axes)


def matrix_transpose(x, /):
  """`x` with its last two axes swapped (mirrors `jax.numpy.matrix_transpose`)."""
  x = ensure_arraylike("matrix_transpose", x)
  nd = util.ndim(x)
  if nd < 2:
    raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got ndim={nd}")
  return lax_structural.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


@jit(static_argnames=("axis1", "axis2"), inline=True)
def swapaxes(a, axis1: int, axis2: int):
  """`a` with axes `axis1` and `axis2` exchanged (mirrors `jax.numpy.swapaxes`)."""
  a = ensure_arraylike("swapaxes", a)
  perm = list(range(util.ndim(a)))
  perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
  return lax_structural.transpose(a, tuple(perm))


def moveaxis(a, source, destination):
  """`a` with axes `source` moved to positions `destination`, the others keeping their order.

  Mirrors `jax.numpy.moveaxis`.
  """
  a = ensure_arraylike("moveaxis", a)
  return _moveaxis(a, _index_tuple(source), _index_tuple(destination))


@jit(static_argnames=("source", "destination"), inline=True)
def _moveaxis(a, source, destination):
  nd = util.ndim(a)
  source = tuple(canonicalize_axis(i, nd) for i in source)
  destination = tuple(canonicalize_axis(i, nd) for i in destination)
  if len(source) != len(destination):
    raise ValueError(f"Inconsistent number of elements: {len(source)} vs {len(destination)}")
  perm = [i for i in range(nd) if i not in source]
  for dest, src in sorted(zip(destination, source)):
    perm.insert(dest, src)
  return lax_structural.transpose(a, tuple(perm))


def squeeze(a, axis=None):
  """`a` without the size-1 axes `axis` (all size-1 axes when None).

  Raises:
    ValueError: a listed axis does not have size 1.

  Mirrors `jax.numpy.squeeze`.
  """
  a = ensure_arraylike("squeeze", a)
  return _squeeze(a, None if axis is None else _index_tuple(axis))


@jit(static_argnames=("axis",), inline=True)
def _squeeze(a, axis):
  if axis is None:
    axis = tuple(i for i, d in enumerate(util.shape(a)) if d == 1)
  return lax_structural.squeeze(a, axis)


def expand_dims(a, axis):
  """`a` with new size-1 axes at the positions `axis` of the result.

  Mirrors `jax.numpy.expand_dims`.
  """
  a = ensure_arraylike("expand_dims", a)
  return lax_structural.expand_dims(a, _index_tuple(axis))


def _atleast(name, nd, dims_for):
  def fn(*arys):
    check_arraylike(name, *arys)
    outs = []
    for x in arys:
      x = _asarray(util._unwrap(x))
      k = util.ndim(x)
      outs.append(lax_structural.expand_dims(x, dims_for[k]) if k < nd else x)
    return outs[0] if len(outs) == 1 else outs
  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = (f"Each argument viewed with at least {nd} dimensions (a list for several "
                f"arguments).\n\n  Mirrors `jax.numpy.{name}`.\n  ")
  return jit(fn)


atleast_1d = _atleast("atleast_1d", 1, {0: (0,)})
atleast_2d = _atleast("atleast_2d", 2, {0: (0, 1), 1: (0,)})
atleast_3d = _atleast("atleast_3d", 3, {0: (0, 1, 2), 1: (0, 2), 2: (2,)})


# ----------------------------------------------------------------------------
# Broadcasting


def broadcast_to(array, shape):
  """`array` broadcast to `shape` by NumPy's rules.

  Raises:
    TypeError: `shape` is not a sequence of concrete integers, or has a
      negative element (broadcast_in_dim's message, as in JAX).
    ValueError: the shapes are incompatible (JAX's "Incompatible types for
      broadcasting" message).

  Mirrors `jax.numpy.broadcast_to`.
  """
  return _asarray(util.broadcast_to(array, shape))


def broadcast_arrays(*args):
  """The arguments broadcast to their common shape (mirrors `jax.numpy.broadcast_arrays`)."""
  check_arraylike("broadcast_arrays", *args)
  return [_asarray(x) for x in util.broadcast_arrays_(*(util._unwrap(a) for a in args))]


broadcast_shapes = util.broadcast_shapes


# ----------------------------------------------------------------------------
# Joining and splitting


def _arrays_tuple(name, arrays):
  if isinstance(arrays, (np.ndarray, Array, core.Tracer)):
    return tuple(arrays[i] for i in range(util.shape(arrays)[0]))
  check_arraylike(name, *arrays)
  return tuple(util._unwrap(a) for a in arrays)


def _are_keys(arrays) -> bool:
  return isinstance(arrays, (list, tuple)) and any(map(prng.is_key_array, arrays))


def concatenate(arrays, axis: int | None = 0, dtype=None):
  """The arrays joined along an existing axis (flattened first when `axis` is None).

  Args:
    arrays: a sequence of arrays (or an array, split along its first axis).
    axis: the axis to join along.
    dtype: the result dtype (default: the promoted dtype).

  Returns:
    The joined array.

  Raises:
    ValueError: no arrays, or 0-d arrays.
    TypeError: the shapes differ off the joined axis.

  Mirrors `jax.numpy.concatenate`.
  """
  if _are_keys(arrays):  # typed PRNG keys (xjax.random)
    return prng.concatenate_keys(arrays, axis)
  if isinstance(arrays, (np.ndarray, Array, core.Tracer)):
    return _concatenate_array(arrays, axis, dtype)
  arrays = _arrays_tuple("concatenate", arrays)
  if not arrays:
    raise ValueError("Need at least one array to concatenate.")
  if axis is None:
    return concatenate([ravel(a) for a in arrays], axis=0, dtype=dtype)
  if util.ndim(arrays[0]) == 0:
    raise ValueError("Zero-dimensional arrays cannot be concatenated.")
  axis = canonicalize_axis(axis, util.ndim(arrays[0]))
  if dtype is None:
    arrays = util.promote_dtypes(*arrays)
  else:
    arrays = [creation.asarray(a, dtype=dtype) for a in arrays]
  return _asarray(lax_structural.concatenate(list(arrays), axis))


def _concatenate_array(arr, axis, dtype):
  """An array's leading-axis slices joined along `axis`: one reshape, as JAX does it."""
  arr = creation.asarray(arr, dtype=dtype)
  shape = util.shape(arr)
  if not shape or shape[0] == 0:
    raise ValueError("Need at least one array to concatenate.")
  if axis is None:
    return lax_structural.reshape(arr, (math.prod(shape),))
  if len(shape) == 1:
    raise ValueError("Zero-dimensional arrays cannot be concatenated.")
  axis = canonicalize_axis(axis, len(shape) - 1)
  # Move the leading axis next to `axis`, then merge the two.
  new_sizes = shape[1:axis + 1] + (shape[0] * shape[axis + 1],) + shape[axis + 2:]
  order = (*range(1, axis + 1), 0, *range(axis + 1, len(shape)))
  return lax_structural.reshape(arr, new_sizes, order)


def concat(arrays, /, *, axis: int | None = 0):
  """The array API's `concatenate` (mirrors `jax.numpy.concat`)."""
  return concatenate(arrays, axis=axis)


def stack(arrays, axis: int = 0, out=None, dtype=None):
  """The arrays (of one shape) joined along a new axis.

  Args:
    arrays: a sequence of arrays of equal shape (or an array, split along its
      first axis).
    axis: the position of the new axis in the result.
    out: unsupported; must be None.
    dtype: the result dtype.

  Returns:
    The stacked array.

  Raises:
    ValueError: no arrays, or arrays of different shapes.

  Mirrors `jax.numpy.stack`.
  """
  check_no_out("stack", out)
  if _are_keys(arrays):  # typed PRNG keys (xjax.random)
    return prng.stack_keys(arrays, axis)
  if isinstance(arrays, (np.ndarray, Array, core.Tracer)):
    if not util.shape(arrays) or util.shape(arrays)[0] == 0:
      raise ValueError("Need at least one array to stack.")
    axis = canonicalize_axis(axis, util.ndim(arrays))
    return concatenate(lax_structural.expand_dims(_asarray(arrays), (axis + 1,)), axis=axis,
                       dtype=dtype)
  arrays = _arrays_tuple("stack", arrays)
  if not arrays:
    raise ValueError("Need at least one array to stack.")
  shapes = {util.shape(a) for a in arrays}
  if len(shapes) != 1:
    raise ValueError("All input arrays must have the same shape.")
  axis = canonicalize_axis(axis, util.ndim(arrays[0]) + 1)
  if dtype is not None:
    arrays = [creation.asarray(a, dtype=dtype) for a in arrays]
  else:
    arrays = util.promote_dtypes(*arrays)
  return _asarray(lax_stacking.stack(arrays, axis))


def vstack(tup, dtype=None):
  """The arrays joined along the first axis, 1-D ones as rows (mirrors `jax.numpy.vstack`)."""
  arrs = _arrays_tuple("vstack", tup)
  arrs = [atleast_2d(a) for a in arrs]
  return concatenate(arrs, axis=0, dtype=dtype)


def hstack(tup, dtype=None):
  """The arrays joined along the second axis (the first for 1-D arrays) (mirrors
  `jax.numpy.hstack`)."""
  arrs = [atleast_1d(a) for a in _arrays_tuple("hstack", tup)]
  return concatenate(arrs, axis=0 if util.ndim(arrs[0]) == 1 else 1, dtype=dtype)


def dstack(tup, dtype=None):
  """The arrays joined along the third axis (mirrors `jax.numpy.dstack`)."""
  arrs = [atleast_3d(a) for a in _arrays_tuple("dstack", tup)]
  return concatenate(arrs, axis=2, dtype=dtype)


def column_stack(tup):
  """1-D arrays as columns of a 2-D array; 2-D arrays joined along axis 1 (mirrors
  `jax.numpy.column_stack`)."""
  arrs = []
  for a in _arrays_tuple("column_stack", tup):
    a = _asarray(a)
    arrs.append(transpose(atleast_2d(a)) if util.ndim(a) < 2 else a)
  return concatenate(arrs, axis=1)


def _split(op: str, ary, indices_or_sections, axis: int = 0):
  ary = ensure_arraylike(op, ary)
  axis = canonicalize_axis(util.concrete_int(axis, f"in jax.numpy.{op} argument `axis`"),
                           util.ndim(ary))
  size = util.shape(ary)[axis]
  if isinstance(indices_or_sections, (tuple, list)) or (
      isinstance(indices_or_sections, (np.ndarray, Array, core.Tracer))
      and util.ndim(indices_or_sections) > 0):
    cuts = [util.concrete_int(i, f"in jax.numpy.{op} argument 1") for i in indices_or_sections]
    sizes = list(np.diff(np.array([0, *cuts, size], dtype=np.int64)))
    if any(s < 0 for s in sizes):
      raise ValueError(f"Sizes passed to split must be nonnegative, got {sizes}")
  else:
    # int(), as JAX: a concrete float such as 2.0 counts too
    sections = int(util.concrete_or_error(indices_or_sections, f"in jax.numpy.{op} argument 1"))
    if sections <= 0:
      raise ValueError("number sections must be larger than 0.")
    part, rem = divmod(size, sections)
    if rem == 0:
      sizes = [np.int64(part)] * sections
    elif op == "array_split":
      sizes = [np.int64(part + 1)] * rem + [np.int64(part)] * (sections - rem)
    else:
      raise ValueError(f"array split does not result in an equal division: rest is {rem}")
  return list(lax_structural.split(ary, sizes, axis))


def split(ary, indices_or_sections, axis: int = 0):
  """`ary` split along `axis` into equal sections, or at the given indices.

  Args:
    ary: an array.
    indices_or_sections: the number of equal sections, or the (static)
      split points.
    axis: the axis to split.

  Returns:
    A list of arrays.

  Raises:
    ValueError: the sections are not equal.

  Mirrors `jax.numpy.split`.
  """
  return _split("split", ary, indices_or_sections, axis)


def array_split(ary, indices_or_sections, axis: int = 0):
  """Like `split`, allowing sections of unequal size (mirrors `jax.numpy.array_split`)."""
  return _split("array_split", ary, indices_or_sections, axis)


def vsplit(ary, indices_or_sections):
  """`split` along the first axis (mirrors `jax.numpy.vsplit`)."""
  return _split("vsplit", ary, indices_or_sections, 0)


def hsplit(ary, indices_or_sections):
  """`split` along the second axis (the first for 1-D) (mirrors `jax.numpy.hsplit`)."""
  ary = ensure_arraylike("hsplit", ary)
  return _split("hsplit", ary, indices_or_sections, 0 if util.ndim(ary) == 1 else 1)


# ----------------------------------------------------------------------------
# Tiling, repeating, flipping, padding


def tile(A, reps):
  """`A` repeated `reps` times along each axis (mirrors `jax.numpy.tile`).

  Raises:
    TypeError: `reps` is not an int or a sequence of concrete ints ("Shapes
      must be 1D sequences of concrete values of integer type"), or has a
      negative element (broadcast_in_dim's "must have every element be
      nonnegative").
  """
  A = _asarray(ensure_arraylike("tile", A))
  reps = core.canonicalize_shape(reps if np.ndim(reps) else (reps,))
  reps = (1,) * (util.ndim(A) - len(reps)) + reps
  if len(reps) > util.ndim(A):
    A = lax_structural.expand_dims(A, tuple(range(len(reps) - util.ndim(A))))
  return lax_stacking.tile(A, reps)


def repeat(a, repeats, axis: int | None = None, *, total_repeat_length: int | None = None):
  """Each element of `a` repeated `repeats` times along `axis` (flattened when None).

  Args:
    a: an array.
    repeats: an int, or one int per element along `axis`; must be concrete
      unless `total_repeat_length` is given.
    axis: the axis to repeat along.
    total_repeat_length: the static length of the result along `axis`.

  Returns:
    The repeated array.

  Raises:
    ConcretizationTypeError: traced `repeats` without `total_repeat_length`.
    TypeError: a scalar `repeats` that is negative or not an integer, or a
      negative `total_repeat_length` (broadcast_in_dim's messages, as in JAX).

  Mirrors `jax.numpy.repeat`.
  """
  check_arraylike("repeat", a)
  a = _asarray(util._unwrap(a))
  if axis is None:
    a = ravel(a)
    axis = 0
  axis = canonicalize_axis(util.concrete_int(axis, "'axis' argument of jnp.repeat()"),
                           builtins.max(util.ndim(a), 1))
  if total_repeat_length is None:
    repeats = util.concrete_or_error(
        repeats, "When jit-compiling jnp.repeat, the total number of repeats must be static. "
        "To fix this, either specify a static value for `repeats`, or pass a static value "
        "to `total_repeat_length`.")
    repeats = np.asarray(repeats)
    if repeats.ndim == 0 and util.ndim(a) != 0:
      shp = list(util.shape(a))
      aux = shp[:axis + 1] + [repeats.item()] + shp[axis + 1:]  # checked by broadcast_in_dim
      out = lax_structural.broadcast_in_dim(
          a, tuple(aux), tuple(i for i in range(len(aux)) if i != axis + 1))
      shp[axis] *= int(repeats)
      return lax_structural.reshape(out, tuple(shp))
    repeats = np.ravel(repeats)
    if util.ndim(a) != 0:
      repeats = np.broadcast_to(repeats, [util.shape(a)[axis]])
    total_repeat_length = int(np.sum(repeats))
  else:
    repeats = ravel(repeats)
    if util.ndim(a) != 0:
      repeats = broadcast_to(repeats, [util.shape(a)[axis]])
  if util.ndim(a) == 0:
    if np.shape(repeats) == (1,):
      return creation.full([total_repeat_length], a)
    raise ValueError("`repeat` with a scalar parameter `a` is only implemented for scalar "
                     "values of the parameter `repeats`.")
  if total_repeat_length == 0:
    shp = list(util.shape(a))
    shp[axis] = 0
    return creation.zeros(shp, dtype_of(a))
  if util.shape(a)[axis] == 0:
    return a
  # Block starts are the exclusive cumulative sum of repeats; marking them and taking
  # the inclusive cumulative sum gives, for each output position, its source index.
  repeats = creation.asarray(repeats)
  starts = reductions.cumsum(repeats) - repeats
  marks = creation.zeros([total_repeat_length], dtype=np.int32).at[starts].add(1)
  gather_indices = reductions.cumsum(marks) - 1
  return indexing.take(a, gather_indices, axis=axis)


def flip(m, axis=None):
  """`m` with the order of elements reversed along `axis` (all axes when None).

  Mirrors `jax.numpy.flip`.
  """
  m = ensure_arraylike("flip", m)
  return _flip(m, None if axis is None else _index_tuple(axis))


@jit(static_argnames=("axis",))
def _flip(m, axis):
  nd = util.ndim(m)
  dims = tuple(range(nd)) if axis is None else tuple(canonicalize_axis(a, nd) for a in axis)
  return lax_structural.rev(m, dims)


def fliplr(m):
  """`m` reversed along axis 1 (mirrors `jax.numpy.fliplr`)."""
  return flip(m, 1)


def flipud(m):
  """`m` reversed along axis 0 (mirrors `jax.numpy.flipud`)."""
  return flip(m, 0)


def roll(a, shift, axis=None):
  """`a` with elements shifted cyclically by `shift` along `axis` (flattened when None).

  Concrete shifts compile to slices; traced shifts (under jit) to a dynamic
  slice of `a` repeated twice, as JAX does.

  Raises:
    ValueError: traced `shift` and `axis` that are not scalars or 1-D.

  Mirrors `jax.numpy.roll`.
  """
  a = _asarray(ensure_arraylike("roll", a))
  if axis is None:
    return reshape(roll(ravel(a), shift, 0), util.shape(a))
  if isinstance(shift, core.Tracer) and shift.to_concrete_value() is None:
    axes = tuple(canonicalize_axis(ax, util.ndim(a)) for ax in _index_tuple(axis))
    return _roll_dynamic(a, shift, axes)
  shift = np.asarray(util.concrete_or_error(shift, "The shift argument of jnp.roll"))
  axes = np.asarray(_index_tuple(axis))
  shift, axes = np.broadcast_arrays(shift, axes)
  return _roll_static(a, tuple(int(s) for s in shift.ravel()),
                      tuple(int(x) for x in axes.ravel()))


def _roll_dynamic(a, shift, axis):
  shape = np.broadcast_shapes(util.shape(shift), np.shape(axis))
  if len(shape) != 1:
    raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
  shifts = broadcast_to(shift, shape)
  for k, ax in enumerate(np.broadcast_to(axis, shape)):
    n = util.shape(a)[ax]
    size = np.int32(n)
    # (n - shift mod n) is where the rolled array starts inside [a, a].
    s = ufuncs.remainder(lax.convert_element_type(shifts[k], np.int32),
                         np.int32(max(n, 1)))
    doubled = lax_structural.concatenate([a, a], int(ax))
    a = lax_slicing.dynamic_slice_in_dim(doubled, ufuncs.subtract(size, s), n, axis=int(ax))
  return a


@jit(static_argnums=(1, 2))
def _roll_static(a, shift, axis):
  for s, ax in zip(shift, axis):
    ax = canonicalize_axis(ax, util.ndim(a))
    n = util.shape(a)[ax]
    if n == 0:
      continue
    s = s % n
    a = lax_structural.concatenate(
        [lax_slicing.slice_in_dim(a, n - s, n, axis=ax),
         lax_slicing.slice_in_dim(a, 0, n - s, axis=ax)], ax)
  return a


# ----------------------------------------------------------------------------
# where, nonzero and friends


def where(condition, x=None, y=None, /, *, size: int | None = None, fill_value=None):
  """``x`` where `condition` is true, else ``y``; with only `condition`, `nonzero(condition)`.

  Args:
    condition: a boolean array (non-booleans are compared with 0).
    x, y: the values to choose from; they broadcast with condition.
    size, fill_value: for the one-argument form, as in `nonzero`.

  Returns:
    The selected array (or a tuple of index arrays).

  Raises:
    ValueError: only one of x and y is given.

  >>> import xjax.numpy as jnp
  >>> x = jnp.array([-1.0, 2.0, -3.0])
  >>> jnp.where(x > 0, x, 0.0)
  Array([0., 2., 0.], dtype=float32)

  Mirrors `jax.numpy.where`.
  """
  if x is None and y is None:
    check_arraylike("where", condition)
    return nonzero(condition, size=size, fill_value=fill_value)
  if x is None or y is None:
    raise ValueError("Either both or neither of the x and y arguments should be provided to "
                     f"jax.numpy.where, got {x} and {y}.")
  if size is not None or fill_value is not None:
    raise ValueError("size and fill_value arguments cannot be used in three-term where "
                     "function.")
  return where_(condition, x, y)


def nonzero(a, *, size: int | None = None, fill_value=None):
  """The indices of the non-zero elements of `a`, one index array per axis.

  The number of results is part of the output shape, so under `jit` the
  static `size` must be given: extra slots get `fill_value` (default 0),
  surplus entries are dropped.

  Args:
    a: an array of at least one dimension.
    size: the static number of indices to return.
    fill_value: the index used to fill slots beyond the number of non-zeros
      (a scalar or one per axis).

  Returns:
    A tuple of integer arrays.

  Raises:
    ConcretizationTypeError: `size` is None while tracing.
    ValueError: `a` is 0-d.

  >>> import xjax.numpy as jnp
  >>> jnp.nonzero(jnp.array([0, 3, 0, 4]), size=3, fill_value=-1)
  (Array([ 1,  3, -1], dtype=int32),)

  Mirrors `jax.numpy.nonzero`.
  """
  arr = _asarray(ensure_arraylike("nonzero", a))
  if util.ndim(arr) == 0:
    raise ValueError("Calling nonzero on 0d arrays is not allowed. "
                     "Use jnp.atleast_1d(scalar).nonzero() instead.")
  mask = arr if dtype_of(arr) == np.bool_ else ufuncs.not_equal(arr, 0)
  count = reductions.sum(mask) if size is None else size
  count = util.concrete_int(count, "The size argument of jnp.nonzero must be statically "
                            "specified to use jnp.nonzero within JAX transformations.")
  shp = util.shape(arr)
  int_dtype = dtypes.default_int_dtype()
  if math.prod(shp) == 0 or count == 0:
    return tuple(creation.zeros(count, int_dtype) for _ in shp)
  # Slot j holds the flat index of the (j+1)-th non-zero: the number of entries
  # whose running count of non-zeros is <= j.
  flat = reductions.cumsum(bincount(reductions.cumsum(mask), length=count))
  strides = (np.cumprod(shp[::-1])[::-1] // np.asarray(shp)).astype(dtype_of(flat))
  out = tuple(ufuncs.remainder(ufuncs.floor_divide(flat, st), d) for st, d in zip(strides, shp))
  if fill_value is not None:
    fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * len(shp)
    if any(np.shape(v) != () for v in fills):
      raise ValueError(f"fill_value must be a scalar or a tuple of length {len(shp)}; "
                       f"got {fill_value}")
    fill_mask = ufuncs.greater_equal(creation.arange(count), reductions.sum(mask))
    out = tuple(where_(fill_mask, fv, entry) for fv, entry in zip(fills, out))
  return out


def bincount(x, weights=None, minlength: int = 0, *, length: int | None = None,
             out_sharding=None):
  """The number of occurrences of each value 0, 1, ... in the integer array `x`.

  Negative values of `x` are counted at 0 and values beyond the result are
  dropped, as in JAX (NumPy rejects negative values). The result length is
  part of its shape, so under `jit` the static `length` must be given.

  Args:
    x: a 1-D integer or boolean array (booleans count as 0 and 1).
    weights: optional weights of x's shape, summed instead of counting ones;
      they set the result dtype (the default integer dtype without them).
    minlength: the minimum result length when `length` is None (a concrete
      int; negative values are ignored).
    length: the static result length; entries of `x` at or beyond it are
      dropped. Without it, the length is ``max(minlength, max(0, x.max()) + 1)``
      for a non-empty `x` and `minlength` for an empty one.
    out_sharding: unsupported (must be None).

  Returns:
    A 1-D array of length `length`.

  Raises:
    TypeError: `x` is not an integer or boolean array, or `length` or
      `minlength` is not an integer.
    ValueError: `x` is not 1-D, or `weights` has a different shape.
    ConcretizationTypeError: `length` is None and `x` is traced, or
      `length`/`minlength` is traced.
    NotImplementedError: `out_sharding` is given.

  >>> import xjax.numpy as jnp
  >>> jnp.bincount(jnp.array([-1, 1, 1, 3]))
  Array([1, 2, 0, 1], dtype=int32)

  Mirrors `jax.numpy.bincount`.
  """
  x = ensure_arraylike("bincount", x)
  if dtype_of(x) == np.bool_:
    x = lax.convert_element_type(x, np.int32)
  if not dtypes.issubdtype(dtype_of(x), np.integer):
    raise TypeError(f"x argument to bincount must have an integer type; got {dtype_of(x)}")
  if util.ndim(x) != 1:
    raise ValueError("only 1-dimensional input supported.")
  minlength = util.concrete_int(minlength, "The error occurred because of argument 'minlength' "
                                "of jnp.bincount.")
  if length is None:
    x_val = np.asarray(util.concrete_or_error(
        x, "The error occurred because of argument 'x' of jnp.bincount. To avoid this error, "
        "pass a static `length` argument."))
    length = builtins.max(minlength, x_val.size and builtins.max(0, int(x_val.max())) + 1)
  else:
    length = util.concrete_int(length, "The error occurred because of argument 'length' "
                               "of jnp.bincount.")
  if out_sharding is not None:
    raise NotImplementedError("bincount: out_sharding is not supported by xjax.")
  if weights is None:
    weights = np.array(1, dtype=dtypes.default_int_dtype())
  elif util.shape(x) != util.shape(weights):
    # JAX prints the types with their (here always empty) mesh axes.
    raise ValueError("type of weights must match type of x. Got "
                     f"typeof(x)={util.aval_of(x).str_short(True)}({{}}) and "
                     f"typeof(weights)={util.aval_of(weights).str_short(True)}({{}})")
  return creation.zeros(length, dtype_of(weights)).at[ufuncs.clip(x, 0)].add(weights, mode="drop")


def flatnonzero(a, *, size: int | None = None, fill_value=None):
  """The indices of the non-zero elements of the flattened `a` (mirrors
  `jax.numpy.flatnonzero`)."""
  return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size: int | None = None, fill_value=None):
  """The indices of the non-zero elements of `a`, one row per element (mirrors
  `jax.numpy.argwhere`)."""
  a = _asarray(ensure_arraylike("argwhere", a))
  result = transpose(stack(nonzero(atleast_1d(a), size=size, fill_value=fill_value)))
  if util.ndim(a) == 0:
    return result[:, :0]
  return reshape(result, (-1, util.ndim(a)))


# ----------------------------------------------------------------------------
# Closeness and equality


@jit(static_argnames=("equal_nan",))
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan: bool = False):
  """Elementwise ``|a - b| <= atol + rtol * |b|``, with infinities equal to themselves.

  Args:
    a, b: arrays or scalars; they broadcast.
    rtol: relative tolerance.
    atol: absolute tolerance.
    equal_nan: whether NaNs compare equal.

  Returns:
    A boolean array.

  Mirrors `jax.numpy.isclose`.
  """
  a, b = util.promote_args("isclose", a, b)
  if isinstance(dtype_of(a), dtypes.ExtendedDType):  # keys: close means equal
    return lax.eq(a, b)
  a, b = util.promote_args_inexact("isclose", a, b)
  dtype = dtype_of(a)
  if dtypes.issubdtype(dtype, np.complexfloating):
    dtype = np.array(0, dtype).real.dtype
  rtol = lax.convert_element_type(rtol, dtype)
  atol = lax.convert_element_type(atol, dtype)
  both_nan = ufuncs.logical_and(ufuncs.isnan(a), ufuncs.isnan(b))
  check_fin = ufuncs.isfinite(b)
  in_range = lax.le(lax.abs(lax.sub(a, b)), lax.add(atol, lax.mul(rtol, lax.abs(b))))
  out = ufuncs.logical_or(lax.eq(a, b), ufuncs.logical_and(check_fin, in_range))
  return ufuncs.logical_or(out, both_nan) if equal_nan else out


@jit(static_argnames=("equal_nan",))
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan: bool = False):
  """Whether all elements are `isclose` (a boolean scalar array).

  Mirrors `jax.numpy.allclose`.
  """
  check_arraylike("allclose", a, b)
  return reductions.all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan: bool = False):
  """Whether the arrays have one shape and equal elements (mirrors `jax.numpy.array_equal`)."""
  a1, a2 = creation.asarray(a1), creation.asarray(a2)
  if util.shape(a1) != util.shape(a2):
    return creation.array(False, dtype=bool)
  eq = ufuncs.equal(a1, a2)
  if equal_nan:
    eq = ufuncs.logical_or(eq, ufuncs.logical_and(ufuncs.isnan(a1), ufuncs.isnan(a2)))
  return reductions.all(eq)


def array_equiv(a1, a2):
  """Whether the arrays broadcast together and are equal (mirrors `jax.numpy.array_equiv`)."""
  a1, a2 = creation.asarray(a1), creation.asarray(a2)
  try:
    util.broadcast_shapes(util.shape(a1), util.shape(a2))
  except ValueError:
    return creation.array(False)
  return reductions.all(ufuncs.equal(a1, a2))


# ----------------------------------------------------------------------------
# Triangles and diagonals


def _tri_mask(shape, k: int):
  # True where column <= row + k (the lower triangle from the k-th diagonal).
  shifted_rows = lax.add(lax_structural.broadcasted_iota(np.int32, shape, 0), np.int32(k))
  return lax.ge(shifted_rows, lax_structural.broadcasted_iota(np.int32, shape, 1))


def _triangle(name, m, k, lower: bool):
  m = ensure_arraylike(name, m)
  shp = util.shape(m)
  if len(shp) < 2:
    raise ValueError(f"Argument to jax.numpy.{name} must be at least 2D")
  mask = _tri_mask(shp[-2:], k if lower else k - 1)
  mask = lax_structural.broadcast(mask, shp[:-2]) if len(shp) > 2 else mask
  zeros = creation.zeros_like(m)
  return lax.select_n(mask, zeros, m) if lower else lax.select_n(mask, m, zeros)


@jit(static_argnames=("k",))
def tril(m, k: int = 0):
  """`m` with the elements above the k-th diagonal zeroed (mirrors `jax.numpy.tril`)."""
  return _triangle("tril", m, k, lower=True)


@jit(static_argnames=("k",))
def triu(m, k: int = 0):
  """`m` with the elements below the k-th diagonal zeroed (mirrors `jax.numpy.triu`)."""
  return _triangle("triu", m, k, lower=False)
