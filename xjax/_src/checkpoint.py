"""checkpoint (remat): recompute a function's intermediate values in the backward pass.

`checkpoint(f)` binds the `remat2` primitive (JAX's name) with f's jaxpr.
Under linearization its partial-eval rule asks the *policy*, equation by
equation, whether a known (primal) value may be saved as a residual. A value
the policy does not save is recomputed: its equation is also staged into the
linear part, which reruns it from saved values. With the default policy
(nothing saveable) the residuals are just the inputs. Transposing the staged
equation binds `remat2` again, so the recomputation stays behind an
optimization barrier (`prevent_cse`) in compiled code.

Also here: the `name` primitive of `checkpoint_name`, the policies of
`checkpoint_policies`, and `print_saved_residuals`.
"""
from __future__ import annotations

import dataclasses
import functools
import types
from collections.abc import Sequence
from typing import NamedTuple

from xjax._src import core
from xjax._src import errors
from xjax._src import traceback_util
from xjax._src import tree_util
from xjax._src.api_util import debug_info, flatten_fun
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import lowering
from xjax._src.interpreters import partial_eval as pe
from xjax._src.jit_primitive import jit_p

# ----------------------------------------------------------------------------
# What a policy may answer


class RecomputeType:
  """The policy's answer "recompute this value" (mirrors `jax.ad_checkpoint.Recompute`)."""


class SaveableType:
  """The policy's answer "save this value" (mirrors `jax.ad_checkpoint.Saveable`)."""


Recompute = RecomputeType()
Saveable = SaveableType()


class Offloadable(NamedTuple):
  """The policy's answer "save this value in memory `dst`" (mirrors
  `jax.ad_checkpoint.Offloadable`). xjax has one memory per device: it is saved."""
  src: str
  dst: str


def ensure_enum(case):
  """A policy's answer as `Saveable`, `Recompute` or an `Offloadable`; TypeError otherwise."""
  if isinstance(case, bool):
    return Saveable if case else Recompute
  if not isinstance(case, (RecomputeType, SaveableType, Offloadable)):
    msg = ("Value returned by a remat policy should be a bool or"
           " `ad_checkpoint.Recompute`, `ad_checkpoint.Saveable` or"
           " `ad_checkpoint.Offloadable(...)`."
           f" Got {case} of type {type(case)}.")
    if case is Offloadable:
      msg += ("Did you return `Offloadable` instead of an instantiated"
              " `Offloadable(...)`?")
    raise TypeError(msg)
  return case


# ----------------------------------------------------------------------------
# Policies: called as policy(primitive, *in_avals, **params)


def everything_saveable(*_, **__) -> bool:
  """Policy: save every intermediate value (as if there were no checkpoint)."""
  return True


def nothing_saveable(*_, **__) -> bool:
  """Policy: save no intermediate value; recompute them all (the default)."""
  return False


@dataclasses.dataclass(frozen=True)
class DotsSaveable:
  """Policy: save the outputs of matrix products (`dot_general`, convolutions); with
  `only_if_no_batch_dims`, only those of `dot_general` without batch dimensions."""
  only_if_no_batch_dims: bool

  def __call__(self, prim, *avals, **params):
    if self.only_if_no_batch_dims:
      if prim.name == "dot_general":
        (_, _), (lhs_b, rhs_b) = params["dimension_numbers"]
        return not lhs_b and not rhs_b
      if prim.name == "scaled_matmul_wrapper":
        return avals[0].shape[0] == 1
      return False
    return prim.name in ("dot_general", "conv_general_dilated", "scaled_matmul_wrapper")


checkpoint_dots = dots_saveable = DotsSaveable(False)
dots_with_no_batch_dims_saveable = DotsSaveable(True)


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
  """Policy: offload (save) the outputs of `dot_general` without batch dimensions."""
  def policy(prim, *_, **params):
    if prim.name == "dot_general":
      (_, _), (lhs_b, rhs_b) = params["dimension_numbers"]
      if not lhs_b and not rhs_b:
        return Offloadable(src=offload_src, dst=offload_dst)
    return Recompute
  return policy


def save_anything_except_these_names(*names_not_to_save):
  """Policy: save every value. (JAX 0.10.2 ignores the names; so does xjax.)"""
  return lambda *_, **__: True


@dataclasses.dataclass(frozen=True)
class SaveOnlyTheseNames:
  """Policy: save only the values named (`checkpoint_name`) with one of `saveable_names`."""
  saveable_names: frozenset

  def __call__(self, prim, *_, **params):
    return prim is name_p and params["name"] in self.saveable_names


@dataclasses.dataclass(frozen=True)
class SaveAnyNamesButThese:
  """Policy: save only named values, except those named with one of `names`."""
  names: frozenset

  def __call__(self, prim, *_, **params):
    return prim is name_p and params["name"] not in self.names


def save_only_these_names(*names_which_can_be_saved):
  """Policy: save only the named values among the names given."""
  return SaveOnlyTheseNames(frozenset(names_which_can_be_saved))


def save_any_names_but_these(*names_not_to_save):
  """Policy: save only named values, excluding the names given."""
  return SaveAnyNamesButThese(frozenset(names_not_to_save))


def save_and_offload_only_these_names(*, names_which_can_be_saved, names_which_can_be_offloaded,
                                      offload_src, offload_dst):
  """Policy: save the first names, offload the second ones, recompute the rest.

  Raises:
    ValueError: the two sets of names intersect.
  """
  saved, offloaded = set(names_which_can_be_saved), set(names_which_can_be_offloaded)
  both = saved & offloaded
  if both:
    raise ValueError(
        "The names should be exclusive and should not intersect in"
        " `names_which_can_be_saved` and `names_which_can_be_offloaded`. Got"
        f" names_which_can_be_saved={saved},"
        f" names_which_can_be_offloaded={offloaded} and the"
        f" intersection={both}")

  def policy(prim, *_, **params):
    if prim is name_p and params["name"] in saved:
      return Saveable
    if prim is name_p and params["name"] in offloaded:
      return Offloadable(src=offload_src, dst=offload_dst)
    return Recompute
  return policy


def save_from_both_policies(policy_1, policy_2):
  """Policy: a value is saved if either boolean policy saves it.

  Raises (when called):
    ValueError: a policy answered something other than a bool.
  """
  def policy(prim, *args, **params):
    out1 = policy_1(prim, *args, **params)
    out2 = policy_2(prim, *args, **params)
    if not (isinstance(out1, bool) and isinstance(out2, bool)):
      raise ValueError(
          "The return value of the policies should be a boolean. Got:"
          f" {out1} and {out2}. Please write a custom policy function directly,"
          " rather than using this helper function.")
    return out1 or out2
  return policy


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies,
    save_and_offload_only_these_names=save_and_offload_only_these_names)


# ----------------------------------------------------------------------------
# The `name` primitive: the identity, with a name the policies can see

name_p = core.Primitive("name")
name_p.def_impl(lambda x, *, name: x)
name_p.def_abstract_eval(lambda x, *, name: x)
name_p.def_jvp(lambda primals, tangents, *, name: (name_p.bind(primals[0], name=name),
                                                   tangents[0]))  # the tangent is not named
name_p.def_batch(lambda axis_data, args, dims, *, name: (name_p.bind(args[0], name=name),
                                                         dims[0]))
name_p.def_lowering(lambda ctx, x, *, name: x)


def checkpoint_name(x, name):
  """`x` (an array or pytree), unchanged, with `name` attached for checkpoint policies.

  Args:
    x: an array or pytree of arrays.
    name: a string; policies such as `save_only_these_names` select by it.

  Returns:
    `x`.

  Mirrors `jax.ad_checkpoint.checkpoint_name`.
  """
  return tree_util.tree_map(functools.partial(name_p.bind, name=name), x)


# ----------------------------------------------------------------------------
# The primitive


def _checkpoint_impl(*args, jaxpr, prevent_cse, differentiated, policy):
  # Op by op, as JAX evaluates it: each equation dispatches (and runs its primitive's impl).
  return core.eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


checkpoint_p = core.Primitive("remat2", multiple_results=True)
checkpoint_p.def_impl(_checkpoint_impl)
checkpoint_p.def_abstract_eval(lambda *avals, jaxpr, **_: jaxpr.out_avals)


def _jvp_jaxpr(closed: core.ClosedJaxpr, nonzeros) -> core.ClosedJaxpr:
  """`ad.jvp_jaxpr`, keeping each equation's source info (`print_saved_residuals` shows it)."""
  avals = closed.in_avals

  def fun(*args):
    outer = core.current_trace()
    primals, tangent_args = args[:len(avals)], iter(args[len(avals):])
    tangents = [next(tangent_args) if nz else ad.Zero(a.to_tangent_aval())
                for a, nz in zip(avals, nonzeros)]
    body = lambda *xs: _eval_jaxpr_keeping_sources(closed.jaxpr, closed.consts, xs, (outer,))
    outs_p, outs_t = ad.jvp_flat(body, primals, tangents)
    return [*outs_p, *map(ad.instantiate_zeros, outs_t)]

  tangent_avals = [a.to_tangent_aval() for a, nz in zip(avals, nonzeros) if nz]
  return pe.trace_to_jaxpr(fun, [*avals, *tangent_avals])


@checkpoint_p.def_jvp
def _checkpoint_jvp(primals, tangents, *, jaxpr, prevent_cse, differentiated, policy):
  nonzeros = tuple(type(t) is not ad.Zero for t in tangents)
  jvp_jaxpr = _jvp_jaxpr(jaxpr, nonzeros)
  nz_tangents = [t for t, nz in zip(tangents, nonzeros) if nz]
  if isinstance(prevent_cse, tuple):
    prevent_cse += (True,) * len(nz_tangents)
  outs = checkpoint_p.bind(*primals, *nz_tangents, jaxpr=jvp_jaxpr, prevent_cse=prevent_cse,
                           differentiated=differentiated, policy=policy)
  n = len(jaxpr.out_avals)
  return outs[:n], outs[n:]


def _is_effectful(primitive, params) -> bool:
  return core.is_live_regardless(core.JaxprEqn([], [], primitive, params))


def _eval_jaxpr_keeping_sources(jaxpr: core.Jaxpr, consts, args, traces=()):
  """`core.eval_jaxpr`, where each equation that `traces` (staging traces) record while
  evaluating `eqn` gets `eqn`'s source info, as JAX's evaluation under the equation's
  user context does: residuals and recomputations keep pointing at the user's line."""
  env: dict = dict(zip(jaxpr.constvars, consts, strict=True))
  env.update(zip(jaxpr.invars, args, strict=True))
  read = lambda v: v.val if type(v) is core.Literal else env[v]
  traces = [t for t in traces if isinstance(t, pe.DynamicJaxprTrace)]
  for eqn in jaxpr.eqns:
    sizes = [len(t.eqns) for t in traces]
    outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
    env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]))
    if eqn.source_info is not None:
      for t, n in zip(traces, sizes):
        t.eqns[n:] = [e.replace(source_info=eqn.source_info) for e in t.eqns[n:]]
  return [read(v) for v in jaxpr.outvars]


class _RematTrace(pe.PartialEvalTrace):
  """Partial evaluation that asks a policy which known values may be saved.

  Known values are computed in the parent trace, as in `PartialEvalTrace`.
  When the policy says to recompute a known equation's outputs, the
  equation is also staged, and a staged equation reading one of those
  outputs reads the recomputed value instead of saving it as a residual.
  """
  __slots__ = ("policy", "recomputed")

  def __init__(self, parent_trace, policy):
    super().__init__(parent_trace)
    self.policy = policy
    self.recomputed: set[int] = set()  # ids of known values with a staged recomputation

  def process_primitive(self, primitive, args, params):
    if primitive is checkpoint_p or primitive.name == "jit":
      # Inline: the policy then decides inside too, as JAX's rules for these do.
      closed = params["jaxpr"]
      return _eval_jaxpr_keeping_sources(closed.jaxpr, closed.consts, args,
                                         (self, self.parent_trace))
    if any(self.is_unknown(x) for x in args):
      if _has_jaxpr(params) and self._recompute(primitive, args, params):
        return self._recompute_whole(primitive, args, params)
      return super().process_primitive(primitive, args, params)
    with core.set_current_trace(self.parent_trace):
      outs = primitive.bind(*args, **params)
    out_list = outs if primitive.multiple_results else [outs]
    if self._recompute(primitive, args, params):
      tracers = [self.to_jaxpr_tracer(x) for x in args]
      staged = pe.DynamicJaxprTrace.process_primitive(self, primitive, tracers, params)
      staged = staged if primitive.multiple_results else [staged]
      for o, s in zip(out_list, staged):
        self.const_tracers[id(o)] = s  # later staged reads of `o` read `s`
        self.const_values.append(o)    # keeps `o` alive, so its id is not reused
        self.recomputed.add(id(o))
    else:
      for o in out_list:  # saved: an alias of a recomputed input (`name`'s output) is saved
        if id(o) in self.recomputed:
          self.recomputed.discard(id(o))
          del self.const_tracers[id(o)]
    return outs


  def _recompute(self, primitive, args, params) -> bool:
    """Whether the policy has `primitive`'s outputs recomputed rather than saved."""
    case = ensure_enum(self.policy(primitive, *map(core.get_aval, args), **params))
    return case is Recompute and (not _is_effectful(primitive, params)
                                  or primitive.name in ("debug_callback", "debug_print"))

  def _recompute_whole(self, primitive, args, params):
    """A higher-order equation (a scan, a cond, a while) with known and unknown inputs whose
    outputs the policy does not save: its own split would save the residuals of its body
    (a scan's stacked intermediates), so the known outputs come from that split but the
    whole equation is staged, recomputing its body from its inputs."""
    n_eqns = len(self.eqns)
    outs = super().process_primitive(primitive, args, params)
    del self.eqns[n_eqns:]  # the split's staged half: replaced by the whole equation
    out_list = outs if primitive.multiple_results else [outs]
    tracers = [self.to_jaxpr_tracer(x) for x in args]
    staged = pe.DynamicJaxprTrace.process_primitive(self, primitive, tracers, params)
    staged = staged if primitive.multiple_results else [staged]
    outs = [s if self.is_unknown(o) else o for o, s in zip(out_list, staged)]
    return outs if primitive.multiple_results else outs[0]


def _has_jaxpr(params) -> bool:
  return any(isinstance(v, (core.ClosedJaxpr, core.Jaxpr)) or (
      isinstance(v, (tuple, list)) and v and isinstance(v[0], (core.ClosedJaxpr, core.Jaxpr)))
      for v in params.values())


def _dce(jaxpr: core.Jaxpr, used_outputs=None):
  """`jaxpr` without the equations its (used) outputs do not need; returns (jaxpr, used
  constvars, used invars)."""
  used_outputs = [True] * len(jaxpr.outvars) if used_outputs is None else used_outputs
  outvars = [v for v, u in zip(jaxpr.outvars, used_outputs) if u]
  live = {v for v in outvars if type(v) is not core.Literal}
  eqns = []
  for eqn in reversed(jaxpr.eqns):
    if core.is_live_regardless(eqn) or any(v in live for v in eqn.outvars):
      eqns.append(eqn)
      live.update(v for v in eqn.invars if type(v) is not core.Literal)
  used_consts = [v in live for v in jaxpr.constvars]
  used_ins = [v in live for v in jaxpr.invars]
  return jaxpr.replace(eqns=eqns[::-1], outvars=outvars), used_consts, used_ins


def policy_partial_eval(jaxpr: core.ClosedJaxpr, unknowns, policy):
  """Splits `jaxpr` as `policy` says: known values it does not save are recomputed.

  Args:
    jaxpr: the jaxpr.
    unknowns: one bool per input: whether its value is unknown.
    policy: a remat policy (see `checkpoint_policies`).

  Returns:
    (known, staged, out_unknowns, res_pos, staged_unknown_ins): `known` maps
    the known inputs to (known outputs..., residuals...) (the residuals: saved
    intermediates, then the known inputs the staged part reads; `res_pos` gives
    each one's position among the known inputs, -1 if none); `staged` maps
    (residuals..., the unknown inputs it reads...) to the unknown outputs;
    `staged_unknown_ins` says which unknown inputs it reads.
  """
  known_avals = [a for a, u in zip(jaxpr.in_avals, unknowns) if not u]
  store = {}

  def known_fun(*known_args):
    parent = core.current_trace()
    remat = _RematTrace(parent, policy)
    known_iter = iter(known_args)
    args = [remat.new_arg(a) if u else next(known_iter)
            for a, u in zip(jaxpr.in_avals, unknowns)]
    with core.set_current_trace(remat):
      try:
        outs = _eval_jaxpr_keeping_sources(jaxpr.jaxpr, jaxpr.consts, args, (remat, parent))
      finally:
        remat.invalidate()
    out_unknowns = [remat.is_unknown(o) for o in outs]
    staged = remat.to_jaxpr([o for o, u in zip(outs, out_unknowns) if u])
    body, used_consts, used_ins = _dce(staged.jaxpr)
    # Residuals: saved intermediates first, then the known inputs (in order), as JAX's.
    arg_pos = {id(a): i for i, a in enumerate(known_args)}
    res = sorted((arg_pos.get(id(c), -1), i) for i, (c, used) in
                 enumerate(zip(staged.consts, used_consts)) if used)
    ins = [v for v, used in zip(body.invars, used_ins) if used]
    store.update(out_unknowns=out_unknowns, used_ins=used_ins, res_pos=[p for p, _ in res],
                 staged=core.ClosedJaxpr(
        body.replace(constvars=[], invars=[*(body.constvars[i] for _, i in res), *ins]), []))
    return [*(o for o, u in zip(outs, out_unknowns) if not u),
            *(staged.consts[i] for _, i in res)]

  known = pe.trace_to_jaxpr(known_fun, known_avals)
  # Pruned with the equations' own rules (JAX's dce_jaxpr): a custom_vjp fwd with
  # optimize_remat whose residuals only the staged part reads becomes the primal function.
  known = core.ClosedJaxpr(pe.dce_jaxpr(known.jaxpr, [True] * len(known.jaxpr.outvars),
                                        instantiate=True)[0], known.consts)
  staged = store["staged"]
  return known, staged, store["out_unknowns"], store["res_pos"], store["used_ins"]


def _checkpoint_partial_eval(trace, args, unknowns, *, jaxpr, prevent_cse, differentiated,
                             policy):
  known, staged, out_unknowns, res_pos, used_ins = policy_partial_eval(
      jaxpr, unknowns, policy or nothing_saveable)
  num_res = len(res_pos)
  known_args = [a for a, u in zip(args, unknowns) if not u]
  with core.set_current_trace(trace.parent_trace):
    known_outs = _eval_jaxpr_keeping_sources(known.jaxpr, known.consts, known_args,
                                             (trace.parent_trace,))
  n_known = len(known_outs) - num_res
  unknown_outs = []
  if any(out_unknowns) or staged.jaxpr.eqns:
    unknown_args = [a for a, u in zip(args, unknowns) if u]
    staged_args = [*known_outs[n_known:], *(a for a, u in zip(unknown_args, used_ins) if u)]
    if isinstance(prevent_cse, tuple):
      cse_known, cse_unknown = ([f for f, u in zip(prevent_cse, unknowns) if bool(u) is flag]
                                for flag in (False, True))
      prevent_cse = (*(cse_known[p] if p >= 0 else True for p in res_pos),
                     *(f for f, u in zip(cse_unknown, used_ins) if u))
    unknown_outs = trace.stage(checkpoint_p, staged_args, dict(
        jaxpr=staged, prevent_cse=prevent_cse, differentiated=True, policy=policy))
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


# The body pruned, the operands it no longer reads dropped with their `prevent_cse` flags;
# the whole equation when no output is used and the pruned body has no side effects.
checkpoint_p.def_dce(pe.call_dce_rule("jaxpr", per_input=("prevent_cse",)))


@checkpoint_p.def_transpose
def _checkpoint_transpose(cts, *args, jaxpr, prevent_cse, differentiated, policy):
  # The staged jaxpr recomputes the primal values it needs from the saved ones. The
  # transposed computation (recompute forward, then pull the cotangents back) is bound
  # as `remat2` again, so the recomputation sits behind the optimization barrier.
  undefined = [ad.is_undefined_primal(a) for a in args]
  nonzero = [type(ct) is not ad.Zero for ct in cts]
  known_args = [a for a, u in zip(args, undefined) if not u]
  nz_cts = [ct for ct, nz in zip(cts, nonzero) if nz]

  def transposed(*known_and_cts):
    known_iter = iter(known_and_cts[:len(known_args)])
    ct_iter = iter(known_and_cts[len(known_args):])
    all_cts = [next(ct_iter) if nz else ct for ct, nz in zip(cts, nonzero)]
    # Split the staged jaxpr by partial evaluation, so a higher-order equation with
    # both known and linear inputs (a jit of a jvp, say) is split too: the
    # recomputation runs forward and only the linear part is transposed.
    known, linear, out_unknowns, num_res = pe.partial_eval_jaxpr(jaxpr, undefined)
    known_outs = core.eval_jaxpr(known.jaxpr, known.consts, *known_iter)
    residuals = known_outs[len(known_outs) - num_res:]
    linear_args = [a for a, u in zip(args, undefined) if u]
    linear_cts = [ct for ct, u in zip(all_cts, out_unknowns) if u]
    cts_in = ad.backward_pass(linear.jaxpr, linear.consts, [*residuals, *linear_args],
                              linear_cts)[num_res:]
    return [ad.instantiate_zeros(ct) for ct in cts_in]

  avals = [core.get_aval(x) for x in (*known_args, *nz_cts)]
  closed = pe.trace_to_jaxpr(transposed, avals)
  body, consts = pe.convert_constvars_jaxpr(closed)
  if isinstance(prevent_cse, tuple):
    prevent_cse = ((False,) * len(consts) + tuple(f for f, u in zip(prevent_cse, undefined)
                                                  if not u) + (True,) * len(nz_cts))
  cts_in = iter(checkpoint_p.bind(*consts, *known_args, *nz_cts, jaxpr=body,
                                  prevent_cse=prevent_cse, differentiated=True, policy=policy))
  return [next(cts_in) if u else None for u in undefined]


@checkpoint_p.def_lowering
def _checkpoint_lowering(ctx, *args, jaxpr, prevent_cse, differentiated, policy):
  args = list(args)
  flags = prevent_cse if isinstance(prevent_cse, tuple) else (prevent_cse,) * len(args)
  fenced = [i for i, f in enumerate(flags) if f] if differentiated else []
  if fenced:  # keep XLA from merging the recomputation with the forward pass's values
    barrier = ctx.op("stablehlo.optimization_barrier", [args[i] for i in fenced],
                     [args[i].type for i in fenced])
    for i, b in zip(fenced, barrier):
      args[i] = b
  return lowering.lower_jaxpr_body(ctx, jaxpr.jaxpr, jaxpr.consts, args)


# ----------------------------------------------------------------------------
# The API


def _static_argnums_error_check(static_argnums, n: int):
  if not (type(static_argnums) is tuple and all(type(d) is int for d in static_argnums)):
    raise TypeError("the `static_argnums` argument to `jax.checkpoint` / "
                    "`jax.remat` must be an int, tuple of ints or, bool, but "
                    f"got value {static_argnums}")
  if not all(-n <= d < n for d in static_argnums):
    raise ValueError("the `static_argnums` argument to `jax.checkpoint` / "
                     "`jax.remat` can only take integer values greater than or "
                     "equal to `-len(args)` and less than `len(args)`, but got "
                     f"{static_argnums}, while `len(args)` = {n}")


_CONCRETE_HINT = (
    "\n\nConsider using the `static_argnums` parameter for `jax.remat` or "
    "`jax.checkpoint`. See the `jax.checkpoint` docstring and its example "
    "involving `static_argnums`:\n"
    "https://docs.jax.dev/en/latest/_autosummary/jax.checkpoint.html\n")

_NO_CONCRETE = object()
_MAX_TRACES = 64  # traces a checkpointed function keeps, the oldest dropped first


def checkpoint(fun, *, prevent_cse: bool | Sequence[bool] = True, policy=None,
               static_argnums: int | tuple[int, ...] = (), static_argnames=(),
               concrete=_NO_CONCRETE):
  """`fun` with its intermediates recomputed, not stored, for reverse-mode differentiation.

  Args:
    fun: the function (pytrees of arrays in and out).
    prevent_cse: a bool, or one bool per argument (a pytree prefix): whether the
      recomputation is fenced by an optimization barrier so XLA cannot merge it
      with the forward pass.
    policy: which intermediates may be saved: one of `checkpoint_policies`, or a
      function ``policy(primitive, *in_avals, **params)`` returning a bool,
      `Saveable`, `Recompute` or `Offloadable(...)`. None: nothing is saved.
    static_argnums: int or tuple of ints: arguments passed to `fun` as they are.
    static_argnames: accepted, unused (as in JAX 0.10.2).
    concrete: removed; passing it raises NotImplementedError.

  Returns:
    A function computing the same values as `fun`.

  Raises:
    TypeError: `prevent_cse` is not a bool or tuple of bools; `static_argnums`
      is not an int or tuple of ints (when called). ValueError: a static
      argnum is out of range (when called).

  Mirrors `jax.checkpoint` (alias `jax.remat`).
  """
  del static_argnames
  if concrete is not _NO_CONCRETE:
    raise NotImplementedError(
        "The `concrete` option to `jax.checkpoint` was deprecated in JAX"
        " v0.8.2, and removed in JAX v0.10.0."
        " In its place please use `static_argnums`; for details refer to"
        " https://docs.jax.dev/en/latest/jep/11830-new-remat-checkpoint.html.")
  if isinstance(static_argnums, int):
    static_argnums = (static_argnums,)
  if isinstance(prevent_cse, Sequence):
    prevent_cse = tuple(prevent_cse)
  if not isinstance(prevent_cse, (tuple, bool)):
    raise TypeError("prevent_cse must be a bool or tuple of bools, got "
                    f"{type(prevent_cse)=}")

  @traceback_util.api_boundary
  @functools.wraps(fun)
  def fun_remat(*args, **kwargs):
    n = len(args)
    _static_argnums_error_check(static_argnums, n)
    info = debug_info("checkpoint / remat", fun, args, kwargs, static_argnums=static_argnums)
    statics = {i % n for i in static_argnums}
    dyn_args = tuple(a for i, a in enumerate(args) if i not in statics)

    def with_statics(*dyn, **kw):
      it = iter(dyn)
      return fun(*[args[i] if i in statics else next(it) for i in range(n)], **kw)

    leaves, in_tree = tree_util.tree_flatten((dyn_args, kwargs))
    avals = tuple(core.get_aval(x) for x in leaves)
    key = (in_tree, avals, tuple((i, type(args[i]), args[i]) for i in sorted(statics)),
           core.trace_context())
    try:
      hit = traces.get(key)
    except TypeError:  # an unhashable static argument: traced each time
      key = hit = None
    if hit is None:
      flat_fun, out_tree = flatten_fun(with_statics, in_tree)
      try:
        closed = pe.trace_to_jaxpr(flat_fun, list(avals), info)
      except errors.ConcretizationTypeError as e:
        if "for checkpoint" in str(e):
          e.args = (e.args[0] + _CONCRETE_HINT,)
        raise
      hit = (pe.convert_constvars_jaxpr(closed), out_tree.val)
      # As JAX, the function is traced once per signature; a jaxpr closing over an
      # enclosing trace's tracers is valid only in that trace.
      if key is not None and not any(isinstance(c, core.Tracer) for c in closed.consts):
        if len(traces) >= _MAX_TRACES:
          del traces[next(iter(traces))]
        traces[key] = hit
    (jaxpr, consts), out_tree_val = hit
    if isinstance(prevent_cse, tuple):
      cse_args = (dyn_args, kwargs) if kwargs else dyn_args
      cse = (False,) * len(consts) + tuple(tree_util.broadcast_prefix(prevent_cse, cse_args))
    else:
      cse = prevent_cse
    outs = checkpoint_p.bind(*consts, *leaves, jaxpr=jaxpr, prevent_cse=cse,
                             differentiated=False, policy=policy)
    return tree_util.tree_unflatten(out_tree_val, outs)

  traces = {}  # (in_tree, avals, statics, trace context) -> ((jaxpr, consts), out_tree)
  return fun_remat


def remat(fun, *, prevent_cse: bool = True, policy=None, static_argnums=(),
          concrete=_NO_CONCRETE):
  """Alias of `checkpoint` (mirrors `jax.remat`)."""
  return checkpoint(fun, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums,
                    concrete=concrete)


# ----------------------------------------------------------------------------
# What a function's reverse-mode derivative saves


def saved_residuals(f, *args, **kwargs) -> list[tuple[core.ShapedArray, str]]:
  """The values ``vjp(f, *args, **kwargs)`` saves: one (aval, where from) per residual.

  Mirrors `jax._src.ad_checkpoint.saved_residuals`.
  """
  leaves, in_tree = tree_util.tree_flatten((args, kwargs))
  info = debug_info("saved_residuals", f, args, kwargs)

  def flat_f(*xs):
    a, k = tree_util.tree_unflatten(in_tree, list(xs))
    return tree_util.tree_leaves(f(*a, **k))

  def residuals(*xs):
    return ad.linearize_flat(flat_f, list(xs))[1].consts

  jaxpr = pe.trace_to_jaxpr(residuals, [core.get_aval(x) for x in leaves], info).jaxpr
  names = info.arg_names or ("unknown",) * len(jaxpr.invars)
  res_vars = {v for v in jaxpr.outvars if type(v) is not core.Literal}
  # As JAX: a `reduce_precision` is looked through to the value it rounds.
  subst = {e.outvars[0]: e.invars[0] for e in jaxpr.eqns
           if e.primitive.name == "reduce_precision"}
  res_vars = {subst.get(v, v) for v in res_vars}
  out = [(v.aval, "from a literal") for v in jaxpr.outvars if type(v) is core.Literal]
  out += [(v.aval, "from a constant") for v in jaxpr.constvars if v in res_vars]
  for i, v in enumerate(jaxpr.invars):
    if v in res_vars:
      # (JAX's fallback text is not an f-string either.)
      src = f"from the argument {names[i]}" if names[i] else \
          "from the argument at flattened index {i}"
      out.append((v.aval, src))
  for eqn in jaxpr.eqns:
    for v in eqn.outvars:
      if v in res_vars:
        src = eqn.source_info.summarize() if eqn.source_info is not None else "unknown"
        if eqn.primitive is name_p:
          out.append((v.aval, f"named '{eqn.params['name']}' from {src}"))
        elif eqn.primitive.name == "jit":
          out.append((v.aval, f"output of jitted function '{eqn.params['name']}' from {src}"))
        else:
          out.append((v.aval, f"output of {eqn.primitive.name} from {src}"))
  return out


def print_saved_residuals(f, *args, **kwargs) -> None:
  """Prints one line per value ``vjp(f, *args, **kwargs)`` saves: its type and origin.

  For example ``f32[3,3] from the argument x`` or
  ``f32[3,3] output of dot_general from file.py:4:14 (f)``.

  Mirrors `jax.ad_checkpoint.print_saved_residuals`.
  """
  for aval, src in saved_residuals(f, *args, **kwargs):
    print(f"{aval.str_short(True)} {src}")
