"""lu: P A = L U with partial pivoting (LAPACK getrf), and its helpers.

`lu_p` has three outputs: the packed factors (L's strict lower triangle, unit
diagonal implied, and U's upper triangle), the int32 row swaps ``pivots``
(0-based) and the equivalent ``permutation``. As in JAX, a singular matrix is
not an error and gives no NaNs: U just has a zero on its diagonal.
`lu_pivots_to_permutation_p` turns swaps into a permutation with a lax loop.
`lu_solve` (JAX's private ``lax.linalg._lu_solve``) solves with the factors.

The JVP is that of De Hoog, Anderssen and Lukas: with ``A' = P dA``,
``X = L^{-1} A' U^{-1}``, ``dL = L tril(X, -1)`` and ``dU = triu(X) U``.
"""
from __future__ import annotations

import math

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import stablehlo as hlo
from xjax._src.interpreters import ad
from xjax._src.interpreters import lowering
from xjax._src.jit import jit
from xjax._src.lax import dot as lax_dot
from xjax._src.lax import elementwise as ew
from xjax._src.lax import gather_scatter
from xjax._src.lax import reductions
from xjax._src.lax import slicing
from xjax._src.lax import sorting
from xjax._src.lax import structural
from xjax._src.lax.control_flow.loops import fori_loop
from xjax._src.lax.dot import Precision
from xjax._src.lax.linalg.common import (INEXACT, INT32, eye, lapack_call, linalg_primitive, tril,
                                         triu, with_dtype_check)
from xjax._src.lax.linalg.triangular_solve import triangular_solve
from xjax._src.vmap import vmap

def take_rows(x, idx):
  """``x[idx, :]`` for a 2-D `x` and 1-D integer `idx` (negative indices wrap), the
  gather jnp indexing emits."""
  n = core.get_aval(x).shape[0]
  dtype = core.get_aval(idx).dtype
  idx = ew.select_n(ew.lt(idx, structural.full((), 0, dtype)), idx,
                    ew.add(idx, structural.full((), n, dtype)))
  idx = structural.expand_dims(idx, (1,))
  dnums = gather_scatter.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                                start_index_map=(0,))
  return gather_scatter.gather(x, idx, dnums, (1, core.get_aval(x).shape[1]),
                               mode=gather_scatter.GatherScatterMode.PROMISE_IN_BOUNDS)


def matmul_highest(x, y):
  """``x @ y`` over stacks of matrices, at full precision."""
  if core.get_aval(x).ndim > 2:
    return lax_dot.batch_matmul(x, y, precision=Precision.HIGHEST)
  return lax_dot.dot(x, y, precision=Precision.HIGHEST)


# ----------------------------------------------------------------------------
# lu


def lu(x):
  """LU decomposition with partial pivoting: ``P x = L U`` for each matrix in `x`.

  Args:
    x: float or complex, shape ``[..., m, n]``.

  Returns:
    ``[lu, pivots, permutation]``: `lu` of `x`'s shape and dtype holds L below
    the diagonal (its unit diagonal is implied) and U on and above it;
    `pivots`, int32 ``[..., min(m, n)]``, the 0-based row swaps (row i was
    swapped with row ``pivots[i]``, in order); `permutation`, int32
    ``[..., m]``, the same swaps as a permutation: ``x[permutation] = L U``.
    A singular matrix gives a U with a zero pivot, not NaNs.

  Raises:
    TypeError: an integer dtype, or rank below 2.

  Mirrors `jax.lax.linalg.lu`.
  """
  return lu_p.bind(structural._asarray(x))


def _lu_shape_rule(shape):
  m, n = shape
  return shape, (min(m, n),), (m,)


def _lu_dtype_rule(dtype):
  return dtype, np.dtype(np.int32), np.dtype(np.int32)


def _lu_jvp_one(lu_, a_dot, permutation):
  """dLU for one m x n matrix: L tril(X, -1) + triu(X) U with X = L^{-1} P dA U^{-1},
  L padded to m x m and U to n x n with identity blocks."""
  m, n = core.get_aval(a_dot).shape
  dtype = core.get_aval(a_dot).dtype
  k = min(m, n)
  zero = structural.full((), 0, dtype)
  l = structural.pad(tril(slicing.slice(lu_, (0, 0), (m, k)), -1), zero,
                     ((0, 0, 0), (0, m - k, 0)))
  l = ew.add(l, eye(dtype, (m, m)))
  u_eye = structural.pad(eye(dtype, (n - k, n - k)), zero, ((k, 0, 0), (k, 0, 0)))
  u = structural.pad(triu(slicing.slice(lu_, (0, 0), (k, n))), zero,
                     ((0, n - k, 0), (0, 0, 0)))
  u = ew.add(u, u_eye)
  la = triangular_solve(l, take_rows(a_dot, permutation), left_side=True, transpose_a=False,
                        lower=True, unit_diagonal=True)
  lau = triangular_solve(u, la, left_side=False, transpose_a=False, lower=False)
  return ew.add(matmul_highest(l, tril(lau, -1)), matmul_highest(triu(lau), u))


def _lu_jvp(primals, tangents):
  a, = primals
  a_dot, = tangents
  lu_, pivots, permutation = lu_p.bind(a)
  int_zeros = [ad.Zero(core.get_aval(pivots).to_tangent_aval()),
               ad.Zero(core.get_aval(permutation).to_tangent_aval())]
  if type(a_dot) is ad.Zero:
    return [lu_, pivots, permutation], [ad.Zero(core.get_aval(lu_).to_tangent_aval()),
                                        *int_zeros]
  fn = _lu_jvp_one
  for _ in core.get_aval(a).shape[:-2]:
    fn = vmap(fn)
  return [lu_, pivots, permutation], [fn(lu_, a_dot, permutation), *int_zeros]


def _lu_lowering(ctx, x):
  aval, = ctx.avals_in
  lu_aval, pivots_aval, perm_aval = ctx.avals_out
  batch = tuple(aval.shape[:-2])
  info_aval = core.ShapedArray(batch, np.dtype(np.int32))
  lu_, pivots, info = lapack_call(ctx, "getrf_ffi", aval.dtype, [x],
                                  [lu_aval, pivots_aval, info_aval],
                                  operand_output_aliases={0: 0})

  def full(value, shape, dtype):
    return ctx.op1("stablehlo.broadcast_in_dim", [ctx.constant(np.array(value, dtype))],
                   hlo.tensor_type(shape, dtype), "broadcast_dimensions = array<i64>")

  # LAPACK's pivots are 1-based.
  pivots = ctx.op1("stablehlo.subtract", [pivots, full(1, pivots_aval.shape, np.int32)],
                   pivots.type)
  # info < 0 (a bad argument) gives NaNs; info > 0 (singular) does not, as in JAX.
  ok = ctx.op1("stablehlo.compare", [info, full(0, batch, np.int32)],
               hlo.tensor_type(batch, np.bool_),
               "comparison_direction = #stablehlo<comparison_direction GE>, "
               "compare_type = #stablehlo<comparison_type SIGNED>")
  ok = ctx.op1("stablehlo.broadcast_in_dim", [ok], hlo.tensor_type(lu_aval.shape, np.bool_),
               f"broadcast_dimensions = {hlo.i64_array(range(len(batch)))}")
  lu_ = ctx.op1("stablehlo.select", [ok, lu_, full(np.nan, lu_aval.shape, lu_aval.dtype)],
                lu_.type)
  rule = lowering.lower_fun(_pivots_to_permutation, multiple_results=False)
  avals_in, avals_out = ctx.avals_in, ctx.avals_out
  ctx.avals_in, ctx.avals_out = [pivots_aval], [perm_aval]
  try:
    perm = rule(ctx, pivots, permutation_size=aval.shape[-2])
  finally:
    ctx.avals_in, ctx.avals_out = avals_in, avals_out
  return [lu_, pivots, perm]


lu_p = with_dtype_check(
    linalg_primitive("lu", (2,), _lu_shape_rule, _lu_lowering, dtype_rule=_lu_dtype_rule,
                     multiple_results=True),
    [INEXACT])
lu_p.def_jvp(_lu_jvp)


def _lu_python(x):
  """LU with partial pivoting computed with lax operations only (no LAPACK call): JAX's
  portable LU for platforms without a better one. Same contract as `lu`: ``(lu, pivots,
  permutation)``; a singular column leaves its zero pivot (no division, no NaNs).

  Mirrors JAX's private `jax._src.lax.linalg._lu_python`.
  """
  x = structural._asarray(x)
  aval = core.get_aval(x)
  if aval.ndim < 2 or not dtypes.issubdtype(aval.dtype, np.inexact):
    raise TypeError(f"_lu_python requires a float or complex array of rank >= 2, got "
                    f"{aval.str_short()}")
  fn = _lu_unblocked
  for _ in aval.shape[:-2]:
    fn = vmap(fn)
  return fn(x)


def _lu_unblocked(a):
  """Right-looking LU of one m x n matrix, one column per fori_loop step."""
  m, n = core.get_aval(a).shape
  dtype = core.get_aval(a).dtype
  k_max = min(m, n)
  rows = structural.iota(np.int32, m)
  cols = structural.iota(np.int32, n)
  pivots = structural.full((k_max,), 0, np.int32)
  perm = structural.iota(np.int32, m)
  if k_max == 0:
    return a, pivots, perm
  real = np.finfo(dtype).dtype
  zero = structural.full((), 0, dtype)

  def column(a, k):
    return structural.reshape(slicing.dynamic_slice(a, (structural.full((), 0, np.int32), k),
                                                    (m, 1)), (m,))

  def swap(v, k, i):  # exchanges entries (rows) k and i of v
    vk = slicing.dynamic_index_in_dim(v, k, 0)
    vi = slicing.dynamic_index_in_dim(v, i, 0)
    return slicing.dynamic_update_index_in_dim(
        slicing.dynamic_update_index_in_dim(v, vi, k, 0), vk, i, 0)

  def body(k, state):
    a, pivots, perm = state
    k = ew.convert_element_type(k, np.int32)
    col = column(a, k)
    mag = (ew.add(ew.abs(ew.real(col)), ew.abs(ew.imag(col))) if dtypes.issubdtype(
        dtype, np.complexfloating) else ew.abs(col))
    below = ew.ge(rows, structural.broadcast_in_dim(k, (m,), ()))
    mag = ew.select_n(below, structural.full((m,), -np.inf, real), mag)
    i = reductions.argmax(mag, 0, np.int32)
    pivots = slicing.dynamic_update_index_in_dim(pivots, structural.reshape(i, (1,)), k, 0)
    a, perm = swap(a, k, i), swap(perm, k, i)
    col = column(a, k)
    pivot = slicing.dynamic_index_in_dim(col, k, 0, keepdims=False)
    nonzero = ew.ne(pivot, zero)
    safe = ew.select_n(nonzero, structural.full((), 1, dtype), pivot)
    strictly_below = ew.gt(rows, structural.broadcast_in_dim(k, (m,), ()))
    scale = ew.bitwise_and(strictly_below, structural.broadcast_in_dim(nonzero, (m,), ()))
    col = ew.select_n(scale, col, ew.div(col, structural.broadcast_in_dim(safe, (m,), ())))
    a = slicing.dynamic_update_slice(a, structural.reshape(col, (m, 1)),
                                     (structural.full((), 0, np.int32), k))
    row = structural.reshape(slicing.dynamic_index_in_dim(a, k, 0), (n,))
    update = ew.mul(structural.broadcast_in_dim(col, (m, n), (0,)),
                    structural.broadcast_in_dim(row, (m, n), (1,)))
    trailing = ew.bitwise_and(
        structural.broadcast_in_dim(strictly_below, (m, n), (0,)),
        structural.broadcast_in_dim(ew.gt(cols, structural.broadcast_in_dim(k, (n,), ())),
                                    (m, n), (1,)))
    a = ew.sub(a, ew.select_n(trailing, structural.full((m, n), 0, dtype), update))
    return a, pivots, perm

  return fori_loop(np.int32(0), np.int32(k_max), body, (a, pivots, perm))


# ----------------------------------------------------------------------------
# lu_pivots_to_permutation


def lu_pivots_to_permutation(pivots, permutation_size: int):
  """The permutation made by applying row swaps `pivots` to ``arange(permutation_size)``.

  Swap i exchanges entries i and ``pivots[..., i]``, in order, as LAPACK's
  getrf pivots do (0-based here).

  Args:
    pivots: int32, shape ``[..., k]``.
    permutation_size: the length m of the permutation, at least k.

  Returns:
    int32 ``[..., m]``.

  Raises:
    TypeError: `pivots` not int32 (after canonicalization), or rank 0.
    ValueError: `permutation_size` smaller than k.

  Mirrors `jax.lax.linalg.lu_pivots_to_permutation`.
  """
  return lu_pivots_to_permutation_p.bind(structural._asarray(pivots),
                                         permutation_size=permutation_size)


def _pivots_to_permutation_shape_rule(shape, *, permutation_size):
  pivots_size, = shape
  if not permutation_size >= pivots_size:
    raise ValueError(f"Output permutation size {permutation_size} has to exceed the trailing "
                     f"dimension of the pivots. Got pivots size {pivots_size}")
  return (permutation_size,)


def _pivots_to_permutation(swaps, *, permutation_size):
  """The permutation, by a fori_loop over the swaps (vectorized over batch dims).

  As jnp indexing would: a negative swap index counts from the end, an index
  out of range reads the clamped entry and writes nothing.
  """
  aval = core.get_aval(swaps)
  *batch, k = aval.shape
  m = permutation_size
  shape = (*batch, m)
  permutation = structural.broadcasted_iota(np.int32, shape, len(batch))
  if m == 0 or k == 0:
    return permutation

  def body(i, permutation):
    i = ew.convert_element_type(i, np.int32)
    positions = structural.broadcasted_iota(np.int32, shape, len(batch))
    j = slicing.dynamic_index_in_dim(swaps, i, len(batch), keepdims=False)
    j = ew.select_n(ew.lt(j, structural.full((), 0, np.int32)), j,
                    ew.add(j, structural.full((), m, np.int32)))
    j_read = ew.clamp(structural.full((), 0, np.int32), j, structural.full((), m - 1, np.int32))
    at_j = ew.eq(positions, structural.broadcast_in_dim(j, shape, tuple(range(len(batch)))))
    at_j_read = ew.eq(positions, structural.broadcast_in_dim(j_read, shape,
                                                             tuple(range(len(batch)))))
    zeros = structural.full(shape, 0, np.int32)
    y = reductions.reduce_sum(ew.select_n(at_j_read, zeros, permutation), (len(batch),))
    x = slicing.dynamic_index_in_dim(permutation, i, len(batch), keepdims=False)
    at_i = ew.eq(positions, structural.broadcast_in_dim(i, shape, ()))
    permutation = ew.select_n(at_i, permutation,
                              structural.broadcast_in_dim(y, shape, tuple(range(len(batch)))))
    return ew.select_n(at_j, permutation,
                       structural.broadcast_in_dim(x, shape, tuple(range(len(batch)))))

  return fori_loop(np.int32(0), np.int32(k), body, permutation)


lu_pivots_to_permutation_p = with_dtype_check(
    linalg_primitive("lu_pivots_to_permutation", (1,), _pivots_to_permutation_shape_rule,
                     lowering.lower_fun(_pivots_to_permutation, multiple_results=False),
                     kinds=("int",)),
    [INT32])
ad.defjvp_zero(lu_pivots_to_permutation_p)


# ----------------------------------------------------------------------------
# Solving with the factors


def _lu_solve_one(lu_, permutation, b, trans):
  m = core.get_aval(lu_).shape[0]
  b_shape = core.get_aval(b).shape
  x = structural.reshape(b, (m, math.prod(b_shape[1:])))
  if trans == 0:
    x = take_rows(x, permutation)
    x = triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
    x = triangular_solve(lu_, x, left_side=True, lower=False)
  elif trans == 1 or trans == 2:
    conj = trans == 2
    x = triangular_solve(lu_, x, left_side=True, lower=False, transpose_a=True,
                         conjugate_a=conj)
    x = triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True,
                         transpose_a=True, conjugate_a=conj)
    # The inverse permutation: the positions that sort `permutation`.
    _, inverse = sorting.sort_key_val(permutation, structural.iota(np.int32, m))
    x = take_rows(x, inverse)
  else:
    raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
  return structural.reshape(x, b_shape)


def _broadcast_to(x, shape):
  aval = core.get_aval(x)
  if tuple(aval.shape) == tuple(shape):
    return x
  nd = len(shape)
  return structural.broadcast_in_dim(x, shape, tuple(range(nd - aval.ndim, nd)))


@jit(static_argnums=(3,))
def _lu_solve(lu, permutation, b, trans):
  lu_shape, b_shape = core.get_aval(lu).shape, core.get_aval(b).shape
  if len(lu_shape) < 2 or lu_shape[-1] != lu_shape[-2]:
    raise ValueError(f"last two dimensions of LU decomposition must be equal, got shape "
                     f"{lu_shape}")
  if len(b_shape) < 1:
    raise ValueError(f"b matrix must have rank >= 1, got shape {b_shape}")
  # As numpy.linalg.solve: b is a stack of vectors when it has one dimension
  # less than lu; otherwise a stack of matrices, batch dims broadcasting.
  rhs_vector = len(lu_shape) == len(b_shape) + 1
  if rhs_vector:
    if b_shape[-1] != lu_shape[-1]:
      raise ValueError("When LU decomposition matrix and b have the same number of "
                       "dimensions, last axis of LU decomposition matrix (shape "
                       f"{lu_shape}) and b array (shape {b_shape}) must match")
    b = structural.expand_dims(b, (len(b_shape),))
  elif b_shape[-2] != lu_shape[-1]:
    raise ValueError("When LU decomposition matrix and b different numbers of dimensions, "
                     f"last axis of LU decomposition matrix (shape {lu_shape}) and second to "
                     f"last axis of b array (shape {b_shape}) must match")
  b_shape = core.get_aval(b).shape
  perm_shape = core.get_aval(permutation).shape
  batch = structural.broadcast_shapes(lu_shape[:-2], perm_shape[:-1], b_shape[:-2])
  lu = _broadcast_to(lu, (*batch, *lu_shape[-2:]))
  permutation = _broadcast_to(permutation, (*batch, perm_shape[-1]))
  b = _broadcast_to(b, (*batch, *b_shape[-2:]))
  fn = _lu_solve_one
  for _ in batch:
    fn = vmap(fn, in_axes=(0, 0, 0, None))
  x = fn(lu, permutation, b, trans)
  return structural.squeeze(x, (core.get_aval(x).ndim - 1,)) if rhs_vector else x


def lu_solve(lu, permutation, b, trans: int = 0):
  """Solves ``A x = b`` (`trans` 0), ``A^T x = b`` (1) or ``A^H x = b`` (2) given
  ``lu, _, permutation = lu(A)``.

  Args:
    lu: float or complex ``[..., n, n]``, the packed factors.
    permutation: int32 ``[..., n]``.
    b: ``[..., n]`` (one dimension less than `lu`: vectors) or ``[..., n, k]``;
      batch dimensions broadcast with those of `lu` and `permutation`.
    trans: 0, 1 or 2 (a static Python int).

  Returns:
    x, shaped like `b` (with the broadcast batch dims).

  Raises:
    ValueError: `lu` not square, `b` of rank 0, sizes that do not match, or
      `trans` not 0, 1 or 2.

  Mirrors JAX's `jax._src.lax.linalg._lu_solve` (and `lu_solve`).
  """
  return _lu_solve(lu, permutation, b, trans)
