"""Building one sharded Array from its pieces.

`make_array_from_callback` asks a function for each device's piece (host
data, copied to that device), `make_array_from_single_device_arrays` joins
Arrays that already sit on the sharding's devices (no copy, no trip through
the host), and `make_array_from_process_local_data` places the data this
process holds. The result is an Array over the sharding, as `spmd.as_array`
makes it.
"""
from __future__ import annotations

import numpy as np

from xjax._src import backend
from xjax._src import core
from xjax._src import dtypes
from xjax._src import errors
from xjax._src import tree_util
from xjax._src import array as array_module
from xjax._src.array import Array
from xjax._src.sharding import rules
from xjax._src.sharding import spmd
from xjax._src.sharding.shardings import Sharding, SingleDeviceSharding


def make_array_from_callback(shape, sharding, data_callback, dtype=None) -> Array:
  """An Array of `shape` laid out as `sharding`, each device's piece given by `data_callback`.

  Args:
    shape: the global shape.
    sharding: a `Sharding` over one or several devices.
    data_callback: called with a device's index into the global array (a
      tuple of slices) and returns that piece: a NumPy array, an Array or a
      Python scalar, of the shard shape. Called once when the sharding is
      fully replicated. 64-bit values follow ``jax_enable_x64``.
    dtype: the dtype; default the first piece's. It must match the pieces'.

  Returns:
    An Array committed to the sharding's devices (weak_type False).

  Raises:
    TypeError: `sharding` is not a Sharding, or a piece is not an array.
    UnexpectedTracerError: the callback returned a tracer.
    ValueError: pieces whose shape is not the shard shape or whose dtype
      differs (from `dtype` or from each other).

  Mirrors `jax.make_array_from_callback`.
  """
  fname = "make_array_from_callback"
  _check_sharding(sharding)
  shape = core.canonicalize_shape(shape)

  def piece(index):
    value = data_callback(index)
    if isinstance(value, core.Tracer):
      raise errors.UnexpectedTracerError(
          "jax.make_array_from_callback cannot be called within a traced context.")
    return value if type(value) is Array else core.canonicalize_value(value)

  devices = sharding._addressable_assignment  # in a job of several processes, this one's
  if sharding.is_fully_replicated:
    values = [piece((slice(None),) * len(shape))] * len(devices) if devices else []
  else:
    index_map = sharding.devices_indices_map(shape)
    values = [piece(index_map[d]) for d in devices]
  aval = core.ShapedArray(shape, _dtype_of_pieces(values, dtype, fname))
  _check_pieces(values, aval, sharding)
  bufs = [_buffer_on(v, d) for v, d in zip(values, devices)]
  return _join(bufs, aval, sharding)


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None) -> Array:
  """An Array of `shape` laid out as `sharding` whose pieces are `arrays`, taken as they are.

  Args:
    shape: the global shape (a double check of what `sharding` and the
      pieces say).
    sharding: a `Sharding`.
    arrays: a list or tuple of Arrays, each on one device: one per device of
      `sharding` that this process has (in any order), each of the shard shape.
    dtype: the dtype; default the first array's. It must match theirs.

  Returns:
    An Array committed to the sharding's devices, sharing the pieces' device
    buffers (no copy).

  Raises:
    TypeError: `sharding` is not a Sharding, `arrays` is not a list or tuple,
      or an element is not an Array.
    ValueError: tracers among `arrays`; an array over several devices; the
      wrong number of arrays; two on one device; devices that are not the
      sharding's; a shape that is not the shard shape or a dtype that differs;
      no arrays and no `dtype`.

  Mirrors `jax.make_array_from_single_device_arrays`.
  """
  fname = "make_array_from_single_device_arrays"
  _check_sharding(sharding)
  if not isinstance(arrays, (list, tuple)):
    raise TypeError("jax.make_array_from_single_device_arrays `arrays` argument must be a list "
                    f"or tuple, but got {type(arrays)}.")
  shape = core.canonicalize_shape(shape)
  aval = core.ShapedArray(shape, _dtype_of_pieces(arrays, dtype, fname))
  if any(isinstance(a, core.Tracer) for a in arrays):
    raise ValueError("jax.make_array_from_single_device_arrays requires a list of concrete "
                     f"arrays as input, but got types {set(map(type, arrays))}")
  return _join_pieces(aval, sharding, arrays)


def _join_pieces(aval, sharding, arrays) -> Array:
  """The Array over `sharding` whose pieces are the single-device Arrays `arrays` (one
  per addressable device, any order), sharing their buffers.

  Checks them as JAX's `ArrayImpl` constructor does (its ValueErrors); also the body of
  `make_array_from_single_device_arrays`.
  """
  _check_sharding(sharding)
  for a in arrays:
    if type(a) is not Array:
      raise TypeError(f"Unsupported type for elements in `arrays`: {type(a)}")
    a._check_alive()
    if a._sharding is not None:
      raise ValueError("When making an array from single-device arrays the input arrays must "
                       f"have one shard each. An argument array had {a._sharding.num_devices} "
                       "shard(s).")
  devices = sharding._addressable_assignment
  if len(arrays) != len(devices):
    raise ValueError(f"Expected {len(devices)} per-device arrays (this is how many devices are "
                     f"addressable by the sharding), but got {len(arrays)}")
  by_device = {a._device.id: a for a in arrays}
  if len(by_device) != len(arrays):
    raise ValueError("When making an array from single-device arrays, the input arrays must be "
                     "from distinct devices, but got device IDs "
                     f"{[a._device.id for a in arrays]}")
  wanted = {d.id for d in devices}
  if set(by_device) != wanted:
    message = "Addressable devices and per-device arrays devices do not match."
    if wanted - set(by_device):
      message += (f" Sharding contains devices {wanted - set(by_device)} that are not present "
                  "in per-device arrays.")
    if set(by_device) - wanted:
      message += (f" Per-device arrays contain devices {set(by_device) - wanted} that are not "
                  "present in the sharding.")
    raise ValueError(message)
  ordered = [by_device[d.id] for d in devices]
  _check_pieces(ordered, aval, sharding)
  return _join([a._buf for a in ordered], aval, sharding)


def _parts_of_joined(aval, sharding, arrays):
  """The buffer, aval, device and sharding of `_join_pieces`'s Array (what `Array`'s
  constructor with JAX's arguments, ``ArrayImpl(aval, sharding, arrays, committed)``, needs)."""
  out = _join_pieces(aval, sharding, list(arrays))
  return out._buf, out.aval, out._device, out._sharding


array_module._join_single_device_arrays = _parts_of_joined


# ----------------------------------------------------------------------------


def _check_sharding(sharding) -> None:
  if not isinstance(sharding, Sharding):
    raise TypeError("sharding should be an instance of `jax.sharding`. Got "
                    f"{sharding} of type {type(sharding)}")


def _dtype_of_pieces(pieces, dtype, fname: str):
  """The result's dtype: `dtype` (checked against the first piece), else the first piece's."""
  if dtype is None:
    if not pieces:
      raise ValueError("If the Array has no addressable shards, `dtype` must be provided via "
                       f"the `dtype` argument to `jax.{fname}`.")
    return pieces[0].dtype
  dtype = dtypes.check_user_dtype_supported(dtype, fname)
  if pieces and pieces[0].dtype != dtype:
    raise ValueError(f"If `dtype` is provided to `jax.{fname}`, it must match the dtype of the "
                     f"addressable shards. Got dtype={dtype} and shard "
                     f"dtype={pieces[0].dtype}`.")
  return dtype


def _check_pieces(pieces, aval, sharding) -> None:
  """Every piece has the shard shape and the result's dtype (JAX's messages)."""
  expected = sharding.shard_shape(aval.shape)
  typed = aval.update(sharding=rules.aval_sharding(sharding, len(aval.shape)))
  for p in pieces:
    if p.dtype != aval.dtype:
      raise ValueError("Input buffers to `Array` must have matching dtypes. Got "
                       f"{p.dtype}, expected {aval.dtype} for buffer: {p}")
    if tuple(p.shape) != expected:
      raise ValueError(f"Expected shard shape {expected} doesn't match the single device array "
                       f"shape {tuple(p.shape)}. Shape of Array is {typed.str_short()} with "
                       f"sharding {sharding!r}")


def _buffer_on(value, device):
  """A single-device buffer of `value` (NumPy, or an Array anywhere) on `device`."""
  if type(value) is Array:
    value._check_alive()
    if value._sharding is None:
      return value._buf if value._device == device else backend.copy_to_device(value._buf, device)
    value = value._value  # over several devices: its whole value, from the host
  return backend.transfer_to_device(np.asarray(value), device)


def _join(bufs, aval, sharding) -> Array:
  """The Array over `sharding` whose per-device buffers are `bufs` (this process's devices',
  in device-assignment order)."""
  if isinstance(sharding, SingleDeviceSharding):
    return spmd.as_array(bufs[0], aval, sharding)
  tiles = sharding._tile_description(len(aval.shape))
  return spmd.as_array(backend.assemble(aval, sharding._device_assignment, tiles, bufs),
                       aval, sharding)
