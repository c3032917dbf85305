"""Deprecations by id, as JAX tracks them: a deprecated use warns (DeprecationWarning) until
its deprecation is *accelerated*, after which it raises.

`warn(id, message, stacklevel)` is called where the deprecated use happens; `accelerate(id)`
turns the warning into an error (JAX does this internally ahead of removals, and tests use
it); `is_accelerated(id)` says which. The ids are JAX 0.10.2's (`register` adds others).

Mirrors JAX's private module `jax._src.deprecations`.
"""
from __future__ import annotations

import dataclasses
import functools
import warnings


@dataclasses.dataclass(slots=True)
class DeprecationState:
  """Whether a registered deprecation raises (accelerated) or warns."""
  accelerated: bool = False


_registered: dict[str, DeprecationState] = {}


def register(deprecation_id: str) -> None:
  """Registers `deprecation_id` (not accelerated)."""
  _registered[deprecation_id] = DeprecationState()


def _state(deprecation_id: str) -> DeprecationState:
  try:
    return _registered[deprecation_id]
  except KeyError:
    raise ValueError(f"{deprecation_id=!r} not registered.") from None


def unregister(deprecation_id: str) -> None:
  """Forgets `deprecation_id`; ValueError when it is not registered."""
  _state(deprecation_id)
  del _registered[deprecation_id]


def accelerate(deprecation_id: str) -> None:
  """Makes `warn(deprecation_id, ...)` raise; ValueError when it is not registered."""
  _state(deprecation_id).accelerated = True


def is_accelerated(deprecation_id: str) -> bool:
  """Whether `deprecation_id` raises rather than warns; ValueError when not registered."""
  return _state(deprecation_id).accelerated


def warn(deprecation_id: str, message: str, stacklevel: int, *,
         error_class: type[Exception] = ValueError) -> None:
  """A DeprecationWarning with `message` (attributed `stacklevel` frames above the caller),
  or `error_class(message)` raised when the deprecation is accelerated."""
  if is_accelerated(deprecation_id):
    raise error_class(message)
  warnings.warn(message, DeprecationWarning, stacklevel=stacklevel + 1)


def deprecation_getattr(module: str, deprecations: dict):
  """A module `__getattr__` for deprecated attributes: `deprecations` maps a name to
  ``(message, value)``; reading it warns and gives the value, or raises AttributeError with
  the message when the value is None (an accelerated, removed name)."""
  @functools.cache
  def getattr_(name):
    if name in deprecations:
      message, value = deprecations[name]
      if value is None:
        raise AttributeError(message)
      warnings.warn(message, DeprecationWarning, stacklevel=2)
      return value
    raise AttributeError(f"module {module!r} has no attribute {name!r}")
  return getattr_


for _id in ("jax-array-numpy-dtype", "jax-nn-one-hot-float-input",
            "jax-numpy-astype-complex-to-real", "jax-array-positional-args",
            "jax-pallas-call-mgpu", "jax-pallas-mgpu-shapes-types"):
  register(_id)
del _id
