"""Records `jax.custom_batching` goldens (tests/golden/custom_batching.json) with *real* JAX.

Run with the reference virtualenv (never with xjax):

    .venv-jax/bin/python tools/golden_custom_batching.py

`cases(jax, jnp, cb)` below is shared with tests/core/test_custom_batching.py, which
loads this file by path and runs the same code under xjax (this module imports no
library at top level). Each case is ``(case_id, kind, thunk)``:

* ``value``: `thunk()` returns a pytree of arrays, recorded as its treedef and, per
  leaf, dtype, shape, weak type and values;
* ``jaxpr``: `thunk()` returns a printed jaxpr (text);
* ``error``: `thunk()` raises; recorded as the error class name and message.
"""
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "tests", "golden", "custom_batching.json")


def cases(jax, jnp, cb):
  """The cases, as ``(case_id, kind, thunk)``; `cb` is the custom_batching module."""
  out = []

  def value(case_id, thunk):
    out.append((case_id, "value", thunk))

  def jaxpr(case_id, fn, *args):
    out.append((case_id, "jaxpr", lambda: str(jax.make_jaxpr(fn)(*args))))

  def error(case_id, thunk):
    out.append((case_id, "error", thunk))

  xs = jnp.arange(3.0)
  ys = jnp.arange(1.0, 4.0)
  x0, y0 = jnp.float32(0.5), jnp.float32(2.0)

  # The first example of JAX's custom_vmap docstring: the rule replaces x + y by x * y.
  @cb.custom_vmap
  def f(x, y):
    return x + y

  @f.def_vmap
  def f_vmap_rule(axis_size, in_batched, xs, ys):
    assert all(in_batched)
    assert xs.shape[0] == axis_size
    assert ys.shape[0] == axis_size
    return xs * ys, True

  value("doc_vmap", lambda: jax.vmap(f)(jnp.arange(3), jnp.arange(1, 4)))
  value("eager", lambda: f(xs, ys))
  value("jit", lambda: jax.jit(f)(xs, ys))
  value("jit_of_vmap", lambda: jax.jit(jax.vmap(f))(xs, ys))
  value("vmap_of_jit", lambda: jax.vmap(jax.jit(f))(xs, ys))
  value("vmap_in_axes_1", lambda: jax.vmap(f, in_axes=1)(jnp.ones((2, 3)), jnp.full((2, 3), 3.0)))
  value("vmap_out_axes_1", lambda: jax.vmap(f, out_axes=1)(
      jnp.arange(6.0).reshape(3, 2), jnp.arange(6.0).reshape(3, 2)))
  value("vmap_of_vmap", lambda: jax.vmap(jax.vmap(f))(
      jnp.arange(6.0).reshape(2, 3), jnp.arange(6.0).reshape(2, 3)))
  jaxpr("jaxpr_call", f, 1.0, 2.0)
  jaxpr("jaxpr_vmap", jax.vmap(f), xs, ys)
  jaxpr("jaxpr_jit", jax.jit(f), x0, y0)
  jaxpr("jaxpr_vmap_of_vmap", jax.vmap(jax.vmap(f)), jnp.ones((2, 3)), jnp.ones((2, 3)))

  # A rule that handles unbatched operands (and so works for jacfwd, vmap of jvp, ...).
  @cb.custom_vmap
  def fm(x, y):
    return x + y

  @fm.def_vmap
  def fm_rule(axis_size, in_batched, xs, ys):
    return jnp.sin(xs) * ys, in_batched[0] or in_batched[1]

  value("vmap_in_axes_none", lambda: jax.vmap(fm, in_axes=(0, None))(xs, y0))
  value("jvp", lambda: jax.jvp(fm, (x0, y0), (jnp.float32(1.0), jnp.float32(3.0))))
  value("jit_of_jvp", lambda: jax.jit(lambda x, y: jax.jvp(fm, (x, y), (x, y)))(x0, y0))
  value("vmap_of_jvp", lambda: jax.vmap(lambda x, y: jax.jvp(fm, (x, y), (y, x)))(xs, ys))
  value("vmap_of_jvp_primal_batched", lambda: jax.vmap(
      lambda x: jax.jvp(fm, (x, y0), (jnp.float32(1.0), jnp.float32(2.0))))(xs))
  value("vmap_of_jvp_tangent_batched", lambda: jax.vmap(
      lambda t: jax.jvp(fm, (x0, y0), (t, 2 * t)))(xs))
  value("vmap_of_jvp_mixed", lambda: jax.vmap(
      lambda x, t: jax.jvp(fm, (x, y0), (t, t)), in_axes=(0, None))(xs, y0))
  value("jvp_of_vmap", lambda: jax.jvp(jax.vmap(fm), (xs, ys), (ys, xs)))
  value("jacfwd", lambda: jax.jacfwd(fm)(xs, ys))
  value("jacfwd_of_jacfwd", lambda: jax.jacfwd(jax.jacfwd(fm))(x0, y0))
  value("vmap_of_jvp_of_jvp", lambda: jax.vmap(lambda x: jax.jvp(
      lambda z: jax.jvp(fm, (z, y0), (z, z))[1], (x,), (x,)))(xs))
  value("vmap_of_vmap_of_jvp", lambda: jax.vmap(jax.vmap(
      lambda x, y: jax.jvp(fm, (x, y), (y, x))))(jnp.ones((2, 3)), jnp.full((2, 3), 2.0)))
  jaxpr("jaxpr_jvp", lambda x, y: jax.jvp(fm, (x, y), (1.0, 1.0)), 1.0, 2.0)
  jaxpr("jaxpr_vmap_of_jvp", jax.vmap(lambda x, y: jax.jvp(fm, (x, y), (y, x))), xs, ys)

  # Reverse mode is not supported.
  error("grad", lambda: jax.grad(fm)(x0, y0))
  error("grad_of_jit", lambda: jax.grad(jax.jit(fm))(x0, y0))
  error("vjp", lambda: jax.vjp(fm, x0, y0))
  error("linearize", lambda: jax.linearize(fm, x0, y0))
  error("vmap_of_grad", lambda: jax.vmap(jax.grad(fm))(xs, ys))
  error("grad_of_scan", lambda: jax.grad(lambda x: jax.lax.scan(
      lambda c, _: (fm(c, c), None), x, None, length=2)[0])(x0))

  # A rule calling the function itself: nested vmaps apply it once per level.
  @cb.custom_vmap
  def f2(x, y):
    return x + y

  @f2.def_vmap
  def f2_rule(axis_size, in_batched, xs, ys):
    return f2(xs, ys) * axis_size, True

  value("recursive_vmap_of_vmap", lambda: jax.vmap(jax.vmap(f2))(
      jnp.ones((2, 3)), jnp.ones((2, 3))))
  value("recursive_vmap_of_vmap_in_axes", lambda: jax.vmap(jax.vmap(f2), in_axes=(0, None))(
      jnp.ones((2, 3)), jnp.ones(3)))

  # Pytree arguments, defaults and keyword arguments; in_batched mirrors the arguments.
  @cb.custom_vmap
  def p(d, s=1.0):
    return {"o": d["a"] * s + d["b"][0]}

  @p.def_vmap
  def p_rule(axis_size, in_batched, d, s):
    flags = [in_batched[0]["a"], in_batched[0]["b"][0], in_batched[1]]
    code = sum(2.0 ** i for i, b in enumerate(flags) if b)
    return {"o": d["a"] * 100.0 + d["b"][0] + code}, {"o": True}

  value("pytree_all_batched", lambda: jax.vmap(p)({"a": xs, "b": (ys,)}))
  value("pytree_some_batched", lambda: jax.vmap(p, in_axes=({"a": 0, "b": None},))(
      {"a": xs, "b": (y0,)}))
  value("pytree_kwarg", lambda: jax.vmap(lambda d, s: p(d, s=s))({"a": xs, "b": (ys,)}, ys))
  jaxpr("jaxpr_pytree", p, {"a": 1.0, "b": (2.0,)})
  jaxpr("jaxpr_pytree_kwarg", lambda a, b: p(d={"a": a, "b": (b,)}, s=3.0), 1.0, 2.0)

  # An unbatched output.
  @cb.custom_vmap
  def q(x):
    return x.sum(), x

  @q.def_vmap
  def q_rule(axis_size, in_batched, xs):
    return (xs.sum(), xs * 2), (False, True)

  value("unbatched_output", lambda: jax.vmap(q)(jnp.arange(6.0).reshape(3, 2)))
  jaxpr("jaxpr_unbatched_output", jax.vmap(q), jnp.ones((3, 2)))

  # A function closing over an array: the constant is the call's first operand.
  c = jnp.float32(3.0)

  @cb.custom_vmap
  def g(x):
    return x * c

  @g.def_vmap
  def g_rule(axis_size, in_batched, xs):
    return xs * c * 10, in_batched[0]

  value("closure_vmap", lambda: jax.vmap(g)(xs))
  value("closure_jit_of_vmap", lambda: jax.jit(jax.vmap(g))(xs))
  value("closure_vmap_of_jvp", lambda: jax.vmap(lambda x: jax.jvp(g, (x,), (x,)))(xs))
  jaxpr("jaxpr_closure", g, x0)
  jaxpr("jaxpr_closure_jvp", lambda x: jax.jvp(g, (x,), (x,)), x0)

  # The second docstring example: custom_vjp outside, for reverse mode.
  def sin_mul(x, y):
    return jnp.sin(x) * y

  inner = cb.custom_vmap(sin_mul)

  @inner.def_vmap
  def sin_mul_rule(axis_size, in_batched, xs, ys):
    return jnp.cos(xs) * ys, True

  h = jax.custom_vjp(inner)

  def h_fwd(x, y):
    return h(x, y), (jnp.cos(x), jnp.sin(x), y)

  def h_bwd(res, g):
    cos_x, sin_x, y = res
    return (cos_x * g * y, sin_x * g)

  h.defvjp(h_fwd, h_bwd)
  value("doc_vjp_vmap", lambda: jax.vmap(h)(jnp.zeros(3), jnp.ones(3)))
  value("doc_vjp_grad", lambda: jax.grad(h)(jnp.zeros(()), jnp.ones(())))
  value("doc_vjp_vmap_of_grad", lambda: jax.vmap(jax.grad(h, argnums=(0, 1)))(xs, ys))
  value("doc_vjp_grad_of_vmap", lambda: jax.grad(lambda x, y: jax.vmap(h)(x, y).sum())(xs, ys))

  # custom_jvp inside custom_vmap: `defjvp` reaches the inner function.
  @cb.custom_vmap
  @jax.custom_jvp
  def k(x):
    return jnp.sin(x)

  k.defjvp(lambda primals, tangents: (jnp.sin(primals[0]), 2 * tangents[0]))
  k.def_vmap(lambda axis_size, in_batched, xs: (jnp.cos(xs), in_batched[0]))
  value("inner_custom_jvp_jvp", lambda: jax.jvp(k, (x0,), (jnp.float32(1.0),)))
  value("inner_custom_jvp_vmap_of_jvp", lambda: jax.vmap(
      lambda x: jax.jvp(k, (x,), (jnp.ones_like(x),)))(xs))

  # sequential_vmap: the function mapped with a loop.
  @cb.sequential_vmap
  def s(x, y):
    return {"s": x * y[0], "t": (y[1],)}

  xs2 = jnp.arange(6.0).reshape(3, 2)
  value("sequential_in_axes_none", lambda: jax.vmap(s, in_axes=(0, None))(xs2, (y0, jnp.ones(4))))
  value("sequential_jit_of_vmap_of_vmap", lambda: jax.jit(jax.vmap(jax.vmap(s)))(
      xs2.reshape(1, 3, 2), (jnp.ones((1, 3)), jnp.ones((1, 3, 2)))))
  value("sequential_vmap_of_jvp", lambda: jax.vmap(
      lambda x: jax.jvp(s, (x, (y0, x0)), (x, (x0, x0))))(xs2))
  value("sequential_eager", lambda: s(xs, (y0, x0)))
  jaxpr("jaxpr_sequential", jax.vmap(s, in_axes=(0, None)), xs2, (y0, jnp.ones(4)))

  # Bad input.
  @cb.custom_vmap
  def norule(x):
    return x

  error("no_rule", lambda: norule(x0))

  @cb.custom_vmap
  def two(x, y):
    return (x, y)

  two.def_vmap(lambda axis_size, in_batched, x, y: ((x, y), True))
  error("spec_mismatch", lambda: jax.vmap(two)(xs, ys))

  def two_list_rule(axis_size, in_batched, x, y):
    return [x, y], [True, True]

  two2 = cb.custom_vmap(two.fun)
  two2.def_vmap(two_list_rule)
  error("output_mismatch", lambda: jax.vmap(two2)(xs, ys))
  error("kwargs_missing", lambda: two(x0, z=y0))
  error("kwargs_unexpected", lambda: two(x0, y0, z=y0))

  @cb.custom_vmap
  def kwonly(x, *, y):
    return x + y

  kwonly.def_vmap(lambda axis_size, in_batched, x: (x, True))
  error("kwargs_keyword_only", lambda: kwonly(x0, y=y0))
  return out


def _leaf(x, np):
  a = np.asarray(x)
  return {"dtype": a.dtype.name, "shape": list(a.shape),
          "weak_type": bool(getattr(x, "weak_type", False)), "values": a.ravel().tolist()}


def record() -> dict:
  import jax
  import jax.numpy as jnp
  import numpy as np
  from jax import custom_batching
  out = {}
  for case_id, kind, thunk in cases(jax, jnp, custom_batching):
    assert case_id not in out, case_id
    if kind == "error":
      try:
        thunk()
      except Exception as e:  # noqa: BLE001 - recording whatever JAX raises
        out[case_id] = {"kind": kind, "type": type(e).__name__, "message": str(e)}
      else:
        raise AssertionError(f"{case_id} did not raise")
    elif kind == "jaxpr":
      out[case_id] = {"kind": kind, "text": thunk()}
    else:
      leaves, tree = jax.tree_util.tree_flatten(thunk())
      out[case_id] = {"kind": kind, "tree": str(tree), "leaves": [_leaf(x, np) for x in leaves]}
  return out


def main():
  import jax
  result = {"jax_version": jax.__version__, "cases": record()}
  with open(OUT, "w") as fh:
    json.dump(result, fh, indent=1, sort_keys=True)
    fh.write("\n")
  print(f"wrote {len(result['cases'])} cases to {OUT}", file=sys.stderr)


if __name__ == "__main__":
  main()
