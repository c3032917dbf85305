"""Constructors for the common shapes of primitive rules.

`naryop_abstract_eval` composes a shape rule (equal shapes, rank-0 operands
broadcast), a dtype rule (allowed kinds, equal dtypes) and the weak-type rule
(weak only when every operand is weak). `emit_elementwise` is the matching
lowering: it broadcasts rank-0 operands and emits one StableHLO op.
"""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import stablehlo as hlo

# Dtype kinds accepted by elementwise primitives, named as in JAX's lax.
_bool = frozenset({np.dtype(bool)})
_int = frozenset(dtypes._int_dtypes)
_uint = frozenset(dtypes._unsigned_dtypes)
_float = frozenset(dtypes._float_dtypes)
_complex = frozenset(dtypes._complex_dtypes)
_num = _int | _float | _complex
_any = _num | _bool
_int_or_bool = _int | _bool
_float_or_complex = _float | _complex
_signed_num = frozenset(dtypes._signed_dtypes) | _float | _complex
_float32_or_64 = frozenset({np.dtype(np.float32), np.dtype(np.float64)})

KINDS = {
    "bool": _bool, "int": _int, "uint": _uint, "float": _float, "complex": _complex,
    "num": _num, "any": _any, "int_or_bool": _int_or_bool, "inexact": _float_or_complex,
    "signed": _signed_num, "float_or_int": _float | _int, "ordered": _int | _float | _bool,
    "float32_or_64": _float32_or_64, "conj": _float32_or_64 | _complex,
}

# As JAX names them: the NumPy abstract scalar types' names, in JAX's order.
_KIND_WORDS = {
    "bool": "bool", "int": "integer", "uint": "unsignedinteger", "float": "floating",
    "complex": "complexfloating", "num": "integer, floating, complexfloating", "any": "any",
    "int_or_bool": "integer, bool", "inexact": "floating, complexfloating",
    "signed": "signedinteger, floating, complexfloating", "float_or_int": "integer, floating",
    "ordered": "integer, floating, bool", "float32_or_64": "float32, float64",
    "conj": "float32, float64, complexfloating",
}


def float0_message(name: str, position: int | None = None, n: int = 1) -> str:
  """JAX's message for an operation given a float0 array (the tangent type of integers)."""
  where = "a float0 array" if n == 1 or position is None else f"a float0 at position {position}"
  return (f"Called {name} with {where}. float0s do not support any operations by design, "
          "because they are not compatible with non-trivial vector spaces. No implicit dtype "
          "conversion is done. You can use np.zeros_like(arr, dtype=np.float) to cast a float0 "
          "array to a regular zeros array. \nIf you didn't expect to get a float0 you might "
          "have accidentally taken a gradient with respect to an integer argument.")


def check_dtype_kind(name: str, avals, kinds) -> None:
  """JAX's TypeError for an operand whose dtype is not of its kind (with its position
  when the operation takes several operands)."""
  for i, (kind, aval) in enumerate(zip(kinds, avals)):
    if aval.dtype not in KINDS[kind]:
      if aval.dtype == dtypes.float0:
        raise TypeError(float0_message(name, i, len(kinds)))
      if len(kinds) == 1:
        raise TypeError(f"{name} does not accept dtype {aval.dtype.name}. Accepted dtypes are "
                        f"subtypes of {_KIND_WORDS[kind]}.")
      raise TypeError(f"{name} does not accept dtype {aval.dtype.name} at position {i}. "
                      f"Accepted dtypes at position {i} are subtypes of {_KIND_WORDS[kind]}.")


def broadcasting_shape(name: str, *avals) -> tuple[int, ...]:
  """The common shape of elementwise operands.

  Rank-0 operands broadcast; the others must have one rank, and in each
  dimension sizes must agree or be 1 (as JAX's lax allows).
  """
  shapes = [a.shape for a in avals if a.shape != ()]
  if not shapes:
    return ()
  if len({len(s) for s in shapes}) != 1:
    raise TypeError(f"{name}: arrays must have same number of dimensions, got "
                    f"{', '.join(str(tuple(s)) for s in shapes)}.")
  result = []
  for ds in zip(*shapes):
    non_ones = {d for d in ds if d != 1}
    if len(non_ones) > 1:
      raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                      f"{', '.join(str(tuple(s)) for s in shapes)}.")
    result.append(non_ones.pop() if non_ones else 1)
  return tuple(result)


# The jnp function JAX's dtype-mismatch message suggests for a lax op ("Tip: ..."):
# the same name, or the NumPy name where it differs. Ops not listed get no tip.
_JNP_EQUIVALENTS = {
    **{n: n for n in ("add", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "cbrt",
                      "ceil", "concatenate", "cos", "cosh", "exp", "expm1", "floor", "log",
                      "log1p", "logical_and", "logical_not", "logical_or", "logical_xor",
                      "nextafter", "round", "sign", "sin", "sinh", "sqrt", "tan", "tanh")},
    "abs": "fabs", "acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh",
    "atan": "arctan", "atan2": "arctan2", "atanh": "arctanh", "div": "divide", "eq": "equal",
    "max": "maximum", "min": "minimum", "mul": "multiply", "ne": "not_equal", "neg": "negative",
    "pow": "float_power", "select": "where", "shift_left": "left_shift",
    "shift_right_logical": "right_shift", "shift_right_arithmetic": "right_shift",
    "sub": "subtract",
}


def same_dtypes(name: str, avals) -> np.dtype:
  dtype = avals[0].dtype
  for a in avals[1:]:
    if a.dtype != dtype:
      tip = (f" (Tip: jnp.{_JNP_EQUIVALENTS[name]} is a similar function that does automatic "
             "type promotion on inputs)." if name in _JNP_EQUIVALENTS else "")
      raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                      f"{', '.join(a.dtype.name for a in avals)}.{tip}")
  return dtype


def naryop_abstract_eval(name: str, kinds, result_dtype=None):
  """Abstract eval of an elementwise op taking operands of the given dtype kinds.

  `result_dtype(dtype)` maps the operand dtype to the result's (default: same).
  """
  # Output avals by input avals: the result depends on nothing else (tracing hits it for
  # nearly every equation). Only plain ShapedArrays are cached; the cache is bounded.
  cache = {}

  def abstract_eval(*avals, **params):
    out = cache.get(avals)
    if out is not None:
      return out
    out = _abstract_eval(*avals)
    if len(cache) < 1024 and all(type(a) is core.ShapedArray for a in avals):
      cache[avals] = out
    return out

  def _abstract_eval(*avals):
    if len(avals) != len(kinds):
      raise TypeError(f"{name} takes {len(kinds)} operands, got {len(avals)}")
    check_dtype_kind(name, avals, kinds)
    dtype = same_dtypes(name, avals) if len(avals) > 1 else avals[0].dtype
    shape = broadcasting_shape(name, *avals)
    out_dtype = dtype if result_dtype is None else result_dtype(dtype)
    weak = all(a.weak_type for a in avals)
    return core.ShapedArray(shape, out_dtype, weak)
  return abstract_eval


def emit_elementwise(op_name: str, attrs=None):
  """A lowering emitting one StableHLO op on operands broadcast to the output shape."""
  def lowering(ctx, *args, **params):
    out = ctx.avals_out[0]
    args = [ctx.broadcast_to(x, a, out) for x, a in zip(args, ctx.avals_in)]
    return ctx.op1(op_name, args, hlo.aval_type(out), attrs)
  return lowering


def standard_primitive(name: str, abstract_eval, lowering, multiple_results=False,
                       pp_params=None) -> core.Primitive:
  prim = core.Primitive(name, multiple_results)
  prim.def_abstract_eval(abstract_eval)
  prim.def_lowering(_refusing_extended_dtypes(name, lowering))
  if pp_params is not None:
    prim.def_pp_params(pp_params)
  return prim


def _refusing_extended_dtypes(name: str, lowering):
  """`lowering`, raising TypeError for operands of an extended dtype (typed PRNG keys).

  The primitives that take keys (reshape, slicing, select_n, eq, ...) have their lowerings
  replaced where keys are defined (`xjax._src.random.prng`); on any other, a key operand is
  refused here, before XLA would meet data of the wrong shape.
  """
  def lowering_rule(ctx, *args, **params):
    for i, aval in enumerate(ctx.avals_in):
      if isinstance(getattr(aval, "dtype", None), dtypes.ExtendedDType):
        raise TypeError(f"{name} does not accept dtype {aval.dtype} at position {i}.")
    return lowering(ctx, *args, **params)
  lowering_rule.__wrapped__ = lowering
  return lowering_rule


def drop_none_params(*names):
  """A print rule hiding the named params when they are None (e.g. ``accuracy``)."""
  def pp_params(params):
    return {k: v for k, v in params.items() if not (k in names and v is None)}
  return pp_params


def dtype(x):
  """The canonical dtype of a value or dtype-like `x` (float64 is float32 without x64).

  Raises:
    TypeError: `x` has no dtype JAX can use.

  Mirrors `jax.lax.dtype`.
  """
  try:
    return dtypes.dtype(x, canonicalize=True)
  except (TypeError, ValueError) as e:
    raise TypeError(f"Cannot determine dtype of {x}") from e


def int_dtype_for_dim(d: int, *, signed: bool) -> np.dtype:
  """The narrowest of int32/int64 (`signed`) or uint32/uint64 that holds the indices of a
  dimension of size `d` (xjax's sizes are all constants).

  Mirrors JAX's `jax._src.lax.utils.int_dtype_for_dim`."""
  return _index_dtype(int(d), signed)


def int_dtype_for_shape(shape, *, signed: bool) -> np.dtype:
  """`int_dtype_for_dim` of the largest dimension of `shape` (int32 or uint32 for a scalar).

  Mirrors JAX's `jax._src.lax.utils.int_dtype_for_shape`."""
  return _index_dtype(max((int(d) for d in shape), default=0), signed)


def _index_dtype(size: int, signed: bool) -> np.dtype:
  narrow, wide = (np.int32, np.int64) if signed else (np.uint32, np.uint64)
  return np.dtype(wide if size > np.iinfo(narrow).max else narrow)
