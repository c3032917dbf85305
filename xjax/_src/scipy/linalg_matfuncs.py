"""SciPy's matrix functions on xjax arrays (part of `jax.scipy.linalg`): `expm`,
`expm_frechet`, `sqrtm`, `funm` and `rsf2csf`.

They are composed of `jax.numpy` and `lax` operations, following JAX's
algorithms so that values, dtypes and derivatives agree: the matrix
exponential is Higham's scaling-and-squaring Padé method, and `sqrtm` and
`funm` work on the complex Schur form (`rsf2csf` turns a real Schur form into
it). The decompositions and solvers they use are in `linalg.py`.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from xjax import lax
from xjax import numpy as jnp  # jnp is fully imported before xjax.scipy loads (lazily)
from xjax._src.api import jvp
from xjax._src.jit import jit
from xjax._src.numpy import linalg as jnp_linalg
from xjax._src.numpy.util import promote_dtypes_complex, promote_dtypes_inexact
from xjax._src.numpy.vectorize import vectorize
from xjax._src.scipy.linalg import _solve_triangular, schur


# ----------------------------------------------------------------------------
# Matrix exponential: Higham (2005), "The scaling and squaring method for the
# matrix exponential revisited", with the degree picked from the 1-norm.


@jit(static_argnames=("upper_triangular", "max_squarings"))
def expm(A, *, upper_triangular: bool = False, max_squarings: int = 16):  # noqa: N803
  """The matrix exponential, by scaling and squaring with a Padé approximant.

  The Padé degree (3 to 13 in double precision, 3 to 7 in single) and the
  number of squarings s follow from the 1-norm of `A`: ``expm(A) =
  r(A / 2^s)^(2^s)``. Differentiable (forward and reverse).

  Args:
    A: shape ``(..., n, n)``; integers are promoted to float.
    upper_triangular: `A` is upper triangular (the Padé quotient is then a
      triangular solve).
    max_squarings: the most squarings allowed; a larger norm gives NaN.

  Returns:
    ``exp(A)``, of `A`'s shape.

  Raises:
    ValueError: `A` is not a stack of square matrices.

  Mirrors `jax.scipy.linalg.expm`.
  """
  A, = promote_dtypes_inexact(jnp.asarray(A))
  if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
    raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={A.shape!r}.")
  if A.ndim > 2:
    return vectorize(partial(expm, upper_triangular=upper_triangular,
                             max_squarings=max_squarings), signature="(n,n)->(n,n)")(A)
  P, Q, n_squarings = _calc_P_Q(A)

  def nan(args):
    return jnp.full_like(args[0], np.nan)

  def compute(args):
    _, P, Q = args
    R = _solve_triangular(Q, P, 0, False, False) if upper_triangular else jnp_linalg.solve(Q, P)
    return _squaring(R, n_squarings, max_squarings)

  return lax.cond(n_squarings > max_squarings, nan, compute, (A, P, Q))


# Higham's theta_m: the largest 1-norm for which the degree-m approximant is
# accurate to the unit roundoff, for m = 3, 5, 7, 9 (and 13 above).
_THETA_64 = (1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001,
             2.097847961257068e+000)
_THETA_13_64 = 5.371920351148152
_THETA_32 = (4.258730016922831e-001, 1.880152677804762e+000)
_THETA_7_32 = 3.925724783138660


@jit
def _calc_P_Q(A):
  """The numerator P and denominator Q of the Padé approximant of ``A / 2^s``, and s."""
  norm1 = jnp_linalg.norm(A, 1)
  if A.dtype in (np.float64, np.complex128):
    thetas, max_norm, pades = _THETA_64, _THETA_13_64, [_pade3, _pade5, _pade7, _pade9, _pade13]
  elif A.dtype in (np.float32, np.complex64):
    thetas, max_norm, pades = _THETA_32, _THETA_7_32, [_pade3, _pade5, _pade7]
  else:
    raise TypeError(f"A.dtype={A.dtype} is not supported.")
  n_squarings = jnp.maximum(0, jnp.floor(jnp.log2(norm1 / max_norm)))
  A = A / 2 ** n_squarings.astype(A.dtype)
  # stop_gradient: the index has no derivative (and xjax's digitize has no JVP yet; it
  # fails on an integer tangent inside its search loop).
  idx = jnp.digitize(lax.stop_gradient(norm1), jnp.array(thetas, dtype=norm1.dtype))
  U, V = lax.switch(idx, pades, A)
  return U + V, -U + V, n_squarings


def _dot(a, b):
  return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


@jit(static_argnums=2)
def _squaring(R, n_squarings, max_squarings: int):
  """``R^(2^n_squarings)`` as a fixed-length scan (squaring only while ``i < n_squarings``)."""
  def step(carry, i):
    return lax.cond(i < n_squarings, lambda x: _dot(x, x), lambda x: x, carry), None

  result, _ = lax.scan(step, R, jnp.arange(max_squarings, dtype=n_squarings.dtype))
  return result


# Padé coefficients b_0..b_m of exp (Higham 2005, table 10.4 and eq. 10.33).
_PADE_COEFFS = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}


def _pade_low(A, m: int):
  """U (odd part) and V (even part) of the degree-m approximant, m in 3..9: P = U + V, Q = V - U."""
  b = _PADE_COEFFS[m]
  ident = jnp.eye(*A.shape, dtype=A.dtype)
  powers = [ident, _dot(A, A)]  # A^0, A^2, A^4, ...
  while len(powers) <= m // 2:
    powers.append(_dot(powers[-1], powers[1]))
  # Highest degree first, summed left to right (as JAX does, for the same rounding).
  u_sum = sum((b[2 * j + 1] * powers[j] for j in range(m // 2, 0, -1)[1:]),
              b[m] * powers[m // 2]) + b[1] * ident
  v_sum = sum((b[2 * j] * powers[j] for j in range(m // 2 - 1, 0, -1)),
              b[m - 1] * powers[m // 2]) + b[0] * ident
  return _dot(A, u_sum), v_sum


def _pade3(A):
  return _pade_low(A, 3)


def _pade5(A):
  return _pade_low(A, 5)


def _pade7(A):
  return _pade_low(A, 7)


def _pade9(A):
  return _pade_low(A, 9)


def _pade13(A):
  b = _PADE_COEFFS[13]
  ident = jnp.eye(*A.shape, dtype=A.dtype)
  A2 = _dot(A, A)
  A4 = _dot(A2, A2)
  A6 = _dot(A4, A2)
  U = _dot(A, _dot(A6, b[13] * A6 + b[11] * A4 + b[9] * A2)
           + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident)
  V = (_dot(A6, b[12] * A6 + b[10] * A4 + b[8] * A2)
       + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * ident)
  return U, V


@jit(static_argnames=("method", "compute_expm"))
def expm_frechet(A, E, *, method: str | None = None, compute_expm: bool = True):  # noqa: N803
  """The Fréchet derivative of `expm` at `A` in the direction `E` (a JVP of `expm`).

  Args:
    A: shape ``(..., n, n)``.
    E: the direction, of `A`'s shape.
    method: accepted and ignored, as in JAX.
    compute_expm: also return ``expm(A)``.

  Returns:
    ``(expm(A), L(A, E))``, or ``L(A, E)`` alone.

  Raises:
    ValueError: `A` or `E` not (batched) square, or their shapes differ.

  Mirrors `jax.scipy.linalg.expm_frechet`.
  """
  del method
  A, E = jnp.asarray(A), jnp.asarray(E)
  if A.ndim < 2 or A.shape[-2] != A.shape[-1]:
    raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={A.shape}")
  if E.ndim < 2 or E.shape[-2] != E.shape[-1]:
    raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={E.shape}")
  if A.shape != E.shape:
    raise ValueError(f"expected A and E to be the same shape, got A.shape={A.shape} "
                     f"E.shape={E.shape}")
  expm_A, expm_frechet_AE = jvp(partial(expm, upper_triangular=False, max_squarings=16),
                                (A,), (E,))
  return (expm_A, expm_frechet_AE) if compute_expm else expm_frechet_AE


# ----------------------------------------------------------------------------
# Functions of matrices through the complex Schur form


@jit
def _sqrtm_triu(T):
  """The upper-triangular square root U of an upper-triangular T (Björck and Hammarling):
  ``U[i, j] = (T[i, j] - sum_{i<k<j} U[i, k] U[k, j]) / (U[i, i] + U[j, j])``, column by column."""
  diag = jnp.sqrt(jnp.diag(T))
  n = diag.size
  U = jnp.diag(diag)

  def row_step(l, state):
    j, U = state
    i = j - 1 - l
    s = lax.fori_loop(i + 1, j, lambda k, acc: acc + U[i, k] * U[k, j], jnp.zeros((), U.dtype))
    value = jnp.where(T[i, j] == s, 0.0, (T[i, j] - s) / (diag[i] + diag[j]))
    return j, U.at[i, j].set(value)

  def column_step(j, U):
    return lax.fori_loop(0, j, row_step, (j, U))[1]

  return lax.fori_loop(0, n, column_step, U)


@jit
def _sqrtm(A):
  T, Z = schur(A, output="complex")
  return jnp.matmul(jnp.matmul(Z, _sqrtm_triu(T), precision=lax.Precision.HIGHEST),
                    jnp.conj(Z.T), precision=lax.Precision.HIGHEST)


def sqrtm(A, blocksize: int = 1):  # noqa: N803
  """The principal matrix square root, through the complex Schur form.

  Args:
    A: shape ``(n, n)`` (no batch dimensions, as in JAX).
    blocksize: must be 1 (the blocked algorithm is not implemented, as in JAX).

  Returns:
    X with ``X @ X = A``, complex (also for a real `A`).

  Raises:
    NotImplementedError: ``blocksize > 1``.

  Mirrors `jax.scipy.linalg.sqrtm`.
  """
  if blocksize > 1:
    raise NotImplementedError("Blocked version is not implemented yet.")
  return _sqrtm(A)


@jit
def _rsf2csf_2d(T, Z):
  T, Z = promote_dtypes_complex(T, Z)
  eps = np.finfo(T.dtype).eps
  N = T.shape[0]
  if N == 1:
    return T, Z

  def update(m, T, Z):
    # A Givens rotation G zeroing T[m, m-1]: T <- G T G^H on the 2x2 block's rows and columns.
    mu = jnp_linalg.eigvals(lax.dynamic_slice(T, (m - 1, m - 1), (2, 2))) - T[m, m]
    r = jnp_linalg.norm(jnp.array([mu[0], T[m, m - 1]])).astype(T.dtype)
    c, s = mu[0] / r, T[m, m - 1] / r
    G = jnp.array([[c.conj(), s], [-s, c]], dtype=T.dtype)
    rows = lax.dynamic_slice_in_dim(T, m - 1, 2, axis=0)
    col_mask = jnp.arange(N) >= m - 1
    rows = jnp.where(~col_mask, rows, G @ jnp.where(col_mask, rows, 0))
    T = lax.dynamic_update_slice_in_dim(T, rows, m - 1, axis=0)
    cols = lax.dynamic_slice_in_dim(T, m - 1, 2, axis=1)
    row_mask = jnp.arange(N)[:, None] < m + 1
    cols = jnp.where(~row_mask, cols, jnp.where(row_mask, cols, 0) @ G.conj().T)
    T = lax.dynamic_update_slice_in_dim(T, cols, m - 1, axis=1)
    z_cols = lax.dynamic_slice_in_dim(Z, m - 1, 2, axis=1)
    Z = lax.dynamic_update_slice_in_dim(Z, z_cols @ G.conj().T, m - 1, axis=1)
    return T, Z

  def step(i, TZ):
    m = N - i
    T, Z = TZ
    T, Z = lax.cond(jnp.abs(T[m, m - 1]) > eps * (jnp.abs(T[m - 1, m - 1]) + jnp.abs(T[m, m])),
                    update, lambda m, T, Z: (T, Z), m, T, Z)
    return T.at[m, m - 1].set(0.0), Z

  return lax.fori_loop(1, N, step, (T, Z))


@jit(static_argnames=("check_finite",))
def rsf2csf(T, Z, check_finite: bool = True):  # noqa: N803
  """Converts a real Schur form to the complex Schur form.

  Args:
    T: the real Schur form ``(..., n, n)`` (quasi upper triangular).
    Z: the Schur vectors ``(..., n, n)``.
    check_finite: accepted and ignored, as in JAX.

  Returns:
    ``(T, Z)`` complex, T upper triangular, with ``Z T Z^H`` unchanged.

  Raises:
    ValueError: T or Z not square, or of different sizes.

  Mirrors `jax.scipy.linalg.rsf2csf`.
  """
  del check_finite
  T, Z = jnp.asarray(T), jnp.asarray(Z)
  if T.ndim < 2 or T.shape[-1] != T.shape[-2]:
    raise ValueError("Input 'T' must be square.")
  if Z.ndim < 2 or Z.shape[-1] != Z.shape[-2]:
    raise ValueError("Input 'Z' must be square.")
  if T.shape[-1] != Z.shape[-1]:
    raise ValueError(f"Input array shapes must match: Z: {Z.shape} vs. T: {T.shape}")
  return vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(T, Z)


@jit
def _parlett(F, T):
  """Parlett's recurrence (Golub and Van Loan, "Matrix Computations", algorithm 11.1.1):
  fills the strict upper triangle of F = f(T) from its diagonal, superdiagonal by
  superdiagonal. Also returns the smallest |T[j, j] - T[i, i]| divided by."""
  N = T.shape[0]

  def inner(i, state):
    p, F, minden = state
    j = i + p
    s = T[i - 1, j - 1] * (F[j - 1, j - 1] - F[i - 1, i - 1])
    ind = (jnp.arange(N) >= i) & (jnp.arange(N) < j - 1)
    s = s + (jnp.where(ind, T[i - 1], 0) @ jnp.where(ind, F[:, j - 1], 0)
             - jnp.where(ind, F[i - 1], 0) @ jnp.where(ind, T[:, j - 1], 0))
    den = T[j - 1, j - 1] - T[i - 1, i - 1]
    s = jnp.where(den != 0, s / den, s)
    return p, F.at[i - 1, j - 1].set(s), jnp.minimum(minden, jnp.abs(den))

  def outer(p, state):
    _, F, minden = lax.fori_loop(1, N - p + 1, inner, (p, *state))
    return F, minden

  return lax.fori_loop(1, N, outer, (F, jnp.abs(T[0, 0])))


def funm(A, func, disp: bool = True):  # noqa: N803
  """A matrix function f(A) from a scalar function f, by Schur-Parlett.

  `f` is applied to the eigenvalues (the diagonal of the complex Schur form)
  and the rest of f(T) follows from Parlett's recurrence, which is
  inaccurate for close eigenvalues.

  Args:
    A: shape ``(n, n)``.
    func: a function of an array of (complex) eigenvalues, elementwise.
    disp: return only f(A); otherwise also an estimate of its relative error.

  Returns:
    f(A), complex ``(n, n)``; with ``disp=False``, ``(f(A), err)``.

  Raises:
    ValueError: `A` is not a square 2-D array.

  Mirrors `jax.scipy.linalg.funm`.
  """
  A = jnp.asarray(A)
  if A.ndim != 2 or A.shape[0] != A.shape[1]:
    raise ValueError("expected square array_like input")
  T, Z = rsf2csf(*schur(A))
  F = jnp.diag(func(jnp.diag(T))).astype(T.dtype.char)
  F, minden = _parlett(F, T)
  F = Z @ F @ Z.conj().T
  if disp:
    return F
  tol = np.finfo(np.float32 if F.dtype.char.lower() == "f" else np.float64).eps
  minden = jnp.where(minden == 0.0, tol, minden)
  err = jnp.where(jnp.any(jnp.isinf(F)), np.inf,
                  jnp.minimum(1, jnp.maximum(tol, (tol / minden)
                                             * jnp_linalg.norm(jnp.triu(T, 1), 1))))
  return F, err
