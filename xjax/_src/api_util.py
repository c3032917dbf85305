"""Helpers shared by the transformations: flattening functions, argnums, debug info."""
from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Callable, Sequence

from xjax._src import core
from xjax._src import source_info
from xjax._src import tree_util
from xjax._src.interpreters.partial_eval import DebugInfo


class Store:
  """A write-once box, filled when a traced function returns (e.g. its out_tree)."""
  __slots__ = ("_value",)
  _EMPTY = object()

  def __init__(self):
    self._value = Store._EMPTY

  def set(self, value):
    assert self._value is Store._EMPTY, "internal: Store written twice"
    self._value = value

  @property
  def val(self):
    assert self._value is not Store._EMPTY, "internal: Store read before written"
    return self._value


def flatten_fun(fun: Callable, in_tree, out_is_leaf=None) -> tuple[Callable, Store]:
  """A function of flat leaves calling `fun(*args, **kwargs)`; the store gets the out_tree.

  `in_tree` is the treedef of ``(args, kwargs)``; `out_is_leaf`, if given, marks extra
  leaves of the output (as `tree_flatten`'s `is_leaf`).
  """
  store = Store()

  def flat_fun(*leaves):
    args, kwargs = tree_util.tree_unflatten(in_tree, leaves)
    out = fun(*args, **kwargs)
    out_leaves, out_tree = tree_util.tree_flatten(out, out_is_leaf)
    store.set(out_tree)
    return out_leaves

  flat_fun.out_store = store  # for error messages that name an output's path
  return flat_fun, store


def flatten_fun_nokwargs(fun: Callable, in_tree) -> tuple[Callable, Store]:
  """Like `flatten_fun`, for `in_tree` the treedef of the positional args tuple."""
  store = Store()

  def flat_fun(*leaves):
    args = tree_util.tree_unflatten(in_tree, leaves)
    out = fun(*args)
    out_leaves, out_tree = tree_util.tree_flatten(out)
    store.set(out_tree)
    return out_leaves

  return flat_fun, store


def fun_signature(fun) -> inspect.Signature | None:
  try:
    return inspect.signature(fun)
  except (ValueError, TypeError):
    return None


def _ensure_index_tuple(x) -> tuple[int, ...]:
  if x is None:
    return ()
  try:
    return (operator.index(x),)
  except TypeError:
    return tuple(operator.index(i) for i in x)


def _ensure_str_tuple(x) -> tuple[str, ...]:
  if x is None:
    return ()
  if isinstance(x, str):
    return (x,)
  return tuple(x)


def infer_argnums_and_argnames(sig: inspect.Signature | None, argnums, argnames):
  """Completes static (or donated) argnums from argnames and vice versa, as jit does: only
  one side given (the other None) is filled in from the signature's positional-or-keyword
  parameters; both given are kept as they are, even where they disagree (mirrors JAX's
  ``api_util.infer_argnums_and_argnames``)."""
  if argnums is None and argnames is None:
    return (), ()
  if argnums is not None and argnames is not None or sig is None:
    return _ensure_index_tuple(argnums), _ensure_str_tuple(argnames)
  params = sig.parameters.items()
  if argnums is None:
    argnames = _ensure_str_tuple(argnames)
    argnums = tuple(i for i, (name, p) in enumerate(params)
                    if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD and name in argnames)
  else:
    argnums = _ensure_index_tuple(argnums)
    argnames = tuple(name for i, (name, p) in enumerate(params)
                     if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD and i in argnums)
  return argnums, argnames


def validate_argnums(sig: inspect.Signature | None, argnums, argnames, what: str) -> None:
  """JAX's errors for static (or donated, `what`) argnums/argnames the function cannot
  take: a position past its positional parameters (unless it has ``*args``), a name that is
  positional-only, or one it does not take (unless it has ``**kwargs``)."""
  if sig is None:
    return
  params = list(sig.parameters.values())
  if not any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in params):
    n = sum(p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                       inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params)
    if argnums and (-min(argnums) > n or max(argnums) >= n):
      raise ValueError(f"Jitted function has {what}_argnums={argnums}, but only accepts "
                       f"{n} positional arguments.")
  positional_only = {p.name for p in params if p.kind in (
      inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL)}
  if invalid := positional_only & set(argnames):
    raise ValueError(f"Jitted function has invalid argnames {invalid} in {what}_argnames. "
                     "These are positional-only")
  if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params):
    return
  names = {p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                 inspect.Parameter.KEYWORD_ONLY)}
  if invalid := set(argnames) - names:
    raise ValueError(f"Jitted function has invalid argnames {invalid} in {what}_argnames. "
                     "Function does not take these args.")


def resolve_argnums(fun, signature: inspect.Signature | None, donate_argnums, donate_argnames,
                    static_argnums, static_argnames):
  """``(donate_argnums, donate_argnames, static_argnums, static_argnames)`` for a jit of
  `fun`: completed from one another (`infer_argnums_and_argnames`) and validated against
  `signature` (`validate_argnums`); without a signature nothing is checked. Mirrors JAX's
  ``api_util.resolve_argnums``.

  Raises:
    ValueError: an invalid argnum or argname; static and donated argnames in common;
      donate_argnames for a function whose signature cannot be read.
  """
  if signature is None:
    if donate_argnames is not None:
      raise ValueError(f"Getting the signature of function {fun} failed. Pass "
                       "donate_argnums instead of donate_argnames.")
    static = (_ensure_index_tuple(static_argnums), _ensure_str_tuple(static_argnames))
    donate = (_ensure_index_tuple(donate_argnums), ())
  else:
    static = infer_argnums_and_argnames(signature, static_argnums, static_argnames)
    donate = infer_argnums_and_argnames(signature, donate_argnums, donate_argnames)
    validate_argnums(signature, *static, "static")
    validate_argnums(signature, *donate, "donate")
  if common := set(static[1]) & set(donate[1]):
    raise ValueError("static_argnames and donate_argnames cannot intersect. Argument names "
                     f"{common} appear in both static_argnames and donate_argnames")
  return (*donate, *static)


def arg_names(sig: inspect.Signature | None, args, kwargs, static_argnums=(),
              static_argnames=()) -> tuple[str, ...] | None:
  """One name per flat leaf of the dynamic (args, kwargs): ``x``, ``y['a']``, ``args[1]``."""
  if sig is None:
    return None
  try:
    bound = sig.bind(*args, **kwargs)
  except TypeError:
    return None
  names_of_positions = {}
  pos = 0
  for name, value in bound.arguments.items():
    kind = sig.parameters[name].kind
    if kind == inspect.Parameter.VAR_POSITIONAL:
      for i in range(len(value)):
        names_of_positions[pos] = f"{name}[{i}]"
        pos += 1
    elif kind != inspect.Parameter.VAR_KEYWORD and name not in kwargs:
      names_of_positions[pos] = name
      pos += 1
  out = []
  for i, a in enumerate(args):
    if i in static_argnums:
      continue
    base = names_of_positions.get(i, f"args[{i}]")
    for path, _ in tree_util.tree_flatten_with_path(a)[0]:
      out.append(base + tree_util.keystr(path))
  for k in sorted(kwargs):
    if k in static_argnames:
      continue
    for path, _ in tree_util.tree_flatten_with_path(kwargs[k])[0]:
      out.append(k + tree_util.keystr(path))
  return tuple(out)


def debug_info(traced_for: str, fun, args=(), kwargs=None, static_argnums=(),
               static_argnames=(), sig=None) -> DebugInfo:
  sig = fun_signature(fun) if sig is None else sig
  names = arg_names(sig, args, kwargs or {}, static_argnums, static_argnames)
  return DebugInfo(traced_for, source_info.fun_sourceinfo(fun), names)


def fun_name(fun) -> str:
  while hasattr(fun, "func") and hasattr(fun, "args"):
    fun = fun.func
  return getattr(fun, "__name__", type(fun).__name__)


def wraps(wrapped):
  """`functools.wraps` that never fails, as JAX's `util.wraps`: the wrapper gets each of
  `wrapped`'s name, qualname, module, docstring, annotations and attributes that it can
  take, and ``__wrapped__``. A callable object whose ``__name__`` is not a string (an
  equinox Module may have a field by that name) is wrapped all the same."""
  def wrapper(fun):
    for attr in functools.WRAPPER_ASSIGNMENTS:
      try:
        setattr(fun, attr, getattr(wrapped, attr))
      except (AttributeError, TypeError):
        pass
    try:
      fun.__dict__.update(getattr(wrapped, "__dict__", {}))
    except (AttributeError, TypeError):
      pass
    fun.__wrapped__ = wrapped
    return fun
  return wrapper


def check_callable(fun) -> None:
  """JAX's TypeError for what its transformations do not take: a non-callable, a
  staticmethod object, a generator function."""
  if isinstance(fun, staticmethod):
    raise TypeError(f"staticmethod arguments are not supported, got {fun}")
  if not callable(fun):
    raise TypeError(f"Expected a callable value, got {fun}")
  if inspect.isgeneratorfunction(fun):
    raise TypeError(f"Expected a function, got a generator function: {fun}")


def shaped_abstractify(x, fun=None, path: str = "") -> core.ShapedArray:
  """The aval of an argument, or JAX's TypeError naming the function and argument path."""
  try:
    return core.get_aval(x)
  except TypeError:
    pass
  where = f" at path {path}" if path else ""
  raise TypeError(
      f"Error interpreting argument to {fun} as an abstract array. The problematic "
      f"value is of type {type(x)} and was passed to the function{where}.\n"
      "This typically means that a jit-wrapped function was called with a non-array "
      "argument, and this argument was not marked as static using the static_argnums "
      "or static_argnames parameters of jax.jit.")


def arg_path_name(sig, path: str) -> str:
  """An argument's name as JAX prints it, from its key path in ``(args, kwargs)`` (``[0][1]['a']``)."""
  if sig is None:
    return path
  names = list(sig.parameters)
  if path.startswith("[0]["):
    rest = path[4:]
    idx = rest.split("]", 1)
    try:
      i = int(idx[0])
      base = names[i] if i < len(names) else f"args[{i}]"
      return base + (idx[1] if len(idx) > 1 else "")
    except ValueError:
      return path
  if path.startswith("[1]['"):
    rest = path[5:]
    name, _, tail = rest.partition("']")
    return name + tail
  return path


def argnums_partial(args: Sequence, dyn_argnums) -> tuple:
  return tuple(args[i] for i in dyn_argnums)
