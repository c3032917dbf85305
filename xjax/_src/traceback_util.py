"""Tracebacks without xjax's own frames, as JAX shows them.

An exception leaving an API boundary (a jitted call, the function `grad` or
`vmap` returns, `lax.cond`, ...) is re-raised with the frames of files inside
the xjax package removed from its traceback, so the user sees their own code.
Only the outermost boundary on the stack filters; the success path costs
nothing (a try block). The flag `jax_traceback_filtering` picks the mode:

* ``"auto"`` (default): ``"tracebackhide"`` under IPython, else
  ``"quiet_remove_frames"``.
* ``"quiet_remove_frames"``: remove the frames and add a note saying so.
* ``"remove_frames"``: remove them, and chain the unfiltered traceback as the
  exception's ``__cause__`` (an `UnfilteredStackTrace`).
* ``"tracebackhide"``: keep the frames, marked ``__tracebackhide__`` for
  IPython and pytest to hide.
* ``"off"``: change nothing.
"""
from __future__ import annotations

import functools
import os
import sys
import traceback
import types

from xjax._src.config import config

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

MODES = ("auto", "off", "tracebackhide", "remove_frames", "quiet_remove_frames")

SIMPLIFIED_MESSAGE = ("For simplicity, JAX has removed its internal frames from the traceback "
                      "of the following exception. Set JAX_TRACEBACK_FILTERING=off to include "
                      "these.")
_UNFILTERED_NOTE = ("The stack trace below excludes JAX-internal frames.\n"
                    "The preceding is the original exception that occurred, unmodified.\n"
                    "\n--------------------")


class UnfilteredStackTrace(Exception):
  """The original, unfiltered traceback, chained as `__cause__` in "remove_frames" mode."""


# The code objects of the boundaries: an exception filtered by an inner
# boundary while an outer one is on the stack is left to the outer one.
_boundary_codes: set = set()


# Further path prefixes whose frames are filtered like xjax's own: a library built on
# JAX (flax registers its files) adds its own with `register_exclusion`.
_exclude_paths: list[str] = []


def register_exclusion(path: str) -> None:
  """Filters frames of files under `path` (a file or directory prefix) from user
  tracebacks, as xjax's own are (mirrors JAX's private `traceback_util.register_exclusion`,
  which libraries such as flax call)."""
  _exclude_paths.append(path)


def is_internal(filename: str) -> bool:
  return filename.startswith(_PACKAGE_DIR) or any(filename.startswith(p)
                                                  for p in _exclude_paths)


def include_frame(frame: types.FrameType) -> bool:
  """Whether `frame` stays in filtered tracebacks: its file is neither xjax's nor under a
  path given to `register_exclusion` (mirrors JAX's private `traceback_util.include_frame`,
  which equinox calls to build its error messages)."""
  return not is_internal(frame.f_code.co_filename)


def register_boundary(code) -> None:
  """Marks a function (by its code object) as an API boundary that filters itself."""
  _boundary_codes.add(code)


def api_boundary(fun):
  """Wraps `fun` so exceptions leaving it have xjax's frames filtered."""

  @functools.wraps(fun)
  def boundary(*args, **kwargs):
    try:
      return fun(*args, **kwargs)
    except Exception as e:
      filter_traceback(e)
      raise  # a bare raise adds no frame of its own

  register_boundary(boundary.__code__)
  return boundary


def _mode() -> str:
  mode = config.jax_traceback_filtering
  if mode is None or mode == "auto":
    return "tracebackhide" if _under_ipython() else "quiet_remove_frames"
  return mode


def _under_ipython() -> bool:
  return "IPython" in sys.modules and getattr(sys.modules["IPython"], "get_ipython",
                                              lambda: None)() is not None


def _outer_boundary_active() -> bool:
  frame = sys._getframe(3)  # above: this, filter_traceback, the boundary
  while frame is not None:
    if frame.f_code in _boundary_codes:
      return True
    frame = frame.f_back
  return False


def _filtered(tb):
  out = None
  for frame, lineno in reversed(list(traceback.walk_tb(tb))):
    if not is_internal(frame.f_code.co_filename):
      out = types.TracebackType(out, frame, frame.f_lasti, lineno)
  return out


def filter_traceback(e: Exception) -> None:
  """Filters the traceback of `e`, being handled in a boundary, per the mode.

  The boundary then re-raises it with a bare ``raise``, which adds no frame.
  """
  mode = _mode()
  if mode == "off" or getattr(e, "_xjax_filtered", False) or _outer_boundary_active():
    return
  tb = e.__traceback__
  if mode == "tracebackhide":
    for frame, _ in traceback.walk_tb(tb):
      if is_internal(frame.f_code.co_filename):
        frame.f_locals["__tracebackhide__"] = True
    return
  if mode not in ("remove_frames", "quiet_remove_frames"):
    raise ValueError(f"JAX_TRACEBACK_FILTERING={mode} is not a valid value.")
  try:
    e._xjax_filtered = True
  except AttributeError:  # an exception class with __slots__: filter it once more if re-raised
    pass
  if mode == "quiet_remove_frames":
    e.add_note("--------------------\n" + SIMPLIFIED_MESSAGE)
  else:
    message = "".join(traceback.format_exception_only(e)).strip()
    unfiltered = UnfilteredStackTrace(f"{message}\n\n{_UNFILTERED_NOTE}").with_traceback(tb)
    unfiltered.__cause__, unfiltered.__context__ = e.__cause__, e.__context__
    unfiltered.__suppress_context__ = e.__suppress_context__
    e.__cause__, e.__context__ = unfiltered, None
  e.with_traceback(_filtered(tb))
