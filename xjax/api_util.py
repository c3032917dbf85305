"""Helpers for writing transformations over wrapped functions (mirrors `jax.api_util`).

Libraries that build their own transformations (flax's lazy init and ``nn.scan``,
numpyro's provenance tracing) use these with `jax.extend.linear_util`'s `WrappedFun`::

  import xjax as jax
  from xjax._src import linear_util as lu
  leaves, in_tree = jax.tree_util.tree_flatten(((1.0, 2.0), {}))
  info = jax.api_util.debug_info("example", f, (1.0, 2.0), {})
  flat_f, out_tree = jax.api_util.flatten_fun(lu.wrap_init(f, debug_info=info), in_tree)
  out_leaves = flat_f.call_wrapped(*leaves)
  out = jax.tree_util.tree_unflatten(out_tree(), out_leaves)

xjax's own transformations use the plain-function forms in `xjax._src.api_util`.
"""
from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from xjax._src import api_util as _api_util
from xjax._src import core as _core
from xjax._src import linear_util as _lu
from xjax._src import source_info as _source_info
from xjax._src import tree_util as _tree_util
from xjax._src.interpreters.partial_eval import DebugInfo as _DebugInfo

__all__ = ["argnums_partial", "debug_info", "donation_vector", "flatten_axes", "flatten_fun",
           "flatten_fun_nokwargs", "rebase_donate_argnums", "safe_map", "shaped_abstractify"]


def _check_wrapped(f, fn: str) -> None:
  if not isinstance(f, _lu.WrappedFun):
    raise TypeError(f"{fn}: f must be a WrappedFun (from jax.extend.linear_util.wrap_init), "
                    f"got {type(f).__name__}")


def _flatten_fun(f, store, in_tree, *args_flat):
  args, kwargs = _tree_util.tree_unflatten(in_tree, args_flat)
  out_leaves, out_tree = _tree_util.tree_flatten(f(*args, **kwargs))
  store.store(out_tree)
  return out_leaves


def _flatten_fun_nokwargs(f, store, in_tree, *args_flat):
  args = _tree_util.tree_unflatten(in_tree, args_flat)
  out_leaves, out_tree = _tree_util.tree_flatten(f(*args))
  store.store(out_tree)
  return out_leaves


def flatten_fun(f: _lu.WrappedFun, in_tree: _tree_util.PyTreeDef):
  """`f` as a function of the flat leaves of ``(args, kwargs)``, returning flat leaves.

  Args:
    f: a `WrappedFun` (``linear_util.wrap_init(fun, debug_info=...)``).
    in_tree: the treedef of the pair ``(args, kwargs)`` the leaves come from.

  Returns:
    ``(flat_f, out_tree)``: the transformed `WrappedFun` (``flat_f.call_wrapped(*leaves)``
    gives the output leaves) and a thunk giving the output's treedef once `flat_f` has run.

  Raises:
    TypeError: `f` is not a WrappedFun.

  Mirrors `jax.api_util.flatten_fun`.
  """
  _check_wrapped(f, "flatten_fun")
  return _lu.transformation_with_aux2(_flatten_fun)(f, in_tree)


def flatten_fun_nokwargs(f: _lu.WrappedFun, in_tree: _tree_util.PyTreeDef):
  """As `flatten_fun`, for `in_tree` the treedef of the positional arguments tuple alone.

  Mirrors `jax.api_util.flatten_fun_nokwargs`.
  """
  _check_wrapped(f, "flatten_fun_nokwargs")
  return _lu.transformation_with_aux2(_flatten_fun_nokwargs)(f, in_tree)


def _argnums_partial(f, dyn_argnums, fixed_args, *dyn_args, **kwargs):
  args = [None if a is _FIXED else a for a in fixed_args]
  for i, x in zip(dyn_argnums, dyn_args, strict=True):
    args[i] = x
  args = [a.val if type(a) in (_Static, _Unhashable) else a for a in args]
  return f(*args, **kwargs)


_FIXED = object()


class _Static:
  """A static argument: hashed by value, equal only to one of the same type and value."""
  __slots__ = ("val",)

  def __init__(self, val):
    self.val = val

  def __hash__(self):
    return hash(self.val)

  def __eq__(self, other):
    return type(other) is _Static and type(self.val) is type(other.val) and self.val == other.val


class _Unhashable:
  """A static argument compared by identity (``require_static_args_hashable=False``)."""
  __slots__ = ("val",)

  def __init__(self, val):
    self.val = val

  def __eq__(self, other):
    return type(other) is _Unhashable and self.val is other.val

  def __hash__(self):
    return id(self.val)


def argnums_partial(f: _lu.WrappedFun, dyn_argnums: int | Sequence[int], args: Sequence,
                    require_static_args_hashable: bool = True):
  """Fixes the arguments of `f` not in `dyn_argnums` to their values in `args`.

  Args:
    f: a `WrappedFun`.
    dyn_argnums: the positions (negative ones count from the end) of `args` that stay
      arguments.
    args: all the positional arguments.
    require_static_args_hashable: whether the fixed arguments must be hashable (they
      then key caches by value); else they are compared by identity.

  Returns:
    ``(f_partial, dyn_args)``: a WrappedFun taking only the dynamic arguments, and those.

  Raises:
    TypeError: `f` is not a WrappedFun.
    ValueError: a fixed argument is not hashable while hashability is required, or a
      position is out of range for `args`.

  Mirrors `jax.api_util.argnums_partial`.
  """
  _check_wrapped(f, "argnums_partial")
  n = len(args)
  dyn = []
  for i in ((dyn_argnums,) if isinstance(dyn_argnums, int) else dyn_argnums):
    i = operator.index(i)
    if not -n <= i < n:
      raise ValueError(f"argnums_partial: dyn_argnums {dyn_argnums} out of range for "
                       f"{n} positional arguments")
    dyn.append(i % n)
  dyn_argnums = tuple(dyn)
  fixed = []
  for i, arg in enumerate(args):
    if i in dyn_argnums:
      fixed.append(_FIXED)
    elif require_static_args_hashable:
      try:
        hash(arg)
      except TypeError:
        raise ValueError(
            "Non-hashable static arguments are not supported, as this can lead to unexpected "
            f"cache-misses. Static argument (index {i}) of type {type(arg)} for function "
            f"{f.__name__} is non-hashable.") from None
      fixed.append(_Static(arg))
    else:
      fixed.append(_Unhashable(arg))
  dyn_args = tuple(args[i] for i in dyn_argnums)
  return _lu.transformation2(_argnums_partial)(f, dyn_argnums, tuple(fixed)), dyn_args


def debug_info(traced_for: str, fun: Callable, args: Sequence[Any], kwargs: dict[str, Any],
               *, static_argnums: Sequence[int] = (), static_argnames: Sequence[str] = (),
               result_paths_thunk=None, sourceinfo: str | None = None,
               signature=None) -> _DebugInfo:
  """What error messages say about a function traced for `traced_for`.

  Args:
    traced_for: the transformation or API tracing it ("jit", "flax scan", ...).
    fun: the function.
    args, kwargs: example arguments, giving the argument names (``x``, ``y['a']``).
    static_argnums, static_argnames: the static ones among them (not named).
    result_paths_thunk: accepted for JAX's signature; xjax fills result paths itself.
    sourceinfo: "name at file:line" (found from `fun` when None).
    signature: `fun`'s `inspect.Signature` (found from `fun` when None).

  Returns:
    A DebugInfo (traced_for, func_src_info, arg_names, result_paths).

  Mirrors `jax.api_util.debug_info`.
  """
  del result_paths_thunk
  found = getattr(fun, "__fun_debug_info__", None)
  if found is not None:
    return found
  if sourceinfo is None:
    sourceinfo = _source_info.fun_sourceinfo(fun)
  if signature is None:
    signature = _api_util.fun_signature(fun)
  names = _api_util.arg_names(signature, tuple(args), dict(kwargs or {}),
                              tuple(static_argnums), tuple(static_argnames))
  return _DebugInfo(traced_for, sourceinfo, names)


def donation_vector(donate_argnums, donate_argnames, in_tree: _tree_util.PyTreeDef,
                    kws: bool = True) -> tuple[bool, ...]:
  """One bool per leaf of the arguments: whether that leaf is donated.

  Args:
    donate_argnums: positions of donated positional arguments.
    donate_argnames: names of donated keyword arguments.
    in_tree: the treedef of ``(args, kwargs)`` (or of ``args`` alone with ``kws=False``).

  Mirrors `jax.api_util.donation_vector`.
  """
  if kws:
    args_tree, kwargs_tree = in_tree.children()
  else:
    args_tree, kwargs_tree = in_tree, None
  out: list[bool] = []
  for i, arg in enumerate(args_tree.children()):
    out.extend((i in donate_argnums,) * arg.num_leaves)
  if kwargs_tree is not None:
    for key, val in zip(kwargs_tree.node_data()[1], kwargs_tree.children()):
      out.extend((key in donate_argnames,) * val.num_leaves)
  return tuple(out)


def rebase_donate_argnums(donate_argnums, static_argnums) -> tuple[int, ...]:
  """Donated positions renumbered as among the dynamic (non-static) arguments.

  ``rebase_donate_argnums((3, 4), (0, 1))`` is ``(1, 2)``.

  Raises:
    ValueError: a position is both static and donated.

  Mirrors `jax.api_util.rebase_donate_argnums`.
  """
  static = sorted(set(static_argnums))
  donated = sorted(set(donate_argnums))
  both = set(static) & set(donated)
  if both:
    raise ValueError(f"`static_argnums` {static} and `donate_argnums` {donated} cannot "
                     "intersect.")
  return tuple(d - sum(s < d for s in static) for d in donated)


class _Placeholder:
  def __repr__(self):
    return "pytree leaf"


def flatten_axes(name: str, treedef: _tree_util.PyTreeDef, axis_tree, *, kws: bool = False,
                 tupled_args: bool = False) -> list:
  """An axis spec (a pytree prefix of `treedef`, None leaves included) broadcast to one
  entry per leaf of `treedef`.

  Args:
    name: what the spec is, for the error ("vmap in_axes").
    treedef: the structure of the values.
    axis_tree: the spec: ints, None, or any leaves, as a tree prefix.
    kws: whether `treedef` is of ``(args, kwargs)`` (the error then speaks of args only).
    tupled_args: whether the spec is the argument list (adds a hint to the error).

  Returns:
    A list of ``treedef.num_leaves`` entries.

  Raises:
    ValueError: `axis_tree` is not a tree prefix of `treedef`.

  Mirrors `jax.api_util.flatten_axes`.
  """
  full = _tree_util.tree_unflatten(treedef, [_Placeholder()] * treedef.num_leaves)
  try:
    return _tree_util.broadcast_prefix(axis_tree, full, is_leaf=lambda x: x is None)
  except ValueError:
    pass
  if kws and isinstance(axis_tree, tuple) and len(axis_tree) == 2:
    # Speak of the positional arguments only.
    full, axis_tree = full[0], axis_tree[0]
  hint = ""
  if tupled_args:
    hint = (f" Note that {name} that are non-trivial pytrees should always be wrapped in a "
            "tuple representing the argument list.")
  errors = _tree_util.prefix_errors(axis_tree, full, is_leaf=lambda x: x is None)
  details = "\n  ".join(e(name).args[0] for e in errors)
  detail = f"\n  Mismatch details ({len(errors)} found):\n  {details}" if errors else ""
  raise ValueError(f"{name} specification must be a tree prefix of the corresponding value; "
                   f"{hint}{detail}")


def safe_map(f: Callable, *args) -> list:
  """``list(map(f, *args))`` over iterables of equal length.

  Raises:
    ValueError: the iterables differ in length (JAX's message).

  Mirrors `jax.api_util.safe_map`.
  """
  lists = [list(a) for a in args]
  n = len(lists[0])
  for i, a in enumerate(lists[1:], start=2):
    if len(a) != n:
      raise ValueError(f"safe_map() argument {i} is {'shorter' if len(a) < n else 'longer'} "
                       "than argument 1")
  return list(map(f, *lists))


def shaped_abstractify(x) -> _core.ShapedArray:
  """The aval (`ShapedArray`, weak type included) of an array-like value or an aval.

  Raises:
    TypeError: `x` is not an array type (no dtype).

  Mirrors `jax.api_util.shaped_abstractify`.
  """
  if isinstance(x, _core.ShapedArray):
    return x
  try:
    return _core.get_aval(x)
  except TypeError:
    pass
  if hasattr(x, "dtype") and hasattr(x, "shape"):
    from xjax._src import dtypes
    return _core.ShapedArray(tuple(x.shape), dtypes.canonicalize_dtype(x.dtype),
                             weak_type=bool(getattr(x, "weak_type", False)))
  raise TypeError(f"Cannot interpret value of type {type(x)} as an abstract array; it does "
                  "not have a dtype attribute")
