"""Shardings: where each piece of an array lives.

A sharding maps an array shape to one index (a tuple of slices) per device.
`SingleDeviceSharding` puts the whole array on one device; `NamedSharding`
splits dimensions over the axes of a `Mesh` as a `PartitionSpec` says.

Every sharding reduces to a *tile description* — how many tiles each
dimension is cut into, which device (by its position in the sharding's
device assignment) holds each tile, and whether the devices of the last
tile dimension hold replicas — which is XLA's HloSharding. The SPMD
partitioner reads it as an attribute (Shardy's ``#sdy.sharding`` text for
named shardings), and the runtime uses it to split and assemble arrays.
"""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from xjax._src import backend
from xjax._src import executable_cache
from xjax._src.sharding import mesh as mesh_lib
from xjax._src.sharding.partition_spec import UNCONSTRAINED, PartitionSpec, axes_of


class DuplicateSpecError(Exception):
  """A PartitionSpec names one mesh axis for two dimensions (mirrors JAX's error class)."""


class IndivisibleError(ValueError):
  """A sharding splits a dimension into parts that do not divide it (mirrors JAX's class of
  the same name: `Sharding.shard_shape`, `devices_indices_map` and pmap raise it)."""


class TileDescription:
  """XLA's HloSharding in plain terms.

  `tile_dims`: tiles per array dimension (plus a last replication dimension
  when `replicate_last`); `devices`: the position (in the device assignment)
  of the device holding each tile, row-major over `tile_dims`.
  """
  __slots__ = ("tile_dims", "devices", "replicate_last")

  def __init__(self, tile_dims, devices, replicate_last: bool):
    self.tile_dims = tuple(int(d) for d in tile_dims)
    self.devices = tuple(int(d) for d in devices)
    self.replicate_last = bool(replicate_last)

  @property
  def is_replicated(self) -> bool:
    return all(d == 1 for d in self._data_dims())

  def _data_dims(self) -> tuple:
    return self.tile_dims[:-1] if self.replicate_last else self.tile_dims

  def _key(self):
    if self.is_replicated:
      return ("replicated",)
    return (self.tile_dims, self.devices, self.replicate_last)

  def __eq__(self, other):
    return isinstance(other, TileDescription) and self._key() == other._key()

  def __hash__(self):
    return hash(self._key())

  def hlo_text(self) -> str:
    """XLA's text form, e.g. ``{devices=[4,1]0,1,2,3}`` or ``{replicated}``."""
    if self.is_replicated:
      return "{replicated}"
    dims = ",".join(map(str, self.tile_dims))
    devs = ",".join(map(str, self.devices))
    return f"{{devices=[{dims}]{devs}{' last_tile_dim_replicate' if self.replicate_last else ''}}}"

  def indices(self, shape, num_devices: int) -> list:
    """Per device position: the tuple of slices of `shape` it holds, and its replica id."""
    shape = tuple(shape)
    data_dims = self._data_dims()
    out: list = [None] * num_devices
    if self.is_replicated:
      return [(tuple(slice(None) for _ in shape), i) for i in range(num_devices)]
    tiles = np.asarray(self.devices).reshape(self.tile_dims)
    for coord in itertools.product(*(range(d) for d in self.tile_dims)):
      index = []
      for dim, (size, n) in enumerate(zip(shape, data_dims)):
        chunk = size // n
        index.append(slice(None) if n == 1 else slice(coord[dim] * chunk, (coord[dim] + 1) * chunk))
      replica = coord[-1] if self.replicate_last else 0
      out[int(tiles[coord])] = (tuple(index), replica)
    return out


class Sharding:
  """The base class of shardings (mirrors `jax.sharding.Sharding`)."""

  @property
  def device_set(self) -> set:
    return set(self._device_assignment)

  @property
  def num_devices(self) -> int:
    return len(self._device_assignment)

  @property
  def addressable_devices(self) -> set:
    """The devices of this process among the sharding's."""
    return set(self._addressable_assignment)

  @property
  def _addressable_assignment(self) -> tuple:
    """This process's devices among the sharding's, in device-assignment order: the
    devices whose buffers an Array over this sharding holds here."""
    return tuple(d for d in self._device_assignment
                 if d.process_index == d.client.process_index())

  @property
  def is_fully_addressable(self) -> bool:
    return len(self._addressable_assignment) == self.num_devices

  @property
  def has_addressable_devices(self) -> bool:
    return bool(self._addressable_assignment)

  @property
  def memory_kind(self) -> str:
    return "device"

  def with_memory_kind(self, kind: str):
    if kind not in (None, "device"):
      raise ValueError(f"Could not find memory addressable by device cpu. Device cpu can "
                       f"address the following memory kinds: device. Got memory kind: {kind}")
    return self

  def devices_indices_map(self, global_shape) -> dict:
    """Each device's index (a tuple of slices) into an array of `global_shape` (cached).

    Raises:
      IndivisibleError: a dimension is not a multiple of its number of tiles.
    """
    return common_devices_indices_map(self, tuple(global_shape))

  def addressable_devices_indices_map(self, global_shape) -> dict:
    mine = self.addressable_devices
    return {d: i for d, i in self.devices_indices_map(global_shape).items() if d in mine}

  def shard_shape(self, global_shape) -> tuple:
    """The shape of each shard of an array of `global_shape`.

    Raises:
      ValueError: `global_shape` has fewer dimensions than the sharding splits.
      IndivisibleError: a dimension is not a multiple of its number of tiles (JAX's message).
    """
    global_shape = tuple(global_shape)
    self.check_compatible_aval(global_shape)
    desc = self._tile_description(len(global_shape))
    if desc.is_replicated:
      return global_shape
    dims = list(desc._data_dims())
    for dim, (size, n) in enumerate(zip(global_shape, dims)):
      if size % n:
        raise IndivisibleError(
            f"Sharding {self} implies that array axis {dim} is partitioned {n} times, but the "
            f"dimension size is {size} (full shape: {global_shape}, per-dimension tiling "
            f"factors: {dims} should evenly divide the shape)")
    return tuple(s // n for s, n in zip(global_shape, dims))

  def check_compatible_aval(self, aval_shape) -> None:
    """Raises ValueError when this sharding does not fit values of shape `aval_shape` (too
    few dimensions for the ones it splits). Mirrors JAX's method of that name."""

  def is_equivalent_to(self, other, ndim: int) -> bool:
    """Whether both place every element on the same devices."""
    return (isinstance(other, Sharding) and self._device_assignment == other._device_assignment
            and self._tile_description(ndim) == other._tile_description(ndim))

  def check_shape(self, shape) -> None:
    """Raises ValueError when this sharding cannot split an array of `shape`."""

  def _to_sdy_sharding(self, num_dimensions: int) -> str:
    """Shardy's attribute for this sharding of an array of rank `num_dimensions`, over an
    inline mesh with one axis per tiled dimension (``a0``, ``a1``, ...; ``r`` for the
    replicas) whose device ids are the tiles' device positions (JAX's method of the same name
    returns Shardy's object for it)."""
    tiles = self._tile_description(num_dimensions)
    if tiles.is_replicated:
      return "#sdy.sharding<mesh<[]>, [" + ", ".join(["{}"] * num_dimensions) + "]>"
    data = tiles._data_dims()
    axes = [(f"a{i}", n) for i, n in enumerate(data)]
    if tiles.replicate_last:
      axes.append(("r", tiles.tile_dims[-1]))
    mesh = ", ".join(f'"{name}"={n}' for name, n in axes)
    ids = ", ".join(map(str, tiles.devices))
    dims = ", ".join(f'{{"a{i}"}}' if n > 1 else "{}" for i, n in enumerate(data))
    return f"#sdy.sharding<mesh<[{mesh}], device_ids=[{ids}]>, [{dims}]>"

  def _to_xla_hlo_sharding(self, num_dimensions: int):
    """XLA's HloSharding of this sharding for an array of rank `num_dimensions` (JAX's
    method of the same name; tile assignments name device positions, as in an executable)."""
    return backend.hlo_sharding(self._tile_description(num_dimensions))


class SingleDeviceSharding(Sharding):
  """The whole array on one device (mirrors `jax.sharding.SingleDeviceSharding`)."""
  __slots__ = ("_device",)

  def __init__(self, device, *, memory_kind=None):
    self._device = device

  @property
  def _device_assignment(self) -> tuple:
    return (self._device,)

  @property
  def device_set(self) -> set:
    return {self._device}

  @property
  def is_fully_replicated(self) -> bool:
    return True

  def _tile_description(self, ndim: int) -> TileDescription:
    return TileDescription((1,) * ndim, (0,), False)

  def __eq__(self, other):
    return isinstance(other, SingleDeviceSharding) and other._device == self._device

  def __hash__(self):
    return hash(self._device)

  def __repr__(self):
    return f"SingleDeviceSharding(device={self._device!r}, memory_kind=device)"


class NamedSharding(Sharding):
  """An array split over a mesh's named axes as `spec` says (mirrors `jax.sharding.NamedSharding`).

  Args:
    mesh: a `Mesh` (or an `AbstractMesh`, for shardings used only in types).
    spec: a `PartitionSpec` (a tuple or None are converted).

  Raises:
    ValueError: `spec` names an axis the mesh lacks.
    DuplicateSpecError: `spec` names one mesh axis twice.
  """

  def __init__(self, mesh, spec=None, *, memory_kind=None):
    if spec is None:
      spec = PartitionSpec()
    elif not isinstance(spec, PartitionSpec):
      if isinstance(spec, (tuple, list)):
        spec = PartitionSpec(*spec)
      else:
        raise TypeError(f"NamedSharding spec must be a PartitionSpec, got {spec!r} of type "
                        f"{type(spec)}")
    if not isinstance(mesh, (mesh_lib.Mesh, mesh_lib.AbstractMesh)):
      raise TypeError(f"NamedSharding mesh must be a Mesh or an AbstractMesh, got {type(mesh)}")
    self.mesh = mesh
    self.spec = spec
    self.with_memory_kind(memory_kind)
    _check_spec(mesh, spec)
    self._hash = hash((mesh, spec))

  @property
  def _device_assignment(self) -> tuple:
    if not isinstance(self.mesh, mesh_lib.Mesh):
      raise ValueError("A NamedSharding over an AbstractMesh has no devices")
    return self.mesh._flat_devices_tuple

  @property
  def _addressable_assignment(self) -> tuple:
    if not isinstance(self.mesh, mesh_lib.Mesh):
      raise ValueError("A NamedSharding over an AbstractMesh has no devices")
    return self.mesh._local_devices_tuple

  @property
  def device_set(self) -> set:
    return set(self._device_assignment)

  @property
  def is_fully_replicated(self) -> bool:
    return all(self.mesh.shape[a] == 1 for e in self.spec for a in axes_of(e))

  def _tile_description(self, ndim: int) -> TileDescription:
    return _named_tiles(self.mesh.axis_names, self.mesh.axis_sizes, tuple(self.spec), ndim)

  def check_compatible_aval(self, aval_shape) -> None:
    if len(self.spec) > len(aval_shape):
      extra = " For scalars the PartitionSpec should be P()" if not aval_shape else ""
      raise ValueError(f"Sharding {self!r} is only valid for values of rank at least "
                       f"{len(self.spec)}, but was applied to a value of rank "
                       f"{len(aval_shape)}.{extra}")

  def check_shape(self, shape) -> None:
    self.check_compatible_aval(shape)
    for dim, entry in enumerate(self.spec):
      n = math.prod(self.mesh.shape[a] for a in axes_of(entry))
      if shape[dim] % n:
        raise ValueError(
            f"Sharding spec {tuple(self.spec._normalized_spec_for_aval(len(self.spec)))!r} "
            f"implies that array axis {dim} is partitioned {n} times, but does not evenly "
            f"divide the dimension size {shape[dim]}. Got shape: {tuple(shape)} and sharding "
            f"{self!r}")

  def is_equivalent_to(self, other, ndim: int) -> bool:
    """Whether both place every element on the same devices; over two AbstractMeshes,
    whether they split arrays into the same tiles."""
    if (isinstance(self.mesh, mesh_lib.AbstractMesh) and isinstance(other, NamedSharding)
        and isinstance(other.mesh, mesh_lib.AbstractMesh)):
      return self._tile_description(ndim) == other._tile_description(ndim)
    return super().is_equivalent_to(other, ndim)

  def _to_sdy_sharding(self, num_dimensions: int) -> str:
    return self.sdy_text(num_dimensions)

  def sdy_text(self, ndim: int, mesh_name: str = "mesh") -> str:
    """Shardy's attribute, e.g. ``#sdy.sharding<@mesh, [{"x"}, {}]>``."""
    return f"#sdy.sharding<{self.sdy_body(ndim, mesh_name)}>"

  def sdy_body(self, ndim: int, mesh_name: str = "mesh") -> str:
    dims = []
    for entry in self.spec._normalized_spec_for_aval(ndim):
      if entry is UNCONSTRAINED:
        dims.append("{?}")
      else:
        dims.append("{" + ", ".join(f'"{a}"' for a in axes_of(entry)) + "}")
    return f"@{mesh_name}, [{', '.join(dims)}]"

  def with_spec(self, spec) -> NamedSharding:
    return NamedSharding(self.mesh, spec)

  def update(self, **kwargs) -> NamedSharding:
    return NamedSharding(kwargs.get("mesh", self.mesh), kwargs.get("spec", self.spec))

  def __eq__(self, other):
    return (self is other or (isinstance(other, NamedSharding) and self.mesh == other.mesh
                              and self.spec == other.spec))

  def __hash__(self):
    return self._hash

  def __repr__(self):
    return f"NamedSharding(mesh={self.mesh}, spec={self.spec!r}, memory_kind=device)"

  def __reduce__(self):
    return (NamedSharding, (self.mesh, self.spec))


class GSPMDSharding(Sharding):
  """A sharding XLA chose that no PartitionSpec over the mesh describes: its tiles as they are."""

  def __init__(self, devices, tiles):
    """`devices`: the device assignment; `tiles`: a `TileDescription`, or XLA's HloSharding
    or OpSharding of it (as JAX's constructor takes).

    Raises:
      NotImplementedError: the XLA sharding is not tiled (manual, maximal or a tuple).
    """
    self._devices = tuple(devices)
    self._hlo = None  # XLA's HloSharding, kept as given (it prints iota tile assignments)
    if not isinstance(tiles, TileDescription):
      proto = tiles.to_proto() if hasattr(tiles, "to_proto") else tiles
      described = backend.describe_sharding(proto)
      if described is None:
        raise NotImplementedError(f"xjax's GSPMDSharding holds tiled shardings only, not {tiles}")
      self._hlo = backend.hlo_sharding_from_proto(tiles)
      tiles = TileDescription(*described)
    self._tiles = tiles

  @classmethod
  def get_replicated(cls, device_assignment, *, memory_kind=None):
    """The sharding that keeps a whole copy on each of `device_assignment`."""
    return cls(device_assignment, TileDescription((), (0,), False))

  @property
  def _device_assignment(self) -> tuple:
    return self._devices

  @property
  def is_fully_replicated(self) -> bool:
    return self._tiles.is_replicated

  def _tile_description(self, ndim: int) -> TileDescription:
    return self._tiles

  def __eq__(self, other):
    return (isinstance(other, GSPMDSharding) and self._devices == other._devices
            and self._tiles == other._tiles)

  def __hash__(self):
    return hash((self._devices, self._tiles))

  def _to_xla_hlo_sharding(self, num_dimensions: int):
    if self._hlo is None:
      self._hlo = backend.hlo_sharding(self._tiles)
    return self._hlo

  def __repr__(self):
    text = self._tiles.hlo_text() if self._hlo is None else repr(self._hlo)
    return f"GSPMDSharding({text}, memory_kind=device)"


@functools.lru_cache(maxsize=4096)
def common_devices_indices_map(sharding: Sharding, global_shape: tuple) -> dict:
  """`Sharding.devices_indices_map`, cached per sharding and shape (JAX's function of this
  name; `jax.clear_caches` empties it)."""
  sharding.shard_shape(global_shape)  # JAX's errors for shapes it cannot split
  pairs = sharding._tile_description(len(global_shape)).indices(global_shape,
                                                                sharding.num_devices)
  return {d: idx for d, (idx, _) in zip(sharding._device_assignment, pairs)}


executable_cache.on_clear(common_devices_indices_map.cache_clear)


@functools.lru_cache(maxsize=4096)
def _named_tiles(axis_names, axis_sizes, spec, ndim) -> TileDescription:
  ids = np.arange(math.prod(axis_sizes)).reshape(axis_sizes)
  order, tile_dims = [], []
  entries = list(spec) + [None] * (ndim - len(spec))
  for entry in entries:
    axes = axes_of(entry)
    order.extend(axis_names.index(a) for a in axes)
    tile_dims.append(math.prod(axis_sizes[axis_names.index(a)] for a in axes))
  unused = [i for i in range(len(axis_names)) if i not in order]
  replicas = math.prod(axis_sizes[i] for i in unused)
  dims = tile_dims + ([replicas] if replicas > 1 else [])
  devices = ids.transpose(order + unused).reshape(dims or (1,)).ravel()
  return TileDescription(dims, devices, replicas > 1)


def _check_spec(mesh, spec: PartitionSpec) -> None:
  if (any(e is PartitionSpec.UNCONSTRAINED for e in spec)
      and mesh_lib.AxisType.Auto not in tuple(mesh.axis_types)):
    raise ValueError(f"{spec!r} cannot contain `P.UNCONSTRAINED` when no mesh axis_types are "
                     f"`Auto`. Got mesh axis_types: {tuple(mesh.axis_types)}")
  seen = set()
  for entry in spec:
    for axis in axes_of(entry):
      if axis not in mesh.shape:
        raise ValueError(f"Resource axis: {axis} of {spec!r} is not found in mesh: "
                         f"{tuple(mesh.axis_names)}.")
      if axis in seen:
        raise DuplicateSpecError(
            "A single NamedSharding spec specification can map every mesh axis to at most one "
            f"positional dimension, but {spec!r} has duplicate entries for `{axis}`")
      seen.add(axis)


@functools.lru_cache(maxsize=4096)
def named_sharding_for_tiles(mesh, tiles: TileDescription, ndim: int):
  """The NamedSharding over `mesh` whose tiles are `tiles`, else a `GSPMDSharding`.

  How results XLA partitioned get their sharding: every way of giving the
  mesh axes to dimensions (or to none) is tried.
  """
  names = mesh.axis_names
  for choice in itertools.product(range(ndim + 1), repeat=len(names)):
    groups = [[n for n, c in zip(names, choice) if c == d] for d in range(ndim)]
    for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
      entries = [None if not o else (o[0] if len(o) == 1 else tuple(o)) for o in orders]
      spec = PartitionSpec(*entries)
      if _named_tiles(names, mesh.axis_sizes, tuple(spec), ndim) == tiles:
        while entries and entries[-1] is None:
          entries.pop()
        return NamedSharding(mesh, PartitionSpec(*entries))
  return GSPMDSharding(mesh._flat_devices_tuple, tiles)
