"""Bit packing: packbits and unpackbits (uint8 bytes, big- or little-endian bit order)."""
from __future__ import annotations

import numpy as np

from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax import elementwise as lax
from xjax._src.lax import structural as lax_structural
from xjax._src.numpy import creation
from xjax._src.numpy import util


def _check_bitorder(bitorder):
  if bitorder not in ("big", "little"):
    raise ValueError("'order' must be either 'little' or 'big'")


@jit(static_argnames=("axis", "bitorder"))
def packbits(a, axis: int | None = None, bitorder: str = "big"):
  """Packs the truth values of `a` into uint8 bytes, 8 per byte, along `axis`.

  Args:
    a: an integer or boolean array; nonzero counts as 1.
    axis: the axis to pack along (None: the flattened array).
    bitorder: 'big' (the first value is the most significant bit) or 'little'.

  Returns:
    A uint8 array whose `axis` has ceil(n / 8) entries (the last byte padded
    with zeros).

  Raises:
    TypeError: `a` is not an integer or boolean array.
    ValueError: a bad `bitorder`.

  Mirrors `jax.numpy.packbits`.
  """
  a = util.ensure_arraylike("packbits", a)
  if not (util.dtype_of(a) == np.bool_ or dtypes.issubdtype(util.dtype_of(a), np.integer)):
    raise TypeError("Expected an input array of integer or boolean data type")
  _check_bitorder(bitorder)
  bits = lax.convert_element_type(lax.ne(a, util.const_like(a, 0)), np.uint8)
  if axis is None:
    bits = lax_structural.reshape(bits, (util.aval_of(bits).size,))
    axis = 0
  axis = util.canonicalize_axis(axis, util.ndim(bits))
  bits = lax_structural.transpose(bits, tuple(d for d in range(util.ndim(bits)) if d != axis)
                                  + (axis,))
  n = util.shape(bits)[-1]
  pad = -n % 8
  if pad:
    bits = lax_structural.pad(bits, np.uint8(0), [(0, 0, 0)] * (util.ndim(bits) - 1)
                              + [(0, pad, 0)])
  bits = lax_structural.reshape(bits, util.shape(bits)[:-1] + ((n + pad) // 8, 8))
  weights = (1 << np.arange(7, -1, -1) if bitorder == "big" else 1 << np.arange(8)).astype(
      np.uint8)
  weights = lax_structural.broadcast_in_dim(weights, util.shape(bits), (util.ndim(bits) - 1,))
  packed = lax.convert_element_type((bits * weights).sum(axis=-1), np.uint8)
  return lax_structural.transpose(packed, _restore(util.ndim(packed), axis))


def _restore(ndim, axis):
  """The permutation moving the last axis back to `axis`."""
  perm = list(range(ndim - 1))
  perm.insert(axis, ndim - 1)
  return tuple(perm)


@jit(static_argnames=("axis", "count", "bitorder"))
def unpackbits(a, axis: int | None = None, count: int | None = None, bitorder: str = "big"):
  """The bits of uint8 array `a` as a uint8 array of 0s and 1s, 8 per byte, along `axis`.

  Args:
    a: a uint8 array.
    axis: the axis to unpack along (None: the flattened array).
    count: keep this many bits along the axis (more than there are: zeros
      pad the end; negative: drop that many from the end; None: all).
    bitorder: 'big' (most significant bit first) or 'little'.

  Returns:
    A uint8 array of 0s and 1s.

  Raises:
    TypeError: `a` is not uint8.
    ValueError: a bad `bitorder`.

  Mirrors `jax.numpy.unpackbits`.
  """
  a = util.ensure_arraylike("unpackbits", a)
  if util.dtype_of(a) != np.uint8:
    raise TypeError("Expected an input array of unsigned byte data type")
  _check_bitorder(bitorder)
  if axis is None:
    a = lax_structural.reshape(a, (util.aval_of(a).size,))
    axis = 0
  axis = util.canonicalize_axis(axis, util.ndim(a))
  a = lax_structural.transpose(a, tuple(d for d in range(util.ndim(a)) if d != axis) + (axis,))
  shifts = (np.arange(7, -1, -1) if bitorder == "big" else np.arange(8)).astype(np.uint8)
  out_shape = util.shape(a) + (8,)
  a8 = lax_structural.broadcast_in_dim(a, out_shape, tuple(range(util.ndim(a))))
  shifts8 = lax_structural.broadcast_in_dim(creation.asarray(shifts), out_shape,
                                            (util.ndim(a),))
  bits = lax.bitwise_and(lax.shift_right_logical(a8, shifts8),
                         lax_structural.full(out_shape, 1, np.uint8))
  bits = lax_structural.reshape(bits, util.shape(bits)[:-2] + (util.shape(bits)[-2] * 8,))
  if count is not None:
    n = util.shape(bits)[-1]
    if count > n:  # zero bits pad the end, as in JAX
      bits = lax_structural.pad(bits, np.uint8(0),
                                [(0, 0, 0)] * (util.ndim(bits) - 1) + [(0, count - n, 0)])
    else:
      bits = bits[..., :count]
  return lax_structural.transpose(bits, _restore(util.ndim(bits), axis))
