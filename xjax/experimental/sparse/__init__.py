"""Sparse arrays (mirrors `jax.experimental.sparse`): `BCOO` in its unbatched layout, with
`bcoo_fromdense` and `bcoo_todense`."""
from xjax._src.sparse import (
    BCOO as BCOO,
    bcoo_fromdense as bcoo_fromdense,
    bcoo_todense as bcoo_todense,
)
