"""Meshes: devices laid out in an n-d array whose axes have names.

`Mesh` holds concrete devices; `AbstractMesh` only the axis names, sizes and
types (what tracing needs). `AxisType` says who partitions along an axis:
XLA's propagation (`Auto`), the user's types at trace time (`Explicit`), or
the program itself, per device (`Manual`, inside `shard_map`). The context
mesh (`set_mesh`, `use_mesh`, ``with mesh:``) lets shardings be written as
bare `PartitionSpec`s.
"""
from __future__ import annotations

import collections
import contextlib
import enum
import math
import threading
import weakref

import numpy as np

from xjax._src import backend
from xjax._src import config as config_lib
from xjax._src.config import config


class AxisType(enum.Enum):
  """Who partitions along a mesh axis (mirrors `jax.sharding.AxisType`)."""
  Auto = enum.auto()
  Explicit = enum.auto()
  Manual = enum.auto()

  def __repr__(self):
    return self.name


def _normalize_axis_types(axis_names, axis_types, default: AxisType, name: str = "Mesh") -> tuple:
  """One AxisType per axis name. As in JAX, a single AxisType stands for a one-axis mesh (it is
  not repeated for every axis): `axis_types` must list one type per name."""
  if axis_types is None:
    return (default,) * len(axis_names)
  if not isinstance(axis_types, tuple):
    axis_types = tuple(axis_types) if isinstance(axis_types, list) else (axis_types,)
  if not all(isinstance(t, AxisType) for t in axis_types):
    raise TypeError(f"axis_types passed to {name} must be of type `jax.sharding.AxisType`. Got "
                    f"{axis_types} of type {tuple(type(t) for t in axis_types)}")
  if len(axis_types) != len(axis_names):
    raise ValueError(f"Number of axis names should match the number of axis_types. Got "
                     f"axis_names={axis_names} and axis_types={axis_types}")
  return axis_types


def _check_names(axis_names) -> tuple:
  if isinstance(axis_names, str):
    axis_names = (axis_names,)
  axis_names = tuple(axis_names)
  if any(name is None for name in axis_names):
    raise ValueError(f"Mesh axis names cannot be None. Got: {axis_names}")
  seen = set()
  for name in axis_names:
    if name in seen:
      raise ValueError(f"Mesh axis names must be unique, got {axis_names}: {name!r} is named "
                       "twice.")
    seen.add(name)
  return axis_names


class _MeshBase:
  """What concrete and abstract meshes share: names, sizes and types of the axes."""
  axis_names: tuple
  axis_sizes: tuple
  axis_types: tuple

  @property
  def shape(self) -> collections.OrderedDict:
    """Axis name to size, in mesh order."""
    return collections.OrderedDict(zip(self.axis_names, self.axis_sizes))

  @property
  def shape_tuple(self) -> tuple:
    return tuple(zip(self.axis_names, self.axis_sizes))

  @property
  def size(self) -> int:
    """The number of devices (0 for a mesh without axes)."""
    return math.prod(self.axis_sizes) if self.axis_names else 0

  @property
  def empty(self) -> bool:
    """Whether the mesh has no devices (`size` 0), as JAX's meshes say."""
    return self.size == 0

  def _axis_types_text(self) -> str:
    return "(" + ", ".join(t.name for t in self.axis_types) + ("," if len(self.axis_types) == 1
                                                               else "") + ")"

  def _axes_of_type(self, kind: AxisType) -> tuple:
    return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t is kind)

  auto_axes = property(lambda self: self._axes_of_type(AxisType.Auto))
  explicit_axes = property(lambda self: self._axes_of_type(AxisType.Explicit))
  manual_axes = property(lambda self: self._axes_of_type(AxisType.Manual))

  def _all_axes_are(self, kind: AxisType) -> bool:
    return bool(self.axis_types) and all(t is kind for t in self.axis_types)

  # Whether every axis is of one type (False for a mesh without axes), as JAX's meshes say.
  are_all_axes_auto = property(lambda self: self._all_axes_are(AxisType.Auto))
  are_all_axes_explicit = property(lambda self: self._all_axes_are(AxisType.Explicit))
  are_all_axes_manual = property(lambda self: self._all_axes_are(AxisType.Manual))

  def _name_size_text(self) -> str:
    return ", ".join(f"{n!r}: {s}" for n, s in zip(self.axis_names, self.axis_sizes))


class Mesh(_MeshBase):
  """An n-d array of devices with named axes (mirrors `jax.sharding.Mesh`).

  Args:
    devices: an array (or nested sequence) of devices, one axis per name.
    axis_names: a name for each axis of `devices` (unique).
    axis_types: an `AxisType` per axis (a single one for a one-axis mesh); default `Auto`.

  Usable as a context manager (``with mesh:``), which makes it the context
  mesh for bare `PartitionSpec`s. Meshes are interned, as in JAX: equal
  arguments give the same object (while it lives); `devices` is kept as a
  read-only copy.

  Raises:
    ValueError: the names do not match the devices' rank, or repeat.
  """

  def __new__(cls, devices, axis_names, axis_types=None):
    devices = np.asarray(devices, dtype=object) if not isinstance(devices, np.ndarray) else devices
    axis_names = _check_names(axis_names)
    if devices.ndim != len(axis_names):
      raise ValueError(f"Mesh requires the ndim of its first argument (`devices`) to equal the "
                       f"length of its second argument (`axis_names`), but got devices.ndim "
                       f"== {devices.ndim} and len(axis_names) == {len(axis_names)}.")
    axis_types = _normalize_axis_types(axis_names, axis_types, AxisType.Auto)
    flat = tuple(devices.flat)
    key = (cls, flat, devices.shape, axis_names, axis_types)
    with _interned_lock:
      self = _interned_meshes.get(key)
      if self is None:
        self = super().__new__(cls)
        copy = np.empty(len(flat), dtype=object)
        copy[:] = flat
        copy = copy.reshape(devices.shape)
        copy.flags.writeable = False
        self.devices = copy
        self.axis_names = axis_names
        self.axis_sizes = tuple(devices.shape)
        self.axis_types = axis_types
        self._flat = flat
        self._local_flat = None  # this process's devices among _flat, computed on first use
        self._hash = hash((self.axis_names, self._flat, self.axis_types))
        self._ctx_token = []
        _interned_meshes[key] = self
    return self

  def __init__(self, devices, axis_names, axis_types=None):
    pass  # made by __new__ (interned)

  @property
  def size(self) -> int:
    """The number of devices: 0 for the empty mesh (no axes and no device)."""
    if not self.axis_names and self._flat[0] is None:
      return 0
    return math.prod(self.axis_sizes)

  def __eq__(self, other):
    return (self is other or (isinstance(other, Mesh) and self.axis_names == other.axis_names
                              and self.axis_types == other.axis_types
                              and self._flat == other._flat and self.axis_sizes == other.axis_sizes))

  def __hash__(self):
    return self._hash

  def __str__(self):
    if self.empty:
      return "Mesh()"
    return f"Mesh({self._name_size_text()}, axis_types={self._axis_types_text()})"

  def __repr__(self):
    if self.empty:
      return "Mesh(axis_sizes=(), axis_names=())"
    return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names!r}, "
            f"axis_types={self._axis_types_text()})")

  def __reduce__(self):
    return (Mesh, (self.devices, self.axis_names, self.axis_types))

  @property
  def device_ids(self) -> np.ndarray:
    return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

  @property
  def _flat_devices_tuple(self) -> tuple:
    """The devices in row-major order: the device assignment of programs over this mesh."""
    return self._flat

  @property
  def _local_devices_tuple(self) -> tuple:
    """This process's devices, in row-major order (all of them in a one-process job)."""
    if self._local_flat is None:
      self._local_flat = tuple(d for d in self._flat
                               if d.process_index == d.client.process_index())
    return self._local_flat

  @property
  def local_devices(self) -> list:
    return list(self._local_devices_tuple)

  @property
  def is_multi_process(self) -> bool:
    return len(self._local_devices_tuple) != len(self._flat)

  @property
  def local_mesh(self) -> Mesh:
    """The sub-mesh of this process's devices (the same axis names and types).

    Raises:
      ValueError: this process's devices do not form a contiguous block (a
        subcube) of the mesh.
    """
    mine = np.vectorize(lambda d: d.process_index == d.client.process_index(),
                        otypes=[bool])(self.devices)
    where = np.nonzero(mine)
    block = np.ix_(*(np.unique(w) for w in where))
    if not mine[block].all() or mine[block].size != mine.sum():
      raise ValueError("Devices connected to a single host must form a contiguous subcube of "
                       f"the global device mesh: {self.device_ids}")
    return Mesh(self.devices[block], self.axis_names, self.axis_types)

  @property
  def abstract_mesh(self) -> AbstractMesh:
    if not self.axis_names:
      return AbstractMesh((), ())
    platform = self._flat[0].platform if self._flat else None
    kind = self._flat[0].device_kind if self._flat else None
    return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types, _device_kind=kind,
                        _platform=platform)

  def update(self, devices=None, axis_names=None, axis_types=None) -> Mesh:
    """A copy with the given devices, names or types. Mirrors `jax.sharding.Mesh.update`."""
    return Mesh(self.devices if devices is None else devices,
                self.axis_names if axis_names is None else axis_names,
                self.axis_types if axis_types is None else axis_types)

  def update_axis_types(self, name_to_type: dict) -> Mesh:
    return self.update(axis_types=tuple(
        name_to_type.get(n, t) for n, t in zip(self.axis_names, self.axis_types)))

  def __enter__(self):
    self._ctx_token.append(_push_mesh(self))
    return self

  def __exit__(self, *exc):
    _pop_mesh(self._ctx_token.pop())
    return False


# The live meshes by their arguments (`Mesh.__new__`).
_interned_meshes: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_interned_lock = threading.Lock()


class AbstractMesh(_MeshBase):
  """A mesh's axis names, sizes and types, without devices (mirrors `jax.sharding.AbstractMesh`)."""

  def __init__(self, axis_sizes, axis_names, axis_types=None, *, _device_kind=None,
               _platform=None):
    self.axis_sizes = tuple(int(s) for s in axis_sizes)
    self.axis_names = _check_names(axis_names)
    if len(self.axis_sizes) != len(self.axis_names):
      raise ValueError(f"axis_sizes {self.axis_sizes} and axis_names {self.axis_names} must "
                       "have the same length")
    self.axis_types = _normalize_axis_types(self.axis_names, axis_types, AxisType.Auto,
                                            "AbstractMesh")
    self._device_kind = _device_kind
    self._platform = _platform

  def __eq__(self, other):
    return (isinstance(other, AbstractMesh) and self.axis_names == other.axis_names
            and self.axis_sizes == other.axis_sizes and self.axis_types == other.axis_types)

  def __hash__(self):
    return hash((self.axis_names, self.axis_sizes, self.axis_types))

  def __repr__(self):
    return (f"AbstractMesh({self._name_size_text()}, axis_types={self._axis_types_text()}, "
            f"device_kind={self._device_kind}, num_cores=None, platform={self._platform})")

  @property
  def abstract_mesh(self) -> AbstractMesh:
    return self

  def update(self, axis_sizes=None, axis_names=None, axis_types=None) -> AbstractMesh:
    """A copy with the given sizes, names or types (on the same kind of device). Mirrors
    `jax.sharding.AbstractMesh.update`."""
    return AbstractMesh(self.axis_sizes if axis_sizes is None else axis_sizes,
                        self.axis_names if axis_names is None else axis_names,
                        self.axis_types if axis_types is None else axis_types,
                        _device_kind=self._device_kind, _platform=self._platform)

  def update_axis_types(self, name_to_type: dict) -> AbstractMesh:
    return self.update(axis_types=tuple(
        name_to_type.get(n, t) for n, t in zip(self.axis_names, self.axis_types)))


# ----------------------------------------------------------------------------
# The context mesh


class _MeshContext(threading.local):
  def __init__(self):
    self.stack: list = []  # use_mesh's, innermost last
    self.mesh = None  # set_mesh's: thread-local too, as in JAX (a new thread has none)


_context = _MeshContext()


def _push_mesh(mesh):
  _context.stack.append(mesh)
  config.trace_context_changed()
  return len(_context.stack)


def _pop_mesh(token):
  del _context.stack[token - 1:]
  config.trace_context_changed()


def get_concrete_mesh():
  """The context mesh (`set_mesh`/`use_mesh`/``with mesh:``), or None."""
  if _context.stack:
    return _context.stack[-1]
  return _context.mesh


# The context mesh changes what a trace produces (shardings of values, `get_abstract_mesh`
# read by the function): every trace and executable cache keys on it.
config_lib.register_trace_context(get_concrete_mesh)


def get_abstract_mesh() -> AbstractMesh:
  """The abstract mesh of the context mesh; an empty one outside any (mirrors
  `jax.sharding.get_abstract_mesh`)."""
  mesh = get_concrete_mesh()
  return mesh.abstract_mesh if mesh is not None else AbstractMesh((), ())


class _SetMesh:
  """What `set_mesh` returns: the mesh is set already; ``with`` restores the previous one."""

  def __init__(self, previous):
    self._previous = previous

  def __enter__(self):
    return self

  def __exit__(self, *exc):
    _context.mesh = self._previous
    config.trace_context_changed()
    return False


def set_mesh(mesh: Mesh) -> _SetMesh:
  """Makes `mesh` the context mesh of this thread: at once, or for a ``with`` block.

  Raises:
    ValueError: `mesh` is not a concrete `Mesh`, or has Manual axes.

  Mirrors `jax.set_mesh` (and `jax.sharding.set_mesh`).
  """
  if not isinstance(mesh, Mesh):
    raise ValueError(f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}")
  if AxisType.Manual in mesh.axis_types:
    raise ValueError(f"mesh {mesh} contains manual axes which is not allowed when using "
                     "`jax.set_mesh`. Please use `jax.shard_map` to enter into `Manual` mode "
                     "instead.")
  previous = _context.mesh
  _context.mesh = mesh
  config.trace_context_changed()
  return _SetMesh(previous)


@contextlib.contextmanager
def use_mesh(mesh: Mesh):
  """Makes `mesh` the context mesh inside a ``with`` block (mirrors `jax.sharding.use_mesh`).

  Raises:
    ValueError: `mesh` is not a concrete `Mesh`.
  """
  if not isinstance(mesh, Mesh):
    raise ValueError(f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}")
  token = _push_mesh(mesh)
  try:
    yield mesh
  finally:
    _pop_mesh(token)


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None) -> Mesh:
  """A mesh of the first ``prod(axis_shapes)`` devices, in device order.

  Args:
    axis_shapes: the size of each mesh axis.
    axis_names: a name for each axis.
    axis_types: an `AxisType` per axis; default `Explicit` (as JAX 0.10.2).
    devices: the devices to use (default: all devices).

  Raises:
    ValueError: too few devices, or names and shapes of different lengths.

  Mirrors `jax.make_mesh`.
  """
  axis_shapes = tuple(int(s) for s in axis_shapes)
  axis_names = _check_names(axis_names)
  if len(axis_shapes) != len(axis_names):
    raise ValueError(f"Length of axis_shapes {axis_shapes} and axis_names {axis_names} must be "
                     "equal.")
  devices = list(backend.devices() if devices is None else devices)
  n = math.prod(axis_shapes)
  if len(devices) < n:
    raise ValueError(f"Number of devices {len(devices)} must be >= the product of mesh_shape "
                     f"{axis_shapes}")
  array = np.empty(n, dtype=object)
  array[:] = devices[:n]
  types = _normalize_axis_types(axis_names, axis_types, AxisType.Explicit, "make_mesh")
  return Mesh(array.reshape(axis_shapes), axis_names, types)
