"""The negative binomial distribution (mirrors `jax.scipy.stats.nbinom`)."""
import numpy as np

import xjax.numpy as jnp
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.special import gammaln, xlogy

# Promoted arguments go through jnp.asarray: a promoted Python scalar is a host `_WeakConst`
# whose NumPy operators give results with a wrong aval (an xjax core bug); Arrays avoid it.


def logpmf(k, n, p, loc=0):
  """log P(K = k) for K - loc ~ NBinom(n, p): log C(y + n - 1, n - 1) + n log p + y log(1 - p).

  `k`, `n`, `p` and `loc` broadcast together (common inexact dtype), y = k - loc;
  -inf for k < loc. Parameters are not validated (as in JAX). Mirrors
  `jax.scipy.stats.nbinom.logpmf`.
  """
  k, n, p, loc = map(jnp.asarray, promote_args_inexact("nbinom.logpmf", k, n, p, loc))
  y = k - loc
  log_comb = gammaln(y + n) - gammaln(n) - gammaln(y + 1)
  log_probs = log_comb + (xlogy(n, p) + xlogy(y, 1 - p))
  return jnp.where(jnp.isnan(n) | jnp.isnan(p), np.nan, jnp.where(k < loc, -np.inf, log_probs))


def pmf(k, n, p, loc=0):
  """P(K = k), exp of `logpmf` (mirrors `jax.scipy.stats.nbinom.pmf`)."""
  return jnp.exp(logpmf(k, n, p, loc))
