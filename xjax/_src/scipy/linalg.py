"""SciPy's linear algebra on xjax arrays (mirrors `jax.scipy.linalg`): the
decompositions and solvers.

The decompositions call the `lax.linalg` primitives (LAPACK kernels on CPU);
everything else is composed of `jax.numpy` and `lax` operations, following
JAX's algorithms so that values, dtypes and derivatives agree:
`eigh_tridiagonal` bisects Sturm sequences (and finds eigenvectors by inverse
iteration), and `polar` runs the QR-based dynamically weighted Halley
iteration (`lax.linalg.qdwh`). The matrix functions (`expm`, `expm_frechet`,
`sqrtm`, `funm`, `rsf2csf`) are in `linalg_matfuncs.py`, the special-matrix
constructors (`toeplitz`, `hilbert`, ...) in `special_matrices.py`.

As in JAX, SciPy's ``overwrite_*``, ``check_finite`` (and a few other) keyword
arguments are accepted and ignored, and a singular or ill-conditioned input
gives inf/NaN values instead of an exception.
"""
from __future__ import annotations

import warnings
from functools import partial

import numpy as np

from xjax import lax
from xjax import numpy as jnp  # jnp is fully imported before xjax.scipy loads (lazily)
from xjax import random
from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax.linalg import cholesky as _lax_cholesky
from xjax._src.lax.linalg import eigh as _lax_eigh
from xjax._src.lax.linalg import hessenberg as _lax_hessenberg
from xjax._src.lax.linalg import lu as _lax_lu
from xjax._src.lax.linalg import qdwh as _lax_qdwh
from xjax._src.lax.linalg import qr as _lax_qr
from xjax._src.lax.linalg import schur as _lax_schur
from xjax._src.lax.linalg import svd as _lax_svd
from xjax._src.lax.linalg import tridiagonal as _lax_tridiagonal
from xjax._src.lax.linalg.triangular_solve import triangular_solve
from xjax._src.numpy import linalg as jnp_linalg
from xjax._src.numpy.util import promote_dtypes, promote_dtypes_inexact
from xjax._src.numpy.vectorize import vectorize
from xjax._src.vmap import vmap


_SOLVE_ARG_NAMES = {"cho_solve": "c_and_lower", "lu_solve": "lu_and_piv", "solve_triangular": "a"}


def _vector_or_matrix_signature(name: str, a, b, extra: str = "") -> str:
  """The `vectorize` signature of a solve with `b` a vector or a matrix (JAX's deprecation rule)."""
  if b.ndim == 1:
    return f"(n,n),{extra}(n)->(n)"
  if a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]:
    warnings.warn(
        f"jax.scipy.linalg.{name}: batched 1D solves with b.ndim > 1 are deprecated, and in the "
        "future will be treated as a batched 2D solve. Use "
        f"{name}({_SOLVE_ARG_NAMES[name]}, b[..., None]).squeeze(-1) to avoid this warning.",
        category=FutureWarning, stacklevel=4)
    return f"(n,n),{extra}(n)->(n)"
  return f"(n,n),{extra}(n,k)->(n,k)"


# ----------------------------------------------------------------------------
# Cholesky


@jit(static_argnames=("lower",))
def _cholesky(a, lower: bool):
  a, = promote_dtypes_inexact(jnp.asarray(a))
  factor = _lax_cholesky.cholesky(a if lower else jnp.conj(a.mT), symmetrize_input=False)
  return factor if lower else jnp.conj(factor.mT)


def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
  """The Cholesky factor of Hermitian positive-definite matrices.

  Only the `lower` (or upper) triangle of `a` is read.

  Args:
    a: shape ``(..., n, n)``; integers are promoted to float.
    lower: return the lower factor L (``a = L L^H``) instead of the upper U
      (``a = U^H U``).
    overwrite_a, check_finite: accepted and ignored, as in JAX.

  Returns:
    The triangular factor, of `a`'s shape; NaN where `a` is not positive definite.

  Mirrors `jax.scipy.linalg.cholesky`.
  """
  del overwrite_a, check_finite
  return _cholesky(a, lower)


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
  """The Cholesky factorization in the form `cho_solve` takes.

  Args:
    a: shape ``(..., n, n)``, Hermitian positive definite.
    lower: compute the lower factor instead of the upper one.
    overwrite_a, check_finite: accepted and ignored, as in JAX.

  Returns:
    ``(c, lower)``: `cholesky(a, lower)` (the other triangle is zero, unlike
    SciPy's) and the flag.

  Mirrors `jax.scipy.linalg.cho_factor`.
  """
  del overwrite_a, check_finite
  return cholesky(a, lower=lower), lower


@jit(static_argnames=("lower",))
def _cho_solve(c, b, lower: bool):
  c, b = promote_dtypes_inexact(jnp.asarray(c), jnp.asarray(b))
  signature = _vector_or_matrix_signature("cho_solve", c, b)
  # a = L L^H: solve L y = b, then L^H x = y (with U = L^H when `c` is upper).
  first = vectorize(partial(triangular_solve, left_side=True, lower=lower,
                            transpose_a=not lower, conjugate_a=not lower), signature=signature)
  second = vectorize(partial(triangular_solve, left_side=True, lower=lower,
                             transpose_a=lower, conjugate_a=lower), signature=signature)
  return second(c, first(c, b))


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
  """Solves ``a x = b`` given the Cholesky factorization of `a`.

  Args:
    c_and_lower: ``(c, lower)`` as `cho_factor` returns: `c` of shape
      ``(..., n, n)``, triangular.
    b: shape ``(n,)`` or ``(..., n, k)``; batch dims broadcast with `c`'s. A
      ``(..., n)`` `b` with the batch dims of `c` is solved as a batch of
      vectors, with JAX's FutureWarning.
    overwrite_b, check_finite: accepted and ignored, as in JAX.

  Returns:
    x, of the broadcast shape of `b`.

  Raises:
    ValueError: shapes that do not fit.

  Mirrors `jax.scipy.linalg.cho_solve`.
  """
  del overwrite_b, check_finite
  c, lower = c_and_lower
  return _cho_solve(c, b, lower)


# ----------------------------------------------------------------------------
# SVD, determinant, eigh, Schur, inverse


@jit(static_argnames=("full_matrices", "compute_uv"))
def _svd(a, *, full_matrices: bool, compute_uv: bool):
  a, = promote_dtypes_inexact(jnp.asarray(a))
  return _lax_svd.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd"):
  """The singular value decomposition ``a = U @ diag(s) @ Vh``.

  Args:
    a: shape ``(..., m, n)``; integers are promoted to float.
    full_matrices: U of shape ``(..., m, m)`` and Vh ``(..., n, n)``; otherwise
      ``(..., m, k)`` and ``(..., k, n)`` with ``k = min(m, n)``.
    compute_uv: return ``(U, s, Vh)``; otherwise only `s`.
    overwrite_a, check_finite, lapack_driver: accepted and ignored, as in JAX.

  Returns:
    ``(U, s, Vh)`` or `s`; `s` is real, descending, of shape ``(..., k)``.

  Mirrors `jax.scipy.linalg.svd`.
  """
  del overwrite_a, check_finite, lapack_driver
  return _svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def det(a, overwrite_a: bool = False, check_finite: bool = True):
  """The determinant of square matrices (`jnp.linalg.det`).

  Args:
    a: shape ``(..., n, n)``.
    overwrite_a, check_finite: accepted and ignored, as in JAX.

  Returns:
    The determinants, shape ``(...)``.

  Raises:
    ValueError: `a` is not a stack of square matrices.

  Mirrors `jax.scipy.linalg.det`.
  """
  del overwrite_a, check_finite
  return jnp_linalg.det(a)


@jit(static_argnames=("lower", "eigvals_only", "eigvals", "type"))
def _eigh(a, b, lower: bool, eigvals_only: bool, eigvals, type: int):  # noqa: A002 - SciPy's name
  if b is not None:
    raise NotImplementedError("Only the b=None case of eigh is implemented")
  if type != 1:
    raise NotImplementedError("Only the type=1 case of eigh is implemented.")
  if eigvals is not None:
    raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
  a, = promote_dtypes_inexact(jnp.asarray(a))
  v, w = _lax_eigh.eigh(a, lower=lower)
  return w if eigvals_only else (w, v)


def eigh(a, b=None, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
         overwrite_b: bool = False, turbo: bool = True, eigvals=None, type: int = 1,  # noqa: A002
         check_finite: bool = True):
  """Eigenvalues and eigenvectors of Hermitian matrices.

  Args:
    a: shape ``(..., n, n)``; only the `lower` (or upper) triangle is read.
    b: must be None (the generalized problem is not implemented, as in JAX).
    lower: read the lower triangle.
    eigvals_only: return only the eigenvalues.
    eigvals: must be None; type: must be 1.
    overwrite_a, overwrite_b, turbo, check_finite: accepted and ignored.

  Returns:
    ``(w, v)``: the real eigenvalues ``(..., n)`` in ascending order and the
    eigenvectors as the columns of ``(..., n, n)``; or `w` alone.

  Raises:
    NotImplementedError: `b`, `eigvals` or `type` other than their defaults.

  Mirrors `jax.scipy.linalg.eigh`.
  """
  del overwrite_a, overwrite_b, turbo, check_finite
  return _eigh(a, b, lower, eigvals_only, eigvals, type)


@jit(static_argnames=("output",))
def _schur(a, output: str):
  a = jnp.asarray(a)
  if output == "complex":
    a = a.astype(dtypes.to_complex_dtype(a.dtype))
  return _lax_schur.schur(a)


def schur(a, output: str = "real"):
  """The Schur decomposition ``a = Z T Z^H``.

  Args:
    a: float or complex, shape ``(..., n, n)``.
    output: ``'real'`` (a quasi-triangular T with 2x2 blocks for complex
      eigenvalue pairs of a real `a`) or ``'complex'`` (triangular T; a real
      `a` is cast to complex first).

  Returns:
    ``(T, Z)``, both of `a`'s shape, Z unitary.

  Raises:
    ValueError: `output` is neither ``'real'`` nor ``'complex'``.

  Mirrors `jax.scipy.linalg.schur`.
  """
  if output not in ("real", "complex"):
    raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got {output=!r}.")
  return _schur(a, output)


def inv(a, overwrite_a: bool = False, check_finite: bool = True):
  """The inverse of square matrices (`jnp.linalg.inv`).

  Args:
    a: shape ``(..., n, n)``.
    overwrite_a, check_finite: accepted and ignored, as in JAX.

  Returns:
    The inverses, of `a`'s shape; a singular matrix gives inf/NaN entries.

  Raises:
    ValueError: `a` is not a stack of square matrices.

  Mirrors `jax.scipy.linalg.inv`.
  """
  del overwrite_a, check_finite
  return jnp_linalg.inv(a)


# ----------------------------------------------------------------------------
# LU


@jit(static_argnames=("overwrite_a", "check_finite"))
def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
  """The pivoted LU factorization in the form `lu_solve` takes.

  Args:
    a: shape ``(..., m, n)``; integers are promoted to float.
    overwrite_a, check_finite: accepted and ignored, as in JAX.

  Returns:
    ``(lu, piv)``: L (unit diagonal, not stored) and U packed into one
    ``(..., m, n)`` array, and the int32 LAPACK row swaps ``(..., min(m, n))``
    (row i was swapped with row ``piv[i]``).

  Mirrors `jax.scipy.linalg.lu_factor`.
  """
  del overwrite_a, check_finite
  a, = promote_dtypes_inexact(jnp.asarray(a))
  lu_, pivots, _ = _lax_lu.lu(a)
  return lu_, pivots


@jit(static_argnames=("trans", "overwrite_b", "check_finite"))
def lu_solve(lu_and_piv, b, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True):
  """Solves ``a x = b`` given the LU factorization of `a`.

  Args:
    lu_and_piv: ``(lu, piv)`` as `lu_factor` returns, `lu` of shape ``(..., n, n)``.
    b: shape ``(n,)`` or ``(..., n, k)``; batch dims broadcast with `lu`'s. A
      ``(..., n)`` `b` with the batch dims of `lu` is solved as a batch of
      vectors, with JAX's FutureWarning.
    trans: 0 solves ``a x = b``, 1 ``a^T x = b``, 2 ``a^H x = b``.
    overwrite_b, check_finite: accepted and ignored, as in JAX.

  Returns:
    x, of the broadcast shape of `b`.

  Raises:
    ValueError: shapes that do not fit, or `trans` not 0, 1 or 2.

  Mirrors `jax.scipy.linalg.lu_solve`.
  """
  del overwrite_b, check_finite
  lu_, pivots = lu_and_piv
  lu_, b = promote_dtypes_inexact(jnp.asarray(lu_), jnp.asarray(b))
  m = lu_.shape[-2]
  permutation = _lax_lu.lu_pivots_to_permutation(pivots, m)
  signature = _vector_or_matrix_signature("lu_solve", lu_, b, extra="(n),")
  return vectorize(partial(_lax_lu.lu_solve, trans=trans), signature=signature)(
      lu_, permutation, b)


@jit(static_argnums=(1,))
def _lu(a, permute_l: bool):
  a, = promote_dtypes_inexact(jnp.asarray(a))
  lu_, _, permutation = _lax_lu.lu(a)
  if a.ndim != 2:
    raise ValueError("too many values to unpack (expected 2): jax.scipy.linalg.lu takes no batch "
                     f"dimensions; got shape {a.shape}")
  m, n = a.shape
  k = min(m, n)
  # p[i, j] = 1 where row j of `a` moved to row i: a = p @ l @ u.
  p = jnp.real(jnp.array(permutation[None, :] == jnp.arange(m, dtype=permutation.dtype)[:, None],
                         dtype=a.dtype))
  l = jnp.tril(lu_, -1)[:, :k] + jnp.eye(m, k, dtype=a.dtype)
  u = jnp.triu(lu_)[:k, :]
  if permute_l:
    return jnp.matmul(p, l, precision=lax.Precision.HIGHEST), u
  return p, l, u


@jit(static_argnames=("permute_l", "overwrite_a", "check_finite"))
def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
  """The pivoted LU decomposition ``a = p @ l @ u`` of one matrix.

  Args:
    a: shape ``(m, n)``; integers are promoted to float.
    permute_l: return ``(p @ l, u)`` instead of ``(p, l, u)``.
    overwrite_a, check_finite: accepted and ignored, as in JAX.

  Returns:
    `p` ``(m, m)`` a permutation matrix (real), `l` ``(m, k)`` unit lower
    triangular and `u` ``(k, n)`` upper triangular, ``k = min(m, n)``.

  Raises:
    ValueError: `a` is not 2-D (JAX takes no batch dimensions here either).

  Mirrors `jax.scipy.linalg.lu`.
  """
  del overwrite_a, check_finite
  return _lu(a, permute_l)


# ----------------------------------------------------------------------------
# QR


@jit(static_argnames=("mode", "pivoting"))
def _qr(a, mode: str, pivoting: bool):
  if mode in ("full", "r"):
    full_matrices = True
  elif mode == "economic":
    full_matrices = False
  else:
    raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
  a, = promote_dtypes_inexact(jnp.asarray(a))
  q, r, *p = _lax_qr.qr(a, pivoting=pivoting, full_matrices=full_matrices)
  if mode == "r":
    return (r, p[0]) if pivoting else (r,)
  return (q, r, p[0]) if pivoting else (q, r)


def qr(a, overwrite_a: bool = False, lwork=None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True):
  """The QR decomposition ``a = q @ r`` (``a[:, p] = q @ r`` with pivoting).

  Args:
    a: shape ``(..., m, n)``; integers are promoted to float.
    mode: ``'full'`` (q ``(..., m, m)``, r ``(..., m, n)``), ``'economic'``
      (q ``(..., m, k)``, r ``(..., k, n)``, ``k = min(m, n)``) or ``'r'``
      (only r, as in ``'full'``).
    pivoting: column pivoting (LAPACK ``geqp3``); also return the int32
      permutation p ``(..., n)``.
    overwrite_a, lwork, check_finite: accepted and ignored, as in JAX.

  Returns:
    ``(q, r)``, ``(q, r, p)``, ``(r,)`` or ``(r, p)``.

  Raises:
    ValueError: an unknown `mode`.

  Mirrors `jax.scipy.linalg.qr`.
  """
  del overwrite_a, lwork, check_finite
  return _qr(a, mode, pivoting)


def qr_multiply(a, c, mode: str = "right", pivoting: bool = False, conjugate: bool = False,
                overwrite_a: bool = False, overwrite_c: bool = False):
  """Multiplies `c` by the Q of `a`'s QR decomposition without forming Q.

  Args:
    a: shape ``(..., m, n)``, with ``k = min(m, n)``.
    c: ``mode='right'``: ``(..., p, m)`` (or ``(m,)``), giving ``c @ Q[:, :k]``;
      ``mode='left'``: ``(..., k, p)`` (or ``(k,)``), giving ``Q[:, :k] @ c``.
      Batch dims broadcast with `a`'s.
    mode: ``'right'`` or ``'left'``.
    pivoting: QR with column pivoting; also return the permutation.
    conjugate: use the complex conjugate of Q.
    overwrite_a, overwrite_c: accepted and ignored, as in JAX.

  Returns:
    ``(cQ, r)`` or ``(cQ, r, p)``: the product, r ``(..., k, n)``, int32 p ``(..., n)``.

  Raises:
    ValueError: an unknown `mode`, or shapes that do not fit.

  Mirrors `jax.scipy.linalg.qr_multiply`.
  """
  del overwrite_a, overwrite_c
  a, c = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(c))
  if mode not in ("right", "left"):
    raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
  onedim = c.ndim == 1
  if onedim:
    c = c[:, None] if mode == "left" else c[None, :]
  m, n = a.shape[-2:]
  k = min(m, n)
  if mode == "left":
    if c.shape[-2] != k:
      raise ValueError(f"Array shapes are not compatible for Q @ c operation: a has shape "
                       f"{tuple(a.shape)} so Q has {k} columns, but c has {c.shape[-2]} rows "
                       f"(expected {k}).")
  elif c.shape[-1] != m:
    raise ValueError(f"Array shapes are not compatible for c @ Q operation: a has shape "
                     f"{tuple(a.shape)} so Q has {m} rows, but c has {c.shape[-1]} columns "
                     f"(expected {m}).")
  batch = jnp.broadcast_shapes(a.shape[:-2], c.shape[:-2])
  a = jnp.broadcast_to(a, batch + a.shape[-2:])
  c = jnp.broadcast_to(c, batch + c.shape[-2:])
  p = None
  if pivoting:
    r, p, taus = _lax_qr.geqp3(a, jnp.zeros(a.shape[:-2] + (n,), dtype=jnp.int32))
    p = p - 1  # LAPACK's pivots count from 1
  else:
    r, taus = _lax_qr.geqrf(a)
  if m > n and mode == "left":
    c = jnp.concatenate([c, jnp.zeros(c.shape[:-2] + (m - k,) + c.shape[-1:], c.dtype)], axis=-2)
  if conjugate:
    # conj(Q) c = (c^T Q^H)^T and c conj(Q) = (Q^H c^T)^T: apply Q^H on c^T's other side.
    c = c.swapaxes(-1, -2)
  left = (mode == "left") != conjugate
  cq = _lax_qr.ormqr(r, taus, c, left=left, transpose=conjugate)
  if conjugate:
    cq = cq.swapaxes(-1, -2)
  if mode == "right":
    cq = cq[..., :k]
  if onedim:
    cq = cq.ravel()
  r = jnp.triu(r[..., :k, :])
  return (cq, r, p) if pivoting else (cq, r)


# ----------------------------------------------------------------------------
# Linear solves


@jit(static_argnames=("assume_a", "lower"))
def _solve(a, b, assume_a: str, lower: bool):
  if assume_a != "pos":
    return jnp_linalg.solve(a, b)
  a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
  jnp_linalg._check_solve_shapes(a, b)
  # One Cholesky factorization serves the solve and its derivatives.
  factors = cho_factor(lax.stop_gradient(a), lower=lower)
  custom_solve = partial(lax.custom_linear_solve, lambda x: jnp_linalg._broadcasted_matvec(a, x),
                         solve=lambda _, x: cho_solve(factors, x), symmetric=True)
  if a.ndim == b.ndim + 1:
    return custom_solve(b)
  return vmap(custom_solve, b.ndim - 1, max(a.ndim, b.ndim) - 1)(b)


def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen"):
  """Solves the linear system ``a @ x = b``.

  Args:
    a: shape ``(..., n, n)``.
    b: shape ``(..., n)`` or ``(..., n, k)``.
    lower: with ``assume_a='pos'``, read only the lower triangle of `a`
      (else the upper).
    assume_a: ``'gen'``, ``'sym'`` or ``'her'`` (all solved by LU, as
      `jnp.linalg.solve`) or ``'pos'`` (Cholesky; `a` Hermitian positive definite).
    overwrite_a, overwrite_b, debug, check_finite: accepted and ignored.

  Returns:
    x, shaped like the broadcast `b`.

  Raises:
    ValueError: an unknown `assume_a`, or shapes that do not fit.

  Mirrors `jax.scipy.linalg.solve`.
  """
  del overwrite_a, overwrite_b, debug, check_finite
  valid_assume_a = ["gen", "sym", "her", "pos"]
  if assume_a not in valid_assume_a:
    raise ValueError(f"Expected assume_a to be one of {valid_assume_a}; got {assume_a!r}")
  return _solve(a, b, assume_a, lower)


@jit(static_argnames=("trans", "lower", "unit_diagonal"))
def _solve_triangular(a, b, trans, lower: bool, unit_diagonal: bool):
  if trans == 0 or trans == "N":
    transpose_a, conjugate_a = False, False
  elif trans == 1 or trans == "T":
    transpose_a, conjugate_a = True, False
  elif trans == 2 or trans == "C":
    transpose_a, conjugate_a = True, True
  else:
    raise ValueError(f"Invalid 'trans' value {trans}")
  a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
  signature = _vector_or_matrix_signature("solve_triangular", a, b)
  return vectorize(partial(triangular_solve, left_side=True, lower=lower, transpose_a=transpose_a,
                           conjugate_a=conjugate_a, unit_diagonal=unit_diagonal),
                   signature=signature)(a, b)


def solve_triangular(a, b, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False, debug=None,
                     check_finite: bool = True):
  """Solves ``op(a) x = b`` for a triangular `a`.

  Args:
    a: shape ``(..., n, n)``; only its `lower` (or upper) triangle is read.
    b: shape ``(n,)`` or ``(..., n, k)``; batch dims broadcast with `a`'s. A
      ``(..., n)`` `b` with the batch dims of `a` is solved as a batch of
      vectors, with JAX's FutureWarning.
    trans: ``op(a)`` is a (0 or ``'N'``), ``a^T`` (1 or ``'T'``) or ``a^H``
      (2 or ``'C'``).
    lower: `a` is lower triangular.
    unit_diagonal: take `a`'s diagonal to be ones (it is not read).
    overwrite_b, debug, check_finite: accepted and ignored, as in JAX.

  Returns:
    x, of the broadcast shape of `b`.

  Raises:
    ValueError: an invalid `trans`, or shapes that do not fit.

  Mirrors `jax.scipy.linalg.solve_triangular`.
  """
  del overwrite_b, debug, check_finite
  return _solve_triangular(a, b, trans, lower, unit_diagonal)


# ----------------------------------------------------------------------------
# block_diag, eigh_tridiagonal


@jit
def block_diag(*arrs):
  """The block-diagonal matrix of the given blocks.

  Args:
    *arrs: arrays of at most 2 dimensions (0-d and 1-d ones are taken as
      ``(1, 1)`` and ``(1, n)`` blocks); their dtypes are promoted together.

  Returns:
    Shape ``(sum of rows, sum of columns)``; ``(1, 0)`` for no arguments.

  Raises:
    ValueError: an argument with more than 2 dimensions.

  Mirrors `jax.scipy.linalg.block_diag`.
  """
  if not arrs:
    arrs = (jnp.zeros((1, 0)),)
  arrs = tuple(promote_dtypes(*arrs))
  bad = [i for i, a in enumerate(arrs) if np.ndim(a) > 2]
  if bad:
    raise ValueError("Arguments to jax.scipy.linalg.block_diag must have at most 2 dimensions, "
                     f"got {arrs[bad[0]]} at argument {bad[0]}.")
  blocks = [jnp.atleast_2d(a) for a in arrs]
  dtype = blocks[0].dtype
  total_cols = sum(b.shape[1] for b in blocks)
  rows, col = [], 0
  for b in blocks:
    cols = b.shape[1]
    rows.append(lax.pad(b, dtype.type(0), ((0, 0, 0), (col, total_cols - cols - col, 0))))
    col += cols
  return jnp.concatenate(rows, axis=0)


def _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, x):
  """For each shift in `x`, the number of eigenvalues of the tridiagonal matrix below it.

  Counts the negative pivots of the LDL^T factorization of ``T - x I`` (Sturm
  sequence), keeping pivots away from zero by `pivmin` (LAPACK's dstebz).
  """
  n = alpha.shape[0]
  zeros = jnp.zeros(x.shape, dtype=np.int32)
  ones = jnp.ones(x.shape, dtype=np.int32)
  q = alpha[0] - x
  count = jnp.where(q < 0, ones, zeros)
  q = jnp.where(alpha[0] == x, alpha0_perturbation, q)

  def step(i, q, count):
    q = alpha[i] - beta_sq[i - 1] / q - x
    count = jnp.where(q <= pivmin, count + 1, count)
    q = jnp.where(q <= pivmin, jnp.minimum(q, -pivmin), q)
    return q, count

  # Unrolled 16 steps per loop iteration, the first `peel` steps before the loop.
  blocksize = 16
  peel = (n - 1) % blocksize

  def unrolled(args, steps):
    start, q, count = args
    for j in range(steps):
      q, count = step(start + j, q, count)
    return start + steps, q, count

  state = unrolled((1, q, count), peel)
  _, _, count = lax.while_loop(lambda s: jnp.less(s[0], n),
                               lambda s: unrolled(s, blocksize), state)
  return count


@jit(static_argnames=("eigvals_only", "select", "select_range"))
def eigh_tridiagonal(d, e, *, eigvals_only: bool = False, select: str = "a",
                     select_range: tuple[float, float] | None = None, tol: float | None = None,
                     key=None):
  """Eigenvalues (and eigenvectors) of a Hermitian tridiagonal matrix.

  The eigenvalues come from bisection on Sturm counts; the eigenvectors
  from inverse iteration on random starting vectors (drawn with `key`),
  with clusters of close eigenvalues reorthogonalized.

  Args:
    d: the diagonal, shape ``(n,)``, float32/float64 (or complex: its real
      part is used).
    e: the off-diagonal, shape ``(n - 1,)``, of `d`'s dtype.
    eigvals_only: return only the eigenvalues.
    select: ``'a'`` all eigenvalues, ``'i'`` those with index in `select_range`
      (inclusive); ``'v'`` is not implemented.
    select_range: ``(lo, hi)`` indices for ``select='i'``.
    tol: the absolute tolerance of the bisection (at least eps times the norm).
    key: PRNG key of the starting vectors (default ``random.key(42)``).

  Returns:
    The ascending real eigenvalues ``(k,)``; with eigenvectors, also ``(n, k)``
    whose columns are the eigenvectors.

  Raises:
    TypeError: `d` and `e` of different dtypes, or not float/complex.
    ValueError: a bad `select` or `select_range`.
    NotImplementedError: ``select='v'``.

  Mirrors `jax.scipy.linalg.eigh_tridiagonal`.
  """
  if not eigvals_only and key is None:
    key = random.key(42)
  alpha, beta = jnp.asarray(d), jnp.asarray(e)
  supported = (np.float32, np.float64, np.complex64, np.complex128)
  if alpha.dtype != beta.dtype:
    raise TypeError("diagonal and off-diagonal values must have same dtype, "
                    f"got {alpha.dtype} and {beta.dtype}")
  if alpha.dtype not in supported or beta.dtype not in supported:
    raise TypeError("Only float32 and float64 inputs are supported as inputs to "
                    "jax.scipy.linalg.eigh_tridiagonal, got "
                    f"{alpha.dtype} and {beta.dtype}")
  n = alpha.shape[0]
  if n <= 1:
    return jnp.real(alpha) if eigvals_only else (jnp.real(alpha), jnp.eye(n, dtype=alpha.dtype))
  if dtypes.issubdtype(alpha.dtype, np.complexfloating):
    alpha = jnp.real(alpha)
    beta_sq = jnp.real(beta * jnp.conj(beta))
    beta_abs = jnp.sqrt(beta_sq)
  else:
    beta_abs = jnp.abs(beta)
    beta_sq = jnp.square(beta)

  # Gershgorin bounds on the spectrum.
  off_diag_row_sum = jnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]],
                                     axis=0)
  lambda_max = jnp.amax(alpha + off_diag_row_sum)
  lambda_min = jnp.amin(alpha - off_diag_row_sum)
  t_norm = jnp.maximum(jnp.abs(lambda_min), jnp.abs(lambda_max))

  finfo = np.finfo(alpha.dtype)
  one = np.ones([], dtype=alpha.dtype)
  safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
  pivmin = safemin * jnp.maximum(1, jnp.amax(beta_sq))
  alpha0_perturbation = jnp.square(finfo.eps * beta_abs[0])
  abs_tol = finfo.eps * t_norm
  if tol is not None:
    abs_tol = jnp.maximum(tol, abs_tol)
  max_it = finfo.nmant + 1  # each bisection step gains one bit

  if select == "a":
    target_counts = jnp.arange(n, dtype=np.int32)
  elif select == "i":
    if select_range is None:
      raise ValueError("for select='i', select_range must be specified.")
    if select_range[0] > select_range[1]:
      raise ValueError("Got empty index range in select_range.")
    target_counts = jnp.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
  elif select == "v":
    raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
  else:
    raise ValueError("'select must have a value in {'a', 'i', 'v'}.")

  fudge = 2.1  # LAPACK's slack on the Gershgorin interval
  norm_slack = jnp.array(n, alpha.dtype) * fudge * finfo.eps * t_norm
  shape = np.shape(target_counts)
  lower = jnp.broadcast_to(lambda_min - norm_slack - 2 * fudge * pivmin, shape)
  upper = jnp.broadcast_to(lambda_max + norm_slack + fudge * pivmin, shape)
  mid = 0.5 * (upper + lower)
  pivmin = jnp.broadcast_to(pivmin, shape)
  alpha0_perturbation = jnp.broadcast_to(alpha0_perturbation, shape)

  def cond(args):
    i, lower, _, upper = args
    return jnp.logical_and(jnp.less(i, max_it), jnp.less(abs_tol, jnp.amax(upper - lower)))

  def body(args):
    i, lower, mid, upper = args
    counts = _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, mid)
    lower = jnp.where(counts <= target_counts, mid, lower)
    upper = jnp.where(counts > target_counts, mid, upper)
    return i + 1, lower, 0.5 * (lower + upper), upper

  _, _, mid, _ = lax.while_loop(cond, body, (0, lower, mid, upper))
  if eigvals_only:
    return mid
  return mid, _tridiagonal_eigenvectors(alpha, beta, mid, key).T


def _tridiagonal_eigenvectors(alpha, beta, eigvals, key):
  """Inverse iteration for the eigenvectors (rows) of the given eigenvalues.

  Starting from random unit vectors, solve ``(T - lambda I) v_new = v`` a few
  times (at most 5, while some norm still grows by 10%), reorthogonalizing
  (by QR) each cluster of eigenvalues closer than ``sqrt(eps) * norm``.
  """
  n, k = alpha.shape[0], eigvals.shape[0]
  dl = jnp.pad(jnp.conj(beta), (1, 0))
  du = jnp.pad(beta, (0, 1))
  gap = eigvals[1:] - eigvals[:-1]
  eps = np.finfo(eigvals.dtype).eps
  t_norm = jnp.maximum(jnp.abs(eigvals[0]), jnp.abs(eigvals[-1]))
  close = gap < jnp.sqrt(eps) * t_norm
  left_close = jnp.pad(close, (1, 0), constant_values=False)
  right_close = jnp.pad(close, (0, 1), constant_values=False)
  cluster_start = jnp.logical_and(jnp.logical_not(left_close), right_close)
  cluster_end = jnp.logical_and(left_close, jnp.logical_not(right_close))
  max_clusters = k // 2 + 1
  starts = jnp.nonzero(cluster_start, size=max_clusters)[0]
  ends = jnp.nonzero(cluster_end, size=max_clusters)[0] + 1
  num_clusters = jnp.sum(cluster_start)
  arange_k = jnp.arange(k)

  solve_dtype = np.result_type(alpha.dtype, beta.dtype)
  real_dtype = np.finfo(solve_dtype).dtype
  v = random.normal(key, (k, n), dtype=real_dtype).astype(solve_dtype)
  v = v / jnp_linalg.norm(v, axis=-1, keepdims=True).astype(solve_dtype)

  def orthogonalize_cluster(i, ev):
    start, end = starts[i], ends[i]
    padded = jnp.pad(ev, ((0, k), (0, 0)))
    block = lax.dynamic_slice(padded, (start, 0), (k, n))
    mask = (arange_k < end - start).astype(ev.dtype)
    q, _ = jnp_linalg.qr((block * mask[:, None]).T)
    update = lax.dynamic_update_slice(jnp.zeros((2 * k, n), ev.dtype), q.T * mask[:, None],
                                      (start, 0))[:k, :]
    in_cluster = (arange_k >= start) & (arange_k < end)
    return jnp.where(in_cluster[:, None], update, ev)

  shifted = (alpha[None, :] - eigvals[:, None]).astype(solve_dtype)
  dl_k = jnp.broadcast_to(dl[None, :], (k, n)).astype(solve_dtype)
  du_k = jnp.broadcast_to(du[None, :], (k, n)).astype(solve_dtype)

  def step(state):
    i, v, nrm_v, _ = state
    v_new = _lax_tridiagonal.tridiagonal_solve(dl_k, shifted, du_k,
                                               v[:, :, None].astype(solve_dtype),
                                               perturb_singular=True)[..., 0]
    nrm_new = jnp_linalg.norm(v_new, axis=-1, keepdims=True)
    v_new = v_new / nrm_new.astype(v_new.dtype)
    v_new = lax.fori_loop(0, num_clusters, orthogonalize_cluster, v_new)
    return i + 1, v_new, nrm_new[:, 0], nrm_v

  def keep_going(state):
    i, _, nrm_v, nrm_v_old = state
    return jnp.logical_and(i < 5, jnp.any(nrm_v >= 1.1 * nrm_v_old))

  _, v, _, _ = lax.while_loop(keep_going, step, (0, v, jnp.ones(k, eigvals.dtype),
                                                 jnp.zeros(k, eigvals.dtype)))
  return v


# ----------------------------------------------------------------------------
# Polar decomposition


@jit(static_argnames=("side", "method"))
def _polar_2d(a, side: str, method: str, eps, max_iterations):
  del max_iterations  # JAX ignores it too: QDWH runs at most 10 iterations
  m, n = a.shape
  if method == "qdwh":
    if m >= n and side == "right":
      unitary, posdef, _, _ = _lax_qdwh.qdwh(a, is_hermitian=False, eps=eps)
    elif m < n and side == "left":
      unitary, posdef, _, _ = _lax_qdwh.qdwh(a.T.conj(), is_hermitian=False, eps=eps)
      unitary, posdef = unitary.T.conj(), posdef.T.conj()
    else:
      raise NotImplementedError("method='qdwh' only supports mxn matrices where m < n where "
                                f"side='right' and m >= n side='left', got {a.shape} with "
                                f"{side=!r}")
  elif method == "svd":
    u, s, vh = _lax_svd.svd(a, full_matrices=False)
    s = s.astype(u.dtype)
    unitary = u @ vh
    if side == "right":
      posdef = vh.T.conj() * s[None, :] @ vh
    else:
      posdef = u * s[None, :] @ u.T.conj()
  else:
    raise ValueError(f"Unknown polar decomposition method {method}.")
  return unitary, posdef


@jit(static_argnames=("side", "method"))
def polar(a, side: str = "right", *, method: str = "qdwh", eps: float | None = None,
          max_iterations: int | None = None):
  """The polar decomposition ``a = u p`` (``side='right'``) or ``a = p u`` (``'left'``).

  Args:
    a: shape ``(..., m, n)``.
    side: ``'right'`` (p is ``(..., n, n)``) or ``'left'`` (p is ``(..., m, m)``).
    method: ``'qdwh'`` (the QR-based Halley iteration; needs m >= n for
      ``'right'`` and m < n for ``'left'``) or ``'svd'``.
    eps: the QDWH convergence tolerance (default: the dtype's eps).
    max_iterations: accepted and ignored, as in JAX (QDWH stops after 10).

  Returns:
    ``(u, p)``: u ``(..., m, n)`` with orthonormal columns (or rows) and the
    Hermitian positive semi-definite p.

  Raises:
    ValueError: `a` of rank below 2, a bad `side` or `method`.
    NotImplementedError: ``'qdwh'`` with a shape it does not take.

  Mirrors `jax.scipy.linalg.polar`.
  """
  arr = jnp.asarray(a)
  if arr.ndim < 2:
    raise ValueError("The input `a` must be at least a 2-D array.")
  if side not in ["right", "left"]:
    raise ValueError("The argument `side` must be either 'right' or 'left'.")
  signature = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
  return vectorize(partial(_polar_2d, side=side, method=method, eps=eps,
                           max_iterations=max_iterations), signature=signature)(arr)


# ----------------------------------------------------------------------------
# Hessenberg form


@jit(static_argnames=("calc_q", "check_finite", "overwrite_a"))
def hessenberg(a, *, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True):
  """The Hessenberg form ``a = Q H Q^H``, H zero below its first subdiagonal.

  Args:
    a: float or complex, shape ``(..., n, n)``.
    calc_q: also return the unitary Q.
    overwrite_a, check_finite: accepted and ignored, as in JAX.

  Returns:
    H, or ``(H, Q)``, both of `a`'s shape.

  Mirrors `jax.scipy.linalg.hessenberg`.
  """
  del overwrite_a, check_finite
  a = jnp.asarray(a)
  n = a.shape[-1]
  if n == 0:
    return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
  a_out, taus = _lax_hessenberg.hessenberg(a)
  h = jnp.triu(a_out, -1)
  if not calc_q:
    return h
  # Q = diag(1, Q') with Q' the Householder product of the reflectors below the subdiagonal.
  q = _lax_qr.householder_product(a_out[..., 1:, :-1], taus)
  batch = a_out.shape[:-2]
  dtype = a_out.dtype
  q = jnp.block([[jnp.ones(batch + (1, 1), dtype), jnp.zeros(batch + (1, n - 1), dtype)],
                 [jnp.zeros(batch + (n - 1, 1), dtype), q]])
  return h, q


# ----------------------------------------------------------------------------
# Sylvester equations


def _solve_sylvester_triangular(R, S, F):
  """Y with ``R Y + Y S = F`` for upper-triangular R ``(m, m)`` and S ``(n, n)``, entry by entry
  from the bottom-right corner (a scan over the flattened index, last first)."""
  R, S, F = promote_dtypes_inexact(R, S, F)
  m, n = F.shape

  def step(Y_flat, idx):
    i, j = idx // n, idx % n
    Y = Y_flat.reshape((m, n))
    row_term = jnp.sum(jnp.where(jnp.arange(m) > i, R[i, :] * Y[:, j], 0.0))
    col_term = jnp.sum(jnp.where(jnp.arange(n) > j, Y[i, :] * S[:, j], 0.0))
    value = (F[i, j] - (row_term + col_term)) / (R[i, i] + S[j, j])
    return Y_flat.at[i * n + j].set(value), None

  Y_flat, _ = lax.scan(step, jnp.zeros((m * n,), dtype=F.dtype), jnp.arange(m * n - 1, -1, -1))
  return Y_flat.reshape((m, n))


@jit(static_argnames=["method"])
def _solve_sylvester_2d(A, B, C, *, method: str, tol: float):
  m, n = C.shape[-2:]
  if method == "schur":
    # A = U R U^H, B^H = V S V^H: R Y + Y S^H = U^H C V with X = U Y V^H.
    R, U = schur(A, output="complex")
    S, V = schur(B.conj().T, output="complex")
    F = U.conj().T @ C.astype(R.dtype) @ V
    X = U @ _solve_sylvester_triangular(R, S.conj().T, F) @ V.conj().T
  elif method == "eigen":
    RA, UA = jnp_linalg.eig(A)
    RB, UB = jnp_linalg.eig(B)
    F = solve(UA, C.astype(RA.dtype) @ UB)
    Y = F / (RA[:, None] + RB[None, :])
    X = UA[:m, :m] @ Y[:m, :n] @ inv(UB)[:n, :n]
  else:
    raise ValueError(f'Unrecognized method {method}. The two valid methods are either "schur" '
                     'or "eigen".')
  if not dtypes.issubdtype(C.dtype, np.complexfloating):
    X = X.real
  # No unique solution when some eigenvalue of A is (nearly) minus one of B.
  singular = jnp.any(jnp.abs(jnp_linalg.eigvals(A)[:, None] + jnp_linalg.eigvals(B)[None, :]) < tol)
  return lax.cond(singular, lambda: jnp.zeros_like(X) * np.nan, lambda: X)


@jit(static_argnames=["method"])
def solve_sylvester(A, B, C, *, method: str = "schur", tol: float = 1e-8):  # noqa: N803
  """Solves the Sylvester equation ``A X + X B = C``.

  Args:
    A: shape ``(..., m, m)``.
    B: shape ``(..., n, n)``.
    C: shape ``(..., m, n)``; batch dims broadcast.
    method: ``'schur'`` (Bartels-Stewart on complex Schur forms) or ``'eigen'``
      (eigendecompositions; for diagonalizable A and B).
    tol: NaN is returned when some ``|lambda_A + lambda_B| < tol`` (no unique solution).

  Returns:
    X ``(..., m, n)``, real when `C` is real.

  Raises:
    ValueError: shapes that do not fit, or an unknown `method`.

  Mirrors `jax.scipy.linalg.solve_sylvester`.
  """
  A, B, C = promote_dtypes_inexact(jnp.asarray(A), jnp.asarray(B), jnp.asarray(C))
  m, n = C.shape[-2:]
  if A.shape[-2:] != (m, m) or B.shape[-2:] != (n, n):
    raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {A.shape}\nB: {B.shape}\n"
                     f"C: {C.shape}")
  return vectorize(partial(_solve_sylvester_2d, method=method, tol=tol),
                   signature="(m,m),(n,n),(m,n)->(m,n)")(A, B, C)
