"""custom_jvp and custom_vjp: functions with user-defined derivative rules.

A call traces the function to a closed jaxpr and binds `custom_jvp_call`
(or `custom_vjp_call`) with the jaxpr and the user's rule as params:

* evaluated or staged, it is the function itself;
* under a JVP trace, the jvp rule calls the user's jvp (custom_jvp), or runs
  the user's fwd and emits `custom_lin`, a linear primitive whose transpose
  calls the user's bwd (custom_vjp). Forward-mode of a custom_vjp function
  is an error, as in JAX.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from xjax._src import core
from xjax._src import tree_util
from xjax._src.api_util import flatten_fun_nokwargs, fun_name
from xjax._src.errors import UnexpectedTracerError
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import lowering
from xjax._src.interpreters import partial_eval as pe


def _resolve_kwargs(fun, args, kwargs):
  """Positional arguments for `fun` (custom derivative rules take positional args only)."""
  if not kwargs:
    return tuple(args)
  try:
    bound = inspect.signature(fun).bind(*args, **kwargs)
  except TypeError as e:
    raise TypeError(f"The function {fun_name(fun)} could not be called with its arguments: {e}") from None
  bound.apply_defaults()
  if bound.kwargs:
    raise TypeError("keyword arguments could not be resolved to positions")
  return bound.args


def _split_nondiff(args, nondiff_argnums, kind: str):
  """(nondiff args, diff args); a tracer in a nondiff position raises UnexpectedTracerError.

  (JAX's custom_jvp accepts one there, without a derivative; xjax does not yet.)
  """
  nondiff = tuple(args[i] for i in nondiff_argnums)
  diff = tuple(a for i, a in enumerate(args) if i not in nondiff_argnums)
  for i in nondiff_argnums:
    if any(isinstance(leaf, core.Tracer) for leaf in tree_util.tree_leaves(args[i])):
      raise UnexpectedTracerError(
          f"Found a JAX Tracer object passed as an argument to a {kind} function in a "
          "position indicated by nondiff_argnums as non-differentiable. Tracers cannot be "
          f"passed as non-differentiable arguments to {kind} functions; instead, "
          "nondiff_argnums should only be used for arguments that can't be or contain JAX "
          "tracers, e.g. function-valued arguments. In particular, array-valued arguments "
          "should typically not be indicated as nondiff_argnums.")
  return nondiff, diff


def _merge(nondiff_argnums, nondiff, diff):
  nondiff_iter, diff_iter = iter(nondiff), iter(diff)
  n = len(nondiff) + len(diff)
  return [next(nondiff_iter) if i in nondiff_argnums else next(diff_iter) for i in range(n)]


def _trace_fun(fun, in_tree, avals):
  flat_fun, out_tree = flatten_fun_nokwargs(fun, in_tree)
  closed = pe.trace_to_jaxpr(flat_fun, avals)
  jaxpr, consts = pe.convert_constvars_jaxpr(closed)
  return jaxpr, consts, out_tree.val


def _trace_call(custom, args, kwargs):
  """The shared prologue of a custom_jvp/custom_vjp call.

  Splits the arguments into the nondiff ones and the differentiated pytree,
  and traces the primal function of the latter. Returns ``(nondiff, diff,
  leaves, in_tree, jaxpr, consts, out_tree)``.
  """
  args = _resolve_kwargs(custom.fun, args, kwargs)
  nums = custom.nondiff_argnums
  nondiff, diff = _split_nondiff(args, nums, type(custom).__name__)

  def fun(*diff_args):
    return custom.fun(*_merge(nums, nondiff, diff_args))

  leaves, in_tree = tree_util.tree_flatten(diff)
  jaxpr, consts, out_tree = _trace_fun(fun, in_tree, [core.get_aval(x) for x in leaves])
  return nondiff, diff, leaves, in_tree, jaxpr, consts, out_tree


def _call_eagerly(custom, args, kwargs):
  """A custom-derivative function called outside any transformation: just the function.

  No rule can apply, so the primal function runs op by op as JAX runs it
  (tracing and compiling it on every call would cost a compile per call).
  """
  return custom.fun(*_resolve_kwargs(custom.fun, args, kwargs))


def _eval_call(*args, call_jaxpr, **_):
  if core.has_side_effects(call_jaxpr.jaxpr):  # op by op, as JAX evaluates it (checkify's check)
    return core.eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)
  from xjax._src.jit import jit_p
  return jit_p.impl(*args, jaxpr=call_jaxpr, name="custom_call", donated_invars=(),
                    inline=False, keep_unused=False)


def _call_lowering(ctx, *args, call_jaxpr, **_):
  return lowering.lower_jaxpr_body(ctx, call_jaxpr.jaxpr, call_jaxpr.consts, list(args))


# ----------------------------------------------------------------------------
# custom_jvp


custom_jvp_call_p = core.Primitive("custom_jvp_call", multiple_results=True)
custom_jvp_call_p.def_impl(_eval_call)
custom_jvp_call_p.def_abstract_eval(lambda *avals, call_jaxpr, **_: call_jaxpr.out_avals)
custom_jvp_call_p.def_lowering(_call_lowering)


@custom_jvp_call_p.def_jvp
def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp_jaxpr_fun, num_consts,
                         symbolic_zeros):
  if any(type(t) is not ad.Zero for t in tangents[:num_consts]):
    raise TypeError(
        "Detected differentiation of a custom_jvp function with respect to a closed-over "
        "value. That isn't supported because the custom JVP rule only specifies how to "
        "differentiate the custom_jvp function with respect to explicit input parameters. "
        "Try passing the closed-over value into the custom_jvp function as an argument, and "
        "adapting the custom_jvp rule.")
  args = primals[num_consts:]
  arg_tangents = [ad.instantiate_zeros(t) for t in tangents[num_consts:]]
  outs = jvp_jaxpr_fun(*args, *arg_tangents)
  n = len(call_jaxpr.out_avals)
  return outs[:n], outs[n:]


@custom_jvp_call_p.def_partial_eval
def _custom_jvp_call_partial_eval(trace, args, unknowns, *, call_jaxpr, **_):
  # As in JAX: partial evaluation only builds linear functions, which no longer need the
  # custom rule; the function is inlined, so its known part stays known.
  with core.set_current_trace(trace):
    return core.eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)


def _copy_names(src, dst) -> None:
  """Carries the printed names of a rule callable over to a transformed one."""
  for attr in ("fun_name", "rule_name"):
    if hasattr(src, attr):
      setattr(dst, attr, getattr(src, attr))


def _pp_custom_call(rule_params):
  """A print rule: ``name=`` first, then the params sorted, the rule callables by name.

  `rule_params` maps each callable param to its printed key (``jvp``, ``fwd``, ...);
  ``num_consts`` shows only when nonzero, as in JAX.
  """
  def pp_eqn(eqn, context):
    params = dict(eqn.params)
    if not params["num_consts"]:
      del params["num_consts"]
    name = "unknown"
    for param, key in rule_params.items():
      fn = params.pop(param)
      name = getattr(fn, "fun_name", name)
      params[key] = getattr(fn, "rule_name", "unknown")
    return core.pp_eqn_with_params(eqn, context, {"name": name, **dict(sorted(params.items()))})
  return pp_eqn


custom_jvp_call_p.pp_eqn = _pp_custom_call({"jvp_jaxpr_fun": "jvp"})


def _batch_call(axis_data, args, dims, call_jaxpr):
  """The batched call: operands with batch axes first, every output batched (first)."""
  args = [a if d is None else batching.moveaxis(a, d, 0) for a, d in zip(args, dims)]
  batched, _ = batching.batch_jaxpr(call_jaxpr, axis_data, [d is not None for d in dims], True)
  return args, batched


@custom_jvp_call_p.def_batch
def _custom_jvp_call_batch(axis_data, args, dims, *, call_jaxpr, jvp_jaxpr_fun, num_consts,
                           symbolic_zeros):
  args, batched_call = _batch_call(axis_data, args, dims, call_jaxpr)
  arg_dims = [None if d is None else 0 for d in dims[num_consts:]]
  n_out = len(call_jaxpr.out_avals)

  def batched_jvp(*primals_and_tangents):
    # A tangent has its primal's shape, so it is batched where its primal is.
    return batching.batch_flat(jvp_jaxpr_fun, axis_data, primals_and_tangents,
                               arg_dims * 2, [0] * (2 * n_out))

  _copy_names(jvp_jaxpr_fun, batched_jvp)
  outs = custom_jvp_call_p.bind(*args, call_jaxpr=batched_call, jvp_jaxpr_fun=batched_jvp,
                                num_consts=num_consts, symbolic_zeros=symbolic_zeros)
  return outs, [0] * n_out


class custom_jvp:
  """A function with a custom JVP (forward-mode derivative) rule.

  Use as a decorator, then register the rule with `defjvp` (a function of
  ``(primals, tangents)`` returning ``(primal_out, tangent_out)``) or
  `defjvps` (one function per argument). Arguments in `nondiff_argnums` are
  passed to the rule first and are not differentiated.

  Mirrors `jax.custom_jvp`.
  """

  def __init__(self, fun, nondiff_argnums=()):
    functools.update_wrapper(self, fun)
    self.fun = fun
    self.nondiff_argnums = tuple(nondiff_argnums)
    self.jvp = None
    self.symbolic_zeros = False

  def __get__(self, obj, objtype=None):
    return self if obj is None else functools.partial(self, obj)

  def defjvp(self, jvp, symbolic_zeros: bool = False):
    """Registers `jvp(primals, tangents) -> (primal_out, tangent_out)` (or with nondiff args first)."""
    self.jvp = jvp
    self.symbolic_zeros = symbolic_zeros
    return jvp

  def defjvps(self, *jvps):
    """Registers one rule per argument: ``jvps[i](t_i, primal_out, *primals) -> tangent``."""
    if self.nondiff_argnums:
      raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

    def jvp(primals, tangents):
      primal_out = self(*primals)
      zeros = tree_util.tree_map(lambda x: np.zeros(np.shape(x), core.get_aval(x).to_tangent_aval().dtype),
                                 primal_out)
      tangent_out = zeros
      for rule, t in zip(jvps, tangents):
        if rule is None:
          continue
        contribution = rule(t, primal_out, *primals)
        tangent_out = tree_util.tree_map(lambda a, b: a + b, tangent_out, contribution)
      return primal_out, tangent_out

    self.defjvp(jvp)

  def __call__(self, *args, **kwargs):
    name = fun_name(self.fun)
    if self.jvp is None:
      raise AttributeError(f"No JVP defined for custom_jvp function {name} using defjvp.")
    if core.trace_ctx.trace is core.eval_trace:
      return _call_eagerly(self, args, kwargs)
    nondiff, diff, leaves, in_tree, jaxpr, consts, out_tree = _trace_call(self, args, kwargs)
    user_jvp = self.jvp

    def jvp_flat(*primals_and_tangents):
      n = len(leaves)
      primals = tree_util.tree_unflatten(in_tree, primals_and_tangents[:n])
      tangents = tree_util.tree_unflatten(in_tree, primals_and_tangents[n:])
      out = user_jvp(*nondiff, primals, tangents)
      if not (isinstance(out, (list, tuple)) and len(out) == 2):
        raise TypeError("Custom JVP rule must produce a pair (list or tuple of length two) "
                        f"representing primal and tangent outputs, but got {out}.")
      primal_out, tangent_out = out
      p_leaves, p_tree = tree_util.tree_flatten(primal_out)
      t_leaves, t_tree = tree_util.tree_flatten(tangent_out)
      if p_tree != t_tree:
        raise TypeError("Custom JVP rule must produce primal and tangent outputs with equal "
                        f"container (pytree) structures, but got {p_tree} and {t_tree} "
                        "respectively.")
      if p_tree != out_tree:
        raise TypeError("Custom JVP rule must produce primal outputs with the same container "
                        f"(pytree) structure as the primal function, but got {p_tree} and "
                        f"{out_tree} respectively.")
      for p, t in zip(p_leaves, t_leaves):
        expected = core.get_aval(p).to_tangent_aval()
        got = core.get_aval(t)
        if got.shape != expected.shape or got.dtype != expected.dtype:
          raise TypeError("Custom JVP rule must produce primal and tangent outputs with "
                          "corresponding shapes and dtypes. Expected tangent "
                          f"{expected.str_short()} for primal {core.get_aval(p).str_short()}, "
                          f"but got {got.str_short()}.")
      return [*p_leaves, *t_leaves]

    jvp_flat.fun_name, jvp_flat.rule_name = name, fun_name(user_jvp)
    outs = custom_jvp_call_p.bind(*consts, *leaves, call_jaxpr=jaxpr, jvp_jaxpr_fun=jvp_flat,
                                  num_consts=len(consts), symbolic_zeros=self.symbolic_zeros)
    return tree_util.tree_unflatten(out_tree, outs)


# ----------------------------------------------------------------------------
# custom_vjp


custom_vjp_call_p = core.Primitive("custom_vjp_call", multiple_results=True)
custom_vjp_call_p.def_impl(_eval_call)
custom_vjp_call_p.def_abstract_eval(lambda *avals, call_jaxpr, **_: call_jaxpr.out_avals)
custom_vjp_call_p.def_lowering(_call_lowering)


@custom_vjp_call_p.def_jvp
def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, fwd, bwd, num_consts, symbolic_zeros):
  if any(type(t) is not ad.Zero for t in tangents[:num_consts]):
    raise TypeError(
        "Detected differentiation of a custom_vjp function with respect to a closed-over "
        "value. That isn't supported because the custom VJP rule only specifies how to "
        "differentiate the custom_vjp function with respect to explicit input parameters.")
  args = primals[num_consts:]
  res_and_outs, num_res = fwd(*args)
  res, outs = res_and_outs[:num_res], res_and_outs[num_res:]
  out_avals = tuple(core.get_aval(o).to_tangent_aval() for o in outs)
  arg_tangents = [ad.instantiate_zeros(t) for t in tangents[num_consts:]]
  tangents_out = custom_lin_p.bind(*res, *arg_tangents, num_res=num_res, bwd=bwd,
                                   out_avals=out_avals, symbolic_zeros=symbolic_zeros)
  return outs, tangents_out


@custom_vjp_call_p.def_partial_eval
def _custom_vjp_call_partial_eval(trace, args, unknowns, **params):
  # As in JAX: the whole call is staged (every output unknown), the custom rules kept.
  return trace.stage(custom_vjp_call_p, args, params)


_NO_FORWARD_MODE = "can't apply forward-mode autodiff (jvp) to a custom_vjp function."


def _custom_lin_impl(*args, **params):
  raise TypeError(_NO_FORWARD_MODE)


def _custom_lin_lowering(ctx, *args, **params):
  raise TypeError(_NO_FORWARD_MODE)


def _custom_lin_batch(axis_data, args, dims, **params):
  # Batched only when evaluated forward under vmap (jacfwd, vmap of jvp): an error, as in JAX.
  raise TypeError(_NO_FORWARD_MODE)


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals, symbolic_zeros):
  res = args[:num_res]
  cts = [ad.instantiate_zeros(c) for c in cts]
  cts_in = bwd(*res, *cts)
  return [None] * num_res + list(cts_in)


custom_lin_p = core.Primitive("custom_lin", multiple_results=True)
custom_lin_p.def_impl(_custom_lin_impl)
custom_lin_p.def_abstract_eval(lambda *avals, out_avals, **_: list(out_avals))
custom_lin_p.def_lowering(_custom_lin_lowering)
custom_lin_p.def_transpose(_custom_lin_transpose)
custom_lin_p.def_batch(_custom_lin_batch)


@custom_vjp_call_p.def_batch
def _custom_vjp_call_batch(axis_data, args, dims, *, call_jaxpr, fwd, bwd, num_consts,
                           symbolic_zeros):
  args, batched_call = _batch_call(axis_data, args, dims, call_jaxpr)
  arg_dims = [None if d is None else 0 for d in dims[num_consts:]]
  n_out = len(call_jaxpr.out_avals)
  num_res = []

  def batched_fwd(*primals):
    def flat_fwd(*xs):
      res_and_outs, n = fwd(*xs)
      num_res.append(n)
      return res_and_outs
    outs = batching.batch_flat(flat_fwd, axis_data, primals, arg_dims, lambda n: [0] * n)
    return outs, num_res[-1]

  def batched_bwd(*res_and_cts):
    def flat_bwd(*xs):
      return [ad.instantiate_zeros(c) for c in bwd(*xs)]
    cts = batching.batch_flat(flat_bwd, axis_data, res_and_cts, [0] * len(res_and_cts),
                              [0] * len(arg_dims))
    # An argument shared by the batch gets the sum of the members' cotangents.
    return [ct if d == 0 else batching.sum_batch(ct) for ct, d in zip(cts, arg_dims)]

  _copy_names(fwd, batched_fwd)
  _copy_names(bwd, batched_bwd)
  outs = custom_vjp_call_p.bind(*args, call_jaxpr=batched_call, fwd=batched_fwd,
                                bwd=batched_bwd, num_consts=num_consts,
                                symbolic_zeros=symbolic_zeros)
  return outs, [0] * n_out


custom_vjp_call_p.pp_eqn = _pp_custom_call({"fwd": "fwd", "bwd": "bwd"})


class custom_vjp:
  """A function with a custom VJP (reverse-mode derivative) rule.

  Register ``fwd(*args) -> (out, residuals)`` and ``bwd(residuals, ct) ->
  tuple of input cotangents`` with `defvjp`. Arguments in `nondiff_argnums`
  are passed to bwd first. Forward mode (`jvp`) of such a function raises.

  Mirrors `jax.custom_vjp`.
  """

  def __init__(self, fun, nondiff_argnums=()):
    functools.update_wrapper(self, fun)
    self.fun = fun
    self.nondiff_argnums = tuple(nondiff_argnums)
    self.fwd = None
    self.bwd = None
    self.symbolic_zeros = False

  def __get__(self, obj, objtype=None):
    return self if obj is None else functools.partial(self, obj)

  def defvjp(self, fwd, bwd, symbolic_zeros: bool = False, optimize_remat: bool = False):
    """Registers the forward (primal output and residuals) and backward rules."""
    self.fwd = fwd
    self.bwd = bwd
    self.symbolic_zeros = symbolic_zeros

  def __call__(self, *args, **kwargs):
    name = fun_name(self.fun)
    if self.fwd is None:
      raise AttributeError(f"No VJP defined for custom_vjp function {name} using defvjp.")
    if core.trace_ctx.trace is core.eval_trace:
      return _call_eagerly(self, args, kwargs)
    nondiff, diff, leaves, in_tree, jaxpr, consts, out_tree = _trace_call(self, args, kwargs)
    nums = self.nondiff_argnums
    in_avals = [core.get_aval(x).to_tangent_aval() for x in leaves]
    user_fwd, user_bwd = self.fwd, self.bwd
    res_trees = []

    def fwd_flat(*primals):
      out = user_fwd(*_merge(nums, nondiff, tree_util.tree_unflatten(in_tree, primals)))
      if not (isinstance(out, (list, tuple)) and len(out) == 2):
        raise TypeError("Custom VJP fwd rule must produce a pair (list or tuple of length two) "
                        "where the first element represents the primal output (equal to the "
                        "output of the custom_vjp-decorated function) and the second element "
                        f"represents residuals, but got {out}.")
      primal_out, res = out
      p_leaves, p_tree = tree_util.tree_flatten(primal_out)
      if p_tree != out_tree:
        raise TypeError("Custom VJP fwd rule must produce an output with the same container "
                        "(pytree) structure as the primal function, but got "
                        f"{p_tree} and {out_tree} respectively.")
      r_leaves, r_tree = tree_util.tree_flatten(res)
      res_trees.append(r_tree)
      return [*r_leaves, *p_leaves], len(r_leaves)

    def bwd_flat(*res_and_cts):
      r_tree = res_trees[-1]
      n_res = r_tree.num_leaves
      res = tree_util.tree_unflatten(r_tree, res_and_cts[:n_res])
      cts = tree_util.tree_unflatten(out_tree, res_and_cts[n_res:])
      cts_in = user_bwd(*nondiff, res, cts)
      if not isinstance(cts_in, (tuple, list)) or len(cts_in) != len(diff):
        raise TypeError(
            "Custom VJP bwd rule must produce an output with the same container (pytree) "
            "structure as the args tuple of the primal function, and in particular must "
            "produce a tuple of length equal to the number of arguments to the primal "
            f"function, but got bwd output structure {tree_util.tree_structure(cts_in)} for "
            f"primal input structure {in_tree}.")
      flat = []
      for arg, ct in zip(diff, cts_in):
        arg_leaves = tree_util.tree_leaves(arg)
        if ct is None:
          flat.extend(ad.Zero(core.get_aval(x).to_tangent_aval()) for x in arg_leaves)
        else:
          flat.extend(tree_util.tree_leaves(ct))
      return [ad.Zero(a) if c is None else c for c, a in zip(flat, in_avals)]

    fwd_flat.fun_name, fwd_flat.rule_name = name, fun_name(user_fwd)
    bwd_flat.rule_name = fun_name(user_bwd)
    outs = custom_vjp_call_p.bind(*consts, *leaves, call_jaxpr=jaxpr, fwd=fwd_flat, bwd=bwd_flat,
                                  num_consts=len(consts), symbolic_zeros=self.symbolic_zeros)
    return tree_util.tree_unflatten(out_tree, outs)


def closure_convert(fun, *example_args):
  """``(converted, consts)``: `fun` with the values it closes over made explicit arguments.

  ``converted(*args, *consts)`` computes ``fun(*args)``; useful inside custom
  derivative rules that must differentiate with respect to closed-over values.

  Mirrors `jax.closure_convert`.
  """
  leaves, in_tree = tree_util.tree_flatten(example_args)
  jaxpr, consts, out_tree = _trace_fun(fun, in_tree, [core.get_aval(x) for x in leaves])
  n_consts = len(consts)

  def converted(*args_and_consts):
    args, hoisted = args_and_consts[:len(example_args)], args_and_consts[len(example_args):]
    flat = tree_util.tree_leaves(args)
    outs = core.eval_jaxpr(jaxpr.jaxpr, (), *hoisted, *flat)
    return tree_util.tree_unflatten(out_tree, outs)

  del n_consts
  return converted, list(consts)
