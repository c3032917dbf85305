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

from xjax._src import api
from xjax._src import distributed
from xjax._src import tree_util
from xjax._src.array import Array
from xjax._src.sharding.array_construction import make_array_from_single_device_arrays
from xjax._src.sharding.mesh import Mesh, set_mesh
from xjax._src.sharding.partition_spec import PartitionSpec, axes_of
from xjax._src.sharding.shardings import NamedSharding

P = PartitionSpec


def _processes_mesh() -> Mesh:
  """All devices as a (process, local device) mesh: row p is process p's devices."""
  devices = np.array(api.devices(), dtype=object).reshape(api.process_count(),
                                                         api.local_device_count())
  return Mesh(devices, ("processes", "local_devices"))


def _sum_leading(tree):
  from xjax import numpy as jnp
  return tree_util.tree_map(lambda x: jnp.sum(x, axis=0, dtype=x.dtype), tree)


def broadcast_one_to_all(in_tree, is_source: bool | None = None):
  """Every process gets the source process's values.

  Args:
    in_tree: a pytree of arrays, of the same shapes and dtypes in every process.
    is_source: whether this process is the source; None: process 0 is.

  Returns:
    The pytree of NumPy arrays holding the source's values, in every process.

  Mirrors `jax.experimental.multihost_utils.broadcast_one_to_all`.
  """
  if api.process_count() == 1:
    return tree_util.tree_map(np.asarray, in_tree)
  if is_source is None:
    is_source = api.process_index() == 0
  mesh = _processes_mesh()

  def stacked(x):
    x = np.asarray(x)
    return host_local_array_to_global_array((x if is_source else np.zeros_like(x))[None],
                                            mesh, P("processes"))

  from xjax._src.jit import jit
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
  from xjax._src.jit import jit
  if type(x) is Array and not x.is_fully_addressable:
    if not tiled:
      raise ValueError("Gathering global non-fully-addressable arrays only supports tiled=True")
    replicated = NamedSharding(x.sharding.mesh, P())
    return np.asarray(jit(lambda v: v, out_shardings=replicated)(x).addressable_data(0))
  value = np.asarray(x)
  if api.process_count() == 1:
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
    return np.concatenate([x.reshape(1) if x.ndim == 0 else x] * api.process_count())

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
    pieces = [api.device_put(value[index], device)
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
      out.append(api.device_put(x, local))
      continue
    target = NamedSharding(global_mesh, spec)
    if not x.sharding.is_equivalent_to(target, x.ndim):
      x = api.device_put(x, target)
    local_shape = _scale_shape(x.shape, global_mesh, spec, grow=False)
    out.append(make_array_from_single_device_arrays(
        local_shape, NamedSharding(global_mesh.local_mesh, spec),
        [s.data for s in x.addressable_shards]))
  return tree_util.tree_unflatten(treedef, out)
