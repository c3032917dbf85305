"""Public pytree utilities (mirrors ``jax.tree_util``).

The flattening functions are those of `xjax._src.tree_util.public`: typed PRNG key arrays
are leaves here, as in JAX.
"""
from xjax._src import tree_util as _tree_util
from xjax._src.tree_util import (
    DictKey as DictKey,
    FlattenedIndexKey as FlattenedIndexKey,
    GetAttrKey as GetAttrKey,
    KeyEntry as KeyEntry,
    KeyPath as KeyPath,
    Partial as Partial,
    PyTreeDef as PyTreeDef,
    SequenceKey as SequenceKey,
    default_registry as default_registry,
    keystr as keystr,
    register_dataclass as register_dataclass,
    register_pytree_node as register_pytree_node,
    register_pytree_node_class as register_pytree_node_class,
    register_pytree_with_keys as register_pytree_with_keys,
    register_pytree_with_keys_class as register_pytree_with_keys_class,
    register_static as register_static,
    tree_unflatten as tree_unflatten,
    treedef_children as treedef_children,
    treedef_is_leaf as treedef_is_leaf,
    treedef_tuple as treedef_tuple,
)

_public = _tree_util.public
all_leaves = _public.all_leaves
flatten_one_level = _public.flatten_one_level
flatten_one_level_with_keys = _public.flatten_one_level_with_keys
is_tree_node = _public.is_tree_node
tree_all = _public.tree_all
tree_broadcast = _public.tree_broadcast
tree_flatten = _public.tree_flatten
tree_flatten_with_path = _public.tree_flatten_with_path
tree_leaves = _public.tree_leaves
tree_leaves_with_path = _public.tree_leaves_with_path
tree_map = _public.tree_map
tree_map_with_path = _public.tree_map_with_path
tree_reduce = _public.tree_reduce
tree_structure = _public.tree_structure
tree_transpose = _public.tree_transpose
tree_reduce_associative = _public.tree_reduce_associative
