"""Printing jaxprs in JAX's text format: `pp_toplevel_jaxpr` (what ``str(jaxpr)`` shows),
the per-equation printers primitives' ``pp_eqn`` rules build on (`pp_eqn_with_params`,
`pp_vars`), and JAX's variable names (``a``..``z``, ``ba``, ...)."""
from __future__ import annotations

import itertools
from collections import Counter

import numpy as np

from xjax._src import pretty_printer as pp
from xjax._src.core import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var, jaxprs_in_params


def _alphabetic(n: int) -> str:
  """0 -> 'a', 25 -> 'z', 26 -> 'ba', ... (JAX's variable names)."""
  s = ""
  while not s or n:
    n, i = divmod(n, 26)
    s = chr(97 + i) + s
  return s


class PpContext:
  """Names variables in order of first appearance, shared by nested jaxprs."""

  def __init__(self):
    self.names: dict[Var, str] = {}
    self.shared_jaxprs: dict[Jaxpr, str] = {}
    self.reserved: set[str] = set()
    self._counter = itertools.count()

  def suggest_same_var_names(self, for_vars, like_vars) -> None:
    """Names each unnamed var of `for_vars` like its partner in `like_vars` (nested jit)."""
    if len(for_vars) != len(like_vars):
      return
    used = set()
    for for_v, like_v in zip(for_vars, like_vars):
      if (isinstance(like_v, Var) and like_v not in used and isinstance(for_v, Var)
          and for_v not in self.names):
        used.add(like_v)
        self.names[for_v] = self.name(like_v)

  def name(self, v) -> str:
    if type(v) is Literal:
      return v.pretty()
    if isinstance(v, DropVar):
      return "_"
    name = self.names.get(v)
    if name is None:
      while True:
        name = _alphabetic(next(self._counter))
        if name not in self.reserved:
          break
      self.names[v] = name
    return name


def pp_vars(vs, context: PpContext, separator: str = "", print_shapes: bool = False) -> pp.Doc:
  if print_shapes:
    items = [pp.text(f"{context.name(v)}:{v.aval.str_short(True)}") for v in vs]
  else:
    items = [pp.text(context.name(v)) for v in vs]
  return pp.nest(2, pp.group(pp.join(pp.text(separator) + pp.group(pp.brk()), items)))


def _pp_param_value(v, context: PpContext) -> pp.Doc:
  if isinstance(v, tuple) and v and all(isinstance(j, (Jaxpr, ClosedJaxpr)) for j in v):
    docs = [pp_jaxpr(j.jaxpr if isinstance(j, ClosedJaxpr) else j, context) for j in v]
    return pp.group(pp.concat([
        pp.nest(2, pp.concat([pp.text("("), pp.brk(""), pp.join(pp.brk(), docs)])),
        pp.brk(""), pp.text(")")]))
  if isinstance(v, ClosedJaxpr):
    return pp_jaxpr(v.jaxpr, context)
  if isinstance(v, Jaxpr):
    return pp_jaxpr(v, context)
  if isinstance(v, frozenset):
    return pp.text(f"frozenset({{{', '.join(repr(e) for e in sorted(v))}}})")
  if isinstance(v, np.dtype):
    return pp.text(v.name)
  return pp.text(str(v))


def pp_kv_pairs(params: dict, context: PpContext) -> pp.Doc:
  if not params:
    return pp.nil()
  pairs = [pp.text(f"{k}=") + _pp_param_value(params[k], context) for k in params]
  return pp.group(pp.concat([
      pp.nest(2, pp.concat([pp.text("["), pp.brk(""), pp.join(pp.brk(), pairs)])),
      pp.brk(""), pp.text("]")]))


def printed_params(eqn: JaxprEqn) -> dict:
  """The eqn's params as JAX prints them: the primitive's print rule applied, then sorted."""
  params = eqn.params if eqn.primitive.pp_params is None else eqn.primitive.pp_params(eqn.params)
  return dict(sorted(params.items()))


def pp_eqn(eqn: JaxprEqn, context: PpContext) -> pp.Doc:
  if eqn.primitive.pp_eqn is not None:
    return eqn.primitive.pp_eqn(eqn, context)
  return pp_eqn_with_params(eqn, context, printed_params(eqn))


def pp_eqn_with_params(eqn: JaxprEqn, context: PpContext, params: dict) -> pp.Doc:
  """``outvars = name[params] invars`` with `params` printed in the given order.

  The outputs are named first, then the params' jaxprs, then the inputs, as JAX does.
  """
  lhs = pp_vars(eqn.outvars, context, print_shapes=True) if eqn.outvars else None
  rhs = [pp.text(eqn.primitive.name), pp_kv_pairs(params, context),
         pp.text(" ") + pp_vars(eqn.invars, context)]
  if lhs is None:
    return pp.concat(rhs)
  return pp.concat([lhs, pp.text(" = "), *rhs])


def _pp_jaxpr_skeleton(jaxpr: Jaxpr, context: PpContext) -> pp.Doc:
  constvars = pp_vars(jaxpr.constvars, context, print_shapes=True)
  invars = pp_vars(jaxpr.invars, context, print_shapes=True)
  eqns = pp.join(pp.brk("; "), [pp_eqn(e, context) for e in jaxpr.eqns])
  outvars = pp.concat([
      pp.text("("), pp_vars(jaxpr.outvars, context, separator=","),
      pp.text(")" if len(jaxpr.outvars) != 1 else ",)")])
  return pp.group(pp.nest(2, pp.concat([
      pp.text("{ "), pp.text("lambda "), constvars, pp.text("; "), invars,
      pp.text(". "), pp.text("let"), pp.nest(2, pp.brk() + eqns), pp.brk(),
      pp.text("in "), outvars])) + pp.text(" }"))


def pp_jaxpr(jaxpr: Jaxpr, context: PpContext) -> pp.Doc:
  name = context.shared_jaxprs.get(jaxpr)
  if name is not None:
    return pp.text(name)
  return _pp_jaxpr_skeleton(jaxpr, context)


def pp_toplevel_jaxpr(top: Jaxpr) -> pp.Doc:
  """The document for a jaxpr, with sub-jaxprs used more than once printed first.

  Like JAX: a sub-jaxpr is shared (``let name = { lambda ... } in``) when it
  occurs twice, or once with more than 10 equations; its name comes from the
  `name` param of the equation holding it.
  """
  context = PpContext()
  # As JAX: outputs of the top-level equations that nothing reads print as ``_``.
  used = {v for v in top.outvars if type(v) is not Literal}
  for eqn in reversed(top.eqns):
    context.names.update((v, "_") for v in eqn.outvars if v not in used)
    used.update(v for v in eqn.invars if type(v) is not Literal)
  names: dict[Jaxpr, str] = {}
  counts: Counter = Counter()
  queue = [top]
  while queue:
    jaxpr = queue.pop(0)
    counts[jaxpr] += 1
    if jaxpr is not top and len(jaxpr.eqns) > 10:
      counts[jaxpr] += 1
    for eqn in jaxpr.eqns:
      name = eqn.params.get("name")
      subs = jaxprs_in_params(eqn.params)
      if name is None:
        queue.extend(subs)
        continue
      name = str(name).strip("<>")
      for sub in subs:
        queue.append(sub)
        names.setdefault(sub, name)
  name_counts: Counter = Counter()
  docs = []
  for jaxpr, c in counts.items():
    if c == 1:
      continue
    name = names.get(jaxpr, "jaxpr")
    if name_counts[name] > 0:
      n = name_counts[name]
      name_counts[name] += 1
      name += str(n)
      name_counts[name] += 1
    else:
      name_counts[name] += 1
    context.reserved.add(name)
    context.shared_jaxprs[jaxpr] = name
  for jaxpr, name in context.shared_jaxprs.items():
    docs.append(pp.concat([pp.text("let "), pp.text(name), pp.text(" = "),
                           _pp_jaxpr_skeleton(jaxpr, context), pp.text(" in"), pp.brk()]))
  docs.append(pp_jaxpr(top, context))
  return pp.concat(docs)


def pp_eqn_standalone(eqn: JaxprEqn) -> str:
  """One equation printed with fresh names, as in tracer provenance messages."""
  return str(pp_eqn(eqn, PpContext()))

