"""vmap: the API (in_axes/out_axes forms, keyword arguments, axis_size), its
compositions with jit, grad and itself, the higher-order primitives under it,
named axes and collectives, and the Jacobians built on it.

Every batched result is compared with a Python loop over the batch. JAX's
error messages are checked against real JAX in tests/golden; here the error
classes and the behaviour around them.
"""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
import xjax.test_util as jtu
from xjax import lax


def _rng(seed=0):
  return np.random.default_rng(seed)


def _loop(fun, args, in_axes, out_axis=0):
  """fun mapped by hand: slice each mapped argument, call, stack at out_axis."""
  size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
  outs = []
  for i in range(size):
    sliced = [a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)]
    outs.append(fun(*sliced))
  return xjax.tree.map(lambda *xs: np.stack([np.asarray(x) for x in xs], axis=out_axis), *outs)


# ----------------------------------------------------------------------------
# in_axes / out_axes


@pytest.mark.parametrize("in_axes", [0, 1, -1, (0, None), (None, 1), (1, 0), [0, -2]])
def test_in_axes_forms_match_loop(in_axes):
  x = _rng().normal(size=(3, 3)).astype(np.float32)
  y = _rng(1).normal(size=(3, 3)).astype(np.float32)
  fun = lambda a, b: jnp.sin(a) * b + a.sum()
  axes = in_axes if isinstance(in_axes, (tuple, list)) else (in_axes, in_axes)
  axes = [None if a is None else a % 2 for a in axes]
  jtu.assert_close(xjax.vmap(fun, in_axes=in_axes)(x, y), _loop(fun, [x, y], axes), rtol=1e-6)


@pytest.mark.parametrize("out_axes", [0, 1, 2, -1, -3])
def test_out_axes_places_the_batch_axis(out_axes):
  x = _rng().normal(size=(4, 2, 3)).astype(np.float32)
  out = xjax.vmap(lambda a: a * 2.0, out_axes=out_axes)(x)
  np.testing.assert_allclose(out, np.moveaxis(x * 2, 0, out_axes))


def test_pytree_in_axes_prefix_and_dicts():
  params = {"w": np.ones((3,), np.float32), "b": np.float32(1.0)}
  xs = {"a": np.arange(6, dtype=np.float32).reshape(2, 3),
        "c": np.arange(4, dtype=np.float32).reshape(2, 2)}
  fun = lambda p, x: (x["a"] * p["w"]).sum() + x["c"].sum() * p["b"]
  out = xjax.vmap(fun, in_axes=(None, {"a": 0, "c": 0}))(params, xs)
  expected = [fun(params, {"a": xs["a"][i], "c": xs["c"][i]}) for i in range(2)]
  np.testing.assert_allclose(out, np.array(expected))
  # A prefix: one axis for the whole dict.
  np.testing.assert_allclose(xjax.vmap(fun, in_axes=(None, 0))(params, xs), np.array(expected))


def test_pytree_out_axes_prefix():
  x = np.arange(6, dtype=np.float32).reshape(2, 3)
  out = xjax.vmap(lambda a: {"p": a, "q": (a, a * 2)}, out_axes={"p": 1, "q": 0})(x)
  np.testing.assert_allclose(out["p"], x.T)
  np.testing.assert_allclose(out["q"][1], x * 2)


def test_keyword_arguments_are_mapped_along_axis_0():
  x = np.arange(6, dtype=np.float32).reshape(3, 2)
  out = xjax.vmap(lambda a, scale: a * scale, in_axes=(1,))(x, scale=np.arange(2.0, dtype=np.float32))
  np.testing.assert_allclose(out, x.T * np.arange(2.0)[:, None])


def test_axis_size_without_mapped_arguments():
  out = xjax.vmap(lambda x: x + 1.0, in_axes=None, axis_size=4)(np.float32(2.0))
  np.testing.assert_allclose(out, np.full(4, 3.0))
  out = xjax.vmap(lambda: jnp.float32(7.0), axis_size=2)()
  np.testing.assert_allclose(out, [7.0, 7.0])


def test_unbatched_outputs_broadcast_and_out_axes_none_keeps_them():
  x, y = np.arange(3.0, dtype=np.float32), np.float32(5.0)
  a, b = xjax.vmap(lambda x, y: (x, y), in_axes=(0, None))(x, y)
  np.testing.assert_allclose(b, [5.0, 5.0, 5.0])
  a, b = xjax.vmap(lambda x, y: (x, y), in_axes=(0, None), out_axes=(0, None))(x, y)
  assert np.shape(b) == ()


def test_none_leaves_in_arguments_pass_through():
  out = xjax.vmap(lambda x, n: x if n is None else x * n)(np.ones(3, np.float32), None)
  np.testing.assert_allclose(out, np.ones(3))


def test_empty_batch():
  out = xjax.vmap(lambda x: x * 2.0)(np.zeros((0, 3), np.float32))
  assert out.shape == (0, 3)


# ----------------------------------------------------------------------------
# Errors


def test_error_classes():
  with pytest.raises(ValueError, match="inconsistent sizes"):
    xjax.vmap(lambda a, b: a + b)(jnp.ones(3), jnp.ones(4))
  with pytest.raises(ValueError, match="rank should be at least 2"):
    xjax.vmap(lambda a: a, in_axes=1)(jnp.ones(3))
  with pytest.raises(ValueError, match="tree prefix"):
    xjax.vmap(lambda t: t[0], in_axes=((0, 0, 0),))((jnp.ones(3), jnp.ones(3)))
  with pytest.raises(ValueError, match="out_axes"):
    xjax.vmap(lambda a: a, out_axes=None)(jnp.ones(3))
  with pytest.raises(TypeError, match="in_axes must be an int"):
    xjax.vmap(lambda a: a, in_axes=0.5)
  with pytest.raises(ValueError, match="axis_size must be specified"):
    xjax.vmap(lambda a: a, in_axes=None)(jnp.ones(3))
  with pytest.raises(xjax.errors.TracerBoolConversionError):
    xjax.vmap(lambda a: a if a > 0 else -a)(jnp.ones(3))


def test_python_control_flow_on_unbatched_values_works():
  # Only the batched values are abstract: an unmapped concrete value can be branched on.
  out = xjax.vmap(lambda x, flag: x * 2 if flag > 0 else x, in_axes=(0, None))(
      np.ones(3, np.float32), 1.0)
  np.testing.assert_allclose(out, [2.0, 2.0, 2.0])


def test_tracer_repr():
  seen = []
  xjax.vmap(lambda x: seen.append(repr(x + 1.0)) or x)(np.ones((3, 4), np.float32))
  assert seen == ["VmapTracer(aval=float32[4], batched=float32[3,4])"]


# ----------------------------------------------------------------------------
# Compositions


def _f(w, x):
  return jnp.tanh(jnp.dot(x, w)).sum() + (w ** 2).sum()


def test_vmap_of_grad_matches_loop():
  w = _rng().normal(size=(3,)).astype(np.float32)
  xs = _rng(1).normal(size=(5, 4, 3)).astype(np.float32)
  out = xjax.vmap(xjax.grad(_f), in_axes=(None, 0))(w, xs)
  jtu.assert_close(out, _loop(xjax.grad(_f), [w, xs], [None, 0]), rtol=1e-5)


def test_grad_of_vmap_matches_sum_of_grads():
  w = _rng().normal(size=(3,)).astype(np.float32)
  xs = _rng(1).normal(size=(5, 4, 3)).astype(np.float32)
  total = lambda w: xjax.vmap(_f, in_axes=(None, 0))(w, xs).sum()
  expected = sum(np.asarray(xjax.grad(_f)(w, x)) for x in xs)
  jtu.assert_close(xjax.grad(total)(w), expected, rtol=1e-5)


def test_jit_of_vmap_and_vmap_of_jit():
  x = _rng().normal(size=(4, 3)).astype(np.float32)
  fun = lambda a: jnp.exp(a) / jnp.sum(jnp.exp(a))
  expected = _loop(fun, [x], [0])
  jtu.assert_close(xjax.jit(xjax.vmap(fun))(x), expected, rtol=1e-6)
  jtu.assert_close(xjax.vmap(xjax.jit(fun))(x), expected, rtol=1e-6)


def test_vmap_of_vmap_and_in_axes_1():
  x = _rng().normal(size=(2, 3, 4)).astype(np.float32)
  fun = lambda a: jnp.sum(a ** 2)
  out = xjax.vmap(xjax.vmap(fun, in_axes=0), in_axes=1)(x)
  expected = np.array([[np.sum(x[i, j] ** 2) for i in range(2)] for j in range(3)])
  jtu.assert_close(out, expected, rtol=1e-5)


def test_per_example_gradients_jitted():
  def loss(params, x, y):
    w, b = params
    return (jnp.dot(x, w) + b - y) ** 2

  params = (_rng().normal(size=(3,)).astype(np.float32), np.float32(0.5))
  xs = _rng(1).normal(size=(8, 3)).astype(np.float32)
  ys = _rng(2).normal(size=(8,)).astype(np.float32)
  per_example = xjax.jit(xjax.vmap(xjax.grad(loss), in_axes=(None, 0, 0)))
  gw, gb = per_example(params, xs, ys)
  assert gw.shape == (8, 3) and gb.shape == (8,)
  for i in range(8):
    ew, eb = xjax.grad(loss)(params, xs[i], ys[i])
    jtu.assert_close(gw[i], ew, rtol=1e-5)
    jtu.assert_close(gb[i], eb, rtol=1e-5)


def test_seed_vmap_grad_of_step_and_sigmoid():
  # FAQ: jax.vmap(jax.grad(f)) of the step function is zero everywhere; the sigmoid's is not.
  f = lambda x: (x > 0).astype(float)
  df = xjax.vmap(xjax.grad(f))
  x = jnp.array([-1.0, -0.5, 0.0, 0.5, 1.0])
  assert f"f(x)  = {f(x)}" == "f(x)  = [0. 0. 0. 1. 1.]"
  assert f"df(x) = {df(x)}" == "df(x) = [0. 0. 0. 0. 0.]"
  g = lambda x: xjax.nn.sigmoid(x)
  dg = xjax.vmap(xjax.grad(g))
  x = jnp.array([-10.0, -1.0, 0.0, 1.0, 10.0])
  with np.printoptions(suppress=True, precision=2):
    assert f"g(x)  = {g(x)}" == "g(x)  = [0.   0.27 0.5  0.73 1.  ]"
    assert f"dg(x) = {dg(x)}" == "dg(x) = [0.   0.2  0.25 0.2  0.  ]"


def test_jvp_of_vmap_and_vmap_of_jvp():
  x = _rng().normal(size=(4, 3)).astype(np.float32)
  t = np.ones_like(x)
  fun = lambda a: jnp.sin(a) * a
  _, tan = xjax.jvp(xjax.vmap(fun), (x,), (t,))
  _, tan2 = xjax.vmap(lambda a, b: xjax.jvp(fun, (a,), (b,)))(x, t)
  expected = np.cos(x) * x + np.sin(x)
  jtu.assert_close(tan, expected, rtol=1e-5)
  jtu.assert_close(tan2, expected, rtol=1e-5)


# ----------------------------------------------------------------------------
# Higher-order primitives under vmap


def test_custom_jvp_under_vmap_and_its_derivatives():
  @xjax.custom_jvp
  def f(x):
    return jnp.sin(x)

  @f.defjvp
  def f_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return f(x), 10.0 * t  # deliberately not cos: proves the rule is used

  x = np.arange(3.0, dtype=np.float32)
  np.testing.assert_allclose(xjax.vmap(f)(x), np.sin(x), rtol=1e-6)
  np.testing.assert_allclose(xjax.vmap(xjax.grad(f))(x), [10.0] * 3)
  np.testing.assert_allclose(xjax.grad(lambda x: xjax.vmap(f)(x).sum())(x), [10.0] * 3)
  np.testing.assert_allclose(xjax.jacfwd(xjax.vmap(f))(x), 10.0 * np.eye(3))


def test_custom_vjp_under_vmap_and_its_gradients():
  @xjax.custom_vjp
  def f(x, y):
    return x * y

  def fwd(x, y):
    return x * y, (x, y)

  def bwd(res, g):
    x, y = res
    return (3.0 * g * y, 5.0 * g * x)  # scaled: proves the rule is used

  f.defvjp(fwd, bwd)
  xs = np.arange(1.0, 4.0, dtype=np.float32)
  y = np.float32(2.0)
  np.testing.assert_allclose(xjax.vmap(f, in_axes=(0, None))(xs, y), xs * 2)
  gx, gy = xjax.grad(lambda xs, y: xjax.vmap(f, in_axes=(0, None))(xs, y).sum(),
                     argnums=(0, 1))(xs, y)
  np.testing.assert_allclose(gx, 3.0 * y * np.ones(3))
  np.testing.assert_allclose(gy, 5.0 * xs.sum())  # the unmapped argument's cotangents are summed
  np.testing.assert_allclose(xjax.vmap(xjax.grad(f), in_axes=(0, None))(xs, y), [6.0] * 3)


def test_cond_with_batched_predicate_keeps_gradients_of_untaken_branches_out():
  # sqrt's derivative is inf at 0 and NaN below: only the members taking that
  # branch may see it (JAX guards the operands with stop_gradient).
  g = xjax.vmap(xjax.grad(lambda x: lax.cond(x > 0, jnp.sqrt, lambda x: x, x)))
  np.testing.assert_allclose(g(jnp.array([-1.0, 0.0, 4.0])), [1.0, 1.0, 0.25])


def test_checkpoint_under_vmap():
  fun = xjax.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
  x = np.arange(3.0, dtype=np.float32)
  jtu.assert_close(xjax.vmap(xjax.grad(fun))(x), np.cos(np.sin(x)) * np.cos(x), rtol=1e-6)
  jtu.assert_close(xjax.grad(lambda x: xjax.vmap(fun)(x).sum())(x),
                   np.cos(np.sin(x)) * np.cos(x), rtol=1e-6)


def test_nested_jit_with_closed_over_batched_value():
  xs = np.arange(3.0, dtype=np.float32)

  def outer(x):
    return xjax.jit(lambda y: y * x + 1.0)(np.float32(2.0))

  np.testing.assert_allclose(xjax.vmap(outer)(xs), xs * 2 + 1)


# ----------------------------------------------------------------------------
# Named axes and collectives


def test_collectives_match_numpy():
  x = _rng().normal(size=(4, 2)).astype(np.float32)

  def f(v):
    return (lax.psum(v, "i"), lax.pmean(v, "i"), lax.pmax(v, "i"), lax.pmin(v, "i"),
            lax.axis_index("i"), lax.all_gather(v, "i"))

  s, m, mx, mn, idx, gathered = xjax.vmap(f, axis_name="i")(x)
  jtu.assert_close(s, np.broadcast_to(x.sum(0), x.shape), rtol=1e-6)
  jtu.assert_close(m, np.broadcast_to(x.mean(0), x.shape), rtol=1e-6)
  np.testing.assert_array_equal(mx, np.broadcast_to(x.max(0), x.shape))
  np.testing.assert_array_equal(mn, np.broadcast_to(x.min(0), x.shape))
  np.testing.assert_array_equal(idx, np.arange(4))
  np.testing.assert_array_equal(gathered, np.broadcast_to(x, (4, 4, 2)))


def test_all_gather_axis_and_tiled():
  x = np.arange(6, dtype=np.float32).reshape(3, 2)
  out = xjax.vmap(lambda v: lax.all_gather(v, "i", axis=1), axis_name="i")(x)
  np.testing.assert_array_equal(out, np.broadcast_to(x.T, (3, 2, 3)))
  out = xjax.vmap(lambda v: lax.all_gather(v, "i", tiled=True), axis_name="i")(x)
  np.testing.assert_array_equal(out, np.broadcast_to(x.reshape(6), (3, 6)))


def test_psum_of_unmapped_values_and_python_scalars():
  out = xjax.vmap(lambda x: lax.psum(1, "i"), axis_name="i")(np.arange(3.0))
  np.testing.assert_array_equal(out, [3, 3, 3])
  out = xjax.vmap(lambda x, y: lax.psum(y, "i") + x, in_axes=(0, None), axis_name="i")(
      np.arange(3.0, dtype=np.float32), np.float32(2.0))
  np.testing.assert_allclose(out, [6.0, 7.0, 8.0])


def test_ppermute_full_and_partial():
  x = np.arange(3.0, dtype=np.float32)
  out = xjax.vmap(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)]), axis_name="i")(x)
  np.testing.assert_array_equal(out, [2.0, 0.0, 1.0])
  # A member no pair sends to receives zeros (JAX's documented semantics).
  out = xjax.vmap(lambda v: lax.ppermute(v, "i", [(0, 1)]), axis_name="i")(x + 1)
  np.testing.assert_array_equal(out, [0.0, 1.0, 0.0])
  out = xjax.vmap(lambda v: lax.ppermute(v, "i", [(2, 0)]), axis_name="i")(x)
  np.testing.assert_array_equal(out, [2.0, 0.0, 0.0])
  with pytest.raises(ValueError, match="unique"):
    xjax.vmap(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 1)]), axis_name="i")(x)
  with pytest.raises(TypeError):  # iterated as JAX does: its items (keys) are not pairs
    xjax.vmap(lambda v: lax.ppermute(v, "i", {0: 1}), axis_name="i")(x)
  # Any iterable of pairs, e.g. an (n, 2) NumPy array.
  out = xjax.vmap(lambda v: lax.ppermute(v, "i", np.array([[0, 2], [2, 1]])), axis_name="i")(x)
  np.testing.assert_array_equal(out, [0.0, 2.0, 0.0])


def test_nested_named_axes():
  x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
  inner = lambda y: (lax.psum(y, "i"), lax.psum(y, "j"), lax.psum(y, ("i", "j")))
  si, sj, sij = xjax.vmap(xjax.vmap(inner, axis_name="j"), axis_name="i")(x)
  np.testing.assert_allclose(si, np.broadcast_to(x.sum(0), x.shape))
  np.testing.assert_allclose(sj, np.broadcast_to(x.sum(1, keepdims=True), x.shape))
  np.testing.assert_allclose(sij, np.full(x.shape, x.sum()))
  idx = xjax.vmap(xjax.vmap(lambda y: lax.axis_index("i") * 10 + lax.axis_index("j"),
                            axis_name="j"), axis_name="i")(x)
  np.testing.assert_array_equal(idx, [[0, 1, 2], [10, 11, 12]])


def test_collectives_inside_jit_inside_vmap():
  x = np.arange(4.0, dtype=np.float32)
  f = xjax.jit(lambda v: v / lax.psum(v, "i"))
  np.testing.assert_allclose(xjax.vmap(f, axis_name="i")(x), x / x.sum(), rtol=1e-6)


def test_collective_gradients_follow_jax():
  x = np.arange(3.0, dtype=np.float32)
  # JAX 0.10.2: the transpose of psum over a named axis is a psum.
  np.testing.assert_allclose(xjax.vmap(xjax.grad(lambda v: lax.psum(v, "i")), axis_name="i")(x),
                             [3.0, 3.0, 3.0])
  np.testing.assert_allclose(
      xjax.vmap(xjax.grad(lambda v: lax.psum(v * v, "i")), axis_name="i")(x), [0.0, 6.0, 12.0])
  np.testing.assert_allclose(
      xjax.grad(lambda v: xjax.vmap(lambda y: lax.psum(y * y, "i"), axis_name="i")(v).sum())(x),
      [0.0, 6.0, 12.0])
  np.testing.assert_allclose(
      xjax.vmap(xjax.grad(lambda v: lax.all_gather(v, "i").sum()), axis_name="i")(x), [3.0] * 3)
  np.testing.assert_allclose(
      xjax.vmap(xjax.grad(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)])
                          * jnp.arange(3.0)[lax.axis_index("i")]), axis_name="i")(x),
      [1.0, 2.0, 0.0])


def test_unbound_axis_names_raise_name_error():
  with pytest.raises(NameError, match="unbound axis name: i"):
    lax.psum(jnp.ones(3), "i")
  with pytest.raises(NameError, match="unbound axis name: j"):
    xjax.vmap(lambda x: lax.psum(x, "j"), axis_name="i")(jnp.ones(3))
  with pytest.raises(NameError):
    lax.axis_index("i")
  with pytest.raises(ValueError, match="vmap has mapped output"):
    xjax.vmap(lambda a: a, out_axes=None, axis_name="i")(jnp.ones(3))


def test_make_jaxpr_axis_env():
  jaxpr = xjax.make_jaxpr(lambda x: lax.psum(x, "i"), axis_env=[("i", 4)])(np.ones(2, np.float32))
  assert "psum[axes=('i',) axis_index_groups=None]" in str(jaxpr)


# ----------------------------------------------------------------------------
# Jacobians on vmap


def _fun_tree(p):
  return {"y": jnp.sin(p["a"]) * p["b"][0], "z": jnp.sum(p["a"] ** 2) * p["b"]}


def _numeric_jacobian(fun, x, eps=1e-3):
  x = np.asarray(x, np.float64)
  cols = []
  for i in range(x.size):
    d = np.zeros(x.size)
    d[i] = eps
    hi = np.asarray(fun(np.float32(x + d.reshape(x.shape))), np.float64)
    lo = np.asarray(fun(np.float32(x - d.reshape(x.shape))), np.float64)
    cols.append((hi - lo) / (2 * eps))
  return np.moveaxis(np.array(cols), 0, -1).reshape(np.shape(fun(np.float32(x))) + x.shape)


@pytest.mark.parametrize("jac", [xjax.jacfwd, xjax.jacrev])
def test_jacobians_match_finite_differences(jac):
  x = _rng().normal(size=(2, 3)).astype(np.float32)
  fun = lambda a: jnp.tanh(a) @ np.ones((3, 4), np.float32) * a.sum()
  np.testing.assert_allclose(jac(fun)(x), _numeric_jacobian(fun, x), atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("jac", [xjax.jacfwd, xjax.jacrev])
def test_jacobians_of_pytrees(jac):
  p = {"a": np.arange(3.0, dtype=np.float32), "b": np.array([2.0, 3.0], np.float32)}
  J = jac(_fun_tree)(p)
  assert J["y"]["a"].shape == (3, 3) and J["y"]["b"].shape == (3, 2)
  assert J["z"]["a"].shape == (2, 3) and J["z"]["b"].shape == (2, 2)
  np.testing.assert_allclose(J["y"]["a"], np.diag(np.cos(p["a"]) * 2.0), rtol=1e-6, atol=1e-7)
  np.testing.assert_allclose(J["z"]["b"], np.eye(2) * 5.0, rtol=1e-6)


def test_jacobians_argnums_has_aux_and_hessian():
  f = lambda x, y: (jnp.sin(x) * y, {"aux": x.sum()})
  x, y = np.arange(3.0, dtype=np.float32), np.float32(2.0)
  for jac in (xjax.jacfwd, xjax.jacrev):
    (jx, jy), aux = jac(f, argnums=(0, 1), has_aux=True)(x, y)
    np.testing.assert_allclose(jx, np.diag(np.cos(x) * 2), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(jy, np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(aux["aux"], 3.0)
  h = xjax.hessian(lambda v: jnp.sum(v ** 3))(x)
  np.testing.assert_allclose(h, np.diag(6 * x), rtol=1e-6)


def test_jacobians_under_jit_and_vmap():
  xs = _rng().normal(size=(4, 3)).astype(np.float32)
  fun = lambda a: jnp.sin(a) * a.sum()
  batched = xjax.jit(xjax.vmap(xjax.jacrev(fun)))(xs)
  for i in range(4):
    jtu.assert_close(batched[i], xjax.jacfwd(fun)(xs[i]), rtol=1e-5, atol=1e-6)


def test_pargmax_pargmin_give_the_first_index_of_the_extremum():
  from xjax._src.lax import parallel
  x = np.array([[3, 1, 4], [1, 5, 9], [2, 6, 5], [3, 5, 9]], np.float32)
  amax = xjax.vmap(lambda v: parallel.pargmax(v, "i"), axis_name="i", out_axes=None)(x)
  amin = xjax.vmap(lambda v: parallel.pargmin(v, "i"), axis_name="i", out_axes=None)(x)
  np.testing.assert_array_equal(amax, x.argmax(0))
  np.testing.assert_array_equal(amin, x.argmin(0))
  with pytest.raises(TypeError, match="single axis"):
    xjax.vmap(lambda v: parallel.pargmax(v, ("i",)), axis_name="i")(x)


class _Boxed:
  """A non-pytree container that vmap maps through registered handlers."""

  def __init__(self, data, tag, get_idx=None):
    self.data, self.tag, self.get_idx = data, tag, get_idx


class _BoxSpec:
  def __init__(self, axis):
    self.axis = axis


def _box_to_elt(cont, get_idx, box, spec):
  axis = spec.axis if isinstance(spec, _BoxSpec) else spec
  return _Boxed(cont(box.data, axis), box.tag, get_idx)


def _box_from_elt(cont, size, box, spec):
  axis = spec.axis if isinstance(spec, _BoxSpec) else spec
  return _Boxed(cont(size, box.data, axis), box.tag + "!")


def test_register_vmappable_maps_custom_types_with_their_handlers():
  from xjax.interpreters import batching
  batching.register_vmappable(_Boxed, _BoxSpec, int, _box_to_elt, _box_from_elt, None)
  try:
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    f = lambda b: _Boxed(b.data * 2 + b.get_idx() - lax.axis_index("i") + b.get_idx(), b.tag)
    g = xjax.vmap(f, in_axes=_BoxSpec(1), out_axes=_BoxSpec(0), axis_name="i", axis_size=3)
    out = g(_Boxed(x, "t"))
    assert isinstance(out, _Boxed) and out.tag == "t!"
    np.testing.assert_array_equal(out.data, x.T * 2 + np.arange(3)[:, None])
    # Under jit the handlers bind their primitives into the jaxpr.
    np.testing.assert_array_equal(xjax.jit(lambda a: g(_Boxed(a, "t")).data)(x), out.data)
    # Plain int specs reach the handlers too; the axis size comes from `axis_size`.
    out = xjax.vmap(lambda b: b.data.sum(), axis_size=2)(_Boxed(x, "t"))
    np.testing.assert_array_equal(out, x.sum(1))
  finally:
    batching.unregister_vmappable(_Boxed)
  from xjax._src.interpreters import batching as batching_impl
  assert not batching_impl.is_vmappable(_Boxed(1, "t")) and _BoxSpec not in batching_impl.spec_types
  with pytest.raises(TypeError, match="in_axes must be"):
    xjax.vmap(lambda b: b, in_axes=_BoxSpec(0))


def test_vmap_docstring_and_in_axes_types():
  def superfun(a):
    """Does things with {stuff}."""
    return a

  doc = xjax.vmap(superfun).__doc__
  assert doc.startswith("Vectorized version of superfun. Takes similar arguments as superfun")
  assert doc.endswith("Original documentation:\n\nDoes things with {stuff}.")
  with pytest.raises(TypeError, match="vmap in_axes must be an int, None, or a tuple"):
    xjax.vmap(lambda x: x["a"], in_axes={"a": 0})  # a dict is not a tuple of entries


def test_grad_of_an_inner_grads_aux_and_jvp_tree_mismatch():
  def f(x):
    _, aux = xjax.grad(lambda x: (x ** 3, [x ** 3]), has_aux=True)(x)
    return aux[0]  # differentiable by the outer grad, as in JAX
  np.testing.assert_allclose(xjax.grad(f)(4.0), 48.0)
  np.testing.assert_allclose(xjax.jit(xjax.grad(xjax.jit(f)))(4.0), 48.0)
  with pytest.raises(TypeError, match="two-element tuple"):
    xjax.grad(lambda x: (1, 2, 3), has_aux=True)(1.0)
  with pytest.raises(TypeError, match="must have the same tree structure"):
    xjax.jvp(lambda x: x, (1.0,), [1.0])  # a tuple and a list differ, as in JAX
