"""Executable caches are bounded: a long loop over ever new shapes keeps memory (and
the process's memory mappings, which every compiled program takes) flat."""
import gc

import xjax
import xjax.numpy as jnp
from xjax._src import executable_cache


def _mappings() -> int:
  with open("/proc/self/maps") as f:
    return sum(1 for _ in f)


def test_eager_and_jit_caches_are_bounded(monkeypatch):
  f = xjax.jit(lambda x: x * 2 + 1)
  for cache in list(executable_cache._all_caches):  # jnp.ones's own jit cache among them
    if isinstance(cache, executable_cache.LRUCache):
      monkeypatch.setattr(cache, "maxsize", 20)
  xjax.clear_caches()
  gc.collect()
  counts = []
  for start in (1, 61, 121):
    for n in range(start, start + 60):
      x = jnp.ones(n)
      xjax.lax.add(x, 1.0)
      f(x)
    gc.collect()
    counts.append(_mappings())
    assert len(executable_cache.executables) <= 20
    assert len(f._cache) <= 20
  # Flat after the first round (a little slack for allocator arenas).
  assert counts[2] <= counts[0] * 1.1 + 30, counts
  # Evicted signatures still work (recompiled on demand).
  assert float(f(jnp.ones(1))[0]) == 3.0
