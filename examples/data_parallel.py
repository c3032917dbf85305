"""Train the digits MLP data-parallel over all local devices, with xjax or with JAX.

The model, data, Adam and training loop are those of examples/mlp_digits.py; only
where the arrays live changes. The devices form a mesh with a 'data' axis: each
training batch is split along it (`NamedSharding(mesh, P('data'))`, every device
gets batch_size / n of the rows), while the parameters and Adam's state are
replicated (`P()`). With `--model-parallel N` the mesh is 2-D, ('data', 'model')
with N devices along 'model', and the hidden layers' weights and biases (and
their Adam moments) are split by output unit along 'model' (`P(None, 'model')`).

    python examples/data_parallel.py                       # xjax, 8 CPU devices
    python examples/data_parallel.py --model-parallel 2    # a 4 x 2 ('data', 'model') mesh
    python examples/data_parallel.py --backend jax         # the same script on real JAX
    python examples/data_parallel.py --single-device       # the same computation, one device

The training step is mlp_digits' train_step under `jax.jit`. Its inputs are
placed with `jax.device_put(x, sharding)` and jit follows them, as JAX's guide
"Distributed arrays and automatic parallelization" recommends ("computation
follows data"): no in_shardings are given. XLA's SPMD partitioner splits the step
and inserts the collectives (the all-reduce of the gradients over 'data'). Only
the outputs are pinned, `out_shardings` = the layout the state came in with:
left to itself the partitioner may choose another layout for some outputs (JAX
returns the output layer's bias split along 'model' after one step of the 2-D
mesh), and the next step would then compile again for the new input layout.

The sharded step sums the gradient in another order than one device does, so
its losses match `--single-device` only to rounding: about 1e-7 in the first
epochs. Over longer runs the two drift apart (by about 1e-4 after the default 10
epochs, on JAX as on xjax): once an example's ReLU input lies within rounding of
zero, the two runs take different sides of the kink, and Adam carries the
difference on.

When run as a script with XLA_FLAGS unset, the script sets
XLA_FLAGS=--xla_force_host_platform_device_count=8 before importing xjax or JAX,
so that a CPU-only machine shows 8 (simulated) devices.
"""
import argparse
import os
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import mlp_digits  # noqa: E402  (the data, the model, Adam and the training loop)

FORCED_DEVICES = "--xla_force_host_platform_device_count=8"

# `import xjax as jax; import xjax.numpy as jnp`, or the same with `jax`: see use_backend.
jax = jnp = None


def use_backend(name):
  """Binds `jax` and `jnp` here and in mlp_digits to `name` ("xjax" or "jax")."""
  global jax, jnp
  mlp_digits.use_backend(name)
  jax, jnp = mlp_digits.jax, mlp_digits.jnp


def make_mesh(model_parallel):
  """A mesh of all local devices: ('data',), or ('data', 'model') with `model_parallel`
  devices along 'model'. Its axes are of the Auto type: XLA chooses the shardings
  inside jit (JAX's make_mesh defaults to Explicit, sharding in types)."""
  n = len(jax.local_devices())
  if n % model_parallel:
    raise SystemExit(f"--model-parallel {model_parallel} does not divide the {n} devices")
  shape, names = ((n,), ("data",)) if model_parallel == 1 else (
      (n // model_parallel, model_parallel), ("data", "model"))
  auto = (jax.sharding.AxisType.Auto,) * len(names)
  return jax.make_mesh(shape, names, axis_types=auto, devices=jax.local_devices())


def param_shardings(mesh, params):
  """NamedShardings for `params` (the list of {"w", "b"} layers of mlp_digits): all
  replicated, except on a 'model' axis, where hidden layers are split by output unit."""
  P, named = jax.sharding.PartitionSpec, jax.sharding.NamedSharding
  replicated = {"w": named(mesh, P()), "b": named(mesh, P())}
  if "model" not in mesh.axis_names:
    return [replicated for _ in params]
  split = {"w": named(mesh, P(None, "model")), "b": named(mesh, P("model"))}
  return [split for _ in params[:-1]] + [replicated]


def shard_training(mesh, params, opt_state):
  """Places the parameters and Adam's state on `mesh` (see param_shardings); returns them
  and a jitted training step that takes host batches and splits them along 'data'."""
  named, P = jax.sharding.NamedSharding, jax.sharding.PartitionSpec
  replicated, batch = named(mesh, P()), named(mesh, P("data"))
  layout = param_shardings(mesh, params)
  state_layout = mlp_digits.AdamState(count=replicated, mu=layout, nu=layout)
  params, opt_state = jax.device_put((params, opt_state), (layout, state_layout))
  step = jax.jit(mlp_digits.train_step, out_shardings=(layout, state_layout, replicated))

  def sharded_step(params, opt_state, xs, ys, lr):
    # fit slices each batch on the host; it goes to the devices split along 'data'.
    return step(params, opt_state, jax.device_put(xs, batch), jax.device_put(ys, batch), lr)
  return sharded_step, params, opt_state


def describe(params):
  """One line per layer: each weight's global shape, one device's shard and the device count."""
  return [f"layer {i} w {tuple(layer['w'].shape)}: shard "
          f"{tuple(layer['w'].addressable_shards[0].data.shape)} on "
          f"{len(layer['w'].sharding.device_set)} devices"
          for i, layer in enumerate(params)]


def parse_args(argv=None):
  parser = argparse.ArgumentParser(
      description=__doc__.splitlines()[0],
      epilog=f"Run as a script with XLA_FLAGS unset, it sets XLA_FLAGS={FORCED_DEVICES} "
             "before importing xjax or JAX, so that a CPU shows 8 devices.")
  parser.add_argument("--epochs", type=int, default=10, help="passes over the training images")
  parser.add_argument("--batch-size", type=int, default=64,
                      help="images per training step (a multiple of the 'data' axis size)")
  parser.add_argument("--seed", type=int, default=0, help="seeds initialisation and shuffling")
  parser.add_argument("--hidden", type=int, nargs="+", default=[128, 128],
                      help="widths of the hidden layers")
  parser.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate")
  parser.add_argument("--model-parallel", type=int, default=1, metavar="N",
                      help="split the hidden layers over N devices (a 2-D mesh)")
  parser.add_argument("--single-device", action="store_true",
                      help="run the same computation on one device, without a mesh")
  parser.add_argument("--backend", choices=["xjax", "jax"], default="xjax",
                      help="run on xjax, or on real JAX (which must be installed)")
  parser.add_argument("--quiet", action="store_true", help="print only the final result")
  args = parser.parse_args(argv)
  if args.model_parallel < 1:
    parser.error(f"--model-parallel must be at least 1, got {args.model_parallel}")
  if args.single_device and args.model_parallel > 1:
    parser.error("--single-device and --model-parallel exclude each other")
  return args


def main(argv=None):
  """Trains and evaluates; returns the per-epoch history and the final test accuracy."""
  args = parse_args(argv)
  use_backend(args.backend)
  say = (lambda *a: None) if args.quiet else print
  start = time.perf_counter()

  train, test = mlp_digits.train_test_split(*mlp_digits.load_digits())
  key = jax.random.key(args.seed)
  key, init_key = jax.random.split(key)
  params = mlp_digits.init_params(init_key, [train[0].shape[1], *args.hidden,
                                             mlp_digits.NUM_CLASSES])
  opt_state = mlp_digits.adam_init(params)

  if args.single_device:
    say(f"{args.backend}: one {jax.devices()[0].platform} device")
    step = jax.jit(mlp_digits.train_step)
    eval_sets = {"train": tuple(map(jnp.asarray, train)), "test": tuple(map(jnp.asarray, test))}
  else:
    mesh = make_mesh(args.model_parallel)
    n_data = mesh.shape["data"]
    if args.batch_size % n_data:
      raise SystemExit(f"--batch-size {args.batch_size} is not a multiple of the {n_data} "
                       "devices along the mesh's 'data' axis")
    if any(size % args.model_parallel for size in args.hidden):
      raise SystemExit(f"--hidden {' '.join(map(str, args.hidden))}: each width must be a "
                       f"multiple of --model-parallel {args.model_parallel}")
    step, params, opt_state = shard_training(mesh, params, opt_state)
    replicated = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
    eval_sets = {"train": jax.device_put(train, replicated),
                 "test": jax.device_put(test, replicated)}
    say(f"{args.backend}: mesh {dict(mesh.shape)} of {mesh.devices.size} "
        f"{jax.devices()[0].platform} devices, {args.batch_size // n_data} images per "
        "device per step")
    for line in describe(params):
      say(line)

  history = mlp_digits.fit(step, jax.jit(mlp_digits.accuracy), params, opt_state, key,
                           train, eval_sets, args.epochs, args.batch_size, args.lr, say)
  seconds = time.perf_counter() - start
  test_accuracy = history["test_accuracy"][-1] if history["epoch"] else float("nan")
  print("per-epoch losses", " ".join(f"{loss:.9g}" for loss in history["loss"]))
  print(f"final test accuracy {test_accuracy:.4f} ({args.backend}, "
        f"{'one device' if args.single_device else 'sharded'}, seed {args.seed}, "
        f"{args.epochs} epochs, {seconds:.1f} s)")
  return {"history": history, "test_accuracy": test_accuracy, "seconds": seconds}


if __name__ == "__main__":
  os.environ.setdefault("XLA_FLAGS", FORCED_DEVICES)
  main()
