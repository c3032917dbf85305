"""Shape manipulation, joining/splitting, tiling, sorting, nonzero and closeness tests
against NumPy, with JAX's printed jaxprs and error messages."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import xjax
import xjax.numpy as jnp
from xjax import errors
from jnp_checks import ALL_DTYPES, bf16, check, rand

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("shape", [(24,), (4, 6), (-1,), (2, -1, 3), (4, 3, 2)])
def test_reshape_matches_numpy(shape):
  check(lambda a: jnp.reshape(a, shape), lambda a: np.reshape(a, shape), X)
  check(lambda a: a.reshape(shape), lambda a: a.reshape(shape), X)
  check(lambda a: a.reshape(*shape), lambda a: a.reshape(*shape), X)
  check(lambda a: jnp.reshape(a, shape, order="F"), lambda a: np.reshape(a, shape, order="F"), X)


def test_reshape_errors_match_jax():
  with pytest.raises(TypeError) as info:
    jnp.ones(6).reshape(4)
  assert str(info.value) == "cannot reshape array of shape (6,) (size 6) into shape 4 (size 4)"
  with pytest.raises(TypeError) as info:
    jnp.ones(6).reshape(-1, -1)
  assert str(info.value) == "can only specify one unknown axis size with a `-1` value, got (-1, -1)"
  with pytest.raises(TypeError, match="does not evenly divide 6"):
    jnp.ones(6).reshape(4, -1)
  with pytest.raises(NotImplementedError, match="order=A"):
    jnp.reshape(jnp.ones(6), (6,), order="A")


def test_reshape_with_traced_shape_explains_itself():
  # The Tracing seed: x.reshape(jnp.array(x.shape).prod()) fails, np.prod works.
  with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values"):
    xjax.jit(lambda x: x.reshape(jnp.array(x.shape).prod()))(jnp.ones((2, 3)))
  out = xjax.jit(lambda x: x.reshape((np.prod(x.shape),)))(jnp.ones((2, 3)))
  assert repr(out) == "Array([1., 1., 1., 1., 1., 1.], dtype=float32)"


def test_reshape_prints_like_jax():
  assert str(xjax.make_jaxpr(lambda x: x.reshape(3, 2))(np.ones((2, 3), np.float32))) == (
      "{ lambda ; a:f32[2,3]. let\n"
      "    b:f32[3,2] = reshape[dimensions=None new_sizes=(3, 2) sharding=None] a\n  in (b,) }")


def test_ravel_flatten_transpose_family():
  check(jnp.ravel, np.ravel, X)
  check(lambda a: a.ravel(), lambda a: a.ravel(), X)
  check(lambda a: a.flatten(), lambda a: a.flatten(), X)
  check(lambda a: jnp.ravel(a, order="F"), lambda a: np.ravel(a, order="F"), X)
  check(jnp.transpose, np.transpose, X)
  check(lambda a: jnp.transpose(a, (1, 2, 0)), lambda a: np.transpose(a, (1, 2, 0)), X)
  check(lambda a: jnp.transpose(a, (-1, 0, 1)), lambda a: np.transpose(a, (-1, 0, 1)), X)
  check(lambda a: a.transpose(2, 0, 1), lambda a: a.transpose(2, 0, 1), X)
  check(lambda a: a.transpose((2, 0, 1)), lambda a: a.transpose((2, 0, 1)), X)
  check(lambda a: a.T, lambda a: a.T, X)
  check(lambda a: a.mT, lambda a: np.swapaxes(a, -1, -2), X)
  check(lambda a: jnp.permute_dims(a, (0, 2, 1)), lambda a: np.transpose(a, (0, 2, 1)), X)
  check(lambda a: jnp.swapaxes(a, 0, 2), lambda a: np.swapaxes(a, 0, 2), X)
  check(lambda a: a.swapaxes(-1, 0), lambda a: a.swapaxes(-1, 0), X)
  check(lambda a: jnp.moveaxis(a, 0, -1), lambda a: np.moveaxis(a, 0, -1), X)
  check(lambda a: jnp.moveaxis(a, (0, 1), (2, 0)), lambda a: np.moveaxis(a, (0, 1), (2, 0)), X)
  with pytest.raises(TypeError, match="transpose permutation isn't a permutation of operand "
                                      r"dimensions, got permutation \(0, 0\) for operand shape"):
    jnp.transpose(jnp.ones((2, 3)), (0, 0))


def test_squeeze_expand_dims_atleast():
  y = X[None, :, :1]
  check(jnp.squeeze, np.squeeze, y)
  check(lambda a: jnp.squeeze(a, axis=2), lambda a: np.squeeze(a, axis=2), y)
  check(lambda a: a.squeeze((0, 2)), lambda a: a.squeeze((0, 2)), y)
  with pytest.raises(ValueError):
    jnp.squeeze(X, axis=0)
  for axis in (0, -1, (0, 2), (1, -1)):
    check(lambda a: jnp.expand_dims(a, axis), lambda a: np.expand_dims(a, axis), X[0])
  for fn in ("atleast_1d", "atleast_2d", "atleast_3d"):
    for x in (np.float32(1), np.ones(3, np.float32), np.ones((2, 3), np.float32), X):
      check(getattr(jnp, fn), getattr(np, fn), x)
  a, b = jnp.atleast_2d(1.0, jnp.ones(3))
  assert a.shape == (1, 1) and b.shape == (1, 3)


@settings(max_examples=25, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3,
                                                max_side=3))
def test_broadcasting_matches_numpy_hypothesis(shapes):
  arrays = [np.ones(s, np.float32) * i for i, s in enumerate(shapes.input_shapes)]
  out = jnp.broadcast_arrays(*arrays)
  for o, e in zip(out, np.broadcast_arrays(*arrays)):
    np.testing.assert_array_equal(o, e)
  np.testing.assert_array_equal(jnp.broadcast_to(arrays[0], shapes.result_shape),
                                np.broadcast_to(arrays[0], shapes.result_shape))
  assert jnp.broadcast_shapes(*shapes.input_shapes) == shapes.result_shape


def test_broadcast_errors_match_jax():
  with pytest.raises(ValueError) as info:
    jnp.broadcast_to(jnp.ones(3), (4,))
  assert str(info.value) == ("Incompatible types for broadcasting: input type=float32[3] and "
                             "requested type=float32[4]")
  with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
    jnp.broadcast_arrays(jnp.ones(3), jnp.ones(4))
  assert str(xjax.make_jaxpr(lambda x: jnp.broadcast_to(x, (2, 3)))(np.ones(3, np.float32))) == (
      "{ lambda ; a:f32[3]. let\n"
      "    b:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n  in (b,) }")


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_joining_matches_numpy(rng, dtype):
  a = rand(rng, (2, 3), dtype)
  b = rand(rng, (2, 3), dtype)
  for axis in (0, 1, -1, None):
    check(lambda x, y: jnp.concatenate([x, y], axis=axis),
          lambda x, y: np.concatenate([x, y], axis=axis), a, b, dtype=a.dtype)
  for axis in (0, 1, 2, -1):
    check(lambda x, y: jnp.stack([x, y], axis=axis), lambda x, y: np.stack([x, y], axis=axis),
          a, b, dtype=a.dtype)
  for fn in ("vstack", "hstack", "dstack", "column_stack"):
    check(lambda x, y: getattr(jnp, fn)([x, y]), lambda x, y: getattr(np, fn)([x, y]), a, b,
          dtype=a.dtype)
  check(lambda x: jnp.column_stack([x[0], x[1]]), lambda x: np.column_stack([x[0], x[1]]), a,
        dtype=a.dtype)
  check(lambda x: jnp.concat([x, x], axis=1), lambda x: np.concatenate([x, x], axis=1), a,
        dtype=a.dtype)


def test_joining_promotes_and_refuses_bad_input():
  assert jnp.concatenate([jnp.arange(2), jnp.array([1.5])]).dtype == np.float32
  assert jnp.stack([jnp.arange(2), jnp.ones(2)]).dtype == np.float32
  assert jnp.concatenate([jnp.arange(2), jnp.arange(2)], dtype=jnp.float32).dtype == np.float32
  check(lambda x: jnp.stack(x), lambda x: np.stack(list(x)), X[0])
  with pytest.raises(ValueError, match="Need at least one array to concatenate"):
    jnp.concatenate([])
  with pytest.raises(ValueError, match="Zero-dimensional arrays cannot be concatenated"):
    jnp.concatenate([jnp.float32(1), jnp.float32(2)])
  with pytest.raises(TypeError) as info:
    jnp.concatenate([jnp.ones((2, 3)), jnp.ones((2, 4))])
  assert str(info.value) == (
      "Cannot concatenate arrays with shapes that differ in dimensions other than the one being "
      "concatenated: concatenating along dimension 0 for shapes (2, 3), (2, 4).")
  with pytest.raises(ValueError, match="All input arrays must have the same shape"):
    jnp.stack([jnp.ones(2), jnp.ones(3)])
  with pytest.raises(TypeError, match="concatenate requires ndarray or scalar arguments"):
    jnp.concatenate([[1, 2], [3]])


@pytest.mark.parametrize("sections,axis", [(3, 1), (1, 0), ([1, 3], 2), ([0, 2], 1), (4, 2),
                                           ([], 0)])
def test_split_matches_numpy(sections, axis):
  check(lambda a: jnp.split(a, sections, axis=axis), lambda a: np.split(a, sections, axis=axis), X)


def test_split_family_and_errors():
  check(lambda a: jnp.array_split(a, 3, axis=2), lambda a: np.array_split(a, 3, axis=2), X)
  check(lambda a: jnp.hsplit(a, 3), lambda a: np.hsplit(a, 3), X)
  check(lambda a: jnp.vsplit(a, 2), lambda a: np.vsplit(a, 2), X)
  with pytest.raises(ValueError, match="array split does not result in an equal division: rest "
                                       "is 1"):
    jnp.split(jnp.arange(7), 2)
  with pytest.raises(ValueError, match="Sizes passed to split must be nonnegative"):
    jnp.split(jnp.arange(6), [2, 10])


@pytest.mark.parametrize("reps", [2, (2,), (2, 1), (1, 3, 2), (2, 2, 1, 1), 0])
def test_tile_matches_numpy(reps):
  check(lambda a: jnp.tile(a, reps), lambda a: np.tile(a, reps), X[0])


@pytest.mark.parametrize("repeats,axis", [(2, None), (2, 0), (3, 1), (0, 1),
                                          (np.array([1, 0, 2]), 0), (np.array([2, 1, 0, 1]), 1)])
def test_repeat_matches_numpy(repeats, axis):
  x = X[0]
  check(lambda a: jnp.repeat(a, repeats, axis=axis), lambda a: np.repeat(a, repeats, axis=axis),
        x, jit=not isinstance(repeats, np.ndarray))
  check(lambda a: a.repeat(repeats, axis=axis), lambda a: a.repeat(repeats, axis=axis), x,
        jit=False)


def test_repeat_needs_static_total():
  with pytest.raises(errors.ConcretizationTypeError, match="the total number of repeats must be "
                                                           "static"):
    xjax.jit(lambda x, r: jnp.repeat(x, r))(jnp.arange(3), jnp.array([1, 2, 0]))
  f = xjax.jit(lambda x, r: jnp.repeat(x, r, total_repeat_length=4))
  np.testing.assert_array_equal(f(jnp.arange(3), jnp.array([1, 2, 1])), [0, 1, 1, 2])
  np.testing.assert_array_equal(jnp.repeat(2, 3), [2, 2, 2])


def test_flip_roll_pad_match_numpy():
  for axis in (None, 0, 1, (0, 2), -1):
    check(lambda a: jnp.flip(a, axis), lambda a: np.flip(a, axis), X)
  check(jnp.fliplr, np.fliplr, X)
  check(jnp.flipud, np.flipud, X)
  for shift, axis in ((2, None), (1, 0), (-3, 2), ((1, 2), (0, 1)), (5, 1)):
    check(lambda a: jnp.roll(a, shift, axis), lambda a: np.roll(a, shift, axis), X)
  for width in (1, (1, 2), ((1, 0), (0, 2), (3, 1))):
    check(lambda a: jnp.pad(a, width), lambda a: np.pad(a, width), X)
  check(lambda a: jnp.pad(a, 1, constant_values=7), lambda a: np.pad(a, 1, constant_values=7), X)
  check(lambda a: jnp.pad(a, 1, constant_values=((1, 2), (3, 4))),
        lambda a: np.pad(a, 1, constant_values=((1, 2), (3, 4))), X[0])
  check(lambda a: jnp.pad(a, 1, mode="reflect"), lambda a: np.pad(a, 1, mode="reflect"), X)


@pytest.mark.parametrize("shift, axis", [(2, None), (1, 0), (-3, 2), (7, -1),
                                         (np.array([1, -2]), (0, 1)), (4, (0, 2))])
def test_roll_by_a_traced_shift_matches_numpy(shift, axis):
  rolled = xjax.jit(lambda a, s: jnp.roll(a, s, axis))(X, shift)
  np.testing.assert_array_equal(rolled, np.roll(X, shift, axis))
  assert xjax.jit(lambda a, s: jnp.roll(a, s, 0))(np.zeros((0, 3)), 2).shape == (0, 3)
  with pytest.raises(ValueError, match="must be scalars or 1D arrays"):
    xjax.jit(lambda a, s: jnp.roll(a, s, 0))(X, np.ones((2, 2), np.int32))


def test_pad_prints_like_jax():
  assert str(xjax.make_jaxpr(lambda x: jnp.pad(x, (1, 2)))(np.ones(3, np.float32))) == (
      "{ lambda ; a:f32[3]. let\n    b:f32[6] = jit[\n      name=_pad\n"
      "      jaxpr={ lambda ; a:f32[3] c:i32[]. let\n"
      "          d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c\n"
      "          b:f32[6] = pad[padding_config=((np.int64(1), np.int64(2), 0),)] a d\n"
      "        in (b,) }\n    ] a 0:i32[]\n  in (b,) }")


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, bf16])
def test_nonzero_matches_numpy(rng, dtype):
  x = rand(rng, (3, 4), dtype)
  x[0] = 0
  check(jnp.nonzero, np.nonzero, x, jit=False, dtype=np.int32)
  check(jnp.flatnonzero, np.flatnonzero, x, jit=False, dtype=np.int32)
  check(jnp.argwhere, np.argwhere, x, jit=False, dtype=np.int32)
  check(lambda a: jnp.where(a), np.nonzero, x, jit=False, dtype=np.int32)
  n = int(np.count_nonzero(x))
  check(lambda a: jnp.nonzero(a, size=n), np.nonzero, x, dtype=np.int32)
  padded = lambda a: tuple(np.concatenate([i, np.full(3, -1)]) for i in np.nonzero(a))
  check(lambda a: jnp.nonzero(a, size=n + 3, fill_value=-1), padded, x, dtype=np.int32)
  check(lambda a: a.nonzero(size=n), np.nonzero, x, dtype=np.int32)


def test_nonzero_errors():
  with pytest.raises(errors.ConcretizationTypeError) as info:
    xjax.jit(lambda x: jnp.nonzero(x))(jnp.arange(3))
  assert ("The size argument of jnp.nonzero must be statically specified to use jnp.nonzero "
          "within JAX transformations.") in str(info.value)
  with pytest.raises(ValueError, match="Calling nonzero on 0d arrays is not allowed"):
    jnp.nonzero(jnp.float32(1))
  np.testing.assert_array_equal(jnp.bincount(jnp.array([0, 2, 2, 5])), [1, 0, 2, 0, 0, 1])


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, bf16, np.bool_])
@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort_argsort_match_numpy(rng, dtype, axis):
  x = rand(rng, (3, 5), dtype)
  check(lambda a: jnp.sort(a, axis=axis), lambda a: np.sort(a, axis=axis), x, dtype=x.dtype)
  check(lambda a: jnp.argsort(a, axis=axis), lambda a: np.argsort(a, axis=axis, kind="stable"), x,
        dtype=np.int32)
  check(lambda a: a.sort(axis=0), lambda a: np.sort(a, axis=0), x, dtype=x.dtype)
  check(lambda a: a.argsort(), lambda a: np.argsort(a, kind="stable"), x, dtype=np.int32)


def test_sort_special_values_and_descending():
  x = np.array([3.0, np.nan, -np.inf, 1.0, np.inf, 1.0], np.float32)
  check(jnp.sort, np.sort, x)
  check(lambda a: jnp.argsort(a), lambda a: np.argsort(a, kind="stable"), x, dtype=np.int32)
  check(lambda a: jnp.sort(a, descending=True), lambda a: np.sort(a)[::-1], x)
  ties = np.array([2, 1, 2, 1, 2], np.int32)
  check(lambda a: jnp.argsort(a, descending=True),
        lambda a: np.argsort(-a, kind="stable"), ties, dtype=np.int32)
  with pytest.raises(TypeError, match="'kind' argument to sort is not supported"):
    jnp.sort(jnp.ones(3), kind="quicksort")


def test_sort_prints_like_jax():
  x = np.ones(4, np.float32)
  assert str(xjax.make_jaxpr(jnp.argsort)(x)) == (
      "{ lambda ; a:f32[4]. let\n    b:i32[4] = jit[\n      name=argsort\n"
      "      jaxpr={ lambda ; a:f32[4]. let\n"
      "          c:i32[4] = iota[dimension=0 dtype=int32 shape=(4,) sharding=None] \n"
      "          d:f32[4] b:i32[4] = sort[dimension=0 is_stable=True num_keys=1] a c\n"
      "        in (b,) }\n    ] a\n  in (b,) }")


def test_isclose_allclose_array_equal(rng):
  a = rand(rng, (3, 4), np.float32)
  b = a + np.float32(1e-7)
  b[0, 0] = np.nan
  check(jnp.isclose, np.isclose, a, b)
  check(lambda x, y: jnp.isclose(x, y, equal_nan=True), lambda x, y: np.isclose(x, y, equal_nan=True),
        b, b)
  check(lambda x, y: jnp.isclose(x, y, rtol=0.5), lambda x, y: np.isclose(x, y, rtol=0.5), a,
        np.float32(1.0))
  check(jnp.allclose, np.allclose, a, a + np.float32(1e-7))
  check(jnp.array_equal, np.array_equal, a, a)
  assert not bool(jnp.array_equal(jnp.ones(2), jnp.ones(3)))
  assert bool(jnp.array_equal(jnp.array([np.nan]), jnp.array([np.nan]), equal_nan=True))
  assert bool(jnp.array_equiv(jnp.ones((2, 2)), 1.0))
  inf = np.array([np.inf, -np.inf, 1.0], np.float32)
  check(jnp.isclose, np.isclose, inf, inf)


def test_tril_triu_match_numpy():
  for k in (-1, 0, 2):
    check(lambda a: jnp.tril(a, k), lambda a: np.tril(a, k), X)
    check(lambda a: jnp.triu(a, k), lambda a: np.triu(a, k), X)


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_transpose_and_reshape_hypothesis(data):
  shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3))
  x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
  perm = data.draw(st.permutations(range(len(shape))))
  check(lambda a: jnp.transpose(a, perm), lambda a: np.transpose(a, perm), x)
  check(lambda a: a.reshape(-1), lambda a: a.reshape(-1), x)
