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
