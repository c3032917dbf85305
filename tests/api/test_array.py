"""Array: Python protocols, host access, immutability, device methods."""
import copy
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp


def test_array_properties():
  x = jnp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
  assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6
  assert x.dtype == np.float32 and x.itemsize == 4 and x.nbytes == 24
  assert isinstance(x, xjax.Array) and isinstance(x, jnp.ndarray)


def test_array_is_immutable():
  x = jnp.zeros(3)
  with pytest.raises(TypeError, match=r"JAX arrays are immutable.*x\.at\[idx\]\.set\(y\)"):
    x[0] = 1.0
  with pytest.raises(TypeError, match="unhashable type"):
    hash(x)


def test_host_conversions():
  x = jnp.array([1.5, 2.5])
  np.testing.assert_array_equal(np.asarray(x), [1.5, 2.5])
  assert x.tolist() == [1.5, 2.5]
  assert jnp.array(3).item() == 3
  assert float(jnp.array(2.5)) == 2.5 and int(jnp.array(7)) == 7
  assert complex(jnp.array(1.0)) == 1 + 0j
  assert [1, 2, 3][jnp.array(1)] == 2  # __index__
  with pytest.raises(TypeError, match="Only integer scalar arrays can be converted to a"):
    [1, 2][jnp.array(1.0)]
  assert bool(jnp.array(True)) and not bool(jnp.array(0.0))
  with pytest.raises(ValueError, match="truth value of an array with more than one element"):
    bool(jnp.ones(2))


def test_len_and_iteration():
  x = jnp.array([[1, 2], [3, 4], [5, 6]])
  assert len(x) == 3
  with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
    len(jnp.array(1))
  rows = [np.asarray(r).tolist() for r in x]
  assert rows == [[1, 2], [3, 4], [5, 6]]


def test_dlpack_round_trip_to_numpy():
  x = jnp.array([1.0, 2.0, 3.0])
  y = np.from_dlpack(x)
  np.testing.assert_array_equal(y, [1.0, 2.0, 3.0])
  assert x.__dlpack_device__() == (1, 0)


def test_block_until_ready_and_async_copy():
  x = jnp.ones((4, 4)) * 3
  x.copy_to_host_async()
  assert x.block_until_ready() is x
  assert x.is_ready()
  assert x.devices() == {xjax.devices()[0]} and x.device == xjax.devices()[0]


def test_delete_then_use_raises():
  x = jnp.ones(2) + 1
  x.delete()
  assert x.is_deleted()
  with pytest.raises(RuntimeError, match="deleted"):
    np.asarray(x)


def test_pickle_and_copy():
  x = jnp.array([1, 2, 3], dtype=jnp.int32)
  y = pickle.loads(pickle.dumps(x))
  assert isinstance(y, xjax.Array) and y.dtype == np.int32
  np.testing.assert_array_equal(y, x)
  # As in JAX: copies are new arrays in buffers of their own, eagerly and under jit
  for c in (copy.copy(x), copy.deepcopy(x), xjax.jit(copy.copy)(x),
            xjax.jit(copy.deepcopy)(x)):
    assert c is not x and c.unsafe_buffer_pointer() != x.unsafe_buffer_pointer()
    np.testing.assert_array_equal(c, x)
  with pytest.raises(TypeError, match="tracers cannot be pickled"):
    xjax.jit(pickle.dumps)(x)


def test_format_of_scalars():
  assert f"{jnp.array(3.14159):.2f}" == "3.14"


def test_bfloat16_round_trip():
  x = jnp.array([1.0, 2.5], dtype=jnp.bfloat16)
  assert x.dtype == jnp.bfloat16
  assert repr(x) == "Array([1, 2.5], dtype=bfloat16)"
  assert np.asarray(x + x).tolist() == [2.0, 5.0]


def _run(code, **env):
  full_env = dict(os.environ, **env)
  proc = subprocess.run([sys.executable, "-c", code], env=full_env, capture_output=True, text=True)
  assert proc.returncode == 0, proc.stderr
  return proc.stdout.strip()


@pytest.mark.slow
def test_x64_from_environment_variable():
  code = "import xjax.numpy as jnp; print(jnp.array(1.5).dtype, jnp.array([1, 2]).dtype)"
  assert _run(code, JAX_ENABLE_X64="1") == "float64 int64"
  assert _run(code, JAX_ENABLE_X64="0") == "float32 int32"


@pytest.mark.slow
def test_x64_from_config_update():
  code = ("import xjax; xjax.config.update('jax_enable_x64', True)\n"
          "import xjax.numpy as jnp; print(jnp.ones(2).dtype, (jnp.ones(2) + 1).dtype)")
  assert _run(code) == "float64 float64"


def test_float64_request_warns_without_x64():
  with pytest.warns(UserWarning, match="Explicitly requested dtype float64 requested in zeros is not available"):
    x = jnp.zeros(2, dtype=jnp.float64)
  assert x.dtype == np.float32


def test_saturating_float_to_uint8_cast():
  x = jnp.array([254.0, 255.0, 256.0, 257.0])
  assert repr(x.astype("uint8")) == "Array([254, 255, 255, 255], dtype=uint8)"


def test_on_device_size_in_bytes_matches_jax():
  # Values recorded from JAX 0.10.2 on CPU: 4 bytes per float32; int4 takes a byte each.
  assert jnp.ones((3, 4)).on_device_size_in_bytes() == 48
  assert jnp.ones(5, jnp.int4).on_device_size_in_bytes() == 5
  x = jnp.ones(2)
  x.delete()
  with pytest.raises(RuntimeError, match="deleted"):
    x.on_device_size_in_bytes()


def test_unsafe_buffer_pointer_sees_donated_buffer_reuse():
  x = jnp.arange(4.0)
  p = x.unsafe_buffer_pointer()
  assert isinstance(p, int) and p != 0
  assert jnp.copy(x).unsafe_buffer_pointer() != p
  y = xjax.jit(lambda v: v * 2, donate_argnums=0)(x)  # XLA writes into the donated buffer
  assert y.unsafe_buffer_pointer() == p
  with pytest.raises(RuntimeError, match="deleted"):
    x.unsafe_buffer_pointer()
