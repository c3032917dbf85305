"""checkpoint (remat): recompute a function's intermediate values in the backward pass.

`checkpoint(f)` binds the `checkpoint` primitive with f's jaxpr. Under
linearization its partial-eval rule saves only what the policy allows:
with the default policy (nothing saveable) the residuals are just the
inputs, and the staged linear part re-runs the primal computation, so the
backward pass recomputes the intermediates instead of storing them.
"""
from __future__ import annotations

import functools

from xjax._src import core
from xjax._src import traceback_util
from xjax._src import tree_util
from xjax._src.api_util import flatten_fun, fun_name
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import lowering
from xjax._src.interpreters import partial_eval as pe


def nothing_saveable(*args, **kwargs) -> bool:
  """Policy: save no intermediate values; recompute them all (the default)."""
  return False


def everything_saveable(*args, **kwargs) -> bool:
  """Policy: save every intermediate value (no recomputation)."""
  return True


class checkpoint_policies:
  """The rematerialization policies (mirrors `jax.checkpoint_policies`)."""
  nothing_saveable = staticmethod(nothing_saveable)
  everything_saveable = staticmethod(everything_saveable)


def _checkpoint_impl(*args, jaxpr, prevent_cse, differentiated, policy):
  if core.has_side_effects(jaxpr.jaxpr):  # op by op, as JAX evaluates it (checkify's check)
    return core.eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)
  from xjax._src.jit import jit_p
  return jit_p.impl(*args, jaxpr=jaxpr, name="checkpoint", donated_invars=(), inline=False,
                    keep_unused=False)


checkpoint_p = core.Primitive("checkpoint", multiple_results=True)
checkpoint_p.def_impl(_checkpoint_impl)
checkpoint_p.def_abstract_eval(lambda *avals, jaxpr, **_: jaxpr.out_avals)


@checkpoint_p.def_jvp
def _checkpoint_jvp(primals, tangents, *, jaxpr, prevent_cse, differentiated, policy):
  nonzeros = tuple(type(t) is not ad.Zero for t in tangents)
  jvp_jaxpr = ad.jvp_jaxpr(jaxpr, nonzeros)
  nz_tangents = [t for t, nz in zip(tangents, nonzeros) if nz]
  outs = checkpoint_p.bind(*primals, *nz_tangents, jaxpr=jvp_jaxpr, prevent_cse=prevent_cse,
                           differentiated=True, policy=policy)
  n = len(jaxpr.out_avals)
  return outs[:n], outs[n:]


def _checkpoint_partial_eval(trace, args, unknowns, *, jaxpr, prevent_cse, differentiated,
                             policy):
  params = dict(prevent_cse=prevent_cse, differentiated=differentiated, policy=policy)
  known, unknown, out_unknowns, num_res = pe.partial_eval_jaxpr(jaxpr, unknowns)
  known_args = [a for a, u in zip(args, unknowns) if not u]
  with core.set_current_trace(trace.parent_trace):
    known_outs = checkpoint_p.bind(*known_args, jaxpr=known, **params)
  n_known = len(known_outs) - num_res
  if policy is everything_saveable:
    staged_args = [*known_outs[n_known:], *(a for a, u in zip(args, unknowns) if u)]
    staged_jaxpr = unknown
  else:
    # Save only the inputs: the staged part recomputes everything it needs.
    outvars = [v for v, u in zip(jaxpr.jaxpr.outvars, out_unknowns) if u]
    staged_jaxpr = core.ClosedJaxpr(jaxpr.jaxpr.replace(outvars=outvars), jaxpr.consts)
    staged_args = list(args)
  unknown_outs = trace.stage(checkpoint_p, staged_args, dict(jaxpr=staged_jaxpr, **params))
  known_iter, unknown_iter = iter(known_outs[:n_known]), iter(unknown_outs)
  return [next(unknown_iter) if u else next(known_iter) for u in out_unknowns]


checkpoint_p.def_partial_eval(_checkpoint_partial_eval)


@checkpoint_p.def_batch
def _checkpoint_batch(axis_data, args, dims, *, jaxpr, **params):
  args = [a if d is None else batching.moveaxis(a, d, 0) for a, d in zip(args, dims)]
  batched, out_batched = batching.batch_jaxpr(jaxpr, axis_data, [d is not None for d in dims],
                                              False)
  outs = checkpoint_p.bind(*args, jaxpr=batched, **params)
  return outs, [0 if b else None for b in out_batched]


@checkpoint_p.def_transpose
def _checkpoint_transpose(cts, *args, jaxpr, **_):
  # The staged jaxpr recomputes the primal values it needs from the known inputs.
  # Split it by partial evaluation first, so a higher-order equation with both
  # known and linear inputs (a jit of a jvp, say) is split too: the recomputation
  # runs forward and only the linear part is transposed.
  undefined = [ad.is_undefined_primal(a) for a in args]
  known, linear, out_unknowns, num_res = pe.partial_eval_jaxpr(jaxpr, undefined)
  known_outs = core.eval_jaxpr(known.jaxpr, known.consts,
                               *(a for a, u in zip(args, undefined) if not u))
  residuals = known_outs[len(known_outs) - num_res:]
  linear_args = [a for a, u in zip(args, undefined) if u]
  linear_cts = [ct for ct, u in zip(cts, out_unknowns) if u]
  cts_in = ad.backward_pass(linear.jaxpr, linear.consts, [*residuals, *linear_args],
                            linear_cts)[num_res:]
  cts_iter = iter(cts_in)
  return [next(cts_iter) if u else None for u in undefined]


@checkpoint_p.def_lowering
def _checkpoint_lowering(ctx, *args, jaxpr, **_):
  return lowering.lower_jaxpr_body(ctx, jaxpr.jaxpr, jaxpr.consts, list(args))


def checkpoint(fun, *, prevent_cse: bool = True, policy=None, static_argnums=()):
  """`fun` with its intermediates recomputed, not stored, for reverse-mode differentiation.

  Args:
    fun: the function.
    prevent_cse: accepted for compatibility.
    policy: `checkpoint_policies.nothing_saveable` (the default: save only the
      inputs) or `checkpoint_policies.everything_saveable`.
    static_argnums: arguments passed to `fun` as they are, not traced.

  Returns:
    A function computing the same values as `fun`.

  Mirrors `jax.checkpoint` (alias `jax.remat`).
  """
  static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

  @traceback_util.api_boundary
  @functools.wraps(fun)
  def fun_remat(*args, **kwargs):
    n = len(args)
    statics = {i % n for i in static_argnums} if n else set()
    dyn_args = tuple(a for i, a in enumerate(args) if i not in statics)

    def with_statics(*dyn, **kw):
      it = iter(dyn)
      return fun(*[args[i] if i in statics else next(it) for i in range(n)], **kw)

    leaves, in_tree = tree_util.tree_flatten((dyn_args, kwargs))
    flat_fun, out_tree = flatten_fun(with_statics, in_tree)
    closed = pe.trace_to_jaxpr(flat_fun, [core.get_aval(x) for x in leaves],
                               pe.DebugInfo("checkpoint", fun_name(fun), None))
    jaxpr, consts = pe.convert_constvars_jaxpr(closed)
    outs = checkpoint_p.bind(*consts, *leaves, jaxpr=jaxpr, prevent_cse=prevent_cse,
                             differentiated=False, policy=policy)
    return tree_util.tree_unflatten(out_tree.val, outs)

  return fun_remat


remat = checkpoint
