"""Flat and multi-dimensional indices: ravel_multi_index and unravel_index."""
from __future__ import annotations

import operator

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax import elementwise as lax
from xjax._src.numpy import util


def ravel_multi_index(multi_index, dims, mode: str = "raise", order: str = "C", *, dtype=None):
  """Flat indices into an array of shape `dims` from one index array per axis.

  Args:
    multi_index: a sequence of integer arrays, one per entry of `dims`; they
      broadcast together.
    dims: the shape indexed into (concrete ints).
    mode: 'raise' (out-of-range indices raise; needs concrete indices),
      'wrap' (indices wrap around) or 'clip' (indices are clipped).
    order: 'C' (last axis fastest) or 'F' (first axis fastest).
    dtype: the result dtype (default: the indices' integer dtype).

  Returns:
    An integer array of the broadcast shape of the indices.

  Raises:
    ValueError: a wrong number of indices, a bad `mode` or `order`, or (mode
      'raise') an index out of range ("invalid entry in coordinates array").
    TypeError: non-integer indices.
    ConcretizationTypeError: mode 'raise' with traced indices.

  Mirrors `jax.numpy.ravel_multi_index`.
  """
  dims = tuple(operator.index(d) for d in dims)
  multi_index = tuple(multi_index)
  if len(multi_index) != len(dims):
    raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
  if mode not in ("raise", "wrap", "clip"):
    raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', or 'clip'")
  if order not in ("C", "F"):
    raise ValueError("only 'C' or 'F' order is permitted")
  indices = util.ensure_arraylike("ravel_multi_index", *multi_index)
  indices = indices if isinstance(indices, tuple) else (indices,)
  for i in indices:
    if not dtypes.issubdtype(util.dtype_of(i), np.integer):
      raise TypeError("only int indices permitted")
  if mode == "raise":
    values = [np.asarray(util.concrete_or_error(
        i, "The error occurred because ravel_multi_index was jit-compiled with mode='raise'. "
        "Use mode='wrap' or mode='clip' instead.")) for i in indices]
    if any(np.any((v < 0) | (v >= d)) for v, d in zip(values, dims)):
      raise ValueError("invalid entry in coordinates array")
  return _ravel(indices, dims, mode, order, dtype)


@jit(static_argnames=("dims", "mode", "order", "dtype"))
def _ravel(indices, dims, mode, order, dtype):
  indices = util.broadcast_arrays_(*util.promote_dtypes(*indices))
  out_dtype = util.dtype_of(indices[0]) if dtype is None else dtypes.canonicalize_dtype(dtype)
  total = util.const_like(lax.convert_element_type(indices[0], out_dtype), 0)
  strides = np.cumprod((1, *dims[::-1][:-1]))[::-1] if order == "C" else \
      np.cumprod((1, *dims[:-1]))
  for i, d, stride in zip(indices, dims, strides):
    i = lax.convert_element_type(i, out_dtype)
    if mode == "wrap":
      i = lax.rem(lax.add(lax.rem(i, util.const_like(i, d)), util.const_like(i, d)),
                  util.const_like(i, d))
    elif mode == "clip":
      i = lax.clamp(util.const_like(i, 0), i, util.const_like(i, d - 1))
    total = lax.add(total, lax.mul(i, util.const_like(i, int(stride))))
  return total


def unravel_index(indices, shape):
  """The per-axis indices into an array of `shape` of flat `indices` (C order).

  Negative indices count from the end of the flat array; out-of-range indices
  are clipped into range, as in JAX (NumPy raises).

  Args:
    indices: an integer array or scalar of flat indices.
    shape: the array shape (concrete ints).

  Returns:
    A tuple of `len(shape)` integer arrays of `indices`' shape and dtype.

  Raises:
    TypeError: `indices` is not an integer array.

  Mirrors `jax.numpy.unravel_index`.
  """
  indices = util.ensure_arraylike("unravel_index", indices)
  if not dtypes.issubdtype(util.dtype_of(indices), np.integer):
    raise TypeError("unravel_index: indices should be integers, got "
                    f"{util.dtype_of(indices).name}")
  shape = tuple(operator.index(d) for d in core.canonicalize_shape(shape))
  return _unravel(indices, shape)


@jit(static_argnames=("shape",))
def _unravel(indices, shape):
  size = int(np.prod(shape, dtype=np.int64))
  if not shape:
    return ()
  i = lax.select_n(lax.lt(indices, util.const_like(indices, 0)), indices,
                   lax.add(indices, util.const_like(indices, size)))
  i = lax.clamp(util.const_like(i, 0), i, util.const_like(i, max(size - 1, 0)))
  out = []
  for d in reversed(shape):
    out.append(lax.rem(i, util.const_like(i, d)) if d else util.const_like(i, 0))
    i = lax.div(i, util.const_like(i, d)) if d else i
  return tuple(reversed(out))

