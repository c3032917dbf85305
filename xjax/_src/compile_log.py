"""JAX's compile log line: "Compiling jit(f) with global shapes and types ..." (a WARNING
with `jax_log_compiles`, else DEBUG), written wherever a program is compiled."""
from __future__ import annotations

import logging
import time

from xjax._src.config import config

_compile_logger = logging.getLogger(__name__)


def log_compile(name: str, avals) -> None:
  """JAX's "Compiling jit(f) with global shapes and types ..." line: WARNING with
  `jax_log_compiles`, else DEBUG."""
  level = logging.WARNING if config.jax_log_compiles else logging.DEBUG
  if _compile_logger.isEnabledFor(level):
    n = len(avals)
    shown = "(" + ", ".join(map(repr, avals)) + ("," if n == 1 else "") + ")"
    mapping = "(" + ", ".join(["UnspecifiedValue"] * n) + ("," if n == 1 else "") + ")"
    _compile_logger.log(level, "Compiling jit(%s) with global shapes and types %s. "
                        "Argument mapping: %s.", name, shown, mapping)


class log_elapsed:
  """JAX's timing lines ("Finished tracing f for jit in 0.001 sec", ...): `fmt` formatted
  with ``fun_name`` and ``elapsed_time`` when the block ends, a WARNING with
  `jax_log_compiles`, else DEBUG (mirrors `jax._src.dispatch.log_elapsed_time`)."""
  __slots__ = ("fmt", "fun_name", "start")

  def __init__(self, fmt: str, fun_name: str):
    self.fmt, self.fun_name = fmt, fun_name

  def __enter__(self):
    self.start = time.time()

  def __exit__(self, exc_type, exc_value, traceback):
    level = logging.WARNING if config.jax_log_compiles else logging.DEBUG
    if _compile_logger.isEnabledFor(level):
      _compile_logger.log(level, self.fmt.format(fun_name=self.fun_name,
                                                 elapsed_time=time.time() - self.start))
