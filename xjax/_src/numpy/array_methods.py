"""Installs Python operators and NumPy-style methods on `Array` and `Tracer`.

Both classes live below the numpy layer, so their operators and methods are
attached here, once, when `xjax.numpy` is imported: ``x + y`` calls
`jnp.add`, ``x[idx]`` indexes, ``x.at[idx].set(y)`` updates, ``x.sum()``
reduces, and so on. A binary operator with an operand of an unrecognized type
returns NotImplemented, so Python can try the other operand's method.
"""
from __future__ import annotations

import operator

import numpy as np

from xjax._src import core
from xjax._src import deprecations
from xjax._src import dtypes
from xjax._src import errors
from xjax._src.array import Array
from xjax._src.lax import elementwise as lax
from xjax._src.numpy import array_api_metadata
from xjax._src.numpy import creation
from xjax._src.numpy import indexing
from xjax._src.numpy import lax_numpy
from xjax._src.numpy import reductions
from xjax._src.numpy import selection
from xjax._src.numpy import sorting
from xjax._src.numpy import statistics
from xjax._src.numpy import tensor_contractions
from xjax._src.numpy import ufuncs
from xjax._src.numpy import util
from xjax._src.numpy.util import dtype_of, is_arraylike
from xjax._src.random import prng


def _defer_to_unrecognized(binary_op, swap=False):
  def method(self, other):
    other = util._unwrap(other)  # an object with __jax_array__ takes part as its array
    if not is_arraylike(other):
      return NotImplemented
    return binary_op(other, self) if swap else binary_op(self, other)
  return method


_BINARY_OPERATORS = {
    "add": ufuncs.add, "sub": ufuncs.subtract, "mul": ufuncs.multiply,
    "truediv": ufuncs.true_divide, "floordiv": ufuncs.floor_divide, "mod": ufuncs.remainder,
    "pow": ufuncs.power, "matmul": tensor_contractions.matmul, "and": ufuncs.bitwise_and,
    "or": ufuncs.bitwise_or, "xor": ufuncs.bitwise_xor, "lshift": ufuncs.left_shift,
    "rshift": ufuncs.right_shift, "divmod": ufuncs.divmod,
}
_COMPARISON_OPERATORS = {
    "eq": ufuncs.equal, "ne": ufuncs.not_equal, "lt": ufuncs.less, "le": ufuncs.less_equal,
    "gt": ufuncs.greater, "ge": ufuncs.greater_equal,
}


def _astype(self, dtype, copy: bool = False, device=None):
  """The array converted to `dtype` (complex to bool compares with 0).

  Mirrors `jax.Array.astype`.
  """
  if dtype is None:
    dtype = dtypes.default_float_dtype()
  dtype = dtypes.check_user_dtype_supported(dtype, "astype")
  x = self
  if dtypes.issubdtype(dtype_of(x), np.complexfloating):
    if dtypes.isdtype(dtype, ("integral", "real floating")):
      deprecations.warn(
          "jax-numpy-astype-complex-to-real",
          "Casting from complex to real dtypes will soon raise a ValueError. Please first "
          "use jnp.real or jnp.imag to take the real/imaginary component of your input.",
          stacklevel=2)
    elif np.dtype(dtype) == np.bool_:
      x = ufuncs.not_equal(x, 0)
  out = lax.convert_element_type(x, dtype)
  return lax._copy(out) if copy and out is self else out


def _reshape(self, *args, order: str = "C"):
  """The array with a new shape: ``x.reshape(2, 3)`` or ``x.reshape((2, -1))``.

  Mirrors `jax.Array.reshape`.
  """
  if not args:
    raise TypeError("reshape() missing required argument 'shape'")
  return lax_numpy._reshape(self, *args, order=order)


def _transpose(self, *args):
  """The array with its axes permuted: ``x.transpose()``, ``x.transpose(1, 0)`` or
  ``x.transpose((1, 0))``.

  Mirrors `jax.Array.transpose`.
  """
  if not args or (len(args) == 1 and args[0] is None):
    axes = None
  elif len(args) == 1:
    axes = lax_numpy._index_tuple(args[0])
  else:
    axes = lax_numpy._index_tuple(args)
  return lax_numpy.transpose(self, axes)


def _round(self, ndigits=None):
  # Python's round(x) gives an integer; round(x, n) keeps the dtype.
  out = ufuncs.round(self, 0 if ndigits is None else operator.index(ndigits))
  return _astype(out, int) if ndigits is None else out


def _clip(self, min=None, max=None):  # noqa: A002 - NumPy's names
  """``jnp.clip(self, min=min, max=max)`` (mirrors `jax.Array.clip`)."""
  return ufuncs.clip(self, min=min, max=max)


def _itemsize(self):
  return dtype_of(self).itemsize


def _nbytes(self):
  return self.aval.size * dtype_of(self).itemsize


def _copy(self):
  """A copy of the array (mirrors `jax.Array.copy`)."""
  return creation.array(self, copy=True)


def _deepcopy(self, memo):
  """``copy.deepcopy(x)``: a copy of the array, in a buffer of its own (as `jax.Array`)."""
  del memo
  return creation.array(self, copy=True)


def _contains(self, other):
  """``other in self``: whether the 1-D array holds the scalar `other` (JAX's rules: the
  array must be 1-D and `other` a scalar).

  Mirrors `jax.Array.__contains__`."""
  if other is None or isinstance(other, str):
    raise TypeError(f"Array.__contains__: unsupported operand type {type(other)}.")
  query = util.ensure_arraylike("Array.__contains__", other)
  if util.ndim(self) != 1:
    raise ValueError("Array.__contains__: search array must be one-dimensional, got "
                     f"arr.shape={util.shape(self)}.")
  if util.ndim(query) != 0:
    raise ValueError(f"Array.__contains__: query value must be a scalar, got "
                     f"query.shape={util.shape(query)}")
  return reductions.any(ufuncs.equal(self, query))


def _tobytes(self, order="C"):
  """The array's bytes in C or Fortran `order` (mirrors `jax.Array.tobytes`); a traced
  array raises ConcretizationTypeError."""
  if isinstance(self, core.Tracer) and self.to_concrete_value() is None:
    raise errors.ConcretizationTypeError(
        self, f"The tobytes() method was called on {self._error_repr()}."
        f"{self._origin_msg()}")
  return np.asarray(self).tobytes(order)


def _view(self, dtype=None, type=None):  # noqa: A002 - NumPy's argument name
  """The array's bits reinterpreted as `dtype` (mirrors `jax.Array.view`).

  A narrower dtype multiplies the last axis by the width ratio, a wider one
  divides it; bool views compare bytes with zero.

  Raises:
    NotImplementedError: `type` given.
    ValueError: a width change on a 0-d array, or a last axis not divisible
      by the width ratio.
  """
  if type is not None:
    raise NotImplementedError("`type` argument of array.view() is not supported.")
  if dtype is None:
    return self
  new = dtypes.check_user_dtype_supported(dtype, "view")
  old = dtype_of(self)
  if new == old:
    return self
  x = self
  if old == np.bool_:
    x, old = lax.convert_element_type(x, np.uint8), np.dtype(np.uint8)
  if dtypes.issubdtype(old, np.complexfloating):  # as its real parts, interleaved
    parts = lax_numpy.stack([lax.real(x), lax.imag(x)], axis=-1)
    x = parts.reshape(*x.shape[:-1], 2 * x.shape[-1]) if x.ndim else parts
    old = dtype_of(x)
  target = np.dtype(np.uint8) if new == np.bool_ else new
  if dtypes.issubdtype(target, np.complexfloating):
    real = dtypes.finfo(target).dtype
    pairs = _view(x, real)
    pairs = pairs.reshape(*pairs.shape[:-1], pairs.shape[-1] // 2, 2)
    return lax.complex(pairs[..., 0], pairs[..., 1])
  if x.ndim == 0 and target.itemsize != old.itemsize:
    raise ValueError("Changing the dtype of a 0d array is only supported if the itemsize is "
                     "unchanged")
  if target.itemsize < old.itemsize:
    out = lax.bitcast_convert_type(x, target)
    out = out.reshape(*x.shape[:-1], x.shape[-1] * (old.itemsize // target.itemsize))
  elif target.itemsize > old.itemsize:
    ratio = target.itemsize // old.itemsize
    if x.shape[-1] % ratio:
      raise ValueError("When changing to a larger dtype, its size must be a divisor of the "
                       "total size in bytes of the last axis of the array.")
    out = lax.bitcast_convert_type(x.reshape(*x.shape[:-1], x.shape[-1] // ratio, ratio), target)
  else:
    out = lax.bitcast_convert_type(x, target)
  return lax.ne(out, np.uint8(0)) if new == np.bool_ else out


def _byteswap(self):
  """The array with the bytes of each element reversed (mirrors `jax.Array.byteswap`)."""
  dtype = dtype_of(self)
  if dtype.itemsize == 1:
    return self
  if dtypes.issubdtype(dtype, np.complexfloating):  # each part on its own, as NumPy does
    return lax.complex(_byteswap(lax.real(self)), _byteswap(lax.imag(self)))
  as_bytes = lax.bitcast_convert_type(self, np.uint8)
  return lax.bitcast_convert_type(lax_numpy.flip(as_bytes, axis=-1), dtype)


def _choose(self, choices, out=None, mode: str = "raise"):
  """``jnp.choose(self, choices, out=out, mode=mode)`` (mirrors `jax.Array.choose`)."""
  return selection.choose(self, choices, out=out, mode=mode)


def _compress(self, condition, axis=None, *, out=None, size=None, fill_value=0):
  """``jnp.compress(condition, self, axis, ...)`` (mirrors `jax.Array.compress`)."""
  return selection.compress(condition, self, axis=axis, size=size, fill_value=fill_value,
                            out=out)


def _flat(self):
  raise NotImplementedError("JAX Arrays do not implement the arr.flat property: consider "
                            "arr.flatten() instead.")


# Methods that forward to the jnp function of the same name, with self first.
_FORWARDED = {
    "all": reductions.all, "any": reductions.any, "argmax": reductions.argmax,
    "argmin": reductions.argmin, "argpartition": sorting.argpartition,
    "argsort": sorting.argsort,
    "conj": ufuncs.conjugate, "conjugate": ufuncs.conjugate, "cumprod": reductions.cumprod,
    "cumsum": reductions.cumsum, "dot": tensor_contractions.dot, "max": reductions.max,
    "mean": reductions.mean, "min": reductions.min, "nonzero": lax_numpy.nonzero,
    "prod": reductions.prod, "ptp": reductions.ptp, "ravel": lax_numpy.ravel,
    "flatten": lax_numpy.ravel, "repeat": lax_numpy.repeat, "sort": sorting.sort,
    "squeeze": lax_numpy.squeeze, "std": reductions.std, "sum": reductions.sum,
    "swapaxes": lax_numpy.swapaxes, "take": indexing.take, "var": reductions.var,
    "round": ufuncs.round, "searchsorted": statistics.searchsorted,
    "diagonal": selection.diagonal, "trace": selection.trace,
}


def _forward(name, fn):
  def method(self, *args, **kwargs):
    return fn(self, *args, **kwargs)
  method.__name__ = method.__qualname__ = name
  method.__doc__ = f"``jnp.{name}(self, ...)`` (mirrors `jax.Array.{name}`)."
  return method


def _install(cls):
  for name, fn in _BINARY_OPERATORS.items():
    setattr(cls, f"__{name}__", _defer_to_unrecognized(fn))
    setattr(cls, f"__r{name}__", _defer_to_unrecognized(fn, swap=True))
  for name, fn in _COMPARISON_OPERATORS.items():
    setattr(cls, f"__{name}__", _defer_to_unrecognized(fn))
  cls.__neg__ = lambda self: ufuncs.negative(self)
  cls.__pos__ = lambda self: ufuncs.positive(self)
  cls.__abs__ = lambda self: ufuncs.absolute(self)
  cls.__invert__ = lambda self: ufuncs.invert(self)
  cls.__round__ = _round
  cls.__getitem__ = indexing.getitem
  for name, fn in _FORWARDED.items():
    setattr(cls, name, _forward(name, fn))
  cls.astype = _astype
  cls.view = _view
  cls.__array_namespace__ = array_api_metadata.array_namespace
  cls.byteswap = _byteswap
  cls.flat = property(_flat)
  cls.reshape = _reshape
  cls.transpose = _transpose
  cls.copy = _copy
  cls.__copy__ = _copy
  cls.__deepcopy__ = _deepcopy
  cls.__contains__ = _contains
  cls.tobytes = _tobytes
  cls.clip = _clip
  cls.choose = _choose
  cls.compress = _compress
  cls.T = property(lambda self: lax_numpy.transpose(self))
  cls.mT = property(lambda self: lax_numpy.matrix_transpose(self))
  cls.real = property(lambda self: ufuncs.real(self))
  cls.imag = property(lambda self: ufuncs.imag(self))
  cls.at = property(indexing._IndexUpdateHelper, doc=indexing._IndexUpdateHelper.__doc__)
  if not hasattr(cls, "itemsize"):
    cls.itemsize = property(_itemsize)
    cls.nbytes = property(_nbytes)


_install(Array)
_install(core.Tracer)


# ----------------------------------------------------------------------------
# Key arrays: the methods that are jnp operations (random.prng sits below numpy)


def _key_at(self):
  """Indexed reads and writes, as `Array.at`: ``keys.at[i].set(other_keys)``, ``.get()``."""
  return indexing._IndexUpdateHelper(self)


def _key_take(self, indices, axis=None):
  if axis is None:
    return self.ravel().take(indices, axis=0)
  return self._apply("take", lambda b: indexing.take(b, indices, axis=axis % self.ndim),
                     indices)


def _key_eq(self, other):
  if not isinstance(other, prng.PRNGKeyArray):
    return NotImplemented
  data_axes = tuple(range(-len(self._impl.key_shape), 0))  # all of each key's data
  return reductions.all(ufuncs.equal(prng.random_unwrap(self), prng.random_unwrap(other)),
                        axis=data_axes)


def _key_ne(self, other):
  if not isinstance(other, prng.PRNGKeyArray):
    return NotImplemented
  return ufuncs.logical_not(self == other)


# As in JAX, arithmetic and ordering are the jnp operations, which refuse key dtypes
# ("add does not accept dtypes key<fry>, int32").
for _name, _fn in _BINARY_OPERATORS.items():
  setattr(prng.PRNGKeyArray, f"__{_name}__", _defer_to_unrecognized(_fn))
  setattr(prng.PRNGKeyArray, f"__r{_name}__", _defer_to_unrecognized(_fn, swap=True))
for _name in ("lt", "le", "gt", "ge"):
  setattr(prng.PRNGKeyArray, f"__{_name}__", _defer_to_unrecognized(_COMPARISON_OPERATORS[_name]))
prng.PRNGKeyArray.__neg__ = lambda self: ufuncs.negative(self)
prng.PRNGKeyArray.__pos__ = lambda self: ufuncs.positive(self)
prng.PRNGKeyArray.__abs__ = lambda self: ufuncs.absolute(self)
prng.PRNGKeyArray.__invert__ = lambda self: ufuncs.invert(self)
prng.PRNGKeyArray.at = property(_key_at, doc=_key_at.__doc__)
prng.PRNGKeyArray.take = _key_take
prng.PRNGKeyArray.__eq__ = _key_eq
prng.PRNGKeyArray.__ne__ = _key_ne
