"""xjax.scipy.special against scipy.special: values (edge values included), dtypes,
jit vs eager, vmap, derivatives (custom JVPs at the boundaries), errors."""
import numpy as np
import pytest
import scipy.special as osp

import xjax
import xjax.numpy as jnp
import xjax.scipy.special as xsp
from xjax._src.errors import ConcretizationTypeError
from xjax.test_util import check_grads

EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan]


def _points(lo, hi, n=24, edges=True):
  x = np.linspace(lo, hi, n)
  return np.concatenate([x, EDGES]) if edges else x


# name, points (one array per argument), float32 rtol
UNARY = [
    ("gammaln", _points(-4.5, 30), 1e-5),
    ("gamma", _points(-4.5, 20), 2e-5),
    ("gammasgn", _points(-4.5, 20), 0),
    ("digamma", _points(-4.5, 30), 1e-5),
    ("erf", _points(-5, 5), 1e-6),
    ("erfc", _points(-5, 9), 1e-5),
    ("erfinv", np.concatenate([np.linspace(-1, 1, 21), [2.0, -2.0, np.nan]]), 1e-5),
    ("expit", _points(-30, 30), 1e-6),
    ("logit", np.concatenate([np.linspace(0, 1, 21), [-1.0, 2.0, np.nan]]), 1e-5),
    ("ndtr", _points(-12, 12), 1e-5),
    ("ndtri", np.concatenate([np.linspace(0, 1, 21), [1e-30, 1 - 1e-7, -0.5, 2.0, np.nan]]), 1e-5),
    ("log_ndtr", _points(-40, 12), 1e-5),
    ("entr", _points(-1, 10), 1e-6),
    ("i0", _points(-20, 20), 1e-5),
    ("i0e", _points(-50, 50), 1e-6),
    ("i1", _points(-20, 20), 1e-5),
    ("i1e", _points(-50, 50), 1e-6),
    ("spence", _points(-1, 10), 1e-5),
    ("loggamma", _points(-3, 20), 1e-5),
    ("factorial", _points(-2, 20), 2e-5),
]

BINARY = [
    ("gammainc", (np.array([0.5, 1, 3, 10]), np.array([0, 0.3, 2, 15.0])), 1e-5),
    ("gammaincc", (np.array([0.5, 1, 3, 10]), np.array([0, 0.3, 2, 15.0])), 1e-5),
    ("betaln", (np.array([0.5, 1, 3, 10, 1e3]), np.array([2.0, 8, 0.7, 50, 4e5])), 1e-5),
    ("beta", (np.array([0.5, 1, 3, -2.5, 4]), np.array([2.0, 8, 0.7, 1.2, 5])), 1e-5),
    ("xlogy", (np.array([0.0, 0, 0, 2, -1, 3]), np.array([0.0, np.nan, 5, 3, np.inf, -1])), 1e-6),
    ("xlog1py", (np.array([0.0, 0, 0, 2, -1, 3]), np.array([-1.0, np.nan, 5, 3, np.inf, -2])), 1e-6),
    ("rel_entr", (np.array([0.0, 0, 1, 1, -1, 2, np.nan]), np.array([0.0, 1, 0, 2, 1, 0.5, 1])), 1e-6),
    ("kl_div", (np.array([0.0, 0, 1, 1, -1, 2]), np.array([0.0, 1, 0, 2, 1, 0.5])), 1e-6),
    ("zeta", (np.array([2.0, 3, 4.5, 1.5, 10]), np.array([1.0, 2, 0.5, 3, 1.5])), 1e-5),
    ("poch", (np.array([2.0, 3.5, 0.5, 4]), np.array([0.0, 2.5, 3, -1.5])), 2e-5),
    ("comb", (np.array([5.0, 10, 3, -1, 4, 30]), np.array([2.0, 3, 5, 1, -1, 7])), 2e-5),
    ("boxcox", (np.array([0.5, 1, 3, 0]), np.array([0.0, 2, -1.5, 0.5])), 1e-5),
    ("boxcox1p", (np.array([0.5, 0, 3, -0.5]), np.array([0.0, 2, -1.5, 0.5])), 1e-5),
]


# Where JAX 0.10.2 deliberately differs from SciPy: (name, predicate on args, JAX's value).
JAX_DIFFERS = [
]


def _expected(name, args):
  out = np.array(getattr(osp, name)(*args), np.float64)
  for other, pred, value in JAX_DIFFERS:
    if other == name:
      out[pred(*args)] = value
  return out


def _compare(name, args, dtype, rtol):
  expected = _expected(name, args)
  got = getattr(xsp, name)(*(a.astype(dtype) for a in args))
  assert got.dtype == dtype
  atol = 1e-6 if dtype == np.float32 else 1e-12
  np.testing.assert_allclose(np.asarray(got), expected, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name,x,rtol", UNARY, ids=[u[0] for u in UNARY])
def test_unary_values(name, x, rtol, x64):
  _compare(name, (x,), np.float64, max(rtol ** 2 * 10, 1e-12) if rtol else 0)
  with xjax._src.config.enable_x64(False):
    _compare(name, (x.astype(np.float32),), np.float32, rtol)


@pytest.mark.parametrize("name,args,rtol", BINARY, ids=[b[0] for b in BINARY])
def test_binary_values(name, args, rtol, x64):
  # JAX's betaln switches to an asymptotic form (good to ~5e-7) at max(a, b) >= 8.
  _compare(name, args, np.float64, 1e-6 if name in ("betaln", "beta") else 1e-9)
  with xjax._src.config.enable_x64(False):
    _compare(name, tuple(a.astype(np.float32) for a in args), np.float32, rtol)


def test_polygamma_betainc_multigammaln(x64):
  x = np.linspace(0.3, 12, 9)
  for n in range(4):
    np.testing.assert_allclose(xsp.polygamma(n, x), osp.polygamma(n, x), rtol=1e-8)
  np.testing.assert_allclose(xsp.polygamma(np.arange(3), 2.0), osp.polygamma(np.arange(3), 2.0),
                             rtol=1e-8)
  a, b, t = np.array([0.5, 2, 5]), np.array([1.5, 3, 0.7]), np.array([0.1, 0.5, 0.99])
  np.testing.assert_allclose(xsp.betainc(a, b, t), osp.betainc(a, b, t), rtol=1e-8)
  np.testing.assert_allclose(xsp.betainc(2.0, b, t[:, None]), osp.betainc(2.0, b, t[:, None]),
                             rtol=1e-8)
  a = np.array([[3.0, 4.5], [10, 2.2]])
  np.testing.assert_allclose(xsp.multigammaln(a, 3), osp.multigammaln(a, 3), rtol=1e-10)


def test_betaln_asymptotic_form_is_exact(x64):
  # The b >= 8 branch (cdflib's algdiv). JAX 0.10.2 gives betaln(1, 8) = -2.07944061159705
  # and beta(1, 8) = 0.12500011626 (its series uses h / (1 + h) where cdflib has 1 / (1 + h));
  # B(1, b) = 1 / b exactly (issue 33 item 7).
  np.testing.assert_allclose(xsp.betaln(1.0, 8.0), -np.log(8.0), rtol=1e-14)
  np.testing.assert_allclose(xsp.beta(1.0, 8.0), 0.125, rtol=1e-14)
  np.testing.assert_allclose(xsp.betaln(1.0, 30.0), -np.log(30.0), rtol=1e-14)
  np.testing.assert_allclose(xsp.betaln(1e3, 4e5), osp.betaln(1e3, 4e5), rtol=1e-11)


def test_small_functions():
  np.testing.assert_allclose(xsp.bernoulli(12), osp.bernoulli(12), atol=1e-6)
  np.testing.assert_allclose(xsp.bernoulli(1), [1, -0.5])
  assert xsp.gammaln(3).dtype == np.float32  # ints promote to the default float
  x = np.array([[1.0, 2, 3], [0, -1, 5]], np.float32)
  np.testing.assert_allclose(xsp.softmax(x), osp.softmax(x), rtol=1e-6)
  np.testing.assert_allclose(xsp.softmax(x, axis=1), osp.softmax(x, axis=1), rtol=1e-6)
  np.testing.assert_allclose(xsp.log_softmax(x, axis=0), osp.log_softmax(x, axis=0), rtol=1e-6)
  np.testing.assert_allclose(xsp.log_softmax(x), osp.log_softmax(x), rtol=1e-6, atol=1e-6)
  b = np.array([[1.0, -1, 2], [0, 1, 1]], np.float32)
  for kw in ({}, {"axis": 1}, {"b": b}, {"axis": 0, "b": b, "keepdims": True}):
    np.testing.assert_allclose(xsp.logsumexp(x, **kw), osp.logsumexp(x, **kw), rtol=1e-6)
  out, sign = xsp.logsumexp(x, axis=1, b=-b, return_sign=True)
  ref, ref_sign = osp.logsumexp(x, axis=1, b=-b, return_sign=True)
  np.testing.assert_allclose(out, ref, rtol=1e-6)
  np.testing.assert_array_equal(sign, ref_sign)
  assert np.isnan(xsp.logsumexp(np.array([1.0, 2.0]), b=np.array([1.0, -1.0])))
  where = np.array([[True, False, True], [True, True, False]])
  np.testing.assert_allclose(xsp.logsumexp(x, axis=1, where=where),
                             [np.log(np.e + np.e ** 3), np.log(1 + np.e ** -1)], rtol=1e-6)


def test_errors():
  with pytest.raises(ValueError, match="Argument `n` to polygamma must be of integer type"):
    xsp.polygamma(1.0, 2.0)
  with pytest.raises(NotImplementedError, match="Riemann zeta function not implemented"):
    xsp.zeta(2.0)
  with pytest.raises(TypeError, match="x.dtype=int32 is not supported"):
    xsp.ndtr(1)
  with pytest.raises(TypeError, match="is not supported"):
    xsp.ndtri(np.array([1], np.int32))
  with pytest.raises(TypeError, match="series_order must be a Python integer"):
    xsp.log_ndtr(1.0, series_order=1.5)
  with pytest.raises(ValueError, match="series_order must be <= 30"):
    xsp.log_ndtr(1.0, series_order=31)
  with pytest.raises(ValueError, match="series_order must be non-negative"):
    xsp.log_ndtr(1.0, series_order=-1)
  with pytest.raises(NotImplementedError, match="exact=True"):
    xsp.factorial(3, exact=True)
  with pytest.raises(ValueError, match="n must be a non-negative integer"):
    xsp.bernoulli(-1)
  for fn in (xsp.gammasgn, xsp.entr):
    with pytest.raises(ValueError, match="does not support complex-valued inputs"):
      fn(1 + 1j)
  with pytest.raises(ValueError, match="does not support complex-valued inputs"):
    xsp.beta(1 + 1j, 2.0)
  with pytest.raises(TypeError):
    xsp.erf(1 + 1j)
  with pytest.raises(TypeError):
    xsp.softmax(jnp.ones(3), -1)  # axis is keyword-only, as in JAX
  with pytest.raises(ConcretizationTypeError):
    xjax.jit(lambda d: xsp.multigammaln(3.0, d))(2)


def test_log_ndtr_series_order(x64):
  x = np.array([-25.0, -50.0, -100.0])
  ref = osp.log_ndtr(x)
  for order in (3, 10):
    np.testing.assert_allclose(xsp.log_ndtr(x, series_order=order), ref, rtol=1e-10)
  assert abs(xsp.log_ndtr(-25.0, series_order=0) - osp.log_ndtr(-25.0)) > 1e-6


def test_jit_and_vmap():
  x = np.linspace(0.2, 4, 6).astype(np.float32)
  y = np.linspace(0.0, 3, 6).astype(np.float32)
  for f in (xsp.gammaln, xsp.digamma, xsp.i0, xsp.ndtri, xsp.log_ndtr, xsp.spence, xsp.entr,
            xsp.gamma, xsp.logit):
    arg = x / 5 if f in (xsp.ndtri, xsp.logit) else x
    np.testing.assert_allclose(xjax.jit(f)(arg), f(arg), rtol=1e-6)
  for f in (xsp.xlogy, xsp.gammainc, xsp.zeta, xsp.rel_entr, xsp.poch, xsp.betaln):
    np.testing.assert_allclose(xjax.jit(f)(x + 1, y), f(x + 1, y), rtol=1e-6)
    looped = np.stack([f(a, b) for a, b in zip(x + 1, y)])
    np.testing.assert_allclose(xjax.vmap(f)(x + 1, y), looped, rtol=1e-6)
    np.testing.assert_allclose(xjax.vmap(f, in_axes=(0, None))(x + 1, 2.0),
                               np.stack([f(a, 2.0) for a in x + 1]), rtol=1e-6)
  np.testing.assert_allclose(xjax.vmap(lambda a: xsp.multigammaln(a, 2))(x + 2),
                             [osp.multigammaln(a, 2) for a in x + 2], rtol=1e-5)
  np.testing.assert_allclose(xjax.vmap(xsp.logsumexp)(np.stack([x, y])),
                             osp.logsumexp(np.stack([x, y]), axis=1), rtol=1e-6)


@pytest.mark.parametrize("f,args", [
    (xsp.gammaln, (2.5,)), (xsp.gamma, (-1.5,)), (xsp.digamma, (1.7,)), (xsp.erf, (0.3,)),
    (xsp.erfc, (1.2,)), (xsp.erfinv, (0.4,)), (xsp.expit, (0.7,)), (xsp.logit, (0.3,)),
    (xsp.ndtr, (0.4,)), (xsp.ndtri, (0.2,)), (xsp.log_ndtr, (-30.0,)), (xsp.log_ndtr, (0.5,)),
    (xsp.log_ndtr, (9.0,)), (xsp.entr, (0.6,)), (xsp.i0, (1.3,)), (xsp.i1e, (-2.0,)),
    (xsp.spence, (0.3,)), (xsp.spence, (2.5,)), (xsp.betaln, (1.5, 9.0)), (xsp.beta, (1.5, 2.0)),
    (xsp.gammainc, (2.0, 1.5)), (xsp.xlogy, (2.0, 3.0)), (xsp.xlog1py, (2.0, 0.5)),
    (xsp.rel_entr, (0.4, 0.7)), (xsp.kl_div, (0.4, 0.7)), (xsp.zeta, (3.0, 1.5)),
    (xsp.poch, (2.5, 1.5)), (xsp.comb, (6.0, 2.5)), (xsp.boxcox, (1.5, 0.7)),
    (lambda a: xsp.multigammaln(a, 3), (4.0,)),
    (lambda x: xsp.logsumexp(x, b=jnp.array([1.0, 2.0])), (jnp.array([0.3, -0.2]),)),
    (lambda x: xsp.softmax(x, axis=0), (jnp.array([0.3, -0.2, 1.0]),)),
], ids=lambda v: getattr(v, "__name__", "")[:12] if callable(v) else "")
def test_grads(f, args, x64):
  check_grads(f, tuple(jnp.asarray(a, jnp.float64) for a in args), order=1, atol=1e-5, rtol=1e-5)


def test_custom_jvps_at_boundaries(x64):
  # d/dx xlogy(x, y) at x == 0 is log(y); d/dy is x / y = 0.
  g = xjax.grad(xsp.xlogy, argnums=(0, 1))(0.0, 2.0)
  np.testing.assert_allclose(g, (np.log(2.0), 0.0))
  g = xjax.grad(xsp.xlog1py, argnums=(0, 1))(0.0, 1.0)
  np.testing.assert_allclose(g, (np.log(2.0), 0.0))
  # Far in the lower tail log_ndtr's slope is about -x.
  np.testing.assert_allclose(xjax.grad(xsp.log_ndtr)(-30.0), 30.0332, rtol=1e-4)
  np.testing.assert_allclose(xjax.grad(xsp.logit)(0.25), 1 / (0.25 * 0.75))
  np.testing.assert_allclose(xjax.grad(xsp.entr)(2.0), -(np.log(2.0) + 1))
  # zeta's derivative in x (from the series): d/dx sum (k+q)^-x.
  k = np.arange(200000.0)
  np.testing.assert_allclose(xjax.grad(xsp.zeta)(3.0, 1.5),
                             -np.sum(np.log(k + 1.5) * (k + 1.5) ** -3.0), rtol=1e-6)
