"""The executable cache of a jitted function: its entries, its key and why a key missed.

A jitted function's executables live in an `_ExecutableCache` by call signature (argument
structure, avals with weak types, statics, device, flags key; or, for SPMD programs, the
input shardings in place of the device), shared by every `jit` of the same function and
options (`_caches_for`). An entry (`_CacheEntry`) holds the executable with what a call
needs around it: the output tree, the donation mask, the jaxpr, and a runner of its own for
uncommitted buffers. The call tiers that read and fill these caches are in `jit.py`.
"""
from __future__ import annotations

import collections
import traceback
import weakref

from xjax._src import executable_cache
from xjax._src.array import Array
from xjax._src.jit_fast_path import _fast_runner


class _CacheEntry:
  """One compiled signature of a jitted function: the executable, the output tree, the
  donation mask (None: nothing donated) and the traced jaxpr."""
  __slots__ = ("executable", "out_tree", "donate_mask", "jaxpr", "by_leaves", "_fast")

  def __init__(self, executable, out_tree, donate_mask, jaxpr, by_leaves=False):
    self.executable = executable
    self.out_tree = out_tree
    self.donate_mask = donate_mask
    self.jaxpr = jaxpr
    # An SPMD executable (the jaxpr names a mesh) takes the argument leaves themselves.
    self.by_leaves = by_leaves
    self._fast = None

  def run_uncommitted(self, buffers):
    """The outputs (as the function returns them) for uncommitted argument buffers."""
    fast = self._fast
    if fast is None:
      fast = self._fast = _fast_runner(self)
    if fast is not False:
      try:
        return fast(buffers)
      except Exception:  # noqa: BLE001  (e.g. a deleted argument: the full path says so)
        pass
    return self.out_tree.unflatten(self.executable.run(buffers, False))


_function_caches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# Executables kept per jitted function (as JAX's jit cache, bounded: each holds
# memory mappings, and a loop over ever new shapes must not exhaust them).
_CACHE_SIZE = 4096

CacheInfo = collections.namedtuple("CacheInfo", "hits misses maxsize currsize last_miss")
CacheInfo.__doc__ = """A jitted function's cache statistics (`PjitFunction.cache_info`):
calls served from the cache, calls that compiled, the bound, the entries held, and why the
last miss missed."""


class _ExecutableCache(executable_cache.LRUCache):
  """A jitted function's executables by call signature: an `LRUCache` of at most
  `_CACHE_SIZE` entries (an evicted executable is freed once nothing else holds it), with
  the reason of the last miss and the memos of jit's fast paths."""
  __slots__ = ("last_miss", "memo", "fast_call")

  def __init__(self):
    super().__init__("jit signatures", _CACHE_SIZE)
    self.last_miss = None
    # The last call's signature, a `jit._CallMemo`: a call with the same flags, tree,
    # statics and leaves' avals (by identity) reuses its entry without hashing a key.
    self.memo = None
    # After a call of uncommitted Arrays in positional arguments (tuples, lists and dicts of
    # them included): `_fast_call`'s function of the positional arguments, giving the
    # outputs or `_MISS` (then the paths below run).
    self.fast_call = None

  def lookup(self, key, statics, build):
    """The entry under `key` (made most recently used), else `build()` added there."""
    entry = _lookup(self, key, statics)
    if entry is None:
      return self.add(key, build)
    return entry

  def add(self, key, build):
    """After a miss: records why it missed, builds the entry and stores it."""
    self.last_miss = _miss_reason(key, self.most_recent_key())
    return self.put(key, build())

  def info(self) -> CacheInfo:
    """The statistics `PjitFunction.cache_info` gives."""
    return CacheInfo(self.hits, self.misses, _CACHE_SIZE, len(self), self.last_miss)

  def clear(self):
    super().clear()
    self.last_miss = None
    self.memo = None
    self.fast_call = None


_KEY_FIELDS = ("the argument structure (pytree)", "the argument shapes or dtypes",
               "the static arguments", "the device", "the configuration flags")
_SPMD_KEY_FIELDS = ("the argument structure (pytree)", "the argument shapes or dtypes",
                    "the static arguments", "the argument shardings",
                    "the configuration flags")


def _miss_reason(key, previous) -> str:
  """Why `key` missed, compared with the most recently used key."""
  try:
    return _compare_keys(key, previous)
  except Exception:  # noqa: BLE001  (a static argument whose __eq__ raises)
    return "the arguments differ from the last call's"


def _compare_keys(key, previous) -> str:
  if previous is None:
    return "first call: nothing compiled yet"
  spmd_key, spmd_previous = key[0] == "spmd", previous[0] == "spmd"
  if spmd_key != spmd_previous:
    return ("the arguments span several devices now" if spmd_key
            else "the arguments are on one device now")
  fields = _SPMD_KEY_FIELDS if spmd_key else _KEY_FIELDS
  new, old = key[spmd_key:], previous[spmd_key:]
  changed = [name for name, a, b in zip(fields, new, old) if a != b]
  if fields[1] in changed and len(new[1]) == len(old[1]):
    diffs = [f"leaf {i}: {b.str_short(True)} -> {a.str_short(True)}"
             for i, (a, b) in enumerate(zip(new[1], old[1])) if a != b]
    changed[changed.index(fields[1])] += " (" + ", ".join(diffs[:3]) + (
        ", ..." if len(diffs) > 3 else "") + ")"
  return "changed since the last call: " + "; ".join(changed) if changed else (
      "an entry evicted or cleared before")


def _caches_for(fun, options) -> tuple:
  """The (executable, jaxpr, converted-jaxpr) caches shared by every jit of `fun` with `options`."""
  try:
    per_fun = _function_caches.setdefault(fun, {})
  except TypeError:  # not weakly referenceable: caches live with this wrapper
    per_fun = {}
  caches = per_fun.get(options)
  if caches is None:
    caches = per_fun[options] = (_ExecutableCache(),
                                 executable_cache.LRUCache("jit traces", _CACHE_SIZE),
                                 weakref.WeakKeyDictionary())
  return caches


def _lookup(cache: dict, key, statics):
  """`cache.get(key)`, with JAX's errors when hashing or comparing static arguments raises."""
  try:
    return cache.get(key)
  except Exception as e:
    if not statics:
      raise
    for _, _, v in statics:
      try:
        hash(v)
      except TypeError as h:
        raise ValueError(
            "Non-hashable static arguments are not supported. An error occurred while trying "
            f"to hash an object of type {type(v)}, {v}. The error was:\nTypeError: {h}\n"
        ) from None
    kind = next((t for _, t, _ in statics if "__eq__" in vars(t)), statics[0][1])
    raise ValueError(
        "static arguments should be comparable using __eq__.The following error was "
        f"raised when comparing two objects of types {kind} and {kind}. The error was:\n"
        + "".join(traceback.format_exception(e))) from None


def _mark_donated(leaves, mask) -> None:
  """Deletes the donated Arrays among `leaves` after a run: the call consumed them (as JAX)."""
  for x, donated in zip(leaves, mask):
    if donated and type(x) is Array:
      x.delete()
