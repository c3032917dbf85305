"""NumPy indexing over lax: ``x[idx]``, ``x.at[idx].set(...)`` and friends, take,
take_along_axis.

``x[idx]`` is computed as JAX does, trying in order:

1. a static `lax.slice` (ints, slices, None, Ellipsis, with static in-bounds
   ints), then rev/squeeze/expand_dims;
2. a `lax.dynamic_slice` (adds scalar array indices and out-of-bounds ints,
   which it clamps);
3. a `lax.gather` for everything else (integer arrays, boolean masks, strided
   slices), whose index vectors are built below.

Updates (``.at[idx].set/add/...``) build the same gather description and
emit the matching scatter. Out-of-bounds indices follow the Sharp Bits:
retrieval clamps, updates are dropped, and ``mode='fill'`` fills.
"""
from __future__ import annotations

import enum
import operator
import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import errors
from xjax._src.array import Array
from xjax._src.config import config
from xjax._src.indexing import Slice
from xjax._src.jit import jit
from xjax._src.lax import dot as lax_dot
from xjax._src.lax import elementwise as lax
from xjax._src.lax import gather_scatter
from xjax._src.lax import slicing
from xjax._src.lax import structural as lax_structural
from xjax._src.numpy import creation
from xjax._src.numpy import ufuncs
from xjax._src.numpy import util
from xjax._src.numpy.util import canonicalize_axis, const_like, dtype_of, where_

GatherScatterMode = gather_scatter.GatherScatterMode

# Kinds of index, as JAX's IndexType (DYNAMIC_SLICE: a `jax.ds` Slice).
NONE, ELLIPSIS, SLICE, INTEGER, BOOLEAN, ARRAY, DYNAMIC_SLICE = (
    "none", "ellipsis", "slice", "integer", "boolean", "array", "dynamic_slice")


class IndexingStrategy(enum.Enum):
  """How `rewriting_take` computes ``x[idx]``: AUTO tries a static slice, then a dynamic
  slice, then a gather; the others insist on one of them (raising when it cannot express
  the index). Mirrors JAX's private `jax._src.numpy.indexing.IndexingStrategy`."""
  AUTO = "auto"
  GATHER = "gather"
  SCATTER = "scatter"
  STATIC_SLICE = "static_slice"
  DYNAMIC_SLICE = "dynamic_slice"


class _Index(NamedTuple):
  """One entry of an index tuple: its value, kind and the array axes it consumes."""
  value: Any
  kind: str
  axes: tuple[int, ...]


# ----------------------------------------------------------------------------
# Parsing


def _is_array(x) -> bool:
  return isinstance(x, (Array, core.Tracer, np.ndarray))


def _is_integer_scalar(x) -> bool:
  return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _index_kind(idx) -> str:
  if idx is None:
    return NONE
  if idx is Ellipsis:
    return ELLIPSIS
  if isinstance(idx, slice):
    return SLICE
  if isinstance(idx, Slice):
    return DYNAMIC_SLICE
  if _is_integer_scalar(idx):
    return INTEGER
  if isinstance(idx, (bool, np.bool_)):
    return BOOLEAN
  if _is_array(idx) or hasattr(idx, "__jax_array__"):
    dtype = dtype_of(util._unwrap(idx))
    if dtype == np.bool_:
      return BOOLEAN
    if dtypes.issubdtype(dtype, np.integer):
      return ARRAY
    raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {dtype}")
  if isinstance(idx, str):
    raise TypeError(f"JAX does not support string indexing; got idx={idx!r}")
  if isinstance(idx, Sequence):
    if not idx:
      return ARRAY
    dtype = np.asarray(idx).dtype
    if dtype == np.bool_:
      return BOOLEAN
    if dtypes.issubdtype(dtype, np.integer):
      return ARRAY
    raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                    f"{dtypes.canonicalize_dtype(dtype)}")
  if isinstance(idx, (float, complex, np.generic)):
    raise TypeError("Indexer must have integer or boolean type, got indexer with type "
                    f"{np.dtype(type(idx))}")
  raise IndexError("only integers, slices (`:`), ellipsis (`...`), newaxis (`None`) and "
                   f"integer or boolean arrays are valid indices. Got {idx}")


def _as_index_tuple(idx) -> tuple:
  if isinstance(idx, tuple):
    return idx
  if isinstance(idx, Sequence) and not isinstance(idx, str):
    # NumPy's deprecated "list as a tuple" indexing is refused, as in JAX.
    unpackable = any(
        (_is_array(i) and util.ndim(i) != 0) or isinstance(i, (Sequence, slice))
        or i is Ellipsis or i is None for i in idx)
    hint = "arr[tuple(seq)]" if unpackable else "arr[array(seq)]"
    raise TypeError("Using a non-tuple sequence for multidimensional indexing is not allowed; "
                    f"use `{hint}` instead of `arr[seq]`. "
                    "See https://github.com/jax-ml/jax/issues/4564 for more information.")
  return (idx,)


def _parse(idx, shape) -> list[_Index]:
  """The entries of `idx` with their kinds and consumed axes (Ellipsis sized)."""
  entries = _as_index_tuple(idx)
  kinds = [_index_kind(i) for i in entries]
  consumed = []
  for i, kind in zip(entries, kinds):
    if kind in (NONE, ELLIPSIS):
      consumed.append(0)
    elif kind == BOOLEAN:
      consumed.append(np.ndim(i) if not hasattr(i, "aval") else util.ndim(i))
    else:
      consumed.append(1)
  ellipses = [n for n, k in enumerate(kinds) if k == ELLIPSIS]
  if len(ellipses) > 1:
    raise IndexError("an index can only have a single ellipsis ('...')")
  total = sum(consumed)
  if total > len(shape):
    raise IndexError(f"Too many indices: array is {len(shape)}-dimensional, but {total} "
                     "were indexed")
  if ellipses:
    consumed[ellipses[0]] = len(shape) - total
  out, dim = [], 0
  for i, kind, n in zip(entries, kinds, consumed):
    out.append(_Index(i, kind, tuple(range(dim, dim + n))))
    dim += n
  return out


def _expand_ellipsis(indices, shape) -> list[_Index]:
  """Ellipsis and the implicit trailing axes replaced by full slices."""
  out, consumed = [], 0
  for ix in indices:
    consumed += len(ix.axes)
    if ix.kind == ELLIPSIS:
      out.extend(_Index(slice(None), SLICE, (ax,)) for ax in ix.axes)
    else:
      out.append(ix)
  out.extend(_Index(slice(None), SLICE, (ax,)) for ax in range(consumed, len(shape)))
  return out


def _concrete(x):
  """The concrete value of an index element, or None if it is traced."""
  if isinstance(x, core.Tracer):
    return x.to_concrete_value()
  return x


def _static_slice_parts(s: slice, size: int):
  """(start, stop, step) of a slice with concrete entries, or None if one is traced."""
  values = []
  for v in (s.start, s.stop, s.step):
    if v is not None:
      v = _concrete(v)
      if v is None:
        return None
      v = operator.index(v)
    values.append(v)
  return slice(*values).indices(size)


# ----------------------------------------------------------------------------
# Static and dynamic slices


def _check_static_ints(indices, shape, normalize: bool) -> None:
  """IndexError for a static integer index outside its axis (JAX's
  validate_static_indices)."""
  for ix in indices:
    if ix.kind == INTEGER:
      (axis,) = ix.axes
      i = operator.index(ix.value)
      normed = i + shape[axis] if normalize and i < 0 else i
      if not 0 <= normed < shape[axis]:
        raise IndexError(f"index {i} out of bounds for axis {axis} with size {shape[axis]} "
                         f"(normalize_indices={normalize})")


def _static_slice(arr, indices, shape, mode, normalize: bool):
  """``arr[indices]`` as a `lax.slice` (+ rev/squeeze/expand_dims); TypeError, ValueError
  or IndexError (JAX's messages) when the index is not static ints and slices."""
  parsed = GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else GatherScatterMode.from_any(mode)
  if parsed not in (GatherScatterMode.PROMISE_IN_BOUNDS, GatherScatterMode.CLIP):
    raise ValueError("static_slice requires mode='promise_in_bounds' or mode='clip'")
  if parsed == GatherScatterMode.PROMISE_IN_BOUNDS:
    _check_static_ints(indices, shape, normalize)
  for pos, ix in enumerate(indices):
    if ix.kind == SLICE and _static_slice_parts(ix.value, 1) is None:
      raise IndexError(f"Slice entries must be static integers. Got {ix.value} at position {pos}")
  for pos, ix in enumerate(indices):
    if ix.kind not in (INTEGER, ELLIPSIS, SLICE, NONE):
      raise TypeError("static_slice: indices must be static scalars or slices. Got index of "
                      f"type {type(ix.value)} at position {pos}")
  starts, limits, strides, rev_axes, squeeze_axes, newaxis_dims = [], [], [], [], [], []
  for ix in _expand_ellipsis(indices, shape):
    if ix.kind == NONE:
      newaxis_dims.append(len(starts) - len(squeeze_axes) + len(newaxis_dims))
    elif ix.kind == INTEGER:
      (axis,) = ix.axes
      if shape[axis] == 0:
        raise IndexError(f"index is out of bounds for axis {axis} with size 0")
      i = int(ix.value)
      if normalize and i < 0:
        i += shape[axis]
      i = min(max(i, 0), shape[axis] - 1)
      starts.append(i)
      limits.append(i + 1)
      strides.append(1)
      squeeze_axes.append(axis)
    else:
      (axis,) = ix.axes
      size = shape[axis]
      start, stop, step = _static_slice_parts(ix.value, size)
      if step < 0:
        new_start = min(size, stop + 1 + abs(start - stop - 1) % abs(step))
        starts.append(new_start)
        limits.append(max(new_start, start + 1))
        strides.append(-step)
        rev_axes.append(axis)
      else:
        starts.append(start)
        limits.append(max(start, stop))
        strides.append(step)
  unit_strides = all(s == 1 for s in strides)
  trivial = unit_strides and all(
      (b, e) == (0, d) for b, e, d in zip(starts, limits, shape))
  out = arr if trivial else slicing.slice(arr, tuple(starts), tuple(limits),
                                          None if unit_strides else tuple(strides))
  return _finish(out, rev_axes, squeeze_axes, newaxis_dims)


def _finish(out, rev_axes, squeeze_axes, newaxis_dims):
  if rev_axes:
    out = lax_structural.rev(out, tuple(rev_axes))
  if squeeze_axes:
    out = lax_structural.squeeze(out, tuple(squeeze_axes))
  if newaxis_dims:
    out = lax_structural.expand_dims(out, tuple(newaxis_dims))
  return out


def _dynamic_slice(arr, indices, shape, mode, normalize: bool):
  """``arr[indices]`` as a `lax.dynamic_slice` (+ rev/squeeze/expand_dims); TypeError or
  ValueError (JAX's messages) when the index needs a gather."""
  if mode is not None and GatherScatterMode.from_any(mode) not in (
      GatherScatterMode.PROMISE_IN_BOUNDS, GatherScatterMode.CLIP):
    raise ValueError("dynamic_slice requires mode='promise_in_bounds' or mode='clip'")
  for pos, ix in enumerate(indices):
    if ix.kind == SLICE:
      step = _concrete(ix.value.step)
      if ix.value.step is not None and (step is None or step not in (1, -1)):
        raise TypeError("dynamic_slice: only unit steps supported in slice. "
                        f"Got {ix.value} at position {pos}")
    elif ix.kind == DYNAMIC_SLICE:
      if ix.value.stride != 1:
        raise TypeError("dynamic_slice: only unit steps supported in slice. "
                        f"Got {ix.value} at position {pos}")
    elif ix.kind == ARRAY:
      if not _is_array(ix.value) or util.ndim(ix.value) != 0:
        raise TypeError("dynamic_slice: only scalar indices allowed. Got index of type "
                        f"{type(ix.value)} at position {pos}")
    elif ix.kind == BOOLEAN:
      raise TypeError("dynamic_slice: indices must be scalars or slices. Got index of type "
                      f"{type(ix.value)} at position {pos}")
  starts, sizes, rev_axes, squeeze_axes, newaxis_dims = [], [], [], [], []
  trivial = True
  for ix in _expand_ellipsis(indices, shape):
    if ix.kind == NONE:
      newaxis_dims.append(len(starts) - len(squeeze_axes) + len(newaxis_dims))
    elif ix.kind in (INTEGER, ARRAY):
      trivial = False
      (axis,) = ix.axes
      if shape[axis] == 0:
        raise IndexError(f"index is out of bounds for axis {axis} with size 0")
      starts.append(creation.asarray(ix.value))
      sizes.append(1)
      squeeze_axes.append(axis)
    elif ix.kind == DYNAMIC_SLICE:
      trivial = False
      starts.append(ix.value.start if _is_array(ix.value.start)
                    else creation.asarray(ix.value.start))
      sizes.append(operator.index(ix.value.size))
    else:
      if ix.value != slice(None):
        trivial = False
      (axis,) = ix.axes
      start, stop, step = _static_slice_parts(ix.value, shape[axis]) or (None,) * 3
      if start is None:
        raise TypeError(f"dynamic_slice: slice entries must be static integers; got {ix.value}")
      if step < 0:
        new_start = stop + 1 + abs(start - stop - 1) % abs(step)
        starts.append(new_start)
        sizes.append(max(0, start + 1 - new_start))
        rev_axes.append(axis)
      else:
        starts.append(start)
        sizes.append(max(0, stop - start))
  if trivial:
    out = arr
  else:
    if len(starts) > 1:
      index_dtype = _index_dtype(shape)
      starts = [lax.convert_element_type(s, index_dtype) for s in starts]
    out = slicing.dynamic_slice(arr, starts, sizes, allow_negative_indices=normalize)
  return _finish(out, rev_axes, squeeze_axes, newaxis_dims)


def _index_dtype(shape) -> np.dtype:
  big = any(d > np.iinfo(np.int32).max for d in shape)
  return dtypes.canonicalize_dtype(np.int64 if big else np.int32)


# ----------------------------------------------------------------------------
# Gather


def _expand_bool_indices(indices, shape) -> list[_Index]:
  """Boolean masks replaced by the integer index arrays of their true elements."""
  out = []
  for pos, ix in enumerate(indices):
    if ix.kind != BOOLEAN:
      out.append(ix)
      continue
    value = util._unwrap(ix.value)
    concrete = _concrete(value)
    if concrete is None:
      raise errors.NonConcreteBooleanIndexError(core.get_aval(value).str_short())
    if np.ndim(concrete) == 0:
      out.append(_Index(bool(concrete), BOOLEAN, ()))
      continue
    mask = np.asarray(concrete)
    expected = [shape[a] for a in ix.axes]
    if not all(s in (0, e) for s, e in zip(mask.shape, expected)):
      raise IndexError("boolean index did not match shape of indexed array in index "
                       f"{pos}: got {mask.shape}, expected {expected}")
    index_dtype = dtypes.canonicalize_dtype(np.int64)
    out.extend(_Index(np.asarray(w, index_dtype), ARRAY, (ax,))
               for w, ax in zip(np.where(mask), ix.axes))
  return out


class _GatherPlan(NamedTuple):
  slice_shape: tuple[int, ...]
  gather_slice_shape: tuple[int, ...]
  gather_indices: Any
  dnums: gather_scatter.GatherDimensionNumbers
  unique_indices: bool
  indices_are_sorted: bool
  reversed_y_dims: tuple[int, ...]
  newaxis_dims: tuple[int, ...]
  scalar_bool_dims: tuple[int, ...]


def _normalize(indices, shape) -> list[_Index]:
  out = []
  for ix in indices:
    if ix.kind == INTEGER:
      (axis,) = ix.axes
      v = ix.value
      if not isinstance(v, np.unsignedinteger) and v < 0:
        v = v + shape[axis]
      out.append(ix._replace(value=v))
    elif ix.kind == ARRAY:
      (axis,) = ix.axes
      v = ix.value
      if not dtypes.issubdtype(dtype_of(v), np.unsignedinteger):
        # A host index array is compared on the host, as NumPy's `<` would (and JAX does).
        negative = v < 0 if isinstance(v, np.ndarray) else lax.lt(v, const_like(v, 0))
        v = lax.select_n(negative, v, lax.add(v, const_like(v, shape[axis])))
      out.append(ix._replace(value=v))
    else:
      out.append(ix)
  return out


def _gather_plan(indices, shape, normalize: bool) -> _GatherPlan:
  """The gather (or, transposed, scatter) computing ``x[indices]`` for x of `shape`."""
  for pos, ix in enumerate(indices):
    if ix.kind == SLICE and _static_slice_parts(ix.value, 1) is None:
      raise IndexError(f"Slice entries must be static integers. Got {ix.value} at position {pos}")
  indices = [ix._replace(value=creation.asarray(ix.value))
             if ix.kind == ARRAY and isinstance(ix.value, Sequence) else ix for ix in indices]
  advanced_pos = [n for n, ix in enumerate(indices) if ix.kind in (ARRAY, INTEGER)]
  contiguous = all(b - a == 1 for a, b in zip(advanced_pos, advanced_pos[1:]))
  indices = _expand_ellipsis(indices, shape)
  scalar_bool_dims = tuple(n for n, ix in enumerate(indices) if ix.kind == BOOLEAN)
  if scalar_bool_dims:
    shape, indices = _expand_scalar_bools(indices, shape)
  if normalize:
    indices = _normalize(indices, shape)

  is_advanced = any(ix.kind == ARRAY and util.ndim(ix.value) > 0 for ix in indices)
  advanced, idx_advanced_axes, x_advanced_axes = [], [], []
  if is_advanced:
    j = 0
    for i, ix in enumerate(indices):
      if ix.kind == NONE:
        continue
      if ix.kind in (ARRAY, INTEGER):
        advanced.append(ix.value)
        idx_advanced_axes.append(i)
        x_advanced_axes.append(j)
      j += 1

  index_dtype = _index_dtype(shape)
  x_axis = y_axis = collapsed_y_axis = 0
  offset_dims, collapsed_slice_dims, start_index_map = [], [], []
  gather_indices, gather_indices_shape = [], []
  slice_shape, newaxis_dims, reversed_y_dims, gather_slice_shape = [], [], [], []

  for pos, ix in enumerate(indices):
    if advanced and ((contiguous and pos == idx_advanced_axes[0])
                     or (not contiguous and pos == 0)):
      arrs = util.broadcast_arrays_(*advanced)
      adv_shape = util.shape(arrs[0])
      start_dim = len(gather_indices_shape)
      gather_indices.extend((lax.convert_element_type(a, index_dtype), start_dim) for a in arrs)
      gather_indices_shape += adv_shape
      start_index_map.extend(x_advanced_axes)
      collapsed_slice_dims.extend(x_advanced_axes)
      slice_shape.extend(adv_shape)
      y_axis += len(adv_shape)
      collapsed_y_axis += len(adv_shape)
    if pos in idx_advanced_axes:
      x_axis += 1
      gather_slice_shape.append(1)
      continue
    if ix.kind in (INTEGER, ARRAY) and util.ndim(ix.value) == 0:
      if shape[x_axis] == 0:
        raise IndexError(f"index is out of bounds for axis {x_axis} with size 0")
      gather_indices.append((lax.convert_element_type(ix.value, index_dtype),
                             len(gather_indices_shape)))
      collapsed_slice_dims.append(x_axis)
      gather_slice_shape.append(1)
      start_index_map.append(x_axis)
      x_axis += 1
    elif ix.kind == NONE:
      slice_shape.append(1)
      newaxis_dims.append(y_axis)
      y_axis += 1
    elif ix.kind in (SLICE, DYNAMIC_SLICE):
      if ix.kind == DYNAMIC_SLICE:
        start, step, size = ix.value.start, ix.value.stride, operator.index(ix.value.size)
      else:
        start, stop, step = _static_slice_parts(ix.value, shape[x_axis])
        size = len(range(start, stop, step))
      slice_shape.append(size)
      if step == 1:
        if size != shape[x_axis]:
          gather_indices.append((lax.convert_element_type(start, index_dtype),
                                 len(gather_indices_shape)))
          start_index_map.append(x_axis)
        gather_slice_shape.append(size)
        offset_dims.append(collapsed_y_axis)
      else:
        positions = ufuncs.add(lax.convert_element_type(start, index_dtype),
                               ufuncs.multiply(creation.array(step, dtype=index_dtype),
                                               lax_structural.iota(index_dtype, size)))
        if step < 0:
          reversed_y_dims.append(collapsed_y_axis)
          positions = lax_structural.rev(positions, (0,))
        gather_slice_shape.append(1)
        gather_indices.append((positions, len(gather_indices_shape)))
        start_index_map.append(x_axis)
        gather_indices_shape.append(size)
        collapsed_slice_dims.append(x_axis)
      collapsed_y_axis += 1
      y_axis += 1
      x_axis += 1
    else:
      raise IndexError(f"Got unsupported indexer at position {pos}: {ix!r}")

  if not gather_indices:
    gather_indices_array = np.zeros((0,), dtype=index_dtype)
  elif len(gather_indices) == 1:
    g, _ = gather_indices[0]
    gather_indices_array = lax_structural.expand_dims(g, (util.ndim(g),))
  else:
    last = len(gather_indices_shape)
    full_shape = (*gather_indices_shape, 1)
    gather_indices_array = lax_structural.concatenate(
        [lax_structural.broadcast_in_dim(g, full_shape, tuple(range(i, i + util.ndim(g))))
         for g, i in gather_indices], last)
  dnums = gather_scatter.GatherDimensionNumbers(
      offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(sorted(collapsed_slice_dims)),
      start_index_map=tuple(start_index_map))
  return _GatherPlan(tuple(slice_shape), tuple(gather_slice_shape), gather_indices_array, dnums,
                     not advanced, not advanced, tuple(reversed_y_dims), tuple(newaxis_dims),
                     scalar_bool_dims)


def _expand_scalar_bools(indices, shape):
  # A scalar boolean index acts on a new unit axis: True selects it, False empties it.
  new_shape, new_indices, dim = list(shape), [], 0
  for i, ix in enumerate(indices):
    if ix.kind == BOOLEAN:
      new_shape.insert(i, 1)
      new_indices.append(_Index(np.arange(int(ix.value), dtype=np.int32), ARRAY, (dim,)))
      dim += 1
    else:
      n = len(ix.axes)
      new_indices.append(ix._replace(axes=tuple(range(dim, dim + n))))
      dim += n
  return tuple(new_shape), new_indices


def _gather(arr, indices, shape, *, indices_are_sorted, unique_indices, mode, fill_value,
            normalize):
  plan = _gather_plan(indices, shape, normalize)
  if fill_value is not None:
    fill_value = util.concrete_or_error(fill_value, "fill_value argument to indexed get()")
    if np.ndim(fill_value) != 0:
      raise ValueError("fill_value argument to indexed get() must be a scalar")
    if isinstance(fill_value, (np.ndarray, Array)):
      fill_value = np.asarray(fill_value).item()
  y = arr
  if plan.scalar_bool_dims:
    y = lax_structural.expand_dims(y, plan.scalar_bool_dims)
  if 0 in plan.slice_shape:
    return creation.zeros(plan.slice_shape, dtype_of(y))
  if 0 not in util.shape(plan.gather_indices):
    y = gather_scatter.gather(y, plan.gather_indices, plan.dnums, plan.gather_slice_shape,
                              unique_indices=unique_indices or plan.unique_indices,
                              indices_are_sorted=indices_are_sorted or plan.indices_are_sorted,
                              mode=mode, fill_value=fill_value)
  if plan.reversed_y_dims:
    y = lax_structural.rev(y, plan.reversed_y_dims)
  return lax_structural.expand_dims(y, plan.newaxis_dims) if plan.newaxis_dims else y


def rewriting_take(arr, idx, *, indices_are_sorted: bool = False, unique_indices: bool = False,
                   mode=None, fill_value=None, normalize_indices: bool = True,
                   out_sharding=None, strategy: IndexingStrategy = IndexingStrategy.AUTO):
  """``arr[idx]``: by `strategy` (AUTO: a static slice, else a dynamic slice, else a
  gather; see the module doc). `out_sharding`, when given, is the result's sharding.

  Raises:
    TypeError: `strategy` is not an IndexingStrategy, or the index is invalid (or, for
      STATIC_SLICE/DYNAMIC_SLICE, not expressible by that strategy).
    ValueError, IndexError: as NumPy's indexing, or the strategy cannot express the index.

  Mirrors JAX's private `jax._src.numpy.indexing.rewriting_take`.
  """
  if not isinstance(strategy, IndexingStrategy):
    raise TypeError(f"Expected strategy to be IndexingStrategy; got {strategy}")
  arr = creation.asarray(arr)
  shape = util.shape(arr)
  indices = _parse(idx, shape)
  if config.jax_check_static_indices and (
      mode is None or GatherScatterMode.from_any(mode) == GatherScatterMode.PROMISE_IN_BOUNDS):
    _check_static_ints(indices, shape, normalize_indices)
  # As in JAX, an array over several devices is not sliced partially (an integer index, a
  # dynamic slice, a strided or partial slice): such an index goes to a gather, whose result
  # XLA lays out differently.
  sharded_partial = _is_sharded(arr) and _has_partial_slices(indices, shape)
  if strategy == IndexingStrategy.STATIC_SLICE:
    if sharded_partial:
      raise ValueError("static_slice with partial slices does not support nontrivial array "
                       "sharding.")
    return _with_sharding(_static_slice(arr, indices, shape, mode, normalize_indices),
                          out_sharding)
  if strategy == IndexingStrategy.DYNAMIC_SLICE:
    if sharded_partial:
      raise ValueError("dynamic_slice with partial slices does not support nontrivial array "
                       "sharding.")
    return _with_sharding(_dynamic_slice(arr, indices, shape, mode, normalize_indices),
                          out_sharding)
  if strategy == IndexingStrategy.AUTO and not sharded_partial:
    try:
      return _with_sharding(_static_slice(arr, indices, shape, mode, normalize_indices),
                            out_sharding)
    except (TypeError, ValueError, IndexError):
      pass
    try:
      return _with_sharding(_dynamic_slice(arr, indices, shape, mode, normalize_indices),
                            out_sharding)
    except (TypeError, ValueError, IndexError):
      pass
  indices = _expand_bool_indices(indices, shape)
  return _with_sharding(_gather(arr, indices, shape, indices_are_sorted=indices_are_sorted,
                                unique_indices=unique_indices, mode=mode,
                                fill_value=fill_value, normalize=normalize_indices),
                        out_sharding)


def _is_sharded(arr) -> bool:
  """Whether `arr` is a concrete array over more than one device (JAX's test)."""
  return type(arr) is Array and arr._sharding is not None and arr._sharding.num_devices != 1


def _has_partial_slices(indices, shape) -> bool:
  """Whether the index takes part of some axis: an integer, a dynamic slice, or a slice that
  is strided or does not cover its axis (JAX's `NDIndexer.has_partial_slices`)."""
  for ix in indices:
    if ix.kind in (INTEGER, DYNAMIC_SLICE):
      return True
    if ix.kind == SLICE:
      (axis,) = ix.axes
      try:
        start, stop, step = ix.value.indices(shape[axis])
      except (TypeError, ValueError):  # traced bounds, a zero step: the gather's errors
        return True
      if abs(step) != 1 or abs(stop - start) != shape[axis]:
        return True
  return False


def _with_sharding(out, out_sharding):
  if out_sharding is None:
    return out
  from xjax._src.sharding import rules
  from xjax._src.sharding.constraints import reshard
  return reshard(out, rules.canonicalize_out_sharding(out_sharding, "take"))


def getitem(self, idx):
  """``self[idx]`` with NumPy's indexing rules (installed as ``Array.__getitem__``)."""
  return rewriting_take(self, idx)


# ----------------------------------------------------------------------------
# Indexed updates: x.at[idx].set(y) and friends


def scatter_update(x, idx, y, scatter_op, *, indices_are_sorted: bool = False,
                   unique_indices: bool = False, mode=None, normalize_indices: bool = True):
  """The value of ``x`` after ``x[idx] op= y``, computed without mutation."""
  x = creation.asarray(x)
  y = util._unwrap(y)
  if isinstance(y, (list, tuple)):
    y = creation.asarray(y)
  x_dtype = dtype_of(x)
  if (isinstance(y, int) and not isinstance(y, bool) and dtypes.issubdtype(x_dtype, np.integer)
      and np.iinfo(x_dtype).min <= y <= np.iinfo(x_dtype).max):
    y = np.array(y, x_dtype)
  shape = util.shape(x)
  indices = _expand_bool_indices(_parse(idx, shape), shape)
  weak = util.is_weak(x)
  if not _safe_to_cast(y, x_dtype):
    warnings.warn("scatter inputs have incompatible types: cannot safely cast value from "
                  f"dtype={dtypes.canonicalize_dtype(dtype_of(y))} to dtype={x_dtype} with "
                  f"jax_numpy_dtype_promotion={config.jax_numpy_dtype_promotion}. In future "
                  "JAX releases this will result in an error.", FutureWarning, stacklevel=4)
  plan = _gather_plan(indices, shape, normalize_indices)
  if 0 in plan.slice_shape:
    return x
  x, y = util.promote_dtypes(x, y)
  y = util.broadcast_to(y, plan.slice_shape)
  if plan.newaxis_dims:
    y = lax_structural.squeeze(y, plan.newaxis_dims)
  if plan.reversed_y_dims:
    y = lax_structural.rev(y, plan.reversed_y_dims)
  if plan.scalar_bool_dims:
    x = lax_structural.expand_dims(x, plan.scalar_bool_dims)
  dnums = gather_scatter.ScatterDimensionNumbers(
      update_window_dims=plan.dnums.offset_dims,
      inserted_window_dims=plan.dnums.collapsed_slice_dims,
      scatter_dims_to_operand_dims=plan.dnums.start_index_map,
      operand_batching_dims=plan.dnums.operand_batching_dims,
      scatter_indices_batching_dims=plan.dnums.start_indices_batching_dims)
  out = scatter_op(x, plan.gather_indices, y, dnums,
                   indices_are_sorted=plan.indices_are_sorted or indices_are_sorted,
                   unique_indices=plan.unique_indices or unique_indices, mode=mode)
  if plan.scalar_bool_dims:
    out = lax_structural.squeeze(out, plan.scalar_bool_dims)
  return lax.convert_element_type(out, x_dtype, weak_type=weak)


def _safe_to_cast(value, to_dtype) -> bool:
  # The target is treated as strongly typed; a weak value casts safely if it promotes to it.
  if dtypes.canonicalize_dtype(dtype_of(value), allow_extended_dtype=True) == to_dtype:
    return True  # also keys written into keys
  return dtypes.result_type(value, to_dtype) == to_dtype


class _IndexUpdateHelper:
  """The ``x.at`` property: ``x.at[idx]`` gives an `_IndexUpdateRef`.

  Arrays are immutable, so ``x[idx] = y`` is written ``x = x.at[idx].set(y)``;
  ``add``, ``subtract``, ``multiply`` (``mul``), ``divide``, ``power``,
  ``min``, ``max`` and ``apply`` combine instead, and ``get`` reads. Out of
  bounds, updates are dropped and ``get`` clamps, unless ``mode`` says
  otherwise ('clip', 'drop', 'fill', 'promise_in_bounds').

  >>> import xjax.numpy as jnp
  >>> x = jnp.zeros(4)
  >>> x.at[1].set(5.0)
  Array([0., 5., 0., 0.], dtype=float32)
  >>> x.at[jnp.array([0, 0, 9])].add(1.0)
  Array([2., 0., 0., 0.], dtype=float32)
  >>> jnp.arange(10.0).at[11].get(mode="fill", fill_value=-1.0)
  Array(-1., dtype=float32)

  Mirrors `jax.numpy.ndarray.at`.
  """
  __slots__ = ("array",)

  def __init__(self, array):
    self.array = array

  def __getitem__(self, index):
    return _IndexUpdateRef(self.array, index)

  def __repr__(self):
    return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
  """``x.at[idx]``: call one of its methods to get an updated copy of ``x``."""
  __slots__ = ("array", "index")

  def __init__(self, array, index):
    self.array = array
    self.index = index

  def __repr__(self):
    return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

  def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None,
          wrap_negative_indices=True):
    """``x[idx]``, with the given out-of-bounds `mode` (and `fill_value` for 'fill')."""
    return rewriting_take(self.array, self.index, indices_are_sorted=indices_are_sorted,
                          unique_indices=unique_indices, mode=mode, fill_value=fill_value,
                          normalize_indices=wrap_negative_indices)

  def _update(self, values, op, indices_are_sorted, unique_indices, mode, wrap_negative_indices):
    return scatter_update(self.array, self.index, values, op,
                          indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                          mode=mode, normalize_indices=wrap_negative_indices)

  def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
          wrap_negative_indices=True):
    """``x[idx] = values``, as a new array."""
    return self._update(values, gather_scatter.scatter, indices_are_sorted, unique_indices,
                        mode, wrap_negative_indices)

  def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
          wrap_negative_indices=True):
    """``x[idx] += values``, as a new array (repeated indices accumulate)."""
    return self._update(values, gather_scatter.scatter_add, indices_are_sorted, unique_indices,
                        mode, wrap_negative_indices)

  def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
               wrap_negative_indices=True):
    """``x[idx] -= values``, as a new array."""
    return self._update(values, gather_scatter.scatter_sub, indices_are_sorted, unique_indices,
                        mode, wrap_negative_indices)

  def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
               wrap_negative_indices=True):
    """``x[idx] *= values``, as a new array."""
    return self._update(values, gather_scatter.scatter_mul, indices_are_sorted, unique_indices,
                        mode, wrap_negative_indices)

  mul = multiply

  def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
             wrap_negative_indices=True):
    """``x[idx] /= values``, as a new array."""
    ones = creation.ones_like(self.array)
    denom = scatter_update(ones, self.index, values, gather_scatter.scatter_mul,
                           indices_are_sorted=indices_are_sorted,
                           unique_indices=unique_indices, mode=mode,
                           normalize_indices=wrap_negative_indices)
    return ufuncs.divide(self.array, denom)

  def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            wrap_negative_indices=True):
    """``x[idx] **= values``, as a new array."""
    ones = creation.ones_like(self.array)
    exponent = scatter_update(ones, self.index, values, gather_scatter.scatter_mul,
                              indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode=mode,
                              normalize_indices=wrap_negative_indices)
    return ufuncs.power(self.array, exponent)

  def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
          wrap_negative_indices=True):
    """``x[idx] = minimum(x[idx], values)``, as a new array."""
    return self._update(values, gather_scatter.scatter_min, indices_are_sorted, unique_indices,
                        mode, wrap_negative_indices)

  def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
          wrap_negative_indices=True):
    """``x[idx] = maximum(x[idx], values)``, as a new array."""
    return self._update(values, gather_scatter.scatter_max, indices_are_sorted, unique_indices,
                        mode, wrap_negative_indices)

  def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None,
            wrap_negative_indices=True):
    """``x[idx] = func(x[idx])`` for a unary elementwise `func`, as a new array."""
    def op(x, indices, y, dnums, **kwargs):
      return gather_scatter.scatter_apply(x, indices, func, dnums, update_shape=util.shape(y),
                                          **kwargs)
    zero = np.zeros((), dtype_of(self.array))
    return self._update(zero, op, indices_are_sorted, unique_indices, mode,
                        wrap_negative_indices)


# ----------------------------------------------------------------------------
# take, take_along_axis


def take(a, indices, axis: int | None = None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
  """Elements of `a` at `indices` along `axis` (of the flattened array when None).

  Args:
    a: an array.
    indices: an integer array.
    axis: the axis to take along.
    out: unsupported; must be None.
    mode: out-of-bounds handling: None or "fill" (fill with `fill_value`,
      NaN for floats), "clip" or "wrap". NumPy's default "raise" is not
      supported.
    unique_indices, indices_are_sorted: promises passed to the gather.
    fill_value: the value for out-of-bounds indices under "fill".

  Returns:
    An array of shape ``a.shape[:axis] + indices.shape + a.shape[axis+1:]``.

  >>> import xjax.numpy as jnp
  >>> jnp.take(jnp.array([10, 20, 30]), jnp.array([2, 0, 5]), mode="clip")
  Array([30, 10, 30], dtype=int32)

  Mirrors `jax.numpy.take`.
  """
  util.check_no_out("take", out)
  return _take(a, indices, axis=None if axis is None else operator.index(axis), mode=mode,
               unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
               fill_value=fill_value)


@jit(static_argnames=("axis", "mode", "unique_indices", "indices_are_sorted", "fill_value"))
def _take(a, indices, axis=None, mode=None, unique_indices=False, indices_are_sorted=False,
          fill_value=None):
  a, indices = util.ensure_arraylike("take", a, indices)
  if axis is None:
    a = lax_structural.reshape(a, (util.aval_of(a).size,))
    axis = 0
  else:
    axis = canonicalize_axis(axis, util.ndim(a))
  size = util.shape(a)[axis]
  if mode is None or mode == "fill":
    gather_mode = GatherScatterMode.FILL_OR_DROP
    indices = where_(lax.lt(indices, const_like(indices, 0)),
                     lax.add(indices, const_like(indices, size)), indices)
  elif mode == "raise":
    raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
  elif mode == "wrap":
    indices = ufuncs.mod(indices, const_like(indices, size))
    gather_mode = GatherScatterMode.PROMISE_IN_BOUNDS
  elif mode == "clip":
    gather_mode = GatherScatterMode.CLIP
  else:
    raise ValueError(f"Invalid mode '{mode}' for np.take")
  index_dims = util.ndim(indices)
  slice_sizes = list(util.shape(a))
  if slice_sizes[axis] == 0:
    if util.aval_of(indices).size != 0:
      raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    return a
  if util.aval_of(indices).size == 0:
    out_shape = slice_sizes[:axis] + list(util.shape(indices)) + slice_sizes[axis + 1:]
    return creation.zeros(out_shape, dtype_of(a))
  slice_sizes[axis] = 1
  dnums = gather_scatter.GatherDimensionNumbers(
      offset_dims=tuple(list(range(axis))
                        + list(range(axis + index_dims, util.ndim(a) + index_dims - 1))),
      collapsed_slice_dims=(axis,), start_index_map=(axis,))
  return gather_scatter.gather(a, lax_structural.expand_dims(indices, (index_dims,)), dnums,
                               tuple(slice_sizes), mode=gather_mode, unique_indices=unique_indices,
                               indices_are_sorted=indices_are_sorted, fill_value=fill_value)


@jit(static_argnames=("axis", "mode", "fill_value", "wrap_negative_indices"))
def take_along_axis(arr, indices, axis: int | None = -1, mode=None, fill_value=None, *,
                    wrap_negative_indices: bool | None = None):
  """Elements of `arr` at `indices` along `axis`, the other axes broadcasting.

  Args:
    arr: an array.
    indices: an integer array of arr's rank (1-D when axis is None).
    axis: the axis to index (None: the flattened array; default -1).
    mode: out-of-bounds handling; by default "fill" (NaN for floats); "one_hot" computes
      it as a contraction with one-hot rows (out-of-range indices give 0).
    fill_value: the value for out-of-bounds indices.
    wrap_negative_indices: whether a negative index counts from the end (default: yes,
      unless mode is "promise_in_bounds"); when False, negative indices are out of bounds.

  Returns:
    An array of the broadcast shape of indices and arr (with arr's axis
    replaced).

  Raises:
    TypeError: non-integer indices.
    ValueError: ranks differ.

  Mirrors `jax.numpy.take_along_axis`.
  """
  a, indices = util.ensure_arraylike("take_along_axis", arr, indices)
  index_dtype = dtype_of(indices)
  idx_shape = util.shape(indices)
  if not dtypes.issubdtype(index_dtype, np.integer):
    raise TypeError(f"take_along_axis indices must be of integer type, got {index_dtype}")
  if axis is None:
    if len(idx_shape) != 1:
      raise ValueError(f"take_along_axis indices must be 1D if axis=None, got shape {idx_shape}")
    a = lax_structural.reshape(a, (util.aval_of(a).size,))
    axis = 0
  rank = util.ndim(a)
  if rank != len(idx_shape):
    raise ValueError("indices and arr must have the same number of dimensions; "
                     f"{len(idx_shape)} vs. {rank}")
  axis = canonicalize_axis(axis, rank)
  a_shape = util.shape(a)
  arr_shape = tuple(1 if i == axis else d for i, d in enumerate(a_shape))
  out_shape = util.broadcast_shapes(idx_shape, arr_shape)
  if a_shape[axis] == 0:
    return creation.zeros(out_shape, dtype_of(a))
  if wrap_negative_indices is None:
    wrap_negative_indices = mode != "promise_in_bounds"
  if wrap_negative_indices:
    # As JAX: indices are first widened to a signed type that holds index + axis size.
    wide = np.int64 if a_shape[axis] > np.iinfo(np.int32).max else np.int32
    indices = lax.convert_element_type(indices, dtypes.canonicalize_dtype(wide))
    indices = lax.select_n(lax.lt(indices, const_like(indices, 0)), indices,
                           lax.add(indices, const_like(indices, a_shape[axis])))
  if mode == "one_hot":
    return _take_along_axis_one_hot(a, indices, axis)
  index_dims = [i for i, d in enumerate(idx_shape) if i == axis or d != 1]
  gather_indices = lax_structural.reshape(
      indices, tuple(out_shape[i] for i in index_dims) + (1,))
  slice_sizes, offset_dims, start_index_map, collapsed = [], [], [], []
  operand_batching_dims, indices_batching_dims, dims_to_squeeze = [], [], []
  new_i = j = 0
  for i in range(rank):
    if i == axis:
      slice_sizes.append(1)
      start_index_map.append(new_i)
      collapsed.append(new_i)
      new_i += 1
      j += 1
    elif idx_shape[i] == 1:
      offset_dims.append(i)
      slice_sizes.append(arr_shape[i])
      new_i += 1
    elif arr_shape[i] == 1:
      dims_to_squeeze.append(i)
      j += 1
    else:
      slice_sizes.append(0 if arr_shape[i] == 0 else 1)
      operand_batching_dims.append(new_i)
      indices_batching_dims.append(j)
      new_i += 1
      j += 1
  if dims_to_squeeze:
    a = lax_structural.squeeze(a, tuple(dims_to_squeeze))
  dnums = gather_scatter.GatherDimensionNumbers(
      offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(collapsed),
      start_index_map=tuple(start_index_map), operand_batching_dims=tuple(operand_batching_dims),
      start_indices_batching_dims=tuple(indices_batching_dims))
  return gather_scatter.gather(a, gather_indices, dnums, tuple(slice_sizes),
                               mode="fill" if mode is None else mode, fill_value=fill_value)


def _take_along_axis_one_hot(a, indices, axis):
  """take_along_axis as a contraction with one-hot rows of `indices` (mode='one_hot', as
  JAX computes it: out-of-range indices select nothing and give 0)."""
  from xjax._src.numpy import einsum
  size = util.shape(a)[axis]
  hot = lax.eq(lax_structural.expand_dims(indices, (util.ndim(indices),)),
               lax_structural.broadcasted_iota(dtype_of(indices),
                                               (*util.shape(indices), size),
                                               util.ndim(indices)))
  if util.ndim(a) == 1:
    return einsum.einsum("...b,b->...", hot, a, preferred_element_type=dtype_of(a))
  letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
  if axis > len(letters) - 2:
    raise ValueError("One Hot indexing is only supported for up to 50 leading dimensions.")
  lead = letters[:axis]
  return einsum.einsum(f"{lead}y...z,{lead}z...->{lead}y...", hot, a,
                       precision=lax_dot.Precision.HIGHEST, preferred_element_type=dtype_of(a))
