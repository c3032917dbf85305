"""pure_callback and io_callback: values eager and compiled, result checks, every
vmap_method, differentiation errors, effects through dead-code elimination and
control flow, the order of ordered callbacks, and the printed jaxprs (JAX's goldens)."""
import re

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.experimental import io_callback


def _sds(shape, dtype=np.float32):
  return xjax.ShapeDtypeStruct(shape, dtype)


def _normalize(text):
  return re.sub(r" at 0x[0-9a-f]+>", " at 0xXXXXXXXXXXXX>", text)


# ----------------------------------------------------------------------------
# pure_callback


@pytest.mark.parametrize("jit", [False, True])
def test_pure_callback_values_and_argument_types(jit):
  seen = []

  def host(x, y, *, scale):
    seen.append((type(x), type(y["b"])))
    return {"s": np.sin(x) * scale, "n": np.asarray(y["b"] + 1, np.int32)}

  def f(x, b):
    return xjax.pure_callback(host, {"s": _sds((3,)), "n": _sds((), np.int32)}, x, {"b": b},
                              scale=2.0)

  f = xjax.jit(f) if jit else f
  out = f(jnp.arange(3.0), jnp.int32(4))
  np.testing.assert_allclose(out["s"], 2 * np.sin(np.arange(3.0)), rtol=1e-6)
  assert out["n"].dtype == np.int32 and int(out["n"]) == 5
  assert all(t is xjax.Array for pair in seen for t in pair)


def test_pure_callback_result_checks():
  bad_shape = lambda x: xjax.pure_callback(lambda x: np.ones(3, np.float32), _sds((2,)), x)
  with pytest.raises(RuntimeError, match=re.escape(
      "Incorrect output shape for return value #0: Expected: (2,), Actual: (3,)")):
    bad_shape(1.0)
  with pytest.raises(Exception, match=re.escape(
      "Incorrect output shape for return value #0: Expected: (2,), Actual: (3,)")):
    xjax.jit(bad_shape)(1.0)
  bad_dtype = lambda x: xjax.pure_callback(lambda x: np.ones(2, np.int32), _sds((2,)), x)
  with pytest.raises(RuntimeError, match="Incorrect output dtype for return value #0: "
                                         "Expected: float32, Actual: int32"):
    bad_dtype(1.0)
  two = lambda x: xjax.pure_callback(lambda x: (x, x), _sds(()), x)
  with pytest.raises(RuntimeError, match="Mismatched number of outputs from callback. "
                                         "Expected: 1, Actual: 2"):
    two(1.0)
  # float64 results narrow to float32 without x64, as in JAX.
  assert xjax.pure_callback(lambda x: np.float64(2.5), _sds(()), 1.0).dtype == np.float32


def test_pure_callback_argument_errors():
  with pytest.raises(ValueError, match="vmap_method must be on of the allowed methods"):
    xjax.pure_callback(np.sin, _sds(()), 1.0, vmap_method="vectorized")
  with pytest.raises(ValueError, match="cannot specify 64-bit types"):
    xjax.pure_callback(np.sin, _sds((), np.float64), 1.0)
  with pytest.raises(TypeError, match="`shape` and `dtype`"):
    xjax.pure_callback(np.sin, 3, 1.0)


def test_pure_callback_64_bit_results_with_x64(x64):
  out = xjax.jit(lambda x: xjax.pure_callback(np.sin, _sds((), np.float64), x))(1.0)
  assert out.dtype == np.float64 and float(out) == np.sin(1.0)


@pytest.mark.parametrize("method, shapes", [
    ("expand_dims", [((4,), (1,))]),
    ("broadcast_all", [((4,), (4,))]),
    ("legacy_vectorized", [((4,), ())]),
    ("sequential", [((), ())] * 4),
    ("sequential_unrolled", [((), ())] * 4),
])
@pytest.mark.parametrize("jit", [False, True])
def test_pure_callback_vmap_methods(method, shapes, jit):
  # JAX's docstring example: what shapes the callback sees under each vmap_method.
  seen = []

  def host(x, y):
    seen.append((np.shape(x), np.shape(y)))
    return np.asarray(x + y, np.float32)

  def fun(x, y):
    shape = jnp.broadcast_shapes(jnp.shape(x), jnp.shape(y))
    return xjax.pure_callback(host, _sds(shape), x, y, vmap_method=method)

  f = xjax.vmap(fun, in_axes=(0, None))
  f = xjax.jit(f) if jit else f
  out = f(jnp.arange(4.0), 1.0)
  np.testing.assert_array_equal(out, np.arange(4.0) + 1)
  assert seen == shapes


def test_pure_callback_vmap_without_method_and_nested_vmap():
  f = lambda x: xjax.pure_callback(np.sin, _sds(x.shape), x)
  with pytest.raises(NotImplementedError, match="Got vmap_method=None."):
    xjax.vmap(f)(jnp.ones(3))
  g = lambda x: xjax.pure_callback(lambda v: np.sin(v).astype(np.float32), _sds(x.shape), x,
                                   vmap_method="sequential")
  x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
  np.testing.assert_allclose(xjax.vmap(xjax.vmap(g))(x), np.sin(x), rtol=1e-6)
  np.testing.assert_allclose(xjax.jit(xjax.vmap(xjax.vmap(g), in_axes=1))(x), np.sin(x).T,
                             rtol=1e-6)


def test_pure_callback_differentiation():
  f = lambda x: xjax.pure_callback(np.sin, _sds(()), x)
  with pytest.raises(ValueError, match="Pure callbacks do not support JVP. Please use "
                                       "`jax.custom_jvp`"):
    xjax.grad(f)(1.0)

  @xjax.custom_jvp
  def sin(x):
    return xjax.pure_callback(lambda v: np.sin(v).astype(np.float32), _sds(()), x)

  @sin.defjvp
  def _(primals, tangents):
    x, = primals
    return sin(x), xjax.pure_callback(lambda v: np.cos(v).astype(np.float32), _sds(()), x) \
        * tangents[0]

  np.testing.assert_allclose(xjax.grad(sin)(1.0), np.cos(1.0), rtol=1e-6)
  np.testing.assert_allclose(xjax.jit(xjax.grad(sin))(1.0), np.cos(1.0), rtol=1e-6)


def test_pure_callback_unused_result_may_be_dropped():
  calls = []

  def f(x):
    xjax.pure_callback(lambda v: (calls.append(1), v)[1], _sds(()), x)
    return x + 1

  assert float(xjax.jit(f)(1.0)) == 2.0
  assert calls == []  # pure: XLA removes a call whose result nobody uses


def test_pure_callback_jaxpr_matches_jax():
  # Printed by JAX 0.10.2 for the same function.
  expected = """{ lambda ; a:f32[3]. let
    b:f32[3] = pure_callback[
      callback=_FlatCallback(callback_func=<ufunc 'sin'>, in_tree=PyTreeDef(((*,), {})))
      result_avals=(ShapedArray(float32[3]),)
      sharding=None
      vmap_method=expand_dims
    ] a
  in (b,) }"""
  f = lambda x: xjax.pure_callback(np.sin, _sds(x.shape), x, vmap_method="expand_dims")
  assert str(xjax.make_jaxpr(xjax.vmap(f))(jnp.ones(3))) == expected


# ----------------------------------------------------------------------------
# io_callback


@pytest.mark.parametrize("ordered", [False, True])
def test_io_callback_runs_even_when_unused(ordered):
  log = []

  def f(x):
    io_callback(lambda v: (log.append(float(v)), np.float32(0))[1], _sds(()), x,
                ordered=ordered)
    return x * 2

  assert float(xjax.jit(f)(3.0)) == 6.0
  assert float(f(4.0)) == 8.0
  assert log == [3.0, 4.0]
  assert xjax.make_jaxpr(f)(1.0).effects == {
      xjax._src.effects.ordered_io_effect if ordered else xjax._src.effects.io_effect}


def test_ordered_io_callbacks_keep_program_order():
  log = []

  def record(tag):
    return lambda v: (log.append((tag, float(v))), np.float32(v))[1]

  @xjax.jit
  def f(x):
    inner = xjax.jit(lambda v: io_callback(record("inner"), _sds(()), v, ordered=True))
    for i in range(4):
      x = x + io_callback(record(f"top{i}"), _sds(()), x * 0 + i, ordered=True)
      x = inner(x)

    def body(c):
      io_callback(record("loop"), _sds(()), c, ordered=True)
      return c + 1

    x = lax.while_loop(lambda c: c < 20, body, x)
    x = lax.cond(x > 0, lambda v: io_callback(record("true"), _sds(()), v, ordered=True),
                 lambda v: v, x)
    return io_callback(record("last"), _sds(()), x, ordered=True)

  f(0.0)
  tags = [t for t, _ in log]
  assert tags[:8] == ["top0", "inner", "top1", "inner", "top2", "inner", "top3", "inner"]
  assert tags[8:-2] == ["loop"] * (len(tags) - 10) and tags[-2:] == ["true", "last"]
  assert [v for t, v in log if t == "loop"] == list(np.arange(6.0, 20.0))


def test_io_callback_transformations():
  seen = []

  def host(v):
    seen.append(np.shape(v))
    return np.asarray(v * 2, np.float32)

  f = lambda x: io_callback(host, _sds(()), x)
  np.testing.assert_array_equal(xjax.vmap(f)(jnp.arange(3.0)), [0.0, 2.0, 4.0])
  assert seen == [()] * 3  # unordered: called once per element, in a loop
  with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback."):
    xjax.vmap(lambda x: io_callback(host, _sds(()), x, ordered=True))(jnp.arange(3.0))
  with pytest.raises(ValueError, match="IO callbacks do not support JVP."):
    xjax.grad(f)(1.0)


def test_io_callback_in_scan_runs_every_iteration():
  log = []

  def body(c, x):
    io_callback(lambda a, b: (log.append((float(a), float(b))), np.float32(0))[1], _sds(()),
                c, x, ordered=True)
    return c + x, None

  out, _ = xjax.jit(lambda xs: lax.scan(body, 0.0, xs))(jnp.arange(1.0, 4.0))
  assert float(out) == 6.0
  assert log == [(0.0, 1.0), (1.0, 2.0), (3.0, 3.0)]


def test_io_callback_jaxpr_matches_jax():
  # Printed by JAX 0.10.2 (function address normalized).
  def host(a):
    return a

  expected = """{ lambda ; a:f32[]. let
    b:f32[] = io_callback[
      callback=_FlatCallback(callback_func=<function test_io_callback_jaxpr_matches_jax.<locals>.host at 0xXXXXXXXXXXXX>, in_tree=PyTreeDef(((*,), {})))
      ordered=True
      result_avals=(ShapedArray(float32[]),)
      sharding=None
    ] a
  in (b,) }"""
  f = lambda x: io_callback(host, _sds(()), x, ordered=True)
  assert _normalize(str(xjax.make_jaxpr(f)(1.0))) == expected


def test_callback_exception_under_jit_reaches_the_caller():
  def boom(x):
    raise ZeroDivisionError("from the host")

  with pytest.raises(Exception, match="from the host"):
    xjax.jit(lambda x: io_callback(boom, _sds(()), x))(1.0)
  # The runtime is still usable afterwards.
  assert float(xjax.jit(lambda x: x + 1)(1.0)) == 2.0


def test_callback_exception_outside_jit_is_a_runtime_error_as_under_jit():
  # As in JAX (which runs eager callbacks compiled too): the callback's exception reaches
  # the caller as xjax.errors.JaxRuntimeError carrying its traceback, jitted or not.
  def boom(x):
    raise ZeroDivisionError("from the host")

  for call in (lambda x: xjax.pure_callback(boom, _sds(()), x),
               lambda x: io_callback(boom, _sds(()), x)):
    for f in (call, xjax.jit(call)):
      with pytest.raises(xjax.errors.JaxRuntimeError, match="from the host") as info:
        f(1.0)
      assert isinstance(info.value, RuntimeError)
      assert "ZeroDivisionError" in str(info.value)
