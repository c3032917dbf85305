"""`pmap`: a function mapped over a leading array axis, one device per index.

As in JAX 0.10.2, pmap is `jit` of a `shard_map` over a one-axis mesh of the
first ``axis_size`` devices: each mapped argument is split along its mapped
axis (one slice per device, which the body sees with that axis squeezed
out), and each output is rebuilt along its ``out_axes`` position. The body
runs with ``check_vma=False``, so an output with ``out_axes=None`` is taken
from the devices as they return it.
"""
from __future__ import annotations

import numpy as np

from xjax._src import api_util
from xjax._src import backend as _backend  # `pmap` has an argument of that name
from xjax._src import core
from xjax._src.devices import check_backend
from xjax._src.device_put import device_put
from xjax._src import executable_cache
from xjax._src.jit import jit
from xjax._src import tree_util
from xjax._src.lax import structural
from xjax._src.shard_map import shard_map
from xjax._src.sharding.mesh import Mesh
from xjax._src.sharding.partition_spec import PartitionSpec
from xjax._src.sharding.shardings import IndivisibleError, NamedSharding

_DEFAULT_AXIS_NAME = "_internal_pmap_axis_name"


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=()):
  """Maps `fun` over a leading axis of its arguments in parallel, one device per index.

  Args:
    fun: the function to map. Collectives (`lax.psum`, ...) inside it may name
      `axis_name`.
    axis_name: a hashable name for the mapped axis (default: an internal one).
    in_axes: an int, None, or a pytree prefix of the positional arguments
      thereof: the axis of each argument to map over (None: broadcast).
      Keyword arguments are mapped over axis 0.
    out_axes: an int, None or a pytree prefix of the output: where the mapped
      axis appears in each output (None: the output of the devices, which
      must agree).
    static_broadcasted_argnums: positional arguments passed to `fun` as
      Python values (hashable); a new value compiles again.
    devices: the devices to map over (default: the first ``axis_size`` of
      `xjax.devices()`).
    backend: the platform name; only the default backend is supported.
    axis_size: the size of the mapped axis, checked against the arguments.
    donate_argnums: positional arguments whose buffers the computation may reuse.

  Returns:
    The mapped function: arguments with the extra mapped axes, outputs with
    the mapped axis at `out_axes`.

  Raises:
    TypeError: `fun` is not callable, or in_axes/out_axes leaves are not ints.
    ValueError: `devices` is empty; no argument is mapped; `axis_size`
      differs from the arguments'; more indices than devices; mapped axes of
      different sizes; static argnums beyond the positional arguments.

  Mirrors `jax.pmap`.
  """
  if devices is not None:
    if not devices:
      raise ValueError("'devices' argument to pmap must be non-empty, or None.")
    devices = tuple(devices)
  api_util.check_callable(fun)
  axis_name = _DEFAULT_AXIS_NAME if axis_name is None else axis_name
  static_argnums = api_util._ensure_index_tuple(static_broadcasted_argnums)
  donate = api_util._ensure_index_tuple(donate_argnums)
  donate = tuple(d - sum(1 for s in static_argnums if s < d) for d in donate
                 if d not in static_argnums)
  if not all(type(leaf) is int for leaf in tree_util.tree_leaves(in_axes)):
    raise TypeError("pmap in_axes must be an int, None, or (nested) container with those "
                    f"types as leaves, but got {in_axes}.")
  if not all(type(leaf) is int for leaf in tree_util.tree_leaves(out_axes)):
    raise TypeError("pmap out_axes must be an int, None, or (nested) container with those "
                    f"types as leaves, but got {out_axes}.")
  if backend is not None:
    check_backend(backend)
  # Per argument structure: the jitted shard_map (it caches its own traces and programs).
  cache = executable_cache.LRUCache("pmap functions", 64)

  def prepare(args, kwargs):
    """``(jitted, leaves, eager, processes, in_axes_flat)`` of one call."""
    statics, dyn_args = _split_statics(fun, args, static_argnums)
    leaves, in_tree = tree_util.tree_flatten((dyn_args, kwargs))
    in_axes_flat = _in_axes_flat(in_axes, static_argnums, args, dyn_args, kwargs, in_tree)
    size = _mapped_axis_size(leaves, in_axes_flat)
    eager = core.current_trace() is core.eval_trace
    processes = _backend.process_count()
    if processes > 1 and eager:
      # Each process maps over its own devices: the arguments are its slices of the mapped
      # axis, and the program spans every process's devices (grouped by process: a stable
      # sort keeps each process's own order).
      global_size = axis_size if axis_size is not None else size * processes
      by_process = tuple(sorted(_backend.devices(), key=lambda d: d.process_index))
      mesh_devices = (devices or by_process)[:global_size]
    else:
      if axis_size is not None and axis_size != size:
        raise ValueError(f"Specified axis_size {axis_size} doesn't match received axis_size "
                         f"{size}.")
      # Traced inside another transformation of a multi-process job: this process's devices.
      mesh_devices = (devices or tuple(_backend.local_devices() if processes > 1
                                       else _backend.devices()))[:size]
    key = (in_tree, in_axes_flat, mesh_devices, statics, eager)
    jitted = cache.get_or_build(key, lambda: _build(
        fun, axis_name, mesh_devices, in_tree, in_axes_flat, out_axes, static_argnums,
        statics, _donated_leaves(donate, dyn_args), eager))
    if eager and processes == 1:
      _check_divisible(leaves, in_axes_flat, len(mesh_devices), jitted.mesh, axis_name)
      leaves = _onto_mesh(leaves, jitted.mesh, in_axes_flat, axis_name)
    return jitted, leaves, eager, processes, in_axes_flat

  def wrapped(*args, **kwargs):
    jitted, leaves, eager, processes, in_axes_flat = prepare(args, kwargs)
    if eager and processes > 1:
      return _run_across_processes(jitted, leaves, in_axes_flat, axis_name)
    return jitted(*leaves)

  def lower(*args, **kwargs):
    """The pmapped computation lowered for these arguments (`jax.stages.Lowered`); its
    ``compile()`` is called with arguments like these."""
    jitted, leaves, *_ = prepare(args, kwargs)
    return _PmapStage(jitted.lower(*leaves), prepare)

  wrapped.__name__ = getattr(fun, "__name__", "pmap")
  wrapped.__qualname__ = getattr(fun, "__qualname__", wrapped.__name__)
  wrapped.__doc__ = getattr(fun, "__doc__", None)
  wrapped.__wrapped__ = fun
  wrapped.lower = lower
  return wrapped


class _PmapStage:
  """A Lowered or Compiled stage of a pmapped function, taking the pmapped function's own
  arguments (the jitted program inside takes their flattened leaves)."""

  def __init__(self, stage, prepare):
    self._stage, self._prepare = stage, prepare

  def __getattr__(self, name):  # as_text, cost_analysis, in_tree, args_info, ...
    return getattr(self._stage, name)

  def compile(self, *args, **kwargs):
    return _PmapStage(self._stage.compile(*args, **kwargs), self._prepare)

  def __call__(self, *args, **kwargs):
    _, leaves, *_ = self._prepare(args, kwargs)
    return self._stage(*leaves)


def _onto_mesh(leaves, mesh, in_axes_flat, axis_name) -> list:
  """The leaves, those laid out over another mesh (another axis name over the devices, as
  from an earlier device_put) moved onto pmap's own, as JAX's pmap takes any input."""
  out = []
  for x, ax in zip(leaves, in_axes_flat):
    sharding = getattr(x, "sharding", None) if not isinstance(x, core.Tracer) else None
    if isinstance(sharding, NamedSharding) and sharding.mesh != mesh:
      x = device_put(x, NamedSharding(mesh, _axis_spec(axis_name, ax)))
    out.append(x)
  return out


def _run_across_processes(jitted, leaves, in_axes_flat, axis_name):
  """The pmapped program over every process's devices, from and to host-local values."""
  from xjax._src import multihost_utils
  mesh = jitted.mesh
  specs = [_axis_spec(axis_name, ax) for ax in in_axes_flat]
  global_args = multihost_utils.host_local_array_to_global_array(list(leaves), mesh, specs)
  out = jitted(*global_args)
  return multihost_utils.global_array_to_host_local_array(out, mesh, jitted.out_specs)


def _split_statics(fun, args, static_argnums):
  """(the static arguments as (index, value) pairs, the dynamic positional arguments)."""
  if not static_argnums:
    return (), args
  if max(static_argnums) >= len(args):
    plural = "s" if len(args) > 1 else ""
    raise ValueError(f"pmapped function has static_broadcasted_argnums={static_argnums} but "
                     f"was called with only {len(args)} positional argument{plural}. All "
                     "static broadcasted arguments must be passed positionally.")
  statics = []
  for i in static_argnums:
    try:
      hash(args[i])
    except TypeError:
      raise ValueError(
          "Non-hashable static arguments are not supported, as this can lead to unexpected "
          f"cache-misses. Static argument (index {i}) of type {type(args[i])} for function "
          f"{api_util.fun_name(fun)} is non-hashable.") from None
    statics.append((i, args[i]))
  return tuple(statics), tuple(a for i, a in enumerate(args) if i not in static_argnums)


def _in_axes_flat(in_axes, static_argnums, args, dyn_args, kwargs, in_tree) -> tuple:
  """One axis (or None) per leaf of ``(dyn_args, kwargs)``; keyword arguments map axis 0."""
  if static_argnums and isinstance(in_axes, tuple):
    in_axes = tuple(a for i, a in enumerate(in_axes) if i not in static_argnums)
  prefix = (in_axes, 0)
  try:
    return tuple(tree_util.broadcast_prefix(prefix, (dyn_args, kwargs),
                                            is_leaf=lambda x: x is None))
  except ValueError:
    pass
  error = tree_util.prefix_errors(prefix, (dyn_args, kwargs), is_leaf=lambda x: x is None)[0]
  msg = str(error("pmap in_axes"))
  msg += ("\n\nThe 'full pytree' here is the tuple of arguments passed positionally to the "
          "pmapped function, and the value of `in_axes` must be a tree prefix of that tuple. "
          "But it was not a prefix.")
  if kwargs:
    msg += ("\n\nWhen some arguments are passed by keyword to the pmapped function, they are "
            "not included in the comparison to `in_axes`. Instead, each argument passed by "
            "keyword is mapped over its leading axis. See the description of `in_axes` in the "
            "`pmap` docstring: "
            "https://docs.jax.dev/en/latest/_autosummary/jax.pmap.html#jax.pmap")
  msg += ("\n\nCheck that the value of the `in_axes` argument to `pmap` is a tree prefix of "
          "the tuple of arguments passed positionally to the pmapped function.")
  raise ValueError(msg) from None


def _mapped_axis_size(leaves, in_axes_flat) -> int:
  for x, ax in zip(leaves, in_axes_flat):
    if ax is not None:
      return int(np.shape(x)[ax])
  raise ValueError("pmap requires at least one argument with a mapped axis.")


def _donated_leaves(donate, dyn_args) -> tuple:
  """The flat leaf indices of the donated positional arguments."""
  out, start = [], 0
  for i, a in enumerate(dyn_args):
    n = tree_util.tree_structure(a).num_leaves
    if i in donate:
      out.extend(range(start, start + n))
    start += n
  return tuple(out)


def _axis_spec(axis_name, axis) -> PartitionSpec:
  """The spec splitting dimension `axis` over the pmap axis (None: replicated)."""
  return PartitionSpec() if axis is None else PartitionSpec(*[None] * axis, axis_name)


def _build(fun, axis_name, mesh_devices, in_tree, in_axes_flat, out_axes, static_argnums,
           statics, donated, eager):
  """The jitted shard_map of `fun` for one argument structure (what JAX caches per call)."""
  mesh = Mesh(np.array(mesh_devices, dtype=object), (axis_name,))
  in_specs = tuple(_axis_spec(axis_name, ax) for ax in in_axes_flat)
  out_specs = tree_util.tree_map(lambda ax: _axis_spec(axis_name, ax), out_axes,
                                 is_leaf=lambda x: x is None)

  def _fun(*flat_args):
    flat_args = [x if ax is None else structural.squeeze(x, [ax])
                 for x, ax in zip(flat_args, in_axes_flat)]
    dyn_args, kwargs = tree_util.tree_unflatten(in_tree, flat_args)
    it, statics_dict = iter(dyn_args), dict(statics)
    n = len(dyn_args) + len(statics)
    args = [statics_dict[i] if i in statics_dict else next(it) for i in range(n)]
    out = fun(*args, **kwargs)
    out_flat, out_tree = tree_util.tree_flatten(out)
    axes = tree_util.broadcast_prefix(out_axes, out, is_leaf=lambda x: x is None)
    out_flat = [x if ax is None else structural.expand_dims(x, [ax])
                for x, ax in zip(out_flat, axes)]
    return tree_util.tree_unflatten(out_tree, out_flat)

  mapped = shard_map(_fun, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                     check_vma=False, axis_names={axis_name})
  if eager:
    jitted = jit(mapped, donate_argnums=donated,
                 in_shardings=tuple(NamedSharding(mesh, s) for s in in_specs),
                 out_shardings=tree_util.tree_map(lambda s: NamedSharding(mesh, s), out_specs))
  else:
    jitted = jit(mapped, donate_argnums=donated)
  jitted.mesh = mesh
  jitted.out_specs = out_specs
  return jitted


def _check_divisible(leaves, in_axes_flat, n: int, mesh, axis_name) -> None:
  """JAX's error for a mapped axis that the devices do not split evenly."""
  for x, ax in zip(leaves, in_axes_flat):
    if ax is None:
      continue
    shape = tuple(np.shape(x))
    if ax < len(shape) and shape[ax] % n:
      sharding = NamedSharding(mesh, _axis_spec(axis_name, ax))
      tiling = [n if d == ax else 1 for d in range(len(shape))]
      raise IndivisibleError(
          f"Sharding {sharding!r} implies that array axis {ax} is partitioned {n} times, but "
          f"the dimension size is {shape[ax]} (full shape: {shape}, per-dimension tiling "
          f"factors: {tiling} should evenly divide the shape)")
