"""Elementwise jnp functions (NumPy's ufuncs) over lax, with JAX's promotion."""
from __future__ import annotations

import numpy as np

from xjax._src import dtypes
from xjax._src.lax import elementwise as lax
from xjax._src.numpy.util import (check_arraylike, promote_args, promote_args_inexact,
                                  promote_args_numeric, promote_dtypes_inexact,
                                  promote_dtypes_numeric, dtype_of)


def _binary(name, lax_fn, promote=promote_args, doc=""):
  def fn(x, y, /):
    x, y = promote(name, x, y)
    return lax_fn(x, y)
  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = (f"Elementwise {doc}, with NumPy broadcasting and JAX's type promotion.\n\n"
                "  Args:\n    x, y: arrays or scalars.\n\n  Returns:\n    An array of the "
                "broadcast shape.\n\n  Raises:\n    TypeError: an argument is not an array or "
                f"scalar, or the shapes do not broadcast.\n\n  Mirrors `jax.numpy.{name}`.\n  ")
  return fn


def _unary(name, lax_fn, promote=promote_args_inexact, doc=""):
  def fn(x, /):
    (x,) = promote(name, x)
    return lax_fn(x)
  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = (f"Elementwise {doc}.\n\n  Args:\n    x: an array or scalar.\n\n"
                f"  Returns:\n    An array of x's shape.\n\n  Mirrors `jax.numpy.{name}`.\n  ")
  return fn


add = _binary("add", lax.add, doc="x + y")
subtract = _binary("subtract", lax.sub, doc="x - y")
multiply = _binary("multiply", lax.mul, doc="x * y")
true_divide = _binary("true_divide", lax.div, promote_args_inexact, doc="x / y (true division)")
divide = true_divide
maximum = _binary("maximum", lax.max, doc="maximum (NaN-propagating)")
minimum = _binary("minimum", lax.min, doc="minimum (NaN-propagating)")
equal = _binary("equal", lax.eq, doc="x == y")
not_equal = _binary("not_equal", lax.ne, doc="x != y")
less = _binary("less", lax.lt, doc="x < y")
less_equal = _binary("less_equal", lax.le, doc="x <= y")
greater = _binary("greater", lax.gt, doc="x > y")
greater_equal = _binary("greater_equal", lax.ge, doc="x >= y")
arctan2 = _binary("arctan2", lax.atan2, promote_args_inexact, doc="arctan(x / y) by quadrant")
nextafter = _binary("nextafter", lax.nextafter, promote_args_inexact, doc="next float after x toward y")


def _bitwise(name, lax_fn, doc):
  def check(fun_name, x, y):
    x, y = promote_args(fun_name, x, y)
    if not (dtypes.issubdtype(dtype_of(x), np.integer) or dtype_of(x) == np.bool_):
      raise TypeError(f"{fun_name} requires integer or boolean arguments, got {dtype_of(x).name}")
    return x, y
  return _binary(name, lax_fn, check, doc)


bitwise_and = _bitwise("bitwise_and", lax.bitwise_and, "bitwise AND")
bitwise_or = _bitwise("bitwise_or", lax.bitwise_or, "bitwise OR")
bitwise_xor = _bitwise("bitwise_xor", lax.bitwise_xor, "bitwise XOR")
logical_and = _binary("logical_and", lambda x, y: lax.bitwise_and(_to_bool(x), _to_bool(y)), doc="logical AND")
logical_or = _binary("logical_or", lambda x, y: lax.bitwise_or(_to_bool(x), _to_bool(y)), doc="logical OR")
logical_xor = _binary("logical_xor", lambda x, y: lax.bitwise_xor(_to_bool(x), _to_bool(y)), doc="logical XOR")


def _to_bool(x):
  return lax.convert_element_type(x, np.bool_) if dtype_of(x) != np.bool_ else x


def logical_not(x, /):
  """Elementwise logical NOT (mirrors `jax.numpy.logical_not`)."""
  check_arraylike("logical_not", x)
  return lax.bitwise_not(_to_bool(x))


def bitwise_not(x, /):
  """Elementwise bitwise NOT of an integer or boolean array (mirrors `jax.numpy.bitwise_not`)."""
  check_arraylike("bitwise_not", x)
  return lax.bitwise_not(x)


invert = bitwise_not


def _shift(name, arithmetic):
  def fn(x, y, /):
    x, y = promote_args(name, x, y)
    if arithmetic and dtypes.issubdtype(dtype_of(x), np.signedinteger):
      return lax.shift_right_arithmetic(x, y)
    if name == "left_shift":
      return lax.shift_left(x, y)
    return lax.shift_right_logical(x, y)
  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = f"Elementwise {name.replace('_', ' ')} (mirrors `jax.numpy.{name}`)."
  return fn


left_shift = _shift("left_shift", False)
right_shift = _shift("right_shift", True)

sin = _unary("sin", lax.sin, doc="sine")
cos = _unary("cos", lax.cos, doc="cosine")
tan = _unary("tan", lax.tan, doc="tangent")
arcsin = _unary("arcsin", lax.asin, doc="arcsine")
arccos = _unary("arccos", lax.acos, doc="arccosine")
arctan = _unary("arctan", lax.atan, doc="arctangent")
sinh = _unary("sinh", lax.sinh, doc="hyperbolic sine")
cosh = _unary("cosh", lax.cosh, doc="hyperbolic cosine")
tanh = _unary("tanh", lax.tanh, doc="hyperbolic tangent")
arcsinh = _unary("arcsinh", lax.asinh, doc="inverse hyperbolic sine")
arccosh = _unary("arccosh", lax.acosh, doc="inverse hyperbolic cosine")
arctanh = _unary("arctanh", lax.atanh, doc="inverse hyperbolic tangent")
exp = _unary("exp", lax.exp, doc="e**x")
exp2 = _unary("exp2", lax.exp2, doc="2**x")
expm1 = _unary("expm1", lax.expm1, doc="e**x - 1")
log = _unary("log", lax.log, doc="natural logarithm")
log1p = _unary("log1p", lax.log1p, doc="log(1 + x)")
sqrt = _unary("sqrt", lax.sqrt, doc="square root")
cbrt = _unary("cbrt", lax.cbrt, doc="cube root")
negative = _unary("negative", lax.neg, promote_args_numeric, doc="negation")
sign = _unary("sign", lax.sign, promote_args_numeric, doc="sign")
floor = _unary("floor", lambda x: x if dtypes.issubdtype(dtype_of(x), np.integer) else lax.floor(x),
               promote_args_numeric, doc="floor")
ceil = _unary("ceil", lambda x: x if dtypes.issubdtype(dtype_of(x), np.integer) else lax.ceil(x),
              promote_args_numeric, doc="ceiling")


def positive(x, /):
  """Elementwise +x (mirrors `jax.numpy.positive`)."""
  (x,) = promote_args_numeric("positive", x)
  return x


def absolute(x, /):
  """Elementwise absolute value (mirrors `jax.numpy.absolute`)."""
  check_arraylike("absolute", x)
  (x,) = promote_dtypes_numeric(x)
  if dtype_of(x) == np.bool_ or dtypes.issubdtype(dtype_of(x), np.unsignedinteger):
    return x
  return lax.abs(x)


abs = absolute  # noqa: A001 - NumPy's name


def power(x1, x2, /):
  """Elementwise x1**x2; integer exponents of integer bases stay integers.

  Mirrors `jax.numpy.power`.
  """
  check_arraylike("power", x1, x2)
  if isinstance(x2, int) and not isinstance(x2, bool):
    (x1,) = promote_dtypes_numeric(x1)
    return lax.integer_pow(x1, x2)
  x1, x2 = promote_args_numeric("power", x1, x2)
  dtype = dtype_of(x1)
  if dtypes.issubdtype(dtype, np.integer) or dtype == np.bool_:
    return _integer_power(x1, x2)
  return lax.pow(x1, x2)


def _integer_power(x1, x2):
  # Exponentiation by squaring over the bits of x2 (negative powers give 0, as JAX).
  from xjax._src.numpy import lax_numpy
  acc = lax_numpy.ones_like(x1)
  base = x1
  exponent = x2
  for _ in range(np.iinfo(dtype_of(x2)).bits if dtype_of(x2) != np.bool_ else 1):
    bit = lax.ne(lax.bitwise_and(exponent, lax_numpy.ones_like(exponent)), lax_numpy.zeros_like(exponent))
    acc = lax.select_n(bit, acc, lax.mul(acc, base))
    base = lax.mul(base, base)
    exponent = lax.shift_right_logical(exponent, lax_numpy.ones_like(exponent))
  negative_exp = lax.lt(x2, lax_numpy.zeros_like(x2)) if dtypes.issubdtype(dtype_of(x2), np.signedinteger) else None
  if negative_exp is not None:
    acc = lax.select_n(negative_exp, acc, lax_numpy.zeros_like(acc))
  return acc


def floor_divide(x1, x2, /):
  """Elementwise floor(x1 / x2) (mirrors `jax.numpy.floor_divide`)."""
  x1, x2 = promote_args_numeric("floor_divide", x1, x2)
  dtype = dtype_of(x1)
  if dtypes.issubdtype(dtype, np.unsignedinteger):
    return lax.div(x1, x2)
  if dtypes.issubdtype(dtype, np.integer):
    # Round toward negative infinity: subtract one where signs differ and there is a remainder.
    from xjax._src.numpy import lax_numpy
    zero = lax_numpy.zeros_like(x1)
    quotient = lax.div(x1, x2)
    select = lax.bitwise_and(lax.ne(lax.lt(x1, zero), lax.lt(x2, zero)),
                             lax.ne(lax.rem(x1, x2), zero))
    return lax.select_n(select, quotient, lax.sub(quotient, lax_numpy.ones_like(quotient)))
  if dtypes.issubdtype(dtype, np.complexfloating):
    raise TypeError("floor_divide does not support complex-valued inputs")
  return lax.floor(lax.div(x1, x2))


def remainder(x1, x2, /):
  """Elementwise remainder with the sign of x2 (mirrors `jax.numpy.remainder`)."""
  x1, x2 = promote_args_numeric("remainder", x1, x2)
  from xjax._src.numpy import lax_numpy
  zero = lax_numpy.zeros_like(x1)
  trunc_mod = lax.rem(x1, x2)
  do_plus = lax.bitwise_and(lax.ne(lax.lt(trunc_mod, zero), lax.lt(x2, zero)),
                            lax.ne(trunc_mod, zero))
  return lax.select_n(do_plus, trunc_mod, lax.add(trunc_mod, x2))


mod = remainder


def fmod(x1, x2, /):
  """Elementwise remainder with the sign of x1 (mirrors `jax.numpy.fmod`)."""
  x1, x2 = promote_args_numeric("fmod", x1, x2)
  return lax.rem(x1, x2)


def isnan(x, /):
  """Elementwise test for NaN (mirrors `jax.numpy.isnan`)."""
  check_arraylike("isnan", x)
  if not dtypes.issubdtype(dtype_of(x), np.inexact):
    from xjax._src.numpy import lax_numpy
    return lax_numpy.zeros_like(x, dtype=bool)
  return lax.ne(x, x)


def isinf(x, /):
  """Elementwise test for +inf or -inf (mirrors `jax.numpy.isinf`)."""
  check_arraylike("isinf", x)
  dtype = dtype_of(x)
  from xjax._src.numpy import lax_numpy
  if dtypes.issubdtype(dtype, np.complexfloating):
    return logical_or(isinf(lax.real(x)), isinf(lax.imag(x)))
  if not dtypes.issubdtype(dtype, np.floating):
    return lax_numpy.zeros_like(x, dtype=bool)
  return lax.eq(lax.abs(x), lax_numpy.full_like(x, np.inf))


def isfinite(x, /):
  """Elementwise test for finite values (mirrors `jax.numpy.isfinite`)."""
  check_arraylike("isfinite", x)
  dtype = dtype_of(x)
  if dtypes.issubdtype(dtype, np.floating):
    return lax.is_finite(x)
  if dtypes.issubdtype(dtype, np.complexfloating):
    return logical_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
  from xjax._src.numpy import lax_numpy
  return lax_numpy.full_like(x, True, dtype=bool)


def square(x, /):
  """Elementwise x * x (mirrors `jax.numpy.square`)."""
  (x,) = promote_args_numeric("square", x)
  return lax.integer_pow(x, 2)


def reciprocal(x, /):
  """Elementwise 1 / x (mirrors `jax.numpy.reciprocal`)."""
  (x,) = promote_args_inexact("reciprocal", x)
  return lax.integer_pow(x, -1)


def round(x, decimals: int = 0, out=None):  # noqa: A001 - NumPy's name
  """Rounds to `decimals` decimals, ties to even (mirrors `jax.numpy.round`)."""
  check_arraylike("round", x)
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
  dtype = dtype_of(x)
  if dtypes.issubdtype(dtype, np.integer) or dtype == np.bool_:
    if decimals < 0:
      raise NotImplementedError("integer np.round not implemented for decimals < 0")
    return x
  (x,) = promote_dtypes_inexact(x)
  if decimals == 0:
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
  factor = lax.convert_element_type(10.0 ** decimals, dtype_of(x), weak_type=True)
  return lax.div(lax.round(lax.mul(x, factor), lax.RoundingMethod.TO_NEAREST_EVEN), factor)


around = round
