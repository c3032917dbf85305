"""jax.custom_derivatives.linear_call: a linear function with a custom transpose.

Values are JAX 0.10.2's (its docstring examples, checked with real JAX)."""
from functools import partial

import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax.custom_derivatives import linear_call


def _f(r, x):
  return x / r


def _t(r, ct):
  return ct / r


def div_add(x, denom):
  return x + linear_call(_f, _t, denom, x)


def transpose(f, x_example):
  def transposed(y):
    x, = jax.linear_transpose(f, x_example)(y)
    return x
  return transposed


def custom_id(x):
  return linear_call(lambda _, x: x, lambda _, t: 7., (), x)


def test_jax_docstring_examples():
  assert div_add(9., 3.) == 12.0
  assert transpose(partial(div_add, denom=3.), 1.)(18.) == 24.0  # the custom transpose
  assert transpose(lambda x: x + x / 3., 1.)(18.) == 24.0         # the reference
  assert custom_id(1.) == 1.0
  assert transpose(custom_id, 1.)(1.) == 7.0
  assert transpose(transpose(custom_id, 1.), 1.)(1.) == 1.0       # fun is its transpose's
  assert transpose(transpose(transpose(custom_id, 1.), 1.), 1.)(1.) == 7.0


@pytest.mark.parametrize("wrap", [lambda f: f, jax.jit])
def test_differentiation_uses_the_custom_transpose(wrap):
  # The transpose of (x -> x / r) is given as (ct -> ct / r): grad and jvp agree with it.
  grad = wrap(jax.grad(lambda x: div_add(x, 3.)))
  np.testing.assert_allclose(grad(2.), 1 + 1 / 3, rtol=1e-6)
  primal, tangent = jax.jvp(lambda x: div_add(x, 3.), (2.,), (1.,))
  np.testing.assert_allclose((primal, tangent), (2 + 2 / 3, 1 + 1 / 3), rtol=1e-6)
  # A deliberately "wrong" transpose shows it is the one used, under jit too.
  weird = lambda x: linear_call(lambda r, x: x * r, lambda r, ct: ct * (r + 1), 2., x)
  np.testing.assert_allclose(wrap(jax.grad(weird))(5.), 3.0)
  np.testing.assert_allclose(wrap(weird)(5.), 10.0)


def test_pytrees_and_linearize():
  def f(r, xs):
    return {"sum": xs[0] * r["s"] + xs[1]}

  def t(r, ct):
    return (ct["sum"] * r["s"], ct["sum"])
  fn = lambda a, b: linear_call(f, t, {"s": 2.}, (a, b))["sum"]
  out, lin = jax.linearize(fn, jnp.ones(3), jnp.ones(3))
  np.testing.assert_allclose(out, 3 * np.ones(3))
  np.testing.assert_allclose(lin(jnp.ones(3), jnp.zeros(3)), 2 * np.ones(3))
  ga, gb = jax.grad(lambda a, b: fn(a, b).sum(), argnums=(0, 1))(jnp.ones(3), jnp.ones(3))
  np.testing.assert_allclose(ga, 2 * np.ones(3))
  np.testing.assert_allclose(gb, np.ones(3))


def test_printed_jaxpr():
  text = str(jax.make_jaxpr(lambda x: linear_call(_f, _t, 2., x))(1.))
  assert text.startswith("{ lambda ; a:f32[]. let\n    b:f32[] = linear_call[\n"
                         "      callee={ lambda ; c:f32[] d:f32[]. let e:f32[] = div d c in "
                         "(e,) }\n      num_callee_consts=0\n      num_res=1\n")


def test_errors_as_jax():
  with pytest.raises(ValueError, match=r"Expected cotangent type float32\[2\] but got "
                                       r"float32\[\]"):
    jax.grad(lambda x: jnp.sum(custom_id(x) * 2))(jnp.ones(2))
  bad = lambda x: linear_call(lambda r, x: x, lambda r, ct: (ct, ct), (), x)
  with pytest.raises(TypeError, match="transpose output pytree structure must match"):
    jax.grad(bad)(1.)
  with pytest.raises(NotImplementedError, match="Batching rule for 'linear_call'"):
    jax.vmap(lambda x: linear_call(_f, _t, 2., x))(jnp.ones(3))
  with pytest.raises(ValueError, match="residual_args are not differentiated"):
    jax.grad(lambda r: linear_call(_f, _t, r, 1.))(2.)
