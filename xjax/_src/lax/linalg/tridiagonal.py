"""tridiagonal: A = Q T Q^H for Hermitian A, T real symmetric tridiagonal
(LAPACK sytrd/hetrd); and tridiagonal_solve: A X = B for tridiagonal A given
by its three diagonals (LAPACK gtsv).

As in JAX, `tridiagonal` has no derivative. `tridiagonal_solve` is linear in
B (its transpose solves with A^T, whose off-diagonals are A's swapped and
shifted) and differentiable in the diagonals: dX = A^{-1} (dB - dA X).
A failing kernel gives NaNs.
"""
from __future__ import annotations

import numpy as np

from xjax._src import backend
from xjax._src import core
from xjax._src import stablehlo as hlo
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.lax import elementwise as ew
from xjax._src.lax import slicing
from xjax._src.lax import structural
from xjax._src.lax.linalg import common
from xjax._src.lax.linalg.common import char_attr, info_ok_or_nan, lapack_call, linalg_primitive


def _same_dtypes(name, dtypes_in):
  if any(d != dtypes_in[0] for d in dtypes_in[1:]):
    raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                    f"{', '.join(d.name for d in dtypes_in)}.")
  return dtypes_in[0]


# ----------------------------------------------------------------------------
# tridiagonal


def tridiagonal(a, *, lower: bool = True):
  """Reduces each Hermitian (symmetric) matrix in `a` to real tridiagonal form.

  Args:
    a: float or complex, shape ``[..., n, n]`` with n >= 1; only its `lower`
      (or upper) triangle is read.
    lower: which triangle of `a` to read and to write the reflectors into.

  Returns:
    ``(a, d, e, taus)``: `a`'s shape and dtype, holding the tridiagonal matrix
    on its diagonal and first sub- (`lower`) or superdiagonal, and the
    Householder vectors beyond; `d` (shape ``[..., n]``) its diagonal and `e`
    (``[..., n - 1]``) its off-diagonal, both real; `taus` (``[..., n - 1]``,
    `a`'s dtype) the Householder scalars. All NaN where LAPACK fails.

  Raises:
    TypeError: an integer dtype, or rank below 2.
    ValueError: matrices that are not square, or empty.

  Mirrors `jax.lax.linalg.tridiagonal`.
  """
  return tridiagonal_p.bind(structural._asarray(a), lower=bool(lower))


def _tridiagonal_shape_rule(shape, **_):
  if shape[0] != shape[1] or shape[1] == 0:
    raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape {shape}.")
  n = shape[0]
  return shape, (n,), (n - 1,), (n - 1,)


def _tridiagonal_dtype_rule(dtype, **_):
  real = np.dtype(np.finfo(dtype).dtype)  # float32 for complex64, float64 for complex128
  return dtype, real, real, dtype


def _tridiagonal_lowering(ctx, a, *, lower):
  aval, = ctx.avals_in
  batch = tuple(aval.shape[:-2])
  info_aval = core.ShapedArray(batch, np.dtype(np.int32))
  base = "hetrd_ffi" if np.issubdtype(aval.dtype, np.complexfloating) else "sytrd_ffi"
  *results, info = lapack_call(ctx, base, aval.dtype, [a], [*ctx.avals_out, info_aval],
                               {"uplo": char_attr("L" if lower else "U")},
                               operand_output_aliases={0: 0})
  return [info_ok_or_nan(ctx, info, batch, r, r_aval)
          for r, r_aval in zip(results, ctx.avals_out, strict=True)]


tridiagonal_p = linalg_primitive("tridiagonal", (2,), _tridiagonal_shape_rule,
                                 _tridiagonal_lowering, dtype_rule=_tridiagonal_dtype_rule,
                                 multiple_results=True)


# ----------------------------------------------------------------------------
# tridiagonal_solve


def tridiagonal_solve(dl, d, du, b, *, perturb_singular: bool = False):
  """Solves ``A @ x = b`` for tridiagonal A given by its three diagonals.

  Args:
    dl: shape ``[..., m]``, the subdiagonal: ``dl[i] = A[i, i - 1]``; ``dl[0]``
      is not read.
    d: shape ``[..., m]``, the diagonal: ``d[i] = A[i, i]``.
    du: shape ``[..., m]``, the superdiagonal: ``du[i] = A[i, i + 1]``;
      ``du[m - 1]`` is not read.
    b: shape ``[..., m, k]``, the right-hand sides. All four share one float or
      complex dtype.
    perturb_singular: perturb tiny pivots of the LU factorization (by about
      ``eps * max|U|``) so that a singular A still gives finite values, as
      inverse iteration for eigenvectors wants.

  Returns:
    x, of `b`'s shape and dtype; all NaN for a (numerically) singular A unless
    `perturb_singular`.

  Raises:
    TypeError: integer or mixed dtypes, `b` of rank below 2, diagonals of
      different shapes, or `b`'s leading dimensions not the diagonals' shape.

  Mirrors `jax.lax.linalg.tridiagonal_solve`.
  """
  args = [structural._asarray(x) for x in (dl, d, du, b)]
  return tridiagonal_solve_p.bind(*args, perturb_singular=bool(perturb_singular))


def _solve_shape_rule(dl_shape, d_shape, du_shape, b_shape, **_):
  if dl_shape != d_shape or dl_shape != du_shape:
    raise TypeError("tridiagonal_solve requires that all diagonal arguments have the same "
                    "shape.")
  if dl_shape != b_shape[:-1]:
    raise TypeError("tridiagonal_solve requires that the leading ndim-1 dimensions of b "
                    "equal the dimensions of the diagonal arguments.")
  return b_shape


def _solve_dtype_rule(*dtypes_in, **_):
  return _same_dtypes("tridiagonal_solve", dtypes_in)


def _tridiagonal_product(dl, d, du, b):
  """A @ b for the tridiagonal A of diagonals (dl, d, du), in lax ops."""
  nd = core.get_aval(b).ndim
  m = core.get_aval(b).shape[-2]
  zero = structural.full((), 0, core.get_aval(b).dtype)

  def column(v):  # [..., m] -> [..., m, 1], to scale the rows of b
    return structural.expand_dims(v, (nd - 1,))

  def rows(x, start, stop):
    return slicing.slice_in_dim(x, start, stop, axis=nd - 2)

  def shift(x, low, high):
    config = [(0, 0, 0)] * nd
    config[nd - 2] = (low, high, 0)
    return structural.pad(x, zero, config)

  y = ew.mul(column(d), b)
  if m > 1:
    # y[i] += dl[i] * b[i - 1] for i >= 1, and y[i] += du[i] * b[i + 1] for i < m - 1.
    below = ew.mul(column(slicing.slice_in_dim(dl, 1, m, axis=nd - 2)), rows(b, 0, m - 1))
    above = ew.mul(column(slicing.slice_in_dim(du, 0, m - 1, axis=nd - 2)), rows(b, 1, m))
    y = ew.add(ew.add(y, shift(below, 1, 0)), shift(above, 0, 1))
  return y


def _solve_jvp(primals, tangents, *, perturb_singular):
  *diags, b = primals
  *diags_dot, b_dot = tangents
  ans = tridiagonal_solve_p.bind(*primals, perturb_singular=perturb_singular)
  if all(type(t) is ad.Zero for t in diags_dot):
    rhs = b_dot
  else:
    matvec_dot = _tridiagonal_product(*map(ad.instantiate_zeros, diags_dot), ans)
    rhs = ad.add_tangents(b_dot, ew.neg(matvec_dot))
  if type(rhs) is ad.Zero:
    return ans, ad.Zero(core.get_aval(ans).to_tangent_aval())
  return ans, tridiagonal_solve_p.bind(*diags, rhs, perturb_singular=perturb_singular)


def _solve_transpose(ct, dl, d, du, b, *, perturb_singular):
  # Linear in b only; A^T has subdiagonal du shifted down and superdiagonal dl shifted up.
  assert (not any(ad.is_undefined_primal(x) for x in (dl, d, du))
          and ad.is_undefined_primal(b)), ("internal: tridiagonal_solve transposed in", dl, b)
  if type(ct) is ad.Zero:
    return [None, None, None, ad.Zero(b.aval)]
  if core.get_aval(d).shape[-1] == 0:
    return [None, None, None, ct]
  last = core.get_aval(du).ndim - 1
  m = core.get_aval(du).shape[-1]

  def part(x, start, stop):  # x[..., start:stop]
    shape = core.get_aval(x).shape
    return slicing.slice(x, (0,) * last + (start,), shape[:-1] + (stop,))

  dl_trans = structural.concatenate(
      [structural.full_like(part(du, m - 1, m), 0), part(du, 0, m - 1)], last)
  du_trans = structural.concatenate(
      [part(dl, 1, m), structural.full_like(part(dl, 0, 1), 0)], last)
  return [None, None, None,
          tridiagonal_solve(dl_trans, d, du_trans, ct, perturb_singular=perturb_singular)]


def _solve_batch(axis_data, args, dims, *, perturb_singular):
  dl, d, du, b = args
  if all(dim is batching.not_mapped for dim in dims[:3]):
    # One matrix for the whole batch: fold the batch into b's columns, one solve.
    nd = core.get_aval(b).ndim
    b = batching.moveaxis(b, dims[3], nd - 2)
    shape = core.get_aval(b).shape
    flat = structural.reshape(b, shape[:-2] + (shape[-2] * shape[-1],))
    out = tridiagonal_solve(dl, d, du, flat, perturb_singular=perturb_singular)
    return structural.reshape(out, shape), nd - 2
  args = [batching.bdim_at_front(x, dim, axis_data.size) for x, dim in zip(args, dims)]
  return tridiagonal_solve(*args, perturb_singular=perturb_singular), 0


def _custom_call(ctx, target, operands, result_avals):
  """A custom call of a jaxlib CPU kernel outside LAPACK's naming (column-major b)."""
  backend.register_lapack_targets()
  max_rank = max(len(a.shape) for a in ctx.avals_in)

  def layouts(avals):
    return ", ".join(common._layout(len(a.shape), len(a.shape) == max_rank) for a in avals)

  attrs = (f"api_version = 4 : i32, backend_config = {{}}, "
           f'call_target_name = "{target}", operand_layouts = [{layouts(ctx.avals_in)}], '
           f"result_layouts = [{layouts(result_avals)}]")
  return ctx.op("stablehlo.custom_call", list(operands),
                [hlo.aval_type(a) for a in result_avals], attrs)


def _solve_lowering(ctx, dl, d, du, b, *, perturb_singular):
  b_aval = ctx.avals_in[-1]
  if perturb_singular:
    return _custom_call(ctx, "tridiagonal_solve_perturbed_ffi", [dl, d, du, b], [b_aval])[0]
  batch = tuple(b_aval.shape[:-2])
  info_aval = core.ShapedArray(batch, np.dtype(np.int32))
  *_, x, info = lapack_call(ctx, "gtsv_ffi", b_aval.dtype, [dl, d, du, b],
                            [*ctx.avals_in, info_aval],
                            operand_output_aliases={0: 0, 1: 1, 2: 2, 3: 3})
  return info_ok_or_nan(ctx, info, batch, x, ctx.avals_out[0])


tridiagonal_solve_p = linalg_primitive("tridiagonal_solve", (1, 1, 1, 2), _solve_shape_rule,
                                       _solve_lowering, dtype_rule=_solve_dtype_rule)
tridiagonal_solve_p.def_jvp(_solve_jvp)
tridiagonal_solve_p.def_transpose(_solve_transpose)
tridiagonal_solve_p.def_batch(_solve_batch)
