"""`jax._src.state` under `xjax.install_as_jax()` (mutable array references)."""
from xjax._src.state.types import AbstractRef as AbstractRef  # noqa: F401
