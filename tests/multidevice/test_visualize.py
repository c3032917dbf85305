"""`visualize_sharding`, `visualize_array_sharding` and `inspect_array_sharding` on 8 devices.

Printed tables and reported shardings are compared with JAX's, recorded by
tools/golden_sharding_debug.py (which also defines the names the case expressions use).
"""
import importlib.util
import json
import os
import sys

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import golden_sharding_debug as cases  # noqa: E402

GOLDEN = json.load(open(os.path.join(HERE, "..", "golden", "sharding_debug.json"),
                        encoding="utf-8"))


@pytest.fixture(scope="module")
def env():
  return cases.names(xjax, jnp, Mesh, NamedSharding, P, AxisType, SingleDeviceSharding)


def _set_color_env(monkeypatch, color: bool):
  for name in (*cases.NO_COLOR_ENV, *cases.COLOR_ENV):
    monkeypatch.delenv(name, raising=False)
  if color:
    for name, value in cases.COLOR_ENV.items():
      monkeypatch.setenv(name, value)


def _sharding_repr_of_inspect(value):
  seen = []
  xjax.debug.inspect_array_sharding(value, callback=seen.append)
  return [repr(s) for s in seen]


# ----------------------------------------------------------------------------
# visualize_sharding


@pytest.mark.parametrize("name", sorted(GOLDEN["visualize"]))
def test_visualize_sharding_prints_as_jax(name, env, capsys, monkeypatch):
  case = GOLDEN["visualize"][name]
  if name == "color_default" and importlib.util.find_spec("matplotlib"):
    pytest.skip("JAX's golden was recorded without matplotlib (its default colors)")
  _set_color_env(monkeypatch, case["color"])
  capsys.readouterr()
  xjax.debug.visualize_sharding(tuple(case["shape"]), eval(case["sharding"], dict(env)),
                                **eval(case["kwargs"], dict(env)))
  assert capsys.readouterr().out == case["printed"]


@pytest.mark.parametrize("name", sorted(GOLDEN["visualize_errors"]))
def test_visualize_errors_match_jax(name, env):
  case = GOLDEN["visualize_errors"][name]
  kind, message = case["error"]
  with pytest.raises(Exception) as info:
    eval(case["expr"], dict(env))
  assert (type(info.value).__name__, str(info.value)) == (kind, message)


def test_visualize_sharding_needs_rich(env, monkeypatch):
  monkeypatch.setitem(sys.modules, "rich", None)
  with pytest.raises(ValueError, match="`visualize_sharding` requires `rich` to be installed."):
    xjax.debug.visualize_sharding((8, 8), env["s"])


def test_visualize_array_sharding_eager_prints_its_sharding(env, capsys, monkeypatch):
  _set_color_env(monkeypatch, False)
  x = xjax.device_put(env["data"], NamedSharding(env["mesh"], P("x", "y")))
  capsys.readouterr()
  xjax.debug.visualize_array_sharding(x, use_color=False)
  assert capsys.readouterr().out == GOLDEN["visualize"]["2d_xy"]["printed"]
  # A one-device array: one cell naming its device.
  xjax.debug.visualize_array_sharding(xjax.device_put(np.ones(4), env["devs"][5]),
                                      use_color=False)
  out = capsys.readouterr().out
  assert "CPU 5" in out and out.count("CPU") == 1


def test_visualize_array_sharding_under_jit_prints_once_at_compile_time(env, capsys,
                                                                        monkeypatch):
  _set_color_env(monkeypatch, False)

  @xjax.jit
  def f(x):
    xjax.debug.visualize_array_sharding(x, use_color=False)
    return x * 2

  x = xjax.device_put(env["data"], env["sa"])
  capsys.readouterr()
  np.testing.assert_array_equal(np.asarray(f(x)), env["data"] * 2)
  assert capsys.readouterr().out == GOLDEN["visualize"]["2d_xy"]["printed"]
  f(x)  # cached: no compile, no print
  assert capsys.readouterr().out == ""


# ----------------------------------------------------------------------------
# inspect_array_sharding


@pytest.mark.parametrize("name", sorted(GOLDEN["inspect"]))
def test_inspect_array_sharding_reports_what_jax_reports(name, env):
  case = GOLDEN["inspect"][name]
  x = xjax.device_put(env["data"], eval(case["sharding"], dict(env)))
  assert _sharding_repr_of_inspect(x) == case["eager"]
  seen = []

  def f(x):
    xjax.debug.inspect_array_sharding(eval(case["expr"], dict(env, x=x)), callback=seen.append)
    return x

  np.testing.assert_array_equal(np.asarray(xjax.jit(f)(x)), env["data"])
  assert [repr(s) for s in seen] == case["jit"]


def test_inspect_array_sharding_eager_calls_back_per_leaf(env):
  x = xjax.device_put(env["data"], env["sa"])
  y = xjax.device_put(np.ones(3), env["devs"][2])
  seen = []
  xjax.debug.inspect_array_sharding({"a": x, "b": (y, x)}, callback=seen.append)
  assert seen == [x.sharding, y.sharding, x.sharding]
  assert seen[1] == SingleDeviceSharding(env["devs"][2])


def test_inspect_array_sharding_reported_sharding_lays_out_the_value(env):
  # The reported sharding is usable: placing the value on it gives the same shards.
  seen = []

  @xjax.jit
  def f(x):
    y = x.sum(axis=0)
    xjax.debug.inspect_array_sharding(y, callback=seen.append)
    return y

  y = f(xjax.device_put(env["data"], env["sa"]))
  (reported,) = seen
  assert reported.is_equivalent_to(y.sharding, 1)
  for shard in xjax.device_put(env["data"].sum(0), reported).addressable_shards:
    np.testing.assert_array_equal(np.asarray(shard.data), env["data"].sum(0)[shard.index])


def test_inspect_array_sharding_under_vmap_and_grad_sees_the_whole_primal(env):
  x = xjax.device_put(env["data"], env["sa"])
  seen = []
  inspect = lambda v: xjax.debug.inspect_array_sharding(v, callback=seen.append)
  xjax.vmap(lambda v: (inspect(v), v * 2)[1])(x)
  g = xjax.grad(lambda v: (inspect(v), (v * v).sum())[1])(x)
  np.testing.assert_allclose(np.asarray(g), 2 * env["data"])
  xjax.jit(xjax.grad(lambda v: (inspect(v), (v * v).sum())[1]))(x)
  want = "NamedSharding(mesh=Mesh('x': 2, 'y': 4, axis_types=(Auto, Auto)), spec=P('x', 'y'), " \
         "memory_kind=device)"
  assert [repr(s) for s in seen] == [want] * 3


def test_inspect_array_sharding_is_kept_in_jaxprs(env):
  cb = lambda s: None
  jaxpr = xjax.make_jaxpr(lambda v: (xjax.debug.inspect_array_sharding(v, callback=cb), v)[1])(
      np.ones(3, np.float32))
  (eqn,) = jaxpr.jaxpr.eqns
  assert eqn.primitive.name == "inspect_sharding" and eqn.params == {"callback": cb}
  assert not eqn.outvars and "inspect_sharding[" in str(jaxpr)


def test_inspect_array_sharding_in_a_one_device_jit_reports_a_replicated_sharding():
  seen = []
  f = xjax.jit(lambda v: (xjax.debug.inspect_array_sharding(v, callback=seen.append), v)[1])
  f(np.ones(3, np.float32))
  f(np.ones(3, np.float32))
  assert [repr(s) for s in seen] == ["GSPMDSharding({replicated}, memory_kind=device)"]
  assert seen[0].is_fully_replicated


def test_inspect_array_sharding_inside_shard_map_reports_a_replicated_spec(env):
  # Each device holds its own value there: JAX reports P() over the mesh (recorded by hand
  # from JAX 0.10.2, as the golden cases cannot express a shard_map body).
  seen = []

  def body(block):
    xjax.debug.inspect_array_sharding(block, callback=seen.append)
    return block * 2

  f = xjax.jit(xjax.shard_map(body, mesh=env["amesh"], in_specs=P("x", "y"),
                              out_specs=P("x", "y")))
  out = f(xjax.device_put(env["data"], env["sa"]))
  np.testing.assert_array_equal(np.asarray(out), env["data"] * 2)
  assert [repr(s) for s in seen] == [
      "NamedSharding(mesh=Mesh('x': 2, 'y': 4, axis_types=(Auto, Auto)), spec=P(), "
      "memory_kind=device)"]
