"""Sharded arrays, eager ops, jit with shardings, constraints and their errors on 8 devices."""
import json
import os

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding

from . import sharding_cases

GOLDEN = json.load(open(os.path.join(os.path.dirname(__file__), "..", "golden", "sharding.json")))


@pytest.fixture
def mesh():
  return xjax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)


A = np.arange(64, dtype=np.float32).reshape(8, 8)


@pytest.mark.parametrize("name", sorted(sharding_cases.cases()))
def test_output_sharding_and_values_equal_jax(name):
  y = sharding_cases.cases()[name](xjax)
  want = GOLDEN[name]
  np.testing.assert_allclose(np.asarray(y), np.asarray(want["value"], np.float32), rtol=1e-6)
  assert y.sharding.spec == eval(want["spec"]), (y.sharding.spec, want["spec"])


def test_make_mesh_and_reprs():
  mesh = xjax.make_mesh((4, 2), ("x", "y"))
  assert str(mesh) == "Mesh('x': 4, 'y': 2, axis_types=(Explicit, Explicit))"
  assert repr(mesh) == ("Mesh(axis_sizes=(4, 2), axis_names=('x', 'y'), "
                        "axis_types=(Explicit, Explicit))")
  assert mesh.devices.shape == (4, 2) and list(mesh.devices.flat) == xjax.devices()
  assert mesh.shape == {"x": 4, "y": 2} and mesh.size == 8 and mesh.axis_sizes == (4, 2)
  assert repr(mesh.abstract_mesh).startswith("AbstractMesh('x': 4, 'y': 2, axis_types=")
  assert repr(P("x", None)) == "P('x', None)" and repr(P("x")) == "P('x',)"
  assert repr(P(("x", "y"),)) == "P(('x', 'y'),)" and repr(P()) == "P()"
  assert xjax.P is P
  s = NamedSharding(mesh, P("x"))
  assert repr(s) == ("NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Explicit, Explicit)), "
                     "spec=P('x',), memory_kind=device)")
  assert repr(SingleDeviceSharding(xjax.devices()[0])) == (
      "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)")
  with pytest.raises(ValueError, match="Number of devices 8 must be >= the product of mesh_shape"):
    xjax.make_mesh((4, 4), ("x", "y"))


def test_device_put_shards(mesh):
  x = xjax.device_put(A, NamedSharding(mesh, P("x")))
  assert x.committed and not x.is_fully_replicated and x.is_fully_addressable
  assert x.devices() == set(xjax.devices()) and x.device == x.sharding
  shards = x.addressable_shards
  assert len(shards) == 8 and len(x.global_shards) == 8
  for i, shard in enumerate(shards):
    assert shard.device == xjax.devices()[i]
    rows = slice(2 * (i // 2), 2 * (i // 2) + 2)
    assert shard.index == (rows, slice(None)) and shard.replica_id == i % 2
    np.testing.assert_array_equal(np.asarray(shard.data), A[rows])
    assert shard.data.device == shard.device
  np.testing.assert_array_equal(np.asarray(x), A)
  assert repr(x) == repr(jnp.asarray(A))
  assert x.sharding.shard_shape((8, 8)) == (2, 8)
  idx = x.sharding.devices_indices_map((8, 8))
  assert idx[xjax.devices()[7]] == (slice(6, 8), slice(None))


def test_device_put_from_device_array_and_reshard(mesh):
  y = jnp.asarray(A) + 0  # on device 0, nothing on the host
  x = xjax.device_put(y, NamedSharding(mesh, P(None, ("x", "y"))))
  np.testing.assert_array_equal(np.asarray(x), A)
  z = xjax.device_put(x, NamedSharding(mesh, P("y", "x")))
  assert z.sharding.spec == P("y", "x")
  np.testing.assert_array_equal(np.asarray(z), A)
  r = xjax.device_put(z, NamedSharding(mesh, P()))
  assert r.is_fully_replicated
  for shard in r.addressable_shards:
    np.testing.assert_array_equal(np.asarray(shard.data), A)
  back = xjax.device_put(x, xjax.devices()[3])
  assert back.device == xjax.devices()[3] and back.sharding == SingleDeviceSharding(
      xjax.devices()[3])
  np.testing.assert_array_equal(np.asarray(back), A)


def test_jit_in_out_shardings(mesh):
  rows, cols = NamedSharding(mesh, P("x")), NamedSharding(mesh, P(None, "y"))
  f = xjax.jit(lambda a, b: (a @ b, a.sum()), in_shardings=(rows, None), out_shardings=(cols, None))
  out, total = f(A, A.T)
  assert out.sharding == cols and total.sharding.is_fully_replicated
  np.testing.assert_allclose(np.asarray(out), A @ A.T, rtol=1e-6)
  assert float(total) == A.sum()
  text = f.lower(A, A.T).as_text()
  assert "mhlo.num_partitions = 8 : i32" in text
  assert 'sdy.mesh @mesh = <["x"=4, "y"=2]>' in text
  assert 'sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>' in text
  assert 'sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>' in text


def test_jit_cache_keyed_on_shardings(mesh):
  f = xjax.jit(lambda a: a * 2)
  for spec in (P("x"), P("y"), P("x"), P(None, "x")):
    y = f(xjax.device_put(A, NamedSharding(mesh, spec)))
    assert y.sharding.spec == spec
    np.testing.assert_array_equal(np.asarray(y), A * 2)
  assert f._cache_size() == 3


def test_partition_specs_need_context_mesh(mesh):
  f = xjax.jit(lambda a: a + 1, in_shardings=P("x"))
  with pytest.raises(RuntimeError, match="jit requires a non-empty mesh in context"):
    f(A)
  with xjax.sharding.use_mesh(mesh):
    assert f(A).sharding.spec == P("x")
  with xjax.set_mesh(mesh):
    assert xjax.device_put(A, P("y")).sharding == NamedSharding(mesh, P("y"))
  assert xjax.sharding.get_abstract_mesh().empty


def test_with_sharding_constraint_and_reshard(mesh):
  x = xjax.device_put(A, NamedSharding(mesh, P("x", "y")))
  want = NamedSharding(mesh, P(None, "x"))
  f = xjax.jit(lambda a: xjax.lax.with_sharding_constraint(a * 2, want))
  assert f(x).sharding == want
  np.testing.assert_array_equal(np.asarray(f(x)), A * 2)
  assert "sdy.sharding_constraint" in f.lower(x).as_text()
  g = xjax.jit(lambda a: xjax.lax.with_sharding_constraint(a + 1, want))  # unsharded input
  assert g(A).sharding == want
  grad = xjax.grad(lambda a: xjax.lax.with_sharding_constraint(a, want).sum())(x)
  np.testing.assert_array_equal(np.asarray(grad), np.ones_like(A))
  explicit = xjax.make_mesh((4, 2), ("x", "y"))
  xe = xjax.device_put(A, NamedSharding(explicit, P("x", "y")))
  with pytest.raises(ValueError, match="You probably meant to use `reshard` API"):
    xjax.lax.with_sharding_constraint(xe, NamedSharding(explicit, P(None, "x")))
  r = xjax.reshard(xe, NamedSharding(explicit, P(None, "x")))
  assert r.sharding.spec == P(None, "x")
  with pytest.raises(ValueError, match="Using PartitionSpec when you are not under a mesh"):
    xjax.reshard(xe, P(None, "x"))


def test_donation_of_sharded_buffers(mesh):
  x = xjax.device_put(A, NamedSharding(mesh, P("x")))
  f = xjax.jit(lambda a: a * 3, donate_argnums=0)
  assert "jax.buffer_donor = true" in f.lower(x).as_text()  # XLA pairs it, as in JAX
  y = f(x)
  assert x.is_deleted()
  np.testing.assert_array_equal(np.asarray(y), A * 3)


def test_errors(mesh):
  with pytest.raises(ValueError, match="implies that array axis 0 is partitioned 4 times"):
    xjax.device_put(np.ones((6, 4)), NamedSharding(mesh, P("x")))
  with pytest.raises(Exception, match="has duplicate entries for `x`") as e:
    NamedSharding(mesh, P("x", "x"))
  assert type(e.value).__name__ == "DuplicateSpecError"
  with pytest.raises(ValueError, match="Resource axis: z of P\\('z',\\) is not found in mesh"):
    NamedSharding(mesh, P("z"))
  with pytest.raises(ValueError, match="`jax.device_put` only accepts `None`"):
    xjax.device_put(A, "cpu")
  with pytest.raises(ValueError, match="Mesh axis names must be unique"):
    Mesh(np.array(xjax.devices()).reshape(4, 2), ("x", "x"))
  x = xjax.device_put(A, NamedSharding(mesh, P("x")))
  y = xjax.device_put(A, xjax.devices()[1])
  with pytest.raises(ValueError, match="Received incompatible devices for jitted computation"):
    x + y
  other = Mesh(np.array(xjax.devices()[:4]), ("a",))
  w = xjax.device_put(A, NamedSharding(other, P("a")))
  with pytest.raises(ValueError, match="incompatible devices|Mesh for all inputs should be equal"):
    x + w
  f = xjax.jit(lambda a: a, in_shardings=NamedSharding(mesh, P("y")))
  with pytest.raises(ValueError, match="Sharding passed to jit does not match the sharding"):
    f(x)
  with pytest.raises(ValueError, match="pjit does not support kwargs"):
    f(a=A)
  g = xjax.jit(lambda a, b: a + b, in_shardings=(NamedSharding(mesh, P("x")),))
  with pytest.raises(ValueError, match="in_shardings specification must be a tree prefix"):
    g(A, A)


@pytest.mark.slow
def test_num_cpu_devices_config_in_fresh_process():
  import subprocess
  import sys
  code = ("import xjax; xjax.config.update('jax_num_cpu_devices', 4); "
          "print(len(xjax.devices()))")
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
  assert out.stdout.strip() == "4", out.stderr


# -- Explicit axes: shardings in types ------------------------------------------------


@pytest.mark.parametrize("name", sorted(sharding_cases.jaxpr_cases()))
def test_explicit_printed_types_equal_jax(name):
  assert sharding_cases.jaxpr_cases()[name](xjax) == GOLDEN["jaxprs"][name]


@pytest.mark.parametrize("name", sorted(sharding_cases.error_cases()))
def test_explicit_sharding_type_errors_equal_jax(name):
  kind, text = GOLDEN["errors"][name]
  with pytest.raises(TypeError) as e:
    sharding_cases.error_cases()[name](xjax)
  assert type(e.value).__name__ == kind and str(e.value) == text


def test_explicit_and_auto_give_the_same_values():
  for kind in ("explicit", "auto"):
    types = (AxisType.Explicit if kind == "explicit" else AxisType.Auto,) * 2
    mesh = xjax.make_mesh((4, 2), ("x", "y"), axis_types=types)
    u = xjax.device_put(A, NamedSharding(mesh, P("x", "y")))
    v = xjax.device_put(A, NamedSharding(mesh, P()))
    f = xjax.jit(lambda a, b: (xjax.numpy.tanh(a) @ b.T).sum(1) + b.mean(1))
    np.testing.assert_allclose(np.asarray(f(u, v)), np.asarray(f(A, A)), rtol=1e-5)
    g = xjax.grad(lambda a: (a * a).sum())(u)
    np.testing.assert_allclose(np.asarray(g), 2 * A, rtol=1e-6)
    if kind == "explicit":
      assert str(xjax.typeof(g)) == "float32[8@x,8@y]"
      assert "sdy.sharding_constraint" in f.lower(u, v).as_text()


def test_num_cpu_devices_must_be_set_before_the_backend_starts():
  with pytest.raises(RuntimeError, match="should be updated before backends are initialized"):
    xjax.config.update("jax_num_cpu_devices", 2)
