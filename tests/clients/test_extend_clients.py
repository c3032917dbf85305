"""The extension API (`jax.extend`, `jax.interpreters`) as the client libraries use it:
tests/clients/scripts/extend_primitives.py (written for JAX) runs under `python -m xjax`
and prints what it printed under real JAX 0.10.2."""
import pytest

from tests.clients.harness import assert_matches, golden, require, script_output

pytestmark = pytest.mark.slow  # every test here starts fresh Python processes


def test_library_primitives_and_rules_match_jax():
  """A primitive with JVP, transpose, batching and lower_fun rules from JAX's tables;
  equinox.internal's primitives (noinline, unvmap_*, nondifferentiable_backward,
  checkpointed while_loop/scan, finalise_fn); numpyro's provenance tracing; flax's
  partial evaluation by shape, lazy_init and nn.scan's broadcast variables."""
  require("equinox", "numpyro", "flax")
  assert_matches(script_output("extend_primitives"), golden("extend_primitives"))
