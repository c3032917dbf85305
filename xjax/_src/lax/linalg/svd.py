"""svd: A = U diag(s) V^H (LAPACK gesdd, or gesvd for the QR algorithm).

The singular values come in descending order. A matrix whose decomposition
fails (non-finite entries) gives NaNs; an empty matrix needs no kernel, and
gives identity (full) or empty singular vectors, as in JAX.

The JVP is the reduced-SVD rule (Townsend, "Differentiating the singular
value decomposition"), with dS = U^H dA V:

  ds = Re diag(dS),
  dU = U (F o (dS S + S dS^H) + diag(1/s) o (dS - dS^H) / 2) + (I - U U^H) dA V S^{-1},
  dV = V (F o (S dS + dS^H S)) + (I - V V^H) dA^H U S^{-1},

where F_ij = 1 / (s_j^2 - s_i^2) off the diagonal and 0 on it. As in JAX,
the vectors' tangents are only defined for full_matrices=False (or square
matrices), and equal singular values give infs.
"""
from __future__ import annotations

import enum

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src.interpreters import ad
from xjax._src.interpreters import lowering
from xjax._src.lax import elementwise as ew
from xjax._src.lax import structural
from xjax._src.lax.linalg.common import (H, char_attr, eye_like, info_ok_or_nan,
                                         lapack_call, linalg_primitive)
from xjax._src.lax.linalg.eigh import INEXACT, diagonal, matmul
from xjax._src.lax.linalg.lu import with_dtype_check


class SvdAlgorithm(enum.Enum):
  """Which algorithm computes an SVD.

  ``DEFAULT`` (divide and conquer, LAPACK gesdd, on CPU), ``QR`` (gesvd),
  ``JACOBI`` and ``POLAR`` (GPU/TPU only), ``DIVIDE_AND_CONQUER`` (gesdd).
  Mirrors `jax.lax.linalg.SvdAlgorithm`.
  """
  DEFAULT = "default"
  QR = "QR"
  JACOBI = "Jacobi"
  POLAR = "polar"
  DIVIDE_AND_CONQUER = "divide_and_conquer"


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: tuple[int, int] | None = None,
        algorithm: SvdAlgorithm | None = None):
  """The singular value decomposition ``x = u @ diag(s) @ vh``.

  Args:
    x: float or complex, shape ``[..., m, n]``; ``k = min(m, n)``.
    full_matrices: `u` is ``[..., m, m]`` and `vh` ``[..., n, n]``; otherwise
      ``[..., m, k]`` and ``[..., k, n]``.
    compute_uv: return the singular vectors too.
    subset_by_index: ``(start, end)``: only singular triples
      ``start <= i < end`` (needs full_matrices=False). The CPU kernels compute
      only the full range ``(0, k)``.
    algorithm: an `SvdAlgorithm`, or None for the default.

  Returns:
    ``(u, s, vh)`` if `compute_uv`, else `s`: `s` real, shape ``[..., k]``,
    descending; `u` and `vh` of `x`'s dtype. NaN where the decomposition fails.

  Raises:
    TypeError: an integer dtype, or rank below 2.
    ValueError: both full_matrices and a proper subset_by_index.
    NotImplementedError: on CPU, a proper `subset_by_index` or the JACOBI and
      POLAR algorithms (when lowered); the derivative of full singular vectors
      of a non-square matrix.

  Mirrors `jax.lax.linalg.svd`.
  """
  x = structural._asarray(x)
  if subset_by_index is not None:
    subset_by_index = tuple(int(i) for i in subset_by_index)
  result = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv),
                      subset_by_index=subset_by_index, algorithm=algorithm)
  if compute_uv:
    s, u, vh = result
    return u, s, vh
  return result[0]


def _shape_rule(shape, *, full_matrices, compute_uv, subset_by_index, **_):
  m, n = shape
  rank = min(m, n)
  if subset_by_index is not None:
    if full_matrices and subset_by_index != (0, rank):
      raise ValueError("full_matrices and subset_by_index cannot both be set")
    rank = min(rank, subset_by_index[1] - subset_by_index[0])
  if not compute_uv:
    return (rank,),
  return (rank,), (m, m if full_matrices else rank), (n if full_matrices else rank, n)


def _dtype_rule(dtype, *, compute_uv, **_):
  real = dtypes.to_floating_dtype(dtype)
  return (real, dtype, dtype) if compute_uv else (real,)


def _row(s, shape, dtype):
  """The vector `s` as a row, broadcast over the last two axes of `shape`: (i, j) -> s_j."""
  s = ew.convert_element_type(s, dtype)
  nb = len(shape) - 2
  return structural.broadcast_in_dim(s, tuple(shape), (*range(nb), nb + 1))


def _column(s, shape, dtype):
  """The vector `s` as a column, broadcast over the last two axes of `shape`: (i, j) -> s_i."""
  s = ew.convert_element_type(s, dtype)
  nb = len(shape) - 2
  return structural.broadcast_in_dim(s, tuple(shape), tuple(range(nb + 1)))


def _jvp(primals, tangents, *, full_matrices, compute_uv, subset_by_index, algorithm):
  a, = primals
  a_dot, = tangents
  s, u, vh = svd_p.bind(a, full_matrices=False, compute_uv=True,
                        subset_by_index=subset_by_index, algorithm=algorithm)
  m, n = core.get_aval(a).shape[-2:]
  if compute_uv and full_matrices and m != n:
    raise NotImplementedError(
        "Singular value decomposition JVP not implemented for full matrices")
  primals_out = (s, u, vh) if compute_uv else (s,)
  if type(a_dot) is ad.Zero:
    return primals_out, tuple(ad.Zero.from_primal_value(p) for p in primals_out)
  dtype = core.get_aval(a).dtype
  is_complex = dtypes.issubdtype(dtype, np.complexfloating)
  uh, v = H(u), H(vh)
  ds_mat = matmul(matmul(uh, a_dot), v)
  s_dot = diagonal(ew.real(ds_mat) if is_complex else ds_mat)
  if not compute_uv:
    return primals_out, (s_dot,)

  kk = core.get_aval(ds_mat).shape
  real = core.get_aval(s).dtype
  s_row, s_col = _row(s, kk, real), _column(s, kk, real)
  # F_ij = 1 / (s_j^2 - s_i^2), 0 on the diagonal.
  s_diffs = ew.mul(ew.add(s_row, s_col), ew.sub(s_row, s_col))
  eye = eye_like(s_diffs)
  f = ew.convert_element_type(ew.sub(ew.div(structural.full((), 1, real), ew.add(s_diffs, eye)),
                                     eye), dtype)
  ds_s = ew.mul(_row(s, kk, dtype), ds_mat)     # dS diag(s)
  s_ds = ew.mul(_column(s, kk, dtype), ds_mat)  # diag(s) dS
  # 1/s on the diagonal (0 where s is 0), zero elsewhere.
  s_zeros = ew.convert_element_type(ew.eq(s, structural.full((), 0, real)), real)
  s_inv = ew.sub(ew.div(structural.full((), 1, real), ew.add(s, s_zeros)), s_zeros)
  s_inv_mat = ew.mul(eye, _row(s_inv, kk, real))
  half = structural.full((), 0.5, dtype)
  du_dv_diag = ew.mul(ew.mul(half, ew.sub(ds_mat, H(ds_mat))),
                      ew.convert_element_type(s_inv_mat, dtype))
  u_dot = matmul(u, ew.add(ew.mul(f, ew.add(ds_s, H(ds_s))), du_dv_diag))
  v_dot = matmul(v, ew.mul(f, ew.add(s_ds, H(s_ds))))
  if m > n:  # the part of dA V outside the span of U
    dav = matmul(a_dot, v)
    rest = ew.sub(dav, matmul(u, matmul(uh, dav)))
    u_dot = ew.add(u_dot, ew.div(rest, _row(s, core.get_aval(rest).shape, dtype)))
  if n > m:  # the part of dA^H U outside the span of V
    dahu = matmul(H(a_dot), u)
    rest = ew.sub(dahu, matmul(v, matmul(vh, dahu)))
    v_dot = ew.add(v_dot, ew.div(rest, _row(s, core.get_aval(rest).shape, dtype)))
  return primals_out, (s_dot, u_dot, H(v_dot))


def _empty_svd(a, *, full_matrices, compute_uv):
  """The SVD of matrices with no rows or no columns: no singular values."""
  aval = core.get_aval(a)
  batch, (m, n) = tuple(aval.shape[:-2]), aval.shape[-2:]
  s = structural.full(batch + (0,), 0, dtypes.to_floating_dtype(aval.dtype))
  if not compute_uv:
    return (s,)
  if full_matrices:
    size = max(m, n)
    u = eye_like(structural.full(batch + (size, size), 0, aval.dtype))
  else:
    u = structural.full(batch + (m, n), 0, aval.dtype)
  v = structural.full(batch + (0, 0), 0, aval.dtype)
  if m < n:
    u, v = v, u
  return s, u, v


def _mode(compute_uv, full_matrices):
  if not compute_uv:
    return "N"
  return "A" if full_matrices else "S"


def _lowering(ctx, x, *, full_matrices, compute_uv, subset_by_index, algorithm):
  aval, = ctx.avals_in
  m, n = aval.shape[-2:]
  k = min(m, n)
  if not (subset_by_index is None or subset_by_index == (0, k)):
    raise NotImplementedError("subset_by_index not implemented for CPU and GPU")
  if m == 0 or n == 0:
    return lowering.lower_fun(_empty_svd, multiple_results=True)(
        ctx, x, full_matrices=full_matrices, compute_uv=compute_uv)
  if algorithm in (None, SvdAlgorithm.DEFAULT, SvdAlgorithm.DIVIDE_AND_CONQUER):
    kernel = "gesdd_ffi"
  elif algorithm == SvdAlgorithm.QR:
    kernel = "gesvd_ffi"
  else:
    raise NotImplementedError("The SVD Jacobi and Polar algorithms are not implemented on CPU.")
  batch = tuple(aval.shape[:-2])
  if compute_uv:
    s_aval, u_aval, vt_aval = ctx.avals_out
  else:
    # The kernels write the vectors' buffers even when they do not compute them.
    s_aval, = ctx.avals_out
    u_aval = core.ShapedArray(batch + (m, m if full_matrices else k), aval.dtype)
    vt_aval = core.ShapedArray(batch + (n if full_matrices else k, n), aval.dtype)
  info_aval = core.ShapedArray(batch, np.dtype(np.int32))
  _, s, u, vt, info = lapack_call(ctx, kernel, aval.dtype, [x],
                                  [aval, s_aval, u_aval, vt_aval, info_aval],
                                  {"mode": char_attr(_mode(compute_uv, full_matrices))},
                                  operand_output_aliases={0: 0})
  result = [info_ok_or_nan(ctx, info, batch, s, s_aval)]
  if compute_uv:
    result += [info_ok_or_nan(ctx, info, batch, u, u_aval),
               info_ok_or_nan(ctx, info, batch, vt, vt_aval)]
  return result


svd_p = with_dtype_check(
    linalg_primitive("svd", (2,), _shape_rule, _lowering, dtype_rule=_dtype_rule,
                     multiple_results=True), [INEXACT])
svd_p.def_jvp(_jvp)
