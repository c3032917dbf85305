"""Multidimensional image processing (mirrors `jax.scipy.ndimage`): `map_coordinates`.

Interpolation is separable: along each axis a coordinate gives one (order 0)
or two (order 1) grid indices with weights; the value at a point is the sum,
over every combination of one node per axis, of the product of the weights
times the input at those indices. Boundary modes map out-of-range indices back
into the grid ('constant' instead masks them to `cval`).
"""
from __future__ import annotations

import functools
import itertools
import operator

import numpy as np

import xjax.numpy as jnp
from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax import elementwise as lax


def _mirror_index(index, size):
  """Folds `index` into [0, size) as a triangle wave of half-period size - 1 (edge not repeated)."""
  if size == 1:
    return jnp.zeros_like(index)
  period = 2 * (size - 1)
  return jnp.abs(jnp.remainder(index + (size - 1), period) - (size - 1))


def _reflect_index(index, size):
  """Folds `index` into [0, size), the edge sample repeated: ..., 1, 0, | 0, 1, ..., n-1, | n-1, ..."""
  return jnp.floor_divide(_mirror_index(2 * index + 1, 2 * size + 1) - 1, 2)


_INDEX_FIXERS = {
    "constant": lambda index, size: jnp.clip(index, 0, size - 1),  # masked to cval below
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: jnp.remainder(index, size),
    "mirror": _mirror_index,
    "reflect": _reflect_index,
}


def _round_half_away_from_zero(x):
  return x if dtypes.issubdtype(x.dtype, np.integer) else lax.round(x)


def _nearest_nodes(coordinate):
  """[(index, weight)] of the nearest grid point (halves rounded away from zero)."""
  index = _round_half_away_from_zero(coordinate).astype(np.int32)
  return [(index, None)]


def _linear_nodes(coordinate):
  """[(index, weight)] of the two grid points around `coordinate`, with linear weights."""
  lower = jnp.floor(coordinate)
  upper_weight = coordinate - lower
  index = lower.astype(np.int32)
  return [(index, 1 - upper_weight), (index + 1, upper_weight)]


@jit(static_argnums=(2, 3, 4))
def _map_coordinates(input, coordinates, order, mode, cval):
  input = jnp.asarray(input)
  coordinates = [jnp.asarray(c) for c in coordinates]
  cval = jnp.asarray(cval, input.dtype)
  if len(coordinates) != input.ndim:
    raise ValueError("coordinates must be a sequence of length input.ndim, but "
                     f"{len(coordinates)} != {input.ndim}")
  fix_index = _INDEX_FIXERS.get(mode)
  if fix_index is None:
    raise NotImplementedError(
        f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
        f"Currently supported modes are {set(_INDEX_FIXERS)}.")
  if order == 0:
    nodes_of = _nearest_nodes
  elif order == 1:
    nodes_of = _linear_nodes
  else:
    raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")

  # per axis: [(fixed index, in-range mask or None, weight or None)]
  axis_nodes = []
  for coordinate, size in zip(coordinates, input.shape, strict=True):
    nodes = []
    for index, weight in nodes_of(coordinate):
      valid = (index >= 0) & (index < size) if mode == "constant" else None
      nodes.append((fix_index(index, size), valid, weight))
    axis_nodes.append(nodes)

  terms = []
  for combination in itertools.product(*axis_nodes):
    indices, valids, weights = zip(*combination, strict=True)
    value = input[indices]
    valids = [v for v in valids if v is not None]
    if valids:
      value = jnp.where(functools.reduce(operator.and_, valids), value, cval)
    weights = [w for w in weights if w is not None]
    terms.append(functools.reduce(operator.mul, weights) * value if weights else value)
  result = functools.reduce(operator.add, terms)
  if dtypes.issubdtype(input.dtype, np.integer):
    result = _round_half_away_from_zero(result)
  return result.astype(input.dtype)


def map_coordinates(input, coordinates, order: int, mode: str = "constant", cval=0.0):
  """Samples `input` at (fractional) `coordinates` by nearest or linear interpolation.

  Args:
    input: an N-dimensional array.
    coordinates: a length-N sequence of arrays of one common (broadcastable)
      shape: the position along each axis of `input` of every output point.
    order: 0 for the nearest grid point (halves rounded away from zero), 1 for
      multilinear interpolation. Static.
    mode: how points outside the grid are treated: 'constant' (default; the
      value `cval`, SciPy's 'grid-constant'), 'nearest' (the edge value),
      'wrap' (periodic, SciPy's 'grid-wrap'), 'mirror' (reflected about the
      edge samples) or 'reflect' (reflected about the grid's edges). Static.
    cval: the value outside the grid for mode 'constant' (default 0.0); a
      hashable static value.

  Returns:
    An array of `input`'s dtype and the coordinates' shape. Integer inputs are
    rounded half away from zero.

  Raises:
    ValueError: `len(coordinates) != input.ndim`.
    NotImplementedError: an unsupported `mode`, or `order` other than 0 or 1.

  Mirrors `jax.scipy.ndimage.map_coordinates`; like JAX it implements the
  modes as SciPy documents them, so results near the boundary can differ from
  `scipy.ndimage.map_coordinates`.
  """
  return _map_coordinates(input, coordinates, order, mode, cval)
