"""linear_call: a call of a linear function with a custom transpose.

`linear_call(fun, fun_transpose, residual_args, linear_args)` binds the
`linear_call` primitive with `fun`'s jaxpr (consts first, then the residual
and the linear operands). Its JVP is itself applied to the tangents (the call
is linear in `linear_args`); its transpose is another `linear_call`, of
`fun_transpose`, whose own transpose is `fun` again. `fun_transpose` is traced
only when a transpose is needed.
"""
from __future__ import annotations

from xjax._src import core
from xjax._src import tree_util
from xjax._src.api_util import fun_name
from xjax._src.interpreters import ad
from xjax._src.interpreters import lowering
from xjax._src.interpreters import partial_eval as pe


def _trace(fun, in_tree, avals, name):
  """`fun` (taking the pytrees of `in_tree`) traced at `avals`: (closed jaxpr without
  constants, constants, output tree)."""
  out_tree = []

  def flat(*leaves):
    out = fun(*tree_util.tree_unflatten(in_tree, leaves))
    out_leaves, tree = tree_util.tree_flatten(out)
    out_tree.append(tree)
    return out_leaves
  closed = pe.trace_to_jaxpr(flat, list(avals), pe.DebugInfo(name, fun_name(fun), None))
  jaxpr, consts = pe.convert_constvars_jaxpr(closed)
  return jaxpr, consts, out_tree[0]


def linear_call(fun, fun_transpose, residual_args, linear_args):
  """Calls `fun(residual_args, linear_args)`, linear in `linear_args`, whose transpose with
  respect to `linear_args` is `fun_transpose(residual_args, cotangents)`.

  Args:
    fun: ``(r, a) -> b``, linear in its second argument.
    fun_transpose: ``(r, b) -> a``, the transpose of `fun` in its second argument; its
      output must have the structure of `linear_args`.
    residual_args: a pytree of arrays in which the functions need not be linear (not
      differentiated: their tangents must be zero).
    linear_args: a pytree of arrays.

  Returns:
    ``fun(residual_args, linear_args)``.

  Raises:
    TypeError: `fun_transpose`'s output structure differs from `linear_args`' (when a
      transpose is taken).
    ValueError: an output of `fun_transpose` has another shape or dtype than its linear
      argument; residual_args are differentiated.

  Mirrors `jax.custom_derivatives.linear_call`.
  """
  res, res_tree = tree_util.tree_flatten(residual_args)
  lin, lin_tree = tree_util.tree_flatten(linear_args)
  res_avals = [core.get_aval(x) for x in res]
  lin_avals = [core.get_aval(x) for x in lin]
  callee, consts, out_tree = _trace(fun, tree_util.treedef_tuple((res_tree, lin_tree)),
                                    [*res_avals, *lin_avals], "linear_call fun")
  out_avals = tuple(callee.out_avals)
  transposed = []

  def transpose_thunk():
    if not transposed:
      jaxpr, t_consts, t_out_tree = _trace(
          fun_transpose, tree_util.treedef_tuple((res_tree, out_tree)),
          [*res_avals, *out_avals], "linear_call fun_transpose")
      if t_out_tree != lin_tree:
        raise TypeError("transpose output pytree structure must match that of linear inputs, "
                        f"got output structure {t_out_tree} and input structure {lin_tree}.")
      for want, got in zip(lin_avals, jaxpr.out_avals):
        if (want.shape, want.dtype) != (got.shape, got.dtype):
          raise ValueError(f"Expected cotangent type {want.str_short()} but got "
                           f"{got.str_short()}")
      transposed.append((jaxpr, t_consts))
    return transposed[0]

  outs = linear_call_p.bind(*consts, *res, *lin, callee=callee, transpose_thunk=transpose_thunk,
                            num_callee_consts=len(consts), num_res=len(res))
  return tree_util.tree_unflatten(out_tree, outs)


def _impl(*args, callee, transpose_thunk, num_callee_consts, num_res):
  return core.eval_jaxpr(callee.jaxpr, (), *args)


def _jvp(primals, tangents, *, callee, transpose_thunk, num_callee_consts, num_res):
  n = num_callee_consts + num_res
  if any(type(t) is not ad.Zero for t in tangents[:n]):
    raise ValueError("linear_call: residual_args are not differentiated; their tangents "
                     "must be zero (stop_gradient them, or pass them as linear_args).")
  params = dict(callee=callee, transpose_thunk=transpose_thunk,
                num_callee_consts=num_callee_consts, num_res=num_res)
  primals_out = linear_call_p.bind(*primals, **params)
  tangents_out = linear_call_p.bind(*primals[:n], *map(ad.instantiate_zeros, tangents[n:]),
                                    **params)
  return primals_out, tangents_out


def _transpose(cts, *args, callee, transpose_thunk, num_callee_consts, num_res):
  transpose, t_consts = transpose_thunk()
  operands_res = args[num_callee_consts:num_callee_consts + num_res]
  if any(ad.is_undefined_primal(x) for x in operands_res):
    raise ValueError("linear_call: residual_args must not depend on the linear inputs "
                     "being transposed.")
  f_consts = args[:num_callee_consts]
  cts = [ad.zeros_like_aval(a) if type(ct) is ad.Zero else ct
         for ct, a in zip(cts, callee.out_avals)]
  cts_out = linear_call_p.bind(*t_consts, *operands_res, *cts, callee=transpose,
                               transpose_thunk=lambda: (callee, f_consts),
                               num_callee_consts=len(t_consts), num_res=num_res)
  return [None] * (num_callee_consts + num_res) + list(cts_out)


def _lowering(ctx, *args, callee, **_):
  return lowering.lower_jaxpr_body(ctx, callee.jaxpr, callee.consts, list(args))


linear_call_p = core.Primitive("linear_call", multiple_results=True)
linear_call_p.def_impl(_impl)
linear_call_p.def_abstract_eval(lambda *avals, callee, **_: callee.out_avals)
linear_call_p.def_jvp(_jvp)
linear_call_p.def_transpose(_transpose)
linear_call_p.def_lowering(_lowering)
