"""The `device_put` primitive: `xjax.device_put` of traced values.

`device_put` is `xjax.device_put`: outside any transformation it places values
directly; under a trace it binds `device_put_p` once for all leaves,
with JAX's params: the target of each leaf (`devices`), its stated source
(`srcs`) and its `copy_semantics`. On one device the primitive is the identity
on values: abstract eval, lowering and batching pass operands through, and it
is linear (its transpose puts the cotangents back, from `devices` to `srcs`,
as copies).
"""
from __future__ import annotations

import enum

import numpy as np

from xjax._src import backend
from xjax._src import core
from xjax._src import dispatch
from xjax._src import tree_util
from xjax._src.array import Array
from xjax._src.devices import process_count
from xjax._src.sharding import rules
from xjax._src.sharding import spmd
from xjax._src.sharding.mesh import get_concrete_mesh
from xjax._src.sharding.partition_spec import PartitionSpec
from xjax._src.sharding.shardings import NamedSharding, Sharding, SingleDeviceSharding
from xjax._src.interpreters import ad
from xjax._src.lax import structural


class ArrayCopySemantics(enum.Enum):
  """Whether `device_put` may reuse, must copy, or may donate a leaf's buffer.

  Mirrors `jax._src.dispatch.ArrayCopySemantics` (printed the same way in jaxprs).
  """
  ALWAYS_COPY = 0
  REUSE_INPUT = 1
  DONATE_INPUT = 2

  def __repr__(self):
    return f"ArrayCopySemantics.{self.name}"


def copy_semantics(donate: bool, may_alias) -> ArrayCopySemantics:
  """The semantics of one leaf from `device_put`'s `donate` and `may_alias` arguments.

  Raises:
    ValueError: both are True.
  """
  if may_alias and donate:
    raise ValueError("may_alias and donate cannot be True at the same time.")
  if may_alias is None:
    may_alias = not donate
  if may_alias:
    return ArrayCopySemantics.REUSE_INPUT
  return ArrayCopySemantics.DONATE_INPUT if donate else ArrayCopySemantics.ALWAYS_COPY


def target_device(device):
  """The device of a placement (None, a Device or a single-device sharding)."""
  return device._device if isinstance(device, SingleDeviceSharding) else device


def place(leaf, device, semantics: ArrayCopySemantics):
  """`leaf` (a concrete value) as an Array on `device` (None: the default, uncommitted; a
  Sharding: split over its devices). An Array already there (any, for None) is returned
  itself where the semantics let it be reused, as JAX's."""
  if (semantics is ArrayCopySemantics.REUSE_INPUT and type(leaf) is Array
      and not leaf.is_deleted()
      and (device is None or leaf._committed and leaf.sharding == _as_sharding(device))):
    return leaf
  if isinstance(device, Sharding):
    if not device.is_fully_addressable and not (type(leaf) is Array and leaf._committed):
      _check_same_in_every_process(leaf, device)
    placed = spmd.place(leaf, device)
    if (placed is not leaf and semantics is ArrayCopySemantics.DONATE_INPUT
        and type(leaf) is Array and placed._buf is not leaf._buf):
      leaf.delete()
    return placed
  placed = dispatch.device_put_value(leaf, device)
  if placed is leaf and semantics is ArrayCopySemantics.ALWAYS_COPY:
    placed = dispatch.device_put_value(np.asarray(leaf), device, weak_type=leaf.weak_type,
                                       committed=leaf.committed)
  elif (placed is not leaf and semantics is ArrayCopySemantics.DONATE_INPUT
        and type(leaf) is Array and placed._buf is not leaf._buf):
    leaf.delete()
  return placed


def _as_sharding(device) -> Sharding:
  return device if isinstance(device, Sharding) else SingleDeviceSharding(device)


def _check_same_in_every_process(value, sharding) -> None:
  """A host value placed over several processes' devices must be the same in each (each
  process places its own devices' pieces of it): JAX's AssertionError otherwise."""
  if len({d.process_index for d in sharding._device_assignment}) != process_count():
    return  # some processes place nothing: their values need not agree
  from xjax._src import multihost_utils
  multihost_utils.assert_equal(
      value, fail_message=f"{type(value)} passed to device_put is not the same on each process. "
      f"Make sure you are passing the same value of {type(value)} on each process.")


def _device_put_impl(*xs, devices, srcs, copy_semantics):
  return [place(x, target_device(d), c) for x, d, c in zip(xs, devices, copy_semantics)]


def _device_put_abstract_eval(*avals, devices, srcs, copy_semantics):
  out = []
  for a, d in zip(avals, devices):
    if isinstance(d, Sharding) and not isinstance(d, SingleDeviceSharding):
      d.check_shape(a.shape)
      a = a.update(sharding=rules.aval_sharding(d, len(a.shape)))
    out.append(a)
  return out


def _device_put_lowering(ctx, *xs, devices, srcs, copy_semantics):
  if ctx.module.spmd is None or ctx.module.axis_context is not None:
    return list(xs)  # one device, one memory: nothing moves
  # Over a mesh: a leaf put on a sharding is laid out so.
  return [ctx.op1("sdy.sharding_constraint", [x], x.type,
                  f"sharding = {d.sdy_text(len(a.shape))}")
          if isinstance(d, NamedSharding) else x
          for x, d, a in zip(xs, devices, ctx.avals_in)]


def _device_put_transpose(cts, *args, devices, srcs, copy_semantics):
  # The cotangents travel back from each leaf's target to its source, as copies.
  if ArrayCopySemantics.DONATE_INPUT in copy_semantics:
    raise ValueError("donate=True is not allowed during tranposition of device_put. "
                     "Please file an issue if you want this to be supported.")
  moved = [i for i, (ct, x) in enumerate(zip(cts, args))
           if ad.is_undefined_primal(x) and type(ct) is not ad.Zero]
  results = [None] * len(cts)
  for i, x in enumerate(args):
    if ad.is_undefined_primal(x) and i not in moved:
      results[i] = ad.Zero(x.aval)
  if moved:
    outs = device_put_p.bind(
        *[cts[i] for i in moved], devices=tuple(srcs[i] for i in moved),
        srcs=tuple(devices[i] for i in moved),
        copy_semantics=(ArrayCopySemantics.ALWAYS_COPY,) * len(moved))
    for i, y in zip(moved, outs):
      results[i] = y
  return results


def _device_put_batch(axis_data, args, dims, **params):
  return device_put_p.bind(*args, **params), list(dims)


device_put_p = core.Primitive("device_put", multiple_results=True)
device_put_p.def_impl(_device_put_impl)
device_put_p.def_abstract_eval(_device_put_abstract_eval)
device_put_p.def_lowering(_device_put_lowering)
ad.deflinear(device_put_p, _device_put_transpose)
device_put_p.def_batch(_device_put_batch)


# ----------------------------------------------------------------------------
# xjax.device_put and the other host <-> device functions


def device_put(x, device=None, *, src=None, donate: bool = False, may_alias=None):
  """Places each leaf of `x` on `device` (committing it there), or on the default device.

  Args:
    x: a pytree of arrays or scalars.
    device: None, a Device, or a single-device sharding; or a pytree prefix of
      `x` of these. None places leaves, uncommitted, on the default device.
    src: accepted for JAX's signature; the source placement is read off `x`
      (under a trace it is recorded in the equation's ``srcs``).
    donate: a leaf copied to another device gives up its buffer (it is deleted).
    may_alias: False forces a copy even where the leaf is already in place.

  Under a transformation (jit, grad, vmap, make_jaxpr) this binds
  `lax.device_put_p` once for all leaves, as JAX does.

  Returns:
    A pytree of Arrays like `x`.

  Raises:
    ValueError: `device` is not a device, sharding or None, or is a pytree that
      is not a prefix of `x`; or `donate` and `may_alias` are both True.

  Mirrors `jax.device_put`.
  """
  leaves, tree = tree_util.tree_flatten(x)
  device_given_whole = device is None or backend.is_device(device) or isinstance(
      device, (Sharding, PartitionSpec))
  if device_given_whole:
    devices = [device] * len(leaves)
  else:
    if tree_util.prefix_errors(device, x, is_leaf=lambda v: v is None):
      raise _prefix_error(device, tree)
    devices = tree_util.broadcast_prefix(device, x, is_leaf=lambda v: v is None)
  # Validates every placement (a bad one raises ValueError, traced or not).
  targets = [placement_device(device)] * len(leaves) if device_given_whole else [
      placement_device(d) for d in devices]
  semantics = copy_semantics(donate, may_alias)
  if core.trace_ctx.trace is not core.eval_trace:
    # Traced: one device_put equation for all leaves, with JAX's params.
    srcs = tuple(src if src is not None else leaf.sharding if type(leaf) is Array else None
                 for leaf in leaves)
    out = device_put_p.bind(
        *leaves, devices=tuple(devices), srcs=srcs, copy_semantics=(semantics,) * len(leaves))
    return tree_util.tree_unflatten(tree, out)
  out = []
  for leaf, target in zip(leaves, targets):
    if isinstance(leaf, core.Tracer):
      out.append(leaf)
      continue
    out.append(place(leaf, target, semantics))
  return tree_util.tree_unflatten(tree, out)


class _PytreeLeaf:
  """Stands for each leaf of the value in device_put's prefix-error report (JAX's)."""

  def __repr__(self):
    return "pytree leaf"


def _prefix_error(device, tree) -> ValueError:
  """JAX's ValueError for a device specification that is no tree prefix of the value: every
  mismatch listed, the value's leaves shown as pytree leaves (and Nones of the specification
  as subtrees, as JAX's report has them)."""
  dummy = tree_util.tree_unflatten(tree, [_PytreeLeaf() for _ in range(tree.num_leaves)])
  errors_ = tree_util.prefix_errors(device, dummy)
  details = "\n  ".join(str(e("device_put device")) for e in errors_)
  return ValueError("device_put device specification must be a tree prefix of the "
                    f"corresponding value; \n  Mismatch details ({len(errors_)} found):\n"
                    f"  {details}")


def placement_device(device):
  """The placement of a device_put target: None, a Device, or a multi-device sharding
  (a bare PartitionSpec is over the context mesh)."""
  if device is None or backend.is_device(device):
    return device
  if isinstance(device, SingleDeviceSharding):
    return device._device
  if isinstance(device, Sharding):
    return device
  if isinstance(device, PartitionSpec):
    mesh = get_concrete_mesh()
    if mesh is None:
      raise ValueError(f"device_put was given the PartitionSpec {device!r} outside any mesh "
                       "context: set one with `jax.set_mesh(mesh)` or pass "
                       "`NamedSharding(mesh, spec)`.")
    return NamedSharding(mesh, device)
  raise ValueError(
      "`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, `jax.Device`, "
      "`Format`, `jax.memory.Space` or a pytree of these values. Received invalid "
      f"value: {device}")


def device_get(x):
  """Copies every Array leaf of `x` to a NumPy array (mirrors `jax.device_get`)."""
  return tree_util.tree_map(lambda a: np.asarray(a) if type(a) is Array else a, x)


def block_until_ready(x):
  """Waits for every Array leaf of `x` to be computed; returns `x` (mirrors `jax.block_until_ready`)."""
  for leaf in tree_util.tree_leaves(x):
    if type(leaf) is Array:
      leaf.block_until_ready()
  return x


def copy_to_host_async(x):
  """Starts copying every Array leaf of pytree `x` to host memory, without waiting.

  Leaves without a ``copy_to_host_async`` method are left alone (an AttributeError the
  method itself raises is not hidden). A later ``np.asarray(leaf)`` then finds the data on
  the host. Returns `x` itself, as JAX 0.10.2's does. Mirrors `jax.copy_to_host_async`.
  """
  for leaf in tree_util.tree_leaves(x):
    try:
      copy = leaf.copy_to_host_async
    except AttributeError:
      continue
    copy()
  return x


def _array_to_device(self, device, *, stream=None) -> Array:
  """The array on `device`, committed there (mirrors `jax.Array.to_device`).

  Raises:
    ValueError: `device` is not a device or sharding.
    NotImplementedError: a `stream` (there are none on this platform).
  """
  if stream is not None:
    raise NotImplementedError("to_device(stream=...) is not supported")
  return device_put(self, device)


# device_put sits above array and core; as in JAX, tracers have the method too.
Array.to_device = _array_to_device
core.Tracer.to_device = _array_to_device


# `lax.full(..., sharding=)` places its result with device_put (lax sits below this module).
structural.set_placement(device_put)
