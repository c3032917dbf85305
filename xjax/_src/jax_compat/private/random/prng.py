"""`jax._src.random.prng` under `xjax.install_as_jax()`: xjax's `xjax._src.random.prng` (key
types, `PRNGImpl`, the `random_*` primitives and functions, the `prngs` registry), read through
the alias fallback."""
