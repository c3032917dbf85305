"""`eval_jaxpr_p`: evaluates a closed jaxpr given as its ``jaxpr`` param (mirrors JAX's
``jax._src.lax.eval_jaxpr``).

JAX stages that primitive as a `closed_call` of the jaxpr. Here it is not a primitive of
its own: binding it binds `closed_call_p`, so it evaluates, differentiates, batches,
transposes and lowers as that call does, and staged jaxprs show the `closed_call` JAX's do.
"""
from __future__ import annotations

from xjax._src import core
from xjax._src.call import closed_call_p


class _EvalJaxpr:
  """The `eval_jaxpr_p` object: ``bind(*args, jaxpr=closed)``."""
  name = "eval_jaxpr"
  multiple_results = True

  def bind(self, *args, jaxpr: core.ClosedJaxpr):
    """The outputs of `jaxpr` at `args`, as a `closed_call` bound under the current trace."""
    return closed_call_p.bind(*args, call_jaxpr=jaxpr)

  def __repr__(self):
    return self.name


eval_jaxpr_p = _EvalJaxpr()
