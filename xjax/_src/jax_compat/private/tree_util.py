"""`jax._src.tree_util` under `xjax.install_as_jax()`: `_registry`, the pytree node types
(flax's nnx asks `type(x) in _registry`)."""
from __future__ import annotations

from collections.abc import Mapping
from types import NoneType

from xjax._src import tree_util as _tree_util


class _Registry(Mapping):
  """A live read-only view of the pytree node types, keyed by type: the built-in
  containers (tuple, list, dict, None) and every registered type, as JAX's `_registry`
  holds them (values are xjax's registrations; the built-ins map to None)."""

  _BUILTINS = (tuple, list, dict, NoneType)

  def __getitem__(self, nodetype):
    if nodetype in self._BUILTINS:
      return None
    return _tree_util._registry[nodetype]

  def __contains__(self, nodetype):
    return nodetype in self._BUILTINS or nodetype in _tree_util._registry

  def __iter__(self):
    yield from self._BUILTINS
    yield from list(_tree_util._registry)

  def __len__(self):
    return len(self._BUILTINS) + len(_tree_util._registry)


_registry = _Registry()


# flax's struct tests check the message of a pytree prefix mismatch.
prefix_errors = _tree_util.public.prefix_errors
