"""Reductions: sum, prod, max, min, all, any, mean, var, std, the nan* forms,
argmax/argmin, count_nonzero and the cumulative reductions.

As in JAX, the public functions check their arguments and canonicalize the
axis, then call an inline `jit` with the axis, dtype and keepdims static, so
under a trace they print as their lax reductions (``reduce_sum[axes=(1,)]``)
and eagerly they compile once per signature. `var`, `std`, the nan* family
and the cumulative reductions are non-inline jits in JAX, so they print as
nested ``jit[name=...]`` equations.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from xjax._src.array import Array
from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax import elementwise as lax
from xjax._src.lax import reductions as lax_reductions
from xjax._src.lax import structural as lax_structural
from xjax._src.lax import transcendental as lax_tr
from xjax._src.numpy import util
from xjax._src.numpy.util import check_no_out, const_like, dtype_of, ensure_arraylike, where_


def _is_int_or_bool(dtype) -> bool:
  return dtype == np.bool_ or dtypes.issubdtype(dtype, np.integer)


# ----------------------------------------------------------------------------
# Helpers


def _named_jit(name: str, **jit_kwargs):
  """`jit`, with the traced function named `name` (the name printed in jaxprs)."""
  def wrap(fn):
    fn.__name__ = fn.__qualname__ = name
    return jit(fn, **jit_kwargs)
  return wrap


def _static_axis(axis):
  """`axis` as None, an int or a tuple of ints (hashable, for a static jit argument)."""
  axis = util.concrete_or_error(axis, "The axis argument must be known statically.")
  if axis is None:
    return None
  try:
    return operator.index(axis)
  except TypeError:
    return tuple(operator.index(a) for a in axis)


def _reduction_axes(a, axis) -> tuple[int, ...]:
  nd = util.ndim(a)
  if axis is None:
    return tuple(range(nd))
  axes = axis if isinstance(axis, tuple) else (axis,)
  canon = tuple(util.canonicalize_axis(x, nd) for x in axes)
  if len(set(canon)) != len(canon):
    raise ValueError(f"duplicate value in 'axis': {axis}")
  return canon


def _promote_integer_dtype(dtype) -> np.dtype:
  # Integer sums and products accumulate in the default integer width, as in JAX.
  if dtype == np.bool_:
    return dtypes.default_int_dtype()
  if dtypes.issubdtype(dtype, np.unsignedinteger):
    default = dtypes.default_uint_dtype()
    return default if np.iinfo(dtype).bits < np.iinfo(default).bits else np.dtype(dtype)
  if dtypes.issubdtype(dtype, np.integer):
    default = dtypes.default_int_dtype()
    return default if np.iinfo(dtype).bits < np.iinfo(default).bits else np.dtype(dtype)
  return np.dtype(dtype)


def _upcast_f16(dtype) -> np.dtype:
  return np.dtype(np.float32) if np.dtype(dtype) in (np.float16, dtypes.bfloat16) else np.dtype(dtype)


def _check_where(name: str, where):
  if where is None:
    return None
  where = ensure_arraylike(name, where)
  if dtype_of(where) != np.bool_:
    raise ValueError(f"jnp.{name}: where must be None or a boolean array; "
                     f"got where.dtype={dtype_of(where)!r}.")
  return where


def _init_val(dtype, value) -> np.ndarray:
  """The identity `value` as a host constant of `dtype` (clamped to the dtype's range)."""
  if dtype == np.bool_:
    return np.array(value > 0, dtype)
  if np.isinf(value) and dtypes.issubdtype(dtype, np.integer):
    info = np.iinfo(dtype)
    return np.array(info.min if value < 0 else info.max, dtype)
  if np.isinf(value) and dtypes.issubdtype(dtype, np.floating) and np.isnan(
      np.array(value, dtype)):
    info = dtypes.finfo(dtype)
    return np.array(info.min if value < 0 else info.max, dtype)
  return np.array(value, dtype)


def _cast_to_bool(x):
  if dtypes.issubdtype(dtype_of(x), np.complexfloating):
    x = lax.real(x)
  return lax.convert_element_type(x, np.bool_)


def _cast_to_numeric(x):
  return util.promote_dtypes_numeric(x)[0]


def _expand_dims(x, dims):
  return lax_structural.expand_dims(x, tuple(dims))


_OPS = {
    "add": (lax.add, "reduce_sum"), "mul": (lax.mul, "reduce_prod"),
    "max": (lax.max, "reduce_max"), "min": (lax.min, "reduce_min"),
    "and": (lax.bitwise_and, "reduce_and"), "or": (lax.bitwise_or, "reduce_or"),
}


def _reduction(a, name: str, op: str, init_value, *, has_identity: bool = True,
               preproc=None, bool_op: str | None = None, upcast_f16: bool = False,
               axis=None, dtype=None, out=None, keepdims: bool = False, initial=None,
               where=None, promote_integers: bool = False):
  """The reduction of `a` by `op` over `axis`, with NumPy's dtype, keepdims,
  initial and where semantics."""
  check_no_out(name, out)
  a = ensure_arraylike(name, a)
  where = _check_where(name, where)
  if initial is None and not has_identity and where is not None:
    raise ValueError(f"reduction operation {name} does not have an identity, so to use a "
                     "where mask one has to specify 'initial'")
  a = preproc(a) if preproc else a
  axes = _reduction_axes(a, axis)
  if initial is None and not has_identity:
    shp = util.shape(a)
    if not builtins.all(shp[d] >= 1 for d in axes):
      raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
  if dtype is None:
    result_dtype = dtype_of(a)
    if promote_integers:
      result_dtype = _promote_integer_dtype(result_dtype)
  else:
    result_dtype = dtypes.check_user_dtype_supported(dtype, name)
  if upcast_f16 and dtypes.issubdtype(result_dtype, np.inexact):
    computation_dtype = _upcast_f16(result_dtype)
  else:
    computation_dtype = result_dtype
  a = lax.convert_element_type(a, computation_dtype)
  if computation_dtype == np.bool_ and bool_op is not None:
    op = bool_op
  op_fn, reduce_name = _OPS[op]
  init_val = _init_val(computation_dtype, init_value)
  if where is not None:
    a = where_(where, a, init_val)
  result = getattr(lax_reductions, reduce_name)(a, axes)
  if initial is not None:
    initial_arr = lax.convert_element_type(util._unwrap(initial), computation_dtype)
    if util.ndim(initial_arr) != 0:
      raise ValueError("initial value must be a scalar. "
                       f"Got array of shape {util.shape(initial_arr)}")
    result = op_fn(initial_arr, result)
  if keepdims:
    result = _expand_dims(result, axes)
  return lax.convert_element_type(result, dtype or result_dtype)


_REDUCTION_STATICS = ("axis", "dtype", "keepdims", "promote_integers")


@jit(static_argnames=_REDUCTION_STATICS, inline=True)
def _reduce_sum(a, axis=None, dtype=None, keepdims=False, initial=None, where=None,
                promote_integers=True):
  return _reduction(a, "sum", "add", 0, preproc=_cast_to_numeric, bool_op="or",
                    upcast_f16=dtype is None, axis=axis, dtype=dtype, keepdims=keepdims,
                    initial=initial, where=where, promote_integers=promote_integers)


@jit(static_argnames=_REDUCTION_STATICS, inline=True)
def _reduce_prod(a, axis=None, dtype=None, keepdims=False, initial=None, where=None,
                 promote_integers=True):
  return _reduction(a, "prod", "mul", 1, preproc=_cast_to_numeric, bool_op="and",
                    upcast_f16=dtype is None, axis=axis, dtype=dtype, keepdims=keepdims,
                    initial=initial, where=where, promote_integers=promote_integers)


@jit(static_argnames=("axis", "dtype", "keepdims"), inline=True)
def _reduce_max(a, axis=None, dtype=None, keepdims=False, initial=None, where=None):
  return _reduction(a, "max", "max", -np.inf, has_identity=False, bool_op="or", axis=axis,
                    dtype=dtype, keepdims=keepdims, initial=initial, where=where)


@jit(static_argnames=("axis", "dtype", "keepdims"), inline=True)
def _reduce_min(a, axis=None, dtype=None, keepdims=False, initial=None, where=None):
  return _reduction(a, "min", "min", np.inf, has_identity=False, bool_op="and", axis=axis,
                    dtype=dtype, keepdims=keepdims, initial=initial, where=where)


@jit(static_argnames=("axis", "keepdims"), inline=True)
def _reduce_all(a, axis=None, keepdims=False, where=None):
  return _reduction(a, "all", "and", True, preproc=_cast_to_bool, axis=axis,
                    keepdims=keepdims, where=where)


@jit(static_argnames=("axis", "keepdims"), inline=True)
def _reduce_any(a, axis=None, keepdims=False, where=None):
  return _reduction(a, "any", "or", False, preproc=_cast_to_bool, axis=axis,
                    keepdims=keepdims, where=where)


def _reduction_doc(name: str, what: str, extra: str = "") -> str:
  return (f"{what} of the elements of `a` over `axis`.\n\n  Args:\n    a: an array or scalar "
          "(lists and tuples are refused).\n    axis: None (all axes), an int or a tuple of "
          "ints.\n" + extra + "    keepdims: keep the reduced axes with size 1.\n"
          "    out: unsupported; must be None.\n\n  Returns:\n    The reduced array.\n\n"
          "  Raises:\n    TypeError: `a` is not array-like.\n    ValueError: an axis is out "
          "of bounds.\n    NotImplementedError: `out` is given.\n\n"
          f"  Mirrors `jax.numpy.{name}`.\n  ")


_DTYPE_ARGS = ("    dtype: the result dtype (integers and bools accumulate in the default "
               "integer dtype).\n    initial: a scalar starting value.\n    where: a boolean "
               "mask of the elements to include.\n")


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,  # noqa: A001
        promote_integers=True):
  if (type(a) is Array and axis is None and dtype is None and out is None and not keepdims
      and initial is None and where is None and promote_integers is True):
    return _reduce_sum(a)  # the common call: no keyword arguments to match on dispatch
  check_no_out("sum", out)
  return _reduce_sum(ensure_arraylike("sum", a), axis=_static_axis(axis), dtype=dtype,
                     keepdims=bool(keepdims), initial=initial, where=where,
                     promote_integers=promote_integers)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
  check_no_out("prod", out)
  return _reduce_prod(ensure_arraylike("prod", a), axis=_static_axis(axis), dtype=dtype,
                      keepdims=bool(keepdims), initial=initial, where=where,
                      promote_integers=promote_integers)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
  check_no_out("max", out)
  return _reduce_max(ensure_arraylike("max", a), axis=_static_axis(axis),
                     keepdims=bool(keepdims), initial=initial, where=where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
  check_no_out("min", out)
  return _reduce_min(ensure_arraylike("min", a), axis=_static_axis(axis),
                     keepdims=bool(keepdims), initial=initial, where=where)


def all(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
  check_no_out("all", out)
  return _reduce_all(ensure_arraylike("all", a), axis=_static_axis(axis),
                     keepdims=bool(keepdims), where=where)


def any(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
  check_no_out("any", out)
  return _reduce_any(ensure_arraylike("any", a), axis=_static_axis(axis),
                     keepdims=bool(keepdims), where=where)


sum.__doc__ = _reduction_doc("sum", "The sum", _DTYPE_ARGS)
prod.__doc__ = _reduction_doc("prod", "The product", _DTYPE_ARGS)
max.__doc__ = _reduction_doc("max", "The maximum (NaN-propagating)",
                             "    initial: a scalar lower bound.\n    where: a boolean mask "
                             "(needs `initial`).\n")
min.__doc__ = _reduction_doc("min", "The minimum (NaN-propagating)",
                             "    initial: a scalar upper bound.\n    where: a boolean mask "
                             "(needs `initial`).\n")
all.__doc__ = _reduction_doc("all", "Whether all are true", "    where: a boolean mask.\n")
any.__doc__ = _reduction_doc("any", "Whether any is true", "    where: a boolean mask.\n")
amax, amin = max, min


# ----------------------------------------------------------------------------
# mean, var, std


def _count(a, axes, keepdims, where, dtype):
  if where is None:
    shp = util.shape(a)
    n = int(np.prod([shp[d] for d in axes], dtype=np.int64))
    return lax.convert_element_type(n, dtype)
  return sum(util.broadcast_to(where, util.shape(a)), axes, dtype=dtype, keepdims=keepdims)


@jit(static_argnames=("axis", "dtype", "keepdims", "upcast_f16_for_computation"), inline=True)
def _mean(a, axis=None, dtype=None, keepdims=False, *, upcast_f16_for_computation=True,
          where=None):
  a = ensure_arraylike("mean", a)
  where = _check_where("mean", where)
  if dtype is None:
    result_dtype = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(dtype_of(a)))
  else:
    result_dtype = dtypes.check_user_dtype_supported(dtype, "mean")
  if upcast_f16_for_computation and dtypes.issubdtype(result_dtype, np.inexact):
    computation_dtype = _upcast_f16(result_dtype)
  else:
    computation_dtype = result_dtype
  axes = _reduction_axes(a, axis)
  normalizer = _count(a, axes, keepdims, where, computation_dtype)
  total = sum(a, axis, dtype=computation_dtype, keepdims=keepdims, where=where)
  return lax.convert_element_type(lax.div(total, normalizer), result_dtype)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
  """The arithmetic mean of `a` over `axis` (integers give the default float dtype).

  Args:
    a: an array or scalar.
    axis: None (all axes), an int or a tuple of ints.
    dtype: the result dtype.
    out: unsupported; must be None.
    keepdims: keep the reduced axes with size 1.
    where: a boolean mask of the elements to include.

  Returns:
    The mean (NaN over empty axes).

  Mirrors `jax.numpy.mean`.
  """
  check_no_out("mean", out)
  # As in JAX, float16/bfloat16 are summed in float32 only when no dtype is asked for.
  return _mean(ensure_arraylike("mean", a), axis=_static_axis(axis), dtype=dtype,
               keepdims=bool(keepdims), where=where, upcast_f16_for_computation=dtype is None)


def _var_promote_types(a_dtype, dtype):
  if dtype is not None:
    if (not dtypes.issubdtype(dtype, np.complexfloating)
        and dtypes.issubdtype(a_dtype, np.complexfloating)):
      raise ValueError("jax.numpy.var does not yet support real dtype parameters when "
                       "computing the variance of an array of complex values. The "
                       "semantics of numpy.var seem unclear in this case. Please comment "
                       "on https://github.com/jax-ml/jax/issues/2283 if this behavior is "
                       "important to you.")
    computation_dtype = dtype
  elif not dtypes.issubdtype(a_dtype, np.inexact):
    dtype = computation_dtype = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(a_dtype))
  else:
    dtype = np.array(0, a_dtype).real.dtype
    computation_dtype = a_dtype
  return _upcast_f16(computation_dtype), np.dtype(dtype)


@jit(static_argnames=("axis", "dtype", "keepdims"))
def _var(a, *, axis=None, dtype=None, correction=0, keepdims=False, where=None, a_mean=None):
  where = _check_where("var", where)
  computation_dtype, dtype = _var_promote_types(dtype_of(a), dtype)
  a = lax.convert_element_type(a, computation_dtype)
  if a_mean is None:
    a_mean = mean(a, axis, dtype=computation_dtype, keepdims=True, where=where)
  else:
    a_mean = lax.convert_element_type(ensure_arraylike("var", a_mean), computation_dtype)
  centered = lax.sub(a, a_mean)
  if dtypes.issubdtype(computation_dtype, np.complexfloating):
    centered = lax.real(lax.mul(centered, lax.conj(centered)))
    computation_dtype = dtype_of(centered)
  else:
    centered = lax.square(centered)
  axes = _reduction_axes(a, axis)
  normalizer = _count(a, axes, keepdims, where, computation_dtype)
  normalizer = lax.sub(normalizer, lax.convert_element_type(correction, computation_dtype))
  total = sum(centered, axis, dtype=computation_dtype, keepdims=keepdims, where=where)
  result = lax.convert_element_type(lax.div(total, normalizer), dtype)
  return where_(lax.gt(normalizer, const_like(normalizer, 0)), result, np.nan)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
  """The variance of `a` over `axis`: mean(|a - mean(a)|**2) * n / (n - correction).

  Args:
    a: an array or scalar.
    axis: None (all axes), an int or a tuple of ints.
    dtype: the result dtype.
    out: unsupported; must be None.
    ddof: the degrees-of-freedom correction (NumPy's name for `correction`).
    keepdims: keep the reduced axes with size 1.
    where: a boolean mask of the elements to include.
    correction: the degrees-of-freedom correction (the array API's name).
    mean: a precomputed mean (with keepdims=True shape).

  Returns:
    The variance (a real dtype for complex input; NaN where n <= correction).

  Raises:
    ValueError: both `ddof` and `correction` are given.

  Mirrors `jax.numpy.var`.
  """
  check_no_out("var", out)
  correction = _correction(ddof, correction, "var")
  if dtype is not None:
    dtype = dtypes.check_user_dtype_supported(dtype, "var")
  return _var(ensure_arraylike("var", a), axis=_static_axis(axis), dtype=dtype,
              correction=correction, keepdims=bool(keepdims), where=where, a_mean=mean)


def _correction(ddof, correction, name):
  if correction is None:
    return ddof
  if not isinstance(ddof, int) or ddof != 0:
    raise ValueError(f"{name}: only one of correction and ddof should be specified.")
  return correction


@jit(static_argnames=("axis", "dtype", "keepdims"))
def _std(a, *, axis=None, dtype=None, correction=0, keepdims=False, where=None, a_mean=None):
  return lax_tr.sqrt(var(a, axis=axis, dtype=dtype, correction=correction, keepdims=keepdims,
                         where=where, mean=a_mean))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
  """The standard deviation of `a` over `axis`: ``sqrt(var(a, ...))``.

  Args: as for `var`; `dtype` must be inexact.

  Returns:
    The standard deviation.

  Raises:
    ValueError: a non-inexact `dtype`, or both `ddof` and `correction`.

  Mirrors `jax.numpy.std`.
  """
  check_no_out("std", out)
  correction = _correction(ddof, correction, "std")
  if dtype is not None:
    dtype = dtypes.check_user_dtype_supported(dtype, "std")
    if not dtypes.issubdtype(dtype, np.inexact):
      raise ValueError(f"dtype argument to jnp.std must be inexact; got {dtype}")
  return _std(ensure_arraylike("std", a), axis=_static_axis(axis), dtype=dtype,
              correction=correction, keepdims=bool(keepdims), where=where, a_mean=mean)


@jit(static_argnames=("axis", "keepdims"))
def count_nonzero(a, axis=None, keepdims=False):
  """The number of non-zero elements of `a` over `axis`, in the default int dtype.

  Mirrors `jax.numpy.count_nonzero`.
  """
  a = ensure_arraylike("count_nonzero", a)
  return sum(lax.ne(a, const_like(a, 0)), axis=axis, dtype=dtypes.default_int_dtype(),
             keepdims=keepdims)


def ptp(a, axis=None, out=None, keepdims=False):
  """The range ``max - min`` of `a` over `axis` (mirrors `jax.numpy.ptp`)."""
  check_no_out("ptp", out)
  a = ensure_arraylike("ptp", a)
  axis = _static_axis(axis)
  return lax.sub(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


# ----------------------------------------------------------------------------
# NaN-ignoring reductions


def _isnan(x):
  return lax.ne(x, x)


def _nan_reduction(a, name, reduction, init_val, nan_if_all_nan, axis=None, keepdims=False,
                   where=None, **kwargs):
  a = ensure_arraylike(name, a)
  where = _check_where(name, where)
  if not dtypes.issubdtype(dtype_of(a), np.inexact):
    return reduction(a, axis=axis, keepdims=keepdims, where=where, **kwargs)
  out = reduction(where_(_isnan(a), _init_val(dtype_of(a), init_val), a), axis=axis,
                  keepdims=keepdims, where=where, **kwargs)
  if nan_if_all_nan:
    return where_(all(_isnan(a), axis=axis, keepdims=keepdims), const_like(a, np.nan), out)
  return out


def _nan_doc(name: str, what: str) -> str:
  return (f"{what} of `a` over `axis`, ignoring NaNs.\n\n  Args: as for `jnp."
          f"{name[3:]}`.\n\n  Returns:\n    The reduced array.\n\n"
          f"  Mirrors `jax.numpy.{name}`.\n  ")


@_named_jit("nansum", static_argnames=("axis", "dtype", "keepdims"))
def _nansum(a, axis=None, dtype=None, keepdims=False, initial=None, where=None):
  return _nan_reduction(a, "nansum", sum, 0, False, axis=axis, dtype=dtype, keepdims=keepdims,
                        initial=initial, where=where)


@_named_jit("nanprod", static_argnames=("axis", "dtype", "keepdims"))
def _nanprod(a, axis=None, dtype=None, keepdims=False, initial=None, where=None):
  return _nan_reduction(a, "nanprod", prod, 1, False, axis=axis, dtype=dtype, keepdims=keepdims,
                        initial=initial, where=where)


@_named_jit("nanmax", static_argnames=("axis", "keepdims", "nan_if_all_nan"))
def _nanmax(a, axis=None, keepdims=False, initial=None, where=None, nan_if_all_nan=True):
  return _nan_reduction(a, "nanmax", max, -np.inf, nan_if_all_nan, axis=axis,
                        keepdims=keepdims, initial=initial, where=where)


@_named_jit("nanmin", static_argnames=("axis", "keepdims", "nan_if_all_nan"))
def _nanmin(a, axis=None, keepdims=False, initial=None, where=None, nan_if_all_nan=True):
  return _nan_reduction(a, "nanmin", min, np.inf, nan_if_all_nan, axis=axis,
                        keepdims=keepdims, initial=initial, where=where)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
  check_no_out("nansum", out)
  if dtype is not None:
    dtype = dtypes.check_user_dtype_supported(dtype, "nansum")
  return _nansum(ensure_arraylike("nansum", a), axis=_static_axis(axis), dtype=dtype,
                 keepdims=bool(keepdims), initial=initial, where=where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
  check_no_out("nanprod", out)
  if dtype is not None:
    dtype = dtypes.check_user_dtype_supported(dtype, "nanprod")
  return _nanprod(ensure_arraylike("nanprod", a), axis=_static_axis(axis), dtype=dtype,
                  keepdims=bool(keepdims), initial=initial, where=where)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
  check_no_out("nanmax", out)
  return _nanmax(ensure_arraylike("nanmax", a), axis=_static_axis(axis),
                 keepdims=bool(keepdims), initial=initial, where=where,
                 nan_if_all_nan=initial is None)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
  check_no_out("nanmin", out)
  return _nanmin(ensure_arraylike("nanmin", a), axis=_static_axis(axis),
                 keepdims=bool(keepdims), initial=initial, where=where,
                 nan_if_all_nan=initial is None)


nansum.__doc__ = _nan_doc("nansum", "The sum")
nanprod.__doc__ = _nan_doc("nanprod", "The product")
nanmax.__doc__ = _nan_doc("nanmax", "The maximum (NaN where all are NaN)")
nanmin.__doc__ = _nan_doc("nanmin", "The minimum (NaN where all are NaN)")


@_named_jit("nanmean", static_argnames=("axis", "dtype", "keepdims"))
def _nanmean(a, axis=None, dtype=None, keepdims=False, where=None):
  if _is_int_or_bool(dtype_of(a)):
    return mean(a, axis, dtype, keepdims=keepdims, where=where)
  dtype = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(dtype_of(a))) if dtype is None \
      else dtype
  not_nan = lax.bitwise_not(_isnan(a))
  normalizer = sum(not_nan, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
  return lax.div(nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where), normalizer)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
  """The mean of `a` over `axis`, ignoring NaNs (NaN where all are NaN).

  Mirrors `jax.numpy.nanmean`.
  """
  check_no_out("nanmean", out)
  a = ensure_arraylike("nanmean", a)
  where = _check_where("nanmean", where)
  if dtype is not None:
    dtype = dtypes.check_user_dtype_supported(dtype, "nanmean")
  return _nanmean(a, axis=_static_axis(axis), dtype=dtype, keepdims=bool(keepdims), where=where)


@_named_jit("nanvar", static_argnames=("axis", "dtype", "keepdims"))
def _nanvar(a, axis=None, dtype=None, correction=0, keepdims=False, where=None, a_mean=None):
  computation_dtype, dtype = _var_promote_types(dtype_of(a), dtype)
  a = lax.convert_element_type(a, computation_dtype)
  if a_mean is None:
    a_mean = nanmean(a, axis, dtype=computation_dtype, keepdims=True, where=where)
  else:
    a_mean = lax.convert_element_type(ensure_arraylike("nanvar", a_mean), computation_dtype)
  centered = where_(_isnan(a), 0, lax.sub(a, a_mean))
  if dtypes.issubdtype(computation_dtype, np.complexfloating):
    centered = lax.real(lax.mul(centered, lax.conj(centered)))
  else:
    centered = lax.square(centered)
  normalizer = sum(lax.bitwise_not(_isnan(a)), axis=axis, keepdims=keepdims, where=where)
  normalizer = lax.sub(normalizer, lax.convert_element_type(correction, dtype_of(normalizer)))
  normalizer = lax.convert_element_type(normalizer, dtype_of(centered))
  total = sum(centered, axis, keepdims=keepdims, where=where)
  result = where_(lax.le(normalizer, const_like(normalizer, 0)), np.nan,
                  lax.div(total, normalizer))
  return lax.convert_element_type(result, dtype)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           mean=None):
  """The variance of `a` over `axis`, ignoring NaNs, with `ddof` delta degrees of freedom;
  `mean` is a precomputed NaN-ignoring mean (keepdims shape) (mirrors `jax.numpy.nanvar`,
  which, unlike `var`, takes no `correction`)."""
  check_no_out("nanvar", out)
  if dtype is not None:
    dtype = dtypes.check_user_dtype_supported(dtype, "nanvar")
  return _nanvar(ensure_arraylike("nanvar", a), axis=_static_axis(axis), dtype=dtype,
                 correction=ddof, keepdims=bool(keepdims),
                 where=_check_where("nanvar", where), a_mean=mean)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           mean=None):
  """The standard deviation of `a` over `axis`, ignoring NaNs, with `ddof` delta degrees of
  freedom and an optional precomputed `mean` (mirrors `jax.numpy.nanstd`, which takes no
  `correction`)."""
  check_no_out("nanstd", out)
  return lax_tr.sqrt(nanvar(a, axis, dtype, None, ddof, keepdims, where=where, mean=mean))


# ----------------------------------------------------------------------------
# argmax / argmin


def _arg_reduction(name, lax_name):
  @_named_jit(f"_{name}", static_argnames=("axis", "keepdims"), inline=True)
  def inner(a, axis=None, keepdims=False):
    if axis is None:
      dims = list(range(util.ndim(a)))
      a = lax_structural.reshape(a, (util.aval_of(a).size,)) if util.ndim(a) != 1 else a
      axis = 0
    else:
      dims = [axis]
    axis = util.canonicalize_axis(axis, util.ndim(a))
    if util.shape(a)[axis] == 0:
      raise ValueError(f"attempt to get {name} of an empty sequence")
    result = getattr(lax_reductions, lax_name)(a, axis, dtypes.canonicalize_dtype(int))
    return _expand_dims(result, dims) if keepdims else result

  def fn(a, axis=None, out=None, keepdims=None):
    check_no_out(name, out)
    a = ensure_arraylike(name, a)
    return inner(a, None if axis is None else operator.index(axis), keepdims=bool(keepdims))
  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = (f"The index of the {'largest' if name == 'argmax' else 'smallest'} element "
                "along `axis` (of the flattened array when axis is None); the first one on "
                "ties. NaN counts as the extreme value.\n\n  Args:\n    a: an array.\n"
                "    axis: an int or None.\n    out: unsupported; must be None.\n    keepdims: "
                "keep the reduced axis with size 1.\n\n  Returns:\n    An integer array of the "
                "default int dtype.\n\n  Raises:\n    ValueError: the axis is empty.\n\n"
                f"  Mirrors `jax.numpy.{name}`.\n  ")
  return fn


argmax = _arg_reduction("argmax", "argmax")
argmin = _arg_reduction("argmin", "argmin")


def _nan_arg_reduction(name, arg_fn, fill):
  @_named_jit(f"_{name}", static_argnames=("axis", "keepdims"))
  def inner(a, axis=None, keepdims=False):
    if not dtypes.issubdtype(dtype_of(a), np.inexact):
      return arg_fn(a, axis=axis, keepdims=keepdims)
    nan_mask = _isnan(a)
    res = arg_fn(where_(nan_mask, fill, a), axis=axis, keepdims=keepdims)
    # All-NaN slices give -1 (NumPy raises): see the Sharp Bits.
    return where_(all(nan_mask, axis=axis, keepdims=keepdims), -1, res)

  def fn(a, axis=None, out=None, keepdims=None):
    check_no_out(name, out)
    a = ensure_arraylike(name, a)
    return inner(a, None if axis is None else operator.index(axis), keepdims=bool(keepdims))
  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = (f"Like `{name[3:]}`, ignoring NaNs; an all-NaN slice gives -1 (NumPy raises)."
                f"\n\n  Mirrors `jax.numpy.{name}`.\n  ")
  return fn


nanargmax = _nan_arg_reduction("nanargmax", argmax, -np.inf)
nanargmin = _nan_arg_reduction("nanargmin", argmin, np.inf)


# ----------------------------------------------------------------------------
# Cumulative reductions


def _cumulative(name, lax_name, fill_nan=False, fill_value=0, promote_integers=False):
  def inner(a, axis=None, dtype=None):
    a = ensure_arraylike(name, a)
    if axis is None or util.ndim(a) == 0:
      a = lax_structural.reshape(a, (util.aval_of(a).size,))
    if axis is None:
      axis = 0
    axis = util.canonicalize_axis(axis, util.ndim(a))
    if fill_nan:
      a = where_(_isnan(a), const_like(a, fill_value), a)
    a_dtype = dtype_of(a)
    if dtype is None:
      result_type = (_promote_integer_dtype(a_dtype) if promote_integers or a_dtype == np.bool_
                     else a_dtype)
      computation_type = result_type
    elif np.dtype(dtype) == np.bool_:
      result_type = np.dtype(np.bool_)
      if a_dtype != np.bool_:
        a = lax.ne(a, const_like(a, 0))
      computation_type = _promote_integer_dtype(result_type)
    else:
      result_type = dtypes.check_user_dtype_supported(dtype, name)
      computation_type = result_type
    a = lax.convert_element_type(a, computation_type)
    result = getattr(lax_reductions, lax_name)(a, axis)
    return lax.convert_element_type(result, result_type)
  jitted = _named_jit(name, static_argnames=("axis", "dtype"))(inner)

  def fn(a, axis=None, dtype=None, out=None):
    check_no_out(name, out)
    return jitted(ensure_arraylike(name, a), axis=None if axis is None else operator.index(axis),
                  dtype=dtype)
  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = (f"The cumulative {lax_name[3:]} of `a` along `axis` (of the flattened array "
                "when axis is None)" + (", treating NaNs as "
                                        f"{fill_value}" if fill_nan else "") + ".\n\n"
                "  Args:\n    a: an array.\n    axis: an int or None.\n    dtype: the result "
                "dtype (bools accumulate as integers).\n    out: unsupported; must be None.\n\n"
                "  Returns:\n    An array of a's shape (1-D when axis is None).\n\n"
                f"  Mirrors `jax.numpy.{name}`.\n  ")
  return fn


cumsum = _cumulative("cumsum", "cumsum")
cumprod = _cumulative("cumprod", "cumprod")
nancumsum = _cumulative("nancumsum", "cumsum", fill_nan=True, fill_value=0)
nancumprod = _cumulative("nancumprod", "cumprod", fill_nan=True, fill_value=1)


def _cumulative_array_api(name, what, cumulative, identity, promote):
  def fn(x, /, *, axis: int | None = None, dtype=None, include_initial: bool = False):
    x = ensure_arraylike(name, x)
    if util.ndim(x) == 0:
      raise ValueError(f"The input must be non-scalar to take a cumulative {what}, however a "
                       "scalar value or scalar array was given.")
    if axis is None:
      if util.ndim(x) > 1:
        raise ValueError(f"The input array has rank {util.ndim(x)}, however axis was not set to "
                         "an explicit value. The axis argument is only optional for "
                         "one-dimensional arrays.")
      axis = 0
    axis = util.canonicalize_axis(axis, util.ndim(x))
    if dtype is None and promote:
      dtype = _promote_integer_dtype(dtype_of(x))
    out = cumulative(x, axis=axis, dtype=dtype)
    if include_initial:
      pads = [(0, 0, 0)] * util.ndim(out)
      pads[axis] = (1, 0, 0)
      out = lax_structural.pad(out, const_like(out, identity), pads)
    return out
  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = (f"The cumulative {what} of `x` along `axis`, the Array API way.\n\n"
                "  Args:\n    x: an array of at least one axis.\n    axis: the axis (only "
                "optional for 1-D `x`).\n    dtype: the result dtype" +
                (" (default: integers widen to the default integer width, as `sum` does)"
                 if promote else " (bools accumulate as integers)") +
                f".\n    include_initial: start with the identity ({identity}), so the axis "
                "grows by one.\n\n  Returns:\n    An array of `x`'s shape (one longer along "
                "`axis` with `include_initial`).\n\n  Raises:\n    ValueError: `x` is 0-d, "
                "or `axis` is None with more than one axis.\n\n"
                f"  Mirrors `jax.numpy.{name}`.\n  ")
  return fn


# JAX widens small integers in cumulative_sum (as sum does) but not in cumulative_prod.
cumulative_sum = _cumulative_array_api("cumulative_sum", "sum", cumsum, 0, promote=True)
cumulative_prod = _cumulative_array_api("cumulative_prod", "product", cumprod, 1, promote=False)


@jit(static_argnames=("axis",))
def trapezoid(y, x=None, dx=1.0, axis: int = -1):
  """The integral of `y` along `axis` by the trapezoidal rule.

  Args:
    y: the sampled values.
    x: the sample points: 1-D of `y`'s length along `axis`, or of `y`'s shape;
      None for samples `dx` apart.
    dx: the spacing when `x` is None.
    axis: the axis to integrate along.

  Returns:
    An inexact array of `y`'s shape without `axis`.

  Raises:
    ValueError: `x` does not match `y` along `axis`.

  Mirrors `jax.numpy.trapezoid`.
  """
  # Deferred: ufuncs imports ufunc_api, which imports this module.
  from xjax._src.numpy import creation, ufuncs
  y = util.ensure_arraylike("trapezoid", y)
  if x is None:
    (y,) = util.promote_dtypes_inexact(y)
    spacing = creation.asarray(util.ensure_arraylike("trapezoid", dx))
    if util.ndim(spacing) > 0:
      # dx lines up with y's trailing axes, given explicit leading axes (no rank promotion)
      spacing = lax_structural.expand_dims(
          spacing, tuple(range(util.ndim(y) - util.ndim(spacing))))
      spacing = _move_to_last(spacing, util.canonicalize_axis(axis, util.ndim(spacing)))
  else:
    y, x = util.promote_dtypes_inexact(y, util.ensure_arraylike("trapezoid", x))
    if util.ndim(x) == 1:
      spacing = lax.sub(x[1:], x[:-1])
    else:
      x = _move_to_last(x, util.canonicalize_axis(axis, util.ndim(x)))
      spacing = lax.sub(x[..., 1:], x[..., :-1])
    if util.shape(spacing)[-1:] != (builtins.max(util.shape(y)[axis] - 1, 0),):
      raise ValueError(f"trapezoid: x of shape {util.shape(x)} does not match y along axis "
                       f"{axis}")
  y = _move_to_last(y, util.canonicalize_axis(axis, util.ndim(y)))
  if util.ndim(spacing) == 0 or util.shape(spacing)[-1] == 1:
    # A spacing constant along the axis (as JAX): dx * (sum(y) - (y[0] + y[-1]) / 2); an
    # empty axis raises IndexError there, as in JAX 0.10.2.
    d = spacing if util.ndim(spacing) == 0 else spacing[..., 0]
    ends = ufuncs.multiply(0.5, ufuncs.add(y[..., 0], y[..., -1]))
    return ufuncs.multiply(d, ufuncs.subtract(sum(y, axis=-1), ends))
  return ufuncs.multiply(0.5, sum(ufuncs.multiply(spacing, ufuncs.add(y[..., 1:], y[..., :-1])),
                                  axis=-1))


def _move_to_last(x, axis):
  perm = tuple(d for d in range(util.ndim(x)) if d != axis) + (axis,)
  return lax_structural.transpose(x, perm)
