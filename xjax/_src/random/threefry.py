"""Threefry-2x32: the counter-based hash behind xjax's PRNG, and JAX's key functions on it.

`threefry2x32_p` hashes pairs of uint32 counts ``(x1, x2)`` under the key
``(k1, k2)`` with the 20-round Threefry-2x32 cipher of Salmon et al. (2011),
"Parallel random numbers: as easy as 1, 2, 3" (Random123): rotations
(13, 15, 26, 6) and (17, 29, 16, 24) alternating every four rounds, and a key
injection after each group of four with the third key word
``k1 ^ k2 ^ 0x1BD11BDA``. It lowers to StableHLO integer ops.

On top of it, as JAX defines them (`threefry_seed`, `threefry_2x32`,
`threefry_split`, `threefry_fold_in`, `threefry_random_bits`). Here they take
raw key data of shape ``(*batch, 2)``: the leading batch dims are handled by
broadcasting, which is what JAX's iterated `vmap` over key arrays computes.
Two stream layouts exist, chosen by the ``jax_threefry_partitionable`` flag:

* original (the default here): counts are ``iota(n)`` split into two halves,
  the first half hashed as ``x1`` and the second as ``x2``; the outputs are
  concatenated. `split` hashes ``iota(2 * num)``.
* partitionable: the count of element ``i`` is the 64-bit ``i`` as
  ``(hi, lo)`` words; `random_bits` is ``y1 ^ y2`` and `split` stacks
  ``(y1, y2)``.
"""
from __future__ import annotations

import math

import numpy as np

from xjax._src import core
from xjax._src import stablehlo as hlo
from xjax._src.interpreters import batching
from xjax._src.lax import elementwise as ew
from xjax._src.lax import slicing
from xjax._src.lax import structural as st
from xjax._src.lax.utils import broadcasting_shape

_U32 = np.dtype(np.uint32)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KEY_PARITY = 0x1BD11BDA  # Threefish's key-schedule constant C240


# ----------------------------------------------------------------------------
# threefry2x32_p


def threefry2x32(k1, k2, x1, x2):
  """The Threefry-2x32 hash of counts (x1, x2) under key (k1, k2): two uint32 arrays.

  All operands are uint32, of one shape (rank-0 operands broadcast).
  """
  return threefry2x32_p.bind(k1, k2, x1, x2)


def _threefry2x32_abstract_eval(*avals):
  if any(a.dtype != _U32 for a in avals):
    raise TypeError("Arguments to threefry2x32 must have uint32 type, got "
                    f"{', '.join(a.str_short() for a in avals)}")
  aval = core.ShapedArray(broadcasting_shape("threefry2x32", *avals), _U32)
  return [aval, aval]


def _threefry2x32_lowering(ctx, k1, k2, x1, x2):
  out = ctx.avals_out[0]
  ty = hlo.aval_type(out)
  k1, k2, x1, x2 = (ctx.broadcast_to(v, a, out) for v, a in zip((k1, k2, x1, x2), ctx.avals_in))

  def const(c):
    return ctx.broadcast_to(ctx.constant(np.uint32(c)), core.ShapedArray((), _U32), out)

  def add(a, b):
    return ctx.op1("stablehlo.add", [a, b], ty)

  def rotl(v, r):
    left = ctx.op1("stablehlo.shift_left", [v, const(r)], ty)
    right = ctx.op1("stablehlo.shift_right_logical", [v, const(32 - r)], ty)
    return ctx.op1("stablehlo.or", [left, right], ty)

  parity = ctx.op1("stablehlo.xor", [ctx.op1("stablehlo.xor", [k1, k2], ty), const(_KEY_PARITY)], ty)
  ks = [k1, k2, parity]
  x1, x2 = add(x1, ks[0]), add(x2, ks[1])
  for group in range(5):
    for r in _ROTATIONS[group % 2]:
      x1 = add(x1, x2)
      x2 = ctx.op1("stablehlo.xor", [x1, rotl(x2, r)], ty)
    # Key injection s = group + 1: (ks[s % 3], ks[(s + 1) % 3] + s).
    s = group + 1
    x1 = add(x1, ks[s % 3])
    x2 = add(add(x2, ks[(s + 1) % 3]), const(s))
  return [x1, x2]


threefry2x32_p = core.Primitive("threefry2x32", multiple_results=True)
threefry2x32_p.def_abstract_eval(_threefry2x32_abstract_eval)
threefry2x32_p.def_lowering(_threefry2x32_lowering)
batching.defbroadcasting(threefry2x32_p)


# ----------------------------------------------------------------------------
# Helpers on raw key data (..., 2)


def _u32(value):
  return np.asarray(value, _U32)


def _key_words(keys):
  """The two words of raw keys of shape (*batch, 2), each of shape `batch`."""
  batch = core.get_aval(keys).shape[:-1]
  k1 = slicing.slice(keys, (0,) * len(batch) + (0,), (*batch, 1))
  k2 = slicing.slice(keys, (0,) * len(batch) + (1,), (*batch, 2))
  return st.reshape(k1, batch), st.reshape(k2, batch)


def _broadcast_trailing(x, batch, tail):
  """`x` (shape `batch`) broadcast to ``(*batch, *tail)``."""
  return st.broadcast_in_dim(x, (*batch, *tail), tuple(range(len(batch))))


def _broadcast_leading(x, batch):
  """`x` broadcast to ``(*batch, *x.shape)``."""
  shape = core.get_aval(x).shape
  return st.broadcast_in_dim(x, (*batch, *shape), tuple(range(len(batch), len(batch) + len(shape))))


def _stack_last(a, b):
  shape = core.get_aval(a).shape
  return st.concatenate([st.reshape(a, (*shape, 1)), st.reshape(b, (*shape, 1))], len(shape))


# ----------------------------------------------------------------------------
# JAX's threefry functions


def threefry_seed(seed):
  """Raw key data ``[seed >> 32, seed & 0xFFFFFFFF]`` (as uint32) from integer seeds.

  Elementwise: seeds of shape S give keys of shape ``(*S, 2)``. A 32-bit seed
  has high word 0 (a logical shift by 32 gives 0).
  """
  dtype = core.get_aval(seed).dtype
  if not np.issubdtype(dtype, np.integer):
    raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
  hi = ew.convert_element_type(ew.shift_right_logical(seed, np.asarray(32, dtype)), _U32)
  lo = ew.convert_element_type(seed, _U32)  # integer conversion keeps the low 32 bits
  return _stack_last(hi, lo)


def threefry_2x32(keys, count):
  """Hashes `count` (uint32, any shape C) under raw keys (*batch, 2): shape (*batch, *C).

  As JAX does: the flattened counts, padded with a 0 to an even length, are
  split in halves hashed as (x1, x2); the two outputs are concatenated and
  the padding dropped.
  """
  k1, k2 = _key_words(keys)
  batch = core.get_aval(k1).shape
  count_shape = core.get_aval(count).shape
  flat = st.reshape(count, (math.prod(count_shape),))
  n = math.prod(count_shape)
  if n % 2:
    flat = st.concatenate([flat, _u32([0])], 0)
  half = (n + 1) // 2
  x1 = _broadcast_leading(slicing.slice(flat, (0,), (half,)), batch)
  x2 = _broadcast_leading(slicing.slice(flat, (half,), (2 * half,)), batch)
  y1, y2 = threefry2x32(_broadcast_trailing(k1, batch, (half,)),
                        _broadcast_trailing(k2, batch, (half,)), x1, x2)
  out = st.concatenate([y1, y2], len(batch))
  if n % 2:
    out = slicing.slice(out, (0,) * (len(batch) + 1), (*batch, n))
  return st.reshape(out, (*batch, *count_shape))


def iota_2x32_shape(shape):
  """``(hi, lo)``: the words of a 64-bit row-major iota of `shape`, as two uint32 arrays.

  The index is summed over the axes (each axis's iota times its stride, as JAX lowers it, so
  that the SPMD partitioner can split it); up to 2**32 elements hi is zero, past that the
  sum is taken in 32-bit words with carries.

  Raises:
    NotImplementedError: more than 2**64 elements (as JAX).
  """
  size = math.prod(shape)
  if size > 2 ** 64:
    raise NotImplementedError("random bits array of size exceeding 2 ** 64")
  strides = [math.prod(shape[axis + 1:]) for axis in range(len(shape))]
  if size <= 2 ** 32:
    # A sum of one iota per axis times its stride, not a reshaped 1-D iota: XLA's SPMD
    # partitioner splits it along any axis without building the whole array on each device.
    lo = None
    for axis, stride in enumerate(strides):
      if shape[axis] == 1:
        continue
      term = st.broadcasted_iota(_U32, tuple(shape), axis)
      term = term if stride == 1 else ew.mul(term, _u32(stride))
      lo = term if lo is None else ew.add(lo, term)
    zeros = st.full(shape, 0, _U32)
    return zeros, zeros if lo is None else lo
  return _strided_index_words(tuple(shape), strides)


def _strided_index_words(shape, strides):
  """``(hi, lo)`` uint32 words of the 64-bit ``sum(index[axis] * strides[axis])`` at every
  position of `shape` (the strides are Python ints below 2**64)."""
  from xjax._src.lax.misc_ops import mulhi  # high words of 32-bit products
  hi, lo = st.full(shape, 0, _U32), st.full(shape, 0, _U32)
  for axis, stride in enumerate(strides):
    if shape[axis] == 1:
      continue
    index = st.broadcasted_iota(_U32, shape, axis)
    s_lo, s_hi = stride & 0xFFFFFFFF, stride >> 32
    part_lo = ew.mul(index, _u32(s_lo))
    part_hi = ew.add(mulhi(index, st.full(shape, s_lo, _U32)), ew.mul(index, _u32(s_hi)))
    new_lo = ew.add(lo, part_lo)
    carry = ew.convert_element_type(ew.lt(new_lo, lo), _U32)
    hi, lo = ew.add(ew.add(hi, part_hi), carry), new_lo
  return hi, lo


def threefry_split(keys, shape: tuple[int, ...], partitionable: bool):
  """`shape` new keys from each raw key: (*batch, 2) -> (*batch, *shape, 2)."""
  batch = core.get_aval(keys).shape[:-1]
  if partitionable:
    k1, k2 = _key_words(keys)
    hi, lo = iota_2x32_shape(shape)
    tail = tuple(shape)
    y1, y2 = threefry2x32(_broadcast_trailing(k1, batch, tail), _broadcast_trailing(k2, batch, tail),
                          _broadcast_leading(hi, batch), _broadcast_leading(lo, batch))
    return _stack_last(y1, y2)
  num = math.prod(shape)
  return st.reshape(threefry_2x32(keys, st.iota(_U32, num * 2)), (*batch, *shape, 2))


def threefry_fold_in(keys, data):
  """Raw keys (*K, 2) with uint32 `data` (shape M, broadcasting with K) folded in.

  JAX's ``threefry_2x32(key, threefry_seed(data))``: the count pair is the
  seed's words ``(0, data)``, hashed as one (x1, x2) pair.
  """
  k1, k2 = _key_words(keys)
  shape = np.broadcast_shapes(core.get_aval(k1).shape, core.get_aval(data).shape)
  bcast = lambda x: _broadcast_to(x, shape)
  y1, y2 = threefry2x32(bcast(k1), bcast(k2), st.full(shape, 0, _U32), bcast(data))
  return _stack_last(y1, y2)


def _broadcast_to(x, shape):
  """NumPy-style broadcast (right-aligned) of `x` to `shape`."""
  x_shape = core.get_aval(x).shape
  if x_shape == tuple(shape):
    return x
  lead = len(shape) - len(x_shape)
  squeezed = [i for i, d in enumerate(x_shape) if d == 1 and shape[lead + i] != 1]
  if squeezed:
    x = st.reshape(x, tuple(d for i, d in enumerate(x_shape) if i not in squeezed))
  dims = tuple(lead + i for i in range(len(x_shape)) if i not in squeezed)
  return st.broadcast_in_dim(x, tuple(shape), dims)


_UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32, 64: np.dtype(np.uint64)}


def threefry_random_bits(keys, bit_width: int, shape: tuple[int, ...], partitionable: bool):
  """Uniform random bits of `bit_width` and `shape` from each raw key: (*batch, *shape)."""
  if bit_width not in _UINT_DTYPES:
    raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
  if partitionable:
    return _random_bits_partitionable(keys, bit_width, shape)
  return _random_bits_original(keys, bit_width, shape)


def _random_bits_partitionable(keys, bit_width, shape):
  batch = core.get_aval(keys).shape[:-1]
  k1, k2 = _key_words(keys)
  hi, lo = iota_2x32_shape(shape)
  tail = tuple(shape)
  y1, y2 = threefry2x32(_broadcast_trailing(k1, batch, tail), _broadcast_trailing(k2, batch, tail),
                        _broadcast_leading(hi, batch), _broadcast_leading(lo, batch))
  dtype = _UINT_DTYPES[bit_width]
  if bit_width == 64:
    hi64 = ew.convert_element_type(y1, dtype)
    return ew.bitwise_or(ew.shift_left(hi64, np.asarray(32, dtype)), ew.convert_element_type(y2, dtype))
  return ew.convert_element_type(ew.bitwise_xor(y1, y2), dtype)


def _random_bits_original(keys, bit_width, shape):
  batch = core.get_aval(keys).shape[:-1]
  size = math.prod(shape)
  max_count = -(-bit_width * size // 32)
  if max_count >= np.iinfo(np.uint32).max:
    raise NotImplementedError(f"random bits arrays needing 2**32 or more words (shape {shape})")
  bits = threefry_2x32(keys, st.iota(_U32, max_count))  # (*batch, max_count)
  dtype = _UINT_DTYPES[bit_width]
  nb = len(batch)
  if bit_width == 64:
    # The first half of the words are the high halves, the second the low ones.
    half = max_count // 2
    hi = ew.convert_element_type(slicing.slice(bits, (0,) * (nb + 1), (*batch, half)), dtype)
    lo = ew.convert_element_type(slicing.slice(bits, (0,) * nb + (half,), (*batch, max_count)), dtype)
    bits = ew.bitwise_or(ew.shift_left(hi, np.asarray(32, dtype)), lo)
  elif bit_width in (8, 16):
    # Each word gives 32 // bit_width values, least significant first (a little-endian view).
    per_word = 32 // bit_width
    words = _broadcast_trailing(bits, (*batch, max_count), (per_word,))
    shifts = _broadcast_leading(_u32(np.arange(per_word) * bit_width), (*batch, max_count))
    parts = ew.bitwise_and(ew.shift_right_logical(words, shifts), _u32(np.iinfo(dtype).max))
    parts = st.reshape(parts, (*batch, max_count * per_word))
    bits = slicing.slice(ew.convert_element_type(parts, dtype), (0,) * (nb + 1), (*batch, size))
  return st.reshape(bits, (*batch, *shape))
