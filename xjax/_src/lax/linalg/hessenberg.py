"""hessenberg: A = Q H Q^H with H upper Hessenberg (LAPACK gehrd).

Q is returned in LAPACK's compact form: Householder vectors below the first
subdiagonal of the result and their scalar factors `taus`. A matrix on which
the kernel reports failure gives NaNs, as in JAX. JAX defines no derivative
for hessenberg, and neither does xjax.
"""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src.lax import structural
from xjax._src.lax.linalg.common import info_ok_or_nan, lapack_call, linalg_primitive


def hessenberg(a):
  """Reduces each square matrix in `a` to upper Hessenberg form.

  Args:
    a: float or complex, shape ``[..., n, n]`` with n >= 1.

  Returns:
    ``(a, taus)``: `a`'s shape and dtype, whose upper triangle and first
    subdiagonal hold the Hessenberg matrix H and whose entries below the first
    subdiagonal hold the Householder vectors (each with an implicit leading
    1); `taus`, shape ``[..., n - 1]``, the Householder scalars, so that
    ``a = Q H Q^H`` with ``Q = prod_i (I - taus[i] v_i v_i^H)``.

  Raises:
    TypeError: an integer dtype, or rank below 2.
    ValueError: matrices that are not square, or empty (n = 0).

  Mirrors `jax.lax.linalg.hessenberg`.
  """
  return hessenberg_p.bind(structural._asarray(a))


def _shape_rule(shape):
  if shape[0] != shape[1]:
    raise ValueError("Argument to Hessenberg reduction must have shape [..., n, n], got "
                     f"shape {shape}")
  if shape[0] == 0:
    # JAX fails here while lowering (a taus of size -1); say so plainly instead.
    raise ValueError(f"Argument to Hessenberg reduction must have n >= 1, got shape {shape}")
  return shape, (shape[1] - 1,)


def _dtype_rule(dtype):
  return dtype, dtype


def _lowering(ctx, a):
  aval, = ctx.avals_in
  batch = tuple(aval.shape[:-2])
  n = aval.shape[-1]
  info_aval = core.ShapedArray(batch, np.dtype(np.int32))
  a_out, taus, info = lapack_call(ctx, "gehrd_ffi", aval.dtype, [a],
                                  [*ctx.avals_out, info_aval],
                                  {"low": "1 : i32", "high": f"{n} : i32"},
                                  operand_output_aliases={0: 0})
  return [info_ok_or_nan(ctx, info, batch, a_out, ctx.avals_out[0]),
          info_ok_or_nan(ctx, info, batch, taus, ctx.avals_out[1])]


hessenberg_p = linalg_primitive("hessenberg", (2,), _shape_rule, _lowering,
                                dtype_rule=_dtype_rule, multiple_results=True)
