"""The ``xjax.tree`` namespace: short names for the pytree functions (mirrors ``jax.tree``).

Typed PRNG key arrays are leaves here, as in JAX (see `xjax.tree_util`).
"""
from xjax._src import tree_util as _tree_util
from xjax._src.tree_util import (
    static_field as static,
    tree_unflatten as unflatten,
)

all = _tree_util.public.tree_all
broadcast = _tree_util.public.tree_broadcast
flatten = _tree_util.public.tree_flatten
flatten_with_path = _tree_util.public.tree_flatten_with_path
leaves = _tree_util.public.tree_leaves
leaves_with_path = _tree_util.public.tree_leaves_with_path
map = _tree_util.public.tree_map
map_with_path = _tree_util.public.tree_map_with_path
reduce = _tree_util.public.tree_reduce
reduce_associative = _tree_util.public.tree_reduce_associative
structure = _tree_util.public.tree_structure
transpose = _tree_util.public.tree_transpose

__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
           "transpose", "unflatten"]
