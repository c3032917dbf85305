"""`jax.distributed`: one process of a job spanning several processes (hosts).

Every process calls `initialize` before its first computation. Process 0
starts XLA's coordination service; every process connects a client to it;
the CPU client made afterwards learns every process's devices through that
client, so `jax.devices()` lists them all and one `jit` program spans them.
Cross-process collectives inside programs run over Gloo (TCP, the default) or
MPI (`jax_cpu_collectives_implementation`). The service also watches the
processes: one that stops sending heartbeats for `heartbeat_timeout_seconds`
is reported to the others, which then fail instead of waiting forever.
"""
from __future__ import annotations

import atexit
import functools
import logging
import os
from collections.abc import Sequence

from xjax._src import backend
from xjax._src.config import config

logger = logging.getLogger(__name__)


class State:
  """This process's place in the job, and the runtime objects it holds."""

  def __init__(self):
    self.process_id = 0
    self.num_processes = 1
    self.coordinator_address: str | None = None
    self.service = None  # the coordination service, on process 0 only
    self.client = None  # this process's connection to it
    self.preemption_sync_manager = None
    self.partition_index: int | None = None

  def initialize(self, coordinator_address=None, num_processes=None, process_id=None,
                 local_device_ids=None, cluster_detection_method=None,
                 initialization_timeout=300, coordinator_bind_address=None,
                 heartbeat_timeout_seconds=100, shutdown_timeout_seconds=300,
                 partition_index=None):
    coordinator_address = coordinator_address or os.environ.get("JAX_COORDINATOR_ADDRESS")
    if isinstance(local_device_ids, int):
      local_device_ids = [local_device_ids]
    if local_device_ids is None and (ids := os.environ.get("JAX_LOCAL_DEVICE_IDS")):
      local_device_ids = [int(i) for i in ids.split(",")]
    if (cluster_detection_method != "deactivate"
        and None in (coordinator_address, num_processes, process_id, local_device_ids)):
      from xjax._src import clusters
      coordinator_address, num_processes, process_id, local_device_ids = (
          clusters.auto_detect_unset_distributed_params(
              coordinator_address, num_processes, process_id, local_device_ids,
              cluster_detection_method, initialization_timeout))
    _check_arguments(coordinator_address, num_processes, process_id)
    if local_device_ids:
      # JAX restricts the visible GPUs here; the CPU platform has no such setting.
      logger.info("xjax distributed initialized with visible devices: %s",
                  ",".join(map(str, local_device_ids)))
    if self.client is not None or (process_id == 0 and self.service is not None):
      raise RuntimeError("distributed.initialize should only be called once.")
    _warn_about_proxies()

    port = coordinator_address.rsplit(":", 1)[1]
    bind_address = (coordinator_bind_address or os.environ.get("JAX_COORDINATOR_BIND_ADDRESS")
                    or f"[::]:{port}")
    self.coordinator_address = coordinator_address
    self.process_id, self.num_processes = process_id, num_processes
    if process_id == 0:
      logger.info("Starting JAX distributed service on %s", bind_address)
      self.service = backend.start_distributed_service(
          bind_address, num_processes, heartbeat_timeout=heartbeat_timeout_seconds,
          shutdown_timeout=shutdown_timeout_seconds,
          recoverable=config.jax_enable_recoverability)
    logger.info("Connecting to JAX distributed service on %s", coordinator_address)
    try:
      self.client = backend.connect_distributed_client(
          coordinator_address, process_id, num_processes, init_timeout=initialization_timeout,
          heartbeat_timeout=heartbeat_timeout_seconds, shutdown_timeout=shutdown_timeout_seconds)
    except Exception:
      self._stop_service()
      self.process_id, self.num_processes = 0, 1
      raise
    if config.jax_enable_preemption_service:
      self.preemption_sync_manager = backend.make_preemption_sync_manager(self.client)
    if partition_index is None and (index := os.environ.get("JAX_PARTITION_INDEX")) is not None:
      partition_index = int(index)
    self.partition_index = partition_index
    _shutdown_at_exit()

  def shutdown(self):
    if self.preemption_sync_manager is not None:
      # Before the client: the manager talks through it.
      self.preemption_sync_manager.shutdown()
      self.preemption_sync_manager = None
    if self.client is not None:
      client, self.client = self.client, None
      backend.disconnect_distributed_client(client)
    self._stop_service()

  def _stop_service(self):
    if self.service is not None:
      service, self.service = self.service, None
      service.shutdown()


def _check_arguments(coordinator_address, num_processes, process_id):
  if coordinator_address is None:
    raise ValueError("coordinator_address should be defined.")
  if num_processes is None:
    raise ValueError("Number of processes must be defined.")
  if process_id is None:
    raise ValueError("The process id of the current process must be defined.")
  if not isinstance(process_id, int):
    raise TypeError("process_id must be a nonnegative int. "
                    f"Got process_id={process_id} of type {type(process_id)}.")
  if not isinstance(num_processes, int):
    raise TypeError("num_processes must be a positive int. "
                    f"Got num_processes={num_processes} of type {type(num_processes)}.")
  if not 0 <= process_id < num_processes:
    raise ValueError("process_id and num_processes must be nonnegative, with process_id < "
                     f"num_processes. Got process_id={process_id}, num_processes={num_processes}.")
  if ":" not in coordinator_address:
    raise ValueError(f"coordinator_address must be 'host:port', got {coordinator_address!r}.")


@functools.cache
def _shutdown_at_exit():
  # As JAX: a process leaving without `shutdown` still says goodbye to the service,
  # so the others are not left waiting for its heartbeats.
  atexit.register(shutdown)


def _warn_about_proxies():
  if not config.jax_check_proxy_envs:
    return
  names = [key for key in os.environ if "_proxy" in key.lower()]
  if names:
    logger.warning("JAX detected proxy variable(s) in the environment as distributed setup: "
                   f"{' '.join(names)}. On some systems, this may cause a hang of "
                   "distributed.initialize and you may need to unset these ENV variable(s)")


global_state = State()


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None,
               local_device_ids: int | Sequence[int] | None = None,
               cluster_detection_method: str | None = None, initialization_timeout: int = 300,
               heartbeat_timeout_seconds: int = 100, shutdown_timeout_seconds: int = 300,
               coordinator_bind_address: str | None = None, slice_index: int | None = None,
               partition_index: int | None = None) -> None:
  """Joins this process to a job of `num_processes` processes.

  Must run before anything that makes the backend (a computation,
  `jax.devices()`, `jax.device_put`). Afterwards `jax.devices()` lists every
  process's devices, `jax.local_devices()` this process's, and each `jit`
  program runs over all of them, every process calling it in the same order.

  Args:
    coordinator_address: ``"host:port"`` of process 0, where it starts the
      coordination service; every process passes the same. Default: the
      ``JAX_COORDINATOR_ADDRESS`` variable, or what the cluster says.
    num_processes: the number of processes in the job.
    process_id: this process's index, in ``0 .. num_processes - 1``.
    local_device_ids: devices this process may use (GPU platforms; the CPU
      platform's devices are set by ``--xla_force_host_platform_device_count``
      or ``jax_num_cpu_devices``). Default: ``JAX_LOCAL_DEVICE_IDS``.
    cluster_detection_method: ``"slurm"``, ``"ompi"``, ``"mpi4py"``, ``"env"``
      (``JAX_NUM_PROCESSES``/``JAX_PROCESS_ID``, as `xjax.tools.launch` sets
      them) to read unset arguments from that environment; ``"deactivate"``
      to detect nothing; None: the first environment found.
    initialization_timeout: seconds to wait for all processes to connect.
    heartbeat_timeout_seconds: a process silent this long counts as dead, and
      the others fail.
    shutdown_timeout_seconds: how long `shutdown` waits for the others.
    coordinator_bind_address: the address process 0's service listens on
      (default ``[::]:<port of coordinator_address>``, or
      ``JAX_COORDINATOR_BIND_ADDRESS``).
    slice_index: deprecated name of `partition_index`.
    partition_index: the partition of this process's devices (default
      ``JAX_PARTITION_INDEX``).

  Raises:
    RuntimeError: the backend already exists, or `initialize` ran before;
      jaxlib's runtime error when the coordinator cannot be reached in time.
    ValueError, TypeError: missing or invalid arguments; an unknown
      `cluster_detection_method` (JAX only logs it).

  Mirrors `jax.distributed.initialize`.
  """
  if backend.client_started():
    raise RuntimeError("jax.distributed.initialize() must be called before any JAX calls that "
                       "might initialise the XLA backend. This includes any computation, but "
                       "also calls to jax.devices, jax.device_put, and others.")
  if partition_index is None and slice_index is not None:
    import warnings
    warnings.warn("`slice_index` has been deprecated. Please use `partition_index` instead.",
                  DeprecationWarning, stacklevel=2)
    partition_index = slice_index
  global_state.initialize(coordinator_address, num_processes, process_id, local_device_ids,
                          cluster_detection_method, initialization_timeout,
                          coordinator_bind_address, heartbeat_timeout_seconds,
                          shutdown_timeout_seconds, partition_index)


def is_initialized() -> bool:
  """Whether `initialize` has connected this process (mirrors `jax.distributed.is_initialized`)."""
  return global_state.client is not None


def shutdown() -> None:
  """Leaves the job: disconnects from the service (and stops it, on process 0).

  Does nothing when `initialize` has not run. Mirrors `jax.distributed.shutdown`.
  """
  global_state.shutdown()
