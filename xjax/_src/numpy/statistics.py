"""Order statistics, binning and moments: searchsorted, digitize, the quantile
family (percentile, quantile, median and their nan* forms), average, cov,
corrcoef and the histograms.

All are compositions of lax operations and other jnp functions; none adds a
primitive. As in JAX, the quantiles sort along the reduced axis and gather the
two neighbouring order statistics, and the histograms bin with `searchsorted`
and count with `bincount`.
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax.control_flow import loops as lax_loops
from xjax._src.lax import elementwise as lax
from xjax._src.lax import slicing as lax_slicing
from xjax._src.lax import sorting as lax_sorting
from xjax._src.lax import structural as lax_structural
from xjax._src.numpy import (creation, indexing, lax_numpy, reductions, sorting,
                             tensor_contractions, ufuncs)
from xjax._src.numpy import util

# ----------------------------------------------------------------------------
# searchsorted and digitize

_SEARCH_METHODS = ("compare_all", "scan", "scan_unrolled", "sort")


def _real_lt(x, y):
  """x < y in the total order that puts NaN after every number (NaN == NaN)."""
  if not dtypes.issubdtype(util.dtype_of(x), np.inexact):
    return lax.lt(x, y)
  return lax.bitwise_or(lax.lt(x, y), lax.bitwise_and(lax.ne(y, y), lax.eq(x, x)))


def _sort_lt(x, y):
  """x < y with NaNs last; complex values compare by real, then imaginary part."""
  if not dtypes.issubdtype(util.dtype_of(x), np.complexfloating):
    return _real_lt(x, y)
  xr, xi, yr, yi = lax.real(x), lax.imag(x), lax.real(y), lax.imag(y)
  real_eq = lax.bitwise_not(lax.bitwise_or(_real_lt(xr, yr), _real_lt(yr, xr)))
  return lax.bitwise_or(_real_lt(xr, yr), lax.bitwise_and(real_eq, _real_lt(xi, yi)))


def _goes_after(a_elt, v, right: bool):
  """Whether v belongs after a_elt: a_elt < v (side='left') or a_elt <= v (side='right')."""
  return lax.bitwise_not(_sort_lt(v, a_elt)) if right else _sort_lt(a_elt, v)


def _search_compare_all(a, v, right, dtype):
  a_col, v = util.broadcast_arrays_(
      lax_structural.reshape(a, util.shape(a) + (1,) * util.ndim(v)), v)
  hits = lax.convert_element_type(_goes_after(a_col, v, right), dtype)
  return reductions.sum(hits, axis=0, dtype=dtype)


def _search_step(a, v, right, lo, hi):
  """One step of binary search: narrows [lo, hi) to the half holding v's position."""
  n = util.shape(a)[0]
  active = lax.lt(lo, hi)
  mid = lax.add(lo, lax.div(lax.sub(hi, lo), util.const_like(lo, 2)))  # no overflow
  a_mid = a[lax.min(mid, util.const_like(mid, n - 1))]
  after = lax.bitwise_and(active, _goes_after(a_mid, v, right))
  before = lax.bitwise_and(active, lax.bitwise_not(after))
  lo = lax.select_n(after, lo, lax.add(mid, util.const_like(mid, 1)))
  hi = lax.select_n(before, hi, mid)
  return lo, hi


def _search_scan(a, v, right, dtype, unrolled=False):
  n = util.shape(a)[0]
  steps = builtins.max(1, int(n).bit_length())  # ceil(log2(n + 1)) halvings
  lo = lax_structural.full(util.shape(v), 0, dtype)
  # np.array raises OverflowError when n does not fit the index dtype (x64 off, huge a):
  # a wrapped bound would give wrong indices.
  hi = lax_structural.full(util.shape(v), np.array(n, dtype), dtype)
  if unrolled:
    for _ in range(steps):
      lo, hi = _search_step(a, v, right, lo, hi)
    return lo
  lo, _ = lax_loops.fori_loop(
      0, steps, lambda _, c: _search_step(a, v, right, *c), (lo, hi))
  return lo


def _rank(x, dtype):
  """The position of each element of the 1-D x in a stable sort of x."""
  return sorting.argsort(sorting.argsort(x), dtype=dtype)


def _search_sort(a, v, right, dtype):
  v_flat = lax_structural.reshape(v, (util.aval_of(v).size,))
  m = util.aval_of(v).size
  if right:  # array elements first: equal queries land after them
    pos = _rank(lax_structural.concatenate([a, v_flat], 0), dtype)[util.shape(a)[0]:]
  else:
    pos = _rank(lax_structural.concatenate([v_flat, a], 0), dtype)[:m]
  return lax_structural.reshape(lax.sub(pos, _rank(v_flat, dtype)), util.shape(v))


@jit(static_argnames=("side", "method"))
def searchsorted(a, v, side: str = "left", sorter=None, *, method: str = "scan"):
  """Indices at which the elements of `v` would be inserted to keep `a` sorted.

  NaNs count as larger than every number, as in a sort.

  Args:
    a: a sorted 1-D array (or any 1-D array when `sorter` is given).
    v: the values to insert, of any shape.
    side: 'left' gives the first suitable index, 'right' the last.
    sorter: optional integer indices that sort `a`.
    method: 'scan' (binary search in a loop), 'scan_unrolled' (the same,
      unrolled), 'sort' (one sort of both arrays) or 'compare_all' (compares
      every pair); all give the same result.

  Returns:
    An int32 array (int64 with x64 and huge `a`) of v's shape.

  Raises:
    ValueError: `a` is not 1-D, or `side` or `method` is not valid.

  Example:
    >>> import xjax.numpy as jnp
    >>> jnp.searchsorted(jnp.array([1., 2., 2., 3.]), jnp.array([2., 2.5]))
    Array([1, 3], dtype=int32)
    >>> jnp.searchsorted(jnp.array([1., 2., 2., 3.]), 2., side='right')
    Array(3, dtype=int32)

  Mirrors `jax.numpy.searchsorted`.
  """
  if sorter is None:
    a, v = util.ensure_arraylike("searchsorted", a, v)
  else:
    a, v, sorter = util.ensure_arraylike("searchsorted", a, v, sorter)
    a = a[sorter]
  if side not in ("left", "right"):
    raise ValueError(f"invalid argument side={side!r}, expected 'left' or 'right'")
  if method not in _SEARCH_METHODS:
    raise ValueError(f"invalid argument method={method!r}, expected one of "
                     f"{list(_SEARCH_METHODS)}")
  if util.ndim(a) != 1:
    raise ValueError("a should be 1-dimensional")
  a, v = util.promote_dtypes(a, v)
  n = util.shape(a)[0]
  # As JAX: int64 past int32's range; without x64 that request warns and is truncated.
  dtype = np.dtype(np.int32) if n <= np.iinfo(np.int32).max else \
      dtypes.check_user_dtype_supported(np.int64, "searchsorted")
  if n == 0:
    return lax_structural.full(util.shape(v), 0, dtype)
  right = side == "right"
  if method == "compare_all":
    return _search_compare_all(a, v, right, dtype)
  if method == "sort":
    return _search_sort(a, v, right, dtype)
  return _search_scan(a, v, right, dtype, unrolled=method == "scan_unrolled")


@jit(static_argnames=("right", "method"))
def digitize(x, bins, right: bool = False, *, method: str | None = None):
  """The index of the bin of `bins` that holds each element of `x`.

  With increasing bins, ``bins[i-1] <= x < bins[i]`` gives i (``<`` and ``<=``
  swap when `right` is True); decreasing bins are also accepted.

  Args:
    x: an array of values.
    bins: a 1-D monotonic array of bin edges.
    right: whether bins include their right edge instead of their left.
    method: the `searchsorted` method (default 'scan').

  Returns:
    An int32 array of x's shape.

  Raises:
    ValueError: `bins` is not 1-D, or `method` is not valid.

  Example:
    >>> import xjax.numpy as jnp
    >>> jnp.digitize(jnp.array([0.5, 1., 2.5]), jnp.array([1., 2., 3.]))
    Array([0, 1, 2], dtype=int32)

  Mirrors `jax.numpy.digitize`.
  """
  x, bins = util.ensure_arraylike("digitize", x, bins)
  right = bool(util.concrete_or_error(right, "right argument of jnp.digitize()"))
  if util.ndim(bins) != 1:
    raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
  n = util.shape(bins)[0]
  if n == 0:
    return lax_structural.full(util.shape(x), 0, np.int32)
  side = "left" if right else "right"
  kwargs = {} if method is None else {"method": method}
  increasing = searchsorted(bins, x, side=side, **kwargs)
  decreasing = ufuncs.subtract(n, searchsorted(lax_structural.rev(bins, (0,)), x, side=side,
                                               **kwargs))
  return util.where_(lax.ge(bins[-1], bins[0]), increasing, decreasing)


# ----------------------------------------------------------------------------
# Quantiles

_QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _check_quantile_args(name, a, q, out, overwrite_input, weights, msg_name=None):
  a, q = util.ensure_arraylike(name, a, q)
  if weights is not None:
    weights = util.ensure_arraylike(name, weights)
  if overwrite_input or out is not None:
    raise ValueError(f"jax.numpy.{msg_name or name} does not support overwrite_input=True "
                     "or out != None")
  return a, q, weights


def _move_axes_last(a, axes):
  """`a` with `axes` moved to the end and merged into one axis."""
  keep = [d for d in range(util.ndim(a)) if d not in axes]
  a = lax_structural.transpose(a, tuple(keep) + tuple(axes))
  kept_shape = tuple(util.shape(a)[:len(keep)])
  return lax_structural.reshape(a, kept_shape + (math.prod(util.shape(a)[len(keep):]),))


def _quantile(a, q, axis, method, keepdims, skip_nans, weights):
  """The q-th quantiles of `a` over `axis` (see `quantile`); NaNs ignored when skip_nans."""
  if method not in _QUANTILE_METHODS:
    raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' "
                     "or 'inverted_cdf'")
  if weights is not None:
    if dtypes.issubdtype(util.dtype_of(weights), np.complexfloating):
      raise ValueError("Weights cannot be complex types.")
    if method != "inverted_cdf":
      raise NotImplementedError(f"{method} doesn't support weights. Only method "
                                "'inverted_cdf' supports weights.")
    a, weights = util.promote_dtypes_inexact(a, weights)
    if util.shape(weights) != util.shape(a):
      if axis is None:
        raise ValueError("Weights shape must match 'a' shape when axis is None.")
      axes = util.canonicalize_axes(axis, util.ndim(a))
      axes_shape = tuple(util.shape(a)[d] for d in axes)
      if util.shape(weights) != axes_shape:
        raise ValueError(f"Weights shape {util.shape(weights)} must match reduction axes "
                         f"{axes_shape}")
      weights = lax_structural.broadcast_in_dim(weights, util.shape(a), axes)
  else:
    a, = util.promote_dtypes_inexact(a)
  if dtypes.issubdtype(util.dtype_of(a), np.complexfloating):
    raise ValueError("quantile does not support complex input, as the operation is poorly "
                     "defined.")
  q_ndim = util.ndim(q)
  if q_ndim > 1:
    raise ValueError(f"q must be have rank <= 1, got shape {util.shape(q)}")
  # Reduce over one axis: the flattened array, or the given axes merged at the end.
  keep_shape = None
  if axis is None:
    if keepdims:
      keep_shape = (1,) * util.ndim(a)
    a = lax_structural.reshape(a, (util.aval_of(a).size,))
    weights = None if weights is None else lax_structural.reshape(weights, util.shape(a))
    axis = 0
  elif isinstance(axis, tuple):
    axes = tuple(util.canonicalize_axis(d, util.ndim(a)) for d in axis)
    if len(set(axes)) != len(axes):
      raise ValueError("repeated axis")
    keep_shape = tuple(1 if d in axes else s for d, s in enumerate(util.shape(a)))
    a = _move_axes_last(a, axes)
    weights = None if weights is None else _move_axes_last(weights, axes)
    axis = util.ndim(a) - 1
  else:
    axis = util.canonicalize_axis(axis, util.ndim(a))
  n = util.shape(a)[axis]
  if n == 0:  # JAX fails here in its gather of the order statistics
    raise TypeError(f"Slice size at index {axis} in gather op is out of range, must be within "
                    "[0, 0 + 1), got 1.")

  isnan = lax.ne(a, a)
  if skip_nans:
    a = util.where_(isnan, np.nan, a)  # NaNs with a positive sign sort last
    count = reductions.sum(lax.bitwise_not(isnan), axis=axis, dtype=util.dtype_of(q),
                           keepdims=True)
  else:
    a = util.where_(reductions.any(isnan, axis=axis, keepdims=True), np.nan, a)
    count = lax_structural.full((1,) * util.ndim(a), n, util.dtype_of(q))
  if weights is not None:
    a, weights = lax_sorting.sort_key_val(a, weights, dimension=axis)
  else:
    a = lax_sorting.sort(a, dimension=axis)

  # q goes first in the result: q's axis, then a's axes (the reduced one kept as 1).
  q_b = lax_structural.reshape(q, util.shape(q) + (1,) * util.ndim(a))
  count_b = lax_structural.reshape(count, (1,) * q_ndim + util.shape(count))
  if method == "inverted_cdf":
    result = _inverted_cdf(a, q_b, count_b, q_ndim, axis, weights, skip_nans)
  else:
    pos = lax.mul(q_b, lax.sub(count_b, util.const_like(count_b, 1)))
    low, high = lax.floor(pos), lax.ceil(pos)
    high_weight = lax.sub(pos, low)
    low_weight = lax.sub(util.const_like(high_weight, 1), high_weight)
    last = lax.sub(count_b, util.const_like(count_b, 1))
    zero = util.const_like(low, 0)
    low = lax.convert_element_type(lax.max(zero, lax.min(low, last)), dtypes.default_int_dtype())
    high = lax.convert_element_type(lax.max(zero, lax.min(high, last)),
                                    dtypes.default_int_dtype())
    a_b = lax_structural.reshape(a, (1,) * q_ndim + util.shape(a))
    low_value = _take_along(a_b, low, axis + q_ndim)
    high_value = _take_along(a_b, high, axis + q_ndim)
    if method == "linear":
      qd = util.dtype_of(q)
      result = lax.add(lax.mul(lax.convert_element_type(low_value, qd), low_weight),
                       lax.mul(lax.convert_element_type(high_value, qd), high_weight))
    elif method == "lower":
      result = low_value
    elif method == "higher":
      result = high_value
    elif method == "nearest":
      result = util.where_(lax.le(high_weight, util.const_like(high_weight, 0.5)),
                           low_value, high_value)
    else:  # midpoint
      result = lax.mul(lax.add(low_value, high_value), util.const_like(low_value, 0.5))
  if keepdims and keep_shape:
    result = lax_structural.reshape(result, util.shape(q) + keep_shape)
  elif not keepdims:
    result = lax_structural.squeeze(result, (axis + q_ndim,))
  return lax.convert_element_type(result, util.dtype_of(a))


def _take_along(arr, idx, axis):
  """arr's elements at positions idx along axis (arr broadcast to idx's other dims)."""
  drop_axis = lambda shp: shp[:axis] + (1,) + shp[axis + 1:]  # noqa: E731
  shape = util.broadcast_shapes(drop_axis(util.shape(arr)), drop_axis(util.shape(idx)))
  arr = util.broadcast_to(arr, shape[:axis] + (util.shape(arr)[axis],) + shape[axis + 1:])
  idx = util.broadcast_to(idx, shape)
  return indexing.take_along_axis(arr, idx, axis)


def _inverted_cdf(a, q, count, lead, axis, weights, skip_nans):
  """The first sorted value whose cumulative weight reaches q times the total weight.

  `a` and `weights` are sorted along `axis`; `q` and `count` carry `lead` extra
  leading dims (q's axis) and keep the reduced axis as size 1.
  """
  if weights is None:
    weights = lax_structural.full(util.shape(a), 1, util.dtype_of(a))
  nan_data = lax.ne(a, a)
  bad = lax.bitwise_or(lax.lt(weights, util.const_like(weights, 0)), lax.ne(weights, weights))
  clean = util.where_(lax.bitwise_or(bad, nan_data), util.const_like(weights, 0), weights)
  cum = reductions.cumsum(clean, axis=axis)
  total = lax_slicing.slice_in_dim(cum, util.shape(cum)[axis] - 1, None, axis=axis)
  lift = lambda x: lax_structural.reshape(x, (1,) * lead + util.shape(x))  # noqa: E731
  is_less = lax.lt(lift(cum), lax.mul(q, lift(total)))
  idx = reductions.sum(lax.convert_element_type(is_less, dtypes.default_int_dtype()),
                       axis=axis + lead, keepdims=True)
  limit = lax.convert_element_type(lax.sub(count, util.const_like(count, 1)),
                                   dtypes.default_int_dtype())
  idx = lax.max(util.const_like(idx, 0), lax.min(idx, limit))
  result = _take_along(lift(a), idx, axis + lead)
  force_nan = reductions.any(bad, axis=axis, keepdims=True)
  if skip_nans:
    force_nan = lax.bitwise_or(lift(force_nan), lax.eq(count, util.const_like(count, 0)))
  else:
    force_nan = lift(lax.bitwise_or(force_nan, reductions.any(nan_data, axis=axis,
                                                               keepdims=True)))
  return util.where_(force_nan, np.nan, result)


_Q_STATICS = ("axis", "overwrite_input", "keepdims", "method")


def _quantile_doc(name: str, what: str, nan: bool) -> str:
  nan_text = ("NaNs are ignored (all-NaN slices give NaN)." if nan else
              "A slice holding a NaN gives NaN.")
  return f"""The {what} of `a` along `axis`. {nan_text}

  Args:
    a: an array (integers and bools are promoted to float; complex is refused).
    q: a scalar or 1-D array of {'percentages in [0, 100]' if 'percent' in name else
                                  'probabilities in [0, 1]'}.
    axis: an int, a tuple of ints, or None (the flattened array).
    out, overwrite_input: unsupported (must be None and False).
    method: 'linear', 'lower', 'higher', 'midpoint', 'nearest' or
      'inverted_cdf'.
    keepdims: keep the reduced axes with size 1.
    weights: per-element weights (of a's shape, or of the reduced axes'
      shape); only with method='inverted_cdf'.

  Returns:
    An array of a's inexact dtype with q's axis first, then a's unreduced axes.

  Raises:
    ValueError: `out` or `overwrite_input` given, an unknown method, q of rank
      above 1, complex `a` or complex weights, or weights of the wrong shape.
    NotImplementedError: weights with a method other than 'inverted_cdf'.
    TypeError: the reduced axis has size 0 (JAX's gather error).

  Mirrors `jax.numpy.{name}`.
  """


@jit(static_argnames=_Q_STATICS)
def quantile(a, q, axis: int | tuple[int, ...] | None = None, out=None,
             overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
             *, weights=None):
  a, q, weights = _check_quantile_args("quantile", a, q, out, overwrite_input, weights)
  return _quantile(a, q, axis, method, keepdims, False, weights)


@jit(static_argnames=_Q_STATICS)
def nanquantile(a, q, axis: int | tuple[int, ...] | None = None, out=None,
                overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
                *, weights=None):
  a, q, weights = _check_quantile_args("nanquantile", a, q, out, overwrite_input, weights)
  return _quantile(a, q, axis, method, keepdims, True, weights)


@jit(static_argnames=(*_Q_STATICS, "out_sharding"))
def percentile(a, q, axis: int | tuple[int, ...] | None = None, out=None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
               *, weights=None, out_sharding=None):
  if out_sharding is not None:
    raise NotImplementedError("percentile: out_sharding is not supported by xjax.")
  a, q, weights = _check_quantile_args("percentile", a, q, out, overwrite_input, weights,
                                          "quantile")
  q, = util.promote_dtypes_inexact(q)
  return quantile(a, ufuncs.true_divide(q, 100), axis=axis, method=method, keepdims=keepdims,
                  weights=weights)


@jit(static_argnames=_Q_STATICS)
def nanpercentile(a, q, axis: int | tuple[int, ...] | None = None, out=None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights=None):
  a, q, weights = _check_quantile_args("nanpercentile", a, q, out, overwrite_input,
                                          weights, "nanquantile")
  q, = util.promote_dtypes_inexact(q)
  return nanquantile(a, ufuncs.true_divide(q, 100), axis=axis, method=method,
                     keepdims=keepdims, weights=weights)


quantile.__doc__ = _quantile_doc("quantile", "q-th quantiles", False)
nanquantile.__doc__ = _quantile_doc("nanquantile", "q-th quantiles", True)
percentile.__doc__ = _quantile_doc("percentile", "q-th percentiles", False).replace(
    "  Returns:", "  out_sharding: unsupported (must be None).\n\n  Returns:")
nanpercentile.__doc__ = _quantile_doc("nanpercentile", "q-th percentiles", True)


@jit(static_argnames=("axis", "overwrite_input", "keepdims"))
def median(a, axis: int | tuple[int, ...] | None = None, out=None,
           overwrite_input: bool = False, keepdims: bool = False):
  """The median of `a` along `axis`: the middle value, or the mean of the two
  middle values. A slice holding a NaN gives NaN.

  Args:
    a: an array (integers and bools give the default float dtype).
    axis: an int, a tuple of ints, or None (the flattened array).
    out, overwrite_input: unsupported (must be None and False).
    keepdims: keep the reduced axes with size 1.

  Returns:
    An array of a's inexact dtype.

  Raises:
    ValueError: `out` or `overwrite_input` given, or complex `a`.
    TypeError: a reduced axis of size 0 (JAX's gather error).

  Example:
    >>> import xjax.numpy as jnp
    >>> jnp.median(jnp.array([[1., 5., 2.], [4., 3., 6.]]), axis=1)
    Array([2., 4.], dtype=float32)

  Mirrors `jax.numpy.median`.
  """
  a = util.ensure_arraylike("median", a)
  return quantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                  keepdims=keepdims, method="midpoint")


@jit(static_argnames=("axis", "overwrite_input", "keepdims"))
def nanmedian(a, axis: int | tuple[int, ...] | None = None, out=None,
              overwrite_input: bool = False, keepdims: bool = False):
  """The median of `a` along `axis`, ignoring NaNs (all-NaN slices give NaN).

  Args:
    a: an array (integers and bools give the default float dtype).
    axis: an int, a tuple of ints, or None (the flattened array).
    out, overwrite_input: unsupported (must be None and False).
    keepdims: keep the reduced axes with size 1.

  Returns:
    An array of a's inexact dtype.

  Raises:
    ValueError: `out` or `overwrite_input` given, or complex `a`.
    TypeError: a reduced axis of size 0 (JAX's gather error).

  Mirrors `jax.numpy.nanmedian`.
  """
  a = util.ensure_arraylike("nanmedian", a)
  return nanquantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                     keepdims=keepdims, method="midpoint")


# ----------------------------------------------------------------------------
# Moments


@jit(static_argnames=("axis", "returned", "keepdims"))
def average(a, axis=None, weights=None, returned: bool = False, keepdims: bool = False):
  """The weighted mean of `a` along `axis`: sum(a * weights) / sum(weights).

  Args:
    a: an array.
    axis: an int, a tuple of ints, or None (all axes).
    weights: None (equal weights), an array of a's shape, or an array whose
      shape is that of a's `axis` dimensions (in the order given).
    returned: also return the sum of the weights.
    keepdims: keep the reduced axes with size 1.

  Returns:
    The average, of a's (and the weights') inexact dtype; with `returned`, the
    pair (average, sum of weights broadcast to the average's shape).

  Raises:
    ValueError: the weights' shape differs from a's and `axis` is None, or
      does not match a's shape along `axis`.

  Example:
    >>> import xjax.numpy as jnp
    >>> jnp.average(jnp.array([1., 2., 3.]), weights=jnp.array([3., 1., 0.]))
    Array(1.25, dtype=float32)

  Mirrors `jax.numpy.average`.
  """
  util.check_arraylike("average", a)
  axes = util.canonicalize_axes(axis, util.ndim(a))
  if weights is None:
    a = util.ensure_arraylike("average", a)
    a, = util.promote_dtypes_inexact(a)
    avg = reductions.mean(a, axis=axis, keepdims=keepdims)
    count = math.prod(util.shape(a)[d] for d in axes)
    weights_sum = lax_structural.full((), count, util.dtype_of(avg))
  else:
    a, weights = util.ensure_arraylike("average", a, weights)
    a, weights = util.promote_dtypes_inexact(a, weights)
    if util.shape(a) != util.shape(weights):
      if axis is None:
        raise ValueError("Axis must be specified when shapes of a and weights differ.")
      if util.shape(weights) != tuple(util.shape(a)[d] for d in axes):
        raise ValueError("Shape of weights must be consistent with shape of a along specified "
                         "axis.")
      weights = lax_structural.transpose(weights, tuple(int(i) for i in np.argsort(axes)))
      weights = lax_structural.reshape(
          weights, tuple(s if d in axes else 1 for d, s in enumerate(util.shape(a))))
    weights_sum = reductions.sum(weights, axis=axis, keepdims=keepdims)
    avg = ufuncs.true_divide(reductions.sum(ufuncs.multiply(a, weights), axis=axis,
                                            keepdims=keepdims), weights_sum)
  if returned:
    return avg, util.broadcast_to(weights_sum, util.shape(avg))
  return avg


@jit(static_argnames=("rowvar", "bias", "ddof", "dtype"))
def cov(m, y=None, rowvar: bool = True, bias: bool = False, ddof: int | None = None,
        fweights=None, aweights=None, dtype=None):
  """The covariance matrix of the variables in `m` (and `y`).

  Args:
    m: a 1-D or 2-D array; each row is a variable and each column an
      observation (the other way round when `rowvar` is False).
    y: optional extra variables, laid out like `m`.
    rowvar: whether rows (True) or columns (False) are the variables.
    bias: normalize by N instead of N - 1 (ignored when `ddof` is given).
    ddof: the delta degrees of freedom (default 1, or 0 with `bias`).
    fweights: optional 1-D integer frequency weights, one per observation.
    aweights: optional 1-D observation weights, one per observation.
    dtype: optional inexact dtype of the computation.

  Returns:
    A (V, V) array, or a scalar for a single variable (a (0, 0) array when
    there are no variables; NaNs when there are no observations).

  Raises:
    ValueError: `m` or `y` has more than 2 dimensions, or `dtype` is not
      inexact.
    RuntimeError: weights that are not 1-D or not one per observation.
    TypeError: `fweights` is not of an integer dtype.

  Example:
    >>> import xjax.numpy as jnp
    >>> jnp.cov(jnp.array([[0., 1., 2.], [2., 1., 0.]]))
    Array([[ 1., -1.],
           [-1.,  1.]], dtype=float32)

  Mirrors `jax.numpy.cov`.
  """
  if y is not None:
    m, y = util.promote_dtypes_inexact(*util.ensure_arraylike("cov", m, y))
    if util.ndim(y) > 2:
      raise ValueError("y has more than 2 dimensions")
  else:
    m, = util.promote_dtypes_inexact(util.ensure_arraylike("cov", m))
  if util.ndim(m) > 2:
    raise ValueError("m has more than 2 dimensions")
  if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
    raise ValueError(f"cov: dtype must be a subclass of float or complex; got dtype={dtype}")
  x = lax_numpy.atleast_2d(m)
  if not rowvar and util.ndim(m) != 1:
    x = lax_structural.transpose(x, (1, 0))
  if util.shape(x)[0] == 0:
    return lax_structural.full((0, 0), 0, dtypes.canonicalize_dtype(np.float64))
  if y is not None:
    y2 = lax_numpy.atleast_2d(y)
    if not rowvar and util.shape(y2)[0] != 1:
      y2 = lax_structural.transpose(y2, (1, 0))
    x = lax_numpy.concatenate((x, y2), axis=0)
  nvars, nobs = util.shape(x)
  if nobs == 0:
    return lax_structural.full(() if nvars == 1 else (nvars, nvars), np.nan, util.dtype_of(x))
  if ddof is None:
    ddof = 0 if bias else 1
  w = None
  if fweights is not None:
    fweights = util.ensure_arraylike("cov", fweights)
    _check_obs_weights("fweights", fweights, nobs)
    if not dtypes.issubdtype(util.dtype_of(fweights), np.integer):
      raise TypeError("fweights must be integer.")
    w = ufuncs.abs(fweights)
  if aweights is not None:
    aweights = util.ensure_arraylike("cov", aweights)
    _check_obs_weights("aweights", aweights, nobs)
    aweights = ufuncs.abs(aweights)
    w = aweights if w is None else ufuncs.multiply(w, aweights)
  if dtype is not None:
    x = lax.convert_element_type(x, dtype)
    w = None if w is None else lax.convert_element_type(w, dtype)
  avg, w_sum = average(x, axis=1, weights=w, returned=True)
  w_sum = w_sum[0]
  if w is None:
    f = nobs - ddof
  elif ddof == 0:
    f = w_sum
  elif aweights is None:
    f = ufuncs.subtract(w_sum, ddof)
  else:
    f = ufuncs.subtract(w_sum, ufuncs.true_divide(
        ufuncs.multiply(ddof, reductions.sum(ufuncs.multiply(w, aweights))), w_sum))
  x = ufuncs.subtract(x, avg[:, None])
  x_w = x if w is None else ufuncs.multiply(x, w[None, :])
  prod = tensor_contractions.dot(x, ufuncs.conjugate(lax_structural.transpose(x_w, (1, 0))))
  return lax_numpy.squeeze(ufuncs.true_divide(prod, f))


def _check_obs_weights(name, w, nobs):
  if util.ndim(w) > 1:
    raise RuntimeError(f"cannot handle multidimensional {name}")
  if util.ndim(w) == 0 or util.shape(w)[0] != nobs:
    raise RuntimeError(f"incompatible numbers of samples and {name}")


@jit(static_argnames=("rowvar", "dtype"))
def corrcoef(x, y=None, rowvar: bool = True, dtype=None):
  """The Pearson correlation coefficients of the variables in `x` (and `y`).

  Computed as cov(x, y) normalized by the standard deviations; real parts
  (and imaginary parts, for complex input) are clipped to [-1, 1].

  Args:
    x: a 1-D or 2-D array of variables (rows) and observations (columns).
    y: optional extra variables, laid out like `x`.
    rowvar: whether rows (True) or columns (False) are the variables.
    dtype: optional inexact dtype of the computation.

  Returns:
    A (V, V) array, or a scalar for a single variable (1, or NaN when its
    variance is zero).

  Raises:
    ValueError: more than 2 dimensions, or `dtype` is not inexact.

  Mirrors `jax.numpy.corrcoef`.
  """
  util.check_arraylike("corrcoef", x)
  if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
    raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got dtype={dtype}")
  c = cov(x, y, rowvar, dtype=dtype)
  if util.ndim(c) == 0:
    return ufuncs.true_divide(c, c)
  nv = util.shape(c)[0]
  d = c[np.arange(nv), np.arange(nv)]
  stddev = lax.convert_element_type(ufuncs.sqrt(ufuncs.real(d)), util.dtype_of(c))
  c = ufuncs.true_divide(ufuncs.true_divide(c, stddev[:, None]), stddev[None, :])
  real_part = ufuncs.clip(ufuncs.real(c), -1, 1)
  if dtypes.issubdtype(util.dtype_of(c), np.complexfloating):
    return lax.complex(real_part, ufuncs.clip(ufuncs.imag(c), -1, 1))
  return real_part


# ----------------------------------------------------------------------------
# Histograms


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 - NumPy's name
  """The edges of the bins that `histogram` would use.

  Args:
    a: an array of values.
    bins: a number of equal-width bins (a static int), or a 1-D array of
      edges (returned as they are, in a's inexact dtype).
    range: optional (low, high) bounds; default (a.min(), a.max()). A range of
      zero width is widened by 0.5 on each side.
    weights: ignored (accepted for NumPy compatibility).

  Returns:
    A 1-D array of ``bins + 1`` edges, of a's inexact dtype.

  Raises:
    NotImplementedError: `bins` is a string.
    ValueError: `range` is not a pair, or `a` is empty and `range` is None.
    ConcretizationTypeError: an integer `bins` that is traced.

  Mirrors `jax.numpy.histogram_bin_edges`.
  """
  del weights
  if isinstance(bins, str):
    raise NotImplementedError("string values for `bins` not implemented.")
  util.check_arraylike("histogram_bin_edges", a, bins)
  arr = creation.asarray(a)
  dtype = dtypes.to_inexact_dtype(util.dtype_of(arr))
  if np.ndim(bins) == 1:
    return creation.asarray(bins, dtype=dtype)
  num = operator.index(util.concrete_or_error(bins, "bins argument of histogram_bin_edges"))
  if range is None:
    range = [reductions.min(arr), reductions.max(arr)]  # noqa: A001
  rng = creation.asarray(range, dtype=dtype)
  if util.shape(rng) != (2,):
    raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
  flat = lax.eq(rng[1], rng[0])
  low = util.where_(flat, ufuncs.subtract(rng[0], 0.5), rng[0])
  high = util.where_(flat, ufuncs.add(rng[1], 0.5), rng[1])
  return creation.linspace(low, high, num + 1, dtype=dtype)


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
  """The histogram of the values of `a`.

  Bins are half-open ``[edge_i, edge_i+1)``, except the last, which also holds
  its right edge; values outside the edges are not counted.

  Args:
    a: an array (flattened).
    bins: a number of equal-width bins (a static int) or a 1-D array of edges.
    range: optional (low, high) bounds of the bins.
    weights: optional weights of a's shape, summed instead of counting.
    density: normalize so that the histogram integrates to 1.

  Returns:
    A pair (counts, bin_edges), both of a's (and the weights') inexact dtype.

  Raises:
    ValueError: weights of a different shape from `a`, or a bad `range`.

  Example:
    >>> import xjax.numpy as jnp
    >>> jnp.histogram(jnp.array([0., 1., 1., 3.]), bins=3)
    (Array([1., 2., 1.], dtype=float32), Array([0., 1., 2., 3.], dtype=float32))

  Mirrors `jax.numpy.histogram`.
  """
  if weights is None:
    a, _ = util.ensure_arraylike("histogram", a, bins)
    a, = util.promote_dtypes_inexact(a)
    weights = lax_structural.full(util.shape(a), 1, util.dtype_of(a))
  else:
    a, _, weights = util.ensure_arraylike("histogram", a, bins, weights)
    if util.shape(a) != util.shape(weights):
      raise ValueError("weights should have the same shape as a.")
    a, weights = util.promote_dtypes_inexact(a, weights)
  edges = histogram_bin_edges(a, bins, range, weights)
  nedges = util.shape(edges)[0]
  idx = searchsorted(edges, a, side="right")
  idx = util.where_(lax.eq(a, edges[-1]), nedges - 1, idx)
  flat_idx = lax_structural.reshape(idx, (util.aval_of(idx).size,))
  flat_w = lax_structural.reshape(weights, (util.aval_of(weights).size,))
  counts = lax_numpy.bincount(flat_idx, flat_w, length=nedges + 1)[1:nedges]
  if density:
    widths = ufuncs.subtract(edges[1:], edges[:-1])
    counts = ufuncs.true_divide(ufuncs.true_divide(counts, widths), reductions.sum(counts))
  return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
  """The 2-D histogram of the points (x[i], y[i]).

  Args:
    x, y: 1-D arrays of one length.
    bins: an int or a 1-D array of edges for both axes, or a pair of these
      (one per axis).
    range: optional ((xlow, xhigh), (ylow, yhigh)); either entry may be None.
    weights: optional 1-D weights, one per point.
    density: normalize so that the histogram integrates to 1.

  Returns:
    A triple (hist, x_edges, y_edges); hist has shape (nx, ny).

  Raises:
    ValueError: a bad `range`, or weights not one per point.

  Mirrors `jax.numpy.histogram2d`.
  """
  x, y = util.ensure_arraylike("histogram2d", x, y)
  try:
    nbins = len(bins)
  except TypeError:
    nbins = 1
  if nbins not in (1, 2):
    edges = creation.asarray(bins)
    bins = [edges, edges]
  sample = lax_numpy.stack([x, y], axis=1)
  hist, edges = histogramdd(sample, bins, range, weights, density)
  return hist, edges[0], edges[1]


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
  """The D-dimensional histogram of N points.

  Args:
    sample: an (N, D) array of points.
    bins: an int or 1-D array of edges for every dimension, or a sequence of
      D of these.
    range: optional sequence of D (low, high) pairs or Nones.
    weights: optional 1-D weights, one per point.
    density: normalize so that the histogram integrates to 1.

  Returns:
    A pair (hist, edges): hist of shape (nbins_0, ..., nbins_D-1) and a list
    of D 1-D edge arrays.

  Raises:
    ValueError: weights not one per point, a `range` that is not D pairs or
      Nones, or `bins` not one per dimension.

  Mirrors `jax.numpy.histogramdd`.
  """
  if weights is None:
    sample = util.ensure_arraylike("histogramdd", sample)
    sample, = util.promote_dtypes_inexact(sample)
  else:
    sample, weights = util.ensure_arraylike("histogramdd", sample, weights)
    if util.shape(weights) != util.shape(sample)[:1]:
      raise ValueError("should have one weight for each sample.")
    sample, weights = util.promote_dtypes_inexact(sample, weights)
  n, d = util.shape(sample)
  if range is not None and (len(range) != d or builtins.any(
      r is not None and np.shape(r)[0] != 2 for r in range)):
    raise ValueError(f"For sample.shape={(n, d)}, range must be a sequence of {d} pairs or "
                     f"Nones; got range={range}")
  try:
    bins_per_dim = list(bins)
  except TypeError:
    bins_per_dim = d * [bins]
  else:
    if len(bins_per_dim) != d:
      raise ValueError("should be a bin for each dimension.")
  flat_idx = None
  edges_by_dim, nbins = [], []
  for i in builtins.range(d):
    column = sample[:, i]
    edges = histogram_bin_edges(column, bins_per_dim[i], None if range is None else range[i])
    idx = searchsorted(edges, column, side="right")
    idx = util.where_(lax.eq(column, edges[-1]), ufuncs.subtract(idx, 1), idx)
    size = util.shape(edges)[0] + 1  # one under- and one overflow bin
    flat_idx = idx if flat_idx is None else ufuncs.add(ufuncs.multiply(flat_idx, size), idx)
    edges_by_dim.append(edges)
    nbins.append(size)
  hist = lax_numpy.bincount(flat_idx, weights, length=math.prod(nbins))
  hist = lax_structural.reshape(hist, tuple(nbins))
  hist = hist[(slice(1, -1),) * d]
  if density:
    hist = lax.convert_element_type(hist, util.dtype_of(sample))
    hist = ufuncs.true_divide(hist, reductions.sum(hist))
    for i, edges in enumerate(edges_by_dim):
      width = ufuncs.subtract(edges[1:], edges[:-1])
      hist = ufuncs.true_divide(hist, lax_structural.reshape(
          width, tuple(nbins[i] - 2 if j == i else 1 for j in builtins.range(d))))
  return hist, edges_by_dim
