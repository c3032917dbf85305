"""chex 0.1.92 on xjax: its assertions, dataclasses (pytrees under jit, vmap and grad),
Dimensions and variants give JAX's results (scripts/chex_basics.py against its golden); its
backend restriction and fake CPU device count see xjax's compilations and runtime (through
the `jax._src.compiler` and `jax._src.xla_bridge` aliases); and a sample of chex's own test
files passes at least as many tests under xjax as recorded in
tests/golden/clients/chex_suite_counts.json (`tools/golden_client_suites.py --jax-python
PYTHON chex FILE ...`)."""
import textwrap

import pytest

from tests.clients.harness import (assert_matches, golden, require, assert_suite_file_passes,
                                   run_under_xjax, script_output)

pytestmark = pytest.mark.slow  # every test here starts fresh Python processes

SAMPLE = [
    "chex/_src/asserts_internal_test.py",
    "chex/_src/asserts_test.py",
    "chex/_src/dataclass_test.py",
    "chex/_src/dimensions_test.py",
    "chex/_src/variants_test.py",
    "chex/_src/warnings_test.py",
    "chex/chex_test.py",
]


def test_chex_basics_match_jax():
  require("chex")
  assert_matches(script_output("chex_basics"), golden("chex_basics"), rtol=1e-5, atol=1e-6)


def test_restrict_backends_refuses_xjax_compilations():
  require("chex")
  proc = run_under_xjax(["-c", textwrap.dedent("""
      import jax, jax.numpy as jnp
      import chex
      from chex._src.restrict_backends import RestrictedBackendError
      jax.jit(lambda x: x + 1)(1.0)  # compiled before: served from the cache
      with chex.restrict_backends(forbidden=["cpu"]):
        print(float(jax.jit(lambda x: x + 1)(2.0)))
        try:
          jax.jit(lambda x: x * 3)(2.0)
          print("compiled")
        except RestrictedBackendError as e:
          print("refused:", e)
      with chex.restrict_backends(allowed=["cpu"]):
        print(float(jax.jit(lambda x: x * 5)(2.0)))
      print(float(jax.jit(lambda x: x * 3)(2.0)))
  """)])
  assert proc.returncode == 0, proc.stderr[-4000:]
  assert proc.stdout.splitlines() == [
      "3.0", "refused: Compiling a JAX program for cpu is forbidden by restrict_backends().",
      "10.0", "6.0"]


def test_set_n_cpu_devices_before_and_after_the_runtime_starts():
  require("chex")
  proc = run_under_xjax(["-c", textwrap.dedent("""
      import jax, jax.numpy as jnp
      import chex
      print(jax._src.xla_bridge._backends)
      chex.set_n_cpu_devices(4)
      print(jax.device_count(), sorted(jax._src.xla_bridge._backends))
      try:
        chex.set_n_cpu_devices(2)
      except RuntimeError as e:
        print("RuntimeError:", e)
  """)], env={"XLA_FLAGS": ""})
  assert proc.returncode == 0, proc.stderr[-4000:]
  assert proc.stdout.splitlines() == [
      "{}", "4 ['cpu']",
      "RuntimeError: Attempted to set 2 devices, but 4 CPUs already available: ensure that "
      "`set_n_cpu_devices` is executed before any JAX operation."]


@pytest.mark.parametrize("path", SAMPLE)
def test_chex_own_tests_pass_under_xjax(path, tmp_path):
  require("chex", "absl")
  assert_suite_file_passes("chex", path, tmp_path)
