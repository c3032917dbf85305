"""xjax.scipy.optimize.minimize against scipy.optimize.minimize (BFGS) and against
values from JAX 0.10.2 (whose line search sometimes stops where SciPy's goes on):
results, options, jit vs eager, vmap over x0, float32, errors."""
import numpy as np
import pytest
import scipy.optimize as osp_optimize

import xjax
import xjax.numpy as jnp
from xjax.scipy.optimize import OptimizeResults, minimize

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"
H = np.array([[4.0, 1, 0, 0], [1, 3, 0.5, 0], [0, 0.5, 2, 0.2], [0, 0, 0.2, 1]])
C = np.array([1.0, -2, 0.5, 3])
X_STAR = np.linalg.solve(H, 2 * C)   # the minimizer of quadratic(x, 2.0)


def quadratic(x, scale, np=jnp):
  return 0.5 * x @ H @ x - scale * (C @ x)


def rosenbrock(x, np=jnp):
  return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


# Module level, so that tests share their compilations.
bfgs_quadratic = xjax.jit(lambda x0: minimize(quadratic, x0, (2.0,), method="BFGS"))
lbfgs_quadratic = xjax.jit(lambda x0: minimize(quadratic, x0, (2.0,), method=LBFGS))
bfgs_rosenbrock = xjax.jit(lambda x0: minimize(rosenbrock, x0, method="BFGS"))

QUADRATIC_STARTS = [np.ones(4), np.array([3.0, -1, 2, -4]), np.array([10.0, 10, -10, 5])]


def _assert_matches_scipy(got, fun, x0, args=(), atol=1e-5):
  expected = osp_optimize.minimize(lambda x: fun(x, *args, np=np), x0, method="BFGS")
  assert expected.success and bool(got.success) and int(got.status) == 0
  np.testing.assert_allclose(got.x, expected.x, atol=atol)
  np.testing.assert_allclose(got.fun, expected.fun, atol=atol ** 2)
  assert np.max(np.abs(np.asarray(got.jac))) < 1e-5


@pytest.mark.parametrize("x0", QUADRATIC_STARTS, ids=["ones", "mixed", "far"])
def test_bfgs_quadratic_matches_scipy(x0, x64):
  r = bfgs_quadratic(x0)
  assert isinstance(r, OptimizeResults)
  _assert_matches_scipy(r, quadratic, x0, (2.0,))
  np.testing.assert_allclose(r.x, X_STAR, atol=1e-5)
  # The inverse-Hessian estimate is symmetric and close to H^-1 near the end.
  np.testing.assert_allclose(r.hess_inv, np.asarray(r.hess_inv).T, atol=1e-12)
  np.testing.assert_allclose(r.hess_inv, np.linalg.inv(H), atol=0.05)
  assert int(r.nfev) == int(r.njev) > int(r.nit) > 0


def test_bfgs_rosenbrock_matches_scipy(x64):
  r = bfgs_rosenbrock(np.zeros(4))
  _assert_matches_scipy(r, rosenbrock, np.zeros(4), atol=1e-4)
  np.testing.assert_allclose(r.x, np.ones(4), atol=1e-6)
  assert int(r.nit) == 33   # JAX 0.10.2 takes 33 iterations too


def test_bfgs_and_lbfgs_match_jax_where_the_line_search_fails(x64):
  # Golden values from jax.scipy.optimize.minimize (JAX 0.10.2, x64): from the
  # classic start JAX's zoom gives up (status 3; L-BFGS status 5), unlike SciPy.
  r = bfgs_rosenbrock(np.array([-1.2, 1.0]))
  assert not bool(r.success) and int(r.status) == 3
  assert (int(r.nfev), int(r.njev), int(r.nit)) == (17, 17, 8)
  np.testing.assert_allclose(r.x, [-0.2778069614751315, 0.04333877520015739], rtol=1e-9)
  np.testing.assert_allclose(r.fun, 1.7472911993555371, rtol=1e-9)
  r = xjax.jit(lambda x0: minimize(rosenbrock, x0, method=LBFGS))(np.array([-1.2, 1.0]))
  assert r.hess_inv is None and not bool(r.success) and int(r.status) == 5
  assert (int(r.nfev), int(r.njev), int(r.nit)) == (35, 35, 17)
  np.testing.assert_allclose(r.x, [0.2233641973095693, 0.0226069407446567], rtol=1e-8)


def test_lbfgs_quadratic(x64):
  # JAX's L-BFGS succeeds from zeros, where its BFGS stops early (golden: nit 9).
  for x0, nit in [(np.zeros(4), 9), (np.ones(4), 7)]:
    r = lbfgs_quadratic(x0)
    assert bool(r.success) and int(r.status) == 0 and int(r.nit) == nit
    np.testing.assert_allclose(r.x, X_STAR, atol=1e-5)
    assert r.hess_inv is None


def test_lbfgs_complex_variables(x64):
  # JAX's L-BFGS accepts complex x (Sorber et al.); |z - c|^2 is minimized at c.
  c = np.array([1 + 2j, -1j, 0.5])
  r = xjax.jit(lambda z0: minimize(lambda z: jnp.sum(jnp.abs(z - c) ** 2), z0, method=LBFGS))(
      np.zeros(3, np.complex128))
  assert r.x.dtype == np.complex128 and bool(r.success)
  np.testing.assert_allclose(r.x, c, atol=1e-8)


def test_minimize_jit_and_vmap_match_eager(x64):
  starts = np.stack([np.zeros(4), *QUADRATIC_STARTS])
  batched = xjax.vmap(lambda x0: minimize(quadratic, x0, (2.0,), method="BFGS"))(starts)
  for i, x0 in enumerate(starts):
    single = bfgs_quadratic(x0)
    for name, a, b in zip(OptimizeResults._fields, batched, single, strict=True):
      np.testing.assert_allclose(a[i], b, rtol=1e-9, atol=1e-12, err_msg=name)
  # JAX's BFGS stops early from zeros (status 3, x far from X_STAR); each lane keeps its own result.
  assert list(np.asarray(batched.status)) == [3, 0, 0, 0]
  eager = minimize(quadratic, starts[1], (2.0,), method="BFGS")
  np.testing.assert_allclose(eager.x, bfgs_quadratic(starts[1]).x, rtol=1e-12)
  assert int(eager.nit) == int(bfgs_quadratic(starts[1]).nit)


def test_minimize_float32():
  r = minimize(quadratic, np.ones(4, np.float32), (2.0,), method="BFGS")
  assert r.x.dtype == r.fun.dtype == r.jac.dtype == r.hess_inv.dtype == np.float32
  assert bool(r.success) and int(r.nit) == 10   # as JAX
  np.testing.assert_allclose(r.x, X_STAR, atol=1e-4)


def test_minimize_options(x64):
  r = xjax.jit(lambda x0: minimize(quadratic, x0, (2.0,), method="bfgs",
                                   options=dict(maxiter=2)))(np.ones(4))
  assert not bool(r.success) and int(r.status) == 1 and int(r.nit) == 2


def test_minimize_errors():
  x0 = np.ones(2, np.float32)
  with pytest.raises(ValueError, match="Method Nelder-Mead not recognized"):
    minimize(rosenbrock, x0, method="Nelder-Mead")
  with pytest.raises(TypeError,
                     match="args argument to jax.scipy.optimize.minimize must be a tuple"):
    minimize(quadratic, x0, [2.0], method="BFGS")
  with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
    minimize(rosenbrock, x0, method="BFGS", options={"foo": 1})
  with pytest.raises(IndexError, match="x0 must be a 1-D array"):
    minimize(rosenbrock, np.float32(1.0), method="BFGS")
  with pytest.raises(TypeError,
                     match=r"x0 must be a 1-D array of shape \(n,\), got float32\[2,2\]"):
    minimize(rosenbrock, np.ones((2, 2), np.float32), method="BFGS")
  with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
    minimize(rosenbrock, np.ones(2, np.int32), method="BFGS")
