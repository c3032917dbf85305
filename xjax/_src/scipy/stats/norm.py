"""The normal distribution N(loc, scale**2) (mirrors `jax.scipy.stats.norm`).

Every function promotes its arguments to a common inexact dtype and
broadcasts them together. `scale` is not checked: scale <= 0 gives whatever
the formulas give, as in JAX.
"""
from __future__ import annotations

import numpy as np

import xjax.numpy as jnp
from xjax._src.scipy import special
from xjax._src.scipy.stats._continuous_util import promote_args_inexact, standardize


def logpdf(x, loc=0, scale=1):
  """log of the normal density at `x`: -((x - loc)**2 / scale**2 + log(2 pi scale**2)) / 2.

  `x`, `loc`, `scale` are array-likes that broadcast together; the result has
  their broadcast shape and promoted inexact dtype. Raises TypeError for
  non-array arguments. Mirrors `jax.scipy.stats.norm.logpdf`.
  """
  x, loc, scale = promote_args_inexact("norm.logpdf", x, loc, scale)
  # In z = (x - loc) / scale, not (x - loc)**2 / scale**2: scale**2 underflows to 0 (or
  # overflows) long before z does, and then inf / 0 or log(0) give NaN or the wrong infinity.
  z = standardize(x, loc, scale)
  return -(jnp.square(z) + float(np.log(2 * np.pi))) / 2 - jnp.log(scale)


def pdf(x, loc=0, scale=1):
  """The normal density at `x`: exp(logpdf(x, loc, scale)). Mirrors `jax.scipy.stats.norm.pdf`."""
  return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
  """The normal CDF P(X <= x) = ndtr((x - loc) / scale), broadcast over the arguments.

  Mirrors `jax.scipy.stats.norm.cdf`.
  """
  x, loc, scale = promote_args_inexact("norm.cdf", x, loc, scale)
  return special.ndtr(standardize(x, loc, scale))


def logcdf(x, loc=0, scale=1):
  """log P(X <= x) = log_ndtr((x - loc) / scale), accurate far into the lower tail.

  Mirrors `jax.scipy.stats.norm.logcdf`.
  """
  x, loc, scale = promote_args_inexact("norm.logcdf", x, loc, scale)
  return special.log_ndtr(standardize(x, loc, scale))


def sf(x, loc=0, scale=1):
  """The survival function P(X > x) = ndtr((loc - x) / scale). Mirrors `jax.scipy.stats.norm.sf`."""
  x, loc, scale = promote_args_inexact("norm.sf", x, loc, scale)
  return special.ndtr(standardize(loc, x, scale))


def logsf(x, loc=0, scale=1):
  """log P(X > x) = log_ndtr((loc - x) / scale). Mirrors `jax.scipy.stats.norm.logsf`."""
  x, loc, scale = promote_args_inexact("norm.logsf", x, loc, scale)
  return special.log_ndtr(standardize(loc, x, scale))


def ppf(q, loc=0, scale=1):
  """The quantile function: loc + scale * ndtri(q); -inf at q=0, inf at q=1, NaN outside [0, 1].

  `q` must be float32 or float64 (ndtri's requirement, raises TypeError
  otherwise). The result is converted to the default float dtype (float64
  under x64, else float32), as in JAX. Mirrors `jax.scipy.stats.norm.ppf`.
  """
  return jnp.asarray(special.ndtri(q) * scale + loc, float)


def isf(q, loc=0, scale=1):
  """The inverse survival function: ppf(1 - q, loc, scale). Mirrors `jax.scipy.stats.norm.isf`."""
  return ppf(1 - jnp.asarray(q), loc, scale)
