"""jax.scipy.fft's DCTs: dct, dctn, idct, idctn against scipy.fft for each norm,
n/s/axes (padding and cropping) and dtype; round trips; jit, vmap and
derivatives; JAX's errors (only type 2 exists)."""
import numpy as np
import pytest
import scipy.fft

import xjax
import xjax.scipy.fft as jsf
from xjax._src import test_util as jtu

NORMS = [None, "backward", "ortho"]
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


def test_namespace():
  assert sorted(n for n in dir(jsf) if not n.startswith("_")) == ["dct", "dctn", "idct", "idctn"]
  import xjax.scipy
  assert xjax.scipy.fft is jsf


@pytest.mark.parametrize("name", ["dct", "idct"])
@pytest.mark.parametrize("norm", [None, "ortho"])
@pytest.mark.parametrize("n,axis", [(None, -1), (None, 0), (None, 1), (7, -1), (2, -1), (5, 0),
                                    (1, 1)])
def test_1d_matches_scipy(rng, name, norm, n, axis):
  x = _random(rng, (3, 4, 6), np.float32)
  ref = getattr(scipy.fft, name)(x, n=n, axis=axis, norm=norm)
  out = getattr(jsf, name)(x, n=n, axis=axis, norm=norm)
  assert out.dtype == np.float32 and out.shape == ref.shape
  _close(out, ref)


@pytest.mark.parametrize("name", ["dctn", "idctn"])
@pytest.mark.parametrize("norm", [None, "ortho"])
@pytest.mark.parametrize("s,axes", [(None, None), (None, (0, 2)), (None, (1,)), ((5, 3), None),
                                    ((2, 7), (2, 0)), ((2, 3, 8), None), (None, (2, 0, 1)),
                                    ((4, 4, 3, 2), None), (None, (-1,))])
def test_nd_matches_scipy(rng, name, norm, s, axes):
  x = _random(rng, (2, 3, 4, 6), np.float32)
  np_axes = tuple(range(4 - len(s), 4)) if axes is None and s is not None else axes
  ref = getattr(scipy.fft, name)(x, s=s, axes=np_axes, norm=norm)
  out = getattr(jsf, name)(x, s=s, axes=axes, norm=norm)
  assert out.dtype == np.float32 and out.shape == ref.shape
  _close(out, ref)


@pytest.mark.parametrize("name", ["dct", "idct", "dctn", "idctn"])
def test_backward_norm_is_the_default(rng, name):
  x = _random(rng, (3, 5), np.float32)
  _close(getattr(jsf, name)(x, norm="backward"), getattr(scipy.fft, name)(x, norm="backward"))


def test_dctn_takes_an_int_size_and_an_int_axis(rng):
  x = _random(rng, (3, 5), np.float32)
  _close(jsf.dctn(x, s=3), scipy.fft.dctn(x, s=3, axes=1))
  _close(jsf.dctn(x, axes=0), scipy.fft.dctn(x, axes=0))
  _close(jsf.idctn(x, s=7, axes=0), scipy.fft.idctn(x, s=7, axes=0))


@pytest.mark.parametrize("name", ["dct", "idct", "dctn", "idctn"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.complex64, np.int32])
def test_dtypes_match_scipy(rng, x64, name, dtype):
  x = _random(rng, (4, 5), dtype)
  out = getattr(jsf, name)(x, norm="ortho")
  expected = {np.int32: np.float32}.get(dtype, dtype)  # JAX: int32 -> float32
  assert out.dtype == expected
  _close(out, getattr(scipy.fft, name)(x.astype(np.complex128 if dtype in (
      np.complex64, np.complex128) else np.float64), norm="ortho"), expected)


def test_dct_without_x64_computes_in_float32():
  x = np.arange(6.0)
  assert jsf.dct(x).dtype == np.float32
  _close(jsf.dct(x), scipy.fft.dct(x), np.float32)


@pytest.mark.parametrize("norm", NORMS)
def test_idct_inverts_dct(rng, norm):
  x = _random(rng, (3, 7), np.float32)
  _close(jsf.idct(jsf.dct(x, norm=norm), norm=norm), x)
  _close(jsf.idctn(jsf.dctn(x, norm=norm), norm=norm), x)
  y = _random(rng, (2, 4, 5), np.float32)
  _close(jsf.idctn(jsf.dctn(y, norm=norm), norm=norm), y)


def test_jit_matches_eager(rng):
  x = _random(rng, (3, 6), np.float32)
  for f in (lambda x: jsf.dct(x, n=4, norm="ortho"), lambda x: jsf.idct(x, axis=0),
            lambda x: jsf.dctn(x, s=(4, 5)), lambda x: jsf.idctn(x, norm="ortho")):
    _close(xjax.jit(f)(x), np.asarray(f(x)))


@pytest.mark.parametrize("name", ["dct", "idct", "dctn", "idctn"])
@pytest.mark.parametrize("in_axis", [0, 2])
def test_vmap_matches_loop(rng, name, in_axis):
  xs = _random(rng, (3, 4, 5), np.float32)
  f = lambda x: getattr(jsf, name)(x, norm="ortho")
  out = xjax.vmap(f, in_axes=in_axis)(xs)
  ref = np.stack([np.asarray(f(np.take(xs, i, axis=in_axis))) for i in range(xs.shape[in_axis])])
  _close(out, ref)


@pytest.mark.parametrize("f,order", [
    (lambda x: jsf.dct(x), 2), (lambda x: jsf.idct(x, norm="ortho", n=6), 2),
    (lambda x: jsf.dctn(x, norm="ortho"), 1), (lambda x: jsf.idctn(x), 1)],
    ids=["dct", "idct", "dctn", "idctn"])
def test_grads_match_finite_differences(rng, x64, f, order):
  x = _random(rng, (3, 5), np.float64)
  jtu.check_grads(f, (x,), order, modes=("fwd", "rev"))


# Recorded from jax 0.10.2: jax.make_jaxpr(lambda x: jax.scipy.fft.dct(x, norm="ortho"))(f32[4]).
DCT_ORTHO_JAXPR = """\
{ lambda ; a:f32[4]. let
    b:f32[2] = slice[limit_indices=(4,) start_indices=(0,) strides=(2,)] a
    c:f32[2] = slice[limit_indices=(4,) start_indices=(1,) strides=(2,)] a
    d:f32[2] = rev[dimensions=(0,)] c
    e:f32[4] = concatenate[dimension=0] b d
    f:c64[4] = jit[
      name=fft
      jaxpr={ lambda ; e:f32[4]. let
          g:c64[4] = convert_element_type[new_dtype=complex64 weak_type=False] e
          f:c64[4] = fft[fft_lengths=(4,) fft_type=0] g
        in (f,) }
    ] e
    _:f32[4] = real f
    h:f32[4] = iota[dimension=0 dtype=float32 shape=(4,) sharding=None]\x20
    i:c64[4] = convert_element_type[new_dtype=complex64 weak_type=False] h
    j:c64[4] = mul -1.5707963705062866j:c64[] i
    k:c64[4] = div j (4+0j):c64[]
    l:c64[4] = exp k
    m:c64[4] = mul f l
    n:f32[4] = real m
    o:f32[4] = mul 2.0:f32[] n
    p:f32[1] = broadcast_in_dim 4.0:f32[]
    q:f32[3] = broadcast_in_dim 2.0:f32[]
    r:f32[4] = concatenate[dimension=0] p q
    s:f32[4] = mul r 4.0:f32[]
    t:f32[4] = sqrt s
    u:f32[4] = div o t
  in (u,) }"""


def test_dct_jaxpr_matches_jax():
  x = np.zeros((4,), np.float32)
  assert str(xjax.make_jaxpr(lambda x: jsf.dct(x, norm="ortho"))(x)) == DCT_ORTHO_JAXPR


_X = np.zeros((2, 3, 4), np.float32)


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: jsf.dct(_X, type=3), NotImplementedError, "Only DCT type 2 is implemented."),
    (lambda: jsf.idctn(_X, type=1), NotImplementedError, "Only DCT type 2 is implemented."),
    (lambda: jsf.dct(_X, norm="forward"), ValueError,
     "jax.scipy.fft.dct: norm='forward' is not implemented"),
    (lambda: jsf.dctn(_X, norm="forward"), ValueError,
     "jax.scipy.fft.dctn: norm='forward' is not implemented"),
    (lambda: jsf.idct(_X, norm="forward"), ValueError,
     "jax.scipy.fft.idct: norm='forward' is not implemented"),
    (lambda: jsf.idctn(_X, norm="forward"), ValueError,
     "jax.scipy.fft.idctn: norm='forward' is not implemented"),
    (lambda: jsf.dct([1, 2]), TypeError,
     "dct requires ndarray or scalar arguments, got <class 'list'> at position 0."),
    (lambda: jsf.dctn(_X, s=(3, 3, 3, 3)), ValueError,
     "s must have at most x.ndim (3) elements, got 4"),
    (lambda: jsf.dctn(_X, axes=(0, 0)), ValueError, "repeated axis: (0, 0)"),
    (lambda: jsf.dctn(_X, axes=(0, 5)), ValueError,
     "axis 5 is out of bounds for array of dimension 3"),
    (lambda: jsf.dct(_X, axis=3), ValueError, "axis 3 is out of bounds for array of dimension 3"),
    (lambda: jsf.dct(np.float32(3.0)), ValueError,
     "axis -1 is out of bounds for array of dimension 0"),
])
def test_errors_match_jax(call, exc, msg):
  with pytest.raises(exc) as e:
    call()
  assert str(e.value) == msg


def test_docstring_examples_run():
  import doctest
  from xjax._src.scipy import fft as module
  result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
  assert result.attempted > 0 and result.failed == 0
