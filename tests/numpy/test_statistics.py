"""searchsorted, digitize, the quantile family, average, cov, corrcoef and the
histograms, against NumPy (and against values from JAX 0.10.2 where they differ)."""
import doctest

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from jnp_checks import assert_values, check
from xjax._src.numpy import statistics

F32 = np.dtype(np.float32)
I32 = np.dtype(np.int32)
rng = np.random.default_rng(0)

# ----------------------------------------------------------------------------
# searchsorted and digitize

SEARCH_METHODS = ["scan", "scan_unrolled", "sort", "compare_all"]
SORTED = {
    "float32": np.array([-1.5, 0.0, 0.0, 2.0, 3.5, np.inf, np.nan], np.float32),
    "int32": np.array([-3, 0, 0, 1, 7, 7, 9], np.int32),
    "uint8": np.array([0, 2, 2, 5, 200], np.uint8),
}
QUERIES = {
    "float32": np.array([[-2.0, 0.0, 1.0, np.nan], [3.5, np.inf, -np.inf, 9.0]], np.float32),
    "int32": np.array([[-4, 0, 7], [9, 10, 1]], np.int32),
    "uint8": np.array([0, 1, 2, 5, 255], np.uint8),
}


@pytest.mark.parametrize("method", SEARCH_METHODS)
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("kind", sorted(SORTED))
def test_searchsorted_matches_numpy(method, side, kind):
  check(lambda a, v: jnp.searchsorted(a, v, side=side, method=method),
        lambda a, v: np.searchsorted(a, v, side=side), SORTED[kind], QUERIES[kind], dtype=I32)


@pytest.mark.parametrize("method", SEARCH_METHODS)
def test_searchsorted_scalar_empty_and_promotion(method):
  a = np.arange(5, dtype=np.int32)
  check(lambda a: jnp.searchsorted(a, 2.5, method=method), lambda a: np.searchsorted(a, 2.5),
        a, dtype=I32)
  out = jnp.searchsorted(np.zeros(0, np.float32), np.ones((2, 3), np.float32), method=method)
  assert out.shape == (2, 3) and out.dtype == I32 and not np.asarray(out).any()
  empty_v = jnp.searchsorted(a, np.zeros((0,), np.int32), method=method)
  assert empty_v.shape == (0,) and empty_v.dtype == I32


@pytest.mark.parametrize("method", SEARCH_METHODS)
def test_searchsorted_complex_orders_by_real_then_imag(method):
  a = np.array([1 + 1j, 1 + 2j, 2 + 0j, 2 + 5j], np.complex64)
  v = np.array([1 + 1.5j, 2 + 0j, 0j, 3 + 0j, 2 + 1j], np.complex64)
  for side in ("left", "right"):
    got = jnp.searchsorted(a, v, side=side, method=method)
    np.testing.assert_array_equal(got, np.searchsorted(a, v, side=side))


def test_searchsorted_sorter():
  a = np.array([3.0, 1.0, 2.0, 5.0], np.float32)
  v = np.array([2.0, 0.0, 6.0, 3.0], np.float32)
  sorter = np.argsort(a)
  check(lambda a, v, s: jnp.searchsorted(a, v, sorter=s),
        lambda a, v, s: np.searchsorted(a, v, sorter=s), a, v, sorter, dtype=I32)


def test_searchsorted_vmap_over_queries():
  a = np.array([0.0, 1.0, 2.0, 3.0], np.float32)
  v = np.array([[0.5, 3.0], [-1.0, 2.0], [9.0, 1.0]], np.float32)
  for method in SEARCH_METHODS:
    got = xjax.vmap(lambda row: jnp.searchsorted(a, row, side="right", method=method))(v)
    np.testing.assert_array_equal(got, np.searchsorted(a, v, side="right"))


@pytest.mark.parametrize("kwargs, exc, msg", [
    (dict(side="middle"), ValueError, "invalid argument side='middle', expected 'left' or 'right'"),
    (dict(method="bisect"), ValueError, "invalid argument method='bisect', expected one of"),
])
def test_searchsorted_bad_arguments(kwargs, exc, msg):
  with pytest.raises(exc, match=msg):
    jnp.searchsorted(np.arange(3.0), 1.0, **kwargs)


def test_searchsorted_requires_1d_and_arraylike():
  with pytest.raises(ValueError, match="a should be 1-dimensional"):
    jnp.searchsorted(np.ones((2, 2)), 1.0)
  with pytest.raises(TypeError, match="searchsorted requires ndarray or scalar arguments"):
    jnp.searchsorted([1, 2, 3], 1.0)


@pytest.mark.parametrize("bins", [np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0]),
                                  np.array([0.0, 0.0, 1.0, 1.0])], ids=["inc", "dec", "repeat"])
@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("method", [None, "compare_all"])
def test_digitize_matches_numpy(bins, right, method):
  x = np.array([[-1.0, 0.0, 1.0, 1.5], [2.0, 2.5, 3.0, 4.0]], np.float32)
  check(lambda x, b: jnp.digitize(x, b, right=right, method=method),
        lambda x, b: np.digitize(x, b, right=right), x, bins.astype(np.float32), dtype=I32)


def test_digitize_empty_bins_and_errors():
  out = jnp.digitize(np.arange(4.0), np.zeros(0))
  assert out.dtype == I32
  np.testing.assert_array_equal(out, np.zeros(4))
  with pytest.raises(ValueError, match="digitize: bins must be a 1-dimensional array"):
    jnp.digitize(np.arange(4.0), np.ones((2, 2)))
  with pytest.raises(ValueError, match="invalid argument method='foo'"):
    jnp.digitize(np.arange(4.0), np.ones(3), method="foo")


# ----------------------------------------------------------------------------
# Quantiles

X_NAN = rng.normal(size=(3, 4, 5)).astype(np.float32)
X_NAN[1, 2, 3] = np.nan
X_NAN[2, :, 1] = np.nan
Q = np.array([0.0, 0.1, 0.55, 0.77, 1.0], np.float32)  # no ties for "nearest"
METHODS = ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("axis, keepdims", [(None, False), (None, True), (-1, False),
                                            ((2, 0), True)], ids=str)
def test_quantile_matches_numpy(method, axis, keepdims):
  x = np.random.default_rng(1).normal(size=(3, 4, 5)).astype(np.float32)
  check(lambda x, q: jnp.quantile(x, q, axis=axis, method=method, keepdims=keepdims),
        lambda x, q: np.quantile(x, q, axis=axis, method=method, keepdims=keepdims), x, Q,
        dtype=F32, tol=1e-5)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("axis", [1, (0, 2)], ids=str)
def test_quantile_and_nanquantile_with_nans(method, axis):
  q = np.array([0.27, 0.6], np.float32)
  check(lambda x, q: jnp.quantile(x, q, axis=axis, method=method),
        lambda x, q: np.quantile(x, q, axis=axis, method=method), X_NAN, q, dtype=F32, tol=1e-5)
  with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning) if axis == 1 else _null():
    check(lambda x, q: jnp.nanquantile(x, q, axis=axis, method=method),
          lambda x, q: np.nanquantile(x, q, axis=axis, method=method), X_NAN, q, dtype=F32,
          tol=1e-5)


class _null:
  def __enter__(self):
    return self

  def __exit__(self, *exc):
    return False


def test_quantile_nearest_tie_goes_low_as_in_jax():
  # NumPy rounds the tie at index 1.5 to the even index 2; JAX takes the lower one.
  assert float(jnp.quantile(np.arange(4.0), 0.5, method="nearest")) == 1.0
  np.testing.assert_array_equal(jnp.quantile(np.arange(6.0), np.array([0.1, 0.3]),
                                             method="nearest"), [0.0, 1.0])


@pytest.mark.parametrize("dtype, want", [(np.int32, F32), (np.uint8, F32), (np.bool_, F32),
                                         (np.float16, np.float16), (np.float32, F32)])
def test_quantile_result_dtype(dtype, want):
  x = (np.arange(7) % 3).astype(dtype)
  out = jnp.quantile(x, 0.3)
  assert out.dtype == want
  np.testing.assert_allclose(np.asarray(out, np.float64), np.quantile(x.astype(np.float64), 0.3),
                             rtol=1e-3)
  assert jnp.median(x).dtype == want and jnp.percentile(x, 40).dtype == want


def test_percentile_values_match_jax():
  # Values JAX 0.10.2 gives: q / 100 is rounded to float32 first.
  np.testing.assert_array_equal(jnp.percentile(np.arange(6), 30), np.float32(1.4999999))
  xi = np.arange(12).reshape(3, 4)
  check(lambda x: jnp.percentile(x, np.array([10, 50, 90]), axis=(1, 0), keepdims=True),
        lambda x: np.percentile(x, [10, 50, 90], axis=(1, 0), keepdims=True), xi, dtype=F32)
  check(lambda x: jnp.nanpercentile(x, 75.0, axis=-1),
        lambda x: np.nanpercentile(x, 75.0, axis=-1), X_NAN[:2], dtype=F32)


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_median_and_nanmedian_match_numpy(axis, keepdims):
  x = np.random.default_rng(3).normal(size=(4, 6)).astype(np.float32)
  check(lambda x: jnp.median(x, axis=axis, keepdims=keepdims),
        lambda x: np.median(x, axis=axis, keepdims=keepdims), x, dtype=F32)
  x[1, 2] = np.nan
  check(lambda x: jnp.median(x, axis=axis, keepdims=keepdims),
        lambda x: np.median(x, axis=axis, keepdims=keepdims), x, dtype=F32)
  check(lambda x: jnp.nanmedian(x, axis=axis, keepdims=keepdims),
        lambda x: np.nanmedian(x, axis=axis, keepdims=keepdims), x, dtype=F32)


def test_nanmedian_all_nan_and_zero_d():
  assert np.isnan(jnp.nanmedian(np.array([np.nan, np.nan], np.float32)))
  assert jnp.median(np.float32(3.0)) == 3.0
  assert jnp.median(3.0, keepdims=True).shape == (1,)  # as JAX: 0-d flattened to (1,)


def test_empty_inputs_as_jax():
  assert jnp.median(np.zeros((0, 3), np.float32), axis=1).shape == (0,)
  assert jnp.quantile(np.zeros((0, 3), np.float32), np.array([0.5, 0.9]), axis=1).shape == (2, 0)
  for call in (lambda: jnp.quantile(np.zeros(0), 0.5), lambda: jnp.median(np.zeros((2, 0)), 1),
               lambda: jnp.nanmedian(np.zeros((2, 0)), axis=1)):
    with pytest.raises(TypeError, match="Slice size at index .* in gather op is out of range"):
      call()
  assert np.isnan(jnp.average(np.zeros(0, np.float32)))
  with pytest.raises(ValueError, match="zero-size array to reduction operation min"):
    jnp.histogram(np.zeros(0, np.float32), 3)
  counts, edges = jnp.histogram(np.zeros(0, np.float32), 2, range=(0, 1))
  assert counts.tolist() == [0.0, 0.0] and edges.tolist() == [0.0, 0.5, 1.0]


def test_quantile_inverted_cdf_weights():
  x = np.arange(5.0, dtype=np.float32)
  w = np.array([1.0, 1.0, 1.0, 5.0, 1.0], np.float32)
  check(lambda x, w: jnp.quantile(x, np.array([0.2, 0.5, 0.9], np.float32), weights=w,
                                  method="inverted_cdf"),
        lambda x, w: np.quantile(x, [0.2, 0.5, 0.9], weights=w, method="inverted_cdf"), x, w,
        dtype=F32)
  xi = np.arange(12.0, dtype=np.float32).reshape(3, 4)[:, ::-1]
  w1 = np.array([1.0, 2.0, 0.0, 3.0], np.float32)
  check(lambda x, w: jnp.quantile(x, np.array([0.2, 0.7], np.float32), axis=1, weights=w,
                                  method="inverted_cdf"),
        lambda x, w: np.quantile(x, [0.2, 0.7], axis=1, weights=np.broadcast_to(w, x.shape),
                                 method="inverted_cdf"), xi, w1, dtype=F32)
  # A negative weight gives NaN, as in JAX.
  assert np.isnan(jnp.quantile(x, 0.5, weights=-w, method="inverted_cdf"))


def test_quantile_under_vmap():
  x = np.random.default_rng(2).normal(size=(3, 7)).astype(np.float32)
  got = xjax.vmap(lambda r: jnp.quantile(r, np.array([0.3, 0.8], np.float32)))(x)
  np.testing.assert_allclose(got, np.quantile(x, [0.3, 0.8], axis=1).T, rtol=1e-6, atol=1e-6)
  got = xjax.vmap(jnp.nanmedian)(X_NAN[:, 0])
  np.testing.assert_allclose(got, np.nanmedian(X_NAN[:, 0], axis=1), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("call, exc, msg", [
    (lambda: jnp.quantile(np.arange(4.0), 0.5, method="foo"), ValueError,
     "method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' or 'inverted_cdf'"),
    (lambda: jnp.quantile(np.arange(4.0), np.ones((2, 2))), ValueError,
     r"q must be have rank <= 1, got shape \(2, 2\)"),
    (lambda: jnp.quantile(np.arange(4.0), 0.5, overwrite_input=True), ValueError,
     "jax.numpy.quantile does not support overwrite_input=True or out != None"),
    (lambda: jnp.percentile(np.arange(4.0), 50, out=1), ValueError,
     "jax.numpy.quantile does not support"),
    (lambda: jnp.nanmedian(np.arange(4.0), overwrite_input=True), ValueError,
     "jax.numpy.nanquantile does not support"),
    (lambda: jnp.quantile(np.array([1j]), 0.5), ValueError, "quantile does not support complex"),
    (lambda: jnp.quantile(np.arange(4.0), 0.5, weights=np.ones(4)), NotImplementedError,
     "linear doesn't support weights. Only method 'inverted_cdf' supports weights."),
    (lambda: jnp.quantile(np.ones((2, 3)), 0.5, weights=np.ones(3), method="inverted_cdf"),
     ValueError, "Weights shape must match 'a' shape when axis is None."),
    (lambda: jnp.quantile(np.ones((2, 3)), 0.5, axis=0, weights=np.ones(3),
                          method="inverted_cdf"),
     ValueError, r"Weights shape \(3,\) must match reduction axes \(2,\)"),
    (lambda: jnp.quantile(np.ones(3), 0.5, weights=np.ones(3) * 1j, method="inverted_cdf"),
     ValueError, "Weights cannot be complex types."),
    (lambda: jnp.median(np.ones((2, 3)), axis=(0, 0)), ValueError, "repeated axis"),
    (lambda: jnp.median([1.0, 2.0]), TypeError, "median requires ndarray or scalar arguments"),
])
def test_quantile_errors(call, exc, msg):
  with pytest.raises(exc, match=msg):
    call()


# ----------------------------------------------------------------------------
# average, cov, corrcoef

XA = rng.normal(size=(3, 4, 2)).astype(np.float32)


@pytest.mark.parametrize("axis, wshape", [(None, None), (None, (3, 4, 2)), (1, None), (1, (4,)),
                                          (-1, (3, 4, 2)), ((0, 2), (3, 2)), ((2, 0), (2, 3))],
                         ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_average_matches_numpy(axis, wshape, keepdims):
  w = None if wshape is None else rng.uniform(0.5, 2.0, size=wshape).astype(np.float32)
  args = (XA,) if w is None else (XA, w)
  check(lambda x, w=None: jnp.average(x, axis=axis, weights=w, returned=True, keepdims=keepdims),
        lambda x, w=None: np.average(x, axis=axis, weights=w, returned=True, keepdims=keepdims),
        *args, dtype=F32)


def test_average_int_input_and_zero_d():
  check(lambda x: jnp.average(x, axis=0), lambda x: np.average(x, axis=0),
        np.arange(6, dtype=np.int32).reshape(2, 3), dtype=F32)
  avg, wsum = jnp.average(np.float32(2.0), returned=True)
  assert float(avg) == 2.0 and float(wsum) == 1.0 and wsum.dtype == F32


@pytest.mark.parametrize("axis, w, msg", [
    (None, np.ones(2), "Axis must be specified when shapes of a and weights differ."),
    (0, np.ones(4), "Shape of weights must be consistent with shape of a along specified axis."),
    ((0, 1), np.ones((4, 3)), "Shape of weights must be consistent"),
])
def test_average_weight_shape_errors(axis, w, msg):
  with pytest.raises(ValueError, match=msg):
    jnp.average(XA, axis=axis, weights=w)


COV_X = rng.normal(size=(3, 6)).astype(np.float32)
FW = np.array([1, 2, 1, 3, 1, 1], np.int32)
AW = np.array([0.5, 1.0, 2.0, 1.0, 1.0, 0.1], np.float32)


@pytest.mark.parametrize("kwargs", [
    {}, dict(rowvar=False), dict(bias=True), dict(ddof=2), dict(fweights=FW),
    dict(aweights=AW), dict(fweights=FW, aweights=AW), dict(aweights=AW, ddof=0),
    dict(fweights=FW, ddof=3), dict(aweights=AW, bias=True)], ids=str)
def test_cov_matches_numpy(kwargs):
  x = COV_X.T if kwargs.get("rowvar") is False else COV_X
  check(lambda x: jnp.cov(x, **kwargs), lambda x: np.cov(x, **kwargs), x, dtype=F32, tol=1e-5)


def test_cov_y_1d_int_and_complex():
  check(lambda x, y: jnp.cov(x, y), lambda x, y: np.cov(x, y), COV_X[0], COV_X[1], dtype=F32,
        tol=1e-5)
  check(lambda x: jnp.cov(x), lambda x: np.cov(x), np.arange(5, dtype=np.int32), dtype=F32)
  xc = (COV_X + 1j * COV_X[::-1]).astype(np.complex64)
  check(lambda x: jnp.cov(x), lambda x: np.cov(x), xc, dtype=np.complex64, tol=1e-5)
  check(lambda x, y: jnp.cov(x, y, rowvar=False), lambda x, y: np.cov(x, y, rowvar=False),
        COV_X.T, COV_X[:2].T, dtype=F32, tol=1e-5)


def test_cov_degenerate_shapes_as_jax():
  empty = jnp.cov(np.zeros((0, 3), np.float32))
  assert empty.shape == (0, 0) and empty.dtype == F32
  no_obs = jnp.cov(np.zeros((2, 0), np.float32))
  assert no_obs.shape == (2, 2) and np.isnan(no_obs).all()
  assert jnp.cov(np.zeros((1, 0), np.float32)).shape == ()
  assert jnp.cov(np.zeros((3,), np.float32), dtype=np.float16).dtype == np.float16


@pytest.mark.parametrize("kwargs, exc, msg", [
    (dict(fweights=np.ones(6, np.float32)), TypeError, "fweights must be integer."),
    (dict(fweights=np.ones((2, 3), np.int32)), RuntimeError,
     "cannot handle multidimensional fweights"),
    (dict(aweights=np.ones(5)), RuntimeError, "incompatible numbers of samples and aweights"),
    (dict(fweights=np.ones(7, np.int32)), RuntimeError,
     "incompatible numbers of samples and fweights"),
    (dict(dtype=np.int32), ValueError, "cov: dtype must be a subclass of float or complex"),
])
def test_cov_errors(kwargs, exc, msg):
  with pytest.raises(exc, match=msg):
    jnp.cov(COV_X, **kwargs)


def test_cov_rank_errors():
  with pytest.raises(ValueError, match="m has more than 2 dimensions"):
    jnp.cov(np.ones((2, 2, 2)))
  with pytest.raises(ValueError, match="y has more than 2 dimensions"):
    jnp.cov(np.ones((2, 2)), np.ones((2, 2, 2)))


@pytest.mark.parametrize("rowvar", [True, False])
def test_corrcoef_matches_numpy(rowvar):
  x = COV_X if rowvar else COV_X.T
  check(lambda x: jnp.corrcoef(x, rowvar=rowvar), lambda x: np.corrcoef(x, rowvar=rowvar), x,
        dtype=F32, tol=1e-5)
  check(lambda x, y: jnp.corrcoef(x, y, rowvar=rowvar),
        lambda x, y: np.corrcoef(x, y, rowvar=rowvar), x, x[::-1], dtype=F32, tol=1e-5)


def test_corrcoef_complex_scalar_and_errors():
  xc = (COV_X + 1j * COV_X[::-1]).astype(np.complex64)
  check(lambda x: jnp.corrcoef(x), lambda x: np.corrcoef(x), xc, dtype=np.complex64, tol=1e-5)
  assert float(jnp.corrcoef(np.arange(4.0))) == 1.0
  with pytest.raises(ValueError, match="corrcoef: dtype must be a subclass of float or complex"):
    jnp.corrcoef(COV_X, dtype=np.int32)
  with pytest.raises(TypeError, match="corrcoef requires ndarray or scalar arguments"):
    jnp.corrcoef([1.0, 2.0])


# ----------------------------------------------------------------------------
# Histograms

HIST_A = np.array([0, 1, 1, 2, 3, 4, 4, 5, 7, -1, 9], np.float32)


@pytest.mark.parametrize("bins", [1, 4, np.array([0.0, 2.0, 3.0, 8.0], np.float32)], ids=str)
@pytest.mark.parametrize("range_", [None, (1.0, 5.0)], ids=str)
@pytest.mark.parametrize("weighted, density", [(False, None), (True, None), (False, True)])
def test_histogram_matches_numpy(bins, range_, weighted, density):
  if np.ndim(bins) == 1 and range_ is not None:
    range_ = None
  w = np.arange(HIST_A.size, dtype=np.float32) if weighted else None
  got = jnp.histogram(HIST_A, bins, range=range_, weights=w, density=density)
  want = np.histogram(HIST_A, bins, range=range_, weights=w, density=density)
  for g, e in zip(got, want, strict=True):
    assert g.dtype == F32
    assert_values(g, e, F32, 1e-5)
  jitted = xjax.jit(lambda a, w: jnp.histogram(a, bins, range=range_, weights=w,
                                               density=density))(HIST_A, w)
  for g, e in zip(jitted, got, strict=True):
    assert_values(g, e, F32, 1e-6)


def test_histogram_rounded_edges_match_jax():
  # float32 linspace edges put -1e-16-ish rounding where JAX puts it: JAX 0.10.2's counts.
  counts, edges = jnp.histogram(HIST_A, 10)
  np.testing.assert_array_equal(counts, [2, 0, 2, 1, 1, 2, 1, 1, 0, 1])
  assert edges.shape == (11,) and edges[0] == -1 and edges[-1] == 9
  np.testing.assert_array_equal(jnp.histogram(HIST_A, 5)[0], [2, 3, 3, 2, 1])


def test_histogram_bin_edges_matches_numpy():
  check(lambda a: jnp.histogram_bin_edges(a, 4), lambda a: np.histogram_bin_edges(a, 4),
        np.arange(10, dtype=np.int32), dtype=F32)
  # A range of zero width widens by 0.5 on each side.
  check(lambda a: jnp.histogram_bin_edges(a, 2), lambda a: np.histogram_bin_edges(a, 2),
        np.ones(3, np.float32), dtype=F32)
  check(lambda a: jnp.histogram_bin_edges(a, 3, range=(0, 6)),
        lambda a: np.histogram_bin_edges(a, 3, range=(0, 6)), HIST_A, dtype=F32)
  edges = jnp.histogram_bin_edges(HIST_A, np.array([1, 2, 4]))
  assert edges.dtype == F32 and edges.tolist() == [1.0, 2.0, 4.0]


def test_histogram_errors():
  with pytest.raises(ValueError, match="weights should have the same shape as a."):
    jnp.histogram(np.arange(3.0), 3, weights=np.ones(2))
  with pytest.raises(NotImplementedError, match="string values for `bins` not implemented."):
    jnp.histogram_bin_edges(np.arange(3.0), "auto")
  with pytest.raises(TypeError):
    jnp.histogram(np.arange(3.0), "auto")
  with pytest.raises(ValueError, match="`range` must be either None or a sequence of scalars"):
    jnp.histogram_bin_edges(np.arange(3.0), 3, range=(0, 1, 2))
  with pytest.raises(xjax.errors.ConcretizationTypeError):
    xjax.jit(jnp.histogram)(np.arange(3.0), 3)


PTS = rng.uniform(size=(40, 3)).astype(np.float32)


@pytest.mark.parametrize("bins", [3, [2, 4], np.array([0.0, 0.3, 0.6, 1.0], np.float32),
                                  [2, np.array([0.0, 0.5, 1.0], np.float32)]], ids=str)
@pytest.mark.parametrize("weighted, density", [(False, None), (True, None), (False, True)])
def test_histogram2d_matches_numpy(bins, weighted, density):
  x, y = PTS[:, 0], PTS[:, 1]
  w = np.arange(40, dtype=np.float32) if weighted else None
  got = jnp.histogram2d(x, y, bins=bins, weights=w, density=density)
  want = np.histogram2d(x, y, bins=bins, weights=w, density=density)
  dtype = F32 if (weighted or density) else I32
  assert got[0].dtype == dtype
  assert_values(got[0], want[0], dtype, 1e-5)
  for g, e in zip(got[1:], want[1:], strict=True):
    assert_values(g, e, F32, 1e-6)


@pytest.mark.parametrize("bins", [2, (2, 3, 4)], ids=str)
@pytest.mark.parametrize("range_", [None, [(0, 1), (0.2, 0.9), (0, 0.5)]], ids=str)
@pytest.mark.parametrize("density", [None, True])
def test_histogramdd_matches_numpy(bins, range_, density):
  w = np.arange(40, dtype=np.float32)
  got_hist, got_edges = jnp.histogramdd(PTS, bins=bins, range=range_, weights=w, density=density)
  want_hist, want_edges = np.histogramdd(PTS, bins=bins, range=range_, weights=w,
                                         density=density)
  assert_values(got_hist, want_hist, F32, 1e-5)
  assert len(got_edges) == 3
  for g, e in zip(got_edges, want_edges, strict=True):
    assert_values(g, e, F32, 1e-6)
  counts, _ = jnp.histogramdd(PTS, bins=bins, range=range_)
  assert counts.dtype == I32
  assert_values(counts, np.histogramdd(PTS, bins=bins, range=range_)[0], I32)


def test_histogramdd_errors():
  with pytest.raises(ValueError, match="should be a bin for each dimension."):
    jnp.histogramdd(PTS, bins=(2, 3))
  with pytest.raises(ValueError, match="range must be a sequence of 3 pairs or Nones"):
    jnp.histogramdd(PTS, range=[(0, 1)])
  with pytest.raises(ValueError, match="should have one weight for each sample."):
    jnp.histogramdd(PTS, weights=np.ones(3))


def test_docstring_examples_run():
  result = doctest.testmod(statistics, optionflags=doctest.NORMALIZE_WHITESPACE)
  assert result.attempted >= 6 and result.failed == 0


def test_cov_average_histogram_digitize_under_vmap():
  x = np.random.default_rng(5).normal(size=(4, 3, 6)).astype(np.float32)
  np.testing.assert_allclose(xjax.vmap(jnp.cov)(x), np.stack([np.cov(r) for r in x]),
                             atol=1e-5, rtol=1e-5)
  w = np.abs(x[:, 0])
  got = xjax.vmap(lambda r, w: jnp.average(r, axis=1, weights=w))(x, w)
  want = np.stack([np.average(r, axis=1, weights=wr) for r, wr in zip(x, w)])
  np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5)
  flat = x.reshape(4, -1)
  got = xjax.vmap(lambda r: jnp.histogram(r, 3, range=(-2, 2))[0])(flat)
  np.testing.assert_array_equal(got, np.stack([np.histogram(r, 3, range=(-2, 2))[0]
                                               for r in flat]))
  bins = np.array([-1.0, 0.0, 1.0], np.float32)
  np.testing.assert_array_equal(xjax.vmap(lambda r: jnp.digitize(r, bins))(x),
                                np.digitize(x, bins))
