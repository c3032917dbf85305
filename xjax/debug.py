"""Debugging from inside traced and compiled code (mirrors `jax.debug`)."""
from xjax._src.debugging import (breakpoint as breakpoint, debug_callback as callback,  # noqa: A004
                                 debug_log as log, debug_print as print)
from xjax._src.effects import DebugEffect as DebugEffect, OrderedDebugEffect as OrderedDebugEffect
from xjax._src.sharding.visualize import (inspect_array_sharding as inspect_array_sharding,
                                          visualize_array_sharding as visualize_array_sharding,
                                          visualize_sharding as visualize_sharding)
