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
  if (sharding is None or any(isinstance(a, core.Tracer) for a in args)
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


def _reshape(prim, avals, params, outs):
  if params.get("sharding") is not None:
    return outs  # typed by the abstract eval
  a = avals[0]
  spec = _spec(a)
  if all(e is None for e in spec):
    return [_with(outs[0], a.sharding.mesh, [None] * len(outs[0].shape))]
  mesh = a.sharding.mesh
  in_shape, out_shape = a.shape, outs[0].shape
  out_spec = [None] * len(out_shape)
  i = j = 0
  while i < len(in_shape) or j < len(out_shape):
    gi, gj = [i], [j]
    pi = in_shape[i] if i < len(in_shape) else 1
    pj = out_shape[j] if j < len(out_shape) else 1
    while pi != pj:
      if pi < pj:
        i += 1
        gi.append(i)
        pi *= in_shape[i]
      else:
        j += 1
        gj.append(j)
        pj *= out_shape[j]
    gi = [k for k in gi if k < len(in_shape)]
    gj = [k for k in gj if k < len(out_shape)]
    sharded = [k for k in gi if spec[k] is not None]
    if sharded:
      ok = sharded == [gi[0]] and gj and out_shape[gj[0]] % _axis_size(mesh, spec[gi[0]]) == 0
      if len(gi) > 1 and len(gj) > 1:
        ok = False
      if not ok:
        raise core.ShardingTypeError(
            "This reshape is not supported. Please specify the sharding of the output via the "
            "`out_sharding` argument of jax.lax.reshape. Got operand type: "
            f"{a.str_short()}, new sizes: {tuple(out_shape)}")
      out_spec[gj[0]] = spec[gi[0]]
    i, j = i + 1, j + 1
  return [_with(outs[0], mesh, out_spec)]


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


def _slice(prim, avals, params, outs):
  a = avals[0]
  spec = _spec(a)
  mesh = a.sharding.mesh
  out = outs[0]
  for d, (n_in, n_out) in enumerate(zip(a.shape, out.shape)):
    if spec[d] is not None and n_in != n_out and n_out % _axis_size(mesh, spec[d]):
      raise core.ShardingTypeError(
          f"slicing on sharded dims where out dim ({n_out}) is not divisible by mesh axes "
          f"({_axis_size(mesh, spec[d])}) with spec ({','.join(axes_of(spec[d]))}) is not "
          f"implemented. Got input type={a.str_short(short_dtypes=True)} and output "
          f"shape={tuple(out.shape)}")
  return [_with(out, mesh, list(spec))]


def _as_typed(prim, avals, params, outs):
  return outs  # the primitive's abstract eval gives the result's type itself


_RULES = {
    "reshard": _as_typed, "sharding_constraint": _as_typed,
    "transpose": _transpose, "broadcast_in_dim": _broadcast_in_dim, "squeeze": _squeeze,
    "reshape": _reshape, "dot_general": _dot_general, "slice": _slice,
    "dynamic_slice": _slice,
    **{name: _reduction for name in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min",
                                     "reduce_and", "reduce_or", "reduce_xor", "argmax", "argmin",
                                     "reduce", "reduce_precision_reduce")},
}


def apply(prim, avals, params, out):
  """The abstract result of `prim` with the sharding its rule gives (see the module doc)."""
  outs = list(out) if prim.multiple_results else [out]
  rule = _RULES.get(prim.name, _elementwise)
  if rule is _reduction and "axes" not in params and "dimensions" not in params:
    rule = _elementwise
  result = rule(prim, avals, params, outs)
  return result if prim.multiple_results else result[0]


core.sharding_rule_hook = apply
