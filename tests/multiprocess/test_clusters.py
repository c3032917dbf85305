"""Cluster auto-detection for `jax.distributed.initialize`, with faked environments."""
import os
import sys
import types

import pytest

from xjax._src import clusters

_PREFIXES = ("JAX_", "SLURM_", "OMPI_")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
  """No cluster variables from the machine running the tests."""
  for name in list(os.environ):
    if name.startswith(_PREFIXES):
      monkeypatch.delenv(name)
  monkeypatch.delitem(sys.modules, "mpi4py", raising=False)
  return monkeypatch


def detect(*args, method=None):
  args = args or (None, None, None, None)
  return clusters.auto_detect_unset_distributed_params(*args, method, 300)


def set_env(monkeypatch, **values):
  for k, v in values.items():
    monkeypatch.setenv(k, str(v))


SLURM = dict(SLURM_JOB_ID=4097, SLURM_STEP_NODELIST="node[007-009],login1", SLURM_NTASKS=4,
             SLURM_PROCID=2, SLURM_LOCALID=1)
OMPI = dict(OMPI_MCA_orte_hnp_uri="1531576320.0;tcp://10.96.0.1,10.148.0.1:34911",
            OMPI_COMM_WORLD_SIZE=3, OMPI_COMM_WORLD_RANK=1, OMPI_COMM_WORLD_LOCAL_RANK=0)


def test_nothing_detected_returns_arguments_unchanged():
  assert detect() == (None, None, None, None)
  assert detect("h:1", 2, None, None) == ("h:1", 2, None, None)
  assert clusters.detect_cluster() is None


def test_env_launcher_variables(clean_env):
  set_env(clean_env, JAX_NUM_PROCESSES=4, JAX_PROCESS_ID=3, JAX_COORDINATOR_ADDRESS="10.0.0.1:1234")
  assert clusters.detect_cluster() is clusters.EnvVarCluster
  assert detect() == ("10.0.0.1:1234", 4, 3, None)


def test_env_keeps_explicit_arguments(clean_env):
  set_env(clean_env, JAX_NUM_PROCESSES=4, JAX_PROCESS_ID=3, JAX_COORDINATOR_ADDRESS="10.0.0.1:1234")
  assert detect("me:5", None, 0, [7]) == ("me:5", 4, 0, [7])
  assert detect("me:5", 2, 1, None) == ("me:5", 2, 1, None)


def test_env_missing_process_id_and_address_stay_none(clean_env):
  set_env(clean_env, JAX_NUM_PROCESSES=2)
  assert detect() == (None, 2, None, None)


def test_env_coordinator_port_override(clean_env):
  set_env(clean_env, JAX_NUM_PROCESSES=2, JAX_PROCESS_ID=0, JAX_COORDINATOR_ADDRESS="host0:1234",
          JAX_COORDINATOR_PORT=999)
  assert detect()[0] == "host0:999"
  set_env(clean_env, JAX_COORDINATOR_ADDRESS="host0")
  assert detect()[0] == "host0:999"


def test_env_bad_integer(clean_env):
  set_env(clean_env, JAX_NUM_PROCESSES="two", JAX_PROCESS_ID=0)
  with pytest.raises(ValueError, match="JAX_NUM_PROCESSES must be an integer, got 'two'"):
    detect()


def test_env_takes_precedence_over_slurm(clean_env):
  set_env(clean_env, **SLURM, JAX_NUM_PROCESSES=2, JAX_PROCESS_ID=1,
          JAX_COORDINATOR_ADDRESS="127.0.0.1:5")
  assert detect() == ("127.0.0.1:5", 2, 1, None)
  assert detect(method="slurm") == ("node007:" + str(4097 % 4096 + 61440), 4, 2, None)


def test_slurm(clean_env):
  set_env(clean_env, **SLURM)
  assert clusters.detect_cluster() is clusters.SlurmCluster
  # port: job id mod 2**12 in JAX's range [61440, 65535]
  assert detect() == ("node007:61441", 4, 2, None)


def test_slurm_needs_every_variable(clean_env):
  set_env(clean_env, **{k: v for k, v in SLURM.items() if k != "SLURM_LOCALID"})
  assert detect() == (None, None, None, None)


def test_slurm_coordinator_port_override(clean_env):
  set_env(clean_env, **SLURM, JAX_COORDINATOR_PORT=12345)
  assert detect()[0] == "node007:12345"


@pytest.mark.parametrize("node_list, first", [
    ("node001", "node001"), ("node001,host2", "node001"), ("node[001-0015],host2", "node001"),
    ("node[001,007-015],host2", "node001"), ("host2,node[3-4]", "host2")])
def test_slurm_coordinator_host_formats(clean_env, node_list, first):
  set_env(clean_env, **dict(SLURM, SLURM_STEP_NODELIST=node_list))
  assert detect()[0] == f"{first}:61441"


def test_slurm_local_rank_is_not_a_cpu_device_id(clean_env, monkeypatch):
  set_env(clean_env, **SLURM)
  assert detect()[3] is None
  # On a platform with one device per process (JAX's GPU behaviour) the local
  # rank would become the device id.
  monkeypatch.setattr(clusters, "_ONE_DEVICE_PER_LOCAL_PROCESS", True)
  assert detect()[3] == [1]
  assert detect(None, None, None, [5])[3] == [5]


@pytest.mark.parametrize("node_list, hosts", [
    ("n1", ["n1"]),
    ("n1,n2", ["n1", "n2"]),
    ("node[001-003,007],login1", ["node001", "node002", "node003", "node007", "login1"]),
    ("node[8-11]", ["node8", "node9", "node10", "node11"]),
    ("node[098-101]", ["node098", "node099", "node100", "node101"]),
    ("r[1-2]n[1-2]", ["r1n1", "r1n2", "r2n1", "r2n2"]),
    ("a[1-2]-ib,b", ["a1-ib", "a2-ib", "b"]),
    ("gpu-[3]", ["gpu-3"]),
])
def test_expand_slurm_nodelist(node_list, hosts):
  assert clusters.expand_slurm_nodelist(node_list) == hosts


@pytest.mark.parametrize("node_list", ["node[1-3", "node1-3]", "node[3-1]", "node[a-b]"])
def test_expand_slurm_nodelist_errors(node_list):
  with pytest.raises(ValueError):
    clusters.expand_slurm_nodelist(node_list)


def test_ompi(clean_env):
  set_env(clean_env, **OMPI)
  assert clusters.detect_cluster() is clusters.OmpiCluster
  # 1531576320 // 2**12 = 373920; 373920 % 4096 = 1184; + 61440
  assert detect() == ("10.96.0.1:62624", 3, 1, None)


def test_ompi_ipv6_and_port_override(clean_env):
  set_env(clean_env, **OMPI, JAX_COORDINATOR_PORT=777)
  clean_env.setenv("OMPI_MCA_orte_hnp_uri",
                   "1314521088.0;tcp6://[fe80::b9b:ac5d:9cf0:b858,2620:10d:c083:150e::3000:2]:43370")
  assert detect()[0] == "[fe80::b9b:ac5d:9cf0:b858]:777"


def test_ompi_unparsable_uri(clean_env):
  set_env(clean_env, **OMPI)
  clean_env.setenv("OMPI_MCA_orte_hnp_uri", "1531576320.0;udp://nowhere")
  with pytest.raises(RuntimeError, match="Could not parse coordinator IP address"):
    detect()


def test_ompi_is_checked_before_slurm(clean_env):
  set_env(clean_env, **OMPI, **SLURM)
  assert clusters.detect_cluster() is clusters.OmpiCluster
  assert clusters.detect_cluster("slurm") is clusters.SlurmCluster


def test_unknown_method():
  with pytest.raises(ValueError, match="can not proceed: pbs is not supported"):
    detect(method="pbs")


def test_requested_method_not_present():
  with pytest.raises(RuntimeError, match="slurm is supported but not functional"):
    detect(method="slurm")


def test_deactivate_detects_nothing(clean_env):
  set_env(clean_env, **SLURM)
  assert detect(method="deactivate") == (None, None, None, None)


def _fake_mpi4py(rank, size, local_rank, bcast_result):
  calls = []

  class Comm:
    def Get_rank(self):
      return rank

    def Get_size(self):
      return size

    def bcast(self, obj, root):
      calls.append((obj, root))
      return bcast_result if rank != 0 else obj

    def Split_type(self, kind):
      assert kind == "shared"
      return types.SimpleNamespace(Get_rank=lambda: local_rank)

  MPI = types.SimpleNamespace(COMM_WORLD=Comm(), COMM_TYPE_SHARED="shared")
  return types.SimpleNamespace(MPI=MPI), calls


def test_mpi4py_is_opt_in_only(clean_env):
  fake, _ = _fake_mpi4py(0, 2, 0, None)
  clean_env.setitem(sys.modules, "mpi4py", fake)
  assert clusters.detect_cluster() is None
  assert clusters.detect_cluster("mpi4py") is clusters.Mpi4pyCluster


def test_mpi4py_rank0_broadcasts_its_host(clean_env):
  fake, calls = _fake_mpi4py(0, 2, 0, None)
  clean_env.setitem(sys.modules, "mpi4py", fake)
  clean_env.setattr(clusters.socket, "gethostname", lambda: "hostA")
  clean_env.setenv("JAX_COORDINATOR_PORT", "4321")
  assert detect(method="mpi4py") == ("hostA:4321", 2, 0, None)
  assert calls == [("hostA:4321", 0)]


def test_mpi4py_other_rank_receives_address(clean_env, monkeypatch):
  fake, calls = _fake_mpi4py(1, 2, 1, "hostA:62000")
  clean_env.setitem(sys.modules, "mpi4py", fake)
  assert detect(method="mpi4py") == ("hostA:62000", 2, 1, None)
  assert calls == [(None, 0)]
  monkeypatch.setattr(clusters, "_ONE_DEVICE_PER_LOCAL_PROCESS", True)
  assert detect(method="mpi4py")[3] == [1]


def test_mpi4py_default_port_is_in_range(clean_env):
  fake, _ = _fake_mpi4py(0, 1, 0, None)
  clean_env.setitem(sys.modules, "mpi4py", fake)
  host, port = detect(method="mpi4py")[0].rsplit(":", 1)
  assert host == clusters.socket.gethostname() and 61440 <= int(port) <= 65535


def test_mpi4py_missing_is_an_import_error(clean_env, monkeypatch):
  monkeypatch.setattr(clusters.importlib.util, "find_spec", lambda name: None)
  monkeypatch.setitem(sys.modules, "mpi4py", None)  # makes `import mpi4py` fail
  with pytest.raises(ImportError, match="needs the mpi4py package"):
    detect(method="mpi4py")


def test_custom_environment_registers_itself(clean_env):
  class Custom(clusters.ClusterEnv):
    name = "custom-test"
    opt_in_only_method = True

    @classmethod
    def is_env_present(cls):
      return True

    @classmethod
    def get_coordinator_address(cls, timeout_secs, override_coordinator_port):
      return f"c:{timeout_secs}"

    @classmethod
    def get_process_count(cls):
      return 5

    @classmethod
    def get_process_id(cls):
      return 4

  try:
    assert detect() == (None, None, None, None)  # opt-in only
    assert detect(method="custom-test") == ("c:300", 5, 4, None)
  finally:
    clusters.ClusterEnv._cluster_types.remove(Custom)
