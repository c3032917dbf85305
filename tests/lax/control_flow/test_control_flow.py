"""Structured control flow (issue 5): cond, switch, while_loop, fori_loop, scan, map,
associative_scan, and jnp.select/piecewise: values against Python loops, gradients
against finite differences, vmap against loops over the batch, jit and lowering."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.config import enable_x64
from xjax.test_util import check_grads


def _close(a, b, tol=1e-5):
  np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def _py_scan(f, init, xs, reverse=False):
  carry, ys = init, []
  idx = range(len(xs))
  for i in (reversed(idx) if reverse else idx):
    carry, y = f(carry, xs[i])
    ys.append(y)
  if reverse:
    ys = ys[::-1]
  return carry, np.stack(ys)


# ----------------------------------------------------------------------------
# cond / switch / select


@pytest.mark.parametrize("pred", [True, False, 1, 0, 2.5, 0.0])
def test_cond_picks_branch_for_bool_and_numeric_predicates(pred):
  out = lax.cond(pred, lambda x: x + 1, lambda x: x - 1, jnp.array([0.]))
  _close(out, [1.] if pred else [-1.])


def test_cond_pytree_operands_and_outputs():
  ops = ({"a": jnp.ones(2)}, 3.0)
  out = lax.cond(True, lambda d, s: {"y": d["a"] * s, "z": (s,)},
                 lambda d, s: {"y": d["a"] - s, "z": (-s,)}, *ops)
  _close(out["y"], [3., 3.])
  _close(out["z"][0], 3.)


def test_cond_under_jit_runs_only_traced_predicate_branch():
  f = xjax.jit(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x))
  _close(f(True, 0.3), np.sin(0.3))
  _close(f(False, 0.3), np.cos(0.3))


def test_cond_closes_over_outer_tracers():
  f = xjax.jit(lambda x, y: lax.cond(x > 0, lambda: x * y, lambda: x - y))
  _close(f(2., 3.), 6.)
  _close(f(-2., 3.), -5.)


def test_cond_no_operands_and_forwarded_outputs():
  out = lax.cond(False, lambda x, y: (x, y + 1), lambda x, y: (x, y - 1), 1.0, 2.0)
  _close(out[0], 1.0)
  _close(out[1], 1.0)


@pytest.mark.parametrize("index,expected", [(-3, 1.5), (0, 1.5), (1, 1.0), (2, np.sin(0.5)),
                                            (7, np.sin(0.5))])
def test_switch_clamps_index(index, expected):
  branches = [lambda x: x + 1, lambda x: x * 2, jnp.sin]
  _close(lax.switch(index, branches, 0.5), expected)
  _close(xjax.jit(lambda i: lax.switch(i, branches, 0.5))(index), expected)


def test_switch_single_branch_is_called_directly():
  assert lax.switch(3, [lambda x: x * 2], 2.0) == 4.0


def test_cond_errors():
  with pytest.raises(TypeError, match="Pred must be a scalar"):
    lax.cond(jnp.array([True, False]), lambda x: x, lambda x: -x, 1.0)
  with pytest.raises(TypeError, match="cond branch outputs must have the same pytree structure"):
    lax.cond(True, lambda x: x, lambda x: (x, x), 1.0)
  with pytest.raises(TypeError, match="so the dtypes do not match"):
    lax.cond(True, lambda x: x, lambda x: x.astype(jnp.int32), 1.0)
  with pytest.raises(TypeError, match="so the shapes do not match"):
    lax.cond(True, lambda x: x, lambda x: jnp.stack([x, x]), 1.0)
  with pytest.raises(ValueError, match="Empty branch sequence"):
    lax.switch(0, [], 1.0)
  with pytest.raises(TypeError, match="Index type must be an integer, got 1.5 as float32"):
    lax.switch(1.5, [lambda x: x], 1.0)
  with pytest.raises(TypeError, match="is not a valid JAX type"):
    lax.cond(True, lambda x: next(x) + 1, lambda x: next(x) - 1, iter(range(10)))


def test_select_is_elementwise_cond():
  x = jnp.arange(-2., 3.)
  _close(lax.select(x > 0, x, -x), np.abs(np.arange(-2., 3.)))


# ----------------------------------------------------------------------------
# while_loop / fori_loop


def test_while_loop_pytree_carry_and_consts():
  limit = jnp.float32(5.0)
  out = lax.while_loop(lambda c: c[1] < limit, lambda c: (c[0] * 2, c[1] + 1), (1, 0.0))
  assert int(out[0]) == 32 and float(out[1]) == 5.0


def test_while_loop_zero_iterations():
  assert int(lax.while_loop(lambda c: c > 10, lambda c: c + 1, 3)) == 3


def test_while_loop_errors():
  with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
    lax.while_loop(lambda x: x, lambda x: x + 1, 1.0)
  with pytest.raises(TypeError, match="must have the same pytree structure"):
    lax.while_loop(lambda x: x[0] < 1, lambda x: (x[0] + 1,), (1, 2))
  with pytest.raises(TypeError, match="must have equal types"):
    lax.while_loop(lambda x: x < 10, lambda x: x + 1.5, jnp.int32(0))


def test_while_loop_weak_typed_init_is_promoted():
  out = lax.while_loop(lambda x: x < 3, lambda x: x + jnp.float32(1.5), 0)
  assert out.dtype == np.float32 and float(out) == 3.0


@pytest.mark.parametrize("lower,upper", [(0, 10), (3, 7), (5, 2)])
def test_fori_loop_matches_python(lower, upper):
  body = lambda i, x: x * 1.5 + i
  expected = 1.0
  for i in range(lower, upper):
    expected = body(i, expected)
  _close(lax.fori_loop(lower, upper, body, 1.0), expected)
  _close(xjax.jit(lambda lo, hi: lax.fori_loop(lo, hi, body, 1.0))(lower, upper), expected)


def test_fori_loop_lowers_through_scan_when_bounds_are_concrete():
  static = xjax.make_jaxpr(lambda x: lax.fori_loop(0, 4, lambda i, c: c + i, x))(0)
  dynamic = xjax.make_jaxpr(lambda x, n: lax.fori_loop(0, n, lambda i, c: c + i, x))(0, 4)
  assert "scan[" in str(static) and "while[" not in str(static)
  assert "while[" in str(dynamic) and "scan[" not in str(dynamic)


def test_fori_loop_errors():
  with pytest.raises(TypeError, match="must have equal types, got int32 and float32"):
    lax.fori_loop(0, 3.0, lambda i, c: c, 1.0)
  with pytest.raises(ValueError, match="Can only use `unroll`"):
    xjax.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c, 1.0, unroll=2))(3)


# ----------------------------------------------------------------------------
# scan / map / associative_scan


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("unroll", [1, 2, 3, True, 0])
def test_scan_matches_python_loop(reverse, unroll):
  xs = np.arange(1., 6., dtype=np.float32)
  f = lambda c, x: (c * 0.5 + x, c * x)
  carry, ys = lax.scan(f, 1.0, xs, reverse=reverse, unroll=unroll)
  e_carry, e_ys = _py_scan(f, np.float32(1.0), xs, reverse)
  _close(carry, e_carry)
  _close(ys, e_ys)


def test_scan_pytrees_and_xs_none():
  init = {"a": jnp.zeros(2), "b": 1.0}
  xs = (jnp.arange(6.).reshape(3, 2), jnp.arange(3))
  (carry, ys) = lax.scan(lambda c, x: ({"a": c["a"] + x[0], "b": c["b"] * 2}, x[1] * 2),
                         init, xs)
  _close(carry["a"], [6., 9.])
  _close(carry["b"], 8.)
  _close(ys, [0, 2, 4])
  c, ys = lax.scan(lambda c, _: (c + 1, c), 0, None, length=4)
  assert int(c) == 4
  _close(ys, [0, 1, 2, 3])


def test_scan_closes_over_tracers_and_forwards():
  f = xjax.jit(lambda w, xs: lax.scan(lambda c, x: ((c[0], c[1] + w * x), x), (w, 0.), xs))
  (a, b), ys = f(2.0, jnp.arange(3.))
  _close(a, 2.0)
  _close(b, 6.0)
  _close(ys, [0., 1., 2.])


def test_scan_errors():
  with pytest.raises(TypeError, match="scan body output must be a pair"):
    lax.scan(lambda c, x: c, 0.0, jnp.arange(3.))
  with pytest.raises(TypeError, match="same pytree structure"):
    lax.scan(lambda c, x: ((c, c), x), 0.0, jnp.arange(3.))
  with pytest.raises(TypeError, match="so the shapes do not match"):
    lax.scan(lambda c, x: (jnp.stack([c, c]), x), 0.0, jnp.arange(3.0))
  with pytest.raises(ValueError, match="different leading axis sizes: 3, 4"):
    lax.scan(lambda c, x: (c, x), 0.0, (jnp.arange(3.), jnp.arange(4.)))
  with pytest.raises(ValueError, match="disagrees with leading axis sizes"):
    lax.scan(lambda c, x: (c, x), 0.0, jnp.arange(3.), length=4)
  with pytest.raises(ValueError, match="no values to scan over"):
    lax.scan(lambda c, x: (c, x), 0.0, None)


@pytest.mark.parametrize("batch_size", [None, 0, 1, 2, 3, 5, 8])
def test_map_matches_numpy(batch_size):
  # 0, or more than the axis, maps all slices in one vmapped call, as in JAX.
  xs = np.arange(5., dtype=np.float32)
  _close(lax.map(lambda x: jnp.sin(x) * 2, xs, batch_size=batch_size), np.sin(xs) * 2)


def test_map_rejects_a_negative_batch_size():
  with pytest.raises(ValueError, match="non-negative"):
    lax.map(jnp.sin, np.arange(3.0), batch_size=-1)


@pytest.mark.parametrize("n", [1, 2, 7, 8])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_matches_cumulative_ops(n, reverse):
  x = np.arange(1., n + 1, dtype=np.float32)
  got = lax.associative_scan(jnp.add, x, reverse=reverse)
  expected = np.cumsum(x[::-1])[::-1] if reverse else np.cumsum(x)
  _close(got, expected)
  pair = lax.associative_scan(lambda a, b: (a[0] * b[0], a[1] + b[1]), (x, x))
  _close(pair[0], np.cumprod(x))


# ----------------------------------------------------------------------------
# jnp.select / jnp.piecewise / jnp.where


def test_jnp_select_and_piecewise_match_numpy():
  x = np.linspace(-2, 2, 9).astype(np.float32)
  _close(jnp.select([x < -1, x > 1], [x * 10, x * 100], 7.0),
         np.select([x < -1, x > 1], [x * 10, x * 100], 7.0))
  funcs = [lambda v: -v, lambda v: v ** 2]
  _close(jnp.piecewise(x, [x < 0, x >= 0], funcs), np.piecewise(x, [x < 0, x >= 0], funcs))
  _close(jnp.piecewise(x, [x < -1, x > 1], [1., lambda v: v, 5.]),
         np.piecewise(x, [x < -1, x > 1], [1., lambda v: v, 5.]))
  _close(jnp.where(x > 0, x, 0.), np.where(x > 0, x, 0.))


# ----------------------------------------------------------------------------
# Differentiation (forward and reverse against finite differences)


def test_cond_and_switch_grads():
  with enable_x64(True):
    check_grads(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x), (0.7,), order=2)
    check_grads(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x), (-0.7,), order=2)
    g = lambda x, y: lax.switch(1, [lambda a, b: a * b, lambda a, b: jnp.sin(a) * b ** 2,
                                    lambda a, b: a], x, y)
    check_grads(g, (0.7, 1.3), order=2)
    closed = lambda x, y: lax.cond(True, lambda: x * jnp.exp(y), lambda: y)
    check_grads(closed, (0.4, 0.2), order=2)


def test_scan_grads():
  with enable_x64(True):
    def s(x, xs):
      return lax.scan(lambda c, a: (jnp.sin(c) * a, c * a + x), x, xs)
    check_grads(s, (0.5, np.arange(1., 4.)), order=2)
    check_grads(lambda x, xs: lax.scan(lambda c, a: (c * a, c), x, xs, reverse=True, unroll=2),
                (0.5, np.arange(1., 5.)), order=2)
    check_grads(lambda w: lax.scan(lambda c, _: (jnp.tanh(c * w), c), 1.0, None, length=3)[0],
                (0.8,), order=2)


def test_fori_loop_static_bounds_is_reverse_differentiable():
  with enable_x64(True):
    check_grads(lambda x: lax.fori_loop(0, 4, lambda i, c: c * jnp.cos(c) + i, x), (0.3,),
                order=2)
  g = xjax.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.0))(2.0)
  _close(g, 12.0)


def test_while_loop_forward_mode_and_reverse_error():
  with enable_x64(True):
    f = lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1]) * 1.1),
                                 (0, x))[1]
    check_grads(f, (0.3,), order=2, modes=["fwd"])
  msg = "Reverse-mode differentiation does not work for lax.while_loop"
  with pytest.raises(ValueError, match=msg):
    xjax.grad(lambda x: lax.while_loop(lambda c: c < 10., lambda c: c * 2., x))(1.0)
  with pytest.raises(ValueError, match=msg):
    xjax.grad(lambda x: xjax.jit(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2., x))(x, 3))(1.)


def test_grad_through_jit_of_scan():
  s = lambda x: lax.scan(lambda c, a: (jnp.sin(c) * a, c), x, jnp.arange(1., 4.))[0]
  _close(xjax.grad(xjax.jit(s))(0.5), xjax.grad(s)(0.5))


# ----------------------------------------------------------------------------
# Batching (against loops over the batch)


def _loop(f, *args, in_axes=0):
  n = next(np.shape(a)[0] for a, ax in zip(args, in_axes) if ax is not None)
  rows = [f(*(a[i] if ax is not None else a for a, ax in zip(args, in_axes))) for i in range(n)]
  return np.stack([np.asarray(r) for r in rows])


def test_cond_vmap_batched_and_unbatched_predicate():
  xs = np.arange(-2., 3., dtype=np.float32)
  f = lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x)
  _close(xjax.vmap(f)(xs), _loop(f, xs, in_axes=(0,)))
  g = lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x)
  _close(xjax.vmap(g, (None, 0))(True, xs), np.sin(xs))
  h = lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.exp], x)
  idx = np.array([0, 1, 2, 5, -1], np.int32)
  _close(xjax.vmap(h)(idx, xs), _loop(h, idx, xs, in_axes=(0, 0)))


def test_cond_vmap_with_batched_predicate_under_x64(x64):
  # The branch index is int32 while x64 makes Python ints int64: the batching
  # rule must compare them in the index's dtype.
  xs = np.arange(-2., 3.)
  f = lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x)
  _close(xjax.vmap(f)(xs), _loop(f, xs, in_axes=(0,)))
  h = lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.exp], x)
  idx = np.array([0, 1, 2, 5, -1], np.int32)
  _close(xjax.vmap(h)(idx, xs), _loop(h, idx, xs, in_axes=(0, 0)))


def test_while_loop_vmap_with_batched_predicate():
  w = lambda x: lax.while_loop(lambda c: c[1] < x, lambda c: (c[0] * 2., c[1] + 1.), (1.0, 0.))[0]
  xs = np.arange(5., dtype=np.float32)
  _close(xjax.vmap(w)(xs), _loop(w, xs, in_axes=(0,)))
  fori = lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 0)
  ns = np.arange(5, dtype=np.int32)
  _close(xjax.vmap(fori)(ns), _loop(fori, ns, in_axes=(0,)))
  # Unbatched predicate, batched carry.
  u = lambda x: lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * x, c[1] + 1), (1.0, 0))[0]
  _close(xjax.vmap(u)(xs), _loop(u, xs, in_axes=(0,)))


def test_scan_vmap_carry_fixpoint():
  s = lambda x, ys: lax.scan(lambda c, a: ((c[0] * a, c[1] + x), c[0]), (1.0, 0.0), ys)
  xs = np.arange(-2., 3., dtype=np.float32)
  ys = np.arange(1., 4., dtype=np.float32)
  got = xjax.vmap(s, (0, None))(xs, ys)
  for i, x in enumerate(xs):
    (c0, c1), out = s(x, ys)
    _close(got[0][0][i], c0)
    _close(got[0][1][i], c1)
    _close(got[1][i], out)
  batched_xs = np.arange(12., dtype=np.float32).reshape(4, 3)
  _close(xjax.vmap(lambda v: s(1.0, v)[1], in_axes=1)(batched_xs.T),
         _loop(lambda v: s(1.0, v)[1], batched_xs, in_axes=(0,)))


def test_vmap_of_grad_of_scan():
  s = lambda x: lax.scan(lambda c, a: (jnp.sin(c) * a, c), x, jnp.arange(1., 4.))[0]
  xs = np.linspace(-1, 1, 4).astype(np.float32)
  _close(xjax.vmap(xjax.grad(s))(xs), _loop(xjax.grad(s), xs, in_axes=(0,)))


# ----------------------------------------------------------------------------
# Staging: one trace, sub-jaxprs printed, compiled once per shape


def test_loop_bodies_are_traced_once():
  calls = []

  def body(c, x):
    calls.append(1)
    return c + x, c

  lax.scan(body, 0., jnp.arange(100.))
  assert len(calls) == 1
  calls.clear()
  lax.fori_loop(0, 1000, lambda i, c: (calls.append(1), c + 1)[1], 0)
  assert len(calls) == 1


def test_lowering_uses_case_and_while_regions():
  text = xjax.jit(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x)).lower(True, 1.0).compiler_ir()
  assert '"stablehlo.case"' in text
  text = xjax.jit(lambda x: lax.scan(lambda c, a: (c + a, c), x, jnp.arange(10_000.))).lower(
      1.0).compiler_ir()
  assert '"stablehlo.while"' in text
  assert text.count("stablehlo.sine") == 0 and len(text) < 20_000


def test_python_if_on_traced_value_raises_under_jit():
  @xjax.jit
  def f(x):
    if x < 3:
      return 3. * x ** 2
    return -4 * x

  with pytest.raises(xjax.errors.TracerBoolConversionError):
    f(2)
  g = xjax.jit(f.__wrapped__, static_argnums=(0,))
  assert float(g(2.)) == 12.0


def test_join_consts_pads_dedups_and_caches():
  from xjax._src import core
  from xjax._src.lax.control_flow import common
  c, d = np.arange(3.0, dtype=np.float32), np.ones(3, np.float32)
  j1 = xjax.make_jaxpr(lambda a, b, x: a * b + x)(c, d, 1.0)
  j2 = xjax.make_jaxpr(lambda a, x: a - x)(c, 1.0)
  # Branch 1's consts are (c, d), branch 2's (c): one shared input for c, then d.
  (k1, k2), consts = common.join_consts([j1, j2], [[c, d], [c]])
  assert [id(x) for x in consts] == [id(c), id(d)]
  for k, (fn, args) in zip((k1, k2), (((lambda: c * d + 1.0), ()), ((lambda: c - 1.0), ()))):
    assert len(k.jaxpr.invars) == 3
    np.testing.assert_allclose(core.jaxpr_as_fun(k)(c, d, 1.0)[0], fn(*args))
  # The same inputs give the same jaxprs (cached per jaxpr), until the caches are cleared.
  assert common.join_consts([j1, j2], [[c, d], [c]])[0][1] is k2
  common._pad_constvars.cache_clear()
  common._dedup_consts.cache_clear()
  assert common.join_consts([j1, j2], [[c, d], [c]])[0][1] is not k2
  # A const given twice to one jaxpr: its two inputs become one.
  (k,), consts = common.join_consts([j1], [[c, c]])
  assert len(consts) == 1 and len(k.jaxpr.invars) == 2
  np.testing.assert_allclose(core.jaxpr_as_fun(k)(c, 1.0)[0], c * c + 1.0)


def test_malformed_scan_and_cond_params_fail_typecheck_with_jax_messages():
  from xjax._src import core

  def scan_eqn():
    jaxpr = xjax.make_jaxpr(lambda c, xs: lax.scan(lambda c, x: (c + x, c), c, xs))(
        1.0, jnp.ones(3)).jaxpr
    return jaxpr, next(e for e in jaxpr.eqns if e.primitive.name == "scan")

  for name, value, msg in [
      ("reverse", 4, "invalid scan param reverse of type int, bool required: 4"),
      ("num_consts", -3, "invalid scan param num_consts of type int, non-negative int "
                         "required: -3"),
      ("unroll", 1.5, "invalid scan param unroll of type float, non-negative int required: 1.5")]:
    jaxpr, eqn = scan_eqn()
    eqn.params[name] = value
    with pytest.raises(core.JaxprTypeError, match=msg):
      core.typecheck_jaxpr(jaxpr)
  jaxpr = xjax.make_jaxpr(lambda x: lax.switch(0, [jnp.sin, jnp.cos], x))(1.0).jaxpr
  next(e for e in jaxpr.eqns if e.primitive.name == "cond").params["branches"] = (4, 2)
  with pytest.raises(core.JaxprTypeError, match=r"invalid cond param branches of type tuple, "
                     r"tuple of ClosedJaxpr required: \(4, 2\)"):
    core.typecheck_jaxpr(jaxpr)


def test_cond_forwarded_python_scalar_is_an_array():
  y = lax.cond(True, lambda x: x, lambda x: x, 1.0)
  assert isinstance(y, xjax.Array) and y == 1.0 and y.aval.weak_type


def test_associative_scan_argument_errors():
  with pytest.raises(TypeError, match="lax.associative_scan: fn argument should be callable"):
    lax.associative_scan(42, jnp.ones(3))
  with pytest.raises(ValueError, match="axis 0 is out of bounds for array of dimension 0"):
    lax.associative_scan(lambda a, b: a + b, jnp.float32(1))


def test_scan_length_and_unroll_must_be_concrete():
  from xjax._src.errors import ConcretizationTypeError
  f = xjax.jit(lambda n, x: lax.scan(lambda c, z: (c, z), x, (), n))
  with pytest.raises(ConcretizationTypeError,
                     match="The `length` argument to `scan` expects a concrete `int` value"):
    f(3, 1.0)
  g = xjax.jit(lambda n, x: lax.scan(lambda c, z: (c, z), x, (), 10, unroll=n))
  for n in (3, True):
    with pytest.raises(ConcretizationTypeError, match="The `unroll` argument to `scan` "
                       "expects a concrete `int` or `bool` value"):
      g(n, 1.0)
  # Known values are fine, as NumPy scalars and under grad.
  assert lax.scan(lambda c, z: (c + 1, z), 0, (), np.int32(4), unroll=np.bool_(True))[0] == 4
  assert xjax.grad(lambda x: lax.scan(lambda c, z: (c * x, z), x, (), 3)[0])(2.0) == 32.0
