"""State types: the `Ref` value, its aval `AbstractRef`, indexers and `.at` views.

* `AbstractRef` is the aval of a mutable array reference, printed
  ``Ref{f32[3]}`` in jaxprs. Tracers whose aval is an `AbstractRef` behave as
  refs: ``r[idx]`` reads, ``r[idx] = v`` writes (see `install_tracer_methods`).
* `Ref` is a concrete reference: an `AbstractRef` and the `Array` it currently
  holds. Writes replace that Array; readers see the new value.
* `NDIndexer` is a static description of one NumPy-style index of a ref: a
  `Slice` (static start, size, stride) or an integer operand per dimension.
  The integer operands travel as operands of the state primitives.
* `TransformedRef` is a view ``ref.at[idx]``: a ref and a chain of indexers.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple


from xjax._src import core


# ----------------------------------------------------------------------------
# The aval


class AbstractRef:
  """The abstract value of a mutable array reference (mirrors `jax.ref.AbstractRef`).

  Args:
    inner_aval: the `ShapedArray` of the value the ref holds.
    memory_space: an optional memory space (only None is supported by xjax).
    kind: an optional mutation kind (``'no_grad_no_remat'`` or None).

  Printed ``Ref{f32[3]}``; `shape`, `dtype`, `ndim`, `size` and `weak_type`
  are those of `inner_aval`.
  """
  __slots__ = ("inner_aval", "memory_space", "kind", "_hash")
  array_abstraction_level = 1

  def __init__(self, inner_aval, memory_space: Any = None, kind: Any = None):
    self.inner_aval = inner_aval
    self.memory_space = memory_space
    self.kind = kind
    self._hash = hash((AbstractRef, inner_aval, memory_space))

  shape = property(lambda self: self.inner_aval.shape)
  dtype = property(lambda self: self.inner_aval.dtype)
  weak_type = property(lambda self: self.inner_aval.weak_type)
  ndim = property(lambda self: len(self.inner_aval.shape))
  size = property(lambda self: math.prod(self.inner_aval.shape))

  def update(self, inner_aval=None, memory_space=None, kind=None, **inner_fields):
    """A copy with fields replaced; `shape`/`dtype`/`weak_type` update the inner aval."""
    inner = self.inner_aval if inner_aval is None else inner_aval
    if inner_fields:
      inner = inner.update(**inner_fields)
    return AbstractRef(inner, self.memory_space if memory_space is None else memory_space,
                       self.kind if kind is None else kind)

  def update_weak_type(self, weak_type: bool) -> AbstractRef:
    return self.update(inner_aval=self.inner_aval.update_weak_type(weak_type))

  def strip_weak_type(self) -> AbstractRef:
    return self.update_weak_type(False)

  def to_tangent_aval(self) -> AbstractRef:
    return AbstractRef(self.inner_aval.to_tangent_aval(), self.memory_space, self.kind)

  def str_short(self, short_dtypes: bool = False) -> str:
    inner = self.inner_aval.str_short(short_dtypes)
    if self.memory_space is not None:
      return f"Ref<{self.memory_space}>{{{inner}}}"
    return f"Ref{{{inner}}}"

  __repr__ = __str__ = str_short

  def __eq__(self, other):
    return (type(other) is AbstractRef and self.inner_aval == other.inner_aval
            and self.memory_space == other.memory_space)

  def __hash__(self):
    return self._hash

  def __len__(self):
    if not self.shape:
      raise TypeError("len() of unsized object")
    return self.shape[0]


def is_ref_aval(aval) -> bool:
  return type(aval) is AbstractRef


def takes_refs(closed) -> bool:
  """Whether a closed jaxpr must be discharged to run: it has ref inputs or ref
  consts, or it uses state primitives (refs made inside), at any depth."""
  return (any(type(a) is AbstractRef for a in closed.in_avals)
          or any(type(v.aval) is AbstractRef for v in closed.jaxpr.constvars)
          or uses_state(closed.jaxpr))


def uses_state(jaxpr) -> bool:
  """Whether `jaxpr` or a jaxpr inside it has a state primitive (``ref_primitive``)."""
  for eqn in jaxpr.eqns:
    if eqn.primitive.ref_primitive:
      return True
    if any(uses_state(j) for j in core.jaxprs_in_params(eqn.params)):
      return True
  return False


# ----------------------------------------------------------------------------
# Indexers


class Slice(NamedTuple):
  """A static slice of one dimension: `size` elements from `start`, `stride` apart."""
  start: int
  size: int
  stride: int = 1

  @classmethod
  def from_slice(cls, slc: slice, dim: int) -> Slice:
    start, stop, step = slc.indices(dim)
    if step < 1:
      raise ValueError(f"slice must have a step >= 1 (found: {step})")
    return cls(start, len(range(start, stop, step)), step)

  def as_slice(self) -> slice:
    return slice(self.start, self.start + (self.size - 1) * self.stride + 1 if self.size else
                 self.start, self.stride)


INT = None  # the entry of an NDIndexer dimension indexed by an integer operand


class NDIndexer(NamedTuple):
  """One NumPy-style index of a value of shape `shape` (hashable: a primitive param).

  `indices` has one entry per dimension: a `Slice`, or `INT` for an integer
  operand (a scalar or an array; all of them broadcast to `int_indexer_shape`).
  The integer operands are passed to the primitive, in order, after its
  other operands.
  """
  indices: tuple
  shape: tuple
  int_indexer_shape: tuple

  @property
  def num_operands(self) -> int:
    return sum(i is INT for i in self.indices)

  def out_shape(self) -> tuple:
    """The shape of ``x[index]`` (NumPy's rule for where the integer dims go)."""
    is_int = [i is INT for i in self.indices]
    slice_shape = tuple(i.size for i in self.indices if i is not INT)
    if not any(is_int):
      return slice_shape
    positions = [k for k, b in enumerate(is_int) if b]
    if positions != list(range(positions[0], positions[-1] + 1)):
      return self.int_indexer_shape + slice_shape
    pos = positions[0]
    return slice_shape[:pos] + self.int_indexer_shape + slice_shape[pos:]

  def transform_aval(self, aval: core.ShapedArray) -> core.ShapedArray:
    return aval.update(shape=self.out_shape())

  def as_index(self, operands) -> tuple:
    """The index as a tuple for ``jnp`` indexing, given the integer operands."""
    it = iter(operands)
    return tuple(next(it) if i is INT else i.as_slice() for i in self.indices)

  def __repr__(self):
    shown = ", ".join("int" if i is INT else repr(i) for i in self.indices)
    return (f"NDIndexer(indices=({shown}{',' if len(self.indices) == 1 else ''}), "
            f"shape={self.shape}, int_indexer_shape={self.int_indexer_shape})")


def transform_aval(tree, aval):
  """The aval after the chain of indexers `tree` (a tuple of `NDIndexer`)."""
  for indexer in tree:
    aval = indexer.transform_aval(aval)
  return aval


# ----------------------------------------------------------------------------
# Concrete refs


class _RefMeta(type):
  def __instancecheck__(cls, inst):
    # A tracer whose aval is an AbstractRef is a Ref too (as in JAX).
    return super().__instancecheck__(inst) or (
        isinstance(inst, core.Tracer) and is_ref_aval(inst.aval))


class Ref(metaclass=_RefMeta):
  """A mutable array reference (mirrors `jax.Ref` / `jax.ref.Ref`).

  Made by `xjax.new_ref`; printed ``Ref([0., 1., 2.], dtype=float32)``.
  ``ref[idx]`` reads an Array, ``ref[idx] = v`` and ``ref[idx] += v`` write
  in place; `addupdate` adds in place (those methods are the state primitives',
  installed on the class by `state/primitives.py`). A Ref passed to (or closed over by) a
  jitted function is updated in place by it. A ref is not an array: jnp
  functions do not accept it; read it first (``ref[...]``).
  """
  __slots__ = ("_aval", "_buf", "__weakref__")

  def __init__(self, aval: AbstractRef, buf):
    assert is_ref_aval(aval), ("internal: Ref of", aval)
    self._aval = aval
    self._buf = buf  # the Array the ref holds now

  aval = property(lambda self: self._aval)
  shape = property(lambda self: self._aval.shape)
  dtype = property(lambda self: self._aval.dtype)
  ndim = property(lambda self: self._aval.ndim)
  size = property(lambda self: self._aval.size)
  committed = property(lambda self: True)
  sharding = property(lambda self: self._buf.sharding)

  def __repr__(self):
    return "Ref" + repr(self._buf)[5:]

  def __len__(self):
    return len(self._aval)

  @property
  def at(self):
    # As in JAX 0.10.2, views of a concrete ref are only available under a trace.
    raise NotImplementedError()

  def unsafe_buffer_pointer(self) -> int:
    return self._buf.unsafe_buffer_pointer()


core.pytype_aval_mappings[Ref] = lambda r: r._aval


def aliased_refs(values):
  """(j, i), the first positions j < i in `values` holding the same Ref; None if none does
  (JAX allows one reference to a mutable array per call)."""
  seen: dict = {}
  for i, x in enumerate(values):
    if type(x) is Ref:
      j = seen.setdefault(id(x), i)
      if j != i:
        return j, i
  return None
