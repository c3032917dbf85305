"""The Tracing seed (004): printed tracers, make_jaxpr output, static vs traced values."""
import functools

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import jit, make_jaxpr


def test_print_inside_jit_shows_tracers_once(capsys):
  @jit
  def f(x, y):
    print("Running f():")
    print(f"  x = {x}")
    print(f"  y = {y}")
    result = jnp.dot(x + 1, y + 1)
    print(f"  result = {result}")
    return result

  x = np.random.randn(3, 4)
  y = np.random.randn(4)
  out = f(x, y)
  assert capsys.readouterr().out == (
      "Running f():\n  x = JitTracer(float32[3,4])\n  y = JitTracer(float32[4])\n"
      "  result = JitTracer(float32[3])\n")
  np.testing.assert_allclose(out, np.dot(x + 1, y + 1), rtol=1e-5)
  assert out.dtype == np.float32
  f(np.random.randn(3, 4), np.random.randn(4))
  assert capsys.readouterr().out == ""


def test_make_jaxpr_of_dot_matches_seed():
  def f(x, y):
    return jnp.dot(x + 1, y + 1)
  x = np.random.randn(3, 4)
  y = np.random.randn(4)
  assert str(make_jaxpr(f)(x, y)) == (
      "{ lambda ; a:f32[3,4] b:f32[4]. let\n"
      "    c:f32[3,4] = add a 1.0:f32[]\n"
      "    d:f32[4] = add b 1.0:f32[]\n"
      "    e:f32[3] = dot_general[\n"
      "      dimension_numbers=(([1], [0]), ([], []))\n"
      "      preferred_element_type=float32\n"
      "    ] c d\n"
      "  in (e,) }")


def test_python_control_flow_on_traced_value_fails():
  @jit
  def f(x, neg):
    return -x if neg else x
  with pytest.raises(xjax.errors.TracerBoolConversionError) as info:
    f(1, True)
  assert "depends on the value of the argument neg" in str(info.value)


def test_static_argnums_makes_control_flow_work():
  @functools.partial(jit, static_argnums=(1,))
  def f(x, neg):
    return -x if neg else x
  assert repr(f(1, True)) == "Array(-1, dtype=int32, weak_type=True)"
  assert repr(f(1, False)) == "Array(1, dtype=int32, weak_type=True)"


def test_reshape_with_traced_size_fails_with_seed_error():
  @jit
  def f(x):
    return x.reshape(jnp.array(x.shape).prod())
  with pytest.raises(TypeError) as info:
    f(jnp.ones((2, 3)))
  message = str(info.value)
  assert message.startswith("Shapes must be 1D sequences of concrete values of integer type, "
                            "got [JitTracer(int32[])].\nIf using `jit`, try using "
                            "`static_argnums` or applying `jit` to smaller subfunctions.\n")
  assert "This value became a tracer due to JAX operations on these lines:" in message
  assert "  operation a:i32[] = reduce_prod[axes=(0,)] b\n    from line " in message


def test_shape_is_static_but_jnp_array_of_it_is_traced(capsys):
  @jit
  def f(x):
    print(f"x = {x}")
    print(f"x.shape = {x.shape}")
    print(f"jnp.array(x.shape).prod() = {jnp.array(x.shape).prod()}")
  f(jnp.ones((2, 3)))
  assert capsys.readouterr().out == (
      "x = JitTracer(float32[2,3])\nx.shape = (2, 3)\n"
      "jnp.array(x.shape).prod() = JitTracer(int32[])\n")


def test_numpy_for_static_operations():
  @jit
  def f(x):
    return x.reshape((np.prod(x.shape),))
  assert repr(f(jnp.ones((2, 3)))) == "Array([1., 1., 1., 1., 1., 1.], dtype=float32)"
