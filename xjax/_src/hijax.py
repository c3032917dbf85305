"""The names of JAX's "hijax" extension API (mirrors `jax.experimental.hijax`), so that
libraries which define hi-types and hi-primitives at import time load on xjax.

In JAX, hijax lets a library add high-level types (`HiType`, `MutableHiType`: values that
lower to several arrays and may carry mutable type state) and primitives over them
(`HiPrimitive`, lowered by its `to_lojax` method). xjax implements the value classes of
the API (`aval_method`, `aval_property`, `AvalQDD`, `AvalMutableQDD`, the effect set
`control_flow_allowed_effects`, the symbolic-zero helpers) and lets libraries define
subclasses and register hi-types, but its traces do not carry hi-types: binding a
`HiPrimitive` raises NotImplementedError saying so. flax's nnx defines its hijax
variables this way and uses them only when `flax_hijax_variable` is set (off by default).
"""
from __future__ import annotations

import abc
import dataclasses
from typing import Any, Callable

from xjax._src import core
from xjax._src import effects
from xjax._src.interpreters.ad import Zero, instantiate_zeros, is_undefined_primal  # noqa: F401
from xjax._src.state.types import AbstractRef


class AbstractValue(abc.ABC):  # noqa: B024 (no abstract methods: a registered base)
  """The base of abstract values (mirrors `jax.core.AbstractValue`): `ShapedArray` and
  `AbstractRef` are registered as virtual subclasses; hi-types subclass it."""


AbstractValue.register(core.ShapedArray)
AbstractValue.register(AbstractRef)


@dataclasses.dataclass(frozen=True)
class AvalQDD:
  """An abstract value with its quasi-dynamic data (mirrors `jax.experimental.hijax.AvalQDD`):
  `aval` a hi-type, `qdd` its immutable type state (or None)."""
  aval: Any
  qdd: Any


@dataclasses.dataclass(frozen=True)
class AvalMutableQDD:
  """An abstract value with mutable quasi-dynamic data (mirrors
  `jax.experimental.hijax.AvalMutableQDD`)."""
  aval: Any
  mutable_qdd: Any


class aval_method:  # noqa: N801 (JAX's name)
  """Marks a function, placed on an abstract value class, as a method that tracers of
  that type expose: `tracer.name(...)` calls ``fun(tracer, ...)`` (mirrors
  `jax.experimental.hijax.aval_method`)."""

  def __init__(self, fun: Callable):
    self.fun = fun


class aval_property:  # noqa: N801 (JAX's name)
  """As `aval_method`, for a property: `tracer.name` is ``fget(tracer)`` (mirrors
  `jax.experimental.hijax.aval_property`)."""

  def __init__(self, fget: Callable):
    self.fget = fget


class EffectTypeSet:
  """A set of effect types (classes, matched with subclasses): JAX's registries of the
  effects each kind of primitive allows."""

  def __init__(self):
    self._types: set[type] = set()

  def add_type(self, effect_type: type[effects.Effect]) -> None:
    self._types.add(effect_type)

  def contains(self, eff: effects.Effect) -> bool:
    return any(isinstance(eff, t) for t in self._types)

  def filter_not_in(self, effs) -> list:
    return [e for e in effs if not self.contains(e)]


# The effect types that control flow (cond, while, scan) may carry in its bodies (mirrors
# `jax.experimental.hijax.control_flow_allowed_effects`; libraries add their own).
control_flow_allowed_effects = EffectTypeSet()


def _unsupported(what: str) -> NotImplementedError:
  return NotImplementedError(
      f"{what}: xjax does not implement hijax (JAX's high-level types and primitives); "
      "it provides jax.experimental.hijax's names so that libraries defining them load. "
      "For flax, leave `flax_hijax_variable` off (its default).")


class HiType(AbstractValue):
  """The abstract value of an immutable high-level type (mirrors
  `jax.experimental.hijax.HiType`); subclasses define how it lowers to arrays
  (`lo_ty`, `lower_val`, `raise_val`) and its tangent types."""
  is_high = True
  has_qdd = False

  def lo_ty(self):
    raise NotImplementedError(f"{type(self).__name__} must define lo_ty")

  def lower_val(self, hi_val):
    raise NotImplementedError(f"{type(self).__name__} must define lower_val")

  def raise_val(self, *lo_vals):
    raise NotImplementedError(f"{type(self).__name__} must define raise_val")


class MutableHiType(AbstractValue):
  """The abstract value of a mutable high-level type with type state (mirrors
  `jax.experimental.hijax.MutableHiType`)."""
  is_high = True
  has_qdd = True


# hi-type value classes -> the function giving a value's hi-type (`register_hitype`).
hitype_registry: dict[type, Callable] = {}


def register_hitype(val_cls: type, typeof_fn: Callable) -> None:
  """Registers `val_cls` as a hi-type value class whose type is `typeof_fn(value)`
  (mirrors `jax.experimental.hijax.register_hitype`)."""
  hitype_registry[val_cls] = typeof_fn


class HiPrimitive(core.Primitive):
  """A primitive over hi-types (mirrors `jax.experimental.hijax.HiPrimitive`).
  Subclasses define `abstract_eval`, `to_lojax`, `jvp` and `transpose` as methods.

  Raises:
    NotImplementedError: on `bind`: xjax's traces do not carry hi-types.
  """

  def __init__(self, name: str):
    super().__init__(name)
    core.all_primitives.discard(self)  # a library's primitive, not one of xjax's
    # The subclass's methods, not the rule slots `Primitive.__init__` sets to None.
    for slot in ("abstract_eval", "jvp", "transpose", "batch", "is_effectful", "effects"):
      if hasattr(type(self), slot):
        self.__dict__.pop(slot, None)
    self.multiple_results = True

  def bind(self, *args, **params):
    raise _unsupported(f"binding the hijax primitive '{self.name}'")


class VJPHiPrimitive(HiPrimitive):
  """A hijax primitive with a custom VJP (mirrors
  `jax.experimental.hijax.VJPHiPrimitive`); binding it raises NotImplementedError as for
  `HiPrimitive`."""


class HiPspec:
  """A partition spec for a hi-type's leaves (mirrors `jax.experimental.hijax.HiPspec`)."""
