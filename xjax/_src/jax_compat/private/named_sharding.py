"""`jax._src.named_sharding` under `xjax.install_as_jax()`."""
from xjax._src.sharding.shardings import (  # noqa: F401
    DuplicateSpecError, NamedSharding)
