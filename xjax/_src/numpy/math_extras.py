"""Assorted jnp math functions composed from lax and other jnp functions.

Number theory (gcd, lcm), float decomposition (ldexp, frexp, modf, spacing),
cleaning (nan_to_num), finite differences (diff, ediff1d, gradient, unwrap),
interpolation (interp), products (cross, kron), special functions (sinc, i0),
window functions, and the real/complex predicates. No new primitives.
"""
from __future__ import annotations

import operator

import numpy as np

from xjax._src import dtypes
from xjax._src.api import jvp
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.jit import jit
from xjax._src.lax.control_flow import loops
from xjax._src.lax import elementwise as lax
from xjax._src.lax import slicing as lax_slicing
from xjax._src.numpy import creation, lax_numpy, reductions, sorting, statistics, ufuncs
from xjax._src.numpy.util import (canonicalize_axis, check_arraylike, check_no_out, concrete_int,
                                  const_like, dtype_of, ensure_arraylike, ndim,
                                  promote_args, promote_args_inexact, promote_dtypes, promote_dtypes_inexact,
                                  shape, where_)


def _is_complex(x) -> bool:
  return dtypes.issubdtype(dtype_of(x), np.complexfloating)


# ----------------------------------------------------------------------------
# Number theory


def _check_integer(name, x1, x2):
  for x in (x1, x2):
    if not dtypes.issubdtype(dtype_of(x), np.integer):
      raise ValueError(f"Arguments to jax.numpy.{name} must be integers.")


@jit
def gcd(x1, x2):
  """Elementwise greatest common divisor of integers (Euclid's algorithm).

  Args:
    x1, x2: integer arrays or scalars; they broadcast.

  Returns:
    A non-negative integer array of the broadcast shape and promoted dtype.

  Raises:
    ValueError: an argument is not of an integer dtype (floats and bools).

  Mirrors `jax.numpy.gcd`.
  """
  x1, x2 = promote_args("gcd", x1, x2)
  _check_integer("gcd", x1, x2)
  x1, x2 = lax_numpy.broadcast_arrays(ufuncs.absolute(x1), ufuncs.absolute(x2))

  def cond(carry):
    _, b = carry
    return reductions.any(ufuncs.not_equal(b, 0))

  def body(carry):
    a, b = carry
    nonzero = ufuncs.not_equal(b, 0)
    safe_b = where_(nonzero, b, creation.ones_like(b))
    return where_(nonzero, b, a), where_(nonzero, lax.rem(a, safe_b), creation.zeros_like(b))

  return loops.while_loop(cond, body, (x1, x2))[0]


@jit
def lcm(x1, x2):
  """Elementwise least common multiple of integers (0 where either is 0).

  Args:
    x1, x2: integer arrays or scalars; they broadcast.

  Returns:
    An integer array of the broadcast shape and promoted dtype: ``|x1| * (|x2| // gcd)``,
    non-negative unless that product wraps around past the dtype's range.

  Raises:
    ValueError: an argument is not of an integer dtype (floats and bools).

  Mirrors `jax.numpy.lcm`.
  """
  x1, x2 = promote_args("lcm", x1, x2)
  _check_integer("lcm", x1, x2)
  # As in JAX: |x1| * (|x2| // gcd), so a product past the dtype's range wraps around
  # (and may come out negative).
  x1, x2 = ufuncs.absolute(x1), ufuncs.absolute(x2)
  d = gcd(x1, x2)
  safe_d = where_(ufuncs.equal(d, 0), creation.ones_like(d), d)
  return where_(ufuncs.equal(d, 0), creation.zeros_like(d),
                ufuncs.multiply(x1, ufuncs.floor_divide(x2, safe_d)))


# ----------------------------------------------------------------------------
# Floating-point decomposition


def _int_type(dtype):
  return {16: np.int16, 32: np.int32, 64: np.int64}[dtypes.finfo(dtype).bits]


def _pow2(k, dtype):
  """2**k for integer `k` in the normal exponent range of `dtype`, built from its bits."""
  info = dtypes.finfo(dtype)
  int_t = _int_type(dtype)
  biased = lax.convert_element_type(lax.add(k, const_like(k, 1 - info.minexp)), int_t)
  return lax.bitcast_convert_type(lax.shift_left(biased, np.array(info.nmant, int_t)), dtype)


@jit
def ldexp(x1, x2, /):
  """Elementwise x1 * 2**x2, computed by exact power-of-two scaling.

  Args:
    x1: an array or scalar (integers and bools are promoted to float).
    x2: an integer array or scalar, the exponent; they broadcast.

  Returns:
    A floating array of the broadcast shape with x1's inexact dtype.

  Raises:
    ValueError: x2 is not integer (or bool), or x1 is complex.

  Mirrors `jax.numpy.ldexp`.
  """
  x1, x2 = ensure_arraylike("ldexp", x1, x2)
  d1, d2 = dtype_of(x1), dtype_of(x2)
  if _is_complex(x1) or not (d2 == np.bool_ or dtypes.issubdtype(d2, np.integer)):
    raise ValueError(f"ldexp not supported for input types {(d1, d2)}")
  (x1,) = promote_dtypes_inexact(x1)
  x1, x2 = lax_numpy.broadcast_arrays(x1, x2)
  dtype = dtype_of(x1)
  info = dtypes.finfo(dtype)
  k = lax.convert_element_type(x2, np.int32)
  # Clipped so that three factors, each a normal power of two, cover every finite result.
  step = min(info.maxexp - 1, -info.minexp)
  bound = 3 * step
  k = lax.clamp(np.array(-bound, np.int32), k, np.array(bound, np.int32))
  out = lax.convert_element_type(x1, dtype)
  for _ in range(3):
    part = lax.clamp(np.array(-step, np.int32), k, np.array(step, np.int32))
    out = lax.mul(out, _pow2(part, dtype))
    k = lax.sub(k, part)
  return out


@jit
def frexp(x, /):
  """Splits x into mantissa and exponent: x == mantissa * 2**exponent.

  Args:
    x: a real array or scalar (integers are promoted to float).

  Returns:
    ``(mantissa, exponent)``: the mantissa has x's inexact dtype and
    magnitude in [0.5, 1) (or is x itself for 0, inf and NaN, whose
    exponent is 0); the exponent is int32.

  Raises:
    TypeError: x is complex.

  Mirrors `jax.numpy.frexp`.
  """
  x = ensure_arraylike("frexp", x)
  if _is_complex(x):
    raise TypeError("frexp does not support complex-valued inputs")
  (x,) = promote_dtypes_inexact(x)
  return _frexp(lax.convert_element_type(x, dtype_of(x)))


@custom_jvp
def _frexp(x):
  dtype = dtype_of(x)
  info = dtypes.finfo(dtype)
  int_t = _int_type(dtype)
  # Subnormals are scaled into the normal range first, and the exponent corrected.
  shift = info.nmant + 1
  subnormal = lax.bitwise_and(lax.ne(x, const_like(x, 0)),
                              lax.lt(lax.abs(x), const_like(x, info.smallest_normal)))
  x_norm = where_(subnormal, lax.mul(x, const_like(x, 2.0 ** shift)), x)
  bits = lax.bitcast_convert_type(x_norm, int_t)
  nexp_bits = info.bits - 1 - info.nmant
  exp_mask = (1 << nexp_bits) - 1
  bias = 1 - info.minexp
  biased = lax.bitwise_and(lax.shift_right_logical(bits, np.array(info.nmant, int_t)),
                           np.array(exp_mask, int_t))
  exponent = lax.convert_element_type(lax.sub(biased, np.array(bias - 1, int_t)), np.int32)
  exponent = lax.sub(exponent, lax.convert_element_type(subnormal, np.int32) * np.int32(shift))
  clear = np.array(~(exp_mask << info.nmant), int_t)
  mant_bits = lax.bitwise_or(lax.bitwise_and(bits, clear),
                             np.array((bias - 1) << info.nmant, int_t))
  mantissa = lax.bitcast_convert_type(mant_bits, dtype)
  special = lax.bitwise_or(lax.eq(x, const_like(x, 0)), lax.bitwise_not(lax.is_finite(x)))
  return (where_(special, x, mantissa),
          where_(special, creation.zeros_like(exponent), exponent))


@_frexp.defjvp
def _frexp_jvp(primals, tangents):
  # As JAX: the mantissa moves as x / 2**exponent (the exponent is locally constant).
  (x,), (t,) = primals, tangents
  mantissa, exponent = _frexp(x)
  scale = ufuncs.exp2(lax.neg(lax.convert_element_type(exponent, dtype_of(t))))
  return (mantissa, exponent), (lax.mul(t, scale), np.zeros(np.shape(exponent), dtypes.float0))


@jit
def modf(x, /, out=None):
  """Splits x into fractional and integral parts, both with x's sign.

  Args:
    x: an array or scalar (integers are promoted to float).
    out: unsupported; must be None.

  Returns:
    ``(fractional, integral)``, floating arrays of x's shape; as in JAX the
    fractional part of an infinity is NaN.

  Raises:
    NotImplementedError: `out` is given.

  Mirrors `jax.numpy.modf`.
  """
  check_no_out("modf", out)
  (x,) = promote_args_inexact("modf", x)
  whole = ufuncs.trunc(x)
  return ufuncs.subtract(x, whole), whole


@jit
def spacing(x, /):
  """Elementwise distance from x to the next representable value away from zero.

  Args:
    x: a real array or scalar (integers are promoted to float).

  Returns:
    A floating array of x's shape, negative where x is negative (except for
    float16, where the step is always toward +inf, as in NumPy and JAX);
    NaN for infinities and NaN.

  Raises:
    ValueError: x is complex.

  Mirrors `jax.numpy.spacing`.
  """
  (x,) = promote_args_inexact("spacing", x)
  if _is_complex(x):
    raise ValueError("jnp.spacing is not defined for complex inputs.")
  dtype = dtype_of(x)
  x = lax.convert_element_type(x, dtype)
  inf = const_like(x, np.inf)
  if dtype == np.float16:  # NumPy's (and JAX's) float16 rule: always toward +inf
    return lax.sub(lax.nextafter(x, inf), x)
  out = lax.sub(lax.nextafter(x, ufuncs.copysign(inf, x)), x)
  # A zero difference (x = +-0 under flush-to-zero) is the smallest subnormal, signed as x.
  tiny = lax.nextafter(const_like(x, 0), const_like(x, 1))
  return where_(lax.eq(out, const_like(x, 0)), ufuncs.copysign(tiny, x), out)


@jit
def nan_to_num(x, copy: bool = True, nan=0.0, posinf=None, neginf=None):
  """Replaces NaN, +inf and -inf in x by finite numbers.

  Args:
    x: an array or scalar; integer and bool input is returned unchanged.
      Complex input is cleaned in its real and imaginary parts.
    copy: ignored (JAX arrays are immutable).
    nan: the value for NaN.
    posinf: the value for +inf (default: the dtype's largest finite value).
    neginf: the value for -inf (default: the dtype's most negative value).

  Returns:
    An array of x's shape and dtype.

  Mirrors `jax.numpy.nan_to_num`.
  """
  del copy
  x = ensure_arraylike("nan_to_num", x)
  dtype = dtype_of(x)
  if not dtypes.issubdtype(dtype, np.inexact):
    return ufuncs._asarray(x)
  if _is_complex(x):
    return lax.complex(nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf),
                       nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf))
  info = dtypes.finfo(dtype)
  posinf = info.max if posinf is None else posinf
  neginf = info.min if neginf is None else neginf

  def fill(value):  # strongly typed, as in JAX: a weak float input gives a strong result
    return lax.convert_element_type(value, dtype)

  out = where_(ufuncs.isnan(x), fill(nan), x)
  out = where_(ufuncs.isposinf(out), fill(posinf), out)
  return where_(ufuncs.isneginf(out), fill(neginf), out)


# ----------------------------------------------------------------------------
# Finite differences


@jit(static_argnames=("n", "axis"))
def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None):
  """The n-th discrete difference of `a` along `axis`: ``a[i+1] - a[i]``, n times.

  Args:
    a: an array of at least one dimension.
    n: the number of times to difference (0 returns `a`).
    axis: the axis to difference along.
    prepend, append: values joined to `a` along `axis` first; scalars are
      broadcast to a slice of `a`.

  Returns:
    An array whose `axis` is n shorter (never below 0). Bool input uses
    not_equal instead of subtraction.

  Raises:
    ValueError: `a` is 0-d, `n` is negative, or `axis` is out of bounds.

  Mirrors `jax.numpy.diff`.
  """
  a = ensure_arraylike("diff", a)
  n = operator.index(n)
  if ndim(a) == 0:
    raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
  if n < 0:
    raise ValueError(f"order must be non-negative but got {n}")
  if n == 0:
    return ufuncs._asarray(a)
  nd = ndim(a)
  axis = canonicalize_axis(axis, nd)
  slice_shape = tuple(1 if i == axis else d for i, d in enumerate(shape(a)))

  def as_piece(value):  # a scalar becomes one slice of `a` along `axis`
    value = ensure_arraylike("diff", value)
    return lax_numpy.broadcast_to(value, slice_shape) if ndim(value) == 0 else value

  pieces = [as_piece(prepend)] if prepend is not None else []
  pieces.append(a)
  if append is not None:
    pieces.append(as_piece(append))
  if len(pieces) > 1:
    a = lax_numpy.concatenate(pieces, axis=axis)
  op = ufuncs.not_equal if dtype_of(a) == np.bool_ else ufuncs.subtract
  for _ in range(n):
    length = shape(a)[axis]
    if length == 0:
      break
    a = op(lax_slicing.slice_in_dim(a, 1, None, axis=axis),
           lax_slicing.slice_in_dim(a, 0, length - 1, axis=axis))
  return a


@jit
def ediff1d(ary, to_end=None, to_begin=None):
  """Differences between consecutive elements of the flattened array.

  Args:
    ary: an array (flattened first).
    to_end, to_begin: values (flattened, cast to ary's dtype) appended and
      prepended to the differences.

  Returns:
    A 1-D array of ary's dtype.

  Raises:
    TypeError: `ary` is bool (subtraction of bools is refused).

  Mirrors `jax.numpy.ediff1d`.
  """
  arr = lax_numpy.ravel(ensure_arraylike("ediff1d", ary))
  if dtype_of(arr) == np.bool_:
    raise TypeError("sub does not accept dtype bool at position 0. Accepted dtypes at position 0 "
                    "are subtypes of integer, floating, complexfloating.")
  result = ufuncs.subtract(arr[1:], arr[:-1])
  dtype = dtype_of(arr)
  parts = [result]
  if to_begin is not None:
    parts.insert(0, lax_numpy.ravel(creation.asarray(
        ensure_arraylike("ediff1d", to_begin), dtype=dtype)))
  if to_end is not None:
    parts.append(lax_numpy.ravel(creation.asarray(
        ensure_arraylike("ediff1d", to_end), dtype=dtype)))
  return lax_numpy.concatenate(parts) if len(parts) > 1 else result


@jit(static_argnames=("axis",))
def unwrap(p, discont=None, axis: int = -1, period=2 * np.pi):
  """Unwraps phases: removes jumps larger than `discont` by adding multiples of `period`.

  Args:
    p: a real array of at least one dimension.
    discont: the largest jump left alone (default ``period / 2``).
    axis: the axis along which to unwrap.
    period: the period of the values; it promotes with p (an integer p with an
      integer period keeps integer arithmetic, a float period gives floats, as in JAX).

  Returns:
    An array of p's shape, of the promoted dtype of p and period.

  Raises:
    ValueError: p is complex.
    IndexError: p is 0-d.

  Mirrors `jax.numpy.unwrap`.
  """
  p = ensure_arraylike("unwrap", p)
  # As JAX: p and period promote together (an int p with a float period gives floats).
  p, period = promote_dtypes(p, period)
  if _is_complex(p):
    raise ValueError("jnp.unwrap does not support complex inputs.")
  if ndim(p) == 0:
    raise IndexError("tuple index out of range")
  axis = canonicalize_axis(axis, ndim(p))
  if shape(p)[axis] == 0:
    return p
  if discont is None:
    discont = ufuncs.true_divide(period, 2)
  if dtypes.issubdtype(dtype_of(p), np.integer):
    interval = ufuncs.floor_divide(period, 2)
  else:
    interval = ufuncs.true_divide(period, 2)
  dd = diff(p, axis=axis)
  ddmod = ufuncs.subtract(ufuncs.remainder(ufuncs.add(dd, interval), period), interval)
  at_low = ufuncs.logical_and(ufuncs.equal(ddmod, ufuncs.negative(interval)),
                              ufuncs.greater(dd, 0))
  ddmod = where_(at_low, interval, ddmod)
  correction = where_(ufuncs.less(ufuncs.absolute(dd), discont), 0, ufuncs.subtract(ddmod, dd))
  rest = ufuncs.add(lax_slicing.slice_in_dim(p, 1, None, axis=axis),
                    reductions.cumsum(correction, axis=axis))
  return lax_numpy.concatenate([lax_slicing.slice_in_dim(p, 0, 1, axis=axis), rest], axis=axis)


def gradient(f, *varargs, axis=None, edge_order=None):
  """The gradient of sampled values by central differences (one-sided at the edges).

  Args:
    f: an array of samples.
    *varargs: spacings: none (unit spacing), one for all axes, or one per
      axis; each a scalar step or a 1-D array of coordinates along the axis.
    axis: an axis or a sequence of axes (default: all).
    edge_order: unsupported; must be None (edges use first order).

  Returns:
    One float array of f's shape per axis: a list, or the array itself
    when there is a single axis.

  Raises:
    NotImplementedError: `edge_order` is given.
    TypeError: the number of spacings does not fit the axes.
    ValueError: an axis has fewer than 2 samples, or a coordinate array's
      length differs from its axis.

  Mirrors `jax.numpy.gradient`.
  """
  if edge_order is not None:
    raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
  check_arraylike("gradient", f, *varargs)
  axis_tuple = tuple(range(ndim(f))) if axis is None else (
      tuple(axis) if isinstance(axis, (tuple, list)) else (axis,))
  axis_tuple = tuple(canonicalize_axis(ax, ndim(f)) for ax in axis_tuple)
  return _gradient(f, *varargs, axis=axis_tuple)


@jit(static_argnames=("axis",))
def _gradient(f, *varargs, axis):
  if dtype_of(f) == np.bool_:
    (f,) = promote_dtypes_inexact(f)
  if not axis:
    return []
  if len(varargs) == 0:
    spacings = [1] * len(axis)  # f / 1 is strongly typed float, as in JAX
  elif len(varargs) == 1:
    spacings = list(varargs) * len(axis)
  elif len(varargs) == len(axis):
    spacings = list(varargs)
  else:
    given = None if len(axis) == ndim(f) else axis
    raise TypeError(f"Invalid number of spacing arguments {len(varargs)} for axis={given}")
  if min(shape(f)[ax] for ax in axis) < 2:
    raise ValueError("Shape of array too small to calculate a numerical gradient, "
                     "at least 2 elements are required.")
  out = [_gradient_along(f, h, ax) for h, ax in zip(spacings, axis, strict=True)]
  return out[0] if len(out) == 1 else out


def _gradient_along(f, h, ax):
  n = shape(f)[ax]

  def sl(start, stop):
    return lax_slicing.slice_in_dim(f, start, stop, axis=ax)

  def along(v):  # a 1-D array of length along `ax`, shaped to broadcast against f
    return lax_numpy.reshape(v, tuple(-1 if i == ax else 1 for i in range(ndim(f))))

  if ndim(h) == 0:
    inner = ufuncs.divide(ufuncs.subtract(sl(2, n), sl(0, n - 2)), ufuncs.multiply(2, h))
    first = ufuncs.divide(ufuncs.subtract(sl(1, 2), sl(0, 1)), h)
    last = ufuncs.divide(ufuncs.subtract(sl(n - 1, n), sl(n - 2, n - 1)), h)
  else:
    if ndim(h) != 1 or shape(h)[0] != n:
      raise ValueError("Spacing arrays must have the same length as the dimension along "
                       "which the gradient is calculated.")
    dx = diff(h)
    dx1, dx2 = dx[:-1], dx[1:]
    # Second-order weights for uneven steps: a f[i-1] + b f[i] + c f[i+1].
    wa = along(ufuncs.divide(ufuncs.negative(dx2), ufuncs.multiply(dx1, ufuncs.add(dx1, dx2))))
    wb = along(ufuncs.divide(ufuncs.subtract(dx2, dx1), ufuncs.multiply(dx1, dx2)))
    wc = along(ufuncs.divide(dx1, ufuncs.multiply(dx2, ufuncs.add(dx1, dx2))))
    inner = ufuncs.add(ufuncs.add(ufuncs.multiply(wa, sl(0, n - 2)),
                                  ufuncs.multiply(wb, sl(1, n - 1))),
                       ufuncs.multiply(wc, sl(2, n)))
    first = ufuncs.divide(ufuncs.subtract(sl(1, 2), sl(0, 1)), dx[0])
    last = ufuncs.divide(ufuncs.subtract(sl(n - 1, n), sl(n - 2, n - 1)), dx[-1])
  return lax_numpy.concatenate([first, inner, last], axis=ax)


# ----------------------------------------------------------------------------
# Interpolation


def interp(x, xp, fp, left=None, right=None, period=None):
  """One-dimensional piecewise-linear interpolation of the points (xp, fp) at x.

  Args:
    x: the points to evaluate at (any shape).
    xp: 1-D increasing sample coordinates (need not be sorted when `period`
      is given).
    fp: 1-D sample values, of xp's length; may be complex.
    left, right: the values below xp[0] and above xp[-1] (default fp[0]
      and fp[-1]); the string 'extrapolate' continues the end segments.
    period: the period of the x-coordinates, or None; left and right are
      then ignored.

  Returns:
    An inexact array of x's shape, with fp's inexact dtype.

  Raises:
    ValueError: xp and fp are not 1-D of equal size, left/right is a string
      other than 'extrapolate', `period` is not a scalar, or x is complex.

  Mirrors `jax.numpy.interp`.
  """
  check_arraylike("interp", x, xp, fp)
  if shape(xp) != shape(fp) or ndim(xp) != 1:
    raise ValueError("xp and fp must be one-dimensional arrays of equal size")
  for name, value in (("left", left), ("right", right)):
    if isinstance(value, str) and value != "extrapolate":
      raise ValueError(f"the only valid string value of `{name}` is 'extrapolate', "
                       f"but got: {value!r}")
  if period is not None and np.ndim(period) != 0:
    raise ValueError(f"period must be a scalar; got {period}")
  return _interp(x, xp, fp, None if isinstance(left, str) else left,
                 None if isinstance(right, str) else right, period,
                 extrapolate_left=isinstance(left, str), extrapolate_right=isinstance(right, str))


@jit(static_argnames=("extrapolate_left", "extrapolate_right"))
def _interp(x, xp, fp, left, right, period, *, extrapolate_left, extrapolate_right):
  x, xp = promote_dtypes_inexact(x, xp)
  (fp,) = promote_dtypes_inexact(fp)
  if dtypes.issubdtype(dtype_of(x), np.complexfloating):
    raise ValueError("jnp.interp: complex x values not supported.")
  if period is not None:
    period = ufuncs.absolute(period)
    x = ufuncs.remainder(x, period)
    xp = ufuncs.remainder(xp, period)
    order = sorting.argsort(xp)
    xp, fp = xp[order], fp[order]
    xp = lax_numpy.concatenate([ufuncs.subtract(xp[-1:], period), xp,
                                ufuncs.add(xp[:1], period)])
    fp = lax_numpy.concatenate([fp[-1:], fp, fp[:1]])
  n = shape(xp)[0]
  # The segment [xp[i-1], xp[i]] holding x (clipped to the end segments).
  i = ufuncs.clip(statistics.searchsorted(xp, x, side="right"), 1, n - 1)
  df = ufuncs.subtract(fp[i], fp[i - 1])
  dx = ufuncs.subtract(xp[i], xp[i - 1])
  delta = ufuncs.subtract(x, xp[i - 1])
  # A zero-width segment gives its left value (and no NaN gradient), as in JAX.
  eps = np.spacing(dtypes.finfo(dtype_of(dx)).eps)
  dx0 = ufuncs.less_equal(ufuncs.absolute(dx), eps)
  f = where_(dx0, fp[i - 1],
             ufuncs.add(fp[i - 1], ufuncs.multiply(ufuncs.divide(delta, where_(dx0, 1, dx)), df)))
  if period is None:
    if not extrapolate_left:
      f = where_(ufuncs.less(x, xp[0]), fp[0] if left is None else left, f)
    if not extrapolate_right:
      f = where_(ufuncs.greater(x, xp[-1]), fp[-1] if right is None else right, f)
  return f


# ----------------------------------------------------------------------------
# Products


@jit(static_argnames=("axisa", "axisb", "axisc", "axis"))
def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None):
  """The cross product of 2- or 3-vectors stored along an axis of a and b.

  Args:
    a, b: arrays whose vector axes (`axisa`, `axisb`) have length 2 or 3; a
      2-vector has an implicit zero third component. The other axes
      broadcast.
    axisa, axisb: the vector axes of a and b.
    axisc: the vector axis of the result (when it has one).
    axis: if given, used for all three axes.

  Returns:
    The broadcast 3-vectors, or the scalar z-components when both inputs
    are 2-vectors; promoted dtype.

  Raises:
    ValueError: a vector axis has a length other than 2 or 3, or an axis is
      out of bounds.

  Mirrors `jax.numpy.cross`.
  """
  a, b = promote_dtypes(*ensure_arraylike("cross", a, b))
  if axis is not None:
    axisa = axisb = axisc = axis
  a = lax_numpy.moveaxis(a, axisa, -1)
  b = lax_numpy.moveaxis(b, axisb, -1)
  if shape(a)[-1] not in (2, 3) or shape(b)[-1] not in (2, 3):
    raise ValueError("Dimension must be either 2 or 3 for cross product")
  if shape(a)[-1] == 2 and shape(b)[-1] == 2:
    return ufuncs.subtract(ufuncs.multiply(a[..., 0], b[..., 1]),
                           ufuncs.multiply(a[..., 1], b[..., 0]))
  a0, a1 = a[..., 0], a[..., 1]
  a2 = a[..., 2] if shape(a)[-1] == 3 else creation.zeros_like(a0)
  b0, b1 = b[..., 0], b[..., 1]
  b2 = b[..., 2] if shape(b)[-1] == 3 else creation.zeros_like(b0)
  c = lax_numpy.stack([ufuncs.subtract(ufuncs.multiply(a1, b2), ufuncs.multiply(a2, b1)),
                       ufuncs.subtract(ufuncs.multiply(a2, b0), ufuncs.multiply(a0, b2)),
                       ufuncs.subtract(ufuncs.multiply(a0, b1), ufuncs.multiply(a1, b0))],
                      axis=-1)
  return lax_numpy.moveaxis(c, -1, axisc)


@jit
def kron(a, b):
  """The Kronecker product: blocks ``a[i, j] * b`` tiled in a's layout.

  Args:
    a, b: arrays or scalars; the lower-rank one gets leading unit axes.

  Returns:
    An array of shape ``a.shape * b.shape`` (elementwise) and promoted dtype.

  Mirrors `jax.numpy.kron`.
  """
  a, b = promote_dtypes(*ensure_arraylike("kron", a, b))
  nd = max(ndim(a), ndim(b))
  a = lax_numpy.reshape(a, (1,) * (nd - ndim(a)) + shape(a))
  b = lax_numpy.reshape(b, (1,) * (nd - ndim(b)) + shape(b))
  out_shape = tuple(da * db for da, db in zip(shape(a), shape(b), strict=True))
  a_in = lax_numpy.reshape(a, tuple(d for da in shape(a) for d in (da, 1)))
  b_in = lax_numpy.reshape(b, tuple(d for db in shape(b) for d in (1, db)))
  return lax_numpy.reshape(ufuncs.multiply(a_in, b_in), out_shape)


# ----------------------------------------------------------------------------
# Special functions


@jit
def sinc(x, /):
  """Elementwise normalized sinc: sin(pi x) / (pi x), and 1 at 0.

  Near 0 a Taylor polynomial is used, so derivatives at 0 are also right.

  Args:
    x: an array or scalar (integers are promoted to float; complex allowed).

  Returns:
    An inexact array of x's shape.

  Mirrors `jax.numpy.sinc`.
  """
  (x,) = promote_args_inexact("sinc", x)
  is_zero = ufuncs.equal(x, 0)
  pi_x = ufuncs.multiply(np.pi, x)
  safe = where_(is_zero, 1, pi_x)
  sq = ufuncs.multiply(pi_x, pi_x)
  taylor = ufuncs.add(ufuncs.subtract(1, ufuncs.divide(sq, 6)),
                      ufuncs.divide(ufuncs.multiply(sq, sq), 120))
  return where_(is_zero, taylor, ufuncs.divide(ufuncs.sin(safe), safe))


# Chebyshev coefficients of exp(-x) I0(x) (Cephes, as also used by NumPy's i0).
_I0_A = (-4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
         1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
         -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
         9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
         -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
         1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
         -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
         1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
         -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
         1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1)
_I0_B = (-7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
         3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
         1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
         -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
         7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
         -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
         3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
         2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
         8.04490411014108831608e-1)


def _chbevl(x, coeffs):
  b0 = creation.zeros_like(x)
  b1 = b2 = b0
  for c in coeffs:
    b2, b1 = b1, b0
    b0 = ufuncs.add(ufuncs.subtract(ufuncs.multiply(x, b1), b2), c)
  return ufuncs.multiply(0.5, ufuncs.subtract(b0, b2))


@jit
def i0(x):
  """Elementwise modified Bessel function of the first kind, order 0.

  Args:
    x: a real array or scalar (integers are promoted to float).

  Returns:
    An inexact array of x's shape (NaN at infinities, as in JAX).

  Raises:
    ValueError: x is complex.

  Mirrors `jax.numpy.i0`.
  """
  (x,) = promote_args_inexact("i0", x)
  if _is_complex(x):
    raise ValueError(f"Unsupported input type to jax.numpy.i0: {dtype_of(x)}")
  return _i0(x)


@custom_jvp
def _i0(x):
  ax = ufuncs.absolute(x)
  small = ufuncs.less_equal(ax, 8)
  # exp(-|x|) I0(|x|) by Chebyshev series on [0, 8] and (8, inf).
  near = _chbevl(ufuncs.subtract(ufuncs.divide(ax, 2), 2), _I0_A)
  safe = where_(small, 8, ax)
  far = ufuncs.divide(_chbevl(ufuncs.subtract(ufuncs.divide(32, safe), 2), _I0_B),
                      ufuncs.sqrt(safe))
  return ufuncs.multiply(ufuncs.exp(ax), where_(small, near, far))


@_i0.defjvp
def _i0_jvp(primals, tangents):
  # As JAX: exactly 0 at x = 0 (I0 is even), where the series through |x| leaves rounding.
  out, t_out = jvp(_i0.fun, primals, tangents)
  return out, where_(lax.eq(primals[0], const_like(primals[0], 0)), creation.zeros_like(t_out),
                     t_out)


# ----------------------------------------------------------------------------
# Window functions


def _window_len(M) -> int:
  return concrete_int(M, "M argument of a jnp window function")


def _cosine_window(name, coeffs):
  def window(M):
    M = _window_len(M)
    dtype = dtypes.default_float_dtype()
    if M == 1:
      return creation.ones(1, dtype)
    n = creation.arange(1 - M, M, 2, dtype=dtype)
    out = creation.full(shape(n), coeffs[0], dtype)
    for k, c in enumerate(coeffs[1:], start=1):
      out = ufuncs.add(out, ufuncs.multiply(c, ufuncs.cos(ufuncs.divide(k * np.pi * n,
                                                                        M - 1))))
    return out
  window.__name__ = window.__qualname__ = name
  terms = " + ".join(f"{c} cos({k} pi n / (M - 1))" if k else str(c)
                     for k, c in enumerate(coeffs))
  window.__doc__ = (f"The {name} window: {terms}, for n = 1-M, 3-M, ..., M-1.\n\n"
                    "  Args:\n    M: the number of points (a concrete int).\n\n"
                    "  Returns:\n    A float array of shape (M,) (empty for M = 0; [1.] for "
                    "M = 1).\n\n  Raises:\n    ConcretizationTypeError: M is traced.\n\n"
                    f"  Mirrors `jax.numpy.{name}`.\n  ")
  return window


blackman = _cosine_window("blackman", (0.42, 0.5, 0.08))
hamming = _cosine_window("hamming", (0.54, 0.46))
hanning = _cosine_window("hanning", (0.5, 0.5))


def bartlett(M):
  """The Bartlett (triangular) window: 1 - |n| / (M - 1), for n = 1-M, 3-M, ..., M-1.

  Args:
    M: the number of points (a concrete int).

  Returns:
    A float array of shape (M,) (empty for M = 0; [1.] for M = 1).

  Raises:
    ConcretizationTypeError: M is traced.

  Mirrors `jax.numpy.bartlett`.
  """
  M = _window_len(M)
  dtype = dtypes.default_float_dtype()
  if M == 1:
    return creation.ones(1, dtype)
  n = creation.arange(1 - M, M, 2, dtype=dtype)
  return ufuncs.subtract(1, ufuncs.divide(ufuncs.absolute(n), M - 1))


def kaiser(M, beta):
  """The Kaiser window: i0(beta sqrt(1 - ((n - a) / a)**2)) / i0(beta), a = (M - 1) / 2.

  Args:
    M: the number of points (a concrete int).
    beta: the shape parameter (an array-like scalar).

  Returns:
    A float array of shape (M,) (empty for M = 0; [1.] for M = 1).

  Raises:
    ConcretizationTypeError: M is traced.

  Mirrors `jax.numpy.kaiser`.
  """
  M = _window_len(M)
  beta = ensure_arraylike("kaiser", beta)
  dtype = dtypes.default_float_dtype()
  if M == 1:
    return creation.ones(1, dtype)
  n = creation.arange(0, M, dtype=dtype)
  alpha = 0.5 * (M - 1)
  ratio = ufuncs.divide(ufuncs.subtract(n, alpha), alpha)
  arg = ufuncs.multiply(beta, ufuncs.sqrt(ufuncs.subtract(1, ufuncs.multiply(ratio, ratio))))
  return ufuncs.divide(i0(arg), i0(lax.convert_element_type(beta, dtype)))


# ----------------------------------------------------------------------------
# Real and complex predicates


@jit
def isreal(x):
  """Elementwise test that the imaginary part of x is zero (True for real dtypes).

  Args:
    x: an array or scalar.

  Returns:
    A bool array of x's shape.

  Mirrors `jax.numpy.isreal`.
  """
  return ufuncs.equal(ufuncs.imag(ensure_arraylike("isreal", x)), 0)


@jit
def iscomplex(x):
  """Elementwise test that the imaginary part of x is non-zero (False for real dtypes).

  Args:
    x: an array or scalar.

  Returns:
    A bool array of x's shape.

  Mirrors `jax.numpy.iscomplex`.
  """
  return ufuncs.not_equal(ufuncs.imag(ensure_arraylike("iscomplex", x)), 0)


def isrealobj(x) -> bool:
  """True unless x (an array, scalar or nested list) has a complex dtype.

  Mirrors `jax.numpy.isrealobj`.
  """
  return not lax_numpy.iscomplexobj(x)
