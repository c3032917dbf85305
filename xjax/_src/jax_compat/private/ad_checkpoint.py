"""`jax._src.ad_checkpoint` under `xjax.install_as_jax()`: remat and its residual inspection
(xjax keeps them in `xjax._src.checkpoint`)."""
from xjax._src.checkpoint import (  # noqa: F401
    checkpoint, checkpoint_name, checkpoint_policies, print_saved_residuals, remat,
    saved_residuals)
