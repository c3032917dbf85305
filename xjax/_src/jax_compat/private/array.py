"""`jax._src.array` under `xjax.install_as_jax()`: the concrete array class (`ArrayImpl`, xjax's
`Array`), shards, and the constructors of arrays from pieces."""
from xjax._src.array import Array as ArrayImpl  # noqa: F401
from xjax._src.array import Shard as Shard  # noqa: F401
from xjax._src.sharding.array_construction import (  # noqa: F401
    make_array_from_callback, make_array_from_single_device_arrays)
