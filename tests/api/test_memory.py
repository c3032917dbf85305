"""No Python-heap growth per call over long loops (issue 12).

Before the fix every execution held ~100 bytes for good (jaxlib recorded a
traceback per execution that was never released): a training loop leaked
without bound. Measured with tracemalloc in a fresh process, so other tests'
caches do not blur the count.
"""
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow  # every test here starts fresh Python processes

_SETUP = textwrap.dedent("""
    import gc, sys, tracemalloc
    import numpy as np
    import xjax, xjax.numpy as jnp
    from xjax import lax

    f = xjax.jit(lambda x, y: jnp.tanh(x * y + 1).sum())
    step = xjax.jit(xjax.value_and_grad(lambda w, x: jnp.sum((x @ w) ** 2)))
    x, y = jnp.ones(8), jnp.ones(8)
    w, m = jnp.ones((4, 3)), jnp.ones((5, 4))
""")

# Each workload runs alone: some calls (a host read, say) happen to release
# what others hold, so a mix can hide a leak.
WORKLOADS = {
    "cached_jit": "f(x, y)",
    "cached_jit_host_args": "f(np.ones(8, np.float32), 2.0)",
    "cached_jit_value_and_grad": "step(w, m)",
    "eager_jnp": "jnp.sin(x)",
    "eager_operator_with_scalar": "x + 1.0",
    "eager_primitive": "lax.add(x, y)",
    "host_read": "float(f(x, y))",
}

_MEASURE = textwrap.dedent("""
    def one_call():
      {call}

    for _ in range(2000):         # past the warm-up of jaxlib's transfer pools
      one_call()
    gc.collect()
    tracemalloc.start()
    for window in range(3):       # the pools and tracemalloc settle; a leak never does
      before = tracemalloc.get_traced_memory()[0]
      for _ in range(3000):
        one_call()
      gc.collect()
      print((tracemalloc.get_traced_memory()[0] - before) / 3000)
""")


@pytest.mark.parametrize("workload", WORKLOADS)
def test_repeated_calls_do_not_grow_the_heap(workload):
  code = _SETUP + _MEASURE.format(call=WORKLOADS[workload])
  proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                        timeout=600)
  assert proc.returncode == 0, proc.stderr[-3000:]
  per_call = float(proc.stdout.split()[-1])  # the last window
  # Allow a few bytes of allocator noise; the smallest leaked object is 16 bytes.
  assert per_call < 4, f"the heap grows by {per_call:.1f} bytes per call of {workload}"
