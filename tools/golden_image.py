"""Records `jax.image` goldens (tests/golden/image_resize.json) with *real* JAX.

Run with the reference virtualenv (never with xjax):

    .venv-jax/bin/python tools/golden_image.py

The cases live in tests/image/image_cases.py and are shared with xjax's tests. x64 off
and on each run in a subprocess of their own (JAX's x64 flag must be set before
anything is traced). Arrays are recorded exactly, as dtype, shape and the hex of their
bytes; a case that raises is recorded as its error class and message.
"""
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES_DIR = os.path.join(REPO, "tests", "image")
OUT = os.path.join(REPO, "tests", "golden", "image_resize.json")


def record(x64: bool) -> dict:
  import jax
  import jax.numpy as jnp
  import numpy as np
  jax.config.update("jax_enable_x64", x64)
  sys.path.insert(0, CASES_DIR)
  import image_cases
  out = {}
  for case_id, thunk in image_cases.cases(jax, jnp, np, x64):
    assert case_id not in out, case_id
    try:
      value = np.asarray(thunk())
      out[case_id] = {"dtype": value.dtype.name, "shape": list(value.shape),
                      "hex": np.ascontiguousarray(value).tobytes().hex()}
    except Exception as e:
      out[case_id] = {"error": type(e).__name__, "message": str(e)}
  return out


def main():
  if len(sys.argv) == 2:  # child: one mode, printed as JSON
    print(json.dumps(record(sys.argv[1] == "x64")))
    return
  import jax
  result = {"jax_version": jax.__version__, "modes": {}}
  for mode in ("x32", "x64"):
    text = subprocess.run([sys.executable, __file__, mode], check=True, capture_output=True,
                          text=True).stdout
    result["modes"][mode] = json.loads(text)
  with open(OUT, "w") as f:
    json.dump(result, f, indent=1, sort_keys=True)
    f.write("\n")
  print(f"wrote {sum(map(len, result['modes'].values()))} cases to {OUT}")


if __name__ == "__main__":
  main()
