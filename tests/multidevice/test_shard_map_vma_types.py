"""Varying-manual-axes types on avals (`aval.mat.varying`, printed ``{V:x}``) inside shard_map
bodies, and `jax.smap` (issue 35; JAX 0.10.2's behaviour)."""
import pickle

import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax
from xjax._src import core
from xjax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P, get_abstract_mesh

MESH = Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("x", "y"))
X = jnp.arange(16.0).reshape(8, 2)


def test_aval_vma_is_interned_hashed_and_compared():
  a = core.ShapedArray((3,), np.float32, vma=frozenset({"x"}))
  assert a is core.ShapedArray((3,), np.float32, vma={"x"})
  plain = core.ShapedArray((3,), np.float32)
  assert a != plain and hash(a) != hash(plain) and plain.vma == frozenset()
  assert a.mat.varying == {"x"} and a.mat.unreduced == frozenset() == a.mat.reduced
  assert a.update(shape=(4,)).vma == {"x"} and a.update(vma=frozenset()) is plain
  assert a.str_short(short_dtypes=True) == "f32[3]{V:x}"
  assert core.ShapedArray((), np.int32, vma={"y", "x"}).str_short() == "int32[]{V:(x,y)}"
  assert pickle.loads(pickle.dumps(a)) is a


def test_body_values_vary_along_their_spec_axes_and_psum_makes_them_invariant():
  seen = {}

  def f(a, b):
    seen["a"], seen["b"] = jax.typeof(a).mat.varying, b.aval.mat.varying
    c = a * b
    seen["c"] = c.aval.mat.varying
    d = lax.psum(c, "x")
    seen["d"] = d.aval.mat.varying
    seen["i"] = lax.axis_index("y").aval.mat.varying
    seen["manual"] = get_abstract_mesh().manual_axes
    return d

  g = jax.shard_map(f, mesh=MESH, in_specs=(P("x"), P(None, "y")), out_specs=P(None, "y"))
  b = np.arange(8.0).reshape(2, 4)
  out = g(X, b)
  assert seen == {"a": {"x"}, "b": {"y"}, "c": {"x", "y"}, "d": {"y"}, "i": {"y"},
                  "manual": ("x", "y")}
  a_sum = np.asarray(X).reshape(4, 2, 2).sum(0)  # the psum over x of a's blocks
  want = np.concatenate([a_sum * b[:, :2], a_sum * b[:, 2:]], axis=1)
  np.testing.assert_allclose(np.asarray(out), want)


def test_check_vma_false_bodies_carry_no_types():
  seen = {}

  def f(a):
    seen["a"] = a.aval.mat.varying
    return a

  jax.shard_map(f, mesh=MESH, in_specs=P("x"), out_specs=P("x"), check_vma=False)(X)
  assert seen["a"] == frozenset()


def test_jaxpr_prints_vma_and_outer_values_have_none():
  text = str(jax.make_jaxpr(jax.shard_map(lambda a: a * 2, mesh=MESH, in_specs=P("x"),
                                          out_specs=P("x")))(X))
  assert "f32[2,2]{V:x}" in text and "b:f32[8,2] = shard_map" in text


@pytest.mark.parametrize("jit", [False, True])
def test_smap_nests_one_axis_at_a_time(jit):
  seen = {}

  def g(x):
    seen["g"] = (get_abstract_mesh().manual_axes, x.aval.mat.varying)
    return x * x

  def h(x):
    seen["h"] = (get_abstract_mesh().manual_axes, x.aval.mat.varying)
    out = jax.smap(g, in_axes=0, out_axes=0, axis_name="y")(x)
    seen["h_out"] = out.aval.mat.varying
    return out

  f = lambda x: jax.smap(h, in_axes=0, out_axes=0, axis_name="x")(x)
  with jax.set_mesh(MESH):
    out = (jax.jit(f) if jit else f)(X)
  np.testing.assert_allclose(np.asarray(out), np.asarray(X) ** 2)
  assert seen == {"g": (("x", "y"), {"x", "y"}), "h": (("x",), {"x"}), "h_out": {"x"}}


def test_smap_replicated_and_argument_checks():
  mesh = jax.make_mesh((2,), ("d",), axis_types=(AxisType.Auto,))
  with jax.set_mesh(mesh):
    f = jax.smap(lambda x, y: (x * 2, y + x[:4]), in_axes=(None, 0), out_axes=(None, 0),
                 axis_name="d")
    out1, out2 = f(np.arange(8.0), np.arange(8.0))
    np.testing.assert_allclose(np.asarray(out2), np.arange(8.0) + np.tile(np.arange(4.0), 2))
    assert out2.sharding == NamedSharding(mesh, P("d"))
    with pytest.raises(ValueError, match="replicat"):  # y varies along d
      jax.smap(lambda y: y * 2, in_axes=0, out_axes=None, axis_name="d")(np.arange(8.0))
    g = jax.smap(lambda x: x * 2, in_axes=None, out_axes=None, axis_name="d")
    out = g(np.arange(8.0))
    np.testing.assert_allclose(np.asarray(out), np.arange(8.0) * 2)
    assert out.sharding == NamedSharding(mesh, P())
    with pytest.raises(TypeError, match="in_axes was not specified"):
      jax.smap(lambda x: x, out_axes=0, axis_name="d")(np.arange(4.0))
    with pytest.raises(TypeError, match="axis_name should be a `str`"):
      jax.smap(lambda x: x, out_axes=0, axis_name=("d",))
    with pytest.raises(TypeError, match="out_axes must be an int"):
      jax.smap(lambda x: x, in_axes=0, out_axes="d", axis_name="d")


def test_all_gather_to_invarying_is_replicated_and_differentiable():
  mesh = Mesh(np.array(jax.devices()[:4]), ("x",))
  seen = {}

  def f(a):
    out = lax.all_gather(a, "x", tiled=True, to="invarying")
    seen["out"] = out.aval.mat.varying
    return out

  g = jax.jit(jax.shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=P()))
  arr = jnp.arange(8.0)
  np.testing.assert_allclose(np.asarray(g(arr)), np.arange(8.0))
  assert seen["out"] == frozenset()
  assert "all_gather_invariant" in str(jax.make_jaxpr(g)(arr))
  grad = jax.jit(jax.grad(lambda x: (g(x) * jnp.arange(8.0)).sum()))(arr)
  np.testing.assert_allclose(np.asarray(grad), np.arange(8.0))
  with pytest.raises(ValueError, match="Allowed `to` values"):
    jax.shard_map(lambda a: lax.all_gather(a, "x", to="bad"), mesh=mesh, in_specs=P("x"),
                  out_specs=P("x"))(arr)


def test_grad_cotangents_vary_as_their_primals():
  seen = {}

  def f(w, x):
    dx = jax.grad(lambda x: (x @ w).sum())(x)
    seen["dx"] = dx.aval.mat.varying
    return dx

  w, x = jnp.ones((2, 3)), jnp.arange(16.0).reshape(8, 2)
  out = jax.shard_map(f, mesh=MESH, in_specs=(P(), P("x")), out_specs=P("x"))(w, x)
  assert seen["dx"] == {"x"}
  np.testing.assert_allclose(np.asarray(out), np.full((8, 2), 3.0))


def test_key_arrays_pass_through_eager_shard_map():
  mesh = Mesh(np.array(jax.devices()[:4]), ("i",))
  keys = jax.random.split(jax.random.key(0), 4)
  f = jax.shard_map(lambda k: jax.random.normal(k[0], (1,)), mesh=mesh, in_specs=P("i"),
                    out_specs=P("i"))
  out = f(keys)
  want = np.concatenate([np.asarray(jax.random.normal(k, (1,))) for k in keys])
  np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)


def test_in_specs_none_passes_arguments_as_static_values():
  mesh = Mesh(np.array(jax.devices()[:4]), ("x",))
  for specs in (None, (None,)):
    out = jax.shard_map(lambda x: x * 2, mesh=mesh, in_specs=specs, out_specs=P())(3.0)
    assert float(out) == 6.0


def test_eager_abstract_mesh_takes_the_arguments_mesh():
  mesh = Mesh(np.array(jax.devices()[:2]), ("x",))
  other = Mesh(np.array(jax.devices()[:2]), ("y",))
  arr = jax.device_put(np.arange(8), NamedSharding(mesh, P("x")))
  f = lambda m, s: jax.shard_map(lambda x: x, mesh=m.abstract_mesh, in_specs=s, out_specs=s)
  np.testing.assert_array_equal(np.asarray(f(mesh, P("x"))(arr)), np.arange(8))
  with pytest.raises(ValueError, match="Please pass `jax.Array`s with a `NamedSharding`"):
    f(mesh, P("x"))(np.arange(8))
  arr2 = jax.device_put(np.arange(8), NamedSharding(Mesh(np.array(jax.devices()[:4]), ("y",)),
                                                    P("y")))
  with pytest.raises(ValueError, match="Mesh shape of the input.*does not match"):
    f(other, P("y"))(arr2)


def test_invarying_axes():
  seen = {}

  def f(a, b):
    seen["a"] = a.aval.mat.invarying(get_abstract_mesh())
    seen["b"] = b.aval.mat.invarying(get_abstract_mesh())
    return a

  jax.jit(jax.shard_map(f, mesh=MESH, in_specs=(P("x"), P()), out_specs=P("x")))(X, X)
  assert seen == {"a": {"y"}, "b": {"x", "y"}}


def test_residuals_that_are_inputs_or_outputs_are_forwarded():
  mesh = Mesh(np.array(jax.devices()[:4]), ("i",))
  f = jax.shard_map(lambda x: (lax.exp(x.sum()) + x, lax.exp(x)), mesh=mesh, in_specs=P("i"),
                    out_specs=P("i"))
  g = lambda x: sum(f(x)).sum()
  x = jnp.arange(16.0) / 16
  closed = jax.make_jaxpr(jax.grad(g))(x)
  from xjax._src.interpreters import partial_eval as pe
  jaxpr, _ = pe.dce_jaxpr(closed.jaxpr, [True])
  first, *_, last = jaxpr.eqns
  # exp(x) is an output and a residual: one output; exp(sum) a scalar residual per shard.
  assert [v.aval.shape for v in first.outvars] == [(16,), (4,)]
  assert len(last.invars) == 4 and sum(first.outvars[0] is v for v in last.invars) == 1
  blocks = np.asarray(x).reshape(4, 4)
  want = (4 * np.exp(blocks.sum(1, keepdims=True)) + 1 + np.exp(blocks)).reshape(-1)
  np.testing.assert_allclose(np.asarray(jax.grad(g)(x)), want, rtol=1e-5)


def test_dce_prunes_shard_map_outputs_and_inputs():
  mesh = Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("i", "j"))
  g = jax.shard_map(lambda y, z: (jnp.cos(z), jnp.tan(y)), mesh=mesh,
                    in_specs=(P("i", "j"), P(None, "i")), out_specs=(P(None, "i"), P("i", "j")))
  jaxpr = jax.make_jaxpr(g)(jnp.zeros((8, 8)), jnp.zeros((16, 16))).jaxpr
  from xjax._src.interpreters import partial_eval as pe
  new, used = pe.dce_jaxpr(jaxpr, [True, False])
  assert used == [False, True]
  eqn, = new.eqns
  assert len(eqn.params["jaxpr"].eqns) == 1 and eqn.params["in_specs"] == (P(None, "i"),)
  assert eqn.params["out_specs"] == (P(None, "i"),)
  assert pe.dce_jaxpr(jaxpr, [False, False])[0].eqns == []


def test_residuals_split_only_over_the_axes_they_vary_along():
  # A residual of sin varies along 'j' only: vmap's spmd axis 'i' may split the batch.
  mesh = Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("i", "j"))
  f = jax.shard_map(jnp.sin, mesh=mesh, in_specs=P("j"), out_specs=P("j"))
  xs = jnp.arange(4 * 16.0).reshape(4, 16) / 10
  out = jax.vmap(jax.grad(lambda x: f(x).sum()), spmd_axis_name="i")(xs)
  np.testing.assert_allclose(np.asarray(out), np.cos(np.asarray(xs)), rtol=1e-6)
  g = jax.shard_map(lambda x: jnp.sin(x) * lax.axis_index("i"), mesh=mesh, in_specs=P("j"),
                    out_specs=P(("i", "j")))
  x = jnp.arange(16.0) / 10
  grad = jax.grad(lambda x: g(x).sum())(x)
  np.testing.assert_allclose(np.asarray(grad), np.cos(np.asarray(x)) * 6, rtol=1e-6)


def test_sharding_constraint_on_a_manual_axis_inside_the_body_raises():
  mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("i", "j"))

  def g(x):
    return lax.with_sharding_constraint(x, NamedSharding(mesh, P("i", "j"))) * 2

  f = jax.jit(jax.shard_map(g, mesh=mesh, in_specs=P("i"), out_specs=P("i"),
                            axis_names=frozenset({"i"}), check_vma=False))
  with pytest.raises(ValueError, match="contains a manual axes.*of mesh"):
    f(jnp.arange(32.0).reshape(4, 8))


def test_pvary_is_inserted_where_operand_types_differ():
  mesh = Mesh(np.array(jax.devices()[:4]), ("x",))
  f = jax.shard_map(lambda a, b: a * b + 2.0, mesh=mesh, in_specs=(P(), P("x")),
                    out_specs=P("x"))
  a, b = jnp.arange(1.0) + 3, jnp.arange(4.0)
  eqns = jax.make_jaxpr(f)(a, b).jaxpr.eqns[0].params["jaxpr"].eqns
  assert [e.primitive.name for e in eqns] == ["pvary", "mul", "pvary", "add"]
  assert eqns[0].params["axes"] == ("x",)
  np.testing.assert_allclose(np.asarray(f(a, b)), 3 * np.arange(4.0) + 2)
  grads = jax.grad(lambda a, b: f(a, b).sum(), argnums=(0, 1))(a, b)
  np.testing.assert_allclose(np.asarray(grads[0]), [6.0])
  np.testing.assert_allclose(np.asarray(grads[1]), np.full(4, 3.0))
  # A collective casts an invariant operand along its axes first.
  g = jax.jit(jax.shard_map(lambda x: lax.pmax(x, "x"), mesh=mesh, in_specs=P(), out_specs=P()))
  assert "pvary[axes=('x',)" in str(jax.make_jaxpr(g)(jnp.arange(8.0)))
  np.testing.assert_allclose(np.asarray(g(jnp.arange(8.0))), np.arange(8.0))


def test_auto_pcast_off_raises_for_operands_of_different_types():
  from xjax._src import config as config_lib
  mesh = Mesh(np.array(jax.devices()[:2]), ("i",))
  f = jax.shard_map(lambda x, y: x * y, mesh=mesh, in_specs=(P("i"), P()), out_specs=P("i"))
  x, y = jnp.ones((4, 2)), jnp.ones((2, 2))
  with config_lib.auto_pcast(False):
    with pytest.raises(ValueError, match="requires varying manual axes to match"):
      f(x, y)
    with pytest.raises(ValueError, match="requires varying manual axes to match"):
      jax.jit(f)(x, y)
  np.testing.assert_allclose(np.asarray(jax.jit(f)(x, y)), np.ones((4, 2)))
