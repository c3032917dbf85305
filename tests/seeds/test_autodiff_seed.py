"""The autodiff seeds: grad through Python control flow (Sharp Bits, 001), concrete
values under grad (FAQ 000/003), NaN gradients through `where` (FAQ 000/002), and
zero gradients of step functions (FAQ 002)."""
import numpy as np

import xjax as jax
import xjax.numpy as jnp
from xjax import grad, lax


def test_grad_through_python_control_flow_prints_seed_values(capsys):
  # Sharp Bits, "python control_flow + autodiff".
  def f(x):
    if x < 3:
      return 3. * x ** 2
    else:
      return -4 * x

  print(grad(f)(2.))  # ok!
  print(grad(f)(4.))  # ok!
  assert capsys.readouterr().out == "12.0\n-4.0\n"


def test_grad_of_cube_is_weakly_typed_like_jax():
  # JAX 0.10.2: jax.grad(lambda x: x ** 3)(2.) -> Array(12., dtype=float32, weak_type=True)
  g = jax.grad(lambda x: x ** 3)(2.)
  assert repr(g) == "Array(12., dtype=float32, weak_type=True)"


def test_grad_resolves_python_condition_on_concrete_tracer():
  # FAQ: jax.grad(divide)(3., 2.) works because grad uses concrete tracers.
  def divide(x, y):
    return x / y if y >= 1. else 0.

  assert float(jax.grad(divide)(3., 2.)) == 0.5
  assert float(jax.grad(divide, argnums=1)(3., 2.)) == -0.75


def test_grad_through_where_of_log_is_nan_at_zero():
  def my_log(x):
    return jnp.where(x > 0., jnp.log(x), 0.)

  assert float(my_log(0.)) == 0.
  assert np.isnan(float(jax.grad(my_log)(0.)))


def test_double_where_gives_finite_gradient():
  def safe_for_grad_log(x):
    return jnp.log(jnp.where(x > 0., x, 1.))

  assert float(safe_for_grad_log(0.)) == 0.
  assert float(jax.grad(safe_for_grad_log)(0.)) == 0.


def test_inner_where_keeps_gradient_of_the_other_branch():
  def my_log_or_y(x, y):
    """Return log(x) if x > 0 or y"""
    return jnp.where(x > 0., jnp.log(jnp.where(x > 0., x, 1.)), y)

  gx, gy = jax.grad(my_log_or_y, argnums=(0, 1))(0., 2.)
  assert (float(gx), float(gy)) == (0., 1.)
  gx, gy = jax.grad(my_log_or_y, argnums=(0, 1))(2., 5.)
  assert (float(gx), float(gy)) == (0.5, 0.)


def test_step_function_has_zero_gradient_and_sigmoid_does_not():
  # FAQ (current edition), without the vmap: df(x) = [0. 0. 0. 0. 0.],
  # dg(x) = [0.   0.2  0.25 0.2  0.  ] (printed with precision 2).
  def f(x):
    return (x > 0).astype(float)

  def g(x):
    return lax.logistic(x)  # jax.nn.sigmoid

  xs = [-1.0, -0.5, 0.0, 0.5, 1.0]
  assert [float(jax.grad(f)(x)) for x in xs] == [0.0] * 5
  dg = [float(jax.grad(g)(x)) for x in [-10.0, -1.0, 0.0, 1.0, 10.0]]
  np.testing.assert_allclose(dg, [0.0, 0.2, 0.25, 0.2, 0.0], atol=5e-3)
