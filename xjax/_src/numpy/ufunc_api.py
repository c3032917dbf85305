"""`jnp.ufunc`: elementwise functions with NumPy's ufunc methods, and `frompyfunc`.

A `ufunc` wraps a function of `nin` scalars (or of broadcast arrays) and adds
NumPy's methods: ``reduce``, ``accumulate``, ``at``, ``outer`` and
``reduceat``.  The generic methods loop over the array with `fori_loop` /
`scan`, calling the ufunc on slices; a ufunc may pass faster versions of
them (``jnp.add.reduce`` is ``jnp.sum``).  ``jnp.add``, ``jnp.multiply`` and
the other binary ufuncs of JAX 0.10.2 are built with `binary_ufunc` at the end
of ufuncs.py.

This module imports lax_numpy and indexing lazily, inside the methods: they
import ufuncs.py, which imports this module.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import tree_util
from xjax._src.api import eval_shape
from xjax._src.jit import jit
from xjax._src.lax import elementwise as lax
from xjax._src.lax import reductions as lax_reductions
from xjax._src.lax.control_flow.loops import fori_loop
from xjax._src.lax.control_flow.scan import scan
from xjax._src.numpy import creation
from xjax._src.numpy import reductions
from xjax._src.numpy import util
from xjax._src.numpy.util import canonicalize_axis, dtype_of, ensure_arraylike
from xjax._src.vmap import vmap

_AT_INPLACE_MESSAGE = (
    "Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like\n"
    "np.ufunc.at(). Instead, you can pass inplace=False and capture the result; e.g.\n"
    ">>> arr = jnp.add.at(arr, ind, val, inplace=False)\n")


class ufunc:
  """A universal function: an elementwise function with NumPy's ufunc methods.

  Args:
    func: the elementwise function. Called with `nin` arrays that broadcast
      together, unless ``call`` is given it is applied to one element at a
      time (vectorized with `vmap`), as for `frompyfunc`.
    nin, nout: the numbers of inputs and outputs.
    name: the ufunc's ``__name__`` (default ``func.__name__``).
    nargs: NumPy's ``nargs`` (default `nin`).
    identity: the value ``x`` with ``func(x, y) == y``, or None; ``reduce``
      starts from it, and it lets ``reduce`` accept empty arrays and ``where``.
    call, reduce, accumulate, at, reduceat: optional faster implementations
      of ``__call__`` and of the methods, with the methods' signatures.

  The methods ``reduce``, ``accumulate``, ``outer`` and ``reduceat`` need a
  binary ufunc with one output and raise ValueError otherwise. Instances
  compare equal (and hash alike) when their function, name, identity, nin,
  nout and nargs agree.

  >>> import xjax.numpy as jnp
  >>> jnp.add.reduce(jnp.array([1, 2, 3])), jnp.add.identity
  (Array(6, dtype=int32), 0)

  Mirrors `jax.numpy.ufunc`.
  """

  def __init__(self, func: Callable[..., Any], /, nin: int, nout: int, *,
               name: str | None = None, nargs: int | None = None, identity: Any = None,
               call: Callable[..., Any] | None = None, reduce: Callable[..., Any] | None = None,
               accumulate: Callable[..., Any] | None = None, at: Callable[..., Any] | None = None,
               reduceat: Callable[..., Any] | None = None):
    self.__doc__ = func.__doc__
    self.__name__ = name or func.__name__
    # Read-only (properties below), so that a ufunc is a safe static argument.
    self.__props = {
        "func": func, "nin": operator.index(nin), "nout": operator.index(nout),
        "nargs": operator.index(nargs or nin), "identity": identity,
        "call": call, "reduce": reduce, "accumulate": accumulate, "at": at,
        "reduceat": reduceat}
    self.__call_impl = call or self._call_vectorized

  _func = property(lambda self: self.__props["func"])
  nin = property(lambda self: self.__props["nin"])
  nout = property(lambda self: self.__props["nout"])
  nargs = property(lambda self: self.__props["nargs"])
  identity = property(lambda self: self.__props["identity"])

  def _override(self, method: str):
    """The faster implementation of `method` given to the constructor, or None."""
    return self.__props[method]

  def _key(self):
    return (self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs)

  def __hash__(self) -> int:
    return hash(self._key())

  def __eq__(self, other: Any) -> bool:
    return isinstance(other, ufunc) and self._key() == other._key()

  def __repr__(self) -> str:
    return f"<jnp.ufunc '{self.__name__}'>"

  def __call__(self, *args, out=None, where=None):
    if out is not None:
      raise NotImplementedError(f"out argument of {self}")
    if where is not None:
      raise NotImplementedError(f"where argument of {self}")
    return self.__call_impl(*args)

  def _call_vectorized(self, *args):
    ensure_arraylike(self.__name__, *args)
    return _vectorized_call(self, *args)

  # -------------------------------------------------------------------------
  # reduce

  def reduce(self, a, axis: int | None = 0, dtype=None, out=None, keepdims: bool = False,
             initial=None, where=None):
    """Reduces `a` along `axis` by applying the ufunc repeatedly.

    ``op.reduce(a, 0)`` is ``op(...op(op(a[0], a[1]), a[2])..., a[n-1])``.

    Args:
      a: the array to reduce.
      axis: an int, None (all axes, flattened), or for ufuncs with a builtin
        reduction such as ``add`` a tuple of ints. Default 0.
      dtype: the dtype to compute in and return; default the ufunc's result
        dtype for two values of ``a.dtype``.
      out: unsupported; must be None.
      keepdims: keep the reduced axis as size 1.
      initial: a scalar to start from; default the ufunc's `identity`.
      where: a boolean mask broadcasting against `a`: only elements where it
        is true are combined. Needs an identity or `initial`.

    Returns:
      The reduced array.

    Raises:
      ValueError: the ufunc is not binary with one output; `where` without an
        identity or `initial`, or not boolean; an empty reduction with no
        identity or `initial`; `axis` out of range.
      NotImplementedError: `out` given; a tuple `axis` for a generic ufunc.
      TypeError: `a` is not an array or scalar.

    Mirrors `jax.numpy.ufunc.reduce`.
    """
    name = f"{self.__name__}.reduce"
    a = ensure_arraylike(name, a)
    if self.nin != 2:
      raise ValueError("reduce only supported for binary ufuncs")
    if self.nout != 1:
      raise ValueError("reduce only supported for functions returning a single value")
    if out is not None:
      raise NotImplementedError(f"out argument of {name}()")
    if initial is not None:
      initial = ensure_arraylike(name, initial)
    if where is not None:
      where = ensure_arraylike(name, where)
      if self.identity is None and initial is None:
        raise ValueError(f"reduction operation {self.__name__!r} does not have an identity, "
                         "so to use a where mask one has to specify 'initial'.")
      if dtype_of(where) != np.bool_:
        raise ValueError(f"where argument must have dtype=bool; got dtype={dtype_of(where)}")
    if isinstance(axis, list):
      axis = tuple(axis)
    return _reduce_jit(self, a, axis, dtype, keepdims, initial, where)

  def _reduce_via_loop(self, a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
    from xjax._src.numpy import lax_numpy
    if initial is None:
      initial = self.identity
    if dtype is None:
      dtype = self._result_dtype(a, a)
    if where is not None:
      where = lax_numpy.broadcast_to(where, a.shape)
    if isinstance(axis, tuple):
      raise NotImplementedError("tuple of axes")
    if axis is None:
      final_shape = (1,) * a.ndim if keepdims else ()
      a, axis = a.ravel(), 0
      where = None if where is None else where.ravel()
    else:
      axis = canonicalize_axis(axis, a.ndim)
      final_shape = (*a.shape[:axis], *((1,) if keepdims else ()), *a.shape[axis + 1:])
    a = lax_numpy.moveaxis(a, axis, 0)
    where = None if where is None else lax_numpy.moveaxis(where, axis, 0)
    if a.shape[0] == 0:
      if initial is None:
        raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                         "which has no identity")
      return creation.full(final_shape, initial, dtype)

    def body(i, acc):
      step = self(acc, a[i].astype(dtype)).astype(dtype)
      return step if where is None else util.where_(where[i], step, acc)

    start, first = (1, a[0]) if initial is None else (0, initial)
    first = lax_numpy.broadcast_to(creation.asarray(first).astype(dtype), a.shape[1:])
    return fori_loop(start, a.shape[0], body, first).reshape(final_shape)

  def _result_dtype(self, *args):
    """The dtype the ufunc gives for strong scalars of the arguments' dtypes."""
    ones = [np.ones((), dtype_of(x)) for x in args]
    return eval_shape(self._func, *ones).dtype

  # -------------------------------------------------------------------------
  # accumulate

  def accumulate(self, a, axis: int = 0, dtype=None, out=None):
    """The running reduction of `a` along `axis`: ``out[i] = op(out[i-1], a[i])``.

    Args:
      a: the array.
      axis: one integer axis (default 0).
      dtype: the dtype to compute in and return; default the ufunc's result
        dtype for two values of ``a.dtype``.
      out: unsupported; must be None.

    Returns:
      An array of `a`'s shape.

    Raises:
      ValueError: the ufunc is not binary with one output; `axis` is None.
      NotImplementedError: `out` given.
      TypeError: `a` is not an array or scalar; `axis` is a tuple.

    Mirrors `jax.numpy.ufunc.accumulate`.
    """
    if self.nin != 2:
      raise ValueError("accumulate only supported for binary ufuncs")
    if self.nout != 1:
      raise ValueError("accumulate only supported for functions returning a single value")
    if out is not None:
      raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
    override = self._override("accumulate")
    if override is not None:
      return override(a, axis=axis, dtype=dtype)
    a = ensure_arraylike(f"{self.__name__}.accumulate", a)
    if axis is None:
      raise ValueError("accumulate does not allow multiple axes")
    return _accumulate_jit(self, a, operator.index(axis), dtype)

  def _accumulate_via_scan(self, a, axis, dtype):
    from xjax._src.numpy import lax_numpy
    if dtype is None:
      dtype = self._result_dtype(a, a)
    axis = canonicalize_axis(axis, a.ndim)
    if a.size == 0:
      return creation.zeros(a.shape, dtype)
    a = lax_numpy.moveaxis(a, axis, 0).astype(dtype)

    def step(acc, x):
      acc = self(acc, x).astype(dtype)
      return acc, acc

    _, rest = scan(step, a[0], a[1:])
    return lax_numpy.moveaxis(lax_numpy.concatenate([a[:1], rest]), 0, axis)

  # -------------------------------------------------------------------------
  # at

  def at(self, a, indices, b=None, /, *, inplace: bool = True):
    """``a`` with the ufunc applied at ``a[indices]`` (with ``b`` for binary ufuncs).

    Unlike ``a.at[indices].set(op(a[indices], b))``, repeated indices apply
    the ufunc once per occurrence, as NumPy's unbuffered ``ufunc.at`` does.

    Args:
      a: the array to update.
      indices: an index: integers, integer arrays, slices, or a tuple of them.
      b: the second operand for binary ufuncs; broadcasts against the indexed
        elements.
      inplace: must be False: xjax arrays are immutable, so a new array is
        returned instead of updating `a`.

    Returns:
      The updated copy of `a`, in the ufunc's result dtype.

    Raises:
      NotImplementedError: `inplace` is not False.
      TypeError: `a` or `b` is not an array or scalar; a list index.

    Mirrors `jax.numpy.ufunc.at`.
    """
    if inplace:
      raise NotImplementedError(_AT_INPLACE_MESSAGE)
    override = self._override("at")
    args = () if b is None else (b,)
    if override is not None:
      a = creation.asarray(ensure_arraylike(f"{self.__name__}.at", a))
      return override(a, indices, *args)
    return self._at_via_scan(a, indices, *args)

  def _at_via_scan(self, a, indices, *args):
    from xjax._src.numpy import indexing, lax_numpy
    checked = ensure_arraylike(f"{self.__name__}.at", a, *args)
    a, args = (checked[0], checked[1:]) if args else (checked, ())
    dtype = self._result_dtype(a, *args)
    a = creation.asarray(a).astype(dtype)
    args = [creation.asarray(x).astype(dtype) for x in args]
    indices = indexing._as_index_tuple(indices)
    if not indices:
      return a
    shapes = [np.shape(i) for i in indices if not isinstance(i, slice)]
    shape = np.broadcast_shapes(*shapes) if shapes else ()
    if not shape:
      return a.at[indices].set(self(a[indices], *args))
    count = int(np.prod(shape))
    if args:
      arg, = args
      arg = lax_numpy.broadcast_to(arg, (*shape, *arg.shape[len(shape):]))
      args = [arg.reshape(count, *arg.shape[len(shape):])]
    flat = [i if isinstance(i, slice) else lax_numpy.broadcast_to(i, shape).ravel()
            for i in indices]

    def step(arr, k):
      idx = tuple(i if isinstance(i, slice) else i[k] for i in flat)
      return arr.at[idx].set(self(arr[idx], *(x[k] for x in args))), None

    out, _ = scan(step, a, creation.arange(count))
    return out

  # -------------------------------------------------------------------------
  # outer and reduceat

  def outer(self, A, B, /):
    """The ufunc applied to every pair ``(A[i...], B[j...])``.

    Args:
      A, B: arrays of any shapes.

    Returns:
      An array of shape ``A.shape + B.shape``.

    Raises:
      ValueError: the ufunc is not binary with one output.
      TypeError: `A` or `B` is not an array or scalar.

    Mirrors `jax.numpy.ufunc.outer`.
    """
    if self.nin != 2:
      raise ValueError("outer only supported for binary ufuncs")
    if self.nout != 1:
      raise ValueError("outer only supported for functions returning a single value")
    A, B = ensure_arraylike(f"{self.__name__}.outer", A, B)
    return _outer_jit(self, A, B)

  def reduceat(self, a, indices, axis: int = 0, dtype=None, out=None):
    """Reductions of `a` over the slices that `indices` start along `axis`.

    For ``i < len(indices) - 1`` the result's slice ``i`` is
    ``op.reduce(a[indices[i]:indices[i+1]])`` when ``indices[i] <
    indices[i+1]`` and ``a[indices[i]]`` otherwise; the last slice reduces
    ``a[indices[-1]:]``.

    Args:
      a: an array with at least one dimension.
      indices: a one-dimensional integer array.
      axis: the axis to reduce along (default 0).
      dtype: the dtype to compute in and return (default ``a.dtype``).
      out: unsupported; must be None.

    Returns:
      An array like `a` with ``len(indices)`` entries along `axis`.

    Raises:
      ValueError: the ufunc is not binary with one output; `a` is 0-d;
        `indices` is not one-dimensional; `axis` is not one integer.
      IndexError: a concrete index is outside ``[0, a.shape[axis])``.
      NotImplementedError: `out` given.
      TypeError: `a` or `indices` is not an array or scalar.

    Mirrors `jax.numpy.ufunc.reduceat`.
    """
    if self.nin != 2:
      raise ValueError("reduceat only supported for binary ufuncs")
    if self.nout != 1:
      raise ValueError("reduceat only supported for functions returning a single value")
    if out is not None:
      raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
    override = self._override("reduceat")
    if override is not None:
      return override(a, indices, axis=axis, dtype=dtype)
    a, indices = ensure_arraylike(f"{self.__name__}.reduceat", a, indices)
    if np.ndim(a) == 0:
      raise ValueError(f"reduceat: a must have 1 or more dimension, got a.shape={np.shape(a)}")
    if np.ndim(indices) != 1:
      raise ValueError("reduceat: indices must be one-dimensional, "
                       f"got indices.shape={np.shape(indices)}")
    if axis is None or isinstance(axis, (tuple, list)):
      raise ValueError("reduceat requires a single integer axis.")
    axis = canonicalize_axis(axis, np.ndim(a))
    if not isinstance(indices, core.Tracer):
      concrete = np.asarray(indices)
      size = np.shape(a)[axis]
      bad = concrete[(concrete < 0) | (concrete >= size)]
      if bad.size:
        raise IndexError(f"index {bad[0]} out-of-bounds in {self.__name__}.reduceat [0, {size})")
    return _reduceat_jit(self, a, indices, axis, dtype)

  def _reduceat_via_loop(self, a, indices, axis, dtype):
    from xjax._src.numpy import indexing, lax_numpy
    a = creation.asarray(a)
    if dtype is not None:
      a = a.astype(dtype)
    out = indexing.take(a, indices, axis=axis)
    # Slice j of `a` joins result k when starts[k] < j < ends[k].
    bounds = lax_numpy.concatenate([indices, creation.array([a.shape[axis]], indices.dtype)])
    expand = [d for d in range(out.ndim) if d != axis]
    starts = lax_numpy.expand_dims(bounds[:-1], expand)
    ends = lax_numpy.expand_dims(bounds[1:], expand)

    def body(j, acc):
      piece = indexing.take(a, lax_numpy.expand_dims(j, 0), axis=axis)
      return util.where_((j > starts) & (j < ends), self(acc, piece).astype(acc.dtype), acc)

    return fori_loop(0, a.shape[axis], body, out)


# The jitted bodies; the ufunc itself is a static argument (it is hashable).

@jit(static_argnums=(0,))
def _vectorized_call(uf, *args):
  from xjax._src.numpy import lax_numpy
  if not args:
    return uf._func()
  shape = np.broadcast_shapes(*(np.shape(x) for x in args))
  flat = [lax_numpy.broadcast_to(x, shape).ravel() for x in args]
  out = vmap(uf._func)(*flat)
  return tree_util.tree_map(lambda y: y.reshape((*shape, *y.shape[1:])), out)


@jit(static_argnums=(0, 2, 3, 4))
def _reduce_jit(uf, a, axis, dtype, keepdims, initial, where):
  reduce = uf._override("reduce") or uf._reduce_via_loop
  return reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


@jit(static_argnums=(0, 2, 3))
def _accumulate_jit(uf, a, axis, dtype):
  return uf._accumulate_via_scan(a, axis, dtype)


@jit(static_argnums=(0,))
def _outer_jit(uf, A, B):
  A, B = creation.asarray(A), creation.asarray(B)
  return uf(A.reshape((*A.shape, *(1,) * B.ndim)), B)


@jit(static_argnums=(0, 3, 4))
def _reduceat_jit(uf, a, indices, axis, dtype):
  return uf._reduceat_via_loop(a, indices, axis, dtype)


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *, identity: Any = None) -> ufunc:
  """A `ufunc` from a function of `nin` scalars that returns `nout` values.

  Calling the result broadcasts its arguments and maps `func` over their
  elements (with `vmap`, so `func` must be traceable: xjax operations, no
  Python control flow on values). The ufunc methods (``reduce``, ``outer``,
  ...) then work as for ``jnp.add``.

  Args:
    func: the scalar function.
    nin, nout: its numbers of inputs and outputs.
    identity: the identity for ``reduce`` (see `ufunc`), or None.

  Returns:
    A `ufunc`.

  >>> import xjax.numpy as jnp
  >>> hypot = jnp.frompyfunc(lambda x, y: jnp.sqrt(x * x + y * y), 2, 1)
  >>> hypot.outer(jnp.array([3.0]), jnp.array([4.0, 0.0]))
  Array([[5., 3.]], dtype=float32)

  Mirrors `jax.numpy.frompyfunc`.
  """
  return ufunc(func, nin, nout, identity=identity)


# ---------------------------------------------------------------------------
# The builtin ufuncs' faster methods, and their constructors.

def _monoid_reduction(name: str, op: Callable, lax_name: str, identity, logical: bool):
  """A reduction by a lax reducer (reduce_and, reduce_or, reduce_xor) with
  `reduce`'s arguments. Logical ones cast to bool; bitwise ones need integers."""
  def reduce(a, axis=None, dtype=None, keepdims=False, initial=None, where=None):
    a = ensure_arraylike(name, a)
    if logical:
      a = reductions._cast_to_bool(a)
    elif not (dtype_of(a) == np.bool_ or dtypes.issubdtype(dtype_of(a), np.integer)):
      raise ValueError(f"integer argument required; got dtype={dtype_of(a)}")
    out_dtype = dtype_of(a) if dtype is None else dtypes.check_user_dtype_supported(dtype, name)
    a = lax.convert_element_type(a, out_dtype)
    axes = reductions._reduction_axes(a, axis)
    if where is not None:
      a = util.where_(where, a, np.array(identity).astype(out_dtype))
    result = getattr(lax_reductions, lax_name)(a, axes)
    if initial is not None:
      result = op(lax.convert_element_type(initial, out_dtype), result)
    return reductions._expand_dims(result, axes) if keepdims else result
  return reduce


def _sum(a, axis=None, dtype=None, keepdims=False, initial=None, where=None):
  return reductions.sum(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                        where=where)


def _prod(a, axis=None, dtype=None, keepdims=False, initial=None, where=None):
  return reductions.prod(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                         where=where)


def _max(a, axis=None, dtype=None, keepdims=False, initial=None, where=None):
  return reductions._reduce_max(a, axis=axis, dtype=dtype, keepdims=keepdims,
                                initial=initial, where=where)


def _min(a, axis=None, dtype=None, keepdims=False, initial=None, where=None):
  return reductions._reduce_min(a, axis=axis, dtype=dtype, keepdims=keepdims,
                                initial=initial, where=where)


def _cumsum(a, axis=0, dtype=None):
  return reductions.cumsum(a, axis=axis, dtype=dtype)


def _cumprod(a, axis=0, dtype=None):
  return reductions.cumprod(a, axis=axis, dtype=dtype)


def _scatter_at(method: str):
  """``a.at[indices].<method>(b)``; bools go through int32 as in JAX."""
  def at(a, indices, b):
    if dtype_of(a) == np.bool_:
      b = lax.convert_element_type(lax.convert_element_type(b, np.bool_), np.int32)
      out = getattr(a.astype(np.int32).at[indices], method)(b)
      return out.astype(np.bool_)
    return getattr(a.at[indices], method)(b)
  return at


_BINARY_METHODS: dict[str, dict] = {
    "add": dict(identity=0, reduce=_sum, accumulate=_cumsum, at=_scatter_at("add")),
    "multiply": dict(identity=1, reduce=_prod, accumulate=_cumprod, at=_scatter_at("mul")),
    "subtract": dict(identity=None, at=_scatter_at("subtract")),
    "maximum": dict(identity=None, reduce=_max),
    "minimum": dict(identity=None, reduce=_min),
    "logical_and": dict(identity=True, reduce=_monoid_reduction(
        "reduce_logical_and", lax.bitwise_and, "reduce_and", True, logical=True)),
    "logical_or": dict(identity=False, reduce=_monoid_reduction(
        "reduce_logical_or", lax.bitwise_or, "reduce_or", False, logical=True)),
    "logical_xor": dict(identity=False, reduce=_monoid_reduction(
        "reduce_logical_xor", lax.bitwise_xor, "reduce_xor", False, logical=True)),
    "bitwise_and": dict(identity=-1, reduce=_monoid_reduction(
        "reduce_bitwise_and", lax.bitwise_and, "reduce_and", -1, logical=False)),
    "bitwise_or": dict(identity=0, reduce=_monoid_reduction(
        "reduce_bitwise_or", lax.bitwise_or, "reduce_or", 0, logical=False)),
    "bitwise_xor": dict(identity=0, reduce=_monoid_reduction(
        "reduce_bitwise_xor", lax.bitwise_xor, "reduce_xor", 0, logical=False)),
    "logaddexp": dict(identity=-np.inf),
    "logaddexp2": dict(identity=-np.inf),
}


def binary_ufunc(fn: Callable) -> ufunc:
  """The `ufunc` for the binary jnp function `fn` (one of `_BINARY_METHODS`)."""
  return ufunc(fn, 2, 1, name=fn.__name__, call=fn, **_BINARY_METHODS[fn.__name__])


def unary_ufunc(fn: Callable) -> ufunc:
  """The `ufunc` for the unary jnp function `fn`."""
  return ufunc(fn, 1, 1, name=fn.__name__, call=fn)
