"""numpyro 0.22.0 on xjax: its scripts (tests/clients/scripts/numpyro_*.py, written for JAX)
run under `python -m xjax` and print what they printed under real JAX 0.10.2."""
import numpy as np
import pytest

from tests.clients.harness import assert_matches, golden, require, script_output

pytestmark = pytest.mark.slow  # every test here starts fresh Python processes


@pytest.fixture(autouse=True)
def _numpyro():
  require("numpyro")


def test_numpyro_nuts_linear_regression_matches_jax():
  """MCMC(NUTS) on a Bayesian linear regression. The random bits are JAX's, so the short
  10 + 10 step run follows JAX's trajectory to float rounding (it did exactly when
  recorded). Over the 200 + 200 step run, rounding differences between XLA programs
  (fusion, summation order) grow chaotically through the leapfrog steps and the chain
  decorrelates from JAX's (seen after ~30 steps), so the full run is compared as a
  statistical estimate: each posterior mean within half a posterior standard deviation of
  JAX's (the Monte Carlo error of the difference of two 200-sample chain means is about a
  tenth of one), each posterior standard deviation within 35% of JAX's (about 3.5 times the
  error of the difference of two such estimates, ~10%)."""
  out, ref = script_output("numpyro_nuts"), golden("numpyro_nuts")
  assert_matches(out["short_samples"], ref["short_samples"], rtol=1e-4, atol=1e-5)
  assert out["short_num_steps"] == ref["short_num_steps"]
  assert out["num_samples"] == ref["num_samples"] == 200
  assert out["divergences"] == ref["divergences"] == 0
  for name in ref["mean"]:
    mean, ref_mean = np.asarray(out["mean"][name]), np.asarray(ref["mean"][name])
    std, ref_std = np.asarray(out["std"][name]), np.asarray(ref["std"][name])
    np.testing.assert_array_less(np.abs(mean - ref_mean), 0.5 * ref_std, err_msg=name)
    np.testing.assert_allclose(std, ref_std, rtol=0.35, err_msg=name)


def test_numpyro_svi_autonormal_matches_jax():
  """SVI with an AutoNormal guide, Adam, Trace_ELBO, 300 steps, then Predictive. The
  optimisation contracts rounding differences, so losses, guide parameters and
  predictions agree closely."""
  assert_matches(script_output("numpyro_svi"), golden("numpyro_svi"), rtol=1e-4, atol=1e-5)


def test_numpyro_inspect_and_tracegraph_elbo_match_jax():
  """numpyro's provenance tracking (a walk over `jax.make_jaxpr`'s equations, through jit
  and cond) finds JAX's dependencies, and TraceGraph_ELBO's losses agree."""
  out, ref = script_output("numpyro_inspect"), golden("numpyro_inspect")
  for part in ("dependencies", "relations", "provenance"):  # names, compared exactly
    assert out[part] == ref[part], part
  assert_matches(out["tracegraph_losses"], ref["tracegraph_losses"], rtol=1e-4, atol=1e-5)
