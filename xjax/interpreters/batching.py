"""Batching rules for `vmap` (mirrors `jax.interpreters.batching`).

`primitive_batchers`, `fancy_primitive_batchers` and `axis_primitive_batchers` are
views of the primitives' `batch` rule, each in one of JAX's signatures:

* ``primitive_batchers[p] = rule(batched_args, batch_dims, **params) -> (out, out_dims)``;
* ``fancy_primitive_batchers[p] = rule(axis_data, batched_args, batch_dims, **params)``,
  where ``axis_data.size`` and ``axis_data.name`` describe the mapped axis;
* ``axis_primitive_batchers[p] = rule(axis_size, axis_name, main, batched_args,
  batch_dims, **params)`` (`main` is always None).

A batch dimension is an int, or None for an operand that is not batched.
"""
from xjax._src.interpreters import batching as _batching
from xjax._src.interpreters.batching import (
    bdim_at_front as bdim_at_front,
    broadcast as broadcast,
    defbroadcasting as defbroadcasting,
    defvectorized as defvectorized,
    register_vmappable as register_vmappable,
    unregister_vmappable as unregister_vmappable,
)
from xjax._src.interpreters.registries import (
    axis_primitive_batchers as axis_primitive_batchers,
    fancy_primitive_batchers as fancy_primitive_batchers,
    primitive_batchers as primitive_batchers,
)


def defreducer(prim, ident):
  """Batching for a reduction primitive with an ``axes`` param (mirrors
  `jax.interpreters.batching.defreducer`): the batch axis is kept and the reduced
  axes shift past it. `ident` (the reduction's identity) is unused here: xjax has no
  ragged batching, where JAX needs it."""
  del ident
  _batching.defreducer(prim)

