"""Elementwise transcendental primitives: log, expm1, exp2, the roots (sqrt, rsqrt,
cbrt) and pow; the trigonometric and hyperbolic functions and their inverses (with atan2)
and the logistic function; the erf family (erf, erfc, erf_inv) and the gamma family
(lgamma, digamma, polygamma). All their rules are here. exp and log1p are in `elementwise`
(`reductions` needs them).

As in `elementwise`, the unary and binary primitives are declared by one table each
(`_UNARY`, `_BINARY`: name, accepted dtype kinds, the StableHLO or CHLO op, and whether
the primitive carries JAX's `accuracy` param) and built by elementwise's `_make_unary` and
`_make_binary`; pow is a card with rules of its own. The lax wrappers do no dtype
promotion (see `elementwise`).
"""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import stablehlo as hlo
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.lax.elementwise import (_coerce_scalars, _const, _dtype, _full_like,
                                       _is_array_like, _make_binary, _make_unary,
                                       _maybe_broadcast, _one, _out_shape, _replace_zero, add,
                                       complex, convert_element_type, div, eq, exp, imag,
                                       integer_pow, mul, neg, real, select_n, square, sub)
from xjax._src.interpreters.lowering import lower_fun
from xjax._src.lax.utils import naryop_abstract_eval, standard_primitive

# ----------------------------------------------------------------------------
# Unary functions: (name, kinds, op, has_accuracy, result dtype rule)

_UNARY = [
    ("log", "inexact", "stablehlo.log", True, None),
    ("expm1", "inexact", "stablehlo.exponential_minus_one", True, None),
    ("tanh", "inexact", "stablehlo.tanh", True, None),
    ("logistic", "inexact", "stablehlo.logistic", True, None),
    ("sin", "inexact", "stablehlo.sine", True, None),
    ("cos", "inexact", "stablehlo.cosine", True, None),
    ("tan", "inexact", "chlo.tan", True, None),
    ("asin", "inexact", "chlo.asin", False, None),
    ("acos", "inexact", "chlo.acos", False, None),
    ("atan", "inexact", "chlo.atan", False, None),
    ("sinh", "inexact", "chlo.sinh", False, None),
    ("cosh", "inexact", "chlo.cosh", False, None),
    ("asinh", "inexact", "chlo.asinh", False, None),
    ("acosh", "inexact", "chlo.acosh", False, None),
    ("atanh", "inexact", "chlo.atanh", False, None),
    ("sqrt", "inexact", "stablehlo.sqrt", True, None),
    ("rsqrt", "inexact", "stablehlo.rsqrt", True, None),
    ("cbrt", "float", "stablehlo.cbrt", True, None),
    ("erf", "float", "chlo.erf", False, None),
    ("erfc", "float", "chlo.erfc", False, None),
    ("erf_inv", "float", "chlo.erf_inv", False, None),
    ("lgamma", "float", "chlo.lgamma", False, None),
    ("digamma", "float", "chlo.digamma", False, None),
    ("exp2", "inexact", None, True, None),
]

_UNARY_DOCS = {
    "log": "the natural logarithm", "expm1": "e**x - 1, accurate near 0",
    "tanh": "the hyperbolic tangent",
    "logistic": "the logistic sigmoid 1 / (1 + e**-x)", "sin": "the sine (radians)",
    "cos": "the cosine (radians)", "tan": "the tangent (radians)", "asin": "the arcsine",
    "acos": "the arccosine", "atan": "the arctangent", "sinh": "the hyperbolic sine",
    "cosh": "the hyperbolic cosine", "asinh": "the inverse hyperbolic sine",
    "acosh": "the inverse hyperbolic cosine", "atanh": "the inverse hyperbolic tangent",
    "sqrt": "the square root", "rsqrt": "1 / sqrt(x)", "cbrt": "the cube root",
    "erf": "the error function", "erfc": "the complementary error function 1 - erf(x)",
    "erf_inv": "the inverse error function", "lgamma": "log |Gamma(x)|",
    "digamma": "the digamma function d/dx log Gamma(x)",
    "exp2": "2**x",
}


_unary_prims = {}
for _row in _UNARY:
  _unary_prims[_row[0]] = _make_unary(*_row, _UNARY_DOCS[_row[0]])

log_p, log = _unary_prims["log"]
expm1_p, expm1 = _unary_prims["expm1"]
tanh_p, tanh = _unary_prims["tanh"]
logistic_p, logistic = _unary_prims["logistic"]
sin_p, sin = _unary_prims["sin"]
cos_p, cos = _unary_prims["cos"]
tan_p, tan = _unary_prims["tan"]
asin_p, asin = _unary_prims["asin"]
acos_p, acos = _unary_prims["acos"]
atan_p, atan = _unary_prims["atan"]
sinh_p, sinh = _unary_prims["sinh"]
cosh_p, cosh = _unary_prims["cosh"]
asinh_p, asinh = _unary_prims["asinh"]
acosh_p, acosh = _unary_prims["acosh"]
atanh_p, atanh = _unary_prims["atanh"]
sqrt_p, sqrt = _unary_prims["sqrt"]
rsqrt_p, rsqrt = _unary_prims["rsqrt"]
cbrt_p, cbrt = _unary_prims["cbrt"]
erf_p, erf = _unary_prims["erf"]
erfc_p, erfc = _unary_prims["erfc"]
erf_inv_p, erf_inv = _unary_prims["erf_inv"]
lgamma_p, lgamma = _unary_prims["lgamma"]
digamma_p, digamma = _unary_prims["digamma"]
exp2_p, exp2 = _unary_prims["exp2"]

# Derivatives of the table's primitives: JAX's rules, one line of math each.
# d 2**x = log 2 * 2**x
ad.defjvp2(exp2_p, lambda t, ans, x, **_: mul(log(_const(x, 2)), mul(t, ans)))
# d log = 1/x; d expm1 = expm1 + 1
ad.defjvp(log_p, lambda t, x, **_: div(t, x))
ad.defjvp2(expm1_p, lambda t, ans, x, **_: mul(t, add(ans, _one(ans))))
# d tanh = (1 + tanh)(1 - tanh); d logistic = logistic (1 - logistic)
ad.defjvp2(tanh_p, lambda t, ans, x, **_: mul(add(t, mul(t, ans)), sub(_one(x), ans)))
ad.defjvp2(logistic_p, lambda t, ans, x, **_: mul(t, mul(ans, sub(_one(ans), ans))))
# d sin = cos; d cos = -sin; d tan = 1 + tan**2
ad.defjvp(sin_p, lambda t, x, accuracy: mul(t, cos(x, accuracy=accuracy)))
ad.defjvp(cos_p, lambda t, x, accuracy: neg(mul(t, sin(x, accuracy=accuracy))))
ad.defjvp2(tan_p, lambda t, ans, x, **_: mul(t, add(_const(x, 1), square(ans))))
# d asin = 1/sqrt(1 - x**2); d acos = -1/sqrt(1 - x**2); d atan = 1/(1 + x**2)
ad.defjvp(asin_p, lambda t, x: mul(t, rsqrt(sub(_const(x, 1), square(x)))))
ad.defjvp(acos_p, lambda t, x: mul(t, neg(rsqrt(sub(_const(x, 1), square(x))))))
ad.defjvp(atan_p, lambda t, x: div(t, add(_const(x, 1), square(x))))
# d sinh = cosh; d cosh = sinh; d asinh = 1/sqrt(x**2 + 1); d acosh = 1/sqrt(x**2 - 1)
ad.defjvp(sinh_p, lambda t, x: mul(t, cosh(x)))
ad.defjvp(cosh_p, lambda t, x: mul(t, sinh(x)))
ad.defjvp(asinh_p, lambda t, x: mul(t, rsqrt(add(square(x), _one(x)))))
ad.defjvp(acosh_p, lambda t, x: mul(t, rsqrt(sub(square(x), _one(x)))))
# d atanh = 1/((1 + x)(1 - x))
ad.defjvp(atanh_p, lambda t, x: mul(integer_pow(add(_one(x), x), -1), div(t, sub(_one(x), x))))
# d sqrt = 1/(2 sqrt); d rsqrt = -rsqrt/(2x); d cbrt = cbrt**-2 / 3
ad.defjvp2(sqrt_p, lambda t, ans, x, **_: mul(t, div(_const(x, 0.5), ans)))
ad.defjvp2(rsqrt_p, lambda t, ans, x, **_: mul(t, mul(_const(x, -0.5), div(ans, x))))
ad.defjvp2(cbrt_p, lambda t, ans, x, **_: mul(t, mul(_const(x, 1 / 3), integer_pow(ans, -2))))
# d erf = 2/sqrt(pi) exp(-x**2); d erfc = -d erf; d erf_inv = sqrt(pi)/2 exp(erf_inv**2)
ad.defjvp(erf_p, lambda t, x: mul(_const(x, 2 / np.sqrt(np.pi)), mul(t, exp(neg(square(x))))))
ad.defjvp(erfc_p, lambda t, x: mul(_const(x, -2 / np.sqrt(np.pi)), mul(t, exp(neg(square(x))))))
ad.defjvp2(erf_inv_p, lambda t, ans, x: mul(_const(x, np.sqrt(np.pi) / 2), mul(t, exp(square(ans)))))
# d lgamma = digamma; d digamma = polygamma(1, x)
ad.defjvp(lgamma_p, lambda t, x: mul(t, digamma(x)))
ad.defjvp(digamma_p, lambda t, x: mul(t, polygamma(_const(x, 1), x)))


def _sinh_cosh_of(b):
  # sinh and cosh through expm1, without cancellation for small |b|:
  # 2 sinh b = expm1(b) - expm1(-b), 2 cosh b = expm1(b) + expm1(-b) + 2.
  up, down = expm1(b), expm1(neg(b))
  two = _const(b, 2)
  return div(sub(up, down), two), div(add(add(up, down), two), two)


def _sin_complex(x):
  # sin(a + bi) = sin a cosh b + i cos a sinh b; the real part is 0 when a is 0, even where
  # cosh b overflows (0 * inf would be nan).
  a, b = real(x), imag(x)
  sinh_b, cosh_b = _sinh_cosh_of(b)
  re = select_n(eq(a, _const(a, 0)), mul(sin(a), cosh_b), _full_like(a, 0))
  return complex(re, mul(cos(a), sinh_b))


def _cos_complex(x):
  # cos(a + bi) = cos a cosh b - i sin a sinh b; the imaginary part is 0 when a is 0.
  a, b = real(x), imag(x)
  sinh_b, cosh_b = _sinh_cosh_of(b)
  im = select_n(eq(a, _const(a, 0)), mul(neg(sin(a)), sinh_b), _full_like(a, 0))
  return complex(mul(cos(a), cosh_b), im)


def _with_complex_formula(prim, formula):
  """`prim`'s lowering, with complex operands lowered as `formula` (JAX's complex sin and
  cos: XLA's complex sine and cosine lose the parts that should be 0 at large |imag|)."""
  real_lowering = prim.lowering

  def lowering(ctx, x, **params):
    if ctx.avals_in[0].dtype.kind == "c":
      return lower_fun(formula, multiple_results=False)(ctx, x)
    return real_lowering(ctx, x, **params)
  prim.def_lowering(lowering)


_with_complex_formula(sin_p, _sin_complex)
_with_complex_formula(cos_p, _cos_complex)


@exp2_p.def_lowering
def _exp2_lowering(ctx, x, accuracy=None):
  # 2**x = e**(x log 2)
  ln2 = ctx.constant(np.log(2.0), ctx.avals_in[0].dtype)
  ln2 = ctx.broadcast_to(ln2, core.ShapedArray((), ctx.avals_in[0].dtype), ctx.avals_out[0])
  scaled = ctx.op1("stablehlo.multiply", [x, ln2], x.type)
  return ctx.op1("stablehlo.exponential", [scaled], x.type)


# ----------------------------------------------------------------------------
# Binary functions: (name, kinds, op, result dtype rule, doc)

_BINARY = [
    ("atan2", "inexact", "stablehlo.atan2", None, "the angle atan(x / y) in the right quadrant"),
    ("polygamma", "float", "chlo.polygamma", None,
     "polygamma psi^(x)(y): the x-th derivative of digamma at y (x a whole number)"),
]

_binary_prims = {row[0]: _make_binary(*row) for row in _BINARY}

atan2_p, atan2 = _binary_prims["atan2"]
polygamma_p, polygamma = _binary_prims["polygamma"]

# d atan2(x, y) = (y t_x - x t_y) / (x**2 + y**2)
ad.defjvp(atan2_p, lambda t, x, y: mul(t, div(y, add(square(x), square(y)))),
          lambda t, x, y: mul(t, div(neg(x), add(square(x), square(y)))))


def _polygamma_jvp_m(t, m, x):
  raise ValueError("polygamma gradient with respect to m is not supported")


# d polygamma(m, x) / dx = polygamma(m + 1, x)
ad.defjvp(polygamma_p, _polygamma_jvp_m, lambda t, m, x: mul(t, polygamma(add(m, _const(m, 1)), x)))


# ----------------------------------------------------------------------------
# pow


def pow(x, y):  # noqa: A001 - JAX's name
  """Elementwise x**y.

  Args:
    x: an array of a floating-point or complex dtype.
    y: an array of x's dtype, or of an integer dtype.

  Returns:
    An array of the common shape and x's dtype.

  Mirrors `jax.lax.pow`.
  """
  if _is_array_like(x):
    x, y = _coerce_scalars(x, y)
  return pow_p.bind(x, y)


def _pow_abstract_eval(x, y):
  for position, (aval, accepted, kinds) in enumerate(
      ((x, "floating, complexfloating", "fc"), (y, "integer, floating, complexfloating", "iufc"))):
    if aval.dtype.kind not in kinds and not dtypes.issubdtype(aval.dtype, np.inexact):
      raise TypeError(f"pow does not accept dtype {aval.dtype.name} at position {position}. "
                      f"Accepted dtypes at position {position} are subtypes of {accepted}.")
  if y.dtype != x.dtype and not dtypes.issubdtype(y.dtype, np.integer):
    raise TypeError("the first argument to pow must have an inexact dtype (float or complex), "
                    "and the second argument must have an inexact or integer dtype, and two "
                    "inexact dtypes must match, but got "
                    f"{x.dtype.name} and {y.dtype.name} respectively.")
  shape = naryop_abstract_eval("pow", ("any", "any"))(x.update(dtype=y.dtype), y).shape
  return core.ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)


pow_p = standard_primitive("pow", _pow_abstract_eval, None)


def _pow_jvp_lhs(t, ans, x, y):
  # d x**y / dx = y x**(y - 1); for an integer y, 0 where y == 0 (even at x = 0).
  # Both are converted to x's dtype, strongly typed, as JAX does.
  is_int_power = dtypes.issubdtype(_dtype(y), np.integer)
  x, y = convert_element_type(x, _dtype(x)), convert_element_type(y, _dtype(x))
  if is_int_power:
    shape = _out_shape(x, y)
    x, y = _maybe_broadcast(shape, x), _maybe_broadcast(shape, y)
    jac = select_n(eq(y, _const(y, 0)),
                   mul(_replace_zero(y), pow(x, sub(y, _full_like(y, 1)))), _full_like(y, 0))
  else:
    jac = mul(y, pow(x, sub(y, _full_like(y, 1))))
  return mul(t, jac)


def _pow_jvp_rhs(t, ans, x, y):
  # d x**y / dy = log(x) x**y (log 1 where x == 0)
  return convert_element_type(mul(t, mul(log(_replace_zero(x)), ans)), _dtype(y))


ad.defjvp2(pow_p, _pow_jvp_lhs, _pow_jvp_rhs)
batching.defbroadcasting(pow_p)


@pow_p.def_lowering
def _pow_lowering(ctx, x, y):
  out = ctx.avals_out[0]
  x_aval, y_aval = ctx.avals_in
  if y_aval.dtype != x_aval.dtype:
    y = ctx.op1("stablehlo.convert", [y], hlo.tensor_type(y_aval.shape, x_aval.dtype))
  x = ctx.broadcast_to(x, x_aval, out)
  y = ctx.broadcast_to(y, y_aval.update(dtype=x_aval.dtype), out)
  return ctx.op1("stablehlo.power", [x, y], hlo.aval_type(out))
