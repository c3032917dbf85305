"""stop_gradient: the identity, with zero derivative."""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import tree_util
from xjax._src.interpreters.ad import stop_gradient_p


def stop_gradient(x):
  """`x` unchanged, but with zero derivative (applied to every leaf of a pytree).

  Integer and boolean leaves are returned as they are.

  Mirrors `jax.lax.stop_gradient`.
  """
  def stop(leaf):
    if dtypes.issubdtype(core.get_aval(leaf).dtype, np.inexact):
      return stop_gradient_p.bind(leaf)
    return leaf
  return tree_util.tree_map(stop, x)
