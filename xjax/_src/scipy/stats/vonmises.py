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
  log_density = kappa * (jnp.cos(x) - 1) - jnp.log(2 * np.pi * special.i0e(kappa))
  return jnp.where(kappa > 0, log_density, np.nan)


def pdf(x, kappa):
  """The density exp(logpdf(x, kappa)). Mirrors `jax.scipy.stats.vonmises.pdf`."""
  return jnp.exp(logpdf(x, kappa))
