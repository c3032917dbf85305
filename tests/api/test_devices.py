"""Devices and placement: committed/uncommitted arrays, computation follows data."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp


def test_single_cpu_device_by_default():
  devices = xjax.devices()
  assert repr(devices) == "[CpuDevice(id=0)]"
  assert str(devices[0]) == "cpu:0"
  assert xjax.device_count() == 1 and xjax.local_device_count() == 1
  assert xjax.local_devices() == devices
  assert xjax.default_backend() == "cpu"


def test_device_put_commits_and_default_placement_does_not():
  x = jnp.ones(3)
  assert not x.committed and x.device == xjax.devices()[0]
  y = xjax.device_put(np.ones(3), xjax.devices()[0])
  assert y.committed and y.devices() == {xjax.devices()[0]}
  assert xjax.device_put(np.ones(3)).committed is False


def test_device_put_of_pytree():
  out = xjax.device_put({"a": np.ones(2), "b": (1.0, np.int32(3))})
  assert isinstance(out["a"], xjax.Array) and isinstance(out["b"][1], xjax.Array)
  assert repr(out["b"][0]) == "Array(1., dtype=float32, weak_type=True)"


def _run(code: str, device_count: int = 4) -> str:
  env = dict(os.environ)
  env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={device_count}"
  proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                        capture_output=True, text=True)
  assert proc.returncode == 0, proc.stderr
  return proc.stdout


@pytest.mark.slow
def test_several_cpu_devices_from_xla_flags():
  out = _run("""
      import xjax
      print(xjax.device_count(), xjax.devices())
  """)
  assert out.strip() == "4 [CpuDevice(id=0), CpuDevice(id=1), CpuDevice(id=2), CpuDevice(id=3)]"


@pytest.mark.slow
def test_computation_follows_committed_data():
  out = _run("""
      import numpy as np, xjax, xjax.numpy as jnp
      d = xjax.devices()
      x = xjax.device_put(np.arange(3.0, dtype=np.float32), d[2])
      y = x * 2 + jnp.ones(3)
      z = xjax.jit(lambda a: a + 1)(x)
      print(y.device, y.committed, z.device, z.committed, (jnp.ones(2) + 1).device)
      try:
        x + xjax.device_put(np.ones(3, np.float32), d[1])
      except ValueError as e:
        print("ValueError", "incompatible devices" in str(e))
  """)
  assert out.split("\n")[:2] == ["TFRT_CPU_2 True TFRT_CPU_2 True TFRT_CPU_0".replace(
      "TFRT_CPU_2", "cpu:2").replace("TFRT_CPU_0", "cpu:0"), "ValueError True"]


@pytest.mark.slow
def test_default_device_config():
  out = _run("""
      import xjax, xjax.numpy as jnp
      d = xjax.devices()
      with xjax.default_device(d[3]):
        x = jnp.ones(2) + 1
      print(x.device, x.committed)
  """)
  assert out.strip() == "cpu:3 False"


@pytest.mark.slow
def test_unsupported_platform_request_errors():
  env = dict(os.environ, JAX_PLATFORMS="tpu")
  proc = subprocess.run([sys.executable, "-c", "import xjax; xjax.devices()"], env=env,
                        capture_output=True, text=True)
  assert proc.returncode != 0 and "Unable to initialize backend 'tpu'" in proc.stderr


def _run_with_platforms(platforms, code="import xjax; print(xjax.devices())", extra_path=None):
  env = dict(os.environ, JAX_PLATFORMS=platforms)
  if extra_path:
    env["PYTHONPATH"] = os.pathsep.join([str(extra_path), env.get("PYTHONPATH", "")])
  return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                        timeout=120)


@pytest.mark.slow
def test_cuda_without_its_plugin_says_how_to_install_it():
  proc = _run_with_platforms("cuda")
  assert proc.returncode != 0
  assert "Unable to initialize backend 'cuda': no CUDA PJRT plugin is installed" in proc.stderr
  assert "pip install 'xjax[cuda12]'" in proc.stderr
  # A list falls through to the next platform that works, as JAX_PLATFORMS does in JAX.
  proc = _run_with_platforms("cuda,cpu")
  assert proc.returncode == 0 and "CpuDevice(id=0)" in proc.stdout


@pytest.mark.slow
def test_a_broken_cuda_plugin_is_reported_with_its_path(tmp_path):
  # The plugin's shared library is found in the `jax_plugins` namespace package, as
  # `pip install 'xjax[cuda12]'` lays it out; this one is not a library.
  folder = tmp_path / "jax_plugins" / "xla_cuda12"
  folder.mkdir(parents=True)
  (folder / "xla_cuda_plugin.so").write_bytes(b"not a shared library")
  proc = _run_with_platforms("cuda", extra_path=tmp_path)
  assert proc.returncode != 0
  assert "Unable to initialize backend 'cuda' with the plugin" in proc.stderr
  assert str(folder / "xla_cuda_plugin.so") in proc.stderr
  # With no platform asked for, an unusable plugin warns and the CPU serves.
  proc = _run_with_platforms("", extra_path=tmp_path)
  assert proc.returncode == 0 and "CpuDevice(id=0)" in proc.stdout
  assert "falling back to cpu" in proc.stderr


def test_pmap_and_a_one_device_mesh_in_a_one_device_process():
  # XLA reports no parameter shardings for a one-partition program: values are whole.
  out = xjax.pmap(lambda x: x * 2)(xjax.numpy.ones((1, 3)))
  np.testing.assert_array_equal(out, np.full((1, 3), 2.0))
  mesh = xjax.make_mesh((1,), ("x",))
  s = xjax.sharding.NamedSharding(mesh, xjax.P("x"))
  y = xjax.jit(lambda a: a + 1, out_shardings=s)(xjax.device_put(np.arange(4.0), s))
  np.testing.assert_array_equal(y, np.arange(4.0) + 1)
