"""The annotation types of `xjax.typing` and the helpers behind them (mirrors
`jax._src.typing`)."""
from __future__ import annotations

import typing
from typing import Any, Protocol, Sequence, Union

import numpy as np

from xjax._src.array import Array

DType = np.dtype


@typing.runtime_checkable
class SupportsDType(Protocol):
  """An object with a ``dtype`` attribute (``jnp.float32``, an array)."""

  @property
  def dtype(self, /) -> DType: ...


# Scalars JAX converts implicitly: NumPy scalar types and Python's numeric types.
StaticScalar = Union[np.bool_, np.number, bool, int, float, complex]
StaticScalar.__doc__ = "Type annotation for JAX-compatible static scalars."

ArrayLike = Union[Array, np.ndarray, StaticScalar]
ArrayLike.__doc__ = "Type annotation for JAX array-like objects."

DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]

DimSize = Union[int, Any]
Shape = Sequence[DimSize]
