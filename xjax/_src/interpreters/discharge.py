"""Discharging state: jaxprs with refs become functional jaxprs, as JAX's `discharge_state`.

`discharge_state(jaxpr, consts)` gives a jaxpr taking the values of the
ref inputs in their place and returning, after the original outputs, the
final value of each ref input. Refs made inside (``new_ref``) become plain
values threaded through the equations: ``get`` is indexing, ``swap`` and
``addupdate`` are indexed updates (``x.at[idx].set/add``), ``freeze`` is the
value. Higher-order equations with ref operands (jit, scan, while, cond)
discharge their inner jaxprs and thread the ref values as extra inputs and
outputs (loop carries).

A discharge rule ``rule(ref_ids, in_avals, args, **params) -> (new_ref_values, outs)``
gets the operands with each ref replaced by its current value (``ref_ids[i]`` is the
operand's variable when it is a ref, else None) and returns each ref's value after the
equation (None where unchanged or not a ref) and the outputs. Each primitive's rule
sits next to the primitive (``prim.def_discharge``): the state primitives' in
`state/primitives.py`, scan's, while's and cond's in their modules, jit's in
`jit_primitive.py`. `dispatch.compile_with_refs` runs a discharged program
on `Ref` objects, so a jitted function mutates its Ref arguments in place.
"""
from __future__ import annotations

import functools
import weakref

from xjax._src import core
from xjax._src.interpreters import partial_eval as pe
from xjax._src.state.types import Ref, aliased_refs, is_ref_aval, uses_state


def has_refs(closed: core.ClosedJaxpr) -> bool:
  """Whether a closed jaxpr takes refs (as inputs or consts)."""
  return (any(is_ref_aval(a) for a in closed.in_avals)
          or any(is_ref_aval(v.aval) for v in closed.jaxpr.constvars))


# ----------------------------------------------------------------------------
# The discharging interpreter


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
    rule = eqn.primitive.discharge
    if rule is not None and (eqn.primitive.ref_primitive
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


def discharged_closed(closed: core.ClosedJaxpr) -> core.ClosedJaxpr:
  """`discharge_state` of a closed jaxpr, cached on it."""
  hit = _closed_cache.get(closed)
  if hit is None:
    hit = _closed_cache[closed] = discharge_state(closed.jaxpr, closed.consts)
  return hit


_closed_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def consts_as_args(closed: core.ClosedJaxpr):
  """(jaxpr without consts, taking them first; the consts)."""
  return pe.convert_constvars_jaxpr(closed)


# ----------------------------------------------------------------------------
# Linearized programs with internal refs; JAX's errors for refs crossing jit


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
  aliased = aliased_refs(leaves)
  if aliased is not None:
    j, i = aliased
    raise ValueError(
        "only one reference to a mutable array may be passed as an argument to a function, "
        f"but when tracing {where} for {traced_for} the mutable array reference of type "
        f"{leaves[i].aval.str_short()} appeared at both {names[j]} and {names[i]}.")
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
