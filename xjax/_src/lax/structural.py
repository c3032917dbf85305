"""Shape-changing primitives: broadcast_in_dim, reshape, transpose, squeeze, rev,
pad, concatenate, iota, and the helpers JAX's lax has on top of them.

Each primitive is one card: the public wrapper, the `_p`, its abstract eval,
its transpose, its lowering and (where JAX hides default params) its print
rule. Every primitive here but iota is linear, so its jvp applies it to the
tangents (`ad.deflinear`) and its transpose is another structural op. The
transposes that need `reduce_sum` or `slice` import them when they run:
those modules sit below this one.
"""
from __future__ import annotations

import operator

import numpy as np

from xjax._src import core
from xjax._src import dispatch
from xjax._src import dtypes
from xjax._src import stablehlo as hlo
from xjax._src.array import Array
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.lax import elementwise as ew
from xjax._src.lax.elementwise import convert_element_type
from xjax._src.lax.utils import standard_primitive
from xjax._src.sharding import rules

# ----------------------------------------------------------------------------
# broadcast_in_dim


def broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None):
  """Broadcasts `operand` to `shape`, operand dim i landing on broadcast_dimensions[i].

  Args:
    operand: an array.
    shape: the output shape (a sequence of ints).
    broadcast_dimensions: for each operand dimension, the output dimension it
      maps to (strictly increasing); the operand's size there must be 1 or equal.
    out_sharding: None, or a NamedSharding (or a PartitionSpec over the context
      mesh) the result is typed and laid out as.

  Returns:
    An array of `shape` and operand's dtype.

  Raises:
    TypeError: the dimensions do not match the rules above, or `shape` has
      an element that is not a concrete integer or is negative
      ("broadcast_in_dim shape must have every element be nonnegative").

  Mirrors `jax.lax.broadcast_in_dim`.
  """
  shape = core.check_shapelike("broadcast_in_dim", "shape", shape)
  broadcast_dimensions = tuple(int(d) for d in broadcast_dimensions)
  aval = core.get_aval(operand)
  if out_sharding is not None:
    out_sharding = rules.canonicalize_out_sharding(out_sharding, "broadcast_in_dim")
  if aval.shape == shape and broadcast_dimensions == tuple(range(len(shape))) \
      and not isinstance(operand, (int, float, complex, bool)) and out_sharding is None:
    return operand
  if out_sharding is not None:
    return rules.bind_with_out_sharding(
        broadcast_in_dim_p, (operand,),
        dict(shape=shape, broadcast_dimensions=broadcast_dimensions, sharding=out_sharding),
        key="sharding")
  return broadcast_in_dim_p.bind(operand, shape=shape,
                                 broadcast_dimensions=broadcast_dimensions, sharding=None)


def _broadcast_in_dim_abstract_eval(operand, *, shape, broadcast_dimensions, sharding):
  core.check_shapelike("broadcast_in_dim", "shape", shape)
  if len(broadcast_dimensions) != operand.ndim:
    raise TypeError(
        "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; "
        f"got broadcast_dimensions {broadcast_dimensions} for operand ndim {operand.ndim}.")
  if len(shape) < operand.ndim:
    raise TypeError(f"broadcast_in_dim target broadcast shape must have equal or higher "
                    f"rank to the operand shape; got operand ndim {operand.ndim} and target "
                    f"broadcast ndim {len(shape)}.")
  if not all(0 <= d < len(shape) for d in broadcast_dimensions):
    raise TypeError("broadcast_in_dim broadcast_dimensions must be a subset of output "
                    f"dimensions, got {broadcast_dimensions} for operand ndim {operand.ndim} "
                    f"and shape {shape}.")
  for i, d in enumerate(broadcast_dimensions):
    if operand.shape[i] not in (1, shape[d]):
      raise TypeError(
          "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
          "corresponding dimensions in the target broadcast shape; got operand of shape "
          f"{operand.shape}, target broadcast shape {shape}, broadcast_dimensions "
          f"{broadcast_dimensions} ")
  if len(set(broadcast_dimensions)) != len(broadcast_dimensions):
    raise TypeError("broadcast_in_dim broadcast_dimensions must not contain duplicates, "
                    f"got broadcast_dimensions {broadcast_dimensions}")
  # Stricter than JAX, whose transpose rule also assumes the order: ascending dimensions.
  if any(a >= b for a, b in zip(broadcast_dimensions, broadcast_dimensions[1:])):
    raise TypeError("broadcast_in_dim broadcast_dimensions must be strictly increasing; "
                    f"got broadcast_dimensions {broadcast_dimensions}")
  out = core.ShapedArray(shape, operand.dtype, operand.weak_type)
  if sharding is not None:
    out = rules.typed(out, sharding)
  return out


def _broadcast_in_dim_transpose(ct, operand, *, shape, broadcast_dimensions, sharding):
  # Sum over the new dims and over the size-1 operand dims that were expanded.
  from xjax._src.lax.reductions import reduce_sum  # reductions sits below structural
  unit_dims = tuple(i for i, d in enumerate(operand.aval.shape) if d == 1)
  kept = {d for i, d in enumerate(broadcast_dimensions) if i not in unit_dims}
  summed = reduce_sum(ct, tuple(d for d in range(len(shape)) if d not in kept))
  return [expand_dims(summed, unit_dims)]


def _broadcast_in_dim_batch(axis_data, args, dims, *, shape, broadcast_dimensions, sharding):
  (operand,), (bdim,) = args, dims
  operand = batching.moveaxis(operand, bdim, 0)
  new_dims = (0, *np.add(1, broadcast_dimensions))  # NumPy ints, printed as JAX prints them
  return broadcast_in_dim_p.bind(operand, shape=(np.shape(operand)[0], *shape),
                                 broadcast_dimensions=new_dims, sharding=None), 0


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
ad.deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)
broadcast_in_dim_p.def_batch(_broadcast_in_dim_batch)


def broadcast(operand, sizes):
  """Adds leading dimensions of `sizes` to `operand` (mirrors `jax.lax.broadcast`).

  Raises:
    TypeError: `sizes` has an element that is not a concrete integer or is
      negative (broadcast_in_dim's messages, as in JAX).
  """
  sizes = tuple(sizes)
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
    out_sharding: None, or a NamedSharding (or a PartitionSpec over the context
      mesh) the result is typed and laid out as; needed for reshapes of split
      dimensions the sharding rules cannot follow.

  Returns:
    An array of shape `new_sizes`.

  Raises:
    TypeError: the sizes differ, or the shape is not concrete.
    ShardingTypeError: a reshape of split dimensions with no `out_sharding`.

  Mirrors `jax.lax.reshape`.
  """
  new_sizes = core.canonicalize_shape(new_sizes)
  aval = core.get_aval(operand)
  dims = None if dimensions is None or tuple(dimensions) == tuple(range(aval.ndim)) \
      else tuple(int(d) for d in dimensions)
  if out_sharding is not None:
    out_sharding = rules.canonicalize_out_sharding(out_sharding, "reshape")
  if aval.shape == new_sizes and dims is None and not isinstance(operand, (int, float, complex, bool)) \
      and out_sharding is None:
    return operand
  if out_sharding is not None:
    return rules.bind_with_out_sharding(
        reshape_p, (operand,), dict(new_sizes=new_sizes, dimensions=dims, sharding=out_sharding),
        key="sharding")
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
  out = core.ShapedArray(new_sizes, operand.dtype, operand.weak_type)
  if sharding is not None:
    out = rules.typed(out, sharding)
  return out


def _reshape_transpose(ct, operand, *, new_sizes, dimensions, sharding):
  shape = operand.aval.shape
  if dimensions is None:  # the cotangent takes the operand's type, split axes included (JAX)
    return [reshape(ct, shape, out_sharding=operand.aval.sharding)]
  permuted = reshape(ct, tuple(shape[d] for d in dimensions))
  return [transpose(permuted, tuple(np.argsort(dimensions)))]


def _reshape_batch(axis_data, args, dims, *, new_sizes, dimensions, sharding):
  (operand,), (bdim,) = args, dims
  operand = batching.moveaxis(operand, bdim, 0)
  if dimensions is not None:
    dimensions = (0, *np.add(1, dimensions))
  return reshape(operand, (np.shape(operand)[0], *new_sizes), dimensions), 0


def _reshape_lowering(ctx, x, *, new_sizes, dimensions, sharding):
  if dimensions is not None:
    src = ctx.avals_in[0]
    perm_shape = tuple(src.shape[d] for d in dimensions)
    x = ctx.op1("stablehlo.transpose", [x], hlo.tensor_type(perm_shape, src.dtype),
                f"permutation = {hlo.i64_array(dimensions)}")
  return ctx.op1("stablehlo.reshape", [x], hlo.aval_type(ctx.avals_out[0]))


def _reshape_pp(params):
  # JAX prints an out_sharding over the abstract mesh.
  if params["sharding"] is None:
    return params
  return {**params, "sharding": rules.abstract_text(params["sharding"])}


reshape_p = standard_primitive("reshape", _reshape_abstract_eval, _reshape_lowering,
                               pp_params=_reshape_pp)
ad.deflinear(reshape_p, _reshape_transpose)
reshape_p.def_batch(_reshape_batch)


# ----------------------------------------------------------------------------
# Helpers shared by the cards below


def _is_jax_array(x) -> bool:
  return isinstance(x, (Array, core.Tracer))


def _asarray(x):
  """`x` as an xjax value: Arrays and tracers as they are; a host value becomes an
  Array when evaluating eagerly (under a trace it stays a constant, as in JAX)."""
  if _is_jax_array(x) or not isinstance(core.current_trace(), core.EvalTrace):
    return x
  return dispatch.device_put_value(x)


def _canonicalize_axis(axis, ndim: int) -> int:
  axis = operator.index(axis)
  if not -ndim <= axis < ndim:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
  return axis + ndim if axis < 0 else axis


# ----------------------------------------------------------------------------
# transpose


def transpose(operand, permutation):
  """Permutes the dimensions of `operand`: output dim i is operand dim permutation[i].

  Args:
    operand: an array.
    permutation: a permutation of ``range(operand.ndim)``.

  Returns:
    An array of shape ``[operand.shape[p] for p in permutation]``.

  Raises:
    TypeError: `permutation` is not a permutation of the operand's dimensions.

  >>> import xjax.numpy as jnp
  >>> transpose(jnp.zeros((2, 3)), (1, 0)).shape
  (3, 2)

  Mirrors `jax.lax.transpose`.
  """
  permutation = tuple(operator.index(d) for d in permutation)
  if permutation == tuple(range(np.ndim(operand))) and _is_jax_array(operand):
    return operand
  return transpose_p.bind(operand, permutation=permutation)


def _transpose_abstract_eval(operand, *, permutation):
  if not isinstance(permutation, (tuple, list, np.ndarray)):
    raise TypeError(f"transpose permutation must be a tuple/list/ndarray, got {type(permutation)}.")
  if tuple(sorted(permutation)) != tuple(range(operand.ndim)):
    raise TypeError("transpose permutation isn't a permutation of operand dimensions, "
                    f"got permutation {permutation} for operand shape {operand.shape}.")
  shape = tuple(operand.shape[d] for d in permutation)
  return core.ShapedArray(shape, operand.dtype, operand.weak_type)


def _transpose_transpose(ct, operand, *, permutation):
  return [transpose(ct, tuple(int(d) for d in np.argsort(permutation)))]


def _transpose_batch(axis_data, args, dims, *, permutation):
  # The batch axis goes first; the other axes keep their order, renumbered around it.
  (operand,), (bdim,) = args, dims
  perm = (bdim, *(d if d < bdim else d + 1 for d in permutation))
  return transpose(operand, perm), 0


def _transpose_lowering(ctx, x, *, permutation):
  return ctx.op1("stablehlo.transpose", [x], hlo.aval_type(ctx.avals_out[0]),
                 f"permutation = {hlo.i64_array(permutation)}")


transpose_p = standard_primitive("transpose", _transpose_abstract_eval, _transpose_lowering)
ad.deflinear(transpose_p, _transpose_transpose)
transpose_p.def_batch(_transpose_batch)


# ----------------------------------------------------------------------------
# squeeze


def squeeze(array, dimensions):
  """Removes the size-1 dimensions listed in `dimensions`.

  Args:
    array: an array.
    dimensions: the dimensions to remove (negative values count from the end);
      each must have size 1.

  Returns:
    An array with those dimensions removed.

  Raises:
    ValueError: a dimension is out of range, repeated, or not of size 1.

  >>> import xjax.numpy as jnp
  >>> squeeze(jnp.zeros((3, 1)), (1,)).shape
  (3,)

  Mirrors `jax.lax.squeeze`.
  """
  ndim = np.ndim(array)
  dimensions = tuple(sorted(_canonicalize_axis(d, ndim) for d in dimensions))
  if not dimensions and _is_jax_array(array):
    return array
  return squeeze_p.bind(array, dimensions=dimensions)


def _squeeze_shape(shape, dimensions):
  if len(set(dimensions)) != len(dimensions):
    raise ValueError(f"dimensions are not unique: {dimensions}")
  if not all(0 <= d < len(shape) for d in dimensions):
    raise ValueError(f"dimensions outside range [0, ndim): {dimensions}")
  if any(shape[d] != 1 for d in dimensions):
    raise ValueError("cannot select an axis to squeeze out which has size not equal to one, "
                     f"got shape={shape} and dimensions={dimensions}")
  return tuple(s for i, s in enumerate(shape) if i not in dimensions)


def _squeeze_abstract_eval(operand, *, dimensions):
  shape = _squeeze_shape(operand.shape, dimensions)
  return core.ShapedArray(shape, operand.dtype, operand.weak_type)


def _squeeze_transpose(ct, operand, *, dimensions):
  return [expand_dims(ct, dimensions)]


def _squeeze_batch(axis_data, args, dims, *, dimensions):
  (operand,), (bdim,) = args, dims
  operand = batching.moveaxis(operand, bdim, 0)
  return squeeze(operand, tuple(np.add(1, dimensions))), 0


def _squeeze_lowering(ctx, x, *, dimensions):
  return ctx.op1("stablehlo.reshape", [x], hlo.aval_type(ctx.avals_out[0]))


squeeze_p = standard_primitive("squeeze", _squeeze_abstract_eval, _squeeze_lowering)
ad.deflinear(squeeze_p, _squeeze_transpose)
squeeze_p.def_batch(_squeeze_batch)


def expand_dims(array, dimensions):
  """Inserts size-1 dimensions at the positions `dimensions` of the result.

  A `broadcast_in_dim`, as in JAX (there is no expand_dims primitive).

  Args:
    array: an array.
    dimensions: positions in the output (negative values count from the end
      of the output's dimensions).

  Returns:
    An array of rank ``ndim + len(dimensions)``.

  Raises:
    ValueError: a position is repeated or out of range.

  >>> import xjax.numpy as jnp
  >>> expand_dims(jnp.zeros(3), (0, 2)).shape
  (1, 3, 1)

  Mirrors `jax.lax.expand_dims`.
  """
  if len(set(dimensions)) != len(dimensions):
    raise ValueError(f"repeated axis in lax.expand_dims: {dimensions}")
  ndim_out = np.ndim(array) + len(dimensions)
  dims = [_canonicalize_axis(d, ndim_out) for d in dimensions]
  if len(set(dims)) != len(dims):
    raise ValueError(f"repeated axis in lax.expand_dims: {dims}")
  shape = list(np.shape(array))
  for d in sorted(dims):
    shape.insert(d, 1)
  kept = [i for i in range(ndim_out) if i not in dims]
  return broadcast_in_dim(array, shape, kept)


# ----------------------------------------------------------------------------
# rev


def rev(operand, dimensions):
  """Reverses `operand` along each dimension in `dimensions`.

  Args:
    operand: an array.
    dimensions: distinct nonnegative dimension indices.

  Returns:
    An array of operand's shape and dtype.

  Raises:
    TypeError: a dimension is negative, repeated or not below the rank.

  >>> import xjax.numpy as jnp
  >>> rev(jnp.arange(3), (0,))
  Array([2, 1, 0], dtype=int32)

  Mirrors `jax.lax.rev`.
  """
  return rev_p.bind(operand, dimensions=tuple(dimensions))


def _rev_abstract_eval(operand, *, dimensions):
  core.check_shapelike("rev", "dimensions", dimensions)
  if len(set(dimensions)) != len(dimensions):
    raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
  if dimensions and not max(dimensions) < operand.ndim:
    raise TypeError("rev dimensions must all be less than operand ndim, got dimensions "
                    f"{dimensions} for operand ndim {operand.ndim}.")
  return operand


def _rev_transpose(ct, operand, *, dimensions):
  return [rev(ct, dimensions)]


def _rev_batch(axis_data, args, dims, *, dimensions):
  (operand,), (bdim,) = args, dims
  return rev(operand, tuple(d + 1 if d >= bdim else d for d in dimensions)), bdim


def _rev_lowering(ctx, x, *, dimensions):
  return ctx.op1("stablehlo.reverse", [x], x.type, f"dimensions = {hlo.i64_array(dimensions)}")


rev_p = standard_primitive("rev", _rev_abstract_eval, _rev_lowering)
ad.deflinear(rev_p, _rev_transpose)
rev_p.def_batch(_rev_batch)


# ----------------------------------------------------------------------------
# pad


def pad(operand, padding_value, padding_config):
  """Pads `operand` with `padding_value`: (low, high, interior) amounts per dimension.

  Negative low or high amounts remove elements from that edge; interior
  padding (nonnegative) goes between neighbouring elements.

  Args:
    operand: an array.
    padding_value: a scalar of operand's dtype.
    padding_config: one ``(low, high, interior)`` triple of ints per dimension.
      The values are kept as given (they are printed in jaxprs).

  Returns:
    The padded array.

  Raises:
    TypeError: the dtypes differ, or an amount is not an integer.
    ValueError: `padding_value` is not a scalar, the config has the wrong
      length, interior padding is negative, or a dimension would be negative.

  >>> import xjax.numpy as jnp
  >>> pad(jnp.array([1, 2]), 0, ((1, 2, 1),))
  Array([0, 1, 0, 2, 0, 0], dtype=int32)

  Mirrors `jax.lax.pad`.
  """
  padding_config = tuple(tuple(triple) for triple in padding_config)
  return pad_p.bind(operand, padding_value, padding_config=padding_config)


def _pad_abstract_eval(operand, padding_value, *, padding_config):
  if padding_value.ndim != 0:
    raise ValueError("padding_value must be a scalar; got "
                     f"np.shape(padding_value)={padding_value.shape}")
  if len(padding_config) != operand.ndim:
    raise ValueError("length of padding_config must equal the number of axes of operand, got "
                     f"padding_config {padding_config} for operand shape {operand.shape}")
  if not all(interior >= 0 for _, _, interior in padding_config):
    raise ValueError("interior padding in padding_config must be nonnegative, got "
                     f"padding_config {padding_config}")
  # A dimension d with interior padding i becomes d + (d - 1) * i, plus its edges.
  shape = core.canonicalize_shape(tuple(lo + hi + (d and d + (d - 1) * interior)
                                        for (lo, hi, interior), d in zip(padding_config,
                                                                        operand.shape)))
  if not all(d >= 0 for d in shape):
    raise ValueError(f"Dimension size after padding is not at least 0, got result shape "
                     f"{shape}, for padding_config {padding_config} and operand shape "
                     f"{operand.shape}")
  if operand.dtype != padding_value.dtype:
    raise TypeError("pad operand and padding_value must be same dtype: got "
                    f"{operand.dtype} and {padding_value.dtype}.")
  return core.ShapedArray(shape, operand.dtype, operand.weak_type and padding_value.weak_type)


def _pad_transpose(ct, operand, padding_value, *, padding_config):
  from xjax._src.lax.reductions import reduce_sum  # reductions and slicing sit below
  from xjax._src.lax.slicing import slice  # noqa: A004 - JAX's name
  ndim = len(padding_config)
  ct_operand = ct_padding_value = None
  if ad.is_undefined_primal(operand) or ad.is_undefined_primal(padding_value):
    # Undo the edges (re-growing what negative edges cropped), then take every
    # (interior + 1)-th element.
    zero = np.zeros((), core.get_aval(ct).dtype)
    unpadded = pad(ct, zero, tuple((-lo, -hi, 0) for lo, hi, _ in padding_config))
    ct_operand = slice(unpadded, (0,) * ndim, core.get_aval(unpadded).shape,
                       tuple(interior + 1 for _, _, interior in padding_config))
  if ad.is_undefined_primal(padding_value):
    # Every output element is an operand element or padding.
    total = lambda x: reduce_sum(x, tuple(range(ndim)))  # noqa: E731
    ct_padding_value = ew.sub(total(ct), total(ct_operand))
  return [ct_operand if ad.is_undefined_primal(operand) else None, ct_padding_value]


def _pad_batch(axis_data, args, dims, *, padding_config):
  operand, padding_value = args
  operand_bdim, padding_value_bdim = dims
  if operand_bdim is None:
    operand_bdim = 0
    operand = broadcast(operand, (axis_data.size,))
  config = list(padding_config)
  config.insert(operand_bdim, (0, 0, 0))
  if padding_value_bdim is None:
    return pad(operand, padding_value, config), operand_bdim
  # One padding value per member: pad with zeros, then select the padded
  # positions (a mask padded the same way) from the broadcast padding values.
  assert padding_value_bdim == 0, padding_value_bdim
  padded = pad(operand, full_like(operand, 0, shape=()), config)
  mask = pad(full_like(operand, True, np.bool_), False, config)
  padding = broadcast_in_dim(padding_value, np.shape(padded), (operand_bdim,))
  return ew.select_n(mask, padding, padded), operand_bdim


def _pad_lowering(ctx, x, padding_value, *, padding_config):
  low, high, interior = zip(*padding_config) if padding_config else ((), (), ())
  attrs = (f"edge_padding_low = {hlo.i64_array(low)}, edge_padding_high = {hlo.i64_array(high)}, "
           f"interior_padding = {hlo.i64_array(interior)}")
  return ctx.op1("stablehlo.pad", [x, padding_value], hlo.aval_type(ctx.avals_out[0]), attrs)


pad_p = standard_primitive("pad", _pad_abstract_eval, _pad_lowering)
ad.deflinear(pad_p, _pad_transpose)
pad_p.def_batch(_pad_batch)


# ----------------------------------------------------------------------------
# concatenate


def concatenate(operands, dimension):
  """Joins `operands` along `dimension`.

  Args:
    operands: a non-empty sequence of arrays of one dtype and rank, whose
      shapes agree except along `dimension`.
    dimension: the dimension to join along (nonnegative).

  Returns:
    The concatenated array (weakly typed only if every operand is).

  Raises:
    ValueError: `operands` is empty.
    TypeError: ranks, dtypes or the other dimensions differ, or `dimension`
      is out of range.

  >>> import xjax.numpy as jnp
  >>> concatenate([jnp.zeros(2), jnp.ones(1)], 0)
  Array([0., 0., 1.], dtype=float32)

  Mirrors `jax.lax.concatenate`.
  """
  if len(operands) == 0:
    raise ValueError("concatenate requires a non-empty sequences of arrays")
  if len(operands) == 1 and _is_jax_array(operands[0]):
    return operands[0]
  return concatenate_p.bind(*operands, dimension=dimension)


def _concatenate_abstract_eval(*operands, dimension):
  shapes = ", ".join(str(o.shape) for o in operands)
  if len({o.ndim for o in operands}) != 1:
    raise TypeError("Cannot concatenate arrays with different numbers of dimensions: "
                    f"got {shapes}.")
  if not 0 <= dimension < operands[0].ndim:
    raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for "
                    f"shapes {shapes}.")
  others = {o.shape[:dimension] + o.shape[dimension + 1:] for o in operands}
  if len(others) != 1:
    raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions other than "
                    f"the one being concatenated: concatenating along dimension {dimension} for "
                    f"shapes {shapes}.")
  dtype = operands[0].dtype
  if any(o.dtype != dtype for o in operands):
    raise TypeError(
        "lax.concatenate requires arguments to have the same dtypes, got "
        f"{', '.join(str(o.dtype) for o in operands)}. (Tip: jnp.concatenate is a similar "
        "function that does automatic type promotion on inputs).")
  shape = list(operands[0].shape)
  shape[dimension] = sum(o.shape[dimension] for o in operands)
  return core.ShapedArray(shape, dtype, all(o.weak_type for o in operands))


def _concatenate_transpose(ct, *operands, dimension):
  from xjax._src.lax.slicing import slice_in_dim  # slicing sits below structural
  sizes = [(o.aval if ad.is_undefined_primal(o) else core.get_aval(o)).shape[dimension]
           for o in operands]
  starts = np.cumsum([0, *sizes])
  return [slice_in_dim(ct, int(start), int(start + size), axis=dimension)
          if ad.is_undefined_primal(o) else None
          for o, start, size in zip(operands, starts, sizes)]


def _concatenate_batch(axis_data, args, dims, *, dimension):
  operands = [broadcast(x, (axis_data.size,)) if d is None else batching.moveaxis(x, d, 0)
              for x, d in zip(args, dims)]
  return concatenate(operands, dimension + 1), 0


def _concatenate_lowering(ctx, *xs, dimension):
  return ctx.op1("stablehlo.concatenate", xs, hlo.aval_type(ctx.avals_out[0]),
                 f"dimension = {int(dimension)} : i64")


concatenate_p = standard_primitive("concatenate", _concatenate_abstract_eval,
                                   _concatenate_lowering)
ad.deflinear(concatenate_p, _concatenate_transpose)
concatenate_p.def_batch(_concatenate_batch)


# ----------------------------------------------------------------------------
# split


def split(operand, sizes, axis: int = 0):
  """`operand` cut along `axis` into consecutive pieces of the given `sizes`.

  Args:
    operand: an array.
    sizes: nonnegative ints summing to ``operand.shape[axis]``.
    axis: the axis to cut (negative counts from the end).

  Returns:
    A list of ``len(sizes)`` arrays, the i-th of size ``sizes[i]`` along `axis`.

  Raises:
    ValueError: a negative size, sizes that do not sum to the axis size, or an
      axis out of range (JAX's messages).

  >>> import xjax.numpy as jnp
  >>> split(jnp.arange(5), (2, 3))
  [Array([0, 1], dtype=int32), Array([2, 3, 4], dtype=int32)]

  Mirrors `jax.lax.split`.
  """
  ndim = np.ndim(operand)
  if not -ndim <= axis < ndim:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
  return split_p.bind(operand, sizes=tuple(sizes), axis=axis % ndim)


def _split_abstract_eval(operand, *, sizes, axis):
  if any(s < 0 for s in sizes):
    raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
  if operand.shape[axis] != sum(sizes):
    # JAX 0.10.2's wording (it names the axis where it means the axis size).
    raise ValueError(f"Sum of sizes {np.sum(sizes)} must be equal to dimension {axis} of the "
                     f"operand shape {list(operand.shape)}")
  shape = list(operand.shape)
  return [operand.update(shape=tuple(shape[:axis] + [int(n)] + shape[axis + 1:]))
          for n in sizes]


def _split_lowering(ctx, x, *, sizes, axis):
  ndim = len(ctx.avals_in[0].shape)
  starts, limits = [0] * ndim, list(ctx.avals_in[0].shape)
  outs = []
  for aval in ctx.avals_out:
    limits[axis] = starts[axis] + aval.shape[axis]
    attrs = (f"start_indices = {hlo.i64_array(starts)}, limit_indices = {hlo.i64_array(limits)}, "
             f"strides = {hlo.i64_array([1] * ndim)}")
    outs.append(ctx.op1("stablehlo.slice", [x], hlo.aval_type(aval), attrs))
    starts[axis] = limits[axis]
  return outs


def _split_transpose(cts, operand, *, sizes, axis):
  if all(type(ct) is ad.Zero for ct in cts):
    return [ad.Zero(operand.aval)]
  return [concatenate([ad.instantiate_zeros(ct) for ct in cts], axis)]


def _split_batch(axis_data, args, dims, *, sizes, axis):
  (x,), (d,) = args, dims
  return split(x, sizes, axis + 1 if axis >= d else axis), [d] * len(sizes)


split_p = standard_primitive("split", _split_abstract_eval, _split_lowering, multiple_results=True)
ad.deflinear(split_p, _split_transpose)
split_p.def_batch(_split_batch)


# ----------------------------------------------------------------------------
# iota


def iota(dtype, size: int):
  """The vector ``[0, 1, ..., size - 1]`` of `dtype`.

  Mirrors `jax.lax.iota`.
  """
  return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype, shape, dimension: int, *, out_sharding=None):
  """An array of `shape` whose value at each index is that index's position along `dimension`.

  Args:
    dtype: a numeric dtype.
    shape: the output shape.
    dimension: the dimension that counts up.

  Returns:
    An array of `shape` and `dtype` (never weakly typed).

  Raises:
    TypeError: a bad dtype or shape.
    ValueError: `dimension` is not below ``len(shape)``.

  >>> import numpy as np
  >>> broadcasted_iota(np.int32, (2, 3), 1)
  Array([[0, 1, 2],
         [0, 1, 2]], dtype=int32)

  Mirrors `jax.lax.broadcasted_iota`.
  """
  dtype = dtypes.canonicalize_dtype(dtype)
  shape = core.canonicalize_shape(shape)
  dimension = operator.index(dimension)
  return iota_p.bind(dtype=dtype, shape=shape, dimension=dimension, sharding=None)


def _iota_abstract_eval(*, dtype, shape, dimension, sharding):
  core.check_shapelike("iota", "shape", shape)
  if not any(dtypes.issubdtype(dtype, t) for t in (np.integer, np.floating, np.complexfloating)):
    raise TypeError(f"iota does not accept dtype {dtype.name}. Accepted dtypes are subtypes "
                    "of integer, floating, complexfloating.")
  if not 0 <= dimension < len(shape):
    raise ValueError("iota dimension must be between 0 and len(shape), got "
                     f"dimension={dimension} for shape={shape}")
  return core.ShapedArray(shape, dtype)


def _iota_lowering(ctx, *, dtype, shape, dimension, sharding):
  return ctx.op1("stablehlo.iota", [], hlo.aval_type(ctx.avals_out[0]),
                 f"iota_dimension = {dimension} : i64")


iota_p = standard_primitive("iota", _iota_abstract_eval, _iota_lowering)


# ----------------------------------------------------------------------------
# Helpers over the primitives: full, full_like, collapse, broadcast_to_rank


def full(shape, fill_value, dtype=None, *, sharding=None):
  """An array of `shape` filled with the scalar `fill_value`.

  Args:
    shape: the output shape.
    fill_value: a scalar.
    dtype: the dtype of the result; by default fill_value's (weakly typed
      when fill_value is a Python scalar).
    sharding: None, or a Sharding (or Device) the result is placed on.

  Returns:
    An array of `shape`.

  Raises:
    TypeError: `fill_value` is not a scalar, or `shape` is not a shape.

  >>> full((2,), 7, np.int32)
  Array([7, 7], dtype=int32)

  Mirrors `jax.lax.full`.
  """
  shape = core.canonicalize_shape(shape)
  if np.shape(fill_value):
    raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape "
                    f"{np.shape(fill_value)}.")
  if dtype is None:
    aval = core.get_aval(fill_value)
    dtype, weak_type = aval.dtype, aval.weak_type
  else:
    dtype, weak_type = dtypes.canonicalize_dtype(dtype), False
  fill_value = convert_element_type(fill_value, dtype, weak_type=weak_type)
  out = _asarray(broadcast(fill_value, shape))
  if sharding is not None:
    out = _place(out, sharding)
  return out


def _place(x, sharding):
  """`device_put(x, sharding)`: installed by `xjax._src.device_put` (a layer above lax) with
  `set_placement`."""
  raise RuntimeError("lax.full(sharding=...) needs xjax._src.device_put to be imported")


def set_placement(place) -> None:
  """Registers `device_put` for `full(..., sharding=)` (called by `xjax._src.device_put`)."""
  global _place
  _place = place


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
  """An array like `x` (its shape and dtype, unless given) filled with `fill_value`.

  The result is weakly typed when `x` is and `dtype` is not given. It is placed on
  `sharding` when given, else (as JAX) on the sharding of a committed, strongly typed
  array `x` whose shape it keeps.

  >>> import xjax.numpy as jnp
  >>> full_like(jnp.zeros(2, jnp.int32), 2.7)
  Array([2, 2], dtype=int32)

  Mirrors `jax.lax.full_like`.
  """
  fill_shape = np.shape(x) if shape is None else core.canonicalize_shape(shape)
  aval = core.get_aval(x)
  weak_type = dtype is None and aval.weak_type
  dtype = aval.dtype if dtype is None else dtypes.canonicalize_dtype(dtype)
  if (sharding is None and type(x) is Array and x._committed
      and not weak_type and tuple(fill_shape) == tuple(np.shape(x))):
    sharding = x.sharding
  return full(fill_shape, convert_element_type(fill_value, dtype, weak_type=weak_type),
              sharding=sharding)


def collapse(operand, start_dimension: int, stop_dimension: int | None = None):
  """Merges dimensions ``[start_dimension, stop_dimension)`` of `operand` into one.

  >>> import xjax.numpy as jnp
  >>> collapse(jnp.zeros((2, 3, 4)), 1).shape
  (2, 12)

  Mirrors `jax.lax.collapse`.
  """
  shape = np.shape(operand)
  lo, hi, _ = slice(start_dimension, stop_dimension).indices(len(shape))
  if hi < lo:
    raise ValueError(f"Invalid dimension range passed to collapse: {shape}"
                     f"[{start_dimension}:{stop_dimension}]")
  size = int(np.prod(shape[lo:hi], dtype=np.int64))
  return _asarray(reshape(operand, (*shape[:lo], size, *shape[hi:])))


def broadcast_to_rank(x, rank: int):
  """Adds leading size-1 dimensions to `x` until it has rank `rank`.

  Mirrors `jax.lax.broadcast_to_rank`.
  """
  ndim = np.ndim(x)
  if ndim == rank:
    return _asarray(x)
  return _asarray(broadcast(x, (1,) * (rank - ndim)))


# ----------------------------------------------------------------------------
# The axis moves of the batching interpreter


def _moveaxis(x, src: int, dst: int):
  perm = [i for i in range(np.ndim(x)) if i != src]
  perm.insert(dst, src)
  return transpose(x, tuple(perm))


def _broadcast_axis(x, size: int, axis: int):
  shape = list(np.shape(x))
  shape.insert(axis, size)
  dims = tuple(np.delete(np.arange(len(shape)), axis))  # NumPy ints, printed as JAX's are
  return broadcast_in_dim_p.bind(x, shape=tuple(shape), broadcast_dimensions=dims,
                                 sharding=None)


def _expand_trailing(x, ndim: int):
  shape = tuple(np.shape(x))
  return broadcast_in_dim(x, shape + (1,) * (ndim - len(shape)), tuple(range(len(shape))))


batching.register_axis_ops(moveaxis=_moveaxis, broadcast=_broadcast_axis,
                           expand_trailing=_expand_trailing,
                           iota=lambda size: iota(np.int32, int(size)))


def broadcast_shapes(*shapes) -> tuple[int, ...]:
  """The shape the given shapes broadcast to (NumPy's rules, aligned at the trailing axes).

  Raises:
    ValueError: the shapes do not broadcast ("Incompatible shapes for broadcasting").
    TypeError: a shape is not a sequence of integers, or has a negative size.

  Mirrors `jax.lax.broadcast_shapes`.
  """
  given, shapes = shapes, [tuple(core.canonicalize_shape(s)) for s in shapes]
  for shape, checked in zip(given, shapes):
    if any(d < 0 for d in checked):
      raise TypeError("Only non-negative indices are allowed when broadcasting static "
                      f"shapes, but got shape {shape!r}.")
  if not shapes:
    return ()
  ndim = max(len(s) for s in shapes)
  padded = [(1,) * (ndim - len(s)) + s for s in shapes]
  out = []
  for sizes in zip(*padded):
    non_one = {d for d in sizes if d != 1}
    if len(non_one) > 1:
      raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}")
    out.append(non_one.pop() if non_one else 1)
  return tuple(out)


def _zeros_like_aval(aval):
  """`ad.zeros_like_aval` past its host-constant cases: the weak type kept, and under a
  trace a broadcast of the scalar zero (as JAX stages one)."""
  zero = np.zeros((), aval.dtype)
  if aval.weak_type:
    zero = convert_element_type(zero, aval.dtype, weak_type=True)
  if not aval.shape or aval.dtype == dtypes.float0 or core.trace_ctx.trace is core.eval_trace:
    return zero if not aval.shape else np.broadcast_to(zero, aval.shape)
  return broadcast_in_dim(zero, aval.shape, ())


ad.set_lax_zeros(_zeros_like_aval)
