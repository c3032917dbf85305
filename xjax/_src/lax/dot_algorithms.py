"""Dot algorithms (`DotAlgorithm`, `DotAlgorithmPreset`) and result accuracies of unary ops.

A dot algorithm names the storage types of a matmul's operands, its
accumulation type and how many bf16 passes emulate a wider product; passed
as `precision=` it becomes the `algorithm` attribute of
`stablehlo.dot_general`. `AccuracyMode` and `Tolerance` are the values of
the `accuracy=` argument of transcendental unary ops.
"""
from __future__ import annotations

import enum
from typing import NamedTuple

import ml_dtypes
import numpy as np

from xjax._src import stablehlo as hlo


class DotAlgorithm(NamedTuple):
  """An explicit dot algorithm: operand storage types, accumulation type and pass counts.

  Mirrors `jax.lax.DotAlgorithm`.
  """
  lhs_precision_type: object
  rhs_precision_type: object
  accumulation_type: object
  lhs_component_count: int = 1
  rhs_component_count: int = 1
  num_primitive_operations: int = 1
  allow_imprecise_accumulation: bool = False


_F8 = None  # "any f8": the operands' own float8 types


class DotAlgorithmPreset(enum.Enum):
  """The named dot algorithms (`lhs_rhs_accumulation[_xN]`) accepted as a dot's precision.

  Mirrors `jax.lax.DotAlgorithmPreset`.
  """
  DEFAULT = enum.auto()
  ANY_F8_ANY_F8_F32 = enum.auto()
  ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
  ANY_F8_ANY_F8_ANY = enum.auto()
  ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
  F16_F16_F16 = enum.auto()
  F16_F16_F32 = enum.auto()
  BF16_BF16_BF16 = enum.auto()
  BF16_BF16_F32 = enum.auto()
  BF16_BF16_F32_X3 = enum.auto()
  BF16_BF16_F32_X6 = enum.auto()
  BF16_BF16_F32_X9 = enum.auto()
  TF32_TF32_F32 = enum.auto()
  TF32_TF32_F32_X3 = enum.auto()
  F32_F32_F32 = enum.auto()
  F64_F64_F64 = enum.auto()

  def __repr__(self):
    return f"{type(self).__name__}.{self.name}"

  def __str__(self):
    return self.name

  @property
  def supported_lhs_types(self):
    """The operand types this algorithm takes without a conversion (None: any)."""
    return _SUPPORTED.get(self.name)

  @property
  def supported_rhs_types(self):
    return _SUPPORTED.get(self.name)

  @property
  def supported_output_types(self):
    return _SUPPORTED.get(self.name)

  @property
  def accumulation_type(self):
    """The dtype the products are summed in (None: the operands')."""
    return _ACCUMULATION.get(self.name)


_SUPPORTED = {
    "F16_F16_F16": (np.float16,), "F16_F16_F32": (np.float16,),
    "BF16_BF16_BF16": (ml_dtypes.bfloat16, np.float32),
    "BF16_BF16_F32": (ml_dtypes.bfloat16, np.float32),
    **dict.fromkeys(("BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
                     "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32"), (np.float32,)),
    "F64_F64_F64": (np.float64,),
}
_ACCUMULATION = {
    "ANY_F8_ANY_F8_F32": np.float32, "ANY_F8_ANY_F8_F32_FAST_ACCUM": np.float32,
    "F16_F16_F16": np.float16, "F16_F16_F32": np.float32,
    "BF16_BF16_BF16": ml_dtypes.bfloat16,
    **dict.fromkeys(("BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6",
                     "BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3",
                     "F32_F32_F32"), np.float32),
    "F64_F64_F64": np.float64,
}
# The presets XLA's CPU backend compiles (others raise JAX's ValueError when lowered).
CPU_PRESETS = frozenset({"DEFAULT", "F16_F16_F16", "BF16_BF16_F32", "BF16_BF16_F32_X3",
                         "BF16_BF16_F32_X6", "F32_F32_F32", "F64_F64_F64"})

# (storage type name, accumulation type name, passes) of each explicit preset's attribute.
_PRESET_ALGORITHM = {
    "F16_F16_F16": ("f16", "f16", 1), "F16_F16_F32": ("f16", "f32", 1),
    "BF16_BF16_BF16": ("bf16", "bf16", 1), "BF16_BF16_F32": ("bf16", "f32", 1),
    "BF16_BF16_F32_X3": ("bf16", "f32", 3), "BF16_BF16_F32_X6": ("bf16", "f32", 6),
    "BF16_BF16_F32_X9": ("bf16", "f32", 9), "TF32_TF32_F32": ("tf32", "f32", 1),
    "TF32_TF32_F32_X3": ("tf32", "f32", 3), "F32_F32_F32": ("f32", "f32", 1),
    "F64_F64_F64": ("f64", "f64", 1),
}


def algorithm_attr(precision) -> str | None:
  """The `#stablehlo.dot_algorithm<...>` text for a preset or DotAlgorithm (None: no attribute)."""
  if isinstance(precision, DotAlgorithmPreset):
    if precision.name not in _PRESET_ALGORITHM:
      return None
    lhs, acc, passes = _PRESET_ALGORITHM[precision.name]
    fields = (lhs, lhs, acc, 1, 1, passes, False)
  else:
    name = lambda t: "tf32" if t == "tf32" else hlo.element_type(np.dtype(t))
    fields = (name(precision.lhs_precision_type), name(precision.rhs_precision_type),
              name(precision.accumulation_type), precision.lhs_component_count,
              precision.rhs_component_count, precision.num_primitive_operations,
              precision.allow_imprecise_accumulation)
  keys = ("lhs_precision_type", "rhs_precision_type", "accumulation_type",
          "lhs_component_count", "rhs_component_count", "num_primitive_operations",
          "allow_imprecise_accumulation")
  text = ", ".join(f"{k} = {str(v).lower() if isinstance(v, bool) else v}"
                   for k, v in zip(keys, fields))
  return f"#stablehlo.dot_algorithm<{text}>"


class AccuracyMode(enum.Enum):
  """How accurate a transcendental op's result must be. Mirrors `jax.lax.AccuracyMode`."""
  HIGHEST = 1
  DEFAULT = 2


class Tolerance:
  """A requested result accuracy: absolute, relative and ULP tolerances.

  Raises:
    ValueError: a negative tolerance.

  Mirrors `jax.lax.Tolerance`.
  """

  def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0):
    if atol < 0.0 or rtol < 0.0 or ulps < 0:
      raise ValueError("Tolerances must be non-negative.")
    if atol == 0.0 and rtol == 0.0 and ulps == 0:
      raise ValueError("At least one of atol, rtol, or ulps must be set.")
    self.atol, self.rtol, self.ulps = atol, rtol, ulps
