"""The Cauchy distribution with location `loc` and scale `scale` (mirrors `jax.scipy.stats.cauchy`).

Every function promotes its arguments to a common inexact dtype and
broadcasts them together; `scale` is not checked, as in JAX.
"""
from __future__ import annotations

import math

import numpy as np

import xjax.numpy as jnp
from xjax._src.scipy.stats._continuous_util import promote_args_inexact, standardize


def logpdf(x, loc=0, scale=1):
  """log of the Cauchy density: -log(pi scale) - log1p(z**2), z = (x - loc) / scale.

  `x`, `loc`, `scale` broadcast together; the result has their broadcast
  shape and promoted inexact dtype. Mirrors `jax.scipy.stats.cauchy.logpdf`.
  """
  x, loc, scale = promote_args_inexact("cauchy.logpdf", x, loc, scale)
  z = jnp.abs(standardize(x, loc, scale))
  # log1p(z**2) = 2 log z + log1p(z**-2) for z > 1, so that z**2 cannot overflow
  inv_z = 1 / jnp.where(z > 1, z, 1)
  log1p_z2 = jnp.where(z > 1, 2 * jnp.log(z) + jnp.log1p(inv_z * inv_z), jnp.log1p(z * z))
  return -(jnp.log(np.pi * scale) + log1p_z2)


def pdf(x, loc=0, scale=1):
  """The Cauchy density exp(logpdf(x, loc, scale)). Mirrors `jax.scipy.stats.cauchy.pdf`."""
  return jnp.exp(logpdf(x, loc, scale))


def _cdf(z):
  # 1/2 + arctan(z) / pi, as arctan2(1, -z) / pi: no cancellation in the lower tail
  return jnp.arctan2(jnp.ones_like(z), -z) / np.pi


def cdf(x, loc=0, scale=1):
  """P(X <= x) = 1/2 + arctan((x - loc) / scale) / pi. Mirrors `jax.scipy.stats.cauchy.cdf`."""
  x, loc, scale = promote_args_inexact("cauchy.cdf", x, loc, scale)
  return _cdf(standardize(x, loc, scale))


def logcdf(x, loc=0, scale=1):
  """log(cdf(x, loc, scale)), as log1p(-sf) in the upper half. Mirrors `jax.scipy.stats.cauchy.logcdf`."""
  x, loc, scale = promote_args_inexact("cauchy.logcdf", x, loc, scale)
  z = standardize(x, loc, scale)
  # for z < -1, cdf = arctan(u) / pi with u = -1/z: log cdf = log(arctan(u) / u) - log(-z) - log(pi),
  # finite even where the cdf itself underflows
  far = z < -1
  u = jnp.where(far, -1 / z, 1)
  log_far = jnp.log(jnp.where(u == 0, 1, jnp.arctan(u) / jnp.where(u == 0, 1, u)))
  log_far = log_far - jnp.log(jnp.where(far, -z, 1)) - math.log(math.pi)
  return jnp.where(far, log_far, jnp.where(z < 0, jnp.log(_cdf(z)), jnp.log1p(-_cdf(-z))))


def sf(x, loc=0, scale=1):
  """P(X > x) = 1/2 + arctan((loc - x) / scale) / pi. Mirrors `jax.scipy.stats.cauchy.sf`."""
  x, loc, scale = promote_args_inexact("cauchy.sf", x, loc, scale)
  return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
  """log(sf(x, loc, scale)). Mirrors `jax.scipy.stats.cauchy.logsf`."""
  x, loc, scale = promote_args_inexact("cauchy.logsf", x, loc, scale)
  return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1):
  """The quantile function loc + scale * tan(pi (q - 1/2)); q outside [0, 1] is not checked.

  Mirrors `jax.scipy.stats.cauchy.ppf`.
  """
  q, loc, scale = promote_args_inexact("cauchy.ppf", q, loc, scale)
  return jnp.tan(np.pi * q - np.pi / 2) * scale + loc


def isf(q, loc=0, scale=1):
  """The inverse survival function loc + scale * tan(pi (1/2 - q)).

  Mirrors `jax.scipy.stats.cauchy.isf`.
  """
  q, loc, scale = promote_args_inexact("cauchy.isf", q, loc, scale)
  return jnp.tan(np.pi / 2 - np.pi * q) * scale + loc
