"""Tests for xjax/_src/numpy/setops.py against NumPy, and against JAX 0.10.2 where they differ.

Values marked "JAX 0.10.2" were computed with real JAX (padding under `size=`,
complex NaNs, empty inputs, index dtypes).
"""
import doctest

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from jnp_checks import ALL_DTYPES, bf16
from xjax._src import config
from xjax._src.numpy import setops
from xjax.errors import ConcretizationTypeError, NonConcreteBooleanIndexError

INT = np.dtype(np.int32)


@pytest.fixture
def rng():
  return np.random.default_rng(0)


def _data(rng, shape, dtype, nan=False):
  """Values with many repeats (and NaNs when asked) of exactly `dtype`."""
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return rng.random(shape) < 0.5
  x = rng.integers(-2, 3, size=shape).astype(np.float64)
  if dtype.kind == "u":
    x = x + 2
  if dtype.kind == "c":
    x = x + 1j * rng.integers(0, 2, size=shape)
  if nan and x.size:
    x.flat[rng.integers(0, x.size, size=max(1, x.size // 3))] = np.nan
  return x.astype(dtype)


def _host(x):
  return x.astype(np.float32) if x.dtype == bf16 else x


def _assert_same(actual, expected, dtype):
  """`actual` is an xjax Array of `dtype` equal to `expected` (NaNs equal)."""
  assert isinstance(actual, xjax.Array), type(actual)
  assert actual.dtype == np.dtype(dtype), (actual.dtype, dtype)
  expected = np.asarray(expected)
  assert actual.shape == expected.shape, (actual.shape, expected.shape)
  got = np.asarray(actual)
  if got.dtype == bf16:
    got = got.astype(np.float32)
  np.testing.assert_array_equal(got, expected.astype(got.dtype))


def _assert_all(actual, expected, dtypes):
  actual = actual if isinstance(actual, tuple) else (actual,)
  expected = expected if isinstance(expected, tuple) else (expected,)
  assert len(actual) == len(expected) == len(dtypes)
  for a, e, d in zip(actual, expected, dtypes):
    _assert_same(a, e, d)


# ----------------------------------------------------------------------------
# unique


@pytest.mark.parametrize("dtype", ALL_DTYPES + [np.dtype(np.int8)], ids=str)
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (3, 4), (2, 3, 2)])
def test_unique_matches_numpy(rng, dtype, shape):
  x = _data(rng, shape, dtype)
  got = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
  want = np.unique(_host(x), return_index=True, return_inverse=True, return_counts=True)
  _assert_all(got, want, [dtype, INT, INT, INT])
  _assert_same(jnp.unique(x), want[0], dtype)


@pytest.mark.parametrize("dtype", [np.float32, bf16, np.float16], ids=str)
@pytest.mark.parametrize("equal_nan", [True, False])
def test_unique_nans_match_numpy(rng, dtype, equal_nan):
  x = np.concatenate([_data(rng, (9,), dtype, nan=True), np.array([np.nan, -0.0, 0.0], dtype)])
  got = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True,
                   equal_nan=equal_nan)
  want = np.unique(_host(x), return_index=True, return_inverse=True, return_counts=True,
                   equal_nan=equal_nan)
  _assert_all(got, want, [dtype, INT, INT, INT])


@pytest.mark.parametrize("shape,axis", [((4, 3), 0), ((4, 3), 1), ((4, 3), -1), ((3, 4, 2), 1),
                                        ((3, 4, 2), -3), ((5, 1), 0), ((0, 3), 0)])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.bool_, np.complex64])
def test_unique_axis_matches_numpy(rng, shape, axis, dtype):
  x = _data(rng, shape, dtype)
  x = np.concatenate([x, x[:2]]) if shape[0] else x  # repeated slices along axis 0
  got = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
  want = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
  _assert_all(got, want, [dtype, INT, INT, INT])


def test_unique_axis_nans():
  x = np.array([[np.nan, 1], [np.nan, 1], [0, np.nan]], np.float32)
  vals, counts = jnp.unique(x, axis=0, return_counts=True)
  _assert_all((vals, counts), ([[0, np.nan], [np.nan, 1]], [1, 2]), [np.float32, INT])
  vals, counts = jnp.unique(x, axis=0, return_counts=True, equal_nan=False)
  _assert_all((vals, counts), ([[0, np.nan], [np.nan, 1], [np.nan, 1]], [1, 1, 1]),
              [np.float32, INT])


def test_unique_complex_nans_become_one_value():
  # JAX 0.10.2 canonicalizes every complex NaN to nan+0j (NumPy keeps 1+nanj).
  c = np.array([1 + 1j, complex(np.nan, 1), complex(1, np.nan), 1 + 1j, 0j], np.complex64)
  _assert_all(jnp.unique(c, return_counts=True), ([0j, 1 + 1j, complex(np.nan, 0)], [1, 2, 2]),
              [np.complex64, INT])
  _assert_all(jnp.unique(c, return_counts=True, equal_nan=False),
              ([0j, 1 + 1j, complex(np.nan, 0), complex(np.nan, 0)], [1, 2, 1, 1]),
              [np.complex64, INT])


def test_unique_signed_zeros_keep_first():
  _assert_all(jnp.unique(np.float32([-0.0, 0.0]), return_counts=True), ([-0.0], [2]),
              [np.float32, INT])
  assert np.signbit(np.asarray(jnp.unique(np.float32([-0.0, 0.0])))[0])
  assert not np.signbit(np.asarray(jnp.unique(np.float32([0.0, -0.0])))[0])


def test_unique_inverse_shapes_and_reconstruction(rng):
  x = _data(rng, (3, 4), np.int32)
  vals, inv = jnp.unique(x, return_inverse=True)
  assert inv.shape == (3, 4)
  np.testing.assert_array_equal(np.asarray(vals)[np.asarray(inv)], x)
  vals, inv = jnp.unique(x, return_inverse=True, axis=1)
  assert inv.shape == (4,)
  np.testing.assert_array_equal(np.asarray(vals)[:, np.asarray(inv)], x)


def test_unique_zero_d_and_scalars():
  # JAX 0.10.2: 0-d input is flattened; the inverse keeps the 0-d shape.
  vals, idx, inv, counts = jnp.unique(jnp.array(5.0), return_index=True, return_inverse=True,
                                      return_counts=True)
  _assert_all((vals, idx, inv, counts), ([5.0], [0], 0, [1]), [np.float32, INT, INT, INT])
  assert vals.weak_type and not jnp.unique(np.float32([5.0])).weak_type
  out = jnp.unique(3)
  assert out.dtype == INT and out.weak_type and out.tolist() == [3]


def test_unique_empty_slices():
  # JAX 0.10.2: slices of size zero are all equal.
  got = jnp.unique(np.zeros((2, 0), np.float32), return_index=True, return_inverse=True,
                   return_counts=True, axis=0)
  _assert_all(got, (np.zeros((1, 0)), [0], [0, 0], [2]), [np.float32, INT, INT, INT])


def _np_unique_sized(x, size, fill_value=None, axis=None, equal_nan=True):
  """NumPy's unique padded or cut to `size` entries the way JAX does."""
  vals, idx, inv, counts = np.unique(_host(x), return_index=True, return_inverse=True,
                                     return_counts=True, axis=axis, equal_nan=equal_nan)
  ax = 0 if axis is None else axis
  vals = np.moveaxis(vals, ax, 0)
  k = len(idx)
  if size <= k:
    vals, idx, counts = vals[:size], idx[:size], counts[:size]
  else:
    pad = np.broadcast_to(vals[:1] if fill_value is None else fill_value,
                          (size - k, *vals.shape[1:])).astype(vals.dtype)
    vals = np.concatenate([vals, pad])
    idx = np.concatenate([idx, np.full(size - k, idx[0])])
    counts = np.concatenate([counts, np.zeros(size - k, counts.dtype)])
  return np.moveaxis(vals, 0, ax), idx, inv, counts


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("size", [1, 3, 12])
@pytest.mark.parametrize("fill_value", [None, 1])
def test_unique_size_under_jit_matches_padded_numpy(rng, dtype, size, fill_value):
  x = _data(rng, (2, 4), dtype)
  f = lambda a: jnp.unique(a, return_index=True, return_inverse=True, return_counts=True,
                           size=size, fill_value=fill_value)
  want = _np_unique_sized(x, size, fill_value)
  for got in (f(x), xjax.jit(f)(x)):
    _assert_all(got, want, [dtype, INT, INT, INT])


def test_unique_size_with_axis_and_fill_vector(rng):
  x = np.array([[1, 2], [0, 5], [1, 2]], np.int32)
  f = lambda a: jnp.unique(a, return_counts=True, axis=0, size=4, fill_value=np.int32([9, 8]))
  for got in (f(x), xjax.jit(f)(x)):
    _assert_all(got, ([[0, 5], [1, 2], [9, 8], [9, 8]], [1, 2, 0, 0]), [INT, INT])
  f = lambda a: jnp.unique(a, return_inverse=True, axis=1, size=3)
  y = _data(rng, (2, 5), np.int32)
  want = _np_unique_sized(y, 3, axis=1)
  _assert_all(xjax.jit(f)(y), (want[0], want[2]), [INT, INT])


def test_unique_size_casts_fill_value():
  # JAX 0.10.2: fill_value is converted to the input dtype (300 wraps to 44 in int8).
  out = jnp.unique(np.int8([1, 2, 1]), size=4, fill_value=300)
  _assert_same(out, [1, 2, 44, 44], np.int8)
  _assert_same(jnp.unique(np.float32([1, 2]), size=3, fill_value=True), [1, 2, 1], np.float32)


def test_unique_traced_fill_value_under_jit():
  f = xjax.jit(lambda a, fv: jnp.unique(a, size=3, fill_value=fv))
  _assert_same(f(np.float32([5, 1, 5]), 7.0), [1, 5, 7], np.float32)


def test_unique_empty_input_with_size():
  # JAX 0.10.2: values take `size`; index, inverse and counts stay empty.
  got = jnp.unique(np.zeros(0, np.float32), return_index=True, return_inverse=True,
                   return_counts=True, size=3, fill_value=1)
  _assert_all(got, ([1, 1, 1], [], [], []), [np.float32, INT, INT, INT])
  _assert_same(jnp.unique(np.zeros(0, np.float32), size=0), [], np.float32)
  with pytest.raises(ValueError, match="fill_value must be specified"):
    jnp.unique(np.zeros(0, np.float32), size=3)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, bf16], ids=str)
def test_unique_size_under_vmap(rng, dtype):
  x = _data(rng, (4, 6), dtype, nan=dtype != np.int32)
  f = lambda a: jnp.unique(a, return_index=True, return_inverse=True, return_counts=True,
                           size=4, fill_value=-1)
  for batched in (xjax.vmap(f), xjax.jit(xjax.vmap(f))):
    got = batched(x)
    for row in range(4):
      _assert_all(tuple(g[row] for g in got), _np_unique_sized(x[row], 4, -1),
                  [dtype, INT, INT, INT])


def test_unique_axis_size_under_vmap():
  x = np.array([[[1, 2], [1, 2], [0, 1]], [[3, 4], [5, 6], [3, 4]]], np.int32)
  vals, inv = xjax.vmap(lambda a: jnp.unique(a, size=3, axis=0, return_inverse=True))(x)
  _assert_all((vals, inv), ([[[0, 1], [1, 2], [0, 1]], [[3, 4], [5, 6], [3, 4]]],
                            [[1, 1, 0], [0, 1, 0]]), [INT, INT])


def test_unique_without_size_under_jit_raises():
  with pytest.raises(ConcretizationTypeError,
                     match="The error arose for the first argument of jnp.unique"):
    xjax.jit(jnp.unique)(jnp.arange(3))
  with pytest.raises(ConcretizationTypeError,
                     match=r"The error arose for the size argument of jnp.unique\(\)\. To make"):
    xjax.jit(lambda x: jnp.unique(x, size=x.sum()))(jnp.arange(3))
  with pytest.raises(ConcretizationTypeError, match="first argument of jnp.unique"):
    xjax.vmap(jnp.unique)(jnp.ones((2, 3)))


def test_unique_bad_arguments():
  with pytest.raises(TypeError, match="unique requires ndarray or scalar arguments"):
    jnp.unique([1, 2])
  with pytest.raises(ValueError, match="axis 3 is out of bounds for array of dimension 1"):
    jnp.unique(jnp.arange(3), axis=3)
  with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
    jnp.unique(jnp.arange(3), size=2.0)
  with pytest.raises(TypeError, match="non-negative"):
    jnp.unique(jnp.arange(3), size=-1)


def test_unique_ignores_fill_without_size_and_sorted_flag():
  _assert_same(jnp.unique(np.int32([2, 0, 2]), fill_value=3, sorted=False), [0, 2], INT)


# ----------------------------------------------------------------------------
# The Array API forms


def test_unique_array_api_forms_match_numpy(rng):
  x = _data(rng, (3, 5), np.float32, nan=True)
  xh = x.astype(np.float32)
  result = jnp.unique_all(x)
  assert type(result).__name__ == "_UniqueAllResult"
  assert result._fields == ("values", "indices", "inverse_indices", "counts")
  want = np.unique_all(xh)
  _assert_all(tuple(result), tuple(want), [np.float32, INT, INT, INT])
  result = jnp.unique_counts(x)
  assert type(result).__name__ == "_UniqueCountsResult" and result._fields == ("values", "counts")
  _assert_all(tuple(result), tuple(np.unique_counts(xh)), [np.float32, INT])
  result = jnp.unique_inverse(x)
  assert result._fields == ("values", "inverse_indices")
  _assert_all(tuple(result), tuple(np.unique_inverse(xh)), [np.float32, INT])
  _assert_same(jnp.unique_values(x), np.unique_values(xh), np.float32)


def test_unique_array_api_forms_with_size_under_jit():
  x = np.float32([1, np.nan, 0, np.nan, 1])
  got = xjax.jit(lambda a: jnp.unique_all(a, size=6, fill_value=3))(x)
  assert type(got).__name__ == "_UniqueAllResult"
  _assert_all(tuple(got), ([0, 1, np.nan, np.nan, 3, 3], [2, 0, 1, 3, 2, 2], [1, 2, 0, 3, 1],
                           [1, 2, 1, 1, 0, 0]), [np.float32, INT, INT, INT])
  _assert_same(xjax.jit(lambda a: jnp.unique_values(a, size=2))(x), [0, 1], np.float32)
  counts = xjax.vmap(lambda a: jnp.unique_counts(a, size=3).counts)(np.int32([[1, 1, 2],
                                                                              [3, 4, 5]]))
  _assert_same(counts, [[2, 1, 0], [1, 1, 1]], INT)
  with pytest.raises(ConcretizationTypeError):
    xjax.jit(jnp.unique_inverse)(x)


# ----------------------------------------------------------------------------
# union1d, intersect1d, setdiff1d, setxor1d

_PAIRS = [((6,), (4,)), ((2, 3), (5,)), ((0,), (3,)), ((4,), (0,)), ((), (3,)), ((0,), (0,))]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shapes", _PAIRS, ids=str)
def test_set_ops_match_numpy(rng, dtype, shapes):
  a = _data(rng, shapes[0], dtype, nan=np.dtype(dtype).kind in "fV")
  b = _data(rng, shapes[1], dtype, nan=np.dtype(dtype).kind in "fV")
  ah, bh = _host(a), _host(b)
  _assert_same(jnp.union1d(a, b), np.union1d(ah, bh), dtype)
  _assert_same(jnp.setdiff1d(a, b), np.setdiff1d(ah, bh), dtype)
  _assert_same(jnp.setxor1d(a, b), np.setxor1d(ah, bh), dtype)
  _assert_same(jnp.intersect1d(a, b), np.intersect1d(ah, bh), dtype)
  got = jnp.intersect1d(a, b, return_indices=True)
  _assert_all(got, np.intersect1d(ah, bh, return_indices=True), [dtype, INT, INT])


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.complex64])
def test_set_ops_assume_unique_match_numpy(rng, dtype):
  a = rng.permutation(9)[:5].astype(dtype)
  b = rng.permutation(9)[:4].astype(dtype)
  _assert_same(jnp.setdiff1d(a, b, assume_unique=True), np.setdiff1d(a, b, assume_unique=True),
               dtype)
  _assert_same(jnp.setxor1d(a, b, assume_unique=True), np.setxor1d(a, b, assume_unique=True),
               dtype)
  got = jnp.intersect1d(a, b, assume_unique=True, return_indices=True)
  _assert_all(got, np.intersect1d(a, b, assume_unique=True, return_indices=True),
              [dtype, INT, INT])


def test_set_ops_promote_dtypes():
  i8, f32 = np.int8([1, 2]), np.float32([1.5, 2.0])
  _assert_same(jnp.union1d(i8, f32), [1, 1.5, 2], np.float32)
  _assert_same(jnp.setxor1d(i8, np.uint8([2, 3])), [1, 3], np.int16)
  _assert_same(jnp.intersect1d(i8, f32), [2], np.float32)
  # setdiff1d keeps ar1's dtype (values are compared in the promoted dtype).
  _assert_same(jnp.setdiff1d(i8, np.float32([1.5])), [1, 2], np.int8)
  assert jnp.union1d(1, 2.0).weak_type and jnp.union1d(1, 2.0).dtype == np.float32


def _padded(values, size, fill):
  values = list(values)[:size]
  return values + [fill] * (size - len(values))


@pytest.mark.parametrize("size", [0, 2, 9])
@pytest.mark.parametrize("fill_value", [None, -1])
def test_set_ops_size_under_jit(rng, size, fill_value):
  a = np.int32([5, 1, 3, 1, 7, 9])
  b = np.int32([[3, 4], [5, 3]])
  union, inter, diff, xor = (np.union1d(a, b), np.intersect1d(a, b), np.setdiff1d(a, b),
                             np.setxor1d(a, b))
  cases = [
      # JAX 0.10.2 pads union1d with its smallest value, intersect1d and setxor1d with
      # their smallest result, and setdiff1d with 0.
      (jnp.union1d, union, union[0]),
      (jnp.intersect1d, inter, inter.min()),
      (jnp.setdiff1d, diff, 0),
      (jnp.setxor1d, xor, xor.min()),
  ]
  for fn, want, default_fill in cases:
    f = lambda x, y, fn=fn: fn(x, y, size=size, fill_value=fill_value)
    expected = _padded(want, size, default_fill if fill_value is None else fill_value)
    for got in (f(a, b), xjax.jit(f)(a, b)):
      _assert_same(got, np.int32(expected), INT)


@pytest.mark.parametrize("assume_unique", [False, True])
def test_intersect1d_indices_with_size(assume_unique):
  a, b = (np.int32([5, 1, 3]), np.int32([3, 4, 5])) if assume_unique else (
      np.int32([5, 1, 3, 1, 7, 9]), np.int32([3, 4, 5, 3]))
  f = lambda x, y: jnp.intersect1d(x, y, assume_unique=assume_unique, return_indices=True,
                                   size=4)
  # JAX 0.10.2: padding index slots hold len(ar1) and len(ar2).
  want = ([3, 5, 3, 3], [2, 0, len(a), len(a)], [0, 2, len(b), len(b)])
  for got in (f(a, b), xjax.jit(f)(a, b)):
    _assert_all(got, want, [INT, INT, INT])


def test_set_ops_nans_with_size():
  nan = np.nan
  got = xjax.jit(lambda x, y: jnp.setxor1d(x, y, size=5))(np.float32([nan, 1]),
                                                           np.float32([nan, 2]))
  _assert_same(got, [1, 2, nan, nan, nan], np.float32)
  got = jnp.intersect1d(np.float32([nan, 1, 2]), np.float32([nan, 1, 3]), size=3)
  _assert_same(got, [1, 1, 1], np.float32)
  got = jnp.setdiff1d(np.float32([nan, 1, nan]), np.float32([1]), size=3)
  _assert_same(got, [nan, 0, 0], np.float32)


def test_set_ops_fill_value_dtypes():
  a, b = np.int32([5, 1, 3, 1, 7, 9]), np.int32([3, 4, 5, 3])
  # JAX 0.10.2: union1d and setdiff1d cast the fill to the result dtype; intersect1d and
  # setxor1d promote with it.
  _assert_same(jnp.union1d(a, b, size=8, fill_value=2.5), [1, 3, 4, 5, 7, 9, 2, 2], INT)
  _assert_same(jnp.setdiff1d(a, b, size=5, fill_value=2.5), [1, 7, 9, 2, 2], INT)
  out = jnp.setxor1d(a, b, size=6, fill_value=2.5)
  _assert_same(out, [1, 4, 7, 9, 2.5, 2.5], np.float32)
  assert out.weak_type
  _assert_same(jnp.intersect1d(a, b, size=3, fill_value=2.5), [3, 5, 2.5], np.float32)


def test_set_ops_empty_inputs_with_size():
  # JAX 0.10.2 values.
  e = np.zeros(0, np.float32)
  _assert_all(jnp.intersect1d(e, e, return_indices=True, size=2), ([0, 0], [], []),
              [np.float32, INT, INT])
  # JAX 0.10.2 fails inside a gather here; xjax pads as everywhere else.
  _assert_all(jnp.intersect1d(e, np.float32([1, 2]), return_indices=True, size=2),
              ([0, 0], [0, 0], [2, 2]), [np.float32, INT, INT])
  _assert_same(jnp.setxor1d(e, e, size=2), [0, 0], np.float32)
  _assert_same(jnp.setdiff1d(np.zeros(0, np.int8), np.int32([1]), size=2, fill_value=4),
               [4, 4], np.int8)
  _assert_same(jnp.union1d(e, e, size=2, fill_value=3), [3, 3], np.float32)


@pytest.mark.parametrize("name", ["union1d", "intersect1d", "setdiff1d", "setxor1d"])
def test_set_ops_under_vmap_with_size(rng, name):
  fn, np_fn = getattr(jnp, name), getattr(np, name)
  a = _data(rng, (5, 6), np.int32)
  b = _data(rng, (5, 4), np.int32)
  got = xjax.vmap(lambda x, y: fn(x, y, size=12, fill_value=-9))(a, b)
  for row in range(5):
    _assert_same(got[row], _padded(np_fn(a[row], b[row]), 12, -9), INT)


def test_intersect1d_indices_under_vmap():
  a, b = np.int32([[1, 2, 3], [3, 4, 5]]), np.int32([[2, 5, 1], [3, 3, 9]])
  got = xjax.vmap(lambda x, y: jnp.intersect1d(x, y, size=3, return_indices=True))(a, b)
  _assert_all(got, ([[1, 2, 1], [3, 3, 3]], [[0, 1, 3], [0, 3, 3]], [[2, 0, 3], [0, 3, 3]]),
              [INT, INT, INT])


def test_set_ops_without_size_under_jit_raise():
  a = jnp.arange(4)
  for fn, msg in [(jnp.union1d, r"The error arose in union1d\(\)"),
                  (jnp.setdiff1d, r"The error arose in setdiff1d\(\)"),
                  (jnp.setxor1d, "first argument of jnp.unique"),
                  (jnp.intersect1d, "first argument of jnp.unique")]:
    with pytest.raises(ConcretizationTypeError, match=msg):
      xjax.jit(fn)(a, a)
  with pytest.raises(ConcretizationTypeError, match=r"The error arose in union1d\(\)"):
    xjax.jit(lambda x, s: jnp.union1d(x, x, size=s))(a, 3)
  for fn in (jnp.intersect1d, jnp.setxor1d):
    with pytest.raises(NonConcreteBooleanIndexError):
      xjax.jit(lambda x, fn=fn: fn(x, x, assume_unique=True))(a)
  # JAX 0.10.2 needs concrete values even for a constant ar1 under jit.
  with pytest.raises(ConcretizationTypeError):
    xjax.jit(lambda y: jnp.setdiff1d(np.int32([1, 2]), y))(a)
  with pytest.raises(TypeError, match="union1d requires ndarray or scalar arguments"):
    jnp.union1d([1], [2])


def test_set_op_index_dtypes_under_x64():
  a, b = np.int64([5, 1, 3, 1, 7, 9]), np.int64([3, 4, 5, 3])
  with config.enable_x64(True):
    got = jnp.intersect1d(a, b, return_indices=True)
    assert [g.dtype for g in got] == [np.int64] * 3
    # JAX 0.10.2 keeps int32 indices on this path even with x64.
    got = jnp.intersect1d(a[:3], b[:3], assume_unique=True, return_indices=True)
    assert [g.dtype for g in got] == [np.int64, np.int32, np.int32]
    got = jnp.unique(a, return_index=True, return_inverse=True, return_counts=True)
    assert [g.dtype for g in got] == [np.int64] * 4


# ----------------------------------------------------------------------------
# isin

_METHODS = ["auto", "compare_all", "binary_search", "sort"]


@pytest.mark.parametrize("method", _METHODS)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shapes", [((3, 4), (5,)), ((7,), (2, 2)), ((), (3,)), ((2, 0), (3,)),
                                    ((4,), (0,))], ids=str)
@pytest.mark.parametrize("invert", [False, True])
def test_isin_matches_numpy(rng, method, dtype, shapes, invert):
  x = _data(rng, shapes[0], dtype, nan=np.dtype(dtype).kind in "fV")
  t = _data(rng, shapes[1], dtype, nan=np.dtype(dtype).kind in "fV")
  want = np.isin(_host(x), _host(t), invert=invert)
  f = lambda a, b: jnp.isin(a, b, invert=invert, method=method)
  for got in (f(x, t), xjax.jit(f)(x, t)):
    _assert_same(got, want, np.bool_)


@pytest.mark.parametrize("method", _METHODS)
def test_isin_signed_zero_and_assume_unique(method):
  got = jnp.isin(np.float32([np.nan, 1, -0.0, 2]), np.float32([np.nan, 1, 0.0]), method=method)
  _assert_same(got, [False, True, True, False], np.bool_)
  got = jnp.isin(np.int32([4, 0, 2]), np.int32([2, 3, 4]), assume_unique=True, method=method)
  _assert_same(got, [True, False, True], np.bool_)


def test_isin_promotes_and_accepts_scalars():
  _assert_same(jnp.isin(np.int8([1, 2]), np.float32([1.0, 2.5])), [True, False], np.bool_)
  _assert_same(jnp.isin(np.bool_([True, False]), np.int32([1])), [True, False], np.bool_)
  out = jnp.isin(3, jnp.arange(5))
  assert out.shape == () and bool(out) and not out.weak_type


@pytest.mark.parametrize("method", _METHODS)
def test_isin_under_vmap(rng, method):
  x, t = _data(rng, (4, 5), np.int32), _data(rng, (4, 3), np.int32)
  got = xjax.vmap(lambda a, b: jnp.isin(a, b, method=method))(x, t)
  _assert_same(got, np.stack([np.isin(x[i], t[i]) for i in range(4)]), np.bool_)
  got = xjax.vmap(lambda a: jnp.isin(a, t[0], method=method), in_axes=1)(x)
  _assert_same(got, np.isin(x, t[0]).T, np.bool_)


def test_isin_unknown_method():
  with pytest.raises(ValueError, match="method='foo' is not implemented; options are "
                                       "'compare_all', 'binary_search', 'sort', and 'auto'"):
    jnp.isin(jnp.arange(3), jnp.arange(2), method="foo")
  # JAX 0.10.2 returns early for empty inputs, before looking at the method.
  _assert_same(jnp.isin(np.zeros(0), jnp.arange(2), method="foo"), [], np.bool_)
  with pytest.raises(TypeError, match="isin requires ndarray or scalar arguments"):
    jnp.isin([1], 1)


# ----------------------------------------------------------------------------


def test_setops_docstring_examples_run():
  result = doctest.testmod(setops, optionflags=doctest.NORMALIZE_WHITESPACE)
  assert result.attempted > 0 and result.failed == 0
