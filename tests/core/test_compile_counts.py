"""Compile once per signature: eager control flow, its grad and nested jits are cached by
what they compute, not by the jaxpr objects each call rebuilds."""
import gc

import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax
from xjax._src import backend


@pytest.fixture
def compiles(monkeypatch):
  """A list that gets one entry per XLA compile."""
  seen = []
  original = backend.compile_module

  def counting(text, *args, **kwargs):
    seen.append(text)
    return original(text, *args, **kwargs)
  monkeypatch.setattr(backend, "compile_module", counting)
  return seen


def _body(i, c):
  return c * 1.01 + i


CASES = {
    # Each builds its jaxprs afresh on every call: new lambdas, new wrappers.
    "cond": lambda x: lax.cond(x > 0, lambda v: v * 2, lambda v: v - 1, x),
    "switch": lambda x: lax.switch(1, [lambda v: v, lambda v: v * 3, jnp.sin], x),
    "fori_loop": lambda x: lax.fori_loop(0, 10, _body, x),
    "fori_loop_dynamic": lambda x: lax.fori_loop(0, jnp.int32(4), _body, x),
    "while_loop": lambda x: lax.while_loop(lambda c: c < 100.0, lambda c: c * 2.0, x),
    "scan": lambda x: lax.scan(lambda c, _: (c * 1.01, c), x, None, length=10)[0],
    "map": lambda x: lax.map(lambda v: v * v, jnp.stack([x, x + 1])).sum(),
    "nested_jit": lambda x: jax.jit(lambda v: jnp.sin(v) * v)(x),  # a new function each call
}


# Reverse mode of a while loop is an error (in JAX too): those pairs are left out.
PAIRS = [(name, t) for name in sorted(CASES) for t in ("eager", "grad", "value_and_grad", "jvp")
         if not (t in ("grad", "value_and_grad") and name in ("while_loop", "fori_loop_dynamic"))]


@pytest.mark.parametrize("name,transform", PAIRS)
def test_no_compile_after_the_first_call(name, transform, compiles):
  f = CASES[name]
  if transform == "grad":
    g = jax.grad(f)
  elif transform == "value_and_grad":
    g = jax.value_and_grad(f)
  elif transform == "jvp":
    def g(x):
      return jax.jvp(f, (x,), (jnp.float32(1.0),))
  else:
    g = f
  x = jnp.float32(1.5)
  first = g(x)
  warm = len(compiles)
  again = [g(x) for _ in range(3)]
  assert len(compiles) == warm, f"{len(compiles) - warm} compiles after warm-up"
  for out in again:
    for a, b in zip(jax.tree.leaves(first), jax.tree.leaves(out)):
      np.testing.assert_array_equal(a, b)


def test_different_constants_do_not_share_an_executable(compiles):
  x = jnp.arange(3.0)
  for c in range(1, 6):
    np.testing.assert_array_equal(lax.cond(True, lambda v: v * c, lambda v: v, x), x * c)
    a = jnp.full(3, float(c))  # captured: an operand, not part of the key
    np.testing.assert_array_equal(lax.cond(True, lambda v: v + a, lambda v: v, x), x + c)
    big = np.full(100, float(c), np.float32)  # a constant of the nested jit, by identity
    np.testing.assert_array_equal(jax.grad(lambda v: jax.jit(lambda w: (w * big[:3]).sum())(v))(x),
                                  np.full(3, float(c)))


def test_dtypes_and_shapes_are_part_of_the_key():
  for dtype in (jnp.float32, jnp.int32, jnp.bool_):
    x = jnp.ones(2, dtype)
    out = lax.cond(True, lambda v: v, lambda v: v, x)
    assert out.dtype == dtype
  for n in (1, 2, 3):
    assert lax.fori_loop(0, 2, lambda i, c: c + 1, jnp.zeros(n)).shape == (n,)


def test_callbacks_keep_their_identity():
  # A callback is a parameter compared by identity: the key holds it, so a new function
  # allocated where a collected one lived is never mistaken for it.
  x = jnp.float32(1.0)
  for k in range(20):
    def add_k(a, k=k):
      return np.asarray(a + k, np.float32)
    out = lax.cond(True, lambda v: jax.pure_callback(add_k, jax.ShapeDtypeStruct((), jnp.float32), v),
                   lambda v: v, x)
    assert float(out) == 1.0 + k
    del add_k
    gc.collect()


def test_batched_jaxprs_die_with_their_jaxprs():
  from xjax._src.interpreters import batching
  gc.collect()
  before = len(batching._batched_jaxprs)
  for i in range(20):
    out = jax.vmap(lambda v: lax.cond(v > 0, lambda a: a * i, lambda a: a, v))(jnp.arange(3.0))
    np.testing.assert_array_equal(out, np.arange(3.0) * np.where(np.arange(3) > 0, i, 1))
  gc.collect()
  assert len(batching._batched_jaxprs) - before < 5
