"""`ShapeDtypeStruct`: a shape, dtype, sharding and weak type standing in for an array
(mirrors `jax.ShapeDtypeStruct`)."""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src.sharding import spmd


class ShapeDtypeStruct:
  """A shape, dtype, sharding and weak type standing in for an array.

  Args:
    shape: a sequence of ints.
    dtype: a dtype (kept as given: float64 stays float64 without x64, as in JAX).
    sharding: optional placement (a Sharding), or None.
    weak_type: whether it stands for a weakly typed value.

  Raises:
    ValueError: `dtype` is None.

  Compared and hashed by all four fields; ``update(**fields)`` returns a copy
  with some replaced. Mirrors `jax.ShapeDtypeStruct`.
  """
  __slots__ = ("shape", "dtype", "sharding", "weak_type", "__weakref__")

  def __init__(self, shape, dtype, *, sharding=None, weak_type: bool = False):
    self.shape = tuple(shape)
    if dtype is None:
      raise ValueError("ShapeDtypeStruct: dtype must be specified.")
    self.dtype = dtype if isinstance(dtype, dtypes.ExtendedDType) else np.dtype(dtype)
    self.sharding = sharding
    self.weak_type = weak_type

  ndim = property(lambda self: len(self.shape))
  size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

  def __len__(self):
    if not self.shape:
      raise TypeError("len() of unsized object")
    return self.shape[0]

  @property
  def aval(self):
    """The ShapedArray it stands for; split over Explicit mesh axes, it carries them as an
    array's aval does."""
    # Deferred: the sharding rules import Array, which imports this module's neighbours.
    from xjax._src.sharding import rules
    return core.ShapedArray(self.shape, dtypes.canonicalize_dtype(self.dtype, True), self.weak_type,
                            rules.aval_sharding(self.sharding, len(self.shape)))

  @classmethod
  def like(cls, x) -> ShapeDtypeStruct:
    """The struct of `x` (an array, a NumPy array, a scalar or anything with an aval): its
    shape, dtype and weak type, and its sharding when it is committed to one (an uncommitted
    array, placed by default, gives ``sharding=None``; a tracer, its type's sharding over
    Explicit mesh axes, if any). Mirrors `jax.ShapeDtypeStruct.like`."""
    aval = core.get_aval(x)
    committed = getattr(x, "_committed", True)
    # A tracer has no `sharding` attribute: its type's sharding (over Explicit mesh axes).
    sharding = getattr(x, "sharding", getattr(aval, "sharding", None)) if committed else None
    return cls(aval.shape, aval.dtype, sharding=sharding, weak_type=aval.weak_type)

  def update(self, **kwargs) -> ShapeDtypeStruct:
    """A copy with the given fields (shape, dtype, sharding, weak_type) replaced."""
    unknown = set(kwargs) - {"shape", "dtype", "sharding", "weak_type"}
    if unknown:
      raise TypeError(f"ShapeDtypeStruct.update got unexpected keyword arguments: "
                      f"{sorted(unknown)}")
    fields = dict(shape=self.shape, dtype=self.dtype, sharding=self.sharding,
                  weak_type=self.weak_type)
    fields.update(kwargs)
    return ShapeDtypeStruct(fields.pop("shape"), fields.pop("dtype"), **fields)

  def __repr__(self):
    sharding = f", sharding={self.sharding}" if self.sharding is not None else ""
    weak = f", weak_type={self.weak_type}" if self.weak_type else ""
    return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{sharding}{weak})"

  __str__ = __repr__

  def __eq__(self, other):
    if not isinstance(other, ShapeDtypeStruct):
      return False
    return ((self.shape, self.dtype, self.sharding, self.weak_type)
            == (other.shape, other.dtype, other.sharding, other.weak_type))

  def __hash__(self):
    return hash((self.shape, self.dtype, self.sharding, self.weak_type))


core.pytype_aval_mappings[ShapeDtypeStruct] = lambda x: x.aval


spmd.register_array_stand_in(ShapeDtypeStruct)  # jit's ahead-of-time trace reads its sharding
