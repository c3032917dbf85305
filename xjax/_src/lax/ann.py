"""approx_max_k / approx_min_k: the approx_top_k primitive.

It lowers to XLA's ``ApproxTopK`` custom call, as JAX does; on CPU and GPU XLA
expands it to an exact top-k (a sort and a slice), so the results are the
exact k largest (smallest) values, ties in index order, and on equal
backends equal to JAX's. With ``aggregate_to_topk=False`` the reduced axis
keeps the size XLA's TPU algorithm would produce (`_reduction_output_size`),
filled with the best values in order.
"""
from __future__ import annotations

import math

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import stablehlo as hlo
from xjax._src.interpreters import ad
from xjax._src.interpreters.lowering import Value
from xjax._src.lax.sorting import _take_along
from xjax._src.lax.structural import reshape
from xjax._src.lax.utils import standard_primitive


def approx_max_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
  """The `k` largest entries of `operand` along `reduction_dimension`, and their indices.

  On CPU and GPU the result is exact: largest first, ties in index order.

  Args:
    operand: a floating-point array of rank at least 1.
    k: how many entries to keep (positive, at most the size of the axis).
    reduction_dimension: the axis to search (negative counts from the end).
    recall_target: the recall the TPU algorithm aims for (in (0, 1]).
    reduction_input_size_override: the logical size of the axis for the TPU
      algorithm's choice of output size (-1: the real size).
    aggregate_to_topk: reduce the axis to `k` entries; with False it keeps
      the TPU algorithm's (larger) output size.

  Returns:
    ``[values, indices]``: values of operand's dtype and int32 indices.

  Raises:
    ValueError: `k` is not positive or too large, or the operand is not
      floating-point.
    TypeError: the operand is a scalar.
    IndexError: `reduction_dimension` is out of range.

  Mirrors `jax.lax.approx_max_k`.
  """
  return approx_top_k_p.bind(operand, k=k, reduction_dimension=reduction_dimension,
                             recall_target=recall_target, is_max_k=True,
                             reduction_input_size_override=reduction_input_size_override,
                             aggregate_to_topk=aggregate_to_topk)


def approx_min_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
  """The `k` smallest entries of `operand` along `reduction_dimension`, and their indices.

  As `approx_max_k` (the same arguments, errors and results), smallest first.

  Mirrors `jax.lax.approx_min_k`.
  """
  return approx_top_k_p.bind(operand, k=k, reduction_dimension=reduction_dimension,
                             recall_target=recall_target, is_max_k=False,
                             reduction_input_size_override=reduction_input_size_override,
                             aggregate_to_topk=aggregate_to_topk)


def _log2_floor(n: int) -> int:
  return max(n.bit_length() - 1, 0)


def _log2_ceil(n: int) -> int:
  return (n - 1).bit_length() if n > 0 else 0


def _reduction_output_size(input_size, rank, k, recall_target, input_size_override) -> int:
  """The reduced axis' size XLA's TPU approximate top-k gives (without aggregation).

  The TPU algorithm keeps the best of each window of a reduction by 2**r; it
  picks r so that the expected recall is still `recall_target`.
  """
  tiling = 1024 if rank == 1 else 128
  if input_size <= tiling:
    return input_size
  if 0 <= input_size_override < input_size:
    raise ValueError(f"reduction_input_size_override: {input_size_override} should be greater "
                     f"equals to operands[reduction_dim]: {input_size}")
  logical_size = input_size_override if input_size_override >= 0 else input_size
  if k == 1:
    return tiling
  recall = float(np.float32(recall_target))  # XLA takes it as a float32
  if recall >= 1.0:
    return input_size
  # m windows keep (1 - 1/m)**(k - 1) ~ exp((1 - k) / m) of the top k.
  m = min(max(int((1.0 - k) / math.log(recall)), tiling), logical_size)
  log2_reduction = _log2_floor(logical_size // m)
  if log2_reduction == 0:
    return input_size
  log2_reduction = min(log2_reduction, _log2_ceil(input_size // tiling))
  return -(-(-(-input_size // tiling)) // (1 << log2_reduction)) * tiling


def _approx_top_k_abstract_eval(operand, *, k, reduction_dimension, recall_target, is_max_k,
                                reduction_input_size_override, aggregate_to_topk):
  if k <= 0:
    raise ValueError(f"k must be positive, got {k}")
  if operand.ndim == 0:
    raise TypeError(f"approx_top_k operand must have >= 1 dimension, got {operand.shape}")
  dims = list(operand.shape)
  if not -len(dims) <= reduction_dimension < len(dims):
    raise IndexError("list index out of range")
  size = dims[reduction_dimension]
  if size < k:
    raise ValueError(f"k must be smaller than the size of reduction_dim {size}, got {k}")
  if not dtypes.issubdtype(operand.dtype, np.floating):
    raise ValueError("operand must be a floating type")
  if not 0 < recall_target <= 1:
    raise ValueError(f"recall_target should range in (0,1], got {recall_target}")
  if aggregate_to_topk:
    if 0 <= reduction_input_size_override < size:
      raise ValueError(f"reduction_input_size_override: {reduction_input_size_override} should "
                       f"be greater equals to operands[reduction_dim]: {size}")
    dims[reduction_dimension] = k
  else:
    dims[reduction_dimension] = _reduction_output_size(size, len(dims), k, recall_target,
                                                       reduction_input_size_override)
  return [operand.update(shape=dims), operand.update(shape=dims, dtype=np.dtype(np.int32))]


def _approx_top_k_jvp(primals, tangents, **params):
  values, indices = approx_top_k_p.bind(*primals, **params)
  t, = tangents
  axis = params["reduction_dimension"] % core.get_aval(values).ndim
  if type(t) is ad.Zero:
    t_values = ad.Zero.from_primal_value(values)
  else:
    t_values = _take_along(t, reshape(indices, (*core.get_aval(indices).shape, 1)), axis)
  return [values, indices], [t_values, ad.Zero.from_primal_value(indices)]


def _approx_top_k_batch(axis_data, args, dims, *, reduction_dimension, **params):
  (x,), (bdim,) = args, dims
  unbatched = [d for d in range(core.get_aval(x).ndim) if d != bdim]
  outs = approx_top_k_p.bind(x, reduction_dimension=unbatched[reduction_dimension], **params)
  return outs, [bdim, bdim]


def _comparator(ctx, dtype, is_max_k) -> str:
  """A private function comparing two (value, index) pairs by value; returns its name."""
  direction = "GT" if is_max_k else "LT"
  scalar, index = hlo.tensor_type((), dtype), hlo.tensor_type((), np.int32)
  name = ctx.module.fresh_function_name(
      f"top_k_{direction.lower()}_{hlo.element_type(dtype)}_comparator")
  ctx.module.functions.append(
      f"  func.func private @{name}(%arg0: {scalar}, %arg1: {scalar}, %arg2: {index}, "
      f"%arg3: {index}) -> (tensor<i1>) {{\n"
      f'    %0 = "stablehlo.compare"(%arg0, %arg1) <{{comparison_direction = '
      f"#stablehlo<comparison_direction {direction}>}}> : ({scalar}, {scalar}) -> tensor<i1>\n"
      f'    "func.return"(%0) : (tensor<i1>) -> ()\n  }}')
  return name


def _approx_top_k_lowering(ctx, x, *, k, reduction_dimension, recall_target, is_max_k,
                           reduction_input_size_override, aggregate_to_topk):
  aval = ctx.avals_in[0]
  axis = reduction_dimension % aval.ndim
  comparator = _comparator(ctx, aval.dtype, is_max_k)
  iota_type = hlo.tensor_type(aval.shape, np.int32)
  iota = ctx.op1("stablehlo.iota", [], iota_type, f"iota_dimension = {axis} : i64")
  init_value = ctx.constant(np.array(-np.inf if is_max_k else np.inf, aval.dtype))
  init_index = ctx.constant(np.array(-1, np.int32))
  operands = [x, iota, init_value, init_index]
  out_types = [hlo.aval_type(a) for a in ctx.avals_out]
  config = (f"aggregate_to_topk = {'true' if aggregate_to_topk else 'false'}, "
            f"is_fallback = true, recall_target = {float(recall_target)!r} : f32, "
            f"reduction_dim = {axis} : i64, "
            f"reduction_input_size_override = {int(reduction_input_size_override)} : i64, "
            f"top_k = {int(k)} : i64")
  res = ctx.fresh()
  ctx.lines.append(
      f'{ctx.indent}{res}:2 = "stablehlo.custom_call"({", ".join(v.name for v in operands)}) '
      f'<{{api_version = 1 : i32, backend_config = "", call_target_name = "ApproxTopK", '
      f"called_computations = [@{comparator}], has_side_effect = false}}> "
      f"{{mhlo.backend_config = {{{config}}}}} : ({', '.join(v.type for v in operands)}) -> "
      f"({', '.join(out_types)})")
  return [Value(f"{res}#{i}", t) for i, t in enumerate(out_types)]


approx_top_k_p = standard_primitive("approx_top_k", _approx_top_k_abstract_eval,
                                    _approx_top_k_lowering, multiple_results=True)
approx_top_k_p.def_jvp(_approx_top_k_jvp)
approx_top_k_p.def_batch(_approx_top_k_batch)
