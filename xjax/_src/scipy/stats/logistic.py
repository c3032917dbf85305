"""The logistic distribution (mirrors `jax.scipy.stats.logistic`).

Every function promotes its arguments to a common inexact dtype and
broadcasts them together; `scale` is not checked, as in JAX.
"""
from __future__ import annotations

import xjax.numpy as jnp
from xjax._src.scipy import special
from xjax._src.scipy.stats._continuous_util import promote_args_inexact, standardize


def logpdf(x, loc=0, scale=1):
  """log of the density: -2 logaddexp(z/2, -z/2) - log(scale), z = (x - loc) / scale.

  Mirrors `jax.scipy.stats.logistic.logpdf`.
  """
  x, loc, scale = promote_args_inexact("logistic.logpdf", x, loc, scale)
  half_z = standardize(x, loc, scale) / 2
  return -2 * jnp.logaddexp(half_z, -half_z) - jnp.log(scale)


def pdf(x, loc=0, scale=1):
  """The density exp(logpdf(...)). Mirrors `jax.scipy.stats.logistic.pdf`."""
  return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
  """P(X <= x) = expit((x - loc) / scale). Mirrors `jax.scipy.stats.logistic.cdf`."""
  x, loc, scale = promote_args_inexact("logistic.cdf", x, loc, scale)
  return special.expit(standardize(x, loc, scale))


def sf(x, loc=0, scale=1):
  """P(X > x) = expit((loc - x) / scale). Mirrors `jax.scipy.stats.logistic.sf`."""
  x, loc, scale = promote_args_inexact("logistic.sf", x, loc, scale)
  return special.expit(-standardize(x, loc, scale))


def ppf(x, loc=0, scale=1):
  """The quantile function loc + scale * logit(x) for a probability `x`.

  Mirrors `jax.scipy.stats.logistic.ppf`.
  """
  x, loc, scale = promote_args_inexact("logistic.ppf", x, loc, scale)
  return special.logit(x) * scale + loc


def isf(x, loc=0, scale=1):
  """The inverse survival function loc - scale * logit(x).

  Mirrors `jax.scipy.stats.logistic.isf`.
  """
  x, loc, scale = promote_args_inexact("logistic.isf", x, loc, scale)
  return -special.logit(x) * scale + loc
