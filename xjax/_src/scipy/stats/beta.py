"""The beta distribution with shapes `a`, `b` on [loc, loc + scale].

Mirrors `jax.scipy.stats.beta`.

Every function promotes its arguments to a common inexact dtype and
broadcasts them together.
"""
from __future__ import annotations

import numpy as np

import xjax.numpy as jnp
from xjax._src.scipy import special
from xjax._src.scipy.stats._continuous_util import promote_args_inexact, standardize


def logpdf(x, a, b, loc=0, scale=1):
  """log of the beta density: (a-1) log y + (b-1) log(1-y) - betaln(a, b) - log(scale).

  y = (x - loc) / scale. -inf outside [loc, loc + scale]; NaN where a <= 0,
  b <= 0 or scale <= 0. Arguments broadcast together. Mirrors
  `jax.scipy.stats.beta.logpdf`.
  """
  x, a, b, loc, scale = promote_args_inexact("beta.logpdf", x, a, b, loc, scale)
  y = standardize(x, loc, scale)
  log_density = (special.xlogy(a - 1, y) + special.xlog1py(b - 1, -y)
                 - special.betaln(a, b) - jnp.log(scale))
  outside = (x < loc) | (x > loc + scale)
  invalid = (a <= 0) | (b <= 0) | (scale <= 0)
  return jnp.where(invalid, np.nan, jnp.where(outside, -np.inf, log_density))


def pdf(x, a, b, loc=0, scale=1):
  """The beta density exp(logpdf(...)). Mirrors `jax.scipy.stats.beta.pdf`."""
  return jnp.exp(logpdf(x, a, b, loc, scale))


def _unit_y(x, loc, scale):
  return jnp.clip(standardize(x, loc, scale), 0, 1)


def cdf(x, a, b, loc=0, scale=1):
  """P(X <= x) = betainc(a, b, y), y = (x - loc) / scale clipped to [0, 1].

  Mirrors `jax.scipy.stats.beta.cdf`.
  """
  x, a, b, loc, scale = promote_args_inexact("beta.cdf", x, a, b, loc, scale)
  return special.betainc(a, b, _unit_y(x, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
  """log(cdf(...)). Mirrors `jax.scipy.stats.beta.logcdf`."""
  return jnp.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
  """P(X > x) = betainc(b, a, 1 - y), y = (x - loc) / scale clipped to [0, 1].

  Mirrors `jax.scipy.stats.beta.sf`.
  """
  x, a, b, loc, scale = promote_args_inexact("beta.sf", x, a, b, loc, scale)
  return special.betainc(b, a, 1 - _unit_y(x, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
  """log(sf(...)). Mirrors `jax.scipy.stats.beta.logsf`."""
  return jnp.log(sf(x, a, b, loc, scale))
