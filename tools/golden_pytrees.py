"""Writes tests/golden/pytree_reprs.json from real JAX (run with JAX installed).

    /work/venvs/jaxref/bin/python tools/golden_pytrees.py

Each case is one Python expression, evaluated in a namespace where ``tu`` is
the tree_util module and `PRELUDE` has run (it defines node types through
``tu``). The JSON records, per case, the expression and either ``repr`` of
its value or the error's class name and message; it also holds the prelude
and the jax version. tests/core/test_pytrees.py runs the same prelude and
expressions with ``tu = xjax.tree_util`` and compares.
"""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   "tests", "golden", "pytree_reprs.json")

PRELUDE = '''
import collections, dataclasses, functools

Point = collections.namedtuple("Point", "x y")
Point2 = collections.namedtuple("Point2", "x y")
Empty = collections.namedtuple("Empty", "")

class Box:
  def __init__(self, value, meta):
    self.value, self.meta = value, meta
  def __repr__(self):
    return f"Box({self.value!r}, {self.meta!r})"

tu.register_pytree_node(Box, lambda b: ((b.value,), b.meta), lambda meta, c: Box(c[0], meta))

class Pair:
  def __init__(self, a, b):
    self.a, self.b = a, b
  def __repr__(self):
    return f"Pair({self.a!r}, {self.b!r})"

tu.register_pytree_with_keys(
    Pair, lambda p: (((tu.GetAttrKey("a"), p.a), (tu.DictKey("b"), p.b)), None),
    lambda _, c: Pair(*c))

@tu.register_pytree_node_class
class Node:
  def __init__(self, children, label):
    self.children, self.label = children, label
  def tree_flatten(self):
    return self.children, self.label
  @classmethod
  def tree_unflatten(cls, label, children):
    return cls(list(children), label)
  def __repr__(self):
    return f"Node({self.children!r}, {self.label!r})"

@dataclasses.dataclass
class Params:
  w: object
  b: object
  name: str = "dense"

tu.register_dataclass(Params, data_fields=["w", "b"], meta_fields=["name"])

@tu.register_dataclass
@dataclasses.dataclass
class Auto:
  x: object
  mode: str = dataclasses.field(default="train", metadata=dict(static=True))

@tu.register_static
class Tag(str):
  pass

def paths(tree, **kw):
  return [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(tree, **kw)[0]]

def simple_paths(tree):
  return [tu.keystr(p, simple=True, separator="/") for p, _ in tu.tree_flatten_with_path(tree)[0]]

class Bad:
  pass

tu.register_pytree_node(Bad, lambda x: [1], lambda a, c: Bad())

first = lambda *xs: xs[0]
NESTED = (1, {"b": [2, None], "a": Point(3, (4,))}, [Box(5, "m"), Params(6, 7)])
'''

CASES = [
    # treedef reprs
    ("repr_leaf", "tu.tree_structure(1)"),
    ("repr_none", "tu.tree_structure(None)"),
    ("repr_empty_tuple", "tu.tree_structure(())"),
    ("repr_one_tuple", "tu.tree_structure((1,))"),
    ("repr_empty_list", "tu.tree_structure([])"),
    ("repr_empty_dict", "tu.tree_structure({})"),
    ("repr_nested", "tu.tree_structure((1, {'a': 2, 'b': [3, None]}))"),
    ("repr_dict_sorted", "tu.tree_structure({'b': 1, 'a': 2, 'c': (3, 4)})"),
    ("repr_dict_int_keys", "tu.tree_structure({2: 1, 1: (2,), -1: None})"),
    ("repr_dict_tuple_keys", "tu.tree_structure({(1, 'a'): 1, (0, 'b'): 2})"),
    ("repr_namedtuple", "tu.tree_structure(Point(1, 2))"),
    ("repr_namedtuple_empty", "tu.tree_structure(Empty())"),
    ("repr_ordereddict", "tu.tree_structure(collections.OrderedDict([('b', 1), ('a', 2)]))"),
    ("repr_defaultdict", "tu.tree_structure(collections.defaultdict(list, {'b': 1, 'a': 2}))"),
    ("repr_custom", "tu.tree_structure(Box(1, 'meta'))"),
    ("repr_custom_tuple_meta", "tu.tree_structure(Box(1, (1, 'a')))"),
    ("repr_custom_none_meta", "tu.tree_structure(Box(1, None))"),
    ("repr_custom_keys", "tu.tree_structure(Pair(1, [2, 3]))"),
    ("repr_node_class", "tu.tree_structure(Node([1, Node([], 'leafy')], 'root'))"),
    ("repr_dataclass", "tu.tree_structure(Params(1, 2))"),
    ("repr_dataclass_auto", "tu.tree_structure(Auto(1))"),
    ("repr_static", "tu.tree_structure([Tag('hi'), 1])"),
    ("repr_partial", "tu.tree_structure(tu.Partial(max, 1, key=2))"),
    ("repr_deep", "tu.tree_structure(NESTED)"),
    ("repr_is_leaf", "tu.tree_structure(NESTED, is_leaf=lambda x: isinstance(x, list))"),
    ("repr_none_is_leaf", "tu.tree_structure([None, (None,)], is_leaf=lambda x: x is None)"),
    ("repr_children", "tu.treedef_children(tu.tree_structure(NESTED))"),
    ("repr_treedef_tuple", "tu.treedef_tuple([tu.tree_structure(1), tu.tree_structure([2, 3])])"),
    ("repr_compose", "tu.tree_structure((1, 2)).compose(tu.tree_structure({'a': 1}))"),
    ("node_data", "[t.node_data() for t in [tu.tree_structure(x) for x in "
                  "(1, None, (1,), [1], {'a': 1}, Box(1, 'm'), Params(1, 2))]]"),
    ("num_leaves_nodes", "[(t.num_leaves, t.num_nodes) for t in [tu.tree_structure(x) for x in "
                         "(1, None, (), NESTED)]]"),
    ("flatten_nested", "tu.tree_flatten(NESTED)"),
    ("unflatten_dict_order", "list(tu.tree_map(first, {'b': 1, 'a': 2}))"),
    ("map_defaultdict",
     "tu.tree_map(lambda x: x * 2, collections.defaultdict(list, {'b': 1, 'a': 2}))"),
    ("map_ordereddict",
     "tu.tree_map(lambda x: x * 2, collections.OrderedDict([('b', 1), ('a', 2)]))"),
    ("map_partial", "tu.tree_map(lambda x: x * 10, tu.Partial(max, 1, 2, key=3))"),
    ("map_dataclass", "tu.tree_map(lambda x: x + 1, Params(1, 2, 'x'))"),
    ("transpose",
     "tu.tree_transpose(tu.tree_structure([0, 0]), tu.tree_structure((0, 0)), [(1, 2), (3, 4)])"),
    ("broadcast", "tu.tree_broadcast((1, 2), ((3, 4), {'a': 5, 'b': 6}))"),
    ("flatten_one_level", "tu.flatten_one_level({'b': 1, 'a': 2})"),
    # keys and key paths
    ("key_reprs", "[tu.SequenceKey(0), tu.DictKey('a'), tu.DictKey(1), tu.GetAttrKey('x'), "
                  "tu.FlattenedIndexKey(3)]"),
    ("key_strs", "[str(k) for k in [tu.SequenceKey(0), tu.DictKey('a'), tu.DictKey((1, 'b')), "
                 "tu.GetAttrKey('x'), tu.FlattenedIndexKey(3)]]"),
    ("flatten_with_path", "tu.tree_flatten_with_path(NESTED)"),
    ("keystr_nested", "paths(NESTED)"),
    ("keystr_simple", "simple_paths(NESTED)"),
    ("keystr_custom_keys", "paths(Pair(1, [2, 3]))"),
    ("keystr_defaultdict", "paths(collections.defaultdict(int, {'z': 1, 'y': (2,)}))"),
    ("keystr_partial", "paths(tu.Partial(max, 1, key=2))"),
    ("keystr_is_leaf_path",
     "paths([1, (2, 3)], is_leaf=lambda p, x: len(p) == 1, is_leaf_takes_path=True)"),
    ("keystr_plain_entries", "tu.keystr((tu.DictKey('a'), 3, 'x'))"),
    ("map_with_path",
     "tu.tree_map_with_path(lambda p, x: tu.keystr(p), {'a': [1, (2,)], 'b': Params(3, 4)})"),
    # flatten_up_to errors
    ("err_up_to_tuple_arity", "tu.tree_structure((1, 2)).flatten_up_to((1, 2, 3))"),
    ("err_up_to_list_arity", "tu.tree_structure([1, 2]).flatten_up_to([1])"),
    ("err_up_to_expected_list", "tu.tree_structure([1, 2]).flatten_up_to((1, 2))"),
    ("err_up_to_expected_tuple", "tu.tree_structure(((1, 2),)).flatten_up_to((1,))"),
    ("err_up_to_dict_keys", "tu.tree_structure({'a': 1}).flatten_up_to({'b': 2})"),
    ("err_up_to_expected_dict", "tu.tree_structure({'a': 1}).flatten_up_to([1])"),
    ("err_up_to_none", "tu.tree_structure((None,)).flatten_up_to((1,))"),
    ("err_up_to_namedtuple", "tu.tree_structure(Point(1, 2)).flatten_up_to((1, 2))"),
    ("err_up_to_namedtuple_type", "tu.tree_structure(Point(1, 2)).flatten_up_to(Point2(1, 2))"),
    ("err_up_to_custom_type", "tu.tree_structure(Box(1, 'x')).flatten_up_to(3)"),
    ("err_up_to_custom_data", "tu.tree_structure(Box(1, 'x')).flatten_up_to(Box(1, 'y'))"),
    ("err_up_to_custom_arity",
     "tu.tree_structure(Node([1], 'n')).flatten_up_to(Node([1, 2], 'n'))"),
    ("err_up_to_dataclass_type", "tu.tree_structure(Params(1, 2)).flatten_up_to(Box(1, 2))"),
    ("err_up_to_dataclass_data",
     "tu.tree_structure(Params(1, 2)).flatten_up_to(Params(1, 2, 'conv'))"),
    ("up_to_prefix", "tu.tree_structure((1, 2)).flatten_up_to(((1, 2), [3]))"),
    # tree_map errors
    ("err_map_tuple_length", "tu.tree_map(first, (1, 2), (1, 2, 3))"),
    ("err_map_types", "tu.tree_map(first, (1, 2), [1, 2])"),
    ("err_map_dict_keys", "tu.tree_map(first, {'a': 1}, {'b': 1})"),
    ("err_map_dict_count", "tu.tree_map(first, {'a': 1}, {'a': 1, 'b': 1})"),
    ("err_map_custom_meta", "tu.tree_map(first, Box(1, 'x'), Box(1, 'y'))"),
    ("err_map_custom_type", "tu.tree_map(first, Box(1, 'x'), 1)"),
    ("err_map_none", "tu.tree_map(first, (None,), (1,))"),
    ("err_map_nested_path", "tu.tree_map(first, {'a': [1, (2, 3)]}, {'a': [1, (2, 3, 4)]})"),
    ("err_map_namedtuple", "tu.tree_map(first, Point(1, 2), (1, 2))"),
    ("err_map_dataclass_meta",
     "tu.tree_map(first, {'p': Params(1, 2)}, {'p': Params(1, 2, 'conv')})"),
    ("err_map_custom_count", "tu.tree_map(first, Node([1], 'n'), Node([1, 2], 'n'))"),
    ("err_map_with_path", "tu.tree_map_with_path(first, [1, 2], [1])"),
    ("err_broadcast", "tu.tree_broadcast((1, 2), ((3, 4), 5, 6))"),
    # other errors
    ("err_unflatten_few", "tu.tree_unflatten(tu.tree_structure((1, 2)), [1])"),
    ("err_unflatten_many", "tu.tree_unflatten(tu.tree_structure((1, 2)), [1, 2, 3])"),
    ("err_register_twice", "tu.register_pytree_node(Box, lambda b: ((), None), lambda a, c: None)"),
    ("err_register_builtin",
     "tu.register_pytree_node(tuple, lambda b: ((), None), lambda a, c: None)"),
    ("err_is_leaf_non_bool", "tu.tree_leaves((1, 2), is_leaf=lambda x: 1)"),
    ("is_leaf_none_result", "tu.tree_leaves((1, 2), is_leaf=lambda x: None)"),
    ("err_dict_unsortable", "tu.tree_structure({1: 1, 'a': 2})"),
    ("err_reduce_empty", "tu.tree_reduce(lambda a, b: a + b, ())"),
    ("err_transpose",
     "tu.tree_transpose(tu.tree_structure([0, 0]), tu.tree_structure((0, 0, 0)), [(1, 2), (3, "
     "4)])"),
    ("err_flatten_one_level_leaf", "tu.flatten_one_level(1)"),
    ("err_flatten_bad_custom", "tu.tree_leaves([Bad()])"),
    ("err_dataclass_missing", "tu.register_dataclass(dataclasses.make_dataclass('DC', ['x', 'y']), "
                              "data_fields=['x'], meta_fields=[])"),
    ("err_dataclass_one_given",
     "tu.register_dataclass(dataclasses.make_dataclass('DC', ['x']), data_fields=['x'])"),
    ("err_dataclass_not_dataclass", "tu.register_dataclass(int)"),
]


def record(tu, cases):
  namespace = {"__name__": "cases", "tu": tu}
  exec(PRELUDE, namespace)
  out = {}
  for case_id, expr in cases:
    try:
      out[case_id] = {"expr": expr, "repr": repr(eval(expr, namespace))}
    except Exception as e:  # the class and text are the golden
      out[case_id] = {"expr": expr, "error": type(e).__name__, "message": str(e)}
  return out


def main():
  import jax
  import jax.tree_util
  golden = {"jax_version": jax.__version__, "prelude": PRELUDE,
            "cases": record(jax.tree_util, CASES)}
  with open(OUT, "w") as f:
    json.dump(golden, f, indent=1, sort_keys=False)
    f.write("\n")
  print(f"wrote {len(CASES)} cases to {OUT}")


if __name__ == "__main__":
  main()
