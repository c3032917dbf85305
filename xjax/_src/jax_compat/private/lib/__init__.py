"""`jax._src.lib` under `xjax.install_as_jax()`: the jaxlib that xjax runs on, as JAX's module
describes it (``xla_client``, ``version``, ``jaxlib_extension_version``; no CUDA libraries are
loaded by xjax on CPU). It reaches jaxlib only through `xjax._src.backend`."""
from xjax._src import backend as _backend

xla_client = _backend.xla_client
version = tuple(int(x) for x in _backend.jaxlib_version().split(".")[:3])
version_str = _backend.jaxlib_version()
jaxlib_extension_version: int = getattr(xla_client, "_version", 0)
cuda_versions = None
