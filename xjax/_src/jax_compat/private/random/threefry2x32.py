"""`jax._src.random.threefry2x32` under `xjax.install_as_jax()`: the Threefry-2x32 PRNG's
functions on raw key data and its primitive (xjax keeps them in `xjax._src.random.threefry`)."""
from xjax._src.random import prng as _prng
from xjax._src.random import threefry as _threefry
from xjax._src.random.prng import threefry_prng_impl as threefry_prng_impl
from xjax._src.random.threefry import (  # noqa: F401
    threefry2x32_p, threefry_2x32, threefry_fold_in, threefry_seed)


def threefry_random_bits(keys, bit_width, shape):
  """Random bits of `bit_width` and `shape` from raw key data, in the stream layout that
  ``jax_threefry_partitionable`` selects (JAX's signature)."""
  return _threefry.threefry_random_bits(keys, bit_width, tuple(shape), _prng.partitionable())


def threefry_split(keys, shape):
  """`shape` new raw keys from raw key data, in the configured stream layout."""
  return _threefry.threefry_split(keys, tuple(shape), _prng.partitionable())
