"""The caches of compiled programs: one bounded, locked LRU class and one key scheme.

Every compiled program xjax runs is found through an `LRUCache`:

* `executables`, the process-wide cache: eager primitives, the jaxpr of a
  nested jit run eagerly, eager higher-order primitives (cond, scan, while,
  remat, custom_jvp/vjp ...), PRNG programs, and every SPMD program (eager
  primitives on sharded arrays, eager shard_map and pmap, reshards, eager
  control flow holding a shard_map);
* one `LRUCache` per jitted function and options (jit's signatures, see
  `jit_cache._ExecutableCache`), whose entries hold programs of `executables`.

A key names what determines the program, and nothing less:

    (kind, what it computes, input avals, placement, trace context)

*what it computes* is a primitive with its params, or a jaxpr's
`jaxpr_keys.structure_key` (so a jaxpr rebuilt on every call, a new lambda
or `grad`'s jvp, compiles once); *placement* is the device, or the input
shardings and mesh of an SPMD program; the *trace context* is
`config.context_id()`, the interned id of every flag and context value that
can change a trace or a lowering (x64, matmul precision, promotion modes,
debug checks, the context mesh ...). Caches of traces key on
`core.trace_context()`, which adds the named axes bound.

Each cache holds at most `maxsize` entries and drops the least recently used
(every executable holds memory mappings of its own: a program over ever new
shapes must not exhaust them). Lookups and insertions take the cache's lock,
so concurrent hits, misses and evictions from many threads are safe;
programs are built outside the lock (compiles run in parallel), and when two
threads miss the same key at once the first program stored is kept.
`clear_all()` (`jax.clear_caches`) empties every cache there is.
"""
from __future__ import annotations

import collections
import threading
import weakref

from xjax._src import core

_MISSING = object()

CacheStats = collections.namedtuple("CacheStats", "hits misses evictions maxsize currsize")
CacheStats.__doc__ = "Counts of one cache (or all caches of a name): see `LRUCache.stats`."


class LRUCache:
  """A bounded map from keys to built values, least recently used dropped first.

  Thread-safe: every read and write of the map holds `self._lock`.
  """
  __slots__ = ("name", "maxsize", "hits", "misses", "evictions", "_data", "_lock",
               "__weakref__")

  def __init__(self, name: str, maxsize: int):
    self.name = name
    self.maxsize = maxsize
    self.hits = 0
    self.misses = 0
    self.evictions = 0
    self._data = collections.OrderedDict()
    self._lock = threading.Lock()
    _register(self)

  def get(self, key, default=None):
    """The value under `key` (made most recently used, counted as a hit), else `default`.

    Raises:
      TypeError: `key` is not hashable.
    """
    with self._lock:
      value = self._data.get(key, _MISSING)
      if value is _MISSING:
        return default
      self._data.move_to_end(key)
      self.hits += 1
      return value

  def get_or_build(self, key, build):
    """The value under `key`, else ``build()`` stored there (a miss)."""
    value = self.get(key, _MISSING)
    if value is _MISSING:
      value = self.put(key, build())
    return value

  def put(self, key, value):
    """Stores `value` under `key` after a miss, dropping the least recently used entries
    beyond `maxsize`; returns the value stored (another thread's, if it stored first)."""
    data = self._data
    with self._lock:
      self.misses += 1
      existing = data.get(key, _MISSING)
      if existing is not _MISSING:
        data.move_to_end(key)
        return existing
      data[key] = value
      while len(data) > self.maxsize:
        data.popitem(last=False)
        self.evictions += 1
    return value

  def most_recent_key(self):
    """The most recently used key, or None when empty."""
    with self._lock:
      return next(reversed(self._data)) if self._data else None

  def keys(self) -> list:
    """A snapshot of the keys, least recently used first."""
    with self._lock:
      return list(self._data)

  def __len__(self):
    return len(self._data)

  def __contains__(self, key):
    with self._lock:
      return key in self._data

  def clear(self) -> None:
    """Drops every entry and resets the counts."""
    with self._lock:
      self._data.clear()
      self.hits = self.misses = self.evictions = 0

  def stats(self) -> CacheStats:
    return CacheStats(self.hits, self.misses, self.evictions, self.maxsize, len(self._data))


class DerivedCache:
  """Values derived from objects (a jaxpr's jvp, batched or transposed jaxpr), each kept as
  long as the object it derives from lives (weakly keyed: an LRU keyed on jaxprs would keep
  thousands of them alive, with what they close over), by a key and the trace context
  (`core.trace_context()`: flags and named axes can change what a transformation builds).

  Thread-safe: the map is read and written under a lock; values are built outside it, and
  when two threads build the same value at once the first stored is kept.
  """
  __slots__ = ("name", "_data", "_lock", "__weakref__")

  def __init__(self, name: str):
    self.name = name
    self._data = weakref.WeakKeyDictionary()
    self._lock = threading.Lock()
    _register(self)

  def get_or_build(self, obj, key, build):
    """The value derived from `obj` under `key` in this trace context, else `build()`."""
    key = (key, core.trace_context())
    with self._lock:
      per = self._data.get(obj)
      value = per.get(key, _MISSING) if per is not None else _MISSING
    if value is not _MISSING:
      return value
    value = build()
    with self._lock:
      per = self._data.get(obj)
      if per is None:
        per = self._data[obj] = {}
      return per.setdefault(key, value)

  def __len__(self):
    return len(self._data)

  def clear(self) -> None:
    with self._lock:
      self._data.clear()

  def stats(self) -> CacheStats:
    n = len(self._data)
    return CacheStats(0, 0, 0, n, n)


_all_caches: weakref.WeakSet = weakref.WeakSet()
_registry_lock = threading.Lock()  # threads make caches (new jitted functions) while clearing


def _register(cache) -> None:
  with _registry_lock:
    _all_caches.add(cache)


def _live_caches() -> list:
  with _registry_lock:
    return list(_all_caches)
_clear_hooks: list = []


def on_clear(hook) -> None:
  """Registers `hook()` to run in `clear_all` (caches of traces that are not `LRUCache`s:
  per-function memos, transformed-jaxpr caches)."""
  _clear_hooks.append(hook)


def clear_all() -> None:
  """Empties every LRUCache and runs every `on_clear` hook (`jax.clear_caches`)."""
  for cache in _live_caches():
    cache.clear()
  for hook in _clear_hooks:
    hook()


def stats() -> dict:
  """Per cache name: the summed `CacheStats` of the live caches of that name."""
  out: dict = {}
  for cache in _live_caches():
    s = cache.stats()
    prev = out.get(cache.name)
    out[cache.name] = s if prev is None else CacheStats(
        prev.hits + s.hits, prev.misses + s.misses, prev.evictions + s.evictions,
        prev.maxsize + s.maxsize, prev.currsize + s.currsize)
  return out


# The process-wide cache of compiled programs (see the module docstring).
EXECUTABLES_SIZE = 4096
executables = LRUCache("executables", EXECUTABLES_SIZE)
