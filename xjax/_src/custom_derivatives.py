"""custom_jvp and custom_vjp: functions with user-defined derivative rules.

A call traces the function to a closed jaxpr and binds `custom_jvp_call`
(or `custom_vjp_call`) with the jaxpr and the user's rule as params:

* evaluated or staged, it is the function itself;
* under a JVP trace, the jvp rule calls the user's jvp (custom_jvp), or runs
  the user's fwd and emits `custom_lin`, a linear primitive whose transpose
  calls the user's bwd (custom_vjp). Forward-mode of a custom_vjp function
  is an error, as in JAX.

With ``symbolic_zeros=True`` the rules see `SymbolicZero` objects where a
tangent (or cotangent) is known to be zero, and a custom_vjp's fwd sees each
primal as a `CustomVJPPrimal` (value, perturbed). `custom_gradient` and
`closure_convert` (in `custom_gradient.py`) are built on these.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect

import numpy as np

from typing import Any

from xjax._src import core
from xjax._src import jaxpr_pp
from xjax._src import literals
from xjax._src import dtypes
from xjax._src import linear_util as lu
from xjax._src import tree_util
from xjax._src.config import config
from xjax._src.api_util import (flatten_fun_nokwargs, fun_name, fun_signature,
                                infer_argnums_and_argnames)
from xjax._src.errors import UnexpectedTracerError
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import lowering
from xjax._src.interpreters import partial_eval as pe
from xjax._src.jit_primitive import jit_p
from xjax._src.lax import elementwise
from xjax._src.lax import structural


# ----------------------------------------------------------------------------
# Symbolic zeros, as custom rules see them


class SymbolicZero:
  """A tangent or cotangent known to be zero, passed to rules defined with ``symbolic_zeros=True``.

  Holds only its `aval`; attributes such as ``shape`` and ``dtype`` are the
  aval's. It is not an array: a rule must test for it (``type(t) is
  SymbolicZero``) before computing with it.

  Mirrors `jax.custom_derivatives.SymbolicZero`.
  """

  def __init__(self, aval):
    self.aval = aval

  def __repr__(self):
    return type(self).__name__

  def __getattr__(self, name):
    if name == "aval":  # not yet set (during unpickling, copying)
      raise AttributeError(name)
    return getattr(self.aval, name)

  @staticmethod
  def from_primal_value(val) -> SymbolicZero:
    return SymbolicZero(core.get_aval(val).to_tangent_aval())


def zero_from_primal(val, symbolic_zeros: bool = False):
  """A zero tangent for each leaf of the pytree `val`: a `SymbolicZero`, or a concrete zero.

  Integer and boolean leaves get float0 zeros (tangent dtype).

  Mirrors `jax.custom_derivatives.zero_from_primal`.
  """
  def zero(x):
    aval = core.get_aval(x).to_tangent_aval()
    if symbolic_zeros:
      return SymbolicZero(aval)
    if aval.dtype == dtypes.float0:
      return np.zeros(aval.shape, dtypes.float0)
    return _zeros_array(aval)
  return tree_util.tree_map(zero, val)


def _zeros_array(aval):
  """A zero Array of `aval`, weak type kept."""
  return elementwise.convert_element_type(structural.full(aval.shape, 0, aval.dtype), aval.dtype,
                                          weak_type=aval.weak_type)


@dataclasses.dataclass(slots=True)
class CustomVJPPrimal:
  """A primal argument leaf of a custom_vjp fwd rule defined with ``symbolic_zeros=True``.

  `value` is the argument; `perturbed` is False when it is not differentiated
  (its tangent is a symbolic zero).

  Mirrors `jax.custom_derivatives.CustomVJPPrimal`.
  """
  value: Any
  perturbed: bool


def custom_vjp_primal_tree_values(tree):
  """`tree` with each `CustomVJPPrimal` leaf replaced by its value.

  Raises:
    TypeError: a leaf is not a `CustomVJPPrimal`.

  Mirrors `jax.custom_derivatives.custom_vjp_primal_tree_values`.
  """
  def value(leaf):
    if type(leaf) is not CustomVJPPrimal:
      raise TypeError(f"unexpected leaf type {type(leaf)}")
    return leaf.value
  return tree_util.tree_map(value, tree)


def _to_symbolic(t):
  """An internal `ad.Zero` as rules see it (a `SymbolicZero`)."""
  return SymbolicZero(t.aval) if type(t) is ad.Zero else t


def _from_symbolic(t):
  return ad.Zero(t.aval) if type(t) is SymbolicZero else t


# ----------------------------------------------------------------------------
# Shared helpers


def _resolve_kwargs(custom, args, kwargs):
  """Positional arguments for `custom.fun` (custom derivative rules take positional args
  only): bound to its signature (held on `custom` once read), defaults filled in, as JAX
  binds every call."""
  sig = custom.__dict__.get("_custom_call_signature", _UNREAD)
  if sig is _UNREAD:
    sig = custom.__dict__["_custom_call_signature"] = _opaque_or_signature(custom.fun)
  if sig is None:
    return tuple(args)
  return resolve_kwargs(custom.fun, type(custom).__name__, fun_name(custom.fun), args, kwargs,
                        sig)


_UNREAD = object()


def _opaque_or_signature(fun):
  """`fun`'s signature; None where any arguments bind (a functools.partial's signature is
  opaque, as in JAX, and so is one `inspect` cannot read)."""
  if isinstance(fun, functools.partial):
    return None
  try:
    return inspect.signature(fun)
  except (TypeError, ValueError):
    return None


def resolve_kwargs(fun, kind: str, name: str, args, kwargs, signature=None) -> tuple:
  """`args` and `kwargs` as `fun`'s positional arguments, defaults filled in.

  Raises JAX's TypeError (naming the `kind`-decorated function `name`) when
  the arguments do not bind, or a keyword argument has no position.
  """
  if signature is None:
    if isinstance(fun, functools.partial):  # an opaque signature, as in JAX
      fun = lambda *args, **kwargs: None
    signature = inspect.signature(fun)
  try:
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    passed = [k for k in bound.kwargs if k in kwargs]
    if passed:
      raise TypeError("The following keyword arguments could not be resolved to positions: "
                      f"{', '.join(passed)}")
  except TypeError as e:
    raise TypeError(f"The input arguments to the {kind}-decorated function {name} could not "
                    "be resolved to positional-only arguments. Binding failed with the "
                    f"error:\n{e}") from e
  return bound.args


def _nondiff_argnums(fun, nondiff_argnums, nondiff_argnames) -> tuple[int, ...]:
  """The sorted positions of the nondiff arguments, named by position or by name."""
  nums = set(nondiff_argnums)
  if nondiff_argnames:
    nums.update(infer_argnums_and_argnames(fun_signature(fun), None, nondiff_argnames)[0])
  return tuple(sorted(nums))


def _split_nondiff(args, nondiff_argnums, kind: str):
  """(nondiff args, diff args). A tracer in a nondiff position: for custom_jvp, its gradient
  is stopped (the function and rule close over it, as in JAX); for custom_vjp, it raises
  UnexpectedTracerError, as in JAX."""
  if kind == "custom_jvp":
    args = [tree_util.tree_map(_stop_gradient_of_tracer, a) if i in nondiff_argnums else a
            for i, a in enumerate(args)]
  nondiff = tuple(args[i] for i in nondiff_argnums)
  diff = tuple(a for i, a in enumerate(args) if i not in nondiff_argnums)
  for i in nondiff_argnums:
    if kind != "custom_jvp" and any(isinstance(leaf, core.Tracer)
                                    for leaf in tree_util.tree_leaves(args[i])):
      raise UnexpectedTracerError(
          f"Found a JAX Tracer object passed as an argument to a {kind} function in a "
          "position indicated by nondiff_argnums as non-differentiable. Tracers cannot be "
          f"passed as non-differentiable arguments to {kind} functions; instead, "
          "nondiff_argnums should only be used for arguments that can't be or contain JAX "
          "tracers, e.g. function-valued arguments. In particular, array-valued arguments "
          "should typically not be indicated as nondiff_argnums.")
  return nondiff, diff


def _stop_gradient_of_tracer(x):
  if isinstance(x, core.Tracer) and dtypes.issubdtype(x.aval.dtype, np.inexact):
    return ad.stop_gradient_p.bind(x)
  return x


def _merge(nondiff_argnums, nondiff, diff):
  nondiff_iter, diff_iter = iter(nondiff), iter(diff)
  n = len(nondiff) + len(diff)
  return [next(nondiff_iter) if i in nondiff_argnums else next(diff_iter) for i in range(n)]


def _trace_fun(fun, in_tree, avals):
  flat_fun, out_tree = flatten_fun_nokwargs(fun, in_tree)
  closed = pe.trace_to_jaxpr(flat_fun, avals)
  jaxpr, consts = pe.convert_constvars_jaxpr(closed)
  return jaxpr, consts, out_tree.val


def _trace_primal(custom, nondiff, leaves, in_tree):
  """Traces `custom`'s primal function of the differentiated leaves (the nondiff arguments
  fixed). Returns ``(jaxpr, consts, out_tree)``."""
  nums = custom.nondiff_argnums

  def fun(*diff_args):
    return custom.fun(*_merge(nums, nondiff, diff_args))

  return _trace_fun(fun, in_tree, [core.get_aval(x) for x in leaves])


def _split_call(custom, args, kwargs):
  """``(nondiff, diff, leaves, in_tree)``: the arguments as positional ones, split (see
  `_split_nondiff`), and the leaves and structure of the differentiated ones."""
  args = _resolve_kwargs(custom, args, kwargs)
  nondiff, diff = _split_nondiff(args, custom.nondiff_argnums, type(custom).__name__)
  leaves, in_tree = tree_util.tree_flatten(diff)
  return nondiff, diff, leaves, in_tree


def _trace_to_pass_to(trace, leaves):
  """The trace a custom-derivative call under `trace` belongs to instead, or None, as JAX's
  traces pass it on: under a JVP trace when no argument carries a tangent of it, and under
  linearize's partial-eval trace when every argument is known (a primal), its parent; under
  `ensure_compile_time_eval` when no argument is traced, evaluation. The function and its
  rules then run on those values: concrete ones at the top of `grad` or `jvp`, so that
  they may branch on them in Python, as in JAX."""
  if type(trace) is ad.JVPTrace:
    if not any(isinstance(x, ad.JVPTracer) and x._trace.tag is trace.tag for x in leaves):
      return trace.parent_trace
  elif type(trace) is pe.PartialEvalTrace:
    if not any(map(trace.is_unknown, leaves)):
      return trace.parent_trace
  elif (isinstance(trace, pe.DynamicJaxprTrace) and config.jax_eager_constant_folding
        and not any(isinstance(x, core.Tracer) for x in leaves)):
    return core.eval_trace
  return None


def _jvp_pairs(trace, leaves):
  """The (primals, tangents) of `leaves` under the JVP trace `trace`."""
  pairs = [trace.to_primal_tangent_pair(x) for x in leaves]
  # A Python scalar primal reaches the rules as a typed scalar (it has a dtype), as JAX's
  # canonicalization hands it on.
  return [literals.typed_scalar(p) for p, _ in pairs], [t for _, t in pairs]


def _call_eagerly(custom, args, kwargs):
  """A custom-derivative function called outside any transformation: just the function.

  No rule can apply, so the primal function runs op by op as JAX runs it
  (tracing and compiling it on every call would cost a compile per call).
  """
  return custom.fun(*_resolve_kwargs(custom, args, kwargs))


def _eval_call(*args, call_jaxpr, **_):
  if core.has_side_effects(call_jaxpr.jaxpr):  # op by op, as JAX evaluates it (checkify's check)
    return core.eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)
  return jit_p.impl(*args, jaxpr=call_jaxpr, name="custom_call", donated_invars=(),
                    inline=False, keep_unused=False)


def _call_lowering(ctx, *args, call_jaxpr, **_):
  return lowering.lower_jaxpr_body(ctx, call_jaxpr.jaxpr, call_jaxpr.consts, list(args))


# ----------------------------------------------------------------------------
# Batching: the rules run batched, their outputs placed where the primal's are


def _copy_names(src, dst) -> None:
  """Carries the printed names of a rule callable over to a transformed one."""
  for attr in ("fun_name", "rule_name"):
    if hasattr(src, attr):
      setattr(dst, attr, getattr(src, attr))


def _batch_call(axis_data, args, dims, call_jaxpr):
  """The batched call: operands with batch axes first.

  Returns the operands, the batched jaxpr, and each output's batch dim (0, or
  None where it depends on no batched operand, as in JAX).
  """
  args = [a if d is None else batching.moveaxis(a, d, 0) for a, d in zip(args, dims)]
  batched, out_batched = batching.batch_jaxpr(call_jaxpr, axis_data,
                                              [d is not None for d in dims], False)
  return args, batched, [0 if b else None for b in out_batched]


def _unbatched_aval(aval, dim):
  return aval if dim is None else aval.update(shape=aval.shape[:dim] + aval.shape[dim + 1:])


def _batch_rule(rule, axis_data, args, in_dims, out_dests, sum_unmapped: bool = False,
                tag=None, keep_zeros: bool = False, widen=None):
  """Runs the flat `rule` batched, ``args[i]`` mapped along ``in_dims[i]`` (or None).

  A symbolic Zero argument stays symbolic (with its per-example aval); Zero outputs are
  instantiated, or with `keep_zeros` stay symbolic (with the aval of their destination, as
  JAX keeps a JVP rule's symbolic-zero tangents under vmap). Outputs go to `out_dests` (a
  list, or a function of their number); with `sum_unmapped`, an output batched where its
  destination is None is summed over the batch (the cotangent of a value the whole batch
  shares). `tag` is the batch trace's: batched values the rule closes over are then the
  batch's own. `widen(srcs, dests)`, if given, may revise the destinations once the
  outputs' batch dims (`srcs`, None for unbatched or symbolic zeros) are known.
  """
  nonzero = [type(a) is not ad.Zero for a in args]
  inner = [None if nz else ad.Zero(_unbatched_aval(a.aval, d))
           for a, d, nz in zip(args, in_dims, nonzero)]
  zeros = []  # per output: the Zero the rule returned, or None

  def flat(*nonzero_args):
    it = iter(nonzero_args)
    outs = rule(*[next(it) if nz else z for nz, z in zip(nonzero, inner)])
    zeros[:] = [o if keep_zeros and type(o) is ad.Zero else None for o in outs]
    return [ad.instantiate_zeros(o) for o, z in zip(outs, zeros) if z is None]

  vals, dims = batching._run_batched(flat, axis_data,
                                     [a for a, nz in zip(args, nonzero) if nz],
                                     [d for d, nz in zip(in_dims, nonzero) if nz], tag)
  dests = out_dests(len(zeros)) if callable(out_dests) else out_dests
  if widen is not None:
    found = iter(dims)
    dests = widen([None if z is not None else next(found) for z in zeros], dests)
  outs, found = [], iter(zip(vals, dims))
  for z, dst in zip(zeros, dests, strict=True):
    if z is not None:
      shape = z.aval.shape
      outs.append(z if dst is None else ad.Zero(
          z.aval.update(shape=shape[:dst] + (axis_data.size,) + shape[dst:])))
      continue
    v, src = next(found)
    if sum_unmapped and dst is None and src is not None:
      v, src = batching.sum_batch(batching.moveaxis(v, src, 0)), None
    outs.append(batching.matchaxis(axis_data, src, dst, v))
  return outs


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
    return jaxpr_pp.pp_eqn_with_params(eqn, context, {"name": name, **dict(sorted(params.items()))})
  return pp_eqn


def _dce_call_jaxpr(call_jaxpr: core.ClosedJaxpr, used_outputs: tuple) -> core.ClosedJaxpr:
  """`call_jaxpr` returning only the `used_outputs`, every input kept (the custom rule may
  read inputs the pruned function does not)."""
  return pe.dce_closed_jaxpr(call_jaxpr, used_outputs, instantiate=True)[0]


def _dce_custom_call(used_outputs, eqn, rules):
  """The DCE rule of a custom call: ``(used_inputs, eqn)`` with `call_jaxpr` pruned to the
  used outputs and the params `rules` (name -> wrapped rule) replaced; every operand kept.
  The call goes when no output is used and it has no side effects."""
  call_jaxpr = eqn.params["call_jaxpr"]
  if not any(used_outputs) and not core.has_side_effects(call_jaxpr.jaxpr):
    return [False] * len(eqn.invars), None
  used = tuple(used_outputs)
  new_eqn = eqn.replace(outvars=[v for v, u in zip(eqn.outvars, used) if u],
                        params=dict(eqn.params, call_jaxpr=_dce_call_jaxpr(call_jaxpr, used),
                                    **rules))
  return [True] * len(eqn.invars), new_eqn


# ----------------------------------------------------------------------------
# custom_jvp


custom_jvp_call_p = core.Primitive("custom_jvp_call", multiple_results=True)
custom_jvp_call_p.def_impl(_eval_call)
custom_jvp_call_p.def_abstract_eval(lambda *avals, call_jaxpr, **_: call_jaxpr.out_avals)
custom_jvp_call_p.def_lowering(_call_lowering)
custom_jvp_call_p.pp_eqn = _pp_custom_call({"jvp_jaxpr_fun": "jvp"})


def _custom_jvp_bind_params(params):
  """JAX's form of the params to re-bind an equation with (`Primitive.get_bind_params`):
  the function and its JVP rule as ``subfuns``, linear_util.WrappedFuns over all the
  operands (constants included), instead of the jaxpr and the rule."""
  new = dict(params)
  call_jaxpr, num_consts = new.pop("call_jaxpr"), new.pop("num_consts")
  jvp = new.pop("jvp_jaxpr_fun")

  def jvp_of_all_operands(*xs):
    n = len(xs) // 2
    return jvp(*xs[num_consts:n], *xs[n + num_consts:])
  _copy_names(jvp, jvp_of_all_operands)
  fun = lu.wrap_init(lambda *args: core.eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args))
  new["subfuns"] = (fun, lu.wrap_init(jvp_of_all_operands))
  return new


def _custom_jvp_bind(*args, subfuns=None, **params):
  """`bind`, also in JAX's form with ``subfuns=(fun, jvp)`` (see `_custom_jvp_bind_params`)."""
  if subfuns is None:
    return core.Primitive.bind(custom_jvp_call_p, *args, **params)
  fun, jvp = subfuns
  call_jaxpr = pe.trace_to_jaxpr(fun.call_wrapped, [core.get_aval(a) for a in args])

  def jvp_flat(*primals_and_tangents):
    return list(jvp.call_wrapped(*primals_and_tangents))
  _copy_names(getattr(jvp, "f", jvp), jvp_flat)
  return core.Primitive.bind(custom_jvp_call_p, *args, call_jaxpr=call_jaxpr,
                             jvp_jaxpr_fun=jvp_flat, num_consts=0, **params)


custom_jvp_call_p.get_bind_params = _custom_jvp_bind_params
custom_jvp_call_p.bind = _custom_jvp_bind


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
  arg_tangents = tangents[num_consts:]
  if not symbolic_zeros:
    arg_tangents = [ad.instantiate_zeros(t) for t in arg_tangents]
  outs = jvp_jaxpr_fun(*args, *arg_tangents)
  n = len(call_jaxpr.out_avals)
  return outs[:n], outs[n:]


@custom_jvp_call_p.def_partial_eval
def _custom_jvp_call_partial_eval(trace, args, unknowns, *, call_jaxpr, **_):
  # As in JAX: partial evaluation only builds linear functions, which no longer need the
  # custom rule; the function is inlined, so its known part stays known.
  with core.set_current_trace(trace):
    return core.eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)


@custom_jvp_call_p.def_batch
def _custom_jvp_call_batch(axis_data, args, dims, *, call_jaxpr, jvp_jaxpr_fun, num_consts,
                           symbolic_zeros, trace_tag=None):
  args, batched_call, out_dims = _batch_call(axis_data, args, dims, call_jaxpr)
  arg_dims = [None if d is None else 0 for d in dims[num_consts:]]
  binding = [True]

  def widen(srcs, dests):
    # While this rule binds (the rule runs now, under a JVP trace), an output the function
    # leaves unbatched but the JVP rule batches (in its primal or tangent) becomes batched,
    # as JAX takes the output batch dims from the rule that ran.
    if binding:
      n = len(out_dims)
      for i in range(n):
        if out_dims[i] is None and (srcs[i] is not None or srcs[n + i] is not None):
          out_dims[i] = 0
    return out_dims * 2

  def batched_jvp(*primals_and_tangents):
    # A tangent has its primal's shape, so it is batched where its primal is.
    return _batch_rule(jvp_jaxpr_fun, axis_data, primals_and_tangents, arg_dims * 2,
                       out_dims * 2, tag=trace_tag, keep_zeros=symbolic_zeros, widen=widen)

  _copy_names(jvp_jaxpr_fun, batched_jvp)
  outs = custom_jvp_call_p.bind(*args, call_jaxpr=batched_call, jvp_jaxpr_fun=batched_jvp,
                                num_consts=num_consts, symbolic_zeros=symbolic_zeros)
  binding.clear()
  return outs, out_dims


def _custom_jvp_call_dce(used_outputs, eqn):
  """Prunes the call to its used outputs. The JVP rule is wrapped to return only their
  primals and tangents (a symbolic-zero tangent goes with its output)."""
  jvp = eqn.params["jvp_jaxpr_fun"]
  used = tuple(used_outputs) * 2  # primals, then tangents

  def dced_jvp(*primals_and_tangents):
    return [o for o, u in zip(jvp(*primals_and_tangents), used, strict=True) if u]
  _copy_names(jvp, dced_jvp)
  return _dce_custom_call(used_outputs, eqn, {"jvp_jaxpr_fun": dced_jvp})


custom_jvp_call_p.dce_rule = _custom_jvp_call_dce
batching.tagged_batchers.add(custom_jvp_call_p)


def _check_jvp_rule_output(p_leaves, t_leaves):
  """JAX's TypeError when a custom JVP rule's tangents do not have its primals' tangent types."""
  primal_avals = [core.get_aval(p).strip_weak_type() for p in p_leaves]
  expected = [a.to_tangent_aval() for a in primal_avals]
  got = [(t.aval if type(t) is SymbolicZero else core.get_aval(t)).strip_weak_type()
         for t in t_leaves]
  if all(e.shape == g.shape and e.dtype == g.dtype for e, g in zip(expected, got)):
    return
  if len(expected) == 1:
    raise TypeError("Custom JVP rule must produce primal and tangent outputs with corresponding "
                    f"shapes and dtypes. Expected {expected[0].str_short()} (tangent type of "
                    f"{primal_avals[0].str_short()}) but got {got[0].str_short()}.")
  disagreements = "\n".join(
      f"  primal {p.str_short()} with tangent {g.str_short()}, expecting tangent {e}"
      for p, e, g in zip(primal_avals, expected, got) if e != g)
  raise TypeError("Custom JVP rule must produce primal and tangent outputs with corresponding "
                  f"shapes and dtypes, but got:\n{disagreements}")


class custom_jvp:
  """A function with a custom JVP (forward-mode derivative) rule.

  Use as a decorator, then register the rule with `defjvp` (a function of
  ``(primals, tangents)`` returning ``(primal_out, tangent_out)``) or
  `defjvps` (one function per argument). Arguments in `nondiff_argnums` are
  passed to the rule first and are not differentiated.

  Mirrors `jax.custom_jvp`.
  """

  def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
    functools.update_wrapper(self, fun)
    self.fun = fun
    self.nondiff_argnums = _nondiff_argnums(fun, nondiff_argnums, nondiff_argnames)
    self.jvp = None
    self.symbolic_zeros = False

  def __get__(self, obj, objtype=None):
    return self if obj is None else functools.partial(self, obj)

  def __getattr__(self, name):
    # As JAX: a wrapped custom function's ``def*`` methods pass through
    # (``custom_vmap``'s ``def_vmap`` on a custom_vjp of a custom_vmap function).
    if name.startswith("def"):
      return getattr(self.fun, name)
    raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

  def defjvp(self, jvp, symbolic_zeros: bool = False):
    """Registers `jvp(primals, tangents) -> (primal_out, tangent_out)` (or with nondiff args first).

    With `symbolic_zeros`, a tangent that is known to be zero reaches the rule
    as a `SymbolicZero`, and the rule may return one. Returns `jvp`.
    """
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
    trace = core.trace_ctx.trace
    if trace is core.eval_trace:
      return _call_eagerly(self, args, kwargs)
    nondiff, diff, leaves, in_tree = _split_call(self, args, kwargs)
    if (owner := _trace_to_pass_to(trace, leaves)) is not None:
      with core.set_current_trace(owner):
        return self(*_merge(self.nondiff_argnums, nondiff, diff))
    if type(trace) is ad.JVPTrace:
      return self._call_under_jvp(trace, nondiff, leaves, in_tree)
    jaxpr, consts, out_tree = _trace_primal(self, nondiff, leaves, in_tree)
    jvp_flat = _jvp_rule_flat(self, nondiff, in_tree, len(leaves),
                              (out_tree, jaxpr.out_avals))
    outs = custom_jvp_call_p.bind(*consts, *leaves, call_jaxpr=jaxpr, jvp_jaxpr_fun=jvp_flat,
                                  num_consts=len(consts), symbolic_zeros=self.symbolic_zeros)
    return tree_util.tree_unflatten(out_tree, outs)

  def _call_under_jvp(self, trace, nondiff, leaves, in_tree):
    """The call under a JVP trace, as JAX's ``JVPTrace.process_custom_jvp_call``: the rule
    runs on the primals and tangents directly (the primal function is not traced)."""
    primals, tangents = _jvp_pairs(trace, leaves)
    if not self.symbolic_zeros:
      tangents = [ad.instantiate_zeros(t) for t in tangents]
    jvp_flat = _jvp_rule_flat(self, nondiff, in_tree, len(leaves), None)
    with core.set_current_trace(trace.parent_trace):
      outs = jvp_flat(*primals, *tangents)
    n = len(outs) // 2
    return tree_util.tree_unflatten(jvp_flat.out_tree,
                                    [trace.maybe_box(p, t) for p, t in zip(outs[:n], outs[n:])])


def _jvp_rule_flat(custom, nondiff, in_tree, n, out_type):
  """The user's JVP rule of `custom` as a flat function: (primals..., tangents...) ->
  (primals_out..., tangents_out...), with JAX's checks of what the rule returns.

  `out_type` is ``(out_tree, out_avals)`` of the traced primal function, or None when it
  was not traced (then only the rule's own consistency is checked). The rule's output
  structure is left in the function's ``out_tree`` attribute.
  """
  name, user_jvp = fun_name(custom.fun), custom.jvp
  rule = f"Custom JVP rule {fun_name(user_jvp)} for function {name}"

  def jvp_flat(*primals_and_tangents):
    primals = tree_util.tree_unflatten(in_tree, primals_and_tangents[:n])
    tangents = tree_util.tree_unflatten(in_tree, map(_to_symbolic, primals_and_tangents[n:]))
    out = user_jvp(*nondiff, primals, tangents)
    if not (isinstance(out, (list, tuple)) and len(out) == 2):
      raise TypeError(f"{rule} must produce a pair (list or tuple of length two) "
                      f"representing primal and tangent outputs, but got {out}.")
    primal_out, tangent_out = out
    p_leaves, p_tree = tree_util.tree_flatten(primal_out)
    t_leaves, t_tree = tree_util.tree_flatten(tangent_out)
    if p_tree != t_tree:
      raise TypeError(f"{rule} must produce primal and tangent outputs with equal container "
                      f"(pytree) structures, but got {p_tree} and {t_tree} respectively.")
    if out_type is not None:
      _check_primal_out_type(rule, name, p_tree, p_leaves, *out_type)
    _check_jvp_rule_output(p_leaves, t_leaves)
    jvp_flat.out_tree = p_tree
    return [*p_leaves, *map(_from_symbolic, t_leaves)]

  jvp_flat.fun_name, jvp_flat.rule_name = name, fun_name(user_jvp)
  return jvp_flat


def _check_primal_out_type(rule, name, p_tree, p_leaves, out_tree, out_avals):
  """JAX's TypeError when a rule's primal output differs from the primal function's in
  structure or in its leaves' shapes and dtypes."""
  got = [core.get_aval(p) for p in p_leaves]
  shown = lambda tree, avals: str(tree_util.tree_unflatten(
      tree, [a.str_short() for a in avals])).replace("'", "")
  head = (f"{rule} must produce a pair (list or tuple of length two) where the first element "
          "represents the primal output (equal in value to the output of the "
          f"custom_jvp-decorated function {name}, ")
  if p_tree != out_tree:
    raise TypeError(head + "and in particular of the same container/pytree structure), but "
                    "instead the JVP rule output's first element had container/pytree "
                    f"structure:\n    {shown(p_tree, got)}\nwhile the custom_jvp-decorated "
                    f"function {name} had output container/pytree structure:\n"
                    f"    {shown(out_tree, out_avals)}.")
  if config.jax_custom_vjp3:  # custom_vjp3 names the first leaf that differs
    paths = [tree_util.keystr(k) for k, _ in tree_util.tree_flatten_with_path(
        tree_util.tree_unflatten(p_tree, p_leaves))[0]]
    for path, a, b in zip(paths, got, out_avals):
      if a.shape != b.shape or a.dtype != b.dtype:
        raise TypeError(f"at {path}, got fwd output type {a.str_short()} which doesn't "
                        f"match primal output type {b.str_short()}")
  if not all(a.shape == b.shape and a.dtype == b.dtype for a, b in zip(got, out_avals)):
    raise TypeError(head + "and in particular with leaves of the same shape/dtype), but "
                    "instead the JVP rule output's first element had shapes/dtypes of:\n"
                    f"    {shown(p_tree, got)}\nwhile the custom_jvp-decorated function "
                    f"{name} had output shapes/dtypes of:\n    {shown(out_tree, out_avals)}")


# ----------------------------------------------------------------------------
# custom_vjp


custom_vjp_call_p = core.Primitive("custom_vjp_call", multiple_results=True)
custom_vjp_call_p.def_impl(_eval_call)
custom_vjp_call_p.def_abstract_eval(lambda *avals, call_jaxpr, **_: call_jaxpr.out_avals)
custom_vjp_call_p.def_lowering(_call_lowering)
custom_vjp_call_p.pp_eqn = _pp_custom_call({"fwd": "fwd", "bwd": "bwd"})


@custom_vjp_call_p.def_jvp
def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, fwd, bwd, num_consts, symbolic_zeros):
  if any(type(t) is not ad.Zero for t in tangents[:num_consts]):
    raise TypeError(
        "Detected differentiation of a custom_vjp function with respect to a closed-over "
        "value. That isn't supported because the custom VJP rule only specifies how to "
        "differentiate the custom_vjp function with respect to explicit input parameters.")
  args = primals[num_consts:]
  perturbed = tuple(type(t) is not ad.Zero for t in tangents[num_consts:])
  res_and_outs, num_res = fwd(perturbed, *args)
  res, outs = res_and_outs[:num_res], res_and_outs[num_res:]
  out_avals = tuple(core.get_aval(o).to_tangent_aval() for o in outs)
  # As JAX's: only the nonzero input tangents are operands (`in_zeros` marks the others).
  in_zeros = [type(t) is ad.Zero for t in tangents[num_consts:]]
  nz_tangents = [t for t, z in zip(tangents[num_consts:], in_zeros) if not z]
  tangents_out = custom_lin_p.bind(*res, *nz_tangents, num_res=num_res, bwd=bwd,
                                   out_avals=out_avals, symbolic_zeros=symbolic_zeros,
                                   in_zeros=in_zeros)
  return outs, tangents_out


@custom_vjp_call_p.def_partial_eval
def _custom_vjp_call_partial_eval(trace, args, unknowns, **params):
  # As in JAX: the whole call is staged (every output unknown), the custom rules kept.
  return trace.stage(custom_vjp_call_p, args, params)


@custom_vjp_call_p.def_batch
def _custom_vjp_call_batch(axis_data, args, dims, *, call_jaxpr, fwd, bwd, num_consts,
                           symbolic_zeros, trace_tag=None):
  args, batched_call, out_dims = _batch_call(axis_data, args, dims, call_jaxpr)
  arg_dims = [None if d is None else 0 for d in dims[num_consts:]]
  n_out = len(call_jaxpr.out_avals)
  num_res = []

  def batched_fwd(perturbed, *primals):
    def flat_fwd(*xs):
      res_and_outs, n = fwd(perturbed, *xs)
      num_res.append(n)
      return res_and_outs
    # Residuals batched (first); primal outputs where the primal function has them.
    outs = _batch_rule(flat_fwd, axis_data, primals, arg_dims,
                       lambda n: [0] * (n - n_out) + out_dims, tag=trace_tag)
    return outs, num_res[-1]

  def batched_bwd(*res_and_cts):
    n_res = len(res_and_cts) - n_out
    # An argument shared by the batch gets the sum of the members' cotangents.
    return _batch_rule(bwd, axis_data, res_and_cts, [0] * n_res + out_dims, arg_dims,
                       sum_unmapped=True, tag=trace_tag)

  _copy_names(fwd, batched_fwd)
  _copy_names(bwd, batched_bwd)
  outs = custom_vjp_call_p.bind(*args, call_jaxpr=batched_call, fwd=batched_fwd,
                                bwd=batched_bwd, num_consts=num_consts,
                                symbolic_zeros=symbolic_zeros)
  return outs, out_dims


def _custom_vjp_call_dce(used_outputs, eqn):
  """Prunes the call to its used outputs. fwd is wrapped to return the residuals and only
  the used outputs; bwd to take cotangents of those alone, a zero (symbolic with
  ``symbolic_zeros``) standing in for each pruned output's."""
  fwd, bwd, symbolic_zeros = eqn.params["fwd"], eqn.params["bwd"], eqn.params["symbolic_zeros"]
  used = tuple(used_outputs)
  ct_avals = [a.to_tangent_aval() for a in eqn.params["call_jaxpr"].out_avals]

  def dced_fwd(perturbed, *primals):
    res_and_outs, num_res = fwd(perturbed, *primals)
    outs = res_and_outs[num_res:]
    return [*res_and_outs[:num_res], *(o for o, u in zip(outs, used, strict=True) if u)], num_res

  def dced_bwd(*res_and_cts):
    n_res = len(res_and_cts) - sum(used)
    cts = iter(res_and_cts[n_res:])
    zero = ad.Zero if symbolic_zeros else ad.zeros_like_aval
    return bwd(*res_and_cts[:n_res], *(next(cts) if u else zero(a)
                                       for u, a in zip(used, ct_avals)))
  _copy_names(fwd, dced_fwd)
  _copy_names(bwd, dced_bwd)
  return _dce_custom_call(used_outputs, eqn, {"fwd": dced_fwd, "bwd": dced_bwd})


custom_vjp_call_p.dce_rule = _custom_vjp_call_dce
batching.tagged_batchers.add(custom_vjp_call_p)


_NO_FORWARD_MODE = "can't apply forward-mode autodiff (jvp) to a custom_vjp function."


def _custom_lin_impl(*args, **params):
  raise TypeError(_NO_FORWARD_MODE)


def _custom_lin_lowering(ctx, *args, **params):
  raise TypeError(_NO_FORWARD_MODE)


def _custom_lin_batch(axis_data, args, dims, **params):
  # Batched only when evaluated forward under vmap (jacfwd, vmap of jvp): an error, as in JAX.
  raise TypeError(_NO_FORWARD_MODE)


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals, symbolic_zeros, in_zeros):
  res = args[:num_res]
  if not symbolic_zeros:
    cts = [ad.instantiate_zeros(c) for c in cts]
  cts_in = bwd(*res, *cts)
  return [None] * num_res + [c for c, z in zip(cts_in, in_zeros, strict=True) if not z]


def _pp_custom_lin(eqn, context):
  """custom_lin printed as JAX's: the bwd rule by name, out_avals not shown."""
  params = dict(eqn.params)
  del params["out_avals"]
  params["bwd"] = getattr(params["bwd"], "rule_name", "unknown")
  return jaxpr_pp.pp_eqn_with_params(eqn, context, dict(sorted(params.items())))


custom_lin_p = core.Primitive("custom_lin", multiple_results=True)
custom_lin_p.def_impl(_custom_lin_impl)
custom_lin_p.def_abstract_eval(lambda *avals, out_avals, **_: list(out_avals))
custom_lin_p.def_lowering(_custom_lin_lowering)
custom_lin_p.def_transpose(_custom_lin_transpose)
custom_lin_p.def_batch(_custom_lin_batch)
custom_lin_p.pp_eqn = _pp_custom_lin


def _mismatch_extra(a, b) -> str:
  """JAX's tail of a type-mismatch message: ", so the dtypes do not match" etc."""
  mismatches = [what for what, differ in (("the dtypes do not match", a.dtype != b.dtype),
                                          ("the shapes do not match", a.shape != b.shape))
                if differ]
  if not mismatches:
    return ""
  return ", so " + (mismatches[0] if len(mismatches) == 1
                    else ", ".join(mismatches[:-1]) + ", and " + mismatches[-1])


def _bwd_output_leaves(cts_in, diff, in_tree, primal_avals):
  """The flat input cotangents from a bwd rule's output: Zero for None and SymbolicZero.

  `cts_in` must be a tuple (a list is accepted) with one entry per
  differentiated argument, each of the argument's structure or None.
  """
  if isinstance(cts_in, list) and len(cts_in) == len(diff):
    cts_in = tuple(cts_in)
  zero = object()  # marks the leaves of a None subtree
  dummy = tree_util.tree_unflatten(in_tree, [object()] * in_tree.num_leaves)
  flat = []

  def collect(ct, d):
    flat.extend([zero if ct is None else ct] * len(tree_util.tree_leaves(d)))
    return ct  # tree_map rebuilds cts_in: a node type may not take None children

  try:
    if not isinstance(cts_in, tuple):
      raise ValueError
    tree_util.tree_map(collect, cts_in, dummy, is_leaf=lambda x: x is None)
  except ValueError:
    raise TypeError(
        "Custom VJP bwd rule must produce an output with the same container (pytree) "
        "structure as the args tuple of the primal function, and in particular must "
        "produce a tuple of length equal to the number of arguments to the primal "
        f"function, but got bwd output structure {tree_util.tree_structure(cts_in)} for "
        f"primal input structure {in_tree}.") from None
  paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(dummy)[0]]
  results = []
  for path, a, ct in zip(paths, primal_avals, flat, strict=True):
    t_aval = a.to_tangent_aval()
    if ct is zero or t_aval.dtype == dtypes.float0:
      results.append(ad.Zero(t_aval))
    elif type(ct) is SymbolicZero:
      if ct.aval.shape != t_aval.shape or ct.aval.dtype != t_aval.dtype:
        raise ValueError(
            "Custom VJP bwd rule produced a SymbolicZero with a shape/dtype that does not "
            "match the corresponding input tangent shape/dtype: at output"
            f"{path} the SymbolicZero had shape/dtype {ct.aval.str_short()} while the "
            f"corresponding input had shape/dtype {a.str_short()}. Consider just returning "
            "a None here instead of a SymbolicZero object.")
      results.append(ad.Zero(ct.aval))
    else:
      got = core.get_aval(ct)
      # As JAX: a dtype other than the input's is let through for inexact inputs, and
      # nothing is checked under jax_disable_bwd_checks.
      if not config.jax_disable_bwd_checks and (
          got.shape != t_aval.shape or (got.dtype != t_aval.dtype
                                        and not dtypes.issubdtype(a.dtype, np.inexact))):
        raise ValueError(
            "Custom VJP bwd rule must produce an output with the same type as the args "
            f"tuple of the primal function, but at output{path} the bwd rule produced an "
            f"output of type {got.str_short()} corresponding to an input of type "
            f"{a.str_short()}{_mismatch_extra(a, got)}")
      results.append(ct)
  return results


class custom_vjp:
  """A function with a custom VJP (reverse-mode derivative) rule.

  Register ``fwd(*args) -> (out, residuals)`` and ``bwd(residuals, ct) ->
  tuple of input cotangents`` with `defvjp`. Arguments in `nondiff_argnums`
  are passed to bwd first. Forward mode (`jvp`) of such a function raises.

  Mirrors `jax.custom_vjp`.
  """

  def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
    functools.update_wrapper(self, fun)
    self.fun = fun
    self.nondiff_argnums = _nondiff_argnums(fun, nondiff_argnums, nondiff_argnames)
    self.fwd = None
    self.bwd = None
    self.symbolic_zeros = False
    self.optimize_remat = False

  def __get__(self, obj, objtype=None):
    return self if obj is None else functools.partial(self, obj)

  def __getattr__(self, name):
    # As JAX: a wrapped custom function's ``def*`` methods pass through
    # (``custom_vmap``'s ``def_vmap`` on a custom_vjp of a custom_vmap function).
    if name.startswith("def"):
      return getattr(self.fun, name)
    raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

  def defvjp(self, fwd, bwd, symbolic_zeros: bool = False, optimize_remat: bool = False):
    """Registers the forward (primal output and residuals) and backward rules.

    With `symbolic_zeros`, fwd receives each primal leaf as a `CustomVJPPrimal`
    (value, perturbed), and bwd receives a `SymbolicZero` for each output
    cotangent known to be zero; bwd may return None or a `SymbolicZero` for a
    zero input cotangent. With `optimize_remat`, fwd runs as one equation that
    dead-code elimination turns into the primal function where none of its
    residuals is used (`custom_remat_opt.optimize_remat_of_custom_vjp_fwd`).

    Raises:
      NotImplementedError: both `symbolic_zeros` and `optimize_remat`, as in JAX.
    """
    self.fwd = fwd
    self.bwd = bwd
    self.symbolic_zeros = symbolic_zeros
    self.optimize_remat = optimize_remat
    if symbolic_zeros and optimize_remat:
      raise NotImplementedError("remat optimization for custom_vjp does not support symbolic zeros")

  def __call__(self, *args, **kwargs):
    name = fun_name(self.fun)
    if self.fwd is None or self.bwd is None:
      raise AttributeError(f"No VJP defined for custom_vjp function {name} using defvjp.")
    trace = core.trace_ctx.trace
    if trace is core.eval_trace:
      return _call_eagerly(self, args, kwargs)
    nondiff, diff, leaves, in_tree = _split_call(self, args, kwargs)
    if (owner := _trace_to_pass_to(trace, leaves)) is not None:
      with core.set_current_trace(owner):
        return self(*_merge(self.nondiff_argnums, nondiff, diff))
    traced = None
    if config.jax_custom_vjp3:
      # JAX's custom_vjp3 traces the function first, whatever the trace, and refuses one
      # closing over a tracer; fwd's output is checked against the traced type.
      traced = _trace_primal(self, nondiff, leaves, in_tree)
      _check_no_closed_over_tracers(self.fun, traced[1])
    if type(trace) is ad.JVPTrace:
      # As JAX's ``JVPTrace.process_custom_vjp_call``: fwd runs on the primals directly (the
      # primal function is not traced), its output structure is the function's.
      fwd_flat, bwd_flat = _vjp_rules_flat(
          self, nondiff, diff, leaves, in_tree,
          None if traced is None else (traced[2], traced[0].out_avals))
      primals, tangents = _jvp_pairs(trace, leaves)
      with core.set_current_trace(trace.parent_trace):
        outs, tangents_out = _custom_vjp_call_jvp(
            primals, tangents, call_jaxpr=None, fwd=fwd_flat, bwd=bwd_flat, num_consts=0,
            symbolic_zeros=self.symbolic_zeros)
      return tree_util.tree_unflatten(fwd_flat.out_tree, [
          trace.maybe_box(p, t) for p, t in zip(outs, tangents_out, strict=True)])
    jaxpr, consts, out_tree = traced or _trace_primal(self, nondiff, leaves, in_tree)
    fwd_flat, bwd_flat = _vjp_rules_flat(self, nondiff, diff, leaves, in_tree,
                                         (out_tree, jaxpr.out_avals))
    outs = custom_vjp_call_p.bind(*consts, *leaves, call_jaxpr=jaxpr, fwd=fwd_flat, bwd=bwd_flat,
                                  num_consts=len(consts), symbolic_zeros=self.symbolic_zeros)
    return tree_util.tree_unflatten(out_tree, outs)


def _vjp_rules_flat(custom, nondiff, diff, leaves, in_tree, out_type):
  """The user's fwd and bwd rules of `custom` as flat functions, with JAX's checks:
  ``fwd(perturbed, *primals) -> ([*residuals, *outputs], number of residuals)`` and
  ``bwd(*residuals, *cotangents) -> input cotangents`` (`ad.Zero` for zero ones).

  `out_type` is ``(out_tree, out_avals)`` of the traced primal function, or None when it
  was not traced: then fwd's output structure (left in ``fwd.out_tree``) stands for it.
  """
  nums = custom.nondiff_argnums
  name, user_fwd, user_bwd = fun_name(custom.fun), custom.fwd, custom.bwd
  symbolic_zeros = custom.symbolic_zeros
  primal_avals = [core.get_aval(x) for x in leaves]
  rule = f"Custom VJP fwd rule {fun_name(user_fwd)} for function {name}"
  if custom.optimize_remat:
    from xjax._src import custom_remat_opt  # it builds on this module's helpers
    user_fwd = custom_remat_opt.optimize_remat_of_custom_vjp_fwd(custom.fun, None, user_fwd,
                                                                 None, nums)
  head = (f"{rule} must produce a pair (list or tuple of length two) where the first element "
          "represents the primal output (equal to the output of the custom_vjp-decorated "
          f"function {name}) and the second element represents residuals (i.e. values stored "
          "from the forward pass for use on the backward pass), but ")
  res_trees = []

  def fwd_flat(perturbed, *primals):
    # JAX hands fwd its Python-scalar primals canonicalized, as typed scalars.
    primals = [literals.typed_scalar(x) for x in primals]
    if symbolic_zeros:
      primals = [CustomVJPPrimal(x, p) for x, p in zip(primals, perturbed)]
    out = user_fwd(*_merge(nums, nondiff, tree_util.tree_unflatten(in_tree, primals)))
    if not (isinstance(out, (list, tuple)) and len(out) == 2):
      raise TypeError(
          f"{rule} must produce a pair (list or tuple of length two) where the first element "
          "represents the primal output (equal to those of the custom_vjp-decorated function "
          f"{name}) and the second element represents residuals (i.e. values stored from the "
          "forward pass for use on the backward pass), but instead of a pair the fwd rule "
          f"{fun_name(user_fwd)} produced {out}.")
    primal_out, res = out
    p_leaves, p_tree = tree_util.tree_flatten(primal_out)
    if out_type is not None:
      _check_fwd_out_type(head, name, p_tree, p_leaves, *out_type)
    r_leaves, r_tree = tree_util.tree_flatten(res)
    res_trees.append(r_tree)
    fwd_flat.out_tree = p_tree
    return [*r_leaves, *p_leaves], len(r_leaves)

  def bwd_flat(*res_and_cts):
    r_tree = res_trees[-1]
    n_res = r_tree.num_leaves
    res = tree_util.tree_unflatten(r_tree, res_and_cts[:n_res])
    out_tree = fwd_flat.out_tree if out_type is None else out_type[0]
    cts = tree_util.tree_unflatten(out_tree, map(_to_symbolic, res_and_cts[n_res:]))
    cts_in = user_bwd(*nondiff, res, cts)
    return _bwd_output_leaves(cts_in, diff, in_tree, primal_avals)

  fwd_flat.fun_name, fwd_flat.rule_name = name, fun_name(user_fwd)
  bwd_flat.rule_name = fun_name(user_bwd)
  return fwd_flat, bwd_flat


def _check_no_closed_over_tracers(fun, consts) -> None:
  """custom_vjp3's UnexpectedTracerError for a function closing over a tracer (one of the
  constants its trace captured)."""
  t = next((c for c in consts if isinstance(c, core.Tracer)), None)
  if t is not None:
    raise UnexpectedTracerError(
        f"custom_vjp-decorated function {fun} closed over a {type(t).__name__} of type "
        f"{t.aval.str_short()}, but custom_vjp functions can't close over Tracers. Rewrite "
        f"{fun} to take it as an explicit input.")


def _check_fwd_out_type(head, name, p_tree, p_leaves, out_tree, out_avals):
  """JAX's TypeError when fwd's primal output differs from the primal function's in
  structure or in its leaves' shapes and dtypes."""
  got = [core.get_aval(p) for p in p_leaves]
  shown = lambda tree, avals: str(tree_util.tree_unflatten(
      tree, [a.str_short() for a in avals])).replace("'", "")
  if p_tree != out_tree:
    raise TypeError(head + "instead the fwd rule output's first element had container/pytree "
                    f"structure:\n    {shown(p_tree, got)}\nwhile the custom_vjp-decorated "
                    f"function {name} had output container/pytree structure:\n"
                    f"    {shown(out_tree, out_avals)}.")
  if config.jax_custom_vjp3:  # custom_vjp3 names the first leaf that differs
    paths = [tree_util.keystr(k) for k, _ in tree_util.tree_flatten_with_path(
        tree_util.tree_unflatten(p_tree, p_leaves))[0]]
    for path, a, b in zip(paths, got, out_avals):
      if a.shape != b.shape or a.dtype != b.dtype:
        raise TypeError(f"at {path}, got fwd output type {a.str_short()} which doesn't "
                        f"match primal output type {b.str_short()}")
  if not all(a.shape == b.shape and a.dtype == b.dtype for a, b in zip(got, out_avals)):
    raise TypeError(head + "instead the fwd rule output's first element had shapes/dtypes "
                    f"of:\n    {shown(p_tree, got)}\nwhile the custom_vjp-decorated function "
                    f"{name} had output shapes/dtypes of:\n    {shown(out_tree, out_avals)}")
