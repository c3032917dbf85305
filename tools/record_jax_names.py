"""Records the public names of jax.numpy, jax.Array and jax.lax (real JAX 0.10.2)
into tests/golden/jax_public_names.json, for tests/test_api_names.py.

Run with the reference virtualenv (never with xjax's):

    .venv-jax/bin/python tools/record_jax_names.py
"""
import json
import os

import jax
import jax.lax
import jax.numpy

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests",
                   "golden", "jax_public_names.json")


def _public(obj) -> list[str]:
  return sorted(n for n in dir(obj) if not n.startswith("_"))


def main():
  names = {
      "jax_version": jax.__version__,
      "jax.numpy": _public(jax.numpy),
      "jax.Array": _public(jax.Array),
      "jax.lax": _public(jax.lax),
  }
  with open(OUT, "w") as f:
    json.dump(names, f, indent=1, sort_keys=True)
    f.write("\n")
  print(f"wrote {OUT}: " + ", ".join(f"{k} {len(v)}" for k, v in names.items()
                                      if isinstance(v, list)))


if __name__ == "__main__":
  main()
