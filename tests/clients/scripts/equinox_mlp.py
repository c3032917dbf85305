"""An equinox MLP regression trained with optax under `eqx.filter_jit` and
`eqx.filter_value_and_grad` (written for JAX; run under xjax by tests/clients/test_equinox.py).

Prints a JSON object: the loss every 25 steps, the final loss, and sums of the final
parameters' leaves (a checksum of the trained model).
"""
import json

import equinox as eqx
import jax
import jax.numpy as jnp
import jax.random as jr
import optax


def main():
  # JAX 0.10.2 defaults to the partitionable threefry layout; xjax defaults to the original
  # one (see README): pin it so that both draw the same numbers.
  jax.config.update("jax_threefry_partitionable", True)
  key = jr.PRNGKey(0)
  data_key, model_key = jr.split(key)
  x = jr.normal(data_key, (128, 3))
  y = jnp.sin(x[:, :1] * 2.0) + 0.5 * x[:, 1:2] * x[:, 2:3]

  model = eqx.nn.MLP(in_size=3, out_size=1, width_size=32, depth=2, activation=jax.nn.tanh,
                     key=model_key)
  optim = optax.adam(1e-2)
  opt_state = optim.init(eqx.filter(model, eqx.is_inexact_array))

  @eqx.filter_value_and_grad
  def compute_loss(model, x, y):
    pred = jax.vmap(model)(x)
    return jnp.mean((pred - y) ** 2)

  @eqx.filter_jit
  def step(model, opt_state, x, y):
    loss, grads = compute_loss(model, x, y)
    updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_inexact_array))
    model = eqx.apply_updates(model, updates)
    return loss, model, opt_state

  losses = []
  for i in range(300):
    loss, model, opt_state = step(model, opt_state, x, y)
    if i % 25 == 0:
      losses.append(float(loss))
  final_loss = float(jnp.mean((jax.vmap(model)(x) - y) ** 2))
  leaves = jax.tree_util.tree_leaves(eqx.filter(model, eqx.is_array))
  print(json.dumps({
      "losses": losses,
      "final_loss": final_loss,
      "num_leaves": len(leaves),
      "shapes": " ".join(str(l.shape) for l in leaves),
      "param_sums": [float(jnp.sum(l)) for l in leaves],
      "param_abs_sum": float(sum(jnp.sum(jnp.abs(l)) for l in leaves)),
  }))


if __name__ == "__main__":
  main()
