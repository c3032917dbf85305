"""`jax._src.random` under `xjax.install_as_jax()`: xjax's `xjax._src.random` (names this
package lacks are read from it), with JAX's module names `prng`, `threefry2x32` and `rbg`."""
