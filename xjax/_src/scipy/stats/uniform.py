"""The uniform distribution on [loc, loc + scale] (mirrors `jax.scipy.stats.uniform`).

Every function promotes its arguments to a common inexact dtype and
broadcasts them together; `scale` is not checked, as in JAX.
"""
from __future__ import annotations

import numpy as np

import xjax.numpy as jnp
from xjax._src.scipy.stats._continuous_util import (nan_unless_probability, promote_args_inexact,
                                                    standardize)


def logpdf(x, loc=0, scale=1):
  """-log(scale) on [loc, loc + scale], -inf outside it.

  Mirrors `jax.scipy.stats.uniform.logpdf`.
  """
  x, loc, scale = promote_args_inexact("uniform.logpdf", x, loc, scale)
  # The support is checked on z = (x - loc) / scale in [0, 1], as SciPy does (loc + scale
  # rounds to loc or to scale when their magnitudes differ widely), and on x < loc, where
  # z can round to -0.
  z = standardize(x, loc, scale)
  return jnp.where((x < loc) | (z < 0) | (z > 1), -np.inf, -jnp.log(scale) + 0 * z)


def pdf(x, loc=0, scale=1):
  """The density exp(logpdf(...)). Mirrors `jax.scipy.stats.uniform.pdf`."""
  return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
  """P(X <= x) = z = (x - loc) / scale clipped to [0, 1]; NaN where an argument is NaN.

  A NaN `x` gives NaN, as in SciPy (JAX gives 0 there). Mirrors `jax.scipy.stats.uniform.cdf`.
  """
  x, loc, scale = promote_args_inexact("uniform.cdf", x, loc, scale)
  z = standardize(x, loc, scale)
  return jnp.where(z < 0, 0, jnp.where(z > 1, 1, z))


def ppf(q, loc=0, scale=1):
  """The quantile function loc + scale * q; NaN where q is NaN or outside [0, 1].

  Mirrors `jax.scipy.stats.uniform.ppf`.
  """
  q, loc, scale = promote_args_inexact("uniform.ppf", q, loc, scale)
  return nan_unless_probability(q, loc + scale * q)
