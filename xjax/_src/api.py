"""Public transformations and device functions: make_jaxpr, eval_shape, device_put, devices."""
from __future__ import annotations

import functools

import numpy as np

from xjax._src import backend
from xjax._src import core
from xjax._src import dispatch
from xjax._src import dtypes
from xjax._src import tree_util
from xjax._src.api_util import (check_callable, debug_info, flatten_fun, fun_signature,
                                infer_argnums_and_argnames)
from xjax._src.array import Array
from xjax._src.interpreters import partial_eval as pe


class ShapeDtypeStruct:
  """A shape, dtype and weak type standing in for an array (mirrors `jax.ShapeDtypeStruct`)."""
  __slots__ = ("shape", "dtype", "weak_type", "sharding")

  def __init__(self, shape, dtype, *, weak_type: bool = False, sharding=None):
    self.shape = tuple(shape)
    self.dtype = np.dtype(dtype)
    self.weak_type = weak_type
    self.sharding = sharding

  ndim = property(lambda self: len(self.shape))
  size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

  @property
  def aval(self):
    return core.ShapedArray(self.shape, dtypes.canonicalize_dtype(self.dtype), self.weak_type)

  def __repr__(self):
    weak = ", weak_type=True" if self.weak_type else ""
    return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

  def __eq__(self, other):
    return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
            and self.dtype == other.dtype and self.weak_type == other.weak_type)

  def __hash__(self):
    return hash((self.shape, self.dtype, self.weak_type))


core.pytype_aval_mappings[ShapeDtypeStruct] = lambda x: x.aval


def _abstractify(x):
  if isinstance(x, (Array, core.Tracer, ShapeDtypeStruct)):
    return core.get_aval(x)
  if hasattr(x, "shape") and hasattr(x, "dtype"):
    return core.ShapedArray(np.shape(x), dtypes.canonicalize_dtype(x.dtype))
  return core.get_aval(x)


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape: bool = False,
               abstracted_axes=None):
  """A function returning the ClosedJaxpr of `fun` traced on the given arguments.

  Args:
    fun: the function to trace.
    static_argnums: positions of arguments that are passed to `fun` as they
      are, not traced.
    return_shape: also return the output's pytree of ShapeDtypeStructs.

  Returns:
    A function that takes `fun`'s arguments and returns a `ClosedJaxpr`
    (printed in JAX's text format), or ``(jaxpr, shapes)``.

  Mirrors `jax.make_jaxpr`.
  """
  check_callable(fun)
  static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

  @functools.wraps(fun)
  def make_jaxpr_f(*args, **kwargs):
    n = len(args)
    statics = {i if i >= 0 else i + n for i in static_argnums}
    dyn_args = tuple(a for i, a in enumerate(args) if i not in statics)

    def with_statics(*dyn, **kw):
      it = iter(dyn)
      full = [args[i] if i in statics else next(it) for i in range(n)]
      return fun(*full, **kw)

    leaves, in_tree = tree_util.tree_flatten((dyn_args, kwargs))
    avals = [_abstractify(x) for x in leaves]
    flat_fun, out_tree = flatten_fun(with_statics, in_tree)
    info = debug_info("jit", fun, args, kwargs, tuple(statics), ())
    closed = pe.trace_to_jaxpr(flat_fun, avals, info)
    if return_shape:
      shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in closed.out_avals]
      return closed, tree_util.tree_unflatten(out_tree.val, shapes)
    return closed

  make_jaxpr_f.__name__ = f"make_jaxpr({getattr(fun, '__name__', 'fun')})"
  return make_jaxpr_f


def eval_shape(fun, *args, **kwargs):
  """The output shapes and dtypes of `fun(*args, **kwargs)`, computed without running it.

  Args:
    fun: the function.
    *args, **kwargs: arrays, ShapeDtypeStructs or anything with `shape` and
      `dtype`, in pytrees.

  Returns:
    A pytree of ShapeDtypeStructs like the output.

  Mirrors `jax.eval_shape`.
  """
  check_callable(fun)
  leaves, in_tree = tree_util.tree_flatten((args, kwargs))
  avals = [_abstractify(x) for x in leaves]
  flat_fun, out_tree = flatten_fun(fun, in_tree)
  closed = pe.trace_to_jaxpr(flat_fun, avals, debug_info("eval_shape", fun, args, kwargs))
  shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in closed.out_avals]
  return tree_util.tree_unflatten(out_tree.val, shapes)


# ----------------------------------------------------------------------------
# Devices


def devices(backend_name: str | None = None) -> list:
  """All devices of the backend (mirrors `jax.devices`)."""
  _check_backend(backend_name)
  return backend.devices()


def local_devices(process_index: int | None = None, backend_name: str | None = None) -> list:
  """The devices attached to this process (mirrors `jax.local_devices`)."""
  _check_backend(backend_name)
  return backend.devices()


def device_count(backend_name: str | None = None) -> int:
  """The number of devices (mirrors `jax.device_count`)."""
  return len(devices(backend_name))


def local_device_count(backend_name: str | None = None) -> int:
  return len(devices(backend_name))


def process_index() -> int:
  return 0


def process_count() -> int:
  return 1


def default_backend() -> str:
  """The name of the default platform, e.g. 'cpu' (mirrors `jax.default_backend`)."""
  return backend.platform()


def _check_backend(name):
  if name is not None and name != backend.platform():
    raise RuntimeError(f"Unknown backend {name}. Available backends are ['{backend.platform()}'].")


def device_put(x, device=None, *, src=None, donate: bool = False, may_alias=None):
  """Places each leaf of `x` on `device` (committing it there), or on the default device.

  Args:
    x: a pytree of arrays or scalars.
    device: a Device, or a sharding with a `.device`; None places leaves,
      uncommitted, on the default device.

  Returns:
    A pytree of Arrays like `x`.

  Mirrors `jax.device_put`.
  """
  target = getattr(device, "device", device) if not hasattr(device, "platform") else device
  leaves, tree = tree_util.tree_flatten(x)
  out = []
  for leaf in leaves:
    if isinstance(leaf, core.Tracer):
      out.append(leaf)
    else:
      out.append(dispatch.device_put_value(leaf, target))
  return tree_util.tree_unflatten(tree, out)


def device_get(x):
  """Copies every Array leaf of `x` to a NumPy array (mirrors `jax.device_get`)."""
  return tree_util.tree_map(lambda a: np.asarray(a) if isinstance(a, Array) else a, x)


def block_until_ready(x):
  """Waits for every Array leaf of `x` to be computed; returns `x` (mirrors `jax.block_until_ready`)."""
  for leaf in tree_util.tree_leaves(x):
    if isinstance(leaf, Array):
      leaf.block_until_ready()
  return x
