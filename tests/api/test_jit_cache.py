"""The jit cache: bounded LRU per function, `_cache_size()`, `cache_info()`, `clear_caches()`."""
import gc

import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax._src import dispatch
from xjax._src import executable_cache
from xjax._src import jit_cache


def test_cache_info_counts_hits_and_misses():
  f = jax.jit(lambda x, n: x * n, static_argnums=1)
  info = f.cache_info()
  assert (info.hits, info.misses, info.currsize) == (0, 0, 0)
  f(jnp.ones(3), 2)
  assert f.cache_info().last_miss == "first call: nothing compiled yet"
  f(jnp.ones(3), 2)
  f(jnp.ones(3), 2)
  info = f.cache_info()
  assert (info.hits, info.misses, info.currsize) == (2, 1, 1)
  assert info.maxsize == jit_cache._CACHE_SIZE
  f(jnp.ones(4), 2)
  assert f.cache_info().last_miss == ("changed since the last call: the argument shapes or "
                                      "dtypes (leaf 0: f32[3] -> f32[4])")
  f(jnp.ones(4), 3)
  assert f.cache_info().last_miss == "changed since the last call: the static arguments"
  f(jnp.ones(4, jnp.int32), 3)
  assert "leaf 0: f32[4] -> i32[4]" in f.cache_info().last_miss
  f((jnp.ones(4),), 3)
  assert "the argument structure (pytree)" in f.cache_info().last_miss
  assert f._cache_size() == 5 and f.cache_info().misses == 5


def test_the_cache_belongs_to_the_function():
  def g(x):
    return x + 1
  jax.jit(g)(jnp.ones(2))
  assert jax.jit(g).cache_info().hits == 0
  jax.jit(g)(jnp.ones(2))  # a new wrapper, the same function: served from the cache
  assert jax.jit(g).cache_info()[:2] == (1, 1)


def test_least_recently_used_entry_is_evicted(monkeypatch):
  monkeypatch.setattr(jit_cache, "_CACHE_SIZE", 3)
  f = jax.jit(lambda x: x * 2)
  for n in (1, 2, 3):
    f(jnp.ones(n))
  f(jnp.ones(1))  # now the most recently used
  f(jnp.ones(4))  # evicts n=2, the least recently used
  assert f._cache_size() == 3
  misses = f.cache_info().misses
  f(jnp.ones(1))
  f(jnp.ones(3))
  f(jnp.ones(4))
  assert f.cache_info().misses == misses
  np.testing.assert_array_equal(f(jnp.ones(2)), 2 * np.ones(2))
  assert f.cache_info().misses == misses + 1


def _live_executables() -> int:
  gc.collect()
  return sum(1 for o in gc.get_objects() if type(o) is dispatch.Executable)


def test_evicted_executables_are_freed(monkeypatch):
  monkeypatch.setattr(jit_cache, "_CACHE_SIZE", 4)
  f = jax.jit(lambda x: jnp.sin(x) + 1)
  for cache in list(executable_cache._all_caches):  # jnp.ones's own jit cache among them
    if isinstance(cache, executable_cache.LRUCache):
      monkeypatch.setattr(cache, "maxsize", 4)
  executable_cache.executables.clear()
  before = _live_executables()
  for n in range(1, 30):
    f(jnp.ones(n))
  assert f._cache_size() == 4
  assert _live_executables() - before <= 8  # the jit cache's 4 and the shared cache's 4


def test_clear_caches_empties_the_jit_cache():
  f = jax.jit(lambda x: x - 1)
  f(jnp.ones(2))
  f(jnp.ones(2))
  assert f._cache_size() == 1
  jax.clear_caches()
  assert f._cache_size() == 0
  assert f.cache_info()[:2] == (0, 0)
  np.testing.assert_array_equal(f(jnp.ones(2)), np.zeros(2))
  assert f.cache_info().misses == 1


@pytest.mark.parametrize("fun,reference", [(lambda x: x * 3, lambda x: x * 3),
                                           (lambda x: jnp.cos(x) * 3, lambda x: np.cos(x) * 3)])
def test_new_lambdas_in_a_loop_compile_once(fun, reference, monkeypatch):
  from xjax._src import backend
  x = jnp.arange(3.0)
  compiled = []
  original = backend.compile_module
  monkeypatch.setattr(backend, "compile_module",
                      lambda *a, **k: compiled.append(1) or original(*a, **k))
  for i in range(5):
    # A new function object each time (as `jax.jit(lambda ...)` inside a loop): traced
    # again each time, compiled once (JAX compiles each time).
    np.testing.assert_allclose(jax.jit(lambda v: fun(v) + i)(x), reference(np.arange(3.0)) + i,
                               rtol=1e-6)
  assert len(compiled) == 5  # the literal `i` differs: one program per value
  compiled.clear()
  for i in range(5):
    np.testing.assert_allclose(jax.jit(lambda v: fun(v))(x), reference(np.arange(3.0)),
                               rtol=1e-6)
  assert len(compiled) == 1


def test_the_remembered_signature_is_never_misapplied():
  # The last call's signature is remembered (compared by identity): every difference must
  # still reach the full path.
  f = jax.jit(lambda x, axis=0, keep=False: jnp.sum(x, axis=axis, keepdims=keep),
              static_argnames=("axis", "keep"))
  x = jnp.ones((2, 3))
  np.testing.assert_array_equal(f(x, axis=1), np.full(2, 3.0))
  np.testing.assert_array_equal(f(x, axis=1), np.full(2, 3.0))
  np.testing.assert_array_equal(f(x, axis=0), np.full(3, 2.0))
  assert f(x, axis=1, keep=True).shape == (2, 1)
  assert f(x, axis=1, keep=1).shape == (2, 1)   # an int, not a bool: its own entry
  assert f._cache_size() == 4
  g = jax.jit(lambda a, b: a * b)
  a = jnp.arange(3.0)
  np.testing.assert_array_equal(g(a, a), np.arange(3.0) ** 2)
  np.testing.assert_array_equal(g(a, jnp.arange(3)), np.arange(3.0) ** 2)  # another dtype
  with jax.disable_jit():
    assert type(g(np.ones(2), np.ones(2))) is np.ndarray   # not the compiled program
  np.testing.assert_array_equal(g(a, a), np.arange(3.0) ** 2)
  committed = jax.device_put(a, jax.devices()[0])
  assert g(committed, committed).committed
  b = jnp.arange(3.0) + 1
  g(b, b)
  b.delete()
  with pytest.raises(RuntimeError, match="Array has been deleted"):
    g(b, b)
  h = jax.jit(lambda v: jnp.log(-v))
  h(a + 1)
  h(a + 1)  # NaNs, unchecked: this signature is remembered
  with jax.debug_nans(True):
    with pytest.raises(FloatingPointError):
      h(a + 1)


def test_remembered_python_scalars_match_by_type_and_value():
  f = jax.jit(lambda x, s: x * s)
  x = jnp.arange(3.0)
  xi = jnp.arange(3)
  for s in (2, 2, 3, 2.5, 2.5, True, True, 0.0, -0.0, float("nan"), float("nan"), 2, 2.0):
    out = f(x, s)
    np.testing.assert_array_equal(out, (np.arange(3.0) * s).astype(np.float32))
    assert out.dtype == jnp.float32
  for s in (2, 2, True, 2, 2.5):
    out = f(xi, s)
    np.testing.assert_array_equal(out, np.arange(3) * s)
    assert out.dtype == (jnp.float32 if type(s) is float else jnp.int32)
  np.testing.assert_array_equal(jnp.arange(3.0) + 1, [1.0, 2.0, 3.0])
  np.testing.assert_array_equal(jnp.arange(3.0) + 1, [1.0, 2.0, 3.0])
  np.testing.assert_array_equal(jnp.arange(3.0) + 2, [2.0, 3.0, 4.0])


def test_the_fastest_path_respects_threads_traces_and_outputs():
  # After a call of Arrays only, jit's fastest path (xjax._src.jit_fast_path._fast_call)
  # serves the same signature: it must still give way to another thread's flags, to a
  # trace, and return every output, a pytree of them, or none.
  import threading
  f = jax.jit(lambda x: (x + 1, {"double": x * 2}))
  x = jnp.arange(3.0)
  for _ in range(3):
    a, b = f(x)
    np.testing.assert_array_equal(a, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(b["double"], [0.0, 2.0, 4.0])
  assert f.cache_info().hits == 2
  g = jax.jit(lambda x: jnp.sum(x, dtype=None) + jnp.int64(1))
  n = jnp.arange(3)
  assert g(n).dtype == jnp.int32 and g(n).dtype == jnp.int32
  seen = []

  def other_thread():
    with jax.enable_x64(True):  # this thread's flags only: the remembered call is not its
      seen.append(g(n).dtype)
  t = threading.Thread(target=other_thread)
  t.start()
  t.join()
  assert seen == [jnp.int64]  # its own program: jnp.int64(1) is 64-bit there
  assert g._cache_size() == 2
  assert g(n).dtype == jnp.int32
  h = jax.jit(lambda x: jnp.sin(x))
  h(x)
  h(x)
  jaxpr = jax.make_jaxpr(lambda v: h(v) * 2)(x)  # under a trace: staged, not executed
  assert "sin" in str(jaxpr)
  np.testing.assert_allclose(jax.grad(lambda v: h(v).sum())(x), np.cos(np.arange(3.0)),
                             rtol=1e-6)
  z = jax.jit(lambda: jnp.ones(2))
  np.testing.assert_array_equal(z(), z())  # no arguments


def test_the_fastest_path_matches_pytree_arguments_exactly():
  # Tuples, lists, dicts and None among the positional arguments are matched by the
  # generated checks (xjax._src.jit_fast_path._access_code): any change of structure, key,
  # container type or leaf must reach the full path, which gives the right answer or JAX's
  # error.
  import collections
  import math

  def fun(a, t, np=jnp):
    others = [v for k, v in t.items() if k != "x" and v is not None]
    return a + math.prod(t["x"]) + sum(others, np.zeros(3))
  f = jax.jit(fun)
  a, b = jnp.arange(3.0), jnp.ones(3)

  def expect(tree):
    return fun(np.asarray(a), jax.tree.map(np.asarray, tree), np=np)
  tree = {"x": [b, b * 2], "y": None}
  for _ in range(3):
    np.testing.assert_array_equal(f(a, tree), expect(tree))
  assert f.cache_info().hits == 2 and f._cache.fast_call is not None
  variants = [
      {"x": [b, b * 3], "y": None},          # another leaf of the same aval
      {"x": [b, b * 2], "y": b},             # None became an Array
      {"x": (b, b * 2), "y": None},          # a tuple, not a list
      {"x": [b, b * 2, b], "y": None},       # a longer list
      {"x": [b, jnp.arange(3)], "y": None},  # another dtype
      collections.OrderedDict(x=[b, b], y=None),  # another dict type
      {"x": [b, b * 2], "z": b, "y": None},        # an extra key
  ]
  for tree in variants:
    f(a, {"x": [b, b * 2], "y": None})  # the fastest path is for this structure now
    for _ in range(2):
      np.testing.assert_array_equal(f(a, tree), expect(tree))
  with pytest.raises(KeyError):
    f(a, {"w": [b, b], "y": None})  # a missing key: the function's own error
  mutated = {"x": [b, b * 2], "y": None}
  f(a, mutated)
  mutated["x"].append(b)  # mutated in place between calls
  np.testing.assert_array_equal(f(a, mutated), expect(mutated))
  mutated["x"][0] = b * 5
  np.testing.assert_array_equal(f(a, mutated), expect(mutated))
  committed = {"x": [jax.device_put(b, jax.devices()[0]), b * 2], "y": None}
  assert f(a, committed).committed
  deleted = {"x": [b * 1, b * 2], "y": None}
  f(a, deleted)
  deleted["x"][0].delete()
  with pytest.raises(RuntimeError, match="Array has been deleted"):
    f(a, deleted)
  g = jax.jit(lambda t: [t[0][0] + 1, t[1]])  # several outputs, nested tuples
  for _ in range(2):
    out = g(((a,), b))
    np.testing.assert_array_equal(out[0], np.arange(3.0) + 1)
    np.testing.assert_array_equal(out[1], np.ones(3))
  assert g(((a,), b))[1] is not b  # outputs are new Arrays
  with pytest.raises(TypeError):
    g(((a,), "b"))
  identity = jax.jit(lambda t: t)  # the output has the argument's container types
  for tree in ([a, b], (a, b), {"k": a}, collections.OrderedDict(k=a), [a, None], [a, (b,)]):
    identity([a, b])
    identity([a, b])
    out = identity(tree)
    assert jax.tree.structure(out) == jax.tree.structure(tree), tree
