"""`jax.export` (serializing and reloading staged computations, symbolic shapes): not yet
implemented in xjax (issue 37).

The module exists so that programs (and JAX's test files) which import it load; every entry
point raises NotImplementedError naming issue 37. `is_symbolic_dim` answers False, truthfully:
xjax has no symbolic dimensions.
"""
from __future__ import annotations

_MESSAGE = "jax.export is not implemented in xjax yet (issue 37): {} is unavailable"


def _unavailable(name):
  def entry(*args, **kwargs):
    raise NotImplementedError(_MESSAGE.format(name))
  entry.__name__ = entry.__qualname__ = name
  entry.__doc__ = (f"Mirrors `jax.export.{name}`; raises NotImplementedError (issue 37).")
  return entry


export = _unavailable("export")
deserialize = _unavailable("deserialize")
register_pytree_node_serialization = _unavailable("register_pytree_node_serialization")
register_namedtuple_serialization = _unavailable("register_namedtuple_serialization")
default_export_platform = _unavailable("default_export_platform")
symbolic_shape = _unavailable("symbolic_shape")
symbolic_args_specs = _unavailable("symbolic_args_specs")


class _Unavailable:
  def __init__(self, *args, **kwargs):
    raise NotImplementedError(_MESSAGE.format(type(self).__name__))


class Exported(_Unavailable):
  """Mirrors `jax.export.Exported`; constructing one raises NotImplementedError (issue 37)."""


class DisabledSafetyCheck(_Unavailable):
  """Mirrors `jax.export.DisabledSafetyCheck`; constructing one raises NotImplementedError
  (issue 37)."""


class SymbolicScope(_Unavailable):
  """Mirrors `jax.export.SymbolicScope`; constructing one raises NotImplementedError
  (issue 37)."""


def is_symbolic_dim(p) -> bool:
  """Whether `p` is a symbolic dimension: always False in xjax, which has none.

  Mirrors `jax.export.is_symbolic_dim`."""
  del p
  return False
