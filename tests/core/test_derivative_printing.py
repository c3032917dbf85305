"""Printed jaxprs of derivatives of `jit`, unused binders and PRNG keys, against JAX 0.10.2.

The cases live in tools/golden_derivative_printing.py (shared with the script that
records tests/golden/derivative_printing.json from real JAX). The transpose of a
jit is one `jit` equation keeping the function's name (as are its jvp and the
known and unknown halves of its partial evaluation). Beside the exact texts: the
values of those derivatives against the same functions without jit and against
finite differences, under jit, vmap and grad in several orders.

Key cases (``key_*``): typed keys print as JAX prints them, ``key<fry>[K]``
avals and the ``random_*`` equations on them; compared exactly like the others.
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
  path = os.path.join(REPO, "tools", "golden_derivative_printing.py")
  spec = importlib.util.spec_from_file_location("golden_derivative_printing", path)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module.cases(xjax, jnp, lax, np)


CASES = {c[0]: c for c in _load_cases()}
with open(os.path.join(REPO, "tests", "golden", "derivative_printing.json")) as f:
  GOLDEN = json.load(f)["cases"]


def test_golden_file_is_current():
  assert set(CASES) == set(GOLDEN)


@pytest.mark.parametrize("case_id", sorted(GOLDEN))
def test_printed_jaxpr(case_id):
  _, fn, args = CASES[case_id]
  assert str(xjax.make_jaxpr(fn)(*args)) == GOLDEN[case_id]


def _jit_eqns(jaxpr):
  return [e for e in jaxpr.eqns if e.primitive.name == "jit"]


def test_transpose_is_one_jit_equation_with_the_function_name():
  g = xjax.jit(lambda x: jnp.sin(x) * x)
  closed = xjax.make_jaxpr(xjax.grad(lambda x: g(x) * 2.))(np.float32(0.5))
  names = [e.params["name"] for e in _jit_eqns(closed.jaxpr)]
  assert names == ["<lambda>", "<lambda>"]
  backward = _jit_eqns(closed.jaxpr)[1]
  # residuals (cos x, x, sin x) then the cotangent
  assert len(backward.invars) == 4 and len(backward.outvars) == 1


# --- values: derivatives through jit equal those without it ----------------------

def _sin_x(x):
  return jnp.sin(x) * x


def _two_outputs(x, y):
  return jnp.sin(x) * y, jnp.exp(y) + x * 3.


def _loss(f):
  return lambda x, y: jnp.sum(f(x, y)[0] * 2. + f(x, y)[1])


X = np.linspace(0.1, 1.2, 4).astype(np.float32)
Y = np.linspace(-0.5, 0.7, 4).astype(np.float32)


@pytest.mark.parametrize("transform", ["grad", "jit_grad", "grad_jit", "vmap_grad",
                                       "grad_grad", "jit_vmap_grad"])
def test_grad_through_jit_matches_plain(transform):
  jitted = _loss(xjax.jit(_two_outputs))
  plain = _loss(_two_outputs)

  def build(f):
    if transform == "grad":
      return xjax.grad(f, argnums=(0, 1))
    if transform == "jit_grad":
      return xjax.jit(xjax.grad(f, argnums=(0, 1)))
    if transform == "grad_jit":
      return xjax.grad(xjax.jit(f), argnums=(0, 1))
    if transform == "vmap_grad":
      return xjax.vmap(xjax.grad(f, argnums=(0, 1)))
    if transform == "jit_vmap_grad":
      return xjax.jit(xjax.vmap(xjax.grad(f, argnums=(0, 1))))
    # grad of grad, summed
    return xjax.grad(lambda x, y: jnp.sum(xjax.grad(f)(x, y) ** 2), argnums=(0, 1))

  got = build(jitted)(X, Y)
  want = build(plain)(X, Y)
  for g, w in zip(got, want):
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


def test_vjp_of_jit_against_finite_differences():
  f = xjax.jit(_two_outputs)
  x, y = X[1], Y[2]
  (a, b), f_vjp = xjax.vjp(f, x, y)
  ct_a, ct_b = np.float32(0.7), np.float32(-1.3)
  gx, gy = f_vjp((ct_a, ct_b))
  eps = 1e-3

  def scalar(x, y):
    u, w = _two_outputs(np.float64(x), np.float64(y))
    return ct_a * float(u) + ct_b * float(w)
  fd_x = (scalar(x + eps, y) - scalar(x - eps, y)) / (2 * eps)
  fd_y = (scalar(x, y + eps) - scalar(x, y - eps)) / (2 * eps)
  np.testing.assert_allclose([float(gx), float(gy)], [fd_x, fd_y], rtol=2e-3)


def test_zero_and_integer_cotangents():
  h = xjax.jit(lambda a, b, n: (a * n + lax.stop_gradient(b), b * 0. + 1.))
  ga, gb = xjax.grad(lambda a, b: h(a, b, 3)[0] + h(a, b, 3)[1], argnums=(0, 1))(
      np.float32(2.), np.float32(5.))
  assert float(ga) == 3.0 and float(gb) == 0.0


def test_nested_jit_grad_values():
  f = xjax.jit(lambda b: jnp.sin(xjax.jit(jnp.cos)(b)))
  got = xjax.grad(f)(np.float32(0.3))
  want = -np.cos(np.cos(np.float32(0.3))) * np.sin(np.float32(0.3))
  np.testing.assert_allclose(float(got), want, rtol=1e-6)


def test_eager_grad_of_jit_reuses_the_transposed_jaxpr(monkeypatch):
  from xjax._src import jit_primitive
  traced = []
  original = jit_primitive._transpose_jaxpr
  monkeypatch.setattr(jit_primitive, "_transpose_jaxpr",
                      lambda *a: traced.append(1) or original(*a))
  g = xjax.jit(_sin_x)
  f = xjax.grad(lambda x: g(x) * 2.)
  first = float(f(np.float32(0.5)))
  second = float(f(np.float32(0.25)))
  np.testing.assert_allclose(first, 2 * (np.sin(0.5) + 0.5 * np.cos(0.5)), rtol=1e-6)
  np.testing.assert_allclose(second, 2 * (np.sin(0.25) + 0.25 * np.cos(0.25)), rtol=1e-6)
  assert len(traced) == 1


def test_linearize_of_jit_values():
  f = xjax.jit(_sin_x)
  y, f_jvp = xjax.linearize(f, X)
  np.testing.assert_allclose(np.asarray(y), np.sin(X) * X, rtol=1e-6)
  np.testing.assert_allclose(np.asarray(f_jvp(Y)), (np.cos(X) * X + np.sin(X)) * Y,
                             rtol=1e-5, atol=1e-6)


# --- random_wrap / random_unwrap: identities on key data -------------------------

RAW = np.array([[0, 42], [7, 9], [1, 2]], np.uint32)


@pytest.mark.parametrize("transform", ["eager", "jit", "vmap", "jit_vmap"])
def test_wrap_and_unwrap_keep_the_key_data(transform):
  random = xjax.random

  def typed(d):  # split through a typed key, back to data
    return random.key_data(random.split(random.wrap_key_data(d)))

  def raw(d):  # the same on raw keys
    return random.split(d)

  wrap = {"eager": lambda f: f, "jit": xjax.jit, "vmap": xjax.vmap,
          "jit_vmap": lambda f: xjax.jit(xjax.vmap(f))}[transform]
  data = RAW if "vmap" in transform else RAW[0]
  got = np.asarray(wrap(typed)(data))
  np.testing.assert_array_equal(got, np.asarray(wrap(raw)(data)))
  np.testing.assert_array_equal(np.asarray(wrap(lambda d: random.key_data(
      random.wrap_key_data(d)))(data)), data)


def test_raw_key_sampling_equals_typed():
  random = xjax.random
  a = random.normal(RAW[1], (3,))
  b = random.normal(random.wrap_key_data(RAW[1]), (3,))
  np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
  np.testing.assert_array_equal(np.asarray(random.PRNGKey(5)),
                                np.asarray(random.key_data(random.key(5))))
