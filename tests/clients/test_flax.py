"""flax 0.12.8 on xjax: a flax.linen MLP trained with optax through
flax.training.train_state, and a flax.nnx model (Linear, BatchNorm, Dropout) trained with
nnx.Optimizer under nnx.jit and nnx.value_and_grad, give JAX's losses and parameters
(scripts/flax_*.py against their goldens); and a sample of flax's own test files passes at
least as many tests under xjax as recorded in tests/golden/clients/flax_suite_counts.json
(`tools/golden_client_suites.py --jax-python PYTHON flax FILE ...`)."""

import pytest

from tests.clients.harness import assert_matches, golden, require, assert_suite_file_passes, script_output

pytestmark = pytest.mark.slow  # every test here starts fresh Python processes


def test_linen_mlp_trained_with_optax_matches_jax():
  require("flax", "optax")
  assert_matches(script_output("flax_linen_mlp"), golden("flax_linen_mlp"), rtol=1e-4,
                 atol=1e-5)


def test_nnx_mlp_trained_with_nnx_optimizer_matches_jax():
  require("flax", "optax")
  assert_matches(script_output("flax_nnx_mlp"), golden("flax_nnx_mlp"), rtol=1e-4, atol=1e-5)


# The files run here (about 2 minutes together); flax_suite_counts.json records more
# (linen_linear_test, 648 tests, takes 3 minutes alone).
SAMPLE = [
    "tests/struct_test.py",
    "tests/traverse_util_test.py",
    "tests/linen/linen_module_test.py",
    "tests/nnx/rngs_test.py",
    "tests/nnx/module_test.py",
    "tests/nnx/graph_utils_test.py",
]


@pytest.mark.parametrize("path", SAMPLE)
def test_flax_own_tests_pass_under_xjax(path, tmp_path):
  require("flax", "optax")
  assert_suite_file_passes("flax", path, tmp_path)
