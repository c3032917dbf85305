"""`PartitionSpec`: how each dimension of an array is split over mesh axes."""
from __future__ import annotations


class _Unconstrained:
  """`P.UNCONSTRAINED`: XLA may choose this dimension's partitioning."""
  _instance = None

  def __new__(cls):
    if cls._instance is None:
      cls._instance = super().__new__(cls)
    return cls._instance

  def __repr__(self):
    return "UNCONSTRAINED"

  def __reduce__(self):
    return (_Unconstrained, ())


UNCONSTRAINED = _Unconstrained()


class PartitionSpec(tuple):
  """A tuple with one entry per array dimension (trailing ones may be omitted).

  Each entry is None (the dimension is not split), a mesh axis name (split
  over that axis), a tuple of names (split over their product, major to
  minor), or `PartitionSpec.UNCONSTRAINED`. Printed as ``P('x', None)``.
  Mirrors `jax.sharding.PartitionSpec`.

  Specs are interned, as in JAX: equal entries give the same object (``P((), 'x')``
  is ``P(None, 'x')``). It cannot be subclassed.

  Raises:
    TypeError: an entry of another kind.
    ValueError: a tuple entry holding a tuple.
  """
  UNCONSTRAINED = UNCONSTRAINED

  def __init_subclass__(cls, *args, **kwargs):
    raise TypeError("Subclassing `jax.P` is prohibited.")

  def __new__(cls, *partitions, unreduced=frozenset(), reduced=frozenset()):
    parts = []
    for p in partitions:
      if isinstance(p, list):
        p = tuple(p)
      if isinstance(p, tuple):
        for q in p:
          if isinstance(q, (tuple, list)):
            raise ValueError("A tuple inside PartitionSpec cannot contain a nested tuple. Got "
                             f"partition: {p} and the nested tuple: {q}")
        if len(p) == 1:
          p = p[0] if not isinstance(p[0], tuple) else p
        elif len(p) == 0:
          p = None
      if not (p is None or p is UNCONSTRAINED or isinstance(p, (str, tuple))
              or _is_axis_name(p)):
        raise TypeError(f"PartitionSpec entries must be valid axis names, None, tuples of "
                        f"axis names or P.UNCONSTRAINED, got {p!r} of type {type(p)}")
      parts.append(p)
    unreduced, reduced = frozenset(unreduced), frozenset(reduced)
    key = (tuple(parts), unreduced, reduced)
    self = _interned.get(key)
    if self is None:
      self = super().__new__(cls, parts)
      self.unreduced = unreduced
      self.reduced = reduced
      if len(_interned) >= _MAX_INTERNED:  # a bound on memory; identity holds below it
        _interned.clear()
      _interned[key] = self
    return self

  def __repr__(self):
    body = ", ".join(repr(p) for p in self)
    if len(self) == 1:
      body += ","
    return f"P({body})"

  __str__ = __repr__

  def __reduce__(self):
    return (PartitionSpec, tuple(self))

  def __eq__(self, other):
    if isinstance(other, PartitionSpec):
      return (tuple(self._normalized()) == tuple(other._normalized())
              and self.unreduced == other.unreduced)
    if isinstance(other, tuple):
      return tuple(self._normalized()) == tuple(PartitionSpec(*other)._normalized())
    return False

  def __ne__(self, other):
    return not self == other

  def __hash__(self):
    return hash((tuple(self._normalized()), self.unreduced))

  def _normalized(self):
    """The entries without trailing Nones (``P('x', None) == P('x')``)."""
    parts = list(self)
    while parts and parts[-1] is None:
      parts.pop()
    return parts

  def _normalized_spec_for_aval(self, ndim: int) -> PartitionSpec:
    """This spec with Nones appended to `ndim` entries."""
    return PartitionSpec(*self, *([None] * (ndim - len(self))))


# The specs made so far, by their entries (`PartitionSpec.__new__`). A tuple subclass cannot
# be weakly referenced, so the table holds them (cleared past a bound).
_interned: dict = {}
_MAX_INTERNED = 1 << 16


def _is_axis_name(p) -> bool:
  try:
    hash(p)
  except TypeError:
    return False
  return not isinstance(p, (int, float, bool))


P = PartitionSpec


def axes_of(entry) -> tuple:
  """The mesh axis names of one spec entry (an empty tuple for None/UNCONSTRAINED)."""
  if entry is None or entry is UNCONSTRAINED:
    return ()
  return entry if isinstance(entry, tuple) else (entry,)
