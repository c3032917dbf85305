"""Cache-context laws: every cache of traces and programs is keyed on every context.

The law, for each context that changes what a trace produces (a flag, a context
manager, the context mesh, the named axes bound) and each entry point that caches
(jit and its fast paths, static arguments, eager primitives, eager control flow,
checkpoint, custom_jvp/vjp, vmap/grad of jit, make_jaxpr, random):

  a function traced and compiled in context A, then called in context B, gives what
  a fresh trace in B gives (B's result, or B's error); switching back to A gives A's
  result again; and the same with A and B swapped.

The "fresh" reference is computed after `jax.clear_caches()` with new function
objects. Each case first checks that the two contexts do give different results, so
the law cannot hold by accident. (The file also passes under JAX 0.10.2 with its
imports swapped, which is how the expected outcomes were checked.)
"""
import contextlib
import functools

import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax
from xjax.sharding import AbstractMesh, AxisType

X = np.array([1.0, 2.0, 3.0], np.float32)


# ----------------------------------------------------------------------------
# Outcomes: values (dtype, shape, bits), jaxpr text, or the error type


def outcome(thunk):
  """('ok', leaves as (dtype, shape, values)) or ('raise', error type name)."""
  try:
    out = thunk()
  except Exception as e:  # noqa: BLE001  (the error type is the outcome)
    return ("raise", type(e).__name__)
  if isinstance(out, str):
    return ("ok", out)
  leaves = jax.tree_util.tree_leaves(out)
  return ("ok", tuple((str(np.asarray(v).dtype), np.shape(v), np.asarray(v).tobytes())
                      for v in leaves))


# ----------------------------------------------------------------------------
# Bodies whose result visibly depends on one context each


def body_mesh(x):
  return x + 10.0 * len(jax.sharding.get_abstract_mesh().axis_names)


def body_axis_types(x):
  types = jax.sharding.get_abstract_mesh().axis_types
  return x + (100.0 if types and types[0] == AxisType.Explicit else 0.0)


def body_x64(x):
  return x * jnp.ones((), dtype=float)  # float64 under x64, float32 otherwise


def body_dtype_promotion(x):
  # int8 + uint8 is int16 under 'standard' promotion, a TypePromotionError under 'strict'.
  return x * (x.astype(jnp.int8) + x.astype(jnp.uint8))


def body_rank_promotion(x):
  return x + jnp.ones((2, 3), jnp.float32)  # rank promotion: an error under 'raise'


def body_precision(x):
  return jnp.dot(x, x) * x  # the dot's precision param follows the context


def body_nans(x):
  return jnp.log(x - 2.0)  # a NaN: FloatingPointError under debug_nans


def body_jit_disabled(x):
  return x + (0.0 if isinstance(x, jax.core.Tracer) else 1000.0)


def body_named_axes(x):
  return x * lax.axis_size("i") + lax.psum(x, "i")


# ----------------------------------------------------------------------------
# Entry points: make(body) -> call(x). Every function object passed to a caching API
# is made once in `make`, so the second context finds the first context's trace.


def _jit(body):
  f = jax.jit(body)
  return lambda x: [f(x) for _ in range(3)][-1]  # first call, memo, fast path


def _jit_static(body):
  f = jax.jit(lambda x, k: body(x) * k, static_argnums=1)
  return lambda x: [f(x, 2.0) for _ in range(3)][-1]


def _eager(body):
  return body


def _cond(body):
  other = lambda x: body(x) * 2
  return lambda x: lax.cond(jnp.sum(x) > -1e9, body, other, x)


def _scan(body):
  def step(c, _):
    return c, body(c)
  return lambda x: lax.scan(step, x, None, length=2)[1]


def _while(body):
  def cond_fun(c):
    return c[0] < 2

  def body_fun(c):
    i, x, _ = c
    return i + 1, x, body(x)
  return lambda x: lax.while_loop(cond_fun, body_fun, (0, x, body(x)))[2]


def _fori(body):
  def step(i, c):
    x, _ = c
    return x, body(x)
  return lambda x: lax.fori_loop(0, 2, step, (x, body(x)))[1]


def _checkpoint(body):
  return jax.checkpoint(body)


def _custom_jvp(body):
  f = jax.custom_jvp(body)
  f.defjvp(lambda primals, tangents: (f(*primals), tangents[0]))
  return f


def _custom_vjp(body):
  f = jax.custom_vjp(body)
  f.defvjp(lambda x: (f(x), None), lambda _, g: (g,))
  return f


def _vmap_jit(body):
  f = jax.vmap(jax.jit(body))
  return lambda x: f(jnp.stack([x, x + 1]))


def _grad_jit(body):
  g = jax.jit(body)
  f = jax.value_and_grad(lambda x: jnp.sum(g(x)))
  return lambda x: [f(x) for _ in range(2)][-1]


def _jaxpr_text(fun):
  return lambda x: str(jax.make_jaxpr(fun)(x))


def _jaxpr_jit(body):
  return _jaxpr_text(jax.jit(body))


def _jaxpr_body(body):
  return _jaxpr_text(body)


def _jaxpr_cond(body):
  other = lambda x: body(x) * 2
  return _jaxpr_text(lambda x: lax.cond(jnp.sum(x) > 0, body, other, x))


def _jaxpr_scan(body):
  def step(c, _):
    return c, body(c)
  return _jaxpr_text(lambda x: lax.scan(step, x, None, length=2))


VALUE_ENTRIES = {"jit": _jit, "jit_static": _jit_static, "eager": _eager, "cond": _cond,
                 "scan": _scan, "while": _while, "fori": _fori, "checkpoint": _checkpoint,
                 "custom_jvp": _custom_jvp, "custom_vjp": _custom_vjp, "vmap_jit": _vmap_jit,
                 "grad_jit": _grad_jit}
JAXPR_ENTRIES = {"jaxpr_jit": _jaxpr_jit, "jaxpr_body": _jaxpr_body,
                 "jaxpr_cond": _jaxpr_cond, "jaxpr_scan": _jaxpr_scan}
ALL_ENTRIES = {**VALUE_ENTRIES, **JAXPR_ENTRIES}


# ----------------------------------------------------------------------------
# Contexts: name -> (body, context A, context B, entries the context shows in)


def _mesh(names):
  return jax.make_mesh((1,) * len(names), names, axis_types=(AxisType.Explicit,) * len(names),
                       devices=jax.devices()[:1])


@contextlib.contextmanager
def _explicit_mesh_then(abstract_types=None):
  with jax.set_mesh(_mesh(("a",))):
    if abstract_types is None:
      yield
    else:
      with jax.sharding.use_abstract_mesh(AbstractMesh((1,), ("a",), axis_types=abstract_types)):
        yield


@contextlib.contextmanager
def _x64(on):
  old = jax.config.jax_enable_x64
  jax.config.update("jax_enable_x64", on)
  try:
    yield
  finally:
    jax.config.update("jax_enable_x64", old)


# Under vmap or grad the function sees a tracer with or without jit; eager control flow
# runs its Python functions under disable_jit (as in JAX), so it is in.
_NO_DISABLE_JIT = ("eager", "checkpoint", "custom_jvp", "custom_vjp", "jaxpr_body",
                   "jaxpr_cond", "jaxpr_scan", "vmap_jit", "grad_jit")

CONTEXTS = {
    "set_mesh": (body_mesh, lambda: jax.set_mesh(_mesh(("a",))),
                 lambda: jax.set_mesh(_mesh(("a", "b"))), ALL_ENTRIES),
    "set_mesh_vs_none": (body_mesh, contextlib.nullcontext,
                         lambda: jax.set_mesh(_mesh(("a",))), ALL_ENTRIES),
    "use_abstract_mesh": (body_axis_types, _explicit_mesh_then,
                          lambda: _explicit_mesh_then((AxisType.Auto,)), ALL_ENTRIES),
    "x64": (body_x64, lambda: _x64(False), lambda: _x64(True), ALL_ENTRIES),
    "dtype_promotion": (body_dtype_promotion, lambda: jax.numpy_dtype_promotion("standard"),
                        lambda: jax.numpy_dtype_promotion("strict"), ALL_ENTRIES),
    "rank_promotion": (body_rank_promotion, lambda: jax.numpy_rank_promotion("allow"),
                       lambda: jax.numpy_rank_promotion("raise"), ALL_ENTRIES),
    "matmul_precision": (body_precision, contextlib.nullcontext,
                         lambda: jax.default_matmul_precision("highest"), JAXPR_ENTRIES),
    "debug_nans": (body_nans, lambda: jax.debug_nans(False), lambda: jax.debug_nans(True),
                   VALUE_ENTRIES),
    "disable_jit": (body_jit_disabled, contextlib.nullcontext, jax.disable_jit,
                    [e for e in ALL_ENTRIES if e not in _NO_DISABLE_JIT]),
}
CASES = [(c, e) for c, (_, _, _, entries) in CONTEXTS.items() for e in entries]


def _run(make_call, context):
  with context():
    return outcome(lambda: make_call(jnp.asarray(X)))


@pytest.mark.parametrize("context_name,entry", CASES, ids=[f"{c}-{e}" for c, e in CASES])
def test_cached_trace_follows_the_context(context_name, entry):
  body, ctx_a, ctx_b, _ = CONTEXTS[context_name]
  make = ALL_ENTRIES[entry]
  jax.clear_caches()
  fresh_a = _run(make(body), ctx_a)
  jax.clear_caches()
  fresh_b = _run(make(body), ctx_b)
  assert fresh_a != fresh_b, "the context must show in the result for the law to be tested"
  for first, second, want_first, want_second in ((ctx_a, ctx_b, fresh_a, fresh_b),
                                                 (ctx_b, ctx_a, fresh_b, fresh_a)):
    jax.clear_caches()
    call = make(body)  # one function object for all three calls
    assert _run(call, first) == want_first
    assert _run(call, second) == want_second
    assert _run(call, first) == want_first


# ----------------------------------------------------------------------------
# Named axes: a body using lax.axis_size/psum, called under vmap(axis_name='i') of size 2
# then 3 (the trace caches key on the axes bound, not only on the argument avals, which
# are the same: (3,) inside both).

NAMED_ENTRIES = [e for e in VALUE_ENTRIES if e not in ("vmap_jit",)]


def _run_named(call, size):
  xs = jnp.stack([X * (k + 1) for k in range(size)])
  return outcome(lambda: jax.vmap(call, axis_name="i")(xs))


@pytest.mark.parametrize("entry", NAMED_ENTRIES)
def test_cached_trace_follows_the_named_axes(entry):
  make = VALUE_ENTRIES[entry]
  jax.clear_caches()
  fresh = {n: None for n in (2, 3)}
  for n in fresh:
    jax.clear_caches()
    fresh[n] = _run_named(make(body_named_axes), n)
    assert fresh[n][0] == "ok", fresh[n]
  for order in ((2, 3, 2), (3, 2, 3)):
    jax.clear_caches()
    call = make(body_named_axes)
    for n in order:
      assert _run_named(call, n) == fresh[n]


def test_cached_jaxpr_follows_the_named_axes():
  jitted = jax.jit(body_named_axes)
  texts = []
  for n in (2, 3, 2):
    xs = jnp.ones((n, 3))
    texts.append(str(jax.make_jaxpr(jax.vmap(jitted, axis_name="i"))(xs)))
  jax.clear_caches()
  fresh3 = str(jax.make_jaxpr(jax.vmap(jax.jit(body_named_axes), axis_name="i"))(
      jnp.ones((3, 3))))
  assert texts[0] == texts[2] != texts[1]
  assert texts[1] == fresh3


# ----------------------------------------------------------------------------
# jax.random: threefry_partitionable changes the bits; x64 changes the dtypes.

RANDOM_FUNS = {
    "bits": lambda k: jax.random.bits(k, (5, 3)),
    "uniform": lambda k: jax.random.uniform(k, (4, 3)),
    "normal": lambda k: jax.random.normal(k, (7,)),
    "split": lambda k: jax.random.key_data(jax.random.split(k, 3)),
    "randint": lambda k: jax.random.randint(k, (6,), 0, 1000),
}
RANDOM_CONTEXTS = {
    "threefry_partitionable": (lambda: jax.threefry_partitionable(False),
                               lambda: jax.threefry_partitionable(True)),
    "x64": (lambda: _x64(False), lambda: _x64(True)),
}


@pytest.mark.parametrize("context_name", RANDOM_CONTEXTS)
@pytest.mark.parametrize("fun_name", RANDOM_FUNS)
@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
def test_random_follows_the_context(context_name, fun_name, jitted):
  ctx_a, ctx_b = RANDOM_CONTEXTS[context_name]
  fun = RANDOM_FUNS[fun_name]

  def make():
    f = jax.jit(fun) if jitted else fun
    return lambda: [f(jax.random.key(42)) for _ in range(2)][-1]

  def run(call, ctx):
    with ctx():
      return outcome(call)
  jax.clear_caches()
  fresh_a = run(make(), ctx_a)
  jax.clear_caches()
  fresh_b = run(make(), ctx_b)
  if context_name == "threefry_partitionable" or fun_name != "split":
    assert fresh_a != fresh_b
  for first, second, want_first, want_second in ((ctx_a, ctx_b, fresh_a, fresh_b),
                                                 (ctx_b, ctx_a, fresh_b, fresh_a)):
    jax.clear_caches()
    call = make()
    assert run(call, first) == want_first
    assert run(call, second) == want_second
    assert run(call, first) == want_first


# ----------------------------------------------------------------------------
# Thread-local contexts: a context entered in one thread leaves another thread's cached
# results alone (checked in one process here; tests/api/test_cache_concurrency.py runs
# threads concurrently in fresh processes).


def test_a_context_in_another_thread_does_not_leak():
  import threading
  f = jax.jit(body_dtype_promotion)
  want = outcome(lambda: f(X))
  entered, leave = threading.Event(), threading.Event()
  seen = []

  def strict_thread():
    with jax.numpy_dtype_promotion("strict"):
      entered.set()
      seen.append(outcome(lambda: f(X)))
      leave.wait(30)

  t = threading.Thread(target=strict_thread)
  t.start()
  entered.wait(30)
  try:
    assert [outcome(lambda: f(X)) for _ in range(3)] == [want] * 3
  finally:
    leave.set()
    t.join(30)
  assert seen == [("raise", "TypePromotionError")]


def test_set_mesh_is_thread_local():
  # As in JAX: set_mesh (as a setter or a context manager) sets this thread's mesh only,
  # so a jitted function called from another thread traces without it.
  import threading
  names = jax.jit(body_mesh)
  seen = []
  with jax.set_mesh(_mesh(("a", "b"))):
    np.testing.assert_array_equal(names(jnp.asarray(X)), X + 20)
    t = threading.Thread(target=lambda: seen.append(outcome(lambda: names(jnp.asarray(X)))))
    t.start()
    t.join(30)
  assert seen == [outcome(lambda: X + 0)]
