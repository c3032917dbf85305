"""ragged_dot_general: a dot_general whose lhs is split into groups along one dimension.

`group_sizes` cuts one lhs dimension (the ragged one) into consecutive groups.
Which kind of dimension it is picks the mode:

1. non-contracting: each group of rows meets its own rhs slice (along the rhs
   group dimension);
2. contracting: each group of the contracted dimension is contracted apart,
   and the groups stack on a new leading output dimension;
3. batch: as dot_general (JAX 0.10.2's CPU rule ignores the group sizes).

Lowering expands the ragged operands to dense masked ones, one copy per group,
and contracts the group dimension with one dot_general, as JAX does on CPU.
"""
from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import lowering
from xjax._src.lax import elementwise as ew
from xjax._src.lax.dot import (_dot_general_abstract_eval, _dot_general_dtype,
                               canonicalize_precision, dot_general)
from xjax._src.lax.reductions import cumsum
from xjax._src.lax.structural import broadcast_in_dim, broadcasted_iota, full_like, transpose
from xjax._src.lax.utils import standard_primitive
from xjax._src.sharding import rules


@dataclasses.dataclass(frozen=True)
class RaggedDotDimensionNumbers:
  """The dimensions of a ragged dot: dot_general's, the lhs ragged one, the rhs group one.

  Args:
    dot_dimension_numbers: ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``.
    lhs_ragged_dimensions: the lhs dimension that `group_sizes` splits (exactly one).
    rhs_group_dimensions: the rhs dimension indexed by group (one in the
      non-contracting mode, none otherwise).

  Every sequence is stored as a tuple, so the object is hashable.

  Mirrors `jax.lax.RaggedDotDimensionNumbers`.
  """
  dot_dimension_numbers: tuple
  lhs_ragged_dimensions: tuple
  rhs_group_dimensions: tuple

  def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
    setattr_ = super().__setattr__
    setattr_("dot_dimension_numbers", tuple(tuple(map(tuple, t)) for t in dot_dimension_numbers))
    setattr_("lhs_ragged_dimensions", tuple(lhs_ragged_dimensions))
    setattr_("rhs_group_dimensions", tuple(rhs_group_dimensions))


# The dimension numbers of `ragged_dot`: [m, k] x [g, k, n] -> [m, n], m ragged.
_BASIC_DIMENSION_NUMBERS = RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])


class RaggedDotMode(enum.Enum):
  RAGGED_NONCONTRACTING = 1  # [b,m,k], [g,b,k,n], [b,g] -> [b,m,n]
  RAGGED_CONTRACTING = 2     # [b,m,k], [b,k,n],   [b,g] -> [g,b,m,n]
  RAGGED_BATCH = 3           # [b,m,k], [b,k,n],   [g]   -> [b,m,n]


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
  """Group-wise matmul: rows of `lhs` in group i are multiplied by ``rhs[i]``.

  Args:
    lhs: an (m, k) array.
    rhs: a (g, k, n) array.
    group_sizes: a (g,) integer array; group i is the next ``group_sizes[i]``
      rows of lhs. Rows past the sum of the sizes give zeros.
    precision, preferred_element_type: as for `dot_general`.
    group_offset: must be None (JAX has no support for it either).
    out_sharding: None, or the result's sharding (as for `dot_general`).

  Returns:
    An (m, n) array.

  Raises:
    TypeError: shapes or dtypes that do not fit (see `ragged_dot_general`).
    NotImplementedError: `group_offset` is given.

  Mirrors `jax.lax.ragged_dot`.
  """
  return ragged_dot_general(lhs, rhs, group_sizes, _BASIC_DIMENSION_NUMBERS,
                            precision=canonicalize_precision(precision),
                            preferred_element_type=preferred_element_type,
                            group_offset=group_offset, out_sharding=out_sharding)


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
  """A dot_general with one lhs dimension split into groups by `group_sizes`.

  With g groups, the modes (by the kind of the lhs ragged dimension) are:

  1. non-contracting: ``[b..,m..,k..] x [g,b..,k..,n..] -> [b..,m..,n..]``;
     each group of the ragged dimension uses its own slice of the rhs group
     dimension; positions past the last group give zeros.
  2. contracting: ``[b..,m..,k..] x [b..,k..,n..] -> [g,b..,m..,n..]``; output
     slice i contracts only group i of the ragged dimension.
  3. batch: ``[b..,m..,k..] x [b..,k..,n..] -> [b..,m..,n..]``, as dot_general.

  Args:
    lhs, rhs: arrays.
    group_sizes: an integer array, ``[g]`` or ``[b.., x.., g]`` where x.. are
      the lhs dimensions (non-contracting, contracting or batch, as the ragged
      one) before the ragged one.
    ragged_dot_dimension_numbers: a `RaggedDotDimensionNumbers`.
    precision, preferred_element_type: as for `dot_general`.
    group_offset: must be None.
    out_sharding: None, or the result's sharding (as for `dot_general`).

  Returns:
    The dot_general-shaped result, with a leading g dimension in mode 2.

  Raises:
    TypeError: not exactly one lhs ragged dimension, dimension numbers out of
      range, a wrong rhs group dimension count or size, a group_sizes shape
      that does not fit, non-integer group_sizes, or dot_general's errors.
    NotImplementedError: `group_offset` is given.

  Mirrors `jax.lax.ragged_dot_general`.
  """
  if group_offset is not None:
    hash(group_offset)  # JAX's TypeError for an array: params must be hashable
  out_sharding = rules.canonicalize_out_sharding(out_sharding, "ragged_dot_general")
  return rules.bind_with_out_sharding(
      ragged_dot_general_p, (lhs, rhs, group_sizes),
      dict(ragged_dot_dimension_numbers=ragged_dot_dimension_numbers,
           precision=canonicalize_precision(precision),
           preferred_element_type=preferred_element_type, group_offset=group_offset,
           out_sharding=out_sharding))


def _remaining(original, *removed):
  gone = {d for ds in removed for d in ds}
  return [i for i in original if i not in gone]


def _mode_and_dim(lhs_ndim, dimension_numbers):
  ragged_dim = dimension_numbers.lhs_ragged_dimensions[0]
  (lc, _), (lb, _) = dimension_numbers.dot_dimension_numbers
  free = _remaining(range(lhs_ndim), lc, lb)
  if ragged_dim in free:
    return RaggedDotMode.RAGGED_NONCONTRACTING, ragged_dim
  if ragged_dim in lc:
    return RaggedDotMode.RAGGED_CONTRACTING, ragged_dim
  if ragged_dim in lb:
    return RaggedDotMode.RAGGED_BATCH, ragged_dim
  raise TypeError(f"lhs_ragged_dim {ragged_dim} not found in lhs_noncontracting {free}, "
                  f"lhs_contracting {lc}, or lhs_batch {lb}.")


def _prefix_dims(mode, ndim, ragged_dim, batch, contract):
  """The operand dims that index group_sizes before its group dim ([b.., x..])."""
  batch, contract = list(batch), list(contract)
  if mode is RaggedDotMode.RAGGED_NONCONTRACTING:
    free = _remaining(range(ndim), contract, batch)
    return batch + free[:free.index(ragged_dim)]
  if mode is RaggedDotMode.RAGGED_CONTRACTING:
    return batch + contract[:contract.index(ragged_dim)]
  return batch[:batch.index(ragged_dim)]


def _check_in_range(dim, ndim, what, arg):
  if not 0 <= dim < ndim:
    raise TypeError(f"ragged_dot_general requires {what} numbers to be nonnegative and less "
                    f"than the number of axes of the {arg} value, got {dim} for {arg} of "
                    f"rank {ndim}.")


def _ragged_dot_general_abstract_eval(lhs, rhs, group_sizes, *, ragged_dot_dimension_numbers,
                                      precision, preferred_element_type, group_offset,
                                      out_sharding):
  dims = ragged_dot_dimension_numbers
  if len(dims.lhs_ragged_dimensions) != 1:
    raise TypeError("ragged_dot_general expects exactly one lhs ragged dimension.")
  _check_in_range(dims.lhs_ragged_dimensions[0], lhs.ndim, "lhs ragged dimension", "lhs")
  mode, ragged_dim = _mode_and_dim(lhs.ndim, dims)
  (lc, rc), (lb, rb) = dims.dot_dimension_numbers
  if group_sizes.ndim == 0:
    raise TypeError("expected rank of group_sizes to be >=1.")
  if group_sizes.ndim != 1:
    expected = tuple(lhs.shape[i] for i in _prefix_dims(mode, lhs.ndim, ragged_dim, lb, lc))
    expected += (group_sizes.shape[-1],)
    if tuple(group_sizes.shape) != expected:
      raise TypeError(f"expected group_sizes to have shape {expected}, got "
                      f"{tuple(group_sizes.shape)}.")
  num_groups = group_sizes.shape[-1]
  groups = dims.rhs_group_dimensions
  if mode is RaggedDotMode.RAGGED_NONCONTRACTING:
    if len(groups) != 1:
      raise TypeError("ragged_dot_general requires exactly one rhs group dimension when lhs "
                      "ragged dimension is noncontracting.")
    _check_in_range(groups[0], rhs.ndim, "rhs group dimension", "rhs")
    if groups[0] in rb or groups[0] in rc:
      raise TypeError("ragged_dot_general requires rhs group dimension numbers to be distinct "
                      "from contracting and batch dimensions.")
    if rhs.shape[groups[0]] != num_groups:
      raise TypeError(f"expected rhs group dimension size to be {num_groups}, got "
                      f"{rhs.shape[groups[0]]}.")
  elif groups:
    raise TypeError("ragged_dot_general requires zero group dimensions in the rhs when lhs "
                    "ragged dimension is contracting or batch.")
  # dot_general's checks; the rhs group dimension is not among the result's dims.
  # (Its dtype rule is applied below, after the group_sizes check, as in JAX.)
  _dot_general_abstract_eval(lhs.update(dtype=rhs.dtype), rhs,
                             dimension_numbers=((lc, rc), (lb, rb)), precision=None,
                             preferred_element_type=None, out_sharding=None)
  lhs_free = [lhs.shape[i] for i in _remaining(range(lhs.ndim), lc, lb)]
  rhs_free = [rhs.shape[i] for i in _remaining(range(rhs.ndim), rc, rb, groups)]
  shape = (*(lhs.shape[i] for i in lb), *lhs_free, *rhs_free)
  if mode is RaggedDotMode.RAGGED_CONTRACTING:
    shape = (num_groups, *shape)
  if not dtypes.issubdtype(group_sizes.dtype, np.integer):
    raise TypeError("ragged_dot_general requires that group_sizes.dtype is subtype of "
                    "np.integer.")
  preferred = (None if preferred_element_type is None
               else dtypes.canonicalize_dtype(preferred_element_type))
  try:
    dtype = _dot_general_dtype(lhs.dtype, rhs.dtype, preferred)
  except TypeError as err:  # dot_general's message, with JAX's names and the dtype as given
    message = str(err).replace("lax.dot_general", "lax.ragged_dot_general").replace(
        f"preferred_element_type of {preferred} ", f"preferred_element_type of "
        f"{preferred_element_type} ")
    raise TypeError(message) from None
  weak = lhs.weak_type and rhs.weak_type and group_sizes.weak_type
  return rules.typed(core.ShapedArray(shape, dtype, weak), out_sharding)


def _ragged_to_dense(x, group_sizes, dim, prefix):
  """``x`` copied once per group on a new leading axis, zero outside that group.

  Group i covers positions ``[ends[i] - sizes[i], ends[i])`` of `dim`, where
  ``ends`` is the running sum of `group_sizes` (shape ``[*x.shape[prefix], g]``).
  """
  shape = (group_sizes.shape[-1], *x.shape)
  ends = cumsum(group_sizes, axis=group_sizes.ndim - 1)
  starts = ew.sub(ends, group_sizes)
  # Each group_sizes axis goes to its dim of the result; broadcast_in_dim needs them in order.
  targets = [0] if group_sizes.ndim == 1 else [*(1 + d for d in prefix), 0]
  order = tuple(int(i) for i in np.argsort(targets))
  spread = lambda v: broadcast_in_dim(transpose(v, order), shape, tuple(sorted(targets)))
  iota = broadcasted_iota(group_sizes.dtype, shape, dim + 1)
  inside = ew.bitwise_and(ew.le(spread(starts), iota), ew.lt(iota, spread(ends)))
  dense = broadcast_in_dim(x, shape, tuple(range(1, len(shape))))
  return ew.select_n(inside, full_like(dense, 0), dense)


def _ragged_dot_general_dense(lhs, rhs, group_sizes, *, ragged_dot_dimension_numbers, precision,
                              preferred_element_type, group_offset, out_sharding):
  """The ragged dot as dense masked operands and one dot_general (JAX's CPU rule)."""
  if group_offset is not None:
    raise NotImplementedError("Unimplemented group_offset support.")
  dims = ragged_dot_dimension_numbers
  mode, ragged_dim = _mode_and_dim(lhs.ndim, dims)
  (lc, rc), (lb, rb) = dims.dot_dimension_numbers
  up = lambda ds: [d + 1 for d in ds]
  dot = lambda x, y, dn: dot_general(x, y, dn, precision=precision,
                                     preferred_element_type=preferred_element_type)
  lhs_prefix = _prefix_dims(mode, lhs.ndim, ragged_dim, lb, lc)
  if mode is RaggedDotMode.RAGGED_NONCONTRACTING:
    dense = _ragged_to_dense(lhs, group_sizes, ragged_dim, lhs_prefix)
    return dot(dense, rhs, ((up(lc) + [0], [*rc, dims.rhs_group_dimensions[0]]), (up(lb), rb)))
  if mode is RaggedDotMode.RAGGED_CONTRACTING:
    rhs_ragged = rc[lc.index(ragged_dim)]
    rhs_prefix = _prefix_dims(mode, rhs.ndim, rhs_ragged, rb, rc)
    return dot(_ragged_to_dense(lhs, group_sizes, ragged_dim, lhs_prefix),
               _ragged_to_dense(rhs, group_sizes, rhs_ragged, rhs_prefix),
               ((up(lc), up(rc)), ([0, *up(lb)], [0, *up(rb)])))
  return dot(lhs, rhs, ((lc, rc), (lb, rb)))


def _ragged_dot_general_lowering(ctx, lhs, rhs, group_sizes, **params):
  if params["group_offset"] is not None:
    raise NotImplementedError("Unimplemented group_offset support.")
  return lowering.lower_fun(_ragged_dot_general_dense, multiple_results=False)(
      ctx, lhs, rhs, group_sizes, **params)


ragged_dot_general_p = standard_primitive("ragged_dot_general", _ragged_dot_general_abstract_eval,
                                          _ragged_dot_general_lowering)


def _ragged_dot_general_jvp(primals, tangents, **params):
  """Bilinear in (lhs, rhs), written out as JAX does: a zero array for a zero tangent."""
  if params["group_offset"] is not None:
    raise NotImplementedError("Unimplemented group_offset support.")
  x, y, group_sizes = primals
  x_dot, y_dot, _ = tangents
  out = ragged_dot_general_p.bind(x, y, group_sizes, **params)
  dx_out = (full_like(out, 0) if type(x_dot) is ad.Zero
            else ragged_dot_general_p.bind(x_dot, y, group_sizes, **params))
  dy_out = (full_like(out, 0) if type(y_dot) is ad.Zero
            else ragged_dot_general_p.bind(x, y_dot, group_sizes, **params))
  return out, ew.add(dx_out, dy_out)


def _ragged_dot_general_transpose(ct, x, y, group_sizes, *, ragged_dot_dimension_numbers,
                                  precision, preferred_element_type, group_offset, out_sharding):
  """Cotangents in the non-contracting mode (the only one JAX differentiates).

  The lhs cotangent is again a non-contracting ragged dot (ct with rhs); the
  rhs cotangent is a contracting one (lhs with ct), its group dimension first.
  """
  if group_offset is not None:
    raise NotImplementedError("Unimplemented group_offset support.")
  dims = ragged_dot_dimension_numbers
  (x_contract, y_contract), (x_batch, y_batch) = dims.dot_dimension_numbers
  x_ndim = x.aval.ndim if ad.is_undefined_primal(x) else np.ndim(x)
  y_ndim = y.aval.ndim if ad.is_undefined_primal(y) else np.ndim(y)
  mode, ragged_dim = _mode_and_dim(x_ndim, dims)
  if mode is not RaggedDotMode.RAGGED_NONCONTRACTING:
    which = "grad_x_dims" if ad.is_undefined_primal(x) else "grad_y_dims"
    raise NotImplementedError(f"Unimplemented {which} for ragged dot general in mode "
                              f"{mode.name}.")
  y_group = dims.rhs_group_dimensions
  x_kept = _remaining(range(x_ndim), x_contract, x_batch)
  y_kept = _remaining(range(y_ndim), y_contract, y_batch, y_group)
  n_batch, n_x = len(x_batch), len(x_kept)
  ct_batch = tuple(range(n_batch))
  ct_x = tuple(range(n_batch, n_batch + n_x))
  ct_y = tuple(range(n_batch + n_x, n_batch + n_x + len(y_kept)))

  def grad(lhs, rhs, new_dims, produced, aval):
    out = ragged_dot_general(lhs, rhs, group_sizes, new_dims, precision=precision,
                             preferred_element_type=preferred_element_type)
    out = transpose(out, tuple(int(i) for i in np.argsort(produced)))
    if core.get_aval(out).dtype != aval.dtype:
      out = ew.convert_element_type(out, aval.dtype, weak_type=aval.weak_type)
    return out

  x_bar = y_bar = None
  if ad.is_undefined_primal(x):
    new_dims = RaggedDotDimensionNumbers(((ct_y, y_kept), (ct_batch, y_batch)),
                                         [n_batch + x_kept.index(ragged_dim)], y_group)
    x_contract_by_y = list(np.take(x_contract, np.argsort(y_contract)))
    x_bar = grad(ct, y, new_dims, [*x_batch, *x_kept, *x_contract_by_y], x.aval)
  if ad.is_undefined_primal(y):
    new_dims = RaggedDotDimensionNumbers(((x_kept, ct_x), (x_batch, ct_batch)),
                                         [ragged_dim], [])
    y_contract_by_x = list(np.take(y_contract, np.argsort(x_contract)))
    y_bar = grad(x, ct, new_dims, [*y_group, *y_batch, *y_contract_by_x, *y_kept], y.aval)
  return [x_bar, y_bar, None]


def _bump(dims, b):
  # np.int64 entries, as JAX's rule makes them: they show in printed jaxprs.
  return tuple(np.int64(d) + np.int64(d >= b) for d in dims)


def _ragged_dot_general_batch(axis_data, args, dims, *, ragged_dot_dimension_numbers,
                              precision, preferred_element_type, group_offset, out_sharding):
  """Only all three operands mapped along axis 0: it becomes one more batch dimension."""
  if any(d != 0 for d in dims):
    raise NotImplementedError("ragged_dot vmap over any dim but 0 - NYI")
  lhs, rhs, group_sizes = args
  rd = ragged_dot_dimension_numbers
  (lc, rc), (lb, rb) = rd.dot_dimension_numbers
  new_dims = RaggedDotDimensionNumbers(
      ((_bump(lc, 0), _bump(rc, 0)), ((0, *_bump(lb, 0)), (0, *_bump(rb, 0)))),
      _bump(rd.lhs_ragged_dimensions, 0), _bump(rd.rhs_group_dimensions, 0))
  out = ragged_dot_general(lhs, rhs, group_sizes, new_dims, precision=precision,
                           preferred_element_type=preferred_element_type)
  mode, _ = _mode_and_dim(np.ndim(lhs) - 1, rd)
  return out, 1 if mode is RaggedDotMode.RAGGED_CONTRACTING else 0


ragged_dot_general_p.def_jvp(_ragged_dot_general_jvp)
ragged_dot_general_p.def_transpose(_ragged_dot_general_transpose)
ragged_dot_general_p.def_batch(_ragged_dot_general_batch)
