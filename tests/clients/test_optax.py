"""optax 0.2.8 on xjax: its quickstart (an MLP fitted with a chained, clipped, scheduled
adam, and a softmax classifier fitted with Nesterov sgd) gives JAX's numbers, and a sample of
optax's own test files passes at least as many tests under `python -m xjax -m pytest` as
recorded in tests/golden/clients/optax_suite_counts.json (`tools/golden_client_suites.py
--jax-python PYTHON optax FILE ...` records it; its "jax" entries are JAX's counts)."""

import pytest

from tests.clients.harness import (assert_matches, golden, require, assert_suite_file_passes,
                                   script_output)

pytestmark = pytest.mark.slow  # every test here starts fresh Python processes

# The fastest of optax's test files (together about a minute under xjax on one core).
SAMPLE = [
    "optax/_src/base_test.py",
    "optax/_src/combine_test.py",
    "optax/_src/factorized_test.py",
    "optax/_src/float64_test.py",
    "optax/_src/lookahead_test.py",
    "optax/_src/numerics_test.py",
    "optax/_src/sharding_test.py",
    "optax/_src/update_test.py",
    "optax/contrib/_complex_valued_test.py",
    "optax/transforms/_freezing_test.py",
    "optax/tree_utils/_random_test.py",
    "optax/tree_utils/_state_utils_test.py",
]


def test_quickstart_matches_jax():
  require("optax")
  assert_matches(script_output("optax_quickstart"), golden("optax_quickstart"),
                 rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("path", SAMPLE)
def test_optax_own_tests_pass_under_xjax(path, tmp_path):
  require("optax", "chex", "absl")
  assert_suite_file_passes("optax", path, tmp_path)
