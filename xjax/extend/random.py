"""Defining PRNG implementations (mirrors `jax.extend.random`)."""
import numpy as _np

from xjax._src.random import prng as _prng
from xjax._src.random.prng import (
    random_seed as random_seed,
    threefry_prng_impl as threefry_prng_impl,
)
from xjax._src.random.threefry import threefry2x32_p as threefry2x32_p


def define_prng_impl(*, key_shape, seed, split, random_bits, fold_in,
                     name: str = "<unnamed>", tag: str = "?") -> _prng.PRNGImpl:
  """A PRNG implementation usable as ``jax.random.key(seed, impl=...)`` (mirrors
  `jax.extend.random.define_prng_impl`).

  Args:
    key_shape: the shape of one key's raw uint32 data.
    seed: ``seed(seed: int32 scalar) -> key data``.
    split: ``split(key data, shape) -> key data of shape (*shape, *key_shape)``.
    random_bits: ``random_bits(key data, bit_width, shape) -> unsigned bits``.
    fold_in: ``fold_in(key data, data: uint32 scalar) -> key data``.
    name, tag: the implementation's name and the short tag printed in key dtypes.
  """
  return _prng.PRNGImpl(key_shape=tuple(key_shape), seed=seed, split=split, random_bits=random_bits,
                  fold_in=fold_in, name=name, tag=tag)


def seed_with_impl(impl: _prng.PRNGImpl, seed):
  """A typed key of `impl` made from the integer `seed`."""
  return random_seed(seed, impl)


def threefry_2x32(keypair, count):
  """The Threefry-2x32 hash of the uint32 array `count` under the uint32 key pair
  `keypair` (mirrors `jax.extend.random.threefry_2x32`): the flattened counts are split
  in two halves (padded by one zero if odd), hashed pairwise, and put back in `count`'s
  shape.

  Raises:
    TypeError: the key words or `count` are not uint32.
  """
  import xjax.numpy as jnp  # above this module's layer
  from xjax import lax
  key1, key2 = keypair
  for what, x in (("keypair", key1), ("keypair", key2), ("count", count)):
    if jnp.result_type(x) != _np.uint32:
      raise TypeError(f"threefry_2x32 requires uint32 arguments, got {what} of dtype "
                      f"{jnp.result_type(x)}")
  count = jnp.asarray(count)
  flat = count.ravel()
  odd = flat.size % 2
  if odd:
    flat = jnp.concatenate([flat, _np.zeros(1, _np.uint32)])
  half = flat.size // 2
  x1, x2 = threefry2x32_p.bind(key1, key2, flat[:half], flat[half:])
  out = jnp.concatenate([x1, x2])
  return lax.reshape(out[:-1] if odd else out, count.shape)
