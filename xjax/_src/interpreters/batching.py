"""Vectorization: the batching interpreter behind `vmap`.

* A `BatchTracer` is a value with one extra axis, the batch axis, at position
  `batch_dim` of its underlying value `val`; ``batch_dim=None`` (`not_mapped`)
  means the value is the same for every member of the batch.
* `BatchTrace.process_primitive` calls the primitive's `batch` rule,
  ``rule(axis_data, args, dims, **params) -> (out, out_dim)``, under the parent
  trace. Primitives none of whose operands are batched run unchanged.
* `AxisData` names the mapped axis and its size; the collectives
  (`lax.psum`, `lax.axis_index`, ...) read it to act across the batch. Its
  `spmd_name` (vmap's `spmd_axis_name`) names the mesh axes the batch is split
  over: the sharding rules (`sharding_constraint`, `shard_map`) insert them,
  with `batch_spec`, at the batch dimension of their PartitionSpecs.

`batch_flat` runs a flat function under a new batch trace; `batch_jaxpr`
batches a closed jaxpr, for the higher-order primitives' rules. The helpers
`defvectorized`, `defbroadcasting` and `defreducer` build the common rules.

The two axis moves every rule needs, `moveaxis` and `broadcast`, bind lax
primitives; lax registers them here with `register_axis_ops` (lax sits above
this module).
"""
from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from xjax._src import core
from xjax._src import executable_cache
from xjax._src import source_info
from xjax._src.config import config
from xjax._src.interpreters import ad
from xjax._src.interpreters import partial_eval as pe
from xjax._src.sharding.partition_spec import PartitionSpec

not_mapped = None


class AxisData(NamedTuple):
  """The mapped axis of one vmap: its name (None if unnamed), its size, the mesh
  axes it is split over (`spmd_name`: a tuple of mesh axis names, or None), and
  `explicit_mesh_axis`: the Explicit mesh axes the inputs' mapped dimension is
  split over (a tuple, or None), which batched types carry at the batch dimension."""
  name: Any
  size: int
  spmd_name: tuple | None = None
  explicit_mesh_axis: tuple | None = None


def batch_spec(spec, dim: int, entry) -> PartitionSpec:
  """`spec` with `entry` (mesh axis names, or None) inserted at `dim`, padded with
  None up to `dim` first (mirrors JAX's ``pxla.batch_spec``)."""
  parts = list(spec) + [None] * (dim - len(spec))
  parts.insert(dim, entry)
  return PartitionSpec(*parts)


# ----------------------------------------------------------------------------
# Axis moves (bound to lax primitives by lax at import)

_axis_ops: dict[str, Any] = {}


def register_axis_ops(**ops) -> None:
  """Called by lax at import: `moveaxis(x, src, dst)`, `broadcast(x, size, axis)`,
  `expand_trailing(x, ndim)` (size-1 axes appended up to rank `ndim`), `iota(size)`
  (int32 0..size-1) and `sum_batch(x)` (the sum over axis 0)."""
  _axis_ops.update(ops)


def moveaxis(x, src: int, dst: int):
  """`x` with axis `src` moved to position `dst` (a `transpose`; no-op if equal)."""
  if src == dst:
    return x
  return _axis_ops["moveaxis"](x, src, dst)


def broadcast(x, size: int, axis: int):
  """`x` with a new axis of `size` inserted at `axis` (a `broadcast_in_dim`)."""
  return _axis_ops["broadcast"](x, size, axis)


def sum_batch(x):
  """The sum of `x` over its leading (batch) axis."""
  return _axis_ops["sum_batch"](x)


def bdim_at_front(x, bdim, size: int):
  """`x` with its batch axis first; an unbatched `x` is broadcast to `size`."""
  if bdim is not_mapped:
    return broadcast(x, size, 0)
  return moveaxis(x, bdim, 0)


def move_to(x, bdim, dst, size: int):
  """`x` with its batch axis at `dst`, broadcasting an unbatched `x`."""
  if bdim is not_mapped:
    return broadcast(x, size, dst)
  return moveaxis(x, bdim, dst)


# ----------------------------------------------------------------------------
# Tracer and trace


class BatchTracer(core.Tracer):
  """A batched value: `val` with the batch axis at `batch_dim`.

  Printed ``VmapTracer(aval=float32[4], batched=float32[3,4])`` as in JAX.
  """
  __slots__ = ("val", "batch_dim", "_aval", "_source_info")
  tracer_name = "VmapTracer"

  def __init__(self, trace, val, batch_dim: int, source=None):
    self._trace = trace
    self.val = val
    self.batch_dim = batch_dim
    self._source_info = source
    full = core.get_aval(val)
    shape = full.shape
    sharding = getattr(full, "sharding", None)  # refs' avals have none
    if sharding is None:
      self._aval = full.update(shape=shape[:batch_dim] + shape[batch_dim + 1:])
    else:
      self._aval = full.update(shape=shape[:batch_dim] + shape[batch_dim + 1:],
                               sharding=mapped_sharding(sharding, batch_dim))

  @property
  def aval(self):
    return self._aval

  def _origin_msg(self) -> str:
    if self._source_info is None:
      return ""
    return (f"\nThis BatchTracer with object id {id(self)} was created on line:"
            f"\n  {self._source_info.summarize()}")

  def __repr__(self):
    return f"VmapTracer(aval={self._aval}, batched={core.get_aval(self.val)})"


class BatchTrace(core.Trace):
  """Interprets primitives on batched values with their batching rules."""
  __slots__ = ("axis_data",)

  def __init__(self, parent_trace, axis_data: AxisData, tag=None):
    super().__init__(parent_trace, tag)
    self.axis_data = axis_data

  def to_batch_info(self, x):
    if isinstance(x, BatchTracer) and x._trace.tag is self.tag:
      return x.val, x.batch_dim
    return x, not_mapped

  def process_primitive(self, primitive, args, params):
    vals, dims = zip(*map(self.to_batch_info, args)) if args else ((), ())
    if (not primitive.batch_always and all(d is not_mapped for d in dims)
        and not (self.axis_data.name is not None
                 and self.axis_data.name in _axis_names_in_params(params))):
      with core.set_current_trace(self.parent_trace):
        return primitive.bind(*vals, **params)
    rule = primitive.batch
    if rule is None:
      raise core.missing_rule("Batching", primitive)
    if primitive in tagged_batchers:
      params = dict(params, trace_tag=self.tag)
    with core.set_current_trace(self.parent_trace):
      out, out_dim = rule(self.axis_data, vals, dims, **params)
    if primitive.multiple_results:
      return [self.box(x, d) for x, d in zip(out, out_dim, strict=True)]
    return self.box(out, out_dim)

  def box(self, x, bdim):
    return x if bdim is not_mapped else BatchTracer(self, x, bdim, source_info.current())


# Primitives whose batching rule also takes ``trace_tag``, the batch trace's tag: rules
# that run user callables (custom_jvp's rule, custom_vjp's fwd/bwd) batch them under a
# trace of the same tag, so that the batched values they close over are the batch's own
# (JAX's ``batch_subtrace`` with ``self.tag``).
tagged_batchers: set = set()


def _axis_names_in_params(params) -> frozenset:
  """The axis names the collectives inside a higher-order primitive's jaxprs use.

  A jit (or cond, scan, ...) with no batched operand still depends on the batch
  when its body reads the batch's axis (`lax.axis_index('i')`, `psum` over 'i'):
  it must go through its batching rule, not run once unbatched.
  """
  names = frozenset()
  for value in params.values():
    for jaxpr in (value if isinstance(value, tuple) else (value,)):
      if isinstance(jaxpr, core.ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
      if isinstance(jaxpr, core.Jaxpr):
        names |= _jaxpr_axis_names(jaxpr)
  return names


def _jaxpr_axis_names(jaxpr: core.Jaxpr) -> frozenset:
  # A walk, not cached: it runs only for named vmaps over unbatched higher-order calls.
  found = set()
  for eqn in jaxpr.eqns:
    if eqn.primitive.batch_always:
      for key in ("axes", "axis_name"):
        value = eqn.params.get(key)
        found.update(n for n in (value if isinstance(value, tuple) else (value,))
                     if n is not None and not isinstance(n, int))
    found |= _axis_names_in_params(eqn.params)
  return frozenset(found)


def _run_batched(fun, axis_data: AxisData, args, in_dims, tag=None):
  """Runs flat `fun` under a new batch trace, `args[i]` mapped along `in_dims[i]` (or None).

  Returns the outputs' ``(values, batch dims)``, the dims as the rules left them.
  """
  trace = BatchTrace(core.current_trace(), axis_data, tag)
  tracers = [x if d is not_mapped else BatchTracer(trace, x, d) for x, d in zip(args, in_dims)]
  with core.set_current_trace(trace), core.extend_axis_env(axis_data.name, axis_data.size):
    try:
      outs = fun(*tracers)
    finally:
      trace.invalidate()
  vals, dims = zip(*map(trace.to_batch_info, outs)) if outs else ((), ())
  if config.jax_check_tracer_leaks:
    from xjax._src import leak_checker  # only loaded when leak checking is on
    del tracers, outs
    leak_checker.check_trace(trace)
  return vals, dims


def batch_flat(fun, axis_data: AxisData, args, in_dims, out_dims_dest, tag=None,
               sum_match: bool = False):
  """Runs flat `fun` batched: `args[i]` is mapped along `in_dims[i]` (or None).

  `out_dims_dest` is a list (one dest per output: an int axis or None) or a
  function of the number of outputs returning one. Returns the outputs with
  their batch axes moved to (or broadcast at) the destinations; with
  `sum_match`, a batched output whose destination is None is summed over its
  batch axis.
  """
  vals, dims = _run_batched(fun, axis_data, args, in_dims, tag)
  dests = out_dims_dest(len(vals)) if callable(out_dims_dest) else out_dims_dest
  return [matchaxis(axis_data, d, dest, v, i, sum_match) for i, (v, d, dest)
          in enumerate(zip(vals, dims, dests, strict=True))]


# ----------------------------------------------------------------------------
# Vmappable types: user types that vmap maps with handlers of their own


# data type -> (spec type, axis size type), and the handlers, as JAX keeps them.
vmappables: dict[type, tuple[type, type]] = {}
spec_types: set[type] = set()
to_elt_handlers: dict[type, Any] = {}
from_elt_handlers: dict[type, Any] = {}
make_iota_handlers: dict[type, Any] = {}


def register_vmappable(data_type: type, spec_type: type, axis_size_type: type,
                       to_elt: Any, from_elt: Any, make_iota: Any | None) -> None:
  """Makes `vmap` map instances of `data_type` with handlers, as leaves of its arguments
  and results (mirrors `jax.interpreters.batching.register_vmappable`).

  Args:
    data_type: the type to map; its instances are leaves for vmap even if pytrees.
    spec_type: the type of the in_axes/out_axes entries for it (allowed by vmap's checks).
    axis_size_type: the type of axis sizes that `make_iota` handles.
    to_elt: ``to_elt(cont, get_idx, x, spec) -> element``: one batch member of `x`;
      ``cont(value, axis)`` maps a contained value along `axis` (an int or None), and
      ``get_idx()`` is the batch index (a batched int32).
    from_elt: ``from_elt(cont, axis_size, elt, spec) -> x``: the batched result from
      one member; ``cont(axis_size, value, axis)`` puts a value's batch axis at `axis`.
    make_iota: ``make_iota(axis_size) -> array`` for `axis_size_type`, or None.
  """
  vmappables[data_type] = (spec_type, axis_size_type)
  spec_types.add(spec_type)
  to_elt_handlers[data_type] = to_elt
  from_elt_handlers[data_type] = from_elt
  if make_iota is not None:
    make_iota_handlers[axis_size_type] = make_iota


def unregister_vmappable(data_type: type) -> None:
  """Undoes `register_vmappable` for `data_type` (mirrors JAX's function of that name);
  a spec type other registered types share stays allowed."""
  spec_type, axis_size_type = vmappables.pop(data_type)
  to_elt_handlers.pop(data_type, None)
  from_elt_handlers.pop(data_type, None)
  if all(s is not spec_type for s, _ in vmappables.values()):
    spec_types.discard(spec_type)
  if all(a is not axis_size_type for _, a in vmappables.values()):
    make_iota_handlers.pop(axis_size_type, None)


def is_vmappable(x) -> bool:
  """Whether `x`'s type is registered with `register_vmappable`."""
  return type(x) in vmappables


def make_iota(axis_size):
  """The batch index 0..axis_size-1 (int32), or a registered `make_iota` handler's."""
  handler = make_iota_handlers.get(type(axis_size))
  return handler(axis_size) if handler else _axis_ops["iota"](axis_size)


def to_elt(trace, get_idx, x, spec):
  """One batch member of `x`, mapped along `spec` (an int, None, or a vmappable's spec)."""
  handler = to_elt_handlers.get(type(x))
  if handler is not None:
    return handler(functools.partial(to_elt, trace, get_idx), get_idx, x, spec)
  if spec is not_mapped:
    return x
  return BatchTracer(trace, x, _canonical_axis(spec, np.ndim(x)), source_info.current())


def from_elt(trace, axis_data: AxisData, sum_match: bool, leaf_idx, x, spec):
  """The batched value of output `x` with its batch axis at `spec` (see `matchaxis`)."""
  handler = from_elt_handlers.get(type(x))
  if handler is not None:
    def cont(size, elt, axis):
      return from_elt(trace, axis_data._replace(size=size), sum_match, leaf_idx, elt, axis)
    return handler(cont, axis_data.size, x, spec)
  val, bdim = trace.to_batch_info(x)
  return matchaxis(axis_data, bdim, spec, val, leaf_idx, sum_match)


def batch_vmappable(fun, axis_data: AxisData, args, in_specs, out_specs, sum_match=False):
  """`batch_flat` for arguments and results that may be vmappable (`register_vmappable`):
  the inputs go through `to_elt` under the caller's trace, the outputs through
  `from_elt` under the batch trace, as JAX does. `out_specs` is a function of the
  number of outputs giving their specs."""
  trace = BatchTrace(core.current_trace(), axis_data)
  idx = []

  def get_idx():
    if not idx:
      with core.set_current_trace(trace.parent_trace):
        iota = make_iota(axis_data.size)
      idx.append(BatchTracer(trace, iota, 0, source_info.current()))
    return idx[0]

  elts = [to_elt(trace, get_idx, x, spec) for x, spec in zip(args, in_specs)]
  with core.set_current_trace(trace), core.extend_axis_env(axis_data.name, axis_data.size):
    try:
      outs = fun(*elts)
      specs = out_specs(len(outs))
      return [from_elt(trace, axis_data, sum_match, i, x, spec)
              for i, (x, spec) in enumerate(zip(outs, specs, strict=True))]
    finally:
      trace.invalidate()


class SpecMatchError(Exception):
  """An output batched along `src` where out_axes asked for None (leaf `leaf_idx`)."""

  def __init__(self, leaf_idx, src, dst):
    super().__init__(leaf_idx, src, dst)
    self.leaf_idx, self.src, self.dst = leaf_idx, src, dst


def matchaxis(axis_data: AxisData, src, dst, x, leaf_idx=None, sum_match: bool = False):
  """`x` batched at `src` moved to `dst` (broadcast when `src` is None; summed over
  `src` when `dst` is None and `sum_match`)."""
  if not core.valid_jaxtype(x):
    raise TypeError(f"Output from batched function {x!r} with type {type(x)} "
                    "is not a valid JAX type")
  if src == dst:
    return x
  if src is not_mapped:
    return broadcast(x, axis_data.size, _canonical_axis(dst, np.ndim(x) + 1))
  if dst is not_mapped and sum_match:
    return x.sum(src)
  if dst is not_mapped:
    if axis_data.name is not None:
      raise ValueError(f"vmap has mapped output (axis_name={axis_data.name}) "
                       f"but out_axes is {dst}")
    raise SpecMatchError(leaf_idx, src, dst)
  return moveaxis(x, src, _canonical_axis(dst, np.ndim(x)))


def _canonical_axis(axis: int, ndim: int) -> int:
  if not -ndim <= axis < ndim:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
  return axis % ndim


# ----------------------------------------------------------------------------
# Batching jaxprs (for the higher-order primitives)


def batch_jaxpr(closed: core.ClosedJaxpr, axis_data: AxisData, in_batched, instantiate):
  """Batches `closed` along a leading axis.

  `in_batched[i]` says whether input i carries the batch axis (first); an
  output is batched (first) if it depends on a batched input, or if
  `instantiate` (a bool or one bool per output) asks for it. Returns
  ``(batched ClosedJaxpr, out_batched)``.
  """
  n_out = len(closed.out_avals)
  if isinstance(instantiate, bool):
    instantiate = (instantiate,) * n_out
  return _weakly_cached(closed, ("batch", axis_data, tuple(in_batched), tuple(instantiate)),
                        lambda: _batch_jaxpr(closed, axis_data, tuple(in_batched),
                                             tuple(instantiate)))


# Batched jaxprs, held as long as the jaxpr they batch lives (keyed weakly on it: an
# LRU cache keyed on jaxprs would keep thousands of them, and what they close over, alive).
_batched_jaxprs = executable_cache.DerivedCache("batched jaxprs")


def _weakly_cached(closed: core.ClosedJaxpr, key, build):
  return _batched_jaxprs.get_or_build(closed, key, build)


def _batch_jaxpr(closed, axis_data, in_batched, instantiate):
  in_dims = tuple(0 if b else not_mapped for b in in_batched)
  out_batched = []

  def fun(*args):
    vals, dims = _run_batched(core.jaxpr_as_fun(closed), axis_data, args, in_dims)
    out_batched.extend(d is not not_mapped or inst for d, inst in zip(dims, instantiate))
    return [bdim_at_front(v, d, axis_data.size) if b else v
            for v, d, b in zip(vals, dims, out_batched)]

  batched = pe.trace_to_jaxpr(fun, _batched_avals(closed, axis_data, in_dims))
  return batched, tuple(out_batched)


def batch_jaxpr_axes(closed: core.ClosedJaxpr, axis_data: AxisData, in_dims: tuple):
  """Batches `closed` with input i mapped along `in_dims[i]` (None: unmapped).

  The outputs keep the batch axes the rules gave them (nothing is moved).
  Returns ``(batched ClosedJaxpr, out_dims)``. Used by jit, whose inner jaxpr
  sees the batch axes where the caller has them, as in JAX.
  """
  return _weakly_cached(closed, ("axes", axis_data, in_dims),
                        lambda: _batch_jaxpr_axes(closed, axis_data, in_dims))


def _batch_jaxpr_axes(closed, axis_data, in_dims):
  out_dims = []

  def fun(*args):
    vals, dims = _run_batched(core.jaxpr_as_fun(closed), axis_data, args, in_dims)
    out_dims.extend(dims)
    return list(vals)

  batched = pe.trace_to_jaxpr(fun, _batched_avals(closed, axis_data, in_dims))
  return batched, tuple(out_dims)


def _batched_avals(closed, axis_data, in_dims):
  return [a if d is not_mapped else unmapped_aval(a, d, axis_data)
          for a, d in zip(closed.in_avals, in_dims)]


def mapped_sharding(sharding, dim: int):
  """An aval's sharding (None, or a NamedSharding on Explicit axes) with dimension `dim`
  mapped away, as JAX's mapped avals keep the rest of the spec."""
  if sharding is None:
    return None
  spec = tuple(sharding.spec)
  return type(sharding)(sharding.mesh, type(sharding.spec)(*spec[:dim], *spec[dim + 1:]))


def unmapped_aval(aval, dim: int, axis_data: AxisData):
  """`aval` with a batch dimension of `axis_data.size` inserted at `dim`, split over the
  vmap's Explicit mesh axes there (JAX's `unmapped_aval`)."""
  shape = aval.shape[:dim] + (axis_data.size,) + aval.shape[dim:]
  ema = axis_data.explicit_mesh_axis
  sharding = getattr(aval, "sharding", None)
  if (sharding is None and ema is None) or not hasattr(aval, "sharding"):  # refs: untyped
    return aval.update(shape=shape)
  if sharding is None:
    # Deferred: the sharding package sits above the interpreters.
    from xjax._src.sharding.mesh import get_abstract_mesh
    from xjax._src.sharding.shardings import NamedSharding
    from xjax._src.sharding.partition_spec import PartitionSpec
    mesh = get_abstract_mesh()
    if mesh.empty:
      return aval.update(shape=shape)
    sharding = NamedSharding(mesh, PartitionSpec(*[None] * len(aval.shape)))
  spec = tuple(sharding.spec._normalized_spec_for_aval(len(aval.shape)))
  entry = None if ema is None else ema[0] if len(ema) == 1 else ema
  new = type(sharding)(sharding.mesh, type(sharding.spec)(*spec[:dim], entry, *spec[dim:]))
  return aval.update(shape=shape, sharding=new)


# ----------------------------------------------------------------------------
# Rule builders


def defvectorized(prim: core.Primitive) -> None:
  """Batching for a unary elementwise primitive: apply it to the batched value."""
  prim.def_batch(functools.partial(vectorized_batcher, prim))


def vectorized_batcher(prim, axis_data, args, dims, **params):
  (x,), (d,) = args, dims
  out = prim.bind(x, **params)
  return (out, [d] * len(out)) if prim.multiple_results else (out, d)


def defbroadcasting(prim: core.Primitive) -> None:
  """Batching for an n-ary elementwise primitive that broadcasts size-1 and rank-0 operands."""
  prim.def_batch(functools.partial(broadcast_batcher, prim))


def broadcast_batcher(prim, axis_data, args, dims, **params):
  """Batched operands of one shape and dim apply directly; otherwise batch axes go first.

  Unbatched operands get a size-1 leading axis (the primitive broadcasts it),
  except rank-0 ones, which broadcast as they are.
  """
  shape, dim = next((np.shape(x), d) for x, d in zip(args, dims) if d is not not_mapped)
  if all(np.shape(x) == shape and d == dim for x, d in zip(args, dims) if np.ndim(x)):
    out = prim.bind(*args, **params)
    return (out, [dim] * len(out)) if prim.multiple_results else (out, dim)
  args = [bdim_at_front(x, d, 1) if np.ndim(x) else x for x, d in zip(args, dims)]
  ndim = max(np.ndim(x) for x in args)
  args = [_handle_scalar_broadcasting(ndim, x, d) for x, d in zip(args, dims)]
  out = prim.bind(*args, **params)
  return (out, [0] * len(out)) if prim.multiple_results else (out, 0)


def _handle_scalar_broadcasting(ndim, x, d):
  # A batched rank-0 operand became rank 1 (size B): give it trailing size-1 axes.
  if d is not_mapped or ndim == np.ndim(x):
    return x
  return _axis_ops["expand_trailing"](x, ndim)


def defreducer(prim: core.Primitive, axes_param: str = "axes") -> None:
  """Batching for a reduction over `axes`: the batch axis is kept, the axes shift past it."""
  prim.def_batch(functools.partial(reducer_batcher, prim, axes_param))


def reducer_batcher(prim, axes_param, axis_data, args, dims, **params):
  (x,), (bdim,) = args, dims
  axes = params[axes_param]
  # NumPy integers, as JAX computes them: they print as `np.int64(...)` in jaxprs.
  shifted = tuple(np.where(np.less(axes, bdim), axes, np.add(axes, 1)))
  params = {**params, axes_param: shifted}
  out = prim.bind(x, **params)
  kept = [i for i in range(np.ndim(x)) if i not in shifted]
  out_dim = kept.index(bdim)
  return (out, [out_dim] * len(out)) if prim.multiple_results else (out, out_dim)


# ----------------------------------------------------------------------------
# The rules of the autodiff primitives (ad sits below this module)


def _add_any_batch(axis_data, args, dims):
  # add_any never broadcasts: an unbatched operand is broadcast to the batch.
  (x, y), (x_dim, y_dim) = args, dims
  if x_dim is not_mapped:
    x, x_dim = broadcast(x, axis_data.size, y_dim), y_dim
  elif y_dim is not_mapped:
    y = broadcast(y, axis_data.size, x_dim)
  else:
    y = moveaxis(y, y_dim, x_dim)
  return ad.add_any_p.bind(x, y), x_dim


ad.add_any_p.def_batch(_add_any_batch)
defvectorized(ad.stop_gradient_p)
