"""Where in the user's code an equation was made, for error messages.

Capturing is cheap (a walk up the Python frames to the first one outside
xjax, keeping its code object and instruction offset); resolving it to a
file, line and column happens only when a message needs it.
"""
from __future__ import annotations

import os
import sys
from typing import NamedTuple

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_STDLIB_DIR = os.path.dirname(os.__file__)


def _is_internal(filename: str) -> bool:
  return (filename.startswith(_PACKAGE_DIR) or filename.startswith(_STDLIB_DIR)
          or (bool(_exclusions) and filename.startswith(tuple(_exclusions))))


_internal_cache: dict[str, bool] = {}
_exclusions: list[str] = []  # path prefixes of libraries hidden like xjax's own frames


def register_exclusion(path: str) -> None:
  """Treats frames from files under `path` as internal: they are skipped when finding the
  user's frame of an equation (mirrors `jax.extend.source_info_util.register_exclusion`)."""
  if not isinstance(path, str):
    raise TypeError(f"register_exclusion: path must be a str, got {type(path).__name__}")
  _exclusions.append(path)
  _internal_cache.clear()


class Frame(NamedTuple):
  """One user frame: a code object and the offset of its current instruction."""
  code: object
  lasti: int

  def position(self) -> tuple[int, int]:
    """The (line, column) of the instruction, from Python 3.11's position table."""
    for i, pos in enumerate(self.code.co_positions()):
      if 2 * i >= self.lasti:
        line, _, col, _ = pos
        return (line or self.code.co_firstlineno), (col or 0)
    return self.code.co_firstlineno, 0

  def summarize(self) -> str:
    """``file:line:column (function)``, as JAX prints a frame."""
    line, column = self.position()
    where = f"{self.code.co_filename}:{line}"
    if column:
      where += f":{column}"
    return f"{where} ({self.code.co_qualname})"


class SourceInfo(tuple):
  """The user frames active when an equation was made, innermost first (at most
  `MAX_FRAMES`), each stored as a plain ``(code, lasti)`` pair: capturing runs for
  every equation, so it builds no `Frame` objects; `frames` makes them on demand."""
  __slots__ = ()

  @property
  def frames(self) -> tuple:
    return tuple(Frame(code, lasti) for code, lasti in self)

  def summarize(self) -> str:
    return Frame(*self[0]).summarize() if self else "unknown"


MAX_FRAMES = 5


def current() -> SourceInfo | None:
  """The innermost run of user frames (not xjax or the stdlib) on the stack.

  The run ends at the first xjax frame above it, which is where the traced
  function was called from: frames outside the traced function are not shown.
  """
  frame = sys._getframe(1)
  cache = _internal_cache
  while frame is not None:  # skip xjax's frames (hot: runs for every equation)
    filename = frame.f_code.co_filename
    internal = cache.get(filename)
    if internal is None:
      internal = cache[filename] = _is_internal(filename)
    if not internal:
      break
    frame = frame.f_back
  else:
    return None
  frames = []
  while True:
    frames.append((frame.f_code, frame.f_lasti))
    frame = frame.f_back
    if frame is None or len(frames) == MAX_FRAMES:
      break
    filename = frame.f_code.co_filename
    internal = cache.get(filename)
    if internal is None:
      internal = cache[filename] = _is_internal(filename)
    if internal:
      break
  return SourceInfo(frames)


def fun_sourceinfo(fun) -> str:
  """``name at file:line`` for a Python function, as JAX names traced functions."""
  while hasattr(fun, "func") and hasattr(fun, "args"):  # functools.partial
    fun = fun.func
  fun = getattr(fun, "__wrapped__", fun)
  code = getattr(fun, "__code__", None)
  name = getattr(fun, "__name__", None)
  if code is not None and name is not None:
    return f"{name} at {code.co_filename}:{code.co_firstlineno}"
  return str(fun)
