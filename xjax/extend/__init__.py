"""Modules for libraries that extend JAX (mirrors `jax.extend`): define primitives and
their rules (`core`, with `jax.interpreters`), wrap functions for transformation
(`linear_util`), query the backend (`backend`), define PRNGs (`random`), and locate user
code (`source_info_util`). As in JAX, this API comes with no compatibility guarantee."""
from xjax.extend import (
    backend as backend,
    core as core,
    linear_util as linear_util,
    mlir as mlir,
    random as random,
    source_info_util as source_info_util,
)
