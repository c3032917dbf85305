"""The persistent compilation cache: compiled executables kept on disk across processes.

Mirrors JAX's persistent compilation cache (`jax._src.compilation_cache`): with
``jax_compilation_cache_dir`` set (or `set_cache_dir` called), every XLA
compilation first looks its key up in that directory and, on a miss, the
compiled executable is written there once its compilation took at least
``jax_persistent_cache_min_compile_time_secs`` and its entry is at least
``jax_persistent_cache_min_entry_size_bytes`` long. The cache is off by default.

This module holds everything but jaxlib: the key (a SHA-256 over the parts
`xjax._src.backend.compile_module` hands it), the file layout, atomic writes,
reading and checking entries, warnings, eviction and counters. The backend
serializes and deserializes executables and passes callables doing so.

Layout: one file per key, ``<module name>-<sha256 hex>.xjax-cache``, holding a
header (magic, format version, compile time) and the zlib-compressed serialized
executable. A file is written under a temporary name in the same directory and
renamed into place (`os.replace`, atomic), so concurrent writers never leave a
partial entry; a corrupt, truncated or undeserializable entry is reported with a
warning (an error with ``jax_raise_persistent_cache_errors``), removed and
recompiled. In a job of several processes every process reads the cache and only
process 0 writes it, as JAX.

The cache is trusted: an entry is loaded as executable code. Do not point it at a
directory others can write to. Entries are created readable by their owner only.
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import struct
import tempfile
import threading
import time
import warnings
import zlib
from typing import Callable, Sequence

from xjax._src import monitoring
from xjax._src import version
from xjax._src.config import config

logger = logging.getLogger(__name__)

# Bump when the entry layout or the key's parts change: old entries then miss.
FORMAT_VERSION = 1
_MAGIC = b"XJXC"
_HEADER = struct.Struct(">4sId")  # magic, format version, compile time (seconds)
_SUFFIX = ".xjax-cache"
_TMP_PREFIX = ".tmp-"
_STALE_TMP_SECS = 3600.0  # temporary files older than this are leftovers of killed writers
_COMPRESSION = "zlib"

# XLA flags that do not change generated code (dumping, the host device count, which
# the key's device list already covers).
_XLA_FLAGS_NOT_IN_KEY = re.compile(r"--xla_dump|--xla_force_host_platform_device_count")

_lock = threading.RLock()  # re-entered: `_report` counts while `_get_cache` holds it
_cache: _FileCache | None = None  # made on first use once a directory is set
_checked = False  # whether `_used` has been decided (once per process, as JAX)
_used = False
_warned: set[str] = set()
_STAT_NAMES = ("hits", "misses", "writes", "skipped", "errors")
_stats = dict.fromkeys(_STAT_NAMES, 0)


class _FileCache:
  """One cache directory: entries by key, least-recently-used eviction."""

  def __init__(self, path: str):
    self.path = path
    os.makedirs(path, exist_ok=True)

  def file(self, key: str) -> str:
    return os.path.join(self.path, key + _SUFFIX)

  def read(self, key: str) -> bytes | None:
    try:
      with open(self.file(key), "rb") as f:
        data = f.read()
    except FileNotFoundError:
      return None
    if config.jax_compilation_cache_max_size != -1:
      # Reading marks the entry as recently used, for eviction.
      with contextlib.suppress(OSError):
        os.utime(self.file(key))
    return data

  def exists(self, key: str) -> bool:
    return os.path.exists(self.file(key))

  def write(self, key: str, data: bytes) -> None:
    """Writes the entry under a temporary name, then renames it into place."""
    fd, tmp = tempfile.mkstemp(prefix=_TMP_PREFIX, dir=self.path)
    try:
      with os.fdopen(fd, "wb") as f:
        f.write(data)
      os.replace(tmp, self.file(key))
    except BaseException:
      with contextlib.suppress(OSError):
        os.unlink(tmp)
      raise

  def remove(self, key: str) -> None:
    with contextlib.suppress(OSError):
      os.unlink(self.file(key))

  def evict(self, max_size: int) -> None:
    """Removes the least recently used entries until the entries total `max_size` bytes
    at most (and leftover temporary files of killed writers)."""
    now = time.time()
    entries = []
    with os.scandir(self.path) as it:
      for e in it:
        try:
          st = e.stat()
        except OSError:  # removed meanwhile by another process
          continue
        if e.name.endswith(_SUFFIX):
          entries.append((st.st_mtime, e.name, st.st_size))
        elif e.name.startswith(_TMP_PREFIX) and now - st.st_mtime > _STALE_TMP_SECS:
          with contextlib.suppress(OSError):
            os.unlink(e.path)
    total = sum(size for _, _, size in entries)
    for _, name, size in sorted(entries):
      if total <= max_size:
        break
      logger.debug("Evicting persistent compilation cache entry %s (%d bytes)", name, size)
      with contextlib.suppress(OSError):
        os.unlink(os.path.join(self.path, name))
      total -= size


def _count(name: str) -> None:
  with _lock:
    _stats[name] += 1


def stats() -> dict[str, int]:
  """Counters of this process's cache use since start (or `reset_stats`).

  Returns:
    A dict: ``hits`` (executables loaded from the cache), ``misses`` (look-ups that
    found no usable entry, each followed by a compilation), ``writes`` (entries
    written), ``skipped`` (compilations not written: below the thresholds, over the
    maximum size, with host callbacks, or compiled by a process other than process 0
    of a multi-process job) and
    ``errors`` (entries that could not be read, decoded, loaded or written).
  """
  with _lock:
    return dict(_stats)


def reset_stats() -> None:
  """Sets every `stats` counter to zero."""
  with _lock:
    for name in _STAT_NAMES:
      _stats[name] = 0


def is_persistent_cache_enabled() -> bool:
  """Whether a cache directory is set and the cache is enabled (by the flags)."""
  return bool(config.jax_compilation_cache_dir) and config.jax_enable_compilation_cache


def is_cache_used() -> bool:
  """Whether compilations go through the cache in this process.

  Decided on the first compilation (and again after `reset_cache`) from
  ``jax_enable_compilation_cache``, as JAX does; the directory itself may be set
  later, the cache starts on the first compilation after that.
  """
  global _checked, _used
  with _lock:
    if not _checked:
      _checked = True
      _used = bool(config.jax_enable_compilation_cache)
      # JAX's adoption metrics, once per process (and after `reset_cache`).
      monitoring.record_event("/jax/compilation_cache/tasks_using_cache" if _used
                              else "/jax/compilation_cache/task_disabled_cache")
    return _used


def _get_cache() -> _FileCache | None:
  """The cache directory in use, made on first use; None without one."""
  global _cache
  if not is_cache_used():
    return None
  with _lock:
    if _cache is None:
      path = config.jax_compilation_cache_dir
      if not path:
        return None
      path = os.path.abspath(os.path.expanduser(os.fspath(path)))
      try:
        _cache = _FileCache(path)
      except OSError as e:
        _report(f"dir:{path}", f"Could not create the persistent compilation cache directory "
                f"{path!r}: {type(e).__name__}: {e}", e)
        return None
      logger.debug("Initialized persistent compilation cache at %s", path)
    return _cache


def active() -> bool:
  """Whether a compilation now would look up and store its executable."""
  return _get_cache() is not None


def reset_cache() -> None:
  """Gets back to the pristine, uninitialized state (mirrors JAX's `reset_cache`).

  The next compilation reads ``jax_enable_compilation_cache`` and
  ``jax_compilation_cache_dir`` again. Entries on disk stay.
  """
  global _cache, _checked, _used
  with _lock:
    logger.info("Resetting cache at %s.", _cache.path if _cache is not None else "<empty>")
    _cache = None
    _checked = False
    _used = False
    _warned.clear()


def skip(what: str, reason: str) -> None:
  """Counts a compilation that bypasses the cache (`what` for the log) while it is on."""
  if _get_cache() is not None:
    logger.debug("Not caching '%s': %s", what, reason)
    _count("skipped")


def _xla_flags() -> list[str]:
  flags = os.environ.get("XLA_FLAGS", "").split()
  return sorted(f for f in flags if not _XLA_FLAGS_NOT_IN_KEY.match(f))


def module_name(module_text: str) -> str:
  """The name of a StableHLO module (``jit_f``), made safe for a file name."""
  return _module_name(module_text)


def _module_name(module_text: str) -> str:
  match = re.search(r"module\s+@\"?([\w.$-]+)", module_text)
  name = match.group(1) if match else "module"
  return re.sub(r"[^\w.-]", "_", name)[:80]


def cache_key(module_text: str, parts: Sequence[tuple[str, bytes | str]]) -> str:
  """The key of a compilation: ``<module name>-<sha256 hex>``.

  Args:
    module_text: the StableHLO module text.
    parts: (name, value) pairs naming everything else the executable depends on:
      the compile options, the devices, the jaxlib version, the platform.

  Returns:
    The key; the SHA-256 covers `module_text`, `parts`, the cache format version,
    xjax's version, the compression and the ``XLA_FLAGS`` that affect code.
  """
  h = hashlib.sha256()

  def add(name: str, value: bytes | str) -> None:
    data = value.encode() if isinstance(value, str) else bytes(value)
    h.update(name.encode() + b"\0" + len(data).to_bytes(8, "big") + data)

  add("format", str(FORMAT_VERSION))
  add("xjax", version.__version__)
  add("compression", _COMPRESSION)
  add("xla_flags", "\n".join(_xla_flags()))
  for name, value in parts:
    add(name, value)
  add("module", module_text)
  return f"{_module_name(module_text)}-{h.hexdigest()}"


def encode_entry(serialized: bytes, compile_time: float) -> bytes:
  """The file contents for a serialized executable and its compile time in seconds."""
  return _HEADER.pack(_MAGIC, FORMAT_VERSION, float(compile_time)) + zlib.compress(serialized)


def decode_entry(data: bytes) -> tuple[bytes, float]:
  """(serialized executable, compile time) of an entry's file contents.

  Raises:
    ValueError: the contents are truncated, corrupt or of another format version.
  """
  if len(data) < _HEADER.size:
    raise ValueError(f"entry truncated to {len(data)} bytes")
  magic, version, compile_time = _HEADER.unpack_from(data)
  if magic != _MAGIC:
    raise ValueError("not an xjax compilation cache entry")
  if version != FORMAT_VERSION:
    raise ValueError(f"entry format version {version}, expected {FORMAT_VERSION}")
  try:
    return zlib.decompress(data[_HEADER.size:]), compile_time
  except zlib.error as e:
    raise ValueError(f"entry corrupt or truncated ({e})") from None


def _report(tag: str, message: str, exc: BaseException) -> None:
  """Warns about a cache failure once per tag, or raises with
  ``jax_raise_persistent_cache_errors``."""
  _count("errors")
  if config.jax_raise_persistent_cache_errors:
    raise exc
  with _lock:
    first = tag not in _warned
    _warned.add(tag)
  if first:
    warnings.warn(message, stacklevel=3)  # UserWarning, as JAX
  else:
    logger.debug(message)


def _name_of(key: str) -> str:
  return key.rpartition("-")[0]


def _log_miss(key: str) -> None:
  # As JAX: a WARNING with jax_explain_cache_misses, else DEBUG.
  logger.log(logging.WARNING if config.jax_explain_cache_misses else logging.DEBUG,
             "PERSISTENT COMPILATION CACHE MISS for '%s' with key %r", _name_of(key), key)


def load(key: str, deserialize: Callable[[bytes], object]):
  """The executable stored under `key`, or None (a miss).

  Args:
    key: a `cache_key`.
    deserialize: makes the executable from the serialized bytes.

  Returns:
    `deserialize`'s result, or None when there is no cache, no entry, or the entry
    cannot be read, decoded or deserialized (then it is removed, with a warning).
  """
  cache = _get_cache()
  if cache is None:
    return None
  start = time.monotonic()
  try:
    data = cache.read(key)
  except OSError as e:
    _report(key, f"Error reading persistent compilation cache entry for '{key}': "
            f"{type(e).__name__}: {e}", e)
    _count("misses")
    return None
  if data is None:
    _log_miss(key)
    _count("misses")
    return None
  try:
    serialized, compile_time = decode_entry(data)
    executable = deserialize(serialized)
  except Exception as e:  # noqa: BLE001 -- any failure of a stored entry is a miss
    cache.remove(key)
    _count("misses")
    _report(key, f"Error reading persistent compilation cache entry for '{key}' in "
            f"{cache.path}: {type(e).__name__}: {e}; recompiling.", e)
    return None
  logger.log(logging.WARNING if config.jax_log_compiles else logging.DEBUG,
             "Persistent compilation cache hit for '%s' with key %r", _name_of(key), key)
  _count("hits")
  retrieval_time = time.monotonic() - start
  monitoring.record_event("/jax/compilation_cache/cache_hits")
  monitoring.record_event_duration_secs("/jax/compilation_cache/compile_time_saved_sec",
                                        compile_time - retrieval_time)
  monitoring.record_event_duration_secs("/jax/compilation_cache/cache_retrieval_time_sec",
                                        retrieval_time)
  return executable


def store(key: str, serialize: Callable[[], bytes], compile_time: float) -> bool:
  """Writes the executable just compiled under `key` when it qualifies.

  Args:
    key: a `cache_key`.
    serialize: returns the executable's serialized bytes.
    compile_time: how long the compilation took, in seconds.

  Returns:
    Whether an entry was written. Nothing is written below
    ``jax_persistent_cache_min_compile_time_secs`` or
    ``jax_persistent_cache_min_entry_size_bytes``, or above
    ``jax_compilation_cache_max_size``; a failed write warns.
  """
  cache = _get_cache()
  if cache is None:
    return False
  min_time = config.jax_persistent_cache_min_compile_time_secs
  if compile_time < min_time:
    logger.debug("Not writing persistent cache entry for '%s': compile time %.3fs < %.3fs",
                 key, compile_time, min_time)
    _count("skipped")
    return False
  try:
    data = encode_entry(serialize(), compile_time)
    min_size = config.jax_persistent_cache_min_entry_size_bytes
    max_size = config.jax_compilation_cache_max_size
    if len(data) < min_size:
      logger.debug("Not writing persistent cache entry for '%s': %d bytes < %d", key,
                   len(data), min_size)
      _count("skipped")
      return False
    # JAX counts a miss here: a compilation that qualified to be written.
    monitoring.record_event("/jax/compilation_cache/cache_misses")
    if max_size != -1 and len(data) > max_size:
      warnings.warn(f"Cache value for key {key!r} of size {len(data)} bytes exceeds the "
                    f"maximum cache size of {max_size} bytes", stacklevel=2)
      _count("skipped")
      return False
    if cache.exists(key):  # written meanwhile by another process: the same executable
      _count("skipped")
      return False
    cache.write(key, data)
    if max_size != -1:
      cache.evict(max_size)
  except Exception as e:  # noqa: BLE001 -- a failed write never fails the compilation
    _report("write:" + key, f"Error writing persistent compilation cache entry for '{key}': "
            f"{type(e).__name__}: {e}", e)
    return False
  logger.debug("Wrote '%s' to the persistent compilation cache", key)
  _count("writes")
  return True
