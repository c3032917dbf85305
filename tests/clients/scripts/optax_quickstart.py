"""optax's quickstart on a small regression problem: an MLP fitted with
optax.chain(clip_by_global_norm, adam(warmup-cosine schedule)) for 100 jitted steps, and a
linear softmax classifier fitted with sgd + momentum under an exponential-decay schedule.
Prints the losses, final parameters, schedule values and optimizer-state step counts as
JSON (last line)."""
import json

import jax
import jax.numpy as jnp
import numpy as np
import optax

rng = np.random.default_rng(0)
x = rng.normal(size=(64, 3)).astype(np.float32)
y = (x @ np.array([1.0, -2.0, 0.5], np.float32) + 0.3
     + 0.05 * rng.normal(size=64).astype(np.float32))[:, None]
params = {
    "w1": jnp.asarray(0.5 * rng.normal(size=(3, 16)), jnp.float32),
    "b1": jnp.zeros(16),
    "w2": jnp.asarray(0.5 * rng.normal(size=(16, 1)), jnp.float32),
    "b2": jnp.zeros(1),
}


def mlp(p, inputs):
  h = jnp.tanh(inputs @ p["w1"] + p["b1"])
  return h @ p["w2"] + p["b2"]


def mse(p, inputs, targets):
  return jnp.mean(optax.l2_loss(mlp(p, inputs), targets)) * 2


schedule = optax.warmup_cosine_decay_schedule(init_value=0.0, peak_value=0.05, warmup_steps=10,
                                              decay_steps=100, end_value=0.001)
optimizer = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(schedule))
opt_state = optimizer.init(params)


@jax.jit
def step(p, state, inputs, targets):
  loss, grads = jax.value_and_grad(mse)(p, inputs, targets)
  updates, state = optimizer.update(grads, state, p)
  return optax.apply_updates(p, updates), state, loss, optax.global_norm(grads)


losses, grad_norms = [], []
for _ in range(100):
  params, opt_state, loss, gnorm = step(params, opt_state, x, y)
  losses.append(float(loss))
  grad_norms.append(float(gnorm))

# A linear softmax classifier: sgd with Nesterov momentum, an exponential decay schedule.
labels = (x[:, 0] + x[:, 1] > 0).astype(np.int32) + (x[:, 2] > 1).astype(np.int32)
clf = {"w": jnp.zeros((3, 3)), "b": jnp.zeros(3)}
clf_schedule = optax.exponential_decay(0.5, transition_steps=10, decay_rate=0.7)
clf_opt = optax.sgd(clf_schedule, momentum=0.9, nesterov=True)
clf_state = clf_opt.init(clf)


def xent(p):
  logits = x @ p["w"] + p["b"]
  return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


@jax.jit
def clf_step(p, state):
  loss, grads = jax.value_and_grad(xent)(p)
  updates, state = clf_opt.update(grads, state)
  return optax.apply_updates(p, updates), state, loss


clf_losses = []
for _ in range(50):
  clf, clf_state, loss = clf_step(clf, clf_state)
  clf_losses.append(float(loss))
accuracy = float(jnp.mean(jnp.argmax(x @ clf["w"] + clf["b"], -1) == labels))

adam_state = opt_state[1][0]
print(json.dumps({
    "losses": losses,
    "grad_norms": grad_norms,
    "params": {k: np.asarray(v).tolist() for k, v in params.items()},
    "schedule": [float(schedule(i)) for i in (0, 5, 10, 50, 99, 100, 150)],
    "adam_count": int(adam_state.count),
    "adam_mu_b2": np.asarray(adam_state.mu["b2"]).tolist(),
    "state_leaves": len(jax.tree.leaves(opt_state)),
    "clf_losses": clf_losses,
    "clf_params": {k: np.asarray(v).tolist() for k, v in clf.items()},
    "clf_accuracy": accuracy,
    "clf_schedule": [float(clf_schedule(i)) for i in (0, 10, 25, 49)],
}))
