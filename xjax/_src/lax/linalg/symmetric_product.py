"""symmetric_product: alpha A A^T + beta C, with C symmetric (BLAS syrk).

On CPU, as in JAX, it lowers to the product written with lax ops (no LAPACK
call). JAX defines no derivative for it, and neither does xjax.
"""
from __future__ import annotations

from xjax._src import core
from xjax._src.interpreters import lowering
from xjax._src.lax import dot as lax_dot
from xjax._src.lax import elementwise as ew
from xjax._src.lax import structural
from xjax._src.lax.dot import Precision
from xjax._src.lax.linalg.common import T, linalg_primitive, tril


def symmetric_product(a_matrix, c_matrix, *, alpha: float = 1., beta: float = 0.,
                      symmetrize_output: bool = False):
  """``alpha * a @ a^T + beta * c`` for each matrix `a` and symmetric matrix `c`.

  Args:
    a_matrix: float, shape ``[..., m, n]``.
    c_matrix: the same float dtype, shape ``[..., m, m]``, symmetric.
    alpha, beta: Python scalars (kept as the primitive's params).
    symmetrize_output: replace the upper triangle by the transpose of the lower
      one. Without it only the lower triangle is guaranteed (on every backend;
      on CPU the whole product is computed).

  Returns:
    An array of `c_matrix`'s shape and dtype.

  Raises:
    TypeError: complex, integer or mixed dtypes, rank below 2, or unequal batch
      ranks.
    ValueError: `c_matrix` not square, or its size not `a_matrix`'s rows.

  Mirrors `jax.lax.linalg.symmetric_product`.
  """
  a_matrix, c_matrix = structural._asarray(a_matrix), structural._asarray(c_matrix)
  result = symmetric_product_p.bind(a_matrix, c_matrix, alpha=alpha, beta=beta)
  if symmetrize_output:
    upper = T(tril(result, -1))
    result = ew.add(tril(result, 0), upper)
  return result


def _shape_rule(a_shape, c_shape, **_):
  if a_shape[0] != c_shape[1] or c_shape[0] != c_shape[1]:
    raise ValueError("symmetric_update expects a rectangular matrix of shape (m, n) and a "
                     f"square matrix of shape (n, n). Got shapes {a_shape} and {c_shape}.")
  return c_shape


def _dtype_rule(a_dtype, c_dtype, **_):
  if a_dtype != c_dtype:
    raise TypeError("lax.symmetric_product requires arguments to have the same dtypes, got "
                    f"{a_dtype.name}, {c_dtype.name}.")
  return a_dtype


def _product(a, c, *, alpha, beta):
  dtype = core.get_aval(a).dtype
  aat = lax_dot.batch_matmul(a, T(a), precision=Precision.HIGHEST)
  return ew.add(ew.mul(structural.full((), alpha, dtype), aat),
                ew.mul(structural.full((), beta, dtype), c))


symmetric_product_p = linalg_primitive("symmetric_product", (2, 2), _shape_rule,
                                       lowering.lower_fun(_product, multiple_results=False),
                                       dtype_rule=_dtype_rule, kinds=("float", "float"))
