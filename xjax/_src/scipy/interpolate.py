"""Interpolation on a regular grid (mirrors `jax.scipy.interpolate`)."""
from __future__ import annotations

import functools
import itertools
import operator

import numpy as np

import xjax.numpy as jnp
from xjax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from xjax._src.tree_util import register_pytree_node

_METHODS = ("linear", "nearest")


def _check_method(method):
  if method not in _METHODS:
    raise ValueError(f"method {method!r} is not defined")


def _points_array(xi, ndim):
  """The query points as one array whose last axis is the grid's dimension.

  A tuple of coordinate arrays (one per dimension) is broadcast and stacked
  along a new last axis; a 1-D array is read as points of dimension `ndim`.
  """
  if isinstance(xi, tuple) and len(xi) == 1:
    xi = xi[0]
  if isinstance(xi, tuple):
    coords = jnp.broadcast_arrays(*xi)
    return jnp.stack([c.astype(float) for c in coords], axis=-1)
  check_arraylike("_ndim_coords_from_arrays", xi)
  xi = jnp.asarray(xi)
  return xi.reshape(-1, ndim) if xi.ndim == 1 else xi


class RegularGridInterpolator:
  """Linear or nearest-neighbour interpolation on a rectilinear grid of any dimension.

  Args:
    points: a length-N sequence of 1-D arrays, the grid coordinates along each
      axis; each must be strictly increasing (not checked: a decreasing axis
      gives wrong results, as in JAX).
    values: an array whose first N axes match the lengths of `points` (extra
      trailing axes are carried along); promoted to an inexact dtype.
    method: 'linear' (default) or 'nearest'.
    bounds_error: must be False; True raises NotImplementedError.
    fill_value: the value at points outside the grid (default NaN); None
      extrapolates from the edge cells instead.

  Raises:
    ValueError: an unknown `method`; more point arrays than `values` has axes;
      a `fill_value` that cannot be cast (same kind) to `values`' dtype.
    NotImplementedError: `bounds_error=True`.
    TypeError: `points`, `values` or `fill_value` is not array-like.

  The interpolator is a pytree: `points`, `values` and `fill_value` are its
  children, `method` and `bounds_error` its static data.

  Mirrors `jax.scipy.interpolate.RegularGridInterpolator`.
  """

  def __init__(self, points, values, method="linear", bounds_error=False, fill_value=np.nan):
    _check_method(method)
    self.method = method
    self.bounds_error = bounds_error
    if bounds_error:
      raise NotImplementedError("`bounds_error` takes no effect under JIT")
    check_arraylike("RegularGridInterpolator", values)
    if len(points) > np.ndim(values):
      raise ValueError(f"there are {len(points)} point arrays, but values has "
                       f"{np.ndim(values)} dimensions")
    values = jnp.asarray(promote_dtypes_inexact(values)[0])
    if fill_value is not None:
      check_arraylike("RegularGridInterpolator", fill_value)
      fill_value = jnp.asarray(fill_value)
      if not np.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
        raise ValueError("fill_value must be either 'None' or of a type compatible with values")
    self.fill_value = fill_value
    check_arraylike("RegularGridInterpolator", *points)
    self.grid = tuple(jnp.asarray(p) for p in points)
    self.values = values

  def __call__(self, xi, method=None):
    """Interpolates at the points `xi`.

    Args:
      xi: the query points: an array of shape ``(..., N)``, a tuple of N
        broadcastable coordinate arrays, or (N = 1 only, or read as rows of
        N) a 1-D array.
      method: 'linear' or 'nearest'; None (default) uses the interpolator's.

    Returns:
      An array of shape ``xi.shape[:-1] + values.shape[N:]``.

    Raises:
      ValueError: an unknown `method`, or points of the wrong dimension.
    """
    method = self.method if method is None else method
    _check_method(method)
    ndim = len(self.grid)
    xi = _points_array(xi, ndim)
    if xi.shape[-1] != ndim:
      raise ValueError(f"the requested sample points xi have dimension {xi.shape[1]}, "
                       f"but this RegularGridInterpolator has dimension {ndim}")
    batch_shape = xi.shape[:-1]
    xi = xi.reshape(-1, ndim)
    indices, distances, out_of_bounds = self._find_cells(xi)
    if method == "linear":
      result = self._evaluate_linear(indices, distances)
    else:
      result = self._evaluate_nearest(indices, distances)
    if self.fill_value is not None:
      mask = out_of_bounds.reshape(out_of_bounds.shape + (1,) * (result.ndim - 1))
      result = jnp.where(mask, self.fill_value, result)
    return result.reshape(batch_shape + self.values.shape[ndim:])

  def _find_cells(self, xi):
    """Per axis: the lower index of the cell holding each point (edge cells extend
    outwards), the point's fractional position in that cell, and whether any
    coordinate is outside the grid."""
    indices, distances, out_of_bounds = [], [], []
    for x, g in zip(xi.T, self.grid, strict=False):
      i = jnp.clip(jnp.searchsorted(g, x) - 1, 0, g.size - 2)
      indices.append(i)
      distances.append((x - g[i]) / (g[i + 1] - g[i]))
      out_of_bounds.append((x < g[0]) | (x > g[-1]))
    return indices, distances, functools.reduce(operator.or_, out_of_bounds)

  def _evaluate_linear(self, indices, distances):
    trailing = (1,) * (self.values.ndim - len(indices))
    terms = []
    for corner in itertools.product((0, 1), repeat=len(indices)):
      idx = tuple(i + c for i, c in zip(indices, corner, strict=True))
      weight = functools.reduce(
          operator.mul, [t if c else 1 - t for t, c in zip(distances, corner, strict=True)])
      terms.append(self.values[idx] * weight.reshape(weight.shape + trailing))
    return functools.reduce(operator.add, terms)

  def _evaluate_nearest(self, indices, distances):
    idx = tuple(jnp.where(t <= 0.5, i, i + 1) for i, t in zip(indices, distances, strict=True))
    return self.values[idx]


def _interpolator_unflatten(aux, children):
  obj = object.__new__(RegularGridInterpolator)
  obj.method, obj.bounds_error = aux
  obj.grid, obj.values, obj.fill_value = children
  return obj


register_pytree_node(
    RegularGridInterpolator,
    lambda obj: ((obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)),
    _interpolator_unflatten)
