"""`jax._src.util` under `xjax.install_as_jax()`: JAX's small list, tuple and function
utilities, which JAX's own tests and some libraries import (`safe_map`, `safe_zip`,
`unzip2`, `split_list`, `partition_list`, `merge_lists`, `tuple_update`, `curry`, ...).

xjax's own code, with the semantics of JAX 0.10.2's helpers of the same names.
"""
from __future__ import annotations

import functools
import math
import operator
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any


def safe_zip(*args) -> list[tuple]:
  """Like `zip`, but eager (a list) and checked: all arguments must have one length.

  Raises:
    TypeError: no argument is given.
    ValueError: the arguments' lengths differ.

  Mirrors `jax._src.util.safe_zip`.
  """
  if not args:
    raise TypeError("safe_zip requires at least 1 argument.")
  return list(zip(*args, strict=True))


def safe_map(f: Callable, *args) -> list:
  """Like `map`, but eager (a list) and checked: all sequences must have one length.

  Raises:
    AssertionError: the sequences' lengths differ (as JAX's assertion does).

  Mirrors `jax._src.util.safe_map`.
  """
  args = [list(a) for a in args]
  n = len(args[0])
  for a in args[1:]:
    assert len(a) == n, f"length mismatch: {[len(a) for a in args]}"
  return list(map(f, *args))


def foreach(f: Callable, *args) -> None:
  """`safe_map` for its side effects: calls `f` on each tuple of elements; returns None.

  Mirrors `jax._src.util.foreach`."""
  safe_map(f, *args)


def unzip2(xys: Iterable[tuple]) -> tuple[tuple, tuple]:
  """Splits an iterable of pairs into a tuple of firsts and a tuple of seconds.

  Mirrors `jax._src.util.unzip2`."""
  xs, ys = [], []
  for x, y in xys:
    xs.append(x)
    ys.append(y)
  return tuple(xs), tuple(ys)


def unzip3(xyzs: Iterable[tuple]) -> tuple[tuple, tuple, tuple]:
  """Splits an iterable of triples into three tuples. Mirrors `jax._src.util.unzip3`."""
  xs, ys, zs = [], [], []
  for x, y, z in xyzs:
    xs.append(x)
    ys.append(y)
    zs.append(z)
  return tuple(xs), tuple(ys), tuple(zs)


def subvals(lst: Sequence, replace: Iterable[tuple[int, Any]]) -> tuple:
  """`lst` as a tuple with the elements at the given indices replaced by the given values.

  Mirrors `jax._src.util.subvals`."""
  out = list(lst)
  for i, v in replace:
    out[i] = v
  return tuple(out)


def split_list(args: Sequence, ns: Sequence[int]) -> list[list]:
  """`args` cut into consecutive lists of the lengths `ns`, then the rest as a last list.

  Mirrors `jax._src.util.split_list`."""
  args = list(args)
  out = []
  for n in ns:
    out.append(args[:n])
    args = args[n:]
  out.append(args)
  return out


def split_list_checked(args: Sequence, ns: Sequence[int]) -> list[list]:
  """`args` cut into consecutive lists of the lengths `ns`, which must add up to its length.

  Mirrors `jax._src.util.split_list_checked`."""
  args = list(args)
  assert sum(ns) == len(args), (ns, len(args))
  out, start = [], 0
  for n in ns:
    out.append(args[start:start + n])
    start += n
  return out


def partition_list(bs: Sequence[bool], l: Sequence) -> tuple[list, list]:
  """The elements of `l` whose flag in `bs` is false, and those whose flag is true.

  Mirrors `jax._src.util.partition_list`."""
  assert len(bs) == len(l), (len(bs), len(l))
  lists: tuple[list, list] = ([], [])
  for b, x in zip(bs, l):
    lists[bool(b)].append(x)
  return lists


def merge_lists(bs: Sequence[bool], l0: Sequence, l1: Sequence) -> list:
  """The inverse of `partition_list`: takes from `l1` where `bs` is true, else from `l0`.

  Mirrors `jax._src.util.merge_lists`."""
  i0, i1 = iter(l0), iter(l1)
  out = [next(i1) if b else next(i0) for b in bs]
  sentinel = object()
  assert next(i0, sentinel) is sentinel and next(i1, sentinel) is sentinel
  return out


def concatenate(xs: Iterable[Sequence]) -> list:
  """The elements of the sequences `xs`, in order, as one list.

  Mirrors `jax._src.util.concatenate`."""
  return [x for seq in xs for x in seq]


flatten = concatenate


def unflatten(xs: Iterable, ns: Sequence[int]) -> list[list]:
  """The inverse of `flatten`: `xs` cut into lists of the lengths `ns`, exactly used up.

  Mirrors `jax._src.util.unflatten`."""
  it = iter(xs)
  out = [[next(it) for _ in range(n)] for n in ns]
  sentinel = object()
  assert next(it, sentinel) is sentinel
  return out


def curry(f: Callable) -> Callable:
  """`f` taking its arguments in stages: ``curry(f)(a)(b, c) == f(a, b, c)``.

  Mirrors `jax._src.util.curry`."""
  return wraps(f)(functools.partial(functools.partial, f))


def toposort(end_nodes: Iterable) -> list:
  """The nodes reachable from `end_nodes` through their `parents` attribute, each after all
  of its parents (a topological order). Mirrors `jax._src.util.toposort`.

  Raises:
    ValueError: the graph has a cycle."""
  end_nodes = list(end_nodes)
  if not end_nodes:
    return []
  # Count, for every reachable node, how many children point at it.
  child_counts: dict[int, int] = {}
  stack, seen, nodes = list(end_nodes), set(), {}
  while stack:
    node = stack.pop()
    if id(node) in seen:
      continue
    seen.add(id(node))
    nodes[id(node)] = node
    for parent in node.parents:
      child_counts[id(parent)] = child_counts.get(id(parent), 0) + 1
      stack.append(parent)
  order = []
  ready = [n for n in _unique(end_nodes) if child_counts.get(id(n), 0) == 0]
  while ready:
    node = ready.pop()
    order.append(node)
    for parent in node.parents:
      child_counts[id(parent)] -= 1
      if child_counts[id(parent)] == 0:
        ready.append(parent)
  if len(order) != len(nodes):
    raise ValueError("Cycle in the graph given to toposort.")
  return order[::-1]


def _unique(xs):
  seen = set()
  for x in xs:
    if id(x) not in seen:
      seen.add(id(x))
      yield x


# Caches made by `cache` and `weakref_lru_cache`, which `clear_all_caches` empties.
_caches: weakref.WeakSet = weakref.WeakSet()


def register_cache(cache: Any, for_what: str = "") -> None:
  """Registers an object with ``cache_clear()`` for `clear_all_caches`.

  Mirrors `jax._src.util.register_cache`."""
  del for_what
  _caches.add(cache)


def clear_all_caches() -> None:
  """Empties every cache made by `cache`, `memoize` and `weakref_lru_cache`.

  Mirrors `jax._src.util.clear_all_caches`."""
  for c in list(_caches):
    c.cache_clear()


def cache(max_size: int | None = 4096, trace_context_in_key: bool | Callable = True):
  """A least-recently-used cache decorator of `max_size` entries (None: unbounded).

  xjax keeps no trace context in the key (its caches of this kind hold no traced state);
  `trace_context_in_key` is accepted for JAX's signature. Mirrors `jax._src.util.cache`."""
  del trace_context_in_key

  def wrap(f):
    wrapper = functools.lru_cache(max_size)(f)
    register_cache(wrapper, str(f))
    return wrapper
  return wrap


memoize = cache(max_size=None)


def weakref_lru_cache(f: Callable | None = None, *, maxsize: int | None = 2048,
                      trace_context_in_key: bool = True, explain=None):
  """An LRU cache of `f` keyed weakly on its first argument (an entry goes when that
  argument dies) and strongly on the others. Usable as ``@weakref_lru_cache`` or
  ``@weakref_lru_cache(maxsize=...)``. Mirrors `jax._src.util.weakref_lru_cache`."""
  del trace_context_in_key, explain
  if f is None:
    return functools.partial(weakref_lru_cache, maxsize=maxsize)
  tables: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

  @functools.wraps(f)
  def wrapper(weak_arg, *args, **kwargs):
    per_arg = tables.setdefault(weak_arg, {})
    key = (args, tuple(sorted(kwargs.items())))
    if key in per_arg:
      return per_arg[key]
    out = per_arg[key] = f(weak_arg, *args, **kwargs)
    if maxsize is not None and len(per_arg) > maxsize:
      del per_arg[next(iter(per_arg))]
    return out

  wrapper.cache_clear = tables.clear
  register_cache(wrapper, str(f))
  return wrapper


def prod(xs: Iterable) -> Any:
  """The product of `xs` (1 when empty). Mirrors `math.prod`, which JAX's tests call as
  `util.prod`."""
  return math.prod(xs)


def canonicalize_axis(axis, num_dims: int) -> int:
  """`axis` in [-num_dims, num_dims) as a non-negative axis.

  Raises:
    ValueError: the axis is out of bounds.

  Mirrors `jax._src.util.canonicalize_axis`."""
  axis = operator.index(axis)
  if not -num_dims <= axis < num_dims:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {num_dims}")
  return axis + num_dims if axis < 0 else axis


def canonicalize_axis_tuple(axis, ndim: int, allow_duplicate: bool = False) -> tuple[int, ...]:
  """`axis` (None: all axes; an int; a sequence) as a tuple of non-negative axes.

  Mirrors `jax._src.util.canonicalize_axis_tuple`."""
  if axis is None:
    return tuple(range(ndim))
  if isinstance(axis, Sequence):
    out = tuple(canonicalize_axis(a, ndim) for a in axis)
    if not allow_duplicate and len(set(out)) != len(out):
      raise ValueError(f"repeated axis: {out}")
    return out
  return (canonicalize_axis(axis, ndim),)


def moveaxis(x, src, dst):
  """`x` with the axes `src` moved to the positions `dst` (its ``transpose`` method).

  Mirrors `jax._src.util.moveaxis`."""
  if src == dst:
    return x
  src = (src,) if isinstance(src, int) else tuple(src)
  dst = (dst,) if isinstance(dst, int) else tuple(dst)
  src = [canonicalize_axis(a, x.ndim) for a in src]
  dst = [canonicalize_axis(a, x.ndim) for a in dst]
  perm = [i for i in range(x.ndim) if i not in src]
  for d, s in sorted(zip(dst, src)):
    perm.insert(d, s)
  return x.transpose(perm)


def ceil_of_ratio(x: int, y: int) -> int:
  """The ceiling of x / y for integers. Mirrors `jax._src.util.ceil_of_ratio`."""
  return -(-x // y)


def fun_name(fun: Callable, default_name: str = "<unnamed function>") -> str:
  """The name of a function (or of a partial's function). Mirrors `jax._src.util.fun_name`."""
  name = getattr(fun, "__name__", None)
  if name is not None:
    return name
  if isinstance(fun, functools.partial):
    return fun_name(fun.func, default_name)
  return default_name


def wraps(wrapped: Callable, namestr: str | None = None, docstr: str | None = None, **kwargs):
  """Like `functools.wraps`, with the name and docstring given as format strings over
  ``{fun}`` (the wrapped name) and ``{doc}``. Mirrors `jax._src.util.wraps`."""
  def wrapper(fun):
    try:
      name = fun_name(wrapped)
      doc = getattr(wrapped, "__doc__", "") or ""
      fun.__dict__.update(getattr(wrapped, "__dict__", {}))
      fun.__annotations__ = getattr(wrapped, "__annotations__", {})
      fun.__name__ = name if namestr is None else namestr.format(fun=name)
      fun.__module__ = getattr(wrapped, "__module__", "<unknown module>")
      fun.__doc__ = doc if docstr is None else docstr.format(fun=name, doc=doc, **kwargs)
      fun.__qualname__ = getattr(wrapped, "__qualname__", fun.__name__)
      fun.__wrapped__ = wrapped
    except Exception:  # objects that take no attributes (a partial's name, ...)
      pass
    return fun
  return wrapper


def tuple_insert(t: tuple, idx: int, val) -> tuple:
  """`t` with `val` inserted before position `idx`. Mirrors `jax._src.util.tuple_insert`."""
  assert 0 <= idx <= len(t), (idx, len(t))
  return t[:idx] + (val,) + t[idx:]


def tuple_delete(t: tuple, idx: int) -> tuple:
  """`t` without its element `idx`. Mirrors `jax._src.util.tuple_delete`."""
  assert 0 <= idx < len(t), (idx, len(t))
  return t[:idx] + t[idx + 1:]


def tuple_update(t: tuple, idx: int, val) -> tuple:
  """`t` with its element `idx` replaced by `val`. Mirrors `jax._src.util.tuple_update`."""
  assert 0 <= idx < len(t), (idx, len(t))
  return t[:idx] + (val,) + t[idx + 1:]


def stable_unique(it: Iterable) -> Iterable:
  """The distinct (hashable) elements of `it`, in first-seen order.

  Mirrors `jax._src.util.stable_unique`."""
  return dict.fromkeys(it).keys()


class HashableFunction:
  """A function whose equality and hash are those of a given closure value rather than its
  identity. Mirrors `jax._src.util.HashableFunction`."""

  __slots__ = ("f", "closure")

  def __init__(self, f: Callable, closure):
    self.f, self.closure = f, closure

  def __eq__(self, other):
    return (type(other) is HashableFunction and self.f.__code__ == other.f.__code__
            and self.closure == other.closure)

  def __hash__(self):
    return hash((self.f.__code__, self.closure))

  def __call__(self, *args, **kwargs):
    return self.f(*args, **kwargs)

  def __repr__(self):
    return f"<hashable {fun_name(self.f)} with closure={self.closure}>"


class HashablePartial:
  """`functools.partial` with equality and hash by (function code, arguments).

  Mirrors `jax._src.util.HashablePartial`."""

  def __init__(self, f: Callable, *args, **kwargs):
    self.f, self.args, self.kwargs = f, args, kwargs

  def __eq__(self, other):
    return (type(other) is HashablePartial and self.f.__code__ == other.f.__code__
            and self.args == other.args and self.kwargs == other.kwargs)

  def __hash__(self):
    return hash((self.f.__code__, self.args, tuple(sorted(self.kwargs.items()))))

  def __call__(self, *args, **kwargs):
    return self.f(*self.args, *args, **self.kwargs, **kwargs)


class HashableWrapper:
  """A value made hashable: its own hash when it has one, else its identity.

  Mirrors `jax._src.util.HashableWrapper`."""

  def __init__(self, x):
    self.x = x
    try:
      self.hash = hash(x)
    except TypeError:
      self.hash = None

  def __hash__(self):
    return self.hash if self.hash is not None else id(self.x)

  def __eq__(self, other):
    if not isinstance(other, HashableWrapper):
      return False
    return self.x == other.x if self.hash is not None else self.x is other.x


def set_module(module: str) -> Callable:
  """A decorator setting a function's ``__module__``. Mirrors `jax._src.util.set_module`."""
  def wrapper(func):
    if module is not None:
      func.__module__ = module
    return func
  return wrapper
