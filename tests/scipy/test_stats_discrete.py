"""xjax.scipy.stats discrete distributions (bernoulli, betabinom, binom, geom, multinomial,
nbinom, poisson) against scipy.stats: values with edge values and broadcasting, JAX's
deliberate differences from SciPy (golden values from real JAX), dtypes, jit/vmap vs eager,
derivatives, errors."""
import numpy as np
import pytest
import scipy.special as osp_special
import scipy.stats as osp

import xjax
import xjax.scipy.stats as xst
from xjax.test_util import check_grads

# Integer k from below to above each support, and the parameter edges 0 and 1 of p.
K = np.array([-np.inf, -2.0, -1, 0, 1, 2, 3, 4, 5, 7, 12, np.inf])
P = np.array([0.0, 0.05, 0.3, 0.5, 0.97, 1.0])
MU = np.array([0.0, 0.01, 0.5, 3.0, 12.5, 80.0])
N = np.array([0.0, 1, 4, 9])

# name, xjax function, scipy function, arguments (broadcast against each other).
CASES = [
    ("bernoulli.logpmf", xst.bernoulli.logpmf, osp.bernoulli.logpmf, (K[:, None], P)),
    ("bernoulli.pmf", xst.bernoulli.pmf, osp.bernoulli.pmf, (K[:, None], P, 1.0)),
    ("bernoulli.cdf", xst.bernoulli.cdf, osp.bernoulli.cdf,
     (np.array([-np.inf, -1, -0.5, 0, 0.5, 1, 3, np.inf, np.nan])[:, None],
      np.array([-0.5, 0, 0.3, 1, 1.5, np.nan]))),
    ("bernoulli.ppf", xst.bernoulli.ppf, osp.bernoulli.ppf,
     (np.array([-0.1, 1e-9, 0.3, 0.7, 0.71, 1.1, np.nan])[:, None],
      np.array([-0.5, 0, 0.3, 1, 1.5, np.nan]))),
    ("binom.logpmf", xst.binom.logpmf, osp.binom.logpmf, (K[:, None, None], N[:, None], P)),
    ("binom.pmf", xst.binom.pmf, osp.binom.pmf, (K[:, None], 9.0, P, 2.0)),
    ("betabinom.logpmf", xst.betabinom.logpmf, osp.betabinom.logpmf,
     (K[:, None, None], N[:, None], np.array([0.2, 1.0, 7.5]), 2.5)),
    ("betabinom.pmf", xst.betabinom.pmf, osp.betabinom.pmf,
     (K[:, None], 6.0, 1.5, np.array([-1.0, 0, 0.4, 3]), 1.0)),
    ("geom.logpmf", xst.geom.logpmf, osp.geom.logpmf, (K[:, None], P[1:])),
    ("geom.pmf", xst.geom.pmf, osp.geom.pmf, (K[:, None], P[1:], -1.0)),
    ("nbinom.logpmf", xst.nbinom.logpmf, osp.nbinom.logpmf, (K[:, None, None], N[1:, None], P[1:])),
    ("nbinom.pmf", xst.nbinom.pmf, osp.nbinom.pmf, (K[:, None], 2.5, P[1:], 1.0)),
    ("poisson.logpmf", xst.poisson.logpmf, osp.poisson.logpmf, (K[:, None], MU)),
    ("poisson.pmf", xst.poisson.pmf, osp.poisson.pmf, (K[:, None], MU, 2.0)),
    ("poisson.cdf", xst.poisson.cdf, osp.poisson.cdf,
     (np.array([-np.inf, -1, 0, 0.5, 1, 2.7, 5, 30, 200])[:, None], MU, np.array([[0.0], [1.5]])[:, None])),
]
IDS = [c[0] for c in CASES]


# JAX's betaln switches to an asymptotic form (good to ~5e-6 here) once max(a, b) >= 8.
RTOL64 = {"betabinom.logpmf": 1e-5, "betabinom.pmf": 1e-5}


def _compare(fun, osp_fun, args, dtype, rtol, atol):
  expected = np.asarray(osp_fun(*args), np.float64)
  got = xjax.jit(fun)(*(np.asarray(a, dtype) for a in args))  # eager: see the jit/vmap test
  assert got.dtype == dtype
  assert got.shape == expected.shape
  np.testing.assert_allclose(np.asarray(got), expected, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name,fun,osp_fun,args", CASES, ids=IDS)
def test_discrete_values_match_scipy(name, fun, osp_fun, args, x64):
  _compare(fun, osp_fun, args, np.float64, RTOL64.get(name, 1e-10), 1e-12)
  with xjax._src.config.enable_x64(False):
    _compare(fun, osp_fun, args, np.float32, 2e-4, 1e-6)


# Where JAX 0.10.2 deliberately differs from SciPy: (function, args, JAX's value).
# Golden values computed with jax.scipy.stats under x64 (real JAX 0.10.2).
JAX_DIFFERS = [
    # k is not checked to be an integer (binom, geom, nbinom, bernoulli interpolate; betabinom floors).
    (xst.binom.logpmf, (1.5, 4.0, 0.3), -1.0052492088077836),
    (xst.geom.logpmf, (2.5, 0.3), -1.7389852202340346),
    (xst.nbinom.logpmf, (1.5, 4.0, 0.3), -3.4695320052940994),
    (xst.betabinom.logpmf, (1.5, 4.0, 2.0, 3.0), -1.2527629684953692),
    (xst.bernoulli.logpmf, (0.5, 0.3), -0.7803238741323343),
    # p = 0 is not rejected as invalid: log(0) terms give -inf where SciPy gives NaN.
    (xst.geom.logpmf, (3.0, 0.0), -np.inf),
    (xst.nbinom.logpmf, (3.0, 4.0, 0.0), -np.inf),
    # k = NaN is "outside the support" for binom and poisson.
    (xst.binom.logpmf, (np.nan, 4.0, 0.3), -np.inf),
    (xst.poisson.logpmf, (np.nan, 3.0), -np.inf),
    # poisson: a non-integer k is -inf even when k - loc is an integer. (JAX's cdf at k = inf
    # is NaN, from its igammac(inf, mu); xjax's igammac gives Q(inf, mu) = 1, as SciPy.)
    (xst.poisson.logpmf, (3.5, 2.0, 0.5), -np.inf),
    (xst.poisson.logpmf, (3.0, 2.0, 0.5), -1.4681056509472115),
    # bernoulli.ppf(0) is 0 (SciPy: -1), and ppf(1, p=0) is 0 (SciPy: 1); betabinom with a = 0 is NaN; y = n = 0 gives log 1.
    (xst.bernoulli.ppf, (0.0, 0.3), 0.0),
    (xst.bernoulli.ppf, (1.0, 0.0), 0.0),
    (xst.betabinom.logpmf, (0.0, 4.0, 0.0, 1.0), np.nan),
    (xst.betabinom.logpmf, (0.0, 0.0, 2.0, 3.0), 0.0),
    (xst.betabinom.pmf, (-1.0, 6.0, 1.5, np.nan, 1.0), 0.0),  # NaN b is not checked out of support
]


@pytest.mark.parametrize("fun,args,expected", JAX_DIFFERS,
                         ids=[f"{f.__module__.rsplit('.', 1)[1]}.{f.__name__}{a}" for f, a, _ in JAX_DIFFERS])
def test_discrete_edge_values_match_jax(fun, args, expected, x64):
  got = fun(*args)
  np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-13, equal_nan=True)


def test_poisson_entropy_regimes(x64):
  # Truncated sums (k < mu + 20 below 10, k < mu + 10 sqrt(mu) + 20 below 100), as in JAX.
  mu = np.array([1e-3, 0.5, 3.0, 9.99, 10.0, 37.2, 99.9])
  np.testing.assert_allclose(xst.poisson.entropy(mu), osp.poisson.entropy(mu), rtol=2e-6)
  # mu >= 100: the asymptotic form, within 2e-6 of SciPy at 100 and 1000.
  np.testing.assert_allclose(xst.poisson.entropy(np.array([100.0, 1e3])),
                             osp.poisson.entropy(np.array([100.0, 1e3])), rtol=2e-6)
  # Golden values from jax.scipy.stats.poisson.entropy (x64); SciPy's own sum is off at 1e4.
  np.testing.assert_allclose(xst.poisson.entropy(np.array([0.5, 50.0, 100.0, 1e4])),
                             [0.9276374674957976, 3.3732662611702566, 3.7206902928653847,
                              6.02410038585943], rtol=1e-13)
  edges = xst.poisson.entropy(np.array([0.0, -1.0, np.nan]))
  np.testing.assert_array_equal(np.asarray(edges), [0.0, np.nan, np.nan])
  # loc only broadcasts; the entropy does not depend on it.
  out = xst.poisson.entropy(np.array([[1.0], [20.0]]), np.array([0.0, 3.0, -2.0]))
  assert out.shape == (2, 3) and out.dtype == np.float64
  np.testing.assert_allclose(out, np.broadcast_to(osp.poisson.entropy([[1.0], [20.0]]), (2, 3)),
                             rtol=1e-9)


def test_poisson_entropy_float32():
  out = xst.poisson.entropy(np.array([1, 10, 100]))
  assert out.dtype == np.float32
  np.testing.assert_allclose(out, osp.poisson.entropy([1, 10, 100]), rtol=2e-6)


def test_multinomial_matches_scipy(x64):
  p = np.array([0.2, 0.3, 0.5])
  for x in ([1, 2, 3], [0, 0, 6], [6, 0, 0], [2, 2, 2]):
    x = np.array(x)
    np.testing.assert_allclose(xst.multinomial.logpmf(x, 6, p), osp.multinomial.logpmf(x, 6, p),
                               rtol=1e-12)
    np.testing.assert_allclose(xst.multinomial.pmf(x, 6, p), osp.multinomial.pmf(x, 6, p),
                               rtol=1e-12)
  zero_p = np.array([0.2, 0.8, 0.0])
  # A count that does not sum to n, and a zero probability with a nonzero count.
  assert xst.multinomial.logpmf(np.array([1, 2, 2]), 6, p) == -np.inf
  np.testing.assert_allclose(xst.multinomial.logpmf(np.array([1, 5, 0]), 6, zero_p),
                             osp.multinomial.logpmf([1, 5, 0], 6, zero_p), rtol=1e-12)
  assert xst.multinomial.logpmf(np.array([1, 0, 5]), 6, zero_p) == -np.inf


def test_multinomial_batch_sums_all_counts(x64):
  # As in JAX, a batch of count vectors is compared with n through the sum of *all* counts:
  # rows that each sum to 6 give -inf for n = 6, and log(12!) + sum(x log p - log x!) for n = 12.
  x = np.array([[1, 2, 3], [0, 0, 6]])
  p = np.array([0.2, 0.3, 0.5])
  np.testing.assert_array_equal(np.asarray(xst.multinomial.logpmf(x, 6, p)), [-np.inf, -np.inf])
  log_12_over_6 = osp_special.gammaln(13) - osp_special.gammaln(7)
  np.testing.assert_allclose(xst.multinomial.logpmf(x, 12, p),
                             osp.multinomial.logpmf(x, 6, p) + log_12_over_6, rtol=1e-12)


def test_multinomial_rejects_float_counts():
  with pytest.raises(ValueError, match="x and n must be of integer type; got x.dtype=float32"):
    xst.multinomial.logpmf(np.array([1.0, 2.0]), 3, np.array([0.5, 0.5]))
  with pytest.raises(ValueError, match="must be of integer type"):
    xst.multinomial.pmf(np.array([1, 2]), 3.0, np.array([0.5, 0.5]))


@pytest.mark.parametrize("fun,args", [
    (xst.bernoulli.logpmf, (1, 0.3)), (xst.bernoulli.cdf, (1, 0.3)), (xst.bernoulli.ppf, (0.5, 0.3)),
    (xst.binom.logpmf, (2, 5, 0.3)), (xst.betabinom.logpmf, (2, 5, 1.5, 2)),
    (xst.geom.logpmf, (2, 0.3)), (xst.nbinom.logpmf, (2, 5, 0.3)),
    (xst.poisson.logpmf, (2, 3)), (xst.poisson.cdf, (2, 3)), (xst.poisson.entropy, (3,)),
    (xst.poisson.pmf, (2, 3.0)),
], ids=lambda v: getattr(v, "__name__", None))
def test_discrete_dtype_promotion(fun, args):
  # Python scalars give a weakly typed float32 result; ints promote to float32.
  out = fun(*args)
  assert out.dtype == np.float32 and out.shape == ()
  assert out.weak_type == (fun is not xst.poisson.entropy)
  out = fun(*(np.asarray(a, np.int32) for a in args))
  assert out.dtype == np.float32 and not out.weak_type
  out = fun(*(np.asarray(a, np.float16) for a in args))
  assert out.dtype == np.float16


def test_discrete_float32_input_stays_float32_under_x64(x64):
  assert xst.poisson.logpmf(np.float32(2), np.float32(3)).dtype == np.float32
  assert xst.binom.pmf(np.float32(2), 5, np.float32(0.3)).dtype == np.float32
  assert xst.poisson.logpmf(2, 3).dtype == np.float64


def test_discrete_rejects_lists():
  with pytest.raises(TypeError, match="binom.logpmf requires ndarray or scalar arguments"):
    xst.binom.logpmf([1, 2], 4, 0.3)
  with pytest.raises(TypeError, match="poisson.entropy requires ndarray or scalar arguments"):
    xst.poisson.entropy([1.0])


JIT_CASES = [
    (xst.bernoulli.logpmf, (K, 0.3)), (xst.bernoulli.cdf, (K, 0.3)),
    (xst.bernoulli.ppf, (np.linspace(0, 1, 7), 0.3)),
    (xst.binom.logpmf, (K, 9.0, 0.3)), (xst.betabinom.pmf, (K, 9.0, 1.5, 0.5)),
    (xst.geom.pmf, (K, 0.3)), (xst.nbinom.logpmf, (K, 3.0, 0.3)),
    (xst.poisson.logpmf, (K, 2.5)), (xst.poisson.cdf, (K, 2.5)),
    (xst.poisson.entropy, (np.array([0.5, 20.0, 300.0]),)),
    (xst.multinomial.logpmf, (np.array([[1, 2, 3], [2, 2, 2]]), 12, np.array([0.2, 0.3, 0.5]))),
]


@pytest.mark.parametrize("fun,args", JIT_CASES, ids=lambda v: getattr(v, "__name__", None))
def test_discrete_jit_and_vmap_match_eager(fun, args, x64):
  eager = np.asarray(fun(*args))
  np.testing.assert_array_equal(np.asarray(xjax.jit(fun)(*args)), eager)
  if fun is xst.multinomial.logpmf:
    return  # the count check sums over the whole batch, so a vmap of it is a different function
  mapped = xjax.vmap(fun, in_axes=(0,) + (None,) * (len(args) - 1))(*args)
  np.testing.assert_allclose(np.asarray(mapped), eager, rtol=1e-14, atol=0, equal_nan=True)


def test_discrete_vmap_over_parameters(x64):
  k = np.array([0.0, 1, 3, 6])
  p = np.array([0.1, 0.4, 0.9])
  mapped = xjax.vmap(lambda p: xst.binom.logpmf(k, 6.0, p))(p)
  np.testing.assert_allclose(mapped, osp.binom.logpmf(k, 6, p[:, None]), rtol=1e-12)
  mu = np.array([0.5, 4.0])
  mapped = xjax.vmap(xst.poisson.cdf, in_axes=(None, 0))(k, mu)
  np.testing.assert_allclose(mapped, osp.poisson.cdf(k, mu[:, None]), rtol=1e-12)


def test_discrete_grads(x64):
  k = np.array([0.0, 1, 3, 7])
  check_grads(lambda mu: xst.poisson.logpmf(k, mu), (2.5,), order=2)
  check_grads(lambda p: xst.binom.logpmf(k, 9.0, p), (0.3,), order=1)
  check_grads(lambda p: xst.geom.logpmf(k + 1, p), (0.3,), order=1, modes=("rev",))
  check_grads(lambda n, p: xst.nbinom.logpmf(k, n, p), (2.5, 0.4), order=1, modes=("rev",))
  check_grads(lambda a, b: xst.betabinom.logpmf(k, 9.0, a, b), (1.5, 2.5), order=1,
              modes=("rev",))
  check_grads(lambda p: xst.multinomial.logpmf(np.array([1, 2, 3]), 6, p),
              (np.array([0.2, 0.3, 0.5]),), order=1, modes=("rev",))
  # d/dmu log pmf = k / mu - 1 and d/dp = k / p - (n - k) / (1 - p).
  np.testing.assert_allclose(xjax.grad(lambda mu: xst.poisson.logpmf(3.0, mu))(2.0), 0.5)
  np.testing.assert_allclose(xjax.grad(lambda p: xst.binom.logpmf(0.0, 4.0, p))(0.2), -5.0)
  # At the boundary the xlogy rule gives 0 / 0, NaN in JAX too (golden: real JAX, x64).
  assert np.isnan(xjax.grad(lambda p: xst.binom.logpmf(0.0, 4.0, p))(0.0))
  np.testing.assert_allclose(xjax.grad(xst.poisson.entropy)(3.0), 0.18243084821501176, rtol=1e-12)
