"""`remat_opt_p`: a custom_vjp fwd rule that dead-code elimination may swap for the primal
function (JAX's ``optimize_remat=True``, `optimize_remat_of_custom_vjp_fwd`).

`bind_remat_opt` traces the fwd rule to a jaxpr whose outputs are its residuals, then its
primal outputs, and binds `remat_opt_p` with it and a thunk that traces the primal function.
The equation computes fwd; when dead-code elimination finds none of its residuals used (as
in the forward pass that `checkpoint` keeps, where the residuals are recomputed later), it
becomes a `closed_call` of the primal function instead, so that fwd's extra work is not
done. Residuals that are fwd's own inputs are not outputs of the equation (they are taken
from the inputs), as in JAX. Under `jvp` the equation stays one, of the jvp of both
functions; under `vmap` one of both batched; transposing it is an error, as in JAX.
"""
from __future__ import annotations

import functools

from xjax._src import core
from xjax._src import custom_derivatives as cd
from xjax._src import tree_util
from xjax._src.call import closed_call_p
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import lowering
from xjax._src.interpreters import partial_eval as pe


def optimize_remat_of_custom_vjp_fwd(fun, debug_fun, fwd, debug_fwd, nondiff_argnums=(),
                                     symbolic_zeros: bool = False):
  """`fwd` (a custom_vjp fwd rule of `fun`) as a function whose call dead-code elimination
  replaces by `fun` where none of its residuals is used (see the module docstring).

  Mirrors JAX's private function of that name (behind ``defvjp(optimize_remat=True)``);
  the debug infos are accepted and unused.

  Raises:
    NotImplementedError: `symbolic_zeros`, as in JAX.
  """
  del debug_fun, debug_fwd
  if symbolic_zeros:
    raise NotImplementedError("remat optimization for custom_vjp does not support symbolic zeros")
  nums = tuple(nondiff_argnums)

  @functools.wraps(fwd)
  def wrapped_fwd(*args, **kwargs):
    args = cd.resolve_kwargs(fun, "custom_vjp", cd.fun_name(fun), args, kwargs)
    nondiff, diff = cd._split_nondiff(args, nums, "custom_vjp")
    leaves, in_tree = tree_util.tree_flatten(diff)
    trees = []

    def flat_fwd(*xs):
      out = fwd(*cd._merge(nums, nondiff, tree_util.tree_unflatten(in_tree, xs)))
      if not (isinstance(out, (list, tuple)) and len(out) == 2):
        raise TypeError(f"Custom VJP fwd rule {cd.fun_name(fwd)} for function "
                        f"{cd.fun_name(fun)} must produce a pair (list or tuple of length "
                        "two) where the first element represents the primal output and the "
                        f"second element represents residuals, but got {out}.")
      p_leaves, p_tree = tree_util.tree_flatten(out[0])
      r_leaves, r_tree = tree_util.tree_flatten(out[1])
      trees[:] = [p_tree, r_tree]
      return [*r_leaves, *p_leaves]

    def flat_fun(*xs):
      return tree_util.tree_leaves(
          fun(*cd._merge(nums, nondiff, tree_util.tree_unflatten(in_tree, xs))))

    res, outs = bind_remat_opt(flat_fun, flat_fwd, leaves, lambda: trees[1].num_leaves)
    return tree_util.tree_unflatten(trees[0], outs), tree_util.tree_unflatten(trees[1], res)

  return wrapped_fwd


def bind_remat_opt(flat_fun, flat_fwd, leaves, num_res):
  """Runs fwd as a `remat_opt_p` equation.

  Args:
    flat_fun: the primal function of the flat differentiated arguments.
    flat_fwd: the fwd rule of the same arguments, returning its flat residuals, then its
      flat primal outputs.
    leaves: the flat arguments.
    num_res: a function giving the number of residuals once `flat_fwd` has run.

  Returns:
    ``(residuals, outputs)``, flat.
  """
  avals = [core.get_aval(x) for x in leaves]
  forwarded = []  # per residual: the index of the input it is, or None

  def fwd_without_forwarded(*xs):
    outs = list(flat_fwd(*xs))
    n = num_res()
    position = {id(x): i for i, x in enumerate(xs)}
    forwarded[:] = [position.get(id(r)) for r in outs[:n]]
    return [r for r, f in zip(outs[:n], forwarded) if f is None] + outs[n:]

  closed = pe.trace_to_jaxpr(fwd_without_forwarded, avals)
  fwd_jaxpr, consts = pe.convert_constvars_jaxpr(closed)
  n_res = sum(f is None for f in forwarded)

  @functools.cache
  def fun_jaxpr_thunk():
    closed_fun = pe.trace_to_jaxpr(flat_fun, avals)
    return closed_fun.jaxpr, closed_fun.consts

  outs = remat_opt_p.bind(*consts, *leaves, num_consts=len(consts), num_res=n_res,
                          fwd_jaxpr=fwd_jaxpr, fun_jaxpr_thunk=fun_jaxpr_thunk)
  own = iter(outs[:n_res])
  res = [next(own) if f is None else leaves[f] for f in forwarded]
  return res, list(outs[n_res:])


remat_opt_p = core.Primitive("remat_opt", multiple_results=True)


@remat_opt_p.def_impl
def _remat_opt_impl(*args, fwd_jaxpr, **_):
  return core.eval_jaxpr(fwd_jaxpr.jaxpr, fwd_jaxpr.consts, *args)


remat_opt_p.def_abstract_eval(lambda *avals, fwd_jaxpr, **_: fwd_jaxpr.out_avals)


@remat_opt_p.def_lowering
def _remat_opt_lowering(ctx, *args, fwd_jaxpr, **_):
  return lowering.lower_jaxpr_body(ctx, fwd_jaxpr.jaxpr, fwd_jaxpr.consts, list(args))


def _closed_with_consts_first(closed: core.ClosedJaxpr):
  """(`closed` with its constants as leading inputs, the constants)."""
  return pe.convert_constvars_jaxpr(closed)


@remat_opt_p.def_batch
def _remat_opt_batch(axis_data, args, dims, *, num_consts, num_res, fwd_jaxpr,
                     fun_jaxpr_thunk):
  args = [a if d is None else batching.moveaxis(a, d, 0) for a, d in zip(args, dims)]
  in_batched = [d is not None for d in dims]
  batched_fwd, out_batched = batching.batch_jaxpr(fwd_jaxpr, axis_data, in_batched, False)
  batched_fwd, extra = _closed_with_consts_first(batched_fwd)
  prim_batched = in_batched[num_consts:]
  # The primal function's outputs batched where fwd's are, so that either may stand.
  inst = tuple(out_batched[num_res:])

  @functools.cache
  def batched_fun_thunk():
    fun = core.ClosedJaxpr(*fun_jaxpr_thunk())
    batched, _ = batching.batch_jaxpr(fun, axis_data, prim_batched, inst)
    return batched.jaxpr, batched.consts

  outs = remat_opt_p.bind(*extra, *args, num_consts=num_consts + len(extra), num_res=num_res,
                          fwd_jaxpr=batched_fwd, fun_jaxpr_thunk=batched_fun_thunk)
  return outs, [0 if b else None for b in out_batched]


@remat_opt_p.def_jvp
def _remat_opt_jvp(primals, tangents, *, num_consts, num_res, fwd_jaxpr, fun_jaxpr_thunk):
  consts, args = list(primals[:num_consts]), list(primals[num_consts:])
  consts_dot = [t for t in tangents[:num_consts] if type(t) is not ad.Zero]
  consts_nz = [type(t) is not ad.Zero for t in tangents[:num_consts]]
  # Every argument tangent is instantiated: the equation may become the primal function's.
  args_dot = [ad.instantiate_zeros(t) for t in tangents[num_consts:]]
  jvp = ad.jvp_jaxpr(fwd_jaxpr, consts_nz + [True] * len(args))
  n_out = len(fwd_jaxpr.out_avals) - num_res
  nc, na, ncd = len(consts), len(args), len(consts_dot)

  def reordered(*xs):
    # (consts, consts_dot, args, args_dot) -> (res, res_dot, outs, outs_dot)
    c, cd, a, ad_ = xs[:nc], xs[nc:nc + ncd], xs[nc + ncd:nc + ncd + na], xs[nc + ncd + na:]
    outs = core.eval_jaxpr(jvp.jaxpr, jvp.consts, *c, *a, *cd, *ad_)
    p, t = outs[:num_res + n_out], outs[num_res + n_out:]
    return [*p[:num_res], *t[:num_res], *p[num_res:], *t[num_res:]]

  in_avals = [core.get_aval(x) for x in [*consts, *consts_dot, *args, *args_dot]]
  fwd_jvp, extra = _closed_with_consts_first(pe.trace_to_jaxpr(reordered, in_avals))

  @functools.cache
  def fun_jvp_thunk():
    fun_jvp = ad.jvp_jaxpr(core.ClosedJaxpr(*fun_jaxpr_thunk()), [True] * na)
    return fun_jvp.jaxpr, fun_jvp.consts

  outs = remat_opt_p.bind(*extra, *consts, *consts_dot, *args, *args_dot,
                          num_consts=len(extra) + nc + ncd, num_res=2 * num_res,
                          fwd_jaxpr=fwd_jvp, fun_jaxpr_thunk=fun_jvp_thunk)
  res, res_dot = outs[:num_res], outs[num_res:2 * num_res]
  out, out_dot = outs[2 * num_res:2 * num_res + n_out], outs[2 * num_res + n_out:]
  return [*res, *out], [*res_dot, *out_dot]


@remat_opt_p.def_transpose
def _remat_opt_transpose(cts, *args, **params):
  raise NotImplementedError("remat optimization for custom_vjp does not support higher-order AD")


def _remat_opt_dce(used_outputs, eqn):
  """Prunes the fwd jaxpr to the used outputs; with no residual used, the equation becomes a
  `closed_call` of the primal function (pruned too), as JAX's rule."""
  params = eqn.params
  num_consts, num_res = params["num_consts"], params["num_res"]
  if not any(used_outputs) and not core.is_live_regardless(eqn):
    return [False] * len(eqn.invars), None
  outvars = [v for v, u in zip(eqn.outvars, used_outputs) if u]
  if any(used_outputs[:num_res]):
    # fwd still runs here; its inputs stay, for the equation may be pruned again later.
    inst = [False] * num_consts + [True] * (len(eqn.invars) - num_consts)
    body, used_ins = pe.dce_jaxpr(params["fwd_jaxpr"].jaxpr, list(used_outputs), inst)
    new_params = dict(params, fwd_jaxpr=core.ClosedJaxpr(body, []),
                      num_consts=sum(used_ins[:num_consts]),
                      num_res=sum(used_outputs[:num_res]))
    return used_ins, eqn.replace(invars=[v for v, u in zip(eqn.invars, used_ins) if u],
                                 outvars=outvars, params=new_params)
  fun_jaxpr, consts = params["fun_jaxpr_thunk"]()
  body, used_ins = pe.dce_jaxpr(fun_jaxpr, list(used_outputs[num_res:]))
  invars = [v for v, u in zip(eqn.invars[num_consts:], used_ins) if u]
  new_eqn = eqn.replace(invars=invars, outvars=outvars, primitive=closed_call_p,
                        params={"call_jaxpr": core.ClosedJaxpr(body, consts)})
  return [False] * num_consts + list(used_ins), new_eqn


remat_opt_p.def_dce(_remat_opt_dce)
