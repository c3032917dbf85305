"""jit: tracing once per signature, static and donated arguments, pytrees, AOT, errors."""
import functools
import warnings
from collections import namedtuple

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import errors


def _counting(fun):
  """`fun` wrapped so that `wrapper.traces` counts how often Python runs it."""
  @functools.wraps(fun)
  def wrapper(*args, **kwargs):
    wrapper.traces += 1
    return fun(*args, **kwargs)
  wrapper.traces = 0
  return wrapper


def test_jit_traces_once_per_shape_and_dtype():
  f = _counting(lambda x: x * 2)
  g = xjax.jit(f)
  g(jnp.ones(3))
  g(jnp.zeros(3))
  assert f.traces == 1
  g(jnp.ones(4))
  assert f.traces == 2
  g(jnp.ones(3, jnp.int32))
  assert f.traces == 3


def test_jit_cache_is_shared_by_wrappers_of_one_function():
  f = _counting(lambda x: x + 1)
  xjax.jit(f)(1.0)
  xjax.jit(f)(2.0)
  assert f.traces == 1


def test_jit_weak_and_strong_scalars_trace_separately():
  f = _counting(lambda x: x)
  g = xjax.jit(f)
  weak = g(1.0)
  strong = g(jnp.float32(1.0))
  assert f.traces == 2
  assert weak.weak_type and not strong.weak_type
  assert repr(xjax.jit(lambda x: x)(4)) == "Array(4, dtype=int32, weak_type=True)"


def test_jit_static_argnums_retrace_on_new_value():
  f = _counting(lambda x, neg: -x if neg else x)
  g = xjax.jit(f, static_argnums=(1,))
  assert repr(g(1, True)) == "Array(-1, dtype=int32, weak_type=True)"
  assert repr(g(1, False)) == "Array(1, dtype=int32, weak_type=True)"
  g(2, True)
  assert f.traces == 2


def test_jit_static_argnames_and_inference_from_argnums():
  def f(x, *, power):
    return x ** power
  g = xjax.jit(f, static_argnames="power")
  np.testing.assert_allclose(g(jnp.array([0.0, 1.0, 2.0]), power=3), [0.0, 1.0, 8.0])

  def h(x, n):
    return x * n
  by_num = xjax.jit(h, static_argnums=1)
  np.testing.assert_allclose(by_num(jnp.ones(2), n=3), [3.0, 3.0])


def test_jit_unhashable_static_value_raises_jax_error():
  g = xjax.jit(lambda x, shape: x, static_argnums=1)
  with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
    g(1.0, [1, 2])


def test_jit_static_argnums_out_of_range_raises():
  with pytest.raises(ValueError, match=r"static_argnums=\(3,\), but only accepts 1"):
    xjax.jit(lambda x: x, static_argnums=3)


def test_jit_pytrees_in_and_out():
  Point = namedtuple("Point", "x y")

  @xjax.jit
  def f(tree, scale=1.0):
    a, b = tree["pair"]
    return {"sum": a + b, "point": Point(a * scale, b), "none": None}

  out = f({"pair": (jnp.ones(2), jnp.array([0.0, 1.0]))}, scale=3.0)
  assert set(out) == {"sum", "point", "none"}
  assert out["none"] is None
  assert isinstance(out["point"], Point)
  np.testing.assert_allclose(out["sum"], [1.0, 2.0])
  np.testing.assert_allclose(out["point"].x, [3.0, 3.0])


def test_jit_keyword_arguments_are_traced():
  f = _counting(lambda x, y: x - y)
  g = xjax.jit(f)
  assert float(g(3.0, y=1.0)) == 2.0
  assert float(g(y=1.0, x=5.0)) == 4.0
  # As in JAX 0.10.2: the keyword names are part of the signature, their values are not.
  assert f.traces == 2
  assert float(g(y=2.0, x=7.0)) == 5.0 and float(g(4.0, y=2.0)) == 2.0
  assert f.traces == 2
  assert float(g(4.0, 2.0)) == 2.0
  assert f.traces == 3


def test_jit_numpy_and_python_inputs():
  g = xjax.jit(lambda x, y: x * y)
  out = g(np.arange(3, dtype=np.float32), 2)
  assert out.dtype == np.float32
  np.testing.assert_allclose(out, [0.0, 2.0, 4.0])


def test_jit_float64_numpy_input_is_canonicalized():
  out = xjax.jit(lambda x: x)(np.ones(2))
  assert out.dtype == np.float32


def test_nested_jit_runs_and_traces_inner_once():
  inner_f = _counting(lambda x: jnp.sin(x) * 2)
  inner = xjax.jit(inner_f)

  @xjax.jit
  def outer(x):
    return inner(x) + inner(x + 1)

  np.testing.assert_allclose(outer(jnp.ones(3)), np.sin(1) * 2 + np.sin(2) * 2, rtol=1e-6)
  assert inner_f.traces == 1


def test_jit_closure_over_outer_tracer():
  @xjax.jit
  def outer(x):
    y = x * 2
    return xjax.jit(lambda z: z + y)(x)

  np.testing.assert_allclose(outer(jnp.array([0.0, 1.0, 2.0])), [0.0, 3.0, 6.0])


def test_jit_method_binding():
  class Scaler:
    def __init__(self, k):
      self.k = k

    @functools.partial(xjax.jit, static_argnums=0)
    def apply(self, x):
      return x * self.k

  s = Scaler(3.0)
  np.testing.assert_allclose(s.apply(jnp.ones(2)), [3.0, 3.0])


def test_jit_lower_as_text_and_compile():
  f = xjax.jit(lambda x, y: x + y)
  x = jnp.ones((2, 3))
  lowered = f.lower(x, x)
  text = lowered.as_text()
  assert "func.func public @main" in text and "stablehlo.add" in text
  compiled = lowered.compile()
  np.testing.assert_allclose(compiled(x, x), 2 * np.ones((2, 3)))
  with pytest.raises(TypeError, match="Argument types differ"):
    compiled(jnp.ones(3), jnp.ones(3))


def test_lowered_compiler_ir_hlo_is_an_xla_computation():
  # As in JAX: compiler_ir('hlo') is jaxlib's XlaComputation; as_text('hlo') its text.
  lowered = xjax.jit(lambda x: jnp.abs(x) ** 2).lower(jnp.ones(3))
  computation = lowered.compiler_ir(dialect="hlo")
  text = computation.as_hlo_text()
  assert text.startswith("HloModule") and "ENTRY" in text and "abs" in text
  assert lowered.as_text(dialect="hlo") == text
  assert isinstance(computation.as_serialized_hlo_module_proto(), bytes)
  with pytest.raises(ValueError, match="Unknown dialect 'mhlo'"):
    lowered.compiler_ir(dialect="mhlo")


def test_inspect_signature_of_jitted_function():
  # As JAX's jitted functions: the wrapped function's signature, even without following
  # __wrapped__ (chex's fake pmap asks so).
  import inspect

  def f(x, y=2, *, z=3):
    return x + y + z

  for follow in (True, False):
    assert str(inspect.signature(xjax.jit(f), follow_wrapped=follow)) == "(x, y=2, *, z=3)"
  assert str(inspect.signature(xjax.jit(f, static_argnums=1))) == "(x, y=2, *, z=3)"
  assert repr(xjax.jit(f)) == f"<PjitFunction of {f!r}>"  # as JAX prints it


def test_jit_trace_gives_jaxpr():
  traced = xjax.jit(lambda x: jnp.sin(x)).trace(jnp.ones(3))
  assert "sin" in str(traced.jaxpr)


def test_disable_jit_runs_python_each_call():
  f = _counting(lambda x: x + 1)
  g = xjax.jit(f)
  with xjax.disable_jit():
    g(1.0)
    g(2.0)
  assert f.traces == 2


def test_jit_bool_of_tracer_raises_tracer_bool_conversion_error():
  @xjax.jit
  def f(x, neg):
    return -x if neg else x
  with pytest.raises(errors.TracerBoolConversionError) as info:
    f(1, True)
  message = str(info.value)
  assert message.startswith("Attempted boolean conversion of traced array with shape bool[].")
  assert "depends on the value of the argument neg" in message


def test_donation_deletes_donated_input():
  x = xjax.device_put(np.ones((2, 3), np.float32))
  y = xjax.device_put(np.ones((2, 3), np.float32))
  z = xjax.jit(lambda a, b: a + b, donate_argnums=(1,))(x, y)
  np.testing.assert_allclose(z, 2 * np.ones((2, 3)))
  assert y.is_deleted() and not x.is_deleted()
  with pytest.raises(RuntimeError, match="deleted"):
    np.asarray(y)


def test_donation_unusable_buffer_warns():
  x = xjax.device_put(np.ones((2, 3), np.float32))
  y = xjax.device_put(np.ones((1, 3), np.float32))
  with pytest.warns(UserWarning, match=r"Some donated buffers were not usable: float32\[1,3\]"):
    xjax.jit(lambda a, b: a + b, donate_argnums=(1,))(x, y)


def test_leaked_tracer_raises_unexpected_tracer_error():
  saved = []

  @xjax.jit
  def f(x):
    saved.append(x * 2)
    return x

  f(1.0)
  with pytest.raises(errors.UnexpectedTracerError, match="Encountered an unexpected tracer"):
    saved[0] + 1


def test_jit_non_array_argument_names_the_path():
  def f(x):
    return x
  with pytest.raises(TypeError, match="passed to the function at path x"):
    xjax.jit(f)("a string")


def test_jit_rejects_non_callable():
  with pytest.raises(TypeError, match="Expected a callable value, got 3"):
    xjax.jit(3)


def test_jit_output_of_python_constant():
  out = xjax.jit(lambda x: (x, 1.0))(jnp.ones(2))
  assert repr(out[1]) == "Array(1., dtype=float32, weak_type=True)"


def test_make_jaxpr_static_argnums_and_return_shape():
  def f(x, n):
    for _ in range(n):
      x = x * 2.0
    return x
  closed, shape = xjax.make_jaxpr(f, static_argnums=1, return_shape=True)(jnp.ones(2), 2)
  assert len(closed.eqns) == 2
  assert [e.primitive.name for e in closed.jaxpr.eqns] == ["mul", "mul"]
  assert repr(shape) == "ShapeDtypeStruct(shape=(2,), dtype=float32)"
  assert closed.jaxpr.invars[0].aval == xjax.ShapedArray((2,), np.float32)


def test_make_jaxpr_consts_are_inspectable():
  c = np.arange(3.0, dtype=np.float32)
  closed = xjax.make_jaxpr(lambda x: x * c)(jnp.ones(3))
  assert len(closed.consts) == 1
  np.testing.assert_array_equal(closed.consts[0], c)
  assert str(closed).startswith("{ lambda a:f32[3]; b:f32[3]. let")


def test_eval_shape_traces_once_and_runs_nothing():
  seen = []

  @_counting
  def f(x):
    seen.append(x)
    return jnp.dot(x, x.T)

  # Running f would take terabytes: eval_shape only traces it, with abstract values.
  out = xjax.eval_shape(f, xjax.ShapeDtypeStruct((2_000_000, 1_000_000), jnp.float32))
  assert out == xjax.ShapeDtypeStruct((2_000_000, 2_000_000), jnp.float32)
  assert f.traces == 1
  assert isinstance(seen[0], xjax.core.Tracer)
  # Like JAX, a second call at the same shapes reuses the trace.
  xjax.eval_shape(f, xjax.ShapeDtypeStruct((2_000_000, 1_000_000), jnp.float32))
  assert f.traces == 1
  xjax.eval_shape(f, xjax.ShapeDtypeStruct((3, 1), jnp.float32))
  assert f.traces == 2


def test_jit_respects_x64_flag(x64):
  out = xjax.jit(lambda x: x * 2)(np.ones(2))
  assert out.dtype == np.float64


def test_jit_returns_float0_outputs_as_numpy_zeros():
  # As in JAX: no device array has dtype float0, so a jitted function's float0 output (the
  # cotangent of an integer input) is NumPy float0 zeros, on every call (cached ones too).
  grad = xjax.jit(lambda x: xjax.grad(lambda a, b: a * b, argnums=(0, 1), allow_int=True)(x, 2))
  for _ in range(3):
    ga, gb = grad(3.0)
    assert isinstance(ga, xjax.Array) and float(ga) == 2.0
    assert type(gb) is np.ndarray and gb.dtype == xjax.dtypes.float0 and gb.shape == ()
    assert (gb == gb).all()
  out = xjax.jit(lambda x: (x, np.zeros((2,), xjax.dtypes.float0)))(1.0)
  assert type(out[1]) is np.ndarray and out[1].shape == (2,)


def test_jit_argnum_resolution_and_validation_as_jax():
  import functools
  import pickle
  from xjax._src import api_util

  def f(x, y):
    return x if isinstance(y, str) else x + y

  # Both given: kept as they are, even where they disagree (no inference).
  assert xjax.jit(f, static_argnums=1, static_argnames=())(2, "s") == 2
  assert xjax.jit(f, static_argnums=1, static_argnames=())(2, y=3) == 5
  with pytest.raises(ValueError, match="invalid argnames {'z'} in static_argnames"):
    xjax.jit(f, static_argnames=("x", "z"))
  with pytest.raises(ValueError, match="positional-only"):
    xjax.jit(lambda a, /, b: a, static_argnames="a")
  with pytest.raises(ValueError, match="static_argnames and donate_argnames cannot intersect"):
    xjax.jit(lambda x: x, static_argnames="x", donate_argnames="x")
  # No readable signature: nothing to check, but donate_argnames cannot be resolved.
  assert api_util.resolve_argnums(int, None, None, None, None, None) == ((), (), (), ())
  with pytest.raises(ValueError, match="Pass donate_argnums instead"):
    api_util.resolve_argnums(int, None, None, "a", None, None)
  with pytest.raises(TypeError, match="generator function"):
    xjax.jit(lambda: (yield))
  with pytest.raises(TypeError, match="staticmethod arguments are not supported"):
    xjax.jit(staticmethod(abs))
  # JAX's __getstate__ (function_name through unnamed partials); pickling round-trips.
  assert xjax.jit(functools.partial(f, 1)).__getstate__()["function_name"] == "f"
  assert pickle.loads(pickle.dumps(xjax.jit(abs)))(-2.0) == 2.0


def test_jit_overflow_and_donation_warnings_per_function():
  import warnings
  with pytest.raises(OverflowError, match="An overflow.*whose argument path is x"):
    xjax.jit(lambda x: x + 0)(2 ** 31)
  x, y = jnp.ones(2), jnp.ones(2, jnp.int32)
  # Each function's compilation warns, even where an equal program was compiled before.
  for _ in range(2):
    f = xjax.jit(lambda x, y: x.sum() + y.sum(), donate_argnums=(0, 1))
    with pytest.warns(UserWarning, match="Some donated buffers were not usable"):
      f(jnp.ones(2), jnp.ones(2, jnp.int32))
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    f(x, y)  # no new compilation: no warning
  assert "jax:    0.10.2 (xjax " in xjax.print_environment_info(return_string=True)


def test_tracer_sharding_make_jaxpr_name_and_linear_transpose_dce():
  seen = []

  @xjax.jit
  def f(x):
    with pytest.raises(AttributeError, match=r"use `jax.typeof\(x\)`"):
      x.sharding
    seen.append(hasattr(x, "sharding"))
    return x
  f(jnp.arange(2.0))
  assert seen == [False]

  def foo(x):
    return x
  assert xjax.make_jaxpr(foo).__name__ == "make_jaxpr(foo)"
  assert xjax.make_jaxpr(foo).__qualname__.startswith("make_jaxpr(")
  g = xjax.jit(lambda x: (2 * x, x > 0))  # the comparison is pruned before transposing
  assert float(xjax.linear_transpose(lambda x: g(x)[0], 1.0)(1.0)[0]) == 2.0


def test_eval_shape_gives_the_out_shardings():
  s = xjax.sharding.SingleDeviceSharding(xjax.devices()[0])
  f = xjax.jit(lambda x: x * 2, out_shardings=s)
  out = f.eval_shape(np.arange(8))
  assert out.sharding == s and out.shape == (8,)
  assert xjax.jit(lambda x: x * 2).eval_shape(np.arange(3)).shape == (3,)
