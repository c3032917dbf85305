"""examples/multiprocess_train.py as 2 processes of 2 CPU devices: the losses of
examples/data_parallel.py on 4 devices, and those real JAX printed
(tests/golden/multiprocess_train.json, from tools/golden_multiprocess_train.py).

Every run is a subprocess in its own session (the launcher and its 2 processes),
stopped on a timeout: SIGTERM to the launcher (which stops its processes), then
SIGKILL to the session's process group. The launcher picks a free 127.0.0.1 port.
"""
import json
import os
import pathlib
import signal
import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # every test here starts fresh Python processes

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "multiprocess_train.py"
DATA_PARALLEL = REPO / "examples" / "data_parallel.py"
GOLDEN = json.loads((REPO / "tests" / "golden" / "multiprocess_train.json").read_text())
SHORT = GOLDEN["args"]  # --epochs 2 --hidden 32 32 --batch-size 64
TIMEOUT_S = 240


def clean_env(**extra):
  """This environment without JAX_* variables and XLA_FLAGS, on CPU, plus `extra`."""
  env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_") and k != "XLA_FLAGS"}
  return dict(env, JAX_PLATFORMS="cpu", **extra)


def run(command, env):
  """Runs `command` from the repository root; returns (returncode, stdout, stderr)."""
  proc = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, start_new_session=True)
  try:
    out, err = proc.communicate(timeout=TIMEOUT_S)
  except BaseException:
    proc.send_signal(signal.SIGTERM)
    try:
      proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
      pass
    try:
      os.killpg(proc.pid, signal.SIGKILL)  # the session we started: the launcher's processes
    except ProcessLookupError:
      pass
    proc.communicate()
    raise
  return proc.returncode, out, err


def launch(*args, env=None):
  """Runs the example as 2 processes of 2 devices under xjax's launcher."""
  return run([sys.executable, "-m", "xjax.tools.launch", "-n", "2", "--devices-per-process",
              "2", "--timeout", str(TIMEOUT_S - 30), str(EXAMPLE), *SHORT, *args],
             env or clean_env())


def losses(stdout, prefix=""):
  line, = (line[len(prefix):] for line in stdout.splitlines()
           if line.startswith(prefix + "per-epoch losses"))
  return np.array([float(v) for v in line.split()[2:]])


def test_accuracy(stdout, prefix=""):
  line, = (line[len(prefix):] for line in stdout.splitlines()
           if line.startswith(prefix + "final test accuracy"))
  return float(line.split()[3])


test_accuracy.__test__ = False  # a helper, not a test


@pytest.fixture(scope="module")
def data_parallel_losses():
  code, out, err = run([sys.executable, str(DATA_PARALLEL), *SHORT],
                       clean_env(XLA_FLAGS="--xla_force_host_platform_device_count=4"))
  assert code == 0, err
  assert "mesh {'data': 4} of 4 cpu devices, 16 images per device per step" in out
  result = losses(out)
  assert result.shape == (2,) and result[1] < result[0]
  return result


def test_two_processes_match_data_parallel_on_4_devices(data_parallel_losses):
  code, out, err = launch()
  assert code == 0, err
  assert ("[0] xjax: mesh {'data': 4} of 4 cpu devices in 2 processes, 16 images per device "
          "per step") in out
  assert "[0] process 0: 2 devices, rows 0:32 of each batch" in out
  assert "[0] epoch   2  loss" in out
  # Only process 0 prints (Gloo, the CPU collectives' library, logs to stdout in both).
  assert not [line for line in out.splitlines()
              if line.startswith("[1] ") and not line.startswith("[1] [Gloo]")]
  np.testing.assert_allclose(losses(out, "[0] "), data_parallel_losses, rtol=1e-5)


def test_two_processes_match_real_jax():
  # JAX 0.10.2 draws with the partitionable threefry layout; xjax's default is the other one.
  assert GOLDEN["jax_threefry_partitionable"]
  code, out, err = launch(env=clean_env(JAX_THREEFRY_PARTITIONABLE="1"))
  assert code == 0, err
  golden = GOLDEN["multiprocess_train"]
  np.testing.assert_allclose(losses(out, "[0] "), golden["losses"], rtol=1e-5)
  assert test_accuracy(out, "[0] ") == pytest.approx(golden["test_accuracy"], abs=1e-4)


def test_one_process_runs_without_distributed(data_parallel_losses):
  code, out, err = run([sys.executable, str(EXAMPLE), *SHORT],
                       clean_env(XLA_FLAGS="--xla_force_host_platform_device_count=4"))
  assert code == 0, err
  assert "mesh {'data': 4} of 4 cpu devices in 1 process," in out
  assert "process 0: 4 devices, rows 0:64 of each batch" in out
  np.testing.assert_allclose(losses(out), data_parallel_losses, rtol=1e-5)


def test_batch_not_divisible_by_the_devices_stops_the_job():
  code, out, err = launch("--batch-size", "6")
  assert code != 0
  assert "--batch-size 6 is not a multiple of the 4 devices along the mesh's 'data' axis" in err
  assert "per-epoch losses" not in out
