"""Installs Python operators and NumPy-style methods on `Array` and `Tracer`.

Both classes live below the numpy layer, so their operators are attached
here, once, when `xjax.numpy` is imported: ``x + y`` calls `jnp.add`, and so
on. An operand of an unrecognized type makes the operator return
NotImplemented, so Python can try the other operand's method.
"""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src.array import Array
from xjax._src.numpy import lax_numpy
from xjax._src.numpy import ufuncs
from xjax._src.numpy.util import is_arraylike


def _defer_to_unrecognized(binary_op, swap=False):
  def method(self, other):
    if not is_arraylike(other):
      return NotImplemented
    return binary_op(other, self) if swap else binary_op(self, other)
  return method


_BINARY_OPERATORS = {
    "add": ufuncs.add, "sub": ufuncs.subtract, "mul": ufuncs.multiply,
    "truediv": ufuncs.true_divide, "floordiv": ufuncs.floor_divide, "mod": ufuncs.remainder,
    "pow": ufuncs.power, "matmul": None, "and": ufuncs.bitwise_and, "or": ufuncs.bitwise_or,
    "xor": ufuncs.bitwise_xor, "lshift": ufuncs.left_shift, "rshift": ufuncs.right_shift,
}
_COMPARISON_OPERATORS = {
    "eq": ufuncs.equal, "ne": ufuncs.not_equal, "lt": ufuncs.less, "le": ufuncs.less_equal,
    "gt": ufuncs.greater, "ge": ufuncs.greater_equal,
}


def _divmod(x, y):
  return ufuncs.floor_divide(x, y), ufuncs.remainder(x, y)


def _astype(self, dtype, copy: bool = False, device=None):
  """The array converted to `dtype` (mirrors `jax.Array.astype`)."""
  from xjax._src import dtypes
  from xjax._src.lax import elementwise
  dtype = dtypes.check_user_dtype_supported(dtype, "astype")
  return elementwise.convert_element_type(self, dtype)


def _install(cls):
  for name, fn in _BINARY_OPERATORS.items():
    if fn is None:
      continue
    setattr(cls, f"__{name}__", _defer_to_unrecognized(fn))
    setattr(cls, f"__r{name}__", _defer_to_unrecognized(fn, swap=True))
  for name, fn in _COMPARISON_OPERATORS.items():
    setattr(cls, f"__{name}__", _defer_to_unrecognized(fn))
  cls.__divmod__ = _defer_to_unrecognized(_divmod)
  cls.__rdivmod__ = _defer_to_unrecognized(_divmod, swap=True)
  cls.__neg__ = lambda self: ufuncs.negative(self)
  cls.__pos__ = lambda self: ufuncs.positive(self)
  cls.__abs__ = lambda self: ufuncs.absolute(self)
  cls.__invert__ = lambda self: ufuncs.bitwise_not(self)
  cls.astype = _astype
  cls.dot = lambda self, b, **kw: lax_numpy.dot(self, b, **kw)


_install(Array)
_install(core.Tracer)
