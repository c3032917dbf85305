"""Benchmark workloads, run under either library: `python bench/workloads.py xjax|jax`.

Prints one JSON object: workload name -> seconds per call (best-of-repeats
medians are taken by the runner across processes).
"""
import json
import sys
import time

import numpy as np


def _timeit(fn, number, repeat=5):
  fn()
  times = []
  for _ in range(repeat):
    start = time.perf_counter()
    for _ in range(number):
      fn()
    times.append((time.perf_counter() - start) / number)
  return float(np.median(times))


def main(lib):
  t0 = time.perf_counter()
  if lib == "jax":
    import jax
    import jax.numpy as jnp
  else:
    import xjax as jax
    import xjax.numpy as jnp
  results = {"import": time.perf_counter() - t0}

  x3 = jnp.ones(3)
  y3 = jnp.ones(3)
  results["eager x + y (3 elements)"] = _timeit(lambda: (x3 + y3).block_until_ready(), 2000)
  results["eager jnp.sin (3 elements)"] = _timeit(lambda: jnp.sin(x3).block_until_ready(), 2000)
  big = jnp.ones((1000, 1000))
  results["eager 1000x1000 matmul"] = _timeit(lambda: jnp.dot(big, big).block_until_ready(), 10)
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

  results["first jit call, 1000 ops"] = _timeit(first_call, 1, repeat=2)

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
          first_call_loop(kind, steps), 1, repeat=3)
  print(json.dumps(results))


if __name__ == "__main__":
  main(sys.argv[1])
