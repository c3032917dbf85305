"""custom_gradient, closure_convert, symbolic zeros, linear_transpose, fwd_and_bwd against JAX.

The golden cases (values and errors under jit, vmap, grad and their
compositions) are the code of tools/golden_custom_derivatives.py, run here
under xjax and compared with what real JAX 0.10.2 recorded in
tests/golden/custom_derivatives.json. The tests below the golden ones check
what a golden file cannot hold: the public module's names, finite
differences, and compile counts.
"""
import importlib.util
import json
import os
import types

import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import custom_derivatives as cd
from xjax._src import backend
from xjax._src.linear_transpose import fwd_and_bwd, linear_transpose

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(REPO, "tests", "golden", "custom_derivatives.json")
API = types.SimpleNamespace(linear_transpose=linear_transpose, fwd_and_bwd=fwd_and_bwd)


def _load_tool():
  spec = importlib.util.spec_from_file_location(
      "golden_custom_derivatives", os.path.join(REPO, "tools", "golden_custom_derivatives.py"))
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


with open(GOLDEN) as _fh:
  RECORDED = json.load(_fh)["cases"]
CASES = _load_tool().cases(jax, jnp, cd, API)


def test_every_case_is_recorded():
  assert sorted(case_id for case_id, _, _ in CASES) == sorted(RECORDED)


@pytest.mark.parametrize("case_id,kind,thunk", [pytest.param(*c, id=c[0]) for c in CASES])
def test_against_jax(case_id, kind, thunk):
  want = RECORDED[case_id]
  assert kind == want["kind"]
  if kind == "error":
    with pytest.raises(Exception) as info:
      thunk()
    assert type(info.value).__name__ == want["type"]
    assert str(info.value) == want["message"]
    return
  leaves, tree = jax.tree_util.tree_flatten(thunk())
  assert str(tree) == want["tree"]
  assert len(leaves) == len(want["leaves"])
  for leaf, expected in zip(leaves, want["leaves"]):
    assert isinstance(leaf, jax.Array)
    got = np.asarray(leaf)
    assert got.dtype.name == expected["dtype"]
    assert list(got.shape) == expected["shape"]
    assert leaf.weak_type == expected["weak_type"]
    values = np.asarray(expected["values"])
    if np.iscomplexobj(got):
      values = values[..., 0] + 1j * values[..., 1]
    np.testing.assert_allclose(got.ravel(), values.astype(got.dtype), rtol=1e-6, atol=1e-6)


JAX_CUSTOM_DERIVATIVES_NAMES = {
    "closure_convert", "custom_gradient", "custom_jvp", "custom_jvp_call_p", "custom_vjp",
    "custom_vjp_call_p", "custom_vjp_primal_tree_values", "CustomVJPPrimal", "SymbolicZero",
    "zero_from_primal"}


def test_public_module_names():
  # JAX's `jax.custom_derivatives` also has linear_call and remat_opt_p (not in xjax yet).
  assert JAX_CUSTOM_DERIVATIVES_NAMES <= set(dir(cd))


def test_symbolic_zero_forwards_aval_attributes():
  z = cd.SymbolicZero.from_primal_value(jnp.ones((2, 3), jnp.int32))
  assert (z.shape, z.ndim, z.dtype, repr(z)) == ((2, 3), 2, jax.dtypes.float0, "SymbolicZero")
  assert cd.CustomVJPPrimal(1.0, True) == cd.CustomVJPPrimal(1.0, True)


def _fd(f, x, eps=1e-3):
  return (f(x + eps) - f(x - eps)) / (2 * eps)


def test_custom_gradient_second_order_against_finite_differences():
  @cd.custom_gradient
  def f(x):
    # The rule closes over cos(x): its own derivative (-sin) drives the second order.
    c = jnp.cos(x)
    return jnp.sin(x), lambda g: (g * c,)

  for order in (jax.grad, lambda h: jax.jit(jax.grad(h))):
    g = order(f)
    gg = jax.grad(g)
    np.testing.assert_allclose(g(0.7), np.cos(0.7), rtol=1e-6)
    np.testing.assert_allclose(gg(0.7), _fd(lambda x: np.cos(x), 0.7), rtol=1e-3)
  np.testing.assert_allclose(jax.vmap(jax.grad(jax.grad(f)))(jnp.array([0.1, 0.7])),
                             -np.sin([0.1, 0.7]), rtol=1e-6)


def test_linear_transpose_matches_vjp_on_a_random_linear_map():
  rng = np.random.default_rng(0)
  m = rng.normal(size=(4, 3)).astype(np.float32)
  f = lambda x: {"y": jnp.dot(m, x["a"]) * 2.0, "z": x["b"][::-1]}
  primals = {"a": jnp.ones(3), "b": jnp.ones(2)}
  ct = {"y": jnp.asarray(rng.normal(size=4), jnp.float32), "z": jnp.array([1.0, 5.0])}
  (got,) = linear_transpose(f, primals)(ct)
  _, pullback = jax.vjp(f, primals)
  (want,) = pullback(ct)
  for k in ("a", "b"):
    np.testing.assert_allclose(got[k], want[k], rtol=1e-5)


def test_fwd_and_bwd_compiles_each_pass_once(monkeypatch):
  count = [0]
  compile_module = backend.compile_module

  def counting(*args, **kwargs):
    count[0] += 1
    return compile_module(*args, **kwargs)

  xs = [jnp.full((2, 2), float(i)) for i in range(3)]
  w, ct = jnp.full((2, 2), 2.0), jnp.ones((2, 2))
  fwd, bwd = fwd_and_bwd(lambda x, w: jnp.sin(x) @ w, argnums=(0, 1))
  monkeypatch.setattr(backend, "compile_module", counting)
  for i, x in enumerate(xs):
    _, res = fwd(x, w)
    gx, gw = bwd(res, ct)
    np.testing.assert_allclose(gx, np.cos(float(i)) * 4.0 * np.ones((2, 2)), rtol=1e-6)
    np.testing.assert_allclose(gw, np.sin(float(i)) * 2.0 * np.ones((2, 2)), rtol=1e-6)
  assert count[0] == 2


def test_nondiff_argnames_name_the_nondiff_positions():
  def apply(fn, x):
    return fn(x)

  f = jax.custom_jvp(apply, nondiff_argnames=("fn",))
  f.defjvp(lambda fn, p, t: (fn(p[0]), 3.0 * t[0]))
  g = jax.custom_vjp(apply, nondiff_argnames=("fn",))
  g.defvjp(lambda fn, x: (fn(x), None), lambda fn, _, ct: (5.0 * ct,))
  assert f.nondiff_argnums == g.nondiff_argnums == (0,)
  np.testing.assert_allclose(jax.grad(lambda x: f(jnp.sin, x))(1.0), 3.0)
  np.testing.assert_allclose(jax.grad(lambda x: g(jnp.sin, x))(1.0), 5.0)


def test_custom_jvp_on_intermediate_under_jit_leaks_no_tracer():
  # numpyro's TruncatedNormal.log_prob: a custom_jvp function (jax.nn.softplus, logaddexp's
  # kind) applied to a value computed inside jit; the staged equation's JVP rule must not
  # keep the argument tracers alive, or check_tracer_leaks reports them after the trace.
  @jax.custom_jvp
  def softplus(x):
    return jnp.logaddexp(x, 0.0)

  softplus.defjvp(lambda primals, tangents: (softplus(primals[0]),
                                             jax.nn.sigmoid(primals[0]) * tangents[0]))

  def f(x):
    return softplus(jnp.sin(x) * 2.0)

  with jax.check_tracer_leaks():
    np.testing.assert_allclose(jax.jit(f)(1.0), np.logaddexp(0, np.sin(1.0) * 2), rtol=1e-6)
