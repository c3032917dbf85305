"""`make_array_from_callback`, `make_array_from_single_device_arrays` and
`make_array_from_process_local_data` on 8 devices: values against NumPy, errors against
JAX's (recorded by tools/golden_sharding_debug.py)."""
import json
import os
import re
import sys

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax.errors import UnexpectedTracerError
from xjax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import golden_sharding_debug as cases  # noqa: E402

GOLDEN = json.load(open(os.path.join(HERE, "..", "golden", "sharding_debug.json"),
                        encoding="utf-8"))

DATA = np.arange(64, dtype=np.float32).reshape(8, 8) / 3


@pytest.fixture(scope="module")
def env():
  return cases.names(xjax, jnp, Mesh, NamedSharding, P, AxisType, SingleDeviceSharding)


def _shardings():
  explicit = xjax.make_mesh((2, 4), ("x", "y"))
  auto = xjax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
  permuted = Mesh(np.array(xjax.devices())[[5, 2, 7, 0, 1, 6, 3, 4]].reshape(4, 2), ("a", "b"))
  return {
      "xy_explicit": NamedSharding(explicit, P("x", "y")),
      "xy_auto": NamedSharding(auto, P("x", "y")),
      "yx": NamedSharding(auto, P("y", "x")),
      "rows_partly_replicated": NamedSharding(auto, P("x")),
      "cols_both_axes": NamedSharding(auto, P(None, ("y", "x"))),
      "replicated": NamedSharding(auto, P()),
      "permuted_devices": NamedSharding(permuted, P("b", "a")),
      "four_devices": NamedSharding(Mesh(np.array(xjax.devices()[4:]), ("d",)), P("d")),
      "one_device": SingleDeviceSharding(xjax.devices()[6]),
  }


SHARDINGS = _shardings()


def _check_array(out, sharding, want):
  """`out` is `want` laid out as `sharding`: value, sharding and every shard's data."""
  assert type(out) is xjax.Array and out.committed and not out.weak_type
  assert out.shape == want.shape and out.dtype == want.dtype
  assert out.sharding == sharding
  np.testing.assert_array_equal(np.asarray(out), want)
  index_map = sharding.devices_indices_map(want.shape)
  assert {s.device for s in out.addressable_shards} == set(index_map)
  for shard in out.addressable_shards:
    assert shard.index == index_map[shard.device]
    np.testing.assert_array_equal(np.asarray(shard.data), want[shard.index])


# ----------------------------------------------------------------------------
# make_array_from_callback


@pytest.mark.parametrize("name", sorted(SHARDINGS))
def test_make_array_from_callback_matches_numpy(name):
  sharding = SHARDINGS[name]
  calls = []

  def callback(index):
    calls.append(index)
    return DATA[index]

  out = xjax.make_array_from_callback(DATA.shape, sharding, callback)
  _check_array(out, sharding, DATA)
  if sharding.is_fully_replicated:
    assert calls == [(slice(None), slice(None))]  # asked once for the whole array
  else:
    index_map = sharding.devices_indices_map(DATA.shape)
    assert calls == [index_map[d] for d in sharding._device_assignment]
  # The result computes like any sharded array.
  np.testing.assert_allclose(np.asarray(xjax.jit(lambda v: (v * 2).sum(0))(out)),
                             (DATA * 2).sum(0), rtol=1e-6)


def test_make_array_from_callback_takes_arrays_and_scalars():
  sharding = SHARDINGS["rows_partly_replicated"]
  on_device_0 = xjax.device_put(DATA, xjax.devices()[0])
  _check_array(xjax.make_array_from_callback((8, 8), sharding, lambda i: on_device_0[i]),
               sharding, DATA)
  spread = xjax.device_put(DATA, SHARDINGS["yx"])
  _check_array(xjax.make_array_from_callback((8, 8), sharding, lambda i: spread[i]),
               sharding, DATA)
  replicated = SHARDINGS["replicated"]
  for value, dtype in ((2.5, np.float32), (3, np.int32), (True, np.bool_),
                       (np.int64(7), np.int32), (np.float64(1.5), np.float32)):
    out = xjax.make_array_from_callback((), replicated, lambda i, v=value: v)
    _check_array(out, replicated, np.asarray(value, dtype))


def test_make_array_from_callback_empty_and_dtype_argument():
  sharding = SHARDINGS["rows_partly_replicated"]
  empty = np.zeros((0, 8), np.int32)
  _check_array(xjax.make_array_from_callback((0, 8), sharding, lambda i: empty[i]), sharding,
               empty)
  out = xjax.make_array_from_callback((8, 8), sharding, lambda i: DATA[i], dtype=np.float32)
  _check_array(out, sharding, DATA)
  with pytest.warns(UserWarning, match="Explicitly requested dtype float64 requested in "
                                       "make_array_from_callback is not available"):
    out = xjax.make_array_from_callback((8, 8), sharding, lambda i: DATA[i], dtype=np.float64)
  assert out.dtype == np.float32


def test_make_array_from_callback_refuses_tracers_and_non_arrays():
  sharding = SHARDINGS["replicated"]
  with pytest.raises(UnexpectedTracerError, match="jax.make_array_from_callback cannot be "
                                                  "called within a traced context."):
    xjax.jit(lambda v: xjax.make_array_from_callback((8,), sharding, lambda i: v))(np.ones(8))
  with pytest.raises(TypeError, match="is not a valid JAX type"):
    xjax.make_array_from_callback((2,), sharding, lambda i: [1, 2])


# ----------------------------------------------------------------------------
# make_array_from_single_device_arrays


def _pieces(sharding, value):
  return [xjax.device_put(value[index], device)
          for device, index in sharding.devices_indices_map(value.shape).items()]


@pytest.mark.parametrize("name", sorted(SHARDINGS))
def test_make_array_from_single_device_arrays_matches_numpy(name):
  sharding = SHARDINGS[name]
  pieces = _pieces(sharding, DATA)
  _check_array(xjax.make_array_from_single_device_arrays((8, 8), sharding, pieces), sharding,
               DATA)
  # Any order, a tuple, and a dtype that agrees.
  out = xjax.make_array_from_single_device_arrays([8, 8], sharding, tuple(pieces[::-1]),
                                                  dtype=np.float32)
  _check_array(out, sharding, DATA)
  np.testing.assert_allclose(np.asarray(jnp.sin(out)), np.sin(DATA), rtol=1e-6)


def test_make_array_from_single_device_arrays_shares_the_device_buffers():
  sharding = SHARDINGS["xy_auto"]
  pieces = _pieces(sharding, DATA)
  out = xjax.make_array_from_single_device_arrays((8, 8), sharding, pieces)
  by_device = {p.device: p for p in pieces}
  for shard in out.addressable_shards:
    assert (shard.data._buf.unsafe_buffer_pointer()
            == by_device[shard.device]._buf.unsafe_buffer_pointer())


def test_make_array_from_single_device_arrays_replicas_keep_their_own_data():
  # Replicas are taken as given (not checked equal); the value is the first replica's.
  sharding = SHARDINGS["rows_partly_replicated"]  # rows over x, replicated over y
  devices = sharding._device_assignment
  pieces = [xjax.device_put(np.full((4, 8), i, np.float32), d) for i, d in enumerate(devices)]
  out = xjax.make_array_from_single_device_arrays((8, 8), sharding, pieces)
  for i, shard in enumerate(out.addressable_shards):
    assert shard.replica_id == i % 4
    np.testing.assert_array_equal(np.asarray(shard.data), np.full((4, 8), i))
  np.testing.assert_array_equal(np.asarray(out), np.repeat([0.0, 4.0], 4)[:, None] * np.ones(8))


def test_make_array_from_single_device_arrays_takes_uncommitted_arrays():
  sharding = NamedSharding(xjax.make_mesh((8,), ("d",)), P("d"))
  pieces = [jnp.ones(2)] + [xjax.device_put(np.ones(2, np.float32), d)
                            for d in xjax.devices()[1:]]
  assert not pieces[0].committed
  _check_array(xjax.make_array_from_single_device_arrays((16,), sharding, pieces), sharding,
               np.ones(16, np.float32))


def test_make_array_from_single_device_arrays_refuses_tracers_and_deleted_arrays():
  sharding = SHARDINGS["four_devices"]
  with pytest.raises(ValueError, match="jax.make_array_from_single_device_arrays requires a "
                                       "list of concrete arrays as input, but got types"):
    xjax.jit(lambda v: xjax.make_array_from_single_device_arrays((8,), sharding, [v] * 4))(
        np.ones(2, np.float32))
  pieces = _pieces(sharding, DATA[0])
  pieces[1].delete()
  with pytest.raises(RuntimeError, match="Array has been deleted"):
    xjax.make_array_from_single_device_arrays((8,), sharding, pieces)


# ----------------------------------------------------------------------------
# make_array_from_process_local_data


def test_make_array_from_process_local_data_places_the_whole_data():
  sharding = SHARDINGS["xy_explicit"]
  _check_array(xjax.make_array_from_process_local_data(sharding, DATA), sharding, DATA)
  _check_array(xjax.make_array_from_process_local_data(sharding, DATA, (8, 8)), sharding, DATA)
  tree = xjax.make_array_from_process_local_data(
      SHARDINGS["replicated"], {"a": DATA, "b": DATA[0]}, {"a": None, "b": (8,)})
  _check_array(tree["a"], SHARDINGS["replicated"], DATA)
  _check_array(tree["b"], SHARDINGS["replicated"], DATA[0])
  mesh = SHARDINGS["xy_auto"].mesh
  with xjax.set_mesh(mesh):
    out = xjax.make_array_from_process_local_data(P("y"), DATA)
  _check_array(out, NamedSharding(mesh, P("y")), DATA)


# ----------------------------------------------------------------------------
# Errors, as JAX words them


@pytest.mark.parametrize("name", sorted(GOLDEN["construction_errors"]))
def test_construction_errors_match_jax(name, env):
  case = GOLDEN["construction_errors"][name]
  kind, message = case["error"]
  with pytest.raises(Exception) as info:
    eval(case["expr"], dict(env))
  assert (type(info.value).__name__, str(info.value)) == (kind, message)


def test_a_non_sharding_raises_type_error(env):
  message = re.escape("sharding should be an instance of `jax.sharding`. Got P('x',) of type")
  with pytest.raises(TypeError, match=message):  # as JAX
    xjax.make_array_from_callback((8, 8), P("x"), lambda i: DATA[i])
  # JAX fails here with an AttributeError on the PartitionSpec; xjax says what is wrong.
  with pytest.raises(TypeError, match=message):
    xjax.make_array_from_single_device_arrays((8, 8), P("x"), env["pieces"](env["s"]))
