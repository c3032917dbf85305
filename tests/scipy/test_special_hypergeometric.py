"""hyp1f1, hyp2f1, owens_t, bessel_jn, sph_harm_y (and gamma/loggamma of complex input)
against scipy.special: values over the domain where JAX's algorithms hold, the branch
and edge values, dtypes, jit and vmap vs eager, derivatives vs finite differences, errors."""
import numpy as np
import pytest
import scipy.special as osp

import xjax
import xjax.numpy as jnp
from xjax._src.errors import ConcretizationTypeError
import xjax.scipy.special as hsp
from xjax.test_util import check_grads

_rng = np.random.default_rng(7)
N = 40


def _f32():
  return xjax._src.config.enable_x64(False)


def _close(got, expected, dtype, rtol, atol=0.0):
  assert got.dtype == dtype, got.dtype
  np.testing.assert_allclose(np.asarray(got), expected, rtol=rtol, atol=atol, equal_nan=True)


# ----------------------------------------------------------------------------
# hyp1f1

# The series (|x| < 100) and the asymptotic expansion (|x| >= 100), positive a and b.
HYP1F1_ARGS = (_rng.uniform(0.1, 5, N), _rng.uniform(0.2, 6, N),
               np.concatenate([_rng.uniform(0, 30, N - 8), _rng.uniform(100, 250, 8)]))
# (a, b, x, value): a == 0 gives 1 (also for b == 0, where SciPy differs), a == b gives
# exp(x), b == 0 gives inf, x == 0 gives 1, NaN propagates.
HYP1F1_EDGES = [(0.0, 2.0, 3.0, 1.0), (0.0, 0.0, 3.0, 1.0), (1.5, 1.5, 2.0, np.exp(2.0)),
                (1.5, 0.0, 2.0, np.inf), (2.5, 1.5, 0.0, 1.0), (2.5, 1.5, np.nan, np.nan)]


def test_hyp1f1_values(x64):
  a, b, x = HYP1F1_ARGS
  _close(hsp.hyp1f1(a, b, x), osp.hyp1f1(a, b, x), np.float64, 1e-11)
  # Negative x: the alternating series loses digits to cancellation (as in JAX).
  xn = -_rng.uniform(0, 8, N)
  _close(hsp.hyp1f1(a, b, xn), osp.hyp1f1(a, b, xn), np.float64, 1e-8)
  ea, eb, ex, ev = map(np.array, zip(*HYP1F1_EDGES))
  _close(hsp.hyp1f1(ea, eb, ex), ev, np.float64, 1e-15)
  with _f32():
    small = x < 20  # larger values overflow or lose accuracy in float32
    args = [v[small].astype(np.float32) for v in (a, b, x)]
    _close(hsp.hyp1f1(*args), osp.hyp1f1(a[small], b[small], x[small]), np.float32, 2e-5)
    _close(hsp.hyp1f1(*(v.astype(np.float32) for v in (ea, eb, ex))), ev, np.float32, 1e-6)
    assert hsp.hyp1f1(1, 2, 3).dtype == np.float32  # integers promote to the default float


# ----------------------------------------------------------------------------
# hyp2f1

# The Taylor series region (|x| <= 0.9; JAX stops after 250 terms, so x near 1 is inexact).
HYP2F1_ARGS = (_rng.uniform(0.1, 3, N), _rng.uniform(0.1, 3, N), _rng.uniform(0.5, 6, N),
               _rng.uniform(-0.9, 0.9, N))
# (a, b, c, x) at each branch of JAX's algorithm, compared with SciPy.
HYP2F1_BRANCHES = [
    (-3.0, 1.5, 2.5, 0.7), (1.5, -4.0, 2.5, -0.8), (-2.0, -5.0, 1.5, 0.6),  # finite sums
    (2.0, 2.5, 1.5, 0.5), (3.0, 1.0, 2.5, 0.95),       # c - a - b <= -1: Euler's transformation
    (0.5, 1.5, 3.0, 0.95), (0.5, 0.75, 2.25, 0.97),    # x > 0.9, c - a - b a positive integer
    (1.0, 1.0, 2.0, 0.95), (0.5, 1.5, 2.0, 0.93),      # ... and c - a - b == 0
    (1.5, 2.0, 2.0, 0.4), (2.0, 0.7, 2.0, -0.6),       # b == c or a == c: a power of 1 - x
    (0.5, 0.3, 2.0, 1.0), (1.0, 1.5, 3.5, 1.0),        # x == 1: Gauss's theorem
    (0.0, 2.0, 3.0, 0.5), (1.5, 2.0, 3.0, 0.0),        # a == 0, x == 0: 1
]
# (a, b, c, x, value) where JAX returns inf: c a non-positive integer, x > 1, and
# x == 1 with c - a - b <= 0.
HYP2F1_INF = [(1.0, 1.0, 0.0, 0.5), (1.0, 1.0, -2.0, 0.5), (1.0, 1.0, 3.5, 1.5),
              (1.5, 2.0, 3.0, 1.0)]


def test_hyp2f1_values(x64):
  # One call per dtype: every compilation of hyp2f1 takes seconds.
  points = [np.concatenate(v) for v in zip(HYP2F1_ARGS, zip(*HYP2F1_BRANCHES), zip(*HYP2F1_INF))]
  expected = osp.hyp2f1(*points)
  expected[-len(HYP2F1_INF):] = np.inf  # where SciPy differs (JAX's values)
  got = hsp.hyp2f1(*points)
  _close(got, expected, np.float64, 1e-9)
  _close(got[:N], expected[:N], np.float64, 1e-11)  # the series
  with _f32():
    args = [v.astype(np.float32) for v in points]
    expected = osp.hyp2f1(*(v.astype(np.float64) for v in args))
    expected[-len(HYP2F1_INF):] = np.inf
    _close(hsp.hyp2f1(*args), expected, np.float32, 3e-4, atol=1e-6)
    ones = np.ones(len(points[0]), np.int32)
    assert hsp.hyp2f1(ones, ones, 2 * ones, 0 * ones).dtype == np.float32


# ----------------------------------------------------------------------------
# owens_t

OWENS_ARGS = (_rng.uniform(-5, 5, N),
              np.concatenate([_rng.uniform(-3, 3, N - 8), _rng.uniform(-50, 50, 8)]))
OWENS_EDGES = (np.array([0.0, 0.0, 1.3, -1.3, 0.8, 2.0, np.inf, 0.5, np.nan, 1.0, 0.1]),
               np.array([0.7, -3.0, 1.0, -1.0, 0.0, 0.3, 1.0, np.inf, 1.0, np.nan, 0.6]))


def test_owens_t_values(x64):
  h, a = OWENS_ARGS
  _close(hsp.owens_t(h, a), osp.owens_t(h, a), np.float64, 1e-12, atol=1e-16)
  eh, ea = OWENS_EDGES
  _close(hsp.owens_t(eh, ea), osp.owens_t(eh, ea), np.float64, 1e-13)
  with _f32():
    _close(hsp.owens_t(h.astype(np.float32), a.astype(np.float32)), osp.owens_t(h, a),
           np.float32, 5e-5, atol=1e-7)
    _close(hsp.owens_t(eh.astype(np.float32), ea.astype(np.float32)), osp.owens_t(eh, ea),
           np.float32, 1e-6)
    assert hsp.owens_t(1, 2).dtype == np.float32


# ----------------------------------------------------------------------------
# bessel_jn


def test_bessel_jn_values(x64):
  z = np.concatenate([np.linspace(0.1, 25, 30), -np.linspace(0.5, 20, 5)])
  v = 6
  _close(hsp.bessel_jn(z, v=v), osp.jv(np.arange(v + 1)[:, None], z), np.float64, 1e-9,
         atol=1e-13)
  # n_iter sets the starting order of the recurrence; a small one suffices for small |z|.
  zs = np.array([0.2, 1.0, 3.0])
  _close(hsp.bessel_jn(zs, v=2, n_iter=20), osp.jv(np.arange(3)[:, None], zs), np.float64, 1e-12)
  # Golden values from jax.scipy.special.bessel_jn: NaN at 0 and NaN, J_1(inf) = -inf.
  _close(hsp.bessel_jn(np.array([0.0, np.inf, np.nan]), v=1),
         [[np.nan, np.nan, np.nan], [np.nan, -np.inf, np.nan]], np.float64, 0)
  with _f32():
    # The float32 recurrence overflows for small |z| unless n_iter is small (as in JAX).
    zf = np.linspace(8, 25, 12)
    _close(hsp.bessel_jn(zf.astype(np.float32), v=4), osp.jv(np.arange(5)[:, None], zf),
           np.float32, 1e-4, atol=1e-5)
    _close(hsp.bessel_jn(np.float32(1.5), v=3, n_iter=12), osp.jv(np.arange(4), 1.5),
           np.float32, 1e-5)
    assert hsp.bessel_jn(1, v=1).dtype == np.float32


def test_bessel_jn_shapes():
  assert hsp.bessel_jn(2.0, v=0).shape == (1,)
  assert hsp.bessel_jn(jnp.ones((2, 3)) * 10, v=2).shape == (3, 2, 3)
  assert hsp.bessel_jn(10.0, v=-1).shape == (0,)


# ----------------------------------------------------------------------------
# sph_harm_y


def _all_degrees_orders(n_max):
  pairs = [(n, m) for n in range(n_max + 1) for m in range(-n, n + 1)]
  return tuple(np.array(v) for v in zip(*pairs))


def test_sph_harm_y_values(x64):
  n, m = _all_degrees_orders(6)
  theta = _rng.uniform(0, np.pi, len(n))
  theta[:3] = [0.0, np.pi, np.pi / 2]
  phi = _rng.uniform(0, 2 * np.pi, len(n))
  _close(hsp.sph_harm_y(n, m, theta, phi), osp.sph_harm_y(n, m, theta, phi), np.complex128,
         1e-12, atol=1e-14)
  # A scalar theta serves every (n, m); phi broadcasts.
  _close(hsp.sph_harm_y(n, m, 0.7, 1.1), osp.sph_harm_y(n, m, 0.7, 1.1), np.complex128,
         1e-12, atol=1e-14)
  with _f32():
    _close(hsp.sph_harm_y(n, m, theta.astype(np.float32), phi.astype(np.float32)),
           osp.sph_harm_y(n, m, theta, phi), np.complex64, 1e-5, atol=1e-6)


def test_sph_harm_y_n_max_clips_and_undefined_values():
  # Degrees above n_max are clipped to n_max; |m| > n gives 0 (undefined in JAX's docs).
  got = hsp.sph_harm_y(jnp.array([5, 2]), jnp.array([1, 3]), jnp.array([0.3, 0.3]), 0.1,
                       n_max=3)
  np.testing.assert_allclose(got, [osp.sph_harm_y(3, 1, 0.3, 0.1), 0.0], rtol=1e-5, atol=1e-7)
  # A negative degree counts from the end of the table, as JAX's gather does.
  got = hsp.sph_harm_y(jnp.array([-1, 3]), jnp.array([0, 0]), 0.3, 0.1)
  np.testing.assert_allclose(got, [osp.sph_harm_y(3, 0, 0.3, 0.1)] * 2, rtol=1e-5)


# ----------------------------------------------------------------------------
# gamma and loggamma of complex input

COMPLEX_Z = np.array([1.5 + 2j, -2.3 + 0.5j, 0.2 - 3j, -4.5 - 0.1j, 3 + 0j, 0.5 + 0j, 20 + 5j,
                      -7.5 + 0.01j, -0.5 - 12j, 1e-3 + 1e-3j])
COMPLEX_BAD = np.array([0j, -2 + 0j, complex(np.nan, 1.0), complex(1.0, np.nan)])


def test_complex_gamma_and_loggamma(x64):
  z = COMPLEX_Z
  _close(hsp.gamma(jnp.asarray(z)), osp.gamma(z), np.complex128, 1e-12)
  _close(hsp.loggamma(jnp.asarray(z)), osp.loggamma(z), np.complex128, 1e-12,
         atol=1e-13)
  for f in (hsp.gamma, hsp.loggamma):
    out = np.asarray(f(jnp.asarray(COMPLEX_BAD)))
    assert np.all(np.isnan(out.real) & np.isnan(out.imag))
  with _f32():
    z64 = jnp.asarray(z, jnp.complex64)
    _close(hsp.gamma(z64), osp.gamma(z), np.complex64, 1e-5, atol=1e-6)
    _close(hsp.loggamma(z64), osp.loggamma(z), np.complex64, 1e-5, atol=1e-5)


# ----------------------------------------------------------------------------
# jit, vmap, derivatives, errors


def test_jit_and_vmap_match_eager():
  x = np.linspace(0.2, 0.8, 4).astype(np.float32)
  elementwise = [
      (hsp.hyp1f1, (x + 1, x + 2, 5 * x)),
      (hsp.hyp2f1, (x + 1, x, x + 3, x)),
      (hsp.owens_t, (3 * x - 1, 2 * x)),
  ]
  for f, args in elementwise:
    eager = f(*args)
    np.testing.assert_allclose(xjax.jit(f)(*args), eager, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(xjax.vmap(f)(*args), eager, rtol=1e-6, atol=1e-7)
    if f is not hsp.hyp2f1:  # (each compilation of hyp2f1 takes seconds)
      rest = [a[1] for a in args[1:]]
      np.testing.assert_allclose(xjax.vmap(f, in_axes=(0,) + (None,) * len(rest))(args[0], *rest),
                                 f(args[0], *rest), rtol=1e-6)
  bessel = lambda z: hsp.bessel_jn(z, v=2)
  z = 10 * x + 5
  np.testing.assert_allclose(xjax.jit(bessel)(z), bessel(z), rtol=1e-6)
  np.testing.assert_allclose(xjax.vmap(bessel)(z), bessel(z).T, rtol=1e-6)
  n, m = jnp.array([0, 1, 2, 3]), jnp.array([0, -1, 2, 1])
  harm = lambda t, p: hsp.sph_harm_y(n, m, t, p, n_max=3)
  np.testing.assert_allclose(xjax.jit(harm)(3 * x, 2 * x), harm(3 * x, 2 * x), rtol=1e-6, atol=1e-7)
  looped = np.stack([harm(3 * x[i], 2 * x[i]) for i in range(len(x))])
  np.testing.assert_allclose(xjax.vmap(harm)(3 * x, 2 * x), looped, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f,args", [
    (hsp.hyp1f1, (1.3, 2.1, 0.7)),
    (hsp.hyp1f1, (0.6, 1.7, 3.5)),
    (hsp.hyp2f1, (0.7, 1.3, 2.4, -0.45)),
    (hsp.owens_t, (0.8, 0.6)),
    (hsp.owens_t, (-1.2, 2.5)),
    (lambda z: hsp.bessel_jn(z, v=3), (7.5,)),
    (lambda t, p: jnp.real(hsp.sph_harm_y(jnp.array([2, 3]), jnp.array([1, -2]), t, p)),
     (0.9, 0.4)),
], ids=["hyp1f1", "hyp1f1_b", "hyp2f1", "owens_t", "owens_t_big_a",
        "bessel_jn", "sph_harm_y"])
def test_grads_match_finite_differences(f, args, x64):
  check_grads(f, tuple(jnp.asarray(a, jnp.float64) for a in args), order=1, atol=1e-6, rtol=1e-6)


def test_custom_jvps_closed_forms(x64):
  # d/dx 1F1(a; b; x) = a/b 1F1(a+1; b+1; x); d/dx 2F1 likewise.
  np.testing.assert_allclose(xjax.grad(hsp.hyp1f1, argnums=2)(1.3, 2.1, 0.7),
                             1.3 / 2.1 * osp.hyp1f1(2.3, 3.1, 0.7), rtol=1e-12)
  np.testing.assert_allclose(xjax.grad(hsp.hyp2f1, argnums=3)(0.7, 1.3, 2.4, -0.45),
                             0.7 * 1.3 / 2.4 * osp.hyp2f1(1.7, 2.3, 3.4, -0.45), rtol=1e-12)
  # dT/da = exp(-h^2 (1 + a^2) / 2) / (2 pi (1 + a^2)), also where a is reflected.
  h, a = 0.9, 3.0
  np.testing.assert_allclose(xjax.grad(hsp.owens_t, argnums=1)(h, a),
                             np.exp(-h * h * (1 + a * a) / 2) / (2 * np.pi * (1 + a * a)),
                             rtol=1e-12)


def test_errors():
  with pytest.raises(ValueError, match="hyp1f1 does not support complex-valued inputs"):
    hsp.hyp1f1(1 + 1j, 2.0, 3.0)
  with pytest.raises(TypeError):
    hsp.bessel_jn(1.0, v=1.5)
  with pytest.raises(TypeError):
    hsp.bessel_jn(1.0, 2)  # v is keyword-only
  with pytest.raises(ValueError, match="complex input not supported"):
    hsp.bessel_jn(1j, v=1)
  with pytest.raises(ConcretizationTypeError, match="Argument v of bessel_jn"):
    xjax.jit(lambda v: hsp.bessel_jn(1.0, v=v))(2)
  with pytest.raises(NotImplementedError, match="'diff_n' argument"):
    hsp.sph_harm_y(jnp.array([1]), jnp.array([0]), 0.3, 0.1, diff_n=1)
  with pytest.raises(ConcretizationTypeError, match="`n_max` argument"):
    xjax.jit(lambda n: hsp.sph_harm_y(n, n, 0.3, 0.1))(jnp.array([1, 2]))
  with pytest.raises(TypeError, match="len"):
    hsp.sph_harm_y(2, 1, 0.3, 0.1)  # n must be a 1-D array, as in JAX
