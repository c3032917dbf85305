"""Krylov solvers for ``A x = b`` on xjax arrays (mirrors `jax.scipy.sparse.linalg`).

`cg`, `bicgstab` and `gmres` take the operator `A` (and a preconditioner
`M`) as a matrix or as a function, and `b` as any pytree of arrays. Each
solve is a `while_loop`, wrapped in `custom_linear_solve`: derivatives are
implicit (one more solve of the same or the transposed system), never
differentiated through the iterations, so they are accurate only when the
solves converge. Tolerances follow SciPy's non-legacy rule
``norm(residual) <= max(tol * norm(b), atol)``.
"""
from __future__ import annotations

import operator
from functools import partial

import numpy as np

import xjax.numpy as jnp
from xjax._src import dtypes
from xjax._src.device_put import device_put
from xjax._src.array import Array
from xjax._src.core import Tracer
from xjax._src.lax.control_flow.loops import fori_loop, while_loop
from xjax._src.lax.control_flow.solves import custom_linear_solve
from xjax._src.lax.dot import Precision
from xjax._src.lax.elementwise import convert_element_type
from xjax._src.lax.transcendental import rsqrt
from xjax._src.scipy import linalg as jsp_linalg
from xjax._src.tree_util import Partial, tree_leaves, tree_map, tree_reduce, tree_structure

_dot = partial(jnp.dot, precision=Precision.HIGHEST)
_vdot = partial(jnp.vdot, precision=Precision.HIGHEST)
_einsum = partial(jnp.einsum, precision=Precision.HIGHEST)


# ----------------------------------------------------------------------------
# Vector arithmetic on pytrees


def _vdot_real_part(x, y):
  """Re(x^H y) with the real-imaginary cross terms dropped: real for z^H M z, M Hermitian."""
  result = _vdot(x.real, y.real)
  if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
    result = result + _vdot(x.imag, y.imag)
  return result


def _vdot_real_tree(x, y):
  return sum(tree_leaves(tree_map(_vdot_real_part, x, y)))


def _vdot_tree(x, y):
  return sum(tree_leaves(tree_map(_vdot, x, y)))


def _norm(x):
  return jnp.sqrt(sum(_vdot_real_part(leaf, leaf) for leaf in tree_leaves(x)))


def _mul(scalar, tree):
  return tree_map(lambda leaf: scalar * leaf, tree)


_add = partial(tree_map, operator.add)
_sub = partial(tree_map, operator.sub)


@Partial
def _identity(x):
  return x


def _normalize_matvec(f):
  """A function computing ``f @ x``, from a function, a square matrix or a matmul-able object."""
  if callable(f):
    return f
  if isinstance(f, (np.ndarray, Array, Tracer)):
    if f.ndim != 2 or f.shape[0] != f.shape[1]:
      raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
    return partial(_dot, f)
  if hasattr(f, "__matmul__"):
    if hasattr(f, "shape") and (len(f.shape) != 2 or f.shape[0] != f.shape[1]):
      raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
    return partial(operator.matmul, f)
  raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _shapes(tree):
  return [np.shape(leaf) for leaf in tree_leaves(tree)]


def _check_x0(x0, b, check_shapes=True):
  if tree_structure(x0) != tree_structure(b):
    raise ValueError("x0 and b must have matching tree structure: "
                     f"{tree_structure(x0)} vs {tree_structure(b)}")
  if check_shapes and _shapes(x0) != _shapes(b):
    raise ValueError(f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs {_shapes(b)}")


# ----------------------------------------------------------------------------
# CG and BiCGSTAB


def _cg_solve(A, b, x0=None, *, maxiter, tol=1e-5, atol=0.0, M=_identity):
  """Preconditioned conjugate gradients for Hermitian positive definite `A`."""
  atol2 = jnp.maximum(jnp.square(tol) * _vdot_real_tree(b, b), jnp.square(atol))
  r0 = _sub(b, A(x0))
  z0 = M(r0)
  dtype = dtypes.result_type(*tree_leaves(z0))
  gamma0 = _vdot_real_tree(r0, z0).astype(dtype)    # r^H M r

  def cond(carry):
    _, r, gamma, _, k = carry
    # Without a preconditioner gamma is already |r|^2.
    rs = gamma.real if M is _identity else _vdot_real_tree(r, r)
    return (rs > atol2) & (k < maxiter)

  def body(carry):
    x, r, gamma, p, k = carry
    Ap = A(p)
    alpha = gamma / _vdot_real_tree(p, Ap).astype(dtype)
    x = _add(x, _mul(alpha, p))
    r = _sub(r, _mul(alpha, Ap))
    z = M(r)
    gamma_new = _vdot_real_tree(r, z).astype(dtype)
    p = _add(z, _mul(gamma_new / gamma, p))
    return x, r, gamma_new, p, k + 1

  return while_loop(cond, body, (x0, r0, gamma0, z0, 0))[0]


def _bicgstab_solve(A, b, x0=None, *, maxiter, tol=1e-5, atol=0.0, M=_identity):
  """Preconditioned BiCGSTAB for a general `A`; stops early on breakdown (rho, alpha or omega 0)."""
  atol2 = jnp.maximum(jnp.square(tol) * _vdot_real_tree(b, b), jnp.square(atol))
  r0 = _sub(b, A(x0))
  dtype, weak_type = dtypes.lattice_result_type(*tree_leaves(b))
  one = convert_element_type(1, dtype, weak_type=weak_type)

  def cond(carry):
    _, r, *_, k = carry
    # A negative k marks a breakdown.
    return (_vdot_real_tree(r, r) > atol2) & (k < maxiter) & (k >= 0)

  def body(carry):
    x, r, rhat, alpha, omega, rho, p, q, k = carry
    rho_new = _vdot_tree(rhat, r)
    beta = rho_new / rho * alpha / omega
    p = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
    phat = M(p)
    q = A(phat)
    alpha = rho_new / _vdot_tree(rhat, q)
    s = _sub(r, _mul(alpha, q))
    converged_half_way = _vdot_real_tree(s, s) < atol2
    shat = M(s)
    t = A(shat)
    omega = _vdot_tree(t, s) / _vdot_tree(t, t)
    x_half = _add(x, _mul(alpha, phat))
    x = tree_map(partial(jnp.where, converged_half_way), x_half, _add(x_half, _mul(omega, shat)))
    r = tree_map(partial(jnp.where, converged_half_way), s, _sub(s, _mul(omega, t)))
    k = jnp.where((omega == 0) | (alpha == 0), -11, k + 1)
    k = jnp.where(rho_new == 0, -10, k)
    return x, r, rhat, alpha, omega, rho_new, p, q, k

  return while_loop(cond, body, (x0, r0, r0, one, one, one, r0, r0, 0))[0]


def _isolve(solve_fn, A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None,
            check_symmetric=False):
  """Normalizes the arguments of `cg`/`bicgstab` and runs `solve_fn` under custom_linear_solve."""
  if x0 is None:
    x0 = tree_map(jnp.zeros_like, b)
  b, x0 = device_put((b, x0))
  if maxiter is None:
    maxiter = 10 * sum(leaf.size for leaf in tree_leaves(b))   # SciPy's default
  A = _normalize_matvec(A)
  M = _normalize_matvec(_identity if M is None else M)
  _check_x0(x0, b)
  solve = partial(solve_fn, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
  # A real positive definite operator is symmetric; a complex Hermitian one is not.
  symmetric = check_symmetric and not any(
      jnp.iscomplexobj(leaf) for leaf in tree_leaves(b))
  x = custom_linear_solve(A, b, solve=solve, transpose_solve=solve, symmetric=symmetric)
  return x, None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
  """Solves ``A x = b`` by (preconditioned) conjugate gradients.

  Args:
    A: the operator, Hermitian positive definite: a square 2-D array, an
      object with ``@``, or a function ``A(x)`` returning a pytree like `x`.
    b: the right-hand side, an array or a pytree of arrays of any shapes.
    x0: the initial guess, a pytree like `b` (default zeros).
    tol, atol: stop when ``norm(residual) <= max(tol * norm(b), atol)``.
    maxiter: the most iterations (default ``10 * size(b)``).
    M: a preconditioner approximating ``A^-1`` (same forms as `A`).

  Returns:
    ``(x, info)``: `x` a pytree like `b`; `info` is None.

  Raises:
    ValueError: `A` or `M` is a non-square matrix; `x0` and `b` differ in
      tree structure or shapes.
    TypeError: `A` or `M` is neither a function nor a matrix.

  Derivatives come from one more CG solve (implicit differentiation).
  Mirrors `jax.scipy.sparse.linalg.cg`.
  """
  return _isolve(_cg_solve, A=A, b=b, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M,
                 check_symmetric=True)


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
  """Solves ``A x = b`` by (preconditioned) BiCGSTAB, for a general square `A`.

  Args:
    A: the operator: a square 2-D array, an object with ``@``, or a function
      ``A(x)`` returning a pytree like `x`.
    b: the right-hand side, an array or a pytree of arrays of any shapes.
    x0: the initial guess, a pytree like `b` (default zeros).
    tol, atol: stop when ``norm(residual) <= max(tol * norm(b), atol)``.
    maxiter: the most iterations (default ``10 * size(b)``).
    M: a preconditioner approximating ``A^-1`` (same forms as `A`).

  Returns:
    ``(x, info)``: `x` a pytree like `b`; `info` is None.

  Raises:
    ValueError: `A` or `M` is a non-square matrix; `x0` and `b` differ in
      tree structure or shapes.
    TypeError: `A` or `M` is neither a function nor a matrix.

  Derivatives come from BiCGSTAB solves of the (transposed) system.
  Mirrors `jax.scipy.sparse.linalg.bicgstab`.
  """
  return _isolve(_bicgstab_solve, A=A, b=b, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)


# ----------------------------------------------------------------------------
# GMRES


def _safe_normalize(x, thresh=None):
  """``(x / norm(x), norm(x))``, or ``(0, 0)`` where the norm is not above `thresh`.

  `thresh` defaults to the machine epsilon of x's dtype.
  """
  norm = _norm(x)
  dtype, weak_type = dtypes.lattice_result_type(*tree_leaves(x))
  if thresh is None:
    thresh = dtypes.finfo(norm.dtype).eps
  use_norm = norm > jnp.asarray(thresh).astype(norm.dtype)
  norm_cast = convert_element_type(norm, dtype, weak_type=weak_type)
  unit = tree_map(lambda leaf: jnp.where(use_norm, leaf / norm_cast, 0.0), x)
  return unit, jnp.where(use_norm, norm, 0.0)


def _orthogonalize(Q, x):
  """``(x - Q Q^H x, Q^H x)`` for a pytree `Q` whose leaves stack vectors along the last axis.

  JAX runs this as "iterative" Gram-Schmidt with at most two passes, but its
  stopping rule means that with two passes allowed only the first ever runs;
  this is that one classical pass.
  """
  h = tree_reduce(operator.add, tree_map(lambda X, y: _einsum("...n,...->n", X.conj(), y), Q, x))
  return _sub(x, tree_map(lambda X: _dot(X, h), Q)), h


def _arnoldi_step(k, A, M, V, H):
  """Appends the orthonormalized ``M(A(V[..., k]))`` as ``V[..., k+1]``, its overlaps as H[k].

  On an invariant subspace (the new vector's norm is below eps times its
  norm before orthogonalization) the new vector is zero; returns
  ``(V, H, breakdown)``.
  """
  dtype, _ = dtypes.lattice_result_type(*tree_leaves(V))
  v = M(A(tree_map(lambda X: X[..., k], V)))
  _, norm_before = _safe_normalize(v)
  v, h = _orthogonalize(V, v)
  unit_v, norm_after = _safe_normalize(v, thresh=dtypes.finfo(dtype).eps * norm_before)
  V = tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit_v)
  H = H.at[k, :].set(h.at[k + 1].set(norm_after.astype(dtype)))
  return V, H, norm_after == 0.


def _rotate(H, i, cs, sn):
  """Applies the Givens rotation (cs, sn) to entries i and i+1 of the vector H."""
  x, y = H[i], H[i + 1]
  return H.at[i].set(cs.conj() * x - sn.conj() * y).at[i + 1].set(sn * x + cs * y)


def _givens(a, b):
  """The rotation (cs, sn) that zeroes b in (a, b)."""
  b_small = abs(a) < abs(b)
  t = -jnp.where(b_small, a, b) / jnp.where(b_small, b, a)
  r = rsqrt(1 + abs(t) ** 2).astype(t.dtype)
  b_zero = abs(b) == 0
  cs = jnp.where(b_zero, 1, jnp.where(b_small, r * t, r))
  sn = jnp.where(b_zero, 0, jnp.where(b_small, r, r * t))
  return cs, sn


def _triangularize_row(H_row, givens, k):
  """Applies the first k stored rotations to H_row, then a new one zeroing its entry k+1."""
  R_row = fori_loop(0, k, lambda i, row: _rotate(row, i, *givens[i, :]), H_row)
  cs_sn = _givens(R_row[k], R_row[k + 1])
  return _rotate(R_row, k, *cs_sn), givens.at[k, :].set(cs_sn)


def _krylov_basis(unit_residual, restart):
  return tree_map(lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)),
                  unit_residual)


def _gmres_incremental(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
  """One GMRES cycle that QR-factors the Hessenberg matrix by Givens rotations as it grows.

  The rotated right-hand side gives the residual norm for free, so the
  cycle stops as soon as it is below `ptol`.
  """
  V = _krylov_basis(unit_residual, restart)
  dtype = dtypes.result_type(*tree_leaves(b))
  # The identity keeps R nonsingular where an early stop leaves rows unset.
  R = jnp.eye(restart, restart + 1, dtype=dtype)
  givens = jnp.zeros((restart, 2), dtype=dtype)
  beta = jnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))

  def cond(carry):
    k, err, *_ = carry
    return (k < restart) & (err > ptol)

  def body(carry):
    k, _, V, R, beta, givens = carry
    V, H, _ = _arnoldi_step(k, A, M, V, R)
    R_row, givens = _triangularize_row(H[k, :], givens, k)
    beta = _rotate(beta, k, *givens[k, :])
    return k + 1, abs(beta[k + 1]), V, R.at[k, :].set(R_row), beta, givens

  _, _, V, R, beta, _ = while_loop(cond, body, (0, residual_norm, V, R, beta, givens))
  y = jsp_linalg.solve_triangular(R[:, :-1].T, beta[:-1])
  x = _add(x0, tree_map(lambda X: _dot(X[..., :-1], y), V))
  unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x))))
  return x, unit_residual, residual_norm


def _gmres_batched(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
  """One GMRES cycle that builds the whole Krylov basis, then solves the least-squares problem.

  No early stop within the cycle (except on breakdown); cheaper on accelerators.
  """
  del ptol
  V = _krylov_basis(unit_residual, restart)
  dtype, weak_type = dtypes.lattice_result_type(*tree_leaves(b))
  H = convert_element_type(jnp.eye(restart, restart + 1, dtype=dtype), dtype, weak_type=weak_type)

  def cond(carry):
    _, _, breakdown, k = carry
    return (k < restart) & ~breakdown

  def body(carry):
    V, H, _, k = carry
    V, H, breakdown = _arnoldi_step(k, A, M, V, H)
    return V, H, breakdown, k + 1

  V, H, _, _ = while_loop(cond, body, (V, H, False, 0))
  beta = jnp.zeros_like(H, shape=(restart + 1,)).at[0].set(residual_norm.astype(dtype))
  # Least squares for H^T y = beta by the normal equations (faster than lstsq).
  Ht = H.T
  y = jsp_linalg.solve(_dot(Ht.T.conj(), Ht), _dot(Ht.T.conj(), beta), assume_a="pos")
  x = _add(x0, tree_map(lambda X: _dot(X[..., :-1], y), V))
  unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x))))
  return x, unit_residual, residual_norm


def _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, cycle):
  """Restarts `cycle` from its last solution until the residual norm is at most `atol`."""
  unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x0))))

  def cond(carry):
    _, k, _, residual_norm = carry
    return (k < maxiter) & (residual_norm > atol)

  def body(carry):
    x, k, unit_residual, residual_norm = carry
    x, unit_residual, residual_norm = cycle(A, b, x, unit_residual, residual_norm, ptol,
                                            restart, M)
    return x, k + 1, unit_residual, residual_norm

  return while_loop(cond, body, (x0, 0, unit_residual, residual_norm))[0]


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
  """Solves ``A x = b`` by restarted GMRES, for a general square `A`.

  Args:
    A: the operator: a square 2-D array, an object with ``@``, or a function
      ``A(x)`` returning a pytree like `x`.
    b: the right-hand side, an array or a pytree of arrays of any shapes.
    x0: the initial guess, a pytree like `b` (default zeros).
    tol, atol: stop when ``norm(residual) <= max(tol * norm(b), atol)``.
    restart: the Krylov subspace dimension built per cycle (default 20,
      capped at ``size(b)``).
    maxiter: the most restart cycles (default ``10 * size(b)``).
    M: a (left) preconditioner approximating ``A^-1`` (same forms as `A`).
    solve_method: ``'batched'`` (solve a dense least-squares problem after
      each cycle) or ``'incremental'`` (Givens QR as the basis grows, which
      can stop a cycle early).

  Returns:
    ``(x, info)``: `x` a pytree like `b`; `info` an int array, -1 where `x`
    contains NaN, else 0.

  Raises:
    ValueError: an unknown `solve_method`, a non-square matrix, or `x0` and
      `b` with different tree structures.
    TypeError: `A` or `M` is neither a function nor a matrix.

  Derivatives come from GMRES solves of the (transposed) system.
  Mirrors `jax.scipy.sparse.linalg.gmres`.
  """
  if x0 is None:
    x0 = tree_map(jnp.zeros_like, b)
  A = _normalize_matvec(A)
  M = _normalize_matvec(_identity if M is None else M)
  b, x0 = device_put((b, x0))
  size = sum(leaf.size for leaf in tree_leaves(b))
  if maxiter is None:
    maxiter = 10 * size   # SciPy's default
  restart = min(restart, size)
  _check_x0(x0, b, check_shapes=False)

  b_norm = _norm(b)
  atol = jnp.maximum(tol * b_norm, atol)
  ptol = _norm(M(b)) * jnp.minimum(1.0, atol / b_norm)   # the tolerance within a cycle

  if solve_method == "incremental":
    cycle = _gmres_incremental
  elif solve_method == "batched":
    cycle = _gmres_batched
  else:
    raise ValueError(f"invalid solve_method {solve_method}, must be either "
                     "'incremental' or 'batched'")

  def solve(A, b):
    return _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, cycle)

  x = custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
  info = jnp.where(jnp.isnan(_norm(x)), -1, 0)
  return x, info
