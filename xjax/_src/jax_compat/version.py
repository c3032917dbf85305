"""`jax.version` under `xjax.install_as_jax()`: the JAX release whose API xjax mirrors.

JAX's version module has `__version__`, `_version` and `__version_info__`, and the minimum
jaxlib it supports; libraries compare them to choose code paths.
"""
from xjax._src.version import JAX_VERSION

__version__ = _version = JAX_VERSION
__version_info__ = tuple(int(p) for p in JAX_VERSION.split("."))
_minimum_jaxlib_version = JAX_VERSION
_minimum_jaxlib_version_info = __version_info__
