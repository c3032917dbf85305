"""`jax.distributed` jobs of 2 and 4 local processes (2 CPU devices each) on 127.0.0.1.

Each test starts `worker.py CASE` in every process of a fresh job and checks
what each process reports against NumPy here. Every process started is stopped
by its PID when the test ends, whatever happens.
"""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from xjax.tools.launch import free_port

pytestmark = pytest.mark.slow  # every test here starts fresh Python processes

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "worker.py")
DEVICES_PER_PROCESS = 2
TIMEOUT_S = 180


def _env(n: int, i: int, port: int) -> dict:
  env = dict(os.environ, JAX_COORDINATOR_ADDRESS=f"127.0.0.1:{port}", JAX_NUM_PROCESSES=str(n),
             JAX_PROCESS_ID=str(i), PYTHONUNBUFFERED="1",
             XLA_FLAGS=f"--xla_force_host_platform_device_count={DEVICES_PER_PROCESS}")
  env.pop("JAX_PLATFORMS", None)
  return env


def run_job(n: int, case: str, timeout: float = TIMEOUT_S):
  """Runs `worker.py case` as an n-process job; returns [(returncode, stdout, stderr)]."""
  port = free_port()
  procs = []
  try:
    for i in range(n):
      procs.append(subprocess.Popen([sys.executable, WORKER, case], env=_env(n, i, port),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    deadline = time.monotonic() + timeout
    outs = []
    for p in procs:
      out, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
      outs.append((p.returncode, out, err))
    return outs
  finally:
    for p in procs:
      if p.poll() is None:
        os.kill(p.pid, signal.SIGKILL)
        p.wait()


def results(n: int, case: str) -> list:
  """Each process's RESULT of `case` (the job must succeed)."""
  out = []
  for i, (rc, stdout, stderr) in enumerate(run_job(n, case)):
    assert rc == 0, f"process {i} of {n} exited with {rc}:\n{stdout}\n{stderr[-4000:]}"
    lines = [line for line in stdout.splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, stdout
    out.append(json.loads(lines[0][len("RESULT "):]))
  return out


def _global_rows(n: int, rows: int = 4) -> np.ndarray:
  """What worker._global_rows builds: process p's rows are 100 * p + [0..rows)."""
  return np.concatenate([np.arange(rows, dtype=np.float32) + 100 * p for p in range(n)])


@pytest.fixture(scope="module", params=[2, 4], ids=lambda n: f"{n}procs")
def n(request):
  return request.param


def test_queries(n):
  seen = results(n, "queries")
  ids = seen[0]["device_ids"]
  assert len(ids) == n * DEVICES_PER_PROCESS and len(set(ids)) == len(ids)
  owners = [p for p in range(n) for _ in range(DEVICES_PER_PROCESS)]
  for i, r in enumerate(seen):
    assert r["process_index"] == i
    assert r["process_count"] == n
    assert r["process_indices"] == list(range(n))
    assert r["initialized"] is True
    assert r["device_ids"] == ids  # the same global list in every process
    assert r["device_processes"] == owners
    mine = [d for d, p in zip(ids, owners) if p == i]
    assert r["local_ids"] == mine
    assert r["default_device"] == mine[0]
    assert r["local_of_0"] == ids[:DEVICES_PER_PROCESS]
    assert r["local_device_count"] == DEVICES_PER_PROCESS
    assert r["device_count"] == n * DEVICES_PER_PROCESS
    assert r["bad_process"] == ["ValueError", f"Unknown process_index {n}"]
    assert r["second_initialize"][0] == "RuntimeError"
    assert "must be called before any JAX calls" in r["second_initialize"][1]
    assert r["initialize_twice"] == ["RuntimeError",
                                     "distributed.initialize should only be called once."]


def test_arrays(n):
  x = _global_rows(n)
  per_device = len(x) // (n * DEVICES_PER_PROCESS)
  for i, r in enumerate(results(n, "arrays")):
    assert r["shape"] == [len(x)]
    assert r["fully_addressable"] is False
    starts = [a[1] for a in r["addressable"]]
    assert starts == [4 * i + k * per_device for k in range(DEVICES_PER_PROCESS)]
    for _, start, stop, data in r["addressable"]:
      np.testing.assert_array_equal(data, x[start:stop])
    remote = [is_none for _, is_none in r["global_shards"]]
    assert remote == [p != i for p in range(n) for _ in range(DEVICES_PER_PROCESS)]
    assert r["to_numpy"][0] == "RuntimeError"
    assert "spans non-addressable (non process local) devices" in r["to_numpy"][1]
    assert r["repr"] == f"Array(shape=({len(x)},), dtype=float32)"
    np.testing.assert_array_equal(r["callback"], np.arange(len(x)))
    ids = r["singles"][::per_device]
    np.testing.assert_array_equal(r["singles"], np.repeat(ids, per_device))
    np.testing.assert_array_equal(r["replicated"], 2 * x)
    np.testing.assert_array_equal(r["resharded"], x)
    np.testing.assert_array_equal(r["donated"], x - 1)
    assert r["replicated_repr"].startswith("Array([")
    np.testing.assert_array_equal(r["device_put"], np.arange(8.0).reshape(4, 2))
    assert r["device_put_differs"][0] == "AssertionError"
    assert "passed to device_put is not the same on each process" in r["device_put_differs"][1]
    assert r["committed_local"][0] == "ValueError"
    assert "represents addressable devices" in r["committed_local"][1]


def test_make_array_from_process_local_data(n):
  datas = [(np.arange(8.0) + 100 * p).reshape(2, 4) for p in range(n)]
  for r in results(n, "local_data"):
    assert r["rows"][0] == [2 * n, 4]
    np.testing.assert_array_equal(r["rows"][1], np.concatenate(datas, axis=0))
    assert r["cols"][0] == [2, 4 * n]
    np.testing.assert_array_equal(r["cols"][1], np.concatenate(datas, axis=1))
    np.testing.assert_array_equal(r["replicated_dim"][1], np.concatenate(datas, axis=0))
    assert r["tree"] == {"a": [2 * n, 4], "b": [2 * n, 1]}
    assert r["bad_rows"] == [
        "ValueError", "Invalid host data, each dimension should match either global or process "
        f"shape. In dimension 0, the process data has 1 elements. Process addresses 2 elements "
        f"and global_shape={(2 * n, 4)}."]
    assert r["nones"] == ["ValueError", "global_shape=(None, 4) has Nones. This is not supported."]


def test_jit_across_processes(n):
  x = _global_rows(n)
  for r in results(n, "jit_sum"):
    assert r["total"] == pytest.approx(float(x.sum()))
    assert r["total_addressable"] is False  # replicated over every process's devices
    assert r["grad"] == pytest.approx(float(4 * (x ** 2).sum()), rel=1e-6)
    np.testing.assert_array_equal(r["shifted"], x + 1)
    np.testing.assert_array_equal(r["eager"], x * 3)


def test_collectives_cross_processes(n):
  d = n * DEVICES_PER_PROCESS
  x = _global_rows(n, 2 * DEVICES_PER_PROCESS)
  blocks = x.reshape(d, -1)
  for p, r in enumerate(results(n, "collectives")):
    assert r["psum"] == pytest.approx(float(x.sum()))
    np.testing.assert_array_equal(r["gathered"],
                                  np.concatenate([blocks[0] + i for i in range(d)]))
    np.testing.assert_array_equal(r["rotated"], np.roll(blocks, 1, axis=0).reshape(-1))
    total = sum(DEVICES_PER_PROCESS * (q + 1) for q in range(n))
    np.testing.assert_array_equal(r["pmap"], np.full((DEVICES_PER_PROCESS, 3), total))


def test_multihost_utils(n):
  for p, r in enumerate(results(n, "multihost")):
    assert r["stacked"] == [[q, 2 * q] for q in range(n)]
    assert r["tiled"] == [v for q in range(n) for v in (q, 2 * q)]
    assert r["scalar"] == list(range(n))
    assert r["tree"] == {"a": [float(q) for q in range(n)], "b": [[[q] for q in range(n)]]}
    assert r["broadcast"] == [5.0]
    assert r["broadcast_last"] == [n - 1]
    assert r["global_shape"] == [4 * n]
    np.testing.assert_array_equal(
        r["global_value"], np.concatenate([np.arange(4.0) + 10 * q for q in range(n)]))
    assert r["untiled_global"] == [
        "ValueError", "Gathering global non-fully-addressable arrays only supports tiled=True"]
    np.testing.assert_array_equal(r["back"], np.arange(4.0) + 10 * p)
    assert r["back_shape"] == [4]
    assert r["assert_equal_same"] is None
    assert r["assert_equal_differs"][0] == "AssertionError"
    assert r["assert_equal_differs"][1].startswith("differs. Expected: ")
    assert r["preemption"] is False


def test_crashed_peer_fails_the_others_instead_of_hanging():
  start = time.monotonic()
  outs = run_job(2, "crash", timeout=120)
  elapsed = time.monotonic() - start
  (rc0, out0, err0), (rc1, out1, _) = outs
  assert rc1 == 3 and "first" in out1
  assert "first" in out0 and "second" not in out0
  assert rc0 != 0
  # The coordination service notices the silent peer after the 3 s heartbeat timeout and
  # stops this process with XLA's message, as under JAX.
  assert "another task died" in err0, err0[-3000:]
  assert elapsed < 90


_ALONE = textwrap.dedent("""
    import json, xjax as jax
    def error(f):
      try:
        f()
      except Exception as e:
        return [type(e).__name__, str(e)]
    out = dict(
        no_address=error(lambda: jax.distributed.initialize(
            None, 2, 0, cluster_detection_method="deactivate")),
        no_count=error(lambda: jax.distributed.initialize(
            "127.0.0.1:1", None, 0, cluster_detection_method="deactivate")),
        no_id=error(lambda: jax.distributed.initialize(
            "127.0.0.1:1", 2, None, cluster_detection_method="deactivate")),
        str_id=error(lambda: jax.distributed.initialize("127.0.0.1:1", 2, "0", [0])),
        out_of_range=error(lambda: jax.distributed.initialize("127.0.0.1:1", 2, 2, [0])),
        initialized=jax.distributed.is_initialized(),
        shutdown=jax.distributed.shutdown(),
        count=jax.process_count(), index=jax.process_index())
    out["after_backend"] = error(lambda: jax.distributed.initialize("127.0.0.1:1", 2, 0, [0]))
    print("RESULT " + json.dumps(out))
""")


def _run_alone(code: str, timeout: float = 60):
  env = {k: v for k, v in os.environ.items()
         if not k.startswith(("JAX_COORDINATOR", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID"))}
  p = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
  try:
    out, err = p.communicate(timeout=timeout)
  finally:
    if p.poll() is None:
      os.kill(p.pid, signal.SIGKILL)
      p.wait()
  return p.returncode, out, err


def test_initialize_errors():
  rc, out, err = _run_alone(_ALONE)
  assert rc == 0, err
  r = json.loads(out.split("RESULT ", 1)[1])
  assert r["no_address"] == ["ValueError", "coordinator_address should be defined."]
  assert r["no_count"] == ["ValueError", "Number of processes must be defined."]
  assert r["no_id"] == ["ValueError", "The process id of the current process must be defined."]
  assert r["str_id"] == ["TypeError", "process_id must be a nonnegative int. Got process_id=0 "
                         "of type <class 'str'>."]
  assert r["out_of_range"] == ["ValueError", "process_id and num_processes must be nonnegative, "
                               "with process_id < num_processes. Got process_id=2, "
                               "num_processes=2."]
  assert r["initialized"] is False and r["shutdown"] is None
  assert (r["count"], r["index"]) == (1, 0)
  assert r["after_backend"] == [
      "RuntimeError", "jax.distributed.initialize() must be called before any JAX calls that "
      "might initialise the XLA backend. This includes any computation, but also calls to "
      "jax.devices, jax.device_put, and others."]


def test_unreachable_coordinator_fails_within_the_timeout():
  code = ("import xjax as jax\n"
          "jax.distributed.initialize('127.0.0.1:%d', 2, 1, [0], initialization_timeout=2)\n"
          "print('connected')\n" % free_port())
  start = time.monotonic()
  rc, out, err = _run_alone(code, timeout=60)
  assert rc != 0 and "connected" not in out
  # XLA's coordination client gives up after the timeout and stops the process, as under JAX.
  assert "DEADLINE_EXCEEDED" in err and "RegisterTask" in err, err[-3000:]
  assert time.monotonic() - start < 45
