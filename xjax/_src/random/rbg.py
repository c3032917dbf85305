"""The RngBitGenerator PRNGs, ``rbg`` and ``unsafe_rbg`` (mirrors JAX's `jax._src.random.rbg`).

Keys are uint32[4]: two threefry keys side by side. Random bits come from XLA's
RngBitGenerator (`lax.rng_bit_generator`), whose streams XLA does not promise to keep
across backends or versions, as JAX warns. ``rbg`` splits and folds in with threefry (each
half of the key as a threefry key); ``unsafe_rbg`` uses RngBitGenerator for those too (ten
draws per new key as a hash), which is faster and gives no independence guarantee.

The functions take one key (JAX's PRNGImpl signature); `prng` maps them over key arrays.
"""
from __future__ import annotations

import math

import numpy as np

from xjax import numpy as jnp  # jnp is fully imported before xjax.random (xjax/__init__.py)
from xjax._src.lax import misc_ops
from xjax._src.lax import slicing
from xjax._src.random import prng
from xjax._src.random import threefry

_BITS_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
                64: np.dtype(np.uint64)}


def _rbg_seed(seed):
  """A uint32[4] key: the threefry key of `seed` (a scalar), twice."""
  half = threefry.threefry_seed(seed)
  return jnp.concatenate([half, half])


def _rbg_split(key, shape):
  """Keys of `shape`: each half of `key` split as a threefry key, the halves side by side."""
  shape = tuple(shape)
  halves = threefry.threefry_split(key.reshape(2, 2), shape, prng.partitionable())
  return jnp.moveaxis(halves, 0, len(shape)).reshape(*shape, 4)


def _rbg_fold_in(key, data):
  """`data` (a scalar) folded into each half of `key` as threefry does."""
  return threefry.threefry_fold_in(key.reshape(2, 2), data).reshape(4)


def _rbg_random_bits(key, bit_width: int, shape):
  """Random unsigned integers of `bit_width` bits and `shape` from RngBitGenerator."""
  if bit_width not in _BITS_DTYPES:
    raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
  _, bits = misc_ops.rng_bit_generator(key, tuple(shape), dtype=_BITS_DTYPES[bit_width])
  return bits


def _unsafe_rbg_split(key, shape):
  """Keys of `shape`: every tenth of ten draws per key from RngBitGenerator."""
  num = math.prod(shape)
  _, draws = misc_ops.rng_bit_generator(key, (10 * num, 4), dtype=np.uint32)
  return slicing.slice_in_dim(draws, None, None, stride=10).reshape(*shape, 4)


def _unsafe_rbg_fold_in(key, data):
  """`key` xor the tenth RngBitGenerator draw from the key seeded by `data` (a scalar)."""
  _, draws = misc_ops.rng_bit_generator(_rbg_seed(data), (10, 4), dtype=np.uint32)
  return key ^ draws[-1]


rbg_prng_impl = prng.PRNGImpl(
    key_shape=(4,), seed=_rbg_seed, split=_rbg_split, random_bits=_rbg_random_bits,
    fold_in=_rbg_fold_in, name="rbg", tag="rbg")

unsafe_rbg_prng_impl = prng.PRNGImpl(
    key_shape=(4,), seed=_rbg_seed, split=_unsafe_rbg_split, random_bits=_rbg_random_bits,
    fold_in=_unsafe_rbg_fold_in, name="unsafe_rbg", tag="urbg")

prng.prngs[rbg_prng_impl.name] = rbg_prng_impl
prng.prngs[unsafe_rbg_prng_impl.name] = unsafe_rbg_prng_impl
