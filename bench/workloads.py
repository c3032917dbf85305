"""Benchmark workloads, run under either library: `python bench/workloads.py xjax|jax [GROUP]`.

Prints one JSON object: workload name -> seconds per call (the runner takes
medians across processes). GROUP is `core` (default: dispatch, tracing,
training steps, control flow), `linalg` (factorizations, FFT, a Gaussian
process), `nn` (a CNN and a transformer block), `sharding` (on 8 forced CPU
devices, which it asks for in XLA_FLAGS itself: a data-parallel MLP step and a
row-sharded matmul) or `rss` (the memory workload alone: 200 MLP training steps
in a fresh process, reporting the peak resident set in bytes, under a name
ending in "(peak RSS)").
"""
import itertools
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np


def _timeit(fn, number, repeat=5, setup=None):
  """The median over `repeat` rounds of `fn`'s time (mean of `number` calls), after one
  warm-up call; `setup()` runs untimed before each round (and the warm-up)."""
  if setup is not None:
    setup()
  fn()
  times = []
  for _ in range(repeat):
    if setup is not None:
      setup()
    start = time.perf_counter()
    for _ in range(number):
      fn()
    times.append((time.perf_counter() - start) / number)
  return float(np.median(times))


def _import(lib):
  if lib == "jax":
    import jax
    import jax.numpy as jnp
  else:
    import xjax as jax
    import xjax.numpy as jnp
  return jax, jnp


# --- the MLP: 64 -> 256 -> 256 -> 10, softmax cross-entropy, Adam ---------------------

MLP_SIZES = (64, 256, 256, 10)


def _mlp_data(jnp, batch, seed=0):
  rng = np.random.default_rng(seed)
  params = [(jnp.asarray(rng.normal(size=(m, n)).astype(np.float32) / np.sqrt(m)),
             jnp.zeros(n, jnp.float32)) for m, n in zip(MLP_SIZES[:-1], MLP_SIZES[1:])]
  x = jnp.asarray(rng.normal(size=(batch, MLP_SIZES[0])).astype(np.float32))
  y = jnp.asarray(rng.integers(0, MLP_SIZES[-1], size=batch).astype(np.int32))
  return params, x, y


def _mlp_loss(jax, jnp):
  def loss(params, x, y):
    h = x
    for w, b in params[:-1]:
      h = jnp.tanh(jnp.dot(h, w) + b)
    w, b = params[-1]
    logits = jnp.dot(h, w) + b
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))
  return loss


def _mlp_step_fn(jax, jnp):
  """A fresh (un-jitted) Adam training step: (params, m, v, t), x, y -> new state, loss."""
  loss = _mlp_loss(jax, jnp)
  tree_map = jax.tree_util.tree_map

  def step(state, x, y):
    params, m, v, t = state
    value, grads = jax.value_and_grad(loss)(params, x, y)
    t = t + 1
    m = tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
    v = tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, v, grads)
    lr = 1e-3 * jnp.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
    params = tree_map(lambda p, m, v: p - lr * m / (jnp.sqrt(v) + 1e-8), params, m, v)
    return (params, m, v, t), value
  return step


def _mlp_state(jax, jnp, params):
  zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
  return (params, zeros, jax.tree_util.tree_map(jnp.zeros_like, params), jnp.zeros((), jnp.float32))


def _train_loop(jax, jnp, batch):
  """A steady-state training step (compiled, state donated) as a no-argument callable."""
  params, x, y = _mlp_data(jnp, batch)
  step = jax.jit(_mlp_step_fn(jax, jnp), donate_argnums=0)
  holder = [_mlp_state(jax, jnp, params)]

  def run():
    holder[0], value = step(holder[0], x, y)
    value.block_until_ready()
  return run


def rss_main(lib):
  jax, jnp = _import(lib)
  run = _train_loop(jax, jnp, 128)
  for _ in range(200):
    run()
  # ru_maxrss is in KiB on Linux.
  peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
  print(json.dumps({"200 MLP steps, batch 128 (peak RSS)": peak}))


def main(lib):
  t0 = time.perf_counter()
  jax, jnp = _import(lib)
  results = {"import": time.perf_counter() - t0}

  x3 = jnp.ones(3)
  y3 = jnp.ones(3)
  results["eager x + y (3 elements)"] = _timeit(lambda: (x3 + y3).block_until_ready(), 2000)
  results["eager jnp.sin (3 elements)"] = _timeit(lambda: jnp.sin(x3).block_until_ready(), 2000)
  big = jnp.ones((1000, 1000))
  results["eager 1000x1000 matmul"] = _timeit(lambda: jnp.dot(big, big).block_until_ready(), 10)
  host_batch = np.ones((128, 64), np.float32)
  results["host->device, jnp.asarray of a 128x64 NumPy array"] = _timeit(
      lambda: jnp.asarray(host_batch).block_until_ready(), 2000)
  tiny = jax.jit(lambda a, b: a * b + 1)
  results["jit dispatch, tiny function"] = _timeit(lambda: tiny(x3, y3).block_until_ready(), 5000)

  def make_chain():
    # A new function object each time: both libraries cache traces per function.
    def chain(x):
      for i in range(1000):
        x = jnp.sin(x) * 1.0001 + i
      return x
    return chain

  results["make_jaxpr of 1000 ops"] = _timeit(
      lambda: jax.make_jaxpr(make_chain())(x3), 1, repeat=3)

  def first_call():
    jax.jit(make_chain())(x3).block_until_ready()

  # Compile caches would serve a program already compiled for an equal jaxpr (xjax keys
  # them by what the jaxpr computes): cleared before each round, the row times a compile.
  results["first jit call, 1000 ops"] = _timeit(first_call, 1, repeat=3, setup=jax.clear_caches)

  # --- the MLP training step (value_and_grad + Adam, jitted, state donated) ---
  params, xb, yb = _mlp_data(jnp, 128)

  def first_mlp_call():
    step = jax.jit(_mlp_step_fn(jax, jnp))  # a new function: no cache hit
    _, value = step(_mlp_state(jax, jnp, params), xb, yb)
    value.block_until_ready()

  results["first call (trace + compile), MLP step"] = _timeit(first_mlp_call, 1, repeat=3,
                                                              setup=jax.clear_caches)
  for batch, number in ((128, 200), (1024, 50)):
    results[f"MLP train step, batch {batch}"] = _timeit(_train_loop(jax, jnp, batch), number)

  # --- a tanh RNN over 100 steps with lax.scan, forward and backward ---
  rng = np.random.default_rng(1)
  hidden, inputs, steps, rnn_batch = 128, 32, 100, 32
  rnn_params = (jnp.asarray(rng.normal(size=(hidden, hidden)).astype(np.float32) / np.sqrt(hidden)),
                jnp.asarray(rng.normal(size=(inputs, hidden)).astype(np.float32) / np.sqrt(inputs)),
                jnp.zeros(hidden, jnp.float32))
  xs = jnp.asarray(rng.normal(size=(steps, rnn_batch, inputs)).astype(np.float32))

  def rnn_loss(p, xs):
    w, u, b = p
    def cell(h, x):
      h = jnp.tanh(jnp.dot(h, w) + jnp.dot(x, u) + b)
      return h, jnp.sum(h * h)
    h, ys = jax.lax.scan(cell, jnp.zeros((rnn_batch, hidden), jnp.float32), xs)
    return jnp.sum(ys) + jnp.sum(h)

  rnn_grad = jax.jit(jax.value_and_grad(rnn_loss))
  results["jitted scan RNN fwd+bwd (100 steps)"] = _timeit(
      lambda: rnn_grad(rnn_params, xs)[0].block_until_ready(), 50)

  # --- per-example gradients of the MLP loss: jit(vmap(grad)) ---
  loss = _mlp_loss(jax, jnp)

  def example_loss(p, x, y):
    return loss(p, x[None], y[None])

  per_example = jax.jit(jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0)))
  results["jitted vmap(grad), 128 examples"] = _timeit(
      lambda: jax.block_until_ready(per_example(params, xb, yb)), 50)

  # JAX 0.10.2 defaults to the partitionable threefry layout: both draw the same bits.
  jax.config.update("jax_threefry_partitionable", True)
  key = jax.random.PRNGKey(0)
  results["random.normal, 10^7 values"] = _timeit(
      lambda: jax.random.normal(key, (10_000_000,)).block_until_ready(), 5)

  # --- control flow (issue 5): compile time of a loop must not grow with its trip count ---
  def first_call_loop(kind, steps):
    def run():
      # New function objects each run: no trace or compile cache hit.
      if kind == "scan":
        body = lambda c, _: (jnp.sin(c) * 1.0001 + 1.0, c)
        f = jax.jit(lambda c: jax.lax.scan(body, c, None, length=steps)[0])
      else:
        f = jax.jit(lambda c: jax.lax.fori_loop(0, steps, lambda i, c: jnp.sin(c) + 1.0, c))
      f(x3).block_until_ready()
    return run

  for kind in ("scan", "fori_loop"):
    for steps in (10, 10_000):
      results[f"first jit call, {kind} of {steps} steps"] = _timeit(
          first_call_loop(kind, steps), 1, repeat=3, setup=jax.clear_caches)
  print(json.dumps(results))


def linalg_main(lib):
  """Factorizations and FFT on LAPACK/XLA kernels, and a GP marginal likelihood with its gradient."""
  jax, jnp = _import(lib)
  jax.config.update("jax_enable_x64", False)
  rng = np.random.default_rng(2)
  results = {}

  def spd(n):
    a = rng.normal(size=(n, n)).astype(np.float32)
    return jnp.asarray(a @ a.T / n + np.eye(n, dtype=np.float32))

  a512, b512 = jnp.asarray(rng.normal(size=(512, 512)).astype(np.float32)), spd(512)[:, :1]
  solve = jax.jit(jnp.linalg.solve)
  results["jnp.linalg.solve, 512x512"] = _timeit(
      lambda: solve(a512, b512).block_until_ready(), 20)
  s1024 = spd(1024)
  chol = jax.jit(jnp.linalg.cholesky)
  results["jnp.linalg.cholesky, 1024x1024"] = _timeit(lambda: chol(s1024).block_until_ready(), 10)
  a256 = jnp.asarray(rng.normal(size=(256, 256)).astype(np.float32))
  svd = jax.jit(jnp.linalg.svd)
  results["jnp.linalg.svd, 256x256"] = _timeit(lambda: svd(a256)[1].block_until_ready(), 10)
  s256 = spd(256)
  eigh = jax.jit(jnp.linalg.eigh)
  results["jnp.linalg.eigh, 256x256"] = _timeit(lambda: eigh(s256)[0].block_until_ready(), 10)
  z = jnp.asarray((rng.normal(size=2**20) + 1j * rng.normal(size=2**20)).astype(np.complex64))
  fft = jax.jit(jnp.fft.fft)
  results["jnp.fft.fft, 2^20 complex64"] = _timeit(lambda: fft(z).block_until_ready(), 10)

  # A Gaussian process: the exact negative log marginal likelihood of an RBF kernel.
  n = 1000
  xs = jnp.asarray(rng.uniform(-3, 3, size=(n, 1)).astype(np.float32))
  ys = jnp.asarray(np.sin(2 * np.asarray(xs[:, 0])) + 0.1 * rng.normal(size=n).astype(np.float32))

  def nll(params, x, y):
    log_scale, log_length, log_noise = params
    d2 = jnp.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=-1)
    k = jnp.exp(log_scale) * jnp.exp(-0.5 * d2 / jnp.exp(2 * log_length))
    k = k + (jnp.exp(log_noise) + 1e-4) * jnp.eye(x.shape[0])
    chol = jnp.linalg.cholesky(k)
    alpha = jax.lax.linalg.triangular_solve(chol, y[:, None], left_side=True, lower=True)
    return (0.5 * jnp.sum(alpha ** 2) + jnp.sum(jnp.log(jnp.diagonal(chol)))
            + 0.5 * x.shape[0] * np.log(2 * np.pi))

  gp = jax.jit(jax.value_and_grad(nll))
  params = jnp.asarray(np.array([0.0, 0.0, -2.0], np.float32))
  results["GP marginal likelihood + grad, n=1000"] = _timeit(
      lambda: gp(params, xs, ys)[0].block_until_ready(), 10)
  print(json.dumps(results))


def nn_main(lib):
  """Training steps of a small CNN and of a transformer block (forward + backward, jitted)."""
  jax, jnp = _import(lib)
  lax = jax.lax
  rng = np.random.default_rng(3)
  results = {}

  def he(shape, fan_in):
    return jnp.asarray((rng.normal(size=shape) * np.sqrt(2.0 / fan_in)).astype(np.float32))

  # The CNN of examples/cnn_digits.py on a batch of 128 8x8 images.
  cnn = {"c1": he((3, 3, 1, 16), 9), "c2": he((3, 3, 16, 32), 144), "d": he((512, 128), 512),
         "o": he((128, 10), 128)}
  images = jnp.asarray(rng.uniform(size=(128, 8, 8, 1)).astype(np.float32))
  labels = jnp.asarray(rng.integers(0, 10, size=128).astype(np.int32))

  def cnn_loss(p, x, y):
    dn = ("NHWC", "HWIO", "NHWC")
    x = jax.nn.relu(lax.conv_general_dilated(x, p["c1"], (1, 1), "SAME", dimension_numbers=dn))
    x = jax.nn.relu(lax.conv_general_dilated(x, p["c2"], (1, 1), "SAME", dimension_numbers=dn))
    x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    x = jax.nn.relu(x.reshape(x.shape[0], -1) @ p["d"]) @ p["o"]
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(x), y[:, None], axis=1))

  cnn_step = jax.jit(jax.value_and_grad(cnn_loss))
  results["CNN fwd+bwd, batch 128 of 8x8"] = _timeit(
      lambda: cnn_step(cnn, images, labels)[0].block_until_ready(), 50)

  # A transformer block: multi-head self-attention (8 heads of 32) and a 4x MLP, pre-norm.
  seq, d, heads, batch = 128, 256, 8, 8
  block = {"qkv": he((d, 3 * d), d), "proj": he((d, d), d), "up": he((d, 4 * d), d),
           "down": he((4 * d, d), 4 * d)}
  tokens = jnp.asarray(rng.normal(size=(batch, seq, d)).astype(np.float32))

  def layer_norm(x):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5)

  def block_loss(p, x):
    q, k, v = jnp.split(layer_norm(x) @ p["qkv"], 3, axis=-1)
    q, k, v = (t.reshape(batch, seq, heads, d // heads) for t in (q, k, v))
    attn = jax.nn.dot_product_attention(q, k, v, is_causal=True).reshape(batch, seq, d)
    x = x + attn @ p["proj"]
    x = x + jax.nn.gelu(layer_norm(x) @ p["up"]) @ p["down"]
    return jnp.mean(x ** 2)

  block_step = jax.jit(jax.value_and_grad(block_loss))
  results["transformer block fwd+bwd, seq 128, d 256, batch 8"] = _timeit(
      lambda: block_step(block, tokens)[0].block_until_ready(), 20)
  print(json.dumps(results))


FORCED_DEVICES = "--xla_force_host_platform_device_count=8"


def sharding_main(lib):
  """Sharded jit on 8 CPU devices (XLA's SPMD partitioner): the MLP step with the batch
  split over the devices and the state replicated, and a matmul with x split by rows."""
  # The device count is read when the first client is made: set it before the import.
  flags = os.environ.get("XLA_FLAGS", "")
  if "xla_force_host_platform_device_count" not in flags:
    os.environ["XLA_FLAGS"] = f"{flags} {FORCED_DEVICES}".strip()
  jax, jnp = _import(lib)
  if jax.device_count() != 8:
    sys.exit(f"the sharding group needs 8 devices, found {jax.device_count()} "
             f"(XLA_FLAGS={os.environ['XLA_FLAGS']!r})")
  P, NamedSharding = jax.sharding.PartitionSpec, jax.sharding.NamedSharding
  mesh = jax.make_mesh((8,), ("data",), axis_types=(jax.sharding.AxisType.Auto,))
  rows, replicated = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
  results = {}

  # The MLP step of the core group, batch 1024 split 8 ways; the state stays replicated.
  params, x, y = _mlp_data(jnp, 1024)
  x, y = jax.device_put((x, y), rows)
  state = jax.device_put(_mlp_state(jax, jnp, params), replicated)
  step = jax.jit(_mlp_step_fn(jax, jnp), donate_argnums=0,
                 out_shardings=(jax.tree_util.tree_map(lambda _: replicated, state), replicated))
  holder = [state]

  def train():
    holder[0], value = step(holder[0], x, y)
    value.block_until_ready()
  results["data-parallel MLP train step, batch 1024 on 8 devices"] = _timeit(train, 20)

  rng = np.random.default_rng(4)
  a = jax.device_put(rng.normal(size=(4096, 4096)).astype(np.float32), rows)
  b = jax.device_put(rng.normal(size=(4096, 4096)).astype(np.float32), replicated)
  matmul = jax.jit(lambda a, b: a @ b)
  results["jitted 4096x4096 matmul, x split by rows on 8 devices"] = _timeit(
      lambda: matmul(a, b).block_until_ready(), 1, repeat=3)
  print(json.dumps(results))


_CACHED_STEP = """
import sys, time
sys.path.insert(0, {here!r})
import workloads
jax, jnp = workloads._import({lib!r})
jax.config.update("jax_compilation_cache_dir", {cache!r})
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
params, xb, yb = workloads._mlp_data(jnp, 128)
state = workloads._mlp_state(jax, jnp, params)
jax.block_until_ready(state)
step = jax.jit(workloads._mlp_step_fn(jax, jnp))
start = time.perf_counter()
jax.block_until_ready(step(state, xb, yb))
print(time.perf_counter() - start)
"""


def _warm_cache_first_call(lib) -> float:
  """The first call (trace, lower, load from the cache) of the MLP step in a fresh process
  whose persistent compilation cache a previous process filled (median of 3)."""
  import subprocess
  import tempfile
  with tempfile.TemporaryDirectory() as cache:
    code = _CACHED_STEP.format(here=os.path.dirname(os.path.abspath(__file__)), lib=lib,
                               cache=cache)
    times = []
    for i in range(4):  # the first run fills the cache
      out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True)
      if i:
        times.append(float(out.stdout.strip().splitlines()[-1]))
  return float(np.median(times))


def _import_time(lib, runs=7):
  """Seconds `import <lib>` takes in a fresh interpreter (the median of `runs`), timed inside
  the child so interpreter start-up is left out. Bytecode may be written (one untimed import
  first), so an editable checkout is measured with its .pyc files as an installed package
  is, even where PYTHONDONTWRITEBYTECODE is set."""
  code = (f"import time; t = time.perf_counter(); import {lib}; "
          "print(time.perf_counter() - t)")
  env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

  def once():
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                check=True, env=env).stdout)
  once()
  return float(np.median([once() for _ in range(runs)]))


def overhead_main(lib):
  """Per-call overheads (issue 20): jit dispatch with many arguments, eager ops on small
  arrays, tracing and lowering, and eager control flow (compiled once per signature)."""
  jax, jnp = _import(lib)
  results = {}
  x3 = jnp.ones(3)
  args10 = [jnp.ones(3) * i for i in range(10)]
  ten = jax.jit(lambda *a: sum(a))
  results["jit dispatch, 10 arguments"] = _timeit(lambda: ten(*args10).block_until_ready(), 3000)
  tree100 = {f"w{i}": jnp.ones(3) * i for i in range(100)}
  leafy = jax.jit(lambda t: t["w0"] + t["w99"])
  results["jit dispatch, a 100-leaf pytree argument"] = _timeit(
      lambda: leafy(tree100).block_until_ready(), 1000)
  # Arguments that are outputs of earlier calls (issue 34, w03): new Arrays every call, whose
  # avals are whatever the producing call made. x = f(x) as in a training loop; then f's
  # argument alternates between its own last output and an output of another function.
  inc = jax.jit(lambda a: a + 1)
  carry = [jnp.ones(3), jax.jit(lambda a: a * 2)(jnp.ones(3))]
  turns = itertools.cycle((0, 1))

  def feed_back():
    carry[0] = inc(carry[0]).block_until_ready()

  def alternate():
    carry[0] = inc(carry[next(turns)]).block_until_ready()

  results["jit dispatch, x = f(x) in a loop"] = _timeit(feed_back, 5000)
  results["jit dispatch, alternating outputs of two functions"] = _timeit(alternate, 5000)
  results["import (fresh process, median of 7)"] = _import_time(lib)
  results["eager x + 1 (3 elements, Python scalar)"] = _timeit(
      lambda: (x3 + 1).block_until_ready(), 2000)
  x100 = jnp.arange(100.0)
  results["eager jnp.sum (100 elements)"] = _timeit(
      lambda: jnp.sum(x100).block_until_ready(), 2000)
  results["eager x[3] (100 elements)"] = _timeit(lambda: x100[3].block_until_ready(), 2000)
  results["eager x[2:50] (100 elements)"] = _timeit(lambda: x100[2:50].block_until_ready(), 2000)

  def make_chain(n):
    def chain(x):
      for i in range(n):
        x = jnp.sin(x) * 1.0001 + i
      return x
    return chain

  results["make_jaxpr of 10000 ops"] = _timeit(
      lambda: jax.make_jaxpr(make_chain(10_000))(x3), 1, repeat=3)
  results["trace + lower (jit(f).lower), 1000 ops"] = _timeit(
      lambda: jax.jit(make_chain(1000)).lower(x3).as_text(), 1, repeat=3)
  params, xb, yb = _mlp_data(jnp, 128)
  state = _mlp_state(jax, jnp, params)
  results["trace + lower (jit(f).lower), MLP step"] = _timeit(
      lambda: jax.jit(_mlp_step_fn(jax, jnp)).lower(state, xb, yb).as_text(), 1, repeat=3)

  # Eager control flow: each call builds new jaxprs (new lambdas); compiled once per signature.
  s = jnp.float32(1.5)
  eager = {
      "cond": lambda v: jax.lax.cond(v > 0, lambda a: a * 2, lambda a: a - 1, v),
      "fori_loop": lambda v: jax.lax.fori_loop(0, 10, lambda i, c: c * 1.01 + i, v),
      "scan": lambda v: jax.lax.scan(lambda c, _: (c * 1.01, c), v, None, length=10)[0],
  }
  results["first call of the MLP step in a new process, warm persistent cache"] = (
      _warm_cache_first_call(lib))
  for name, f in eager.items():
    grad = jax.grad(f)
    f(s).block_until_ready()
    grad(s).block_until_ready()
    results[f"eager lax.{name}"] = _timeit(lambda: f(s).block_until_ready(), 20)
    results[f"eager grad of lax.{name}"] = _timeit(lambda: grad(s).block_until_ready(), 20)
  print(json.dumps(results))


if __name__ == "__main__":
  group = sys.argv[2] if len(sys.argv) > 2 else "core"
  {"core": main, "linalg": linalg_main, "nn": nn_main, "sharding": sharding_main,
   "rss": rss_main, "overhead": overhead_main}[group](sys.argv[1])
