"""Typed Python scalars: `int`, `float` and `complex` subclasses that carry a JAX dtype.

JAX hands custom-derivative rules their Python-scalar primals in this form (its argument
canonicalization makes them): they compute as the Python numbers they are (``x + 1`` is a
plain float), while ``x.dtype`` and ``x.aval`` give the weakly typed JAX type they stand
for. Their dtype is kept as given, whatever `jax_enable_x64` says later.

Mirrors `jax._src.literals.TypedInt`, `TypedFloat` and `TypedComplex`.
"""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src import dtypes


def _weak_scalar_aval(dtype) -> core.ShapedArray:
  return core._scalar_aval(np.dtype(dtype), True)


class _TypedScalar:
  """What the three typed scalars share: construction from (value, dtype), `aval`, the
  repr and pickling. `_python` is the Python number type each one extends."""
  __slots__ = ()
  _python: type

  def __new__(cls, value, dtype):
    v = cls._python.__new__(cls, value)
    v.dtype = np.dtype(dtype)
    return v

  @property
  def aval(self) -> core.ShapedArray:
    return _weak_scalar_aval(self.dtype)

  def __repr__(self):
    return f"{type(self).__name__}({self._python(self)}, dtype={self.dtype.name})"

  def __getnewargs__(self):
    return (self._python(self), self.dtype)


class TypedInt(_TypedScalar, int):
  """A Python int with a JAX dtype (`dtype`) and its weak scalar type (`aval`).

  Args (constructor): value, the int; dtype, a NumPy integer dtype.

  Mirrors `jax._src.literals.TypedInt`.
  """
  _python = int
  dtype: np.dtype


class TypedFloat(_TypedScalar, float):
  """A Python float with a JAX dtype (`dtype`) and its weak scalar type (`aval`).

  Args (constructor): value, the float; dtype, a NumPy floating dtype.

  Mirrors `jax._src.literals.TypedFloat`.
  """
  __slots__ = ("dtype",)
  _python = float

  def __str__(self):
    return str(float(self))


class TypedComplex(_TypedScalar, complex):
  """A Python complex with a JAX dtype (`dtype`) and its weak scalar type (`aval`).

  Args (constructor): value, the complex; dtype, a NumPy complex dtype.

  Mirrors `jax._src.literals.TypedComplex`.
  """
  __slots__ = ("dtype",)
  _python = complex


typed_scalar_types: set[type] = {TypedInt, TypedFloat, TypedComplex}
_typed_of = {int: TypedInt, float: TypedFloat, complex: TypedComplex}

for _t in typed_scalar_types:
  core.pytype_aval_mappings[_t] = lambda x: x.aval
  dtypes.register_canonicalize_value_handler(_t, None)


def typed_scalar(x):
  """`x` canonicalized as JAX canonicalizes a Python scalar: an int, float or complex (exactly
  those types) becomes its typed form, of the canonical dtype of its kind (an int too large
  for it raises OverflowError); anything else (bools, typed scalars, arrays) is returned
  unchanged."""
  cls = _typed_of.get(type(x))
  if cls is None:
    return x
  return cls(x, core.get_aval(x).dtype)
