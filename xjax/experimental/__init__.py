"""Experimental APIs (mirrors `jax.experimental`): `io_callback`, and beyond JAX
`bounded_while_loop` (a reverse-mode differentiable while loop). `primal_tangent_dtype` is
not implemented (it raises NotImplementedError)."""
from xjax._src.callback import io_callback as io_callback
from xjax._src.lax.control_flow.bounded_while import bounded_while_loop as bounded_while_loop


def primal_tangent_dtype(primal_dtype, tangent_dtype, name=None):
  """Mirrors `jax.experimental.primal_tangent_dtype` (an extended dtype stored as
  `primal_dtype` whose tangents have `tangent_dtype`); xjax does not implement it.

  Raises:
    NotImplementedError: always.
  """
  raise NotImplementedError("xjax does not implement jax.experimental.primal_tangent_dtype "
                            "(extended dtypes with their own tangent dtype)")
