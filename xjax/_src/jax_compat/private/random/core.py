"""`jax._src.random.core` under `xjax.install_as_jax()`: JAX's module of the random samplers
and their private helpers (`_check_broadcast_shapes`, `_safe_int_to_float`, ...). xjax keeps
them in several modules (`distributions`, `discrete`, `gamma`, `keys`, `matrix_samplers`);
names are read from those, in that order."""
import importlib

from xjax._src.random.distributions import (  # noqa: F401
    _check_broadcast_shapes, _check_shape, _safe_int_to_float)

_HOMES = ("distributions", "discrete", "gamma", "keys", "matrix_samplers")


def __getattr__(name):
  if not name.startswith("__"):
    for home in _HOMES:
      module = importlib.import_module(f"xjax._src.random.{home}")
      if hasattr(module, name):
        return getattr(module, name)
  raise AttributeError(f"module 'jax._src.random.core' has no attribute {name!r}")
