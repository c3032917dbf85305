"""`closed_call_p` and `call_p`: a call of a jaxpr, kept as one equation.

JAX's core has these two call primitives (`jax.extend.core.primitives.closed_call_p`,
`call_p`); libraries that walk jaxprs recognise them, and some bind them. xjax's own
transformations stage `jit` calls instead, so nothing in xjax binds them.

* ``closed_call_p.bind(*args, call_jaxpr=ClosedJaxpr)`` evaluates the closed jaxpr;
* ``call_p.bind(*args, call_jaxpr=Jaxpr)`` evaluates an open jaxpr without constvars.

Both lower to a private function and a `func.call`. Under `jvp` and `linearize` the
call is inlined (its equations are differentiated one by one, and partial evaluation
keeps its known part known); under `vmap` it stays a call of the batched jaxpr; a
staged call is transposed by transposing its jaxpr.
"""
from __future__ import annotations

from xjax._src import core
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import partial_eval as pe


def _closed(call_jaxpr) -> core.ClosedJaxpr:
  if isinstance(call_jaxpr, core.ClosedJaxpr):
    return call_jaxpr
  if not isinstance(call_jaxpr, core.Jaxpr):
    raise TypeError(f"call_jaxpr must be a Jaxpr or ClosedJaxpr, got {type(call_jaxpr).__name__}")
  if call_jaxpr.constvars:
    raise TypeError("call_p's call_jaxpr must have no constvars (use closed_call_p)")
  return core.ClosedJaxpr(call_jaxpr, [])


def _define(prim: core.Primitive, name: str) -> None:
  def checked(call_jaxpr, n_args):
    closed = _closed(call_jaxpr)
    if n_args != len(closed.in_avals):
      raise TypeError(f"{name} takes {len(closed.in_avals)} arguments, got {n_args}")
    return closed

  def impl(*args, call_jaxpr):
    closed = checked(call_jaxpr, len(args))
    return core.eval_jaxpr(closed.jaxpr, closed.consts, *args)

  def abstract_eval(*avals, call_jaxpr):
    return list(checked(call_jaxpr, len(avals)).out_avals)

  def jvp(primals, tangents, *, call_jaxpr):
    return ad.jvp_flat(core.jaxpr_as_fun(_closed(call_jaxpr)), list(primals), list(tangents))

  def transpose(cts, *args, call_jaxpr):
    closed = _closed(call_jaxpr)
    return ad.backward_pass(closed.jaxpr, closed.consts, list(args), list(cts))

  def batch(axis_data, args, dims, *, call_jaxpr):
    closed = _closed(call_jaxpr)
    batched, out_dims = batching.batch_jaxpr_axes(closed, axis_data, tuple(dims))
    return closed_call_p.bind(*args, call_jaxpr=batched), list(out_dims)

  def lowering(ctx, *args, call_jaxpr):
    return ctx.call(_closed(call_jaxpr), name, args)

  def partial_eval(trace, args, unknowns, *, call_jaxpr):
    # Inlined, so that what depends only on known inputs stays known.
    closed = _closed(call_jaxpr)
    with core.set_current_trace(trace):
      return core.eval_jaxpr(closed.jaxpr, closed.consts, *args)

  prim.def_impl(impl)
  prim.def_abstract_eval(abstract_eval)
  prim.def_jvp(jvp)
  prim.def_transpose(transpose)
  prim.def_batch(batch)
  prim.def_lowering(lowering)
  prim.def_partial_eval(partial_eval)
  prim.def_dce(pe.call_dce_rule("call_jaxpr"))


closed_call_p = core.Primitive("closed_call", multiple_results=True)
_define(closed_call_p, "closed_call")

call_p = core.Primitive("call", multiple_results=True)
_define(call_p, "call")
