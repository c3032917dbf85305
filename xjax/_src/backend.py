"""The boundary with XLA: the only module that imports jaxlib.

It offers devices, host-to-device transfer, compilation of StableHLO text,
execution and device-to-host transfer. Nothing of jaxlib's own tracing,
pytree, jit or sharding logic is used.
"""
from __future__ import annotations

import functools
import os
import re

import numpy as np

# jaxlib's CPU client logs two INFO lines when it starts; JAX prints nothing.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

from jaxlib import _jax  # noqa: E402
from jaxlib import xla_client  # noqa: E402

from xjax._src.config import config  # noqa: E402

_SUPPORTED_PLATFORMS = ("cpu",)


def _requested_platforms() -> list[str]:
  text = config.jax_platforms or config.jax_platform_name or ""
  return [p.strip().lower() for p in text.split(",") if p.strip()]


def _cpu_device_count() -> int | None:
  match = re.search(r"--xla_force_host_platform_device_count=(\d+)",
                    os.environ.get("XLA_FLAGS", ""))
  return int(match.group(1)) if match else None


@functools.cache
def client():
  """The PJRT client, created on first use (honours JAX_PLATFORMS)."""
  requested = _requested_platforms()
  if requested and not any(p in _SUPPORTED_PLATFORMS for p in requested):
    raise RuntimeError(
        f"Unable to initialize backend '{requested[0]}': xjax supports only the "
        f"'cpu' platform here (requested platforms: {','.join(requested)}). "
        "Set JAX_PLATFORMS=cpu.")
  count = _cpu_device_count()
  if count is None:
    return xla_client.make_cpu_client()
  return xla_client.make_cpu_client(num_devices=count)


def devices() -> list:
  return list(client().devices())


def platform() -> str:
  return client().platform


# dlpack refuses the ml_dtypes types (bfloat16, float8, int4); they travel as
# same-width unsigned integers and are bitcast on the device.
_DLPACK_KINDS = frozenset("biufc")


def _is_float0(dtype) -> bool:
  return dtype.kind == "V" and dtype.names == ("float0",)


def transfer_to_device(x: np.ndarray, device):
  """Copies a NumPy array to `device`; returns a single-device buffer.

  float0 values (tangents of integers) carry no data: they travel as bool zeros,
  as JAX lowers them.
  """
  if _is_float0(x.dtype):
    x = np.zeros(x.shape, np.bool_)
  if x.dtype.kind not in _DLPACK_KINDS or x.dtype.name == "bfloat16":
    carrier = np.array(x, order="C").view(np.dtype(f"uint{8 * x.dtype.itemsize}"))
    buf = _jax.dlpack_managed_tensor_to_buffer(carrier.__dlpack__(), device, None)
    return _bitcast_on_device(buf, x.shape, x.dtype, device)
  if not x.flags.c_contiguous or not x.flags.writeable:
    x = np.array(x, order="C")  # dlpack refuses read-only and strided arrays
  return _jax.dlpack_managed_tensor_to_buffer(x.__dlpack__(), device, None)


_MLIR_FLOAT_NAMES = {"bfloat16": "bf16", "float8_e4m3fn": "f8E4M3FN", "float8_e5m2": "f8E5M2",
                     "float8_e4m3fnuz": "f8E4M3FNUZ", "float8_e5m2fnuz": "f8E5M2FNUZ",
                     "float8_e4m3b11fnuz": "f8E4M3B11FNUZ", "int4": "i4", "uint4": "ui4"}


def _bitcast_on_device(buf, shape, dtype, device):
  exe = _bitcast_executable(tuple(shape), dtype.name, dtype.itemsize, device)
  return exe.execute([buf])[0]


@functools.cache
def _bitcast_executable(shape, dtype_name, itemsize, device):
  dims = "".join(f"{d}x" for d in shape)
  src = f"tensor<{dims}ui{8 * itemsize}>"
  dst = f"tensor<{dims}{_MLIR_FLOAT_NAMES[dtype_name]}>"
  text = (f"module @bitcast {{\n  func.func public @main(%arg0: {src}) -> {dst} {{\n"
          f"    %0 = \"stablehlo.bitcast_convert\"(%arg0) : ({src}) -> {dst}\n"
          f"    return %0 : {dst}\n  }}\n}}\n")
  return compile_module(text, device)


def compile_module(mlir_text: str, device, host_callbacks=()):
  """Compiles StableHLO module text for one device."""
  options = xla_client.CompileOptions()
  # Without an explicit assignment the single replica runs on device 0.
  options.device_assignment = xla_client.DeviceAssignment.create(np.array([[device.id]]))
  devices = xla_client.DeviceList((device,))
  if host_callbacks:
    return client().compile_and_load(mlir_text, devices, options, list(host_callbacks))
  return client().compile_and_load(mlir_text, devices, options)


def result_handlers(avals, device, committed: bool) -> list:
  """Handlers turning an execution's outputs into buffers (one per output aval)."""
  sharding = _jax.SingleDeviceSharding(device)
  return [_jax.array_result_handler(_BoolAval(a) if _is_float0(a.dtype) else a, sharding,
                                    committed, _skip_checks=True) for a in avals]


class _BoolAval:
  """The aval jaxlib sees for a float0 output: bool of the same shape."""
  __slots__ = ("shape", "dtype", "weak_type")

  def __init__(self, aval):
    self.shape, self.dtype, self.weak_type = aval.shape, np.dtype(np.bool_), False


def execute(executable, buffers, handlers):
  """Runs `executable` on device buffers; returns the output buffers (asynchronously).

  (jaxlib's own `execute` wrapper tries to import `jax` on every call; the
  result handlers avoid that and cost ~1 µs.)
  """
  return executable.execute_sharded(buffers).consume_with_handlers(handlers)


def to_numpy(buffer) -> np.ndarray:
  """Copies a device buffer to a (read-only) NumPy array, waiting for it to be ready."""
  return buffer._single_device_array_to_np_array_did_copy()[0]


def optimized_hlo_text(executable) -> str:
  return executable.hlo_modules()[0].to_string() if hasattr(executable, "hlo_modules") else ""


def block_until_ready(buffer):
  buffer.block_until_ready()


def copy_to_host_async(buffer):
  buffer._copy_single_device_array_to_host_async()


def is_deleted(buffer) -> bool:
  return buffer.is_deleted()


def delete(buffer):
  buffer.delete()


def to_dlpack(buffer, stream=None):
  return _jax.buffer_to_dlpack_managed_tensor(buffer)


def runtime_error_class():
  return _jax.JaxRuntimeError
