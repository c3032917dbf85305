"""`jax._src` under `xjax.install_as_jax()`: thin aliases for the few private JAX names that
client libraries import (each module here lists what it mirrors). Nothing else of JAX's
private code exists; importing it fails with ModuleNotFoundError."""


def __getattr__(name):
  """`jax._src.<name>` read as an attribute, as programs do with JAX's always-imported private
  modules (chex reads `jax._src.xla_bridge._backends` without importing it): the alias module
  of that name, imported on first use; AttributeError when xjax provides none."""
  import importlib
  import sys
  if not name.startswith("__"):
    # Once xjax stands in for `jax`, through the finder: it gives the alias module its
    # fall-back to xjax._src.<name>, and serves xjax._src.<name> itself when there is no alias.
    full = (f"jax._src.{name}" if getattr(sys.modules.get("jax._src"), "__name__", None)
            == __name__ else f"{__name__}.{name}")
    try:
      return importlib.import_module(full)
    except ModuleNotFoundError as e:
      if e.name is None or not (full == e.name or full.startswith(e.name + ".")):
        raise
  raise AttributeError(f"module 'jax._src' has no attribute {name!r}: xjax provides no alias "
                       f"of JAX's private module jax._src.{name}")
