"""The von Mises distribution on the circle, with concentration `kappa`.

Mirrors `jax.scipy.stats.vonmises`.
"""
from __future__ import annotations

import numpy as np

import xjax.numpy as jnp
from xjax._src.scipy import special
from xjax._src.scipy.stats._continuous_util import promote_args_inexact


def logpdf(x, kappa):
  """log of the density exp(kappa cos x) / (2 pi I0(kappa)), via i0e for large kappa.

  `x` (an angle, any real) and `kappa` broadcast together; NaN where
  kappa <= 0. Mirrors `jax.scipy.stats.vonmises.logpdf`.
  """
  x, kappa = promote_args_inexact("vonmises.logpdf", x, kappa)
  # cos x - 1 as -2 sin(x / 2)**2: the difference rounds to 0 for |x| < 1e-8 (float64),
  # which a large kappa multiplies (at kappa = 1e30, x = 1e-8 the log density is -5e13).
  cos_minus_one = -2 * jnp.square(jnp.sin(x / 2))
  log_density = kappa * cos_minus_one - jnp.log(2 * np.pi * special.i0e(kappa))
  return jnp.where(kappa > 0, log_density, np.nan)


def pdf(x, kappa):
  """The density exp(logpdf(x, kappa)). Mirrors `jax.scipy.stats.vonmises.pdf`."""
  return jnp.exp(logpdf(x, kappa))
