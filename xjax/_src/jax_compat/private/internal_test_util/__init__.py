"""`jax._src.internal_test_util` under `xjax.install_as_jax()`: the parts of JAX's internal
test helpers that JAX's own test files import (`lax_test_util`)."""
