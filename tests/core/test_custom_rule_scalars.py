"""Custom-derivative rules and Python scalars, custom_vjp3's checks, custom_lin's printing.

As in JAX 0.10.2: a Python-scalar primal reaches custom_jvp/custom_vjp rules as a typed
scalar (a float subclass with a dtype), values nothing computed come back from vjp as they
are, custom_vjp3 refuses functions closing over tracers, and custom_lin prints its bwd rule
by name and its zero input tangents as `in_zeros`.
"""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax._src import config as config_lib
from xjax._src import literals
from xjax._src.interpreters import partial_eval as pe


def test_typed_scalars_compute_as_python_numbers_and_carry_a_dtype():
  x = literals.TypedFloat(1.5, np.float32)
  assert isinstance(x, float) and x.dtype == np.float32 and x.aval.weak_type
  assert type(x + 1) is float and x + 1 == 2.5
  assert repr(x) == "TypedFloat(1.5, dtype=float32)" and str(x) == "1.5"
  # The dtype is kept as given, whatever the x64 mode.
  assert jax.device_put(literals.TypedFloat(1, np.float64)).dtype == np.float64
  assert jax.device_put(literals.TypedInt(1, np.int64)).dtype == np.int64
  assert jax.device_put(literals.TypedComplex(1, np.complex64)).dtype == np.complex64
  assert jnp.asarray(x).weak_type
  assert repr(literals.typed_scalar(2)) == "TypedInt(2, dtype=int32)"
  assert literals.typed_scalar(True) is True


def test_custom_jvp_rule_gets_typed_scalar_primals():
  seen = []

  @jax.custom_jvp
  def f(s, x):
    return s * x

  @f.defjvp
  def f_jvp(primals, tangents):
    seen.append(primals)
    s, x = primals
    return f(s, x), s * tangents[1]

  out, t = jax.jvp(lambda x: f(2., x), (3.,), (1.,))
  s, x = seen[0]
  assert type(s) is literals.TypedFloat and s.dtype == np.float32
  assert type(x) is literals.TypedFloat
  # Nothing here computed an array: the outputs stay Python floats, as in JAX.
  assert isinstance(out, float) and out == 6. and isinstance(t, float) and t == 2.
  # A rule reading the primal's dtype works at the top of grad (scipy.special.expi's).
  np.testing.assert_allclose(jax.grad(jax.scipy.special.expi)(1.7), np.exp(1.7) / 1.7,
                             rtol=1e-6)


def test_custom_vjp_python_scalars_through_vjp():
  @jax.custom_vjp
  def f(s, x):
    return s + x

  seen = []

  def fwd(s, x):
    seen.append((s, x))
    return f(s, x), None

  def bwd(_, g):
    return g + 1, g + 2

  f.defvjp(fwd, bwd)
  out, f_vjp = jax.vjp(lambda x: f(1., x), 4.)
  assert all(type(v) is literals.TypedFloat for v in seen[0])
  assert isinstance(out, float) and out == 5.
  (ct,) = f_vjp(7.)
  assert isinstance(ct, float) and ct == 9.
  # grad still gives arrays: its seed cotangent is one.
  g = jax.grad(lambda x: f(1., x))(4.)
  assert isinstance(g, jax.Array) and g == 3.
  # An input returned as is, and a constant, come back unchanged; computed values are arrays.
  assert jax.vjp(lambda x: (x, 1.), 2.)[1]((3., 4.)) == (3.,)
  assert isinstance(jax.vjp(lambda x: x * 2., 2.)[0], jax.Array)


def _closing_over(x):
  @jax.custom_vjp
  def f(y):
    return x * y

  f.defvjp(lambda y: (f(y), jnp.cos(y)), lambda c, g: (c * g,))
  return f


def test_custom_vjp3_refuses_closed_over_tracers():
  g = jax.vmap(lambda x: _closing_over(x)(3.))
  # The default custom_vjp supports it (the closed-over value is a constant of the call).
  np.testing.assert_allclose(g(jnp.arange(3.)), [0., 3., 6.])
  with config_lib.custom_vjp3(True):
    with pytest.raises(jax.errors.UnexpectedTracerError, match="can't close over Tracers"):
      g(jnp.arange(3.))
    with pytest.raises(jax.errors.UnexpectedTracerError, match="closed over a BatchTracer"):
      jax.vmap(lambda x: jax.grad(_closing_over(x))(3.))(jnp.arange(3.))
    # No tracer closed over: fine.
    assert jax.grad(_closing_over(2.))(3.) == np.float32(np.cos(3.))


def test_custom_vjp3_fwd_output_type_mismatch_names_the_leaf():
  @jax.custom_vjp
  def f(x):
    return x

  f.defvjp(lambda x: (jnp.zeros((3,), x.dtype), None), lambda _, g: (g,))

  def scanned(x):
    return jax.lax.scan(lambda c, _: (f(c), None), x, None, length=1)[0]

  with pytest.raises(TypeError, match="fwd rule .* must produce a pair"):
    jax.grad(scanned)(jnp.float32(1.))
  with config_lib.custom_vjp3(True):
    with pytest.raises(TypeError, match=r"^at , got fwd output type float32\[3\] which doesn't "
                                        r"match primal output type float32\[\]"):
      jax.grad(scanned)(jnp.float32(1.))


def test_custom_lin_prints_bwd_by_name_and_in_zeros():
  @jax.custom_vjp
  def f(x, y):
    return x + y

  def f_bwd(_, g):
    return g, g

  f.defvjp(lambda x, y: (f(x, y), ()), f_bwd)
  x = jnp.array([4.2], jnp.float32)
  closed = jax.make_jaxpr(lambda x: jax.jvp(lambda a: f(a, x), (x,), (x,)))(x)
  jaxpr, _ = pe.dce_jaxpr(closed.jaxpr, [False, True])
  text = jaxpr.pretty_print(use_color=False)
  assert "bwd=f_bwd" in text and "in_zeros=[False, True]" in text
  assert "out_avals" not in text
  # Transposing it gives cotangents to the nonzero tangent inputs only.
  _, f_vjp = jax.vjp(lambda a: f(a, x), x)
  np.testing.assert_allclose(f_vjp(jnp.ones(1))[0], [1.])


def test_abstract_eval_result_kind_must_match_multiple_results():
  from xjax._src import core
  single = core.Primitive("single_returning_list")
  single.def_abstract_eval(lambda x: [x])
  single.def_impl(lambda x: x)
  with pytest.raises(ValueError, match=r"single_returning_list.abstract_eval\(\) method should "
                     "return a tuple or a list iff"):
    jax.jit(single.bind)(1.)
