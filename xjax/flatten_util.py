"""Flatten a pytree of arrays into one 1-D array and back (mirrors `jax.flatten_util`)."""
import numpy as _np

from xjax import dtypes as _dtypes
from xjax import lax as _lax
from xjax import numpy as _jnp
from xjax import tree_util as _tree_util


class _HashablePartial:
  """`functools.partial` that compares and hashes by code and bound arguments.

  Two unravel functions built for the same structure compare equal, so they can
  be used as static arguments of `jit` without retracing.
  """

  def __init__(self, f, *args):
    self.f, self.args = f, args

  def __eq__(self, other):
    return (type(other) is _HashablePartial and
            self.f.__code__ == other.f.__code__ and self.args == other.args)

  def __hash__(self):
    return hash((self.f.__code__, self.args))

  def __call__(self, *args):
    return self.f(*self.args, *args)


def ravel_pytree(pytree):
  """Ravels a pytree of arrays and scalars into one 1-D array.

  Args:
    pytree: a pytree whose leaves are arrays or scalars.

  Returns:
    ``(flat, unravel)``: ``flat`` is the concatenation of the raveled leaves,
    converted to the dtype obtained by promoting the leaves' (canonical) dtypes
    with JAX's promotion rules; a pytree with no leaves gives an empty
    ``float32`` array. ``unravel`` maps a 1-D array of the same length back to a
    pytree of the input's structure. When all leaves share one dtype, ``unravel``
    accepts any dtype; otherwise it converts each piece back to its leaf's dtype
    and raises ``TypeError`` if given an array whose dtype is not ``flat``'s.
    A wrong length raises ``ValueError`` (from `lax.split`).

  Mirrors `jax.flatten_util.ravel_pytree`.
  """
  leaves, treedef = _tree_util.tree_flatten(pytree)
  flat, unravel_leaves = _ravel_leaves(leaves)
  return flat, _HashablePartial(_unravel_pytree, treedef, unravel_leaves)


def _unravel_pytree(treedef, unravel_leaves, flat):
  return _tree_util.tree_unflatten(treedef, unravel_leaves(flat))


def _ravel_leaves(leaves):
  if not leaves:
    return _lax.full([0], 0, "float32"), lambda _: []
  from_dtypes = tuple(_jnp.result_type(leaf) for leaf in leaves)
  to_dtype = _dtypes.result_type(*from_dtypes)
  sizes = tuple(int(_np.size(leaf)) for leaf in leaves)
  shapes = tuple(tuple(_np.shape(leaf)) for leaf in leaves)
  if all(dt == to_dtype for dt in from_dtypes):
    # One dtype: no conversion, and the unravel function accepts any dtype.
    pieces = [_lax.reshape(leaf, (size,)) for leaf, size in zip(leaves, sizes)]
    flat = _lax.concatenate(pieces, dimension=0)
    return flat, _HashablePartial(_unravel_same_dtype, sizes, shapes)
  pieces = [_lax.reshape(_lax.convert_element_type(leaf, to_dtype), (size,))
            for leaf, size in zip(leaves, sizes)]
  flat = _lax.concatenate(pieces, dimension=0)
  return flat, _HashablePartial(_unravel_mixed_dtypes, sizes, shapes,
                                from_dtypes, to_dtype)


def _unravel_same_dtype(sizes, shapes, flat):
  chunks = _lax.split(flat, sizes)
  return [chunk.reshape(shape) for chunk, shape in zip(chunks, shapes)]


def _unravel_mixed_dtypes(sizes, shapes, from_dtypes, to_dtype, flat):
  flat_dtype = _jnp.result_type(flat)
  if flat_dtype != to_dtype:
    raise TypeError(f"unravel function given array of dtype {flat_dtype}, "
                    f"but expected dtype {to_dtype}")
  chunks = _lax.split(flat, sizes)
  # Converting a complex piece back to a real leaf keeps its real part, silently.
  return [_lax.convert_element_type(chunk.reshape(shape), dtype)
          for chunk, shape, dtype in zip(chunks, shapes, from_dtypes)]

