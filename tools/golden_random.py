"""Records PRNG goldens (tests/random/goldens.json) with *real* JAX.

Run with the reference virtualenv (never with xjax):

    /work/venvs/jaxref/bin/python tools/golden_random.py

The cases live in tests/random/random_cases.py and are shared with xjax's
tests. Each mode (x64 off/on, times both threefry stream layouts) runs in a
subprocess of its own, since JAX's x64 flag must be set before anything is
traced. Arrays are recorded exactly, as dtype, shape and the hex of their bytes.
"""
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES_DIR = os.path.join(REPO, "tests", "random")
OUT = os.path.join(CASES_DIR, "goldens.json")
MODES = {f"{'x64' if x64 else 'x32'}-{'partitionable' if p else 'original'}": (x64, p)
         for x64 in (False, True) for p in (False, True)}


def record(x64: bool, partitionable: bool) -> dict:
  import jax
  import jax.numpy as jnp
  import numpy as np
  jax.config.update("jax_enable_x64", x64)
  jax.config.update("jax_threefry_partitionable", partitionable)
  sys.path.insert(0, CASES_DIR)
  import random_cases
  out = {}
  for case_id, thunk in random_cases.cases(jax, jnp, np, x64):
    assert case_id not in out, case_id
    try:
      value = np.asarray(thunk())
      out[case_id] = {"dtype": value.dtype.name, "shape": list(value.shape),
                      "hex": np.ascontiguousarray(value).tobytes().hex()}
    except Exception as e:  # recorded: xjax must raise the same class
      out[case_id] = {"error": type(e).__name__, "message": str(e)}
  return out


def record_errors() -> dict:
  import jax
  import jax.numpy as jnp
  import numpy as np
  sys.path.insert(0, CASES_DIR)
  import random_cases
  out = {}
  for case_id, thunk in random_cases.error_cases(jax, jnp, np):
    try:
      thunk()
    except Exception as e:
      out[case_id] = {"error": type(e).__name__, "message": _normalize(str(e))}
    else:
      raise AssertionError(f"{case_id} did not raise")
  return out


def _normalize(text: str) -> str:
  """Hides object addresses (``at 0x7f...``), which differ from run to run."""
  import re
  return re.sub(r" at 0x[0-9a-f]+", " at 0x...", text)


def main():
  if len(sys.argv) == 3:  # a child: one mode, JSON on stdout
    print(json.dumps(record(sys.argv[1] == "1", sys.argv[2] == "1")))
    return
  if sys.argv[1:] == ["errors"]:  # a child: the error cases
    print(json.dumps(record_errors()))
    return
  import jax
  result = {"jax_version": jax.__version__, "modes": {}}
  result["errors"] = json.loads(subprocess.run(
      [sys.executable, __file__, "errors"], check=True, capture_output=True, text=True).stdout)
  for name, (x64, p) in MODES.items():
    text = subprocess.run([sys.executable, __file__, str(int(x64)), str(int(p))], check=True,
                          capture_output=True, text=True).stdout
    result["modes"][name] = json.loads(text)
  with open(OUT, "w") as f:
    json.dump(result, f, indent=0, sort_keys=True)
    f.write("\n")
  print(f"wrote {OUT}: {sum(len(m) for m in result['modes'].values())} records")


if __name__ == "__main__":
  main()
