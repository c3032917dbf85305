"""Event recording hooks: named events, durations, time spans and scalars (mirrors
`jax._src.monitoring`).

Code marks a moment with a name such as ``/jax/core/compile/backend_compile_duration``;
every listener registered for that kind of record is called with the name and the
record's keyword metadata (e.g. ``fun_name="jit(f)"``). A listener typically forwards
to a metrics collector. With no listener registered, recording costs one loop over an
empty list; `timed_event` costs one truth test.

The events xjax records are JAX's, at the same moments (see `timed_event`'s callers in
`jit.py`, `dispatch.py` and `backend.py`, and `compilation_cache.py`):

* ``/jax/core/compile/jaxpr_trace_duration`` (tracing a function to a jaxpr),
  ``/jax/core/compile/jaxpr_to_mlir_module_duration`` (lowering it to StableHLO),
  ``/jax/core/compile/backend_compile_duration`` (XLA compilation, persistent cache
  look-up included): each as a scalar (the start time), a duration and a time span,
  with ``fun_name``;
* ``/jax/compilation_cache/tasks_using_cache`` or ``.../task_disabled_cache`` (once per
  process), ``.../compile_requests_use_cache``, ``.../cache_hits``, ``.../cache_misses``
  (events) and ``.../compile_time_saved_sec``, ``.../cache_retrieval_time_sec``
  (durations).
"""
from __future__ import annotations

import contextlib
import time
from typing import Protocol

# Each list is replaced (never mutated) on registration, so a record in progress loops
# over the listeners it started with even if a listener (un)registers another.
_event_listeners: list = []
_event_duration_secs_listeners: list = []
_event_time_span_listeners: list = []
_scalar_listeners: list = []


class EventListenerWithMetadata(Protocol):
  """``listener(event, **metadata)``: called by `record_event`."""

  def __call__(self, event: str, **kwargs: str | int) -> None:
    ...


class EventDurationListenerWithMetadata(Protocol):
  """``listener(event, duration_secs, **metadata)``: called by `record_event_duration_secs`."""

  def __call__(self, event: str, duration_secs: float, **kwargs: str | int) -> None:
    ...


class EventTimeSpanListenerWithMetadata(Protocol):
  """``listener(event, start_time, end_time, **metadata)``: called by
  `record_event_time_span`."""

  def __call__(self, event: str, start_time: float, end_time: float,
               **kwargs: str | int) -> None:
    ...


class ScalarListenerWithMetadata(Protocol):
  """``listener(event, value, **metadata)``: called by `record_scalar`."""

  def __call__(self, event: str, value: float | int, **kwargs: str | int) -> None:
    ...


def record_event(event: str, **kwargs: str | int) -> None:
  """Records that `event` happened: calls each event listener with it and `kwargs`.

  Pass the same keyword arguments, in the same order, at every record of one event.
  Mirrors `jax.monitoring.record_event`.
  """
  for callback in _event_listeners:
    callback(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
  """Records that `event` took `duration` seconds (a float): calls each duration
  listener with ``(event, duration, **kwargs)``. Mirrors
  `jax.monitoring.record_event_duration_secs`."""
  for callback in _event_duration_secs_listeners:
    callback(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float,
                           **kwargs: str | int) -> None:
  """Records that `event` ran from `start_time` to `end_time` (seconds since the epoch,
  `time.time()`): calls each time-span listener. Mirrors
  `jax.monitoring.record_event_time_span`."""
  for callback in _event_time_span_listeners:
    callback(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
  """Records a scalar `value` for `event`: calls each scalar listener. Mirrors
  `jax.monitoring.record_scalar`."""
  for callback in _scalar_listeners:
    callback(event, value, **kwargs)


def _check_callable(callback, fn: str) -> None:
  if not callable(callback):
    raise TypeError(f"{fn}: callback must be callable, got {callback!r}")


def register_event_listener(callback: EventListenerWithMetadata) -> None:
  """Calls `callback(event, **kwargs)` on every later `record_event`.

  Raises:
    TypeError: `callback` is not callable.
  """
  global _event_listeners
  _check_callable(callback, "register_event_listener")
  _event_listeners = [*_event_listeners, callback]


def register_event_duration_secs_listener(callback: EventDurationListenerWithMetadata) -> None:
  """Calls `callback(event, duration_secs, **kwargs)` on every later
  `record_event_duration_secs`.

  Raises:
    TypeError: `callback` is not callable.
  """
  global _event_duration_secs_listeners
  _check_callable(callback, "register_event_duration_secs_listener")
  _event_duration_secs_listeners = [*_event_duration_secs_listeners, callback]


def register_event_time_span_listener(callback: EventTimeSpanListenerWithMetadata) -> None:
  """Calls `callback(event, start_time, end_time, **kwargs)` on every later
  `record_event_time_span`.

  Raises:
    TypeError: `callback` is not callable.
  """
  global _event_time_span_listeners
  _check_callable(callback, "register_event_time_span_listener")
  _event_time_span_listeners = [*_event_time_span_listeners, callback]


def register_scalar_listener(callback: ScalarListenerWithMetadata) -> None:
  """Calls `callback(event, value, **kwargs)` on every later `record_scalar`.

  Raises:
    TypeError: `callback` is not callable.
  """
  global _scalar_listeners
  _check_callable(callback, "register_scalar_listener")
  _scalar_listeners = [*_scalar_listeners, callback]


def get_event_listeners() -> list[EventListenerWithMetadata]:
  """A copy of the registered event listeners."""
  return list(_event_listeners)


def get_event_duration_listeners() -> list[EventDurationListenerWithMetadata]:
  """A copy of the registered event duration listeners."""
  return list(_event_duration_secs_listeners)


def get_event_time_span_listeners() -> list[EventTimeSpanListenerWithMetadata]:
  """A copy of the registered event time-span listeners."""
  return list(_event_time_span_listeners)


def get_scalar_listeners() -> list[ScalarListenerWithMetadata]:
  """A copy of the registered scalar listeners."""
  return list(_scalar_listeners)


def clear_event_listeners() -> None:
  """Unregisters every listener of every kind.

  (JAX 0.10.2's version of this function leaves the scalar listeners registered, by a
  missing `global`; here they go too, as its name says.)
  """
  global _event_listeners, _event_duration_secs_listeners, _event_time_span_listeners
  global _scalar_listeners
  _event_listeners = []
  _event_duration_secs_listeners = []
  _event_time_span_listeners = []
  _scalar_listeners = []


def _unregister(listeners: list, callback, fn: str) -> list:
  """`listeners` without (the first occurrence of) `callback`.

  Raises:
    AssertionError: `callback` is not registered (JAX's class: its `assert`).
  """
  for i, c in enumerate(listeners):
    if c is callback or c == callback:
      return listeners[:i] + listeners[i + 1:]
  raise AssertionError(f"{fn}: callback {callback!r} is not registered")


def unregister_event_listener(callback: EventListenerWithMetadata) -> None:
  """Unregisters an event listener (mirrors `jax.monitoring.unregister_event_listener`).

  Raises:
    AssertionError: `callback` is not registered (as JAX).
  """
  global _event_listeners
  _event_listeners = _unregister(_event_listeners, callback, "unregister_event_listener")


def unregister_event_duration_listener(callback: EventDurationListenerWithMetadata) -> None:
  """Unregisters an event duration listener.

  Raises:
    AssertionError: `callback` is not registered (as JAX).
  """
  global _event_duration_secs_listeners
  _event_duration_secs_listeners = _unregister(
      _event_duration_secs_listeners, callback, "unregister_event_duration_listener")


def unregister_event_time_span_listener(callback: EventTimeSpanListenerWithMetadata) -> None:
  """Unregisters an event time-span listener.

  Raises:
    AssertionError: `callback` is not registered (as JAX).
  """
  global _event_time_span_listeners
  _event_time_span_listeners = _unregister(
      _event_time_span_listeners, callback, "unregister_event_time_span_listener")


def unregister_scalar_listener(callback: ScalarListenerWithMetadata) -> None:
  """Unregisters a scalar listener.

  Raises:
    AssertionError: `callback` is not registered (as JAX).
  """
  global _scalar_listeners
  _scalar_listeners = _unregister(_scalar_listeners, callback, "unregister_scalar_listener")


# ----------------------------------------------------------------------------
# Timing a stage of compilation, as JAX's `dispatch.log_elapsed_time` records it.

JAXPR_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
JAXPR_TO_MLIR_MODULE_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


class _TimedEvent:
  """Records `event` for `fun_name`: the start time as a scalar on entry, the duration
  and the time span on exit (also when the body raises, as JAX)."""
  __slots__ = ("event", "fun_name", "start")

  def __init__(self, event: str, fun_name: str):
    self.event = event
    self.fun_name = fun_name

  def __enter__(self):
    self.start = time.time()
    record_scalar(self.event, self.start, fun_name=self.fun_name)

  def __exit__(self, exc_type, exc, tb):
    end = time.time()
    record_event_duration_secs(self.event, end - self.start, fun_name=self.fun_name)
    record_event_time_span(self.event, self.start, end, fun_name=self.fun_name)


_NOT_TIMED = contextlib.nullcontext()


def timed_event(event: str, fun_name: str):
  """A context manager recording how long its body takes as `event` (one of the
  ``*_EVENT`` names above), with ``fun_name`` as metadata; a shared no-op context when no
  scalar, duration or time-span listener is registered."""
  if _scalar_listeners or _event_duration_secs_listeners or _event_time_span_listeners:
    return _TimedEvent(event, fun_name)
  return _NOT_TIMED
