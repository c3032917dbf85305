"""Records tests/golden/explicit_sharding.json: sharding in types on JAX 0.10.2.

Types, values and specs of arrays made with out_sharding=, device=NamedSharding,
reshard, auto_axes/explicit_axes; types seen while tracing; jaxprs; errors.
Run with real JAX on 8 forced CPU devices:
  XLA_FLAGS=--xla_force_host_platform_device_count=8 \\
      .venv-jax/bin/python tools/golden_explicit_sharding.py
"""
import json
import os
import sys

import jax
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "multidevice"))
import explicit_sharding_cases as cases  # noqa: E402


def _array(y):
  return {"type": str(jax.typeof(y)), "spec": repr(y.sharding.spec),
          "value": np.asarray(y).tolist()}


def main():
  assert len(jax.devices()) == 8, "set XLA_FLAGS=--xla_force_host_platform_device_count=8"
  out = {"arrays": {n: _array(f(jax)) for n, f in cases.array_cases().items()},
         "typeof": {n: f(jax) for n, f in cases.typeof_cases().items()},
         "jaxprs": {n: f(jax) for n, f in cases.jaxpr_cases().items()}}
  errors = {}
  for name, fn in cases.error_cases().items():
    try:
      fn(jax)
      errors[name] = None
    except Exception as e:  # noqa: BLE001 - recording whatever JAX raises
      errors[name] = [type(e).__name__, str(e)]
  out["errors"] = errors
  y, seen = cases.auto_mesh_cases()["explicit_axes"](jax)
  out["auto_mesh"] = {"explicit_axes": {**_array(y), "inside": seen}}
  path = os.path.join(os.path.dirname(__file__), "..", "tests", "golden",
                      "explicit_sharding.json")
  with open(path, "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
  print(f"wrote {path}")


if __name__ == "__main__":
  main()
