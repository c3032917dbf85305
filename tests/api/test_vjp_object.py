"""The VJP object `jax.vjp` returns: args_res / opaque_residuals and with_refs (JAX 0.10.2's)."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax._src import api


def test_args_res_marks_the_inputs_the_backward_pass_reads():
  x, w = jnp.ones((3, 4)), jnp.arange(16.).reshape(4, 4)
  y, f_vjp = jax.vjp(lambda x, w: 2. * (x @ w), x, w)
  # d/dx needs w, d/dw needs x: both inputs are residuals, kept apart from the others.
  assert f_vjp.args_res[0] is x and f_vjp.args_res[1] is w
  ct = jnp.ones_like(y)
  expected = f_vjp(ct)
  # Dropped, then given back: the same cotangents.
  f_vjp.args_res[1] = None
  f_vjp.args_res[1] = w
  for got, want in zip(f_vjp(ct), expected):
    np.testing.assert_allclose(got, want)
  np.testing.assert_allclose(expected[1], 2. * x.T @ ct)
  with pytest.raises(ValueError, match="unexpected JAX type"):
    f_vjp(jnp.ones((2, 4)))


def test_unused_inputs_are_not_needed_and_opaque_residuals_are_listed():
  _, f_vjp = jax.vjp(jnp.sin, 3.)
  assert isinstance(f_vjp.args_res[0], api.NotNeeded)
  assert f_vjp.opaque_residuals  # cos(3.)
  np.testing.assert_allclose(f_vjp(1.)[0], np.cos(3.), rtol=1e-6)


def test_vjp_object_passes_through_jit():
  @jax.jit
  def g(x):
    return jax.vjp(lambda a: a * x, x)

  y, f_vjp = g(jnp.float32(3.))
  assert isinstance(f_vjp, api.VJP)
  np.testing.assert_allclose(jax.jit(lambda f: f(1.))(f_vjp)[0], 3.)


def test_with_refs_values_refs_and_unwanted_inputs():
  f = jax.jit(lambda x, y: x + y)
  x = jnp.arange(4.)
  _, f_vjp = jax.vjp(f, x, x)
  a, b = f_vjp.with_refs(jax.ad.DontWant(), jax.ad.DontWant())(jnp.ones(4))
  assert isinstance(a, jax.ad.DidntWant) and isinstance(b, jax.ad.DidntWant)
  ref = jax.new_ref(jnp.full(4, 10.))
  a, b = f_vjp.with_refs(ref, jax.ad.GradValue())(jnp.ones(4))
  assert isinstance(a, api.GradRef)
  np.testing.assert_allclose(ref[...], np.full(4, 11.))  # accumulated into the ref
  np.testing.assert_allclose(b, np.ones(4))


def test_with_refs_does_not_compute_unwanted_cotangents():
  x = jnp.arange(3.)
  z, f_vjp = jax.vjp(lambda x, y: x * y, x, x)
  f_vjp = f_vjp.with_refs(jax.ad.DontWant(), jax.ad.GradValue())
  ones = jnp.ones_like(z)
  g = jax.jit(lambda: f_vjp(ones))
  x_grad, y_grad = g()
  assert x_grad == jax.ad.DidntWant()
  np.testing.assert_allclose(y_grad, x)
  assert len(g.trace().jaxpr.eqns) == 1  # only y's cotangent, x * ct
