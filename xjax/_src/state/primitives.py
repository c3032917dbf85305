"""The state primitives and their public wrappers.

* `new_ref_p` ("new_ref"), `empty_ref_p` ("empty_ref") make refs; `freeze_p`
  ("freeze") ends one and gives its value; `free_ref_p` ("free_ref") ends one.
* `get_p` ("get"), `swap_p` ("swap") and `addupdate_p` ("addupdate") read and
  write a ref through a chain of indexers, the param ``tree`` (a tuple of
  `NDIndexer`); the integer index operands follow the other operands. They
  print as JAX prints them: ``c:f32[3] <- a[...]``, ``e:f32[3], a[...] <- a[...], d``
  (``a[...] <- d`` when the old value is unused) and ``a[...] += d``.

Eagerly the rules act on the concrete `Ref`; under `jit` the jaxpr keeps the
state primitives and `discharge.py` turns them into functional code before
lowering. Under `grad`, refs made inside the differentiated function carry a
tangent ref; under `vmap`, refs are batched like arrays.
"""
from __future__ import annotations

import math

from xjax._src import core
from xjax._src import jaxpr_pp
from xjax._src import dispatch
from xjax._src import dtypes
from xjax._src import pretty_printer as pp
from xjax._src.array import Array
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import partial_eval as pe
from xjax._src.lax import elementwise as lax
from xjax._src.lax import structural
from xjax._src.numpy import array_methods  # noqa: F401  (install_tracer_methods wraps them)
from xjax._src.numpy import creation
from xjax._src.numpy import lax_numpy
from xjax._src.numpy import reductions
from xjax._src.state.types import (INT, AbstractRef, NDIndexer, Ref, Slice, is_ref_aval,
                                   transform_aval)

import numpy as np


def _ref_aval_of(x, function_name: str) -> AbstractRef:
  try:
    aval = core.get_aval(x)
  except TypeError:
    aval = None
  if not is_ref_aval(aval):
    raise ValueError(f"Can only call `{function_name}` on a `Ref`: {x}.")
  return aval


def _ref_and_transforms(ref_or_view, idx, function_name: str):
  """(ref, tree, index operands) for indexing `ref_or_view` with `idx`."""
  if isinstance(ref_or_view, TransformedRef):
    ref, tree, operands = ref_or_view.ref, ref_or_view.transforms, ref_or_view.operands
    shape = ref_or_view.shape
  else:
    ref, tree, operands = ref_or_view, (), ()
    shape = None
  aval = _ref_aval_of(ref, function_name)
  indexer, idx_operands = make_indexer(idx, aval.shape if shape is None else shape)
  if indexer is not None:
    tree = (*tree, indexer)
    operands = (*operands, *idx_operands)
  return ref, tuple(tree), list(operands)


def _maybe_implicit_cast(dtype, value):
  """A weakly typed value of the ref's kind (float into float, int into int) takes its dtype."""
  try:
    aval = core.get_aval(value)
  except TypeError:
    return value
  if is_ref_aval(aval):
    return value
  if aval.weak_type and (
      (dtypes.issubdtype(dtype, np.floating) and dtypes.issubdtype(aval.dtype, np.floating))
      or (dtypes.issubdtype(dtype, np.integer) and dtypes.issubdtype(aval.dtype, np.integer))):
    return lax.convert_element_type(value, dtype)
  return value


# ----------------------------------------------------------------------------
# Public functions


def new_ref(init_val, *, memory_space=None, kind=None):
  """A new mutable array reference holding `init_val`.

  Args:
    init_val: an array (or scalar) giving the ref's initial value, shape and dtype.
    memory_space: an optional memory space; only None is supported by xjax.
    kind: an optional mutation kind: ``'no_grad_no_remat'`` or None.

  Returns:
    A `Ref`; ``ref[...]`` reads it, ``ref[...] = v`` writes it.

  Raises:
    NotImplementedError: a `memory_space` other than None, eagerly.

  Mirrors `jax.new_ref` (and `jax.ref.new_ref`).
  """
  return _new_ref(init_val, memory_space=memory_space, kind=kind)


def _new_ref(init_val, **params):
  """`new_ref_p.bind`, except that a ref made under `grad` or `vmap` is always
  differentiable and batched (even from a constant), so that later writes of
  differentiated or batched values have somewhere to go (as in JAX)."""
  trace = core.current_trace()
  if isinstance(trace, ad.JVPTrace):
    primal, tangent = trace.to_primal_tangent_pair(init_val)
    with core.set_current_trace(trace.parent_trace):
      primal_out, tangent_out = _new_ref_jvp((primal,), (tangent,), **params)
    return trace.box(primal_out, tangent_out)
  if isinstance(trace, pe.PartialEvalTrace) and not trace.is_unknown(init_val):
    with core.set_current_trace(trace.parent_trace):  # a known ref is made by the parent
      return _new_ref(init_val, **params)
  if isinstance(trace, batching.BatchTrace):
    val, dim = trace.to_batch_info(init_val)
    if dim is None:
      with core.set_current_trace(trace.parent_trace):
        out = _new_ref(batching.broadcast(val, trace.axis_data.size, 0), **params)
      return batching.BatchTracer(trace, out, 0)
  return new_ref_p.bind(init_val, **params)


def empty_ref(ty, memory_space=None):
  """A new ref of type `ty` (anything with shape and dtype) with unspecified contents.

  Mirrors `jax.ref.empty_ref`. Eagerly (outside `jit`), JAX has no rule for
  it and neither has xjax: NotImplementedError.
  """
  aval = core.ShapedArray(tuple(ty.shape), dtypes.canonicalize_dtype(ty.dtype),
                          getattr(ty, "weak_type", False))
  trace = core.current_trace()
  if isinstance(trace, ad.JVPTrace) and dtypes.issubdtype(aval.dtype, np.inexact):
    with core.set_current_trace(trace.parent_trace):
      primal = empty_ref_p.bind(ty=aval, memory_space=memory_space)
      tangent = empty_ref_p.bind(ty=aval.to_tangent_aval(), memory_space=memory_space)
    return trace.box(primal, tangent)
  return empty_ref_p.bind(ty=aval, memory_space=memory_space)


def free_ref(ref):
  """Invalidates `ref` (mirrors `jax.ref.free_ref`); returns ``()``."""
  free_ref_p.bind(ref)
  return ()


def freeze(ref):
  """Invalidates `ref` and returns its final value as an Array.

  Example:
    >>> ref = xjax.new_ref(xjax.numpy.arange(5))
    >>> ref[3] = 100
    >>> xjax.ref.freeze(ref)
    Array([  0,   1,   2, 100,   4], dtype=int32)

  Mirrors `jax.freeze` (and `jax.ref.freeze`).
  """
  return freeze_p.bind(ref)


def ref_get(ref, idx=None):
  """``ref[idx]``: the indexed elements of `ref` as an Array.

  Args:
    ref: a `Ref` (or a view ``ref.at[...]``).
    idx: a NumPy-style index: ints, integer arrays, slices, ``...``; None or
      ``...`` reads the whole value.

  Raises:
    ValueError: `ref` is not a Ref; a concrete index out of bounds.

  Mirrors `jax.ref.get`.
  """
  ref, tree, operands = _ref_and_transforms(ref, idx, "ref_get")
  return get_p.bind(ref, *operands, tree=tree)


def ref_swap(ref, idx, value, _function_name: str = "ref_swap"):
  """Writes `value` at ``ref[idx]`` and returns the previous value there.

  `value` must have the indexed shape and the ref's dtype (a weakly typed
  Python scalar of the same kind is cast). Raises ValueError otherwise.
  Mirrors `jax.ref.swap`.
  """
  if hasattr(ref, "dtype"):
    value = _maybe_implicit_cast(ref.dtype, value)
  ref, tree, operands = _ref_and_transforms(ref, idx, _function_name)
  return swap_p.bind(ref, value, *operands, tree=tree)


def ref_set(ref, idx, value) -> None:
  """``ref[idx] = value`` in place (mirrors `jax.ref.set`); returns None."""
  ref_swap(ref, idx, value, _function_name="ref_set")


def ref_addupdate(ref, idx, x) -> None:
  """``ref[idx] += x`` in place (mirrors `jax.ref.addupdate`); returns None."""
  ref, tree, operands = _ref_and_transforms(ref, idx, "ref_addupdate")
  addupdate_p.bind(ref, x, *operands, tree=tree)


# ----------------------------------------------------------------------------
# Values through indexers (shared by the eager rules and the discharge rules)


def _split(tree, operands):
  it = iter(operands)
  return [[next(it) for _ in range(ix.num_operands)] for ix in tree]


def index_value(x, tree, operands):
  """``x`` read through the chain of indexers `tree`."""
  for ix, ops in zip(tree, _split(tree, operands)):
    x = x[ix.as_index(ops)]
  return x


def update_value(x, tree, operands, fn):
  """``x`` with its part under `tree` replaced by ``fn(part)``; returns (new x, old part)."""
  if not tree:
    return fn(x), x
  (ix, *rest), (ops, *rest_ops) = tree, _split(tree, operands)
  index = ix.as_index(ops)
  part = x[index]
  new_part, old = update_value(part, tuple(rest), [o for r in rest_ops for o in r], fn)
  return x.at[index].set(new_part), old


def swap_value(x, val, tree, operands):
  """(x with `val` written under `tree`, the old value there)."""
  return update_value(x, tree, operands, lambda _: val)


def addupdate_value(x, val, tree, operands):
  """x with `val` added under `tree`."""
  return update_value(x, tree, operands, lambda part: part + val)[0]


# ----------------------------------------------------------------------------
# Ref creation and destruction


def _ref_buffer(x):
  if type(x) is Array:
    return x
  return dispatch.device_put_value(x)


new_ref_p = core.Primitive("new_ref")
new_ref_p.is_effectful = True
new_ref_p.ref_allocating = True


@new_ref_p.def_impl
def _new_ref_impl(init_val, *, memory_space, kind):
  if memory_space is not None:
    raise NotImplementedError("array ref with memory space only works inside of a `jit`.")
  aval = core.get_aval(init_val)
  if is_ref_aval(aval):
    raise ValueError("Cannot store a Ref into another Ref. "
                     "Did you forget to load from it using `[...]`?")
  return Ref(AbstractRef(aval, kind=kind), _ref_buffer(init_val))


@new_ref_p.def_abstract_eval
def _new_ref_abstract_eval(init_aval, *, memory_space, kind):
  if is_ref_aval(init_aval):
    raise ValueError("Cannot store a Ref into another Ref. "
                     "Did you forget to load from it using `[...]`?")
  return AbstractRef(init_aval, memory_space=memory_space, kind=kind)


def _new_ref_jvp(primals, tangents, *, memory_space, kind):
  (init_val,), (init_dot,) = primals, tangents
  primal_out = _new_ref(init_val, memory_space=memory_space, kind=kind)
  if type(init_dot) is not ad.Zero:
    return primal_out, _new_ref(init_dot, memory_space=memory_space, kind=kind)
  if not dtypes.issubdtype(init_dot.aval.dtype, np.inexact):
    return primal_out, ad.Zero(core.get_aval(primal_out).to_tangent_aval())
  zero = ad.zeros_like_aval(init_dot.aval)
  trace = core.current_trace()
  if isinstance(trace, pe.PartialEvalTrace):
    # Linearizing: the tangent ref belongs to the linear (staged) program even
    # though its initial value is a known zero.
    tangent_out = trace.stage(new_ref_p, [zero], dict(memory_space=memory_space, kind=kind))
  else:
    tangent_out = _new_ref(zero, memory_space=memory_space, kind=kind)
  return primal_out, tangent_out


new_ref_p.def_jvp(_new_ref_jvp)


@new_ref_p.def_batch
def _new_ref_batch(axis_data, args, dims, *, memory_space, kind):
  (val,), (dim,) = args, dims
  return new_ref_p.bind(val, memory_space=memory_space, kind=kind), dim


empty_ref_p = core.Primitive("empty_ref")
empty_ref_p.is_effectful = True
empty_ref_p.ref_allocating = True


@empty_ref_p.def_impl
def _empty_ref_impl(*, ty, memory_space):
  raise core.missing_rule("Evaluation", empty_ref_p)


@empty_ref_p.def_abstract_eval
def _empty_ref_abstract_eval(*, ty, memory_space):
  return AbstractRef(ty, memory_space=memory_space)


free_ref_p = core.Primitive("free_ref", multiple_results=True)
free_ref_p.is_effectful = True
free_ref_p.def_impl(lambda ref: [])
free_ref_p.def_abstract_eval(lambda ref_aval: [])


def _free_ref_jvp(primals, tangents):
  (ref,), (ref_dot,) = primals, tangents
  free_ref_p.bind(ref)
  if type(ref_dot) is not ad.Zero:
    free_ref_p.bind(ref_dot)
  return [], []


free_ref_p.def_jvp(_free_ref_jvp)
free_ref_p.def_batch(lambda axis_data, args, dims: (free_ref_p.bind(*args), []))

freeze_p = core.Primitive("freeze")
freeze_p.is_effectful = True


@freeze_p.def_impl
def _freeze_impl(ref):
  return ref._buf


@freeze_p.def_abstract_eval
def _freeze_abstract_eval(ref_aval):
  if not is_ref_aval(ref_aval):
    raise ValueError(f"Can only call `freeze` on a `Ref`: {ref_aval}.")
  return ref_aval.inner_aval


def _freeze_jvp(primals, tangents):
  (ref,), (ref_dot,) = primals, tangents
  out = freeze_p.bind(ref)
  if type(ref_dot) is ad.Zero:
    return out, ad.Zero(core.get_aval(out).to_tangent_aval())
  return out, freeze_p.bind(ref_dot)


freeze_p.def_jvp(_freeze_jvp)
freeze_p.def_batch(lambda axis_data, args, dims: (freeze_p.bind(*args), dims[0]))


# ----------------------------------------------------------------------------
# get


get_p = core.Primitive("get")
get_p.is_effectful = True


@get_p.def_impl
def _get_impl(ref, *idx, tree):
  return index_value(ref._buf, tree, idx)


@get_p.def_abstract_eval
def _get_abstract_eval(ref_aval, *idx_avals, tree):
  if not is_ref_aval(ref_aval):
    raise ValueError(f"`get` must be called on `Ref` types: {ref_aval}.")
  return transform_aval(tree, ref_aval.inner_aval)


def _get_jvp(primals, tangents, *, tree):
  ref, *idx = primals
  ref_dot = tangents[0]
  out = get_p.bind(ref, *idx, tree=tree)
  if type(ref_dot) is ad.Zero:
    return out, ad.Zero(core.get_aval(out).to_tangent_aval())
  return out, get_p.bind(ref_dot, *idx, tree=tree)


get_p.def_jvp(_get_jvp)


@get_p.def_batch
def _get_batch(axis_data, args, dims, *, tree):
  ref, *idx = args
  ref_dim, *idx_dims = dims
  tree, idx, out_dim = _batch_indexers(axis_data.size, ref, ref_dim, tree, idx, idx_dims)
  return get_p.bind(ref, *idx, tree=tree), out_dim


# ----------------------------------------------------------------------------
# swap


swap_p = core.Primitive("swap")
swap_p.is_effectful = True


@swap_p.def_impl
def _swap_impl(ref, val, *idx, tree):
  _check_value("swap", ref.aval, core.get_aval(val), tree)
  new, old = swap_value(ref._buf, val, tree, idx)
  ref._buf = _ref_buffer(new)
  return old


def _check_value(name, ref_aval, val_aval, tree):
  if is_ref_aval(val_aval):
    raise ValueError("Cannot store a Ref into another Ref. "
                     "Did you forget to load from it using `[...]`?")
  expected = transform_aval(tree, ref_aval.inner_aval)
  if expected.shape != val_aval.shape:
    raise ValueError(f"Invalid shape for `{name}`. Ref shape: {ref_aval.shape}. "
                     f"Expected shape: {expected.shape}. Value shape: {val_aval.shape}. "
                     f"Transforms: {tree}. ")
  if expected.dtype != val_aval.dtype:
    if name == "swap":
      raise ValueError(f"Invalid dtype for `swap`. Ref dtype: {expected.dtype}. "
                       f"Value dtype: {val_aval.dtype}. ")
    raise ValueError(f"Invalid dtype for `addupdate`. Ref dtype: {ref_aval.dtype}. "
                     f"Value shape: {val_aval.dtype}. ")
  return expected


@swap_p.def_abstract_eval
def _swap_abstract_eval(ref_aval, val_aval, *idx_avals, tree):
  if not is_ref_aval(ref_aval):
    raise ValueError(f"`swap` must be called on `Ref` types: {ref_aval}.")
  return _check_value("swap", ref_aval, val_aval, tree)


def _nondiff_ref_error(ref) -> Exception:
  return Exception("performing a set/swap operation with a differentiated value on a "
                   f"non-differentiated array reference of type {core.get_aval(ref)}. Move "
                   "the array reference to be an argument of the differentiated function?")


def _swap_jvp(primals, tangents, *, tree):
  ref, val, *idx = primals
  ref_dot, val_dot = tangents[:2]
  if type(ref_dot) is ad.Zero:
    if type(val_dot) is not ad.Zero:
      raise _nondiff_ref_error(ref)
    out = swap_p.bind(ref, val, *idx, tree=tree)
    return out, ad.Zero(core.get_aval(out).to_tangent_aval())
  out = swap_p.bind(ref, val, *idx, tree=tree)
  return out, swap_p.bind(ref_dot, ad.instantiate_zeros(val_dot), *idx, tree=tree)


swap_p.def_jvp(_swap_jvp)


def _vmapped_write_error(what: str, ref) -> Exception:
  return Exception(f"performing {what} operation with vmapped value on an unbatched array "
                   f"reference of type {core.get_aval(ref)}. Move the array reference to be "
                   "an argument to the vmapped function?")


@swap_p.def_batch
def _swap_batch(axis_data, args, dims, *, tree):
  ref, val, *idx = args
  ref_dim, val_dim, *idx_dims = dims
  if ref_dim is None:
    raise _vmapped_write_error("a set/swap", ref)
  tree, idx, out_dim = _batch_indexers(axis_data.size, ref, ref_dim, tree, idx, idx_dims)
  val = batching.move_to(val, val_dim, out_dim, axis_data.size)
  return swap_p.bind(ref, val, *idx, tree=tree), out_dim


# ----------------------------------------------------------------------------
# addupdate


addupdate_p = core.Primitive("addupdate", multiple_results=True)
addupdate_p.is_effectful = True


@addupdate_p.def_impl
def _addupdate_impl(ref, val, *idx, tree):
  _check_value("addupdate", ref.aval, core.get_aval(val), tree)
  ref._buf = _ref_buffer(addupdate_value(ref._buf, val, tree, idx))
  return []


@addupdate_p.def_abstract_eval
def _addupdate_abstract_eval(ref_aval, val_aval, *idx_avals, tree):
  if not is_ref_aval(ref_aval):
    raise ValueError(f"`addupdate` must be called on `Ref` types: {ref_aval}.")
  _check_value("addupdate", ref_aval, val_aval, tree)
  return []


def _addupdate_jvp(primals, tangents, *, tree):
  ref, val, *idx = primals
  ref_dot, val_dot = tangents[:2]
  if type(ref_dot) is ad.Zero and type(val_dot) is not ad.Zero:
    raise _nondiff_ref_error(ref)
  addupdate_p.bind(ref, val, *idx, tree=tree)
  if type(ref_dot) is not ad.Zero:
    addupdate_p.bind(ref_dot, ad.instantiate_zeros(val_dot), *idx, tree=tree)
  return [], []


addupdate_p.def_jvp(_addupdate_jvp)


@addupdate_p.def_batch
def _addupdate_batch(axis_data, args, dims, *, tree):
  ref, val, *idx = args
  ref_dim, val_dim, *idx_dims = dims
  if ref_dim is None:
    raise _vmapped_write_error("an addupdate", ref)
  tree, idx, out_dim = _batch_indexers(axis_data.size, ref, ref_dim, tree, idx, idx_dims)
  val = batching.move_to(val, val_dim, out_dim, axis_data.size)
  return addupdate_p.bind(ref, val, *idx, tree=tree), []


# ----------------------------------------------------------------------------
# Batching indexers


def _out_position(indices, k: int, int_shape) -> int:
  """Where dimension `k` (a slice) of an indexed value lands in the result."""
  is_int = [i is INT for i in indices]
  before = sum(1 for i in indices[:k] if i is not INT)
  positions = [j for j, b in enumerate(is_int) if b]
  if not positions:
    return before
  contiguous = positions == list(range(positions[0], positions[-1] + 1))
  if not contiguous or positions[0] < k:
    return before + len(int_shape)
  return before


def _batch_indexers(size, ref, ref_dim, tree, idx, idx_dims):
  """The indexers reading the batched ref `ref` (batch axis `ref_dim`, or None).

  Returns (tree, operands, batch axis of the result).
  """
  if all(d is None for d in idx_dims):
    if ref_dim is None:  # only reached for reads of unbatched refs (no batched operand)
      return tree, list(idx), None
    new_tree, dim = [], ref_dim
    for ix in tree:
      indices = (*ix.indices[:dim], Slice(0, size), *ix.indices[dim:])
      shape = (*ix.shape[:dim], size, *ix.shape[dim:])
      new_tree.append(NDIndexer(indices, shape, ix.int_indexer_shape))
      dim = _out_position(indices, dim, ix.int_indexer_shape)
    return tuple(new_tree), list(idx), dim
  # Batched integer indices: every integer index becomes an array with a
  # leading batch axis; a batched ref is indexed along its batch axis by iota.
  if len(tree) != 1:
    raise NotImplementedError("vmap of a ref read or write through a view `ref.at[...]` "
                              "with batched indices is not implemented in xjax yet.")
  (ix,) = tree
  int_shape = (size, *ix.int_indexer_shape)
  ops = []
  for o, d in zip(idx, idx_dims):
    o = batching.move_to(o, d, 0, size) if d is not None else batching.broadcast(
        o, size, 0)
    ops.append(_broadcast_int(o, int_shape))
  indices, shape = list(ix.indices), list(ix.shape)
  if ref_dim is not None:
    iota = structural.iota(np.dtype(np.int32), size)
    iota = _broadcast_int(iota.reshape((size,) + (1,) * len(ix.int_indexer_shape)), int_shape)
    indices.insert(ref_dim, INT)
    shape.insert(ref_dim, size)
    n_before = sum(1 for i in indices[:ref_dim] if i is INT)
    ops.insert(n_before, iota)
  indices = tuple(indices)
  new = NDIndexer(indices, tuple(shape), int_shape)
  positions = [j for j, i in enumerate(indices) if i is INT]
  contiguous = positions == list(range(positions[0], positions[-1] + 1))
  out_dim = sum(1 for i in indices[:positions[0]] if i is not INT) if contiguous else 0
  return (new,), ops, out_dim


def _broadcast_int(x, shape):
  return broadcast_to(x, shape)


# ----------------------------------------------------------------------------
# Printing: ``c:f32[3] <- a[...]``, ``e:f32[3], a[...] <- a[...], d``, ``a[...] += d``


def _pp_operand(v, context) -> str:
  if type(v) is core.Literal:
    return str(np.asarray(v.val).item()) if np.shape(v.val) == () else "[...]"
  return context.name(v)


def _pp_slice(dim, s: Slice) -> str:
  start = "" if s.start == 0 else str(s.start)
  end = s.start + s.size
  return f"{start}:{'' if end == dim else end}"


def _pp_ref(ref, tree, idx, context) -> pp.Doc:
  text = context.name(ref)
  if not tree:
    return pp.text(text + "[...]")
  it = iter(idx)
  for ix in tree:
    parts = [_pp_operand(next(it), context) if i is INT else _pp_slice(d, i)
             for i, d in zip(ix.indices, ix.shape)]
    text += "[" + ",".join(parts) + "]"
  return pp.text(text)


def _get_pp(eqn, context) -> pp.Doc:
  (out,) = eqn.outvars
  ref, *idx = eqn.invars
  return pp.concat([jaxpr_pp.pp_vars([out], context, print_shapes=True), pp.text(" <- "),
                    _pp_ref(ref, eqn.params["tree"], idx, context)])


def _swap_pp(eqn, context) -> pp.Doc:
  (out,) = eqn.outvars
  ref, val, *idx = eqn.invars
  target = _pp_ref(ref, eqn.params["tree"], idx, context)
  if isinstance(out, core.DropVar) or context.names.get(out) == "_":
    return pp.concat([target, pp.text(" <- "), pp.text(context.name(val))])
  return pp.concat([jaxpr_pp.pp_vars([out], context, print_shapes=True), pp.text(", "), target,
                    pp.text(" <- "), target, pp.text(", "),
                    pp.text(context.name(val))])


def _addupdate_pp(eqn, context) -> pp.Doc:
  ref, val, *idx = eqn.invars
  return pp.concat([_pp_ref(ref, eqn.params["tree"], idx, context), pp.text(" += "),
                    pp.text(context.name(val))])


get_p.pp_eqn = _get_pp
swap_p.pp_eqn = _swap_pp
addupdate_p.pp_eqn = _addupdate_pp


# ----------------------------------------------------------------------------
# broadcast_to: integer indexers broadcast to one shape (as JAX's state module does)


def broadcast_to(x, shape):
  """`x` broadcast to `shape` (the ``broadcast_to`` primitive of integer indexers)."""
  shape = tuple(shape)
  if tuple(core.get_aval(x).shape) == shape:
    return x
  return broadcast_to_p.bind(x, shape=shape)


broadcast_to_p = core.Primitive("broadcast_to")


@broadcast_to_p.def_abstract_eval
def _broadcast_to_abstract_eval(aval, *, shape):
  return core.ShapedArray(shape, aval.dtype, aval.weak_type)


@broadcast_to_p.def_impl
def _broadcast_to_impl(x, *, shape):
  return lax_numpy.broadcast_to(x, shape)


ad.deflinear(broadcast_to_p, lambda ct, x, *, shape: [_unbroadcast(ct, x.aval)])


def _unbroadcast(ct, aval):
  lead = len(ct.shape) - len(aval.shape)
  axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(aval.shape)
                                    if d == 1 and ct.shape[lead + i] != 1)
  return reductions.sum(ct, axis=axes).reshape(aval.shape) if axes else ct


@broadcast_to_p.def_batch
def _broadcast_to_batch(axis_data, args, dims, *, shape):
  (x,), (d,) = args, dims
  x = batching.moveaxis(x, d, 0)
  x = x.reshape((x.shape[0],) + (1,) * (len(shape) - x.ndim + 1) + x.shape[1:])
  return broadcast_to_p.bind(x, shape=(axis_data.size, *shape)), 0


STATE_PRIMITIVES = frozenset({new_ref_p, empty_ref_p, free_ref_p, freeze_p, get_p, swap_p,
                              addupdate_p, broadcast_to_p})
for _p in STATE_PRIMITIVES:
  _p.ref_primitive = True  # `types.uses_state` finds them by this mark



# ----------------------------------------------------------------------------
# Indexers and views: ``ref[idx]``, ``ref.at[idx]``


def _concrete_int(x):
  if isinstance(x, (int, np.integer)):
    return int(x)
  if isinstance(x, core.Tracer):
    value = x.to_concrete_value()
    if value is None or np.shape(value):
      return None
    return int(np.asarray(value))
  if np.shape(x) == ():
    try:
      return int(np.asarray(x))
    except TypeError:
      return None
  return None


def make_indexer(idx, shape) -> tuple[NDIndexer | None, list]:
  """The `NDIndexer` and integer operands of a NumPy-style `idx` into `shape`.

  ``None``, ``...`` and ``()`` index the whole value: (None, []).

  Raises:
    ValueError: more than one ellipsis; more indices than dimensions; a slice
      with a step below 1; a concrete integer index out of bounds; integer
      indices whose shapes do not broadcast.
    TypeError: an index that is neither an integer, an integer array nor a slice.
  """
  if idx is None or idx is Ellipsis:
    return None, []
  if not isinstance(idx, tuple):
    idx = (idx,)
  if not idx:
    return None, []
  shape = tuple(shape)
  n_ellipsis = sum(i is Ellipsis for i in idx)
  if n_ellipsis > 1:
    raise ValueError("Only one ellipsis is supported.")
  if n_ellipsis:
    k = next(k for k, i in enumerate(idx) if i is Ellipsis)
    idx = (*idx[:k], *[slice(None)] * (len(shape) - len(idx) + 1), *idx[k + 1:])
  if len(idx) > len(shape):
    raise ValueError(f"`indices` must not be longer than `shape`: indices={idx}, "
                     f"shape={shape}")
  idx = (*idx, *[slice(None)] * (len(shape) - len(idx)))
  entries, operands = [], []
  for i, dim in zip(idx, shape):
    if isinstance(i, slice):
      entries.append(Slice.from_slice(i, dim))
      continue
    aval = i.aval if hasattr(i, "aval") else None
    if aval is None:
      try:
        aval = core.get_aval(i)
      except TypeError:
        aval = None
    if (aval is None or is_ref_aval(aval) or not (dtypes.issubdtype(aval.dtype, np.integer))
        or isinstance(i, bool)):
      raise TypeError(f"Ref indices must be integers, integer arrays, slices or ..., "
                      f"got {i!r} of type {type(i).__name__}.")
    value = _concrete_int(i) if aval.shape == () else None
    if value is not None and value >= dim:
      raise ValueError(f"Out of bound indexer: idx={value}, dim={dim}.")
    entries.append(INT)
    operands.append(i)
  shapes = [core.get_aval(o).shape for o in operands]
  try:
    int_shape = tuple(np.broadcast_shapes(*shapes)) if shapes else ()
  except ValueError:
    raise ValueError(f"Cannot broadcast shapes for indexing: {shapes}") from None
  if any(s != int_shape for s in shapes):
    operands = [broadcast_to(o, int_shape) for o in operands]
  return NDIndexer(tuple(entries), shape, int_shape), operands


# ----------------------------------------------------------------------------
# Ref methods: a concrete Ref's indexing is the state primitives


def _ref_getitem(self, idx):
  return ref_get(self, idx)


def _ref_setitem(self, idx, value):
  ref_set(self, idx, value)


def _ref_addupdate(self, x, idx=()):
  """``self[idx] += x`` in place."""
  ref_addupdate(self, idx, x)


Ref.__getitem__ = _ref_getitem
Ref.__setitem__ = _ref_setitem
Ref.addupdate = _ref_addupdate


class RefIndexer:
  """The object ``ref.at`` returns; ``ref.at[idx]`` is a `TransformedRef` view."""
  __slots__ = ("ref_or_view",)

  def __init__(self, ref_or_view):
    self.ref_or_view = ref_or_view

  def __getitem__(self, idx) -> TransformedRef:
    view = self.ref_or_view
    indexer, operands = make_indexer(idx if isinstance(idx, tuple) else (idx,), view.shape)
    if indexer is None:
      indexer = NDIndexer(tuple(Slice(0, d) for d in view.shape), tuple(view.shape), ())
    if isinstance(view, TransformedRef):
      return TransformedRef(view.ref, (*view.transforms, indexer),
                            (*view.operands, *operands))
    return TransformedRef(view, (indexer,), tuple(operands))


class TransformedRef:
  """A view of a ref through a chain of indexers (``ref.at[i].at[j]``).

  Reads and writes of the view read and write the underlying ref. Mirrors
  JAX's ``TransformedRef``.
  """
  __slots__ = ("ref", "transforms", "operands")

  def __init__(self, ref, transforms: tuple, operands: tuple):
    self.ref = ref
    self.transforms = transforms
    self.operands = operands

  @property
  def aval(self) -> AbstractRef:
    return AbstractRef(transform_aval(self.transforms, core.get_aval(self.ref).inner_aval))

  shape = property(lambda self: self.aval.shape)
  dtype = property(lambda self: self.aval.dtype)
  ndim = property(lambda self: len(self.shape))
  size = property(lambda self: math.prod(self.shape))

  @property
  def at(self) -> RefIndexer:
    return RefIndexer(self)

  def get(self, idx=()):
    return ref_get(self, idx)

  def set(self, value, idx=()):
    return ref_set(self, idx, value)

  def swap(self, value, idx=()):
    return ref_swap(self, idx, value)

  def addupdate(self, value, idx=()):
    return ref_addupdate(self, idx, value)

  __getitem__ = get

  def __setitem__(self, idx, value):
    self.set(value, idx)

  def __repr__(self):
    return f"TransformedRef(ref={self.ref!r}, transforms={self.transforms!r})"


def _transformed_ref_aval(_):
  raise TypeError("TransformedRefs cannot be abstractified.")


core.pytype_aval_mappings[TransformedRef] = _transformed_ref_aval


# ----------------------------------------------------------------------------
# Ref behaviour of tracers


def install_tracer_methods() -> None:
  """Makes tracers with an `AbstractRef` aval behave as refs.

  ``t[idx]``, ``t[idx] = v``, ``t.at``, ``t.get/set/swap/addupdate`` dispatch on
  the aval, as JAX's ``Tracer`` does. xjax installs the array operators on
  `core.Tracer` in `xjax._src.numpy.array_methods`; this wraps the indexing
  ones installed there (imported at the top of this module).
  """
  cls = core.Tracer
  if getattr(cls, "_ref_methods_installed", False):
    return
  array_getitem = cls.__getitem__
  array_setitem = cls.__setitem__
  array_at = cls.at

  def __getitem__(self, idx):
    if is_ref_aval(self.aval):
      return ref_get(self, idx)
    return array_getitem(self, idx)

  def __setitem__(self, idx, value):
    if is_ref_aval(self.aval):
      return ref_set(self, idx, value)
    return array_setitem(self, idx, value)

  def at(self):
    if is_ref_aval(self.aval):
      return RefIndexer(self)
    return array_at.fget(self)

  def __getattr__(self, name):
    # Only reached when normal lookup fails: the ref methods of ref tracers.
    if name in _REF_TRACER_METHODS and not name.startswith("_"):
      try:
        aval = object.__getattribute__(self, "aval")
      except AttributeError:
        aval = None
      if is_ref_aval(aval):
        return _REF_TRACER_METHODS[name].__get__(self)
    prop = getattr(type(self), name, None)
    if isinstance(prop, property):  # a property that raised: its own message (`sharding`)
      prop.fget(self)
    raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

  cls.__getitem__ = __getitem__
  cls.__setitem__ = __setitem__
  cls.at = property(at, doc=array_at.__doc__)
  cls.__getattr__ = __getattr__
  cls._ref_methods_installed = True


def _tracer_get(self, idx=()):
  return ref_get(self, idx)


def _tracer_set(self, value, idx=()):
  return ref_set(self, idx, value)


def _tracer_swap(self, value, idx=()):
  return ref_swap(self, idx, value)


def _tracer_addupdate(self, value, idx=()):
  ref_addupdate(self, idx, value)


_REF_TRACER_METHODS = {"get": _tracer_get, "set": _tracer_set, "swap": _tracer_swap,
                       "addupdate": _tracer_addupdate}

# ----------------------------------------------------------------------------
# Discharge rules: the functional meaning of each state primitive (see discharge.py)


@new_ref_p.def_discharge
def _new_ref_discharge(ref_ids, in_avals, args, *, memory_space, kind):
  (val,) = args
  return [None], [creation.asarray(val)]


@empty_ref_p.def_discharge
def _empty_ref_discharge(ref_ids, in_avals, args, *, ty, memory_space):
  return [], [structural.full(ty.shape, 0, ty.dtype)]


@free_ref_p.def_discharge
def _free_ref_discharge(ref_ids, in_avals, args):
  return [None], []


@freeze_p.def_discharge
def _freeze_discharge(ref_ids, in_avals, args):
  return [None], [args[0]]


@broadcast_to_p.def_discharge
def _broadcast_to_discharge(ref_ids, in_avals, args, *, shape):
  return [None], [lax_numpy.broadcast_to(args[0], shape)]


@get_p.def_discharge
def _get_discharge(ref_ids, in_avals, args, *, tree):
  x, *idx = args
  return [None] * len(args), [index_value(x, tree, idx)]


@swap_p.def_discharge
def _swap_discharge(ref_ids, in_avals, args, *, tree):
  x, val, *idx = args
  new, old = swap_value(x, val, tree, idx)
  return [new] + [None] * (len(args) - 1), [old]


@addupdate_p.def_discharge
def _addupdate_discharge(ref_ids, in_avals, args, *, tree):
  x, val, *idx = args
  return [addupdate_value(x, val, tree, idx)] + [None] * (len(args) - 1), []
