"""examples/data_parallel.py on 8 forced CPU devices: sharded training matches one device.

Each run is a subprocess with XLA_FLAGS set, so this file runs in the one-device suite.
"""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # every test here starts fresh Python processes

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "data_parallel.py"
SHORT = ["--epochs", "2", "--hidden", "32", "32", "--batch-size", "64"]


def run_example(*args, check=True):
  env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
             JAX_PLATFORMS="cpu")
  out = subprocess.run([sys.executable, str(EXAMPLE), *SHORT, *args], env=env,
                       capture_output=True, text=True, timeout=120)
  if check:
    assert out.returncode == 0, out.stderr
  return out


def losses(stdout):
  line, = (line for line in stdout.splitlines() if line.startswith("per-epoch losses"))
  return np.array([float(v) for v in line.split()[2:]])


@pytest.fixture(scope="module")
def one_device_losses():
  out = run_example("--single-device")
  assert "one cpu device" in out.stdout
  result = losses(out.stdout)
  assert result.shape == (2,) and result[1] < result[0]
  return result


def test_data_parallel_over_8_devices_matches_one_device(one_device_losses):
  out = run_example().stdout
  assert "mesh {'data': 8} of 8 cpu devices, 8 images per device per step" in out
  assert "layer 0 w (64, 32): shard (64, 32) on 8 devices" in out  # replicated
  np.testing.assert_allclose(losses(out), one_device_losses, rtol=0, atol=1e-5)


def test_model_parallel_2_matches_one_device(one_device_losses):
  out = run_example("--model-parallel", "2").stdout
  assert "mesh {'data': 4, 'model': 2} of 8 cpu devices, 16 images per device per step" in out
  assert "layer 0 w (64, 32): shard (64, 16) on 8 devices" in out  # split along 'model'
  assert "layer 1 w (32, 32): shard (32, 16) on 8 devices" in out
  assert "layer 2 w (32, 10): shard (32, 10) on 8 devices" in out  # the output layer: replicated
  np.testing.assert_allclose(losses(out), one_device_losses, rtol=0, atol=1e-5)


def test_batch_not_divisible_by_the_data_axis_is_refused():
  out = run_example("--model-parallel", "2", "--batch-size", "6", check=False)
  assert out.returncode != 0
  assert "--batch-size 6 is not a multiple of the 4 devices along the mesh's 'data' axis" in (
      out.stderr)
