"""`jnp.pad` in every NumPy mode.

Each mode pads one axis at a time with lax slices and concatenations (or
`lax.pad` for constants), so the result is an ordinary traceable expression:
it differentiates, batches and jits like any other jnp function. Pad widths,
statistic lengths and ramp end points pass through `_pairs`, which accepts
NumPy's shorthand forms and returns one ``(before, after)`` pair per axis.
"""
from __future__ import annotations

import builtins

import numpy as np

from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax import elementwise as lax
from xjax._src.lax import slicing as lax_slicing
from xjax._src.lax import structural as lax_structural
from xjax._src.numpy import creation, functional, lax_numpy, reductions, statistics, ufuncs
from xjax._src.numpy import util
from xjax._src.numpy.util import dtype_of, ensure_arraylike
from xjax._src.tree_util import tree_map

# The keyword arguments each mode reads, as NumPy defines them.
_MODE_KWARGS = {
    "constant": ("constant_values",), "empty": (), "edge": (), "wrap": (),
    "linear_ramp": ("end_values",), "maximum": ("stat_length",), "mean": ("stat_length",),
    "median": ("stat_length",), "minimum": ("stat_length",), "reflect": ("reflect_type",),
    "symmetric": ("reflect_type",),
}


def pad(array, pad_width, mode="constant", **kwargs):
  """`array` with values added before and after each axis.

  Args:
    array: an array of any shape and dtype (a 0-d array is returned unchanged).
    pad_width: the number of values added per axis: an int (all sides), ``(before, after)``
      for every axis, or one ``(before, after)`` pair per axis. Must be concrete integers.
    mode: how the new values are chosen:
      ``"constant"`` (`constant_values`, default 0), ``"empty"`` (zeros in JAX), ``"edge"``
      (the edge value), ``"wrap"`` (the array repeated), ``"reflect"`` / ``"symmetric"``
      (mirrored without / with the edge value; `reflect_type` ``"even"`` or ``"odd"``),
      ``"linear_ramp"`` (a ramp from `end_values`, default 0, to the edge),
      ``"maximum"`` / ``"minimum"`` / ``"mean"`` / ``"median"`` (a statistic of the
      `stat_length` values nearest each edge; the whole axis by default; rounded for
      integer arrays), or a callable ``f(row, (before, after), axis, kwargs) -> row``
      applied to every 1-D slice of the zero-padded array (with `vmap`), which must
      return the padded row (JAX's rule: no in-place edits).
    **kwargs: the mode's keyword arguments named above.

  Returns:
    The padded array, of `array`'s dtype.

  Raises:
    TypeError: a width is not an integer, or the entries have different shapes.
    ValueError: a negative width, a width shape that does not broadcast, a keyword the
      mode does not read, padding an empty axis in a mode that copies values, or a
      zero `stat_length`.
    NotImplementedError: an unknown mode string.

  >>> import xjax.numpy as jnp
  >>> jnp.pad(jnp.array([10, 20, 30, 40]), 2, mode="reflect")
  Array([30, 20, 10, 20, 30, 40, 30, 20], dtype=int32)

  Mirrors `jax.numpy.pad`.
  """
  array = ensure_arraylike("pad", array)
  pad_width = _pairs(pad_width, util.ndim(array), "pad_width")
  if pad_width and not all(isinstance(w, (int, np.integer)) for pair in pad_width for w in pair):
    raise TypeError("`pad_width` must be of integral type.")
  if callable(mode):
    _check_nonnegative(pad_width)
    return _pad_with_function(ufuncs._asarray(array), pad_width, mode, kwargs)
  if mode not in _MODE_KWARGS:
    raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
  unsupported = set(kwargs) - set(_MODE_KWARGS[mode])
  if unsupported:
    raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
  reflect_type = kwargs.get("reflect_type", "even")
  if reflect_type not in ("even", "odd"):
    raise ValueError(f"jnp.pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}.")
  _check_nonnegative(pad_width)
  nd = util.ndim(array)
  stat_length = kwargs.get("stat_length")
  if stat_length is not None:
    stat_length = _pairs(stat_length, nd, "stat_length")
    if any(length == 0 for pair in stat_length for length in pair):
      raise ValueError("stat_length of 0 yields no value for padding")
  end_values = kwargs.get("end_values", 0)
  if mode == "linear_ramp":
    end_values = _pairs(end_values, nd, "end_values")
  return _pad(array, pad_width, mode, kwargs.get("constant_values", 0), stat_length,
              end_values, reflect_type)


def _check_nonnegative(pad_width):
  if any(w < 0 for pair in pad_width for w in pair):
    raise ValueError("index can't contain negative values")


def _pairs(values, nd: int, name: str):
  """NumPy's pad-argument shorthands as one concrete ``(before, after)`` pair per axis."""
  values = tree_map(lambda v: util.concrete_or_error(v, f"{name} argument of jnp.pad"), values)
  try:
    values = np.asarray(values)
  except ValueError as e:
    raise TypeError(f"`{name}` entries must be the same shape: {values}") from e
  if values.dtype == object:
    raise TypeError(f"`{name}` entries must be the same shape: {values}")
  # NumPy scalars are kept (not made Python numbers): JAX prints them in jaxpr params.
  if values.shape in ((), (1,)):
    pair = (values.reshape(-1)[0],) * 2
  elif values.shape in ((2,), (1, 2)):
    pair = tuple(values.reshape(2))
  elif values.shape == (nd, 2):
    return tuple(tuple(row) for row in values)
  else:
    raise ValueError(f"jnp.pad: {name} with nd={nd} has unsupported shape {values.shape}. "
                     f"Valid shapes are ({nd}, 2), (1, 2), (2,), (1,), or ().")
  return (pair,) * nd


@jit(static_argnums=(1, 2, 4, 5, 6))
def _pad(array, pad_width, mode, constant_values, stat_length, end_values, reflect_type):
  array = ufuncs._asarray(array)
  if util.ndim(array) == 0:
    return array
  if mode == "constant":
    return _pad_constant(array, pad_width, constant_values)
  for axis, (before, after) in enumerate(pad_width):
    if before == 0 and after == 0:
      continue
    n = util.shape(array)[axis]
    if n == 0 and mode in ("wrap", "edge", "reflect", "symmetric"):
      raise ValueError(f"Cannot apply '{mode}' padding to empty axis")
    if mode == "empty":
      parts = [_zeros_along(array, axis, before), array, _zeros_along(array, axis, after)]
    elif mode == "edge":
      parts = [_repeat(_take(array, axis, 0, 1), axis, before), array,
               _repeat(_take(array, axis, n - 1, n), axis, after)]
    elif mode == "wrap":
      parts = [_wrap(array, axis, before, True), array, _wrap(array, axis, after, False)]
    elif mode in ("reflect", "symmetric"):
      array = _mirror(array, axis, n, before, mode, reflect_type, before_side=True)
      array = _mirror(array, axis, n, after, mode, reflect_type, before_side=False)
      continue
    elif mode == "linear_ramp":
      parts = _ramps(array, axis, before, after, end_values[axis])
    else:
      parts = _stat_parts(array, axis, before, after, mode,
                          None if stat_length is None else stat_length[axis])
    array = lax_structural.concatenate(parts, axis)
  return array


def _pad_constant(array, pad_width, constant_values):
  nd = util.ndim(array)
  values = util._unwrap(constant_values)
  if isinstance(values, (list, tuple)):
    values = creation.asarray(values)
  values = lax.convert_element_type(values, dtype_of(array), weak_type=util.is_weak(array))
  if util.ndim(values) == 0:
    return lax_structural.pad(array, values, tuple((lo, hi, 0) for lo, hi in pad_width))
  if util.ndim(values) > 2 or util.shape(values)[-1] not in (1, 2):
    raise ValueError("jnp.pad: constant_values has unsupported shape "
                     f"{util.shape(values)}. If the shape is 1D or 2D, the last dimension "
                     "must be of size 1 or 2.")
  values = lax_numpy.broadcast_to(values, (nd, 2))
  for axis, pair in enumerate(pad_width):
    for side, amount in enumerate(pair):
      if amount:
        config = [(0, 0, 0)] * nd
        config[axis] = (amount, 0, 0) if side == 0 else (0, amount, 0)
        array = lax_structural.pad(array, values[axis, side], tuple(config))
  return array


def _take(array, axis, start, stop):
  return lax_slicing.slice_in_dim(array, start, stop, axis=axis)


def _repeat(piece, axis, count):
  """`piece` (size 1 along `axis`) repeated `count` times along it."""
  return lax_numpy.repeat(piece, count, axis=axis)


def _zeros_along(array, axis, count):
  shape = list(util.shape(array))
  shape[axis] = count
  return creation.zeros_like(array, shape=tuple(shape))


def _wrap(array, axis, count, before_side):
  """The `count` values that continue `array` periodically before (or after) it."""
  n = util.shape(array)[axis]
  whole, rest = divmod(count, n)
  tail = [_take(array, axis, n - rest, n)] if before_side and rest else []
  head = [_take(array, axis, 0, rest)] if not before_side and rest else []
  parts = tail + [array] * whole + head
  return lax_structural.concatenate(parts, axis) if parts else _take(array, axis, 0, 0)


def _mirror(array, axis, n, count, mode, reflect_type, before_side):
  """`array` extended by `count` mirrored values on one side, one reflection at a time.

  A reflection copies at most the axis's original length `n` (less the edge value for
  "reflect"); larger widths reflect the already-extended array again, as NumPy does.
  "odd" reflection maps each copied value v to ``2 * edge - v``.
  """
  skip_edge = 1 if mode == "reflect" and n > 1 else 0
  size = util.shape(array)[axis]
  edge = _take(array, axis, 0, 1) if before_side else _take(array, axis, size - 1, size)
  while count > 0:
    step = builtins.min(count, n - skip_edge)
    count -= step
    size = util.shape(array)[axis]
    if before_side:
      piece = _take(array, axis, skip_edge, skip_edge + step)
    else:
      piece = _take(array, axis, size - step - skip_edge, size - skip_edge)
    piece = lax_numpy.flip(piece, axis)
    if reflect_type == "odd":
      piece = ufuncs.subtract(ufuncs.multiply(2, edge), piece)
      if n > 1:
        edge = _take(piece, axis, 0, 1) if before_side else _take(piece, axis, step - 1, step)
    array = lax_structural.concatenate([piece, array] if before_side else [array, piece], axis)
  return array


def _ramps(array, axis, before, after, end_values):
  """Linear ramps from the end values towards the edges (the edges excluded)."""
  n = util.shape(array)[axis]
  weak = util.is_weak(array)
  parts = []
  for count, end, edge_index in ((before, end_values[0], 0), (after, end_values[1], n - 1)):
    edge = lax_structural.squeeze(_take(array, axis, edge_index, edge_index + 1), (axis,))
    ramp = creation.linspace(end, edge, num=count, endpoint=False, dtype=dtype_of(array),
                             axis=axis)
    parts.append(lax.convert_element_type(ramp, dtype_of(array), weak_type=weak))
  return [parts[0], array, lax_numpy.flip(parts[1], axis)]


_STATISTICS = {"maximum": reductions.max, "minimum": reductions.min,
               "mean": reductions.mean, "median": statistics.median}


def _stat_parts(array, axis, before, after, mode, lengths):
  """Pads filled with a statistic of the values nearest each edge."""
  n = util.shape(array)[axis]
  stat = _STATISTICS[mode]
  if lengths is None:
    near_before = near_after = array
  else:
    near_before = _take(array, axis, 0, builtins.min(lengths[0], n))
    near_after = _take(array, axis, n - builtins.min(lengths[1], n), n)
  parts = []
  for near, count in ((near_before, before), (near_after, after)):
    value = stat(near, axis=axis, keepdims=True)
    if dtypes.issubdtype(dtype_of(array), np.integer):
      value = ufuncs.round(value)
    value = lax.convert_element_type(value, dtype_of(array), weak_type=util.is_weak(array))
    parts.append(_repeat(value, axis, count))
  return [parts[0], array, parts[1]]


def _pad_with_function(array, pad_width, func, kwargs):
  padded = _pad_constant(array, pad_width, 0)
  for axis in range(util.ndim(padded)):
    padded = functional.apply_along_axis(func, axis, padded, pad_width[axis], axis, kwargs)
  return padded
