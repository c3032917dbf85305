"""Train the digits MLP data-parallel over the devices of several processes, with xjax or with JAX.

This is examples/data_parallel.py (whose model, data, Adam and training loop are
those of examples/mlp_digits.py) run as a multi-process ("multi-controller")
job: every process runs this same script, and `jax.distributed.initialize`
joins them into one job whose `jax.devices()` are the devices of all the
processes. The mesh has one 'data' axis over all of them. Each training batch is
a global Array split along 'data' (`NamedSharding(mesh, P('data'))`); every
process builds its part with `jax.make_array_from_process_local_data` from the
rows of the batch that its own devices hold. The parameters and Adam's state
are replicated (`P()`) on every device of every process. The jitted step is the
same as on one process; XLA's SPMD partitioner inserts the all-reduce of the
gradients, which now crosses processes (over Gloo, on CPU).

    python -m xjax.tools.launch -n 2 --devices-per-process 2 examples/multiprocess_train.py
    python -m xjax.tools.launch -n 2 --devices-per-process 2 examples/multiprocess_train.py --backend jax
    .venv-jax/bin/python xjax/tools/launch.py -n 2 --devices-per-process 2 \\
        examples/multiprocess_train.py --backend jax     # the launcher imports nothing from xjax
    python examples/multiprocess_train.py                  # one process, 8 CPU devices

The launcher sets JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES and JAX_PROCESS_ID
(and XLA_FLAGS, for the devices per process) in each process's environment. The
script reads them itself and passes them to `jax.distributed.initialize`: real
JAX's initialize reads only the coordinator's address from the environment.
With JAX_NUM_PROCESSES unset or 1 the script runs alone, without initialize.

Every process loads the whole (tiny) digits file and shuffles with the same key,
so all agree on which images form each global batch; each then keeps only the
rows that its devices hold. Only process 0 prints. The losses are those of
`python examples/data_parallel.py` on as many devices in one process (2
processes of 2 devices: XLA_FLAGS=--xla_force_host_platform_device_count=4), to
rounding: the all-reduce may add the per-device gradients in another order.

When run as a script with XLA_FLAGS unset, the script sets
XLA_FLAGS=--xla_force_host_platform_device_count=8 before importing xjax or JAX,
as examples/data_parallel.py does (the launcher always sets XLA_FLAGS when given
--devices-per-process).

xjax and JAX 0.10.2 print the same numbers when they draw the same random numbers:
JAX defaults to `jax_threefry_partitionable=True`, xjax to False, so run xjax with
JAX_THREEFRY_PARTITIONABLE=1 to compare (see README.md).
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


def join_job(environ=os.environ):
  """Calls `jax.distributed.initialize` with the launcher's JAX_COORDINATOR_ADDRESS,
  JAX_NUM_PROCESSES and JAX_PROCESS_ID, unless JAX_NUM_PROCESSES is unset or 1."""
  num_processes = int(environ.get("JAX_NUM_PROCESSES", "1"))
  if num_processes == 1:
    return
  missing = [name for name in ("JAX_COORDINATOR_ADDRESS", "JAX_PROCESS_ID") if name not in environ]
  if missing:
    raise SystemExit(f"JAX_NUM_PROCESSES={num_processes} but {' and '.join(missing)} unset: "
                     "start the script with python -m xjax.tools.launch")
  jax.distributed.initialize(coordinator_address=environ["JAX_COORDINATOR_ADDRESS"],
                             num_processes=num_processes,
                             process_id=int(environ["JAX_PROCESS_ID"]))


def make_mesh():
  """A ('data',) mesh of all devices of all processes, of the Auto axis type (XLA
  chooses the shardings inside jit; JAX's make_mesh defaults to Explicit)."""
  devices = jax.devices()
  return jax.make_mesh((len(devices),), ("data",), axis_types=(jax.sharding.AxisType.Auto,),
                       devices=devices)


def local_rows(sharding, batch_size):
  """The rows [start, stop) of a global batch split by `sharding` that this process's
  devices hold (contiguous here: a process's devices are adjacent along 'data')."""
  indices = sharding.addressable_devices_indices_map((batch_size,)).values()
  starts = [index[0].start or 0 for index in indices]
  stops = [batch_size if index[0].stop is None else index[0].stop for index in indices]
  start, stop = min(starts), max(stops)
  if stop - start != batch_size * len(starts) // len(sharding.device_set):
    raise SystemExit(f"this process's rows of the batch are not contiguous: {sorted(starts)}")
  return start, stop


def shard_training(mesh, params, opt_state, batch_size):
  """Replicates the parameters and Adam's state on every device of `mesh`; returns them and
  a jitted training step that takes host batches and keeps only this process's rows."""
  named, P = jax.sharding.NamedSharding, jax.sharding.PartitionSpec
  replicated, batch = named(mesh, P()), named(mesh, P("data"))
  # Every process computed the same values from the same seed; device_put checks that they
  # agree and places them on all devices.
  params, opt_state = jax.device_put((params, opt_state), replicated)
  step = jax.jit(mlp_digits.train_step, out_shardings=replicated)
  start, stop = local_rows(batch, batch_size)

  def global_batch(rows):
    return jax.make_array_from_process_local_data(batch, rows[start:stop],
                                                  (batch_size, *rows.shape[1:]))

  def sharded_step(params, opt_state, xs, ys, lr):
    # fit slices each global batch on the host; this process contributes its rows only.
    return step(params, opt_state, global_batch(xs), global_batch(ys), lr)
  return sharded_step, params, opt_state, (start, stop)


def parse_args(argv=None):
  parser = argparse.ArgumentParser(
      description=__doc__.splitlines()[0],
      epilog="Start it with python -m xjax.tools.launch -n N --devices-per-process K; run "
             f"alone with XLA_FLAGS unset, it sets XLA_FLAGS={FORCED_DEVICES}.")
  parser.add_argument("--epochs", type=int, default=10, help="passes over the training images")
  parser.add_argument("--batch-size", type=int, default=64,
                      help="images per training step, over all processes (a multiple of the "
                           "number of devices)")
  parser.add_argument("--seed", type=int, default=0, help="seeds initialisation and shuffling")
  parser.add_argument("--hidden", type=int, nargs="+", default=[128, 128],
                      help="widths of the hidden layers")
  parser.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate")
  parser.add_argument("--backend", choices=["xjax", "jax"], default="xjax",
                      help="run on xjax, or on real JAX (which must be installed)")
  parser.add_argument("--quiet", action="store_true", help="print only the final result")
  return parser.parse_args(argv)


def main(argv=None):
  """Trains and evaluates; returns the per-epoch history and the final test accuracy."""
  args = parse_args(argv)
  use_backend(args.backend)
  join_job()
  leader = jax.process_index() == 0
  say = print if leader and not args.quiet else (lambda *a: None)
  start = time.perf_counter()

  train, test = mlp_digits.train_test_split(*mlp_digits.load_digits())
  key = jax.random.key(args.seed)
  key, init_key = jax.random.split(key)
  params = mlp_digits.init_params(init_key, [train[0].shape[1], *args.hidden,
                                             mlp_digits.NUM_CLASSES])
  opt_state = mlp_digits.adam_init(params)

  mesh = make_mesh()
  n_data = mesh.shape["data"]
  if args.batch_size % n_data:
    raise SystemExit(f"--batch-size {args.batch_size} is not a multiple of the {n_data} "
                     "devices along the mesh's 'data' axis")
  step, params, opt_state, (first, last) = shard_training(mesh, params, opt_state,
                                                          args.batch_size)
  replicated = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
  # The evaluation sets, replicated: accuracy is a replicated scalar every process can read.
  eval_sets = {"train": jax.device_put(train, replicated),
               "test": jax.device_put(test, replicated)}
  processes = f"{jax.process_count()} process" + ("es" if jax.process_count() > 1 else "")
  say(f"{args.backend}: mesh {dict(mesh.shape)} of {n_data} {jax.devices()[0].platform} devices "
      f"in {processes}, {args.batch_size // n_data} images per device per step")
  say(f"process 0: {jax.local_device_count()} devices, rows {first}:{last} of each batch")

  history = mlp_digits.fit(step, jax.jit(mlp_digits.accuracy), params, opt_state, key,
                           train, eval_sets, args.epochs, args.batch_size, args.lr, say)
  seconds = time.perf_counter() - start
  test_accuracy = history["test_accuracy"][-1] if history["epoch"] else float("nan")
  if leader:
    print("per-epoch losses", " ".join(f"{loss:.9g}" for loss in history["loss"]))
    print(f"final test accuracy {test_accuracy:.4f} ({args.backend}, {processes}, {n_data} "
          f"devices, seed {args.seed}, {args.epochs} epochs, {seconds:.1f} s)")
  return {"history": history, "test_accuracy": test_accuracy, "seconds": seconds}


if __name__ == "__main__":
  os.environ.setdefault("XLA_FLAGS", FORCED_DEVICES)
  main()
