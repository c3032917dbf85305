"""The gamma distribution with shape `a` (mirrors `jax.scipy.stats.gamma`).

Every function promotes its arguments to a common inexact dtype and
broadcasts them together; `a` and `scale` are not checked, as in JAX.
"""
from __future__ import annotations

import numpy as np

import xjax.numpy as jnp
from xjax._src.scipy import special
from xjax._src.scipy.stats._continuous_util import (log_of_probability, nan_if_any_nan,
                                                       promote_args_inexact, standardize)


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
  # NaN x stays -inf, as in JAX (pinned in tests/scipy/test_stats_continuous.py).
  return nan_if_any_nan(jnp.where(inside, log_density, -np.inf), a, loc, scale)


def pdf(x, a, loc=0, scale=1):
  """The gamma density exp(logpdf(...)). Mirrors `jax.scipy.stats.gamma.pdf`."""
  return jnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
  """P(X <= x) = gammainc(a, max((x - loc) / scale, 0)). Mirrors `jax.scipy.stats.gamma.cdf`."""
  x, a, loc, scale = promote_args_inexact("gamma.cdf", x, a, loc, scale)
  return special.gammainc(a, jnp.maximum(standardize(x, loc, scale), 0))


def logcdf(x, a, loc=0, scale=1):
  """log(cdf(...)), as log1p(-sf) where the cdf is above 1/2.

  Mirrors `jax.scipy.stats.gamma.logcdf`.
  """
  return log_of_probability(cdf(x, a, loc, scale), sf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
  """P(X > x) = gammaincc(a, (x - loc) / scale), and 1 where x < loc.

  Mirrors `jax.scipy.stats.gamma.sf`.
  """
  x, a, loc, scale = promote_args_inexact("gamma.sf", x, a, loc, scale)
  y = standardize(x, loc, scale)
  return nan_if_any_nan(jnp.where(y < 0, 1, special.gammaincc(a, y)), a)


def logsf(x, a, loc=0, scale=1):
  """log(sf(...)), as log1p(-cdf) where the sf is above 1/2.

  Mirrors `jax.scipy.stats.gamma.logsf`.
  """
  return log_of_probability(sf(x, a, loc, scale), cdf(x, a, loc, scale))
