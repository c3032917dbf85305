"""`jax._src.state.types` under `xjax.install_as_jax()`: `AbstractRef`, the abstract value
of a mutable array reference (flax's nnx tests `isinstance(jax.typeof(x), AbstractRef)`)."""
from xjax._src.state.types import AbstractRef as AbstractRef  # noqa: F401
