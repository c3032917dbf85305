"""`Array`: an immutable array on one device or split over several.

An Array holds a jaxlib device buffer, its aval (shape, dtype, weak type),
its device and whether it is committed to that device (placed there by
`device_put` with an explicit device, or computed from committed inputs).
An array over several devices has no single device: its `_sharding` (a
`NamedSharding`, say) tells where each piece lives, and its buffer is
jaxlib's multi-device container of one buffer per device.
Operators and NumPy-style methods are installed by
`xjax._src.numpy.array_methods`.
"""
from __future__ import annotations

import operator

import numpy as np

from xjax._src import backend
from xjax._src import core
from xjax._src import deprecations
from xjax._src import dtypes
from xjax._src.config import config
from xjax._src.sharding.shardings import SingleDeviceSharding


class _ArrayMeta(type):
  """`isinstance(x, Array)` (and `issubclass`) holds for tracers too, as `isinstance(x, jax.Array)` does in JAX
  (a tracer stands for an array inside a transformation); `type(x) is Array` tells a
  concrete array. An Array itself is matched by `isinstance`'s own exact-type test, before
  this method is called."""

  def __instancecheck__(cls, x):
    return type.__instancecheck__(cls, x) or (cls is Array and isinstance(x, _virtual_arrays))

  def __subclasscheck__(cls, sub):
    return type.__subclasscheck__(cls, sub) or (cls is Array and issubclass(sub, _virtual_arrays))


# The classes whose instances are `Array`s for isinstance/issubclass without subclassing
# it, as in JAX: tracers, and the typed PRNG key arrays (`register_virtual_array`).
_virtual_arrays: tuple[type, ...] = (core.Tracer,)


def register_virtual_array(cls: type) -> None:
  """Makes `isinstance(x, Array)` hold for instances of `cls` (and so
  `isinstance(x, jnp.ndarray)`), as JAX's PRNG key arrays are `jax.Array`s."""
  global _virtual_arrays
  _virtual_arrays = (*_virtual_arrays, cls)


class Array(metaclass=_ArrayMeta):
  """An array on a device; mirrors `jax.Array`.

  Printed as ``Array([1., 2.], dtype=float32)``. Immutable: use ``x.at[idx]``
  to make updated copies.
  """
  __slots__ = ("_buf", "aval", "_device", "_committed", "_npy", "_sharding", "__weakref__")
  __array_priority__ = 100

  def __init__(self, buf, aval: core.ShapedArray, device=None, committed: bool = False,
               sharding=None, _skip_checks: bool = False):
    if isinstance(buf, core.ShapedArray):
      # JAX's constructor, ``ArrayImpl(aval, sharding, arrays, committed)``: one
      # single-device Array per addressable device of `sharding`, joined without a copy.
      buf, aval, device, sharding = _join_single_device_arrays(buf, aval, device)
    self._buf = buf
    self.aval = aval
    self._device = device  # None for an array over several devices
    self._committed = committed
    self._npy = None
    self._sharding = sharding  # None: the whole array on `device`

  shape = property(lambda self: self.aval.shape)
  dtype = property(lambda self: self.aval.dtype)
  ndim = property(lambda self: len(self.aval.shape))
  size = property(lambda self: self.aval.size)
  weak_type = property(lambda self: self.aval.weak_type)
  itemsize = property(lambda self: self.aval.dtype.itemsize)
  nbytes = property(lambda self: self.aval.size * self.aval.dtype.itemsize)
  committed = property(lambda self: self._committed)

  @property
  def __numpy_dtype__(self):
    """NumPy's protocol (2.4+) for ``np.dtype(x)``: gives `dtype` with JAX's
    DeprecationWarning (its TypeError once the deprecation is accelerated)."""
    deprecations.warn(
        "jax-array-numpy-dtype",
        "Implicit conversion of an array to a dtype is deprecated; rather than dtype=arr use "
        "dtype=arr.dtype. In the future this will result in an error.",
        stacklevel=2, error_class=TypeError)
    return self.aval.dtype

  @property
  def device(self):
    """The device holding this array; its sharding when it spans several devices."""
    return self._device if self._sharding is None else self._sharding

  def devices(self) -> set:
    """The set of devices holding this array."""
    return {self._device} if self._sharding is None else self._sharding.device_set

  @property
  def sharding(self):
    """Where each piece of the array lives (mirrors `jax.Array.sharding`)."""
    if self._sharding is None:
      return SingleDeviceSharding(self._device)
    return self._sharding

  @property
  def global_shards(self) -> list:
    """One `Shard` per device: its device, index into the array, replica id and data.

    A shard on another process's device has ``data`` None.
    """
    if self._sharding is None:
      return [Shard(self._device, (slice(None),) * self.ndim, 0, self)]
    self._check_alive()
    sharding = self._sharding
    pairs = sharding._tile_description(self.ndim).indices(self.shape, sharding.num_devices)
    bufs = dict(zip(sharding._addressable_assignment, backend.single_device_buffers(self._buf)))
    shard_aval = self.aval.update(shape=sharding.shard_shape(self.shape))
    return [Shard(d, index, replica, Array(bufs[d], shard_aval, d, True) if d in bufs else None)
            for d, (index, replica) in zip(sharding._device_assignment, pairs)]

  @property
  def addressable_shards(self) -> list:
    """The shards on this process's devices (mirrors `jax.Array.addressable_shards`)."""
    return [s for s in self.global_shards if s.data is not None]

  def addressable_data(self, index: int) -> Array:
    """The data of addressable shard `index`."""
    return self.addressable_shards[index].data

  @property
  def is_fully_replicated(self) -> bool:
    return self._sharding is None or self._sharding.is_fully_replicated

  @property
  def is_fully_addressable(self) -> bool:
    return self._sharding is None or self._sharding.is_fully_addressable

  # -- host access -------------------------------------------------------------

  @property
  def _value(self) -> np.ndarray:
    """The values as a read-only NumPy array (copied from the device once)."""
    if self._npy is None:
      self._check_alive()
      if self.aval.dtype == dtypes.float0:  # stored as bool zeros on the device
        self._npy = np.zeros(self.aval.shape, dtypes.float0)
      elif self._sharding is None:
        self._npy = backend.to_numpy(self._buf)
      else:
        self._npy = self._gather()
    return self._npy

  def _gather(self) -> np.ndarray:
    """The whole array on the host, from the first replica of each shard this process holds.

    Raises RuntimeError (JAX's) when this process's devices do not hold every
    element (another process's devices hold some).
    """
    out = np.empty(self.shape, self.dtype)
    seen = set()
    for shard in self.addressable_shards:
      key = tuple((s.start, s.stop) for s in shard.index)
      if key not in seen:
        seen.add(key)
        out[shard.index] = backend.to_numpy(shard.data._buf)
    shard_size = int(np.prod(self._sharding.shard_shape(self.shape)))
    if len(seen) * shard_size != self.size:
      raise RuntimeError("Fetching value for `jax.Array` that spans non-addressable (non "
                         "process local) devices is not possible. You can use "
                         "`jax.experimental.multihost_utils.process_allgather` to print the "
                         "global array or use `.addressable_shards` method of jax.Array to "
                         "inspect the addressable (process local) shards.")
    out.flags.writeable = False
    return out

  def _check_alive(self):
    if self.is_deleted():
      raise deleted_array_error(self.aval)

  _check_if_deleted = _check_alive  # JAX's name

  @property
  def _npy_value(self):
    """The host copy of the values, None until `_value` made it (JAX's attribute)."""
    return self._npy

  @property
  def _arrays(self):
    """The single-device Arrays of this process's devices, in the order of the sharding's
    device assignment; None once the array is deleted (JAX's attribute)."""
    if self.is_deleted():
      return None
    if self._sharding is None:
      return [self]
    return [s.data for s in self.addressable_shards]

  def _fully_replicated_shard(self) -> Array:
    """The first addressable shard's data: the whole array on one device, for a fully
    replicated array (JAX's method)."""
    self._check_alive()
    if self._sharding is None:
      return self
    if not self.is_fully_replicated:
      raise ValueError("_fully_replicated_shard() needs a fully replicated array, got one "
                       f"with sharding {self._sharding!r}")
    return self.addressable_shards[0].data

  def __array__(self, dtype=None, copy=None):
    value = self._value
    if copy is False and dtype is not None and np.dtype(dtype) != value.dtype:
      raise ValueError("Unable to avoid copy while creating an array as requested.")
    if dtype is not None or copy:
      return np.array(value, dtype=dtype, copy=True)
    return value

  def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule sharing the device buffer (mirrors `jax.Array.__dlpack__`)."""
    self._check_alive()
    if self._sharding is not None:
      raise BufferError("__dlpack__ is only supported for arrays on a single device, not "
                        f"{self._sharding!r}")
    return backend.to_dlpack(self._buf)

  def __dlpack_device__(self) -> tuple[int, int]:
    """DLPack's (device type, device id): kDLCPU (1), kDLCUDA (2) or kDLROCM (10).

    Raises BufferError on other platforms (as JAX does). Mirrors `jax.Array.__dlpack_device__`.
    """
    device = self.device
    if device.platform == "cpu":
      return (1, 0)
    version = device.client.platform_version if device.platform == "gpu" else device.platform
    for name, code in (("cuda", 2), ("rocm", 10)):
      if name in version:
        return (code, device.local_hardware_id)
    raise BufferError(f"__dlpack__ device only supported for CPU and GPU, got platform: "
                      f"{device.platform}")

  def on_device_size_in_bytes(self) -> int:
    """The bytes the array's buffer takes on its device (mirrors JAX's method of that name)."""
    self._check_alive()
    return backend.on_device_size_in_bytes(self._buf)

  def unsafe_buffer_pointer(self) -> int:
    """The address of the array's device buffer (mirrors `jax.Array.unsafe_buffer_pointer`;
    equinox's tests use it to check that donated buffers are reused).

    Raises:
      RuntimeError: the array was deleted or donated.
      ValueError: the array is split over several devices.
    """
    self._check_alive()
    if len(self.devices()) != 1:
      raise ValueError("unsafe_buffer_pointer() is supported only for unsharded arrays.")
    return self._buf.unsafe_buffer_pointer()

  def block_until_ready(self) -> Array:
    """Waits until the computation producing this array has finished; returns self."""
    try:
      backend.block_until_ready(self._buf)
    except Exception:  # a deleted array (the buffer is None or deleted): JAX's error
      self._check_alive()
      raise
    return self

  def copy_to_host_async(self) -> None:
    """Starts copying the values to the host without waiting."""
    if self._npy is None:
      if self._sharding is None:
        backend.copy_to_host_async(self._buf)
      else:
        for buf in backend.single_device_buffers(self._buf):  # this process's
          backend.copy_to_host_async(buf)

  def is_ready(self) -> bool:
    self._check_alive()
    return self._buf.is_ready()

  def delete(self) -> None:
    """Frees the device buffer; later uses raise RuntimeError (mirrors `jax.Array.delete`)."""
    if self._buf is not None:
      backend.delete(self._buf)
    # None, not the deleted buffer: an execution given it fails on the argument's
    # type before XLA sees it (see `dispatch.Executable.run`).
    self._buf = None
    self._npy = None

  def is_deleted(self) -> bool:
    return self._buf is None or backend.is_deleted(self._buf)

  def item(self, *args):
    return self._value.item(*args)

  def tolist(self):
    return self._value.tolist()

  def to_py(self):
    return self._value

  # -- Python protocols --------------------------------------------------------

  def __len__(self):
    if not self.shape:
      raise TypeError("len() of unsized object")
    return self.shape[0]

  def __iter__(self):
    if not self.shape:
      raise TypeError("iteration over a 0-d array")
    return (self[i] for i in range(self.shape[0]))

  def __bool__(self):
    core.check_bool_conversion(self.aval)
    return bool(self._value)

  def __int__(self):
    core.check_scalar_conversion(self.aval)
    return int(self._value)

  def __float__(self):
    core.check_scalar_conversion(self.aval)
    return float(self._value)

  def __complex__(self):
    core.check_scalar_conversion(self.aval)
    return complex(self._value)

  def __index__(self):
    if not (self.shape == () and dtypes.issubdtype(self.dtype, np.integer)):
      raise TypeError("Only integer scalar arrays can be converted to a scalar index.")
    return operator.index(self._value)

  def __hash__(self):
    raise TypeError("unhashable type: 'jaxlib._jax.ArrayImpl'")

  def __setitem__(self, idx, value):
    raise TypeError(core.IMMUTABLE_ARRAY_MESSAGE)

  def __copy__(self):
    return self

  def __deepcopy__(self, memo):
    return self

  def __format__(self, spec):
    if self.ndim == 0:
      return format(self._value[()], spec)
    return format(self._value, spec)

  def __str__(self):
    return str(self._value)

  def __repr__(self):
    prefix = "Array("
    dtype_str = f"dtype={self.dtype.name}"
    if self.weak_type:
      dtype_str += ", weak_type=True"
    dtype_str += ")"
    if self.size == 0 and self.shape != ():
      return f"{prefix}[], shape={self.shape}, {dtype_str}"
    if not (self.is_fully_addressable or self.is_fully_replicated):  # spans processes
      return f"{prefix}shape={self.shape}, {dtype_str}"
    width = np.get_printoptions()["linewidth"]
    body = np.array2string(self._value, prefix=prefix, suffix=",", separator=", ",
                           max_line_width=width)
    last_line = len(body) - body.rfind("\n") + 1
    sep = " "
    if last_line + len(dtype_str) + 1 > width:
      sep = "\n" + " " * len(prefix)
    return f"{prefix}{body},{sep}{dtype_str}"


# Concrete arrays carry the name of JAX's concrete class (`jaxlib._jax.ArrayImpl`), the name
# JAX's TypeErrors and `type(x).__name__` show; `ArrayImpl` is the same class.
Array.__name__ = Array.__qualname__ = "ArrayImpl"
ArrayImpl = Array


def _join_single_device_arrays(aval, sharding, arrays):
  """The buffer, aval, device and sharding of the Array over `sharding` made of `arrays`.
  Installed by `xjax._src.sharding.array_construction`, which sits above this module."""
  raise NotImplementedError("xjax._src.sharding.array_construction is not imported")


def deleted_array_error(aval) -> RuntimeError:
  return RuntimeError(f"Array has been deleted with shape={aval.str_short()}.")


class Shard:
  """One shard of an array: its device, its index into the array, and its data
  (mirrors `jax.Shard`)."""
  __slots__ = ("device", "index", "replica_id", "data")

  def __init__(self, device, index, replica_id, data):
    self.device, self.index, self.replica_id, self.data = device, index, replica_id, data

  def __repr__(self):
    return (f"Shard(device={self.device!r}, index={self.index}, replica_id={self.replica_id}, "
            f"data={self.data})")


core.pytype_aval_mappings[Array] = lambda x: x.aval


class Token:
  """A concrete token: the value of `lax.create_token` and `lax.after_all`.

  It holds XLA's token buffer on `device` and no data; its aval is
  `core.abstract_token`. Mirrors `jax._src.core.Token`.
  """
  __slots__ = ("_buf", "_device")

  def __init__(self, buf, device):
    self._buf = buf
    self._device = device

  def block_until_ready(self) -> None:
    """Waits until the computation producing this token has finished."""
    backend.block_until_ready(self._buf)


core.pytype_aval_mappings[Token] = lambda x: core.abstract_token
