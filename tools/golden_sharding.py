"""Records tests/golden/sharding.json: values and output specs of the sharding cases on JAX.

Run with real JAX on 8 forced CPU devices:
  XLA_FLAGS=--xla_force_host_platform_device_count=8 .venv-jax/bin/python tools/golden_sharding.py
"""
import json
import os
import sys

import jax
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "multidevice"))
import sharding_cases  # noqa: E402


def main():
  assert len(jax.devices()) == 8, "set XLA_FLAGS=--xla_force_host_platform_device_count=8"
  out = {}
  for name, fn in sharding_cases.cases().items():
    y = fn(jax)
    out[name] = {"spec": repr(y.sharding.spec), "value": np.asarray(y).tolist(),
                 "shape": list(y.shape)}
  out["jaxprs"] = {name: fn(jax) for name, fn in sharding_cases.jaxpr_cases().items()}
  errors = {}
  for name, fn in sharding_cases.error_cases().items():
    try:
      fn(jax)
    except Exception as e:  # noqa: BLE001 - recording whatever JAX raises
      errors[name] = [type(e).__name__, str(e)]
  out["errors"] = errors
  path = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "sharding.json")
  with open(path, "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
  print(f"wrote {len(out)} cases to {path}")


if __name__ == "__main__":
  main()
