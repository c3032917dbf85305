"""pmap (built on shard_map, as in JAX 0.10.2) on 8 forced CPU devices: values against
NumPy and against real JAX (tests/golden/shard_map.json), printed jaxprs and errors."""
import json
import os
import sys

import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax
from xjax.sharding import NamedSharding, PartitionSpec as P

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
import record_sharding_goldens_shard_map as cases_module  # noqa: E402

with open(cases_module.GOLDEN) as _f:
  GOLDEN = json.load(_f)

CASES = cases_module.pmap_cases(jax)


@pytest.mark.parametrize("name", sorted(CASES))
def test_pmap_matches_jax_golden(name):
  kind, thunk = CASES[name]
  want = GOLDEN["pmap"][name]
  got = cases_module.run_case(jax, kind, thunk)
  if kind == "value":
    assert got["shapes"] == want["shapes"]
    assert got["dtypes"] == want["dtypes"]
    for a, b in zip(got["values"], want["values"], strict=True):
      np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)
  else:
    assert got == {k: v for k, v in want.items() if k != "kind"}


X = np.arange(8, dtype=np.float32).reshape(4, 2)


def test_pmap_maps_leading_axis():
  np.testing.assert_array_equal(np.asarray(jax.pmap(lambda a: a * a)(X)), X * X)


def test_pmap_psum_and_pmean_over_axis():
  out = jax.pmap(lambda a: (lax.psum(a, "i"), lax.pmean(a, "i")), axis_name="i")(X)
  np.testing.assert_allclose(np.asarray(out[0]), np.tile(X.sum(0), (4, 1)))
  np.testing.assert_allclose(np.asarray(out[1]), np.tile(X.mean(0), (4, 1)))


def test_pmap_output_is_sharded_over_its_devices():
  y = jax.pmap(lambda a: a + 1)(X)
  assert isinstance(y.sharding, NamedSharding)
  assert y.sharding.spec == P("_internal_pmap_axis_name")
  assert list(y.sharding.mesh.devices.flat) == jax.devices()[:4]


def test_pmap_in_axes_none_broadcasts():
  out = jax.pmap(lambda a, b: a * b, in_axes=(0, None))(X, np.float32(3))
  np.testing.assert_array_equal(np.asarray(out), X * 3)


def test_pmap_in_axes_1_and_out_axes_1():
  y = np.arange(24, dtype=np.float32).reshape(2, 4, 3)
  out = jax.pmap(lambda a: a.T, in_axes=1, out_axes=1)(y)
  np.testing.assert_array_equal(np.asarray(out), y.transpose(2, 1, 0))


def test_pmap_static_argument_retraces_on_new_value():
  calls = []
  f = jax.pmap(lambda a, n: calls.append(n) or a * n, static_broadcasted_argnums=1)
  np.testing.assert_array_equal(np.asarray(f(X, 2)), X * 2)
  np.testing.assert_array_equal(np.asarray(f(X, 2)), X * 2)
  np.testing.assert_array_equal(np.asarray(f(X, 5)), X * 5)
  assert calls == [2, 5]


def test_pmap_nested_under_jit():
  f = jax.jit(lambda a: jax.pmap(lambda b: lax.psum(b, "i"), "i")(a) * 2)
  np.testing.assert_allclose(np.asarray(f(X)), 2 * np.tile(X.sum(0), (4, 1)))


def test_pmap_vmap_inside_with_two_named_axes():
  y = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
  out = jax.pmap(lambda a: jax.vmap(lambda b: lax.psum(b, ("i", "j")), axis_name="j")(a),
                 "i")(y)
  np.testing.assert_allclose(np.asarray(out), np.broadcast_to(y.sum((0, 1)), y.shape))


def test_pmap_explicit_devices():
  devs = jax.devices()[2:4]
  y = jax.pmap(lambda a: a * 2, devices=devs)(X[:2])
  assert list(y.sharding.mesh.devices.flat) == devs
  np.testing.assert_array_equal(np.asarray(y), X[:2] * 2)


def test_pmap_donate_argnums_runs():
  out = jax.pmap(lambda a, b: a + b, donate_argnums=0)(jnp.asarray(X), X)
  np.testing.assert_array_equal(np.asarray(out), 2 * X)


def test_pmap_second_call_does_not_retrace():
  calls = []
  f = jax.pmap(lambda a: calls.append(1) or a - 1)
  f(X)
  f(X * 2)
  assert len(calls) == 1


def test_pmap_grad_through_jit_of_pmap_body():
  # grad of a shard_map traced under jit (the staged path pmap uses under transformations).
  def loss(a):
    return jax.jit(lambda b: jax.pmap(lambda c: jnp.sin(c) * lax.psum(c, "i"), "i")(b))(a).sum()
  x = X / 10
  g = jax.jit(jax.grad(loss))(x)
  want = np.cos(x) * x.sum(0) + np.sin(x).sum(0)
  np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5)


def test_pmap_unbound_axis_name_error():
  with pytest.raises(NameError, match="unbound axis name: j"):
    jax.pmap(lambda a: lax.psum(a, "j"), "i")(X)


def test_pmap_too_many_devices_error_names_the_device_count():
  with pytest.raises(ValueError, match="partitioned 8 times, but the dimension size is 9"):
    jax.pmap(lambda a: a)(np.ones(9, np.float32))


def test_pmap_lower_and_compile_take_the_pmapped_arguments():
  f = jax.pmap(lambda x, y: 2 * x + y["b"], in_axes=(0, None))
  x = jnp.arange(8.0).reshape(4, 2)
  y = {"b": jnp.float32(1.0)}
  lowered = f.lower(x, y)
  assert "stablehlo" in lowered.as_text()
  compiled = lowered.compile()
  np.testing.assert_array_equal(compiled(x, y), f(x, y))
  np.testing.assert_array_equal(compiled(x + 1, y), 2 * (np.asarray(x) + 1) + 1)
  with pytest.raises(TypeError, match="Argument types differ"):
    compiled(x[:, :1], y)


def test_pmap_takes_arrays_laid_out_over_another_mesh():
  # As JAX's pmap: an input sharded over another mesh of the devices (another axis name)
  # is moved onto pmap's own.
  mesh = jax.sharding.Mesh(np.array(jax.devices()[:4]), ("other",))
  x = jax.device_put(np.arange(8.0).reshape(4, 2), NamedSharding(mesh, P("other")))
  out = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(x)
  np.testing.assert_array_equal(out, np.broadcast_to(np.arange(8.0).reshape(4, 2).sum(0), (4, 2)))
