"""Array API inspection: `__array_namespace_info__`, `Array.__array_namespace__` and the
standard's version (mirrors `jax.numpy`'s array_api_metadata)."""
from __future__ import annotations

import numpy as np

from xjax._src import backend
from xjax._src import dtypes

__array_api_version__ = "2024.12"
_VERSIONS = ("2024.12",)

_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
_KINDS["numeric"] = _KINDS["integral"] + _KINDS["real floating"] + _KINDS["complex floating"]


def array_namespace(self, *, api_version: None | str = None):
  """The module implementing the Array API for this array: `xjax.numpy`.

  Raises:
    ValueError: an `api_version` other than the supported one.

  Mirrors `jax.Array.__array_namespace__`.
  """
  if api_version is not None and api_version not in _VERSIONS:
    raise ValueError(f"{api_version=!r} is not available; available versions are: "
                     f"{list(_VERSIONS)}")
  import xjax.numpy
  return xjax.numpy


class ArrayNamespaceInfo:
  """What the Array API namespace supports here: capabilities, devices, dtypes.

  Mirrors the object `jax.numpy.__array_namespace_info__()` returns.
  """

  def capabilities(self) -> dict:
    # Shapes are static under jit: no boolean-mask indexing, no data-dependent shapes.
    return {"boolean indexing": False, "data-dependent shapes": False, "max dimensions": 64}

  def default_device(self):
    return None  # arrays go where `jax_default_device` (or the first device) says

  def devices(self) -> list:
    return [None, *backend.devices()]

  def default_dtypes(self, *, device=None) -> dict:
    return {"real floating": dtypes.default_float_dtype(),
            "complex floating": dtypes.default_complex_dtype(),
            "integral": dtypes.default_int_dtype(), "indexing": dtypes.default_int_dtype()}

  def dtypes(self, *, device=None, kind: str | tuple[str, ...] | None = None) -> dict:
    """The supported dtypes (of `kind`: one Array API kind name or a tuple of them).

    Raises:
      KeyError: an unknown kind.
    """
    kinds = tuple(_KINDS) if kind is None else (kind,) if isinstance(kind, str) else kind
    names = []
    for k in kinds:
      names.extend(n for n in _KINDS[k] if n not in names)
    available = {np.dtype(n) for n in names if dtypes.canonicalize_dtype(np.dtype(n)) ==
                 np.dtype(n)}
    return {n: np.dtype(n) for n in names if np.dtype(n) in available}


def __array_namespace_info__() -> ArrayNamespaceInfo:
  """The Array API inspection object (mirrors `jax.numpy.__array_namespace_info__`)."""
  return ArrayNamespaceInfo()
