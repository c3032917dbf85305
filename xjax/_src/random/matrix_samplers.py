"""Samplers built on linear algebra: multivariate_normal and orthogonal.

Both follow JAX's recipes step for step (the same factorization, the same
normal draws, the same products), so with JAX's LAPACK kernels they give
JAX's bits.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from xjax import numpy as jnp  # jnp is fully imported before xjax.random (xjax/__init__.py)
from xjax._src import config
from xjax._src import core
from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.numpy.util import concrete_or_error, promote_dtypes_inexact
from xjax._src.random.distributions import _check_shape, _resharded, normal
from xjax._src.random.keys import check_prng_key

_FACTOR_METHODS = ("svd", "eigh", "cholesky")


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method: str = "cholesky", *,
                        out_sharding=None):
  """Samples from N(mean, cov): ``mean + factor @ z`` with z standard normal.

  Args:
    key: a PRNG key.
    mean: the mean, shape ``(..., n)``.
    cov: positive (semi-)definite covariances, shape ``(..., n, n)``; its batch
      shape broadcasts with mean's.
    shape: the batch shape of the result (default: the broadcast of mean's
      and cov's batch shapes).
    dtype: a float dtype (default: mean's dtype after promotion to inexact).
    method: how ``factor @ factor^T = cov`` is found: 'cholesky' (default),
      or 'eigh' / 'svd' for singular covariances.
    out_sharding: None, or the result's sharding (a NamedSharding, or a PartitionSpec over
      the context mesh).

  Returns:
    Samples of shape ``shape + (n,)``.

  Raises:
    ValueError: an unknown `method`, a non-float `dtype`, mean of rank 0, cov
      of rank below 2 or not ``(..., n, n)``, or a `shape` the parameters do
      not broadcast to.

  Mirrors `jax.random.multivariate_normal`.
  """
  key, _ = check_prng_key("multivariate_normal", key)
  mean, cov = promote_dtypes_inexact(mean, cov)
  if method not in _FACTOR_METHODS:
    raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
  if dtype is None:
    dtype = mean.dtype
  else:
    dtype = dtypes.check_user_dtype_supported(dtype, "multivariate_normal")
  if not dtypes.issubdtype(dtype, np.floating):
    raise ValueError("dtype argument to `multivariate_normal` must be a float dtype, got "
                     f"{np.dtype(dtype)}")
  if shape is not None:
    shape = core.canonicalize_shape(shape)
  return _resharded(_multivariate_normal(key, mean, cov, shape, np.dtype(dtype), method),
                    out_sharding, "multivariate_normal")


@functools.partial(jit, static_argnums=(3, 4, 5))
def _multivariate_normal(key, mean, cov, shape, dtype, method):
  if mean.ndim < 1:
    raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                     f"{mean.ndim}")
  if cov.ndim < 2:
    raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {cov.ndim}")
  n = mean.shape[-1]
  if cov.shape[-2:] != (n, n):
    raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but "
                     f"got cov.shape == {cov.shape}.")
  if shape is None:
    shape = jnp.broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
  else:
    _check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
  if method == "svd":
    u, s, _ = jnp.linalg.svd(cov)
    factor = u * jnp.sqrt(s[..., None, :])
  elif method == "eigh":
    w, v = jnp.linalg.eigh(cov)
    factor = v * jnp.sqrt(w[..., None, :])
  else:
    factor = jnp.linalg.cholesky(cov)
  samples = normal(key, shape + mean.shape[-1:], dtype)
  with config.numpy_rank_promotion("allow"):  # mean broadcasts against the sample axes
    return mean + jnp.einsum("...ij,...j->...i", factor, samples)


def orthogonal(key, n, shape=(), dtype=None, m=None, *, out_sharding=None):
  """Samples from the Haar measure on n x m matrices with orthonormal columns (or rows).

  A QR decomposition of a standard normal matrix, with the signs of R's
  diagonal moved into Q (Mezzadri 2007).

  Args:
    key: a PRNG key.
    n: rows; a concrete int.
    shape: batch dimensions of the result.
    dtype: a float dtype (default float32, float64 with x64).
    m: columns; default `n`.
    out_sharding: None, or the result's sharding (a NamedSharding, or a PartitionSpec over
      the context mesh).

  Returns:
    An array of shape ``(*shape, n, m)``.

  Raises:
    ConcretizationTypeError: traced `n` or `m`.
    ValueError: a dtype that is not float or complex (from `normal`).

  Mirrors `jax.random.orthogonal`.
  """
  shape = core.canonicalize_shape(shape)
  key, _ = check_prng_key("orthogonal", key)
  dtype = np.dtype(dtypes.check_user_dtype_supported(float if dtype is None else dtype,
                                                     "orthogonal"))
  _check_shape("orthogonal", shape)
  context = "The error occurred in jax.random.orthogonal()"
  n = operator.index(concrete_or_error(n, context))
  m = n if m is None else operator.index(concrete_or_error(m, context))
  return _resharded(_orthogonal(key, n, m, shape, dtype), out_sharding, "orthogonal")


@functools.partial(jit, static_argnums=(1, 2, 3, 4))
def _orthogonal(key, n, m, shape, dtype):
  z = normal(key, (*shape, max(n, m), min(n, m)), dtype)
  q, r = jnp.linalg.qr(z)
  d = jnp.linalg.diagonal(r)
  x = q * jnp.expand_dims(jnp.sign(d), -2)
  return x.mT if n < m else x
