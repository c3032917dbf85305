"""`jax._src.interpreters.batching` under `xjax.install_as_jax()`: the batching-rule API of
`jax.interpreters.batching` (`primitive_batchers`, `defvectorized`, `not_mapped`, ...), which
xjax provides publicly; other names fall back to xjax's `xjax._src.interpreters.batching`."""
from xjax.interpreters.batching import *  # noqa: F401,F403
from xjax.interpreters.batching import (  # noqa: F401
    axis_primitive_batchers,
    fancy_primitive_batchers,
    primitive_batchers,
)
