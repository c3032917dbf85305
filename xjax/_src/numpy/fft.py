"""NumPy's discrete Fourier transforms on xjax arrays (mirrors `jax.numpy.fft`).

Every transform goes through `_fft_core`: it moves the transformed axes to
the end, crops or zero-pads them to the requested sizes, calls `lax.fft`
(which XLA runs over at most three trailing axes at a time) and scales the
result for `norm`. Integer and boolean inputs become complex64 (complex128
for 64-bit inputs under x64); the real transforms take and give the matching
float dtype.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from xjax._src import dtypes
from xjax._src.lax import fft as lax_fft
from xjax._src.lax.fft import FftType
from xjax._src.numpy import creation
from xjax._src.numpy import lax_numpy
from xjax._src.numpy import reductions
from xjax._src.numpy import ufuncs
from xjax._src.numpy.pad import pad as _pad
from xjax._src.numpy.util import ensure_arraylike, promote_dtypes_inexact


def _fft_norm(s, func_name: str, norm: str):
  """The factor applied for `norm`, given the transform sizes `s` (an array)."""
  if norm == "backward":
    return creation.array(1)
  s, = promote_dtypes_inexact(s)
  if norm == "ortho":
    root = ufuncs.sqrt(reductions.prod(s))
    return root if func_name.startswith("i") else 1 / root
  if norm == "forward":
    n = reductions.prod(s)
    return n if func_name.startswith("i") else 1 / n
  raise ValueError(f'Invalid norm value {norm}; should be "backward",'
                   '"ortho" or "forward".')


def _fft_core(func_name: str, fft_type: FftType, a, s, axes, norm):
  full_name = f"jax.numpy.fft.{func_name}"
  arr = ensure_arraylike(full_name, a)
  arr = creation.asarray(arr)
  if s is not None:
    s = tuple(map(operator.index, s))
    if any(n <= 0 for n in s):
      raise ValueError("Shape should be positive.")
  if s is not None and axes is not None and len(s) != len(axes):
    raise ValueError("Shape and axes have different lengths.")
  orig_axes = axes
  if axes is None:
    axes = range(arr.ndim) if s is None else range(arr.ndim - len(s), arr.ndim)
  if len(axes) != len(set(axes)):
    raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
  if orig_axes is not None:
    axes = tuple(range(arr.ndim - len(axes), arr.ndim))
    arr = lax_numpy.moveaxis(arr, orig_axes, axes)

  if s is not None:
    in_s = list(arr.shape)
    for axis, n in zip(axes, s, strict=True):
      in_s[axis] = n
    if fft_type == FftType.IRFFT:
      in_s[-1] = in_s[-1] // 2 + 1  # the spectrum of a length-n signal has n // 2 + 1 bins
    arr = arr[tuple(slice(n) for n in in_s)]
    arr = _pad(arr, [(0, n - m) for n, m in zip(in_s, arr.shape)])
  elif fft_type == FftType.IRFFT:
    s = [arr.shape[axis] for axis in axes[:-1]]
    if axes:
      s += [max(0, 2 * (arr.shape[axes[-1]] - 1))]
  else:
    s = [arr.shape[axis] for axis in axes]

  transformed = _fft_core_nd(arr, fft_type, s)
  if norm is not None:
    transformed = transformed * _fft_norm(
        creation.array(s, dtype=transformed.dtype), func_name, norm)
  if orig_axes is not None:
    transformed = lax_numpy.moveaxis(transformed, axes, orig_axes)
  return transformed


def _fft_core_nd(arr, fft_type: FftType, s):
  """lax.fft over the last len(s) axes, in blocks of at most three (XLA's limit)."""
  if len(s) <= 3:
    return lax_fft.fft(arr, fft_type, tuple(s))
  n = 2 if len(s) == 4 else 3  # the innermost block; the rest recursively
  src = tuple(range(arr.ndim - len(s), arr.ndim - n))
  dst = tuple(range(arr.ndim - len(s) + n, arr.ndim))
  if fft_type in (FftType.RFFT, FftType.FFT):
    arr = lax_fft.fft(arr, fft_type, tuple(s)[-n:])
    arr = lax_numpy.moveaxis(arr, src, dst)
    arr = _fft_core_nd(arr, FftType.FFT, s[:-n])
    return lax_numpy.moveaxis(arr, dst, src)
  arr = lax_numpy.moveaxis(arr, src, dst)
  arr = _fft_core_nd(arr, FftType.IFFT, s[:-n])
  arr = lax_numpy.moveaxis(arr, dst, src)
  return lax_fft.fft(arr, fft_type, tuple(s)[-n:])


def _axis_check_1d(func_name: str, axis) -> None:
  if isinstance(axis, (list, tuple)):
    full_name = f"jax.numpy.fft.{func_name}"
    raise ValueError(f"{full_name} does not support multiple axes. Please use "
                     f"{full_name}n. Got axis = {axis!r}.")


def _fft_core_1d(func_name: str, fft_type: FftType, a, n, axis, norm):
  _axis_check_1d(func_name, axis)
  return _fft_core(func_name, fft_type, a, None if n is None else [n],
                   None if axis is None else [axis], norm)


def _fft_core_2d(func_name: str, fft_type: FftType, a, s, axes, norm):
  if len(axes) != 2:
    raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. Got axes = {axes!r}.")
  return _fft_core(func_name, fft_type, a, s, axes, norm)


# ----------------------------------------------------------------------------
# One-dimensional transforms


def fft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
  """The one-dimensional discrete Fourier transform of `a` along `axis`.

  Args:
    a: an array (any dtype; integers and bools are transformed as complex64).
    n: the transform length: `a` is cropped or zero-padded to `n` along
      `axis` (default: its size there).
    axis: the axis transformed (an int; None transforms the last axis).
    norm: "backward" (default, None: no scaling), "ortho" (divide by
      sqrt(n)) or "forward" (divide by n).

  Returns:
    A complex array, `a`'s shape with `n` elements along `axis`.

  Raises:
    ValueError: n <= 0, a tuple axis, an axis out of range or an unknown norm.
    TypeError: `a` is a list or tuple.

  Example:
    >>> import xjax.numpy as jnp
    >>> jnp.fft.fft(jnp.array([1., 2., 3., 4.]))
    Array([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j], dtype=complex64)

  Mirrors `jax.numpy.fft.fft`.
  """
  return _fft_core_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
  """The one-dimensional inverse discrete Fourier transform of `a` along `axis`.

  Args:
    a: an array (integers and bools are transformed as complex64).
    n: the transform length (crop or zero-pad `a` along `axis`).
    axis: the axis transformed.
    norm: "backward" (default, None: divide by n), "ortho" or "forward" (no scaling).

  Returns:
    A complex array, `a`'s shape with `n` elements along `axis`.

  Raises:
    ValueError, TypeError: as `fft`.

  Mirrors `jax.numpy.fft.ifft`.
  """
  return _fft_core_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
  """The one-dimensional discrete Fourier transform of real `a`: the n // 2 + 1
  non-negative frequencies.

  Args:
    a: a real array (integers become float32; complex is an error).
    n: the number of input points used (crop or zero-pad along `axis`).
    axis: the axis transformed.
    norm: "backward" (default), "ortho" or "forward", as `fft`.

  Returns:
    A complex array with ``n // 2 + 1`` elements along `axis`.

  Raises:
    ValueError: complex or float16 input, and the errors of `fft`.

  Example:
    >>> import xjax.numpy as jnp
    >>> jnp.fft.rfft(jnp.array([1., 2., 3., 4.]))
    Array([10.+0.j, -2.+2.j, -2.+0.j], dtype=complex64)

  Mirrors `jax.numpy.fft.rfft`.
  """
  return _fft_core_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
  """The inverse of `rfft`: a real signal of length `n` from its n // 2 + 1
  non-negative frequencies.

  Args:
    a: the half spectrum (converted to complex); the imaginary parts of the
      DC (and, for even n, Nyquist) bins are ignored.
    n: the output length (default ``2 * (m - 1)`` for m input bins); `a` is
      cropped or zero-padded to ``n // 2 + 1`` bins.
    axis: the axis transformed.
    norm: "backward" (default, divide by n), "ortho" or "forward".

  Returns:
    A real array with `n` elements along `axis`.

  Raises:
    ValueError, TypeError: as `fft`.

  Example:
    >>> import xjax.numpy as jnp
    >>> jnp.fft.irfft(jnp.array([10.+0.j, -2.+2.j, -2.+0.j]), n=4)
    Array([1., 2., 3., 4.], dtype=float32)

  Mirrors `jax.numpy.fft.irfft`.
  """
  return _fft_core_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
  """The FFT of a signal with Hermitian symmetry, given by its first half `a`:
  a real spectrum of length `n`.

  Args:
    a: the first half of a Hermitian-symmetric signal.
    n: the output length (default ``2 * (m - 1)`` for m input points).
    axis: the axis transformed.
    norm: "backward" (default), "ortho" or "forward".

  Returns:
    A real array with `n` elements along `axis`.

  Raises:
    ValueError, TypeError: as `fft`.

  Mirrors `jax.numpy.fft.hfft`.
  """
  conj_a = ufuncs.conjugate(a)
  _axis_check_1d("hfft", axis)
  nn = (conj_a.shape[axis] - 1) * 2 if n is None else n
  return _fft_core_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm) * nn


def ihfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
  """The inverse of `hfft`: the first n // 2 + 1 points of the Hermitian signal
  whose spectrum is the real `a`.

  Args:
    a: a real array (integers become float32).
    n: the number of input points used (crop or zero-pad along `axis`).
    axis: the axis transformed.
    norm: "backward" (default), "ortho" or "forward".

  Returns:
    A complex array with ``n // 2 + 1`` elements along `axis`.

  Raises:
    ValueError, TypeError: as `rfft`.

  Mirrors `jax.numpy.fft.ihfft`.
  """
  _axis_check_1d("ihfft", axis)
  arr = creation.asarray(a)
  nn = arr.shape[axis] if n is None else n
  output = _fft_core_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
  return ufuncs.conjugate(output) * (1 / nn)


# ----------------------------------------------------------------------------
# Two- and n-dimensional transforms


def fft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None):
  """The two-dimensional discrete Fourier transform of `a` over `axes`.

  Args:
    a: an array with at least two axes.
    s: the transform size per axis (crop or zero-pad).
    axes: exactly two axes (default the last two).
    norm: "backward" (default), "ortho" or "forward".

  Returns:
    A complex array of `a`'s shape, with sizes `s` along `axes`.

  Raises:
    ValueError: not exactly two axes, and the errors of `fftn`.

  Mirrors `jax.numpy.fft.fft2`.
  """
  return _fft_core_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None):
  """The two-dimensional inverse discrete Fourier transform of `a` over `axes`.

  Args and errors as `fft2`. Mirrors `jax.numpy.fft.ifft2`.
  """
  return _fft_core_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None):
  """The two-dimensional discrete Fourier transform of real `a` over `axes`:
  the last of them keeps ``s[-1] // 2 + 1`` frequencies.

  Args and errors as `fft2` (complex input is an error). Mirrors
  `jax.numpy.fft.rfft2`.
  """
  return _fft_core_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None):
  """The inverse of `rfft2`: a real array with sizes `s` along `axes` (the last
  defaults to ``2 * (m - 1)``).

  Args and errors as `fft2`. Mirrors `jax.numpy.fft.irfft2`.
  """
  return _fft_core_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def fftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None):
  """The n-dimensional discrete Fourier transform of `a` over `axes`.

  Args:
    a: an array.
    s: the transform size per axis; `a` is cropped or zero-padded to it.
    axes: the axes transformed (default: the last ``len(s)`` axes, or all axes).
    norm: "backward" (default), "ortho" or "forward": the scaling by
      ``prod(s)`` as in `fft`.

  Returns:
    A complex array of `a`'s shape with sizes `s` along `axes`.

  Raises:
    ValueError: a size <= 0, `s` and `axes` of different lengths, repeated or
      out-of-range axes, or an unknown norm.
    TypeError: `a` is a list or tuple.

  Example:
    >>> import xjax.numpy as jnp
    >>> jnp.fft.fftn(jnp.array([[1., 2.], [3., 4.]]), norm="ortho")
    Array([[ 5.+0.j, -1.+0.j],
           [-2.+0.j,  0.+0.j]], dtype=complex64)

  Mirrors `jax.numpy.fft.fftn`.
  """
  return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None):
  """The n-dimensional inverse discrete Fourier transform of `a` over `axes`.

  Args and errors as `fftn`. Mirrors `jax.numpy.fft.ifftn`.
  """
  return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None):
  """The n-dimensional discrete Fourier transform of real `a`; the last axis
  keeps ``s[-1] // 2 + 1`` frequencies.

  Args and errors as `fftn` (complex input is an error). Mirrors
  `jax.numpy.fft.rfftn`.
  """
  return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None):
  """The inverse of `rfftn`: a real array with sizes `s` along `axes` (the
  last defaulting to ``2 * (m - 1)``).

  Args and errors as `fftn`. Mirrors `jax.numpy.fft.irfftn`.
  """
  return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


# ----------------------------------------------------------------------------
# Frequencies and shifts


def _check_freq_args(name: str, n, d) -> None:
  if isinstance(n, (list, tuple)):
    raise ValueError(f"The n argument of jax.numpy.fft.{name} only takes an int. "
                     f"Got n = {list(n)}.")
  if isinstance(d, (list, tuple)):
    raise ValueError(f"The d argument of jax.numpy.fft.{name} only takes a single value. "
                     f"Got d = {list(d)}.")


def fftfreq(n: int, d=1.0, *, dtype=None, device=None):
  """The sample frequencies of an `fft` of length `n` with sample spacing `d`:
  ``[0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d * n)``.

  Args:
    n: the window length (an int).
    d: the sample spacing (a scalar).
    dtype: the result dtype (default the default float dtype); computed in
      the matching float dtype, then cast (an integer dtype truncates).
    device: where to place the result.

  Returns:
    An array of shape ``(n,)``.

  Raises:
    ValueError: `n` or `d` is a list or tuple.

  Example:
    >>> import xjax.numpy as jnp
    >>> jnp.fft.fftfreq(4)
    Array([ 0.  ,  0.25, -0.5 , -0.25], dtype=float32)

  Mirrors `jax.numpy.fft.fftfreq`.
  """
  dtype = dtype or dtypes.default_float_dtype()
  _check_freq_args("fftfreq", n, d)
  out_dtype = dtype
  dtype = dtypes.finfo(dtypes.to_inexact_dtype(dtype)).dtype
  i = creation.arange(n, dtype=dtype, device=device)
  k = (i + n // 2) % n - n // 2
  result = k.astype(dtype) / creation.array(d * n, dtype=dtype, device=device)
  return result.astype(out_dtype)


def rfftfreq(n: int, d=1.0, *, dtype=None, device=None):
  """The sample frequencies of an `rfft` of length `n` with sample spacing `d`:
  ``[0, 1, ..., n//2] / (d * n)``.

  Args:
    n: the window length (an int).
    d: the sample spacing (a scalar).
    dtype: the dtype of the frequency indices (default the default float
      dtype); the division makes an integer dtype give floats.
    device: where to place the result.

  Returns:
    An array of shape ``(n // 2 + 1,)``.

  Raises:
    ValueError: `n` or `d` is a list or tuple.

  Mirrors `jax.numpy.fft.rfftfreq`.
  """
  dtype = dtype or dtypes.default_float_dtype()
  _check_freq_args("rfftfreq", n, d)
  k = creation.arange(0, n // 2 + 1, dtype=dtype)
  result = k / creation.array(d * n, dtype=dtype)
  return result if device is None else result.to_device(device)


def _shift(name: str, x, axes, sign: int):
  x = ensure_arraylike(name, x)
  x = creation.asarray(x)
  if axes is None:
    axes = tuple(range(x.ndim))
    shift = [sign * (dim // 2) for dim in x.shape]
  elif isinstance(axes, int):
    shift = sign * (x.shape[axes] // 2)
  else:
    shift = [sign * (x.shape[ax] // 2) for ax in axes]
  return lax_numpy.roll(x, shift, axes)


def fftshift(x, axes: None | int | Sequence[int] = None):
  """`x` rolled so that the zero frequency is in the middle of each axis in `axes`
  (all axes by default): a roll by ``size // 2``.

  Raises:
    TypeError: `x` is a list or tuple.

  Example:
    >>> import xjax.numpy as jnp
    >>> jnp.fft.fftshift(jnp.arange(5))
    Array([3, 4, 0, 1, 2], dtype=int32)

  Mirrors `jax.numpy.fft.fftshift`.
  """
  return _shift("fftshift", x, axes, 1)


def ifftshift(x, axes: None | int | Sequence[int] = None):
  """The inverse of `fftshift`: a roll by ``-(size // 2)`` along `axes`.

  Raises:
    TypeError: `x` is a list or tuple.

  Mirrors `jax.numpy.fft.ifftshift`.
  """
  return _shift("ifftshift", x, axes, -1)
