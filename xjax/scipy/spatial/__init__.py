"""SciPy's spatial namespace on xjax arrays (mirrors `jax.scipy.spatial`): only `transform`."""
import importlib as _importlib


def __getattr__(name):
  if name == "transform":
    return _importlib.import_module(f"{__name__}.transform")
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
  return ["transform"]
