"""`jax._src.xla_bridge` under `xjax.install_as_jax()`.

chex's `set_n_cpu_devices` reads `_backends` (platform name -> client, empty before the
first computation) to refuse changing the CPU device count once the runtime has started.
Here it is a fresh dict read from xjax's runtime state: ``{}`` until the PJRT client of
`xjax._src.backend` exists, then ``{platform: client}``. No other name of JAX's private
xla_bridge module is provided.
"""
from xjax._src import backend as _backend


def __getattr__(name):
  if name == "_backends":
    if not _backend.client_started():
      return {}
    client = _backend.client()
    return {client.platform: client}
  raise AttributeError(f"module 'jax._src.xla_bridge' has no attribute {name!r} (xjax "
                       "provides only _backends)")
