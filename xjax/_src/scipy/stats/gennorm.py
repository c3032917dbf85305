"""The generalized normal distribution with shape `beta` (mirrors `jax.scipy.stats.gennorm`).

As in JAX, these functions take no `loc` or `scale`.
"""
from __future__ import annotations

import xjax.numpy as jnp
from xjax._src.scipy import special
from xjax._src.scipy.stats._continuous_util import promote_args_inexact


def logpdf(x, beta):
  """log of the density beta / (2 Gamma(1/beta)) exp(-|x|**beta).

  `x` and `beta` broadcast together; the result has the promoted inexact
  dtype. Mirrors `jax.scipy.stats.gennorm.logpdf`.
  """
  x, beta = promote_args_inexact("gennorm.logpdf", x, beta)
  return jnp.log(beta / 2) - special.gammaln(1 / beta) - jnp.abs(x) ** beta


def pdf(x, beta):
  """The density exp(logpdf(x, beta)). Mirrors `jax.scipy.stats.gennorm.pdf`."""
  return jnp.exp(logpdf(x, beta))


def cdf(x, beta):
  """P(X <= x) = (1 + sign(x) gammainc(1/beta, |x|**beta)) / 2.

  Mirrors `jax.scipy.stats.gennorm.cdf`.
  """
  x, beta = promote_args_inexact("gennorm.cdf", x, beta)
  return (1 + jnp.sign(x) * special.gammainc(1 / beta, jnp.abs(x) ** beta)) / 2
