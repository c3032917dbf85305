"""Functions of functions: apply_along_axis, apply_over_axes, fromfunction (built on vmap,
as JAX does), and the function form of `astype`."""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src.lax import structural as lax_structural
from xjax._src.numpy import array_methods
from xjax._src.numpy import creation
from xjax._src.numpy import util
from xjax._src.vmap import vmap


def apply_along_axis(func1d, axis: int, arr, *args, **kwargs):
  """``func1d`` applied to every 1-D slice of `arr` along `axis`, by vmap over the other axes.

  Args:
    func1d: a function of a 1-D array (and `args`, `kwargs`).
    axis: the axis the slices run along.
    arr: the array.

  Returns:
    The results stacked: `arr`'s other axes around `func1d`'s output axes,
    which take `axis`'s place.

  Raises:
    ValueError: `axis` out of range.

  Mirrors `jax.numpy.apply_along_axis`.
  """
  arr = util.ensure_arraylike("apply_along_axis", arr)
  num_dims = util.ndim(arr)
  axis = util.canonicalize_axis(axis, num_dims)
  fun = lambda x: func1d(x, *args, **kwargs)
  for i in range(1, num_dims - axis):
    fun = vmap(fun, in_axes=i, out_axes=-1)
  for _ in range(axis):
    fun = vmap(fun, in_axes=0, out_axes=0)
  return fun(arr)


def apply_over_axes(func, a, axes):
  """``func(a, axis)`` applied for each axis in turn, keeping the dimensions.

  Args:
    func: a function ``(array, axis) -> array`` returning an array of the
      same rank or one axis less (that axis is restored with size 1).
    a: the array.
    axes: the axes, in order.

  Returns:
    An array of `a`'s rank.

  Raises:
    ValueError: `func` returns an array of another rank.

  Mirrors `jax.numpy.apply_over_axes`.
  """
  a = util.ensure_arraylike("apply_over_axes", a)
  for axis in axes:
    b = func(a, axis)
    if util.ndim(b) == util.ndim(a):
      a = b
    elif util.ndim(b) == util.ndim(a) - 1:
      a = lax_structural.expand_dims(b, (util.canonicalize_axis(axis, util.ndim(a)),))
    else:
      raise ValueError("function is not returning an array of the correct shape")
  return a


def fromfunction(function, shape, *, dtype=float, **kwargs):
  """``function(i0, i1, ...)`` of index grids for `shape`, built by vmap over each axis.

  Args:
    function: a function of one index array per axis (and `kwargs`).
    shape: the shape of the index grid.
    dtype: the dtype of the indices.

  Returns:
    `function`'s output for the whole grid.

  Raises:
    TypeError: `shape` is not a sequence of integers.

  Mirrors `jax.numpy.fromfunction`.
  """
  shape = core.canonicalize_shape(shape, context="shape argument of jnp.fromfunction()")
  for i in range(len(shape)):
    in_axes = [0 if i == j else None for j in range(len(shape))]
    function = vmap(function, in_axes=tuple(in_axes[::-1]))
  return function(*(creation.arange(s, dtype=dtype) for s in shape), **kwargs)


def astype(x, dtype, /, *, copy: bool = False, device=None):
  """`x` converted to `dtype` (complex to bool compares with zero).

  Args:
    x: an array or scalar.
    dtype: the target dtype (None: the default float dtype).
    copy: return a copy even when no conversion is needed.
    device: an optional device to commit the result to.

  Returns:
    An array of `x`'s shape and `dtype`.

  Raises:
    TypeError: `x` is not an array or scalar, or `dtype` is not supported.

  Mirrors `jax.numpy.astype`.
  """
  x = util.ensure_arraylike("astype", x)
  if not hasattr(x, "aval"):
    x = creation.asarray(x)
  out = array_methods._astype(x, dtype, copy=copy)
  return creation.asarray(out, device=device) if device is not None else out


iterable = np.iterable
