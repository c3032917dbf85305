"""The multi-process APIs in a job of one process (this test process, never initialized)."""
import warnings

import numpy as np
import pytest

import xjax as jax
from xjax._src.config import config
from xjax.experimental import multihost_utils
from xjax.sharding import NamedSharding, PartitionSpec as P


def test_process_queries():
  assert jax.process_index() == 0
  assert jax.process_count() == 1
  assert jax.process_indices() == [0]
  assert jax.local_devices() == jax.devices()
  assert jax.local_devices(process_index=0) == jax.devices()
  assert jax.local_device_count() == jax.device_count()
  assert all(d.process_index == 0 for d in jax.devices())
  with pytest.raises(ValueError, match="Unknown process_index 1"):
    jax.local_devices(process_index=1)
  with pytest.warns(UserWarning, match="renamed from `host_id` to `process_index`"):
    assert jax.local_devices(host_id=0) == jax.devices()
  with pytest.raises(RuntimeError, match="Unknown backend gpu"):
    jax.process_count("gpu")
  assert "process_count: 1" in jax.print_environment_info(return_string=True)


def test_distributed_not_initialized():
  assert jax.distributed.is_initialized() is False
  assert jax.distributed.shutdown() is None  # nothing to shut down
  with pytest.raises(RuntimeError, match="must be called before any JAX calls"):
    jax.distributed.initialize("127.0.0.1:1", 2, 0)
  assert multihost_utils.reached_preemption_sync_point(3) is False


def test_allgather_and_broadcast_alone():
  x = np.arange(6.0).reshape(2, 3)
  np.testing.assert_array_equal(multihost_utils.process_allgather(x), x[None])
  np.testing.assert_array_equal(multihost_utils.process_allgather(x, tiled=True), x)
  np.testing.assert_array_equal(multihost_utils.process_allgather(jax.numpy.asarray(x)), x[None])
  out = multihost_utils.process_allgather({"a": 3, "b": [x]})
  np.testing.assert_array_equal(out["a"], [3])
  np.testing.assert_array_equal(out["b"][0], x[None])
  got = multihost_utils.broadcast_one_to_all({"a": jax.numpy.ones(2), "b": 7})
  assert type(got["a"]) is np.ndarray and type(got["b"]) is np.ndarray
  np.testing.assert_array_equal(got["a"], np.ones(2))
  multihost_utils.sync_global_devices("alone")
  multihost_utils.assert_equal({"a": x})


def test_host_local_and_global_alone():
  mesh = jax.make_mesh((1,), ("x",))
  x = np.arange(4.0, dtype=np.float32)
  g = multihost_utils.host_local_array_to_global_array(x, mesh, P("x"))
  assert g.shape == (4,) and g.sharding == NamedSharding(mesh, P("x"))
  np.testing.assert_array_equal(g, x)
  assert multihost_utils.global_array_to_host_local_array(g, mesh, P("x")) is g
  with pytest.raises(ValueError, match="`None` is not a valid input to the pspecs argument"):
    multihost_utils.host_local_array_to_global_array(x, mesh, None)
  assert mesh.local_mesh == mesh
  assert mesh.is_multi_process is False


def test_make_array_from_process_local_data_alone():
  mesh = jax.make_mesh((1,), ("x",))
  x = np.arange(6.0).reshape(3, 2)
  out = jax.make_array_from_process_local_data(NamedSharding(mesh, P("x")), x)
  np.testing.assert_array_equal(out, x)
  with pytest.raises(ValueError, match="global_shape should be None or equal to local_data"):
    jax.make_array_from_process_local_data(NamedSharding(mesh, P("x")), x, (6, 2))


def test_distributed_flags():
  assert config.jax_cpu_collectives_implementation == "gloo"
  with pytest.raises(ValueError, match="new enum value must be None or in|new enum value must be in"):
    config.update("jax_cpu_collectives_implementation", "nccl")
  jax.devices()  # the backend exists
  with pytest.raises(RuntimeError, match="should be updated before backends are initialized"):
    config.update("jax_cpu_get_local_topology_timeout_minutes", 7)
  # The value it already has is accepted.
  config.update("jax_cpu_get_local_topology_timeout_minutes",
                config.jax_cpu_get_local_topology_timeout_minutes)


def test_no_warning_importing_multihost_utils():
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    import xjax.experimental.multihost_utils  # noqa: F401
