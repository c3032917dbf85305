"""Special-function primitives: incomplete gamma and beta, Bessel i0e and i1e, Hurwitz zeta.

As in JAX, `bessel_i1e` and `zeta` lower to one CHLO op each, while the others
lower to a lax-level algorithm traced by `lowering.lower_fun`: the
regularized incomplete gamma functions and the derivative in `a` by a power
series (small x) or a continued fraction (large x), both capped at 2000 terms,
with Temme's uniform expansion for large a near x and a separate series for
Q at small a (where 1 - P cancels), as Cephes does; the incomplete beta
function by a Lentz continued fraction, `bessel_i0e` by Cephes' Chebyshev
expansion. Those algorithms are ported from XLA's `math.cc` by way of JAX,
so values agree with JAX's closely. float16 and bfloat16 operands are
computed in float32 and rounded back, as JAX does.

`random_gamma_grad` is not a primitive in JAX: it is the same algorithm
traced where it is called, and it is so here.

Derivatives are JAX's: igamma and igammac in both arguments (in `a` through
`igamma_grad_a`, which has no derivative itself), betainc in `x` only,
bessel_i0e and bessel_i1e through each other; zeta has none.
"""
from __future__ import annotations

import enum
from fractions import Fraction
import functools
import math

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import lowering
from xjax._src.lax import elementwise as ew
from xjax._src.lax import structural
from xjax._src.lax import transcendental as tr
from xjax._src.lax.control_flow.loops import while_loop
from xjax._src.lax.reductions import reduce_or
from xjax._src.lax.utils import emit_elementwise, naryop_abstract_eval, standard_primitive

# ----------------------------------------------------------------------------
# Small helpers for the algorithms below (JAX's names where it has them)


def _c(x, value):
  """`value` as a rank-0 constant of x's dtype."""
  return np.array(value, core.get_aval(x).dtype)


def _full_like(x, value):
  return structural.full_like(x, value)


def _select(pred, on_true, on_false):
  return ew.select_n(pred, on_false, on_true)


def _isnan(x):
  return ew.ne(x, x)


def _any(pred):
  """Whether any element of the boolean array `pred` is true (a rank-0 bool)."""
  return reduce_or(pred, tuple(range(len(core.get_aval(pred).shape))))


def _or_all(*preds):
  return functools.reduce(ew.bitwise_or, preds)


def _neg_log_max(dtype):
  """-log(largest finite value): below it, exp underflows in `dtype`."""
  return ew.neg(tr.log(np.array(dtypes.finfo(dtype).max, dtype)))


def _broadcast_shapes(*shapes):
  try:
    return np.broadcast_shapes(*shapes)
  except ValueError:
    raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}") from None


def _upcast_and_broadcast(impl):
  """Runs ``impl(*args, dtype=...)`` on the operands broadcast to one shape, computing
  float16 and bfloat16 in float32 (the algorithms' constants need its precision)."""
  def wrapped(*args):
    shapes = [core.get_aval(a).shape for a in args]
    shape = _broadcast_shapes(*shapes)
    args = [structural.broadcast_in_dim(a, shape, tuple(range(len(s))))
            for a, s in zip(args, shapes)]
    dtype = core.get_aval(args[0]).dtype
    upcast = dtype in (np.dtype(np.float16), np.dtype(dtypes.bfloat16))
    compute_dtype = np.dtype(np.float32) if upcast else dtype
    # Strongly typed, so that the loop carries keep their types.
    args = [ew.convert_element_type(a, compute_dtype) for a in args]
    out = impl(*args, dtype=compute_dtype)
    return ew.convert_element_type(out, dtype) if upcast else out
  return wrapped


def _float_nary(name, arity, lowering_rule):
  """An elementwise primitive on `arity` float operands of one dtype (rank-0 and
  size-1 operands broadcast), batched by broadcasting."""
  prim = standard_primitive(name, naryop_abstract_eval(name, ("float",) * arity), lowering_rule)
  if arity == 1:
    batching.defvectorized(prim)
  else:
    batching.defbroadcasting(prim)
  return prim


# ----------------------------------------------------------------------------
# The incomplete gamma family: series and continued fraction


class IgammaMode(enum.Enum):
  VALUE = 1              # P(a, x) or Q(a, x)
  DERIVATIVE = 2         # dP/da
  SAMPLE_DERIVATIVE = 3  # dx/da along P(a, x) = const (reparameterised gamma samples)


# Both loops stop after this many terms. Outside the region of Temme's expansion
# (a > 20 and |x - a| < 0.3 a) they converge in a few hundred.
_MAX_ITERATIONS = 2000


def _igamma_series(ax, x, a, enabled, dtype, mode):
  """P(a, x) (or its derivatives, by `mode`) from the series sum x^n / (a+1)...(a+n),
  run while any `enabled` element has not converged; `ax` is x^a e^-x / Gamma(a)."""
  eps = _c(x, dtypes.finfo(dtype).eps)

  # random_gamma_grad traces this loop into the user's jaxpr, which stays JAX's (uncapped).
  capped = mode != IgammaMode.SAMPLE_DERIVATIVE

  def cond(vals):
    if not capped:
      return _any(vals[0])
    return ew.bitwise_and(ew.lt(vals[-1], np.int32(_MAX_ITERATIONS)), _any(vals[0]))

  def body(vals):
    enabled, r, c, ans, x, dc_da, dans_da = vals[:7]
    iteration = vals[7] if capped else None
    r = ew.add(r, _c(r, 1))
    dc_da = ew.sub(ew.mul(dc_da, ew.div(x, r)), ew.div(ew.mul(c, x), ew.mul(r, r)))
    dans_da = ew.add(dans_da, dc_da)
    c = ew.mul(c, ew.div(x, r))
    ans = ew.add(ans, c)
    if mode == IgammaMode.VALUE:
      unconverged = ew.gt(ew.div(c, ans), eps)
    else:
      unconverged = ew.gt(ew.abs(ew.div(dc_da, dans_da)), eps)
    new = (r, c, ans, x, dc_da, dans_da)
    return (ew.bitwise_and(enabled, unconverged),
            *(_select(enabled, n, old) for n, old in zip(new, vals[1:7])),
            *((ew.add(iteration, np.int32(1)),) if capped else ()))

  init = (enabled, a, _full_like(a, 1), _full_like(a, 1), x, _full_like(a, 0), _full_like(a, 0),
          *((np.int32(0),) if capped else ()))
  _, _, _, ans, _, _, dans_da = while_loop(cond, body, init)[:7]
  if mode == IgammaMode.VALUE:
    return ew.div(ew.mul(ans, ax), a)
  dlogax_da = ew.sub(tr.log(x), tr.digamma(ew.add(a, _c(a, 1))))
  if mode == IgammaMode.DERIVATIVE:
    return ew.div(ew.mul(ax, ew.add(ew.mul(ans, dlogax_da), dans_da)), a)
  return ew.div(ew.mul(ew.neg(ew.add(dans_da, ew.mul(ans, dlogax_da))), x), a)


def _igammac_continued_fraction(ax, x, a, enabled, dtype, mode):
  """Q(a, x) (or minus the derivatives, by `mode`) from Legendre's continued fraction,
  evaluated by its convergents p_k / q_k with rescaling against overflow."""
  eps = dtypes.finfo(dtype).eps

  def cond(vals):
    enabled, c = vals[0], vals[5]
    return ew.bitwise_and(ew.lt(c, _c(c, _MAX_ITERATIONS)), _any(enabled))

  def body(vals):
    (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2,
     dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da) = vals
    c = ew.add(c, _c(c, 1))
    y = ew.add(y, _c(y, 1))
    z = ew.add(z, _c(z, 2))
    yc = ew.mul(y, c)
    pk = ew.sub(ew.mul(pkm1, z), ew.mul(pkm2, yc))
    qk = ew.sub(ew.mul(qkm1, z), ew.mul(qkm2, yc))
    qk_is_nonzero = ew.ne(qk, _c(qk, 0))
    r = ew.div(pk, qk)
    t = _select(qk_is_nonzero, ew.abs(ew.div(ew.sub(ans, r), r)), _full_like(r, 1))
    ans = _select(qk_is_nonzero, r, ans)

    dpk_da = ew.add(ew.sub(ew.sub(ew.mul(dpkm1_da, z), pkm1), ew.mul(dpkm2_da, yc)),
                    ew.mul(pkm2, c))
    dqk_da = ew.add(ew.sub(ew.sub(ew.mul(dqkm1_da, z), qkm1), ew.mul(dqkm2_da, yc)),
                    ew.mul(qkm2, c))
    dans_da_new = _select(qk_is_nonzero, ew.div(ew.sub(dpk_da, ew.mul(ans, dqk_da)), qk),
                          dans_da)
    grad_change = _select(qk_is_nonzero, ew.abs(ew.sub(dans_da_new, dans_da)),
                          _full_like(dans_da, 1))

    pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
    dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = dpkm1_da, dqkm1_da, dpk_da, dqk_da
    # Scale the recurrences down by eps once they grow past 1 / eps.
    rescale = ew.gt(ew.abs(pk), ew.reciprocal(_c(pk, eps)))
    pkm2, pkm1, qkm2, qkm1, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = (
        _select(rescale, ew.mul(v, _c(v, eps)), v)
        for v in (pkm2, pkm1, qkm2, qkm1, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da))

    if mode == IgammaMode.VALUE:
      unconverged = ew.gt(t, _c(t, eps))
    else:
      unconverged = ew.gt(grad_change, _c(grad_change, eps))
    new = (ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2,
           dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da_new)
    # The iteration count `c` is shared by all elements; the others freeze when done.
    return (ew.bitwise_and(enabled, unconverged),
            *(n if i == 4 else _select(enabled, n, old)
              for i, (n, old) in enumerate(zip(new, vals[1:]))))

  y = ew.sub(_c(a, 1), a)
  z = ew.add(ew.add(x, y), _c(x, 1))
  pkm2, qkm2 = _full_like(x, 1), x
  pkm1 = ew.add(x, _c(x, 1))
  qkm1 = ew.mul(z, x)
  ans = ew.div(pkm1, qkm1)
  t = _full_like(x, 1)
  dpkm2_da, dqkm2_da, dpkm1_da = _full_like(x, 0), _full_like(x, 0), _full_like(x, 0)
  dqkm1_da = ew.neg(x)
  dans_da = ew.div(ew.sub(dpkm1_da, ew.mul(ans, dqkm1_da)), qkm1)
  init = (enabled, ans, t, y, z, _c(x, 0), pkm1, qkm1, pkm2, qkm2,
          dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da)
  vals = while_loop(cond, body, init)
  ans, dans_da = vals[1], vals[14]
  if mode == IgammaMode.VALUE:
    return ew.mul(ans, ax)
  dlogax_da = ew.sub(tr.log(x), tr.digamma(a))
  if mode == IgammaMode.DERIVATIVE:
    return ew.mul(ax, ew.add(ew.mul(ans, dlogax_da), dans_da))
  return ew.neg(ew.mul(ew.add(dans_da, ew.mul(ans, dlogax_da)), x))


# Temme's uniform asymptotic expansion (DLMF 8.12) for large a with x near a, where the
# series and the continued fraction need ~sqrt(a) terms:
#   Q(a, x) = erfc(eta sqrt(a/2)) / 2 + R,  P(a, x) = erfc(-eta sqrt(a/2)) / 2 - R,
#   R = exp(-a eta^2 / 2) / sqrt(2 pi a) * sum_k c_k(eta) a^-k,
# with lambda = x / a and eta^2 / 2 = lambda - 1 - log(lambda), eta of the sign of lambda - 1.
_TEMME_MIN_A = 20
_TEMME_MAX_DISTANCE = 0.3  # |x - a| / a
_TEMME_TERMS = 8           # k = 0 .. 7: error below 1e-13 relative at a = 20
_TEMME_DEGREE = 22         # c_k(eta) as polynomials of this degree - 1 (|eta| < 0.33)


@functools.cache
def _temme_coefficients():
  """The Taylor coefficients in eta of c_0 .. c_{K-1}, a (K, N) float64 array.

  Exact rational arithmetic: mu = lambda - 1 as a series in eta (by Lagrange inversion of
  eta = mu sqrt(2 (mu - log(1 + mu)) / mu^2)), c_0 = 1/mu - 1/eta and
  c_k = c_{k-1}'(eta) / eta + (-1)^k g_k / mu (DLMF 8.12.9-10), g_k the Stirling-series
  coefficients of Gamma*(a) (DLMF 5.11.3). The poles at eta = 0 cancel exactly.
  """
  K, N = _TEMME_TERMS, _TEMME_DEGREE
  M = N + 2 * K + 2

  def mul(p, q):
    return [sum(p[j] * q[i - j] for j in range(i + 1)) for i in range(M)]

  def reciprocal(p):
    out = [1 / p[0]]
    for i in range(1, M):
      out.append(-sum(p[j] * out[i - j] for j in range(1, i + 1)) / p[0])
    return out

  # s(mu)^2 = 2 (mu - log(1 + mu)) / mu^2 = sum_j 2 (-mu)^j / (j + 2), s(0) = 1.
  f = [Fraction(2 * (-1) ** j, j + 2) for j in range(M)]
  s = [Fraction(1)]
  for i in range(1, M):
    s.append((f[i] - sum(s[j] * s[i - j] for j in range(1, i))) / 2)
  # Lagrange: mu = sum_k eta^k [mu^(k-1)] s^-k / k.
  s_inv, power, mu = reciprocal(s), [Fraction(1)] + [Fraction(0)] * (M - 1), []
  for k in range(1, M + 1):
    power = mul(power, s_inv)
    mu.append(power[k - 1] / k)
  eta_over_mu = reciprocal(mu)  # 1/mu = sum_j eta_over_mu[j] eta^(j-1)
  # Stirling: log Gamma*(a) = sum_j B_2j / (2j (2j - 1) a^(2j-1)); g = exp of it.
  bernoulli = [Fraction(1)]
  for n in range(1, 2 * K + 2):
    bernoulli.append(-sum(math.comb(n + 1, j) * bernoulli[j] for j in range(n)) / (n + 1))
  log_g = [Fraction(0)] * (K + 1)
  for j in range(1, K // 2 + 2):
    if 2 * j - 1 <= K:
      log_g[2 * j - 1] = bernoulli[2 * j] / (2 * j * (2 * j - 1))
  g = [Fraction(1)]
  for k in range(1, K + 1):
    g.append(sum(j * log_g[j] * g[k - j] for j in range(1, k + 1)) / k)
  c = eta_over_mu[1:]
  rows = [c]
  for k in range(1, K):
    derivative = [(n + 1) * c[n + 1] for n in range(len(c) - 1)]
    pole = (-1) ** k * g[k]
    assert derivative[0] + pole * eta_over_mu[0] == 0
    c = [derivative[n + 1] + pole * eta_over_mu[n + 1] for n in range(len(derivative) - 1)]
    rows.append(c)
  return np.array([[float(v) for v in row[:N]] for row in rows])


def _log1pmx(s):
  """log(1 + s) - s for |s| <= 1/2, without cancellation: with u = s / (2 + s),
  log(1 + s) = 2 atanh(u), so it is -2u^2 / (1 - u) + 2 sum_j u^(2j+3) / (2j + 3)."""
  u = ew.div(s, ew.add(s, _c(s, 2)))
  u2 = ew.mul(u, u)
  tail = _full_like(s, 0)
  for j in reversed(range(18)):  # u^2 <= 1/9
    tail = ew.add(ew.mul(tail, u2), _c(s, 1 / (2 * j + 3)))
  return ew.add(ew.div(ew.mul(_c(s, -2), u2), ew.sub(_c(u, 1), u)),
                ew.mul(ew.mul(_c(s, 2), ew.mul(u, u2)), tail))


def _in_temme_region(a, x):
  return ew.bitwise_and(ew.gt(a, _c(a, _TEMME_MIN_A)),
                        ew.lt(ew.abs(ew.sub(x, a)), ew.mul(_c(a, _TEMME_MAX_DISTANCE), a)))


def _igamma_temme(a, x, upper):
  """Q(a, x) if `upper` else P(a, x), by Temme's expansion; meant for `_in_temme_region`
  (other elements are computed at a = x = 100 and should be discarded)."""
  inside = _in_temme_region(a, x)
  a = _select(inside, a, _full_like(a, 100))
  x = _select(inside, x, _full_like(x, 100))
  s = ew.div(ew.sub(x, a), a)
  half_eta_squared = ew.max(ew.neg(_log1pmx(s)), _full_like(s, 0))
  eta = ew.mul(ew.sign(s), tr.sqrt(ew.mul(_c(s, 2), half_eta_squared)))
  total = _full_like(a, 0)
  for row in _temme_coefficients()[::-1]:
    c_k = _full_like(eta, 0)
    for d in row[::-1]:
      c_k = ew.add(ew.mul(c_k, eta), _c(eta, d))
    total = ew.add(ew.div(total, a), c_k)
  z = ew.mul(eta, tr.sqrt(ew.mul(_c(a, 0.5), a)))
  head = ew.mul(_c(a, 0.5), tr.erfc(z if upper else ew.neg(z)))
  r = ew.mul(ew.div(ew.exp(ew.neg(ew.mul(a, half_eta_squared))),
                    tr.sqrt(ew.mul(_c(a, 2 * np.pi), a))), total)
  return ew.add(head, r) if upper else ew.sub(head, r)


def zeta_minus_one(k):
  """zeta(k) - 1 for an integer k >= 2, in float64 (Euler-Maclaurin after 100 terms)."""
  n = 100
  head = sum(float(j) ** -k for j in range(2, n))
  tail = (n ** (1 - k) / (k - 1) + n ** -k / 2 + k * n ** (-k - 1) / 12
          - k * (k + 1) * (k + 2) * n ** (-k - 3) / 720)
  return head + tail


def _lgamma1p_over_a(a):
  """log Gamma(1 + a) / a, accurate near a = 0 (where lgamma(1 + a) loses a to rounding):
  -gamma + sum_k (-1)^k zeta(k) a^(k-1) / k for |a| < 0.2 (DLMF 5.7.3)."""
  small = ew.lt(ew.abs(a), _c(a, 0.2))
  t = _select(small, a, _full_like(a, 0))
  series = _full_like(a, 0)
  for k in reversed(range(2, 26)):
    series = ew.mul(ew.add(series, _c(a, (-1) ** k * (1 + zeta_minus_one(k)) / k)), t)
  series = ew.add(series, _c(a, -np.euler_gamma))
  return _select(small, series, ew.div(tr.lgamma(ew.add(a, _c(a, 1))), a))


def _igammac_small_a(a, x):
  """Q(a, x) for a <= 1 and x <= 1.5, without the cancellation of 1 - P when a is small.

  P(a, x) = x^a / Gamma(a) sum_n (-x)^n / (n! (a + n)) (DLMF 8.7.1), whose n = 0 term is
  x^a / Gamma(a + 1) = exp(a u) with u = log x - log Gamma(1 + a) / a. So
  Q = a (-expm1(a u) / a - exp(a u) S), S = sum_{n>=1} (-x)^n / (n! n (a + n)) (30 terms:
  x^30 / 30! is below float64's eps); a is factored out so that tiny a does not make
  the two terms subnormal.
  """
  term, total = _full_like(x, 1), _full_like(x, 0)
  for n in range(1, 31):
    term = ew.mul(term, ew.div(ew.neg(x), _c(x, n)))
    total = ew.add(total, ew.div(term, ew.add(a, _c(a, n))))
  u = ew.sub(tr.log(x), _lgamma1p_over_a(a))
  au = ew.mul(a, u)
  expm1_over_a = _select(ew.lt(ew.abs(au), _c(a, dtypes.finfo(core.get_aval(a).dtype).eps)),
                         u, ew.div(tr.expm1(au), a))
  return ew.mul(a, ew.neg(ew.add(expm1_over_a, ew.mul(ew.exp(au), total))))

def _lgamma_exact_at_1_and_2(a):
  """lgamma(a), exactly 0 at a = 1 and 2 (XLA's float32 lgamma(1) is 4.8e-7: enough to push
  x^a e^-x / Gamma(a) below the smallest normal number at x = 1.18e-38, making P(1, x) 0)."""
  zero = ew.bitwise_or(ew.eq(a, _c(a, 1)), ew.eq(a, _c(a, 2)))
  return _select(zero, _full_like(a, 0), tr.lgamma(a))


def _ax(a, x, dtype):
  """Whether x^a e^-x / Gamma(a) underflows, and its value (0 where it does). Computed
  in logs; a NaN logarithm (inf - inf, for huge a) counts as underflow: out of Temme's
  region, a huge a makes the logarithm hugely negative.

  Next to the smallest normal number, with x < 1, it is x exp(log_ax - log x): a rounding
  error of exp(log_ax) there makes it subnormal, hence 0 (P(1, 1.18e-38) was 0 in float32);
  exp(log_ax - log x) is then below e^8 and above exp(log_ax)."""
  log_x = tr.log(x)
  log_ax = ew.sub(ew.sub(ew.mul(a, log_x), x), _lgamma_exact_at_1_and_2(a))
  underflow = ew.bitwise_not(ew.ge(log_ax, _neg_log_max(dtype)))
  near_tiny = ew.bitwise_and(ew.lt(x, _c(x, 1)),
                             ew.lt(log_ax, _c(x, np.log(dtypes.finfo(dtype).smallest_normal) + 8)))
  ax = _select(near_tiny, ew.mul(x, ew.exp(ew.sub(log_ax, log_x))), ew.exp(log_ax))
  return underflow, _select(underflow, _full_like(x, 0), ax)


def _igamma_impl(a, x, *, dtype):
  is_nan = ew.bitwise_or(_isnan(a), _isnan(x))
  x_is_infinity = ew.eq(x, _c(x, np.inf))
  a_is_zero = ew.eq(a, _c(a, 0))
  x_is_zero = ew.eq(x, _c(x, 0))
  domain_error = _or_all(ew.lt(x, _c(x, 0)), ew.lt(a, _c(a, 0)),
                         ew.bitwise_and(a_is_zero, x_is_zero), is_nan,
                         ew.bitwise_and(x_is_infinity, ew.eq(a, _c(a, np.inf))))
  use_igammac = ew.bitwise_and(ew.ge(x, _c(x, 1)), ew.gt(x, a))
  underflow, ax = _ax(a, x, dtype)
  temme = _in_temme_region(a, x)
  enabled = ew.bitwise_not(_or_all(x_is_zero, domain_error, underflow, x_is_infinity, temme))
  output = _select(
      use_igammac,
      ew.sub(_c(a, 1), _igammac_continued_fraction(
          ax, x, a, ew.bitwise_and(enabled, use_igammac), dtype, IgammaMode.VALUE)),
      _igamma_series(ax, x, a, ew.bitwise_and(enabled, ew.bitwise_not(use_igammac)),
                     dtype, IgammaMode.VALUE))
  output = _select(temme, _igamma_temme(a, x, upper=False), output)
  output = _select(x_is_zero, _full_like(a, 0), output)
  output = _select(x_is_infinity, _full_like(a, 1), output)
  return _select(domain_error, _full_like(a, np.nan), output)


def _igammac_impl(a, x, *, dtype):
  is_nan = ew.bitwise_or(_isnan(a), _isnan(x))
  a_is_zero = ew.eq(a, _c(a, 0))
  x_is_zero = ew.eq(x, _c(x, 0))
  x_is_infinity = ew.eq(x, _c(x, np.inf))
  domain_error = _or_all(ew.lt(x, _c(x, 0)), ew.lt(a, _c(a, 0)),
                         ew.bitwise_and(a_is_zero, x_is_zero), is_nan,
                         ew.bitwise_and(x_is_infinity, ew.eq(a, _c(a, np.inf))))
  use_igamma = ew.bitwise_or(ew.lt(x, _c(x, 1)), ew.lt(x, a))
  underflow, ax = _ax(a, x, dtype)
  temme = _in_temme_region(a, x)
  enabled = ew.bitwise_not(_or_all(domain_error, underflow, x_is_infinity, a_is_zero, temme))
  series = _igamma_series(ax, x, a, ew.bitwise_and(enabled, use_igamma), dtype,
                          IgammaMode.VALUE)
  fraction = _igammac_continued_fraction(
      ax, x, a, ew.bitwise_and(enabled, ew.bitwise_not(use_igamma)), dtype, IgammaMode.VALUE)
  output = _select(use_igamma, ew.sub(_c(a, 1), series), fraction)
  output = _select(temme, _igamma_temme(a, x, upper=True), output)
  small_a = ew.bitwise_and(ew.le(a, _c(a, 1)), ew.le(x, _c(x, 1.5)))
  output = _select(small_a, _igammac_small_a(a, x), output)
  output = _select(ew.bitwise_or(x_is_infinity, a_is_zero), _full_like(output, 0), output)
  return _select(domain_error, _full_like(a, np.nan), output)


def _igamma_derivative_impl(a, x, *, dtype, mode):
  """dP(a, x)/da (DERIVATIVE) or the gamma-sample derivative (SAMPLE_DERIVATIVE)."""
  is_nan = ew.bitwise_or(_isnan(a), _isnan(x))
  x_is_zero = ew.eq(x, _full_like(x, 0))
  domain_error = ew.bitwise_or(ew.lt(x, _full_like(x, 0)), ew.le(a, _full_like(a, 0)))
  use_igammac = ew.bitwise_and(ew.gt(x, _full_like(x, 1)), ew.gt(x, a))
  # JAX's form (random_gamma_grad's jaxpr shows it).
  log_ax = ew.sub(ew.sub(ew.mul(a, tr.log(x)), x), tr.lgamma(a))
  underflow = ew.lt(log_ax, _neg_log_max(dtype))
  ax = ew.exp(log_ax)
  enabled = ew.bitwise_not(_or_all(x_is_zero, domain_error, underflow, is_nan))
  output = _select(
      use_igammac,
      ew.neg(_igammac_continued_fraction(ax, x, a, ew.bitwise_and(enabled, use_igammac),
                                         dtype, mode)),
      _igamma_series(ax, x, a, ew.bitwise_and(enabled, ew.bitwise_not(use_igammac)),
                     dtype, mode))
  output = _select(x_is_zero, _full_like(output, 0), output)
  return _select(ew.bitwise_or(domain_error, is_nan), _full_like(a, np.nan), output)


# ----------------------------------------------------------------------------
# igamma, igammac, igamma_grad_a, random_gamma_grad


def igamma(a, x):
  """Elementwise regularized lower incomplete gamma function P(a, x).

  ``P(a, x) = (1 / Gamma(a)) * integral_0^x t^(a-1) e^-t dt``. NaN outside
  the domain (a < 0, x < 0, a = x = 0, or a NaN operand); 0 at x = 0 and 1
  at x = inf.

  Args:
    a: the shape parameter, a float array (or Python scalar).
    x: the upper limit, an array of a's dtype; rank-0 and size-1 operands broadcast.

  Returns:
    An array of the common shape and the operands' dtype.

  Raises:
    TypeError: non-float or mismatched dtypes, or shapes that do not broadcast.

  Differentiable in both arguments (in `a` once). Mirrors `jax.lax.igamma`.
  """
  return igamma_p.bind(*ew._coerce_scalars(a, x))


def igammac(a, x):
  """Elementwise regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).

  NaN outside the domain (a < 0, x < 0, a = x = 0, or a NaN operand); 0 at
  x = inf and at a = 0.

  Args:
    a: the shape parameter, a float array (or Python scalar).
    x: the lower limit, an array of a's dtype; rank-0 and size-1 operands broadcast.

  Returns:
    An array of the common shape and the operands' dtype.

  Raises:
    TypeError: non-float or mismatched dtypes, or shapes that do not broadcast.

  Differentiable in both arguments (in `a` once). Mirrors `jax.lax.igammac`.
  """
  return igammac_p.bind(*ew._coerce_scalars(a, x))


def igamma_grad_a(a, x):
  """Elementwise derivative dP(a, x)/da of the regularized incomplete gamma function.

  NaN where a <= 0, x < 0 or an operand is NaN; 0 at x = 0.

  Args:
    a: a float array (or Python scalar).
    x: an array of a's dtype; rank-0 and size-1 operands broadcast.

  Returns:
    An array of the common shape and the operands' dtype.

  Raises:
    TypeError: non-float or mismatched dtypes, or shapes that do not broadcast.

  Not differentiable (as in JAX). Mirrors `jax.lax.igamma_grad_a`.
  """
  return igamma_grad_a_p.bind(*ew._coerce_scalars(a, x))


def random_gamma_grad(a, x):
  """Elementwise derivative dx/da of a Gamma(a, 1) sample x, holding P(a, x) fixed.

  That is ``-(dP/da) / (dP/dx)`` (the implicit reparameterisation gradient of
  gamma samples). NaN where a <= 0, x < 0 or an operand is NaN; 0 at x = 0.
  Not a primitive: it traces the series / continued-fraction loops inline.

  Args:
    a: a float array.
    x: an array of a's dtype; the shapes broadcast as NumPy's do.

  Returns:
    An array of the broadcast shape and the operands' dtype.

  Raises:
    ValueError: the shapes do not broadcast.
    TypeError: non-float operands, or shapes that broadcast only by adding
      leading dimensions (as in JAX).

  Mirrors `jax.lax.random_gamma_grad`.
  """
  a, x = ew._coerce_scalars(a, x)
  impl = functools.partial(_igamma_derivative_impl, mode=IgammaMode.SAMPLE_DERIVATIVE)
  return _upcast_and_broadcast(impl)(a, x)


def _lower(impl, **kwargs):
  return lowering.lower_fun(_upcast_and_broadcast(functools.partial(impl, **kwargs)),
                            multiple_results=False)


igamma_p = _float_nary("igamma", 2, _lower(_igamma_impl))
igammac_p = _float_nary("igammac", 2, _lower(_igammac_impl))
igamma_grad_a_p = _float_nary(
    "igamma_grad_a", 2, _lower(_igamma_derivative_impl, mode=IgammaMode.DERIVATIVE))


# d/dx P(a, x) = x^(a-1) e^-x / Gamma(a); d/da P through igamma_grad_a; Q = 1 - P.
def _igamma_gradx(g, a, x):
  log_density = ew.sub(ew.add(ew.neg(x), ew.mul(ew.sub(a, _full_like(a, 1)), tr.log(x))),
                       tr.lgamma(a))
  return ew.mul(g, ew.exp(log_density))


def _igamma_grada(g, a, x):
  return ew.mul(g, igamma_grad_a(a, x))


ad.defjvp(igamma_p, _igamma_grada, _igamma_gradx)
ad.defjvp(igammac_p, lambda g, a, x: ew.neg(_igamma_grada(g, a, x)),
          lambda g, a, x: ew.neg(_igamma_gradx(g, a, x)))


# ----------------------------------------------------------------------------
# betainc: the regularized incomplete beta function


def betainc(a, b, x):
  """Elementwise regularized incomplete beta function I_x(a, b).

  ``I_x(a, b) = B(x; a, b) / B(a, b)``. NaN for a < 0, b < 0, x outside
  [0, 1], a and b both degenerate, or a NaN operand.

  Args:
    a, b: positive float arrays (or Python scalars).
    x: an array in [0, 1]; all of one dtype, rank-0 and size-1 operands broadcast.

  Returns:
    An array of the common shape and the operands' dtype.

  Raises:
    TypeError: non-float or mismatched dtypes, or shapes that do not broadcast.

  Differentiable in `x` only; a derivative in `a` or `b` raises ValueError
  (as in JAX). Mirrors `jax.lax.betainc`.
  """
  return regularized_incomplete_beta_p.bind(*ew._coerce_scalars(a, b, x))


def _lentz_continued_fraction(*, num_iterations, small, threshold, partial_numerator,
                              partial_denominator, inputs):
  """The continued fraction b0 + a1/(b1 + a2/(b2 + ...)) by the modified Lentz method,
  iterated until every element's step ratio is within `threshold` of 1."""
  def cond(vals):
    iteration, unconverged = vals[0], vals[1]
    return ew.bitwise_and(ew.lt(iteration, np.int32(num_iterations)), unconverged)

  def body(vals):
    iteration, _, c, d, h = vals
    num = partial_numerator(iteration, *inputs)
    den = partial_denominator(iteration, *inputs)
    small_like = _full_like(num, small)
    c = ew.add(den, ew.div(num, c))
    c = _select(ew.lt(ew.abs(c), small_like), small_like, c)
    d = ew.add(den, ew.mul(num, d))
    d = ew.reciprocal(_select(ew.lt(ew.abs(d), small_like), small_like, d))
    delta = ew.mul(c, d)
    unconverged = _any(ew.ge(ew.abs(ew.sub(delta, _c(delta, 1))), threshold))
    return ew.add(iteration, np.int32(1)), unconverged, c, d, ew.mul(h, delta)

  den0 = partial_denominator(np.int32(0), *inputs)
  shape = core.get_aval(den0).shape
  h = _select(ew.lt(ew.abs(den0), small), structural.broadcast_in_dim(small, shape, ()), den0)
  init = (np.int32(1), np.bool_(True), h, _full_like(h, 0), h)
  return while_loop(cond, body, init)[4]


def _betainc_impl(a, b, x, *, dtype):
  shape = core.get_aval(a).shape

  def iteration_like(iteration):
    return structural.broadcast_in_dim(iteration, shape, ())

  def partial_numerator(iteration, a, b, x):
    # DLMF 8.17.22: d_1 = 1, d_{2m} = -(a+m)(a+b+m)x / ((a+2m)(a+2m+1)),
    # d_{2m+1} = m(b-m)x / ((a+2m-1)(a+2m)) in the numbering of the loop.
    it = iteration_like(iteration)
    is_even = ew.eq(ew.rem(it, _full_like(it, 2)), _full_like(it, 0))
    is_one = ew.eq(it, _full_like(it, 1))
    m = ew.div(ew.sub(it, _full_like(it, 1)), _full_like(it, 2))
    m_is_zero = ew.eq(m, _full_like(m, 0))
    m = ew.convert_element_type(m, dtype)
    one, two = _full_like(a, 1), _full_like(a, 2)
    a_2m = ew.add(a, ew.mul(two, m))
    # At m = 0 this form stays accurate for tiny a under flush-to-zero.
    zero_numerator = ew.div(ew.mul(ew.neg(ew.add(a, b)), x), ew.add(a, one))
    even = _select(m_is_zero, zero_numerator,
                   ew.div(ew.mul(ew.mul(ew.neg(ew.add(a, m)), ew.add(ew.add(a, b), m)), x),
                          ew.mul(a_2m, ew.add(a_2m, one))))
    odd = ew.div(ew.mul(ew.mul(m, ew.sub(b, m)), x), ew.mul(ew.sub(a_2m, one), a_2m))
    return _select(is_one, _full_like(x, 1), _select(is_even, even, odd))

  def partial_denominator(iteration, a, b, x):
    it = iteration_like(iteration)
    return _select(ew.eq(it, _full_like(it, 0)), _full_like(x, 0), _full_like(x, 1))

  a_is_zero = ew.bitwise_or(ew.eq(a, _full_like(a, 0)), ew.eq(b, _full_like(b, np.inf)))
  b_is_zero = ew.bitwise_or(ew.eq(b, _full_like(b, 0)), ew.eq(a, _full_like(a, np.inf)))
  x_is_zero = ew.eq(x, _full_like(x, 0))
  x_is_one = ew.eq(x, _full_like(x, 1))
  is_nan = _or_all(_isnan(a), _isnan(b), _isnan(x))
  result_is_zero = ew.bitwise_or(ew.bitwise_and(b_is_zero, ew.bitwise_not(x_is_one)),
                                 ew.bitwise_and(a_is_zero, x_is_zero))
  result_is_one = ew.bitwise_or(ew.bitwise_and(a_is_zero, ew.bitwise_not(x_is_zero)),
                                ew.bitwise_and(b_is_zero, x_is_one))
  result_is_nan = _or_all(ew.lt(a, _full_like(a, 0)), ew.lt(b, _full_like(b, 0)),
                          ew.lt(x, _full_like(x, 0)), ew.gt(x, _full_like(x, 1)),
                          ew.bitwise_and(a_is_zero, b_is_zero), is_nan)

  # The fraction converges fast for x < (a+1)/(a+b+2) (DLMF 8.17.23); otherwise
  # use I_x(a, b) = 1 - I_{1-x}(b, a) (DLMF 8.17.4).
  converges_rapidly = ew.lt(x, ew.div(ew.add(a, _full_like(a, 1)),
                                      ew.add(ew.add(a, b), _full_like(b, 2))))
  a, b = _select(converges_rapidly, a, b), _select(converges_rapidly, b, a)
  x = _select(converges_rapidly, x, ew.sub(_full_like(x, 1), x))

  finfo = dtypes.finfo(dtype)
  fraction = _lentz_continued_fraction(
      num_iterations=200 if dtype == np.float32 else 600,
      small=np.array(finfo.eps / 2, dtype), threshold=np.array(finfo.eps / 2, dtype),
      partial_numerator=partial_numerator, partial_denominator=partial_denominator,
      inputs=[a, b, x])

  # x^a (1-x)^b / (a B(a, b)); for tiny a use a Gamma(a) = Gamma(a + 1) -> 1.
  lbeta_small_a = ew.sub(tr.lgamma(b), tr.lgamma(ew.add(a, b)))
  lbeta = ew.add(tr.lgamma(a), lbeta_small_a)
  log1m_x = ew.log1p(ew.neg(x))
  factor = _select(
      ew.lt(a, _full_like(a, np.array(finfo.tiny * 2, dtype))),
      ew.exp(ew.sub(ew.mul(log1m_x, b), lbeta_small_a)),
      ew.div(ew.exp(ew.sub(ew.add(ew.mul(tr.log(x), a), ew.mul(log1m_x, b)), lbeta)), a))
  result = ew.mul(fraction, factor)
  result = _select(converges_rapidly, result, ew.sub(_full_like(result, 1), result))
  result = _select(result_is_zero, _full_like(a, 0), result)
  result = _select(result_is_one, _full_like(a, 1), result)
  return _select(result_is_nan, _full_like(a, np.nan), result)


regularized_incomplete_beta_p = _float_nary("regularized_incomplete_beta", 3,
                                            _lower(_betainc_impl))


def _betainc_grad_not_implemented(g, a, b, x):
  raise ValueError("Betainc gradient with respect to a and b not supported.")


# d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b)
def _betainc_gradx(g, a, b, x):
  lbeta = ew.sub(ew.add(tr.lgamma(a), tr.lgamma(b)), tr.lgamma(ew.add(a, b)))
  log_density = ew.sub(ew.add(ew.mul(ew.sub(b, _c(b, 1)), ew.log1p(ew.neg(x))),
                              ew.mul(ew.sub(a, _c(a, 1)), tr.log(x))), lbeta)
  return ew.mul(ew.exp(log_density), g)


ad.defjvp(regularized_incomplete_beta_p, _betainc_grad_not_implemented,
          _betainc_grad_not_implemented, _betainc_gradx)


# ----------------------------------------------------------------------------
# zeta: the Hurwitz zeta function


def zeta(x, q):
  """Elementwise Hurwitz zeta function ``zeta(x, q) = sum_{n>=0} (n + q)^-x``.

  Args:
    x: the exponent, a float array (or Python scalar); the sum converges for x > 1.
    q: the offset, an array of x's dtype; rank-0 and size-1 operands broadcast.

  Returns:
    An array of the common shape and the operands' dtype.

  Raises:
    TypeError: non-float or mismatched dtypes, or shapes that do not broadcast.

  Not differentiable (as in JAX). Mirrors `jax.lax.zeta`.
  """
  return zeta_p.bind(*ew._coerce_scalars(x, q))


zeta_p = _float_nary("zeta", 2, emit_elementwise("chlo.zeta"))


# ----------------------------------------------------------------------------
# bessel_i0e, bessel_i1e: exponentially scaled modified Bessel functions


def bessel_i0e(x):
  """Elementwise exponentially scaled modified Bessel function of order 0, ``e^-|x| I0(x)``.

  Args:
    x: a float array (or Python scalar).

  Returns:
    An array of x's shape and dtype.

  Raises:
    TypeError: x's dtype is not a float dtype.

  Mirrors `jax.lax.bessel_i0e`.
  """
  return bessel_i0e_p.bind(*ew._coerce_scalars(x))


def bessel_i1e(x):
  """Elementwise exponentially scaled modified Bessel function of order 1, ``e^-|x| I1(x)``.

  Args:
    x: a float array (or Python scalar).

  Returns:
    An array of x's shape and dtype.

  Raises:
    TypeError: x's dtype is not a float dtype.

  Mirrors `jax.lax.bessel_i1e`.
  """
  return bessel_i1e_p.bind(*ew._coerce_scalars(x))


# Cephes' Chebyshev coefficients of i0e: for |x| <= 8 in the variable x/2 - 2,
# for |x| > 8 (times sqrt(|x|)) in 32/|x| - 2. float32 uses the trailing terms.
_I0E_COEFFS_SMALL = np.array([
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
    1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
    9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
    1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
    -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
    1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
    1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1])
_I0E_COEFFS_LARGE = np.array([
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
    -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
    3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
    2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
    8.04490411014108831608E-1])
# float32 keeps the last 18 and 7 terms.
_I0E_TERMS = {np.dtype(np.float32): (18, 7), np.dtype(np.float64): (30, 25)}


def _chebyshev(x, coefficients):
  """Clenshaw's recurrence for sum' c_k T_k(x / 2) (Cephes' `chbevl`)."""
  b0, b1, b2 = _full_like(x, 0), _full_like(x, 0), _full_like(x, 0)
  for c in coefficients:
    b2, b1 = b1, b0
    b0 = ew.add(ew.sub(ew.mul(x, b1), b2), _full_like(x, c))
  return ew.mul(_c(x, 0.5), ew.sub(b0, b2))


def _bessel_i0e_impl(x):
  dtype = core.get_aval(x).dtype
  if dtype not in _I0E_TERMS:  # float16, bfloat16: Cephes' constants need float32
    return ew.convert_element_type(_bessel_i0e_impl(ew.convert_element_type(x, np.float32)),
                                   dtype)
  n_small, n_large = _I0E_TERMS[dtype]
  x = ew.abs(x)
  small = _chebyshev(ew.sub(ew.mul(_full_like(x, 0.5), x), _full_like(x, 2)),
                     _I0E_COEFFS_SMALL[-n_small:])
  large = ew.div(_chebyshev(ew.sub(ew.div(_full_like(x, 32), x), _full_like(x, 2)),
                            _I0E_COEFFS_LARGE[-n_large:]), tr.sqrt(x))
  return _select(ew.le(x, _c(x, 8)), small, large)


bessel_i0e_p = _float_nary("bessel_i0e", 1,
                           lowering.lower_fun(_bessel_i0e_impl, multiple_results=False))
bessel_i1e_p = _float_nary("bessel_i1e", 1, emit_elementwise("chlo.bessel_i1e"))

# i0e' = i1e - sign(x) i0e
ad.defjvp2(bessel_i0e_p,
           lambda g, y, x: ew.mul(g, ew.sub(bessel_i1e(x), ew.mul(ew.sign(x), y))))


# i1e' = i0e - i1e (sign(x) + 1/x), which tends to 1/2 at 0 (computed away from 0).
def _bessel_i1e_jvp(g, y, x):
  eps = dtypes.finfo(core.get_aval(x).dtype).eps
  not_tiny = ew.gt(ew.abs(x), _c(x, eps))
  safe_x = _select(not_tiny, x, _full_like(x, eps))
  dy_dx = ew.sub(bessel_i0e(safe_x), ew.mul(y, ew.add(ew.sign(safe_x), ew.reciprocal(safe_x))))
  return ew.mul(g, _select(not_tiny, dy_dx, _full_like(x, 0.5)))


ad.defjvp2(bessel_i1e_p, _bessel_i1e_jvp)
