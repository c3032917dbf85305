"""Records real JAX's checkpoint policies behaviour for tests/core/test_checkpoint_policies.py.

Run with the reference JAX environment:
  .venv-jax/bin/python tools/golden_checkpoint.py
It writes tests/golden/checkpoint_policies.json: for each test function and
policy, the lines `print_saved_residuals` prints and the gradients; plus a few
printed jaxprs and error messages. The functions' source is stored in the JSON
and executed under the file name "<ckpt_funs>", so the source positions JAX
prints are the ones xjax must print.
"""
import contextlib
import io
import json
import os

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax
from jax.ad_checkpoint import checkpoint_name, print_saved_residuals

SOURCE = '''\
def f(x, w):
  y = jnp.sin(x @ w)
  y = checkpoint_name(y, "a")
  z = jnp.cos(y) * x
  z = checkpoint_name(z, "b")
  b = lax.dot_general(z[None], y[None], (((2,), (1,)), ((0,), (0,))))
  return jnp.sum(jnp.sin(b[0] @ w))


def g(x, w):
  h = jnp.tanh(jnp.dot(w, x))
  h = checkpoint_name(h, "a")
  return jnp.sum(jnp.exp(h) * jnp.sin(x))
'''

# Policies, as expressions over `cp` (= jax.checkpoint_policies); "None" is the default.
POLICIES = [
    "None",
    "cp.everything_saveable",
    "cp.nothing_saveable",
    "cp.dots_saveable",
    "cp.checkpoint_dots",
    "cp.dots_with_no_batch_dims_saveable",
    "cp.checkpoint_dots_with_no_batch_dims",
    "cp.save_anything_except_these_names('a')",
    "cp.save_any_names_but_these('a')",
    "cp.save_any_names_but_these()",
    "cp.save_only_these_names('a')",
    "cp.save_only_these_names('a', 'b')",
    "cp.save_from_both_policies(cp.dots_with_no_batch_dims_saveable, cp.save_only_these_names('b'))",
    "cp.offload_dot_with_no_batch_dims('device', 'pinned_host')",
    "cp.save_and_offload_only_these_names(names_which_can_be_saved=['a'], "
    "names_which_can_be_offloaded=['b'], offload_src='device', offload_dst='pinned_host')",
    "lambda prim, *avals, **params: prim.name == 'sin'",
    "lambda prim, *avals, **params: ad_checkpoint.Saveable if prim.name == 'cos' "
    "else ad_checkpoint.Recompute",
]

X = np.linspace(-1.0, 1.0, 9, dtype=np.float32).reshape(3, 3)
W = np.linspace(0.5, -0.7, 9, dtype=np.float32).reshape(3, 3).T.copy()


def namespace():
  return dict(jax=jax, jnp=jnp, lax=lax, checkpoint_name=checkpoint_name,
              cp=jax.checkpoint_policies, ad_checkpoint=jax.ad_checkpoint)


def saved_lines(fun, *args):
  buf = io.StringIO()
  with contextlib.redirect_stdout(buf):
    print_saved_residuals(fun, *args)
  return buf.getvalue().splitlines()


def error_of(thunk):
  try:
    thunk()
  except Exception as e:  # noqa: BLE001 - recording whatever JAX raises
    return [type(e).__name__, str(e)]
  return None


def main():
  ns = namespace()
  exec(compile(SOURCE, "<ckpt_funs>", "exec"), ns)
  cases = {}
  for fname in ("f", "g"):
    fun = ns[fname]
    cases[fname] = {"plain": saved_lines(fun, X, W),
                    "grad": [np.asarray(v).tolist() for v in jax.grad(fun, (0, 1))(X, W)]}
    for expr in POLICIES:
      policy = eval(expr, ns)
      remat = jax.checkpoint(fun, policy=policy)
      grads = jax.grad(remat, (0, 1))(X, W)
      cases[fname][expr] = {"saved": saved_lines(remat, X, W),
                            "grad": [np.asarray(v).tolist() for v in grads]}

  sin2 = lambda x: jnp.sin(jnp.sin(x)) * 2.0
  cp = jax.checkpoint_policies
  jaxprs = {
      "checkpoint_name": str(jax.make_jaxpr(lambda x: checkpoint_name(x, "foo"))(1.0)),
      "checkpoint": str(jax.make_jaxpr(jax.checkpoint(sin2))(1.0)),
      "checkpoint_dots_nocse": str(jax.make_jaxpr(jax.checkpoint(
          sin2, policy=cp.dots_saveable, prevent_cse=False))(1.0)),
      "checkpoint_cse_tuple": str(jax.make_jaxpr(jax.checkpoint(
          lambda x, y: jnp.sin(x) * y, prevent_cse=(True, False)))(1.0, 2.0)),
      "grad_checkpoint": str(jax.make_jaxpr(jax.grad(jax.checkpoint(sin2)))(1.0)),
      "linearize_cse_tuple": str(jax.make_jaxpr(jax.linearize(jax.checkpoint(
          lambda x, y: jnp.sin(x) * y, prevent_cse=(True, False)), 1.0, 2.0)[1])(1.0, 2.0)),
  }
  f = ns["f"]
  errors = {
      "policy_returns_int": error_of(lambda: jax.grad(jax.checkpoint(
          f, policy=lambda *a, **k: 3))(X, W)),
      "both_policies_not_bool": error_of(lambda: jax.grad(jax.checkpoint(
          f, policy=cp.save_from_both_policies(
              cp.dots_saveable, cp.offload_dot_with_no_batch_dims("device", "pinned_host"))))(
                  X, W)),
      "offload_names_intersect": error_of(lambda: cp.save_and_offload_only_these_names(
          names_which_can_be_saved=["a"], names_which_can_be_offloaded=["a"],
          offload_src="device", offload_dst="pinned_host")),
      "prevent_cse_int": error_of(lambda: jax.checkpoint(f, prevent_cse=3)),
      "static_argnums_range": error_of(lambda: jax.checkpoint(f, static_argnums=(5,))(X, W)),
      "static_argnums_list": error_of(lambda: jax.checkpoint(f, static_argnums=[1])(X, W)),
      "concrete": error_of(lambda: jax.checkpoint(f, concrete=True)),
      "ad_checkpoint_checkpoint": error_of(lambda: jax.ad_checkpoint.checkpoint),
      "ad_checkpoint_remat": error_of(lambda: jax.ad_checkpoint.remat),
  }
  out = {"jax_version": jax.__version__, "source": SOURCE, "policies": POLICIES,
         "x": X.tolist(), "w": W.tolist(), "cases": cases, "jaxprs": jaxprs,
         "errors": errors}
  path = os.path.join(os.path.dirname(__file__), "..", "tests", "golden",
                      "checkpoint_policies.json")
  with open(path, "w") as fh:
    json.dump(out, fh, indent=1)
  print("wrote", os.path.normpath(path))


if __name__ == "__main__":
  main()
