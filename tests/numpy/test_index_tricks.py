"""Tests for xjax/_src/numpy/index_tricks.py: grids, r_/c_, index arrays, tri and vander.

Values are checked against NumPy (eagerly and under `xjax.jit`); dtypes and
errors against what JAX 0.10.2 does where it differs from NumPy (int32 index
arrays, float32 `tri`, ConcretizationTypeError for traced sizes).
"""
import doctest

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import errors
from xjax._src.numpy import index_tricks
from jnp_checks import ALL_DTYPES, bf16, check, rand


@pytest.fixture
def rng():
  return np.random.default_rng(0)


def _assert_same(actual, expected, dtype=None):
  """One array (or a sequence of them) equals NumPy's, with JAX's canonical dtype."""
  if isinstance(expected, (list, tuple)):
    assert type(actual) is type(expected) and len(actual) == len(expected), (actual, expected)
    for a, e in zip(actual, expected, strict=True):
      _assert_same(a, e, dtype)
    return
  assert isinstance(actual, xjax.Array), type(actual)
  want = np.dtype(dtype) if dtype is not None else xjax.dtypes.canonicalize_dtype(
      np.asarray(expected).dtype)
  assert actual.dtype == want, (actual.dtype, want)
  assert actual.shape == np.shape(expected), (actual.shape, np.shape(expected))
  np.testing.assert_allclose(np.asarray(actual, dtype=np.float64 if want.kind != "c" else None),
                             np.asarray(expected), rtol=1e-6, atol=1e-6)


# ----------------------------------------------------------------------------
# meshgrid


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("sizes", [(), (3,), (3, 4), (2, 0), (2, 3, 4), (1, 2, 3, 2)])
def test_meshgrid_matches_numpy(rng, indexing, sparse, sizes):
  dts = [np.float32, np.int32, bf16, np.bool_]
  xs = [rand(rng, (n,), dts[i % len(dts)]) for i, n in enumerate(sizes)]
  fun = lambda *a: jnp.meshgrid(*a, sparse=sparse, indexing=indexing)
  np_fun = lambda *a: tuple(np.meshgrid(*a, sparse=sparse, indexing=indexing))
  expected = np_fun(*[x.astype(np.float32) if x.dtype == bf16 else x for x in xs])
  for out in (fun(*xs), xjax.jit(fun)(*xs)):
    assert isinstance(out, list) and len(out) == len(expected)
    for o, e, x in zip(out, expected, xs, strict=True):
      _assert_same(o, e, x.dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_meshgrid_keeps_dtype_and_weak_type(rng, dtype):
  x, y = rand(rng, (2,), dtype), rand(rng, (3,), dtype)
  gx, gy = jnp.meshgrid(x, y)
  assert gx.dtype == gy.dtype == dtype and gx.shape == gy.shape == (3, 2)
  weak = jnp.broadcast_to(jnp.asarray(2.0), (2,))
  assert weak.weak_type and jnp.meshgrid(weak)[0].weak_type


def test_meshgrid_under_vmap():
  a, b = np.arange(6.0).reshape(2, 3), np.arange(8.0).reshape(2, 4)
  gx, gy = xjax.vmap(lambda u, v: jnp.meshgrid(u, v))(a, b)
  assert gx.shape == gy.shape == (2, 4, 3)
  for i in range(2):
    ex, ey = np.meshgrid(a[i], b[i])
    np.testing.assert_array_equal(gx[i], ex)
    np.testing.assert_array_equal(gy[i], ey)


@pytest.mark.parametrize("args, kwargs, exc, msg", [
    ((np.ones(2), [1, 2]), {}, TypeError,
     "meshgrid requires ndarray or scalar arguments, got <class 'list'> at position 1."),
    ((1.0,), {}, ValueError, r"Arguments to jax.numpy.meshgrid must be 1D, got shapes \[\(\)\]"),
    ((np.ones(3), np.ones((2, 2))), {}, ValueError, r"got shapes \[\(3,\), \(2, 2\)\]"),
    ((np.ones(2),), {"copy": False}, ValueError, "jax.numpy.meshgrid only supports copy=True"),
    ((np.ones(2),), {"indexing": "xx"}, ValueError,
     "Valid values for indexing are 'xy' and 'ij', got xx"),
])
def test_meshgrid_errors(args, kwargs, exc, msg):
  with pytest.raises(exc, match=msg):
    jnp.meshgrid(*args, **kwargs)


# ----------------------------------------------------------------------------
# mgrid and ogrid


_GRID_KEYS = [
    np.s_[0:3], np.s_[:4], np.s_[2:], np.s_[3:0:-1], np.s_[0:1:0.25], np.s_[0.5:3],
    np.s_[0:1:5j], np.s_[-1:1:1j], np.s_[0:0], np.s_[0:3, 0:4], np.s_[0:1:0.25, 0:2],
    np.s_[0:1:5j, 0:3], np.s_[1:3:3j, 0.5:2], np.s_[0:2, 1:4, 3:0:-1], np.s_[0:3, 0:0],
    np.s_[0:3:-3j], (),
]


@pytest.mark.parametrize("key", _GRID_KEYS, ids=repr)
def test_mgrid_matches_numpy(key):
  check(lambda: jnp.mgrid[key], lambda: np.mgrid[key] if key != () else np.arange(0))
  assert jnp.mgrid is index_tricks.mgrid


@pytest.mark.parametrize("key", _GRID_KEYS, ids=repr)
def test_ogrid_matches_numpy(key):
  expected = np.ogrid[key]
  expected = tuple(expected) if isinstance(expected, list) else expected
  for out in (jnp.ogrid[key], xjax.jit(lambda: jnp.ogrid[key])()):
    if isinstance(expected, tuple):
      assert isinstance(out, list)
      out = tuple(out)
    _assert_same(out, expected)


def test_grids_follow_jax_where_numpy_differs():
  # A zero step (real or imaginary) falls back to 1, as JAX's `step or 1` does.
  np.testing.assert_array_equal(jnp.mgrid[0:3:0], [0, 1, 2])
  assert jnp.mgrid[0:3:0j].dtype == np.int32
  # The point count of a complex step is its magnitude.
  np.testing.assert_allclose(jnp.mgrid[0:3:(1 + 3j)], [0.0, 1.5, 3.0])
  # Several slices are promoted together, and are not weakly typed.
  out = jnp.mgrid[0:2, 0:1:3j]
  assert out.dtype == np.float32 and not out.weak_type and out.shape == (2, 2, 3)
  with xjax.numpy_dtype_promotion("strict"):
    assert jnp.mgrid[0:2, 0:1:3j].dtype == np.float32
    assert [g.dtype for g in jnp.ogrid[0:2, 0.5:1]] == [np.float32, np.float32]


def test_grids_inside_jit_and_vmap():
  f = xjax.jit(lambda x: x + jnp.mgrid[0:2, 0:3])
  np.testing.assert_array_equal(f(1.0), 1.0 + np.mgrid[0:2, 0:3])
  out = xjax.vmap(lambda x: x * jnp.ogrid[0:3, 0:2][0])(jnp.arange(4.0))
  np.testing.assert_array_equal(out, np.arange(4.0)[:, None, None] * np.arange(3)[:, None])


@pytest.mark.parametrize("grid, name", [(jnp.mgrid, "mgrid"), (jnp.ogrid, "ogrid")])
@pytest.mark.parametrize("where", ["start", "stop", "step"])
def test_grid_traced_bounds_raise_concretization_error(grid, name, where):
  def f(n):
    s = {"start": slice(n, 3), "stop": slice(0, n), "step": slice(0, 3, n)}[where]
    return grid[s, 0:2]
  with pytest.raises(errors.ConcretizationTypeError, match=f"slice {where} of jnp.{name}"):
    xjax.jit(f)(1)


def test_grid_rejects_non_slices():
  with pytest.raises(TypeError):
    jnp.mgrid[3]
  with pytest.raises(AttributeError):
    jnp.mgrid[3, 0:2]


# ----------------------------------------------------------------------------
# r_ and c_


_CONCAT_CASES = [
    ("r_", lambda m: m[1, 2, 3]),
    ("r_", lambda m: m[np.array([1, 2]), 0, 0, np.array([4, 5])]),
    ("r_", lambda m: m[-1:1:6j, [0] * 3, 5, 6]),
    ("r_", lambda m: m[np.ones((2, 3)), np.zeros((1, 3))]),
    ("r_", lambda m: m["-1", np.ones((2, 3)), np.zeros((2, 1))]),
    ("r_", lambda m: m["0,2", [1, 2, 3], [4, 5, 6]]),
    ("r_", lambda m: m["0,2,0", [1, 2, 3], [4, 5, 6]]),
    ("r_", lambda m: m["1,2,0", [1, 2, 3], [4, 5, 6]]),
    ("r_", lambda m: m["0,3,1", [1, 2, 3], [4, 5, 6]]),
    ("r_", lambda m: m["0,4,-2", [1, 2, 3], [4, 5, 6]]),
    ("r_", lambda m: m["0,3,-1", [1, 2, 3], [[4, 5, 6]]]),
    ("r_", lambda m: m["r", [1, 2, 3], [4, 5, 6]]),
    ("r_", lambda m: m["c", [1, 2, 3], [4, 5, 6]]),
    ("r_", lambda m: m["0,2", 0:3, [[1, 2, 3]]]),
    ("r_", lambda m: m["0,2", 5, 6]),
    ("r_", lambda m: m[np.float32(1.5), np.arange(0, dtype=np.float32), 2.5]),
    ("r_", lambda m: m[np.array([True]), [False]]),
    ("r_", lambda m: m[np.array([1 + 2j], np.complex64), 3]),
    ("c_", lambda m: m[np.array([1, 2, 3]), np.array([4, 5, 6])]),
    ("c_", lambda m: m[np.array([[1, 2, 3]]), 0, 0, np.array([[4, 5, 6]])]),
    ("c_", lambda m: m[0:3, 1:4]),
    ("c_", lambda m: m[0:1:4j, np.ones((4, 2))]),
    ("c_", lambda m: m["0,2", [1, 2, 3], [4, 5, 6]]),
    ("c_", lambda m: m[np.ones((2, 2, 2)), np.zeros((2, 2, 1))]),
    ("c_", lambda m: m["r", [1, 2, 3], [4, 5, 6]]),
]


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # NumPy's np.matrix for "r"/"c"
@pytest.mark.parametrize("name, index", _CONCAT_CASES)
def test_r_c_match_numpy(name, index):
  check(lambda: index(getattr(jnp, name)), lambda: np.asarray(index(getattr(np, name))))


def test_r_c_traced_items_and_vmap():
  f = xjax.jit(lambda x: jnp.r_[x, 0, x])
  np.testing.assert_array_equal(f(jnp.ones(2)), [1, 1, 0, 1, 1])
  out = xjax.vmap(lambda x: jnp.c_[x, 2 * x])(jnp.arange(6.0).reshape(3, 2))
  rows = np.arange(6.0).reshape(3, 2)
  np.testing.assert_array_equal(out, np.stack([np.c_[r, 2 * r] for r in rows]))


def test_r_c_dtypes_follow_jax():
  a = jnp.r_[1, 2, 3]
  assert a.dtype == np.int32 and a.weak_type  # all weakly typed scalars
  assert jnp.r_[1.0, 2].weak_type and not jnp.r_[np.float64(1.0), 2].weak_type
  assert jnp.r_[jnp.array([1], jnp.int8), 2].dtype == np.int8
  assert jnp.r_[jnp.array([1], jnp.int8), [2]].dtype == np.int32
  assert jnp.r_[True, False].dtype == np.bool_
  # JAX ignores directive fields past the third (NumPy would read a fourth as a matrix flag).
  assert jnp.r_["0,2,0,5", [1, 2, 3]].shape == (3, 1)
  assert len(jnp.r_) == len(jnp.c_) == 0


@pytest.mark.parametrize("index, exc, msg", [
    (lambda: jnp.r_["a,b", [1, 2, 3]], ValueError, "could not understand directive 'a,b'"),
    (lambda: jnp.r_[[1, 2], "r"], ValueError, "string directive must be placed at the beginning"),
    (lambda: jnp.r_["0"], ValueError, "Need at least one array to concatenate"),
    (lambda: jnp.r_[()], IndexError, "tuple index out of range"),
    (lambda: jnp.r_[np.ones(2), np.ones((2, 2))], TypeError,
     "Cannot concatenate arrays with different numbers of dimensions"),
])
def test_r_c_errors(index, exc, msg):
  with pytest.raises(exc, match=msg):
    index()


@pytest.mark.parametrize("name", ["r_", "c_"])
def test_r_c_traced_slice_raises(name):
  with pytest.raises(errors.ConcretizationTypeError, match=f"slice stop of jnp.{name}"):
    xjax.jit(lambda n: getattr(jnp, name)[0:n])(3)


def test_s_and_index_exp_are_numpy_helpers():
  assert jnp.s_[1:2, ..., None] == (slice(1, 2), Ellipsis, None)
  assert jnp.s_[3] == 3 and jnp.index_exp[3] == (3,)
  x = np.arange(12).reshape(3, 4)
  np.testing.assert_array_equal(jnp.asarray(x)[jnp.s_[::2, 1:]], x[np.s_[::2, 1:]])


# ----------------------------------------------------------------------------
# ix_ and indices


@pytest.mark.parametrize("shapes", [(), ((3,),), ((3,), (2,)), ((2,), (0,), (4,)), ((1,), (1,))])
def test_ix_matches_numpy(rng, shapes):
  dts = [np.int32, np.float32, np.uint8]
  args = [rand(rng, s, dts[i % 3]) for i, s in enumerate(shapes)]
  expected = np.ix_(*args)
  # Empty inputs become integer index arrays (NumPy does this only for lists).
  want = [np.int32 if a.size == 0 else a.dtype for a in args]
  for out in (jnp.ix_(*args), xjax.jit(jnp.ix_)(*args)):
    assert isinstance(out, tuple) and len(out) == len(expected)
    for o, e, w in zip(out, expected, want, strict=True):
      _assert_same(o, e, w)


def test_ix_indexes_like_numpy():
  x = np.arange(20).reshape(4, 5)
  i, j = np.array([0, 3]), np.array([1, 2, 4])
  np.testing.assert_array_equal(jnp.asarray(x)[jnp.ix_(i, j)], x[np.ix_(i, j)])


@pytest.mark.parametrize("args, exc, msg", [
    ((np.ones((2, 2)),), ValueError, r"must be 1-dimensional, got shape \(2, 2\)"),
    ((3,), ValueError, r"must be 1-dimensional, got shape \(\)"),
    ((np.array([True, False]),), NotImplementedError,
     "Boolean arguments to jax.numpy.ix_ are not implemented"),
    ((np.arange(2), [1, 2]), TypeError,
     "ix requires ndarray or scalar arguments, got <class 'list'> at position 1."),
])
def test_ix_errors(args, exc, msg):
  with pytest.raises(exc, match=msg):
    jnp.ix_(*args)


@pytest.mark.parametrize("dims", [(), (0,), (3,), (2, 3), (2, 0, 3), (1, 2, 1, 3)])
@pytest.mark.parametrize("dtype", [None, np.int32, np.uint8, np.float32, bf16, np.complex64])
@pytest.mark.parametrize("sparse", [False, True])
def test_indices_match_numpy(dims, dtype, sparse):
  np_dtype = np.float32 if dtype == bf16 else (int if dtype is None else dtype)
  want = np.int32 if dtype is None else dtype
  fun = lambda: jnp.indices(dims, dtype=dtype, sparse=sparse)
  expected = np.indices(dims, dtype=np_dtype, sparse=sparse)
  for out in (fun(), xjax.jit(fun)()):
    if sparse:
      assert isinstance(out, tuple)
      _assert_same(out, tuple(expected), want)
    else:
      _assert_same(out, expected, want)


def test_indices_errors():
  with pytest.raises(TypeError, match="iota does not accept dtype bool"):
    jnp.indices((2, 3), dtype=bool)
  with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
    jnp.indices((2.0,))
  with pytest.raises(TypeError, match="iota shape must have every element be nonnegative"):
    jnp.indices((-2,))
  with pytest.raises(TypeError):
    jnp.indices(3)
  with pytest.raises(errors.ConcretizationTypeError, match="dimensions argument of jnp.indices"):
    xjax.jit(lambda n: jnp.indices((n,)))(3)


# ----------------------------------------------------------------------------
# diag_indices and diag_indices_from


@pytest.mark.parametrize("n, ndim", [(0, 2), (1, 1), (3, 2), (4, 3), (3, 0), (2, 5)])
def test_diag_indices_match_numpy(n, ndim):
  check(lambda: jnp.diag_indices(n, ndim), lambda: np.diag_indices(n, ndim), dtype=np.int32)
  arr = np.ones((n,) * ndim)
  if ndim >= 2:
    for out in (jnp.diag_indices_from(arr), xjax.jit(jnp.diag_indices_from)(arr)):
      _assert_same(out, np.diag_indices_from(arr), np.int32)


@pytest.mark.parametrize("fun, exc, msg", [
    (lambda: jnp.diag_indices(-3), ValueError, "n argument to diag_indices must be nonnegative, "
     "got -3"),
    (lambda: jnp.diag_indices(3, -1), ValueError, "ndim argument to diag_indices must be "
     "nonnegative, got -1"),
    (lambda: jnp.diag_indices(3.0), TypeError, "cannot be interpreted as an integer"),
    (lambda: xjax.jit(jnp.diag_indices)(3), errors.ConcretizationTypeError,
     r"'n' argument of jnp.diag_indices\(\)"),
    (lambda: jnp.diag_indices_from(np.ones(3)), ValueError, "input array must be at least 2-d"),
    (lambda: jnp.diag_indices_from(np.ones((3, 2))), ValueError,
     "All dimensions of input must be of equal length"),
    (lambda: jnp.diag_indices_from([[1, 2], [3, 4]]), TypeError,
     "diag_indices_from requires ndarray or scalar arguments"),
])
def test_diag_indices_errors(fun, exc, msg):
  with pytest.raises(exc, match=msg):
    fun()


# ----------------------------------------------------------------------------
# tril_indices, triu_indices and their _from forms, mask_indices


@pytest.mark.parametrize("n", [0, 3, 4])
@pytest.mark.parametrize("m", [None, 0, 5])
@pytest.mark.parametrize("k", [-5, -1, 0, 1, 6])
def test_tril_triu_indices_match_numpy(n, m, k):
  for name in ("tril_indices", "triu_indices"):
    fun = lambda: getattr(jnp, name)(n, k, m)
    expected = getattr(np, name)(n, k, m)
    for out in (fun(), xjax.jit(fun)()):
      assert isinstance(out, tuple)
      _assert_same(out, expected, np.int32)


@pytest.mark.parametrize("shape", [(0, 0), (3, 3), (3, 5), (5, 2)])
@pytest.mark.parametrize("k", [-2, 0, 1])
def test_tril_triu_indices_from_match_numpy(shape, k):
  arr = np.zeros(shape, np.float32)
  for name in ("tril_indices_from", "triu_indices_from"):
    expected = getattr(np, name)(arr, k)
    for a in (arr, jnp.asarray(arr), xjax.ShapeDtypeStruct(shape, np.float32)):
      _assert_same(getattr(jnp, name)(a, k), expected, np.int32)
    # Under jit only the shape of a traced array is used.
    _assert_same(xjax.jit(lambda x: getattr(jnp, name)(x, k))(arr), expected, np.int32)


def test_triangle_indices_index_like_numpy():
  x = np.arange(20.0).reshape(4, 5)
  np.testing.assert_array_equal(jnp.asarray(x)[jnp.triu_indices_from(x, 1)],
                                x[np.triu_indices_from(x, 1)])
  np.testing.assert_array_equal(jnp.asarray(x)[jnp.tril_indices(4, -1, 5)],
                                x[np.tril_indices(4, -1, 5)])


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("arg", ["n", "k", "m"])
def test_tril_triu_indices_traced_argument_raises(name, arg):
  def f(v):
    kwargs = {"n": 3, "k": 0, "m": 4}
    kwargs[arg] = v
    return getattr(jnp, name)(kwargs["n"], kwargs["k"], kwargs["m"])
  # JAX's messages name jnp.triu_indices for both functions.
  with pytest.raises(errors.ConcretizationTypeError, match=f"{arg} argument of jnp.triu_indices"):
    xjax.jit(f)(1)


def test_triangle_indices_errors():
  with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
    jnp.triu_indices(3.0)
  with pytest.raises(TypeError, match="must have every element be nonnegative"):
    jnp.tril_indices(-1)
  with pytest.raises(ValueError, match="Only 2-D inputs are accepted"):
    jnp.tril_indices_from(np.ones(3))
  with pytest.raises(ValueError, match="Only 2-D inputs are accepted"):
    jnp.triu_indices_from(np.ones((2, 2, 2)))
  with pytest.raises(TypeError, match="triu_indices_from requires ndarray or scalar arguments"):
    jnp.triu_indices_from([[1, 2], [3, 4]])
  with pytest.raises(errors.ConcretizationTypeError, match="k argument of jnp.triu_indices"):
    xjax.jit(lambda k: jnp.tril_indices_from(np.ones((2, 3)), k))(1)


@pytest.mark.parametrize("n", [0, 1, 4])
@pytest.mark.parametrize("k", [-2, 0, 1, 5])
def test_mask_indices_match_numpy(n, k):
  for jfun, nfun in ((jnp.triu, np.triu), (jnp.tril, np.tril)):
    _assert_same(jnp.mask_indices(n, jfun, k), np.mask_indices(n, nfun, k), np.int32)


def test_mask_indices_size_and_jit():
  expected = np.mask_indices(3, np.triu, 1)
  _assert_same(jnp.mask_indices(3, jnp.triu, 1, size=3), expected, np.int32)
  padded = xjax.jit(lambda: jnp.mask_indices(3, jnp.triu, 1, size=5))()
  np.testing.assert_array_equal(padded[0], [0, 0, 1, 0, 0])
  np.testing.assert_array_equal(padded[1], [1, 2, 2, 0, 0])
  with pytest.raises(errors.ConcretizationTypeError, match="The size argument of jnp.nonzero"):
    xjax.jit(lambda: jnp.mask_indices(3, jnp.triu, 1))()


# ----------------------------------------------------------------------------
# tri


@pytest.mark.parametrize("N, M", [(0, None), (1, None), (3, None), (3, 5), (4, 2), (3, 0), (0, 3)])
@pytest.mark.parametrize("k", [-4, -1, 0, 1, 3])
def test_tri_shapes_match_numpy(N, M, k):
  check(lambda: jnp.tri(N, M, k), lambda: np.tri(N, M, k, np.float32), dtype=np.float32,
        weak=False)


@pytest.mark.parametrize("k", [-1, 2])
@pytest.mark.parametrize("dtype", [np.int32, np.bool_, np.uint8, bf16, np.complex64, float, int])
def test_tri_dtypes_match_numpy(k, dtype):
  N, M = 3, 4
  want = xjax.dtypes.canonicalize_dtype(dtype)
  np_dtype = np.float32 if dtype == bf16 else dtype
  check(lambda: jnp.tri(N, M, k, dtype), lambda: np.tri(N, M, k, np_dtype), dtype=want, weak=False)


def test_tri_traced_k_under_jit_and_vmap():
  out = xjax.jit(lambda k: jnp.tri(3, 4, k))(-1)
  np.testing.assert_array_equal(out, np.tri(3, 4, -1))
  ks = jnp.arange(-2, 3)
  batched = xjax.vmap(lambda k: jnp.tri(3, k=k, dtype=int))(ks)
  expected = np.stack([np.tri(3, k=int(k), dtype=np.int32) for k in ks])
  np.testing.assert_array_equal(batched, expected)
  np.testing.assert_array_equal(xjax.jit(lambda k: jnp.tri(3, k=k))(np.uint8(1)), np.tri(3, k=1))
  np.testing.assert_array_equal(jnp.tri(2, k=-2 ** 31), np.zeros((2, 2)))
  np.testing.assert_array_equal(jnp.tri(3, k=jnp.array(1)), np.tri(3, k=1))


@pytest.mark.parametrize("fun, exc, msg", [
    (lambda: jnp.tri(3, 4, 1.0), TypeError, "cannot be interpreted as an integer"),
    (lambda: jnp.tri(3, k=True), TypeError, r"offset must be an integer, got Array\(True"),
    (lambda: xjax.jit(lambda k: jnp.tri(3, k=k))(1.0), TypeError, "offset must be an integer"),
    (lambda: jnp.tri(3.0), TypeError, "Shapes must be 1D sequences of concrete values of integer"),
    (lambda: jnp.tri(-1), TypeError, "must have every element be nonnegative"),
    (lambda: xjax.jit(lambda n: jnp.tri(n))(3), TypeError,
     "Shapes must be 1D sequences of concrete values of integer type"),
    (lambda: jnp.tri(2, dtype="foo"), TypeError, "data type 'foo' not understood"),
])
def test_tri_errors(fun, exc, msg):
  with pytest.raises(exc, match=msg):
    fun()


# ----------------------------------------------------------------------------
# vander


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, bf16, np.complex64])
@pytest.mark.parametrize("n, N", [(0, None), (1, None), (4, None), (3, 0), (3, 2), (3, 5)])
@pytest.mark.parametrize("increasing", [False, True])
def test_vander_matches_numpy(rng, dtype, n, N, increasing):
  x = rand(rng, (n,), dtype, low=-2.0, high=2.0)
  tol = 5e-2 if dtype == bf16 else 1e-5
  if dtype == np.uint8 and not increasing and (n if N is None else N) == 0:
    # JAX computes the exponents N - 1 - iota in x's dtype: -1 overflows uint8.
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
      jnp.vander(x, N, increasing)
    return
  check(lambda a: jnp.vander(a, N, increasing), lambda a: np.vander(a, N, increasing), x,
        dtype=dtype, tol=tol)


def test_vander_integer_signs_and_vmap():
  np.testing.assert_array_equal(jnp.vander(jnp.array([-2, 3]), 4), np.vander([-2, 3], 4))
  xs = np.arange(8.0).reshape(2, 4) - 3
  out = xjax.vmap(lambda x: jnp.vander(x, 3))(xs)
  np.testing.assert_allclose(out, np.stack([np.vander(x, 3) for x in xs]), rtol=1e-6)


@pytest.mark.parametrize("fun, exc, msg", [
    (lambda: jnp.vander([1, 2, 3]), TypeError, "vander requires ndarray or scalar arguments"),
    (lambda: jnp.vander(np.ones((2, 2))), ValueError, "x must be a one-dimensional array"),
    (lambda: jnp.vander(3.0), ValueError, "x must be a one-dimensional array"),
    (lambda: jnp.vander(np.ones(2), -1), ValueError, "N must be nonnegative"),
    (lambda: jnp.vander(np.ones(2), 2.0), TypeError, "cannot be interpreted as an integer"),
    (lambda: jnp.vander(np.array([True, False])), TypeError, "iota does not accept dtype bool"),
    (lambda: xjax.jit(lambda n: jnp.vander(np.ones(3), n))(2), ValueError,
     "Non-hashable static arguments are not supported"),
])
def test_vander_errors(fun, exc, msg):
  with pytest.raises(exc, match=msg):
    fun()


# ----------------------------------------------------------------------------
# Docstrings


def test_index_tricks_docstring_examples_run():
  result = doctest.testmod(index_tricks, optionflags=doctest.NORMALIZE_WHITESPACE)
  assert result.attempted > 0 and result.failed == 0
