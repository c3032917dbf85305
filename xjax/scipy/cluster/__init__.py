"""SciPy's cluster namespace on xjax arrays (mirrors `jax.scipy.cluster`): only `vq`."""
import importlib as _importlib


def __getattr__(name):
  if name == "vq":
    return _importlib.import_module(f"{__name__}.vq")
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
  return ["vq"]
