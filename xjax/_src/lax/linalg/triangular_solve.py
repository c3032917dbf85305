"""triangular_solve: op(A) X = B or X op(A) = B for triangular A (LAPACK trsm).

Linear in B (its transpose solves with op(A)^T), so reverse mode needs no
factorization; the JVP in A is -A^{-1} dA X (or -X dA A^{-1}), ordered so the
cheaper product comes first, as JAX orders it.
"""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.lax import dot as lax_dot
from xjax._src.lax import elementwise as ew
from xjax._src.lax import structural
from xjax._src.lax.dot import Precision
from xjax._src.lax.linalg.common import (T, char_attr, lapack_call, linalg_primitive, tril,
                                         triu)


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):
  """Solves ``op(a) @ x = b`` (`left_side`) or ``x @ op(a) = b`` for triangular `a`.

  ``op(a)`` is `a`, its transpose (`transpose_a`), its conjugate
  (`conjugate_a`, complex only) or its adjoint (both). Only the `lower` (or
  upper) triangle of `a` is read; with `unit_diagonal` its diagonal is taken
  as ones and not read.

  Args:
    a: float or complex, shape ``[..., m, m]``.
    b: same dtype, shape ``[..., m, n]`` if `left_side` else ``[..., n, m]``;
      or one dimension less (a vector per batch), then the result is too.

  Returns:
    x, of `b`'s shape and dtype.

  Raises:
    TypeError: integer or mixed dtypes, or unequal batch ranks.
    ValueError: `a` not square, or sizes that do not match.

  Mirrors `jax.lax.linalg.triangular_solve`.
  """
  a, b = structural._asarray(a), structural._asarray(b)
  conjugate_a = bool(conjugate_a) and dtypes.issubdtype(core.get_aval(a).dtype,
                                                        np.complexfloating)
  singleton = core.get_aval(b).ndim == core.get_aval(a).ndim - 1
  if singleton:
    b = structural.expand_dims(b, (core.get_aval(b).ndim if left_side
                                   else core.get_aval(b).ndim - 1,))
  out = triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                transpose_a=bool(transpose_a), conjugate_a=conjugate_a,
                                unit_diagonal=bool(unit_diagonal))
  if singleton:
    out = structural.squeeze(out, (core.get_aval(out).ndim - (1 if left_side else 2),))
  return out


def _shape_rule(a_shape, b_shape, *, left_side, **_):
  if a_shape[0] != a_shape[1]:
    raise ValueError("The first input to triangular_solve must be a square matrix. Got "
                     f"shape {a_shape}.")
  common_dim = -2 if left_side else -1
  if a_shape[-1] != b_shape[common_dim]:
    raise ValueError(f"Incompatible shapes for arguments to triangular_solve: {a_shape} and "
                     f"{b_shape}.")
  return b_shape


def _dtype_rule(a_dtype, b_dtype, **_):
  if a_dtype != b_dtype:
    raise TypeError("triangular_solve requires arguments to have the same dtypes, got "
                    f"{a_dtype.name}, {b_dtype.name}.")
  return a_dtype


def _matmul(x, y):
  return lax_dot.batch_matmul(x, y, precision=Precision.HIGHEST) if core.get_aval(x).ndim > 2 \
      else lax_dot.dot(x, y, precision=Precision.HIGHEST)


def _jvp_a(g_a, ans, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
  m, n = core.get_aval(b).shape[-2:]
  k = 1 if unit_diagonal else 0
  g_a = tril(g_a, -k) if lower else triu(g_a, k)
  g_a = ew.neg(g_a)
  g_a = T(g_a) if transpose_a else g_a
  g_a = ew.conj(g_a) if conjugate_a else g_a

  def a_inverse(rhs):
    return triangular_solve(a, rhs, left_side=left_side, lower=lower, transpose_a=transpose_a,
                            conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)

  # The cheaper association first: a solve costs about what a product does.
  if left_side:
    return a_inverse(_matmul(g_a, ans)) if m > n else _matmul(a_inverse(g_a), ans)
  return a_inverse(_matmul(ans, g_a)) if m < n else _matmul(ans, a_inverse(g_a))


def _jvp_b(g_b, ans, a, b, **params):
  return triangular_solve_p.bind(a, g_b, **params)


def _transpose(ct, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
  assert not ad.is_undefined_primal(a) and ad.is_undefined_primal(b)
  if type(ct) is ad.Zero:
    return [None, ad.Zero(b.aval)]
  return [None, triangular_solve_p.bind(a, ct, left_side=left_side, lower=lower,
                                        transpose_a=not transpose_a, conjugate_a=conjugate_a,
                                        unit_diagonal=unit_diagonal)]


def _batch(axis_data, args, dims, **params):
  a, b = args
  da, db = dims
  if da is batching.not_mapped:
    # One matrix `a` for the whole batch: fold the batch into b's free dimension
    # (its columns when solving from the left, its rows otherwise), one solve.
    nd = core.get_aval(b).ndim
    b = batching.moveaxis(b, db, nd - 1 if params["left_side"] else nd - 2)
    shape = core.get_aval(b).shape
    if params["left_side"]:
      flat = structural.reshape(b, shape[:-2] + (shape[-2] * shape[-1],))
    else:
      flat = structural.reshape(b, shape[:-3] + (shape[-3] * shape[-2], shape[-1]))
    out = triangular_solve_p.bind(a, flat, **params)
    return structural.reshape(out, shape), nd - 1 if params["left_side"] else nd - 2
  args = [batching.bdim_at_front(a, da, axis_data.size),
          batching.bdim_at_front(b, db, axis_data.size)]
  return triangular_solve_p.bind(*args, **params), 0


def _lowering(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
  a_aval, b_aval = ctx.avals_in
  if conjugate_a and not transpose_a:
    a = ctx.op1("chlo.conj", [a], a.type)
    conjugate_a = False
  trans = ("C" if conjugate_a else "T") if transpose_a else "N"
  return lapack_call(ctx, "trsm_ffi", a_aval.dtype, [a, b], ctx.avals_out,
                     {"side": char_attr("L" if left_side else "R"),
                      "uplo": char_attr("L" if lower else "U"),
                      "trans_x": char_attr(trans),
                      "diag": char_attr("U" if unit_diagonal else "N")},
                     operand_output_aliases={1: 0})[0]


triangular_solve_p = linalg_primitive("triangular_solve", (2, 2), _shape_rule, _lowering,
                                      dtype_rule=_dtype_rule)
ad.defjvp2(triangular_solve_p, _jvp_a, _jvp_b)
triangular_solve_p.def_transpose(_transpose)
triangular_solve_p.def_batch(_batch)
