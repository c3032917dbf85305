"""angle, logaddexp2, bitwise_count, lexsort, sort_complex, partition, argpartition,
logspace and geomspace against NumPy (and JAX 0.10.2's choices where NumPy leaves
them open), eagerly, under jit and under vmap (issue 13)."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp


def _close(got, want, rtol=1e-5, atol=1e-6):
  got = np.asarray(got)
  assert got.shape == np.shape(want)
  np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# -- ufuncs -------------------------------------------------------------------------


@pytest.mark.parametrize("z", [np.array([1 + 1j, -1, -2j, 0], np.complex64),
                               np.array([1.5, -2.0, 0.0, -0.0], np.float32),
                               np.array([3, -1, 0], np.int32), np.array([], np.float32),
                               np.float32(-1.0)])
@pytest.mark.parametrize("deg", [False, True])
def test_angle_matches_numpy(z, deg):
  got = jnp.angle(z, deg=deg)
  assert got.dtype == (np.float32)
  _close(got, np.angle(z, deg=deg).astype(np.float32))
  _close(xjax.jit(jnp.angle, static_argnames="deg")(z, deg=deg), np.angle(z, deg=deg))


@pytest.mark.parametrize("x, y", [(1.0, 2.0), (np.array([1, 2], np.int32), 3),
                                  (np.array([-np.inf, np.inf, np.nan, 0.5], np.float32),
                                   np.array([-np.inf, np.inf, 1.0, -40.0], np.float32))])
def test_logaddexp2_matches_numpy(x, y):
  with np.errstate(invalid="ignore"):
    want = np.logaddexp2(np.asarray(x, np.float32), np.asarray(y, np.float32))
  _close(jnp.logaddexp2(x, y), want)
  assert jnp.logaddexp2(np.ones(2, np.int32), 1).dtype == np.float32


@pytest.mark.parametrize("x", [np.array([-3, 7, 0, -2 ** 31 + 1], np.int32),
                               np.array([255, 0, 128], np.uint8),
                               np.array([True, False]), np.array([-128, 127], np.int8)])
def test_bitwise_count_matches_numpy(x):
  got = jnp.bitwise_count(x)
  assert got.dtype == np.uint8
  np.testing.assert_array_equal(got, np.bitwise_count(x))
  np.testing.assert_array_equal(xjax.vmap(jnp.bitwise_count)(x), np.bitwise_count(x))


def test_bitwise_count_rejects_floats():
  with pytest.raises(TypeError, match="population_count does not accept dtype float32"):
    jnp.bitwise_count(np.ones(2, np.float32))


# -- sorting ---------------------------------------------------------------------------


@pytest.mark.parametrize("keys", [
    (np.array([1, 1, 0]), np.array([2, 1, 2])),
    np.array([[3, 1, 2], [0, 0, 1]]),
    (np.array([0.5, np.nan, 0.5, -1.0]), np.array([1, 1, 1, 1])),
    (np.array([[2, 1], [1, 2]]), np.array([[0, 0], [0, 0]])),
])
def test_lexsort_matches_numpy(keys):
  np.testing.assert_array_equal(jnp.lexsort(keys), np.lexsort(keys))
  np.testing.assert_array_equal(xjax.jit(jnp.lexsort)(keys), np.lexsort(keys))


def test_lexsort_axis_and_errors():
  k = (np.array([[3, 1], [2, 0]]), np.array([[0, 1], [1, 0]]))
  np.testing.assert_array_equal(jnp.lexsort(k, axis=0), np.lexsort(k, axis=0))
  with pytest.raises(TypeError, match="need sequence of keys with len > 0 in lexsort"):
    jnp.lexsort([])
  with pytest.raises(ValueError, match="all keys need to be the same shape"):
    jnp.lexsort([np.ones(3), np.ones(4)])


@pytest.mark.parametrize("a", [np.array([3, 1, 2], np.int32), np.array([1 + 2j, 1 - 1j, -3j]),
                               np.array([[2.0, -1.0], [0.5, 0.25]], np.float32)])
def test_sort_complex_matches_numpy(a):
  got = jnp.sort_complex(a)
  assert np.issubdtype(got.dtype, np.complexfloating)
  np.testing.assert_allclose(got, np.sort_complex(a))


@pytest.mark.parametrize("shape, axis", [((6,), -1), ((2, 5), 1), ((5, 3), 0), ((1,), 0)])
@pytest.mark.parametrize("kth", [0, 1, -1])
def test_partition_and_argpartition_partition(rng, shape, axis, kth):
  a = rng.integers(-5, 5, shape).astype(np.float32)
  a.flat[0] = np.nan
  n = shape[axis]
  if not -n <= kth < n:
    with pytest.raises(ValueError, match="out of bounds"):
      jnp.partition(a, kth, axis=axis)
    return
  k = kth % n
  part = np.asarray(jnp.partition(a, kth, axis=axis))
  idx = np.asarray(jnp.argpartition(a, kth, axis=axis))
  np.testing.assert_array_equal(np.sort(part, axis=axis), np.sort(a, axis=axis))
  np.testing.assert_array_equal(np.take_along_axis(a, idx, axis=axis), part)
  full = np.sort(a, axis=axis)
  np.testing.assert_array_equal(np.take(part, k, axis=axis), np.take(full, k, axis=axis))
  before, after = np.take(part, range(k), axis=axis), np.take(part, range(k + 1, n), axis=axis)
  kth_val = np.take(part, [k], axis=axis)
  with np.errstate(invalid="ignore"):
    assert np.all((before <= kth_val) | np.isnan(kth_val))
    assert np.all((after >= kth_val) | np.isnan(after))


def test_partition_layout_matches_jax():
  # JAX's order: the low part ascending, the rest descending.
  a = np.array([5, 1, 4, 2, 3, 0])
  np.testing.assert_array_equal(jnp.partition(a, 2), [0, 1, 2, 5, 4, 3])
  np.testing.assert_array_equal(jnp.argpartition(a, 2), [5, 1, 3, 0, 2, 4])
  np.testing.assert_array_equal(xjax.vmap(lambda r: jnp.partition(r, 0))(a.reshape(2, 3)),
                                [[1, 5, 4], [0, 3, 2]])
  with pytest.raises(TypeError):
    jnp.partition(np.ones(3), 1.5)


# -- creation ----------------------------------------------------------------------------


@pytest.mark.parametrize("args, kwargs", [
    ((0, 2, 3), {}), ((0, 3, 4), dict(base=2.0, endpoint=False)), ((1, 1, 1), {}),
    ((0, 2, 0), {}), ((np.array([0.0, 1.0]), 2, 3), dict(axis=1)),
    ((-1.0, 2.0, 5), dict(base=np.e)), ((0, 2, 3), dict(dtype=np.int32)),
])
def test_logspace_matches_numpy(args, kwargs):
  want = np.logspace(*args, **kwargs)
  got = jnp.logspace(*args, **kwargs)
  assert got.dtype == (np.dtype(kwargs["dtype"]) if "dtype" in kwargs else np.float32)
  _close(got, want.astype(got.dtype), rtol=1e-5)


@pytest.mark.parametrize("args, kwargs", [
    ((1, 1000, 4), {}), ((-1, -1000, 4), {}), ((1, 1000, 4), dict(dtype=np.int32)),
    ((np.array([1.0, 10.0]), 1000, 3), dict(axis=-1)), ((2, 32, 5), dict(endpoint=False)),
    ((1, 2, 0), {}),
])
def test_geomspace_matches_numpy(args, kwargs):
  want = np.geomspace(*args, **kwargs)
  got = jnp.geomspace(*args, **kwargs)
  if "dtype" in kwargs:
    np.testing.assert_array_equal(got, want)
  else:
    _close(got, want.astype(np.float32), rtol=2e-6)


def test_geomspace_zero_or_sign_change_gives_nan_as_jax():
  assert np.isnan(np.asarray(jnp.geomspace(0, 10, 3))).all()
  assert np.isnan(np.asarray(jnp.geomspace(-1, 10, 3))).all()


def test_logspace_negative_num_raises():
  with pytest.raises(ValueError, match="Number of samples, -1, must be non-negative."):
    jnp.logspace(0, 1, -1)
