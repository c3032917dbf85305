"""jax.no_tracing, jax.no_execution and jax.make_user_context (JAX 0.10.2's)."""
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax._src.jaxtest import env


def test_no_tracing_refuses_a_retrace_only():
  f = jax.jit(lambda x: x * 2)
  f(jnp.arange(3))
  with jax.no_tracing():
    f(jnp.arange(3))  # cached: fine
    with pytest.raises(RuntimeError, match="re-tracing function <lambda> at .* for `jit`, but "
                       "'no_tracing' is set"):
      f(jnp.arange(4))
  f(jnp.arange(4))


def test_no_execution_refuses_to_run_programs():
  f = jax.jit(lambda: jnp.ones(3))
  f()
  with jax.no_execution():
    with pytest.raises(RuntimeError, match="no_execution"):
      f()
  assert f().shape == (3,)


def test_user_context_values_retrace():
  ctx = jax.make_user_context()
  f = jax.jit(lambda x: x)
  with env.count_jit_tracing_cache_miss() as count:
    f(1.)
    with ctx(2):
      f(1.)
      with ctx(3):
        f(1.)
      assert ctx.value == 2
    f(1.)  # the first context again: cached
  assert count() == 3
  assert ctx.get_global() is None
  ctx.set_global(5)
  try:
    assert ctx.get_global() == 5 and ctx.value == 5
  finally:
    ctx.set_global(None)


def test_state_global_value():
  state = jax.numpy_rank_promotion
  before = state.get_global()
  with state("raise"):
    assert state.value == "raise" and state.get_global() == before
  state.set_global("warn")
  try:
    assert state.get_global() == "warn"
  finally:
    state.set_global(before)
