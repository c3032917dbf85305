"""Summary statistics of SciPy on xjax arrays: `mode`, `rankdata`, `sem` (mirrors
`jax.scipy.stats.mode`, `jax.scipy.stats.rankdata` and `jax.scipy.stats.sem`)."""
from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

import xjax.numpy as jnp
from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.numpy.util import canonicalize_axis, check_arraylike, promote_args_inexact
from xjax._src.vmap import vmap

_NAN_POLICIES = ("propagate", "omit", "raise")


def _check_nan_policy(nan_policy: str, fun_name: str) -> None:
  """Only "propagate" is supported: NaNs cannot be inspected while tracing (JAX's errors)."""
  if nan_policy not in _NAN_POLICIES:
    raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                     "{'propagate', 'omit', 'raise'}")
  if nan_policy == "omit":
    raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
  if nan_policy == "raise":
    raise NotImplementedError(
        f"In order to best JIT compile `{fun_name}`, we cannot know whether `x` contains nans. "
        f"Please check if nans exist in `x` outside of the `{fun_name}` function.")


class ModeResult(NamedTuple):
  """The result of `mode`: the modal values and how often each occurs."""
  mode: jnp.ndarray
  count: jnp.ndarray


def _column_mode(column):
  """The smallest most frequent value of a 1-D array and its count (NaNs count as one value)."""
  values, counts = jnp.unique(column, return_counts=True, size=column.shape[0])
  return values[jnp.argmax(counts)], jnp.max(counts)


@functools.partial(jit, static_argnames=("axis", "nan_policy", "keepdims"))
def mode(a, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False):
  """The most common value along `axis` of `a`, and its number of occurrences.

  Ties go to the smallest value; NaNs are counted together as one value.

  Args:
    a: an array (a scalar is treated as shape (1,)); any real dtype.
    axis: the axis to reduce (default 0), or None for the flattened array.
    nan_policy: only "propagate" is supported.
    keepdims: keep the reduced axis (all axes for axis=None) with size 1.

  Returns:
    `ModeResult(mode, count)`: the modes in a's dtype and the counts in the
    default integer dtype, with a's shape less `axis`. Along an empty axis the
    mode is NaN and the count 0, both in the default float dtype.

  Raises:
    ValueError: an unknown nan_policy, or `axis` out of range.
    NotImplementedError: nan_policy "omit" or "raise".

  Mirrors `jax.scipy.stats.mode` (jitted, with static axis, nan_policy, keepdims).
  """
  check_arraylike("mode", a)
  x = jnp.atleast_1d(a)
  _check_nan_policy(nan_policy, "mode")
  if axis is None:
    out_shape = (1,) * x.ndim if keepdims else ()
    x = jnp.ravel(x)[:, None]
  else:
    axis = canonicalize_axis(axis, x.ndim)
    out_shape = tuple(1 if i == axis else s for i, s in enumerate(x.shape)
                      if keepdims or i != axis)
    x = jnp.moveaxis(x, axis, 0)
    x = jnp.reshape(x, (x.shape[0], math.prod(x.shape[1:])))
  if x.shape[0] == 0:
    float_dtype = dtypes.default_float_dtype()
    modes = jnp.full(x.shape[1], np.nan, float_dtype)
    counts = jnp.zeros(x.shape[1], float_dtype)
  else:
    modes, counts = vmap(_column_mode, in_axes=1)(x)
  return ModeResult(jnp.reshape(modes, out_shape), jnp.reshape(counts, out_shape))


def _rank_1d(a, method: str):
  """Ranks (from 1) of the 1-D array `a` by `method`; all NaN when `a` holds a NaN."""
  out_dtype = dtypes.default_float_dtype()
  order = jnp.argsort(a, stable=True)
  sorted_a = a[order]
  if method == "ordinal":
    ranks = jnp.zeros(a.shape, out_dtype).at[order].set(jnp.arange(1, a.size + 1, dtype=out_dtype))
  elif method == "dense":
    starts_run = jnp.concatenate([jnp.ones(min(a.size, 1), bool), sorted_a[1:] != sorted_a[:-1]])
    dense_sorted = jnp.cumsum(starts_run).astype(out_dtype)
    ranks = jnp.zeros(a.shape, out_dtype).at[order].set(dense_sorted)
  else:
    # Ties occupy positions [first, last] of the sorted array.
    first = jnp.searchsorted(sorted_a, a, side="left").astype(out_dtype) + 1
    last = jnp.searchsorted(sorted_a, a, side="right").astype(out_dtype)
    ranks = {"min": first, "max": last, "average": (first + last) / 2}[method]
  return jnp.where(jnp.any(jnp.isnan(a)), np.array(np.nan, out_dtype), ranks)


@functools.partial(jit, static_argnames=("method", "axis", "nan_policy"))
def rankdata(a, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate"):
  """The ranks (1 to n) of the data in `a`, ties handled by `method`.

  Args:
    a: an array of any real dtype.
    method: "average" (mean rank of the tied group, the default), "min",
      "max", "dense" (consecutive ranks for the distinct values) or "ordinal"
      (ties broken by position).
    axis: rank each 1-D slice along this axis; None (default) ranks the
      flattened array.
    nan_policy: only "propagate" is supported: a slice holding a NaN gets NaN ranks.

  Returns:
    The ranks in the default float dtype, of a's shape (flattened for axis=None).

  Raises:
    ValueError: an unknown method or nan_policy.
    NotImplementedError: nan_policy "omit" or "raise".

  Mirrors `jax.scipy.stats.rankdata` (jitted, with static method, axis, nan_policy).
  """
  check_arraylike("rankdata", a)
  _check_nan_policy(nan_policy, "rankdata")
  if method not in ("average", "min", "max", "dense", "ordinal"):
    raise ValueError(f"unknown method '{method}'")
  if axis is not None:
    return jnp.apply_along_axis(_rank_1d, axis, a, method)
  return _rank_1d(jnp.ravel(a), method)


@functools.partial(jit, static_argnames=("axis", "nan_policy", "keepdims"))
def sem(a, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False):
  """The standard error of the mean: std(a, ddof) / sqrt(number of values), along `axis`.

  Args:
    a: an array (promoted to an inexact dtype).
    axis: the axis to reduce (default 0), or None for all values.
    ddof: the delta degrees of freedom of the standard deviation (default 1);
      it may be traced.
    nan_policy: "propagate" (NaNs give NaN) or "omit" (NaNs are left out of
      both the standard deviation and the count).
    keepdims: keep the reduced axes with size 1.

  Returns:
    An array of a's inexact dtype, with a's shape less the reduced axes.

  Raises:
    ValueError: nan_policy other than "propagate" or "omit" ("<policy> is not supported").

  Mirrors `jax.scipy.stats.sem` (jitted, with static axis, nan_policy, keepdims).
  """
  b, = promote_args_inexact("sem", a)
  if nan_policy == "propagate":
    count = b.size if axis is None else b.shape[axis]
    return jnp.std(b, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(count).astype(b.dtype)
  if nan_policy == "omit":
    count = jnp.sum(~jnp.isnan(b), axis, keepdims=keepdims)
    return jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(count).astype(b.dtype)
  raise ValueError(f"{nan_policy} is not supported")
