"""vmap(spmd_axis_name=...) and vmap(sum_match=...) against JAX 0.10.2 (golden values from
tools/golden_vmap_spmd.py; the cases are vmap_spmd_cases.py), on 8 CPU devices.

Under ``vmap(spmd_axis_name='x')`` the sharding constraints and shard_maps inside get
the mapped dimension split over mesh axis 'x': their specs in the jaxpr, the output
shardings (eager and under jit) and the values (equal to the unsharded vmap's) are
compared with JAX's.
"""
import json
import os
import re

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax.sharding import NamedSharding, PartitionSpec as P

from . import vmap_spmd_cases

GOLDEN = json.load(open(os.path.join(os.path.dirname(__file__), "..", "golden",
                                     "vmap_spmd.json")))
CASES = vmap_spmd_cases.cases()
ERRORS = vmap_spmd_cases.error_cases()

# xjax's sharding_constraint has only the `sharding` param (JAX's also prints context_mesh,
# layout and unconstrained_dims); shard_map bodies print no varying-axes types and no pvary
# (xjax does not type them); JAX's grad seeds with `reshard 1.0`.
_JAX_ONLY_PARAMS = re.compile(r"\n *(context_mesh=Mesh\(\)|layout=None|"
                              r"unconstrained_dims=frozenset\([^)]*\))")
_NOT_PRINTED_ALIKE = {"shard_map_x", "shard_map_x_in_axes1", "shard_map_unbatched_arg",
                      "shard_map_no_spmd", "grad_of_vmap", "vmap_of_grad"}


def _spec(x):
  sharding = getattr(x, "sharding", None)
  return repr(sharding.spec) if isinstance(sharding, NamedSharding) else None


@pytest.mark.parametrize("name", sorted(CASES))
def test_sharding_specs_in_jaxpr_match_jax(name):
  fn, args = CASES[name](xjax)
  jaxpr = xjax.make_jaxpr(fn)(*args)
  assert vmap_spmd_cases.constraint_specs(jaxpr.jaxpr) == GOLDEN["cases"][name]["specs"]


@pytest.mark.parametrize("name", sorted(set(CASES) - _NOT_PRINTED_ALIKE))
def test_printed_jaxpr_matches_jax(name):
  fn, args = CASES[name](xjax)
  want = _JAX_ONLY_PARAMS.sub("", GOLDEN["cases"][name]["jaxpr"])
  assert str(xjax.make_jaxpr(fn)(*args)) == want


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_values_and_output_shardings_match_jax(name, jit):
  fn, args = CASES[name](xjax)
  outs = xjax.tree_util.tree_leaves((xjax.jit(fn) if jit else fn)(*args))
  golden = GOLDEN["cases"][name]
  assert [_spec(y) for y in outs] == golden["jit_specs" if jit else "eager_specs"]
  for y, want, dtype in zip(outs, golden["values"], golden["dtypes"], strict=True):
    assert str(np.asarray(y).dtype) == dtype
    np.testing.assert_allclose(np.asarray(y), np.asarray(want, dtype), rtol=1e-6)


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_jax(name):
  fn, args = ERRORS[name](xjax)
  cls, message = GOLDEN["errors"][name]
  with pytest.raises(Exception) as info:
    xjax.make_jaxpr(fn)(*args)
  assert type(info.value).__name__ == cls
  assert str(info.value) == message


def _mesh():
  return xjax.make_mesh((4, 2), ("x", "y"), axis_types=(xjax.sharding.AxisType.Auto,) * 2)


def test_values_equal_the_unsharded_vmap():
  mesh = _mesh()

  def f(a):
    b = xjax.lax.with_sharding_constraint(jnp.sin(a) * 3, NamedSharding(mesh, P("y")))
    return b @ b.T + a.sum()

  xs = np.arange(8 * 4 * 6, dtype=np.float32).reshape(8, 4, 6) / 50
  want = np.asarray(xjax.vmap(f)(xs))
  for spmd in ["x", ("x",)]:
    got = xjax.jit(xjax.vmap(f, spmd_axis_name=spmd))(xs)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
    assert got.sharding.spec == P("x", "y")
  loop = np.stack([np.asarray(f(x)) for x in xs])
  np.testing.assert_allclose(want, loop, rtol=1e-5)


def test_spmd_name_is_the_outer_axis_after_jvp_and_vmap_in_either_order():
  mesh = _mesh()
  f = lambda a: xjax.lax.with_sharding_constraint(a ** 2, NamedSharding(mesh, P("y")))
  xs = np.arange(32, dtype=np.float32).reshape(8, 4) / 9
  ts = np.ones_like(xs)
  jvp_of_vmap = xjax.jvp(xjax.vmap(f, spmd_axis_name="x"), (xs,), (ts,))
  vmap_of_jvp = xjax.vmap(lambda x, t: xjax.jvp(f, (x,), (t,)), spmd_axis_name="x")(xs, ts)
  for primal, tangent in (jvp_of_vmap, vmap_of_jvp):
    np.testing.assert_allclose(np.asarray(primal), xs ** 2, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tangent), 2 * xs, rtol=1e-6)
    assert tangent.sharding.spec == P("x", "y")


def test_collective_with_axis_name_and_spmd_name():
  # The collective acts over the vmapped axis whether or not it is split over devices.
  mesh = _mesh()
  f = lambda a: xjax.lax.psum(
      xjax.lax.with_sharding_constraint(a, NamedSharding(mesh, P("y"))), "i")
  xs = np.arange(32, dtype=np.float32).reshape(8, 4)
  got = xjax.jit(xjax.vmap(f, axis_name="i", spmd_axis_name="x"))(xs)
  np.testing.assert_allclose(np.asarray(got), np.broadcast_to(xs.sum(0), (8, 4)))

