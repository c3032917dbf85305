"""The Poisson distribution (mirrors `jax.scipy.stats.poisson`)."""
import numpy as np

import xjax.numpy as jnp
from xjax._src.scipy.stats import _saddle
from xjax._src.jit import jit
from xjax._src.numpy.util import ensure_arraylike, promote_args_inexact, promote_dtypes_inexact
from xjax._src.scipy.special import entr, gammaincc, gammaln, xlogy

# Promoted arguments go through jnp.asarray: a promoted Python scalar is a host `_WeakConst`
# whose NumPy operators give results with a wrong aval (an xjax core bug); Arrays avoid it.


def logpmf(k, mu, loc=0):
  """log P(K = k) for K - loc ~ Poisson(mu): x log(mu) - log(x!) - mu with x = k - loc.

  `k`, `mu` and `loc` broadcast together (common inexact dtype). -inf where
  x < 0 or k is not an integer. Differentiable in mu. Mirrors
  `jax.scipy.stats.poisson.logpmf`.
  """
  k, mu, loc = map(jnp.asarray, promote_args_inexact("poisson.logpmf", k, mu, loc))
  x = k - loc
  # Saddle-point form for x >= 20: x log(mu) - mu - gammaln(x + 1) cancels at large x and mu
  # (in float64 at x = mu = 1e8 it lost 2e-8 relative). -mu at x = 0: gammaln(1) is not
  # exactly 0 in float32.
  big = (x >= 20) & (x < np.inf)
  direct = jnp.where(x == 0, -mu, xlogy(x, mu) - gammaln(x + 1) - mu)
  log_probs = jnp.where(big, _saddle.log_poisson_pmf(jnp.where(big, x, 20), mu), direct)
  return jnp.where(jnp.isnan(mu), np.nan, jnp.where((x < 0) | (jnp.round(k) != k), -np.inf, log_probs))


def pmf(k, mu, loc=0):
  """P(K = k), exp of `logpmf` (mirrors `jax.scipy.stats.poisson.pmf`)."""
  return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
  """P(K <= k) = Q(floor(k - loc) + 1, mu), the regularized upper incomplete gamma function.

  `k`, `mu` and `loc` broadcast together (common inexact dtype); 0 for
  k - loc < 0. Mirrors `jax.scipy.stats.poisson.cdf`.
  """
  # JAX names this function "poisson.logpmf" in its argument errors; kept for equal messages.
  k, mu, loc = map(jnp.asarray, promote_args_inexact("poisson.logpmf", k, mu, loc))
  x = k - loc
  # P(K <= inf) is 1 for every mu, where igammac(inf, inf) is NaN.
  value = jnp.where(x < 0, 0, jnp.where(x == np.inf, 1, gammaincc(jnp.floor(x + 1), mu)))
  return jnp.where(jnp.isnan(mu), np.nan, value)


def _truncated_entropy_sum(mu, num_terms, upper):
  """sum_{k < upper} entr(pmf(k, mu)) with k over the static range [0, num_terms); mu is 1-D."""
  k = jnp.arange(num_terms, dtype=mu.dtype)[:, None]
  probs = jnp.where(k < upper, pmf(k, mu), 0.0)
  return jnp.sum(entr(probs), axis=0)


@jit
def entropy(mu, loc=0):
  """The Shannon entropy -sum_k p(k) log p(k) of Poisson(mu), elementwise in `mu`.

  As in JAX, it switches regime by mu: 0 at mu = 0; for mu < 10 a direct sum of
  the first ceil(mu + 20) terms (at most 35); for 10 <= mu < 100 the first
  ceil(mu + 10 sqrt(mu) + 20) terms (at most 250); for mu >= 100 the
  asymptotic form log(2 pi e mu) / 2 - 1 / (12 mu). NaN for mu < 0 or NaN.
  `loc` does not change the entropy; it only takes part in broadcasting (the
  result has the broadcast shape of mu and loc, in their common inexact
  dtype). Mirrors `jax.scipy.stats.poisson.entropy` (jitted, as in JAX).
  """
  mu, loc = ensure_arraylike("poisson.entropy", mu, loc)
  mu, loc = map(jnp.asarray, promote_dtypes_inexact(mu, loc))
  out_shape = jnp.broadcast_shapes(mu.shape, loc.shape)
  m = jnp.ravel(mu)
  small = _truncated_entropy_sum(m, 35, jnp.ceil(m + 20))
  medium = _truncated_entropy_sum(m, 250, jnp.ceil(m + 10 * jnp.sqrt(m) + 20))
  large = 0.5 * jnp.log(2 * np.pi * np.e * m) - 1.0 / (12 * m)
  h = jnp.where(m < 10, small, jnp.where(m < 100, medium, large))
  h = jnp.where(m == 0, jnp.zeros_like(m), h)
  return jnp.broadcast_to(jnp.reshape(h, mu.shape), out_shape)
