"""Gather and the scatter family (scatter, scatter-add, scatter-sub, scatter-mul,
scatter-min, scatter-max): their dimension numbers, modes and rules, and `index_take`.

Out-of-bounds indices follow JAX (the "Sharp Bits"): `gather` clamps under
CLIP and PROMISE_IN_BOUNDS and fills whole windows with `fill_value` under
FILL_OR_DROP; `scatter` drops out-of-bounds windows under FILL_OR_DROP and
PROMISE_IN_BOUNDS (XLA's rule) and clamps under CLIP. The masking and
clamping are done in the lowerings, so jaxprs show a single gather or
scatter equation, as JAX's do.

Differentiation follows JAX's rules: gather, scatter-add and scatter-sub are
linear in their array operands (never in the indices), a gather's transpose
being a scatter-add and back; scatter-mul, scatter-min and scatter-max have
JAX's jvps; scatter's jvp masks overlapping updates by scattering ids, and it
transposes only with unique indices.

slice, dynamic_slice and dynamic_update_slice are in `slicing`, whose batching
rules are gathers and scatters of this module.
"""
from __future__ import annotations

import enum
import functools
import weakref
from typing import NamedTuple

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import executable_cache
from xjax._src import stablehlo as hlo
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import lowering
from xjax._src.interpreters import partial_eval as pe
from xjax._src.lax import elementwise as ew
from xjax._src.lax.structural import (broadcast_in_dim, concatenate, expand_dims, full, iota,
                                      reshape)
from xjax._src.lax.utils import check_dtype_kind, standard_primitive


def _check_same_dtypes(name: str, *avals) -> None:
  if any(a.dtype != avals[0].dtype for a in avals[1:]):
    raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                    f"{', '.join(str(a.dtype) for a in avals)}.")


# ----------------------------------------------------------------------------
# gather


class GatherDimensionNumbers(NamedTuple):
  """How the dimensions of a gather's operand, indices and output correspond.

  The index vector is always the last dimension of the indices (XLA's
  `index_vector_dim` is implicit).

  Attributes:
    offset_dims: output dimensions (sorted) holding the slice's kept dimensions.
    collapsed_slice_dims: operand dimensions (sorted, slice size 1) dropped
      from the output.
    start_index_map: for each index-vector component, the operand dimension it
      indexes.
    operand_batching_dims: operand dimensions (sorted, slice size 1) paired
      with `start_indices_batching_dims`.
    start_indices_batching_dims: indices dimensions paired with those.

  Mirrors `jax.lax.GatherDimensionNumbers`.
  """
  offset_dims: tuple[int, ...]
  collapsed_slice_dims: tuple[int, ...]
  start_index_map: tuple[int, ...]
  operand_batching_dims: tuple[int, ...] = ()
  start_indices_batching_dims: tuple[int, ...] = ()


class GatherScatterMode(enum.Enum):
  """What a gather or scatter does with out-of-bounds indices.

  CLIP: indices are clamped so the whole window is in bounds.
  FILL_OR_DROP: a gather returns `fill_value` for a window with any element
    out of bounds; a scatter drops such a window.
  PROMISE_IN_BOUNDS: the caller promises indices are in bounds; in practice
    gathers clamp and scatters drop (XLA's behaviour).
  ONE_HOT: accepted for compatibility; lowered as a plain scatter.

  Mirrors `jax.lax.GatherScatterMode`.
  """
  CLIP = enum.auto()
  FILL_OR_DROP = enum.auto()
  PROMISE_IN_BOUNDS = enum.auto()
  ONE_HOT = enum.auto()

  @staticmethod
  def from_any(s) -> GatherScatterMode:
    """The mode named by `s`: a mode, 'clip', 'fill'/'drop' (also None),
    'promise_in_bounds' or 'one_hot'."""
    if isinstance(s, GatherScatterMode):
      return s
    if s == "clip":
      return GatherScatterMode.CLIP
    if s is None or s == "fill" or s == "drop":
      return GatherScatterMode.FILL_OR_DROP
    if s == "promise_in_bounds":
      return GatherScatterMode.PROMISE_IN_BOUNDS
    if s == "one_hot":
      return GatherScatterMode.ONE_HOT
    raise ValueError(f'Unknown gather mode "{s}"')


def _hashable_dnums(dimension_numbers):
  # Lists would make the params unhashable; the values themselves are kept.
  return type(dimension_numbers)(*(tuple(f) if isinstance(f, list) else f
                                   for f in dimension_numbers))


def _default_fill_value(dtype):
  if dtypes.issubdtype(dtype, np.inexact):
    return np.nan
  if dtypes.issubdtype(dtype, np.signedinteger):
    return int(dtypes.iinfo(dtype).min)
  if dtypes.issubdtype(dtype, np.unsignedinteger):
    return int(dtypes.iinfo(dtype).max)
  if dtype == np.bool_:
    return True
  if dtypes.issubdtype(dtype, dtypes.prng_key):
    return int(np.iinfo(np.uint32).max)  # every word of an out-of-bounds key's data
  raise ValueError(f"Unsupported dtype for gather fill_value {dtype}")


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
  """XLA's Gather: slices of `operand` at the positions held in `start_indices`.

  Prefer NumPy-style indexing (``x[idx]``, ``x.at[idx].get()``), which builds
  the dimension numbers for you.

  Args:
    operand: the array to take slices from.
    start_indices: an integer array whose last dimension is the index vector.
    dimension_numbers: a `GatherDimensionNumbers`.
    slice_sizes: the size of the slice in each operand dimension.
    unique_indices: a promise that the slices do not overlap (unchecked).
    indices_are_sorted: a promise that the indices are sorted (unchecked).
    mode: a `GatherScatterMode` or its name; None means PROMISE_IN_BOUNDS.
    fill_value: under FILL_OR_DROP, the value of out-of-bounds windows;
      defaults to NaN for inexact dtypes, the minimum for signed integers,
      the maximum for unsigned integers and True for bool.

  Returns:
    The gathered array.

  Raises:
    TypeError: inconsistent dimension numbers or slice sizes.
    ValueError: the indices are not integers, or an unknown mode.

  >>> import xjax.numpy as jnp
  >>> dnums = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
  ...                                start_index_map=(0,))
  >>> gather(jnp.array([10, 11, 12]), jnp.array([[2], [0]]), dnums, (1,))
  Array([12, 10], dtype=int32)

  Mirrors `jax.lax.gather`.
  """
  parsed_mode = GatherScatterMode.from_any(
      GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else mode)
  if parsed_mode == GatherScatterMode.FILL_OR_DROP:
    if fill_value is None:
      fill_value = _default_fill_value(core.get_aval(operand).dtype)
  else:
    fill_value = None
  return gather_p.bind(operand, start_indices,
                       dimension_numbers=_hashable_dnums(dimension_numbers),
                       slice_sizes=core.canonicalize_shape(slice_sizes),
                       unique_indices=bool(unique_indices),
                       indices_are_sorted=bool(indices_are_sorted), mode=parsed_mode,
                       fill_value=fill_value)


def _is_sorted(dims, op_name, name):
  if any(b < a for a, b in zip(dims, dims[1:])):
    raise TypeError(f"{name} in {op_name} op must be sorted; got {dims}")


def _dims_in_range(dims, rank, op_name, name):
  for d in dims:
    if not 0 <= d < rank:
      raise TypeError(f"Invalid {name} set in {op_name} op; valid range is [0, {rank}); "
                      f"got: {d}.")


def _sorted_dims_in_range(dims, rank, op_name, name):
  # Only the ends are checked: the dims are known to be sorted.
  if dims and (dims[0] < 0 or dims[-1] >= rank):
    bad = dims[0] if dims[0] < 0 else dims[-1]
    raise TypeError(f"Invalid {name} set in {op_name} op; valid range is [0, {rank}); "
                    f"got: {bad}.")


def _no_duplicate_dims(dims, op_name, name):
  if len(set(dims)) != len(dims):
    raise TypeError(f"{name} in {op_name} op must not repeat; got: {dims}.")


def _disjoint_dims(dims1, dims2, op_name, name1, name2):
  if not set(dims1).isdisjoint(dims2):
    raise TypeError(f"{name1} and {name2} in {op_name} op must be disjoint; "
                    f"got: {dims1} and {dims2}.")


def _check_batching_dims(op_name, operand, indices, operand_batching_dims,
                         indices_batching_dims, indices_name):
  """The checks gather and scatter share on their batching dimensions."""
  cap = op_name.capitalize()
  _no_duplicate_dims(indices_batching_dims, op_name, indices_name)
  _dims_in_range(indices_batching_dims, indices.ndim, op_name, indices_name)
  if indices.ndim - 1 in indices_batching_dims:
    raise TypeError(f"{cap} op cannot have the index vector dimension as a batching "
                    f"dimension; got {indices_batching_dims}.")
  if len(operand_batching_dims) != len(indices_batching_dims):
    sep = "" if op_name == "gather" else " "  # JAX's gather message lacks the space
    raise TypeError(f"{cap} op requires equal numbers of operand_batching_dims and "
                    f"{indices_name}, got {operand_batching_dims} and{sep}"
                    f"{indices_batching_dims}.")
  operand_batch_shape = tuple(operand.shape[i] for i in operand_batching_dims)
  indices_batch_shape = tuple(indices.shape[i] for i in indices_batching_dims)
  if operand_batch_shape != indices_batch_shape:
    raise TypeError(f"{cap} op requires operand batching dimensions and indices batching "
                    f"dimensions to have the same shape, got {operand_batch_shape} and "
                    f"{indices_batch_shape}.")
  return operand_batch_shape


def _gather_shape(operand, indices, dimension_numbers, slice_sizes):
  """Checks the gather's dimension numbers (XLA's rules, JAX's messages); the output shape."""
  offset_dims, collapsed, start_index_map, operand_bdims, indices_bdims = dimension_numbers
  index_vector_dim = indices.ndim - 1
  if index_vector_dim < 0:
    raise TypeError("Gather index leaf dimension must be within [0, rank(indices) + 1). "
                    f"rank(indices) is {indices.ndim} and gather index leaf dimension is "
                    f"{index_vector_dim}.")
  _is_sorted(offset_dims, "gather", "offset_dims")
  _no_duplicate_dims(offset_dims, "gather", "offset_dims")
  out_rank = len(offset_dims) + indices.ndim - 1
  for i, d in enumerate(offset_dims):
    if not 0 <= d < out_rank:
      raise TypeError(f"Offset dimension {i} in gather op is out of bounds; got {d}, but "
                      f"should have been in [0, {out_rank})")
  if len(start_index_map) != indices.shape[index_vector_dim]:
    raise TypeError(f"Gather op has {len(start_index_map)} elements in start_index_map and "
                    f"the bound of dimension index_vector_dim={index_vector_dim} of indices is "
                    f"{indices.shape[index_vector_dim]}. These two numbers must be equal.")
  for i, d in enumerate(start_index_map):
    if not 0 <= d < operand.ndim:
      raise TypeError(f"Invalid start_index_map; domain is [0, {operand.ndim}), got: {i}->{d}.")
  _no_duplicate_dims(start_index_map, "gather", "start_index_map")
  _is_sorted(collapsed, "gather", "collapsed_slice_dims")
  _sorted_dims_in_range(collapsed, operand.ndim, "gather", "collapsed_slice_dims")
  _no_duplicate_dims(collapsed, "gather", "collapsed_slice_dims")
  _no_duplicate_dims(operand_bdims, "gather", "operand_batching_dims")
  _is_sorted(operand_bdims, "gather", "operand_batching_dims")
  _sorted_dims_in_range(operand_bdims, operand.ndim, "gather", "operand_batching_dims")
  _disjoint_dims(collapsed, operand_bdims, "gather", "collapsed_slice_dims",
                 "operand_batching_dims")
  _disjoint_dims(start_index_map, operand_bdims, "gather", "start_index_map",
                 "operand_batching_dims")
  _check_batching_dims("gather", operand, indices, operand_bdims, indices_bdims,
                       "start_indices_batching_dims")
  if operand.ndim != len(slice_sizes):
    raise TypeError("Gather op must have one slice size for every input dimension; got: "
                    f"len(slice_sizes)={len(slice_sizes)}, input_shape.rank={operand.ndim}")
  if len(slice_sizes) != len(offset_dims) + len(collapsed) + len(operand_bdims):
    raise TypeError("All components of the offset index in a gather op must either be a "
                    "offset dimension or explicitly collapsed/batching; got "
                    f"len(slice_sizes)={len(slice_sizes)}, output_slice_sizes={offset_dims}, "
                    f"collapsed_slice_dims={collapsed}, operand_batching_dims={operand_bdims}.")
  if indices.size:
    for i, (s, d) in enumerate(zip(slice_sizes, operand.shape)):
      if not 0 <= s <= d:
        raise TypeError(f"Slice size at index {i} in gather op is out of range, must be "
                        f"within [0, {d} + 1), got {s}.")
  for i, d in enumerate(collapsed):
    if slice_sizes[d] != 1:
      raise TypeError("Gather op can only collapse slice dims with bound 1, but bound is "
                      f"{slice_sizes[d]} for index {d} at position {i}.")
  for i, d in enumerate(operand_bdims):
    if slice_sizes[d] > 1:
      raise TypeError("Gather op can only have operand batching dims with bound 0/1, but "
                      f"bound is {slice_sizes[d]} for index {d} at position {i}.")
  # Output: offset dims take the kept slice sizes, the others the indices' batch dims.
  kept_sizes = iter(s for i, s in enumerate(slice_sizes)
                    if i not in collapsed and i not in operand_bdims)
  batch_sizes = iter(indices.shape[:-1])
  return tuple(next(kept_sizes) if i in offset_dims else next(batch_sizes)
               for i in range(out_rank))


def _gather_abstract_eval(operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                          indices_are_sorted, mode, fill_value):
  shape = _gather_shape(operand, indices, dimension_numbers, slice_sizes)
  if not dtypes.issubdtype(indices.dtype, np.integer):
    raise ValueError("indices must have an integer type")
  return core.ShapedArray(shape, operand.dtype, operand.weak_type)


def _gather_jvp(t, operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                indices_are_sorted, mode, fill_value):
  # Out-of-bounds windows (FILL_OR_DROP) have a constant value: zero tangent.
  return gather(t, indices, dimension_numbers, slice_sizes, unique_indices=unique_indices,
                indices_are_sorted=indices_are_sorted, mode=mode, fill_value=0)


def _gather_transpose(ct, operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                      indices_are_sorted, mode, fill_value):
  # Each gathered window's cotangent is added back where it came from (same mode).
  dn = dimension_numbers
  scatter_dnums = ScatterDimensionNumbers(
      update_window_dims=dn.offset_dims, inserted_window_dims=dn.collapsed_slice_dims,
      scatter_dims_to_operand_dims=dn.start_index_map,
      operand_batching_dims=dn.operand_batching_dims,
      scatter_indices_batching_dims=dn.start_indices_batching_dims)
  zeros = full(operand.aval.shape, 0, core.get_aval(ct).dtype)
  return [scatter_add(zeros, indices, ct, scatter_dnums, indices_are_sorted=indices_are_sorted,
                      unique_indices=unique_indices, mode=mode), None]


def _shift(dims):
  # np.add, as JAX's rules do: the shifted dims are NumPy ints, and printed
  # jaxprs show them as JAX's do (``offset_dims=(np.int64(1),)``).
  return tuple(np.add(1, dims))


def _gather_batch(axis_data, args, dims, *, dimension_numbers, slice_sizes, unique_indices,
                  indices_are_sorted, mode, fill_value):
  """JAX's rule: a batched operand gains a window dim, batched indices a batch dim, and
  both batched become a pair of batching dims."""
  operand, indices = args
  operand_bdim, indices_bdim = dims
  dn = dimension_numbers
  params = dict(mode=mode, fill_value=fill_value)
  if indices_bdim is None:  # the batch axis is one more (whole) window dimension
    operand = batching.moveaxis(operand, operand_bdim, 0)
    dnums = GatherDimensionNumbers(
        offset_dims=(0, *_shift(dn.offset_dims)),
        collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
        start_index_map=_shift(dn.start_index_map),
        operand_batching_dims=_shift(dn.operand_batching_dims),
        start_indices_batching_dims=dn.start_indices_batching_dims)
    return gather(operand, indices, dnums, (np.shape(operand)[0], *slice_sizes),
                  unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                  **params), 0
  indices = batching.moveaxis(indices, indices_bdim, 0)
  if operand_bdim is None:  # the batch axis is one more batch dim of the indices
    dnums = dn._replace(offset_dims=tuple(d + 1 for d in dn.offset_dims),
                        start_indices_batching_dims=_shift(dn.start_indices_batching_dims))
    # Members may index the same elements: the promises no longer hold.
    return gather(operand, indices, dnums, slice_sizes, unique_indices=False,
                  indices_are_sorted=False, **params), 0
  # Both batched: operand dim 0 and indices dim 0 pair up as batching dims.
  operand = batching.moveaxis(operand, operand_bdim, 0)
  dnums = GatherDimensionNumbers(
      offset_dims=_shift(dn.offset_dims), collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
      start_index_map=_shift(dn.start_index_map),
      operand_batching_dims=(0, *_shift(dn.operand_batching_dims)),
      start_indices_batching_dims=(0, *_shift(dn.start_indices_batching_dims)))
  batch_window = 0 if np.shape(operand)[0] == 0 else 1
  return gather(operand, indices, dnums, (batch_window, *slice_sizes),
                unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                **params), 0


def _broadcast_const(ctx, value, dtype, shape):
  """A constant of `dtype` broadcast to `shape` (a splat, folded by XLA)."""
  scalar = ctx.constant(np.asarray(value, dtype))
  if not shape:
    return scalar
  return ctx.op1("stablehlo.broadcast_in_dim", [scalar], hlo.tensor_type(shape, dtype),
                 "broadcast_dimensions = array<i64>")


def _compare(ctx, x, y, direction, dtype, shape):
  attrs = (f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
           f"compare_type = #stablehlo<comparison_type {hlo.comparison_type(dtype)}>")
  return ctx.op1("stablehlo.compare", [x, y], hlo.tensor_type(shape, np.bool_), attrs)


def _mask_index_dtype(dtype) -> np.dtype:
  # A signed dtype holding every index value without wrapping into range.
  return np.dtype(np.int64 if dtype.itemsize == 8 or dtype == np.uint32 else np.int32)


def _gather_in_bounds_mask(ctx, indices, indices_aval, upper_bounds):
  """Per batch position: whether 0 <= index[k] <= upper_bounds[k] for every component k."""
  shape = indices_aval.shape
  dtype = _mask_index_dtype(indices_aval.dtype)
  if dtype != indices_aval.dtype:
    indices = ctx.op1("stablehlo.convert", [indices], hlo.tensor_type(shape, dtype))
  zero = _broadcast_const(ctx, 0, dtype, shape)
  upper = ctx.constant(np.asarray(upper_bounds, dtype))
  upper = ctx.op1("stablehlo.broadcast_in_dim", [upper], hlo.tensor_type(shape, dtype),
                  f"broadcast_dimensions = {hlo.i64_array([len(shape) - 1])}")
  ok = ctx.op1("stablehlo.and", [_compare(ctx, indices, zero, "GE", dtype, shape),
                                 _compare(ctx, indices, upper, "LE", dtype, shape)],
               hlo.tensor_type(shape, np.bool_))
  scalar_bool = hlo.tensor_type((), np.bool_)

  def all_of(sub, args):
    return [sub.op1("stablehlo.and", args, scalar_bool)]
  return ctx.op1("stablehlo.reduce", [ok, ctx.constant(np.bool_(True))],
                 hlo.tensor_type(shape[:-1], np.bool_),
                 f"dimensions = {hlo.i64_array([len(shape) - 1])}",
                 [ctx.region([scalar_bool, scalar_bool], all_of)])


def _gather_lowering(ctx, operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                     indices_are_sorted, mode, fill_value):
  operand_aval, indices_aval = ctx.avals_in
  out = ctx.avals_out[0]
  if out.size == 0:
    return _broadcast_const(ctx, 0, out.dtype, out.shape)
  if mode == GatherScatterMode.ONE_HOT:
    raise NotImplementedError("gather with mode GatherScatterMode.ONE_HOT is not supported")
  dn = dimension_numbers
  fields = [("offset_dims", dn.offset_dims), ("collapsed_slice_dims", dn.collapsed_slice_dims),
            ("operand_batching_dims", dn.operand_batching_dims),
            ("start_indices_batching_dims", dn.start_indices_batching_dims),
            ("start_index_map", dn.start_index_map)]
  dnums = ", ".join([f"{k} = [{', '.join(str(int(d)) for d in v)}]" for k, v in fields if v]
                    + [f"index_vector_dim = {indices_aval.ndim - 1}"])
  attrs = (f"dimension_numbers = #stablehlo.gather<{dnums}>, "
           f"indices_are_sorted = {'true' if indices_are_sorted else 'false'}, "
           f"slice_sizes = {hlo.i64_array(slice_sizes)}")
  # XLA clamps start indices into range, which is CLIP (and PROMISE_IN_BOUNDS).
  result = ctx.op1("stablehlo.gather", [operand, indices], hlo.aval_type(out), attrs)
  if mode != GatherScatterMode.FILL_OR_DROP:
    return result
  upper = [operand_aval.shape[d] - slice_sizes[d] for d in dn.start_index_map]
  mask = _gather_in_bounds_mask(ctx, indices, indices_aval, upper)
  batch_dims = [i for i in range(out.ndim) if i not in dn.offset_dims]
  mask = ctx.op1("stablehlo.broadcast_in_dim", [mask], hlo.tensor_type(out.shape, np.bool_),
                 f"broadcast_dimensions = {hlo.i64_array(batch_dims)}")
  fill = _broadcast_const(ctx, ew._host_convert(fill_value, out.dtype), out.dtype, out.shape)
  return ctx.op1("stablehlo.select", [mask, result, fill], hlo.aval_type(out))


gather_p = standard_primitive("gather", _gather_abstract_eval, _gather_lowering)
ad.defjvp(gather_p, _gather_jvp, None)
gather_p.def_transpose(_gather_transpose)
gather_p.def_batch(_gather_batch)


# ----------------------------------------------------------------------------
# scatter, scatter-add, scatter-sub, scatter-mul, scatter-min, scatter-max


class ScatterDimensionNumbers(NamedTuple):
  """How the dimensions of a scatter's operand, indices and updates correspond.

  The index vector is always the last dimension of the indices.

  Attributes:
    update_window_dims: updates dimensions (sorted) that are window dimensions.
    inserted_window_dims: operand dimensions (sorted) of window size 1 absent
      from the updates (the mirror of gather's `collapsed_slice_dims`).
    scatter_dims_to_operand_dims: for each index-vector component, the
      operand dimension it indexes.
    operand_batching_dims: operand dimensions (sorted) paired with
      `scatter_indices_batching_dims`.
    scatter_indices_batching_dims: indices dimensions paired with those.

  Mirrors `jax.lax.ScatterDimensionNumbers`.
  """
  update_window_dims: tuple[int, ...]
  inserted_window_dims: tuple[int, ...]
  scatter_dims_to_operand_dims: tuple[int, ...]
  operand_batching_dims: tuple[int, ...] = ()
  scatter_indices_batching_dims: tuple[int, ...] = ()


@functools.lru_cache(maxsize=512)
def _reduction_jaxpr(computation, aval, context):
  """The jaxpr of ``computation(x, y)`` on two scalars of `aval` (cached, as JAX does,
  so equal scatters share one jaxpr) and its consts."""
  closed = pe.trace_to_jaxpr(lambda x, y: [computation(x, y)], [aval, aval])
  return closed.jaxpr, tuple(closed.consts)


executable_cache.on_clear(_reduction_jaxpr.cache_clear)


def _scatter_bind(prim, computation, operand, scatter_indices, updates, dimension_numbers,
                  indices_are_sorted, unique_indices, mode):
  if computation is None:
    jaxpr, consts = None, ()
  else:
    jaxpr, consts = _reduction_jaxpr(computation,
                                     core.ShapedArray((), core.get_aval(operand).dtype),
                                     core.trace_context())
  return prim.bind(operand, scatter_indices, updates, update_jaxpr=jaxpr, update_consts=consts,
                   dimension_numbers=_hashable_dnums(dimension_numbers),
                   indices_are_sorted=bool(indices_are_sorted),
                   unique_indices=bool(unique_indices), mode=GatherScatterMode.from_any(mode))


_SCATTER_DOC = """XLA's Scatter: {what}.

  Prefer ``x.at[idx].{method}(...)``, which builds the dimension numbers for you.

  Args:
    operand: the array to scatter into.
    scatter_indices: an integer array whose last dimension is the index vector.
    updates: the values to scatter, of operand's dtype.
    dimension_numbers: a `ScatterDimensionNumbers`.
    indices_are_sorted: a promise that the indices are sorted (unchecked).
    unique_indices: a promise that no two updates hit one element (unchecked).
    mode: a `GatherScatterMode` or its name; None means FILL_OR_DROP
      (out-of-bounds windows are dropped); 'clip' clamps the indices.

  Returns:
    An array of operand's shape and dtype.

  Raises:
    TypeError: inconsistent dimension numbers or shapes, or differing dtypes.
    ValueError: the indices are not integers, or an unknown mode.
{example}
  Mirrors `jax.lax.{name}`.
  """


# The six wrappers share one docstring, filled in per function below (_SCATTER_DOC).
def scatter(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
            unique_indices=False, mode=None):
  return _scatter_bind(scatter_p, None, operand, scatter_indices, updates, dimension_numbers,
                       indices_are_sorted, unique_indices, mode)


def scatter_add(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
  return _scatter_bind(scatter_add_p, ew.add, operand, scatter_indices, updates,
                       dimension_numbers, indices_are_sorted, unique_indices, mode)


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
  return _scatter_bind(scatter_sub_p, ew.sub, operand, scatter_indices, updates,
                       dimension_numbers, indices_are_sorted, unique_indices, mode)


def scatter_mul(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
  return _scatter_bind(scatter_mul_p, ew.mul, operand, scatter_indices, updates,
                       dimension_numbers, indices_are_sorted, unique_indices, mode)


def scatter_min(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
  return _scatter_bind(scatter_min_p, ew.min, operand, scatter_indices, updates,
                       dimension_numbers, indices_are_sorted, unique_indices, mode)


def scatter_max(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
  return _scatter_bind(scatter_max_p, ew.max, operand, scatter_indices, updates,
                       dimension_numbers, indices_are_sorted, unique_indices, mode)


_EXAMPLE = """
  >>> import xjax.numpy as jnp
  >>> dnums = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
  ...                                 scatter_dims_to_operand_dims=(0,))
  >>> {name}(jnp.ones(3), jnp.array([[2], [2]]), jnp.array([5., 6.]), dnums)
  {result}
"""
for _fn, _what, _method, _result in [
    (scatter, "updates replace values of `operand` (in an unspecified order for "
     "duplicate indices)", "set", None),
    (scatter_add, "updates are added to `operand` (duplicates accumulate)", "add",
     "Array([ 1.,  1., 12.], dtype=float32)"),
    (scatter_sub, "updates are subtracted from `operand`", "subtract",
     "Array([  1.,   1., -10.], dtype=float32)"),
    (scatter_mul, "`operand` is multiplied by the updates", "multiply",
     "Array([ 1.,  1., 30.], dtype=float32)"),
    (scatter_min, "`operand` becomes the minimum of itself and the updates", "min",
     "Array([1., 1., 1.], dtype=float32)"),
    (scatter_max, "`operand` becomes the maximum of itself and the updates", "max",
     "Array([1., 1., 6.], dtype=float32)")]:
  _example = "" if _result is None else _EXAMPLE.format(name=_fn.__name__, result=_result)
  _fn.__doc__ = _SCATTER_DOC.format(what=_what, method=_method, name=_fn.__name__,
                                    example=_example)


_scatter_apply_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
  """XLA's Scatter where each indexed value ``v`` of `operand` becomes ``func(v)``.

  Duplicate indices apply `func` several times.

  Args:
    operand: the array to update.
    scatter_indices: an integer array whose last dimension is the index vector.
    func: a unary function on scalars of operand's dtype.
    dimension_numbers: a `ScatterDimensionNumbers`.
    update_shape: the shape the updates would have (batch dims of the
      indices, then the window).
    indices_are_sorted, unique_indices, mode: as for `scatter`.

  Returns:
    An array of operand's shape and dtype.

  Mirrors `jax.lax.scatter_apply`.
  """
  unused = full(update_shape, 0, core.get_aval(operand).dtype)
  apply = lambda x, _: func(x)  # noqa: E731
  try:
    apply = _scatter_apply_cache.setdefault(func, apply)
  except TypeError:  # func cannot be weakly referenced: no caching
    pass
  return _scatter_bind(scatter_p, apply, operand, scatter_indices, unused, dimension_numbers,
                       indices_are_sorted, unique_indices, mode)


def _scatter_shape(operand, indices, updates, dimension_numbers):
  """Checks the scatter's dimension numbers (XLA's rules, JAX's messages)."""
  window_dims, inserted, to_operand, operand_bdims, indices_bdims = dimension_numbers
  index_vector_dim = indices.ndim - 1
  if index_vector_dim < 0:
    raise TypeError("Scatter index leaf dimension must be within [0, rank(indices) + 1). "
                    f"rank(indices) is {indices.ndim} and scatter index leaf dimension is "
                    f"{index_vector_dim}.")
  expected_rank = indices.ndim - 1 + len(window_dims)
  if updates.ndim != expected_rank:
    raise TypeError(f"Updates tensor must be of rank {expected_rank}; got {updates.ndim}.")
  _is_sorted(window_dims, "scatter", "update_window_dims")
  _no_duplicate_dims(window_dims, "scatter", "update_window_dims")
  _sorted_dims_in_range(window_dims, updates.ndim, "scatter", "update_window_dims")
  _is_sorted(inserted, "scatter", "inserted_window_dims")
  _no_duplicate_dims(inserted, "scatter", "inserted_window_dims")
  _sorted_dims_in_range(inserted, operand.ndim, "scatter", "inserted_window_dims")
  _is_sorted(operand_bdims, "scatter", "operand_batching_dims")
  _no_duplicate_dims(operand_bdims, "scatter", "operand_batching_dims")
  _sorted_dims_in_range(operand_bdims, operand.ndim, "scatter", "operand_batching_dims")
  _disjoint_dims(inserted, operand_bdims, "scatter", "inserted_window_dims",
                 "operand_batching_dims")
  _disjoint_dims(to_operand, operand_bdims, "scatter", "scatter_dims_to_operand_dims",
                 "operand_batching_dims")
  operand_batch_shape = _check_batching_dims("scatter", operand, indices, operand_bdims,
                                             indices_bdims, "scatter_indices_batching_dims")
  # The updates' scatter dims are the indices' dims but the last, in order.
  scatter_dims = [d for d in range(updates.ndim) if d not in window_dims]
  updates_batch_shape = tuple(updates.shape[scatter_dims[i]] for i in indices_bdims
                              if i < len(scatter_dims))
  if operand_batch_shape != updates_batch_shape:
    raise TypeError("Scatter op requires operand batching dimensions and updates batching "
                    f"dimensions to have the same shape, got {operand_batch_shape} and "
                    f"{updates_batch_shape}.")
  window_size = len(window_dims) + len(inserted) + len(operand_bdims)
  if operand.ndim != window_size:
    raise TypeError(f"Scatter op has window of size {window_size}; doesn't match operand of "
                    f"rank {operand.ndim}.")
  if len(to_operand) != indices.shape[index_vector_dim]:
    raise TypeError(f"Scatter op has {len(to_operand)} elements in "
                    "scatter_dims_to_operand_dims and the bound of dimension "
                    f"index_vector_dim={index_vector_dim} of indices is "
                    f"{indices.shape[index_vector_dim]}. These two numbers must be equal")
  for i, d in enumerate(to_operand):
    if not 0 <= d < operand.ndim:
      raise TypeError("Invalid scatter_dims_to_operand_dims mapping; domain is "
                      f"[0, {operand.ndim}), got: {i}->{d}.")
  _no_duplicate_dims(to_operand, "scatter", "scatter_dims_to_operand_dims")
  max_window = [operand.shape[i] for i in range(operand.ndim)
                if i not in inserted and i not in operand_bdims]
  for i, d in enumerate(window_dims):
    if max_window[i] < updates.shape[d]:
      raise TypeError("Bounds of the window dimensions of updates must not exceed the bounds "
                      "of the corresponding dimensions of operand. For dimension "
                      f"{d}, updates bound is {updates.shape[d]}, operand bound is "
                      f"{max_window[i]}.")
  for i, d in enumerate(scatter_dims):
    if updates.shape[d] != indices.shape[i]:
      raise TypeError("Bounds of the scatter dimensions of updates must be the same as the "
                      "bounds of the corresponding dimensions of scatter indices. For "
                      f"scatter dimension {d}, updates bound is {updates.shape[d]}, indices "
                      f"bound is {indices.shape[i]}.")


def _scatter_abstract_eval(operand, indices, updates, *, update_jaxpr, update_consts,
                           dimension_numbers, indices_are_sorted, unique_indices, mode):
  _scatter_shape(operand, indices, updates, dimension_numbers)
  if not dtypes.issubdtype(indices.dtype, np.integer):
    raise ValueError("indices must have an integer type")
  _check_same_dtypes("scatter", operand, updates)
  return operand


def _clamp_scatter_indices(ctx, indices, operand_aval, indices_aval, updates_aval, dn):
  """Indices clamped so that every update window lies inside the operand (CLIP)."""
  window = iter(updates_aval.shape[d] for d in dn.update_window_dims)
  window_sizes = [1 if i in dn.inserted_window_dims or i in dn.operand_batching_dims
                  else next(window) for i in range(operand_aval.ndim)]
  dtype = indices_aval.dtype
  upper = [min(operand_aval.shape[d] - window_sizes[d], int(dtypes.iinfo(dtype).max))
           for d in dn.scatter_dims_to_operand_dims]
  shape = indices_aval.shape
  upper = ctx.op1("stablehlo.broadcast_in_dim", [ctx.constant(np.asarray(upper, dtype))],
                  hlo.tensor_type(shape, dtype),
                  f"broadcast_dimensions = {hlo.i64_array([len(shape) - 1])}")
  zero = _broadcast_const(ctx, 0, dtype, shape)
  return ctx.op1("stablehlo.clamp", [zero, indices, upper], indices.type)


def _scatter_lowering(ctx, operand, indices, updates, *, update_jaxpr, update_consts,
                      dimension_numbers, indices_are_sorted, unique_indices, mode):
  operand_aval, indices_aval, updates_aval = ctx.avals_in
  out = ctx.avals_out[0]
  dn = dimension_numbers
  if mode == GatherScatterMode.CLIP:
    indices = _clamp_scatter_indices(ctx, indices, operand_aval, indices_aval, updates_aval, dn)
  fields = [("update_window_dims", dn.update_window_dims),
            ("inserted_window_dims", dn.inserted_window_dims),
            ("input_batching_dims", dn.operand_batching_dims),
            ("scatter_indices_batching_dims", dn.scatter_indices_batching_dims),
            ("scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims)]
  dnums = ", ".join([f"{k} = [{', '.join(str(int(d)) for d in v)}]" for k, v in fields if v]
                    + [f"index_vector_dim = {indices_aval.ndim - 1}"])
  attrs = (f"indices_are_sorted = {'true' if indices_are_sorted else 'false'}, "
           f"scatter_dimension_numbers = #stablehlo.scatter<{dnums}>, "
           f"unique_indices = {'true' if unique_indices else 'false'}")
  scalar = hlo.tensor_type((), out.dtype)

  def update_computation(sub, args):
    if update_jaxpr is None:  # plain scatter: the update replaces the value
      return [args[1]]
    consts = [sub.constant(np.asarray(c)) for c in update_consts]
    return lowering.lower_jaxpr_body(sub, update_jaxpr, consts, args)
  region = ctx.region([scalar, scalar], update_computation)
  return ctx.op1("stablehlo.scatter", [operand, indices, updates], hlo.aval_type(out), attrs,
                 [region])


def _scatter_batch(prim, axis_data, args, dims, *, update_jaxpr, update_consts,
                   dimension_numbers, indices_are_sorted, unique_indices, mode):
  """JAX's rule: operand and updates get the batch axis first (broadcast if unbatched);
  it is a window dim when the indices are shared, else a pair of batching dims."""
  operand, indices, updates = args
  operand_bdim, indices_bdim, updates_bdim = dims
  size = next(np.shape(x)[d] for x, d in zip(args, dims) if d is not None)
  operand = batching.bdim_at_front(operand, operand_bdim, size)
  updates = batching.bdim_at_front(updates, updates_bdim, size)
  dn = dimension_numbers
  params = dict(update_jaxpr=update_jaxpr, update_consts=update_consts,
                indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)
  if indices_bdim is None:
    dnums = ScatterDimensionNumbers(
        update_window_dims=(0, *_shift(dn.update_window_dims)),
        inserted_window_dims=_shift(dn.inserted_window_dims),
        scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
        operand_batching_dims=_shift(dn.operand_batching_dims),
        scatter_indices_batching_dims=dn.scatter_indices_batching_dims)
    return prim.bind(operand, indices, updates, dimension_numbers=dnums, **params), 0
  indices = batching.bdim_at_front(indices, indices_bdim, size)
  dnums = ScatterDimensionNumbers(
      update_window_dims=_shift(dn.update_window_dims),
      inserted_window_dims=_shift(dn.inserted_window_dims),
      scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
      operand_batching_dims=(0, *_shift(dn.operand_batching_dims)),
      scatter_indices_batching_dims=(0, *_shift(dn.scatter_indices_batching_dims)))
  return prim.bind(operand, indices, updates, dimension_numbers=dnums, **params), 0


def _numeric_scatter_abstract_eval(name):
  # The arithmetic scatters reject bool operands, as JAX's do.
  def abstract_eval(operand, indices, updates, **params):
    check_dtype_kind(name, (operand,), ("num",))
    return _scatter_abstract_eval(operand, indices, updates, **params)
  return abstract_eval


scatter_p = standard_primitive("scatter", _scatter_abstract_eval, _scatter_lowering)
scatter_add_p = standard_primitive("scatter-add", _numeric_scatter_abstract_eval("scatter-add"),
                                   _scatter_lowering)
scatter_sub_p = standard_primitive("scatter-sub", _numeric_scatter_abstract_eval("scatter-sub"),
                                   _scatter_lowering)
scatter_mul_p = standard_primitive("scatter-mul", _numeric_scatter_abstract_eval("scatter-mul"),
                                   _scatter_lowering)
scatter_min_p = standard_primitive("scatter-min", _scatter_abstract_eval, _scatter_lowering)
scatter_max_p = standard_primitive("scatter-max", _scatter_abstract_eval, _scatter_lowering)
for _prim in (scatter_p, scatter_add_p, scatter_sub_p, scatter_mul_p, scatter_min_p,
              scatter_max_p):
  _prim.def_batch(functools.partial(_scatter_batch, _prim))


# Differentiation of the scatter family (JAX's rules). The indices are never
# differentiated; a gather with the mirrored dimension numbers reads back the
# windows a scatter writes.


def _inverse_gather(x, indices, dimension_numbers, updates_shape, mode=None, fill_value=None):
  """The windows of `x` that a scatter with these dimension numbers and updates would write."""
  dn = dimension_numbers
  gather_dnums = GatherDimensionNumbers(
      offset_dims=dn.update_window_dims, collapsed_slice_dims=dn.inserted_window_dims,
      start_index_map=dn.scatter_dims_to_operand_dims,
      operand_batching_dims=dn.operand_batching_dims,
      start_indices_batching_dims=dn.scatter_indices_batching_dims)
  window = iter(updates_shape[d] for d in dn.update_window_dims)
  slice_sizes = tuple(1 if i in dn.inserted_window_dims or i in dn.operand_batching_dims
                      else next(window) for i in range(core.get_aval(x).ndim))
  return gather(x, indices, gather_dnums, slice_sizes, mode=mode, fill_value=fill_value)


def _scatter_addsub_jvp(prim, primals, tangents, **params):
  operand, indices, updates = primals
  out = prim.bind(operand, indices, updates, **params)
  t_operand, _, t_updates = tangents
  if type(t_operand) is ad.Zero and type(t_updates) is ad.Zero:
    return out, ad.Zero.from_primal_value(out)
  return out, prim.bind(ad.instantiate_zeros(t_operand), indices,
                        ad.instantiate_zeros(t_updates), **params)


def _scatter_addsub_transpose(prim, ct, operand, indices, updates, *, update_jaxpr,
                              update_consts, dimension_numbers, indices_are_sorted,
                              unique_indices, mode):
  ct_updates = None
  if ad.is_undefined_primal(updates):
    # Dropped (out-of-bounds) windows get zero, as FILL_OR_DROP's fill.
    ct_updates = _inverse_gather(ct, indices, dimension_numbers, updates.aval.shape, mode=mode,
                                 fill_value=0)
    if prim is scatter_sub_p:
      ct_updates = ew.neg(ct_updates)
  return [ct if ad.is_undefined_primal(operand) else None, None, ct_updates]


def _scatter_mul_jvp_updates(t, operand, indices, updates, *, dimension_numbers,
                             indices_are_sorted, unique_indices, mode, **_):
  if not unique_indices:
    raise NotImplementedError("scatter_mul gradients are only implemented if "
                              "`unique_indices=True`")
  zeros = full(core.get_aval(operand).shape, 0, core.get_aval(t).dtype)
  return ew.mul(operand, scatter_add(zeros, indices, t, dimension_numbers,
                                     indices_are_sorted=indices_are_sorted,
                                     unique_indices=unique_indices, mode=mode))


def _scatter_mul_transpose(ct, operand, indices, updates, *, update_jaxpr, update_consts,
                           dimension_numbers, indices_are_sorted, unique_indices, mode):
  ct_operand = ct_updates = None
  if ad.is_undefined_primal(operand):
    ct_operand = scatter_mul_p.bind(
        ct, indices, updates, update_jaxpr=update_jaxpr, update_consts=update_consts,
        dimension_numbers=dimension_numbers, indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices, mode=mode)
  if ad.is_undefined_primal(updates):
    if not unique_indices:
      raise NotImplementedError("scatter_mul gradients are only implemented if "
                                "`unique_indices=True`")
    ct_updates = _inverse_gather(ew.mul(ct, operand), indices, dimension_numbers,
                                 updates.aval.shape, mode=mode, fill_value=0)
  return [ct_operand, None, ct_updates]


def _scatter_extremal_jvp(prim, primals, tangents, *, update_jaxpr, update_consts,
                          dimension_numbers, indices_are_sorted, unique_indices, mode):
  """JAX's scatter-min/max jvp: where updates and the operand tie for the result, the
  tangent is the average of theirs."""
  operand, indices, updates = primals
  out = prim.bind(operand, indices, updates, update_jaxpr=update_jaxpr,
                  update_consts=update_consts, dimension_numbers=dimension_numbers,
                  indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                  mode=mode)
  t_operand, _, t_updates = tangents
  if type(t_operand) is ad.Zero and type(t_updates) is ad.Zero:
    return out, ad.Zero.from_primal_value(out)
  t_operand, t_updates = ad.instantiate_zeros(t_operand), ad.instantiate_zeros(t_updates)
  dn = dimension_numbers
  operand_aval, updates_aval = core.get_aval(operand), core.get_aval(updates)
  dtype = operand_aval.dtype
  # Clipped windows are read back clipped, so that the tangent's transpose is its adjoint.
  gather_mode = mode if mode == GatherScatterMode.CLIP else GatherScatterMode.PROMISE_IN_BOUNDS

  def windows(x):
    return _inverse_gather(x, indices, dn, updates_aval.shape, mode=gather_mode)

  def count(ups):
    # In the scatter's own mode (JAX counts in FILL_OR_DROP, so that clipped
    # indices divide by zero).
    zeros = full(operand_aval.shape, 0, dtype)
    return windows(scatter_add(zeros, indices, ups, dn, mode=mode))

  zeros, ones = full(updates_aval.shape, 0, dtype), full(updates_aval.shape, 1, dtype)
  target = windows(out)
  successful = ew.eq(updates, target)           # updates equal to the result
  retained = ew.eq(windows(operand), target)    # the operand equal to the result
  num_updates = count(ew.select_n(successful, zeros, ones))
  num_refs = count(ones)
  # Each tie shares equally: 1 / (successful updates, plus the operand if it ties).
  share_if_retained = ew.div(ones, ew.add(num_updates, ones))
  updates_coef = ew.select_n(successful, zeros,
                             ew.select_n(retained, ew.div(ones, num_updates), share_if_retained))
  operand_share = ew.select_n(retained, zeros, share_if_retained)
  # Spread over the num_refs windows at a position, this replaces t_operand by its share.
  operand_coef = ew.div(ew.sub(operand_share, ones), num_refs)
  tangent_updates = ew.add(ew.mul(windows(t_operand), operand_coef),
                           ew.mul(t_updates, updates_coef))
  return out, scatter_add(t_operand, indices, tangent_updates, dn,
                          indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                          mode=mode)


def _scatter_jvp(primals, tangents, *, update_jaxpr, update_consts, dimension_numbers,
                 indices_are_sorted, unique_indices, mode):
  if update_jaxpr is not None:
    raise NotImplementedError("scatter_apply JVP not implemented")
  operand, indices, updates = primals
  t_operand, _, t_updates = tangents
  params = dict(update_jaxpr=None, update_consts=update_consts,
                dimension_numbers=dimension_numbers, indices_are_sorted=indices_are_sorted,
                unique_indices=unique_indices, mode=mode)
  out = scatter_p.bind(operand, indices, updates, **params)
  if type(t_operand) is ad.Zero and type(t_updates) is ad.Zero:
    return out, ad.Zero.from_primal_value(out)
  t_operand, t_updates = ad.instantiate_zeros(t_operand), ad.instantiate_zeros(t_updates)
  if unique_indices:
    return out, scatter_p.bind(t_operand, indices, t_updates, **params)
  # Which update wins at a repeated index is unspecified, so find out: scatter
  # ids (1, 2, ...; 0 marks the operand) and read them back. Then scatter-add
  # the masked primals and tangents: only the winners (or the operand) remain.
  dn = dimension_numbers
  operand_shape = core.get_aval(operand).shape
  updates_shape = core.get_aval(updates).shape
  ids_shape = tuple(1 if d in dn.update_window_dims else n for d, n in enumerate(updates_shape))
  num_ids = int(np.prod(ids_shape, dtype=np.int64))
  id_dtype = np.dtype(np.uint32 if num_ids < np.iinfo(np.uint32).max else np.uint64)
  ids = ew.add(reshape(iota(id_dtype, num_ids), ids_shape), np.ones((), id_dtype))
  update_ids = broadcast_in_dim(ids, updates_shape, tuple(range(len(updates_shape))))
  scattered_ids = scatter(full(operand_shape, 0, id_dtype), indices, update_ids, dn,
                          indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                          mode=mode)
  operand_kept = ew.eq(scattered_ids, full(operand_shape, 0, id_dtype))
  update_won = ew.eq(update_ids, _inverse_gather(scattered_ids, indices, dn, updates_shape))

  def masked_scatter(x, ups):
    x = ew.select_n(operand_kept, full(operand_shape, 0, core.get_aval(x).dtype), x)
    ups = ew.select_n(update_won, full(updates_shape, 0, core.get_aval(ups).dtype), ups)
    return scatter_add(x, indices, ups, dn, indices_are_sorted=indices_are_sorted,
                       unique_indices=unique_indices, mode=mode)
  return masked_scatter(operand, updates), masked_scatter(t_operand, t_updates)


def _scatter_transpose(ct, operand, indices, updates, *, update_jaxpr, update_consts,
                       dimension_numbers, indices_are_sorted, unique_indices, mode):
  if not unique_indices:
    raise NotImplementedError("scatter transpose is only implemented where unique_indices=True")
  updates_shape = (updates.aval if ad.is_undefined_primal(updates)
                   else core.get_aval(updates)).shape
  ct_operand = ct_updates = None
  if ad.is_undefined_primal(operand):  # overwritten elements get no cotangent
    zeros = full(updates_shape, 0, core.get_aval(ct).dtype)
    ct_operand = scatter(ct, indices, zeros, dimension_numbers,
                         indices_are_sorted=indices_are_sorted, unique_indices=True, mode=mode)
  if ad.is_undefined_primal(updates):
    ct_updates = _inverse_gather(ct, indices, dimension_numbers, updates_shape, mode=mode,
                                 fill_value=0)
  return [ct_operand, None, ct_updates]


scatter_p.def_jvp(_scatter_jvp)
scatter_p.def_transpose(_scatter_transpose)
for _prim in (scatter_add_p, scatter_sub_p):
  _prim.def_jvp(functools.partial(_scatter_addsub_jvp, _prim))
  _prim.def_transpose(functools.partial(_scatter_addsub_transpose, _prim))
ad.defjvp(scatter_mul_p, lambda t, x, i, y, **params: scatter_mul_p.bind(t, i, y, **params),
          None, _scatter_mul_jvp_updates)
scatter_mul_p.def_transpose(_scatter_mul_transpose)
for _prim in (scatter_min_p, scatter_max_p):
  _prim.def_jvp(functools.partial(_scatter_extremal_jvp, _prim))


# ----------------------------------------------------------------------------
# index_take: a gather over the primitives, one index array per axis


def index_take(src, idxs, axes):
  """``src[idxs[0], idxs[1], ...]`` along `axes`, indices wrapping modulo the sizes.

  Args:
    src: an array.
    idxs: one integer index array per axis, all of one shape.
    axes: the axes of `src` the index arrays select along.

  Returns:
    An array of shape ``idxs[0].shape + (the remaining dims of src)``.

  Mirrors `jax.lax.index_take`.
  """
  indices = concatenate([expand_dims(i, (1,)) for i in idxs], 1)
  dtype = core.get_aval(indices).dtype
  sizes = np.array([np.shape(src)[ax] for ax in axes], dtype)
  sizes = ew.convert_element_type(
      np.broadcast_to(sizes, np.shape(indices)), dtype)  # a host constant
  # Python-style modulo: the remainder takes the divisor's (positive) sign.
  rem = ew.rem(indices, sizes)
  indices = ew.select_n(ew.lt(rem, np.zeros((), dtype)), rem, ew.add(rem, sizes))
  slice_sizes = list(np.shape(src))
  for ax in axes:
    slice_sizes[ax] = 1
  offset_dims = tuple(range(1, np.ndim(src) - np.shape(indices)[1] + 1))
  dnums = GatherDimensionNumbers(offset_dims=offset_dims, collapsed_slice_dims=tuple(axes),
                                 start_index_map=tuple(axes))
  return gather(src, indices, dimension_numbers=dnums, slice_sizes=tuple(slice_sizes))
