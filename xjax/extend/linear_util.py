"""Wrapped functions with stacked transformations (mirrors `jax.extend.linear_util`)."""
from xjax._src.linear_util import (
    StoreException as StoreException,
    WrappedFun as WrappedFun,
    cache as cache,
    merge_linear_aux as merge_linear_aux,
    transformation as transformation,
    transformation2 as transformation2,
    transformation_with_aux as transformation_with_aux,
    transformation_with_aux2 as transformation_with_aux2,
    wrap_init as wrap_init,
)

from collections.abc import Callable as Callable  # noqa: E402 - JAX's module re-exports it
