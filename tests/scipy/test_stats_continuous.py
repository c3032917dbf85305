"""xjax.scipy.stats continuous distributions against scipy.stats: values over each
domain with edge values (0, boundaries, +-inf, NaN), broadcasting of loc/scale/shape
parameters, dtypes (float32, and float64 under x64), jit and vmap against eager,
derivatives against finite differences, JAX's deliberate departures from SciPy, errors."""
import numpy as np
import pytest
import scipy.stats as osp

import xjax
import xjax.numpy as jnp
from xjax.scipy import stats
from xjax.test_util import check_grads

INF, NAN = np.inf, np.nan
EDGES = [0.0, -INF, INF, NAN]
PROBS = np.array([0, 1e-6, 0.1, 0.3, 0.5, 0.7, 0.9, 1 - 1e-6, 1, NAN])
LOC, SCALE = [0.0, -1.5, 2.0], [1.0, 0.5, 3.0]


def _grid(lo, hi):
  return np.concatenate([np.linspace(lo, hi, 21), EDGES])  # one length for all: shared executables


# name: (x points, shape parameters then loc and scale (each a row of 3), functions).
# x is a column and the parameters rows, so every point meets every parameter set.
SPECS = {
    "beta": (_grid(-1.5, 3.5), [[0.5, 2, 5], [0.7, 3, 1], [0, -1, 0.5], [1, 2, 0.5]],
             "cdf logcdf logpdf logsf pdf sf"),
    "cauchy": (_grid(-30, 30), [LOC, SCALE], "cdf isf logcdf logpdf logsf pdf ppf sf"),
    "chi2": (_grid(-1, 40), [[1, 3, 10], LOC, SCALE], "cdf logcdf logpdf logsf pdf sf"),
    "expon": (_grid(-3, 20), [LOC, SCALE], "cdf logcdf logpdf logsf pdf ppf sf"),
    "gamma": (_grid(-1, 30), [[0.5, 1, 4], LOC, SCALE], "cdf logcdf logpdf logsf pdf sf"),
    "gennorm": (_grid(-5, 5), [[0.5, 1, 2.5]], "cdf logpdf pdf"),
    "gumbel_l": (_grid(-10, 5), [LOC, SCALE], "cdf logcdf logpdf logsf pdf ppf sf"),
    "gumbel_r": (_grid(-5, 10), [LOC, SCALE], "cdf logcdf logpdf logsf pdf ppf sf"),
    "laplace": (_grid(-10, 10), [LOC, SCALE], "cdf logpdf pdf"),
    "logistic": (_grid(-15, 15), [LOC, SCALE], "cdf isf logpdf pdf ppf sf"),
    "norm": (_grid(-12, 12), [LOC, SCALE], "cdf isf logcdf logpdf logsf pdf ppf sf"),
    "pareto": (_grid(-1, 20), [[0.5, 2, 5], LOC, SCALE], "cdf logcdf logpdf logsf pdf ppf sf"),
    "t": (_grid(-20, 20), [[1, 2.5, 30], LOC, SCALE], "logpdf pdf"),
    "truncnorm": (_grid(-4, 6), [[-INF, -1, 0.5], [1, 2, INF], LOC, SCALE],
                  "cdf logcdf logpdf logsf pdf sf"),
    "uniform": (_grid(-3, 6), [LOC, SCALE], "cdf logpdf pdf ppf"),
    "vonmises": (_grid(-7, 7), [[0.1, 1, 50]], "logpdf pdf"),
    "wrapcauchy": (_grid(-1, 7), [[0.1, 0.5, 0.9]], "logpdf pdf"),
}
CASES = [(name, fn) for name, (_, _, fns) in SPECS.items() for fn in fns.split()]

# Where JAX 0.10.2 deliberately differs from SciPy on valid parameters:
# (name, functions, where (on the first argument), JAX's value; None: see test_jax_departures).
JAX_DIFFERS = [
    ("cauchy", "ppf isf", lambda q: (q == 0) | (q == 1), None),  # tan(+-pi/2) is finite
    ("gumbel_l", "ppf", lambda q: (q == 0) | (q == 1), NAN),
    ("gumbel_r", "ppf", lambda q: (q == 0) | (q == 1), NAN),
    ("truncnorm", "cdf sf", np.isnan, 1.0), ("truncnorm", "logcdf logsf", np.isnan, 0.0),
]
# In float32, JAX's 1 - q (isf) and pi * q - pi / 2 lose the digits of q near 0 and 1.
FLOAT32_ROUGH_TAILS = {("norm", "isf"), ("cauchy", "isf"), ("cauchy", "ppf")}


def _args(name, fn, dtype):
  points, params, _ = SPECS[name]
  first = PROBS if fn in ("ppf", "isf") else points
  return [first.astype(dtype)[:, None]] + [np.array(p, dtype) for p in params]


def _call(name, fn):
  return getattr(getattr(stats, name), fn)


def _compare(name, fn, dtype, rtol, atol):
  args = _args(name, fn, dtype)
  got = np.asarray(_call(name, fn)(*args), np.float64)
  with np.errstate(all="ignore"):
    expected = getattr(getattr(osp, name), fn)(*[a.astype(np.float64) for a in args])
  expected = np.array(np.broadcast_to(expected, got.shape))
  first = np.broadcast_to(args[0], got.shape)
  for other, fns, where, value in JAX_DIFFERS:
    if other == name and fn in fns.split():
      mask = where(first)
      expected[mask] = got[mask] if value is None else value
  if dtype == np.float32 and (name, fn) in FLOAT32_ROUGH_TAILS:
    mask = (np.abs(first - 0.5) > 0.49) & (np.abs(first - 0.5) < 0.5)
    expected[mask] = got[mask]
  np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=f"{name}.{fn}")


@pytest.mark.parametrize("name, fn", CASES)
def test_value_float32_matches_scipy(name, fn):
  assert _call(name, fn)(*_args(name, fn, np.float32)).dtype == np.float32
  _compare(name, fn, np.float32, rtol=3e-4, atol=2e-6)


@pytest.mark.parametrize("name, fn", CASES)
def test_value_float64_matches_scipy(x64, name, fn):
  assert _call(name, fn)(*_args(name, fn, np.float64)).dtype == np.float64
  _compare(name, fn, np.float64, rtol=1e-8, atol=1e-13)


# Under jit, XLA folds z - exp(z) at z = inf to inf where eager gives NaN (real JAX too).
JIT_DIFFERS = {("gumbel_l", "logpdf"): INF, ("gumbel_l", "pdf"): INF,
               ("gumbel_r", "logpdf"): -INF, ("gumbel_r", "pdf"): -INF}
# jit recompiles the whole function: a few per distribution keep the file fast (truncnorm is
# jitted already, and vmap of it compiles a batched copy; the cdfs of beta, chi2 and gamma are
# the loops of betainc/gammainc, jitted in test_special).
JIT_FUNCTIONS = ("logpdf", "cdf", "ppf")
JIT_SKIP = {"truncnorm", "beta.cdf", "chi2.cdf", "gamma.cdf"}
VMAP_SKIP = {("truncnorm", fn) for fn in ("cdf", "sf", "logsf", "pdf")}


@pytest.mark.parametrize("name", SPECS)
def test_jit_and_vmap_match_eager(name):
  for fn in SPECS[name][2].split():
    f = _call(name, fn)
    args = _args(name, fn, np.float32)
    eager = np.asarray(f(*args))
    first = np.broadcast_to(args[0], eager.shape)
    keep = np.abs(first - 0.5) < 0.49 if fn in ("ppf", "isf") else first != JIT_DIFFERS.get(
        (name, fn), NAN)  # the tails of ppf/isf amplify rounding differences
    if fn in JIT_FUNCTIONS and not {name, f"{name}.{fn}"} & JIT_SKIP:
      np.testing.assert_allclose(np.asarray(xjax.jit(f)(*args))[keep], eager[keep], rtol=1e-5,
                                 atol=1e-7, err_msg=f"{name}.{fn}")
    if (name, fn) not in VMAP_SKIP:
      in_axes = (0,) + (None,) * (len(args) - 1)
      np.testing.assert_allclose(xjax.vmap(f, in_axes=in_axes)(*args), eager, rtol=1e-5,
                                 atol=1e-7, err_msg=f"{name}.{fn}")


def test_jax_departures():
  # Values of real JAX 0.10.2 (float32 unless under x64), where SciPy gives others.
  q = np.array([0.0, 1.0], np.float32)
  for f in (stats.cauchy.ppf, stats.cauchy.isf):
    out = np.asarray(f(q))
    assert np.all(np.isfinite(out)) and np.all(np.abs(out) > 1e7), out
  np.testing.assert_array_equal(stats.cauchy.ppf(q), [2.2877334e7, -2.2877334e7])
  assert np.isnan(stats.uniform.logpdf(NAN, 0.0, 2.0))  # SciPy's NaN (JAX gives -log 2)
  # SciPy's values (JAX: NaN at both, 0 * log(0) and 0 * inf).
  np.testing.assert_allclose(stats.chi2.logpdf(0.0, 2.0), -np.log(2.0), rtol=1e-6)
  assert stats.chi2.logpdf(INF, 2.0) == -INF
  np.testing.assert_allclose(stats.expon.ppf(np.array([-0.5, 1.5, NAN])), [NAN] * 3)
  np.testing.assert_allclose(stats.cauchy.ppf(1.25), -1.0, rtol=1e-5)  # q is not checked
  np.testing.assert_allclose(stats.beta.logpdf(0.5, np.array([-1.0, 1, 1]), np.array([1.0, 0, 1]),
                                               0.0, np.array([1.0, 1, -1])), [NAN] * 3)
  for name in ("gumbel_l", "gumbel_r"):
    for fn in ("logpdf", "logsf"):
      assert np.isnan(_call(name, fn)(0.5, 0.0, 0.0)), (name, fn)
  assert np.isnan(stats.vonmises.logpdf(0.5, 0.0))
  np.testing.assert_allclose(stats.wrapcauchy.logpdf(1.0, np.array([0.0, 1.0, -0.5])), [NAN] * 3)
  np.testing.assert_allclose(stats.truncnorm.logpdf(0.0, np.array([1.0, 2.0]), 1.0), [NAN] * 2)


def _dtype(f, *args):
  return xjax.eval_shape(f, *args).dtype


def test_dtype_promotion():
  assert stats.expon.pdf(np.int32(1)).dtype == np.float32  # eagerly, integers become floats
  assert _dtype(stats.norm.logpdf, np.float16(1)) == np.float16
  assert _dtype(stats.gamma.cdf, np.arange(3), 2) == np.float32
  assert _dtype(stats.norm.ppf, np.float32(0.3)) == np.float32
  with xjax._src.config.enable_x64(True):
    assert _dtype(stats.t.logpdf, np.float32(1), 3.0) == np.float32
    assert _dtype(stats.t.logpdf, np.float32(1), np.float64(3)) == np.float64
    assert _dtype(stats.beta.cdf, np.arange(3), 2, 3) == np.float64
    assert _dtype(stats.norm.ppf, np.float32(0.3)) == np.float64  # JAX's asarray(.., float)
    assert _dtype(stats.multivariate_normal.logpdf, np.ones(2, np.float32), np.zeros(2, np.float32),
                  np.eye(2, dtype=np.float32)) == np.float32
    for name, fn in CASES:  # float32 arguments with weakly typed Python defaults stay float32
      args = _args(name, fn, np.float32)
      expected = np.float64 if (name, fn) in (("norm", "ppf"), ("norm", "isf")) else np.float32
      assert _dtype(_call(name, fn), *args) == expected, (name, fn)
      assert _dtype(_call(name, fn), np.float32(0.5), *[1.5] * (len(args) - 1)) == expected


def test_loc_scale_broadcasting():
  x = np.linspace(-2, 2, 5)[:, None, None]
  loc = np.array([0.0, 1.0])[:, None]
  scale = np.array([0.5, 1.0, 2.0])
  got = stats.norm.logcdf(x, loc, scale)
  assert got.shape == (5, 2, 3)
  np.testing.assert_allclose(got, osp.norm.logcdf(x, loc, scale), rtol=1e-5, atol=1e-7)
  got = stats.gamma.sf(x + 2, np.array([1.0, 3.0])[:, None], 0.0, scale)
  np.testing.assert_allclose(got, osp.gamma.sf(x + 2, np.array([1.0, 3.0])[:, None], 0.0, scale),
                             rtol=1e-5)


def test_dirichlet_matches_scipy(x64):
  rng = np.random.default_rng(0)
  alpha = np.array([0.7, 2.0, 3.5, 1.0])
  x = rng.dirichlet(alpha, size=6).T  # (K, N): points along axis 0
  np.testing.assert_allclose(stats.dirichlet.logpdf(x, alpha), osp.dirichlet.logpdf(x, alpha),
                             rtol=1e-10)
  np.testing.assert_allclose(stats.dirichlet.pdf(x[:-1], alpha), osp.dirichlet.pdf(x, alpha),
                             rtol=1e-10)
  np.testing.assert_allclose(stats.dirichlet.logpdf(x[:, 0], alpha),
                             osp.dirichlet.logpdf(x[:, 0], alpha), rtol=1e-10)
  off = np.array([[0.5, 0.2, 0.2, 0.1 + 1e-3], [0.5, 0.5, 0.0, 0.0], [1.2, -0.2, 0.0, 0.0]]).T
  np.testing.assert_array_equal(stats.dirichlet.logpdf(off, alpha), [-INF] * 3)
  x3 = rng.dirichlet(alpha, size=(2, 3)).transpose(2, 0, 1)  # (K, 2, 3)
  assert stats.dirichlet.logpdf(x3, alpha).shape == (2, 3)
  np.testing.assert_allclose(stats.dirichlet.logpdf(x3, alpha)[1],
                             osp.dirichlet.logpdf(x3[:, 1], alpha), rtol=1e-10)


def _spd(rng, n, batch=()):
  a = rng.normal(size=batch + (n, n))
  return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def test_multivariate_normal_matches_scipy(x64, rng):
  mean = rng.normal(size=3)
  cov = _spd(rng, 3)
  x = rng.normal(size=(4, 3))
  np.testing.assert_allclose(stats.multivariate_normal.logpdf(x, mean, cov),
                             osp.multivariate_normal.logpdf(x, mean, cov), rtol=1e-10)
  np.testing.assert_allclose(stats.multivariate_normal.pdf(x, mean, cov),
                             osp.multivariate_normal.pdf(x, mean, cov), rtol=1e-10)
  # a batch of covariances, broadcast against the points
  covs = _spd(rng, 3, (2,))
  got = stats.multivariate_normal.logpdf(x[:, None], mean, covs)
  assert got.shape == (4, 2)
  np.testing.assert_allclose(got[:, 1], osp.multivariate_normal.logpdf(x, mean, covs[1]),
                             rtol=1e-10)
  # a scalar covariance (times the identity) and a scalar mean (elementwise univariate)
  np.testing.assert_allclose(stats.multivariate_normal.logpdf(x, mean, 2.0),
                             osp.multivariate_normal.logpdf(x, mean, 2.0 * np.eye(3)), rtol=1e-10)
  np.testing.assert_allclose(stats.multivariate_normal.logpdf(x, 0.5, 2.0),
                             osp.norm.logpdf(x, 0.5, np.sqrt(2.0)), rtol=1e-10)
  # jit and vmap agree with eager
  f = stats.multivariate_normal.logpdf
  np.testing.assert_allclose(xjax.jit(f)(x, mean, cov), f(x, mean, cov), rtol=1e-12)
  np.testing.assert_allclose(xjax.vmap(f, in_axes=(0, None, None))(x, mean, cov),
                             f(x, mean, cov), rtol=1e-12)


def test_errors():
  with pytest.raises(TypeError, match="norm.logpdf requires ndarray or scalar arguments"):
    stats.norm.logpdf([1.0])
  with pytest.raises(ValueError, match=r"`alpha` must be one-dimensional; got alpha.shape=\(3, 1\)"):
    stats.dirichlet.logpdf(np.ones(3) / 3, np.ones((3, 1)))
  with pytest.raises(ValueError, match="`x` must have either the same number of entries as "
                     r"`alpha` or one entry fewer; got x.shape=\(5,\), alpha.shape=\(3,\)"):
    stats.dirichlet.pdf(np.ones(5) / 5, np.ones(3))
  with pytest.raises(ValueError, match="multivariate_normal.logpdf got incompatible shapes"):
    stats.multivariate_normal.logpdf(np.ones(3), np.ones(3), np.eye(2))
  with pytest.raises(NotImplementedError, match="allow_singular argument"):
    stats.multivariate_normal.logpdf(np.ones(3), np.ones(3), np.eye(3), allow_singular=True)
  with pytest.raises(TypeError):
    stats.norm.ppf(0)  # ndtri takes float32 or float64 only


def _f64(*values):
  return tuple(jnp.asarray(v, jnp.float64) for v in values)


GRADS = [
    (lambda x, m, s: stats.norm.logpdf(x, m, s), (0.3, -0.2, 1.5)),
    (lambda x, m, s: stats.norm.cdf(x, m, s), (0.3, -0.2, 1.5)),
    (lambda x: stats.norm.logcdf(x), (np.array([-30.0, -3.0, 0.5, 4.0]),)),
    (lambda x, df, s: stats.t.logpdf(x, df, 0.5, s), (1.2, 3.5, 2.0)),
    (lambda x, a, s: stats.gamma.logpdf(x, a, 0.0, s), (1.7, 2.5, 1.3)),
    (lambda x: stats.gamma.cdf(x, 2.5), (1.7,)),
    (lambda x, a, b: stats.beta.logpdf(x, a, b), (0.3, 2.5, 1.5)),
    (lambda x, a, b: stats.truncnorm.logpdf(x, a, b, 0.5, 2.0), (0.7, -1.0, 1.5)),
    (lambda x: stats.truncnorm.logcdf(x, -1.0, 1.5, 0.5, 2.0), (0.7,)),
    (lambda x, alpha: stats.dirichlet.logpdf(x, alpha),
     (np.array([0.2, 0.3]), np.array([1.5, 2.0, 3.0]))),
]


@pytest.mark.parametrize("i", range(len(GRADS)))
def test_grads_match_finite_differences(x64, i):
  f, args = GRADS[i]
  check_grads(f, _f64(*args), order=1, atol=1e-5, rtol=1e-5)


def test_multivariate_normal_grads(x64, rng):
  cov = _spd(rng, 3)
  check_grads(stats.multivariate_normal.logpdf, _f64(rng.normal(size=(2, 3)), rng.normal(size=3),
                                                      cov), order=1, atol=1e-5, rtol=1e-5)
