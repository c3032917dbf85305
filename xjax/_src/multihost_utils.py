"""Exchanging values between the processes of a job (mirrors `jax.experimental.multihost_utils`).

Every function here is collective: all processes call it, in the same order,
with values of the same shapes. Each runs a small program over every
process's devices (XLA's cross-process collectives carry the data), so it
works the same on CPU (Gloo), GPU and TPU. In a one-process job they reduce
to local NumPy operations.
"""
from __future__ import annotations

import math
import zlib

import numpy as np

from xjax._src import devices
from xjax._src import distributed
from xjax._src import tree_util
from xjax._src.device_put import device_put, placement_device
from xjax._src.jit import jit
from xjax._src.lax import reductions
from xjax._src.sharding import array_construction
from xjax._src.array import Array
from xjax._src.sharding.array_construction import make_array_from_single_device_arrays
from xjax._src.sharding.mesh import Mesh, set_mesh
from xjax._src.sharding.partition_spec import PartitionSpec, axes_of
from xjax._src.sharding.shardings import NamedSharding, Sharding, SingleDeviceSharding

P = PartitionSpec


def _processes_mesh() -> Mesh:
  """All devices as a (process, local device) mesh: row p is process p's devices."""
  grid = np.array(devices.devices(), dtype=object).reshape(devices.process_count(),
                                                          devices.local_device_count())
  return Mesh(grid, ("processes", "local_devices"))


def _sum_leading(tree):
  """Each leaf summed over its leading (process) axis, in its dtype (bool: any)."""

  def one(x):
    reduce = reductions.reduce_or if x.dtype == np.bool_ else reductions.reduce_sum
    return reduce(x, (0,))
  return tree_util.tree_map(one, tree)


def broadcast_one_to_all(in_tree, is_source: bool | None = None):
  """Every process gets the source process's values.

  Args:
    in_tree: a pytree of arrays, of the same shapes and dtypes in every process.
    is_source: whether this process is the source; None: process 0 is.

  Returns:
    The pytree of NumPy arrays holding the source's values, in every process.

  Mirrors `jax.experimental.multihost_utils.broadcast_one_to_all`.
  """
  if devices.process_count() == 1:
    return tree_util.tree_map(np.asarray, in_tree)
  if is_source is None:
    is_source = devices.process_index() == 0
  mesh = _processes_mesh()

  def stacked(x):
    x = np.asarray(x)
    return host_local_array_to_global_array((x if is_source else np.zeros_like(x))[None],
                                            mesh, P("processes"))

  with set_mesh(mesh):
    out = jit(_sum_leading, out_shardings=P())(tree_util.tree_map(stacked, in_tree))
  return tree_util.tree_map(lambda x: np.asarray(x.addressable_data(0)), out)


def process_allgather(in_tree, tiled: bool = False):
  """Every process's values, gathered in every process.

  Args:
    in_tree: a pytree of arrays. A NumPy array, scalar or fully addressable
      Array must have the same shape in every process; an Array spanning
      several processes is one global value.
    tiled: concatenate the processes' values along axis 0 (True) or stack
      them along a new axis 0 (False, the default). Scalars are stacked.

  Returns:
    A pytree of NumPy arrays: the stacked or concatenated values, or the
    whole of a global Array.

  Raises:
    ValueError: a global Array with ``tiled=False``.

  Mirrors `jax.experimental.multihost_utils.process_allgather`.
  """
  return tree_util.tree_map(lambda x: _allgather(x, tiled), in_tree)


def _allgather(x, tiled: bool):
  if type(x) is Array and not x.is_fully_addressable:
    if not tiled:
      raise ValueError("Gathering global non-fully-addressable arrays only supports tiled=True")
    replicated = NamedSharding(x.sharding.mesh, P())
    return np.asarray(jit(lambda v: v, out_shardings=replicated)(x).addressable_data(0))
  value = np.asarray(x)
  if devices.process_count() == 1:
    return value if tiled else value[None]
  if value.ndim == 0 or not tiled:
    value = value[None]
  mesh = _processes_mesh()
  spread = host_local_array_to_global_array(value, mesh, P("processes"))
  with set_mesh(mesh):
    out = jit(lambda v: v, out_shardings=P())(spread)
  return np.asarray(out.addressable_data(0))


def assert_equal(in_tree, fail_message: str = "") -> None:
  """Checks that every process holds the same values.

  Raises:
    AssertionError: some process's values differ (with `fail_message`).

  Mirrors `jax.experimental.multihost_utils.assert_equal`.
  """
  def repeated(x):
    if type(x) is Array and not x.is_fully_addressable:
      return np.asarray(x.addressable_data(0))
    x = np.asarray(x)
    return np.concatenate([x.reshape(1) if x.ndim == 0 else x] * devices.process_count())

  gathered = process_allgather(in_tree, tiled=True)
  expected = tree_util.tree_map(repeated, in_tree)
  same = tree_util.tree_map(lambda a, b: bool(np.all(np.equal(a, b))), expected, gathered)
  if not all(tree_util.tree_leaves(same)):
    raise AssertionError(f"{fail_message}. Expected: {gathered}; got: {in_tree}.")


def sync_global_devices(name: str) -> None:
  """Waits until every process has reached the barrier `name`.

  Raises:
    AssertionError: the processes passed different names.

  Mirrors `jax.experimental.multihost_utils.sync_global_devices`.
  """
  assert_equal(np.uint32(zlib.crc32(name.encode())),
               f"sync_global_devices name mismatch ('{name}')")


def reached_preemption_sync_point(step_id: int) -> bool:
  """Whether every process has reached the step at which to save after a preemption notice.

  False when `jax.distributed` is not initialized. Raises RuntimeError when
  the preemption service is off (``jax_enable_preemption_service``).

  Mirrors `jax.experimental.multihost_utils.reached_preemption_sync_point`.
  """
  state = distributed.global_state
  if state.client is None:
    return False
  if state.preemption_sync_manager is None:
    raise RuntimeError("Preemption sync manager has not been initialized. Make sure the "
                       "'jax_enable_preemption_service' config is enabled.")
  return state.preemption_sync_manager.reached_sync_point(step_id)


# ----------------------------------------------------------------------------
# Host-local values <-> global Arrays


def _scale_shape(shape, mesh: Mesh, spec, grow: bool) -> tuple:
  """The global shape of a host-local one (`grow`), or the reverse: each dimension split
  over mesh axes spans all processes' blocks of those axes, not only this process's."""
  local = mesh.local_mesh
  out = list(shape)
  for dim, entry in enumerate(tuple(spec)[:len(shape)]):
    axes = axes_of(entry)
    if not axes:
      continue
    whole = math.prod(mesh.shape[a] for a in axes)
    mine = math.prod(local.shape[a] for a in axes)
    if grow:
      out[dim] = shape[dim] * whole // mine
    else:
      if shape[dim] * mine % whole:
        raise ValueError(f"dimension {dim} of size {shape[dim]} cannot be split over mesh axes "
                         f"{axes} of {whole} devices")
      out[dim] = shape[dim] * mine // whole
  return tuple(out)


def _check_pspec(pspec):
  if pspec is None:
    raise ValueError("`None` is not a valid input to the pspecs argument. Please use "
                     "jax.sharding.PartitionSpec() if you wanted to replicate your input.")


def _per_leaf(tree, pspecs):
  leaves, treedef = tree_util.tree_flatten(tree)
  specs = tree_util.broadcast_prefix(pspecs, tree, is_leaf=lambda x: x is None
                                     or isinstance(x, PartitionSpec))
  return leaves, treedef, specs


def host_local_array_to_global_array(local_inputs, global_mesh: Mesh, pspecs):
  """Global Arrays over `global_mesh` from each process's host-local values.

  Each process passes its own part: a dimension split (by `pspecs`) over mesh
  axes that span processes is this process's block of it, and the global
  dimension is the blocks of all processes in mesh order (e.g. with
  ``P("x")`` over 2 processes, global rows are process 0's then process 1's).
  Replicated dimensions must hold the same values in every process.

  Args:
    local_inputs: a pytree of NumPy arrays or Arrays (host-local values).
    global_mesh: a Mesh over every process's devices, in which each process's
      devices form a contiguous block.
    pspecs: a PartitionSpec or a pytree prefix of `local_inputs` of them.

  Returns:
    A pytree of Arrays sharded as ``NamedSharding(global_mesh, pspec)``.
    Global Arrays among the inputs are returned as they are.

  Raises:
    ValueError: a None pspec; a mesh whose local devices are not contiguous.

  Mirrors `jax.experimental.multihost_utils.host_local_array_to_global_array`.
  """
  leaves, treedef, specs = _per_leaf(local_inputs, pspecs)
  out = []
  for x, spec in zip(leaves, specs):
    _check_pspec(spec)
    if type(x) is Array and not x.is_fully_addressable:
      out.append(x)
      continue
    value = np.asarray(x)
    local = NamedSharding(global_mesh.local_mesh, spec)
    pieces = [device_put(value[index], device)
              for device, index in local.devices_indices_map(value.shape).items()]
    out.append(make_array_from_single_device_arrays(
        _scale_shape(value.shape, global_mesh, spec, grow=True),
        NamedSharding(global_mesh, spec), pieces))
  return tree_util.tree_unflatten(treedef, out)


def global_array_to_host_local_array(global_inputs, global_mesh: Mesh, pspecs):
  """This process's part of each global Array, as an Array over its own devices.

  The inverse of `host_local_array_to_global_array`: each dimension split
  over mesh axes spanning processes keeps this process's block.

  Args:
    global_inputs: a pytree of Arrays (resharded to ``NamedSharding(global_mesh,
      pspec)`` first if they are laid out otherwise).
    global_mesh: the Mesh they span.
    pspecs: a PartitionSpec or a pytree prefix of `global_inputs` of them.

  Returns:
    A pytree of Arrays over ``global_mesh.local_mesh``. Fully addressable
    Arrays are returned as they are.

  Raises:
    ValueError: a None pspec.

  Mirrors `jax.experimental.multihost_utils.global_array_to_host_local_array`.
  """
  leaves, treedef, specs = _per_leaf(global_inputs, pspecs)
  out = []
  for x, spec in zip(leaves, specs):
    _check_pspec(spec)
    if type(x) is Array and x.is_fully_addressable:
      out.append(x)
      continue
    if type(x) is not Array:
      x = np.asarray(x)
      local = NamedSharding(global_mesh.local_mesh, spec)
      out.append(device_put(x, local))
      continue
    target = NamedSharding(global_mesh, spec)
    if not x.sharding.is_equivalent_to(target, x.ndim):
      x = device_put(x, target)
    local_shape = _scale_shape(x.shape, global_mesh, spec, grow=False)
    out.append(make_array_from_single_device_arrays(
        local_shape, NamedSharding(global_mesh.local_mesh, spec),
        [s.data for s in x.addressable_shards]))
  return tree_util.tree_unflatten(treedef, out)


# ----------------------------------------------------------------------------
# Global arrays from the data each process holds


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
  """The global Array laid out as `sharding` of which this process holds `local_data`.

  Each process passes the part of the global array its devices hold: along
  each dimension either the whole extent (the data is then the same in every
  process) or the indices its devices cover, packed together (e.g. with
  ``P("x")`` over 2 processes of 2 devices each, process 1 passes rows
  ``N/2:N``).

  Args:
    sharding: a `Sharding` or `PartitionSpec` (over the context mesh), or a
      pytree prefix of `local_data` of them.
    local_data: a pytree of NumPy arrays (or Arrays) held by this process.
    global_shape: None (inferred: each process holds its own equal share of
      each split dimension), or the global shape of each leaf (a pytree
      prefix of tuples). In a one-process job it must equal the data's shape.

  Returns:
    A pytree of Arrays like `local_data`.

  Raises:
    ValueError: a global shape other than the data's shape (one process); a
      dimension matching neither the global extent nor the indices this
      process holds; a global shape that cannot be inferred (processes hold
      overlapping or unequal parts); a sharding that cannot split a leaf; a
      PartitionSpec outside any mesh context.

  Mirrors `jax.make_array_from_process_local_data`.
  """
  leaves, treedef = tree_util.tree_flatten(local_data)
  shapes = tree_util.broadcast_prefix(global_shape, local_data,
                                      is_leaf=lambda x: x is None or isinstance(x, tuple))
  if devices.process_count() == 1:
    for want, leaf in zip(shapes, leaves):
      have = np.shape(leaf)
      if want is not None and tuple(want) != tuple(have):
        raise ValueError("When calling `make_array_from_process_local_data` on a single "
                         "process, global_shape should be None or equal to local_data.shape.Got "
                         f"global_shape={want} and local_data.shape={have}.")
    return device_put(local_data, sharding)
  shardings = [placement_device(s) for s in tree_util.broadcast_prefix(sharding, local_data)]
  out = [_from_process_local(np.asarray(leaf), s if isinstance(s, Sharding)
                             else SingleDeviceSharding(s), shape)
         for leaf, s, shape in zip(leaves, shardings, shapes)]
  return tree_util.tree_unflatten(treedef, out)


def _from_process_local(data, sharding, global_shape):
  if global_shape is None:
    global_shape = _local_to_global_shape(sharding, data.shape)
    if None in global_shape:
      raise ValueError("Unable to compute global_shape due to non-uniform sharding. Specify "
                       f"global shape directly. Partially computed global_shape={global_shape}.")
  elif None in global_shape:
    raise ValueError(f"global_shape={global_shape} has Nones. This is not supported.")
  global_shape = tuple(global_shape)
  index_map = sharding.addressable_devices_indices_map(global_shape)
  shard_shape = sharding.shard_shape(global_shape)
  # Per dimension: the starts of the slices this process's devices hold, in order; the
  # k-th of them is rows k*shard:(k+1)*shard of the packed local data.
  starts = [sorted({index[i].start or 0 for index in index_map.values()})
            for i in range(len(global_shape))]
  for i, (have, want) in enumerate(zip(data.shape, global_shape)):
    if have != want and have != len(starts[i]) * shard_shape[i]:
      raise ValueError("Invalid host data, each dimension should match either global or process "
                       f"shape. In dimension {i}, the process data has {have} elements. Process "
                       f"addresses {len(starts[i]) * shard_shape[i]} elements and "
                       f"global_shape={global_shape}.")

  def local_piece(index):
    pieces = []
    for i, s in enumerate(index):
      if data.shape[i] == global_shape[i]:
        pieces.append(s)
      else:
        k = starts[i].index(s.start or 0)
        pieces.append(slice(k * shard_shape[i], (k + 1) * shard_shape[i]))
    return data[tuple(pieces)]

  return array_construction.make_array_from_callback(global_shape, sharding, local_piece)


def _local_to_global_shape(sharding, local_shape) -> tuple:
  """The global shape of which each process holds an equal, disjoint share along each split
  dimension; None in a dimension where the processes' parts overlap or differ in size."""
  desc = sharding._tile_description(len(local_shape))
  tiles = desc._data_dims() if not desc.is_replicated else (1,) * len(local_shape)
  # Over an array with one element per tile: which tiles each process holds, per dimension.
  index_map = sharding.devices_indices_map(tuple(tiles))
  out = []
  for i, (size, n) in enumerate(zip(local_shape, tiles)):
    held = {}
    for device, index in index_map.items():
      held.setdefault(device.process_index, set()).add(index[i].start or 0)
    groups = {frozenset(g) for g in held.values()}
    k = len(next(iter(groups)))
    disjoint = sum(len(g) for g in groups) == n
    out.append(size * len(groups) if disjoint and all(len(g) == k for g in groups) else None)
  return tuple(out)
