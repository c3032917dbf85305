"""Submodules imported on first use, as JAX's lazy loader does (import time).

``__getattr__, __dir__ = lazy_loader.attach(globals(), {"linalg"})`` in a package's
``__init__`` makes ``package.linalg`` import ``package.linalg`` the first time it is read;
the import system then sets the attribute, so later reads cost nothing. `dir(package)`
lists the lazy names too.
"""
from __future__ import annotations

import importlib


def attach(package_globals: dict, submodules: set):
  """The module-level ``__getattr__`` and ``__dir__`` for `submodules` of the package whose
  globals are `package_globals` (PEP 562)."""
  package = package_globals["__name__"]

  def __getattr__(name):
    if name in submodules:
      return importlib.import_module(f"{package}.{name}")
    raise AttributeError(f"module {package!r} has no attribute {name!r}")

  def __dir__():
    return sorted({*package_globals, *submodules})

  return __getattr__, __dir__
