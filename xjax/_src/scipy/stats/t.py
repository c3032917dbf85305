"""Student's t distribution with `df` degrees of freedom (mirrors `jax.scipy.stats.t`)."""
from __future__ import annotations

import math

import numpy as np

import xjax.numpy as jnp
from xjax._src.scipy import special
from xjax._src.scipy.stats._continuous_util import promote_args_inexact, standardize

# Stirling's series past log Gamma(x) ~ (x - 1/2) log x - x + log(2 pi) / 2, truncated at
# x**-9: its error at x >= 10 is below 2e-14, and the direct lgamma difference would lose
# log Gamma(df / 2) * eps to cancellation (all digits in float32 by df = 1e8).
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188)
_ASYMPTOTIC_HALF_DF = 10


def _stirling_remainder(x):
  """The sum of `_STIRLING` terms c_k x**-(2k+1), for x >= `_ASYMPTOTIC_HALF_DF`."""
  inv_x2 = 1 / (x * x)
  total = jnp.zeros_like(x)
  for c in reversed(_STIRLING):
    total = total * inv_x2 + c
  return total / x


def _log_norm(df):
  """log(Gamma(df/2) sqrt(pi df) / Gamma((df+1)/2)), tending to log(2 pi) / 2 as df -> inf.

  For df/2 = h >= 10 it is log(2 pi) / 2 - [h log1p(1/(2h)) - 1/2 + R(h + 1/2) - R(h)], with
  R Stirling's remainder: every term is O(1/h), so nothing cancels.
  """
  half_df = df / 2
  direct = (special.gammaln(half_df) - special.gammaln(half_df + 0.5)
            + jnp.log(np.pi * df) / 2)
  large = half_df >= _ASYMPTOTIC_HALF_DF
  h = jnp.where(large & (half_df < np.inf), half_df, _ASYMPTOTIC_HALF_DF)
  u = 0.5 / h  # h log1p(u) - 1/2 = (log1p(u) / u - 1) / 2; u underflows to 0 for h near max
  log1p_ratio = jnp.where(u == 0, 1, jnp.log1p(u) / jnp.where(u == 0, 1, u))
  shift = (log1p_ratio - 1) / 2 + (_stirling_remainder(h + 0.5) - _stirling_remainder(h))
  shift = jnp.where(half_df == np.inf, 0, shift)
  return jnp.where(large, math.log(2 * math.pi) / 2 - shift, direct)


def _half_df_plus_half_log1p(z, df):
  """(df + 1)/2 * log1p(z**2 / df), without overflow in z**2 and with its limit z**2 / 2 at df = inf."""
  r = jnp.abs(z) / jnp.sqrt(df)  # w = z**2 / df = r**2
  small = r <= 1
  w = jnp.where(small, r * r, 1)
  ratio = jnp.where(w == 0, 1, jnp.log1p(w) / w)  # log1p(w) / w -> 1 as w -> 0
  near = z * z / 2 * (1 + 1 / df) * ratio
  inv_r = jnp.where(small, 1, 1 / r)
  # for w > 1: log1p(w) = 2 log|z| - log(df) + log1p(1 / w)
  far = (df + 1) / 2 * (2 * jnp.log(jnp.abs(z)) - jnp.log(df) + jnp.log1p(inv_r * inv_r))
  return jnp.where(df == np.inf, z * z / 2, jnp.where(small, near, far))


def logpdf(x, df, loc=0, scale=1):
  """log of the t density of z = (x - loc) / scale, divided by scale.

  The density is Gamma((df+1)/2) / (Gamma(df/2) sqrt(pi df) scale)
  (1 + z**2/df)**(-(df+1)/2). Accurate for large df (the normal density is the
  limit at df = inf) and for huge z. Arguments broadcast together and promote
  to an inexact dtype; `df` and `scale` are not checked, as in JAX. Mirrors
  `jax.scipy.stats.t.logpdf`.
  """
  x, df, loc, scale = promote_args_inexact("t.logpdf", x, df, loc, scale)
  z = standardize(x, loc, scale)
  return -(_log_norm(df) + jnp.log(scale) + _half_df_plus_half_log1p(z, df))


def pdf(x, df, loc=0, scale=1):
  """The t density exp(logpdf(...)). Mirrors `jax.scipy.stats.t.pdf`."""
  return jnp.exp(logpdf(x, df, loc, scale))
