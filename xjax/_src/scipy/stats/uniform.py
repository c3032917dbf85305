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
  return jnp.where((x < loc) | (x > loc + scale), -np.inf, -jnp.log(scale))


def pdf(x, loc=0, scale=1):
  """The density exp(logpdf(...)). Mirrors `jax.scipy.stats.uniform.pdf`."""
  return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
  """P(X <= x): 0 below loc, (x - loc) / scale on [loc, loc + scale], 1 above.

  As in JAX, a NaN `x` (which is in none of the three ranges) gives 0.
  Mirrors `jax.scipy.stats.uniform.cdf`.
  """
  x, loc, scale = promote_args_inexact("uniform.cdf", x, loc, scale)
  upper = loc + scale
  inside = (x >= loc) & (x <= upper)
  return jnp.select([x < loc, x > upper, inside],
                    [jnp.zeros_like(x), jnp.ones_like(x), standardize(x, loc, scale)])


def ppf(q, loc=0, scale=1):
  """The quantile function loc + scale * q; NaN where q is NaN or outside [0, 1].

  Mirrors `jax.scipy.stats.uniform.ppf`.
  """
  q, loc, scale = promote_args_inexact("uniform.ppf", q, loc, scale)
  return nan_unless_probability(q, loc + scale * q)
