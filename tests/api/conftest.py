"""Fixtures shared by tests/api."""
import pytest

from xjax._src.config import config
from xjax.experimental.compilation_cache import compilation_cache as cc

_CACHE_FLAGS = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs",
                "jax_persistent_cache_min_entry_size_bytes", "jax_compilation_cache_max_size",
                "jax_enable_compilation_cache", "jax_raise_persistent_cache_errors")


@pytest.fixture
def cache_dir(tmp_path):
  """A fresh persistent compilation cache in `tmp_path`, caching every compile; the flags
  are restored afterwards."""
  old = {n: getattr(config, n) for n in _CACHE_FLAGS}
  cc.reset_cache()
  config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
  cc.set_cache_dir(str(tmp_path))
  try:
    yield tmp_path
  finally:
    for n, v in old.items():
      config.update(n, v)
    cc.reset_cache()
