"""`jax._src.dispatch` under `xjax.install_as_jax()`.

Equinox imports this module (`import jax._src.dispatch`) and then looks for
`wait_for_tokens`, the exit hook with which JAX waits for the runtime tokens of ordered
effects, replacing it when present. xjax threads ordered effects through each compiled
program and keeps no runtime tokens between calls, so there is nothing to wait for at exit
and the name is absent: equinox then leaves the exit hooks alone, as it does for JAX
versions without it. No other name of JAX's private dispatch module is provided.
"""
