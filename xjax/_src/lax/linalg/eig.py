"""eig: A V = V diag(w) for a general square A (LAPACK geev).

The results are always complex. For real A, the jaxlib kernel itself unpacks
LAPACK's packed conjugate-pair eigenvectors into complex ones, so the lowering
only joins the real and imaginary eigenvalue parts; a failed decomposition
(non-finite entries) gives NaNs, as in JAX.

The JVP is nondegenerate perturbation theory (Giles, sec. 3.1): with
P = V^{-1} dA V, dw = diag(P). Eigenvector tangents follow LAPACK's
normalisation (unit 2-norm, real largest-magnitude entry), valid only for
distinct eigenvalues and a unique largest entry; as in JAX they are refused
unless the caller opts in with `enable_eigvec_derivs`.
"""
from __future__ import annotations

import enum
import warnings

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import stablehlo as hlo
from xjax._src.interpreters import ad
from xjax._src.lax import ad_util
from xjax._src.lax import dot as lax_dot
from xjax._src.lax import elementwise as ew
from xjax._src.lax import reductions
from xjax._src.lax import structural
from xjax._src.lax.control_flow.solves import custom_linear_solve
from xjax._src.lax.dot import Precision
from xjax._src.lax.linalg.common import (H, T, char_attr, eye_like, info_ok_or_nan, lapack_call,
                                         linalg_primitive)
from xjax._src.lax.linalg.eigh import INEXACT, diagonal, matmul, row_minus_column
from xjax._src.lax.linalg.common import with_dtype_check
from xjax._src.lax.linalg.lu import lu, lu_solve
from xjax._src.vmap import vmap


class EigImplementation(enum.Enum):
  """Which library computes a general eigendecomposition: ``LAPACK`` (on the
  host CPU; the only one on CPU), ``MAGMA`` or ``CUSOLVER`` (GPU).
  Mirrors `jax.lax.linalg.EigImplementation`."""
  CUSOLVER = "cusolver"
  MAGMA = "magma"
  LAPACK = "lapack"


def eig(x, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        enable_eigvec_derivs: bool = False, implementation: EigImplementation | None = None,
        use_magma: bool | None = None):
  """The eigenvalues and eigenvectors of general square matrices.

  Args:
    x: float or complex, shape ``[..., n, n]``.
    compute_left_eigenvectors: also return `vl`, with ``vl^H x = diag(w) vl^H``.
    compute_right_eigenvectors: also return `vr`, with ``x vr = vr diag(w)``.
    enable_eigvec_derivs: allow derivatives of the eigenvectors (under
      LAPACK's normalisation: unit 2-norm, largest-magnitude entry real);
      valid only for distinct eigenvalues, which cannot be checked.
    implementation: an `EigImplementation`, or None (LAPACK on CPU).
    use_magma: deprecated; True means ``MAGMA``, False ``LAPACK``.

  Returns:
    A list ``[w, vl, vr]`` without the vectors not asked for: `w` of shape
    ``[..., n]``, `vl` and `vr` ``[..., n, n]``, all of the complex dtype of
    `x`'s precision. NaN where the decomposition fails.

  Raises:
    TypeError: an integer dtype, or rank below 2.
    ValueError: matrices that are not square; on CPU, an implementation other
      than LAPACK (when lowered).
    NotImplementedError: derivatives while eigenvectors are computed, unless
      `enable_eigvec_derivs`.

  Mirrors `jax.lax.linalg.eig`.
  """
  if use_magma is not None:
    warnings.warn("use_magma is deprecated, please use implementation=EigImplementation.MAGMA "
                  "instead.", DeprecationWarning, stacklevel=2)
    implementation = EigImplementation.MAGMA if use_magma else EigImplementation.LAPACK
  return eig_p.bind(structural._asarray(x),
                    compute_left_eigenvectors=bool(compute_left_eigenvectors),
                    compute_right_eigenvectors=bool(compute_right_eigenvectors),
                    enable_eigvec_derivs=bool(enable_eigvec_derivs),
                    implementation=implementation)


def _shape_rule(shape, *, compute_left_eigenvectors, compute_right_eigenvectors, **_):
  if shape[0] != shape[1]:
    raise ValueError(f"The input to eig must be a square matrix. Got shape {shape}.")
  return (shape[:-1],) + (shape,) * (compute_left_eigenvectors + compute_right_eigenvectors)


def _dtype_rule(dtype, *, compute_left_eigenvectors, compute_right_eigenvectors, **_):
  return (dtypes.to_complex_dtype(dtype),) * (
      1 + compute_left_eigenvectors + compute_right_eigenvectors)


def _solve(a, b):
  """a^{-1} b for stacks of square `a` and `b`, by LU, differentiable as JAX's
  (implicitly, through `custom_linear_solve`, reusing one factorization)."""
  nd = core.get_aval(a).ndim
  nb = nd - 2
  lu_, _, permutation = lu(ad_util.stop_gradient(a))

  def matvec(x):  # a @ x for a stack of vectors x
    return lax_dot.dot_general(a, x, (((nd - 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))),
                               precision=Precision.HIGHEST)

  def solve_column(b_col):
    return custom_linear_solve(matvec, b_col,
                               solve=lambda _, x: lu_solve(lu_, permutation, x, 0),
                               transpose_solve=lambda _, x: lu_solve(lu_, permutation, x, 1))
  return vmap(solve_column, nd - 1, nd - 1)(b)


def _vector_jvp(w, v, a_dot):
  """Tangents of eigenvalues `w` and eigenvectors `v` (columns, geev-normalised) of A."""
  nd = core.get_aval(v).ndim
  eye = eye_like(v)
  f = ew.sub(ew.reciprocal(ew.add(eye, row_minus_column(w))), eye)
  p = matmul(_solve(v, a_dot), v)
  w_dot = diagonal(p)
  u = matmul(v, ew.mul(f, p))
  # dv_j = u_j + c_j v_j; LAPACK's normalisation (unit norm, largest entry real) fixes
  # c_j = -Re(v_j^H u_j) - i Im(u_kj) / v_kj, where k = argmax_i |v_ij|.
  k = reductions.argmax(ew.abs(v), nd - 2, np.int32)
  rows = structural.broadcasted_iota(np.int32, core.get_aval(v).shape, nd - 2)
  mask = ew.convert_element_type(ew.eq(rows, structural.expand_dims(k, (nd - 2,))),
                                 core.get_aval(v).dtype)
  col_sum = lambda x: reductions.reduce_sum(x, (nd - 2,))
  c = ew.complex(ew.neg(ew.real(col_sum(ew.mul(ew.conj(v), u)))),
                 ew.div(ew.neg(ew.imag(col_sum(ew.mul(mask, u)))),
                        ew.real(col_sum(ew.mul(mask, v)))))
  return w_dot, ew.add(u, ew.mul(v, structural.broadcast_in_dim(
      c, core.get_aval(v).shape, tuple(i for i in range(nd) if i != nd - 2))))


def _jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors,
         enable_eigvec_derivs, implementation):
  a, = primals
  a_dot, = tangents
  vectors = compute_left_eigenvectors or compute_right_eigenvectors
  if vectors and not enable_eigvec_derivs:
    raise NotImplementedError(
        "Derivatives of non-symmetric eigenvectors are only valid under assumptions on the "
        "input that JAX cannot check (see the enable_eigvec_derivs argument to "
        "jax.lax.linalg.eig). Pass enable_eigvec_derivs=True to jax.lax.linalg.eig to opt "
        "in. See https://github.com/jax-ml/jax/issues/2748 for discussion.")
  outs = eig(a, compute_left_eigenvectors=compute_left_eigenvectors,
             compute_right_eigenvectors=True, enable_eigvec_derivs=enable_eigvec_derivs,
             implementation=implementation)
  w, vr = outs[0], outs[-1]
  primals_out = [w, *outs[1:-1], *([vr] if compute_right_eigenvectors else [])]
  if type(a_dot) is ad.Zero:
    return primals_out, [ad.Zero.from_primal_value(p) for p in primals_out]
  a_dot = ew.convert_element_type(a_dot, core.get_aval(vr).dtype)
  if not vectors:
    w_dot = reductions.reduce_sum(ew.mul(_solve(vr, a_dot), T(vr)),
                                  (core.get_aval(vr).ndim - 1,))
    return primals_out, [w_dot]
  w_dot, vr_dot = _vector_jvp(w, vr, a_dot)
  tangents_out = [w_dot]
  if compute_left_eigenvectors:
    tangents_out.append(_vector_jvp(ew.conj(w), outs[1], H(a_dot))[1])
  if compute_right_eigenvectors:
    tangents_out.append(vr_dot)
  return primals_out, tangents_out


def _lowering(ctx, x, *, compute_left_eigenvectors, compute_right_eigenvectors,
              enable_eigvec_derivs, implementation):
  del enable_eigvec_derivs
  if implementation is not None and implementation != EigImplementation.LAPACK:
    raise ValueError("Only the lapack implementation is supported on CPU.")
  aval, = ctx.avals_in
  batch = tuple(aval.shape[:-2])
  real = not dtypes.issubdtype(aval.dtype, np.complexfloating)
  w_part_aval = core.ShapedArray(aval.shape[:-1], aval.dtype)
  vec_aval = core.ShapedArray(aval.shape, dtypes.to_complex_dtype(aval.dtype))
  info_aval = core.ShapedArray(batch, np.dtype(np.int32))
  avals_out = [w_part_aval] * (2 if real else 1) + [vec_aval, vec_aval, info_aval]
  mode = lambda compute: char_attr("V" if compute else "N")
  *w, vl, vr, info = lapack_call(ctx, "geev_ffi", aval.dtype, [x], avals_out,
                                 {"compute_left": mode(compute_left_eigenvectors),
                                  "compute_right": mode(compute_right_eigenvectors)})
  w_aval = ctx.avals_out[0]
  w = ctx.op1("stablehlo.complex", w, hlo.aval_type(w_aval)) if real else w[0]
  out = [info_ok_or_nan(ctx, info, batch, w, w_aval)]
  if compute_left_eigenvectors:
    out.append(info_ok_or_nan(ctx, info, batch, vl, ctx.avals_out[len(out)]))
  if compute_right_eigenvectors:
    out.append(info_ok_or_nan(ctx, info, batch, vr, ctx.avals_out[len(out)]))
  return out


eig_p = with_dtype_check(
    linalg_primitive("eig", (2,), _shape_rule, _lowering, dtype_rule=_dtype_rule,
                     multiple_results=True), [INEXACT])
eig_p.def_jvp(_jvp)
