"""Student's t distribution with `df` degrees of freedom (mirrors `jax.scipy.stats.t`)."""
from __future__ import annotations

import numpy as np

import xjax.numpy as jnp
from xjax._src.scipy import special
from xjax._src.scipy.stats._continuous_util import promote_args_inexact, standardize


def logpdf(x, df, loc=0, scale=1):
  """log of the t density of z = (x - loc) / scale, divided by scale.

  The density is Gamma((df+1)/2) / (Gamma(df/2) sqrt(pi df) scale)
  (1 + z**2/df)**(-(df+1)/2). Arguments broadcast together and promote to an
  inexact dtype; `df` and `scale` are not checked, as in JAX. Mirrors
  `jax.scipy.stats.t.logpdf`.
  """
  x, df, loc, scale = promote_args_inexact("t.logpdf", x, df, loc, scale)
  z = standardize(x, loc, scale)
  half_df = df / 2
  half_df_plus_half = half_df + 0.5
  log_norm = (special.gammaln(half_df) - special.gammaln(half_df_plus_half)
              + jnp.log(np.pi * scale * scale * df) / 2)
  return -(log_norm + half_df_plus_half * jnp.log1p(z * z / df))


def pdf(x, df, loc=0, scale=1):
  """The t density exp(logpdf(...)). Mirrors `jax.scipy.stats.t.pdf`."""
  return jnp.exp(logpdf(x, df, loc, scale))
