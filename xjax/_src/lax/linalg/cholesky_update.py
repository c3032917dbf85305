"""cholesky_update: the Cholesky factor of A + w w^T from that of A, in O(n^2).

With A = R^T R (R upper triangular), a sweep of Givens rotations folds w into
R row by row. On CPU, as in JAX, it lowers to that sweep written with lax
ops. As in JAX it has no derivative and no batching rule: the operands must be
a single matrix and vector.
"""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src.interpreters import lowering
from xjax._src.lax import elementwise as ew
from xjax._src.lax import slicing
from xjax._src.lax import structural
from xjax._src.lax import transcendental as tr
from xjax._src.lax.control_flow.conditionals import cond
from xjax._src.lax.linalg.common import linalg_primitive


def cholesky_update(r_matrix, w_vector):
  """The upper Cholesky factor of ``R^T @ R + w w^T``, given R and w.

  Args:
    r_matrix: float, shape ``[n, n]``: an upper triangular R with ``A = R^T R``.
    w_vector: the same float dtype, shape ``[n]``.

  Returns:
    The upper triangular factor R' with ``R'^T R' = A + w w^T``, `r_matrix`'s
    shape and dtype.

  Raises:
    TypeError: complex, integer or mixed dtypes; operands of rank other than 2
      and 1 (no batch dimensions).
    ValueError: R not square, or w not of R's size.

  Mirrors `jax.lax.linalg.cholesky_update`.
  """
  return cholesky_update_p.bind(structural._asarray(r_matrix), structural._asarray(w_vector))


def _shape_rule(r_shape, w_shape):
  if r_shape[0] != r_shape[1] or w_shape[0] != r_shape[1]:
    raise ValueError("Rank-1 update to Cholesky decomposition takes a square matrix and a "
                     f"vector of the same size as input. Got shapes {r_shape} and {w_shape} "
                     "instead")
  return r_shape


def _dtype_rule(r_dtype, w_dtype):
  if r_dtype != w_dtype:
    raise TypeError("lax.cholesky_update requires arguments to have the same dtypes, got "
                    f"{r_dtype.name}, {w_dtype.name}.")
  return r_dtype


def _givens(x, y):
  """(c, s) with c x - s y = r >= 0 and s x + c y = 0, scaled against overflow."""
  dtype = core.get_aval(x).dtype

  def nonzero(x, y):
    abs_x, abs_y = ew.abs(x), ew.abs(y)
    scale = ew.select_n(ew.gt(abs_x, abs_y), abs_y, abs_x)
    x, y = ew.div(x, scale), ew.div(y, scale)
    inv_r = ew.div(structural.full((), 1, dtype), tr.sqrt(ew.add(ew.mul(x, x), ew.mul(y, y))))
    return ew.mul(x, inv_r), ew.mul(ew.neg(y), inv_r)

  identity = (np.array(1, dtype), np.array(0, dtype))
  return cond(ew.eq(y, structural.full((), 0, dtype)), lambda x, y: identity, nonzero, x, y)


def _update(r, w):
  n = core.get_aval(w).shape[0]
  for k in range(n):
    c, s = _givens(slicing.index_in_dim(slicing.index_in_dim(r, k, 0, False), k, 0, False),
                   slicing.index_in_dim(w, k, 0, False))
    row = slicing.index_in_dim(r, k, 0, False)
    new_row = ew.sub(ew.mul(c, row), ew.mul(s, w))
    w = ew.add(ew.mul(c, w), ew.mul(s, row))
    r = slicing.dynamic_update_index_in_dim(r, new_row, k, 0)
  return r


cholesky_update_p = linalg_primitive("cholesky_update", (2, 1), _shape_rule,
                                     lowering.lower_fun(_update, multiple_results=False),
                                     dtype_rule=_dtype_rule, kinds=("float", "float"),
                                     supports_batching=False)
