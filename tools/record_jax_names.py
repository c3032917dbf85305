"""Records the public names of jax.numpy, jax.Array, jax.lax and the linalg/fft
namespaces and all of jax.scipy (real JAX 0.10.2)
into tests/golden/jax_public_names.json, for tests/test_api_names.py.

Run with the reference virtualenv (never with xjax's):

    .venv-jax/bin/python tools/record_jax_names.py
"""
import __future__
import importlib
import json
import os
import types

import jax
import jax.lax
import jax.lax.linalg
import jax.numpy
import jax.numpy.fft
import jax.numpy.linalg
import jax.example_libraries.optimizers
import jax.example_libraries.stax
import jax.flatten_util
import jax.image
import jax.nn
import jax.nn.initializers
import jax.scipy.fft
import jax.scipy.linalg
import jax.scipy.special
import jax.scipy.cluster.vq
import jax.scipy.integrate
import jax.scipy.interpolate
import jax.scipy.ndimage
import jax.scipy.optimize
import jax.scipy.signal
import jax.scipy.sparse.linalg
import jax.scipy.spatial.transform
import jax.scipy.stats

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests",
                   "golden", "jax_public_names.json")


def _public(obj) -> list[str]:
  # Not `from __future__ import annotations`'s feature object, which modules leak as a name.
  return sorted(n for n in dir(obj) if not n.startswith("_")
                and not isinstance(getattr(obj, n, None), __future__._Feature))


def main():
  names = {
      "jax_version": jax.__version__,
      "jax.numpy": _public(jax.numpy),
      "jax.Array": _public(jax.Array),
      "jax.lax": _public(jax.lax),
      "jax.lax.linalg": _public(jax.lax.linalg),
      "jax.numpy.linalg": _public(jax.numpy.linalg),
      "jax.numpy.fft": _public(jax.numpy.fft),
      "jax.scipy.linalg": _public(jax.scipy.linalg),
      "jax.scipy.fft": _public(jax.scipy.fft),
      "jax.nn": _public(jax.nn),
      "jax.nn.initializers": _public(jax.nn.initializers),
      "jax.image": _public(jax.image),
      "jax.example_libraries.stax": _public(jax.example_libraries.stax),
      "jax.example_libraries.optimizers": _public(jax.example_libraries.optimizers),
      "jax.flatten_util": _public(jax.flatten_util),
      "jax.scipy.special": _public(jax.scipy.special),
  }
  for name in ("scipy", "scipy.cluster", "scipy.cluster.vq", "scipy.integrate",
               "scipy.interpolate", "scipy.ndimage", "scipy.optimize", "scipy.signal",
               "scipy.sparse", "scipy.sparse.linalg", "scipy.spatial.transform", "scipy.stats"):
    names[f"jax.{name}"] = _public(importlib.import_module(f"jax.{name}"))
  # The support modules and the extension surface (issue 22).
  for name in ("stages", "monitoring", "api_util", "tree_util", "errors", "core",
               "custom_derivatives", "dtypes", "typing", "random", "sharding", "debug",
               "extend", "extend.core", "extend.core.primitives", "extend.backend",
               "extend.linear_util", "extend.mlir", "extend.random",
               "extend.source_info_util", "interpreters.ad", "interpreters.batching",
               "interpreters.partial_eval", "interpreters.mlir", "interpreters.xla"):
    names[f"jax.{name}"] = _public(importlib.import_module(f"jax.{name}"))
  # The top level's own names: its submodules appear in dir(jax) only once imported.
  names["jax"] = [n for n in _public(jax) if not isinstance(getattr(jax, n), types.ModuleType)]
  for name in names["jax.scipy.stats"]:
    member = getattr(jax.scipy.stats, name)
    if isinstance(member, types.ModuleType):
      names[f"jax.scipy.stats.{name}"] = _public(member)
  with open(OUT, "w") as f:
    json.dump(names, f, indent=1, sort_keys=True)
    f.write("\n")
  print(f"wrote {OUT}: " + ", ".join(f"{k} {len(v)}" for k, v in names.items()
                                      if isinstance(v, list)))


if __name__ == "__main__":
  main()
