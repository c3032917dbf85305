"""Flat and multi-dimensional indices: ravel_multi_index and unravel_index."""
from __future__ import annotations

import operator

import numpy as np

from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax import elementwise as lax
from xjax._src.numpy import ufuncs
from xjax._src.numpy import util


def ravel_multi_index(multi_index, dims, mode: str = "raise", order: str = "C", *, dtype=None):
  """Flat indices into an array of shape `dims` from one index array per axis.

  Args:
    multi_index: a sequence of integer arrays, one per entry of `dims`; they
      broadcast together.
    dims: the shape indexed into (concrete ints).
    mode: 'raise' (out-of-range indices raise; needs concrete indices),
      'wrap' (indices wrap around), 'clip' (indices are clipped) or 'ignore'
      (indices are taken as they are; out-of-range ones give undefined results).
    order: 'C' (last axis fastest) or 'F' (first axis fastest).
    dtype: the result dtype (default: the indices' promoted integer dtype).

  Returns:
    An integer array of the broadcast shape of the indices.

  Raises:
    ValueError: a wrong number of indices, a bad `mode` or `order`, a non-integer
      or too narrow `dtype` for ``prod(dims)``, or (mode 'raise') an index out of range
      ("invalid entry in coordinates array").
    TypeError: non-integer indices.
    ConcretizationTypeError: mode 'raise' with traced indices.

  Mirrors `jax.numpy.ravel_multi_index`.
  """
  dims = tuple(operator.index(d) for d in dims)
  multi_index = tuple(multi_index)
  if len(multi_index) != len(dims):
    raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
  indices = util.ensure_arraylike("ravel_multi_index", *multi_index)
  indices = indices if isinstance(indices, tuple) else (indices,)
  if dtype is None:
    dtype = dtypes.result_type(int, *indices)
  else:
    dtype = dtypes.check_user_dtype_supported(dtype, "ravel_multi_index")
  if not dtypes.issubdtype(dtype, np.integer):
    raise ValueError(f"dtype={np.dtype(dtype)!r} is not an integer type.")
  if int(np.prod(dims, dtype=object)) - 1 > np.iinfo(dtype).max:
    raise ValueError(f"jnp.ravel_multi_index: dtype={dtype} not large enough to hold "
                     f"flattened index for dims={dims}. Use the dtype argument to pass a "
                     "suitable dtype (e.g. dtype=np.min_scalar_type(prod(dims))).")
  for i in indices:
    if mode == "raise":
      util.concrete_or_error(
          i, "The error occurred because ravel_multi_index was jit-compiled with "
          "mode='raise'. Use mode='wrap' or mode='clip' instead.")
    if not dtypes.issubdtype(util.dtype_of(i), np.integer):
      raise TypeError("only int indices permitted")
  if mode == "raise":
    values = [np.asarray(util.concrete_or_error(i, "")) for i in indices]
    if any(np.any((v < 0) | (v >= d)) for v, d in zip(values, dims)):
      raise ValueError("invalid entry in coordinates array")
  elif mode not in ("wrap", "clip", "ignore"):
    raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
  if order not in ("C", "F"):
    raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
  return _ravel(indices, dims, mode, order, np.dtype(dtype))


@jit(static_argnames=("dims", "mode", "order", "dtype"))
def _ravel(indices, dims, mode, order, dtype):
  strides = np.cumprod((1, *dims[::-1][:-1]))[::-1] if order == "C" else \
      np.cumprod((1, *dims[:-1]))
  total = lax.convert_element_type(np.zeros((), dtype), dtype)
  for i, d, stride in zip(indices, dims, strides):
    if mode == "wrap":  # floor modulo, as `i % d`
      m = lax.rem(i, util.const_like(i, d))
      i = lax.select_n(lax.lt(m, util.const_like(m, 0)), m, lax.add(m, util.const_like(m, d)))
    elif mode == "clip":
      i = lax.clamp(util.const_like(i, 0), i, util.const_like(i, d - 1))
    i = lax.convert_element_type(i, dtype)
    total = lax.add(total, lax.mul(i, util.const_like(i, int(stride))))
  return total


def unravel_index(indices, shape):
  """The per-axis indices into an array of `shape` of flat `indices` (C order).

  Negative indices count from the end of the flat array; out-of-range indices
  are clipped into range, as in JAX (NumPy raises). The entries of `shape` may be
  traced integers.

  Args:
    indices: an integer array or scalar of flat indices.
    shape: the array shape: a sequence of integer scalars (or one scalar).

  Returns:
    A tuple of `len(shape)` integer arrays of `indices`' shape (and dtype, for a shape of
    Python ints).

  Raises:
    TypeError: `indices` is not an integer array.
    ValueError: an entry of `shape` is not a scalar.

  Mirrors `jax.numpy.unravel_index`.
  """
  indices = util.ensure_arraylike("unravel_index", indices)
  if not dtypes.issubdtype(util.dtype_of(indices), np.integer):
    raise TypeError("unravel_index: indices should be integers, got "
                    f"{util.dtype_of(indices).name}")
  try:
    shape = list(shape)
  except TypeError:
    shape = [shape]
  if any(np.ndim(s) != 0 for s in shape):
    raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
  # Floor divmod from the last axis; what is left says whether the index was past either
  # end (then every coordinate is clipped to that end).
  rest, out = indices, [None] * len(shape)
  for k in reversed(range(len(shape))):
    rest, out[k] = ufuncs.divmod(rest, shape[k])
  past_end = ufuncs.greater(rest, 0)
  if dtypes.issubdtype(util.dtype_of(rest), np.unsignedinteger):
    before_start = None
  else:
    before_start = ufuncs.less(rest, -1)
  result = []
  for s, i in zip(shape, out):
    if before_start is not None:
      i = util.where_(before_start, 0, i)
    result.append(util.where_(past_end, ufuncs.subtract(s, 1), i))
  return tuple(result)
