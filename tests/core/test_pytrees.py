"""Pytrees: round trips, treedef equality and hash, registration, key paths, and
reprs and error texts against real JAX (tests/golden/pytree_reprs.json)."""
import collections
import copy
import dataclasses
import doctest
import inspect
import json
import os
import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xjax.tree as xtree
import xjax.tree_util as tu
from xjax._src import tree_util as tree_util_impl

GOLDEN = os.path.join(os.path.dirname(os.path.dirname(__file__)), "golden", "pytree_reprs.json")

Point = collections.namedtuple("Point", "x y")


class Box:
  """A custom node: one child, a static label."""

  def __init__(self, value, label):
    self.value, self.label = value, label

  def __eq__(self, other):
    return type(other) is Box and (self.value, self.label) == (other.value, other.label)

  def __repr__(self):
    return f"Box({self.value!r}, {self.label!r})"


tu.register_pytree_node(Box, lambda b: ((b.value,), b.label), lambda label, c: Box(c[0], label))


@tu.register_dataclass
@dataclasses.dataclass
class Layer:
  w: object
  b: object
  act: str = xtree.static(default="relu")


# ----------------------------------------------------------------------------- trees

leaf_values = st.one_of(st.integers(-5, 5), st.text("ab", max_size=2), st.floats(allow_nan=False))
dict_keys = st.text("abcd", min_size=1, max_size=2)


def _extend(children, with_partial=True):
  partials = st.lists(children, max_size=3).map(lambda xs: tu.Partial(max, *xs))
  return st.one_of(
      st.lists(children, max_size=4).map(tuple),
      st.lists(children, max_size=4),
      st.dictionaries(dict_keys, children, max_size=4),
      st.tuples(children, children).map(lambda xy: Point(*xy)),
      st.dictionaries(dict_keys, children, max_size=3).map(collections.OrderedDict),
      st.dictionaries(dict_keys, children, max_size=3).map(
          lambda d: collections.defaultdict(int, d)),
      st.tuples(children, st.sampled_from(["p", "q"])).map(lambda vl: Box(*vl)),
      st.tuples(children, children, st.sampled_from(["relu", "tanh"])).map(lambda a: Layer(*a)),
      *([partials] if with_partial else []),
  )


trees = st.recursive(st.one_of(leaf_values, st.none()), _extend, max_leaves=12)
# Without Partial, whose instances compare by identity, so that rebuilt trees compare with ==.
comparable_trees = st.recursive(st.one_of(leaf_values, st.none()),
                                lambda c: _extend(c, with_partial=False), max_leaves=12)


def _get(tree, path):
  """Follows a key path into a tree: the reference for tree_flatten_with_path."""
  for key in path:
    if isinstance(key, tu.SequenceKey):
      tree = tree[key.idx]
    elif isinstance(key, tu.DictKey):
      tree = tree[key.key]
    elif isinstance(key, tu.GetAttrKey):
      tree = getattr(tree, key.name)
    else:  # FlattenedIndexKey: the index among the node's children
      tree = list(tu.flatten_one_level(tree)[0])[key.key]
  return tree


# ----------------------------------------------------------------------------- round trips

@settings(max_examples=300, deadline=None)
@given(trees)
def test_tree_flatten_unflatten_round_trip(tree):
  leaves, treedef = tu.tree_flatten(tree)
  assert treedef.num_leaves == len(leaves)
  rebuilt = tu.tree_unflatten(treedef, leaves)
  assert type(rebuilt) is type(tree)
  assert tu.tree_structure(rebuilt) == treedef
  assert hash(tu.tree_structure(rebuilt)) == hash(treedef)
  assert all(a is b for a, b in zip(tu.tree_leaves(rebuilt), leaves, strict=True))
  # The hot path and the is_leaf path must agree.
  slow_leaves, slow_treedef = tu.tree_flatten(tree, is_leaf=lambda x: False)
  assert slow_treedef == treedef and all(a is b for a, b in zip(slow_leaves, leaves, strict=True))


@settings(max_examples=200, deadline=None)
@given(comparable_trees)
def test_tree_unflatten_rebuilds_equal_tree(tree):
  assert tu.tree_unflatten(*reversed(tu.tree_flatten(tree))) == tree


@settings(max_examples=200, deadline=None)
@given(trees)
def test_treedef_methods_agree_with_flatten(tree):
  leaves, treedef = tu.tree_flatten(tree)
  assert all(a is b for a, b in zip(treedef.flatten_up_to(tree), leaves, strict=True))
  assert pickle.loads(pickle.dumps(treedef)) == treedef
  assert copy.deepcopy(treedef) == treedef
  assert tu.treedef_is_leaf(treedef) == (treedef.num_nodes == 1)
  if treedef.node_data() is None:
    assert treedef.children() == [] and treedef.num_leaves == 1
  else:
    children = [tu.tree_structure(c) for c in tu.flatten_one_level(tree)[0]]
    assert treedef.children() == children
    assert sum(c.num_leaves for c in children) == treedef.num_leaves
    assert treedef.num_nodes == 1 + sum(c.num_nodes for c in children)
  pairs = tu.tree_leaves(tu.tree_map(_Pair, tree, tree))
  assert all(p.a is x and p.b is x for p, x in zip(pairs, leaves, strict=True))


class _Pair:
  """A leaf holding two values."""

  def __init__(self, a, b):
    self.a, self.b = a, b


@settings(max_examples=200, deadline=None)
@given(trees)
def test_tree_flatten_with_path_keys_lead_to_leaves(tree):
  path_leaves, treedef = tu.tree_flatten_with_path(tree)
  assert treedef == tu.tree_structure(tree)
  assert [x for _, x in path_leaves] == tu.tree_leaves(tree)
  for path, leaf in path_leaves:
    assert _get(tree, path) is leaf
  assert [p for p, _ in tu.tree_leaves_with_path(tree)] == [p for p, _ in path_leaves]


@settings(max_examples=100, deadline=None)
@given(trees, trees)
def test_treedef_equality_matches_structure(a, b):
  ta, tb = tu.tree_structure(a), tu.tree_structure(b)

  def is_prefix(treedef, tree):
    try:
      treedef.flatten_up_to(tree)
      return True
    except ValueError:
      return False

  # Two structures are equal exactly when each is a prefix of the other.
  assert (ta == tb) == (is_prefix(ta, b) and is_prefix(tb, a))
  if ta == tb:
    assert hash(ta) == hash(tb) and repr(ta) == repr(tb)


# ----------------------------------------------------------------------------- treedefs

def test_treedef_is_immutable_and_hash_cached():
  treedef = tu.tree_structure((1, {"a": 2}))
  with pytest.raises(AttributeError):
    treedef.num_leaves = 3
  with pytest.raises(AttributeError):
    treedef.extra = 1
  assert treedef._hash is None
  first = hash(treedef)
  assert treedef._hash == first
  # An equal treedef built separately hashes the same, and finds the first in a dict.
  twin = tu.tree_structure((3.0, {"a": None}), is_leaf=lambda x: x is None)
  assert twin is not treedef and twin == treedef and twin._hash is None
  assert hash(twin) == first and {treedef: "found"}[twin] == "found"
  assert len({treedef, twin, tu.tree_structure((1, {"b": 2}))}) == 2


def test_treedef_equality_compares_keys_types_and_metadata():
  s = tu.tree_structure
  assert s({"a": 1}) != s({"b": 1})
  assert s((1, 2)) != s([1, 2])
  assert s(Point(1, 2)) != s((1, 2))
  assert s(Box(1, "p")) != s(Box(1, "q"))
  assert s(Box(1, "p")) == s(Box(2, "p"))
  assert s(None) != s(())
  assert s(1) != s(None)
  assert s({1: 1}) == s({True: 1})  # equal keys, as in Python
  assert s((1,)) != (1,)


def test_treedef_hashes_unhashable_metadata():
  a, b = tu.tree_structure(Box(1, [1, 2])), tu.tree_structure(Box(5, [1, 2]))
  assert a == b and hash(a) == hash(b)
  assert a != tu.tree_structure(Box(1, [3]))


def test_treedef_metadata_equality_error_names_the_problem():
  a, b = tu.tree_structure(Box(1, np.zeros(3))), tu.tree_structure(Box(1, np.ones(3)))
  with pytest.raises(ValueError, match="arrays cannot be passed as metadata fields"):
    _ = a == b


def test_numpy_arrays_are_leaves():
  x = np.arange(3)
  leaves, treedef = tu.tree_flatten({"x": x, "y": [np.float32(1)]})
  assert leaves[0] is x and repr(treedef) == "PyTreeDef({'x': *, 'y': [*]})"


def test_dict_subclasses_and_tuple_subclasses_are_leaves():
  class MyDict(dict):
    pass

  class MyTuple(tuple):
    pass

  assert tu.tree_leaves([MyDict(a=1), MyTuple((1, 2))]) == [MyDict(a=1), MyTuple((1, 2))]


def test_unflatten_rebuilds_dicts_in_sorted_key_order():
  out = tu.tree_map(lambda x: x, {"b": 1, "a": 2, "c": 3})
  assert list(out) == ["a", "b", "c"]


def test_defaultdict_keeps_default_factory():
  out = tu.tree_map(lambda x: x + 1, collections.defaultdict(list, {"b": 1}))
  assert out.default_factory is list and out == {"b": 2}


# ----------------------------------------------------------------------------- is_leaf

def test_is_leaf_stops_flattening():
  tree = [(1, 2), [3, (4,)]]
  assert tu.tree_leaves(tree, is_leaf=lambda x: isinstance(x, tuple)) == [(1, 2), 3, (4,)]
  assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]
  assert tu.tree_leaves([None, 1]) == [1]
  out = tu.tree_map(lambda x: 0 if x is None else x, [None, 1], is_leaf=lambda x: x is None)
  assert out == [0, 1]


def test_is_leaf_takes_path():
  out = tu.tree_leaves_with_path([1, [2, [3]]], is_leaf=lambda p, x: len(p) == 2,
                                 is_leaf_takes_path=True)
  assert [x for _, x in out] == [1, 2, [3]]


def test_all_leaves():
  assert tu.all_leaves([1, "a", np.zeros(2)])
  assert not tu.all_leaves([1, (2,)])
  assert not tu.all_leaves([None])
  assert tu.all_leaves([None], is_leaf=lambda x: x is None)


# ----------------------------------------------------------------------------- registration

def test_register_pytree_node_class_round_trips_under_tree_map():
  @tu.register_pytree_node_class
  class Pair:
    def __init__(self, a, b):
      self.a, self.b = a, b

    def tree_flatten(self):
      return (self.a, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
      return cls(*children)

  out = tu.tree_map(lambda x: x * 2, Pair(1, [2]))
  assert (out.a, out.b) == (2, [4])
  with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type registration"):
    tu.register_pytree_node_class(Pair)


def test_register_pytree_with_keys_class_gives_named_paths():
  @tu.register_pytree_with_keys_class
  class Named:
    def __init__(self, x):
      self.x = x

    def tree_flatten_with_keys(self):
      return ((tu.GetAttrKey("x"), self.x),), None

    @classmethod
    def tree_unflatten(cls, aux, children):
      return cls(*children)

  paths = [tu.keystr(p) for p, _ in tu.tree_leaves_with_path({"n": Named([5])})]
  assert paths == ["['n'].x[0]"]
  assert tu.tree_map(lambda x: x + 1, Named(1)).x == 2


def test_register_dataclass_infers_fields_and_static_metadata():
  layer = Layer(np.ones(2), 3)
  leaves, treedef = tu.tree_flatten(layer)
  assert leaves[1] == 3 and repr(treedef) == "PyTreeDef(CustomNode(Layer[('relu',)], [*, *]))"
  assert tu.tree_map(lambda x: x * 2, layer).b == 6
  assert tu.tree_structure(Layer(1, 2, "tanh")) != treedef
  with pytest.raises(ValueError, match="Duplicate custom dataclass PyTreeDef"):
    tu.register_dataclass(Layer)


def test_register_dataclass_drop_fields():
  @dataclasses.dataclass
  class WithCache:
    x: object
    cache: object = None

  tu.register_dataclass(WithCache, ["x"], [], drop_fields=["cache"])
  assert tu.tree_leaves(WithCache(1, cache=[5])) == [1]


def test_register_static_makes_childless_nodes():
  @tu.register_static
  class Mode(str):
    pass

  leaves, treedef = tu.tree_flatten([Mode("train"), 1])
  assert leaves == [1] and treedef != tu.tree_structure([Mode("eval"), 1])
  assert tu.tree_unflatten(treedef, [2])[0] == "train"


def test_partial_is_a_pytree_with_static_func():
  p = tu.Partial(max, 1, key=2)
  assert tu.tree_leaves(p) == [1, 2]
  doubled = tu.tree_map(lambda x: x * 2, p)
  assert isinstance(doubled, tu.Partial) and doubled.func is max
  assert doubled.args == (2,) and doubled.keywords == {"key": 4}
  assert tu.tree_structure(tu.Partial(min, 1)) != tu.tree_structure(tu.Partial(max, 1))


def test_partial_of_partial_keeps_inner_arguments_static():
  import functools
  inner = functools.partial(lambda a, b: a - b, 10)
  p = tu.Partial(inner, 3)
  assert p() == 7 and tu.tree_leaves(p) == [3]
  assert tu.tree_map(lambda x: x + 1, p)() == 6


def test_is_tree_node():
  assert tu.is_tree_node(tuple) and tu.is_tree_node(Point) and tu.is_tree_node(Box)
  assert tu.is_tree_node(type(None)) and not tu.is_tree_node(int)


# ----------------------------------------------------------------------------- tree functions

def test_tree_reduce_and_all():
  assert tu.tree_reduce(lambda a, b: a + b, (1, [2, 3]), 10) == 16
  assert tu.tree_reduce(lambda a, b: a + b, (1, [2, 3])) == 6
  assert tu.tree_reduce_associative(lambda a, b: a + b, [1, (2, 3)]) == 6
  assert tu.tree_all((1, [True])) and not tu.tree_all((1, [0])) and tu.tree_all(())


def test_tree_transpose_swaps_outer_and_inner():
  outer, inner = tu.tree_structure([0, 0, 0]), tu.tree_structure({"a": 0, "b": 0})
  tree = [{"a": i, "b": -i} for i in range(3)]
  assert tu.tree_transpose(outer, inner, tree) == {"a": [0, 1, 2], "b": [0, -1, -2]}
  assert tu.tree_transpose(outer, None, tree) == {"a": [0, 1, 2], "b": [0, -1, -2]}


def test_tree_map_multiple_trees_with_prefix():
  out = tu.tree_map(lambda x, y: (x, y), {"a": 1, "b": 2}, {"a": [3, 4], "b": (5,)})
  assert out == {"a": (1, [3, 4]), "b": (2, (5,))}


def test_keystr_separator_and_simple():
  path = (tu.DictKey("a"), tu.SequenceKey(0), tu.GetAttrKey("w"), tu.FlattenedIndexKey(1))
  assert tu.keystr(path) == "['a'][0].w[<flat index 1>]"
  assert tu.keystr(path, simple=True, separator="/") == "a/0/w/1"


def test_key_entries_compare_hash_and_pickle():
  assert tu.SequenceKey(1) == tu.SequenceKey(1) != tu.FlattenedIndexKey(1)
  assert len({tu.DictKey("a"), tu.DictKey("a"), tu.GetAttrKey("a")}) == 2
  assert pickle.loads(pickle.dumps(tu.DictKey((1, "a")))) == tu.DictKey((1, "a"))
  match tu.GetAttrKey("w"):
    case tu.GetAttrKey(name=name):
      assert name == "w"
  with pytest.raises(TypeError):
    tu.SequenceKey("0")
  with pytest.raises(AttributeError):
    tu.SequenceKey(0).idx = 1


# ----------------------------------------------------------------------------- against JAX

def _load_golden():
  with open(GOLDEN) as f:
    return json.load(f)


_GOLDEN = _load_golden()


@pytest.fixture(scope="module")
def golden_namespace():
  namespace = {"__name__": "cases", "tu": tu}
  exec(_GOLDEN["prelude"], namespace)
  return namespace


def test_golden_file_is_from_jax_0_10_2():
  assert _GOLDEN["jax_version"] == "0.10.2"


@pytest.mark.parametrize("case_id", sorted(_GOLDEN["cases"]))
def test_repr_and_error_text_match_jax(case_id, golden_namespace):
  case = _GOLDEN["cases"][case_id]
  try:
    got = {"expr": case["expr"], "repr": repr(eval(case["expr"], golden_namespace))}
  except Exception as e:
    got = {"expr": case["expr"], "error": type(e).__name__, "message": str(e)}
  if case_id == "err_reduce_empty":  # Python's own message; stable across versions
    got.pop("message", None), case.pop("message", None)
  assert got == case


# ----------------------------------------------------------------------------- API surface

JAX_TREE_SIGNATURES = {
    "all": "(tree, *, is_leaf=None)",
    "flatten": "(tree, is_leaf=None)",
    "flatten_with_path": "(tree, is_leaf=None, is_leaf_takes_path=False)",
    "leaves": "(tree, is_leaf=None)",
    "leaves_with_path": "(tree, is_leaf=None, is_leaf_takes_path=False)",
    "map": "(f, tree, *rest, is_leaf=None)",
    "map_with_path": "(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False)",
    "reduce": "(function, tree, initializer=?, is_leaf=None)",
    "structure": "(tree, is_leaf=None)",
    "transpose": "(outer_treedef, inner_treedef, pytree_to_transpose)",
    "unflatten": "(treedef, leaves)",
    "broadcast": "(prefix_tree, full_tree, is_leaf=None)",
}


@pytest.mark.parametrize("name", sorted(JAX_TREE_SIGNATURES))
def test_tree_namespace_signatures_match_jax(name):
  sig = inspect.signature(getattr(xtree, name))
  params = [p.replace(annotation=inspect.Parameter.empty,
                      default="?" if p.name == "initializer" else p.default)
            for p in sig.parameters.values()]
  text = str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))
  assert text.replace("'?'", "?") == JAX_TREE_SIGNATURES[name]


# jax.tree_util's public names in 0.10.2, less default_registry and the typing aliases.
JAX_TREE_UTIL_NAMES = [
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "Partial", "PyTreeDef", "SequenceKey",
    "all_leaves", "flatten_one_level", "flatten_one_level_with_keys", "is_tree_node", "keystr",
    "register_dataclass", "register_pytree_node", "register_pytree_node_class",
    "register_pytree_with_keys", "register_pytree_with_keys_class", "register_static",
    "tree_all", "tree_broadcast", "tree_flatten", "tree_flatten_with_path", "tree_leaves",
    "tree_leaves_with_path", "tree_map", "tree_map_with_path", "tree_reduce",
    "tree_reduce_associative", "tree_structure", "tree_transpose", "tree_unflatten",
    "treedef_children", "treedef_is_leaf", "treedef_tuple"]


def test_tree_util_has_jax_public_names():
  assert [n for n in JAX_TREE_UTIL_NAMES if not hasattr(tu, n)] == []
  assert all(hasattr(xtree, n) for n in ["static", "reduce_associative"])


def test_docstring_examples_run():
  result = doctest.testmod(tree_util_impl, optionflags=doctest.ELLIPSIS)
  assert result.attempted > 0 and result.failed == 0


def test_treedef_walk_folds_bottom_up_with_node_data():
  leaves, treedef = tu.tree_flatten({"b": 2, "a": 1, "c": ({"b": 2, "a": 1}, [3])})
  seen = []
  total = treedef.walk(lambda kids, data: seen.append(data) or sum(kids), lambda x: 10 * x,
                       leaves)
  assert total == 90
  assert seen == [["a", "b"], None, None, ["a", "b", "c"]]
  assert treedef.walk(None, None, leaves) == (1, 2, ((1, 2), (3,)))
  with pytest.raises(ValueError, match="Too few leaves"):
    treedef.walk(None, None, leaves[:-1])


def test_treedef_serialize_using_proto_round_trips_builtin_structures():
  treedef = tu.tree_structure([1, [2], (3, None), {"a": 4, "b": 5}, {7: 6}])
  data = treedef.serialize_using_proto()
  assert isinstance(data, bytes)
  assert tu.PyTreeDef.deserialize_using_proto(tu.default_registry, data) == treedef
  Pair = collections.namedtuple("Pair", "x y")
  with pytest.raises(TypeError):
    tu.tree_structure(Pair(1, 2)).serialize_using_proto()


def test_broadcast_flattened_prefix_with_treedef():
  prefix_leaves, prefix = tu.tree_flatten((1, 2, 3))
  full = tu.tree_structure((0, {"a": 0, "b": 0}, (0, 0)))
  assert tree_util_impl.broadcast_flattened_prefix_with_treedef(
      prefix_leaves, prefix, full) == [1, 2, 2, 3, 3]
  for bad in [(0, {"a": 0}), (0, 0, 0, 0), [0, 0, 0], 0]:
    with pytest.raises(ValueError, match="not a prefix"):
      tree_util_impl.broadcast_flattened_prefix_with_treedef(
          prefix_leaves, prefix, tu.tree_structure(bad))


def test_dispatch_registry_flattens_like_default_for_plain_nodes():
  tree = {"a": [1, (2, None)], "b": collections.OrderedDict(x=3)}
  assert tree_util_impl.dispatch_registry.flatten(tree) == tu.default_registry.flatten(tree)


def test_flatten_rejects_non_iterable_children():
  class Bad:
    pass
  tu.register_pytree_node(Bad, lambda o: (7, 7), lambda aux, kids: Bad())
  with pytest.raises(ValueError, match="'children' is iterable"):
    tu.tree_flatten(Bad())
