"""Devices, meshes, counters and skips of JAX's test suite, over xjax.

* Device filters: `skip_on_devices`, `run_on_devices`, `test_device_matches`, the
  `is_device_*` queries (a CPU run answers them as JAX does on CPU).
* Meshes: `create_mesh`, `with_mesh`, `with_explicit_mesh` skip a test (unittest.SkipTest)
  when the process has fewer devices than the mesh needs.
* Counters: `count_jit_tracing_cache_miss`, `count_jit_and_pmap_lowerings`, ... yield a
  function returning how many traces, lowerings or compilations the block caused, read from
  xjax's cache statistics (`executable_cache.stats()`: traces are misses of the jit trace
  cache; xjax lowers exactly when it compiles, so lowerings and compilations are both misses
  of the executable cache). The counts are process-wide, as the suite runs one test at a time.
"""
from __future__ import annotations

import contextlib
import functools
import math
import os
import sys
import tempfile
import unittest
from contextlib import contextmanager

import numpy as np

from xjax._src import devices
from xjax._src import executable_cache
from xjax._src.config import config
from xjax._src.jaxtest import params
from xjax._src.jaxtest.params import device_under_test

# ----------------------------------------------------------------------------------------------
# Devices

def _device_tags() -> set:
  return {device_under_test()}


def test_device_matches(device_types) -> bool:
  """Whether the device under test is one of `device_types` (a list of platform names)."""
  if isinstance(device_types, str):
    raise TypeError("device_types should be a list of strings")
  tags = _device_tags()
  return any(t in tags for t in device_types)


test_device_matches.__test__ = False  # not a test, for pytest's collection


def _device_filter(predicate, skip_reason=None):
  def decorator(test_method):
    @functools.wraps(test_method)
    def wrapper(self, *args, **kwargs):
      if not predicate():
        name = getattr(test_method, "__name__", "[unknown test]")
        raise unittest.SkipTest(
            skip_reason or f"{name} not supported on device with tags {_device_tags()}.")
      return test_method(self, *args, **kwargs)
    return wrapper
  return decorator


def skip_on_devices(*disabled_devices, skip_reason=None):
  """Test-method decorator: skipped on the named platforms."""
  reason = skip_reason or "Skipped on devices with tags: " + ", ".join(disabled_devices)
  return _device_filter(lambda: not test_device_matches(disabled_devices), reason)


def run_on_devices(*enabled_devices, skip_reason=None):
  """Test-method decorator: run only on the named platforms."""
  reason = skip_reason or ("Skipped unless running on devices with tags: "
                           + ", ".join(enabled_devices))
  return _device_filter(lambda: test_device_matches(enabled_devices), reason)


def device_supports_buffer_donation():
  """Test-method decorator: run only on platforms where donation is implemented (JAX 0.10.2's
  list: CPU, GPU, TPU)."""
  return _device_filter(lambda: test_device_matches(["cpu", "gpu", "cuda", "rocm", "tpu"]))


def request_cpu_devices(nr_devices: int) -> None:
  """Asks for at least `nr_devices` CPU devices (effective only before the backend starts)."""
  if config.jax_num_cpu_devices < nr_devices:
    with contextlib.suppress(RuntimeError):
      config.update("jax_num_cpu_devices", nr_devices)


def skip_on_flag(flag_name, skip_value):
  """Test-method decorator: skipped while configuration option `flag_name` is `skip_value`."""
  def decorator(test_method):
    @functools.wraps(test_method)
    def wrapper(self, *args, **kwargs):
      value = _read_flag(flag_name)
      if value == skip_value:
        raise unittest.SkipTest(f"{test_method.__name__} not supported when "
                                f"FLAGS.{flag_name} is {value}")
      return test_method(self, *args, **kwargs)
    return wrapper
  return decorator


def _read_flag(name: str):
  """A flag's value: the test suite's own flags (``jax_skip_slow_tests``, ...) first, as
  JAX's test_util defines them among the configuration flags, then xjax's configuration."""
  own = {"jax_skip_slow_tests": params.SKIP_SLOW_TESTS,
         "jax_num_generated_cases": params.NUM_GENERATED_CASES,
         "jax_max_cases_sampling_retries": params.MAX_CASES_SAMPLING_RETRIES}
  return own[name].value if name in own else getattr(config, name)


def pytest_mark_if_available(marker: str):
  """Decorator: the pytest mark `marker` when pytest is installed."""
  def wrap(func_or_class):
    try:
      import pytest
    except ImportError:
      return func_or_class
    return getattr(pytest.mark, marker)(func_or_class)
  return wrap


def is_running_under_pytest() -> bool:
  return "pytest" in sys.modules


def skip_under_pytest(reason: str):
  return unittest.skipIf(is_running_under_pytest(), "Running under pytest: " + reason)


def is_device_rocm() -> bool:
  return device_under_test() == "gpu" and "rocm" in devices.devices()[0].client.platform_version


def is_device_cuda() -> bool:
  return device_under_test() == "gpu" and "cuda" in devices.devices()[0].client.platform_version


def is_device_tpu(version=None, variant="") -> bool:
  return device_under_test() == "tpu" and (
      version is None or f"v{version}{variant}" in devices.devices()[0].device_kind)


def is_device_tpu_at_least(version: int) -> bool:
  return False if device_under_test() != "tpu" else is_device_tpu(version)


def is_cloud_tpu() -> bool:
  return False


def is_cloud_tpu_at_least(year: int, month: int, day: int) -> bool:
  """True off Cloud TPU (JAX's answer wherever the TPU build date does not apply)."""
  return True


def is_cuda_compute_capability_at_least(capability: str) -> bool:
  if not is_device_cuda():
    return False
  have = tuple(int(x) for x in devices.devices()[0].compute_capability.split("."))
  return have >= tuple(int(x) for x in capability.split("."))


def is_cuda_compute_capability_equal(capability: str) -> bool:
  if not is_device_cuda():
    return False
  have = tuple(int(x) for x in devices.devices()[0].compute_capability.split("."))
  return have == tuple(int(x) for x in capability.split("."))


def is_cuda_version_at_least(major: int, minor: int) -> bool:
  return False if not is_device_cuda() else True


def is_optimized_build() -> bool:
  return True


def is_asan() -> bool:
  return False


is_msan = is_tsan = is_sanitized = is_asan


def is_gil_disabled() -> bool:
  return bool(hasattr(sys, "_is_gil_enabled") and not sys._is_gil_enabled())


def pjrt_c_api_version_at_least(major_version: int, minor_version: int) -> bool:
  return True


def stablehlo_version_at_least(required_version: str) -> bool:
  return True


def jaxlib_version() -> tuple[int, ...]:
  from xjax._src import backend
  return tuple(int(x) for x in backend.jaxlib_version().split(".")[:3])


# ----------------------------------------------------------------------------------------------
# Threads (the suite runs one test at a time here: these only mark tests)

class _ThreadUnsafe(contextlib.ContextDecorator):
  def __enter__(self):
    return self

  def __exit__(self, *exc):
    return False


def thread_unsafe_test(condition: bool = True):
  """Marks a test as not thread-safe: a decorator and context manager that does nothing here
  (tests run one at a time)."""
  return _ThreadUnsafe()


def thread_unsafe_test_class(condition: bool = True):
  return lambda cls: cls


TEST_NUM_THREADS = type("_Flag", (), {"value": int(os.getenv("JAX_TEST_NUM_THREADS", "0"))})()


class JaxTestLoader(unittest.TestLoader):
  """absltest's loader (JAX's also runs tests in threads when JAX_TEST_NUM_THREADS > 1)."""


# ----------------------------------------------------------------------------------------------
# Output capture

@contextmanager
def _capture_output(stream):
  """Captures everything written to `stream`'s file descriptor (native code included); yields
  a function returning it, callable once the block has ended."""
  captured = None

  def get_output() -> str:
    if captured is None:
      raise ValueError("get_output() called while the context is active.")
    return captured

  with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as f:
    saved = os.dup(stream.fileno())
    stream.flush()
    os.dup2(f.fileno(), stream.fileno())
    try:
      yield get_output
    finally:
      stream.flush()
      os.dup2(saved, stream.fileno())
      os.close(saved)
      f.seek(0)
      captured = f.read()


def capture_stdout():
  return _capture_output(sys.stdout)


def capture_stderr():
  return _capture_output(sys.stderr)


# ----------------------------------------------------------------------------------------------
# Counters

def _count_misses(cache_name: str):
  def counter():
    @contextmanager
    def block():
      def misses():
        s = executable_cache.stats().get(cache_name)
        return 0 if s is None else s.misses
      before = misses()
      yield lambda: misses() - before
    return block()
  return counter


count_jit_tracing_cache_miss = _count_misses("jit traces")
count_pjit_cpp_cache_miss = _count_misses("jit signatures")
count_jit_and_pmap_lowerings = _count_misses("executables")
count_jit_compilation_cache_miss = _count_misses("executables")
count_primitive_compiles = _count_misses("executables")


@contextmanager
def count_device_put():
  """Counts host-to-device transfers of arrays in the block (a sharded array once); yields a
  function returning the count so far (mirrors JAX's `count_device_put`)."""
  from xjax._src import backend
  before = backend.transfer_count
  yield lambda: backend.transfer_count - before


@contextmanager
def assert_num_jit_and_pmap_compilations(times):
  with count_jit_and_pmap_lowerings() as count:
    yield
  if count() != times:
    raise AssertionError(f"Expected exactly {times} XLA compilations, but executed {count()}")


# ----------------------------------------------------------------------------------------------
# Meshes

def create_mesh(mesh_shape, axis_names, iota_order=False, axis_types=None):
  """A mesh of the first devices (skipping the test when there are too few)."""
  from xjax._src.sharding import mesh as mesh_lib
  size = math.prod(mesh_shape)
  all_devices = devices.devices()
  if len(all_devices) < size:
    raise unittest.SkipTest(
        f"Test requires {size} global devices and found {len(all_devices)}.")
  if iota_order:
    chosen = sorted(all_devices, key=lambda d: d.id)[:size]
    return mesh_lib.Mesh(np.array(chosen).reshape(mesh_shape), axis_names,
                         axis_types=axis_types)
  if axis_types is None:
    axis_types = (mesh_lib.AxisType.Auto,) * len(mesh_shape)
  return mesh_lib.make_mesh(mesh_shape, axis_names, axis_types=axis_types)


@contextmanager
def with_mesh(named_shape):
  """Runs the block under a `Mesh` of ``[(axis_name, size), ...]`` (entered as a context)."""
  from xjax._src.sharding import mesh as mesh_lib
  names = tuple(n for n, _ in named_shape)
  shape = tuple(s for _, s in named_shape)
  local = devices.local_devices()
  if len(local) < math.prod(shape):
    raise unittest.SkipTest(f"Test requires {math.prod(shape)} local devices")
  with mesh_lib.Mesh(np.array(local[:math.prod(shape)]).reshape(shape), names):
    yield


def with_mesh_from_kwargs(f):
  return lambda *args, **kwargs: with_mesh(kwargs["mesh"])(f)(*args, **kwargs)


def with_explicit_mesh(sizes, names, axis_types=None, iota_order=False):
  """Test-method decorator: runs under `set_mesh` of a mesh with Explicit axes (by default),
  passing it as ``mesh=``."""
  def decorator(fn):
    @functools.wraps(fn)
    def mesh_fn(*args, **kwargs):
      from xjax._src.sharding import mesh as mesh_lib
      types = ((mesh_lib.AxisType.Explicit,) * len(names) if axis_types is None
               else axis_types)
      mesh = create_mesh(sizes, names, iota_order, axis_types=types)
      with mesh_lib.set_mesh(mesh):
        return fn(*args, **kwargs, mesh=mesh)
    return mesh_fn
  return decorator


@contextmanager
def set_env(**kwargs):
  """Sets (a value) or unsets (None) environment variables for the block."""
  saved = {k: os.environ.pop(k, None) for k in kwargs}
  os.environ.update({k: v for k, v in kwargs.items() if v is not None})
  try:
    yield
  finally:
    for k in kwargs:
      os.environ.pop(k, None)
    os.environ.update({k: v for k, v in saved.items() if v is not None})
