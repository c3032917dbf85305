"""Signal processing of SciPy on xjax arrays (mirrors `jax.scipy.signal`).

Convolutions lower to one `lax.conv_general_dilated` (method "direct") or to
real/complex N-D FFTs (method "fft"); correlation is convolution with the
flipped, conjugated kernel. The spectral functions (`stft`, `csd`, `welch`)
share `_spectral_helper`, which cuts the signal into overlapping segments with
one gather, detrends and windows them and takes one batched FFT; `istft`
inverts it by overlap-add (a scatter-add) and the window's squared-sum
normalisation. Only the Hann window is built here; other named windows come
from `scipy.signal.get_window`, imported on first use, as in JAX.

Arguments are checked eagerly; the arithmetic of each function runs in one
`jit(inline=True)` core (as JAX's jnp functions do), so an eager call
compiles one executable and a traced call inlines plain equations.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from functools import partial

import numpy as np

import xjax.numpy as jnp
from xjax import lax
from xjax._src import dtypes
from xjax._src.api_util import _ensure_index_tuple
from xjax._src.jit import jit
from xjax._src.numpy.util import (canonicalize_axis, check_arraylike, concrete_int,
                                  ensure_arraylike, promote_dtypes_complex,
                                  promote_dtypes_inexact)
from xjax._src.vmap import vmap

_MODES = ("full", "same", "valid")


# ----------------------------------------------------------------------------
# Convolution and correlation


def _fftconvolve_core(in1, in2, mode: str):
  """fftconvolve of two arrays of equal rank over all their axes."""
  full_shape = tuple(s1 + s2 - 1 for s1, s2 in zip(in1.shape, in2.shape, strict=True))
  if mode == "valid":
    bigger = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape, strict=True))
    smaller = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape, strict=True))
    if not (bigger or smaller):
      raise ValueError("For 'valid' mode, One input must be at least as "
                       "large as the other in every dimension.")
    if smaller:
      in1, in2 = in2, in1
  if all(s1 == 1 or s2 == 1 for s1, s2 in zip(in1.shape, in2.shape, strict=True)):
    conv = in1 * in2  # no axis has more than one term: an outer product
  elif jnp.iscomplexobj(in1):
    conv = jnp.fft.ifftn(jnp.fft.fftn(in1, full_shape) * jnp.fft.fftn(in2, full_shape),
                         full_shape)
  else:
    conv = jnp.fft.irfftn(jnp.fft.rfftn(in1, full_shape) * jnp.fft.rfftn(in2, full_shape),
                          full_shape)
  if mode == "full":
    out_shape = full_shape
  elif mode == "same":
    out_shape = in1.shape
  else:
    out_shape = tuple(s1 - s2 + 1 for s1, s2 in zip(in1.shape, in2.shape, strict=True))
  starts = tuple((f - o) // 2 for f, o in zip(full_shape, out_shape, strict=True))
  return lax.dynamic_slice(conv, starts, out_shape)


def fftconvolve(in1, in2, mode: str = "full", axes: Sequence[int] | None = None):
  """N-dimensional convolution of `in1` and `in2` computed with FFTs.

  Args:
    in1, in2: arrays of the same rank (promoted to a common inexact dtype).
    mode: "full" (default, every overlap: shape ``s1 + s2 - 1`` per axis),
      "same" (the centre of "full", with in1's shape) or "valid" (only full
      overlaps: ``|s1 - s2| + 1`` per axis; one input must be at least as
      large as the other in every axis).
    axes: the axes to convolve over (default all). On the other axes the
      inputs must have equal sizes; they are mapped over, not convolved.

  Returns:
    The convolution, of the promoted dtype (real inputs give a real result).

  Raises:
    TypeError: an input is not array-like.
    ValueError: the ranks differ, `mode` is unknown, the mapped axes differ
      in size, or "valid" is asked of inputs that are not ordered in size.

  Mirrors `jax.scipy.signal.fftconvolve`.
  """
  check_arraylike("fftconvolve", in1, in2)
  in1, in2 = promote_dtypes_inexact(in1, in2)
  if in1.ndim != in2.ndim:
    raise ValueError("in1 and in2 should have the same dimensionality")
  if mode not in _MODES:
    raise ValueError("mode must be one of ['same', 'full', 'valid']")
  mapped = ()
  if axes is not None:
    axes = tuple(canonicalize_axis(a, in1.ndim) for a in _ensure_index_tuple(axes))
    mapped = tuple(sorted(set(range(in1.ndim)) - set(axes)))
    if any(in1.shape[a] != in2.shape[a] for a in mapped):
      raise ValueError(f"mapped axes must have same shape; got in1.shape={in1.shape} "
                       f"in2.shape={in2.shape} axes={axes}")
  return _fftconvolve_mapped(in1, in2, mode, mapped)


@partial(jit, static_argnums=(2, 3), inline=True)
def _fftconvolve_mapped(in1, in2, mode: str, mapped: tuple[int, ...]):
  conv = partial(_fftconvolve_core, mode=mode)
  for a in mapped:
    conv = vmap(conv, in_axes=a, out_axes=a)
  return conv(in1, in2)


def _convolve_nd(in1, in2, mode: str, precision):
  """Direct N-D convolution as one conv_general_dilated with a batch and a feature of 1."""
  if mode not in _MODES:
    raise ValueError("mode must be one of ['full', 'same', 'valid']")
  in1, in2 = ensure_arraylike("convolve", in1, in2)
  if np.ndim(in1) != np.ndim(in2):
    raise ValueError("in1 and in2 must have the same number of dimensions")
  if np.size(in1) == 0 or np.size(in2) == 0:
    raise ValueError("zero-size arrays not supported in convolutions, "
                     f"got shapes {np.shape(in1)} and {np.shape(in2)}.")
  in1, in2 = promote_dtypes_inexact(in1, in2)
  bigger = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape, strict=True))
  smaller = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape, strict=True))
  if not (bigger or smaller):
    raise ValueError("One input must be smaller than the other in every dimension.")
  in2_shape = in2.shape  # "same" pads for the kernel as given, before any swap
  if smaller:
    in1, in2 = in2, in1
  kernel = in2.shape
  if mode == "full":
    padding = tuple((k - 1, k - 1) for k in kernel)
  elif mode == "same":
    padding = tuple((k - 1 - (s - 1) // 2, k - s + (s - 1) // 2)
                    for k, s in zip(kernel, in2_shape, strict=True))
  else:
    padding = ((0, 0),) * len(kernel)
  return _conv_direct(in1, in2, padding, precision)


@partial(jit, static_argnums=(2, 3), inline=True)
def _conv_direct(in1, in2, padding, precision):
  out = lax.conv_general_dilated(in1[None, None], jnp.flip(in2)[None, None],
                                 (1,) * in1.ndim, padding, precision=precision)
  return out[0, 0]


def convolve(in1, in2, mode: str = "full", method: str = "auto", precision=None):
  """N-dimensional convolution of `in1` with `in2`.

  Args:
    in1, in2: arrays of the same rank, non-empty; one must be at least as
      large as the other in every axis. Promoted to a common inexact dtype.
    mode: "full" (default), "same" (the centre of "full" with in1's shape)
      or "valid" (only full overlaps).
    method: "auto" (default, the same as "direct"), "direct"
      (`lax.conv_general_dilated`) or "fft" (`fftconvolve`).
    precision: a `lax.Precision` for the direct method.

  Returns:
    The convolution, of the promoted dtype.

  Raises:
    ValueError: unknown `mode` or `method`, ranks differ, an input is empty,
      or the inputs are not ordered in size.

  Mirrors `jax.scipy.signal.convolve`.
  """
  if method == "fft":
    return fftconvolve(in1, in2, mode=mode)
  if method in ("direct", "auto"):
    return _convolve_nd(in1, in2, mode, precision)
  raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")


def correlate(in1, in2, mode: str = "full", method: str = "auto", precision=None):
  """N-dimensional cross-correlation ``z[k] = sum_n in1[n + k] * conj(in2[n])``.

  Computed as the convolution of in1 with in2 flipped on every axis and
  conjugated. Arguments, result and errors are those of `convolve`.

  Mirrors `jax.scipy.signal.correlate`.
  """
  in2 = ensure_arraylike("correlate", in2)
  return convolve(in1, jnp.flip(jnp.conj(in2)), mode, method=method, precision=precision)


def _check_2d(name: str, in1, in2, boundary, fillvalue) -> None:
  if boundary != "fill" or fillvalue != 0:
    raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
  if np.ndim(in1) != 2 or np.ndim(in2) != 2:
    raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
               precision=None):
  """Two-dimensional convolution of `in1` with `in2` (both 2-D).

  Args:
    in1, in2: 2-D arrays (promoted to a common inexact dtype).
    mode: "full" (default), "same" or "valid", as in `convolve`.
    boundary, fillvalue: only SciPy's defaults ("fill" with 0) exist.
    precision: a `lax.Precision` for the convolution.

  Returns:
    The 2-D convolution, of the promoted dtype.

  Raises:
    NotImplementedError: another `boundary` or a non-zero `fillvalue`.
    ValueError: an input is not 2-D, or the errors of `convolve`.

  Mirrors `jax.scipy.signal.convolve2d`.
  """
  _check_2d("convolve2d", in1, in2, boundary, fillvalue)
  return _convolve_nd(in1, in2, mode, precision)


def correlate2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
                precision=None):
  """Two-dimensional cross-correlation of `in1` with `in2` (both 2-D).

  Arguments, result and errors are those of `convolve2d`; the result equals
  SciPy's in every mode, also when in1 is the smaller input.

  Mirrors `jax.scipy.signal.correlate2d`.
  """
  _check_2d("correlate2d", in1, in2, boundary, fillvalue)
  in1, in2 = ensure_arraylike("correlate2d", in1, in2)
  smaller = all(s1 <= s2 for s1, s2 in zip(np.shape(in1), np.shape(in2), strict=True))
  same_shape = np.shape(in1) == np.shape(in2)
  swap = smaller and (mode == "full" or (mode == "valid" and not same_shape))
  if swap:
    out = _convolve_nd(jnp.flip(in2), jnp.conj(in1), mode, precision)
    return jnp.conj(out) if mode == "full" else out
  return jnp.flip(_convolve_nd(jnp.flip(in1), jnp.conj(in2), mode, precision))


# ----------------------------------------------------------------------------
# Detrending


def _remove_line(seg):
  """seg (n, m) minus its least-squares line along axis 0, for each column."""
  n = seg.shape[0]
  if n == 1:
    return seg - seg  # a single point lies on every line
  t = np.arange(n, dtype=np.float64)
  t -= t.mean()
  t = (t / np.sqrt((t * t).sum()))[:, None]  # unit-norm, zero-mean regressor
  t = t.astype(dtypes.to_inexact_dtype(np.dtype(seg.dtype)))
  centred = seg - seg.mean(0, keepdims=True)
  slope = jnp.sum(jnp.asarray(t) * centred, axis=0, keepdims=True)
  return centred - t * slope


def detrend(data, axis: int = -1, type: str = "linear",  # noqa: A002 - SciPy's name
            bp=0, overwrite_data=None):
  """`data` minus its least-squares trend along `axis`.

  Args:
    data: an array (promoted to an inexact dtype).
    axis: the axis to detrend along (default the last).
    type: "linear" (default): remove the best-fit line, or one line per piece
      between breakpoints; "constant": remove the mean.
    bp: breakpoints (static ints in [0, data.shape[axis]]) for "linear"; the
      pieces ``[0, bp[0]), [bp[0], bp[1]), ...`` get separate lines.
    overwrite_data: must be None (arrays are immutable).

  Returns:
    The detrended array, of data's shape and inexact dtype.

  Raises:
    NotImplementedError: `overwrite_data` is given.
    ValueError: unknown `type`, or a breakpoint outside the data.

  Mirrors `jax.scipy.signal.detrend`.
  """
  if overwrite_data is not None:
    raise NotImplementedError("overwrite_data argument not implemented.")
  if type not in ("constant", "linear"):
    raise ValueError("Trend type must be 'linear' or 'constant'.")
  data, = promote_dtypes_inexact(jnp.asarray(data))
  axis = canonicalize_axis(axis, data.ndim)
  if type == "constant":
    return _detrend_core(data, axis, None)
  n = data.shape[axis]
  edges = np.unique(np.concatenate([[0], np.ravel(np.asarray(bp)), [n]]).astype(np.int64))
  if edges[0] < 0 or edges[-1] > n:
    raise ValueError("Breakpoints must be non-negative and less than length of data "
                     "along given axis.")
  return _detrend_core(data, axis, tuple(int(e) for e in edges))


@partial(jit, static_argnums=(1, 2), inline=True)
def _detrend_core(data, axis: int, edges: tuple[int, ...] | None):
  """data minus its mean (edges None) or its piecewise line between edges, along axis."""
  if edges is None:
    return data - data.mean(axis, keepdims=True)
  n = data.shape[axis]
  moved = jnp.moveaxis(data, axis, 0)
  flat = moved.reshape(n, -1)
  pieces = [_remove_line(flat[lo:hi]) for lo, hi in zip(edges[:-1], edges[1:], strict=True)]
  out = jnp.concatenate(pieces, axis=0) if pieces else flat
  return jnp.moveaxis(out.reshape(moved.shape), 0, axis)


# ----------------------------------------------------------------------------
# Windows and segments


def _window_array(window, n: int, dtype):
  """A named window (str or tuple) of length n as an array of `dtype`."""
  if isinstance(window, str) and window == "hann":
    # The periodic Hann window, SciPy's get_window("hann", n).
    win = np.ones(1) if n == 1 else np.sin(np.pi * np.arange(n) / n) ** 2
  else:
    try:
      from scipy.signal import get_window
    except ImportError as err:
      raise ImportError(f"scipy must be available to use window={window!r}") from err
    win = get_window(window, n)
  return jnp.asarray(np.asarray(win), dtype=dtype)


def _triage_segments(window, nperseg: int | None, input_length: int, dtype):
  """The window array and the segment length, from the window and nperseg arguments."""
  if isinstance(window, (str, tuple)):
    n = input_length if nperseg is None else int(nperseg)
    if n > input_length:
      warnings.warn(f"nperseg={n} is greater than input_length={input_length},"
                    f" using nperseg={input_length}")
      n = input_length
    return _window_array(window, n, dtype), n
  win = jnp.asarray(window, dtype=dtype)
  n = win.size if nperseg is None else int(nperseg)
  if win.ndim != 1:
    raise ValueError("window must be 1-D")
  if input_length < win.size:
    raise ValueError("window is longer than input signal")
  if n != win.size:
    raise ValueError("value specified for nperseg is different from length of window")
  return win, n


def _median_bias(n: int) -> float:
  """The median/mean ratio of n chi^2_2 periodograms (Allen et al. 2012, appendix B)."""
  even = np.arange(2.0, n, 2)
  return 1 + np.sum(1.0 / (even + 1) - 1.0 / even)


def _odd_ext(x, n: int):
  """x extended by n points at both ends of its last axis by point reflection."""
  if n < 1:
    return x
  if n > x.shape[-1] - 1:
    raise ValueError(f"The extension length n ({n}) is too big. "
                     f"It must not exceed x.shape[axis]-1, which is {x.shape[-1] - 1}.")
  left = 2 * x[..., :1] - jnp.flip(x[..., 1:n + 1], -1)
  right = 2 * x[..., -1:] - jnp.flip(x[..., -(n + 1):-1], -1)
  return jnp.concatenate([left, x, right], axis=-1)


def _pad_last(mode: str, **kwargs):
  def pad(x, n):
    return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)], mode, **kwargs)
  return pad


_BOUNDARY_FUNCS = {
    "even": _pad_last("reflect"),
    "odd": _odd_ext,
    "constant": _pad_last("edge"),
    "zeros": _pad_last("constant", constant_values=0.0),
    None: lambda x, n: x,
}


def _windowed_fft(x, win, detrend_func, nperseg: int, noverlap: int, nfft: int, sides: str):
  """x (..., T) cut into segments (..., nseg, nperseg), detrended, windowed, FFT'd."""
  step = nperseg - noverlap
  starts = np.arange(0, x.shape[-1] - nperseg + 1, step)
  segments = x[..., starts[:, None] + np.arange(nperseg)[None, :]]
  segments = detrend_func(segments)
  if jnp.iscomplexobj(win):
    segments, = promote_dtypes_complex(segments)
  segments = jnp.broadcast_to(win, segments.shape) * segments
  if sides == "twosided":
    return jnp.fft.fft(segments, n=nfft)
  return jnp.fft.rfft(segments.real, n=nfft)


def _pad_end(x, n: int):
  return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, n)])


def _spectral_helper(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
                     detrend_type="constant", return_onesided=True, scaling="density",
                     axis=-1, mode="psd", boundary=None, padded=False):
  """Frequencies, segment times and windowed FFTs (mode "stft") or cross-spectra
  (mode "psd"; y None means y = x) of segments along `axis`, with the frequency
  axis at `axis` and the segments last."""
  if mode not in ("psd", "stft"):
    raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
  if boundary not in _BOUNDARY_FUNCS:
    raise ValueError(f"Unknown boundary option '{boundary}', "
                     f"must be one of: {list(_BOUNDARY_FUNCS)}")
  x = ensure_arraylike("spectral_helper", x)
  axis = canonicalize_axis(concrete_int(axis, "axis of windowed-FFT"), np.ndim(x))

  if y is None:
    x, = promote_dtypes_inexact(x)
    outershape = x.shape[:axis] + x.shape[axis + 1:]
  else:
    if mode != "psd":
      raise ValueError("two-argument mode is available only when mode=='psd'")
    check_arraylike("spectral_helper", x, y)
    x, y = promote_dtypes_inexact(x, y)
    if x.ndim != y.ndim:
      raise ValueError(f"two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
    try:
      outershape = np.broadcast_shapes(x.shape[:axis] + x.shape[axis + 1:],
                                       y.shape[:axis] + y.shape[axis + 1:])
    except ValueError as err:
      raise ValueError("x and y cannot be broadcast together.") from err

  result_dtype = dtypes.to_complex_dtype(x.dtype)
  freq_dtype = np.finfo(result_dtype).dtype

  if nperseg is not None:
    nperseg = concrete_int(nperseg, "nperseg of windowed-FFT")
    if nperseg < 1:
      raise ValueError("nperseg must be a positive integer")
  win, nperseg = _triage_segments(window, nperseg, x.shape[axis], x.dtype)
  noverlap = (nperseg // 2 if noverlap is None
              else concrete_int(noverlap, "noverlap of windowed-FFT"))
  nfft = nperseg if nfft is None else concrete_int(nfft, "nfft of windowed-FFT")

  if x.size == 0 or (y is not None and y.size == 0):
    length = x.shape[axis] if y is None else min(x.shape[axis], y.shape[axis])
    shape = outershape[:axis] + (length,) + outershape[axis:]
    return (jnp.zeros(shape, freq_dtype), jnp.zeros(shape, freq_dtype),
            jnp.zeros(shape, result_dtype))

  if nfft < nperseg:
    raise ValueError("nfft must be greater than or equal to nperseg.")
  if noverlap >= nperseg:
    raise ValueError("noverlap must be less than nperseg.")
  if not (isinstance(detrend_type, str) or callable(detrend_type) or not detrend_type):
    raise ValueError(f"Unsupported detrend type: {detrend_type}")
  if scaling not in ("density", "spectrum"):
    raise ValueError(f"Unknown scaling: {scaling}")
  sides = "onesided" if return_onesided else "twosided"
  if return_onesided and (jnp.iscomplexobj(x) or (y is not None and jnp.iscomplexobj(y))):
    sides = "twosided"
    warnings.warn("Input data is complex, switching to return_onesided=False")
  return _spectral_core(x, y, win, fs, nperseg, noverlap, nfft, detrend_type or False, sides,
                        scaling, axis, mode, boundary, padded)


@partial(jit, static_argnums=tuple(range(4, 14)), inline=True)
def _spectral_core(x, y, win, fs, nperseg, noverlap, nfft, detrend_type, sides, scaling, axis,
                   mode, boundary, padded):
  result_dtype = dtypes.to_complex_dtype(x.dtype)
  freq_dtype = np.finfo(result_dtype).dtype
  x = jnp.moveaxis(x, axis, -1)
  if y is not None:
    y = jnp.moveaxis(y, axis, -1)
    if x.shape[-1] < y.shape[-1]:
      x = _pad_end(x, y.shape[-1] - x.shape[-1])
    elif y.shape[-1] < x.shape[-1]:
      y = _pad_end(y, x.shape[-1] - y.shape[-1])
  nstep = nperseg - noverlap
  if boundary is not None:
    x = _BOUNDARY_FUNCS[boundary](x, nperseg // 2)
    if y is not None:
      y = _BOUNDARY_FUNCS[boundary](y, nperseg // 2)
  if padded:  # zero-pad to a whole number of segments
    nadd = (-(x.shape[-1] - nperseg) % nstep) % nperseg
    x = _pad_end(x, nadd)
    if y is not None:
      y = _pad_end(y, nadd)

  if isinstance(detrend_type, str):
    detrend_func = partial(detrend, type=detrend_type, axis=-1)
  elif callable(detrend_type):
    detrend_func = detrend_type  # receives the segments, samples on the last axis
  else:
    detrend_func = lambda d: d  # noqa: E731

  if scaling == "density":
    scale = 1.0 / (fs * (win * win).sum())
  else:
    scale = 1.0 / win.sum() ** 2
  if mode == "stft":
    scale = jnp.sqrt(scale)
  scale, = promote_dtypes_complex(scale)
  if sides == "twosided":
    freqs = jnp.fft.fftfreq(nfft, 1 / fs, dtype=freq_dtype)
  else:
    freqs = jnp.fft.rfftfreq(nfft, 1 / fs, dtype=freq_dtype)

  result = _windowed_fft(x, win, detrend_func, nperseg, noverlap, nfft, sides)
  if y is not None:
    result = jnp.conj(result) * _windowed_fft(y, win, detrend_func, nperseg, noverlap, nfft,
                                              sides)
  elif mode == "psd":
    result = jnp.conj(result) * result
  result = result * scale
  if sides == "onesided" and mode == "psd":
    # Fold the negative frequencies in: all bins but DC (and Nyquist, for even nfft) double.
    doubled = np.ones(result.shape[-1])
    doubled[1:None if nfft % 2 else -1] = 2
    result = result * jnp.broadcast_to(doubled.astype(result.dtype), result.shape)

  times = np.arange(nperseg / 2, x.shape[-1] - nperseg / 2 + 1, nstep)
  if boundary is not None:
    times = times - nperseg / 2
  times = jnp.asarray(times, dtype=freq_dtype) / fs

  result = result.astype(result_dtype)
  if y is None and mode != "stft":
    result = result.real
  return freqs, times, jnp.moveaxis(result, -1, axis)


# ----------------------------------------------------------------------------
# Spectral analysis


def stft(x, fs=1.0, window="hann", nperseg: int = 256, noverlap: int | None = None,
         nfft: int | None = None, detrend=False, return_onesided: bool = True,
         boundary: str | None = "zeros", padded: bool = True, axis: int = -1):
  """Short-time Fourier transform of `x` along `axis`.

  Args:
    x: the signal (promoted to an inexact dtype).
    fs: the sampling frequency (default 1.0).
    window: a window name ("hann", default; others through
      `scipy.signal.get_window`), a (name, parameter...) tuple, or a 1-D array
      of length `nperseg`.
    nperseg: samples per segment (default 256; capped at the signal length
      with a warning).
    noverlap: samples shared by consecutive segments (default nperseg // 2).
    nfft: FFT length, >= nperseg (default nperseg).
    detrend: False (default), "constant", "linear" or a callable applied to
      the array of segments, samples on its last axis (as SciPy's `welch`;
      JAX hands it the segments' axes swapped).
    return_onesided: one-sided spectrum for real input (complex input warns
      and switches to two-sided).
    boundary: extension of both ends by nperseg // 2 samples: "zeros"
      (default), "even", "odd", "constant" or None.
    padded: zero-pad the end to a whole number of segments (default True).
    axis: the time axis (default -1).

  Returns:
    ``(f, t, Zxx)``: the sample frequencies, the segment times and the STFT,
    complex, with frequencies at `axis` and segments last.

  Raises:
    ValueError: bad nperseg/noverlap/nfft/boundary/window/detrend values.

  Mirrors `jax.scipy.signal.stft`.
  """
  return _spectral_helper(x, None, fs, window, nperseg, noverlap, nfft, detrend,
                          return_onesided, scaling="spectrum", axis=axis, mode="stft",
                          boundary=boundary, padded=padded)


def csd(x, y, fs=1.0, window="hann", nperseg: int | None = None, noverlap: int | None = None,
        nfft: int | None = None, detrend="constant", return_onesided: bool = True,
        scaling: str = "density", axis: int = -1, average: str = "mean"):
  """Cross power spectral density of `x` and `y` by Welch's method.

  Args:
    x, y: the signals; their non-time axes broadcast, the shorter is
      zero-padded at the end. ``y=None`` means y = x (a real result).
    fs, window, nperseg, noverlap, nfft, detrend, return_onesided, axis: as
      in `stft` (nperseg defaults to 256, detrend to "constant").
    scaling: "density" (default, V**2/Hz) or "spectrum" (V**2).
    average: "mean" (default) or "median" (bias-corrected, real and
      imaginary parts separately) of the segments' periodograms.

  Returns:
    ``(f, Pxy)``: the sample frequencies and the cross spectral density,
    complex unless y is None, with frequencies at `axis`.

  Raises:
    ValueError: unknown `average` or `scaling`, incompatible shapes, or the
      errors of `stft`.

  Mirrors `jax.scipy.signal.csd`.
  """
  freqs, _, pxy = _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                                   return_onesided, scaling, axis, mode="psd")
  if average not in ("mean", "median") and pxy.ndim >= 2 and pxy.size > 0 and pxy.shape[-1] > 1:
    raise ValueError(f'average must be "median" or "mean", got {average}')
  return freqs, _average_segments(pxy, y is not None, average)


@partial(jit, static_argnums=(1, 2), inline=True)
def _average_segments(pxy, cross: bool, average: str):
  """The periodograms pxy (..., nseg) reduced over their segments."""
  if cross:
    pxy = pxy + 0j
  if pxy.ndim < 2 or pxy.size == 0:
    return pxy
  if pxy.shape[-1] == 1:
    return pxy.reshape(pxy.shape[:-1])
  if average == "mean":
    return pxy.mean(axis=-1)
  bias = np.asarray(_median_bias(pxy.shape[-1]), pxy.dtype)
  if jnp.iscomplexobj(pxy):
    pxy = lax.complex(jnp.median(pxy.real, axis=-1), jnp.median(pxy.imag, axis=-1))
  else:
    pxy = jnp.median(pxy, axis=-1)
  return pxy / bias
  return freqs, pxy


def welch(x, fs=1.0, window="hann", nperseg: int | None = None, noverlap: int | None = None,
          nfft: int | None = None, detrend="constant", return_onesided: bool = True,
          scaling: str = "density", axis: int = -1, average: str = "mean"):
  """Power spectral density of `x` by Welch's method (averaged periodograms).

  Arguments as in `csd` without `y`. Returns ``(f, Pxx)``, Pxx real with
  frequencies at `axis`.

  Mirrors `jax.scipy.signal.welch`.
  """
  freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                   nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                   scaling=scaling, axis=axis, average=average)
  return freqs, pxx.real


def _overlap_and_add(frames, step: int):
  """frames (..., nframes, length) summed into (..., step * (nframes - 1) + length),
  frame i starting at i * step."""
  *batch, nframes, length = frames.shape
  index = (np.arange(nframes) * step)[:, None] + np.arange(length)[None, :]
  out = jnp.zeros((*batch, step * (nframes - 1) + length), frames.dtype)
  return out.at[..., index.ravel()].add(frames.reshape(*batch, nframes * length))


def istft(Zxx, fs=1.0, window="hann", nperseg: int | None = None, noverlap: int | None = None,
          nfft: int | None = None, input_onesided: bool = True, boundary: bool = True,
          time_axis: int = -1, freq_axis: int = -2):
  """Inverse short-time Fourier transform: the signal whose `stft` is `Zxx`.

  Args:
    Zxx: the STFT, at least 2-D (converted to complex).
    fs: the sampling frequency (default 1.0).
    window: as in `stft` (default "hann"); an array must have length nperseg.
    nperseg: samples per segment (default from Zxx's frequency axis).
    noverlap: overlap of segments (default nperseg // 2).
    nfft: FFT length, >= nperseg (default from Zxx's frequency axis).
    input_onesided: Zxx holds only non-negative frequencies (default True).
    boundary: drop the nperseg // 2 samples `stft` added at each end.
    time_axis, freq_axis: the segment and frequency axes of Zxx (distinct).

  Returns:
    ``(t, x)``: sample times (``arange(x.shape[0]) / fs``, as SciPy) and the
    signal, real for one-sided input, with time on Zxx's time axis.

  Raises:
    ValueError: Zxx below 2-D, equal axes, or bad nperseg/noverlap/nfft/window.

  Mirrors `jax.scipy.signal.istft`.
  """
  Zxx = ensure_arraylike("istft", Zxx)
  if Zxx.ndim < 2:
    raise ValueError("Input stft must be at least 2d!")
  freq_axis = canonicalize_axis(freq_axis, Zxx.ndim)
  time_axis = canonicalize_axis(time_axis, Zxx.ndim)
  if freq_axis == time_axis:
    raise ValueError("Must specify differing time and frequency axes!")
  Zxx = jnp.asarray(Zxx, dtype=dtypes.to_complex_dtype(Zxx.dtype))

  n_default = 2 * (Zxx.shape[freq_axis] - 1) if input_onesided else Zxx.shape[freq_axis]
  nperseg = concrete_int(n_default if nperseg is None else nperseg,
                         "nperseg: segment length of STFT")
  if nperseg < 1:
    raise ValueError("nperseg must be a positive integer")
  if nfft is None:
    nfft = n_default + 1 if input_onesided and nperseg == n_default + 1 else n_default
  else:
    nfft = concrete_int(nfft, "nfft of STFT")
  if nfft < nperseg:
    raise ValueError(f"FFT length ({nfft}) must be longer than nperseg ({nperseg}).")
  noverlap = concrete_int(nperseg // 2 if noverlap is None else noverlap, "noverlap of STFT")
  if noverlap >= nperseg:
    raise ValueError("noverlap must be less than nperseg.")
  nstep = nperseg - noverlap

  sub_dtype = np.finfo(Zxx.dtype).dtype if input_onesided else Zxx.dtype
  if isinstance(window, (str, tuple)):
    win = _window_array(window, nperseg, sub_dtype)
  else:
    win = jnp.asarray(window)
    if win.ndim != 1:
      raise ValueError("window must be 1-D")
    if win.shape[0] != nperseg:
      raise ValueError(f"window must have length of {nperseg}")
  return _istft_core(Zxx, win, fs, nperseg, nstep, nfft, bool(input_onesided), bool(boundary),
                     time_axis, freq_axis)


@partial(jit, static_argnums=tuple(range(3, 10)), inline=True)
def _istft_core(Zxx, win, fs, nperseg, nstep, nfft, input_onesided, boundary, time_axis,
                freq_axis):
  outer = tuple(a for a in range(Zxx.ndim) if a not in (time_axis, freq_axis))
  Zxx = jnp.transpose(Zxx, outer + (freq_axis, time_axis))
  inverse = jnp.fft.irfft if input_onesided else jnp.fft.ifft
  xsubs = inverse(Zxx, n=nfft, axis=-2)[..., :nperseg, :]  # (..., nperseg, nframes)
  xsubs = xsubs * win.sum()  # undoes stft's "spectrum" scaling

  frames = jnp.swapaxes(xsubs * jnp.broadcast_to(win[:, None], xsubs.shape), -2, -1)
  x = _overlap_and_add(frames, nstep)
  win_sq = jnp.broadcast_to(win * win, (xsubs.shape[-1], nperseg))
  norm = _overlap_and_add(win_sq, nstep)
  if boundary:
    half = nperseg // 2
    x = x[..., half:x.shape[-1] - half]
    norm = norm[..., half:norm.shape[-1] - half]
  x = x / jnp.broadcast_to(jnp.where(norm > 1e-10, norm, 1.0), x.shape)

  if x.ndim > 1 and time_axis != Zxx.ndim - 1:
    x = jnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
  times = jnp.arange(x.shape[0], dtype=np.finfo(x.dtype).dtype) / fs
  return times, x
