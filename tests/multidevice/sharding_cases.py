"""Sharding cases shared by the test (on xjax) and tools/golden_sharding.py (on JAX).

Each case takes the module (`xjax` or `jax`) and returns an array; the golden file
records its values and the spec of its sharding on JAX 0.10.2.
"""
import numpy as np


def _setup(jax, kind):
  from_ = jax.sharding
  types = (from_.AxisType.Explicit,) * 2 if kind == "explicit" else (from_.AxisType.Auto,) * 2
  mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=types)
  NS, P = from_.NamedSharding, from_.PartitionSpec
  a = np.arange(64, dtype=np.float32).reshape(8, 8) / 7
  b = np.arange(32, dtype=np.float32).reshape(8, 4) / 5
  return mesh, NS, P, a, b


def _put(jax, mesh, NS, P, x, *spec):
  return jax.device_put(x, NS(mesh, P(*spec)))


def _cases(kind):
  def case(build):
    def run(jax):
      mesh, NS, P, a, b = _setup(jax, kind)
      put = lambda x, *spec: _put(jax, mesh, NS, P, x, *spec)
      return build(jax, put, a, b)
    return run

  jnp = lambda jax: jax.numpy
  return {
      "add_same": case(lambda jax, put, a, b: put(a, "x", "y") + put(a, "x", "y")),
      "mul_scalar": case(lambda jax, put, a, b: put(a, "x") * 2),
      "sin_rows": case(lambda jax, put, a, b: jnp(jax).sin(put(a, "x"))),
      "add_uncommitted": case(lambda jax, put, a, b: put(a, "x") + jnp(jax).asarray(a)),
      "sum_all": case(lambda jax, put, a, b: jnp(jax).sum(put(a, "x", "y"))),
      "sum_axis0": case(lambda jax, put, a, b: jnp(jax).sum(put(a, "x", "y"), axis=0)),
      "sum_axis1": case(lambda jax, put, a, b: jnp(jax).sum(put(a, "x", "y"), axis=1)),
      "max_axis1": case(lambda jax, put, a, b: jnp(jax).max(put(a, "x"), axis=1)),
      "matmul_rows": case(lambda jax, put, a, b: put(a, "x") @ put(b, None)),
      "matmul_both": case(lambda jax, put, a, b: put(a, "x") @ put(b, None, "y")),
      "jit_add": case(lambda jax, put, a, b: jax.jit(lambda u, v: u * v + 1)(put(a, "x", "y"),
                                                                             put(a, "x", "y"))),
      "jit_matmul": case(lambda jax, put, a, b: jax.jit(lambda u, v: u @ v)(put(a, "x"),
                                                                          put(b, None, "y"))),
      "jit_reduce": case(lambda jax, put, a, b: jax.jit(lambda u: (u ** 2).mean(0))(
          put(a, ("x", "y")))),
      "transpose": case(lambda jax, put, a, b: put(a, "x", "y").T),
  }


def cases():
  out = {}
  for kind in ("auto", "explicit"):
    for name, fn in _cases(kind).items():
      out[f"{kind}/{name}"] = fn
  return out


def jaxpr_cases():
  """Printed jaxprs of functions of arrays split over Explicit axes (name -> fn(jax) -> str)."""
  def case(fn, *specs):
    def run(jax):
      mesh, NS, P, a, b = _setup(jax, "explicit")
      args = [_put(jax, mesh, NS, P, a, *s) for s in specs]
      return str(jax.make_jaxpr(fn(jax))(*args))
    return run

  jnp = lambda jax: jax.numpy
  return {
      "elementwise": case(lambda jax: lambda u: jnp(jax).sin(u) * 2 + u, ("x", "y")),
      "transpose_reduce": case(lambda jax: lambda u: (u.T, u.sum(0), u.max(1)), ("x", "y")),
      "matmul": case(lambda jax: lambda u, v: u @ v, ("x",), ("x",)),
      "reshape_merge": case(lambda jax: lambda u: u.reshape(64), ("x",)),
      "broadcast": case(lambda jax: lambda u: u[None] + 1, (("x", "y"),)),
      "typeof": lambda jax: str(jax.typeof(_put(jax, *_setup(jax, "explicit")[:3],
                                                _setup(jax, "explicit")[3], ("x", "y")))),
  }


def error_cases():
  """Functions raising JAX's sharding type errors (name -> fn(jax))."""
  def case(fn, *specs):
    def run(jax):
      mesh, NS, P, a, b = _setup(jax, "explicit")
      args = [_put(jax, mesh, NS, P, a, *s) for s in specs]
      return fn(jax)(*args)
    return run
  return {
      "add_conflict": case(lambda jax: lambda u, v: u + v, ("x", "y"), ("y", "x")),
      "dot_inconsistent": case(lambda jax: lambda u, v: u @ v, ("x", "y"), ("x", "y")),
      "reshape_split": case(lambda jax: lambda u: u.reshape(4, 16), ("x",)),
  }
