"""Train a small MLP on real handwritten digits, with xjax or with JAX.

The images are the 1,797 8×8 digits that scikit-learn ships (the test part of the
UCI "Optical Recognition of Handwritten Digits" set), bundled as
examples/data/digits.npz; see examples/data/README.md. Nothing is downloaded.

    python examples/mlp_digits.py                      # xjax
    python examples/mlp_digits.py --backend jax        # the same script on real JAX
    python examples/mlp_digits.py --plot curves.png    # also plot the curves (needs matplotlib)

The code below is plain JAX: `random` for initialisation and shuffling, `vmap` for a
per-example loss, `value_and_grad` and `jit` for the training step, and pytrees for
the parameters and for an Adam optimizer written with `jax.tree.map`.
"""
import argparse
import importlib
import pathlib
import time
from typing import NamedTuple

import numpy as np

DATA = pathlib.Path(__file__).resolve().parent / "data" / "digits.npz"
NUM_CLASSES = 10

# `import xjax as jax; import xjax.numpy as jnp`, or the same with `jax`: see use_backend.
jax = jnp = None


def use_backend(name):
  """Binds the module names `jax` and `jnp` to `name` ("xjax" or "jax") and its numpy."""
  global jax, jnp
  jax = importlib.import_module(name)
  jnp = importlib.import_module(f"{name}.numpy")


# Data: a fixed 80/20 split, the same for every --seed and both backends.

def load_digits(path=DATA):
  """Returns the images as uint8[1797, 8, 8] (pixel counts 0..16) and the labels as uint8[1797]."""
  with np.load(path) as data:
    return data["images"], data["labels"]


def train_test_split(images, labels, test_fraction=0.2, seed=0):
  """Flattens and scales the images to [0, 1]; splits them by a seeded NumPy permutation."""
  x = images.reshape(len(images), -1).astype(np.float32) / 16.0
  y = labels.astype(np.int32)
  order = np.random.default_rng(seed).permutation(len(x))
  n_test = round(test_fraction * len(x))
  test, train = order[:n_test], order[n_test:]
  return (x[train], y[train]), (x[test], y[test])


# The model: parameters are a list of {"w", "b"} dicts, one per layer.

def init_params(key, sizes):
  """He-normal weights and zero biases for layers of the given sizes."""
  keys = jax.random.split(key, len(sizes) - 1)
  return [{"w": jax.random.normal(k, (m, n)) * jnp.sqrt(2.0 / m), "b": jnp.zeros(n)}
          for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def predict(params, x):
  """Logits for one flattened image x: f32[64] -> f32[10]."""
  for layer in params[:-1]:
    x = jax.nn.relu(x @ layer["w"] + layer["b"])
  return x @ params[-1]["w"] + params[-1]["b"]


def example_loss(params, x, y):
  """Cross-entropy of one image x with integer label y."""
  return -jax.nn.log_softmax(predict(params, x))[y]


def batch_loss(params, xs, ys):
  return jnp.mean(jax.vmap(example_loss, in_axes=(None, 0, 0))(params, xs, ys))


def accuracy(params, xs, ys):
  logits = jax.vmap(predict, in_axes=(None, 0))(params, xs)
  return jnp.mean(jnp.argmax(logits, axis=-1) == ys)


# Adam on pytrees (Kingma and Ba, 2015): the moments have the parameters' tree structure.

class AdamState(NamedTuple):
  count: "jax.Array"
  mu: list
  nu: list


def adam_init(params):
  zeros = jax.tree.map(jnp.zeros_like, params)
  return AdamState(count=jnp.zeros((), jnp.int32), mu=zeros, nu=zeros)


def adam_update(grads, state, params, lr, b1=0.9, b2=0.999, eps=1e-8):
  count = state.count + 1
  mu = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, state.mu, grads)
  nu = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, state.nu, grads)
  # Bias-corrected step size: lr * sqrt(1 - b2^t) / (1 - b1^t).
  t = count.astype(jnp.float32)
  step_size = lr * jnp.sqrt(1 - b2 ** t) / (1 - b1 ** t)
  params = jax.tree.map(lambda p, m, v: p - step_size * m / (jnp.sqrt(v) + eps), params, mu, nu)
  return params, AdamState(count, mu, nu)


def train_step(params, opt_state, xs, ys, lr):
  loss, grads = jax.value_and_grad(batch_loss)(params, xs, ys)
  params, opt_state = adam_update(grads, opt_state, params, lr)
  return params, opt_state, loss


# The training loop (examples/cnn_digits.py uses it too).

def fit(step, evaluate, params, opt_state, key, train, eval_sets, epochs, batch_size, lr, say):
  """Runs `epochs` passes of jitted `step` over shuffled batches of `train`; returns the
  per-epoch history (mean loss, and `evaluate`'s accuracy on each of `eval_sets`)."""
  x_train, y_train = train
  if not 1 <= batch_size <= len(x_train):
    raise SystemExit(f"--batch-size must be between 1 and {len(x_train)}, got {batch_size}")
  steps_per_epoch = len(x_train) // batch_size  # drop the ragged last batch: one shape, one compile
  history = {"epoch": [], "loss": [], "train_accuracy": [], "test_accuracy": []}
  for epoch in range(1, epochs + 1):
    epoch_start = time.perf_counter()
    key, shuffle_key = jax.random.split(key)
    order = np.asarray(jax.random.permutation(shuffle_key, len(x_train)))
    losses = []
    for i in range(steps_per_epoch):
      batch = order[i * batch_size:(i + 1) * batch_size]
      params, opt_state, loss = step(params, opt_state, x_train[batch], y_train[batch], lr)
      losses.append(loss)
    history["epoch"].append(epoch)
    history["loss"].append(float(np.mean(losses)))
    for split, (xs, ys) in eval_sets.items():
      history[f"{split}_accuracy"].append(float(evaluate(params, xs, ys)))
    say(f"epoch {epoch:3d}  loss {history['loss'][-1]:.4f}  "
        f"train accuracy {history['train_accuracy'][-1]:.4f}  "
        f"test accuracy {history['test_accuracy'][-1]:.4f}  "
        f"({time.perf_counter() - epoch_start:.2f} s)")
  return history


# Command line.

def parse_args(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--epochs", type=int, default=20, help="passes over the training images")
  parser.add_argument("--batch-size", type=int, default=32, help="images per training step")
  parser.add_argument("--seed", type=int, default=0, help="seeds initialisation and shuffling")
  parser.add_argument("--hidden", type=int, nargs="+", default=[128, 128],
                      help="widths of the hidden layers")
  parser.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate")
  parser.add_argument("--backend", choices=["xjax", "jax"], default="xjax",
                      help="run on xjax, or on real JAX (which must be installed)")
  parser.add_argument("--plot", type=pathlib.Path, metavar="PNG",
                      help="save the training curves here (needs matplotlib)")
  parser.add_argument("--quiet", action="store_true", help="print only the final result")
  return parser.parse_args(argv)


def main(argv=None):
  """Trains and evaluates; returns the per-epoch history and the final test accuracy."""
  args = parse_args(argv)
  use_backend(args.backend)
  say = (lambda *a: None) if args.quiet else print
  start = time.perf_counter()

  (x_train, y_train), (x_test, y_test) = train_test_split(*load_digits())
  # The evaluation sets go to the device once; training batches are sliced on the host.
  eval_sets = {"train": (jnp.asarray(x_train), jnp.asarray(y_train)),
               "test": (jnp.asarray(x_test), jnp.asarray(y_test))}
  say(f"{args.backend} on {jax.devices()[0].platform}: {len(x_train)} training and "
      f"{len(x_test)} test images of 8×8 pixels")

  key = jax.random.key(args.seed)
  key, init_key = jax.random.split(key)
  params = init_params(init_key, [x_train.shape[1], *args.hidden, NUM_CLASSES])
  opt_state = adam_init(params)
  step = jax.jit(train_step)
  evaluate = jax.jit(accuracy)

  history = fit(step, evaluate, params, opt_state, key, (x_train, y_train), eval_sets,
                args.epochs, args.batch_size, args.lr, say)
  seconds = time.perf_counter() - start
  test_accuracy = history["test_accuracy"][-1] if history["epoch"] else float("nan")
  print(f"final test accuracy {test_accuracy:.4f} ({args.backend}, seed {args.seed}, "
        f"{args.epochs} epochs, {seconds:.1f} s)")
  if args.plot:
    plot_history(history, args.plot, title=f"MLP on 8×8 digits ({args.backend})")
  return {"history": history, "test_accuracy": test_accuracy, "seconds": seconds}


def plot_history(history, path, title):
  """Saves the loss and accuracy curves as an image, if matplotlib is installed."""
  try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
  except ImportError:
    print(f"matplotlib is not installed; not writing {path} (pip install matplotlib)")
    return
  fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
  left.plot(history["epoch"], history["loss"])
  left.set(xlabel="epoch", ylabel="training loss", yscale="log")
  right.plot(history["epoch"], history["train_accuracy"], label="train")
  right.plot(history["epoch"], history["test_accuracy"], label="test")
  right.set(xlabel="epoch", ylabel="accuracy")
  right.legend()
  fig.suptitle(title)
  fig.tight_layout()
  fig.savefig(path)
  plt.close(fig)
  print(f"wrote {path}")


if __name__ == "__main__":
  main()
