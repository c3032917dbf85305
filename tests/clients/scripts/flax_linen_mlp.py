"""A flax.linen MLP (Dense, relu, Dropout-free) trained with optax through
flax.training.train_state.TrainState under jax.jit: prints the losses, the parameter
tree's structure and a checksum as JSON (compared with real JAX's by
tests/clients/test_flax.py)."""
import json

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax.training import train_state

# JAX 0.10.2's default stream layout, set explicitly: xjax's own default is JAX's original
# layout (see xjax's README), which gives other initial parameters.
jax.config.update("jax_threefry_partitionable", True)


class MLP(nn.Module):
  features: tuple = (16, 8)

  @nn.compact
  def __call__(self, x):
    for i, f in enumerate(self.features):
      x = nn.Dense(f, name=f"dense_{i}")(x)
      x = nn.relu(x)
    x = nn.LayerNorm()(x)
    return nn.Dense(3)(x)


rng = np.random.default_rng(0)
x = jnp.asarray(rng.normal(size=(32, 5)), jnp.float32)
labels = jnp.asarray(rng.integers(0, 3, size=(32,)))

model = MLP()
variables = model.init(jax.random.key(0), x)
state = train_state.TrainState.create(apply_fn=model.apply, params=variables["params"],
                                      tx=optax.adam(1e-2))


@jax.jit
def train_step(state, x, labels):
  def loss_fn(params):
    logits = state.apply_fn({"params": params}, x)
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
  loss, grads = jax.value_and_grad(loss_fn)(state.params)
  return state.apply_gradients(grads=grads), loss


losses = []
for _ in range(20):
  state, loss = train_step(state, x, labels)
  losses.append(float(loss))



class Cell(nn.Module):
  @nn.compact
  def __call__(self, c, x):
    h = nn.Dense(3)(jnp.concatenate([c, x], -1))
    return jnp.tanh(h), h


# nn.scan (flax's lifted scan: jax.api_util, linear_util and partial_eval underneath) and
# nn.remat over a Dense layer with Dropout.
Scan = nn.scan(Cell, variable_broadcast="params", split_rngs={"params": False}, in_axes=0,
               out_axes=0)
xs = jnp.asarray(rng.normal(size=(4, 2, 3)), jnp.float32)
scan_vars = Scan().init(jax.random.key(2), jnp.zeros((2, 3)), xs)
carry, ys = jax.jit(Scan().apply)(scan_vars, jnp.zeros((2, 3)), xs)


class Block(nn.Module):
  @nn.compact
  def __call__(self, x, train):
    return nn.Dropout(0.5, deterministic=not train)(nn.remat(nn.Dense)(4)(x))


block = Block()
block_vars = block.init(jax.random.key(3), x, False)
dropped = block.apply(block_vars, x, True, rngs={"dropout": jax.random.key(4)})

leaves = jax.tree_util.tree_leaves_with_path(state.params)
print(json.dumps({
    "losses": losses,
    "paths": " ".join(jax.tree_util.keystr(p) for p, _ in leaves),
    "shapes": " ".join(str(v.shape) for _, v in leaves),
    "checksum": float(sum(jnp.sum(jnp.abs(v)) for _, v in leaves)),
    "step": int(state.step),
    "scan_carry": np.asarray(carry).tolist(),
    "scan_ys_sum": float(ys.sum()),
    "dropout_zeros": int((dropped == 0).sum()),
    "dropout_sum": float(dropped.sum()),
    "summary_lines": len(model.tabulate(jax.random.key(1), x).splitlines()) > 5,
}))
