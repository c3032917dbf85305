"""jnp.fft: all 18 functions against numpy.fft for every norm, dtype and
n/s/axes combination (cropping and padding); dtype promotion; jit against
eager; vmap against a loop; derivatives; printed jaxprs against real JAX's
text; JAX's errors."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src import test_util as jtu

NORMS = [None, "backward", "ortho", "forward"]
TOL = {np.dtype(np.float32): 3e-5, np.dtype(np.complex64): 3e-5,
       np.dtype(np.float64): 1e-12, np.dtype(np.complex128): 1e-12}


def _random(rng, shape, dtype):
  if np.issubdtype(dtype, np.integer):
    return rng.integers(-5, 5, shape).astype(dtype)
  x = rng.standard_normal(shape)
  if np.issubdtype(dtype, np.complexfloating):
    x = x + 1j * rng.standard_normal(shape)
  return x.astype(dtype)


def _close(out, ref, dtype=None):
  out = np.asarray(out)
  tol = TOL[np.dtype(dtype or out.dtype)]
  scale = max(1.0, float(np.max(np.abs(ref)))) if np.size(ref) else 1.0
  np.testing.assert_allclose(out, ref, rtol=tol, atol=tol * scale)


@pytest.fixture
def x64():
  with xjax._src.config.enable_x64(True):
    yield


def test_namespace_has_jax_names():
  names = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
  public = sorted(n for n in dir(jnp.fft) if not n.startswith("_"))
  assert public == sorted(names)
  import xjax.numpy.fft as module
  assert jnp.fft is module


# ----------------------------------------------------------------------------
# One-dimensional transforms

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
_REAL_INPUT = {"rfft", "ihfft", "rfft2", "rfftn"}


def _input_dtype(name, double):
  if name in _REAL_INPUT:
    return np.float64 if double else np.float32
  return np.complex128 if double else np.complex64


def _np_axes(s, axes, ndim):
  """NumPy 2 wants explicit axes with s: the last len(s) axes, as NumPy 1 (and JAX) read it."""
  return tuple(range(ndim - len(s), ndim)) if axes is None and s is not None else axes


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("norm", [None, "ortho"])
@pytest.mark.parametrize("n,axis", [(None, -1), (None, 0), (4, -1), (11, -1), (3, 0), (9, 1)])
def test_1d_transforms_match_numpy(rng, name, norm, n, axis):
  x = _random(rng, (5, 6), _input_dtype(name, False))
  ref = getattr(np.fft, name)(x, n=n, axis=axis, norm=norm)
  out = getattr(jnp.fft, name)(x, n=n, axis=axis, norm=norm)
  assert out.shape == ref.shape
  assert out.dtype == (np.float32 if ref.dtype.kind == "f" else np.complex64)
  _close(out, ref)


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [4, 11])
def test_1d_transforms_match_numpy_for_every_norm(rng, name, norm, n):
  x = _random(rng, (3, 6), _input_dtype(name, False))
  _close(getattr(jnp.fft, name)(x, n=n, norm=norm), getattr(np.fft, name)(x, n=n, norm=norm))


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("norm", [None, "ortho"])
def test_1d_transforms_match_numpy_in_double_precision(rng, x64, name, norm):
  x = _random(rng, (3, 7), _input_dtype(name, True))
  ref = getattr(np.fft, name)(x, n=6, norm=norm)
  out = getattr(jnp.fft, name)(x, n=6, norm=norm)
  assert out.dtype == ref.dtype
  _close(out, ref)


@pytest.mark.parametrize("name", ["fft", "ifft", "irfft", "hfft"])
def test_complex_transforms_of_real_input(rng, name):
  x = _random(rng, (4, 6), np.float32)
  _close(getattr(jnp.fft, name)(x), getattr(np.fft, name)(x), np.float32)


# ----------------------------------------------------------------------------
# Two- and n-dimensional transforms

N_D = ["fftn", "ifftn", "rfftn", "irfftn"]
S_AXES = [(None, None), (None, (0, 2)), ((4, 3), None), ((2, 5), (0, 2)), ((3, 6, 2), None),
          ((5,), (1,)), (None, (2, 0)), ((4, 3), (-1, 0)), (None, (1,))]


@pytest.mark.parametrize("name", N_D)
@pytest.mark.parametrize("s,axes", S_AXES)
def test_nd_transforms_match_numpy(rng, name, s, axes):
  x = _random(rng, (3, 4, 5), _input_dtype(name, False))
  ref = getattr(np.fft, name)(x, s=s, axes=_np_axes(s, axes, 3))
  out = getattr(jnp.fft, name)(x, s=s, axes=axes)
  assert out.shape == ref.shape
  _close(out, ref)


@pytest.mark.parametrize("name", N_D)
@pytest.mark.parametrize("norm", NORMS)
def test_nd_transforms_match_numpy_for_every_norm(rng, name, norm):
  x = _random(rng, (3, 4, 5), _input_dtype(name, False))
  s, axes = (2, 6), (2, 0)
  ref = getattr(np.fft, name)(x, s=s, axes=axes, norm=norm)
  out = getattr(jnp.fft, name)(x, s=s, axes=axes, norm=norm)
  assert out.shape == ref.shape
  _close(out, ref)


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2"])
@pytest.mark.parametrize("s,axes", [(None, (-2, -1)), ((3, 8), (-2, -1)), (None, (0, 2)),
                                    ((2, 4), (2, 0))])
@pytest.mark.parametrize("norm", [None, "forward"])
def test_2d_transforms_match_numpy(rng, name, s, axes, norm):
  x = _random(rng, (3, 4, 5), _input_dtype(name, False))
  ref = getattr(np.fft, name)(x, s=s, axes=axes, norm=norm)
  out = getattr(jnp.fft, name)(x, s=s, axes=axes, norm=norm)
  assert out.shape == ref.shape
  _close(out, ref)


@pytest.mark.parametrize("name", N_D)
@pytest.mark.parametrize("shape,s", [((2, 3, 2, 4), None), ((2, 2, 3, 2, 4), None),
                                     ((2, 3, 2, 2, 3, 2), None), ((2, 3, 2, 4), (3, 2, 2, 6))])
def test_nd_transforms_over_more_than_three_axes(rng, name, shape, s):
  # XLA transforms at most three axes at once; more are done in blocks.
  x = _random(rng, shape, _input_dtype(name, False))
  ref = getattr(np.fft, name)(x, s=s, axes=_np_axes(s, None, len(shape)))
  _close(getattr(jnp.fft, name)(x, s=s), ref)


def test_irfftn_default_output_size_and_empty_result():
  c = np.ones((2, 1), np.complex64)
  assert jnp.fft.irfftn(c).shape == (2, 0)
  assert jnp.fft.irfft(np.ones(1, np.complex64)).shape == (0,)


def test_fft_along_no_axis_given_is_over_all_axes(rng):
  # JAX (unlike NumPy) reads axis=None as "all axes".
  x = _random(rng, (3, 4), np.complex64)
  _close(jnp.fft.fft(x, axis=None), np.fft.fftn(x))


def test_round_trips(rng):
  x = _random(rng, (4, 6), np.float32)
  _close(jnp.fft.ifft(jnp.fft.fft(x)), x, np.complex64)
  _close(jnp.fft.irfft(jnp.fft.rfft(x), n=6), x, np.float32)
  _close(jnp.fft.irfftn(jnp.fft.rfftn(x), s=x.shape), x, np.float32)
  _close(jnp.fft.ihfft(jnp.fft.hfft(x, n=10)), x, np.complex64)


# ----------------------------------------------------------------------------
# Dtypes


@pytest.mark.parametrize("dtype,x64_mode,expected", [
    (np.int32, False, np.complex64), (np.int8, False, np.complex64),
    (np.bool_, False, np.complex64), (np.float16, False, np.complex64),
    (np.float32, False, np.complex64), (np.float64, False, np.complex64),
    (np.int32, True, np.complex64), (np.int64, True, np.complex128),
    (np.float32, True, np.complex64), (np.float64, True, np.complex128),
    (np.complex64, True, np.complex64), (np.complex128, True, np.complex128),
])
def test_fft_dtype_promotion_matches_jax(dtype, x64_mode, expected):
  x = np.arange(6).astype(dtype)
  with xjax._src.config.enable_x64(x64_mode):
    out = jnp.fft.fft(x)
    assert out.dtype == expected
    assert jnp.fft.ifftn(x).dtype == expected
  _close(out, np.fft.fft(x.astype(np.complex128)), np.complex64)


@pytest.mark.parametrize("dtype,x64_mode,rfft_dtype,irfft_dtype", [
    (np.int32, False, np.complex64, np.float32), (np.float32, True, np.complex64, np.float32),
    (np.int64, True, np.complex128, np.float64), (np.float64, True, np.complex128, np.float64),
])
def test_real_transform_dtypes_match_jax(dtype, x64_mode, rfft_dtype, irfft_dtype):
  x = np.arange(6).astype(dtype)
  with xjax._src.config.enable_x64(x64_mode):
    assert jnp.fft.rfft(x).dtype == rfft_dtype
    assert jnp.fft.irfft(x).dtype == irfft_dtype
    assert jnp.fft.hfft(x).dtype == irfft_dtype
    assert jnp.fft.ihfft(x).dtype == rfft_dtype


# ----------------------------------------------------------------------------
# Frequencies and shifts


@pytest.mark.parametrize("n", [1, 4, 5, 8])
@pytest.mark.parametrize("d", [1.0, 0.5, 3])
def test_fftfreq_and_rfftfreq_match_numpy(n, d):
  out = jnp.fft.fftfreq(n, d)
  assert out.dtype == np.float32
  _close(out, np.fft.fftfreq(n, d), np.float32)
  out = jnp.fft.rfftfreq(n, d)
  assert out.dtype == np.float32
  _close(out, np.fft.rfftfreq(n, d), np.float32)


def test_fftfreq_dtypes_match_jax(x64):
  # Dtypes recorded from jax 0.10.2 with x64 enabled.
  out = jnp.fft.fftfreq(5, dtype=jnp.int32)
  assert out.dtype == np.int32 and np.asarray(out).tolist() == [0, 0, 0, 0, 0]
  out = jnp.fft.fftfreq(5, dtype=jnp.complex64)
  assert out.dtype == np.complex64
  _close(out, np.fft.fftfreq(5).astype(np.complex64), np.complex64)
  assert jnp.fft.fftfreq(5).dtype == np.float64
  out = jnp.fft.rfftfreq(5, dtype=jnp.int32)
  assert out.dtype == np.float32  # int32 / int32 is float32, even under x64
  _close(out, [0.0, 0.2, 0.4], np.float32)
  _close(jnp.fft.fftfreq(5, d=np.float32(0.5)), np.fft.fftfreq(5, 0.5))


def test_fftfreq_device_argument():
  device = xjax.devices()[0]
  for fn in (jnp.fft.fftfreq, jnp.fft.rfftfreq):
    out = fn(6, 0.1, device=device)
    assert device in out.devices()
    _close(out, getattr(np.fft, fn.__name__)(6, 0.1), np.float32)


def test_fftfreq_device_argument_under_jit():
  # JAX places the traced result with the device_put primitive.
  device = xjax.devices()[-1]
  for fn in (jnp.fft.fftfreq, jnp.fft.rfftfreq):
    out = xjax.jit(lambda: fn(6, 0.1, device=device))()
    _close(out, getattr(np.fft, fn.__name__)(6, 0.1), np.float32)
    assert "device_put" in str(xjax.make_jaxpr(lambda: fn(6, 0.1, device=device))())


@pytest.mark.parametrize("shape,axes", [
    ((5,), None), ((5,), 0), ((4, 7), None), ((4, 7), 1), ((4, 7), (0, 1)), ((4, 7), (-1, 0)),
    ((3, 4, 5), None), ((3, 4, 5), (1,)), ((3, 4, 5), (2, 0)), ((0, 3), None)])
def test_fftshift_and_ifftshift_match_numpy(shape, axes):
  x = np.arange(np.prod(shape)).reshape(shape)
  np.testing.assert_array_equal(np.asarray(jnp.fft.fftshift(x, axes)), np.fft.fftshift(x, axes))
  np.testing.assert_array_equal(np.asarray(jnp.fft.ifftshift(x, axes)),
                                np.fft.ifftshift(x, axes))
  np.testing.assert_array_equal(np.asarray(jnp.fft.ifftshift(jnp.fft.fftshift(x, axes), axes)),
                                x)


# ----------------------------------------------------------------------------
# jit, vmap, derivatives


@pytest.mark.parametrize("name,kwargs", [
    ("fft", dict(n=5, norm="ortho")), ("ifft", dict(axis=0)), ("rfft", dict(n=9)),
    ("irfft", dict(n=7, norm="forward")), ("hfft", dict(n=6)), ("ihfft", dict(axis=0)),
    ("fft2", dict(s=(3, 3))), ("rfftn", dict(axes=(0,))), ("irfft2", dict(s=(2, 6))),
    ("ifftn", dict(s=(4, 2), axes=(1, 0), norm="backward"))])
def test_jit_matches_eager(rng, name, kwargs):
  x = _random(rng, (4, 6), _input_dtype(name, False))
  f = lambda x: getattr(jnp.fft, name)(x, **kwargs)
  _close(xjax.jit(f)(x), np.asarray(f(x)))


@pytest.mark.parametrize("name,kwargs", [
    ("fft", dict(n=5)), ("ifft", dict(axis=0)), ("rfft", dict(norm="ortho")),
    ("irfft", dict(n=7)), ("fftn", dict()), ("irfftn", dict(s=(3, 4))),
    ("fftshift", dict()), ("ifftshift", dict(axes=0))])
@pytest.mark.parametrize("in_axis", [0, 2])
def test_vmap_matches_loop(rng, name, kwargs, in_axis):
  dtype = np.complex64 if name in ("fftshift", "ifftshift") else _input_dtype(name, False)
  xs = _random(rng, (3, 4, 5), dtype)
  f = lambda x: getattr(jnp.fft, name)(x, **kwargs)
  out = xjax.vmap(f, in_axes=in_axis)(xs)
  ref = np.stack([np.asarray(f(np.take(xs, i, axis=in_axis))) for i in range(xs.shape[in_axis])])
  _close(out, ref)


@pytest.mark.parametrize("name,kwargs,order", [
    ("fft", dict(), 2), ("ifft", dict(n=6, norm="ortho"), 2), ("rfft", dict(n=5, norm="forward"), 2),
    ("irfft", dict(n=7), 2), ("hfft", dict(), 1), ("ihfft", dict(n=4), 1),
    ("fftn", dict(s=(3, 5)), 1), ("rfft2", dict(), 1), ("irfftn", dict(s=(2, 5), norm="ortho"), 1)])
def test_grads_match_finite_differences(rng, x64, name, kwargs, order):
  x = _random(rng, (3, 4), _input_dtype(name, True))
  jtu.check_grads(lambda x: getattr(jnp.fft, name)(x, **kwargs), (x,), order,
                  modes=("fwd", "rev"))


def test_grad_of_real_loss(rng, x64):
  # Parseval: sum |fft(x)|^2 = N sum x^2, so its gradient is 2 N x.
  x = _random(rng, (8,), np.float64)
  g = xjax.grad(lambda x: jnp.sum(jnp.abs(jnp.fft.fft(x)) ** 2))(x)
  _close(g, 2 * 8 * x, np.float64)


# ----------------------------------------------------------------------------
# Printed jaxprs (golden text recorded from jax 0.10.2)

FFT_JAXPR = """\
{ lambda ; a:f32[3,8]. let
    b:c64[3,8] = jit[
      name=fft
      jaxpr={ lambda ; a:f32[3,8]. let
          c:c64[3,8] = convert_element_type[new_dtype=complex64 weak_type=False] a
          b:c64[3,8] = fft[fft_lengths=(8,) fft_type=0] c
        in (b,) }
    ] a
  in (b,) }"""

RFFT_JAXPR = """\
{ lambda ; a:f32[3,8]. let
    b:c64[3,5] = jit[
      name=fft
      jaxpr={ lambda ; a:f32[3,8]. let
          b:c64[3,5] = fft[fft_lengths=(8,) fft_type=2] a
        in (b,) }
    ] a
  in (b,) }"""

IRFFT_FORWARD_JAXPR = """\
{ lambda a:f32[1]; b:c64[2,5]. let
    c:c64[2,5] = jit[
      name=_pad
      jaxpr={ lambda ; b:c64[2,5] d:i32[]. let
          e:c64[] = convert_element_type[new_dtype=complex64 weak_type=False] d
          c:c64[2,5] = pad[
            padding_config=((np.int64(0), np.int64(0), 0), (np.int64(0), np.int64(0), 0))
          ] b e
        in (c,) }
    ] b 0:i32[]
    f:f32[2,8] = jit[
      name=fft
      jaxpr={ lambda ; c:c64[2,5]. let
          f:f32[2,8] = fft[fft_lengths=(8,) fft_type=3] c
        in (f,) }
    ] c
    g:f32[] = reduce_prod[axes=(0,)] a
    h:f32[2,8] = mul f g
  in (h,) }"""

FFT2_JAXPR = """\
{ lambda ; a:f32[3,8]. let
    b:c64[3,8] = jit[
      name=fft
      jaxpr={ lambda ; a:f32[3,8]. let
          c:c64[3,8] = convert_element_type[new_dtype=complex64 weak_type=False] a
          b:c64[3,8] = fft[fft_lengths=(3, 8) fft_type=0] c
        in (b,) }
    ] a
  in (b,) }"""


def test_jaxprs_match_jax():
  x = np.zeros((3, 8), np.float32)
  assert str(xjax.make_jaxpr(jnp.fft.fft)(x)) == FFT_JAXPR
  assert str(xjax.make_jaxpr(jnp.fft.rfft)(x)) == RFFT_JAXPR
  assert str(xjax.make_jaxpr(lambda x: jnp.fft.fft2(x, axes=(0, 1)))(x)) == FFT2_JAXPR
  c = np.zeros((2, 5), np.complex64)
  assert (str(xjax.make_jaxpr(lambda x: jnp.fft.irfft(x, n=8, norm="forward"))(c))
          == IRFFT_FORWARD_JAXPR)


# ----------------------------------------------------------------------------
# Errors (messages as JAX's)

_X = np.zeros((2, 4), np.float32)


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: jnp.fft.fft([1, 2, 3]), TypeError,
     "jax.numpy.fft.fft requires ndarray or scalar arguments, got <class 'list'> at position 0."),
    (lambda: jnp.fft.fft(_X, n=0), ValueError, "Shape should be positive."),
    (lambda: jnp.fft.fft(_X, axis=(0, 1)), ValueError,
     "jax.numpy.fft.fft does not support multiple axes. Please use jax.numpy.fft.fftn. "
     "Got axis = (0, 1)."),
    (lambda: jnp.fft.hfft(_X, axis=(0,)), ValueError,
     "jax.numpy.fft.hfft does not support multiple axes. Please use jax.numpy.fft.hfftn. "
     "Got axis = (0,)."),
    (lambda: jnp.fft.fft(_X, axis=2), ValueError,
     "axis 2 is out of bounds for array of dimension 2"),
    (lambda: jnp.fft.fft(3.0), ValueError, "axis -1 is out of bounds for array of dimension 0"),
    (lambda: jnp.fft.fftn(_X, axes=(0, 0)), ValueError,
     "jax.numpy.fft.fftn does not support repeated axes. Got axes (0, 0)."),
    (lambda: jnp.fft.fftn(_X, s=(2,), axes=(0, 1)), ValueError,
     "Shape and axes have different lengths."),
    (lambda: jnp.fft.fft2(_X, axes=(0,)), ValueError,
     "jax.numpy.fft.fft2 only supports 2 axes. Got axes = (0,)."),
    (lambda: jnp.fft.fft(_X, norm="bad"), ValueError,
     'Invalid norm value bad; should be "backward","ortho" or "forward".'),
    (lambda: jnp.fft.rfft(_X.astype(np.complex64)), ValueError,
     "only real valued inputs supported for rfft"),
    (lambda: jnp.fft.rfft(_X.astype(np.float16)), ValueError,
     "RFFT input must be float32 or float64, got float16"),
    (lambda: jnp.fft.fftfreq([5]), ValueError,
     "The n argument of jax.numpy.fft.fftfreq only takes an int. Got n = [5]."),
    (lambda: jnp.fft.fftfreq(5, d=[1.0]), ValueError,
     "The d argument of jax.numpy.fft.fftfreq only takes a single value. Got d = [1.0]."),
    (lambda: jnp.fft.rfftfreq((5,)), ValueError,
     "The n argument of jax.numpy.fft.rfftfreq only takes an int. Got n = [5]."),
    (lambda: jnp.fft.fftshift([1, 2]), TypeError,
     "fftshift requires ndarray or scalar arguments, got <class 'list'> at position 0."),
])
def test_errors_match_jax(call, exc, msg):
  with pytest.raises(exc) as e:
    call()
  assert str(e.value) == msg


def test_docstring_examples_run():
  import doctest
  from xjax._src.numpy import fft as module
  result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
  assert result.attempted > 0 and result.failed == 0
