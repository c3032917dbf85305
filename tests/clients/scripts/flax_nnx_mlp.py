"""A flax.nnx MLP (nnx.Linear, nnx.BatchNorm, nnx.Dropout in an nnx.Module) trained with
optax through nnx.Optimizer under nnx.jit and nnx.value_and_grad: prints the losses, the
state's paths and a checksum as JSON (compared with real JAX's by tests/clients/test_flax.py)."""
import json

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

# JAX 0.10.2's default stream layout, set explicitly: xjax's own default is JAX's original
# layout (see xjax's README), which gives other initial parameters.
jax.config.update("jax_threefry_partitionable", True)


class MLP(nnx.Module):
  def __init__(self, din, dhidden, dout, *, rngs: nnx.Rngs):
    # No bias before BatchNorm: its gradient is zero up to rounding, which Adam would
    # amplify into steps whose sign is noise.
    self.linear1 = nnx.Linear(din, dhidden, use_bias=False, rngs=rngs)
    self.bn = nnx.BatchNorm(dhidden, rngs=rngs)
    self.dropout = nnx.Dropout(0.2, rngs=rngs)
    self.linear2 = nnx.Linear(dhidden, dout, rngs=rngs)

  def __call__(self, x):
    x = nnx.relu(self.dropout(self.bn(self.linear1(x))))
    return self.linear2(x)


rng = np.random.default_rng(0)
x = jnp.asarray(rng.normal(size=(32, 4)), jnp.float32)
y = jnp.asarray(rng.normal(size=(32, 2)), jnp.float32)

model = MLP(4, 16, 2, rngs=nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.adamw(1e-2), wrt=nnx.Param)


@nnx.jit
def train_step(model, optimizer, x, y):
  def loss_fn(model):
    return jnp.mean((model(x) - y) ** 2)
  loss, grads = nnx.value_and_grad(loss_fn)(model)
  optimizer.update(model, grads)
  return loss


losses = [float(train_step(model, optimizer, x, y)) for _ in range(15)]
model.eval()
eval_loss = float(jnp.mean((model(x) - y) ** 2))



# nnx's lifted transforms: vmap to create a stack of layers, scan over it, grad of remat,
# cond.
@nnx.vmap(in_axes=0, out_axes=0)
def make_layers(rngs):
  return nnx.Linear(3, 3, rngs=rngs)


@nnx.scan(in_axes=(nnx.Carry, 0), out_axes=nnx.Carry)
def apply_layers(h, layer):
  return jnp.tanh(layer(h))


layers = make_layers(nnx.Rngs(0).fork(split=4))
scanned = apply_layers(jnp.ones((2, 3)), layers)
head = nnx.Linear(3, 2, rngs=nnx.Rngs(1))
head_grads = nnx.grad(nnx.remat(lambda m, h: jnp.sum(m(h) ** 2)))(head, scanned)
cond_out = nnx.cond(True, lambda m, h: m(h).sum(), lambda m, h: 0. * m(h).sum(), head, scanned)

graphdef, params, batch_stats, rng_state = nnx.split(model, nnx.Param, nnx.BatchStat, ...)
leaves = jax.tree_util.tree_leaves_with_path((params, batch_stats))
print(json.dumps({
    "losses": losses,
    "eval_loss": eval_loss,
    "paths": " ".join(jax.tree_util.keystr(p) for p, _ in leaves),
    "checksum": float(sum(jnp.sum(jnp.abs(v)) for _, v in leaves)),
    "rng_count": int(rng_state["dropout"]["rngs"]["count"][...]),
    "rng_key": np.asarray(jax.random.key_data(rng_state["dropout"]["rngs"]["key"][...])).tolist(),
    "n_params": sum(int(np.prod(v.shape)) for v in jax.tree_util.tree_leaves(params)),
    "step": int(optimizer.step[...]),
    "scanned": np.asarray(scanned).tolist(),
    "head_grad_kernel": np.asarray(head_grads["kernel"][...]).tolist(),
    "cond_out": float(cond_out),
}))
