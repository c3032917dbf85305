"""equinox basics under JAX (run under xjax by tests/clients/test_equinox.py): Modules with
static fields, tree_at, filter/partition/combine, eqx.nn layers with PRNG keys,
filter_vmap, filter_grad and filter_jit over non-array leaves.

Prints a JSON object of results, one entry per check.
"""
import json

import equinox as eqx
import jax
import jax.numpy as jnp
import jax.random as jr
import numpy as np


def tolist(x):
  return np.asarray(x).tolist()


class Affine(eqx.Module):
  weight: jax.Array
  bias: jax.Array
  name: str = eqx.field(static=True)
  scale: float = 2.0

  def __init__(self, n, name, key):
    self.weight = jr.normal(key, (n, n))
    self.bias = jnp.arange(n, dtype=jnp.float32)
    self.name = name

  def __call__(self, x):
    return self.scale * (self.weight @ x) + self.bias


def modules(out):
  m = Affine(3, "aff", jr.PRNGKey(1))
  leaves, treedef = jax.tree_util.tree_flatten(m)
  out["module_num_leaves"] = len(leaves)          # weight, bias, scale: name is static
  out["module_leaf_types"] = [type(l).__name__ in ("float", "ArrayImpl", "Array")
                              for l in leaves]
  out["module_call"] = tolist(m(jnp.ones(3)))
  out["module_static_name"] = jax.tree_util.tree_unflatten(treedef, leaves).name
  # tree_at replaces a leaf, or a subtree, out of place.
  m2 = eqx.tree_at(lambda t: t.bias, m, jnp.zeros(3))
  out["tree_at_bias"] = tolist(m2.bias)
  out["tree_at_orig_bias"] = tolist(m.bias)
  m3 = eqx.tree_at(lambda t: (t.weight, t.bias), m, (jnp.eye(3), jnp.ones(3)))
  out["tree_at_call"] = tolist(m3(jnp.array([1.0, 2.0, 3.0])))
  m4 = eqx.tree_at(lambda t: t.weight, m, replace_fn=lambda w: w * 0)
  out["tree_at_replace_fn"] = tolist(m4(jnp.ones(3)))
  # filter / partition / combine.
  params, static = eqx.partition(m, eqx.is_array)
  out["partition_params_leaves"] = len(jax.tree_util.tree_leaves(params))
  out["partition_static_scale"] = static.scale
  out["partition_params_scale_is_none"] = params.scale is None
  again = eqx.combine(params, static)
  out["combine_call"] = tolist(again(jnp.ones(3)))
  out["filter_inexact"] = len(jax.tree_util.tree_leaves(eqx.filter(m, eqx.is_inexact_array)))
  out["filter_inverse"] = len(jax.tree_util.tree_leaves(
      eqx.filter(m, eqx.is_array, inverse=True)))
  out["tree_equal"] = bool(eqx.tree_equal(m, again))
  out["tree_equal_diff"] = bool(eqx.tree_equal(m, m2))
  pytree = {"a": jnp.arange(3.0), "b": (1, jnp.ones((2, 2), jnp.int32)), "c": "s"}
  out["is_array_flags"] = [eqx.is_array(l) for l in jax.tree_util.tree_leaves(pytree)]
  out["is_inexact_flags"] = [eqx.is_inexact_array(l)
                             for l in jax.tree_util.tree_leaves(pytree)]


def layers(out):
  k1, k2, k3, k4, k5, k6 = jr.split(jr.PRNGKey(42), 6)
  lin = eqx.nn.Linear(4, 3, key=k1)
  out["linear_weight_sum"] = float(jnp.sum(lin.weight))
  out["linear_out"] = tolist(lin(jnp.arange(4.0)))
  lin_nb = eqx.nn.Linear(4, "scalar", use_bias=False, key=k1)
  out["linear_scalar_out"] = float(lin_nb(jnp.ones(4)))
  conv = eqx.nn.Conv2d(2, 3, kernel_size=3, padding=1, key=k2)
  img = jr.normal(k3, (2, 6, 6))
  y = conv(img)
  out["conv_shape"] = list(y.shape)
  out["conv_sum"] = float(jnp.sum(y))
  out["conv_abs_sum"] = float(jnp.sum(jnp.abs(y)))
  conv1 = eqx.nn.Conv1d(2, 4, kernel_size=3, stride=2, key=k2)
  y1 = conv1(jr.normal(k3, (2, 9)))
  out["conv1d_shape"] = list(y1.shape)
  out["conv1d_sum"] = float(jnp.sum(y1))
  ln = eqx.nn.LayerNorm(5)
  x = jnp.array([1.0, 2.0, 4.0, 8.0, 16.0])
  out["layernorm"] = tolist(ln(x))
  drop = eqx.nn.Dropout(p=0.5)
  dx = drop(jnp.ones(20), key=k4)
  out["dropout"] = tolist(dx)
  out["dropout_inference"] = tolist(drop(jnp.ones(4), inference=True))
  emb = eqx.nn.Embedding(10, 4, key=k5)
  out["embedding"] = tolist(emb(jnp.array(3)))
  seq = eqx.nn.Sequential([eqx.nn.Linear(4, 8, key=k5), eqx.nn.Lambda(jax.nn.relu),
                           eqx.nn.Linear(8, 2, key=k6)])
  out["sequential"] = tolist(seq(jnp.arange(4.0)))
  gru = eqx.nn.GRUCell(3, 4, key=k6)
  out["gru"] = tolist(gru(jnp.ones(3), jnp.zeros(4)))
  pool = eqx.nn.MaxPool2d(kernel_size=2, stride=2)
  out["maxpool"] = tolist(pool(jnp.arange(32.0).reshape(2, 4, 4)))


def transforms(out):
  keys = jr.split(jr.PRNGKey(7), 4)
  make = eqx.filter_vmap(lambda k: eqx.nn.Linear(3, 2, key=k))
  ensemble = make(keys)
  out["vmap_ensemble_weight_shape"] = list(ensemble.weight.shape)

  @eqx.filter_vmap(in_axes=(eqx.if_array(0), None))
  def evaluate(model, x):
    return model(x)

  out["vmap_ensemble_out"] = tolist(evaluate(ensemble, jnp.array([1.0, -1.0, 0.5])))
  batched = eqx.filter_vmap(lambda x, n: x * n, in_axes=(0, None))(jnp.arange(6.0), 3)
  out["vmap_static_int"] = tolist(batched)

  model = eqx.nn.MLP(2, 1, 8, 1, key=keys[0])

  @eqx.filter_grad
  def grad_fn(model, x, flag):
    y = jnp.sum(model(x))
    return y * 2.0 if flag else y

  g = grad_fn(model, jnp.array([0.3, -0.2]), True)
  g_leaves = jax.tree_util.tree_leaves(g)
  out["filter_grad_sums"] = [float(jnp.sum(l)) for l in g_leaves]
  out["filter_grad_activation_is_none"] = g.activation is None or not callable(g.activation)

  calls = []

  @eqx.filter_jit
  def f(x, n, name):
    calls.append(1)
    return x * n, name

  r1 = f(jnp.ones(2), 2, "a")
  r2 = f(jnp.ones(2), 2, "a")
  r3 = f(jnp.ones(2), 3, "a")
  out["filter_jit_results"] = [tolist(r1[0]), tolist(r3[0])]
  out["filter_jit_static_out"] = r2[1]
  out["filter_jit_traces"] = len(calls)

  @eqx.filter_jit
  def g2(model, x):
    return model(x)

  out["filter_jit_module"] = tolist(g2(model, jnp.array([1.0, 2.0])))
  shape = eqx.filter_eval_shape(lambda m, x: m(x), model, jnp.ones(2))
  out["filter_eval_shape"] = f"{shape.shape} {shape.dtype}"
  v, gr = eqx.filter_value_and_grad(lambda x, s: jnp.sum(x ** 2) * s)(jnp.arange(3.0), 2.0)
  out["filter_value_and_grad"] = [float(v), *tolist(gr)]
  (v2, aux), _ = eqx.filter_value_and_grad(lambda x: (jnp.sum(x), "aux"), has_aux=True)(
      jnp.ones(2))
  out["has_aux_value"] = float(v2)
  out["has_aux_aux"] = aux


def main():
  jax.config.update("jax_threefry_partitionable", True)  # JAX 0.10.2's default (see README)
  out = {}
  modules(out)
  layers(out)
  transforms(out)
  print(json.dumps(out))


if __name__ == "__main__":
  main()
