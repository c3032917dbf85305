"""append, block, delete, insert, resize, rot90, unstack, dsplit, rollaxis and bincount:
values against NumPy (eagerly, under jit and under vmap) on edge shapes and every dtype
class, and JAX 0.10.2's semantics and error messages where JAX differs from NumPy
(golden values below were computed with real JAX 0.10.2)."""
import doctest

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import errors
from xjax._src.numpy import manipulation
from jnp_checks import ALL_DTYPES, bf16, check, rand


@pytest.fixture
def rng():
  return np.random.default_rng(0)


def _cases(cases, picked):
  """Every case with float32, and the cases `picked` (indices) with every dtype class."""
  f32 = np.dtype(np.float32)
  return ([(*c, f32) for c in cases] +
          [(*cases[i], d) for i in picked for d in ALL_DTYPES if d != f32])


def _as_np(x):
  x = np.asarray(x)
  return x.astype(np.float32) if x.dtype == bf16 else x


def test_docstring_examples_run():
  result = doctest.testmod(manipulation, optionflags=doctest.NORMALIZE_WHITESPACE)
  assert result.attempted > 0 and result.failed == 0


# ----------------------------------------------------------------------------
# append


APPEND_CASES = [
    (((2, 3), (1, 3)), 0), (((2, 3), (2, 2)), -1), (((2, 3), (4,)), None), (((), ()), None),
    (((0,), (3,)), 0), (((2, 0), (2, 3)), 1), (((0, 2), (0, 2)), None)]


@pytest.mark.parametrize("shapes,axis,dtype", _cases(APPEND_CASES, [1, 2]))
def test_append_matches_numpy(rng, dtype, shapes, axis):
  a, b = rand(rng, shapes[0], dtype), rand(rng, shapes[1], dtype)
  check(lambda x, y: jnp.append(x, y, axis=axis), lambda x, y: np.append(x, y, axis=axis), a, b,
        dtype=dtype)


def test_append_promotes_like_jax():
  out = jnp.append(jnp.arange(3), 1.5)
  assert out.dtype == np.float32 and out.weak_type  # int32 + weak float -> weak float32
  np.testing.assert_array_equal(out, [0, 1, 2, 1.5])
  out = jnp.append(1, 2)
  assert out.dtype == np.int32 and out.weak_type
  out = jnp.append(jnp.ones(2, bf16), jnp.ones(1, np.int8))
  assert out.dtype == bf16 and not out.weak_type
  assert jnp.append(jnp.ones(1, np.uint8), jnp.ones(1, np.int8)).dtype == np.int16
  assert jnp.append(jnp.float32(1), 1j).dtype == np.complex64


def test_append_errors_match_jax():
  x = jnp.ones((2, 3))
  with pytest.raises(TypeError, match=r"different numbers of dimensions: got \(2, 3\), \(3,\)"):
    jnp.append(x, jnp.ones(3), axis=0)
  with pytest.raises(ValueError, match="Zero-dimensional arrays cannot be concatenated"):
    jnp.append(1, 2, axis=0)
  with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
    jnp.append(x, x, axis=2)
  with pytest.raises(TypeError, match="ravel requires ndarray or scalar arguments"):
    jnp.append([1, 2], [3])
  with pytest.raises(ValueError, match="Non-hashable static arguments"):  # axis is static
    xjax.jit(jnp.append)(x, x, 0)


def test_append_under_vmap():
  x, y = np.arange(6).reshape(2, 3), np.arange(4).reshape(2, 2)
  out = xjax.vmap(lambda a, b: jnp.append(a, b))(x, y)
  np.testing.assert_array_equal(out, [np.append(x[i], y[i]) for i in range(2)])
  out = xjax.vmap(lambda a: jnp.append(a, 9), in_axes=1)(x)
  np.testing.assert_array_equal(out, [np.append(x[:, i], 9) for i in range(3)])


# ----------------------------------------------------------------------------
# block


BLOCK_CASES = {
    "leaf": lambda a, b: a,
    "flat": lambda a, b: [a, b],
    "2x2": lambda a, b: [[a, b], [b, a]],
    "3 levels": lambda a, b: [[[a, b], [b, a]], [[a, a], [b, b]]],
}


@pytest.mark.parametrize("layout,shape,dtype", _cases(
    [(layout, shape) for layout in BLOCK_CASES for shape in [(), (2,), (2, 2), (0, 2), (1, 2, 2)]],
    [12]))
def test_block_matches_numpy(rng, dtype, layout, shape):
  a, b = rand(rng, shape, dtype), rand(rng, shape, dtype)
  build = BLOCK_CASES[layout]
  check(lambda x, y: jnp.block(build(x, y)), lambda x, y: np.block(build(x, y)), a, b,
        dtype=dtype)


def test_block_mixed_ranks_and_dtypes():
  a, b, c = np.ones((2, 2), np.float32), np.zeros((2, 1), np.int32), np.arange(3, dtype=np.int8)
  check(lambda x, y, z: jnp.block([[x, y], [z]]), lambda x, y, z: np.block([[x, y], [z]]),
        a, b, c)
  out = jnp.block([[1, 2], [3, 4]])
  assert out.dtype == np.int32 and out.weak_type
  np.testing.assert_array_equal(out, [[1, 2], [3, 4]])
  out = jnp.block([1, 2.5])
  assert out.dtype == np.float32 and out.weak_type
  scalar = jnp.block(1)
  assert scalar.shape == () and scalar.weak_type
  np.testing.assert_array_equal(jnp.block(np.ones(3)), np.ones(3))
  assert jnp.block([jnp.array([True]), jnp.array([2], np.uint8)]).dtype == np.uint8


def test_block_errors_match_jax():
  x = jnp.ones((2, 3))
  with pytest.raises(ValueError, match="jax.numpy.block does not allow tuples"):
    jnp.block((x, x))
  with pytest.raises(ValueError, match="^jax.numpy.block does not allow empty list arguments"):
    jnp.block([])
  with pytest.raises(ValueError, match="empty list"):
    jnp.block([[]])
  with pytest.raises(ValueError, match="^Mismatched list depths in jax.numpy.block"):
    jnp.block([[x], x])
  with pytest.raises(TypeError, match="concatenating along dimension 0 for shapes \\(1, 2\\), "
                     "\\(1, 1\\)"):
    jnp.block([[[1, 2], [3]]])
  with pytest.raises(TypeError, match="concatenating along dimension 1"):
    jnp.block([jnp.ones((2, 2)), jnp.ones((3, 3))])


def test_block_under_vmap():
  a, b = np.arange(6.0).reshape(3, 2), np.arange(3.0).reshape(3, 1)
  out = xjax.vmap(lambda x, y: jnp.block([[x, y], [y, x]]))(a, b)
  np.testing.assert_array_equal(out, [np.block([[a[i], b[i]], [b[i], a[i]]]) for i in range(3)])


# ----------------------------------------------------------------------------
# delete


DELETE_OBJS = [1, -1, np.int64(0), slice(None, None, 2), slice(-1, None, -2), slice(5, 9),
               np.array([0, 2]), np.array([2, 0, 0]), np.array([-1]), np.array([], np.int32),
               np.array([True, False, True]), np.array([1], np.uint8)]


@pytest.mark.parametrize("obj,axis,dtype", _cases(
    [(obj, axis) for obj in DELETE_OBJS for axis in (1, -1, None)], [0, 9, 18, 30]), ids=repr)
def test_delete_matches_numpy(rng, dtype, obj, axis):
  a = rand(rng, (2, 3), dtype)
  if axis is None and isinstance(obj, np.ndarray) and obj.dtype == bool:
    obj = np.resize(obj, 6)
  check(lambda x: jnp.delete(x, obj, axis=axis), lambda x: np.delete(x, obj, axis=axis), a,
        dtype=dtype)


@pytest.mark.parametrize("obj", [np.array([2, 0]), np.array([-1, 0]), np.array([[0], [1]]),
                                 np.array([], np.int32), np.array([1], np.uint8), 1])
def test_delete_unique_indices_traced(rng, obj):
  a = rand(rng, (2, 3), np.float32)
  fun = lambda x, o: jnp.delete(x, o, axis=1, assume_unique_indices=True)
  want = np.delete(a, np.asarray(obj).ravel() % 3, axis=1)
  np.testing.assert_array_equal(fun(a, obj), want)
  np.testing.assert_array_equal(xjax.jit(fun)(a, obj), want)


def test_delete_unique_indices_beyond_the_promise_as_jax():
  # Out-of-range and duplicate indices break the promise; the results are JAX 0.10.2's.
  x = jnp.arange(6).reshape(2, 3)
  got = jnp.delete(x, jnp.array([-1, 7]), axis=1, assume_unique_indices=True)
  np.testing.assert_array_equal(got, [[0], [3]])
  got = jnp.delete(jnp.arange(6), jnp.array([1, 1]), assume_unique_indices=True)
  np.testing.assert_array_equal(got, [1, 3, 4, 5])
  got = jnp.delete(jnp.arange(6), jnp.array([4, 0, 0, 4]), assume_unique_indices=True)
  np.testing.assert_array_equal(got, [2, 4])
  assert jnp.delete(jnp.arange(3), jnp.array([0, 1, 2, 2, 1]),
                    assume_unique_indices=True).shape == (0,)


def test_delete_edge_shapes():
  out = jnp.delete(jnp.asarray(1.0), 0)  # 0-d is flattened first
  assert out.shape == (0,) and out.dtype == np.float32 and out.weak_type
  assert jnp.delete(jnp.zeros((0,)), np.array([], int)).shape == (0,)
  assert jnp.delete(jnp.zeros((0, 3)), 1, axis=1).shape == (0, 2)
  np.testing.assert_array_equal(jnp.delete(jnp.arange(6).reshape(2, 3), 0, axis=jnp.array(1)),
                                [[1, 2], [4, 5]])
  np.testing.assert_array_equal(jnp.delete(jnp.arange(3), True), [0, 2])  # True is index 1
  np.testing.assert_array_equal(jnp.delete(jnp.arange(3), jnp.array(2)), [0, 1])


def test_delete_errors_match_jax():
  x = jnp.arange(6).reshape(2, 3)
  with pytest.raises(ValueError, match="^axis 6 is out of bounds for array of dimension 6"):
    jnp.delete(x, 6)
  with pytest.raises(ValueError, match="axis 0 is out of bounds for array of dimension 0"):
    jnp.delete(jnp.array(5), 0, axis=0)
  with pytest.raises(TypeError, match="^delete requires ndarray or scalar arguments, got "
                     "<class 'list'> at position 1."):
    jnp.delete(x, [0, 1], axis=1)
  with pytest.raises(TypeError, match="got <class 'list'> at position 0"):
    jnp.delete([1, 2], 0)
  with pytest.raises(ValueError, match=r"^np.delete\(arr, obj\): for boolean indices, obj must "
                     "be one-dimensional with length matching specified axis."):
    jnp.delete(x, np.array([True, False]), axis=1)
  with pytest.raises(ValueError, match=r"got obj.dtype=float64; must be integer or bool"):
    jnp.delete(x, np.array([1.0]), axis=1)
  with pytest.raises(IndexError):
    jnp.delete(x, np.array([5]), axis=1)
  with pytest.raises(errors.ConcretizationTypeError, match="'obj' array argument of jnp.delete"):
    xjax.jit(lambda a, o: jnp.delete(a, o))(x, jnp.array([1]))
  with pytest.raises(errors.ConcretizationTypeError, match="'obj' array argument of jnp.delete"):
    xjax.jit(lambda a, o: jnp.delete(a, o))(x, 1)


def test_delete_under_vmap():
  x = np.arange(12).reshape(3, 4)
  out = xjax.vmap(lambda a: jnp.delete(a, np.array([0, 2])))(x)
  np.testing.assert_array_equal(out, np.delete(x, [0, 2], axis=1))
  out = xjax.vmap(lambda a, o: jnp.delete(a, o, assume_unique_indices=True))(
      x, np.array([[0], [3], [-2]]))
  np.testing.assert_array_equal(out, [[1, 2, 3], [4, 5, 6], [8, 9, 11]])


# ----------------------------------------------------------------------------
# insert


INSERT_CASES = [  # (obj, values shape) for a (2, 3) array along axis 1
    (1, ()), (1, (2,)), (1, (2, 1)), (0, (1, 2)), (-1, (2, 2)), (3, ()),
    (np.array([1]), (2,)), (np.array([1]), (2, 1)), (np.array([0, 2, 3, -1]), ()),
    (np.array([2, 0]), (2, 2)), (np.array([1, 1, 3]), (3,)), (slice(0, 3), (3,)),
    (slice(None, None, -2), (2,)), (np.array([], np.int32), ()), (np.array([2], np.uint8), ()),
]


@pytest.mark.parametrize("obj,vshape,dtype", _cases(INSERT_CASES, [2, 9, 11]), ids=repr)
def test_insert_matches_numpy(rng, dtype, obj, vshape):
  a, v = rand(rng, (2, 3), dtype), rand(rng, vshape, dtype)
  check(lambda x, y: jnp.insert(x, obj, y, axis=1), lambda x, y: np.insert(x, obj, y, axis=1),
        a, v, dtype=dtype)


@pytest.mark.parametrize("obj,vshape,axis", [
    (1, (), None), (np.array([0, 6, 6]), (3,), None), (slice(None), (), None),
    (2, (2, 4), 1), (np.array([2, 0]), (2, 2, 4), 1), (np.array([2, 0]), (4,), 1),
    (0, (), -1), (1, (3, 4), 0)])
def test_insert_3d_and_flattened_match_numpy(rng, obj, vshape, axis):
  a, v = rand(rng, (2, 3, 4), np.float32), rand(rng, vshape, np.float32)
  if axis is None:
    a = a[0, :2]  # a (3, 4) array, flattened by insert
  check(lambda x, y: jnp.insert(x, obj, y, axis=axis),
        lambda x, y: np.insert(x, obj, y, axis=axis), a, v)


def test_insert_casts_values_and_keeps_weak_type():
  out = jnp.insert(jnp.arange(3), 1, 2.7)
  np.testing.assert_array_equal(out, [0, 2, 1, 2])
  assert out.dtype == np.int32 and not out.weak_type
  out = jnp.insert(jnp.ones(2, bf16), 1, np.float32(2.7))
  assert out.dtype == bf16 and float(out[1]) == 2.703125
  out = jnp.insert(jnp.asarray(1.0), 0, 2)  # 0-d arrays are flattened
  assert out.dtype == np.float32 and out.weak_type
  np.testing.assert_array_equal(out, [2.0, 1.0])
  np.testing.assert_array_equal(jnp.insert(jnp.array([True, False]), 1, 5), [True, True, False])
  out = jnp.insert(jnp.zeros((2, 0)), 0, 3, axis=1)
  np.testing.assert_array_equal(out, [[3.0], [3.0]])
  np.testing.assert_array_equal(jnp.insert(jnp.arange(3), np.array([]), 9), [0, 1, 2])


def test_insert_clips_out_of_range_indices_as_jax():
  # NumPy raises IndexError here; JAX clips. Values from JAX 0.10.2.
  x = jnp.arange(6).reshape(2, 3)
  np.testing.assert_array_equal(jnp.insert(x, jnp.array([10, -10]), 5, axis=1),
                                [[5, 0, 1, 2, 5], [5, 3, 4, 5, 5]])
  np.testing.assert_array_equal(jnp.insert(x, 10, 5, axis=1), [[0, 1, 2, 5], [3, 4, 5, 5]])
  np.testing.assert_array_equal(
      jnp.insert(jnp.arange(4), jnp.array([3, 1, -3, 0, 4]), jnp.array([5, 6, 7, 8, 9])),
      [8, 0, 6, 7, 1, 2, 5, 3, 9])


def test_insert_traced_indices_and_values():
  x = np.arange(6).reshape(2, 3)
  fun = xjax.jit(lambda a, o, v: jnp.insert(a, o, v, axis=1))
  np.testing.assert_array_equal(fun(x, np.array([1, 2]), 0), np.insert(x, [1, 2], 0, axis=1))
  np.testing.assert_array_equal(fun(x, 1, np.array([3, 4])), np.insert(x, 1, [3, 4], axis=1))
  out = xjax.vmap(lambda a, o: jnp.insert(a, o, -1))(x, np.array([0, 3]))
  np.testing.assert_array_equal(out, [[-1, 0, 1, 2], [3, 4, 5, -1]])
  out = xjax.vmap(lambda a, v: jnp.insert(a, np.array([1, 2]), v))(x, np.array([[7, 8], [9, 10]]))
  np.testing.assert_array_equal(out, [[0, 7, 1, 8, 2], [3, 9, 4, 10, 5]])


def test_insert_errors_match_jax():
  x = jnp.arange(6).reshape(2, 3)
  with pytest.raises(ValueError, match=r"^jnp.insert\(\): index array must be integer typed; "
                     r"got 1.0"):
    jnp.insert(x, 1.0, 0)
  with pytest.raises(ValueError, match=r"integer typed; got \[1.\]"):
    jnp.insert(x, jnp.array([1.0]), 0)
  with pytest.raises(ValueError, match=r"integer typed; got \[\]"):
    jnp.insert(x, jnp.array([]), 0)
  with pytest.raises(ValueError, match="integer typed; got True"):
    jnp.insert(x, True, 3)
  with pytest.raises(ValueError, match=r"^jnp.insert\(\): obj must be a slice, a "
                     r"one-dimensional array, or a scalar; got \[\[1\]\]"):
    jnp.insert(x, np.array([[1]]), 0)
  for args, pos in [((x, [1], 0), 1), (([1, 2], 0, 3), 0), ((x, 0, [3, 4, 5]), 2)]:
    with pytest.raises(TypeError, match=f"^insert requires ndarray or scalar arguments, got "
                       f"<class 'list'> at position {pos}."):
      jnp.insert(*args)
  with pytest.raises(ValueError, match="axis 0 is out of bounds for array of dimension 0"):
    jnp.insert(jnp.array(5), 0, 1, axis=0)
  with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: "
                     r"shapes=\[\(2,\), \(3,\)\]"):
    jnp.insert(x, np.array([0, 1]), jnp.array([1, 2, 3]), axis=1)
  with pytest.raises(ValueError, match="Cannot broadcast to shape with fewer dimensions"):
    jnp.insert(jnp.arange(4), 1, jnp.ones((2, 2)))
  with pytest.raises(errors.ConcretizationTypeError, match="axis argument of jnp.insert"):
    xjax.jit(lambda a, ax: jnp.insert(a, 1, 0, axis=ax))(x, 1)


# ----------------------------------------------------------------------------
# resize


@pytest.mark.parametrize("shape,new_shape,dtype", _cases([
    ((2, 3), (4, 4)), ((2, 3), 4), ((2, 3), (0, 3)), ((2, 3), ()), ((), (2, 3)),
    ((0,), (2, 2)), ((3,), (3,)), ((5,), (2,))], [0, 5]))
def test_resize_matches_numpy(rng, dtype, shape, new_shape):
  a = rand(rng, shape, dtype)
  check(lambda x: jnp.resize(x, new_shape), lambda x: np.resize(x, new_shape), a, dtype=dtype)


def test_resize_static_shape_and_errors():
  x = jnp.arange(6).reshape(2, 3)
  np.testing.assert_array_equal(xjax.jit(jnp.resize, static_argnums=1)(x, (5,)), [0, 1, 2, 3, 4])
  np.testing.assert_array_equal(jnp.resize(x, np.int64(2)), [0, 1])
  assert jnp.resize(3.0, (2,)).weak_type
  with pytest.raises(ValueError, match="^all elements of `new_shape` must be non-negative"):
    jnp.resize(x, (-1, 2))
  with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
    jnp.resize(x, (2.0,))
  with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
    jnp.resize(x, [3])
  with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
    xjax.jit(lambda a, s: jnp.resize(a, s))(x, 3)
  with pytest.raises(TypeError, match="resize requires ndarray or scalar arguments"):
    jnp.resize([1, 2], (3,))


def test_resize_under_vmap():
  x = np.arange(6).reshape(2, 3)
  out = xjax.vmap(lambda a: jnp.resize(a, (2, 4)))(x)
  np.testing.assert_array_equal(out, [np.resize(r, (2, 4)) for r in x])


# ----------------------------------------------------------------------------
# rot90


@pytest.mark.parametrize("k,dtype", _cases([(k,) for k in (-3, -1, 0, 1, 2, 3, 4, 5)], [1, 3]))
def test_rot90_matches_numpy(rng, dtype, k):
  a = rand(rng, (2, 3), dtype)
  check(lambda x: jnp.rot90(x, k), lambda x: np.rot90(x, k), a, dtype=dtype)


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("axes", [(0, 2), (2, 0), (-1, 1), (1, -3)])
@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 0, 3)])
def test_rot90_axes_match_numpy(rng, k, axes, shape):
  a = rand(rng, shape, np.float32)
  check(lambda x: jnp.rot90(x, k, axes), lambda x: np.rot90(x, k, axes), a)


def test_rot90_errors_match_jax():
  x = jnp.ones((2, 3))
  with pytest.raises(ValueError, match=r"^rot90 requires its first argument to have ndim at least "
                     r"two, but got first argument of shape \(3,\), which has ndim 1"):
    jnp.rot90(jnp.ones(3))
  with pytest.raises(ValueError, match=r"shape \(\), which has ndim 0"):
    jnp.rot90(jnp.ones(()))
  with pytest.raises(ValueError, match="^Axes must be different"):
    jnp.rot90(x, axes=(0, -2))
  with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
    jnp.rot90(x, axes=(0, 2))
  with pytest.raises(ValueError, match="too many values to unpack"):
    jnp.rot90(x, axes=(0, 1, 2))
  with pytest.raises(ValueError, match="Non-hashable static arguments"):
    jnp.rot90(x, 1, [0, 1])
  with pytest.raises(ValueError, match="Non-hashable static arguments"):
    xjax.jit(jnp.rot90)(x, 1)
  with pytest.raises(TypeError, match="rot90 requires ndarray or scalar arguments"):
    jnp.rot90([[1, 2], [3, 4]])


def test_rot90_keeps_weak_type_and_vmaps():
  assert jnp.rot90(jnp.asarray(1.0) * jnp.ones((2, 2)), 0).weak_type is False
  x = np.arange(24).reshape(2, 3, 4)
  out = xjax.vmap(jnp.rot90)(x)
  np.testing.assert_array_equal(out, [np.rot90(m) for m in x])


# ----------------------------------------------------------------------------
# unstack, dsplit, rollaxis


@pytest.mark.parametrize("shape,axis,dtype", _cases(
    [((2, 3), 0), ((2, 3), -1), ((4,), 0), ((1, 2, 3), 1), ((2, 0), 0), ((0, 3), 0)], [1]))
def test_unstack_matches_numpy(rng, dtype, shape, axis):
  a = rand(rng, shape, dtype)
  out = check(lambda x: jnp.unstack(x, axis=axis), lambda x: tuple(np.unstack(x, axis=axis)), a,
              dtype=dtype)
  assert type(out) is tuple and len(out) == shape[axis]


def test_unstack_errors_and_transforms():
  x = np.arange(6).reshape(2, 3)
  with pytest.raises(ValueError, match="^axis 0 is out of bounds for array of dimension 0"):
    jnp.unstack(jnp.array(1))
  with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
    jnp.unstack(x, axis=2)
  with pytest.raises(TypeError, match="unstack requires ndarray or scalar arguments"):
    jnp.unstack([1, 2])
  with pytest.raises(TypeError):
    jnp.unstack(x, 1)  # axis is keyword-only
  cols = xjax.vmap(jnp.unstack)(x)  # unstacking each row gives the columns
  assert len(cols) == 3
  for i, c in enumerate(cols):
    np.testing.assert_array_equal(c, x[:, i])
  g = xjax.grad(lambda a: jnp.unstack(a, axis=1)[1].sum())(np.ones((2, 3), np.float32))
  np.testing.assert_array_equal(g, [[0, 1, 0], [0, 1, 0]])


def test_unstack_prints_like_jax():
  assert str(xjax.make_jaxpr(lambda x: jnp.unstack(x, axis=1))(np.ones((2, 3), np.float32))) == (
      "{ lambda ; a:f32[2,3]. let\n    b:f32[2] c:f32[2] d:f32[2] = unstack[axis=1] a\n"
      "  in (b, c, d) }")


@pytest.mark.parametrize("shape,ios,dtype", _cases(
    [((1, 2, 6), 3), ((1, 2, 6), [1, 4]), ((2, 1, 4, 2), 2), ((1, 2, 0), 2),
     ((1, 2, 6), np.array([2]))], [1]))
def test_dsplit_matches_numpy(rng, dtype, shape, ios):
  a = rand(rng, shape, dtype)
  out = check(lambda x: jnp.dsplit(x, ios), lambda x: np.dsplit(x, ios), a, dtype=dtype)
  assert type(out) is list


def test_dsplit_errors():
  with pytest.raises(IndexError, match="tuple index out of range"):
    jnp.dsplit(jnp.ones((2, 3)), 3)
  with pytest.raises(ValueError, match="^array split does not result in an equal division: "
                     "rest is 2"):
    jnp.dsplit(jnp.ones((1, 2, 6)), 4)
  with pytest.raises(TypeError, match="dsplit requires ndarray or scalar arguments"):
    jnp.dsplit([[[1, 2]]], 2)
  with pytest.raises(ValueError, match=r"Sizes passed to split must be nonnegative, got "
                     r"\[np.int64\(4\), np.int64\(-2\), np.int64\(4\)\]"):
    jnp.dsplit(jnp.ones((1, 2, 6)), [4, 2])  # NumPy gives an empty piece; JAX refuses
  out = xjax.vmap(lambda a: jnp.dsplit(a, 2))(np.arange(24).reshape(2, 1, 2, 6))
  np.testing.assert_array_equal(out[1], np.arange(24).reshape(2, 1, 2, 6)[..., 3:])


def test_rollaxis_matches_numpy_for_every_axis_and_start(rng):
  a = rand(rng, (2, 3, 4), np.float32)
  for axis in range(-3, 3):
    for start in range(-3, 4):
      check(lambda x: jnp.rollaxis(x, axis, start), lambda x: np.rollaxis(x, axis, start), a,
            jit=False)
  check(lambda x: jnp.rollaxis(x, -1, 1), lambda x: np.rollaxis(x, -1, 1), a)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_rollaxis_dtypes_and_empty(rng, dtype):
  a = rand(rng, (2, 0, 3), dtype)
  check(lambda x: jnp.rollaxis(x, 2), lambda x: np.rollaxis(x, 2), a, dtype=dtype)


def test_rollaxis_errors_match_jax():
  x = jnp.zeros((2, 3, 4, 5))
  with pytest.raises(ValueError, match="^start=5 must satisfy -4<=start<=4"):
    jnp.rollaxis(x, 0, 5)
  with pytest.raises(ValueError, match="^start=-5 must satisfy -4<=start<=4"):
    jnp.rollaxis(x, 0, -5)
  with pytest.raises(ValueError, match="axis 4 is out of bounds for array of dimension 4"):
    jnp.rollaxis(x, 4)
  with pytest.raises(ValueError, match="axis 0 is out of bounds for array of dimension 0"):
    jnp.rollaxis(jnp.array(1), 0)
  with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
    jnp.rollaxis(x, 0, 1.0)
  with pytest.raises(ValueError, match="Non-hashable static arguments"):
    xjax.jit(jnp.rollaxis)(x, 0, 1)
  out = xjax.vmap(lambda a: jnp.rollaxis(a, 2))(np.zeros((7, 2, 3, 4)))
  assert out.shape == (7, 4, 2, 3)


# ----------------------------------------------------------------------------
# bincount


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int8, np.int16, np.bool_])
@pytest.mark.parametrize("size", [0, 7])
@pytest.mark.parametrize("minlength", [0, 12])
def test_bincount_matches_numpy(rng, dtype, size, minlength):
  x = (rng.random(size) < 0.5) if dtype == np.bool_ else rng.integers(0, 9, size).astype(dtype)
  check(lambda a: jnp.bincount(a, minlength=minlength),
        lambda a: np.bincount(a, minlength=minlength), x, dtype=np.int32, jit=False)
  length = max(minlength, 9)
  check(lambda a: jnp.bincount(a, length=length),
        lambda a: np.bincount(a, minlength=length)[:length], x, dtype=np.int32)


@pytest.mark.parametrize("wdtype", [np.float32, bf16, np.int32, np.int8, np.uint8,
                                    np.complex64])
def test_bincount_weights_set_the_dtype(rng, wdtype):
  x = rng.integers(0, 5, 8).astype(np.int32)
  w = rand(rng, (8,), wdtype)
  wide = _as_np(w).astype(np.complex128)  # np.bincount takes real weights only
  want = (np.bincount(x, wide.real, minlength=6) + 1j * np.bincount(x, wide.imag, minlength=6))
  if np.dtype(wdtype).kind != "c":
    want = want.real
  check(lambda a, b: jnp.bincount(a, b, length=6), lambda a, b: want, x, w, dtype=wdtype,
        tol=0.1 if wdtype == bf16 else None)
  out = jnp.bincount(x, w, minlength=6)
  assert out.dtype == np.dtype(wdtype) and not out.weak_type


def test_bincount_negative_and_overflowing_values_as_jax():
  # NumPy rejects negative values; JAX counts them at 0 and drops values >= length.
  np.testing.assert_array_equal(jnp.bincount(jnp.array([-1, -2])), [2])
  np.testing.assert_array_equal(jnp.bincount(jnp.array([-1, 2])), [1, 0, 1])
  np.testing.assert_array_equal(jnp.bincount(jnp.array([-128, 3], np.int8)), [1, 0, 0, 1])
  np.testing.assert_array_equal(jnp.bincount(jnp.array([0, 1, 5]), length=3), [1, 1, 0])
  np.testing.assert_array_equal(jnp.bincount(jnp.array([0, 1, 5]), minlength=5, length=3),
                                [1, 1, 0])
  np.testing.assert_array_equal(
      jnp.bincount(jnp.array([-3, 0, 5]), jnp.array([1.0, 2.0, 4.0]), length=2), [3.0, 0.0])
  out = jnp.bincount(jnp.array([0, 255], np.uint8))
  assert out.shape == (256,) and int(out[0]) == 1 and int(out[255]) == 1
  np.testing.assert_array_equal(jnp.bincount(jnp.array([0, 1]), minlength=-1), [1, 1])
  assert jnp.bincount(jnp.array([0, 1]), length=0).shape == (0,)
  np.testing.assert_array_equal(jnp.bincount(jnp.array([], np.int32), minlength=3), [0, 0, 0])
  np.testing.assert_array_equal(jnp.bincount(jnp.array([True, False, True])), [1, 2])


def test_bincount_needs_static_length_under_jit():
  x = jnp.array([0, 1])
  with pytest.raises(errors.ConcretizationTypeError, match="argument 'x' of jnp.bincount. To "
                     "avoid this error, pass a static `length` argument"):
    xjax.jit(jnp.bincount)(x)
  with pytest.raises(errors.ConcretizationTypeError, match="argument 'length' of jnp.bincount"):
    xjax.jit(lambda a, n: jnp.bincount(a, length=n))(x, 3)
  with pytest.raises(errors.ConcretizationTypeError, match="argument 'minlength' of jnp.bincount"):
    xjax.jit(lambda a, n: jnp.bincount(a, minlength=n, length=3))(x, 3)
  out = xjax.jit(lambda a: jnp.bincount(a, length=4))(jnp.array([True, False, True]))
  np.testing.assert_array_equal(out, [1, 2, 0, 0])


def test_bincount_errors_match_jax():
  with pytest.raises(TypeError, match="^x argument to bincount must have an integer type; got "
                     "float32"):
    jnp.bincount(jnp.array([1.0]))
  with pytest.raises(ValueError, match="^only 1-dimensional input supported."):
    jnp.bincount(jnp.ones((2, 2), np.int32))
  with pytest.raises(ValueError, match="only 1-dimensional"):
    jnp.bincount(3)
  with pytest.raises(ValueError, match=r"^type of weights must match type of x. Got "
                     r"typeof\(x\)=i32\[3\]\(\{\}\) and typeof\(weights\)=f32\[2\]\(\{\}\)"):
    jnp.bincount(jnp.array([0, 1, 1]), jnp.array([1.0, 2.0]))
  with pytest.raises(ValueError, match=r"typeof\(x\)=u8\[3\]\(\{\}\) and "
                     r"typeof\(weights\)=f32\[\]\(\{\}\)"):
    jnp.bincount(jnp.array([0, 1, 1], np.uint8), 2.0)
  with pytest.raises(TypeError, match="broadcast_in_dim shape must have every element be "
                     "nonnegative"):
    jnp.bincount(jnp.array([0, 1]), length=-1)
  with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
    jnp.bincount(jnp.array([0, 1]), length=2.0)
  with pytest.raises(TypeError, match="bincount requires ndarray or scalar arguments"):
    jnp.bincount([0, 1])
  with pytest.raises(NotImplementedError, match="out_sharding"):
    jnp.bincount(jnp.array([0, 1]), out_sharding=object())


def test_bincount_under_vmap_and_grad():
  x = np.array([[0, 1], [3, 3]])
  out = xjax.vmap(lambda a: jnp.bincount(a, length=4))(x)
  np.testing.assert_array_equal(out, [[1, 1, 0, 0], [0, 0, 0, 2]])
  out = xjax.vmap(lambda a, w: jnp.bincount(a, w, length=4))(x, np.array([[1.0, 2.0],
                                                                            [3.0, 4.0]]))
  np.testing.assert_array_equal(out, [[1, 2, 0, 0], [0, 0, 0, 7]])
  g = xjax.grad(lambda w: jnp.bincount(jnp.array([0, 1, 5]), w, length=2).sum())(
      jnp.array([1.0, 2.0, 3.0]))
  np.testing.assert_array_equal(g, [1.0, 1.0, 0.0])

