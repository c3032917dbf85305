"""`jax._src` under `xjax.install_as_jax()`: thin aliases for the few private JAX names that
client libraries import (each module here lists what it mirrors). Nothing else of JAX's
private code exists; importing it fails with ModuleNotFoundError."""
