"""The geometric distribution (mirrors `jax.scipy.stats.geom`)."""
import numpy as np

import xjax.numpy as jnp
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.special import xlog1py

# Promoted arguments go through jnp.asarray: a promoted Python scalar is a host `_WeakConst`
# whose NumPy operators give results with a wrong aval (an xjax core bug); Arrays avoid it.


def logpmf(k, p, loc=0):
  """log P(K = k) for K - loc ~ Geom(p) on {1, 2, ...}: (k - loc - 1) log(1 - p) + log p.

  `k`, `p` and `loc` broadcast together (common inexact dtype). -inf for
  k - loc <= 0; k is not checked to be an integer, as in JAX. Mirrors
  `jax.scipy.stats.geom.logpmf`.
  """
  k, p, loc = map(jnp.asarray, promote_args_inexact("geom.logpmf", k, p, loc))
  x = k - loc
  log_probs = xlog1py(x - 1, -p) + jnp.log(p)
  return jnp.where(jnp.isnan(p), np.nan, jnp.where(x <= 0, -np.inf, log_probs))


def pmf(k, p, loc=0):
  """P(K = k), exp of `logpmf` (mirrors `jax.scipy.stats.geom.pmf`)."""
  return jnp.exp(logpmf(k, p, loc))
