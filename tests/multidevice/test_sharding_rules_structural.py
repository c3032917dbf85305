"""Sharding-in-types rules of the structural primitives (reshape, concatenate, pad, split,
select, sort, cumulative ops, windows, conv) and of their transposes, on Explicit mesh
axes. The expected specs and errors are what JAX 0.10.2 gives for the same programs
(checked with it on 8 CPU devices when these cases were written)."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.core import ShardingTypeError
from xjax.sharding import AxisType, PartitionSpec as P

ERR = ShardingTypeError

RESHAPES = [
    ((16, 1), (1, 16, 1), P("x", None), P(None, "x", None)),
    ((8, 2, 1), (1, 16, 1), P("x", None, None), ERR),
    ((4, 6), (4, 6), P(None, "x"), P(None, "x")),
    ((16, 4), (2, 8, 4), P(("x", "y"), None), P("x", "y", None)),
    ((16, 4), (4, 4, 4), P(("x", "y", "z"), None), P(("x", "y"), "z", None)),
    ((2, 8, 4), (16, 4), P("x", "y", None), P(("x", "y"), None)),
    ((2, 8, 4), (16, 4), P(None, "y", None), ERR),
    ((2, 8, 4), (16, 4), P("x", None, None), P("x", None)),
    ((8, 4, 2), (8, 8), P("x", "y", None), P("x", "y")),
    ((4, 1, 8, 1, 32), (4, 1, 2, 4, 1, 32), P("x", None, "y", None, None),
     P("x", None, "y", None, None, None)),
    ((16,), (4, 4), P(("x", "y", "z")), P(("x", "y"), "z")),
    ((16,), (2, 8), P("x"), P("x", None)),
    ((8, 8), (64,), P("x", None), P("x")),
    ((8, 8), (64,), P(None, "x"), ERR),
    ((4, 6), (6, 4), P("x", None), ERR),
    ((8, 6), (2, 4, 3, 2), P("x", None), ERR),
    ((2, 2, 4), (16,), P("x", "y", "z"), P(("x", "y", "z"))),
]


@pytest.fixture
def mesh():
  m = xjax.make_mesh((2, 2, 2), ("x", "y", "z"), axis_types=(AxisType.Explicit,) * 3)
  with xjax.set_mesh(m):
    yield m


def _out_spec(f, *args):
  return xjax.jit(f).trace(*args).out_info.sharding.spec


@pytest.mark.parametrize("src,dst,spec,want", RESHAPES)
def test_reshape_rule_as_jax(mesh, src, dst, spec, want):
  x = xjax.device_put(np.arange(np.prod(src), dtype=np.float32).reshape(src), spec)
  f = lambda x: jnp.reshape(x, dst)
  if want is ERR:
    with pytest.raises(ShardingTypeError, match="This reshape is not supported"):
      xjax.jit(f).trace(x)
    return
  assert _out_spec(f, x) == want
  y = xjax.jit(f)(x)  # laid out as typed, same values
  assert y.sharding.spec == want
  np.testing.assert_array_equal(np.asarray(y), np.asarray(x).reshape(dst))


def _operands():
  a = xjax.device_put(np.arange(32, dtype=np.float32).reshape(8, 4), P("x", "y"))
  b = xjax.device_put(np.ones((8, 2), np.float32), P("x", "y"))
  c = xjax.device_put(np.ones((8, 2), np.float32), P("x", None))
  return a, b, c


CASES = {
    "concat": (lambda a, b, c: jnp.concatenate([a, b], 1), P("x", "y")),
    "concat_mismatch": (lambda a, b, c: jnp.concatenate([a, c], 1), ERR),
    "pad": (lambda a, b, c: lax.pad(a, 0., [(0, 0, 0), (2, 2, 0)]), P("x", "y")),
    "pad_uneven": (lambda a, b, c: lax.pad(a, 0., [(1, 0, 0), (0, 0, 0)]), ERR),
    "split": (lambda a, b, c: lax.split(a, [2, 2], axis=1)[0], P("x", "y")),
    "rev": (lambda a, b, c: lax.rev(a, (0,)), P("x", "y")),
    "clamp": (lambda a, b, c: lax.clamp(0., a, 1.), P("x", "y")),
    "select": (lambda a, b, c: lax.select(a > 0, a, a * 2), P("x", "y")),
    "select_mismatch": (lambda a, b, c: lax.select(b > 0, b, c), ERR),
    "cumsum": (lambda a, b, c: lax.cumsum(xjax.reshard(a, P("x", None)), axis=1), P("x", None)),
    "cumsum_sharded_axis": (lambda a, b, c: lax.cumsum(a, axis=0), ERR),
    "sort_sharded_axis": (lambda a, b, c: lax.sort(a, dimension=0), ERR),
    "sort": (lambda a, b, c: lax.sort(xjax.reshard(a, P("x", None)), dimension=1), P("x", None)),
    "stack": (lambda a, b, c: jnp.stack([a, a], axis=1), P("x", None, "y")),
    "reduce_window": (lambda a, b, c: lax.reduce_window(a, 0., lax.add, (1, 2), (1, 2), "VALID"),
                      P("x", "y")),
    "conv": (lambda a, b, c: lax.conv_general_dilated(
        xjax.reshard(jnp.ones((8, 3, 4, 4)), P("x", None, None, None)), jnp.ones((2, 3, 3, 3)),
        (1, 1), "SAME"), P("x", None, None, None)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_structural_rules_as_jax(mesh, name):
  f, want = CASES[name]
  args = _operands()
  if want is ERR:
    with pytest.raises(ShardingTypeError):
      xjax.jit(f).trace(*args)
    return
  assert _out_spec(f, *args) == want
  np.testing.assert_allclose(np.asarray(xjax.jit(f)(*args)),
                             np.asarray(f(*(np.asarray(x) for x in args))), rtol=1e-6)


def test_transposes_give_cotangents_the_primal_type(mesh):
  a, _, _ = _operands()
  g = xjax.jit(xjax.grad(lambda x: jnp.sum(jnp.reshape(x, (2, 4, 4)) ** 2)))(a)
  assert g.sharding.spec == P("x", "y")
  np.testing.assert_allclose(np.asarray(g), 2 * np.asarray(a))
  w = xjax.device_put(np.ones((4, 8), np.float32), P("y", None))
  f = lambda x, y: jnp.sum(jnp.dot(x, y, out_sharding=P("x", None)))
  g = xjax.jit(xjax.grad(f))(a, w)
  assert g.sharding.spec == P("x", "y")
  np.testing.assert_allclose(np.asarray(g), np.full((8, 4), 8.0))


def test_higher_order_primitives_keep_their_jaxprs_types(mesh):
  # A jit equation is typed as its jaxpr's outputs (squeezed, split on x), so eager and
  # jitted gradients through it come back on the primal's sharding.
  arr = xjax.device_put(np.arange(16.0, dtype=np.float32).reshape(4, 4, 1), P("x", None, None))
  f = xjax.jit(lambda x: lax.squeeze(x, (2,)))
  g = lambda x: jnp.square(jnp.sum(f(x)))
  assert str(xjax.make_jaxpr(g)(arr).jaxpr.eqns[0].outvars[0].aval) == "float32[4@x,4]"
  for grad in (xjax.grad(g), xjax.jit(xjax.grad(g))):
    out = grad(arr)
    assert out.sharding == arr.sharding
    np.testing.assert_allclose(np.asarray(out), np.full((4, 4, 1), 2 * 120.0))
  y = lax.cond(True, lambda x: x * 2, lambda x: x, arr)
  assert y.sharding == arr.sharding


def test_vmap_keeps_the_mapped_dimension_split(mesh):
  # vmap over a dimension split on an Explicit axis: the body sees the rest of the type,
  # batched jaxprs and results carry the axis at the batch dimension (JAX's
  # explicit_mesh_axis); mapped inputs must agree and unmapped ones may not use it.
  s = P("x", "y", None)
  a = xjax.device_put(jnp.ones((4, 2, 3)), s)
  b = xjax.device_put(jnp.ones((4, 2, 3), bool), s)
  seen = []
  f = xjax.jit(xjax.vmap(lambda a, b: seen.append(str(xjax.typeof(a))) or jnp.where(b, a, 0)))
  out = f(a, b)
  assert seen == ["float32[2@y,3]"]
  assert out.sharding.spec == P("x", "y") and str(xjax.typeof(out)) == "float32[4@x,2@y,3]"
  other = xjax.device_put(jnp.ones((4, 2, 3)), P(None, "y", None))
  with pytest.raises(ValueError, match="should be sharded the same"):
    xjax.vmap(lambda u, v: u + v)(a, other)
  with pytest.raises(ValueError, match="cannot be sharded along the mesh axis"):
    xjax.vmap(lambda u, v: u + v, in_axes=(0, None))(a, xjax.device_put(jnp.ones((2, 3)),
                                                                          P("x", None)))


def test_mesh_and_spec_checks_as_jax():
  explicit = xjax.make_mesh((2,), ("x",), axis_types=(AxisType.Explicit,))
  with pytest.raises(ValueError, match="cannot contain `P.UNCONSTRAINED` when no mesh"):
    xjax.sharding.NamedSharding(explicit, P(P.UNCONSTRAINED))
  manual = xjax.sharding.Mesh(xjax.devices(), "x", (AxisType.Manual,))
  with pytest.raises(ValueError, match="contains manual axes"):
    xjax.set_mesh(manual)
  auto = xjax.make_mesh((2,), ("x",), axis_types=(AxisType.Auto,))
  with pytest.raises(ValueError, match="cannot contain axis names that are of type Auto"):
    xjax.reshard(np.arange(8), xjax.sharding.NamedSharding(auto, P("x")))
  out = xjax.reshard(np.arange(8), xjax.sharding.NamedSharding(explicit, P("x")))
  assert out.sharding == xjax.sharding.NamedSharding(explicit, P("x"))
  np.testing.assert_array_equal(np.asarray(out), np.arange(8))


def test_replicated_typed_results_are_pinned_as_jax(mesh):
  # JAX pins every result typed over Explicit axes, a replicated one too.
  a, _, _ = _operands()
  text = xjax.jit(lambda x: jnp.sum(x)).lower(a).as_text()
  assert "sdy.sharding_constraint" in text and "[]>" in text


def test_mesh_update_as_jax():
  m = xjax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
  a = m.abstract_mesh.update(axis_sizes=(4, 2), axis_names=("a", "b"))
  assert (a.axis_sizes, a.axis_names, a.axis_types) == ((4, 2), ("a", "b"), m.axis_types)
  assert a.update(axis_types=(AxisType.Explicit,) * 2).axis_types == (AxisType.Explicit,) * 2
  e = m.update(axis_types=(AxisType.Explicit, AxisType.Auto))
  assert e.axis_types == (AxisType.Explicit, AxisType.Auto)
  assert list(e.devices.flat) == list(m.devices.flat)
