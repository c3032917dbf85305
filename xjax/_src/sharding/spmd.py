"""Programs over several devices: placing arrays, compiling, running.

A computation whose arguments (or whose `jit` shardings) span several
devices is one SPMD program: its module carries Shardy's mesh and sharding
attributes, XLA's partitioner splits it and inserts the collectives, and it
runs once over the mesh's devices. This module puts values on shardings
(host pieces go straight to their devices; arrays already on devices move
device to device, by copies and by compiled resharding programs), compiles
and caches such programs, and wraps their outputs as Arrays with the
shardings XLA gave them.
"""
from __future__ import annotations

import weakref

import numpy as np

from xjax._src import backend
from xjax._src import core
from xjax._src import compile_log
from xjax._src import executable_cache
from xjax._src.array import Array
from xjax._src.config import config
from xjax._src.interpreters import lowering
from xjax._src.interpreters import partial_eval as pe
from xjax._src.sharding import rules
from xjax._src.sharding import shardings as sh
from xjax._src.sharding.mesh import AbstractMesh, Mesh, get_concrete_mesh
from xjax._src.sharding.partition_spec import PartitionSpec


class SPMD:
  """The placement `dispatch.pick_device` returns when an argument spans several devices."""


# ----------------------------------------------------------------------------
# Placing values


def as_array(buf, aval, sharding, committed: bool = True) -> Array:
  """An Array over `sharding` (a plain single-device Array when it has one device)."""
  if isinstance(sharding, sh.SingleDeviceSharding):
    return Array(buf, aval, sharding._device, committed)
  typed = rules.aval_sharding(sharding, len(aval.shape))
  if typed != aval.sharding:
    aval = aval.update(sharding=typed)
  return Array(buf, aval, None, committed, sharding)


def place(x, sharding) -> Array:
  """`x` (an Array, NumPy array or scalar) laid out as `sharding` says.

  Host values are cut on the host and each piece copied to its device.
  Arrays on devices move device to device. In a job of several processes
  each process places the pieces of its own devices: a host value (or an
  uncommitted Array) is taken to be the same in every process.

  Raises:
    ValueError: `sharding` cannot split an array of x's shape; `x` committed
      to this process's devices and `sharding` spanning others'; `x` over
      other processes' devices than `sharding`.
  """
  if isinstance(x, core.Tracer):
    raise core.escaped_tracer_error(x)
  aval = x.aval if type(x) is Array else core.get_aval(x)
  if type(x) is Array and core.is_extended(aval):
    # Keys (and other extended dtypes): their physical data placed, the trailing data axes
    # whole on every device.
    sharding.check_shape(aval.shape)
    data = place(Array(x._buf, core.physical_aval(aval), x._device, x._committed, x._sharding),
                 sharding)
    return as_array(data._buf, aval, sharding)
  sharding.check_shape(aval.shape)
  devices = sharding._device_assignment
  tiles = sharding._tile_description(len(aval.shape))
  local = sharding._addressable_assignment
  if type(x) is Array:
    x._check_alive()
    if x._sharding is not None:
      if x._sharding._device_assignment == devices:
        if x._sharding._tile_description(len(aval.shape)) == tiles:
          return as_array(x._buf, aval, sharding)
        return _reshard(x, sharding)
      if not (x._sharding.is_fully_addressable and len(local) == len(devices)):
        return _reshard(x, sharding)
    elif len(local) != len(devices) and x._committed:
      raise ValueError("device_put's second argument must be a Device or a Sharding which "
                       f"represents addressable devices, but got {sharding}. Please pass device "
                       "or Sharding which represents addressable devices.")
    elif x._npy is None and len(devices) > 1:
      return _from_single_device(x, sharding)
    value = x._value
  else:
    value = np.asarray(x, aval.dtype)
  pairs = tiles.indices(aval.shape, len(devices))
  mine = set(local)
  parts = [np.asarray(value[index]) for d, (index, _) in zip(devices, pairs) if d in mine]
  return as_array(backend.put_sharded(parts, local, devices, aval, tiles), aval, sharding)


def _from_single_device(x: Array, sharding) -> Array:
  """A single-device array copied to every device of `sharding` (this process's), then split
  there."""
  devices = sharding._device_assignment
  bufs = [x._buf if d == x._device else backend.copy_to_device(x._buf, d)
          for d in sharding._addressable_assignment]
  ndim = x.ndim
  replicated = sh.TileDescription((1,) * ndim, (0,), False)
  mesh = getattr(sharding, "mesh", None)
  whole = Array(backend.assemble(x.aval, devices, replicated, bufs), x.aval, None, True,
                sh.NamedSharding(mesh, sh.PartitionSpec()) if isinstance(mesh, Mesh)
                else sh.GSPMDSharding(devices, replicated))
  if sharding._tile_description(ndim) == replicated:
    return as_array(whole._buf, x.aval, sharding)
  return _reshard(whole, sharding)


def _reshard(x: Array, sharding) -> Array:
  """`x` moved to `sharding` (same devices) by a compiled identity program."""
  src, dst = x._sharding, sharding
  if not (src.is_fully_addressable and dst.is_fully_addressable) and (
      src.device_set != dst.device_set):
    raise ValueError(
        "For a cross-host reshard in multi-controller JAX, input and target sharding should "
        "have the same set of devices. Got input's device set ids: "
        f"{[d.id for d in src._device_assignment]} on platform "
        f"{src._device_assignment[0].platform.upper()} and target sharding's device set ids: "
        f"{[d.id for d in dst._device_assignment]} on platform "
        f"{dst._device_assignment[0].platform.upper()}.")
  if not (isinstance(src, sh.NamedSharding) and isinstance(dst, sh.NamedSharding)
          and src.mesh == dst.mesh):
    if not (src.is_fully_addressable and dst.is_fully_addressable):
      raise NotImplementedError(
          f"xjax cannot yet move an array from {src} to {dst} across processes (the same "
          "devices in another order or mesh): reshard on one mesh, or gather it with "
          "jax.experimental.multihost_utils.process_allgather first.")
    # Different meshes (or a layout XLA chose): through the host.
    return place(np.asarray(x._value), dst)
  key = ("reshard", x.aval, src, dst)

  def build():
    closed = pe.trace_to_jaxpr(lambda v: [v], [x.aval.update(weak_type=False, sharding=None)])
    return compile_spmd(closed, dst.mesh, [src], [dst], "reshard")
  out = _executables.get_or_build(key, build).run([x])[0]
  # The sharding asked for, as JAX's device_put keeps it (the program's output sharding may
  # spell the same layout otherwise: P(('x', 'y')) for P('x') where 'y' has size 1).
  # An UNCONSTRAINED dimension is the program's to choose: its output sharding says which.
  unconstrained = isinstance(dst, sh.NamedSharding) and any(
      e is PartitionSpec.UNCONSTRAINED for e in dst.spec)
  return out if out._sharding == dst or unconstrained else as_array(out._buf, out.aval, dst)


# ----------------------------------------------------------------------------
# Compiled programs


class ShardedExecutable:
  """A compiled SPMD program: takes arguments anywhere, returns Arrays over its mesh."""

  def __init__(self, xla_executable, closed: core.ClosedJaxpr, mesh: Mesh, text: str,
               n_consts: int, const_values):
    self.xla_executable = xla_executable
    self.mesh = mesh
    self.text = text
    devices = mesh._flat_devices_tuple
    self.devices = devices
    avals = [v.aval for v in closed.jaxpr.constvars] + list(closed.in_avals)
    self.in_avals = avals
    self.out_avals = list(closed.out_avals)
    params, outs = backend.parameter_and_output_shardings(xla_executable)
    # A one-partition program (a mesh of one device): XLA reports no shardings; every value
    # is whole there.
    params = [None] * len(avals) if params is None else params
    outs = [None] * len(self.out_avals) if outs is None else outs
    self.in_shardings = [_sharding_of(mesh, op, len(a.shape)) for op, a in zip(params, avals)]
    self.out_shardings = [_sharding_of(mesh, op, len(a.shape))
                          for op, a in zip(outs, self.out_avals)]
    self.out_avals = [a.update(sharding=rules.aval_sharding(s, len(a.shape)))
                      for a, s in zip(self.out_avals, self.out_shardings)]
    self._handlers = backend.sharded_result_handlers(
        self.out_avals, devices, [s._tile_description(len(a.shape))
                                  for s, a in zip(self.out_shardings, self.out_avals)], True)
    self._execute = backend.execute_and_wait if closed.effects else backend.execute
    self._const_bufs = [place(c, s)._buf for c, s in zip(const_values, self.in_shardings)]
    self._n_consts = n_consts

  def run(self, args) -> list[Array]:
    if config.jax_no_execution:
      raise RuntimeError("JAX tried to execute an SPMD program, but the no_execution config "
                         "option is set")
    bufs = list(self._const_bufs)
    for x, s in zip(args, self.in_shardings[self._n_consts:]):
      if type(x) is Array and x._sharding is not None and (
          x._sharding is s or x._sharding == s) and x._buf is not None:
        bufs.append(x._buf)
      else:
        bufs.append(place(x, s)._buf)
    outs = self._execute(self.xla_executable, bufs, self._handlers)
    return [Array(b, a, None, True, s) for b, a, s in zip(outs, self.out_avals, self.out_shardings)]


def _sharding_of(mesh: Mesh, op_sharding, ndim: int):
  described = ((), (0,), False) if op_sharding is None else backend.describe_sharding(op_sharding)
  if described is None:
    raise NotImplementedError(f"xjax cannot place values as XLA's sharding {op_sharding} says")
  dims, devices, replicate_last = described
  if not dims:
    tiles = sh.TileDescription((1,) * ndim, (0,), False)
  else:
    tiles = sh.TileDescription(dims, devices, replicate_last)
  return sh.named_sharding_for_tiles(mesh, tiles, ndim)


_executables = executable_cache.executables


def compile_spmd(closed: core.ClosedJaxpr, mesh: Mesh, in_shardings, out_shardings, name: str,
                 donated=None, compiler_options=(), host_callbacks_ok=True) -> ShardedExecutable:
  """Lowers and compiles `closed` as one program over `mesh`'s devices.

  `in_shardings`/`out_shardings`: per argument/result, a sharding or None
  (XLA chooses). The jaxpr's consts become leading arguments placed as XLA
  asks.
  """
  n_consts = len(closed.jaxpr.constvars)
  text, callbacks = lowering.lower_jaxpr_to_module(
      closed, name, spmd=lowering.SpmdModule(mesh, [None] * n_consts + list(in_shardings),
                                             list(out_shardings), donated))
  compile_log.log_compile(name[4:] if name.startswith("jit_") else name, closed.in_avals)
  exe = backend.compile_module(text, mesh._flat_devices_tuple, callbacks,
                               compiler_options=compiler_options)
  return ShardedExecutable(exe, closed, mesh, text, n_consts, closed.consts)


# ----------------------------------------------------------------------------
# Which mesh a computation runs over


def program_mesh(jaxpr) -> Mesh | None:
  """The mesh a program's own equations name (a shard_map's mesh, a sharding
  constraint's), searched through nested jaxprs; None if none does.

  Such a program runs as one SPMD program over that mesh's devices even when
  its arguments are not sharded (an eager `lax.scan` whose body calls a
  shard_map, a nested jit holding a constraint). An `AbstractMesh` resolves to
  the context mesh.

  Raises:
    ValueError: an AbstractMesh with no context mesh of its axes.
  """
  if isinstance(jaxpr, core.ClosedJaxpr):
    jaxpr = jaxpr.jaxpr
  found = _named_meshes.get(jaxpr, _UNSEEN)
  if found is _UNSEEN:
    found = _named_meshes[jaxpr] = _first_mesh(jaxpr)
  if found is None or isinstance(found, Mesh):
    return found
  concrete = get_concrete_mesh()
  if concrete is None or concrete.abstract_mesh.shape_tuple != found.shape_tuple:
    raise ValueError(f"a computation over the AbstractMesh {found} needs a context mesh of "
                     "the same axes (jax.set_mesh) to run")
  return concrete


_UNSEEN = object()
# Jaxprs are immutable: the mesh (or AbstractMesh) each names, found once.
_named_meshes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _first_mesh(jaxpr: core.Jaxpr):
  for eqn in jaxpr.eqns:
    for value in eqn.params.values():
      found = _mesh_in(value)
      if found is not None:
        return found
  return None


def _mesh_in(value):
  if isinstance(value, (Mesh, AbstractMesh)):
    return value
  if isinstance(value, sh.NamedSharding) and isinstance(value.mesh, (Mesh, AbstractMesh)):
    return value.mesh
  if isinstance(value, core.ClosedJaxpr):
    return _first_mesh(value.jaxpr)
  if isinstance(value, core.Jaxpr):
    return _first_mesh(value)
  if isinstance(value, (tuple, list)):
    for v in value:
      m = _mesh_in(v)
      if m is not None:
        return m
  return None


def mesh_of(args, name: str, extra_shardings=()) -> Mesh:
  """The one mesh of the committed multi-device arguments (and of `extra_shardings`).

  Raises:
    ValueError: arguments committed to different devices or meshes.
  """
  mesh = None
  first = None
  for s in extra_shardings:
    if isinstance(s, sh.NamedSharding):
      if mesh is None:
        mesh = s.mesh
      elif s.mesh != mesh:
        raise _mesh_mismatch(mesh, s.mesh)
  for a in args:
    if type(a) is not Array or not a._committed:
      continue
    s = a._sharding
    if s is None:
      if first is None:
        first = a
      continue
    m = s.mesh if isinstance(s, sh.NamedSharding) else None
    if m is None:
      raise NotImplementedError("an argument laid out by XLA in a way no PartitionSpec "
                                f"describes ({s!r}): reshard it with jax.device_put first")
    if mesh is None:
      mesh = m
    elif m != mesh:
      if m._flat_devices_tuple != mesh._flat_devices_tuple:
        raise ValueError(
            f"Received incompatible devices for jitted computation. Got arguments of {name} "
            f"committed to meshes over different devices: {mesh} and {m}.")
      raise _mesh_mismatch(mesh, m)
  if first is not None and mesh is not None and not (
      mesh.size == 1 and mesh._flat_devices_tuple[0] == first._device):
    sharded = next(a for a in args if type(a) is Array and a._sharding is not None)
    raise ValueError(
        f"Received incompatible devices for jitted computation. Got argument of {name} with "
        f"shape {sharded.aval.str_short()} and with device ids "
        f"{sorted(d.id for d in mesh._flat_devices_tuple)} on platform "
        f"{mesh._flat_devices_tuple[0].platform.upper()} and argument of {name} with shape "
        f"{first.aval.str_short()} and with device ids [{first._device.id}] on platform "
        f"{first._device.platform.upper()}")
  return mesh


def _mesh_mismatch(a, b) -> ValueError:
  return ValueError(f"Mesh for all inputs should be equal. Got one mesh: {a.abstract_mesh} and "
                    f"another mesh: {b.abstract_mesh}")


def in_shardings_of(args, name: str) -> tuple:
  """Per argument: the sharding it is committed to over several devices, else None.

  Raises:
    ValueError: an argument committed to one device next to multi-device ones
      (or arguments over different meshes).
  """
  out = tuple(arg_sharding(a) for a in args)
  if any(type(a) is Array and a._committed and a._sharding is None for a in args):
    mesh_of(args, name)
  return out


def arg_sharding(x):
  """The sharding a committed multi-device argument brings (or a stand-in such as a
  `ShapeDtypeStruct` with a multi-device sharding, in an ahead-of-time trace), else None
  (XLA chooses)."""
  if type(x) is Array:
    return x._sharding
  if type(x) in _array_stand_ins:
    s = x.sharding
    return s if isinstance(s, sh.Sharding) and not isinstance(s, sh.SingleDeviceSharding) else None
  return None


# Classes whose instances stand for arrays in ahead-of-time traces and carry a `sharding`.
_array_stand_ins: set = set()


def register_array_stand_in(cls) -> None:
  """Makes `arg_sharding` read the `sharding` of `cls`'s instances (`ShapeDtypeStruct`)."""
  _array_stand_ins.add(cls)
