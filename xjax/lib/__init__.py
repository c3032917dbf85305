"""The version of the jaxlib that runs xjax's programs (mirrors `jax.lib`, whose only public
name is `__version__`)."""
from xjax._src import backend as _backend

__version__ = _backend.jaxlib_version()
del _backend
