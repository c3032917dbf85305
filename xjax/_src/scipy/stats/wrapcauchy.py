"""The wrapped Cauchy distribution on [0, 2 pi] with shape `c`.

Mirrors `jax.scipy.stats.wrapcauchy`.
"""
from __future__ import annotations

import math

import numpy as np

import xjax.numpy as jnp
from xjax._src.scipy.stats._continuous_util import promote_args_inexact


def logpdf(x, c):
  """log of the density (1 - c**2) / (2 pi (1 + c**2 - 2 c cos x)).

  `x` and `c` broadcast together; -inf for x outside [0, 2 pi], NaN unless
  0 < c < 1. Mirrors `jax.scipy.stats.wrapcauchy.logpdf`.
  """
  x, c = promote_args_inexact("wrapcauchy.logpdf", x, c)
  log_density = jnp.log(1 - c * c) - math.log(2 * math.pi) - jnp.log(1 + c * c - 2 * c * jnp.cos(x))
  on_circle = (x >= 0) & (x <= 2 * np.pi)
  return jnp.where((c > 0) & (c < 1), jnp.where(on_circle, log_density, -np.inf), np.nan)


def pdf(x, c):
  """The density exp(logpdf(x, c)). Mirrors `jax.scipy.stats.wrapcauchy.pdf`."""
  return jnp.exp(logpdf(x, c))
