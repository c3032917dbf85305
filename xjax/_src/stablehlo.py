"""StableHLO syntax: type strings, attribute literals. No semantics live here.

Operations are written in MLIR's generic form,
``%r = "stablehlo.add"(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>``,
which one emitter (`lowering.LoweringContext.op`) covers for every op.
"""
from __future__ import annotations

import numpy as np

_ELEMENT_TYPES = {
    "bool": "i1", "int2": "i2", "int4": "i4", "int8": "i8", "int16": "i16", "int32": "i32",
    "int64": "i64", "uint2": "ui2", "uint4": "ui4", "uint8": "ui8", "uint16": "ui16",
    "uint32": "ui32", "uint64": "ui64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "complex64": "complex<f32>", "complex128": "complex<f64>",
    "float8_e4m3fn": "f8E4M3FN", "float8_e5m2": "f8E5M2", "float8_e4m3fnuz": "f8E4M3FNUZ",
    "float8_e5m2fnuz": "f8E5M2FNUZ", "float8_e4m3b11fnuz": "f8E4M3B11FNUZ",
    "float8_e3m4": "f8E3M4", "float8_e4m3": "f8E4M3", "float8_e8m0fnu": "f8E8M0FNU",
    "float4_e2m1fn": "f4E2M1FN",
}

# Dtypes xjax can hold and transfer but not compute in: StableHLO spells the
# 1-bit integers i1 and ui1, but i1 is XLA's bool (PRED) and ui1 is no valid
# tensor element type; XLA's CPU backend rejects (or aborts on) the 6-bit floats.
_NOT_COMPILABLE = {
    "int1": "StableHLO's 1-bit integer is XLA's bool (PRED), so int1 values would be "
            "mistaken for booleans",
    "uint1": "StableHLO has no unsigned 1-bit integer tensor type",
    "float6_e2m3fn": "XLA's CPU backend does not support it (invalid XLA PrimitiveType F6E2M3FN)",
    "float6_e3m2fn": "XLA's CPU backend does not support it (invalid XLA PrimitiveType F6E3M2FN)",
}


def element_type(dtype) -> str:
  """The MLIR element type of a NumPy dtype: float32 -> 'f32', bool -> 'i1'."""
  name = np.dtype(dtype).name
  if name not in _ELEMENT_TYPES:
    if name in _NOT_COMPILABLE:
      raise NotImplementedError(
          f"Computations on dtype {name} cannot be compiled: {_NOT_COMPILABLE[name]}. "
          f"Arrays of {name} can be created with device_put and converted back to NumPy; "
          "to compute, convert them with astype on the NumPy side first.")
    if name.startswith("[('float0'") or name == "void" or name.startswith("|V"):
      return "i1"  # float0 values are lowered as booleans, as in JAX
    raise TypeError(f"internal: no StableHLO element type for dtype {name}")
  return _ELEMENT_TYPES[name]


def tensor_type(shape, dtype) -> str:
  """'tensor<3x4xf32>' for shape (3, 4) and float32; 'tensor<f32>' for a scalar.

  An extended dtype (``key<fry>``) is its physical data: ``key<fry>[3]`` is
  'tensor<3x2xui32>'.
  """
  physical_shape = getattr(dtype, "physical_element_shape", None)
  if physical_shape is not None:
    shape, dtype = (*shape, *physical_shape), dtype.physical_element_dtype
  if not all(0 <= d < 2 ** 63 for d in shape):
    # User sizes are checked by the shape rules (core.check_shapelike); this
    # keeps a missed check from reaching XLA as a module it cannot parse.
    raise TypeError(f"internal: tensor dimensions out of range in shape {tuple(shape)}")
  dims = "".join(f"{d}x" for d in shape)
  return f"tensor<{dims}{element_type(dtype)}>"


TOKEN_TYPE = "!stablehlo.token"


def aval_type(aval) -> str:
  """The MLIR type of an aval: a tensor type, or the token type for a token."""
  if getattr(aval, "array_abstraction_level", 1) == 0:  # core.AbstractToken
    return TOKEN_TYPE
  return tensor_type(aval.shape, aval.dtype)


def i64_array(values) -> str:
  """'array<i64: 1, 2>' (a DenseI64ArrayAttr)."""
  values = [int(v) for v in values]
  return "array<i64>" if not values else f"array<i64: {', '.join(map(str, values))}>"


def bool_array(values) -> str:
  values = ["true" if v else "false" for v in values]
  return "array<i1>" if not values else f"array<i1: {', '.join(values)}>"


def dense_i64(values, shape=None) -> str:
  """A dense i64 tensor attribute (used by older-style attributes such as padding)."""
  arr = np.asarray(values, np.int64)
  shape = arr.shape if shape is None else shape
  return f"dense<{_nested(arr.tolist())}> : {tensor_type(shape, np.int64)}"


def _nested(v) -> str:
  if isinstance(v, list):
    return "[" + ", ".join(_nested(x) for x in v) + "]"
  if isinstance(v, bool):
    return "true" if v else "false"
  return str(v)


def dense_elements(value: np.ndarray) -> str:
  """The ``dense<...>`` literal holding `value` (any shape and dtype)."""
  value = np.asarray(value)
  if value.dtype == np.bool_:
    if value.size and (value.all() or not value.any()):
      return f"dense<{'true' if value.flat[0] else 'false'}>"
    return f"dense<{_nested(value.tolist())}>"
  if value.size == 0:
    return "dense<>" if value.ndim == 0 else f"dense<{_nested(value.tolist())}>"
  if value.ndim and (value == value.flat[0]).all() and not np.issubdtype(value.dtype, np.complexfloating):
    value = value.reshape(-1)[:1]  # a splat: one element stands for all
  data = np.ascontiguousarray(value).tobytes()
  return f'dense<"0x{data.hex().upper()}">'


def comparison_type(dtype) -> str:
  """The `compare_type` StableHLO needs for a comparison on `dtype`."""
  dtype = np.dtype(dtype)
  if dtype.kind == "u" or dtype == np.bool_ or dtype.name.startswith("uint"):
    return "UNSIGNED"
  if dtype.kind == "i" or dtype.name.startswith("int"):  # also ml_dtypes' int1/2/4
    return "SIGNED"
  return "FLOAT"
