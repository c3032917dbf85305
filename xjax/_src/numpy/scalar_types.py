"""jnp's scalar types (``jnp.float32`` and friends) and the `ndarray` type.

A scalar type is a class that stands for a dtype: ``np.dtype(jnp.float32)``
works, it compares and hashes equal to NumPy's type, ``isinstance`` checks
against NumPy's scalar type, and calling it makes an array:
``jnp.float32(1)`` is ``Array(1., dtype=float32)``, not a NumPy scalar.

`ndarray` is the type of xjax arrays for ``isinstance`` checks: concrete
`Array`s and tracers both count, as they do for ``jax.Array`` in JAX.
"""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src.array import Array
from xjax._src.numpy.creation import asarray


class _ScalarMeta(type):
  """The metaclass of the scalar types: a class per dtype, callable to make arrays."""
  dtype: np.dtype

  def __hash__(cls):
    return hash(cls.dtype.type)

  def __eq__(cls, other):
    return cls is other or cls.dtype.type == other

  def __ne__(cls, other):
    return not cls == other

  def __call__(cls, x):
    return asarray(x, dtype=cls.dtype)

  def __instancecheck__(cls, instance):
    return isinstance(instance, cls.dtype.type)


def _make_scalar_type(scalar_type) -> _ScalarMeta:
  name = np.dtype(scalar_type).name
  doc = (f"The {name} scalar type: use it as a dtype, or call it to make an array.\n\n"
         f"  ``jnp.{name}(x)`` is ``jnp.asarray(x, dtype=jnp.{name})``.\n\n"
         f"  Mirrors `jax.numpy.{name}`.\n  ")
  cls = _ScalarMeta(name, (object,), {"dtype": np.dtype(scalar_type), "__doc__": doc})
  cls.__module__ = "xjax.numpy"
  return cls


bool_ = _make_scalar_type(np.bool_)
int8 = _make_scalar_type(np.int8)
int16 = _make_scalar_type(np.int16)
int32 = _make_scalar_type(np.int32)
int64 = _make_scalar_type(np.int64)
uint8 = _make_scalar_type(np.uint8)
uint16 = _make_scalar_type(np.uint16)
uint32 = _make_scalar_type(np.uint32)
uint64 = _make_scalar_type(np.uint64)
float16 = _make_scalar_type(np.float16)
float32 = _make_scalar_type(np.float32)
float64 = _make_scalar_type(np.float64)
bfloat16 = _make_scalar_type(dtypes.bfloat16)
complex64 = _make_scalar_type(np.complex64)
complex128 = _make_scalar_type(np.complex128)
float8_e4m3fn = _make_scalar_type(dtypes.float8_e4m3fn)
float8_e5m2 = _make_scalar_type(dtypes.float8_e5m2)
# The narrow types of ml_dtypes. They never promote implicitly (see dtypes.py);
# int1, uint1 and the float6s can be stored but not computed in (stablehlo.py).
int1 = _make_scalar_type(dtypes.int1)
int2 = _make_scalar_type(dtypes.int2)
int4 = _make_scalar_type(dtypes.int4)
uint1 = _make_scalar_type(dtypes.uint1)
uint2 = _make_scalar_type(dtypes.uint2)
uint4 = _make_scalar_type(dtypes.uint4)
float4_e2m1fn = _make_scalar_type(dtypes.float4_e2m1fn)
float6_e2m3fn = _make_scalar_type(dtypes.float6_e2m3fn)
float6_e3m2fn = _make_scalar_type(dtypes.float6_e3m2fn)
float8_e3m4 = _make_scalar_type(dtypes.float8_e3m4)
float8_e4m3 = _make_scalar_type(dtypes.float8_e4m3)
float8_e4m3b11fnuz = _make_scalar_type(dtypes.float8_e4m3b11fnuz)
float8_e4m3fnuz = _make_scalar_type(dtypes.float8_e4m3fnuz)
float8_e5m2fnuz = _make_scalar_type(dtypes.float8_e5m2fnuz)
float8_e8m0fnu = _make_scalar_type(dtypes.float8_e8m0fnu)

# NumPy's default-width names, resolved as JAX does (they follow x64 mode when called).
int_ = int64
uint = uint64
float_ = float64
complex_ = complex128
single = float32
double = float64
csingle = complex64
cdouble = complex128


class _ArrayMeta(type):
  """Makes ``isinstance(x, jnp.ndarray)`` true for Arrays and tracers alike."""

  def __instancecheck__(cls, obj):
    return isinstance(obj, (Array, core.Tracer))

  def __subclasscheck__(cls, sub):
    return isinstance(sub, type) and issubclass(sub, (Array, core.Tracer))


class ndarray(metaclass=_ArrayMeta):
  """The type of xjax arrays, for ``isinstance`` checks and annotations.

  Concrete `Array` values and tracers (the values seen inside `jit`, `grad`,
  `vmap`) are both instances, as for ``jax.Array``.

  Mirrors `jax.numpy.ndarray`.
  """
  __slots__ = ()

  def __init__(self, *args, **kwargs):
    raise TypeError("jnp.ndarray cannot be instantiated; use jnp.array or jnp.zeros.")
