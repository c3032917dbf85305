"""Sharding rules: how splits over Explicit mesh axes pass through primitives.

An aval whose array is split over Explicit mesh axes carries a `sharding`
(see `core.ShapedArray`). When a primitive's operands carry one, its result
sharding is decided here at trace time, as JAX's sharding-in-types does:
elementwise operations merge their operands' specs (conflicts are errors),
reductions drop the reduced dimensions, transposes permute, broadcasts map
dimensions, dot_general keeps batch and free dimensions (and refuses
inconsistent or ambiguous contractions), reshapes keep splits that stay
whole. Lowering then pins every such value with ``sdy.sharding_constraint``,
so XLA lays it out as its type says. A primitive without a rule gives a
result of unspecified sharding (XLA chooses; values are the same).
"""
from __future__ import annotations

import math

from xjax._src import core
from xjax._src.array import Array
from xjax._src.sharding.mesh import AxisType, Mesh, get_concrete_mesh
from xjax._src.sharding.partition_spec import PartitionSpec, axes_of
from xjax._src.sharding.shardings import NamedSharding


def aval_sharding(sharding, ndim: int):
  """The sharding an aval carries for an array laid out as `sharding`: its Explicit
  axes over the abstract mesh, or None when the mesh has no Explicit axis."""
  if not isinstance(sharding, NamedSharding):
    return None
  mesh = sharding.mesh
  explicit = {n for n, t in zip(mesh.axis_names, mesh.axis_types) if t is AxisType.Explicit}
  if not explicit:
    return None
  entries = []
  for entry in sharding.spec._normalized_spec_for_aval(ndim):
    kept = tuple(a for a in axes_of(entry) if a in explicit)
    entries.append(None if not kept else kept[0] if len(kept) == 1 else kept)
  return NamedSharding(mesh.abstract_mesh, PartitionSpec(*entries))


def canonicalize_out_sharding(sharding, api_name: str):
  """An ``out_sharding=`` argument as a NamedSharding (None stays None).

  A bare PartitionSpec is taken over the context mesh (`jax.set_mesh`).

  Raises:
    TypeError: `sharding` is neither a NamedSharding nor a PartitionSpec.
    ValueError: a PartitionSpec outside any mesh context.

  Mirrors JAX's ``canonicalize_sharding`` (the errors are its texts).
  """
  if sharding is None:
    return None
  if isinstance(sharding, NamedSharding) and sharding.mesh.empty:
    return None
  if not isinstance(sharding, (NamedSharding, PartitionSpec)):
    raise TypeError(f"`out_sharding` argument of {api_name} only supports instances of "
                    f"`NamedSharding` or `PartitionSpec`. Got {sharding} of type: "
                    f"{type(sharding)}")
  if isinstance(sharding, PartitionSpec):
    mesh = get_concrete_mesh()
    if mesh is None or mesh.empty:
      raise ValueError("Using PartitionSpec when you are not under a mesh context is not "
                       "allowed. Please pass a NamedSharding instance or enter into a mesh "
                       f"context via `jax.set_mesh`. Got {sharding}")
    return NamedSharding(mesh, sharding)
  return sharding


def typed(aval, sharding):
  """`aval` typed as laid out by `sharding` (a NamedSharding; None leaves it as it is).

  Raises:
    ValueError: `sharding` does not divide `aval`'s shape.
  """
  if sharding is None:
    return aval
  sharding.check_shape(aval.shape)
  return aval.update(sharding=aval_sharding(sharding, len(aval.shape)))


def abstract_text(sharding) -> str:
  """How JAX prints an out_sharding param: the NamedSharding over the abstract mesh."""
  return f"NamedSharding(mesh={sharding.mesh.abstract_mesh!r}, spec={sharding.spec!r})"


def bind_with_out_sharding(prim, args, params, key: str = "out_sharding"):
  """`prim.bind(*args, **params)`, whose `params[key]` asks for a result sharding.

  Traced, or on arrays over a mesh already, the result is typed and laid out by
  the param. Eagerly on single-device values, it is computed there and then
  placed on the sharding (over the concrete mesh), as JAX returns it.
  """
  from xjax._src.sharding import spmd
  sharding = params[key]
  if (sharding is None or not isinstance(core.current_trace(), core.EvalTrace)
      or any(isinstance(a, core.Tracer) for a in args)
      or any(type(a) is Array and a._sharding is not None for a in args)):
    return prim.bind(*args, **params)
  out = prim.bind(*args, **{**params, key: None})
  mesh = sharding.mesh if isinstance(sharding.mesh, Mesh) else get_concrete_mesh()
  if mesh is None:
    return out
  return spmd.place(out, NamedSharding(mesh, sharding.spec))


def _spec(aval) -> tuple:
  return tuple(aval.sharding.spec)


def _entries_text(spec) -> str:
  return "(" + ", ".join(repr(e) for e in spec) + ("," if len(spec) == 1 else "") + ")"


def _with(aval, mesh, spec):
  if all(e is None for e in spec) and mesh is None:
    return aval.update(sharding=None)
  return aval.update(sharding=NamedSharding(mesh, PartitionSpec(*spec)))


def _mesh(avals):
  for a in avals:
    s = getattr(a, "sharding", None)
    if s is not None:
      return s.mesh
  return None


def _elementwise(prim, avals, params, outs):
  mesh = _mesh(avals)
  result = []
  for out in outs:
    if not isinstance(out, core.ShapedArray):
      result.append(out)
      continue
    specs = [_spec(a) for a in avals
             if getattr(a, "sharding", None) is not None and a.shape == out.shape]
    if not specs or len(specs[0]) != len(out.shape):
      result.append(out.update(sharding=None))
      continue
    merged = []
    for dim in range(len(out.shape)):
      entries = {s[dim] for s in specs if s[dim] is not None}
      if len(entries) > 1:
        raise core.ShardingTypeError(
            f"{prim.name} got incompatible shardings for broadcasting: "
            + ", ".join(_entries_text(s) for s in specs) + ".")
      merged.append(entries.pop() if entries else None)
    result.append(_with(out, mesh, merged))
  return result


def _reduction(prim, avals, params, outs):
  axes = params.get("axes", params.get("dimensions", ()))
  a = avals[0]
  spec = [e for i, e in enumerate(_spec(a)) if i not in axes]
  return [_with(o, a.sharding.mesh, spec) if len(o.shape) == len(spec) else o for o in outs]


def _transpose(prim, avals, params, outs):
  a = avals[0]
  spec = _spec(a)
  return [_with(outs[0], a.sharding.mesh, [spec[i] for i in params["permutation"]])]


def _broadcast_in_dim(prim, avals, params, outs):
  if params.get("sharding") is not None:
    return outs  # typed by the abstract eval
  a = avals[0]
  if getattr(a, "sharding", None) is None:
    return outs
  spec = [None] * len(outs[0].shape)
  for src, dst in enumerate(params["broadcast_dimensions"]):
    if a.shape[src] == outs[0].shape[dst]:
      spec[dst] = _spec(a)[src]
  return [_with(outs[0], a.sharding.mesh, spec)]


def _squeeze(prim, avals, params, outs):
  a = avals[0]
  dims = params["dimensions"]
  return [_with(outs[0], a.sharding.mesh, [e for i, e in enumerate(_spec(a)) if i not in dims])]


def _axis_size(mesh, entry) -> int:
  return math.prod(mesh.shape[n] for n in axes_of(entry))


class _SeveralSplits(Exception):
  """A reshape that splits (or merges) more than one dimension."""


def _refinement(short, long):
  """How `long` refines `short` when one dimension of `short` becomes several consecutive
  dimensions of `long` and every other dimension stays: per dimension of `short`, its size,
  or the list of sizes of `long` it becomes (trailing size-1 dimensions of `long` join the
  group before them). None when `long` is no such refinement.

  Raises:
    _SeveralSplits: more than one dimension of `short` splits.
  """
  short, long = list(short), list(long)
  if len(long) <= len(short):
    return None
  trailing_ones = 0
  while short and long and short[-1] == 1 and long[-1] == 1:
    short.pop()
    long.pop()
    trailing_ones += 1
  groups, i, j = [], 0, 0
  while j < len(long):
    if i >= len(short):
      return None
    if short[i] == long[j]:
      groups.append(short[i])
    else:
      if any(isinstance(g, list) for g in groups):
        raise _SeveralSplits
      group = [long[j]]
      while math.prod(group) != short[i] or (j + 1 < len(long) and long[j + 1] == 1):
        if math.prod(group) > short[i]:
          return None
        if (math.prod(group) == short[i] and i + 1 < len(short)
            and long[j + 1] == short[i + 1]):
          break
        j += 1
        if j >= len(long):
          return None
        group.append(long[j])
      groups.append(group)
    i, j = i + 1, j + 1
  if len(groups) != len(short):
    return None
  return groups + [1] * trailing_ones


def _reshape_error(a, new_sizes):
  return core.ShardingTypeError(
      "This reshape is not supported. Please specify the sharding of the output via the "
      "`out_sharding` argument of jax.lax.reshape. Got operand type: "
      f"{a.str_short()}, new sizes: {tuple(new_sizes)}")


def _spread_axes(mesh, axes, sizes, a, new_sizes) -> list:
  """Mesh `axes` (major first) laid over consecutive dimensions of `sizes`: each dimension
  takes axes while its size is still split further, and each must divide what is left."""
  axes = list(axes)
  entries = []
  for size in sizes:
    taken = []
    while size > 1 and axes:
      size, rest = divmod(size, mesh.shape[axes[0]])
      if rest:
        raise _reshape_error(a, new_sizes)
      taken.append(axes.pop(0))
    entries.append(tuple(taken))
  if axes:
    raise _reshape_error(a, new_sizes)
  return entries


def _reshape(prim, avals, params, outs):
  """JAX's reshape rule: size-1 dimensions come and go unsharded; one dimension split into
  several spreads its mesh axes over them, major first; several merged into one take their
  axes in order (only a sharded leading part may merge); anything else needs out_sharding."""
  if params.get("sharding") is not None:
    return outs  # typed by the abstract eval
  a, out = avals[0], outs[0]
  spec, mesh = _spec(a), a.sharding.mesh
  in_shape, new_sizes = tuple(a.shape), tuple(out.shape)
  if all(e is None for e in spec):
    return [_with(out, mesh, [None] * len(new_sizes))]
  if [n for n in in_shape if n != 1] == [n for n in new_sizes if n != 1]:
    kept = iter(e for n, e in zip(in_shape, spec) if n != 1)
    return [_with(out, mesh, [None if n == 1 else next(kept) for n in new_sizes])]
  transposed = params.get("dimensions") is not None
  try:
    split = _refinement(in_shape, new_sizes)
    merge = None if split is not None else _refinement(new_sizes, in_shape)
  except _SeveralSplits:
    raise _reshape_error(a, new_sizes) from None
  out_spec = []
  if split is not None:
    for entry, group in zip(spec, split):
      if not isinstance(group, list):
        out_spec.append(entry)
      elif entry is None:
        out_spec.extend([None] * len(group))
      elif transposed:
        raise _reshape_error(a, new_sizes)
      else:
        out_spec.extend(_spread_axes(mesh, axes_of(entry), group, a, new_sizes))
  elif merge is not None:
    entries = iter(spec)
    for size, group in zip(new_sizes, merge):
      if not isinstance(group, list):
        out_spec.append(next(entries))
        continue
      merged = [next(entries) for _ in group]
      if all(e is None for e in merged):
        out_spec.append(None)
        continue
      if transposed:
        raise _reshape_error(a, new_sizes)
      while merged[-1] is None:
        merged.pop()
      if any(e is None for e in merged):
        raise _reshape_error(a, new_sizes)
      out_spec.extend(_spread_axes(mesh, [n for e in merged for n in axes_of(e)], [size], a,
                                   new_sizes))
  else:
    raise _reshape_error(a, new_sizes)
  return [_with(out, mesh, out_spec)]


def _dot_general(prim, avals, params, outs):
  if params.get("out_sharding") is not None:
    return outs  # typed by the abstract eval: it resolves every ambiguity
  lhs, rhs = avals[0], avals[1]
  (lc, rc), (lb, rb) = params["dimension_numbers"]
  ls = _spec(lhs) if lhs.sharding is not None else (None,) * len(lhs.shape)
  rs = _spec(rhs) if rhs.sharding is not None else (None,) * len(rhs.shape)
  mesh = _mesh(avals)
  lcs, rcs = tuple(ls[d] for d in lc), tuple(rs[d] for d in rc)
  # A contraction split on one side only is gathered; split on both, it must agree, and
  # then the result (a partial sum per device) needs an explicit out_sharding.
  if any(l is not None and r is not None and l != r for l, r in zip(lcs, rcs)):
    raise core.ShardingTypeError(
        f"dot_general requires contracting dimensions to have consistent sharding, got "
        f"{_entries_text(lcs)} and {_entries_text(rcs)}.")
  if any(l is not None and r is not None for l, r in zip(lcs, rcs)):
    raise core.ShardingTypeError(
        "Contracting dimensions are sharded and it is ambiguous how the output should be "
        "sharded. Please specify the output sharding via the `out_sharding` parameter. Got "
        f"lhs_contracting_spec={_entries_text(lcs)} and rhs_contracting_spec={_entries_text(rcs)}")
  batch = []
  for dl, dr in zip(lb, rb):
    if ls[dl] != rs[dr] and ls[dl] is not None and rs[dr] is not None:
      raise core.ShardingTypeError(
          f"dot_general requires lhs batch dimensions and rhs batch dimensions to have the "
          f"consistent sharding, got {ls[dl]!r} and {rs[dr]!r}.")
    batch.append(ls[dl] if ls[dl] is not None else rs[dr])
  free_l = [ls[d] for d in range(len(ls)) if d not in lc and d not in lb]
  free_r = [rs[d] for d in range(len(rs)) if d not in rc and d not in rb]
  spec = batch + free_l + free_r
  used = [a for e in spec for a in axes_of(e)]
  if len(used) != len(set(used)):
    raise core.ShardingTypeError(
        f"dot_general operands {lhs.str_short()} and {rhs.str_short()} would shard the output "
        f"along one mesh axis twice: {_entries_text(tuple(spec))}. Reshard an operand first.")
  return [_with(outs[0], mesh, spec)]


def _check_varying_shape(a, out_shape, name: str):
  """JAX's check for results whose shape may differ from the operand's (slices, pads,
  windows, splits): a sharded dimension that changes size must stay divisible."""
  spec, mesh = _spec(a), a.sharding.mesh
  for d, (n_in, n_out) in enumerate(zip(a.shape, out_shape)):
    if spec[d] is not None and n_in != n_out and n_out % _axis_size(mesh, spec[d]):
      raise core.ShardingTypeError(
          f"{name} on sharded dims where out dim ({n_out}) is not divisible by mesh axes "
          f"({_axis_size(mesh, spec[d])}) with spec ({','.join(axes_of(spec[d]))}) is not "
          f"implemented. Got input type={a.str_short(short_dtypes=True)} and output "
          f"shape={tuple(out_shape)}")


def _like_operand(name: str, index: int = 0):
  """The rule of a primitive whose results keep operand `index`'s sharding, their shape
  possibly changed (`name` is how JAX's error names it)."""
  def rule(prim, avals, params, outs):
    a = avals[index]
    if getattr(a, "sharding", None) is None:
      return [o.update(sharding=None) for o in outs]
    result = []
    for out in outs:
      _check_varying_shape(a, out.shape, name)
      result.append(_with(out, a.sharding.mesh, list(_spec(a))))
    return result
  return rule


def _same_shardings(avals) -> NamedSharding | None:
  """The one sharding of the operands that have one, or None; ShardingTypeError (JAX's
  text) when they differ."""
  typed = [a.sharding for a in avals if getattr(a, "sharding", None) is not None]
  if any(t != typed[0] for t in typed[1:]):
    raise core.ShardingTypeError("All operands should have the same sharding. Got shardings "
                                 + ", ".join(str(getattr(a, "sharding", None)) for a in avals))
  return typed[0] if typed else None


def _concatenate(prim, avals, params, outs):
  sharding = _same_shardings(avals)
  return [outs[0].update(sharding=sharding)]


def _stack(prim, avals, params, outs):
  sharding = _same_shardings(avals)
  if sharding is None:
    return outs
  spec = list(sharding.spec._normalized_spec_for_aval(len(avals[0].shape)))
  spec.insert(params["axis"], None)
  return [_with(outs[0], sharding.mesh, spec)]


def _unstack(prim, avals, params, outs):
  a, axis = avals[0], params["axis"]
  spec = list(_spec(a))
  if spec[axis] is not None:
    raise core.ShardingTypeError(
        f"unstack operand cannot be sharded on the unstacking axis {axis}. Got operand "
        f"type={a.str_short(short_dtypes=True)}")
  del spec[axis]
  return [_with(o, a.sharding.mesh, spec) for o in outs]


def _select_n(prim, avals, params, outs):
  which, cases = avals[0], avals[1:]
  typed = [c.sharding for c in cases if getattr(c, "sharding", None) is not None]
  if not typed:
    return [outs[0].update(sharding=None)]
  if any(t != typed[0] for t in typed[1:]):
    raise core.ShardingTypeError(
        "select cases must have the same shardings, got ["
        + ", ".join(str(getattr(c, "sharding", None)) for c in cases) + "].")
  ws = getattr(which, "sharding", None)
  if which.shape and ws is not None and (ws.mesh != typed[0].mesh or ws.spec != typed[0].spec):
    raise core.ShardingTypeError(
        f"select `which` must be scalar or have the same sharding as cases, got `which` "
        f"sharding {ws} but case sharding {typed[0]}.")
  return [outs[0].update(sharding=typed[0])]


def _dynamic_update_slice(prim, avals, params, outs):
  operand, update = avals[0], avals[1]
  us = getattr(update, "sharding", None)
  if operand.sharding is not None and us is not None and operand.sharding != us:
    raise core.ShardingTypeError(
        "dynamic_update_slice operand sharding must be equal to update sharding, got operand "
        f"sharding {operand.str_short()} and update sharding {update.str_short()}.")
  return [outs[0].update(sharding=operand.sharding if operand.sharding is not None else us)]


def _cumulative(prim, avals, params, outs):
  a = avals[0]
  if _spec(a)[params["axis"]] is not None:
    raise core.ShardingTypeError(
        f"Input should be unsharded over the axis being reduced. Got input type={a.str_short()} "
        f"and axis={params['axis']}")
  return [outs[0].update(sharding=a.sharding)]


def _sort(prim, avals, params, outs):
  dim = params["dimension"]
  typed = [a.sharding for a in avals if getattr(a, "sharding", None) is not None]
  for s in typed:
    if tuple(s.spec._normalized_spec_for_aval(len(avals[0].shape)))[dim] is not None:
      raise core.ShardingTypeError(
          "Arguments to sort must be unsharded over the sorting dimension. Got arg "
          f"sharding={s} and sorting dimension={dim}")
    if s != typed[0]:
      raise core.ShardingTypeError("Arguments to sort must have equal shardings, got: "
                                   + " ".join(str(t) for t in typed))
  return [o.update(sharding=getattr(a, "sharding", None)) for o, a in zip(outs, avals)]


def _conv_general_dilated(prim, avals, params, outs):
  if params.get("out_sharding") is not None:
    return outs  # typed by the abstract eval
  lhs, rhs = avals[0], avals[1]
  rs = getattr(rhs, "sharding", None)
  lhs_spec = _spec(lhs) if lhs.sharding is not None else (None,) * len(lhs.shape)
  feature_dim = params["dimension_numbers"].lhs_spec[1]
  if (rs is None or all(e is None for e in _spec(rhs))) and lhs_spec[feature_dim] is None:
    if lhs.sharding is None:
      return [outs[0].update(sharding=None)]
    _check_varying_shape(lhs, outs[0].shape, "conv_general_dilated")
    return [_with(outs[0], lhs.sharding.mesh, list(lhs_spec))]
  raise core.ShardingTypeError(
      "Please specify the output sharding via `out_sharding` parameter of "
      "`conv_general_dilated`")


def _select_and_gather_add(prim, avals, params, outs):
  tangents, operand = avals
  if getattr(tangents, "sharding", None) != operand.sharding:
    raise core.ShardingTypeError(
        "select_and_gather_add tangents and operand shardings must match, got "
        f"{getattr(tangents, 'sharding', None)} and {operand.sharding}.")
  return _like_operand("reduce_window", 1)(prim, avals, params, outs)


def _as_typed(prim, avals, params, outs):
  return outs  # the primitive's abstract eval gives the result's type itself


_RULES = {
    "reshard": _as_typed, "sharding_constraint": _as_typed,
    "transpose": _transpose, "broadcast_in_dim": _broadcast_in_dim, "squeeze": _squeeze,
    "reshape": _reshape, "dot_general": _dot_general,
    "slice": _like_operand("slicing"), "dynamic_slice": _like_operand("dynamic_slice"),
    "pad": _like_operand("padding"), "split": _like_operand("split"), "rev": _like_operand("rev"),
    "clamp": _like_operand("clamp", 1), "concatenate": _concatenate, "stack": _stack,
    "unstack": _unstack, "select_n": _select_n, "dynamic_update_slice": _dynamic_update_slice,
    "sort": _sort, "conv_general_dilated": _conv_general_dilated,
    "select_and_gather_add": _select_and_gather_add,
    "select_and_scatter_add": _like_operand("select_and_scatter_add", 1),
    "select_and_scatter": _like_operand("select_and_scatter"),
    **{name: _like_operand("reduce_window") for name in (
        "reduce_window_sum", "reduce_window_max", "reduce_window_min", "reduce_window")},
    **{name: _cumulative for name in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp")},
    **{name: _reduction for name in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min",
                                     "reduce_and", "reduce_or", "reduce_xor", "argmax", "argmin",
                                     "reduce", "reduce_precision_reduce")},
}


def apply(prim, avals, params, out):
  """The abstract result of `prim` with the sharding its rule gives (see the module doc)."""
  outs = list(out) if prim.multiple_results else [out]
  rule = _RULES.get(prim.name)
  if rule is None:
    # Higher-order primitives (jit, cond, scan, custom rules...) type their results from
    # their jaxprs; the rest without a rule of their own are elementwise.
    typed_by_jaxpr = any(isinstance(v, (core.Jaxpr, core.ClosedJaxpr)) or
                         (isinstance(v, tuple) and v and isinstance(v[0], core.ClosedJaxpr))
                         for v in params.values())
    rule = _as_typed if typed_by_jaxpr else _elementwise
  if rule is _reduction and "axes" not in params and "dimensions" not in params:
    rule = _elementwise
  result = rule(prim, avals, params, outs)
  return result if prim.multiple_results else result[0]


core.sharding_rule_hook = apply
