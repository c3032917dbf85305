"""Experimental APIs (mirrors `jax.experimental`): `io_callback`, and beyond JAX
`bounded_while_loop` (a reverse-mode differentiable while loop)."""
from xjax._src.callback import io_callback as io_callback
from xjax._src.lax.control_flow.bounded_while import bounded_while_loop as bounded_while_loop
