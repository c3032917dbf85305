"""stack, unstack and tile: the shape-changing primitives JAX 0.10.2 binds for
`jnp.stack`, `jnp.unstack` and `jnp.tile`.

Each is one card in the style of `structural.py`. All three are linear: the
transpose of `stack` is `unstack` and the other way round, and the transpose
of `tile` sums the tiles back onto one. They lower to reshapes, broadcasts,
concatenations and slices.
"""
from __future__ import annotations

from xjax._src import core
from xjax._src import stablehlo as hlo
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.lax.reductions import reduce_sum
from xjax._src.lax.structural import _asarray, _canonicalize_axis, broadcast, reshape
from xjax._src.lax.utils import standard_primitive

# ----------------------------------------------------------------------------
# stack


def stack(operands, axis: int = 0):
  """Joins arrays of one shape and dtype along a new axis `axis`.

  Args:
    operands: a non-empty sequence of arrays (or scalars) of equal shapes and dtypes.
    axis: where the new axis goes in the result (negative counts from the end
      of the result's dimensions).

  Returns:
    An array of shape ``shape[:axis] + (len(operands),) + shape[axis:]``.

  Raises:
    IndexError: `operands` is empty.
    ValueError: the shapes differ, or `axis` is out of range.
    TypeError: the dtypes differ.

  >>> import xjax.numpy as jnp
  >>> stack([jnp.zeros(3), jnp.ones(3)], axis=1).shape
  (3, 2)

  Mirrors `jax.lax.stack`.
  """
  arrays = [_asarray(x) for x in operands]
  if not arrays:
    raise IndexError("list index out of range")
  axis = _canonicalize_axis(axis, core.get_aval(arrays[0]).ndim + 1)
  return stack_p.bind(*arrays, axis=axis)


def _stack_abstract_eval(*avals, axis):
  shapes = [a.shape for a in avals]
  if len({len(s) for s in shapes}) != 1:
    raise ValueError("Cannot stack arrays with different numbers of dimensions: got "
                     f"{', '.join(map(str, shapes))}.")
  if len(set(shapes)) != 1:
    raise ValueError(f"All input arrays must have the same shape. Got {', '.join(map(str, shapes))}.")
  if len({a.dtype for a in avals}) != 1:
    raise TypeError("lax.stack requires arguments to have the same dtypes, got "
                    f"{', '.join(a.dtype.name for a in avals)}.")
  if not 0 <= axis <= len(shapes[0]):
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {len(shapes[0]) + 1}")
  shape = (*shapes[0][:axis], len(avals), *shapes[0][axis:])
  return core.ShapedArray(shape, avals[0].dtype, all(a.weak_type for a in avals))


def _stack_transpose(ct, *operands, axis):
  return list(unstack_p.bind(ct, axis=axis))


def _stack_batch(axis_data, args, dims, *, axis):
  bdim = dims[0]
  if bdim is not batching.not_mapped and all(d == bdim for d in dims):
    # The operands share the batch axis: the new axis goes before or after it.
    if axis <= bdim:
      return stack_p.bind(*args, axis=axis), bdim + 1
    return stack_p.bind(*args, axis=axis + 1), bdim
  args = [broadcast(x, (axis_data.size,)) if d is batching.not_mapped
          else batching.moveaxis(x, d, 0) for x, d in zip(args, dims)]
  return stack_p.bind(*args, axis=axis + 1), 0


def _stack_lowering(ctx, *xs, axis):
  aval = ctx.avals_in[0]
  expanded = hlo.tensor_type((*aval.shape[:axis], 1, *aval.shape[axis:]), aval.dtype)
  parts = [ctx.op1("stablehlo.reshape", [x], expanded) for x in xs]
  return ctx.op1("stablehlo.concatenate", parts, hlo.aval_type(ctx.avals_out[0]),
                 f"dimension = {axis} : i64")


stack_p = standard_primitive("stack", _stack_abstract_eval, _stack_lowering)
ad.deflinear(stack_p, _stack_transpose)
stack_p.def_batch(_stack_batch)

# ----------------------------------------------------------------------------
# unstack


def unstack(x, axis: int = 0):
  """Splits `x` along `axis` into a tuple of arrays without that axis.

  Args:
    x: an array of rank at least 1.
    axis: the axis to split along (negative counts from the end).

  Returns:
    A tuple of ``x.shape[axis]`` arrays of shape ``x.shape`` less `axis`.

  Raises:
    ValueError: `axis` is out of range (a scalar has no axis).

  >>> import xjax.numpy as jnp
  >>> [a.shape for a in unstack(jnp.zeros((2, 3)), axis=1)]
  [(2,), (2,), (2,)]

  Mirrors `jax.lax.unstack`.
  """
  x = _asarray(x)
  axis = _canonicalize_axis(axis, core.get_aval(x).ndim)
  return tuple(unstack_p.bind(x, axis=axis))


def _unstack_abstract_eval(operand, *, axis):
  if not 0 <= axis < operand.ndim:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {operand.ndim}")
  shape = operand.shape[:axis] + operand.shape[axis + 1:]
  return [operand.update(shape=shape)] * operand.shape[axis]


def _unstack_transpose(cts, operand, *, axis):
  aval = operand.aval
  part = aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1:])
  cts = [ad.zeros_like_aval(part) if type(ct) is ad.Zero else ct for ct in cts]
  if not cts:  # an axis of size 0: nothing flowed back
    return [ad.zeros_like_aval(aval)]
  return [stack_p.bind(*cts, axis=axis)]


def _unstack_batch(axis_data, args, dims, *, axis):
  (x,), (bdim,) = args, dims
  axis_in = axis + (bdim <= axis)  # the axis to split, counted with the batch axis
  outs = unstack_p.bind(x, axis=axis_in)
  return outs, [bdim if bdim < axis_in else bdim - 1] * len(outs)


def _unstack_lowering(ctx, x, *, axis):
  aval = ctx.avals_in[0]
  ndim = aval.ndim
  outs = []
  for i, out in enumerate(ctx.avals_out):
    starts = [0] * ndim
    limits = list(aval.shape)
    starts[axis], limits[axis] = i, i + 1
    sliced_shape = (*out.shape[:axis], 1, *out.shape[axis:])
    attrs = (f"start_indices = {hlo.i64_array(starts)}, limit_indices = {hlo.i64_array(limits)}, "
             f"strides = {hlo.i64_array([1] * ndim)}")
    piece = ctx.op1("stablehlo.slice", [x], hlo.tensor_type(sliced_shape, aval.dtype), attrs)
    outs.append(ctx.op1("stablehlo.reshape", [piece], hlo.aval_type(out)))
  return outs


unstack_p = standard_primitive("unstack", _unstack_abstract_eval, _unstack_lowering,
                               multiple_results=True)
ad.deflinear(unstack_p, _unstack_transpose)
unstack_p.def_batch(_unstack_batch)

# ----------------------------------------------------------------------------
# tile


def tile(operand, reps):
  """Repeats `operand` ``reps[i]`` times along each dimension i.

  Args:
    operand: an array.
    reps: one non-negative integer per dimension of `operand`.

  Returns:
    An array of shape ``[s * r for s, r in zip(operand.shape, reps)]``.

  Raises:
    TypeError: ``len(reps) != operand.ndim``, or a repetition count is not a
      non-negative integer.

  >>> import xjax.numpy as jnp
  >>> tile(jnp.array([1, 2]), (3,))
  Array([1, 2, 1, 2, 1, 2], dtype=int32)

  Mirrors `jax.lax.tile`.
  """
  return tile_p.bind(operand, reps=tuple(reps))


def _tile_abstract_eval(operand, *, reps):
  if operand.ndim != len(reps):
    raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)={len(reps)} "
                    f"and x.ndim={operand.ndim}.")
  reps = core.check_shapelike("tile", "reps", reps)
  return operand.update(shape=tuple(s * r for s, r in zip(operand.shape, reps)))


def _tile_transpose(ct, operand, *, reps):
  shape = operand.aval.shape
  split = reshape(ct, tuple(k for r, s in zip(reps, shape) for k in (r, s)))
  return [reduce_sum(split, tuple(range(0, 2 * len(shape), 2)))]


def _tile_batch(axis_data, args, dims, *, reps):
  (x,), (bdim,) = args, dims
  return tile_p.bind(x, reps=(*reps[:bdim], 1, *reps[bdim:])), bdim


def _tile_lowering(ctx, x, *, reps):
  aval = ctx.avals_in[0]
  interleaved = [k for s in aval.shape for k in (1, s)]
  x = ctx.op1("stablehlo.reshape", [x], hlo.tensor_type(interleaved, aval.dtype))
  repeated = [k for r, s in zip(reps, aval.shape) for k in (r, s)]
  x = ctx.op1("stablehlo.broadcast_in_dim", [x], hlo.tensor_type(repeated, aval.dtype),
              f"broadcast_dimensions = {hlo.i64_array(range(2 * aval.ndim))}")
  return ctx.op1("stablehlo.reshape", [x], hlo.aval_type(ctx.avals_out[0]))


def _tile_pp(params):
  return {"reps": tuple(int(r) for r in params["reps"])}


tile_p = standard_primitive("tile", _tile_abstract_eval, _tile_lowering, pp_params=_tile_pp)
ad.deflinear(tile_p, _tile_transpose)
tile_p.def_batch(_tile_batch)
