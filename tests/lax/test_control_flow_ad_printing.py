"""Printed jaxprs of derivatives of control flow (cond, switch, scan, while) against JAX 0.10.2.

The cases live in tools/golden_control_flow_ad.py (shared with the script that
records tests/golden/control_flow_ad.json from real JAX). Beside the exact texts:
values against finite differences, and the memory shape of scan's residuals.
"""
import importlib.util
import json
import os

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load_cases():
  path = os.path.join(REPO, "tools", "golden_control_flow_ad.py")
  spec = importlib.util.spec_from_file_location("golden_control_flow_ad", path)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module.cases(xjax, jnp, lax, np)


CASES = {c[0]: c for c in _load_cases()}
with open(os.path.join(REPO, "tests", "golden", "control_flow_ad.json")) as f:
  GOLDEN = json.load(f)["cases"]


def test_golden_file_is_current():
  assert set(CASES) == set(GOLDEN)


@pytest.mark.parametrize("case_id", sorted(GOLDEN))
def test_printed_jaxpr(case_id):
  _, fn, args = CASES[case_id]
  assert str(xjax.make_jaxpr(fn)(*args)) == GOLDEN[case_id]


def test_dce_rules_prune_inside_cond_and_scan():
  from xjax._src.interpreters import partial_eval as pe

  def f(p, x, xs):
    a, b = lax.cond(p, lambda x: (jnp.sin(x), jnp.cos(x)), lambda x: (x, x * 2.), x)
    (c, d), ys = lax.scan(lambda c, x: ((c[0] + x, c[1] * x), jnp.exp(x)), (a, b), xs)
    return c, ys

  jaxpr = xjax.make_jaxpr(f)(True, np.ones(3, np.float32), np.ones((4, 3), np.float32)).jaxpr
  dced, used = pe.dce_jaxpr(jaxpr, [True, False])
  assert used == [True, True, True]
  cond_eqn, scan_eqn = [e for e in dced.eqns if e.primitive.name in ("cond", "scan")]
  assert len(scan_eqn.outvars) == 1 and scan_eqn.params["num_carry"] == 1
  assert "exp" not in str(scan_eqn.params["jaxpr"]) and "mul" not in str(scan_eqn.params["jaxpr"])
  assert len(cond_eqn.outvars) == 1
  assert all("cos" not in str(b) and "mul" not in str(b) for b in cond_eqn.params["branches"])
  # the pruned program computes the same
  args = (True, np.arange(3, dtype=np.float32), np.ones((4, 3), np.float32))
  from xjax._src import core
  (full_c, _), pruned = f(*args), core.eval_jaxpr(dced, [], *args)
  np.testing.assert_allclose(pruned[0], full_c, rtol=1e-6)


# ----------------------------------------------------------------------------
# Values: every case's function differentiates correctly (finite differences),
# under jit as well, and the residual layouts round-trip through vmap.


def _diff_cases():
  """(case stem, f, float args) of each function the golden cases differentiate."""
  out = {}
  for case_id, fn, args in CASES.values():
    stem = case_id.rsplit("_", 1)[0]
    if stem in out or not all(np.asarray(a).dtype.kind == "f" for a in args):
      continue
    out[stem] = args
  return out


def _f64(args):
  return tuple(np.asarray(a, np.float32) for a in args)


F = {
    "cond_diff_res": lambda x: lax.cond(x.sum() > 0, lambda x: jnp.sin(x) * 2.,
                                        lambda x: jnp.exp(jnp.cos(x)), x),
    "cond_diff_res_false": lambda x: lax.cond(x.sum() < 0, lambda x: jnp.sin(x) * 2.,
                                              lambda x: jnp.exp(jnp.cos(x)), x),
    "switch_mixed": lambda x: sum(lax.switch(i, [
        lambda x: jnp.sin(x), lambda x: jnp.sum(jnp.cos(x)) * x,
        lambda x: jnp.exp(jnp.sum(x * x) / 10) * x], x) for i in range(3)),
    "scan_invariant": lambda w, c: lax.scan(lambda c, _: (c * jnp.sin(w), None), c, None,
                                            length=5)[0],
    "scan_mixed": lambda w, c, xs: lax.scan(
        lambda c, x: (jnp.tanh(jnp.cos(w) @ c + x) * jnp.sin(w[0]), (c * w[1], x * c)),
        c, xs),
    "scan_reverse": lambda w, c, xs: lax.scan(
        lambda c, x: (c * jnp.sin(w) + x, jnp.cos(w) * x), c, xs, reverse=True),
    "fori_static": lambda x: lax.fori_loop(0, 4, lambda i, c: jnp.sin(c) * i, x),
}
F_ARGS = {
    "cond_diff_res": (np.array([0.5, -0.2, 1.0], np.float32),),
    "cond_diff_res_false": (np.array([0.5, -0.2, 1.0], np.float32),),
    "switch_mixed": (np.array([0.5, -0.2, 1.0], np.float32),),
    "scan_invariant": (np.array([0.5, 1.2, -0.3], np.float32), np.ones(3, np.float32)),
    "scan_mixed": (np.array([[0.5, 0.1, 0.3], [0.2, -0.4, 0.6], [0.1, 0.2, 0.3]], np.float32),
                   np.array([0.1, 0.2, 0.3], np.float32),
                   np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)),
    "scan_reverse": (np.array([0.5, 1.2, -0.3], np.float32), np.ones(3, np.float32),
                     np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)),
    "fori_static": (np.array([0.5, 1.2, -0.3], np.float32),),
}


@pytest.mark.parametrize("name", sorted(F))
def test_derivatives_match_finite_differences(name):
  from xjax.test_util import check_grads
  check_grads(F[name], F_ARGS[name], order=2, modes=("fwd", "rev"), atol=3e-2, rtol=3e-2)
  check_grads(xjax.jit(F[name]), F_ARGS[name], order=1, modes=("fwd", "rev"),
              atol=3e-2, rtol=3e-2)


@pytest.mark.parametrize("name", sorted(F))
def test_linearize_and_vjp_agree(name):
  f, args = F[name], F_ARGS[name]
  out, f_jvp = xjax.linearize(f, *args)
  _, f_vjp = xjax.vjp(f, *args)
  tangents = tuple(np.cos(np.arange(np.size(a), dtype=np.float32)).reshape(np.shape(a))
                   for a in args)
  cts = xjax.tree_util.tree_map(lambda o: jnp.ones_like(o), out)
  lhs = sum(jnp.vdot(c, t) for c, t in zip(xjax.tree_util.tree_leaves(cts),
                                           xjax.tree_util.tree_leaves(f_jvp(*tangents))))
  rhs = sum(jnp.vdot(c, t) for c, t in zip(f_vjp(cts), tangents))
  np.testing.assert_allclose(lhs, rhs, rtol=1e-4)


def test_grad_of_vmapped_cond_and_vmap_of_grad():
  f = F["cond_diff_res"]
  xs = np.array([[0.5, -0.2, 1.0], [-1.0, -0.5, 0.2]], np.float32)
  g = xjax.grad(lambda x: jnp.sum(f(x)))
  per_row = np.stack([np.asarray(g(x)) for x in xs])
  np.testing.assert_allclose(xjax.vmap(g)(xs), per_row, rtol=1e-6)
  np.testing.assert_allclose(xjax.jit(xjax.vmap(g))(xs), per_row, rtol=1e-6)
  np.testing.assert_allclose(
      xjax.grad(lambda xs: jnp.sum(xjax.vmap(f)(xs)))(xs), per_row, rtol=1e-6)


def test_linearize_of_while_values():
  def f(x, n):
    return lax.fori_loop(0, n, lambda i, c: jnp.sin(c) * 2., x)
  x = np.array([0.5, 1.2, -0.3], np.float32)
  out, f_jvp = xjax.linearize(lambda x: f(x, 3), x)
  expected, expected_t = x, np.ones(3, np.float32)
  for _ in range(3):
    expected_t = expected_t * np.cos(expected) * 2
    expected = np.sin(expected) * 2
  np.testing.assert_allclose(out, expected, rtol=1e-6)
  np.testing.assert_allclose(f_jvp(np.ones(3, np.float32)), expected_t, rtol=1e-5)
  n = xjax.numpy.int32(3)
  out2, f_jvp2 = xjax.linearize(lambda x: f(x, n), x)
  np.testing.assert_allclose(f_jvp2(np.ones(3, np.float32)), expected_t, rtol=1e-5)


# ----------------------------------------------------------------------------
# Memory: the residuals of a scan's linearization


def _linear_jaxpr(f, *args):
  """The jaxpr of linearizing `f` at its first inputs and applying it to the others."""
  n = len(args)
  return xjax.make_jaxpr(lambda *a: xjax.linearize(f, *a[:n])[1](*a[n:]))(*args, *args).jaxpr


def _scans(jaxpr):
  return [e for e in jaxpr.eqns if e.primitive.name == "scan"]


def test_scan_loop_invariant_residual_is_not_stacked():
  # sin(W) and cos(W) are computed once, outside the loop, and read as consts by
  # both scans: nothing of W's shape is stacked `length` times.
  length, n = 50, 8
  w = np.linspace(0, 1, n * n, dtype=np.float32).reshape(n, n)
  c = np.ones(n, np.float32)
  f = lambda w, c: lax.scan(lambda c, _: (jnp.sin(w) @ c, None), c, None, length=length)[0]
  jaxpr = _linear_jaxpr(f, w, c)
  known, unknown = _scans(jaxpr)
  stacked = [v.aval.shape for v in known.outvars if v.aval.shape[:1] == (length,)]
  assert stacked == [(length, n)]  # only the carry, which varies per iteration
  assert [e.primitive.name for e in jaxpr.eqns[:2]] == ["sin", "cos"]
  # The unknown scan reads sin(W) and cos(W) as consts.
  assert unknown.params["num_consts"] == 3  # sin(W), cos(W), W's tangent
  # And the values are right.
  _, f_jvp = xjax.linearize(f, w, c)
  eps = 1e-3
  dw = np.cos(np.arange(n * n, dtype=np.float32)).reshape(n, n)
  fd = (f(w + eps * dw, c) - f(w - eps * dw, c)) / (2 * eps)
  np.testing.assert_allclose(f_jvp(dw, np.zeros(n, np.float32)), fd, rtol=2e-2, atol=2e-2)


def test_scan_forwarded_residuals_are_not_copied():
  # A residual that is a const or the current xs element is read from the
  # operand itself: the known scan has no stacked output for it.
  w = np.linspace(0, 1, 3, dtype=np.float32)
  xs = np.ones((6, 3), np.float32)
  f = lambda w, c, xs: lax.scan(lambda c, x: (c * w * x, None), c, xs)[0]
  jaxpr = _linear_jaxpr(f, w, np.ones(3, np.float32), xs)
  known, unknown = _scans(jaxpr)
  # Stacked residuals: the carry c and c * w; w and the xs element are forwarded.
  assert [v.aval.shape for v in known.outvars] == [(3,), (6, 3), (6, 3)]
  w_in, _, xs_in = jaxpr.invars[:3]
  assert w_in in unknown.invars[:unknown.params["num_consts"]]
  assert xs_in in unknown.invars[-3:]


def test_cond_residual_slots_are_shared_between_branches():
  # Branch 0 saves two f32[3] residuals, branch 1 one: two slots, not three.
  f = lambda x: lax.cond(x.sum() > 0, lambda x: jnp.sin(x) * 2.,
                         lambda x: jnp.exp(jnp.cos(x)), x)
  jaxpr = _linear_jaxpr(f, np.ones(3, np.float32))
  known = next(e for e in jaxpr.eqns if e.primitive.name == "cond")
  assert [v.aval.shape for v in known.outvars] == [(3,), (3,), (3,)]
  # The slot branch 1 does not fill holds an `empty2` placeholder.
  names = [e.primitive.name for e in known.params["branches"][1].jaxpr.eqns]
  assert "empty2" in names


def test_empty2_evaluates_and_compiles():
  from xjax._src import core
  from xjax._src.lax.control_flow import common
  aval = core.ShapedArray((2, 3), np.dtype(np.float32))
  value = common.empty_like(aval)
  assert value.shape == (2, 3) and value.dtype == np.float32
  jitted = xjax.jit(lambda: common.empty_like(aval))()
  assert jitted.shape == (2, 3)
  text = str(xjax.make_jaxpr(lambda: common.empty_like(aval))())
  assert "empty2[dtype=float32 memory_space=MemorySpace.Device]" in text
