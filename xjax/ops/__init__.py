"""Segment reductions (mirrors `jax.ops`)."""
from xjax._src.ops import (
    segment_max as segment_max,
    segment_min as segment_min,
    segment_prod as segment_prod,
    segment_sum as segment_sum,
)
