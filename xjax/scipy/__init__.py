"""SciPy's API on xjax arrays (mirrors `jax.scipy`): submodules load on first use."""
import importlib as _importlib

_SUBMODULES = ("cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize",
               "signal", "sparse", "spatial", "special", "stats")


def __getattr__(name):
  if name in _SUBMODULES:
    return _importlib.import_module(f"{__name__}.{name}")
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
  return sorted(_SUBMODULES)
