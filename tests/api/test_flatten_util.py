"""Tests of xjax.flatten_util.ravel_pytree: round trips, JAX's dtype promotion, unravel errors."""
import collections

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax.flatten_util import ravel_pytree

Point = collections.namedtuple('Point', ['x', 'y'])


def test_public_names():
  import xjax.flatten_util as fu
  assert [n for n in dir(fu) if not n.startswith('_')] == ['ravel_pytree']


def test_round_trip_nested_containers(rng):
  tree = {'a': rng.normal(size=(2, 3)).astype(np.float32),
          'b': [jnp.arange(4.0).reshape(2, 2), (jnp.float32(7.0),)],
          'c': Point(x=jnp.zeros((0, 5)), y=jnp.ones((1, 1, 2))),
          'd': None}
  flat, unravel = ravel_pytree(tree)
  assert flat.shape == (6 + 4 + 1 + 0 + 2,) and flat.dtype == np.float32
  want = np.concatenate([np.ravel(tree['a']), np.arange(4.0), [7.0], np.ones(2)])
  np.testing.assert_array_equal(np.asarray(flat), want)
  back = unravel(flat)
  assert xjax.tree.structure(back) == xjax.tree.structure(tree)
  assert isinstance(back['c'], Point) and back['d'] is None
  for g, w in zip(xjax.tree.leaves(back), xjax.tree.leaves(tree)):
    assert g.shape == np.shape(w) and g.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
  # Unravelling a modified vector puts the values back in order.
  back2 = unravel(flat * 2)
  np.testing.assert_array_equal(np.asarray(back2['b'][0]), 2 * np.arange(4.0).reshape(2, 2))


# (leaves, flat dtype, unravelled dtypes, flat weak_type), recorded with jax 0.10.2
# (x64 off).
PROMOTION_CASES = {
    'py_floats': ([1.0, 2.0], 'float32', ['float32', 'float32'], True),
    'py_ints': ([1, 2], 'int32', ['int32', 'int32'], True),
    'py_int_and_f32': ([1, jnp.ones(2, jnp.float32)], 'float32', ['int32', 'float32'], False),
    'numpy_f64': ([np.zeros(2)], 'float32', ['float32'], False),
    'numpy_f64_and_f32': ([np.zeros(2), jnp.ones(2)], 'float32', ['float32', 'float32'], False),
    'i8_u8': ([jnp.int8(1), jnp.uint8(2)], 'int16', ['int8', 'uint8'], False),
    'bool_i32': ([True, jnp.int32(3)], 'int32', ['bool', 'int32'], False),
    'bf16_f16': ([jnp.ones(1, jnp.bfloat16), jnp.ones(1, jnp.float16)], 'float32',
                 ['bfloat16', 'float16'], False),
    'c64_f32': ([jnp.ones(1, jnp.complex64), jnp.ones(1)], 'complex64',
                ['complex64', 'float32'], False),
    'bools': ([True, False], 'bool', ['bool', 'bool'], False),
    'py_bool_py_float': ([True, 2.5], 'float32', ['bool', 'float32'], False),
    'numpy_i64': ([np.arange(3)], 'int32', ['int32'], False),
    'f16_i32': ([jnp.ones(2, jnp.float16), jnp.int32(1)], 'float16', ['float16', 'int32'], False),
}


@pytest.mark.parametrize('name', sorted(PROMOTION_CASES))
def test_dtype_promotion_matches_jax(name):
  leaves, flat_dtype, leaf_dtypes, weak = PROMOTION_CASES[name]
  flat, unravel = ravel_pytree(leaves)
  assert str(flat.dtype) == flat_dtype
  assert flat.weak_type == weak
  back = unravel(flat)
  assert [str(x.dtype) for x in back] == leaf_dtypes
  for b, leaf in zip(back, leaves):
    assert b.shape == np.shape(leaf)
    np.testing.assert_array_equal(np.asarray(b).astype(np.complex128),
                                  np.asarray(leaf).astype(np.complex128))


def test_dtype_promotion_x64(x64):
  # Recorded with jax 0.10.2 with jax_enable_x64 on.
  flat, unravel = ravel_pytree([1.0, 2])
  assert flat.dtype == np.float64 and [x.dtype for x in unravel(flat)] == [np.float64, np.int64]
  flat, unravel = ravel_pytree([jnp.ones(2, jnp.float32), 1.0])
  assert flat.dtype == np.float64
  assert [x.dtype for x in unravel(flat)] == [np.float32, np.float64]
  flat, unravel = ravel_pytree([1, jnp.int32(2)])
  assert flat.dtype == np.int64 and [x.dtype for x in unravel(flat)] == [np.int64, np.int32]


def test_complex_to_real_unravel_keeps_real_part():
  flat, unravel = ravel_pytree([jnp.ones(2, jnp.float32), jnp.ones(1, jnp.complex64)])
  back = unravel(jnp.array([1 + 5j, 2 - 1j, 3 + 2j], dtype=jnp.complex64))
  assert back[0].dtype == np.float32 and back[1].dtype == np.complex64
  np.testing.assert_array_equal(np.asarray(back[0]), [1., 2.])
  np.testing.assert_array_equal(np.asarray(back[1]), [3 + 2j])


def test_empty_pytree():
  for tree in ([], {}, (None,), {'a': []}):
    flat, unravel = ravel_pytree(tree)
    assert flat.shape == (0,) and flat.dtype == np.float32 and not flat.weak_type
    assert unravel(flat) == tree


def test_scalar_leaf_and_single_array():
  flat, unravel = ravel_pytree(jnp.float32(3.0))
  assert flat.shape == (1,)
  back = unravel(flat)
  assert back.shape == () and float(back) == 3.0
  flat, unravel = ravel_pytree(jnp.arange(6).reshape(2, 3))
  np.testing.assert_array_equal(np.asarray(flat), np.arange(6))
  assert unravel(flat).shape == (2, 3)


def test_single_dtype_unravel_is_dtype_polymorphic():
  flat, unravel = ravel_pytree({'a': jnp.ones((2, 3)), 'b': [jnp.zeros(2)]})
  back = unravel(jnp.arange(8, dtype=jnp.int32))
  assert back['a'].dtype == np.int32 and back['b'][0].dtype == np.int32
  np.testing.assert_array_equal(np.asarray(back['a']), [[0, 1, 2], [3, 4, 5]])
  np.testing.assert_array_equal(np.asarray(back['b'][0]), [6, 7])


def test_unravel_errors():
  _, unravel = ravel_pytree({'a': jnp.ones((2, 3)), 'b': [jnp.zeros(2)]})
  with pytest.raises(ValueError) as e:
    unravel(jnp.ones(7))
  assert str(e.value) == "Sum of sizes 8 must be equal to dimension 0 of the operand shape [7]"
  with pytest.raises(ValueError) as e:
    unravel(jnp.ones((2, 4)))
  assert str(e.value) == "Sum of sizes 8 must be equal to dimension 0 of the operand shape [2, 4]"
  _, unravel = ravel_pytree([jnp.ones(2, jnp.float32), jnp.ones(1, jnp.complex64)])
  with pytest.raises(TypeError) as e:
    unravel(jnp.ones(3))
  assert str(e.value) == ("unravel function given array of dtype float32, "
                          "but expected dtype complex64")
  with pytest.raises(ValueError, match="Sum of sizes 3 must be equal to dimension 0"):
    unravel(jnp.ones(4, jnp.complex64))


def test_unravel_functions_compare_by_structure():
  _, u1 = ravel_pytree({'a': jnp.ones(2), 'b': 1.0})
  _, u2 = ravel_pytree({'a': jnp.zeros(2), 'b': 5.0})
  _, u3 = ravel_pytree({'a': jnp.ones(3), 'b': 1.0})
  _, u4 = ravel_pytree([jnp.ones(2), 1.0])
  assert u1 == u2 and hash(u1) == hash(u2)
  assert u1 != u3 and u1 != u4
  # Hashable, so usable as a static argument of jit.
  f = xjax.jit(lambda unravel, v: unravel(v)['a'] * 2, static_argnums=0)
  np.testing.assert_array_equal(np.asarray(f(u1, jnp.arange(3.0))), [0., 2.])


def test_under_jit_grad_and_vmap():
  tree = {'w': jnp.arange(3.0), 'b': (jnp.float32(2.0),)}
  flat = xjax.jit(lambda t: ravel_pytree(t)[0])(tree)
  # Dict keys are sorted: 'b' comes first.
  np.testing.assert_array_equal(np.asarray(flat), [2., 0., 1., 2.])
  _, unravel = ravel_pytree(tree)

  def loss(v):
    t = unravel(v)
    return jnp.sum(t['w'] ** 2) + 3 * t['b'][0]
  g = xjax.grad(loss)(flat)
  np.testing.assert_allclose(np.asarray(g), [3., 0., 2., 4.])
  g_tree = xjax.grad(lambda t: loss(ravel_pytree(t)[0]))(tree)
  np.testing.assert_allclose(np.asarray(g_tree['w']), [0., 2., 4.])
  np.testing.assert_allclose(float(g_tree['b'][0]), 3.0)
  batched = xjax.vmap(lambda t: ravel_pytree(t)[0])({'w': jnp.ones((5, 3)), 'b': (jnp.zeros(5),)})
  assert batched.shape == (5, 4)
  np.testing.assert_array_equal(np.asarray(batched[:, 1:]), np.ones((5, 3)))
  np.testing.assert_array_equal(np.asarray(batched[:, 0]), np.zeros(5))
