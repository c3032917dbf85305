"""SciPy's sparse namespace on xjax arrays (mirrors `jax.scipy.sparse`): only `linalg`."""
import importlib as _importlib


def __getattr__(name):
  if name == "linalg":
    return _importlib.import_module(f"{__name__}.linalg")
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
  return ["linalg"]
