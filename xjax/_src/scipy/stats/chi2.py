"""The chi-square distribution with `df` degrees of freedom (mirrors `jax.scipy.stats.chi2`).

Every function promotes its arguments to a common inexact dtype and
broadcasts them together; `df` and `scale` are not checked, as in JAX.
"""
from __future__ import annotations

import math

import numpy as np

import xjax.numpy as jnp
from xjax._src.scipy import special
from xjax._src.scipy.stats import gamma
from xjax._src.scipy.stats._continuous_util import (log_of_probability, nan_if_any_nan,
                                                       promote_args_inexact, standardize)


def logpdf(x, df, loc=0, scale=1):
  """log of the chi-square density of y = (x - loc) / scale, divided by scale; -inf for x < loc.

  The density is y**(df/2 - 1) exp(-y/2) / (2**(df/2) Gamma(df/2)): the gamma density
  with shape df / 2 and scale 2 scale, computed as gamma.logpdf does (without the
  cancellation of its terms at large df, and exact where y underflows). y = 0 gives
  -log(2 scale) for df = 2, as in SciPy (JAX: NaN, 0 * log 0), and -inf/inf otherwise.
  Arguments broadcast together. Mirrors `jax.scipy.stats.chi2.logpdf`.
  """
  x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
  return gamma._logpdf(x, df / 2, loc, 2 * scale)


def pdf(x, df, loc=0, scale=1):
  """The chi-square density exp(logpdf(...)). Mirrors `jax.scipy.stats.chi2.pdf`."""
  return jnp.exp(logpdf(x, df, loc, scale))


def _half_y(x, loc, scale):
  return jnp.maximum(standardize(x, loc, 2 * scale), 0)


def cdf(x, df, loc=0, scale=1):
  """P(X <= x) = gammainc(df / 2, max(y, 0) / 2), y = (x - loc) / scale.

  Mirrors `jax.scipy.stats.chi2.cdf`.
  """
  x, df, loc, scale = promote_args_inexact("chi2.cdf", x, df, loc, scale)
  return special.gammainc(df / 2, _half_y(x, loc, scale))


def logcdf(x, df, loc=0, scale=1):
  """log(cdf(...)), as log1p(-sf) where the cdf is above 1/2.

  Mirrors `jax.scipy.stats.chi2.logcdf`.
  """
  return log_of_probability(cdf(x, df, loc, scale), sf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
  """P(X > x) = gammaincc(df / 2, max(y, 0) / 2), y = (x - loc) / scale.

  Mirrors `jax.scipy.stats.chi2.sf`.
  """
  x, df, loc, scale = promote_args_inexact("chi2.sf", x, df, loc, scale)
  return special.gammaincc(df / 2, _half_y(x, loc, scale))


def logsf(x, df, loc=0, scale=1):
  """log(sf(...)), as log1p(-cdf) where the sf is above 1/2.

  Mirrors `jax.scipy.stats.chi2.logsf`.
  """
  return log_of_probability(sf(x, df, loc, scale), cdf(x, df, loc, scale))
