"""checkpoint (remat) policies, checkpoint_name and print_saved_residuals against JAX 0.10.2.

The golden file (tools/golden_checkpoint.py) holds, for two functions with
dots, batch dots, sines and named values and for each policy, what real JAX's
`print_saved_residuals` prints (the residuals `vjp` saves, with their origin:
source positions refer to the functions' source, executed here as
"<ckpt_funs>" exactly as there) and the gradients.
"""
import contextlib
import io
import json
import pathlib

import numpy as np
import pytest

import xjax
import xjax.ad_checkpoint as ad_checkpoint
import xjax.numpy as jnp
from xjax import lax
from xjax._src import checkpoint as checkpoint_lib
from xjax.ad_checkpoint import checkpoint_name, print_saved_residuals

GOLDEN = json.loads((pathlib.Path(__file__).parent.parent / "golden" /
                     "checkpoint_policies.json").read_text())
cp = ad_checkpoint.checkpoint_policies
NS = dict(jax=xjax, jnp=jnp, lax=lax, checkpoint_name=checkpoint_name, cp=cp,
          ad_checkpoint=ad_checkpoint)
exec(compile(GOLDEN["source"], "<ckpt_funs>", "exec"), NS)
X = np.array(GOLDEN["x"], np.float32)
W = np.array(GOLDEN["w"], np.float32)
CASES = [pytest.param(f, p, id=f"{f}-{p[:60]}") for f in GOLDEN["cases"]
         for p in GOLDEN["policies"]]


def _saved(fun, *args):
  buf = io.StringIO()
  with contextlib.redirect_stdout(buf):
    print_saved_residuals(fun, *args)
  return buf.getvalue().splitlines()


def _offloaded_as_saved(lines):
  """JAX's offloaded residuals (``f32<host>[3,3] output of device_put``) as avals: xjax
  has one memory per device and saves them where they are."""
  return sorted(line.split(" ")[0].replace("<host>", "") for line in lines)


@pytest.mark.parametrize("fname,policy", CASES)
def test_saved_residuals_match_jax(fname, policy):
  expected = GOLDEN["cases"][fname][policy]["saved"]
  got = _saved(xjax.checkpoint(NS[fname], policy=eval(policy, NS)), X, W)
  if "offload" in policy:
    assert _offloaded_as_saved(got) == _offloaded_as_saved(expected)
    assert [l for l in got if "named 'a'" in l] == [l for l in expected if "named 'a'" in l]
  else:
    assert got == expected


@pytest.mark.parametrize("fname", list(GOLDEN["cases"]))
def test_saved_residuals_without_checkpoint_match_jax(fname):
  assert _saved(NS[fname], X, W) == GOLDEN["cases"][fname]["plain"]


@pytest.mark.parametrize("fname,policy", CASES)
def test_grads_match_jax_and_uncheckpointed_under_jit_and_vmap(fname, policy):
  fun = NS[fname]
  remat = xjax.checkpoint(fun, policy=eval(policy, NS))
  expected = [np.asarray(g, np.float32) for g in GOLDEN["cases"][fname][policy]["grad"]]
  plain = xjax.grad(fun, (0, 1))(X, W)
  for grads in (xjax.grad(remat, (0, 1))(X, W), xjax.jit(xjax.grad(remat, (0, 1)))(X, W)):
    for g, e, p in zip(grads, expected, plain):
      np.testing.assert_allclose(g, e, rtol=2e-5, atol=2e-6)
      np.testing.assert_allclose(g, p, rtol=2e-5, atol=2e-6)
  xs = np.stack([X, 0.5 * X, -X])
  batched = xjax.vmap(xjax.grad(remat), (0, None))(xs, W)
  batched_jit = xjax.jit(xjax.vmap(xjax.grad(remat), (0, None)))(xs, W)
  rowwise = np.stack([np.asarray(xjax.grad(fun)(x, W)) for x in xs])
  np.testing.assert_allclose(batched, rowwise, rtol=2e-5, atol=2e-6)
  np.testing.assert_allclose(batched_jit, rowwise, rtol=2e-5, atol=2e-6)
  grad_of_vmap = xjax.grad(lambda x: jnp.sum(xjax.vmap(remat, (0, None))(x, W)))(xs)
  np.testing.assert_allclose(grad_of_vmap, rowwise, rtol=2e-5, atol=2e-6)


def test_printed_jaxprs_match_jax():
  sin2 = lambda x: jnp.sin(jnp.sin(x)) * 2.0
  f = lambda x, y: jnp.sin(x) * y
  jaxprs = GOLDEN["jaxprs"]
  assert str(xjax.make_jaxpr(lambda x: checkpoint_name(x, "foo"))(1.0)) == \
      jaxprs["checkpoint_name"]
  assert str(xjax.make_jaxpr(xjax.checkpoint(sin2))(1.0)) == jaxprs["checkpoint"]
  assert str(xjax.make_jaxpr(xjax.checkpoint(sin2, policy=cp.dots_saveable,
                                             prevent_cse=False))(1.0)) == \
      jaxprs["checkpoint_dots_nocse"]
  assert str(xjax.make_jaxpr(xjax.checkpoint(f, prevent_cse=(True, False)))(1.0, 2.0)) == \
      jaxprs["checkpoint_cse_tuple"]
  assert str(xjax.make_jaxpr(xjax.grad(xjax.checkpoint(sin2)))(1.0)) == \
      jaxprs["grad_checkpoint"]
  lin = xjax.linearize(xjax.checkpoint(f, prevent_cse=(True, False)), 1.0, 2.0)[1]
  assert str(xjax.make_jaxpr(lin)(1.0, 2.0)) == jaxprs["linearize_cse_tuple"]


def _raise(thunk):
  with pytest.raises(Exception) as info:
    thunk()
  return [type(info.value).__name__, str(info.value)]


def test_errors_match_jax():
  f = NS["f"]
  errors = GOLDEN["errors"]
  both = cp.save_from_both_policies(cp.dots_saveable,
                                    cp.offload_dot_with_no_batch_dims("device", "pinned_host"))
  assert _raise(lambda: xjax.grad(xjax.checkpoint(f, policy=lambda *a, **k: 3))(X, W)) == \
      errors["policy_returns_int"]
  assert _raise(lambda: xjax.grad(xjax.checkpoint(f, policy=both))(X, W)) == \
      errors["both_policies_not_bool"]
  assert _raise(lambda: cp.save_and_offload_only_these_names(
      names_which_can_be_saved=["a"], names_which_can_be_offloaded=["a"],
      offload_src="device", offload_dst="pinned_host")) == errors["offload_names_intersect"]
  assert _raise(lambda: xjax.checkpoint(f, prevent_cse=3)) == errors["prevent_cse_int"]
  assert _raise(lambda: xjax.checkpoint(f, static_argnums=(5,))(X, W)) == \
      errors["static_argnums_range"]
  assert _raise(lambda: xjax.checkpoint(f, static_argnums=[1])(X, W)) == \
      errors["static_argnums_list"]
  assert _raise(lambda: xjax.checkpoint(f, concrete=True)) == errors["concrete"]
  assert _raise(lambda: ad_checkpoint.checkpoint) == errors["ad_checkpoint_checkpoint"]
  assert _raise(lambda: ad_checkpoint.remat) == errors["ad_checkpoint_remat"]


def test_policy_sees_primitive_avals_and_params():
  calls = []

  def policy(prim, *avals, **params):
    calls.append((prim.name, tuple(a.shape for a in avals), dict(params)))
    return prim.name == "name" and params["name"] == "a"

  lines = _saved(xjax.checkpoint(NS["f"], policy=policy), X, W)
  assert lines == GOLDEN["cases"]["f"]["cp.save_only_these_names('a')"]["saved"]
  assert ("name", ((3, 3),), {"name": "a"}) in calls
  dots = [c for c in calls if c[0] == "dot_general"]
  assert ((1, 3, 3), (1, 3, 3)) in [c[1] for c in dots]
  assert all("dimension_numbers" in c[2] for c in dots)


def test_static_argnums_and_prevent_cse_prefix():
  def f(x, n, scale):
    for _ in range(n):
      x = jnp.sin(x) * scale["s"]
    return x
  # As JAX: the prevent_cse prefix covers the non-static arguments only.
  g = xjax.checkpoint(f, static_argnums=1, prevent_cse=(True, {"s": False}))
  np.testing.assert_allclose(xjax.grad(g)(0.5, 3, {"s": 2.0}),
                             xjax.grad(lambda x: f(x, 3, {"s": 2.0}))(0.5), rtol=1e-6)
  text = str(xjax.make_jaxpr(lambda x, s: g(x, 2, {"s": s}))(0.5, 2.0))
  assert "prevent_cse=(True, False)" in text
  lin = xjax.linearize(lambda x, s: g(x, 2, {"s": s}), 0.5, 2.0)[1]
  assert "prevent_cse=(True, False, True, True)" in str(xjax.make_jaxpr(lin)(1.0, 1.0))
  with pytest.raises(ValueError):
    xjax.checkpoint(f, static_argnums=1, prevent_cse=(True, False, True))(0.5, 3, {"s": 2.0})


def test_recomputation_is_fenced_when_compiled():
  g = xjax.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
  hlo = xjax.jit(xjax.grad(g)).lower(1.0).as_text()
  assert "optimization_barrier" in hlo
  nocse = xjax.checkpoint(lambda x: jnp.sin(jnp.sin(x)), prevent_cse=False)
  assert "optimization_barrier" not in xjax.jit(xjax.grad(nocse)).lower(1.0).as_text()


def test_nested_checkpoint_and_jit_inside_follow_the_outer_policy():
  inner = xjax.jit(lambda x, w: jnp.sin(x @ w))

  def f(x, w):
    return jnp.sum(jnp.cos(xjax.checkpoint(lambda x: inner(x, w))(x)))
  # Nothing saveable: only the arguments are saved.
  assert _saved(xjax.checkpoint(f), X, W) == ["f32[3,3] from the argument x",
                                              "f32[3,3] from the argument w"]
  saved = _saved(xjax.checkpoint(f, policy=cp.dots_saveable), X, W)
  assert len(saved) == 3 and "output of dot_general" in saved[2]
  for policy in (None, cp.dots_saveable, cp.everything_saveable):
    np.testing.assert_allclose(xjax.grad(xjax.checkpoint(f, policy=policy), (0, 1))(X, W),
                               xjax.grad(f, (0, 1))(X, W), rtol=2e-5, atol=2e-6)


def test_checkpoint_name_is_the_identity_on_pytrees():
  tree = {"a": jnp.ones(2), "b": (1.0, jnp.zeros(3))}
  out = checkpoint_name(tree, "t")
  assert xjax.tree_util.tree_structure(out) == xjax.tree_util.tree_structure(tree)
  np.testing.assert_array_equal(out["a"], tree["a"])
  assert xjax.grad(lambda x: checkpoint_name(x, "n") * 3.0)(2.0) == 3.0
  np.testing.assert_array_equal(xjax.vmap(lambda x: checkpoint_name(x, "n"))(jnp.arange(3.0)),
                                np.arange(3.0))
  np.testing.assert_array_equal(xjax.jit(lambda x: checkpoint_name(x, "n"))(jnp.arange(3.0)),
                                np.arange(3.0))


def test_policies_namespace_is_jaxs():
  assert sorted(vars(cp)) == sorted([
      "everything_saveable", "nothing_saveable", "dots_saveable", "checkpoint_dots",
      "dots_with_no_batch_dims_saveable", "checkpoint_dots_with_no_batch_dims",
      "offload_dot_with_no_batch_dims", "save_anything_except_these_names",
      "save_any_names_but_these", "save_only_these_names", "save_from_both_policies",
      "save_and_offload_only_these_names"])
  assert cp.dots_saveable is cp.checkpoint_dots
  assert repr(cp.save_only_these_names("a")) == \
      "SaveOnlyTheseNames(saveable_names=frozenset({'a'}))"
  assert ad_checkpoint.Offloadable("device", "pinned_host").dst == "pinned_host"
  assert checkpoint_lib.checkpoint_policies is cp


def test_scan_inside_checkpoint_is_recomputed_not_saved():
  jax = xjax
  # A scan (or any higher-order equation) inside a checkpoint whose policy recomputes it
  # saves only its inputs: not the per-step residuals of its body, stacked per step.
  def inner(c):
    return jax.lax.scan(lambda c, _: (jnp.sin(c) * 1.1, None), c, None, length=3)[0]

  def outer(x, policy):
    step = jax.checkpoint(inner, policy=policy)
    return jax.lax.scan(lambda c, _: (step(c), None), x, None, length=4)[0].sum()

  x = jnp.ones(2)
  recomputed = str(jax.make_jaxpr(jax.grad(lambda x: outer(x, None)))(x))
  saved = str(jax.make_jaxpr(jax.grad(
      lambda x: outer(x, jax.checkpoint_policies.everything_saveable)))(x))
  assert "f32[4,3,2]" not in recomputed and "f32[4,2]" in recomputed
  assert "f32[4,3,2]" in saved
  expected = jax.grad(lambda x: outer(x, None))(x)
  np.testing.assert_allclose(jax.grad(lambda x: outer(x, jax.checkpoint_policies.everything_saveable))(x),
                             expected, rtol=1e-6)
  np.testing.assert_allclose(jax.jit(jax.grad(lambda x: outer(x, None)))(x), expected, rtol=1e-6)


def test_checkpoint_traces_once_per_signature_and_evaluates_op_by_op():
  from xjax import lax
  count = []

  @xjax.checkpoint
  def g(x, n):
    count.append(1)
    return lax.sin(x) * n

  for _ in range(5):
    g(2.0, 3.0)
  xjax.grad(lambda x: g(x, 3.0))(2.0)
  assert len(count) == 1  # one trace for the signature, as in JAX
  g(np.ones(2, np.float32), 3.0)
  assert len(count) == 2
  # Evaluated eagerly, equation by equation, each through its primitive's impl (a callable
  # even where the primitive has no rule of its own: the generic dispatch).
  calls = []
  impl = lax.sin_p.impl
  _, f_lin = xjax.linearize(xjax.checkpoint(lambda x: lax.sin(lax.sin(x))), 2.0)
  try:
    lax.sin_p.def_impl(lambda x, **kw: calls.append(1) or impl(x, **kw))
    f_lin(3.0)
  finally:
    lax.sin_p.def_impl(impl)
  assert len(calls) == 1 and lax.sin_p._impl is None  # the recomputed sin; generic again
