"""Shared machinery of the control-flow primitives.

* `trace_to_jaxpr` traces a user function (a pytree function) once into a
  closed jaxpr whose captured values (outer tracers and constant arrays) are
  explicit leading inputs: they become the primitive's "consts" operands.
* Jaxpr surgery the primitives need: forwarding analysis, pruning outputs,
  moving binders, dead-code elimination, joining the consts of branches.
* The carry and branch type checks, with JAX's error messages.
* `jvp_jaxpr` and `batch_jaxpr` wrappers that report which outputs are
  nonzero / batched, for the fixpoints of the loop rules.
* `empty2`, the placeholder value partial evaluation fills a branch's unused
  residual slots with (JAX's `empty2` primitive).
"""
from __future__ import annotations

import enum
import weakref

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import executable_cache
from xjax._src import source_info
from xjax._src import tree_util
from xjax._src.api_util import flatten_fun_nokwargs, fun_signature
from xjax._src.interpreters import lowering
from xjax._src.interpreters import partial_eval as pe
from xjax._src.lax.elementwise import convert_element_type
from xjax._src.lax.structural import broadcast_in_dim

# ----------------------------------------------------------------------------
# Tracing sub-functions

# Per user function (weakly): its traces by (in_tree, avals, what for, key, trace context).
_trace_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
executable_cache.on_clear(_trace_cache.clear)
_TRACES_PER_FUNCTION = 256


def trace_to_jaxpr(fun, in_tree, in_avals, traced_for: str, arg_names=None, key=None):
  """Traces `fun` (taking the pytree `in_tree` of `in_avals`) once.

  Returns ``(jaxpr, consts, out_tree)``: `jaxpr` is a ClosedJaxpr without
  constants whose first inputs stand for `consts` (the values `fun` closes
  over), followed by the flat arguments. Traces are cached per function when
  nothing captured is a tracer (as JAX caches its control-flow jaxprs).
  """
  cache_key = (in_tree, tuple(in_avals), traced_for, key, core.trace_context())
  try:
    per_fun = _trace_cache.get(fun)
    if per_fun is None:
      per_fun = _trace_cache.setdefault(
          fun, executable_cache.LRUCache("control-flow traces", _TRACES_PER_FUNCTION))
  except TypeError:  # not weakly referenceable: not cached
    per_fun = executable_cache.LRUCache("control-flow traces", 1)
  hit = per_fun.get(cache_key)
  if hit is not None:
    return hit
  flat_fun, out_tree = flatten_fun_nokwargs(fun, in_tree)
  info = pe.DebugInfo(traced_for, source_info.fun_sourceinfo(fun), arg_names)
  closed = pe.trace_to_jaxpr(flat_fun, list(in_avals), info)
  jaxpr, consts = pe.convert_constvars_jaxpr(closed)
  result = (jaxpr, consts, out_tree.val)
  if not any(isinstance(c, core.Tracer) for c in consts):
    per_fun.put(cache_key, result)
  return result


def carry_arg_names(fun, tree):
  """Leaf names ``x``, ``x[0]`` ... of the first parameter of `fun` (for error messages)."""
  sig = fun_signature(fun)
  names = list(sig.parameters) if sig is not None else []
  base = names[0] if names else "args[0]"
  return base, [base + tree_util.keystr(p) for p, _ in
                tree_util.tree_flatten_with_path(tree_util.tree_unflatten(
                    tree, [0] * tree.num_leaves))[0]]


def typecheck_param(prim: str, param, name: str, required: str, ok: bool) -> None:
  """Raises JAX's JaxprTypeError for a malformed parameter of a control-flow equation:
  ``invalid scan param reverse of type int, bool required: 4`` (the value on its own line
  when it prints on several)."""
  if not ok:
    text = str(param)
    sep = "\n" if "\n" in text or "\r" in text else " "
    raise core.JaxprTypeError(
        f"invalid {prim} param {name} of type {type(param).__name__}, {required} required:"
        f"{sep}{text}")


def typematch(a, b) -> bool:
  """Equal shapes and dtypes (weak types may differ), as JAX's `core.typematch`."""
  return a.shape == b.shape and a.dtype == b.dtype


def promote_weak_typed_inputs(vals, in_avals, out_avals):
  """Converts weakly typed initial carries whose type the body changes; (vals, changed)."""
  out, changed = [], False
  for v, a_in, a_out in zip(vals, in_avals, out_avals):
    if a_in.weak_type and not typematch(a_in, a_out):
      new_dtype = dtypes.result_type(v, a_out.dtype)
      out.append(convert_element_type(v, new_dtype))
      changed = True
    else:
      out.append(v)
  return out, changed


# ----------------------------------------------------------------------------
# Type-check errors (JAX's wording)


def _capitalize(s: str) -> str:
  return s[0].upper() + s[1:]


class _LeafType(type):
  def __repr__(cls):
    return "pytree leaf"


_LEAF = _LeafType("Leaf", (), {})()


def equality_errors(t1, t2, path=()):
  """(path, thing1, thing2, explanation) for each structural difference of two pytrees."""
  leaf1 = tree_util.treedef_is_strict_leaf(tree_util.tree_structure(t1))
  leaf2 = tree_util.treedef_is_strict_leaf(tree_util.tree_structure(t2))
  if leaf1 and leaf2:
    return
  if type(t1) is not type(t2):
    name = lambda t: "pytree leaf" if type(t) is _LeafType or t is _LEAF else str(type(t))
    yield path, name(t1), name(t2), "their Python types differ"
    return
  if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
    yield (path, f"{type(t1).__name__} of length {len(t1)}",
           f"{type(t2).__name__} of length {len(t2)}", "the lengths do not match")
    return
  c1, meta1 = tree_util.flatten_one_level_with_keys(t1)
  c2, meta2 = tree_util.flatten_one_level_with_keys(t2)
  if len(c1) != len(c2):
    yield (path, f"{type(t1)} with {len(c1)} child{'ren' if len(c1) > 1 else ''}",
           f"{type(t2)} with {len(c2)} child{'ren' if len(c2) > 1 else ''}",
           "the numbers of children do not match")
    return
  if meta1 != meta2:
    yield (path, f"{type(t1)} with pytree metadata {meta1}",
           f"{type(t2)} with pytree metadata {meta2}", "the pytree node metadata does not match")
    return
  for (k, a), (_, b) in zip(c1, c2):
    yield from equality_errors(a, b, (*path, k))


def _leafy(tree):
  return tree_util.tree_unflatten(tree, [_LEAF] * tree.num_leaves)


def _join_diffs(diffs) -> str:
  if len(diffs) == 1:
    return f"{_capitalize(diffs[0])}.\n"
  return "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"


def aval_mismatch_extra(a1, a2) -> str:
  mismatches = []
  if a1.dtype != a2.dtype:
    mismatches.append("the dtypes do not match")
  if a1.shape != a2.shape:
    mismatches.append("the shapes do not match")
  if not mismatches:
    return ""
  if len(mismatches) == 1:
    return ", so " + mismatches[0]
  return ", so " + ", ".join(mismatches[:-1]) + ", and " + mismatches[-1]


def check_carry_type(name: str, body_fun, in_tree, in_avals, out_tree, out_avals) -> None:
  """JAX's TypeError when a loop body's carry output differs from its input."""
  sig = fun_signature(body_fun)
  carry_name = list(sig.parameters)[0] if sig is not None and sig.parameters else None
  if carry_name:
    component = lambda p: (f"the input carry component {carry_name}{tree_util.keystr(p)}"
                           if p else f"the input carry {carry_name}")
  else:
    component = lambda p: (f"the input carry at path {tree_util.keystr(p)}"
                           if p else "the input carry")
  if in_tree != out_tree:
    in_carry = tree_util.tree_unflatten(in_tree, list(in_avals))
    out_carry = tree_util.tree_unflatten(out_tree, list(out_avals))
    diffs = [f"{component(p)} is a {t1} but the corresponding component of the carry "
             f"output is a {t2}, so {why}" for p, t1, t2, why in equality_errors(in_carry, out_carry)]
    if not diffs:
      return
    raise TypeError(
        f"{name} function carry input and carry output must have the same pytree "
        f"structure, but they differ:\n\n{_join_diffs(diffs)}\n"
        "Revise the function so that the carry output has the same pytree structure "
        "as the carry input.")
  if all(map(typematch, in_avals, out_avals)):
    return
  paths = [p for p, _ in tree_util.tree_flatten_with_path(_leafy(in_tree), is_leaf=lambda x: x is _LEAF)[0]]
  diffs = [f"{component(p)} has type {a.str_short()} but the corresponding output carry "
           f"component has type {b.str_short()}{aval_mismatch_extra(a, b)}"
           for p, a, b in zip(paths, in_avals, out_avals) if not typematch(a, b)]
  raise TypeError(
      f"{name} function carry input and carry output must have equal types, but they "
      f"differ:\n\n{_join_diffs(diffs)}\n"
      "Revise the function so that all output types match the corresponding input types.")


def check_branch_outputs(api_name, name1, name2, f1, f2, tree1, avals1, tree2, avals2) -> None:
  """JAX's TypeError when two branches of cond/switch return different types."""
  info1 = source_info.fun_sourceinfo(f1)
  info2 = source_info.fun_sourceinfo(f2)
  paths = [p for p, _ in tree_util.tree_flatten_with_path(_leafy(tree1), is_leaf=lambda x: x is _LEAF)[0]]
  component = lambda p: f" at path {tree_util.keystr(p)}" if p else ""
  if tree1 != tree2:
    diffs = [f"{name1} output{component(p)} is a {t1} but {name2} output{component(p)} is "
             f"a {t2}, so {why}" for p, t1, t2, why in equality_errors(_leafy(tree1), _leafy(tree2))]
    if not diffs:
      return
    differences = (f"{diffs[0]}.\n" if len(diffs) == 1 else
                   "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n")
    raise TypeError(
        f"{api_name} branch outputs must have the same pytree structure, but they differ:\n\n"
        f"{name1} is {info1}\n{name2} is {info2}\n\n{differences}\n"
        f"Revise {name1} and/or {name2} so that they have the same pytree structure.")
  if all(map(typematch, avals1, avals2)):
    return
  diffs = [f"the output of {name1}{component(p)} has type {a.str_short()} but the "
           f"corresponding output of {name2} has type {b.str_short()}{aval_mismatch_extra(a, b)}"
           for p, a, b in zip(paths, avals1, avals2) if not typematch(a, b)]
  differences = (f"{_capitalize(diffs[0])}.\n" if len(diffs) == 1 else
                 "\n".join(f"  * {d};" for d in diffs[:-1]) + f"\n  * {diffs[-1]}.\n")
  raise TypeError(
      f"{api_name} branches must have equal output types but they differ.\n\n"
      f"{name1} is {info1}\n{name2} is {info2}\n\n{differences}\n"
      f"Revise {name1} and/or {name2} so that all output types match.")


# ----------------------------------------------------------------------------
# Jaxpr surgery


def jaxpr_forwarding(jaxpr: core.Jaxpr) -> list:
  """For each output, the index of the input it is (unchanged), else None."""
  where = {v: i for i, v in enumerate(jaxpr.invars)}
  return [where.get(v) if type(v) is not core.Literal else None for v in jaxpr.outvars]


def prune_outputs(closed: core.ClosedJaxpr, keep) -> core.ClosedJaxpr:
  outvars = [v for v, k in zip(closed.jaxpr.outvars, keep, strict=True) if k]
  return core.ClosedJaxpr(closed.jaxpr.replace(outvars=outvars), closed.consts)


def move_binders_to_front(closed: core.ClosedJaxpr, to_move) -> core.ClosedJaxpr:
  invars = closed.jaxpr.invars
  moved = [v for v, m in zip(invars, to_move, strict=True) if m]
  rest = [v for v, m in zip(invars, to_move) if not m]
  return core.ClosedJaxpr(closed.jaxpr.replace(invars=moved + rest), closed.consts)


def move_binders_to_back(closed: core.ClosedJaxpr, to_move) -> core.ClosedJaxpr:
  invars = closed.jaxpr.invars
  moved = [v for v, m in zip(invars, to_move, strict=True) if m]
  rest = [v for v, m in zip(invars, to_move) if not m]
  return core.ClosedJaxpr(closed.jaxpr.replace(invars=rest + moved), closed.consts)


def merge_lists(which, falses, trues) -> list:
  """Interleaves: position i takes the next of `trues` if which[i] else of `falses`."""
  f, t = iter(falses), iter(trues)
  out = [next(t) if w else next(f) for w in which]
  return out


def partition_list(which, xs):
  return ([x for x, w in zip(xs, which, strict=True) if not w],
          [x for x, w in zip(xs, which) if w])


def join_consts(jaxprs, consts_lists):
  """Gives every jaxpr the same leading const inputs (the union of their consts, by identity).

  As JAX's `_merge_common_consts`: each jaxpr gets fresh inputs for the other jaxprs' consts
  (`_pad_constvars`), then the consts given more than once collapse into their first
  occurrence (`_dedup_consts`). Both steps are cached per jaxpr, so tracing the same branches
  again gives the same jaxprs (equal `cond` params)."""
  consts = [c for cs in consts_lists for c in cs]
  avals = tuple(core.get_aval(c) for c in consts)
  first: dict = {}
  pattern = tuple(first.setdefault(id(c), i) for i, c in enumerate(consts))
  new_jaxprs, start = [], 0
  for jaxpr, cs in zip(jaxprs, consts_lists, strict=True):
    n = len(cs)
    padded = _pad_constvars(jaxpr, n, avals[:start], avals[start + n:])
    new_jaxprs.append(_dedup_consts(padded, len(consts), pattern))
    start += n
  return new_jaxprs, [c for i, c in enumerate(consts) if pattern[i] == i]


class _JaxprRewrite:
  """A rewrite of closed jaxprs, cached weakly on the jaxpr by its other arguments; its
  `cache_clear()` empties the cache (as JAX's `weakref_lru_cache` functions)."""

  def __init__(self, fun):
    self._fun = fun
    self._cache = executable_cache.DerivedCache(fun.__name__)
    self.__name__ = fun.__name__
    self.__doc__ = fun.__doc__

  def __call__(self, closed: core.ClosedJaxpr, *args):
    return self._cache.get_or_build(closed, args, lambda: self._fun(closed, *args))

  def cache_clear(self) -> None:
    self._cache.clear()


@_JaxprRewrite
def _pad_constvars(closed: core.ClosedJaxpr, num_consts: int, left: tuple, right: tuple):
  """`closed` with fresh (unused) inputs of avals `left` before its `num_consts` leading const
  inputs and of avals `right` after them (mirrors JAX's private `_pad_constvars`)."""
  invars = closed.jaxpr.invars
  invars = ([core.Var(a) for a in left] + invars[:num_consts] + [core.Var(a) for a in right]
            + invars[num_consts:])
  return core.ClosedJaxpr(closed.jaxpr.replace(invars=invars), closed.consts)


@_JaxprRewrite
def _dedup_consts(closed: core.ClosedJaxpr, num_consts: int, pattern: tuple):
  """`closed` with its `num_consts` leading inputs merged where `pattern` (for each, the
  position of the first input holding the same const) says they are one const: one input
  per distinct const, the others renamed to it (mirrors JAX's private `_dedup_consts`)."""
  jaxpr = closed.jaxpr
  consts = jaxpr.invars[:num_consts]
  used = {v for e in jaxpr.eqns for v in e.invars if isinstance(v, core.Var)}
  used.update(v for v in jaxpr.outvars if isinstance(v, core.Var))
  # Each group keeps the input the jaxpr reads (the padded ones are unused), else its first.
  keep = {}
  for i, v in enumerate(consts):
    if pattern[i] not in keep or (v in used and keep[pattern[i]] not in used):
      keep[pattern[i]] = v
  rename = {v: keep[pattern[i]] for i, v in enumerate(consts)
            if v in used and v is not keep[pattern[i]]}
  if rename:
    sub = lambda xs: [rename.get(x, x) if isinstance(x, core.Var) else x for x in xs]  # noqa: E731
    jaxpr = jaxpr.replace(eqns=[e.replace(invars=sub(e.invars)) for e in jaxpr.eqns],
                          outvars=sub(jaxpr.outvars))
  invars = [keep[i] for i in range(num_consts) if pattern[i] == i]
  return core.ClosedJaxpr(jaxpr.replace(invars=invars + jaxpr.invars[num_consts:]),
                          closed.consts)


# ----------------------------------------------------------------------------
# Transformed jaxprs


# ----------------------------------------------------------------------------
# Placeholders for residuals a branch does not produce


class MemorySpace(enum.Enum):
  """Where an array lives (printed in `empty2`'s params). Mirrors JAX's `core.MemorySpace`."""
  Device = enum.auto()
  Host = enum.auto()
  Any = enum.auto()


empty2_p = core.Primitive("empty2")


@empty2_p.def_abstract_eval
def _empty2_abstract_eval(*, dtype, memory_space):
  return core.ShapedArray((), dtype)


@empty2_p.def_lowering
def _empty2_lowering(ctx, *, dtype, memory_space):
  # The value is never read: zeros are as good as anything.
  return ctx.constant(np.zeros((), ctx.avals_out[0].dtype))


def empty_like(aval: core.ShapedArray):
  """An array of `aval`'s shape and dtype with unspecified contents (zeros, in practice).

  Mirrors JAX's `ad_util.empty_like_aval`: an `empty2` scalar broadcast to the shape.
  """
  value = empty2_p.bind(dtype=aval.dtype, memory_space=MemorySpace.Device)
  return broadcast_in_dim(value, aval.shape, ()) if aval.shape else value


# ----------------------------------------------------------------------------
# Eager evaluation and lowering helpers


def region(ctx, arg_types, body) -> str:
  """A StableHLO region; its block takes `arg_types` (none: no block header, as `case` needs).

  `body(sub_ctx, args)` emits the operations and returns the values to return.
  """
  sub = lowering.LoweringContext(ctx.module, ctx.counter, ctx.indent + "  ")
  args = [lowering.Value(f"%arg_r{next(ctx.counter)}", t) for t in arg_types]
  results = body(sub, args)
  sub.lines.append(sub.indent + f'"stablehlo.return"({", ".join(v.name for v in results)}) : '
                   f'({", ".join(v.type for v in results)}) -> ()')
  head = ""
  if arg_types:
    head = ctx.indent + "^bb0(" + ", ".join(f"{a.name}: {a.type}" for a in args) + "):\n"
  return "{\n" + head + "\n".join(sub.lines) + "\n" + ctx.indent + "}"


# ----------------------------------------------------------------------------
# Refs through loops (the discharge rules of scan and while_loop)


def partition(mask, values):
  """(values where not mask, values where mask)."""
  return ([v for v, m in zip(values, mask) if not m], [v for v, m in zip(values, mask) if m])


def ref_loop_body(disch: core.ClosedJaxpr, ref_mask, n_lead: int):
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
