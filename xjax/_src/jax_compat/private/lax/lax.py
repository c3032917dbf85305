"""`jax._src.lax.lax` under `xjax.install_as_jax()`: the private helpers of JAX's lax module
that JAX's tests call (`_convert_element_type`, `asarray`, `stage`, `_const`, `_delta`);
every public `jax.lax` name is read from `xjax.lax`, as JAX's module defines them there."""
from __future__ import annotations

import functools
import operator
import warnings

import numpy as np

import xjax.lax as _lax
from xjax._src import core
from xjax._src import dtypes
from xjax._src.array import Array
from xjax._src.lax import elementwise
from xjax._src.lax.misc_ops import stage as stage  # noqa: F401


def _convert_element_type(operand, new_dtype=None, weak_type: bool = False, sharding=None,
                          warn_on_complex_to_real_cast: bool = True):
  """`operand` converted to `new_dtype` (None: its own dtype) with the weak type `weak_type`,
  always as an array of the current trace (a host value becomes an Array, or a constant of the
  jaxpr being traced).

  Raises:
    NotImplementedError: a `sharding` is given (xjax converts without resharding).

  Mirrors JAX's private `jax._src.lax.lax._convert_element_type`; warns, as JAX does, when a
  complex value loses its imaginary part.
  """
  if sharding is not None:
    raise NotImplementedError("xjax's _convert_element_type takes no sharding")
  if hasattr(operand, "__jax_array__"):
    operand = operand.__jax_array__()
  old_dtype = dtypes.dtype(operand)
  new_dtype = old_dtype if new_dtype is None else new_dtype
  if (warn_on_complex_to_real_cast and dtypes.issubdtype(old_dtype, np.complexfloating)
      and not dtypes.issubdtype(new_dtype, np.complexfloating)):
    warnings.warn("Casting complex values to real discards the imaginary part",
                  np.exceptions.ComplexWarning, stacklevel=2)
  out = elementwise.convert_element_type(operand, new_dtype, weak_type=bool(weak_type))
  if isinstance(out, (core.Tracer, Array)):
    return out
  return stage(out)


def asarray(x) -> Array:
  """`x` as an array of the current trace without binding a primitive: an Array or tracer is
  returned as it is; NumPy values and bools keep their (canonical) dtype; Python numbers
  become weakly typed.

  Raises:
    TypeError: `x` is not array-like.

  Mirrors JAX's private `jax._src.lax.lax.asarray`.
  """
  if isinstance(x, (Array, core.Tracer)):
    return x
  if isinstance(x, (bool, np.ndarray, np.generic, int, float, complex)):
    return stage(x)
  raise TypeError(f"asarray: expected ArrayLike, got {x} of type {type(x)}.")


def _const(example, val):
  """`val` as a constant of `example`'s dtype, weakly typed when `example` is a weak scalar.

  Mirrors JAX's private `jax._src.lax.lax._const`."""
  return elementwise._const(example, val)


def _delta(dtype, shape, axes):
  """The Kronecker delta of `shape` over `axes`: 1 where the indices along all of `axes` are
  equal, else 0, of `dtype`.

  Mirrors JAX's private `jax._src.lax.lax._delta`."""
  axes = [int(a) for a in axes]
  dtype = dtypes.canonicalize_dtype(dtype)
  base_shape = tuple(shape[a] for a in axes)
  iotas = [_lax.broadcasted_iota(np.uint32, base_shape, i) for i in range(len(base_shape))]
  eyes = [_lax.eq(a, b) for a, b in zip(iotas[:-1], iotas[1:])]
  mask = functools.reduce(operator.and_, eyes) if eyes else np.ones(base_shape, bool)
  return _lax.broadcast_in_dim(_lax.convert_element_type(mask, dtype), tuple(shape), axes)


def __getattr__(name):
  if name.startswith("__"):
    raise AttributeError(name)
  try:
    return getattr(_lax, name)
  except AttributeError:
    raise AttributeError(f"module 'jax._src.lax.lax' has no attribute {name!r}") from None
