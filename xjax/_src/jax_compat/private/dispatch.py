"""`jax._src.dispatch` under `xjax.install_as_jax()`.

Equinox imports this module (`import jax._src.dispatch`) and then looks for
`wait_for_tokens`, the exit hook with which JAX waits for the runtime tokens of ordered
effects, replacing it when present. xjax threads ordered effects through each compiled
program and keeps no runtime tokens between calls, so there is nothing to wait for at exit
and the name is absent: equinox then leaves the exit hooks alone, as it does for JAX
versions without it.

`apply_primitive(prim, *args, **params)`: JAX's signature of the eager impl that JAX's tests
give primitives of their own (``prim.def_impl(partial(dispatch.apply_primitive, prim))``).
Other names fall back to xjax's `xjax._src.dispatch`.
"""
from xjax._src import dispatch as _dispatch


def apply_primitive(prim, *args, **params):
  """Runs `prim` eagerly on `args` with `params`, compiled by XLA (JAX's
  `dispatch.apply_primitive`)."""
  return _dispatch.apply_primitive(prim, args, params)

