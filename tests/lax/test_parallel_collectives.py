"""The named-axis collectives: values under vmap, derivatives, errors, and lowerings.

Values are checked against NumPy references (a vmap member is one row of the
input) and against real JAX's through tests/golden/parallel_collectives.json
(recorded by tools/golden_parallel.py, which also holds JAX's jaxprs and the
cross-device operations JAX lowers each collective to under shard_map on a
(4, 2) mesh). The lowering tests build a `ModuleContext` with an `AxisContext`
over a stub mesh and check the operations xjax's rules emit; running them on
8 devices is tests/multidevice's job.
"""
import json
import os
import re
import sys

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src import core
from xjax._src import stablehlo as hlo
from xjax._src import test_util as jtu
from xjax._src.interpreters import lowering
from xjax._src.lax import parallel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden"))
import mlir_ops  # noqa: E402  (shared with tools/golden_parallel.py)

GOLDEN_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "golden", "parallel_collectives.json")
with open(GOLDEN_PATH) as f:
  GOLDEN = json.load(f)


def _rng(seed=0):
  return np.random.default_rng(seed)


def _ints(shape, seed=0):
  """Small integers as float32: sums and means are exact."""
  return _rng(seed).integers(-4, 5, size=shape).astype(np.float32)


def _vmap(fun, x, in_axes=0, nested=False):
  if nested:
    return xjax.vmap(xjax.vmap(fun, axis_name="j"), axis_name="i", in_axes=in_axes)(x)
  return xjax.vmap(fun, axis_name="i", in_axes=in_axes)(x)


# ----------------------------------------------------------------------------
# NumPy references: `v` stacks the members' values on axis 0


def _ref_psum_scatter(v, dim, tiled):
  total = v.sum(0)
  n = v.shape[0]
  if tiled:
    return np.stack(np.split(total, n, axis=dim))
  return np.stack([np.take(total, m, axis=dim) for m in range(n)])


def _ref_all_to_all(v, split, concat, tiled):
  n = v.shape[0]
  out = []
  for m in range(n):
    chunks = [np.split(v[k], n, axis=split)[m] for k in range(n)]
    if tiled:
      out.append(np.concatenate(chunks, axis=concat))
    else:
      out.append(np.stack([np.squeeze(c, split) for c in chunks], axis=concat))
  return np.stack(out)


def _ref_ppermute(v, perm):
  out = np.zeros_like(v)
  for src, dst in perm:
    out[dst] = v[src]
  return out


# ----------------------------------------------------------------------------
# Values under vmap


@pytest.mark.parametrize("in_axes", [0, 1, 2])
@pytest.mark.parametrize("dim,tiled", [(0, False), (1, False), (0, True), (1, True)])
def test_psum_scatter_matches_numpy(in_axes, dim, tiled):
  shape = {(0, False): (4, 4, 3), (1, False): (4, 3, 4), (0, True): (4, 8, 3),
           (1, True): (4, 3, 8)}[dim, tiled]
  v = _ints(shape)
  x = np.moveaxis(v, 0, in_axes)
  out = _vmap(lambda a: lax.psum_scatter(a, "i", scatter_dimension=dim, tiled=tiled), x,
              in_axes)
  np.testing.assert_array_equal(out, _ref_psum_scatter(v, dim, tiled))


def test_psum_scatter_of_an_unmapped_value_scales_it():
  y = _ints((4, 3))
  out = xjax.vmap(lambda _, b: lax.psum_scatter(b, "i"), in_axes=(0, None),
                  axis_name="i")(np.zeros(4), y)
  np.testing.assert_array_equal(out, 4 * y)


@pytest.mark.parametrize("in_axes", [0, 2])
@pytest.mark.parametrize("split,concat,tiled", [
    (0, 0, False), (0, 1, False), (1, 0, False), (1, 1, False),
    (0, 0, True), (0, 1, True), (1, 0, True), (1, 1, True)])
def test_all_to_all_matches_numpy(in_axes, split, concat, tiled):
  shape = [4, 3, 5]
  shape[1 + split] = 8 if tiled else 4
  v = _ints(tuple(shape))
  x = np.moveaxis(v, 0, in_axes)
  out = _vmap(lambda a: lax.all_to_all(a, "i", split, concat, tiled=tiled), x, in_axes)
  np.testing.assert_array_equal(out, _ref_all_to_all(v, split, concat, tiled))


def test_pswapaxes_is_all_to_all_at_one_axis():
  v = _ints((3, 2, 3))
  out = _vmap(lambda a: lax.pswapaxes(a, "i", 1), v)
  np.testing.assert_array_equal(out, _ref_all_to_all(v, 1, 1, False))
  np.testing.assert_array_equal(out, np.swapaxes(v, 0, 2))


def test_pshuffle_gathers_from_sources():
  v = _ints((4, 2))
  out = _vmap(lambda a: lax.pshuffle(a, "i", [2, 0, 3, 1]), v)
  np.testing.assert_array_equal(out, v[[2, 0, 3, 1]])


@pytest.mark.parametrize("in_axes", [0, 1])
def test_ppermute_partial_matches_numpy(in_axes):
  v = _ints((5, 3))
  perm = [(0, 3), (4, 0), (2, 2)]
  out = _vmap(lambda a: lax.ppermute(a, "i", perm), np.moveaxis(v, 0, in_axes), in_axes)
  np.testing.assert_array_equal(out, _ref_ppermute(v, perm))


@pytest.mark.parametrize("in_axes", [0, 1])
def test_pbroadcast_copies_the_source(in_axes):
  v = _ints((4, 3))
  out = _vmap(lambda a: lax.pbroadcast(a, "i", 2), v.swapaxes(0, in_axes), in_axes)
  np.testing.assert_array_equal(out, np.broadcast_to(v[2], v.shape))
  # An unmapped value is the same everywhere already.
  out = xjax.vmap(lambda _, b: lax.pbroadcast(b, "i", 1), in_axes=(0, None),
                  axis_name="i")(np.zeros(4), v[0])
  np.testing.assert_array_equal(out, np.broadcast_to(v[0], v.shape))


def test_pcast_keeps_values_and_binds_pvary():
  v = _ints((4, 3))
  np.testing.assert_array_equal(_vmap(lambda a: lax.pcast(a, "i", to="varying"), v), v)
  jaxpr = xjax.make_jaxpr(lambda a: lax.pcast(a, ("i", "j"), to="varying"),
                          axis_env=[("i", 4), ("j", 2)])(v[0])
  assert "pvary[axes=('i', 'j')]" in str(jaxpr)
  assert lax.pcast(v, (), to="varying") is v  # no axes: nothing to cast


def test_axis_index_of_a_tuple_is_row_major():
  x = np.zeros((3, 4), np.float32)
  out = _vmap(lambda a: lax.axis_index(("i", "j")), x, nested=True)
  np.testing.assert_array_equal(out, np.arange(12).reshape(3, 4))
  out = _vmap(lambda a: lax.axis_index(("j", "i")), x, nested=True)
  np.testing.assert_array_equal(out, np.arange(12).reshape(4, 3).T)


def test_collectives_over_an_outer_name_pass_through():
  def inner(a):
    return (lax.psum_scatter(a, "i", tiled=True), lax.all_to_all(a, "i", 0, 0, tiled=True),
            lax.pbroadcast(a, "i", 1), lax.ppermute(a, "i", [(0, 1), (1, 2), (2, 0)]))

  v = _ints((3, 2, 6))  # i (outer) of size 3, j (inner) of size 2
  scatter, a2a, bcast, perm = _vmap(inner, v, nested=True)
  for j in range(2):
    np.testing.assert_array_equal(scatter[:, j], _ref_psum_scatter(v[:, j], 0, True))
    np.testing.assert_array_equal(a2a[:, j], _ref_all_to_all(v[:, j], 0, 0, True))
    np.testing.assert_array_equal(bcast[:, j], np.broadcast_to(v[1, j], (3, 6)))
    np.testing.assert_array_equal(perm[:, j], v[[2, 0, 1], j])


def test_psum_with_positional_and_named_axes():
  v = _ints((3, 2, 4))
  out = xjax.vmap(xjax.vmap(lambda a: lax.psum(a, ("i", "j")), axis_name="j"),
                  axis_name="i")(v)
  np.testing.assert_array_equal(out, np.broadcast_to(v.sum((0, 1)), v.shape))


def test_psum_of_booleans_counts_as_int32():
  out = _vmap(lambda a: lax.psum(a > 0, "i"), np.array([1.0, -1.0, 2.0], np.float32))
  assert out.dtype == np.int32
  np.testing.assert_array_equal(out, [2, 2, 2])


def test_collectives_under_jit_of_vmap():
  v = _ints((4, 4, 2))

  @xjax.jit
  def f(x):
    def member(a):
      return (lax.psum_scatter(a, "i"), lax.all_to_all(a, "i", 0, 1), lax.pbroadcast(a, "i", 3),
              lax.pshuffle(a, "i", [1, 2, 3, 0]), lax.axis_index(("i",)))
    return xjax.vmap(member, axis_name="i")(x)

  scatter, a2a, bcast, shuffled, idx = f(v)
  np.testing.assert_array_equal(scatter, _ref_psum_scatter(v, 0, False))
  np.testing.assert_array_equal(a2a, _ref_all_to_all(v, 0, 1, False))
  np.testing.assert_array_equal(bcast, np.broadcast_to(v[3], v.shape))
  np.testing.assert_array_equal(shuffled, v[[1, 2, 3, 0]])
  np.testing.assert_array_equal(idx, np.arange(4))


def test_vmap_of_jit_with_collectives():
  v = _ints((4, 16))
  f = xjax.jit(lambda a: lax.all_to_all(lax.psum_scatter(a, "i", tiled=True), "i", 0, 0,
                                        tiled=True))
  out = xjax.vmap(f, axis_name="i")(v)
  np.testing.assert_array_equal(out, _ref_all_to_all(_ref_psum_scatter(v, 0, True), 0, 0, True))


GOLDEN_VMAP = sorted(GOLDEN["vmap"])


@pytest.mark.parametrize("case_id", GOLDEN_VMAP)
def test_vmap_values_match_jax(case_id):
  case = GOLDEN["vmap"][case_id]
  fun = eval(case["fn"], {"lax": lax, "jax": xjax, "jnp": jnp})
  x = np.asarray(case["x"], np.float32)
  out = _vmap(fun, x, nested=case["nested"])
  if case["y"] is None:  # JAX's batching of the transposed all_to_all fails; NumPy instead
    assert case_id == "grad_all_to_all"
    # Member m's row k reaches member k at position m, weighted by k there.
    np.testing.assert_array_equal(out, np.broadcast_to(np.arange(3.0)[:, None, None], x.shape))
    return
  jtu.assert_close(out, np.asarray(case["y"], np.float32), rtol=1e-6)


# ----------------------------------------------------------------------------
# Derivatives


def _members_fn(fun):
  return lambda x: xjax.vmap(fun, axis_name="i")(x)


@pytest.mark.parametrize("name,fun,shape", [
    ("psum_scatter", lambda a: lax.psum_scatter(a, "i") ** 2, (4, 4, 2)),
    ("psum_scatter_tiled", lambda a: jnp.sin(lax.psum_scatter(a, "i", tiled=True)), (2, 4)),
    ("all_to_all", lambda a: lax.all_to_all(a, "i", 0, 1) ** 2, (3, 3, 2)),
    ("all_to_all_tiled", lambda a: jnp.sin(lax.all_to_all(a, "i", 1, 0, tiled=True)), (2, 3, 4)),
    ("pbroadcast", lambda a: lax.pbroadcast(a, "i", 1) * a, (3, 2)),
    ("pshuffle", lambda a: lax.pshuffle(a, "i", [1, 2, 0]) * a, (3, 2)),
    ("pcast", lambda a: jnp.sin(lax.pcast(a, "i", to="varying")), (3, 2)),
    ("all_gather_tiled", lambda a: lax.all_gather(a, "i", tiled=True) ** 2, (3, 2)),
])
def test_collective_derivatives_match_finite_differences(name, fun, shape):
  x = _rng(1).normal(size=shape).astype(np.float32)
  jtu.check_grads(_members_fn(fun), (x,), order=2, atol=3e-2, rtol=3e-2)


def test_pbroadcast_gradient_goes_to_the_source():
  v = _ints((4, 2))
  # Each member differentiates its own sum(pbroadcast(a) * a): the source also
  # receives every member's cotangent of the broadcast value.
  g = xjax.vmap(xjax.grad(lambda a: (lax.pbroadcast(a, "i", 2) * a).sum()), axis_name="i")(v)
  expected = np.broadcast_to(v[2], v.shape).copy()
  expected[2] += v.sum(0)
  np.testing.assert_array_equal(g, expected)


@pytest.mark.parametrize("fun,ct_shape", [
    (lambda a: lax.psum_scatter(a, "i", scatter_dimension=1), (4, 3)),
    (lambda a: lax.all_to_all(a, "i", 1, 0, tiled=True), (8, 1)),
    (lambda a: lax.all_gather(a, "i", axis=1), (3, 4, 4)),
])
def test_linear_collectives_transpose_is_adjoint(fun, ct_shape):
  # <ct, f(x)> == <f^T(ct), x>, summed over the members.
  x = _rng(2).normal(size=(4, 3, 4)).astype(np.float32)
  y, f_vjp = xjax.vjp(_members_fn(fun), x)
  ct = _rng(3).normal(size=y.shape).astype(np.float32)
  (x_ct,) = f_vjp(ct)
  np.testing.assert_allclose(np.vdot(ct, y), np.vdot(x_ct, x), rtol=1e-4)


def test_jvp_of_linear_collectives_applies_them_to_tangents():
  x, t = _ints((4, 4), 4), _ints((4, 4), 5)
  f = _members_fn(lambda a: lax.psum_scatter(a, "i") + lax.pbroadcast(a, "i", 0)[0])
  y, y_dot = xjax.jvp(f, (x,), (t,))
  np.testing.assert_array_equal(y, f(x))
  np.testing.assert_array_equal(y_dot, f(t))


# ----------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("call", [
    lambda x: lax.psum_scatter(x, "i"),
    lambda x: lax.all_to_all(x, "i", 0, 0),
    lambda x: lax.pswapaxes(x, "i", 0),
])
def test_eager_collectives_raise_jax_name_error(call):
  with pytest.raises(NameError, match="unbound axis name: i"):
    call(jnp.ones((4, 4)))


@pytest.mark.parametrize("call", [
    lambda x: lax.psum_scatter(x, "j"),
    lambda x: lax.all_to_all(x, "j", 0, 0),
])
def test_group_size_of_an_unbound_name_raises_jax_short_name_error(call):
  # JAX asks for the axis size first (a psum of 1), with the short message.
  with pytest.raises(NameError, match="^unbound axis name: j"):
    xjax.vmap(call, axis_name="i")(jnp.ones((4, 4)))


@pytest.mark.parametrize("call,prim", [
    (lambda x: lax.pbroadcast(x, "j", 0), "pbroadcast"),
    (lambda x: lax.pshuffle(x, "j", [0, 1, 2, 3]), "ppermute"),
    (lambda x: lax.pcast(x, "j", to="varying"), "pvary"),
    (lambda x: lax.axis_index(("i", "j")), "axis_index"),
])
def test_unbound_names_under_vmap_raise_jax_name_error(call, prim):
  with pytest.raises(NameError, match=re.escape(
      f"Found an unbound axis name: j. To fix this, please call {prim} under `jax.shard_map`.")):
    xjax.vmap(call, axis_name="i")(jnp.ones((4, 4)))


def test_primitives_without_a_binding_raise_when_evaluated():
  x = jnp.ones(4)
  with pytest.raises(NameError, match="unbound axis name: i"):
    parallel.reduce_scatter_p.bind(x, scatter_dimension=0, axis_name=("i",),
                                   axis_index_groups=None, axis_size=4, tiled=False)
  with pytest.raises(NameError, match="unbound axis name: i"):
    parallel.all_to_all_p.bind(x, split_axis=0, concat_axis=0, axis_name="i",
                               axis_index_groups=None, tiled=True)
  with pytest.raises(NameError, match="unbound axis name: i"):
    parallel.pbroadcast_p.bind(x, axis_name="i", source=0)
  with pytest.raises(ValueError, match="pvary should be called under jax.shard_map."):
    parallel.pvary_p.bind(x, axes=("i",))


def test_size_mismatches_raise_jax_value_errors():
  x = jnp.ones((4, 3))
  with pytest.raises(ValueError, match=re.escape(
      "all_to_all requires the size of the mapped axis axis_name to equal x.shape[split_axis], "
      "but they are 4 and 3 respectively.")):
    xjax.vmap(lambda a: lax.all_to_all(a, "i", 0, 0), axis_name="i")(x)
  with pytest.raises(ValueError, match=re.escape(
      "The size of all_to_all split_axis (3) has to be divisible by the size of the named "
      "axis i (4)")):
    xjax.vmap(lambda a: lax.all_to_all(a, "i", 0, 0, tiled=True), axis_name="i")(x)
  with pytest.raises(ValueError, match="reduce_scatter operand scatter dimension size 3 "
                                       "must match shard count 4"):
    xjax.vmap(lambda a: lax.psum_scatter(a, "i"), axis_name="i")(x)
  with pytest.raises(ValueError, match="tiled reduce_scatter operand scatter dimension size 3 "
                                       "must be divisible by shard_count 4"):
    xjax.vmap(lambda a: lax.psum_scatter(a, "i", tiled=True), axis_name="i")(x)


def test_bad_permutations_and_sources_raise():
  x = jnp.ones((4, 2))
  with pytest.raises(ValueError, match=re.escape(
      "`perm` does not represent a permutation: [0, 0, 1, 2]")):
    xjax.vmap(lambda a: lax.pshuffle(a, "i", [0, 0, 1, 2]), axis_name="i")(x)
  with pytest.raises(ValueError, match=re.escape("range [0, 4)")):
    xjax.vmap(lambda a: lax.ppermute(a, "i", [(0, 4)]), axis_name="i")(x)
  with pytest.raises(ValueError, match="out of range"):
    xjax.vmap(lambda a: lax.pbroadcast(a, "i", 4), axis_name="i")(x)


def test_pcast_argument_errors_follow_jax():
  x = jnp.ones((4, 2))
  with pytest.raises(TypeError, match=re.escape("axis_name={'i'} must be a tuple or a str.")):
    xjax.vmap(lambda a: lax.pcast(a, {"i"}, to="varying"), axis_name="i")(x)
  with pytest.raises(ValueError, match="Got unexpected `to` value. Allowed `to` values are:"):
    xjax.vmap(lambda a: lax.pcast(a, "i", to="foo"), axis_name="i")(x)
  with pytest.raises(NotImplementedError, match="reduced"):
    xjax.vmap(lambda a: lax.pcast(a, "i", to="reduced"), axis_name="i")(x)


def test_axis_index_groups_are_checked_and_refused_under_vmap():
  x = jnp.ones((4, 2))
  with pytest.raises(ValueError, match="axis_index_groups must cover all indices exactly once"):
    xjax.vmap(lambda a: lax.psum(a, "i", axis_index_groups=[[0, 1], [2, 2]]), axis_name="i")(x)
  with pytest.raises(NotImplementedError, match="axis_index_groups not supported in vmap"):
    xjax.vmap(lambda a: lax.psum(a, "i", axis_index_groups=[[0, 1], [2, 3]]), axis_name="i")(x)
  with pytest.raises(NotImplementedError, match="axis_index_groups not supported in vmap"):
    xjax.vmap(lambda a: lax.all_gather(a, "i", axis_index_groups=[[0, 1], [2, 3]]),
              axis_name="i")(x)
  with pytest.raises(ValueError, match="axis_index_groups only supported for sums over just "
                                       "named axes"):
    xjax.vmap(lambda a: lax.psum(a, ("i", 0), axis_index_groups=[[0, 1], [2, 3]]),
              axis_name="i")(x)


def test_axis_index_groups_set_the_group_size():
  jaxpr = xjax.make_jaxpr(lambda a: (lax.pmean(a, "x", axis_index_groups=[[0, 3], [1, 2]]),
                                     lax.psum_scatter(a, "x", axis_index_groups=[[0, 1], [2, 3]])),
                          axis_env=[("x", 4)])(np.ones(2, np.float32))
  text = str(jaxpr)
  assert "axis_index_groups=((0, 3), (1, 2))" in text
  assert "div b 2.0:f32[]" in text  # the mean over a group of 2
  assert "axis_size=2" in text


# ----------------------------------------------------------------------------
# Jaxprs against JAX's


GOLDEN_LOWERING = sorted(GOLDEN["lowering"])


def _golden_fun(case):
  return eval(case["fn"], {"lax": lax})


@pytest.mark.parametrize("case_id", GOLDEN_LOWERING)
def test_jaxpr_matches_jax(case_id):
  case = GOLDEN["lowering"][case_id]
  jaxpr = xjax.make_jaxpr(_golden_fun(case), axis_env=[("x", 4), ("y", 2)])(
      np.zeros(case["shape"], np.float32))
  assert str(jaxpr) == case["jaxpr"]


# ----------------------------------------------------------------------------
# Lowerings: a stub (4, 2) mesh


class _Mesh:
  """The parts of a Mesh the lowering rules read."""

  def __init__(self, shape: dict):
    self.axis_names = tuple(shape)
    self.shape = dict(shape)
    self.devices = np.arange(int(np.prod(list(shape.values())))).reshape(tuple(shape.values()))


MESH = _Mesh({"x": 4, "y": 2})


def _lower_body(fun, shape, mesh=MESH, axis_context=True, manual_axes=None):
  """The lines xjax emits for `fun`'s body, in a module whose axis context is `mesh`."""
  env = [(n, mesh.shape[n]) for n in mesh.axis_names]
  closed = xjax.make_jaxpr(fun, axis_env=env)(np.zeros(shape, np.float32))
  module = lowering.ModuleContext("test")
  if axis_context:
    module.axis_context = lowering.AxisContext(mesh, manual_axes or mesh.axis_names)
  ctx = lowering.LoweringContext(module)
  args = [lowering.Value(f"%arg{i}", hlo.aval_type(a)) for i, a in enumerate(closed.in_avals)]
  consts = [ctx.constant(np.asarray(c)) for c in closed.consts]
  lowering.lower_jaxpr_body(ctx, closed.jaxpr, consts, args)
  return "\n".join(ctx.lines)


@pytest.mark.parametrize("case_id", GOLDEN_LOWERING)
def test_lowering_emits_jax_collectives(case_id):
  case = GOLDEN["lowering"][case_id]
  text = _lower_body(_golden_fun(case), case["shape"])
  assert mlir_ops.collective_ops(text) == case["ops"], text


def test_all_reduce_region_combines_with_the_reduction():
  for name, op in [("psum", "add"), ("pmax", "maximum"), ("pmin", "minimum")]:
    text = _lower_body(lambda a: getattr(lax, name)(a, "y"), (3,))
    region = text[text.index("^bb0"):]
    assert f'"stablehlo.{op}"' in region and "tensor<f32>" in region, text


def test_reduce_scatter_untiled_reshapes_the_scattered_piece():
  text = _lower_body(lambda a: lax.psum_scatter(a, "x"), (4, 3))
  assert re.search(r'"stablehlo.reduce_scatter".*-> tensor<1x3xf32>', text, re.S)
  assert re.search(r'"stablehlo.reshape".*\(tensor<1x3xf32>\) -> tensor<3xf32>', text)


def test_all_gather_untiled_inserts_the_gathered_axis():
  text = _lower_body(lambda a: lax.all_gather(a, "y", axis=1), (2, 3))
  assert ('"stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0, 2>}> : '
          "(tensor<2x3xf32>) -> tensor<2x1x3xf32>") in text
  assert re.search(r'"stablehlo.all_gather".*\(tensor<2x1x3xf32>\) -> tensor<2x2x3xf32>', text)


def _ui32_constants(text):
  found = re.findall(r'value = dense<"0x([0-9A-F]{8})"> : tensor<ui32>', text)
  return [int.from_bytes(bytes.fromhex(h), "little") for h in found]


@pytest.mark.parametrize("name,stride,size", [("x", 2, 4), ("y", 1, 2)])
def test_axis_index_divides_and_wraps_the_partition_id(name, stride, size):
  text = _lower_body(lambda a: lax.axis_index(name), ())
  assert _ui32_constants(text) == [stride, size]
  assert re.search(r'"stablehlo.partition_id"\(\) : \(\) -> tensor<ui32>', text)
  assert '"stablehlo.divide"' in text and '"stablehlo.remainder"' in text
  assert re.search(r'"stablehlo.convert".*\(tensor<ui32>\) -> tensor<i32>', text)


def test_axis_index_in_a_partly_manual_body_nests_a_manual_computation():
  # XLA cannot partition a partition_id there: JAX computes it manual over the other axes.
  text = _lower_body(lambda a: lax.axis_index("x"), (), manual_axes={"x"})
  lines = text.splitlines()
  assert re.fullmatch(r'\s*%\d+ = sdy.manual_computation\(\) in_shardings=\[\] '
                      r'out_shardings=\[<@mesh, \[\]>\] manual_axes=\{"y"\} \(\) \{', lines[0])
  assert '"stablehlo.partition_id"' in lines[3] and '"sdy.return"' in lines[-2]
  assert lines[-1].strip() == "} : () -> tensor<i32>"
  assert _ui32_constants(text) == [2, 4]
  # Along a size-1 axis the index is 0, with no partition_id.
  text = _lower_body(lambda a: lax.axis_index("x"), (), _Mesh({"x": 1, "y": 2}),
                     manual_axes={"x"})
  assert "partition_id" not in text and 'dense<"0x00000000"> : tensor<i32>' in text


def test_pbroadcast_lowers_to_a_masked_all_reduce():
  text = _lower_body(lambda a: lax.pbroadcast(a, "x", 2), (3,))
  ops = mlir_ops.collective_ops(text)
  assert [op for op, _ in ops] == ["partition_id", "all_reduce"]
  assert ops[1][1]["replica_groups"] == "dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>"
  assert "comparison_direction EQ" in text and '"stablehlo.select"' in text


def test_pvary_lowers_to_nothing():
  text = _lower_body(lambda a: lax.pcast(a, "x", to="varying") * 2, (3,))
  assert "stablehlo.multiply" in text and len(text.splitlines()) == 3  # constant, bcast, mul


def test_collectives_over_a_size_one_group():
  mesh = _Mesh({"x": 1, "y": 2})
  text = _lower_body(lambda a: lax.all_to_all(a, "x", 0, 0, tiled=True), (2,), mesh)
  assert "all_to_all" not in text  # JAX skips an exchange among one member
  text = _lower_body(lambda a: lax.psum(a, "x"), (2,), mesh)
  assert "dense<[[0], [1]]> : tensor<2x1xi64>" in text


def test_named_collectives_without_an_axis_context_have_no_lowering():
  for fun, prim in [(lambda a: lax.psum(a, "x"), "psum"),
                    (lambda a: lax.all_gather(a, "x"), "all_gather"),
                    (lambda a: lax.psum_scatter(a, "x"), "reduce_scatter"),
                    (lambda a: lax.all_to_all(a, "x", 0, 0), "all_to_all"),
                    (lambda a: lax.ppermute(a, "x", [(0, 1)]), "ppermute"),
                    (lambda a: lax.pbroadcast(a, "x", 0), "pbroadcast"),
                    (lambda a: a + lax.axis_index("x"), "axis_index")]:
    with pytest.raises(NotImplementedError, match=f"Lowering rule for '{prim}' not implemented"):
      _lower_body(fun, (4,), axis_context=False)


def test_positional_psum_lowers_as_a_reduction_without_an_axis_context():
  module = lowering.ModuleContext("test")
  ctx = lowering.LoweringContext(module)
  ctx.avals_in = [core.ShapedArray((3, 4), np.dtype(np.float32))]
  ctx.avals_out = [core.ShapedArray((4,), np.dtype(np.float32))]
  (out,) = parallel.psum_p.lowering(ctx, lowering.Value("%a", "tensor<3x4xf32>"), axes=(0,),
                                    axis_index_groups=None)
  text = "\n".join(ctx.lines)
  assert '"stablehlo.reduce"' in text and "all_reduce" not in text
  assert out.type == "tensor<4xf32>"


def test_psum_with_positional_axes_reduces_locally_first():
  module = lowering.ModuleContext("test")
  module.axis_context = lowering.AxisContext(MESH, MESH.axis_names)
  ctx = lowering.LoweringContext(module)
  ctx.avals_in = [core.ShapedArray((3, 4), np.dtype(np.float32))]
  ctx.avals_out = [core.ShapedArray((4,), np.dtype(np.float32))]
  (out,) = parallel.psum_p.lowering(ctx, lowering.Value("%a", "tensor<3x4xf32>"),
                                    axes=("y", 0), axis_index_groups=None)
  text = "\n".join(ctx.lines)
  assert text.index('"stablehlo.reduce"') < text.index('"stablehlo.all_reduce"')
  assert re.search(r'"stablehlo.all_reduce".*\(tensor<4xf32>\) -> tensor<4xf32>', text, re.S)
  assert out.type == "tensor<4xf32>"


def test_ppermute_pairs_repeat_per_group_in_device_ids():
  mesh = _Mesh({"a": 2, "b": 3})
  text = _lower_body(lambda v: lax.ppermute(v, "a", [(1, 0)]), (2,), mesh)
  (op, attrs), = mlir_ops.collective_ops(text)
  assert attrs["source_target_pairs"] == (
      "dense<[[3, 0], [4, 1], [5, 2]]> : tensor<3x2xi64>")
