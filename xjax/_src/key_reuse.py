"""Key-reuse checking (`jax_debug_key_reuse`, `xjax.debug_key_reuse`): eager part.

A typed PRNG key (`xjax.random.key`) is consumed by `random_bits` and
`random_split`; passing a consumed key to them again raises JAX's
KeyReuseError. Raw uint32 keys (`random.PRNGKey`) are not tracked, as in JAX.
`random.clone` gives a fresh, unconsumed key over the same data.

Not yet done (see the issue): keys passed to jit-compiled functions (JAX's
"Previously-consumed key passed to jit-compiled function at index i") and
the static jaxpr analysis JAX runs under jit ("In jit, argument 0 is already
consumed."); random functions that xjax jits (normal, uniform, ...) therefore
are not checked yet.
"""
from __future__ import annotations

import weakref

from xjax._src import errors

_consumed: dict[int, weakref.ref] = {}


def _forget(key_id: int):
  return lambda _: _consumed.pop(key_id, None)


def is_consumed(key) -> bool:
  ref = _consumed.get(id(key))
  return ref is not None and ref() is key


def consume(key, where: str, index: int = 0) -> None:
  """Marks the typed key array `key` consumed by `where`; raises if it already was."""
  if is_consumed(key):
    raise errors.KeyReuseError(f"Previously-consumed key passed to {where} at index {index}")
  _consumed[id(key)] = weakref.ref(key, _forget(id(key)))
