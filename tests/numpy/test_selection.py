"""Tests for xjax/_src/numpy/selection.py (choose, compress, extract, place, put,
put_along_axis, diag, diagflat, diagonal, trace, fill_diagonal and the Array
methods) against NumPy, and against JAX 0.10.2's behaviour where it differs."""
import doctest
import inspect

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from jnp_checks import ALL_DTYPES, bf16, check, rand
from xjax._src.numpy import selection
from xjax._src.test_util import check_grads


@pytest.fixture
def rng():
  return np.random.default_rng(0)


def _ids(dtype):
  return np.dtype(dtype).name


def _cases(configs, dtypes=ALL_DTYPES, rest_dtype=np.float32):
  """Every dtype with the first config, `rest_dtype` with each of the others (keeps the
  number of compiled cases down while covering every dtype class and every edge case)."""
  first, *rest = [c if isinstance(c, tuple) else (c,) for c in configs]
  return ([pytest.param(np.dtype(d), *first, id=f"{_ids(d)}-{first}") for d in dtypes]
          + [pytest.param(np.dtype(rest_dtype), *c, id=f"{_ids(rest_dtype)}-{c}") for c in rest])


def _copy_apply(np_fun):
  """NumPy's in-place `np_fun(a, ...)` as a function returning the updated copy."""
  def fn(a, *args, **kwargs):
    a = np.array(a)
    np_fun(a, *args, **kwargs)
    return a
  return fn


# ----------------------------------------------------------------------------
# choose


@pytest.mark.parametrize("dtype,mode,a_shape,c_shapes", _cases([
    ("wrap", (2, 3), [(3,), (2, 1), ()]), ("clip", (2, 3), [(3,), (2, 1), ()]),
    ("clip", (4,), [(4,), (4,), (4,)]), ("wrap", (), [(2,), (2,), (2,)]),
    ("clip", (0,), [(0,), (1,), ()])]))
def test_choose_matches_numpy(rng, dtype, mode, a_shape, c_shapes):
  a = rng.integers(-4, 7, size=a_shape).astype(np.int32)
  c0, c1, c2 = (rand(rng, s, dtype) for s in c_shapes)
  check(lambda a, x, y, z: jnp.choose(a, [x, y, z], mode=mode),
        lambda a, x, y, z: np.choose(a, [x, y, z], mode=mode), a, c0, c1, c2, dtype=dtype)


@pytest.mark.parametrize("a_dtype", [np.int8, np.uint8, np.int32])
def test_choose_raise_mode_and_array_choices(rng, a_dtype):
  a = rng.integers(0, 3, size=(5,)).astype(a_dtype)
  choices = rand(rng, (3, 5), np.float32)
  np.testing.assert_array_equal(jnp.choose(a, choices), np.choose(a, choices))
  np.testing.assert_array_equal(jnp.choose(a, jnp.asarray(choices)), np.choose(a, choices))
  with pytest.raises(ValueError, match="invalid entry in choice array"):
    jnp.choose(np.array([0, 3], a_dtype), choices[:, :2])
  if np.dtype(a_dtype).kind == "i":
    with pytest.raises(ValueError, match="invalid entry in choice array"):
      jnp.choose(np.array([0, -1], a_dtype), choices[:, :2])


def test_choose_dtypes_and_weak_types_as_jax():
  idx = jnp.array([0, 1])
  assert jnp.choose(idx, [jnp.ones(2, np.int8), jnp.zeros(2, np.float16)]).dtype == np.float16
  assert jnp.choose(idx, [jnp.ones(2, np.int8), 3]).dtype == np.int8
  assert jnp.choose(idx, [jnp.ones(2, np.int8), jnp.array([True, False])]).dtype == np.int8
  out = jnp.choose(idx, [1, 2.5])
  assert out.dtype == np.float32 and not out.weak_type
  np.testing.assert_array_equal(out, [1.0, 2.5])
  assert int(jnp.choose(1, [1, 2])) == 2


def test_choose_errors():
  idx = jnp.array([0, 1])
  with pytest.raises(ValueError, match="`a` array must be integer typed"):
    jnp.choose(jnp.array([0.0, 1.0]), [jnp.ones(2), jnp.zeros(2)])
  with pytest.raises(ValueError, match="`a` array must be integer typed"):
    jnp.choose(jnp.array([True, False]), [jnp.ones(2), jnp.zeros(2)])
  with pytest.raises(ValueError, match="mode='foo' not understood"):
    jnp.choose(idx, [jnp.ones(2)], mode="foo")
  with pytest.raises(NotImplementedError, match="'out' argument to jnp.choose"):
    jnp.choose(idx, [jnp.ones(2)], out=1)
  with pytest.raises(TypeError, match="choose requires ndarray or scalar arguments"):
    jnp.choose([0, 1], [jnp.ones(2)])
  with pytest.raises(TypeError, match="iteration over a 0-d array"):
    jnp.choose(jnp.array(0), jnp.array(1))
  with pytest.raises(ValueError, match="invalid entry in choice array"):
    jnp.choose(idx, [])
  with pytest.raises(IndexError, match="choices must not be empty"):
    jnp.choose(idx, [], mode="wrap")


def test_choose_raise_needs_concrete_indices():
  choices = [jnp.arange(3), -jnp.arange(3)]
  with pytest.raises(xjax.errors.ConcretizationTypeError, match="mode='raise'"):
    xjax.jit(lambda a: jnp.choose(a, choices))(jnp.array([0, 1, 0]))
  with pytest.raises(xjax.errors.ConcretizationTypeError):
    xjax.vmap(lambda a: jnp.choose(a, choices))(jnp.array([[0, 1, 1], [1, 0, 1]]))


def test_choose_vmap_and_grad():
  idx = jnp.array([[0, 1, 2], [1, 0, 1]])
  out = xjax.vmap(lambda a: jnp.choose(a, [jnp.arange(3), -jnp.arange(3)], mode="wrap"))(idx)
  np.testing.assert_array_equal(out, [[0, -1, 2], [0, 1, -2]])
  c = np.arange(6.0, dtype=np.float32).reshape(2, 3)
  out = xjax.vmap(lambda a, c: jnp.choose(a, c, mode="clip"))(idx, np.stack([c, 2 * c]))
  np.testing.assert_array_equal(out, [np.choose([0, 1, 2], c, mode="clip"),
                                      np.choose([1, 0, 1], 2 * c, mode="clip")])
  g = xjax.grad(lambda x: jnp.choose(jnp.array([0, 1, 0]), [x, 2 * x], mode="clip").sum())
  np.testing.assert_array_equal(g(jnp.ones(3)), [1.0, 2.0, 1.0])
  check_grads(lambda x, y: jnp.choose(jnp.array([1, 0, 1]), [x, y], mode="wrap"),
              (jnp.array([0.5, -1.0, 2.0]), jnp.ones(3)), order=1, modes=("rev",))


# ----------------------------------------------------------------------------
# compress, extract


@pytest.mark.parametrize("dtype,shape,cond_len,axis", _cases([
    ((2, 3, 2), 3, 1), ((3, 4), 3, 0), ((3, 4), 4, -1), ((3, 4), 2, 1), ((5,), 5, None),
    ((2, 3), 4, None), ((0, 3), 0, 0), ((2, 0), 2, 0), ((), 1, None)]))
def test_compress_matches_numpy(rng, dtype, shape, cond_len, axis):
  a = rand(rng, shape, dtype)
  cond = rng.random(cond_len) < 0.6
  check(lambda c, x: jnp.compress(c, x, axis=axis), lambda c, x: np.compress(c, x, axis=axis),
        cond, a, dtype=dtype, jit=False)


@pytest.mark.parametrize("dtype,size", _cases([3, 0, 1], dtypes=[np.float32, np.int32, np.bool_,
                                                                   bf16]))
def test_compress_with_size(rng, dtype, size):
  a = rand(rng, (3, 4), dtype)
  cond = np.array([False, True, True])
  fill = np.ones((), dtype)
  want = np.concatenate([np.compress(cond, a, axis=0), np.full((3, 4), fill)])[:size]
  check(lambda c, x: jnp.compress(c, x, axis=0, size=size, fill_value=fill),
        lambda c, x: want, cond, a, dtype=dtype)
  want_cols = np.concatenate([np.compress(cond, a, axis=1), np.zeros((3, 2), dtype)], axis=1)
  check(lambda c, x: jnp.compress(c, x, axis=1, size=size),
        lambda c, x: want_cols[:, :size], cond, a, dtype=dtype)


def test_compress_condition_longer_or_shorter_than_axis():
  x = jnp.arange(3)
  np.testing.assert_array_equal(jnp.compress(jnp.array([1, 0, 1, 0, 0]), x), [0, 2])
  np.testing.assert_array_equal(jnp.compress(jnp.array([0, 1]), x), [1])
  with pytest.raises(ValueError, match="condition contains entries that are out of bounds"):
    jnp.compress(jnp.array([1, 0, 1, 0, 1]), x)
  # Non-bool conditions: non-zero (NaN and complex included) is true.
  np.testing.assert_array_equal(jnp.compress(jnp.array([np.nan, 0.0, 2.0]), x), [0, 2])
  np.testing.assert_array_equal(jnp.compress(jnp.array([1j, 0, 0]), x), [0])


def test_compress_errors_as_jax():
  x = jnp.arange(12.0).reshape(3, 4)
  with pytest.raises(ValueError, match="condition must be a 1D array"):
    jnp.compress(jnp.ones((2, 2)), x)
  with pytest.raises(ValueError, match="condition must be a 1D array"):
    jnp.compress(True, x)
  with pytest.raises(ValueError, match=r"got size=4 for a.shape\[axis\]=3"):
    jnp.compress(jnp.array([0, 1, 1]), x, axis=0, size=4)
  with pytest.raises(ValueError, match="size must be positive"):
    jnp.compress(jnp.array([0, 1, 1]), x, axis=0, size=-1)
  with pytest.raises(NotImplementedError, match="'out' argument to jnp.compress"):
    jnp.compress(jnp.array([0, 1, 1]), x, axis=0, out=1)
  with pytest.raises(ValueError, match="axis 2 is out of bounds"):
    jnp.compress(jnp.array([0, 1, 0]), x, axis=2)
  with pytest.raises(TypeError, match="compress requires ndarray or scalar arguments"):
    jnp.compress([1, 0], jnp.arange(2))


def test_compress_under_jit_and_vmap():
  x = jnp.arange(12.0).reshape(3, 4)
  with pytest.raises(xjax.errors.TracerBoolConversionError):
    xjax.jit(lambda c: jnp.compress(c, x, axis=0))(jnp.array([0, 1, 1]))
  out = xjax.jit(lambda c: jnp.compress(c, x, axis=1, size=2))(jnp.array([0, 1, 1, 1]))
  np.testing.assert_array_equal(out, np.asarray(x)[:, 1:3])
  out = xjax.vmap(lambda c, a: jnp.compress(c, a, size=2))(
      jnp.array([[1, 0, 1], [0, 1, 0]]), jnp.arange(6.0).reshape(2, 3))
  np.testing.assert_array_equal(out, [[0.0, 2.0], [4.0, 0.0]])
  assert jnp.compress(jnp.array([True]), 3.0).weak_type


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=_ids)
def test_extract_matches_numpy(rng, dtype):
  a = rand(rng, (2, 3), dtype)
  cond = rng.random((3, 2)) < 0.5
  check(jnp.extract, np.extract, cond, a, dtype=dtype, jit=False)
  want = np.concatenate([np.extract(cond, a), np.zeros(6, dtype)])[:4]
  check(lambda c, x: jnp.extract(c, x, size=4), lambda c, x: want, cond, a, dtype=dtype)


def test_extract_truncation_fill_and_errors():
  x = jnp.arange(6)
  np.testing.assert_array_equal(jnp.extract(x % 2 == 0, x.reshape(2, 3), size=5, fill_value=-3),
                                [0, 2, 4, -3, -3])
  np.testing.assert_array_equal(jnp.extract(jnp.array([True, False, False]), x[:2]), [0])
  with pytest.raises(ValueError, match="condition contains entries that are out of bounds"):
    jnp.extract(jnp.array([True, False, True]), x[:2])
  np.testing.assert_array_equal(jnp.extract(jnp.array([True, True]), x), [0, 1])
  with pytest.raises(TypeError, match="extreact requires ndarray or scalar arguments"):
    jnp.extract([1, 0], x)  # sic, JAX's message
  with pytest.raises(TypeError, match="at position 2"):
    jnp.extract(x > 2, x, fill_value=[1])


# ----------------------------------------------------------------------------
# place, put, put_along_axis


@pytest.mark.parametrize("dtype,shape,n_vals", _cases([((3, 4), 2), ((5,), 7), ((2, 3), 1),
                                                      ((0,), 1), ((), 2)]))
def test_place_matches_numpy(rng, dtype, shape, n_vals):
  a = rand(rng, shape, dtype)
  mask = rng.random(shape) < 0.5
  vals = rand(rng, (n_vals,), dtype)
  check(lambda x, m, v: jnp.place(x, m, v, inplace=False), _copy_apply(np.place),
        a, mask, vals, dtype=dtype)


def test_place_mask_of_other_shape_and_errors():
  out = jnp.place(jnp.arange(4), jnp.array([[0, 1], [0, 1]]), 9, inplace=False)
  np.testing.assert_array_equal(out, [0, 9, 2, 9])
  x = jnp.arange(12.0).reshape(3, 4)
  with pytest.raises(ValueError, match="jax.numpy.place cannot modify arrays in-place"):
    jnp.place(x, x > 3, 0.0)
  with pytest.raises(ValueError, match="place: arr and mask must be the same size"):
    jnp.place(x, jnp.ones(3, bool), 0.0, inplace=False)
  with pytest.raises(ValueError, match="Cannot place values from an empty array"):
    jnp.place(x, x > 3, jnp.array([]), inplace=False)
  assert jnp.place(jnp.asarray(2.0)[None], jnp.array([True]), 1, inplace=False).weak_type


def test_place_under_jit_and_vmap():
  f = lambda a, m: jnp.place(a, m, jnp.array([7, 8, 9]), inplace=False)
  np.testing.assert_array_equal(xjax.jit(f)(jnp.arange(4), jnp.array([1, 1, 0, 1])),
                                [7, 8, 2, 9])
  out = xjax.vmap(f)(jnp.arange(8).reshape(2, 4), jnp.array([[1, 0, 0, 1], [0, 1, 1, 1]]))
  np.testing.assert_array_equal(out, [[7, 1, 2, 8], [4, 7, 8, 9]])


@pytest.mark.parametrize("dtype,mode", _cases([None, "clip", "wrap"]))
def test_put_matches_numpy(rng, dtype, mode):
  a = rand(rng, (3, 4), dtype)
  ind = np.array([0, 5, -1, -6]) if mode is None else np.array([0, 13, -1, -30, 6])
  v = rand(rng, (2,), dtype)
  np_mode = "raise" if mode is None else mode
  check(lambda x, i, w: jnp.put(x, i, w, mode=mode, inplace=False),
        _copy_apply(lambda x, i, w: np.put(x, i, w, mode=np_mode)), a, ind, v, dtype=dtype)


def test_put_shapes_and_out_of_range_as_jax():
  # JAX clips out-of-range indices by default (NumPy raises).
  out = jnp.put(jnp.zeros(12), jnp.array([12, -13]), jnp.array([1.0, 2.0]), inplace=False)
  np.testing.assert_array_equal(out, [2.0] + [0.0] * 10 + [1.0])
  out = jnp.put(jnp.zeros(5), jnp.array([[0, 1], [2, 3]]), jnp.array([[1.0, 2.0], [3.0, 4.0]]),
                inplace=False)
  np.testing.assert_array_equal(out, [1.0, 2.0, 3.0, 4.0, 0.0])
  out = jnp.put(jnp.zeros(3), jnp.array([True, False]), 1.0, inplace=False)
  np.testing.assert_array_equal(out, [1.0, 1.0, 0.0])
  x = jnp.arange(12.0).reshape(3, 4)
  assert jnp.put(x, jnp.zeros(0, int), 1.0, inplace=False) is x
  with pytest.warns(FutureWarning, match="scatter inputs have incompatible types"):
    out = jnp.put(jnp.arange(3), 0, 1.5, inplace=False)
  assert out.dtype == np.int32 and out.tolist() == [1, 1, 2]
  assert jnp.put(jnp.asarray(3.0)[None], 0, 1, inplace=False).weak_type


def test_put_errors_as_jax():
  x = jnp.arange(12.0).reshape(3, 4)
  with pytest.raises(ValueError, match="jax.numpy.put cannot modify arrays in-place"):
    jnp.put(x, 1, 1.0)
  with pytest.raises(NotImplementedError, match="The 'raise' mode to jnp.put"):
    jnp.put(x, jnp.array([0]), 1.0, mode="raise", inplace=False)
  with pytest.raises(ValueError, match="mode should be one of 'wrap' or 'clip'; got mode='foo'"):
    jnp.put(x, jnp.array([0]), 1.0, mode="foo", inplace=False)
  with pytest.raises(TypeError, match="Indexer must have integer or boolean type"):
    jnp.put(x, jnp.array([0.0]), 1.0, inplace=False)
  with pytest.raises(TypeError, match="at position 1"):
    jnp.put(x, [0], 1.0, inplace=False)
  with pytest.raises(ValueError, match="Cannot broadcast to shape with fewer dimensions"):
    jnp.put(jnp.float32(3.0), 0, 1.0, inplace=False)


def test_put_jit_vmap_grad():
  f = lambda a, i, v: jnp.put(a, i, v, mode="wrap", inplace=False)
  a, i, v = jnp.zeros(5), jnp.array([1, 7]), jnp.array([3.0, 4.0])
  np.testing.assert_array_equal(xjax.jit(f)(a, i, v), [0.0, 3.0, 4.0, 0.0, 0.0])
  out = xjax.vmap(f, in_axes=(None, 0, None))(a, jnp.array([[0, 1], [3, 4]]), v)
  np.testing.assert_array_equal(out, [[3.0, 4.0, 0, 0, 0], [0, 0, 0, 3.0, 4.0]])
  g = xjax.grad(lambda x: jnp.put(x, jnp.array([0]), 5.0, inplace=False).sum())(jnp.ones(3))
  np.testing.assert_array_equal(g, [0.0, 1.0, 1.0])
  check_grads(lambda x, v: f(x, i, v), (jnp.array([0.1, 0.2, -0.3, 0.4, 0.5]), v), order=1,
              modes=("rev",))


@pytest.mark.parametrize("dtype,shape,idx_shape,axis,v_shape", _cases([
    ((3, 4), (3, 1), 1, ()), ((3, 4), (2, 4), 0, (2, 4)), ((3, 4), (3, 2), -1, (1, 2)),
    ((2, 3, 4), (2, 3, 2), 2, (2, 3, 1)), ((2, 3, 4), (1, 3, 4), 0, ()),
    ((12,), (3,), None, (3,)), ((3, 4), (3,), None, ()), ((0, 3), (0, 1), 1, ())]))
def test_put_along_axis_matches_numpy(rng, dtype, shape, idx_shape, axis, v_shape):
  a = rand(rng, shape, dtype)
  n = int(np.prod(shape)) if axis is None else shape[axis]
  # Distinct indices along the axis (where an index repeats, which value lands is unspecified).
  ax = 0 if axis is None else axis
  full = list(idx_shape)
  full[ax] = n
  idx = np.take(np.argsort(rng.random(full), axis=ax), np.arange(idx_shape[ax]), axis=ax)
  idx = (idx - n * (idx % 2)).astype(np.int32)  # some negative indices too
  v = rand(rng, v_shape, dtype)
  check(lambda x, i, w: jnp.put_along_axis(x, i, w, axis, inplace=False),
        _copy_apply(lambda x, i, w: np.put_along_axis(x, i, w, axis)), a, idx, v, dtype=dtype)


def test_put_along_axis_out_of_range_modes_and_errors():
  x = jnp.arange(12.0).reshape(3, 4)
  idx = jnp.array([[0], [7], [-1]])
  out = jnp.put_along_axis(x, idx, -1.0, axis=1, inplace=False)
  want = np.arange(12.0).reshape(3, 4)
  want[0, 0] = want[2, 3] = -1.0  # 7 dropped, -1 counts from the end
  np.testing.assert_array_equal(out, want)
  out = jnp.put_along_axis(x, idx, -1.0, axis=1, inplace=False, mode="clip")
  want[1, 3] = -1.0
  np.testing.assert_array_equal(out, want)
  with pytest.raises(ValueError, match="put_along_axis cannot modify arrays in-place"):
    jnp.put_along_axis(x, idx, -1.0, axis=1)
  with pytest.raises(ValueError, match=r"must have same ndim. Got arr.ndim=2 and indices.ndim=1"):
    jnp.put_along_axis(x, jnp.array([0, 1]), 1.0, axis=0, inplace=False)
  with pytest.raises(ValueError, match=r"'values' must be broadcastable to 'indices'. Got "
                     r"values.shape=\(2, 2\) and indices.shape=\(3, 1\)"):
    jnp.put_along_axis(x, idx, jnp.ones((2, 2)), axis=1, inplace=False)
  with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
    jnp.put_along_axis(x, jnp.array([[0, 1]]), -1.0, axis=0, inplace=False)
  with pytest.raises(TypeError, match="Indexer must have integer or boolean type"):
    jnp.put_along_axis(x, jnp.array([[0.0]]), -1.0, axis=0, inplace=False)
  with pytest.raises(ValueError, match="axis 2 is out of bounds"):  # JAX: AssertionError
    jnp.put_along_axis(x, jnp.array([[0]]), -1.0, axis=2, inplace=False)
  with pytest.raises(TypeError, match="put_along_axis requires ndarray or scalar arguments"):
    jnp.put_along_axis(x, [[0]], -1.0, axis=0, inplace=False)


def test_put_along_axis_vmap_and_grad():
  f = lambda a, i, v: jnp.put_along_axis(a, i, v, axis=0, inplace=False)
  a = jnp.zeros((2, 4))
  i = jnp.array([[[1], [3]], [[0], [2]]])
  out = xjax.vmap(f, in_axes=(None, 0, None))(a, i, 5.0)
  np.testing.assert_array_equal(out, [[[0, 0, 0, 0], [5, 5, 5, 5]], [[5, 5, 5, 5], [0, 0, 0, 0]]])
  check_grads(lambda x, v: jnp.put_along_axis(x, jnp.array([[2], [0]]), v, axis=1,
                                              inplace=False),
              (jnp.array([[0.1, 0.2, 0.3], [-0.4, 0.5, 0.6]]), jnp.array([[1.0], [2.0]])),
              order=1, modes=("rev",))


# ----------------------------------------------------------------------------
# diag, diagflat, diagonal


@pytest.mark.parametrize("dtype,shape,k", _cases([((3,), -2), ((3, 4), 1)])
                         + _cases([((3,), 0), ((0,), 0), ((0,), 2), ((1,), 1), ((3,), 5),
                                   ((3, 4), 0), ((3, 4), -2), ((4, 3), 1), ((4, 3), -1),
                                   ((2, 2), 5), ((0, 2), 0), ((2, 2), -2)],
                                  dtypes=[np.int32], rest_dtype=np.int32))
def test_diag_matches_numpy(rng, dtype, shape, k):
  v = rand(rng, shape, dtype)
  check(lambda x: jnp.diag(x, k), lambda x: np.diag(x, k), v, dtype=dtype)


def test_diag_errors_and_weak_types():
  with pytest.raises(ValueError, match="diag input must be 1d or 2d"):
    jnp.diag(jnp.ones((2, 2, 2)))
  with pytest.raises(ValueError, match="diag input must be 1d or 2d"):
    jnp.diag(jnp.float32(1))
  with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
    jnp.diag(jnp.ones((2, 2)), 1.0)
  with pytest.raises(TypeError, match="diag requires ndarray or scalar arguments"):
    jnp.diag([1, 2])
  with pytest.raises(xjax.errors.TracerIntegerConversionError):
    xjax.jit(jnp.diag)(jnp.ones((2, 2)), 1)
  assert jnp.diag(jnp.asarray(2.0)[None]).weak_type  # as in JAX
  assert not jnp.diag(jnp.asarray(2.0)[None, None]).weak_type


@pytest.mark.parametrize("dtype,shape,k", _cases([((2, 2), -1), ((), 0), ((), 2), ((0,), 1),
                                                  ((3,), 0), ((3,), 2), ((1, 2, 1), -3)]))
def test_diagflat_matches_numpy(rng, dtype, shape, k):
  v = rand(rng, shape, dtype)
  check(lambda x: jnp.diagflat(x, k), lambda x: np.diagflat(x, k), v, dtype=dtype)


def test_diagflat_errors():
  with pytest.raises(TypeError, match="diagflat requires ndarray or scalar arguments"):
    jnp.diagflat([1])
  with pytest.raises(TypeError):
    jnp.diagflat(jnp.ones(2), 1.0)
  with pytest.raises(TypeError):
    xjax.jit(jnp.diagflat)(jnp.ones(2), 1)


@pytest.mark.parametrize("dtype,shape,axis1,axis2,offset", _cases([
    ((2, 3, 4), -1, 1, -1), ((3, 3), 0, 1, 0), ((3, 4), 0, 1, 1), ((3, 4), 0, 1, -3),
    ((3, 4), 0, 1, 4), ((4, 3), 1, 0, 1), ((4, 3), 1, 0, -2), ((3, 3), 1, 0, -1),
    ((2, 3, 4), 0, 2, 2), ((2, 3, 4, 5), 3, 1, -2), ((0, 3), 0, 1, 0), ((0, 3), 0, 1, 1),
    ((2, 0, 3), 2, 0, -1)]))
def test_diagonal_matches_numpy(rng, dtype, shape, axis1, axis2, offset):
  a = rand(rng, shape, dtype)
  check(lambda x: jnp.diagonal(x, offset, axis1, axis2),
        lambda x: np.diagonal(x, offset, axis1, axis2), a, dtype=dtype)
  check(lambda x: x.diagonal(offset=offset, axis1=axis1, axis2=axis2),
        lambda x: np.diagonal(x, offset, axis1, axis2), a, dtype=dtype, jit=False)


def test_diagonal_errors_and_weak_types_as_jax():
  x = jnp.arange(12.0).reshape(3, 4)
  with pytest.raises(ValueError, match="diagonal requires an array of at least two dimensions"):
    jnp.diagonal(jnp.ones(3))
  with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
    jnp.diagonal(x, 0, 0, 2)
  with pytest.raises(TypeError, match="transpose permutation isn't a permutation"):
    jnp.diagonal(x, 0, 1, -1)
  with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
    jnp.diagonal(x, 1.0)
  with pytest.raises(ValueError, match="Non-hashable static arguments"):
    xjax.jit(lambda o: jnp.diagonal(x, o))(1)
  with pytest.raises(TypeError, match="diagonal requires ndarray or scalar arguments"):
    jnp.diagonal([[1]])
  weak = lambda shape: jnp.broadcast_to(jnp.asarray(2.0), shape)
  # JAX's square, offset-0 case goes through a platform-dependent branch with a strong result.
  assert not jnp.diagonal(weak((3, 3))).weak_type
  assert jnp.diagonal(weak((2, 3))).weak_type
  assert jnp.diagonal(weak((3, 3)), 1).weak_type
  assert jnp.diagonal(weak((3, 3, 3))).weak_type


def test_diagonal_vmap_and_grad():
  a = jnp.arange(24.0).reshape(2, 3, 4)
  np.testing.assert_array_equal(xjax.vmap(lambda m: jnp.diagonal(m, -1))(a),
                                np.diagonal(np.asarray(a), -1, 1, 2))
  np.testing.assert_array_equal(xjax.vmap(lambda m: m.diagonal(1), in_axes=2)(a),
                                np.diagonal(np.moveaxis(np.asarray(a), 2, 0), 1, 1, 2))
  g = xjax.grad(lambda x: jnp.diagonal(x, -1).sum())(jnp.ones((3, 4)))
  np.testing.assert_array_equal(g, np.eye(3, 4, -1))
  small = jnp.asarray(np.random.default_rng(1).uniform(-1, 1, (2, 3, 4)).astype(np.float32))
  check_grads(lambda x: jnp.diagonal(x, 1, 2, 0), (small,), order=2)
  check_grads(lambda x: jnp.diag(x), (jnp.array([0.5, -0.25, 1.0]),), order=1, modes=("rev",))


# ----------------------------------------------------------------------------
# trace


def _trace_dtype(dtype):
  # JAX's sum: bools and narrow ints accumulate in the default int; floats keep their dtype.
  dtype = np.dtype(dtype)
  if dtype == np.bool_ or dtype.kind == "i":
    return np.dtype(np.int32) if dtype.itemsize <= 4 else dtype
  if dtype.kind == "u":
    return np.dtype(np.uint32) if dtype.itemsize <= 4 else dtype
  return dtype


@pytest.mark.parametrize("dtype,shape,axis1,axis2,offset", _cases(
    [((2, 3, 4), -1, 0, -1), ((3, 3), 0, 1, 0), ((3, 4), 0, 1, 2), ((3, 4), 0, 1, -5),
     ((4, 3), 1, 0, 1), ((2, 3, 4, 5), 1, 3, 2), ((0, 3), 0, 1, 0), ((2, 0, 3), 0, 2, -1)],
    dtypes=ALL_DTYPES + [np.int8, np.int16, np.uint16, np.float16], rest_dtype=np.int8))
def test_trace_matches_numpy(rng, dtype, shape, axis1, axis2, offset):
  a = rand(rng, shape, dtype)
  check(lambda x: jnp.trace(x, offset, axis1, axis2), lambda x: np.trace(x, offset, axis1, axis2),
        a, dtype=_trace_dtype(dtype))
  check(lambda x: x.trace(offset, axis1=axis1, axis2=axis2),
        lambda x: np.trace(x, offset, axis1, axis2), a, dtype=_trace_dtype(dtype), jit=False)


@pytest.mark.parametrize("dtype,want", [(np.float32, np.float32), (np.bool_, np.bool_),
                                        (np.int8, np.int8), (np.complex64, np.complex64)])
def test_trace_dtype_argument(dtype, want):
  a = np.arange(9).reshape(3, 3)
  out = jnp.trace(jnp.asarray(a, np.int32), dtype=dtype)
  assert out.dtype == want
  np.testing.assert_array_equal(out, np.trace(a, dtype=dtype))


def test_trace_dtype_float64_warns_without_x64():
  # The warning comes when trace is traced; a shape used nowhere else misses the jit cache.
  with pytest.warns(UserWarning, match="Explicitly requested dtype float64 requested in trace"):
    assert jnp.trace(jnp.ones((2, 7)), dtype=np.float64).dtype == np.float32


def test_trace_traced_offset_and_errors():
  x = jnp.arange(12.0).reshape(3, 4)
  f = xjax.jit(lambda o: jnp.trace(x, o))
  for o in (-4, -1, 0, 1, 3, 9):
    assert float(f(o)) == np.trace(np.asarray(x), o)
  with pytest.raises(ValueError, match="k must be a scalar integer"):
    xjax.jit(lambda o: jnp.trace(x, o))(1.5)
  with pytest.raises(ValueError, match="axis1 and axis2 can not be same. axis1=1 and axis2=-1"):
    jnp.trace(x, 0, 1, -1)
  with pytest.raises(ValueError, match="axis 1 is out of bounds for array of dimension 1"):
    jnp.trace(jnp.ones(3))
  with pytest.raises(ValueError, match="axis 5 is out of bounds"):
    jnp.trace(x, 0, 0, 5)
  with pytest.raises(NotImplementedError, match="'out' argument to jnp.trace"):
    jnp.trace(x, out=1)
  with pytest.raises(TypeError, match="data type 'foo' not understood"):
    jnp.trace(x, dtype="foo")
  assert not jnp.trace(jnp.broadcast_to(jnp.asarray(2.0), (3, 4))).weak_type  # as in JAX


def test_trace_vmap_and_grad():
  a = jnp.arange(18.0).reshape(2, 3, 3)
  np.testing.assert_array_equal(xjax.vmap(jnp.trace)(a), [12.0, 39.0])
  np.testing.assert_array_equal(xjax.vmap(lambda m: m.trace(1), in_axes=1)(a),
                                np.trace(np.asarray(a), 1, 0, 2))
  g = xjax.grad(lambda x: jnp.trace(x, 1))(jnp.ones((3, 4)))
  np.testing.assert_array_equal(g, np.eye(3, 4, 1))
  small = jnp.asarray(np.random.default_rng(2).uniform(-1, 1, (3, 2, 4)).astype(np.float32))
  check_grads(lambda x: jnp.trace(x, -1, 2, 0), (small,), order=2)


# ----------------------------------------------------------------------------
# fill_diagonal


@pytest.mark.parametrize("dtype,shape,val_shape", _cases([
    ((4, 3), (2,)), ((3, 4), ()), ((3, 4), (2, 2)), ((4, 3), (1,)), ((3, 3, 3), (2,)),
    ((3, 3, 3), ()), ((0, 3), (2,)), ((1, 1), (2, 2))]))
def test_fill_diagonal_matches_numpy(rng, dtype, shape, val_shape):
  a = rand(rng, shape, dtype)
  val = rand(rng, val_shape, dtype)
  check(lambda x, v: jnp.fill_diagonal(x, v, inplace=False), _copy_apply(np.fill_diagonal),
        a, val, dtype=dtype)


def test_fill_diagonal_errors_and_casts():
  x = jnp.arange(12.0).reshape(3, 4)
  with pytest.raises(NotImplementedError, match="JAX arrays are immutable, must use inplace"):
    jnp.fill_diagonal(x, 9.0)
  with pytest.raises(NotImplementedError, match="wrap=True is not implemented"):
    jnp.fill_diagonal(x, 9.0, True, inplace=False)
  with pytest.raises(ValueError, match="array must be at least 2-d"):
    jnp.fill_diagonal(jnp.ones(3), 9.0, inplace=False)
  with pytest.raises(ValueError, match="All dimensions of input must be of equal length"):
    jnp.fill_diagonal(jnp.zeros((2, 2, 3)), 9.0, inplace=False)
  with pytest.raises(ValueError, match="val must not be empty"):  # JAX: ZeroDivisionError
    jnp.fill_diagonal(jnp.zeros((2, 3)), jnp.zeros(0), inplace=False)
  with pytest.raises(TypeError, match="fill_diagonal requires ndarray or scalar arguments"):
    jnp.fill_diagonal(x, [2], inplace=False)
  with pytest.warns(FutureWarning, match="scatter inputs have incompatible types"):
    out = jnp.fill_diagonal(jnp.zeros((2, 3), int), 2.5, inplace=False)
  assert out.dtype == np.int32 and out.tolist() == [[2, 0, 0], [0, 2, 0]]
  assert jnp.fill_diagonal(jnp.asarray(2.0)[None, None], 1, inplace=False).weak_type


def test_fill_diagonal_vmap_and_grad():
  f = lambda a, v: jnp.fill_diagonal(a, v, inplace=False)
  out = xjax.vmap(f)(jnp.zeros((2, 2, 3)), jnp.array([1.0, 2.0]))
  np.testing.assert_array_equal(out, [np.eye(2, 3), 2 * np.eye(2, 3)])
  small = jnp.asarray(np.random.default_rng(3).uniform(-1, 1, (3, 4)).astype(np.float32))
  check_grads(f, (small, jnp.array([0.5, -0.5])), order=1, modes=("rev",))


# ----------------------------------------------------------------------------
# Array methods and docs


def test_array_methods_choose_and_compress(rng):
  a = np.array([0, 2, 1, 1], np.int32)
  choices = rand(rng, (3, 4), np.float32)
  np.testing.assert_array_equal(jnp.asarray(a).choose(choices), np.choose(a, choices))
  np.testing.assert_array_equal(jnp.asarray(a + 3).choose(list(choices), mode="wrap"),
                                np.choose(a + 3, choices, mode="wrap"))
  x = jnp.arange(12).reshape(3, 4)
  np.testing.assert_array_equal(x.compress(jnp.array([True, False, True]), axis=0),
                                np.asarray(x)[[0, 2]])
  np.testing.assert_array_equal(x.compress(jnp.array([False, True]), axis=1, size=2,
                                           fill_value=-1), [[1, -1], [5, -1], [9, -1]])
  with pytest.raises(NotImplementedError, match="'out' argument to jnp.compress"):
    x.compress(jnp.array([True]), out=1)
  traced = xjax.jit(lambda y: y.compress(jnp.array([True, False, True]), axis=0, size=2)
                    .trace())(x)
  assert int(traced) == 0 + 9


def test_array_method_signatures_match_jax():
  def sig(f):
    return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]
  pos, kw = inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY
  assert sig(xjax.Array.choose) == [("self", pos, inspect.Parameter.empty),
                                    ("choices", pos, inspect.Parameter.empty),
                                    ("out", pos, None), ("mode", pos, "raise")]
  assert sig(xjax.Array.compress) == [("self", pos, inspect.Parameter.empty),
                                      ("condition", pos, inspect.Parameter.empty),
                                      ("axis", pos, None), ("out", kw, None), ("size", kw, None),
                                      ("fill_value", kw, 0)]
  assert list(inspect.signature(jnp.trace).parameters) == ["a", "offset", "axis1", "axis2",
                                                          "dtype", "out"]
  assert list(inspect.signature(jnp.put_along_axis).parameters) == [
      "arr", "indices", "values", "axis", "inplace", "mode"]
  assert inspect.signature(jnp.place).parameters["inplace"].kind == inspect.Parameter.KEYWORD_ONLY
  assert inspect.signature(jnp.compress).parameters["out"].kind == inspect.Parameter.KEYWORD_ONLY


def test_docstring_examples_run():
  result = doctest.testmod(selection, optionflags=doctest.NORMALIZE_WHITESPACE)
  assert result.attempted > 0 and result.failed == 0
