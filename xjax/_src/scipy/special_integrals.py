"""Exponential, sine/cosine and Fresnel integrals, Dawson's integral, erfcx and
the Faddeeva function (mirrors the matching part of `jax.scipy.special`).

Every function is a composition of jnp and lax operations evaluated on whole
arrays. The approximations are the classical ones SciPy uses: the rational
fits of the Cephes library (ei.c, expn.c, sici.c, fresnl.c, dawsn.c), an
asymptotic series for erfcx, and Weideman's (1994) rational expansion for the
Faddeeva function. Branches are evaluated on "safe" inputs and combined with
`where`, so no unused branch produces a NaN or an overflow. Each function
carries the custom JVP JAX gives it.
"""
from __future__ import annotations

import numpy as np

import xjax.numpy as jnp
from xjax._src import dtypes
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.lax import elementwise as lax
from xjax._src.lax import transcendental as lax_tr
from xjax._src.lax.control_flow.loops import while_loop
from xjax._src.numpy.util import ensure_arraylike, promote_args_inexact, promote_dtypes_complex

_SQRT_PI = float(np.sqrt(np.pi))
_EULER = float(np.euler_gamma)


def _horner(coeffs, x):
  """sum(c * x**(len(coeffs) - 1 - i)) by Horner's rule; coefficients highest power first."""
  acc = jnp.full_like(x, coeffs[0])
  for c in coeffs[1:]:
    acc = acc * x + c
  return acc


def _is_complex(x):
  return dtypes.issubdtype(x.dtype, np.complexfloating)


def _reject_complex(name, x):
  if _is_complex(x):
    raise ValueError(f"{name} does not support complex-valued inputs.")


def _in_float32(fun, x):
  """`fun(x)` for float32/float64 `x`; half precisions are computed in float32 and cast back."""
  if x.dtype in (np.float32, np.float64):
    return fun(x)
  out = fun(x.astype(np.float32))
  if isinstance(out, tuple):
    return tuple(o.astype(x.dtype) for o in out)
  return out.astype(x.dtype)


# ----------------------------------------------------------------------------
# The Faddeeva function w(z) = exp(-z^2) erfc(-iz)


def _weideman_coefficients(n_terms=32):
  """The coefficients (highest power first) of Weideman's expansion of w(z), by FFT.

  Weideman (1994), "Computation of the complex error function", SIAM J.
  Numer. Anal. 31: with L = sqrt(N / sqrt(2)) and Z = (L + iz) / (L - iz),
  w(z) = 2 p(Z) / (L - iz)^2 + 1 / (sqrt(pi) (L - iz)) for Im z >= 0, where
  p has the Fourier coefficients of exp(-t^2) (L^2 + t^2), t = L tan(theta/2).
  """
  m = 2 * n_terms
  scale = np.sqrt(n_terms / np.sqrt(2.0))
  t = scale * np.tan(np.arange(-m + 1, m) * np.pi / (2 * m))
  samples = np.concatenate([[0.0], np.exp(-t * t) * (scale * scale + t * t)])
  fourier = np.real(np.fft.fft(np.fft.fftshift(samples))) / (2 * m)
  return float(scale), tuple(float(c) for c in fourier[n_terms:0:-1])


_WEIDEMAN_L, _WEIDEMAN_COEFFS = _weideman_coefficients()


def _complex_const(z, re, im=0.0):
  return np.array(complex(re, im), dtype=z.dtype)


def _div_real(z, r):
  """Complex `z` over real `r`, part by part (no dtype promotion of `r`)."""
  return lax.complex(lax.real(z) / r, lax.imag(z) / r)


def _times_i(z):
  """i z, exact also for infinite parts (a complex product would make inf * 0 = NaN)."""
  return lax.complex(-lax.imag(z), lax.real(z))


def _two_exp_minus_square(z):
  """2 exp(-z^2), from its real and imaginary parts so that overflow gives inf, not NaN."""
  x, y = lax.real(z), lax.imag(z)
  log_modulus = (y - x) * (y + x) + float(np.log(2.0))
  phase = -2 * x * y
  modulus = lax.exp(log_modulus)
  # where phase == 0 the imaginary part is 0 even when the modulus is inf
  imag = jnp.where(phase == 0, phase, modulus * lax_tr.sin(phase))
  return lax.complex(modulus * lax_tr.cos(phase), imag)


def _wofz_upper(z):
  """w(z) for Im z >= 0 (Weideman), with w ~ i / (sqrt(pi) z) where |z| would overflow."""
  real_dtype = lax.real(z).dtype
  i_z = _times_i(z)
  big = np.array(np.sqrt(dtypes.finfo(real_dtype).max) / 4, real_dtype)
  huge = (lax.abs(lax.real(z)) > big) | (lax.abs(lax.imag(z)) > big)
  safe_iz = jnp.where(huge, _complex_const(z, 0.0), i_z)
  denom = _WEIDEMAN_L - safe_iz
  big_z = (_WEIDEMAN_L + safe_iz) / denom
  poly = _horner(_WEIDEMAN_COEFFS, big_z)
  w = 2 * poly / (denom * denom) + (1 / _SQRT_PI) / denom
  # Far out, w(z) = i / (sqrt(pi) z) to working precision; 1/z = conj(z / s) / (|z / s|^2 s).
  s = jnp.maximum(lax.abs(lax.real(z)), lax.abs(lax.imag(z)))
  s = jnp.where(huge, s, jnp.ones_like(s))
  zs = _div_real(z, s)
  inv_z = _div_real(lax.conj(zs), (lax.square(lax.real(zs)) + lax.square(lax.imag(zs))) * s)
  far = inv_z * _complex_const(z, 0.0, 1 / _SQRT_PI)
  far = jnp.where(jnp.isinf(s), _complex_const(z, 0.0), far)
  return jnp.where(huge, far, w)


@custom_jvp
def _wofz(z):
  upper = lax.imag(z) >= 0
  z_up = jnp.where(upper, z, -z)
  w_up = _wofz_upper(z_up)
  # Reflection: w(-z) = 2 exp(-z^2) - w(z).
  return jnp.where(upper, w_up, _two_exp_minus_square(z_up) - w_up)


_wofz.defjvps(lambda g, ans, z: g * (_complex_const(z, 0.0, 2 / _SQRT_PI) - 2 * z * ans))


def wofz(z):
  """The Faddeeva function w(z) = exp(-z^2) erfc(-iz), elementwise.

  Args:
    z: an array-like, real or complex; real input is promoted to complex
      (float32 -> complex64, float64 -> complex128).

  Returns:
    A complex array of z's shape. Accurate to about 1e-13 (complex128) in
    relative terms away from the zeros of w, by Weideman's 32-term rational
    expansion in the upper half plane and the reflection
    w(z) = 2 exp(-z^2) - w(-z) below it. Its derivative is
    2i/sqrt(pi) - 2 z w(z).

  Mirrors `jax.scipy.special.wofz`.
  """
  z, = promote_dtypes_complex(ensure_arraylike("wofz", z))
  return _wofz(z)


# ----------------------------------------------------------------------------
# erfcx(x) = exp(x^2) erfc(x)


def _asymptotic_erfcx_coeffs(n_terms):
  """Coefficients (highest power first) of the series in t = 1/x^2 of the asymptotic form

  erfcx(x) ~ 1/(sqrt(pi) x) sum_k (-1)^k (2k-1)!! / (2^k x^2k).
  """
  coeffs, c = [1.0], 1.0
  for k in range(1, n_terms):
    c *= -(2 * k - 1) / 2
    coeffs.append(c)
  return tuple(reversed(coeffs))


# (switch point, number of terms): past the switch point the first omitted
# term of the series is below a tenth of the dtype's eps, and erfc(x) itself
# (whose relative error grows with x) is no longer needed.
_ERFCX_ASYMPTOTIC = {np.dtype(np.float32): (5.0, 12), np.dtype(np.float64): (8.0, 18)}


def _exp_square(x):
  """exp(x^2) without the x^2 rounding error amplified: x = h + l with h on a 1/16 grid."""
  h = lax.round(x * 16) / 16
  low = x - h
  return lax.exp(h * h) * lax.exp(low * (x + h))


def _erfcx_real(x):
  switch, n_terms = _ERFCX_ASYMPTOTIC[x.dtype]
  large = x > switch
  safe_x = jnp.where(large, jnp.zeros_like(x), x)
  direct = _exp_square(safe_x) * lax_tr.erfc(safe_x)
  big_x = jnp.where(large, x, jnp.ones_like(x))
  series = _horner(_asymptotic_erfcx_coeffs(n_terms), 1 / lax.square(big_x)) / (big_x * _SQRT_PI)
  # 2 exp(x^2) overflows below -27 (float64's largest exponent is 709.8); the split of x^2
  # would give inf - inf (NaN) at -inf and 0 * inf at the largest finite x.
  direct = jnp.where(x < -30, np.inf, direct)
  return jnp.where(large, series, direct)


@custom_jvp
def _erfcx(x):
  return _in_float32(_erfcx_real, x)


_erfcx.defjvps(lambda g, ans, x: g * (2 * x * ans - 2 / _SQRT_PI))


def erfcx(x):
  """The scaled complementary error function exp(x^2) erfc(x), elementwise.

  Args:
    x: an array-like, real or complex (integers promote to the default float).

  Returns:
    An array of x's shape and inexact dtype. Finite (about 1/(sqrt(pi) x)) for
    large positive x where exp(x^2) alone overflows; +inf for very negative x
    (below about -26.6 in float64). Complex input gives w(iz) (see `wofz`).
    The derivative is 2 x erfcx(x) - 2/sqrt(pi).

  Mirrors `jax.scipy.special.erfcx`.
  """
  x, = promote_args_inexact("erfcx", x)
  if _is_complex(x):
    return _wofz(_times_i(x))
  return _erfcx(x)


# ----------------------------------------------------------------------------
# Dawson's integral (Cephes dawsn.c: Cody, Paciorek and Thacher, 1970)


# |x| < 3.25: D(x) = x P(x^2) / Q(x^2).
_DAWSN_P = (
    1.1368149897175597e-11, 8.492622676674738e-10, 1.9443420417555306e-08,
    9.531517412544844e-07, 3.078283098749132e-06, 0.00035251336852028877,
    -0.0008501498467244109, 0.04226182230055466, -0.09174803717734524,
    1.0,
)
_DAWSN_Q = (
    2.403720730667626e-11, 1.488646813684934e-09, 5.212652810105416e-08,
    1.2725847827318697e-06, 2.324902498207895e-05, 0.00032552474182605793,
    0.003488058146571626, 0.027944853119882897, 0.15887424196012057,
    0.5749186294893204, 1.0,
)
# 3.25 <= |x| < 6.25 and |x| >= 6.25: D(x) = (1 + u P(u) / Q(u)) / (2x), u = 1/x^2.
_DAWSN_MID_P = (
    0.5089551564179009, -0.24475441814269785, 0.09415123353035344,
    -0.021871125514203903, 0.003662076123295692, -0.0004232091144603888,
    3.5964130479389666e-05, -2.1464035171996896e-06, 9.100107800763914e-08,
    -2.4027452082825098e-09, 3.592333854409284e-11,
)
_DAWSN_MID_Q = (
    1.0, -0.6318398698733682, 0.2367067882282487,
    -0.053180636700322324, 0.008480417185862954, -0.0009479967684866654,
    7.810255929445524e-05, -4.558751532524426e-06, 1.8910035811142186e-07,
    -4.913246913319206e-09, 7.184664032357345e-11,
)
_DAWSN_FAR_P = (
    -0.5905928605347732, 0.6292352427243688, -0.17285897538038814,
    0.016483704782518965, -0.0004868276130204627,
)
_DAWSN_FAR_Q = (
    1.0, -2.698200571975449, 1.7327079904594784,
    -0.3937085822819395, 0.03442789240412334, -0.0009736552260409412,
)


def _dawsn_real(x):
  ax = lax.abs(x)
  near, mid = ax < 3.25, (ax >= 3.25) & (ax < 6.25)
  a = jnp.where(near, ax, jnp.zeros_like(ax))
  v_near = a * _horner(_DAWSN_P, a * a) / _horner(_DAWSN_Q, a * a)
  a = jnp.where(mid, ax, jnp.full_like(ax, 4.0))
  u = 1 / (a * a)
  v_mid = (1 + u * _horner(_DAWSN_MID_P, u) / _horner(_DAWSN_MID_Q, u)) / (2 * a)
  a = jnp.where(near | mid, jnp.full_like(ax, 8.0), ax)  # NaN and inf take this branch
  u = 1 / (a * a)
  v_far = (1 + u * _horner(_DAWSN_FAR_P, u) / _horner(_DAWSN_FAR_Q, u)) / (2 * a)
  value = jnp.where(near, v_near, jnp.where(mid, v_mid, v_far))
  return jnp.where(x < 0, -value, value)


@custom_jvp
def _dawsn(x):
  return _in_float32(_dawsn_real, x)


_dawsn.defjvps(lambda g, ans, x: g * (1 - 2 * x * ans))


def dawsn(x):
  """Dawson's integral D(x) = exp(-x^2) int_0^x exp(t^2) dt, elementwise.

  Args:
    x: an array-like, real (integers promote to the default float).

  Returns:
    An array of x's shape and inexact dtype; odd in x, 0 at +-inf, NaN at NaN.
    The derivative is 1 - 2 x D(x).

  Raises:
    ValueError: `x` is complex.

  Mirrors `jax.scipy.special.dawsn`.
  """
  x, = promote_args_inexact("dawsn", x)
  _reject_complex("dawsn", x)
  return _dawsn(x)


# ----------------------------------------------------------------------------
# Fresnel integrals (Cephes fresnl.c; the float32 set is Cephes' fresnlf)


# float64: x^2 < 2.5625: S = x^3 SN(x^4)/SD(x^4), C = x CN(x^4)/CD(x^4).
_FRESNEL_SN = (
    -2991.8191940101983, 708840.0452577386, -62974148.62058625,
    2548908805.7337637, -44297951805.96978, 318016297876.5678,
)
_FRESNEL_SD = (
    1.0, 281.3762688899943, 45584.78108065326,
    5173438.887700964, 419320245.8981112, 22441179564.534092,
    607366389490.0846,
)
_FRESNEL_CN = (
    -4.9884311457357354e-08, 9.504280628298596e-06, -0.0006451914356839651,
    0.018884331939670384, -0.20552590095501388, 1.0,
)
_FRESNEL_CD = (
    3.99982968972496e-12, 9.154392157746574e-10, 1.2500186247959882e-07,
    1.2226278902417902e-05, 0.0008680295429417843, 0.04121420907221998,
    1.0,
)
# float64, larger x: auxiliary functions f = 1 - u FN(u)/FD(u), g = t GN(u)/GD(u),
# t = 1/(pi x^2), u = t^2.
_FRESNEL_FN = (
    0.4215435550436775, 0.1434079197807589, 0.011522095507358577,
    0.000345017939782574, 4.6361374928786735e-06, 3.055689837902576e-08,
    1.0230451416490724e-10, 1.7201074326816183e-13, 1.3428327623306275e-16,
    3.763297112699879e-20,
)
_FRESNEL_FD = (
    1.0, 0.7515863983533789, 0.11688892585919138,
    0.0064405152650885865, 0.00015593440916415301, 1.8462756734893055e-06,
    1.1269922476399903e-08, 3.6014002958937136e-11, 5.887545336215784e-14,
    4.5200143407412973e-17, 1.2544323709001127e-20,
)
_FRESNEL_GN = (
    0.5044420736433832, 0.1971028335255234, 0.018764858409257526,
    0.0006840793809153931, 1.1513882611188428e-05, 9.828524436884223e-08,
    4.4534441586175015e-10, 1.0826804113902088e-12, 1.375554606332618e-15,
    8.363544356306774e-19, 1.8695871016278324e-22,
)
_FRESNEL_GD = (
    1.0, 1.4749575992512833, 0.33774898912002,
    0.02536037414203388, 0.0008146791071843061, 1.2754507566772912e-05,
    1.0431458965757199e-07, 4.6068072814652043e-10, 1.1027321506624028e-12,
    1.3879653125957886e-15, 8.391588162831187e-19, 1.8695871016278324e-22,
)
# float32: polynomials only.
_FRESNEL_SN_F32 = (
    1.6476294637887e-09, -1.522754752581096e-07, 8.4247488085024e-06,
    -0.0003120693124703272, 0.007244727626597022, -0.09228055941124598,
    0.5235987735681432,
)
_FRESNEL_CN_F32 = (
    1.416802502367354e-08, -1.157231412229871e-06, 5.387223446683264e-05,
    -0.001604381798862293, 0.02818489036795073, -0.2467398198317899,
    0.9999999760004487,
)
_FRESNEL_FN_F32 = (
    -1903009855649.792, 135594238805.0252, -4158143148.511033,
    73438484.63587323, -873235.6681548485, 8560.51546627547,
    -103.2877601091159, 2.999401847870011,
)
_FRESNEL_GN_F32 = (
    -186084399762.465, 12783506733.93208, -377938771.3202229,
    6492611.570598858, -77877.89623358162, 860.2931494734327,
    -14.93439396592284, 0.9999841934744914,
)


def _sin_cos_half_pi_square(x):
  """(sin(pi x^2 / 2), cos(pi x^2 / 2)) with the argument reduced before it is rounded.

  With s = |x| mod 2 and |x| = 2m + s, x^2/2 = 2m^2 + s (|x| - s/2), so
  x^2/2 mod 2 = s (|x| - s/2) mod 2, a product of size |x| rather than x^2.
  """
  ax = lax.abs(x)
  s = jnp.fmod(ax, 2.0)
  r = jnp.fmod(s * (ax - s / 2), 2.0)
  r = jnp.where(r > 1, r - 2, r)  # in (-1, 1]
  return lax_tr.sin(np.pi * r), lax_tr.cos(np.pi * r)


def _fresnel_real(x):
  single = x.dtype == np.float32
  ax = lax.abs(x)
  small = ax * ax < 2.5625
  a = jnp.where(small, ax, jnp.zeros_like(ax))
  a2 = a * a
  a4 = a2 * a2
  if single:
    s_small = a * a2 * _horner(_FRESNEL_SN_F32, a4)
    c_small = a * _horner(_FRESNEL_CN_F32, a4)
  else:
    s_small = a * a2 * _horner(_FRESNEL_SN, a4) / _horner(_FRESNEL_SD, a4)
    c_small = a * _horner(_FRESNEL_CN, a4) / _horner(_FRESNEL_CD, a4)

  finite = jnp.isfinite(ax)
  a = jnp.where(small | ~finite, jnp.full_like(ax, 2.0), ax)
  sin_t, cos_t = _sin_cos_half_pi_square(a)
  t = 1 / (np.pi * a * a)
  u = t * t
  if single:
    f = 1 - u * _horner(_FRESNEL_FN_F32, u)
    g = t * _horner(_FRESNEL_GN_F32, u)
  else:
    f = 1 - u * _horner(_FRESNEL_FN, u) / _horner(_FRESNEL_FD, u)
    g = t * _horner(_FRESNEL_GN, u) / _horner(_FRESNEL_GD, u)
  # Past 36974 Cephes keeps only the leading term (f = 1, g = 0; float32: 1/2 alone).
  very_large = a > 36974.0
  if single:
    f = jnp.where(very_large, jnp.zeros_like(f), f)
    g = jnp.where(very_large, jnp.zeros_like(g), g)
  else:
    f = jnp.where(very_large, jnp.ones_like(f), f)
    g = jnp.where(very_large, jnp.zeros_like(g), g)
  pi_a = np.pi * a
  s_large = 0.5 - (f * cos_t + g * sin_t) / pi_a
  c_large = 0.5 + (f * sin_t - g * cos_t) / pi_a

  half = jnp.full_like(ax, 0.5)
  s = jnp.where(small, s_small, jnp.where(finite, s_large, jnp.where(jnp.isnan(ax), ax, half)))
  c = jnp.where(small, c_small, jnp.where(finite, c_large, jnp.where(jnp.isnan(ax), ax, half)))
  negative = x < 0
  return jnp.where(negative, -s, s), jnp.where(negative, -c, c)


@custom_jvp
def _fresnel(x):
  return _in_float32(_fresnel_real, x)


@_fresnel.defjvp
def _fresnel_jvp(primals, tangents):
  (x,), (x_dot,) = primals, tangents
  x = jnp.asarray(x)
  sin_t, cos_t = _sin_cos_half_pi_square(x)
  return _fresnel(x), (sin_t * x_dot, cos_t * x_dot)


def fresnel(x):
  """The Fresnel integrals S(x) = int_0^x sin(pi t^2/2) dt and C(x) = int_0^x cos(pi t^2/2) dt.

  Args:
    x: an array-like, real (integers promote to the default float; float16
      and bfloat16 are computed in float32).

  Returns:
    A pair (S, C) of arrays of x's shape and dtype; both odd in x, +-0.5 at
    +-inf. The derivatives are sin(pi x^2/2) and cos(pi x^2/2). As in Cephes,
    accuracy is guaranteed for |x| <= 10 or so; far out the oscillating terms
    are approximated.

  Raises:
    NotImplementedError: `x` is complex, or of a dtype other than float16,
      bfloat16, float32 or float64.

  Mirrors `jax.scipy.special.fresnel`.
  """
  x, = promote_args_inexact("fresnel", x)
  if _is_complex(x):
    raise NotImplementedError("Support for complex-valued inputs is not implemented yet.")
  if x.dtype not in (np.float16, dtypes.bfloat16, np.float32, np.float64):
    raise NotImplementedError(f"Support for {x.dtype} dtype is not implemented yet.")
  return _fresnel(x)


# ----------------------------------------------------------------------------
# Sine and cosine integrals (Cephes sici.c)


# 0 < x <= 4: Si = x SN(x^2)/SD(x^2), Ci = gamma + log x + x^2 CN(x^2)/CD(x^2).
_SICI_SN = (
    -8.391678279103039e-11, 4.625917144270128e-08, -9.757593038436328e-06,
    0.0009769454381704354, -0.04134703162294066, 1.0,
)
_SICI_SD = (
    2.0326926619595193e-12, 1.279978911799433e-09, 4.418278428012189e-07,
    9.964121220438756e-05, 0.01420852393261499, 1.0,
)
_SICI_CN = (
    2.0252400238910228e-11, -1.3524950491579076e-08, 3.593250514199931e-06,
    -0.0004740072068734079, 0.028915965260755523, -1.0,
)
_SICI_CD = (
    4.077460400618806e-12, 3.067809975818878e-09, 1.2321035568588342e-06,
    0.00031744202477503275, 0.051002805623644606, 4.0,
)
# x > 4: auxiliary functions f = FN(z)/(x FD(z)) and g = z GN(z)/GD(z), z = 1/x^2,
# one fit for 4 < x < 8 and one for x >= 8.
_SICI_FN4 = (
    4.236128628922166, 5.4593771716181285, 1.6208328770153833,
    0.16700661183132304, 0.006810201324725182, 0.00010893658065032867,
    5.489002234213736e-07,
)
_SICI_FD4 = (
    1.0, 8.16496634205391, 7.308288225055645,
    1.867922579501842, 0.1787920529631499, 0.007017106683227897,
    0.00011003435715391573, 5.489002527562557e-07,
)
_SICI_GN4 = (
    0.08710016989731142, 0.6113791099522193, 0.3971802963923375,
    0.07485277376284691, 0.005388686814621773, 0.00016199979459893403,
    1.9796387414096365e-06, 7.825790407440903e-09,
)
_SICI_GD4 = (
    1.0, 1.6440220241335535, 0.666296701268988,
    0.09887717612776888, 0.006223963454417684, 0.0001732210814741771,
    2.0265918208634397e-06, 7.825792189335346e-09,
)
_SICI_FN8 = (
    0.4558808734704653, 0.7137152741001467, 0.16030015822231947,
    0.01160642294081244, 0.00034955644244785906, 4.8621543082645475e-06,
    3.200927900910049e-08, 9.41779576128513e-11, 9.70507110881952e-14,
)
_SICI_FD8 = (
    1.0, 0.9174636118736841, 0.17868554533207454,
    0.012225359477197129, 0.00035869648188185157, 4.924350643178815e-06,
    3.21956939101046e-08, 9.437205903502767e-11, 9.70507110881952e-14,
)
_SICI_GN8 = (
    0.6973599534432762, 0.33041097930563207, 0.03848787676499743,
    0.001717182390523479, 3.4894116550227946e-05, 3.471311670841167e-07,
    1.7040445278204452e-09, 3.859459254302766e-12, 3.1404009894636335e-15,
)
_SICI_GD8 = (
    1.0, 1.6854889881101165, 0.48785225869530496,
    0.04679131942596258, 0.0019028442667439953, 3.684755044425611e-05,
    3.5704322344374083e-07, 1.7269374896631615e-09, 3.878301660239547e-12,
    3.1404009894636335e-15,
)


@custom_jvp
def _sici(x):
  ax = lax.abs(x)
  small = ax <= 4
  a = jnp.where(small & (ax > 0), ax, jnp.ones_like(ax))
  z = a * a
  si_small = a * _horner(_SICI_SN, z) / _horner(_SICI_SD, z)
  ci_small = _EULER + lax_tr.log(a) + z * _horner(_SICI_CN, z) / _horner(_SICI_CD, z)

  finite = jnp.isfinite(ax)
  a = jnp.where(small | ~finite, jnp.full_like(ax, 5.0), ax)
  z = 1 / (a * a)
  below8 = a < 8
  f = jnp.where(below8, _horner(_SICI_FN4, z) / (a * _horner(_SICI_FD4, z)),
                _horner(_SICI_FN8, z) / (a * _horner(_SICI_FD8, z)))
  g = jnp.where(below8, z * _horner(_SICI_GN4, z) / _horner(_SICI_GD4, z),
                z * _horner(_SICI_GN8, z) / _horner(_SICI_GD8, z))
  # Past 1e9 only the leading terms of the asymptotic expansion remain.
  very_large = a > 1e9
  f = jnp.where(very_large, 1 / a, f)
  g = jnp.where(very_large, jnp.zeros_like(g), g)
  sin_a, cos_a = lax_tr.sin(a), lax_tr.cos(a)
  si_large = np.pi / 2 - f * cos_a - g * sin_a
  ci_large = f * sin_a - g * cos_a

  nan_or_inf = jnp.where(jnp.isnan(ax), ax, jnp.full_like(ax, np.pi / 2))
  si = jnp.where(ax == 0, jnp.zeros_like(ax),
                 jnp.where(small, si_small, jnp.where(finite, si_large, nan_or_inf)))
  ci_limit = jnp.where(jnp.isnan(x) | (x == -np.inf), jnp.full_like(x, np.nan), jnp.zeros_like(x))
  ci = jnp.where(ax == 0, jnp.full_like(ax, -np.inf),
                 jnp.where(small, ci_small, jnp.where(finite, ci_large, ci_limit)))
  return jnp.where(x < 0, -si, si), ci


@_sici.defjvp
def _sici_jvp(primals, tangents):
  (x,), (x_dot,) = primals, tangents
  x = jnp.asarray(x)
  return _sici(x), (jnp.sinc(x / np.pi) * x_dot, lax_tr.cos(x) / x * x_dot)


def sici(x):
  """The sine and cosine integrals Si(x) = int_0^x sin(t)/t dt and
  Ci(x) = gamma + log(x) + int_0^x (cos(t) - 1)/t dt.

  Args:
    x: an array-like, real (integers promote to the default float).

  Returns:
    A pair (si, ci) of arrays of x's shape and dtype. si is odd in x and
    +-pi/2 at +-inf; ci is -inf at 0, 0 at +inf, and for x < 0 the real part
    Ci(|x|) (NaN at -inf), as in SciPy. The derivatives are sin(x)/x and
    cos(x)/x.

  Raises:
    ValueError: `x` is complex.

  Mirrors `jax.scipy.special.sici`.
  """
  x, = promote_args_inexact("sici", x)
  if _is_complex(x):
    raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {x.dtype}.")
  return _sici(x)


# ----------------------------------------------------------------------------
# Exponential integrals (Cephes ei.c and expn.c)


# Ei(x), x > 0: one rational fit per interval. On (0, 2]:
# Ei(x) = gamma + log x + x A(x)/B(x); above: Ei(x) = exp(x)/x (1 + w A(w)/B(w)), w = 1/x.
_EI_SMALL = (
    (-5.350447357812543, 218.50491688166133, -4176.572384826693,
     55411.76756393557, -331338.13311781443, 1592627.1633849454),
    (1.0, -52.505479591128626, 1259.6161867867906, -17565.495819735348,
     149306.2117002726, -729494.9239640528, 1592627.1633849454),
)
# (upper end of the interval, A, B), for the intervals (2, 4], (4, 8], ..., (64, inf).
_EI_LARGE = (
    (4.0,
     (0.019818085032596897, -1.2716456259849176, -2.0881603356812284, 2.7555445091879367,
      -0.44095070487016, 0.046656238059358916, -0.0015450426796734852, 7.059980605299618e-05),
     (1.0, 1.4764986709149215, 0.5629177174822436, 0.16990178978793072,
      0.02291647179034212, 0.0044501504397287525, 0.00017274396122065214, 3.953167195549672e-05)),
    (8.0,
     (-1.3732153758712087, -0.7084559133740839, 1.580806855547941, -0.2601500427425623,
      0.029946746941137137, -0.001038086040188744, 4.371064420753005e-05, 2.141783679522603e-06),
     (1.0, 0.8585231423622028, 0.4483285822873995, 0.07687932158124476, 0.024498682410218877,
      0.0008832165941927797, 0.00045909522995113536, -4.729848351866523e-06,
      2.66519553739071e-06)),
    (16.0,
     (-2.1069346016919166, 1.7327338696646881, -0.2423619178935842, 0.02322724180937566,
      0.00023728804404931798, -8.343219561192553e-05, 1.3634087956052505e-05,
      -3.655412321999254e-07, 1.4649417339759612e-08, 6.17640786371036e-10),
     (1.0, -0.2298062239901678, 0.11050770414740378, -0.015665429666307924,
      0.002761106850817353, -0.00020891480122840484, 1.7085289388076754e-05,
      -4.4593117963566865e-07, 1.3946349303538475e-08, 6.150865933977338e-10)),
    (32.0,
     (-0.24581193676740204, -0.14833822533220778, 0.07248291795735552, -0.013483156873809405,
      0.001342775069788637, -7.942465637159712e-05, 2.644179518984236e-06,
      -4.239473659313765e-08),
     (1.0, -0.10442259084438711, -0.26764531281014026, 0.09695000254621984,
      -0.01601745692712991, 0.001496414899205908, -8.462452563778485e-05,
      2.7289384034767266e-06, -4.239462431819542e-08)),
    (64.0,
     (0.12125611181054567, -0.5823133179043894, 0.2348887314557017, -0.030400343181132484,
      0.0015100821468651906, -2.5231370954995714e-05),
     (1.0, -1.002252150365854, 0.2928709694872224, -0.03337004338674008,
      0.0015605448811273888, -2.5231370936032347e-05)),
    (np.inf,
     (-0.7657847078286127, 0.6886192415566705, -0.2132598113545206, 0.033461075523841935,
      -0.003076541477344756, 0.00017471193164549074, -6.1037116822741705e-06,
      1.218032765428652e-07, -1.0860761027932903e-09),
     (1.0, -1.8888028686623086, 1.066691687211409, -0.27519159823063805,
      0.039308526882338234, -0.003414684558602365, 0.00018668443707035555,
      -6.345146083130515e-06, 1.239754287483207e-07, -1.0860761027931265e-09)),
)


def _ei_positive(x):
  """Ei(x) for x > 0 (other entries are garbage and must be masked by the caller)."""
  a = jnp.where(x <= 2, x, jnp.ones_like(x))
  num, den = _EI_SMALL
  result = _EULER + lax_tr.log(a) + a * _horner(num, a) / _horner(den, a)
  lower = 2.0
  for upper, num, den in _EI_LARGE:
    inside = (x > lower) & (x <= upper)
    w = 1 / jnp.where(inside, x, jnp.full_like(x, min(2 * lower, 128.0)))
    half_exp = lax.exp(0.5 / w)  # exp(x) in two halves: exp(x) / x may be finite when exp(x) is not
    value = half_exp * (half_exp * w) * (1 + w * _horner(num, w) / _horner(den, w))
    result = jnp.where(inside, value, result)
    lower = upper
  return result


_MAX_ITERATIONS = 1000  # a cap for the loops below; they converge in far fewer steps


def _masked_loop(step, active, state):
  """Runs `state = step(state)` on the entries still `active` until no entry is.

  `step(state)` returns (new_state, converged); converged entries stop
  changing. The loop is over whole arrays, so it works under jit and vmap.
  """
  def cond(carry):
    i, active, _ = carry
    return jnp.any(active) & (i < _MAX_ITERATIONS)

  def body(carry):
    i, active, state = carry
    new_state, converged = step(state)
    state = tuple(jnp.where(active, new, old) for new, old in zip(new_state, state, strict=True))
    return i + 1, active & ~converged, state

  return while_loop(cond, body, (np.int32(0), active, state))[2]


def _expn_series(n, x, active):
  """E_n(x) for 0 < x <= 1 and integer n >= 1, by the power series around 0.

  E_n(x) = c (psi(n) - log x) - sum_{k >= 0, k != n-1} (-x)^k / (k! (k - n + 1)),
  where c = (-x)^(n-1) / (n-1)! is the skipped k = n - 1 term and
  psi(n) = -gamma + sum_{k < n} 1/k. Both come out of the same loop, which
  runs at least to k = n - 1 unless the terms have underflowed. (lgamma and
  digamma would cost float32 several ulps at small integers.)
  """
  eps = dtypes.finfo(x.dtype).eps
  zero, one = jnp.zeros_like(x), jnp.ones_like(x)

  def step(state):
    k, term, total, harmonic, c = state
    k = k + 1
    term = term * (-x) / k
    denom = k - n + 1
    pole = denom == 0
    total = total + jnp.where(pole, zero, term / jnp.where(pole, one, denom))
    harmonic = harmonic + jnp.where(k < n, 1 / k, zero)
    c = jnp.where(pole, term, c)
    small = lax.abs(term) <= eps * lax.abs(total)
    return (k, term, total, harmonic, c), small & ((k >= n - 1) | (term == 0))

  init = (zero, one, jnp.where(n == 1, zero, 1 / (1 - n)), zero, jnp.where(n == 1, one, zero))
  _, _, total, harmonic, c = _masked_loop(step, active, init)
  value = c * (harmonic - _EULER - lax_tr.log(x)) - total
  return jnp.where(n == lax.floor(n), value, np.nan)  # JAX: NaN for a non-integer n here


def _expn_continued_fraction(n, x, active):
  """E_n(x) for x > 1 by the continued fraction

  E_n(x) = exp(-x) / (x + n / (1 + 1 / (x + (n+1) / (1 + 2 / (x + ...))))).
  """
  eps = dtypes.finfo(x.dtype).eps
  big = 1.44115188075855872e17  # 2^57: rescale the recurrences before they overflow
  one = jnp.ones_like(x)

  def step(state):
    k, p2, p1, q2, q1, result = state
    k = k + 1
    odd = jnp.fmod(k, 2) == 1
    a = jnp.where(odd, one, x)
    b = jnp.where(odd, n + (k - 1) / 2, k / 2)
    p, q = p1 * a + p2 * b, q1 * a + q2 * b
    nonzero = q != 0
    ratio = p / jnp.where(nonzero, q, one)
    t = jnp.where(nonzero, lax.abs((result - ratio) / ratio), one)
    result = jnp.where(nonzero, ratio, result)
    rescale = jnp.where(lax.abs(p) > big, jnp.full_like(x, 1 / big), one)
    return (k, p1 * rescale, p * rescale, q1 * rescale, q * rescale, result), t <= eps

  init = (one, one, one, x, x + n, 1 / (x + n))
  result = _masked_loop(step, active, init)[-1]
  return result * lax.exp(-x)


def _expn_large_n(n, x):
  """E_n(x) for n > 5000: the first terms of the uniform asymptotic expansion in 1/(x + n)."""
  xn = x + n
  y = 1 / (xn * xn)
  s = y * n * (6 * x * x - 8 * n * x + n * n)
  s = y * (s + n * (n - 2 * x))
  s = y * (s + n)
  return (s + 1) * lax.exp(-x) / xn


def _expn_impl(n, x):
  max_log = float(np.log(dtypes.finfo(x.dtype).max))
  invalid = (n < 0) | (x < 0) | jnp.isnan(n) | jnp.isnan(x)
  at_zero = x == 0
  underflow = x > max_log
  order0 = n == 0
  large_n = n > 5000
  special = invalid | at_zero | underflow | order0
  series = ~special & ~large_n & (x <= 1)
  fraction = ~special & ~large_n & (x > 1)
  # Each method sees only its own entries; the others get a harmless stand-in.
  safe_n = jnp.where(special | large_n, jnp.ones_like(n), n)
  x_series = jnp.where(series, x, jnp.full_like(x, 0.5))
  x_fraction = jnp.where(fraction, x, jnp.full_like(x, 2.0))
  x_other = jnp.where(special, jnp.ones_like(x), x)
  values = jnp.where(series, _expn_series(safe_n, x_series, series),
                     _expn_continued_fraction(safe_n, x_fraction, fraction))
  values = jnp.where(large_n, _expn_large_n(jnp.where(large_n, n, 6000.0), x_other), values)
  x_positive = jnp.where(x > 0, x, jnp.ones_like(x))
  edge = jnp.where(order0, lax.exp(-x_positive) / x_positive, jnp.zeros_like(x))  # 0 past max_log
  edge = jnp.where(at_zero, jnp.where(n < 2, np.inf, 1 / jnp.maximum(n - 1, 1)), edge)
  edge = jnp.where(invalid, np.nan, edge)
  return jnp.where(special, edge, values).astype(x.dtype)


# n is an ordinary argument here (JAX makes it a nondiff argument); the rule
# gives it a zero tangent, which is what stop_gradient on a nondiff argument does.
@custom_jvp
def _expn(n, x):
  return _expn_impl(n, x)


def _expn_lower(n, x):
  """E_{n-1}(x), with the closed forms E_0(x) = exp(-x)/x and E_{-1}(x) = exp(-x)(1 + x)/x^2
  for n = 1 and n = 0 (JAX returns NaN for E_{-1}, so its second derivative of exp1 is NaN)."""
  e0 = lax.exp(-x) / x
  e_minus1 = e0 * (1 + 1 / x)
  general = _expn(jnp.where(n >= 2, n, jnp.full_like(n, 2.0)) - 1, x)
  value = jnp.where(n >= 2, general, jnp.where(n == 1, e0, e_minus1))
  return jnp.where((n < 0) | (x < 0), np.nan, value)


@_expn.defjvp
def _expn_jvp(primals, tangents):
  (n, x), (_, x_dot) = primals, tangents
  n, x = jnp.asarray(n), jnp.asarray(x)  # xjax may hand the rule Python scalars
  return _expn(n, x), -x_dot * _expn_lower(n, x)


def expn(n, x):
  """The generalized exponential integral E_n(x) = int_1^inf exp(-x t) / t^n dt.

  Args:
    n: an array-like of integer values n >= 0 (any real dtype).
    x: an array-like, real, x >= 0. `n` and `x` broadcast together and are
      promoted to a common inexact dtype.

  Returns:
    An array of the broadcast shape. E_n(0) is +inf for n < 2 and 1/(n-1)
    otherwise; NaN where n < 0 or x < 0 or either is NaN; 0 at x = +inf.
    The derivative in x is -E_{n-1}(x); n gets a zero gradient.

  Raises:
    ValueError: the arguments are complex.

  Mirrors `jax.scipy.special.expn`.
  """
  n, x = promote_args_inexact("expn", n, x)
  _reject_complex("expn", x)
  n, x = jnp.broadcast_arrays(n, x)
  return _expn(n, x)


def exp1(x):
  """The exponential integral E_1(x) = int_x^inf exp(-t)/t dt, for real x >= 0.

  Args:
    x: an array-like, real (integers promote to the default float).

  Returns:
    An array of x's shape and inexact dtype: +inf at 0, 0 at +inf, NaN for
    x < 0. The derivative is -exp(-x)/x.

  Raises:
    ValueError: `x` is complex.

  Mirrors `jax.scipy.special.exp1`.
  """
  x, = promote_args_inexact("exp1", x)
  _reject_complex("exp1", x)
  return expn(1, x)


@custom_jvp
def _expi(x):
  positive = x > 0
  value = _ei_positive(jnp.where(positive, x, jnp.ones_like(x)))
  negative = -expn(1, jnp.where(positive, jnp.ones_like(x), -x))  # Ei(x) = -E_1(-x), x < 0
  value = jnp.where(positive, value, negative)
  # Ei(x) ~ e^x / x overflows from about x = 716 on; the series there gives inf / inf at the
  # largest finite x.
  value = jnp.where(x > 1000, np.inf, value)
  return jnp.where(x == 0, -np.inf, value).astype(x.dtype)


_expi.defjvps(lambda g, ans, x: g * lax.exp(x) / x)


def expi(x):
  """The exponential integral Ei(x) = -PV int_{-x}^inf exp(-t)/t dt, for real x.

  Args:
    x: an array-like, real (integers promote to the default float).

  Returns:
    An array of x's shape and inexact dtype: -E_1(-x) for x < 0, -inf at 0,
    +inf from about x = 709.8 (float64) or 88.7 (float32) on. The derivative
    is exp(x)/x.

  Raises:
    ValueError: `x` is complex.

  Mirrors `jax.scipy.special.expi`.
  """
  x, = promote_args_inexact("expi", x)
  _reject_complex("expi", x)
  return _expi(x)
