"""dot_general: contractions with batch dimensions (and `lax.dot` on top)."""
from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Union

import numpy as np

from xjax._src import backend
from xjax._src import core
from xjax._src import dtypes
from xjax._src import stablehlo as hlo
from xjax._src.config import config
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.lax import dot_algorithms
from xjax._src.lax.dot_algorithms import DotAlgorithm, DotAlgorithmPreset
from xjax._src.lax.elementwise import _coerce_scalars, convert_element_type
from xjax._src.lax.structural import transpose
from xjax._src.lax.utils import standard_primitive
from xjax._src.sharding import rules


class Precision(enum.Enum):
  """Matmul precision for float32 operands (mirrors `jax.lax.Precision`).

  Also named by strings: 'default'/'bfloat16'/'fastest', 'high'/'bfloat16_3x'/
  'tensorfloat32', 'highest'/'float32'.
  """
  DEFAULT = 0
  HIGH = 1
  HIGHEST = 2

  @classmethod
  def _missing_(cls, value):
    if isinstance(value, str):
      return _PRECISION_NAMES.get(value.lower())
    return None

  def __repr__(self):
    return f"Precision.{self.name}"

  __str__ = __repr__


_PRECISION_NAMES = {
    "default": Precision.DEFAULT, "bfloat16": Precision.DEFAULT, "fastest": Precision.DEFAULT,
    "high": Precision.HIGH, "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH,
    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST,
}


def canonicalize_precision(precision):
  """`precision` as None or a pair of `Precision`s; None takes `jax_default_matmul_precision`.

  Raises:
    ValueError: an unknown name, or not one value or a pair.
    NotImplementedError: a dot-algorithm preset (e.g. 'BF16_BF16_F32').
  """
  if precision is None:
    default = config.jax_default_matmul_precision
    if default is None:
      return None
    precision = default
  if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
    return precision
  if isinstance(precision, str) and precision in DotAlgorithmPreset.__members__:
    return DotAlgorithmPreset[precision]
  if isinstance(precision, (str, Precision)):
    one = _to_precision(precision)
    return (one, one)
  if isinstance(precision, (tuple, list)) and len(precision) == 2:
    return (_to_precision(precision[0]), _to_precision(precision[1]))
  raise ValueError("Precision argument must be one of:\n- None,\n- a Precision enum value,\n"
                   "- a string naming one,\n- a tuple or list of two of these,\n"
                   "- a lax.DotAlgorithmPreset or the name of one of these presets, or\n"
                   f"- a lax.DotAlgorithm value;\nbut got {precision!r}.")


def _to_precision(value) -> Precision:
  if isinstance(value, Precision):
    return value
  if isinstance(value, str) and value.lower() in _PRECISION_NAMES:
    return _PRECISION_NAMES[value.lower()]
  raise ValueError(f"Unknown matmul precision {value!r}: use a lax.Precision, one of "
                   f"{sorted(_PRECISION_NAMES)}, or a lax.DotAlgorithmPreset name.")


def _canonical_dimension_numbers(dimension_numbers):
  (lc, rc), (lb, rb) = dimension_numbers
  as_tuple = lambda xs: tuple(int(i) for i in xs)
  return ((as_tuple(lc), as_tuple(rc)), (as_tuple(lb), as_tuple(rb)))


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                out_sharding=None):
  """General contraction of `lhs` and `rhs`.

  Args:
    lhs, rhs: arrays; of different dtypes, the wider one is the result's.
    dimension_numbers: ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``,
      sequences of dimension indices.
    precision: None, a `Precision` (or its name), or a pair of them for
      (lhs, rhs); None takes `jax_default_matmul_precision` when it is set.
    preferred_element_type: the dtype of the result (default: the inputs' dtype).
    out_sharding: None, or a NamedSharding (or a PartitionSpec over the context
      mesh) the result is typed and laid out as; it settles contractions split
      on both sides.

  Returns:
    An array of shape batch dims + lhs free dims + rhs free dims.

  Raises:
    TypeError: contracting or batch dimensions have different sizes, the
      dtypes differ but neither is wider (int32 with uint32, float16 with
      bfloat16), or `out_sharding` is not a sharding.
    ValueError: an unknown precision, or a PartitionSpec outside a mesh.
    ShardingTypeError: operand shardings that give no result sharding (and no
      `out_sharding`).

  Mirrors `jax.lax.dot_general`.
  """
  lhs, rhs = _coerce_scalars(lhs, rhs)
  if preferred_element_type is not None:
    preferred_element_type = dtypes.canonicalize_dtype(preferred_element_type)
  out_sharding = rules.canonicalize_out_sharding(out_sharding, "dot_general")
  return rules.bind_with_out_sharding(
      dot_general_p, (lhs, rhs),
      dict(dimension_numbers=_canonical_dimension_numbers(dimension_numbers),
           precision=canonicalize_precision(precision),
           preferred_element_type=preferred_element_type, out_sharding=out_sharding))


def _check_dims(name, dims, ndim, side):
  for d in dims:
    if not 0 <= d < ndim:
      raise TypeError(f"dot_general requires {name} dimensions numbers to be in range "
                      f"[0, {ndim}) for {side}, got {dims}.")
  if len(set(dims)) != len(dims):
    raise TypeError(f"dot_general requires {name} dimensions to be unique, got {dims}.")


def _dot_general_abstract_eval(lhs, rhs, *, dimension_numbers, precision,
                               preferred_element_type, out_sharding):
  (lc, rc), (lb, rb) = dimension_numbers
  _check_dims("contracting", lc, lhs.ndim, "lhs")
  _check_dims("contracting", rc, rhs.ndim, "rhs")
  _check_dims("batch", lb, lhs.ndim, "lhs")
  _check_dims("batch", rb, rhs.ndim, "rhs")
  if len(lb) != len(rb):
    raise TypeError("dot_general requires equal numbers of lhs_batch and rhs_batch "
                    f"dimensions, got lhs_batch {lb} and rhs_batch {rb}.")
  lb_shape = tuple(lhs.shape[i] for i in lb)
  rb_shape = tuple(rhs.shape[i] for i in rb)
  if lb_shape != rb_shape:
    raise TypeError("dot_general requires lhs batch dimensions and rhs batch dimensions to "
                    f"have the same shape, got {lb_shape} and {rb_shape}.")
  lc_shape = tuple(lhs.shape[i] for i in lc)
  rc_shape = tuple(rhs.shape[i] for i in rc)
  if lc_shape != rc_shape:
    raise TypeError("dot_general requires contracting dimensions to have the same shape, "
                    f"got {lc_shape} and {rc_shape}.")
  lhs_free = [d for i, d in enumerate(lhs.shape) if i not in lc and i not in lb]
  rhs_free = [d for i, d in enumerate(rhs.shape) if i not in rc and i not in rb]
  dtype = _dot_general_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
  weak = lhs.weak_type and rhs.weak_type
  out = core.ShapedArray((*lb_shape, *lhs_free, *rhs_free), dtype, weak)
  if out_sharding is not None:
    out = rules.typed(out, out_sharding)
  return out


def _dtype_rank(dtype):
  """XLA's "higher precision" order of operand types (primitive_util's HigherPrecisionType)."""
  real = np.finfo(dtype).dtype if dtypes.issubdtype(dtype, np.complexfloating) else dtype
  is_float = dtypes.issubdtype(real, np.floating)
  bits = 1 if real == np.bool_ else np.dtype(real).itemsize * 8
  return (dtypes.issubdtype(dtype, np.complexfloating),
          dtypes.finfo(real).maxexp if is_float else -1,
          dtypes.finfo(real).nmant if is_float else -1,
          bits, not dtypes.issubdtype(real, np.unsignedinteger))


def _dot_general_dtype(lhs_dtype, rhs_dtype, preferred_element_type):
  """The result dtype: the higher-precision operand type, or the preferred type."""
  lhs_rank, rhs_rank = _dtype_rank(lhs_dtype), _dtype_rank(rhs_dtype)
  if lhs_rank == rhs_rank and lhs_dtype != rhs_dtype:
    raise TypeError(f"lax.dot_general argument type error: {lhs_dtype}, {rhs_dtype}")
  dtype = lhs_dtype if lhs_rank >= rhs_rank else rhs_dtype
  if preferred_element_type is None or preferred_element_type == dtype:
    return dtype
  bits = lambda d: 1 if d == np.bool_ else np.dtype(d).itemsize * 8
  if not dtypes.issubdtype(dtype, np.floating) and bits(preferred_element_type) < bits(dtype):
    raise TypeError("`preferred_element_type` must not be narrower than the original type, got "
                    f"preferred_element_type of {preferred_element_type} for result type of "
                    f"{dtype}.")
  return preferred_element_type


def _ndim(x):
  return x.aval.ndim if ad.is_undefined_primal(x) else core.get_aval(x).ndim


def _dot_general_transpose_lhs(ct, x, y, *, dimension_numbers, precision,
                               preferred_element_type, out_sharding, swap_ans=False):
  """The cotangent of lhs `x`: ct contracted with y over y's free and batch dims.

  ct's dims are (batch, x free, y free), or (batch, y free, x free) when
  `swap_ans` (this rule serving as the rhs transpose). Contracting ct with y
  leaves (batch, x free, y's contracting dims in y's order); a transpose puts
  those back where x had them.
  """
  (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
  x_free = [i for i in range(_ndim(x)) if i not in x_contract and i not in x_batch]
  y_free = [i for i in range(_ndim(y)) if i not in y_contract and i not in y_batch]
  n_batch = len(x_batch)
  first_y = n_batch if swap_ans else n_batch + len(x_free)
  ct_y_free = tuple(range(first_y, first_y + len(y_free)))
  dims = ((ct_y_free, tuple(y_free)), (tuple(range(n_batch)), tuple(y_batch)))
  # y's contracting dims come out in increasing order; each matches one x dim.
  x_contract_by_y = [x_contract[k] for k in np.argsort(y_contract, kind="stable")]
  produced = [*x_batch, *x_free, *x_contract_by_y]
  # On Explicit mesh axes the cotangent is typed as x (JAX's rule), in the product's order.
  xs = x.aval.sharding
  produced_sharding = None if xs is None else rules.NamedSharding(
      xs.mesh, rules.PartitionSpec(*(tuple(xs.spec)[d] for d in produced)))
  out = dot_general_p.bind(ct, y, dimension_numbers=dims, precision=precision,
                           preferred_element_type=preferred_element_type,
                           out_sharding=produced_sharding)
  x_ct = transpose(out, tuple(int(i) for i in np.argsort(produced, kind="stable")))
  if core.get_aval(x_ct).dtype != x.aval.dtype:
    x_ct = convert_element_type(x_ct, x.aval.dtype, weak_type=x.aval.weak_type)
  return x_ct


def _dot_general_transpose_rhs(ct, x, y, *, dimension_numbers, precision,
                               preferred_element_type, out_sharding):
  (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
  swapped = ((y_contract, x_contract), (y_batch, x_batch))
  return _dot_general_transpose_lhs(ct, y, x, dimension_numbers=swapped, precision=precision,
                                    preferred_element_type=preferred_element_type,
                                    out_sharding=out_sharding, swap_ans=True)


def _dot_general_pp(params):
  (lc, rc), (lb, rb) = params["dimension_numbers"]
  shown = {k: v for k, v in params.items() if v is not None and k != "out_sharding"}
  shown["dimension_numbers"] = ((list(lc), list(rc)), (list(lb), list(rb)))
  return shown


def _dot_general_lowering(ctx, lhs, rhs, *, dimension_numbers, precision,
                          preferred_element_type, out_sharding):
  (lc, rc), (lb, rb) = dimension_numbers
  lhs_aval, rhs_aval = ctx.avals_in
  out = ctx.avals_out[0]
  if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
    return _dot_algorithm_lowering(ctx, lhs, rhs, dimension_numbers, precision)
  # As JAX lowers it: operands of one dtype go to XLA as they are (XLA computes a
  # narrower or wider preferred result itself); mixed operands are converted to the
  # result type first. Booleans (no XLA dot) are converted too.
  mixed = lhs_aval.dtype != rhs_aval.dtype or (lhs_aval.dtype == np.bool_ != out.dtype)
  if mixed and lhs_aval.dtype != out.dtype:
    lhs = ctx.op1("stablehlo.convert", [lhs], hlo.tensor_type(lhs_aval.shape, out.dtype))
  if mixed and rhs_aval.dtype != out.dtype:
    rhs = ctx.op1("stablehlo.convert", [rhs], hlo.tensor_type(rhs_aval.shape, out.dtype))
  fmt = lambda xs: "[" + ", ".join(map(str, xs)) + "]"
  attrs = ("dot_dimension_numbers = #stablehlo.dot<"
           f"lhs_batching_dimensions = {fmt(lb)}, rhs_batching_dimensions = {fmt(rb)}, "
           f"lhs_contracting_dimensions = {fmt(lc)}, rhs_contracting_dimensions = {fmt(rc)}>")
  if precision is not None:
    attrs += (", precision_config = [" +
              ", ".join(f"#stablehlo<precision {p.name}>" for p in precision) + "]")
  if out.dtype == np.bool_:
    # XLA has no boolean dot: compute in int32 and compare with zero.
    i32 = lambda a: hlo.tensor_type(a.shape, np.int32)
    lhs = ctx.op1("stablehlo.convert", [lhs], i32(lhs_aval))
    rhs = ctx.op1("stablehlo.convert", [rhs], i32(rhs_aval))
    acc = ctx.op1("stablehlo.dot_general", [lhs, rhs], i32(out), attrs)
    zero = ctx.broadcast_to(ctx.constant(np.int32(0)), core.ShapedArray((), np.int32),
                            out.update(dtype=np.int32))
    return ctx.op1("stablehlo.compare", [acc, zero], hlo.aval_type(out),
                   "comparison_direction = #stablehlo<comparison_direction NE>, "
                   "compare_type = #stablehlo<comparison_type SIGNED>")
  return ctx.op1("stablehlo.dot_general", [lhs, rhs], hlo.aval_type(out), attrs)


def _dot_algorithm_lowering(ctx, lhs, rhs, dimension_numbers, algorithm):
  """A dot with an `algorithm` attribute: operands converted to its storage types.

  The dot computes in the algorithm's accumulation type; the result is
  converted back to the output type, as JAX lowers it. Non-float operands
  ignore the algorithm.
  """
  (lc, rc), (lb, rb) = dimension_numbers
  lhs_aval, rhs_aval = ctx.avals_in
  out = ctx.avals_out[0]
  if not all(dtypes.issubdtype(a.dtype, np.floating) for a in (lhs_aval, rhs_aval)):
    return _dot_general_lowering(ctx, lhs, rhs, dimension_numbers=dimension_numbers,
                                 precision=None, preferred_element_type=out.dtype,
                                 out_sharding=None)
  if isinstance(algorithm, DotAlgorithmPreset):
    if backend.platform() == "cpu" and algorithm.name not in dot_algorithms.CPU_PRESETS:
      raise ValueError(f"The precision '{algorithm}' is not supported by dot_general on CPU")
    supported = algorithm.supported_lhs_types
    acc = algorithm.accumulation_type
  else:
    supported = (algorithm.lhs_precision_type,)
    acc = algorithm.accumulation_type
  def storage(aval):
    if supported is None or any(aval.dtype == np.dtype(t) for t in supported):
      return aval.dtype
    return np.dtype(supported[0])
  def convert(x, aval, dtype):
    if aval.dtype == dtype:
      return x
    return ctx.op1("stablehlo.convert", [x], hlo.tensor_type(aval.shape, dtype))
  lhs_t, rhs_t = storage(lhs_aval), storage(rhs_aval)
  lhs, rhs = convert(lhs, lhs_aval, lhs_t), convert(rhs, rhs_aval, rhs_t)
  acc_t = out.dtype if acc is None else np.dtype(acc)
  fmt = lambda xs: "[" + ", ".join(map(str, xs)) + "]"
  attrs = ("dot_dimension_numbers = #stablehlo.dot<"
           f"lhs_batching_dimensions = {fmt(lb)}, rhs_batching_dimensions = {fmt(rb)}, "
           f"lhs_contracting_dimensions = {fmt(lc)}, rhs_contracting_dimensions = {fmt(rc)}>, "
           "precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]")
  algo = dot_algorithms.algorithm_attr(algorithm)
  if algo is not None:
    attrs += f", algorithm = {algo}"
  result = ctx.op1("stablehlo.dot_general", [lhs, rhs], hlo.tensor_type(out.shape, acc_t), attrs)
  return convert(result, out.update(dtype=acc_t), out.dtype)


dot_general_p = standard_primitive("dot_general", _dot_general_abstract_eval,
                                   _dot_general_lowering, pp_params=_dot_general_pp)
# Bilinear: d (x . y) = x_dot . y + x . y_dot.
ad.defbilinear(dot_general_p, _dot_general_transpose_lhs, _dot_general_transpose_rhs)


def _dot_general_batch(axis_data, args, dims, *, dimension_numbers, precision,
                       preferred_element_type, out_sharding):
  """JAX's rule: no data moves, only the dimension numbers change.

  With both operands batched, the two batch axes become a new first batch
  dimension; with one, its batch axis becomes one more free dimension.
  """
  (lhs, rhs), (lbd, rbd) = args, dims
  (lc, rc), (lb, rb) = dimension_numbers
  bump = lambda ds, b: tuple(d + (d >= b) for d in ds)  # per-member dims -> batched dims
  if lbd is not batching.not_mapped and rbd is not batching.not_mapped:
    dimension_numbers = ((bump(lc, lbd), bump(rc, rbd)),
                         ((lbd, *bump(lb, lbd)), (rbd, *bump(rb, rbd))))
    out_dim = 0
  elif lbd is not batching.not_mapped:
    # Output dims: batch, lhs free (the batch axis among them, in place), rhs free.
    lhs_free = [d for d in range(np.ndim(lhs) - 1) if d not in lc and d not in lb]
    out_dim = len(lb) + sum(d < lbd for d in lhs_free)
    dimension_numbers = ((bump(lc, lbd), rc), (bump(lb, lbd), rb))
  else:
    rhs_free = [d for d in range(np.ndim(rhs) - 1) if d not in rc and d not in rb]
    out_dim = np.ndim(lhs) - len(lc) + sum(d < rbd for d in rhs_free)
    dimension_numbers = ((lc, bump(rc, rbd)), (lb, bump(rb, rbd)))
  if out_sharding is not None:  # the batch axis is not split
    (lc2, _), (lb2, _) = dimension_numbers
    n_out = np.ndim(lhs) + np.ndim(rhs) - 2 * len(lc2) - len(lb2)
    spec = list(out_sharding.spec._normalized_spec_for_aval(n_out - 1))
    spec.insert(out_dim, None)
    out_sharding = out_sharding.with_spec(type(out_sharding.spec)(*spec))
  out = dot_general_p.bind(lhs, rhs, dimension_numbers=dimension_numbers, precision=precision,
                           preferred_element_type=preferred_element_type,
                           out_sharding=out_sharding)
  return out, out_dim


dot_general_p.def_batch(_dot_general_batch)


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None,
        out_sharding=None):
  """A dot product: `dot_general` with `dimension_numbers`, which may be left out for the
  plain vector/matrix products (lhs's last dimension contracted with rhs's first).

  Args:
    lhs, rhs: arrays.
    dimension_numbers: ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``;
      None for operands of rank 1 or 2 whose inner sizes match.
    precision, preferred_element_type, out_sharding: as for `dot_general` (keyword-only).

  Returns:
    The product: batch dimensions, then lhs's free dimensions, then rhs's.

  Raises:
    ValueError: `dimension_numbers` is None and the operands are not vectors or matrices
      with matching inner sizes.
    TypeError: as `dot_general`.

  Mirrors `jax.lax.dot`.
  """
  lhs_shape, rhs_shape = core.get_aval(lhs).shape, core.get_aval(rhs).shape
  if dimension_numbers is None:
    if not (1 <= len(lhs_shape) <= 2 and 1 <= len(rhs_shape) <= 2
            and lhs_shape[-1] == rhs_shape[0]):
      raise ValueError(
          "jax.lax.dot: dimension_numbers must be specified when not performing simple "
          "un-batched matrix-matrix, matrix-vector, or vector-vector products; got "
          f"lhs_shape={lhs_shape} rhs_shape={rhs_shape}")
    dimension_numbers = (((len(lhs_shape) - 1,), (0,)), ((), ()))
  return dot_general(lhs, rhs, dimension_numbers, precision=precision,
                     preferred_element_type=preferred_element_type, out_sharding=out_sharding)


# The types JAX names for dot_general's arguments (for annotations).
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]
PrecisionLike = Union[None, str, Precision, tuple[str, str], tuple[Precision, Precision],
                      DotAlgorithm, DotAlgorithmPreset]


def batch_matmul(lhs, rhs, precision=None):
  """Matrix products over matching leading batch axes: ``(..., n, k) @ (..., k, m)``.

  Raises:
    ValueError: an operand has fewer than 2 axes, or they differ in rank.
    TypeError: batch or contracted sizes differ (dot_general's errors).

  Mirrors `jax.lax.batch_matmul`.
  """
  lhs_ndim, rhs_ndim = np.ndim(lhs), np.ndim(rhs)
  if min(lhs_ndim, rhs_ndim) < 2:
    raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {lhs_ndim}, "
                     f"{rhs_ndim}")
  if lhs_ndim != rhs_ndim:
    raise ValueError(f"Arguments to batch_matmul must have same ndim, got {lhs_ndim}, "
                     f"{rhs_ndim}")
  batch = tuple(range(lhs_ndim - 2))
  return dot_general(lhs, rhs, (((lhs_ndim - 1,), (rhs_ndim - 2,)), (batch, batch)),
                     precision=precision)
