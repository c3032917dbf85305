"""xjax's public names against JAX 0.10.2's (recorded by tools/record_jax_names.py).

A name JAX has and xjax lacks fails here unless it is listed in KNOWN_MISSING,
and a listed name that xjax has gained fails too, so the list only shrinks.
The gaps, each owned by a later issue: the parallel collectives and sharding
names (issues 18-19).
"""
import importlib
import json
import os

import pytest

import xjax

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "golden", "jax_public_names.json")) as f:
  JAX_NAMES = json.load(f)

# Namespaces not listed here must have every JAX name.
KNOWN_MISSING = {
    "jax.lax": set("""
    precv psend ragged_all_to_all ragged_all_to_all_p
    """.split()),
}


def _xjax_namespace(key):
  """The xjax object mirroring JAX's namespace `key` ('jax.numpy' -> xjax.numpy)."""
  if key == "jax.Array":
    return xjax.Array
  try:
    return importlib.import_module("x" + key)
  except ImportError:
    return None


NAMESPACES = sorted(k for k in JAX_NAMES if k.startswith("jax."))


@pytest.mark.parametrize("key", NAMESPACES)
def test_public_names_match_jax(key):
  module = _xjax_namespace(key)
  missing = set(JAX_NAMES[key]) - set(dir(module) if module is not None else ())
  known = KNOWN_MISSING.get(key, set())
  assert not missing - known, (
      f"{key} names JAX 0.10.2 has and xjax lacks: {sorted(missing - known)}")
  assert not known - missing, f"now present, remove from KNOWN_MISSING: {sorted(known - missing)}"


def test_recorded_names_are_jax_0_10_2():
  assert JAX_NAMES["jax_version"] == "0.10.2"
  assert len(JAX_NAMES["jax.numpy"]) > 400
