"""xjax.scipy.signal against scipy.signal: convolutions (every mode and method, 1-D to 3-D,
real, complex and integer inputs), detrend, stft/istft, csd/welch (windows, boundaries,
scalings, averages, axes), jit and vmap against eager, gradients, errors."""
import warnings

import numpy as np
import pytest
import scipy.signal as osp

import xjax
import xjax.scipy.signal as xsig
from xjax._src.dtypes import TypePromotionError
from xjax._src.errors import ConcretizationTypeError
from xjax.test_util import check_grads

MODES = ("full", "same", "valid")

# (in1 shape, in2 shape): 1-D to 3-D, in2 smaller or larger (the inputs are swapped).
SHAPES = [((9,), (4,)), ((3,), (8,)), ((6, 5), (3, 2)), ((2, 3), (4, 5)),
          ((4, 5, 3), (2, 2, 3))]


def _rand(rng, shape, dtype=np.float64):
  x = rng.normal(size=shape)
  if np.issubdtype(dtype, np.complexfloating):
    x = x + 1j * rng.normal(size=shape)
  if np.issubdtype(dtype, np.integer):
    x = rng.integers(-5, 6, size=shape)
  return x.astype(dtype)


@pytest.fixture(autouse=True)
def _strict_promotion():
  """As JAX's own tests run: implicit rank promotion raises and dtype promotion is strict,
  so xjax's code broadcasts and casts explicitly, as JAX's scipy.signal does."""
  with xjax.numpy_rank_promotion("raise"), xjax.numpy_dtype_promotion("strict"):
    yield


def _close(got, want, rtol=1e-10, atol=1e-10):
  np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------
# Convolution and correlation


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_convolve_correlate_match_scipy(mode, dtype, rng, x64):
  for s1, s2 in SHAPES:
    a, b = _rand(rng, s1, dtype), _rand(rng, s2, dtype)
    for method in ("direct", "fft"):
      _close(xsig.convolve(a, b, mode, method), osp.convolve(a, b, mode, method="direct"))
      _close(xsig.correlate(a, b, mode, method), osp.correlate(a, b, mode, method="direct"))
    _close(xsig.fftconvolve(a, b, mode), osp.fftconvolve(a, b, mode))
    if len(s1) == 2:
      _close(xsig.convolve2d(a, b, mode), osp.convolve2d(a, b, mode))
      _close(xsig.correlate2d(a, b, mode), osp.correlate2d(a, b, mode))
      _close(xsig.correlate2d(b, a, mode), osp.correlate2d(b, a, mode))
      _close(xsig.correlate2d(a, a, mode), osp.correlate2d(a, a, mode))
    assert xsig.convolve(a, b, mode).dtype == dtype


def test_convolve_dtypes_and_float32(rng):
  a, b = _rand(rng, (7, 4), np.int32), _rand(rng, (3, 3), np.int32)
  for f in (xsig.convolve, xsig.correlate, xsig.fftconvolve, xsig.convolve2d, xsig.correlate2d):
    out = f(a, b)
    assert out.dtype == np.float32  # integers promote to the default float, as in JAX
    _close(out, getattr(osp, f.__name__)(a, b), rtol=1e-5, atol=1e-4)
  af, bf = _rand(rng, (50,), np.float32), _rand(rng, (9,), np.float32)
  for mode in MODES:
    _close(xsig.convolve(af, bf, mode), osp.convolve(af, bf, mode), rtol=1e-5, atol=1e-5)
    _close(xsig.fftconvolve(af, bf, mode), osp.fftconvolve(af, bf, mode), rtol=1e-5, atol=1e-5)
  with xjax.numpy_dtype_promotion("standard"):  # strict refuses these, as JAX's does
    assert xsig.convolve(af, np.ones(3, np.float16)).dtype == np.float32
    assert xsig.convolve(af, bf.astype(np.complex64)).dtype == np.complex64
  with pytest.raises(TypePromotionError, match="no available implicit dtype promotion path"):
    xsig.convolve(af, np.ones(3, np.float16))
  assert xsig.fftconvolve(af, bf).dtype == np.float32  # real inputs give a real result


def test_convolve_edge_values(x64):
  a = np.array([1.0, np.nan, 2.0, 0.0, 1e300, -3.0, 0.0, 4.0])
  b = np.array([1.0, 0.5, 2.0])
  want = osp.convolve(a, b, method="direct")
  got = np.asarray(xsig.convolve(a, b))
  np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
  _close(got, want, rtol=1e-12)
  inf = np.array([0.0, np.inf, 1.0, 0.0, 2.0])
  _close(xsig.convolve(inf, np.array([1.0, 2.0])), osp.convolve(inf, [1.0, 2.0], method="direct"))
  _close(xsig.convolve(np.array([1.0]), np.array([3.0])), [3.0])
  _close(xsig.convolve(np.array(2.0), np.array(3.0)), 6.0)  # 0-d inputs
  _close(xsig.fftconvolve(np.ones((1, 4)), np.ones((3, 1))), np.ones((3, 4)))  # outer product


def test_fftconvolve_axes(rng, x64):
  a, b, small = _rand(rng, (4, 9, 3)), _rand(rng, (4, 5, 3)), _rand(rng, (2, 5, 3))
  for axes, other in ((1, b), ([1], b), (-2, b), ((0, 1), small), (None, small)):
    for mode in MODES:
      _close(xsig.fftconvolve(a, other, mode, axes=axes),
             osp.fftconvolve(a, other, mode, axes=axes))
  c = _rand(rng, (3, 6), np.complex128)
  _close(xsig.fftconvolve(c, c[:, :2], axes=1), osp.fftconvolve(c, c[:, :2], axes=1))


def test_convolve_jit_vmap_match_eager(rng):
  a, b = _rand(rng, (3, 12), np.float32), _rand(rng, (3, 4), np.float32)
  for mode in MODES:
    for f in (xsig.convolve, xsig.correlate, xsig.fftconvolve):
      g = lambda x, y, f=f: f(x, y, mode)  # noqa: E731
      eager = np.stack([g(x, y) for x, y in zip(a, b)])
      _close(xjax.jit(g)(a[0], b[0]), eager[0], rtol=1e-6, atol=1e-6)
      _close(xjax.vmap(g)(a, b), eager, rtol=1e-5, atol=1e-5)
  m, k = _rand(rng, (2, 5, 6), np.float32), _rand(rng, (3, 2), np.float32)
  for f in (xsig.convolve2d, xsig.correlate2d):
    eager = np.stack([f(x, k, "same") for x in m])
    _close(xjax.vmap(lambda x, f=f: f(x, k, "same"))(m), eager, rtol=1e-5, atol=1e-5)
    _close(xjax.jit(f, static_argnums=2)(m[0], k, "valid"), f(m[0], k, "valid"), rtol=1e-6)


def test_convolve_grads(rng, x64):
  a, b = _rand(rng, (7,)), _rand(rng, (3,))
  check_grads(lambda x, y: xsig.convolve(x, y, "full"), (a, b), order=2)
  check_grads(lambda x, y: xsig.fftconvolve(x, y, "same"), (a, b), order=1)
  check_grads(lambda x, y: xsig.correlate(x, y, "valid"), (a, b), order=1)
  check_grads(lambda x, y: xsig.convolve(x, y, "same", method="fft"), (a, b), order=1)
  m, k = _rand(rng, (4, 5)), _rand(rng, (2, 3))
  check_grads(lambda x, y: xsig.correlate2d(x, y, "full"), (m, k), order=1, modes=("rev",))
  c = _rand(rng, (5,), np.complex128)
  check_grads(lambda x: xsig.convolve(x, c[:2]), (c,), order=1, modes=("rev",))
  check_grads(lambda x: xsig.fftconvolve(x, c[:2]), (c,), order=1, modes=("rev",))
  # d/dx sum(conv(x, k)) = sum(k) at every x (full mode).
  _close(xjax.grad(lambda x: xsig.convolve(x, b).sum())(a), np.full(7, b.sum()))


def test_convolve_errors():
  x, y = np.ones(5), np.ones(3)
  with pytest.raises(ValueError, match="mode must be one of"):
    xsig.convolve(x, y, mode="middle")
  with pytest.raises(ValueError, match="mode must be one of"):
    xsig.fftconvolve(x, y, mode="middle")
  with pytest.raises(ValueError, match="expected 'auto', 'fft', or 'direct'"):
    xsig.convolve(x, y, method="overlap-add")
  with pytest.raises(ValueError, match="same number of dimensions"):
    xsig.convolve(x, np.ones((2, 2)))
  with pytest.raises(ValueError, match="same dimensionality"):
    xsig.fftconvolve(x, np.ones((2, 2)))
  with pytest.raises(ValueError, match="zero-size arrays not supported"):
    xsig.convolve(x, np.ones(0))
  with pytest.raises(ValueError, match="smaller than the other in every dimension"):
    xsig.convolve(np.ones((2, 5)), np.ones((3, 2)))
  with pytest.raises(ValueError, match="at least as large as the other"):
    xsig.fftconvolve(np.ones((2, 5)), np.ones((3, 2)), mode="valid")
  with pytest.raises(ValueError, match="mapped axes must have same shape"):
    xsig.fftconvolve(np.ones((2, 5)), np.ones((3, 2)), axes=1)
  for f in (xsig.convolve2d, xsig.correlate2d):
    with pytest.raises(NotImplementedError, match="only supports boundary='fill', fillvalue=0"):
      f(np.ones((3, 3)), np.ones((2, 2)), boundary="wrap")
    with pytest.raises(NotImplementedError, match="fillvalue=0"):
      f(np.ones((3, 3)), np.ones((2, 2)), fillvalue=1.0)
    with pytest.raises(ValueError, match="only supports 2-dimensional inputs"):
      f(x, y)
  with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
    xsig.fftconvolve([1.0, 2.0], y)


# ----------------------------------------------------------------------------
# detrend


def test_detrend_matches_scipy(rng, x64):
  x = _rand(rng, (3, 40)) + np.linspace(0, 5, 40)
  for kw in ({}, {"type": "constant"}, {"type": "linear", "axis": 0}, {"bp": [10, 25]},
             {"bp": np.array([0, 7, 39, 40])}, {"bp": 5, "type": "constant"}, {"bp": [39]}):
    _close(xsig.detrend(x, **kw), osp.detrend(x, **kw), atol=1e-12)
  y = _rand(rng, (4, 6, 5))
  _close(xsig.detrend(y, axis=1), osp.detrend(y, axis=1), atol=1e-12)
  c = _rand(rng, (11,), np.complex128)
  _close(xsig.detrend(c), osp.detrend(c), atol=1e-12)
  ints = np.arange(10) ** 2
  with xjax._src.config.enable_x64(False):
    out = xsig.detrend(ints)
    assert out.dtype == np.float32
    _close(out, osp.detrend(ints), rtol=1e-5, atol=1e-4)
  _close(xjax.jit(xsig.detrend)(x), osp.detrend(x), atol=1e-12)
  _close(xjax.vmap(lambda r: xsig.detrend(r, bp=[20]))(x), osp.detrend(x, bp=[20]), atol=1e-12)
  check_grads(lambda d: xsig.detrend(d, bp=[3]), (x[0, :8],), order=1)


def test_detrend_errors():
  with pytest.raises(NotImplementedError, match="overwrite_data argument not implemented"):
    xsig.detrend(np.ones(4), overwrite_data=True)
  with pytest.raises(ValueError, match="Trend type must be 'linear' or 'constant'"):
    xsig.detrend(np.ones(4), type="quadratic")
  with pytest.raises(ValueError, match="Breakpoints must be non-negative"):
    xsig.detrend(np.ones(4), bp=[5])
  with pytest.raises(ValueError, match="Breakpoints must be non-negative"):
    xsig.detrend(np.ones(4), bp=[-1])


# ----------------------------------------------------------------------------
# stft, istft, csd, welch


def test_stft_matches_scipy(rng, x64):
  x = _rand(rng, (2, 100))
  cases = [dict(nperseg=16), dict(nperseg=15, noverlap=5, nfft=20, detrend="linear"),
           dict(nperseg=16, boundary=None, padded=False), dict(nperseg=16, boundary="even"),
           dict(nperseg=16, boundary="odd", detrend="constant"),
           dict(nperseg=16, boundary="constant", return_onesided=False),
           dict(nperseg=8, window="hamming", fs=10.0), dict(window=("tukey", 0.3), nperseg=12),
           dict(window=np.bartlett(10), nperseg=10),
           dict(nperseg=256)]  # capped at the signal length, with a warning
  for kw in cases:
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      got, want = xsig.stft(x, **kw), osp.stft(x, **kw)
    for g, w in zip(got, want, strict=True):
      _close(g, w, atol=1e-12)
  _close(xsig.stft(x.T, nperseg=16, axis=0)[2], osp.stft(x.T, nperseg=16, axis=0)[2], atol=1e-12)
  with pytest.warns(UserWarning, match="nperseg=256 is greater than input_length=100"):
    xsig.stft(x, nperseg=256)
  c = _rand(rng, (50,), np.complex128)
  with pytest.warns(UserWarning, match="Input data is complex"):
    got = xsig.stft(c, nperseg=8)
  _close(got[2], osp.stft(c, nperseg=8, return_onesided=False)[2], atol=1e-12)
  with xjax._src.config.enable_x64(False):
    f, t, z = xsig.stft(np.arange(40), nperseg=8)
    assert (f.dtype, t.dtype, z.dtype) == (np.float32, np.float32, np.complex64)
    _close(z, osp.stft(np.arange(40.0), nperseg=8)[2], rtol=1e-5, atol=1e-5)


def test_istft_inverts_stft(rng, x64):
  x = _rand(rng, (3, 64))
  for kw in (dict(nperseg=16), dict(nperseg=15, noverlap=10), dict(nperseg=16, nfft=24),
             dict(nperseg=8, window="hamming"), dict(nperseg=10, window=np.hanning(10) + 0.1)):
    z = osp.stft(x, **kw)[2]
    t, rec = xsig.istft(z, **kw)
    t_ref, rec_ref = osp.istft(z, **kw)
    _close(rec, rec_ref, atol=1e-12)
    _close(t, t_ref)
    _close(rec[..., :64], x, atol=1e-12)
  z2 = osp.stft(x, nperseg=16, return_onesided=False)[2]
  _close(xsig.istft(z2, input_onesided=False)[1], osp.istft(z2, input_onesided=False)[1],
         atol=1e-12)
  z3 = osp.stft(x, nperseg=16, boundary=None)[2]
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # SciPy warns that NOLA fails without the boundary
    _close(xsig.istft(z3, boundary=False)[1], osp.istft(z3, boundary=False)[1], atol=1e-12)
  zt = np.moveaxis(osp.stft(x, nperseg=16)[2], 0, -1)  # (freq, time, batch)
  _close(xsig.istft(zt, time_axis=1, freq_axis=0)[1],
         osp.istft(zt, time_axis=1, freq_axis=0)[1], atol=1e-12)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # SciPy warns that NOLA fails for noverlap=0
    z0 = osp.stft(x, nperseg=16, noverlap=0)[2]
    _close(xsig.istft(z0, noverlap=0)[1], osp.istft(z0, noverlap=0)[1], atol=1e-12)
  z = osp.stft(x[0], nperseg=16)[2]
  _close(xjax.jit(xsig.istft)(z)[1], osp.istft(z)[1], atol=1e-12)


@pytest.mark.parametrize("fn", ["welch", "csd"])
def test_welch_csd_match_scipy(fn, rng, x64):
  x, y = _rand(rng, (2, 120)), _rand(rng, (2, 120))
  ref = getattr(osp, fn)
  ours = getattr(xsig, fn)
  args = (x,) if fn == "welch" else (x, y)
  cases = [{}, dict(nperseg=32), dict(nperseg=30, noverlap=20, nfft=40, scaling="spectrum"),
           dict(nperseg=16, average="median"), dict(nperseg=16, detrend="linear", fs=8.0),
           dict(nperseg=16, detrend=False, return_onesided=False),
           dict(nperseg=17, window="blackman"), dict(window=np.hamming(20)),
           dict(nperseg=16, detrend=lambda d: d - d.mean(-1, keepdims=True))]
  for kw in cases:
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      got, want = ours(*args, **kw), ref(*args, **kw)
    _close(got[0], want[0])
    _close(got[1], want[1], atol=1e-12)
    assert np.iscomplexobj(got[1]) == (fn == "csd")
  moved = tuple(np.moveaxis(a, -1, 0) for a in args)
  _close(ours(*moved, nperseg=16, axis=0)[1], ref(*moved, nperseg=16, axis=0)[1], atol=1e-12)
  c = _rand(rng, (80,), np.complex128)
  cargs = (c,) if fn == "welch" else (c, c[::-1])
  with pytest.warns(UserWarning, match="Input data is complex"):
    got = ours(*cargs, nperseg=16)
  _close(got[1], ref(*cargs, nperseg=16, return_onesided=False)[1], atol=1e-12)


def test_csd_lengths_broadcasting_and_edges(rng, x64):
  x, y = _rand(rng, (3, 100)), _rand(rng, (3, 70))
  _close(xsig.csd(x, y, nperseg=16)[1], osp.csd(x, y, nperseg=16)[1], atol=1e-12)  # y padded
  _close(xsig.csd(y, x, nperseg=16)[1], osp.csd(y, x, nperseg=16)[1], atol=1e-12)
  y1 = _rand(rng, (1, 100))  # outer axes broadcast (SciPy requires equal shapes)
  _close(xsig.csd(x, y1, nperseg=16)[1],
         osp.csd(x, np.broadcast_to(y1, x.shape), nperseg=16)[1], atol=1e-12)
  _close(xsig.csd(x, x, nperseg=16)[1], osp.welch(x, nperseg=16)[1], atol=1e-12)
  # One segment only: no averaging axis to reduce.
  _close(xsig.welch(x[0, :16], nperseg=16)[1], osp.welch(x[0, :16], nperseg=16)[1], atol=1e-12)
  f, p = xsig.welch(np.zeros((2, 0)))
  assert f.shape == p.shape == (2, 0)
  f, p = xsig.csd(np.zeros((3, 0)), np.zeros((3, 5)))
  assert p.shape == (3, 0) and p.dtype == np.complex128
  _close(xsig.welch(np.ones(32), nperseg=8)[1], np.zeros(5))  # constant detrend kills DC
  p = xsig.welch(np.array([0.0, 1.0, np.nan, 2.0] * 8), nperseg=8)[1]
  assert np.isnan(np.asarray(p)).all()


def test_spectral_jit_vmap_and_grads(rng):
  x = _rand(rng, (3, 64), np.float32)
  y = _rand(rng, (3, 64), np.float32)
  welch = lambda a: xsig.welch(a, nperseg=16)[1]  # noqa: E731
  stft = lambda a: xsig.stft(a, nperseg=16)[2]  # noqa: E731
  csd = lambda a, b: xsig.csd(a, b, nperseg=16, average="median")[1]  # noqa: E731
  for f, args in ((welch, (x,)), (stft, (x,)), (csd, (x, y))):
    eager = f(*args)
    _close(xjax.jit(f)(*args), eager, rtol=1e-5, atol=1e-6)
    _close(xjax.vmap(f)(*args), eager, rtol=1e-5, atol=1e-6)
  _close(xjax.jit(lambda a, fs: xsig.welch(a, fs=fs, nperseg=16)[1])(x, 4.0),
         osp.welch(x, fs=4.0, nperseg=16)[1], rtol=1e-4, atol=1e-6)
  with xjax._src.config.enable_x64(True):
    x64 = x[0].astype(np.float64)
    check_grads(lambda a: xsig.welch(a, nperseg=16)[1], (x64,), order=1, modes=("rev",))


def test_spectral_errors():
  x = np.ones(64)
  with pytest.raises(ValueError, match="nperseg must be a positive integer"):
    xsig.welch(x, nperseg=0)
  with pytest.raises(ValueError, match="noverlap must be less than nperseg"):
    xsig.welch(x, nperseg=8, noverlap=8)
  with pytest.raises(ValueError, match="nfft must be greater than or equal to nperseg"):
    xsig.welch(x, nperseg=8, nfft=4)
  with pytest.raises(ValueError, match="Unknown boundary option 'wrap'"):
    xsig.stft(x, boundary="wrap")
  with pytest.raises(ValueError, match="Unknown scaling: power"):
    xsig.welch(x, scaling="power")
  with pytest.raises(ValueError, match='average must be "median" or "mean", got max'):
    xsig.welch(x, nperseg=8, average="max")
  with pytest.raises(ValueError, match="Unsupported detrend type: 3"):
    xsig.welch(x, detrend=3)
  with pytest.raises(ValueError, match="Trend type must be"):
    xsig.welch(x, detrend="quadratic")
  with pytest.raises(ValueError, match="window must be 1-D"):
    xsig.welch(x, window=np.ones((2, 4)))
  with pytest.raises(ValueError, match="window is longer than input signal"):
    xsig.welch(x[:4], window=np.ones(8))
  with pytest.raises(ValueError, match="different from length of window"):
    xsig.welch(x, window=np.ones(8), nperseg=16)
  with pytest.raises(ValueError, match="cannot be broadcast together"):
    xsig.csd(np.ones((2, 64)), np.ones((3, 64)))
  with pytest.raises(ValueError, match="same rank"):
    xsig.csd(np.ones((2, 64)), x)
  with pytest.raises(ConcretizationTypeError):
    xjax.jit(lambda a, n: xsig.welch(a, nperseg=n))(x, 8)
  z = np.ones((5, 9), np.complex64)
  with pytest.raises(ValueError, match="Input stft must be at least 2d"):
    xsig.istft(z[0])
  with pytest.raises(ValueError, match="Must specify differing time and frequency axes"):
    xsig.istft(z, time_axis=0, freq_axis=-2)
  with pytest.raises(ValueError, match="nperseg must be a positive integer"):
    xsig.istft(z, nperseg=-1)
  with pytest.raises(ValueError, match=r"FFT length \(6\) must be longer than nperseg \(8\)"):
    xsig.istft(z, nfft=6)
  with pytest.raises(ValueError, match="noverlap must be less than nperseg"):
    xsig.istft(z, noverlap=8)
  with pytest.raises(ValueError, match="window must have length of 8"):
    xsig.istft(z, window=np.ones(6))
  with pytest.raises(ValueError, match="window must be 1-D"):
    xsig.istft(z, window=np.ones((8, 1)))
