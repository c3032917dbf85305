"""Shape-changing primitives: broadcast_in_dim, reshape, and their kin.

Each primitive is one card: the public wrapper, the `_p`, its abstract eval,
its lowering and (where JAX hides default params) its print rule.
"""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src import stablehlo as hlo
from xjax._src.lax.utils import standard_primitive

# ----------------------------------------------------------------------------
# broadcast_in_dim


def broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None):
  """Broadcasts `operand` to `shape`, operand dim i landing on broadcast_dimensions[i].

  Args:
    operand: an array.
    shape: the output shape (a sequence of ints).
    broadcast_dimensions: for each operand dimension, the output dimension it
      maps to (strictly increasing); the operand's size there must be 1 or equal.

  Returns:
    An array of `shape` and operand's dtype.

  Raises:
    TypeError: the dimensions do not match the rules above.

  Mirrors `jax.lax.broadcast_in_dim`.
  """
  shape = core.canonicalize_shape(shape)
  broadcast_dimensions = tuple(int(d) for d in broadcast_dimensions)
  aval = core.get_aval(operand)
  if aval.shape == shape and broadcast_dimensions == tuple(range(len(shape))) \
      and not isinstance(operand, (int, float, complex, bool)):
    return operand
  return broadcast_in_dim_p.bind(operand, shape=shape,
                                 broadcast_dimensions=broadcast_dimensions, sharding=None)


def _broadcast_in_dim_abstract_eval(operand, *, shape, broadcast_dimensions, sharding):
  if len(broadcast_dimensions) != operand.ndim:
    raise TypeError(
        "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; "
        f"got broadcast_dimensions {broadcast_dimensions} for operand ndim {operand.ndim}.")
  if len(shape) < operand.ndim:
    raise TypeError(f"broadcast_in_dim target broadcast shape must have equal or higher "
                    f"rank to the operand shape; got operand ndim {operand.ndim} and target "
                    f"broadcast ndim {len(shape)}.")
  for i, d in enumerate(broadcast_dimensions):
    if not 0 <= d < len(shape):
      raise TypeError(f"broadcast_in_dim broadcast_dimensions must be in range [0, "
                      f"{len(shape)}), got {broadcast_dimensions}.")
    if operand.shape[i] not in (1, shape[d]):
      raise TypeError(
          "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
          "corresponding dimensions in the target broadcast shape; got operand of shape "
          f"{operand.shape}, target broadcast shape {shape}, broadcast_dimensions "
          f"{broadcast_dimensions} ")
  if any(a >= b for a, b in zip(broadcast_dimensions, broadcast_dimensions[1:])):
    raise TypeError("broadcast_in_dim broadcast_dimensions must be strictly increasing; "
                    f"got broadcast_dimensions {broadcast_dimensions}")
  return core.ShapedArray(shape, operand.dtype, operand.weak_type)


def _broadcast_in_dim_pp(params):
  shown = {k: v for k, v in params.items() if k not in ("shape", "sharding")}
  if not shown["broadcast_dimensions"]:
    del shown["broadcast_dimensions"]
  return shown


def _broadcast_in_dim_lowering(ctx, x, *, shape, broadcast_dimensions, sharding):
  return ctx.op1("stablehlo.broadcast_in_dim", [x], hlo.aval_type(ctx.avals_out[0]),
                 f"broadcast_dimensions = {hlo.i64_array(broadcast_dimensions)}")


broadcast_in_dim_p = standard_primitive(
    "broadcast_in_dim", _broadcast_in_dim_abstract_eval, _broadcast_in_dim_lowering,
    pp_params=_broadcast_in_dim_pp)


def broadcast(operand, sizes):
  """Adds leading dimensions of `sizes` to `operand` (mirrors `jax.lax.broadcast`)."""
  sizes = core.canonicalize_shape(sizes)
  ndim = np.ndim(operand) if not hasattr(operand, "aval") else operand.aval.ndim
  dims = tuple(range(len(sizes), len(sizes) + ndim))
  return broadcast_in_dim(operand, (*sizes, *core.get_aval(operand).shape), dims)


# ----------------------------------------------------------------------------
# reshape


def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
  """Reshapes `operand` to `new_sizes` (same number of elements).

  Args:
    operand: an array.
    new_sizes: the new shape.
    dimensions: an optional permutation applied to operand before reshaping.

  Returns:
    An array of shape `new_sizes`.

  Raises:
    TypeError: the sizes differ, or the shape is not concrete.

  Mirrors `jax.lax.reshape`.
  """
  new_sizes = core.canonicalize_shape(new_sizes)
  aval = core.get_aval(operand)
  dims = None if dimensions is None or tuple(dimensions) == tuple(range(aval.ndim)) \
      else tuple(int(d) for d in dimensions)
  if aval.shape == new_sizes and dims is None and not isinstance(operand, (int, float, complex, bool)):
    return operand
  return reshape_p.bind(operand, new_sizes=new_sizes, dimensions=dims, sharding=None)


def _reshape_abstract_eval(operand, *, new_sizes, dimensions, sharding):
  if any(d < 0 for d in new_sizes):
    raise TypeError(f"reshape new_sizes must all be positive, got {new_sizes}.")
  if int(np.prod(new_sizes, dtype=np.int64)) != operand.size:
    raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} "
                    f"(of total size {int(np.prod(new_sizes, dtype=np.int64))}) for shape "
                    f"{operand.shape} (of total size {operand.size}).")
  if dimensions is not None and sorted(dimensions) != list(range(operand.ndim)):
    raise TypeError(f"reshape dimensions must be a permutation of operand dimensions, "
                    f"got dimensions {dimensions} for shape {operand.shape}.")
  return core.ShapedArray(new_sizes, operand.dtype, operand.weak_type)


def _reshape_lowering(ctx, x, *, new_sizes, dimensions, sharding):
  if dimensions is not None:
    src = ctx.avals_in[0]
    perm_shape = tuple(src.shape[d] for d in dimensions)
    x = ctx.op1("stablehlo.transpose", [x], hlo.tensor_type(perm_shape, src.dtype),
                f"permutation = {hlo.i64_array(dimensions)}")
  return ctx.op1("stablehlo.reshape", [x], hlo.aval_type(ctx.avals_out[0]))


reshape_p = standard_primitive("reshape", _reshape_abstract_eval, _reshape_lowering)
