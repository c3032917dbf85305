"""The multinomial distribution (mirrors `jax.scipy.stats.multinomial`)."""
import numpy as np

import xjax.numpy as jnp
from xjax._src import dtypes
from xjax._src.numpy.util import promote_args_inexact, promote_args_numeric
from xjax._src.scipy.special import gammaln, xlogy

# Promoted arguments go through jnp.asarray: a promoted Python scalar is a host `_WeakConst`
# whose NumPy operators give results with a wrong aval (an xjax core bug); Arrays avoid it.


def logpmf(x, n, p):
  """log P(X = x) for X ~ Multinomial(n, p): log n! + sum_i (x_i log p_i - log x_i!).

  `x` holds integer counts along its last axis, `p` the probabilities (same
  last axis; promoted to an inexact dtype) and `n` the integer number of trials.
  The sum runs over the last axis, so the result has the broadcast batch shape.
  It is -inf unless the sum of *all* entries of `x` equals n (JAX sums the
  whole array here, not per row). Raises ValueError when `x` and `n` do not
  have an integer dtype. Mirrors `jax.scipy.stats.multinomial.logpmf`.
  """
  p, = map(jnp.asarray, promote_args_inexact("multinomial.logpmf", p))
  x, n = map(jnp.asarray, promote_args_numeric("multinomial.logpmf", x, n))
  if not dtypes.issubdtype(x.dtype, np.integer):
    raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, n.dtype={n.dtype}")
  x, n = x.astype(p.dtype), n.astype(p.dtype)
  log_probs = gammaln(n + 1) + jnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
  return jnp.where(jnp.sum(x) == n, log_probs, -np.inf)


def pmf(x, n, p):
  """P(X = x), exp of `logpmf` (mirrors `jax.scipy.stats.multinomial.pmf`)."""
  return jnp.exp(logpmf(x, n, p))
