"""qr: A = Q R, and the LAPACK pieces it is built from.

`geqrf` (and the column-pivoted `geqp3`) leave R in the upper triangle and Q
as Householder reflectors below it plus their scalars `taus`;
`householder_product` (LAPACK orgqr/ungqr) forms Q from the reflectors and
`ormqr` (ormqr/unmqr) applies Q to a matrix without forming it. `qr_p` lowers
to those, as JAX's does. Only `qr_p` is differentiable (as in JAX): its JVP is
the thin-QR rule (j-towns.github.io/papers/qr-derivative.pdf), with the
square-block split for wide matrices and the completion of arXiv:2409.13374
for the full Q of tall ones.
"""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src.interpreters import ad
from xjax._src.interpreters import lowering
from xjax._src.lax import dot as lax_dot
from xjax._src.lax import elementwise as ew
from xjax._src.lax import gather_scatter
from xjax._src.lax import slicing
from xjax._src.lax import structural
from xjax._src.lax.linalg.common import H, lapack_call, linalg_primitive, tril, triu
from xjax._src.lax.linalg.common import INEXACT, INT32, eye, with_dtype_check
from xjax._src.lax.linalg.lu import lu, lu_solve
from xjax._src.lax.linalg.triangular_solve import triangular_solve


def _same_dtypes(name):
  def dtype_rule(*in_dtypes, **_):
    if len(set(in_dtypes)) != 1:
      raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                      f"{', '.join(d.name for d in in_dtypes)}.")
    return in_dtypes[0]
  return dtype_rule


def _is_complex(dtype) -> bool:
  return dtypes.issubdtype(dtype, np.complexfloating)


# ----------------------------------------------------------------------------
# geqrf


def geqrf(a):
  """Householder QR of each matrix in `a` (LAPACK geqrf), in LAPACK's packed form.

  Args:
    a: float or complex, shape ``[..., m, n]``.

  Returns:
    ``(a_out, taus)``: `a_out` of `a`'s shape holds R on and above the
    diagonal and the Householder vectors (unit leading entry implied) below;
    `taus`, ``[..., min(m, n)]``, their scalar factors.

  Raises:
    TypeError: an integer dtype, or rank below 2.

  Mirrors JAX's `jax._src.lax.linalg.geqrf`.
  """
  a_out, taus = geqrf_p.bind(structural._asarray(a))
  return a_out, taus


def _geqrf_shape_rule(shape):
  m, n = shape
  return shape, (min(m, n),)


def _geqrf_lowering(ctx, a):
  aval, = ctx.avals_in
  return lapack_call(ctx, "geqrf_ffi", aval.dtype, [a], ctx.avals_out,
                     operand_output_aliases={0: 0})


geqrf_p = with_dtype_check(
    linalg_primitive("geqrf", (2,), _geqrf_shape_rule, _geqrf_lowering,
                     multiple_results=True),
    [INEXACT])


# ----------------------------------------------------------------------------
# geqp3


def geqp3(a, jpvt, *, use_magma: bool | None = None):
  """Column-pivoted Householder QR (LAPACK geqp3): ``a[..., :, jpvt - 1] = Q R``.

  Args:
    a: float or complex, shape ``[..., m, n]``.
    jpvt: int32 ``[..., n]``: nonzero entries (1-based column numbers) pin
      those columns to the front; zeros leave the choice free.
    use_magma: GPU-only in JAX; ignored on CPU.

  Returns:
    ``(a_out, jpvt_out, taus)``: R and the reflectors packed as in `geqrf`,
    the 1-based column permutation, and the reflectors' scalars
    ``[..., min(m, n)]``.

  Raises:
    TypeError: `a` not float or complex, `jpvt` not int32, or ranks too small.

  Mirrors JAX's `jax._src.lax.linalg.geqp3`.
  """
  a_out, jpvt_out, taus = geqp3_p.bind(structural._asarray(a), structural._asarray(jpvt),
                                       use_magma=use_magma)
  return a_out, jpvt_out, taus


def _geqp3_shape_rule(a_shape, jpvt_shape, **_):
  m, n = a_shape
  return a_shape, jpvt_shape, (min(m, n),)


def _geqp3_dtype_rule(dtype, jpvt_dtype, **_):
  return dtype, jpvt_dtype, dtype


def _geqp3_lowering(ctx, a, jpvt, *, use_magma):
  del use_magma  # GPU only
  return lapack_call(ctx, "geqp3_ffi", ctx.avals_in[0].dtype, [a, jpvt], ctx.avals_out,
                     operand_output_aliases={0: 0, 1: 1})


# The kernel reads int32 column numbers, so (unlike JAX, whose kernel then
# fails at run time) other integer dtypes are refused here.
geqp3_p = with_dtype_check(
    linalg_primitive("geqp3", (2, 1), _geqp3_shape_rule, _geqp3_lowering,
                     dtype_rule=_geqp3_dtype_rule, kinds=("inexact", "int"),
                     multiple_results=True),
    [INEXACT, INT32])


# ----------------------------------------------------------------------------
# householder_product


def householder_product(a, taus):
  """The product Q of the Householder reflectors stored in `a` and `taus`
  (LAPACK orgqr, or ungqr for complex).

  Args:
    a: float or complex, shape ``[..., m, n]`` with ``m >= n``: reflector i is
      column i below the diagonal (with an implied unit at the diagonal).
    taus: same dtype, ``[..., k]`` with ``k <= n``: the reflectors' scalars.

  Returns:
    The first n columns of ``H_1 ... H_k``, of `a`'s shape and dtype.

  Raises:
    TypeError: integer or mixed dtypes, or ranks too small.
    ValueError: ``m < n``, or ``k > min(m, n)``.

  Mirrors `jax.lax.linalg.householder_product`.
  """
  return householder_product_p.bind(structural._asarray(a), structural._asarray(taus))


def _householder_product_shape_rule(a_shape, taus_shape):
  m, n = a_shape
  if m < n:
    raise ValueError("The first argument to householder_product must have at least as many "
                     f"rows as columns, got shape {a_shape}")
  if taus_shape[0] > min(m, n):
    raise ValueError("The second argument to householder_product must not have more rows "
                     "than the minimum of the first argument's rows and columns.")
  return a_shape


def _householder_product_lowering(ctx, a, taus):
  dtype = ctx.avals_in[0].dtype
  base = "ungqr_ffi" if _is_complex(dtype) else "orgqr_ffi"
  return lapack_call(ctx, base, dtype, [a, taus], ctx.avals_out,
                     operand_output_aliases={0: 0})[0]


householder_product_p = with_dtype_check(
    linalg_primitive("householder_product", (2, 1), _householder_product_shape_rule,
                     _householder_product_lowering,
                     dtype_rule=_same_dtypes("householder_product")),
    [INEXACT, INEXACT])


# ----------------------------------------------------------------------------
# ormqr


def ormqr(a, taus, c, *, left: bool = True, transpose: bool = False):
  """Multiplies `c` by the Q of a QR factorization, without forming Q
  (LAPACK ormqr, or unmqr for complex).

  Computes ``Q @ c`` (`left`, not `transpose`), ``Q^H @ c`` (`left`,
  `transpose`), ``c @ Q`` or ``c @ Q^H``; ``Q^H`` is ``Q^T`` for real dtypes.

  Args:
    a: float or complex ``[..., m, n]``: Householder reflectors as `geqrf`
      returns them.
    taus: same dtype, ``[..., k]``: their scalars.
    c: same dtype, ``[..., m, p]`` if `left` else ``[..., p, m]``.

  Returns:
    The product, of `c`'s shape and dtype.

  Raises:
    TypeError: integer or mixed dtypes, or ranks too small.
    ValueError: `c`'s size along the multiplied side is not m.

  Mirrors `jax.lax.linalg.ormqr`.
  """
  return ormqr_p.bind(structural._asarray(a), structural._asarray(taus),
                      structural._asarray(c), left=bool(left), transpose=bool(transpose))


def _ormqr_shape_rule(a_shape, taus_shape, c_shape, *, left, transpose):
  m = a_shape[0]
  if left and c_shape[0] != m:
    raise ValueError("ormqr with left=True expects c to have the same number of rows as the "
                     f"Householder matrix a. Got a shape {a_shape} and c shape {c_shape}.")
  if not left and c_shape[1] != m:
    raise ValueError("ormqr with left=False expects c to have the same number of columns as "
                     f"the Householder matrix a has rows. Got a shape {a_shape} and c shape "
                     f"{c_shape}.")
  return c_shape


def _ormqr_lowering(ctx, a, taus, c, *, left, transpose):
  dtype = ctx.avals_in[0].dtype
  base = "unmqr_ffi" if _is_complex(dtype) else "ormqr_ffi"
  return lapack_call(ctx, base, dtype, [a, taus, c], ctx.avals_out,
                     {"left": str(left).lower(), "transpose": str(transpose).lower()},
                     operand_output_aliases={2: 0})[0]


ormqr_p = with_dtype_check(
    linalg_primitive("ormqr", (2, 1, 2), _ormqr_shape_rule, _ormqr_lowering,
                     dtype_rule=_same_dtypes("ormqr")),
    [INEXACT, INEXACT, INEXACT])


# ----------------------------------------------------------------------------
# qr


def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma: bool | None = None):
  """QR decomposition ``x = Q R`` of each matrix in `x` (``x[..., :, p] = Q R``
  with `pivoting`).

  Args:
    x: float or complex, shape ``[..., m, n]``.
    pivoting: column pivoting (LAPACK geqp3), making R's diagonal
      non-increasing in magnitude.
    full_matrices: Q of shape ``[..., m, m]`` and R ``[..., m, n]``; if False,
      Q ``[..., m, k]`` and R ``[..., k, n]`` with ``k = min(m, n)``.
    use_magma: GPU-only in JAX; ignored on CPU.

  Returns:
    ``(q, r)``, or ``(q, r, p)`` with `pivoting` (p: int32 ``[..., n]``).
    Q has orthonormal columns, R is upper triangular (trapezoidal).

  Raises:
    TypeError: an integer dtype, or rank below 2.

  Mirrors `jax.lax.linalg.qr`.
  """
  q, r, *p = qr_p.bind(structural._asarray(x), pivoting=pivoting,
                       full_matrices=full_matrices, use_magma=use_magma)
  return (q, r, p[0]) if pivoting else (q, r)


def _qr_shape_rule(shape, *, pivoting, full_matrices, **_):
  m, n = shape
  k = m if full_matrices else min(m, n)
  return ((m, k), (k, n), (n,)) if pivoting else ((m, k), (k, n))


def _qr_dtype_rule(dtype, *, pivoting, **_):
  return (dtype, dtype, np.dtype(np.int32)) if pivoting else (dtype, dtype)


def _matmul(x, y):
  if core.get_aval(x).ndim > 2:
    return lax_dot.batch_matmul(x, y)
  return lax_dot.dot(x, y)


def _slice_last2(x, rows, cols):
  """``x[..., rows[0]:rows[1], cols[0]:cols[1]]``."""
  shape = core.get_aval(x).shape
  nb = len(shape) - 2
  return slicing.slice(x, (0,) * nb + (rows[0], cols[0]), (*shape[:nb], rows[1], cols[1]))


def _eye_stack(dtype, shape):
  """Identity matrices (square in the last two dims of `shape`) stacked to `shape`."""
  nd = len(shape)
  return structural.broadcast_in_dim(eye(dtype, shape[-2:]), tuple(shape), (nd - 2, nd - 1))


def _thin_qr_jvp(q, r, dx):
  """(dQ, dR) for the thin QR of ``[..., m, n]`` matrices with ``m >= n``."""
  dx_rinv = triangular_solve(r, dx)  # dx R^{-1}
  qt_dx_rinv = _matmul(H(q), dx_rinv)
  lower = tril(qt_dx_rinv, -1)
  do = ew.sub(lower, H(lower))  # skew-Hermitian
  dtype = core.get_aval(do).dtype
  if _is_complex(dtype):
    # The imaginary part of the diagonal, which keeps R's diagonal real.
    imag = ew.sub(qt_dx_rinv, ew.convert_element_type(ew.real(qt_dx_rinv), dtype))
    do = ew.add(do, ew.mul(_eye_stack(dtype, core.get_aval(imag).shape), imag))
  dq = ew.add(_matmul(q, ew.sub(do, qt_dx_rinv)), dx_rinv)
  dr = _matmul(ew.sub(qt_dx_rinv, do), r)
  return dq, dr


def _take_columns(x, p):
  """``x[..., :, p]`` with `p` ``[..., n]`` sharing x's batch dims."""
  shape = core.get_aval(x).shape
  nb = len(shape) - 2
  idx = structural.broadcast_in_dim(p, (*shape, 1), (*range(nb), nb + 1))
  batch = tuple(range(nb + 1))
  dnums = gather_scatter.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(nb + 1,),
                                                start_index_map=(nb + 1,),
                                                operand_batching_dims=batch,
                                                start_indices_batching_dims=batch)
  return gather_scatter.gather(x, idx, dnums, (1,) * (nb + 2),
                               mode=gather_scatter.GatherScatterMode.PROMISE_IN_BOUNDS)


def _qr_jvp(primals, tangents, *, pivoting, full_matrices, use_magma):
  x, = primals
  dx, = tangents
  outs = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices, use_magma=use_magma)
  q, r = outs[:2]
  p_zero = [ad.Zero(core.get_aval(outs[2]).to_tangent_aval())] if pivoting else []
  if type(dx) is ad.Zero:
    return outs, [ad.Zero(core.get_aval(q).to_tangent_aval()),
                  ad.Zero(core.get_aval(r).to_tangent_aval()), *p_zero]
  *batch, m, n = core.get_aval(x).shape
  nd = len(batch) + 2
  if pivoting:
    dx = _take_columns(dx, outs[2])

  if m < n:
    # Wide: X = [X1 X2] with X1 square gives X1 = Q R1 (a square QR) and
    # R2 = Q^H X2, so dR2 = dQ^H X2 + Q^H dX2. (JAX takes X2 from the
    # unpermuted X with pivoting, a wrong derivative; X[:, p] is used here.)
    x2 = _slice_last2(_take_columns(x, outs[2]) if pivoting else x, (0, m), (m, n))
    dx1 = _slice_last2(dx, (0, m), (0, m))
    dx2 = _slice_last2(dx, (0, m), (m, n))
    dq, dr1 = _thin_qr_jvp(q, _slice_last2(r, (0, m), (0, m)), dx1)
    dr2 = ew.add(_matmul(H(dq), x2), _matmul(H(q), dx2))
    dr = structural.concatenate((dr1, dr2), nd - 1)
    return outs, [dq, dr, *p_zero]

  q_mn = _slice_last2(q, (0, m), (0, n)) if full_matrices else q
  r_nn = _slice_last2(r, (0, n), (0, n)) if full_matrices else r
  dq_mn, dr_nn = _thin_qr_jvp(q_mn, r_nn, dx)
  if not full_matrices or m == n:
    return outs, [dq_mn, dr_nn, *p_zero]

  # The last m - n columns of a full Q (arXiv:2409.13374, eqs. 32-33), with
  # Z = Q_pn (Q_nn - I)^{-1} from an LU solve.
  q_nn = _slice_last2(q_mn, (0, n), (0, n))
  q_pn = _slice_last2(q_mn, (n, m), (0, n))
  q_mp = _slice_last2(q, (0, m), (n, m))
  dq_nn = _slice_last2(dq_mn, (0, n), (0, n))
  dq_pn = _slice_last2(dq_mn, (n, m), (0, n))
  dtype = core.get_aval(q).dtype
  shifted = ew.sub(q_nn, _eye_stack(dtype, core.get_aval(q_nn).shape))
  lu_factor, _, perm = lu(shifted)
  z_pn_h = lu_solve(lu_factor, perm, H(q_pn), trans=2)
  z_pn = H(z_pn_h)
  dq_mp = ew.sub(_matmul(dq_mn, z_pn_h),
                 _matmul(ew.add(q_mn, _matmul(q_mp, z_pn)),
                         H(ew.sub(dq_pn, _matmul(z_pn, dq_nn)))))
  dq = structural.concatenate((dq_mn, dq_mp), nd - 1)
  zeros = structural.full((*batch, m - n, n), 0, dtype)
  dr = structural.concatenate((dr_nn, zeros), nd - 2)
  return outs, [dq, dr, *p_zero]


def _qr_via_householder(a, *, pivoting, full_matrices, use_magma):
  aval = core.get_aval(a)
  *batch, m, n = aval.shape
  nb = len(batch)
  if m == 0 or n == 0:
    k = m if full_matrices else min(m, n)
    q = structural.broadcast_in_dim(eye(aval.dtype, (m, k)), (*batch, m, k), (nb, nb + 1))
    r = structural.full((*batch, k, n), 0, aval.dtype)
    if pivoting:
      return q, r, structural.full((*batch, n), 0, np.int32)
    return q, r

  if pivoting:
    jpvt = structural.full((*batch, n), 0, np.int32)
    r, p, taus = geqp3(a, jpvt, use_magma=use_magma)
    p = ew.sub(p, structural.full((), 1, np.int32))  # 1-based to 0-based
  else:
    r, taus = geqrf(a)
  if m < n:
    q = householder_product(_slice_last2(r, (0, m), (0, m)), taus)
  elif full_matrices:
    padded = structural.pad(r, structural.full((), 0, aval.dtype),
                            [(0, 0, 0)] * (nb + 1) + [(0, m - n, 0)])
    q = householder_product(padded, taus)
  else:
    q = householder_product(r, taus)
    r = _slice_last2(r, (0, n), (0, n))
  r = triu(r)
  return (q, r, p) if pivoting else (q, r)


qr_p = with_dtype_check(
    linalg_primitive("qr", (2,), _qr_shape_rule,
                     lowering.lower_fun(_qr_via_householder, multiple_results=True),
                     dtype_rule=_qr_dtype_rule, multiple_results=True),
    [INEXACT])
qr_p.def_jvp(_qr_jvp)
