"""`Slice` and `ds`: a slice given by a start and a size, where the start may be traced.

``x[jax.ds(i, 2)]`` is ``x[i:i + 2]`` for an `i` that is only known at run time (under
`jit`); the size stays static, so the result's shape is known when tracing. `jnp` indexing
computes it with `lax.dynamic_slice` (whose start is clamped so the window stays inside the
array), or a gather.
"""
from __future__ import annotations

import dataclasses
import operator
from typing import Any

import numpy as np

from xjax._src import tree_util


def _is_static(x) -> bool:
  return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


@tree_util.register_pytree_node_class
@dataclasses.dataclass(slots=True)
class Slice:
  """A slice of `size` elements from `start`, every `stride`-th one.

  `start` (and in principle `size`) may be a traced scalar; `stride` is a static int >= 0.
  As a pytree, a static start or size is metadata and a traced one is a leaf.

  Mirrors `jax._src.indexing.Slice`.
  """

  start: Any
  size: Any
  stride: int = 1

  def __post_init__(self):
    if self.stride < 0:
      raise ValueError("`stride` must be >= 0.")

  @property
  def is_dynamic_start(self) -> bool:
    """Whether the start is a traced or array value rather than a Python/NumPy int."""
    return not _is_static(self.start)

  @property
  def is_dynamic_size(self) -> bool:
    """Whether the size is a traced or array value rather than a Python/NumPy int."""
    return not _is_static(self.size)

  def tree_flatten(self):
    children = (self.start if self.is_dynamic_start else None,
                self.size if self.is_dynamic_size else None)
    aux = (None if self.is_dynamic_start else self.start,
           None if self.is_dynamic_size else self.size, self.stride)
    return children, aux

  @classmethod
  def tree_unflatten(cls, aux_data, children) -> Slice:
    start, size = (c if c is not None else a for c, a in zip(children, aux_data[:2]))
    return cls(start, size, aux_data[2])

  @classmethod
  def from_slice(cls, slc: slice, size: int) -> Slice:
    """The `Slice` selecting what the static ``slc`` selects from an axis of `size`.

    Raises:
      ValueError: the slice's step is below 1.
    """
    start, stop, step = slc.indices(operator.index(size))
    if step < 1:
      raise ValueError(f"slice must have a step >= 1 (found: {step})")
    return cls(start, len(range(start, stop, step)), step)


def dslice(start, size=None, stride: int | None = None) -> slice | Slice:
  """A `Slice` from a start and a size, read like the builtin `slice`.

  ``dslice(None)`` is ``:``, ``dslice(j)`` is ``:j``, ``dslice(i, j)`` is ``i:i+j`` and
  ``dslice(i, j, stride)`` is ``i:i+j*stride:stride`` taking `j` elements.

  Args:
    start: the first index (an int or traced integer scalar), or None.
    size: the number of elements (static), or None (then `start` is the size from 0).
    stride: a static int step (1 when None).

  Returns:
    ``slice(None)`` when `start` is None, else a `Slice`.

  Raises:
    ValueError: `stride` is not a static int.

  >>> import xjax, xjax.numpy as jnp
  >>> f = xjax.jit(lambda x, i: x[xjax.ds(i, 2)])
  >>> f(jnp.arange(10), 4)
  Array([4, 5], dtype=int32)

  Mirrors `jax.ds` (`jax._src.indexing.dslice`).
  """
  if start is None:
    return slice(None)
  if stride is None:
    stride = 1
  if not isinstance(stride, int):
    raise ValueError("Non-static stride in `dslice`")
  if size is None:
    start, size = 0, start
  return Slice(start, size, stride)


ds = dslice
