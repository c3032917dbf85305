"""Switching mesh axis types inside a function: `auto_axes`, `explicit_axes`, `use_abstract_mesh`.

Inside `auto_axes(f, out_sharding=...)` the named axes (default: all) are
`Auto`: the arguments lose those axes from their types (XLA's propagation
partitions along them), and the results are resharded to `out_sharding` on
the way out. `explicit_axes(f, in_sharding=...)` does the reverse for a mesh
of Auto axes. Both work by making a copy of the context mesh, with the new
axis types, the context mesh while `f` runs (same devices, same names).
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools

from xjax._src import core
from xjax._src import tree_util
from xjax._src.sharding.constraints import reshard
from xjax._src.sharding.mesh import AbstractMesh, AxisType, Mesh, get_concrete_mesh, use_mesh
from xjax._src.sharding.partition_spec import PartitionSpec, axes_of
from xjax._src.sharding.shardings import NamedSharding


@dataclasses.dataclass(frozen=True)
class AbstractDevice:
  """A device as a type names it: kind, cores, platform (mirrors `jax.sharding.AbstractDevice`)."""
  device_kind: str
  num_cores: int | None
  platform: str

  def __repr__(self):
    return (f"AbstractDevice(device_kind={self.device_kind}, num_cores={self.num_cores}, "
            f"platform={self.platform})")


@contextlib.contextmanager
def use_abstract_mesh(mesh: AbstractMesh):
  """Makes `mesh`'s axis types those of the context mesh inside a ``with`` block.

  xjax keeps one context mesh, a concrete one: `mesh` must have its axis names
  and sizes (only the axis types may differ).

  Raises:
    ValueError: `mesh` is not an AbstractMesh.
    NotImplementedError: no context mesh, or one of other names or sizes.

  Mirrors `jax.sharding.use_abstract_mesh`.
  """
  if not isinstance(mesh, AbstractMesh):
    raise ValueError(f"Expected mesh of type `jax.sharding.AbstractMesh`. Got {type(mesh)}")
  concrete = get_concrete_mesh()
  if concrete is None or (concrete.axis_names, concrete.axis_sizes) != (mesh.axis_names,
                                                                        mesh.axis_sizes):
    raise NotImplementedError(
        "xjax's use_abstract_mesh needs a context mesh (jax.set_mesh) of the same axis names "
        f"and sizes as {mesh}; got {concrete}")
  with use_mesh(concrete.update_axis_types(dict(zip(mesh.axis_names, mesh.axis_types)))):
    yield mesh


def _new_mesh(axes, axis_type: AxisType, name: str, shardings=None):
  """(the mesh now, the mesh with `axes` made `axis_type`, the axes), or None without a mesh."""
  current = get_concrete_mesh()
  sharding_mesh = None
  for s in tree_util.tree_leaves(shardings, is_leaf=lambda v: isinstance(v, PartitionSpec)):
    if isinstance(s, NamedSharding):
      if sharding_mesh is not None and sharding_mesh.abstract_mesh != s.mesh.abstract_mesh:
        raise ValueError(f"Shardings passed to {name} should have the same mesh. Got one mesh "
                         f"{sharding_mesh.abstract_mesh} and another {s.mesh}")
      sharding_mesh = s.mesh
  if current is None and sharding_mesh is None:
    return None
  if current is not None and sharding_mesh is not None:
    if sharding_mesh.abstract_mesh != current.abstract_mesh:
      raise ValueError(f"Context mesh {current.abstract_mesh} must match the mesh passed to "
                       f"shardings {sharding_mesh.abstract_mesh}. Recommended approach is to "
                       "use `jax.set_mesh` context manager.")
  mesh = current if current is not None else sharding_mesh
  if not isinstance(mesh, Mesh):
    raise NotImplementedError(f"{name} needs a concrete mesh in xjax (jax.set_mesh)")
  axes = mesh.axis_names if axes is None else axes if isinstance(axes, tuple) else (axes,)
  types = dict(zip(mesh.axis_names, mesh.axis_types))
  for a in axes:
    if types[a] is AxisType.Manual:
      raise NotImplementedError(
          "Going from `Manual` AxisType to `Auto` or `Explicit` AxisType is not allowed. "
          "Please file a bug at https://github.com/jax-ml/jax/issues with your use case")
  return mesh, mesh.update_axis_types({a: axis_type for a in axes}), axes


def _spec_on(x, mesh) -> PartitionSpec:
  """x's type's spec with the axes that are not Explicit on `mesh` dropped."""
  aval = core.get_aval(x)
  if aval.sharding is None:
    return PartitionSpec()
  kinds = dict(zip(mesh.axis_names, mesh.axis_types))
  entries = []
  for entry in aval.sharding.spec:
    kept = tuple(a for a in axes_of(entry) if kinds.get(a) is AxisType.Explicit)
    entries.append(None if not kept else kept[0] if len(kept) == 1 else kept)
  return PartitionSpec(*entries)


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
  """`f` run with mesh `axes` (default: all) of type Auto; its results resharded to
  `out_sharding`.

  Args:
    f: the function (or None: `auto_axes` then returns a decorator).
    axes: a mesh axis name or tuple of names.
    out_sharding: a pytree prefix of NamedShardings or PartitionSpecs (over the
      context mesh) for the results; else given as the keyword ``out_sharding``
      at each call.

  Raises:
    TypeError: no `out_sharding` either way.
    ValueError: shardings over another mesh than the context mesh.

  Mirrors `jax.sharding.auto_axes`.
  """
  if f is None:
    return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)

  @functools.wraps(f)
  def wrapper(*args, **kwargs):
    out_s = _given_or_keyword(out_sharding, kwargs, "out_sharding")
    info = _new_mesh(axes, AxisType.Auto, "auto_axes", out_s)
    if info is None:
      return f(*args, **kwargs)
    previous, new, axes_ = info
    if set(previous.auto_axes) == set(axes_):
      return f(*args, **kwargs)
    with use_mesh(new):
      args = reshard(args, tree_util.tree_map(lambda a: _spec_on(a, new), args))
      out = f(*args, **kwargs)
    return reshard(out, out_s)
  return wrapper


def _given_or_keyword(given, kwargs, name: str):
  """The decorator's `name` argument, else the call's keyword of that name (popped)."""
  if given is not None:
    return given
  if name not in kwargs:
    raise TypeError(f"Missing required keyword argument: '{name}'")
  return kwargs.pop(name)


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
  """`f` run with mesh `axes` (default: all) of type Explicit, its arguments resharded
  to `in_sharding` (so typed) first; its results come back with the axes that are
  not Explicit outside dropped from their types.

  Args:
    f: the function (or None: `explicit_axes` then returns a decorator).
    axes: a mesh axis name or tuple of names.
    in_sharding: a pytree prefix of NamedShardings or PartitionSpecs for the
      arguments; else given as the keyword ``in_sharding`` at each call.

  Raises:
    TypeError: no `in_sharding` either way.
    ValueError: no context mesh.

  Mirrors `jax.sharding.explicit_axes`.
  """
  if f is None:
    return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)

  @functools.wraps(f)
  def wrapper(*args, **kwargs):
    in_s = _given_or_keyword(in_sharding, kwargs, "in_sharding")
    info = _new_mesh(axes, AxisType.Explicit, "explicit_axes")
    if info is None:
      raise ValueError("Context mesh cannot be empty. Please use `jax.set_mesh` API to enter "
                       "into a mesh context when using `explicit_axes` API.")
    previous, new, _ = info
    with use_mesh(new):
      args = reshard(args, in_s)
      out = f(*args, **kwargs)
    return reshard(out, tree_util.tree_map(lambda o: _spec_on(o, previous), out))
  return wrapper

