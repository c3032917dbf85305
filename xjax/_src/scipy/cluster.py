"""Vector quantization (mirrors `jax.scipy.cluster.vq`)."""
from __future__ import annotations

import xjax.numpy as jnp
from xjax._src.numpy.util import check_arraylike, promote_dtypes_inexact


def vq(obs, code_book, check_finite: bool = True):
  """Assigns each observation to the nearest code (in Euclidean distance) of a code book.

  Args:
    obs: observations, shape ``(M, N)`` (one row per observation), or ``(M,)``
      for M observations of length 1.
    code_book: codes, shape ``(K, N)``, or ``(K,)`` for K codes of length 1;
      the same rank as `obs`. Both are promoted to a common inexact dtype.
    check_finite: unused (kept for SciPy's signature).

  Returns:
    ``(code, dist)``: ``code`` an integer array ``(M,)`` of indices into
    `code_book` (the first on ties), ``dist`` an array ``(M,)`` of the
    Euclidean distances from each observation to its code.

  Raises:
    TypeError: `obs` or `code_book` is not array-like.
    ValueError: the ranks differ, or are not 1 or 2.

  Mirrors `jax.scipy.cluster.vq.vq`.
  """
  del check_finite  # unused, as in JAX
  check_arraylike("scipy.cluster.vq.vq", obs, code_book)
  obs, code_book = (jnp.asarray(a) for a in promote_dtypes_inexact(obs, code_book))
  if obs.ndim != code_book.ndim:
    raise ValueError("Observation and code_book should have the same rank")
  if obs.ndim == 1:
    obs, code_book = obs[:, None], code_book[:, None]
  if obs.ndim != 2:
    raise ValueError("ndim different than 1 or 2 are not supported")
  dist = jnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
  code = jnp.argmin(dist, axis=-1)
  return code, jnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]
