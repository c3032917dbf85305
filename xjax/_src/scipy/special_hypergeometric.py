"""Hypergeometric functions, Owen's T, spherical harmonics and Bessel J_n (mirrors
the corresponding names of `jax.scipy.special`), and gamma/loggamma of complex input.

The hypergeometric series follow Pearson, Olver & Porter, "Numerical methods for
the computation of the confluent and Gauss hypergeometric functions" (2014,
arXiv:1407.7786), as JAX does. JAX runs each series as a scalar loop under
`vectorize`; here one `while_loop` runs the whole array, and an element stops
changing once its own stopping test fails, which gives the same values.
"""
from __future__ import annotations

import operator

import numpy as np

import xjax.numpy as jnp
from xjax._src import dtypes
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.jit import jit
from xjax._src.lax import elementwise as lax
from xjax._src.lax import transcendental as lax_tr
from xjax._src.lax.control_flow.loops import fori_loop, while_loop
from xjax._src.lax.control_flow.scan import scan
from xjax._src.numpy.util import concrete_or_error, promote_args_inexact, promote_dtypes_inexact
from xjax._src.scipy.special import digamma, gamma

_MAX_TERMS = 250  # the series cap of JAX's loops


def _eps(x):
  return dtypes.finfo(jnp.asarray(x).dtype).eps


def _elementwise_while(keep_going, step, init, k0=1.0, needed=None):
  """A `while_loop` per element, run on whole arrays in lockstep.

  The state is a scalar counter `k` (starting at `k0`, of the arrays' dtype)
  and a tuple of equally shaped arrays. `keep_going(k, *arrays)` is the
  elementwise stopping test and `step(k, *arrays)` the new arrays; an element
  whose test failed once keeps its values. Elements where `needed` is False
  never step (their value is not used by the caller). Returns the arrays.
  """
  init = tuple(init)
  k0 = np.array(k0, init[0].dtype)

  def active(k, arrays):
    go = keep_going(k, *arrays)
    return go if needed is None else go & needed

  def cond(state):
    k, arrays = state
    return jnp.any(active(k, arrays))

  def body(state):
    k, arrays = state
    go = active(k, arrays)
    new = step(k, *arrays)
    return k + 1, tuple(jnp.where(go, n, o) for n, o in zip(new, arrays, strict=True))

  return while_loop(cond, body, (k0, init))[1]


def _broadcast_call(custom):
  """`custom` (a custom_jvp function) of its broadcast arguments, under `jit`.

  The `jit` outside keeps eager calls from re-tracing and re-compiling the
  custom_jvp function each time: xjax's custom_jvp does not cache its trace.
  """
  return jit(lambda *args: custom(*jnp.broadcast_arrays(*args)))


def _ratio_test(eps):
  """JAX's test of the 1F1 loops: k < 250 and |term| / |serie| > eps."""
  return lambda k, serie, term: (k < _MAX_TERMS) & (lax.abs(term) / lax.abs(serie) > eps)


def _derivative_series(first, ratio, weight, eps):
  """sum_{k>=1} term_k * weight(k), term_1 = first, term_{k+1} = term_k * ratio(k).

  The derivative of a hypergeometric series in one of its parameters, term by
  term: d/da (a)_k = (a)_k (psi(a + k) - psi(a)), with psi the digamma function.
  """
  def step(k, serie, term):
    return serie + term * weight(k), term * ratio(k)
  first = jnp.asarray(first)
  zero = jnp.zeros_like(first)
  return _elementwise_while(_ratio_test(eps), step, (zero, first))[0]


# ----------------------------------------------------------------------------
# The confluent hypergeometric function 1F1


def _hyp1f1_series(a, b, x):
  """The Taylor series of 1F1 (Pearson et al., eq. 3.2, method (a)), for |x| < 100."""
  def step(k, serie, term):
    return serie + term, term * (a + k) / (b + k) * x / (k + 1)
  return _elementwise_while(_ratio_test(_eps(x)), step, (jnp.ones_like(x), a / b * x))[0]


def _hyp1f1_asymptotic(a, b, x):
  """The large-|x| expansion of 1F1 for real arguments (Pearson et al., eq. 3.8)."""
  def step(k, serie, term):
    return serie + term, term * (b - a + k) * (1 - a + k) / (k + 1) / x
  serie = _elementwise_while(_ratio_test(_eps(x)), step,
                             (jnp.ones_like(x), (b - a) * (1 - a) / x))[0]
  return gamma(b) / gamma(a) * lax.exp(x) * x ** (a - b) * serie


@custom_jvp
@jit
def _hyp1f1(a, b, x):
  value = jnp.where(lax.abs(x) < 100, _hyp1f1_series(a, b, x), _hyp1f1_asymptotic(a, b, x))
  # a == 0: 1 (also for b == 0, unlike SciPy); a == b: exp(x); b == 0: inf.
  index = ((a == 0) * 1 + ((a == b) & (a != 0)) * 2 + ((b == 0) & (a != 0)) * 3).astype(np.int32)
  return lax.select_n(index, value, jnp.ones_like(x), lax.exp(x),
                      jnp.full_like(x, np.inf))


def _hyp1f1_ratio(a, b, x):
  return lambda k: (a + k) / (b + k) * x / (k + 1)


@jit
def _hyp1f1_a_derivative(a, b, x):
  return _derivative_series(a / b * x, _hyp1f1_ratio(a, b, x),
                            lambda k: digamma(a + k) - digamma(a), _eps(x))


@jit
def _hyp1f1_b_derivative(a, b, x):
  return _derivative_series(a / b * x, _hyp1f1_ratio(a, b, x),
                            lambda k: digamma(b) - digamma(b + k), _eps(x))


_hyp1f1.defjvps(
    lambda a_dot, ans, a, b, x: _hyp1f1_a_derivative(a, b, x) * a_dot,
    lambda b_dot, ans, a, b, x: _hyp1f1_b_derivative(a, b, x) * b_dot,
    lambda x_dot, ans, a, b, x: a / b * _hyp1f1(a + 1, b + 1, x) * x_dot)


_hyp1f1_call = _broadcast_call(_hyp1f1)


def hyp1f1(a, b, x):
  """The confluent hypergeometric function 1F1(a; b; x) = sum_k (a)_k / (b)_k x^k / k!.

  `a`, `b` and `x` are real and broadcast together (integers promote to the
  default float). Uses the Taylor series for |x| < 100 and an asymptotic
  expansion otherwise (at most 250 terms each), so large values of 1F1 can be
  inaccurate in float32. Returns 1 where a == 0 (also for b == 0, where SciPy
  differs), exp(x) where a == b, and inf where b == 0. Derivatives in all
  three arguments are defined by series (custom JVP). Raises ValueError for
  complex input. Mirrors `jax.scipy.special.hyp1f1`.
  """
  a, b, x = promote_args_inexact("hyp1f1", a, b, x)
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    raise ValueError("hyp1f1 does not support complex-valued inputs.")
  return _hyp1f1_call(a, b, x)


# ----------------------------------------------------------------------------
# The Gauss hypergeometric function 2F1


def _is_nonpositive_integer(a, eps):
  return (a <= 0) & (lax.abs(a - jnp.round(a)) < eps)


def _hyp2f1_terminal(a, b, c, x, needed):
  """The finite sum of 2F1 when a or b is a non-positive integer (Pearson et al., eq. 4.1).

  Of a and b, the negative integer of larger magnitude bounds the sum, unless c
  is a non-positive integer between it and zero.
  """
  eps = _eps(x) * 50
  c_blocks = (c % 1 == 0) & (c <= 0) & (c > b)
  swap = (b < a) & (lax.abs(b - jnp.round(b)) < eps) & ~c_blocks
  a, b = jnp.where(swap, b, a), jnp.where(swap, a, b)
  a = lax.abs(a)

  def step(i, serie, term):
    term = term * -(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x
    return serie + term, term

  one = jnp.ones_like(x)
  return _elementwise_while(lambda i, serie, term: i < a + 1, step, (one, one),
                            needed=needed)[0]


def _hyp2f1_series(a, b, c, x, needed):
  """The Taylor series of 2F1 (Pearson et al., eq. 4.1), at most 250 terms."""
  eps = _eps(x)

  def keep_going(k, serie, term):
    return (k < _MAX_TERMS) & (lax.abs(term) > eps * lax.abs(serie))

  def step(k, serie, term):
    return serie + term, term * (a + k - 1) * (b + k - 1) / (c + k - 1) / k * x

  return _elementwise_while(keep_going, step, (jnp.zeros_like(x), jnp.ones_like(x)),
                            needed=needed)[0]


def _stacked(fun, *args):
  """`fun` of each argument, evaluated as one op on the stacked arguments (a smaller program)."""
  return tuple(fun(jnp.stack(jnp.broadcast_arrays(*args))))


def _hyp2f1_digamma_transform(a, b, c, x, needed):
  """2F1 near x = 1 when c - a - b is an integer (Abramowitz & Stegun 15.3.10-12)."""
  eps = _eps(x)
  d = c - a - b
  s = 1 - x
  rd = jnp.round(d)
  zero = jnp.zeros_like(d)
  e = jnp.where(rd >= 0, d, -d)
  d1 = jnp.where(rd >= 0, d, zero)
  d2 = jnp.where(rd >= 0, zero, d)
  ard = jnp.where(rd >= 0, rd, -rd).astype(np.int32)
  log_s = lax_tr.log(s)

  def psi_sum(t):
    """psi(1 + t) + psi(1 + t + e) - psi(a + t + d1) - psi(b + t + d1) - log(1 - x)."""
    p1, p2, p3, p4 = _stacked(digamma, 1.0 + t, 1.0 + t + e, a + t + d1, b + t + d1)
    return p1 + p2 - p3 - p4 - log_s

  g_e1, g_e2, g_c, g_e, g_ad1, g_bd1, g_ad2, g_bd2, g_a, g_b = _stacked(
      gamma, e + 1.0, e + 2.0, c, e, a + d1, b + d1, a + d2, b + d2, a, b)
  y = psi_sum(jnp.zeros_like(x)) / g_e1
  p = (a + d1) * (b + d1) * s / g_e2

  def keep_going(t, p, q, y):
    return (t < _MAX_TERMS) & (lax.abs(q) >= eps * lax.abs(y))

  def step(t, p, q, y):
    q = p * psi_sum(t)
    p = p * s * (a + t + d1) / (t + 1.0)
    p = p * (b + t + d1) / (t + 1.0 + e)
    return p, q, y + q

  _, _, y = _elementwise_while(keep_going, step, (p, y, y), needed=needed)

  # The finite sum of the |c - a - b| - 1 terms of the other half of the formula.
  def finite_step(i, t, p, y1):
    p = p * s * (a + t + d2) * (b + t + d2) / (1.0 - e + t)
    t = t + 1.0
    p = p / t
    return t, p, y1 + p

  bound = jnp.where(needed, ard, 0).astype(x.dtype)
  one = jnp.ones_like(x)
  _, _, y1 = _elementwise_while(lambda i, t, p, y1: i < bound, finite_step,
                                (jnp.zeros_like(x), one, one))
  y1 = y1 * g_e * g_c / (g_ad1 * g_bd1)
  y_sum = y * g_c / (g_ad2 * g_bd2)
  y_sum = jnp.where((ard & 1) != 0, -y_sum, y_sum)
  q = s ** rd
  summed = jnp.where(rd > 0, y_sum * q + y1, y_sum + y1 * q)
  return jnp.where(rd == 0, y * g_c / (g_a * g_b), summed)


def _hyp2f1_terminal_or_series(a, b, c, x, needed):
  """The finite sum, the digamma transform near x = 1 (integer c - a - b), or the series."""
  eps = _eps(x) * 50
  d = c - a - b
  terminating = _is_nonpositive_integer(a, eps) | _is_nonpositive_integer(b, eps)
  d_is_integer = lax.abs(d - jnp.round(d)) < eps
  index = jnp.where((x > 0.9) & ~terminating, jnp.where(d_is_integer, 1, 0),
                    jnp.where(terminating, 2, 0)).astype(np.int32)
  return lax.select_n(index,
                      _hyp2f1_series(a, b, c, x, needed & (index == 0)),
                      _hyp2f1_digamma_transform(a, b, c, x, needed & (index == 1)),
                      _hyp2f1_terminal(a, b, c, x, needed & (index == 2)))


@custom_jvp
@jit
def _hyp2f1(a, b, c, x):
  eps = _eps(x) * 50
  d = c - a - b
  s = 1 - x
  ca, cb = c - a, c - b
  d_off_integer = lax.abs(d - jnp.round(d)) >= eps
  index = jnp.where(
      (x == 0) | (((a == 0) | (b == 0)) & (c != 0)), 0,        # 1
      jnp.where((c == 0) | ((c < 0) & (c % 1 == 0)), 1,         # inf
      jnp.where((d <= -1) & ~(d_off_integer & (s < 0)), 2,      # Euler's transformation
      jnp.where((d <= 0) & (x == 1), 1,
      jnp.where((x < 1) & (b == c), 3,                          # (1 - x)^-a
      jnp.where((x < 1) & (a == c), 4,                          # (1 - x)^-b
      jnp.where(x > 1, 1,
      jnp.where(x == 1, 5, 6)))))))).astype(np.int32)           # Gauss's theorem; the sum
  # Branches 2 and 6 share one evaluation: of (c - a, c - b, c, x) or of (a, b, c, x).
  euler = index == 2
  summed = _hyp2f1_terminal_or_series(jnp.where(euler, ca, a), jnp.where(euler, cb, b), c, x,
                                      euler | (index == 6))
  g_c, g_d, g_ca, g_cb = _stacked(gamma, c, d, ca, cb)
  return lax.select_n(index,
                      jnp.ones_like(x),
                      jnp.full_like(x, np.inf),
                      s ** d * summed,
                      s ** -a,
                      s ** -b,
                      g_c * g_d / (g_ca * g_cb),
                      summed)


def _hyp2f1_parameter_derivative(a, b, c, x, weight):
  return _derivative_series(a * b / c * x, lambda k: (a + k) * (b + k) / (c + k) / (k + 1) * x,
                            weight, _eps(x))


@jit
def _hyp2f1_a_derivative(a, b, c, x):
  return _hyp2f1_parameter_derivative(a, b, c, x, lambda k: digamma(a + k) - digamma(a))


@jit
def _hyp2f1_b_derivative(a, b, c, x):
  return _hyp2f1_parameter_derivative(a, b, c, x, lambda k: digamma(b + k) - digamma(b))


@jit
def _hyp2f1_c_derivative(a, b, c, x):
  return _hyp2f1_parameter_derivative(a, b, c, x, lambda k: digamma(c) - digamma(c + k))


_hyp2f1.defjvps(
    lambda a_dot, ans, a, b, c, x: _hyp2f1_a_derivative(a, b, c, x) * a_dot,
    lambda b_dot, ans, a, b, c, x: _hyp2f1_b_derivative(a, b, c, x) * b_dot,
    lambda c_dot, ans, a, b, c, x: _hyp2f1_c_derivative(a, b, c, x) * c_dot,
    lambda x_dot, ans, a, b, c, x: a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x) * x_dot)


_hyp2f1_call = _broadcast_call(_hyp2f1)


def hyp2f1(a, b, c, x):
  """The Gauss hypergeometric function 2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k x^k / k!.

  `a`, `b`, `c` and `x` are real and broadcast together (integers promote to
  the default float); the result is meant for x <= 1. Returns 1 where x == 0
  or (a == 0 or b == 0) and c != 0; inf where c is a non-positive integer,
  where x > 1, and where x == 1 with c - a - b <= 0; Gauss's theorem at x == 1.
  Otherwise a finite sum (a or b a non-positive integer), the Taylor series
  (at most 250 terms), Euler's transformation for c - a - b <= -1, or a
  digamma transformation for x > 0.9 and integer c - a - b. Large values can
  be inaccurate in float32. Derivatives in all four arguments are defined by
  series (custom JVP). Mirrors `jax.scipy.special.hyp2f1`.
  """
  a, b, c, x = promote_args_inexact("hyp2f1", a, b, c, x)
  return _hyp2f1_call(a, b, c, x)


# ----------------------------------------------------------------------------
# Owen's T function

# Nodes t_i and weights w_i of a 13-point rule for T(h, a) with 0 <= a <= 1:
#   T(h, a) ~ a sum_i w_i exp(-h^2 (1 + a^2 t_i) / 2) / (1 + a^2 t_i),
# where 1 / (2 pi) and the Jacobian of u^2 = a^2 t sit in the weights
# (Patefield & Tandy 2000, method T5: https://www.jstatsoft.org/v05/i05/paper).
_OWENS_T_NODES = np.array([
    0.0035082039676451715, 0.031279042338030754, 0.085266826283219451, 0.16245071730812277,
    0.25851196049125435, 0.36807553840697534, 0.48501092905604697, 0.60277514152618577,
    0.71477884217753227, 0.81475510988760099, 0.89711029755948966, 0.95723808085944262,
    0.99178832974629704])
_OWENS_T_WEIGHTS = np.array([
    0.018831438115323503, 0.018567086243977649, 0.018042093461223386, 0.017263829606398753,
    0.016243219975989857, 0.014994592034116705, 0.013535474469662088, 0.011886351605820165,
    0.010070377242777432, 0.0081130545742299587, 0.0060419009528470239, 0.0038862217010742058,
    0.0016793031084546090])


def _owens_t_quadrature(h, a):
  lead = (1,) * np.ndim(a)
  r = lax.square(a)[..., None] * _OWENS_T_NODES.astype(a.dtype).reshape(lead + (-1,))
  integrand = lax.exp(-0.5 * lax.square(h)[..., None] * (1. + r)) / (1. + r)
  weights = _OWENS_T_WEIGHTS.astype(a.dtype).reshape(lead + (-1,))
  return a * jnp.sum(integrand * weights, axis=-1)


@custom_jvp
@jit
def _owens_t(h, a):
  dtype = h.dtype.type
  h_abs, a_abs = lax.abs(h), lax.abs(a)
  root_2 = dtype(np.sqrt(2))
  small_a = a_abs <= 1.
  # For |a| > 1 use T(h, a) = (Phi(h) + Phi(|a| h)) / 2 - Phi(h) Phi(|a| h) - T(|a| h, 1/|a|).
  a_mod = jnp.where(small_a, a_abs, 1. / a_abs)
  h_mod = jnp.where(small_a, h_abs, a_abs * h_abs)
  value = _owens_t_quadrature(h_mod, a_mod)
  value = jnp.where(h_mod == 0., lax_tr.atan(a_mod) / dtype(2 * np.pi), value)
  value = jnp.where(a_mod == 1.,
                    0.125 * lax_tr.erfc(-h_mod / root_2) * lax_tr.erfc(h_mod / root_2), value)
  erfc_h = lax_tr.erfc(h_abs / root_2)
  erfc_ah = lax_tr.erfc(a_abs * h_abs / root_2)
  reflected = jnp.where(
      a_abs * h_abs <= 0.67,
      0.25 - 0.25 * lax_tr.erf(h_abs / root_2) * lax_tr.erf(a_abs * h_abs / root_2) - value,
      0.25 * (erfc_h + erfc_ah - erfc_h * erfc_ah) - value)
  value = lax.sign(a) * jnp.where(small_a, value, reflected)
  # T(0, a) = atan(a) / (2 pi) also at a = +-inf (+-1/4), where h_mod = inf * 0 is NaN.
  value = jnp.where(h == 0., lax_tr.atan(a) / dtype(2 * np.pi), value)
  return jnp.where(jnp.isnan(a) | jnp.isnan(h), jnp.full_like(value, np.nan), value)


@_owens_t.defjvp
def _owens_t_jvp(primals, tangents):
  (h, a), (h_dot, a_dot) = primals, tangents
  h, a = jnp.asarray(h), jnp.asarray(a)  # a rule may receive weak-typed Python scalars
  dtype = h.dtype.type
  ans = _owens_t(h, a)
  # dT/dh = -exp(-h^2/2) erf(a h / sqrt 2) / (2 sqrt(2 pi)); dT/da = exp(-(1+a^2) h^2/2) / (2 pi (1+a^2)).
  d_h = -lax.exp(-0.5 * lax.square(h)) * lax_tr.erf(a * h / dtype(np.sqrt(2))) / dtype(
      2 * np.sqrt(2 * np.pi))
  one_a2 = 1. + lax.square(a)
  d_a = lax.exp(-0.5 * one_a2 * lax.square(h)) / (dtype(2 * np.pi) * one_a2)
  return ans, (d_h * h_dot + d_a * a_dot).astype(ans.dtype)


_owens_t_call = _broadcast_call(_owens_t)


def owens_t(h, a):
  """Owen's T function, T(h, a) = 1/(2 pi) integral_0^a exp(-h^2 (1 + t^2) / 2) / (1 + t^2) dt.

  `h` and `a` are real and broadcast together (integers promote to the default
  float); the result has their promoted dtype. Computed by a 13-point
  quadrature (Patefield & Tandy's method T5), with the exact forms at h == 0
  and |a| == 1 and the reflection for |a| > 1; NaN where either input is NaN.
  The derivatives are the closed forms (custom JVP). Mirrors
  `jax.scipy.special.owens_t`.
  """
  h, a = promote_args_inexact("owens_t", h, a)
  return _owens_t_call(h, a)


# ----------------------------------------------------------------------------
# Bessel functions of the first kind of integer order


@jit(static_argnums=(1, 2))
def _bessel_jn(z, v, n_iter):
  """J_0(z) .. J_v(z) by Miller's backward recurrence from order n_iter (Zhang & Jin, BJNDD).

  Runs f_k = 2 (k + 1) f_{k+1} / z - f_{k+2} downwards from a tiny start value and
  normalizes by the identity J_0 + 2 (J_2 + J_4 + ...) = 1.
  """
  def body(carry, k):
    f_above2, f_above1, even_sum = carry
    f = 2.0 * (k + 1.0) * f_above1 / z - f_above2
    even_sum = jnp.where(jnp.mod(k, 2) == 0, even_sum + 2.0 * f, even_sum)
    return (f_above1, f, even_sum), f

  zero = jnp.zeros_like(z)
  init = (zero, jnp.full_like(z, 1e-16), zero)
  (_, _, even_sum), f = scan(body, init, jnp.arange(n_iter + 1, dtype=z.dtype),
                                       reverse=True)
  return f[:v + 1] / (even_sum - f[0])


def bessel_jn(z, *, v: int, n_iter: int = 50):
  """Bessel functions of the first kind J_0(z), ..., J_v(z) for real `z`.

  `v` (the highest order) and `n_iter` (the order at which the backward
  recurrence starts) must be concrete Python integers; `n_iter` should grow
  with |z| (about 50 suffices for |z| up to ~25). Returns an array of shape
  `(v + 1, *z.shape)` of z's inexact dtype (integers promote to the default
  float); NaN at z == 0 and for non-finite z, as in JAX. Raises TypeError for
  a non-integer `v`, ValueError for complex `z`, ConcretizationTypeError for a
  traced `v` or `n_iter`. Mirrors `jax.scipy.special.bessel_jn`.
  """
  z = jnp.asarray(z)
  z, = promote_dtypes_inexact(z)
  if dtypes.issubdtype(z.dtype, np.complexfloating):
    raise ValueError("complex input not supported.")
  v = operator.index(concrete_or_error(v, "Argument v of bessel_jn."))
  n_iter = int(concrete_or_error(n_iter, "Argument n_iter of bessel_jn."))
  return _bessel_jn(z, v, n_iter)


# ----------------------------------------------------------------------------
# Spherical harmonics


def _normalized_legendre(l, m, x, p_prev, p_prev2):
  """The normalized associated Legendre functions of degree `l` for all orders `m`.

  P_l^m is normalized so that Y_l^m = P_l^m(cos theta) e^{i m phi} is orthonormal
  on the sphere, with the Condon-Shortley phase. `p_prev`, `p_prev2` hold
  degrees l - 1 and l - 2 (rows: orders m = 0..M, columns: points x); orders
  above the degree are zero. Uses P_l^l = -sqrt((2l+1)/(2l)) sqrt(1-x^2) P_{l-1}^{l-1}
  and P_l^m = d0 x P_{l-1}^m - d1 P_{l-2}^m for m < l.
  """
  below = m < l
  l2, m2 = l * l, m * m
  safe = jnp.where(below, l2 - m2, 1.)
  d0 = lax_tr.sqrt((4. * l2 - 1.) / safe)
  d1 = lax_tr.sqrt(jnp.maximum((2. * l + 1.) * ((l - 1.) ** 2 - m2) / ((2. * l - 3.) * safe), 0.))
  three_term = d0[:, None] * x * p_prev - d1[:, None] * p_prev2
  # The diagonal uses the previous degree's diagonal, one order lower.
  shifted = jnp.concatenate([jnp.zeros_like(p_prev[:1]), p_prev[:-1]], axis=0)
  diag = -lax_tr.sqrt((2. * l + 1.) / (2. * l)) * lax_tr.sqrt(1. - x * x) * shifted
  zero = jnp.zeros_like(p_prev)
  return jnp.where(below[:, None], three_term, jnp.where((m == l)[:, None], diag, zero))


@jit(static_argnums=(4,))
def _sph_harm(n, m, theta, phi, n_max):
  x = lax_tr.cos(theta)
  orders = jnp.arange(n_max + 1, dtype=x.dtype)
  # Indices clipped into the table of degrees and orders 0..n_max, as JAX's gather does.
  m_abs = lax.abs(m)
  m_idx = jnp.clip(m_abs, 0, n_max)
  n_idx = jnp.clip(jnp.where(n < 0, n + n_max + 1, n), 0, n_max)  # negative: from the end
  point_idx = jnp.clip(jnp.arange(len(n)), 0, x.shape[0] - 1)
  m_idx, n_idx, point_idx = jnp.broadcast_arrays(m_idx, n_idx, point_idx)

  p0 = jnp.zeros((n_max + 1, x.shape[0]), x.dtype).at[0].set(0.5 / np.sqrt(np.pi))
  value = jnp.where(n_idx == 0, p0[m_idx, point_idx], jnp.zeros(m_idx.shape, x.dtype))

  def body(l, carry):
    p_prev, p_prev2, value = carry
    p = _normalized_legendre(l.astype(x.dtype), orders, x, p_prev, p_prev2)
    return p, p_prev, jnp.where(n_idx == l, p[m_idx, point_idx], value)

  if n_max > 0:
    _, _, value = fori_loop(1, n_max + 1, body, (p0, jnp.zeros_like(p0), value))

  angle = m_abs * phi
  harmonics = lax.complex(*promote_dtypes_inexact(value * lax_tr.cos(angle),
                                                  value * lax_tr.sin(angle)))
  return jnp.where(m < 0, (-1.0) ** m_abs * lax.conj(harmonics), harmonics)


def sph_harm_y(n, m, theta, phi, diff_n: int | None = None, n_max: int | None = None):
  """The spherical harmonics Y_n^m(theta, phi) = N_n^m P_n^|m|(cos theta) e^{i m phi}.

  `n` (degree, 0 <= n) and `m` (order, |m| <= n) are 1-D integer arrays of equal
  length; `theta` (colatitude, in [0, pi]) is a scalar or an array of the same
  length, and `phi` (longitude) broadcasts with them. N_n^m makes the harmonics
  orthonormal on the sphere (with the Condon-Shortley phase), as in SciPy.
  `n_max` is max(n); it must be concrete, so pass it under `jit`. Degrees
  above `n_max` are clipped to it; values for n < 0 or |m| > n are undefined.
  Returns a complex array (complex64, or complex128 with x64). Raises
  NotImplementedError when `diff_n` is given, ConcretizationTypeError for a
  traced `n_max`, TypeError for a scalar `n`. Mirrors
  `jax.scipy.special.sph_harm_y`.
  """
  if diff_n is not None:
    raise NotImplementedError(
        "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
  n, m, theta, phi = jnp.asarray(n), jnp.asarray(m), jnp.asarray(theta), jnp.asarray(phi)
  if theta.ndim == 0:
    theta = theta[None]
  if n_max is None:
    n_max = jnp.max(n)
  n_max = int(concrete_or_error(
      n_max, "The `n_max` argument of `jnp.scipy.special.sph_harm` must be statically "
      "specified to use `sph_harm` within JAX transformations."))
  theta, = promote_dtypes_inexact(theta)
  return _sph_harm(n, m, theta, phi, n_max)


# ----------------------------------------------------------------------------
# gamma and loggamma of complex input (to be dispatched to from special.py)

# Lanczos approximation with g = 7 and 9 coefficients (GSL's lanczos_7_c):
#   Gamma(z + 1) = sqrt(2 pi) (z + g + 1/2)^(z + 1/2) e^-(z + g + 1/2) A_g(z),
#   A_g(z) = c_0 + sum_{k=1}^{8} c_k / (z + k).
_LANCZOS_G = 7.0
_LANCZOS_COEFFS = np.array([
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
    -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
    1.5056327351493116e-7])


def _lanczos_loggamma(z):
  """log Gamma(z) by the Lanczos approximation, for Re(z) >= 1/2 (one branch of the log)."""
  w = z - 1.0
  k = jnp.arange(1, 9, dtype=z.dtype).reshape((1,) * w.ndim + (8,))
  coeffs = _LANCZOS_COEFFS[1:].astype(z.dtype).reshape(k.shape)
  series = float(_LANCZOS_COEFFS[0]) + jnp.sum(coeffs / (w[..., None] + k), axis=-1)
  t = w + (_LANCZOS_G + 0.5)
  return float(0.5 * np.log(2 * np.pi)) + (w + 0.5) * jnp.log(t) - t + jnp.log(series)


def _complex_poles_or_nan(z):
  real = lax.real(z)
  pole = (lax.imag(z) == 0) & (real == lax.floor(real)) & (real <= 0)
  return pole | jnp.isnan(z)


def _complex_loggamma_reflected(z):
  """log Gamma(z) for complex z by Lanczos, with reflection for Re(z) < 1/2 (JAX's gamma path)."""
  reflect = lax.real(z) < 0.5
  lanczos = _lanczos_loggamma(jnp.where(reflect, 1.0 - z, z))
  z_safe = jnp.where(reflect, z, jnp.full_like(z, 0.5))
  reflected = float(np.log(np.pi)) - jnp.log(jnp.sin(np.pi * z_safe)) - lanczos
  return jnp.where(reflect, reflected, lanczos)


@jit
def complex_gamma(z):
  """Gamma(z) for complex `z`: exp of the Lanczos log-gamma; nan+nanj at poles and NaN.

  The dispatch target of `gamma` for complex input (JAX 0.10.2's method).
  """
  bad = _complex_poles_or_nan(z)
  value = jnp.exp(_complex_loggamma_reflected(jnp.where(bad, jnp.ones_like(z), z)))
  return jnp.where(bad, jnp.full_like(z, complex(np.nan, np.nan)), value)


@jit
def complex_loggamma(z):
  """The principal branch of log Gamma(z) for complex `z`, with SciPy's single branch cut.

  Shifts z right by n = max(0, ceil(1/2 - Re z)) with
  loggamma(z) = loggamma(z + n) - sum_{k<n} log(z + k); nan+nanj at poles and
  NaN. The dispatch target of `loggamma` for complex input.
  """
  bad = _complex_poles_or_nan(z)
  z = jnp.where(bad, jnp.ones_like(z), z)
  n = jnp.maximum(0, jnp.ceil(0.5 - lax.real(z))).astype(np.int32)

  def body(k, log_sum):
    shifted = jnp.where(k < n, z + k.astype(z.dtype), jnp.ones_like(z))
    return log_sum + jnp.log(shifted)

  log_sum = fori_loop(0, jnp.max(n), body, jnp.zeros_like(z))
  value = _lanczos_loggamma(z + n.astype(z.dtype)) - log_sum
  return jnp.where(bad, jnp.full_like(z, complex(np.nan, np.nan)), value)
