"""`device_put_p`: `xjax.device_put` under a trace.

The printed jaxprs and the error message were recorded from real JAX 0.10.2
(on its CPU backend). Values go through jit, grad, jvp and vmap; the eager
path places values without binding the primitive.
"""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.array import SingleDeviceSharding


def jaxpr_str(fun, *args):
  return str(xjax.make_jaxpr(fun)(*args))


def _eqn(params, operands, outs="b:f32[]", invars="a:f32[]", results="(b,)"):
  return (f"{{ lambda ; {invars}. let\n"
          f"    {outs} = device_put[\n"
          f"      copy_semantics={params[0]}\n"
          f"      devices={params[1]}\n"
          f"      srcs={params[2]}\n"
          f"    ] {operands}\n"
          f"  in {results} }}")


REUSE = "(ArrayCopySemantics.REUSE_INPUT,)"


def test_device_put_primitive_is_exported():
  assert lax.device_put_p.name == "device_put"
  assert lax.device_put_p.multiple_results


def test_jaxpr_default_device():
  assert jaxpr_str(xjax.device_put, 1.0) == _eqn((REUSE, "(None,)", "(None,)"), "a")


def test_jaxpr_explicit_device_and_src():
  dev = xjax.devices()[0]
  assert jaxpr_str(lambda x: xjax.device_put(x, dev), 1.0) == _eqn(
      (REUSE, f"({dev!r},)", "(None,)"), "a")
  assert jaxpr_str(lambda x: xjax.device_put(x, src=dev), 1) == _eqn(
      (REUSE, "(None,)", f"({dev!r},)"), "a", outs="b:i32[]", invars="a:i32[]")
  if xjax.default_backend() == "cpu":  # the literal form JAX printed
    assert jaxpr_str(lambda x: xjax.device_put(x, dev), 1.0) == _eqn(
        (REUSE, "(CpuDevice(id=0),)", "(None,)"), "a")
  sharding = SingleDeviceSharding(dev)
  assert f"devices=({sharding!r},)" in jaxpr_str(lambda x: xjax.device_put(x, sharding), 1)


def test_jaxpr_copy_semantics():
  assert jaxpr_str(lambda x: xjax.device_put(x, may_alias=False), 1.0) == _eqn(
      ("(ArrayCopySemantics.ALWAYS_COPY,)", "(None,)", "(None,)"), "a")
  assert jaxpr_str(lambda x: xjax.device_put(x, donate=True), 1.0) == _eqn(
      ("(ArrayCopySemantics.DONATE_INPUT,)", "(None,)", "(None,)"), "a")


def test_jaxpr_pytree_is_one_equation():
  two = "(ArrayCopySemantics.REUSE_INPUT, ArrayCopySemantics.REUSE_INPUT)"
  assert jaxpr_str(lambda x, y: xjax.device_put((x, y)), 1.0, jnp.ones(3)) == _eqn(
      (two, "(None, None)", "(None, None)"), "a b", outs="c:f32[] d:f32[3]",
      invars="a:f32[] b:f32[3]", results="(c, d)")
  # A constant leaf is bound too (a literal), as in JAX.
  assert jaxpr_str(lambda x: xjax.device_put((x, 2.0)), 1) == _eqn(
      (two, "(None, None)", "(None, None)"), "a 2.0:f32[]", outs="b:i32[] c:f32[]",
      invars="a:i32[]", results="(b, c)")
  assert jaxpr_str(lambda x: xjax.device_put(2.0), 1) == _eqn(
      (REUSE, "(None,)", "(None,)"), "2.0:f32[]", invars="a:i32[]")


def test_jaxpr_of_grad_transposes_to_a_copy():
  assert jaxpr_str(lambda x: xjax.grad(lambda x: xjax.device_put(x) * 2.0)(x), 1.0) == (
      "{ lambda ; a:f32[]. let\n"
      "    b:f32[] = device_put[\n"
      "      copy_semantics=(ArrayCopySemantics.REUSE_INPUT,)\n"
      "      devices=(None,)\n"
      "      srcs=(None,)\n"
      "    ] a\n"
      "    _:f32[] = mul b 2.0:f32[]\n"
      "    c:f32[] = mul 1.0:f32[] 2.0:f32[]\n"
      "    d:f32[] = device_put[\n"
      "      copy_semantics=(ArrayCopySemantics.ALWAYS_COPY,)\n"
      "      devices=(None,)\n"
      "      srcs=(None,)\n"
      "    ] c\n"
      "  in (d,) }")


def test_jaxpr_of_vmap():
  assert jaxpr_str(xjax.vmap(xjax.device_put), jnp.ones(3)) == _eqn(
      (REUSE, "(None,)", "(None,)"), "a", outs="b:f32[3]", invars="a:f32[3]")


def test_values_through_transformations():
  x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
  np.testing.assert_array_equal(xjax.jit(lambda a: xjax.device_put(a) * 2)(x), x * 2)
  np.testing.assert_array_equal(
      xjax.grad(lambda a: (xjax.device_put(a) ** 2).sum())(x), 2 * x)
  np.testing.assert_array_equal(xjax.vmap(lambda a: xjax.device_put(a) + 1)(x), x + 1)
  np.testing.assert_array_equal(
      xjax.vmap(lambda a, b: xjax.device_put((a, b))[1], in_axes=(0, None))(x, 5.0),
      np.full(2, 5.0, np.float32))
  primal, tangent = xjax.jvp(lambda a: xjax.device_put(a) * 3, (x,), (np.ones_like(x),))
  np.testing.assert_array_equal(primal, 3 * x)
  np.testing.assert_array_equal(tangent, np.full_like(x, 3))
  # Two leaves, one of which gets no cotangent.
  g = xjax.grad(lambda a, b: xjax.device_put((a, b))[0] * 2, argnums=(0, 1))(1.0, 4.0)
  assert (float(g[0]), float(g[1])) == (2.0, 0.0)
  np.testing.assert_array_equal(xjax.jit(xjax.grad(lambda a: xjax.device_put(a, may_alias=False)
                                                   * a))(3.0), 6.0)


def test_weak_type_is_kept():
  out = xjax.jit(lambda: xjax.device_put(2.0))()
  assert out.weak_type and out.dtype == np.float32
  out = xjax.jit(lambda a: xjax.device_put(a))(2)
  assert out.weak_type and out.dtype == np.int32


def test_eager_jvp_of_concrete_values_places_them():
  # Under a JVP trace with no tangents the primitive runs eagerly (its impl).
  def f(a):
    placed = xjax.device_put(jnp.ones(2), may_alias=False)
    return a * placed.sum()
  assert float(xjax.grad(f)(2.0)) == 2.0


def test_donate_with_may_alias_is_an_error():
  msg = "may_alias and donate cannot be True at the same time."
  with pytest.raises(ValueError, match=msg):
    xjax.device_put(jnp.ones(2), donate=True, may_alias=True)
  with pytest.raises(ValueError, match=msg):
    xjax.make_jaxpr(lambda x: xjax.device_put(x, donate=True, may_alias=True))(1.0)


def test_grad_through_donating_device_put_is_an_error():
  with pytest.raises(ValueError, match="donate=True is not allowed during tranposition"):
    xjax.grad(lambda x: xjax.device_put(x, donate=True))(1.0)


def test_eager_device_put_binds_nothing():
  x = jnp.ones(3)
  assert xjax.device_put(x) is x
  copy = xjax.device_put(x, may_alias=False)
  assert copy is not x
  np.testing.assert_array_equal(copy, x)
