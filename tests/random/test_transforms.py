"""Random functions and keys under jit, vmap, grad and control flow."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax import random


def _data(k):
  return np.asarray(random.key_data(k))


SAMPLERS = {
    "uniform": lambda k: random.uniform(k, (3,)),
    "normal": lambda k: random.normal(k, (3,)),
    "bits": lambda k: random.bits(k, (3,)),
    "randint": lambda k: random.randint(k, (3,), 0, 10),
    "bernoulli": lambda k: random.bernoulli(k, 0.3, (3,)),
    "permutation": lambda k: random.permutation(k, 5),
    "gamma": lambda k: random.gamma(k, 1.5, (3,)),
    "poisson": lambda k: random.poisson(k, 4., (3,)),
    "split": lambda k: random.key_data(random.split(k, 3)),
    "fold_in": lambda k: random.key_data(random.fold_in(k, 9)),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_sampler_under_jit_matches_eager(name):
  f = SAMPLERS[name]
  k = random.key(11)
  np.testing.assert_array_equal(np.asarray(xjax.jit(f)(k)), np.asarray(f(k)))


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_sampler_under_vmap_over_keys_matches_loop(name):
  f = SAMPLERS[name]
  keys = random.split(random.key(12), 4)
  batched = np.asarray(xjax.vmap(f)(keys))
  for i in range(4):
    np.testing.assert_array_equal(batched[i], np.asarray(f(keys[i])))


def test_vmap_over_raw_keys_and_key_axis_1():
  keys = random.split(random.key(13), (2, 3))
  out = xjax.vmap(lambda k: random.normal(k[1], (2,)), in_axes=1)(keys)
  assert out.shape == (3, 2)
  np.testing.assert_array_equal(out[2], random.normal(keys[1, 2], (2,)))
  raw = random.key_data(keys[0])
  out = xjax.vmap(lambda k: random.uniform(k))(raw)
  np.testing.assert_array_equal(out[1], random.uniform(raw[1]))


def test_vmap_fold_in_over_data_matches_loop():
  k = random.key(14)
  out = xjax.vmap(random.fold_in, in_axes=(None, 0))(k, jnp.arange(4))
  for i in range(4):
    np.testing.assert_array_equal(_data(out[i]), _data(random.fold_in(k, i)))


def test_keys_pass_through_jit_as_arguments_and_results():
  k = random.key(15)
  out = xjax.jit(lambda k: (k, random.split(k)))(k)
  assert out[0].dtype.name == "key<fry>" and out[1].shape == (2,)
  np.testing.assert_array_equal(_data(out[1]), _data(random.split(k)))


def test_keys_as_scan_carries():
  def step(key, _):
    key, sub = random.split(key)
    return key, random.uniform(sub)
  key, xs = lax.scan(step, random.key(16), None, length=3)
  k, expected = random.key(16), []
  for _ in range(3):
    k, sub = random.split(k)
    expected.append(float(random.uniform(sub)))
  np.testing.assert_array_equal(xs, np.array(expected, np.float32))
  np.testing.assert_array_equal(_data(key), _data(k))


def test_keys_in_fori_loop():
  def body(i, carry):
    key, total = carry
    key, sub = random.split(key)
    return key, total + random.normal(sub)
  _, total = lax.fori_loop(0, 3, body, (random.key(17), 0.))
  k, expected = random.key(17), np.float32(0)
  for _ in range(3):
    k, sub = random.split(k)
    expected += np.float32(random.normal(sub))
  np.testing.assert_allclose(total, expected, rtol=1e-6)


def test_grad_of_reparameterized_normal():
  k = random.key(18)
  z = random.normal(k, (5,))
  f = lambda mu, sigma: jnp.sum(random.normal(k, (5,)) * sigma + mu)
  d_mu, d_sigma = xjax.grad(f, argnums=(0, 1))(1., 2.)
  np.testing.assert_allclose(d_mu, 5.0)
  np.testing.assert_allclose(d_sigma, np.sum(z), rtol=1e-6)


def test_grad_through_uniform_bounds():
  k = random.key(19)
  u = random.uniform(k, (4,))
  g = xjax.grad(lambda hi: jnp.sum(random.uniform(k, (4,), minval=0., maxval=hi)))(3.)
  np.testing.assert_allclose(g, np.sum(u), rtol=1e-6)


def test_grad_of_gamma_with_respect_to_alpha_is_not_built():
  with pytest.raises(NotImplementedError, match="random_gamma"):
    xjax.grad(lambda a: random.gamma(random.key(0), a))(2.)


def test_jaxpr_shows_random_primitives():
  text = str(xjax.make_jaxpr(lambda k: random.bits(k, (3,)))(random.key(0)))
  assert "random_bits[bit_width=32 shape=(3,)]" in text


def test_vmap_over_key_data_axis_is_an_error():
  with pytest.raises(ValueError, match="key-data axis"):
    xjax.vmap(lambda k: random.bits(random.wrap_key_data(k)), in_axes=-1)(
        jnp.zeros((3, 2), jnp.uint32).T)
