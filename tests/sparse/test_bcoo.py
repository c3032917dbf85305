"""`xjax.experimental.sparse.BCOO` (unbatched layout) against dense computation."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax.experimental.sparse import BCOO, bcoo_fromdense, bcoo_todense

M = np.array([[0., 2., 0.], [1., 0., 4.]], np.float32)


def test_bcoo_fromdense_layout_matches_jax():
  m = BCOO.fromdense(M)
  assert repr(m) == "BCOO(float32[2, 3], nse=3)"
  np.testing.assert_array_equal(m.data, [2., 1., 4.])
  np.testing.assert_array_equal(m.indices, [[0, 1], [1, 0], [1, 2]])
  assert m.indices.dtype == np.int32 and (m.n_batch, m.n_sparse, m.n_dense) == (0, 2, 0)


def test_bcoo_fromdense_pads_with_out_of_range_indices():
  m = bcoo_fromdense(M, nse=5)
  np.testing.assert_array_equal(m.data, [2., 1., 4., 0., 0.])
  np.testing.assert_array_equal(m.indices[3:], [[2, 3], [2, 3]])
  np.testing.assert_array_equal(bcoo_todense(m), M)


def test_bcoo_fromdense_under_jit_needs_nse():
  out = xjax.jit(lambda x: BCOO.fromdense(x, nse=2))(jnp.eye(3))
  np.testing.assert_array_equal(out.indices, [[0, 0], [1, 1]])
  with pytest.raises(xjax.errors.ConcretizationTypeError):
    xjax.jit(lambda x: BCOO.fromdense(x))(jnp.eye(3))


def test_bcoo_todense_adds_duplicates():
  m = BCOO((jnp.array([1., 2., 3.]), jnp.array([[0, 0], [0, 0], [1, 2]])), shape=(2, 3))
  np.testing.assert_array_equal(m.todense(), [[3., 0., 0.], [0., 0., 3.]])


def test_bcoo_from_scipy_sparse_round_trips():
  sp = pytest.importorskip("scipy.sparse")
  a = sp.csr_matrix(M)
  m = BCOO.from_scipy_sparse(a)
  assert m.shape == (2, 3) and m.nse == 3
  np.testing.assert_array_equal(m.todense(), M)


@pytest.mark.parametrize("rhs_shape", [(3,), (3, 2), (4, 3, 2)])
def test_bcoo_matmul_matches_dense(rng, rhs_shape):
  rhs = rng.standard_normal(rhs_shape).astype(np.float32)
  m = bcoo_fromdense(M, nse=4)
  np.testing.assert_allclose(m @ rhs, M @ rhs, rtol=1e-6)


@pytest.mark.parametrize("lhs_shape", [(2,), (5, 2)])
def test_bcoo_rmatmul_matches_dense(rng, lhs_shape):
  lhs = rng.standard_normal(lhs_shape).astype(np.float32)
  np.testing.assert_allclose(jnp.asarray(lhs) @ BCOO.fromdense(M), lhs @ M, rtol=1e-6)


def test_bcoo_matmul_shape_mismatch_raises():
  with pytest.raises(ValueError, match="contracting"):
    BCOO.fromdense(M) @ jnp.ones(2)


def test_bcoo_elementwise_and_structure_match_dense(rng):
  m = BCOO.fromdense(M)
  other = rng.standard_normal((2, 3)).astype(np.float32)
  np.testing.assert_allclose((m * other).todense(), M * other, rtol=1e-6)
  np.testing.assert_array_equal((2 * m).todense(), 2 * M)
  np.testing.assert_array_equal((-m).todense(), -M)
  np.testing.assert_array_equal(m.T.todense(), M.T)
  np.testing.assert_array_equal(m.sum(axis=1).todense(), M.sum(1))
  np.testing.assert_array_equal(m.sum(0).todense(), M.sum(0))
  assert float(m.sum()) == M.sum()


def test_bcoo_is_a_pytree_and_differentiable():
  m = BCOO.fromdense(M)
  leaves, treedef = xjax.tree_util.tree_flatten(m)
  assert len(leaves) == 2
  back = xjax.tree_util.tree_unflatten(treedef, leaves)
  np.testing.assert_array_equal(back.todense(), M)
  grad = xjax.grad(lambda d: (BCOO((d, m.indices), shape=m.shape) @ jnp.arange(3.)).sum())
  np.testing.assert_array_equal(grad(m.data), [1., 0., 2.])
  out = xjax.jit(lambda s, v: s @ v)(m, jnp.ones(3))
  np.testing.assert_array_equal(out, M.sum(1))


def test_bcoo_bad_input_raises():
  with pytest.raises(TypeError, match="indices must be an integer"):
    BCOO((jnp.ones(2), jnp.ones((2, 2))), shape=(2, 2))
  with pytest.raises(ValueError, match="data has 3 entries"):
    BCOO((jnp.ones(3), jnp.zeros((2, 2), jnp.int32)), shape=(2, 2))
  with pytest.raises(ValueError, match="shape"):
    BCOO((jnp.ones(2), jnp.zeros((2, 2), jnp.int32)), shape=(2, 2, 2))
  with pytest.raises(NotImplementedError, match="n_batch"):
    BCOO.fromdense(M, n_batch=1)


def test_jnp_shape_and_ndim_read_a_shape_attribute():
  # As in JAX (numpyro's CAR distribution asks for the shape of a SciPy sparse matrix).
  sp = pytest.importorskip("scipy.sparse")
  a = sp.csr_matrix(M)
  assert jnp.shape(a) == (2, 3) and jnp.ndim(a) == 2
  assert jnp.shape(BCOO.fromdense(M)) == (2, 3) and jnp.ndim(BCOO.fromdense(M)) == 2
