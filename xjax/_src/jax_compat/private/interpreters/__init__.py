"""`jax._src.interpreters` under `xjax.install_as_jax()`: aliases of JAX's private interpreter
modules (`mlir`, `pxla`); the others fall back to xjax's `xjax._src.interpreters.<name>`."""
