"""Segment reductions (mirrors `jax.ops`): the sum, product, maximum or minimum of the rows
of `data` that share a segment id, computed as one scatter into an array of identities."""
from __future__ import annotations

import numpy as np

from xjax._src import dtypes
from xjax._src.lax import gather_scatter as lax_gather_scatter
from xjax._src.numpy import creation, indexing, reductions, util


def _identity(scatter_op, dtype):
  """The value an empty segment holds: the reduction's identity in `dtype`."""
  if scatter_op is lax_gather_scatter.scatter_add:
    return 0
  if scatter_op is lax_gather_scatter.scatter_mul:
    return 1
  lowest = scatter_op is lax_gather_scatter.scatter_max
  if dtype == np.bool_:
    return not lowest
  if dtypes.issubdtype(dtype, np.integer):
    info = dtypes.iinfo(dtype)
    return int(info.min if lowest else info.max)
  return -np.inf if lowest else np.inf


def _segment_update(name, data, segment_ids, scatter_op, reducer, num_segments,
                    indices_are_sorted, unique_indices, bucket_size, mode, out_sharding):
  util.check_arraylike(name, data, segment_ids)
  if out_sharding is not None:
    raise NotImplementedError(f"{name}: out_sharding is not supported by xjax; reshard the "
                              "result with jax.sharding.reshard instead")
  mode = lax_gather_scatter.GatherScatterMode.FILL_OR_DROP if mode is None else mode
  data, segment_ids = creation.asarray(data), creation.asarray(segment_ids)
  if not dtypes.issubdtype(segment_ids.dtype, np.integer):
    raise TypeError(f"{name}: segment_ids must be an integer array, got {segment_ids.dtype}")
  if num_segments is None:
    ids = util.concrete_or_error(segment_ids, f"{name}() `num_segments` argument.")
    num_segments = int(np.max(np.asarray(ids))) + 1 if np.size(ids) else 0
  num_segments = util.concrete_int(num_segments, f"{name}() `num_segments` argument.")
  if num_segments < 0:
    raise ValueError("num_segments must be non-negative.")
  dtype = data.dtype
  fill = _identity(scatter_op, dtype)
  if bucket_size is None:
    out = creation.full((num_segments, *data.shape[1:]), fill, dtype)
    return indexing.scatter_update(out, segment_ids, data, scatter_op,
                                   indices_are_sorted=indices_are_sorted,
                                   unique_indices=unique_indices, mode=mode,
                                   normalize_indices=False)
  # As JAX: each bucket of `bucket_size` consecutive rows reduces into its own row of
  # segments, then the buckets are reduced (a different summation order than one scatter).
  n = segment_ids.shape[0]
  num_buckets = -(-n // bucket_size)
  out = creation.full((num_buckets, num_segments, *data.shape[1:]), fill, dtype)
  buckets = creation.arange(n) // bucket_size
  out = indexing.scatter_update(out, (buckets, segment_ids[None, :]), data, scatter_op,
                                indices_are_sorted=indices_are_sorted,
                                unique_indices=unique_indices, mode=mode,
                                normalize_indices=False)
  return reducer(out, axis=0).astype(dtype)


def _segment_function(name, scatter_op, reducer, what):
  def segment_fn(data, segment_ids, num_segments=None, indices_are_sorted=False,
                 unique_indices=False, bucket_size=None, mode=None, out_sharding=None):
    return _segment_update(name, data, segment_ids, scatter_op, reducer, num_segments,
                           indices_are_sorted, unique_indices, bucket_size, mode, out_sharding)
  segment_fn.__name__ = segment_fn.__qualname__ = name
  segment_fn.__doc__ = f"""The {what} of the rows of `data` in each segment.

  Args:
    data: an array; its leading axis is split into segments.
    segment_ids: an integer array of shape ``data.shape[:1]``, each row's segment; ids need
      not be sorted or contiguous. Ids outside ``[0, num_segments)`` (negative ones
      included) are dropped under the default `mode`.
    num_segments: the number of segments (a static int); by default ``max(segment_ids)
      + 1``, which needs concrete ids (ConcretizationTypeError under jit).
    indices_are_sorted, unique_indices: promises about `segment_ids` XLA may use.
    bucket_size: reduce buckets of that many consecutive rows separately, then the
      buckets (JAX's option for accuracy; the same result up to rounding).
    mode: a `lax.GatherScatterMode` or its name; default ``"fill"`` (drop out of bounds).
    out_sharding: must be None in xjax (NotImplementedError otherwise).

  Returns:
    An array of shape ``(num_segments, *data.shape[1:])`` and `data`'s dtype; an empty
    segment holds the reduction's identity.

  Raises:
    TypeError: non-array inputs or non-integer `segment_ids`.
    ValueError: a negative `num_segments`.

  Mirrors `jax.ops.{name}`.
  """
  return segment_fn


segment_sum = _segment_function("segment_sum", lax_gather_scatter.scatter_add, reductions.sum,
                                "sum")
segment_prod = _segment_function("segment_prod", lax_gather_scatter.scatter_mul, reductions.prod,
                                 "product")
segment_max = _segment_function("segment_max", lax_gather_scatter.scatter_max, reductions.max,
                                "maximum")
segment_min = _segment_function("segment_min", lax_gather_scatter.scatter_min, reductions.min,
                                "minimum")
