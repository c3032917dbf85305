"""fft: discrete Fourier transforms over the trailing axes (XLA's FFT op).

One primitive covers the four kinds of `FftType`. It is linear, so its JVP
applies it to the tangent. The DFT matrix is symmetric, so FFT and IFFT are
their own transposes; RFFT and IRFFT transpose into each other, with a mask
that counts the Hermitian-redundant bins twice (all but DC and, for even
lengths, Nyquist), as JAX defines them.
"""
from __future__ import annotations

import enum
import math
import operator
from collections.abc import Sequence

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import stablehlo as hlo
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.jit import jit
from xjax._src.lax import elementwise as ew
from xjax._src.lax import structural
from xjax._src.lax.utils import standard_primitive


class FftType(enum.IntEnum):
  """Which transform `fft` computes (mirrors `jax.lax.FftType`)."""
  FFT = 0    # complex -> complex, forward
  IFFT = 1   # complex -> complex, inverse
  RFFT = 2   # real -> complex, forward: the last axis keeps n // 2 + 1 bins
  IRFFT = 3  # complex -> real, inverse of RFFT


_FFT_TYPE_NAMES = {name: typ for typ in FftType for name in (typ.name, typ.name.lower())}


def _fft_type(fft_type) -> FftType:
  if isinstance(fft_type, str):
    if fft_type not in _FFT_TYPE_NAMES:
      raise ValueError(f"Unknown FFT type '{fft_type}'")
    return _FFT_TYPE_NAMES[fft_type]
  if isinstance(fft_type, FftType):
    return fft_type
  raise TypeError(f"Unknown FFT type value '{fft_type}'")


@jit(static_argnums=(1, 2))
def fft(x, fft_type: FftType | str, fft_lengths: Sequence[int]):
  """The discrete Fourier transform of `x` over its last ``len(fft_lengths)`` axes.

  Args:
    x: the operand. FFT and IFFT convert it to complex (complex128 for
      float64/int64 under x64, complex64 otherwise); RFFT to a real floating
      dtype; IRFFT to complex.
    fft_type: a `FftType`, or one of the strings "fft", "ifft", "rfft",
      "irfft" (or their upper-case spellings).
    fft_lengths: the transform's length per trailing axis (a hashable
      sequence, e.g. a tuple). For FFT, IFFT and RFFT they must equal those
      axes' sizes; for IRFFT all but the last must, and the last axis must
      have ``fft_lengths[-1] // 2 + 1`` elements. Empty: `x`, converted, is
      returned untransformed.

  Returns:
    FFT/IFFT: complex, `x`'s shape. RFFT: complex, the last axis of size
    ``fft_lengths[-1] // 2 + 1``. IRFFT: real, the trailing axes of sizes
    `fft_lengths`. The inverse transforms are scaled by ``1 / prod(fft_lengths)``.

  Raises:
    ValueError: an unknown fft_type string, a complex operand for RFFT,
      fewer axes than fft_lengths, or axis sizes that do not match.
    TypeError: an fft_type that is neither a string nor a `FftType`.

  Example:
    >>> import numpy as np
    >>> from xjax._src.lax.fft import FftType, fft
    >>> fft(np.array([1., 2., 3., 4.], np.float32), FftType.RFFT, (4,))
    Array([10.+0.j, -2.+2.j, -2.+0.j], dtype=complex64)

  Mirrors `jax.lax.fft`.
  """
  typ = _fft_type(fft_type)
  if typ == FftType.RFFT:
    if np.iscomplexobj(x):
      raise ValueError("only real valued inputs supported for rfft")
    x = ew.convert_element_type(x, dtypes.to_inexact_dtype(dtypes.dtype(x)))
  else:
    x = ew.convert_element_type(x, dtypes.to_complex_dtype(dtypes.dtype(x)))
  if len(fft_lengths) == 0:  # XLA's FFT needs at least one axis
    return x
  fft_lengths = tuple(operator.index(n) for n in fft_lengths)
  return fft_p.bind(x, fft_type=typ, fft_lengths=fft_lengths)


def _complex_of(dtype) -> np.dtype:
  return np.dtype(np.complex128) if np.dtype(dtype) in (np.float64, np.complex128) \
      else np.dtype(np.complex64)


def _real_of(dtype) -> np.dtype:
  return np.finfo(dtype).dtype


def _fft_abstract_eval(x, *, fft_type, fft_lengths):
  n = len(fft_lengths)
  shape = tuple(x.shape)
  if n > len(shape):
    raise ValueError(f"FFT input shape {shape} must have at least as many "
                     f"input dimensions as fft_lengths {fft_lengths}.")
  if fft_type == FftType.RFFT:
    if x.dtype not in (np.float32, np.float64):
      raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
    if shape[-n:] != fft_lengths:
      raise ValueError(f"RFFT input shape {shape} minor dimensions must "
                       f"be equal to fft_lengths {fft_lengths}")
    out_shape = shape[:-n] + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
    out_dtype = _complex_of(x.dtype)
  elif fft_type == FftType.IRFFT:
    if not np.issubdtype(x.dtype, np.complexfloating):
      raise ValueError(f"IRFFT input must be complex64 or complex128, got {x.dtype}")
    if shape[-n:-1] != fft_lengths[:-1]:
      raise ValueError(f"IRFFT input shape {shape} minor dimensions must "
                       "be equal to all except the last fft_length, got "
                       f"{fft_lengths=}")
    # JAX leaves this to XLA's verifier; checked here so the message comes early.
    if shape[-1] != fft_lengths[-1] // 2 + 1:
      raise ValueError("IRFFT requires innermost dimension to be compatible with "
                       f"fft_length[-1]/2+1. Got: {shape[-1]} but fft_length is "
                       f"{', '.join(map(str, fft_lengths))}.")
    out_shape = shape[:-n] + fft_lengths
    out_dtype = _real_of(x.dtype)
  else:
    if not np.issubdtype(x.dtype, np.complexfloating):
      raise ValueError(f"FFT input must be complex64 or complex128, got {x.dtype}")
    if shape[-n:] != fft_lengths:
      raise ValueError(f"FFT input shape {shape} minor dimensions must "
                       f"be equal to fft_lengths {fft_lengths}")
    out_shape, out_dtype = shape, x.dtype
  return core.ShapedArray(out_shape, out_dtype, x.weak_type)


def _hermitian_mask(shape, n: int, dtype):
  """Weights over the last axis of an RFFT output of `shape` (n // 2 + 1 bins for length
  n), broadcast to `shape`: 1 for DC and (n even) Nyquist, 2 for the bins that stand for
  a conjugate pair."""
  mask = np.full(shape[-1:], 2, dtype)
  mask[0] = 1
  if n % 2 == 0:
    mask[-1] = 1
  return structural.broadcast_in_dim(mask, tuple(shape), (len(shape) - 1,))


def _scalar(value, dtype):
  return structural.full((), value, dtype)


@jit(static_argnums=1)
def _rfft_transpose(t, fft_lengths):
  # x_bar_j = Re sum_k t_k e^{-2 pi i jk/N} over the full spectrum: an IRFFT of conj(t)
  # with the paired bins halved (IRFFT doubles them), times N (IRFFT divides by it).
  aval = core.get_aval(t)
  mask = _hermitian_mask(aval.shape, fft_lengths[-1], aval.dtype)
  out = fft(ew.div(ew.conj(t), mask), FftType.IRFFT, fft_lengths)
  return ew.mul(_scalar(math.prod(fft_lengths), core.get_aval(out).dtype), out)


def _irfft_transpose(t, fft_lengths):
  # The adjoint of IRFFT: RFFT of the cotangent, paired bins doubled, divided by N;
  # conjugated for JAX's convention on complex cotangents.
  x = fft(t, FftType.RFFT, fft_lengths)
  aval = core.get_aval(x)
  mask = _hermitian_mask(aval.shape, fft_lengths[-1], aval.dtype)
  scale = _scalar(1 / math.prod(fft_lengths), aval.dtype)
  return ew.conj(ew.mul(scale, ew.mul(mask, x)))


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
  if fft_type == FftType.RFFT:
    return [_rfft_transpose(ct, fft_lengths)]
  if fft_type == FftType.IRFFT:
    return [_irfft_transpose(ct, fft_lengths)]
  return [fft(ct, fft_type, fft_lengths)]  # the DFT matrix is symmetric


def _fft_batch(axis_data, args, dims, *, fft_type, fft_lengths):
  (x,), (bdim,) = args, dims
  x = batching.moveaxis(x, bdim, 0)  # the transform acts on trailing axes
  return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths), 0


def _fft_lowering(ctx, x, *, fft_type, fft_lengths):
  attrs = (f"fft_length = {hlo.i64_array(fft_lengths)}, "
           f"fft_type = #stablehlo<fft_type {FftType(fft_type).name}>")
  return ctx.op1("stablehlo.fft", [x], hlo.aval_type(ctx.avals_out[0]), attrs)


fft_p = standard_primitive("fft", _fft_abstract_eval, _fft_lowering)
ad.deflinear(fft_p, _fft_transpose)
fft_p.def_batch(_fft_batch)
