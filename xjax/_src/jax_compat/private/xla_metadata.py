"""`jax._src.xla_metadata` under `xjax.install_as_jax()`: JAX's attachment of frontend
attributes to the XLA ops a block emits. xjax does not implement it: entering
`set_xla_metadata` raises NotImplementedError."""
import contextlib


class set_xla_metadata(contextlib.ContextDecorator):
  """Mirrors `jax.experimental.xla_metadata.set_xla_metadata`; not implemented."""

  def __init__(self, *args, **kwargs):
    self.attributes = kwargs

  def __enter__(self):
    raise NotImplementedError("xjax does not implement set_xla_metadata (XLA frontend "
                              "attributes)")

  def __exit__(self, *exc):
    return False
