"""`jax._src.compiler` under `xjax.install_as_jax()`.

chex's `restrict_backends` replaces `backend_compile_and_load` here (with ``setattr``) by a
wrapper that refuses compilation for some platforms, and restores it afterwards. The name is
xjax's own compile hook, `xjax._src.backend.backend_compile_and_load`, through which every
XLA compilation passes: reading or assigning it on this module reads or assigns it there, so
the replacement takes effect. No other name of JAX's private compiler module is provided.
"""
import sys
import types

from xjax._src import backend as _backend

_FORWARDED = ("backend_compile_and_load",)


class _CompilerModule(types.ModuleType):

  def __getattr__(self, name):
    if name in _FORWARDED:
      return getattr(_backend, name)
    raise AttributeError(f"module 'jax._src.compiler' has no attribute {name!r} (xjax "
                         "provides only backend_compile_and_load)")

  def __setattr__(self, name, value):
    if name in _FORWARDED:
      setattr(_backend, name, value)
    else:
      super().__setattr__(name, value)

  def __delattr__(self, name):
    if name in _FORWARDED:
      raise AttributeError(f"cannot delete jax._src.compiler.{name}")
    super().__delattr__(name)


sys.modules[__name__].__class__ = _CompilerModule
