"""xjax.scipy.stats.gaussian_kde, mode, rankdata and sem against scipy.stats: values,
weights and bandwidth methods, pytree behaviour, jit/vmap/grad, resample against golden
draws from real JAX, and JAX's errors."""
import numpy as np
import pytest
import scipy.stats as osp

import xjax
import xjax.numpy as jnp
import xjax.scipy.stats as xst
from xjax._src.config import threefry_partitionable
from xjax.test_util import check_grads


@pytest.fixture
def data(rng):
  return rng.normal(size=(2, 9)), rng.uniform(0.2, 1.0, size=9), rng.normal(size=(2, 5))


@pytest.mark.parametrize("bw_method", [None, "scott", "silverman", 0.6,
                                       lambda kde: 0.5 * kde.neff ** -0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_kde_matches_scipy(data, bw_method, weighted, x64):
  dataset, weights, points = data
  weights = weights if weighted else None
  ours = xst.gaussian_kde(dataset, bw_method=bw_method, weights=weights)
  theirs = osp.gaussian_kde(dataset, bw_method=bw_method, weights=weights)
  for attr in ("dataset", "weights", "neff", "covariance", "inv_cov", "d", "n"):
    np.testing.assert_allclose(np.asarray(getattr(ours, attr)), getattr(theirs, attr), rtol=1e-12)
  expected = theirs.evaluate(points)
  for method in (ours.evaluate, ours.pdf, ours):
    np.testing.assert_allclose(method(points), expected, rtol=1e-12)
  np.testing.assert_allclose(ours.logpdf(points), theirs.logpdf(points), rtol=1e-12)
  np.testing.assert_allclose(ours.integrate_gaussian(np.array([0.3, -0.2]), np.eye(2) * 0.5),
                             theirs.integrate_gaussian(np.array([0.3, -0.2]), np.eye(2) * 0.5),
                             rtol=1e-12)


def test_kde_one_dimensional(rng, x64):
  dataset = rng.normal(size=12)
  ours, theirs = xst.gaussian_kde(dataset), osp.gaussian_kde(dataset)
  x = np.array([-3.0, -0.5, 0.0, 0.7, 10.0])
  np.testing.assert_allclose(ours(x), theirs(x), rtol=1e-12)
  np.testing.assert_allclose(ours.logpdf(x), theirs.logpdf(x), rtol=1e-12)
  np.testing.assert_allclose(ours.logpdf(60.0), theirs.logpdf(60.0), rtol=1e-12)  # pdf underflows
  for low, high in [(-0.5, 1.0), (-np.inf, 0.2), (2.0, -1.0), (-np.inf, np.inf)]:
    np.testing.assert_allclose(ours.integrate_box_1d(low, high), theirs.integrate_box_1d(low, high),
                               rtol=1e-12)
  other = rng.normal(size=7) + 0.5
  np.testing.assert_allclose(ours.integrate_kde(xst.gaussian_kde(other)),
                             theirs.integrate_kde(osp.gaussian_kde(other)), rtol=1e-12)
  np.testing.assert_allclose(xst.gaussian_kde(other).integrate_kde(ours),
                             theirs.integrate_kde(osp.gaussian_kde(other)), rtol=1e-12)


def test_kde_point_shapes_and_dtypes(data):
  dataset, weights, points = data
  kde = xst.gaussian_kde(dataset.astype(np.float32))
  assert kde.dataset.dtype == np.float32 and kde.covariance.dtype == np.float32
  assert kde(points).shape == (5,)
  assert kde(points[:, 0]).shape == (1,)  # a (d,) vector is one point
  assert xst.gaussian_kde(np.arange(5)).dataset.dtype == np.float32  # ints promote
  mixed = xst.gaussian_kde(dataset.astype(np.float16), weights=weights.astype(np.float32))
  assert mixed.dataset.dtype == np.float32 and mixed.weights.dtype == np.float32
  np.testing.assert_allclose(float(jnp.sum(mixed.weights)), 1.0, rtol=1e-6)


def test_kde_is_a_pytree(data, x64):
  dataset, weights, points = data
  kde = xst.gaussian_kde(dataset, weights=weights)
  leaves, treedef = xjax.tree_util.tree_flatten(kde)
  assert [np.shape(leaf) for leaf in leaves] == [(), (2, 9), (9,), (2, 2), (2, 2)]
  rebuilt = xjax.tree_util.tree_unflatten(treedef, leaves)
  assert type(rebuilt) is xst.gaussian_kde
  np.testing.assert_array_equal(rebuilt.evaluate(points), kde.evaluate(points))
  # Through jit as an argument, and vmapped over the points.
  jitted = xjax.jit(lambda k, x: k.logpdf(x))(kde, points)
  np.testing.assert_allclose(jitted, kde.logpdf(points), rtol=1e-13)
  mapped = xjax.vmap(lambda x: kde.evaluate(x), in_axes=1)(points)
  np.testing.assert_allclose(mapped[:, 0], kde.evaluate(points), rtol=1e-13)
  # Built inside jit, returned as an output.
  built = xjax.jit(lambda d, w: xst.gaussian_kde(d, weights=w))(dataset, weights)
  np.testing.assert_allclose(built.covariance, kde.covariance, rtol=1e-13)
  with pytest.raises(Exception):  # frozen dataclass
    kde.neff = 1.0


def test_kde_grads(data, x64):
  dataset, weights, points = data
  kde = xst.gaussian_kde(dataset, weights=weights)
  check_grads(lambda x: kde.logpdf(x), (points,), order=1)
  check_grads(lambda x: kde.evaluate(x), (points[:, :2],), order=1, modes=("rev",))
  # Gradient with respect to the data, through the bandwidth and covariance.
  check_grads(lambda d: xst.gaussian_kde(d).logpdf(points[:, :2]), (dataset,), order=1,
              modes=("rev",))


def test_kde_resample_matches_jax():
  # Golden draws from jax.scipy.stats.gaussian_kde.resample (JAX 0.10.2, whose default
  # threefry stream is the partitionable one), keys PRNGKey(3) and PRNGKey(0).
  dataset = np.random.default_rng(0).normal(size=(2, 7)).astype(np.float32)
  weights = np.array([0.1, 0.3, 0.05, 0.2, 0.15, 0.1, 0.1], np.float32)
  with threefry_partitionable(True):
    kde1 = xst.gaussian_kde(dataset[0])
    got = kde1.resample(xjax.random.PRNGKey(3), (5,))
    np.testing.assert_allclose(got, [[0.5299211, 1.3457533, -0.5546266, 0.4834869, 0.5189104]],
                               rtol=1e-6)
    assert got.shape == (1, 5) and got.dtype == np.float32
    assert kde1.resample(xjax.random.PRNGKey(3)).shape == (1,)
    got = xst.gaussian_kde(dataset, weights=weights).resample(xjax.random.PRNGKey(0), (3,))
    np.testing.assert_allclose(got, [[-1.1390505, 0.4463343, -0.84980667],
                                     [-1.760626, -2.5809472, -0.6454839]], rtol=1e-5, atol=1e-6)


def test_kde_resample_statistics(data, x64):
  dataset, weights, _ = data
  kde = xst.gaussian_kde(dataset, weights=weights, bw_method=0.3)
  samples = np.asarray(kde.resample(xjax.random.key(1), (4000,)))
  assert samples.shape == (2, 4000)
  mean = np.sum(dataset * kde.weights, axis=1)
  np.testing.assert_allclose(samples.mean(axis=1), mean, atol=0.08)
  total_cov = np.cov(dataset, aweights=weights) + kde.covariance
  np.testing.assert_allclose(np.cov(samples), total_cov, atol=0.12)


def test_kde_errors(data):
  dataset, _, _ = data
  kde1 = xst.gaussian_kde(dataset[0])
  kde2 = xst.gaussian_kde(dataset)
  cases = [
      (lambda: xst.gaussian_kde([1.0, 2.0]), TypeError,
       "gaussian_kde requires ndarray or scalar arguments, got <class 'list'> at position 0."),
      (lambda: xst.gaussian_kde(np.array([1.0])), ValueError,
       "`dataset` input should have multiple elements."),
      (lambda: xst.gaussian_kde(dataset + 1j), NotImplementedError,
       "gaussian_kde does not support complex data"),
      (lambda: xst.gaussian_kde(dataset[0], weights=np.ones((3, 3))), ValueError,
       "`weights` input should be one-dimensional."),
      (lambda: xst.gaussian_kde(dataset[0], weights=np.ones(4)), ValueError,
       "`weights` input should be of length n"),
      (lambda: xst.gaussian_kde(dataset[0], bw_method="foo"), ValueError,
       "`bw_method` should be 'scott', 'silverman', a scalar, or a callable."),
      (lambda: xst.gaussian_kde(dataset[0], bw_method=np.array([0.5])), ValueError,
       "`bw_method` should be"),
      (lambda: kde1.evaluate([1.0]), TypeError,
       "evaluate requires ndarray or scalar arguments, got <class 'list'> at position 0."),
      (lambda: kde1.logpdf(np.ones((2, 3))), ValueError,
       "points have dimension 2, dataset has dimension 1"),
      (lambda: kde1.pdf(np.ones(3) + 1j), NotImplementedError,
       "gaussian_kde does not support complex coordinates"),
      (lambda: kde1.integrate_box_1d(np.zeros(2), 1.0), ValueError,
       "the limits of integration in integrate_box_1d must be scalars"),
      (lambda: kde2.integrate_box_1d(0.0, 1.0), ValueError,
       r"integrate_box_1d\(\) only handles 1D pdfs"),
      (lambda: kde2.integrate_gaussian(np.zeros(3), np.eye(2)), ValueError,
       "mean does not have dimension 2"),
      (lambda: kde2.integrate_gaussian(np.zeros(2), 1.0), ValueError,
       "covariance does not have dimension 2"),
      (lambda: kde1.integrate_kde(kde2), ValueError, "KDEs are not the same dimensionality"),
      (lambda: kde1.set_bandwidth("scott"), NotImplementedError,
       "dynamically changing the bandwidth method is not supported"),
      (lambda: kde1.integrate_box(0.0, 1.0), NotImplementedError,
       "only 1D box integrations are supported; use `integrate_box_1d`"),
  ]
  for fun, error, message in cases:
    with pytest.raises(error, match=message):
      fun()


# ----------------------------------------------------------------------------
# mode


def test_mode_matches_scipy(rng):
  x = rng.integers(0, 4, size=(7, 3, 5))
  for axis in (0, 1, -1, None):
    for keepdims in (False, True):
      ours = xst.mode(x, axis=axis, keepdims=keepdims)
      theirs = osp.mode(x, axis=axis, keepdims=keepdims)
      np.testing.assert_array_equal(ours.mode, theirs.mode)
      np.testing.assert_array_equal(ours.count, theirs.count)
      assert ours.mode.dtype == np.int32 and ours.count.dtype == np.int32
  ours = xst.mode(np.array([2.5, -1.0, 2.5, -1.0, 7.0]))  # ties go to the smallest value
  assert (float(ours.mode), int(ours.count)) == (-1.0, 2)
  assert xst.mode(3.0).mode.shape == ()  # a scalar is treated as shape (1,)


def test_mode_nan_and_empty():
  # Golden results from jax.scipy.stats.mode (real JAX 0.10.2): NaNs count as one value.
  result = xst.mode(np.array([1.0, np.nan, np.nan, np.nan, 2.0, 2.0]))
  assert np.isnan(result.mode) and int(result.count) == 3
  result = xst.mode(np.zeros((0, 3), np.float32))
  np.testing.assert_array_equal(result.mode, [np.nan] * 3)
  np.testing.assert_array_equal(result.count, [0.0] * 3)
  assert result.count.dtype == np.float32
  result = xst.mode(np.zeros((3, 0), np.int32))
  assert result.mode.shape == (0,) and result.mode.dtype == result.count.dtype == np.int32


def test_mode_jit_vmap_and_errors(rng):
  x = rng.integers(0, 3, size=(6, 4))
  eager = xst.mode(x, axis=1)
  jitted = xjax.jit(lambda a: xst.mode(a, axis=1))(x)
  mapped = xjax.vmap(lambda row: xst.mode(row))(x)
  for out in (jitted, mapped):
    np.testing.assert_array_equal(out.mode, eager.mode)
    np.testing.assert_array_equal(out.count, eager.count)
  with pytest.raises(ValueError, match="Illegal nan_policy value 'foo'; expected one of"):
    xst.mode(x, nan_policy="foo")
  with pytest.raises(NotImplementedError, match="Logic for `nan_policy` of omit is not implemented"):
    xst.mode(x, nan_policy="omit")
  with pytest.raises(NotImplementedError, match="In order to best JIT compile `mode`"):
    xst.mode(x, nan_policy="raise")
  with pytest.raises(TypeError, match="mode requires ndarray or scalar arguments"):
    xst.mode([1, 2])


# ----------------------------------------------------------------------------
# rankdata

METHODS = ["average", "min", "max", "dense", "ordinal"]


@pytest.mark.parametrize("method", METHODS)
def test_rankdata_matches_scipy(rng, method):
  x = rng.integers(0, 5, size=(4, 6)).astype(np.float32)
  x[0, 0] = -0.0
  out = xst.rankdata(x, method)
  assert out.dtype == np.float32 and out.shape == (24,)
  np.testing.assert_array_equal(out, osp.rankdata(x, method))
  for axis in (0, 1, -1):
    out = xst.rankdata(x, method, axis=axis)
    assert out.shape == x.shape
    np.testing.assert_array_equal(out, osp.rankdata(x, method, axis=axis))
  np.testing.assert_array_equal(xst.rankdata(np.array([10, 30, 20]), method),
                                osp.rankdata([10, 30, 20], method))


def test_rankdata_nan_empty_jit_vmap(rng, x64):
  x = np.array([[3.0, np.nan, 1.0], [2.0, 2.0, 1.0]])
  # A slice holding a NaN gets all-NaN ranks (SciPy's nan_policy="propagate").
  np.testing.assert_array_equal(xst.rankdata(x, axis=1), osp.rankdata(x, axis=1))
  assert np.isnan(xst.rankdata(x)).all()
  assert xst.rankdata(np.zeros(0)).shape == (0,)
  assert xst.rankdata(np.arange(4)).dtype == np.float64
  y = rng.integers(0, 4, size=(5, 7))
  for method in ("average", "ordinal"):
    eager = xst.rankdata(y, method, axis=1)
    np.testing.assert_array_equal(xjax.jit(lambda a: xst.rankdata(a, method, axis=1))(y), eager)
    np.testing.assert_array_equal(xjax.vmap(lambda r: xst.rankdata(r, method))(y), eager)


def test_rankdata_errors():
  with pytest.raises(ValueError, match="unknown method 'median'"):
    xst.rankdata(np.arange(3), "median")
  with pytest.raises(ValueError, match="Illegal nan_policy value 'bad'"):
    xst.rankdata(np.arange(3), nan_policy="bad")
  with pytest.raises(NotImplementedError, match="Logic for `nan_policy` of omit"):
    xst.rankdata(np.arange(3), nan_policy="omit")
  with pytest.raises(NotImplementedError, match="In order to best JIT compile `rankdata`"):
    xst.rankdata(np.arange(3), nan_policy="raise")
  with pytest.raises(TypeError, match="rankdata requires ndarray or scalar arguments"):
    xst.rankdata([1, 2])


# ----------------------------------------------------------------------------
# sem


def test_sem_matches_scipy(rng, x64):
  x = rng.normal(size=(5, 4))
  for axis in (0, 1, None):
    for ddof in (0, 1, 2):
      for keepdims in (False, True):
        np.testing.assert_allclose(xst.sem(x, axis, ddof, keepdims=keepdims),
                                   osp.sem(x, axis, ddof, keepdims=keepdims), rtol=1e-12)
  x[1, 2] = x[3, 0] = np.nan
  np.testing.assert_allclose(xst.sem(x), osp.sem(x), rtol=1e-12, equal_nan=True)
  np.testing.assert_allclose(xst.sem(x, nan_policy="omit"), osp.sem(x, nan_policy="omit"),
                             rtol=1e-12)
  np.testing.assert_allclose(xst.sem(x, axis=None, nan_policy="omit"),
                             osp.sem(x, axis=None, nan_policy="omit"), rtol=1e-12)


def test_sem_dtypes_transforms_and_errors(rng):
  x1 = np.array([[1, 2, 1, 3, 2, 1], [3, 1, 3, 2, 1, 3], [1, 2, 2, 3, 1, 2]])
  out = xst.sem(x1, axis=1)
  assert out.dtype == np.float32
  np.testing.assert_allclose(out, osp.sem(x1, axis=1), rtol=1e-6)
  assert xst.sem(x1.astype(np.float16)).dtype == np.float16
  x = rng.normal(size=(4, 6)).astype(np.float32)
  np.testing.assert_allclose(xjax.vmap(xst.sem)(x), osp.sem(x, axis=1), rtol=1e-5)
  np.testing.assert_allclose(xjax.jit(xst.sem)(x, ddof=2), osp.sem(x, ddof=2), rtol=1e-5)
  # d sem / dx_i = (x_i - mean) / ((n - 1) sqrt(n) std).
  check_grads(lambda a: xst.sem(a, axis=None), (x.astype(np.float32),), order=1, modes=("rev",),
              atol=1e-2, rtol=1e-2)
  with pytest.raises(ValueError, match="raise is not supported"):
    xst.sem(x, nan_policy="raise")
