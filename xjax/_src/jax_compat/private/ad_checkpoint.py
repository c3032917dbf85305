"""`jax._src.ad_checkpoint` under `xjax.install_as_jax()`: remat and its residual inspection
(xjax keeps them in `xjax._src.checkpoint`)."""
from xjax._src.checkpoint import (  # noqa: F401
    checkpoint, checkpoint_name, checkpoint_policies, print_saved_residuals, remat,
    saved_residuals)


def custom_remat(f, f1, f2, fbwd, *, static_argnums=(), static_argnames=()):
  """JAX's private `custom_remat` (a remat rule of its own for `f`, built on JAX's
  higher-order "hijax" primitives of remat3): xjax has none.

  Raises:
    NotImplementedError: always.
  """
  raise NotImplementedError("xjax has no custom_remat (JAX's private remat rule of remat3)")
