"""Functions with custom batching rules (mirrors `jax.custom_batching`)."""
from xjax._src.custom_batching import (custom_vmap as custom_vmap,
                                       sequential_vmap as sequential_vmap)
