"""The caches under threads, each scenario in a fresh process.

With a switch interval of 1 us (threads swap between almost any two bytecodes) and
caches bounded to a few entries (so every thread hits, misses and evicts), 8 threads
run jit over many shapes, eager primitives, eager cond/scan, random.split and
`jax.clear_caches()` at once: every result must equal NumPy's (or a single-threaded
reference), no exception may escape, and no cache may hold more than its bound.
Also: concurrent first calls of one jitted function, thread-local contexts entered in
one thread only, and the counts of `executable_cache.stats()`.
"""
import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow  # every test here starts fresh Python processes

_PRELUDE = """
import json, sys, threading, traceback
sys.setswitchinterval(1e-6)
import numpy as np
import xjax as jax
import xjax.numpy as jnp
from xjax import lax
from xjax._src import executable_cache

errors = []

def guarded(fn):
  def run(*args):
    try:
      fn(*args)
    except BaseException:
      errors.append(traceback.format_exc())
  return run

def run_threads(target, n=8):
  threads = [threading.Thread(target=guarded(target), args=(i,)) for i in range(n)]
  for t in threads:
    t.start()
  for t in threads:
    t.join(120)
  assert not any(t.is_alive() for t in threads), "a thread hangs"
"""


def _run(code: str, timeout: float = 90) -> dict:
  """Runs `code` (after the prelude) in a fresh interpreter; returns the JSON it prints last."""
  env = dict(os.environ)
  env.pop("XLA_FLAGS", None)
  proc = subprocess.Popen([sys.executable, "-c", _PRELUDE + textwrap.dedent(code)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
  try:
    out, err = proc.communicate(timeout=timeout)
  except subprocess.TimeoutExpired:
    os.kill(proc.pid, signal.SIGKILL)
    out, err = proc.communicate()
    pytest.fail(f"the subprocess hung (killed after {timeout} s):\n{err[-4000:]}")
  assert proc.returncode == 0, err[-6000:]
  return json.loads(out.strip().splitlines()[-1])


def test_threads_hit_miss_evict_and_clear():
  result = _run("""
    executable_cache.executables.maxsize = 8
    f = jax.jit(lambda x: x * 2.0 + 1.0)
    f._cache.maxsize = 3
    f._jaxpr_cache.maxsize = 3

    def pos(x):
      return x + 1.0

    def neg(x):
      return x - 1.0

    def step(c, x):
      return c + x, c * x

    keys = [jax.random.key(i) for i in range(3)]
    want_split = [np.asarray(jax.random.key_data(jax.random.split(k, 3))) for k in keys]
    over_bound = []

    def check_bounds():
      for cache in (executable_cache.executables, f._cache, f._jaxpr_cache):
        with cache._lock:
          if len(cache._data) > cache.maxsize:
            over_bound.append((cache.name, len(cache._data)))

    def worker(i):
      rng = np.random.default_rng(i)
      for it in range(12):
        n = int(rng.integers(1, 7))
        x = np.arange(n, dtype=np.float32) + i
        kind = (i + it) % 6
        if kind == 0:
          for _ in range(2):  # a miss (or hit), then a hit of the memo paths
            np.testing.assert_array_equal(f(jnp.asarray(x)), x * 2 + 1)
        elif kind == 1:
          np.testing.assert_allclose(jnp.sin(x) * 3.0 + jnp.cumsum(x), np.sin(x) * 3 + np.cumsum(x),
                                     rtol=1e-5, atol=1e-5)
        elif kind == 2:
          want = x + 1 if x.sum() > 3 else x - 1
          np.testing.assert_array_equal(lax.cond(jnp.sum(x) > 3, pos, neg, x), want)
        elif kind == 3:
          c, ys = lax.scan(step, jnp.float32(1), x)
          np.testing.assert_allclose(c, 1 + x.sum(), rtol=1e-6)
          np.testing.assert_allclose(ys, (1 + np.concatenate([[0], np.cumsum(x)[:-1]])) * x,
                                     rtol=1e-6)
        elif kind == 4:
          j = it % 3
          np.testing.assert_array_equal(jax.random.key_data(jax.random.split(keys[j], 3)),
                                        want_split[j])
        else:
          g = jax.jit(lambda y, k=it: y * k)  # a new function: a new cache to find
          np.testing.assert_array_equal(g(x), x * it)
        if i == 0 and it % 4 == 3:
          jax.clear_caches()
        check_bounds()

    run_threads(worker)
    print(json.dumps({"errors": errors, "over_bound": over_bound,
                      "stats": {k: list(v) for k, v in executable_cache.stats().items()}}))
  """)
  assert result["errors"] == []
  assert result["over_bound"] == []


def test_concurrent_first_calls():
  result = _run("""
    outs = {}

    def make_worker(f, barrier, shape):
      def worker(i):
        x = np.full(shape, i, np.float32)
        barrier.wait(30)  # every thread misses together
        outs[(shape, i)] = out = np.asarray(f(x))
        np.testing.assert_allclose(out, np.cos(x) * i + 1, rtol=1e-6, atol=1e-6)
      return worker

    sizes = []
    for round_ in range(4):
      f = jax.jit(lambda x: jnp.cos(x) * x[(0,) * x.ndim] + 1)
      run_threads(make_worker(f, threading.Barrier(8), (round_ + 1, 2)))
      sizes.append(f._cache_size())
    print(json.dumps({"errors": errors, "sizes": sizes, "n": len(outs)}))
  """)
  assert result["errors"] == []
  assert result["n"] == 32
  assert result["sizes"] == [1, 1, 1, 1]  # one signature each: the first entry stored is kept


def test_thread_local_contexts_stay_in_their_thread():
  result = _run("""
    promote = jax.jit(lambda x: x.astype(jnp.int8) + x.astype(jnp.uint8))
    widen = jax.jit(lambda x: x * jnp.ones((), dtype=float))
    names = jax.jit(lambda x: x + 10.0 * len(jax.sharding.get_abstract_mesh().axis_names))
    mesh = jax.make_mesh((1,), ("a",), devices=jax.devices()[:1])
    x = np.array([1.0, 2.0, 3.0], np.float32)
    seen = {}

    def worker(i):
      role = i % 4
      for _ in range(25):
        if role == 0:
          with jax.numpy_dtype_promotion("strict"):
            try:
              promote(x)
            except Exception as e:  # the error type is checked below
              seen.setdefault(role, set()).add(type(e).__name__)
            else:
              raise AssertionError("strict promotion in this thread did not raise")
        elif role == 1:
          with jax.enable_x64(True):
            out = widen(x)
          assert out.dtype == np.float64, out.dtype
          np.testing.assert_array_equal(out, x)
        elif role == 2:
          with jax.set_mesh(mesh):
            np.testing.assert_array_equal(names(x), x + 10)
        else:
          out = promote(x)
          assert out.dtype == np.int16, out.dtype
          np.testing.assert_array_equal(out, 2 * x)
          out = widen(x)
          assert out.dtype == np.float32, out.dtype
          np.testing.assert_array_equal(names(x), x)

    run_threads(worker)
    print(json.dumps({"errors": errors, "seen": {k: sorted(v) for k, v in seen.items()}}))
  """)
  assert result["errors"] == []
  assert result["seen"] == {"0": ["TypePromotionError"]}


def test_stats_count_hits_misses_evictions():
  result = _run("""
    cache = executable_cache.executables
    jax.clear_caches()
    s0 = cache.stats()
    cache.maxsize = 4
    xs = [np.arange(n, dtype=np.float32) for n in range(1, 9)]
    for x in xs:  # 8 shapes of one primitive: 8 misses, evictions beyond 4
      lax.neg(x)
    s1 = cache.stats()
    lax.neg(xs[-1])  # the most recent shape: a hit
    s2 = cache.stats()
    lax.neg(xs[0])  # evicted long ago: a miss and an eviction
    s3 = cache.stats()
    total = executable_cache.stats()["executables"]
    jax.clear_caches()
    s4 = cache.stats()
    print(json.dumps({"s": [list(s) for s in (s0, s1, s2, s3, s4)], "total": list(total)}))
  """)
  s0, s1, s2, s3, s4 = [dict(zip(("hits", "misses", "evictions", "maxsize", "currsize"), s))
                        for s in result["s"]]
  assert (s0["hits"], s0["misses"], s0["evictions"], s0["currsize"]) == (0, 0, 0, 0)
  assert s1["misses"] >= 8 and s1["currsize"] == 4
  assert s1["evictions"] == s1["misses"] - 4
  assert (s2["hits"], s2["misses"], s2["evictions"]) == (s1["hits"] + 1, s1["misses"],
                                                         s1["evictions"])
  assert (s3["misses"], s3["evictions"], s3["currsize"]) == (s2["misses"] + 1,
                                                             s2["evictions"] + 1, 4)
  assert result["total"][:3] == result["s"][3][:3]  # one cache of that name
  assert (s4["hits"], s4["misses"], s4["evictions"], s4["currsize"]) == (0, 0, 0, 0)
