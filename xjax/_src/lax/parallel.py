"""Collectives over named axes: psum, pmax, pmin, pmean, pargmax, pargmin, all_gather,
psum_scatter, all_to_all, ppermute, pshuffle, pswapaxes, pbroadcast, pcast, axis_index, axis_size.

A named axis is bound by ``vmap(..., axis_name=...)`` (or `make_jaxpr`'s
``axis_env``), or by `shard_map` over a mesh. The primitives' names and params
are JAX 0.10.2's (`reduce_scatter` is psum_scatter's primitive, `pvary` is
pcast's).

* Under vmap a collective over its own axis name acts across the batch: its
  batching rule rewrites it into positional operations (`psum` of a value
  batched on axis `d` becomes a reduction over `d`, `axis_index` an `iota`,
  `all_to_all` a transpose and reshape), as JAX's rules do. A collective over
  some other (outer) name passes through to the outer vmap.
* In a `shard_map` body each value is one device's shard. The lowering rules
  read ``ctx.module.axis_context`` (an `AxisContext`) and emit StableHLO's
  cross-device collectives exactly as JAX lowers them under Shardy:
  `all_reduce`, `all_gather`, `reduce_scatter`, `all_to_all`,
  `collective_permute`, and `partition_id` arithmetic for `axis_index`, with
  replica groups of logical device ids and JAX's channel handle.
* Without an axis context only positional reductions lower (as reductions);
  a named axis there has no lowering and gets the standard missing-rule error.

A name nothing binds raises JAX's NameError.
"""
from __future__ import annotations

import itertools

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import stablehlo as hlo
from xjax._src import tree_util
from xjax._src import vma
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import lowering
from xjax._src.lax import elementwise as ew
from xjax._src.lax import reductions
from xjax._src.lax import slicing
from xjax._src.lax import structural


def _unbound(name, prim_name: str) -> NameError:
  return NameError(f"Found an unbound axis name: {name}. To fix this, please call "
                   f"{prim_name} under `jax.shard_map`.")


def _axis_names(axis_name) -> tuple:
  return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _check_bound(names, prim_name: str) -> None:
  for name in names:
    if not isinstance(name, int) and name not in core.trace_ctx.axis_env:
      raise _unbound(name, prim_name)


def _group_size(names) -> int:
  return int(np.prod([core.axis_size(n) for n in names], dtype=np.int64))


def _canonical_groups(axis_index_groups):
  """`axis_index_groups` as a tuple of tuples (None stays None), checked as JAX checks it."""
  if axis_index_groups is None:
    return None
  groups = tuple(tuple(int(i) for i in g) for g in axis_index_groups)
  covered = [i for g in groups for i in g]
  if sorted(covered) != list(range(len(covered))):
    raise ValueError("axis_index_groups must cover all indices exactly once")
  return groups


def _size_of(names, groups) -> int:
  """The number of members a collective combines: the group size, or the axes' size."""
  size = _group_size(names)  # JAX's short NameError for an unbound name, even with groups
  return size if groups is None else len(groups[0])


def _no_groups_in_vmap(groups, detail: str = " collectives. Please open a feature request!"):
  if groups is not None:
    raise NotImplementedError(f"axis_index_groups not supported in vmap{detail}")


# ----------------------------------------------------------------------------
# Lowering helpers: replica groups, channel handle, attributes


# JAX gives every SPMD collective channel 1 (mlir.COLLECTIVE_CHANNEL_ID), of
# type DEVICE_TO_DEVICE (1).
_CHANNEL = "#stablehlo.channel_handle<handle = 1, type = 1>"


def _axis_context(ctx, primitive) -> lowering.AxisContext:
  """The manual axes this body runs over; a named collective outside one has no lowering."""
  axis_context = ctx.module.axis_context
  if axis_context is None:
    raise core.missing_rule("Lowering", primitive)
  return axis_context


def _replica_groups(axis_context, names, groups) -> list[list[int]]:
  """The logical device ids of each group combined by a collective over `names`."""
  for name in names:
    if name not in axis_context.mesh.axis_names:
      raise NameError(f"unbound axis name: {name}")
  base = axis_context.replica_groups(names)
  if groups is None:
    return base
  return [[members[i] for i in group] for members in base for group in groups]


def _groups_attr(replica_groups) -> str:
  # Uneven groups are padded with -1, as XLA expects.
  padded = np.array(list(itertools.zip_longest(*replica_groups, fillvalue=-1)),
                    np.int64).T
  return hlo.dense_i64(padded)


def _attrs(**attrs) -> str:
  """An attribute dictionary in the sorted order MLIR prints it (None: a unit attribute)."""
  return ", ".join(k if v is None else f"{k} = {v}" for k, v in sorted(attrs.items()))


def _combiner_region(ctx, combine, dtype) -> str:
  scalar = core.ShapedArray((), np.dtype(dtype))
  return reductions.fun_region(ctx, lambda a, b: [combine(a, b)], [scalar, scalar])


def _lower_with(ctx, fun, aval_in, x):
  """Emits `fun(x)` (lax ops on one operand of `aval_in`) inline; returns its value."""
  saved = ctx.avals_in, ctx.avals_out
  ctx.avals_in = [aval_in]
  out = lowering.lower_fun(fun, multiple_results=False)(ctx, x)
  ctx.avals_in, ctx.avals_out = saved
  return out


def _emit_axis_index(ctx, axis_context, name) -> lowering.Value:
  """This device's position along mesh axis `name`: (partition_id / stride) % size."""
  names = list(axis_context.mesh.axis_names)
  if name not in names:
    raise NameError(f"unbound axis name: {name}")
  sizes = [axis_context.axis_size(n) for n in names]
  pos = names.index(name)
  stride = int(np.prod(sizes[pos + 1:], dtype=np.int64))
  u32 = hlo.tensor_type((), np.uint32)
  div = ctx.constant(np.array(stride, np.uint32))
  mod = ctx.constant(np.array(sizes[pos], np.uint32))
  device = ctx.op1("stablehlo.partition_id", [], u32)
  index = ctx.op1("stablehlo.remainder", [ctx.op1("stablehlo.divide", [device, div], u32), mod],
                  u32)
  return ctx.op1("stablehlo.convert", [index], hlo.tensor_type((), np.int32))


def _emit_manual_axis_index(ctx, axis_context, name) -> lowering.Value:
  """`_emit_axis_index`, valid in a partly manual body too.

  XLA cannot partition a `partition_id` in a body that is manual over only
  some mesh axes; as JAX does, the index is then computed in a nested
  computation manual over the remaining axes (the mesh symbol is ``@mesh``,
  as the shard_map lowering names it). An axis of size 1 is index 0.
  """
  mesh = axis_context.mesh
  rest = [n for n in mesh.axis_names if n not in axis_context.manual_axes]
  if not rest:
    return _emit_axis_index(ctx, axis_context, name)
  if axis_context.axis_size(name) == 1:
    return ctx.constant(np.array(0, np.int32))
  res = ctx.fresh()  # numbered before the body, as MLIR prints it
  body = lowering.LoweringContext(ctx.module, ctx.counter, ctx.indent + "  ")
  index = _emit_axis_index(body, axis_context, name)
  body.lines.append(body.indent + f'"sdy.return"({index.name}) : ({index.type}) -> ()')
  axes = ", ".join(f'"{n}"' for n in rest)
  ctx.lines.append(ctx.indent + f"{res} = sdy.manual_computation() in_shardings=[] "
                   f"out_shardings=[<@mesh, []>] manual_axes={{{axes}}} () {{")
  ctx.lines.extend(body.lines)
  ctx.lines.append(ctx.indent + f"}} : () -> {index.type}")
  return lowering.Value(res, index.type)


def _emit_all_reduce(ctx, x, dtype, combine, replica_groups) -> lowering.Value:
  attrs = _attrs(channel_handle=_CHANNEL, replica_groups=_groups_attr(replica_groups),
                 use_global_device_ids=None)
  return ctx.op1("stablehlo.all_reduce", [x], x.type, attrs,
                 [_combiner_region(ctx, combine, dtype)])


# ----------------------------------------------------------------------------
# psum, pmax, pmin: reductions across named axes


def _reduction_primitive(name: str, reduce_positional, combine, combine_unmapped):
  """A collective reduction: `reduce_positional(x, axes)` for positional axes,
  `combine(a, b)` of two scalars across devices, and `combine_unmapped(x, size)`,
  the result over an axis the value does not vary on."""
  prim = core.Primitive(name, multiple_results=True)

  def abstract_eval(*avals, axes, axis_index_groups):
    _check_bound([a for a in axes if not isinstance(a, int)], name)
    positional = [a for a in axes if isinstance(a, int)]
    return [a.update(shape=tuple(d for i, d in enumerate(a.shape) if i not in positional),
                     weak_type=a.weak_type)
            for a in avals]

  def impl(*args, axes, axis_index_groups):
    # Only vmap and shard_map bind names: a collective that still has one here is unbound.
    named = [a for a in axes if not isinstance(a, int)]
    if named:
      raise NameError(f"unbound axis name: {named[0]}")
    return [reduce_positional(x, tuple(axes)) for x in args]

  def batch(axis_data, args, dims, *, axes, axis_index_groups):
    mine = axis_data.name is not None and axis_data.name in axes
    if mine:
      _no_groups_in_vmap(axis_index_groups)
    outs, out_dims = [], []
    for x, d in zip(args, dims):
      rest = tuple(a for a in axes if a != axis_data.name) if mine else axes
      positional = tuple(a if d is None or a < d else a + 1 for a in rest if isinstance(a, int))
      named = tuple(a for a in rest if not isinstance(a, int))
      if mine and d is None:
        x = combine_unmapped(x, axis_data.size)
      elif mine:
        positional = positional + (d,)
      new_axes = named + positional
      groups = axis_index_groups if named else None
      out = prim.bind(x, axes=new_axes, axis_index_groups=groups)[0] if new_axes else x
      if d is None or mine:
        out_dims.append(None)
      else:
        out_dims.append(d - sum(1 for a in positional if a < d))
      outs.append(out)
    return outs, out_dims

  def lower(ctx, *args, axes, axis_index_groups):
    named = tuple(a for a in axes if not isinstance(a, int))
    positional = tuple(a for a in axes if isinstance(a, int))
    axis_context = _axis_context(ctx, prim) if named else None
    outs = []
    for x, aval in zip(args, list(ctx.avals_in), strict=True):
      if positional:
        x = _lower_with(ctx, lambda v: reduce_positional(v, positional), aval, x)
      if named:
        groups = _replica_groups(axis_context, named, axis_index_groups)
        x = _emit_all_reduce(ctx, x, aval.dtype, combine, groups)
      outs.append(x)
    return outs

  prim.def_abstract_eval(abstract_eval)
  prim.def_impl(impl)
  prim.def_lowering(lower)
  prim.def_batch(batch)
  prim.batch_always = True
  return prim


def _times_size(x, size):
  return ew.mul(ew.convert_element_type(np.asarray(size), core.get_aval(x).dtype), x)


def _psum_jvp(primals, tangents, *, axes, axis_index_groups):
  outs = psum_p.bind(*primals, axes=axes, axis_index_groups=axis_index_groups)
  nonzero = [t for t in tangents if type(t) is not ad.Zero]
  t_outs = iter(psum_p.bind(*nonzero, axes=axes, axis_index_groups=axis_index_groups)
                if nonzero else [])
  return outs, [next(t_outs) if type(t) is not ad.Zero else ad.Zero(t.aval) for t in tangents]


def _psum_transpose(cts, *args, axes, axis_index_groups):
  # As in JAX 0.10.2: the cotangent of a psum over named axes is the psum of
  # the cotangents (psum is treated as psum + pbroadcast); positional axes
  # (after batching) broadcast back.
  named = tuple(a for a in axes if not isinstance(a, int))
  positional = [a for a in axes if isinstance(a, int)]
  out = []
  for ct, x in zip(cts, args):
    if type(ct) is ad.Zero:
      out.append(ad.Zero(x.aval))
      continue
    if named:
      ct = psum_p.bind(ct, axes=named, axis_index_groups=axis_index_groups)[0]
    if positional:
      kept = tuple(i for i in range(len(x.aval.shape)) if i not in positional)
      ct = structural.broadcast_in_dim(ct, x.aval.shape, kept)
    out.append(ct)
  return out


psum_p = _reduction_primitive("psum", reductions.reduce_sum, ew.add, _times_size)
psum_p.def_jvp(_psum_jvp)
psum_p.def_transpose(_psum_transpose)
pmax_p = _reduction_primitive("pmax", reductions.reduce_max, reductions._max_combine,
                              lambda x, size: x)
pmin_p = _reduction_primitive("pmin", reductions.reduce_min, reductions._min_combine,
                              lambda x, size: x)


def _collective_pvary(names, x):
  """`x` cast (no value changes) to vary along a collective's axes, as JAX's."""
  if not core.trace_ctx.check_vma:
    return x
  have = getattr(getattr(x, "aval", None), "vma", frozenset())
  missing = tuple(n for n in names if not isinstance(n, int) and n not in have)
  return pvary_p.bind(x, axes=missing) if missing else x


def _allreduce(prim, x, axis_name, axis_index_groups):
  names = _axis_names(axis_name)
  groups = _canonical_groups(axis_index_groups)
  if groups is not None and any(isinstance(n, int) for n in names):
    raise ValueError("axis_index_groups only supported for sums over just named axes")
  leaves, treedef = tree_util.tree_flatten(x)
  if core.current_trace() is core.eval_trace:  # JAX's eager message is the short one
    for name in names:
      core.axis_size(name)
  # Under vmap no abstract eval may run before a batch rule passes the collective
  # on to an eager parent, so the names are checked here, with JAX's traced message.
  _check_bound(names, prim.name)
  if prim is psum_p:  # JAX sums booleans as int32
    leaves = [ew.convert_element_type(v, np.int32) if dtypes.dtype(v) == np.bool_ else v
              for v in leaves]
  if prim is not psum_p:
    leaves = [_collective_pvary(names, v) for v in leaves]
  outs = prim.bind(*leaves, axes=names, axis_index_groups=groups)
  return tree_util.tree_unflatten(treedef, outs)


def psum(x, axis_name, *, axis_index_groups=None):
  """The sum of `x` (a pytree of arrays) over the named axis (or tuple of axes) `axis_name`.

  Every member of the mapped axis receives the same sum. Python scalars are
  summed too (``psum(1, 'i')`` is the axis size); booleans are summed as
  int32. `axis_index_groups` (a list of lists of axis indices covering the
  axis once) sums within each group only; it is supported inside `shard_map`,
  not under `vmap` (NotImplementedError, as in JAX).

  Raises:
    NameError: no enclosing `vmap` or `shard_map` binds `axis_name`.
    ValueError: `axis_index_groups` does not cover the axis exactly once.

  Mirrors `jax.lax.psum`.
  """
  return _allreduce(psum_p, x, axis_name, axis_index_groups)


def pmax(x, axis_name, *, axis_index_groups=None):
  """The maximum of `x` over the named axis `axis_name` (mirrors `jax.lax.pmax`)."""
  return _allreduce(pmax_p, x, axis_name, axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
  """The minimum of `x` over the named axis `axis_name` (mirrors `jax.lax.pmin`)."""
  return _allreduce(pmin_p, x, axis_name, axis_index_groups)


def pmean(x, axis_name, *, axis_index_groups=None):
  """The mean of `x` over the named axis `axis_name`: `psum` divided by the axis
  (or group) size.

  Mirrors `jax.lax.pmean`.
  """
  total = psum(x, axis_name, axis_index_groups=axis_index_groups)
  size = _size_of(_axis_names(axis_name), _canonical_groups(axis_index_groups))
  return tree_util.tree_map(lambda s: s / size, total)  # true division, as JAX: ints -> float


def pargmax(x, axis_name):
  """The smallest index along the named axis `axis_name` where `x` takes its maximum over
  that axis, elementwise (mirrors JAX's private `lax.parallel.pargmax`).

  Raises:
    TypeError: `axis_name` is a tuple or list (one axis only).
  """
  return _index_of_value(x, pmax, axis_name, "pargmax")


def pargmin(x, axis_name):
  """The smallest index along the named axis `axis_name` where `x` takes its minimum over
  that axis, elementwise (mirrors JAX's private `lax.parallel.pargmin`)."""
  return _index_of_value(x, pmin, axis_name, "pargmin")


def _index_of_value(x, reduce, axis_name, name):
  if isinstance(axis_name, (tuple, list)):
    raise TypeError(f"{name} only accepts a single axis, got {axis_name}")
  idx = axis_index(axis_name)
  hit = ew.eq(reduce(x, axis_name), x)
  shape = np.shape(hit)
  none = structural.full(shape, np.iinfo(dtypes.dtype(idx)).max, dtypes.dtype(idx))
  return pmin(ew.select_n(hit, none, structural.full(shape, idx, dtypes.dtype(idx))),
              axis_name)


# ----------------------------------------------------------------------------
# axis_index


axis_index_p = core.Primitive("axis_index")
axis_index_p.batch_always = True


@axis_index_p.def_abstract_eval
def _axis_index_abstract_eval(*, axis_name):
  _check_bound([axis_name], "axis_index")
  return core.ShapedArray((), np.dtype(np.int32))


@axis_index_p.def_impl
def _axis_index_impl(*, axis_name):
  raise NameError(f"unbound axis name: {axis_name}")


@axis_index_p.def_batch
def _axis_index_batch(axis_data, args, dims, *, axis_name):
  if axis_name != axis_data.name:
    return axis_index_p.bind(axis_name=axis_name), None
  return structural.iota(np.int32, axis_data.size), 0


@axis_index_p.def_lowering
def _axis_index_lowering(ctx, *, axis_name):
  return _emit_manual_axis_index(ctx, _axis_context(ctx, axis_index_p), axis_name)


def axis_index(axis_name):
  """The position (int32 scalar) of this member along the named axis `axis_name`.

  For a tuple of names, the row-major linear index over them (the first name
  is the most significant).

  Raises:
    NameError: no enclosing `vmap` or `shard_map` binds a name.

  Mirrors `jax.lax.axis_index`.
  """
  if not isinstance(axis_name, (tuple, list)):
    _check_bound([axis_name], "axis_index")
    return axis_index_p.bind(axis_name=axis_name)
  inner_size, index = 1, np.int32(0)
  for name in reversed(axis_name):
    index = ew.add(index, ew.mul(axis_index(name), np.int32(inner_size)))
    inner_size *= core.axis_size(name)
  return index


# ----------------------------------------------------------------------------
# all_gather


all_gather_p = core.Primitive("all_gather")
all_gather_p.batch_always = True


@all_gather_p.def_abstract_eval
def _all_gather_abstract_eval(x, *, all_gather_dimension, axis_name, axis_index_groups,
                              axis_size, tiled):
  _check_bound(axis_name, "all_gather")
  shape = list(x.shape)
  if tiled:
    shape[all_gather_dimension] *= axis_size
  else:
    shape.insert(all_gather_dimension, axis_size)
  return x.update(shape=tuple(shape))


@all_gather_p.def_impl
def _all_gather_impl(x, *, axis_name, **_):
  raise NameError(f"unbound axis name: {axis_name[0]}")


def _gathered(x, axis: int, tiled: bool):
  """`x` whose leading axis holds the members, laid out as all_gather's result at `axis`."""
  x = batching.moveaxis(x, 0, axis)
  if tiled:
    shape = list(np.shape(x))
    shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
    x = structural.reshape(x, tuple(shape))
  return x


@all_gather_p.def_batch
def _all_gather_batch(axis_data, args, dims, *, all_gather_dimension, axis_name,
                      axis_index_groups, axis_size, tiled):
  (x,), (d,) = args, dims
  if axis_data.name not in axis_name:
    x = batching.bdim_at_front(x, d, axis_data.size) if d is not None else x
    out = all_gather_p.bind(x, all_gather_dimension=all_gather_dimension + (d is not None),
                            axis_name=axis_name, axis_index_groups=axis_index_groups,
                            axis_size=axis_size, tiled=tiled)
    return out, (None if d is None else 0)
  _no_groups_in_vmap(axis_index_groups, "")
  if len(axis_name) > 1:
    raise NotImplementedError("Please open a feature request!")
  x = batching.bdim_at_front(x, d, axis_data.size)
  return _gathered(x, all_gather_dimension, tiled), None


def _all_gather_transpose(ct, x, *, all_gather_dimension, axis_name, axis_index_groups,
                          axis_size, tiled):
  # Each member's slice of the summed cotangents, as in JAX: a psum_scatter.
  return [reduce_scatter_p.bind(ct, scatter_dimension=all_gather_dimension,
                                axis_name=axis_name, axis_index_groups=axis_index_groups,
                                axis_size=axis_size, tiled=tiled)]


ad.deflinear(all_gather_p, _all_gather_transpose)


@all_gather_p.def_lowering
def _all_gather_lowering(ctx, x, *, all_gather_dimension, axis_name, axis_index_groups,
                         axis_size, tiled):
  axis_context = _axis_context(ctx, all_gather_p)
  aval_in, = ctx.avals_in
  aval_out, = ctx.avals_out
  if not tiled:  # gather size-1 slices along a new axis
    shape = list(aval_in.shape)
    shape.insert(all_gather_dimension, 1)
    kept = [i for i in range(len(shape)) if i != all_gather_dimension]
    x = ctx.op1("stablehlo.broadcast_in_dim", [x], hlo.tensor_type(shape, aval_in.dtype),
                f"broadcast_dimensions = {hlo.i64_array(kept)}")
  groups = _replica_groups(axis_context, axis_name, axis_index_groups)
  attrs = _attrs(all_gather_dim=f"{all_gather_dimension} : i64", channel_handle=_CHANNEL,
                 replica_groups=_groups_attr(groups), use_global_device_ids=None)
  return ctx.op1("stablehlo.all_gather", [x], hlo.aval_type(aval_out), attrs)


# all_gather(to='invarying') (JAX's all_gather_invariant): typed the same on every member.
# Its transpose is all_gather's: with check_vma=False transposition a replicated output's
# cotangent is shared out between its copies, and psum_scatter sums them back.
all_gather_invariant_p = core.Primitive("all_gather_invariant")
all_gather_invariant_p.batch_always = True
all_gather_invariant_p.def_abstract_eval(all_gather_p.abstract_eval.__wrapped__)
all_gather_invariant_p.def_impl(_all_gather_impl)
all_gather_invariant_p.def_batch(_all_gather_batch)
ad.deflinear(all_gather_invariant_p, _all_gather_transpose)
all_gather_invariant_p.def_lowering(_all_gather_lowering)
vma.register_rule("all_gather_invariant", lambda avals, params: (
    frozenset().union(*(a.vma for a in avals)) - vma.names_param(params["axis_name"])))

_ALL_GATHER_TO = ("varying", "reduced", "invarying")


def all_gather(x, axis_name, *, axis_index_groups=None, axis: int = 0, tiled: bool = False,
               to: str = "varying"):
  """Every member's `x` (a pytree), stacked along a new axis `axis` (concatenated if `tiled`).

  Every member of the named axis (or of its group in `axis_index_groups`)
  receives the whole stack. ``to='invarying'`` types the result as the same on
  every member (inside shard_map, so that an out_spec may leave the axis out);
  ``to='reduced'`` (a reduced manual axis type) is not supported by xjax.

  Raises:
    NameError: no enclosing `vmap` or `shard_map` binds `axis_name`.
    ValueError: `axis` is out of bounds; `to` is not 'varying', 'reduced' or
      'invarying'.
    NotImplementedError: ``to='reduced'``, or groups with ``to='invarying'``.

  Mirrors `jax.lax.all_gather`.
  """
  if to not in _ALL_GATHER_TO:
    raise ValueError("Got unexpected `to` value for `jax.lax.all_gather`. Allowed `to` values "
                     f"are: {set(_ALL_GATHER_TO)}")
  if to == "reduced":
    raise NotImplementedError("all_gather(to='reduced'): xjax has no reduced manual axis "
                              "types (issue 36)")
  if to == "invarying" and axis_index_groups is not None:
    raise NotImplementedError
  prim = all_gather_p if to == "varying" else all_gather_invariant_p
  names = _axis_names(axis_name)
  groups = _canonical_groups(axis_index_groups)
  size = _size_of(names, groups)

  def gather_leaf(leaf):
    ndim = np.ndim(leaf)
    bound = ndim if tiled else ndim + 1
    if not -bound <= axis < bound:
      raise ValueError(f"axis {axis} is out of bounds for array of dimension {bound}")
    if prim is all_gather_p:
      leaf = _collective_pvary(names, leaf)
    return prim.bind(leaf, all_gather_dimension=axis % bound, axis_name=names,
                     axis_index_groups=groups, axis_size=size, tiled=tiled)

  return tree_util.tree_map(gather_leaf, x)


# ----------------------------------------------------------------------------
# reduce_scatter (psum_scatter)


reduce_scatter_p = core.Primitive("reduce_scatter")
reduce_scatter_p.batch_always = True


def _check_scatter_size(n: int, axis_size: int, tiled: bool) -> None:
  if tiled and n % axis_size:
    raise ValueError(f"tiled reduce_scatter operand scatter dimension size {n} must be "
                     f"divisible by shard_count {axis_size}")
  if not tiled and n != axis_size:
    raise ValueError(f"reduce_scatter operand scatter dimension size {n} must match "
                     f"shard count {axis_size}")


@reduce_scatter_p.def_abstract_eval
def _reduce_scatter_abstract_eval(x, *, scatter_dimension, axis_name, axis_index_groups,
                                  axis_size, tiled):
  _check_bound(axis_name, "reduce_scatter")
  shape = list(x.shape)
  _check_scatter_size(shape[scatter_dimension], axis_size, tiled)
  if tiled:
    shape[scatter_dimension] //= axis_size
  else:
    del shape[scatter_dimension]
  return x.update(shape=tuple(shape))


@reduce_scatter_p.def_impl
def _reduce_scatter_impl(x, *, axis_name, **_):
  raise NameError(f"unbound axis name: {axis_name[0]}")


def _split_axis(x, axis: int, parts: int):
  """`x` with axis `axis` split into (parts, size // parts)."""
  shape = list(np.shape(x))
  shape[axis:axis + 1] = [parts, shape[axis] // parts]
  return structural.reshape(x, tuple(shape))


@reduce_scatter_p.def_batch
def _reduce_scatter_batch(axis_data, args, dims, *, scatter_dimension, axis_name,
                          axis_index_groups, axis_size, tiled):
  (x,), (d,) = args, dims
  params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups,
                axis_size=axis_size, tiled=tiled)
  if axis_data.name not in axis_name:
    if d is None:
      return reduce_scatter_p.bind(x, scatter_dimension=scatter_dimension, **params), None
    x = batching.moveaxis(x, d, 0)
    return reduce_scatter_p.bind(x, scatter_dimension=scatter_dimension + 1, **params), 0
  _no_groups_in_vmap(axis_index_groups, "")
  if len(axis_name) > 1:
    raise NotImplementedError("Please open a feature request!")
  # The sum over the members, whose slices along scatter_dimension go one to each.
  y = _times_size(x, axis_size) if d is None else reductions.reduce_sum(x, (d,))
  _check_scatter_size(np.shape(y)[scatter_dimension], axis_size, tiled)
  if tiled:
    y = _split_axis(y, scatter_dimension, axis_size)
  return y, scatter_dimension


def _reduce_scatter_transpose(ct, x, *, scatter_dimension, axis_name, axis_index_groups,
                              axis_size, tiled):
  return [all_gather_p.bind(ct, all_gather_dimension=scatter_dimension, axis_name=axis_name,
                            axis_index_groups=axis_index_groups, axis_size=axis_size,
                            tiled=tiled)]


ad.deflinear(reduce_scatter_p, _reduce_scatter_transpose)


@reduce_scatter_p.def_lowering
def _reduce_scatter_lowering(ctx, x, *, scatter_dimension, axis_name, axis_index_groups,
                             axis_size, tiled):
  axis_context = _axis_context(ctx, reduce_scatter_p)
  aval_in, = ctx.avals_in
  aval_out, = ctx.avals_out
  shape = list(aval_in.shape)
  shape[scatter_dimension] //= axis_size
  groups = _replica_groups(axis_context, axis_name, axis_index_groups)
  attrs = _attrs(channel_handle=_CHANNEL, replica_groups=_groups_attr(groups),
                 scatter_dimension=f"{scatter_dimension} : i64", use_global_device_ids=None)
  out = ctx.op1("stablehlo.reduce_scatter", [x], hlo.tensor_type(shape, aval_in.dtype), attrs,
                [_combiner_region(ctx, ew.add, aval_in.dtype)])
  if tiled:
    return out
  return ctx.op1("stablehlo.reshape", [out], hlo.aval_type(aval_out))


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
  """Like ``psum(x, axis_name)``, but each member keeps only its slice of the sum.

  Member ``i`` receives ``psum(x)[..., i, ...]`` (the index at
  `scatter_dimension`, which is removed) when `tiled` is False, and the
  ``i``-th of the equal chunks of that dimension (which is kept) when True.

  Args:
    x: a pytree of arrays.
    axis_name: a bound axis name, or a tuple of them.
    scatter_dimension: the positional axis the sum is scattered along.
    axis_index_groups: optional groups of axis indices to reduce within.
    tiled: keep the rank (see above).

  Returns:
    The scattered sums.

  Raises:
    NameError: no enclosing `vmap` or `shard_map` binds `axis_name`.
    ValueError: ``x.shape[scatter_dimension]`` is not the axis size (untiled)
      or not a multiple of it (tiled).

  Mirrors `jax.lax.psum_scatter`.
  """
  names = _axis_names(axis_name)
  groups = _canonical_groups(axis_index_groups)
  size = _size_of(names, groups)
  _check_bound(names, "reduce_scatter")

  def scatter_leaf(leaf):
    _check_scatter_size(np.shape(leaf)[scatter_dimension], size, tiled)
    leaf = _collective_pvary(names, leaf)
    return reduce_scatter_p.bind(leaf, scatter_dimension=scatter_dimension, axis_name=names,
                                 axis_index_groups=groups, axis_size=size, tiled=tiled)

  return tree_util.tree_map(scatter_leaf, x)


# ----------------------------------------------------------------------------
# all_to_all (and pswapaxes)


all_to_all_p = core.Primitive("all_to_all")
all_to_all_p.batch_always = True


@all_to_all_p.def_abstract_eval
def _all_to_all_abstract_eval(x, *, split_axis, concat_axis, axis_name, axis_index_groups,
                              tiled):
  # The primitive is always tiled: the wrapper adds and removes the unit axes.
  names = _axis_names(axis_name)
  _check_bound(names, "all_to_all")
  size = _size_of(names, axis_index_groups)
  shape = list(x.shape)
  assert shape[split_axis] % size == 0, ("internal:", shape[split_axis], size)
  shape[split_axis] //= size
  shape[concat_axis] *= size
  return x.update(shape=tuple(shape), weak_type=False)


@all_to_all_p.def_impl
def _all_to_all_impl(x, *, axis_name, **_):
  raise NameError(f"unbound axis name: {_axis_names(axis_name)[0]}")


def _exchanged(x, split_axis: int, concat_axis: int, size: int):
  """The tiled all_to_all of the members stacked on `x`'s leading axis, stacked likewise.

  Member m receives chunk m of every member k's `split_axis`, concatenated
  along `concat_axis` in the order of k.
  """
  x = _split_axis(x, split_axis + 1, size)  # (K, ..., M, chunk, ...)
  ndim = np.ndim(x) - 2  # the rank of one member's value
  # Axis positions in x: K is 0; value dim j is at 1 + j, plus 1 past the split.
  pos = [1 + j + (j >= split_axis) for j in range(ndim)]
  order = [split_axis + 1]  # M leads: the new batch axis
  for j in range(ndim):
    order += ([0] if j == concat_axis else []) + [pos[j]]
  y = structural.transpose(x, tuple(order))
  shape = list(np.shape(y))
  at = 1 + concat_axis
  shape[at:at + 2] = [shape[at] * shape[at + 1]]
  return structural.reshape(y, tuple(shape))


@all_to_all_p.def_batch
def _all_to_all_batch(axis_data, args, dims, *, split_axis, concat_axis, axis_name,
                      axis_index_groups, tiled):
  (x,), (d,) = args, dims
  names = _axis_names(axis_name)
  if axis_data.name not in names:
    params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups, tiled=tiled)
    if d is None:
      return all_to_all_p.bind(x, split_axis=split_axis, concat_axis=concat_axis,
                               **params), None
    x = batching.moveaxis(x, d, 0)
    return all_to_all_p.bind(x, split_axis=split_axis + 1, concat_axis=concat_axis + 1,
                             **params), 0
  if axis_index_groups is not None:
    raise NotImplementedError("Please open a feature request!")
  x = batching.bdim_at_front(x, d, axis_data.size)
  if len(names) > 1:
    return _exchanged_over_several(x, split_axis, concat_axis, names, axis_data), 0
  return _exchanged(x, split_axis, concat_axis, axis_data.size), 0


def _exchanged_over_several(x, split_axis: int, concat_axis: int, names, axis_data):
  """The tiled all_to_all over `names`, one of them the vmapped axis, of the members
  stacked on `x`'s leading axis, stacked likewise.

  A member's number is row-major over `names`: (a, j, b) for the names before the
  vmapped one, the vmapped one and those after it. Member (a', j', b') receives chunk
  (a', j', b') of every member (a, j, b), in that order along `concat_axis`. The chunks
  move in two steps: among the stacked members (j) here, and among the others ((a, b))
  by an all_to_all over the remaining names, whose members exchange, for each target
  (a', b'), everything the stacked members (j) send to it.
  """
  p = names.index(axis_data.name)
  rest = names[:p] + names[p + 1:]
  s, lo, hi = axis_data.size, _group_size(names[:p]), _group_size(names[p + 1:])
  member = list(np.shape(x)[1:])
  chunk = member[split_axis] // (lo * s * hi)
  # x[j, ..., (a', j', b', c), ...] -> z[j', (a', b'), j, ..., c, ...]
  at = 1 + split_axis
  x = structural.reshape(x, tuple(np.shape(x)[:at]) + (lo, s, hi, chunk)
                         + tuple(np.shape(x)[at + 1:]))
  order = [at + 1, at, at + 2, 0] + list(range(1, at)) + list(range(at + 3, np.ndim(x)))
  z = structural.transpose(x, tuple(order))
  member[split_axis] = chunk
  z = structural.reshape(z, (s, lo * hi, s) + tuple(member))
  # Member (a', b') gets z[:, (a', b')] of every (a, b): w[j', (a, b), j, ..., c, ...].
  w = all_to_all_p.bind(z, split_axis=1, concat_axis=1,
                        axis_name=rest if len(rest) > 1 else rest[0],
                        axis_index_groups=None, tiled=True)
  w = structural.reshape(w, (s, lo, hi, s) + tuple(member))
  # Sources (a, j, b) go in front of the concatenation axis and merge with it.
  dims = [4 + k for k in range(len(member))]
  y = structural.transpose(w, tuple([0] + dims[:concat_axis] + [1, 3, 2] + dims[concat_axis:]))
  out = [s] + member
  out[1 + concat_axis] *= lo * s * hi
  return structural.reshape(y, tuple(out))


def _all_to_all_transpose(ct, x, *, split_axis, concat_axis, axis_name, axis_index_groups,
                          tiled):
  return [all_to_all_p.bind(ct, split_axis=concat_axis, concat_axis=split_axis,
                            axis_name=axis_name, axis_index_groups=axis_index_groups,
                            tiled=tiled)]


ad.deflinear(all_to_all_p, _all_to_all_transpose)


@all_to_all_p.def_lowering
def _all_to_all_lowering(ctx, x, *, split_axis, concat_axis, axis_name, axis_index_groups,
                         tiled):
  axis_context = _axis_context(ctx, all_to_all_p)
  groups = _replica_groups(axis_context, _axis_names(axis_name), axis_index_groups)
  if len(groups[0]) == 1:
    return x
  if any(len(g) != len(groups[0]) for g in groups):
    raise ValueError("Replica groups must be equally sized")
  # As JAX: no use_global_device_ids on all_to_all.
  attrs = _attrs(channel_handle=_CHANNEL, concat_dimension=f"{concat_axis} : i64",
                 replica_groups=_groups_attr(groups), split_count=f"{len(groups[0])} : i64",
                 split_dimension=f"{split_axis} : i64")
  return ctx.op1("stablehlo.all_to_all", [x], hlo.aval_type(ctx.avals_out[0]), attrs)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
  """Splits `x`'s `split_axis` across the members and concatenates what each receives.

  Member m receives chunk m (of as many as there are members) of every
  member's `split_axis`. Untiled, ``x.shape[split_axis]`` must equal the axis
  size: that axis is removed and the received pieces form a new axis at
  `concat_axis`. Tiled, `split_axis` is divided by the size and `concat_axis`
  multiplied by it.

  Args:
    x: a pytree of arrays.
    axis_name: a bound axis name (or a tuple of them).
    split_axis, concat_axis: positional axes (see above).
    axis_index_groups: optional groups of axis indices exchanging among themselves.
    tiled: keep the rank (see above).

  Raises:
    NameError: no enclosing `vmap` or `shard_map` binds `axis_name`.
    ValueError: the split axis does not fit the axis size.

  Mirrors `jax.lax.all_to_all`.
  """
  groups = _canonical_groups(axis_index_groups)
  names = _axis_names(axis_name)
  size = _size_of(names, groups)
  _check_bound(names, "all_to_all")
  axis_name = names if isinstance(axis_name, (tuple, list)) else axis_name

  def exchange_leaf(leaf, split_axis=split_axis, concat_axis=concat_axis):
    n = np.shape(leaf)[split_axis]
    if tiled:
      if n % size:
        raise ValueError(f"The size of all_to_all split_axis ({n}) has to be divisible by "
                         f"the size of the named axis {axis_name} ({size})")
    else:
      if n != size:
        raise ValueError("all_to_all requires the size of the mapped axis axis_name to equal "
                         f"x.shape[split_axis], but they are {size} and {n} respectively.")
      if split_axis < concat_axis:
        concat_axis += 1  # concat_axis is a position after split_axis is removed
        leaf = structural.expand_dims(leaf, (concat_axis,))
      elif concat_axis < split_axis:
        leaf = structural.expand_dims(leaf, (concat_axis,))
        split_axis += 1
    leaf = _collective_pvary(_axis_names(axis_name), leaf)
    out = all_to_all_p.bind(leaf, split_axis=split_axis, concat_axis=concat_axis,
                            axis_name=axis_name, axis_index_groups=groups, tiled=tiled)
    if not tiled and split_axis != concat_axis:
      out = structural.squeeze(out, (split_axis,))
    return out

  return tree_util.tree_map(exchange_leaf, x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
  """Swaps the named axis `axis_name` with the positional axis `axis` of `x`.

  ``x.shape[axis]`` must equal the axis size. The same as
  ``all_to_all(x, axis_name, axis, axis)``. Mirrors `jax.lax.pswapaxes`.
  """
  return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


# ----------------------------------------------------------------------------
# ppermute (and pshuffle)


ppermute_p = core.Primitive("ppermute")
ppermute_p.batch_always = True


@ppermute_p.def_abstract_eval
def _ppermute_abstract_eval(x, *, axis_name, perm):
  _check_bound(axis_name, "ppermute")
  return x


@ppermute_p.def_impl
def _ppermute_impl(x, *, axis_name, perm):
  raise NameError(f"unbound axis name: {axis_name[0]}")


@ppermute_p.def_batch
def _ppermute_batch(axis_data, args, dims, *, axis_name, perm):
  (x,), (d,) = args, dims
  if axis_data.name not in axis_name:
    return ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
  if len(axis_name) > 1:
    raise NotImplementedError("ppermute over several axis names one of which is vmapped "
                              "is not supported")
  x = batching.bdim_at_front(x, d, axis_data.size)
  source = dict((dst, src) for src, dst in perm)
  zero = structural.full((1, *np.shape(x)[1:]), 0, core.get_aval(x).dtype)
  pieces = [slicing.slice_in_dim(x, source[i], source[i] + 1) if i in source else zero
            for i in range(axis_data.size)]
  return structural.concatenate(pieces, 0), 0


def _ppermute_transpose(ct, x, *, axis_name, perm):
  return [ppermute_p.bind(ct, axis_name=axis_name, perm=tuple((t, s) for s, t in perm))]


ad.deflinear(ppermute_p, _ppermute_transpose)


@ppermute_p.def_lowering
def _ppermute_lowering(ctx, x, *, axis_name, perm):
  groups = _replica_groups(_axis_context(ctx, ppermute_p), axis_name, None)
  # As JAX: each group's ids in increasing order, the pairs repeated per group.
  pairs = [[sorted(g)[s], sorted(g)[t]] for g in groups for s, t in perm]
  if not pairs:  # nothing is sent: every member receives zeros
    zero = ctx.constant(np.zeros((), ctx.avals_in[0].dtype))
    return ctx.broadcast_to(zero, ctx.avals_in[0].update(shape=()), ctx.avals_out[0])
  attrs = _attrs(channel_handle=_CHANNEL, source_target_pairs=hlo.dense_i64(pairs))
  return ctx.op1("stablehlo.collective_permute", [x], x.type, attrs)


def ppermute(x, axis_name, perm):
  """Sends each member's `x` (a pytree) to another: ``(source, destination)`` pairs in `perm`.

  A member that no pair sends to receives zeros.

  `perm` is any iterable of pairs of ints (a list of tuples, an ``(n, 2)`` NumPy array).

  Raises:
    TypeError: `perm`'s items are not pairs (as JAX, which reads it as
      ``tuple(map(tuple, perm))``).
    ValueError: `perm` is not a partial permutation of the axis indices.
    NameError: no enclosing `vmap` or `shard_map` binds `axis_name`.

  Mirrors `jax.lax.ppermute`.
  """
  names = _axis_names(axis_name)
  pairs = tuple(map(tuple, perm))
  _check_bound(names, "ppermute")
  perm = tuple((int(s), int(t)) for s, t in pairs)
  size = _group_size(names)
  srcs, dsts = [s for s, _ in perm], [t for _, t in perm]
  if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
    raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
  for s, t in perm:
    if not (0 <= s < size and 0 <= t < size):
      raise ValueError(f"ppermute permutation elements must be in the range [0, {size}), "
                       f"got {perm}.")
  return tree_util.tree_map(
      lambda leaf: ppermute_p.bind(_collective_pvary(names, leaf), axis_name=names, perm=perm), x)


def pshuffle(x, axis_name, perm):
  """`ppermute` with the permutation given by sources: member i receives member ``perm[i]``'s `x`.

  Raises:
    ValueError: `perm` is not a permutation of ``range(len(perm))``.

  Mirrors `jax.lax.pshuffle`.
  """
  if set(perm) != set(range(len(perm))):
    raise ValueError(f"`perm` does not represent a permutation: {perm}")
  return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


# ----------------------------------------------------------------------------
# pbroadcast


pbroadcast_p = core.Primitive("pbroadcast")
pbroadcast_p.batch_always = True


@pbroadcast_p.def_abstract_eval
def _pbroadcast_abstract_eval(x, *, axis_name, source):
  _check_bound(_axis_names(axis_name), "pbroadcast")
  return x


@pbroadcast_p.def_impl
def _pbroadcast_impl(x, *, axis_name, source):
  raise NameError(f"unbound axis name: {_axis_names(axis_name)[0]}")


@pbroadcast_p.def_batch
def _pbroadcast_batch(axis_data, args, dims, *, axis_name, source):
  (x,), (d,) = args, dims
  names = _axis_names(axis_name)
  if axis_data.name not in names:
    return pbroadcast_p.bind(x, axis_name=axis_name, source=source), d
  if len(names) > 1:
    raise NotImplementedError("pbroadcast batcher only supports a single axis")
  if d is None:
    return x, None
  picked = slicing.index_in_dim(x, source, d, keepdims=True)
  return structural.broadcast_in_dim(picked, np.shape(x), tuple(range(np.ndim(x)))), d


def _pbroadcast_transpose(ct, x, *, axis_name, source):
  # Only the source's value reaches the members: it receives the sum of their cotangents.
  total = psum(ct, axis_name)
  is_source = ew.eq(axis_index(axis_name), np.int32(source))
  return [ew.select_n(is_source, structural.full_like(total, 0), total)]


ad.deflinear(pbroadcast_p, _pbroadcast_transpose)


@pbroadcast_p.def_lowering
def _pbroadcast_lowering(ctx, x, *, axis_name, source):
  # JAX emits collective_broadcast, on GPU only (XLA:CPU rejects it); this is
  # its documented equivalent, psum(where(axis_index == source, x, 0)), which
  # every backend runs.
  axis_context = _axis_context(ctx, pbroadcast_p)
  names = _axis_names(axis_name)
  aval, = ctx.avals_in
  index = None
  for name in names:  # the row-major index over the names
    i = _emit_manual_axis_index(ctx, axis_context, name)
    if index is None:
      index = i
    else:
      size = ctx.constant(np.array(axis_context.axis_size(name), np.int32))
      index = ctx.op1("stablehlo.add", [ctx.op1("stablehlo.multiply", [index, size], i.type),
                                        i], i.type)
  pred_type = hlo.tensor_type((), np.bool_)
  is_source = ctx.op1("stablehlo.compare", [index, ctx.constant(np.array(source, np.int32))],
                      pred_type, "comparison_direction = #stablehlo<comparison_direction EQ>")
  scalar = aval.update(shape=())
  is_source = ctx.broadcast_to(is_source, scalar.update(dtype=np.dtype(np.bool_)), aval)
  zero = ctx.broadcast_to(ctx.constant(np.zeros((), aval.dtype)), scalar, aval)
  masked = ctx.op1("stablehlo.select", [is_source, x, zero], x.type)
  groups = _replica_groups(axis_context, names, None)
  return _emit_all_reduce(ctx, masked, aval.dtype, ew.add, groups)


def pbroadcast(x, axis_name, source):
  """Every member receives the `x` (a pytree) of member `source` along `axis_name`.

  The same values as ``psum(where(axis_index(axis_name) == source, x, 0), axis_name)``.

  Raises:
    NameError: no enclosing `vmap` or `shard_map` binds `axis_name`.
    ValueError: `source` is not an index of the axis.

  Mirrors `jax.lax.pbroadcast`.
  """
  names = _axis_names(axis_name)
  _check_bound(names, "pbroadcast")
  size = _group_size(names)
  if not 0 <= source < size:
    raise ValueError(f"pbroadcast source {source} is out of range for axis {axis_name} "
                     f"of size {size}")
  return tree_util.tree_map(
      lambda leaf: pbroadcast_p.bind(leaf, axis_name=axis_name, source=int(source)), x)


# ----------------------------------------------------------------------------
# pvary (pcast to 'varying')


pvary_p = core.Primitive("pvary")
pvary_p.batch_always = True


@pvary_p.def_abstract_eval
def _pvary_abstract_eval(x, *, axes):
  _check_bound(axes, "pvary")
  return x


@pvary_p.def_impl
def _pvary_impl(x, *, axes):
  raise ValueError("pvary should be called under jax.shard_map.")


@pvary_p.def_batch
def _pvary_batch(axis_data, args, dims, *, axes):
  (x,), (d,) = args, dims
  rest = tuple(a for a in axes if a != axis_data.name)
  return (pvary_p.bind(x, axes=rest) if rest else x), d


def _pvary_transpose(ct, x, *, axes):
  # xjax has no varying-manual-axes types: psum already transposes to a psum
  # (JAX's check_vma=False rule), so the cast transposes to the identity.
  return [ct]


ad.deflinear(pvary_p, _pvary_transpose)


@pvary_p.def_lowering
def _pvary_lowering(ctx, x, *, axes):
  return x


vma.pvary = lambda x, axes: pvary_p.bind(x, axes=axes)


_PCAST_TO = ("unreduced", "reduced", "varying")


def pcast(x, axis_name, *, to: str):
  """Casts `x` (a pytree) to vary over the named axes: a no-op on values.

  JAX tracks which mesh axes a value varies over; ``to='varying'`` marks an
  invariant value as varying (the `pvary` primitive). xjax has no
  varying-manual-axes types, so the cast keeps the values; 'reduced' and
  'unreduced' belong to that type system and are not supported.

  Raises:
    TypeError: `axis_name` is a set.
    ValueError: `to` is not 'varying', 'reduced' or 'unreduced'.
    NotImplementedError: ``to`` is 'reduced' or 'unreduced'.
    NameError: no enclosing `vmap` or `shard_map` binds `axis_name`.

  Mirrors `jax.lax.pcast`.
  """
  if isinstance(axis_name, (set, frozenset)):
    raise TypeError(f"axis_name={axis_name} must be a tuple or a str. Got {axis_name}")
  axes = axis_name if isinstance(axis_name, tuple) else (axis_name,)
  if not axis_name:
    return x
  if to not in _PCAST_TO:
    raise ValueError("Got unexpected `to` value. Allowed `to` values are: "
                     f"{set(_PCAST_TO)}")
  if to != "varying":
    raise NotImplementedError(f"pcast to {to!r}: xjax has no reduced or unreduced manual "
                              "axis types")
  _check_bound(axes, "pvary")
  return tree_util.tree_map(lambda leaf: pvary_p.bind(leaf, axes=axes), x)


batching.register_axis_ops(sum_batch=lambda x: reductions.reduce_sum(x, (0,)))


def axis_size(axis_name) -> int:
  """The size of the named mapped axis (the product, for a tuple of names).

  Args:
    axis_name: a name bound by an enclosing `vmap(axis_name=...)` or
      `shard_map`, or a tuple.

  Returns:
    A Python int.

  Raises:
    NameError: an unbound name ("unbound axis name: i").

  Mirrors `jax.lax.axis_size`.
  """
  size = 1
  for name in _axis_names(axis_name):
    size *= core.axis_size(name)
  return size
