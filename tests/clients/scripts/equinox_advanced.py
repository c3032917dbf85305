"""equinox beyond the basics under JAX (run under xjax by tests/clients/test_equinox.py):
equinox.internal.while_loop (checkpointed, bounded, lax) and its gradients, eqx.error_if,
filter_jvp / filter_custom_jvp / filter_custom_vjp / filter_checkpoint / filter_hessian /
filter_jacfwd / filter_closure_convert / filter_pure_callback / filter_make_jaxpr, stateful
BatchNorm, attention and normalisation layers, scanning over stacked layers, leaf
serialisation.

Prints a JSON object of results, one entry per check.
"""
import io
import json

import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import jax.random as jr
import numpy as np


def tolist(x):
  return np.asarray(x).tolist()


def loops(out):
  def cond(c):
    return c[0] < 5

  def run(kind, x, max_steps=10):
    body = lambda c: (c[0] + 1, c[1] * x)
    return eqxi.while_loop(cond, body, (0, jnp.array(1.0)), max_steps=max_steps, kind=kind)[1]

  out["while_checkpointed"] = float(run("checkpointed", 1.5))
  out["while_checkpointed_grad"] = float(jax.grad(lambda x: run("checkpointed", x))(1.2))
  out["while_bounded_jit_grad"] = float(jax.jit(jax.grad(lambda x: run("bounded", x)))(1.2))
  out["while_lax"] = float(run("lax", 2.0, max_steps=None))
  out["while_vmap"] = tolist(jax.vmap(lambda x: run("checkpointed", x))(jnp.array([1.0, 2.0])))


def errors(out):
  checked = eqx.filter_jit(lambda x: eqx.error_if(x, x < 0, "negative input"))
  out["error_if_ok"] = float(checked(jnp.array(1.0)))
  try:
    checked(jnp.array(-1.0))
    out["error_if_raises"] = "no error"
  except Exception as e:  # equinox re-raises XLA's runtime error as its own class
    out["error_if_raises"] = type(e).__name__
    out["error_if_message"] = "negative input" in str(e)
  branched = eqx.filter_jit(lambda x, i: eqx.branched_error_if(x, x > 5, i, ["a", "big"]))
  try:
    branched(jnp.array(9.0), jnp.array(1))
    out["branched_error_if"] = "no error"
  except Exception as e:
    out["branched_error_if"] = type(e).__name__
    out["branched_error_message"] = "big" in str(e)


def autodiff(out):
  p, t = eqx.filter_jvp(lambda x, n: x ** n, (jnp.array(2.0), 3), (jnp.array(1.0), None))
  out["filter_jvp"] = [float(p), float(t)]

  @eqx.filter_custom_jvp
  def scaled(x, y):
    return x * y

  @scaled.def_jvp
  def scaled_jvp(primals, tangents):
    x, y = primals
    tx, _ = tangents
    return x * y, tx * 10

  out["filter_custom_jvp"] = float(jax.grad(scaled)(2.0, 3.0))

  @eqx.filter_custom_vjp
  def mul(vjp_arg, x):
    return vjp_arg * x

  def mul_fwd(perturbed, vjp_arg, x):
    return vjp_arg * x, vjp_arg

  def mul_bwd(residuals, grad_obj, perturbed, vjp_arg, x):
    return grad_obj * 7 + residuals

  mul.def_fwd(mul_fwd)
  mul.def_bwd(mul_bwd)
  out["filter_custom_vjp"] = float(jax.grad(lambda a: mul(a, 2.0))(jnp.array(3.0)))
  ckpt = eqx.filter_checkpoint(lambda x: jnp.sin(x) * 2)
  out["filter_checkpoint"] = tolist(jax.grad(lambda x: ckpt(x).sum())(jnp.arange(3.0)))
  out["filter_hessian"] = tolist(eqx.filter_hessian(lambda x: jnp.sum(x ** 3))(jnp.arange(3.0)))
  out["filter_jacfwd"] = tolist(eqx.filter_jacfwd(lambda x: x ** 2)(jnp.arange(3.0)))
  out["filter_jacrev"] = tolist(eqx.filter_jacrev(lambda x: jnp.sin(x))(jnp.arange(3.0)))
  y = jnp.array(2.0)
  converted = eqx.filter_closure_convert(lambda x: x * y, jnp.ones(2))
  out["filter_closure_convert"] = tolist(converted(jnp.array([1.0, 3.0])))
  out["backward_nan"] = tolist(jax.grad(lambda x: eqx.debug.backward_nan(x * 2).sum())(
      jnp.ones(2)))


def staging(out):
  jaxpr, _, _ = eqx.filter_make_jaxpr(lambda x, n: x * n)(jnp.ones(2), 3)
  out["filter_make_jaxpr"] = str(jaxpr)
  out["filter_pure_callback"] = tolist(eqx.filter_pure_callback(
      lambda x: np.asarray(x) * 2, jnp.arange(3.0),
      result_shape_dtypes=jax.ShapeDtypeStruct((3,), jnp.float32)))
  out["unvmap_any"] = tolist(jax.vmap(lambda x: eqxi.unvmap_any(x > 2))(jnp.arange(4.0)))
  out["unvmap_all"] = tolist(jax.vmap(lambda x: eqxi.unvmap_all(x > 2))(jnp.arange(4.0)))
  out["filter_vmap_out_axes"] = tolist(eqx.filter_vmap(lambda x: (x, 2 * x), out_axes=(0, 1))(
      jnp.arange(6.0).reshape(2, 3))[1])


def layers(out):
  bn, state = eqx.nn.make_with_state(eqx.nn.BatchNorm)(3, "batch")
  x = jnp.arange(12.0).reshape(4, 3)
  batched = jax.vmap(bn, axis_name="batch", in_axes=(0, None), out_axes=(0, None))
  y, state = batched(x, state)
  y, state = batched(x * 2, state)
  out["batchnorm"] = tolist(y)
  out["batchnorm_state_sums"] = [float(jnp.sum(l)) for l in jax.tree_util.tree_leaves(state)]
  bn_inf = eqx.nn.inference_mode(bn)
  out["batchnorm_inference"] = tolist(bn_inf(x[0], state)[0])
  mha = eqx.nn.MultiheadAttention(2, 8, key=jr.PRNGKey(3))
  q = jr.normal(jr.PRNGKey(4), (5, 8))
  out["attention_sum"] = float(mha(q, q, q).sum())
  out["attention_abs_sum"] = float(jnp.abs(mha(q, q, q)).sum())
  out["rmsnorm"] = tolist(eqx.nn.RMSNorm(4)(jnp.arange(4.0)))
  out["groupnorm"] = tolist(eqx.nn.GroupNorm(2, 4)(jnp.arange(8.0).reshape(4, 2)))
  conv_t = eqx.nn.ConvTranspose2d(2, 1, 3, key=jr.PRNGKey(5))
  out["conv_transpose_sum"] = float(conv_t(jnp.ones((2, 3, 3))).sum())
  cell = eqx.nn.LSTMCell(2, 3, key=jr.PRNGKey(0))

  def step(carry, x):
    carry = cell(x, carry)
    return carry, carry[0]

  out["lstm_scan"] = tolist(jax.lax.scan(step, (jnp.zeros(3), jnp.zeros(3)),
                                         jnp.ones((4, 2)))[1])
  keys = jr.split(jr.PRNGKey(0), 3)
  stacked = eqx.filter_vmap(lambda k: eqx.nn.Linear(4, 4, key=k))(keys)
  params, static = eqx.partition(stacked, eqx.is_array)

  def layer(h, p):
    return jnp.tanh(eqx.combine(p, static)(h)), None

  out["scan_over_layers"] = tolist(jax.lax.scan(layer, jnp.ones(4), params)[0])
  lin = eqx.nn.Linear(2, 2, key=jr.PRNGKey(0))
  buf = io.BytesIO()
  eqx.tree_serialise_leaves(buf, lin)
  buf.seek(0)
  restored = eqx.tree_deserialise_leaves(buf, eqx.nn.Linear(2, 2, key=jr.PRNGKey(1)))
  out["serialise_roundtrip"] = bool(eqx.tree_equal(lin, restored))
  out["dropout_inference_mode"] = tolist(eqx.nn.inference_mode(eqx.nn.Dropout(0.3))(jnp.ones(3)))


def main():
  jax.config.update("jax_threefry_partitionable", True)  # JAX 0.10.2's default (see README)
  out = {}
  loops(out)
  errors(out)
  autodiff(out)
  staging(out)
  layers(out)
  print(json.dumps(out))


if __name__ == "__main__":
  main()
