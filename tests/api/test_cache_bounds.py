"""Executable caches are bounded: a long loop over ever new shapes keeps memory (and
the process's memory mappings, which every compiled program takes) flat."""
import gc

import xjax
import xjax.numpy as jnp
from xjax._src import dispatch
from xjax._src import jit as jit_module


def _mappings() -> int:
  with open("/proc/self/maps") as f:
    return sum(1 for _ in f)


def test_eager_and_jit_caches_are_bounded(monkeypatch):
  monkeypatch.setattr(dispatch, "_PRIMITIVE_CACHE_SIZE", 20)
  monkeypatch.setattr(jit_module, "_CACHE_SIZE", 20)
  f = xjax.jit(lambda x: x * 2 + 1)
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
    assert len(dispatch._primitive_cache) <= 20
    assert len(f._cache) <= 20
  # Flat after the first round (a little slack for allocator arenas).
  assert counts[2] <= counts[0] * 1.1 + 30, counts
  # Evicted signatures still work (recompiled on demand).
  assert float(f(jnp.ones(1))[0]) == 3.0
