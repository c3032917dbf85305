"""xjax.scipy.cluster.vq.vq against scipy.cluster.vq.vq: codes and distances, 1-D and
2-D inputs, dtypes, ties, jit and vmap against eager, gradients of the distances, errors."""
import numpy as np
import pytest
import scipy.cluster.vq as osp_vq

import xjax
from xjax.scipy.cluster.vq import vq
from xjax.test_util import check_grads


@pytest.mark.parametrize("obs_shape,book_shape", [((20, 3), (5, 3)), ((9,), (4,)), ((1, 2), (1, 2)),
                                                  ((6, 1), (3, 1))])
def test_vq_matches_scipy(obs_shape, book_shape, rng, x64):
  obs, book = rng.normal(size=obs_shape), rng.normal(size=book_shape)
  code, dist = vq(obs, book)
  expected_code, expected_dist = osp_vq.vq(obs, book)
  np.testing.assert_array_equal(code, expected_code)
  np.testing.assert_allclose(dist, expected_dist, rtol=1e-13)
  assert code.shape == dist.shape == (obs_shape[0],)


def test_vq_dtypes_ties_and_edges(x64):
  obs = np.array([[1.1, 2.1, 3.1], [5.9, 4.8, 6.2]])
  book = np.array([[1.0, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]])
  code, dist = vq(obs, book)
  np.testing.assert_array_equal(code, [0, 3])
  np.testing.assert_allclose(dist, [np.sqrt(0.03), np.sqrt(1.9**2 + 0.2**2 + 0.2**2)], rtol=1e-14)
  assert dist.dtype == np.float64 and np.issubdtype(code.dtype, np.integer)
  code, dist = vq(np.array([1, 5], np.int32), np.array([0, 2, 4, 6], np.int32))
  np.testing.assert_array_equal(code, [0, 2])  # ties (1: 0|2, 5: 4|6) go to the first code
  np.testing.assert_array_equal(dist, [1.0, 1.0])
  assert dist.dtype == np.float32  # int32 promotes to float32, as in JAX
  code, dist = vq(np.array([[np.inf, 0.0]]), np.array([[0.0, 0.0], [1.0, 1.0]]))
  assert dist[0] == np.inf
  with xjax._src.config.enable_x64(False):
    assert vq(obs, book)[1].dtype == np.float32


def test_vq_jit_vmap_grad(rng):
  obs, book = rng.normal(size=(3, 8, 2)).astype(np.float32), rng.normal(size=(4, 2)).astype(np.float32)
  code, dist = xjax.jit(vq)(obs[0], book)
  eager_code, eager_dist = vq(obs[0], book)
  np.testing.assert_array_equal(code, eager_code)
  np.testing.assert_allclose(dist, eager_dist, rtol=1e-6)
  codes, dists = xjax.vmap(vq, in_axes=(0, None))(obs, book)
  for i in range(3):
    np.testing.assert_array_equal(codes[i], vq(obs[i], book)[0])
    np.testing.assert_allclose(dists[i], vq(obs[i], book)[1], rtol=1e-6)
  with xjax._src.config.enable_x64(True):
    check_grads(lambda o, b: vq(o, b)[1], (obs[0].astype(np.float64), book.astype(np.float64)),
                order=1)


def test_vq_errors():
  with pytest.raises(ValueError, match="Observation and code_book should have the same rank"):
    vq(np.ones((3, 2)), np.ones(2))
  with pytest.raises(ValueError, match="ndim different than 1 or 2 are not supported"):
    vq(np.ones((2, 3, 2)), np.ones((2, 3, 2)))
  with pytest.raises(TypeError):
    vq([[1.0, 2.0]], np.ones((2, 2)))
