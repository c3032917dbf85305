"""Sorting: sort and argsort over `lax.sort` (non-inline jits, as in JAX)."""
from __future__ import annotations

import numpy as np

from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax import sorting as lax_sorting
from xjax._src.lax import structural as lax_structural
from xjax._src.numpy import util


def _prepare(name, a, axis, kind, order):
  arr = util.ensure_arraylike(name, a)
  if kind is not None:
    raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or "
                    "stable=False to specify sort stability.")
  if order is not None:
    raise TypeError(f"'order' argument to {name} is not supported.")
  if axis is None:
    arr = lax_structural.reshape(arr, (util.aval_of(arr).size,))
    axis = 0
  return arr, util.canonicalize_axis(axis, util.ndim(arr))


@jit(static_argnames=("axis", "kind", "order", "stable", "descending"))
def sort(a, axis: int | None = -1, *, kind=None, order=None, stable: bool = True,
         descending: bool = False):
  """`a` sorted along `axis` (flattened when None).

  NaNs sort to the end; complex values sort by real, then imaginary part.

  Args:
    a: an array.
    axis: the axis to sort along.
    kind, order: unsupported (use `stable`).
    stable: keep the order of equal elements.
    descending: sort from largest to smallest.

  Returns:
    The sorted array.

  Mirrors `jax.numpy.sort`.
  """
  arr, dim = _prepare("sort", a, axis, kind, order)
  result = lax_sorting.sort(arr, dimension=dim, is_stable=stable)
  return lax_structural.rev(result, (dim,)) if descending else result


@jit(static_argnames=("axis", "kind", "order", "stable", "descending", "dtype"))
def argsort(a, axis: int | None = -1, *, kind=None, order=None, stable: bool = True,
            descending: bool = False, dtype=None):
  """The indices that sort `a` along `axis` (of the flattened array when None).

  Args:
    a: an array.
    axis: the axis to sort along.
    kind, order: unsupported (use `stable`).
    stable: equal elements keep their order.
    descending: sort from largest to smallest.
    dtype: the index dtype (default: the default integer dtype).

  Returns:
    An integer array of a's shape (1-D when axis is None).

  Mirrors `jax.numpy.argsort`.
  """
  arr, dim = _prepare("argsort", a, axis, kind, order)
  if dtype is not None:
    idx_dtype = dtypes.check_user_dtype_supported(dtype, "argsort")
  elif util.shape(arr)[dim] >= 2 ** 31:
    idx_dtype = np.dtype(np.int64)
  else:
    idx_dtype = dtypes.default_int_dtype()
  iota = lax_structural.broadcasted_iota(idx_dtype, util.shape(arr), dim)
  if descending and stable:
    # Reversed first, so that equal elements keep their order after the final reversal.
    arr = lax_structural.rev(arr, (dim,))
    iota = lax_structural.rev(iota, (dim,))
  _, indices = lax_sorting.sort_key_val(arr, iota, dimension=dim, is_stable=stable)
  return lax_structural.rev(indices, (dim,)) if descending else indices
