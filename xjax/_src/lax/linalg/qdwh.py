"""qdwh: the polar decomposition x = u h by the QR-based dynamically weighted
Halley iteration (Nakatsukasa, Bai and Gygi, SIAM J. Matrix Anal. Appl. 31(5),
2010), as JAX's `jax.lax.linalg.qdwh` computes it.

No primitive: the iteration is written in lax ops (QR and Cholesky
factorizations, triangular solves, loops), so every transformation applies.
The weights (a, b, c) of each step depend only on eps, so they are computed
in Python and the steps run as two `fori_loop`s (strongly weighted steps by
QR, the later ones by the cheaper Cholesky) and a final `while_loop` of plain
Halley steps until the iterate stops changing.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from xjax._src import config as config_module
from xjax._src import core
from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax import dot as lax_dot
from xjax._src.lax import elementwise as ew
from xjax._src.lax import reductions, slicing, structural
from xjax._src.lax import transcendental as tr
from xjax._src.lax.control_flow.loops import fori_loop, while_loop
from xjax._src.lax.linalg.cholesky import cholesky
from xjax._src.lax.linalg.common import H, eye_like
from xjax._src.lax.linalg.qr import qr
from xjax._src.lax.linalg.triangular_solve import triangular_solve

_CHOLESKY_CUTOFF = 100  # weights c above this need the QR form of the step


def _full(value, dtype):
  return structural.full((), value, dtype)


def _matmul(a, b):
  return lax_dot.dot(a, b)


def _mask(x, dims, alternative=None):
  """`x` with the entries outside the leading `dims` block replaced (default: zeros)."""
  shape = core.get_aval(x).shape
  mask = None
  for i, d in enumerate(dims):
    if d is not None:
      inside = ew.lt(structural.broadcasted_iota(np.int32, shape, i),
                     ew.convert_element_type(d, np.int32))
      mask = inside if mask is None else ew.bitwise_and(mask, inside)
  if mask is None:
    return x
  dtype = core.get_aval(x).dtype
  other = structural.full(shape, 0, dtype) if alternative is None else alternative
  return ew.select_n(mask, other, x)


def _abs_sum_max(x, sum_axis):
  return reductions.reduce_max(reductions.reduce_sum(ew.abs(x), (sum_axis,)), (0,))


def _frobenius(x):
  a = ew.abs(x)
  return tr.sqrt(reductions.reduce_sum(ew.mul(a, a), (0, 1)))


def _conj(x):
  return ew.conj(x) if np.issubdtype(core.get_aval(x).dtype, np.complexfloating) else x


def _scale(s, x):
  return ew.mul(ew.convert_element_type(s, core.get_aval(x).dtype), x)


def _weights(eps: float, max_iterations: int):
  """The per-step parameters: QR-step ones and Cholesky-step ones, in order."""
  l, tol_l = eps, 10.0 * eps / 2.0
  qr_coefs, chol_coefs = [], []
  while l + tol_l < 1 and len(qr_coefs) + len(chol_coefs) < max_iterations:
    l2 = l * l
    dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
    sqd = (1.0 + dd) ** (1 / 2)
    a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** (1 / 2)
    b = (a - 1) ** 2 / 4
    c = a + b - 1
    l = l * (a + b * l2) / (1 + c * l2)
    e = b / c
    if c > _CHOLESKY_CUTOFF:
      qr_coefs.append(((a - e) / c ** (1 / 2), c ** (1 / 2), e))
    else:
      chol_coefs.append((a - e, c, e))
  return qr_coefs, chol_coefs


def _qr_step(u, m, n, params):
  """e u + (a - e)/sqrt(c) Q1 Q2^H with [sqrt(c) u; I] = [Q1; Q2] R (padded to dynamic m, n)."""
  a_minus_e_by_sqrt_c, sqrt_c, e = params
  big_m, big_n = core.get_aval(u).shape
  dtype = core.get_aval(u).dtype
  eye = eye_like(structural.full((big_n, big_n), 0, dtype))
  top = _scale(sqrt_c, u)
  if m is None:
    y = structural.concatenate([top, eye], 0)
  else:
    padded = structural.pad(top, _full(0, dtype), [(0, big_n, 0), (0, 0, 0)])
    y = slicing.dynamic_update_slice_in_dim(padded, eye, m, 0)
  q, _ = qr(y, full_matrices=False)
  q1 = _mask(slicing.slice(q, (0, 0), (big_m, big_n)), (m, n))
  q2 = slicing.dynamic_slice_in_dim(q, big_m if m is None else m, big_n, 0)
  q2 = H(_mask(q2, (n, n)))
  return ew.add(_scale(e, u), _scale(a_minus_e_by_sqrt_c, _matmul(q1, q2)))


def _cholesky_step(u, m, n, params):
  """e u + (a - e) u (I + c u^H u)^{-1}, by a Cholesky factor of I + c u^H u."""
  a_minus_e, c, e = params
  _, big_n = core.get_aval(u).shape
  dtype = core.get_aval(u).dtype
  eye = eye_like(structural.full((big_n, big_n), 0, dtype))
  x = ew.add(_scale(c, _matmul(H(u), u)), eye)
  x = _mask(x, (n, n), eye)
  y = cholesky(x, symmetrize_input=False)
  z = _conj(triangular_solve(y, structural.transpose(u, (1, 0)), left_side=True, lower=True,
                             conjugate_a=True))
  z = H(triangular_solve(y, z, left_side=True, lower=True, transpose_a=True, conjugate_a=True))
  return ew.add(_scale(e, u), _scale(a_minus_e, z))


def _qdwh(x, m, n, max_iterations: int, eps):
  dtype = core.get_aval(x).dtype
  real_dtype = np.finfo(dtype).dtype
  if eps is None:
    eps = float(np.finfo(dtype).eps)
  one_norm = _abs_sum_max(x, 0)
  inf_norm = _abs_sum_max(x, 1)
  alpha_inverse = ew.mul(tr.rsqrt(one_norm), tr.rsqrt(inf_norm))
  alpha_inverse = ew.select_n(ew.eq(one_norm, _full(0, real_dtype)), alpha_inverse,
                              _full(1, real_dtype))
  u = _scale(alpha_inverse, x)  # now ||u||_2 <= 1
  tol_norm = float(np.cbrt(10.0 * eps / 2.0))
  qr_coefs, chol_coefs = _weights(eps, max_iterations)

  def changed(u, u_prev):
    return ew.gt(_frobenius(ew.sub(u, u_prev)), _full(tol_norm, real_dtype))

  def run(u, coefs, step, test_convergence):
    if not coefs:
      return u, _full(True, np.bool_)
    table = structural._asarray(np.array(coefs, dtype))

    def body(k, state):
      u_prev, _ = state
      params = slicing.dynamic_index_in_dim(table, k, keepdims=False)
      params = [slicing.index_in_dim(params, i, keepdims=False) for i in range(3)]
      u = step(u_prev, m, n, params)
      return u, changed(u, u_prev) if test_convergence else _full(True, np.bool_)

    return fori_loop(0, len(coefs), body, (u, _full(True, np.bool_)))

  u, _ = run(u, qr_coefs, _qr_step, False)
  u, not_converged = run(u, chol_coefs, _cholesky_step, True)

  def halley_body(state):  # the unweighted Halley step (a, b, c) = (3, 1, 3)
    k, u_prev, _ = state
    params = [_full(v, dtype) for v in (3 - 1 / 3, 3, 1 / 3)]
    u = _cholesky_step(u_prev, m, n, params)
    return ew.add(k, ew.convert_element_type(1, dtypes.default_int_dtype(), weak_type=True)), u, changed(u, u_prev)

  def keep_going(state):
    k, _, not_converged = state
    return ew.bitwise_and(not_converged, ew.lt(k, _full(max_iterations, core.get_aval(k).dtype)))

  # A weakly typed count, as JAX's (a Python int carried through the loop).
  start = ew.convert_element_type(len(qr_coefs) + len(chol_coefs), dtypes.default_int_dtype(),
                                 weak_type=True)
  num_iters, u, not_converged = while_loop(keep_going, halley_body, (start, u, not_converged))
  # One Newton-Schulz step, then h = u^H x, symmetrized.
  u = ew.sub(_scale(1.5, u), _scale(0.5, _matmul(u, _matmul(H(u), u))))
  h = _matmul(H(u), x)
  h = ew.div(ew.add(h, H(h)), _full(2, dtype))
  return u, h, num_iters, ew.bitwise_not(not_converged)


@functools.partial(jit, static_argnames=("is_hermitian", "max_iterations", "eps"))
def qdwh(x, *, is_hermitian: bool = False, max_iterations: int | None = None,
         eps: float | None = None, dynamic_shape: tuple[int, int] | None = None):
  """The polar decomposition ``x = u @ h`` by QR-based dynamically weighted Halley iteration.

  Args:
    x: a full-rank float or complex matrix of shape (M, N) with M >= N,
      possibly padded from a smaller true shape `dynamic_shape`.
    is_hermitian: unused (kept for JAX's signature).
    max_iterations: at most this many steps (default 10); static.
    eps: the tolerance: iteration stops once ``|u_k - u_{k-1}|_F`` is below
      ``(5 eps)^(1/3)`` (default: the dtype's machine epsilon); static.
    dynamic_shape: the unpadded ``(m, n)`` inside `x`, or None.

  Returns:
    ``(u, h, num_iters, is_converged)``: u of shape (M, N) with orthonormal
    columns, h Hermitian positive semi-definite (N, N), the int32 number of
    steps taken and a bool telling whether the tolerance was met.

  Raises:
    ValueError: M < N.

  Mirrors `jax.lax.linalg.qdwh`.
  """
  del is_hermitian  # static, hence concrete; unused as in JAX
  max_iterations = 10 if max_iterations is None else operator.index(max_iterations)
  big_m, big_n = core.get_aval(x).shape
  if big_m < big_n:
    raise ValueError("The input matrix of shape M x N must have M >= N.")
  if dynamic_shape is not None:
    m, n = dynamic_shape
    x = _mask(x, (m, n))
  else:
    m = n = None
  with config_module.default_matmul_precision("float32"):
    return _qdwh(x, m, n, max_iterations, eps)
