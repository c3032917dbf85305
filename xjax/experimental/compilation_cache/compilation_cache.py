"""Setting up the persistent compilation cache.

Mirrors `jax.experimental.compilation_cache.compilation_cache`: compiled
executables are stored in a directory and loaded from there by later
processes instead of compiling again.
"""
from __future__ import annotations

from xjax._src import compilation_cache as _cc
from xjax._src.config import config as _config


def set_cache_dir(path) -> None:
  """Sets the persistent compilation cache directory.

  Executables compiled afterwards are saved to `path` and looked up there before
  compiling, so a restarted process need not compile them again. Only
  compilations taking at least ``jax_persistent_cache_min_compile_time_secs``
  (1 s by default) are saved. The directory takes effect on the first
  compilation that uses the cache; to change it afterwards, call `reset_cache`.

  The cache is trusted: entries are loaded as code. Do not share a cache
  directory with users you do not trust.

  Args:
    path: the directory (made when missing).

  Mirrors `jax.experimental.compilation_cache.compilation_cache.set_cache_dir`.
  """
  _config.update("jax_compilation_cache_dir", path)


def initialize_cache(path) -> None:
  """Deprecated alias of `set_cache_dir`: sets the cache directory to `path`.

  Mirrors `jax._src.compilation_cache.initialize_cache`.
  """
  _config.update("jax_compilation_cache_dir", path)


def reset_cache() -> None:
  """Gets the cache back to its pristine, uninitialized state.

  The next compilation reads ``jax_enable_compilation_cache`` and
  ``jax_compilation_cache_dir`` again (so a new directory takes effect). The
  entries on disk are kept.

  Mirrors `jax.experimental.compilation_cache.compilation_cache.reset_cache`.
  """
  _cc.reset_cache()


def is_initialized() -> bool:
  """Deprecated: whether the cache is enabled (``jax_enable_compilation_cache``).

  Initialization is deferred to the first compilation, so it is not what is
  checked; the name stays for compatibility.

  Mirrors `jax._src.compilation_cache.is_initialized`.
  """
  return bool(_config.jax_enable_compilation_cache)


