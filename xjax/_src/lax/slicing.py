"""Slicing primitives: slice, dynamic_slice and dynamic_update_slice, with the
lax helpers built on them (slice_in_dim, index_in_dim, dynamic_slice_in_dim, ...).

Out-of-bounds indices follow JAX (the "Sharp Bits"): `dynamic_slice` and
`dynamic_update_slice` clamp their start indices so the window fits (XLA's
rule). Gather and the scatter family are in `gather_scatter`; a batched
dynamic_slice is a gather and a batched dynamic_update_slice a scatter, as in
JAX.

Differentiation follows JAX's rules: slice, dynamic_slice and
dynamic_update_slice are linear in their array operands (never in the
indices).
"""
from __future__ import annotations

import operator

import numpy as np

from xjax._src import core
from xjax._src import dispatch
from xjax._src import dtypes
from xjax._src import stablehlo as hlo
from xjax._src.interpreters import ad
from xjax._src.jit import jit
from xjax._src.lax import elementwise as ew
from xjax._src.lax.gather_scatter import (GatherDimensionNumbers, GatherScatterMode,
                                          ScatterDimensionNumbers, _check_same_dtypes,
                                          _gather_batch, _scatter_batch, scatter_p)
from xjax._src.lax.structural import (broadcast_in_dim, concatenate, expand_dims, full, pad,
                                      squeeze)
from xjax._src.lax.utils import standard_primitive


def _same_index_dtypes(name: str, indices, sep: str) -> None:
  if any(i.dtype != indices[0].dtype or not dtypes.issubdtype(i.dtype, np.integer)
         for i in indices):
    raise TypeError(f"index arguments to {name} must be integers of the same type, "
                    f"got{sep} {', '.join(i.dtype.name for i in indices)}")


# ----------------------------------------------------------------------------
# slice


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001 - JAX's name
  """The static slice ``operand[start:limit:stride]`` in every dimension.

  Args:
    operand: an array.
    start_indices: one nonnegative start per dimension.
    limit_indices: one limit per dimension, at least the start and at most
      the dimension's size.
    strides: optional positive strides, one per dimension.

  Returns:
    The sliced array. Indices are kept as given (they are printed in jaxprs).

  Raises:
    TypeError: the indices have the wrong length or are out of range.

  >>> import xjax.numpy as jnp
  >>> slice(jnp.arange(6), (1,), (5,), (2,))
  Array([1, 3], dtype=int32)

  Mirrors `jax.lax.slice`.
  """
  return slice_p.bind(operand, start_indices=tuple(start_indices),
                      limit_indices=tuple(limit_indices),
                      strides=None if strides is None else tuple(strides))


def _slice_shape(operand, start_indices, limit_indices, strides):
  core.check_shapelike("slice", "start_indices", start_indices)
  core.check_shapelike("slice", "limit_indices", limit_indices)
  if operand.ndim != len(start_indices):
    raise TypeError("slice start_indices must have length equal to the number of dimensions "
                    f"of the operand, got indices {start_indices} for operand shape "
                    f"{operand.shape}.")
  if len(start_indices) != len(limit_indices):
    raise TypeError("slice limit_indices must have the same length as start_indices, got "
                    f"start_indices {start_indices} and limit_indices {limit_indices}.")
  if not all(d >= hi for d, hi in zip(operand.shape, limit_indices)):
    raise TypeError("slice limit_indices must be less than or equal to operand shape, got "
                    f"limit_indices {limit_indices} for operand shape {operand.shape}.")
  if not all(lo >= 0 for lo in start_indices):
    raise TypeError("slice start_indices must be greater than or equal to zero, got "
                    f"start_indices of {start_indices}.")
  if not all(hi >= lo for lo, hi in zip(start_indices, limit_indices)):
    raise TypeError("slice limit_indices must be greater than or equal to start_indices, got "
                    f"start_indices {start_indices} and limit_indices {limit_indices}.")
  sizes = tuple(int(hi - lo) for lo, hi in zip(start_indices, limit_indices))
  if strides is None or tuple(strides) == (1,) * operand.ndim:
    return sizes
  core.check_shapelike("slice", "strides", strides)
  if len(strides) != operand.ndim:
    raise TypeError("slice strides must have length equal to the number of dimensions of the "
                    f"operand, got strides {strides} for operand shape {operand.shape}.")
  if not all(s >= 0 for s in strides):
    raise TypeError(f"slice strides must be positive, got {strides}")
  return tuple(0 if n == 0 else (n - 1) // int(s) + 1 for n, s in zip(sizes, strides))


def _slice_abstract_eval(operand, *, start_indices, limit_indices, strides):
  shape = _slice_shape(operand, start_indices, limit_indices, strides)
  return core.ShapedArray(shape, operand.dtype, operand.weak_type)


def _slice_transpose(ct, operand, *, start_indices, limit_indices, strides):
  # Pad the cotangent back: the stride becomes interior padding.
  shape = operand.aval.shape
  out_shape = core.get_aval(ct).shape
  strides = (1,) * len(shape) if strides is None else strides
  # The last element taken is start + (n - 1) * stride; the rest of the dim is high padding.
  ends = [lo + (n and 1 + (n - 1) * s) for lo, n, s in zip(start_indices, out_shape, strides)]
  config = tuple((lo, d - end, s - 1) for lo, d, end, s in
                 zip(start_indices, shape, ends, strides))
  return [pad(ct, np.zeros((), core.get_aval(ct).dtype), config)]


def _slice_batch(axis_data, args, dims, *, start_indices, limit_indices, strides):
  (operand,), (bdim,) = args, dims
  start_indices, limit_indices = list(start_indices), list(limit_indices)
  start_indices.insert(bdim, 0)
  limit_indices.insert(bdim, np.shape(operand)[bdim])
  if strides is not None:
    strides = list(strides)
    strides.insert(bdim, 1)
  return slice(operand, start_indices, limit_indices, strides), bdim


def _slice_impl(operand, *, start_indices, limit_indices, strides):
  # As in JAX, an eager unstrided slice runs as a dynamic_slice, so one
  # executable serves every slice of the same size.
  ndim = core.get_aval(operand).ndim
  if strides is None and len(start_indices) == len(limit_indices) == ndim:
    sizes = tuple(np.array(limit_indices) - np.array(start_indices))
    return dispatch.apply_primitive(dynamic_slice_p, (operand, *start_indices),
                                    dict(slice_sizes=sizes))
  return dispatch.apply_primitive(slice_p, (operand,), dict(
      start_indices=start_indices, limit_indices=limit_indices, strides=strides))


def _slice_lowering(ctx, x, *, start_indices, limit_indices, strides):
  strides = (1,) * len(start_indices) if strides is None else strides
  attrs = (f"start_indices = {hlo.i64_array(start_indices)}, "
           f"limit_indices = {hlo.i64_array(limit_indices)}, strides = {hlo.i64_array(strides)}")
  return ctx.op1("stablehlo.slice", [x], hlo.aval_type(ctx.avals_out[0]), attrs)


slice_p = standard_primitive("slice", _slice_abstract_eval, _slice_lowering)
slice_p.def_impl(_slice_impl)
ad.deflinear(slice_p, _slice_transpose)
slice_p.def_batch(_slice_batch)


# ----------------------------------------------------------------------------
# dynamic_slice


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
  """The slice of `operand` of size `slice_sizes` starting at (traced) `start_indices`.

  Start indices are clamped so that the whole slice lies inside `operand`
  (XLA's rule); negative indices count from the end when allowed.

  Args:
    operand: an array.
    start_indices: one scalar integer index per dimension (a sequence, or a
      1-D integer array).
    slice_sizes: the static slice shape, each at most the operand's size.
    allow_negative_indices: a bool, or one per dimension: whether a negative
      index counts from the end of that dimension.

  Returns:
    An array of shape `slice_sizes`.

  Raises:
    ValueError: the number of indices differs from the operand's rank.
    TypeError: bad slice sizes, or indices that are not scalars of one
      integer dtype.

  >>> import xjax.numpy as jnp
  >>> dynamic_slice(jnp.arange(5), (4,), (2,))
  Array([3, 4], dtype=int32)

  Mirrors `jax.lax.dynamic_slice`.
  """
  start_indices = _dynamic_slice_indices(operand, start_indices, allow_negative_indices)
  sizes = core.canonicalize_shape(slice_sizes)
  return dynamic_slice_p.bind(operand, *start_indices, slice_sizes=sizes)


def _dynamic_slice_indices(operand, start_indices, allow_negative_indices):
  """The start indices as scalars, negative ones wrapped (statically when they are ints)."""
  shape = core.get_aval(operand).shape
  if len(start_indices) != len(shape):
    raise ValueError("Length of slice indices must match number of operand dimensions "
                     f"({len(start_indices)} vs {shape})")
  if not isinstance(start_indices, (list, tuple)):
    if np.ndim(start_indices) != 1:
      raise ValueError(f"Slice indices must be a 1D sequence, got {np.shape(start_indices)}")
    start_indices = list(start_indices)
  if isinstance(allow_negative_indices, bool):
    allow_negative_indices = [allow_negative_indices] * len(start_indices)
  result = []
  for i, d, allow_negative in zip(start_indices, shape, allow_negative_indices):
    dtype = core.get_aval(i).dtype
    if dtypes.issubdtype(dtype, np.unsignedinteger):
      result.append(i)
    elif isinstance(i, (int, float, np.generic)):  # host scalars; 0-d arrays trace, as in JAX
      if i < 0 and not allow_negative:
        raise ValueError(f"Index {i} is out of bounds for dimension {d} if "
                         "allow_negative_indices=False")
      result.append(ew.convert_element_type(i + d if i < 0 else i, dtype))
    elif allow_negative:
      # select(i < 0, i + d, i); the sum is strongly typed, as JAX's `+` makes it.
      negative = ew.lt(i, ew._const(i, 0))
      wrapped = ew.add(ew.convert_element_type(i, dtype), ew.convert_element_type(d, dtype))
      result.append(ew.select_n(negative, i, wrapped))
    else:
      result.append(i)
  return result


def _dynamic_slice_abstract_eval(operand, *start_indices, slice_sizes):
  if len(slice_sizes) != operand.ndim:
    raise TypeError("dynamic_slice slice_sizes must have length equal to the number of "
                    f"dimensions of the operand, got slice_sizes {slice_sizes} for operand "
                    f"shape {operand.shape}.")
  if not all(d >= s for d, s in zip(operand.shape, slice_sizes)):
    raise TypeError("slice slice_sizes must be less than or equal to operand shape, got "
                    f"slice_sizes {slice_sizes} for operand shape {operand.shape}.")
  if not all(s >= 0 for s in slice_sizes):
    raise TypeError("slice slice_sizes must be greater than or equal to zero, got "
                    f"slice_sizes of {slice_sizes}.")
  if any(i.ndim != 0 for i in start_indices):
    raise TypeError("start_indices arguments to dynamic_slice must be scalars,  got indices "
                    f"{start_indices}")
  _same_index_dtypes("dynamic_slice", start_indices, ":")
  return core.ShapedArray(tuple(int(s) for s in slice_sizes), operand.dtype, operand.weak_type)


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
  operand, *start_indices = primals
  out = dynamic_slice_p.bind(operand, *start_indices, slice_sizes=slice_sizes)
  t = tangents[0]
  if type(t) is ad.Zero:  # only an index had a (float0) tangent
    return out, ad.Zero.from_primal_value(out)
  return out, dynamic_slice_p.bind(t, *start_indices, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct, operand, *start_indices, slice_sizes):
  # The cotangent goes back into the window of a zero operand (same clamping).
  aval = operand.aval
  zeros = full(aval.shape, 0, aval.dtype)
  return [dynamic_update_slice_p.bind(zeros, ct, *start_indices), *[None] * len(start_indices)]


def _batch_dynamic_slice_indices(indices, dims):
  """The scalar start indices as one index array, batched ``[B, n]`` (dim 0) if any is."""
  if not indices:
    return np.zeros((0,), np.int32), None
  size = next((np.shape(x)[d] for x, d in zip(indices, dims) if d is not None), None)
  if size is None:
    return concatenate([broadcast_in_dim(i, (1,), ()) for i in indices], 0), None
  return concatenate([broadcast_in_dim(i, (size, 1), () if d is None else (0,))
                      for i, d in zip(indices, dims)], 1), 0


def _dynamic_slice_batch(axis_data, args, dims, *, slice_sizes):
  # A batched dynamic_slice is a gather of one window per member (CLIP is
  # dynamic_slice's clamping), as in JAX.
  operand, *start_indices = args
  operand_bdim, *index_dims = dims
  ndim = len(slice_sizes)
  dnums = GatherDimensionNumbers(offset_dims=tuple(range(ndim)), collapsed_slice_dims=(),
                                 start_index_map=tuple(range(ndim)))
  index, index_bdim = _batch_dynamic_slice_indices(start_indices, index_dims)
  return _gather_batch(axis_data, (operand, index), (operand_bdim, index_bdim),
                       dimension_numbers=dnums, slice_sizes=slice_sizes, unique_indices=True,
                       indices_are_sorted=True, mode=GatherScatterMode.CLIP, fill_value=None)


def _dynamic_slice_lowering(ctx, x, *start_indices, slice_sizes):
  return ctx.op1("stablehlo.dynamic_slice", [x, *start_indices],
                 hlo.aval_type(ctx.avals_out[0]), f"slice_sizes = {hlo.i64_array(slice_sizes)}")


dynamic_slice_p = standard_primitive("dynamic_slice", _dynamic_slice_abstract_eval,
                                     _dynamic_slice_lowering)
dynamic_slice_p.def_jvp(_dynamic_slice_jvp)
dynamic_slice_p.def_transpose(_dynamic_slice_transpose)
dynamic_slice_p.def_batch(_dynamic_slice_batch)


# ----------------------------------------------------------------------------
# dynamic_update_slice


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
  """`operand` with the window at (traced) `start_indices` replaced by `update`.

  Start indices are clamped so that `update` fits inside `operand`.

  Args:
    operand: an array.
    update: an array of operand's dtype and rank, no larger than operand.
    start_indices: one scalar integer index per dimension.
    allow_negative_indices: as for `dynamic_slice`.

  Returns:
    An array of operand's shape and dtype.

  Raises:
    ValueError: the number of indices differs from the operand's rank.
    TypeError: bad ranks, shapes or dtypes.

  >>> import xjax.numpy as jnp
  >>> dynamic_update_slice(jnp.zeros(4), jnp.ones(2), (3,))
  Array([0., 0., 1., 1.], dtype=float32)

  Mirrors `jax.lax.dynamic_update_slice`.
  """
  start_indices = _dynamic_slice_indices(operand, start_indices, allow_negative_indices)
  return dynamic_update_slice_p.bind(operand, update, *start_indices)


def _dynamic_update_slice_abstract_eval(operand, update, *start_indices):
  if operand.ndim != update.ndim:
    raise TypeError("dynamic_update_slice update must have the same rank as operand, got "
                    f"update shape {update.shape} for operand shape {operand.shape}.")
  if operand.ndim != len(start_indices):
    raise TypeError("dynamic_update_slice start_indices must have length equal to the rank "
                    f"of operand, got indices {start_indices} for operand shape "
                    f"{operand.shape}.")
  if not all(d >= u for d, u in zip(operand.shape, update.shape)):
    raise TypeError("dynamic_update_slice update shape must be smaller than operand shape, "
                    f"got update shape {update.shape} for operand shape {operand.shape}.")
  if any(i.ndim != 0 for i in start_indices):
    raise TypeError("start_indices arguments to dynamic_update_slice must be scalars, got "
                    f"indices {start_indices}")
  _check_same_dtypes("dynamic_update_slice", operand, update)
  _same_index_dtypes("dynamic_update_slice", start_indices, "")
  weak_type = all(a.weak_type for a in (operand, update, *start_indices))
  return core.ShapedArray(operand.shape, operand.dtype, weak_type)


def _dynamic_update_slice_jvp(primals, tangents):
  operand, update, *start_indices = primals
  out = dynamic_update_slice_p.bind(operand, update, *start_indices)
  t_operand, t_update = tangents[:2]
  if type(t_operand) is ad.Zero and type(t_update) is ad.Zero:
    return out, ad.Zero.from_primal_value(out)
  t_operand, t_update = ad.instantiate_zeros(t_operand), ad.instantiate_zeros(t_update)
  return out, dynamic_update_slice_p.bind(t_operand, t_update, *start_indices)


def _dynamic_update_slice_transpose(ct, operand, update, *start_indices):
  update_aval = update.aval if ad.is_undefined_primal(update) else core.get_aval(update)
  ct_operand = ct_update = None
  if ad.is_undefined_primal(operand):  # the window was overwritten: its cotangent is zero
    zeros = full(update_aval.shape, 0, core.get_aval(ct).dtype)
    ct_operand = dynamic_update_slice_p.bind(ct, zeros, *start_indices)
  if ad.is_undefined_primal(update):
    ct_update = dynamic_slice_p.bind(ct, *start_indices, slice_sizes=update_aval.shape)
  return [ct_operand, ct_update, *[None] * len(start_indices)]


def _dynamic_update_slice_batch(axis_data, args, dims):
  # A batched dynamic_update_slice is a scatter of one window per member (CLIP
  # clamps as dynamic_update_slice does), as in JAX.
  operand, update, *start_indices = args
  operand_bdim, update_bdim, *index_dims = dims
  window = tuple(range(len(start_indices)))
  dnums = ScatterDimensionNumbers(update_window_dims=window, inserted_window_dims=(),
                                  scatter_dims_to_operand_dims=window)
  index, index_bdim = _batch_dynamic_slice_indices(start_indices, index_dims)
  return _scatter_batch(scatter_p, axis_data, (operand, index, update),
                        (operand_bdim, index_bdim, update_bdim), update_jaxpr=None,
                        update_consts=(), dimension_numbers=dnums, indices_are_sorted=True,
                        unique_indices=True, mode=GatherScatterMode.CLIP)


def _dynamic_update_slice_lowering(ctx, x, update, *start_indices):
  return ctx.op1("stablehlo.dynamic_update_slice", [x, update, *start_indices], x.type)


dynamic_update_slice_p = standard_primitive(
    "dynamic_update_slice", _dynamic_update_slice_abstract_eval, _dynamic_update_slice_lowering)
dynamic_update_slice_p.def_jvp(_dynamic_update_slice_jvp)
dynamic_update_slice_p.def_transpose(_dynamic_update_slice_transpose)
dynamic_update_slice_p.def_batch(_dynamic_update_slice_batch)


# ----------------------------------------------------------------------------
# Helpers over the primitives, one dimension at a time


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
  """``operand[..., start_index:limit_index:stride]`` along `axis` (None means the end;
  negative indices count from the end).

  >>> import xjax.numpy as jnp
  >>> slice_in_dim(jnp.arange(4), 1, 3)
  Array([1, 2], dtype=int32)

  Mirrors `jax.lax.slice_in_dim`.
  """
  shape = np.shape(operand)
  start_indices = [0] * len(shape)
  limit_indices = list(shape)
  strides = [1] * len(shape)
  axis = int(axis)
  size = shape[axis]
  start = 0 if start_index is None else operator.index(start_index)
  limit = size if limit_index is None else operator.index(limit_index)
  start_indices[axis] = start + size if start < 0 else start
  limit_indices[axis] = limit + size if limit < 0 else limit
  strides[axis] = operator.index(stride)
  return slice(operand, start_indices, limit_indices, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
  """``operand[..., index]`` along `axis` (a static index), keeping the axis if `keepdims`.

  Raises:
    IndexError: the index is out of bounds.

  >>> import xjax.numpy as jnp
  >>> index_in_dim(jnp.arange(4), 2, keepdims=False)
  Array(2, dtype=int32)

  Mirrors `jax.lax.index_in_dim`.
  """
  index, axis = operator.index(index), int(axis)
  size = np.shape(operand)[axis]
  wrapped = index + size if index < 0 else index
  if not 0 <= wrapped < size:
    raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
  result = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
  return result if keepdims else squeeze(result, (axis,))


def _zero_index_like(index):
  return np.zeros((), core.get_aval(index).dtype)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
  """`dynamic_slice` along one axis: `slice_size` elements from (traced) `start_index`.

  >>> import xjax.numpy as jnp
  >>> dynamic_slice_in_dim(jnp.arange(5), 1, 2)
  Array([1, 2], dtype=int32)

  Mirrors `jax.lax.dynamic_slice_in_dim`.
  """
  ndim = np.ndim(operand)
  axis = int(axis)
  start_indices = [_zero_index_like(start_index)] * ndim
  start_indices[axis] = start_index
  slice_sizes = list(np.shape(operand))
  slice_sizes[axis] = operator.index(slice_size)
  allow_negative = [False] * ndim
  allow_negative[axis] = allow_negative_indices
  return dynamic_slice(operand, start_indices, slice_sizes,
                       allow_negative_indices=allow_negative)


@jit(static_argnames=["axis", "keepdims", "allow_negative_indices"])
def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *, allow_negative_indices=True):
  """``operand[..., index]`` along `axis` for a (traced) index, keeping the axis if `keepdims`.

  >>> import xjax.numpy as jnp
  >>> dynamic_index_in_dim(jnp.arange(5), 3, keepdims=False)
  Array(3, dtype=int32)

  Mirrors `jax.lax.dynamic_index_in_dim`.
  """
  result = dynamic_slice_in_dim(operand, index, 1, axis,
                                allow_negative_indices=allow_negative_indices)
  return result if keepdims else squeeze(result, (axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
  """`dynamic_update_slice` along one axis, at (traced) `start_index`.

  >>> import xjax.numpy as jnp
  >>> dynamic_update_slice_in_dim(jnp.zeros(4), jnp.ones(2), 1, axis=0)
  Array([0., 1., 1., 0.], dtype=float32)

  Mirrors `jax.lax.dynamic_update_slice_in_dim`.
  """
  axis = int(axis)
  ndim = np.ndim(operand)
  start_indices = [_zero_index_like(start_index)] * ndim
  start_indices[axis] = start_index
  allow_negative = [False] * ndim
  allow_negative[axis] = allow_negative_indices
  return dynamic_update_slice(operand, update, start_indices,
                              allow_negative_indices=allow_negative)


@jit(static_argnames=["axis", "allow_negative_indices"])
def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
  """`operand` with position `index` along `axis` replaced by `update` (which may lack
  that axis).

  >>> import xjax.numpy as jnp
  >>> dynamic_update_index_in_dim(jnp.zeros(3), 5.0, 1, axis=0)
  Array([0., 5., 0.], dtype=float32)

  Mirrors `jax.lax.dynamic_update_index_in_dim`.
  """
  axis = int(axis)
  if np.ndim(update) != np.ndim(operand):
    update = expand_dims(update, (axis,))
  return dynamic_update_slice_in_dim(operand, update, index, axis,
                                     allow_negative_indices=allow_negative_indices)
