"""The gamma distribution with shape `a` (mirrors `jax.scipy.stats.gamma`).

Every function promotes its arguments to a common inexact dtype and
broadcasts them together; `a` and `scale` are not checked, as in JAX.
"""
from __future__ import annotations

import numpy as np

import xjax.numpy as jnp
from xjax._src.scipy import special
from xjax._src.scipy.stats._continuous_util import promote_args_inexact, standardize


def logpdf(x, a, loc=0, scale=1):
  """log of the gamma density: (a - 1) log y - y - gammaln(a) - log(scale), y = (x - loc) / scale.

  -inf for x < loc; at y = 0 the term (a - 1) log y is 0 for a = 1 (xlogy),
  so the derivative stays finite there. Arguments broadcast together.
  Mirrors `jax.scipy.stats.gamma.logpdf`.
  """
  x, a, loc, scale = promote_args_inexact("gamma.logpdf", x, a, loc, scale)
  inside = x >= loc
  y = jnp.where(inside, standardize(x, loc, scale), 1)  # keeps the gradient finite outside
  log_density = special.xlogy(a - 1, y) - y - special.gammaln(a) - jnp.log(scale)
  return jnp.where(inside, log_density, -np.inf)


def pdf(x, a, loc=0, scale=1):
  """The gamma density exp(logpdf(...)). Mirrors `jax.scipy.stats.gamma.pdf`."""
  return jnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
  """P(X <= x) = gammainc(a, max((x - loc) / scale, 0)). Mirrors `jax.scipy.stats.gamma.cdf`."""
  x, a, loc, scale = promote_args_inexact("gamma.cdf", x, a, loc, scale)
  return special.gammainc(a, jnp.maximum(standardize(x, loc, scale), 0))


def logcdf(x, a, loc=0, scale=1):
  """log(cdf(...)). Mirrors `jax.scipy.stats.gamma.logcdf`."""
  return jnp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
  """P(X > x) = gammaincc(a, (x - loc) / scale), and 1 where x < loc.

  Mirrors `jax.scipy.stats.gamma.sf`.
  """
  x, a, loc, scale = promote_args_inexact("gamma.sf", x, a, loc, scale)
  y = standardize(x, loc, scale)
  return jnp.where(y < 0, 1, special.gammaincc(a, y))


def logsf(x, a, loc=0, scale=1):
  """log(sf(...)). Mirrors `jax.scipy.stats.gamma.logsf`."""
  return jnp.log(sf(x, a, loc, scale))
