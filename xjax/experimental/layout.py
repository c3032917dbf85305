"""Array memory layouts (mirrors `jax.experimental.layout`): `Layout` and `Format`."""
from xjax._src.layout import Format as Format, Layout as Layout  # noqa: F401
