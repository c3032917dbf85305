"""The right-skewed Gumbel (maximum extreme value) distribution.

Mirrors `jax.scipy.stats.gumbel_r`.

Every function promotes its arguments to a common inexact dtype and
broadcasts them together, and returns NaN where scale <= 0.
"""
from __future__ import annotations

import numpy as np

import xjax.numpy as jnp
from xjax._src.scipy.stats.gumbel_l import _z_minus_exp
from xjax._src.nn.functions import log1mexp
from xjax._src.scipy.stats._continuous_util import promote_args_inexact, standardize


def logpdf(x, loc=0, scale=1):
  """log of the density: -z - exp(-z) - log(scale), z = (x - loc) / scale.

  Mirrors `jax.scipy.stats.gumbel_r.logpdf`.
  """
  x, loc, scale = promote_args_inexact("gumbel_r.logpdf", x, loc, scale)
  z = standardize(x, loc, scale)
  return jnp.where(scale > 0, _z_minus_exp(-z) - jnp.log(scale), np.nan)


def pdf(x, loc=0, scale=1):
  """The density exp(logpdf(...)). Mirrors `jax.scipy.stats.gumbel_r.pdf`."""
  return jnp.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
  """log P(X <= x) = -exp(-z), z = (x - loc) / scale. Mirrors `jax.scipy.stats.gumbel_r.logcdf`."""
  x, loc, scale = promote_args_inexact("gumbel_r.logcdf", x, loc, scale)
  return jnp.where(scale > 0, -jnp.exp(standardize(loc, x, scale)), np.nan)


def cdf(x, loc=0, scale=1):
  """P(X <= x) = exp(logcdf(...)). Mirrors `jax.scipy.stats.gumbel_r.cdf`."""
  return jnp.exp(logcdf(x, loc, scale))


def sf(x, loc=0, scale=1):
  """P(X > x) = 1 - exp(-exp(-z)), z = (x - loc) / scale. Mirrors `jax.scipy.stats.gumbel_r.sf`."""
  x, loc, scale = promote_args_inexact("gumbel_r.sf", x, loc, scale)
  return jnp.where(scale > 0, -jnp.expm1(-jnp.exp(standardize(loc, x, scale))), np.nan)


def logsf(x, loc=0, scale=1):
  """log P(X > x) = log(1 - exp(-exp(-z))), computed stably.

  Mirrors `jax.scipy.stats.gumbel_r.logsf`.
  """
  x, loc, scale = promote_args_inexact("gumbel_r.logsf", x, loc, scale)
  return jnp.where(scale > 0, log1mexp(jnp.exp(standardize(loc, x, scale))), np.nan)


def ppf(p, loc=0, scale=1):
  """The quantile function loc - scale * log(-log(p)); NaN unless 0 < p < 1.

  Mirrors `jax.scipy.stats.gumbel_r.ppf`.
  """
  p, loc, scale = promote_args_inexact("gumbel_r.ppf", p, loc, scale)
  return jnp.where((p > 0) & (p < 1), loc - scale * jnp.log(-jnp.log(p)), np.nan)
