"""Dead-code elimination of jit, call, closed_call, custom_jvp_call, custom_vjp_call and remat2
(their `dce_rule`s).

For each primitive: `pe.dce_jaxpr` of a jaxpr whose call has outputs nothing
uses prunes the equation (fewer outputs; for remat2 fewer operands too) and
the pruned jaxpr computes the same used outputs; derivatives through the
pruned equation (its wrapped custom rules, its pruned body) are the ones
before pruning, eagerly and under jit; and the paths where xjax prunes in
practice (the linear jaxpr of `linearize`, a jit's transposed jaxpr) reach
the rules.
"""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import core
from xjax.custom_derivatives import SymbolicZero
from xjax.extend.core import primitives
from xjax.interpreters import partial_eval as pe

X, Y = 0.7, 1.3


def _pruned(f, used, *args):
  """(the equation `pe.dce_jaxpr` leaves of the single call in `f`'s jaxpr, keeping the
  outputs `used`; a function of `f`'s arguments evaluating the pruned jaxpr)."""
  closed = jax.make_jaxpr(f)(*args)
  (orig,) = closed.jaxpr.eqns
  jaxpr, used_inputs = pe.dce_jaxpr(closed.jaxpr, used)
  (eqn,) = jaxpr.eqns
  assert eqn.primitive is orig.primitive and len(eqn.outvars) == sum(used) < len(orig.outvars)

  def run(*xs):
    return core.eval_jaxpr(jaxpr, closed.consts, *(x for x, u in zip(xs, used_inputs) if u))
  return eqn, run


def _maybe_jit(f, use_jit):
  return jax.jit(f) if use_jit else f


def _finite_difference(f, x, eps=1e-3):
  x = np.float64(x)
  return (np.float64(f(np.float32(x + eps))) - np.float64(f(np.float32(x - eps)))) / (2 * eps)


def _spy_on(monkeypatch, primitive):
  """A list that records the `used_outputs` of each call of `primitive.dce_rule`."""
  seen, rule = [], primitive.dce_rule

  def spy(used_outputs, eqn):
    seen.append(tuple(used_outputs))
    return rule(used_outputs, eqn)
  monkeypatch.setattr(primitive, "dce_rule", spy)
  return seen


# ----------------------------------------------------------------------------
# custom_jvp: a rule that is not the true derivative, so its use shows


@jax.custom_jvp
def cjvp(x, y):
  return jnp.sin(x), jnp.cos(y), x * y


@cjvp.defjvp
def _cjvp_rule(primals, tangents):
  (x, y), (tx, ty) = primals, tangents
  return cjvp(x, y), (2. * tx, 3. * ty, 5. * tx + 7. * ty)


def test_custom_jvp_dce_prunes_outputs_keeps_inputs():
  f = lambda x, y: cjvp(x, y)
  eqn, run = _pruned(f, [True, False, True], X, Y)
  assert len(eqn.invars) == 2  # the rule may read what the pruned function does not
  assert len(eqn.params["call_jaxpr"].out_avals) == 2
  np.testing.assert_allclose(run(X, Y), [np.sin(X), X * Y], rtol=1e-6)
  eqn, run = _pruned(f, [False, True, False], X, Y)
  assert len(eqn.invars) == 2 and len(eqn.params["call_jaxpr"].jaxpr.eqns) == 1
  np.testing.assert_allclose(run(X, Y), [np.cos(Y)], rtol=1e-6)


@pytest.mark.parametrize("use_jit", [False, True])
def test_custom_jvp_rule_still_used_after_dce(use_jit):
  _, run = _pruned(lambda x, y: cjvp(x, y), [False, True, True], X, Y)
  out, tan = jax.jvp(_maybe_jit(run, use_jit), (X, Y), (1., 1.))
  np.testing.assert_allclose(out, [np.cos(Y), X * Y], rtol=1e-6)
  np.testing.assert_allclose(tan, [3., 12.], rtol=1e-6)
  grads = jax.grad(_maybe_jit(lambda x, y: run(x, y)[1], use_jit), (0, 1))(X, Y)
  np.testing.assert_allclose(grads, [5., 7.], rtol=1e-6)
  # The same as without pruning, where the grad's own linearization does it.
  plain = jax.grad(_maybe_jit(lambda x, y: cjvp(x, y)[2], use_jit), (0, 1))(X, Y)
  np.testing.assert_allclose(plain, grads, rtol=1e-6)


@pytest.mark.parametrize("use_jit", [False, True])
def test_custom_jvp_symbolic_zero_tangent_after_dce(use_jit):
  @jax.custom_jvp
  def f(x):
    return x * 2., jnp.sin(x), x + 1.

  def rule(primals, tangents):
    (x,), (t,) = primals, tangents
    zero = SymbolicZero(core.get_aval(x).to_tangent_aval())
    return f(x), (zero, 10. * t, zero)

  f.defjvp(rule, symbolic_zeros=True)
  _, run = _pruned(f, [False, True, True], X)
  out, tan = jax.jvp(_maybe_jit(run, use_jit), (X,), (1.,))
  np.testing.assert_allclose(out, [np.sin(X), X + 1.], rtol=1e-6)
  np.testing.assert_allclose(tan, [10., 0.], rtol=1e-6)


# ----------------------------------------------------------------------------
# custom_vjp: a bwd that is not the true derivative; it records what it is given


_BWD_CTS = []


@jax.custom_vjp
def cvjp(x, y):
  return jnp.sin(x), jnp.cos(y), x * y


def _cvjp_fwd(x, y):
  return cvjp(x, y), (x, y)


def _cvjp_bwd(res, cts):
  _BWD_CTS.append(cts)
  a, b, c = cts
  return 2. * a + 5. * c, 3. * b + 7. * c


cvjp.defvjp(_cvjp_fwd, _cvjp_bwd)


def test_custom_vjp_dce_prunes_outputs_keeps_inputs():
  f = lambda x, y: cvjp(x, y)
  eqn, run = _pruned(f, [True, False, False], X, Y)
  assert len(eqn.invars) == 2 and len(eqn.params["call_jaxpr"].out_avals) == 1
  np.testing.assert_allclose(run(X, Y), [np.sin(X)], rtol=1e-6)
  eqn, run = _pruned(f, [False, True, True], X, Y)
  np.testing.assert_allclose(run(X, Y), [np.cos(Y), X * Y], rtol=1e-6)


@pytest.mark.parametrize("use_jit", [False, True])
def test_custom_vjp_bwd_gets_zero_cotangents_for_pruned_outputs(use_jit):
  _, run = _pruned(lambda x, y: cvjp(x, y), [False, True, True], X, Y)
  _BWD_CTS.clear()
  out, vjp = jax.vjp(_maybe_jit(run, use_jit), X, Y)
  np.testing.assert_allclose(out, [np.cos(Y), X * Y], rtol=1e-6)
  np.testing.assert_allclose(vjp([1., 1.]), [5., 10.], rtol=1e-6)
  (cts,) = _BWD_CTS
  if not use_jit:  # (under jit they are tracers)
    np.testing.assert_array_equal(cts, [0., 1., 1.])
  grads = jax.grad(_maybe_jit(lambda x, y: run(x, y)[0], use_jit), (0, 1))(X, Y)
  np.testing.assert_allclose(grads, [0., 3.], rtol=1e-6)
  plain = jax.grad(_maybe_jit(lambda x, y: cvjp(x, y)[1], use_jit), (0, 1))(X, Y)
  np.testing.assert_allclose(plain, grads, rtol=1e-6)


@pytest.mark.parametrize("use_jit", [False, True])
def test_custom_vjp_symbolic_zero_cotangents_after_dce(use_jit):
  seen = []

  @jax.custom_vjp
  def f(x):
    return jnp.sin(x), x * 3.

  def fwd(x):
    return f(x.value), None

  def bwd(_, cts):
    seen.append(tuple(type(c) is SymbolicZero for c in cts))
    a, b = cts
    return (2. * a if type(b) is SymbolicZero else 2. * a + b,)

  f.defvjp(fwd, bwd, symbolic_zeros=True)
  _, run = _pruned(f, [True, False], X)
  g = jax.grad(_maybe_jit(lambda x: run(x)[0], use_jit))(X)
  np.testing.assert_allclose(g, 2., rtol=1e-6)
  assert seen == [(False, True)]


def test_custom_rules_batch_after_dce():
  xs = jnp.arange(3.)
  _, run = _pruned(lambda x, y: cvjp(x, y), [False, True, True], X, Y)
  grads = jax.vmap(jax.grad(lambda x, y: run(x, y)[1], (0, 1)), (0, None))(xs, Y)
  np.testing.assert_allclose(grads, [[5.] * 3, [7.] * 3])
  _, run = _pruned(lambda x, y: cjvp(x, y), [False, True, True], X, Y)
  tangents = jax.jvp(jax.vmap(lambda x: run(x, Y)), (xs,), (jnp.ones(3),))[1]
  np.testing.assert_allclose(tangents, [[0.] * 3, [5.] * 3])


# ----------------------------------------------------------------------------
# checkpoint (remat2)


def _ck_fun(x, y):
  return jnp.sin(x) * x, jnp.cos(y), x * y


ck = jax.checkpoint(_ck_fun)


def test_checkpoint_dce_prunes_outputs_and_inputs():
  eqn, run = _pruned(ck, [True, False, False], X, Y)
  assert len(eqn.invars) == 1 and len(eqn.params["jaxpr"].in_avals) == 1
  np.testing.assert_allclose(run(X, Y), [np.sin(X) * X], rtol=1e-6)
  eqn, run = _pruned(ck, [False, True, False], X, Y)
  assert len(eqn.invars) == 1 and len(eqn.params["jaxpr"].jaxpr.eqns) == 1
  np.testing.assert_allclose(run(X, Y), [np.cos(Y)], rtol=1e-6)


def test_checkpoint_dce_prunes_prevent_cse_with_the_inputs():
  f = jax.checkpoint(_ck_fun, prevent_cse=(True, False))
  closed = jax.make_jaxpr(f)(X, Y)
  assert closed.jaxpr.eqns[0].params["prevent_cse"] == (True, False)
  jaxpr, _ = pe.dce_jaxpr(closed.jaxpr, [False, True, False])
  (eqn,) = jaxpr.eqns
  assert eqn.params["prevent_cse"] == (False,) and len(eqn.invars) == 1


def test_checkpoint_dce_drops_unused_call_keeps_effectful_one():
  jaxpr, used = pe.dce_jaxpr(jax.make_jaxpr(ck)(X, Y).jaxpr, [False] * 3)
  assert not jaxpr.eqns and used == [False, False]

  @jax.checkpoint
  def noisy(x):
    jax.debug.print("x={}", x)
    return jnp.sin(x), x * 2.

  jaxpr, used = pe.dce_jaxpr(jax.make_jaxpr(noisy)(X).jaxpr, [False, False])
  (eqn,) = jaxpr.eqns
  assert eqn.outvars == [] and used == [True]


@pytest.mark.parametrize("use_jit", [False, True])
@pytest.mark.parametrize("out", [0, 1, 2])
def test_checkpoint_derivatives_after_dce(use_jit, out):
  used = [i == out for i in range(3)]
  _, run = _pruned(ck, used, X, Y)
  g = _maybe_jit(lambda x, y: run(x, y)[0], use_jit)
  want = jax.grad(lambda x, y: _ck_fun(x, y)[out], (0, 1))(X, Y)
  np.testing.assert_allclose(jax.grad(g, (0, 1))(X, Y), want, rtol=1e-5)
  np.testing.assert_allclose(jax.jvp(g, (X, Y), (1., 1.))[1], sum(want), rtol=1e-5)
  fd = [_finite_difference(lambda x: g(x, Y), X), _finite_difference(lambda y: g(X, y), Y)]
  np.testing.assert_allclose(want, fd, rtol=1e-2, atol=1e-3)


# ----------------------------------------------------------------------------
# Where xjax prunes in practice


@pytest.mark.parametrize("use_jit", [False, True])
def test_linearize_prunes_checkpoint_in_the_linear_jaxpr(monkeypatch, use_jit):
  seen = _spy_on(monkeypatch, primitives.remat_p)
  f = _maybe_jit(lambda x, y: ck(x, y)[0], use_jit)
  out, f_jvp = jax.linearize(f, X, Y)
  assert (True, False, False) in seen
  np.testing.assert_allclose(out, np.sin(X) * X, rtol=1e-6)
  np.testing.assert_allclose(f_jvp(1., 1.), np.cos(X) * X + np.sin(X), rtol=1e-5)
  np.testing.assert_allclose(jax.grad(f, (0, 1))(X, Y), [np.cos(X) * X + np.sin(X), 0.],
                             rtol=1e-5)


@jax.custom_vjp
def _pair(x):
  return jnp.sin(x), x * 2.


_pair.defvjp(lambda x: (_pair(x), x),
             lambda x, cts: (jnp.cos(x) * cts[0] + 2. * cts[1],))


@jax.custom_jvp
def _jvp_pair(x):
  return jnp.sin(x), x * 2.


_jvp_pair.defjvp(lambda p, t: (_jvp_pair(*p), (jnp.cos(p[0]) * t[0], 2. * t[0])))


@pytest.mark.parametrize("helper, primitive", [
    (_pair, primitives.custom_vjp_call_p), (_jvp_pair, primitives.custom_jvp_call_p)])
def test_jit_transpose_prunes_custom_call_in_a_bwd_rule(monkeypatch, helper, primitive):
  # The bwd rule uses one output of a two-output custom function: transposing the jit
  # traces it, and dead-code elimination of the transposed jaxpr prunes the call.
  seen = _spy_on(monkeypatch, primitive)

  @jax.custom_vjp
  def square(x):
    return x ** 2

  square.defvjp(lambda x: (square(x), x), lambda x, ct: (helper(x)[0] * ct,))
  g = jax.grad(jax.jit(square))(X)
  assert (True, False) in seen
  np.testing.assert_allclose(g, np.sin(X), rtol=1e-6)


# ----------------------------------------------------------------------------
# jit, call and closed_call: the called jaxpr pruned, unread operands dropped


def _two_out(u, v):
  return jnp.sin(u) * 2, jnp.cos(v) + u


@pytest.mark.parametrize("used", [(True, False), (False, True)])
def test_jit_prunes_its_jaxpr_operands_and_donations(used):
  f = lambda x, y: jax.jit(_two_out, donate_argnums=(1,))(x, y)
  eqn, run = _pruned(f, list(used), X, Y)
  expect = [o for o, u in zip(_two_out(X, Y), used) if u]
  np.testing.assert_allclose(run(X, Y), expect, rtol=1e-6)
  assert len(eqn.params["jaxpr"].out_avals) == 1
  assert len(eqn.invars) == len(eqn.params["donated_invars"]) == len(eqn.params["jaxpr"].in_avals)
  if used == (True, False):  # only x is read: y, the donated operand, is dropped with its flag
    assert eqn.params["donated_invars"] == (False,)


def test_jit_with_keep_unused_keeps_every_operand():
  f = lambda x, y: jax.jit(_two_out, keep_unused=True)(x, y)
  eqn, run = _pruned(f, [True, False], X, Y)
  assert len(eqn.invars) == 2 and eqn.params["keep_unused"]
  np.testing.assert_allclose(run(X, Y), [np.sin(X) * 2], rtol=1e-6)


def test_jit_with_an_effect_stays_when_nothing_is_used():
  def f(x):
    def inner(u):
      jax.debug.print("u={u}", u=u)
      return u * 2
    return jax.jit(inner)(x)
  closed = jax.make_jaxpr(f)(X)
  jaxpr, _ = pe.dce_jaxpr(closed.jaxpr, [False])
  assert [e.primitive.name for e in jaxpr.eqns] == ["jit"]
  unused = jax.make_jaxpr(lambda x: jax.jit(lambda u: u * 2)(x))(X)
  assert pe.dce_jaxpr(unused.jaxpr, [False])[0].eqns == []


@pytest.mark.parametrize("use_jit", [False, True])
def test_derivatives_through_a_pruned_jit_are_unchanged(use_jit):
  f = lambda x, y: jax.jit(_two_out)(x, y)[0] * 3
  g = _maybe_jit(jax.grad(f, argnums=(0, 1)), use_jit)
  np.testing.assert_allclose(g(X, Y), (6 * np.cos(X), 0.0), rtol=1e-6)
  _, lin = jax.linearize(f, X, Y)
  np.testing.assert_allclose(lin(1.0, 1.0), 6 * np.cos(X), rtol=1e-6)


@pytest.mark.parametrize("name", ["call", "closed_call"])
def test_call_primitives_prune_their_jaxpr(name):
  callee = jax.make_jaxpr(_two_out)(X, Y)
  prim = getattr(primitives, f"{name}_p")
  jaxpr_param = callee if name == "closed_call" else callee.jaxpr
  f = lambda x, y: prim.bind(x, y, call_jaxpr=jaxpr_param)
  eqn, run = _pruned(f, [False, True], X, Y)
  np.testing.assert_allclose(run(X, Y), [np.cos(Y) + X], rtol=1e-6)
  assert type(eqn.params["call_jaxpr"]) is type(jaxpr_param)
