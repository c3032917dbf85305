"""The beta-binomial distribution (mirrors `jax.scipy.stats.betabinom`)."""
import numpy as np

import xjax.numpy as jnp
from xjax._src.jit import jit
from xjax._src.numpy.util import promote_args_inexact
from xjax._src.scipy.special import betaln

# Promoted arguments go through jnp.asarray: a promoted Python scalar is a host `_WeakConst`
# whose NumPy operators give results with a wrong aval (an xjax core bug); Arrays avoid it.


@jit
def logpmf(k, n, a, b, loc=0):
  """log P(K = k) for K - loc ~ BetaBinom(n, a, b): log C(n, y) + log B(y + a, n - y + b) - log B(a, b).

  `k`, `n`, `a`, `b` and `loc` broadcast together (common inexact dtype); k is
  floored first, y = floor(k) - loc. The result is -inf for y < -loc, y > n or
  y + a <= 0, 0 for y = n = 0, and NaN for invalid parameters (n < 0, a <= 0
  or b <= 0). Mirrors `jax.scipy.stats.betabinom.logpmf` (jitted, as in JAX).
  """
  k, n, a, b, loc = map(jnp.asarray, promote_args_inexact("betabinom.logpmf", k, n, a, b, loc))
  y = jnp.floor(k) - loc
  # log C(n, y) = -log(n + 1) - log B(n - y + 1, y + 1)
  log_comb = -(jnp.log1p(n) + betaln(n - y + 1, y + 1))
  log_probs = log_comb + (betaln(y + a, n - y + b) - betaln(a, b))
  log_probs = jnp.where((y == 0) & (n == 0), 0., log_probs)
  outside = (y < -loc) | (y > n) | (y + a <= 0)
  log_probs = jnp.where(outside, -np.inf, log_probs)
  return jnp.where((n < 0) | (a <= 0) | (b <= 0), np.nan, log_probs)


def pmf(k, n, a, b, loc=0):
  """P(K = k), exp of `logpmf` (mirrors `jax.scipy.stats.betabinom.pmf`)."""
  return jnp.exp(logpmf(k, n, a, b, loc))
