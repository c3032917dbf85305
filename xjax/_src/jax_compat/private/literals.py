"""`jax._src.literals` under `xjax.install_as_jax()`: `TypedNdArray`, a NumPy array that carries
the JAX type it stands for (its aval, including the weak type), as JAX's host constants do."""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src.lax import elementwise


class TypedNdArray(elementwise._WeakConst):
  """A host NumPy array with a JAX type: `aval` (shape, dtype and weak type) travels with it,
  so a weakly typed constant stays weak when it enters a computation.

  Args (constructor):
    val: the array.
    aval: its ShapedArray; by default the array's own shape and dtype (not canonicalized,
      as JAX's: it is kept whatever jax_enable_x64 says), not weak.

  Mirrors `jax._src.literals.TypedNdArray`.
  """

  def __new__(cls, val, aval: core.ShapedArray | None = None):
    val = np.asarray(val)
    if aval is None:
      aval = core.ShapedArray(val.shape, val.dtype)
    return super().__new__(cls, val, aval)

  @property
  def aval(self) -> core.ShapedArray:
    return elementwise._weak_const_aval(self)

  @property
  def weak_type(self) -> bool:
    return self.aval.weak_type

  @property
  def val(self) -> np.ndarray:
    return np.asarray(self)
