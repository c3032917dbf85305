"""Cache-context laws on 8 devices: the context mesh of `set_mesh` (meshes of several
sizes) and `jax.default_device` (placement).

A function traced and compiled under one mesh (or default device), then called under
another, gives what a fresh trace there gives, and the first context's result again
when switched back (see tests/api/test_cache_context_laws.py for the one-device
contexts).
"""
import contextlib

import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax

X = np.arange(8, dtype=np.float32)


def body(x):
  mesh = jax.sharding.get_abstract_mesh()
  return x * sum(mesh.axis_sizes) + len(mesh.axis_names)


def _cond(f):
  other = lambda x: f(x) * 2
  return lambda x: lax.cond(jnp.sum(x) > -1e9, f, other, x)


def _scan(f):
  def step(c, _):
    return c, f(c)
  return lambda x: lax.scan(step, x, None, length=2)[1]


def _jit(f):
  g = jax.jit(f)
  return lambda x: [g(x) for _ in range(3)][-1]


ENTRIES = {
    "jit": _jit,
    "jit_static": lambda f: (lambda g: lambda x: [g(x, 3) for _ in range(3)][-1])(
        jax.jit(lambda x, k: f(x) * k, static_argnums=1)),
    "eager": lambda f: f,
    "cond": _cond,
    "scan": _scan,
    "checkpoint": jax.checkpoint,
    "vmap_jit": lambda f: (lambda g: lambda x: g(jnp.stack([x, -x])))(jax.vmap(jax.jit(f))),
    "grad_jit": lambda f: (lambda g: lambda x: jax.grad(lambda y: jnp.sum(g(y) ** 2))(x))(
        jax.jit(f)),
    "jaxpr_jit": lambda f: (lambda g: lambda x: str(jax.make_jaxpr(g)(x)))(jax.jit(f)),
}

MESHES = {
    "none": contextlib.nullcontext,
    "x8": lambda: jax.set_mesh(jax.make_mesh((8,), ("x",))),
    "x2y4": lambda: jax.set_mesh(jax.make_mesh((2, 4), ("x", "y"))),
    "x4": lambda: jax.set_mesh(jax.make_mesh((4,), ("x",), devices=jax.devices()[4:])),
}
PAIRS = [("none", "x8"), ("x8", "x2y4"), ("x8", "x4")]


def outcome(thunk):
  try:
    out = thunk()
  except Exception as e:  # noqa: BLE001  (the error type is the outcome)
    return ("raise", type(e).__name__)
  if isinstance(out, str):
    return ("ok", out)
  return ("ok", [(str(v.dtype), np.asarray(v).tolist()) for v in jax.tree_util.tree_leaves(out)])


def _run(call, ctx):
  with ctx():
    return outcome(lambda: call(jnp.asarray(X)))


@pytest.mark.parametrize("pair", PAIRS, ids=["-".join(p) for p in PAIRS])
@pytest.mark.parametrize("entry", ENTRIES)
def test_cached_trace_follows_the_mesh(entry, pair):
  make = ENTRIES[entry]
  a, b = (MESHES[p] for p in pair)
  jax.clear_caches()
  fresh_a = _run(make(body), a)
  jax.clear_caches()
  fresh_b = _run(make(body), b)
  assert fresh_a[0] == fresh_b[0] == "ok"
  assert fresh_a != fresh_b
  for first, second, want_first, want_second in ((a, b, fresh_a, fresh_b),
                                                 (b, a, fresh_b, fresh_a)):
    jax.clear_caches()
    call = make(body)
    assert _run(call, first) == want_first
    assert _run(call, second) == want_second
    assert _run(call, first) == want_first


# ----------------------------------------------------------------------------
# jax.default_device: uncommitted arguments (Arrays made outside the context, Python
# scalars) and results go to the default device of the call's context, whichever
# device the cached program was first compiled for.

DEVICE_ENTRIES = {
    "jit": lambda: (lambda g: lambda x: [g(x) for _ in range(3)][-1])(jax.jit(lambda x: x * 2)),
    "jit_scalar": lambda: (lambda g: lambda x: [g(1.5) for _ in range(3)][-1])(
        jax.jit(lambda x: x * 2)),
    "jit_two_args": lambda: (lambda g: lambda x: [g(x, 2.0) for _ in range(3)][-1])(
        jax.jit(lambda x, y: x * y)),
    "jit_static": lambda: (lambda g: lambda x: [g(x, 2) for _ in range(3)][-1])(
        jax.jit(lambda x, k: x * k, static_argnums=1)),
    "eager": lambda: lambda x: jnp.sin(x) + 1,
    "cond": lambda: (lambda f: lambda x: lax.cond(jnp.sum(x) > 0, f, f, x))(lambda x: x + 1),
    "scan": lambda: (lambda f: lambda x: lax.scan(f, x, None, length=2)[1])(
        lambda c, _: (c, c * 2)),
    "random": lambda: lambda x: jax.random.uniform(jax.random.key(0), (3,)),
}


@pytest.mark.parametrize("entry", DEVICE_ENTRIES)
def test_cached_program_follows_the_default_device(entry):
  devices = jax.devices()
  x = jnp.asarray(X)  # uncommitted, on device 0
  call = DEVICE_ENTRIES[entry]()
  for d in (0, 3, 0, 5, 5, 0):
    with jax.default_device(devices[d]):
      out = call(x)
    assert out.devices() == {devices[d]}, (d, out.devices())
    assert not out.committed
  jax.clear_caches()
  with jax.default_device(devices[3]):
    want = np.asarray(DEVICE_ENTRIES[entry]()(x))
  np.testing.assert_array_equal(np.asarray(out), want)
