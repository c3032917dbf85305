"""SciPy's discrete cosine transforms on xjax arrays (mirrors `jax.scipy.fft`).

Only the type-II DCT (and its inverse) exists, as in JAX. It is computed with
one complex FFT of the same length (Makhoul, "A Fast Cosine Transform in One
and Two Dimensions", 1980): reorder the input as even samples followed by
the reversed odd samples, take the FFT and rotate bin k by exp(-i pi k / 2N).
A complex input is transformed as its real and imaginary parts.
"""
from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax import elementwise as lax
from xjax._src.lax import slicing as lax_slicing
from xjax._src.lax import structural as lax_structural
from xjax._src.lax import transcendental as lax_tr
from xjax._src.numpy import creation
from xjax._src.numpy import fft as jnp_fft
from xjax._src.numpy import lax_numpy
from xjax._src.numpy import ufuncs
from xjax._src.numpy.util import (canonicalize_axis, ensure_arraylike, promote_dtypes_complex,
                                  promote_dtypes_inexact)


def _check_type_and_norm(name: str, type: int, norm) -> None:  # noqa: A002 - SciPy's name
  if type != 2:
    raise NotImplementedError("Only DCT type 2 is implemented.")
  if norm is not None and norm not in ("backward", "ortho"):
    raise ValueError(f"jax.scipy.fft.{name}: {norm=!r} is not implemented")


def _other_axes(ndim: int, axis: int) -> list[int]:
  return [a for a in range(ndim) if a != axis]


def _W4(N: int, k):
  """The twiddle factors exp(-i pi k / 2N)."""
  N_arr, k = promote_dtypes_complex(N, k)
  return ufuncs.exp(-.5j * np.pi * k / N_arr)


def _dct_interleave(x, axis: int):
  """[x0, x2, x4, ..., x5, x3, x1] along `axis`: evens, then the odds reversed."""
  evens = lax_slicing.slice_in_dim(x, None, None, 2, axis)
  odds = lax_structural.rev(lax_slicing.slice_in_dim(x, 1, None, 2, axis), (axis,))
  return lax_structural.concatenate([evens, odds], axis)


def _dct_deinterleave(x, axis: int):
  """The inverse of `_dct_interleave`."""
  n = x.shape[axis]
  half = math.ceil(n / 2)
  whole = [slice(None)] * x.ndim

  def along(s):
    idx = list(whole)
    idx[axis] = s
    return tuple(idx)

  evens = x[along(slice(None, half))]
  odds = lax_structural.rev(x[along(slice(half, None))], (axis,))
  out = creation.zeros(x.shape, dtype=x.dtype)
  out = out.at[along(slice(None, None, 2))].set(evens)
  return out.at[along(slice(1, None, 2))].set(odds)


def _dct_ortho_norm(out, axis: int):
  """Scales bin 0 by sqrt(1 / 4N) and the others by sqrt(1 / 2N)."""
  n = out.shape[axis]
  factor = lax_structural.concatenate([lax_structural.full((1,), 4, out.dtype),
                                       lax_structural.full((n - 1,), 2, out.dtype)], 0)
  factor = lax_structural.expand_dims(factor, _other_axes(out.ndim, axis))
  return out / lax_tr.sqrt(factor * n)


def _resize(x, sizes: dict):
  """`x` zero-padded (or cropped) at the end of each axis in `sizes` to that size."""
  config = [(0, sizes[a] - x.shape[a] if a in sizes else 0, 0) for a in range(x.ndim)]
  return lax_structural.pad(x, creation.array(0, x.dtype), config)


def _split_complex(fn, x, **kwargs):
  return lax.complex(fn(ufuncs.real(x), **kwargs), fn(ufuncs.imag(x), **kwargs))


def dct(x, type: int = 2, n: int | None = None, axis: int = -1,  # noqa: A002
        norm: str | None = None):
  """The type-II discrete cosine transform of `x` along `axis`:
  ``y[k] = 2 * sum_j x[j] cos(pi k (2j + 1) / 2N)``.

  Args:
    x: an array (integers and bools are transformed as float32; complex as
      real and imaginary parts).
    type: the DCT type; only 2 is implemented.
    n: the transform length: `x` is zero-padded or cropped to `n` along `axis`.
    axis: the axis transformed.
    norm: None or "backward" (no scaling), or "ortho" (orthonormal).

  Returns:
    A float (or complex, for complex `x`) array, `x`'s shape with `n` elements
    along `axis`.

  Raises:
    NotImplementedError: `type` is not 2.
    ValueError: another `norm`, or `axis` out of range.
    TypeError: `x` is a list or tuple.

  Example:
    >>> import xjax.numpy as jnp
    >>> import xjax.scipy.fft
    >>> xjax.scipy.fft.dct(jnp.array([1., 2., 3., 4.]))
    Array([20.        , -6.308644  ,  0.        , -0.44834155], dtype=float32)

  Mirrors `jax.scipy.fft.dct`.
  """
  x = ensure_arraylike("dct", x)
  _check_type_and_norm("dct", type, norm)
  return _dct(x, n, axis, norm)


# Inlined into an enclosing trace (the jaxpr is JAX's); one executable when eager.
@jit(static_argnames=("n", "axis", "norm"), inline=True)
def _dct(x, n, axis, norm):
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    return _split_complex(_dct, x, n=n, norm=norm, axis=axis)
  axis = canonicalize_axis(axis, x.ndim)
  if n is not None:
    x = _resize(x, {axis: n})
  N = x.shape[axis]
  V = jnp_fft.fft(_dct_interleave(x, axis), axis=axis)
  k = lax_structural.expand_dims(creation.arange(N, dtype=ufuncs.real(V).dtype),
                                 _other_axes(x.ndim, axis))
  out = 2 * ufuncs.real(V * _W4(N, k))
  return _dct_ortho_norm(out, axis) if norm == "ortho" else out


def _dct2(x, axes, norm):
  """The 2-D DCT-II over two axes with one 2-D FFT."""
  axis1, axis2 = (canonicalize_axis(a, x.ndim) for a in axes)
  N1, N2 = x.shape[axis1], x.shape[axis2]
  V = jnp_fft.fftn(_dct_interleave(_dct_interleave(x, axis1), axis2), axes=axes)
  k1 = lax_structural.expand_dims(creation.arange(N1, dtype=V.dtype), _other_axes(x.ndim, axis1))
  k2 = lax_structural.expand_dims(creation.arange(N2, dtype=V.dtype), _other_axes(x.ndim, axis2))
  # Bin (k1, k2) combines V[k1, k2] and V[k1, -k2] (Makhoul's 2-D rotation).
  V_neg = lax_numpy.roll(lax_numpy.flip(V, axis=axis2), shift=1, axis=axis2)
  out = _W4(N1, k1) * (_W4(N2, k2) * V + _W4(N2, -k2) * V_neg)
  out = 2 * ufuncs.real(out)
  if norm == "ortho":
    return _dct_ortho_norm(_dct_ortho_norm(out, axis1), axis2)
  return out


def _sizes_and_axes(x, s, axes):
  """JAX's reading of dctn's `s` (an int or sequence) and `axes` (default: the
  last len(s) axes, or all)."""
  if s is not None:
    try:
      s = list(s)
    except TypeError:
      s = [operator.index(s)]
    if len(s) > x.ndim:
      raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}")
  if axes is None:
    axes = tuple(range(x.ndim - len(s), x.ndim)) if s is not None else tuple(range(x.ndim))
  elif isinstance(axes, Sequence):
    axes = tuple(canonicalize_axis(a, x.ndim) for a in axes)
    if len(set(axes)) != len(axes):
      raise ValueError(f"repeated axis: {axes}")
  else:
    axes = (canonicalize_axis(axes, x.ndim),)
  return s, axes


def dctn(x, type: int = 2, s: Sequence[int] | None = None,  # noqa: A002
         axes: Sequence[int] | None = None, norm: str | None = None):
  """The multidimensional type-II DCT of `x` over `axes`.

  Args:
    x: an array (complex is transformed as real and imaginary parts).
    type: the DCT type; only 2 is implemented.
    s: the transform size per axis (an int for one axis); `x` is zero-padded
      or cropped to it.
    axes: the axes transformed (default: the last ``len(s)`` axes, or all).
    norm: None or "backward" (no scaling), or "ortho" (orthonormal).

  Returns:
    A float (or complex) array of `x`'s shape, with sizes `s` along `axes`.

  Raises:
    NotImplementedError: `type` is not 2.
    ValueError: another `norm`, more sizes than axes of `x`, repeated or
      out-of-range axes.
    TypeError: `x` is a list or tuple.

  Example:
    >>> import xjax.numpy as jnp
    >>> import xjax.scipy.fft
    >>> xjax.scipy.fft.dctn(jnp.array([[1., 2.], [3., 4.]]), norm="ortho")
    Array([[ 5.        , -0.99999994],
           [-1.9999999 ,  0.        ]], dtype=float32)

  Mirrors `jax.scipy.fft.dctn`.
  """
  x = creation.asarray(ensure_arraylike("dctn", x))
  _check_type_and_norm("dctn", type, norm)
  s, axes = _sizes_and_axes(x, s, axes)
  return _dctn(x, None if s is None else tuple(s), axes, norm)


@jit(static_argnames=("s", "axes", "norm"), inline=True)
def _dctn(x, s, axes, norm):
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    return _split_complex(_dctn, x, s=s, norm=norm, axes=axes)
  if len(axes) == 1:
    return _dct(x, n=s[0] if s is not None else None, axis=axes[0], norm=norm)
  if s is not None:
    x = _resize(x, dict(zip(axes, s)))
  if len(axes) == 2:
    return _dct2(x, axes=axes, norm=norm)
  for i in range(0, len(axes), 2):  # 2-D blocks (and a last 1-D one)
    block = axes[i:i + 2]
    x = _dct2(x, block, norm) if len(block) == 2 else _dct(x, None, block[0], norm)
  return x


def idct(x, type: int = 2, n: int | None = None, axis: int = -1,  # noqa: A002
         norm: str | None = None):
  """The inverse of the type-II DCT (a scaled type-III DCT) along `axis`:
  ``idct(dct(x, norm=norm), norm=norm) == x``.

  Args:
    x: an array (integers and bools become float32; complex is transformed as
      real and imaginary parts).
    type: the DCT type it inverts; only 2 is implemented.
    n: the transform length: `x` is zero-padded or cropped to `n` along `axis`.
    axis: the axis transformed.
    norm: None or "backward", or "ortho".

  Returns:
    A float (or complex) array, `x`'s shape with `n` elements along `axis`.

  Raises:
    NotImplementedError: `type` is not 2.
    ValueError: another `norm`, or `axis` out of range.
    TypeError: `x` is a list or tuple.

  Mirrors `jax.scipy.fft.idct`.
  """
  x = ensure_arraylike("idct", x)
  _check_type_and_norm("idct", type, norm)
  return _idct(x, n, axis, norm)


@jit(static_argnames=("n", "axis", "norm"), inline=True)
def _idct(x, n, axis, norm):
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    return _split_complex(_idct, x, n=n, norm=norm, axis=axis)
  axis = canonicalize_axis(axis, x.ndim)
  if n is not None:
    x = _resize(x, {axis: n})
  N = x.shape[axis]
  x, = promote_dtypes_inexact(x)
  if norm is None or norm == "backward":
    x = _dct_ortho_norm(x, axis)
  x = _dct_ortho_norm(x, axis)
  k = lax_structural.expand_dims(creation.arange(N, dtype=x.dtype), _other_axes(x.ndim, axis))
  w4 = _W4(N, k)
  # Undo the rotation and the factor 2N, inverse-FFT, then undo the reordering.
  x = x.astype(w4.dtype) / w4 * 2 * N
  x = jnp_fft.ifft(x, axis=axis)
  return _dct_deinterleave(ufuncs.real(x), axis)


def idctn(x, type: int = 2, s: Sequence[int] | None = None,  # noqa: A002
          axes: Sequence[int] | None = None, norm: str | None = None):
  """The inverse of `dctn`: `idct` along each of `axes`.

  Args, returns and errors as `dctn`.

  Mirrors `jax.scipy.fft.idctn`.
  """
  x = creation.asarray(ensure_arraylike("idctn", x))
  _check_type_and_norm("idctn", type, norm)
  s, axes = _sizes_and_axes(x, s, axes)
  return _idctn(x, None if s is None else tuple(s), axes, norm)


@jit(static_argnames=("s", "axes", "norm"), inline=True)
def _idctn(x, s, axes, norm):
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    return _split_complex(_idctn, x, s=s, norm=norm, axes=axes)
  if len(axes) == 1:
    return _idct(x, n=s[0] if s is not None else None, axis=axes[0], norm=norm)
  if s is not None:
    x = _resize(x, dict(zip(axes, s)))
  for axis in axes:
    x = _idct(x, None, axis, norm)
  return x
