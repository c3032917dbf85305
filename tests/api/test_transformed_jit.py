"""Transforming an already-jitted function, then jitting the result (issue 12).

`functools.wraps(jitted)(g)` copied the PjitFunction object's caches and function
onto `g`, so `jit(g)` ran the *inner* function: `jit(grad(jnp.sin))(0.5)`
returned sin(0.5).
"""
import functools

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp

W = np.array([1., 2., 3.], np.float32)
jitted_sumsq = xjax.jit(lambda w: jnp.sum(w ** 2))


def test_jit_of_grad_of_jnp_function_computes_the_derivative():
  np.testing.assert_allclose(xjax.jit(xjax.grad(jnp.sin))(0.5), np.cos(0.5), rtol=1e-6)


def test_six_nested_grads_of_sin_under_jit():
  f = jnp.sin
  for _ in range(6):
    f = xjax.grad(f)
  # d^6/dx^6 sin = -sin
  np.testing.assert_allclose(xjax.jit(f)(0.5), -np.sin(0.5), rtol=1e-5)


@pytest.mark.parametrize("transform, expected", [
    (xjax.grad, 2 * W),
    (lambda f: xjax.value_and_grad(f), (np.sum(W ** 2), 2 * W)),
    (lambda f: xjax.checkpoint(xjax.grad(f)), 2 * W),
    (xjax.jacfwd, 2 * W),
    (xjax.jacrev, 2 * W),
])
def test_jit_of_transformed_jitted_function(transform, expected):
  got = xjax.tree_util.tree_leaves(xjax.jit(transform(jitted_sumsq))(W))
  expected = xjax.tree_util.tree_leaves(expected)
  assert len(got) == len(expected)
  for g, e in zip(got, expected):
    np.testing.assert_allclose(g, e, rtol=1e-6)


def test_jit_of_vmap_of_jitted_function():
  xs = np.arange(6, dtype=np.float32).reshape(2, 3)
  np.testing.assert_allclose(xjax.jit(xjax.vmap(jitted_sumsq))(xs), np.sum(xs ** 2, axis=1))


def test_jit_of_function_wrapped_with_a_jitted_functions_metadata():
  cube_sum = functools.wraps(jitted_sumsq)(lambda w: jnp.sum(w ** 3))
  np.testing.assert_allclose(xjax.jit(cube_sum)(W), np.sum(W ** 3))
  assert cube_sum.__wrapped__ is jitted_sumsq


def test_wrapping_copies_no_jit_state():
  wrapped = functools.wraps(jitted_sumsq)(lambda w: w)
  assert not any(name.startswith("_") and not name.startswith("__") for name in vars(wrapped))
