"""`jax._src.sharding` under `xjax.install_as_jax()`: the `Sharding` base class, the error of an
indivisible shape, and the cached device -> index map of a sharding."""
from xjax._src.sharding.shardings import (  # noqa: F401
    IndivisibleError, Sharding, common_devices_indices_map)
