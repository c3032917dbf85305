"""Selecting and placing elements: choose, compress, extract, place, put,
put_along_axis, and the diagonal functions diag, diagflat, diagonal, trace and
fill_diagonal.

All are compositions of jnp indexing (gather), indexed updates (scatter) and
reductions; no new primitives. Arrays are immutable, so the NumPy functions
that write in place (place, put, put_along_axis, fill_diagonal) must be called
with ``inplace=False`` and return the updated array.
"""
from __future__ import annotations

import operator

import numpy as np

from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax import elementwise as lax
from xjax._src.lax import structural as lax_structural
from xjax._src.numpy import creation, lax_numpy, reductions, sorting, ufuncs, util
from xjax._src.numpy.multi_index import unravel_index
from xjax._src.numpy.util import (canonicalize_axis, check_arraylike, check_no_out, dtype_of,
                                  ensure_arraylike, ndim, shape, where_)

_asarray = ufuncs._asarray


def _is_integer(x) -> bool:
  return dtypes.issubdtype(dtype_of(x), np.integer)


def _sparse_indices(shp) -> tuple:
  """One index array per axis of `shp`, each broadcastable against the others
  (``jnp.indices(shp, sparse=True)``)."""
  int_dtype = dtypes.default_int_dtype()
  ones = (1,) * len(shp)
  return tuple(lax_structural.broadcasted_iota(int_dtype, ones[:i] + (d,) + ones[i + 1:], i)
               for i, d in enumerate(shp))


def _tile_to_size(x, size: int):
  """The 1-D non-empty array `x` repeated cyclically to exactly `size` elements."""
  n = shape(x)[0]
  if n < size:
    x = lax_numpy.tile(x, -(-size // n))
  return x[:size] if shape(x)[0] > size else x


def _as_arrays(fun_name: str, *args):
  return tuple(_asarray(a) for a in util._ensure_all(fun_name, args))


# ----------------------------------------------------------------------------
# choose, compress, extract


def _choice_list(choices) -> tuple:
  if util.is_arraylike(choices):  # an array of choices: one per leading index
    if ndim(choices) == 0:
      raise TypeError("iteration over a 0-d array")
    return tuple(choices[i] for i in range(shape(choices)[0]))
  return tuple(choices)


def choose(a, choices, out=None, mode: str = "raise"):
  """Each element taken from the choice array that `a` names at that position.

  With everything broadcast to one shape, ``out[idx] = choices[a[idx]][idx]``.

  Args:
    a: an integer array of indices into `choices`.
    choices: an array (its leading axis lists the choices) or a sequence of
      arrays; they broadcast with `a`.
    out: unsupported; must be None.
    mode: how indices outside ``[0, len(choices))`` are handled: 'raise'
      (default; raises, and so needs a concrete `a`: it cannot be used under
      `jit` or `vmap`), 'wrap' (taken modulo ``len(choices)``) or 'clip'.

  Returns:
    An array of the broadcast shape, of the choices' promoted dtype.

  Raises:
    NotImplementedError: `out` is given.
    TypeError: an argument is not array-like.
    ValueError: `a` is not of integer dtype, an unknown `mode`, or (mode
      'raise') an index out of range ("invalid entry in choice array").
    ConcretizationTypeError: mode 'raise' with a traced `a`.

  >>> import xjax.numpy as jnp
  >>> jnp.choose(jnp.array([2, 0, 1, 5]), jnp.arange(12).reshape(3, 4), mode="clip")
  Array([ 8,  1,  6, 11], dtype=int32)

  Mirrors `jax.numpy.choose`.
  """
  check_no_out("choose", out)
  a, *choices = util._ensure_all("choose", (a, *_choice_list(choices)))
  if not _is_integer(a):
    raise ValueError("`a` array must be integer typed")
  n = len(choices)
  if mode == "raise":
    value = np.asarray(util.concrete_or_error(
        a, "The error occurred because jnp.choose was jit-compiled with mode='raise'. "
        "Use mode='wrap' or mode='clip' instead."))
    if np.any((value < 0) | (value >= n)):
      raise ValueError("invalid entry in choice array")
  elif mode not in ("wrap", "clip"):
    raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
  if n == 0:
    raise IndexError("jnp.choose: choices must not be empty")
  return _choose(a, tuple(choices), mode)


@jit(static_argnames=("mode",))
def _choose(a, choices, mode):
  n = len(choices)
  if mode == "wrap":
    a = ufuncs.remainder(a, n)
  elif mode == "clip":
    a = ufuncs.clip(a, 0, n - 1)
  a, *choices = util.broadcast_arrays_(a, *choices)
  stacked = creation.array(choices)
  return stacked[(a, *_sparse_indices(shape(a)))]


def compress(condition, a, axis: int | None = None, *, size: int | None = None, fill_value=0,
             out=None):
  """The slices of `a` along `axis` where the 1-D `condition` is true.

  `condition` and the axis need not have the same length: the longer one is
  cut to the shorter (a cut-off true entry of `condition` is an error). The
  result's length is the number of true entries, so under `jit` or `vmap` the
  static `size` must be given: the first `size` selected slices are kept and
  any slots beyond them are filled with `fill_value`.

  Args:
    condition: a 1-D array, converted to bool.
    a: an array.
    axis: the axis to select along (None: the flattened `a`).
    size: the static length of the result along `axis`.
    fill_value: the value of the padding slots when `size` is given.
    out: unsupported; must be None.

  Returns:
    An array of a's dtype and rank (1-D when axis is None).

  Raises:
    NotImplementedError: `out` is given.
    ValueError: `condition` is not 1-D, has a true entry beyond the axis,
      `size` is negative or larger than the axis, or `axis` is out of range.
    TracerBoolConversionError: `size` is None and `condition` is traced.

  >>> import xjax.numpy as jnp
  >>> jnp.compress(jnp.array([True, False, True]), jnp.arange(6).reshape(3, 2), axis=0)
  Array([[0, 1],
         [4, 5]], dtype=int32)

  Mirrors `jax.numpy.compress`.
  """
  condition, arr, fill_value = _as_arrays("compress", condition, a, fill_value)
  condition = ufuncs._to_bool(condition)
  check_no_out("compress", out)
  if ndim(condition) != 1:
    raise ValueError("condition must be a 1D array")
  if axis is None:
    axis = 0
    arr = lax_numpy.ravel(arr)
  else:
    arr = lax_numpy.moveaxis(arr, axis, 0)
  length = shape(arr)[0]
  condition, extra = condition[:length], condition[length:]
  arr = arr[:shape(condition)[0]]
  if size is None:
    if reductions.any(extra):
      raise ValueError("condition contains entries that are out of bounds")
    result = arr[condition]
  else:
    size = operator.index(size)
    if not 0 <= size <= shape(arr)[0]:
      raise ValueError("size must be positive and not greater than the size of the array axis;"
                       f" got size={size} for a.shape[axis]={shape(arr)[0]}")
    result = _compress_sized(condition, arr, fill_value, size)
  return lax_numpy.moveaxis(result, 0, axis)


@jit(static_argnames=("size",))
def _compress_sized(condition, arr, fill_value, size):
  # Selected slices first, in order (a stable descending sort of the mask), the others filled.
  mask = lax_structural.expand_dims(condition, tuple(range(1, ndim(arr))))
  arr = where_(mask, arr, creation.array(fill_value, dtype=dtype_of(arr)))
  return arr[sorting.argsort(condition, stable=True, descending=True)][:size]


def extract(condition, arr, *, size: int | None = None, fill_value=0):
  """The elements of the flattened `arr` where the flattened `condition` is true.

  Like `compress` on the flattened arrays: the longer of the two is cut to
  the length of the shorter, and `size` (needed under `jit`) fixes the
  result's length, padding with `fill_value`.

  Args:
    condition: an array, converted to bool.
    arr: an array.
    size: the static length of the result.
    fill_value: the value of the padding slots when `size` is given.

  Returns:
    A 1-D array of arr's dtype.

  Raises:
    TypeError: an argument is not array-like.
    ValueError: as in `compress`.

  >>> import xjax.numpy as jnp
  >>> jnp.extract(jnp.arange(6) % 2 == 0, jnp.arange(6), size=4, fill_value=-1)
  Array([ 0,  2,  4, -1], dtype=int32)

  Mirrors `jax.numpy.extract`.
  """
  check_arraylike("extreact", condition, arr, fill_value)  # sic: JAX's message
  return compress(lax_numpy.ravel(condition), lax_numpy.ravel(arr), size=size,
                  fill_value=fill_value)


# ----------------------------------------------------------------------------
# place, put, put_along_axis


def place(arr, mask, vals, *, inplace: bool = True):
  """`arr` with the positions where `mask` is true set, in order, from `vals`.

  `vals` is flattened and repeated cyclically if it has fewer elements than
  `mask` has true entries.

  Args:
    arr: an array.
    mask: an array of arr's size (its shape may differ), compared with 0.
    vals: the values to place, cast to arr's dtype.
    inplace: must be False (JAX arrays are immutable).

  Returns:
    An array of arr's shape and dtype.

  Raises:
    ValueError: `inplace` is True, the sizes of `arr` and `mask` differ, or
      `vals` is empty.

  >>> import xjax.numpy as jnp
  >>> jnp.place(jnp.arange(6), jnp.arange(6) % 2 == 1, jnp.array([-1, -2]), inplace=False)
  Array([ 0, -1,  2, -2,  4, -1], dtype=int32)

  Mirrors `jax.numpy.place`.
  """
  data, mask, vals = _as_arrays("place", arr, mask, vals)
  vals = lax_numpy.ravel(vals)
  if inplace:
    raise ValueError(
        "jax.numpy.place cannot modify arrays in-place, because JAX arrays are immutable. "
        "Pass inplace=False to instead return an updated array.")
  n = util.aval_of(mask).size
  if util.aval_of(data).size != n:
    raise ValueError("place: arr and mask must be the same size")
  if not shape(vals)[0]:
    raise ValueError("Cannot place values from an empty array")
  if not n:
    return data
  return _place(data, mask, vals)


@jit
def _place(data, mask, vals):
  n = util.aval_of(mask).size
  # The flat positions of the true entries, then n (out of range: dropped) in the spare slots.
  indices = lax_numpy.nonzero(lax_numpy.ravel(mask), size=n, fill_value=n)[0]
  vals = _tile_to_size(vals, n)
  flat = lax_numpy.ravel(data).at[indices].set(vals, mode="drop")
  return lax_structural.reshape(flat, shape(data))


def put(a, ind, v, mode: str | None = None, *, inplace: bool = True):
  """`a` with the elements at the flat indices `ind` replaced by the values `v`.

  `ind` and `v` are flattened, and `v` is repeated cyclically to the length
  of `ind`. Negative indices count from the end.

  Args:
    a: an array.
    ind: integer (or bool) flat indices into `a`.
    v: the values, cast to a's dtype.
    mode: out-of-range indices: None (default, clipped into range, as JAX's
      `unravel_index` does), 'clip' (clipped to ``[0, a.size)``, so negative
      indices go to 0) or 'wrap' (taken modulo ``a.size``).
    inplace: must be False (JAX arrays are immutable).

  Returns:
    An array of a's shape and dtype (`a` itself when `a`, `ind` or `v` is
    empty). Where `ind` repeats an index, which value lands is unspecified.

  Raises:
    ValueError: `inplace` is True, or an unknown `mode`.
    NotImplementedError: mode 'raise'.
    TypeError: an argument is not array-like, or `ind` is not integer.

  >>> import xjax.numpy as jnp
  >>> jnp.put(jnp.zeros(5), jnp.array([0, -1]), jnp.array([1.0, 2.0]), inplace=False)
  Array([1., 0., 0., 0., 2.], dtype=float32)

  Mirrors `jax.numpy.put`.
  """
  if inplace:
    raise ValueError(
        "jax.numpy.put cannot modify arrays in-place, because JAX arrays are immutable. "
        "Pass inplace=False to instead return an updated array.")
  arr, ind, v = _as_arrays("put", a, ind, v)
  if dtype_of(ind) == np.bool_:
    ind = lax.convert_element_type(ind, dtypes.default_int_dtype())
  elif not _is_integer(ind):
    raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                    f"{dtype_of(ind)}")
  ind, v = lax_numpy.ravel(ind), lax_numpy.ravel(v)
  if not util.aval_of(arr).size or not shape(ind)[0] or not shape(v)[0]:
    return arr
  if mode == "raise":
    raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
  if mode not in (None, "clip", "wrap"):
    raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
  return _put(arr, ind, v, mode)


@jit(static_argnames=("mode",))
def _put(arr, ind, v, mode):
  size = util.aval_of(arr).size
  v = _tile_to_size(v, shape(ind)[0])
  if mode == "clip":
    ind = ufuncs.clip(ind, 0, size - 1)
  elif mode == "wrap":
    ind = ufuncs.remainder(ind, size)
  scatter_mode = "drop" if mode is None else "promise_in_bounds"
  return arr.at[unravel_index(ind, shape(arr))].set(v, mode=scatter_mode)


@jit(static_argnames=("axis", "inplace", "mode"))
def put_along_axis(arr, indices, values, axis: int | None, inplace: bool = True, *,
                   mode: str | None = None):
  """`arr` with ``values`` written at `indices` along `axis` (the inverse of
  `take_along_axis`).

  Along the other axes, `indices` broadcasts against `arr`; `values`
  broadcasts to the shape of `indices`.

  Args:
    arr: an array.
    indices: an integer array of arr's rank (1-D when axis is None).
    values: the values, cast to arr's dtype.
    axis: the axis the indices run along (None: the flattened array).
    inplace: must be False (JAX arrays are immutable).
    mode: out-of-bounds handling, as in ``x.at[...].set``: by default,
      negative indices count from the end and indices still out of range are
      dropped; 'clip' clamps them.

  Returns:
    An array of arr's shape and dtype.

  Raises:
    ValueError: `inplace` is True, the ranks of `arr` and `indices` differ,
      `values` does not broadcast to the shape of `indices`, or `axis` is out
      of range.
    TypeError: an argument is not array-like, or non-integer indices.

  >>> import xjax.numpy as jnp
  >>> jnp.put_along_axis(jnp.zeros((2, 3)), jnp.array([[2], [0]]), 1.0, axis=1, inplace=False)
  Array([[0., 0., 1.],
         [1., 0., 0.]], dtype=float32)

  Mirrors `jax.numpy.put_along_axis`.
  """
  if inplace:
    raise ValueError(
        "jax.numpy.put_along_axis cannot modify arrays in-place, because JAX arrays"
        "are immutable. Pass inplace=False to instead return an updated array.")
  arr, indices, values = ensure_arraylike("put_along_axis", arr, indices, values)
  arr = _asarray(arr)
  original_shape = shape(arr)
  if axis is None:
    arr = lax_numpy.ravel(arr)
    axis = 0
  if ndim(arr) != ndim(indices):
    raise ValueError("put_along_axis arguments 'arr' and 'indices' must have same ndim. Got "
                     f"arr.ndim={ndim(arr)} and indices.ndim={ndim(indices)}.")
  axis = canonicalize_axis(axis, ndim(arr))
  try:
    values = util.broadcast_to(values, shape(indices))
  except ValueError:
    raise ValueError("put_along_axis argument 'values' must be broadcastable to 'indices'. Got "
                     f"values.shape={shape(values)} and indices.shape={shape(indices)}.") from None
  idx = list(_sparse_indices(shape(arr)))
  idx[axis] = indices
  result = arr.at[tuple(idx)].set(values, mode=mode)
  return lax_structural.reshape(result, original_shape)


# ----------------------------------------------------------------------------
# Diagonals


def diag(v, k: int = 0):
  """The k-th diagonal of a 2-D `v`, or a square matrix with the 1-D `v` on
  its k-th diagonal.

  Args:
    v: a 1-D or 2-D array.
    k: the diagonal (a concrete int): 0 is the main one, positive above,
      negative below.

  Returns:
    For 1-D `v` of length n, an ``(n + |k|, n + |k|)`` array, zero off the
    diagonal; for 2-D `v`, ``diagonal(v, offset=k)``.

  Raises:
    ValueError: `v` is not 1-D or 2-D.
    TypeError: `k` is not an integer.

  >>> import xjax.numpy as jnp
  >>> jnp.diag(jnp.array([1, 2]), k=1)
  Array([[0, 1, 0],
         [0, 0, 2],
         [0, 0, 0]], dtype=int32)

  Mirrors `jax.numpy.diag`.
  """
  v = ensure_arraylike("diag", v)
  return _diag(v, operator.index(k))


@jit(static_argnames=("k",))
def _diag(v, k: int):
  if ndim(v) == 2:
    return diagonal(v, offset=k)
  if ndim(v) != 1:
    raise ValueError("diag input must be 1d or 2d")
  zero = lax.convert_element_type(np.zeros((), dtype_of(v)), dtype_of(v), weak_type=util.is_weak(v))
  n = shape(v)[0] + abs(k)
  v = lax_structural.pad(v, zero, ((max(0, -k), max(0, k), 0),))
  # Row i of the result holds v[i] at column i + k (v padded so both run over 0..n-1).
  return where_(creation.eye(n, k=k, dtype=bool), v[:, None], zero)


def diagflat(v, k: int = 0):
  """A square matrix with the flattened `v` on its k-th diagonal.

  Args:
    v: an array of any shape (flattened).
    k: the diagonal (a concrete int): 0 is the main one, positive above,
      negative below.

  Returns:
    An ``(n + |k|, n + |k|)`` array of v's dtype, for n the size of `v`.

  Raises:
    TypeError: `v` is not array-like, or `k` is not an integer.

  >>> import xjax.numpy as jnp
  >>> jnp.diagflat(jnp.array([[1, 2], [3, 4]]))
  Array([[1, 0, 0, 0],
         [0, 2, 0, 0],
         [0, 0, 3, 0],
         [0, 0, 0, 4]], dtype=int32)

  Mirrors `jax.numpy.diagflat`.
  """
  check_arraylike("diagflat", v)
  return _diagflat(_asarray(util._unwrap(v)), operator.index(k))


@jit(static_argnames=("k",))
def _diagflat(v, k: int):
  flat = lax_numpy.ravel(v)
  n = shape(flat)[0]
  m = n + abs(k)
  i = creation.arange(n)
  positions = i + k + i * m if k >= 0 else i + (i - k) * m
  out = creation.zeros(m * m, dtype_of(flat)).at[positions].set(flat)
  return lax_structural.reshape(out, (m, m))


@jit(static_argnames=("offset", "axis1", "axis2"))
def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1):
  """The elements ``a[..., i, i + offset]`` over the two axes `axis1` and `axis2`.

  Args:
    a: an array of at least two dimensions.
    offset: the diagonal (a static int): 0 is the main one, positive above,
      negative below.
    axis1, axis2: the two axes the diagonal runs over (the row and the
      column axis).

  Returns:
    An array of a's other axes followed by one axis of the diagonal's length
    (0 when `offset` is beyond the matrix).

  Raises:
    ValueError: `a` has fewer than two dimensions, or an axis is out of range.
    TypeError: `offset` is not an integer, or `axis1` and `axis2` name the
      same axis (lax's transpose error, as in JAX).

  >>> import xjax.numpy as jnp
  >>> jnp.diagonal(jnp.arange(12).reshape(3, 4), offset=1)
  Array([ 1,  6, 11], dtype=int32)

  Mirrors `jax.numpy.diagonal`.
  """
  a = ensure_arraylike("diagonal", a)
  if ndim(a) < 2:
    raise ValueError("diagonal requires an array of at least two dimensions.")
  offset = operator.index(offset)
  a = lax_numpy.moveaxis(_asarray(a), (axis1, axis2), (-2, -1))
  rows, cols = shape(a)[-2:]
  size = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
  i = creation.arange(size)
  j = creation.arange(abs(offset), abs(offset) + size)
  out = a[..., i, j] if offset >= 0 else a[..., j, i]
  if ndim(a) == 2 and rows == cols and offset == 0 and dtype_of(a) != np.bool_:
    # JAX takes the main diagonal of a square matrix by a platform-dependent branch whose
    # result is strongly typed.
    out = lax.convert_element_type(out, dtype_of(out), weak_type=False)
  return out


@jit(static_argnames=("axis1", "axis2", "dtype"))
def trace(a, offset=0, axis1: int = 0, axis2: int = 1, dtype=None, out=None):
  """The sum along the `offset` diagonal over the axes `axis1` and `axis2`.

  Args:
    a: an array of at least two dimensions.
    offset: the diagonal: 0 is the main one, positive above, negative below.
      It may be a traced integer.
    axis1, axis2: the two (distinct) axes of the matrices.
    dtype: the accumulation and result dtype. By default that of `sum`:
      a's dtype, except that bools and integers narrower than the default
      integer become the default (signed or unsigned) integer.
    out: unsupported; must be None.

  Returns:
    An array of a's other axes.

  Raises:
    NotImplementedError: `out` is given.
    ValueError: `axis1` and `axis2` are the same axis, an axis is out of
      range, or `offset` is not a scalar integer.

  >>> import xjax.numpy as jnp
  >>> jnp.trace(jnp.arange(9).reshape(3, 3), offset=1)
  Array(6, dtype=int32)

  Mirrors `jax.numpy.trace`.
  """
  a = ensure_arraylike("trace", a)
  check_no_out("trace", out)
  nd = ndim(a)
  if canonicalize_axis(axis1, nd) == canonicalize_axis(axis2, nd):
    raise ValueError(f"axis1 and axis2 can not be same. axis1={axis1} and axis2={axis2}")
  if dtype is not None:
    dtype = dtypes.check_user_dtype_supported(dtype, "trace")
  a_shape = shape(a)
  on_diagonal = creation.eye(a_shape[axis1], a_shape[axis2], k=offset, dtype=bool)
  a = lax_numpy.moveaxis(a, (axis1, axis2), (-2, -1))
  a = where_(on_diagonal, a, creation.zeros_like(a))
  return reductions.sum(a, axis=(-2, -1), dtype=dtype)


def fill_diagonal(a, val, wrap: bool = False, *, inplace: bool = True):
  """`a` with its main diagonal (``a[i, i, ..., i]``) set to `val`.

  Args:
    a: an array of at least two dimensions; beyond two, all of equal length.
    val: a scalar, or values flattened and repeated cyclically along the
      diagonal; cast to a's dtype.
    wrap: must be False (NumPy's wrapping of tall matrices is not supported,
      as in JAX).
    inplace: must be False (JAX arrays are immutable).

  Returns:
    An array of a's shape and dtype.

  Raises:
    NotImplementedError: `inplace` or `wrap` is True.
    ValueError: `a` has fewer than two dimensions, unequal dimensions beyond
      two, or `val` is empty (JAX fails here with ZeroDivisionError).

  >>> import xjax.numpy as jnp
  >>> jnp.fill_diagonal(jnp.zeros((2, 3)), jnp.array([1.0, 2.0]), inplace=False)
  Array([[1., 0., 0.],
         [0., 2., 0.]], dtype=float32)

  Mirrors `jax.numpy.fill_diagonal`.
  """
  if inplace:
    raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
  if wrap:
    raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
  a, val = _as_arrays("fill_diagonal", a, val)
  a_shape = shape(a)
  if len(a_shape) < 2:
    raise ValueError("array must be at least 2-d")
  if len(a_shape) > 2 and not all(n == a_shape[0] for n in a_shape[1:]):
    raise ValueError("All dimensions of input must be of equal length")
  if ndim(val) and not util.aval_of(val).size:
    raise ValueError("fill_diagonal: val must not be empty")
  return _fill_diagonal(a, val)


@jit
def _fill_diagonal(a, val):
  n = min(shape(a))
  i = lax_structural.broadcasted_iota(dtypes.default_int_dtype(), (n,), 0)
  if ndim(val):
    val = _tile_to_size(lax_numpy.ravel(val), n)
  return a.at[(i,) * ndim(a)].set(val)

