"""The `platform_index` primitive: which of several platform groups we lower for.

``platform_index[platforms=(('cpu', 'tpu'), ('cuda',), None)]`` takes no
operands and is the int32 position of the group holding the lowering
platform (`None` is a default group matching every platform). The choice is
made when the jaxpr is lowered, not when it is traced: the lowering rule emits
that position as a constant, and a platform no group holds is JAX's
NotImplementedError. `lax.platform_dependent` feeds it to a `cond` whose
``branches_platforms`` param names the same groups, so that the cond's
lowering keeps only the branch chosen for the platform.

xjax lowers for its backend's platform, named as in JAX's lowering rules:
'cpu', 'cuda', 'rocm', 'tpu' (a 'gpu' client is 'cuda' or 'rocm' by its
platform version).
"""
from __future__ import annotations

import numpy as np

from xjax._src import backend
from xjax._src import core

# Client platforms that stand for one of several lowering platforms.
_ALIASES = {"gpu": ("cuda", "rocm", "oneapi")}


def canonical_platform(name: str, version: str = "") -> str:
  """The lowering platform of a client named `name` ('gpu' becomes 'cuda' or 'rocm')."""
  name = name.lower()
  choices = _ALIASES.get(name)
  if choices is None:
    return name
  version = version.lower()
  return next((p for p in choices if p in version), choices[0])


def lowering_platform() -> str:
  """The platform xjax lowers for: its backend's, canonical."""
  client = backend.client()
  return canonical_platform(client.platform, client.platform_version)


def branch_for_platform(platforms, platform: str) -> int:
  """The index of the group of `platforms` that holds `platform` (a `None` group holds all).

  Raises:
    NotImplementedError: no group holds `platform` (JAX's message).
  """
  for i, group in enumerate(platforms):
    if group is not None and platform in group:
      return i
  for i, group in enumerate(platforms):
    if group is None:
      return i
  raise NotImplementedError(f"MLIR translation rule for primitive "
                            f"'platform_index(platforms={platforms})' not found for "
                            f"platform {platform}")


platform_index_p = core.Primitive("platform_index")


@platform_index_p.def_abstract_eval
def _platform_index_abstract_eval(*, platforms):
  return core.ShapedArray((), np.dtype(np.int32))


@platform_index_p.def_lowering
def _platform_index_lowering(ctx, *, platforms):
  return ctx.constant(np.int32(branch_for_platform(platforms, lowering_platform())))
