"""Side effects of jaxpr equations (mirrors `jax._src.effects`).

An effectful primitive declares the effects an equation of it has; a jaxpr's
effects are the union over its equations, nested jaxprs included. Effects keep
equations alive through dead-code elimination, make compiled calls with
effects wait for their callbacks before returning, and ordered effects are
sequenced in the compiled program by a token threaded from one equation to the
next (`lowering.LoweringContext.ordered_token`).
"""
from __future__ import annotations


class Effect:
  """A kind of side effect. Instances are compared by type; `str` is how JAX prints it."""
  ordered = False

  def __eq__(self, other):
    return type(self) is type(other)

  def __hash__(self):
    return hash(type(self))

  def __lt__(self, other):  # sorted printing
    return str(self) < str(other)

  def __repr__(self):
    return str(self)


class DebugEffect(Effect):
  """An unordered debugging callback (`jax.debug.callback`, `jax.debug.print`)."""

  def __str__(self):
    return "Debug"


class OrderedDebugEffect(Effect):
  """A debugging callback ordered with the other ordered effects (``ordered=True``)."""
  ordered = True

  def __str__(self):
    return "OrderedDebug"


class IOEffect(Effect):
  """An unordered `io_callback`."""

  def __str__(self):
    return "IO"


class OrderedIOEffect(Effect):
  """An `io_callback(..., ordered=True)`."""
  ordered = True

  def __str__(self):
    return "OrderedIO"


debug_effect = DebugEffect()
ordered_debug_effect = OrderedDebugEffect()
io_effect = IOEffect()
ordered_io_effect = OrderedIOEffect()

no_effects: frozenset = frozenset()


def has_ordered(effects) -> bool:
  return any(e.ordered for e in effects)
