"""custom_vmap and sequential_vmap: functions with a user-defined batching rule.

A call traces the function to a closed jaxpr and binds `custom_vmap_call`
with the jaxpr (``call``), the user's rule and the argument and output trees:

* evaluated, staged or lowered, it is the function itself;
* under vmap, the rule runs instead: ``rule(axis_size, in_batched, *args)``
  gets the arguments with their batch axes first and returns ``(outs,
  out_batched)``;
* under jvp, it binds `custom_vmap_call` again, on the function's JVP and a
  rule that differentiates the user's rule (so ``vmap(jvp(f))`` uses the
  rule). Reverse mode is not supported: linearizing raises JAX's ValueError.

`sequential_vmap` is a custom_vmap whose rule maps the function over the
batch with `lax.map` (a loop).
"""
from __future__ import annotations

import functools
import operator
import re

from xjax._src import core
from xjax._src import tree_util
from xjax._src.api_util import fun_name
from xjax._src.custom_derivatives import resolve_kwargs
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import lowering
from xjax._src.interpreters import partial_eval as pe
from xjax._src.lax.control_flow.scan import map as lax_map


class custom_vmap:
  """A function with a custom batching (vmap) rule.

  Use as a decorator, then register the rule with `def_vmap`. The function
  itself runs when it is called, jitted or differentiated forward; under
  `vmap` the rule runs instead. Arguments may be pytrees; keyword arguments
  are resolved to positions by the function's signature.

  Reverse-mode differentiation (`grad`, `vjp`, `linearize`) is not supported
  (a ValueError): wrap the function in `custom_vjp` for that.

  Mirrors `jax.custom_batching.custom_vmap`.
  """

  def __init__(self, fun):
    functools.update_wrapper(self, fun)
    self.fun = fun
    self.vmap_rule = None

  def __getattr__(self, name):
    # As JAX: the ``def*`` methods of a wrapped custom function (custom_jvp.defjvp, ...).
    if name.startswith("def"):
      return getattr(self.fun, name)
    raise AttributeError(name)

  def def_vmap(self, vmap_rule):
    """Registers the batching rule and returns it unchanged.

    Args:
      vmap_rule: ``rule(axis_size, in_batched, *args) -> (outs, out_batched)``:
        `axis_size` is the batch size, `in_batched` a list with one pytree of
        bools per argument (whether each leaf is batched), `args` the
        arguments with batch axes first (unbatched leaves as they are).
        `out_batched` is a pytree of bools of the structure of `outs`; a
        batched output leaf has the batch axis first.
    """
    self.vmap_rule = vmap_rule
    return vmap_rule

  def __call__(self, *args, **kwargs):
    name = fun_name(self.fun)
    args = resolve_kwargs(self.fun, "custom_vmap", name, args, kwargs)
    if self.vmap_rule is None:
      raise AttributeError(f"No batching rule defined for custom_vmap function {name} "
                           "using def_vmap.")
    if core.trace_ctx.trace is core.eval_trace:
      return self.fun(*args)  # no rule can apply: the function, op by op, as JAX runs it
    leaves, args_tree = tree_util.tree_flatten(args)
    flat_fun, out_tree = _flatten_fun(self.fun, args_tree)
    closed = pe.trace_to_jaxpr(flat_fun, [core.get_aval(x) for x in leaves])
    call, consts = pe.convert_constvars_jaxpr(closed)
    in_tree = tree_util.treedef_tuple((tree_util.tree_structure(list(consts)), args_tree))
    outs = custom_vmap_p.bind(*consts, *leaves, call=call, rule=ClosedRule(self.vmap_rule),
                              in_tree=in_tree, out_tree=out_tree[0])
    return tree_util.tree_unflatten(out_tree[0], outs)


def _flatten_fun(fun, in_tree):
  """Flat `fun` (leaves in, leaves out) and a one-slot list that receives its output tree."""
  out_tree = []

  def flat(*leaves):
    out_leaves, tree = tree_util.tree_flatten(fun(*tree_util.tree_unflatten(in_tree, leaves)))
    out_tree.append(tree)
    return out_leaves
  return flat, out_tree


class ClosedRule:
  """The user's rule as the primitive calls it: with the traced constants as a first argument.

  The primitive's arguments are ``(consts, args)``; constants are never batched
  (the function closes over them). Printed as the user's rule, as in JAX.
  """

  def __init__(self, rule):
    functools.update_wrapper(self, rule)
    self.rule = rule

  def __call__(self, axis_size, all_in_batched, consts, args):
    consts_batched, in_batched = all_in_batched
    assert not any(tree_util.tree_leaves(consts_batched)), consts_batched
    return self.rule(axis_size, list(in_batched), *args)

  def __str__(self):
    return str(self.rule)


def _rule_name(rule) -> str:
  return getattr(rule, "__name__", "<unnamed rule>")


def _call_rule(rule, axis_size, in_batched, args, out_tree):
  """Runs a primitive-level rule and checks its output trees; returns flat outs and flags."""
  out, out_batched = rule(axis_size, list(in_batched), *args)
  out_leaves, tree = tree_util.tree_flatten(out)
  batched_leaves, batched_tree = tree_util.tree_flatten(out_batched)
  if tree != batched_tree:
    raise ValueError("structure of output value and output batching specification returned by "
                     f"custom vmap rule ({_rule_name(rule)}) do not match.\n"
                     f"Output values: {tree}\nBatching spec: {batched_tree}")
  if tree != out_tree:
    raise ValueError(f"structure of output returned by custom vmap rule ({_rule_name(rule)}) "
                     "does not match that of original custom-vmapped function.\n"
                     f"Original output: {out_tree}\nRule output: {tree}")
  return out_leaves, batched_leaves


# ----------------------------------------------------------------------------
# custom_vmap_call


def _custom_vmap_impl(*args, call, **_):
  return core.eval_jaxpr(call.jaxpr, call.consts, *args)


def _custom_vmap_lowering(ctx, *args, call, **_):
  return lowering.lower_jaxpr_body(ctx, call.jaxpr, call.consts, list(args))


def _custom_vmap_batch(axis_data, args, dims, *, call, rule, in_tree, out_tree):
  args = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(args, dims)]
  in_batched = tree_util.tree_unflatten(in_tree, [d is not None for d in dims])
  outs, out_batched = _call_rule(rule, axis_data.size, in_batched,
                                 tree_util.tree_unflatten(in_tree, args), out_tree)
  return outs, [0 if b else None for b in out_batched]


def custom_vmap_jvp(primals, tangents, *, call, rule, in_tree, out_tree):
  """The JVP: `custom_vmap_call` of the function's JVP, with a rule differentiating `rule`.

  Under vmap, the new rule applies `rule` to the operands whose primal and
  tangent are both batched, and maps the JVP of that over the operands of
  which only one is batched.
  """

  def jvp_of_rule_rule(axis_size, in_batched, primals, tangents):
    ps_batched, ts_batched = in_batched
    both = tree_util.tree_map(operator.and_, ps_batched, ts_batched)
    flat_ps_batched, flat_ts_batched = (tree_util.tree_leaves(ps_batched),
                                        tree_util.tree_leaves(ts_batched))
    extra_dims = ([0 if p and not t else None for p, t in zip(flat_ps_batched, flat_ts_batched)]
                  + [0 if t and not p else None for p, t in zip(flat_ps_batched, flat_ts_batched)])
    flat_ps, flat_ts = tree_util.tree_leaves(primals), tree_util.tree_leaves(tangents)
    n_in = len(flat_ps)
    out_both = []

    def rule_of_primals(*ps):
      outs, out_batched = _call_rule(rule, axis_size, both, tree_util.tree_unflatten(in_tree, ps),
                                     out_tree)
      out_both.append(out_batched)
      return outs

    def jvp_flat(*ps_and_ts):
      outs_p, outs_t = ad.jvp_flat(rule_of_primals, ps_and_ts[:n_in], ps_and_ts[n_in:])
      return [*outs_p, *map(ad.instantiate_zeros, outs_t)]

    outs, dims = batching._run_batched(jvp_flat, batching.AxisData(None, axis_size),
                                       [*flat_ps, *flat_ts], extra_dims)
    outs = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(outs, dims)]
    n_out = len(outs) // 2
    batched = [b or d is not None for b, d in zip(out_both[-1] * 2, dims)]
    unflatten = functools.partial(tree_util.tree_unflatten, out_tree)
    return ((unflatten(outs[:n_out]), unflatten(outs[n_out:])),
            (unflatten(batched[:n_out]), unflatten(batched[n_out:])))

  tangents = [ad.instantiate_zeros(t) for t in tangents]
  jvp_call = ad.jvp_jaxpr(call, [True] * len(primals))
  outs = custom_vmap_p.bind(*primals, *tangents, call=jvp_call, rule=jvp_of_rule_rule,
                            in_tree=tree_util.treedef_tuple((in_tree, in_tree)),
                            out_tree=tree_util.treedef_tuple((out_tree, out_tree)))
  n = len(outs) // 2
  return outs[:n], outs[n:]


_NO_REVERSE_MODE = ("Linearization failed to produce known values for all output primals. "
                    "This is typically caused by attempting to differentiate a function uses "
                    "an operation that does not support reverse-mode autodiff.")


def _custom_vmap_partial_eval(trace, args, unknowns, **params):
  # As in JAX, the call is staged whole; with known (primal) operands beside unknown
  # (tangent) ones, its primal outputs would be unknown: JAX's linearize error.
  if not all(unknowns):
    raise ValueError(_NO_REVERSE_MODE)
  return trace.stage(custom_vmap_p, args, params)


def _pp_params(params):
  # JAX prints the rule by str(), with its address masked.
  rule = re.sub(r" at 0x([0-9a-fA-F]+)", lambda m: " at 0x" + "X" * len(m.group(1)),
                str(params["rule"]))
  return {**params, "rule": rule}


custom_vmap_p = core.Primitive("custom_vmap_call", multiple_results=True)
custom_vmap_p.def_impl(_custom_vmap_impl)
custom_vmap_p.def_abstract_eval(lambda *avals, call, **_: call.out_avals)
custom_vmap_p.def_jvp(custom_vmap_jvp)
custom_vmap_p.def_batch(_custom_vmap_batch)
custom_vmap_p.def_lowering(_custom_vmap_lowering)
custom_vmap_p.def_partial_eval(_custom_vmap_partial_eval)
custom_vmap_p.def_pp_params(_pp_params)


# ----------------------------------------------------------------------------
# sequential_vmap


def sequential_vmap(f):
  """`f` as a custom_vmap whose batching rule is a loop over the batch (`lax.map`).

  For functions with no batched form: under `vmap`, `f` runs once per batch
  member, its unbatched arguments shared. Every output is batched.

  Args:
    f: the function; its arguments and outputs may be pytrees.

  Returns:
    A `custom_vmap` function.

  Mirrors `jax.custom_batching.sequential_vmap`.
  """
  f = custom_vmap(f)

  @f.def_vmap
  def rule(axis_size, in_batched, *args):
    del axis_size
    mapped = tree_util.tree_map(lambda b, x: x if b else None, in_batched, list(args))
    shared = tree_util.tree_map(lambda b, x: None if b else x, in_batched, list(args))

    def one(mapped_args):
      merged = tree_util.tree_map(lambda b, m, s: m if b else s, in_batched, mapped_args, shared,
)
      return f(*merged)

    out = lax_map(one, mapped)
    return out, tree_util.tree_map(lambda _: True, out)

  return f
