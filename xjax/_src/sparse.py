"""Sparse arrays in batched-COO form (mirrors `jax.experimental.sparse.BCOO`).

A `BCOO` holds ``data`` (``[nse]``) and ``indices`` (``[nse, n_sparse]``): element
``indices[k]`` of the dense array is ``data[k]``, every other element is zero, and
duplicate indices add up. It is a pytree whose leaves are ``data`` and ``indices``, so it
passes through `jit`, `grad` and the other transformations like any container.

xjax covers the unbatched layout, ``n_batch == 0`` and ``n_dense == 0`` (JAX's default
and what `BCOO.from_scipy_sparse` makes): construction, `fromdense`/`todense`,
`from_scipy_sparse`, `transpose`, `sum`, negation, products with scalars and dense arrays
(``*``) and matrix products with dense arrays (``@``). Batched or dense-dimension layouts,
and operations between two sparse arrays, raise NotImplementedError naming what is
missing. Every operation is composed of `jax.numpy` and `lax` operations on the two
buffers (no primitives of its own), so derivatives and batching follow from theirs.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from xjax import numpy as jnp
from xjax._src import core
from xjax._src import tree_util
from xjax._src.numpy.util import concrete_int


def _unsupported(what: str) -> NotImplementedError:
  return NotImplementedError(
      f"xjax's BCOO supports only n_batch=0 and n_dense=0 and sparse-dense operations: "
      f"{what} is not implemented")


def _validate(data, indices, shape: tuple[int, ...]) -> None:
  """Raises TypeError/ValueError when `data`/`indices` do not describe a BCOO of `shape`."""
  if not jnp.issubdtype(indices.dtype, jnp.integer):
    raise TypeError(f"BCOO: indices must be an integer array, got dtype {indices.dtype}")
  if indices.ndim != 2:
    if indices.ndim > 2:
      raise _unsupported(f"a batched layout (indices of shape {indices.shape})")
    raise ValueError(f"BCOO: indices must have shape (nse, n_sparse), got {indices.shape}")
  nse, n_sparse = indices.shape
  if data.ndim != 1:
    if data.ndim > 1 and data.shape[0] == nse:
      raise _unsupported(f"dense dimensions (data of shape {data.shape})")
    raise ValueError(f"BCOO: data must have shape (nse,) = ({nse},), got {data.shape}")
  if data.shape[0] != nse:
    raise ValueError(f"BCOO: data has {data.shape[0]} entries but indices has {nse} (nse)")
  if n_sparse != len(shape):
    raise ValueError(f"BCOO: indices give {n_sparse} coordinates per entry, but shape "
                     f"{shape} has {len(shape)} dimensions")


@tree_util.register_pytree_node_class
class BCOO:
  """A sparse array in batched-COO format (mirrors `jax.experimental.sparse.BCOO`).

  Args:
    args: ``(data, indices)``: ``data`` of shape ``[nse]`` holds the stored values and
      ``indices`` (integer) of shape ``[nse, ndim]`` their coordinates; duplicate
      coordinates add up.
    shape: the shape of the dense array it stands for.
    indices_sorted: whether ``indices`` are in lexicographic order (a promise, not
      checked).
    unique_indices: whether ``indices`` has no duplicates (a promise, not checked).

  Raises:
    TypeError: ``indices`` is not an integer array.
    ValueError: the shapes of ``data``, ``indices`` and ``shape`` disagree.
    NotImplementedError: a batched or dense-dimension layout (xjax has only n_batch=0,
      n_dense=0).

  Example:
    >>> m = BCOO.fromdense(jnp.array([[0., 2., 0.], [1., 0., 4.]]))
    >>> m
    BCOO(float32[2, 3], nse=3)
    >>> m @ jnp.ones(3)
    Array([2., 5.], dtype=float32)
  """
  __array_priority__ = 2000  # NumPy defers `ndarray @ BCOO` to __rmatmul__

  def __init__(self, args: tuple, *, shape: Sequence[int], indices_sorted: bool = False,
               unique_indices: bool = False):
    data, indices = args
    self.data, self.indices = jnp.asarray(data), jnp.asarray(indices)
    self.shape = tuple(core.canonicalize_shape(shape, "BCOO shape"))
    self.indices_sorted = indices_sorted
    self.unique_indices = unique_indices
    _validate(self.data, self.indices, self.shape)

  nse = property(lambda self: self.indices.shape[-2], doc="The number of stored entries.")
  dtype = property(lambda self: self.data.dtype)
  ndim = property(lambda self: len(self.shape))
  size = property(lambda self: int(np.prod(self.shape)))
  n_batch = property(lambda self: self.indices.ndim - 2)
  n_sparse = property(lambda self: self.indices.shape[-1])
  n_dense = property(lambda self: self.data.ndim - 1 - self.n_batch)
  T = property(lambda self: self.transpose())

  def __len__(self):
    if not self.shape:
      raise TypeError("len() of unsized object")
    return self.shape[0]

  def __repr__(self):
    text = f"BCOO({self.dtype}{list(self.shape)}, nse={self.nse})"
    if isinstance(self.data, core.Tracer):
      text = f"{type(self.data).__name__}[{text}]"
    return text

  def tree_flatten(self):
    return (self.data, self.indices), {"shape": self.shape,
                                       "indices_sorted": self.indices_sorted,
                                       "unique_indices": self.unique_indices}

  @classmethod
  def tree_unflatten(cls, aux_data, children):
    # Leaves may be tracers, None or other placeholders (tree_map over a pytree of
    # structure), so the fields are set without validation, as in JAX.
    obj = object.__new__(cls)
    obj.data, obj.indices = children
    obj.__dict__.update(aux_data)
    return obj

  @classmethod
  def fromdense(cls, mat, *, nse: int | None = None, index_dtype=np.int32, n_dense: int = 0,
                n_batch: int = 0) -> BCOO:
    """The BCOO of dense array `mat`, storing its nonzero elements (JAX's
    `BCOO.fromdense`). ``nse`` (needed under `jit`, where the count is not known) fixes
    the number of stored entries: extra slots hold zeros at out-of-range indices; fewer
    slots than nonzeros drop the last ones."""
    return bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                          n_batch=n_batch)

  @classmethod
  def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense: int = 0,
                        n_batch: int = 0) -> BCOO:
    """The BCOO holding the entries of SciPy sparse matrix `mat` (any format; JAX's
    `BCOO.from_scipy_sparse`)."""
    if n_dense or n_batch:
      raise NotImplementedError("BCOO.fromscipy with nonzero n_dense/n_batch")
    coo = mat.tocoo()
    indices = np.stack([coo.row, coo.col], axis=1).astype(index_dtype or np.int32)
    return cls((jnp.asarray(coo.data), jnp.asarray(indices)), shape=coo.shape)

  def todense(self):
    """The dense Array this stands for (JAX's `BCOO.todense`)."""
    return bcoo_todense(self)

  def block_until_ready(self):
    self.data.block_until_ready()
    self.indices.block_until_ready()
    return self

  def transpose(self, axes: Sequence[int] | None = None) -> BCOO:
    """The BCOO with its dimensions permuted by `axes` (reversed when None)."""
    perm = tuple(range(self.ndim))[::-1] if axes is None else tuple(
        int(a) % self.ndim if -self.ndim <= int(a) < self.ndim else int(a) for a in axes)
    if sorted(perm) != list(range(self.ndim)):
      raise ValueError(f"BCOO.transpose: axes {tuple(axes)} is not a permutation of "
                       f"{tuple(range(self.ndim))}")
    indices = self.indices[:, list(perm)] if self.ndim else self.indices
    return BCOO((self.data, indices), shape=tuple(self.shape[p] for p in perm),
                indices_sorted=self.indices_sorted and perm == tuple(range(self.ndim)),
                unique_indices=self.unique_indices)

  def sum(self, axis=None):
    """The sum over `axis` (an int, a tuple of ints, or None for all). A partial sum is a
    BCOO whose entries keep the coordinates of the remaining axes (duplicates are left to
    add up); a sum over every axis is a dense scalar Array, as in JAX."""
    if axis is None:
      axes = set(range(self.ndim))
    else:
      axes = set()
      for a in (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis):
        if not -self.ndim <= a < self.ndim:
          raise ValueError(f"BCOO.sum: axis {a} is out of bounds for an array of "
                           f"dimension {self.ndim}")
        axes.add(int(a) % self.ndim)
    keep = [d for d in range(self.ndim) if d not in axes]
    if not keep:
      return jnp.sum(self.data)
    return BCOO((self.data, self.indices[:, keep]), shape=tuple(self.shape[d] for d in keep))

  def __neg__(self):
    return BCOO((-self.data, self.indices), shape=self.shape,
                indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

  def __pos__(self):
    return self

  def __mul__(self, other):
    if isinstance(other, BCOO):
      raise _unsupported("the product of two BCOO arrays")
    other = jnp.asarray(other)
    if other.ndim == 0:
      data = self.data * other
    else:
      shape = jnp.broadcast_shapes(self.shape, other.shape)
      if shape != self.shape:
        raise _unsupported(f"a product that broadcasts the sparse operand (shape "
                           f"{self.shape}) to {shape}")
      other = jnp.broadcast_to(other, shape)
      # Out-of-range (padding) indices read a clamped element; their data are zero.
      data = self.data * other[tuple(self.indices.T)]
    return BCOO((data, self.indices), shape=self.shape, indices_sorted=self.indices_sorted,
                unique_indices=self.unique_indices)

  __rmul__ = __mul__

  def __matmul__(self, other):
    """``self @ other`` for a dense `other`, following `jnp.matmul`'s rules (a 1-D or 2-D
    sparse operand; `other` may have leading batch dimensions). Returns a dense Array."""
    if isinstance(other, BCOO):
      raise _unsupported("the matrix product of two BCOO arrays")
    other = jnp.asarray(other)
    if self.ndim not in (1, 2) or other.ndim == 0:
      raise _unsupported(f"matmul of a {self.ndim}-D BCOO with a {other.ndim}-D array"
                         if other.ndim else "matmul with a scalar operand")
    k = self.shape[-1]
    if other.shape[-2 if other.ndim > 1 else 0] != k:
      raise ValueError(f"matmul: the contracting dimensions differ: BCOO{list(self.shape)} "
                       f"@ {other.dtype}{list(other.shape)}")
    dtype = jnp.result_type(self.dtype, other.dtype)
    col = self.indices[:, -1]
    vec = other.ndim == 1
    rhs = other[..., None] if vec else other  # [..., k, n]
    terms = self.data.astype(dtype)[:, None] * rhs[..., col, :].astype(dtype)  # [..., nse, n]
    if self.ndim == 1:
      out = jnp.sum(terms, axis=-2)
    else:
      out = jnp.zeros((*rhs.shape[:-2], self.shape[0], rhs.shape[-1]), dtype)
      out = out.at[..., self.indices[:, 0], :].add(terms, mode="drop")
    return out[..., 0] if vec else out

  def __rmatmul__(self, other):
    """``other @ self`` for a dense `other`: ``(self.T @ other.T).T`` over the last two
    axes."""
    if self.ndim not in (1, 2):
      raise _unsupported(f"matmul of an array with a {self.ndim}-D BCOO")
    other = jnp.asarray(other)
    if other.ndim == 1:
      return self.T @ other
    return jnp.swapaxes(self.T @ jnp.swapaxes(other, -1, -2), -1, -2)


def bcoo_fromdense(mat, *, nse: int | None = None, n_batch: int = 0, n_dense: int = 0,
                   index_dtype=np.int32) -> BCOO:
  """The BCOO storing the nonzero elements of dense `mat` (mirrors
  `jax.experimental.sparse.bcoo_fromdense`; see `BCOO.fromdense`).

  Raises:
    NotImplementedError: nonzero ``n_batch`` or ``n_dense``.
    ConcretizationTypeError: ``nse`` is None and `mat` is traced.
  """
  if n_batch or n_dense:
    raise _unsupported(f"bcoo_fromdense with n_batch={n_batch}, n_dense={n_dense}")
  mat = jnp.asarray(mat)
  if nse is None:
    nse = jnp.count_nonzero(mat)
  nse = concrete_int(nse, "The nse argument of bcoo_fromdense (the number of nonzeros of "
                     "a traced array is not known: pass nse)")
  if not mat.ndim:
    return BCOO((jnp.broadcast_to(mat, (nse,)), jnp.zeros((nse, 0), index_dtype)), shape=(),
                indices_sorted=True, unique_indices=True)
  # Padding slots (beyond the nonzeros) get the out-of-range index `mat.shape`, as in JAX.
  positions = jnp.nonzero(mat, size=nse, fill_value=mat.shape)
  indices = jnp.stack(positions, axis=1).astype(index_dtype)
  data = mat.at[positions].get(mode="fill", fill_value=0)
  return BCOO((data, indices), shape=mat.shape, indices_sorted=True,
              unique_indices=True)


def bcoo_todense(mat: BCOO):
  """The dense Array that BCOO `mat` stands for: zeros with its ``data`` added at its
  ``indices`` (out-of-range indices, used as padding, are dropped). Mirrors
  `jax.experimental.sparse.bcoo_todense`."""
  out = jnp.zeros(mat.shape, mat.dtype)
  if not mat.shape:
    return out + jnp.sum(mat.data)
  return out.at[tuple(mat.indices.T)].add(mat.data, mode="drop")
