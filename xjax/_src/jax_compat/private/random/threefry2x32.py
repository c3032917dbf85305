"""`jax._src.random.threefry2x32` under `xjax.install_as_jax()`: the Threefry-2x32 PRNG's
functions on raw key data and its primitive (xjax keeps them in `xjax._src.random.threefry`)."""
from xjax._src.random.prng import threefry_prng_impl as threefry_prng_impl
from xjax._src.random.threefry import (  # noqa: F401
    threefry2x32_p, threefry_2x32, threefry_fold_in, threefry_random_bits, threefry_seed,
    threefry_split)
