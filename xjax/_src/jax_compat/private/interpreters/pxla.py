"""`jax._src.interpreters.pxla` under `xjax.install_as_jax()`: JAX's parallel-execution
internals (cached lowerings, `batched_device_put`, ...) have no counterpart in xjax, whose
arrays and executables are built differently; the mesh class, which JAX re-exports here, is
provided, with JAX's tables of argument and result handlers by type."""
from xjax._src.sharding.mesh import Mesh as Mesh  # noqa: F401

# JAX's per-type handlers placing arguments on devices and rebuilding results. xjax does not
# consult these tables (its dispatch places and rebuilds only the values it knows; others fail
# with an error, never a wrong value). They exist so that code registering handlers runs.
shard_arg_handlers: dict = {}
global_result_handlers: dict = {}
