"""`jax.distributed`: joining a job of several processes (see `xjax._src.distributed`)."""
from xjax._src.distributed import (initialize as initialize, is_initialized as is_initialized,
                                   shutdown as shutdown)
