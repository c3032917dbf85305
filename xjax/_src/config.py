"""Configuration flags, read from environment variables and `config.update`.

Mirrors `jax.config`: each flag has a name (``jax_enable_x64``), an optional
environment variable (``JAX_ENABLE_X64``) and a default.  Flags are read as
attributes (``config.jax_enable_x64``) and set with ``config.update`` or the
context managers below (``enable_x64``, ``disable_jit``).
"""
from __future__ import annotations

import contextlib
import functools
import os
import threading

_TRUE = ("1", "true", "yes", "on", "t", "y")
_FALSE = ("0", "false", "no", "off", "f", "n", "")


def _parse_bool(name: str, text: str) -> bool:
  lowered = text.strip().lower()
  if lowered in _TRUE:
    return True
  if lowered in _FALSE:
    return False
  raise ValueError(f"invalid truth value {text!r} for environment variable {name}")


def _backend_started() -> bool:
  import sys
  backend = sys.modules.get("xjax._src.backend")
  return backend is not None and backend._client is not None


class _Flag:
  """One configuration flag: its default, environment variable, parser and allowed values."""
  __slots__ = ("name", "default", "env", "kind", "help", "choices")

  def __init__(self, name, default, env=None, kind=bool, help="", choices=None):
    self.name, self.default, self.env, self.kind, self.help = name, default, env, kind, help
    self.choices = choices  # for enum flags: the allowed strings (None is allowed too
    # where the default is None)

  def check(self, value):
    """JAX's ValueError for a value outside an enum flag's choices."""
    if self.choices is None or value in self.choices or (value is None and self.default is None):
      return
    allowed = "None or in" if self.default is None else "in"
    raise ValueError(f"new enum value must be {allowed} {list(self.choices)}, got {value} of "
                     f"type {type(value)}.")

  def initial_value(self):
    if self.env is not None and self.env in os.environ:
      text = os.environ[self.env]
      return _parse_bool(self.env, text) if self.kind is bool else self.kind(text)
    return self.default


_TRANSFER_GUARD_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")

_FLAGS = [
    _Flag("jax_enable_x64", False, "JAX_ENABLE_X64",
          help="Enable 64-bit types (float64, int64, complex128)."),
    _Flag("jax_enable_checks", False, "JAX_ENABLE_CHECKS",
          help="Typecheck every jaxpr where it is built."),
    _Flag("jax_disable_jit", False, "JAX_DISABLE_JIT",
          help="Run jitted functions op by op, for debugging."),
    _Flag("jax_debug_nans", False, "JAX_DEBUG_NANS",
          help="Raise FloatingPointError when a computation produces a NaN."),
    _Flag("jax_debug_infs", False, "JAX_DEBUG_INFS",
          help="Raise FloatingPointError when a computation produces an inf."),
    _Flag("jax_threefry_partitionable", False, "JAX_THREEFRY_PARTITIONABLE",
          help="Use the partitionable threefry stream layout."),
    _Flag("jax_traceback_filtering", "auto", "JAX_TRACEBACK_FILTERING", kind=str,
          help="How xjax-internal frames are hidden from tracebacks (see traceback_util).",
          choices=("off", "tracebackhide", "remove_frames", "quiet_remove_frames", "auto")),
    _Flag("jax_platforms", None, "JAX_PLATFORMS", kind=str,
          help="Comma-separated list of platforms to initialise, e.g. 'cpu'."),
    _Flag("jax_platform_name", None, "JAX_PLATFORM_NAME", kind=str,
          help="Deprecated alias of jax_platforms selecting one platform."),
    _Flag("jax_num_cpu_devices", -1, "JAX_NUM_CPU_DEVICES", kind=int,
          help="Number of CPU devices to create (set it before the first computation); "
          "-1: one, or what XLA_FLAGS' --xla_force_host_platform_device_count says."),
    _Flag("jax_cpu_collectives_implementation", "gloo",
          "JAX_CPU_COLLECTIVES_IMPLEMENTATION", kind=str,
          help="Cross-process collective implementation used on CPU. Must be one of "
          '("gloo", "mpi")', choices=("gloo", "mpi", "megascale")),
    _Flag("jax_cpu_get_local_topology_timeout_minutes", 2,
          "JAX_CPU_GET_LOCAL_TOPOLOGY_TIMEOUT_MINUTES", kind=int,
          help="Timeout in minutes for getting the local topology of each CPU device when "
          "building the global topology."),
    _Flag("jax_cpu_get_global_topology_timeout_minutes", 5,
          "JAX_CPU_GET_GLOBAL_TOPOLOGY_TIMEOUT_MINUTES", kind=int,
          help="Timeout in minutes for getting the global topology of CPU devices; should be "
          "strictly greater than `--jax_cpu_get_local_topology_timeout_minutes`."),
    _Flag("jax_enable_recoverability", False, "JAX_ENABLE_RECOVERABILITY",
          help="Allows a multi-controller JAX job to continue running, even after some tasks "
          "have failed."),
    _Flag("jax_enable_preemption_service", True, "JAX_ENABLE_PREEMPTION_SERVICE",
          help="Enables the preemption service. See "
          "multihost_utils.reached_preemption_sync_point for details."),
    _Flag("jax_check_proxy_envs", True, "JAX_CHECK_PROXY_ENVS",
          help="Checks proxy vars in user envs and emit warnings."),
    _Flag("jax_use_shardy_partitioner", True, "JAX_USE_SHARDY_PARTITIONER",
          help="Partition multi-device programs with Shardy (the only partitioner xjax "
          "lowers for: its sdy attributes carry the shardings)."),
    _Flag("jax_default_prng_impl", "threefry2x32", "JAX_DEFAULT_PRNG_IMPL", kind=str,
          help="The PRNG implementation of keys made without an explicit `impl`.",
          choices=("threefry2x32", "rbg", "unsafe_rbg")),
    _Flag("jax_ragged_dot_use_ragged_dot_instruction", True, None,
          help="(TPU only, in JAX) Lower ragged_dot to chlo.ragged_dot; xjax lowers ragged_dot "
          "densely on every platform, as JAX does off TPU, so the flag changes nothing."),
    _Flag("jax_default_device", None, None, kind=object,
          help="Device on which uncommitted values are placed."),
    _Flag("jax_default_matmul_precision", None, "JAX_DEFAULT_MATMUL_PRECISION", kind=str,
          help="Default precision of matrix multiplication for float32 operands.",
          choices=("default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
                   "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
                   "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32",
                   "BF16_BF16_BF16", "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6",
                   "BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32",
                   "F64_F64_F64")),
    _Flag("jax_numpy_rank_promotion", "allow", "JAX_NUMPY_RANK_PROMOTION", kind=str,
          help="Rank promotion in jnp broadcasting: 'allow', 'warn' or 'raise'.",
          choices=("allow", "warn", "raise")),
    _Flag("jax_numpy_dtype_promotion", "standard", "JAX_NUMPY_DTYPE_PROMOTION", kind=str,
          help="Dtype promotion: 'standard' or 'strict'.", choices=("standard", "strict")),
    _Flag("jax_check_static_indices", False, "JAX_CHECK_STATIC_INDICES",
          help="Raise IndexError for static integer indices out of bounds in jnp indexing "
          "(checked when the indexing mode is 'promise_in_bounds', the default of gathers)."),
    _Flag("jax_auto_pcast", True, "JAX_AUTO_PCAST",
          help="If True, automatically insert `pvary` to match VMAs on simple ops."),
    _Flag("jax_check_tracer_leaks", False, "JAX_CHECK_TRACER_LEAKS",
          help="Turn on checking for leaked tracers as soon as a trace completes. Enabling "
          "leak checking may have performance impacts: some caching is disabled, and other "
          "overheads may be added."),
    _Flag("jax_log_compiles", False, "JAX_LOG_COMPILES",
          help="Log a message each time `jit` compiles an XLA computation. Logging is "
          "performed with `logging`. When this option is set, the log level is WARNING; "
          "otherwise the level is DEBUG."),
    _Flag("jax_explain_cache_misses", False, "JAX_EXPLAIN_CACHE_MISSES",
          help="Each time there is a miss on the tracing cache, log an explanation. Logging "
          "is performed with `logging`. When this option is set, the log level is WARNING; "
          "otherwise the level is DEBUG."),
    _Flag("jax_no_tracing", False, "JAX_NO_TRACING",
          help="Disallow tracing for jit: a jitted function that would trace raises "
          "RuntimeError."),
    _Flag("jax_no_execution", False, "JAX_NO_EXECUTION",
          help="Disallow executions: running a compiled program raises RuntimeError."),
    _Flag("jax_debug_key_reuse", False, "JAX_DEBUG_KEY_REUSE",
          help="Turn on key reuse checking: typed PRNG keys (made with jax.random.key()) "
          "have their usage tracked, and reusing a consumed key raises KeyReuseError."),
    _Flag("jax_legacy_prng_key", "allow", "JAX_LEGACY_PRNG_KEY", kind=str,
          help="What passing a raw uint32 key array to a jax.random function does: 'allow' "
          "it, 'warn', or raise an 'error'.", choices=("allow", "warn", "error")),
    _Flag("jax_enable_custom_prng", False, "JAX_ENABLE_CUSTOM_PRNG",
          help="Enables an internal upgrade that allows one to define custom pseudo-random "
          "number generator implementations (as in JAX 0.10.2, where the upgrade is "
          "complete, it changes nothing)."),
    _Flag("jax_eager_constant_folding", False, "JAX_EAGER_CONSTANT_FOLDING",
          help="Evaluate operations on concrete values eagerly while tracing (set by "
          "`ensure_compile_time_eval`)."),
    # JAX's switches to its next implementations of custom_vjp and remat ("embrace the
    # future"); they do not change what the functions compute. xjax has one implementation
    # of each and accepts either value.
    _Flag("jax_custom_vjp3", False, "JAX_CUSTOM_VJP3",
          help="JAX's custom_vjp3 checks: a custom_vjp function closing over a tracer "
               "raises UnexpectedTracerError; a fwd output type mismatch names the leaf."),
    _Flag("jax_remat3", False, "JAX_REMAT3",
          help="Accepted for JAX compatibility; xjax has one remat implementation."),
    _Flag("jax_pprint_use_color", True, "JAX_PPRINT_USE_COLOR",
          help="Enable jaxpr pretty-printing with colorful syntax highlighting (accepted; "
          "xjax prints jaxprs without color, as JAX does off a terminal)."),
    _Flag("jax_disable_bwd_checks", False, "JAX_DISABLE_BWD_CHECKS",
          help="Disables all bwd pass checks (a custom_vjp bwd rule's cotangent types are "
          "not checked against the primal inputs)."),
    _Flag("jax_softmax_custom_jvp", False, "JAX_SOFTMAX_CUSTOM_JVP",
          help="Use a new custom_jvp rule for jax.nn.softmax. The new rule should improve "
          "memory usage and stability. Set True to use new behavior. See "
          "https://github.com/jax-ml/jax/pull/15677"),
    _Flag("jax_allow_f16_reductions", True, "JAX_ALLOW_F16_REDUCTIONS",
          help="If False, `reduce_sum` on `f16` or `bf16` inputs will raise an error."
          "Defaults to True."),
    *(_Flag(f"jax_transfer_guard{suffix}", None, f"JAX_TRANSFER_GUARD{suffix.upper()}",
            kind=str, help=f"Select the transfer guard level for {what}. Default is \"allow\".",
            choices=_TRANSFER_GUARD_LEVELS)
      for suffix, what in (("", "all transfers"),
                           ("_host_to_device", "host-to-device transfers"),
                           ("_device_to_device", "device-to-device transfers"),
                           ("_device_to_host", "device-to-host transfers"))),
    # The persistent compilation cache (xjax._src.compilation_cache).
    _Flag("jax_enable_compilation_cache", True, "JAX_ENABLE_COMPILATION_CACHE",
          help="If set to False, the compilation cache will be disabled regardless of whether "
          "set_cache_dir() was called. If set to True, the path could be set to a default "
          "value or via a call to set_cache_dir()."),
    _Flag("jax_compilation_cache_dir", None, "JAX_COMPILATION_CACHE_DIR", kind=str,
          help="Path for the cache. Precedence: 1. A call to compilation_cache.set_cache_dir(). "
          "2. The value of this flag set in the command line or by default."),
    _Flag("jax_persistent_cache_min_compile_time_secs", 1.0,
          "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", kind=float,
          help="The minimum compile time of a computation to be written to the persistent "
          "compilation cache. This threshold can be raised to decrease the number of entries "
          "written to the cache."),
    _Flag("jax_persistent_cache_min_entry_size_bytes", 0,
          "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", kind=int,
          help="The minimum size (in bytes) of an entry that will be cached in the persistent "
          "compilation cache: -1: no size restriction; 0 (default): no restriction either; "
          "> 0: the minimum size."),
    _Flag("jax_compilation_cache_max_size", -1, "JAX_COMPILATION_CACHE_MAX_SIZE", kind=int,
          help="The maximum size (in bytes) allowed for the persistent compilation cache. When "
          "set, the least recently accessed cache entry(s) will be deleted once the total "
          "cache directory size exceeds the specified limit. Caching will be disabled if this "
          "value is set to 0. A special value of -1 indicates no limit, allowing the cache "
          "size to grow indefinitely."),
    _Flag("jax_raise_persistent_cache_errors", False, "JAX_RAISE_PERSISTENT_CACHE_ERRORS",
          help="If true, exceptions raised when reading or writing to the persistent "
          "compilation cache will be allowed through, halting program execution if not "
          "manually caught. If false, exceptions are caught and raised as warnings, allowing "
          "program execution to continue. Defaults to false so cache bugs or intermittent "
          "issues are non-fatal."),
]


_MISSING = object()

# Flags read when the client is made: changing one afterwards is JAX's RuntimeError.
_BEFORE_BACKEND = {
    "jax_num_cpu_devices": "jax_num_cpu_devices config should be updated before backends are "
                           "initialized.",
    **{name: f"{name} config should be updated before backends are initialized i.e. before "
             "any JAX operation is executed. You should initialize this config immediately "
             "after `import jax`."
       for name in ("jax_cpu_get_local_topology_timeout_minutes",
                    "jax_cpu_get_global_topology_timeout_minutes")},
}


class Config:
  """Holds the flag values; ``config.jax_enable_x64`` reads a flag.

  Values set by a context manager are thread-local and override the global
  value, as in JAX.
  """

  def __init__(self):
    object.__setattr__(self, "_flags", {f.name: f for f in _FLAGS})
    object.__setattr__(self, "_values", {f.name: f.initial_value() for f in _FLAGS})
    object.__setattr__(self, "_local", threading.local())
    object.__setattr__(self, "_listeners", [])
    # Changes (global or thread-local) are read-modify-writes of the shared
    # epoch and override count: one at a time, or a thread could read another
    # thread's override, or a cache keyed on the epoch could miss a change.
    object.__setattr__(self, "_lock", threading.RLock())
    # Bumped on every change, so caches can key on one int.
    object.__setattr__(self, "epoch", 0)
    # While no thread has an override active, the values also live in the
    # instance dict, so reading a flag is a plain attribute lookup (hot path).
    object.__setattr__(self, "_active_overrides", 0)
    self._sync_fast_attributes()

  def _sync_fast_attributes(self):
    if self._active_overrides == 0:
      self.__dict__.update(self._values)
    else:
      for name in self._values:
        self.__dict__.pop(name, None)

  def __getattr__(self, name):
    values = self.__dict__["_values"]
    if name not in values:
      raise AttributeError(f"Unrecognized config option: {name}")
    overrides = getattr(self._local, "overrides", None)
    if overrides and name in overrides:
      return overrides[name]
    return values[name]

  def __setattr__(self, name, value):
    raise AttributeError("use config.update(name, value) to change a flag")

  def read(self, name: str):
    """The value of flag ``name`` (mirrors `jax.config.read`). As in JAX, only the flags
    without a context manager (``jax_enable_x64``, ``jax_platform_name``,
    ``jax_check_proxy_envs``) are read this way.

    Raises:
      AttributeError: ``name`` is not a flag, or it has a context manager (read it as
        ``config.<name>``).
    """
    if name not in self._values:
      raise AttributeError(f"Unrecognized config option: {name}")
    if name not in ("jax_enable_x64", "jax_platform_name", "jax_check_proxy_envs"):
      raise AttributeError(
          "For flags with a corresponding contextmanager, read their value "
          f"via e.g. `config.{name}` rather than `config.FLAGS.{name}`.")
    return getattr(self, name)

  @property
  def x64_enabled(self) -> bool:
    """Whether 64-bit types are on in this thread: ``jax_enable_x64`` (mirrors JAX's
    `Config.x64_enabled`, kept there for users of ``FLAGS.x64_enabled``)."""
    return self.jax_enable_x64

  def parse_flags_with_absl(self) -> None:
    """Sets flags from the command line (``sys.argv``), as absl flags: ``--jax_name=value``,
    and for a boolean flag also ``--jax_name`` (true) and ``--nojax_name`` (false). Other
    arguments are left alone; only the first call reads them. Test files of libraries
    call it at import (mirrors `jax.config.parse_flags_with_absl`; xjax parses the
    arguments itself and does not need absl).

    Raises:
      ValueError: the value given for a flag does not parse as its type or is not one of
        its choices.
    """
    import sys
    if self.__dict__.get("_parsed_argv"):
      return
    object.__setattr__(self, "_parsed_argv", True)
    for arg in sys.argv[1:]:
      if arg == "--":
        break
      if not arg.startswith("--"):
        continue
      name, eq, text = arg[2:].partition("=")
      if name in self._flags:
        flag = self._flags[name]
        if eq:
          value = _parse_bool(name, text) if flag.kind is bool else flag.kind(text)
        elif flag.kind is bool:
          value = True
        else:
          continue  # absl would take the next argument; JAX's flags are given with "="
      elif name.startswith("no") and not eq and name[2:] in self._flags and \
          self._flags[name[2:]].kind is bool:
        name, value = name[2:], False
      else:
        continue
      self.update(name, value)

  def update(self, name: str, value) -> None:
    """Sets flag ``name`` to ``value`` (mirrors `jax.config.update`)."""
    if name not in self._values:
      raise AttributeError(f"Unrecognized config option: {name}")
    flag = self._flags[name]
    if flag.kind is bool and not isinstance(value, bool):
      if isinstance(value, str):
        value = _parse_bool(name, value)
      elif isinstance(value, int):
        value = bool(value)
      else:
        raise TypeError(f"config option {name} takes a bool, got {type(value).__name__}")
    flag.check(value)
    if name in _BEFORE_BACKEND and value != self._values[name] and _backend_started():
      raise RuntimeError(_BEFORE_BACKEND[name])
    with self._lock:
      self._values[name] = value
      self._sync_fast_attributes()
      self._changed()

  def _changed(self):
    object.__setattr__(self, "epoch", self.epoch + 1)
    for listener in self._listeners:
      listener()

  @contextlib.contextmanager
  def override(self, name: str, value):
    """Sets ``name`` to ``value`` in this thread while the block runs."""
    old = self._set_local(name, value)
    try:
      yield
    finally:
      self._restore_local(name, old)

  def _set_local(self, name: str, value):
    """Overrides ``name`` in this thread; returns the token `_restore_local` takes."""
    if name not in self._values:
      raise AttributeError(f"Unrecognized config option: {name}")
    self._flags[name].check(value)
    overrides = getattr(self._local, "overrides", None)
    if overrides is None:
      overrides = self._local.overrides = {}
    old = overrides.get(name, _MISSING)
    with self._lock:
      overrides[name] = value
      object.__setattr__(self, "_active_overrides", self._active_overrides + 1)
      self._sync_fast_attributes()
      self._changed()
    return old

  def _restore_local(self, name: str, old) -> None:
    overrides = self._local.overrides
    with self._lock:
      if old is _MISSING:
        del overrides[name]
      else:
        overrides[name] = old
      object.__setattr__(self, "_active_overrides", self._active_overrides - 1)
      self._sync_fast_attributes()
      self._changed()

  def values_key(self) -> tuple:
    """The flags that change what a traced program computes, for cache keys.

    Cached per thread until any flag changes (the hot path of every jit call).
    """
    local = self._local
    epoch = self.epoch  # read first: a change while the key is built makes it stale
    if getattr(local, "key_epoch", -1) == epoch:
      return local.key
    # The flags' order is VALUES_KEY_NAMES' (cache-miss explanations name them).
    key = (self.jax_enable_x64, self.jax_default_matmul_precision,
           self.jax_numpy_rank_promotion, self.jax_numpy_dtype_promotion,
           self.jax_threefry_partitionable, self.jax_debug_nans, self.jax_debug_infs,
           self.jax_debug_key_reuse, self.jax_check_tracer_leaks,
           self.jax_allow_f16_reductions, self.jax_check_static_indices,
           self.jax_default_prng_impl, self.jax_no_execution, self.jax_auto_pcast,
           *(provider() for provider in _context_providers))
    # Interned: equal contexts give the same tuple object (callers compare keys by
    # identity first), and each distinct context a small int (`context_id`).
    with _interned_lock:
      key = _interned.setdefault(key, key)
      if key not in _context_ids:
        _context_ids[key] = len(_context_ids)
      local.context_id = _context_ids[key]
    local.key = key
    # The second item asks the dispatch paths for their debug checks: NaNs and
    # infs after a call, key reuse before it.
    local.state = (self.jax_disable_jit,
                   self.jax_debug_nans or self.jax_debug_infs or self.jax_debug_key_reuse, key)
    local.key_epoch = epoch
    return key

  def context_id(self) -> int:
    """A small int naming `values_key()` (equal keys, equal ids): a cheap part of a cache
    key on the hot path of eager dispatch."""
    local = self._local
    if getattr(local, "key_epoch", -1) != self.epoch:
      self.values_key()
    return local.context_id

  def trace_context_changed(self) -> None:
    """Called by the owners of registered trace contexts (`register_trace_context`) when
    their value changes: every cached key is recomputed."""
    with self._lock:
      self._changed()

  def dispatch_state(self) -> tuple[bool, bool, tuple]:
    """(disable_jit, debug checks (nans, infs, key reuse), values_key()) in one look-up, cached like
    `values_key` (the hot path of eager and jit dispatch)."""
    local = self._local
    if getattr(local, "key_epoch", -1) != self.epoch:
      self.values_key()
    return local.state

  def __repr__(self):
    return "Config(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self._values) + ")"


# Context values owned by higher layers that change what a trace produces (the context
# mesh of `set_mesh`/`use_mesh`/`use_abstract_mesh`): each a function of no arguments
# giving a hashable value for this thread. `values_key()` ends with them, so every cache
# keyed on it (traces, executables, jit's signatures and fast paths) sees a change; their
# owners call `config.trace_context_changed()` on each change.
_context_providers: list = []
_interned: dict = {}
_context_ids: dict = {}
_interned_lock = threading.Lock()


def register_trace_context(provider) -> None:
  """Adds `provider` (``() -> hashable``) to the values every cache of traces keys on."""
  _context_providers.append(provider)
  config.trace_context_changed()


config = Config()


# The flags `Config.values_key` holds, in its order (the trace context providers follow).
VALUES_KEY_NAMES = (
    "jax_enable_x64", "jax_default_matmul_precision", "jax_numpy_rank_promotion",
    "jax_numpy_dtype_promotion", "jax_threefry_partitionable", "jax_debug_nans",
    "jax_debug_infs", "jax_debug_key_reuse", "jax_check_tracer_leaks",
    "jax_allow_f16_reductions", "jax_check_static_indices", "jax_default_prng_impl",
    "jax_no_execution", "jax_auto_pcast")


class UserContext:
  """A value of the user's that jit's caches key on: changing it retraces, as flags do.

  ``with ctx(value): ...`` sets it in this thread; `get_global`/`set_global` read and set
  the value outside any such block; `value` is the value in this thread.
  Mirrors the object `jax.make_user_context` returns.
  """

  def __init__(self, default_value=None):
    self._global = default_value
    self._local = threading.local()
    register_trace_context(lambda: self.value)

  @property
  def value(self):
    stack = getattr(self._local, "stack", None)
    return stack[-1] if stack else self._global

  def get_global(self):
    return self._global

  def set_global(self, value) -> None:
    self._global = value
    config.trace_context_changed()

  @contextlib.contextmanager
  def __call__(self, new_val):
    stack = self._local.__dict__.setdefault("stack", [])
    stack.append(new_val)
    config.trace_context_changed()
    try:
      yield
    finally:
      stack.pop()
      config.trace_context_changed()


def make_user_context(default_value=None) -> UserContext:
  """A new `UserContext` of default `default_value`: a context jitted functions retrace
  (and recompile) for when its value changes. Not thread-safe to create (it registers a
  trace context); safe to use once made.

  Mirrors `jax.make_user_context`.
  """
  return UserContext(default_value)


class _NoDefault:
  def __repr__(self):
    return "<no default>"


no_default = _NoDefault()


class State:
  """One flag as a thread-local context manager: ``with enable_x64(True): ...``.

  Calling it gives a `StateContextManager` (also usable as a decorator);
  ``.value`` reads the flag in this thread. Mirrors JAX's ``config.State``.
  """

  def __init__(self, name: str, default_context_manager_value=no_default,
               extra_description: str = ""):
    self._name = name
    self._default_context_manager_value = default_context_manager_value
    self.__name__ = name[4:] if name.startswith("jax_") else name
    self.__doc__ = (f"Context manager for `{name}` config option{extra_description}.\n\n"
                    f"{config._flags[name].help}")

  @property
  def name(self) -> str:
    return self._name

  @property
  def value(self):
    """The flag's value in this thread."""
    return getattr(config, self._name)

  def __bool__(self):
    raise TypeError(f"bool() not supported for instances of type '{type(self).__name__}' "
                    f"(did you mean to use '{type(self).__name__}.value' instead?)")

  def __call__(self, new_val=no_default) -> StateContextManager:
    return StateContextManager(self, new_val)

  def get_global(self):
    """The flag's global value (what `config.update` set), whatever this thread overrides."""
    return config._values[self._name]

  def set_global(self, value) -> None:
    """Sets the flag's global value, as `config.update` does."""
    config.update(self._name, value)

  def __repr__(self):
    return f"<xjax config State {self._name}={self.value!r}>"


class StateContextManager:
  """Sets a flag in this thread inside a ``with`` block or a decorated function."""
  __slots__ = ("state", "new_val", "_tokens")

  def __init__(self, state: State, new_val):
    self.state = state
    if new_val is no_default:
      new_val = state._default_context_manager_value
      if new_val is no_default:
        raise TypeError(f"Context manager for {state.__name__} config option requires an "
                        "argument representing the new value for the config option.")
    flag = config._flags[state.name]
    if flag.kind is bool:
      new_val = bool(new_val)
    elif flag.choices is not None and new_val is not None and type(new_val) is not str:
      raise ValueError(f"new enum value must be "
                       f"{'None or in' if flag.default is None else 'in'} "
                       f"{list(flag.choices)}, got {new_val} of type {type(new_val)}.")
    flag.check(new_val)
    self.new_val = new_val
    self._tokens = []  # a stack, so one manager object can be entered re-entrantly

  def __enter__(self):
    self._tokens.append(config._set_local(self.state.name, self.new_val))

  def __exit__(self, exc_type, exc_value, traceback):
    config._restore_local(self.state.name, self._tokens.pop())

  def __call__(self, func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
      with StateContextManager(self.state, self.new_val):
        return func(*args, **kwargs)
    return wrapper


def _bool_state(name: str) -> State:
  return State(name, default_context_manager_value=True)


enable_x64 = _bool_state("jax_enable_x64")
enable_checks = _bool_state("jax_enable_checks")
debug_nans = _bool_state("jax_debug_nans")
debug_infs = _bool_state("jax_debug_infs")
check_tracer_leaks = _bool_state("jax_check_tracer_leaks")
auto_pcast = _bool_state("jax_auto_pcast")
checking_leaks = functools.partial(check_tracer_leaks, True)
log_compiles = _bool_state("jax_log_compiles")
explain_cache_misses = _bool_state("jax_explain_cache_misses")
debug_key_reuse = _bool_state("jax_debug_key_reuse")
enable_custom_prng = _bool_state("jax_enable_custom_prng")
legacy_prng_key = State("jax_legacy_prng_key")
allow_f16_reductions = _bool_state("jax_allow_f16_reductions")
softmax_custom_jvp = _bool_state("jax_softmax_custom_jvp")
custom_vjp3 = _bool_state("jax_custom_vjp3")
remat3 = _bool_state("jax_remat3")
no_tracing = _bool_state("jax_no_tracing")
no_execution = _bool_state("jax_no_execution")
disable_bwd_checks = _bool_state("jax_disable_bwd_checks")
pprint_use_color = _bool_state("jax_pprint_use_color")
threefry_partitionable = State("jax_threefry_partitionable", True,
                               extra_description=" (transient)")
default_device = State("jax_default_device")
default_matmul_precision = State("jax_default_matmul_precision")
jax_ragged_dot_use_ragged_dot_instruction = State("jax_ragged_dot_use_ragged_dot_instruction")
default_prng_impl = State("jax_default_prng_impl")
numpy_dtype_promotion = State("jax_numpy_dtype_promotion")
numpy_rank_promotion = State("jax_numpy_rank_promotion")
check_static_indices = _bool_state("jax_check_static_indices")
transfer_guard_host_to_device = State("jax_transfer_guard_host_to_device")
transfer_guard_device_to_device = State("jax_transfer_guard_device_to_device")
transfer_guard_device_to_host = State("jax_transfer_guard_device_to_host")
_transfer_guard_all = State("jax_transfer_guard")


@contextlib.contextmanager
def transfer_guard(new_val: str):
  """Context manager setting the transfer guard level of all transfers in this thread.

  Args:
    new_val: 'allow', 'log', 'disallow', 'log_explicit' or 'disallow_explicit'.

  Raises:
    ValueError: another level.

  Mirrors `jax.transfer_guard`.
  """
  with contextlib.ExitStack() as stack:
    stack.enter_context(transfer_guard_host_to_device(new_val))
    stack.enter_context(transfer_guard_device_to_device(new_val))
    stack.enter_context(transfer_guard_device_to_host(new_val))
    stack.enter_context(_transfer_guard_all(new_val))
    yield


def transfer_guard_level(direction: str) -> str:
  """The guard level of one direction ('host_to_device', ...) in this thread: the
  direction's flag, else the `jax_transfer_guard` flag, else 'allow'."""
  level = getattr(config, f"jax_transfer_guard_{direction}")
  if level is None:
    level = config.jax_transfer_guard
  return "allow" if level is None else level


def disable_jit(disable: bool = True):
  """Context manager running `jit`-decorated functions op by op (mirrors `jax.disable_jit`)."""
  return config.override("jax_disable_jit", disable)
