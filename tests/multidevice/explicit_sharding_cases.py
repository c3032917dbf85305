"""Explicit-sharding cases shared by tests/multidevice/test_explicit_sharding.py (on xjax) and
tools/golden_explicit_sharding.py (on JAX 0.10.2).

Each case takes the module (`xjax` or `jax`) and returns an array (its type, values and
sharding spec are recorded), a jaxpr text, or raises (the error's type and text are).
All run under ``set_mesh`` of a (4, 2) mesh of Explicit axes x, y.
"""
import numpy as np

A = np.arange(64, dtype=np.float32).reshape(8, 8) / 7


def _env(jax):
  mesh = jax.make_mesh((4, 2), ("x", "y"))
  return mesh, jax.sharding.NamedSharding, jax.sharding.PartitionSpec


def _run(build):
  def run(jax):
    mesh, NS, P = _env(jax)
    with jax.set_mesh(mesh):
      return build(jax, jax.numpy, mesh, NS, P)
  return run


def _xy(jax, P):
  return jax.device_put(A, P("x", "y"))


def array_cases():
  c = {}
  c["put_bare_spec"] = lambda jax, jnp, mesh, NS, P: jax.device_put(A, P("x"))
  c["dot_ambiguous_out_sharding"] = lambda jax, jnp, mesh, NS, P: jnp.dot(
      _xy(jax, P), jax.device_put(A, P("y", None)), out_sharding=P("x", None))
  c["dot_out_sharding_named"] = lambda jax, jnp, mesh, NS, P: jnp.dot(
      _xy(jax, P), _xy(jax, P), out_sharding=NS(mesh, P(None, "x")))
  c["dot_unsharded_out_sharding"] = lambda jax, jnp, mesh, NS, P: jnp.dot(
      A, A, out_sharding=P("x", "y"))
  c["matmul_out_sharding"] = lambda jax, jnp, mesh, NS, P: jnp.matmul(
      _xy(jax, P), _xy(jax, P), out_sharding=P(None, "y"))
  c["einsum_out_sharding"] = lambda jax, jnp, mesh, NS, P: jnp.einsum(
      "ij,jk->ik", _xy(jax, P), _xy(jax, P), out_sharding=P("y", None))
  c["einsum_transposed_out_sharding"] = lambda jax, jnp, mesh, NS, P: jnp.einsum(
      "ij,jk->ki", _xy(jax, P), _xy(jax, P), out_sharding=P("y", None))
  c["lax_dot_general_out_sharding"] = lambda jax, jnp, mesh, NS, P: jax.lax.dot_general(
      _xy(jax, P), _xy(jax, P), (((1,), (0,)), ((), ())), out_sharding=P("x", "y"))
  c["matmul_operator_keeps_rules"] = lambda jax, jnp, mesh, NS, P: (
      jax.device_put(A, P("x")) @ jax.device_put(A, P(None, "y")))
  c["jit_dot_out_sharding"] = lambda jax, jnp, mesh, NS, P: jax.jit(
      lambda u, v: jnp.dot(u, v, out_sharding=P("x", None)))(_xy(jax, P),
                                                               jax.device_put(A, P("y", None)))
  c["jnp_reshape_out_sharding"] = lambda jax, jnp, mesh, NS, P: jnp.reshape(
      _xy(jax, P), (2, 32), out_sharding=P(None, "x"))
  c["lax_reshape_out_sharding"] = lambda jax, jnp, mesh, NS, P: jax.lax.reshape(
      _xy(jax, P), (64,), out_sharding=P("x"))
  c["jit_reshape_out_sharding"] = lambda jax, jnp, mesh, NS, P: jax.jit(
      lambda u: jnp.reshape(u, (4, 16), out_sharding=P("y", "x")))(_xy(jax, P))
  c["broadcast_in_dim_out_sharding"] = lambda jax, jnp, mesh, NS, P: jax.lax.broadcast_in_dim(
      _xy(jax, P), (2, 8, 8), (1, 2), out_sharding=P("y", "x", None))
  c["reshard_eager"] = lambda jax, jnp, mesh, NS, P: jax.reshard(_xy(jax, P), P(None, "x"))
  c["reshard_jit"] = lambda jax, jnp, mesh, NS, P: jax.jit(
      lambda u: jax.reshard(u, P(None, "x")) * 2)(_xy(jax, P))
  c["reshard_grad"] = lambda jax, jnp, mesh, NS, P: jax.grad(
      lambda u: (jax.reshard(u, P(None, "x")) ** 2).sum())(_xy(jax, P))
  c["wsc_same_type"] = lambda jax, jnp, mesh, NS, P: jax.lax.with_sharding_constraint(
      _xy(jax, P), P("x", "y"))
  c["zeros_named"] = lambda jax, jnp, mesh, NS, P: jnp.zeros((8, 4), device=NS(mesh, P("x")))
  c["ones_named"] = lambda jax, jnp, mesh, NS, P: jnp.ones((8, 4), device=NS(mesh, P(None, "y")))
  c["full_named"] = lambda jax, jnp, mesh, NS, P: jnp.full((8, 4), 3.0, device=NS(mesh, P("x")))
  c["arange_named"] = lambda jax, jnp, mesh, NS, P: jnp.arange(8, device=NS(mesh, P("x")))
  c["zeros_under_mesh"] = lambda jax, jnp, mesh, NS, P: jnp.zeros((8, 4))
  c["uniform_out_sharding"] = lambda jax, jnp, mesh, NS, P: jax.random.uniform(
      jax.random.key(0), (8, 4), out_sharding=P("x"))
  c["normal_out_sharding"] = lambda jax, jnp, mesh, NS, P: jax.random.normal(
      jax.random.key(1), (8, 4), out_sharding=P("x"))
  c["randint_out_sharding"] = lambda jax, jnp, mesh, NS, P: jax.random.randint(
      jax.random.key(2), (8, 4), 0, 100, out_sharding=P(None, "y"))
  c["auto_axes"] = lambda jax, jnp, mesh, NS, P: jax.sharding.auto_axes(
      lambda u: u * 2, out_sharding=P("x", None))(_xy(jax, P))
  c["auto_axes_one_axis"] = lambda jax, jnp, mesh, NS, P: jax.jit(jax.sharding.auto_axes(
      lambda u: u + 1, axes="x", out_sharding=P("x", "y")))(_xy(jax, P))
  return {k: _run(v) for k, v in c.items()}


def typeof_cases():
  """Types seen inside traced functions (returned as text)."""
  c = {}

  def inside_jit(jax, P, f, x):
    seen = []
    jax.jit(lambda u: seen.append(str(jax.typeof(f(u)))) or u)(x)
    return seen[0]

  c["reshard_in_jit"] = lambda jax, jnp, mesh, NS, P: inside_jit(
      jax, P, lambda u: jax.reshard(u, P(None, "x")), _xy(jax, P))
  c["dot_out_sharding_in_jit"] = lambda jax, jnp, mesh, NS, P: inside_jit(
      jax, P, lambda u: jnp.dot(u, u, out_sharding=P(None, "y")), _xy(jax, P))

  def in_auto(jax, jnp, mesh, NS, P):
    seen = []
    def f(u):
      seen.append(f"{jax.typeof(u)} {jax.sharding.get_abstract_mesh().axis_types}")
      return u
    jax.sharding.auto_axes(f, axes="x", out_sharding=P("x", "y"))(_xy(jax, P))
    return seen[0]
  c["inside_auto_axes"] = in_auto
  return {k: _run(v) for k, v in c.items()}


def jaxpr_cases():
  c = {}
  mk = lambda jax, f, *args: str(jax.make_jaxpr(f)(*args))
  c["dot_general"] = lambda jax, jnp, mesh, NS, P: mk(
      jax, lambda u: jnp.dot(u, u, out_sharding=P("x", None)), _xy(jax, P))
  c["reshape"] = lambda jax, jnp, mesh, NS, P: mk(
      jax, lambda u: jax.lax.reshape(u, (64,), out_sharding=P("x")), _xy(jax, P))
  c["broadcast_in_dim"] = lambda jax, jnp, mesh, NS, P: mk(
      jax, lambda u: jax.lax.broadcast_in_dim(u, (2, 8, 8), (1, 2), out_sharding=P(None, "x",
                                                                                   "y")),
      _xy(jax, P))
  c["reshard"] = lambda jax, jnp, mesh, NS, P: mk(
      jax, lambda u: jax.reshard(u, P(None, "x")), _xy(jax, P))
  c["wsc_same_type"] = lambda jax, jnp, mesh, NS, P: mk(
      jax, lambda u: jax.lax.with_sharding_constraint(u, P("x", "y")), _xy(jax, P))
  c["auto_axes"] = lambda jax, jnp, mesh, NS, P: mk(
      jax, jax.sharding.auto_axes(lambda u: u * 2, out_sharding=P("x", None)), _xy(jax, P))
  return {k: _run(v) for k, v in c.items()}


def error_cases():
  c = {}
  c["dot_ambiguous"] = lambda jax, jnp, mesh, NS, P: jnp.dot(
      _xy(jax, P), jax.device_put(A, P("y", None)))
  c["reshape_unsupported"] = lambda jax, jnp, mesh, NS, P: jnp.reshape(_xy(jax, P), (2, 32))
  c["dot_out_sharding_bad_type"] = lambda jax, jnp, mesh, NS, P: jnp.dot(A, A, out_sharding="x")
  c["wsc_assert"] = lambda jax, jnp, mesh, NS, P: jax.lax.with_sharding_constraint(
      _xy(jax, P), P(None, "x"))
  c["auto_axes_missing_out_sharding"] = lambda jax, jnp, mesh, NS, P: jax.sharding.auto_axes(
      lambda u: u)(_xy(jax, P))
  c["explicit_axes_missing_in_sharding"] = lambda jax, jnp, mesh, NS, P: (
      jax.sharding.explicit_axes(lambda u: u)(A))
  out = {k: _run(v) for k, v in c.items()}

  def no_mesh_dot(jax):
    _, _, P = _env(jax)
    return jax.numpy.dot(A, A, out_sharding=P("x"))

  def no_mesh_explicit(jax):
    _, _, P = _env(jax)
    return jax.sharding.explicit_axes(lambda u: u, in_sharding=P("x"))(A)
  out["dot_spec_without_mesh"] = no_mesh_dot
  out["explicit_axes_without_mesh"] = no_mesh_explicit
  return out


def auto_mesh_cases():
  """explicit_axes under a mesh of Auto axes."""
  def run(jax):
    AT = jax.sharding.AxisType
    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AT.Auto, AT.Auto))
    P = jax.sharding.PartitionSpec
    seen = []
    def f(u):
      seen.append(str(jax.typeof(u)))
      return u * 2
    with jax.set_mesh(mesh):
      y = jax.sharding.explicit_axes(f, in_sharding=P("x", None))(jax.device_put(A, P("x",
                                                                                      "y")))
    return y, seen[0]
  return {"explicit_axes": run}
