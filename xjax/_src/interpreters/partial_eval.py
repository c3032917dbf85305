"""Staging: `DynamicJaxprTrace` records a function's primitives into a jaxpr.

Used by jit, make_jaxpr and the control-flow primitives. Every `bind` under
this trace appends one equation, after checking the operands' types with the
primitive's `abstract_eval`; values from outside the trace become constants
(Python and NumPy scalars inline as literals, anything else as constvars).
"""
from __future__ import annotations

import logging
from typing import Any, NamedTuple

import numpy as np

from xjax._src import core
from xjax._src import jaxpr_pp
from xjax._src import executable_cache
from xjax._src import source_info
from xjax._src import config as config_lib
from xjax._src.config import config


class DebugInfo(NamedTuple):
  """What error messages say about a traced function."""
  traced_for: str                # "jit", "make_jaxpr", "cond", ...
  func_src_info: str             # "f at /path/file.py:12"
  arg_names: tuple | None        # one per flat input, e.g. ("x", "y['a']")
  result_paths: tuple | None = None


class DynamicJaxprTracer(core.Tracer):
  """A tracer of a `DynamicJaxprTrace`, printed ``JitTracer(float32[3])`` as in JAX."""
  __slots__ = ("_aval", "val", "_source_info")
  tracer_name = "JitTracer"

  def __init__(self, trace, aval, val, source_info=None):
    self._trace = trace
    self._aval = aval
    self.val = val
    self._source_info = source_info

  @property
  def aval(self):
    return self._aval

  @property
  def _debug_info(self):
    return self._trace.debug_info

  def _origin_msg(self) -> str:
    trace = self._trace
    info = trace.debug_info
    if info is None:
      return ""
    invar_pos, eqns = trace.find_progenitors(self)
    origin = (f"The error occurred while tracing the function {info.func_src_info} "
              f"for {info.traced_for}. ")
    if invar_pos:
      if info.arg_names is None:
        names = ["unknown"] * len(invar_pos)
      else:
        names = [info.arg_names[i] for i in invar_pos]
      if len(names) == 1:
        args = f"the argument {names[0]}"
      elif len(names) == 2:
        args = f"the arguments {names[0]} and {names[1]}"
      else:
        args = f"the arguments {', '.join(names[:-1])}, and {names[-1]}"
      plural = "s" if len(invar_pos) > 1 else ""
      origin += ("This concrete value was not available in Python because it "
                 f"depends on the value{plural} of {args}.")
    elif eqns:
      lines = []
      for eqn in eqns[:5]:
        where = eqn.source_info.summarize() if eqn.source_info else "unknown"
        lines.append(f"  operation {jaxpr_pp.pp_eqn_standalone(eqn)}\n    from line {where}")
      origin += ("This value became a tracer due to JAX operations on these lines:"
                 "\n\n" + "\n\n".join(lines))
      if len(eqns) > 5:
        origin += "\n\n(Additional originating lines are not shown.)"
    return "\n" + origin


def is_literalable(x) -> bool:
  t = type(x)
  if t in (int, float, bool, complex):
    return True
  return isinstance(x, (np.ndarray, np.generic)) and np.ndim(x) == 0


class DynamicJaxprTrace(core.Trace):
  """Records primitives applied to its tracers into a jaxpr."""
  __slots__ = ("eqns", "invars", "constvar_to_val", "const_tracers", "const_values",
               "debug_info")

  def __init__(self, debug_info: DebugInfo | None = None):
    super().__init__(parent_trace=None)
    self.eqns: list[core.JaxprEqn] = []
    self.invars: list[core.Var] = []
    self.constvar_to_val: dict[core.Var, Any] = {}
    self.const_tracers: dict[int, DynamicJaxprTracer] = {}
    self.const_values: list = []
    self.debug_info = debug_info

  def new_arg(self, aval: core.ShapedArray) -> DynamicJaxprTracer:
    var = core.Var(aval)
    self.invars.append(var)
    return DynamicJaxprTracer(self, aval, var)

  def to_jaxpr_tracer(self, x) -> DynamicJaxprTracer:
    if isinstance(x, DynamicJaxprTracer) and x._trace.tag is self.tag:
      return x
    return self.new_const(x)

  def new_const(self, x) -> DynamicJaxprTracer:
    if isinstance(x, core.Tracer) and not x._trace.is_valid:
      raise core.escaped_tracer_error(x)
    tracer = self.const_tracers.get(id(x))
    if tracer is not None:
      return tracer
    aval = core.get_aval(x)
    if is_literalable(x):
      # Python scalars and canonical NumPy values (which may carry a weak type) stay as
      # they are; other NumPy scalars are canonicalized (float64 -> float32 without x64).
      keep = isinstance(x, (int, float, bool, complex)) or (
          isinstance(x, np.ndarray) and x.dtype == aval.dtype)
      value = x if keep else np.asarray(x, aval.dtype)
      tracer = DynamicJaxprTracer(self, aval, core.Literal(value, aval))
    else:
      var = core.Var(aval)
      self.constvar_to_val[var] = x
      tracer = DynamicJaxprTracer(self, aval, var)
    # Keep `x` alive with its tracer so its id is not reused while tracing.
    self.const_tracers[id(x)] = tracer
    self.const_values.append(x)
    return tracer

  def process_primitive(self, primitive, args, params):
    if config.jax_eager_constant_folding and not any(isinstance(x, core.Tracer) for x in args):
      with core.set_current_trace(core.eval_trace):  # `ensure_compile_time_eval`
        return primitive.bind(*args, **params)
    # The hot path of tracing: plain loops, no comprehensions (each is a frame).
    tag = self.tag
    invars, avals = [], []
    for x in args:
      if type(x) is not DynamicJaxprTracer or x._trace.tag is not tag:
        x = self.to_jaxpr_tracer(x)
      invars.append(x.val)
      avals.append(x._aval)
    rule = primitive.abstract_eval
    if rule is None:
      raise core.missing_rule("Abstract evaluation", primitive)
    out = rule(*avals, **params)
    if isinstance(out, (tuple, list)) != bool(primitive.multiple_results):
      raise ValueError(f"{primitive}.abstract_eval() method should return a tuple or a list "
                       f"iff {primitive}.multiple_results.")
    src = source_info.current()
    if not primitive.multiple_results:
      var = core.Var(out)
      self.eqns.append(core.JaxprEqn(invars, [var], primitive, params, src))
      return DynamicJaxprTracer(self, out, var, src)
    outvars = [core.Var(a) for a in out]
    self.eqns.append(core.JaxprEqn(invars, outvars, primitive, params, src))
    return [DynamicJaxprTracer(self, a, v, src) for a, v in zip(out, outvars)]

  def find_progenitors(self, tracer):
    """The input positions and the constant-fed equations `tracer` depends on."""
    var = tracer.val
    if not isinstance(var, core.Var):
      return None, None
    active = {var}
    for eqn in reversed(self.eqns):
      produced = active.intersection(eqn.outvars)
      if produced:
        active.difference_update(produced)
        active.update(v for v in eqn.invars if type(v) is core.Var)
    invar_positions = [i for i, v in enumerate(self.invars) if v in active]
    constvars = active.intersection(self.constvar_to_val)
    const_eqns = [eqn for eqn in self.eqns
                  if any((v in constvars) if type(v) is core.Var else type(v) is core.Literal
                         for v in eqn.invars)]
    return invar_positions, const_eqns

  def to_jaxpr(self, out_tracers) -> core.ClosedJaxpr:
    """The closed jaxpr computing `out_tracers` from the args."""
    outvars = [self.to_jaxpr_tracer(t).val for t in out_tracers]
    constvars = list(self.constvar_to_val)
    consts = [self.constvar_to_val[v] for v in constvars]
    jaxpr = core.Jaxpr(constvars, self.invars, outvars, self.eqns,
                       debug_info=self.debug_info)
    if config.jax_enable_checks:
      core.typecheck_jaxpr(jaxpr)
    return core.ClosedJaxpr(jaxpr, consts)


def trace_to_jaxpr(fun, in_avals, debug_info: DebugInfo | None = None) -> core.ClosedJaxpr:
  """Traces `fun` (taking and returning flat lists of arrays) on `in_avals`."""
  trace = DynamicJaxprTrace(debug_info)
  args = [trace.new_arg(a) for a in in_avals]
  with core.set_current_trace(trace):
    try:
      outs = fun(*args)
    finally:
      trace.invalidate()
  for i, x in enumerate(outs):
    if not isinstance(x, core.Tracer):
      try:
        core.get_aval(x)
      except TypeError:
        raise TypeError(_bad_output_message(fun, debug_info, i, x)) from None
  closed = trace.to_jaxpr(outs)
  if config.jax_check_tracer_leaks:
    from xjax._src import leak_checker  # only loaded when leak checking is on
    del args, outs
    leak_checker.check_trace(trace, internal=(trace.const_tracers,))
  return closed


def _bad_output_message(fun, debug_info: DebugInfo | None, i: int, x) -> str:
  """JAX's message for output `i` of a traced function, `x`, that is not a JAX type."""
  where = ""
  store = getattr(fun, "out_store", None)
  if store is not None:
    try:
      from xjax._src import tree_util  # only on this error path
      tree = store.val
      paths = tree_util.tree_flatten_with_path(tree_util.tree_unflatten(
          tree, [None] * tree.num_leaves), is_leaf=lambda v: v is None)[0]
      where = f" at output component {tree_util.keystr(paths[i][0])}"
    except Exception:
      pass
  if debug_info is None:
    return (f"function {source_info.fun_sourceinfo(fun)} returned a value of type {type(x)}"
            f"{where}, which is not a valid JAX type")
  return (f"function {debug_info.func_src_info} traced for {debug_info.traced_for} returned a "
          f"value of type {type(x)}{where}, which is not a valid JAX type")


def convert_constvars_jaxpr(closed: core.ClosedJaxpr) -> tuple[core.ClosedJaxpr, list]:
  """Moves the constvars to the front of the invars; returns the new jaxpr and the consts."""
  jaxpr = closed.jaxpr
  moved = jaxpr.replace(constvars=[], invars=[*jaxpr.constvars, *jaxpr.invars])
  return core.ClosedJaxpr(moved, []), list(closed.consts)


class PartialEvalTrace(DynamicJaxprTrace):
  """Stages only the equations that depend on its own (unknown) tracers.

  Equations whose operands are all known (values from outside this trace)
  run in the parent trace; the others are recorded, and the known values
  they read become the staged jaxpr's constants (the residuals). Used by
  `linearize`: known = primal, unknown = tangent.
  """
  __slots__ = ()

  def __init__(self, parent_trace, debug_info: DebugInfo | None = None):
    super().__init__(debug_info)
    self.parent_trace = parent_trace

  def is_unknown(self, x) -> bool:
    return isinstance(x, DynamicJaxprTracer) and x._trace.tag is self.tag

  def process_primitive(self, primitive, args, params):
    unknowns = [self.is_unknown(x) for x in args]
    if not any(unknowns):
      with core.set_current_trace(self.parent_trace):
        return primitive.bind(*args, **params)
    rule = primitive.partial_eval
    if rule is None:
      # The generic rule, right for a first-order primitive: the whole equation is
      # staged and every output is unknown. A higher-order primitive declares its own
      # rule (tests/lax/test_registry.py checks), so the known part of its jaxpr stays known.
      return self.stage(primitive, args, params)
    return rule(self, args, unknowns, **params)

  def stage(self, primitive, args, params):
    """Records `primitive` on `args` (known ones become residual constants)."""
    return DynamicJaxprTrace.process_primitive(self, primitive, args, params)

  def to_jaxpr(self, out_tracers) -> core.ClosedJaxpr:
    """The staged jaxpr; refs it makes itself (tangent refs) are discharged into values."""
    closed = DynamicJaxprTrace.to_jaxpr(self, out_tracers)
    if any(e.primitive.ref_allocating for e in closed.jaxpr.eqns):
      from xjax._src.interpreters import discharge
      closed = discharge.discharge_internal_refs(closed)
    return closed


def partial_eval_jaxpr(closed: core.ClosedJaxpr, unknowns, instantiate=False):
  """Splits `closed` into a known and an unknown part.

  Args:
    closed: the jaxpr.
    unknowns: one bool per input: whether its value is unknown.
    instantiate: True (or one bool per output) forces outputs to be unknown.

  Returns:
    (known, unknown, out_unknowns, num_res): `known` maps the known inputs to
    (known outputs..., residuals...); `unknown` maps (residuals..., unknown
    inputs...) to the unknown outputs.
  """
  in_avals = closed.in_avals
  known_avals = [a for a, u in zip(in_avals, unknowns) if not u]
  unknown_avals = [a for a, u in zip(in_avals, unknowns) if u]
  n_out = len(closed.out_avals)
  force = [instantiate] * n_out if isinstance(instantiate, bool) else list(instantiate)
  store = {}

  def known_fun(*known_args):
    trace = PartialEvalTrace(core.current_trace())
    unknown_args = iter([trace.new_arg(a) for a in unknown_avals])
    known_iter = iter(known_args)
    args = [next(unknown_args) if u else next(known_iter) for u in unknowns]
    with core.set_current_trace(trace):
      try:
        outs = core.eval_jaxpr(closed.jaxpr, closed.consts, *args)
      finally:
        trace.invalidate()
    out_unknowns = [trace.is_unknown(o) or f for o, f in zip(outs, force)]
    staged = trace.to_jaxpr([o for o, u in zip(outs, out_unknowns) if u])
    store["out_unknowns"] = out_unknowns
    store["staged"] = staged
    return [*(o for o, u in zip(outs, out_unknowns) if not u), *staged.consts]

  known = trace_to_jaxpr(known_fun, known_avals)
  staged = store["staged"]
  unknown, _ = convert_constvars_jaxpr(core.ClosedJaxpr(staged.jaxpr, staged.consts))
  return known, unknown, store["out_unknowns"], len(staged.consts)


# ----------------------------------------------------------------------------
# `jax_explain_cache_misses`: why a jit tracing cache missed, in JAX's words

_explain_logger = logging.getLogger(__name__)
_callsites_with_misses: set[str] = set()


def explain_cache_miss(fun, seen_keys, key, info: DebugInfo) -> None:
  """Logs (WARNING) why `key` = (in_tree, avals, statics, config) missed the tracing cache
  of `fun`, against the closest of `seen_keys`, as JAX's "TRACING CACHE MISS" does."""
  code = getattr(fun, "__code__", None)
  if code is not None and source_info._is_internal(code.co_filename):
    return  # as JAX: only the user's own functions are explained
  callsite = source_info.current()
  callsite = callsite.summarize() if callsite is not None else "unknown"
  lines = [f"TRACING CACHE MISS at {callsite}:"]
  name, _, where = info.func_src_info.partition(" at ")
  defined = f" defined at {where}" if where else ""
  if not seen_keys:
    lines.append(f"  never seen function:\n    {name} id={id(fun)}{defined}")
    if callsite in _callsites_with_misses:
      lines.append("  but seen another function defined on the same line; maybe the function "
                   "is\n  being re-defined repeatedly, preventing caching?")
    else:
      _callsites_with_misses.add(callsite)
  else:
    lines.append(f"  for {name}{defined}")
    lines.append("  all previously seen cache keys differ. For the closest previous key:")
    lines.append("  " + min(_diff_keys(key, old, info) for old in seen_keys)[-1])
  _explain_logger.warning("\n".join(lines))


def _diff_keys(new, old, info: DebugInfo) -> tuple[int, int, str]:
  """(severity, number of differences, explanation); lower severity is closer."""
  (new_tree, new_avals, new_statics, new_ctx), (old_tree, old_avals, old_statics, old_ctx) = new, old
  if new_ctx != old_ctx:
    n = sum(a != b for a, b in zip(new_ctx, old_ctx))
    msg = "Tracing context doesn't match, e.g. due to config or context manager."
    # The flags that differ, by name (a context with named axes bound holds the flags first).
    flags_new, flags_old = (c[0] if len(c) == 2 and isinstance(c[0], tuple) else c
                            for c in (new_ctx, old_ctx))
    for name, a, b in zip(config_lib.VALUES_KEY_NAMES, flags_new, flags_old):
      if a != b:
        msg += f"\n  * {name} differs: now {a} and before {b}"
    return 0, n, msg
  if new_tree != old_tree:
    return 1, 1, f"different input pytree:\n  * now {new_tree} and before {old_tree}"
  if new_statics != old_statics:
    diffs = [f"  * at {k}, now {v!r} and before {ov!r}" for (k, _, v), (_, _, ov)
             in zip(new_statics, old_statics) if v != ov]
    return 2, len(diffs), "different static arguments:\n" + "\n".join(diffs)
  names = info.arg_names or ("unknown",) * len(new_avals)
  diffs, weak_hint = [], False
  for name, a, b in zip(names, new_avals, old_avals):
    if a != b:
      new_str, old_str = a.str_short(True), b.str_short(True)
      if a.weak_type != b.weak_type:
        weak_hint = True
        # As JAX's: the types' shardings shown (JAX's differ with the rank: one spec entry per
        # dimension) where they differ, "({})" over no mesh.
        mesh = "({})" if len(a.shape) != len(b.shape) or a.sharding != b.sharding else ""
        new_str = f"{a.strip_weak_type().str_short(True)}{mesh}{{weak_type={a.weak_type}}}"
        old_str = f"{b.strip_weak_type().str_short(True)}{mesh}{{weak_type={b.weak_type}}}"
      diffs.append(f"  * at {name}, now {new_str} and before {old_str}")
  if not diffs:
    return 4, 0, "cache miss explanation unavailable"
  msg = "different input types:\n" + "\n".join(diffs)
  if weak_hint:
    msg += "https://docs.jax.dev/en/latest/type_promotion.html#weak-types"
  return 3, len(diffs), msg


def dce_jaxpr(jaxpr: core.Jaxpr, used_outputs, instantiate=False):
  """Drops the equations no used output needs; returns (jaxpr, used_inputs).

  Unused inputs are removed unless `instantiate` (a bool or one per input) keeps
  them. An equation whose primitive has a ``dce_rule`` (``(used_outputs, eqn) ->
  (used_inputs, new eqn or None)``, as JAX's `pe.dce_rules`) is pruned inside
  too: cond, scan and while drop the parts of their jaxprs nothing uses.
  """
  n_in = len(jaxpr.invars)
  inst = [instantiate] * n_in if isinstance(instantiate, bool) else list(instantiate)
  live = {v for v, u in zip(jaxpr.outvars, used_outputs, strict=True)
          if u and type(v) is not core.Literal}
  eqns = []
  for eqn in reversed(jaxpr.eqns):
    used_outs = [v in live for v in eqn.outvars]
    rule = eqn.primitive.dce_rule
    if rule is not None:
      used_ins, eqn = rule(used_outs, eqn)
      if eqn is None:
        continue
      eqns.append(eqn)
      live.update(v for v in eqn.invars if type(v) is not core.Literal)
    elif core.is_live_regardless(eqn) or any(used_outs):
      eqns.append(eqn)
      live.update(v for v in eqn.invars if type(v) is not core.Literal)
  used_inputs = [v in live or i for v, i in zip(jaxpr.invars, inst)]
  new = jaxpr.replace(invars=[v for v, u in zip(jaxpr.invars, used_inputs) if u],
                      outvars=[v for v, u in zip(jaxpr.outvars, used_outputs) if u],
                      eqns=list(reversed(eqns)))
  return new, used_inputs


_pruned_jaxprs = executable_cache.DerivedCache("dce-pruned closed jaxprs")


def dce_closed_jaxpr(closed: core.ClosedJaxpr, used_outputs, instantiate=False):
  """`dce_jaxpr` of a closed jaxpr: (the jaxpr returning only `used_outputs`, its consts
  kept; the used inputs). Cached per (jaxpr, used outputs, instantiate) as long as the jaxpr
  lives, as the DCE rules of call-like primitives prune the same jaxprs again and again."""
  used = tuple(used_outputs)

  def build():
    body, used_inputs = dce_jaxpr(closed.jaxpr, list(used), instantiate=instantiate)
    return core.ClosedJaxpr(body, closed.consts), tuple(used_inputs)
  return _pruned_jaxprs.get_or_build(closed, (used, instantiate), build)


def close_jaxpr(jaxpr: core.Jaxpr) -> core.ClosedJaxpr:
  """`jaxpr` (which has no constvars) as a ClosedJaxpr with no constants (mirrors JAX's
  ``pe.close_jaxpr``)."""
  return core.ClosedJaxpr(jaxpr, ())


def call_dce_rule(jaxpr_param: str, per_input=(), keep_inputs_param=None):
  """A ``dce_rule`` for a primitive calling the (closed) jaxpr ``params[jaxpr_param]`` on its
  operands (jit, call, closed_call, remat2; JAX's `dce_jaxpr_pjit_rule`,
  `dce_jaxpr_call_rule` and `remat_dce`).

  The jaxpr is pruned to the used outputs and the operands it no longer reads are dropped,
  with the entries of the per-operand tuple params named in `per_input` alongside (a param
  that is not a tuple, such as remat's ``prevent_cse=True``, stays), unless the bool param
  `keep_inputs_param` (jit's ``keep_unused``) is set. The equation goes when no output is
  used and the pruned jaxpr has no effects.
  """
  def rule(used_outputs, eqn):
    callee = eqn.params[jaxpr_param]
    closed = callee if isinstance(callee, core.ClosedJaxpr) else core.ClosedJaxpr(callee, [])
    keep = bool(keep_inputs_param and eqn.params[keep_inputs_param])
    body, used_inputs = dce_closed_jaxpr(closed, used_outputs, instantiate=keep)
    if not any(used_outputs) and not core.has_side_effects(body.jaxpr):
      return [False] * len(eqn.invars), None
    params = dict(eqn.params)
    for name in per_input:
      if isinstance(params[name], tuple):
        params[name] = tuple(x for x, u in zip(params[name], used_inputs, strict=True) if u)
    params[jaxpr_param] = body if isinstance(callee, core.ClosedJaxpr) else body.jaxpr
    new_eqn = eqn.replace(invars=[v for v, u in zip(eqn.invars, used_inputs) if u],
                          outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u],
                          params=params)
    return list(used_inputs), new_eqn
  return rule


def dce_closed_linear_jaxpr(closed: core.ClosedJaxpr) -> core.ClosedJaxpr:
  """`closed` without the equations and constants its outputs do not need (its inputs kept),
  as JAX prunes the linear jaxpr of `linearize`."""
  j = closed.jaxpr
  n = len(j.constvars)
  flat = j.replace(constvars=[], invars=[*j.constvars, *j.invars])
  dced, used = dce_jaxpr(flat, [True] * len(j.outvars), [False] * n + [True] * len(j.invars))
  constvars = [v for v, u in zip(j.constvars, used[:n]) if u]
  consts = [c for c, u in zip(closed.consts, used[:n]) if u]
  return core.ClosedJaxpr(dced.replace(constvars=constvars, invars=dced.invars[len(constvars):]),
                          consts)
