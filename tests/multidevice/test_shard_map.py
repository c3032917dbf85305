"""shard_map on a (4, 2) mesh of forced CPU devices: values against NumPy and against real
JAX (tests/golden/shard_map.json, from tools/record_sharding_goldens_shard_map.py), printed
jaxprs, lowering, errors, and the transformations' rules."""
import json
import os
import sys

import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax
from xjax.sharding import AxisType, NamedSharding, PartitionSpec as P

TOOLS = os.path.join(os.path.dirname(__file__), "..", "..", "tools")
sys.path.insert(0, TOOLS)
import record_sharding_goldens_shard_map as cases_module  # noqa: E402

with open(cases_module.GOLDEN) as _f:
  GOLDEN = json.load(_f)

CASES = cases_module.shard_map_cases(jax)


def check_case(group: str, name: str, kind: str, thunk) -> None:
  """Runs a recorded case with xjax and compares with what JAX produced."""
  want = GOLDEN[group][name]
  got = cases_module.run_case(jax, kind, thunk)
  if kind == "value":
    assert got["shapes"] == want["shapes"]
    assert got["dtypes"] == want["dtypes"]
    for a, b in zip(got["values"], want["values"], strict=True):
      np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)
  else:
    assert got == {k: v for k, v in want.items() if k != "kind"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_shard_map_matches_jax_golden(name):
  kind, thunk = CASES[name]
  check_case("shard_map", name, kind, thunk)


# ----------------------------------------------------------------------------
# Values against NumPy

MESH = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Auto, AxisType.Auto))
X = np.arange(32, dtype=np.float32).reshape(8, 4)


def smap(f, in_specs, out_specs, **kw):
  return jax.shard_map(f, mesh=MESH, in_specs=in_specs, out_specs=out_specs, **kw)


def blocks(x, rows: int, cols: int):
  """x cut into a rows x cols grid of blocks: result[i][j]."""
  return [np.split(r, cols, axis=1) for r in np.split(x, rows, axis=0)]


def test_shard_map_identity_returns_input_sharded_as_out_specs():
  y = smap(lambda a: a, P("x"), P("x"))(X)
  np.testing.assert_array_equal(np.asarray(y), X)
  assert y.sharding == NamedSharding(MESH, P("x"))


def test_shard_map_body_sees_per_device_shapes():
  seen = []
  smap(lambda a: seen.append(a.shape) or a, P("x", "y"), P("x", "y"))(X)
  assert seen == [(2, 2)]


def test_shard_map_psum_sums_blocks_over_axis():
  y = smap(lambda a: lax.psum(a, "x"), P("x"), P())(X)
  np.testing.assert_allclose(np.asarray(y), sum(np.split(X, 4)))


def test_shard_map_psum_over_both_axes():
  y = smap(lambda a: lax.psum(a, ("x", "y")), P("x", "y"), P())(X)
  np.testing.assert_allclose(np.asarray(y), sum(b for row in blocks(X, 4, 2) for b in row))


def test_shard_map_all_gather_rebuilds_array():
  y = smap(lambda a: lax.all_gather(a, "x", tiled=True), P("x"), P(), check_vma=False)(X)
  np.testing.assert_array_equal(np.asarray(y), X)


def test_shard_map_ppermute_shifts_blocks():
  perm = [(i, (i + 1) % 4) for i in range(4)]
  y = smap(lambda a: lax.ppermute(a, "x", perm), P("x"), P("x"))(X)
  np.testing.assert_array_equal(np.asarray(y), np.roll(X, 2, axis=0))


def test_shard_map_axis_index_numbers_devices():
  y = smap(lambda a: a * 0 + lax.axis_index("x") * 10 + lax.axis_index("y"),
           P("x", "y"), P("x", "y"))(X)
  want = np.repeat(np.repeat(np.arange(4)[:, None] * 10 + np.arange(2)[None], 2, 0), 2, 1)
  np.testing.assert_array_equal(np.asarray(y), want)


def test_shard_map_tuple_of_axes_splits_over_their_product():
  seen = []
  y = smap(lambda a: seen.append(a.shape) or a + 1, P(("x", "y")), P(("x", "y")))(X)
  assert seen == [(1, 4)]
  np.testing.assert_array_equal(np.asarray(y), X + 1)


def test_shard_map_partial_manual_axis_names():
  seen = []
  f = smap(lambda a: seen.append(a.shape) or lax.psum(a, "x"), P("x"), P(), axis_names={"x"})
  np.testing.assert_allclose(np.asarray(f(X)), sum(np.split(X, 4)))
  assert seen == [(2, 4)]
  text = jax.jit(f).lower(X).as_text()
  assert 'manual_axes={"x"}' in text and '{"x", ?}' in text


def test_shard_map_nested_jit_in_body():
  inner = jax.jit(lambda a: lax.psum(jnp.cos(a), "y"))
  y = smap(inner, P(None, "y"), P())(X)
  np.testing.assert_allclose(np.asarray(y), sum(np.split(np.cos(X), 2, axis=1)), rtol=1e-6)


def test_shard_map_static_in_spec_none_passes_python_value():
  f = smap(lambda a, n: a * n, (P("x"), None), P("x"))
  np.testing.assert_array_equal(np.asarray(f(X, 3)), X * 3)


def test_shard_map_pytree_args_and_outputs():
  f = smap(lambda d: {"s": d["a"] + d["b"], "a": d["a"]}, ({"a": P("x"), "b": P("x")},),
           {"s": P("x"), "a": P("x")})
  out = f({"a": X, "b": X * 2})
  np.testing.assert_array_equal(np.asarray(out["s"]), X * 3)
  np.testing.assert_array_equal(np.asarray(out["a"]), X)


def test_shard_map_context_mesh():
  with jax.sharding.use_mesh(MESH):
    y = jax.shard_map(lambda a: lax.psum(a, "y"), in_specs=P(None, "y"), out_specs=P())(X)
  np.testing.assert_allclose(np.asarray(y), sum(np.split(X, 2, axis=1)))


def test_shard_map_under_jit_matches_eager():
  f = smap(lambda a: lax.psum(jnp.sin(a), "x"), P("x"), P())
  np.testing.assert_allclose(np.asarray(jax.jit(f)(X)), np.asarray(f(X)), rtol=1e-6)


def test_shard_map_eager_second_call_does_not_retrace():
  calls = []
  f = smap(lambda a: calls.append(1) or a * 2, P("x"), P("x"))
  f(X)
  f(X + 1)
  assert len(calls) == 1
  f(X[:4])  # a new shape traces again
  assert len(calls) == 2


# ----------------------------------------------------------------------------
# Transformations


def test_shard_map_grad_matches_analytic():
  def loss(a):
    return smap(lambda b: lax.psum(jnp.sin(b) * b, "x"), P("x"), P())(a).sum()
  x = X / 10
  np.testing.assert_allclose(np.asarray(jax.grad(loss)(x)), np.cos(x) * x + np.sin(x),
                             rtol=1e-5)


def test_shard_map_grad_of_replicated_argument_sums_over_devices():
  # d/dw sum(x * w) for w replicated: the sum over all rows of x.
  def loss(w):
    return smap(lambda b, v: b * v, (P("x", "y"), P()), P("x", "y"))(X, w).sum()
  g = jax.grad(loss)(np.ones((2,), np.float32))
  np.testing.assert_allclose(np.asarray(g), X.reshape(8, 2, 2).sum((0, 1)))


def test_shard_map_grad_matches_single_device_function():
  def sharded(a):
    y = smap(lambda b: jnp.tanh(b) * lax.pmean(b, ("x", "y")), P("x", "y"), P("x", "y"))(a)
    return (y ** 2).sum()

  def reference(a):
    mean = sum(b for row in blocks(a, 4, 2) for b in row) / 8
    return (jnp.tanh(a) * jnp.tile(mean, (4, 2))) ** 2

  x = X / 31
  want = jax.grad(lambda a: reference(a).sum())(x)
  np.testing.assert_allclose(np.asarray(jax.grad(sharded)(x)), np.asarray(want), rtol=1e-5)


def test_shard_map_jvp_matches_finite_differences():
  f = smap(lambda b: lax.psum(b * jnp.cos(b), "y"), P(None, "y"), P())
  x, t = X / 10, np.ones_like(X) / 7
  _, tangent = jax.jvp(f, (x,), (t,))
  eps = 1e-3
  fd = (np.asarray(f(x + eps * t), np.float64) - np.asarray(f(x - eps * t), np.float64)) / (
      2 * eps)
  np.testing.assert_allclose(np.asarray(tangent), fd, rtol=2e-2, atol=1e-3)


def test_shard_map_linearize_splits_known_and_staged_shard_maps():
  f = smap(lambda b: jnp.sin(b) * 2, P("x"), P("x"))
  y, f_lin = jax.linearize(f, X / 10)
  np.testing.assert_allclose(np.asarray(f_lin(np.ones_like(X))), 2 * np.cos(X / 10),
                             rtol=1e-6)


def test_shard_map_scalar_residuals_get_a_leading_axis():
  # sin(b.sum()) leaves rank-0 residuals per device, carried with a size-1 axis.
  def loss(a):
    return smap(lambda b: jnp.sin(b.sum()) * b, P("x"), P("x"))(a).sum()

  def reference(a):
    return sum((jnp.sin(a[2 * i:2 * i + 2].sum()) * a[2 * i:2 * i + 2]).sum() for i in range(4))

  x = X / 100
  np.testing.assert_allclose(np.asarray(jax.grad(loss)(x)), np.asarray(jax.grad(reference)(x)),
                             rtol=1e-5)


def test_shard_map_vmap_matches_loop():
  f = smap(lambda b: b * 2 + lax.psum(b, "y"), P("x", "y"), P("x", "y"))
  xs = np.arange(3 * 8 * 4, dtype=np.float32).reshape(3, 8, 4)
  out = jax.vmap(f)(xs)
  for i in range(3):
    np.testing.assert_allclose(np.asarray(out[i]), np.asarray(f(xs[i])))


def test_shard_map_vmap_spec_gets_unsplit_batch_dimension():
  f = smap(lambda b: b * 2, P("x", "y"), P("x", "y"), check_vma=False)
  jaxpr = jax.make_jaxpr(jax.vmap(f, in_axes=1, out_axes=2))(np.zeros((8, 3, 4), np.float32))
  assert "in_specs=(P('x', None, 'y'),)" in str(jaxpr)


def test_shard_map_vmap_with_axis_name_collective_inside_body():
  xs = np.arange(3 * 8 * 4, dtype=np.float32).reshape(3, 8, 4)
  f = smap(lambda b: lax.psum(b, ("x", "i")), P("x"), P(), check_vma=False)
  out = jax.vmap(f, axis_name="i")(xs)
  want = sum(np.split(xs.sum(0), 4))
  for i in range(3):
    np.testing.assert_allclose(np.asarray(out[i]), want)


# ----------------------------------------------------------------------------
# Printing, lowering, checks


def test_shard_map_check_vma_true_prints_vma_annotations():
  # As JAX: the body's argument varies along 'x' (`c:f32[2,4]{V:x}`), the psum's result not.
  text = str(jax.make_jaxpr(smap(lambda a: lax.psum(a, "x"), P("x"), P()))(X))
  assert "check_vma=True" in text and "psum[axes=('x',)" in text
  assert "c:f32[2,4]{V:x}" in text and "d:f32[2,4] = psum" in text
  text = str(jax.make_jaxpr(smap(lambda a: lax.psum(a, "x"), P("x"), P(), check_vma=False))(X))
  assert "{V:" not in text


def test_shard_map_lowering_emits_manual_computation_with_collective():
  text = jax.jit(smap(lambda a: lax.psum(a, "x"), P("x"), P())).lower(X).as_text()
  assert "sdy.mesh @mesh = <[\"x\"=4, \"y\"=2]>" in text
  start = text.index("sdy.manual_computation")
  assert "stablehlo.all_reduce" in text[start:] and "sdy.return" in text[start:]


def test_shard_map_size_one_manual_axes_lower_inline():
  mesh = jax.make_mesh((1, 8), ("a", "b"), axis_types=(AxisType.Auto, AxisType.Auto))
  f = jax.shard_map(lambda v: v * 2, mesh=mesh, in_specs=P("a"), out_specs=P("a"),
                    axis_names={"a"})
  assert "sdy.manual_computation" not in jax.jit(f).lower(X).as_text()
  np.testing.assert_array_equal(np.asarray(f(X)), X * 2)


def test_program_mesh_finds_nested_shard_map():
  from xjax._src.sharding import spmd
  f = jax.jit(lambda a: jax.jit(smap(lambda b: b + 1, P("x"), P("x")))(a) * 2)
  closed = jax.make_jaxpr(f)(X)
  assert spmd.program_mesh(closed) == MESH
  assert spmd.program_mesh(jax.make_jaxpr(jnp.sin)(X)) is None


def test_shard_map_vma_check_accepts_psum_result():
  smap(lambda a: lax.psum(a, "x") * 2 + 1, P("x"), P())(X)


def test_shard_map_vma_check_follows_nested_jit():
  smap(jax.jit(lambda a: lax.psum(a, "x")), P("x"), P())(X)


def test_shard_map_vma_check_rejects_varying_output():
  with pytest.raises(ValueError, match="out_specs is P\\(\\) which implies"):
    smap(lambda a: a * 2, P("x"), P())(X)


def test_shard_map_check_vma_false_skips_the_check():
  y = smap(lambda a: a[:1] * 0 + lax.axis_index("x"), P("x"), P(), check_vma=False)(X)
  assert y.shape == (1, 4)


def test_shard_map_unbound_axis_in_body_raises_name_error():
  with pytest.raises(NameError, match="z"):
    smap(lambda a: lax.psum(a, "z"), P("x"), P("x"))(X)


def test_shard_map_infer_needs_explicit_axes():
  with pytest.raises(TypeError, match="in_specs argument must be a pytree"):
    jax.shard_map(lambda a: a, mesh=MESH, out_specs=P())(X)


def test_shard_map_infer_takes_specs_from_argument_shardings():
  mesh = jax.make_mesh((4, 2), ("x", "y"))  # Explicit axes
  x = jax.device_put(X, NamedSharding(mesh, P("x")))
  seen = []
  y = jax.shard_map(lambda a: seen.append(a.shape) or a, mesh=mesh, out_specs=P("x"))(x)
  assert seen == [(2, 4)]
  np.testing.assert_array_equal(np.asarray(y), X)


def test_shard_map_does_not_import_jax():
  smap(lambda a: a, P("x"), P("x"))(X)
  assert "jax" not in sys.modules
