"""The Pareto distribution with shape `b` on [loc + scale, inf) (mirrors `jax.scipy.stats.pareto`).

Every function promotes its arguments to a common inexact dtype and
broadcasts them together; `b` and `scale` are not checked, as in JAX.
"""
from __future__ import annotations

import numpy as np

import xjax.numpy as jnp
from xjax._src.nn.functions import log1mexp
from xjax._src.scipy.stats._continuous_util import (nan_if_any_nan, nan_unless_probability,
                                                    promote_args_inexact, standardize)


def _log_y(x, b, loc, scale):
  """(y, b, log y, scale) with y = (x - loc) / scale, promoted; log y clipped at 0.

  The support is y >= 1, checked on y, as SciPy does (loc + scale rounds to loc where scale
  is tiny beside loc). Near y = 1, log y is log1p((x - (loc + scale)) / scale): x - loc
  rounds away the digits of y - 1 there (in float32, (1e-8 - (-1)) / 1 is 1).
  """
  x, b, loc, scale = promote_args_inexact("pareto", x, b, loc, scale)
  y = standardize(x, loc, scale)
  near_one = y < 2
  above_one = (x - (loc + scale)) / scale
  log_y = jnp.where(near_one, jnp.log1p(jnp.maximum(above_one, 0)),
                    jnp.log(jnp.where(near_one, 2, y)))
  # y < 1 where x - loc rounded y up to 1 (in float32, x = -1e-8, loc = -1, scale = 1).
  y = jnp.where(near_one & (above_one < 0), 0, y)
  return y, b, log_y, scale


def logpdf(x, b, loc=0, scale=1):
  """log of the density: log(b) - log(scale) - (b + 1) log y, y = (x - loc) / scale; -inf for
  y < 1, NaN where b is NaN (as in SciPy). Mirrors `jax.scipy.stats.pareto.logpdf`.
  """
  y, b, log_y, scale = _log_y(x, b, loc, scale)
  # log(b) - log(scale), not log(b / scale), which overflows; (b + 1) log y is 0 at y = 1.
  tail = jnp.where(log_y == 0, 0, (b + 1) * log_y)
  log_density = jnp.log(b) - jnp.log(scale) - tail
  return nan_if_any_nan(jnp.where(y < 1, -np.inf, log_density), b)


def pdf(x, b, loc=0, scale=1):
  """The density exp(logpdf(...)). Mirrors `jax.scipy.stats.pareto.pdf`."""
  return jnp.exp(logpdf(x, b, loc, scale))


def _log_sf(y, b, log_y):
  """-b log y, the log of y**(-b), 0 at y = 1 even for b = inf."""
  return jnp.where(log_y == 0, 0, -b * log_y)


def cdf(x, b, loc=0, scale=1):
  """P(X <= x) = 1 - y**(-b) = -expm1(-b log y), y = (x - loc) / scale; 0 for y < 1.

  Mirrors `jax.scipy.stats.pareto.cdf`.
  """
  y, b, log_y, _ = _log_y(x, b, loc, scale)
  return nan_if_any_nan(jnp.where(y < 1, 0, -jnp.expm1(_log_sf(y, b, log_y))), b)


def logcdf(x, b, loc=0, scale=1):
  """log P(X <= x) = log(1 - exp(-b log y)) (log1mexp); -inf for y < 1.

  Mirrors `jax.scipy.stats.pareto.logcdf`.
  """
  y, b, log_y, _ = _log_y(x, b, loc, scale)
  return nan_if_any_nan(jnp.where(y < 1, -np.inf, log1mexp(-_log_sf(y, b, log_y))), b)


def logsf(x, b, loc=0, scale=1):
  """log P(X > x) = -b log y; 0 for y < 1. Mirrors `jax.scipy.stats.pareto.logsf`."""
  y, b, log_y, _ = _log_y(x, b, loc, scale)
  return nan_if_any_nan(jnp.where(y < 1, 0, _log_sf(y, b, log_y)), b)


def sf(x, b, loc=0, scale=1):
  """P(X > x) = exp(logsf(...)). Mirrors `jax.scipy.stats.pareto.sf`."""
  return jnp.exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
  """The quantile function loc + scale * (1 - q)**(-1/b); NaN where q is NaN or outside [0, 1].

  Mirrors `jax.scipy.stats.pareto.ppf`.
  """
  q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
  return nan_unless_probability(q, loc + scale * (1 - q) ** -(1 / b))
