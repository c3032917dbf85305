"""The gamma distribution with shape `a` (mirrors `jax.scipy.stats.gamma`).

Every function promotes its arguments to a common inexact dtype and
broadcasts them together; `a` and `scale` are not checked, as in JAX.
"""
from __future__ import annotations

import numpy as np

import xjax.numpy as jnp
from xjax._src.scipy import special
from xjax._src.scipy.stats import _saddle
from xjax._src.scipy.stats._continuous_util import (log_of_probability, nan_if_any_nan,
                                                       promote_args_inexact, standardize)


def logpdf(x, a, loc=0, scale=1):
  """log of the gamma density: (a - 1) log y - y - gammaln(a) - log(scale), y = (x - loc) / scale.

  -inf for x < loc; at y = 0 the term (a - 1) log y is 0 for a = 1, so the
  derivative stays finite there. NaN where any argument is NaN, as in SciPy
  (JAX gives -inf at a NaN x). Arguments broadcast together.
  Mirrors `jax.scipy.stats.gamma.logpdf`.
  """
  x, a, loc, scale = promote_args_inexact("gamma.logpdf", x, a, loc, scale)
  return _logpdf(x, a, loc, scale)


def _logpdf(x, a, loc, scale):
  """gamma.logpdf on promoted arguments (chi2.logpdf's too).

  For a >= 10 in the saddle-point form -bd0(a, y) + log(a) / 2 - log y - log(2 pi) / 2 -
  stirlerr(a): the terms of the direct form, of size a log a, cancel to O(log a) (in
  float32 at a = y = 1e8 nothing was left). log y is log(x - loc) - log(scale) where y
  is below 1e-20 (y underflows to 0 long before its log does).
  """
  inside = x >= loc
  y = jnp.where(inside, standardize(x, loc, scale), 1)  # keeps the gradient finite outside
  tiny = y < 1e-20
  log_y = jnp.where(tiny, jnp.log(jnp.where(inside, x - loc, 1)) - jnp.log(scale),
                    jnp.log(jnp.where(tiny, 1, y)))
  small_a = a < _saddle._SERIES_FROM
  a_small = jnp.where(small_a, a, 1)
  direct = (jnp.where(a_small == 1, 0, (a_small - 1) * log_y) - y - special.gammaln(a_small))
  a_big = jnp.where(small_a, _saddle._SERIES_FROM, a)
  saddle = (-_saddle.bd0(a_big, y, log_y) + 0.5 * jnp.log(a_big) - log_y - _saddle._HALF_LOG_2PI
            - _saddle.stirlerr(a_big))
  # At y = 0 or a = inf (y finite) the density is 0 for a >= 10, where the saddle form is NaN
  # (a = y = inf stays NaN, as in SciPy).
  saddle = jnp.where((log_y == -np.inf) | ((a == np.inf) & (y < np.inf)), -np.inf, saddle)
  log_density = jnp.where(small_a, direct, saddle) - jnp.log(scale)
  return nan_if_any_nan(jnp.where(inside, log_density, -np.inf), x, a, loc, scale)


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
