"""The parts of `jax.extend.core` that are functions over xjax's core (see
`xjax.extend.core`): aval mapping, equation construction, and trace-state queries."""
from __future__ import annotations

import contextlib
import weakref

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import errors
from xjax._src.interpreters import batching
from xjax._src.interpreters import partial_eval as pe

# JAX's `Effects` is a set of effects; xjax's jaxprs compute theirs as frozensets.
Effects = frozenset
no_effects: frozenset = frozenset()

# The types whose values are arrays to JAX (mirrors `jax.extend.core.array_types`).
array_types: frozenset = frozenset(
    t for t in core.pytype_aval_mappings
    if t is np.ndarray or (isinstance(t, type) and issubclass(t, np.generic)))


def mapped_aval(size: int, axis: int | None, aval):
  """`aval` without its mapped axis `axis` (of length `size`); unchanged for None.

  Mirrors `jax.extend.core.mapped_aval`.

  Raises:
    ValueError: ``aval.shape[axis] != size``.
    TypeError: `aval` is not an array aval.
  """
  if axis is None or isinstance(aval, core.AbstractToken):
    return aval
  if not isinstance(aval, core.ShapedArray):
    raise TypeError(f"no mapping handler for {aval} of type {type(aval)}")
  if aval.shape[axis] != size:
    raise ValueError(f"mapped_aval: axis {axis} of {aval.str_short()} has size "
                     f"{aval.shape[axis]}, not {size}")
  axis = axis % aval.ndim
  return aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1:])


def unmapped_aval(size: int, axis: int | None, aval, explicit_mesh_axis=None):
  """`aval` with a new axis of length `size` inserted at `axis`; unchanged for None.

  Mirrors `jax.extend.core.unmapped_aval`. `explicit_mesh_axis` is not supported
  (xjax's Explicit shardings are not threaded through here).

  Raises:
    TypeError: `aval` is not an array aval.
    ValueError: `axis` is not in ``[0, aval.ndim]``.
  """
  if explicit_mesh_axis is not None:
    raise NotImplementedError("unmapped_aval: explicit_mesh_axis is not supported by xjax")
  if axis is None or isinstance(aval, core.AbstractToken):
    return aval
  if not isinstance(aval, core.ShapedArray):
    raise TypeError(f"no unmapping handler for {aval} of type {type(aval)}")
  if not 0 <= axis <= aval.ndim:
    raise ValueError(f"unmapped_aval: axis {axis} is out of range for inserting an axis into "
                     f"{aval.str_short()}")
  return core.ShapedArray(aval.shape[:axis] + (size,) + aval.shape[axis:], aval.dtype,
                          aval.weak_type)


def new_jaxpr_eqn(invars, outvars, primitive, params, effects=no_effects, source_info=None,
                  ctx=None) -> core.JaxprEqn:
  """An equation ``outvars = primitive[params] invars`` (mirrors `jax.extend.core.new_jaxpr_eqn`).

  `effects` and `ctx` are accepted for compatibility: xjax derives an equation's
  effects from its primitive and params.
  """
  del effects, ctx
  return core.JaxprEqn(list(invars), list(outvars), primitive, dict(params), source_info)


def gensym(suffix: str = ""):
  """A function making a fresh `Var` of a given aval (mirrors `jax.extend.core.gensym`)."""
  del suffix
  return core.Var


def subjaxprs(jaxpr: core.Jaxpr):
  """The jaxprs held by the params of `jaxpr`'s equations (not recursively)."""
  for eqn in jaxpr.eqns:
    yield from core.jaxprs_in_params(eqn.params)


def concrete_or_error(force, val, context: str = ""):
  """``force(val)`` for a concrete `val`, or for a tracer whose value is known.

  Mirrors `jax.extend.core.concrete_or_error`; `force` None means the identity.

  Raises:
    ConcretizationTypeError: `val` is a tracer without a known value (the message
      includes `context`).
  """
  if force is None:
    force = lambda x: x
  if isinstance(val, core.Tracer):
    value = val.to_concrete_value()
    if value is None:
      raise errors.ConcretizationTypeError(val, context)
    return force(value)
  return force(val)


def primal_dtype_to_tangent_dtype(primal_dtype):
  """The dtype of tangents of values of `primal_dtype`: itself if inexact, else float0."""
  if isinstance(primal_dtype, dtypes.ExtendedDType):
    return dtypes.float0
  if not dtypes.issubdtype(primal_dtype, np.inexact):
    return dtypes.float0
  return np.dtype(primal_dtype)


class OpaqueTraceState:
  """A comparable token of the current trace: equal tokens mean the same trace."""
  __slots__ = ("_trace_ref",)

  def __init__(self, trace_ref):
    self._trace_ref = trace_ref

  def __eq__(self, other):
    return isinstance(other, OpaqueTraceState) and self._trace_ref == other._trace_ref

  def __hash__(self):
    return hash(self._trace_ref)


def get_opaque_trace_state(convention=None) -> OpaqueTraceState:
  """A token of the current trace (mirrors `jax.extend.core.get_opaque_trace_state`):
  libraries compare two tokens to tell whether they run under the same transformation."""
  del convention
  return OpaqueTraceState(weakref.ref(core.current_trace()))


def find_top_trace(xs):
  """The current trace (mirrors `jax.extend.core.find_top_trace`, which ignores `xs`)."""
  del xs
  return core.current_trace()


@contextlib.contextmanager
def set_current_trace(trace, check_leaks: bool = False):
  """Makes `trace` the current trace inside the block (mirrors
  `jax.extend.core.set_current_trace`; `check_leaks` is ignored)."""
  del check_leaks
  with core.set_current_trace(trace):
    yield


class _TakenTrace(core.Trace):
  """The current trace inside `take_current_trace`: binding a primitive there is an error."""
  __slots__ = ()

  def process_primitive(self, primitive, args, params):
    raise RuntimeError(f"internal: {primitive} bound inside take_current_trace() without "
                       "setting a trace (use set_current_trace)")


@contextlib.contextmanager
def take_current_trace():
  """Yields the current trace, which is not current inside the block (mirrors
  `jax.extend.core.take_current_trace`): a new trace built on it is made current with
  `set_current_trace`."""
  trace = core.current_trace()
  with core.set_current_trace(_TakenTrace(trace)):
    yield trace


def _trace_stack() -> list:
  trace, stack = core.current_trace(), []
  while trace is not None:
    stack.append(trace)
    trace = trace.parent_trace
  return stack


def unsafe_am_i_under_a_jit() -> bool:
  """Whether a jaxpr is being staged (jit, make_jaxpr, a control-flow body) below the
  current trace."""
  return any(isinstance(t, pe.DynamicJaxprTrace) for t in _trace_stack())


def unsafe_am_i_under_a_vmap() -> bool:
  """Whether a vmap is active."""
  return any(isinstance(t, batching.BatchTrace) for t in _trace_stack())


def nonempty_axis_env() -> bool:
  """Whether a named axis is bound (vmap's ``axis_name``)."""
  return bool(core.trace_ctx.axis_env)


def unsafe_get_axis_names() -> list:
  """The bound axis names, outermost first."""
  return list(core.trace_ctx.axis_env)
