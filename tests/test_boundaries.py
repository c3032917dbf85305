"""The package's boundary rules: no `jax` import, jaxlib only in the backend adapter."""
import os
import re
import subprocess
import sys

import pytest

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "xjax")
_IMPORT_JAX = re.compile(r"^\s*(import jax(\s|$|\.|,)|from jax(\s|\.))", re.M)
_IMPORT_JAXLIB = re.compile(r"^\s*(import jaxlib|from jaxlib)", re.M)


def _sources():
  for root, _, files in os.walk(PACKAGE):
    for name in files:
      if name.endswith(".py"):
        path = os.path.join(root, name)
        with open(path) as f:
          yield os.path.relpath(path, os.path.dirname(PACKAGE)), f.read()


def test_package_never_imports_jax():
  offenders = [p for p, text in _sources() if _IMPORT_JAX.search(text)]
  assert offenders == []


def test_only_backend_imports_jaxlib():
  offenders = [p for p, text in _sources() if _IMPORT_JAXLIB.search(text)]
  assert offenders == [os.path.join("xjax", "_src", "backend.py")]


@pytest.mark.slow
def test_jax_not_loaded_after_computing():
  code = ("import sys, xjax, xjax.numpy as jnp\n"
          "x = xjax.jit(lambda a: a * 2)(jnp.arange(3.0) if hasattr(jnp, 'arange') else jnp.ones(3))\n"
          "x.block_until_ready(); print(float(x.sum()) if hasattr(x, 'sum') else 0)\n"
          "assert 'jax' not in sys.modules, 'jax was imported'\n")
  subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
def test_import_prints_nothing():
  out = subprocess.run([sys.executable, "-c", "import xjax.numpy as jnp; jnp.ones(2).block_until_ready()"],
                       capture_output=True, text=True, check=True)
  assert out.stdout == "" and out.stderr == ""
