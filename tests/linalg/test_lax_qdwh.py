"""lax.linalg.qdwh: the polar decomposition against SciPy, padded inputs, errors."""
import numpy as np
import pytest
import scipy.linalg

import xjax
from xjax._src import test_util as jtu
from xjax.lax import linalg as L


@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-5), (np.float64, 1e-12),
                                        (np.complex64, 2e-5), (np.complex128, 1e-12)])
@pytest.mark.parametrize("shape", [(5, 5), (7, 3), (1, 1)])
def test_qdwh_matches_scipy_polar(rng, x64, dtype, tol, shape):
  x = rng.standard_normal(shape)
  if np.issubdtype(dtype, np.complexfloating):
    x = x + 1j * rng.standard_normal(shape)
  x = x.astype(dtype)
  u, h, num_iters, is_converged = xjax.jit(L.qdwh)(x)
  u_ref, h_ref = scipy.linalg.polar(x)
  assert u.dtype == dtype and h.dtype == dtype and u.shape == shape
  np.testing.assert_allclose(u, u_ref, atol=tol * 10, rtol=0)
  np.testing.assert_allclose(h, h_ref, atol=tol * 10 * np.abs(h_ref).max(), rtol=0)
  np.testing.assert_allclose(np.asarray(u) @ np.asarray(h), x, atol=tol * 10 * np.abs(x).max())
  assert bool(is_converged) and 0 < int(num_iters) <= 10
  assert num_iters.weak_type


def test_qdwh_dynamic_shape_ignores_the_padding(rng):
  x = rng.standard_normal((6, 4)).astype(np.float32)
  padded = np.full((9, 7), 5.0, np.float32)
  padded[:6, :4] = x
  u, h, _, _ = L.qdwh(padded, dynamic_shape=(6, 4))
  u_ref, h_ref = scipy.linalg.polar(x)
  np.testing.assert_allclose(np.asarray(u)[:6, :4], u_ref, atol=2e-5)
  np.testing.assert_allclose(np.asarray(h)[:4, :4], h_ref, atol=2e-5 * np.abs(h_ref).max())
  assert np.all(np.asarray(u)[6:] == 0) and np.all(np.asarray(u)[:, 4:] == 0)


def test_qdwh_zero_matrix_and_max_iterations(rng):
  u, h, _, _ = L.qdwh(np.zeros((3, 3), np.float32))
  assert np.all(np.asarray(h) == 0)
  x = rng.standard_normal((4, 4)).astype(np.float32)
  _, _, num_iters, is_converged = L.qdwh(x, max_iterations=1)
  assert int(num_iters) == 1 and not bool(is_converged)


def test_qdwh_forward_derivative(rng, x64):
  x = rng.standard_normal((4, 3))
  jtu.check_grads(lambda x: L.qdwh(x)[0], (x,), order=1, modes=("fwd",), atol=1e-5, rtol=1e-5)


def test_qdwh_rejects_wide_matrices():
  with pytest.raises(ValueError, match="The input matrix of shape M x N must have M >= N."):
    L.qdwh(np.ones((2, 3), np.float32))
