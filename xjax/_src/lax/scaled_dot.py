"""scaled_dot: a dot_general of operands multiplied by block-wise scales.

Microscaling formats (MX) store a tensor as narrow values (say float8_e4m3fn)
and one scale (say float8_e8m0fnu) per block of consecutive elements along the
contracting dimension. ``scaled_dot[dimension_numbers, preferred_element_type]
lhs rhs lhs_scale rhs_scale`` computes ``(lhs * lhs_scale) @ (rhs * rhs_scale)``
with each scale repeated over its block.

Each scale has its operand's shape, except along the contracting dimensions,
where the operand's size is a multiple (at least 2) of the scale's: the block
size. As in JAX, the lowering is a ``stablehlo.composite "xla.scaled_dot"``
whose decomposition converts operands and scales to bfloat16, multiplies them
and calls dot_general with the preferred element type. There is no JVP or
transpose rule (JAX has none either); vmap adds a leading batch dimension.
"""
from __future__ import annotations

import numpy as np

from xjax._src import dtypes
from xjax._src import core
from xjax._src import stablehlo as hlo
from xjax._src.interpreters import batching
from xjax._src.interpreters import lowering
from xjax._src.interpreters import partial_eval as pe
from xjax._src.lax import elementwise as ew
from xjax._src.lax.dot import dot_general
from xjax._src.lax.structural import broadcast_in_dim, full, reshape
from xjax._src.lax.utils import standard_primitive


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None,
               preferred_element_type=None):
  """A dot_general of `lhs` and `rhs` after multiplying each by its block scale.

  Computes ``dot_general(lhs * s_l, rhs * s_r)`` where ``s_l`` is `lhs_scale`
  repeated along each contracting dimension to the size of `lhs` (a block of
  ``lhs.shape[d] // lhs_scale.shape[d]`` consecutive elements shares one
  scale), and likewise for `rhs`. Operands and scales are rounded to bfloat16
  before the multiplication.

  Args:
    lhs, rhs: arrays (with an ``ndim``) of equal rank, at least 2; typically
      float8_e4m3fn or float8_e5m2.
    lhs_scale, rhs_scale: arrays of the operands' rank, typically
      float8_e8m0fnu. Each matches its operand's shape except along the
      contracting dimensions, where the operand's size must be a multiple of
      the scale's, at least twice it. None means a scale of ones with size 1
      along the contracting dimensions.
    dimension_numbers: ``((lhs_contracting, rhs_contracting), (lhs_batch,
      rhs_batch))``; by default the last lhs dimension is contracted with the
      second-to-last rhs one, and all earlier ones are batch dimensions
      (``(((1,), (0,)), ((), ()))`` for 2-D, ``(((2,), (1,)), ((0,), (0,)))``
      for 3-D).
    preferred_element_type: the result dtype (default bfloat16).

  Returns:
    An array of shape batch dims + lhs free dims + rhs free dims, of dtype
    `preferred_element_type`.

  Raises:
    TypeError: 0-d or 1-d operands without `dimension_numbers`, ranks that
      differ, batch or contracting dimension counts or sizes that differ, a
      scale that does not fit its operand (see above), or an unknown dtype.

  Mirrors `jax.lax.scaled_dot`.
  """
  if dimension_numbers is None:
    if lhs.ndim < 2:
      raise TypeError("scaled_dot does not support 0-rank and 1-rank operands.")
    batch = tuple(range(lhs.ndim - 2))
    dimension_numbers = (((lhs.ndim - 1,), (lhs.ndim - 2,)), (batch, batch))
  dimension_numbers = tuple(tuple(tuple(int(d) for d in ds) for ds in pair)
                            for pair in dimension_numbers)
  (lhs_contracting, rhs_contracting), _ = dimension_numbers
  if lhs_scale is None:
    lhs_scale = _unit_scale(lhs, lhs_contracting)
  if rhs_scale is None:
    rhs_scale = _unit_scale(rhs, rhs_contracting)
  if preferred_element_type is None:
    preferred_element_type = dtypes.bfloat16
  preferred_element_type = dtypes.check_user_dtype_supported(preferred_element_type,
                                                             "scaled_dot")
  return scaled_dot_p.bind(lhs, rhs, lhs_scale, rhs_scale,
                           dimension_numbers=dimension_numbers,
                           preferred_element_type=preferred_element_type)


def _unit_scale(operand, contracting):
  """Ones of `operand`'s shape with size 1 along `contracting`, as float8_e8m0fnu."""
  shape = list(operand.shape)
  for d in contracting:
    shape[d] = 1
  return ew.convert_element_type(full(shape, 1, dtypes.bfloat16), dtypes.float8_e8m0fnu)


def _check_scale(side, operand, scale, contracting):
  for i, size in enumerate(operand.shape):
    if i not in contracting:
      if scale.shape[i] != size:
        raise TypeError(f"{side} dim {i} of size {size} does not match scale dim size "
                        f"{scale.shape[i]}.")
    elif size % scale.shape[i]:
      raise TypeError(f"{side} contracting dim {i} of size {size} must be divisible by "
                      f"its scale's dim size {scale.shape[i]}.")
    elif size // scale.shape[i] < 2:
      raise TypeError(f"The ratio of {side} contracting dim {i} to its scale's dim size "
                      f"({size // scale.shape[i]}) must be at least 2.")


def _scaled_dot_abstract_eval(lhs, rhs, lhs_scale, rhs_scale, *, dimension_numbers,
                              preferred_element_type):
  (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
  if len({lhs.ndim, rhs.ndim, lhs_scale.ndim, rhs_scale.ndim}) != 1:
    raise TypeError(f"All input tensors must have the same rank. Got lhs rank: {lhs.ndim} "
                    f"rhs rank: {rhs.ndim} lhs_scale rank: {lhs_scale.ndim} rhs_scale "
                    f"rank: {rhs_scale.ndim}.")
  for what, lhs_dims, rhs_dims in (("batch", lhs_batch, rhs_batch),
                                   ("contracting", lhs_contracting, rhs_contracting)):
    if len(lhs_dims) != len(rhs_dims):
      raise TypeError(f"LHS and RHS must have the same number of {what} dimensions, got "
                      f"{len(lhs_dims)} and {len(rhs_dims)}.")
  for i, j in zip(lhs_batch, rhs_batch):
    sizes = {lhs.shape[i], rhs.shape[j], lhs_scale.shape[i], rhs_scale.shape[j]}
    if len(sizes) != 1:
      raise TypeError("All input tensors must have the same batch dimension size for "
                      f"batch dims ({i}, {j}).")
  for i, j in zip(lhs_contracting, rhs_contracting):
    if lhs.shape[i] != rhs.shape[j]:
      raise TypeError(f"LHS contracting dim {i} of size {lhs.shape[i]} does not match RHS "
                      f"contracting dim {j} of size {rhs.shape[j]}.")
  _check_scale("LHS", lhs, lhs_scale, lhs_contracting)
  _check_scale("RHS", rhs, rhs_scale, rhs_contracting)
  lhs_free = [d for d in range(lhs.ndim) if d not in lhs_contracting and d not in lhs_batch]
  rhs_free = [d for d in range(rhs.ndim) if d not in rhs_contracting and d not in rhs_batch]
  shape = ([lhs.shape[d] for d in lhs_batch] + [lhs.shape[d] for d in lhs_free]
           + [rhs.shape[d] for d in rhs_free])
  return core.ShapedArray(tuple(shape), preferred_element_type)


def _repeat_blocks(scale, shape, contracting):
  """`scale` with each element along `contracting` repeated to reach `shape`."""
  for d in contracting:
    block = shape[d] // scale.shape[d]
    if block == 1:
      continue
    wide = list(scale.shape)
    wide.insert(d + 1, block)
    dims = [i for i in range(len(wide)) if i != d + 1]
    scale = broadcast_in_dim(scale, wide, dims)
    scale = reshape(scale, [*scale.shape[:d], shape[d], *scale.shape[d + 2:]])
  return scale


def _scaled_dot_decomposition(lhs, rhs, lhs_scale, rhs_scale, *, dimension_numbers,
                              preferred_element_type):
  (lhs_contracting, rhs_contracting), _ = dimension_numbers

  def scaled(x, scale, contracting):
    scale = _repeat_blocks(scale, x.shape, contracting)
    return ew.mul(ew.convert_element_type(x, dtypes.bfloat16),
                  ew.convert_element_type(scale, dtypes.bfloat16))

  return dot_general(scaled(lhs, lhs_scale, lhs_contracting),
                     scaled(rhs, rhs_scale, rhs_contracting), dimension_numbers,
                     preferred_element_type=preferred_element_type)


def _scaled_dot_lowering(ctx, *args, dimension_numbers, preferred_element_type):
  """``stablehlo.composite "xla.scaled_dot"`` with the bfloat16 decomposition, as JAX."""
  def flat(*xs):
    return [_scaled_dot_decomposition(*xs, dimension_numbers=dimension_numbers,
                                      preferred_element_type=preferred_element_type)]

  jaxpr = pe.trace_to_jaxpr(flat, list(ctx.avals_in))
  fname = ctx.module.fresh_function_name("xla.scaled_dot")
  ctx.module.functions.append(lowering._function_text(ctx.module, fname, jaxpr, public=False))
  ctx.module.function_names[("composite", fname)] = (fname, jaxpr)  # keep the jaxpr alive
  dims = str([[list(ds) for ds in pair] for pair in dimension_numbers])
  attrs = (f"dimension_numbers = {dims}, "
           f"preferred_element_type = {hlo.element_type(np.dtype(preferred_element_type))}")
  text = (f'composite_attributes = {{{attrs}}}, name = "xla.scaled_dot", '
          f"decomposition = @{fname}")
  return ctx.op("stablehlo.composite", list(args), [hlo.aval_type(ctx.avals_out[0])], text)[0]


scaled_dot_p = standard_primitive("scaled_dot", _scaled_dot_abstract_eval, _scaled_dot_lowering)


def _scaled_dot_batch(axis_data, args, dims, *, dimension_numbers, preferred_element_type):
  # Every operand gets the batch axis in front; it becomes a new leading batch dimension.
  args = [batching.bdim_at_front(x, d, axis_data.size) for x, d in zip(args, dims)]
  (lc, rc), (lb, rb) = dimension_numbers
  shift = lambda ds: tuple(d + 1 for d in ds)
  dimension_numbers = ((shift(lc), shift(rc)), ((0, *shift(lb)), (0, *shift(rb))))
  out = scaled_dot_p.bind(*args, dimension_numbers=dimension_numbers,
                          preferred_element_type=preferred_element_type)
  return out, 0


scaled_dot_p.def_batch(_scaled_dot_batch)
