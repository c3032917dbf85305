"""Configuration flags, read from environment variables and `config.update`.

Mirrors `jax.config`: each flag has a name (``jax_enable_x64``), an optional
environment variable (``JAX_ENABLE_X64``) and a default.  Flags are read as
attributes (``config.jax_enable_x64``) and set with ``config.update`` or the
context managers below (``enable_x64``, ``disable_jit``).
"""
from __future__ import annotations

import contextlib
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
]


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
    if name not in self._values:
      raise AttributeError(f"Unrecognized config option: {name}")
    self._flags[name].check(value)
    overrides = getattr(self._local, "overrides", None)
    if overrides is None:
      overrides = self._local.overrides = {}
    missing = object()
    old = overrides.get(name, missing)
    with self._lock:
      overrides[name] = value
      object.__setattr__(self, "_active_overrides", self._active_overrides + 1)
      self._sync_fast_attributes()
      self._changed()
    try:
      yield
    finally:
      with self._lock:
        if old is missing:
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
    key = (self.jax_enable_x64, self.jax_default_matmul_precision,
           self.jax_numpy_rank_promotion, self.jax_numpy_dtype_promotion,
           self.jax_threefry_partitionable, self.jax_debug_nans, self.jax_debug_infs)
    local.key = key
    local.state = (self.jax_disable_jit, self.jax_debug_nans or self.jax_debug_infs, key)
    local.key_epoch = epoch
    return key

  def dispatch_state(self) -> tuple[bool, bool, tuple]:
    """(disable_jit, check_nans_or_infs, values_key()) in one look-up, cached like
    `values_key` (the hot path of eager and jit dispatch)."""
    local = self._local
    if getattr(local, "key_epoch", -1) != self.epoch:
      self.values_key()
    return local.state

  def __repr__(self):
    return "Config(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self._values) + ")"


config = Config()


def enable_x64(new_val: bool = True):
  """Context manager enabling (or disabling) 64-bit types within a block."""
  return config.override("jax_enable_x64", new_val)


def disable_jit(disable: bool = True):
  """Context manager running `jit`-decorated functions op by op (mirrors `jax.disable_jit`)."""
  return config.override("jax_disable_jit", disable)


def enable_checks(new_val: bool = True):
  """Context manager typechecking every jaxpr where it is built."""
  return config.override("jax_enable_checks", new_val)


def default_device(device):
  """Context manager setting the device for uncommitted values (mirrors `jax.default_device`)."""
  return config.override("jax_default_device", device)


def default_matmul_precision(precision: str | None):
  """Context manager setting `jax_default_matmul_precision` in this thread
  (mirrors `jax.default_matmul_precision`)."""
  return config.override("jax_default_matmul_precision", precision)


def numpy_dtype_promotion(mode: str):
  """Context manager setting `jax_numpy_dtype_promotion` ('standard' or 'strict') in this
  thread (mirrors `jax.numpy_dtype_promotion`)."""
  return config.override("jax_numpy_dtype_promotion", mode)


def numpy_rank_promotion(mode: str):
  """Context manager setting `jax_numpy_rank_promotion` ('allow', 'warn' or 'raise') in this
  thread (mirrors `jax.numpy_rank_promotion`)."""
  return config.override("jax_numpy_rank_promotion", mode)


def threefry_partitionable(new_val: bool = True):
  """Context manager choosing the threefry random-bits layout (mirrors `jax.threefry_partitionable`)."""
  return config.override("jax_threefry_partitionable", new_val)
