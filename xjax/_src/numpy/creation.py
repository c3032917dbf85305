"""Array creation: array, asarray, zeros, ones, full, empty, the *_like forms,
eye, identity, arange and linspace.

A created array is always an `Array` (eagerly) or a tracer (while tracing),
never a NumPy value: under `jit` a scalar becomes an inline literal of the
jaxpr and a larger host value a constant, as in JAX.
"""
from __future__ import annotations

import operator

import numpy as np

from xjax._src import core
from xjax._src import deprecations
from xjax._src import device_put
from xjax._src import dispatch
from xjax._src import dtypes
from xjax._src.array import Array
from xjax._src.interpreters import partial_eval as pe
from xjax._src.jit import jit
from xjax._src.lax import elementwise as lax
from xjax._src.lax import structural as lax_structural
from xjax._src.lax import transcendental as lax_tr
from xjax._src.numpy import util
from xjax._src.numpy.util import concrete_or_error, dtype_of
from xjax._src.random import prng
from xjax._src.sharding import rules
from xjax._src.sharding.shardings import Sharding, SingleDeviceSharding

_PY_SCALARS = (bool, int, float, complex)


def _single_device(device):
  """The Device of a single-device sharding; any other `device` unchanged."""
  if isinstance(device, SingleDeviceSharding):
    (dev,) = device.device_set
    return dev
  return device


def _stage(value, device=None):
  """A host value as an Array, or as a constant of the jaxpr being built."""
  trace = core.current_trace()
  if type(trace) is pe.DynamicJaxprTrace and device is None:
    return trace.new_const(value)
  device = _single_device(device)
  if isinstance(device, Sharding):
    return _put(dispatch.device_put_value(value, None), device)
  return dispatch.device_put_value(value, device)


def _put(out, device):
  """`out` committed to `device`: a Device, or a Sharding (a NamedSharding types the
  result with its Explicit axes, as `jax.device_put` does, traced or not). A traced `out`
  is placed by the `device_put` primitive, as JAX's creation functions do under `jit`."""
  if device is None:
    return out
  if isinstance(out, core.Tracer) or (
      isinstance(device, Sharding) and not isinstance(device, SingleDeviceSharding)):
    return device_put.device_put(out, device)
  return dispatch.device_put_value(out, _single_device(device))


def _check_valid_leaf(leaf) -> None:
  if isinstance(leaf, (Array, core.Tracer) + _PY_SCALARS):
    return
  if leaf is None:
    raise ValueError("None is not a valid value for jnp.array")
  value = np.asarray(leaf)
  if not (value.dtype == np.bool_ or dtypes.issubdtype(value.dtype, np.number)
          or value.dtype == dtypes.float0):
    bad = value.flat[0] if value.size else value
    if isinstance(bad, np.generic):
      bad = bad.item()
    raise TypeError(f"Value {bad!r} with dtype {value.dtype} is not a valid JAX array type. "
                    "Only arrays of numeric types are supported by JAX.")


def _leaves(obj) -> list:
  if isinstance(obj, (list, tuple)):
    return [leaf for o in obj for leaf in _leaves(o)]
  return [util._unwrap(obj)]


def _host_nested(obj):
  """`obj` with the Arrays inside lists/tuples as NumPy values: ml_dtypes' converters
  (bfloat16, float8, ...) take numbers and NumPy values but not other array-likes."""
  if isinstance(obj, (list, tuple)):
    return [_host_nested(o) for o in obj]
  return np.asarray(obj) if isinstance(obj, Array) else obj


def _from_protocols(obj):
  """`obj` with each leaf that is neither an array nor a scalar but offers NumPy's
  ``__array__`` or the buffer protocol (array.array, bytearray, memoryview) read into a
  NumPy array, and masked arrays stripped of their masks (as np.array does)."""
  if isinstance(obj, (list, tuple)):
    leaves = [_from_protocols(o) for o in obj]
    if all(a is b for a, b in zip(leaves, obj)):
      return obj
    return leaves if isinstance(obj, list) else tuple(leaves)
  if isinstance(obj, np.ma.MaskedArray):
    return np.asarray(obj)
  if obj is None or isinstance(obj, (Array, core.Tracer, np.ndarray, np.generic, str)
                               + _PY_SCALARS):
    return obj
  if hasattr(obj, "__array__"):
    return np.asarray(obj)
  try:
    view = memoryview(obj)
  except TypeError:
    return obj
  return np.array(view)


def _contains_tracer(obj) -> bool:
  if isinstance(obj, (list, tuple)):
    return any(_contains_tracer(o) for o in obj)
  return isinstance(obj, core.Tracer)


def array(object, dtype=None, *args, copy: bool = True, order: str | None = "K",
          ndmin: int = 0, device=None, out_sharding=None):
  """Creates an array from an array, a scalar, or nested lists/tuples of them.

  Python scalars give weakly typed arrays (when `dtype` is None); a list of
  Python scalars gives a strongly typed one. NumPy 64-bit values are
  canonicalized (float64 becomes float32 unless x64 is enabled).

  Args:
    object: the data: an array, a scalar, or nested lists/tuples of them
      (which may contain traced values).
    dtype: the dtype of the result; a 64-bit dtype without x64 warns.
    copy: whether to copy (a traced input is copied with ``copy_p``).
    order: only ``"K"`` (or None) is supported.
    ndmin: minimum number of dimensions (leading 1s added).
    device: an optional device (or sharding) to commit the result to.
    out_sharding: instead of `device`, a NamedSharding or PartitionSpec (over the
      context mesh) the result is laid out as.

  Returns:
    An Array (or a tracer, while tracing).

  Raises:
    TypeError: the data is not numeric.
    ValueError: nested lists of inhomogeneous shape, or None entries, or both `device`
      and `out_sharding` given.

  >>> import xjax.numpy as jnp
  >>> jnp.array([1, 2])
  Array([1, 2], dtype=int32)
  >>> jnp.array(1.0)
  Array(1., dtype=float32, weak_type=True)

  Mirrors `jax.numpy.array`; passing `copy`, `order` and `ndmin` positionally is
  deprecated (a DeprecationWarning), as in JAX.
  """
  if args:
    if len(args) > 3:
      raise TypeError(f"array() takes at most 5 positional arguments but {len(args) + 2} "
                      "were given")
    for i, name in enumerate(("copy", "order", "ndmin")):
      if i < len(args) and (copy, order, ndmin)[i] != (True, "K", 0)[i]:
        raise TypeError(f"array() got multiple values for argument '{name}'")
    copy, order, ndmin = (*args, *(copy, order, ndmin)[len(args):])[:3]
    deprecations.warn(
        "jax-array-positional-args",
        "Passing the copy, order, and ndmin arguments to jnp.array positionally is "
        "deprecated. Use keyword arguments instead.", stacklevel=2)
  if order is not None and order != "K":
    raise NotImplementedError("Only implemented for order='K'")
  if out_sharding is not None:
    if device is not None:
      raise ValueError("Only one of `device` or `out_sharding` can be set. Got "
                       f"device={device!r} and out_sharding={out_sharding!r}")
    device = rules.canonicalize_out_sharding(out_sharding, "jnp.array")
  object = _from_protocols(util._unwrap(object))
  if dtype is None and ndmin == 0 and device is None:
    if isinstance(object, core.Tracer):
      return lax._copy(object) if copy else object
    if isinstance(object, Array):
      return lax._copy(object) if copy else object  # a new buffer, as JAX's (donation)
    if type(object) in _PY_SCALARS or isinstance(object, (np.ndarray, np.generic)):
      _check_valid_leaf(object)
      return _stage(_as_host(object))
  if dtype is not None:
    dtype = dtypes.check_user_dtype_supported(dtype, "array")
  leaves = _leaves(object)
  for leaf in leaves:
    _check_valid_leaf(leaf)
  weak = dtype is None and dtypes.is_weakly_typed(object)
  if dtype is None:
    dtype = dtypes.lattice_result_type(*leaves)[0] if leaves else dtypes.default_float_dtype()
  dtype = dtypes.canonicalize_dtype(dtype)
  if isinstance(object, (Array, core.Tracer)):
    out = lax.convert_element_type(object, dtype, weak_type=weak)
  elif isinstance(object, (list, tuple)) and _contains_tracer(object):
    out = _stack_nested(object, dtype)
  else:
    _check_homogeneous(object)
    with np.errstate(over="ignore", invalid="ignore"):
      value = np.asarray(_host_nested(object), dtype=dtype)
    out = _stage(_as_host(value, weak), device)
    device = None
  nd = core.get_aval(out).ndim
  if ndmin > nd:
    out = lax_structural.expand_dims(out, tuple(range(ndmin - nd)))
  if device is not None:
    out = _put(out, device)
  return out


def _as_host(value, weak: bool | None = None):
  """A host value in its canonical dtype, remembering weak types of Python scalars."""
  aval = core.get_aval(value)
  if weak is not None:
    aval = aval.update_weak_type(weak)
  return lax.convert_element_type(np.asarray(value), aval.dtype, weak_type=aval.weak_type)


def _check_homogeneous(obj) -> tuple:
  if isinstance(obj, (list, tuple)):
    inner = {_check_homogeneous(o) for o in obj}
    if len(inner) > 1:
      raise ValueError("setting an array element with a sequence. The requested array has an "
                       "inhomogeneous shape after 1 dimensions. The detected shape was "
                       f"({len(obj)},) + inhomogeneous part.")
    return (len(obj), *(inner.pop() if inner else ()))
  return np.shape(obj)


def _stack_nested(obj, dtype):
  # Each element converted, given a leading unit axis, then concatenated (as JAX does).
  parts = []
  for elt in obj:
    if isinstance(elt, (list, tuple)):
      elt = _stack_nested(elt, dtype) if _contains_tracer(elt) else array(elt, dtype)
    else:
      elt = lax.convert_element_type(util._unwrap(elt), dtype, weak_type=False)
    parts.append(lax_structural.expand_dims(elt, (0,)))
  while len(parts) > 16:
    parts = [lax_structural.concatenate(parts[i:i + 16], 0) for i in range(0, len(parts), 16)]
  return lax_structural.concatenate(parts, 0)


def asarray(a, dtype=None, order: str | None = None, *, copy: bool | None = None, device=None):
  """Converts `a` to an array, without copying when it already is one.

  Args:
    a: an array, scalar, or nested lists/tuples of them.
    dtype: optional dtype of the result.
    order: only ``"K"`` (or None) is supported.
    copy: whether to copy; None or False avoids copies.
    device: an optional device to commit the result to.

  Returns:
    An Array (or a tracer, while tracing).

  Mirrors `jax.numpy.asarray`.
  """
  if order is not None and order != "K":
    raise NotImplementedError("Only implemented for order='K'")
  if dtype is None and device is None and isinstance(a, (Array, core.Tracer)):
    return a
  if dtype is not None:
    dtype = dtypes.check_user_dtype_supported(dtype, "asarray")
  return array(a, dtype=dtype, copy=bool(copy), order=None, device=device)


def copy(a, order: str | None = None):
  """A copy of `a` (mirrors `jax.numpy.copy`)."""
  util.check_arraylike("copy", a)
  return array(a, copy=True, order=order)


# ----------------------------------------------------------------------------
# Filled arrays


def _canonical_shape(shape):
  if isinstance(shape, (list, tuple)):
    return core.canonicalize_shape(shape)
  if np.ndim(shape) == 0 and not isinstance(shape, core.Tracer):
    try:
      return (operator.index(shape),)
    except TypeError:
      raise core._invalid_shape_error((shape,)) from None
  return core.canonicalize_shape(shape if np.ndim(shape) else (shape,))


def _fill(shape, fill_value, dtype, weak: bool, device=None):
  if dtype is not None and np.dtype(dtype) == dtypes.float0:
    return np.zeros(tuple(shape), dtypes.float0)  # float0 has no values: a host array, as JAX
  value = lax.convert_element_type(fill_value, dtype, weak_type=weak)
  if isinstance(value, np.ndarray) and core.current_trace() is core.eval_trace:
    # Eagerly, a host fill value is baked into a cached executable: no transfer per call.
    value = np.asarray(value)
    out = _fill_constant(tuple(shape), value.dtype, weak, value.tobytes())
  else:
    out = lax_structural.broadcast_in_dim_p.bind(value, shape=tuple(shape),
                                                 broadcast_dimensions=(), sharding=None)
  return _put(out, device)


@jit(static_argnums=(0, 1, 2, 3))
def _fill_constant(shape, dtype, weak, value_bytes):
  # The value travels as bytes so that the static key tells NaN, -0.0 and 0.0 apart.
  value = np.frombuffer(value_bytes, dtype).reshape(())
  value = lax.convert_element_type(value, dtype, weak_type=weak)
  return lax_structural.broadcast_in_dim_p.bind(value, shape=shape, broadcast_dimensions=(),
                                                sharding=None)


def full(shape, fill_value, dtype=None, *, device=None, out_sharding=None):
  """An array of `shape` filled with `fill_value`.

  Args:
    shape: an int or a sequence of ints.
    fill_value: a scalar (or an array broadcastable to `shape`).
    dtype: the result dtype; by default fill_value's (a Python scalar gives
      a weakly typed result).
    device: an optional device to commit the result to.
    out_sharding: instead of `device`, a NamedSharding or PartitionSpec (over the
      context mesh) of the result.

  Returns:
    An array of `shape`.

  Raises:
    TypeError: `shape` is not a sequence of concrete integers, or has a
      negative element ("broadcast_in_dim shape must have every element be
      nonnegative", as in JAX).
    ValueError: both `device` and `out_sharding` are given.

  Mirrors `jax.numpy.full`.
  """
  device = _device_or_out_sharding(device, out_sharding, "full")
  if dtype is not None:
    dtype = dtypes.check_user_dtype_supported(dtype, "full")
  util.check_arraylike("full", fill_value)
  fill_value = util._unwrap(fill_value)
  if np.ndim(fill_value) if not isinstance(fill_value, core.Tracer) else fill_value.ndim:
    out = util.broadcast_to(asarray(fill_value, dtype=dtype), shape)
    return _put(out, device)
  shape = _canonical_shape(shape)
  weak = dtype is None and dtypes.is_weakly_typed(fill_value)
  dtype = dtypes.canonicalize_dtype(dtype_of(fill_value) if dtype is None else dtype)
  return _fill(shape, fill_value, dtype, weak, device)


def _filled(name, fill):
  def fn(shape, dtype=None, *, device=None, out_sharding=None):
    device = _device_or_out_sharding(device, out_sharding, name)
    if isinstance(dtype, int) and isinstance(shape, int):
      # JAX's hint for the common slip of passing the shape as separate arguments.
      raise TypeError(f"Cannot interpret '{dtype}' as a data type.\n\nDid you accidentally "
                      f"write `jax.numpy.{name}({shape}, {dtype})` when you meant "
                      f"`jax.numpy.{name}(({shape}, {dtype}))`, i.e. with a single tuple "
                      "argument for the shape?")
    if dtype is not None:
      dtype = dtypes.check_user_dtype_supported(dtype, name)
    shape = _canonical_shape(shape)
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    return _fill(shape, fill, dtype, False, device)
  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = (f"An array of `shape` filled with {fill}s.\n\n"
                "  Args:\n    shape: an int or a sequence of ints.\n    dtype: the dtype "
                "(default float32, or float64 with x64).\n    device: an optional device.\n"
                "    out_sharding: instead of `device`, a NamedSharding or PartitionSpec of "
                "the result.\n\n"
                "  Returns:\n    An array of `shape`.\n\n  Raises:\n    TypeError: `shape` is not "
                "a sequence of concrete integers, or has a negative element.\n    ValueError: "
                "both `device` and `out_sharding` are given.\n\n"
                f"  Mirrors `jax.numpy.{name}`.\n  ")
  return fn


zeros = _filled("zeros", 0)
ones = _filled("ones", 1)
empty = _filled("empty", 0)  # XLA has no uninitialized memory: empty is zeros, as in JAX


def _like_shape_dtype(name, a) -> tuple[tuple, object, bool]:
  """The shape, dtype and weak type that `a` gives a `*_like` result.

  `a` is an array-like, or (as JAX allows) any object with ``shape`` and
  ``dtype`` attributes such as a `jax.ShapeDtypeStruct` or a key array; such a
  duck-typed `a` gives a strongly typed result, as in JAX.

  Raises:
    TypeError: `a` is neither (JAX's "requires ndarray or scalar arguments").
  """
  if isinstance(a, prng.PRNGKeyArray) or (
      not util.is_arraylike(a) and hasattr(a, "dtype") and hasattr(a, "shape")):
    return tuple(a.shape), a.dtype, False
  util.check_arraylike(name, a)
  aval = core.get_aval(util._unwrap(a))
  return aval.shape, aval.dtype, aval.weak_type


def _fill_keys(shape, fill_value, dtype, device):
  """Typed PRNG keys of dtype `dtype` (a key dtype) and `shape` whose key data is
  `fill_value` broadcast (a key array's data, or an integer filling every word)."""
  impl = dtype._impl
  if isinstance(fill_value, prng.PRNGKeyArray):
    if fill_value.dtype != dtype:
      raise TypeError(f"full_like: fill_value's key dtype {fill_value.dtype} does not match "
                      f"the result's {dtype}")
    data = util.broadcast_to(prng.random_unwrap(fill_value), (*shape, *impl.key_shape))
  else:
    data = full((*shape, *impl.key_shape), fill_value, np.uint32)
  return _put(prng.random_wrap(data, impl=impl), device)


def _device_or_out_sharding(device, out_sharding, name):
  """The placement `device` or `out_sharding` asks for (JAX allows one of the two)."""
  if out_sharding is None:
    return device
  if device is not None:
    raise ValueError("Only one of `device` or `out_sharding` can be set. Got "
                     f"device={device!r} and out_sharding={out_sharding!r}")
  return rules.canonicalize_out_sharding(out_sharding, name)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None, out_sharding=None):
  """An array shaped like `a` (or `shape`) filled with `fill_value`.

  Args:
    a: an array-like, or any object with ``shape`` and ``dtype`` attributes
      (a `jax.ShapeDtypeStruct`, a key array).
    fill_value: a scalar, or an array broadcastable to the result's shape (a
      key array when the result's dtype is a key dtype).
    dtype: the result dtype; by default a's.
    shape: the result shape; by default a's.
    device: an optional device or sharding to commit the result to.
    out_sharding: instead of `device`, a NamedSharding or PartitionSpec (over the
      context mesh) the result is laid out as.

  Returns:
    The filled array; weakly typed when `a` is an array that is, and `dtype`
    is not given. A key dtype gives typed PRNG keys whose data is the fill.

  Raises:
    TypeError: `a` or `fill_value` is not array-like.
    ValueError: both `device` and `out_sharding` are given.

  Mirrors `jax.numpy.full_like`.
  """
  device = _device_or_out_sharding(device, out_sharding, "full_like")
  util.check_arraylike("full_like", fill_value)
  a_shape, a_dtype, a_weak = _like_shape_dtype("full_like", a)
  weak = dtype is None and a_weak
  dtype = a_dtype if dtype is None else dtypes.check_user_dtype_supported(dtype, "full_like")
  shape = a_shape if shape is None else _canonical_shape(shape)
  if isinstance(dtype, dtypes.ExtendedDType):
    return _fill_keys(shape, fill_value, dtype, device)
  fill_value = util._unwrap(fill_value)
  if (device is None and type(a) is Array and a._committed and not weak
      and tuple(shape) == tuple(a_shape)):
    device = a.sharding  # as JAX: a committed array's sharding carries over
  if np.ndim(fill_value) if not isinstance(fill_value, core.Tracer) else fill_value.ndim:
    out = util.broadcast_to(asarray(fill_value, dtype=dtype), shape)
    return _put(out, device)
  return _fill(shape, fill_value, dtype, weak, device)


def _filled_like(name, fill):
  def fn(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    _like_shape_dtype(name, a)  # JAX's error names the calling function
    return full_like(a, fill, dtype, shape, device=device, out_sharding=out_sharding)
  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = (f"An array shaped like `a` (or `shape`) filled with {fill}s; dtype defaults to "
                f"a's. `a` may be any object with ``shape`` and ``dtype`` (a "
                f"`jax.ShapeDtypeStruct`, a key array).\n\n  Mirrors `jax.numpy.{name}`.\n  ")
  return fn


zeros_like = _filled_like("zeros_like", 0)
ones_like = _filled_like("ones_like", 1)


def empty_like(prototype, dtype=None, shape=None, *, device=None):
  """An array shaped like `prototype` (or `shape`) of its dtype (or `dtype`); XLA has no
  uninitialized memory, so it holds zeros, as in JAX. `prototype` may be any object with
  ``shape`` and ``dtype`` (a `jax.ShapeDtypeStruct`, a key array).

  Mirrors `jax.numpy.empty_like`.
  """
  _like_shape_dtype("empty_like", prototype)
  return full_like(prototype, 0, dtype, shape, device=device)


def eye(N, M=None, k=0, dtype=None, *, device=None):
  """A 2-D array with ones on the k-th diagonal and zeros elsewhere.

  Args:
    N: number of rows.
    M: number of columns (default N).
    k: the diagonal: 0 is the main one, positive above, negative below.
    dtype: the dtype (default float32).
    device: an optional device to commit the result to.

  Returns:
    An array of shape ``(N, M)``.

  Raises:
    TypeError: `N` or `M` is not a concrete integer.
    ValueError: negative sizes or a non-scalar `k`.

  Mirrors `jax.numpy.eye`.
  """
  dtype = dtypes.check_user_dtype_supported(float if dtype is None else dtype, "eye")
  (n,) = core.canonicalize_shape((N,), "argument of 'N' jnp.eye().")
  (m,) = (n,) if M is None else core.canonicalize_shape((M,), "argument 'M' of jnp.eye().")
  if n < 0 or m < 0:
    raise ValueError(f"negative dimensions are not allowed, got {N} and {M}")
  if isinstance(k, int):
    k = int(np.clip(k, np.iinfo(np.int32).min, np.iinfo(np.int32).max))
  offset = util.ensure_arraylike("eye", k)
  if util.ndim(offset) != 0 or not dtypes.issubdtype(dtype_of(offset), np.integer):
    raise ValueError(f"k must be a scalar integer; got {k}")
  index_dtype = dtypes.canonicalize_dtype(dtype_of(offset))
  i = lax_structural.broadcasted_iota(index_dtype, (n, m), 0)
  j = lax_structural.broadcasted_iota(index_dtype, (n, m), 1)
  offset = lax.convert_element_type(offset, index_dtype, weak_type=util.is_weak(offset))
  out = lax.convert_element_type(lax.eq(lax.add(i, offset), j), dtype)
  return _put(out, device)


def identity(n, dtype=None):
  """The ``(n, n)`` identity matrix (mirrors `jax.numpy.identity`)."""
  if dtype is not None:
    dtype = dtypes.check_user_dtype_supported(dtype, "identity")
  return eye(n, dtype=dtype)


# ----------------------------------------------------------------------------
# Ranges


def arange(start, stop=None, step=None, dtype=None, *, device=None):
  """Evenly spaced values in the half-open interval [start, stop).

  ``arange(n)`` is ``[0, 1, ..., n-1]``. The bounds must be concrete: the
  length of the result is part of its type.

  Args:
    start: the first value (or, alone, the stop value).
    stop: the end of the interval (excluded).
    step: the spacing (default 1).
    dtype: the dtype; by default inferred from the bounds (int32 for ints).
    device: an optional device to commit the result to.

  Returns:
    A 1-D array.

  Raises:
    ConcretizationTypeError: a bound is traced (e.g. under `jit`).
    ValueError: a bound is not a scalar, or is complex.

  >>> import xjax.numpy as jnp
  >>> jnp.arange(5)
  Array([0, 1, 2, 3, 4], dtype=int32)
  >>> jnp.arange(1.0, 2.0, 0.25)
  Array([1.  , 1.25, 1.5 , 1.75], dtype=float32)

  Mirrors `jax.numpy.arange`.
  """
  if dtype is not None:
    dtype = dtypes.check_user_dtype_supported(dtype, "arange")
  for pos, v in enumerate((start, stop, step)):
    if v is not None and not util.is_arraylike(v):
      raise TypeError(f"arange requires ndarray, scalar, or None arguments, got {type(v)} "
                      f"at position {pos}.")
  start_name = "stop" if stop is None and step is None else "start"
  start = concrete_or_error(start, f"It arose in the jnp.arange argument '{start_name}'")
  stop = concrete_or_error(stop, "It arose in the jnp.arange argument 'stop'")
  step = concrete_or_error(step, "It arose in the jnp.arange argument 'step'")
  for name, val in ((start_name, start), ("stop", stop), ("step", step)):
    if val is not None and np.ndim(val) != 0:
      raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={val}")
  bounds = [x for x in (start, stop, step) if x is not None]
  if dtype is None:
    dtype = dtypes.result_type(*bounds)
  if any(np.iscomplexobj(x) for x in bounds):
    raise ValueError("Passing complex start/stop/step to jnp.arange is no longer supported"
                     " starting in JAX v0.10.0.")
  start, stop, step = (None if x is None else np.asarray(x).item() for x in (start, stop, step))
  if stop is None:
    start, stop = 0, start
  if step is not None:
    if step == 0:
      raise ValueError("arange has step == 0")
    working = (np.dtype(np.float32) if dtypes.issubdtype(dtype, np.floating)
               and dtypes.finfo(dtype).bits < 32 else dtype)
    size = max(0, int(np.ceil((stop - start) / step)))
    ramp = lax.mul(lax.convert_element_type(step, working),
                   lax_structural.broadcasted_iota(working, (size,), 0))
    out = lax.convert_element_type(lax.add(lax.convert_element_type(start, working), ramp), dtype)
  elif start == 0:
    out = lax_structural.broadcasted_iota(dtype, (max(0, int(np.ceil(stop))),), 0)
  else:
    size = max(0, int(np.ceil(stop - start)))
    out = lax.add(lax.convert_element_type(start, dtype),
                  lax_structural.broadcasted_iota(dtype, (size,), 0))
  return _put(out, device)


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype=None, axis: int = 0, *, device=None):
  """`num` evenly spaced values from `start` to `stop` (inclusive when `endpoint`).

  Args:
    start, stop: the bounds (scalars or broadcastable arrays).
    num: the number of values (concrete).
    endpoint: whether `stop` is the last value.
    retstep: also return the spacing.
    dtype: the dtype (default: the bounds' inexact dtype).
    axis: where the new axis goes when the bounds are arrays.
    device: an optional device to commit the result to.

  Returns:
    An array (and the step, if `retstep`).

  Raises:
    ValueError: `num` is negative.

  >>> import xjax.numpy as jnp
  >>> jnp.linspace(0.0, 1.0, 5)
  Array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)

  Mirrors `jax.numpy.linspace`.
  """
  num = util.concrete_int(num, "'num' argument of jnp.linspace")
  axis = util.concrete_int(axis, "'axis' argument of jnp.linspace")
  if dtype is not None:
    dtype = dtypes.check_user_dtype_supported(dtype, "linspace")
  out = _linspace(start, stop, num, endpoint, retstep, dtype, axis)
  if device is not None:
    out = (_put(out[0], device), out[1]) if retstep else _put(out, device)
  return out


@jit(static_argnames=("num", "endpoint", "retstep", "dtype", "axis"))
def _linspace(start, stop, num, endpoint, retstep, dtype, axis):
  if num < 0:
    raise ValueError(f"Number of samples, {num}, must be non-negative.")
  start, stop = util.ensure_arraylike("linspace", start, stop)
  if dtype is None:
    dtype = dtypes.to_inexact_dtype(dtypes.result_type(start, stop))
  dtype = dtypes.canonicalize_dtype(dtype)
  work = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(dtype))
  start = lax.convert_element_type(start, work)
  stop = lax.convert_element_type(stop, work)
  bounds_shape = list(util.broadcast_shapes(util.shape(start), util.shape(stop)))
  b_start = util.broadcast_to(start, bounds_shape)
  b_stop = util.broadcast_to(stop, bounds_shape)
  axis = len(bounds_shape) + axis + 1 if axis < 0 else axis
  bounds_shape.insert(axis, 1)
  div = (num - 1) if endpoint else num
  if num > 1:
    delta = lax.div(lax.sub(b_stop, b_start), np.array(div, work))
    iota_shape = [1] * len(bounds_shape)
    iota_shape[axis] = div
    real = dtypes.finfo(work).dtype
    step = lax.div(lax_structural.reshape(lax_structural.iota(real, div), iota_shape),
                   np.array(div, real))
    step = lax.convert_element_type(step, work)
    start_part = lax_structural.reshape(b_start, bounds_shape)
    out = lax.add(lax.mul(start_part, lax.sub(np.array(1, work), step)),
                  lax.mul(lax_structural.reshape(b_stop, bounds_shape), step))
    if endpoint:
      out = lax_structural.concatenate([out, lax_structural.expand_dims(b_stop, (axis,))], axis)
  elif num == 1:
    delta = np.array(np.nan, work) if endpoint else lax.sub(b_stop, b_start)
    out = lax_structural.reshape(b_start, bounds_shape)
  else:
    empty_shape = list(util.broadcast_shapes(util.shape(start), util.shape(stop)))
    empty_shape.insert(axis, 0)
    delta = np.array(np.nan, work)
    out = _fill(empty_shape, 0, work, False)
  if dtypes.issubdtype(dtype, np.integer) and not dtypes.issubdtype(dtype_of(out), np.integer):
    out = lax.floor(out)
  out = lax.convert_element_type(out, dtype)
  return (out, delta) if retstep else out


def logspace(start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None,
             axis: int = 0):
  """`num` values evenly spaced on a log scale: ``base ** linspace(start, stop, num)``.

  Args:
    start, stop: the exponents of the bounds (scalars or broadcastable arrays).
    num: the number of values (concrete).
    endpoint: whether ``base ** stop`` is the last value.
    base: the base of the log scale (a scalar, or an array broadcasting
      against the bounds).
    dtype: the result dtype (default: the bounds' inexact dtype).
    axis: where the new axis goes when the bounds are arrays.

  Returns:
    An array of `num` values along `axis`.

  Raises:
    ValueError: `num` is negative.

  Mirrors `jax.numpy.logspace`.
  """
  num = util.concrete_int(num, "'num' argument of jnp.logspace")
  axis = util.concrete_int(axis, "'axis' argument of jnp.logspace")
  if dtype is not None:
    dtype = dtypes.check_user_dtype_supported(dtype, "logspace")
  return _logspace(start, stop, num, endpoint, base, dtype, axis)


@jit(static_argnames=("num", "endpoint", "dtype", "axis"))
def _logspace(start, stop, num, endpoint, base, dtype, axis):
  start, stop = util.ensure_arraylike("logspace", start, stop)
  if dtype is None:
    dtype = dtypes.to_inexact_dtype(dtypes.result_type(start, stop))
  dtype = dtypes.canonicalize_dtype(dtype)
  work = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(dtype))
  base = lax.convert_element_type(util.ensure_arraylike("logspace", base), work)
  if util.ndim(base):
    base = lax_structural.expand_dims(base, (axis,))
  exponents = lax.convert_element_type(_linspace(start, stop, num, endpoint, False, None, axis),
                                       work)
  base, exponents = util.broadcast_arrays_(base, exponents)
  return lax.convert_element_type(lax_tr.pow(base, exponents), dtype)


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis: int = 0):
  """`num` values in a geometric progression from `start` to `stop`.

  Computed as ``sign(start) * 10 ** linspace(log10(|start|), log10(|stop|))``;
  bounds of different signs, or a zero bound, give NaN, as in JAX.

  Args:
    start, stop: the first and (with `endpoint`) last values.
    num: the number of values (concrete).
    endpoint: whether `stop` is the last value.
    dtype: the result dtype (default: the bounds' inexact dtype).
    axis: where the new axis goes when the bounds are arrays.

  Returns:
    An array of `num` values along `axis`.

  Raises:
    ValueError: `num` is negative.

  Mirrors `jax.numpy.geomspace`.
  """
  num = util.concrete_int(num, "'num' argument of jnp.geomspace")
  axis = util.concrete_int(axis, "'axis' argument of jnp.geomspace")
  if dtype is not None:
    dtype = dtypes.check_user_dtype_supported(dtype, "geomspace")
  return _geomspace(start, stop, num, endpoint, dtype, axis)


@jit(static_argnames=("num", "endpoint", "dtype", "axis"))
def _geomspace(start, stop, num, endpoint, dtype, axis):
  start, stop = util.ensure_arraylike("geomspace", start, stop)
  if dtype is None:
    dtype = dtypes.to_inexact_dtype(dtypes.result_type(start, stop))
  dtype = dtypes.canonicalize_dtype(dtype)
  work = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(dtype))
  start = lax.convert_element_type(start, work)
  stop = lax.convert_element_type(stop, work)
  sign = lax.sign(start)
  ln10 = np.array(np.log(10), work)
  log10 = lambda x: lax.div(lax_tr.log(lax.div(x, sign)), ln10)
  res = _logspace(log10(start), log10(stop), num, endpoint, 10.0, work, axis)
  if util.ndim(sign):
    sign = lax_structural.expand_dims(sign, (axis if axis >= 0 else util.ndim(res) + axis,))
  sign, res = util.broadcast_arrays_(sign, res)
  return lax.convert_element_type(lax.mul(sign, res), dtype)
