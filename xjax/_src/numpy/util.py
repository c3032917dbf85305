"""Argument checking, promotion and broadcasting shared by the jnp functions.

jnp functions take "array-likes": xjax Arrays, tracers, NumPy arrays and
scalars, and Python scalars. They are not converted to device arrays up
front: host values stay on the host so that, under a trace, a scalar becomes
an inline literal of the jaxpr (as in JAX) and never a device constant.
Use the aval helpers (`shape`, `ndim`, `dtype_of`) rather than attributes, so
that a Python scalar or a float64 NumPy array reports its canonical type.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import errors
from xjax._src.array import Array
from xjax._src.config import config
from xjax._src.jit import jit
from xjax._src.lax import elementwise as lax
from xjax._src.lax import structural as lax_structural

_SCALAR_TYPES = (int, float, complex, bool, np.generic)

# ----------------------------------------------------------------------------
# Argument checks


_ARRAYLIKE_TYPES = (Array, core.Tracer, np.ndarray, *_SCALAR_TYPES)


def is_arraylike(x) -> bool:
  """True for the values jnp functions accept as arrays (not lists or tuples)."""
  return isinstance(x, _ARRAYLIKE_TYPES) or hasattr(x, "__jax_array__")


def check_arraylike(fun_name: str, *args) -> None:
  """Raises JAX's TypeError for the first argument that is not array-like.

  Raises:
    TypeError: ``"sum requires ndarray or scalar arguments, got <class 'list'>
      at position 0."``
  """
  for pos, arg in enumerate(args):
    if not is_arraylike(arg):
      raise TypeError(f"{fun_name} requires ndarray or scalar arguments, got {type(arg)} "
                      f"at position {pos}.")


def check_arraylike_or_none(fun_name: str, *args) -> None:
  """`check_arraylike` that lets None through: JAX's TypeError ``"standardize requires
  ndarray, scalar, or None arguments, got <class 'list'> at position 0."``."""
  for pos, arg in enumerate(args):
    if arg is not None and not is_arraylike(arg):
      raise TypeError(f"{fun_name} requires ndarray, scalar, or None arguments, got "
                      f"{type(arg)} at position {pos}.")


def _unwrap(x):
  m = getattr(x, "__jax_array__", None)
  return x if m is None or isinstance(x, (Array, core.Tracer)) else m()


def ensure_arraylike(fun_name: str, *args):
  """check_arraylike, then `__jax_array__` objects unwrapped; one arg gives one value."""
  out = _ensure_all(fun_name, args)
  return out[0] if len(out) == 1 else out


def _ensure_all(fun_name: str, args) -> tuple:
  check_arraylike(fun_name, *args)
  args = tuple(_unwrap(a) for a in args)
  if any(getattr(a, "dtype", None) == dtypes.float0 for a in args):
    raise TypeError(
        f"Called {fun_name} with a float0 array. float0s do not support any operations by "
        "design because they are not compatible with non-trivial vector spaces. No implicit "
        "dtype conversion is done. You can use np.zeros_like(arr, dtype=np.float) to cast a "
        "float0 array to a regular zeros array. \nIf you didn't expect to get a float0 you "
        "might have accidentally taken a gradient with respect to an integer argument.")
  return args


def check_for_prngkeys(fun_name: str, *args) -> None:
  """JAX's TypeError for typed PRNG keys mixed with arrays of other dtypes (keys of one
  dtype pass: the primitives that accept keys take them)."""
  if not any(isinstance(getattr(a, "dtype", None), dtypes.ExtendedDType) for a in args):
    return
  arg_dtypes = [dtypes.dtype(a) for a in args]
  if len(set(arg_dtypes)) > 1:
    raise TypeError(f"{fun_name} does not accept dtypes {', '.join(map(str, arg_dtypes))}.")


def check_no_out(fun_name: str, out) -> None:
  """JAX's refusal of NumPy's ``out=`` argument."""
  if out is not None:
    raise NotImplementedError(f"The 'out' argument to jnp.{fun_name} is not supported.")


def concrete_or_error(x, context: str):
  """`x` itself, unless it is a tracer without a known value: then JAX's ConcretizationTypeError."""
  if isinstance(x, core.Tracer):
    value = x.to_concrete_value()
    if value is None:
      raise errors.ConcretizationTypeError(x, context)
    return value
  return x


def concrete_int(x, context: str) -> int:
  """`x` as a Python int, raising ConcretizationTypeError for traced values."""
  return operator.index(concrete_or_error(x, context))


# ----------------------------------------------------------------------------
# Avals of array-likes


def aval_of(x) -> core.ShapedArray:
  return core.get_aval(x)


def ndim(x) -> int:
  return core.get_aval(x).ndim


def shape(x) -> tuple[int, ...]:
  return core.get_aval(x).shape


def dtype_of(x) -> np.dtype:
  return core.get_aval(x).dtype


def is_weak(x) -> bool:
  return core.get_aval(x).weak_type


def canonicalize_axis(axis, num_dims: int) -> int:
  """A possibly negative axis as an index in [0, num_dims); NumPy's ValueError otherwise."""
  axis = operator.index(axis)
  if not -num_dims <= axis < num_dims:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {num_dims}")
  return axis + num_dims if axis < 0 else axis


def canonicalize_axes(axis, num_dims: int) -> tuple[int, ...]:
  """`axis` (None, an int or a sequence of ints) as a sorted tuple of distinct axes."""
  if axis is None:
    return tuple(range(num_dims))
  if isinstance(axis, (tuple, list)):
    axes = tuple(canonicalize_axis(a, num_dims) for a in axis)
    if len(set(axes)) != len(axes):
      raise ValueError(f"duplicate value in 'axis': {tuple(axis)}")
    return axes
  return (canonicalize_axis(axis, num_dims),)


def const_like(x, value):
  """`value` as a host constant of x's dtype (strongly typed), like JAX's ``lax._const``."""
  return np.array(value, dtype_of(x))


# ----------------------------------------------------------------------------
# Dtype promotion


def _convert_all(args, to_dtype, weak: bool):
  if isinstance(to_dtype, dtypes.ExtendedDType):  # keys of one dtype: nothing to convert
    return list(args)
  to_dtype = dtypes.canonicalize_dtype(to_dtype)
  out = []
  for x in args:
    if type(x) is Array or isinstance(x, core.Tracer):
      aval = x.aval
      if aval.dtype == to_dtype and aval.weak_type == weak:
        out.append(x)  # already of the promoted type (the common case)
        continue
    out.append(lax.convert_element_type(_fold_literal(x, to_dtype, weak), to_dtype,
                                        weak_type=weak))
  return out


def _fold_literal(x, to_dtype, weak: bool):
  """A literal tracer about to be converted, as its host value: the conversion then folds
  into a new literal instead of adding an equation (JAX's constant folding)."""
  if isinstance(x, core.Tracer) and type(getattr(x, "val", None)) is core.Literal:
    aval = x.aval
    if aval.dtype != to_dtype or aval.weak_type != weak:
      return lax.convert_element_type(x.val.val, aval.dtype, weak_type=aval.weak_type)
  return x


def promote_dtypes(*args):
  """Converts args to their common dtype under JAX's promotion lattice (weak types kept)."""
  if len(args) < 2:
    return list(args)
  to_dtype, weak = dtypes.lattice_result_type(*args)
  return _convert_all(args, to_dtype, weak)


def promote_dtypes_inexact(*args):
  """Like `promote_dtypes`, then integers and bools become the default float dtype."""
  to_dtype, weak = dtypes.lattice_result_type(*args)
  return _convert_all(args, dtypes.to_inexact_dtype(to_dtype), weak)


def promote_dtypes_numeric(*args):
  """Like `promote_dtypes`, then bools become the default integer dtype."""
  to_dtype, weak = dtypes.lattice_result_type(*args)
  return _convert_all(args, dtypes.to_numeric_dtype(to_dtype), weak)


def promote_dtypes_complex(*args):
  """Like `promote_dtypes`, then everything becomes complex."""
  to_dtype, weak = dtypes.lattice_result_type(*args)
  return _convert_all(args, dtypes.to_complex_dtype(to_dtype), weak)


# ----------------------------------------------------------------------------
# Shape promotion and broadcasting


def _rank_promotion_check(fun_name, shapes):
  mode = config.jax_numpy_rank_promotion
  if mode == "allow":
    return
  shown = " ".join(map(str, shapes))
  link = "https://docs.jax.dev/en/latest/rank_promotion_warning.html."
  if mode == "warn":
    warnings.warn(f"Following NumPy automatic rank promotion for {fun_name} on shapes {shown}. "
                  "Set the jax_numpy_rank_promotion config option to 'allow' to disable this "
                  f"warning; for more information, see {link}", stacklevel=4)
  elif mode == "raise":
    raise ValueError(f"Operands could not be broadcast together for {fun_name} on shapes "
                     f"{shown} and with the config option jax_numpy_rank_promotion='raise'. For "
                     f"more information, see {link}")


def broadcast_shapes(*shapes) -> tuple[int, ...]:
  """NumPy's broadcast of `shapes` (each a sequence of ints, or one int), with JAX's errors.

  Raises:
    TypeError: a shape is not a sequence of concrete integers, or has a
      negative element ("Only non-negative indices are allowed when
      broadcasting static shapes").
    ValueError: the shapes do not broadcast together.

  Mirrors `jax.numpy.broadcast_shapes`.
  """
  shapes = [core.canonicalize_shape(s) for s in shapes]
  for s in shapes:
    if not all(d >= 0 for d in s):
      raise TypeError("Only non-negative indices are allowed when broadcasting static shapes, "
                      f"but got shape {s}.")
  try:
    return tuple(np.broadcast_shapes(*shapes))
  except ValueError:
    raise ValueError("Incompatible shapes for broadcasting: shapes="
                     f"{[tuple(s) for s in shapes]}") from None


def promote_shapes(fun_name: str, *args):
  """Adds leading unit dimensions so all non-scalar args have one rank (lax broadcasts the rest)."""
  if len(args) < 2:
    return list(args)
  shapes = [shape(a) for a in args]
  if all(len(s) == len(shapes[0]) for s in shapes[1:]):
    return list(args)
  nonscalar = [s for s in shapes if s]
  if len(nonscalar) < 2 or all(len(s) == len(nonscalar[0]) for s in nonscalar[1:]):
    return list(args)
  _rank_promotion_check(fun_name, nonscalar)
  rank = len(broadcast_shapes(*shapes))
  out = []
  for a, s in zip(args, shapes):
    if len(s) == rank or not s:
      out.append(a)
    else:
      lead = rank - len(s)
      out.append(lax_structural.broadcast_in_dim(a, (1,) * lead + tuple(s),
                                                 tuple(range(lead, rank))))
  return out


def check_shapes_broadcast(fun_name: str, *args) -> None:
  shapes = [shape(a) for a in args]
  if all(not s or s == shapes[0] for s in shapes) or all(not s for s in shapes[1:]):
    return  # equal shapes and scalars always broadcast (the common case, kept fast)
  try:
    np.broadcast_shapes(*shapes)
  except ValueError:
    raise TypeError(f"{fun_name} got incompatible shapes for broadcasting: "
                    f"{', '.join(str(tuple(s)) for s in shapes)}.") from None


_PY_SCALAR_TYPES = frozenset(dtypes.python_scalar_dtypes)


def _promote_common(args, to_kind):
  """The promoted args in the common case, or None for the full path.

  The common case: every arg an Array, a tracer or a Python scalar, and the
  arrays' shapes equal or rank 0. It needs no `__jax_array__` unwrapping, no
  broadcast check and no rank promotion; the dtype promotion is the full
  path's (`_convert_all` on the lattice's result), so the results are the same.
  """
  shape0 = ()
  for x in args:
    if type(x) in _PY_SCALAR_TYPES:
      continue
    if type(x) is not Array and not isinstance(x, core.Tracer):
      return None
    s = x.aval.shape
    if s and s != shape0:
      if shape0:
        return None
      shape0 = s
  if to_kind is None and len(args) < 2:
    return list(args)
  try:
    to_dtype, weak = dtypes.lattice_result_type(*args)
  except ValueError:  # e.g. a float0: the full path says so as JAX does
    return None
  return _convert_all(args, to_dtype if to_kind is None else to_kind(to_dtype), weak)


def promote_args(fun_name: str, *args):
  """check_arraylike, then dtype and shape promotion (JAX's ``promote_args``)."""
  out = _promote_common(args, None)
  if out is not None:
    return out
  args = _ensure_all(fun_name, args)
  check_shapes_broadcast(fun_name, *args)
  check_for_prngkeys(fun_name, *args)
  return promote_shapes(fun_name, *promote_dtypes(*args))


def promote_args_inexact(fun_name: str, *args):
  """Like `promote_args`, promoting to an inexact dtype."""
  out = _promote_common(args, dtypes.to_inexact_dtype)
  if out is not None:
    return out
  args = _ensure_all(fun_name, args)
  check_shapes_broadcast(fun_name, *args)
  check_for_prngkeys(fun_name, *args)
  return promote_shapes(fun_name, *promote_dtypes_inexact(*args))


def promote_args_numeric(fun_name: str, *args):
  """Like `promote_args`, promoting bools to integers."""
  out = _promote_common(args, dtypes.to_numeric_dtype)
  if out is not None:
    return out
  args = _ensure_all(fun_name, args)
  check_shapes_broadcast(fun_name, *args)
  check_for_prngkeys(fun_name, *args)
  return promote_shapes(fun_name, *promote_dtypes_numeric(*args))


def broadcast_to(arr, shape_, *, fun_name: str = "broadcast_to"):
  """`arr` broadcast to `shape_` by NumPy's rules (leading dims added, 1s stretched).

  Raises:
    ValueError: the shapes are not compatible (JAX's "Incompatible types for
      broadcasting" message).
  """
  arr = ensure_arraylike(fun_name, arr)
  if not isinstance(shape_, (tuple, list)) and np.ndim(shape_) == 0:
    shape_ = (shape_,)
  shape_ = core.canonicalize_shape(shape_)
  aval = core.get_aval(arr)
  if aval.shape == shape_:
    return arr
  if len(shape_) < aval.ndim:
    raise ValueError(f"Cannot broadcast to shape with fewer dimensions: "
                     f"arr_shape={aval.shape} shape={shape_}")
  lead = len(shape_) - aval.ndim
  if not all(d in (1, t) for d, t in zip(aval.shape, shape_[lead:])):
    requested = core.ShapedArray(shape_, aval.dtype)
    raise ValueError(f"Incompatible types for broadcasting: input type={aval.str_short()} and "
                     f"requested type={requested.str_short()}")
  return lax_structural.broadcast_in_dim(arr, shape_, tuple(range(lead, len(shape_))))


@jit(inline=True)
def broadcast_arrays_(*args):
  """The args broadcast to their common shape (JAX's inline ``_broadcast_arrays``)."""
  shapes = [shape(a) for a in args]
  if not shapes or all(s == shapes[0] for s in shapes):
    return list(args)
  result = broadcast_shapes(*shapes)
  return [broadcast_to(a, result) for a in args]


# ----------------------------------------------------------------------------
# where(condition, x, y)


def _where(condition, x, y):
  condition, x, y = ensure_arraylike("where", condition, x, y)
  if dtype_of(condition) != np.bool_:
    condition = lax.ne(condition, const_like(condition, 0))
  x, y = promote_dtypes(x, y)
  if ndim(condition) == 0:
    x, y = broadcast_arrays_(x, y)
  else:
    condition, x, y = broadcast_arrays_(condition, x, y)
  if 0 in shape(x):
    return x
  return lax.select_n(condition, y, x)


# Not inlined, as in JAX: eager scalar arguments are not materialized at full shape.
where_ = jit(_where)
