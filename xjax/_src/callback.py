"""Host callbacks: `pure_callback` and `io_callback` (mirror `jax.pure_callback`,
`jax.experimental.io_callback`).

Each is a primitive whose equation calls a Python function on the host. In a
compiled program the lowering emits XLA's ``xla_ffi_python_cpu_callback``
custom call, which hands the operands to the function as NumPy arrays; run
eagerly, the function is called directly. Either way the function receives
xjax Arrays and its results are checked against the declared shapes and
dtypes.
"""
from __future__ import annotations

import traceback

import numpy as np

from xjax._src import backend
from xjax._src import core
from xjax._src import dispatch
from xjax._src import dtypes
from xjax._src import effects
from xjax._src import tree_util
from xjax._src.interpreters import batching
from xjax._src.lax import structural
from xjax._src.lax.control_flow.scan import scan


class _FlatCallback:
  """A user callback taking and returning flat lists of arrays (JAX's `_FlatCallback`).

  Equal for the same function and argument structure, so equations of equal
  calls are equal and jit caches hit.
  """
  __slots__ = ("callback_func", "in_tree")

  def __init__(self, callback_func, in_tree):
    self.callback_func = callback_func
    self.in_tree = in_tree

  def __call__(self, *flat_args):
    args, kwargs = tree_util.tree_unflatten(self.in_tree, flat_args)
    return tree_util.tree_leaves(self.callback_func(*args, **kwargs))

  def __eq__(self, other):
    return (type(other) is _FlatCallback and self.callback_func == other.callback_func
            and self.in_tree == other.in_tree)

  def __hash__(self):
    return hash((self.callback_func, self.in_tree))

  def __repr__(self):
    return f"_FlatCallback(callback_func={self.callback_func!r}, in_tree={self.in_tree})"


def as_arrays(flat_args) -> list:
  """Host values (NumPy arrays from XLA, or Arrays) as xjax Arrays for a user callback."""
  return [dispatch.device_put_value(x) for x in flat_args]


def check_results(outs, result_avals) -> tuple:
  """The callback's results as NumPy arrays, checked against `result_avals` as JAX checks them.

  Raises:
    RuntimeError: the number, a shape or a dtype of the results differs
      (dtypes are compared after 64-bit values are narrowed without x64).
  """
  outs = list(outs)
  if len(outs) != len(result_avals):
    raise RuntimeError("Mismatched number of outputs from callback. "
                       f"Expected: {len(result_avals)}, Actual: {len(outs)}")
  checked = []
  for i, (out, aval) in enumerate(zip(outs, result_avals)):
    value = np.asarray(out)
    value = value.astype(dtypes.canonicalize_dtype(value.dtype), copy=False)
    if value.shape != aval.shape:
      raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                         f"Expected: {aval.shape}, Actual: {value.shape}")
    if value.dtype != aval.dtype:
      raise RuntimeError(f"Incorrect output dtype for return value #{i}: "
                         f"Expected: {aval.dtype}, Actual: {value.dtype}")
    checked.append(value)
  return tuple(checked)


def _result_avals(result_shape_dtypes):
  """Flat ShapedArrays of the declared results, and their tree."""
  leaves, out_tree = tree_util.tree_flatten(result_shape_dtypes)
  avals = []
  for leaf in leaves:
    if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
      raise TypeError("result_shape_dtypes must be a pytree whose leaves have `shape` and "
                      f"`dtype` attributes (e.g. jax.ShapeDtypeStruct), got {leaf!r}.")
    dtype = np.dtype(leaf.dtype)
    if dtypes.canonicalize_dtype(dtype) != dtype:
      raise ValueError("result_shape_dtypes cannot specify 64-bit types when "
                       "`jax_enable_x64` is disabled")
    avals.append(core.ShapedArray(tuple(leaf.shape), dtype))
  return tuple(avals), out_tree


def _run_on_host(callback, flat_args, result_avals) -> tuple:
  """Calls `callback` on Arrays made of the host values; returns checked NumPy results."""
  return check_results(callback(*as_arrays(flat_args)), result_avals)


def _eager(callback, args, result_avals):
  """Runs a callback outside `jit`. Its failure reaches the caller as XLA's error does under
  `jit` (JAX runs even an eager callback as a compiled program): a `JaxRuntimeError` (a
  RuntimeError) whose message holds the callback's traceback, chained to the exception."""
  try:
    outs = _run_on_host(callback, args, result_avals)
  except Exception as e:
    raise backend.runtime_error_class()(
        "INTERNAL: CpuCallback error calling callback: "
        + "".join(traceback.format_exception(e)).rstrip()) from e
  return [dispatch.device_put_value(x) for x in outs]


# ----------------------------------------------------------------------------
# pure_callback

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized")


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
  """Calls the pure Python function `callback` from traced or compiled code.

  `callback(*args, **kwargs)` receives Arrays and returns a pytree of arrays
  matching `result_shape_dtypes` (leaves with `shape` and `dtype`, e.g.
  `ShapeDtypeStruct`). Being pure, it may be called more or fewer times than
  written (not at all when its result is unused).

  Under `vmap` the `vmap_method` decides: 'sequential' (a loop calling
  `callback` once per element), 'sequential_unrolled' (the same, unrolled),
  'expand_dims' (one call; unbatched inputs get a leading axis of size 1),
  'broadcast_all' (one call; every input broadcast to the batch), or
  'legacy_vectorized' (one call on the batched inputs as they are).

  Returns:
    A pytree of Arrays of `result_shape_dtypes`' structure.

  Raises:
    ValueError: an unknown `vmap_method`; a 64-bit result dtype without x64;
      differentiation (wrap the callback in `custom_jvp`/`custom_vjp`).
    NotImplementedError: `vmap` without a `vmap_method`.
    RuntimeError: at run time, results of the wrong number, shape or dtype.

  Mirrors `jax.pure_callback`.
  """
  allowed = [*VMAP_METHODS, None]
  if vmap_method not in allowed:
    raise ValueError(f"vmap_method must be on of the allowed methods {allowed}, "
                     f"but got: {vmap_method}")
  _check_sharding(sharding)
  flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
  result_avals, out_tree = _result_avals(result_shape_dtypes)
  outs = pure_callback_p.bind(*flat_args, callback=_FlatCallback(callback, in_tree),
                              result_avals=result_avals, sharding=sharding,
                              vmap_method=vmap_method)
  return tree_util.tree_unflatten(out_tree, outs)


def _check_sharding(sharding):
  if sharding is not None and len(getattr(sharding, "device_set", ())) > 1:
    raise NotImplementedError("pure_callback only supports SingleDeviceSharding, but got "
                              f"{type(sharding)}")


pure_callback_p = core.Primitive("pure_callback", multiple_results=True)


@pure_callback_p.def_impl
def _pure_callback_impl(*args, callback, result_avals, sharding, vmap_method):
  return _eager(callback, args, result_avals)


@pure_callback_p.def_abstract_eval
def _pure_callback_abstract_eval(*avals, callback, result_avals, sharding, vmap_method):
  return list(result_avals)


@pure_callback_p.def_lowering
def _pure_callback_lowering(ctx, *args, callback, result_avals, sharding, vmap_method):
  return ctx.host_callback(lambda *xs: _run_on_host(callback, xs, result_avals), args,
                           result_avals, has_side_effect=False,
                           device_index=_device_index(ctx, sharding))


def _device_index(ctx, sharding) -> int:
  """The device (its index in the module's mesh) that runs a callback in a program over a
  mesh: the one of `sharding` under automatic partitioning, the first by default.

  Raises:
    NotImplementedError: in a body manual over only some mesh axes, or with a
      `sharding` in a manual body (as JAX).
    ValueError: `sharding`'s device is not among the program's.
  """
  spmd, axis_context = ctx.module.spmd, ctx.module.axis_context
  if spmd is None:
    return 0
  if axis_context is not None:
    if axis_context.manual_axes != frozenset(axis_context.mesh.axis_names):
      raise NotImplementedError(
          "callbacks are only supported in spmd computations when all mesh axes are "
          "partitioned manually (no partial automatic sharding).")
    if sharding is not None:
      raise NotImplementedError("callbacks do not support specifying sharding inside spmd "
                                "computations")
    return 0
  if sharding is None:
    return 0
  device = next(iter(sharding.device_set))
  devices = list(spmd.mesh.devices.flat)
  if device not in devices:
    raise ValueError(f"Sharding provided to pure_callback specifies a device {device} that "
                     f"is not in the device assignment ({devices})")
  return devices.index(device)


@pure_callback_p.def_jvp
def _pure_callback_jvp(primals, tangents, **params):
  raise ValueError("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
                   "callbacks while taking gradients.")


@pure_callback_p.def_transpose
def _pure_callback_transpose(cts, *args, **params):
  raise ValueError("Pure callbacks do not support transpose. Please use `jax.custom_vjp` to "
                   "use callbacks while taking gradients.")


@pure_callback_p.def_batch
def _pure_callback_batch(axis_data, args, dims, *, vmap_method, result_avals, **params):
  size = axis_data.size
  args = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(args, dims)]
  batched_avals = tuple(core.ShapedArray((size, *a.shape), a.dtype) for a in result_avals)
  if vmap_method == "legacy_vectorized":
    outs = pure_callback_p.bind(*args, vmap_method=vmap_method, result_avals=batched_avals,
                                **params)
  elif vmap_method in ("expand_dims", "broadcast_all"):
    lead = size if vmap_method == "broadcast_all" else 1
    args = [structural.broadcast(x, (lead,)) if d is None else x for x, d in zip(args, dims)]
    outs = pure_callback_p.bind(*args, vmap_method=vmap_method, result_avals=batched_avals,
                                **params)
  elif vmap_method in ("sequential", "sequential_unrolled"):
    def one(xs):
      return pure_callback_p.bind(*xs, vmap_method=vmap_method, result_avals=result_avals,
                                  **params)
    outs = _sequential(one, args, dims, unroll=vmap_method == "sequential_unrolled")
  else:
    raise NotImplementedError(
        "vmap is only supported for the pure_callback primitive when vmap_method is one of "
        "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
        f"'legacy_vectorized'. Got vmap_method={vmap_method!r}.")
  return list(outs), [0] * len(outs)


def _sequential(bind_one, args, dims, unroll=False):
  """`bind_one` mapped over the leading axis of the batched `args` with a scan."""
  batched = [x for x, d in zip(args, dims) if d is not None]

  def body(carry, xs):
    xs = iter(xs)
    merged = [next(xs) if d is not None else x for x, d in zip(args, dims)]
    return carry, bind_one(merged)

  _, outs = scan(body, (), batched, unroll=unroll)
  return outs


# ----------------------------------------------------------------------------
# io_callback


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False,
                **kwargs):
  """Calls the impure Python function `callback` from traced or compiled code.

  Unlike `pure_callback`, the call is never dropped or duplicated; with
  ``ordered=True`` it also runs in program order with the other ordered
  effects (ordered callbacks cannot be vmapped). Arguments and results as in
  `pure_callback`.

  Returns:
    A pytree of Arrays of `result_shape_dtypes`' structure.

  Raises:
    ValueError: a 64-bit result dtype without x64; differentiation; `vmap`
      of an ordered callback.
    RuntimeError: at run time, results of the wrong number, shape or dtype.

  Mirrors `jax.experimental.io_callback`.
  """
  _check_sharding(sharding)
  flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
  result_avals, out_tree = _result_avals(result_shape_dtypes)
  outs = io_callback_p.bind(*flat_args, callback=_FlatCallback(callback, in_tree),
                            result_avals=result_avals, sharding=sharding, ordered=ordered)
  return tree_util.tree_unflatten(out_tree, outs)


io_callback_p = core.Primitive("io_callback", multiple_results=True)
io_callback_p.effects = lambda *, ordered, **_: frozenset(
    {effects.ordered_io_effect if ordered else effects.io_effect})


@io_callback_p.def_impl
def _io_callback_impl(*args, callback, result_avals, sharding, ordered):
  return _eager(callback, args, result_avals)


@io_callback_p.def_abstract_eval
def _io_callback_abstract_eval(*avals, callback, result_avals, sharding, ordered):
  return list(result_avals)


@io_callback_p.def_lowering
def _io_callback_lowering(ctx, *args, callback, result_avals, sharding, ordered):
  return ctx.host_callback(lambda *xs: _run_on_host(callback, xs, result_avals), args,
                           result_avals, has_side_effect=True, ordered=ordered,
                           device_index=_device_index(ctx, sharding))


@io_callback_p.def_jvp
def _io_callback_jvp(primals, tangents, **params):
  raise ValueError("IO callbacks do not support JVP.")


@io_callback_p.def_transpose
def _io_callback_transpose(cts, *args, **params):
  raise ValueError("IO callbacks do not support transpose.")


@io_callback_p.def_batch
def _io_callback_batch(axis_data, args, dims, *, ordered, **params):
  if ordered:
    raise ValueError("Cannot `vmap` ordered IO callback.")
  args = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(args, dims)]
  outs = _sequential(lambda xs: io_callback_p.bind(*xs, ordered=False, **params), args, dims)
  return list(outs), [0] * len(outs)

