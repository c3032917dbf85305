"""`vmap`: the public face of the batching interpreter (mirrors `jax.vmap`)."""
from __future__ import annotations

import collections
import inspect

import numpy as np

from xjax._src import core
from xjax._src import traceback_util
from xjax._src import tree_util
from xjax._src.api_util import check_callable, flatten_fun, shaped_abstractify, wraps
from xjax._src.interpreters import batching


class _PytreeLeaf:
  def __repr__(self):
    return "pytree leaf"


def _is_none(x) -> bool:
  return x is None


def flatten_axes(name: str, treedef, axis_tree, *, kws: bool = False) -> list:
  """One axis per leaf of `treedef`, from `axis_tree` (a prefix of it; None is a leaf).

  Raises JAX's ValueError naming `name` when `axis_tree` is not a prefix.
  With `kws`, `treedef` is of ``(args, kwargs)`` and the message is about the args.
  """
  full = tree_util.tree_unflatten(treedef, [_PytreeLeaf()] * treedef.num_leaves)
  try:
    return tree_util.broadcast_prefix(axis_tree, full, is_leaf=_is_none)
  except ValueError:
    pass
  if kws:
    full, axis_tree = full[0], axis_tree[0]
  errors = tree_util.prefix_errors(axis_tree, full, is_leaf=_is_none)
  details = "\n  ".join(e(name).args[0] for e in errors)
  raise ValueError(f"{name} specification must be a tree prefix of the corresponding "
                   f"value; \n  Mismatch details ({len(errors)} found):\n  {details}") from None


def _check_axes_spec(axes, what: str) -> None:
  for leaf in tree_util.tree_leaves(axes, is_leaf=_is_none):
    if leaf is not None and type(leaf) is not int and type(leaf) not in batching.spec_types:
      raise TypeError(f"vmap {what} must be an int, None, or (nested) container with "
                      f"those types as leaves, but got {axes}.")


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None,
         sum_match: bool = False):
  """Vectorizes `fun` over an axis of its arguments.

  Args:
    fun: the function to map; it sees one slice of each mapped argument.
    in_axes: for each positional argument, the axis to map over (an int,
      negative ints counting from the end) or None for an argument shared by
      all slices. An int or None applies to every argument; a tuple has one
      entry per positional argument, each a prefix pytree of that argument.
      Keyword arguments are always mapped over axis 0.
    out_axes: where the mapped axis goes in each output (same forms, a
      prefix of the output pytree); None only for outputs that are not mapped.
    axis_name: a name for the mapped axis, for collectives such as `lax.psum`.
    axis_size: the size of the mapped axis; required when no argument is mapped.
    spmd_axis_name: a mesh axis name (or a tuple of them) to split the mapped
      axis over: the sharding constraints and `shard_map`s inside `fun` get
      it inserted into their PartitionSpecs at the batch dimension (so
      ``with_sharding_constraint(x, P('y'))`` under ``spmd_axis_name='x'``
      constrains the batched value to ``P('x', 'y')``). It must not appear in
      those specs already.
    sum_match: with True, a mapped output whose `out_axes` entry is None is
      summed over the mapped axis instead of raising.

  Returns:
    The vectorized function. Its outputs gain the mapped axis at `out_axes`.

  Raises:
    TypeError: `in_axes`/`out_axes` of the wrong types.
    ValueError: mapped axes of different sizes, an axis out of range for its
      argument, an axes tree that is not a prefix of the arguments, a
      mapped output with ``out_axes=None`` (without `sum_match`), or (at the
      constraint or shard_map inside) a `spmd_axis_name` that is not a mesh
      axis or that the spec already names.

  Mirrors `jax.vmap`.
  """
  check_callable(fun)
  if isinstance(in_axes, list):
    in_axes = tuple(in_axes)
  if not (in_axes is None or type(in_axes) in (int, tuple)
          or type(in_axes) in batching.spec_types):
    raise TypeError("vmap in_axes must be an int, None, or a tuple of entries corresponding "
                    f"to the positional arguments passed to the function, but got {in_axes}.")
  if spmd_axis_name is not None and not isinstance(spmd_axis_name, tuple):
    spmd_axis_name = (spmd_axis_name,)
  _check_axes_spec(in_axes, "in_axes")
  _check_axes_spec(out_axes, "out_axes")

  @traceback_util.api_boundary
  @wraps(fun)
  def vmap_f(*args, **kwargs):
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
      raise ValueError("vmap in_axes must be an int, None, or a tuple of entries "
                       "corresponding to the positional arguments passed to the function, "
                       f"but got len(in_axes)={len(in_axes)}, len(args)={len(args)}")
    custom = bool(batching.vmappables)  # registered vmappable types are leaves here
    is_leaf = batching.is_vmappable if custom else None
    leaves, in_tree = tree_util.tree_flatten((args, kwargs), is_leaf=is_leaf)
    in_dims = flatten_axes("vmap in_axes", in_tree, (in_axes, 0), kws=True)
    size = _mapped_axis_size(fun, in_tree, leaves, in_dims, axis_size)
    in_dims = [d % max(np.ndim(x), 1) if type(d) is int else d for x, d in zip(leaves, in_dims)]
    flat_fun, out_tree = flatten_fun(fun, in_tree, out_is_leaf=is_leaf)

    def out_dests(n):
      return flatten_axes("vmap out_axes", out_tree.val, out_axes)

    ema = _explicit_mesh_axis(leaves, in_dims)
    spmd_names = spmd_axis_name
    if spmd_names is not None and ema is not None:
      if tuple(spmd_names) != ema:
        raise ValueError(f"Only one of spmd_axis_name or arrays sharded on `Explicit` mesh "
                         f"axis type is allowed. Got spmd_axis_name={spmd_names} and "
                         f"arrays sharded on explicit_mesh_axis={ema}")
      spmd_names = None
    axis_data = batching.AxisData(axis_name, size, spmd_names, ema)
    try:
      if custom:
        outs = batching.batch_vmappable(flat_fun, axis_data, leaves, in_dims, out_dests,
                                        sum_match=sum_match)
      else:
        outs = batching.batch_flat(flat_fun, axis_data, leaves, in_dims, out_dests,
                                   sum_match=sum_match)
    except batching.SpecMatchError as e:
      full = tree_util.tree_unflatten(out_tree.val, out_dests(out_tree.val.num_leaves))
      paths = tree_util.tree_flatten_with_path(full, is_leaf=_is_none)[0]
      path = paths[e.leaf_idx][0]
      raise ValueError(f"at vmap out_axes{tree_util.keystr(path)}, got axis spec {e.dst} "
                       f"but output was batched on axis {e.src}") from None
    return tree_util.tree_unflatten(out_tree.val, outs)

  name = getattr(fun, "__name__", type(fun).__name__)
  vmap_f.__doc__ = (f"Vectorized version of {name}. Takes similar arguments as {name} but "
                    f"with additional array axes over which {name} is mapped.")
  if fun.__doc__:
    vmap_f.__doc__ += "\n\nOriginal documentation:\n\n" + fun.__doc__
  return vmap_f


def _mapped_axis_size(fun, in_tree, leaves, dims, axis_size):
  """The common size of the mapped axes (or `axis_size`); JAX's ValueErrors otherwise."""
  if not leaves:
    if axis_size is not None:
      return axis_size
    args, kwargs = tree_util.tree_unflatten(in_tree, leaves)
    raise ValueError("vmap wrapped function must be passed at least one argument containing "
                     "an array or axis_size must be specified, got empty "
                     f"*args={args} and **kwargs={kwargs}")

  def size_of(x, axis):
    if batching.is_vmappable(x) or type(axis) is not int:
      return None  # a vmappable type's size is its handlers' business, as in JAX
    shape = np.shape(x)
    try:
      return shape[axis]
    except IndexError:
      min_rank = axis + 1 if axis >= 0 else -axis
      raise ValueError(
          f"vmap was requested to map its argument along axis {axis}, which implies that "
          f"its rank should be at least {min_rank}, but is only {len(shape)} "
          f"(its shape is {shape})") from None

  sizes = [size_of(x, d) for x, d in zip(leaves, dims) if d is not None]
  sizes = [s for s in sizes if s is not None]
  if axis_size is not None:
    sizes.append(axis_size)
  distinct = set(sizes)
  if len(distinct) == 1:
    return sizes[0]
  if not distinct:
    raise ValueError("vmap must have at least one non-None value in in_axes or axis_size "
                     "must be specified")
  raise ValueError(_inconsistent_sizes_message(fun, in_tree, leaves, dims, axis_size))


def _inconsistent_sizes_message(fun, in_tree, leaves, dims, axis_size) -> str:
  args, kwargs = tree_util.tree_unflatten(in_tree, leaves)
  try:
    params = list(inspect.signature(fun).bind(*args, **kwargs).signature.parameters)
  except (TypeError, ValueError):
    params = None

  def arg_name(path):
    i = path[0].idx
    if params is None or i >= len(params):
      return f"args{tree_util.keystr(path)}"
    return f"argument {params[i]}" + tree_util.keystr(path[1:])

  def type_of(x):
    try:
      return shaped_abstractify(x).str_short()
    except TypeError:
      return "unknown"

  described = [f"{arg_name(p)} of type {type_of(x)}"
               for p, x in tree_util.tree_flatten_with_path(args)[0]]
  described += [f"kwargs{tree_util.keystr(p)} of type {type_of(x)}"
                for p, x in tree_util.tree_flatten_with_path(kwargs)[0]]
  mapped = [(np.shape(x)[d], d, desc) for x, d, desc in zip(leaves, dims, described)
            if d is not None]
  counts = collections.Counter(size for size, _, _ in mapped).most_common()
  lines = [] if axis_size is None else [f"  * the `axis_size` argument was {axis_size}"]
  for rank, (size, count) in enumerate(counts):
    d, desc = next((d, desc) for s, d, desc in mapped if s == size)
    if count == 1:
      lines.append(f"  * one axis had size {size}: axis {d} of {desc}")
    else:
      many = "most" if rank == 0 else "some"
      lines.append(f"  * {many} axes ({count} of them) had size {size}, e.g. axis {d} of {desc}")
  return "vmap got inconsistent sizes for array axes to be mapped:\n" + ";\n".join(lines)


def _explicit_mesh_axis(leaves, in_dims):
  """The Explicit mesh axes the mapped dimension of the inputs is split over (a tuple), or
  None; as JAX's vmap, every mapped input must agree, and no unmapped input may be split
  over them.

  Raises:
    ValueError: mapped inputs split differently along the mapped dimension, or an unmapped
      input split over the vmapped mesh axes (JAX's texts).
  """
  def entry(x, d):
    sharding = getattr(_aval_or_none(x), "sharding", None)
    if sharding is None:
      return None
    spec = tuple(sharding.spec)
    return spec[d] if d < len(spec) else None

  found, seen = None, False
  for x, d in zip(leaves, in_dims):
    if d is None or d is batching.not_mapped:
      continue
    e = entry(x, d)
    if seen and e != found:
      raise ValueError("Mapped away dimension of inputs passed to vmap should be sharded the "
                       f"same. Got inconsistent axis specs: {found} vs {e}")
    found, seen = e, True
  if found is None:
    return None
  ema = found if isinstance(found, tuple) else (found,)
  for x, d in zip(leaves, in_dims):
    if d is not None and d is not batching.not_mapped:
      continue
    aval = _aval_or_none(x)
    sharding = getattr(aval, "sharding", None)
    if sharding is not None and any(
        a in ema for e in sharding.spec for a in (e if isinstance(e, tuple) else (e,))):
      raise ValueError("Unmapped values passed to vmap cannot be sharded along the mesh axis "
                       f"you are vmapping over. Got type: {aval.str_short()}, in_axes: {d} and "
                       f"vmapped mesh axis: {ema}")
  return ema


def _aval_or_none(x):
  try:
    return core.get_aval(x)
  except TypeError:
    return None
