"""shard_map's analysis of what varies between devices reaches every higher-order primitive,
and programs whose devices could run different collectives never reach XLA (issue 33 items
2, 3, 5 and 6).

XLA's all-reduce waits for every device of its group: a `cond` whose predicate differs
between devices and whose branches run different collectives (or a while loop whose trip
count differs and whose body runs one) waits forever, then aborts the process. JAX rejects
the `cond` by its varying-manual-axes types ("cond branches must have equal output types");
xjax rejects every such program at trace time.
"""
import re

import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax
from xjax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()[:8]), ("x",))
X = jnp.arange(8.0)


def smap(f, in_specs=P("x"), out_specs=P("x"), **kw):
  return jax.shard_map(f, mesh=MESH, in_specs=in_specs, out_specs=out_specs, **kw)


# Each wrapper hides a psum's replication behind one higher-order primitive.
HIDERS = {
    "checkpoint": lambda g: jax.checkpoint(g),
    "jit": lambda g: jax.jit(g),
    "custom_jvp": lambda g: _with_jvp(g),
    "custom_vjp": lambda g: _with_vjp(g),
    "cond": lambda g: lambda y: lax.cond(True, g, lambda v: lax.psum(v, "x") * 0 + g(v), y),
    "scan": lambda g: lambda y: lax.scan(lambda c, _: (g(y), None), g(y), None, length=2)[0],
    "fori": lambda g: lambda y: lax.fori_loop(0, 2, lambda i, c: g(y) + 0 * c, g(y)),
    "nested": lambda g: jax.checkpoint(jax.jit(lambda y: lax.cond(True, g, g, y))),
}


def _with_jvp(g):
  f = jax.custom_jvp(g)
  f.defjvp(lambda p, t: (g(*p), g(*t)))
  return f


def _with_vjp(g):
  f = jax.custom_vjp(g)
  f.defvjp(lambda y: (g(y), None), lambda _, ct: (ct,))
  return f


@pytest.mark.parametrize("hider", sorted(HIDERS))
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_replication_is_seen_through_every_higher_order_primitive(hider, mode):
  body = HIDERS[hider](lambda y: lax.psum(y, "x"))
  f = smap(body, out_specs=P())
  f = jax.jit(f) if mode == "jit" else f
  np.testing.assert_allclose(np.asarray(f(X)), [28.0])


@pytest.mark.parametrize("hider", ["checkpoint", "jit", "cond", "scan"])
def test_a_varying_value_behind_a_primitive_still_fails_the_out_specs_check(hider):
  body = HIDERS[hider](lambda y: y * 2)
  with pytest.raises(ValueError, match="out_specs which require replication"):
    smap(body, out_specs=P())(X)


def test_cond_branches_with_different_manual_types_raise_jaxs_type_error():
  f = smap(lambda y: lax.cond(y[0] > 3, lambda c: lax.psum(c, "x"), lambda c: c, y))
  for g in (f, jax.jit(f)):
    with pytest.raises(TypeError, match=r"cond branches must have equal output types(.|\n)*"
                       r"float32\[1\] but the corresponding output of false_fun has type "
                       r"float32\[1\]\{V:x\}"):
      g(X)


@pytest.mark.parametrize("check_vma", [True, False])
@pytest.mark.parametrize("program", [
    lambda y: lax.cond(y[0] > 3, lambda c: lax.psum(c, "x"), lambda c: lax.pmax(c, "x"), y),
    lambda y: lax.cond(y[0] > 3, lambda c: lax.psum(c, "x"),
                       lambda c: lax.psum(c, "x") + lax.psum(c, "x"), y),
    lambda y: lax.switch((y[0] > 3).astype(int), [lambda c: lax.psum(c, "x"),
                                                  lambda c: lax.pmin(c, "x")], y),
    lambda y: lax.while_loop(lambda c: c[0] < 10, lambda c: lax.psum(c, "x") * 0 + c + 1, y),
    lambda y: lax.fori_loop(0, y[0].astype(int), lambda i, c: lax.psum(c, "x"), y),
    lambda y: lax.scan(lambda c, _: (lax.cond(c[0] > 3, lambda v: lax.psum(v, "x"),
                                              lambda v: lax.pmax(v, "x"), c), None),
                       y, None, length=2)[0],
], ids=["cond", "cond-count", "switch", "while", "fori-dynamic", "cond-in-scan"])
def test_collectives_under_a_varying_predicate_are_refused_before_xla(program, check_vma):
  f = smap(program, check_vma=check_vma)
  for g in (f, jax.jit(f)):
    with pytest.raises((TypeError, ValueError), match="differ between devices|equal output"):
      g(X)


@pytest.mark.parametrize("program,expected", [
    # An invariant predicate: every device takes the same branch or trip count.
    (lambda y: lax.cond(lax.psum(y[0], "x") > 3, lambda c: lax.psum(c, "x"),
                        lambda c: lax.pmax(c, "x"), y), [28.0] * 8),
    (lambda y: lax.while_loop(lambda c: lax.pmax(c[0], "x") < 50,
                              lambda c: lax.psum(c, "x"), y), None),
    # A varying predicate is fine when no branch communicates.
    (lambda y: lax.cond(y[0] > 3, lambda c: c * 2, lambda c: c + 1, y),
     [1.0, 2.0, 3.0, 4.0, 8.0, 10.0, 12.0, 14.0]),
])
def test_agreeing_control_flow_runs(program, expected):
  out = np.asarray(smap(program)(X))
  if expected is None:
    ref = np.arange(8.0)
    while ref.max() < 50:
      ref = np.full(8, ref.sum())
    expected = ref
  np.testing.assert_allclose(out, expected)


def test_shard_map_inside_an_eager_scan_runs_over_its_mesh():
  f = smap(lambda c: lax.psum(c, "x") / 100 + c)
  out, _ = lax.scan(lambda c, _: (f(c), None), X, None, length=2)
  ref = np.arange(8.0)
  for _ in range(2):
    ref = ref.sum() / 100 + ref
  np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-6)
  # The same through cond, while and a nested jit run eagerly.
  np.testing.assert_allclose(np.asarray(lax.cond(True, f, f, X)), np.arange(8.0) + 0.28,
                             rtol=1e-6)
  np.testing.assert_allclose(np.asarray(lax.fori_loop(0, 1, lambda i, c: f(c), X)),
                             np.arange(8.0) + 0.28, rtol=1e-6)


def test_explicit_inputs_must_be_laid_out_as_in_specs_say():
  mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
  replicated = jax.device_put(X, NamedSharding(mesh, P()))
  split = jax.device_put(X, NamedSharding(mesh, P("x")))
  ident = lambda spec: jax.shard_map(lambda y: y, mesh=mesh, in_specs=spec, out_specs=spec)
  for f, arg, want, got in [(ident(P("x")), replicated, "P('x',)", "P(None,)"),
                            (ident(P("y")), split, "P('y',)", "P('x',)"),
                            (ident(P()), split, "P(None,)", "P('x',)")]:
    text = f"in_specs passed to shard_map: {want} does not match the specs of the input: {got}"
    for g in (f, jax.jit(f)):
      with pytest.raises(ValueError, match=re.escape(text)):
        g(arg)
  np.testing.assert_array_equal(np.asarray(ident(P("x"))(split)), np.arange(8.0))
