"""`jax._src.interpreters.pxla` under `xjax.install_as_jax()`: JAX's parallel-execution
internals (result and argument handler tables, `batched_device_put`, cached lowerings) have
no counterpart in xjax, whose arrays and executables are built differently; only the mesh
class, which JAX re-exports here, is provided."""
from xjax._src.sharding.mesh import Mesh as Mesh  # noqa: F401
