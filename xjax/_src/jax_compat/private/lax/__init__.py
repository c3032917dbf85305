"""`jax._src.lax` under `xjax.install_as_jax()`: `lax` (JAX's `jax._src.lax.lax`) is an alias
module here; the other submodules fall back to xjax's `xjax._src.lax.<name>`."""
