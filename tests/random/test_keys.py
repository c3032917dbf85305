"""Typed keys (key<fry>) and raw keys: dtype, structure, data access, printing.

Bit-exact values against JAX are in test_random_goldens.py; these tests check
the key-array API through relations that must hold (indexing a split equals
the split's rows, wrap/unwrap round trips, raw and typed keys agree).
"""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import random


def _data(k):
  return np.asarray(random.key_data(k))


def test_key_dtype_is_extended_prng_key_dtype():
  k = random.key(0)
  assert k.dtype.name == "key<fry>" and str(k.dtype) == "key<fry>"
  assert jnp.issubdtype(k.dtype, xjax.dtypes.prng_key)
  assert jnp.issubdtype(k.dtype, xjax.dtypes.extended)
  assert not jnp.issubdtype(k.dtype, np.integer)
  assert k.shape == () and k.ndim == 0 and k.size == 1 and k.itemsize == 8
  assert k.dtype == random.key_dtype("threefry2x32")
  assert random.key_impl(k) == "threefry2x32"


def test_key_prints_its_data():
  assert repr(random.key(0)) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"
  assert str(random.key(0)) == repr(random.key(0))


def test_raw_and_typed_keys_give_the_same_samples():
  raw, typed = random.PRNGKey(7), random.key(7)
  assert raw.dtype == np.uint32 and raw.shape == (2,)
  np.testing.assert_array_equal(raw, _data(typed))
  np.testing.assert_array_equal(random.normal(raw, (3,)), random.normal(typed, (3,)))
  np.testing.assert_array_equal(random.split(raw), _data(random.split(typed)))
  np.testing.assert_array_equal(random.fold_in(raw, 3), _data(random.fold_in(typed, 3)))
  assert isinstance(random.split(raw), xjax.Array)  # raw in, raw out


def test_wrap_key_data_round_trips():
  keys = random.split(random.key(1), (2, 3))
  data = random.key_data(keys)
  assert data.shape == (2, 3, 2) and data.dtype == np.uint32
  again = random.wrap_key_data(data)
  assert again.shape == (2, 3) and bool((again == keys).all())
  clone = random.clone(keys)  # a new key object with the same data, as in JAX
  assert clone is not keys
  assert np.array_equal(random.key_data(clone), random.key_data(keys))


def test_key_indexing_and_reshaping_act_on_key_axes():
  keys = random.split(random.key(2), (2, 3))
  data = _data(keys)
  np.testing.assert_array_equal(_data(keys[1]), data[1])
  np.testing.assert_array_equal(_data(keys[:, 2]), data[:, 2])
  np.testing.assert_array_equal(_data(keys[..., 0]), data[..., 0, :])
  np.testing.assert_array_equal(_data(keys[None]), data[None])
  assert keys.reshape(6).shape == (6,) and keys.reshape(3, -1).shape == (3, 2)
  np.testing.assert_array_equal(_data(keys.ravel()), data.reshape(6, 2))
  np.testing.assert_array_equal(_data(keys.T), data.transpose(1, 0, 2))
  assert keys[:1].squeeze(0).shape == (3,)
  assert [k.shape for k in keys] == [(3,), (3,)] and len(keys) == 2


def test_concrete_keys_indexed_by_traced_index_inside_scan_and_jit():
  # numpyro's subsample: concrete keys closed over, indexed by the scan's traced counter.
  keys = random.split(random.key(3), 4)
  data = _data(keys)
  _, rows = xjax.lax.scan(lambda c, i: (c, random.key_data(keys[i])), 0, jnp.arange(4))
  np.testing.assert_array_equal(rows, data)
  picked = xjax.jit(lambda i: random.key_data(keys[i]))(jnp.array([2, 0]))
  np.testing.assert_array_equal(picked, data[[2, 0]])


def test_split_rows_are_usable_keys():
  k1, k2 = random.split(random.key(0))
  assert k1.shape == () and not bool(k1 == k2)
  assert random.split(random.key(0), 0).shape == (0,)


def test_stack_and_concatenate_keys():
  a, b = random.split(random.key(3))
  stacked = jnp.stack([a, b])
  assert stacked.dtype.name == "key<fry>" and stacked.shape == (2,)
  np.testing.assert_array_equal(_data(stacked), _data(random.split(random.key(3))))
  keys = random.split(random.key(4), (2, 3))
  assert jnp.concatenate([keys, keys], axis=-1).shape == (2, 6)
  assert jnp.stack([keys, keys], axis=-1).shape == (2, 3, 2)
  with pytest.raises(TypeError, match="non-key arrays"):
    jnp.stack([a, jnp.zeros(2, jnp.uint32)])


def test_keys_equal_by_data():
  keys = random.split(random.key(5), 3)
  np.testing.assert_array_equal(keys == random.split(random.key(5), 3), [True, True, True])
  np.testing.assert_array_equal(keys == keys[::-1], [False, True, False])
  np.testing.assert_array_equal(keys != random.split(random.key(6), 3), [True, True, True])


def test_seed_wraps_to_32_bits_without_x64_and_not_with_it():
  assert _data(random.key(2 ** 32 + 5)).tolist() == [0, 5]
  with xjax._src.config.enable_x64(True):
    assert _data(random.key(2 ** 32 + 5)).tolist() == [1, 5]


def test_float_seed_is_rejected():
  with pytest.raises(TypeError, match="PRNG key seed must be an integer"):
    random.key(1.5)


def test_stream_layout_flag_changes_the_stream():
  from xjax._src.config import config
  k = random.key(0)
  original = _data(random.split(k))
  with config.override("jax_threefry_partitionable", True):
    partitionable = _data(random.split(k))
    jitted = _data(xjax.jit(random.split)(k))
  assert not np.array_equal(original, partitionable)
  np.testing.assert_array_equal(partitionable, jitted)
  np.testing.assert_array_equal(original, _data(xjax.jit(random.split)(k)))


@pytest.mark.slow
def test_partitionable_env_var_is_read_at_start():
  import os
  import subprocess
  import sys
  code = ("import xjax; from xjax import random; "
          "print(random.key_data(random.split(random.key(0)))[0].tolist())")
  env = {**os.environ, "JAX_THREEFRY_PARTITIONABLE": "1"}
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       check=True).stdout
  with xjax._src.config.config.override("jax_threefry_partitionable", True):
    expected = _data(random.split(random.key(0)))[0].tolist()
  assert out.strip() == str(expected)
