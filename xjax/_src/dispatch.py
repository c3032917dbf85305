"""Eager execution: a primitive applied to concrete values runs through XLA.

`apply_primitive` compiles one executable per (primitive, params, input
avals, device), caches it, and runs it asynchronously. This module also
places values on devices: `device_put`, the default device, committed
placement, and "computation follows data".
"""
from __future__ import annotations

import logging
import re
import threading

import numpy as np

from xjax._src import backend
from xjax._src import compile_log
from xjax._src import core
from xjax._src import jaxpr_keys
from xjax._src import monitoring
from xjax._src import debug_nans
from xjax._src import dtypes
from xjax._src import executable_cache
from xjax._src.array import Array, Token, deleted_array_error
from xjax._src.config import config, transfer_guard_level
from xjax._src.interpreters import discharge
from xjax._src.interpreters import lowering
from xjax._src.sharding import spmd
from xjax._src.state import types as state_types
from xjax._src.state.types import Ref

SPMD = spmd.SPMD

# ----------------------------------------------------------------------------
# Devices and placement


class _DefaultDeviceCache(threading.local):
  # Per thread: `jax.default_device(d)` overrides the flag in one thread only.
  epoch = -1
  device = None


_default_device_cache = _DefaultDeviceCache()


def default_device():
  """The device for uncommitted values: `jax_default_device`, else the first device."""
  cache = _default_device_cache
  if cache.epoch == config.epoch:
    return cache.device
  epoch = config.epoch
  cache.device = _default_device_uncached()
  cache.epoch = epoch
  return cache.device


def _default_device_uncached():
  dev = config.jax_default_device
  if dev is None:
    return backend.local_devices()[0]
  if isinstance(dev, str):
    matching = [d for d in backend.local_devices() if d.platform == dev]
    if not matching:
      raise RuntimeError(f"Unknown backend {dev!r} for jax_default_device")
    return matching[0]
  return dev


def _incompatible_devices_error(name, devices_seen) -> ValueError:
  shown = ", ".join(f"{d!r}" for d in devices_seen)
  return ValueError(
      f"Received incompatible devices for {name}. Got argument(s) committed to "
      f"different devices: {shown}. Move the arguments to one device with "
      "`jax.device_put(x, device)` before calling it.")


def pick_device(args, name: str):
  """The device a computation on `args` runs on, and whether its result is committed.

  Committed inputs decide (they must agree); otherwise the default device.
  `SPMD` when an argument spans several devices (see `sharding.spmd`).
  """
  committed = None
  for a in args:
    if type(a) is Array and a._committed:
      if a._sharding is not None:
        return SPMD, True
      if committed is None:
        committed = a._device
      elif a._device != committed:
        raise _incompatible_devices_error(name, [committed, a._device])
  if committed is not None:
    return committed, True
  return default_device(), False


# Device buffers of Python scalars by (type, value, dtype, device): `x + 1.0` in a loop
# transfers 1.0 once. Never handed to a program that donates it (see `to_buffer`).
_scalar_buffers = executable_cache.LRUCache("scalar buffers", 4096)


def to_buffer(x, device, aval=None, donated: bool = False):
  """The device buffer of an argument on `device`, transferring host values (`aval`: x's,
  when the caller has it). A `donated` argument's buffer is consumed by the program: a
  host value then gets a buffer of its own, never the one cached for its value."""
  if type(x) is Array:
    if x._device == device:
      return x._buf
    if x._sharding is None and x._npy is None:
      return backend.copy_to_device(x._buf, device)
    return backend.transfer_to_device(x._value, device)
  if isinstance(x, core.Tracer):
    raise core.escaped_tracer_error(x)
  if type(x) is Token:
    return x._buf
  if type(x) is Ref:
    return x  # its current buffer is passed (and replaced) by the RefExecutable
  if aval is None:
    aval = core.get_aval(x)
  if config.jax_transfer_guard_host_to_device is not None or config.jax_transfer_guard is not None:
    check_host_to_device(aval, device, explicit=False)
  # Python scalars are cached by value; a float zero or NaN is not, since equal
  # keys would give -0.0 the buffer of 0.0 (issue 12) and NaN would never hit.
  if not donated and (type(x) in (int, bool) or (type(x) is float and x == x and x != 0.0)):
    key = (type(x), x, aval.dtype, device)
    buf = _scalar_buffers.get(key)
    if buf is None:
      buf = _scalar_buffers.put(key, backend.transfer_to_device(np.asarray(x, aval.dtype),
                                                                device))
    return buf
  return backend.transfer_to_device(np.asarray(x, aval.dtype), device)


_logger = logging.getLogger(__name__)


def check_host_to_device(aval, device, explicit: bool) -> None:
  """Applies the host-to-device transfer guard (`xjax.transfer_guard`) to one transfer."""
  level = transfer_guard_level("host_to_device")
  if level == "allow" or (explicit and level in ("log", "disallow")):
    return
  what = (f"host-to-device transfer: aval={aval!r}, "
          f"dst_sharding=SingleDeviceSharding(device={device!r}, memory_kind=device)")
  if level.startswith("log"):
    _logger.warning(what)
  else:
    raise backend.runtime_error_class()(f"INVALID_ARGUMENT: Disallowed {what}")


def device_put_value(x, device=None, weak_type=None, committed=None) -> Array:
  """`x` (an Array, NumPy array or scalar) as an Array on `device`."""
  if isinstance(x, core.Tracer):
    raise core.escaped_tracer_error(x)
  target = default_device() if device is None else device
  if committed is None:
    committed = device is not None
  if type(x) is Array:
    x._check_alive()
    if x._device == target and (x._committed == committed or not committed):
      return x if x._committed == committed else Array(x._buf, x.aval, target, committed)
    if x._sharding is None and x._npy is None:  # device to device
      return Array(backend.copy_to_device(x._buf, target), x.aval, target, committed)
    return Array(backend.transfer_to_device(x._value, target), x.aval, target, committed)
  aval = core.get_aval(x)
  if weak_type is not None:
    aval = aval.update_weak_type(weak_type)
  if config.jax_transfer_guard_host_to_device is not None or config.jax_transfer_guard is not None:
    check_host_to_device(aval, target, explicit=True)
  value = np.asarray(x, aval.dtype)
  return Array(backend.transfer_to_device(value, target), aval, target, committed)


# ----------------------------------------------------------------------------
# Compiled programs


def no_execution_error(text) -> RuntimeError:
  """JAX's error for running a program while `jax.no_execution` is set."""
  name = "program"
  if isinstance(text, str):
    found = re.search(r"module @(\S+)", text)
    name = found.group(1) if found else name
  return RuntimeError(f"JAX tried to execute function {name}, but the no_execution config "
                      "option is set")


class Executable:
  """A compiled closed jaxpr: run it on device buffers, get Arrays back."""
  __slots__ = ("xla_executable", "in_avals", "out_avals", "device", "const_buffers", "text",
               "_handlers", "_has_tokens", "_has_float0", "_execute")

  def __init__(self, xla_executable, closed_jaxpr: core.ClosedJaxpr, device, const_buffers,
               text):
    self.xla_executable = xla_executable
    # Of the consts, then of the arguments.
    self.in_avals = tuple(v.aval for v in closed_jaxpr.jaxpr.constvars) + tuple(
        closed_jaxpr.in_avals)
    self.out_avals = tuple(closed_jaxpr.out_avals)
    self.device = device
    self.const_buffers = const_buffers
    self.text = text
    # A token output comes back as XLA's token buffer, which reads as bool[0].
    self._has_tokens = core.abstract_token in self.out_avals
    # A float0 output (a zero cotangent of an integer input) comes back as NumPy float0
    # zeros, as JAX's does: no device array has that dtype.
    self._has_float0 = any(getattr(a, "dtype", None) == dtypes.float0 for a in self.out_avals)
    buffer_avals = [_TOKEN_BUFFER_AVAL if a is core.abstract_token else a
                    for a in self.out_avals]
    self._handlers = (backend.result_handlers(buffer_avals, device, False),
                      backend.result_handlers(buffer_avals, device, True))
    # A program with side effects returns once its callbacks have run: they
    # happen in call order and none is lost when the caller raises or exits.
    self._execute = (backend.execute_and_wait if closed_jaxpr.effects else backend.execute)

  def run(self, buffers, committed: bool) -> list[Array]:
    if config.jax_no_execution:
      raise no_execution_error(self.text)
    if self.const_buffers:
      buffers = [*self.const_buffers, *buffers]
    try:
      outs = self._execute(self.xla_executable, buffers, self._handlers[committed])
    except (TypeError, backend.runtime_error_class()):
      # A deleted (or donated) argument arrives as None: say so as JAX does,
      # without a check on the hot path.
      for i, buf in enumerate(buffers):
        if buf is None or backend.is_deleted(buf):
          raise deleted_array_error(self.in_avals[i]) from None
      raise
    device = self.device
    if self._has_tokens or self._has_float0:
      return [Token(b, device) if a is core.abstract_token
              else np.zeros(a.shape, dtypes.float0) if a.dtype == dtypes.float0
              else Array(b, a, device, committed) for b, a in zip(outs, self.out_avals)]
    if len(outs) == 1:  # no comprehension frame for the common case
      return [Array(outs[0], self.out_avals[0], device, committed)]
    return [Array(b, a, device, committed) for b, a in zip(outs, self.out_avals)]


_TOKEN_BUFFER_AVAL = core.ShapedArray((0,), np.bool_)


def compile_jaxpr(closed_jaxpr: core.ClosedJaxpr, device, name: str) -> Executable:
  """Lowers and compiles `closed_jaxpr` for `device`; its consts are transferred once."""
  if state_types.takes_refs(closed_jaxpr):
    return _compile_jaxpr_with_refs(closed_jaxpr, device, name)
  short = name[4:] if name.startswith("jit_") else name
  compile_log.log_compile(short, closed_jaxpr.in_avals)
  fun_name = f"jit({short})"  # as JAX names the events of an eager op's compilation
  with monitoring.timed_event(monitoring.JAXPR_TO_MLIR_MODULE_EVENT, fun_name):
    text, callbacks = lowering.lower_jaxpr_to_module(closed_jaxpr, name)
  exe = backend.compile_module(text, device, callbacks, fun_name=fun_name)
  consts = [to_buffer(c, device) for c in closed_jaxpr.consts]
  return Executable(exe, closed_jaxpr, device, consts, text)


def _compile_jaxpr_with_refs(closed_jaxpr, device, name: str):
  """A program taking refs: discharged to a functional one, run by a `RefExecutable`."""
  return compile_with_refs(closed_jaxpr, lambda closed: compile_jaxpr(closed, device, name))


# ----------------------------------------------------------------------------
# Programs taking refs


class RefExecutable:
  """An executable of a discharged program, run with `Ref` objects in the ref slots.

  `run` passes the refs' current buffers, then writes the final values of the
  refs (closed-over ones first, then the arguments) back into them.
  """
  __slots__ = ("executable", "ref_consts", "n_out")

  def __init__(self, executable, ref_consts, n_out: int):
    self.executable = executable
    self.ref_consts = ref_consts
    self.n_out = n_out

  def __getattr__(self, name):
    return getattr(self.executable, name)

  def run(self, buffers, committed: bool):
    device = self.executable.device
    args = [r for r in buffers if type(r) is Ref]
    if len({id(r) for r in args}) != len(args):
      _raise_aliased(buffers)
    bufs = [to_buffer(r._buf, device) for r in self.ref_consts]
    bufs += [to_buffer(b._buf, device) if type(b) is Ref else b for b in buffers]
    outs = self.executable.run(bufs, committed)
    finals = iter(outs[self.n_out:])
    for r in (*self.ref_consts, *args):
      r._buf = next(finals)
    return outs[:self.n_out]


def _raise_aliased(buffers):
  j, i = state_types.aliased_refs(buffers)
  raise ValueError(
      "only one reference to a mutable array may be passed as an argument to a function, "
      f"but the mutable array reference of type {buffers[i].aval.str_short()} appeared at "
      f"both args[{j}] and args[{i}].")


def compile_with_refs(closed: core.ClosedJaxpr, compile_fn) -> RefExecutable:
  """Discharges `closed` (refs among its inputs or consts) and compiles it with `compile_fn`.

  `compile_fn(closed)` compiles a functional closed jaxpr to a `dispatch.Executable`.
  """
  jaxpr = closed.jaxpr
  is_ref_const = [type(c) is Ref for c in closed.consts]
  ref_vars, plain_vars = [], []
  ref_consts, plain_consts = [], []
  for v, c, r in zip(jaxpr.constvars, closed.consts, is_ref_const):
    (ref_vars if r else plain_vars).append(v)
    (ref_consts if r else plain_consts).append(c)
  moved = jaxpr.replace(constvars=plain_vars, invars=[*ref_vars, *jaxpr.invars])
  disch = discharge.discharge_state(moved, plain_consts)
  return RefExecutable(compile_fn(disch), ref_consts, len(jaxpr.outvars))


def _one_eqn_jaxpr(prim: core.Primitive, avals, params) -> core.ClosedJaxpr:
  with monitoring.timed_event(monitoring.JAXPR_TRACE_EVENT, prim.name):
    out = prim.abstract_eval(*avals, **params)
  invars = [core.Var(a) for a in avals]
  out_avals = out if prim.multiple_results else [out]
  outvars = [core.Var(a) for a in out_avals]
  eqn = core.JaxprEqn(invars, outvars, prim, params)
  return core.ClosedJaxpr(core.Jaxpr([], invars, outvars, [eqn]), [])


# Eager executables live in `executable_cache.executables`, keyed as that module says:
# primitives by (primitive, params, avals, device, context id), nested jits' and
# higher-order primitives' jaxprs by `jaxpr_keys` (what they compute).
_executables = executable_cache.executables
# Primitives whose params hold jaxprs: keyed by structure (found on their first miss).
_higher_order: set = set()


def cached_executable(key, build):
  """The executable cached under `key`, else `build()` cached there."""
  return _executables.get_or_build(key, build)


def params_key(prim: core.Primitive, params: dict) -> tuple:
  """`prim`'s params as (part of) a cache key: nested jaxprs by structure."""
  if prim in _higher_order:
    return jaxpr_keys.params_key(params)
  if jaxpr_keys.has_jaxpr_params(params):
    _higher_order.add(prim)
    return jaxpr_keys.params_key(params)
  return tuple(params.items())


def _unhashable_params(prim, params) -> TypeError:
  return TypeError(f"internal: unhashable params for {prim.name}: {params}")


def _bad_argument(prim, args, err: TypeError) -> TypeError:
  """JAX's TypeError (raised from `err`) for an argument of `prim` that is no JAX value."""
  for i, a in enumerate(args):
    if type(a) is not Array and not core.valid_jaxtype(a):
      return TypeError(f"Error interpreting argument to {prim} as a JAX value. The problematic "
                       f"value is of type {type(a)} and was passed to {prim} at position {i}.\n")
  return err


def apply_primitive(prim: core.Primitive, args, params):
  """Runs `prim` eagerly on concrete arguments (the EvalTrace's default impl)."""
  device, committed = pick_device(args, prim.name)
  if device is SPMD:
    return _apply_spmd(prim, args, params)
  try:
    avals = tuple(a.aval if type(a) is Array else core.get_aval(a) for a in args)
  except TypeError as e:
    raise _bad_argument(prim, args, e) from e
  if prim in _higher_order:
    key = (prim, jaxpr_keys.params_key(params), avals, device, config.context_id())
  else:  # the hot path: params as they are
    key = (prim, tuple(params.items()), avals, device, config.context_id())
  try:
    exe = _executables.get(key)
  except TypeError:
    raise _unhashable_params(prim, params) from None
  if exe is None:
    if prim.abstract_eval is None:
      raise core.missing_rule("Abstract evaluation", prim)
    key = (prim, params_key(prim, params), avals, device, config.context_id())
    exe = _executables.get_or_build(key, lambda: _compile_eager(prim, avals, params, device))
  if type(exe) is spmd.ShardedExecutable:
    # The params name a mesh (a control-flow body holding a shard_map, say): one SPMD
    # program over it.
    outs = exe.run(list(args))
  else:
    outs = exe.run([to_buffer(a, device) for a in args], committed)
  if config.dispatch_state()[1]:
    debug_nans.check_primitive(prim.name, outs)
  return outs if prim.multiple_results else outs[0]


def _compile_eager(prim, avals, params, device):
  """The program of one eager equation: over the mesh its params name (a shard_map or a
  sharding constraint inside a higher-order primitive), else on `device`."""
  closed = _one_eqn_jaxpr(prim, avals, params)
  if prim in _higher_order:
    mesh = spmd.program_mesh(closed.jaxpr)
    if mesh is not None:
      return spmd.compile_spmd(closed, mesh, [None] * len(avals),
                               [None] * len(closed.out_avals), prim.name)
  return compile_jaxpr(closed, device, prim.name)


def _rebuild_array(value, weak_type):
  """Unpickles an Array: its value placed on the default device."""
  return device_put_value(value, weak_type=weak_type)


def _reduce_array(self):
  return (_rebuild_array, (self._value, self.weak_type))


Array.__reduce__ = _reduce_array  # pickling places through dispatch, which sits above array
core.default_impl = apply_primitive


# ----------------------------------------------------------------------------
# Eager primitives on sharded arrays


def _apply_spmd(prim, args, params):
  """`prim` on arguments of which some span several devices: one SPMD program."""
  avals = tuple(a.aval if type(a) is Array else core.get_aval(a) for a in args)
  in_shardings = spmd.in_shardings_of(args, prim.name)
  key = ("spmd", prim, params_key(prim, params), avals, in_shardings,
         config.context_id())

  def build():
    closed = _one_eqn_jaxpr(prim, avals, params)
    mesh = spmd.mesh_of(args, prim.name) or spmd.program_mesh(closed.jaxpr)
    return spmd.compile_spmd(closed, mesh, in_shardings, [None] * len(closed.out_avals),
                             prim.name)
  outs = executable_cache.executables.get_or_build(key, build).run(args)
  return outs if prim.multiple_results else outs[0]
