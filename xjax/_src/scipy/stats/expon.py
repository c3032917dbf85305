"""The exponential distribution on [loc, inf) with mean loc + scale.

Mirrors `jax.scipy.stats.expon`.

Every function promotes its arguments to a common inexact dtype and
broadcasts them together; `scale` is not checked, as in JAX.
"""
from __future__ import annotations

import numpy as np

import xjax.numpy as jnp
from xjax._src.nn.functions import log1mexp
from xjax._src.scipy.stats._continuous_util import (nan_unless_probability, promote_args_inexact,
                                                    standardize)


def logpdf(x, loc=0, scale=1):
  """log of the exponential density: -(x - loc) / scale - log(scale); -inf for x < loc.

  Mirrors `jax.scipy.stats.expon.logpdf`.
  """
  x, loc, scale = promote_args_inexact("expon.logpdf", x, loc, scale)
  # The support is checked on z too: x - loc can round to 0 where z is far below 0.
  z = standardize(x, loc, scale)
  return jnp.where((x < loc) | (z < 0), -np.inf, -(z + jnp.log(scale)))


def pdf(x, loc=0, scale=1):
  """The exponential density exp(logpdf(...)). Mirrors `jax.scipy.stats.expon.pdf`."""
  return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
  """P(X <= x) = -expm1(-(x - loc) / scale), 0 for x < loc. Mirrors `jax.scipy.stats.expon.cdf`."""
  x, loc, scale = promote_args_inexact("expon.cdf", x, loc, scale)
  return jnp.where(x < loc, 0, -jnp.expm1(standardize(loc, x, scale)))


def logsf(x, loc=0, scale=1):
  """log P(X > x) = -(x - loc) / scale, 0 for x < loc. Mirrors `jax.scipy.stats.expon.logsf`."""
  x, loc, scale = promote_args_inexact("expon.logsf", x, loc, scale)
  return jnp.where(x < loc, 0, standardize(loc, x, scale))


def sf(x, loc=0, scale=1):
  """P(X > x) = exp(logsf(...)). Mirrors `jax.scipy.stats.expon.sf`."""
  return jnp.exp(logsf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
  """log P(X <= x) = log(1 - exp(-z)), z = (x - loc) / scale; -inf for z < 0.

  Computed as log(-expm1(-z)) for small z, where the cdf is about z and log1p(-sf) would
  round sf to 1 and give -inf, and as log(x - loc) - log(scale) where z is below 1e-20 (and
  may underflow to 0 while x > loc). Mirrors `jax.scipy.stats.expon.logcdf`.
  """
  x, loc, scale = promote_args_inexact("expon.logcdf", x, loc, scale)
  z = standardize(x, loc, scale)
  tiny = z < 1e-20
  return jnp.where(x < loc, -np.inf,
                   jnp.where(tiny, jnp.log(x - loc) - jnp.log(scale),
                             log1mexp(jnp.where(tiny, 1, z))))


def ppf(q, loc=0, scale=1):
  """The quantile function loc - scale * log1p(-q); NaN where q is NaN or outside [0, 1].

  Mirrors `jax.scipy.stats.expon.ppf`.
  """
  q, loc, scale = promote_args_inexact("expon.ppf", q, loc, scale)
  return nan_unless_probability(q, loc - scale * jnp.log1p(-q))
