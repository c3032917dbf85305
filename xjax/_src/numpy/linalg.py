"""NumPy's linear algebra (`jnp.linalg`) over the `lax.linalg` primitives.

Every function promotes integer (and bool) inputs to the default inexact
dtype, takes leading batch dimensions, and, like JAX, answers singular or
ill-conditioned input with inf/NaN values instead of raising. Derivatives
follow JAX's: `det`, `slogdet` and `pinv` are `custom_jvp` functions, and
`solve` is a `custom_linear_solve` that reuses its LU factorization for the
derivative.
"""
from __future__ import annotations

import itertools
import math
import operator
from functools import partial
from typing import NamedTuple

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src.array import Array
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.jit import jit
from xjax._src.lax import dot as lax_dot
from xjax._src.lax import elementwise as lax
from xjax._src.lax import sorting as lax_sorting
from xjax._src.lax import structural as lax_structural
from xjax._src.lax.ad_util import stop_gradient
from xjax._src.lax.control_flow.solves import custom_linear_solve
from xjax._src.lax.linalg import eig as lax_eig
from xjax._src.lax.linalg import eigh as lax_eigh
from xjax._src.lax.linalg import lu as lax_lu
from xjax._src.lax.linalg import qr as lax_qr
from xjax._src.lax.linalg import svd as lax_svd
from xjax._src.lax.linalg.cholesky import cholesky as lax_cholesky
from xjax._src.lax.linalg.triangular_solve import triangular_solve
from xjax._src.numpy import creation, indexing, lax_numpy, math_extras, reductions, selection
from xjax._src.numpy import einsum as einsum_lib, tensor_contractions, ufuncs
from xjax._src.numpy.index_tricks import ix_
from xjax._src.numpy.util import (canonicalize_axis, check_arraylike, const_like, dtype_of,
                                  promote_dtypes_inexact)
from xjax._src.numpy.vectorize import vectorize
from xjax._src.vmap import vmap


class EighResult(NamedTuple):
  """`eigh`'s result: eigenvalues (ascending) and the eigenvectors as columns."""
  eigenvalues: Array
  eigenvectors: Array


class EigResult(NamedTuple):
  """`eig`'s result: eigenvalues and right eigenvectors as columns."""
  eigenvalues: Array
  eigenvectors: Array


class QRResult(NamedTuple):
  """`qr`'s result: the orthonormal factor Q and the upper-triangular R."""
  Q: Array
  R: Array


class SlogdetResult(NamedTuple):
  """`slogdet`'s result: the determinant's sign (or phase) and log of its absolute value."""
  sign: Array
  logabsdet: Array


class SVDResult(NamedTuple):
  """`svd`'s result: ``a = U @ diag(S) @ Vh``."""
  U: Array
  S: Array
  Vh: Array


def _arrays(fun_name: str, *args):
  """JAX's ensure_arraylike: checks the arguments are array-like, and makes them arrays."""
  check_arraylike(fun_name, *args)
  out = tuple(a if isinstance(a, (Array, core.Tracer)) else creation.asarray(a) for a in args)
  return out[0] if len(out) == 1 else out


def _H(x):
  """The conjugate transpose over the last two axes."""
  return ufuncs.conjugate(lax_numpy.matrix_transpose(x))


def _symmetrize(x):
  return (x + _H(x)) / 2


def _is_complex(x) -> bool:
  return np.issubdtype(dtype_of(x), np.complexfloating)


# ----------------------------------------------------------------------------
# Factorizations


@jit(static_argnames=("upper", "symmetrize_input"))
def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
  """The Cholesky factor of Hermitian positive-definite matrices.

  Args:
    a: shape ``(..., n, n)``; integers are promoted to float.
    upper: return the upper factor U (``a = U^H U``) instead of the lower L
      (``a = L L^H``).
    symmetrize_input: factor ``(a + a^H) / 2``; if False only the lower
      triangle of `a` is read.

  Returns:
    The factor, of `a`'s shape; all NaN for a matrix that is not positive
    definite.

  Raises:
    TypeError: `a` has rank below 2.
    ValueError: `a` is not square.

  Mirrors `jax.numpy.linalg.cholesky`.
  """
  a, = promote_dtypes_inexact(_arrays("jnp.linalg.cholesky", a))
  L = lax_cholesky(a, symmetrize_input=symmetrize_input)
  return ufuncs.conjugate(lax_numpy.matrix_transpose(L)) if upper else L


@jit(static_argnames=("full_matrices", "compute_uv", "hermitian", "subset_by_index"))
def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index: tuple[int, int] | None = None):
  """The singular value decomposition ``a = U @ diag(S) @ Vh``.

  Args:
    a: shape ``(..., m, n)``; integers are promoted to float.
    full_matrices: U is ``(..., m, m)`` and Vh ``(..., n, n)``; else the
      reduced ``(..., m, k)`` and ``(..., k, n)``, ``k = min(m, n)``.
    compute_uv: return U and Vh as well as S.
    hermitian: `a` is Hermitian: the decomposition comes from `eigh`.
    subset_by_index: ``(start, end)``: only singular values of those indices.

  Returns:
    `SVDResult(U, S, Vh)`, or S alone when `compute_uv` is False. S is real,
    in descending order.

  Mirrors `jax.numpy.linalg.svd`.
  """
  a, = promote_dtypes_inexact(_arrays("jnp.linalg.svd", a))
  if hermitian:
    w, v = lax_eigh.eigh(a, subset_by_index=subset_by_index)
    s = lax.abs(v)
    last = s.ndim - 1
    if not compute_uv:
      return lax_structural.rev(lax_sorting.sort(s, dimension=-1), (last,))
    sign = lax.sign(v)
    idxs = lax_structural.broadcasted_iota(np.uint32, s.shape, last)
    s, idxs, sign = lax_sorting.sort((s, idxs, sign), dimension=-1, num_keys=1)
    s, idxs, sign = (lax_structural.rev(t, (last,)) for t in (s, idxs, sign))
    u = indexing.take_along_axis(w, idxs[..., None, :], axis=-1)
    vh = _H(u * sign[..., None, :].astype(u.dtype))
    return SVDResult(u, s, vh)
  if compute_uv:
    u, s, vh = lax_svd.svd(a, full_matrices=full_matrices, compute_uv=True,
                           subset_by_index=subset_by_index)
    return SVDResult(u, s, vh)
  return lax_svd.svd(a, full_matrices=full_matrices, compute_uv=False,
                     subset_by_index=subset_by_index)


@jit(static_argnames=("mode",))
def qr(a, mode: str = "reduced"):
  """The QR decomposition ``a = Q @ R``.

  Args:
    a: shape ``(..., m, n)``; integers are promoted to float.
    mode: ``"reduced"`` (Q ``(..., m, k)``, R ``(..., k, n)``, ``k = min(m, n)``),
      ``"complete"`` (Q ``(..., m, m)``, R ``(..., m, n)``), ``"r"`` (R alone,
      reduced), or ``"raw"`` (LAPACK's Householder form: ``(h, tau)`` with h
      of shape ``(..., n, m)``).

  Returns:
    `QRResult(Q, R)`; R alone for ``mode="r"``.

  Raises:
    ValueError: an unknown `mode`.

  Mirrors `jax.numpy.linalg.qr`.
  """
  a, = promote_dtypes_inexact(_arrays("jnp.linalg.qr", a))
  if mode == "raw":
    h, taus = lax_qr.geqrf(a)
    return QRResult(lax_numpy.matrix_transpose(h), taus)
  if mode in ("reduced", "r", "full"):
    full_matrices = False
  elif mode == "complete":
    full_matrices = True
  else:
    raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
  q, r = lax_qr.qr(a, pivoting=False, full_matrices=full_matrices)
  return r if mode == "r" else QRResult(q, r)


def eig(a):
  """Eigenvalues and right eigenvectors of general square matrices.

  Args:
    a: shape ``(..., n, n)``; integers are promoted to float.

  Returns:
    `EigResult(eigenvalues, eigenvectors)`, complex: ``(..., n)`` and
    ``(..., n, n)`` with ``a @ v[..., :, i] = w[..., i] * v[..., :, i]``.

  Mirrors `jax.numpy.linalg.eig` (CPU only, as in JAX).
  """
  a, = promote_dtypes_inexact(_arrays("jnp.linalg.eig", a))
  w, v = lax_eig.eig(a, compute_left_eigenvectors=False)
  return EigResult(w, v)


@jit
def eigvals(a):
  """The (complex) eigenvalues of general square matrices ``(..., n, n)``.

  Mirrors `jax.numpy.linalg.eigvals`.
  """
  a, = promote_dtypes_inexact(_arrays("jnp.linalg.eigvals", a))
  return lax_eig.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


@jit(static_argnames=("UPLO", "symmetrize_input"))
def eigh(a, UPLO: str | None = None, symmetrize_input: bool = True):  # noqa: N803 - NumPy's name
  """Eigenvalues and eigenvectors of Hermitian (real symmetric) matrices.

  Args:
    a: shape ``(..., n, n)``; integers are promoted to float.
    UPLO: ``"L"`` (or None) reads the lower triangle, ``"U"`` the upper; only
      used when `symmetrize_input` is False.
    symmetrize_input: use ``(a + a^H) / 2``.

  Returns:
    `EighResult(eigenvalues, eigenvectors)`: real eigenvalues ``(..., n)`` in
    ascending order, eigenvectors as the columns of ``(..., n, n)``.

  Raises:
    ValueError: `UPLO` is not None, 'L' or 'U'.

  Mirrors `jax.numpy.linalg.eigh`.
  """
  a = _arrays("jnp.linalg.eigh", a)
  if UPLO is None or UPLO == "L":
    lower = True
  elif UPLO == "U":
    lower = False
  else:
    raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
  a, = promote_dtypes_inexact(a)
  v, w = lax_eigh.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
  return EighResult(w, v)


@jit(static_argnames=("UPLO", "symmetrize_input"))
def eigvalsh(a, UPLO: str | None = "L", *, symmetrize_input: bool = True):  # noqa: N803
  """The real eigenvalues, ascending, of Hermitian matrices ``(..., n, n)``.

  Mirrors `jax.numpy.linalg.eigvalsh`.
  """
  a, = promote_dtypes_inexact(_arrays("jnp.linalg.eigvalsh", a))
  return eigh(a, UPLO, symmetrize_input=symmetrize_input)[0]


def svdvals(x, /):
  """The singular values of ``(..., m, n)`` matrices, descending; same as
  ``svd(x, compute_uv=False)``.

  Mirrors `jax.numpy.linalg.svdvals`.
  """
  x = _arrays("jnp.linalg.svdvals", x)
  return svd(x, compute_uv=False, hermitian=False)


# ----------------------------------------------------------------------------
# Determinants


def _slogdet_from_det(det):
  return ufuncs.sign(det), ufuncs.real(ufuncs.log(ufuncs.abs(det)))


@custom_jvp
def _slogdet_small(a):
  """slogdet of 1x1 and 2x2 matrices by their explicit determinant."""
  if a.shape[-1] == 1:
    return _slogdet_from_det(a[..., 0, 0])
  return _slogdet_from_det(_det_2x2(a))


@_slogdet_small.defjvp
def _slogdet_small_jvp(primals, tangents):
  x, = primals
  g, = tangents
  sign, ans = _slogdet_small(x)
  if x.shape[-1] == 1:
    ans_dot = g[..., 0, 0] / x[..., 0, 0]
  else:  # d log det = tr(adj(x) g) / det(x)
    ans_dot = (g[..., 0, 0] * x[..., 1, 1] - g[..., 0, 1] * x[..., 1, 0]
               - g[..., 1, 0] * x[..., 0, 1] + g[..., 1, 1] * x[..., 0, 0]) / _det_2x2(x)
  return (sign, ans), _slogdet_tangents(x, sign, ans_dot)


def _slogdet_tangents(x, sign, ans_dot):
  """(sign_dot, logabsdet_dot) from d log det: the imaginary part turns the phase."""
  if _is_complex(x):
    sign_dot = (ans_dot - ufuncs.real(ans_dot).astype(ans_dot.dtype)) * sign
    return sign_dot, ufuncs.real(ans_dot)
  return creation.zeros_like(sign), ans_dot


@custom_jvp
def _slogdet_lu(a):
  """slogdet from the diagonal of the LU factor and the parity of its pivots."""
  dtype = dtype_of(a)
  lu, pivot, _ = lax_lu.lu(a)
  diag = selection.diagonal(lu, axis1=-2, axis2=-1)
  is_zero = reductions.any(diag == creation.array(0, dtype=dtype), axis=-1)
  iota = lax_structural.expand_dims(creation.arange(a.shape[-1], dtype=pivot.dtype),
                                    range(pivot.ndim - 1))
  parity = reductions.count_nonzero(pivot != iota, axis=-1)
  if _is_complex(a):
    sign = reductions.prod(diag / ufuncs.abs(diag).astype(diag.dtype), axis=-1)
  else:
    sign = creation.array(1, dtype=dtype)
    parity = parity + reductions.count_nonzero(diag < 0, axis=-1)
  sign = lax_numpy.where(is_zero, creation.array(0, dtype=dtype),
                         sign * creation.array(-2 * (parity % 2) + 1, dtype=dtype))
  logdet = lax_numpy.where(
      is_zero, creation.array(-np.inf, dtype=dtype),
      reductions.sum(ufuncs.log(ufuncs.abs(diag)).astype(dtype), axis=-1))
  return sign, ufuncs.real(logdet)


@custom_jvp
def _slogdet_qr(a):
  """slogdet from R's diagonal and the Householder reflections' signs (real only)."""
  if _is_complex(a):
    raise NotImplementedError("slogdet method='qr' not implemented for complex inputs")
  n = a.shape[-1]
  h, taus = lax_qr.geqrf(a)
  h_diag = selection.diagonal(h, axis1=-2, axis2=-1)
  log_abs_det = reductions.sum(ufuncs.log(ufuncs.abs(h_diag)), axis=-1)
  sign_diag = reductions.prod(ufuncs.sign(h_diag), axis=-1)
  # Each reflection with tau != 0 has determinant -1.
  sign_taus = reductions.prod(lax_numpy.where(taus[..., :(n - 1)] != 0, -1, 1),
                              axis=-1).astype(sign_diag.dtype)
  return sign_diag * sign_taus, log_abs_det


@jit(static_argnames=("method",))
def slogdet(a, *, method: str | None = None):
  """The sign and the natural log of the absolute value of the determinant.

  Args:
    a: shape ``(..., n, n)``; integers are promoted to float.
    method: ``"lu"`` (or None) or ``"qr"`` (real input only).

  Returns:
    `SlogdetResult(sign, logabsdet)`, each ``(...)``: for a singular matrix
    ``sign = 0`` and ``logabsdet = -inf``. For complex `a` the sign is the
    determinant's phase ``det / |det|``.

  Raises:
    ValueError: `a` is not a stack of square matrices; an unknown `method`.
    NotImplementedError: ``method="qr"`` on complex input.

  Mirrors `jax.numpy.linalg.slogdet`.
  """
  a, = promote_dtypes_inexact(_arrays("jnp.linalg.slogdet", a))
  if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
    raise ValueError(f"Argument to slogdet() must have shape [..., n, n], got {a.shape}")
  if method is None or method == "lu":
    if a.shape[-1] in (1, 2):
      return SlogdetResult(*_slogdet_small(a))
    return SlogdetResult(*_slogdet_lu(a))
  if method == "qr":
    return SlogdetResult(*_slogdet_qr(a))
  raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`), "
                   "and 'qr'.")


def _slogdet_jvp(primals, tangents):
  """d log det(x) = tr(x^{-1} dx)."""
  x, = primals
  g, = tangents
  sign, ans = slogdet(x)
  ans_dot = selection.trace(solve(x, g), axis1=-1, axis2=-2)
  return (sign, ans), _slogdet_tangents(x, sign, ans_dot)


_slogdet_lu.defjvp(_slogdet_jvp)
_slogdet_qr.defjvp(_slogdet_jvp)


def _cofactor_solve(a, b):
  """det(a) and adj(a) @ b, finite even where a is singular (rank n - 1).

  With a = P L U, adj(a) b = det(a) a^{-1} b is computed by scaling the
  solve so that the last pivot's division cancels: the last diagonal entry
  of U is replaced by 1 / (product of the other pivots), and the other rows
  are multiplied by the full determinant. Where the triangular solve still
  gives inf/NaN (rank below n - 1) the answer is zero, as the adjugate is.
  """
  a, = promote_dtypes_inexact(a)
  b, = promote_dtypes_inexact(b)
  if not (a.ndim >= 2 and a.shape[-1] == a.shape[-2] and b.shape[-2:] == a.shape[-2:]):
    raise ValueError("The arguments to _cofactor_solve must have shapes a=[..., m, m] and "
                     f"b=[..., m, m]; got a={a.shape} and b={b.shape}")
  if a.shape[-1] == 1:
    return a[..., 0, 0], b
  lu, pivots, permutation = lax_lu.lu(a)
  dtype = dtype_of(a)
  batch_dims = np.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
  x = lax_numpy.broadcast_to(b, batch_dims + b.shape[-2:])
  lu = lax_numpy.broadcast_to(lu, batch_dims + lu.shape[-2:])
  diag = selection.diagonal(lu, axis1=-2, axis2=-1)
  iota = lax_structural.expand_dims(creation.arange(a.shape[-1], dtype=pivots.dtype),
                                    range(pivots.ndim - 1))
  parity = reductions.count_nonzero(pivots != iota, axis=-1)
  sign = creation.asarray(-2 * (parity % 2) + 1, dtype=dtype)
  partial_det = reductions.cumprod(diag, axis=-1) * sign[..., None]
  lu = lu.at[..., -1, -1].set(1.0 / partial_det[..., -2])
  permutation = lax_numpy.broadcast_to(permutation, (*batch_dims, a.shape[-1]))
  iotas = ix_(*(lax_structural.iota(np.int32, n) for n in (*batch_dims, 1)))
  d = creation.ones(x.shape[:-1], x.dtype)
  d = triangular_solve(lu, d, left_side=True, lower=False)
  d = reductions.any(ufuncs.logical_or(ufuncs.isnan(d), ufuncs.isinf(d)), axis=-1)
  d = lax_numpy.tile(d[..., None, None], d.ndim * (1,) + x.shape[-2:])
  x = lax_numpy.where(d, creation.zeros_like(x), x)
  x = x[iotas[:-1] + (permutation, slice(None))]
  x = triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
  x = lax_numpy.concatenate((x[..., :-1, :] * partial_det[..., -1, None, None],
                             x[..., -1:, :]), axis=-2)
  x = triangular_solve(lu, x, left_side=True, lower=False)
  x = lax_numpy.where(d, creation.zeros_like(x), x)
  return partial_det[..., -1], x


def _det_2x2(a):
  return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]


def _det_3x3(a):
  return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2] +
          a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0] +
          a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1] -
          a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0] -
          a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1] -
          a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])


@custom_jvp
def _det(a):
  sign, logdet = slogdet(a)
  return sign * ufuncs.exp(logdet).astype(sign.dtype)


@_det.defjvp
def _det_jvp(primals, tangents):
  """d det(x) = tr(adj(x) dx), which stays finite for singular x."""
  x, = primals
  g, = tangents
  y, z = _cofactor_solve(x, g)
  return y, selection.trace(z, axis1=-1, axis2=-2)


@jit
def det(a):
  """The determinant of square matrices.

  2x2 and 3x3 matrices use the explicit formula; larger ones the LU
  factorization. A singular matrix gives 0.

  Args:
    a: shape ``(..., n, n)``; integers are promoted to float.

  Returns:
    The determinants, shape ``(...)``.

  Raises:
    ValueError: `a` is not a stack of square matrices.

  Mirrors `jax.numpy.linalg.det`.
  """
  a, = promote_dtypes_inexact(_arrays("jnp.linalg.det", a))
  if a.ndim >= 2 and a.shape[-2:] == (2, 2):
    return _det_2x2(a)
  if a.ndim >= 2 and a.shape[-2:] == (3, 3):
    return _det_3x3(a)
  if a.ndim >= 2 and a.shape[-1] == a.shape[-2]:
    return _det(a)
  raise ValueError(f"Argument to _det() must have shape [..., n, n], got {a.shape}")


# ----------------------------------------------------------------------------
# Solves and inverses


def _broadcasted_matvec(a, b):
  """``a @ b`` for ``(..., n, m)`` matrices and ``(..., m)`` vectors, batch dims broadcast."""
  batch_shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-1])
  n_batch = len(batch_shape)
  a = lax_numpy.broadcast_to(a, (*batch_shape, *a.shape[-2:]))
  b = lax_numpy.broadcast_to(b, (*batch_shape, b.shape[-1]))
  batch = list(range(n_batch))
  return lax_dot.dot_general(a, b, (([a.ndim - 1], [b.ndim - 1]), (batch, batch)),
                             precision=lax_dot.Precision.HIGHEST)


def _check_solve_shapes(a, b):
  if not (a.ndim >= 2 and b.ndim in (a.ndim, a.ndim - 1)
          and a.shape[-1] == a.shape[-2] == b.shape[a.ndim - 2]):
    raise ValueError("The arguments to solve must have shapes a=[..., m, m] and b=[..., m, k] "
                     f"or b=[..., m]; got a={a.shape} and b={b.shape}")


def _lax_solve(a, b):
  """Solves ``a x = b`` by one LU factorization, reused (by custom_linear_solve) in derivatives."""
  _check_solve_shapes(a, b)
  # custom_linear_solve needs b's leading dims to be a's.
  out_shape = tuple(d_a if d_b == 1 else d_b for d_a, d_b in zip(a.shape[:-1] + (1,), b.shape))
  b = lax_structural.broadcast_in_dim(b, out_shape, tuple(range(b.ndim)))
  lu_, _, permutation = lax_lu.lu(stop_gradient(a))
  custom_solve = partial(
      custom_linear_solve, lambda x: _broadcasted_matvec(a, x),
      solve=lambda _, x: lax_lu.lu_solve(lu_, permutation, x, trans=0),
      transpose_solve=lambda _, x: lax_lu.lu_solve(lu_, permutation, x, trans=1))
  if a.ndim == b.ndim + 1:
    return custom_solve(b)
  return vmap(custom_solve, b.ndim - 1, max(a.ndim, b.ndim) - 1)(b)


@jit
def solve(a, b):
  """Solves the linear system ``a @ x = b``.

  Args:
    a: shape ``(..., m, m)``; integers are promoted to float.
    b: shape ``(m,)`` (one right-hand side, broadcast over a's batch) or
      ``(..., m, n)`` (n right-hand sides; batch dims broadcast with a's).

  Returns:
    x, shaped like the broadcast b. A singular `a` gives inf/NaN entries.

  Raises:
    ValueError: `a` has rank below 2, or the shapes do not fit (including a
      batched vector ``b`` of shape ``(..., m)``, which JAX no longer takes:
      use ``solve(a, b[..., None])[..., 0]``).

  Mirrors `jax.numpy.linalg.solve`.
  """
  a, b = promote_dtypes_inexact(*_arrays("jnp.linalg.solve", a, b))
  if a.ndim < 2:
    raise ValueError(f"left hand array must be at least two dimensional; got a.shape={a.shape}")
  if (b.ndim > 1 and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]
      and a.shape[-1] != b.shape[-2]):
    raise ValueError(
        f"Invalid shapes for solve: {a.shape}, {b.shape}. Prior to JAX v0.5.0, this would have "
        "been treated as a batched 1-dimensional solve. To recover this behavior, use "
        "solve(a, b[..., None]).squeeze(-1).")
  signature = "(m,m),(m)->(m)" if b.ndim == 1 else "(m,m),(m,n)->(m,n)"
  return vectorize(_lax_solve, signature=signature)(a, b)


@jit
def inv(a):
  """The inverse of square matrices, by `solve` against the identity.

  Args:
    a: shape ``(..., n, n)``; integers are promoted to float.

  Returns:
    The inverses, of `a`'s shape; a singular matrix gives inf/NaN entries.

  Raises:
    ValueError: `a` is not a stack of square matrices.

  Mirrors `jax.numpy.linalg.inv`.
  """
  arr = _arrays("jnp.linalg.inv", a)
  if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
    raise ValueError(f"Argument to inv must have shape [..., n, n], got {arr.shape}.")
  eye = creation.eye(arr.shape[-1], dtype=arr.dtype)
  return solve(arr, lax_structural.broadcast(eye, arr.shape[:-2]))


def pinv(a, rtol=None, hermitian: bool = False, *, rcond=None):
  """The Moore-Penrose pseudo-inverse, from the SVD.

  Singular values at or below ``rtol * largest`` count as zero.

  Args:
    a: shape ``(..., m, n)``; integers are promoted to float.
    rtol: relative cutoff, a scalar or an array broadcastable to ``a``'s batch
      shape; default ``10 * max(m, n) * eps``.
    hermitian: `a` is Hermitian (its SVD comes from `eigh`).
    rcond: the old name of `rtol`.

  Returns:
    The pseudo-inverses, shape ``(..., n, m)``.

  Raises:
    ValueError: both `rtol` and `rcond` given.

  Mirrors `jax.numpy.linalg.pinv`.
  """
  if rcond is not None:
    if rtol is not None:
      raise ValueError("pinv: only one of rtol and rcond may be specified.")
    rtol = rcond
  return _pinv(a, rtol, hermitian)


@partial(custom_jvp, nondiff_argnums=(1, 2))
@jit(static_argnames=("hermitian",))
def _pinv(a, rtol=None, hermitian: bool = False):
  arr, = promote_dtypes_inexact(_arrays("jnp.linalg.pinv", a))
  m, n = arr.shape[-2:]
  if m == 0 or n == 0:
    return creation.empty(arr.shape[:-2] + (n, m), arr.dtype)
  arr = ufuncs.conjugate(arr)
  if rtol is None:
    rtol = 10. * max(m, n) * creation.array(dtypes.finfo(arr.dtype).eps)
  rtol = creation.asarray(rtol)
  u, s, vh = svd(arr, full_matrices=False, hermitian=hermitian)
  rtol = lax_structural.expand_dims(rtol[..., np.newaxis], range(s.ndim - rtol.ndim - 1))
  cutoff = rtol * s[..., 0:1]
  s = lax_numpy.where(s > cutoff, s, np.inf).astype(u.dtype)
  res = tensor_contractions.matmul(lax_numpy.matrix_transpose(vh),
                                   ufuncs.divide(lax_numpy.matrix_transpose(u), s[..., None]),
                                   precision=lax_dot.Precision.HIGHEST)
  return lax.convert_element_type(res, arr.dtype)


@_pinv.defjvp
def _pinv_jvp(rtol, hermitian, primals, tangents):
  """Golub and Pereyra's derivative of the pseudo-inverse (for constant rank)."""
  a, = primals
  a_dot, = tangents
  p = pinv(a, rtol=rtol, hermitian=hermitian)
  if hermitian:
    a, a_dot = _symmetrize(a), _symmetrize(a_dot)
  m, n = a.shape[-2:]
  if m >= n:
    s = (p @ _H(p)) @ _H(a_dot)
    t = (_H(a_dot) @ _H(p)) @ p
    p_dot = -(p @ a_dot) @ p + s - (s @ a) @ p + t - (p @ a) @ t
  else:
    s = p @ (_H(p) @ _H(a_dot))
    t = _H(a_dot) @ (_H(p) @ p)
    p_dot = -p @ (a_dot @ p) + s - s @ (a @ p) + t - p @ (a @ t)
  return p, p_dot


def _lstsq(a, b, rcond, *, numpy_resid: bool = False):
  a, b = promote_dtypes_inexact(a, b)
  if a.shape[0] != b.shape[0]:
    raise ValueError("Leading dimensions of input arrays must match")
  b_orig_ndim = b.ndim
  if b_orig_ndim == 1:
    b = b[:, None]
  if a.ndim != 2:
    raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
  if b.ndim != 2:
    raise TypeError(f"{b.ndim}-dimensional array given. Array must be one or two-dimensional")
  m, n = a.shape
  dtype = a.dtype
  if a.size == 0:
    s = creation.empty(0, dtype=a.dtype)
    rank = creation.array(0, dtype=int)
    x = creation.zeros((n, *b.shape[1:]), dtype=a.dtype)
  else:
    eps = dtypes.finfo(dtype).eps
    if rcond is None:
      rcond = float(eps) * max(n, m)
    else:
      rcond = lax_numpy.where(rcond < 0, eps, rcond)
    u, s, vt = svd(a, full_matrices=False)
    mask = (s > 0) & (s >= creation.array(rcond, dtype=s.dtype) * s[0])
    rank = mask.sum()
    safe_s = lax_numpy.where(mask, s, 1).astype(a.dtype)
    s_inv = lax_numpy.where(mask, 1 / safe_s, 0)[:, np.newaxis]
    highest = lax_dot.Precision.HIGHEST
    uTb = tensor_contractions.matmul(u.conj().T, b, precision=highest)
    x = tensor_contractions.matmul(vt.conj().T, s_inv * uTb, precision=highest)
  if numpy_resid and (rank < n or m <= n):
    resid = creation.asarray([])
  else:
    b_estimate = tensor_contractions.matmul(a, x, precision=lax_dot.Precision.HIGHEST)
    resid = norm(b - b_estimate, axis=0) ** 2
  if b_orig_ndim == 1:
    x = x.ravel()
  return x, resid, rank, s


_jit_lstsq = jit(partial(_lstsq, numpy_resid=False))


def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
  """The least-squares solution of ``a @ x = b``, from the SVD.

  Args:
    a: shape ``(m, n)``; integers are promoted to float.
    b: shape ``(m,)`` or ``(m, k)``.
    rcond: singular values below ``rcond * largest`` count as zero; default
      ``eps * max(m, n)``; a negative value means machine epsilon.
    numpy_resid: compute the residuals as NumPy does (an empty array when the
      rank is below n or m <= n); this path is not jit-compatible.

  Returns:
    ``(x, residuals, rank, s)``: x ``(n,)`` or ``(n, k)``; the squared
    residual norms per column; the effective rank; the singular values.

  Raises:
    ValueError: the leading dimensions of `a` and `b` differ.
    TypeError: `a` is not 2-D, or `b` not 1-D or 2-D.

  Mirrors `jax.numpy.linalg.lstsq`.
  """
  a, b = _arrays("jnp.linalg.lstsq", a, b)
  if numpy_resid:
    return _lstsq(a, b, rcond, numpy_resid=True)
  return _jit_lstsq(a, b, rcond)


def tensorinv(a, ind: int = 2):
  """The inverse of a tensor with respect to `tensordot` over its first `ind` axes.

  Args:
    a: the tensor; ``prod(a.shape[:ind])`` must equal ``prod(a.shape[ind:])``.
    ind: how many leading axes are the "rows".

  Returns:
    b of shape ``a.shape[ind:] + a.shape[:ind]`` with
    ``tensordot(b, a, ind)`` the identity.

  Raises:
    ValueError: `ind` is not positive, or the products differ.

  Mirrors `jax.numpy.linalg.tensorinv`.
  """
  arr = _arrays("tensorinv", a)
  ind = operator.index(ind)
  if ind <= 0:
    raise ValueError(f"ind must be a positive integer; got ind={ind}")
  contracting_shape, batch_shape = arr.shape[:ind], arr.shape[ind:]
  flatshape = (math.prod(contracting_shape), math.prod(batch_shape))
  if flatshape[0] != flatshape[1]:
    raise ValueError("tensorinv is only possible when the product of the first `ind` "
                     "dimensions equals that of the remaining dimensions. "
                     f"got arr.shape={arr.shape} with ind={ind}.")
  return inv(arr.reshape(flatshape)).reshape(*batch_shape, *contracting_shape)


def tensorsolve(a, b, axes: tuple[int, ...] | None = None):
  """Solves ``tensordot(a, x, x.ndim) = b`` for x.

  Args:
    a: the coefficient tensor; its leading axes match `b`'s shape and the
      product of the rest equals ``b.size``.
    b: the right-hand side.
    axes: axes of `a` moved to the end before solving.

  Returns:
    x, of shape ``a.shape[b.ndim:]`` (after moving `axes`).

  Raises:
    ValueError: the shapes do not fit.

  Mirrors `jax.numpy.linalg.tensorsolve`.
  """
  a_arr, b_arr = _arrays("tensorsolve", a, b)
  if axes is not None:
    a_arr = lax_numpy.moveaxis(a_arr, axes, len(axes) * (a_arr.ndim - 1,))
  out_shape = a_arr.shape[b_arr.ndim:]
  if a_arr.shape[:b_arr.ndim] != b_arr.shape:
    raise ValueError("After moving axes to end, leading shape of a must match shape of b. "
                     f"got a.shape={a_arr.shape}, b.shape={b_arr.shape}")
  if b_arr.size != math.prod(out_shape):
    raise ValueError("Input arrays must have prod(a.shape[:b.ndim]) == prod(a.shape[b.ndim:]); "
                     f"got a.shape={a_arr.shape}, b.ndim={b_arr.ndim}.")
  a_arr = a_arr.reshape(b_arr.size, math.prod(out_shape))
  return solve(a_arr, b_arr.ravel()).reshape(out_shape)


# ----------------------------------------------------------------------------
# Norms, rank and condition number


@jit(static_argnames=("ord", "axis", "keepdims"))
def norm(x, ord=None, axis: None | tuple[int, ...] | int = None,  # noqa: A002 - NumPy's name
         keepdims: bool = False):
  """A vector norm (one axis) or matrix norm (two axes).

  Args:
    x: the input; integers are promoted to float.
    ord: for vectors: None or 2 (Euclidean), inf, -inf, 0 (count of
      nonzeros), 1, -1, or any other number p (``sum(|x|^p)^(1/p)``). For
      matrices: None or 'fro' (Frobenius), 'nuc' (sum of singular values),
      inf / -inf (max / min row sum), 1 / -1 (max / min column sum), 2 / -2
      (largest / smallest singular value).
    axis: None (all of `x`: the 2-norm of the flattened array when `ord` is
      None, else a vector or matrix norm by `x`'s rank), an int, or a pair.
    keepdims: keep the reduced axes with size one.

  Returns:
    The norms, real.

  Raises:
    ValueError: an `ord` the norm does not know, or not one or two axes.

  Mirrors `jax.numpy.linalg.norm`.
  """
  x, = promote_dtypes_inexact(_arrays("jnp.linalg.norm", x))
  ndim = x.ndim
  if axis is None:
    if ord is None:
      return ufuncs.sqrt(reductions.sum(ufuncs.real(x * ufuncs.conj(x)), keepdims=keepdims))
    axis = tuple(range(ndim))
  elif isinstance(axis, tuple):
    axis = tuple(canonicalize_axis(ax, ndim) for ax in axis)
  else:
    axis = (canonicalize_axis(axis, ndim),)

  if len(axis) == 1:
    return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
  if len(axis) != 2:
    raise ValueError(f"Improper number of axes for norm: axis={axis}. Pass one axis to compute "
                     "a vector-norm, or two axes to compute a matrix-norm.")
  row_axis, col_axis = axis
  if ord is None or ord in ("f", "fro"):
    return ufuncs.sqrt(reductions.sum(ufuncs.real(x * ufuncs.conj(x)), axis=axis,
                                      keepdims=keepdims))
  if ord in (1, -1):  # extreme column sum
    if not keepdims and col_axis > row_axis:
      col_axis -= 1
    sums = reductions.sum(ufuncs.abs(x), axis=row_axis, keepdims=keepdims)
    if ord == 1:
      return reductions.amax(sums, axis=col_axis, keepdims=keepdims, initial=0)
    return reductions.amin(sums, axis=col_axis, keepdims=keepdims)
  if ord in (np.inf, -np.inf):  # extreme row sum
    if not keepdims and row_axis > col_axis:
      row_axis -= 1
    sums = reductions.sum(ufuncs.abs(x), axis=col_axis, keepdims=keepdims)
    if ord == np.inf:
      return reductions.amax(sums, axis=row_axis, keepdims=keepdims, initial=0)
    return reductions.amin(sums, axis=row_axis, keepdims=keepdims)
  if ord in ("nuc", 2, -2):
    s = svd(lax_numpy.moveaxis(x, axis, (-2, -1)), compute_uv=False)
    if ord == 2:
      y = reductions.amax(s, axis=-1, initial=0)
    elif ord == -2:
      y = reductions.amin(s, axis=-1)
    else:
      y = reductions.sum(s, axis=-1)
    return lax_numpy.expand_dims(y, axis) if keepdims else y
  raise ValueError(f"Invalid order '{ord}' for matrix norm.")


def vector_norm(x, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False,
                ord: int | str = 2):  # noqa: A002 - NumPy's name
  """The vector norm of `x` over `axis` (all axes by default).

  Args:
    x: the input (not promoted: for ``ord=inf`` an integer input gives an
      integer result, as in JAX).
    axis: the axis or axes reduced; None for all.
    keepdims: keep the reduced axes with size one.
    ord: 2 (or None), inf, -inf, 0, 1, or any other number p.

  Returns:
    The norms.

  Raises:
    ValueError: a string `ord`.

  Mirrors `jax.numpy.linalg.vector_norm`.
  """
  x = _arrays("jnp.linalg.vector_norm", x)
  if ord is None or ord == 2:
    return ufuncs.sqrt(reductions.sum(ufuncs.real(x * ufuncs.conj(x)), axis=axis,
                                      keepdims=keepdims))
  if ord == np.inf:
    return reductions.amax(ufuncs.abs(x), axis=axis, keepdims=keepdims, initial=0)
  if ord == -np.inf:
    return reductions.amin(ufuncs.abs(x), axis=axis, keepdims=keepdims)
  if ord == 0:
    return reductions.sum(x != 0, dtype=dtypes.finfo(dtype_of(x)).dtype, axis=axis,
                          keepdims=keepdims)
  if ord == 1:
    return reductions.sum(ufuncs.abs(x), axis=axis, keepdims=keepdims)
  if isinstance(ord, str):
    msg = f"Invalid order '{ord}' for vector norm."
    if ord == "inf":
      msg += "Use 'jax.numpy.inf' instead."
    if ord == "-inf":
      msg += "Use '-jax.numpy.inf' instead."
    raise ValueError(msg)
  abs_x = ufuncs.abs(x)
  p = const_like(abs_x, ord)
  total = reductions.sum(ufuncs.power(abs_x, p), axis=axis, keepdims=keepdims)
  return ufuncs.power(total, const_like(abs_x, 1. / p))


def matrix_norm(x, /, *, keepdims: bool = False, ord: str | int = "fro"):  # noqa: A002
  """The matrix norm over the last two axes: ``norm(x, ord, axis=(-2, -1))``.

  Mirrors `jax.numpy.linalg.matrix_norm`.
  """
  x = _arrays("jnp.linalg.matrix_norm", x)
  return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


@jit(static_argnames=("hermitian",))
def matrix_rank(M, rtol=None, *, hermitian: bool = False, tol=None):  # noqa: N803
  """The rank of matrices: how many singular values exceed ``rtol * largest``.

  Args:
    M: shape ``(..., m, n)``; a 0-d or 1-d array has rank 1 unless all zero.
    rtol: the relative cutoff, scalar or per batch element; default
      ``max(m, n) * eps``.
    hermitian: `M` is Hermitian (singular values from `eigh`).
    tol: the old name of `rtol`.

  Returns:
    int32 ranks, shape ``(...)``.

  Raises:
    ValueError: both `rtol` and `tol` given.

  Mirrors `jax.numpy.linalg.matrix_rank`.
  """
  M = _arrays("jnp.linalg.matrix_rank", M)
  if tol is not None:
    if rtol is not None:
      raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
    rtol = tol
  M, = promote_dtypes_inexact(M)
  if M.ndim < 2:
    return (M != 0).any().astype(np.int32)
  S = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
  if rtol is None:
    rtol = S.max(-1) * np.max(M.shape[-2:]).astype(S.dtype) * dtypes.finfo(S.dtype).eps
  rtol = lax_numpy.expand_dims(rtol, np.ndim(rtol))
  return reductions.sum(S > rtol, axis=-1)


@jit(static_argnames=("p",))
def cond(x, p=None):
  """The condition number of matrices.

  Args:
    x: shape ``(..., m, n)``; must be square unless `p` is None, 2 or -2.
    p: the norm: None or 2 (ratio of extreme singular values), -2 (its
      inverse), or 'fro', 'nuc', inf, -inf, 1, -1 (``norm(x) * norm(inv(x))``).

  Returns:
    The condition numbers; inf for a singular matrix.

  Raises:
    ValueError: `x` below 2-D or empty, or not square for the `p` given.

  Mirrors `jax.numpy.linalg.cond`.
  """
  arr = _arrays("cond", x)
  if arr.ndim < 2:
    raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got arr.shape={arr.shape}")
  if arr.shape[-1] == 0 or arr.shape[-2] == 0:
    raise ValueError(f"jnp.linalg.cond: input array must not be empty; got arr.shape={arr.shape}")
  if p is None or p == 2:
    s = svdvals(arr)
    return s[..., 0] / s[..., -1]
  if p == -2:
    s = svdvals(arr)
    r = s[..., -1] / s[..., 0]
  else:
    if arr.shape[-2] != arr.shape[-1]:
      raise ValueError(f"jnp.linalg.cond: for p={p}, array must be square; got "
                       f"arr.shape={arr.shape}")
    r = norm(arr, ord=p, axis=(-2, -1)) * norm(inv(arr), ord=p, axis=(-2, -1))
  # A singular matrix: NaN from inf * 0 means an infinite condition number.
  return lax_numpy.where(ufuncs.isnan(r) & ~ufuncs.isnan(arr).any(axis=(-2, -1)), np.inf, r)


# ----------------------------------------------------------------------------
# Products and array-API names


@jit(static_argnames=("n",))
def matrix_power(a, n: int):
  """Raises square matrices to the integer power `n` by repeated squaring.

  Args:
    a: shape ``(..., m, m)``.
    n: an integer; 0 gives the identity, a negative power inverts `a` first.

  Returns:
    ``a^n``, of `a`'s shape and dtype (float for negative `n`).

  Raises:
    TypeError: `a` below 2-D or not square, or `n` not an integer.

  Mirrors `jax.numpy.linalg.matrix_power`.
  """
  arr = _arrays("jnp.linalg.matrix_power", a)
  if arr.ndim < 2:
    raise TypeError(f"{arr.ndim}-dimensional array given. Array must be at least "
                    "two-dimensional")
  if arr.shape[-2] != arr.shape[-1]:
    raise TypeError("Last 2 dimensions of the array must be square")
  try:
    n = operator.index(n)
  except TypeError as err:
    raise TypeError(f"exponent must be an integer, got {n}") from err
  if n == 0:
    return lax_numpy.broadcast_to(creation.eye(arr.shape[-2], dtype=arr.dtype), arr.shape)
  if n < 0:
    arr, n = inv(arr), -n
  if n == 1:
    return arr
  if n == 2:
    return arr @ arr
  if n == 3:
    return (arr @ arr) @ arr
  z = result = None
  while n > 0:  # binary powering: square z, multiply in the set bits
    z = arr if z is None else z @ z
    n, bit = divmod(n, 2)
    if bit:
      result = z if result is None else result @ z
  return result


def multi_dot(arrays, *, precision=None):
  """The product of a chain of matrices, contracted in an efficient order.

  Args:
    arrays: two or more arrays; all 2-D except that the first and last may
      be 1-D (a row and a column vector).
    precision: passed to `lax.dot_general`.

  Returns:
    The product ``arrays[0] @ arrays[1] @ ...``.

  Raises:
    ValueError: fewer than two arrays, wrong ranks, or mismatched dims.

  Mirrors `jax.numpy.linalg.multi_dot`.
  """
  arrs = list(_arrays("jnp.linalg.multi_dot", *arrays))
  if len(arrs) < 2:
    raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrs)}")
  if not (arrs[0].ndim in (1, 2) and arrs[-1].ndim in (1, 2)
          and all(a.ndim == 2 for a in arrs[1:-1])):
    raise ValueError("multi_dot: input arrays must all be two-dimensional, except for the "
                     "first and last array which may be 1 or 2 dimensional. Got array shapes "
                     f"{[a.shape for a in arrs]}")
  if any(a.shape[-1] != b.shape[0] for a, b in zip(arrs[:-1], arrs[1:])):
    raise ValueError("multi_dot: last dimension of each array must match first dimension of "
                     f"following array. Got array shapes {[a.shape for a in arrs]}")
  einsum_axes = [(i, i + 1) for i in range(len(arrs))]
  if arrs[0].ndim == 1:
    einsum_axes[0] = einsum_axes[0][1:]
  if arrs[-1].ndim == 1:
    einsum_axes[-1] = einsum_axes[-1][:1]
  return einsum_lib.einsum(*itertools.chain(*zip(arrs, einsum_axes)),
                           optimize="auto", precision=precision)


def cross(x1, x2, /, *, axis=-1):
  """The cross product of 3-vectors along `axis`, batch dims broadcast.

  Raises:
    ValueError: `axis` of either input does not have size 3.

  Mirrors `jax.numpy.linalg.cross`.
  """
  x1, x2 = _arrays("jnp.linalg.outer", x1, x2)
  if x1.shape[axis] != 3 or x2.shape[axis] != 3:
    raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they "
                     f"have x1.shape[axis]={x1.shape[axis]} and x2.shape[axis]={x2.shape[axis]}")
  return math_extras.cross(x1, x2, axis=axis)


def outer(x1, x2, /):
  """The outer product ``x1[:, None] * x2[None, :]`` of two 1-D arrays.

  Raises:
    ValueError: an input is not 1-D.

  Mirrors `jax.numpy.linalg.outer`.
  """
  x1, x2 = _arrays("jnp.linalg.outer", x1, x2)
  if x1.ndim != 1 or x2.ndim != 1:
    raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={x1.ndim} "
                     f"x2.ndim={x2.ndim}")
  return x1[:, None] * x2[None, :]


def matrix_transpose(x, /):
  """Swaps the last two axes of `x` (at least 2-D).

  Raises:
    ValueError: `x` has fewer than 2 dimensions.

  Mirrors `jax.numpy.linalg.matrix_transpose`.
  """
  x = _arrays("jnp.linalg.matrix_transpose", x)
  ndim = x.ndim
  if ndim < 2:
    raise ValueError(f"matrix_transpose requires at least 2 dimensions; got ndim={ndim}")
  return lax_structural.transpose(x, (*range(ndim - 2), ndim - 1, ndim - 2))


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
  """The conjugated dot product ``sum(conj(x1) * x2, axis)``, batch dims broadcast.

  Mirrors `jax.numpy.linalg.vecdot`.
  """
  x1, x2 = _arrays("jnp.linalg.vecdot", x1, x2)
  return tensor_contractions.vecdot(x1, x2, axis=axis, precision=precision,
                                    preferred_element_type=preferred_element_type)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
  """The matrix product, with NumPy's broadcasting of batch dims.

  Mirrors `jax.numpy.linalg.matmul`.
  """
  x1, x2 = _arrays("jnp.linalg.matmul", x1, x2)
  return tensor_contractions.matmul(x1, x2, precision=precision,
                                    preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None,
              out_sharding=None):
  """The tensor dot product over `axes` (an int: the last/first `axes` axes; or two lists).

  Mirrors `jax.numpy.linalg.tensordot`.
  """
  x1, x2 = _arrays("jnp.linalg.tensordot", x1, x2)
  if out_sharding is not None:
    raise NotImplementedError("jnp.linalg.tensordot: out_sharding is not implemented in xjax.")
  return tensor_contractions.tensordot(x1, x2, axes=axes, precision=precision,
                                       preferred_element_type=preferred_element_type)


def diagonal(x, /, *, offset: int = 0):
  """The diagonals of the matrices in the last two axes (`offset` above the main one).

  Mirrors `jax.numpy.linalg.diagonal`.
  """
  x = _arrays("jnp.linalg.diagonal", x)
  return selection.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset: int = 0, dtype=None):
  """The traces of the matrices in the last two axes (sum of diagonal `offset`).

  Mirrors `jax.numpy.linalg.trace`.
  """
  x = _arrays("jnp.linalg.trace", x)
  return selection.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)
