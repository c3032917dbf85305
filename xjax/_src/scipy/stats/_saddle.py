"""Cancellation-free pieces of log densities with large shape parameters or counts.

`(a - 1) log y - y - gammaln(a)` (gamma), `k log mu - mu - gammaln(k + 1)` (Poisson) and
the lgamma differences of the binomial-type pmfs each subtract numbers of size a log a
whose difference is O(log a): in float32 at a = 1e8 nothing of it is left. Written with
Stirling's error term and the deviance `bd0` (the saddle-point form of C. Loader, "Fast
and accurate computation of binomial probabilities", 2000) each piece is small and exact.
"""
from __future__ import annotations

import math

import numpy as np

import xjax.numpy as jnp
from xjax._src.scipy import special

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_SERIES_FROM = 10.0


def stirlerr(x):
  """log(x!) - log(sqrt(2 pi x) (x / e)**x) = lgamma(x + 1) - (x + 1/2) log x + x - log(2 pi)/2.

  The asymptotic series for x >= 10 (its next term is below 3e-17 there), the definition
  below. 0 at x = inf.
  """
  big = x >= _SERIES_FROM
  inv = 1 / jnp.where(big, x, _SERIES_FROM)
  inv2 = inv * inv
  series = inv * (1 / 12 - inv2 * (1 / 360 - inv2 * (1 / 1260 - inv2 * (
      1 / 1680 - inv2 * (1 / 1188 - inv2 * (691 / 360360 - inv2 / 156))))))
  xd = jnp.where(big, 1, x)
  direct = special.gammaln(xd + 1) - (xd + 0.5) * jnp.log(xd) + xd - _HALF_LOG_2PI
  return jnp.where(big, series, direct)


def bd0(x, m, log_m=None):
  """The deviance x log(x / m) + m - x >= 0, without cancellation where x is close to m.

  For |x - m| < (x + m) / 10 it is (x - m) v + 2 x (v**3/3 + v**5/5 + ...), v = (x - m) /
  (x + m); elsewhere the definition, with log(x / m) as log x - log_m where x / m is not a
  normal number (`log_m`, log m, may be given where m itself underflowed). bd0(0, m) = m.
  """
  if log_m is None:
    log_m = jnp.log(m)
  half_diff = x / 2 - m / 2
  half_sum = x / 2 + m / 2
  near = jnp.abs(half_diff) < half_sum / 10
  v = jnp.where(near, half_diff / jnp.where(near, half_sum, 1), 0)
  v2 = v * v
  total = 2 * half_diff * v
  term = 2 * x * v
  for j in range(1, 12):
    term = term * v2
    total = total + term / (2 * j + 1)
  ratio = x / m
  normal = (ratio > np.finfo(np.float32).tiny) & (ratio < np.inf)
  log_ratio = jnp.where(normal, jnp.log(jnp.where(normal, ratio, 1)), jnp.log(x) - log_m)
  far = jnp.where(x == 0, m, x * log_ratio + (m - x))
  return jnp.where(near, total, far)


def log_poisson_pmf(y, mu):
  """log(mu**y exp(-mu) / y!) = -stirlerr(y) - bd0(y, mu) - log(2 pi y) / 2 for y > 0, -mu at
  y = 0 (for y >= 0; the caller checks the support)."""
  positive = y > 0
  yp = jnp.where(positive, y, 1)
  saddle = -stirlerr(yp) - bd0(yp, mu) - 0.5 * jnp.log(yp) - _HALF_LOG_2PI
  return jnp.where(positive, saddle, -mu)


def log_binom_pmf(y, n, p):
  """log(C(n, y) p**y (1 - p)**(n - y)) for 0 <= y <= n, in Loader's saddle-point form

  stirlerr(n) - stirlerr(y) - stirlerr(n - y) - bd0(y, n p) - bd0(n - y, n q)
  + log(n / (2 pi y (n - y))) / 2, q = 1 - p; at y = 0 it is n log1p(-p) and at y = n
  n log p (0 where the power is 0**0). Each term is small where the lgamma difference
  log C(n, y) cancelled (binom.logpmf(1, 1e8, 1e-8) lost 2e-7 in float64).
  """
  q = 1 - p
  m = n - y
  inner = (y > 0) & (m > 0)
  yi = jnp.where(inner, y, 1)
  mi = jnp.where(inner, m, 1)
  ni = jnp.where(inner, n, 2)
  saddle = (stirlerr(ni) - stirlerr(yi) - stirlerr(mi) - bd0(yi, ni * p) - bd0(mi, ni * q)
            + 0.5 * (jnp.log(ni) - jnp.log(yi) - jnp.log(mi)) - _HALF_LOG_2PI)
  at_zero = jnp.where(n == 0, 0, n * jnp.log1p(-p))
  at_n = jnp.where(n == 0, 0, n * jnp.log(p))
  return jnp.where(inner, saddle, jnp.where(y == 0, at_zero, at_n))
