"""device_put as JAX 0.10.2: prefix-error report, reuse of arrays already in place, typed
host values keep their dtype."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax._src import literals
from xjax._src.jax_compat.private import literals as private_literals


def test_prefix_error_lists_every_mismatch():
  x = {"a": jnp.arange(2), "b": jnp.arange(3)}
  with pytest.raises(ValueError, match=r"(?s)device_put device specification must be a tree "
                     r"prefix of the corresponding value; \n  Mismatch details \(2 found\):.*"
                     r"device_put device\['a'\].*different type.*device_put device\['b'\]"):
    jax.device_put(x, device={"a": [None, None], "b": (None, None)})
  with pytest.raises(ValueError, match=r"(?s)Mismatch details \(1 found\).*different lengths "
                     r"of tuple"):
    jax.device_put((1, 2, 3), device=(None, None))
  # A None in a valid prefix still places its subtree on the default device.
  out = jax.device_put(x, device={"a": None, "b": jax.devices()[0]})
  assert out["b"].committed and not out["a"].committed


def test_arrays_already_in_place_are_reused_unless_a_copy_is_asked():
  arr = jax.device_put(np.arange(8), jax.devices()[0])
  assert jax.device_put(arr) is arr
  assert jax.device_put(arr, may_alias=True) is arr
  assert jax.device_put(arr, jax.sharding.SingleDeviceSharding(jax.devices()[0])) is arr
  copy = jax.device_put(arr, may_alias=False)
  assert copy is not arr
  np.testing.assert_array_equal(copy, arr)


def test_typed_host_values_keep_their_dtype():
  assert jax.device_put(literals.TypedInt(1, np.dtype(np.int64))).dtype == np.int64
  assert jax.device_put(literals.TypedInt(1, np.dtype(np.int32))).dtype == np.int32
  typed = private_literals.TypedNdArray(np.array([1], np.int64))
  assert jax.device_put(typed).dtype == np.int64
