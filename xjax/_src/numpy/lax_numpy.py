"""Array creation and conversion in jnp: array, asarray, zeros, ones, full, *_like, dot."""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src import dispatch
from xjax._src import dtypes
from xjax._src.array import Array
from xjax._src.lax import dot as lax_dot
from xjax._src.lax import elementwise as lax
from xjax._src.lax import structural as lax_structural
from xjax._src.numpy.util import check_arraylike, dtype_of, promote_dtypes

ndarray = Array


def _check_valid_numpy_value(value: np.ndarray) -> None:
  if value.dtype.kind in "USOV" and value.dtype != dtypes.float0:
    bad = value.flat[0] if value.size else value
    raise TypeError(f"Value {bad!r} with dtype {value.dtype} is not a valid JAX array type. "
                    "Only arrays of numeric types are supported by JAX.")


def _contains_traced(obj) -> bool:
  if isinstance(obj, (core.Tracer, Array)):
    return True
  if isinstance(obj, (list, tuple)):
    return any(_contains_traced(o) for o in obj)
  return False


def array(object, dtype=None, copy: bool = True, order: str | None = "K", ndmin: int = 0,
          *, device=None):
  """Creates an array from an array, scalar, or nested list/tuple of them.

  Python scalars give weakly typed arrays (when `dtype` is None); NumPy
  64-bit values are canonicalized (float64 -> float32 without x64).

  Args:
    object: the data.
    dtype: the dtype of the result; a 64-bit dtype without x64 warns.
    copy: accepted for NumPy compatibility (arrays are immutable).
    ndmin: minimum number of dimensions (leading 1s added).
    device: an optional device to commit the result to.

  Returns:
    An Array (or a tracer, if `object` contains tracers).

  Raises:
    TypeError: the data is not numeric.

  Mirrors `jax.numpy.array`.
  """
  if order is not None and order not in ("K", "C", "A"):
    raise NotImplementedError("Only implemented for order='K', 'C' or 'A'")
  if dtype is not None:
    dtype = dtypes.check_user_dtype_supported(dtype, "array")
  if hasattr(object, "__jax_array__"):
    object = object.__jax_array__()
  if isinstance(object, (Array, core.Tracer)):
    out = object if dtype is None else lax.convert_element_type(object, dtype)
  elif isinstance(object, (list, tuple)) and _contains_traced(object):
    out = _stack_nested(object, dtype)
  elif isinstance(object, (int, float, complex, bool)) and dtype is None:
    out = dispatch.device_put_value(object, device)
  else:
    value = np.asarray(object)
    _check_valid_numpy_value(value)
    if dtype is None:
      dtype = dtypes.canonicalize_dtype(value.dtype if value.dtype != np.object_
                                        else dtypes.default_float_dtype())
    if isinstance(object, (list, tuple)) and value.dtype.kind in "iu" and dtype == value.dtype:
      dtype = dtypes.canonicalize_dtype(np.int64 if value.dtype.kind == "i" else value.dtype)
    with np.errstate(over="ignore"):
      value = value.astype(dtype) if value.dtype != dtype else value
    out = dispatch.device_put_value(value, device, weak_type=False)
  if ndmin > np.ndim(out) if not hasattr(out, "aval") else ndmin > out.aval.ndim:
    shape = core.get_aval(out).shape
    out = lax_structural.reshape(out, (1,) * (ndmin - len(shape)) + tuple(shape))
  if device is not None and isinstance(out, Array):
    out = dispatch.device_put_value(out, device)
  return out


def _stack_nested(obj, dtype):
  from xjax._src.lax import structural
  leaves = _flatten_nested(obj)
  shape = np.shape(np.empty(_nested_shape(obj), dtype=np.int8))
  if dtype is None:
    dtype = dtypes.canonicalize_dtype(dtypes.result_type(*leaves))
  leaves = [lax.convert_element_type(x, dtype, weak_type=False) for x in leaves]
  leaves = [structural.broadcast_in_dim(x, (1,), ()) for x in leaves]
  flat = structural.concatenate(leaves, 0)
  return structural.reshape(flat, shape)


def _flatten_nested(obj):
  if isinstance(obj, (list, tuple)):
    return [leaf for o in obj for leaf in _flatten_nested(o)]
  if isinstance(obj, (Array, core.Tracer)) and core.get_aval(obj).ndim:
    raise NotImplementedError("jnp.array of a list of non-scalar traced arrays; use jnp.stack")
  return [obj]


def _nested_shape(obj):
  if isinstance(obj, (list, tuple)):
    inner = {_nested_shape(o) for o in obj}
    if len(inner) > 1:
      raise ValueError("setting an array element with a sequence. The requested array has an "
                       "inhomogeneous shape.")
    return (len(obj), *(inner.pop() if inner else ()))
  return ()


def asarray(a, dtype=None, order: str | None = None, *, copy: bool | None = None, device=None):
  """Converts `a` to an array without copying when it already is one.

  Mirrors `jax.numpy.asarray`.
  """
  if dtype is None and isinstance(a, (Array, core.Tracer)) and device is None:
    return a
  return array(a, dtype=dtype, copy=bool(copy), order=order, device=device)


def full(shape, fill_value, dtype=None, *, device=None):
  """An array of `shape` filled with `fill_value` (mirrors `jax.numpy.full`)."""
  shape = core.canonicalize_shape(shape if np.ndim(shape) else (shape,))
  if dtype is not None:
    dtype = dtypes.check_user_dtype_supported(dtype, "full")
  weak = dtype is None and isinstance(fill_value, (int, float, complex)) \
      and not isinstance(fill_value, bool)
  if dtype is None:
    dtype = dtypes.canonicalize_dtype(dtypes.result_type(fill_value))
  value = lax.convert_element_type(fill_value, dtype, weak_type=weak)
  value_aval = core.get_aval(value)
  if value_aval.ndim:
    dims = tuple(range(len(shape) - value_aval.ndim, len(shape)))
    return lax_structural.broadcast_in_dim(value, shape, dims)
  out = lax_structural.broadcast_in_dim_p.bind(value, shape=shape, broadcast_dimensions=(),
                                               sharding=None)
  return dispatch.device_put_value(out, device) if device is not None else out


def _creation(name, fill):
  def fn(shape, dtype=None, *, device=None):
    if dtype is not None:
      dtype = dtypes.check_user_dtype_supported(dtype, name)
    try:
      shape = core.canonicalize_shape(shape if np.ndim(shape) else (shape,))
    except TypeError:
      raise core._invalid_shape_error(shape if isinstance(shape, (list, tuple)) else (shape,)) from None
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    return full(shape, np.zeros((), dtype) + fill if dtype != np.bool_ else bool(fill),
                dtype, device=device)
  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = (f"An array of `shape` filled with {fill} (default dtype float32).\n\n"
                f"  Mirrors `jax.numpy.{name}`.\n  ")
  return fn


zeros = _creation("zeros", 0)
ones = _creation("ones", 1)


def empty(shape, dtype=None, *, device=None):
  """An array of `shape`; XLA arrays are never uninitialized, so it is zeros (mirrors `jax.numpy.empty`)."""
  return zeros(shape, dtype, device=device)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None):
  """An array shaped like `a` filled with `fill_value` (mirrors `jax.numpy.full_like`)."""
  aval = core.get_aval(a)
  dtype = aval.dtype if dtype is None else dtypes.check_user_dtype_supported(dtype, "full_like")
  shape = aval.shape if shape is None else shape
  weak = aval.weak_type and dtype == aval.dtype
  value = lax.convert_element_type(fill_value, dtype, weak_type=weak)
  out = lax_structural.broadcast_in_dim_p.bind(value, shape=tuple(shape), broadcast_dimensions=(),
                                               sharding=None)
  return dispatch.device_put_value(out, device) if device is not None else out


def zeros_like(a, dtype=None, shape=None, *, device=None):
  """Zeros shaped like `a` (mirrors `jax.numpy.zeros_like`)."""
  return full_like(a, 0, dtype, shape, device=device)


def ones_like(a, dtype=None, shape=None, *, device=None):
  """Ones shaped like `a` (mirrors `jax.numpy.ones_like`)."""
  return full_like(a, 1, dtype, shape, device=device)


def empty_like(a, dtype=None, shape=None, *, device=None):
  """Zeros shaped like `a` (mirrors `jax.numpy.empty_like`)."""
  return zeros_like(a, dtype, shape, device=device)


def dot(a, b, *, precision=None, preferred_element_type=None):
  """NumPy's dot product: contracts a's last axis with b's second-to-last (or only) axis.

  Mirrors `jax.numpy.dot`.
  """
  check_arraylike("dot", a, b)
  a, b = promote_dtypes(a, b)
  a_ndim, b_ndim = core.get_aval(a).ndim, core.get_aval(b).ndim
  out_dtype = dtype_of(a) if preferred_element_type is None else preferred_element_type
  if a_ndim == 0 or b_ndim == 0:
    from xjax._src.numpy import ufuncs
    return ufuncs.multiply(a, b)
  contract = (a_ndim - 1, max(0, b_ndim - 2))
  return lax_dot.dot_general(a, b, (((contract[0],), (contract[1],)), ((), ())),
                             precision=precision, preferred_element_type=out_dtype)
