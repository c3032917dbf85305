"""The Pareto distribution with shape `b` on [loc + scale, inf) (mirrors `jax.scipy.stats.pareto`).

Every function promotes its arguments to a common inexact dtype and
broadcasts them together; `b` and `scale` are not checked, as in JAX.
"""
from __future__ import annotations

import numpy as np

import xjax.numpy as jnp
from xjax._src.scipy.stats._continuous_util import (nan_unless_probability, promote_args_inexact,
                                                    standardize)


def logpdf(x, b, loc=0, scale=1):
  """log of the density: log(b / scale) - (b + 1) log y, y = (x - loc) / scale; -inf for y < 1.

  Mirrors `jax.scipy.stats.pareto.logpdf`.
  """
  x, b, loc, scale = promote_args_inexact("pareto.logpdf", x, b, loc, scale)
  y = standardize(x, loc, scale)
  log_density = -(jnp.log(scale / b) + (b + 1) * jnp.log(y))
  return jnp.where(x < loc + scale, -np.inf, log_density)


def pdf(x, b, loc=0, scale=1):
  """The density exp(logpdf(...)). Mirrors `jax.scipy.stats.pareto.pdf`."""
  return jnp.exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
  """P(X <= x) = 1 - y**(-b), y = (x - loc) / scale; 0 for y < 1.

  Mirrors `jax.scipy.stats.pareto.cdf`.
  """
  x, b, loc, scale = promote_args_inexact("pareto.cdf", x, b, loc, scale)
  y = standardize(x, loc, scale)
  return jnp.where(x < loc + scale, 0, 1 - y ** -b)


def logcdf(x, b, loc=0, scale=1):
  """log P(X <= x) = log1p(-y**(-b)); -inf for y < 1. Mirrors `jax.scipy.stats.pareto.logcdf`."""
  x, b, loc, scale = promote_args_inexact("pareto.logcdf", x, b, loc, scale)
  y = standardize(x, loc, scale)
  return jnp.where(x < loc + scale, -np.inf, jnp.log1p(-(y ** -b)))


def logsf(x, b, loc=0, scale=1):
  """log P(X > x) = -b log y; 0 for y < 1. Mirrors `jax.scipy.stats.pareto.logsf`."""
  x, b, loc, scale = promote_args_inexact("pareto.logsf", x, b, loc, scale)
  y = standardize(x, loc, scale)
  return jnp.where(x < loc + scale, 0, -b * jnp.log(y))


def sf(x, b, loc=0, scale=1):
  """P(X > x) = exp(logsf(...)). Mirrors `jax.scipy.stats.pareto.sf`."""
  return jnp.exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
  """The quantile function loc + scale * (1 - q)**(-1/b); NaN where q is NaN or outside [0, 1].

  Mirrors `jax.scipy.stats.pareto.ppf`.
  """
  q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
  return nan_unless_probability(q, loc + scale * (1 - q) ** -(1 / b))
