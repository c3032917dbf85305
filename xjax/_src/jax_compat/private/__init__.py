"""`jax._src` under `xjax.install_as_jax()`: thin aliases for the few private JAX names that
client libraries import (each module here lists what it mirrors). Nothing else of JAX's
private code exists; importing it fails with ModuleNotFoundError."""


def __getattr__(name):
  """`jax._src.<name>` read as an attribute, as programs do with JAX's always-imported private
  modules (chex reads `jax._src.xla_bridge._backends` without importing it): the alias module
  of that name, imported on first use; AttributeError when xjax provides none."""
  import importlib
  if not name.startswith("__"):
    try:
      return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as e:
      if e.name != f"{__name__}.{name}":
        raise
  raise AttributeError(f"module 'jax._src' has no attribute {name!r}: xjax provides no alias "
                       f"of JAX's private module jax._src.{name}")
