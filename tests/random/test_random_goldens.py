"""xjax.random against goldens recorded from real JAX 0.10.2 (tools/golden_random.py).

Every case runs in all four modes (x64 off/on, original/partitionable threefry
layout) and must match JAX bit for bit: same dtype, shape and bytes.
"""
import json
import re
import os
import warnings

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.config import config

import random_cases

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "goldens.json")) as _f:
  GOLDEN = json.load(_f)

# The gamma-family samplers run XLA's log/exp inside a rejection loop, and XLA's CPU
# code for those differs in the last bits between instruction sets (AVX2 vs AVX-512):
# real JAX 0.10.2 itself reproduces these goldens exactly on one machine and within
# 4 ulp on another, where xjax still equals JAX bit for bit. There the float results
# may differ from the recording by that much; everything else must match exactly.
ISA_DEPENDENT = {"gamma", "gamma_small_alpha", "loggamma", "beta", "dirichlet", "chisquare", "t",
                 "f", "f_broadcast"}
MAX_ULP = 4


def _params():
  out = []
  for mode, records in GOLDEN["modes"].items():
    x64 = mode.startswith("x64")
    ids = [c for c, _ in random_cases.cases(xjax, jnp, np, x64)]
    assert set(ids) == set(records), "goldens out of date: run tools/golden_random.py"
    # The fourth mode (x64 with the partitionable layout) repeats the other three's checks
    # in combination: it runs in the nightly tier, to keep CI under its time limit.
    marks = [pytest.mark.nightly] if mode == "x64-partitionable" else []
    for case_id in ids:
      out.append(pytest.param(mode, case_id, id=f"{mode}-{case_id}", marks=marks))
  return out


@pytest.mark.parametrize("mode,case_id", _params())
def test_random_matches_jax_bit_for_bit(mode, case_id):
  expected = GOLDEN["modes"][mode][case_id]
  x64 = mode.startswith("x64")
  with config.override("jax_enable_x64", x64), \
       config.override("jax_threefry_partitionable", mode.endswith("partitionable")):
    thunk = dict(random_cases.cases(xjax, jnp, np, x64))[case_id]
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      if "error" in expected:
        with pytest.raises(Exception) as info:
          thunk()
        assert type(info.value).__name__ == expected["error"]
        return
      value = np.asarray(thunk())
  assert value.dtype.name == expected["dtype"]
  assert list(value.shape) == expected["shape"]
  if case_id in ISA_DEPENDENT and value.dtype.kind == "f":
    assert _ulp_distance(value, expected["hex"]) <= MAX_ULP
  else:
    assert np.ascontiguousarray(value).tobytes().hex() == expected["hex"]


def _ulp_distance(value, golden_hex):
  """The largest distance, in units in the last place, between `value` and the golden bytes."""
  ints = {2: np.int16, 4: np.int32, 8: np.int64}[value.dtype.itemsize]
  golden = np.frombuffer(bytes.fromhex(golden_hex), value.dtype).reshape(value.shape)
  as_int = lambda a: np.ascontiguousarray(a).view(ints).astype(np.int64)
  return int(np.abs(as_int(value) - as_int(golden)).max(initial=0))


def _normalize(text):
  return re.sub(r" at 0x[0-9a-f]+", " at 0x...", text)


@pytest.mark.parametrize("case_id", sorted(GOLDEN["errors"]))
def test_random_error_matches_jax(case_id):
  expected = GOLDEN["errors"][case_id]
  thunk = dict(random_cases.error_cases(xjax, jnp, np))[case_id]
  with pytest.raises(Exception) as info:
    thunk()
  assert type(info.value).__name__ == expected["error"]
  assert _normalize(str(info.value)) == expected["message"]
