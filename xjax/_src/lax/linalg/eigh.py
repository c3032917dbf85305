"""eigh: A = V diag(w) V^H for Hermitian (real symmetric) A (LAPACK syevd/heevd).

The eigenvalues come in ascending order; a matrix whose decomposition fails
(non-finite entries) gives NaN vectors and values, as in JAX. The JVP is
first-order nondegenerate perturbation theory (Giles, "An extended collection
of matrix derivative results", sec. 3.1):

  dw = diag(V^H dA V),   dV = V (F o (V^H dA V)),   F_ij = 1 / (w_j - w_i) (i != j), 0 (i = j).

As in JAX, nothing guards F against equal eigenvalues: for a degenerate
spectrum the eigenvalue tangents stay exact, the eigenvector tangents hold
infs and NaNs.
"""
from __future__ import annotations

import enum

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src.interpreters import ad
from xjax._src.lax import dot as lax_dot
from xjax._src.lax import elementwise as ew
from xjax._src.lax import slicing
from xjax._src.lax import structural
from xjax._src.lax.dot import Precision
from xjax._src.lax.linalg.common import (H, char_attr, eye_like, info_ok_or_nan, lapack_call,
                                         linalg_primitive, symmetrize)
from xjax._src.lax.linalg.common import with_dtype_check


# JAX's dtype error for these primitives names the operand's position.
INEXACT = (frozenset(dtypes._float_dtypes) | frozenset(dtypes._complex_dtypes),
           "floating, complexfloating")


class EighImplementation(enum.Enum):
  """Which algorithm computes a Hermitian eigendecomposition.

  ``QR`` (the CPU default, LAPACK's syevd/heevd), ``JACOBI`` (GPU/TPU only),
  ``QDWH`` (TPU only). Mirrors `jax.lax.linalg.EighImplementation`.
  """
  QR = "qr"
  JACOBI = "jacobi"
  QDWH = "qdwh"


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index: tuple[int, int] | None = None,
         implementation: EighImplementation | None = None):
  """The eigendecomposition ``x = v @ diag(w) @ v^H`` of Hermitian matrices.

  Args:
    x: float or complex, shape ``[..., n, n]``: Hermitian (real symmetric)
      matrices. Integer input is accepted when `symmetrize_input` is set (the
      halving makes it floating, as in JAX).
    lower: with `symmetrize_input` False, read only the lower (or upper)
      triangle of `x`.
    symmetrize_input: decompose ``(x + x^H) / 2``.
    sort_eigenvalues: ascending eigenvalues (the CPU kernel always sorts).
    subset_by_index: ``(start, end)``: only eigenpairs ``start <= i < end``.
      The CPU kernel computes only the full range ``(0, n)``.
    implementation: an `EighImplementation`, or None for the default (QR).

  Returns:
    ``(v, w)``: `v` of `x`'s shape and dtype, its columns ``v[..., :, i]``
    orthonormal eigenvectors; `w` of shape ``[..., d]`` (``d = n`` or
    ``end - start``), real, ascending. NaN where the decomposition fails.

  Raises:
    TypeError: an integer dtype (without symmetrizing), or rank below 2.
    ValueError: matrices that are not square.
    NotImplementedError: on CPU, a proper `subset_by_index`, or the JACOBI
      and QDWH implementations (when lowered); derivatives of a subset.

  Mirrors `jax.lax.linalg.eigh`.
  """
  x = structural._asarray(x)
  if symmetrize_input:
    dtype = core.get_aval(x).dtype
    if dtypes.issubdtype(dtype, np.inexact):
      x = symmetrize(x)
    else:  # JAX halves with a true division, which makes integers floating.
      x = ew.convert_element_type(ew.add(x, H(x)), dtypes.to_inexact_dtype(dtype))
      x = ew.div(x, structural.full((), 2, core.get_aval(x).dtype))
  if subset_by_index is not None:
    subset_by_index = tuple(int(i) for i in subset_by_index)
  v, w = eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
                     subset_by_index=subset_by_index, algorithm=implementation)
  return v, w


def _shape_rule(shape, *, subset_by_index, **_):
  if shape[0] != shape[-1]:
    raise ValueError("Argument to symmetric eigendecomposition must have shape [..., n, n], "
                     f"got shape {shape}")
  n = shape[0]
  d = n if subset_by_index is None else subset_by_index[1] - subset_by_index[0]
  return (n, d), (d,)


def _dtype_rule(dtype, **_):
  return dtype, dtypes.to_floating_dtype(dtype)


def matmul(x, y):
  """x @ y over stacks of matrices of one batch shape, at full precision."""
  if core.get_aval(x).ndim == 2:
    return lax_dot.dot(x, y, precision=Precision.HIGHEST)
  return lax_dot.batch_matmul(x, y, precision=Precision.HIGHEST)


def diagonal(x):
  """The main diagonal ``x[..., i, i]`` of a stack of (possibly non-square) matrices.

  Taken by flattening each matrix and slicing with stride ``m + 1``: no gather,
  and linear, so it differentiates and transposes through reshape and slice.
  """
  shape = core.get_aval(x).shape
  n, m = shape[-2:]
  k = min(n, m)
  flat = structural.reshape(x, shape[:-2] + (n * m,))
  if k == 0:
    return structural.reshape(flat, shape[:-2] + (0,))
  nd = len(shape) - 1
  return slicing.slice(flat, (0,) * nd, shape[:-2] + ((k - 1) * (m + 1) + 1,),
                       (1,) * (nd - 1) + (m + 1,))


def row_minus_column(w):
  """``w[..., None, :] - w[..., :, None]``: entry (i, j) is ``w_j - w_i``."""
  shape = core.get_aval(w).shape
  nb = len(shape) - 1
  out = shape + shape[-1:]
  rows = structural.broadcast_in_dim(w, out, (*range(nb), nb + 1))
  cols = structural.broadcast_in_dim(w, out, tuple(range(nb + 1)))
  return ew.sub(rows, cols)


def _jvp(primals, tangents, *, lower, sort_eigenvalues, subset_by_index, algorithm):
  a, = primals
  a_dot, = tangents
  n = core.get_aval(a).shape[-1]
  if not (subset_by_index is None or subset_by_index == (0, n)):
    raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
  v, w_real = eigh_p.bind(symmetrize(a), lower=lower, sort_eigenvalues=sort_eigenvalues,
                          subset_by_index=subset_by_index, algorithm=algorithm)
  if type(a_dot) is ad.Zero:
    return (v, w_real), (ad.Zero.from_primal_value(v), ad.Zero.from_primal_value(w_real))
  dtype = core.get_aval(a).dtype
  w = ew.convert_element_type(w_real, dtype)
  eye = eye_like(v)
  # 1 / (w_j - w_i) off the diagonal, 0 on it (the diagonal's denominator is 1).
  f = ew.sub(ew.integer_pow(ew.add(eye, row_minus_column(w)), -1), eye)
  vh_adot_v = matmul(matmul(H(v), a_dot), v)
  v_dot = matmul(v, ew.mul(f, vh_adot_v))
  real_part = ew.real(vh_adot_v) if dtypes.issubdtype(dtype, np.complexfloating) else vh_adot_v
  return (v, w_real), (v_dot, diagonal(real_part))


def _lowering(ctx, x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
  del sort_eigenvalues  # LAPACK's kernels always sort.
  aval, = ctx.avals_in
  v_aval, w_aval = ctx.avals_out
  n = aval.shape[-1]
  if not (subset_by_index is None or subset_by_index == (0, n)):
    raise NotImplementedError("subset_by_index not supported on CPU and GPU")
  if algorithm == EighImplementation.QDWH:
    raise NotImplementedError("QDWH implementation is only supported on TPU")
  if algorithm == EighImplementation.JACOBI:
    raise NotImplementedError("Jacobi implementation is not supported on CPU")
  batch = tuple(aval.shape[:-2])
  info_aval = core.ShapedArray(batch, np.dtype(np.int32))
  kernel = "heevd_ffi" if dtypes.issubdtype(aval.dtype, np.complexfloating) else "syevd_ffi"
  v, w, info = lapack_call(ctx, kernel, aval.dtype, [x], [v_aval, w_aval, info_aval],
                           {"mode": char_attr("V"), "uplo": char_attr("L" if lower else "U")},
                           operand_output_aliases={0: 0})
  return [info_ok_or_nan(ctx, info, batch, v, v_aval),
          info_ok_or_nan(ctx, info, batch, w, w_aval)]


eigh_p = with_dtype_check(
    linalg_primitive("eigh", (2,), _shape_rule, _lowering, dtype_rule=_dtype_rule,
                     multiple_results=True), [INEXACT])
eigh_p.def_jvp(_jvp)
