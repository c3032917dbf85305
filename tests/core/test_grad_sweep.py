"""Gradients at kinks, ties, zeros and infinities against real JAX 0.10.2's
(tests/golden/grad_sweep.json, recorded by tools/grad_sweep_cases.py).

Where JAX defines a derivative by a custom JVP rule (relu'(0) = 0, logaddexp at ties,
i0'(0) = 0, frexp), differentiating the primitives gives another value: this sweep found
logaddexp's (softplus'(0) was 0), relu6's, i0's and frexp's. Each case must match JAX's
gradient (NaN where JAX's is NaN, the same error class where JAX raises), except the few
listed in KNOWN_DIFFERENT with the reason.
"""
import json
import os
import sys

import numpy as np
import pytest

import xjax

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
import grad_sweep_cases  # noqa: E402

with open(grad_sweep_cases.GOLDEN) as _f:
  GOLDEN = json.load(_f)

# (case, point) -> why xjax's gradient differs from JAX's.
KNOWN_DIFFERENT = {
    ("i0", 1e-30): "xjax's series gives -6e-8 (rounding) where JAX's exp(|x|) i0e(|x|) gives 0",
    ("ldexp", 0.0): "JAX gives 1 for d/dx ldexp(x, 2) at 0 (its bit-level rule); xjax 4",
    ("ldexp", float("inf")): "as at 0: JAX 1, xjax 4",
    ("ldexp", -float("inf")): "as at 0: JAX 1, xjax 4",
    ("ldexp", 1e-30): "JAX 4.00001 (its rule's rounding), xjax 4",
    ("spence", -1.0): "at spence's argument 1 JAX's rule gives 0, xjax NaN (0/0); the limit is -1",
}


def test_recorded_under_jax_0_10_2():
  assert GOLDEN["jax_version"] == "0.10.2" and GOLDEN["points"] == grad_sweep_cases.POINTS


@pytest.mark.parametrize("name", sorted(GOLDEN["gradients"]))
def test_gradient_matches_jax(name):
  got = grad_sweep_cases.gradients(xjax, {name})
  for point, want, have in zip(GOLDEN["points"], GOLDEN["gradients"][name], got[name]):
    if (name, point) in KNOWN_DIFFERENT:
      assert have != want or isinstance(want, str), f"{name} at {point} now matches: unlist it"
      continue
    if isinstance(want, str) or isinstance(have, str):
      assert have == want, f"{name} at {point}: {have} (JAX {want})"
    else:
      np.testing.assert_allclose(have, want, rtol=2e-5, atol=1e-6,
                                 err_msg=f"grad of {name} at {point}")
