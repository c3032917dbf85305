"""Mutable array references: `new_ref`, `Ref`, indexed reads and writes (mirrors `jax.ref`)."""
from xjax._src.state.primitives import empty_ref as empty_ref
from xjax._src.state.primitives import free_ref as free_ref
from xjax._src.state.primitives import freeze as freeze
from xjax._src.state.primitives import new_ref as new_ref
from xjax._src.state.primitives import ref_addupdate as addupdate
from xjax._src.state.primitives import ref_get as get
from xjax._src.state.primitives import ref_set as set  # noqa: A001  (JAX's name)
from xjax._src.state.primitives import ref_swap as swap
from xjax._src.state.types import AbstractRef as AbstractRef
from xjax._src.state.types import Ref as Ref
from xjax._src.state.primitives import install_tracer_methods as _install_tracer_methods

_install_tracer_methods()

__all__ = ["AbstractRef", "Ref", "addupdate", "empty_ref", "free_ref", "freeze", "get",
           "new_ref", "set", "swap"]
