"""Collectives over named axes: psum, pmean, pmax, pmin, all_gather, axis_index, ppermute.

A named axis is bound by ``vmap(..., axis_name=...)`` (or `make_jaxpr`'s
``axis_env``). Under vmap a collective over its own axis name acts across
the batch: `psum` of a value batched on axis `d` becomes `psum` over the
*positional* axis `d` (a reduction), `axis_index` becomes an `iota`, and so
on, exactly as JAX's batching rules rewrite them. A collective over some
other (outer) name passes through to the outer vmap. A name no vmap binds
raises JAX's NameError.

The reduction primitives carry ``axes``: named axes (hashable names) and
positional axes (ints, only after batching). With positional axes only they
are plain reductions, which is how they run and lower.

`axis_index`, `all_gather` and `ppermute` have no lowering (the registry
test lists the gap): only vmap binds names (there is no pmap), its batching
rules rewrite them into positional operations, and their abstract evaluation
rejects an unbound name. One that reaches the compiler anyway gets the
standard missing-rule error.
"""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src import tree_util
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import lowering
from xjax._src.lax import elementwise as ew
from xjax._src.lax import reductions
from xjax._src.lax import slicing
from xjax._src.lax import structural


def _unbound(name, prim_name: str) -> NameError:
  return NameError(f"Found an unbound axis name: {name}. To fix this, please call "
                   f"{prim_name} under `jax.shard_map`.")


def _axis_names(axis_name) -> tuple:
  return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _check_bound(names, prim_name: str) -> None:
  for name in names:
    if not isinstance(name, int) and name not in core.trace_ctx.axis_env:
      raise _unbound(name, prim_name)


def _group_size(names) -> int:
  return int(np.prod([core.axis_size(n) for n in names], dtype=np.int64))


# ----------------------------------------------------------------------------
# psum, pmax, pmin: reductions across named axes


def _reduction_primitive(name: str, reduce_positional, combine_unmapped):
  """A collective reduction: `reduce_positional(x, axes)` for positional axes;
  `combine_unmapped(x, size)` is the result over an axis the value does not vary on."""
  prim = core.Primitive(name, multiple_results=True)

  def abstract_eval(*avals, axes, axis_index_groups):
    _check_bound([a for a in axes if not isinstance(a, int)], name)
    positional = [a for a in axes if isinstance(a, int)]
    return [a.update(shape=tuple(d for i, d in enumerate(a.shape) if i not in positional),
                     weak_type=a.weak_type)
            for a in avals]

  def impl(*args, axes, axis_index_groups):
    # Only vmap binds names: a collective that still has one here is unbound.
    named = [a for a in axes if not isinstance(a, int)]
    if named:
      raise NameError(f"unbound axis name: {named[0]}")
    return [reduce_positional(x, tuple(axes)) for x in args]

  def batch(axis_data, args, dims, *, axes, axis_index_groups):
    outs, out_dims = [], []
    for x, d in zip(args, dims):
      mine = axis_data.name is not None and axis_data.name in axes
      rest = tuple(a for a in axes if a != axis_data.name) if mine else axes
      positional = tuple(a if d is None or a < d else a + 1 for a in rest if isinstance(a, int))
      named = tuple(a for a in rest if not isinstance(a, int))
      if mine and d is None:
        x = combine_unmapped(x, axis_data.size)
      elif mine:
        positional = positional + (d,)
      new_axes = named + positional
      out = prim.bind(x, axes=new_axes, axis_index_groups=None)[0] if new_axes else x
      if d is None or mine:
        out_dims.append(None)
      else:
        out_dims.append(d - sum(1 for a in positional if a < d))
      outs.append(out)
    return outs, out_dims

  prim.def_abstract_eval(abstract_eval)
  prim.def_impl(impl)
  prim.def_lowering(lowering.lower_fun(impl, multiple_results=True))
  prim.def_batch(batch)
  prim.batch_always = True
  return prim


def _times_size(x, size):
  return ew.mul(ew.convert_element_type(np.asarray(size), core.get_aval(x).dtype), x)


def _psum_jvp(primals, tangents, *, axes, axis_index_groups):
  outs = psum_p.bind(*primals, axes=axes, axis_index_groups=axis_index_groups)
  nonzero = [t for t in tangents if type(t) is not ad.Zero]
  t_outs = iter(psum_p.bind(*nonzero, axes=axes, axis_index_groups=axis_index_groups)
                if nonzero else [])
  return outs, [next(t_outs) if type(t) is not ad.Zero else ad.Zero(t.aval) for t in tangents]


def _psum_transpose(cts, *args, axes, axis_index_groups):
  # As in JAX 0.10.2: the cotangent of a psum over named axes is the psum of
  # the cotangents; positional axes (after batching) broadcast back.
  named = tuple(a for a in axes if not isinstance(a, int))
  positional = [a for a in axes if isinstance(a, int)]
  out = []
  for ct, x in zip(cts, args):
    if type(ct) is ad.Zero:
      out.append(ad.Zero(x.aval))
      continue
    if named:
      ct = psum_p.bind(ct, axes=named, axis_index_groups=None)[0]
    if positional:
      kept = tuple(i for i in range(len(x.aval.shape)) if i not in positional)
      ct = structural.broadcast_in_dim(ct, x.aval.shape, kept)
    out.append(ct)
  return out


psum_p = _reduction_primitive("psum", reductions.reduce_sum, _times_size)
psum_p.def_jvp(_psum_jvp)
psum_p.def_transpose(_psum_transpose)
pmax_p = _reduction_primitive("pmax", reductions.reduce_max, lambda x, size: x)
pmin_p = _reduction_primitive("pmin", reductions.reduce_min, lambda x, size: x)


def _allreduce(prim, x, axis_name, axis_index_groups):
  if axis_index_groups is not None:
    raise NotImplementedError("axis_index_groups is not supported (no pmap in xjax yet)")
  names = _axis_names(axis_name)
  leaves, treedef = tree_util.tree_flatten(x)
  if core.current_trace() is core.eval_trace:  # JAX's eager message is the short one
    for name in names:
      core.axis_size(name)
  # Under vmap no abstract eval may run before a batch rule passes the collective
  # on to an eager parent, so the names are checked here, with JAX's traced message.
  _check_bound(names, prim.name)
  outs = prim.bind(*leaves, axes=names, axis_index_groups=None)
  return tree_util.tree_unflatten(treedef, outs)


def psum(x, axis_name, *, axis_index_groups=None):
  """The sum of `x` (a pytree of arrays) over the named axis (or tuple of axes) `axis_name`.

  Every member of the mapped axis receives the same sum. Python scalars are
  summed too (``psum(1, 'i')`` is the axis size). Raises NameError when no
  enclosing `vmap` binds `axis_name`. Mirrors `jax.lax.psum`.
  """
  return _allreduce(psum_p, x, axis_name, axis_index_groups)


def pmax(x, axis_name, *, axis_index_groups=None):
  """The maximum of `x` over the named axis `axis_name` (mirrors `jax.lax.pmax`)."""
  return _allreduce(pmax_p, x, axis_name, axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
  """The minimum of `x` over the named axis `axis_name` (mirrors `jax.lax.pmin`)."""
  return _allreduce(pmin_p, x, axis_name, axis_index_groups)


def pmean(x, axis_name, *, axis_index_groups=None):
  """The mean of `x` over the named axis `axis_name`: `psum` divided by the axis size.

  Mirrors `jax.lax.pmean`.
  """
  names = _axis_names(axis_name)
  total = psum(x, axis_name, axis_index_groups=axis_index_groups)
  size = _group_size(names)
  return tree_util.tree_map(lambda s: s / size, total)  # true division, as JAX: ints -> float


# ----------------------------------------------------------------------------
# axis_index


axis_index_p = core.Primitive("axis_index")
axis_index_p.batch_always = True


@axis_index_p.def_abstract_eval
def _axis_index_abstract_eval(*, axis_name):
  _check_bound([axis_name], "axis_index")
  return core.ShapedArray((), np.dtype(np.int32))


@axis_index_p.def_impl
def _axis_index_impl(*, axis_name):
  raise NameError(f"unbound axis name: {axis_name}")


@axis_index_p.def_batch
def _axis_index_batch(axis_data, args, dims, *, axis_name):
  if axis_name != axis_data.name:
    return axis_index_p.bind(axis_name=axis_name), None
  return structural.iota(np.int32, axis_data.size), 0


def axis_index(axis_name):
  """The position (int32 scalar) of this member along the named axis `axis_name`.

  Raises NameError when no enclosing `vmap` binds it. Mirrors `jax.lax.axis_index`.
  """
  names = _axis_names(axis_name)
  if len(names) != 1:
    raise NotImplementedError("axis_index over several axis names is not supported")
  _check_bound(names, "axis_index")
  return axis_index_p.bind(axis_name=names[0])


# ----------------------------------------------------------------------------
# all_gather


all_gather_p = core.Primitive("all_gather")
all_gather_p.batch_always = True


@all_gather_p.def_abstract_eval
def _all_gather_abstract_eval(x, *, all_gather_dimension, axis_name, axis_index_groups,
                              axis_size, tiled):
  _check_bound(axis_name, "all_gather")
  shape = list(x.shape)
  if tiled:
    shape[all_gather_dimension] *= axis_size
  else:
    shape.insert(all_gather_dimension, axis_size)
  return x.update(shape=tuple(shape))


@all_gather_p.def_impl
def _all_gather_impl(x, *, axis_name, **_):
  raise NameError(f"unbound axis name: {axis_name[0]}")


def _gathered(x, axis: int, tiled: bool):
  """`x` whose leading axis holds the members, laid out as all_gather's result at `axis`."""
  x = batching.moveaxis(x, 0, axis)
  if tiled:
    shape = list(np.shape(x))
    shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
    x = structural.reshape(x, tuple(shape))
  return x


@all_gather_p.def_batch
def _all_gather_batch(axis_data, args, dims, *, all_gather_dimension, axis_name,
                      axis_index_groups, axis_size, tiled):
  (x,), (d,) = args, dims
  if axis_name != (axis_data.name,):
    x = batching.bdim_at_front(x, d, axis_data.size) if d is not None else x
    out = all_gather_p.bind(x, all_gather_dimension=all_gather_dimension + (d is not None),
                            axis_name=axis_name, axis_index_groups=axis_index_groups,
                            axis_size=axis_size, tiled=tiled)
    return out, (None if d is None else 0)
  x = batching.bdim_at_front(x, d, axis_data.size)
  return _gathered(x, all_gather_dimension, tiled), None


def _all_gather_transpose(ct, x, *, all_gather_dimension, axis_name, axis_index_groups,
                          axis_size, tiled):
  # Each member's slice of the summed cotangents.
  total = psum_p.bind(ct, axes=axis_name, axis_index_groups=None)[0]
  index = axis_index_p.bind(axis_name=axis_name[0]) if len(axis_name) == 1 else None
  if index is None:
    raise NotImplementedError("the transpose of all_gather over several axis names")
  chunk = x.aval.shape[all_gather_dimension] if tiled else 1
  piece = slicing.dynamic_slice_in_dim(total, index * chunk, chunk, all_gather_dimension)
  if not tiled:
    piece = structural.squeeze(piece, (all_gather_dimension,))
  return [piece]


ad.deflinear(all_gather_p, _all_gather_transpose)


def all_gather(x, axis_name, *, axis_index_groups=None, axis: int = 0, tiled: bool = False):
  """Every member's `x` (a pytree), stacked along a new axis `axis` (concatenated if `tiled`).

  Every member of the named axis receives the whole stack. Raises NameError
  when no enclosing `vmap` binds `axis_name`. Mirrors `jax.lax.all_gather`.
  """
  if axis_index_groups is not None:
    raise NotImplementedError("axis_index_groups is not supported (no pmap in xjax yet)")
  names = _axis_names(axis_name)
  size = _group_size(names)  # JAX's short NameError for an unbound name

  def gather_leaf(leaf):
    ndim = np.ndim(leaf)
    bound = ndim if tiled else ndim + 1
    if not -bound <= axis < bound:
      raise ValueError(f"axis {axis} is out of bounds for array of dimension {bound}")
    return all_gather_p.bind(leaf, all_gather_dimension=axis % bound, axis_name=names,
                             axis_index_groups=None, axis_size=size, tiled=tiled)

  return tree_util.tree_map(gather_leaf, x)


# ----------------------------------------------------------------------------
# ppermute


ppermute_p = core.Primitive("ppermute")
ppermute_p.batch_always = True


@ppermute_p.def_abstract_eval
def _ppermute_abstract_eval(x, *, axis_name, perm):
  _check_bound(axis_name, "ppermute")
  return x


@ppermute_p.def_impl
def _ppermute_impl(x, *, axis_name, perm):
  raise NameError(f"unbound axis name: {axis_name[0]}")


@ppermute_p.def_batch
def _ppermute_batch(axis_data, args, dims, *, axis_name, perm):
  (x,), (d,) = args, dims
  if axis_name != (axis_data.name,):
    return ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
  x = batching.bdim_at_front(x, d, axis_data.size)
  source = dict((dst, src) for src, dst in perm)
  zero = structural.full((1, *np.shape(x)[1:]), 0, core.get_aval(x).dtype)
  pieces = [slicing.slice_in_dim(x, source[i], source[i] + 1) if i in source else zero
            for i in range(axis_data.size)]
  return structural.concatenate(pieces, 0), 0


def _ppermute_transpose(ct, x, *, axis_name, perm):
  return [ppermute_p.bind(ct, axis_name=axis_name, perm=tuple((t, s) for s, t in perm))]


ad.deflinear(ppermute_p, _ppermute_transpose)


def ppermute(x, axis_name, perm):
  """Sends each member's `x` (a pytree) to another: ``(source, destination)`` pairs in `perm`.

  A member that no pair sends to receives zeros. Raises ValueError for a
  `perm` that is not a partial permutation, NameError for an unbound name.
  Mirrors `jax.lax.ppermute`.
  """
  names = _axis_names(axis_name)
  if not isinstance(perm, (list, tuple)):
    raise TypeError("`perm` passed to `jax.lax.ppermute` must be a list or a tuple. Got "
                    f"perm of type {type(perm)}")
  _check_bound(names, "ppermute")
  perm = tuple((int(s), int(t)) for s, t in perm)
  size = _group_size(names)
  srcs, dsts = [s for s, _ in perm], [t for _, t in perm]
  if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
    raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
  for s, t in perm:
    if not (0 <= s < size and 0 <= t < size):
      raise ValueError(f"ppermute permutation elements must be in the range [0, {size}), "
                       f"got {perm}.")
  return tree_util.tree_map(lambda leaf: ppermute_p.bind(leaf, axis_name=names, perm=perm), x)


batching.register_axis_ops(sum_batch=lambda x: reductions.reduce_sum(x, (0,)))


def axis_size(axis_name) -> int:
  """The size of the named mapped axis (the product, for a tuple of names).

  Args:
    axis_name: a name bound by an enclosing `vmap(axis_name=...)`, or a tuple.

  Returns:
    A Python int.

  Raises:
    NameError: an unbound name ("unbound axis name: i").

  Mirrors `jax.lax.axis_size`.
  """
  size = 1
  for name in _axis_names(axis_name):
    size *= core.axis_size(name)
  return size
