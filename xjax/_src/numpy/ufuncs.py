"""Elementwise jnp functions (NumPy's ufuncs) over lax, with JAX's type promotion.

Each function is a `jit(inline=True)` wrapper, as in JAX: inside a trace its
equations join the enclosing jaxpr, and an eager call compiles one
executable for all its primitives. A few are plain (non-inline) `jit`s in
JAX and print as nested ``jit[name=...]`` equations: floor_divide,
remainder, fmod, divmod, isinf, arccosh, and the rarer ones marked below.
"""
from __future__ import annotations

import operator

import numpy as np

from xjax._src import dtypes
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.jit import jit
from xjax._src.lax import elementwise as lax
from xjax._src.lax import structural as lax_structural
from xjax._src.lax import transcendental as lax_tr
from xjax._src.numpy import creation
from xjax._src.numpy.util import (check_no_out, const_like, dtype_of, ensure_arraylike,
                                  promote_args, promote_args_inexact, promote_args_numeric,
                                  promote_dtypes_inexact, promote_dtypes_numeric, promote_shapes,
                                  where_)


def _asarray(x):
  """`x` as an Array or tracer (host constants are staged)."""
  return x if hasattr(x, "aval") else creation.array(x)


def _to_bool(x):
  return x if dtype_of(x) == np.bool_ else lax.ne(x, const_like(x, 0))


def _is_int_or_bool(dtype) -> bool:
  return dtype == np.bool_ or dtypes.issubdtype(dtype, np.integer)


def _is_complex(x) -> bool:
  return dtypes.issubdtype(dtype_of(x), np.complexfloating)


def _doc(name: str, what: str, nargs: int) -> str:
  args = "x: an array or scalar." if nargs == 1 else "x, y: arrays or scalars; they broadcast."
  return (f"Elementwise {what}.\n\n  Args:\n    {args}\n\n  Returns:\n    An array of the "
          f"{'input' if nargs == 1 else 'broadcast'} shape, with JAX's promoted dtype.\n\n"
          "  Raises:\n    TypeError: an argument is not an array or scalar (lists are refused).\n\n"
          f"  Mirrors `jax.numpy.{name}`.\n  ")


def _ufunc(name: str, what: str, nargs: int, inline: bool = True):
  """Decorator: names the function, gives it a docstring, and wraps it with jit."""
  def wrap(fn):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(name, what, nargs)
    return jit(fn, inline=inline)
  return wrap


def _unary(name, lax_fn, promote, what):
  def fn(x, /):
    return lax_fn(*promote(name, x))
  return _ufunc(name, what, 1)(fn)


def _binary(name, lax_fn, promote, what):
  def fn(x, y, /):
    return lax_fn(*promote(name, x, y))
  return _ufunc(name, what, 2)(fn)


# ----------------------------------------------------------------------------
# Unary floating-point functions

sin = _unary("sin", lax_tr.sin, promote_args_inexact, "sine")
cos = _unary("cos", lax_tr.cos, promote_args_inexact, "cosine")
tan = _unary("tan", lax_tr.tan, promote_args_inexact, "tangent")
arcsin = _unary("arcsin", lax_tr.asin, promote_args_inexact, "arcsine")
arccos = _unary("arccos", lax_tr.acos, promote_args_inexact, "arccosine")
arctan = _unary("arctan", lax_tr.atan, promote_args_inexact, "arctangent")
sinh = _unary("sinh", lax_tr.sinh, promote_args_inexact, "hyperbolic sine")
cosh = _unary("cosh", lax_tr.cosh, promote_args_inexact, "hyperbolic cosine")
tanh = _unary("tanh", lax_tr.tanh, promote_args_inexact, "hyperbolic tangent")
arcsinh = _unary("arcsinh", lax_tr.asinh, promote_args_inexact, "inverse hyperbolic sine")
arctanh = _unary("arctanh", lax_tr.atanh, promote_args_inexact, "inverse hyperbolic tangent")
exp = _unary("exp", lax.exp, promote_args_inexact, "exponential e**x")
exp2 = _unary("exp2", lax_tr.exp2, promote_args_inexact, "power of two 2**x")
expm1 = _unary("expm1", lax_tr.expm1, promote_args_inexact, "e**x - 1 (accurate near 0)")
log = _unary("log", lax_tr.log, promote_args_inexact, "natural logarithm")
log1p = _unary("log1p", lax.log1p, promote_args_inexact, "log(1 + x) (accurate near 0)")
sqrt = _unary("sqrt", lax_tr.sqrt, promote_args_inexact, "non-negative square root")
cbrt = _unary("cbrt", lax_tr.cbrt, promote_args_inexact, "cube root")


@_ufunc("arccosh", "inverse hyperbolic cosine", 1, inline=False)
def arccosh(x, /):
  out = lax_tr.acosh(*promote_args_inexact("arccosh", x))
  if _is_complex(out):  # NumPy's branch: non-negative real part
    out = where_(lax.lt(lax.real(out), const_like(lax.real(out), 0)), lax.neg(out), out)
  return out


@_ufunc("log2", "base-2 logarithm", 1)
def log2(x, /):
  (x,) = promote_args_inexact("log2", x)
  if _is_complex(x):
    r = lax_tr.log(x)
    ln2 = lax_tr.log(const_like(lax.real(r), 2))
    return lax.complex(lax.div(lax.real(r), ln2), lax.div(lax.imag(r), ln2))
  return lax.div(lax_tr.log(x), lax_tr.log(const_like(x, 2)))


@_ufunc("log10", "base-10 logarithm", 1)
def log10(x, /):
  (x,) = promote_args_inexact("log10", x)
  inv_ln10 = np.array(1 / np.log(10), dtypes.finfo(dtype_of(x)).dtype)
  if _is_complex(x):
    r = lax_tr.log(x)
    return lax.complex(lax.mul(lax.real(r), inv_ln10), lax.mul(lax.imag(r), inv_ln10))
  return lax.mul(lax_tr.log(x), inv_ln10)


@_ufunc("deg2rad", "conversion from degrees to radians", 1)
def deg2rad(x, /):
  (x,) = promote_args_inexact("deg2rad", x)
  return lax.mul(x, const_like(x, np.pi / 180))


@_ufunc("rad2deg", "conversion from radians to degrees", 1)
def rad2deg(x, /):
  (x,) = promote_args_inexact("rad2deg", x)
  return lax.mul(x, const_like(x, 180 / np.pi))


radians = deg2rad
degrees = rad2deg


@_ufunc("reciprocal", "reciprocal 1 / x", 1)
def reciprocal(x, /):
  (x,) = promote_dtypes_inexact(ensure_arraylike("reciprocal", x))
  return lax.integer_pow(x, -1)


# ----------------------------------------------------------------------------
# Unary numeric functions

negative = _unary("negative", lax.neg, promote_args, "negation -x")
sign = _unary("sign", lax.sign, promote_args, "sign (-1, 0 or 1; x / |x| for complex)")


@_ufunc("positive", "identity +x", 1)
def positive(x, /):
  return _asarray(*promote_args("positive", x))


@_ufunc("square", "square x * x", 1)
def square(x, /):
  (x,) = promote_dtypes_numeric(ensure_arraylike("square", x))
  return lax.square(x)


@_ufunc("absolute", "absolute value (modulus for complex)", 1)
def absolute(x, /):
  x = ensure_arraylike("absolute", x)
  dtype = dtype_of(x)
  if dtype == np.bool_ or dtypes.issubdtype(dtype, np.unsignedinteger):
    return _asarray(x)
  return lax.abs(x)


abs = absolute  # noqa: A001 - NumPy's name


@_ufunc("fabs", "absolute value of real input, as a float", 1)
def fabs(x, /):
  x = ensure_arraylike("fabs", x)
  if _is_complex(x):
    raise TypeError("ufunc 'fabs' does not support complex dtypes")
  return lax.abs(*promote_args_inexact("fabs", x))


@_ufunc("floor", "floor (integers are returned unchanged)", 1)
def floor(x, /):
  x = ensure_arraylike("floor", x)
  if _is_int_or_bool(dtype_of(x)):
    return _asarray(x)
  return lax.floor(*promote_args_inexact("floor", x))


@_ufunc("ceil", "ceiling (integers are returned unchanged)", 1)
def ceil(x, /):
  x = ensure_arraylike("ceil", x)
  if _is_int_or_bool(dtype_of(x)):
    return _asarray(x)
  return lax.ceil(*promote_args_inexact("ceil", x))


@_ufunc("trunc", "rounding toward zero", 1, inline=False)
def trunc(x, /):
  x = ensure_arraylike("trunc", x)
  if _is_int_or_bool(dtype_of(x)):
    return _asarray(x)
  return where_(lax.lt(x, const_like(x, 0)), ceil(x), floor(x))


@_ufunc("rint", "rounding to the nearest integer, ties to even", 1, inline=False)
def rint(x, /):
  x = ensure_arraylike("rint", x)
  dtype = dtype_of(x)
  if _is_int_or_bool(dtype):
    return lax.convert_element_type(x, dtypes.default_float_dtype())
  if _is_complex(x):
    return lax.complex(rint(lax.real(x)), rint(lax.imag(x)))
  return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


@_ufunc("conjugate", "complex conjugate", 1)
def conjugate(x, /):
  x = ensure_arraylike("conjugate", x)
  return lax.conj(x) if _is_complex(x) else _asarray(x)


conj = conjugate


@_ufunc("real", "real part", 1)
def real(val, /):
  val = ensure_arraylike("real", val)
  return lax.real(val) if _is_complex(val) else _asarray(val)


@_ufunc("imag", "imaginary part", 1)
def imag(val, /):
  val = ensure_arraylike("imag", val)
  if _is_complex(val):
    return lax.imag(val)
  return creation.full_like(val, 0)


@_ufunc("signbit", "test of the sign bit", 1, inline=False)
def signbit(x, /):
  (x,) = promote_args("signbit", x)
  dtype = dtype_of(x)
  if dtypes.issubdtype(dtype, np.integer):
    return lax.lt(x, const_like(x, 0))
  if dtype == np.bool_:
    return creation.full_like(x, False, dtype=np.bool_)
  if not dtypes.issubdtype(dtype, np.floating):
    raise ValueError(f"jax.numpy.signbit is not well defined for {dtype}")
  info = dtypes.finfo(dtype)
  int_type = {16: np.int16, 32: np.int32, 64: np.int64}.get(info.bits)
  if int_type is None:
    raise NotImplementedError("jax.numpy.signbit only supports 16, 32, and 64-bit types.")
  bits = lax.bitcast_convert_type(x, int_type)
  return lax.lt(bits, np.array(0, int_type))


# ----------------------------------------------------------------------------
# Predicates


@_ufunc("isnan", "test for NaN", 1)
def isnan(x, /):
  x = ensure_arraylike("isnan", x)
  return lax.ne(x, x)


@_ufunc("isinf", "test for positive or negative infinity", 1, inline=False)
def isinf(x, /):
  x = ensure_arraylike("isinf", x)
  dtype = dtype_of(x)
  if dtypes.issubdtype(dtype, np.floating):
    return lax.eq(lax.abs(x), const_like(x, np.inf))
  if dtypes.issubdtype(dtype, np.complexfloating):
    re, im = lax.real(x), lax.imag(x)
    return lax.bitwise_or(lax.eq(lax.abs(re), const_like(re, np.inf)),
                          lax.eq(lax.abs(im), const_like(im, np.inf)))
  return creation.full_like(x, False, dtype=np.bool_)


@_ufunc("isfinite", "test for finite values (neither infinite nor NaN)", 1)
def isfinite(x, /):
  x = ensure_arraylike("isfinite", x)
  dtype = dtype_of(x)
  if dtypes.issubdtype(dtype, np.floating):
    return lax.is_finite(x)
  if dtypes.issubdtype(dtype, np.complexfloating):
    return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
  return creation.full_like(x, True, dtype=np.bool_)


def isposinf(x, /, out=None):
  """Elementwise test for +inf (mirrors `jax.numpy.isposinf`; `out` is unsupported)."""
  check_no_out("isposinf", out)
  x = ensure_arraylike("isposinf", x)
  if not dtypes.issubdtype(dtype_of(x), np.inexact):
    return creation.full_like(x, False, dtype=np.bool_)
  x = real(x)
  return lax.eq(x, const_like(x, np.inf))


def isneginf(x, /, out=None):
  """Elementwise test for -inf (mirrors `jax.numpy.isneginf`; `out` is unsupported)."""
  check_no_out("isneginf", out)
  x = ensure_arraylike("isneginf", x)
  if not dtypes.issubdtype(dtype_of(x), np.inexact):
    return creation.full_like(x, False, dtype=np.bool_)
  x = real(x)
  return lax.eq(x, const_like(x, -np.inf))


# ----------------------------------------------------------------------------
# Binary arithmetic


@_ufunc("add", "sum x + y (logical OR for bools)", 2)
def add(x, y, /):
  x, y = promote_args("add", x, y)
  return lax.bitwise_or(x, y) if dtype_of(x) == np.bool_ else lax.add(x, y)


@_ufunc("multiply", "product x * y (logical AND for bools)", 2)
def multiply(x, y, /):
  x, y = promote_args("multiply", x, y)
  return lax.bitwise_and(x, y) if dtype_of(x) == np.bool_ else lax.mul(x, y)


subtract = _binary("subtract", lax.sub, promote_args, "difference x - y")
true_divide = _binary("true_divide", lax.div, promote_args_inexact, "true division x / y")
divide = true_divide
maximum = _binary("maximum", lax.max, promote_args, "maximum (NaN-propagating)")
minimum = _binary("minimum", lax.min, promote_args, "minimum (NaN-propagating)")
arctan2 = _binary("arctan2", lax_tr.atan2, promote_args_inexact, "arctangent of x / y by quadrant")
nextafter = _binary("nextafter", lax.nextafter, promote_args_inexact,
                    "next representable value after x toward y")
float_power = _binary("float_power", lax_tr.pow, promote_args_inexact,
                      "power x**y in floating point")


@_ufunc("floor_divide", "floor division x // y", 2, inline=False)
def floor_divide(x1, x2, /):
  x1, x2 = promote_args_numeric("floor_divide", x1, x2)
  dtype = dtype_of(x1)
  if dtypes.issubdtype(dtype, np.unsignedinteger):
    return lax.div(x1, x2)
  if dtypes.issubdtype(dtype, np.integer):
    # Truncating division, then one less where the signs differ and there is a remainder.
    quotient = lax.div(x1, x2)
    select = logical_and(not_equal(lax.sign(x1), lax.sign(x2)),
                         not_equal(lax.rem(x1, x2), 0))
    return where_(select, subtract(quotient, 1), quotient)
  if dtypes.issubdtype(dtype, np.complexfloating):
    raise TypeError("floor_divide does not support complex-valued inputs")
  return _float_divmod(x1, x2)[0]


def _float_divmod(x1, x2):
  # CPython's float_divmod: the quotient is rounded so that x1 == div * x2 + mod.
  mod = lax.rem(x1, x2)
  corrected = where_(equal(x2, 0), x1, lax.sub(x1, mod))
  div = lax.div(corrected, x2)
  ind = lax.bitwise_and(not_equal(mod, 0), not_equal(lax.sign(x2), lax.sign(mod)))
  mod = lax.select_n(ind, mod, add(mod, x2))
  div = lax.select_n(ind, div, subtract(div, 1.0))
  return lax.round(div), mod


@_ufunc("remainder", "remainder of floor division, with the sign of y", 2, inline=False)
def remainder(x1, x2, /):
  x1, x2 = promote_args_numeric("remainder", x1, x2)
  zero = const_like(x1, 0)
  if dtypes.issubdtype(dtype_of(x2), np.integer):
    x2 = where_(equal(x2, 0), lax_structural.full_like(x2, 1), x2)
  trunc_mod = lax.rem(x1, x2)
  trunc_mod_not_zero = lax.ne(trunc_mod, zero)
  do_plus = lax.bitwise_and(lax.ne(lax.lt(trunc_mod, zero), lax.lt(x2, zero)),
                            trunc_mod_not_zero)
  return lax.select_n(do_plus, trunc_mod, lax.add(trunc_mod, x2))


mod = remainder


@_ufunc("fmod", "remainder of truncating division, with the sign of x", 2, inline=False)
def fmod(x1, x2, /):
  x1, x2 = ensure_arraylike("fmod", x1, x2)
  if dtypes.issubdtype(dtypes.result_type(x1, x2), np.integer):
    x2 = where_(equal(x2, 0), lax_structural.full_like(x2, 1), x2)
  return lax.rem(*promote_args_numeric("fmod", x1, x2))


@jit
def divmod(x1, x2, /):  # noqa: A001 - NumPy's name
  """Elementwise ``(floor_divide(x1, x2), remainder(x1, x2))``.

  Mirrors `jax.numpy.divmod`.
  """
  x1, x2 = promote_args_numeric("divmod", x1, x2)
  if dtypes.issubdtype(dtype_of(x1), np.integer):
    return floor_divide(x1, x2), remainder(x1, x2)
  return _float_divmod(x1, x2)


def power(x1, x2, /):
  """Elementwise x1**x2.

  A concrete integer exponent uses `lax.integer_pow` (exact repeated
  multiplication); integer bases with integer exponents stay integers
  (negative exponents give 0, except for bases 1 and -1).

  Args:
    x1, x2: arrays or scalars; they broadcast.

  Returns:
    An array of the broadcast shape.

  Mirrors `jax.numpy.power`.
  """
  x1, x2 = ensure_arraylike("power", x1, x2)
  if not hasattr(x2, "aval") or x2.aval.weak_type is not None:
    concrete = x2 if not hasattr(x2, "to_concrete_value") else x2.to_concrete_value()
    if hasattr(x2, "_value"):
      concrete = x2
    if concrete is not None and np.ndim(concrete) == 0:
      try:
        exponent = operator.index(concrete)
      except TypeError:
        pass
      else:
        (x1,) = promote_dtypes_numeric(x1)
        return lax.integer_pow(x1, exponent)
  return _power(x1, x2)


pow = power  # noqa: A001 - the array API's name


@jit(inline=True)
def _power(x1, x2):
  x1, x2 = promote_shapes("power", x1, x2)
  x1_, x2_ = promote_args_numeric("power", x1, x2)
  if _is_int_or_bool(dtype_of(x1_)):
    return _pow_int_int(x1_, x2_)
  if (dtypes.issubdtype(dtype_of(x1), np.inexact)
      and dtypes.issubdtype(dtype_of(x2), np.integer)):
    return lax_tr.pow(x1, x2)
  return lax_tr.pow(x1_, x2_)


def _pow_int_int(x1, x2):
  # Binary exponentiation over the low 6 bits of x2 (any larger power overflows).
  zero, one = const_like(x2, 0), const_like(x2, 1)
  acc = where_(lax.bitwise_and(lax.eq(x1, zero), lax.ne(x2, zero)), zero, one)
  for _ in range(6):
    acc = where_(lax.bitwise_and(x2, one), lax.mul(acc, x1), acc)
    x1 = lax.mul(x1, x1)
    x2 = lax.shift_right_logical(x2, one)
  return acc


@_ufunc("hypot", "hypotenuse sqrt(x**2 + y**2), without overflow", 2, inline=False)
def hypot(x1, x2, /):
  x1, x2 = promote_args_inexact("hypot", x1, x2)
  if _is_complex(x1):
    raise ValueError("jnp.hypot is not well defined for complex-valued inputs. "
                     "Please convert to real values first, such as by using abs(x)")
  x1, x2 = lax.abs(x1), lax.abs(x2)
  inf = const_like(x1, np.inf)
  idx_inf = lax.bitwise_or(lax.eq(x1, inf), lax.eq(x2, inf))
  x1, x2 = maximum(x1, x2), minimum(x1, x2)
  x1_zero = equal(x1, 0)
  safe = where_(equal(x1, 0), lax_structural.full_like(x1, 1), x1)
  x = where_(x1_zero, x1, multiply(x1, lax_tr.sqrt(add(1, lax.square(lax.div(x2, safe))))))
  return where_(idx_inf, const_like(x, np.inf), x)


@_ufunc("copysign", "magnitude of x with the sign of y", 2, inline=False)
def copysign(x1, x2, /):
  x1, x2 = promote_args_inexact("copysign", x1, x2)
  if _is_complex(x1):
    raise TypeError("copysign does not support complex-valued inputs")
  return where_(signbit(x2), lax.neg(lax.abs(x1)), lax.abs(x1))


@_ufunc("heaviside", "Heaviside step (y where x == 0)", 2, inline=False)
def heaviside(x1, x2, /):
  x1, x2 = promote_dtypes_inexact(*ensure_arraylike("heaviside", x1, x2))
  zero = const_like(x1, 0)
  return where_(lax.lt(x1, zero), zero,
                where_(lax.gt(x1, zero), const_like(x1, 1), where_(lax.ne(x1, x1), x1, x2)))


@_ufunc("fmax", "maximum, ignoring NaNs", 2, inline=False)
def fmax(x1, x2, /):
  return where_(logical_or(greater(x1, x2), isnan(x2)), x1, x2)


@_ufunc("fmin", "minimum, ignoring NaNs", 2, inline=False)
def fmin(x1, x2, /):
  return where_(logical_or(less(x1, x2), isnan(x2)), x1, x2)


@_ufunc("logaddexp", "log(exp(x) + exp(y)), computed stably", 2)
def logaddexp(x1, x2, /):
  x1, x2 = promote_args_inexact("logaddexp", x1, x2)
  return _logaddexp(x1, x2)


def _stable_logaddexp(x1, x2, exp, scale):
  """``amax + log1p(exp(-|x1 - x2|)) * scale``: exp/scale (e, 1) or (2, 1/ln 2)."""
  amax = lax.max(x1, x2)
  if _is_complex(x1):
    # log(e**a + e**b) = amax + log1p(e**(min - amax)), with min - amax = a + b - 2 amax.
    delta = lax.sub(lax.add(x1, x2), lax.mul(amax, const_like(amax, 2)))
    out = lax.add(amax, _scaled(lax.log1p(exp(delta)), scale))
    return lax.complex(lax.real(out), _wrap_between(lax.imag(out), np.pi * scale))
  delta = lax.sub(x1, x2)
  # Where delta is NaN (NaN inputs, or infinities of one sign) the answer is x1 + x2.
  is_nan = lax.ne(delta, delta)
  nan_case = lax.add(x1, x2)
  log_sum = lax.add(amax, _scaled(lax.log1p(exp(lax.neg(lax.abs(delta)))), scale))
  return lax.select_n(is_nan, log_sum, nan_case)


def _scaled(x, scale):
  # a constant of x's dtype (complex for complex x), as JAX's _const
  return x if scale == 1 else lax.mul(const_like(x, scale), x)


def _replace_inf(x):
  """`x` with +inf (of the real part) replaced by 0: keeps the JVP finite at infinities."""
  re_x = lax.real(x) if _is_complex(x) else x
  return lax.select_n(lax.eq(re_x, const_like(re_x, np.inf)), x, lax_structural.full_like(x, 0))


def _logaddexp_rule(name, exp, fn):
  # As JAX: d/dx log(exp(x) + exp(y)) = exp(x - out), so at ties (x == y, where the stable
  # formula's max and abs have kinks) each side gets 1/2, and infinities stay finite.
  def jvp(primals, tangents):
    (x1, x2), (t1, t2) = primals, tangents
    out = fn(x1, x2)
    weight = lambda x: exp(lax.sub(_replace_inf(x), _replace_inf(out)))
    return out, lax.add(lax.mul(t1, weight(x1)), lax.mul(t2, weight(x2)))
  jvp.__name__ = jvp.__qualname__ = name
  return jvp


def logaddexp_impl(x1, x2):
  return _stable_logaddexp(x1, x2, lax.exp, 1)


def logaddexp2_impl(x1, x2):
  return _stable_logaddexp(x1, x2, lax_tr.exp2, 1 / np.log(2))


logaddexp_impl.__name__ = logaddexp_impl.__qualname__ = "logaddexp"
logaddexp2_impl.__name__ = logaddexp2_impl.__qualname__ = "logaddexp2"
_logaddexp = custom_jvp(logaddexp_impl)
_logaddexp2 = custom_jvp(logaddexp2_impl)
_logaddexp_jvp = _logaddexp_rule("_logaddexp_jvp", lax.exp, _logaddexp)
_logaddexp2_jvp = _logaddexp_rule("_logaddexp2_jvp", lax_tr.exp2, _logaddexp2)
_logaddexp.defjvp(_logaddexp_jvp)
_logaddexp2.defjvp(_logaddexp2_jvp)


def _wrap_between(x, bound):
  # x shifted by multiples of 2 * bound into [-bound, bound).
  period = const_like(x, 2 * bound)
  rem = lax.rem(lax.add(x, const_like(x, bound)), period)
  rem = lax.select_n(lax.lt(rem, const_like(rem, 0)), rem, lax.add(rem, period))
  return lax.sub(rem, const_like(rem, bound))


# ----------------------------------------------------------------------------
# Comparisons


def _comparison(name, lax_fn, what):
  def fn(x, y, /):
    x, y = promote_args(name, x, y)
    if _is_complex(x) and lax_fn not in (lax.eq, lax.ne):
      # Lexicographic order on (real, imag), as NumPy.
      return lax.select_n(lax.eq(lax.real(x), lax.real(y)),
                          lax_fn(lax.real(x), lax.real(y)), lax_fn(lax.imag(x), lax.imag(y)))
    return lax_fn(x, y)
  return _ufunc(name, what, 2)(fn)


equal = _comparison("equal", lax.eq, "test x == y")
not_equal = _comparison("not_equal", lax.ne, "test x != y")
less = _comparison("less", lax.lt, "test x < y")
less_equal = _comparison("less_equal", lax.le, "test x <= y")
greater = _comparison("greater", lax.gt, "test x > y")
greater_equal = _comparison("greater_equal", lax.ge, "test x >= y")


# ----------------------------------------------------------------------------
# Logical and bitwise operations


def _logical(name, lax_fn, what):
  def fn(x, y, /):
    return lax_fn(*map(_to_bool, promote_args(name, x, y)))
  return _ufunc(name, what, 2)(fn)


logical_and = _logical("logical_and", lax.bitwise_and, "logical AND")
logical_or = _logical("logical_or", lax.bitwise_or, "logical OR")
logical_xor = _logical("logical_xor", lax.bitwise_xor, "logical XOR")


@_ufunc("logical_not", "logical NOT", 1)
def logical_not(x, /):
  return lax.bitwise_not(*map(_to_bool, promote_args("logical_not", x)))


bitwise_and = _binary("bitwise_and", lax.bitwise_and, promote_args, "bitwise AND")
bitwise_or = _binary("bitwise_or", lax.bitwise_or, promote_args, "bitwise OR")
bitwise_xor = _binary("bitwise_xor", lax.bitwise_xor, promote_args, "bitwise XOR")
bitwise_not = _unary("bitwise_not", lax.bitwise_not, promote_args, "bitwise NOT")
invert = _unary("invert", lax.bitwise_not, promote_args, "bitwise NOT")
bitwise_invert = _unary("bitwise_invert", lax.bitwise_not, promote_args, "bitwise NOT")
left_shift = _binary("left_shift", lax.shift_left, promote_args_numeric, "left shift x << y")
bitwise_left_shift = _binary("bitwise_left_shift", lax.shift_left, promote_args_numeric,
                             "left shift x << y")


@_ufunc("right_shift", "right shift x >> y (arithmetic for signed integers)", 2)
def right_shift(x1, x2, /):
  x1, x2 = promote_args_numeric("right_shift", x1, x2)
  if dtypes.issubdtype(dtype_of(x1), np.unsignedinteger):
    return lax.shift_right_logical(x1, x2)
  return lax.shift_right_arithmetic(x1, x2)


bitwise_right_shift = right_shift


# The array API's names.
acos, asin, atan = arccos, arcsin, arctan
acosh, asinh, atanh, atan2 = arccosh, arcsinh, arctanh, arctan2


# ----------------------------------------------------------------------------
# Rounding and clipping (jnp functions JAX defines as non-inline jits)


@jit(static_argnames=("decimals",))
def round(a, decimals: int = 0, out=None):  # noqa: A001 - NumPy's name
  """Rounds to `decimals` decimal places, ties to even.

  Args:
    a: an array or scalar.
    decimals: number of decimals (negative rounds to tens, hundreds...).
    out: unsupported; must be None.

  Returns:
    An array of a's shape and dtype (integers are returned unchanged).

  Raises:
    NotImplementedError: `out` is given, or integer input with decimals < 0.

  Mirrors `jax.numpy.round`.
  """
  a = ensure_arraylike("round", a)
  decimals = operator.index(decimals)
  check_no_out("round", out)
  dtype = dtype_of(a)
  if _is_int_or_bool(dtype):
    if decimals < 0:
      raise NotImplementedError("integer np.round not implemented for decimals < 0")
    return a

  def round_float(x):
    if decimals == 0:
      return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
    x = lax.convert_element_type(x, np.float32) if dtype == np.float16 else x
    factor = const_like(x, 10 ** decimals)
    out = lax.div(lax.round(lax.mul(x, factor), lax.RoundingMethod.TO_NEAREST_EVEN), factor)
    return lax.convert_element_type(out, dtype) if dtype == np.float16 else out

  if _is_complex(a):
    return lax.complex(round_float(lax.real(a)), round_float(lax.imag(a)))
  return round_float(a)


around = round
round_ = round


@jit
def clip(arr=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):  # noqa: A002
  """Clips the values of `arr` to the interval [min, max].

  Args:
    arr: an array or scalar.
    min: the lower bound (None for no bound); broadcasts against arr.
    max: the upper bound (None for no bound).
    a, a_min, a_max: NumPy's deprecated names for the same arguments.

  Returns:
    An array: ``minimum(max, maximum(min, arr))``.

  Mirrors `jax.numpy.clip`.
  """
  if a is not None:
    arr = a if arr is None else arr
  if a_min is not None:
    min = a_min if min is None else min
  if a_max is not None:
    max = a_max if max is None else max
  if arr is None:
    raise ValueError("No input was provided to the clip function.")
  arr = ensure_arraylike("clip", arr)
  if any(t is not None and np.iscomplexobj(t) for t in (arr, min, max)):
    raise ValueError("Clip received a complex value either through the input or the min/max "
                     "keywords. Complex values have no ordering and cannot be clipped. "
                     "Please convert to a real value or array by taking the real or "
                     "imaginary components via jax.numpy.real/imag respectively.")
  if min is not None:
    arr = maximum(min, arr)
  if max is not None:
    arr = minimum(max, arr)
  return _asarray(arr)


# ----------------------------------------------------------------------------
# Issue 13: angle, logaddexp2, bitwise_count


@_ufunc("logaddexp2", "log2(2**x + 2**y), computed stably", 2)
def logaddexp2(x1, x2, /):
  x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
  return _logaddexp2(x1, x2)


@jit(static_argnames=("deg",), inline=True)
def angle(z, deg: bool = False):
  """The angle of complex `z` (atan2 of the imaginary and real parts), in radians or degrees.

  Args:
    z: an array or scalar; real inputs have angle 0 or pi.
    deg: give degrees instead of radians.

  Returns:
    A real floating array of `z`'s shape (integers give float32, complex64
    gives float32).

  Raises:
    TypeError: `z` is not an array or scalar.

  Mirrors `jax.numpy.angle`.
  """
  z = ensure_arraylike("angle", z)
  if _is_complex(z):
    re, im = lax.real(z), lax.imag(z)
  else:
    (re,) = promote_dtypes_inexact(z)
    im = creation.zeros_like(re)
  out = lax_tr.atan2(im, re)
  return lax.mul(out, const_like(out, 180 / np.pi)) if deg else out


@_ufunc("bitwise_count", "number of 1 bits in the absolute value", 1)
def bitwise_count(x, /):
  x = ensure_arraylike("bitwise_count", x)
  if dtype_of(x) == np.bool_:
    x = lax.convert_element_type(x, np.uint8)
  elif dtypes.issubdtype(dtype_of(x), np.signedinteger):
    x = lax.abs(x)
  return lax.convert_element_type(lax.population_count(x), np.uint8)


# ----------------------------------------------------------------------------
# The ufunc objects (issue 13): as in JAX 0.10.2, these functions are
# `jnp.ufunc` instances with reduce/accumulate/at/outer/reduceat; calling one
# calls the jitted function above directly.

from xjax._src.numpy import ufunc_api as _ufunc_api  # noqa: E402 - needs the functions above

negative = _ufunc_api.unary_ufunc(negative)
add = _ufunc_api.binary_ufunc(add)
multiply = _ufunc_api.binary_ufunc(multiply)
subtract = _ufunc_api.binary_ufunc(subtract)
maximum = _ufunc_api.binary_ufunc(maximum)
minimum = _ufunc_api.binary_ufunc(minimum)
logical_and = _ufunc_api.binary_ufunc(logical_and)
logical_or = _ufunc_api.binary_ufunc(logical_or)
logical_xor = _ufunc_api.binary_ufunc(logical_xor)
bitwise_and = _ufunc_api.binary_ufunc(bitwise_and)
bitwise_or = _ufunc_api.binary_ufunc(bitwise_or)
bitwise_xor = _ufunc_api.binary_ufunc(bitwise_xor)
logaddexp = _ufunc_api.binary_ufunc(logaddexp)
logaddexp2 = _ufunc_api.binary_ufunc(logaddexp2)
