"""The Laplace (double exponential) distribution (mirrors `jax.scipy.stats.laplace`).

Every function promotes its arguments to a common inexact dtype and
broadcasts them together; `scale` is not checked, as in JAX.
"""
from __future__ import annotations

import xjax.numpy as jnp
from xjax._src.scipy.stats._continuous_util import promote_args_inexact, standardize


def logpdf(x, loc=0, scale=1):
  """log of the density: -|x - loc| / scale - log(2 scale).

  Mirrors `jax.scipy.stats.laplace.logpdf`.
  """
  x, loc, scale = promote_args_inexact("laplace.logpdf", x, loc, scale)
  return -(jnp.abs(standardize(x, loc, scale)) + jnp.log(2 * scale))


def pdf(x, loc=0, scale=1):
  """The density exp(logpdf(...)). Mirrors `jax.scipy.stats.laplace.pdf`."""
  return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
  """P(X <= x): exp(z) / 2 for z <= 0, else 1 - exp(-z) / 2, z = (x - loc) / scale.

  Mirrors `jax.scipy.stats.laplace.cdf`.
  """
  x, loc, scale = promote_args_inexact("laplace.cdf", x, loc, scale)
  z = standardize(x, loc, scale)
  return jnp.where(z <= 0, jnp.exp(z) / 2, 1 - jnp.exp(-z) / 2)
