"""`jax._src.config` under `xjax.install_as_jax()`: the configuration object, the per-thread
option states (``config.enable_x64.value``, ``with config.numpy_rank_promotion("raise")``)
and, for options xjax fixes at JAX 0.10.2's default, a read-only state of that value."""
import contextlib
import enum

from xjax._src.config import *  # noqa: F401,F403
from xjax._src import config as _config_lib
from xjax._src.config import State, config

globals().update({k: v for k, v in vars(_config_lib).items()
                  if isinstance(v, State) or k in ("config", "State", "disable_jit")})
# As in JAX, a state: ``config.disable_jit.value`` reads it, ``with config.disable_jit():``
# (True by default) sets it.
disable_jit = State("jax_disable_jit", True)


def _read(name: str):
  """The current value of option `name` (JAX's private reader, for any option)."""
  return getattr(config, name)


class FixedState:
  """An option xjax does not make configurable, at the value xjax always behaves with (JAX
  0.10.2's default): ``.value`` reads it; setting the same value is allowed, another raises
  NotImplementedError."""

  def __init__(self, name: str, value):
    self.name, self._value = name, value

  @property
  def value(self):
    return self._value

  def __call__(self, new_val=True):
    """A context manager and decorator setting the option: a no-op for the value xjax has;
    for another, entering it (running the decorated test) raises NotImplementedError."""
    return _FixedSetting(self, new_val)


class _FixedSetting(contextlib.ContextDecorator):
  def __init__(self, state: FixedState, new_val):
    self.state, self.new_val = state, new_val

  def __enter__(self):
    if self.new_val != self.state.value:
      raise NotImplementedError(f"xjax supports only {self.state.name}={self.state.value!r}")
    return self

  def __exit__(self, *exc):
    return False


use_simplified_jaxpr_constants = FixedState("jax_use_simplified_jaxpr_constants", False)
remove_size_one_mesh_axis_from_type = FixedState("jax_remove_size_one_mesh_axis_from_type",
                                                 False)
use_direct_linearize = FixedState("jax_use_direct_linearize", True)
disable_vmap_shmap_error = FixedState("jax_disable_vmap_shmap_error", False)
embedded_constants_max_bytes = FixedState("jax_embedded_constants_max_bytes", 32)



class ExplicitX64Mode(enum.IntEnum):
  """What an explicitly requested 64-bit dtype does while x64 is off (JAX's enum): xjax
  always warns and truncates it to 32 bits (WARN, JAX 0.10.2's default)."""
  WARN = enum.auto()
  ERROR = enum.auto()
  ALLOW = enum.auto()

  @classmethod
  def _missing_(cls, value):
    return {"warn": cls.WARN, "error": cls.ERROR, "allow": cls.ALLOW}.get(value)


class _X64ModeState(FixedState):
  def __call__(self, new_val=True):
    return _FixedSetting(self, ExplicitX64Mode(new_val))


explicit_x64_dtypes = _X64ModeState("jax_explicit_x64_dtypes", ExplicitX64Mode.WARN)

class _ShardyState:
  """``jax_use_shardy_partitioner``: a configuration flag of xjax, read as a state."""
  name = "jax_use_shardy_partitioner"

  @property
  def value(self):
    return config.jax_use_shardy_partitioner


use_shardy_partitioner = _ShardyState()


class LegacyPrngKeyState:
  ALLOW, WARN, ERROR = "allow", "warn", "error"


parse_flags_with_absl = config.parse_flags_with_absl
update = config.update


class EffortLevel(enum.Enum):
  """XLA's effort levels, the values of the ``optimization_level`` and
  ``memory_fitting_level`` compiler options (mirrors `jax._src.config.EffortLevel`)."""
  UNKNOWN = 0
  O0 = 9
  O1 = 19
  O2 = 29
  O3 = 39

  @classmethod
  def _missing_(cls, value):
    return cls.__members__.get(value) if isinstance(value, str) else None
