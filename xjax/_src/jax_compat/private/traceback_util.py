"""`jax._src.traceback_util` under `xjax.install_as_jax()`: xjax's traceback filtering
(flax wraps its API functions with `api_boundary` and registers its files as excluded;
equinox registers its files and asks `include_frame`)."""
from xjax._src.traceback_util import (  # noqa: F401
    _exclude_paths as _exclude_paths,
    api_boundary as api_boundary,
    include_frame as include_frame,
    register_exclusion as register_exclusion,
)
