"""Experimental APIs (mirrors `jax.experimental`): `io_callback`."""
from xjax._src.callback import io_callback as io_callback
