"""JAX's compile log line: "Compiling jit(f) with global shapes and types ..." (a WARNING
with `jax_log_compiles`, else DEBUG), written wherever a program is compiled."""
from __future__ import annotations

import logging

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
