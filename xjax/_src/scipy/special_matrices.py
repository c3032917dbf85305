"""SciPy's special matrices on xjax arrays (the constructors of `jax.scipy.linalg`).

Toeplitz, Hankel, circulant, Leslie, companion and Fiedler matrices take
leading batch dimensions (their vector arguments are vectorized); Hilbert,
Pascal, Helmert, Hadamard and DFT matrices are built from a static size.
Values and dtypes follow JAX's, which builds Pascal matrices in float32 and
binomial coefficients through log-gamma.
"""
from __future__ import annotations

import math
import operator
from functools import partial

import numpy as np

from xjax import lax
from xjax import numpy as jnp  # jnp is fully imported before xjax.scipy loads (lazily)
from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.numpy.util import check_arraylike, promote_args_inexact, promote_dtypes
from xjax._src.numpy.vectorize import vectorize


# ----------------------------------------------------------------------------
# Special matrices


def toeplitz(c, r=None):
  """The Toeplitz matrix with first column `c` and first row `r`.

  Args:
    c: the first column, shape ``(..., m)`` (a scalar is taken as ``(1,)``).
    r: the first row ``(..., n)`` (its first entry is ignored); default
      ``conj(c)``, giving a Hermitian matrix. Batch dims broadcast with `c`'s.

  Returns:
    ``T[..., i, j] = c[..., i - j]`` for ``i >= j`` and ``r[..., j - i]`` above,
    shape ``(..., m, n)``, of the promoted dtype.

  Mirrors `jax.scipy.linalg.toeplitz`.
  """
  if r is None:
    check_arraylike("toeplitz", c)
    r = jnp.conjugate(jnp.asarray(c))
  else:
    check_arraylike("toeplitz", c, r)
  return _toeplitz(jnp.atleast_1d(jnp.asarray(c)), jnp.atleast_1d(jnp.asarray(r)))


@partial(vectorize, signature="(m),(n)->(m,n)")
def _toeplitz(c, r):
  m, = c.shape
  n, = r.shape
  if m == 0 or n == 0:
    return jnp.empty((m, n), dtype=jnp.promote_types(c.dtype, r.dtype))
  # [c[m-1], ..., c[1], c[0], r[1], ..., r[n-1]]: entry (i, j) sits at m - 1 - i + j.
  elems = jnp.concatenate((c[::-1], r[1:]))
  return elems[(m - 1) - jnp.arange(m)[:, None] + jnp.arange(n)[None, :]]


def hankel(c, r=None):
  """The Hankel matrix with first column `c` and last row `r`.

  Args:
    c: the first column, shape ``(..., m)``.
    r: the last row ``(..., n)`` (its first entry is ignored); default zeros
      like `c`. Batch dims broadcast with `c`'s.

  Returns:
    ``H[..., i, j] = c[i + j]`` for ``i + j < m``, else ``r[i + j - m + 1]``,
    shape ``(..., m, n)``.

  Raises:
    ValueError: `c` or `r` is a scalar.

  Mirrors `jax.scipy.linalg.hankel`.
  """
  if r is None:
    check_arraylike("hankel", c)
    c = jnp.asarray(c)
    r = jnp.zeros_like(c)
  else:
    check_arraylike("hankel", c, r)
    c, r = jnp.asarray(c), jnp.asarray(r)
  if c.ndim == 0:
    raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
  if r.ndim == 0:
    raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
  if c.ndim < r.ndim:
    c = lax.expand_dims(c, range(r.ndim - c.ndim))
  elif r.ndim < c.ndim:
    r = lax.expand_dims(r, range(c.ndim - r.ndim))
  return _hankel(c, r)


@partial(vectorize, signature="(m),(n)->(m,n)")
def _hankel(c, r):
  m, = c.shape
  n, = r.shape
  if m == 0 or n == 0:
    return jnp.empty((m, n), dtype=jnp.result_type(c, r))
  elems = jnp.concatenate((c, r[1:]))
  return elems[jnp.arange(m)[:, None] + jnp.arange(n)[None, :]]


def circulant(c):
  """The circulant matrix with first column `c`.

  Args:
    c: shape ``(..., n)`` (a scalar is taken as ``(1,)``).

  Returns:
    ``C[..., i, j] = c[..., (i - j) % n]``, shape ``(..., n, n)``.

  Mirrors `jax.scipy.linalg.circulant`.
  """
  check_arraylike("circulant", c)
  return _circulant(jnp.atleast_1d(jnp.asarray(c)))


@partial(vectorize, signature="(n)->(n,n)")
def _circulant(c):
  n, = c.shape
  return c[(jnp.arange(n)[:, None] - jnp.arange(n)[None, :]) % n]


def leslie(f, s):
  """The Leslie matrix: fecundities `f` in the first row, survival rates `s` below the diagonal.

  Args:
    f: shape ``(..., n)``, ``n >= 2``.
    s: shape ``(..., n - 1)``; batch dims broadcast with `f`'s.

  Returns:
    Shape ``(..., n, n)``, of the promoted dtype.

  Raises:
    ValueError: ``n < 2`` or `s` of the wrong length.

  Mirrors `jax.scipy.linalg.leslie`.
  """
  check_arraylike("leslie", f, s)
  f, s = jnp.atleast_1d(f), jnp.atleast_1d(s)
  if f.shape[-1] < 2:
    raise ValueError(f"The length of f along the last axis must be at least 2; got shape "
                     f"{f.shape}.")
  if s.shape[-1] != f.shape[-1] - 1:
    raise ValueError("Incorrect lengths for f and s. The length of s along the last axis must "
                     f"be one less than the length of f; got f shape {f.shape} and s shape "
                     f"{s.shape}.")
  return _leslie(f, s)


@partial(vectorize, signature="(n),(m)->(n,n)")
def _leslie(f, s):
  f, s = promote_dtypes(f, s)
  return jnp.diag(s, k=-1).at[0].set(f)


def companion(a):
  """The companion matrix of the polynomial with coefficients `a` (highest degree first).

  Args:
    a: shape ``(..., n)``, ``n >= 2``; promoted to inexact.

  Returns:
    Shape ``(..., n - 1, n - 1)``: first row ``-a[1:] / a[0]``, ones below
    the diagonal.

  Raises:
    ValueError: ``n < 2``.

  Mirrors `jax.scipy.linalg.companion`.
  """
  a, = promote_args_inexact("companion", a)
  a = jnp.atleast_1d(a)
  if a.shape[-1] < 2:
    raise ValueError(f"The length of `a` along the last axis must be at least 2; got shape "
                     f"{a.shape}.")
  return _companion(a)


@partial(vectorize, signature="(n)->(m,m)")
def _companion(a):
  first_row = -a[1:] / a[0]
  m = a.shape[0] - 1
  return jnp.eye(m, m, k=-1, dtype=first_row.dtype).at[0].set(first_row)


def fiedler(a):
  """The Fiedler matrix ``F[..., i, j] = |a[..., i] - a[..., j]|``.

  Args:
    a: shape ``(..., n)`` (a scalar is taken as ``(1,)``).

  Returns:
    Shape ``(..., n, n)``.

  Mirrors `jax.scipy.linalg.fiedler`.
  """
  check_arraylike("fiedler", a)
  arr = jnp.atleast_1d(a)
  return jnp.abs(arr[..., None] - arr[..., None, :])


def fiedler_companion(a):
  """The Fiedler companion matrix of the polynomial with coefficients `a` (a pentadiagonal
  matrix with the same characteristic polynomial as `companion(a)`).

  Args:
    a: shape ``(..., n)``, ``n >= 1``; promoted to inexact.

  Returns:
    Shape ``(..., n - 1, n - 1)``.

  Raises:
    ValueError: ``n == 0``.

  Mirrors `jax.scipy.linalg.fiedler_companion`.
  """
  a, = promote_args_inexact("fiedler_companion", a)
  a = jnp.atleast_1d(a)
  if a.shape[-1] == 0:
    raise ValueError("fiedler_companion requires the last axis of 'a' to have nonzero length, "
                     f"but got an array of shape {a.shape}.")
  return _fiedler_companion(a)


@partial(vectorize, signature="(n)->(m,m)")
def _fiedler_companion(a):
  n = a.shape[0] - 1
  if n == 0:
    return jnp.empty_like(a, shape=(0, 0))
  a = a / a[0]
  if n == 1:
    return -a[1:].reshape(1, 1)
  i = jnp.arange(n)[:, None]
  j = jnp.arange(n)[None, :]
  even, odd = i % 2 == 0, i % 2 == 1
  one, zero = jnp.array(1, dtype=a.dtype), jnp.array(0, dtype=a.dtype)
  conditions = [(i == 0) & (j == 0), (i == 1) & (j == 0), (j == i + 1) & even,
                (j == i + 2) & even, (j == i - 1) & even & (i >= 2), (j == i - 2) & odd & (i >= 3)]
  choices = [-a[1], one, -a[jnp.minimum(i + 2, n)], one, -a[jnp.minimum(i + 1, n)], one]
  return jnp.select(conditions, choices, default=zero)


@jit(static_argnames=("n", "mode"))
def convolution_matrix(a, n: int, mode: str = "full"):
  """The matrix A with ``A @ v == jnp.convolve(a, v, mode)`` for ``v`` of length `n`.

  Args:
    a: the kernel, shape ``(..., m)``, ``m >= 1``.
    n: the length of the vectors it convolves (positive, static).
    mode: ``'full'`` (``m + n - 1`` rows), ``'valid'`` (``max(m, n) - min(m, n) + 1``)
      or ``'same'`` (``max(m, n)``).

  Returns:
    A Toeplitz matrix of shape ``(..., rows, n)``.

  Raises:
    ValueError: `n` not positive, `a` a scalar or empty, or an unknown `mode`.

  Mirrors `jax.scipy.linalg.convolution_matrix`.
  """
  n = operator.index(n)
  if n <= 0:
    raise ValueError(f"n must be a positive integer; got {n}.")
  check_arraylike("convolution_matrix", a)
  a = jnp.asarray(a)
  if a.ndim == 0:
    raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
  m = a.shape[-1]
  if m < 1:
    raise ValueError(f"len(a) must be at least 1; got shape {a.shape}.")
  if mode not in ("full", "valid", "same"):
    raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
  pad_widths = [(0, 0)] * (a.ndim - 1) + [(0, n - 1)]
  az = jnp.pad(a, pad_widths)
  raz = jnp.pad(jnp.flip(a, axis=-1), pad_widths)
  length = m + n - 1
  if mode == "same":
    trim = min(n, m) - 1
    tb, te = trim // 2, trim - trim // 2
  elif mode == "valid":
    tb = te = min(n, m) - 1
  else:
    tb = te = 0
  col0 = lax.slice_in_dim(az, tb, length - te, axis=-1)
  row0 = lax.slice_in_dim(raz, length - n - tb, length - tb, axis=-1)
  return toeplitz(col0, row0)


@jit(static_argnames=("n",))
def hilbert(n: int):
  """The Hilbert matrix ``H[i, j] = 1 / (i + j + 1)``.

  Args:
    n: the size (static).

  Returns:
    Shape ``(n, n)``, of the default float dtype.

  Mirrors `jax.scipy.linalg.hilbert`.
  """
  a = lax.broadcasted_iota(dtypes.default_float_dtype(), (n, 1), 0)
  return 1 / (a + a.T + 1)


def _comb(N, k):
  """``N choose k`` as a float, via log-gamma; 0 outside ``0 <= k <= N``."""
  N, k = promote_args_inexact("comb", N, k)
  ok = (k <= N) & (N >= 0) & (k >= 0)
  safe_N, safe_k = jnp.where(ok, N, 0.0), jnp.where(ok, k, 0.0)
  result = lax.exp(lax.lgamma(safe_N + 1) - lax.lgamma(safe_k + 1)
                   - lax.lgamma(safe_N + 1 - safe_k))
  return jnp.where(ok, result, 0.0)


@jit(static_argnames=("n",))
def invhilbert(n: int):
  """The inverse of the Hilbert matrix, in closed form (as floats).

  Args:
    n: the size (static).

  Returns:
    Shape ``(n, n)``, of the default float dtype.

  Mirrors `jax.scipy.linalg.invhilbert`.
  """
  a = jnp.arange(n, dtype=dtypes.default_float_dtype())
  i, j = a[:, None], a[None, :]
  s = i + j
  return ((-1.0) ** s * (s + 1.0) * _comb(n + i, n - j - 1) * _comb(n + j, n - i - 1)
          * _comb(s, i) ** 2)


def _binom(n, k):
  return lax.exp(lax.lgamma(n + 1.0) - lax.lgamma(n - k + 1.0) - lax.lgamma(k + 1.0))


@jit(static_argnames=("n", "kind"))
def pascal(n: int, kind: str | None = None):
  """The Pascal matrix of binomial coefficients.

  Args:
    n: the size (static).
    kind: ``'symmetric'`` (default; ``L @ L.T``), ``'lower'`` (``L[i, j] = C(i, j)``)
      or ``'upper'``.

  Returns:
    float32 ``(n, n)`` (JAX builds it in float32).

  Raises:
    ValueError: an unknown `kind`.

  Mirrors `jax.scipy.linalg.pascal`.
  """
  kind = "symmetric" if kind is None else kind
  valid_kind = ["symmetric", "lower", "upper"]
  if kind not in valid_kind:
    raise ValueError(f"Expected kind to be on of: {valid_kind}; got {kind}")
  a = jnp.arange(n, dtype=np.float32)
  L = _binom(a[:, None], a[None, :])
  if kind == "lower":
    return L
  if kind == "upper":
    return L.T
  return jnp.dot(L, L.T)


@jit(static_argnames=("n", "kind"))
def invpascal(n: int, kind: str | None = None):
  """The inverse of the Pascal matrix.

  Args:
    n: the size (static).
    kind: ``'symmetric'`` (default), ``'lower'`` or ``'upper'``.

  Returns:
    Shape ``(n, n)``, of the default float dtype.

  Raises:
    ValueError: an unknown `kind`.

  Mirrors `jax.scipy.linalg.invpascal`.
  """
  kind = "symmetric" if kind is None else kind
  valid_kind = ["symmetric", "lower", "upper"]
  if kind not in valid_kind:
    raise ValueError(f"Expected kind to be one of: {valid_kind}; got {kind}")
  a = jnp.arange(n, dtype=dtypes.default_float_dtype())
  i, j = a[:, None], a[None, :]
  L_inv = (-1.0) ** (i - j) * _binom(i, j)
  if kind == "lower":
    return L_inv
  if kind == "upper":
    return L_inv.T
  return jnp.dot(L_inv.T, L_inv)


@jit(static_argnames=("n", "full"))
def helmert(n: int, full: bool = False):
  """The Helmert matrix: orthonormal rows orthogonal to the ones vector.

  Args:
    n: the number of columns (positive, static).
    full: also return the first row ``ones(n) / sqrt(n)``.

  Returns:
    Shape ``(n - 1, n)``, or ``(n, n)`` with `full`, of the default float dtype.

  Raises:
    ValueError: ``n < 1``.

  Mirrors `jax.scipy.linalg.helmert`.
  """
  if n < 1:
    raise ValueError(f"n must be a positive integer; got {n}.")
  i = jnp.arange(n - 1)[:, None]
  j = jnp.arange(n)[None, :]
  k = (i + 1).astype(dtypes.default_float_dtype())
  denom = jnp.sqrt(k * (k + 1))
  H = jnp.where(j <= i, 1.0 / denom, jnp.where(j == i + 1, -k / denom, jnp.zeros_like(denom)))
  if full:
    H = jnp.concatenate([jnp.full((1, n), 1.0 / jnp.sqrt(n), dtype=H.dtype), H], axis=0)
  return H


@jit(static_argnames=("n", "dtype"))
def hadamard(n: int, dtype=int):
  """The Sylvester-construction Hadamard matrix of ±1 entries.

  Args:
    n: the size, a power of 2 (static).
    dtype: the result dtype (default int).

  Returns:
    Shape ``(n, n)``.

  Raises:
    ValueError: `n` is not a positive power of 2.

  Mirrors `jax.scipy.linalg.hadamard`.
  """
  if n < 1 or not math.log2(n).is_integer():
    raise ValueError(f"n must be a positive power of 2; got {n}.")
  H = jnp.ones((1, 1), dtype=dtype)
  for _ in range(int(math.log2(n))):
    H = jnp.block([[H, H], [H, -H]])
  return H


@jit(static_argnames=("n", "scale", "dtype"))
def dft(n: int, scale: str | None = None, *, dtype=None):
  """The discrete Fourier transform matrix ``W[j, k] = exp(-2 pi i j k / n)``.

  Args:
    n: the size (static).
    scale: None, ``'sqrtn'`` (divide by sqrt(n)) or ``'n'`` (divide by n).
    dtype: a complex dtype (default: the default complex dtype).

  Returns:
    Shape ``(n, n)``; ``W @ x == jnp.fft.fft(x)``.

  Raises:
    ValueError: an unknown `scale` or a non-complex `dtype`.

  Mirrors `jax.scipy.linalg.dft`.
  """
  if scale is not None and scale not in ("sqrtn", "n"):
    raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
  if dtype is None:
    dtype = dtypes.default_complex_dtype()
  else:
    dtype = dtypes.canonicalize_dtype(np.dtype(dtype))
    if not dtypes.issubdtype(dtype, np.complexfloating):
      raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
  a = jnp.arange(n, dtype=dtype)
  omegas = jnp.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
  if scale == "sqrtn":
    omegas = omegas / jnp.sqrt(n)
  elif scale == "n":
    omegas = omegas / n
  return omegas
