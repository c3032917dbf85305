"""Array.view, byteswap, flat, to_device, addressable/global shards and argpartition
against NumPy and JAX 0.10.2 (issue 13)."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp

VIEW_CASES = [
    (np.int32, np.float32), (np.int32, np.uint8), (np.int32, np.int16), (np.uint8, np.int32),
    (np.float32, np.uint16), (np.uint8, np.bool_), (np.bool_, np.uint8), (np.complex64, np.float32),
    (np.float32, np.complex64), (np.int16, np.float16),
]


@pytest.mark.parametrize("src, dst", VIEW_CASES)
@pytest.mark.parametrize("shape", [(4,), (2, 8), (3, 0)])
def test_view_matches_numpy(rng, src, dst, shape):
  x = rng.integers(0, 2 if src == np.bool_ else 100, shape).astype(src)
  if dst == np.bool_:
    x = (x % 2).astype(src)  # NumPy's bool views need bytes of 0 and 1
  want = x.view(dst)
  got = jnp.asarray(x).view(dst)
  assert got.dtype == want.dtype and got.shape == want.shape
  np.testing.assert_array_equal(got, want)
  np.testing.assert_array_equal(xjax.jit(lambda a: a.view(dst))(x), want)


def test_view_errors_and_identity():
  x = jnp.arange(3, dtype=jnp.int32)
  assert x.view() is x and x.view(np.int32) is x
  with pytest.raises(NotImplementedError, match="`type` argument of array.view"):
    x.view(np.uint8, type=np.ndarray)
  with pytest.raises(ValueError, match="size must be a divisor"):
    x.view(np.uint8)[:3].view(np.int32)
  with pytest.raises(ValueError, match="0d array"):
    jnp.int32(1).view(np.uint8)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.uint16, np.int8, np.float16,
                                   np.complex64])
@pytest.mark.parametrize("shape", [(5,), (2, 3), ()])
def test_byteswap_matches_numpy(rng, dtype, shape):
  x = rng.standard_normal(shape) * 100
  x = (x + 1j * x if np.issubdtype(dtype, np.complexfloating) else x).astype(dtype)
  got = jnp.asarray(x).byteswap()
  assert got.dtype == dtype
  np.testing.assert_array_equal(got.view(np.uint8) if got.ndim else got, x.byteswap().view(
      np.uint8) if x.ndim else x.byteswap())


def test_flat_raises_as_jax():
  with pytest.raises(NotImplementedError, match="do not implement the arr.flat property"):
    jnp.arange(3).flat


def test_shards_and_to_device():
  x = jnp.arange(4)
  (shard,) = x.addressable_shards
  assert shard.device == x.device and shard.index == (slice(None),) and shard.replica_id == 0
  np.testing.assert_array_equal(shard.data, x)
  assert x.global_shards[0].index == (slice(None),)
  assert x.addressable_data(0) is x
  with pytest.raises(IndexError):
    x.addressable_data(1)
  y = x.to_device(xjax.devices()[0])
  assert y.committed and y.device == xjax.devices()[0]
  with pytest.raises(ValueError, match="only accepts"):
    x.to_device(3)


def test_argpartition_method():
  np.testing.assert_array_equal(jnp.array([5, 1, 4, 2, 3, 0]).argpartition(2), [5, 1, 3, 0, 2, 4])


def test_searchsorted_method():
  a = jnp.arange(5)
  assert int(a.searchsorted(2.5)) == 3
  assert int(a.searchsorted(2, side="right")) == 3
  np.testing.assert_array_equal(a.searchsorted(np.array([0, 9])), [0, 5])


def test_contains_tobytes_and_jax_array_operands():
  x = jnp.arange(4)
  assert 1 in x and 100 not in x
  with pytest.raises(ValueError, match="search array must be one-dimensional"):
    1 in jnp.array(1)
  with pytest.raises(ValueError, match="query value must be a scalar"):
    jnp.arange(2) in jnp.arange(2)
  with pytest.raises(TypeError, match="unsupported operand type"):
    "abc" in jnp.arange(2)
  v = np.arange(12, dtype=np.int32).reshape(3, 4)
  for order in "CF":
    assert jnp.asarray(v).tobytes(order) == v.tobytes(order)
  with pytest.raises(xjax.errors.ConcretizationTypeError, match=r"tobytes\(\) method"):
    xjax.jit(lambda a: a.tobytes())(v)

  class ArrayLike:
    def __jax_array__(self):
      return jnp.array(3.0)
  np.testing.assert_array_equal(ArrayLike() * jnp.arange(3.0), [0.0, 3.0, 6.0])
  np.testing.assert_array_equal(jnp.arange(3.0) - ArrayLike(), [-3.0, -2.0, -1.0])


def test_astype_complex_to_real_is_deprecated():
  from xjax._src import deprecations
  x = jnp.array(2.0 + 1.5j, dtype="complex64")
  with pytest.warns(DeprecationWarning, match="Casting from complex to real dtypes"):
    assert x.astype("float32") == 2.0
  assert x.astype(bool)  # compares with zero, no warning
  assert not deprecations.is_accelerated("jax-numpy-astype-complex-to-real")
  with pytest.raises(ValueError, match="not registered"):
    deprecations.is_accelerated("no-such-deprecation")
  deprecations.register("xjax-test-deprecation")
  try:
    deprecations.accelerate("xjax-test-deprecation")
    with pytest.raises(ValueError, match="gone"):
      deprecations.warn("xjax-test-deprecation", "gone", stacklevel=1)
  finally:
    deprecations.unregister("xjax-test-deprecation")
