"""The Dirichlet distribution on the probability simplex (mirrors `jax.scipy.stats.dirichlet`)."""
from __future__ import annotations

import numpy as np

import xjax.numpy as jnp
from xjax._src.scipy import special
from xjax._src.scipy.stats._continuous_util import promote_dtypes_inexact


def _on_simplex(x):
  """Whether each column x[:, ...] is strictly positive and sums to 1 within 1e-6."""
  return jnp.all(x > 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) < 1e-6)


def logpdf(x, alpha):
  """log of the Dirichlet density sum_i (alpha_i - 1) log x_i - log B(alpha).

  Args:
    x: array of shape ``(K, ...)`` or ``(K - 1, ...)``: points on the simplex
      along axis 0 (with K - 1 entries the last one is 1 - sum of the others).
    alpha: concentration parameters, shape ``(K,)``.

  Returns:
    an array of shape ``x.shape[1:]`` and the promoted inexact dtype; -inf
    where a point is not on the simplex (an entry <= 0, or a sum off 1 by
    1e-6 or more).

  Raises ValueError when `alpha` is not one-dimensional or x.shape[0] is
  neither K nor K - 1. Mirrors `jax.scipy.stats.dirichlet.logpdf`.
  """
  x, alpha = promote_dtypes_inexact(x, alpha)
  if alpha.ndim != 1:
    raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
  k = alpha.shape[0]
  if x.shape[0] not in (k, k - 1):
    raise ValueError("`x` must have either the same number of entries as `alpha` "
                     f"or one entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
  if x.shape[0] == k - 1:
    x = jnp.concatenate([x, 1 - jnp.sum(x, axis=0, keepdims=True)], axis=0)
  log_beta = jnp.sum(special.gammaln(alpha)) - special.gammaln(jnp.sum(alpha))
  alpha = alpha.reshape(alpha.shape + (1,) * (x.ndim - 1))  # broadcast along axis 0
  log_density = jnp.sum(special.xlogy(alpha - 1, x), axis=0) - log_beta
  return jnp.where(_on_simplex(x), log_density, -np.inf)


def pdf(x, alpha):
  """The Dirichlet density exp(logpdf(x, alpha)); same shapes and errors as `logpdf`.

  Mirrors `jax.scipy.stats.dirichlet.pdf`.
  """
  return jnp.exp(logpdf(x, alpha))
