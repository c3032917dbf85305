"""Records tests/golden/control_flow_ad.json: printed jaxprs of derivatives of control flow.

Run with real JAX's virtualenv (never with xjax's):

    .venv-jax/bin/python tools/golden_control_flow_ad.py

`cases(jax, jnp, lax, np)` is shared with tests/lax/test_control_flow_ad_printing.py,
which runs the same code under xjax and compares ``str(jaxpr)`` texts exactly.
Each case is ``(case_id, fn, args)``; the golden text is
``str(jax.make_jaxpr(fn)(*args))``, where `fn` typically returns
``jax.linearize(f, x)[1]``'s jaxpr-able call, a vjp, or a grad.
"""
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "tests", "golden", "control_flow_ad.json")


def cases(jax, jnp, lax, np):
  """The golden cases: a list of (case_id, fn, args)."""
  def f32(*shape):
    n = int(np.prod(shape)) if shape else 1
    return (np.arange(n, dtype=np.float32) / 4 + 0.5).reshape(shape)

  out = []

  # Integer arguments (a switch index, a trip count) are not differentiated: the
  # transformations see `f` with them closed over.
  def split(args):
    diff = [i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f"]
    def with_ints(f, xs):
      def h(*ds):
        full = list(xs)
        for i, d in zip(diff, ds):
          full[i] = d
        return f(*full)
      return h, [xs[i] for i in diff]
    return with_ints

  def lin(case_id, f, *args):
    # the linear function of jax.linearize, applied to tangents equal to the primals
    def g(*xs):
      h, ds = split(args)(f, xs)
      _, f_jvp = jax.linearize(h, *ds)
      return f_jvp(*ds)
    out.append((case_id + "_linearize", g, args))

  def vjp(case_id, f, *args):
    def g(*xs):
      h, ds = split(args)(f, xs)
      y, f_vjp = jax.vjp(h, *ds)
      return f_vjp(y)
    out.append((case_id + "_vjp", g, args))

  def grad(case_id, f, *args):
    def g(*xs):
      h, ds = split(args)(f, xs)
      return jax.grad(lambda *ds: jnp.sum(h(*ds)), argnums=tuple(range(len(ds))))(*ds)
    out.append((case_id + "_grad", g, args))

  def all3(case_id, f, *args):
    lin(case_id, f, *args)
    vjp(case_id, f, *args)
    grad(case_id, f, *args)

  # --- cond / switch -------------------------------------------------------
  all3("cond_sin_cos", lambda x: lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x), f32(3))
  all3("cond_diff_res", lambda x: lax.cond(x.sum() > 0, lambda x: jnp.sin(x) * 2.,
                                          lambda x: jnp.exp(jnp.cos(x)), x), f32(3))
  all3("cond_two_ops", lambda x, y: lax.cond(x.sum() > y.sum(), lambda x, y: x * y,
                                            lambda x, y: jnp.sin(x) + y, x, y), f32(3), f32(3))
  all3("cond_linear_branch", lambda x: lax.cond(x.sum() > 0, lambda x: x * 2., jnp.sin, x),
       f32(3))
  all3("cond_closure", lambda x, w: lax.cond(x.sum() > 0, lambda x: x * jnp.sin(w),
                                            lambda x: x + w, x), f32(3), f32(3))
  all3("switch_three", lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda x: x * x], x),
       1, f32(3))
  all3("switch_mixed_shapes", lambda i, x: lax.switch(
      i, [lambda x: jnp.sin(x), lambda x: jnp.sum(jnp.cos(x)) * x,
          lambda x: jnp.exp(jnp.sum(x * x)) * x], x), 2, f32(3))
  # --- scan ----------------------------------------------------------------
  all3("scan_cumsin", lambda c, xs: lax.scan(lambda c, x: (c * jnp.sin(x), c + x), c, xs)[1],
       f32(), f32(4))
  all3("scan_invariant", lambda w, c: lax.scan(
      lambda c, _: (c * jnp.sin(w), None), c, None, length=5)[0], f32(3), f32(3))
  all3("scan_forwarded_const", lambda w, c: lax.scan(
      lambda c, _: (c * w, None), c, None, length=5)[0], f32(3), f32(3))
  all3("scan_forwarded_xs", lambda c, xs: lax.scan(lambda c, x: (c * x, None), c, xs)[0],
       f32(3), f32(4, 3))
  all3("scan_dup_res", lambda c, xs: lax.scan(
      lambda c, x: (jnp.sin(c) * x + jnp.sin(c), None), c, xs)[0], f32(3), f32(4, 3))
  all3("scan_tanh_rnn", lambda w, c, xs: lax.scan(
      lambda c, x: (jnp.tanh(w @ c + x), c), c, xs)[0],
       f32(3, 3), f32(3), f32(4, 3))
  all3("fori_static", lambda x: lax.fori_loop(0, 4, lambda i, c: jnp.sin(c) * i, x), f32(3))
  # --- while / dynamic fori -------------------------------------------------
  def fori_dyn(x, n):
    return lax.fori_loop(0, n, lambda i, c: jnp.sin(c) * 2., x)
  lin("fori_dynamic", fori_dyn, f32(3), 3)
  out.append(("fori_dynamic_jvp",
              lambda x, n: jax.jvp(lambda x: fori_dyn(x, n), (x,), (x,)), (f32(3), 3)))
  def while_two(x):
    return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * jnp.cos(c[1])),
                          (0, x))[1]
  lin("while_counter", while_two, f32(3))
  out.append(("while_counter_jvp", lambda x: jax.jvp(while_two, (x,), (x,)), (f32(3),)))
  def while_known_dep(x, y):
    def body(c):
      i, a, b = c
      return i + 1, a * 2., b * a
    return lax.while_loop(lambda c: c[0] < 3, body, (0, x, y))[2]
  lin("while_known_dep", while_known_dep, f32(3), f32(3))
  out.append(("while_known_dep_partial_linearize",
              lambda x, y: jax.linearize(lambda y: while_known_dep(x, y), y)[1](y),
              (f32(3), f32(3))))
  return out


def main():
  import jax
  import jax.numpy as jnp
  import numpy as np
  from jax import lax
  golden = {}
  for case_id, fn, args in cases(jax, jnp, lax, np):
    golden[case_id] = str(jax.make_jaxpr(fn)(*args))
  with open(OUT, "w") as f:
    json.dump({"jax_version": jax.__version__, "cases": golden}, f, indent=1, sort_keys=True)
    f.write("\n")
  print(f"wrote {len(golden)} cases to {OUT}", file=sys.stderr)


if __name__ == "__main__":
  main()
