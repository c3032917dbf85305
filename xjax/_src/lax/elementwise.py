"""Elementwise primitives: arithmetic, comparison, logical, bitwise, select, convert.

The unary and binary primitives are uniform, so they are declared by one
table each (`_UNARY`, `_BINARY`): name, accepted dtype kinds, the StableHLO
(or CHLO) op, and whether the primitive carries JAX's `accuracy` param. The
primitives with rules of their own (integer_pow, round, sign,
convert_element_type, select_n, clamp, ...) are cards below the tables.

The transcendental functions (log, expm1, exp2, the trigonometric and
hyperbolic functions, roots, pow, the erf and gamma families) are in
`transcendental`, whose tables are built by this module's `_make_unary` and
`_make_binary`. exp and log1p stay here: `reductions` (which this module's
transpose rules call) builds its log-add-exp from them, and this keeps
`transcendental` out of the circle of `elementwise`, `reductions` and
`structural`.

The lax wrappers do no dtype promotion (that is `xjax.numpy`'s job): a Python
scalar operand becomes a weakly typed array of its own default dtype (int32,
float32, complex64 or bool without x64), and must then match the other
operands' dtype, as in JAX (`lax.add(f16_array, 1.0)` is a TypeError).
"""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import stablehlo as hlo
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.lax.utils import (broadcasting_shape, check_dtype_kind, drop_none_params,
                                 emit_elementwise, naryop_abstract_eval, same_dtypes,
                                 standard_primitive)

_PY_SCALARS = (int, float, complex, bool)


def _is_array_like(x) -> bool:
  return not isinstance(x, _PY_SCALARS)


def _coerce_scalars(*args):
  """Python scalars among `args` as weakly typed constants of their default dtypes."""
  return tuple(_weak_scalar(a, dtypes.canonicalize_dtype(dtypes.python_scalar_dtypes[type(a)]))
               if type(a) in dtypes.python_scalar_dtypes else a for a in args)


def _weak_scalar(x, dtype):
  """A Python scalar as a weakly typed constant of `dtype` (folded on the host)."""
  return convert_element_type(x, dtype, weak_type=True)


def _real_dtype(dtype):
  return np.finfo(dtype).dtype if dtypes.issubdtype(dtype, np.complexfloating) else dtype


def _to_bool(dtype):
  return np.dtype(bool)


# ----------------------------------------------------------------------------
# Constants and shape helpers for the derivative rules


def _dtype(x):
  return core.get_aval(x).dtype


def _const(x, value):
  """`value` as a constant of x's dtype (JAX's `_const`).

  Weakly typed when x is a weakly typed scalar whose dtype a Python scalar
  would take, so that derivatives of weakly typed scalars stay weak.
  """
  aval = core.get_aval(x)
  if aval.weak_type and not aval.shape:
    py_type = dtypes.scalar_type_of(aval.dtype)
    if dtypes.canonicalize_dtype(dtypes.python_scalar_dtypes[py_type]) == aval.dtype:
      return convert_element_type(py_type(value), aval.dtype, weak_type=True)
  return np.array(value, aval.dtype)


def _one(x):
  """A rank-0 one of x's dtype, weakly typed when x is (JAX's `_one`)."""
  aval = core.get_aval(x)
  return convert_element_type(1, aval.dtype, weak_type=aval.weak_type)


def _full_like(x, value):
  """`value` in x's shape and dtype, weakly typed when x is (JAX's `_zeros`, `_ones`)."""
  from xjax._src.lax.structural import full_like  # structural imports this module
  return full_like(x, value)


def _replace_zero(x):
  return select_n(eq(x, _const(x, 0)), x, _full_like(x, 1))


def _maybe_broadcast(shape, x):
  """`x` broadcast to `shape` (rank 0, or equal rank with size-1 dimensions)."""
  from xjax._src.lax.structural import broadcast_in_dim
  x_shape = core.get_aval(x).shape
  if x_shape == shape:
    return x
  return broadcast_in_dim(x, shape, tuple(range(len(x_shape))))


def _unbroadcast(aval, ct):
  """Sums `ct` (of a broadcast result's shape) down to the operand's `aval` shape."""
  from xjax._src.lax.reductions import reduce_sum
  from xjax._src.lax.structural import reshape
  ct_shape = core.get_aval(ct).shape
  if ct_shape == aval.shape:
    return ct
  if not aval.shape:
    return reduce_sum(ct, tuple(range(len(ct_shape))))
  dims = tuple(i for i, (a, b) in enumerate(zip(aval.shape, ct_shape)) if a != b)
  return reshape(reduce_sum(ct, dims), aval.shape)


def _ct_aval(x):
  """The aval a transpose rule's cotangent for operand `x` has."""
  return x.aval if ad.is_undefined_primal(x) else core.get_aval(x).to_tangent_aval()


# ----------------------------------------------------------------------------
# Unary math: (name, kinds, op, has_accuracy, result dtype rule)

_UNARY = [
    ("neg", "num", "stablehlo.negate", False, None),
    ("floor", "float", "stablehlo.floor", False, None),
    ("ceil", "float", "stablehlo.ceil", False, None),
    ("is_finite", "float", "stablehlo.is_finite", False, _to_bool),
    ("exp", "inexact", "stablehlo.exponential", True, None),
    ("log1p", "inexact", "stablehlo.log_plus_one", True, None),
    ("abs", "signed", "stablehlo.abs", False, _real_dtype),
    ("not", "int_or_bool", "stablehlo.not", False, None),
    ("population_count", "int", "stablehlo.popcnt", False, None),
    ("clz", "int", "stablehlo.count_leading_zeros", False, None),
    ("real", "complex", "stablehlo.real", False, _real_dtype),
    ("imag", "complex", "stablehlo.imag", False, _real_dtype),
    ("square", "num", None, False, None),
]

_UNARY_DOCS = {
    "neg": "the negation -x", "floor": "the floor", "ceil": "the ceiling",
    "is_finite": "whether each element is finite (not inf or NaN), as bool",
    "exp": "e**x", "log1p": "log(1 + x), accurate near 0",
    "abs": "the absolute value (the modulus, as a real dtype, for complex x)",
    "not": "the bitwise (or logical, for bool) NOT", "population_count": "the number of set bits",
    "clz": "the number of leading zero bits", "real": "the real part", "imag": "the imaginary part",
    "square": "x * x",
}


def _make_unary(name, kinds, op, has_accuracy, result_dtype, doc):
  abstract_eval = naryop_abstract_eval(name, (kinds,), result_dtype)
  lowering = emit_elementwise(op) if op else None
  pp = drop_none_params("accuracy") if has_accuracy else None
  prim = standard_primitive(name, abstract_eval, lowering, pp_params=pp)
  batching.defvectorized(prim)

  if has_accuracy:
    def wrapper(x, *, accuracy=None):
      return prim.bind(x, accuracy=accuracy)
  else:
    def wrapper(x):
      return prim.bind(x)
  public = "bitwise_not" if name == "not" else name
  wrapper.__name__ = wrapper.__qualname__ = public
  wrapper.__doc__ = (
      f"Elementwise {doc}.\n\n"
      f"  Args:\n    x: an array (or scalar) of a {kinds} dtype.\n"
      + ("    accuracy: an optional accuracy request, accepted for compatibility.\n"
         if has_accuracy else "")
      + "\n  Returns:\n    An array of x's shape.\n\n"
      "  Raises:\n    TypeError: x's dtype is not accepted.\n\n"
      f"  Mirrors `jax.lax.{public}`.\n  ")
  return prim, wrapper


_unary_prims = {}
for _row in _UNARY:
  _unary_prims[_row[0]] = _make_unary(*_row, _UNARY_DOCS[_row[0]])

neg_p, neg = _unary_prims["neg"]
floor_p, floor = _unary_prims["floor"]
ceil_p, ceil = _unary_prims["ceil"]
is_finite_p, is_finite = _unary_prims["is_finite"]
exp_p, exp = _unary_prims["exp"]
log1p_p, log1p = _unary_prims["log1p"]
abs_p, abs = _unary_prims["abs"]  # noqa: A001 - JAX's name
not_p, bitwise_not = _unary_prims["not"]
population_count_p, population_count = _unary_prims["population_count"]
clz_p, clz = _unary_prims["clz"]
real_p, real = _unary_prims["real"]
imag_p, imag = _unary_prims["imag"]
square_p, square = _unary_prims["square"]

# Derivatives of the table's primitives: JAX's rules, one line of math each.
# d neg = -t: linear.
ad.deflinear(neg_p, lambda ct, x: [neg(ct)])
for _p in (floor_p, ceil_p, is_finite_p, not_p, population_count_p, clz_p):
  ad.defjvp_zero(_p)
# d exp = exp
ad.defjvp2(exp_p, lambda t, ans, x, **_: mul(t, ans))
# d log1p = 1/(1 + x)
ad.defjvp(log1p_p, lambda t, x, **_: div(t, add(x, _one(x))))
# d square = 2x
ad.defjvp2(square_p, lambda t, ans, x: mul(t, mul(_const(x, 2), x)))


def _abs_jvp(t, ans, x):
  # Real: sign(x) t (+t at 0). Complex: re(conj(x) t) / |x| (0 where x = 0).
  if dtypes.issubdtype(core.get_aval(x).dtype, np.complexfloating):
    return real(mul(t, div(conj(x), _replace_zero(convert_element_type(ans, _dtype(x))))))
  return select_n(ge(x, _const(x, 0)), neg(t), t)


ad.defjvp2(abs_p, _abs_jvp)
# real and imag are linear; their transposes embed the cotangent back into C.
ad.deflinear(real_p, lambda ct, x: [complex(ct, np.zeros((), _dtype(ct)))])
ad.deflinear(imag_p, lambda ct, x: [complex(np.zeros((), _dtype(ct)), neg(ct))])


@square_p.def_lowering
def _square_lowering(ctx, x):
  # CHLO's square of a complex a+bi is ((a-b)(a+b), 2ab): exact 0 real part when |a| == |b|,
  # and no overflow of a*a - b*b where the difference is representable (JAX's lowering).
  if ctx.avals_in[0].dtype.kind in "iu":
    return ctx.op1("stablehlo.multiply", [x, x], x.type)
  return ctx.op1("chlo.square", [x], x.type)


def _abs_lowering(ctx, x):
  if ctx.avals_in[0].dtype.kind == "u":
    return x
  return ctx.op1("stablehlo.abs", [x], hlo.aval_type(ctx.avals_out[0]))


abs_p.def_lowering(_abs_lowering)


# ----------------------------------------------------------------------------
# sign


def sign(x):
  """Elementwise sign: -1, 0 or 1 (x / |x| for complex x).

  Args:
    x: an array of a numeric dtype.

  Returns:
    An array of x's shape and dtype.

  Mirrors `jax.lax.sign`.
  """
  return sign_p.bind(x)


sign_p = standard_primitive("sign", naryop_abstract_eval("sign", ("num",)), None)
ad.defjvp_zero(sign_p)
batching.defvectorized(sign_p)


@sign_p.def_lowering
def _sign_lowering(ctx, x):
  aval = ctx.avals_in[0]
  if aval.dtype.kind == "u":
    zero = ctx.broadcast_to(ctx.constant(0, aval.dtype), core.ShapedArray((), aval.dtype), aval)
    one = ctx.broadcast_to(ctx.constant(1, aval.dtype), core.ShapedArray((), aval.dtype), aval)
    is_zero = ctx.op1("stablehlo.compare", [x, zero], hlo.tensor_type(aval.shape, bool),
                      "comparison_direction = #stablehlo<comparison_direction EQ>, "
                      "compare_type = #stablehlo<comparison_type UNSIGNED>")
    return ctx.op1("stablehlo.select", [is_zero, zero, one], x.type)
  return ctx.op1("stablehlo.sign", [x], x.type)


# ----------------------------------------------------------------------------
# round


class RoundingMethod:
  """How `round` breaks ties (mirrors `jax.lax.RoundingMethod`)."""
  AWAY_FROM_ZERO = 0
  TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001 - JAX's name
  """Elementwise rounding to the nearest integer value.

  Args:
    x: an array of a floating-point dtype.
    rounding_method: `RoundingMethod.AWAY_FROM_ZERO` (0, the default) or
      `RoundingMethod.TO_NEAREST_EVEN` (1), for ties.

  Returns:
    An array of x's shape and dtype.

  Mirrors `jax.lax.round`.
  """
  return round_p.bind(x, rounding_method=int(rounding_method))


round_p = standard_primitive("round", naryop_abstract_eval("round", ("float",)), None)
ad.defjvp_zero(round_p)
batching.defvectorized(round_p)


@round_p.def_lowering
def _round_lowering(ctx, x, rounding_method):
  op = "stablehlo.round_nearest_even" if rounding_method else "stablehlo.round_nearest_afz"
  return ctx.op1(op, [x], x.type)


# ----------------------------------------------------------------------------
# integer_pow


def integer_pow(x, y: int):
  """Elementwise x**y for a static Python integer exponent y.

  Args:
    x: an array of a numeric dtype.
    y: a Python int; negative exponents need an inexact dtype.

  Returns:
    An array of x's shape and dtype.

  Mirrors `jax.lax.integer_pow`.
  """
  return integer_pow_p.bind(x, y=int(y))


def _integer_pow_abstract_eval(x, *, y):
  if y < 0 and not dtypes.issubdtype(x.dtype, np.inexact):
    raise TypeError(f"Integers cannot be raised to negative powers, got "
                    f"integer_pow({x.str_short()}, {y})")
  return naryop_abstract_eval("integer_pow", ("num",))(x)


integer_pow_p = standard_primitive("integer_pow", _integer_pow_abstract_eval, None)


def _integer_pow_jvp(t, x, *, y):
  # d x**y = y x**(y - 1)
  if y == 0:
    return _full_like(t, 0)
  if y == 1:
    return t
  if y == 2:
    return mul(t, mul(_const(x, 2), x))
  return mul(t, mul(_const(x, y), integer_pow(x, y - 1)))


ad.defjvp(integer_pow_p, _integer_pow_jvp)
batching.defvectorized(integer_pow_p)


@integer_pow_p.def_lowering
def _integer_pow_lowering(ctx, x, *, y):
  # Exponentiation by squaring; a negative power is the reciprocal.
  aval = ctx.avals_in[0]
  if y == 0:
    one = ctx.constant(np.ones((), aval.dtype))
    return ctx.broadcast_to(one, core.ShapedArray((), aval.dtype), aval)
  acc, base, n = None, x, abs(y) if not callable(abs) else (-y if y < 0 else y)
  while n:
    if n & 1:
      acc = base if acc is None else ctx.op1("stablehlo.multiply", [acc, base], x.type)
    n >>= 1
    if n:
      base = ctx.op1("stablehlo.multiply", [base, base], x.type)
  if y < 0:
    one = ctx.broadcast_to(ctx.constant(np.ones((), aval.dtype)),
                           core.ShapedArray((), aval.dtype), aval)
    acc = ctx.op1("stablehlo.divide", [one, acc], x.type)
  return acc


# ----------------------------------------------------------------------------
# Binary ops: (name, kinds, op, result dtype rule, doc)

_COMPARISONS = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}

_BINARY = [
    ("add", "num", "stablehlo.add", None, "x + y"),
    ("sub", "num", "stablehlo.subtract", None, "x - y"),
    ("mul", "num", "stablehlo.multiply", None, "x * y"),
    ("div", "num", "stablehlo.divide", None, "x / y (rounding toward zero for integers)"),
    ("rem", "float_or_int", "stablehlo.remainder", None, "the remainder of x / y, with the sign of x"),
    ("max", "any", "stablehlo.maximum", None, "the maximum (NaN if either is NaN)"),
    ("min", "any", "stablehlo.minimum", None, "the minimum (NaN if either is NaN)"),
    ("nextafter", "float", "chlo.next_after", None, "the next representable value after x toward y"),
    ("and", "int_or_bool", "stablehlo.and", None, "the bitwise (logical, for bool) AND"),
    ("or", "int_or_bool", "stablehlo.or", None, "the bitwise (logical, for bool) OR"),
    ("xor", "int_or_bool", "stablehlo.xor", None, "the bitwise (logical, for bool) XOR"),
    ("shift_left", "int", "stablehlo.shift_left", None, "x << y"),
    ("shift_right_arithmetic", "int", "stablehlo.shift_right_arithmetic", None,
     "x >> y, filling with the sign bit"),
    ("shift_right_logical", "int", "stablehlo.shift_right_logical", None,
     "x >> y, filling with zeros"),
    ("complex", "float32_or_64", "stablehlo.complex", lambda d: dtypes.to_complex_dtype(d),
     "the complex number x + i y"),
]
for _name, _dir in _COMPARISONS.items():
  # Equality accepts complex operands; the orderings do not (as in JAX).
  _kinds = "any" if _name in ("eq", "ne") else "ordered"
  _BINARY.append((_name, _kinds, None, _to_bool, f"x {_dir} y elementwise, as bool"))

_PUBLIC_NAMES = {"and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor"}


def _make_binary(name, kinds, op, result_dtype, doc):
  abstract_eval = naryop_abstract_eval(name, (kinds, kinds), result_dtype)
  if name in _COMPARISONS:
    lowering = _comparison_lowering(_COMPARISONS[name])
  else:
    lowering = emit_elementwise(op)
  prim = standard_primitive(name, abstract_eval, lowering)
  batching.defbroadcasting(prim)

  def wrapper(x, y):
    return prim.bind(*_coerce_scalars(x, y))
  public = _PUBLIC_NAMES.get(name, name)
  wrapper.__name__ = wrapper.__qualname__ = public
  wrapper.__doc__ = (
      f"Elementwise {doc}.\n\n"
      f"  Args:\n    x, y: arrays of one {kinds} dtype and equal shapes (a rank-0\n"
      "      operand or Python scalar broadcasts).\n\n"
      "  Returns:\n    An array of the common shape.\n\n"
      "  Raises:\n    TypeError: the dtypes differ or are not accepted, or the shapes differ.\n\n"
      f"  Mirrors `jax.lax.{public}`.\n  ")
  return prim, wrapper


def _comparison_lowering(direction):
  def lowering(ctx, x, y):
    out = ctx.avals_out[0]
    dtype = ctx.avals_in[0].dtype
    x = ctx.broadcast_to(x, ctx.avals_in[0], out)
    y = ctx.broadcast_to(y, ctx.avals_in[1], out)
    attrs = (f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
             f"compare_type = #stablehlo<comparison_type {hlo.comparison_type(dtype)}>")
    return ctx.op1("stablehlo.compare", [x, y], hlo.aval_type(out), attrs)
  return lowering


_binary_prims = {row[0]: _make_binary(*row) for row in _BINARY}

add_p, add = _binary_prims["add"]
sub_p, sub = _binary_prims["sub"]
mul_p, _ = _binary_prims["mul"]


def mul(x, y, *, out_dtype=None):
  """Elementwise product x * y (AND for booleans).

  Args:
    x, y: arrays of one numeric dtype and equal shapes (a rank-0 operand or Python scalar
      broadcasts); with `out_dtype`, of any numeric dtypes.
    out_dtype: None, or the result dtype: both operands are converted to it before they
      are multiplied.

  Returns:
    An array of the common shape, of x's dtype or `out_dtype`.

  Raises:
    TypeError: the dtypes differ (without `out_dtype`) or are not accepted, or the shapes
      differ.

  Mirrors `jax.lax.mul`.
  """
  return mul_p.bind(*_coerce_scalars(x, y), out_dtype=out_dtype)
div_p, div = _binary_prims["div"]
rem_p, rem = _binary_prims["rem"]
max_p, max = _binary_prims["max"]  # noqa: A001 - JAX's name
min_p, min = _binary_prims["min"]  # noqa: A001 - JAX's name
nextafter_p, nextafter = _binary_prims["nextafter"]
and_p, bitwise_and = _binary_prims["and"]
or_p, bitwise_or = _binary_prims["or"]
xor_p, bitwise_xor = _binary_prims["xor"]
shift_left_p, shift_left = _binary_prims["shift_left"]
shift_right_arithmetic_p, shift_right_arithmetic = _binary_prims["shift_right_arithmetic"]
shift_right_logical_p, shift_right_logical = _binary_prims["shift_right_logical"]
complex_p, complex = _binary_prims["complex"]  # noqa: A001 - JAX's name
eq_p, eq = _binary_prims["eq"]
ne_p, ne = _binary_prims["ne"]
lt_p, lt = _binary_prims["lt"]
le_p, le = _binary_prims["le"]
gt_p, gt = _binary_prims["gt"]
ge_p, ge = _binary_prims["ge"]

# Derivatives of the table's primitives (JAX's rules). The binary ops broadcast
# rank-0 and size-1 operands, so tangents are broadcast to the output shape and
# cotangents summed back to the operand's shape.


def _out_shape(*args):
  return broadcasting_shape("jvp", *map(core.get_aval, args))


def _add_jvp(primals, tangents):
  x_dot, y_dot = tangents
  out = add(*primals)
  if type(x_dot) is ad.Zero and type(y_dot) is ad.Zero:
    return out, ad.Zero.from_primal_value(out)
  if type(x_dot) is ad.Zero:
    return out, _maybe_broadcast(core.get_aval(out).shape, y_dot)
  if type(y_dot) is ad.Zero:
    return out, _maybe_broadcast(core.get_aval(out).shape, x_dot)
  return out, add(x_dot, y_dot)


def _add_transpose(ct, x, y):
  return [_unbroadcast(_ct_aval(x), ct), _unbroadcast(_ct_aval(y), ct)]


add_p.def_jvp(_add_jvp)
add_p.def_transpose(_add_transpose)


def _sub_jvp(primals, tangents):
  x_dot, y_dot = tangents
  out = sub(*primals)
  # Integer differences have float0 tangents, which carry no values to negate.
  if ((type(x_dot) is ad.Zero and type(y_dot) is ad.Zero)
      or not dtypes.issubdtype(core.get_aval(out).dtype, np.inexact)):
    return out, ad.Zero.from_primal_value(out)
  if type(x_dot) is ad.Zero:
    return out, _maybe_broadcast(core.get_aval(out).shape, neg(y_dot))
  if type(y_dot) is ad.Zero:
    return out, _maybe_broadcast(core.get_aval(out).shape, x_dot)
  return out, sub(x_dot, y_dot)


def _sub_transpose(ct, x, y):
  return [_unbroadcast(_ct_aval(x), ct), _unbroadcast(_ct_aval(y), neg(ct))]


sub_p.def_jvp(_sub_jvp)
sub_p.def_transpose(_sub_transpose)

# mul is linear in each operand: ct_x = sum(ct * y), ct_y = sum(x * ct); with an
# out_dtype, each cotangent is computed in its operand's dtype (as JAX does).
ad.defbilinear(
    mul_p,
    lambda ct, x, y, out_dtype=None: _unbroadcast(
        x.aval, mul(ct, y, out_dtype=None if out_dtype is None else x.aval.dtype)),
    lambda ct, x, y, out_dtype=None: _unbroadcast(
        y.aval, mul(x, ct, out_dtype=None if out_dtype is None else y.aval.dtype)))


def _div_transpose(ct, x, y):
  # Linear in the numerator only: ct_x = sum(ct / y).
  if ad.is_undefined_primal(y):
    raise RuntimeError("nonlinear div can't be transposed")
  return [_unbroadcast(x.aval, div(ct, y)), None]


# d (x / y) = t_x / y - t_y x / y**2
ad.defjvp(div_p, lambda t, x, y: div(t, y),
          lambda t, x, y: mul(mul(neg(t), x), integer_pow(y, -2)))
div_p.def_transpose(_div_transpose)
# d rem(x, y) = t_x - t_y trunc(x / y)
ad.defjvp(rem_p, lambda t, x, y: _maybe_broadcast(_out_shape(x, y), t),
          lambda t, x, y: mul(neg(t), mul(sign(div(x, y)), floor(abs(div(x, y))))))


def _balanced_eq(x, z, y):
  """1 where x == z, 0 elsewhere; 1/2 where y == z too (a tie splits the tangent)."""
  return div(select_n(eq(x, z), _full_like(z, 0), _full_like(z, 1)),
             select_n(eq(y, z), _full_like(z, 1), _full_like(z, 2)))


for _p in (max_p, min_p):
  ad.defjvp2(_p, lambda t, ans, x, y: mul(t, _balanced_eq(x, ans, y)),
             lambda t, ans, x, y: mul(t, _balanced_eq(y, ans, x)))
# nextafter has no derivative rule, as in JAX (differentiating it raises).
for _p in (and_p, or_p, xor_p, shift_left_p, shift_right_arithmetic_p, shift_right_logical_p,
           eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
  ad.defjvp_zero(_p)


def _complex_transpose(ct, x, y):
  # <ct, x + i y> = re(ct) x - im(ct) y
  return [_unbroadcast(x.aval, real(ct)) if ad.is_undefined_primal(x) else None,
          _unbroadcast(y.aval, imag(neg(ct))) if ad.is_undefined_primal(y) else None]


ad.deflinear(complex_p, _complex_transpose)



def _bool_arith_lowering(op_for_bool, op):
  # On booleans JAX's add is OR and mul is AND.
  def lowering(ctx, x, y):
    name = op_for_bool if ctx.avals_in[0].dtype == np.bool_ else op
    return emit_elementwise(name)(ctx, x, y)
  return lowering


def _minmax_lowering(op, direction):
  # Complex values compare lexicographically, as (real, imag) pairs (as in JAX).
  def lowering(ctx, x, y):
    dtype = ctx.avals_in[0].dtype
    if dtype.kind != "c":
      return emit_elementwise(op)(ctx, x, y)
    out = ctx.avals_out[0]
    x = ctx.broadcast_to(x, ctx.avals_in[0], out)
    y = ctx.broadcast_to(y, ctx.avals_in[1], out)
    part_type = hlo.tensor_type(out.shape, _real_dtype(dtype))
    bool_type = hlo.tensor_type(out.shape, bool)

    def compare(a, b, how):
      return ctx.op1("stablehlo.compare", [a, b], bool_type,
                     f"comparison_direction = #stablehlo<comparison_direction {how}>, "
                     "compare_type = #stablehlo<comparison_type FLOAT>")
    rx, ry = (ctx.op1("stablehlo.real", [v], part_type) for v in (x, y))
    ix, iy = (ctx.op1("stablehlo.imag", [v], part_type) for v in (x, y))
    which = ctx.op1("stablehlo.select", [compare(rx, ry, "EQ"), compare(ix, iy, direction),
                                         compare(rx, ry, direction)], bool_type)
    return ctx.op1("stablehlo.select", [which, x, y], hlo.aval_type(out))
  return lowering


max_p.def_lowering(_minmax_lowering("stablehlo.maximum", "GT"))
min_p.def_lowering(_minmax_lowering("stablehlo.minimum", "LT"))

add_p.def_abstract_eval(naryop_abstract_eval("add", ("any", "any")))
add_p.def_lowering(_bool_arith_lowering("stablehlo.or", "stablehlo.add"))
_mul_same_dtype_eval = naryop_abstract_eval("mul", ("any", "any"))
_mul_same_dtype_lowering = _bool_arith_lowering("stablehlo.and", "stablehlo.multiply")


@mul_p.def_abstract_eval
def _mul_abstract_eval(x, y, *, out_dtype=None):
  if out_dtype is None:
    return _mul_same_dtype_eval(x, y)
  check_dtype_kind("mul", (x, y), ("any", "any"))
  return core.ShapedArray(broadcasting_shape("mul", x, y), dtypes.canonicalize_dtype(out_dtype),
                          x.weak_type and y.weak_type)


@mul_p.def_lowering
def _mul_lowering(ctx, x, y, *, out_dtype=None):
  if out_dtype is not None:  # the operands are converted to the result's dtype first
    out = ctx.avals_out[0]
    x, y = (ctx.op1("stablehlo.convert", [v], hlo.tensor_type(a.shape, out.dtype))
            for v, a in zip((x, y), ctx.avals_in))
    avals_in, ctx.avals_in = ctx.avals_in, [a.update(dtype=out.dtype) for a in ctx.avals_in]
    try:
      return _mul_same_dtype_lowering(ctx, x, y)
    finally:
      ctx.avals_in = avals_in
  return _mul_same_dtype_lowering(ctx, x, y)


mul_p.def_pp_params(drop_none_params("out_dtype"))


# ----------------------------------------------------------------------------
# convert_element_type


def convert_element_type(operand, new_dtype, *, weak_type: bool = False):
  """Elementwise conversion of `operand` to `new_dtype`.

  Float to integer conversion truncates toward zero and saturates at the
  integer type's bounds (NaN becomes 0), as XLA defines it. A conversion of a
  Python scalar or NumPy value is done on the host and returns a constant.

  Args:
    operand: an array or scalar.
    new_dtype: the target dtype (canonicalized for x64 mode).
    weak_type: whether the result is weakly typed.

  Returns:
    An array of operand's shape and dtype `new_dtype`.

  Mirrors `jax.lax.convert_element_type`.
  """
  if isinstance(new_dtype, dtypes.ExtendedDType):  # keys convert only to themselves
    if getattr(operand, "dtype", None) == new_dtype:
      return operand
    raise ValueError(f"Cannot convert_element_type from {dtypes.dtype(operand)} to {new_dtype}")
  new_dtype = dtypes.canonicalize_dtype(new_dtype)
  if isinstance(operand, (_PY_SCALARS, np.ndarray, np.generic)):
    # Constants are converted on the host, so they stay literals in jaxprs.
    value = _host_convert(operand, new_dtype)
    aval = core.ShapedArray(np.shape(value), new_dtype, weak_type)
    if not weak_type:
      return value
    return _WeakConst(value, aval, operand if type(operand) in _PY_SCALARS else None)
  aval = core.get_aval(operand)
  if aval.dtype == new_dtype and aval.weak_type == weak_type:
    return operand
  return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=bool(weak_type),
                                     sharding=None)


# Python scalars these dtypes hold without overflow convert directly (no errstate needed).
_DIRECT_SCALAR_CONVERSIONS = {
    (float, np.dtype(np.float32)): 3.4e38, (float, np.dtype(np.float64)): float("inf"),
    (int, np.dtype(np.float32)): 2**31, (int, np.dtype(np.float64)): 2**31,
    (int, np.dtype(np.int32)): 2**31, (int, np.dtype(np.int64)): 2**31,
}


def _host_convert(x, new_dtype):
  bound = _DIRECT_SCALAR_CONVERSIONS.get((type(x), new_dtype))
  if bound is not None and -bound < x < bound:  # NaN and inf take the general path
    return np.array(x, new_dtype)
  value = np.asarray(x)
  if value.dtype.kind == "c" and new_dtype.kind != "c":
    value = value.real
  if new_dtype.kind in "iu" and dtypes.issubdtype(value.dtype, np.floating):
    # XLA's saturating conversion: truncate, clamp to the bounds, NaN -> 0. The
    # clamp is done in float64, where the narrower floats' values are exact.
    info = np.iinfo(new_dtype)
    wide = value.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
      inner = np.where(np.isnan(wide), 0, np.clip(np.trunc(wide), info.min, info.max))
      # float64(info.max) rounds up for 64-bit types: saturate those explicitly.
      return np.where(wide >= float(info.max), new_dtype.type(info.max),
                      inner.astype(new_dtype)).astype(new_dtype)
  with np.errstate(over="ignore", invalid="ignore"):
    return value.astype(new_dtype)


class _WeakConst(np.ndarray):
  """A host constant that remembers it is weakly typed (a converted Python scalar), and
  that scalar (`_py`), which a jaxpr prints as JAX does (``0.1:f32[]``)."""

  def __new__(cls, value, aval, py=None):
    obj = np.asarray(value).view(cls)
    obj._aval, obj._py = aval, py
    return obj

  def __array_finalize__(self, obj):
    self._aval = getattr(obj, "_aval", None)
    self._py = None  # a derived array (x == 0, x[1:]) is not the Python scalar


def _weak_const_aval(x):
  # NumPy results derived from a weak constant (x == 0, x[1:]) inherit `_aval`
  # through __array_finalize__: it holds only while shape and dtype are the same.
  aval = x._aval
  if aval is not None and aval.shape == x.shape and aval.dtype == x.dtype:
    return aval
  return core.ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype))


core.pytype_aval_mappings[_WeakConst] = _weak_const_aval


def _convert_element_type_abstract_eval(operand, *, new_dtype, weak_type, sharding):
  return core.ShapedArray(operand.shape, new_dtype, weak_type)


convert_element_type_p = standard_primitive(
    "convert_element_type", _convert_element_type_abstract_eval, None,
    pp_params=drop_none_params("sharding"))


def _convert_element_type_jvp(t, ans, operand, *, new_dtype, weak_type, sharding):
  # The tangent is converted too; an integer or bool result has a float0 zero tangent.
  tangent_dtype = core.ShapedArray((), new_dtype).to_tangent_aval().dtype
  if tangent_dtype == dtypes.float0:
    return ad.Zero.from_primal_value(ans)
  return convert_element_type_p.bind(t, new_dtype=tangent_dtype, weak_type=weak_type,
                                     sharding=sharding)


def _convert_element_type_transpose(ct, operand, *, new_dtype, weak_type, sharding):
  # Converted back to the operand's dtype and weak type (complex -> real keeps re(ct)).
  aval = operand.aval
  if aval.to_tangent_aval().dtype == dtypes.float0:
    return [ad.Zero(aval.to_tangent_aval())]
  return [convert_element_type_p.bind(ct, new_dtype=aval.dtype, weak_type=aval.weak_type,
                                      sharding=None)]


ad.defjvp2(convert_element_type_p, _convert_element_type_jvp)
convert_element_type_p.def_transpose(_convert_element_type_transpose)
batching.defvectorized(convert_element_type_p)


@convert_element_type_p.def_lowering
def _convert_element_type_lowering(ctx, x, *, new_dtype, weak_type, sharding):
  src = ctx.avals_in[0]
  out_type = hlo.aval_type(ctx.avals_out[0])
  if src.dtype == new_dtype:
    return x
  if src.dtype.kind == "c" and new_dtype.kind != "c":
    x = ctx.op1("stablehlo.real", [x], hlo.tensor_type(src.shape, _real_dtype(src.dtype)))
    src = src.update(dtype=_real_dtype(src.dtype))
  if new_dtype == np.bool_ and src.dtype != np.bool_:
    zero = ctx.broadcast_to(ctx.constant(np.zeros((), src.dtype)),
                            core.ShapedArray((), src.dtype), src)
    attrs = ("comparison_direction = #stablehlo<comparison_direction NE>, "
             f"compare_type = #stablehlo<comparison_type {hlo.comparison_type(src.dtype)}>")
    return ctx.op1("stablehlo.compare", [x, zero], out_type, attrs)
  if src.dtype.kind == "f" and new_dtype.kind in "iu":
    return _saturating_float_to_int(ctx, x, src, new_dtype, out_type)
  return ctx.op1("stablehlo.convert", [x], out_type)


def _saturating_float_to_int(ctx, x, src, new_dtype, out_type):
  # Clamp to the integer range (in the float type) before converting, NaN -> 0.
  info = np.iinfo(new_dtype)
  scalar = core.ShapedArray((), src.dtype)
  with np.errstate(over="ignore"):  # float16 -> int32 bounds round to +-inf: fine
    lo_val = np.asarray(info.min, src.dtype)
    hi_val = np.asarray(info.max, src.dtype)
    hi_limit_val = np.asarray(info.max, np.float64).astype(src.dtype)
  if float(hi_val) > info.max:  # the float rounds up past the max: step down
    hi_val = np.nextafter(hi_val, np.asarray(0, src.dtype))
  lo = ctx.broadcast_to(ctx.constant(lo_val), scalar, src)
  hi = ctx.broadcast_to(ctx.constant(hi_val), scalar, src)
  clamped = ctx.op1("stablehlo.clamp", [lo, x, hi], x.type)
  converted = ctx.op1("stablehlo.convert", [clamped], out_type)
  # Values at or above the bound saturate to the integer max exactly.
  int_scalar = core.ShapedArray((), new_dtype)
  imax = ctx.broadcast_to(ctx.constant(np.asarray(info.max, new_dtype)), int_scalar, src.update(dtype=new_dtype))
  izero = ctx.broadcast_to(ctx.constant(np.asarray(0, new_dtype)), int_scalar, src.update(dtype=new_dtype))
  bool_type = hlo.tensor_type(src.shape, bool)
  cmp = "compare_type = #stablehlo<comparison_type FLOAT>"
  hi_limit = ctx.broadcast_to(ctx.constant(hi_limit_val), scalar, src)
  too_big = ctx.op1("stablehlo.compare", [x, hi_limit], bool_type,
                    f"comparison_direction = #stablehlo<comparison_direction GE>, {cmp}")
  converted = ctx.op1("stablehlo.select", [too_big, imax, converted], out_type)
  is_nan = ctx.op1("stablehlo.compare", [x, x], bool_type,
                   f"comparison_direction = #stablehlo<comparison_direction NE>, {cmp}")
  return ctx.op1("stablehlo.select", [is_nan, izero, converted], out_type)


def bitcast_convert_type(operand, new_dtype):
  """Reinterprets the bits of `operand` as `new_dtype` (same or divisible width).

  A narrower `new_dtype` adds a last axis (of the width ratio); a wider one
  consumes a last axis of that size.

  Raises:
    TypeError: bool or complex on either side, unless the dtypes are equal.
    ValueError: widening without a last axis of the width ratio.

  Mirrors `jax.lax.bitcast_convert_type`.
  """
  return bitcast_convert_type_p.bind(operand, new_dtype=dtypes.canonicalize_dtype(new_dtype))


def _bitcast_abstract_eval(operand, *, new_dtype):
  new_dtype = np.dtype(new_dtype)
  odd = lambda d: d == np.bool_ or dtypes.issubdtype(d, np.complexfloating)
  if (odd(operand.dtype) or odd(new_dtype)) and operand.dtype != new_dtype:
    # XLA's bool is not a byte and complex is two numbers: JAX refuses both.
    raise TypeError("lax.bitcast_convert_type does not support bool or complex values unless "
                    "the operand and destination types match. Got operand "
                    f"dtype={operand.dtype}, new_dtype={new_dtype!r}. Consider using the "
                    "arr.view() method instead.")
  old, new = operand.dtype.itemsize, new_dtype.itemsize
  if old == new:
    shape = operand.shape
  elif old > new:
    shape = (*operand.shape, old // new)
  else:
    last = operand.shape[-1] if operand.shape else 1
    if last * old != new:
      raise ValueError(f"Attempting to convert array of shape {operand.shape} from "
                       f"{operand.dtype} of size {old * 8} bits to {new_dtype} of size "
                       f"{new * 8}, bits but {last} * {old * 8} != {new * 8}")
    shape = operand.shape[:-1]
  return core.ShapedArray(shape, new_dtype)


bitcast_convert_type_p = standard_primitive(
    "bitcast_convert_type", _bitcast_abstract_eval,
    lambda ctx, x, new_dtype: ctx.op1("stablehlo.bitcast_convert", [x],
                                      hlo.aval_type(ctx.avals_out[0])))
ad.defjvp_zero(bitcast_convert_type_p)  # not differentiable (JAX's rule)


def _bitcast_convert_type_batch(axis_data, args, dims, *, new_dtype):
  # A widening bitcast consumes the last axis: keep the batch axis off it.
  (x,), (bdim,) = args, dims
  if np.dtype(new_dtype).itemsize > _dtype(x).itemsize and bdim == np.ndim(x) - 1:
    x, bdim = batching.moveaxis(x, bdim, 0), 0
  return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), bdim


bitcast_convert_type_p.def_batch(_bitcast_convert_type_batch)


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
  """Rounds `operand` as if it had the given exponent and mantissa widths.

  Mirrors `jax.lax.reduce_precision`.
  """
  return reduce_precision_p.bind(operand, exponent_bits=int(exponent_bits),
                                 mantissa_bits=int(mantissa_bits))


reduce_precision_p = standard_primitive(
    "reduce_precision", lambda x, **_: naryop_abstract_eval("reduce_precision", ("float",))(x),
    lambda ctx, x, exponent_bits, mantissa_bits: ctx.op1(
        "stablehlo.reduce_precision", [x], x.type,
        f"exponent_bits = {exponent_bits} : i32, mantissa_bits = {mantissa_bits} : i32"))
# Linear (rounding is treated as the identity): the cotangent is rounded the same way.
ad.deflinear(reduce_precision_p, lambda ct, x, **params: [reduce_precision_p.bind(ct, **params)])
batching.defvectorized(reduce_precision_p)


# ----------------------------------------------------------------------------
# select_n, clamp


def select_n(which, *cases):
  """Elementwise selection: ``cases[which]``.

  Args:
    which: a bool array (with two cases) or integer array, of the cases' shape
      or rank 0; values outside [0, len(cases)) give unspecified results.
    *cases: one or more arrays of equal shape and dtype.

  Returns:
    An array of the cases' shape and dtype.

  Raises:
    TypeError: no cases, mismatched case types, or a bad `which` dtype or shape.

  Mirrors `jax.lax.select_n`.
  """
  if not cases:
    raise ValueError("select_n called with no cases")
  return select_n_p.bind(which, *_coerce_scalars(*cases))


def _select_n_abstract_eval(which, *cases):
  first = cases[0]
  for c in cases[1:]:
    if c.shape != first.shape or c.dtype != first.dtype:
      raise TypeError("select_n cases must have the same shapes and dtypes, got "
                      f"{', '.join(c.str_short() for c in cases)}.")
  if which.dtype == np.bool_:
    if len(cases) > 2:
      raise TypeError("select_n with a boolean predicate takes at most two cases, "
                      f"got {len(cases)}.")
  elif not dtypes.issubdtype(which.dtype, np.integer):
    raise TypeError(f"select_n `which` must be boolean or integer type, got {which.dtype.name}.")
  if which.shape and which.shape != first.shape:
    raise TypeError("select_n `which` must be scalar or have the same shape as cases, got "
                    f"`which` shape {which.shape} but case shape {first.shape}.")
  return core.ShapedArray(first.shape, first.dtype, all(c.weak_type for c in cases))


select_n_p = standard_primitive("select_n", _select_n_abstract_eval, None)


def _select_n_jvp(primals, tangents):
  # Linear in the cases; the predicate has no derivative.
  which, *cases = primals
  case_tangents = tangents[1:]
  out = select_n(which, *cases)
  nonzero = [t for t in case_tangents if type(t) is not ad.Zero]
  if not nonzero:
    return out, ad.Zero.from_primal_value(out)
  zeros = _full_like(nonzero[0], 0)
  return out, select_n(which, *[zeros if type(t) is ad.Zero else t for t in case_tangents])


def _select_n_transpose(ct, which, *cases):
  # Case i receives ct where which == i, zeros elsewhere.
  assert not ad.is_undefined_primal(which), "internal: select_n transposed in its predicate"
  zeros = _full_like(ct, 0)
  if _dtype(which) == np.bool_:
    picks = [select_n(which, ct, zeros), select_n(which, zeros, ct)][:len(cases)]
  else:
    picks = [select_n(eq(which, _const(which, i)), zeros, ct) for i in range(len(cases))]
  return [None] + [p if ad.is_undefined_primal(c) else None for p, c in zip(picks, cases)]


select_n_p.def_jvp(_select_n_jvp)
select_n_p.def_transpose(_select_n_transpose)


def _select_n_batch(axis_data, args, dims):
  """JAX's rule: bind in place when the batch axes agree, else batch axes go first.

  A rank-0 `which` that became batched is broadcast along the cases' batch axis.
  """
  from xjax._src.lax.structural import broadcast_in_dim
  (which, *cases), (which_dim, *case_dims) = args, dims
  case_shape = np.shape(cases[0])
  if all(d == which_dim for d in case_dims):
    if np.shape(which) != case_shape:  # a batched scalar `which`
      which = broadcast_in_dim(which, case_shape, (which_dim,))
    return select_n(which, *cases), which_dim
  if np.ndim(which) == 0 and all(d is not batching.not_mapped for d in case_dims):
    # An unbatched scalar `which`: line the cases up on the first case's batch axis.
    dim = case_dims[0]
    cases = [batching.moveaxis(c, d, dim) for c, d in zip(cases, case_dims)]
    return select_n(which, *cases), dim
  size = axis_data.size
  if np.ndim(which):
    which = batching.bdim_at_front(which, which_dim, size)
  cases = [batching.bdim_at_front(c, d, size) for c, d in zip(cases, case_dims)]
  out_shape = np.shape(cases[0])
  if 0 < np.ndim(which) < len(out_shape):  # a batched scalar `which`, now of shape (B,)
    which = broadcast_in_dim(which, out_shape, (0,))
  return select_n(which, *cases), 0


select_n_p.def_batch(_select_n_batch)


@select_n_p.def_lowering
def _select_n_lowering(ctx, which, *cases):
  out = ctx.avals_out[0]
  which_aval = ctx.avals_in[0]
  which = ctx.broadcast_to(which, which_aval, out.update(dtype=which_aval.dtype))
  if len(cases) == 1:
    return cases[0]
  bool_type = hlo.tensor_type(out.shape, bool)
  if which_aval.dtype == np.bool_:
    return ctx.op1("stablehlo.select", [which, cases[1], cases[0]], hlo.aval_type(out))
  # An integer selector: a balanced tree of comparisons `which < mid`.
  which_dtype = which_aval.dtype
  compare = ("comparison_direction = #stablehlo<comparison_direction LT>, "
             f"compare_type = #stablehlo<comparison_type {hlo.comparison_type(which_dtype)}>")
  def build(lo, hi):
    if hi - lo == 1:
      return cases[lo]
    mid = (lo + hi) // 2
    bound = ctx.broadcast_to(ctx.constant(np.asarray(mid, which_dtype)),
                             core.ShapedArray((), which_dtype), out.update(dtype=which_dtype))
    pred = ctx.op1("stablehlo.compare", [which, bound], bool_type, compare)
    return ctx.op1("stablehlo.select", [pred, build(lo, mid), build(mid, hi)], hlo.aval_type(out))
  return build(0, len(cases))


def clamp(min, x, max):  # noqa: A002 - JAX's names
  """Elementwise clamp of x into [min, max].

  Args:
    min, max: arrays of x's dtype, of x's shape or rank 0.
    x: an array.

  Returns:
    An array of x's shape and dtype.

  Mirrors `jax.lax.clamp`.
  """
  return clamp_p.bind(*_coerce_scalars(min, x, max))


def _clamp_abstract_eval(lo, x, hi):
  for name, bound in (("min", lo), ("max", hi)):
    if bound.shape and bound.shape != x.shape:
      raise TypeError(f"clamp requires {name}.shape == operand.shape or {name}.shape == (), "
                      f"got {name}.shape={bound.shape}, operand.shape={x.shape}.")
  same_dtypes("clamp", (lo, x, hi))
  return x.update_weak_type(lo.weak_type and x.weak_type and hi.weak_type)


clamp_p = standard_primitive("clamp", _clamp_abstract_eval, None)


def _clamp_jvp_rule(which):
  """The tangent of the operand of clamp chosen by `which(lo, x, hi)`, 0 elsewhere.

  A rank-0 bound's tangent is broadcast to x's shape (JAX raises there instead).
  """
  def rule(t, lo, x, hi):
    t = _maybe_broadcast(core.get_aval(x).shape, t)
    return select_n(which(lo, x, hi), _full_like(x, 0), t)
  return rule


ad.defjvp(clamp_p,
          _clamp_jvp_rule(lambda lo, x, hi: bitwise_and(gt(lo, x), lt(lo, hi))),
          _clamp_jvp_rule(lambda lo, x, hi: bitwise_and(gt(x, lo), lt(x, hi))),
          _clamp_jvp_rule(lambda lo, x, hi: lt(hi, x)))



def _clamp_batch(axis_data, args, dims):
  """JAX's rule: bind in place when it can, else batch axes first and bounds broadcast to x."""
  from xjax._src.lax.structural import broadcast, broadcast_in_dim
  (lo, x, hi), (lo_dim, x_dim, hi_dim) = args, dims
  if lo_dim == x_dim == hi_dim:
    # Batched rank-0 bounds (now of shape (B,)) are broadcast along x's batch axis.
    lo, hi = [b if np.shape(b) == np.shape(x) else broadcast_in_dim(b, np.shape(x), (x_dim,))
              for b in (lo, hi)]
    return clamp_p.bind(lo, x, hi), x_dim
  if np.ndim(lo) == np.ndim(hi) == 0:  # shared rank-0 bounds
    return clamp_p.bind(lo, x, hi), x_dim
  lo, x, hi = [batching.bdim_at_front(v, d, axis_data.size) if np.ndim(v) else v
               for v, d in zip(args, dims)]
  if np.ndim(x) == 0:  # a shared rank-0 x, with a batched bound
    x = broadcast(x, np.shape(lo) if np.ndim(lo) else np.shape(hi))
  shape = np.shape(x)
  lo, hi = [broadcast(b, shape) if np.ndim(b) == 0 else b for b in (lo, hi)]
  lo, hi = [broadcast_in_dim(b, shape, (0,)) if np.ndim(b) < len(shape) else b for b in (lo, hi)]
  return clamp_p.bind(lo, x, hi), 0


clamp_p.def_batch(_clamp_batch)


@clamp_p.def_lowering
def _clamp_lowering(ctx, lo, x, hi):
  out = ctx.avals_out[0]
  lo = ctx.broadcast_to(lo, ctx.avals_in[0], out)
  hi = ctx.broadcast_to(hi, ctx.avals_in[2], out)
  return ctx.op1("stablehlo.clamp", [lo, x, hi], hlo.aval_type(out))


def conj(x):
  """Elementwise complex conjugate (the identity on real dtypes, as a complex result).

  Mirrors `jax.lax.conj`.
  """
  return conj_p.bind(x, input_dtype=core.get_aval(x).dtype)


def _conj_abstract_eval(x, *, input_dtype):
  check_dtype_kind("conj", (x,), ("conj",))
  dtype = x.dtype if dtypes.issubdtype(x.dtype, np.complexfloating) else dtypes.to_complex_dtype(x.dtype)
  return core.ShapedArray(x.shape, dtype, x.weak_type)


conj_p = standard_primitive("conj", _conj_abstract_eval, None)


def _conj_transpose(ct, x, *, input_dtype):
  # <ct, conj(z)> = re(conj(ct) z); for a real x, <ct, x + 0i> = re(ct) x.
  if dtypes.issubdtype(input_dtype, np.complexfloating):
    return [conj(ct)]
  return [real(ct)]


ad.deflinear(conj_p, _conj_transpose)
batching.defvectorized(conj_p)


@conj_p.def_lowering
def _conj_lowering(ctx, x, *, input_dtype):
  src, out = ctx.avals_in[0], ctx.avals_out[0]
  out_type = hlo.aval_type(out)
  if src.dtype.kind != "c":
    return ctx.op1("stablehlo.convert", [x], out_type)
  part_type = hlo.tensor_type(src.shape, _real_dtype(src.dtype))
  re = ctx.op1("stablehlo.real", [x], part_type)
  im = ctx.op1("stablehlo.imag", [x], part_type)
  im = ctx.op1("stablehlo.negate", [im], part_type)
  return ctx.op1("stablehlo.complex", [re, im], out_type)


def _copy_lowering(ctx, x):
  return x


copy_p = standard_primitive("copy", lambda x: x, _copy_lowering)
ad.deflinear(copy_p, lambda ct, x: [copy_p.bind(ct)])
batching.defvectorized(copy_p)


def _copy(x):
  return copy_p.bind(x)


def reciprocal(x):
  """Elementwise ``1 / x``, as ``integer_pow(x, -1)``.

  Raises:
    TypeError: integer `x` (integers cannot be raised to negative powers).

  Mirrors `jax.lax.reciprocal`.
  """
  return integer_pow(x, -1)
