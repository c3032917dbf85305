"""Static type annotations for JAX programs (mirrors `jax.typing`).

* `ArrayLike`: a value that converts implicitly to an array: an `Array` (or a tracer), a
  NumPy array, a NumPy scalar, or a Python bool, int, float or complex. Not sequences, not
  strings. Usable with `isinstance` (a `typing.Union`).
* `DTypeLike`: a value that names a dtype: a string (``'float32'``), a scalar type
  (``np.float32``, ``float``), a `np.dtype`, or an object with a ``dtype`` attribute
  (``jnp.float32``).
"""
from xjax._src.typing import ArrayLike as ArrayLike, DTypeLike as DTypeLike
