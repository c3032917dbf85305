"""Special functions of SciPy on xjax arrays (mirrors `jax.scipy.special`).

Every function is a composition of jnp and lax operations; the primitives
(lgamma, digamma, igamma, betainc, zeta, bessel_i0e, ...) live in
`xjax._src.lax`. Functions whose naive derivative is wrong or NaN at a
boundary (xlogy, xlog1py, logit, log_ndtr, zeta, poch) carry JAX's custom
JVP rules.
"""
from __future__ import annotations

import operator

import numpy as np

import xjax.numpy as jnp
from xjax._src import dtypes
from xjax._src.api import jvp
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.lax import elementwise as lax
from xjax._src.lax import special as lax_special
from xjax._src.lax import transcendental as lax_tr
from xjax._src.nn.functions import log_softmax as _nn_log_softmax
from xjax._src.nn.functions import logsumexp as logsumexp  # the same function as in JAX
from xjax._src.nn.functions import softmax as _nn_softmax
from xjax._src.numpy.util import concrete_or_error, promote_args_inexact


def _is_complex(x):
  return dtypes.issubdtype(x.dtype, np.complexfloating)


def _reject_complex(name, x):
  if _is_complex(x):
    raise ValueError(f"{name} does not support complex-valued inputs.")


def _check_float32_or_64(x):
  if x.dtype not in (np.float32, np.float64):
    raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported types.")


# ----------------------------------------------------------------------------
# Gamma, beta and related functions


# log Gamma(1 + e) = -gamma e + sum_{k>=2} (-1)^k zeta(k) e^k / k (DLMF 5.7.3), for |e| <= 0.5.
_LGAMMA1P_COEFFS = [(-1) ** k * (1 + lax_special.zeta_minus_one(k)) / k for k in range(2, 62)]


def _lgamma1p_series(e):
  """log Gamma(1 + e) for |e| <= 0.5, with full relative accuracy (exactly 0 at e = 0)."""
  series = jnp.zeros_like(e)
  for c in reversed(_LGAMMA1P_COEFFS):
    series = (series + c) * e
  return (series - np.euler_gamma) * e


def _lgamma_value(x):
  """log|Gamma(x)| with full relative accuracy next to its zeros x = 1 and x = 2 (XLA's
  lgamma is a Lanczos sum whose absolute error, ~5e-7 in float32, makes lgamma(1) = 4.8e-7
  there), and -inf at -inf as SciPy (log|Gamma| goes to -inf between the poles)."""
  near1 = jnp.abs(x - 1) < 0.5
  near2 = jnp.abs(x - 2) <= 0.5
  e = jnp.where(near1, x - 1, jnp.where(near2, x - 2, jnp.zeros_like(x)))  # exact (Sterbenz)
  series = _lgamma1p_series(e) + jnp.where(near2, lax.log1p(e), jnp.zeros_like(e))
  out = jnp.where(near1 | near2, series, lax_tr.lgamma(x))
  return jnp.where(x == -np.inf, x, out)


@custom_jvp
def _lgamma(x):
  return _lgamma_value(x)


_lgamma.defjvps(lambda g, ans, x: g * lax_tr.digamma(x))


def gammaln(x):
  """log|Gamma(x)| elementwise, for real `x` (promoted to an inexact dtype).

  Exact at x = 1 and 2 (log Gamma's Taylor series near them); -inf at -inf, as SciPy.
  Returns an array of x's shape and (inexact) dtype. Raises TypeError for
  complex input. Mirrors `jax.scipy.special.gammaln`.
  """
  x, = promote_args_inexact("gammaln", x)
  return _lgamma(x)


def gammasgn(x):
  """The sign of Gamma(x): +1 or -1; -1 at -0.0; NaN at non-positive integers, -inf and NaN.

  Raises ValueError for complex input. Mirrors `jax.scipy.special.gammasgn`.
  """
  x, = promote_args_inexact("gammasgn", x)
  _reject_complex("gammasgn", x)
  floor_x = lax.floor(x)
  negative = x < 0
  undefined = (negative & (x == floor_x)) | jnp.isnan(x)
  minus = (negative & (jnp.mod(floor_x, 2) != 0)) | ((x == 0) & jnp.signbit(x))
  one = np.array(1, x.dtype)
  return jnp.where(undefined, np.array(np.nan, x.dtype), jnp.where(minus, -one, one))


def loggamma(x):
  """The principal branch of log(Gamma(x)) for real `x`: lgamma(x) for x > 0, NaN otherwise.

  Complex input gives the principal branch (NaN+NaNj at the poles). Mirrors
  `jax.scipy.special.loggamma`.
  """
  x, = promote_args_inexact("loggamma", x)
  if _is_complex(x):
    from xjax._src.scipy.special_hypergeometric import complex_loggamma
    return complex_loggamma(x)
  # +-0 is a pole: inf, as SciPy.
  return jnp.where(x > 0, _lgamma(x), jnp.where(x == 0, np.inf, np.nan))


def gamma(x):
  """Gamma(x): for real `x` +-inf at +-0, NaN at negative integers and -inf.

  Complex input is supported (NaN+NaNj at the poles). Mirrors `jax.scipy.special.gamma`.
  """
  x, = promote_args_inexact("gamma", x)
  if _is_complex(x):
    from xjax._src.scipy.special_hypergeometric import complex_gamma
    return complex_gamma(x)
  return gammasgn(x) * lax.exp(_lgamma(x))


def _algdiv(a, b):
  """log(Gamma(b) / Gamma(a + b)) for b >= 8 and a <= b (the asymptotic form of SciPy's cdflib),
  and its part w - u without the term v = a (log b - 1)."""
  c0, c1, c2 = 0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03
  c3, c4, c5 = -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02
  h = a / b
  c = h / (1 + h)
  x = 1 / (1 + h)
  x2 = x * x
  s3 = 1.0 + (x + x2)
  s5 = 1.0 + (x + x2 * s3)
  s7 = 1.0 + (x + x2 * s5)
  s9 = 1.0 + (x + x2 * s7)
  s11 = 1.0 + (x + x2 * s9)
  t = (1.0 / b) ** 2
  w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 * s3) * t + c0
  w = w * (c / b)
  # u = (b + a - 1/2) log1p(h), as a (1 + (a - 1/2) / b) log1p(h) / h: h = a / b may
  # underflow to 0 (b near the largest float), where log1p(h) / h is 1.
  safe_h = jnp.where(h == 0, 1, h)
  u = a * (1 + (a - 0.5) / b) * jnp.where(h == 0, 1, lax.log1p(safe_h) / safe_h)
  v = a * (lax_tr.log(b) - 1.0)
  return jnp.where(u <= v, (w - v) - u, (w - u) - v), w - u


def _beta_poles(a, b):
  """Where a or b is a pole of Gamma (a non-positive integer, -inf included); where B(a, b)
  is there the finite limit B(-n, m) = (-1)^m B(n + 1 - m, m) (whole 0 < m <= n, both below
  2**31; elsewhere at the poles SciPy, i.e. cephes, gives inf); and that n and m."""
  pole_a = (a <= 0) & (a == lax.floor(a))
  pole_b = (b <= 0) & (b == lax.floor(b))
  n = jnp.where(pole_a, a, b)
  m = jnp.where(pole_a, b, a)
  whole_m = (m == lax.floor(m)) & (m > 0) & (m < 2.0 ** 31)
  pole = pole_a | pole_b
  return pole, pole & (n > -2.0 ** 31) & whole_m & (m <= -n), n, m


def betaln(a, b):
  """log|B(a, b)|, accurate also for large arguments (asymptotic form when max(a, b) >= 8).

  `a` and `b` broadcast together. Mirrors `jax.scipy.special.betaln`.
  """
  a, b = promote_args_inexact("betaln", a, b)
  pole, finite_pole, n, m = _beta_poles(a, b)
  one = jnp.ones_like(a)
  a = jnp.where(finite_pole, (-n - m) + 1, jnp.where(pole, one, a))
  b = jnp.where(finite_pole, m, jnp.where(pole, one, b))
  a, b = jnp.minimum(a, b), jnp.maximum(a, b)
  small_b = _lgamma(a) + (_lgamma(b) - _lgamma(a + b))
  algdiv, w_minus_u = _algdiv(a, b)
  large_b = _lgamma(a) + algdiv
  # For a >= 1e6 Stirling's lgamma(a) = (a - 1/2) log a - a + log(2 pi) / 2 cancels the v of
  # algdiv without overflow (lgamma(a) is inf for a near float32's largest value).
  huge_a = (w_minus_u - a * lax_tr.log(b / a)) + 0.5 * (float(np.log(2 * np.pi)) - lax_tr.log(a))
  out = jnp.where(b < 8, small_b, jnp.where(a >= 1e6, huge_a, large_b))
  # a = inf: B(inf, b) is 0 for b > 0 and infinite for b < 0; inf with inf or nan is nan.
  out = jnp.where((b == np.inf) & ~jnp.isnan(a) & (a != np.inf),
                  jnp.where(a > 0, -np.inf, np.inf), out)
  return jnp.where(pole & ~finite_pole, np.inf, out)


def beta(a, b):
  """B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b), with its sign.

  Raises ValueError for complex input. Mirrors `jax.scipy.special.beta`.
  """
  a, b = promote_args_inexact("beta", a, b)
  _reject_complex("beta", a)
  pole, finite_pole, n, m = _beta_poles(a, b)
  # At the poles SciPy's sign is (-1)^m where a is a pole -n and b = m <= n a whole number
  # (both below 2**31), else inf; at a + b a pole (and neither a nor b) B is 0.
  whole = (m == lax.floor(m)) & (jnp.abs(m) < 2.0 ** 31) & (n > -2.0 ** 31) & (m <= -n)
  pole_sign = jnp.where(whole & (jnp.mod(m, 2) == 1), -1.0, 1.0)
  sign_ab = gammasgn(a + b)
  sign_ab = jnp.where(jnp.isnan(sign_ab) & ~jnp.isnan(a + b), 1.0, sign_ab)
  sign = jnp.where(pole, pole_sign, gammasgn(a) * gammasgn(b) * sign_ab)
  return sign * jnp.where(pole & ~finite_pole, np.inf, lax.exp(betaln(a, b)))


def betainc(a, b, x):
  """The regularized incomplete beta function I_x(a, b); `a`, `b`, `x` broadcast together.

  Raises ValueError for complex input. Mirrors `jax.scipy.special.betainc`.
  """
  a, b, x = promote_args_inexact("betainc", a, b, x)
  _reject_complex("betainc", x)
  return lax_special.betainc(*jnp.broadcast_arrays(a, b, x))


def digamma(x):
  """psi(x) = d/dx log Gamma(x), elementwise (mirrors `jax.scipy.special.digamma`)."""
  x, = promote_args_inexact("digamma", x)
  # psi(x) ~ -1/x at the pole 0: -inf at +0 and inf at -0, as SciPy (XLA gives NaN).
  return jnp.where(x == 0, jnp.where(jnp.signbit(x), np.inf, -np.inf), lax_tr.digamma(x))


def polygamma(n, x):
  """The n-th derivative of digamma at x; `n` must have an integer dtype.

  Raises ValueError when `n` is not of integer dtype or `x` is complex.
  Mirrors `jax.scipy.special.polygamma`.
  """
  n_dtype = np.result_type(n) if not hasattr(n, "dtype") else n.dtype
  if not dtypes.issubdtype(n_dtype, np.integer):
    n_dtype = dtypes.canonicalize_dtype(n_dtype)
    raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype {n_dtype}.")
  n, x = promote_args_inexact("polygamma", n, x)
  _reject_complex("polygamma", x)
  return lax_tr.polygamma(*jnp.broadcast_arrays(n, x))


def gammainc(a, x):
  """The regularized lower incomplete gamma function P(a, x) (mirrors `jax.scipy.special.gammainc`)."""
  a, x = promote_args_inexact("gammainc", a, x)
  return lax_special.igamma(*jnp.broadcast_arrays(a, x))


def gammaincc(a, x):
  """The regularized upper incomplete gamma function Q(a, x) (mirrors `jax.scipy.special.gammaincc`)."""
  a, x = promote_args_inexact("gammaincc", a, x)
  return lax_special.igammac(*jnp.broadcast_arrays(a, x))


def factorial(n, exact: bool = False):
  """n! as a float, via exp(lgamma(n + 1)); 0 for n < 0.

  Raises NotImplementedError for exact=True. Mirrors `jax.scipy.special.factorial`.
  """
  if exact:
    raise NotImplementedError("factorial with exact=True")
  n, = promote_args_inexact("factorial", n)
  return jnp.where(n < 0, 0, lax.exp(_lgamma(n + 1)))


def comb(N, k, *, repetition: bool = False):
  """"N choose k" as a float via gammaln; 0 when N < 0, k < 0 or k > N (without repetition).

  With repetition=True it is comb(N + k - 1, k), and 1 for k == 0, N >= 0.
  Mirrors `jax.scipy.special.comb`.
  """
  N, k = promote_args_inexact("comb", N, k)
  if repetition:
    return jnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1, k))
  valid = (k <= N) & (N >= 0) & (k >= 0)
  N = jnp.where(valid, N, 0.0)
  k = jnp.where(valid, k, 0.0)
  value = lax.exp(gammaln(N + 1) - gammaln(k + 1) - gammaln(N + 1 - k))
  return jnp.where(valid, value, 0.0)


@custom_jvp
def _poch(z, m):
  return jnp.where(m == 0., np.array(1, z.dtype), gamma(z + m) / gamma(z))


_poch.defjvps(
    lambda z_dot, ans, z, m: (digamma(z + m) - digamma(z)) * _poch(z, m) * z_dot,
    lambda m_dot, ans, z, m: digamma(z + m) * _poch(z, m) * m_dot)


def poch(z, m):
  """The Pochhammer symbol (z)_m = Gamma(z + m) / Gamma(z); 1 where m == 0.

  Raises ValueError for complex input. Mirrors `jax.scipy.special.poch`.
  """
  z, m = promote_args_inexact("poch", z, m)
  if _is_complex(z):
    raise ValueError("jnp.poch does not support complex-valued inputs.")
  return _poch(*jnp.broadcast_arrays(z, m))


def multigammaln(a, d):
  """The log of the multivariate gamma function of dimension `d` (a concrete int).

  Returns an array of a's shape. Raises ConcretizationTypeError for a traced
  `d`. Mirrors `jax.scipy.special.multigammaln`.
  """
  d = int(concrete_or_error(d, "d argument of multigammaln"))
  a, d_ = promote_args_inexact("multigammaln", a, d)
  constant = 0.25 * d_ * (d_ - 1) * np.log(np.pi).astype(a.dtype)
  b = jnp.arange(d, dtype=d_.dtype) / 2
  return jnp.sum(gammaln(a[..., None] - b), axis=-1) + constant


def bernoulli(n: int):
  """The first n + 1 Bernoulli numbers B_0..B_n (convention B_1 = -1/2), as floats.

  Raises ValueError for negative n, ConcretizationTypeError for a traced n.
  Mirrors `jax.scipy.special.bernoulli`.
  """
  n = operator.index(concrete_or_error(n, "Argument n of bernoulli"))
  if n < 0:
    raise ValueError("n must be a non-negative integer.")
  first = jnp.array([1, -1 / 2, 1 / 6])
  if n < 3:
    return first[:n + 1]
  # B_m = 2 (-1)^(m/2+1) m! zeta(m) / (2 pi)^m for even m, built by cumulative products.
  out = jnp.zeros(n + 1).at[:3].set(first)
  m = jnp.arange(4, n + 1, 2, dtype=out.dtype)
  ratio = jnp.cumprod(-(m - 1) * m / (4 * np.pi ** 2)) / np.pi ** 2
  k = jnp.arange(2, 50, dtype=out.dtype)
  zeta_m_minus_1 = jnp.sum(k[:, None] ** -m[None, :], axis=0)
  return out.at[4::2].set(ratio * (1 + zeta_m_minus_1))


# ----------------------------------------------------------------------------
# Error function and normal distribution


def erf(x):
  """The error function, for real `x` (mirrors `jax.scipy.special.erf`)."""
  x, = promote_args_inexact("erf", x)
  return lax_tr.erf(x)


def erfc(x):
  """1 - erf(x), computed accurately for large x (mirrors `jax.scipy.special.erfc`)."""
  x, = promote_args_inexact("erfc", x)
  return lax_tr.erfc(x)


def erfinv(x):
  """The inverse of erf on (-1, 1); +-inf at +-1 (mirrors `jax.scipy.special.erfinv`)."""
  x, = promote_args_inexact("erfinv", x)
  return lax_tr.erf_inv(x)


def _ndtr(x):
  dtype = x.dtype.type
  half_sqrt_2 = dtype(0.5 * np.sqrt(2.))
  w = x * half_sqrt_2
  z = lax.abs(w)
  y = jnp.where(z < half_sqrt_2, dtype(1.) + lax_tr.erf(w),
                jnp.where(w > dtype(0.), dtype(2.) - lax_tr.erfc(z), lax_tr.erfc(z)))
  return dtype(0.5) * y


def ndtr(x):
  """The standard normal CDF of `x` (float32 or float64).

  Raises TypeError for other dtypes (integers included). Mirrors
  `jax.scipy.special.ndtr`.
  """
  x = jnp.asarray(x)
  _check_float32_or_64(x)
  return _ndtr(x)


# Rational approximations of ndtri (Cephes): for p near 1/2, and for the tails.
_NDTRI_P0 = [-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0]
_NDTRI_Q0 = [1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
             1.59056225126211695515E1, -1.18331621121330003142E0]
_NDTRI_P1 = [4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4]
_NDTRI_Q1 = [1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4]
_NDTRI_P2 = [3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9]
_NDTRI_Q2 = [1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9]


def ndtri(p):
  """The inverse of ndtr: x with ndtr(x) = p; -inf at 0, inf at 1, NaN outside [0, 1].

  Raises TypeError unless p is float32 or float64. Mirrors `jax.scipy.special.ndtri`.
  """
  p = jnp.asarray(p)
  _check_float32_or_64(p)
  dtype = p.dtype.type

  def poly(coeffs, v):
    return jnp.polyval(np.array(coeffs, p.dtype), v)

  upper = p > dtype(-np.expm1(-2.))
  q = jnp.where(upper, dtype(1.) - p, p)  # the tail probability nearer 0
  q = jnp.where(q == dtype(0.), dtype(0.5), q)
  w = q - dtype(0.5)
  ww = lax.square(w)
  central = -(w + w * ww * (poly(_NDTRI_P0, ww) / poly(_NDTRI_Q0, ww))) * dtype(np.sqrt(2. * np.pi))
  z = lax_tr.sqrt(dtype(-2.) * lax_tr.log(q))
  first = z - lax_tr.log(z) / z
  far = first - poly(_NDTRI_P2, 1 / z) / poly(_NDTRI_Q2, 1 / z) / z
  near = first - poly(_NDTRI_P1, 1 / z) / poly(_NDTRI_Q1, 1 / z) / z
  x = jnp.where(q > dtype(np.exp(-2.)), central, jnp.where(z >= dtype(8.0), far, near))
  x = jnp.where(p > dtype(1. - np.exp(-2.)), x, -x)
  inf = dtype(np.inf)
  return jnp.where(p == dtype(0.), -inf, jnp.where(p == dtype(1.), inf, x))


_LOG_NDTR_SEGMENTS = {np.dtype(np.float64): (-20.0, 8.0), np.dtype(np.float32): (-10.0, 5.0)}


def _log_ndtr_lower(x, series_order):
  """log ndtr(x) for very negative x by the asymptotic series of Abramowitz & Stegun 26.2.12."""
  dtype = x.dtype.type
  x_2 = lax.square(x)
  log_scale = -dtype(0.5) * x_2 - lax_tr.log(-x) - dtype(0.5 * np.log(2. * np.pi))
  total = jnp.ones_like(x)
  x_2n = x_2
  for n in range(1, series_order + 1):
    term = dtype(np.prod(np.arange(2 * n - 1, 1, -2))) / x_2n  # (2n - 1)!! / x^(2n)
    total = total - term if n % 2 else total + term
    x_2n = x_2n * x_2
  return log_scale + lax_tr.log(total)


def _log_ndtr_impl(x, series_order):
  lower, upper = (np.array(v, x.dtype) for v in _LOG_NDTR_SEGMENTS[x.dtype])
  above = x > upper
  positive = x > 0
  # For x > 0, log(1 - ndtr(-x)) by log1p: ndtr(x) rounded near 1 loses the relative accuracy
  # of its log (float32 log_ndtr(3) was off by 2e-5).
  ndtr_value = _ndtr(jnp.where(positive, -x, jnp.maximum(x, lower)))
  return jnp.where(above, -ndtr_value,  # log(1 - e) ~ -e
                   jnp.where(positive, lax.log1p(-ndtr_value),
                             jnp.where(x > lower, lax_tr.log(ndtr_value),
                                       _log_ndtr_lower(jnp.minimum(x, lower), series_order))))


_log_ndtr = custom_jvp(_log_ndtr_impl, nondiff_argnums=(1,))


@_log_ndtr.defjvp
def _log_ndtr_jvp(series_order, primals, tangents):
  (x,), (t,) = primals, tangents
  x = jnp.asarray(x)
  ans = _log_ndtr(x, series_order)
  log_pdf = -0.5 * lax.square(x) - np.array(np.log(np.sqrt(2 * np.pi)), x.dtype)
  return ans, t * lax.exp(log_pdf - ans)


def log_ndtr(x, series_order: int = 3):
  """log of the standard normal CDF, accurate far into both tails.

  `series_order` (a Python int in [0, 30]) is the number of terms of the
  asymptotic series used for x below -20 (float64) or -10 (float32). The
  derivative is exp(log_pdf(x) - log_ndtr(x)). Raises TypeError for a
  non-int series_order or a dtype other than float32/float64, ValueError for
  series_order out of range. Mirrors `jax.scipy.special.log_ndtr`.
  """
  if not isinstance(series_order, int):
    raise TypeError("series_order must be a Python integer.")
  if series_order < 0:
    raise ValueError("series_order must be non-negative.")
  if series_order > 30:
    raise ValueError("series_order must be <= 30.")
  x = jnp.asarray(x)
  if x.dtype not in _LOG_NDTR_SEGMENTS:
    raise TypeError(f"x.dtype={x.dtype} is not supported.")
  return _log_ndtr(x, series_order)


# ----------------------------------------------------------------------------
# Logistic, softmax, entropies


@custom_jvp
def _logit(x):
  return lax_tr.log(x / (1 - x))


_logit.defjvps(lambda g, ans, x: g / (x * (1 - x)))


def logit(x):
  """log(x / (1 - x)), with derivative 1 / (x (1 - x)) (mirrors `jax.scipy.special.logit`)."""
  x, = promote_args_inexact("logit", x)
  return _logit(x)


def expit(x):
  """The logistic sigmoid 1 / (1 + exp(-x)) (mirrors `jax.scipy.special.expit`)."""
  x, = promote_args_inexact("expit", x)
  return lax_tr.logistic(x)


def softmax(x, /, *, axis=None):
  """exp(x) / sum(exp(x)) over `axis` (default: all axes) (mirrors `jax.scipy.special.softmax`)."""
  return _nn_softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
  """x - logsumexp(x) over `axis` (default: all axes) (mirrors `jax.scipy.special.log_softmax`)."""
  return _nn_log_softmax(x, axis=axis)


@custom_jvp
def _xlogy(x, y):
  # 0 where x == 0 (even for y == 0), but NaN in y propagates, as in SciPy.
  return jnp.where((x != 0.) | jnp.isnan(y), x * lax_tr.log(y), jnp.zeros_like(x))


@_xlogy.defjvp
def _xlogy_jvp(primals, tangents):
  (x, y), (x_dot, y_dot) = primals, tangents
  out = _xlogy(x, y)
  return out, (x_dot * lax_tr.log(y) + y_dot * x / y).astype(out.dtype)


def xlogy(x, y):
  """x * log(y), and 0 where x == 0 (unless y is NaN); `x`, `y` broadcast together.

  Its JVP is x_dot log(y) + y_dot x / y. Mirrors `jax.scipy.special.xlogy`.
  """
  x, y = promote_args_inexact("xlogy", x, y)
  return _xlogy(*jnp.broadcast_arrays(x, y))


@custom_jvp
def _xlog1py(x, y):
  return jnp.where((x != 0.) | jnp.isnan(y), x * lax.log1p(y), jnp.zeros_like(x))


@_xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
  (x, y), (x_dot, y_dot) = primals, tangents
  out = _xlog1py(x, y)
  return out, (x_dot * lax.log1p(y) + y_dot * x / (1 + y)).astype(out.dtype)


def xlog1py(x, y):
  """x * log1p(y), and 0 where x == 0 (unless y is NaN); `x`, `y` broadcast together.

  Its JVP is x_dot log1p(y) + y_dot x / (1 + y). Mirrors `jax.scipy.special.xlog1py`.
  """
  x, y = promote_args_inexact("xlog1py", x, y)
  return _xlog1py(*jnp.broadcast_arrays(x, y))


@custom_jvp
def _xlogx(x):
  return _xlogy(x, x)


_xlogx.defjvps(lambda g, ans, x: g * (lax_tr.log(x) + 1))


def entr(x):
  """-x log(x) for x >= 0 (0 at 0), -inf for x < 0; raises ValueError for complex input.

  Mirrors `jax.scipy.special.entr`.
  """
  x, = promote_args_inexact("entr", x)
  _reject_complex("entr", x)
  return jnp.where(x < 0, np.array(-np.inf, x.dtype), -_xlogx(x))


def rel_entr(p, q):
  """p log(p / q) for p, q > 0; 0 where p == 0 and q >= 0; inf otherwise.

  Raises ValueError for complex input. Mirrors `jax.scipy.special.rel_entr`.
  """
  p, q = promote_args_inexact("rel_entr", p, q)
  _reject_complex("rel_entr", p)
  p, q = jnp.broadcast_arrays(p, q)
  return _rel_entr(p, q, jnp.zeros_like(p))


def _rel_entr(p, q, at_p_zero):
  """p log(p / q) for p, q > 0; `at_p_zero` where p == 0 and q >= 0; NaN where p or q is
  NaN (as SciPy); inf otherwise."""
  both_positive = (p > 0) & (q > 0)
  p_zero = (p == 0) & (q >= 0)
  safe_p = jnp.where(both_positive, p, 1)
  safe_q = jnp.where(both_positive, q, 1)
  # log(p / q) while p / q neither overflows nor underflows, else log p - log q.
  ratio = safe_p / safe_q
  tiny = np.finfo(p.dtype).smallest_normal
  ratio_ok = (ratio >= tiny) & (ratio < np.inf)
  log_ratio = jnp.where(ratio_ok, lax_tr.log(jnp.where(ratio_ok, ratio, 1)),
                        lax_tr.log(safe_p) - lax_tr.log(safe_q))
  value = safe_p * log_ratio
  out = jnp.where(both_positive, value, jnp.where(p_zero, at_p_zero, np.inf))
  return jnp.where(jnp.isnan(p) | jnp.isnan(q), np.nan, out)


def kl_div(p, q):
  """rel_entr(p, q) - p + q (mirrors `jax.scipy.special.kl_div`); ValueError for complex input."""
  p, q = promote_args_inexact("kl_div", p, q)
  _reject_complex("kl_div", p)
  p, q = jnp.broadcast_arrays(p, q)
  # q - p only where both are positive: inf - inf would turn SciPy's inf into NaN.
  both_positive = (p > 0) & (q > 0)
  return _rel_entr(p, q, q) + jnp.where(both_positive, q - p, jnp.zeros_like(p))


def boxcox(x, lmbda):
  """The Box-Cox transform: (x**lmbda - 1) / lmbda, and log(x) where lmbda == 0.

  Mirrors `jax.scipy.special.boxcox`.
  """
  x, lmbda = promote_args_inexact("boxcox", x, lmbda)
  log_x = jnp.log(x)
  zero = _boxcox_log_limit(lmbda, log_x)
  value = jnp.where(zero, log_x, _expm1_over(lmbda, log_x, zero))
  # exact, also where x**1 rounds to overflow
  return jnp.where((lmbda == 1) & (x >= 0), x - 1, value)


def _expm1_over(lmbda, log_x, zero):
  """expm1(lmbda log_x) / lmbda; where expm1(t), t = lmbda log_x, overflows (or nearly) as
  sign(lmbda) exp(t - log|lmbda|): the quotient may not (|lmbda| > 1), and 1 / |lmbda| is
  negligible there."""
  safe_lmbda = jnp.where(zero, jnp.ones_like(lmbda), lmbda)
  t = safe_lmbda * log_x
  big = t > np.log(np.finfo(log_x.dtype).max) - 1
  abs_lmbda = jnp.abs(safe_lmbda)
  scaled = jnp.sign(safe_lmbda) * jnp.exp(jnp.where(big, t, 0) - jnp.log(abs_lmbda))
  return jnp.where(big, scaled, jnp.expm1(t) / safe_lmbda)


def _boxcox_log_limit(lmbda, log_x):
  """Where (x**lmbda - 1) / lmbda is its limit log(x): |lmbda| < 1e-19, as SciPy, and where
  lmbda log(x) is below the smallest normal number (XLA flushes it to 0, which gave 0)."""
  tiny = np.finfo(log_x.dtype).smallest_normal
  return (jnp.abs(lmbda) < 1e-19) | (jnp.abs(lmbda * log_x) < tiny)


def boxcox1p(x, lmbda):
  """The Box-Cox transform of 1 + x: ((1+x)**lmbda - 1) / lmbda, and log1p(x) where lmbda == 0.

  Mirrors `jax.scipy.special.boxcox1p`.
  """
  x, lmbda = promote_args_inexact("boxcox1p", x, lmbda)
  log1p_x = jnp.log1p(x)
  zero = _boxcox_log_limit(lmbda, log1p_x)
  value = jnp.where(zero, log1p_x, _expm1_over(lmbda, log1p_x, zero))
  # exact, also where (1 + x)**1 rounds to overflow
  return jnp.where((lmbda == 1) & (x >= -1), x, value)


# ----------------------------------------------------------------------------
# Bessel functions


def i0e(x):
  """The exponentially scaled modified Bessel function exp(-|x|) I0(x) (mirrors `jax.scipy.special.i0e`)."""
  x, = promote_args_inexact("i0e", x)
  return lax_special.bessel_i0e(x)


def i0(x):
  """The modified Bessel function of order 0, I0(x) (mirrors `jax.scipy.special.i0`)."""
  x, = promote_args_inexact("i0", x)
  return lax.exp(lax.abs(x)) * lax_special.bessel_i0e(x)


def i1e(x):
  """The exponentially scaled modified Bessel function exp(-|x|) I1(x) (mirrors `jax.scipy.special.i1e`)."""
  x, = promote_args_inexact("i1e", x)
  return lax_special.bessel_i1e(x)


def i1(x):
  """The modified Bessel function of order 1, I1(x) (mirrors `jax.scipy.special.i1`)."""
  x, = promote_args_inexact("i1", x)
  return lax.exp(lax.abs(x)) * lax_special.bessel_i1e(x)


# ----------------------------------------------------------------------------
# Zeta and Spence's function

# (2k)! / B_{2k} for k = 1..16 (B the Bernoulli numbers): Euler-Maclaurin coefficients.
_BERNOULLI_COEFS = np.array([
    12, -720, 30240, -1209600, 47900160, -1307674368000 / 691, 74724249600,
    -10670622842880000 / 3617, 5109094217170944000 / 43867, -802857662698291200000 / 174611,
    14101100039391805440000 / 77683, -1693824136731743669452800000 / 236364091,
    186134520519971831808000000 / 657931, -37893265687455865519472640000000 / 3392780147,
    759790291646040068357842010112000000 / 1723168255201,
    -134196726836183700385281186201600000000 / 7709321041217,
])

_RIEMANN_ZETA_MSG = ("Riemann zeta function not implemented; pass q != None to compute the "
                     "Hurwitz Zeta function.")


def _zeta_series(s, a):
  """Hurwitz zeta by Euler-Maclaurin summation: differentiable in both arguments."""
  dtype = a.dtype.type
  n = 8 if a.dtype == np.float32 else 16
  s_, a_ = s[..., None], a[..., None]
  k = np.arange(n, dtype=a.dtype)
  head = jnp.sum((a_ + k) ** -s_, -1)
  integral = (a + n) ** (dtype(1) - s) / (s - dtype(1))
  t0 = (a + n) ** -s
  m = np.arange(2 * n, dtype=a.dtype)
  t1 = jnp.cumprod((s_ + m) / (a_ + n), -1)[..., ::2]
  t1 = jnp.clip(t1, max=dtypes.finfo(a.dtype).max) / _BERNOULLI_COEFS[:n].astype(a.dtype)
  return head + integral + t0 * (dtype(0.5) + t1.sum(-1))


@custom_jvp
def _zeta(x, q):
  """lax.zeta with SciPy's (cephes') edge cases: inf at x = 1; NaN for x < 1; at q <= 0 inf
  where q is whole and NaN where x is not; the asymptotic form (1/(x - 1) + 1/(2q)) q^(1 - x)
  for q > 1e8 (DLMF 25.11.43; 0 at q = inf); q^-x, its first term, for x >= 1e4 (XLA's
  summation gives NaN for huge x or q)."""
  value = lax_special.zeta(x, q)
  one = jnp.ones_like(q)
  big_q = q > 1e8
  safe_q = jnp.where(big_q, q, one)
  value = jnp.where(big_q, (1 / (x - 1) + 0.5 / safe_q) * safe_q ** (1 - x), value)
  huge_x = (x >= 1e4) & (q > 0)
  value = jnp.where(huge_x, jnp.where(huge_x, q, one) ** -x, value)
  # At q < 0 (not whole) and even x >= 1e4 the term of the n + q nearest 0 is at least 2^x.
  even_x = (x == np.inf) | (jnp.mod(x, 2) == 0)
  value = jnp.where((x >= 1e4) & (q < 0) & even_x, np.inf, value)
  value = jnp.where(jnp.isnan(x) | jnp.isnan(q), np.nan, value)
  q_pole = (q <= 0) & (q == lax.floor(q))
  value = jnp.where(q_pole, np.inf, jnp.where((q <= 0) & (x != lax.floor(x)), np.nan, value))
  return jnp.where(x == 1, np.inf, jnp.where(x < 1, np.nan, value))


_zeta.defjvp(lambda primals, tangents: jvp(_zeta_series, primals, tangents))


def zeta(x, q=None):
  """The Hurwitz zeta function sum_k (k + q)^-x; `x`, `q` broadcast together.

  Derivatives (in x and q) are those of an Euler-Maclaurin expansion. Raises
  NotImplementedError when q is None (the Riemann zeta function). Mirrors
  `jax.scipy.special.zeta`.
  """
  if q is None:
    raise NotImplementedError(_RIEMANN_ZETA_MSG)
  x, q = promote_args_inexact("zeta", x, q)
  return _zeta(*jnp.broadcast_arrays(x, q))


_SPENCE_A = [4.65128586073990045278E-5, 7.31589045238094711071E-3, 1.33847639578309018650E-1,
             8.79691311754530315341E-1, 2.71149851196553469920E0, 4.25697156008121755724E0,
             3.29771340985225106936E0, 1.00000000000000000126E0]
_SPENCE_B = [6.90990488912553276999E-4, 2.54043763932544379113E-2, 2.82974860602568089943E-1,
             1.41172597751831069617E0, 3.63800533345137075418E0, 5.03278880143316990390E0,
             3.54771340985225096217E0, 9.99999999999999998740E-1]


def _spence_positive(x):
  """Spence's function for x > 0 (Cephes): reduce to w in [-1/2, 1/2] and a rational approximation."""
  inverted = x > 2.0
  # log x of the reduced x from the original one: 1 / x is subnormal (flushed to 0) for
  # the largest x, whose log would be -inf (spence(max) was NaN).
  log_x = jnp.where(inverted, -jnp.log(x), jnp.log(x))
  x = jnp.where(inverted, 1.0 / x, x)
  above = x > 1.5
  below = x < 0.5
  inverted = inverted | above
  w = jnp.where(above, 1.0 / x - 1.0, jnp.where(below, -x, x - 1.0))
  y = -w * jnp.polyval(np.array(_SPENCE_A, x.dtype), w) / jnp.polyval(np.array(_SPENCE_B, x.dtype), w)
  y = jnp.where(below, np.pi ** 2 / 6.0 - log_x * jnp.log1p(-x) - y, y)
  return jnp.where(inverted, -0.5 * log_x ** 2 - y, y)


def spence(x):
  """Spence's function, integral from 1 to x of log(t) / (1 - t), for x >= 0; NaN for x < 0.

  Raises TypeError unless x is float32 or float64. Mirrors `jax.scipy.special.spence`.
  """
  x = jnp.asarray(x)
  _check_float32_or_64(x)
  value = _spence_positive(jnp.where(x <= 0, jnp.ones_like(x), x))
  value = jnp.where(x == 0, np.array(np.pi ** 2 / 6, x.dtype), value)
  return jnp.where(x < 0, np.array(np.nan, x.dtype), value)
