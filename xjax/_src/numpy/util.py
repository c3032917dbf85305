"""Argument checking and promotion shared by the jnp functions."""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src.array import Array
from xjax._src.config import config
from xjax._src.lax import elementwise as lax_elementwise
from xjax._src.lax import structural as lax_structural

_SCALAR_TYPES = (int, float, complex, bool, np.generic)


def is_arraylike(x) -> bool:
  return (isinstance(x, (Array, core.Tracer, np.ndarray) + _SCALAR_TYPES)
          or hasattr(x, "__jax_array__"))


def check_arraylike(fun_name: str, *args, emit_warning: bool = False) -> None:
  """JAX's TypeError for a list/tuple (or other non-array) argument."""
  for pos, arg in enumerate(args):
    if not is_arraylike(arg):
      raise TypeError(f"{fun_name} requires ndarray or scalar arguments, got {type(arg)} "
                      f"at position {pos}.")


def promote_dtypes(*args):
  """Converts args to their common dtype under JAX's promotion lattice (weak types kept)."""
  if len(args) < 2:
    return list(args)
  to_dtype, weak = dtypes.lattice_result_type(*args)
  to_dtype = dtypes.canonicalize_dtype(to_dtype)
  return [lax_elementwise.convert_element_type(x, to_dtype, weak_type=weak) for x in args]


def promote_dtypes_inexact(*args):
  """Like `promote_dtypes`, then integers and bools become the default float dtype."""
  to_dtype, weak = dtypes.lattice_result_type(*args)
  to_dtype = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(to_dtype))
  return [lax_elementwise.convert_element_type(x, to_dtype, weak_type=weak) for x in args]


def promote_dtypes_numeric(*args):
  to_dtype, weak = dtypes.lattice_result_type(*args)
  to_dtype = dtypes.canonicalize_dtype(dtypes.to_numeric_dtype(to_dtype))
  return [lax_elementwise.convert_element_type(x, to_dtype, weak_type=weak) for x in args]


def _rank_promotion_check(fun_name, shapes):
  mode = config.jax_numpy_rank_promotion
  if mode == "allow":
    return
  msg = (f"Following NumPy automatic rank promotion for {fun_name} on shapes "
         f"{' '.join(map(str, shapes))}. Set the jax_numpy_rank_promotion config option to "
         "'allow' to disable this message; for more information, see "
         "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")
  if mode == "warn":
    import warnings
    warnings.warn(msg, stacklevel=4)
  elif mode == "raise":
    raise ValueError(msg)


def broadcast_shapes(*shapes) -> tuple[int, ...]:
  """NumPy's broadcast of `shapes`, with JAX's error text."""
  try:
    return tuple(np.broadcast_shapes(*shapes))
  except ValueError:
    raise ValueError("Incompatible shapes for broadcasting: shapes="
                     f"{[tuple(s) for s in shapes]}") from None


def promote_shapes(fun_name: str, *args):
  """Adds leading unit dimensions so all args have one rank (lax then broadcasts size-1 dims)."""
  if len(args) < 2:
    return list(args)
  shapes = [np.shape(a) if not hasattr(a, "aval") else a.aval.shape for a in args]
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


def check_shapes_broadcast(fun_name: str, *args):
  shapes = [a.aval.shape if hasattr(a, "aval") else np.shape(a) for a in args]
  try:
    np.broadcast_shapes(*shapes)
  except ValueError:
    raise TypeError(f"{fun_name} got incompatible shapes for broadcasting: "
                    f"{', '.join(str(tuple(s)) for s in shapes)}.") from None


def promote_args(fun_name: str, *args):
  """check_arraylike, then dtype and shape promotion."""
  check_arraylike(fun_name, *args)
  check_shapes_broadcast(fun_name, *args)
  return promote_shapes(fun_name, *promote_dtypes(*args))


def promote_args_inexact(fun_name: str, *args):
  check_arraylike(fun_name, *args)
  check_shapes_broadcast(fun_name, *args)
  return promote_shapes(fun_name, *promote_dtypes_inexact(*args))


def promote_args_numeric(fun_name: str, *args):
  check_arraylike(fun_name, *args)
  check_shapes_broadcast(fun_name, *args)
  return promote_shapes(fun_name, *promote_dtypes_numeric(*args))


def aval_of(x) -> core.ShapedArray:
  return core.get_aval(x)


def ndim(x) -> int:
  return core.get_aval(x).ndim


def shape(x) -> tuple[int, ...]:
  return core.get_aval(x).shape


def dtype_of(x) -> np.dtype:
  return core.get_aval(x).dtype


def canonicalize_axis(axis: int, num_dims: int) -> int:
  """A possibly negative axis as an index in [0, num_dims); NumPy's error otherwise."""
  import operator
  axis = operator.index(axis)
  if not -num_dims <= axis < num_dims:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {num_dims}")
  return axis + num_dims if axis < 0 else axis


def check_no_out(fun_name: str, out) -> None:
  if out is not None:
    raise NotImplementedError(f"The 'out' argument to jnp.{fun_name} is not supported.")
