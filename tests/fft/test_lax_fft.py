"""lax.fft: the fft primitive against numpy.fft for every FftType and dtype;
jit against eager; vmap against a loop; derivatives (order 2, fwd and rev,
which checks the RFFT/IRFFT transposes); printed jaxprs and the StableHLO op
against real JAX's text; JAX's errors."""
import enum

import numpy as np
import pytest

import xjax
from xjax._src import test_util as jtu
from xjax._src.lax.fft import FftType, fft, fft_p

TOL = {np.dtype(np.float32): 2e-5, np.dtype(np.complex64): 2e-5,
       np.dtype(np.float64): 1e-12, np.dtype(np.complex128): 1e-12}


def _random(rng, shape, dtype):
  x = rng.standard_normal(shape)
  if np.issubdtype(dtype, np.complexfloating):
    x = x + 1j * rng.standard_normal(shape)
  return x.astype(dtype)


def _close(out, ref, dtype):
  tol = TOL[np.dtype(dtype)]
  scale = max(1.0, float(np.max(np.abs(ref)))) if np.size(ref) else 1.0
  np.testing.assert_allclose(np.asarray(out), ref, rtol=tol, atol=tol * scale)


def _numpy_fft(x, fft_type, lengths):
  axes = tuple(range(-len(lengths), 0))
  return {FftType.FFT: lambda: np.fft.fftn(x, axes=axes),
          FftType.IFFT: lambda: np.fft.ifftn(x, axes=axes),
          FftType.RFFT: lambda: np.fft.rfftn(x, axes=axes),
          FftType.IRFFT: lambda: np.fft.irfftn(x, s=lengths, axes=axes)}[fft_type]()


@pytest.fixture
def x64():
  with xjax._src.config.enable_x64(True):
    yield


# ----------------------------------------------------------------------------
# FftType


def test_fft_type_members_values_and_printing():
  assert issubclass(FftType, enum.IntEnum)
  assert [(m.name, m.value) for m in FftType] == [("FFT", 0), ("IFFT", 1), ("RFFT", 2),
                                                   ("IRFFT", 3)]
  assert repr(FftType.RFFT) == "<FftType.RFFT: 2>"
  assert str(FftType.IRFFT) == "3"  # IntEnum prints as its value, as in jaxprs


# ----------------------------------------------------------------------------
# Values


CASES = [  # (fft_type, input shape, fft_lengths)
    (FftType.FFT, (8,), (8,)), (FftType.FFT, (3, 7), (7,)), (FftType.FFT, (2, 3, 4), (3, 4)),
    (FftType.FFT, (2, 2, 3, 4), (2, 3, 4)), (FftType.IFFT, (6,), (6,)),
    (FftType.IFFT, (2, 3, 5), (3, 5)), (FftType.IFFT, (2, 3, 4, 2), (3, 4, 2)),
    (FftType.RFFT, (8,), (8,)), (FftType.RFFT, (3, 7), (7,)), (FftType.RFFT, (2, 3, 4), (3, 4)),
    (FftType.RFFT, (2, 5, 3, 6), (5, 3, 6)), (FftType.IRFFT, (5,), (8,)),
    (FftType.IRFFT, (3, 4), (7,)), (FftType.IRFFT, (2, 3, 3), (3, 4)),
    (FftType.IRFFT, (2, 5, 3, 4), (5, 3, 7)), (FftType.FFT, (1,), (1,)),
    (FftType.IRFFT, (1,), (1,)),
]


def _input_dtype(fft_type, double):
  if fft_type == FftType.RFFT:
    return np.float64 if double else np.float32
  return np.complex128 if double else np.complex64


@pytest.mark.parametrize("double", [False, True])
@pytest.mark.parametrize("fft_type,shape,lengths", CASES)
def test_fft_matches_numpy_eager_and_jit(rng, x64, fft_type, shape, lengths, double):
  dtype = _input_dtype(fft_type, double)
  x = _random(rng, shape, dtype)
  ref = _numpy_fft(x, fft_type, lengths)
  out_dtype = {FftType.RFFT: np.complex128 if double else np.complex64,
               FftType.IRFFT: np.float64 if double else np.float32}.get(fft_type, dtype)
  for fn in (fft, xjax.jit(fft, static_argnums=(1, 2))):
    out = fn(x, fft_type, lengths)
    assert out.dtype == out_dtype and out.shape == ref.shape
    _close(out, ref, out_dtype)


@pytest.mark.parametrize("spelling,typ", [("fft", FftType.FFT), ("FFT", FftType.FFT),
                                          ("ifft", FftType.IFFT), ("IFFT", FftType.IFFT),
                                          ("rfft", FftType.RFFT), ("RFFT", FftType.RFFT),
                                          ("irfft", FftType.IRFFT), ("IRFFT", FftType.IRFFT)])
def test_fft_accepts_jax_string_spellings(rng, spelling, typ):
  x = _random(rng, (2, 5) if typ == FftType.IRFFT else (2, 8),
              np.float32 if typ == FftType.RFFT else np.complex64)
  np.testing.assert_array_equal(np.asarray(fft(x, spelling, (8,))),
                                np.asarray(fft(x, typ, (8,))))


def test_fft_converts_real_and_integer_operands(rng, x64):
  ints = np.arange(8, dtype=np.int32)
  out = fft(ints, "fft", (8,))
  assert out.dtype == np.complex64
  _close(out, np.fft.fft(ints), np.complex64)
  assert fft(np.arange(8, dtype=np.int64), "fft", (8,)).dtype == np.complex128
  assert fft(np.arange(8.0), "fft", (8,)).dtype == np.complex128
  out = fft(ints, "rfft", (8,))
  assert out.dtype == np.complex64
  _close(out, np.fft.rfft(ints), np.complex64)
  real_half = np.array([4.0, 1.0, 0.0], np.float32)
  out = fft(real_half, "irfft", (4,))
  assert out.dtype == np.float32
  _close(out, np.fft.irfft(real_half, 4), np.float32)


def test_fft_without_x64_gives_complex64(rng):
  out = fft(np.arange(8.0), "fft", (8,))
  assert out.dtype == np.complex64


def test_fft_of_no_axes_returns_converted_operand():
  x = np.arange(4, dtype=np.float32)
  out = fft(x, FftType.FFT, ())
  assert out.dtype == np.complex64
  np.testing.assert_array_equal(np.asarray(out), x.astype(np.complex64))
  assert fft(x, FftType.RFFT, ()).dtype == np.float32


def test_ifft_inverts_fft_and_irfft_inverts_rfft(rng):
  x = _random(rng, (3, 4, 6), np.float32)
  _close(fft(fft(x, "fft", (4, 6)), "ifft", (4, 6)), x, np.complex64)
  _close(fft(fft(x, "rfft", (4, 6)), "irfft", (4, 6)), x, np.float32)


# ----------------------------------------------------------------------------
# vmap


@pytest.mark.parametrize("fft_type,shape,lengths", [
    (FftType.FFT, (3, 8), (8,)), (FftType.IFFT, (2, 3, 4), (3, 4)),
    (FftType.RFFT, (3, 6), (6,)), (FftType.IRFFT, (2, 3, 4), (3, 6))])
@pytest.mark.parametrize("in_axis", [0, 1, -1])
def test_fft_vmap_matches_loop(rng, fft_type, shape, lengths, in_axis):
  dtype = _input_dtype(fft_type, False)
  xs = _random(rng, (4, *shape), dtype)
  xs = np.moveaxis(xs, 0, in_axis)
  f = lambda x: fft(x, fft_type, lengths)
  out = xjax.vmap(f, in_axes=in_axis)(xs)
  ref = np.stack([np.asarray(f(np.take(xs, i, axis=in_axis))) for i in range(4)])
  _close(out, ref, ref.dtype)
  out = xjax.jit(xjax.vmap(f, in_axes=in_axis, out_axes=1))(xs)
  _close(out, np.moveaxis(ref, 0, 1), ref.dtype)


def test_fft_vmap_of_vmap(rng):
  xs = _random(rng, (2, 3, 8), np.complex64)
  out = xjax.vmap(xjax.vmap(lambda x: fft(x, "fft", (8,))))(xs)
  _close(out, np.fft.fft(xs), np.complex64)


# ----------------------------------------------------------------------------
# Derivatives


GRAD_CASES = [
    (FftType.FFT, (3, 8), (8,)), (FftType.IFFT, (5,), (5,)), (FftType.FFT, (2, 3, 4), (2, 3, 4)),
    (FftType.RFFT, (3, 8), (8,)), (FftType.RFFT, (2, 7), (7,)), (FftType.RFFT, (2, 3, 4), (3, 4)),
    (FftType.IRFFT, (3, 5), (8,)), (FftType.IRFFT, (2, 4), (7,)), (FftType.IRFFT, (3, 3), (3, 5)),
]


@pytest.mark.parametrize("fft_type,shape,lengths", GRAD_CASES)
def test_fft_grads_match_finite_differences(rng, x64, fft_type, shape, lengths):
  x = _random(rng, shape, _input_dtype(fft_type, True))
  jtu.check_grads(lambda x: fft(x, fft_type, lengths), (x,), 2, modes=("fwd", "rev"))


@pytest.mark.parametrize("fft_type,shape,lengths", GRAD_CASES)
def test_fft_vjp_is_the_adjoint(rng, x64, fft_type, shape, lengths):
  # <ct, f(x)> == <f^T(ct), x> in the real inner product Re(sum(a * b)) JAX uses.
  x = _random(rng, shape, _input_dtype(fft_type, True))
  f = lambda x: fft(x, fft_type, lengths)
  y, f_vjp = xjax.vjp(f, x)
  ct = _random(rng, y.shape, y.dtype)
  ct_x, = f_vjp(ct)
  assert ct_x.dtype == x.dtype and ct_x.shape == x.shape
  lhs = np.real(np.sum(ct * np.asarray(y)))
  rhs = np.real(np.sum(np.asarray(ct_x) * x))
  np.testing.assert_allclose(lhs, rhs, rtol=1e-10, atol=1e-10)


def test_fft_jvp_is_the_transform_of_the_tangent(rng, x64):
  x = _random(rng, (2, 6), np.float64)
  t = _random(rng, (2, 6), np.float64)
  y, y_dot = xjax.jvp(lambda x: fft(x, "rfft", (6,)), (x,), (t,))
  _close(y, np.fft.rfft(x), np.complex128)
  _close(y_dot, np.fft.rfft(t), np.complex128)


# ----------------------------------------------------------------------------
# Printed jaxprs and lowering (golden text recorded from jax 0.10.2)

LAX_IFFT_JAXPR = """\
{ lambda ; a:c64[2,5]. let
    b:c64[2,5] = jit[
      name=fft
      jaxpr={ lambda ; a:c64[2,5]. let
          b:c64[2,5] = fft[fft_lengths=(2, 5) fft_type=1] a
        in (b,) }
    ] a
  in (b,) }"""


def test_fft_jaxpr_matches_jax():
  c = np.zeros((2, 5), np.complex64)
  assert str(xjax.make_jaxpr(lambda x: fft(x, "ifft", (2, 5)))(c)) == LAX_IFFT_JAXPR


def test_fft_lowers_to_stablehlo_fft_as_jax_does():
  # JAX 0.10.2's as_text: stablehlo.fft %arg0, type = IRFFT, length = [2, 8] :
  # (tensor<3x2x5xcomplex<f32>>) -> tensor<3x2x8xf32>
  c = np.zeros((3, 2, 5), np.complex64)
  text = xjax.jit(lambda x: fft(x, "irfft", (2, 8))).lower(c).as_text()
  assert ('stablehlo.fft %arg0, type = IRFFT, length = [2, 8] : '
          '(tensor<3x2x5xcomplex<f32>>) -> tensor<3x2x8xf32>') in text


def test_fft_primitive_params():
  jaxpr = xjax.make_jaxpr(lambda x: fft(x, "rfft", (8,)))(np.zeros(8, np.float32))
  eqn = jaxpr.jaxpr.eqns[0].params["jaxpr"].jaxpr.eqns[0]
  assert eqn.primitive is fft_p and fft_p.name == "fft"
  assert eqn.params == {"fft_type": FftType.RFFT, "fft_lengths": (8,)}
  assert type(eqn.params["fft_type"]) is FftType


# ----------------------------------------------------------------------------
# Errors (messages as JAX's)


@pytest.mark.parametrize("args,exc,msg", [
    ((np.zeros(8, np.float32), "foo", (8,)), ValueError, "Unknown FFT type 'foo'"),
    ((np.zeros(8, np.float32), "Fft", (8,)), ValueError, "Unknown FFT type 'Fft'"),
    ((np.zeros(8, np.float32), 3, (8,)), TypeError, "Unknown FFT type value '3'"),
    ((np.zeros(8, np.float32), "rfft", (4,)), ValueError,
     "RFFT input shape (8,) minor dimensions must be equal to fft_lengths (4,)"),
    ((np.zeros(8, np.complex64), "rfft", (8,)), ValueError,
     "only real valued inputs supported for rfft"),
    ((np.zeros(8, np.float32), "irfft", (3, 14)), ValueError,
     "FFT input shape (8,) must have at least as many input dimensions as fft_lengths (3, 14)."),
    ((np.zeros(8, np.float32), "fft", (8, 8)), ValueError,
     "FFT input shape (8,) must have at least as many input dimensions as fft_lengths (8, 8)."),
    ((np.zeros(8, np.float16), "rfft", (8,)), ValueError,
     "RFFT input must be float32 or float64, got float16"),
    ((np.zeros((2, 5), np.complex64), "irfft", (3, 8)), ValueError,
     "IRFFT input shape (2, 5) minor dimensions must be equal to all except the last "
     "fft_length, got fft_lengths=(3, 8)"),
    ((np.zeros((2, 5), np.complex64), "irfft", (2, 7)), ValueError,
     "IRFFT requires innermost dimension to be compatible with fft_length[-1]/2+1. "
     "Got: 5 but fft_length is 2, 7."),
    ((np.zeros(8, np.complex64), "fft", (7,)), ValueError,
     "FFT input shape (8,) minor dimensions must be equal to fft_lengths (7,)"),
])
def test_fft_errors_match_jax(args, exc, msg):
  with pytest.raises(exc) as e:
    fft(*args)
  assert str(e.value) == msg


def test_fft_lengths_must_be_hashable():
  with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
    fft(np.zeros(8, np.float32), "fft", [8])


@pytest.mark.parametrize("x,typ,msg", [
    (np.zeros(8, np.float32), FftType.FFT, "FFT input must be complex64 or complex128, got float32"),
    (np.zeros(8, np.float32), FftType.IRFFT,
     "IRFFT input must be complex64 or complex128, got float32"),
])
def test_fft_primitive_dtype_errors_match_jax(x, typ, msg):
  with pytest.raises(ValueError) as e:
    fft_p.bind(x, fft_type=typ, fft_lengths=(8,))
  assert str(e.value) == msg


def test_docstring_examples_run():
  import doctest
  from xjax._src.lax import fft as module
  result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
  assert result.attempted > 0 and result.failed == 0
