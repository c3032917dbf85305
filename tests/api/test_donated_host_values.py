"""Donation consumes only buffers the caller owned (issue 33 item 8).

A Python scalar argument's device buffer is cached by value and shared by every later use
of that value in the process; donating it used to delete that shared buffer, so after
``jit(f, donate_argnums=0)(2.5)`` every later ``... + 2.5`` raised "Array has been
deleted". The law: after any donating call, every host value passed (scalars of each
type, NumPy arrays) can be used again anywhere, and donated Arrays are deleted.
"""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp


SCALARS = [2.5, 7, True, -3.25, 10**6]


@pytest.mark.parametrize("value", SCALARS, ids=repr)
@pytest.mark.parametrize("how", ["positional", "keyword", "pytree", "aot", "static_mix"])
def test_donating_a_host_scalar_leaves_the_value_usable(value, how):
  add = lambda x: x + 1
  if how == "positional":
    out = jax.jit(add, donate_argnums=0)(value)
  elif how == "keyword":
    out = jax.jit(lambda *, x: x + 1, donate_argnames="x")(x=value)
  elif how == "pytree":
    out, same = jax.jit(lambda t: (t[0] + 1, t[1]["a"]), donate_argnums=0)(
        (value, {"a": value}))
    np.testing.assert_array_equal(np.asarray(same), np.asarray(value))
  elif how == "aot":
    compiled = jax.jit(add, donate_argnums=0).lower(value).compile()
    out = compiled(value)
    out2 = compiled(value)  # the same value again through the compiled program
    np.testing.assert_array_equal(np.asarray(out2), np.asarray(value) + 1)
  else:
    out = jax.jit(lambda x, n: x + n, donate_argnums=0, static_argnums=1)(value, 1)
  np.testing.assert_array_equal(np.asarray(out), np.asarray(value) + 1)
  # The same value in eager ops, another jitted function and a second donating call.
  np.testing.assert_array_equal(np.asarray(jnp.ones(()) + value), 1 + np.asarray(value))
  np.testing.assert_array_equal(np.asarray(jax.jit(lambda x: x * 2)(value)),
                                np.asarray(value) * 2)
  again = jax.jit(add, donate_argnums=0)(value)
  np.testing.assert_array_equal(np.asarray(again), np.asarray(value) + 1)
  np.testing.assert_array_equal(np.asarray(jnp.asarray(value)), np.asarray(value))


def test_donating_in_a_loop_keeps_every_scalar_alive():
  step = jax.jit(lambda x, lr: x - lr * x, donate_argnums=(0, 1))
  x = jnp.ones(3)
  for _ in range(5):
    x = step(x, 0.5)
  np.testing.assert_allclose(np.asarray(x), np.full(3, 0.5 ** 5))
  np.testing.assert_allclose(np.asarray(jnp.ones(3) * 0.5), np.full(3, 0.5))


def test_donated_arrays_are_deleted_and_numpy_inputs_untouched():
  a = jnp.arange(3.0)
  host = np.arange(3.0)
  f = jax.jit(lambda x, y: x + y, donate_argnums=(0, 1))
  out = f(a, host)
  np.testing.assert_array_equal(np.asarray(out), 2 * np.arange(3.0))
  assert a.is_deleted()
  np.testing.assert_array_equal(host, np.arange(3.0))
  with pytest.raises(RuntimeError, match="deleted"):
    f(a, host)
