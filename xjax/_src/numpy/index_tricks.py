"""Index helpers and grids: meshgrid, mgrid/ogrid, r_/c_, s_/index_exp, ix_,
indices, the diagonal and triangle index functions, tri and vander.

Sizes are part of an array's type, so every argument that sets a shape (`n`,
`m`, `N`, `dimensions`, slice bounds) must be concrete: a traced one raises
JAX's ConcretizationTypeError (or its TypeError for shapes). Only `tri`'s `k`
may be traced, as in JAX. Index arrays use the default integer dtype (int32
unless x64 is enabled).
"""
from __future__ import annotations

import operator

import numpy as np

from xjax._src import config
from xjax._src import core
from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax import elementwise as lax
from xjax._src.lax import structural as lax_structural
from xjax._src.numpy import creation
from xjax._src.numpy import lax_numpy
from xjax._src.numpy import ufuncs
from xjax._src.numpy import util
from xjax._src.numpy.util import dtype_of

# ----------------------------------------------------------------------------
# Grids of coordinates


def meshgrid(*xi, copy: bool = True, sparse: bool = False, indexing: str = "xy"):
  """Coordinate arrays from 1-D coordinate vectors.

  With ``indexing="ij"`` output ``i`` varies along axis ``i`` and has shape
  ``(len(x0), len(x1), ...)``; the default ``"xy"`` (Cartesian) swaps the
  first two axes of every output. With `sparse`, output ``i`` keeps size 1 on
  every other axis, ready to broadcast.

  Args:
    *xi: 1-D array-likes (not lists); each keeps its own dtype.
    copy: must be True (JAX never returns views).
    sparse: return broadcastable outputs instead of full grids.
    indexing: ``"xy"`` or ``"ij"``.

  Returns:
    A list with one array per input.

  Raises:
    TypeError: an input is not an array or scalar.
    ValueError: ``copy=False``, a bad `indexing`, or an input that is not 1-D.

  >>> import xjax.numpy as jnp
  >>> x, y = jnp.meshgrid(jnp.arange(3), jnp.arange(2))
  >>> x
  Array([[0, 1, 2],
         [0, 1, 2]], dtype=int32)
  >>> y
  Array([[0, 0, 0],
         [1, 1, 1]], dtype=int32)

  Mirrors `jax.numpy.meshgrid`.
  """
  args = [ufuncs._asarray(a) for a in util._ensure_all("meshgrid", xi)]
  if not copy:
    raise ValueError("jax.numpy.meshgrid only supports copy=True")
  if indexing not in ("xy", "ij"):
    raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
  shapes = [util.shape(a) for a in args]
  if any(len(s) != 1 for s in shapes):
    raise ValueError(f"Arguments to jax.numpy.meshgrid must be 1D, got shapes {shapes}")
  # Axis j of every output follows input order[j]; Cartesian indexing swaps the first two.
  order = list(range(len(args)))
  if indexing == "xy" and len(args) >= 2:
    order[:2] = [1, 0]
  by_axis = [args[i] for i in order]
  full_shape = tuple(shapes[i][0] for i in order)
  out = []
  for axis, a in enumerate(by_axis):
    shape = full_shape
    if sparse:
      shape = (1,) * axis + (full_shape[axis],) + (1,) * (len(args) - axis - 1)
    out.append(lax_structural.broadcast_in_dim(a, shape, (axis,)))
  return [out[j] for j in order]  # order is its own inverse


def _grid_from_slice(s: slice, op_name: str):
  """The 1-D grid a slice names: `arange` bounds, or `linspace` for an imaginary step."""
  start = util.concrete_or_error(s.start, f"slice start of jnp.{op_name}") or 0
  stop = util.concrete_or_error(s.stop, f"slice stop of jnp.{op_name}")
  step = util.concrete_or_error(s.step, f"slice step of jnp.{op_name}") or 1
  if np.iscomplex(step):
    # An imaginary step is a point count; both ends are included.
    return creation.linspace(start, stop, int(abs(step)))
  return creation.arange(start, stop, step)


def _grids_from_key(key, op_name: str):
  grids = [_grid_from_slice(s, op_name) for s in key]
  with config.numpy_dtype_promotion("standard"):
    return util.promote_dtypes(*grids)


class _Mgrid:
  """``jnp.mgrid[s0, s1, ...]``: the dense grid, one leading axis per slice.

  Each slice ``start:stop:step`` means ``arange(start, stop, step)``, or, with
  an imaginary step ``nj``, ``linspace(start, stop, n)``. One slice gives a
  1-D array; several give an array of shape ``(len(key), n0, n1, ...)`` in
  their promoted dtype. Bounds must be concrete (ConcretizationTypeError under
  `jit` otherwise).

  >>> import xjax.numpy as jnp
  >>> jnp.mgrid[0:2, 0:3]
  Array([[[0, 0, 0],
          [1, 1, 1]],
  <BLANKLINE>
         [[0, 1, 2],
          [0, 1, 2]]], dtype=int32)
  >>> jnp.mgrid[0:1:3j]
  Array([0. , 0.5, 1. ], dtype=float32)

  Mirrors `jax.numpy.mgrid`.
  """

  def __getitem__(self, key):
    if isinstance(key, slice):
      return _grid_from_slice(key, "mgrid")
    grids = _grids_from_key(key, "mgrid")
    if not grids:
      return creation.arange(0)
    return lax_numpy.stack(meshgrid(*grids, indexing="ij"), 0)


class _Ogrid:
  """``jnp.ogrid[s0, s1, ...]``: the open (sparse) grid, a list of broadcastable arrays.

  Slices are read as in `mgrid`. One slice gives a 1-D array; several give a
  list whose item ``i`` has size 1 on every axis but ``i``.

  >>> import xjax.numpy as jnp
  >>> jnp.ogrid[0:2, 0:3]
  [Array([[0],
         [1]], dtype=int32), Array([[0, 1, 2]], dtype=int32)]

  Mirrors `jax.numpy.ogrid`.
  """

  def __getitem__(self, key):
    if isinstance(key, slice):
      return _grid_from_slice(key, "ogrid")
    return meshgrid(*_grids_from_key(key, "ogrid"), indexing="ij", sparse=True)


mgrid = _Mgrid()
ogrid = _Ogrid()


# ----------------------------------------------------------------------------
# r_ and c_


class _AxisConcatenator:
  """Concatenation by indexing: ``obj[a, b, ...]`` joins the items along `axis`.

  Items may be arrays, scalars, lists, or slices (read as in `mgrid`). Each
  item is raised to `ndmin` dimensions; when that adds axes, ``trans1d`` says
  where the item's own axes go (-1: at the end, as NumPy prepends 1s; 0: at
  the front). A leading string changes the defaults: ``"axis[,ndmin[,trans1d]]"``
  (extra fields ignored), or ``"r"``/``"c"`` to make a 1-D result a row or a
  column matrix.
  """
  axis: int
  ndmin: int
  trans1d: int
  op_name: str

  def __getitem__(self, key):
    items = key if isinstance(key, tuple) else (key,)
    axis, ndmin, trans1d, matrix = self.axis, self.ndmin, self.trans1d, -1
    if isinstance(items[0], str):
      directive, items = items[0], items[1:]
      if directive in ("r", "c"):
        matrix = 0 if directive == "r" else 1
      else:
        fields = directive.split(",")[:3]
        try:
          values = [int(f) for f in fields]
        except ValueError as err:
          raise ValueError(f"could not understand directive {directive!r}") from err
        axis, ndmin, trans1d = values + [ndmin, trans1d][len(values) - 1:]
    parts = []
    for item in items:
      if isinstance(item, slice):
        part, item_ndim = _grid_from_slice(item, self.op_name), 0
      elif isinstance(item, str):
        raise ValueError("string directive must be placed at the beginning")
      else:
        part = creation.array(item, copy=False)
        item_ndim = util.ndim(part)
      part = creation.array(part, copy=False, ndmin=ndmin)
      if trans1d != -1 and ndmin > item_ndim:
        # ndmin prepended the new axes; rotate so the item's axes start at trans1d.
        shift = ndmin - abs(ndmin + trans1d + 1) % ndmin
        perm = tuple(range(shift, ndmin)) + tuple(range(shift))
        part = lax_numpy.transpose(part, perm)
      parts.append(part)
    out = lax_numpy.concatenate(tuple(parts), axis=axis)
    if matrix != -1 and util.ndim(out) == 1:
      out = lax_numpy.expand_dims(out, matrix)
    return out

  def __len__(self) -> int:
    return 0


class RClass(_AxisConcatenator):
  """``jnp.r_[...]``: concatenation along the first axis (items raised to 1-D).

  >>> import xjax.numpy as jnp
  >>> jnp.r_[jnp.array([1, 2]), 0, 3:5]
  Array([1, 2, 0, 3, 4], dtype=int32)
  >>> jnp.r_["0,2", [1, 2], [3, 4]]
  Array([[1, 2],
         [3, 4]], dtype=int32)

  Mirrors `jax.numpy.r_`.
  """
  axis = 0
  ndmin = 1
  trans1d = -1
  op_name = "r_"


class CClass(_AxisConcatenator):
  """``jnp.c_[...]``: concatenation along the last axis (items raised to 2-D, 1-D ones as columns).

  >>> import xjax.numpy as jnp
  >>> jnp.c_[jnp.array([1, 2]), jnp.array([3, 4])]
  Array([[1, 3],
         [2, 4]], dtype=int32)

  Mirrors `jax.numpy.c_`.
  """
  axis = -1
  ndmin = 2
  trans1d = 0
  op_name = "c_"


r_ = RClass()
c_ = CClass()

# Index expressions hold no arrays: NumPy's helpers are JAX's too.
s_ = np.s_
index_exp = np.index_exp


# ----------------------------------------------------------------------------
# Index arrays


def ix_(*args):
  """An open mesh from 1-D index sequences, for outer indexing ``a[ix_(i, j)]``.

  Args:
    *args: 1-D integer (or other non-boolean) arrays.

  Returns:
    A tuple whose item ``i`` has shape ``(1, ..., len(args[i]), ..., 1)``; an
    empty input gives an integer (default int dtype) array, as in NumPy.

  Raises:
    TypeError: an input is not an array or scalar.
    ValueError: an input is not 1-D.
    NotImplementedError: a boolean input.

  >>> import xjax.numpy as jnp
  >>> jnp.ix_(jnp.array([0, 2]), jnp.array([1, 3, 4]))
  (Array([[0],
         [2]], dtype=int32), Array([[1, 3, 4]], dtype=int32))

  Mirrors `jax.numpy.ix_`.
  """
  args = [ufuncs._asarray(a) for a in util._ensure_all("ix", args)]
  out = []
  for i, a in enumerate(args):
    a_shape = util.shape(a)
    if len(a_shape) != 1:
      raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape {a_shape}")
    if dtype_of(a) == np.bool_:
      raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
    shape = [1] * len(args)
    shape[i] = a_shape[0]
    if a_shape[0] == 0:
      # NumPy gives empty index arrays an integer dtype.
      out.append(lax_structural.full(tuple(shape), 0, dtypes.canonicalize_dtype(np.intp)))
    else:
      out.append(lax_structural.broadcast_in_dim(a, tuple(shape), (i,)))
  return tuple(out)


def indices(dimensions, dtype=None, sparse: bool = False):
  """The index of every position of a grid of shape `dimensions`.

  Args:
    dimensions: a sequence of concrete non-negative ints.
    dtype: a numeric (not boolean) dtype; default the default int dtype.
    sparse: return broadcastable arrays instead of one stacked array.

  Returns:
    An array of shape ``(len(dimensions), *dimensions)`` whose slice ``i``
    holds the index along axis ``i``; with `sparse`, a tuple whose item ``i``
    has shape ``(1, ..., dimensions[i], ..., 1)``.

  Raises:
    ConcretizationTypeError: a traced dimension.
    TypeError: a non-integer or negative dimension, or a boolean dtype.

  >>> import xjax.numpy as jnp
  >>> jnp.indices((2, 3))
  Array([[[0, 0, 0],
          [1, 1, 1]],
  <BLANKLINE>
         [[0, 1, 2],
          [0, 1, 2]]], dtype=int32)

  Mirrors `jax.numpy.indices`.
  """
  dtype = dtypes.check_user_dtype_supported(int if dtype is None else dtype, "indices")
  dims = tuple(util.concrete_int(d, "dimensions argument of jnp.indices") for d in dimensions)
  out = []
  for i, size in enumerate(dims):
    shape = (1,) * i + (size,) + (1,) * (len(dims) - i - 1) if sparse else dims
    out.append(lax_structural.broadcast_in_dim(lax_structural.iota(dtype, size), shape, (i,)))
  if sparse:
    return tuple(out)
  return lax_numpy.stack(out, 0) if out else creation.array([], dtype=dtype)


def diag_indices(n: int, ndim: int = 2):
  """The indices of the main diagonal of an ``(n, n, ..., n)`` array.

  Args:
    n: the side length (a concrete non-negative int).
    ndim: the number of dimensions (a concrete non-negative int).

  Returns:
    A tuple of `ndim` copies of ``arange(n)`` (default int dtype).

  Raises:
    ConcretizationTypeError: a traced argument.
    ValueError: a negative argument.

  >>> import xjax.numpy as jnp
  >>> jnp.diag_indices(3)
  (Array([0, 1, 2], dtype=int32), Array([0, 1, 2], dtype=int32))

  Mirrors `jax.numpy.diag_indices`.
  """
  n = util.concrete_int(n, "'n' argument of jnp.diag_indices()")
  ndim = util.concrete_int(ndim, "'ndim' argument of jnp.diag_indices()")
  if n < 0:
    raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
  if ndim < 0:
    raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
  return (lax_structural.iota(dtypes.default_int_dtype(), n),) * ndim


def diag_indices_from(arr):
  """The indices of the main diagonal of `arr`, whose sides must all be equal.

  Args:
    arr: an array with at least 2 dimensions, all of one length.

  Returns:
    The result of ``diag_indices(arr.shape[0], arr.ndim)``.

  Raises:
    TypeError: `arr` is not an array.
    ValueError: `arr` has fewer than 2 dimensions or unequal sides.

  Mirrors `jax.numpy.diag_indices_from`.
  """
  arr = util.ensure_arraylike("diag_indices_from", arr)
  shape = util.shape(arr)
  if len(shape) < 2:
    raise ValueError("input array must be at least 2-d")
  if len(set(shape)) != 1:
    raise ValueError("All dimensions of input must be of equal length")
  return diag_indices(shape[0], ndim=len(shape))


# ----------------------------------------------------------------------------
# Triangles


def tri(N: int, M: int | None = None, k: int = 0, dtype=None):
  """The ``(N, M)`` array with ones on and below the k-th diagonal, zeros above.

  Args:
    N: number of rows (concrete).
    M: number of columns (concrete; default N).
    k: the diagonal: 0 is the main one, positive above, negative below. An
      integer, which may be traced.
    dtype: the dtype (default float32, whatever x64 says).

  Returns:
    An array of shape ``(N, M)`` that is 1 where ``j <= i + k``.

  Raises:
    TypeError: a traced or non-integer `N`/`M`, a negative size, a
      non-integer `k`, or an unsupported dtype.

  >>> import xjax.numpy as jnp
  >>> jnp.tri(3, 4, k=1, dtype=int)
  Array([[1, 1, 0, 0],
         [1, 1, 1, 0],
         [1, 1, 1, 1]], dtype=int32)

  Mirrors `jax.numpy.tri`.
  """
  dtype = (np.dtype(np.float32) if dtype is None
           else dtypes.check_user_dtype_supported(dtype, "tri"))
  shape = (N, N if M is None else M)
  if not isinstance(k, (int, core.Tracer)):  # bools pass, to be refused below
    k = operator.index(k)
  offset = creation.asarray(k)
  if not dtypes.issubdtype(dtype_of(offset), np.integer):
    raise TypeError(f"offset must be an integer, got {offset!r}")
  index_dtype = np.dtype(np.int32)
  info = np.iinfo(dtype_of(offset))
  if info.min < np.iinfo(np.int32).min or info.max > np.iinfo(np.int32).max:
    index_dtype = dtypes.canonicalize_dtype(np.int64)
  shape = core.canonicalize_shape(shape)
  if isinstance(k, core.Tracer):
    return _tri(offset, k=None, shape=shape, index_dtype=index_dtype, dtype=dtype)
  return _tri(None, k=int(k), shape=shape, index_dtype=index_dtype, dtype=dtype)


@jit(static_argnames=("k", "shape", "index_dtype", "dtype"), inline=True)
def _tri(offset, *, k, shape, index_dtype, dtype):
  # A concrete k is a literal of the jaxpr (JAX folds its conversion); a traced one is converted.
  shift = np.array(k, index_dtype) if offset is None else lax.convert_element_type(offset,
                                                                                   index_dtype)
  shifted_rows = lax.add(lax_structural.broadcasted_iota(index_dtype, shape, 0), shift)
  below = lax.ge(shifted_rows, lax_structural.broadcasted_iota(index_dtype, shape, 1))
  return lax.convert_element_type(below, dtype)


def _triu_count(n: int, m: int, k: int) -> int:
  """How many (i, j) of an (n, m) grid have ``j - i >= k``."""
  if k < 0:
    # The complement is j - i < k, i.e. i - j >= 1 - k: the same count on the transpose.
    return n * m - _triu_count(m, n, 1 - k)
  rows = max(0, min(n, m - k))  # rows i with at least one such j; row i has m - k - i.
  return rows * (m - k) - rows * (rows - 1) // 2


def _triangle_indices(n, k, m, lower: bool):
  # JAX's messages name triu_indices for both functions; kept for identical errors.
  n = util.concrete_int(n, "n argument of jnp.triu_indices")
  k = util.concrete_int(k, "k argument of jnp.triu_indices")
  m = n if m is None else util.concrete_int(m, "m argument of jnp.triu_indices")
  return _triangle_nonzero(n, k, m, lower)


@jit(static_argnames=("n", "k", "m", "lower"), inline=True)
def _triangle_nonzero(n: int, k: int, m: int, lower: bool):
  # One executable when eager (nonzero is several ops); inlined while tracing.
  ones = creation.ones((n, m))
  if lower:
    mask, size = lax_numpy.tril(ones, k=k), _triu_count(m, n, -k)
  else:
    mask, size = lax_numpy.triu(ones, k=k), _triu_count(n, m, k)
  return lax_numpy.nonzero(mask, size=size)


def tril_indices(n, k=0, m=None):
  """The row and column indices of the lower triangle (``j <= i + k``) of an (n, m) array.

  Args:
    n: number of rows (concrete).
    k: the diagonal offset (concrete): 0 the main diagonal, positive above.
    m: number of columns (concrete; default n).

  Returns:
    ``(rows, cols)``, int32 arrays in row-major order.

  Raises:
    ConcretizationTypeError: a traced argument.
    TypeError: a non-integer argument or a negative size.

  >>> import xjax.numpy as jnp
  >>> jnp.tril_indices(3)
  (Array([0, 1, 1, 2, 2, 2], dtype=int32), Array([0, 0, 1, 0, 1, 2], dtype=int32))

  Mirrors `jax.numpy.tril_indices`.
  """
  return _triangle_indices(n, k, m, lower=True)


def triu_indices(n, k=0, m=None):
  """The row and column indices of the upper triangle (``j >= i + k``) of an (n, m) array.

  Args:
    n: number of rows (concrete).
    k: the diagonal offset (concrete): 0 the main diagonal, positive above.
    m: number of columns (concrete; default n).

  Returns:
    ``(rows, cols)``, int32 arrays in row-major order.

  Raises:
    ConcretizationTypeError: a traced argument.
    TypeError: a non-integer argument or a negative size.

  >>> import xjax.numpy as jnp
  >>> jnp.triu_indices(3, k=1)
  (Array([0, 0, 1], dtype=int32), Array([1, 2, 2], dtype=int32))

  Mirrors `jax.numpy.triu_indices`.
  """
  return _triangle_indices(n, k, m, lower=False)


def _shape_2d(name: str, arr) -> tuple[int, ...]:
  shape = arr.shape if hasattr(arr, "shape") else util.shape(util.ensure_arraylike(name, arr))
  if len(shape) != 2:
    raise ValueError("Only 2-D inputs are accepted")
  return shape


def tril_indices_from(arr, k: int = 0):
  """`tril_indices` for the shape of the 2-D `arr` (anything with a ``shape``).

  Raises:
    TypeError: `arr` is not an array and has no ``shape``.
    ValueError: `arr` is not 2-D.

  Mirrors `jax.numpy.tril_indices_from`.
  """
  n, m = _shape_2d("tril_indices_from", arr)
  return tril_indices(n, k=k, m=m)


def triu_indices_from(arr, k: int = 0):
  """`triu_indices` for the shape of the 2-D `arr` (anything with a ``shape``).

  Raises:
    TypeError: `arr` is not an array and has no ``shape``.
    ValueError: `arr` is not 2-D.

  Mirrors `jax.numpy.triu_indices_from`.
  """
  n, m = _shape_2d("triu_indices_from", arr)
  return triu_indices(n, k=k, m=m)


def mask_indices(n: int, mask_func, k: int = 0, *, size: int | None = None):
  """The indices where ``mask_func(ones((n, n)), k)`` is non-zero.

  Args:
    n: the side of the square array (concrete).
    mask_func: a function like `tril` or `triu` taking ``(array, k)``.
    k: passed to `mask_func`.
    size: the static number of indices to return (required under `jit`);
      extra positions are filled with 0, missing ones dropped.

  Returns:
    ``(rows, cols)``, int32 arrays.

  Raises:
    ConcretizationTypeError: `size` is None under a transformation.

  >>> import xjax.numpy as jnp
  >>> jnp.mask_indices(3, jnp.triu, 1)
  (Array([0, 0, 1], dtype=int32), Array([1, 2, 2], dtype=int32))

  Mirrors `jax.numpy.mask_indices`.
  """
  rows, cols = lax_numpy.nonzero(mask_func(creation.ones((n, n)), k), size=size)
  return rows, cols


@jit(static_argnames=("N", "increasing"))
def vander(x, N: int | None = None, increasing: bool = False):
  """The Vandermonde matrix of `x`: column ``j`` is ``x ** (N - 1 - j)``.

  Args:
    x: a 1-D numeric (not boolean) array.
    N: the number of columns (static; default ``len(x)``).
    increasing: if True, column ``j`` is ``x ** j`` instead.

  Returns:
    An array of shape ``(len(x), N)`` and x's dtype.

  Raises:
    TypeError: `x` is not an array, or is boolean.
    ValueError: `x` is not 1-D, or `N` is negative.

  >>> import xjax.numpy as jnp
  >>> jnp.vander(jnp.array([1, 2, 3]))
  Array([[1, 1, 1],
         [4, 2, 1],
         [9, 3, 1]], dtype=int32)

  Mirrors `jax.numpy.vander`.
  """
  x = util.ensure_arraylike("vander", x)
  if util.ndim(x) != 1:
    raise ValueError("x must be a one-dimensional array")
  N = util.shape(x)[0] if N is None else util.concrete_int(N, "'N' argument of jnp.vander()")
  if N < 0:
    raise ValueError("N must be nonnegative")
  powers = lax_structural.iota(dtype_of(x), N)
  if not increasing:
    powers = lax.sub(util.const_like(powers, N - 1), powers)
  return ufuncs.power(lax_numpy.expand_dims(x, 1), lax_numpy.expand_dims(powers, 0))
