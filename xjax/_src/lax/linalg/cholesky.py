"""cholesky: A = L L^H for Hermitian positive-definite A (LAPACK potrf).

A matrix that is not positive definite gives a factor full of NaNs, as in
JAX. The JVP is the forward-mode rule of Murray (arXiv:1602.07527):
dL = L Phi(L^{-1} dA L^{-H}), Phi taking the lower triangle with the diagonal
halved.
"""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src.interpreters import ad
from xjax._src.lax import dot as lax_dot
from xjax._src.lax import elementwise as ew
from xjax._src.lax import structural
from xjax._src.lax.dot import Precision
from xjax._src.lax.linalg.common import (char_attr, eye_like, info_ok_or_nan, lapack_call,
                                         linalg_primitive, symmetrize, tril)
from xjax._src.lax.linalg.triangular_solve import triangular_solve


def cholesky(x, *, symmetrize_input: bool = True):
  """The lower Cholesky factor L of each matrix in `x`: ``x = L @ L^H``.

  Args:
    x: float or complex, shape ``[..., n, n]``: Hermitian (symmetric) positive
      definite matrices.
    symmetrize_input: use ``(x + x^H) / 2``; if False, only the lower triangle
      of `x` is read.

  Returns:
    L, lower triangular, of `x`'s shape and dtype; all NaN for a matrix that is
    not positive definite.

  Raises:
    TypeError: an integer dtype, or rank below 2.
    ValueError: matrices that are not square.

  Mirrors `jax.lax.linalg.cholesky`.
  """
  x = structural._asarray(x)
  if symmetrize_input:
    x = symmetrize(x)
  return tril(cholesky_p.bind(x))


def _shape_rule(shape):
  if shape[0] != shape[1]:
    raise ValueError(f"The input to cholesky must be a square matrix. Got shape {shape}.")
  return shape


def _jvp(primals, tangents):
  x, = primals
  sigma_dot, = tangents
  L = tril(cholesky_p.bind(x))
  if type(sigma_dot) is ad.Zero:
    return L, ad.Zero(core.get_aval(L).to_tangent_aval())

  def phi(X):
    l = tril(X)
    one = structural.full((), 1, core.get_aval(X).dtype)
    return ew.div(l, ew.add(eye_like(l), one))

  tmp = triangular_solve(L, sigma_dot, left_side=False, transpose_a=True, conjugate_a=True,
                         lower=True)
  inner = phi(triangular_solve(L, tmp, left_side=True, transpose_a=False, lower=True))
  L_dot = lax_dot.batch_matmul(L, inner, precision=Precision.HIGHEST) \
      if core.get_aval(L).ndim > 2 else lax_dot.dot(L, inner, precision=Precision.HIGHEST)
  return L, L_dot


def _lowering(ctx, x):
  aval, = ctx.avals_in
  batch = tuple(aval.shape[:-2])
  info_aval = core.ShapedArray(batch, np.dtype(np.int32))
  result, info = lapack_call(ctx, "potrf_ffi", aval.dtype, [x], [aval, info_aval],
                             {"uplo": char_attr("L")}, operand_output_aliases={0: 0})
  return info_ok_or_nan(ctx, info, batch, result, ctx.avals_out[0])


cholesky_p = linalg_primitive("cholesky", (2,), _shape_rule, _lowering)
cholesky_p.def_jvp(_jvp)
