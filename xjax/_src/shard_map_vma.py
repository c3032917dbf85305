"""shard_map's inference of what varies between devices, and its deadlock checks.

A stand-in for JAX's varying-manual-axes types over a whole traced body (the
avals' own `vma` follow primitives one at a time, see `xjax._src.vma`; this
pass also follows cond, while and scan by fixpoint rules, so it decides
shard_map's out_specs check and its residuals' specs). With a `_VmaContext`,
control flow whose devices could run different collectives (which would
deadlock XLA's collectives and abort the process) raises at trace time.
"""
from __future__ import annotations

from xjax._src import core


# Collectives that make their result the same along the axes they reduce over. (As in
# JAX 0.10.2, all_gather's result still counts as varying.)
_INVARIANT_ALONG = {"psum": "axes", "pmax": "axes", "pmin": "axes",
                    "all_gather_invariant": "axis_name"}
# Primitives that communicate between devices: every device of a group must run them.
_COLLECTIVES = frozenset({"psum", "pmax", "pmin", "all_gather", "all_gather_invariant",
                          "reduce_scatter",
                          "all_to_all", "ppermute", "pbroadcast"})


def _names_param(value) -> frozenset:
  values = value if isinstance(value, (tuple, list)) else (value,)
  return frozenset(v for v in values if not isinstance(v, int))


def _collectives(jaxpr: core.Jaxpr) -> tuple:
  """The collectives `jaxpr` runs, in order, sub-jaxprs included: (name, axes) pairs."""
  out = []
  for eqn in jaxpr.eqns:
    name = eqn.primitive.name
    if name in _COLLECTIVES:
      axes = eqn.params.get("axes", eqn.params.get("axis_name"))
      out.append((name, tuple(sorted(map(str, _names_param(axes))))))
    for sub in core.jaxprs_in_params(eqn.params):
      out.extend(_collectives(sub))
  return tuple(out)


def _varying_axes(jaxpr: core.Jaxpr, in_vma, ctx=None) -> list:
  """Per output of `jaxpr`, the manual axes along which it may differ between devices.

  A stand-in for JAX's varying-manual-axes types: inputs vary along the axes
  their specs name; reductions over an axis make their result invariant along
  it; `axis_index` varies along its axis; every higher-order primitive's
  sub-jaxprs are followed (cond, while and scan by their own rules below, and
  any primitive whose one sub-jaxpr takes its operands as they are: jit,
  checkpoint, custom_jvp/vjp, nested shard_map ...); any other equation varies
  as its operands do.

  With `ctx` (a `_VmaContext`), control flow whose devices could run different
  collectives (which deadlocks XLA's all-reduce and aborts the process) raises
  first.
  """
  env = dict(zip([*jaxpr.constvars, *jaxpr.invars], in_vma, strict=True))
  read = lambda v: frozenset() if type(v) is core.Literal else env[v]
  for eqn in jaxpr.eqns:
    ins = [read(v) for v in eqn.invars]
    union = frozenset().union(*ins)
    name, params = eqn.primitive.name, eqn.params
    rule = _VMA_RULES.get(name)
    if rule is not None:
      outs = rule(eqn, ins, ctx)
    elif name in _INVARIANT_ALONG and params.get("axis_index_groups") is None:
      outs = [union - _names_param(params[_INVARIANT_ALONG[name]])] * len(eqn.outvars)
    elif name == "axis_index":
      outs = [_names_param(params["axis_name"])]
    elif name == "pvary":
      outs = [union | _names_param(params["axes"])]
    else:
      outs = _call_like(eqn, ins, ctx)
      if outs is None:
        outs = [union] * len(eqn.outvars)
    env.update(zip(eqn.outvars, outs))
  return [read(v) for v in jaxpr.outvars]


def _sub_vma(closed, ins, ctx) -> list:
  jaxpr = closed.jaxpr if isinstance(closed, core.ClosedJaxpr) else closed
  return _varying_axes(jaxpr, [frozenset()] * len(jaxpr.constvars) + list(ins), ctx)


def _call_like(eqn, ins, ctx):
  """Outputs' axes of an equation whose one sub-jaxpr takes its operands and gives its
  results as they are (jit, checkpoint, custom_jvp/vjp's primal, a nested shard_map);
  None for other equations."""
  subs = [v for v in eqn.params.values() if isinstance(v, (core.Jaxpr, core.ClosedJaxpr))]
  if len(subs) != 1:
    return None
  jaxpr = subs[0].jaxpr if isinstance(subs[0], core.ClosedJaxpr) else subs[0]
  if len(jaxpr.invars) != len(ins) or len(jaxpr.outvars) != len(eqn.outvars):
    return None
  return _sub_vma(subs[0], ins, ctx)


class _VmaContext:
  """What the deadlock checks need: the manual axes."""

  def __init__(self, manual):
    self.manual = frozenset(manual)


def _branch_names(eqn) -> list[str]:
  n = len(eqn.params["branches"])
  return ["false_fun", "true_fun"] if n == 2 else [f"branch {i}" for i in range(n)]


def _branch_info(closed) -> str:
  info = getattr(closed.jaxpr, "debug_info", None)
  return getattr(info, "func_src_info", None) or "<unknown>"


def _show_vma(aval, vma) -> str:
  return aval.update(vma=frozenset(vma)).str_short()


def _cond_vma(eqn, ins, ctx):
  branches = eqn.params["branches"]
  index, ops = ins[0], ins[1:]
  outs = [_sub_vma(b, ops, ctx) for b in branches]
  if ctx is not None and index & ctx.manual:
    # The devices may take different branches: they must run the same collectives.
    sigs = [_collectives(b.jaxpr) for b in branches]
    if len(set(sigs)) > 1:
      names = _branch_names(eqn)
      order = [1, 0] if len(branches) == 2 else list(range(len(branches)))
      api = "cond" if len(branches) == 2 else "switch"
      first = order[0]
      for j in order[1:]:
        for k, (a, b) in enumerate(zip(outs[first], outs[j])):
          if (a & ctx.manual) != (b & ctx.manual):
            aval = eqn.outvars[k].aval
            raise TypeError(
                f"{api} branches must have equal output types but they differ.\n\n"
                f"{names[first]} is {_branch_info(branches[first])}\n"
                f"{names[j]} is {_branch_info(branches[j])}\n\n"
                f"The output of {names[first]} has type {_show_vma(aval, a & ctx.manual)} but "
                f"the corresponding output of {names[j]} has type "
                f"{_show_vma(aval, b & ctx.manual)}, so the manual axis types do not match.\n"
                f"\nRevise {names[first]} and/or {names[j]} so that all output types match.")
      shown = "; ".join(f"{names[i]} ({_branch_info(branches[i])}) runs "
                        f"{_show_collectives(sigs[i])}" for i in order)
      raise ValueError(
          f"A {api} inside shard_map whose predicate may differ between devices (it varies "
          f"along mesh axes {sorted(map(str, index & ctx.manual))}) has branches that run "
          f"different collectives: {shown}. Devices taking different branches would wait "
          "for each other forever. Make the predicate the same on every device (for "
          "example compute it from a psum or pmax over those axes), or run the same "
          "collectives in every branch.")
  return [index.union(*col) for col in zip(*outs)]


def _show_collectives(sig) -> str:
  return ", ".join(f"{n} over {list(a)}" for n, a in sig) if sig else "no collectives"


def _while_vma(eqn, ins, ctx):
  p = eqn.params
  nc, nb = p["cond_nconsts"], p["body_nconsts"]
  cond_consts, body_consts, carry = ins[:nc], ins[nc:nc + nb], list(ins[nc + nb:])
  while True:  # the axes a carry may vary along only grow: a fixpoint
    pred, = _sub_vma(p["cond_jaxpr"], [*cond_consts, *carry], None)
    outs = _sub_vma(p["body_jaxpr"], [*body_consts, *carry], None)
    new = [c | o | pred for c, o in zip(carry, outs)]
    if new == carry:
      break
    carry = new
  if ctx is not None and pred & ctx.manual:
    sig = _collectives(p["cond_jaxpr"].jaxpr) + _collectives(p["body_jaxpr"].jaxpr)
    if sig:
      raise ValueError(
          "A while_loop (or fori_loop) inside shard_map whose predicate may differ between "
          f"devices (it varies along mesh axes {sorted(map(str, pred & ctx.manual))}) runs "
          f"collectives ({_show_collectives(sig)}): devices running different numbers of "
          "iterations would wait for each other forever. Make the predicate the same on "
          "every device (for example reduce it with pmax over those axes).")
  # Run once more with the check on, for the loops nested in the body.
  _sub_vma(p["cond_jaxpr"], [*cond_consts, *carry], ctx)
  _sub_vma(p["body_jaxpr"], [*body_consts, *carry], ctx)
  return carry


def _scan_vma(eqn, ins, ctx):
  p = eqn.params
  nc, ncar = p["num_consts"], p["num_carry"]
  consts, carry, xs = ins[:nc], list(ins[nc:nc + ncar]), ins[nc + ncar:]
  while True:
    outs = _sub_vma(p["jaxpr"], [*consts, *carry, *xs], None)
    new = [c | o for c, o in zip(carry, outs[:ncar])]
    if new == carry:
      break
    carry = new
  outs = _sub_vma(p["jaxpr"], [*consts, *carry, *xs], ctx)
  return [*carry, *outs[ncar:]]


_VMA_RULES = {"cond": _cond_vma, "while": _while_vma, "scan": _scan_vma}


def _check_collectives_agree(jaxpr: core.Jaxpr, in_vma, manual) -> list:
  """`_varying_axes` with the deadlock checks on (every shard_map body goes through it)."""
  return _varying_axes(jaxpr, in_vma, _VmaContext(manual))
