"""Instrumentation hooks: listeners for named events, durations, time spans and scalars
(mirrors `jax.monitoring`).

Code marks a point with a named event; every listener registered for that kind of
record is called each time the point is reached, e.g. to send the event to a metrics
collector. xjax records JAX's compilation events (see `xjax._src.monitoring`)::

  import xjax as jax
  seen = []
  jax.monitoring.register_event_duration_secs_listener(
      lambda event, secs, **kw: seen.append((event, kw)))
  jax.jit(lambda x: x + 1)(1.0)
  # seen holds ('/jax/core/compile/backend_compile_duration', {'fun_name': 'jit(<lambda>)'}), ...
"""
from xjax._src.monitoring import (
    clear_event_listeners as clear_event_listeners,
    record_event as record_event,
    record_event_duration_secs as record_event_duration_secs,
    record_event_time_span as record_event_time_span,
    record_scalar as record_scalar,
    register_event_duration_secs_listener as register_event_duration_secs_listener,
    register_event_listener as register_event_listener,
    register_event_time_span_listener as register_event_time_span_listener,
    register_scalar_listener as register_scalar_listener,
    unregister_event_duration_listener as unregister_event_duration_listener,
    unregister_event_listener as unregister_event_listener,
    unregister_event_time_span_listener as unregister_event_time_span_listener,
    unregister_scalar_listener as unregister_scalar_listener,
)
