"""Where user code made an equation (mirrors part of `jax.extend.source_info_util`)."""
from xjax._src.source_info import (
    SourceInfo as SourceInfo,
    current as current,
    register_exclusion as register_exclusion,
)


def summarize(source_info, num_frames: int = 1) -> str:
  """``file:line:column (function)`` of the innermost user frame(s) of `source_info`,
  or "unknown" for None."""
  if not source_info:
    return "unknown"
  return "\n".join(f.summarize() for f in source_info.frames[:num_frames])
