"""Pytrees in pure Python: the node registry, `PyTreeDef`, flatten/unflatten, key paths.

Mirrors `jax.tree_util` (whose core is C++ in jaxlib), reprs and error texts
included. A treedef is a nested node tuple ``(kind, aux, children)``, or `_LEAF`:

* ``kind`` is ``tuple``, ``list``, ``dict`` (``aux``: sorted keys) or ``NoneType``;
* `_NAMEDTUPLE`, with the namedtuple class as ``aux``;
* a custom type's `_Registration`, with its auxiliary data wrapped in `_Aux`.

Nested tuples give C-speed ``==`` and ``hash``; `PyTreeDef` caches the hash
because jit's cache keys on it. `tree_flatten` is on jit's hot path, so its
inner loop dispatches on one dict lookup of ``type(x)`` (see `_flatten`).

The flattening functions come in two views of one registry (`_TreeFunctions`):
this module's (xjax's transformations) and `public` (what ``xjax.tree_util``
exports), which differ only in that typed PRNG key arrays are leaves in the latter.
"""
from __future__ import annotations

import collections
import dataclasses
import difflib
import enum
import functools
import json
import operator
import textwrap
from typing import Any, Callable, Iterable, TypeVar

NoneType = type(None)


class _Sentinel(enum.Enum):
  LEAF = "*"            # the node of a leaf, and the kind of leaf types
  NAMEDTUPLE = "namedtuple"
  NO_INITIALIZER = "no initializer"
  __hash__ = object.__hash__  # C-level, for fast treedef hashing


_LEAF, _NAMEDTUPLE, _NO_INITIALIZER = _Sentinel
_NONE_NODE = (NoneType, None, ())
_EMPTY_DICT_NODE = (dict, (), ())


# ----------------------------------------------------------------------------- key paths

class _KeyEntry:
  """Base of the key classes: immutable, compared and hashed by class and value."""
  __slots__ = ("_v",)

  def __init__(self, *args, **kwargs):
    # One value, positional or by the field's name, as JAX's keys take it: SequenceKey(idx=0).
    name = self.__match_args__[0]
    if len(args) + len(kwargs) != 1 or (kwargs and name not in kwargs):
      raise TypeError(f"{type(self).__name__}() takes one argument, {name!r}")
    self._v = self._check(args[0] if args else kwargs[name])

  _check = staticmethod(lambda value: value)

  def __eq__(self, other):
    return type(other) is type(self) and self._v == other._v

  def __hash__(self):
    return hash((type(self).__name__, self._v))

  def __reduce__(self):
    return type(self), (self._v,)

  def __repr__(self):
    return f"{type(self).__name__}({self.__match_args__[0]}={self._v!r})"


class SequenceKey(_KeyEntry):
  """The key of a tuple or list element; prints as ``[0]``."""
  __slots__ = ()
  __match_args__ = ("idx",)
  idx = property(lambda self: self._v)
  _check = staticmethod(operator.index)
  __str__ = lambda self: f"[{self._v}]"


class DictKey(_KeyEntry):
  """The key of a dict entry; prints as ``['a']``."""
  __slots__ = ()
  __match_args__ = ("key",)
  key = property(lambda self: self._v)
  __str__ = lambda self: f"[{self._v!r}]"


class GetAttrKey(_KeyEntry):
  """The key of an attribute (namedtuple or dataclass field); prints as ``.name``."""
  __slots__ = ()
  __match_args__ = ("name",)
  name = property(lambda self: self._v)
  __str__ = lambda self: f".{self._v}"
  __repr__ = lambda self: f"GetAttrKey(name='{self._v}')"

  @staticmethod
  def _check(name):
    if not isinstance(name, str):
      raise TypeError(f"GetAttrKey: expected a str, got {type(name).__name__}")
    return name


class FlattenedIndexKey(_KeyEntry):
  """The key of a child of a custom node registered without keys."""
  __slots__ = ()
  __match_args__ = ("key",)
  key = property(lambda self: self._v)
  _check = staticmethod(operator.index)
  __str__ = lambda self: f"[<flat index {self._v}>]"


def keystr(keys: tuple, *, simple: bool = False, separator: str = "") -> str:
  """Joins the string forms of the keys of a key path. Mirrors `jax.tree_util.keystr`.

  >>> keystr((DictKey('a'), SequenceKey(0)))
  "['a'][0]"
  >>> keystr((DictKey('a'), SequenceKey(0)), simple=True, separator='/')
  'a/0'
  """
  return separator.join(map(_simple_keystr if simple else str, keys))


def _simple_keystr(key):
  return str(key._v) if isinstance(key, _KeyEntry) else str(key)


# ----------------------------------------------------------------------------- the registry

class _Registration:
  """How to flatten and rebuild one custom node type."""
  __slots__ = ("type", "flatten", "unflatten", "flatten_with_keys", "is_dataclass")

  def __init__(self, nodetype, flatten, unflatten, flatten_with_keys, is_dataclass=False):
    self.type, self.flatten, self.unflatten = nodetype, flatten, unflatten
    self.flatten_with_keys, self.is_dataclass = flatten_with_keys, is_dataclass

  def __reduce__(self):
    return _registration_of, (self.type,)

  def children(self, x):
    out = self.flatten(x)
    if not isinstance(out, tuple) or len(out) != 2:
      raise ValueError("The to_iterable function for a custom PyTree node should return "
                       f"a (children, aux_data) tuple, got {out!r}")
    if type(out[0]) is not list and type(out[0]) is not tuple and \
        not hasattr(out[0], "__iter__"):
      raise ValueError("The to_iterable function for a custom PyTree node should return a "
                       f"(children, aux_data) tuple where 'children' is iterable, got {out!r}")
    return out

  def children_with_keys(self, x):
    if self.flatten_with_keys is None:
      children, aux = self.children(x)
      return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], aux
    out = self.flatten_with_keys(x)
    if not isinstance(out, tuple) or len(out) != 2:
      raise ValueError("The to_iterable_with_keys function for a custom PyTree node should "
                       f"return a (key_leaf_pairs, aux_data) tuple, got {out!r}")
    return out


class _Aux:
  """The auxiliary data of a custom node in a treedef: compared with ``==`` as JAX does.

  Hashed by value when hashable, else by type, so unhashable metadata still
  works (JAX leaves metadata out of the hash altogether).
  """
  __slots__ = ("data",)

  def __init__(self, data):
    self.data = data

  def __eq__(self, other):
    try:
      return bool(self.data == other.data)
    except Exception as e:
      raise ValueError(
          "Exception raised while checking equality of metadata fields of pytree. Make sure "
          "that metadata fields are hashable and have simple equality semantics. (Note: "
          "arrays cannot be passed as metadata fields!)") from e

  def __hash__(self):
    try:
      return hash(self.data)
    except TypeError:
      return hash(type(self.data))


_registry: dict[type, _Registration] = {}
# type -> kind for every type met so far: leaf and namedtuple types are cached on first sight.
# Two tables: `_kinds`, xjax's own view, where every registered type is a node, and
# `_public_kinds`, the view of the functions `xjax.tree_util` exports, where the types given
# to `register_public_leaf` (typed PRNG key arrays) are leaves, as they are in JAX.
_kinds: dict[type, Any] = {tuple: tuple, list: list, dict: dict, NoneType: NoneType}
_public_kinds: dict[type, Any] = dict(_kinds)


def _registration_of(nodetype):
  return _registry[nodetype]


def _classify(t):
  kind = _NAMEDTUPLE if issubclass(t, tuple) and hasattr(t, "_fields") else _LEAF
  _kinds[t] = _public_kinds[t] = kind
  return kind


def _kind_of(x, kinds=_kinds):
  try:
    return kinds[type(x)]
  except KeyError:
    return _classify(type(x))


def _register(registration):
  nodetype = registration.type
  if nodetype in _registry or nodetype in (tuple, list, dict, NoneType):
    what = "dataclass " if registration.is_dataclass else ""
    raise ValueError(f"Duplicate custom {what}PyTreeDef type registration for {nodetype!r}.")
  _registry[nodetype] = _kinds[nodetype] = _public_kinds[nodetype] = registration


def register_public_leaf(nodetype) -> None:
  """Makes the registered node type `nodetype` a leaf for `xjax.tree_util`'s functions.

  xjax's transformations keep flattening it as a node (they see its children), while
  users and libraries see one leaf, as JAX shows them its typed PRNG key arrays.
  """
  _public_kinds[nodetype] = _LEAF


def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
  """Makes ``nodetype`` a pytree node type. Mirrors `jax.tree_util.register_pytree_node`.

  Args:
    nodetype: the class.
    flatten_func: ``x -> (children, aux_data)``; aux_data is static and compared with ``==``.
    unflatten_func: ``(aux_data, children) -> x``.
    flatten_with_keys_func: optional ``x -> (((key, child), ...), aux_data)``.

  Raises:
    ValueError: if ``nodetype`` is already a node type.
  """
  _register(_Registration(nodetype, flatten_func, unflatten_func, flatten_with_keys_func))


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
  """`register_pytree_node` from a flatten function that gives ``(key, child)`` pairs."""
  if flatten_func is None:
    def flatten_func(x):
      key_children, aux = flatten_with_keys(x)
      return [c for _, c in key_children], aux
  register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls):
  """Class decorator: registers a class with ``tree_flatten`` and classmethod ``tree_unflatten``."""
  register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
  return cls


def register_pytree_with_keys_class(cls):
  """Class decorator: registers a class with ``tree_flatten_with_keys`` and ``tree_unflatten``."""
  flatten = operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
  register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"),
                            cls.tree_unflatten, flatten)
  return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
  """Registers a dataclass-like type: ``data_fields`` are children, ``meta_fields`` static.

  Mirrors `jax.tree_util.register_dataclass`. On a dataclass the fields may be
  left out: they are data unless made with `static_field`. Rebuilds with
  ``nodetype(**fields)``. Returns ``nodetype``, so it is also a decorator.

  >>> @register_dataclass
  ... @dataclasses.dataclass
  ... class Point:
  ...   x: float
  ...   y: float
  ...   name: str = static_field(default='p')
  >>> tree_structure(Point(1., 2.))
  PyTreeDef(CustomNode(Point[('p',)], [*, *]))
  """
  if data_fields is None or meta_fields is None:
    if (data_fields is None) != (meta_fields is None):
      raise TypeError("register_dataclass: data_fields and meta_fields must both be specified"
                      f" when either is specified. Got {data_fields=} {meta_fields=}.")
    if not dataclasses.is_dataclass(nodetype):
      raise TypeError("register_dataclass: data_fields and meta_fields are required when"
                      f" nodetype is not a dataclass. Got {nodetype=}.")
    fields = dataclasses.fields(nodetype)
    data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
  data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
  if dataclasses.is_dataclass(nodetype):
    init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
    given = {*data_fields, *meta_fields}
    if given != init_fields:
      msg = ("data_fields and meta_fields must include all dataclass fields with ``init=True``"
             " and only them.")
      if missing := init_fields - given:
        msg += f" Missing fields: {missing}. Add them to drop_fields to suppress this error."
      if unexpected := given - init_fields:
        msg += f" Unexpected fields: {unexpected}."
      raise ValueError(msg)
  if overlap := set(data_fields) & set(meta_fields):
    raise ValueError(
        f"data_fields and meta_fields must not overlap. Overlapping fields: {overlap}.")

  def flatten(x):
    return [getattr(x, f) for f in data_fields], tuple(getattr(x, f) for f in meta_fields)

  def flatten_with_keys(x):
    children, meta = flatten(x)
    return list(zip(map(GetAttrKey, data_fields), children)), meta

  def unflatten(meta, data):
    return nodetype(**dict(zip(meta_fields, meta)), **dict(zip(data_fields, data)))

  _register(_Registration(nodetype, flatten, unflatten, flatten_with_keys, is_dataclass=True))
  return nodetype


def static_field(**kwargs):
  """A `dataclasses.field` that `register_dataclass` makes static (JAX's ``jax.tree.static``)."""
  metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
  return dataclasses.field(metadata=metadata, **kwargs)


def register_static(cls):
  """Class decorator: instances become childless nodes, i.e. static (hashable) metadata."""
  register_pytree_with_keys(cls, lambda x: ((), x), lambda x, _: x)
  return cls


register_pytree_with_keys(
    collections.OrderedDict,
    lambda x: (tuple((DictKey(k), x[k]) for k in x), tuple(x)),
    lambda keys, values: collections.OrderedDict(zip(keys, values, strict=True)))


def _defaultdict_with_keys(d):
  keys = tuple(sorted(d))
  return tuple((DictKey(k), d[k]) for k in keys), (d.default_factory, keys)


register_pytree_with_keys(
    collections.defaultdict, _defaultdict_with_keys,
    lambda aux, values: collections.defaultdict(aux[0], zip(aux[1], values, strict=True)))


# ----------------------------------------------------------------------------- flattening

def _sorted_keys(d):
  try:
    return sorted(d)
  except Exception as e:
    raise ValueError("Comparator raised exception while sorting pytree dictionary keys.") from e


def _children(x, kind, with_keys=False):
  """One level of ``x``, a node of ``kind``: ``(children, aux)`` as `flatten_one_level` gives.

  With ``with_keys`` the children come as ``(key, child)`` pairs.
  """
  if type(kind) is _Registration:
    return kind.children_with_keys(x) if with_keys else kind.children(x)
  if kind is NoneType:
    return (), None
  if kind is dict:
    keys = tuple(_sorted_keys(x))
    children, aux, key_type = tuple(x[k] for k in keys), keys, DictKey
  elif kind is _NAMEDTUPLE:
    # tuple's own iteration and length: a subclass may redefine them (Rotation's __len__).
    children, aux, keys, key_type = list(tuple.__iter__(x)), type(x), x._fields, GetAttrKey
    if with_keys and (not isinstance(keys, tuple) or len(keys) != tuple.__len__(x)):
      raise ValueError("A namedtuple's _fields attribute should have the same size as the tuple.")
  else:
    children, aux, keys, key_type = x, None, range(len(x)), SequenceKey
  if with_keys:
    children = tuple(zip(map(key_type, keys), children))
  return children, aux


def _node(kind, aux, child_nodes):
  return (kind, _Aux(aux) if type(kind) is _Registration else aux, tuple(child_nodes))


@functools.lru_cache(maxsize=256)
def _leaf_nodes(n: int) -> tuple:
  """The children nodes of a container of `n` leaves."""
  return (_LEAF,) * n


def _flatten(x, leaves, kinds):
  """The hot path (no is_leaf, no key paths): appends the leaves of ``x``, returns its node."""
  try:
    kind = kinds[type(x)]
  except KeyError:
    kind = _classify(type(x))
  if kind is _LEAF:
    leaves.append(x)
    return _LEAF
  if kind is tuple or kind is list:
    nodes = []
    for c in x:
      if kinds.get(type(c)) is _LEAF:  # leaves inline: saves a call per leaf
        leaves.append(c)
        nodes.append(_LEAF)
      else:
        nodes.append(_flatten(c, leaves, kinds))
    return (kind, None, tuple(nodes))
  if kind is dict:
    if not x:
      return _EMPTY_DICT_NODE
    keys = _sorted_keys(x)
    values = list(map(x.__getitem__, keys))
    if all(kinds.get(t) is _LEAF for t in set(map(type, values))):
      leaves.extend(values)  # all leaves (the common dict of arrays): no loop in Python
      return (dict, tuple(keys), _leaf_nodes(len(values)))
    nodes = []
    for k in keys:
      c = x[k]
      child_kind = kinds.get(type(c))
      if child_kind is _LEAF:  # leaves and None inline: saves a call per child
        leaves.append(c)
        nodes.append(_LEAF)
      elif c is None:
        nodes.append(_NONE_NODE)
      else:
        nodes.append(_flatten(c, leaves, kinds))
    return (dict, tuple(keys), tuple(nodes))
  if kind is NoneType:
    return _NONE_NODE
  children, aux = _children(x, kind)  # namedtuples and custom nodes
  return _node(kind, aux, [_flatten(c, leaves, kinds) for c in children])


def _flatten_general(x, leaves, is_leaf, path, kinds):
  """Flattens with an ``is_leaf`` predicate and/or key paths (``path`` is None without)."""
  if is_leaf is not None:
    stop = is_leaf(x) if path is None else is_leaf(path, x)
    if stop is not None and stop is not False:
      if stop is not True:
        raise ValueError(
            f"is_leaf predicate returned a non-boolean value {stop!r}; expected a boolean")
      leaves.append(x if path is None else (path, x))
      return _LEAF
  kind = _kind_of(x, kinds)
  if kind is _LEAF:
    leaves.append(x if path is None else (path, x))
    return _LEAF
  if path is None:
    children, aux = _children(x, kind)
    return _node(kind, aux, [_flatten_general(c, leaves, is_leaf, None, kinds) for c in children])
  key_children, aux = _children(x, kind, with_keys=True)
  return _node(kind, aux, [_flatten_general(c, leaves, is_leaf, (*path, k), kinds)
                           for k, c in key_children])


def flatten_call_args(args: tuple, kwargs: dict, leaves: list):
  """Appends the leaves of ``(args, kwargs)`` to ``leaves``; returns its bare structure node.

  jit's hot path: the node is a nested tuple (C-speed hash and ``==``, usable
  as a cache key) that ``PyTreeDef(node, len(leaves))`` wraps.
  """
  args_node = _flatten(args, leaves, _kinds)
  kwargs_node = _flatten(kwargs, leaves, _kinds) if kwargs else _EMPTY_DICT_NODE
  return (tuple, None, (args_node, kwargs_node))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable) -> Any:
  """The pytree of structure ``treedef`` with ``leaves``. Mirrors `jax.tree_util.tree_unflatten`."""
  return treedef.unflatten(leaves)


# ----------------------------------------------------------------------------- PyTreeDef

class PyTreeDef:
  """The structure of a pytree: immutable, comparable and hashable (hash cached).

  Mirrors `jax.tree_util.PyTreeDef`; made by `tree_flatten` and friends.
  """
  __slots__ = ("_root", "_num_leaves", "_hash")

  def __init__(self, root, num_leaves: int):
    self._root, self._num_leaves, self._hash = root, num_leaves, None

  num_leaves = property(lambda self: self._num_leaves)
  num_nodes = property(lambda self: _count(self._root, 1))

  def __eq__(self, other):
    if not isinstance(other, PyTreeDef):
      return NotImplemented
    return self._num_leaves == other._num_leaves and self._root == other._root

  def __hash__(self):
    if self._hash is None:
      self._hash = hash(self._root)
    return self._hash

  def __reduce__(self):
    return PyTreeDef, (self._root, self._num_leaves)

  def __repr__(self):
    return f"PyTreeDef({_node_repr(self._root)})"

  def unflatten(self, leaves: Iterable) -> Any:
    """Builds a pytree of this structure from ``leaves``."""
    if type(leaves) is not list:
      leaves = list(leaves)
    n = self._num_leaves
    if len(leaves) != n:
      if len(leaves) < n:
        raise ValueError(f"Too few leaves for PyTreeDef; expected {n}, got {len(leaves)}")
      raise ValueError(f"Too many leaves for PyTreeDef; expected {n}.")
    if self._root is _LEAF:
      return leaves[0]
    return _build(self._root, iter(leaves).__next__)

  def flatten_up_to(self, tree: Any) -> list:
    """The subtrees of ``tree`` at this treedef's leaves; above them ``tree`` must match."""
    out = []
    _flatten_up_to(self._root, tree, out)
    out.reverse()
    return out

  def children(self) -> list[PyTreeDef]:
    """The treedefs of the root's children."""
    if self._root is _LEAF:
      return []
    return [PyTreeDef(c, _count(c, 0)) for c in self._root[2]]

  def node_data(self):
    """``(type, metadata)`` of the root node, or None for a leaf."""
    if self._root is _LEAF:
      return None
    kind, aux, _ = self._root
    if kind is dict:
      return dict, list(aux)
    if kind is _NAMEDTUPLE:
      return aux, None
    if type(kind) is _Registration:
      return kind.type, aux.data
    return kind, None

  def compose(self, inner: PyTreeDef) -> PyTreeDef:
    """This structure with each leaf replaced by ``inner``."""
    def compose(node):
      return inner._root if node is _LEAF else (*node[:2], tuple(map(compose, node[2])))
    return PyTreeDef(compose(self._root), self._num_leaves * inner._num_leaves)

  def walk(self, f_node: Callable | None, f_leaf: Callable | None, leaves: Iterable) -> Any:
    """Folds the structure bottom-up over ``leaves``. Mirrors jaxlib's `PyTreeDef.walk`.

    Each leaf becomes ``f_leaf(leaf)`` (the leaf itself when `f_leaf` is None); each node,
    children first, becomes ``f_node(tuple_of_children_results, node_data)`` (the tuple
    when `f_node` is None), where node_data is a dict's sorted key list, a namedtuple's
    class, a custom node's auxiliary data, or None. Returns the root's result.

    Raises:
      ValueError: `leaves` has more or fewer items than the structure's leaves.
    """
    it = iter(leaves)

    def go(node):
      if node is _LEAF:
        try:
          x = next(it)
        except StopIteration:
          raise ValueError("Too few leaves for PyTreeDef") from None
        return x if f_leaf is None else f_leaf(x)
      kind, aux, children = node
      results = tuple(go(c) for c in children)
      data = (list(aux) if kind is dict else aux.data if type(kind) is _Registration
              else aux if kind is _NAMEDTUPLE else None)
      return results if f_node is None else f_node(results, data)
    out = go(self._root)
    if next(it, _LEAF) is not _LEAF:
      raise ValueError("Too many leaves for PyTreeDef")
    return out

  def serialize_using_proto(self) -> bytes:
    """The structure as bytes that `deserialize_using_proto` reads back.

    Mirrors jaxlib's method of that name for the structures it supports: tuples, lists,
    None and dicts with str or int keys (xjax's encoding, not jaxlib's protobuf).

    Raises:
      TypeError: the structure holds a namedtuple, a custom node or another dict key.
    """
    def enc(node):
      if node is _LEAF:
        return "*"
      kind, aux, children = node
      if kind is dict:
        for k in aux:
          if type(k) not in (str, int):
            raise TypeError(f"serialize_using_proto: unsupported dict key {k!r}")
        return {"dict": [[k, enc(c)] for k, c in zip(aux, children)]}
      if kind in (tuple, list, NoneType):
        return {kind.__name__: [enc(c) for c in children]}
      raise TypeError(f"serialize_using_proto: unsupported node type in {self!r}")
    return json.dumps(enc(self._root)).encode()

  @staticmethod
  def deserialize_using_proto(registry, data: bytes) -> PyTreeDef:
    """The `PyTreeDef` that `serialize_using_proto` wrote as ``data`` (``registry`` is
    accepted for JAX's signature; xjax has one registry)."""
    del registry
    kinds = {"tuple": tuple, "list": list, "NoneType": NoneType}

    def dec(x):
      if x == "*":
        return _LEAF
      (name, items), = x.items()
      if name == "dict":
        return (dict, tuple(k for k, _ in items), tuple(dec(c) for _, c in items))
      return (kinds[name], None, tuple(map(dec, items)))
    root = dec(json.loads(bytes(data).decode()))
    return PyTreeDef(root, _count(root, 0))


def _count(node, per_node):
  """The number of leaves (``per_node=0``) or nodes (``per_node=1``) under ``node``."""
  return 1 if node is _LEAF else per_node + sum(_count(c, per_node) for c in node[2])


def _build(node, next_leaf):
  kind, aux, children = node
  values = []
  for c in children:
    values.append(next_leaf() if c is _LEAF else _build(c, next_leaf))
  if kind is tuple:
    return tuple(values)
  if kind is list:
    return values
  if kind is dict:
    return dict(zip(aux, values))
  if kind is NoneType:
    return None
  if kind is _NAMEDTUPLE:
    return aux(*values)
  return kind.unflatten(aux.data, tuple(values))


def _flatten_up_to(node, x, out):
  """Appends the subtrees of ``x`` at ``node``'s leaves to ``out``, right to left as JAX goes."""
  if node is _LEAF:
    out.append(x)
    return
  kind, aux, children = node
  if kind is tuple or kind is list:
    name = kind.__name__
    if type(x) is not kind:
      raise ValueError(f"Expected {name}, got {x!r}.")
    if len(x) != len(children):
      raise ValueError(
          f"{name.capitalize()} arity mismatch: {len(x)} != {len(children)}; {name}: {x!r}.")
    items = x
  elif kind is dict:
    if type(x) is not dict:
      raise ValueError(f"Expected dict, got {x!r}.")
    keys = _sorted_keys(x)
    if len(keys) != len(aux) or any(a != b for a, b in zip(keys, aux)):
      raise ValueError(f"Dict key mismatch; expected keys: {list(aux)!r}; present keys: {keys!r}.")
    items = [x[k] for k in keys]
  elif kind is NoneType:
    if x is not None:
      raise ValueError(
          f"Expected None, got {x!r}.\n\nIn previous releases of JAX, flatten-up-to used to "
          "consider None to be a tree-prefix of non-None values. To obtain the previous "
          "behavior, you can usually write:\n  jax.tree.map(lambda x, y: None if x is None "
          "else f(x, y), a, b, is_leaf=lambda x: x is None)")
    return
  elif kind is _NAMEDTUPLE:
    if not isinstance(x, tuple) or not hasattr(x, "_fields"):
      raise ValueError(f"Expected named tuple, got {x!r}.")
    if len(x) != len(children):
      raise ValueError(f"Named tuple arity mismatch: {len(x)} != {len(children)}; tuple: {x!r}.")
    if type(x) is not aux:
      raise ValueError(f"Named tuple type mismatch: expected type: {aux!r}, tuple: {x!r}.")
    items = x
  else:
    what = "dataclass " if kind.is_dataclass else ""
    if _kinds.get(type(x)) is not kind:
      raise ValueError(
          f"Custom {what}node type mismatch: expected type: {kind.type!r}, value: {x!r}.")
    items, data = kind.children(x)
    if aux.data != data:
      raise ValueError(f"Mismatch custom {what}node data: {aux.data!r} != {data!r}; value: {x!r}.")
    items = list(items)
    if len(items) != len(children):
      raise ValueError(
          f"Custom type arity mismatch: {len(items)} != {len(children)}; value: {x!r}.")
  for child, item in zip(reversed(children), reversed(items)):
    _flatten_up_to(child, item, out)


def _node_repr(node):
  if node is _LEAF:
    return "*"
  kind, aux, children = node
  inner = ", ".join(map(_node_repr, children))
  if kind is tuple:
    return f"({inner},)" if len(children) == 1 else f"({inner})"
  if kind is list:
    return f"[{inner}]"
  if kind is dict:
    return "{" + ", ".join(f"{k!r}: {_node_repr(c)}" for k, c in zip(aux, children)) + "}"
  if kind is NoneType:
    return "None"
  if kind is _NAMEDTUPLE:
    return f"CustomNode(namedtuple[{aux.__name__}], [{inner}])"
  return f"CustomNode({kind.type.__name__}[{aux.data!s}], [{inner}])"


def broadcast_flattened_prefix_with_treedef(prefix_leaves: list, prefix_treedef: PyTreeDef,
                                            full_treedef: PyTreeDef) -> list:
  """The leaves of a tree of structure `full_treedef`, each leaf of the prefix tree (given
  flat) repeated over its subtree. Mirrors JAX's private function of that name.

  Raises:
    ValueError: `prefix_treedef` is not a prefix of `full_treedef`.
  """
  out, leaves = [], iter(prefix_leaves)

  def go(prefix, full):
    if prefix is _LEAF:
      out.extend([next(leaves)] * _count(full, 0))
    elif full is _LEAF or prefix[0] is not full[0] or len(prefix[2]) != len(full[2]) or \
        prefix[1] != full[1]:
      raise ValueError("`prefix_treedef` is not a prefix of `full_treedef`")
    else:
      for p, f in zip(prefix[2], full[2]):
        go(p, f)
  go(prefix_treedef._root, full_treedef._root)
  return out


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
  """The treedef of a tuple of trees with ``treedefs``. Mirrors `jax.tree_util.treedef_tuple`."""
  treedefs = list(treedefs)
  root = (tuple, None, tuple(t._root for t in treedefs))
  return PyTreeDef(root, sum(t._num_leaves for t in treedefs))


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
  """The treedefs of the root's children. Mirrors `jax.tree_util.treedef_children`."""
  return treedef.children()


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
  """Whether ``treedef`` is one node: a leaf, None or an empty container."""
  return treedef.num_nodes == 1


def treedef_is_strict_leaf(treedef: PyTreeDef) -> bool:
  """Whether ``treedef`` is exactly one leaf."""
  return treedef._root is _LEAF


# ----------------------------------------------------------------------------- tree functions

class _TreeFunctions:
  """The pytree functions of JAX's API over one table of node kinds.

  Two instances share the registry: `_internal` (whose methods are this module's
  functions) flattens every registered type as a node, and `public` (whose methods
  `xjax.tree_util` and `xjax.tree` export) sees the types marked with
  `register_public_leaf` as leaves. Typed PRNG key arrays are such types: leaves to users,
  as in JAX, while xjax's transformations reach their key data as a child.
  """

  def __init__(self, kinds: dict):
    self._kinds = kinds

  def is_tree_node(self, typ: type) -> bool:
    """Whether ``typ`` is a node type: built in, registered or a namedtuple."""
    return (self._kinds.get(typ) or _classify(typ)) is not _LEAF

  def tree_flatten(self, tree: Any, is_leaf: Callable[[Any], bool] | None = None):
    """Flattens a pytree into its leaves and its structure.

    Mirrors `jax.tree_util.tree_flatten` (`jax.tree.flatten`).

    Args:
      tree: the pytree.
      is_leaf: optional predicate; where it returns True, the subtree is one leaf.

    Returns:
      ``(leaves, treedef)``: the leaves left to right (dict entries in sorted
      key order) and a `PyTreeDef`.

    >>> tree_flatten((1, {'b': 2, 'a': [3, None]}))
    ([1, 3, 2], PyTreeDef((*, {'a': [*, None], 'b': *})))
    """
    leaves = []
    if is_leaf is None:
      root = _flatten(tree, leaves, self._kinds)
    else:
      root = _flatten_general(tree, leaves, is_leaf, None, self._kinds)
    return leaves, PyTreeDef(root, len(leaves))

  def tree_flatten_with_path(self, tree, is_leaf=None, is_leaf_takes_path=False):
    """Flattens a pytree into ``(key_path, leaf)`` pairs and its treedef.

    Mirrors `jax.tree_util.tree_flatten_with_path`. ``is_leaf`` is called as
    ``is_leaf(key_path, x)`` if ``is_leaf_takes_path``, else ``is_leaf(x)``.

    >>> tree_flatten_with_path({'a': (1, 2)})[0]
    [((DictKey(key='a'), SequenceKey(idx=0)), 1), ((DictKey(key='a'), SequenceKey(idx=1)), 2)]
    """
    predicate = is_leaf
    if is_leaf is not None and not is_leaf_takes_path:
      predicate = lambda _, x: is_leaf(x)
    leaves = []
    root = _flatten_general(tree, leaves, predicate, (), self._kinds)
    return leaves, PyTreeDef(root, len(leaves))

  def tree_leaves(self, tree, is_leaf=None) -> list:
    """The leaves of a pytree, left to right. Mirrors `jax.tree_util.tree_leaves`."""
    return self.tree_flatten(tree, is_leaf)[0]

  def tree_leaves_with_path(self, tree, is_leaf=None, is_leaf_takes_path=False) -> list:
    """The ``(key_path, leaf)`` pairs of a pytree. Mirrors `jax.tree_util.tree_leaves_with_path`."""
    return self.tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]

  def tree_structure(self, tree, is_leaf=None) -> PyTreeDef:
    """The `PyTreeDef` of a pytree. Mirrors `jax.tree_util.tree_structure`."""
    return self.tree_flatten(tree, is_leaf)[1]

  def all_leaves(self, iterable: Iterable, is_leaf=None) -> bool:
    """Whether every element of ``iterable`` is a leaf. Mirrors `jax.tree_util.all_leaves`."""
    if is_leaf is None:
      return all(_kind_of(x, self._kinds) is _LEAF for x in iterable)
    items = list(iterable)
    leaves = self.tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(items, leaves))

  def flatten_one_level(self, tree):
    """``(children, metadata)`` of a node. Mirrors `jax.tree_util.flatten_one_level`.

    Raises:
      ValueError: if ``tree`` is a leaf.
    """
    return self._one_level(tree, with_keys=False)

  def flatten_one_level_with_keys(self, tree):
    """`flatten_one_level` with ``(key, child)`` pairs as the children."""
    return self._one_level(tree, with_keys=True)

  def _one_level(self, tree, with_keys):
    kind = _kind_of(tree, self._kinds)
    if kind is _LEAF:
      raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return _children(tree, kind, with_keys)

  def tree_map(self, f: Callable, tree: Any, *rest: Any, is_leaf=None) -> Any:
    """Applies ``f`` to the leaves of ``tree`` and the matching subtrees of ``rest``.

    Mirrors `jax.tree_util.tree_map` (`jax.tree.map`).

    Args:
      f: called as ``f(leaf, *subtrees of rest at that leaf)``.
      tree: the pytree that fixes the structure of the result.
      *rest: pytrees whose structure ``tree``'s is a prefix of.
      is_leaf: optional predicate marking extra leaves of ``tree``.

    Raises:
      ValueError: naming the key path where a tree of ``rest`` does not match.

    >>> tree_map(lambda x, y: x + y, {'a': 1, 'b': (2, 3)}, {'a': 10, 'b': (20, 30)})
    {'a': 11, 'b': (22, 33)}
    """
    leaves, treedef = self.tree_flatten(tree, is_leaf)
    if not rest:
      return treedef.unflatten([f(x) for x in leaves])
    all_leaves = [leaves] + [self._flatten_rest(treedef, tree, r, is_leaf, "tree_map tree")
                             for r in rest]
    return treedef.unflatten([f(*xs) for xs in zip(*all_leaves)])

  def tree_map_with_path(self, f: Callable, tree: Any, *rest: Any, is_leaf=None,
                         is_leaf_takes_path=False) -> Any:
    """`tree_map` with each leaf's key path as ``f``'s first argument."""
    path_leaves, treedef = self.tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    all_leaves = [[p for p, _ in path_leaves], [x for _, x in path_leaves]]
    all_leaves += [self._flatten_rest(treedef, tree, r, is_leaf, "tree_map_with_path tree")
                   for r in rest]
    return treedef.unflatten([f(*xs) for xs in zip(*all_leaves)])

  def _flatten_rest(self, treedef, tree, other, is_leaf, name):
    try:
      return treedef.flatten_up_to(other)
    except Exception as e:
      error = next(self._prefix_errors((), tree, other, is_leaf), None)
      raise (e if error is None else error(name)) from None

  def tree_reduce(self, function: Callable, tree: Any, initializer: Any = _NO_INITIALIZER,
                  is_leaf=None) -> Any:
    """Folds ``function`` over the leaves, left to right. Mirrors `jax.tree_util.tree_reduce`."""
    leaves = self.tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIALIZER:
      return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)

  def tree_reduce_associative(self, operation: Callable, tree: Any, *,
                              identity: Any = _NO_INITIALIZER, is_leaf=None) -> Any:
    """Reduces the leaves with an associative ``operation``, as a balanced tree."""
    def reduce(xs):
      if len(xs) == 1:
        return xs[0]
      return operation(reduce(xs[:len(xs) // 2]), reduce(xs[len(xs) // 2:]))
    leaves = self.tree_leaves(tree, is_leaf)
    if leaves:
      return reduce(leaves)
    if identity is _NO_INITIALIZER:
      raise TypeError("Must specify identity for parallel reduction of empty sequence.")
    return identity

  def tree_all(self, tree: Any, *, is_leaf=None) -> bool:
    """Whether every leaf is truthy. Mirrors `jax.tree_util.tree_all`."""
    return all(self.tree_leaves(tree, is_leaf))

  def tree_transpose(self, outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                     pytree_to_transpose: Any) -> Any:
    """Turns an outer tree of inner trees into an inner tree of outer trees.

    Mirrors `jax.tree_util.tree_transpose`; an ``inner_treedef`` of None is
    taken from the first inner tree.

    >>> tree_transpose(tree_structure([0, 0]), tree_structure((0, 0)), [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
    """
    flat, treedef = self.tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
      inner_treedef = self.tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner_size, outer_size = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
      raise TypeError(f"Mismatch\n{treedef}\n != \n{outer_treedef.compose(inner_treedef)}")
    rows = [flat[i * inner_size:(i + 1) * inner_size] for i in range(outer_size)]
    return inner_treedef.unflatten([outer_treedef.unflatten(col) for col in zip(*rows)])

  def tree_broadcast(self, prefix_tree: Any, full_tree: Any, is_leaf=None) -> Any:
    """Repeats each leaf of ``prefix_tree`` over its subtree in ``full_tree``."""
    leaves = self.broadcast_prefix(prefix_tree, full_tree, is_leaf)
    return self.tree_structure(full_tree).unflatten(leaves)

  def broadcast_prefix(self, prefix_tree: Any, full_tree: Any, is_leaf=None) -> list:
    """The leaves of `tree_broadcast`'s result."""
    leaves, treedef = self.tree_flatten(prefix_tree, is_leaf)
    subtrees = self._flatten_rest(treedef, prefix_tree, full_tree, is_leaf,
                                  "broadcast_prefix prefix_tree")
    result = []
    for x, subtree in zip(leaves, subtrees):
      result.extend([x] * self.tree_structure(subtree).num_leaves)
    return result

  def prefix_errors(self, prefix_tree: Any, full_tree: Any, is_leaf=None) -> list:
    """Why `prefix_tree` is not a tree prefix of `full_tree`: a list of functions, each
    taking a name for the tree and giving a ValueError that names the key path where the
    structures differ; empty when it is a prefix. Mirrors JAX's private
    `tree_util.prefix_errors`."""
    return list(self._prefix_errors((), prefix_tree, full_tree, is_leaf))

  def _prefix_errors(self, path, prefix, full, is_leaf):
    if treedef_is_strict_leaf(self.tree_structure(prefix, is_leaf)):
      return  # a leaf is a prefix of anything
    at = lambda what, name: (f"pytree structure error: {what} at key path\n"
                             f"    {name}{keystr(path)}\n")
    if type(prefix) is not type(full):
      yield lambda name: ValueError(
          at("different types", name) +
          f"At that key path, the prefix pytree {name} has a subtree of type\n    {type(prefix)}\n"
          f"but at the same key path the full pytree has a subtree of different type\n"
          f"    {type(full)}.")
      return
    prefix_children, prefix_meta = self.flatten_one_level(prefix)
    full_children, full_meta = self.flatten_one_level(full)
    prefix_children, full_children = tuple(prefix_children), tuple(full_children)
    prefix_keys = tuple(k for k, _ in self.flatten_one_level_with_keys(prefix)[0])
    full_keys = tuple(k for k, _ in self.flatten_one_level_with_keys(full)[0])
    if isinstance(prefix, (list, tuple)):
      if len(prefix) != len(full):
        ty = type(prefix).__name__
        yield lambda name: ValueError(
            at(f"different lengths of {ty}", name) +
            f"At that key path, the prefix pytree {name} has a subtree of type {ty} of length "
            f"{len(prefix)}, but the full pytree has a subtree of the same type but of length "
            f"{len(full)}.")
        return
    elif len(prefix_children) != len(full_children):
      try:
        diff = set(prefix_keys).symmetric_difference(full_keys)
      except TypeError:
        diff = None
      names = lambda keys: " ".join(map(_simple_keystr, keys))
      yield lambda name: ValueError(
          at("different numbers of pytree children", name) +
          f"At that key path, the prefix pytree {name} has a subtree of type\n    {type(prefix)}\n"
          f"with {len(prefix_children)} child keys\n    {names(prefix_keys)}\n"
          f"but at the same key path the full pytree has a subtree of the same type but with "
          f"{len(full_children)} child keys\n    {names(full_keys)}\n" +
          ("" if diff is None
           else f"so the symmetric difference on key sets is\n    {names(diff)}"))
      return
    if prefix_meta != full_meta:
      prefix_str, full_str = str(prefix_meta), str(full_meta)
      lines = difflib.ndiff(prefix_str.splitlines(), full_str.splitlines())
      diff = textwrap.indent("\n".join(lines),
                             prefix="    ")
      yield lambda name: ValueError(
          at("different pytree metadata", name) +
          f"At that key path, the prefix pytree {name} has a subtree of type\n    {type(prefix)}\n"
          f"with metadata\n    {prefix_str}\n"
          f"but at the same key path the full pytree has a subtree of the same type but with "
          f"metadata\n    {full_str}\nso the diff in the metadata at these pytree nodes is\n{diff}")
      return
    for key, p, f in zip(prefix_keys, prefix_children, full_children):
      yield from self._prefix_errors((*path, key), p, f, is_leaf)


_internal = _TreeFunctions(_kinds)
public = _TreeFunctions(_public_kinds)
is_tree_node = _internal.is_tree_node
tree_flatten = _internal.tree_flatten
tree_flatten_with_path = _internal.tree_flatten_with_path
tree_leaves = _internal.tree_leaves
tree_leaves_with_path = _internal.tree_leaves_with_path
tree_structure = _internal.tree_structure
all_leaves = _internal.all_leaves
flatten_one_level = _internal.flatten_one_level
flatten_one_level_with_keys = _internal.flatten_one_level_with_keys
tree_map = _internal.tree_map
tree_map_with_path = _internal.tree_map_with_path
tree_reduce = _internal.tree_reduce
tree_reduce_associative = _internal.tree_reduce_associative
tree_all = _internal.tree_all
tree_transpose = _internal.tree_transpose
tree_broadcast = _internal.tree_broadcast
broadcast_prefix = _internal.broadcast_prefix
prefix_errors = _internal.prefix_errors


# ----------------------------------------------------------------------------- Partial

class _HashableCallableShim:
  """Holds a `functools.partial` given to `Partial`, so that its arguments stay static.

  (`functools.partial` would merge them into the new Partial's children.)
  """
  __slots__ = ("partial",)

  def __init__(self, partial):
    self.partial = partial

  def __call__(self, *args, **kwargs):
    return self.partial(*args, **kwargs)

  def __getattr__(self, name):  # func, args, keywords of the partial
    if name == "partial":
      raise AttributeError(name)
    return getattr(self.partial, name)

  def __eq__(self, other):
    return self.partial == (other.partial if isinstance(other, _HashableCallableShim) else other)

  def __hash__(self):
    return hash(self.partial)

  def __repr__(self):
    return f"_HashableCallableShim({self.partial!r})"


class Partial(functools.partial):
  """A `functools.partial` that is a pytree: ``args``, ``keywords`` are children, ``func`` static.

  Mirrors `jax.tree_util.Partial`: a partially applied function can pass
  through transformations as an argument or a result.

  >>> tree_map(lambda x: x * 10, Partial(max, 1, key=2))
  Partial(<built-in function max>, 10, key=20)
  """

  def __new__(cls, func, *args, **kwargs):
    if isinstance(func, functools.partial):
      func = _HashableCallableShim(func)
    return super().__new__(cls, func, *args, **kwargs)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]))


# ----------------------------------------------------------------------------- registry object

# The types of key paths (mirrors `jax.tree_util.KeyEntry` and `KeyPath`): a key path is a
# tuple of key entries (`SequenceKey`, `DictKey`, `GetAttrKey`, `FlattenedIndexKey`, or a
# node type's own keys).
KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyPath = tuple[KeyEntry, ...]


class PyTreeRegistry:
  """The registry of pytree node types as an object (mirrors jaxlib's `PyTreeRegistry`).

  xjax has one registry, this module's; `default_registry` is the view of it that
  `jax.tree_util.default_registry` is in JAX: its methods flatten with, and register
  into, the same table as the module's functions. `dispatch_registry` (JAX's registry for
  jit's argument flattening) is the view of xjax's transformations, where typed PRNG key
  arrays are nodes.
  """

  def __init__(self, functions: _TreeFunctions | None = None):
    self._functions = public if functions is None else functions

  def flatten(self, tree, leaf_predicate: Callable[[Any], bool] | None = None):
    """``(leaves, treedef)`` of `tree` (see `tree_flatten`)."""
    return self._functions.tree_flatten(tree, leaf_predicate)

  def flatten_with_path(self, tree, leaf_predicate: Callable[[Any, Any], bool] | None = None):
    """``([(key_path, leaf), ...], treedef)``; `leaf_predicate` takes ``(key_path, x)``."""
    return self._functions.tree_flatten_with_path(tree, leaf_predicate, is_leaf_takes_path=True)

  def flatten_one_level(self, tree):
    """``(children, metadata)`` of a node, None for a leaf."""
    functions = self._functions
    return None if _kind_of(tree, functions._kinds) is _LEAF else functions.flatten_one_level(tree)

  def flatten_one_level_with_keys(self, tree):
    """``(((key, child), ...), metadata)`` of a node, None for a leaf."""
    functions = self._functions
    return None if _kind_of(tree, functions._kinds) is _LEAF else \
        functions.flatten_one_level_with_keys(tree)

  def is_node(self, type: type) -> bool:  # noqa: A002 -- jaxlib's parameter name
    """Whether instances of `type` are pytree nodes.

    Raises:
      TypeError: `type` is not a class.
    """
    if not isinstance(type, _builtin_type):
      raise TypeError(f"is_node: type must be a class, got {type!r}")
    return self._functions.is_tree_node(type)

  def register_node(self, type, to_iterable, from_iterable,  # noqa: A002
                    to_iterable_with_keys=None) -> None:
    """Registers `type` as a node (see `register_pytree_node`)."""
    register_pytree_node(type, to_iterable, from_iterable, to_iterable_with_keys)

  def register_dataclass_node(self, type, data_fields, meta_fields, /) -> None:  # noqa: A002
    """Registers a dataclass-like `type` (see `register_dataclass`)."""
    register_dataclass(type, list(data_fields), list(meta_fields))

  def __repr__(self):
    return f"<xjax {'default' if self._functions is public else 'dispatch'} PyTreeRegistry>"


_builtin_type = type  # `type` is a parameter name above
default_registry = PyTreeRegistry()
dispatch_registry = PyTreeRegistry(_internal)
