"""Typed key arrays as JAX users see them: pytree leaves, and operands of the jnp/lax
functions that move, select, compare or index elements (not arithmetic).

The law: such a function applied to keys gives the keys whose data is the same function
applied to the key data along the key axes (the trailing data axis carried along), eagerly,
under jit and under vmap. Comparisons compare whole keys.
"""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax import random
from xjax import tree_util


def _data(k):
  return np.asarray(random.key_data(k))


KEYS = random.split(random.key(3), 6)
DATA = _data(KEYS)
MASK = np.array([True, False, True, True, False, False])

# name -> (function of keys, the same function of the key data (..., 2))
CASES = {
    "broadcast_to": (lambda k: jnp.broadcast_to(k[0], (3, 2)),
                     lambda d: np.broadcast_to(d[0], (3, 2, 2))),
    "reshape": (lambda k: jnp.reshape(k, (2, 3)), lambda d: d.reshape(2, 3, 2)),
    "transpose": (lambda k: jnp.transpose(k.reshape(2, 3)),
                  lambda d: d.reshape(2, 3, 2).transpose(1, 0, 2)),
    "expand_dims": (lambda k: jnp.expand_dims(k, 0), lambda d: d[None]),
    "flip": (lambda k: jnp.flip(k), lambda d: d[::-1]),
    "roll": (lambda k: jnp.roll(k, 2), lambda d: np.roll(d, 2, axis=0)),
    "tile": (lambda k: jnp.tile(k[:2], 3), lambda d: np.tile(d[:2], (3, 1))),
    "repeat": (lambda k: jnp.repeat(k[:3], 2), lambda d: np.repeat(d[:3], 2, axis=0)),
    "concatenate": (lambda k: jnp.concatenate([k, k[:2]]), lambda d: np.concatenate([d, d[:2]])),
    "take": (lambda k: jnp.take(k, jnp.array([4, 0, 4])), lambda d: d[[4, 0, 4]]),
    "where": (lambda k: jnp.where(MASK, k, k[0]), lambda d: np.where(MASK[:, None], d, d[0])),
    "select_n": (lambda k: lax.select_n(jnp.asarray(MASK), k, k[::-1]),
                 lambda d: np.where(MASK[:, None], d[::-1], d)),
    "dynamic_slice": (lambda k: lax.dynamic_slice(k, (2,), (3,)), lambda d: d[2:5]),
    "dynamic_update_slice": (lambda k: lax.dynamic_update_slice(k, k[:2], (3,)),
                             lambda d: np.concatenate([d[:3], d[:2], d[5:]])),
    "at_set": (lambda k: k.at[1:3].set(k[5]),
               lambda d: np.concatenate([d[:1], d[5:6], d[5:6], d[3:]])),
    "at_get": (lambda k: k.at[jnp.array([5, 1])].get(), lambda d: d[[5, 1]]),
    "index_array": (lambda k: k[jnp.array([2, 2, 0])], lambda d: d[[2, 2, 0]]),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_element_moving_functions_act_on_whole_keys(name, mode):
  fn, on_data = CASES[name]
  out = fn(KEYS) if mode == "eager" else xjax.jit(fn)(KEYS)
  assert out.dtype == KEYS.dtype
  np.testing.assert_array_equal(_data(out), on_data(DATA))


@pytest.mark.parametrize("name", ["reshape", "flip", "where", "take", "at_set", "tile"])
def test_element_moving_functions_under_vmap(name):
  fn, on_data = CASES[name]
  batch = random.split(random.key(4), (2, 6))
  out = xjax.vmap(fn)(batch)
  want = np.stack([on_data(d) for d in _data(batch)])
  np.testing.assert_array_equal(_data(out), want)


def test_comparisons_compare_whole_keys():
  k0 = KEYS[0]
  same = random.wrap_key_data(DATA[0])  # another key object with k0's data
  np.testing.assert_array_equal(KEYS == k0, [True] + [False] * 5)
  np.testing.assert_array_equal(lax.eq(KEYS, k0), KEYS == k0)
  np.testing.assert_array_equal(lax.ne(KEYS, k0), ~np.asarray(KEYS == k0))
  assert bool(jnp.array_equal(k0, same)) and not bool(jnp.array_equal(k0, KEYS[1]))
  assert bool(jnp.allclose(k0, same)) and not bool(jnp.allclose(k0, KEYS[1]))
  np.testing.assert_array_equal(jnp.isclose(KEYS, same), KEYS == k0)
  np.testing.assert_array_equal(xjax.jit(jnp.equal)(KEYS, k0), KEYS == k0)
  # keys differing in one data word only are different keys
  half = random.wrap_key_data(np.array([DATA[0, 0], DATA[0, 1] + 1], np.uint32))
  assert not bool(k0 == half) and bool(k0 != half)


def test_keys_mixed_with_numbers_or_in_arithmetic_are_type_errors():
  with pytest.raises(TypeError, match="equal does not accept dtypes key<fry>, int32"):
    jnp.equal(KEYS, 1)
  with pytest.raises(ValueError, match="key<fry> is not a valid dtype for JAX type promotion"):
    jnp.where(MASK, KEYS, jnp.zeros(6, jnp.int32))  # JAX's error too
  with pytest.raises(TypeError, match="sort does not accept dtype key<fry>"):
    jnp.sort(KEYS)
  with pytest.raises(TypeError, match="pad does not accept dtype key<fry>"):
    lax.pad(KEYS, KEYS[0], [(1, 1, 0)])  # refused before XLA, not a crash inside it
  with pytest.raises(ValueError, match="Cannot convert_element_type from int32 to key<fry>"):
    lax.convert_element_type(jnp.zeros(2, jnp.int32), KEYS.dtype)
  with pytest.raises(TypeError):
    KEYS + KEYS


def test_keys_are_pytree_leaves_to_users():
  tree = {"a": KEYS, "b": [random.key(1), 2.0]}
  leaves, treedef = tree_util.tree_flatten(tree)
  assert len(leaves) == 3 and leaves[0] is KEYS
  assert tree_util.tree_structure(KEYS) == tree_util.tree_structure(0)
  assert xjax.tree.structure(KEYS).num_leaves == 1
  assert [tree_util.keystr(p) for p, _ in tree_util.tree_leaves_with_path(tree)] == \
      ["['a']", "['b'][0]", "['b'][1]"]
  assert tree_util.tree_map(lambda x: x, tree)["a"] is KEYS
  assert not tree_util.all_leaves([tree]) and tree_util.all_leaves([KEYS, 1.0])
  assert not tree_util.default_registry.is_node(type(KEYS))
  assert tree_util.default_registry.flatten(KEYS)[0] == [KEYS]
  with pytest.raises(ValueError, match="can't tree-flatten"):
    tree_util.flatten_one_level(KEYS)
  # leaves of a tree_map are whole keys
  shapes = tree_util.tree_map(lambda x: getattr(x, "dtype", None) == KEYS.dtype, tree)
  assert shapes == {"a": True, "b": [True, False]}


def test_keys_in_pytrees_pass_transformations():
  tree = {"k": KEYS, "x": jnp.arange(6.0)}

  def f(t):
    new = xjax.tree.map(lambda v: random.split(v[0], 2) if v.dtype == KEYS.dtype else v, t)
    return new, random.normal(t["k"][1], (2,))
  (out, sample), (out_jit, sample_jit) = f(tree), xjax.jit(f)(tree)
  assert out["k"].dtype == out_jit["k"].dtype == KEYS.dtype
  np.testing.assert_array_equal(_data(out["k"]), _data(out_jit["k"]))
  np.testing.assert_array_equal(sample, sample_jit)
  batched = xjax.vmap(lambda k: random.uniform(k, ()))(KEYS)
  np.testing.assert_array_equal(batched, [random.uniform(k, ()) for k in KEYS])
  carry, ys = lax.scan(lambda k, _: (random.split(k)[0], random.bits(k)), KEYS[0], None, length=3)
  assert carry.dtype == KEYS.dtype and ys.shape == (3,)


def test_key_entries_take_their_field_by_name():
  assert tree_util.SequenceKey(idx=2) == tree_util.SequenceKey(2)
  assert tree_util.DictKey(key="a") == tree_util.DictKey("a")
  assert tree_util.GetAttrKey(name="w") == tree_util.GetAttrKey("w")
  with pytest.raises(TypeError, match="takes one argument, 'idx'"):
    tree_util.SequenceKey(key=2)
