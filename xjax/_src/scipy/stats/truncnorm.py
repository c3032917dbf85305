"""The normal distribution truncated to [a, b] in standard units.

Mirrors `jax.scipy.stats.truncnorm`.

`a` and `b` bound z = (x - loc) / scale. The functions are jitted, as in
JAX; every one promotes its arguments to a common inexact dtype, broadcasts
them together, and returns NaN where a >= b.
"""
from __future__ import annotations

import numpy as np

import xjax.numpy as jnp
from xjax._src.jit import jit
from xjax._src.nn.functions import logsumexp
from xjax._src.scipy import special
from xjax._src.scipy.stats import norm
from xjax._src.scipy.stats._continuous_util import promote_args_inexact, standardize


def _log_sub_exp(x, y):
  """log(exp(x) - exp(y)) for x >= y; -inf where both are -inf."""
  terms = jnp.stack([x, y])
  signs = jnp.stack([jnp.ones_like(x), -jnp.ones_like(y)])
  return logsumexp(terms, b=signs, axis=0)


def _log_normal_mass(lo, hi):
  """log P(lo <= Z <= hi) for a standard normal Z, accurate when the interval is in a tail.

  Intervals entirely above 0 are mirrored below 0, where log_ndtr is
  accurate; intervals containing 0 use log1p of the two small tail masses.
  """
  lo, hi = jnp.broadcast_arrays(jnp.asarray(lo), jnp.asarray(hi))
  right = lo > 0
  central = ~((hi <= 0) | right)
  tail_lo = jnp.where(right, -hi, lo)
  tail_hi = jnp.where(right, -lo, hi)
  tail_mass = _log_sub_exp(special.log_ndtr(tail_hi), special.log_ndtr(tail_lo))
  central_mass = jnp.log1p(-special.ndtr(lo) - special.ndtr(-hi))
  return jnp.where(central, central_mass, tail_mass)


@jit
def logpdf(x, a, b, loc=0, scale=1):
  """log of the truncated normal density: norm.logpdf(x, loc, scale) - log P(a <= Z <= b).

  -inf where z = (x - loc) / scale is outside [a, b]; NaN where a >= b.
  Mirrors `jax.scipy.stats.truncnorm.logpdf`.
  """
  x, a, b, loc, scale = promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
  z = standardize(x, loc, scale)
  log_density = norm.logpdf(x, loc, scale) - _log_normal_mass(a, b)
  log_density = jnp.where((z < a) | (z > b), -np.inf, log_density)
  return jnp.where(a >= b, np.nan, log_density)


def pdf(x, a, b, loc=0, scale=1):
  """The truncated normal density exp(logpdf(...)). Mirrors `jax.scipy.stats.truncnorm.pdf`."""
  return jnp.exp(logpdf(x, a, b, loc, scale))


@jit
def logcdf(x, a, b, loc=0, scale=1):
  """log P(X <= x): 0 for z >= b, -inf for z <= a, in between from the ratio of normal masses.

  Near 1 (log cdf > -0.1) it is computed as log1p(-sf) for accuracy. As in
  JAX, a NaN `x` gives 0 (no branch applies); a >= b gives NaN. Mirrors
  `jax.scipy.stats.truncnorm.logcdf`.
  """
  x, a, b, loc, scale = promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
  x, a, b = jnp.broadcast_arrays(x, a, b)
  z = standardize(x, loc, scale)
  log_mass = _log_normal_mass(a, b)
  log_cdf = _log_normal_mass(a, z) - log_mass
  log_sf = _log_normal_mass(z, b) - log_mass
  result = jnp.select([z >= b, z <= a, log_cdf > -0.1, z > a],
                      [0, -np.inf, jnp.log1p(-jnp.exp(log_sf)), log_cdf])
  return jnp.where(a >= b, np.nan, result)


@jit
def cdf(x, a, b, loc=0, scale=1):
  """P(X <= x) = exp(logcdf(...)). Mirrors `jax.scipy.stats.truncnorm.cdf`."""
  return jnp.exp(logcdf(x, a, b, loc, scale))


@jit
def logsf(x, a, b, loc=0, scale=1):
  """log P(X > x), as the logcdf of the mirrored distribution at -x.

  Mirrors `jax.scipy.stats.truncnorm.logsf`.
  """
  x, a, b, loc, scale = promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
  return logcdf(-x, -b, -a, -loc, scale)


@jit
def sf(x, a, b, loc=0, scale=1):
  """P(X > x) = exp(logsf(...)). Mirrors `jax.scipy.stats.truncnorm.sf`."""
  return jnp.exp(logsf(x, a, b, loc, scale))
