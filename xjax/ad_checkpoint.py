"""Rematerialization helpers: `checkpoint_name`, `checkpoint_policies`, `print_saved_residuals`.

Mirrors `jax.ad_checkpoint` (JAX 0.10.2), where `checkpoint` and `remat` were
removed: use `xjax.checkpoint` / `xjax.remat`.
"""
from xjax._src.checkpoint import (Offloadable as Offloadable, Recompute as Recompute,
                                  Saveable as Saveable, checkpoint_name as checkpoint_name,
                                  checkpoint_policies as checkpoint_policies,
                                  print_saved_residuals as print_saved_residuals)

_REMOVED = {
    "checkpoint": ("jax.ad_checkpoint.checkpoint was deprecated in JAX v0.8.2 and removed in"
                   " JAX v0.10.0; use jax.checkpoint instead."),
    "remat": ("jax.ad_checkpoint.remat was deprecated in JAX v0.8.2 and removed in"
              " JAX v0.10.0; use jax.remat instead."),
}


def __getattr__(name):
  if name in _REMOVED:
    raise AttributeError(_REMOVED[name])
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
