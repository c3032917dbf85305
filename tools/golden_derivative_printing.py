"""Records tests/golden/derivative_printing.json: printed jaxprs of derivatives of `jit`,
of unused binders (``_``) in nested jaxprs, and of typed PRNG keys (ids ``key_*``).

Run with real JAX's virtualenv (never with xjax's):

    .venv-jax/bin/python tools/golden_derivative_printing.py

`cases(jax, jnp, lax, np)` is shared with tests/core/test_derivative_printing.py, which
runs the same code under xjax and compares ``str(jax.make_jaxpr(fn)(*args))`` exactly.
Each case is ``(case_id, fn, args)``.
"""
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "tests", "golden", "derivative_printing.json")


def cases(jax, jnp, lax, np):
  """The golden cases: a list of (case_id, fn, args)."""
  x = np.float32(0.75)
  v = np.arange(3, dtype=np.float32) / 4 + 0.5
  out = []

  def add(case_id, fn, *args):
    out.append((case_id, fn, args))

  # --- the transpose of jit: one `jit` equation, named as the function -------------
  g = jax.jit(lambda x: jnp.sin(x) * x, )
  def f(x):
    return g(x) * 2.
  add("jit_grad", jax.grad(f), x)
  add("jit_jvp", lambda x: jax.jvp(f, (x,), (x,)), x)
  add("jit_vjp", lambda x: jax.vjp(f, x)[1](x), x)
  add("jit_linearize", lambda x: jax.linearize(f, x)[1](x), x)
  add("jit_linearize_sin", lambda a: jax.linearize(jax.jit(jnp.sin), a)[1](a), x)
  h = jax.jit(lambda a, b: a * 2. + lax.stop_gradient(b))
  add("jit_grad_one_argnum", jax.grad(lambda a, b: h(a, b)), x, x)
  k = jax.jit(lambda a, n: a * n)
  add("jit_grad_int_operand", jax.grad(lambda a: k(a, 3)), x)
  add("jit_grad_nested", jax.grad(
      lambda a: jax.jit(lambda b: jnp.sin(jax.jit(jnp.cos)(b)))(a)), x)
  add("jit_vmap_grad", jax.vmap(jax.grad(lambda a: jax.jit(jnp.sin)(a))), v)
  add("jit_jit_grad", jax.jit(jax.grad(lambda a: jax.jit(jnp.sin)(a))), x)
  add("jit_grad_unused_output", jax.grad(lambda a: jax.jit(lambda b: (b * 2., b * 3.))(a)[0]),
      x)
  add("jit_grad_linear", jax.grad(lambda a: jax.jit(lambda b: b * 2.)(a)), x)
  add("jit_vjp_two_outputs",
      lambda a: jax.vjp(jax.jit(lambda b: (jnp.sin(b), b * 3.)), a)[1]((a, a)), x)
  add("jit_grad_forwarded_input", jax.grad(
      lambda a, b: jnp.sum(jax.jit(lambda a, b: (a, a * b))(a, b)[1]), argnums=(0, 1)), v, v)
  add("jit_grad_residual_is_output", jax.grad(
      lambda a: jnp.sum(jax.jit(lambda a: (jnp.exp(a), a))(a)[0] * 2.)), v)
  add("jit_grad_of_grad", jax.grad(jax.grad(lambda a: jax.jit(jnp.sin)(a))), x)

  # --- unused binders ----------------------------------------------------------
  add("unused_invar", lambda x, y: x, x, x)
  add("unused_invar_jit", lambda x, y: jax.jit(lambda a, b: a)(x, y), x, x)
  add("unused_eqn_in_jit", jax.jit(lambda a: (jnp.sin(a), a)[1]), x)
  add("unused_outputs_cond", lambda x, y: lax.cond(
      x > 0, lambda a, b: (a, b), lambda a, b: (b, a), x, y)[0], x, x)
  add("unused_eqn_in_cond", lambda x: lax.cond(
      x > 0, lambda a: (jnp.sin(a), a * 2.)[1], lambda a: a, x), x)
  add("unused_outputs_scan", lambda x, y: lax.scan(lambda c, a: (c, c), x, y)[0], x, v)
  add("unused_carry_fori", lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2., x), x)
  add("unused_output_sort", lambda x: lax.sort((x, x), num_keys=1)[0], v)
  add("unused_primal_jvp", lambda x: jax.jvp(lambda a: a * 2., (x,), (x,))[1], x)

  # --- typed PRNG keys (ids start with "key_") -----------------------------------
  seed = np.int32(3)
  raw = np.array([0, 42], np.uint32)
  raw4 = np.arange(8, dtype=np.uint32).reshape(4, 2)
  r = jax.random
  add("key_seed", lambda s: r.key(s), seed)
  add("key_const_seed", lambda: r.key(0))
  add("key_prngkey", lambda s: r.PRNGKey(s), seed)
  add("key_prngkey_const_seed", lambda: r.PRNGKey(0))
  add("key_split", lambda d: r.split(r.wrap_key_data(d)), raw)
  add("key_split3", lambda d: r.split(r.wrap_key_data(d), 3), raw)
  add("key_split_raw", lambda d: r.split(d), raw)
  add("key_fold_in", lambda d: r.fold_in(r.wrap_key_data(d), 3), raw)
  add("key_fold_in_traced", lambda d, i: r.fold_in(r.wrap_key_data(d), i), raw, seed)
  add("key_bits", lambda d: r.bits(r.wrap_key_data(d), (2,)), raw)
  add("key_normal", lambda d: r.normal(r.wrap_key_data(d), (2,)), raw)
  add("key_normal_raw", lambda d: r.normal(d, (2,)), raw)
  add("key_uniform_raw", lambda d: r.uniform(d, (2,)), raw)
  add("key_bernoulli", lambda d: r.bernoulli(r.wrap_key_data(d), 0.3, (2,)), raw)
  add("key_key_data", lambda s: r.key_data(r.key(s)), seed)
  add("key_wrap_unwrap", lambda s: r.split(r.wrap_key_data(r.key_data(r.key(s)))), seed)
  add("key_jit_split", lambda d: jax.jit(lambda k: r.split(k))(r.wrap_key_data(d)), raw)
  add("key_vmap_split", lambda d: jax.vmap(lambda k: r.split(k))(r.wrap_key_data(d)), raw4)
  add("key_vmap_wrap", jax.vmap(lambda d: r.split(r.wrap_key_data(d))), raw4)
  add("key_vmap_normal", lambda d: jax.vmap(lambda k: r.normal(k, ()))(r.wrap_key_data(d)),
      raw4)
  add("key_vmap_fold_in", lambda d, i: jax.vmap(r.fold_in)(r.wrap_key_data(d), i), raw4,
      np.arange(4, dtype=np.int32))
  # Key arrays as arguments, indexed, reshaped, joined, carried and selected.
  key0 = r.key(0)
  ks = r.split(r.key(1), 3)
  add("key_arg_split", lambda k: r.split(k), key0)
  add("key_arg_index", lambda k: r.split(k, 3)[1], key0)
  add("key_arg_reshape_index", lambda k: r.split(k, 4).reshape(2, 2)[0], key0)
  add("key_arg_dynamic_index", lambda k, i: r.split(k, 3)[i], key0, np.int32(1))
  add("key_arg_gather", lambda k: r.split(k, 4)[np.array([0, 2])], key0)
  add("key_arg_transpose", lambda k: r.split(k, (2, 3)).T, key0)
  add("key_arg_concatenate", lambda k: jnp.concatenate([r.split(k), r.split(k, 3)]), key0)
  add("key_arg_scan", lambda k: lax.scan(lambda c, _: (r.split(c)[0], r.uniform(c, (2,))), k,
                                         None, length=2), key0)
  add("key_arg_cond", lambda p, k: lax.cond(p, lambda k: r.split(k)[0], lambda k: k, k),
      np.bool_(True), key0)
  add("key_arg_vmap_uniform", jax.vmap(lambda k: r.uniform(k, (2,))), ks)
  add("key_arg_grad", jax.grad(lambda x, k: (x * r.uniform(k, (2,))).sum()), x, key0)
  add("key_arg_jit_bits", jax.jit(lambda k: r.bits(k[0], (3,))), ks)
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
