"""Cluster environments `jax.distributed.initialize` detects (mirrors `jax._src.clusters`).

When `initialize` is called with some of ``coordinator_address``,
``num_processes`` and ``process_id`` left out, the process asks the cluster it
runs in: each environment below says whether it is present and, if so, where
process 0 runs the coordinator, how many processes there are and which one
this is. The first present environment (in registry order) fills in the
arguments that are still None; explicit arguments are never overridden.

Environments detected, in this order:

* ``"env"`` (xjax only): ``JAX_NUM_PROCESSES``, ``JAX_PROCESS_ID`` and
  ``JAX_COORDINATOR_ADDRESS``, as set by ``python -m xjax.tools.launch``.
  Present when ``JAX_NUM_PROCESSES`` is set. It comes first so that a launcher
  started inside a Slurm or MPI job still gets the values it set.
* ``"ompi"``: Open MPI's ``mpirun``/``mpiexec`` (``OMPI_MCA_orte_hnp_uri``,
  ``OMPI_COMM_WORLD_SIZE``/``_RANK``/``_LOCAL_RANK``).
* ``"slurm"``: Slurm's ``srun`` (``SLURM_JOB_ID``, ``SLURM_STEP_NODELIST``,
  ``SLURM_NTASKS``, ``SLURM_PROCID``, ``SLURM_LOCALID``).
* ``"mpi4py"``: any MPI, through the ``mpi4py`` package; only when asked for
  with ``cluster_detection_method="mpi4py"``.

Not detected (JAX detects them; they need TPU metadata servers or Kubernetes
clients that a CPU build has no use for): Cloud TPU VMs (``GceTpuCluster``),
GKE TPU pods (``GkeTpuCluster``) and Kubernetes jobs (``K8sCluster``).

``JAX_COORDINATOR_PORT``, when set, is the coordinator's port in every
environment (otherwise Slurm and Open MPI derive one from the job id).

Further environments can be added the way JAX allows it: subclass `ClusterEnv`
(defining a subclass registers it).
"""
from __future__ import annotations

import importlib.util
import itertools
import logging
import os
import re
import socket
import sys
import zlib
from collections.abc import Sequence

logger = logging.getLogger(__name__)

# JAX defaults processes of a Slurm / Open MPI / mpi4py job to one device each,
# the device whose id is the process's rank on its host (`local_device_ids =
# [local_process_id]`), and applies that only to GPUs (it sets the CUDA/ROCm
# visible devices). xjax's backend is the CPU, whose devices are all local to
# the process, so the local rank never becomes `local_device_ids`: they stay
# None unless the caller (or JAX_LOCAL_DEVICE_IDS) gives them.
_ONE_DEVICE_PER_LOCAL_PROCESS = False


def _ephemeral_port(n: int) -> str:
  """A port in [65535 - 2**12 + 1, 65535] chosen by the integer `n` (JAX's range)."""
  return str(n % 2**12 + (65535 - 2**12 + 1))


def _int_env(name: str) -> int:
  value = os.environ[name]
  try:
    return int(value)
  except ValueError:
    raise ValueError(f"Environment variable {name} must be an integer, got {value!r}.") from None


class ClusterEnv:
  """A cluster environment that can fill in `jax.distributed.initialize`'s arguments.

  Subclasses set `name` (the ``cluster_detection_method`` that picks them) and
  define the classmethods below; defining a subclass registers it. An
  environment with `opt_in_only_method` True is used only when asked for by name.
  Mirrors `jax._src.clusters.ClusterEnv`.
  """
  name: str = ""
  opt_in_only_method: bool = False
  _cluster_types: list[type[ClusterEnv]] = []

  def __init_subclass__(cls, **kwargs):
    super().__init_subclass__(**kwargs)
    ClusterEnv._cluster_types.append(cls)

  @classmethod
  def is_env_present(cls) -> bool:
    """Whether this process runs in this environment."""
    raise NotImplementedError("ClusterEnv subclasses must implement is_env_present")

  @classmethod
  def get_coordinator_address(cls, timeout_secs: int | None,
                              override_coordinator_port: str | None) -> str | None:
    """``"host:port"`` of process 0's coordinator, the same in every process.

    `override_coordinator_port` (from ``JAX_COORDINATOR_PORT``) replaces the
    environment's own choice of port when given.
    """
    raise NotImplementedError("ClusterEnv subclasses must implement get_coordinator_address")

  @classmethod
  def get_process_count(cls) -> int | None:
    """The number of processes in the job."""
    raise NotImplementedError("ClusterEnv subclasses must implement get_process_count")

  @classmethod
  def get_process_id(cls) -> int | None:
    """This process's id in [0, process count)."""
    raise NotImplementedError("ClusterEnv subclasses must implement get_process_id")

  @classmethod
  def get_local_process_id(cls) -> int | None:
    """This process's rank among the job's processes on its host, or None if unknown."""
    return None


class EnvVarCluster(ClusterEnv):
  """Processes started by `xjax.tools.launch` (or by hand) with JAX_* variables."""
  name = "env"

  @classmethod
  def is_env_present(cls):
    return "JAX_NUM_PROCESSES" in os.environ

  @classmethod
  def get_coordinator_address(cls, timeout_secs, override_coordinator_port):
    address = os.environ.get("JAX_COORDINATOR_ADDRESS")
    if not address or not override_coordinator_port:
      return address or None
    host = address.rsplit(":", 1)[0] if re.search(r":\d*$", address) else address
    return f"{host}:{override_coordinator_port}"

  @classmethod
  def get_process_count(cls):
    return _int_env("JAX_NUM_PROCESSES")

  @classmethod
  def get_process_id(cls):
    return _int_env("JAX_PROCESS_ID") if "JAX_PROCESS_ID" in os.environ else None


class OmpiCluster(ClusterEnv):
  """Open MPI (`mpirun`); the coordinator runs on the launcher's host."""
  name = "ompi"

  @classmethod
  def is_env_present(cls):
    # Set only in processes started by Open MPI's mpirun / mpiexec.
    return "OMPI_MCA_orte_hnp_uri" in os.environ

  @classmethod
  def get_coordinator_address(cls, timeout_secs, override_coordinator_port):
    # e.g. "1531576320.0;tcp://10.96.0.1,10.148.0.1:34911" or
    #      "1314521088.0;tcp6://[fe80::b9b:ac5d,2620:10d:c083::2]:43370"
    uri = os.environ["OMPI_MCA_orte_hnp_uri"]
    # Job ids are multiples of 2**12; dividing first spreads jobs over the range.
    port = override_coordinator_port or _ephemeral_port(int(uri.split(".", 1)[0]) // 2**12)
    match = re.search(r"tcp://(.+?)[,:]|tcp6://\[(.+?)[,\]]", uri)
    if match is None:
      raise RuntimeError("Could not parse coordinator IP address from Open MPI environment.")
    if match.group(1) is not None:
      return f"{match.group(1)}:{port}"
    # JAX writes "fe80::1:port", which is ambiguous; the bracketed form parses.
    return f"[{match.group(2)}]:{port}"

  @classmethod
  def get_process_count(cls):
    return _int_env("OMPI_COMM_WORLD_SIZE")

  @classmethod
  def get_process_id(cls):
    return _int_env("OMPI_COMM_WORLD_RANK")

  @classmethod
  def get_local_process_id(cls):
    return _int_env("OMPI_COMM_WORLD_LOCAL_RANK")


def _split_top_level(s: str) -> list[str]:
  """`s` split at the commas outside brackets."""
  parts, depth, start = [], 0, 0
  for i, ch in enumerate(s):
    depth += {"[": 1, "]": -1}.get(ch, 0)
    if ch == "," and depth == 0:
      parts.append(s[start:i])
      start = i + 1
  parts.append(s[start:])
  return [p for p in parts if p]


def _expand_range_list(body: str) -> list[str]:
  """``"001-003,7"`` -> ["001", "002", "003", "7"], keeping zero padding."""
  out = []
  for item in body.split(","):
    lo, sep, hi = item.partition("-")
    if not sep:
      out.append(lo)
      continue
    if not (lo.isdigit() and hi.isdigit()) or int(hi) < int(lo):
      raise ValueError(f"Invalid range {item!r} in Slurm node list.")
    out.extend(str(n).zfill(len(lo)) for n in range(int(lo), int(hi) + 1))
  return out


def expand_slurm_nodelist(node_list: str) -> list[str]:
  """The host names of a Slurm node list, in order.

  Args:
    node_list: Slurm's compressed form, e.g. ``"node[001-003,007],login1"``;
      several bracket groups in one name give every combination
      (``"r[1-2]n[1-2]"`` -> r1n1, r1n2, r2n1, r2n2).

  Returns:
    The list of host names.

  Raises:
    ValueError: on unbalanced brackets or an invalid range.
  """
  hosts = []
  for part in _split_top_level(node_list):
    pieces = re.split(r"\[([^\[\]]*)\]", part)
    if any("[" in p or "]" in p for p in pieces[::2]):
      raise ValueError(f"Unbalanced brackets in Slurm node list {node_list!r}.")
    choices = [[p] if i % 2 == 0 else _expand_range_list(p) for i, p in enumerate(pieces)]
    hosts.extend("".join(c) for c in itertools.product(*choices))
  return hosts


class SlurmCluster(ClusterEnv):
  """Slurm (`srun`); the coordinator runs on the first node of the job step."""
  name = "slurm"

  @classmethod
  def is_env_present(cls):
    return all(v in os.environ for v in ("SLURM_JOB_ID", "SLURM_STEP_NODELIST", "SLURM_NTASKS",
                                         "SLURM_PROCID", "SLURM_LOCALID"))

  @classmethod
  def get_coordinator_address(cls, timeout_secs, override_coordinator_port):
    port = override_coordinator_port or _ephemeral_port(_int_env("SLURM_JOB_ID"))
    return f"{expand_slurm_nodelist(os.environ['SLURM_STEP_NODELIST'])[0]}:{port}"

  @classmethod
  def get_process_count(cls):
    return _int_env("SLURM_NTASKS")

  @classmethod
  def get_process_id(cls):
    return _int_env("SLURM_PROCID")

  @classmethod
  def get_local_process_id(cls):
    return _int_env("SLURM_LOCALID")


def _mpi():
  try:
    from mpi4py import MPI
  except ImportError as e:
    raise ImportError("cluster_detection_method='mpi4py' needs the mpi4py package "
                      "(pip install mpi4py) and an MPI launcher (mpirun / mpiexec).") from e
  return MPI


class Mpi4pyCluster(ClusterEnv):
  """Any MPI through mpi4py (opt-in); rank 0's host runs the coordinator."""
  name = "mpi4py"
  opt_in_only_method = True

  @classmethod
  def is_env_present(cls):
    if sys.modules.get("mpi4py") is not None:
      return True
    try:
      return importlib.util.find_spec("mpi4py") is not None
    except (ImportError, ValueError):
      return False

  @classmethod
  def get_coordinator_address(cls, timeout_secs, override_coordinator_port):
    comm = _mpi().COMM_WORLD
    address = None
    if comm.Get_rank() == 0:
      host = socket.gethostname()
      # A stable hash of the host name (JAX uses Python's salted `hash`; only
      # rank 0 computes it, so either works).
      address = f"{host}:{override_coordinator_port or _ephemeral_port(zlib.crc32(host.encode()))}"
    return comm.bcast(address, root=0)

  @classmethod
  def get_process_count(cls):
    return int(_mpi().COMM_WORLD.Get_size())

  @classmethod
  def get_process_id(cls):
    return int(_mpi().COMM_WORLD.Get_rank())

  @classmethod
  def get_local_process_id(cls):
    MPI = _mpi()
    return int(MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED).Get_rank())


def detect_cluster(cluster_detection_method: str | None = None) -> type[ClusterEnv] | None:
  """The cluster environment to use, or None if none is present.

  Args:
    cluster_detection_method: None to pick the first present environment that
      is not opt-in only, or an environment's name to use that one.

  Returns:
    The `ClusterEnv` subclass, or None (also for ``"deactivate"``).

  Raises:
    ValueError: if `cluster_detection_method` names no environment.
    ImportError: for ``"mpi4py"`` when mpi4py is not installed.
    RuntimeError: if the named environment is not present.
  """
  if cluster_detection_method == "deactivate":
    return None
  if cluster_detection_method is None:
    return next((env for env in ClusterEnv._cluster_types
                 if not env.opt_in_only_method and env.is_env_present()), None)
  env = next((env for env in ClusterEnv._cluster_types if env.name == cluster_detection_method),
             None)
  if env is None:
    known = ", ".join(repr(e.name) for e in ClusterEnv._cluster_types)
    raise ValueError(f"Automatic Distributed initialization can not proceed: "
                     f"{cluster_detection_method} is not supported. Supported methods: "
                     f"{known}, or 'deactivate'.")
  if not env.is_env_present():
    if env is Mpi4pyCluster:
      _mpi()  # raises the ImportError that explains what is missing
    raise RuntimeError(f"Automatic Distributed initialization can not proceed: "
                       f"{cluster_detection_method} is supported but not functional in this "
                       f"environment.")
  return env


def auto_detect_unset_distributed_params(
    coordinator_address: str | None, num_processes: int | None, process_id: int | None,
    local_device_ids: Sequence[int] | None, cluster_detection_method: str | None,
    initialization_timeout: int | None,
) -> tuple[str | None, int | None, int | None, Sequence[int] | None]:
  """Fills the distributed arguments left as None from the cluster environment.

  Args:
    coordinator_address, num_processes, process_id, local_device_ids: the
      arguments of `jax.distributed.initialize`; those not None are kept.
    cluster_detection_method: None to detect, or the name of the environment to
      use (``"env"``, ``"ompi"``, ``"slurm"``, ``"mpi4py"``), or ``"deactivate"``.
    initialization_timeout: seconds an environment may wait to learn the
      coordinator (passed on to it).

  Returns:
    ``(coordinator_address, num_processes, process_id, local_device_ids)``,
    unchanged when no environment is present.

  Raises:
    ValueError: for an unknown `cluster_detection_method`, or an environment
      variable that is not an integer.
    ImportError: for ``"mpi4py"`` without mpi4py.
    RuntimeError: if the requested environment is not present.

  Mirrors `jax._src.clusters.ClusterEnv.auto_detect_unset_distributed_params`,
  except that JAX only logs an error for an unknown or absent requested method.
  """
  env = detect_cluster(cluster_detection_method)
  if env is None:
    logger.debug("No known cluster environment found for distributed initialization; known: %s",
                 ", ".join(e.__name__ for e in ClusterEnv._cluster_types))
    return coordinator_address, num_processes, process_id, local_device_ids
  logger.debug("Initializing distributed xjax via %s", env.__name__)
  if coordinator_address is None:
    coordinator_address = env.get_coordinator_address(
        timeout_secs=initialization_timeout,
        override_coordinator_port=os.environ.get("JAX_COORDINATOR_PORT") or None)
  if num_processes is None:
    num_processes = env.get_process_count()
  if process_id is None:
    process_id = env.get_process_id()
  if (local_device_ids is None and _ONE_DEVICE_PER_LOCAL_PROCESS
      and (local := env.get_local_process_id()) is not None):
    local_device_ids = [local]
  return coordinator_address, num_processes, process_id, local_device_ids
