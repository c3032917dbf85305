"""Host callbacks inside shard_map and pmap, eager and under jit, on 8 forced CPU devices.

As in JAX 0.10.2 (checked against it in a separate process): inside a fully manual
shard_map body, and inside pmap, each callback runs once per device with that
device's shard; the order of the calls across devices is not fixed, so the calls
are compared as a sorted multiset.
"""
import threading

import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax.experimental import checkify
from xjax.experimental import io_callback
from xjax.sharding import PartitionSpec as P


@pytest.fixture(scope="module")
def mesh():
  return jax.sharding.Mesh(np.array(jax.devices()), ("x",))


class Recorder:
  """Collects the values each call of a callback received (calls may come from several
  threads at once)."""

  def __init__(self):
    self.calls = []
    self._lock = threading.Lock()

  def record(self, *args):
    with self._lock:
      self.calls.append(tuple(np.asarray(a).tolist() for a in args))

  def sorted(self):
    jax.effects_barrier()
    return sorted(self.calls)


def shards(x, n=8):
  """The per-device blocks of `x` split along its leading axis, as single-argument calls."""
  return sorted((b.tolist(),) for b in np.split(np.asarray(x), n))


WRAPS = {"eager": lambda f: f, "jit": jax.jit}


# ----------------------------------------------------------------------------
# The examples: each module holding a host callback parsed with every dialect
# (sdy's mesh and manual_computation included)


@pytest.mark.parametrize("wrap", WRAPS)
def test_debug_print_in_shard_map(wrap, mesh, capsys):
  f = jax.shard_map(lambda y: (jax.debug.print("y={y}", y=y), y * 2)[1], mesh=mesh,
                    in_specs=P("x"), out_specs=P("x"))
  out = WRAPS[wrap](f)(jnp.arange(8.))
  jax.effects_barrier()
  np.testing.assert_array_equal(np.asarray(out), np.arange(8.) * 2)
  lines = capsys.readouterr().out.splitlines()
  assert sorted(lines) == sorted(f"y=[{i}.]" for i in range(8))


@pytest.mark.parametrize("wrap", WRAPS)
def test_debug_print_in_pmap(wrap, capsys):
  f = jax.pmap(lambda y: (jax.debug.print("p={y}", y=y), y * 2)[1])
  out = WRAPS[wrap](f)(jnp.arange(8.))
  jax.effects_barrier()
  np.testing.assert_array_equal(np.asarray(out), np.arange(8.) * 2)
  lines = capsys.readouterr().out.splitlines()
  assert sorted(lines) == sorted(f"p={i}.0" for i in range(8))


@pytest.mark.parametrize("wrap", WRAPS)
def test_pure_callback_in_shard_map(wrap, mesh):
  rec = Recorder()

  def sin(v):
    rec.record(v)
    return np.sin(np.asarray(v))

  f = jax.shard_map(lambda y: jax.pure_callback(sin, jax.ShapeDtypeStruct(y.shape, y.dtype), y),
                    mesh=mesh, in_specs=P("x"), out_specs=P("x"))
  x = jnp.arange(8.)
  out = WRAPS[wrap](f)(x)
  np.testing.assert_allclose(np.asarray(out), np.sin(np.arange(8.)), rtol=1e-6)
  assert rec.sorted() == shards(x)



# ----------------------------------------------------------------------------
# Every callback kind, in shard_map and in pmap, eager and under jit: one call per device
# with that device's values


def _pure(rec):
  def body(y):
    def sin(v):
      rec.record(v)
      return np.sin(np.asarray(v))
    return jax.pure_callback(sin, jax.ShapeDtypeStruct(y.shape, y.dtype), y)
  return body, np.sin


def _io(rec, ordered):
  def body(y):
    def triple(v):
      rec.record(v)
      return np.asarray(v) * 3
    return io_callback(triple, jax.ShapeDtypeStruct(y.shape, y.dtype), y, ordered=ordered)
  return body, lambda x: x * 3


def _debug_callback(rec):
  def body(y):
    jax.debug.callback(rec.record, y)
    return y + 1
  return body, lambda x: x + 1


KINDS = {
    "pure_callback": _pure,
    "io_callback": lambda rec: _io(rec, False),
    "io_callback_ordered": lambda rec: _io(rec, True),
    "debug_callback": _debug_callback,
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("wrap", WRAPS)
def test_callback_kinds_in_shard_map(kind, wrap, mesh):
  rec = Recorder()
  body, want = KINDS[kind](rec)
  f = jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
  x = jnp.arange(16.).reshape(8, 2)
  out = WRAPS[wrap](f)(x)
  np.testing.assert_allclose(np.asarray(out), want(np.asarray(x)), rtol=1e-6)
  assert rec.sorted() == shards(x)  # each device's (1, 2) block


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("wrap", WRAPS)
def test_callback_kinds_in_pmap(kind, wrap):
  rec = Recorder()
  body, want = KINDS[kind](rec)
  x = jnp.arange(16.).reshape(8, 2)
  out = WRAPS[wrap](jax.pmap(body))(x)
  np.testing.assert_allclose(np.asarray(out), want(np.asarray(x)), rtol=1e-6)
  assert rec.sorted() == sorted((row,) for row in np.asarray(x).tolist())  # one row each


def test_debug_print_in_shard_map_prints_each_shard(mesh, capsys):
  f = jax.jit(jax.shard_map(lambda y: (jax.debug.print("{y} of {n}", y=y, n=8), y)[1],
                            mesh=mesh, in_specs=P("x"), out_specs=P("x")))
  f(jnp.arange(8, dtype=jnp.int32))
  jax.effects_barrier()
  assert sorted(capsys.readouterr().out.splitlines()) == sorted(f"[{i}] of 8" for i in range(8))


@pytest.mark.parametrize("method", ["sequential", "sequential_unrolled", "expand_dims",
                                    "broadcast_all", "legacy_vectorized"])
@pytest.mark.parametrize("wrap", WRAPS)
def test_pure_callback_under_vmap_inside_shard_map(method, wrap, mesh):
  rec = Recorder()

  def sin(v):
    rec.record(v)
    return np.sin(np.asarray(v))

  body = jax.vmap(lambda y: jax.pure_callback(sin, jax.ShapeDtypeStruct(y.shape, y.dtype), y,
                                              vmap_method=method))
  x = jnp.arange(32.).reshape(16, 2)
  out = WRAPS[wrap](jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)
  np.testing.assert_allclose(np.asarray(out), np.sin(np.asarray(x)), rtol=1e-6)
  blocks = np.asarray(x).reshape(8, 2, 2)  # each device maps over its 2 rows
  if method.startswith("sequential"):
    want = sorted((row,) for row in np.asarray(x).tolist())  # one call per row
  else:
    want = sorted((b.tolist(),) for b in blocks)  # one call per device, its whole block
  assert rec.sorted() == want


@pytest.mark.parametrize("wrap", WRAPS)
def test_vmap_of_shard_map_of_pure_callback(wrap, mesh):
  rec = Recorder()

  def sin(v):
    rec.record(v)
    return np.sin(np.asarray(v))

  f = jax.shard_map(lambda y: jax.pure_callback(sin, jax.ShapeDtypeStruct(y.shape, y.dtype), y,
                                                vmap_method="expand_dims"),
                    mesh=mesh, in_specs=P("x"), out_specs=P("x"))
  x = jnp.arange(16.).reshape(2, 8)
  out = WRAPS[wrap](jax.vmap(f))(x)
  np.testing.assert_allclose(np.asarray(out), np.sin(np.asarray(x)), rtol=1e-6)
  # Each device gets column i of both batch rows, with the batch leading.
  assert rec.sorted() == sorted(([[i], [8. + i]],) for i in range(8))


@pytest.mark.parametrize("wrap", WRAPS)
def test_callbacks_on_a_2d_mesh_see_their_blocks(wrap):
  mesh2 = jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
  rec = Recorder()
  f = jax.shard_map(lambda y: (jax.debug.callback(rec.record, y), y + 1)[1], mesh=mesh2,
                    in_specs=P("x", "y"), out_specs=P("x", "y"))
  x = jnp.arange(16.).reshape(4, 4)
  np.testing.assert_array_equal(np.asarray(WRAPS[wrap](f)(x)), np.asarray(x) + 1)
  assert rec.sorted() == sorted(([[4. * i + 2 * j, 4. * i + 2 * j + 1]],)
                                for i in range(4) for j in range(2))


@pytest.mark.parametrize("wrap", WRAPS)
def test_callbacks_see_axis_index_and_replicated_operands(wrap, mesh):
  # Under jit JAX calls a debug callback on every device, as xjax does eagerly too. (JAX's
  # eager shard_map runs a debug callback by its own rule, once per distinct block of the
  # operands that vary most, so with a replicated operand only once.)
  rec = Recorder()

  def body(y, z):
    jax.debug.callback(rec.record, jax.lax.axis_index("x"), y, z)
    outs = io_callback(lambda a, b: (np.asarray(a) + np.asarray(b), np.asarray(a) * np.asarray(b)),
                       (jax.ShapeDtypeStruct(y.shape, y.dtype),) * 2, y, z)
    return jax.lax.psum(outs[0], "x"), outs[1]

  f = jax.shard_map(body, mesh=mesh, in_specs=(P("x"), P()), out_specs=(P(), P("x")))
  total, prod = WRAPS[wrap](f)(jnp.arange(8.), jnp.full((1,), 2.))
  np.testing.assert_array_equal(np.asarray(total), [sum(range(8)) + 16.])
  np.testing.assert_array_equal(np.asarray(prod), np.arange(8.) * 2)
  assert rec.sorted() == sorted((i, [float(i)], [2.]) for i in range(8))


def test_parsed_modules_know_every_dialect_the_lowering_emits():
  # Modules with host callbacks reach XLA parsed (not as text): the parser's context must
  # know Shardy's, MHLO's, CHLO's, StableHLO's and func's dialects.
  from xjax._src import backend
  text = """module @m attributes {mhlo.num_partitions = 1 : i32} {
  sdy.mesh @mesh = <["x"=1]>
  func.func public @main(%arg0: tensor<2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<2xf32> {
    %0 = chlo.erf_inv %arg0 : tensor<2xf32> -> tensor<2xf32>
    %1 = mhlo.erf %0 : tensor<2xf32>
    %2 = stablehlo.add %1, %0 : tensor<2xf32>
    return %2 : tensor<2xf32>
  }
}"""
  parsed = str(backend.parse_module(text))
  for op in ("sdy.mesh @mesh", "#sdy.sharding<@mesh", "chlo.erf_inv", "mhlo.erf", "stablehlo.add"):
    assert op in parsed


# ----------------------------------------------------------------------------
# checkify reaches into shard_map (and so pmap) bodies: each device's error comes back,
# batched over the devices, as JAX 0.10.2 reports it


def _big(y):
  checkify.check(y.sum() < 3, "big {s}", s=y.sum())
  return y * 2


def _mapped(lines):
  return "\n".join(f"at mapped index {i}: {m}" for i, m in lines)


CHECKIFY_WRAPS = {
    "checkify": lambda f: checkify.checkify(f),
    "jit_of_checkify": lambda f: jax.jit(checkify.checkify(f)),
    "checkify_of_jit": lambda f: checkify.checkify(jax.jit(f)),
}


@pytest.mark.parametrize("wrap", CHECKIFY_WRAPS)
def test_checkify_shard_map_reports_each_failing_shard(wrap, mesh):
  f = jax.shard_map(_big, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
  err, out = CHECKIFY_WRAPS[wrap](f)(jnp.arange(8.))
  np.testing.assert_array_equal(np.asarray(out), np.arange(8.) * 2)
  assert err.get() == _mapped((i, f"big {i}.0 (`check` failed)") for i in range(3, 8))
  with pytest.raises(checkify.JaxRuntimeError, match=r"^big 7\.0 \(`check` failed\)$"):
    err.throw()


@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_checkify_pmap_reports_each_failing_device(wrap):
  f = checkify.checkify(jax.pmap(_big))
  err, out = WRAPS[wrap](f)(jnp.arange(8.))
  np.testing.assert_array_equal(np.asarray(out), np.arange(8.) * 2)
  assert err.get() == _mapped((i, f"big {i}.0 (`check` failed)") for i in range(3, 8))


def test_checkify_shard_map_without_failure(mesh):
  f = jax.shard_map(_big, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
  err, out = checkify.checkify(f)(jnp.zeros(8))
  assert err.get() is None
  err.throw()  # nothing to raise
  np.testing.assert_array_equal(np.asarray(out), np.zeros(8))


def test_checkify_shard_map_2d_mesh_and_replicated_input():
  mesh2 = jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
  f = jax.shard_map(_big, mesh=mesh2, in_specs=P("x", "y"), out_specs=P("x", "y"))
  err, _ = checkify.checkify(f)(jnp.arange(16.).reshape(4, 4))
  # Device (i, j) holds [[4i + 2j, 4i + 2j + 1]]; the index is the flat device index.
  sums = [8 * i + 4 * j + 1 for i in range(4) for j in range(2)]
  assert err.get() == _mapped((k, f"big {s}.0 (`check` failed)")
                              for k, s in enumerate(sums) if s >= 3)
  # A replicated input fails on every device.
  f = jax.shard_map(_big, mesh=mesh2, in_specs=P(), out_specs=P())
  err, out = checkify.checkify(f)(jnp.arange(3.))
  assert err.get() == _mapped((k, "big 3.0 (`check` failed)") for k in range(8))
  np.testing.assert_array_equal(np.asarray(out), np.arange(3.) * 2)


def test_checkify_shard_map_automatic_checks(mesh):
  sm = lambda f: jax.shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
  err, _ = checkify.checkify(sm(lambda y: jnp.log(y - 3.)), errors=checkify.float_checks)(
      jnp.arange(8.))
  assert err.get() == _mapped((i, "nan generated by primitive: log.") for i in range(3))
  # (JAX 0.10.2 fails on this one with "foreach() argument 2 is shorter than argument 1".)
  err, _ = checkify.checkify(sm(lambda y: y[y[0].astype(int)][None]),
                             errors=checkify.index_checks)(jnp.arange(8.))
  assert err.get() == _mapped(
      (i, f"out-of-bounds indexing for array of shape (1,): index {i} is out of bounds for "
          "axis 0 with size 1. ") for i in range(1, 8))


def test_checkify_error_before_shard_map_is_carried_per_device(mesh):
  def f(x):
    checkify.check(x.sum() > 100, "pre")
    return jax.shard_map(_big, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(x)
  err, _ = checkify.checkify(f)(jnp.arange(8.))
  # As JAX: the earlier error enters every device and comes back from each.
  assert err.get() == _mapped((i, "pre (`check` failed)") for i in range(8))


def test_checkify_vmap_of_shard_map_and_shard_map_of_vmap(mesh):
  sm = lambda f: jax.shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
  err, _ = jax.vmap(checkify.checkify(sm(_big)))(jnp.arange(16.).reshape(2, 8))
  assert err.get() == _mapped(
      (f"{b}, {i}", f"big {8 * b + i}.0 (`check` failed)")
      for b in range(2) for i in range(8) if 8 * b + i >= 3)
  err, _ = checkify.checkify(sm(jax.vmap(lambda y: (checkify.check(y.sum() < 3, "big"), y)[1])))(
      jnp.arange(16.).reshape(8, 2))
  assert err.get() == _mapped((i, "big (`check` failed)") for i in range(1, 8))


# ----------------------------------------------------------------------------
# Outside shard_map, in a jit over sharded arguments (automatic partitioning): as JAX, a
# callback runs once, on the first device, with the whole (gathered) values


CALLBACKS_AUTO = {
    "pure_callback": lambda rec: _pure(rec),
    "io_callback": lambda rec: _io(rec, False),
    "io_callback_ordered": lambda rec: _io(rec, True),
    "debug_callback": _debug_callback,
}


@pytest.mark.parametrize("kind", CALLBACKS_AUTO)
def test_callbacks_in_jit_over_sharded_arguments_run_once(kind, mesh):
  rec = Recorder()
  body, want = CALLBACKS_AUTO[kind](rec)
  x = jax.device_put(jnp.arange(8.), jax.sharding.NamedSharding(mesh, P("x")))
  out = jax.jit(body)(x)
  np.testing.assert_allclose(np.asarray(out), want(np.arange(8.)), rtol=1e-6)
  assert rec.sorted() == [(list(np.arange(8.)),)]


def test_pure_callback_with_a_device_in_sharded_jit(mesh):
  rec = Recorder()
  x = jax.device_put(jnp.arange(8.), jax.sharding.NamedSharding(mesh, P("x")))
  device = jax.devices()[3]

  def f(y):
    return jax.pure_callback(lambda v: (rec.record(v), np.asarray(v) + 1)[1],
                             jax.ShapeDtypeStruct(y.shape, y.dtype), y,
                             sharding=jax.sharding.SingleDeviceSharding(device))

  # (JAX 0.10.2 returns zeros here, from a device other than the first.)
  np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)), np.arange(8.) + 1)
  assert rec.sorted() == [(list(np.arange(8.)),)]
  assert "device_ids=[3]" in jax.jit(f).lower(x).as_text()


def test_pure_and_io_callbacks_refuse_partly_manual_shard_map():
  mesh2 = jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
  for cb in (jax.pure_callback, io_callback):
    f = jax.shard_map(lambda y: cb(np.sin, jax.ShapeDtypeStruct(y.shape, y.dtype), y),
                      mesh=mesh2, in_specs=P("x"), out_specs=P("x"), axis_names={"x"})
    with pytest.raises(NotImplementedError, match="all mesh axes are partitioned manually"):
      jax.jit(f)(jnp.arange(8.))
