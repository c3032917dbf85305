"""`xjax.experimental.bounded_while_loop` (issue 21, beyond JAX): forward values
against `lax.while_loop`, derivatives against finite differences and against a
fixed-count `lax.fori_loop`, the O(sqrt(max_steps)) residuals of the
checkpointed form (read from the jaxpr of the gradient), the max_steps error
eagerly and under jit, and vmap with a different trip count per element."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src import backend
from xjax._src import core
from xjax._src.config import enable_x64
from xjax.experimental import bounded_while_loop
from xjax.test_util import check_grads


def _close(a, b, tol=1e-5):
  np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def _cond(s):
  return s[1] < s[2]


def _body(s):
  x, i, n = s
  return x * 1.05 + 0.1 * jnp.sin(x), i + 1, n


def _loop(x, trips, max_steps, checkpoint=True):
  """`bounded_while_loop` running `trips` iterations of `_body` on `x`."""
  return bounded_while_loop(_cond, _body, (x, 0, trips), max_steps, checkpoint=checkpoint)[0]


def _fori(x, trips):
  return lax.fori_loop(0, trips, lambda i, x: _body((x, 0, 0))[0], x)


# ----------------------------------------------------------------------------
# Forward values


@settings(max_examples=12, deadline=None)
@given(max_steps=st.integers(0, 40), frac=st.floats(0, 1), checkpoint=st.booleans())
def test_forward_equals_while_loop_for_sampled_trip_counts(max_steps, frac, checkpoint):
  trips = int(frac * max_steps)
  init = (jnp.array([0.3, -1.2], jnp.float32), 0, trips)
  got = bounded_while_loop(_cond, _body, init, max_steps, checkpoint=checkpoint)
  want = lax.while_loop(_cond, _body, init)
  for g, w in zip(got, want):
    np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
  assert int(got[1]) == trips


@pytest.mark.parametrize("checkpoint", [True, False])
def test_forward_data_dependent_condition_pytree_carry(checkpoint):
  # Newton's iteration for sqrt(a), stopping on the residual: the trip count
  # comes from the data; the carry is a dict with an int counter.
  cond = lambda c: jnp.abs(c["x"] * c["x"] - c["a"]) > 1e-5 * c["a"]
  body = lambda c: {"x": 0.5 * (c["x"] + c["a"] / c["x"]), "a": c["a"], "k": c["k"] + 1}
  for a in [2.0, 10.0, 1e4]:
    init = {"x": jnp.float32(a), "a": jnp.float32(a), "k": jnp.int32(0)}
    got = bounded_while_loop(cond, body, init, 30, checkpoint=checkpoint)
    want = lax.while_loop(cond, body, init)
    assert int(got["k"]) == int(want["k"]) > 0
    np.testing.assert_array_equal(np.asarray(got["x"]), np.asarray(want["x"]))
    jitted = xjax.jit(lambda c: bounded_while_loop(cond, body, c, 30, checkpoint=checkpoint))
    np.testing.assert_array_equal(np.asarray(jitted(init)["x"]), np.asarray(want["x"]))


def test_weak_typed_init_is_promoted_as_while_loop():
  cond, body = lambda x: x < 3, lambda x: x + jnp.float32(1.5)
  got = bounded_while_loop(cond, body, 0, 5)
  want = lax.while_loop(cond, body, 0)
  assert got.dtype == want.dtype == np.float32
  _close(got, want)


def test_closed_over_tracer_and_zero_trip_loop():
  f = xjax.jit(lambda x, lim: bounded_while_loop(lambda c: c < lim, lambda c: c * x, 1.0, 10))
  _close(f(2.0, 100.0), 128.0)
  _close(f(2.0, 0.5), 1.0)  # cond false at once: init returned
  assert float(bounded_while_loop(lambda c: c > 1, lambda c: c + 1, 0.0, 0)) == 0.0


# ----------------------------------------------------------------------------
# Errors


def _message(fn):
  with pytest.raises(TypeError) as info:
    fn()
  return str(info.value)


@pytest.mark.parametrize("cond,body,init", [
    (lambda x: x, lambda x: x + 1, 1.0),                          # cond not boolean
    (lambda x: (x < 1, x < 2), lambda x: x + 1, 1.0),             # cond returns a pytree
    (lambda x: x[0] < 1, lambda x: (x[0] + 1,), (1, 2)),          # body changes structure
    (lambda x: x < 10, lambda x: x + 1.5, jnp.int32(0)),          # body changes dtype
    (lambda x: x.sum() < 1, lambda x: x[:1], jnp.zeros(2)),       # body changes shape
])
def test_bad_loops_raise_while_loops_errors(cond, body, init):
  want = _message(lambda: lax.while_loop(cond, body, init))
  assert _message(lambda: bounded_while_loop(cond, body, init, 4)) == want


def test_bad_arguments():
  with pytest.raises(TypeError, match="should be callable"):
    bounded_while_loop(None, lambda x: x, 1.0, 3)
  with pytest.raises(ValueError, match="non-negative, got -1"):
    bounded_while_loop(lambda x: x < 1, lambda x: x + 1, 0.0, -1)
  with pytest.raises(TypeError, match="static Python integer"):
    bounded_while_loop(lambda x: x < 1, lambda x: x + 1, 0.0, 2.5)
  with pytest.raises(TypeError, match="static Python integer"):
    xjax.jit(lambda n: bounded_while_loop(lambda x: x < 1, lambda x: x + 1, 0.0, n))(3)


@pytest.mark.parametrize("checkpoint", [True, False])
@pytest.mark.parametrize("max_steps", [0, 1, 5, 10])
def test_too_many_iterations_raises_eagerly(checkpoint, max_steps):
  with pytest.raises(ValueError, match=f"max_steps={max_steps} iterations"):
    _loop(jnp.float32(1.0), max_steps + 1, max_steps, checkpoint)
  _close(_loop(jnp.float32(1.0), max_steps, max_steps, checkpoint),
         _fori(jnp.float32(1.0), max_steps))  # exactly max_steps is allowed


def test_too_many_iterations_raises_under_grad_and_jvp_eagerly():
  with pytest.raises(ValueError, match="max_steps=6"):
    xjax.grad(_loop)(1.0, 7, 6)
  with pytest.raises(ValueError, match="max_steps=6"):
    xjax.jvp(lambda x: _loop(x, 7, 6), (1.0,), (1.0,))


@pytest.mark.parametrize("checkpoint", [True, False])
def test_too_many_iterations_raises_at_run_time_under_jit(checkpoint):
  f = xjax.jit(lambda x, n: _loop(x, n, 9, checkpoint))
  _close(f(1.0, 9), _fori(1.0, 9))
  with pytest.raises(backend.runtime_error_class(), match="max_steps=9 iterations"):
    f(1.0, 10)
  g = xjax.jit(xjax.grad(lambda x, n: _loop(x, n, 9, checkpoint)))
  _close(g(1.0, 4), xjax.grad(_fori)(1.0, 4))
  with pytest.raises(backend.runtime_error_class(), match="max_steps=9"):
    g(1.0, 12)


def test_too_many_iterations_in_one_vmapped_element_raises():
  f = lambda n: _loop(jnp.float32(1.0), n, 5)
  _close(xjax.vmap(f)(jnp.array([1, 5, 3])), [_fori(1.0, k) for k in (1, 5, 3)])
  with pytest.raises(ValueError, match="max_steps=5"):
    xjax.vmap(f)(jnp.array([1, 6, 3]))
  with pytest.raises(backend.runtime_error_class(), match="max_steps=5"):
    xjax.jit(xjax.vmap(f))(jnp.array([1, 6, 3]))


# ----------------------------------------------------------------------------
# Derivatives


@pytest.mark.parametrize("checkpoint", [True, False])
@pytest.mark.parametrize("trips,max_steps", [(0, 3), (7, 7), (5, 12), (11, 17)])
def test_derivatives_against_finite_differences(checkpoint, trips, max_steps):
  with enable_x64(True):
    x = jnp.array([0.4, -0.7, 1.3])
    check_grads(lambda x: _loop(x, trips, max_steps, checkpoint), (x,), order=2,
                modes=("fwd", "rev"))


@pytest.mark.parametrize("checkpoint", [True, False])
@pytest.mark.parametrize("trips", [0, 1, 6, 13])
def test_gradient_equals_fixed_count_fori_loop(checkpoint, trips):
  x = jnp.array([0.4, -0.7, 1.3], jnp.float32)
  loss = lambda x: jnp.sum(_loop(x, trips, 13, checkpoint) ** 2)
  want = xjax.grad(lambda x: jnp.sum(_fori(x, trips) ** 2))(x)
  _close(xjax.grad(loss)(x), want)
  _close(xjax.jit(xjax.grad(loss))(x), want)
  _close(xjax.grad(xjax.jit(loss))(x), want)
  t = jnp.array([1.0, 2.0, -1.0], jnp.float32)
  _, jvp_want = xjax.jvp(lambda x: _fori(x, trips), (x,), (t,))
  _close(xjax.jvp(lambda x: _loop(x, trips, 13, checkpoint), (x,), (t,))[1], jvp_want)
  out, vjp_fn = xjax.vjp(lambda x: _loop(x, trips, 13, checkpoint), x)
  _close(vjp_fn(t)[0], xjax.vjp(lambda x: _fori(x, trips), x)[1](t)[0])


@pytest.mark.parametrize("checkpoint", [True, False])
def test_gradient_through_closed_over_parameter_and_data_dependent_stop(checkpoint):
  # The loop grows x by a factor w until it passes 10: the trip count depends
  # on the data, the gradient flows through w (a constant of the body).
  def f(w, x):
    return bounded_while_loop(lambda c: c < 10.0, lambda c: c * w, x, 20, checkpoint=checkpoint)

  with enable_x64(True):
    w, x = 1.7, 0.9  # 5 trips: 0.9 * 1.7**5 = 12.78
    check_grads(f, (w, x), order=1, modes=("fwd", "rev"))
    _close(xjax.grad(f, argnums=(0, 1))(w, x), (5 * x * w ** 4, w ** 5), 1e-10)


@pytest.mark.parametrize("checkpoint", [True, False])
def test_vmap_stops_each_element_at_its_own_step(checkpoint):
  trips = jnp.array([0, 3, 8, 1, 8])
  xs = jnp.array([0.5, 1.0, -0.3, 2.0, 0.7], jnp.float32)
  f = lambda x, n: _loop(x, n, 8, checkpoint)
  want = [_fori(x, int(n)) for x, n in zip(xs, trips)]
  _close(xjax.vmap(f)(xs, trips), want)
  _close(xjax.jit(xjax.vmap(f))(xs, trips), want)
  grads_want = [xjax.grad(_fori)(x, int(n)) for x, n in zip(xs, trips)]
  _close(xjax.vmap(xjax.grad(f))(xs, trips), grads_want)
  _close(xjax.jit(xjax.vmap(xjax.grad(f)))(xs, trips), grads_want)
  _close(xjax.grad(lambda xs: xjax.vmap(f)(xs, trips).sum())(xs), grads_want)
  # Only the carry batched (the trip count shared), and only the count batched.
  _close(xjax.vmap(f, (0, None))(xs, 3), [_fori(x, 3) for x in xs])
  _close(xjax.vmap(f, (None, 0))(xs[1], trips), [_fori(xs[1], int(n)) for n in trips])


# ----------------------------------------------------------------------------
# Memory: residuals stacked by the gradient


def _stacked_rows(closed, carry_shape):
  """The leading sizes of all arrays of shape ``(k, *carry_shape)`` in the jaxpr, recursively."""
  rows = set()

  def walk(jaxpr):
    for eqn in jaxpr.eqns:
      for v in eqn.outvars:
        if v.aval.shape[1:] == carry_shape and len(v.aval.shape) == len(carry_shape) + 1:
          rows.add((id(v), v.aval.shape[0]))
      for p in eqn.params.values():
        for q in (p if isinstance(p, (tuple, list)) else [p]):
          if isinstance(q, core.ClosedJaxpr):
            walk(q.jaxpr)
          elif isinstance(q, core.Jaxpr):
            walk(q)

  walk(closed.jaxpr)
  return sorted(k for _, k in rows)


@pytest.mark.parametrize("max_steps", [50, 400])
def test_checkpointed_gradient_stores_about_2_sqrt_n_carries(max_steps):
  x = jnp.ones((3,), jnp.float32)
  loss = lambda ck: lambda x: _loop(x, max_steps - 7, max_steps, ck).sum()
  plain = _stacked_rows(xjax.make_jaxpr(xjax.grad(loss(False)))(x), (3,))
  assert max(plain) == max_steps  # one saved carry-sized residual per step
  nested = _stacked_rows(xjax.make_jaxpr(xjax.grad(loss(True)))(x), (3,))
  blocks = math.ceil(math.sqrt(max_steps))
  steps = math.ceil(max_steps / blocks)
  # Block-start carries (outer scan) and one block's residuals (the
  # recomputed inner scan): distinct stacks of `blocks` and `steps` rows.
  assert set(nested) == {blocks, steps}
  assert blocks + steps <= 2 * math.sqrt(max_steps) + 2
  _close(xjax.grad(loss(True))(x), xjax.grad(loss(False))(x))
