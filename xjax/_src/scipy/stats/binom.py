"""The binomial distribution (mirrors `jax.scipy.stats.binom`)."""
import numpy as np

import xjax.numpy as jnp
from xjax._src.scipy.stats import _saddle
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.special import gammaln, xlog1py, xlogy

# Promoted arguments go through jnp.asarray: a promoted Python scalar is a host `_WeakConst`
# whose NumPy operators give results with a wrong aval (an xjax core bug); Arrays avoid it.


def logpmf(k, n, p, loc=0):
  """log P(K = k) for K - loc ~ Binom(n, p): log C(n, y) + y log p + (n - y) log(1 - p).

  `k`, `n`, `p` and `loc` broadcast together (common inexact dtype), y = k - loc.
  -inf outside loc <= k < loc + n + 1; 0 where y = n = 0 or where the
  p-dependent term is exactly 0 (p = 0 at y = 0, p = 1 at y = n). As in JAX,
  y is not checked to be an integer (C(n, y) uses gammaln). Differentiable in
  p. Mirrors `jax.scipy.stats.binom.logpmf`.
  """
  k, n, p, loc = map(jnp.asarray, promote_args_inexact("binom.logpmf", k, n, p, loc))
  y = k - loc
  log_comb = gammaln(n + 1) - (gammaln(y + 1) + gammaln(n - y + 1))
  log_linear = xlogy(y, p) + xlog1py(n - y, -p)
  direct = jnp.where(((y == 0) & (n == 0)) | (log_linear == 0), 0., log_comb + log_linear)
  # At y = 0 without log_comb (gammaln(1) is not exactly 0 in float32); for n >= 20 inside
  # the support Loader's saddle-point form, where the gammaln difference cancelled.
  direct = jnp.where((y == 0) & (n > 0), xlog1py(n, -p), direct)
  big = (n >= 20) & (n < np.inf) & (y > 0) & (y <= n)
  log_probs = jnp.where(big, _saddle.log_binom_pmf(jnp.where(big, y, 1), jnp.where(big, n, 20), p),
                        direct)
  return jnp.where(jnp.isnan(n) | jnp.isnan(p) | (n == np.inf), np.nan,
                   jnp.where((y >= 0) & ((y <= n) | (k < loc + n + 1)), log_probs, -np.inf))


def pmf(k, n, p, loc=0):
  """P(K = k), exp of `logpmf` (mirrors `jax.scipy.stats.binom.pmf`)."""
  return jnp.exp(logpmf(k, n, p, loc))
