"""Concurrent first use and concurrent calls, each run in a fresh process (issue 12).

A fresh process matters: the races were in creating the client and the first
caches. Before the fix about 1 in 3 processes failed with "Buffer passed to
Execute() ... is on device cpu:0, but replica is assigned to device cpu:0"
(two threads each made a PJRT client).
"""
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow  # every test here starts fresh Python processes

RUNS = 4

_EIGHT_THREADS = textwrap.dedent("""
    import threading
    import numpy as np
    import xjax, xjax.numpy as jnp
    from xjax import lax
    from xjax._src.config import enable_x64

    errors = []
    start = threading.Barrier(8)
    shared = xjax.jit(lambda x, y: jnp.tanh(x) @ y)   # one cache, hit by every thread

    def work(i):
      try:
        start.wait()
        own = xjax.jit(lambda x: x * 2 + i)
        a = np.full((3, 3), i, np.float32)
        for _ in range(25):
          np.testing.assert_allclose(own(np.ones(3, np.float32) * i), np.ones(3) * 3 * i)
          np.testing.assert_allclose(jnp.sin(jnp.arange(4.0) + i), np.sin(np.arange(4.0) + i),
                                     rtol=1e-6)
          np.testing.assert_allclose(shared(a, a), np.tanh(a) @ a, rtol=1e-5)
          g = xjax.grad(lambda x: jnp.sum(x ** 2))(jnp.ones(3) * i)
          np.testing.assert_allclose(g, 2 * i * np.ones(3))
          c = lax.scan(lambda c, x: (c + x, c), 0.0, jnp.arange(5.0))[0]
          assert float(c) == 10.0
          # Thread-local flags: x64 in odd threads only, never seen by the others.
          if i % 2:
            with enable_x64(True):
              assert jnp.ones(2).dtype == np.float64
          else:
            assert jnp.ones(2).dtype == np.float32
      except BaseException as e:
        errors.append(f"thread {i}: {e!r}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads: t.start()
    for t in threads: t.join()
    print("\\n".join(errors) if errors else "OK")
""")


def _run(code: str, env_extra=None) -> subprocess.CompletedProcess:
  env = {**os.environ, **(env_extra or {})}
  return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                        timeout=300, env=env)


@pytest.mark.parametrize("run", range(RUNS))
def test_eight_threads_first_use_in_fresh_process(run):
  proc = _run(_EIGHT_THREADS)
  assert proc.returncode == 0, proc.stderr[-3000:]
  assert proc.stdout.strip() == "OK", proc.stdout[-3000:]


_DEFAULT_DEVICE_PER_THREAD = textwrap.dedent("""
    import threading
    import xjax, xjax.numpy as jnp

    devs = xjax.devices()
    assert len(devs) == 2, devs
    entered, release = threading.Event(), threading.Event()
    seen = {}

    def inner():
      with xjax.default_device(devs[1]):
        seen["inner"] = jnp.ones(2).device
        entered.set()
        release.wait(30)
        seen["inner_later"] = jnp.ones(2).device

    t = threading.Thread(target=inner)
    t.start()
    entered.wait(30)
    seen["outer"] = jnp.ones(2).device
    release.set()
    t.join()
    assert seen == {"inner": devs[1], "inner_later": devs[1], "outer": devs[0]}, seen
    print("OK")
""")


def test_default_device_override_stays_in_its_thread():
  proc = _run(_DEFAULT_DEVICE_PER_THREAD,
              {"XLA_FLAGS": "--xla_force_host_platform_device_count=2"})
  assert proc.returncode == 0, proc.stderr[-3000:]
  assert proc.stdout.strip() == "OK"


_FIRST_CALLS = textwrap.dedent("""
    import numpy as np
    import xjax, xjax.numpy as jnp
    print("ready", flush=True)
    f = xjax.jit(lambda x: jnp.tanh(jnp.sin(x) @ x.T).sum() * 3)
    for i in range(200):
      y = f(np.ones((20 + i, 20 + i), np.float32))
      z = jnp.cos(y) + i
""")


@pytest.mark.parametrize("delay", [0.0, 0.05, 0.2])
def test_keyboard_interrupt_during_first_calls_does_not_crash(delay):
  # Issue 12 saw a segfault in 3 of 12 runs; a KeyboardInterrupt must end the
  # process as Python does (killed by SIGINT after the traceback), not by a crash.
  import signal
  import time
  proc = subprocess.Popen([sys.executable, "-c", _FIRST_CALLS], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
  try:
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
  finally:
    if proc.poll() is None:
      proc.kill()
      proc.wait()
  assert proc.returncode in (-signal.SIGINT, 0), (proc.returncode, err[-2000:])
  if proc.returncode:
    assert "KeyboardInterrupt" in err
