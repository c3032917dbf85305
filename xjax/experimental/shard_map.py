"""`jax.experimental.shard_map`, deprecated in JAX: use `xjax.shard_map`.

Reading `shard_map` here warns (DeprecationWarning) and gives the old
signature ``shard_map(f, mesh, in_specs, out_specs, check_rep=True)``.
"""
import warnings as _warnings

from xjax._src import shard_map as _shard_map


def _deprecated_shard_map(f, mesh, in_specs, out_specs, check_rep=True):
  """Please use `jax.shard_map`; this old entry point forwards to it (check_rep is check_vma)."""
  return _shard_map.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                              check_vma=check_rep)


_deprecated_shard_map.__name__ = "shard_map"


def __getattr__(name):
  if name == "shard_map":
    _warnings.warn("jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map "
                   "instead.", DeprecationWarning, stacklevel=2)
    return _deprecated_shard_map
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
