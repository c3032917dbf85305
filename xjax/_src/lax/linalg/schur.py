"""schur: A = Z T Z^H with T (quasi-)upper triangular and Z unitary (LAPACK gees).

T is upper triangular for complex input and quasi-upper triangular (2x2
blocks on the diagonal for complex-conjugate eigenvalue pairs) for real
input. A matrix on which the kernel fails gives NaNs, as in JAX. JAX defines
no derivative for schur, and neither does xjax: `jvp` and `grad` raise
NotImplementedError.
"""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src.lax import structural
from xjax._src.lax.linalg.common import char_attr, info_ok_or_nan, lapack_call, linalg_primitive


def schur(x, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable=None):
  """The Schur decomposition ``x = Z @ T @ Z^H`` of each square matrix in `x`.

  Args:
    x: float or complex, shape ``[..., n, n]``.
    compute_schur_vectors: also return the unitary (orthogonal) Z.
    sort_eig_vals: must be False: sorting eigenvalues is not implemented (as in
      JAX, which raises when the call is compiled).
    select_callable: unused (kept in the params, as JAX does).

  Returns:
    A list ``[T, Z]`` (or ``[T]`` without `compute_schur_vectors`), each of
    `x`'s shape and dtype. T is upper triangular for complex `x` and quasi-upper
    triangular (real 2x2 blocks for complex eigenvalue pairs) for real `x`.
    A matrix on which LAPACK fails gives all NaNs.

  Raises:
    TypeError: an integer dtype, or rank below 2.
    ValueError: matrices that are not square.
    NotImplementedError: `sort_eig_vals` is True (when lowered, i.e. evaluated
      or compiled, as in JAX).

  Mirrors `jax.lax.linalg.schur`.
  """
  return schur_p.bind(structural._asarray(x), compute_schur_vectors=bool(compute_schur_vectors),
                      sort_eig_vals=bool(sort_eig_vals), select_callable=select_callable)


def _shape_rule(shape, *, compute_schur_vectors, **_):
  if shape[0] != shape[1]:
    raise ValueError(f"The input to schur must be a square matrix. Got shape {shape}.")
  return (shape, shape) if compute_schur_vectors else (shape,)


def _dtype_rule(dtype, *, compute_schur_vectors, **_):
  return (dtype, dtype) if compute_schur_vectors else (dtype,)


def _lowering(ctx, x, *, compute_schur_vectors, sort_eig_vals, select_callable):
  del select_callable  # unused, as in JAX
  if sort_eig_vals:
    raise NotImplementedError("The sort feature of LAPACK's gees routine is not implemented.")
  aval, = ctx.avals_in
  batch = tuple(aval.shape[:-2])
  info_aval = core.ShapedArray(batch, np.dtype(np.int32))
  eigvals_aval = core.ShapedArray(tuple(aval.shape[:-1]), aval.dtype)
  # The kernel also returns the eigenvalues (real and imaginary parts apart for
  # real input) and the number of selected eigenvalues (sdim) before info.
  real = not np.issubdtype(aval.dtype, np.complexfloating)
  eigvals = [eigvals_aval, eigvals_aval] if real else [eigvals_aval]
  results = lapack_call(ctx, "gees_ffi", aval.dtype, [x],
                        [aval, aval, *eigvals, info_aval, info_aval],
                        {"mode": char_attr("V" if compute_schur_vectors else "N"),
                         "sort": char_attr("N")},
                        operand_output_aliases={0: 0})
  info = results[-1]
  outs = [info_ok_or_nan(ctx, info, batch, results[0], ctx.avals_out[0])]
  if compute_schur_vectors:
    outs.append(info_ok_or_nan(ctx, info, batch, results[1], ctx.avals_out[1]))
  return outs


schur_p = linalg_primitive("schur", (2,), _shape_rule, _lowering, dtype_rule=_dtype_rule,
                           multiple_results=True)
