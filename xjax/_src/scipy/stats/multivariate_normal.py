"""The multivariate normal distribution N(mean, cov).

Mirrors `jax.scipy.stats.multivariate_normal`.
"""
from __future__ import annotations

import functools
import math

import xjax.numpy as jnp
from xjax._src.lax.linalg.cholesky import cholesky
from xjax._src.lax.linalg.triangular_solve import triangular_solve
from xjax._src.scipy.stats._continuous_util import promote_dtypes_inexact

# Solves L y = b for a lower-triangular L, batched over leading dimensions.
_forward_substitute = jnp.vectorize(
    functools.partial(triangular_solve, lower=True, transpose_a=True),
    signature="(n,n),(n)->(n)")


def logpdf(x, mean, cov, allow_singular: None = None):
  """log of the multivariate normal density at `x`.

  Args:
    x: points, shape ``(..., n)`` (or any shape when `mean` is a scalar).
    mean: the mean, shape ``(..., n)``, or a scalar for a univariate normal
      evaluated elementwise.
    cov: the covariance: a scalar (times the identity), or a positive
      definite matrix of shape ``(..., n, n)``, factored by Cholesky.
    allow_singular: must be None, as in JAX.

  Returns:
    an array of the broadcast batch shape ``x.shape[:-1]`` (elementwise for a
    scalar `mean`) in the promoted inexact dtype. A covariance that is not
    positive definite gives NaN.

  Raises NotImplementedError when `allow_singular` is not None; ValueError
  when `cov` is a matrix whose trailing shape is not ``(n, n)``. Mirrors
  `jax.scipy.stats.multivariate_normal.logpdf`.
  """
  if allow_singular is not None:
    raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
  x, mean, cov = promote_dtypes_inexact(x, mean, cov)
  log_2pi = math.log(2 * math.pi)  # a Python float: weakly typed
  if not mean.shape:
    return -(jnp.square(x - mean) / cov + log_2pi + jnp.log(cov)) / 2
  n = mean.shape[-1]
  if not cov.shape:
    diff = x - mean
    return -(jnp.einsum("...i,...i->...", diff, diff) / cov + n * (log_2pi + jnp.log(cov))) / 2
  if cov.ndim < 2 or cov.shape[-2:] != (n, n):
    raise ValueError("multivariate_normal.logpdf got incompatible shapes")
  chol = cholesky(cov)
  y = _forward_substitute(chol, x - mean)
  half_log_det = jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
  return -jnp.einsum("...i,...i->...", y, y) / 2 - n * log_2pi / 2 - half_log_det


def pdf(x, mean, cov):
  """The multivariate normal density exp(logpdf(x, mean, cov)); shapes and errors as `logpdf`.

  Mirrors `jax.scipy.stats.multivariate_normal.pdf`.
  """
  return jnp.exp(logpdf(x, mean, cov))
