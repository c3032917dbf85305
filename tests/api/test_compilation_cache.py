"""The persistent compilation cache (issue 20): warm caches in fresh processes compile
nothing, thresholds, flags and environment variables, corrupt and truncated entries,
concurrent writers, SPMD programs, host callbacks, eviction.

Most tests run child processes (the cache is for a later process) with a `tmp_path`
cache directory; each child prints its cache counters and results as JSON.
"""
import json
import os
import subprocess
import sys
import textwrap
import time
import warnings
import zlib

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src import compilation_cache as cc_impl
from xjax._src.config import config
from xjax.experimental.compilation_cache import compilation_cache as cc

TIMEOUT = 240

# A child: jits a few functions, prints {"stats": ..., "results": ...}.
_CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import xjax, xjax.numpy as jnp
    from xjax._src import compilation_cache as cc

    def mlp(params, x):
      (w1, b1), (w2, b2) = params
      return jnp.tanh(x @ w1 + b1) @ w2 + b2

    @xjax.jit
    def step(params, x, y):
      loss = lambda p: jnp.mean((mlp(p, x) - y) ** 2)
      l, g = xjax.value_and_grad(loss)(params)
      return l, xjax.tree_util.tree_map(lambda p, d: p - 0.1 * d, params, g)

    rng = np.random.default_rng(0)
    params = [(np.asarray(rng.normal(size=(8, 16)), np.float32), np.zeros(16, np.float32)),
              (np.asarray(rng.normal(size=(16, 1)), np.float32), np.zeros(1, np.float32))]
    x = np.asarray(rng.normal(size=(32, 8)), np.float32)
    y = np.asarray(rng.normal(size=(32, 1)), np.float32)
    l, new = step(params, x, y)
    cube = xjax.jit(lambda v: v ** 3 + 1.0)(np.arange(4, dtype=np.float32))
    results = [float(l), float(new[0][0].sum()), np.asarray(cube).tolist()]
    assert "jax" not in sys.modules  # jaxlib's serialization alone, no `jax`
    print(json.dumps({"stats": cc.stats(), "results": results}))
""")


def _env(cache_dir, **extra):
  env = dict(os.environ)
  for name in list(env):
    if name.startswith(("JAX_", "XLA_FLAGS")):
      del env[name]
  env["JAX_PLATFORMS"] = "cpu"
  if cache_dir is not None:
    env["JAX_COMPILATION_CACHE_DIR"] = str(cache_dir)
  env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
  env.update({k: str(v) for k, v in extra.items()})
  return env


def _start(code, env):
  return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)


def _finish(proc, timeout=TIMEOUT):
  """The child's parsed JSON (its last stdout line) and its stderr; kills it on timeout."""
  try:
    out, err = proc.communicate(timeout=timeout)
  finally:
    if proc.poll() is None:
      proc.kill()
      proc.wait()
  assert proc.returncode == 0, err[-4000:]
  return json.loads(out.strip().splitlines()[-1]), err


def _run(code, env, timeout=TIMEOUT):
  return _finish(_start(code, env), timeout)


def _entries(d, prefix=""):
  return sorted(n for n in os.listdir(d) if n.endswith(".xjax-cache") and n.startswith(prefix))


def _expected_results():
  out, _ = _run(_CHILD, _env(None))  # no cache
  return out["results"]


def test_cache_is_off_by_default():
  assert config.jax_compilation_cache_dir is None
  assert config.jax_enable_compilation_cache is True
  assert config.jax_persistent_cache_min_compile_time_secs == 1.0
  assert config.jax_persistent_cache_min_entry_size_bytes == 0
  assert config.jax_compilation_cache_max_size == -1
  assert config.jax_raise_persistent_cache_errors is False
  before = cc_impl.stats()
  xjax.jit(lambda v: v * 7.0 - 3.0)(jnp.ones(3))
  assert cc_impl.stats() == before


@pytest.mark.slow
def test_warm_cache_in_a_second_process_compiles_nothing(tmp_path):
  expected = _expected_results()
  cold, _ = _run(_CHILD, _env(tmp_path))
  assert cold["stats"]["hits"] == 0
  assert cold["stats"]["writes"] == cold["stats"]["misses"] >= 2
  assert len(_entries(tmp_path)) == cold["stats"]["writes"]
  warm, _ = _run(_CHILD, _env(tmp_path))
  assert warm["stats"]["misses"] == 0 and warm["stats"]["writes"] == 0
  assert warm["stats"]["hits"] == cold["stats"]["writes"]
  assert warm["stats"]["errors"] == 0
  np.testing.assert_allclose(warm["results"][:2], expected[:2], rtol=1e-6)
  assert warm["results"][2] == expected[2] == [1.0, 2.0, 9.0, 28.0]


@pytest.mark.slow
def test_min_compile_time_threshold(tmp_path):
  out, _ = _run(_CHILD, _env(tmp_path, JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=1000))
  assert out["stats"]["writes"] == 0 and out["stats"]["skipped"] >= 2
  assert _entries(tmp_path) == []


@pytest.mark.slow
@pytest.mark.parametrize("min_size,written", [(10**9, False), (-1, True), (1, True)])
def test_min_entry_size_threshold(tmp_path, min_size, written):
  out, _ = _run(_CHILD, _env(tmp_path, JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES=min_size))
  assert (out["stats"]["writes"] > 0) == written
  assert bool(_entries(tmp_path)) == written


@pytest.mark.slow
def test_enable_flag_from_environment_turns_the_cache_off(tmp_path):
  out, _ = _run(_CHILD, _env(tmp_path, JAX_ENABLE_COMPILATION_CACHE="false"))
  assert out["stats"] == dict.fromkeys(out["stats"], 0)
  assert _entries(tmp_path) == []


@pytest.mark.slow
def test_set_cache_dir_in_a_child(tmp_path):
  code = ("from xjax.experimental.compilation_cache import compilation_cache as c\n"
          f"c.set_cache_dir({str(tmp_path)!r})\n" + _CHILD)
  env = _env(None)
  out, _ = _run(code, env)
  assert out["stats"]["writes"] >= 2 and _entries(tmp_path)
  out, _ = _run(code, env)
  assert out["stats"]["misses"] == 0 and out["stats"]["hits"] >= 2


def test_cache_key_covers_its_parts():
  text = "module @jit_f {\n}"
  parts = (("devices", "[0]"), ("compile_options", b"\x01\x02"))
  key = cc_impl.cache_key(text, parts)
  assert key.startswith("jit_f-") and len(key) == len("jit_f-") + 64
  assert cc_impl.cache_key(text, parts) == key
  assert cc_impl.cache_key(text + " ", parts) != key
  assert cc_impl.cache_key(text, (("devices", "[1]"), parts[1])) != key
  assert cc_impl.cache_key(text, (parts[0], ("compile_options", b"\x01\x03"))) != key
  # Values are length-prefixed: moving a byte between two parts changes the key.
  assert cc_impl.cache_key(text, (("a", "xy"), ("b", "z"))) != \
      cc_impl.cache_key(text, (("a", "x"), ("b", "yz")))


def test_entry_round_trip_and_damage():
  data = cc_impl.encode_entry(b"executable bytes" * 10, 2.5)
  assert cc_impl.decode_entry(data) == (b"executable bytes" * 10, 2.5)
  for bad in (data[:5], data[:-3], data[:20] + bytes([data[20] ^ 0xFF]) + data[21:],
              b"JUNK" + data[4:]):
    with pytest.raises(ValueError):
      cc_impl.decode_entry(bad)


# ----------------------------------------------------------------------------
# In this process: the `cache_dir` fixture (tests/api/conftest.py) sets the flags and restores them.


def _fresh(scale):
  """A jitted function compiling anew (the in-memory caches are cleared) whose module text
  (jit__lambda_) `scale` picks; called on NumPy arrays (no eager operation compiles)."""
  xjax.clear_caches()
  return xjax.jit(lambda v: v * scale + 1.0)


def _one_entry(d):
  (name,) = _entries(d, "jit__lambda_")
  return os.path.join(d, name)


def _recompiles_after_damage(cache_dir, damage, match):
  x = np.arange(4.0, dtype=np.float32)
  np.testing.assert_allclose(_fresh(3.0)(x), np.arange(4.0) * 3 + 1)
  assert cc_impl.stats()["writes"] >= 1
  path = _one_entry(cache_dir)
  with open(path, "rb") as f:
    data = f.read()
  with open(path, "wb") as f:
    f.write(damage(data))
  before = cc_impl.stats()
  with pytest.warns(UserWarning, match=match):
    np.testing.assert_allclose(_fresh(3.0)(x), np.arange(4.0) * 3 + 1)
  after = cc_impl.stats()
  assert after["errors"] == before["errors"] + 1
  assert after["misses"] == before["misses"] + 1
  assert after["writes"] == before["writes"] + 1  # rewritten
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    np.testing.assert_allclose(_fresh(3.0)(x), np.arange(4.0) * 3 + 1)
  assert cc_impl.stats()["hits"] == after["hits"] + 1


def test_truncated_entry_warns_and_recompiles(cache_dir):
  _recompiles_after_damage(cache_dir, lambda d: d[:len(d) // 2], "truncated")


def test_corrupt_entry_warns_and_recompiles(cache_dir):
  def flip(d):
    i = len(d) // 2
    return d[:i] + bytes(b ^ 0x5A for b in d[i:i + 64]) + d[i + 64:]
  _recompiles_after_damage(cache_dir, flip, "Error reading persistent compilation cache")


def test_undeserializable_entry_warns_and_recompiles(cache_dir):
  _recompiles_after_damage(cache_dir, lambda d: cc_impl.encode_entry(b"not an executable", 1.0),
                           "Error reading persistent compilation cache")


def test_empty_entry_warns_and_recompiles(cache_dir):
  _recompiles_after_damage(cache_dir, lambda d: b"", "truncated")


def test_raise_persistent_cache_errors(cache_dir):
  _fresh(5.0)(np.ones(2, np.float32))
  with open(_one_entry(cache_dir), "wb") as f:
    f.write(b"garbage")
  config.update("jax_raise_persistent_cache_errors", True)
  with pytest.raises(ValueError, match="truncated"):
    _fresh(5.0)(np.ones(2, np.float32))


def test_set_cache_dir_takes_effect_after_reset(cache_dir, tmp_path_factory):
  other = tmp_path_factory.mktemp("other")
  _fresh(11.0)(np.ones(2, np.float32))
  assert len(_entries(cache_dir, "jit__lambda_")) == 1
  cc.set_cache_dir(str(other))  # the cache is already initialized: as JAX, no effect yet
  _fresh(12.0)(np.ones(2, np.float32))
  assert len(_entries(cache_dir)) == 2 and _entries(other) == []
  cc.reset_cache()
  _fresh(13.0)(np.ones(2, np.float32))
  assert len(_entries(cache_dir)) == 2 and len(_entries(other)) == 1
  assert cc.is_initialized() is True
  cc.initialize_cache(str(cache_dir))
  assert config.jax_compilation_cache_dir == str(cache_dir)


def test_disabled_before_first_use_stays_off_until_reset(cache_dir):
  cc.reset_cache()
  config.update("jax_enable_compilation_cache", False)
  _fresh(21.0)(np.ones(2, np.float32))
  assert cc.is_initialized() is False
  config.update("jax_enable_compilation_cache", True)
  _fresh(22.0)(np.ones(2, np.float32))
  assert _entries(cache_dir) == []  # decided on the first compilation, as JAX
  cc.reset_cache()
  _fresh(23.0)(np.ones(2, np.float32))
  assert len(_entries(cache_dir, "jit__lambda_")) == 1


def test_host_callback_programs_are_not_cached(cache_dir):
  seen = []

  def make():
    def f(v):
      xjax.debug.callback(lambda a: seen.append(np.asarray(a)), v)
      return v * 31.0
    return xjax.jit(f)

  before = cc_impl.stats()
  np.testing.assert_allclose(make()(np.ones(3, np.float32)), np.full(3, 31.0))
  np.testing.assert_allclose(make()(np.ones(3, np.float32)), np.full(3, 31.0))
  assert len(seen) == 2
  after = cc_impl.stats()
  assert after["skipped"] == before["skipped"] + 2
  assert after["writes"] == before["writes"] and after["hits"] == before["hits"]
  assert _entries(cache_dir) == []


def test_max_size_evicts_least_recently_used(cache_dir):
  _fresh(41.0)(np.ones(2, np.float32))
  size = os.path.getsize(_one_entry(cache_dir))
  config.update("jax_compilation_cache_max_size", int(size * 2.5))
  first = _one_entry(cache_dir)
  past = time.time() - 100
  os.utime(first, (past, past))
  for i in range(4):
    _fresh(42.0 + i)(np.ones(2, np.float32))
    time.sleep(0.01)
  names = _entries(cache_dir)
  assert len(names) == 2
  assert os.path.basename(first) not in names
  assert sum(os.path.getsize(os.path.join(cache_dir, n)) for n in names) <= size * 2.5
  config.update("jax_compilation_cache_max_size", 1)
  with pytest.warns(UserWarning, match="exceeds the maximum cache size"):
    _fresh(50.0)(np.ones(2, np.float32))


# ----------------------------------------------------------------------------
# Several processes, several devices.

_WRITER = textwrap.dedent("""
    import json, os, sys, time
    import xjax, xjax.numpy as jnp
    from xjax._src import compilation_cache as cc
    go = sys.argv[1]
    deadline = time.time() + 120
    while not os.path.exists(go) and time.time() < deadline:
      time.sleep(0.005)
    out = []
    for i in range(12):
      f = xjax.jit(lambda v, i=i: jnp.sin(v) * (i + 1.0) + jnp.cumsum(v) * i)
      out.append(float(f(jnp.arange(64.0)).sum()))
    print(json.dumps({"stats": cc.stats(), "results": out}))
""")


@pytest.mark.slow
def test_concurrent_writers_never_corrupt_the_cache(tmp_path):
  cache = tmp_path / "cache"
  go = tmp_path / "go"
  env = _env(cache)
  procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(go)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
           for _ in range(2)]
  try:
    time.sleep(0.5)
    go.write_text("go")
    outs = [_finish(p)[0] for p in procs]
  finally:
    for p in procs:
      if p.poll() is None:
        p.kill()
        p.wait()
  assert outs[0]["results"] == outs[1]["results"]
  assert all(o["stats"]["errors"] == 0 for o in outs)
  names = _entries(cache)
  assert len(_entries(cache, "jit__lambda_")) == 12
  assert all(o["stats"]["hits"] + o["stats"]["misses"] == len(names) for o in outs)
  assert [n for n in os.listdir(cache) if not n.endswith(".xjax-cache")] == []
  for n in names:
    with open(cache / n, "rb") as f:
      cc_impl.decode_entry(f.read())  # raises on a damaged entry
  # A third process loads every entry.
  code = _WRITER.replace("sys.argv[1]", repr(str(go)))
  out, _ = _run(code, env)
  assert out["stats"]["hits"] == len(names) and out["stats"]["misses"] == 0
  assert out["stats"]["errors"] == 0 and out["results"] == outs[0]["results"]


_SPMD = textwrap.dedent("""
    import json
    import numpy as np
    import xjax, xjax.numpy as jnp
    from xjax._src import compilation_cache as cc
    from xjax.sharding import Mesh, NamedSharding, PartitionSpec as P
    mesh = Mesh(np.array(xjax.devices()).reshape(2, 2), ("x", "y"))
    s = NamedSharding(mesh, P("x", "y"))
    x = xjax.device_put(np.arange(64.0, dtype=np.float32).reshape(8, 8), s)
    f = xjax.jit(lambda a: (a @ a.T + 1.0, a.sum(axis=1)),
                 out_shardings=(s, NamedSharding(mesh, P("x"))))
    m, r = f(x)
    results = [np.asarray(m).tolist(), np.asarray(r).tolist(), str(m.sharding.spec),
               str(r.sharding.spec), len(m.addressable_shards),
               list(m.addressable_shards[1].data.shape)]
    print(json.dumps({"stats": cc.stats(), "results": results}))
""")


@pytest.mark.slow
def test_spmd_program_is_cached_and_reused(tmp_path):
  env = _env(tmp_path, XLA_FLAGS="--xla_force_host_platform_device_count=4")
  cold, _ = _run(_SPMD, env)
  assert cold["stats"]["writes"] >= 1
  warm, _ = _run(_SPMD, env)
  assert warm["stats"]["misses"] == 0 and warm["stats"]["hits"] >= 1
  assert warm["results"] == cold["results"]
  a = np.arange(64.0).reshape(8, 8)
  np.testing.assert_allclose(warm["results"][0], a @ a.T + 1.0)
  np.testing.assert_allclose(warm["results"][1], a.sum(axis=1))
  assert warm["results"][4] == 4
  # The same program over the devices in another order is another executable.
  other, _ = _run(_SPMD.replace("np.array(xjax.devices())", "np.array(xjax.devices()[::-1])"),
                  env)
  assert other["stats"]["hits"] == 0 and other["stats"]["writes"] >= 1
  assert other["results"][:2] == cold["results"][:2]


def test_unusable_cache_directory_warns_and_compiles(cache_dir):
  blocker = cache_dir / "a_file"
  blocker.write_text("not a directory")
  cc.reset_cache()
  cc.set_cache_dir(str(blocker / "cache"))
  with pytest.warns(UserWarning, match="Could not create the persistent compilation cache"):
    np.testing.assert_allclose(_fresh(61.0)(np.ones(2, np.float32)), np.full(2, 62.0))
  np.testing.assert_allclose(_fresh(62.0)(np.ones(2, np.float32)), np.full(2, 63.0))


_JOB = textwrap.dedent("""
    import json
    import numpy as np
    import xjax, xjax.numpy as jnp
    from xjax._src import compilation_cache as cc
    from xjax.experimental import multihost_utils
    from xjax.sharding import NamedSharding, PartitionSpec as P
    xjax.distributed.initialize(initialization_timeout=60)
    mesh = xjax.make_mesh((xjax.device_count(),), ("x",))
    local = np.arange(4, dtype=np.float32) + 100 * xjax.process_index()
    x = xjax.make_array_from_process_local_data(NamedSharding(mesh, P("x")), local)
    before = cc.stats()
    total = xjax.jit(lambda a: jnp.sum(a * a))(x)
    shifted = xjax.jit(lambda a: a + 1, out_shardings=NamedSharding(mesh, P("x")))(x)
    after = cc.stats()
    results = [float(total), multihost_utils.process_allgather(shifted, tiled=True).tolist()]
    print(json.dumps({"stats": {k: after[k] - before[k] for k in after}, "results": results}))
    xjax.distributed.shutdown()
""")


def _run_job(cache_dir, n=2):
  """An n-process `jax.distributed` job on 127.0.0.1 running _JOB; each process's output."""
  from xjax.tools.launch import free_port
  port = free_port()
  procs = []
  try:
    for i in range(n):
      env = _env(cache_dir, JAX_COORDINATOR_ADDRESS=f"127.0.0.1:{port}", JAX_NUM_PROCESSES=n,
                 JAX_PROCESS_ID=i, XLA_FLAGS="--xla_force_host_platform_device_count=2")
      procs.append(_start(_JOB, env))
    return [_finish(p)[0] for p in procs]
  finally:
    for p in procs:
      if p.poll() is None:
        p.kill()
        p.wait()


@pytest.mark.slow
def test_multi_process_job_writes_from_process_0_and_every_process_reads(tmp_path):
  x = np.concatenate([np.arange(4.0) + 100 * p for p in range(2)])
  cold = _run_job(tmp_path)
  assert cold[0]["stats"]["writes"] == 2  # the two jitted programs over all 4 devices
  assert cold[1]["stats"]["writes"] == 0  # as JAX: only process 0 writes
  warm = _run_job(tmp_path)
  for out in cold + warm:
    assert out["results"][0] == pytest.approx(float((x * x).sum()))
    assert out["results"][1] == (x + 1).tolist()
  for out in warm:  # both processes load process 0's executables
    assert out["stats"]["hits"] == 2 and out["stats"]["misses"] == 0
