"""`jax._src.sharding` under `xjax.install_as_jax()`: the `Sharding` base class, the error of an
indivisible shape, and the cached device -> index map of a sharding."""
import functools

from xjax._src.pmap import IndivisibleError as IndivisibleError
from xjax._src.sharding.shardings import Sharding as Sharding


@functools.lru_cache(maxsize=4096)
def common_devices_indices_map(s: Sharding, global_shape: tuple) -> dict:
  """Device -> the index (a tuple of slices) of its shard of an array of `global_shape`."""
  return s.devices_indices_map(global_shape)
