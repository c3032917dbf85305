"""Wrapped functions with stacked transformations (mirrors JAX's `linear_util`).

xjax's own transformations pass plain Python closures around (`api_util.flatten_fun`
returns a function and a write-once `Store`). Libraries written against JAX's
extension API (`jax.extend.linear_util`, `jax.api_util.flatten_fun`,
`jax.interpreters.partial_eval.trace_to_jaxpr_nounits`) hand over `WrappedFun`s instead:
a function `f` with a stack of transformations, each a callable
``gen(inner, *static_args, *args, **kwargs)`` (or ``gen(inner, store, ...)`` when it has an
auxiliary output written into a `Store`). `call_wrapped` runs the stack outermost first.
"""
from __future__ import annotations

import functools
import warnings
import weakref
from collections.abc import Callable

from xjax._src.interpreters.partial_eval import DebugInfo


class StoreException(Exception):
  """A `Store` read while empty, or written twice (mirrors JAX's `StoreException`)."""


_EMPTY = object()


class Store:
  """A write-once box for a transformation's auxiliary output."""
  __slots__ = ("_val",)

  def __init__(self):
    self._val = _EMPTY

  def store(self, val) -> None:
    """Fills the box; StoreException if it is already full."""
    if self._val is not _EMPTY:
      raise StoreException("Store occupied")
    self._val = val

  def reset(self) -> None:
    self._val = _EMPTY

  @property
  def val(self):
    """The stored value; StoreException if nothing was stored."""
    if self._val is _EMPTY:
      raise StoreException("Store empty")
    return self._val

  def __bool__(self):
    return self._val is not _EMPTY


class EqualStore(Store):
  """A `Store` that may be written again with an equal value (JAX's `EqualStore`)."""
  __slots__ = ()

  def store(self, val) -> None:
    if self._val is _EMPTY:
      self._val = val
      return
    try:
      same = bool(self._val == val)
    except Exception:  # an uncomparable value counts as different
      same = False
    if not same:
      raise StoreException("Store occupied with not-equal value")


def _fun_name(f, default: str = "<unnamed function>") -> str:
  while isinstance(f, functools.partial):
    f = f.func
  return getattr(f, "__name__", default)


class WrappedFun:
  """A function `f` and the transformations to apply to it (mirrors `lu.WrappedFun`).

  Attributes:
    f: the function being transformed.
    f_transformed: `f` with every transformation applied (what `call_wrapped` runs).
    transforms: ``((gen, gen_static_args), ...)``, the outermost first.
    stores: the auxiliary-output store of each transformation (None for those without).
    params: ``((name, value), ...)`` keyword arguments bound into `f`.
    in_type: an optional tuple of input avals (kept for JAX compatibility).
    debug_info: a `DebugInfo` naming the function for error messages.
  """
  __slots__ = ("f", "f_transformed", "transforms", "stores", "params", "in_type", "debug_info")

  def __init__(self, f: Callable, f_transformed: Callable, transforms, stores, params,
               in_type, debug_info):
    self.f = f
    self.f_transformed = f_transformed
    self.transforms = transforms
    self.stores = stores
    self.params = params
    self.in_type = in_type
    self.debug_info = debug_info

  @property
  def __name__(self):
    return _fun_name(self.f, "<unnamed wrapped function>")

  def wrap(self, gen, gen_static_args, out_store) -> WrappedFun:
    """A new WrappedFun with `gen` applied on top (passed `out_store` when not None)."""
    inner = self.f_transformed
    if out_store is None:
      transformed = functools.partial(gen, inner, *gen_static_args)
    else:
      transformed = functools.partial(gen, inner, out_store, *gen_static_args)
    return WrappedFun(self.f, transformed, ((gen, gen_static_args),) + self.transforms,
                      (out_store,) + self.stores, self.params, None, self.debug_info)

  def populate_stores(self, stores) -> None:
    """Copies the values of `stores` (another run's) into this function's stores."""
    for mine, theirs in zip(self.stores, stores):
      if mine is not None:
        mine.store(theirs.val)

  def call_wrapped(self, *args, **kwargs):
    """Runs `f` under all the transformations."""
    return self.f_transformed(*args, **kwargs)

  def replace_debug_info(self, debug_info) -> WrappedFun:
    return WrappedFun(self.f, self.f_transformed, self.transforms, self.stores, self.params,
                      self.in_type, debug_info)

  def __repr__(self):
    lines = [f"{i}   : {_fun_name(gen)}   {args}" for i, (gen, args) in enumerate(self.transforms)]
    return "Wrapped function:\n" + "\n".join(lines) + "\nCore: " + _fun_name(self.f) + "\n"

  def __hash__(self):
    return hash((self.f, self.transforms, self.params, self.in_type, self.debug_info))

  def __eq__(self, other):
    return (isinstance(other, WrappedFun) and self.f == other.f
            and self.transforms == other.transforms and self.params == other.params
            and self.in_type == other.in_type and self.debug_info == other.debug_info)


def missing_debug_info(for_what: str) -> DebugInfo:
  """The placeholder DebugInfo of a function wrapped without one (JAX warns the same way)."""
  warnings.warn(
      f"{for_what} is missing a DebugInfo object. This behavior is deprecated, use "
      "api_util.debug_info() to construct a proper DebugInfo object and propagate it to "
      "this function. See https://github.com/jax-ml/jax/issues/26480 for more details.",
      DeprecationWarning, stacklevel=3)
  return DebugInfo("missing_debug_info", "<missing_debug_info>", None, None)


def wrap_init(f: Callable, params=None, *, debug_info=None) -> WrappedFun:
  """Wraps `f` as a `WrappedFun` with no transformations (mirrors `lu.wrap_init`).

  Args:
    f: the function.
    params: an optional dict of keyword arguments bound into every call of `f`.
    debug_info: a `DebugInfo` (from `jax.api_util.debug_info`); without one a
      DeprecationWarning is issued, as in JAX.

  Returns:
    A WrappedFun whose `call_wrapped(*args)` calls ``f(*args, **params)``.
  """
  if not callable(f):
    raise TypeError(f"wrap_init: f must be callable, got {f!r}")
  if debug_info is None:
    debug_info = missing_debug_info("linear_util.wrap_init")
  params_dict = {} if params is None else dict(params)
  debug_info = debug_info._replace(result_paths=None)
  return WrappedFun(f, functools.partial(f, **params_dict), (), (),
                    tuple(sorted(params_dict.items())), None, debug_info)


def _curry(f):
  """``_curry(f)(a)(b)`` is ``f(a, b)``: JAX's transformation decorators are used both ways."""
  return functools.wraps(f)(functools.partial(functools.partial, f))


@_curry
def transformation2(gen, fun: WrappedFun, *gen_static_args) -> WrappedFun:
  """Adds transformation `gen` to `fun`: `gen(inner, *gen_static_args, *args, **kwargs)`
  is called in place of `fun`, with `inner` the function it transforms."""
  return fun.wrap(gen, gen_static_args, None)


@_curry
def transformation_with_aux2(gen, fun: WrappedFun, *gen_static_args,
                             use_eq_store: bool = False):
  """As `transformation2`, for a `gen(inner, store, *gen_static_args, *args)` that writes an
  auxiliary output with ``store.store(aux)``. Returns ``(WrappedFun, thunk)``; ``thunk()``
  gives the aux after a call (StoreException before)."""
  store = EqualStore() if use_eq_store else Store()
  return fun.wrap(gen, gen_static_args, store), lambda: store.val


@_curry
def transformation(gen, fun: WrappedFun, *gen_static_args) -> WrappedFun:
  """The older generator form: `gen(*gen_static_args, *args)` yields ``(args, kwargs)`` for the
  inner function and is sent its result; what it yields next is the result."""
  def run(inner, *args, **kwargs):
    it = gen(*args, **kwargs)
    inner_args, inner_kwargs = next(it)
    return it.send(inner(*inner_args, **inner_kwargs))
  return transformation2(run, fun, *gen_static_args)()


@_curry
def transformation_with_aux(gen, fun: WrappedFun, *gen_static_args):
  """The older generator form of `transformation_with_aux2`: the generator yields
  ``(result, aux)`` last. Returns ``(WrappedFun, thunk)``."""
  def run(inner, store, *args, **kwargs):
    it = gen(*args, **kwargs)
    inner_args, inner_kwargs = next(it)
    ans, aux = it.send(inner(*inner_args, **inner_kwargs))
    store.store(aux)
    return ans
  return transformation_with_aux2(run, fun, *gen_static_args)()


def merge_linear_aux(aux1, aux2):
  """Of two aux thunks exactly one of which was filled: ``(True, aux1())`` or
  ``(False, aux2())``. StoreException if neither or both were filled."""
  try:
    out1 = aux1()
  except StoreException:
    try:
      out2 = aux2()
    except StoreException:
      raise StoreException("neither store occupied") from None
    return False, out2
  try:
    aux2()
  except StoreException:
    return True, out1
  raise StoreException("both stores occupied")


def cache(call: Callable, *, explain=None):
  """Memoizes `call(fun: WrappedFun, *args)` on fun's function, transformations, params and
  `args` (mirrors `lu.cache`); a hit refills fun's stores from the first run's.

  The entries for a function live as long as that function (weakly keyed).
  """
  caches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

  def memoized(fun: WrappedFun, *args):
    try:
      per_fun = caches.setdefault(fun.f, {})
    except TypeError:  # not weakly referenceable: no caching
      return call(fun, *args)
    key = (fun.transforms, fun.params, fun.in_type, args)
    hit = per_fun.get(key)
    if hit is not None:
      ans, stores = hit
      fun.populate_stores(stores)
      return ans
    ans = call(fun, *args)
    per_fun[key] = (ans, fun.stores)
    return ans

  memoized.cache_clear = caches.clear
  memoized.evict_function = lambda f: caches.pop(f, None)
  return memoized


def hashable_partial(f, *args):
  """A WrappedFun-transformation-friendly partial application (JAX's `hashable_partial`)."""
  return functools.partial(f, *args)

