"""jax.ops segment reductions against NumPy's unbuffered ufunc.at (np.add.at, ...) over random
data and ids (out-of-range ids, negative ones included, are dropped), eager and under jit,
vmap and grad, with JAX's errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp
from xjax import ops

REFS = {"segment_sum": (np.add, 0), "segment_prod": (np.multiply, 1),
        "segment_max": (np.maximum, -np.inf), "segment_min": (np.minimum, np.inf)}


def _reference(name, data, ids, num_segments):
  ufunc, identity = REFS[name]
  out = np.full((num_segments, *data.shape[1:]), identity, data.dtype)
  keep = (ids >= 0) & (ids < num_segments)
  ufunc.at(out, ids[keep], data[keep])
  return out


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(REFS)), n=st.integers(0, 12), num_segments=st.integers(0, 6),
       width=st.integers(1, 3), seed=st.integers(0, 2**31 - 1))
def test_segment_reductions_match_numpy(name, n, num_segments, width, seed):
  rng = np.random.default_rng(seed)
  data = rng.uniform(-2, 2, (n, width)).astype(np.float32)
  ids = rng.integers(-2, num_segments + 2, n).astype(np.int32)
  want = _reference(name, data, ids, num_segments)
  fn = getattr(ops, name)
  np.testing.assert_allclose(fn(data, ids, num_segments), want, rtol=1e-5)
  np.testing.assert_allclose(xjax.jit(fn, static_argnums=2)(data, ids, num_segments), want,
                             rtol=1e-5)
  if n:
    np.testing.assert_allclose(fn(data, ids, num_segments, bucket_size=3), want, rtol=1e-5)


def test_default_num_segments_integers_and_bools():
  ids = jnp.array([0, 0, 2])
  np.testing.assert_array_equal(ops.segment_sum(jnp.array([1, 2, 3]), ids), [3, 0, 3])
  np.testing.assert_array_equal(ops.segment_max(jnp.array([1, 2, 3]), ids),
                                [2, np.iinfo(np.int32).min, 3])
  np.testing.assert_array_equal(ops.segment_min(jnp.array([True, False, True]), ids),
                                [False, True, True])
  assert ops.segment_sum(jnp.zeros((0, 2)), jnp.zeros(0, jnp.int32)).shape == (0, 2)


def test_transformations_of_segment_sum():
  data = jnp.arange(12.0).reshape(6, 2)
  ids = jnp.array([0, 2, 2, -1, 5, 0])
  grad = xjax.grad(lambda d: ops.segment_sum(d, ids, 4).sum())(data)
  np.testing.assert_array_equal(grad, np.where((np.asarray(ids) >= 0) & (np.asarray(ids) < 4),
                                               1.0, 0.0)[:, None] * np.ones((6, 2)))
  batched = xjax.vmap(lambda d: ops.segment_max(d, ids, 4))(jnp.stack([data, -data]))
  np.testing.assert_array_equal(batched[1], ops.segment_max(-data, ids, 4))


def test_segment_errors():
  data, ids = jnp.ones((3, 2)), jnp.array([0, 1, 1])
  with pytest.raises(xjax.errors.ConcretizationTypeError):
    xjax.jit(lambda d, i: ops.segment_sum(d, i))(data, ids)  # num_segments from traced ids
  with pytest.raises(ValueError, match="num_segments must be non-negative"):
    ops.segment_sum(data, ids, -1)
  with pytest.raises(TypeError, match="segment_ids must be an integer array"):
    ops.segment_sum(data, jnp.array([0.0, 1.0, 1.0]), 2)
  with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
    ops.segment_sum([1.0, 2.0], ids, 2)
  with pytest.raises(NotImplementedError, match="out_sharding"):
    ops.segment_sum(data, ids, 2, out_sharding=object())
