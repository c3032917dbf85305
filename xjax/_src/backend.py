"""The boundary with XLA: the only module that imports jaxlib.

It offers devices, host-to-device transfer, compilation of StableHLO text,
execution and device-to-host transfer. Nothing of jaxlib's own tracing,
pytree, jit or sharding logic is used: its multi-device array and
GSPMDSharding containers only carry buffers laid out as xjax's own shardings
(`xjax._src.sharding`) say.
"""
from __future__ import annotations

import functools
import os
import re
import threading
import time

import numpy as np

# jaxlib's CPU client logs two INFO lines when it starts; JAX prints nothing.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

from jaxlib import _jax  # noqa: E402
from jaxlib import xla_client  # noqa: E402

from xjax._src import compilation_cache  # noqa: E402
from xjax._src import monitoring  # noqa: E402
from xjax._src.config import config  # noqa: E402

_SUPPORTED_PLATFORMS = ("cpu", "cuda", "gpu")


def _requested_platforms() -> list[str]:
  text = config.jax_platforms or config.jax_platform_name or ""
  return [p.strip().lower() for p in text.split(",") if p.strip()]


def _cpu_device_count() -> int | None:
  match = re.search(r"--xla_force_host_platform_device_count=(\d+)",
                    os.environ.get("XLA_FLAGS", ""))
  return int(match.group(1)) if match else None


_client = None
_client_lock = threading.Lock()


def client():
  """The PJRT client, created once on first use (honours JAX_PLATFORMS).

  Made under a lock: two threads making their first calls at once must not
  each make a client, or buffers of one reach executables of the other
  ("Buffer ... is on device cpu:0, but replica is assigned to device cpu:0").
  """
  global _client
  if _client is None:
    with _client_lock:
      if _client is None:
        _client = _make_client()
  return _client


def _make_client():
  # jaxlib records a Python traceback with every execution while its traceback
  # collection is on (the default), and outside JAX's own runtime set-up those
  # records are never released: ~60 bytes held per call, forever. xjax reads
  # no jaxlib tracebacks, so collection is off (issue 12: no per-call growth).
  _jax.set_tracebacks_enabled(False)
  requested = _requested_platforms()
  unknown = [p for p in requested if p not in _SUPPORTED_PLATFORMS]
  if unknown and not any(p in _SUPPORTED_PLATFORMS for p in requested):
    raise RuntimeError(
        f"Unable to initialize backend '{unknown[0]}': xjax supports the 'cpu' platform and "
        f"NVIDIA GPUs ('cuda') (requested platforms: {','.join(requested)}). Set "
        "JAX_PLATFORMS=cpu.")
  if not requested:
    # As JAX: a GPU when its plugin is installed and works, else the CPU.
    if _cuda_plugin_library() is not None:
      try:
        return _make_cuda_client()
      except Exception as e:  # noqa: BLE001  (no GPU, no driver: the CPU serves)
        import warnings
        warnings.warn(f"A CUDA PJRT plugin is installed but no GPU client could be made "
                      f"({e}); falling back to cpu.", RuntimeWarning, stacklevel=2)
    return _make_cpu_client()
  errors = []
  for name in requested:  # in order: the first that works (JAX_PLATFORMS=cuda,cpu)
    if name not in _SUPPORTED_PLATFORMS:
      continue
    try:
      return _make_cpu_client() if name == "cpu" else _make_cuda_client()
    except RuntimeError as e:
      errors.append(e)
  raise errors[0]


def _make_cpu_client():
  count = _cpu_device_count()
  if count is None and config.jax_num_cpu_devices is not None and config.jax_num_cpu_devices > 0:
    count = int(config.jax_num_cpu_devices)
  if _distributed is None:
    return xla_client.make_cpu_client(num_devices=count)
  # One process of several: the client learns every process's devices through the
  # distributed runtime, and its cross-process collectives run over Gloo (TCP) or MPI.
  dist_client, process_id, num_processes = _distributed
  return xla_client.make_cpu_client(
      distributed_client=dist_client, node_id=process_id, num_nodes=num_processes,
      collectives=_cpu_collectives(dist_client), num_devices=count,
      get_local_topology_timeout_minutes=config.jax_cpu_get_local_topology_timeout_minutes,
      get_global_topology_timeout_minutes=config.jax_cpu_get_global_topology_timeout_minutes)


# The PJRT plugins of `pip install 'xjax[cuda12]'` (or cuda13): shared libraries in the
# `jax_plugins` namespace package. Their Python `initialize()` needs JAX's internals, so
# xjax loads the library itself, as JAX's plugin registry does.
_CUDA_PLUGIN_PACKAGES = ("jax_plugins.xla_cuda13", "jax_plugins.xla_cuda12")


def _cuda_plugin_library() -> str | None:
  """The path of an installed CUDA PJRT plugin library, or None."""
  import importlib.util
  for name in _CUDA_PLUGIN_PACKAGES:
    try:
      spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
      continue
    for folder in (spec.submodule_search_locations or []) if spec else []:
      path = os.path.join(folder, "xla_cuda_plugin.so")
      if os.path.exists(path):
        return path
  return None


def _make_cuda_client():
  """A client of the NVIDIA GPUs through the CUDA PJRT plugin (untested on this project's
  CPU-only machines)."""
  path = _cuda_plugin_library()
  if path is None:
    raise RuntimeError(
        "Unable to initialize backend 'cuda': no CUDA PJRT plugin is installed. Install it "
        "with `pip install 'xjax[cuda12]'` (jax-cuda12-plugin and jax-cuda12-pjrt 0.10.2), or "
        "set JAX_PLATFORMS=cpu.")
  try:
    if not xla_client.pjrt_plugin_loaded("cuda"):
      xla_client.load_pjrt_plugin_dynamically("cuda", path)
    if not xla_client.pjrt_plugin_initialized("cuda"):
      xla_client.initialize_pjrt_plugin("cuda")
    if _distributed is None:
      return xla_client.make_c_api_client("cuda", {}, None)
    dist_client, process_id, num_processes = _distributed
    return xla_client.make_c_api_client(
        "cuda", {"node_id": process_id, "num_nodes": num_processes}, dist_client)
  except Exception as e:  # noqa: BLE001  (jaxlib's errors: a bad library, no driver, no GPU)
    raise RuntimeError(f"Unable to initialize backend 'cuda' with the plugin {path}: {e}") from e


def _cpu_collectives(dist_client):
  kind = config.jax_cpu_collectives_implementation
  if kind == "gloo":
    return _jax.make_gloo_tcp_collectives(distributed_client=dist_client)
  if kind == "mpi":
    import atexit
    collectives = _jax.make_mpi_collectives()
    collectives.Init()
    atexit.register(collectives.Finalize)
    return collectives
  if kind is None:
    return None
  raise RuntimeError(f"Unknown CPU collectives implementation {kind!r}: xjax offers 'gloo' and "
                     "'mpi' (jax_cpu_collectives_implementation).")


# ----------------------------------------------------------------------------
# The distributed runtime (one process of several; see xjax._src.distributed)

_distributed = None  # (client, process_id, num_processes) once connected


def client_started() -> bool:
  return _client is not None


def start_distributed_service(bind_address: str, num_processes: int, *, heartbeat_timeout: int,
                              shutdown_timeout: int, recoverable: bool):
  """Starts the coordination service (on process 0); returns it (it has `shutdown()`)."""
  return _jax.get_distributed_runtime_service(
      bind_address, num_processes, heartbeat_timeout=heartbeat_timeout,
      shutdown_timeout=shutdown_timeout, recoverable=recoverable)


def connect_distributed_client(address: str, process_id: int, num_processes: int, *,
                               init_timeout: int, heartbeat_timeout: int,
                               shutdown_timeout: int):
  """Connects this process to the coordination service at `address`; returns the client.

  The client is what the CPU client made afterwards uses to exchange device
  topologies and to set up Gloo's connections. It has `shutdown()`,
  `wait_at_barrier(name, timeout_in_ms)`, `key_value_set`/`blocking_key_value_get`.
  Raises jaxlib's runtime error when the service cannot be reached in
  `init_timeout` seconds.
  """
  global _distributed
  dist_client = _jax.get_distributed_runtime_client(
      address, process_id, init_timeout=init_timeout, heartbeat_timeout=heartbeat_timeout,
      shutdown_timeout=shutdown_timeout, use_compression=True)
  dist_client.connect()
  _distributed = (dist_client, process_id, num_processes)
  return dist_client


def disconnect_distributed_client(dist_client):
  global _distributed
  _distributed = None
  dist_client.shutdown()


def make_preemption_sync_manager(dist_client):
  manager = _jax.create_preemption_sync_manager()
  manager.initialize(dist_client)
  return manager


def devices() -> list:
  """Every device of the job (all processes'), in the client's order."""
  return list(client().devices())


def local_devices() -> list:
  """This process's devices."""
  return list(client().local_devices())


def process_index() -> int:
  return client().process_index()


@functools.cache
def process_count() -> int:
  """The number of processes of the job (1 without `jax.distributed`); fixed once the client
  exists."""
  return max((d.process_index for d in client().devices()), default=0) + 1


# The class of jaxlib's devices (`jax.Device`).
Device = _jax.Device


def is_device(x) -> bool:
  return isinstance(x, _jax.Device)


def platform() -> str:
  return client().platform


def _is_float0(dtype) -> bool:
  return dtype.kind == "V" and dtype.names == ("float0",)


class _Placement(_jax.SingleDeviceSharding):
  """A single-device sharding with the two members `batched_device_put` reads
  (JAX's own sharding class defines them in Python, which we do not import)."""
  memory_kind = None

  def _to_xla_hlo_sharding(self, num_dimensions):
    return xla_client.HloSharding.replicate()


@functools.cache
def _placement(device) -> _Placement:
  return _Placement(device)


class _HostAval:
  """The aval `batched_device_put` reads: shape, dtype, weak type."""
  __slots__ = ("shape", "dtype", "weak_type")

  def __init__(self, shape, dtype):
    self.shape, self.dtype, self.weak_type = shape, dtype, False


_COPY_DURING_CALL = _jax.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL


# Host-to-device transfers so far, one per array placed (a sharded array counts once): JAX's
# test utilities count them (`count_device_put`).
transfer_count = 0


def transfer_to_device(x: np.ndarray, device):
  """Copies a NumPy array to `device`; returns a single-device buffer.

  `batched_device_put` copies during the call (the NumPy array may change
  afterwards) and takes every dtype, ml_dtypes' included, and any strides; it
  costs a few µs, where the DLPack path tries to import `jax` on each call
  (~50 µs) and aliases aligned arrays. float0 values (tangents of integers)
  carry no data: they travel as bool zeros, as JAX lowers them.
  """
  global transfer_count
  transfer_count += 1
  return _transfer(x, device)


def _transfer(x: np.ndarray, device):
  if _is_float0(x.dtype):
    x = np.zeros(x.shape, np.bool_)
  # enable_x64=True: no canonicalization in jaxlib, `x` already has its final dtype.
  return _jax.batched_device_put(_HostAval(x.shape, x.dtype), _placement(device), [x],
                                 [device], False, False, _COPY_DURING_CALL, True)


_mlir_context = None
_mlir_lock = threading.Lock()


def _make_mlir_context():
  """An MLIR context that knows every dialect xjax's lowering emits.

  Upstream MLIR's (func, arith, ...), then StableHLO's, CHLO's, MHLO's (its
  attributes) and Shardy's (``sdy.mesh``, ``sdy.sharding``,
  ``sdy.manual_computation``: what sharded and shard_map modules hold), and
  Shardy's MPMD dialect, as jaxlib's own C++ parser of module text has them.
  """
  from jaxlib.mlir import ir
  from jaxlib.mlir._mlir_libs import _jax_mlir_ext
  from jaxlib.mlir.dialects import chlo, mhlo, mpmd, sdy, stablehlo
  registry = ir.DialectRegistry()
  _jax_mlir_ext.register_dialects(registry)
  context = ir.Context()
  context.append_dialect_registry(registry)
  context.load_all_available_dialects()
  mhlo.register_mhlo_dialect(context)
  chlo.register_dialect(context)
  sdy.register_dialect(context)
  mpmd.register_dialect(context)
  stablehlo.register_dialect(context)
  return context


def parse_module(mlir_text: str):
  """`mlir_text` parsed in an MLIR context that knows every dialect xjax emits.

  jaxlib takes host callbacks only with a parsed module. The context is made
  once; parsing is serialized because an MLIR context is not thread-safe.
  """
  global _mlir_context
  from jaxlib.mlir import ir
  with _mlir_lock:
    if _mlir_context is None:
      _mlir_context = _make_mlir_context()
    with _mlir_context:
      return ir.Module.parse(mlir_text)


def module_asm(mlir_text: str) -> str:
  """`mlir_text` as MLIR prints the parsed module: each op in its custom assembly form
  (``stablehlo.add %a, %b : tensor<f32>``), as JAX's `Lowered.as_text` shows modules."""
  module = parse_module(mlir_text)
  with _mlir_lock:
    return str(module)


def compile_module(mlir_text: str, device, host_callbacks=(), compiler_options=(),
                   fun_name: str | None = None):
  """Compiles StableHLO module text for one device, or for several.

  `device` is one device, or a tuple of devices: the module is then one
  SPMD program over them (its ``mhlo.num_partitions`` is their number; its
  Shardy attributes say how arguments and results are split; XLA's SPMD
  partitioner inserts the collectives). `host_callbacks` are the Python
  functions the module's ``xla_ffi_python_cpu_callback`` custom calls name by
  index; each takes and returns NumPy arrays (a tuple of them).
  `compiler_options` are (XLA option name, value) pairs, e.g.
  ``(("xla_cpu_enable_fast_math", True),)``; an unknown name raises XLA's error.

  With the persistent compilation cache on (``jax_compilation_cache_dir``; see
  `xjax._src.compilation_cache`), the executable is loaded from it when stored
  there, and stored after compiling.

  The whole (look-up and compilation) is recorded as JAX's
  ``/jax/core/compile/backend_compile_duration`` event (`xjax._src.monitoring`) for
  `fun_name` (JAX's ``jit(f)``; the module's name when None).
  """
  with monitoring.timed_event(monitoring.BACKEND_COMPILE_EVENT,
                              fun_name or compilation_cache.module_name(mlir_text)):
    return _compile_module(mlir_text, device, host_callbacks, compiler_options)


_BUILD_OPTION_FIELDS = ("exec_time_optimization_effort", "memory_fitting_effort",
                        "optimization_level", "memory_fitting_level")


def _compile_module(mlir_text: str, device, host_callbacks, compiler_options):
  options = xla_client.CompileOptions()
  if isinstance(device, tuple):
    build = options.executable_build_options
    build.num_partitions = len(device)
    build.num_replicas = 1
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = True
    options.device_assignment = xla_client.DeviceAssignment.create(
        np.array([[d.id for d in device]]))
    devices = xla_client.DeviceList(device)
  else:
    # Without an explicit assignment the single replica runs on device 0.
    options.device_assignment = xla_client.DeviceAssignment.create(np.array([[device.id]]))
    devices = xla_client.DeviceList((device,))
  # The key is made before the option overrides are set: it hashes them on their own (the
  # order of a serialized proto map is not fixed).
  key = None if host_callbacks else _persistent_cache_key(mlir_text, device, options,
                                                          compiler_options)
  if compiler_options:
    # As JAX: the effort and level options are fields of the build options, not overrides.
    rest = []
    for name, value in compiler_options:
      if name in _BUILD_OPTION_FIELDS:
        setattr(options.executable_build_options, name, value)
      else:
        rest.append((name, value))
    options.env_option_overrides = rest
  if host_callbacks:
    # Never in the persistent cache: the executable calls these Python functions by their
    # addresses in this process, which mean nothing in another one.
    compilation_cache.skip(_module_label(mlir_text), "it has host callbacks")
    return backend_compile_and_load(client(), parse_module(mlir_text), devices, options,
                                    host_callbacks)
  if compilation_cache.is_cache_used():
    # As JAX: every compilation without host callbacks while the cache is enabled, with a
    # directory set or not (without one, JAX's look-up misses; xjax skips it).
    monitoring.record_event("/jax/compilation_cache/compile_requests_use_cache")
  if key is not None:
    executable = compilation_cache.load(
        key, lambda data: client().deserialize_executable(data, devices, options))
    if executable is not None:
      return executable
  start = time.monotonic()
  executable = backend_compile_and_load(client(), mlir_text, devices, options, ())
  if key is not None and process_index() == 0:
    compilation_cache.store(key, executable.serialize, time.monotonic() - start)
  elif key is not None:
    # As JAX: in a job of several processes every process reads, only process 0 writes.
    compilation_cache.skip(_module_label(mlir_text), "only process 0 writes")
  return executable


def backend_compile_and_load(backend, module, executable_devices, options, host_callbacks):
  """Compiles `module` with jaxlib client `backend` and loads it on `executable_devices`.

  Args:
    backend: a jaxlib client (its ``platform`` names it: 'cpu', 'cuda', ...).
    module: StableHLO module text, or a parsed module (needed with host callbacks).
    executable_devices: a jaxlib DeviceList.
    options: jaxlib CompileOptions.
    host_callbacks: the Python functions the module's callback custom calls name (may be
      empty).

  Returns:
    The loaded executable. Every XLA compilation of xjax (not a persistent-cache hit) goes
  through this module-level name, looked up at each call, so that it can be replaced, as
  ``chex.restrict_backends`` replaces `jax._src.compiler.backend_compile_and_load`, whose
  signature it mirrors.
  """
  if host_callbacks:
    return backend.compile_and_load(module, executable_devices, options, list(host_callbacks))
  return backend.compile_and_load(module, executable_devices, options)


def _module_label(mlir_text: str) -> str:
  return mlir_text[:mlir_text.find("{")].strip()[:100]


def _persistent_cache_key(mlir_text: str, device, options, compiler_options) -> str | None:
  """The persistent compilation cache key of a compilation, or None while the cache is
  off."""
  if not compilation_cache.active():
    return None
  import jaxlib.version
  devs = device if isinstance(device, tuple) else (device,)
  c = client()
  return compilation_cache.cache_key(mlir_text, (
      ("jaxlib", f"{jaxlib.version.__version__} {xla_client._version}"),
      ("platform", f"{c.platform} {c.platform_version}"),
      ("compile_options", options.SerializeAsString()),
      ("compiler_options", repr(sorted((str(k), repr(v)) for k, v in compiler_options))),
      ("devices", repr([(d.platform, d.device_kind, d.id, d.process_index) for d in devs])),
      ("process_count", str(process_count())),
  ))


def hlo_computation(mlir_text: str):
  """jaxlib's XlaComputation of a StableHLO module (its HLO before XLA's optimizations:
  ``as_hlo_text()``, ``as_serialized_hlo_module_proto()``, ``as_hlo_module()``)."""
  return _jax.mlir.mlir_module_to_xla_computation(mlir_text, use_tuple_args=False,
                                                  return_tuple=False)


def hlo_text(mlir_text: str) -> str:
  """The HLO text of a StableHLO module (before XLA's optimizations)."""
  return hlo_computation(mlir_text).as_hlo_text()


def result_handlers(avals, device, committed: bool) -> list:
  """Handlers turning an execution's outputs into buffers (one per output aval)."""
  sharding = _jax.SingleDeviceSharding(device)
  return [_jax.array_result_handler(_buffer_aval(a), sharding, committed, _skip_checks=True)
          for a in avals]


def _buffer_aval(aval):
  """The aval of the buffer holding a value of `aval`: float0 as bool zeros, an extended
  dtype (PRNG keys, key<fry>[K]) as its physical data (uint32[K,2])."""
  physical_shape = getattr(aval.dtype, "physical_element_shape", None)
  if physical_shape is not None:
    return _HostAval((*aval.shape, *physical_shape), aval.dtype.physical_element_dtype)
  if _is_float0(aval.dtype):
    return _HostAval(aval.shape, np.dtype(np.bool_))
  return aval


# ----------------------------------------------------------------------------
# Arrays over several devices


def hlo_sharding(tiles):
  """XLA's HloSharding for a `sharding.shardings.TileDescription`."""
  if tiles.is_replicated:
    return xla_client.HloSharding.replicate()
  op = xla_client.OpSharding()
  op.type = xla_client.OpSharding.Type.OTHER
  op.tile_assignment_dimensions = list(tiles.tile_dims)
  op.tile_assignment_devices = list(tiles.devices)
  op.replicate_on_last_tile_dim = tiles.replicate_last
  return xla_client.HloSharding.from_proto(op)


def hlo_sharding_from_proto(op_sharding):
  """XLA's HloSharding of an OpSharding (an HloSharding is returned as it is)."""
  if isinstance(op_sharding, xla_client.HloSharding):
    return op_sharding
  return xla_client.HloSharding.from_proto(op_sharding)


def describe_sharding(op_sharding):
  """(tile_dims, devices, replicate_last) of an executable's OpSharding; None when it
  is something else (manual, maximal, tuple)."""
  h = xla_client.HloSharding.from_proto(op_sharding)
  if h.is_replicated():
    return (), (0,), False
  if not h.is_tiled() or h.subgroup_types() or h.tuple_elements():
    if h.subgroup_types() == [xla_client.OpSharding.Type.REPLICATED]:
      pass
    else:
      return None
  return tuple(h.tile_assignment_dimensions()), tuple(h.tile_assignment_devices()), \
      bool(h.replicate_on_last_tile_dim())


@functools.lru_cache(maxsize=4096)
def _gspmd_sharding(devices: tuple, tiles):
  return _jax.GSPMDSharding(xla_client.DeviceList(devices), hlo_sharding(tiles))


def put_sharded(parts, local_devices: tuple, devices: tuple, aval, tiles,
                committed: bool = True):
  """One multi-device array over `devices` from host pieces: `parts[i]` (NumPy) goes to
  `local_devices[i]`, this process's devices among `devices`, in their order."""
  # One transfer per device, then assembled: jaxlib's batched put of a partially
  # replicated GSPMDSharding calls back into JAX's Python, which is not loaded.
  if _is_float0(aval.dtype):
    aval = _HostAval(aval.shape, np.dtype(np.bool_))
  global transfer_count
  transfer_count += 1
  bufs = [_transfer(p, d) for p, d in zip(parts, local_devices)]
  return assemble(aval, devices, tiles, bufs, committed)


def assemble(aval, devices: tuple, tiles, buffers, committed: bool = True):
  """One multi-device array over `devices` from single-device buffers: one per device of
  this process among `devices`, in their order (all of them in a one-process job)."""
  return _jax.ArrayImpl(aval, _gspmd_sharding(devices, tiles), list(buffers), committed,
                        _skip_checks=True)


def single_device_buffers(buffer) -> list:
  """The per-device buffers of a (multi-device) array held by this process, in its
  devices' order."""
  return list(buffer._arrays)


def copy_to_device(buffer, device):
  """A single-device buffer copied to `device`, device to device."""
  return _jax.batched_copy_array_to_devices_with_sharding(
      [buffer], [xla_client.DeviceList((device,))], [_jax.SingleDeviceSharding(device)],
      [_jax.ArrayCopySemantics.ALWAYS_COPY])[0]


def sharded_result_handlers(avals, devices: tuple, tiles, committed: bool) -> list:
  """Handlers assembling each output of an SPMD execution as a multi-device array."""
  return [_jax.array_result_handler(_buffer_aval(a), _gspmd_sharding(devices, t), committed,
                                    _skip_checks=True)
          for a, t in zip(avals, tiles)]


def parameter_and_output_shardings(executable):
  """The OpShardings XLA chose for the arguments and the results of an SPMD executable."""
  return executable.get_parameter_shardings(), executable.get_output_shardings()


def inspect_sharding_key(callback):
  """The ``backend_config`` of an ``InspectSharding`` custom call, and what to keep alive.

  XLA's SPMD partitioner calls `callback(op_sharding)` (an OpSharding, as
  `describe_sharding` reads it) with the sharding it chose for the call's
  operand, then removes the call. jaxlib's key borrows the function it calls:
  the caller keeps the returned function alive until the module is compiled.
  """
  def on_sharding(hlo_sharding):
    callback(hlo_sharding.to_proto())
  return _jax.encode_inspect_sharding_callback(on_sharding), on_sharding


def runner(executable, handlers):
  """`execute` with the executable and handlers bound: a function of the argument buffers
  (jit's fastest path calls it)."""
  execute_sharded = executable.execute_sharded

  def run(buffers):
    return execute_sharded(buffers).consume_with_handlers(handlers)
  return run


def execute(executable, buffers, handlers):
  """Runs `executable` on device buffers; returns the output buffers (asynchronously).

  (jaxlib's own `execute` wrapper tries to import `jax` on every call; the
  result handlers avoid that and cost ~1 µs.)
  """
  return executable.execute_sharded(buffers).consume_with_handlers(handlers)


def execute_and_wait(executable, buffers, handlers):
  """Runs `executable` and waits until it has finished, host callbacks included.

  For programs with side effects: their callbacks have all run when this
  returns, so none is lost or reordered against the caller's own output.
  """
  results = executable.execute_sharded(buffers, with_tokens=True)
  token = results.consume_token()
  outs = results.consume_with_handlers(handlers)
  token.block_until_ready()
  return outs


def to_numpy(buffer) -> np.ndarray:
  """Copies a device buffer to a (read-only) NumPy array, waiting for it to be ready."""
  return buffer._single_device_array_to_np_array_did_copy()[0]


def optimized_hlo_text(executable) -> str:
  return executable.hlo_modules()[0].to_string() if hasattr(executable, "hlo_modules") else ""


# Waits until a device buffer is ready (jaxlib's method itself: no Python frame on the way).
block_until_ready = _jax.ArrayImpl.block_until_ready


def copy_to_host_async(buffer):
  buffer._copy_single_device_array_to_host_async()


def is_deleted(buffer) -> bool:
  return buffer.is_deleted()


def on_device_size_in_bytes(buffer) -> int:
  return buffer.on_device_size_in_bytes()


def delete(buffer):
  buffer.delete()


def to_dlpack(buffer, stream=None):
  return _jax.buffer_to_dlpack_managed_tensor(buffer)


_lapack_registered = False
_lapack_lock = threading.Lock()


def register_lapack_targets():
  """Registers jaxlib's LAPACK kernels as CPU custom-call targets (once per process).

  The same kernels JAX calls on CPU (`lapack_spotrf_ffi`, `lapack_dgesdd_ffi`,
  ...): typed-FFI targets get API version 1, the older ones 0. Must run before
  a module calling them is compiled.
  """
  global _lapack_registered
  if _lapack_registered:
    return
  with _lapack_lock:
    if _lapack_registered:
      return
    from jaxlib.cpu import _lapack
    _lapack.initialize()
    for name, capsule in _lapack.registrations().items():
      xla_client.register_custom_call_target(name, capsule, "cpu",
                                             api_version=int(name.endswith("_ffi")))
    _lapack_registered = True


def runtime_error_class():
  return _jax.JaxRuntimeError


def jaxlib_version() -> str:
  """The installed jaxlib's version string (what `jax.lib.__version__` reports)."""
  import jaxlib.version
  return jaxlib.version.__version__
