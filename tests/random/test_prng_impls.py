"""PRNG implementations other than threefry2x32: JAX's RngBitGenerator PRNGs (``rbg``,
``unsafe_rbg``), user PRNGImpls (JAX's one-key signature), ``jax_default_prng_impl``, and key
arrays' operators and gradients."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import random
from xjax._src import config
from xjax._src.random import prng
from xjax._src.random import threefry

# JAX 0.10.2's values (jax_threefry_partitionable=True, its default), for random.key(3, impl=...).
JAX = {
    "rbg": dict(
        data=[0, 3, 0, 3],
        split=[[3716834203, 3481239269, 3716834203, 3481239269],
               [1946498123, 2217676430, 1946498123, 2217676430],
               [1024511538, 2603795180, 1024511538, 2603795180]],
        fold_in=[2647473427, 4234374204, 2647473427, 4234374204],
        uniform=[0.7327027320861816, 0.7895294427871704, 0.4403529167175293,
                 0.3442070484161377],
        randint=[73, 6, 47, 77], vmap_randint=[28, 65, 5], gamma=4.361684322357178),
    "unsafe_rbg": dict(
        data=[0, 3, 0, 3],
        split=[[3146934739, 3391003311, 1891301882, 1478358120],
               [1089363569, 1607244725, 1190331783, 2650401737],
               [3322181929, 3504230603, 1403867051, 2830808211]],
        fold_in=[2104303640, 250182024, 1106406590, 1983638453],
        uniform=[0.7327027320861816, 0.7895294427871704, 0.4403529167175293,
                 0.3442070484161377],
        randint=[9, 41, 27, 56], vmap_randint=[73, 6, 65], gamma=0.44849711656570435),
}


@pytest.mark.parametrize("impl", ["rbg", "unsafe_rbg"])
@config.threefry_partitionable(True)
def test_rbg_impls_match_jax(impl):
  want = JAX[impl]
  k = random.key(3, impl=impl)
  assert str(k.dtype) == ("key<rbg>" if impl == "rbg" else "key<urbg>")
  np.testing.assert_array_equal(random.key_data(k), want["data"])
  ks = random.split(k, 3)
  np.testing.assert_array_equal(random.key_data(ks), want["split"])
  np.testing.assert_array_equal(random.key_data(random.fold_in(k, 7)), want["fold_in"])
  np.testing.assert_array_equal(random.uniform(k, (4,)), np.float32(want["uniform"]))
  np.testing.assert_array_equal(random.randint(k, (4,), 0, 100), want["randint"])
  np.testing.assert_array_equal(xjax.vmap(lambda k: random.randint(k, (), 0, 100))(ks),
                                want["vmap_randint"])
  np.testing.assert_allclose(float(random.gamma(k, 2.0)), want["gamma"], rtol=1e-6)


def test_default_prng_impl_config():
  assert random.key(0).dtype == random.key_dtype("threefry2x32")
  with config.default_prng_impl("rbg"):
    assert random.PRNGKey(0).shape == (4,)
    assert str(random.key(0).dtype) == "key<rbg>"
    assert random.key_data(random.split(random.PRNGKey(1))).shape == (2, 4)
  with pytest.raises(ValueError):
    config.config.update("jax_default_prng_impl", "philox")


def _pair_seed(seed):
  return jnp.vstack([threefry.threefry_seed(seed), threefry.threefry_seed(seed ^ 3)])


PAIR = prng.PRNGImpl(
    key_shape=(2, 2), seed=_pair_seed,
    split=lambda k, shape: xjax.vmap(lambda h: threefry.threefry_split(h, shape, False),
                                     out_axes=len(shape))(k),
    random_bits=lambda k, bw, shape: threefry.threefry_random_bits(k[0], bw, shape, False),
    fold_in=lambda k, d: jnp.vstack([threefry.threefry_fold_in(k[0], d),
                                     threefry.threefry_fold_in(k[1], d)]),
    name="pair", tag="fry2")


def test_user_impl_functions_are_used_per_key():
  key = prng.random_seed(73, impl=PAIR)
  assert key.shape == () and str(key.dtype) == "key<fry2>"
  data = np.asarray(random.key_data(key))
  np.testing.assert_array_equal(data, np.asarray(_pair_seed(np.uint32(73))))
  keys = random.split(key, 3)
  np.testing.assert_array_equal(random.key_data(keys), np.asarray(PAIR.split(data, (3,))))
  np.testing.assert_array_equal(random.key_data(xjax.vmap(random.split)(keys))[1],
                                random.key_data(random.split(keys[1])))
  folded = xjax.vmap(lambda k: random.fold_in(k, 5))(keys)
  np.testing.assert_array_equal(random.key_data(folded)[2],
                                np.asarray(PAIR.fold_in(random.key_data(keys)[2], np.uint32(5))))
  bits = xjax.vmap(lambda k: random.bits(k, (4,)))(keys)
  np.testing.assert_array_equal(bits[0], np.asarray(PAIR.random_bits(
      random.key_data(keys)[0], 32, (4,))))
  assert bool(keys[0] == keys[0]) and not bool(keys[0] == keys[1])
  np.testing.assert_array_equal(keys == keys[1], [False, True, False])


def test_key_arrays_refuse_arithmetic_and_gradients():
  key = random.key(0)
  with pytest.raises(TypeError, match=r"add does not accept dtypes key<fry>, int32"):
    key + 47
  with pytest.raises(TypeError, match="lt does not accept dtype key<fry>"):
    key < key
  with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
    xjax.grad(lambda x: 1.)(key)
  out = xjax.grad(lambda x: 1., allow_int=True)(random.split(key, 3))
  assert out.dtype == xjax.dtypes.float0 and out.shape == (3,)  # as JAX: a leaf's zeros


def test_more_than_2_to_the_32_random_values_lower():
  k = random.key(3)
  with config.threefry_partitionable(True):
    lowered = xjax.jit(lambda: random.uniform(k, (308000000, 128), dtype=jnp.bfloat16)).lower()
  assert "tensor<308000000x128xbf16>" in lowered.as_text()


def test_strided_index_words_carry_into_the_high_word():
  shape, strides = (3, 4, 5), [2 ** 33 + 5, 2 ** 32 - 1, 7]
  hi, lo = xjax.jit(lambda: threefry._strided_index_words(shape, strides))()
  want = sum(np.indices(shape)[a].astype(np.uint64) * np.uint64(s) for a, s in enumerate(strides))
  got = (np.asarray(hi).astype(np.uint64) << np.uint64(32)) | np.asarray(lo).astype(np.uint64)
  np.testing.assert_array_equal(got, want)
