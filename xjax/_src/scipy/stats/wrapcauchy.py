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

  `x` and `c` broadcast together; -inf for x outside [0, 2 pi], NaN where x is
  NaN or c is not in (0, 1). Mirrors `jax.scipy.stats.wrapcauchy.logpdf`.
  """
  x, c = promote_args_inexact("wrapcauchy.logpdf", x, c)
  # 1 - c**2 as (1 - c)(1 + c) and 1 + c**2 - 2 c cos x as (1 - c)**2 + 4 c sin(x / 2)**2:
  # both differences rounded to 0 for c near 1 (float32 c = 1 - 1.2e-7 at x = 0 gave inf).
  one_minus_c = 1 - c
  denominator = jnp.square(one_minus_c) + 4 * c * jnp.square(jnp.sin(x / 2))
  log_density = (jnp.log(one_minus_c * (1 + c)) - math.log(2 * math.pi)
                 - jnp.log(denominator))
  on_circle = (x >= 0) & (x <= 2 * np.pi)
  # A NaN x gives NaN, as in SciPy (JAX: -inf).
  return jnp.where((c > 0) & (c < 1) & ~jnp.isnan(x),
                   jnp.where(on_circle, log_density, -np.inf), np.nan)


def pdf(x, c):
  """The density exp(logpdf(x, c)). Mirrors `jax.scipy.stats.wrapcauchy.pdf`."""
  return jnp.exp(logpdf(x, c))
