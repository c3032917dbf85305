"""The Bernoulli distribution (mirrors `jax.scipy.stats.bernoulli`)."""
import numpy as np

import xjax.numpy as jnp
from xjax._src.numpy.util import is_weak, promote_args_inexact
from xjax._src.scipy.special import xlog1py, xlogy

# Promoted arguments go through jnp.asarray: a promoted Python scalar is a host `_WeakConst`
# whose NumPy operators give results with a wrong aval (an xjax core bug); Arrays avoid it.


def logpmf(k, p, loc=0):
  """log P(K = k) for K - loc ~ Bernoulli(p): log(p) at k - loc = 1, log(1 - p) at 0.

  `k`, `p` and `loc` broadcast together and are promoted to a common inexact
  dtype. Outside [0, 1] (k - loc < 0 or > 1) the result is -inf, NaN where p is NaN. JAX does not
  check that k - loc is an integer: inside (0, 1) it returns the interpolation
  (k - loc) log p + (1 - k + loc) log(1 - p). Mirrors
  `jax.scipy.stats.bernoulli.logpmf`.
  """
  k, p, loc = map(jnp.asarray, promote_args_inexact("bernoulli.logpmf", k, p, loc))
  x = k - loc
  log_probs = xlogy(x, p) + xlog1py(1 - x, -p)
  # A NaN p gives NaN everywhere, as in SciPy (the support check alone gave -inf outside).
  return jnp.where(jnp.isnan(p), np.nan, jnp.where((x < 0) | (x > 1), -np.inf, log_probs))


def pmf(k, p, loc=0):
  """P(K = k), exp of `logpmf` (mirrors `jax.scipy.stats.bernoulli.pmf`)."""
  return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
  """P(K <= k) for K ~ Bernoulli(p): 0 for k < 0, 1 - p for 0 <= k < 1, 1 for k >= 1.

  `k` and `p` broadcast together (common inexact dtype). NaN where k or p is
  NaN or p lies outside [0, 1]. Mirrors `jax.scipy.stats.bernoulli.cdf`.
  """
  k, p = map(jnp.asarray, promote_args_inexact("bernoulli.cdf", k, p))
  invalid = jnp.isnan(k) | jnp.isnan(p) | (p < 0) | (p > 1)
  inside = jnp.where(k < 1, 1 - p, 1)
  return jnp.where(invalid, np.nan, jnp.where(k < 0, 0, inside))


def ppf(q, p):
  """The inverse of `cdf`: 0 where q <= 1 - p, else 1.

  `q` and `p` broadcast together (common inexact dtype). NaN where q or p is
  NaN or outside [0, 1]. Mirrors `jax.scipy.stats.bernoulli.ppf`.
  """
  q, p = map(jnp.asarray, promote_args_inexact("bernoulli.ppf", q, p))
  zero, one = _const_like(q, 0), _const_like(q, 1)
  invalid = jnp.isnan(q) | jnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
  return jnp.where(invalid, np.nan, jnp.where(q <= 1 - p, zero, one))


def _const_like(x, value):
  """`value` in x's dtype, weakly typed (a Python scalar) where x is, as JAX's ``lax._const``."""
  return value if is_weak(x) else np.array(value, x.dtype)
