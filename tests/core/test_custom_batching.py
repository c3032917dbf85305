"""custom_vmap and sequential_vmap against real JAX 0.10.2.

The golden cases (values, printed jaxprs and errors under jit, vmap, jvp, jacfwd,
grad and their compositions) are the code of tools/golden_custom_batching.py, run
here under xjax and compared with what real JAX recorded in
tests/golden/custom_batching.json. The tests below the golden ones check what a
golden file cannot hold: printed output, eager evaluation against NumPy, and
the rule being called (or not) with the right arguments.
"""
import importlib.util
import json
import os

import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import custom_batching as cb

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(REPO, "tests", "golden", "custom_batching.json")


def _load_tool():
  spec = importlib.util.spec_from_file_location(
      "golden_custom_batching", os.path.join(REPO, "tools", "golden_custom_batching.py"))
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


with open(GOLDEN) as _fh:
  RECORDED = json.load(_fh)["cases"]
CASES = _load_tool().cases(jax, jnp, cb)


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
  elif kind == "jaxpr":
    assert thunk() == want["text"]
  else:
    leaves, tree = jax.tree_util.tree_flatten(thunk())
    assert str(tree) == want["tree"]
    assert len(leaves) == len(want["leaves"])
    for leaf, expected in zip(leaves, want["leaves"]):
      assert isinstance(leaf, jax.Array)
      got = np.asarray(leaf)
      assert got.dtype.name == expected["dtype"]
      assert list(got.shape) == expected["shape"]
      assert leaf.weak_type == expected["weak_type"]
      np.testing.assert_allclose(got.ravel(), np.asarray(expected["values"], got.dtype),
                                 rtol=1e-6, atol=1e-6)


def test_sequential_vmap_docstring_prints_in_a_loop(capsys):
  @cb.sequential_vmap
  def f(x):
    jax.debug.print("{}", x)
    return x + 1

  out = jax.vmap(f)(jnp.arange(3))
  jax.effects_barrier()
  assert repr(out) == "Array([1, 2, 3], dtype=int32)"
  assert capsys.readouterr().out == "0\n1\n2\n"


def test_rule_sees_batch_axes_first_and_the_flags():
  seen = []

  @cb.custom_vmap
  def f(x, y):
    return x * y

  @f.def_vmap
  def rule(axis_size, in_batched, x, y):
    seen.append((axis_size, in_batched, x.shape, np.shape(y)))
    return x * y, True

  x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
  out = jax.vmap(f, in_axes=(1, None))(x, np.float32(2.0))
  assert seen == [(4, [True, False], (4, 3), ())]
  np.testing.assert_allclose(out, (x * 2).T)


def test_rule_is_not_called_without_vmap():
  calls = []

  @cb.custom_vmap
  def f(x):
    return jnp.sin(x)

  f.def_vmap(lambda *args: calls.append(args))
  x = np.linspace(-1, 1, 5, dtype=np.float32)
  np.testing.assert_allclose(f(x), np.sin(x), rtol=1e-6)
  np.testing.assert_allclose(jax.jit(f)(x), np.sin(x), rtol=1e-6)
  primal, tangent = jax.jvp(f, (x,), (np.ones_like(x),))
  np.testing.assert_allclose(tangent, np.cos(x), rtol=1e-6)
  assert calls == []


def test_vmap_of_jvp_differentiates_the_rule():
  """Under vmap, the tangent is the derivative of the rule, not of the function."""
  @cb.custom_vmap
  def f(x):
    return jnp.sin(x)

  f.def_vmap(lambda axis_size, in_batched, xs: (xs ** 3, in_batched[0]))
  x = np.linspace(-1, 1, 5, dtype=np.float32)
  primal, tangent = jax.vmap(lambda v: jax.jvp(f, (v,), (np.float32(1.0),)))(x)
  np.testing.assert_allclose(primal, x ** 3, rtol=1e-6)
  np.testing.assert_allclose(tangent, 3 * x ** 2, rtol=1e-6)


def test_jaxpr_has_one_custom_vmap_call_and_jit_lowers_it():
  @cb.custom_vmap
  def f(x):
    return jnp.exp(x) + 1.0

  f.def_vmap(lambda axis_size, in_batched, xs: (xs, True))
  closed = jax.make_jaxpr(f)(np.float32(1.0))
  assert [e.primitive.name for e in closed.jaxpr.eqns] == ["custom_vmap_call"]
  x = np.float32(0.25)
  np.testing.assert_allclose(jax.jit(f)(x), np.exp(x) + 1.0, rtol=1e-6)


def test_custom_vmap_keeps_the_function_metadata():
  def my_fun(x):
    """Doc of my_fun."""
    return x

  f = cb.custom_vmap(my_fun)
  assert f.__name__ == "my_fun" and f.__doc__ == "Doc of my_fun."
  rule = lambda axis_size, in_batched, x: (x, True)
  assert f.def_vmap(rule) is rule
  with pytest.raises(AttributeError):
    f.not_a_def_method
