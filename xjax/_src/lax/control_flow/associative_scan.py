"""`associative_scan`: a parallel prefix scan built from slices and one combine per level."""
from __future__ import annotations

from xjax._src import core
from xjax._src import tree_util
from xjax._src import traceback_util
from xjax._src.lax.slicing import slice_in_dim
from xjax._src.lax.structural import concatenate, expand_dims, reshape, rev


@traceback_util.api_boundary
def associative_scan(fn, elems, reverse: bool = False, axis: int = 0):
  """All prefix combinations ``fn(...fn(fn(e0, e1), e2)..., ek)`` along `axis`, in O(log n) depth.

  Args:
    fn: an associative function of two pytrees of arrays (slices of `elems`
      of any length along `axis`), applied elementwise along `axis`.
    elems: a pytree of arrays sharing the length of `axis`.
    reverse: scan from the end.
    axis: the axis to scan along.

  Returns:
    A pytree like `elems` holding the inclusive prefix combinations.

  Raises:
    TypeError: `fn` is not callable.
    ValueError: `axis` is out of bounds; the leaves' lengths along `axis` differ.

  Mirrors `jax.lax.associative_scan`.
  """
  if not callable(fn):
    raise TypeError("lax.associative_scan: fn argument should be callable.")
  leaves, tree = tree_util.tree_flatten(elems)
  if not leaves:
    return elems
  ndim = core.get_aval(leaves[0]).ndim
  if not -ndim <= axis < ndim:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
  axis = axis % ndim
  lengths = [core.get_aval(x).shape[axis] for x in leaves]
  if len(set(lengths)) != 1:
    raise ValueError(f"Array inputs to associative_scan must have the same first dimension. "
                     f"(saw: {[core.get_aval(x).shape for x in leaves]})")
  if reverse:
    leaves = [rev(x, (axis,)) for x in leaves]

  def combine(a, b):
    out = fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
    out_leaves, out_tree = tree_util.tree_flatten(out)
    if out_tree != tree:
      raise ValueError(f"The output of fn(a, b) must have the same tree structure as elems; "
                       f"got {out_tree} and {tree}.")
    return out_leaves

  def sl(x, start, stop=None, stride=1):
    n = core.get_aval(x).shape[axis]
    return slice_in_dim(x, start, n if stop is None else stop, stride, axis)

  def scan(elems):
    n = core.get_aval(elems[0]).shape[axis]
    if n < 2:
      return elems
    # Combine adjacent pairs, scan the half-length result, then fill in the even positions.
    reduced = combine([sl(x, 0, n - 1, 2) for x in elems], [sl(x, 1, None, 2) for x in elems])
    odd = scan(reduced)
    if n % 2 == 0:
      even = combine([sl(o, 0, core.get_aval(o).shape[axis] - 1) for o in odd],
                     [sl(x, 2, None, 2) for x in elems])
    else:
      even = combine(odd, [sl(x, 2, None, 2) for x in elems])
    even = [concatenate([sl(x, 0, 1), e], axis) for x, e in zip(elems, even)]
    return [_interleave(e, o, axis) for e, o in zip(even, odd)]

  out = scan(leaves)
  if reverse:
    out = [rev(x, (axis,)) for x in out]
  return tree_util.tree_unflatten(tree, out)


def _interleave(a, b, axis):
  """a[0], b[0], a[1], b[1], ... along `axis` (len(a) is len(b) or len(b) + 1)."""
  na, nb = core.get_aval(a).shape[axis], core.get_aval(b).shape[axis]
  if na > nb:  # pad b with any one slice, dropped below
    b = concatenate([b, slice_in_dim(a, 0, 1, 1, axis)], axis)
  pair = concatenate([expand_dims(a, (axis + 1,)), expand_dims(b, (axis + 1,))], axis + 1)
  shape = core.get_aval(pair).shape
  merged = reshape(pair, (*shape[:axis], shape[axis] * 2, *shape[axis + 2:]))
  return slice_in_dim(merged, 0, na + nb, 1, axis)
