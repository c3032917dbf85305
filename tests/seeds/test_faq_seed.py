"""The FAQ seeds (000, 002, 003): jit and impure functions, placement, concrete values."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import jit


def test_impure_func_sees_first_global_under_jit(capsys):
  import faq_globals as module  # a module global, as in the FAQ
  results = module.run_impure_loop()
  out = capsys.readouterr().out
  assert out == "Inside: 0\n"
  assert results == [0, 1, 2]


def test_split_with_traced_sections_needs_static_argnums():
  with pytest.raises(xjax.errors.ConcretizationTypeError):
    jit(jnp.split)(np.zeros(4), 2, 0)
  out = jit(jnp.split, static_argnums=(1, 2))(np.zeros(4), 2, 0)
  assert [o.shape for o in out] == [(2,), (2,)]
  out = jit(lambda arr: jnp.split(arr, 2, 0))(np.zeros(4))
  assert [o.shape for o in out] == [(2,), (2,)]


def test_cos_of_tracer_returns_value(capsys):
  def func(x):
    print(x)
    return jnp.cos(x)
  res = jit(func)(0.)
  assert capsys.readouterr().out == "JitTracer(~float32[])\n"
  assert float(res) == 1.0


def test_divide_with_python_condition_needs_static_argnums():
  def divide(x, y):
    return x / y if y >= 1. else 0.
  with pytest.raises(xjax.errors.TracerBoolConversionError):
    jit(divide)(3., 2.)
  assert float(jit(divide, static_argnums=1)(3., 2.)) == 1.5


def test_log_exp_simplified_by_xla():
  # FAQ (current edition): XLA's algebraic simplifier turns log(exp(x)) into x.
  x = jnp.array([100.0], jnp.float32)
  assert float(jnp.log(jnp.exp(x))[0]) == float("inf")
  assert float(jit(lambda v: jnp.log(jnp.exp(v)))(x)[0]) == 100.0


def test_uncommitted_default_and_committed_device_put():
  x = jnp.ones(3)
  assert x.device == xjax.devices()[0] and not x.committed
  y = xjax.device_put(1, xjax.devices()[0])
  assert y.committed
  assert xjax.device_put(x) is x


def test_block_until_ready_returns_the_array():
  x = jnp.ones((10, 10))
  assert x.block_until_ready() is x
  assert xjax.block_until_ready({"a": x})["a"] is x
