"""expi, exp1, expn, sici, fresnel, dawsn, erfcx and wofz against scipy.special:
values over the domain (edge values included) in float32 and float64, the
complex plane for wofz, jit vs eager, vmap, derivatives (the custom JVPs)
against finite differences, dtypes and errors."""
import numpy as np
import pytest
import scipy.special as osp

import xjax
import xjax.numpy as jnp
from xjax._src.config import enable_x64
import xjax.scipy.special as xsp
from xjax.test_util import check_grads

# Huge float64 points and reference values deliberately overflow to inf in float32.
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")

EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan]


def _points(*segments):
  """Points on each (lo, hi, n) segment, plus the edge values."""
  return np.concatenate([np.linspace(lo, hi, n) for lo, hi, n in segments] + [EDGES])


POINTS = {
    # both signs, the branch points of the rational fits, and far out
    "expi": _points((-60, -0.01, 15), (0.01, 2, 9), (2.1, 90, 25), (100, 700, 4))
    .tolist() + [1e-10, 1e10, -1e3],
    "exp1": _points((0.001, 1, 9), (1.05, 40, 15), (50, 700, 4)).tolist() + [1e-10, -1.0, 1e10],
    "dawsn": _points((-8, 8, 33), (10, 1e4, 3)).tolist() + [3.25, 6.25, 1e-20, 2e9, -1e15],
    "erfcx": _points((-26, 8, 25), (8.5, 30, 12), (40, 1e6, 4)).tolist()
    + [5.0, 9.0, 26.0, 1e-20, 1e300],
    "sici": _points((-30, 30, 41), (40, 1e4, 5)).tolist() + [4.0, 8.0, 1e-20, 2e9, -3e9],
    "fresnel": _points((-12, 12, 41), (15, 4e4, 6)).tolist() + [1.6, 1e-20, 1e6, -1e8],
}
POINTS = {k: np.array(v) for k, v in POINTS.items()}

# float32 relative tolerance (the float64 one is 1e-13 unless listed).
RTOL32 = {"expi": 2e-5, "exp1": 2e-5, "dawsn": 2e-6, "erfcx": 2e-6, "sici": 1e-5, "fresnel": 2e-5}
RTOL64 = {"expi": 1e-12, "exp1": 1e-13, "sici": 1e-13}


def _reference(name, x, dtype):
  """scipy's value computed in float64, then rounded to `dtype`, as a tuple of arrays."""
  with np.errstate(all="ignore"):
    out = getattr(osp, name)(x.astype(dtype).astype(np.float64))
  out = out if isinstance(out, tuple) else (out,)
  return tuple(np.asarray(o).astype(dtype) for o in out)


def _assert_matches(got, expected, rtol, atol):
  got, expected = np.asarray(got), np.asarray(expected)
  assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
  np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
  np.testing.assert_array_equal(np.isinf(got) & (got > 0), np.isinf(expected) & (expected > 0))
  np.testing.assert_array_equal(np.isinf(got) & (got < 0), np.isinf(expected) & (expected < 0))
  finite = np.isfinite(expected)
  np.testing.assert_allclose(got[finite], expected[finite], rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(POINTS))
def test_unary_values_match_scipy(name, x64):
  x = POINTS[name]
  for dtype, rtol, atol in [(np.float64, RTOL64.get(name, 1e-13), 1e-300),
                            (np.float32, RTOL32[name], 1e-37)]:
    got = xjax.jit(getattr(xsp, name))(x.astype(dtype))
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, _reference(name, x, dtype), strict=True):
      # Where these oscillating functions are evaluated far out, only the
      # absolute error is small (the argument of sin/cos carries |x| eps).
      far = np.abs(x) > 1e3 if name in ("sici", "fresnel") else np.zeros(x.shape, bool)
      _assert_matches(np.asarray(g)[~far], e[~far], rtol, atol)
      far_atol = 1e-7 if dtype == np.float64 else 1e-4
      np.testing.assert_allclose(np.asarray(g)[far], e[far], atol=far_atol)


def test_expi_edges_zero_and_overflow(x64):
  # At 0 and +-inf this follows scipy (JAX 0.10.2 returns NaN there). Near the
  # zero at 0.3725 the error is absolute (cancellation in gamma + log x + ...).
  # Past the overflow of exp(x) scipy returns inf, but Ei(x) ~ exp(x)/x (1 + 1/x + 2/x^2 + ...)
  # is finite a little longer.
  x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.3725, 0.37250741078136663, 710.0])
  got = np.asarray(xjax.jit(xsp.expi)(x))
  np.testing.assert_array_equal(got[:5], [-np.inf, -np.inf, np.inf, 0.0, np.nan])
  np.testing.assert_allclose(got[5:7], osp.expi(x[5:7]), rtol=0, atol=2e-16)
  series = sum(np.prod(np.arange(1, k + 1)) / 710.0 ** k for k in range(8))
  np.testing.assert_allclose(got[7], np.exp(710.0 - np.log(710.0)) * series, rtol=1e-13)
  with enable_x64(False):
    got = xjax.jit(xsp.expi)(np.array([90.0, 95.0], np.float32))
    np.testing.assert_allclose(got[0], osp.expi(90.0), rtol=1e-5)
    assert got[1] == np.inf


def test_expn_values_match_scipy(x64):
  n = np.array([0, 1, 2, 3, 5, 10, 30, 50, 4999, 5001, 7000])[:, None]
  x = np.array([0.0, 1e-8, 0.1, 0.5, 1.0, 1.0001, 1.5, 3, 10, 50, 200, 700, 1e4,
                np.inf, np.nan, -1.0])[None, :]
  for dtype, rtol in [(np.float64, 2e-13), (np.float32, 5e-6)]:
    got = xjax.jit(xsp.expn)(n.astype(dtype), x.astype(dtype))
    assert got.shape == (n.size, x.size)
    with np.errstate(all="ignore"):
      expected = osp.expn(n, x.astype(dtype).astype(np.float64)).astype(dtype)
    # scipy leaves subnormal results that XLA flushes to zero.
    expected[np.abs(expected) < np.finfo(dtype).tiny] = 0
    _assert_matches(got, expected, rtol, 0)
  got = xsp.expn(np.array([-1.0, 2.0]), np.array([1.0, -1.0]))
  assert np.isnan(np.asarray(got)).all()
  # scipy switches to an asymptotic expansion for n > 50 that is good to ~1e-7 here;
  # the value below is by quadrature of int_1^inf exp(-50 t) / t^100 dt (scipy.integrate.quad).
  np.testing.assert_allclose(xsp.expn(100, 50.0), 1.2915478777847483e-24, rtol=1e-13)
  np.testing.assert_allclose(xsp.expn(100, 50.0), osp.expn(100, 50.0), rtol=2e-7)
  # E_0(0) = inf, E_n(0) = 1/(n-1) for n >= 2 (JAX 0.10.2 gives 1/n).
  np.testing.assert_array_equal(xsp.expn(np.arange(5.0), 0.0), [np.inf, np.inf, 1, 0.5, 1 / 3])


def test_erfcx_avoids_overflow_and_rounding(x64):
  # exp(x^2) erfc(x) naively overflows past x = 26.6 and loses ~x^2 ulps before.
  x = np.array([5.3, 12.7, 20.1, 26.3, 26.7, 27.0, 1e3, 1e10])
  np.testing.assert_allclose(xsp.erfcx(x), osp.erfcx(x), rtol=1e-14)
  with enable_x64(False):
    x32 = np.array([4.9, 5.1, 8.9, 9.1, 9.3, 9.5, 50.0], np.float32)
    np.testing.assert_allclose(xsp.erfcx(x32), osp.erfcx(x32.astype(np.float64)), rtol=1e-6)


def _complex_grid():
  r = np.concatenate([-np.logspace(-3, 2.5, 12)[::-1], [0.0], np.logspace(-3, 2.5, 12)])
  return (r[:, None] + 1j * r[None, :]).ravel()


def test_wofz_matches_scipy_on_the_complex_plane(x64):
  z = _complex_grid()
  for dtype, rtol in [(np.complex128, 1e-12), (np.complex64, 2e-6)]:
    got = np.asarray(xjax.jit(xsp.wofz)(z.astype(dtype)))
    assert got.dtype == dtype
    with np.errstate(all="ignore"):
      expected = osp.wofz(z.astype(dtype).astype(np.complex128))
    big = ~np.isfinite(expected.astype(dtype))  # overflows in this precision (lower half plane)
    np.testing.assert_array_equal(~np.isfinite(got), big)
    # Below the real axis w ~ 2 exp(-z^2) has condition number ~2|z|^2: the
    # rounding of z^2 alone costs that many ulps.
    eps = np.finfo(dtype).eps
    cond = np.where(z.imag < 0, 2 * np.abs(z) ** 2, 1.0)
    err = np.abs(got[~big] - expected[~big])
    assert (err <= (rtol + 4 * eps * cond[~big]) * np.abs(expected[~big])).all()


def test_wofz_edge_values(x64):
  z = np.array([0, 1e200, 1e200j, 1e10 + 1e10j, -1e200j, 5 - 30j, np.inf, -np.inf, np.nan,
                complex(0, np.nan)])
  got = np.asarray(xsp.wofz(z))
  expected = osp.wofz(z)
  np.testing.assert_allclose(got[:4], expected[:4], rtol=5e-14)  # Weideman: w(0) = 1 + 3e-14
  assert np.isinf(got[4].real) and got[4].imag == 0
  assert np.isinf(got[5].real) and np.isinf(got[5].imag)
  np.testing.assert_array_equal(got[6:8], [0, 0])
  assert np.isnan(got[8:]).all()


def test_wofz_dtypes_and_complex_erfcx(x64):
  wofz_dtype = lambda z: xjax.eval_shape(xsp.wofz, z).dtype
  assert wofz_dtype(1.0) == wofz_dtype(2) == np.complex128
  assert wofz_dtype(np.float32(1.0)) == wofz_dtype(np.int32(2)) == np.complex64  # as in JAX
  with enable_x64(False):
    assert wofz_dtype(1.0) == wofz_dtype(np.array([1, 2])) == np.complex64
  # erfcx(z) = w(iz) for complex z; real input to wofz is promoted to complex.
  z = np.array([0.5 + 0.3j, -2 + 1j, 3 - 4j, -1e3 + 0.1j])
  np.testing.assert_allclose(xjax.jit(xsp.erfcx)(z), osp.erfcx(z), rtol=1e-12)
  x = np.array([0.0, 1.5, -30.0, 2.0])
  np.testing.assert_allclose(xjax.jit(xsp.wofz)(x), osp.wofz(x), rtol=2e-13, atol=2e-15)


def _out_dtypes(f, *args):
  out = xjax.eval_shape(f, *args)
  return tuple(o.dtype for o in out) if isinstance(out, tuple) else out.dtype


def test_dtypes_and_promotion(x64):
  for f in (xsp.expi, xsp.exp1, xsp.dawsn, xsp.erfcx, xsp.sici, xsp.fresnel):
    one = (lambda d: (d, d)) if f in (xsp.sici, xsp.fresnel) else (lambda d: d)
    assert _out_dtypes(f, 2) == one(np.float64)
    assert _out_dtypes(f, np.int32(2)) == one(np.float32)  # as in JAX
    assert _out_dtypes(f, np.float32(2)) == one(np.float32)
  assert _out_dtypes(xsp.expn, 2, np.float32(1.5)) == np.float32
  assert xjax.eval_shape(xsp.expn, np.arange(3), np.ones((2, 1))).shape == (2, 3)
  # Half precisions are computed in float32 and cast back, as in JAX.
  x = np.array([0.5, 2.0])
  for f in (xsp.dawsn, xsp.erfcx, lambda t: xsp.fresnel(t)[1]):
    out = xjax.jit(f)(x.astype(np.float16))
    assert out.dtype == np.float16
    np.testing.assert_allclose(out, xjax.jit(f)(x), rtol=2e-3)
  with enable_x64(False):
    assert _out_dtypes(xsp.expi, 2) == np.float32


def test_jit_matches_eager_and_vmap_matches_loop():
  x = np.array([-3.0, 0.2, 1.0, 2.5, 7.0, 40.0], np.float32)
  for f in (xsp.expi, xsp.exp1, xsp.dawsn, xsp.erfcx, xsp.sici, xsp.fresnel):
    eager, jitted = f(x), xjax.jit(f)(x)
    for e, j in zip(*(o if isinstance(o, tuple) else (o,) for o in (eager, jitted)), strict=True):
      np.testing.assert_allclose(j, e, rtol=1e-6, equal_nan=True)
  n = np.array([0.0, 1, 2, 3, 6000, 4], np.float32)
  expn = xjax.jit(xsp.expn)
  np.testing.assert_allclose(expn(n, np.abs(x)), xsp.expn(n, np.abs(x)), rtol=1e-6)
  # vmap (a batched while_loop predicate) against one call per element
  looped = np.stack([expn(a, b) for a, b in zip(n, np.abs(x))])
  np.testing.assert_allclose(xjax.vmap(xsp.expn)(n, np.abs(x)), looped, rtol=1e-6)
  np.testing.assert_allclose(xjax.vmap(xsp.expn, in_axes=(None, 0))(2.0, np.abs(x)),
                             [expn(2.0, b) for b in np.abs(x)], rtol=1e-6)
  xs = np.stack([x, x[::-1]])
  si, ci = xjax.vmap(xsp.sici)(xs)
  np.testing.assert_allclose(ci, np.stack([xjax.jit(xsp.sici)(r)[1] for r in xs]), rtol=1e-6)
  np.testing.assert_allclose(xjax.vmap(xsp.expi)(xs), np.stack([xjax.jit(xsp.expi)(r) for r in xs]),
                             rtol=1e-6)
  z = (x + 1j * x[::-1]).astype(np.complex64)
  np.testing.assert_allclose(xjax.vmap(xsp.wofz)(z), xjax.jit(xsp.wofz)(z), rtol=1e-6)


@pytest.mark.parametrize("f,x,order", [
    # order 2 of exp1 and of expn(0, .) use E_0 and E_{-1} (NaN in JAX 0.10.2)
    (xsp.expi, -2.5, 1), (xsp.expi, 0.7, 2), (xsp.expi, 3.0, 1), (xsp.expi, 70.0, 1),
    (xsp.exp1, 0.4, 2), (xsp.exp1, 3.0, 1), (lambda x: xsp.expn(3, x), 0.6, 1),
    (lambda x: xsp.expn(3, x), 2.0, 1), (lambda x: xsp.expn(0, x), 1.5, 2),
    (xsp.dawsn, 0.8, 2), (xsp.dawsn, -5.0, 2), (xsp.erfcx, -1.0, 2), (xsp.erfcx, 30.0, 2),
    (xsp.sici, 1.5, 2), (xsp.sici, -9.0, 2), (xsp.fresnel, 0.9, 2), (xsp.fresnel, 3.3, 2),
], ids=lambda v: getattr(v, "__name__", "")[:8] if callable(v) else str(v))
def test_grads_match_finite_differences(f, x, order, x64):
  check_grads(xjax.jit(f), (jnp.asarray(x, jnp.float64),), order=order, atol=1e-6, rtol=1e-6,
              eps=1e-5 * max(1.0, abs(x)))


def test_wofz_grad_matches_finite_differences(x64):
  check_grads(xjax.jit(xsp.wofz), (jnp.asarray(0.7 + 0.4j),), order=1, modes=("fwd",),
              atol=1e-7, rtol=1e-7)
  check_grads(xjax.jit(xsp.wofz), (jnp.asarray(-1.2 - 0.8j),), order=1, modes=("fwd",),
              atol=1e-7, rtol=1e-7)


def test_custom_jvp_rules(x64):
  # The derivatives are the closed forms JAX uses, exactly.
  x = 1.7
  np.testing.assert_allclose(xjax.grad(xsp.exp1)(x), -np.exp(-x) / x, rtol=1e-14)
  np.testing.assert_allclose(xjax.grad(xsp.expi)(x), np.exp(x) / x, rtol=1e-14)
  np.testing.assert_allclose(xjax.grad(lambda t: xsp.expn(4, t))(x), -osp.expn(3, x), rtol=1e-13)
  np.testing.assert_allclose(xjax.grad(xsp.dawsn)(x), 1 - 2 * x * osp.dawsn(x), rtol=1e-14)
  np.testing.assert_allclose(xjax.grad(xsp.erfcx)(x), 2 * x * osp.erfcx(x) - 2 / np.sqrt(np.pi),
                             rtol=1e-13)
  ds, dc = xjax.jacfwd(xsp.fresnel)(x)
  np.testing.assert_allclose([ds, dc], [np.sin(np.pi * x * x / 2), np.cos(np.pi * x * x / 2)],
                             rtol=1e-14)
  dsi, dci = xjax.jacfwd(xsp.sici)(x)
  np.testing.assert_allclose([dsi, dci], [np.sin(x) / x, np.cos(x) / x], rtol=1e-14)
  # E_n'(x) = -E_{n-1}(x) also at 0 and from a Python scalar; E_1'' = exp(-x)(1/x + 1/x^2).
  assert xjax.grad(lambda t: xsp.expn(2.0, t))(0.0) == -np.inf
  np.testing.assert_allclose(xjax.grad(xjax.grad(xsp.exp1))(0.5), np.exp(-0.5) * 6, rtol=1e-14)
  # n is not differentiated (JAX: a nondiff argument).
  np.testing.assert_array_equal(xjax.grad(xsp.expn, argnums=0)(3.0, x), 0.0)
  # fresnel's derivative far out uses the reduced argument of sin(pi x^2 / 2).
  big = 1000.5
  np.testing.assert_allclose(xjax.jacfwd(xsp.fresnel)(big)[1], np.cos(np.pi / 8), atol=1e-9)


def test_errors():
  for f in (xsp.expi, xsp.exp1, xsp.dawsn):
    with pytest.raises(ValueError, match=f"{f.__name__} does not support complex-valued inputs"):
      f(1 + 1j)
  with pytest.raises(ValueError, match="expn does not support complex-valued inputs"):
    xsp.expn(1, 1j)
  with pytest.raises(ValueError, match="Argument `x` to sici must be real-valued. Got dtype comp"):
    xsp.sici(1j)
  with pytest.raises(NotImplementedError, match="complex-valued inputs is not implemented"):
    xsp.fresnel(np.array([1j]))
  with pytest.raises(TypeError):
    xsp.wofz("a")
