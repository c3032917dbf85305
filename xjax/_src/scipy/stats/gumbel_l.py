"""The left-skewed Gumbel (minimum extreme value) distribution.

Mirrors `jax.scipy.stats.gumbel_l`.

Every function promotes its arguments to a common inexact dtype and
broadcasts them together, and returns NaN where scale <= 0.
"""
from __future__ import annotations

import numpy as np

import xjax.numpy as jnp
from xjax._src.nn.functions import log1mexp
from xjax._src.scipy.stats._continuous_util import promote_args_inexact, standardize


def _z_minus_exp(z):
  """z - exp(z), -inf for z > 1000 and NaN at z = inf (inf - inf, as in SciPy).

  Written out because XLA on CPU miscompiles z - exp(z) in float32 under jit: it gave
  -2.8e37 at z = 3.4e38 and inf at z = inf."""
  big = z > 1000
  return jnp.where(big, jnp.where(z == np.inf, np.nan, -np.inf), z - jnp.exp(jnp.where(big, 0, z)))


def logpdf(x, loc=0, scale=1):
  """log of the density: z - exp(z) - log(scale), z = (x - loc) / scale.

  Mirrors `jax.scipy.stats.gumbel_l.logpdf`.
  """
  x, loc, scale = promote_args_inexact("gumbel_l.logpdf", x, loc, scale)
  z = standardize(x, loc, scale)
  return jnp.where(scale > 0, _z_minus_exp(z) - jnp.log(scale), np.nan)


def pdf(x, loc=0, scale=1):
  """The density exp(logpdf(...)). Mirrors `jax.scipy.stats.gumbel_l.pdf`."""
  return jnp.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
  """log P(X <= x) = log(-expm1(-exp(z))), z = (x - loc) / scale.

  Mirrors `jax.scipy.stats.gumbel_l.logcdf`.
  """
  x, loc, scale = promote_args_inexact("gumbel_l.logcdf", x, loc, scale)
  z = standardize(x, loc, scale)
  # log1mexp: log(-expm1(-e)) rounds 1 - exp(-e) to 1 for e > 37 (float64), giving 0.
  return jnp.where(scale > 0, log1mexp(jnp.exp(z)), np.nan)


def cdf(x, loc=0, scale=1):
  """P(X <= x) = exp(logcdf(...)). Mirrors `jax.scipy.stats.gumbel_l.cdf`."""
  return jnp.exp(logcdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
  """log P(X > x) = -exp(z), z = (x - loc) / scale. Mirrors `jax.scipy.stats.gumbel_l.logsf`."""
  x, loc, scale = promote_args_inexact("gumbel_l.logsf", x, loc, scale)
  return jnp.where(scale > 0, -jnp.exp(standardize(x, loc, scale)), np.nan)


def sf(x, loc=0, scale=1):
  """P(X > x) = exp(logsf(...)). Mirrors `jax.scipy.stats.gumbel_l.sf`."""
  return jnp.exp(logsf(x, loc, scale))


def ppf(p, loc=0, scale=1):
  """The quantile function loc + scale * log(-log1p(-p)); NaN unless 0 < p < 1.

  Mirrors `jax.scipy.stats.gumbel_l.ppf`.
  """
  p, loc, scale = promote_args_inexact("gumbel_l.ppf", p, loc, scale)
  return jnp.where((p > 0) & (p < 1), loc + scale * jnp.log(-jnp.log1p(-p)), np.nan)
