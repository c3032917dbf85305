"""xjax.scipy.sparse.linalg (cg, bicgstab, gmres) against numpy.linalg.solve: matrices and
functions as operators, preconditioners, pytree right-hand sides, x0, jit, vmap, implicit
derivatives against finite differences, dtypes, info, errors."""
from functools import partial

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax.scipy.sparse.linalg import bicgstab, cg, gmres
from xjax.test_util import check_grads

N = 6


def _spd(rng, n=N):
  q = rng.normal(size=(n, n))
  return q @ q.T + n * np.eye(n)


def _nonsymmetric(rng, n=N):
  return rng.normal(size=(n, n)) + n * np.eye(n)


# name: (solver, matrix maker, options for a run of two iterations). gmres's maxiter
# counts restart cycles.
SOLVERS = {
    "cg": (cg, _spd, dict(maxiter=2)),
    "bicgstab": (bicgstab, _nonsymmetric, dict(maxiter=2)),
    "gmres_batched": (partial(gmres, solve_method="batched"), _nonsymmetric,
                      dict(maxiter=1, restart=2)),
    "gmres_incremental": (partial(gmres, solve_method="incremental", restart=4), _nonsymmetric,
                          dict(maxiter=1, restart=2)),
}


@pytest.fixture(params=list(SOLVERS))
def solver(request):
  return SOLVERS[request.param][:2]


def test_solve_matches_numpy(solver, rng, x64):
  solve, make = solver
  a, b = make(rng), rng.normal(size=N)
  expected = np.linalg.solve(a, b)
  x, _ = solve(a, b, tol=1e-12)
  assert x.dtype == np.float64
  np.testing.assert_allclose(x, expected, rtol=1e-9, atol=1e-10)
  # Under jit, with A a function of a traced matrix: the same solution.
  x_jit, _ = xjax.jit(lambda a, b: solve(lambda v: jnp.dot(a, v), b, tol=1e-12))(a, b)
  np.testing.assert_allclose(x_jit, x, rtol=1e-10, atol=1e-12)


def test_solve_float32_default_tolerance(solver, rng):
  solve, make = solver
  a, b = make(rng).astype(np.float32), rng.normal(size=N).astype(np.float32)
  x, _ = solve(a, b)
  assert x.dtype == np.float32
  residual = np.linalg.norm(a.astype(np.float64) @ np.asarray(x, np.float64) - b)
  assert residual <= 2e-5 * np.linalg.norm(b)


def test_solve_pytree_rhs(solver, rng, x64):
  solve, make = solver
  a = make(rng, 7)

  def matvec(tree):   # the operator on {"u": (3,), "v": (2, 2)}, as `a` on the flattened vector
    flat = jnp.concatenate([tree["u"], tree["v"].reshape(-1)])
    out = jnp.dot(a, flat)
    return {"u": out[:3], "v": out[3:].reshape(2, 2)}

  b = {"u": rng.normal(size=3), "v": rng.normal(size=(2, 2))}
  x, _ = solve(matvec, b, tol=1e-12)
  expected = np.linalg.solve(a, np.concatenate([b["u"], b["v"].ravel()]))
  np.testing.assert_allclose(x["u"], expected[:3], rtol=1e-9, atol=1e-10)
  np.testing.assert_allclose(x["v"], expected[3:].reshape(2, 2), rtol=1e-9, atol=1e-10)


def test_solve_gradients_match_finite_differences(solver, rng, x64):
  solve, make = solver
  a, b = make(rng), rng.normal(size=N)
  # In b, and through the operator (`a` captured by the matvec), in both modes.
  f = xjax.jit(lambda a, b: solve(lambda v: jnp.dot(a, v), b, tol=1e-13)[0])
  check_grads(f, (a, b), order=1, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)


def test_solve_vmap_over_rhs(solver, rng, x64):
  solve, make = solver
  a, bs = make(rng), rng.normal(size=(3, N))
  xs = xjax.vmap(lambda b: solve(a, b, tol=1e-12)[0])(bs)
  np.testing.assert_allclose(xs, np.linalg.solve(a, bs.T).T, rtol=1e-9, atol=1e-10)


def test_solve_without_iterations_returns_x0(solver, rng, x64):
  solve, make = solver
  a, b, x0 = make(rng), rng.normal(size=N), rng.normal(size=N)
  x, _ = solve(a, b, x0=x0, maxiter=0)
  np.testing.assert_allclose(x, x0)


@pytest.mark.parametrize("name", list(SOLVERS))
def test_preconditioner_speeds_up_convergence(name, rng, x64):
  solve, _, short = SOLVERS[name]
  noise = 0.01 * rng.normal(size=(N, N))
  a = np.diag(np.logspace(0, 4, N)) + noise @ noise.T
  b = rng.normal(size=N)
  expected = np.linalg.solve(a, b)
  jacobi = np.diag(1 / np.diag(a))
  plain, _ = solve(a, b, **short)
  for m in (jacobi, lambda v: jnp.dot(jacobi, v)):
    x, _ = solve(a, b, M=m, **short)
    assert np.max(np.abs(x - expected)) < 1e-3 * np.max(np.abs(expected))
  assert np.max(np.abs(plain - expected)) > 1e-2 * np.max(np.abs(expected))


def test_traced_matrix_under_jit_and_vmap(rng, x64):
  q = rng.normal(size=(2, 4, 4))
  a, b = q @ q.transpose(0, 2, 1) + 4 * np.eye(4), rng.normal(size=(2, 4))
  expected = np.linalg.solve(a, b[..., None])[..., 0]
  x = xjax.jit(lambda a, b: cg(a, b, tol=1e-12)[0])(a[0], b[0])
  np.testing.assert_allclose(x, expected[0], rtol=1e-9)
  xs = xjax.vmap(lambda a, b: gmres(a, b, tol=1e-12)[0])(a, b)
  np.testing.assert_allclose(xs, expected, rtol=1e-9)


def test_cg_hermitian_complex(rng, x64):
  q = rng.normal(size=(N, N)) + 1j * rng.normal(size=(N, N))
  a = q @ q.conj().T + N * np.eye(N)
  b = rng.normal(size=N) + 1j * rng.normal(size=N)
  x, info = cg(a, b, tol=1e-12)
  assert x.dtype == np.complex128 and info is None
  np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-9)


def test_info():
  a = np.eye(3, dtype=np.float32) * 2
  b = np.ones(3, np.float32)
  assert cg(a, b)[1] is None and bicgstab(a, b)[1] is None
  _, info = gmres(a, b)
  assert int(info) == 0
  # As in JAX: a NaN right-hand side normalizes to zero (info 0); a NaN solution gives -1.
  x, info = gmres(a, np.array([np.nan, 1, 1], np.float32))
  assert int(info) == 0 and not np.any(x)
  _, info = gmres(a, b, x0=np.array([np.nan, 1, 1], np.float32), maxiter=0)
  assert int(info) == -1


def test_errors():
  b = np.ones(3, np.float32)
  for solve in (cg, bicgstab, gmres):
    with pytest.raises(ValueError, match=r"linear operator must be a square matrix, but has "
                                         r"shape: \(3, 2\)"):
      solve(np.ones((3, 2), np.float32), b)
    with pytest.raises(ValueError, match="linear operator must be a square matrix"):
      solve(np.eye(3, dtype=np.float32), b, M=np.ones(3, np.float32))
    with pytest.raises(TypeError, match="linear operator must be either a function or ndarray"):
      solve("not an operator", b)
    with pytest.raises(ValueError, match="x0 and b must have matching tree structure"):
      solve(np.eye(3, dtype=np.float32), b, x0=(b,))
  for solve in (cg, bicgstab):
    with pytest.raises(ValueError, match=r"arrays in x0 and b must have matching shapes: "
                                         r"\[\(2,\)\] vs \[\(3,\)\]"):
      solve(np.eye(3, dtype=np.float32), b, x0=np.ones(2, np.float32))
  with pytest.raises(ValueError, match="invalid solve_method qr, must be either 'incremental' "
                                       "or 'batched'"):
    gmres(np.eye(3, dtype=np.float32), b, solve_method="qr")
