"""Leaked-tracer detection for `jax_check_tracer_leaks` (`xjax.checking_leaks`).

When a trace completes, its tracers should be unreachable: a tracer still
referenced from user state (a global list, an object attribute, a closure)
leaked out of the transformation. `check_trace` finds such tracers with the
garbage collector, as JAX does, and raises JAX's ``Exception("Leaked trace
...")``; beyond JAX, each tracer names the user line that created it.
"""
from __future__ import annotations

import gc
import sys
import types

from xjax._src import core

_MAX_CHAIN = 8


def check_trace(trace: core.Trace, internal=()) -> None:
  """Raises if tracers of `trace` are still reachable.

  Args:
    trace: a completed (invalidated) trace.
    internal: containers of the trace itself that hold its tracers (its own
      constant table); tracers reachable only through them did not leak.
  """
  gc.collect()  # only reachable tracers matter: drop the ones in garbage cycles
  candidates = [r for r in gc.get_referrers(trace) if isinstance(r, core.Tracer)]
  ignored = {id(candidates), *(id(c) for c in internal)}
  leaked = [t for t in candidates if _referrers(t, ignored)]
  if leaked:
    ignored.add(id(leaked))
    raise leaked_tracer_error("trace", trace, leaked, ignored)


def _referrers(x, ignored: set[int]) -> list:
  # Frames and generators of the running program are not where a tracer leaked to.
  return [r for r in gc.get_referrers(x)
          if id(r) not in ignored and not isinstance(r, _RUNNING)]


_RUNNING = (types.FrameType, types.GeneratorType, types.CoroutineType)


def leaked_tracer_error(name: str, trace, tracers, ignored: set[int]) -> Exception:
  msgs = "\n\n".join(f"{t}{t._origin_msg()}{_created_msg(t)}{_why_alive(t, ignored)}"
                     for t in tracers)
  return Exception(f"Leaked {name} {trace!r}. Leaked tracer(s):\n\n{msgs}\n")


def _created_msg(tracer) -> str:
  """The user line that created `tracer` (xjax's addition to JAX's report)."""
  src = getattr(tracer, "_source_info", None)
  frames = src.frames if src is not None else ()
  if not frames:
    return ""
  return (f"\nThis {type(tracer).__name__} with object id {id(tracer)} was created on line:\n"
          f"  {frames[0].summarize()}")


def _module_of(namespace: dict):
  for module in list(sys.modules.values()):
    if getattr(module, "__dict__", None) is namespace:
      return module
  return None


def _keys_of(container, value) -> list:
  """The keys (or indices) under which `container` holds `value`."""
  items = container.items() if isinstance(container, dict) else enumerate(container)
  found = []
  for k, v in items:
    if v is value:
      found.append(k)
  return found


def _why_alive(x, ignored: set[int]) -> str:
  """One chain of referrers keeping `x` alive, up to a module global.

  Written without comprehensions over `child`: a comprehension would close
  over it, and its cell would show up as one more referrer.
  """
  lines: list[str] = []
  seen: set[int] = set()
  child = x
  held: list[list] = []
  ignored = ignored | {id(lines), id(seen), id(held)}
  while id(child) not in seen and len(lines) < _MAX_CHAIN:
    parents = _referrers(child, ignored)
    if not parents:
      break
    held.append(parents)  # each look-up's list refers to its finds: skip it later
    ignored.add(id(parents))
    seen.add(id(child))
    parent = parents[0]
    line = f"<{type(child).__name__} {id(child)}> is referred to by "
    if isinstance(parent, dict):
      keys = _keys_of(parent, child)
      key = keys[0] if keys else "?"
      module = _module_of(parent)
      if module is not None:
        lines.append(line + f"{module.__name__}.{key}")
        break
      owner = None
      for o in _referrers(parent, ignored):
        if getattr(o, "__dict__", None) is parent:
          owner = o
          break
      if owner is not None:
        lines.append(line + f"<{type(owner).__name__} {id(owner)}>.{key}")
        child = owner
        continue
      lines.append(line + f"<dict {id(parent)}>[{key!r}]")
    elif isinstance(parent, (list, tuple)):
      keys = _keys_of(parent, child)
      lines.append(line + f"<{type(parent).__name__} {id(parent)}>[{keys[0] if keys else '?'}]")
    else:
      keys = _keys_of(vars(parent), child) if hasattr(parent, "__dict__") else []
      attr = f".{keys[0]}" if keys else ""
      lines.append(line + f"<{type(parent).__name__} {id(parent)}>{attr}")
    child = parent
  return "\n" + "\n".join(lines) if lines else ""
