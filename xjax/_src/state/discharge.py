"""Discharging state: jaxprs with refs become functional jaxprs, as JAX's `discharge_state`.

`discharge_state(jaxpr, consts)` gives a jaxpr taking the values of the
ref inputs in their place and returning, after the original outputs, the
final value of each ref input. Refs made inside (``new_ref``) become plain
values threaded through the equations: ``get`` is indexing, ``swap`` and
``addupdate`` are indexed updates (``x.at[idx].set/add``), ``freeze`` is the
value. Higher-order equations with ref operands (jit, scan, while, cond)
discharge their inner jaxprs and thread the ref values as extra inputs and
outputs (loop carries).

`compile_with_refs` is the hook compiling a jaxpr whose inputs or consts are
refs: the executable it returns takes the `Ref` objects in their argument
slots and writes the final values back into them after each run, so a jitted
function mutates its Ref arguments (and the refs it closes over) in place.
"""
from __future__ import annotations

import functools
import weakref

from xjax._src import core
from xjax._src.interpreters import partial_eval as pe
from xjax._src.state import primitives as sp
from xjax._src.state.types import Ref, is_ref_aval, uses_state


def has_refs(closed: core.ClosedJaxpr) -> bool:
  """Whether a closed jaxpr takes refs (as inputs or consts)."""
  return (any(is_ref_aval(a) for a in closed.in_avals)
          or any(is_ref_aval(v.aval) for v in closed.jaxpr.constvars))


# ----------------------------------------------------------------------------
# The discharging interpreter


_discharge_rules: dict = {}


def discharge_state(jaxpr: core.Jaxpr, consts) -> core.ClosedJaxpr:
  """The functional version of `jaxpr` (refs in and out as values; see module doc)."""
  assert not any(is_ref_aval(v.aval) for v in jaxpr.constvars), "internal: ref constvars"
  in_avals = [a.inner_aval if is_ref_aval(a) else a for a in jaxpr.in_avals]
  return pe.trace_to_jaxpr(functools.partial(_eval_discharged, jaxpr, consts), in_avals)


def _eval_discharged(jaxpr: core.Jaxpr, consts, *args):
  """Evaluates `jaxpr` with refs held as values; returns outputs then final ref values."""
  env: dict = {}

  def read(v):
    return v.val if type(v) is core.Literal else env[v]

  env.update(zip(jaxpr.constvars, consts, strict=True))
  env.update(zip(jaxpr.invars, args, strict=True))
  for eqn in jaxpr.eqns:
    in_avals = [v.aval for v in eqn.invars]
    rule = _discharge_rules.get(eqn.primitive)
    if rule is not None and (eqn.primitive in sp.STATE_PRIMITIVES
                             or any(map(is_ref_aval, in_avals))
                             or any(map(uses_state, core.jaxprs_in_params(eqn.params)))):
      ref_ids = [v if is_ref_aval(v.aval) else None for v in eqn.invars]
      new_vals, outs = rule(ref_ids, in_avals, [read(v) for v in eqn.invars], **eqn.params)
      for v, new in zip(eqn.invars, new_vals, strict=True):
        if new is not None:
          env[v] = new
    else:
      if any(map(is_ref_aval, in_avals)):
        raise NotImplementedError(
            f"Discharging the refs passed to '{eqn.primitive.name}' is not implemented "
            "in xjax yet.")
      outs = eqn.primitive.bind(*[read(v) for v in eqn.invars], **eqn.params)
      outs = outs if eqn.primitive.multiple_results else [outs]
    env.update(zip(eqn.outvars, outs, strict=True))
  return [*map(read, jaxpr.outvars),
          *(env[v] for v in jaxpr.invars if is_ref_aval(v.aval))]


def _rule(prim):
  def register(fn):
    _discharge_rules[prim] = fn
    return fn
  return register


@_rule(sp.new_ref_p)
def _new_ref_discharge(ref_ids, in_avals, args, *, memory_space, kind):
  (val,) = args
  from xjax._src.numpy import creation
  return [None], [creation.asarray(val)]


@_rule(sp.empty_ref_p)
def _empty_ref_discharge(ref_ids, in_avals, args, *, ty, memory_space):
  from xjax._src.lax import structural
  return [], [structural.full(ty.shape, 0, ty.dtype)]


@_rule(sp.free_ref_p)
def _free_ref_discharge(ref_ids, in_avals, args):
  return [None], []


@_rule(sp.freeze_p)
def _freeze_discharge(ref_ids, in_avals, args):
  return [None], [args[0]]


@_rule(sp.broadcast_to_p)
def _broadcast_to_discharge(ref_ids, in_avals, args, *, shape):
  from xjax._src.numpy import lax_numpy
  return [None], [lax_numpy.broadcast_to(args[0], shape)]


@_rule(sp.get_p)
def _get_discharge(ref_ids, in_avals, args, *, tree):
  x, *idx = args
  return [None] * len(args), [sp.index_value(x, tree, idx)]


@_rule(sp.swap_p)
def _swap_discharge(ref_ids, in_avals, args, *, tree):
  x, val, *idx = args
  new, old = sp.swap_value(x, val, tree, idx)
  return [new] + [None] * (len(args) - 1), [old]


@_rule(sp.addupdate_p)
def _addupdate_discharge(ref_ids, in_avals, args, *, tree):
  x, val, *idx = args
  return [sp.addupdate_value(x, val, tree, idx)] + [None] * (len(args) - 1), []


def _discharged_closed(closed: core.ClosedJaxpr) -> core.ClosedJaxpr:
  """`discharge_state` of a closed jaxpr, cached on it."""
  hit = _closed_cache.get(closed)
  if hit is None:
    hit = _closed_cache[closed] = discharge_state(closed.jaxpr, closed.consts)
  return hit


_closed_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _consts_as_args(closed: core.ClosedJaxpr):
  """(jaxpr without consts, taking them first; the consts)."""
  return pe.convert_constvars_jaxpr(closed)


def _jit_discharge(ref_ids, in_avals, args, *, jaxpr, donated_invars, **params):
  from xjax._src.jit import jit_p
  disch, consts = _consts_as_args(_discharged_closed(jaxpr))
  outs = jit_p.bind(*consts, *args, jaxpr=disch,
                    donated_invars=(False,) * len(consts) + tuple(donated_invars), **params)
  n = len(jaxpr.out_avals)
  finals = iter(outs[n:])
  return [next(finals) if r is not None else None for r in ref_ids], outs[:n]


def _loop_body(disch: core.ClosedJaxpr, ref_mask, n_lead: int):
  """A function of (non-ref leading inputs, ref values, rest) calling `disch` with the
  refs in their original (leading) positions; returns (final ref values, outputs)."""
  k = sum(ref_mask)

  def body(*args):
    lead, refs, rest = args[:n_lead - k], args[n_lead - k:n_lead], args[n_lead:]
    lead_it, refs_it = iter(lead), iter(refs)
    full = [next(refs_it) if m else next(lead_it) for m in ref_mask]
    outs = core.eval_jaxpr(disch.jaxpr, disch.consts, *full, *rest)
    return [*outs[len(outs) - k:], *outs[:len(outs) - k]]
  return body


def _scan_discharge(ref_ids, in_avals, args, *, jaxpr, num_consts, num_carry, **params):
  from xjax._src.lax.control_flow.scan import scan_p
  ref_mask = [r is not None for r in ref_ids]
  if any(ref_mask[num_consts:]):
    raise NotImplementedError("scan with refs as carries or scanned-over inputs is not "
                              "supported; close over the ref instead.")
  mask = ref_mask[:num_consts]
  k = sum(mask)
  disch = _discharged_closed(jaxpr)
  consts, refs = _partition(mask, args[:num_consts])
  body = _loop_body(disch, mask, num_consts)
  body_avals = [*(a for a, m in zip(disch.in_avals[:num_consts], mask) if not m),
                *(a for a, m in zip(disch.in_avals[:num_consts], mask) if m),
                *disch.in_avals[num_consts:]]
  new, new_consts = _consts_as_args(pe.trace_to_jaxpr(body, body_avals))
  n_consts = len(new_consts) + len(consts)
  outs = scan_p.bind(*new_consts, *consts, *refs, *args[num_consts:], jaxpr=new,
                     num_consts=n_consts, num_carry=k + num_carry, **params)
  finals = iter(outs[:k])
  return [next(finals) if m else None for m in ref_mask], outs[k:]


def _partition(mask, values):
  """(values where not mask, values where mask)."""
  return ([v for v, m in zip(values, mask) if not m], [v for v, m in zip(values, mask) if m])


def _while_discharge(ref_ids, in_avals, args, *, cond_jaxpr, body_jaxpr, cond_nconsts,
                     body_nconsts):
  from xjax._src.lax.control_flow.loops import while_p
  n_c, n_b = cond_nconsts, body_nconsts
  if any(r is not None for r in ref_ids[n_c + n_b:]):
    raise NotImplementedError("while_loop with refs as carries is not supported; close "
                              "over the ref instead.")
  # The distinct refs (by variable) read by cond or body become leading carries.
  uniq: list = []
  for r in ref_ids[:n_c + n_b]:
    if r is not None and all(r is not u for u in uniq):
      uniq.append(r)
  pos = {id(r): i for i, r in enumerate(uniq)}
  k = len(uniq)
  ref_vals = [None] * k
  for r, a in zip(ref_ids, args):
    if r is not None:
      ref_vals[pos[id(r)]] = a
  cconsts, bconsts, carry = args[:n_c], args[n_c:n_c + n_b], args[n_c + n_b:]
  c_ids, b_ids = ref_ids[:n_c], ref_ids[n_c:n_c + n_b]
  c_disch, b_disch = _discharged_closed(cond_jaxpr), _discharged_closed(body_jaxpr)
  c_plain = [a for a, r in zip(cconsts, c_ids) if r is None]
  b_plain = [a for a, r in zip(bconsts, b_ids) if r is None]
  carry_avals = list(body_jaxpr.in_avals[n_b:])
  ref_avals = [r.aval.inner_aval for r in uniq]

  def full_consts(ids, plain, refs):
    it = iter(plain)
    return [refs[pos[id(r)]] if r is not None else next(it) for r in ids]

  def cond_fun(*xs):
    plain, refs, rest = xs[:len(c_plain)], xs[len(c_plain):len(c_plain) + k], \
        xs[len(c_plain) + k:]
    outs = core.eval_jaxpr(c_disch.jaxpr, c_disch.consts,
                           *full_consts(c_ids, plain, refs), *rest)
    return outs[:1]

  def body_fun(*xs):
    plain, refs, rest = xs[:len(b_plain)], list(xs[len(b_plain):len(b_plain) + k]), \
        xs[len(b_plain) + k:]
    outs = core.eval_jaxpr(b_disch.jaxpr, b_disch.consts,
                           *full_consts(b_ids, plain, refs), *rest)
    n_carry = len(rest)
    finals = iter(outs[n_carry:])
    for r in b_ids:
      if r is not None:
        refs[pos[id(r)]] = next(finals)
    return [*refs, *outs[:n_carry]]

  c_avals = [*(core.get_aval(a) for a in c_plain), *ref_avals, *carry_avals]
  b_avals = [*(core.get_aval(a) for a in b_plain), *ref_avals, *carry_avals]
  c_new, c_consts = _consts_as_args(pe.trace_to_jaxpr(cond_fun, c_avals))
  b_new, b_consts = _consts_as_args(pe.trace_to_jaxpr(body_fun, b_avals))
  outs = while_p.bind(*c_consts, *c_plain, *b_consts, *b_plain, *ref_vals, *carry,
                      cond_nconsts=len(c_consts) + len(c_plain), cond_jaxpr=c_new,
                      body_nconsts=len(b_consts) + len(b_plain), body_jaxpr=b_new)
  finals = outs[:k]
  return [finals[pos[id(r)]] if r is not None else None for r in ref_ids], outs[k:]


def _cond_discharge(ref_ids, in_avals, args, *, branches, **params):
  from xjax._src.lax.control_flow import common
  from xjax._src.lax.control_flow.conditionals import cond_p
  index, *ops = args
  converted = [_consts_as_args(_discharged_closed(b)) for b in branches]
  jaxprs, consts = common.join_consts(
      [core.ClosedJaxpr(j.jaxpr, []) for j, _ in converted], [c for _, c in converted])
  n_out = len(branches[0].out_avals)
  outs = cond_p.bind(index, *consts, *ops, branches=tuple(jaxprs), **params)
  finals = iter(outs[n_out:])
  return [next(finals) if r is not None else None for r in ref_ids], outs[:n_out]


def _register_higher_order_rules():
  from xjax._src.jit import jit_p
  from xjax._src.lax.control_flow.conditionals import cond_p
  from xjax._src.lax.control_flow.loops import while_p
  from xjax._src.lax.control_flow.scan import scan_p
  _discharge_rules[jit_p] = _jit_discharge
  _discharge_rules[scan_p] = _scan_discharge
  _discharge_rules[while_p] = _while_discharge
  _discharge_rules[cond_p] = _cond_discharge


# ----------------------------------------------------------------------------
# Hooks: compiling programs with refs, linearized programs with internal refs


class RefExecutable:
  """An executable of a discharged program, run with `Ref` objects in the ref slots.

  `run` passes the refs' current buffers, then writes the final values of the
  refs (closed-over ones first, then the arguments) back into them.
  """
  __slots__ = ("executable", "ref_consts", "n_out")

  def __init__(self, executable, ref_consts, n_out: int):
    self.executable = executable
    self.ref_consts = ref_consts
    self.n_out = n_out

  def __getattr__(self, name):
    return getattr(self.executable, name)

  def run(self, buffers, committed: bool):
    from xjax._src import dispatch
    device = self.executable.device
    args = [r for r in buffers if type(r) is Ref]
    if len({id(r) for r in args}) != len(args):
      _raise_aliased(buffers)
    bufs = [dispatch.to_buffer(r._buf, device) for r in self.ref_consts]
    bufs += [dispatch.to_buffer(b._buf, device) if type(b) is Ref else b for b in buffers]
    outs = self.executable.run(bufs, committed)
    finals = iter(outs[self.n_out:])
    for r in (*self.ref_consts, *args):
      r._buf = next(finals)
    return outs[:self.n_out]


def _raise_aliased(buffers):
  seen: dict = {}
  for i, r in enumerate(buffers):
    if type(r) is Ref:
      j = seen.setdefault(id(r), i)
      if j != i:
        raise ValueError(
            "only one reference to a mutable array may be passed as an argument to a "
            f"function, but the mutable array reference of type {r.aval.str_short()} "
            f"appeared at both args[{j}] and args[{i}].")


def compile_with_refs(closed: core.ClosedJaxpr, compile_fn) -> RefExecutable:
  """Discharges `closed` (refs among its inputs or consts) and compiles it with `compile_fn`.

  `compile_fn(closed)` compiles a functional closed jaxpr to a `dispatch.Executable`.
  """
  jaxpr = closed.jaxpr
  is_ref_const = [type(c) is Ref for c in closed.consts]
  ref_vars, plain_vars = [], []
  ref_consts, plain_consts = [], []
  for v, c, r in zip(jaxpr.constvars, closed.consts, is_ref_const):
    (ref_vars if r else plain_vars).append(v)
    (ref_consts if r else plain_consts).append(c)
  moved = jaxpr.replace(constvars=plain_vars, invars=[*ref_vars, *jaxpr.invars])
  disch = discharge_state(moved, plain_consts)
  return RefExecutable(compile_fn(disch), ref_consts, len(jaxpr.outvars))


def discharge_internal_refs(closed: core.ClosedJaxpr) -> core.ClosedJaxpr:
  """`closed` without state, if its refs are all made inside it; else `closed` unchanged.

  Used before differentiating or transposing a program whose refs are internal
  (JAX's "pure functions using refs inside").
  """
  if has_refs(closed) or not uses_state(closed.jaxpr):
    return closed
  return discharge_state(closed.jaxpr, closed.consts)


def check_jit_refs(closed: core.ClosedJaxpr, leaves) -> None:
  """JAX's errors for a jitted function returning refs or receiving aliased refs."""
  info = closed.jaxpr.debug_info
  where = info.func_src_info if info is not None else "unknown"
  traced_for = info.traced_for if info is not None else "jit"
  names = (info.arg_names if info is not None and info.arg_names is not None
           else ("unknown",) * len(leaves))
  seen: dict = {}
  for i, x in enumerate(leaves):
    if type(x) is Ref:
      j = seen.setdefault(id(x), i)
      if j != i:
        raise ValueError(
            "only one reference to a mutable array may be passed as an argument to a "
            f"function, but when tracing {where} for {traced_for} the mutable array "
            f"reference of type {x.aval.str_short()} appeared at both {names[j]} and "
            f"{names[i]}.")
  closed_over = {id(c) for c in closed.consts if type(c) is Ref}
  for i, x in enumerate(leaves):
    if id(x) in closed_over:
      raise ValueError(
          f"when tracing {where} for {traced_for}, a mutable array reference of type "
          f"{x.aval.str_short()} was both closed over and passed as the argument {names[i]}")
  jaxpr = closed.jaxpr
  for v in jaxpr.outvars:
    if type(v) is core.Literal or not is_ref_aval(v.aval):
      continue
    origin = ""
    if v in jaxpr.invars:
      origin = ("\n\nThe returned mutable array was passed in as the argument "
                f"{names[jaxpr.invars.index(v)]}.")
    else:
      eqn = next((e for e in jaxpr.eqns if v in e.outvars), None)
      if eqn is not None and eqn.source_info is not None:
        origin = ("\n\nThe returned mutable array was created on line "
                  f"{eqn.source_info.summarize()}.")
    raise ValueError(
        f"function {where} traced for {traced_for} returned a mutable array reference of "
        f"type {v.aval.str_short()}, but mutable array references cannot be returned."
        f"{origin}")


_register_higher_order_rules()
