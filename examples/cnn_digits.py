"""Train a small convolutional network on the bundled handwritten digits, with xjax or JAX.

The data and its fixed 80/20 split are those of examples/mlp_digits.py (1,797 real 8×8
digits, bundled; nothing is downloaded), kept as images: f32[N, 8, 8, 1], NHWC.

    python examples/cnn_digits.py                      # xjax
    python examples/cnn_digits.py --backend jax        # the same script on real JAX

The network is written by hand with `lax.conv_general_dilated` and `lax.reduce_window`:
two 3×3 convolutions with ReLU, a 2×2 max pool, then a dense layer and the logits,
trained with Adam under `jit(value_and_grad)`.
"""
import argparse
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import mlp_digits  # noqa: E402  (the data, the split and Adam are shared with the MLP example)

NUM_CLASSES = 10
DIMENSION_NUMBERS = ("NHWC", "HWIO", "NHWC")

# `import xjax as jax; import xjax.numpy as jnp`, or the same with `jax`: see use_backend.
jax = jnp = None


def use_backend(name):
  """Binds `jax` and `jnp` here and in mlp_digits to `name` ("xjax" or "jax")."""
  global jax, jnp
  mlp_digits.use_backend(name)
  jax, jnp = mlp_digits.jax, mlp_digits.jnp


def load_images():
  """The split of mlp_digits, reshaped to NHWC images: f32[N, 8, 8, 1] in [0, 1]."""
  (x_train, y_train), (x_test, y_test) = mlp_digits.train_test_split(*mlp_digits.load_digits())
  return (x_train.reshape(-1, 8, 8, 1), y_train), (x_test.reshape(-1, 8, 8, 1), y_test)


def init_params(key, channels=(16, 32), hidden=128):
  """He-normal convolution kernels (HWIO) and dense weights, zero biases."""
  k1, k2, k3, k4 = jax.random.split(key, 4)
  c1, c2 = channels

  def he(k, shape, fan_in):
    return jax.random.normal(k, shape) * jnp.sqrt(2.0 / fan_in)

  flat = 4 * 4 * c2  # 8×8 images, one 2×2 pool
  return {"conv1": {"w": he(k1, (3, 3, 1, c1), 9), "b": jnp.zeros(c1)},
          "conv2": {"w": he(k2, (3, 3, c1, c2), 9 * c1), "b": jnp.zeros(c2)},
          "dense": {"w": he(k3, (flat, hidden), flat), "b": jnp.zeros(hidden)},
          "out": {"w": he(k4, (hidden, NUM_CLASSES), hidden), "b": jnp.zeros(NUM_CLASSES)}}


def conv(x, layer):
  y = jax.lax.conv_general_dilated(x, layer["w"], window_strides=(1, 1), padding="SAME",
                                   dimension_numbers=DIMENSION_NUMBERS)
  return jax.nn.relu(y + layer["b"])


def max_pool(x):
  """2×2 max pooling with stride 2 over the spatial axes of NHWC images."""
  return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def predict(params, x):
  """Logits for a batch of images: f32[B, 8, 8, 1] -> f32[B, 10]."""
  x = max_pool(conv(conv(x, params["conv1"]), params["conv2"]))
  x = x.reshape(x.shape[0], -1)
  x = jax.nn.relu(x @ params["dense"]["w"] + params["dense"]["b"])
  return x @ params["out"]["w"] + params["out"]["b"]


def batch_loss(params, xs, ys):
  logp = jax.nn.log_softmax(predict(params, xs))
  return -jnp.mean(jnp.take_along_axis(logp, ys[:, None], axis=1))


def accuracy(params, xs, ys):
  return jnp.mean(jnp.argmax(predict(params, xs), axis=-1) == ys)


def train_step(params, opt_state, xs, ys, lr):
  loss, grads = jax.value_and_grad(batch_loss)(params, xs, ys)
  params, opt_state = mlp_digits.adam_update(grads, opt_state, params, lr)
  return params, opt_state, loss


def parse_args(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--epochs", type=int, default=15, help="passes over the training images")
  parser.add_argument("--batch-size", type=int, default=32, help="images per training step")
  parser.add_argument("--seed", type=int, default=0, help="seeds initialisation and shuffling")
  parser.add_argument("--lr", type=float, default=2e-3, help="Adam's learning rate")
  parser.add_argument("--backend", choices=["xjax", "jax"], default="xjax",
                      help="run on xjax, or on real JAX (which must be installed)")
  parser.add_argument("--quiet", action="store_true", help="print only the final result")
  return parser.parse_args(argv)


def main(argv=None):
  """Trains and evaluates; returns the per-epoch history and the final test accuracy."""
  args = parse_args(argv)
  use_backend(args.backend)
  say = (lambda *a: None) if args.quiet else print
  start = time.perf_counter()
  (x_train, y_train), (x_test, y_test) = load_images()
  eval_sets = {"train": (jnp.asarray(x_train), jnp.asarray(y_train)),
               "test": (jnp.asarray(x_test), jnp.asarray(y_test))}
  say(f"{args.backend} on {jax.devices()[0].platform}: {len(x_train)} training and "
      f"{len(x_test)} test images of 8×8 pixels")

  key = jax.random.key(args.seed)
  key, init_key = jax.random.split(key)
  params = init_params(init_key)
  opt_state = mlp_digits.adam_init(params)
  step = jax.jit(train_step)
  evaluate = jax.jit(accuracy)

  history = mlp_digits.fit(step, evaluate, params, opt_state, key, (x_train, y_train), eval_sets,
                           args.epochs, args.batch_size, args.lr, say)
  seconds = time.perf_counter() - start
  test_accuracy = history["test_accuracy"][-1] if history["epoch"] else float("nan")
  print(f"final test accuracy {test_accuracy:.4f} ({args.backend}, seed {args.seed}, "
        f"{args.epochs} epochs, {seconds:.1f} s)")
  return {"history": history, "test_accuracy": test_accuracy, "seconds": seconds}


if __name__ == "__main__":
  main()
