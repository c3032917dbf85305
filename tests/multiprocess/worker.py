"""One process of a multi-process test: `python worker.py CASE`.

Started by `test_distributed.py` (N copies, with JAX_COORDINATOR_ADDRESS,
JAX_NUM_PROCESSES, JAX_PROCESS_ID and forced CPU devices). It joins the job,
runs the case and prints one line ``RESULT <json>`` with what it saw; the test
checks those values against NumPy in its own process.
"""
import functools
import json
import os
import sys
import time

import numpy as np

import xjax as jax
import xjax.numpy as jnp
from xjax.experimental import multihost_utils
from xjax.sharding import NamedSharding, PartitionSpec as P

CASES = {}


def case(fun):
  CASES[fun.__name__] = fun
  return fun


def _global_rows(mesh, rows_per_process=4):
  """A global (rows_per_process * n,) float32 array: process p holds 100 * p + [0..rows)."""
  local = np.arange(rows_per_process, dtype=np.float32) + 100 * jax.process_index()
  return jax.make_array_from_process_local_data(NamedSharding(mesh, P("x")), local)


def _error(fun):
  try:
    fun()
  except Exception as e:  # noqa: BLE001  (the test checks the class and text)
    return [type(e).__name__, str(e)]
  return None


@case
def queries():
  twice = _error(jax.distributed.initialize)  # before the backend exists
  devices = jax.devices()
  return dict(
      initialize_twice=twice,
      process_index=jax.process_index(), process_count=jax.process_count(),
      process_indices=jax.process_indices(), initialized=jax.distributed.is_initialized(),
      device_ids=[d.id for d in devices], device_processes=[d.process_index for d in devices],
      local_ids=[d.id for d in jax.local_devices()],
      local_of_0=[d.id for d in jax.local_devices(process_index=0)],
      local_device_count=jax.local_device_count(), device_count=jax.device_count(),
      bad_process=_error(lambda: jax.local_devices(process_index=jax.process_count())),
      second_initialize=_error(jax.distributed.initialize),
      default_device=jax.numpy.zeros(3).device.id)


@case
def arrays():
  mesh = jax.make_mesh((jax.device_count(),), ("x",))
  x = _global_rows(mesh, 4)
  sharding = NamedSharding(mesh, P("x"))
  per_device = jax.device_count() and 4 * jax.process_count() // jax.device_count()
  cb = jax.make_array_from_callback(
      (4 * jax.process_count(),), sharding,
      lambda index: np.arange(4 * jax.process_count(), dtype=np.float32)[index])
  singles = [jax.device_put(np.full((per_device,), d.id, np.float32), d)
             for d in sharding.addressable_devices]
  from_singles = jax.make_array_from_single_device_arrays((4 * jax.process_count(),), sharding,
                                                          singles)
  replicated = jax.jit(lambda v: v * 2, out_shardings=NamedSharding(mesh, P()))(x)
  return dict(
      shape=list(x.shape), fully_addressable=x.is_fully_addressable,
      addressable=[[s.device.id, s.index[0].start, s.index[0].stop, s.data.tolist()]
                   for s in x.addressable_shards],
      global_shards=[[s.device.id, s.data is None] for s in x.global_shards],
      to_numpy=_error(lambda: np.asarray(x)), repr=repr(x),
      callback=multihost_utils.process_allgather(cb, tiled=True).tolist(),
      singles=multihost_utils.process_allgather(from_singles, tiled=True).tolist(),
      replicated=np.asarray(replicated).tolist(), replicated_repr=repr(replicated),
      resharded=np.asarray(jax.device_put(x, NamedSharding(mesh, P()))).tolist(),
      donated=multihost_utils.process_allgather(
          jax.jit(lambda v: v - 1, donate_argnums=0)(x + 0), tiled=True).tolist(),
      device_put=multihost_utils.process_allgather(
          jax.device_put(np.arange(8.0, dtype=np.float32).reshape(4, 2),
                         NamedSharding(mesh, P(None, None))), tiled=True).tolist(),
      device_put_differs=_error(lambda: jax.device_put(
          np.arange(float(jax.device_count())) + jax.process_index(), sharding)),
      committed_local=_error(lambda: jax.device_put(
          jax.device_put(np.arange(float(jax.device_count())), jax.local_devices()[0]),
          sharding)))


@case
def local_data():
  """make_array_from_process_local_data over a (process, local device) mesh."""
  pid = jax.process_index()
  devices = np.array(jax.devices(), dtype=object).reshape(jax.process_count(), -1)
  mesh = jax.sharding.Mesh(devices, ("p", "l"))
  data = (np.arange(8.0, dtype=np.float32) + 100 * pid).reshape(2, 4)

  def gathered(spec, local, global_shape=None):
    x = jax.make_array_from_process_local_data(NamedSharding(mesh, spec), local, global_shape)
    return [list(x.shape), multihost_utils.process_allgather(x, tiled=True).tolist()]

  return dict(
      rows=gathered(P("p", "l"), data), cols=gathered(P("l", "p"), data),
      replicated_dim=gathered(P("p"), data, (2 * jax.process_count(), 4)),
      tree={k: list(v.shape) for k, v in jax.make_array_from_process_local_data(
          NamedSharding(mesh, P("p")), {"a": data, "b": data[:, :1]}).items()},
      bad_rows=_error(lambda: jax.make_array_from_process_local_data(
          NamedSharding(mesh, P("p", "l")), data[:1], (2 * jax.process_count(), 4))),
      nones=_error(lambda: jax.make_array_from_process_local_data(
          NamedSharding(mesh, P("p")), data, (None, 4))))


@case
def jit_sum():
  mesh = jax.make_mesh((jax.device_count(),), ("x",))
  x = _global_rows(mesh, 4)
  total = jax.jit(jnp.sum)(x)
  grad = jax.jit(jax.grad(lambda w, a: jnp.sum((a * w) ** 2)))(jnp.float32(2.0), x)
  shifted = jax.jit(lambda a: a + 1, out_shardings=NamedSharding(mesh, P("x")))(x)
  return dict(total=float(total), total_addressable=total.is_fully_addressable,
              grad=float(grad),
              shifted=multihost_utils.process_allgather(shifted, tiled=True).tolist(),
              eager=multihost_utils.process_allgather(x * 3, tiled=True).tolist())


@case
def collectives():
  mesh = jax.make_mesh((jax.device_count(),), ("x",))
  x = _global_rows(mesh, 2 * jax.local_device_count())

  @functools.partial(jax.shard_map, mesh=mesh, in_specs=P("x"), out_specs=P())
  def total(a):
    return jax.lax.psum(jnp.sum(a), "x")

  @functools.partial(jax.shard_map, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
  def gathered_index(a):
    return jax.lax.all_gather(a, "x", tiled=True)[:a.shape[0]] + jax.lax.axis_index("x")

  n = jax.device_count()

  @functools.partial(jax.shard_map, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
  def rotated(a):
    return jax.lax.ppermute(a, "x", [(i, (i + 1) % n) for i in range(n)])

  mapped = jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")(
      np.ones((jax.local_device_count(), 3), np.float32) * (jax.process_index() + 1))
  return dict(psum=float(total(x)),
              gathered=multihost_utils.process_allgather(gathered_index(x), tiled=True).tolist(),
              rotated=multihost_utils.process_allgather(rotated(x), tiled=True).tolist(),
              pmap=np.asarray(mapped).tolist())


@case
def multihost():
  pid = jax.process_index()
  mesh = jax.make_mesh((jax.device_count(),), ("x",))
  as_global = multihost_utils.host_local_array_to_global_array(
      np.arange(4.0, dtype=np.float32) + 10 * pid, mesh, P("x"))
  back = multihost_utils.global_array_to_host_local_array(as_global, mesh, P("x"))
  multihost_utils.sync_global_devices("test barrier")
  return dict(
      stacked=multihost_utils.process_allgather(np.array([pid, 2 * pid])).tolist(),
      tiled=multihost_utils.process_allgather(np.array([pid, 2 * pid]), tiled=True).tolist(),
      scalar=multihost_utils.process_allgather(pid).tolist(),
      tree=jax.tree.map(lambda v: v.tolist(), multihost_utils.process_allgather(
          {"a": np.float32(pid), "b": [np.array([pid])]})),
      broadcast=multihost_utils.broadcast_one_to_all(np.array([pid + 5.0])).tolist(),
      broadcast_last=multihost_utils.broadcast_one_to_all(
          np.array([pid]), is_source=pid == jax.process_count() - 1).tolist(),
      global_shape=list(as_global.shape),
      global_value=multihost_utils.process_allgather(as_global, tiled=True).tolist(),
      untiled_global=_error(lambda: multihost_utils.process_allgather(as_global)),
      back=np.asarray(back).tolist(), back_shape=list(back.shape),
      assert_equal_same=_error(lambda: multihost_utils.assert_equal(np.arange(3), "same")),
      assert_equal_differs=_error(lambda: multihost_utils.assert_equal(np.array([pid]),
                                                                        "differs")),
      preemption=multihost_utils.reached_preemption_sync_point(0))


@case
def crash():
  """Process 1 dies after a first collective; the others' next one must not hang."""
  mesh = jax.make_mesh((jax.device_count(),), ("x",))
  x = _global_rows(mesh, 4)
  print("first", float(jax.jit(jnp.sum)(x)), flush=True)
  if jax.process_index() == 1:
    os._exit(3)
  time.sleep(0.5)
  print("second", float(jax.jit(jnp.sum)(x * 2)), flush=True)
  return {}


def main():
  name = sys.argv[1]
  kwargs = {}
  if name == "crash":
    kwargs["heartbeat_timeout_seconds"] = 3
  jax.distributed.initialize(initialization_timeout=60, **kwargs)
  result = CASES[name]()
  print("RESULT " + json.dumps(result), flush=True)
  jax.distributed.shutdown()


if __name__ == "__main__":
  main()
