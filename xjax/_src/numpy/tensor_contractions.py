"""Products: dot, matmul, vdot, inner, outer, tensordot, matvec, vecmat and vecdot, over
`lax.dot_general` (einsum is in einsum.py).

As in JAX, the result dtype is the promoted dtype of the operands (weakly
typed when both are), passed to dot_general as its `preferred_element_type`.
"""
from __future__ import annotations

import numpy as np

from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax import dot as lax_dot
from xjax._src.lax import elementwise as lax
from xjax._src.lax import reductions as lax_reductions
from xjax._src.lax import structural as lax_structural
from xjax._src.numpy import ufuncs
from xjax._src.numpy import util
from xjax._src.numpy.util import canonicalize_axis, dtype_of
from xjax._src.sharding import rules
from xjax._src.sharding.constraints import reshard

_STATICS = ("precision", "preferred_element_type")


def _result_dtype(name, a, b, preferred_element_type):
  if preferred_element_type is None:
    return dtypes.result_type(a, b, return_weak_type_flag=True)
  return dtypes.check_user_dtype_supported(preferred_element_type, name), False


def _dot_general(a, b, dimension_numbers, precision, out_dtype, weak, out_sharding=None):
  # As JAX: mixed operands go to dot_general as they are (its lowering converts them).
  out = lax_dot.dot_general(a, b, dimension_numbers, precision=precision,
                            preferred_element_type=out_dtype, out_sharding=out_sharding)
  return lax.convert_element_type(out, out_dtype, weak_type=weak)


def _out_sharding(out_sharding, name):
  # Made a NamedSharding before the jit: a bare PartitionSpec means the mesh of now.
  return rules.canonicalize_out_sharding(out_sharding, name)


def _call(jitted, a, b, precision, preferred_element_type, out_sharding):
  if precision is None and preferred_element_type is None and out_sharding is None:
    return jitted(a, b)  # no static arguments to hash: the jit's fast path
  return jitted(a, b, precision=precision, preferred_element_type=preferred_element_type,
                out_sharding=_out_sharding(out_sharding, "dot_general"))


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
  return _call(_dot, a, b, precision, preferred_element_type, out_sharding)


@jit(static_argnames=(*_STATICS, "out_sharding"), inline=True)
def _dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
  """NumPy's dot product.

  Contracts the last axis of `a` with the only axis of a 1-D `b`, or with
  the second-to-last axis of `b`; a 0-d operand multiplies elementwise.

  Args:
    a, b: arrays.
    precision: passed to `lax.dot_general`.
    preferred_element_type: the accumulation and result dtype.
    out_sharding: None, or a NamedSharding or PartitionSpec (over the context
      mesh) the result is typed and laid out as (see `lax.dot_general`).

  Returns:
    The product, of the promoted dtype.

  Raises:
    TypeError: the contracted dimensions differ in size.

  >>> import xjax.numpy as jnp
  >>> jnp.dot(jnp.ones((2, 3)), jnp.arange(3.0))
  Array([3., 3.], dtype=float32)

  Mirrors `jax.numpy.dot`.
  """
  a, b = util.ensure_arraylike("dot", a, b)
  out_dtype, weak = _result_dtype("dot", a, b, preferred_element_type)
  a_ndim, b_ndim = util.ndim(a), util.ndim(b)
  if a_ndim == 0 or b_ndim == 0:
    contract = ((), ())
  elif b_ndim == 1:
    contract = ((a_ndim - 1,), (0,))
  else:
    contract = ((a_ndim - 1,), (b_ndim - 2,))
  return _dot_general(a, b, (contract, ((), ())), precision, out_dtype, weak, out_sharding)


dot.__doc__ = _dot.__doc__


def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
  return _call(_matmul, a, b, precision, preferred_element_type, out_sharding)


@jit(static_argnames=(*_STATICS, "out_sharding"), inline=True)
def _matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
  """The matrix product of `a` and `b`, with NumPy's broadcasting of leading (batch) axes.

  A 1-D operand is treated as a vector (its axis is removed from the result).

  Args:
    a: an array of shape ``(..., n, k)`` or ``(k,)``.
    b: an array of shape ``(..., k, m)`` or ``(k,)``.
    precision: passed to `lax.dot_general`.
    preferred_element_type: the accumulation and result dtype.
    out_sharding: None, or a NamedSharding or PartitionSpec (over the context
      mesh) the result is typed and laid out as.

  Returns:
    The product, of shape ``(..., n, m)`` (without the vector axes).

  Raises:
    ValueError: a 0-d operand, or batch axes that do not broadcast.
    TypeError: the contracted dimensions differ in size.

  Mirrors `jax.numpy.matmul`.
  """
  a, b = util.ensure_arraylike("matmul", a, b)
  for i, x in enumerate((a, b)):
    if util.ndim(x) < 1:
      raise ValueError(f"matmul input operand {i} must have ndim at least 1, "
                       f"but it has ndim {util.ndim(x)}")
  out_dtype, weak = _result_dtype("matmul", a, b, preferred_element_type)
  a_shape, b_shape = util.shape(a), util.shape(b)
  a_is_mat, b_is_mat = len(a_shape) > 1, len(b_shape) > 1
  a_batch = a_shape[:-2] if a_is_mat else ()
  b_batch = b_shape[:-2] if b_is_mat else ()
  nb = max(len(a_batch), len(b_batch))
  a_batch = (None,) * (nb - len(a_batch)) + tuple(a_batch)
  b_batch = (None,) * (nb - len(b_batch)) + tuple(b_batch)
  # Classify each broadcast batch axis: shared (a dot_general batch dim), owned by
  # one operand (a free dim), or size 1 in one/both operands (squeezed away).
  a_squeeze, b_squeeze, both_squeeze = [], [], []
  a_batch_dims, b_batch_dims = [], []
  idx_batch, idx_a_other, idx_b_other = [], [], []
  for i, (ba, bb) in enumerate(zip(a_batch, b_batch)):
    if ba is None:
      idx_b_other.append(i)
    elif bb is None:
      idx_a_other.append(i)
    elif ba == 1 and bb == 1:
      a_squeeze.append(len(idx_batch) + len(idx_a_other) + len(a_squeeze))
      b_squeeze.append(len(idx_batch) + len(idx_b_other) + len(b_squeeze))
      both_squeeze.append(i)
    elif ba == 1:
      idx_b_other.append(i)
      a_squeeze.append(len(idx_batch) + len(idx_a_other) + len(a_squeeze))
    elif bb == 1:
      idx_a_other.append(i)
      b_squeeze.append(len(idx_batch) + len(idx_b_other) + len(b_squeeze))
    elif ba == bb:
      a_batch_dims.append(len(idx_batch) + len(idx_a_other))
      b_batch_dims.append(len(idx_batch) + len(idx_b_other))
      idx_batch.append(i)
    else:
      raise ValueError("Incompatible types for matmul arguments: "
                       f"{util.aval_of(a).str_short()} and {util.aval_of(b).str_short()}")
  if a_is_mat:
    idx_a_other.append(nb)
  if b_is_mat:
    idx_b_other.append(nb + a_is_mat)
  perm = tuple(int(p) for p in np.argsort(np.array(idx_batch + idx_a_other + idx_b_other,
                                                   dtype=np.int64)))
  if a_squeeze:
    a = lax_structural.squeeze(a, tuple(a_squeeze))
  if b_squeeze:
    b = lax_structural.squeeze(b, tuple(b_squeeze))
  contract = ((util.ndim(a) - 1,), (util.ndim(b) - 1 - b_is_mat,))
  direct = perm == tuple(range(len(perm))) and not both_squeeze
  out = _dot_general(a, b, (contract, (tuple(a_batch_dims), tuple(b_batch_dims))), precision,
                     out_dtype, weak, out_sharding if direct else None)
  if perm != tuple(range(len(perm))):
    out = lax_structural.transpose(out, perm)
  if both_squeeze:
    out = lax_structural.expand_dims(out, tuple(both_squeeze))
  if out_sharding is not None and not direct:
    out = reshard(out, out_sharding)
  return out


matmul.__doc__ = _matmul.__doc__


@jit(static_argnames=_STATICS, inline=True)
def vdot(a, b, *, precision=None, preferred_element_type=None):
  """The dot product of the flattened arrays, conjugating `a` (mirrors `jax.numpy.vdot`)."""
  a, b = util.ensure_arraylike("vdot", a, b)
  if dtypes.issubdtype(dtype_of(a), np.complexfloating):
    a = ufuncs.conjugate(a)
  flat = lambda x: lax_structural.reshape(x, (util.aval_of(x).size,))
  return dot(flat(a), flat(b), precision=precision, preferred_element_type=preferred_element_type)


@jit(static_argnames=_STATICS, inline=True)
def inner(a, b, *, precision=None, preferred_element_type=None):
  """The inner product over the last axes of `a` and `b` (mirrors `jax.numpy.inner`)."""
  a, b = util.ensure_arraylike("inner", a, b)
  if util.ndim(a) == 0 or util.ndim(b) == 0:
    if preferred_element_type is not None:
      a = lax.convert_element_type(a, preferred_element_type)
      b = lax.convert_element_type(b, preferred_element_type)
    return ufuncs.multiply(a, b)
  return tensordot(a, b, (-1, -1), precision=precision,
                   preferred_element_type=preferred_element_type)


@jit(inline=True)
def outer(a, b, out=None):
  """The outer product of the flattened arrays: ``a.ravel()[:, None] * b.ravel()[None, :]``.

  Mirrors `jax.numpy.outer`.
  """
  util.check_no_out("outer", out)
  a, b = util.promote_dtypes(*util.ensure_arraylike("outer", a, b))
  a = lax_structural.reshape(a, (util.aval_of(a).size,))
  b = lax_structural.reshape(b, (util.aval_of(b).size,))
  return ufuncs.multiply(lax_structural.expand_dims(a, (1,)), lax_structural.expand_dims(b, (0,)))


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
  """The sum of products of `a` and `b` over the given axes.

  Args:
    a, b: arrays.
    axes: an int n (the last n axes of a with the first n of b), a pair of
      ints, or a pair of equal-length sequences of axes.
    precision: passed to `lax.dot_general`.
    preferred_element_type: the accumulation and result dtype.

  Returns:
    An array of shape (a's free axes) + (b's free axes).

  Raises:
    TypeError: malformed `axes`, or more axes than the ranks.

  Mirrors `jax.numpy.tensordot`.
  """
  a, b = util.ensure_arraylike("tensordot", a, b)
  a_ndim, b_ndim = util.ndim(a), util.ndim(b)
  out_dtype, weak = _result_dtype("tensordot", a, b, preferred_element_type)
  if type(axes) is int:
    if axes > min(a_ndim, b_ndim):
      raise TypeError(f"Number of tensordot axes (axes {axes}) exceeds input ranks "
                      f"({util.shape(a)} and {util.shape(b)})")
    contract = (tuple(range(a_ndim - axes, a_ndim)), tuple(range(axes)))
  elif isinstance(axes, (tuple, list)) and len(axes) == 2:
    ax1, ax2 = axes
    if isinstance(ax1, int) and isinstance(ax2, int):
      contract = ((canonicalize_axis(ax1, a_ndim),), (canonicalize_axis(ax2, b_ndim),))
    elif isinstance(ax1, (tuple, list)) and isinstance(ax2, (tuple, list)):
      if len(ax1) != len(ax2):
        raise TypeError(f"tensordot requires axes lists to have equal length, got {ax1} and "
                        f"{ax2}.")
      contract = (tuple(canonicalize_axis(i, a_ndim) for i in ax1),
                  tuple(canonicalize_axis(i, b_ndim) for i in ax2))
    else:
      raise TypeError("tensordot requires both axes lists to be either ints, tuples or lists, "
                      f"got {ax1} and {ax2}")
  else:
    raise TypeError("tensordot axes argument must be an int, a pair of ints, or a pair of "
                    "lists/tuples of ints.")
  return _dot_general(a, b, (contract, ((), ())), precision, out_dtype, weak)


def _core_dims_error(signature, dim, a, b):
  return ValueError(f"inconsistent size for core dimension '{dim}': {a} vs {b} on vectorized "
                    f"function with excluded=frozenset() and signature='{signature}'")


@jit(inline=True)
def matvec(x1, x2, /):
  """Batched matrix-vector products: ``x1[..., i, j] @ x2[..., j]`` with broadcast batch axes.

  Args:
    x1: an array of shape ``(..., n, m)``.
    x2: an array of shape ``(..., m)``.

  Returns:
    An array of shape ``(..., n)``: the broadcast batch shape, then n.

  Raises:
    ValueError: the contracted sizes differ, or an operand has too few axes.

  Mirrors `jax.numpy.matvec`.
  """
  x1, x2 = util.ensure_arraylike("matvec", x1, x2)
  if util.ndim(x1) < 2 or util.ndim(x2) < 1:
    raise ValueError("matvec takes x1 with at least 2 axes and x2 with at least 1, got shapes "
                     f"{util.shape(x1)} and {util.shape(x2)}")
  if util.shape(x1)[-1] != util.shape(x2)[-1]:
    raise _core_dims_error("(n,m),(m)->(n)", "m", util.shape(x2)[-1],
                           util.shape(x1)[-1])
  return matmul(x1, x2[..., None])[..., 0]


@jit(inline=True)
def vecmat(x1, x2, /):
  """Batched vector-matrix products ``conj(x1[..., i]) @ x2[..., i, j]`` with broadcast batch axes.

  Args:
    x1: an array of shape ``(..., m)``; it is conjugated.
    x2: an array of shape ``(..., m, n)``.

  Returns:
    An array of shape ``(..., n)``.

  Raises:
    ValueError: the contracted sizes differ, or an operand has too few axes.

  Mirrors `jax.numpy.vecmat`.
  """
  x1, x2 = util.ensure_arraylike("vecmat", x1, x2)
  if util.ndim(x1) < 1 or util.ndim(x2) < 2:
    raise ValueError("vecmat takes x1 with at least 1 axis and x2 with at least 2, got shapes "
                     f"{util.shape(x1)} and {util.shape(x2)}")
  if util.shape(x1)[-1] != util.shape(x2)[-2]:
    raise _core_dims_error("(m),(m,n)->(n)", "m", util.shape(x1)[-1],
                           util.shape(x2)[-2])
  if dtypes.issubdtype(dtype_of(x1), np.complexfloating):
    x1 = ufuncs.conjugate(x1)
  return matmul(x1[..., None, :], x2)[..., 0, :]


@jit(static_argnames=("axis",) + _STATICS, inline=True)
def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
  """The vector dot product ``sum(conj(x1) * x2)`` along `axis`, broadcasting the rest.

  Args:
    x1, x2: arrays whose `axis` have one size; the other axes broadcast.
    axis: the contracted axis (negative counts from the end).
    precision, preferred_element_type: as for `dot`.

  Returns:
    The broadcast shape of the operands without `axis`.

  Raises:
    ValueError: the sizes along `axis` differ.

  Mirrors `jax.numpy.vecdot`.
  """
  x1, x2 = util.ensure_arraylike("vecdot", x1, x2)
  ax1 = util.canonicalize_axis(axis, util.ndim(x1))
  ax2 = util.canonicalize_axis(axis, util.ndim(x2))
  if util.shape(x1)[ax1] != util.shape(x2)[ax2]:
    raise ValueError(f"axes must match; got shapes {util.shape(x1)} and {util.shape(x2)} "
                     f"with axis={axis}")
  if dtypes.issubdtype(dtype_of(x1), np.complexfloating):
    x1 = ufuncs.conjugate(x1)
  x1 = _last_axis_row(x1, ax1)
  x2 = _last_axis_col(x2, ax2)
  out = matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)
  return out[..., 0, 0]


def _last_axis_row(x, axis):
  """`x` with `axis` moved last and a unit axis before it: (..., 1, n)."""
  perm = [d for d in range(util.ndim(x)) if d != axis] + [axis]
  x = lax_structural.transpose(x, tuple(perm))
  return lax_structural.expand_dims(x, (util.ndim(x) - 1,))


def _last_axis_col(x, axis):
  """`x` with `axis` moved last and a unit axis after it: (..., n, 1)."""
  perm = [d for d in range(util.ndim(x)) if d != axis] + [axis]
  x = lax_structural.transpose(x, tuple(perm))
  return lax_structural.expand_dims(x, (util.ndim(x),))
