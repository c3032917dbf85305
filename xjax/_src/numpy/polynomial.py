"""Polynomials as 1-D coefficient arrays (highest power first), 1-D convolution
and correlation, and trim_zeros.

All are compositions of lax operations and other jnp functions; none adds a
primitive. `roots` (and `poly` of a matrix) take eigenvalues of a companion
matrix, `polyfit` solves a scaled Vandermonde least-squares problem, both
with `jnp.linalg` as JAX does.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax.convolution import conv_general_dilated
from xjax._src.lax import structural as lax_structural
from xjax._src.lax.control_flow.scan import scan
from xjax._src.lax.sorting import sort_key_val
from xjax._src.numpy import creation, lax_numpy, ufuncs
from xjax._src.numpy import util

# ----------------------------------------------------------------------------
# convolve and correlate


@jit(static_argnums=(2, 3, 4, 5))
def _conv(x, y, mode: str, op: str, precision, preferred_element_type):
  if util.ndim(x) != 1 or util.ndim(y) != 1:
    raise ValueError(f"{op}() only support 1-dimensional inputs.")
  if preferred_element_type is None:
    x, y = util.promote_dtypes_inexact(x, y)  # NumPy convolves in floating point
  else:
    x, y = util.promote_dtypes(x, y)
  if util.shape(x)[0] == 0 or util.shape(y)[0] == 0:
    raise ValueError(f"{op}: inputs cannot be empty, got shapes {util.shape(x)} and "
                     f"{util.shape(y)}.")
  reverse_out = False
  if op == "correlate":
    y = ufuncs.conjugate(y)
    if util.shape(x)[0] < util.shape(y)[0]:
      # sum_k a[n+k] conj(v[k]) = sum_j conj(v)[j-n] a[j]: conj(v) slid over a, reversed
      x, y, reverse_out = y, x, True
  else:
    if util.shape(x)[0] < util.shape(y)[0]:
      x, y = y, x
    y = lax_numpy.flip(y)  # a convolution is a correlation with the kernel reversed
  n = util.shape(y)[0]
  if mode == "valid":
    pad = (0, 0)
  elif mode == "same":
    pad = (n // 2, n - n // 2 - 1)
  elif mode == "full":
    pad = (n - 1, n - 1)
  else:
    raise ValueError("mode must be one of ['full', 'same', 'valid']")
  # One 1-D convolution (a correlation in lax's sense) with batch and feature dims of 1.
  out = conv_general_dilated(x[None, None, :], y[None, None, :], (1,), [pad],
                             precision=precision, preferred_element_type=preferred_element_type)
  return out[0, 0, ::-1] if reverse_out else out[0, 0]


@jit(static_argnames=("mode", "precision", "preferred_element_type"))
def convolve(a, v, mode: str = "full", *, precision=None, preferred_element_type=None):
  """Discrete linear convolution of two 1-D arrays: ``out[n] = sum_k a[k] * v[n - k]``.

  Args:
    a, v: non-empty 1-D arrays (their order does not matter).
    mode: ``'full'`` (length ``len(a) + len(v) - 1``), ``'same'`` (length
      ``max(len(a), len(v))``, centred) or ``'valid'`` (length
      ``max - min + 1``, only full overlaps).
    precision: the matmul precision (see `jax.lax.dot_general`).
    preferred_element_type: the accumulation and result dtype. Without it the
      inputs are promoted to an inexact dtype, as NumPy does; with it they are
      promoted to their common dtype and kept.

  Returns:
    A 1-D array.

  Raises:
    ValueError: an input is not 1-D or is empty, or `mode` is unknown.
    TypeError: `a` or `v` is not an array or scalar.

  >>> import xjax.numpy as jnp
  >>> print(jnp.convolve(jnp.array([1., 2., 3.]), jnp.array([0., 1., 0.5])))
  [0.  1.  2.5 4.  1.5]

  Mirrors `jax.numpy.convolve`.
  """
  a, v = util.ensure_arraylike("convolve", a, v)
  return _conv(a, v, mode, "convolve", precision, preferred_element_type)


@jit(static_argnames=("mode", "precision", "preferred_element_type"))
def correlate(a, v, mode: str = "valid", *, precision=None, preferred_element_type=None):
  """Cross-correlation of two 1-D arrays: ``out[n] = sum_k a[n + k] * conj(v[k])``.

  Args:
    a, v: non-empty 1-D arrays (complex `v` is conjugated).
    mode: ``'valid'`` (the default), ``'same'`` or ``'full'``, as for
      `convolve`.
    precision: the matmul precision (see `jax.lax.dot_general`).
    preferred_element_type: the accumulation and result dtype (see
      `convolve`).

  Returns:
    A 1-D array.

  Raises:
    ValueError: an input is not 1-D or is empty, or `mode` is unknown.
    TypeError: `a` or `v` is not an array or scalar.

  >>> import xjax.numpy as jnp
  >>> print(jnp.correlate(jnp.array([1., 2., 3.]), jnp.array([0., 1., 0.5]), mode='full'))
  [0.5 2.  3.5 3.  0. ]

  Mirrors `jax.numpy.correlate`.
  """
  a, v = util.ensure_arraylike("correlate", a, v)
  return _conv(a, v, mode, "correlate", precision, preferred_element_type)


# ----------------------------------------------------------------------------
# trim_zeros


def _trim_axes(axis, num_dims: int) -> tuple[int, ...]:
  if axis is None:
    return tuple(range(num_dims))
  axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
  canonical = tuple(util.canonicalize_axis(a, num_dims) for a in axes)
  if len(set(canonical)) != len(canonical):
    raise ValueError(f"repeated axis: {axes}")
  return canonical


def trim_zeros(filt, trim: str = "fb", axis=None):
  """`filt` with its leading and/or trailing zeros cut off along the given axes.

  Along each axis in `axis`, a slice is cut when it is zero everywhere; the
  result keeps the smallest box holding every nonzero element (NaN counts as
  nonzero). The result's shape depends on the values, so `filt` must be
  concrete (not traced by jit or vmap).

  Args:
    filt: an array.
    trim: a string; ``'f'`` in it trims the front, ``'b'`` the back (any
      case). Without either, `filt` is returned unchanged.
    axis: an int or a sequence of ints; None (the default) means every axis.

  Returns:
    A slice of `filt` of the same dtype and rank (an all-zero `filt` gives a
    size-0 array along the trimmed axes).

  Raises:
    TypeError: `filt` is not an array or scalar.
    ConcretizationTypeError: `filt` is traced.
    ValueError: an axis is out of range or repeated.

  >>> import xjax.numpy as jnp
  >>> print(jnp.trim_zeros(jnp.array([0, 0, 1, 2, 0])))
  [1 2]

  Mirrors `jax.numpy.trim_zeros`.
  """
  filt = util.ensure_arraylike("trim_zeros", filt)
  value = np.asarray(util.concrete_or_error(
      filt, "Error arose in the `filt` argument of trim_zeros()"))
  filt = creation.asarray(filt)
  axes = _trim_axes(axis, value.ndim)
  trim = trim.lower()
  if not axes or ("f" not in trim and "b" not in trim):
    return filt
  nonzero = value != 0
  index = []
  for ax in range(value.ndim):
    if ax not in axes:
      index.append(slice(None))
      continue
    hits = np.flatnonzero(nonzero.any(axis=tuple(i for i in range(value.ndim) if i != ax)))
    if hits.size == 0:
      index.append(slice(0, 0))
      continue
    index.append(slice(int(hits[0]) if "f" in trim else None,
                       int(hits[-1]) + 1 if "b" in trim else None))
  return filt[tuple(index)]


def _trim_leading_small(p, tol):
  """`p` (concrete, 1-D) without its leading entries of magnitude below `tol`."""
  value = np.abs(np.asarray(util.concrete_or_error(
      p, "Error arose in the `u` argument of polydiv() with trim_leading_zeros=True")))
  big = np.flatnonzero(value >= tol)
  return p[int(big[0]):] if big.size else p[:0]


# ----------------------------------------------------------------------------
# Polynomial arithmetic


def _check_ndim_1(name, p):
  if util.ndim(p) == 0:
    raise TypeError(f"{name} requires 1-D coefficient arrays: len() of unsized object")


def _leading_len(name, p) -> int:
  """len(p) for arrays of rank >= 1 (the coefficients run along the first axis)."""
  if util.ndim(p) == 0:
    raise IndexError(f"{name} requires arrays of rank at least 1 (coefficients along axis 0), "
                     "got a scalar: tuple index out of range")
  return util.shape(p)[0]


@jit
def poly(seq_of_zeros):
  """The monic polynomial with the given roots: coefficients of prod_k (x - r_k).

  Args:
    seq_of_zeros: a 1-D array of roots (a scalar counts as one root).

  Returns:
    A 1-D array of length ``len(seq_of_zeros) + 1``, of the roots' dtype
    promoted to inexact (no roots: the 0-d array 1).

  A non-empty square matrix stands for its eigenvalues (its characteristic
  polynomial).

  Raises:
    ValueError: any other input of rank 2 or more.

  >>> import xjax.numpy as jnp
  >>> print(jnp.poly(jnp.array([1., 2.])))
  [ 1. -3.  2.]

  Mirrors `jax.numpy.poly`.
  """
  seq_of_zeros = util.ensure_arraylike("poly", seq_of_zeros)
  (roots,) = util.promote_dtypes_inexact(seq_of_zeros)
  roots = lax_numpy.atleast_1d(roots)
  shape = util.shape(roots)
  if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0:
    from xjax._src.numpy import linalg  # noqa: PLC0415 (linalg imports jnp modules)
    roots = linalg.eigvals(roots)
    shape = util.shape(roots)
  if len(shape) != 1:
    raise ValueError("input must be 1d or non-empty square 2d array.")
  dtype = util.dtype_of(roots)
  if shape[0] == 0:
    return creation.ones((), dtype)
  coeffs = creation.ones((1,), dtype)
  for k in range(shape[0]):
    # (x - r) * c(x): shift up one power, subtract r times the old coefficients
    zero = creation.zeros((1,), dtype)
    coeffs = ufuncs.subtract(lax_numpy.concatenate([coeffs, zero]),
                             ufuncs.multiply(roots[k], lax_numpy.concatenate([zero, coeffs])))
  return coeffs


@jit(static_argnames=("unroll",))
def polyval(p, x, *, unroll: int = 16):
  """The polynomial with coefficients `p` evaluated at `x` (Horner's scheme).

  Args:
    p: the coefficients along axis 0, highest power first; further axes of
      `p` broadcast against `x`.
    x: the points.
    unroll: how many Horner steps each scan iteration does (see `lax.scan`).

  Returns:
    An array of shape ``broadcast(p.shape[1:], x.shape)`` and the promoted
    dtype of `p` and `x` (integers stay integers and wrap on overflow). An
    empty `p` gives zeros.

  Raises:
    IndexError: `p` is a scalar.

  >>> import xjax.numpy as jnp
  >>> print(jnp.polyval(jnp.array([1, 2, 3]), jnp.array([0, 1, 2])))
  [ 3  6 11]

  Mirrors `jax.numpy.polyval`.
  """
  p, x = util.ensure_arraylike("polyval", p, x)
  p, x = util.promote_dtypes(p, x)
  _leading_len("polyval", p)
  shape = util.broadcast_shapes(util.shape(p)[1:], util.shape(x))
  y = creation.zeros(shape, util.dtype_of(x))
  y, _ = scan(lambda y, c: (ufuncs.add(ufuncs.multiply(y, x), c), None), y, p, unroll=unroll)
  return y


@jit
def polyadd(a1, a2):
  """The sum of two polynomials, aligned at their lowest powers.

  Args:
    a1, a2: coefficient arrays (highest power first, along axis 0). The
      shorter one is added to the trailing entries of the longer one, with
      NumPy broadcasting over the other axes.

  Returns:
    An array of the longer input's shape and the promoted dtype.

  Raises:
    IndexError: an input is a scalar.
    TypeError: boolean coefficients.
    ValueError: the shorter input does not broadcast into the longer one.

  >>> import xjax.numpy as jnp
  >>> print(jnp.polyadd(jnp.array([1, 2]), jnp.array([1, 2, 3])))
  [1 3 5]

  Mirrors `jax.numpy.polyadd`.
  """
  a1, a2 = util.ensure_arraylike("polyadd", a1, a2)
  a1, a2 = util.promote_dtypes(a1, a2)
  n1, n2 = _leading_len("polyadd", a1), _leading_len("polyadd", a2)
  if util.dtype_of(a1) == np.bool_:
    raise TypeError("add does not accept dtype bool at position 0. Accepted dtypes at position 0 "
                    "are subtypes of integer, floating, complexfloating.")
  longer, shorter = (a1, a2) if n2 <= n1 else (a2, a1)
  n, m = max(n1, n2), min(n1, n2)
  shorter = util.broadcast_to(shorter, (m, *util.shape(longer)[1:]))
  pad = [(n - m, 0, 0)] + [(0, 0, 0)] * (util.ndim(longer) - 1)
  return ufuncs.add(longer, lax_structural.pad(shorter, util.const_like(shorter, 0), pad))


@jit
def polysub(a1, a2):
  """The difference ``a1 - a2`` of two polynomials, aligned at their lowest powers.

  Args:
    a1, a2: coefficient arrays, as for `polyadd`.

  Returns:
    An array of the longer input's shape and the promoted dtype.

  Raises:
    IndexError: an input is a scalar.
    TypeError: boolean coefficients.
    ValueError: the shorter input does not broadcast into the longer one.

  >>> import xjax.numpy as jnp
  >>> print(jnp.polysub(jnp.array([1, 2]), jnp.array([1, 2, 3])))
  [-1 -1 -1]

  Mirrors `jax.numpy.polysub`.
  """
  a1, a2 = util.ensure_arraylike("polysub", a1, a2)
  a1, a2 = util.promote_dtypes(a1, a2)
  return polyadd(a1, ufuncs.negative(a2))


def polymul(a1, a2, *, trim_leading_zeros: bool = False):
  """The product of two polynomials (the full convolution of their coefficients).

  Args:
    a1, a2: 1-D coefficient arrays, highest power first; an empty one counts
      as the zero polynomial ``[0]``.
    trim_leading_zeros: first drop the leading zeros of each input, as NumPy
      does; this needs concrete inputs (not traced).

  Returns:
    A 1-D array of length ``len(a1) + len(a2) - 1`` (after trimming), of the
    inputs' dtype promoted to inexact.

  Raises:
    TypeError: an input is a scalar.
    ValueError: an input has rank 2 or more.
    ConcretizationTypeError: `trim_leading_zeros` with traced inputs.

  >>> import xjax.numpy as jnp
  >>> print(jnp.polymul(jnp.array([1, 2]), jnp.array([1, 2, 3])))
  [1. 4. 7. 6.]

  Mirrors `jax.numpy.polymul`.
  """
  a1, a2 = util.ensure_arraylike("polymul", a1, a2)
  a1, a2 = util.promote_dtypes_inexact(a1, a2)
  _check_ndim_1("polymul", a1)
  _check_ndim_1("polymul", a2)
  if trim_leading_zeros and (util.shape(a1)[0] > 1 or util.shape(a2)[0] > 1):
    a1, a2 = trim_zeros(a1, trim="f"), trim_zeros(a2, trim="f")
  if util.shape(a1)[0] == 0:
    a1 = creation.zeros(1, util.dtype_of(a2))
  if util.shape(a2)[0] == 0:
    a2 = creation.zeros(1, util.dtype_of(a1))
  return convolve(a1, a2, mode="full")


def polydiv(u, v, *, trim_leading_zeros: bool = False):
  """Polynomial long division: q and r with ``u = q * v + r``.

  Args:
    u: the 1-D dividend coefficients, highest power first.
    v: the 1-D divisor coefficients; ``v[0]`` must be nonzero (a zero gives
      infs and NaNs, not an error).
    trim_leading_zeros: drop the leading entries of the remainder whose
      magnitude is below ``sqrt(eps)`` of the dtype, as NumPy does; this needs
      concrete inputs (not traced).

  Returns:
    ``(q, r)``: the quotient, of length ``max(len(u) - len(v) + 1, 1)``, and
    the remainder, of `u`'s length unless trimmed; both of the inputs' dtype
    promoted to inexact.

  Raises:
    TypeError: an input is a scalar.
    IndexError: `v` is empty.
    ConcretizationTypeError: `trim_leading_zeros` with traced inputs.

  >>> import xjax.numpy as jnp
  >>> q, r = jnp.polydiv(jnp.array([1., 2., 3.]), jnp.array([2., 1.]))
  >>> print(q, r)
  [0.5  0.75] [0.   0.   2.25]

  Mirrors `jax.numpy.polydiv`.
  """
  u, v = util.ensure_arraylike("polydiv", u, v)
  u, v = (creation.asarray(x) for x in util.promote_dtypes_inexact(u, v))
  _check_ndim_1("polydiv", u)
  _check_ndim_1("polydiv", v)
  num_u, num_v = util.shape(u)[0], util.shape(v)[0]
  inv_lead = ufuncs.true_divide(1.0, v[0])
  steps = num_u - num_v + 1
  q = creation.zeros(max(steps, 1), util.dtype_of(u))
  for k in range(steps):
    d = ufuncs.multiply(inv_lead, u[k])
    q = q.at[k].set(d)
    u = u.at[k:k + num_v].add(ufuncs.multiply(ufuncs.negative(d), v))
  if trim_leading_zeros:
    u = _trim_leading_small(u, math.sqrt(float(dtypes.finfo(util.dtype_of(u)).eps)))
  return q, u


def _falling_factorials(powers, m: int, dtype) -> np.ndarray:
  """prod_{j<m} max(1, n - j) for each n in `powers`, exact in integers, rounded once to dtype."""
  return np.array([float(math.prod(max(1, n - j) for j in range(m))) for n in powers], dtype)


@jit(static_argnames=("m",))
def polyder(p, m: int = 1):
  """The coefficients of the `m`-th derivative of a polynomial.

  Args:
    p: 1-D coefficients, highest power first.
    m: the order of the derivative, a non-negative int.

  Returns:
    A 1-D array of length ``max(len(p) - m, 0)`` of `p`'s dtype promoted to
    inexact.

  Raises:
    ValueError: `m` is negative.
    TypeError: `m` is not an integer, or `p` is a scalar.

  >>> import xjax.numpy as jnp
  >>> print(jnp.polyder(jnp.array([1, 2, 3, 4])))
  [3. 4. 3.]

  Mirrors `jax.numpy.polyder`.
  """
  p = util.ensure_arraylike("polyder", p)
  m = util.concrete_int(m, "'m' argument of jnp.polyder")
  (p,) = util.promote_dtypes_inexact(p)
  _check_ndim_1("polyder", p)
  if m < 0:
    raise ValueError("Order of derivative must be positive")
  if m == 0:
    return p
  num = util.shape(p)[0]
  # d^m/dx^m x^n = n (n-1) ... (n-m+1) x^(n-m), for the powers n that survive
  coeffs = _falling_factorials(range(num - 1, m - 1, -1), m, util.dtype_of(p))
  return ufuncs.multiply(p[:max(num - m, 0)], coeffs)


@jit(static_argnames=("m",))
def polyint(p, m: int = 1, k=None):
  """The coefficients of the `m`-th antiderivative of a polynomial.

  Args:
    p: 1-D coefficients, highest power first.
    m: the order of integration, a non-negative int.
    k: the integration constants: a scalar (used for every step) or a 1-D
      array of length 1 or `m`, the first applying to the first integration;
      None means zeros.

  Returns:
    A 1-D array of length ``len(p) + m``, of the promoted dtype of `p` and `k`
    made inexact.

  Raises:
    ValueError: `m` is negative, or `k` has the wrong length.
    TypeError: `m` is not an integer, or `p` is a scalar.

  >>> import xjax.numpy as jnp
  >>> print(jnp.polyint(jnp.array([3., 2., 1.])))
  [1. 1. 1. 0.]

  Mirrors `jax.numpy.polyint`.
  """
  m = util.concrete_int(m, "'m' argument of jnp.polyint")
  k = 0 if k is None else k
  p, k = util.ensure_arraylike("polyint", p, k)
  p, k = util.promote_dtypes_inexact(p, k)
  _check_ndim_1("polyint", p)
  if m < 0:
    raise ValueError("Order of integral must be positive (see polyder)")
  k = lax_numpy.atleast_1d(k)
  if util.shape(k) == (1,):
    k = creation.full((m,), k[0])
  if util.shape(k) != (m,):
    raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
  if m == 0:
    return p
  total = util.shape(p)[0] + m
  # entry i ends up as the coefficient of x^(total-1-i) after m integrations
  divisors = _falling_factorials(range(total - 1, -1, -1), m, util.dtype_of(p))
  return ufuncs.true_divide(lax_numpy.concatenate([p, k]), divisors)


# ----------------------------------------------------------------------------
# roots and polyfit (on jnp.linalg)


def _roots_no_zeros(p):
  """The eigenvalues of p's companion matrix (p has no leading zero)."""
  from xjax import numpy as jnp  # noqa: PLC0415 (the full namespace, loaded by call time)
  if p.size < 2:
    return jnp.array([], dtype=dtypes.to_complex_dtype(p.dtype))
  companion = jnp.diag(jnp.ones((p.size - 2,), p.dtype), -1)
  companion = companion.at[0, :].set(-p[1:] / p[0])
  return jnp.linalg.eigvals(companion)


@jit
def _roots_with_zeros(p, num_leading_zeros):
  from xjax import numpy as jnp  # noqa: PLC0415
  # An all-zero p would hand LAPACK a matrix of NaNs: use ones, and NaN all roots below.
  p = jnp.where(len(p) == num_leading_zeros, 1.0, p)
  found = _roots_no_zeros(jnp.roll(p, -num_leading_zeros))
  found = sort_key_val(found == 0, found)[1]  # the zero roots the rolled zeros made go last
  return jnp.where(jnp.arange(found.size) < found.size - num_leading_zeros, found,
                   complex(np.nan, np.nan))


def roots(p, *, strip_zeros: bool = True):
  """The roots of the polynomial with coefficients `p` (highest power first).

  Computed as the eigenvalues of the companion matrix, as NumPy does.

  Args:
    p: 1-D coefficients (a scalar counts as a constant polynomial).
    strip_zeros: drop leading zero coefficients first (needs concrete `p`);
      with False, usable under jit: each leading zero gives a NaN root.

  Returns:
    A complex 1-D array of ``len(p) - 1`` roots (fewer when stripping zeros).

  Raises:
    ValueError: `p` of rank 2 or more.
    ConcretizationTypeError: traced `p` with ``strip_zeros=True``.

  Mirrors `jax.numpy.roots`.
  """
  from xjax import numpy as jnp  # noqa: PLC0415
  p = util.ensure_arraylike("roots", p)
  (p,) = util.promote_dtypes_inexact(p)
  p = lax_numpy.atleast_1d(p)
  if p.ndim != 1:
    raise ValueError("Input must be a rank-1 array.")
  if p.size < 2:
    return jnp.array([], dtype=dtypes.to_complex_dtype(p.dtype))
  num_leading_zeros = jnp.where(jnp.all(p == 0), len(p), jnp.argmin(p == 0))
  if strip_zeros:
    num_leading_zeros = int(util.concrete_or_error(
        num_leading_zeros,
        "The error occurred in the jnp.roots() function. To use this within a JIT-compiled "
        "context, pass strip_zeros=False, but be aware that leading zeros will result in "
        "some returned roots being set to NaN."))
    return _roots_no_zeros(p[num_leading_zeros:])
  return _roots_with_zeros(p, num_leading_zeros)


def polyfit(x, y, deg: int, rcond=None, full: bool = False, w=None, cov=False):
  """The least-squares polynomial of degree `deg` through points (x, y).

  Solves the Vandermonde system with columns scaled to unit norm, as NumPy.

  Args:
    x: 1-D sample points, shape (M,).
    y: values, shape (M,) or (M, K) for K fits at once.
    deg: the degree (a concrete int >= 0).
    rcond: relative cutoff for small singular values (default ``M * eps``).
    full: also return residuals, rank, singular values and rcond.
    w: optional 1-D weights, shape (M,), applied to the residuals.
    cov: also return the coefficients' covariance (``"unscaled"``: without
      the residual-variance factor).

  Returns:
    Coefficients of shape (deg + 1,) or (deg + 1, K), highest power first; with
    `full`, ``(c, residuals, rank, singular_values, rcond)``; with `cov`,
    ``(c, covariance)``.

  Raises:
    ValueError: deg < 0, or `cov` scaling with no more points than coefficients.
    TypeError: x not 1-D or empty, y not 1-D/2-D, or lengths that differ.

  Mirrors `jax.numpy.polyfit`.
  """
  if w is None:
    x, y = util.ensure_arraylike("polyfit", x, y)
  else:
    x, y, w = util.ensure_arraylike("polyfit", x, y, w)
  deg = operator.index(util.concrete_or_error(deg, "deg must be int"))
  if deg < 0:
    raise ValueError("expected deg >= 0")
  if x.ndim != 1:
    raise TypeError("expected 1D vector for x")
  if x.size == 0:
    raise TypeError("expected non-empty vector for x")
  if y.ndim < 1 or y.ndim > 2:
    raise TypeError("expected 1D or 2D array for y")
  if x.shape[0] != y.shape[0]:
    raise TypeError("expected x and y to have same length")
  if rcond is None:
    rcond = len(x) * float(np.finfo(dtypes.to_inexact_dtype(x.dtype)).eps)
  rcond = float(util.concrete_or_error(rcond, "rcond must be float"))
  return _polyfit(x, y, w, deg=deg, rcond=rcond, full=bool(full), cov=cov)


@jit(static_argnames=("deg", "rcond", "full", "cov"))
def _polyfit(x, y, w, *, deg, rcond, full, cov):
  from xjax import numpy as jnp  # noqa: PLC0415
  order = deg + 1
  lhs = jnp.vander(x, order)
  rhs = y
  if w is not None:
    (w,) = util.promote_dtypes_inexact(w)
    if w.ndim != 1:
      raise TypeError("expected a 1-d array for weights")
    if w.shape[0] != y.shape[0]:
      raise TypeError("expected w and y to have the same length")
    lhs = lhs * w[:, None]
    rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
  scale = jnp.sqrt((lhs * lhs).sum(axis=0))
  lhs = lhs / scale[None, :]
  c, resids, rank, s = jnp.linalg.lstsq(lhs, rhs, rcond)
  c = (c.T / scale[None, :]).T if c.ndim > 1 else c / scale
  if full:
    return c, resids, rank, s, jnp.asarray(rcond)
  if cov:
    vbase = jnp.linalg.inv(jnp.dot(lhs.T, lhs)) / jnp.outer(scale, scale)
    if cov == "unscaled":
      fac = jnp.array(1.0)
    else:
      if len(x) <= order:
        raise ValueError("the number of data points must exceed order to scale the "
                         "covariance matrix")
      fac = resids / (len(x) - order)
    if y.ndim == 1:
      return c, vbase * jnp.atleast_1d(fac)[None]
    return c, vbase[:, :, None] * jnp.atleast_1d(fac)[None, None, :]
  return c
