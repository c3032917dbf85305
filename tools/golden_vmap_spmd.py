"""Records tests/golden/vmap_spmd.json: vmap(spmd_axis_name=...) and vmap(sum_match=...)
on JAX 0.10.2 (the cases are tests/multidevice/vmap_spmd_cases.py).

For each case: the printed jaxpr, the sharding specs of its sharding_constraint and
shard_map equations, the output value and the output sharding's spec, eagerly and
under jit; for each error case, the error class and message.

Run with real JAX on 8 forced CPU devices:
  XLA_FLAGS=--xla_force_host_platform_device_count=8 .venv-jax/bin/python tools/golden_vmap_spmd.py
"""
import json
import os
import sys

import jax
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "multidevice"))
import vmap_spmd_cases  # noqa: E402


def _spec(x):
  sharding = getattr(x, "sharding", None)
  return repr(sharding.spec) if hasattr(sharding, "spec") else None


def main():
  assert len(jax.devices()) == 8, "set XLA_FLAGS=--xla_force_host_platform_device_count=8"
  out = {"cases": {}, "errors": {}}
  for name, build in vmap_spmd_cases.cases().items():
    fn, args = build(jax)
    jaxpr = jax.make_jaxpr(fn)(*args)
    eager = jax.tree.leaves(fn(*args))
    jitted = jax.tree.leaves(jax.jit(fn)(*args))
    out["cases"][name] = {
        "jaxpr": str(jaxpr),
        "specs": vmap_spmd_cases.constraint_specs(jaxpr.jaxpr),
        "values": [np.asarray(y).tolist() for y in eager],
        "dtypes": [str(np.asarray(y).dtype) for y in eager],
        "eager_specs": [_spec(y) for y in eager],
        "jit_specs": [_spec(y) for y in jitted],
    }
  for name, build in vmap_spmd_cases.error_cases().items():
    fn, args = build(jax)
    try:
      jax.make_jaxpr(fn)(*args)
    except Exception as e:  # noqa: BLE001 - recording whatever JAX raises
      out["errors"][name] = [type(e).__name__, str(e).split("\n--------------------")[0]]
    else:
      out["errors"][name] = None
  path = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "vmap_spmd.json")
  with open(path, "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
  print(f"wrote {len(out['cases'])} cases, {len(out['errors'])} error cases to {path}")


if __name__ == "__main__":
  main()
