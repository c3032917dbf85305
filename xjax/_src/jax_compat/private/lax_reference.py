"""`jax._src.lax_reference` under `xjax.install_as_jax()`: NumPy/SciPy models of the `lax`
operations, which JAX's own test files (lax_test.py, lax_vmap_test.py, ...) compare `lax`
against. Each name here takes NumPy arrays and returns what the `lax` operation of that name
returns, computed in NumPy only (plus SciPy for special functions and ml_dtypes for the
narrow float and 4-bit integer types); no xjax code is involved, so a test that agrees with
these functions checks xjax against an independent model.

Beyond JAX's module, a few corner cases follow lax rather than a literal NumPy reading:
`dynamic_slice` and `dynamic_update_slice` read their start indices as lax does (a
negative index counts from the end, then each is clamped into range), `sort_key_val` sorts stably as lax does, `rem` uses C's fmod (exact also at the
integer minimum) and `complex` builds its result from its parts (an infinite imaginary part
leaves the real part alone).
"""
from __future__ import annotations

import builtins
import functools
import itertools

import ml_dtypes
import numpy as np
import scipy.special

# This module shadows several builtins (abs, max, min, pow, round, slice, sum, complex);
# these are the builtins themselves, for the code below.
_py_slice = builtins.slice
_py_max = builtins.max
_py_min = builtins.min


# ---------------------------------------------------------------------------------------
# Dtype classification that understands ml_dtypes' types, which NumPy files under kind 'V'.

def _ml_types(*names):
  return frozenset(np.dtype(getattr(ml_dtypes, n)) for n in names if hasattr(ml_dtypes, n))


_ML_FLOATS = _ml_types("bfloat16", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
                       "float8_e5m2", "float8_e5m2fnuz", "float8_e3m4", "float8_e4m3",
                       "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn")
_ML_INTS = _ml_types("int1", "int2", "int4", "uint1", "uint2", "uint4")


def _is_floating(dtype) -> bool:
  dtype = np.dtype(dtype)
  return dtype.kind == "f" or dtype in _ML_FLOATS


def _is_integer(dtype) -> bool:
  dtype = np.dtype(dtype)
  return dtype.kind in "iu" or dtype in _ML_INTS


def _bits(dtype) -> int:
  """Bits one element of `dtype` occupies (4 for int4/uint4/float4_e2m1fn; 8 for bool)."""
  dtype = np.dtype(dtype)
  if dtype in _ML_INTS:
    return ml_dtypes.iinfo(dtype).bits
  if dtype in _ML_FLOATS:
    return ml_dtypes.finfo(dtype).bits
  return 8 * dtype.itemsize


def _as_dtype_of(x, result):
  """`result` cast to the dtype of the array `x`."""
  return np.asarray(result).astype(np.asarray(x).dtype)


# ---------------------------------------------------------------------------------------
# Elementwise arithmetic and comparison: NumPy's ufunc of the same meaning.

neg, sign, floor, ceil = np.negative, np.sign, np.floor, np.ceil
is_finite, nextafter = np.isfinite, np.nextafter
exp, exp2, expm1, log, log1p = np.exp, np.exp2, np.expm1, np.log, np.log1p
sin, cos, tan, tanh, sinh, cosh = np.sin, np.cos, np.tan, np.tanh, np.sinh, np.cosh
asin, acos, atan, atan2 = np.arcsin, np.arccos, np.arctan, np.arctan2
asinh, acosh, atanh = np.arcsinh, np.arccosh, np.arctanh
sqrt, cbrt, square, reciprocal = np.sqrt, np.cbrt, np.square, np.reciprocal
real, imag, abs, pow = np.real, np.imag, np.absolute, np.power
add, sub, max, min = np.add, np.subtract, np.maximum, np.minimum
bitwise_not, bitwise_and = np.bitwise_not, np.bitwise_and
bitwise_or, bitwise_xor = np.bitwise_or, np.bitwise_xor
shift_left, shift_right_arithmetic = np.left_shift, np.right_shift
eq, ne, ge, gt, le, lt = (np.equal, np.not_equal, np.greater_equal, np.greater,
                          np.less_equal, np.less)
select = np.where
sum = np.sum
dot = np.dot
sort = np.sort
squeeze = np.squeeze
transpose = np.transpose


def round(x):
  """Rounds halfway cases away from zero (lax.round's default method)."""
  x = np.asarray(x)
  # The largest value below one half: adding exactly 0.5 would carry values just under one
  # half across the integer boundary once the sum is rounded to x's precision.
  below_half = np.nextafter(np.asarray(0.5, x.dtype), np.asarray(0.0, x.dtype))
  return np.trunc(x + np.copysign(below_half, x)).astype(x.dtype)


def rsqrt(x):
  return np.reciprocal(np.sqrt(x))


def logistic(x):
  return _as_dtype_of(x, 1 / (1 + np.exp(-x)))


def conj(x):
  """Complex conjugate; a real operand gives the complex type of its precision."""
  return np.conj(x).astype(np.result_type(x, np.complex64))


def complex(x, y):
  """The complex number x + i*y, built from its parts."""
  x, y = np.asarray(x), np.asarray(y)
  out = np.empty(np.broadcast_shapes(x.shape, y.shape), np.result_type(x, y, np.complex64))
  out.real = x
  out.imag = y
  return out


def mul(x, y, /, *, out_dtype=None):
  """Product; with `out_dtype`, both operands are converted to it first."""
  if out_dtype is not None:
    x, y = np.asarray(x).astype(out_dtype), np.asarray(y).astype(out_dtype)
  return np.multiply(x, y)


def mulhi(x, y):
  """The high half of the double-width product of two integers of one type."""
  x, y = np.asarray(x), np.asarray(y)
  if not _is_integer(x.dtype):
    raise TypeError(f"mulhi requires integer inputs, got {x.dtype}")
  if x.dtype != y.dtype:
    raise TypeError(f"mulhi operands must have the same dtype, got {x.dtype} and {y.dtype}")
  bits = np.iinfo(x.dtype).bits
  # Python integers (object arrays) hold the 128-bit products of 64-bit operands.
  wide = np.dtype(object) if bits == 64 else np.dtype(f"{x.dtype.kind}{2 * x.dtype.itemsize}")
  return ((x.astype(wide) * y.astype(wide)) >> bits).astype(x.dtype)


def div(lhs, rhs):
  """Division; integers round the quotient toward zero as C does (NumPy floors it)."""
  if not _is_integer(np.result_type(lhs)):
    return np.divide(lhs, rhs)
  floored = np.floor_divide(lhs, rhs)
  inexact = np.remainder(lhs, rhs) != 0
  opposite_signs = np.sign(lhs) != np.sign(rhs)
  return np.where(inexact & opposite_signs, floored + 1, floored)


def rem(lhs, rhs):
  """Remainder with the sign of the dividend (C's fmod; NumPy's remainder has the divisor's)."""
  return np.fmod(lhs, rhs)


def clamp(min, operand, max):
  """`operand` limited to [min, max]; where min > max every element becomes max."""
  lower = np.minimum(min, max)
  return _as_dtype_of(operand, np.minimum(np.maximum(operand, lower), max))


# ---------------------------------------------------------------------------------------
# Special functions (SciPy), cast back to the operand's dtype where lax keeps it.

def lgamma(x):
  return _as_dtype_of(x, scipy.special.gammaln(x))


def digamma(x):
  return _as_dtype_of(x, scipy.special.digamma(x))


def betainc(a, b, x):
  return _as_dtype_of(x, scipy.special.betainc(a, b, x))


def erf(x):
  return _as_dtype_of(x, scipy.special.erf(x))


def erfc(x):
  return _as_dtype_of(x, scipy.special.erfc(x))


def erf_inv(x):
  return _as_dtype_of(x, scipy.special.erfinv(x))


def bessel_i0e(x):
  return _as_dtype_of(x, scipy.special.i0e(x))


def bessel_i1e(x):
  return _as_dtype_of(x, scipy.special.i1e(x))


igamma = scipy.special.gammainc
igammac = scipy.special.gammaincc


# ---------------------------------------------------------------------------------------
# Bit counting.

def _unsigned_view(x):
  """The bits of integer array `x` as the unsigned type of the same width (8 bits at least)."""
  x = np.asarray(x)
  assert _is_integer(x.dtype), x.dtype
  if x.dtype in _ML_INTS:  # 4 bits and narrower: one byte holding the low bits
    bits = _bits(x.dtype)
    return x.astype(np.int16).astype(np.uint8) & np.uint8((1 << bits) - 1), bits
  return x.view(f"u{x.dtype.itemsize}"), 8 * x.dtype.itemsize


def population_count(x):
  """The number of set bits of each element, in the element's own type."""
  x = np.asarray(x)
  bits_of, width = _unsigned_view(x)
  count = np.zeros(x.shape, np.int64)
  for k in range(width):
    count += ((bits_of >> k) & 1).astype(np.int64)
  return count.astype(x.dtype)


def clz(x):
  """The number of zero bits above the highest set bit (the width, for zero)."""
  x = np.asarray(x)
  bits_of, width = _unsigned_view(x)
  count = np.full(x.shape, width, np.int64)
  for k in range(width):  # the highest set bit is the last one to write
    count = np.where((bits_of >> k) != 0, width - 1 - k, count)
  return count.astype(x.dtype)


# ---------------------------------------------------------------------------------------
# Type conversion.

def convert_element_type(operand, dtype):
  return np.asarray(operand, dtype=dtype)


def _to_nibbles(x):
  """The 4-bit elements of `x` as uint8 values 0..15 (two's complement for int4)."""
  return (np.asarray(x).astype(np.int16) & 0xF).astype(np.uint8)


def _from_nibbles(nibbles, dtype):
  """uint8 values 0..15 read as the 4-bit type `dtype`."""
  if ml_dtypes.iinfo(dtype).min < 0:
    nibbles = np.where(nibbles >= 8, nibbles.astype(np.int16) - 16, nibbles)
  return nibbles.astype(dtype)


def bitcast_convert_type(operand, dtype):
  """Reinterprets the bits of `operand` as `dtype` (little-endian, as XLA on CPU and GPU).

  A wider target consumes the operand's last axis (whose size must be the width ratio); a
  narrower one appends an axis of that size; 4-bit types pack two elements per byte with
  the first one in the low nibble.
  """
  operand = np.asarray(operand)
  dtype = np.dtype(dtype)
  bits_in, bits_out = _bits(operand.dtype), _bits(dtype)
  if bits_in == 4 and bits_out == 4:
    return _from_nibbles(_to_nibbles(operand), dtype)
  if bits_in == 4:  # pack nibble pairs into bytes, then read the bytes as `dtype`
    per_out = bits_out // 4
    assert operand.shape[-1] == per_out, (operand.shape, dtype)
    nibbles = _to_nibbles(operand)
    packed = nibbles[..., 0::2] | (nibbles[..., 1::2] << 4)
    return np.ascontiguousarray(packed).view(dtype).reshape(operand.shape[:-1])
  if bits_out == 4:  # split each byte into its low and high nibble
    raw = np.copy(operand, order="C")[..., None].view(np.uint8)
    nibbles = np.stack([raw & 0xF, raw >> 4], axis=-1).reshape(*operand.shape, -1)
    return _from_nibbles(nibbles, dtype)
  if bits_out > bits_in:
    assert operand.shape[-1] == bits_out // bits_in, (operand.shape, dtype)
    return np.ascontiguousarray(operand).view(dtype).reshape(operand.shape[:-1])
  if bits_out < bits_in:
    return np.copy(operand, order="C")[..., None].view(dtype)  # (np.copy keeps 0-d)
  return operand.view(dtype)


# ---------------------------------------------------------------------------------------
# Shapes, slicing and padding.

def concatenate(operands, dimension):
  return np.concatenate(operands, axis=dimension)


def broadcast(operand, sizes):
  """`operand` with new leading axes of the given sizes."""
  return np.broadcast_to(operand, tuple(sizes) + np.shape(operand))


def broadcast_in_dim(operand, shape, broadcast_dimensions):
  """`operand` broadcast to `shape`, its axis i becoming the result's axis
  broadcast_dimensions[i]."""
  placed = [1] * len(shape)
  for axis, target in enumerate(broadcast_dimensions):
    placed[target] = np.shape(operand)[axis]
  return np.broadcast_to(np.reshape(operand, placed), shape)


def reshape(operand, new_sizes, dimensions=None):
  """Reshape in row-major order, after permuting the axes by `dimensions` if given."""
  if dimensions is not None:
    operand = np.transpose(operand, dimensions)
  return np.reshape(operand, new_sizes)


def rev(operand, dimensions):
  return np.flip(operand, axis=tuple(dimensions))


def slice(operand, start_indices, limit_indices, strides=None):
  if strides is None:
    strides = [1] * len(start_indices)
  index = tuple(_py_slice(int(a), int(b), int(s))
                for a, b, s in zip(start_indices, limit_indices, strides))
  return np.asarray(operand)[index]


def _clamped_starts(start_indices, sizes, shape):
  """Start indices as lax reads them: a negative one counts from the end of its axis once,
  then each is moved into range so that a block of `sizes` fits."""
  starts = [int(s) + n if int(s) < 0 else int(s) for s, n in zip(start_indices, shape)]
  return [_py_min(_py_max(s, 0), n - k) for s, k, n in zip(starts, sizes, shape)]


def dynamic_slice(operand, start_indices, slice_sizes):
  operand = np.asarray(operand)
  starts = _clamped_starts(start_indices, slice_sizes, operand.shape)
  return operand[tuple(_py_slice(s, s + k) for s, k in zip(starts, slice_sizes))].copy()


def dynamic_update_slice(operand, update, start_indices):
  out = np.array(operand, copy=True)
  update = np.asarray(update)
  starts = _clamped_starts(start_indices, update.shape, out.shape)
  out[tuple(_py_slice(s, s + k) for s, k in zip(starts, update.shape))] = update
  return out


def pad(operand, padding_value, padding_config):
  """lax.pad: per axis (low, high, interior) padding; negative edge padding crops.

  Interior padding puts `interior` fill elements between neighbours; edges are then added
  (or, when negative, removed) at each end.
  """
  operand = np.asarray(operand)
  config = [tuple(int(v) for v in c) for c in padding_config]
  grown_shape, placement = [], []
  for n, (lo, hi, interior) in zip(operand.shape, config):
    lo_grow, hi_grow = _py_max(lo, 0), _py_max(hi, 0)
    spread = n + interior * _py_max(n - 1, 0)
    grown_shape.append(lo_grow + spread + hi_grow)
    placement.append(_py_slice(lo_grow, lo_grow + spread, interior + 1))
  grown = np.full(grown_shape, padding_value, dtype=operand.dtype)
  grown[tuple(placement)] = operand
  crop = tuple(_py_slice(_py_max(-lo, 0), _py_max(size + _py_min(hi, 0), 0))
               for size, (lo, hi, _) in zip(grown_shape, config))
  return grown[crop]


def _pad_trailing(x, pads, fill, interior=None):
  """`x` with edge padding `pads` (and optional interior padding) on its trailing axes."""
  lead = x.ndim - len(pads)
  interior = interior if interior is not None else [0] * len(pads)
  config = [(0, 0, 0)] * lead + [(lo, hi, i) for (lo, hi), i in zip(pads, interior)]
  return pad(x, fill, config)


def _dilate_trailing(x, factors, fill):
  """Dilates the trailing len(factors) axes: factor-1 fill elements between neighbours."""
  return _pad_trailing(x, [(0, 0)] * len(factors), fill, [f - 1 for f in factors])


def _strided_windows(x, window, strides):
  """Windows of shape `window` over the trailing axes of `x`, taken every `strides`
  positions: an array of shape x.shape[:lead] + out_positions + window."""
  lead = x.ndim - len(window)
  view = np.lib.stride_tricks.sliding_window_view(
      x, tuple(window), axis=tuple(range(lead, x.ndim)))
  step = (_py_slice(None),) * lead + tuple(_py_slice(None, None, s) for s in strides)
  return view[step]


def padtype_to_pads(in_shape, filter_shape, window_strides, padding):
  """Explicit (low, high) pads for a padding name: 'SAME' (the odd element at the high
  end), 'SAME_LOWER' (at the low end); any other name means no padding ('VALID')."""
  kind = padding.upper()
  if kind not in ("SAME", "SAME_LOWER"):
    return [(0, 0)] * len(in_shape)
  pads = []
  for size, window, stride in zip(in_shape, filter_shape, window_strides):
    positions = -(-int(size) // int(stride))
    total = _py_max((positions - 1) * stride + window - size, 0)
    small, large = total // 2, total - total // 2
    pads.append((small, large) if kind == "SAME" else (large, small))
  return pads


# ---------------------------------------------------------------------------------------
# Convolution and contraction.

def _conv(lhs, rhs, window_strides, pads):
  """Convolution of lhs (N, C, spatial...) with rhs (O, C, window...), explicit pads."""
  if (_py_min(lhs.ndim, rhs.ndim) < 2 or lhs.ndim != rhs.ndim
      or lhs.shape[1] != rhs.shape[1]):
    raise ValueError("Dimension mismatch")
  n_spatial = rhs.ndim - 2
  if len(window_strides) != n_spatial:
    raise ValueError("Wrong number of strides for spatial dimensions")
  if len(pads) != n_spatial:
    raise ValueError("Wrong number of pads for spatial dimensions")
  padded = _pad_trailing(lhs, list(pads), 0)
  # (N, C, out...) + window  ->  contract C and the window with rhs's (C, window...).
  windows = _strided_windows(padded, rhs.shape[2:], window_strides)
  summed = [1] + list(range(2 + n_spatial, 2 + 2 * n_spatial))
  out = np.tensordot(windows, rhs, axes=(summed, list(range(1, rhs.ndim))))
  return np.moveaxis(out, -1, 1)  # (N, out..., O) -> (N, O, out...)


def conv(lhs, rhs, window_strides, padding):
  """NCHW/OIHW convolution with a padding name ('SAME', 'SAME_LOWER', 'VALID')."""
  lhs, rhs = np.asarray(lhs), np.asarray(rhs)
  pads = padtype_to_pads(lhs.shape[2:], rhs.shape[2:], window_strides, padding)
  return _conv(lhs, rhs, window_strides, pads)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation,
                              rhs_dilation):
  """NCHW/OIHW convolution with explicit pads and input (lhs) and window (rhs) dilation."""
  lhs, rhs = np.asarray(lhs), np.asarray(rhs)
  n_spatial = rhs.ndim - 2
  lhs_dilation = (1,) * n_spatial if lhs_dilation is None else lhs_dilation
  rhs_dilation = (1,) * n_spatial if rhs_dilation is None else rhs_dilation
  return _conv(_dilate_trailing(lhs, lhs_dilation, 0), _dilate_trailing(rhs, rhs_dilation, 0),
               window_strides, padding)


def _layout_permutations(dimension_numbers):
  """Axis orders taking each operand from its layout to (batch/out-feature, feature,
  spatial...), the spatial axes in the order the kernel spec lists them."""
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  spatial = [c for c in rhs_spec if c not in ("O", "I")]
  lhs_perm = tuple(lhs_spec.index(c) for c in ["N", "C", *spatial])
  rhs_perm = tuple(rhs_spec.index(c) for c in ["O", "I", *spatial])
  out_perm = tuple(out_spec.index(c) for c in ["N", "C", *spatial])
  return lhs_perm, rhs_perm, out_perm


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                         dimension_numbers):
  """Convolution with layouts given as spec strings, e.g. ('NHWC', 'HWIO', 'NHWC')."""
  lhs, rhs = np.asarray(lhs), np.asarray(rhs)
  lhs_perm, rhs_perm, out_perm = _layout_permutations(dimension_numbers)
  lhs_t, rhs_t = np.transpose(lhs, lhs_perm), np.transpose(rhs, rhs_perm)
  if isinstance(padding, str):
    padding = padtype_to_pads(lhs_t.shape[2:], rhs_t.shape[2:], window_strides, padding)
  out = conv_with_general_padding(lhs_t, rhs_t, window_strides, padding, lhs_dilation,
                                  rhs_dilation)
  return np.transpose(out, np.argsort(out_perm))


def _wide_enough(dtype):
  """The dtype NumPy's einsum computes in for `dtype` (float32 for ml_dtypes' floats,
  which einsum does not support), or None for dtypes it handles itself."""
  return np.dtype(np.float32) if np.dtype(dtype) in _ML_FLOATS else None


def dot_general(lhs, rhs, dimension_numbers):
  """lax.dot_general: the output axes are the batch axes, then lhs's free axes, then rhs's."""
  (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
  lhs, rhs = np.asarray(lhs), np.asarray(rhs)
  assert lhs.dtype == rhs.dtype, (lhs.dtype, rhs.dtype)
  labels = itertools.count()
  lhs_labels = [next(labels) for _ in range(lhs.ndim)]
  rhs_labels = [next(labels) for _ in range(rhs.ndim)]
  for l, r in itertools.chain(zip(lhs_contract, rhs_contract), zip(lhs_batch, rhs_batch)):
    rhs_labels[r] = lhs_labels[l]  # paired axes share a label
  lhs_free = [lhs_labels[a] for a in range(lhs.ndim)
              if a not in lhs_contract and a not in lhs_batch]
  rhs_free = [rhs_labels[a] for a in range(rhs.ndim)
              if a not in rhs_contract and a not in rhs_batch]
  out_labels = [lhs_labels[a] for a in lhs_batch] + lhs_free + rhs_free
  compute = _wide_enough(lhs.dtype)
  if compute is None:
    return np.einsum(lhs, lhs_labels, rhs, rhs_labels, out_labels)
  out = np.einsum(lhs.astype(compute), lhs_labels, rhs.astype(compute), rhs_labels,
                  out_labels)
  return out.astype(lhs.dtype)


def ragged_dot(lhs, rhs, group_sizes):
  """lax.ragged_dot: lhs (m, k) is cut along m into consecutive groups of group_sizes rows;
  group g is multiplied by rhs[g] (k, n). Rows past the last group are zero."""
  lhs, rhs = np.asarray(lhs), np.asarray(rhs)
  m, k = lhs.shape
  groups, k_rhs, n = rhs.shape
  assert k == k_rhs and lhs.dtype == rhs.dtype, (lhs.shape, rhs.shape)
  assert len(group_sizes) == groups, (group_sizes, groups)
  compute = _wide_enough(lhs.dtype) or lhs.dtype
  out = np.zeros((m, n), compute)
  start = 0
  for g, size in enumerate(np.asarray(group_sizes).tolist()):
    lo, hi = _py_min(_py_max(start, 0), m), _py_min(_py_max(start + size, 0), m)
    if hi > lo:
      out[lo:hi] = np.dot(lhs[lo:hi].astype(compute), rhs[g].astype(compute))
    start += size
  return out.astype(lhs.dtype)


# ---------------------------------------------------------------------------------------
# Reductions.

# A reduction whose computation is one of these lax functions (matched by name) and whose
# initial value is that operation's identity is the NumPy ufunc's reduction.
_MONOID_UFUNCS = {
    "add": np.add, "mul": np.multiply, "multiply": np.multiply,
    "max": np.maximum, "min": np.minimum,
    "logical_and": np.logical_and, "logical_or": np.logical_or,
}


def _identity(ufunc, dtype):
  """The identity of `ufunc` over `dtype` (the lowest/highest value for max/min)."""
  dtype = np.dtype(dtype)
  if ufunc is np.maximum or ufunc is np.minimum:
    low = ufunc is np.maximum
    if dtype == np.bool_:
      return np.asarray(not low)
    if _is_floating(dtype):
      return np.asarray(-np.inf if low else np.inf, dtype)
    info = np.iinfo(dtype) if dtype.kind in "iu" else ml_dtypes.iinfo(dtype)
    return np.asarray(info.min if low else info.max, dtype)
  return np.asarray(ufunc.identity, dtype)


def _fold(computation, init_value, operand, axis):
  """Reduces `axis` of `operand` by applying `computation` element by element, starting
  from `init_value` (for computations NumPy has no ufunc for)."""
  operand = np.asarray(operand)
  axes = tuple(range(operand.ndim)) if axis is None else np.atleast_1d(axis).tolist()
  axes = [a % operand.ndim for a in axes]
  kept = [a for a in range(operand.ndim) if a not in axes]
  rows = np.transpose(operand, kept + axes).reshape([operand.shape[a] for a in kept] + [-1])
  acc = np.full(rows.shape[:-1], init_value, dtype=operand.dtype)
  for j in range(rows.shape[-1]):
    acc = np.asarray(computation(acc, rows[..., j])).astype(operand.dtype)
  return acc


def _make_reducer(computation, init_value):
  """A function (operand, axis) -> reduction of `operand` over `axis`."""
  ufunc = _MONOID_UFUNCS.get(getattr(computation, "__name__", None))
  if ufunc is not None:
    init = np.asarray(init_value)
    if init == _identity(ufunc, init.dtype):
      return lambda operand, axis: ufunc.reduce(operand, axis=axis)
  return functools.partial(_fold, computation, init_value)


def reduce(operand, init_value, computation, dimensions):
  operand = np.asarray(operand)
  reducer = _make_reducer(computation, init_value)
  return np.asarray(reducer(operand, tuple(dimensions))).astype(operand.dtype)


def reduce_window(operand, init_value, computation, window_dimensions, window_strides,
                  padding, base_dilation):
  """lax.reduce_window without window dilation: the operand is dilated by base_dilation
  and padded (pads computed from the undilated shape, as lax does), both with
  init_value, and each window is reduced."""
  operand = np.asarray(operand)
  dims, strides = tuple(window_dimensions), tuple(window_strides)
  if isinstance(padding, str):
    pads = padtype_to_pads(operand.shape, dims, strides, padding)
  else:
    pads = [tuple(p) for p in padding]
  x = operand
  if base_dilation:
    x = _dilate_trailing(x, base_dilation, init_value)
  x = _pad_trailing(x, pads, init_value)
  windows = _strided_windows(x, dims, strides)
  flat = windows.reshape(windows.shape[:len(dims)] + (-1,))
  return _make_reducer(computation, init_value)(flat, -1)


# ---------------------------------------------------------------------------------------
# Sorting.

def sort_key_val(keys, values, dimension=-1):
  """`keys` sorted along `dimension` (stably) and `values` permuted the same way."""
  keys, values = np.asarray(keys), np.asarray(values)
  order = np.argsort(keys, axis=dimension, kind="stable")
  return (np.take_along_axis(keys, order, axis=dimension),
          np.take_along_axis(values, order, axis=dimension))


def top_k(operand, k, axis=-1):
  """The k largest entries along `axis`, largest first, and their int32 indices; equal
  entries come in index order."""
  operand = np.asarray(operand)
  if axis < 0:
    axis += operand.ndim
  assert 0 <= axis < operand.ndim, (axis, operand.shape)
  n = operand.shape[axis]
  # A stable ascending sort of the reversed operand, read backwards, is a descending sort
  # in which equal entries keep their original order.
  ascending = np.argsort(np.flip(operand, axis), axis=axis, kind="stable")
  descending = (n - 1 - np.flip(ascending, axis)).astype(np.int32)
  indices = np.take(descending, np.arange(k), axis=axis)
  return np.take_along_axis(operand, indices, axis=axis), indices
