"""jvp, linearize, vjp, grad and friends, custom rules, checkpoint: values and errors."""
import functools

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.test_util import check_grads


def _close(a, b, tol=1e-5):
  np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def test_jvp_of_sin_matches_docstring_example():
  primals, tangents = xjax.jvp(jnp.sin, (0.1,), (0.2,))
  _close(primals, np.sin(0.1))
  _close(tangents, 0.2 * np.cos(0.1))


def test_jvp_argument_errors():
  with pytest.raises(TypeError, match="must be tuples or lists; found float and float"):
    xjax.jvp(jnp.sin, 0.1, 0.2)
  with pytest.raises(TypeError, match="must have the same tree structure"):
    xjax.jvp(lambda x, y: x, (1.0, 2.0), (1.0,))
  with pytest.raises(TypeError, match="dtypes must be equal"):
    xjax.jvp(jnp.sin, (jnp.float32(1.0),), (jnp.int32(1),))
  with pytest.raises(ValueError, match="different primal and tangent shapes"):
    xjax.jvp(jnp.sin, (jnp.ones(3),), (jnp.ones(2),))


def test_grad_argnums_and_value_and_grad():
  f = lambda x, y: x * x * y + jnp.sin(y)
  _close(xjax.grad(f)(2.0, 3.0), 12.0)
  gx, gy = xjax.grad(f, argnums=(0, 1))(2.0, 3.0)
  _close(gx, 12.0)
  _close(gy, 4.0 + np.cos(3.0))
  value, g = xjax.value_and_grad(f, argnums=1)(2.0, 3.0)
  _close(value, 12.0 + np.sin(3.0))
  _close(g, 4.0 + np.cos(3.0))


def test_grad_has_aux():
  def loss(w):
    y = w * 3.0
    return y * y, {"y": y}
  g, aux = xjax.grad(loss, has_aux=True)(2.0)
  _close(g, 36.0)
  _close(aux["y"], 6.0)
  assert isinstance(aux["y"], xjax.Array)


def test_has_aux_passes_non_array_leaves_through_unchanged():
  # As in JAX: aux leaves that are not traced values (strings, ints, classes, concrete
  # arrays) come back as they were returned; traced ones come back as primal arrays.
  const = jnp.ones(1)

  def f(x):
    return jnp.sum(x ** 2), {"s": "str", "n": 3, "cls": object, "c": const, "a": x * 2}

  x = jnp.array([1.0, 2.0])
  results = [xjax.grad(f, has_aux=True)(x)[1],
             xjax.value_and_grad(f, has_aux=True)(x)[0][1],
             xjax.vjp(f, x, has_aux=True)[2],
             xjax.linearize(f, x, has_aux=True)[2],
             xjax.jvp(f, (x,), (x,), has_aux=True)[2],
             xjax.jit(lambda x: xjax.grad(f, has_aux=True)(x)[1]["a"])(x)]
  for aux in results[:-1]:
    assert aux["s"] == "str" and aux["n"] == 3 and type(aux["n"]) is int
    assert aux["cls"] is object and aux["c"] is const
    assert isinstance(aux["a"], xjax.Array) and not isinstance(aux["a"], xjax.core.Tracer)
    _close(aux["a"], [2.0, 4.0])
  _close(results[-1], [2.0, 4.0])


def test_grad_of_pytree_argument():
  params = {"w": jnp.array([1.0, 2.0]), "b": jnp.array(0.5)}
  def loss(p):
    return jnp.sum(p["w"] * p["w"]) + p["b"] * 3.0
  g = xjax.grad(loss)(params)
  _close(g["w"], [2.0, 4.0])
  _close(g["b"], 3.0)


def test_grad_errors_match_jax():
  with pytest.raises(TypeError, match=r"Gradient only defined for scalar-output functions\. Output had shape: \(3,\)\."):
    xjax.grad(lambda x: x * jnp.ones(3))(1.0)
  with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
    xjax.grad(lambda x: x * 2.0)(1)
  with pytest.raises(TypeError, match="requires at least 3 positional arguments"):
    xjax.grad(lambda x: x, argnums=2)(1.0)
  with pytest.raises(TypeError, match="grad requires real-valued outputs"):
    xjax.grad(lambda x: lax.complex(x, x))(1.0)


def test_grad_allow_int_gives_float0_zeros():
  g = xjax.grad(lambda x, n: x * 2.0, argnums=(0, 1), allow_int=True)(1.5, 3)
  _close(g[0], 2.0)
  assert g[1].dtype == xjax.dtypes.float0 and g[1].shape == ()


def test_python_control_flow_on_concrete_values_under_grad():
  def f(x):
    if x < 3:
      return 3. * x ** 2
    return -4 * x
  _close(xjax.grad(f)(2.), 12.0)
  _close(xjax.grad(f)(4.), -4.0)


def test_grad_of_jit_and_jit_of_grad_and_grad_of_grad():
  f = lambda x: jnp.sin(x) * x
  expected = np.cos(2.0) * 2.0 + np.sin(2.0)
  _close(xjax.grad(xjax.jit(f))(2.0), expected)
  _close(xjax.jit(xjax.grad(f))(2.0), expected)
  _close(xjax.grad(xjax.grad(f))(2.0), -np.sin(2.0) * 2.0 + 2 * np.cos(2.0))


def test_linearize_matches_jvp():
  f = lambda x: jnp.sin(x) * jnp.cos(x)
  y, f_jvp = xjax.linearize(f, 1.3)
  _close(y, np.sin(1.3) * np.cos(1.3))
  _close(f_jvp(2.0), 2.0 * np.cos(2.6))


def test_vjp_cotangent_errors():
  _, pullback = xjax.vjp(lambda x: x * 2.0, jnp.ones(3))
  with pytest.raises(ValueError, match="unexpected JAX type \\(e.g. shape/dtype\\) for argument"):
    pullback(jnp.ones(2))
  with pytest.raises(ValueError, match="unexpected tree structure"):  # JAX 0.10.2's
    pullback((jnp.ones(3),))


def test_grad_tracer_prints_as_grad_tracer(capsys):
  def f(x):
    print(x)
    return x * x
  xjax.grad(f)(6.0)
  assert capsys.readouterr().out == "GradTracer(primal=6.0, typeof(tangent)=f32[])\n"


def test_stop_gradient():
  f = lambda x: x * lax.stop_gradient(x)
  _close(xjax.grad(f)(3.0), 3.0)
  assert "stop_gradient" in str(xjax.make_jaxpr(lax.stop_gradient)(1.0))


def test_custom_jvp_rule_is_used_and_composes():
  @xjax.custom_jvp
  def f(x, y):
    return jnp.sin(x) * y

  @f.defjvp
  def f_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    return f(x, y), jnp.cos(x) * x_dot * y + jnp.sin(x) * y_dot

  _close(f(2., 3.), np.sin(2.) * 3.)
  _close(xjax.grad(f)(2., 3.), 3 * np.cos(2.))
  _close(xjax.grad(xjax.jit(f))(2., 3.), 3 * np.cos(2.))
  _close(xjax.jit(xjax.grad(f))(2., 3.), 3 * np.cos(2.))
  _close(xjax.grad(xjax.grad(f))(2., 3.), -3 * np.sin(2.))


def test_custom_jvp_defjvps_and_nondiff_argnums():
  @xjax.custom_jvp
  def triple_gradient(x):
    return x
  triple_gradient.defjvps(lambda g, ans, x: g * 3.0)
  _close(xjax.grad(lambda x: triple_gradient(x) * 5.0)(2.0), 15.0)

  @functools.partial(xjax.custom_jvp, nondiff_argnums=(0,))
  def app(f, x):
    return f(x)

  @app.defjvp
  def app_jvp(f, primals, tangents):
    (x,), (t,) = primals, tangents
    return app(f, x), 2.0 * t

  _close(xjax.grad(lambda x: app(jnp.sin, x))(1.0), 2.0)


def test_custom_jvp_rule_output_errors():
  @xjax.custom_jvp
  def f(x):
    return x

  f.defjvp(lambda p, t: p[0])
  with pytest.raises(TypeError, match="Custom JVP rule <lambda> for function f must produce a pair"):
    xjax.jvp(f, (1.0,), (1.0,))


def test_custom_vjp_rule_is_used():
  @xjax.custom_vjp
  def f(x, y):
    return jnp.sin(x) * y

  def fwd(x, y):
    return f(x, y), (jnp.cos(x), jnp.sin(x), y)

  def bwd(res, g):
    cos_x, sin_x, y = res
    return (cos_x * g * y, sin_x * g)

  f.defvjp(fwd, bwd)
  gx, gy = xjax.grad(f, argnums=(0, 1))(2., 3.)
  _close(gx, 3 * np.cos(2.))
  _close(gy, np.sin(2.))
  _close(xjax.grad(xjax.jit(f))(2., 3.), 3 * np.cos(2.))
  with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
    xjax.jvp(f, (2., 3.), (1., 0.))


def test_custom_vjp_bwd_none_means_zero_and_nondiff():
  @functools.partial(xjax.custom_vjp, nondiff_argnums=(1,))
  def scale(x, k):
    return x * k

  scale.defvjp(lambda x, k: (scale(x, k), None), lambda k, res, g: (g * k * 10.0,))
  _close(xjax.grad(scale)(1.0, 2.0), 20.0)


def test_checkpoint_values_and_gradients_and_recomputation():
  def f(x):
    return jnp.sin(jnp.sin(x)) * 2.0
  remat_f = xjax.checkpoint(f)
  _close(remat_f(0.7), f(0.7))
  _close(xjax.grad(remat_f)(0.7), xjax.grad(f)(0.7))
  # The staged linear part recomputes the sines: they appear in the grad jaxpr twice.
  text = str(xjax.make_jaxpr(xjax.grad(remat_f))(0.7))
  assert text.count("sin") >= 2
  saved = xjax.checkpoint(f, policy=xjax.checkpoint_policies.everything_saveable)
  _close(xjax.grad(saved)(0.7), xjax.grad(f)(0.7))


def test_checkpoint_static_argnums():
  def f(x, n):
    for _ in range(n):
      x = jnp.sin(x)
    return x
  g = xjax.checkpoint(f, static_argnums=(1,))
  _close(xjax.grad(g)(0.5, 2), xjax.grad(lambda x: f(x, 2))(0.5))


def test_jacfwd_jacrev_hessian():
  A = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]], np.float32)
  f = lambda x: jnp.tanh(jnp.dot(A, x))
  x = jnp.array([0.1, -0.2, 0.3])
  expected = (1 - np.tanh(A @ np.asarray(x)) ** 2)[:, None] * A
  _close(xjax.jacfwd(f)(x), expected)
  _close(xjax.jacrev(f)(x), expected)
  _close(xjax.jacobian(f)(x), expected)
  g = lambda x: jnp.sum(x ** 3)
  _close(xjax.hessian(g)(x), np.diag(6 * np.asarray(x)))
  _close(xjax.jit(xjax.jacrev(f))(x), expected)


def test_leaked_jvp_tracer_is_an_error():
  saved = []
  xjax.grad(lambda x: saved.append(x) or x * 2.0)(1.0)
  with pytest.raises(xjax.errors.UnexpectedTracerError):
    xjax.jit(lambda y: y + saved[0])(1.0)


def test_nan_gradient_through_where_and_safe_double_where():
  def my_log(x):
    return jnp.where(x > 0., jnp.log(x), 0.)
  assert float(my_log(0.)) == 0.0
  assert np.isnan(float(xjax.grad(my_log)(0.)))

  def safe_for_grad_log(x):
    return jnp.log(jnp.where(x > 0., x, 1.))
  assert float(safe_for_grad_log(0.)) == 0.0
  assert float(xjax.grad(safe_for_grad_log)(0.)) == 0.0


def test_check_grads_on_a_composite():
  f = lambda x, y: jnp.sum(jnp.sin(x) * y + x ** 2)
  check_grads(f, (np.array([0.3, -0.4], np.float32), np.array([1.2, 0.5], np.float32)),
              order=2, modes=("fwd", "rev"))


def test_closure_convert_hoists_closed_over_values():
  c = jnp.array([1.0, 2.0])
  def f(x):
    return jnp.sum(x * c)
  converted, consts = xjax.closure_convert(f, jnp.ones(2))
  assert consts == []  # concrete values stay closed over, as in JAX
  _close(converted(jnp.ones(2)), 3.0)

  def g(c):
    fn, cs = xjax.closure_convert(lambda x: jnp.sum(x * c), jnp.ones(2))
    assert len(cs) == 1  # a jit tracer is hoisted
    return fn(jnp.ones(2), jnp.array([5.0, 5.0]))
  _close(xjax.jit(g)(c), 10.0)


def test_transformed_functions_wrap_their_function_like_jax():
  # As JAX's `util.wraps`: the name and `__wrapped__` chain lead back to the function, and
  # a callable object whose `__name__` is not a string (an equinox Module field) is fine.
  def loss(x):
    return jnp.sum(x ** 3)

  for transform in (xjax.grad, xjax.value_and_grad, xjax.jacfwd, xjax.jacrev, xjax.hessian,
                    xjax.vmap, xjax.make_jaxpr):
    wrapped = transform(loss)
    expected = "make_jaxpr(loss)" if transform is xjax.make_jaxpr else "loss"
    assert wrapped.__name__ == expected, transform
    inner = wrapped
    while getattr(inner, "__wrapped__", None) is not None and inner is not loss:
      inner = inner.__wrapped__
    assert inner is loss, transform

  class Cube:
    __name__ = 3  # not a string: functools.wraps would raise TypeError

    def __call__(self, x):
      return x ** 3

  _close(xjax.grad(Cube())(2.0), 12.0)
  _close(xjax.jacfwd(Cube())(2.0), 12.0)
  _close(xjax.jacrev(Cube())(2.0), 12.0)
  _close(xjax.vmap(Cube())(jnp.array([1.0, 2.0])), [1.0, 8.0])


def test_vjp_and_linearize_functions_are_pytrees_of_their_residuals():
  # As in JAX: pytrees whose leaves are the residuals, so they pass into and
  # out of jitted functions and give the same values there.
  f = lambda x: jnp.sin(x) * x
  x, t = jnp.arange(3.0), jnp.array([1.0, -2.0, 0.5])
  _, f_jvp = xjax.linearize(f, x)
  _, f_vjp = xjax.vjp(f, x)
  # linearize's is a Partial; vjp's is JAX's VJP object, a pytree of its residuals too.
  assert isinstance(f_jvp, xjax.tree_util.Partial)
  assert type(f_vjp).__name__ == "VJP"
  for g in (f_jvp, f_vjp):
    assert len(xjax.tree_util.tree_leaves(g)) > 0
  want_jvp = (jnp.cos(x) * x + jnp.sin(x)) * t
  np.testing.assert_allclose(f_jvp(t), want_jvp, rtol=1e-6)
  np.testing.assert_allclose(xjax.jit(lambda g, t: g(t))(f_jvp, t), want_jvp, rtol=1e-6)
  np.testing.assert_allclose(xjax.jit(lambda g, t: g(t))(f_vjp, t)[0], want_jvp, rtol=1e-6)
  returned = xjax.jit(lambda x: xjax.vjp(f, x)[1])(x)
  np.testing.assert_allclose(returned(t)[0], want_jvp, rtol=1e-6)
  with pytest.raises(ValueError, match="unexpected tree structure"):
    f_vjp((t, t))
  with pytest.raises(TypeError, match="applied to <lambda> was called with 2 arguments.*must be "
                     "called with a single argument"):
    f_vjp(t, t)
  with pytest.raises(TypeError, match="missing 1 required positional argument"):
    f_vjp()


def test_instantiated_zero_tangents_keep_the_weak_type():
  # As in JAX: the zero tangent of a weakly typed output (a Python scalar) is weak.
  for run in (lambda f: f, xjax.jit):
    _, t = run(lambda x: xjax.jvp(lambda x: 1.0, (x,), (x,)))(2.0)
    assert t.dtype == jnp.float32 and t.weak_type and float(t) == 0.0
  _, (t_x, t_c) = xjax.jvp(lambda x: (x, 1.0), (jnp.ones(2),), (jnp.ones(2),))
  assert not t_x.weak_type and t_c.weak_type
  _, t = xjax.jvp(lambda x: jnp.ones(3) * 2.0, (2.0,), (1.0,))
  assert not t.weak_type  # a strongly typed output's zero stays strong


def test_integer_inputs_are_unperturbed_under_linearize_and_jvp():
  # As in JAX: an integer input's float0 tangent is a symbolic zero, so a custom_vjp
  # forward rule (symbolic_zeros=True) sees it unperturbed.
  seen = []

  @xjax.custom_vjp
  def f(x, n):
    return x * 2.0

  def fwd(x, n):
    seen.append((x.perturbed, n.perturbed))
    return f(x.value, n.value), None
  f.defvjp(fwd, lambda res, g: (g * 2.0, None), symbolic_zeros=True)
  out, f_jvp = xjax.linearize(f, 1.0, 3)
  assert seen == [(True, False)] and float(out) == 2.0
  with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):  # JAX's too
    f_jvp(1.0, np.zeros((), xjax.dtypes.float0))
  seen.clear()
  assert float(xjax.grad(f)(1.0, 3)) == 2.0 and seen == [(True, False)]
  assert jnp.zeros((2,), xjax.dtypes.float0).dtype == xjax.dtypes.float0


def test_custom_rules_see_concrete_primals_under_jvp_and_grad():
  # As in JAX: at the top of jvp/grad the primal function and its rules run on concrete
  # values (the call is not traced first), so they may branch on them in Python.
  @xjax.custom_jvp
  def f(x):
    return jnp.sin(x) if x > 0 else jnp.cos(x)

  @f.defjvp
  def f_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return f(x), (2.0 if x > 0 else 3.0) * t

  @xjax.custom_vjp
  def g(x):
    return jnp.sin(x) if x > 0 else jnp.cos(x)

  g.defvjp(lambda x: (g(x), x), lambda x, ct: ((2.0 if x > 0 else 3.0) * ct,))
  for x, slope in [(2.0, 2.0), (-2.0, 3.0)]:
    _close(xjax.jvp(f, (x,), (1.0,))[1], slope)
    _close(xjax.grad(f)(x), slope)
    _close(xjax.value_and_grad(g)(x), (np.sin(x) if x > 0 else np.cos(x), slope))
    _close(xjax.grad(lambda y: xjax.grad(f)(y) * y)(x), slope)  # nested: still concrete


def test_custom_jvp_nondiff_tracer_has_its_gradient_stopped():
  from functools import partial

  @partial(xjax.custom_jvp, nondiff_argnums=(0,))
  def scale(a, x):
    return a * x

  @scale.defjvp
  def scale_jvp(a, primals, tangents):
    return scale(a, primals[0]), a * tangents[0]

  # A traced nondiff argument is allowed (JAX's custom_jvp closes over it) and is not
  # differentiated: d/da of scale(a, 3) is 0.
  _close(xjax.grad(lambda a: scale(a, 3.0))(2.0), 0.0)
  _close(xjax.vmap(lambda a: scale(a, 3.0))(jnp.arange(3.0)), [0.0, 3.0, 6.0])
  _close(xjax.grad(lambda x: scale(2.0, x))(3.0), 2.0)


def test_custom_rule_errors_name_the_rule_and_function():
  @xjax.custom_jvp
  def f(x):
    return (x ** 2,)

  @f.defjvp
  def f_jvp(primals, tangents):
    return f(primals[0]), [tangents[0], tangents[0]]

  with pytest.raises(TypeError, match=r"Custom JVP rule f_jvp for function f must produce "
                     r"primal and tangent outputs with equal container"):
    xjax.jvp(f, (2.0,), (1.0,))

  @xjax.custom_vjp
  def g(x):
    return x

  def g_fwd(x):
    return (x, x), None
  g.defvjp(g_fwd, lambda res, ct: (ct,))
  with pytest.raises(TypeError, match=r"Custom VJP fwd rule g_fwd for function g must "
                     r"produce a pair .* container/pytree structure"):
    xjax.grad(lambda x: xjax.jit(g)(x))(1.0)


def test_custom_rules_closing_over_vmapped_values():
  # The rule closes over a value of the enclosing vmap (JAX's issue 8783): it is batched
  # under a trace of the same vmap, so the closed-over value is the batch's own.
  def h(z):
    def f(x):
      @xjax.custom_jvp
      def g(y):
        return x * y

      @g.defjvp
      def g_jvp(primals, tangents):
        return x * primals[0], x * tangents[0]
      return g(z)
    return xjax.vmap(f)(jnp.arange(3.0))

  primals, tangents = xjax.jvp(h, (1.0,), (2.0,))
  _close(primals, [0.0, 1.0, 2.0])
  _close(tangents, [0.0, 2.0, 4.0])


def test_custom_jvp_rule_may_batch_what_the_function_does_not():
  @xjax.custom_jvp
  def f(x):
    return np.zeros(x.shape, x.dtype)  # does not depend on x

  f.defjvp(lambda primals, tangents: (f(primals[0]), tangents[0]))
  _close(xjax.grad(lambda x: xjax.vmap(f)(x).sum())(jnp.arange(3.0)), [1.0, 1.0, 1.0])
  _close(xjax.jvp(xjax.vmap(f), (jnp.arange(3.0),), (jnp.ones(3),))[1], [1.0, 1.0, 1.0])


def test_custom_call_binds_defaults_and_reports_missing_arguments():
  @xjax.custom_jvp
  def f(x, y=2.0):
    return x * y

  seen = []

  @f.defjvp
  def f_jvp(primals, tangents):
    seen.append(len(primals))
    return f(*primals), tangents[0] * primals[1]

  _close(xjax.grad(f)(3.0), 2.0)
  assert seen == [2]  # the default is one of the rule's primals, as in JAX
  with pytest.raises(TypeError, match="custom_jvp-decorated function f could not be "
                     "resolved.*\nmissing a required argument: 'x'"):
    f()
  with xjax.ensure_compile_time_eval():  # concrete under jit: runs eagerly
    assert xjax.jit(lambda: f(1.0) + (1.0 if f(1.0) > 0 else 0.0))() == 3.0


def test_optimize_remat_fwd_becomes_the_primal_where_residuals_go_unused():
  from xjax._src.custom_remat_opt import optimize_remat_of_custom_vjp_fwd
  fun = lambda x: np.ones(np.shape(x), np.float32) * x  # a constant in its jaxpr
  fwd = optimize_remat_of_custom_vjp_fwd(
      fun, None, lambda x: (2.0 * x * x, (2.0 * x,)), None)
  x = jnp.linspace(0.0, 5.0, 4)
  # The functions differ on purpose, to tell which one ran.
  _close(xjax.jit(fwd)(x)[0], 2 * x * x)  # residuals returned: fwd runs
  _close(xjax.jit(lambda x: fwd(x)[0])(x), x)  # residuals unused: the primal function
  _close(xjax.jit(lambda x: xjax.vmap(fwd)(x)[0])(x), x)
  _close(xjax.jit(lambda x: xjax.jvp(fwd, (x,), (jnp.ones(4),))[1][0])(x), np.ones(4))

  @xjax.custom_vjp
  def f(x):
    return jnp.tan(x)

  def f_fwd(x):
    return jnp.sin(x), (x,)  # its residual is its input: no output of the equation

  f.defvjp(f_fwd, lambda res, g: (jnp.cos(res[0]) * g,), optimize_remat=True)
  value, grad = xjax.value_and_grad(lambda x: xjax.checkpoint(f)(x) ** 2)(3.2)
  # Under checkpoint the forward pass keeps no residual: the primal function gives the value.
  _close(value, np.tan(3.2) ** 2)
  _close(grad, 2 * np.tan(3.2) * np.cos(3.2))  # out ** 2 pulled back through bwd


def test_disable_bwd_checks_lets_a_mistyped_cotangent_through():
  @xjax.custom_vjp
  def foo(x, y):
    return x

  foo.defvjp(lambda x, y: (x, None), lambda _, g: (jnp.zeros(3), jnp.zeros(3)))
  loss = lambda x, y: foo(x, y).sum()
  with pytest.raises(ValueError, match="must produce an output with the same type"):
    xjax.grad(loss, 1)(jnp.ones(3), jnp.ones(4))
  from xjax._src import config as config_lib
  with config_lib.disable_bwd_checks(True):
    xjax.grad(loss, 1)(jnp.ones(3), jnp.ones(4))  # unchecked, as JAX with the flag
