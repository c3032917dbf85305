"""`jax._src.dtypes` under `xjax.install_as_jax()`: the private dtype names client libraries
import (equinox's rotary embeddings catch `TypePromotionError`)."""
from xjax._src.dtypes import TypePromotionError as TypePromotionError
# flax's fp8 layers subclass `extended` and `ExtendedDType` (a dtype with lowering rules)
# and read `finfo`, `supports_inf` and the annotation `DType`.
from xjax._src.dtypes import (  # noqa: E402
    ExtendedDType as ExtendedDType,
    extended as extended,
    finfo as finfo,
    issubdtype as issubdtype,
    supports_inf as supports_inf,
)
from xjax._src.typing import DType as DType  # noqa: E402
# JAX's tests canonicalize NumPy index arrays with `dtypes.canonicalize_value`.
from xjax._src.core import canonicalize_value as canonicalize_value  # noqa: E402
# JAX's name for the dtypes of Python scalars before canonicalization.
from xjax._src.dtypes import (  # noqa: E402
    python_scalar_dtypes as python_scalar_types_to_dtypes,
)
from xjax._src import dtypes as _dtypes  # noqa: E402


def dtype(x):
  """JAX 0.10.2's private `dtypes.dtype`: the dtype of a value or dtype-like, canonicalized
  for the x64 mode (``dtype(1)`` is int32 with x64 off); arrays keep their own dtype, which
  in xjax is always canonical."""
  return _dtypes.dtype(x, canonicalize=True)
