"""Windowed reductions: reduce_window and its monoid forms, and the select-and-scatter family.

A window of `window_dimensions` (spread by `window_dilation`) slides with
`window_strides` over the operand, after the operand is spread by
`base_dilation` and padded by `padding` (holes and padding add no elements);
each window position gives one output element, the initial value combined
with the window's elements.
Everything lowers to `stablehlo.reduce_window` or
`stablehlo.select_and_scatter`, with the combining function written in lax
ops and lowered into the region, as in `reductions.py`.

Differentiation follows JAX: reduce_window_sum is linear (its transpose pads
the cotangent and sums it back over windows); reduce_window_max and
reduce_window_min send each window's tangent from its selected element
(`select_and_gather_add`, whose transpose is `select_and_scatter_add`, and
vice versa); the generic reduce_window differentiates its combining function
inside a reduce_window over (primal, tangent) pairs, so it has forward mode
only, as in JAX.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from xjax._src import core
from xjax._src import executable_cache
from xjax._src import source_info
from xjax._src import stablehlo as hlo
from xjax._src import tree_util
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.lowering import lower_fun
from xjax._src.lax import elementwise as ew
from xjax._src.lax import reductions
from xjax._src.lax.misc_ops import padtype_to_pads
from xjax._src.lax.slicing import slice as lax_slice
from xjax._src.lax.structural import pad
from xjax._src.lax.utils import KINDS, standard_primitive

# ----------------------------------------------------------------------------
# Shape rules and shared helpers


def _dilate_shape(shape, dilation) -> tuple[int, ...]:
  """Each size d becomes 1 + dilation * (d - 1) (0 stays 0)."""
  if not all(d > 0 for d in dilation):
    raise TypeError(f"All dilations must be positive, got {tuple(dilation)}.")
  return tuple(max(0, 1 + k * (d - 1)) for d, k in zip(shape, dilation, strict=True))


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None) -> tuple[int, ...]:
  """The output shape of a windowed reduction.

  Args:
    operand_shape: the operand's shape.
    window_dimensions, window_strides: one positive int per dimension.
    padding: one ``(low, high)`` pair per dimension.
    base_dilation, window_dilation: one positive int per dimension, or None
      for no dilation.

  Returns:
    A tuple of ints: ``(dilated_size + low + high - dilated_window) // stride + 1``
    per dimension, or 0 where the window does not fit.

  Raises:
    TypeError: a dilation is not positive.

  Mirrors `jax.lax.reduce_window_shape_tuple`.
  """
  if base_dilation is not None:
    operand_shape = _dilate_shape(operand_shape, base_dilation)
  if window_dilation is not None:
    window_dimensions = _dilate_shape(window_dimensions, window_dilation)
  padded = [d + lo + hi for d, (lo, hi) in zip(operand_shape, padding)]
  return tuple(max(0, (d - w) // s + 1)
               for d, w, s in zip(padded, window_dimensions, window_strides))


def _check_window_arg(fun_name, arg_name, obj, positive) -> tuple[int, ...]:
  dims = core.check_shapelike(fun_name, arg_name, obj)
  if positive and not all(d >= 1 for d in dims):
    raise TypeError(f"{fun_name} {arg_name} must have every element be strictly positive, "
                    f"got {tuple(obj)}.")
  return dims


def _common_shape_rule(operand, window_dimensions, window_strides, padding, base_dilation,
                       window_dilation) -> tuple[int, ...]:
  """JAX's checks of the window params, then the output shape."""
  _check_window_arg("reduce_window", "window_dimensions", window_dimensions, True)
  _check_window_arg("reduce_window", "window_strides", window_strides, True)
  _check_window_arg("reduce_window", "base_dilation", base_dilation, False)
  _check_window_arg("reduce_window", "window_dilation", window_dilation, False)
  if operand.ndim != len(window_dimensions):
    raise TypeError("reduce_window got the wrong number of window_dimensions for operand: "
                    f"got operand shape {operand.shape} with window_dimensions "
                    f"{window_dimensions}.")
  for name, value in (("window_strides", window_strides), ("base_dilation", base_dilation),
                      ("window_dilation", window_dilation)):
    if len(value) != len(window_dimensions):
      raise TypeError(f"reduce_window got inconsistent {name} and window_dimensions: got "
                      f"{name} {value} and window_dimensions {window_dimensions}.")
  if len(padding) != len(window_dimensions):
    raise ValueError("reduce_window got inconsistent padding and window_dimensions: got "
                     f"padding {padding} and window_dimensions {window_dimensions}.")
  return reduce_window_shape_tuple(operand.shape, window_dimensions, window_strides, padding,
                                   base_dilation, window_dilation)


def _ints(values) -> tuple[int, ...]:
  return tuple(operator.index(v) for v in values)


def _canonical_padding(padding) -> tuple[tuple[int, int], ...]:
  return tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)


def _window_params(window_dimensions, window_strides, padding, base_dilation,
                   window_dilation) -> dict:
  """The params of a windowed primitive, as hashable tuples of Python ints (None: all ones)."""
  ones = (1,) * len(window_dimensions)
  return dict(window_dimensions=_ints(window_dimensions),
              window_strides=_ints(window_strides),
              padding=_canonical_padding(padding),
              base_dilation=ones if base_dilation is None else _ints(base_dilation),
              window_dilation=ones if window_dilation is None else _ints(window_dilation))


def _padding_attr(padding) -> str:
  if not padding:
    return "dense<> : tensor<0x2xi64>"
  return hlo.dense_i64(padding, (len(padding), 2))


def _reduce_window_op(ctx, operands, inits, region, *, window_dimensions, window_strides,
                      padding, base_dilation, window_dilation):
  """Emits one `stablehlo.reduce_window` (attributes in MLIR's sorted order)."""
  attrs = (f"base_dilations = {hlo.i64_array(base_dilation)}, "
           f"padding = {_padding_attr(padding)}, "
           f"window_dilations = {hlo.i64_array(window_dilation)}, "
           f"window_dimensions = {hlo.i64_array(window_dimensions)}, "
           f"window_strides = {hlo.i64_array(window_strides)}")
  return ctx.op("stablehlo.reduce_window", [*operands, *inits],
                [hlo.aval_type(a) for a in ctx.avals_out], attrs, [region])


def _with_leading_window(params) -> dict:
  """Window params for an operand with one more (batch) dimension in front."""
  return dict(window_dimensions=(1, *params["window_dimensions"]),
              window_strides=(1, *params["window_strides"]),
              padding=((0, 0), *params["padding"]),
              **{k: (1, *params[k]) for k in ("base_dilation", "window_dilation") if k in params})


@functools.lru_cache(maxsize=512)
def _window_reduction_jaxpr(computation, init_avals, init_tree, context):
  """`computation` traced on pytrees of scalars (cached, so equal calls share one jaxpr)."""
  in_tree = tree_util.tree_structure((init_tree.unflatten(init_avals),) * 2)

  def flat_computation(*flat_args):
    xs, ys = tree_util.tree_unflatten(in_tree, flat_args)
    flat_outs, out_tree = tree_util.tree_flatten(computation(xs, ys))
    for out in flat_outs:
      if not core.valid_jaxtype(out):
        raise TypeError(f"function {source_info.fun_sourceinfo(computation)} traced for "
                        f"reduce_window comp returned a value of type {type(out)}, which is "
                        "not a valid JAX type")
    store.append(out_tree)
    return flat_outs

  store = []
  closed = pe.trace_to_jaxpr(flat_computation, [*init_avals, *init_avals])
  if any(isinstance(c, core.Tracer) for c in closed.consts):
    raise NotImplementedError("Reduction computations can't close over Tracers.")
  return closed, store[0]


executable_cache.on_clear(_window_reduction_jaxpr.cache_clear)


def _scalar_jaxpr(computation, aval):
  """(jaxpr, consts) of a combining function of two scalars of `aval` returning one."""
  closed, _ = _window_reduction_jaxpr(computation, (aval,), tree_util.tree_structure(0),
                                     core.trace_context())
  return closed.jaxpr, tuple(closed.consts)


def _hashable_consts(name, consts) -> tuple:
  consts = tuple(consts)
  try:
    hash(consts)
  except TypeError:
    raise TypeError("As of JAX v0.7, parameters to jaxpr equations must have __hash__ and "
                    f"__eq__ methods. In a call to primitive {name}, the value of parameter "
                    f"consts was not hashable: {consts}") from None
  return consts


# ----------------------------------------------------------------------------
# reduce_window: the generic windowed reduction


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
  """Reduces each (padded, dilated) window of `operand` with `computation`.

  ``computation(xs, ys)`` combines two pytrees of scalars shaped like
  `init_value`; with `init_value` it must form a monoid, since XLA combines the
  window's elements in any order. A single operand reduced with `lax.add`
  from 0, or `lax.max`/`lax.min` from their identities (-inf/+inf, the
  integer extremes, False/True), becomes `reduce_window_sum_p`,
  `reduce_window_max_p` or `reduce_window_min_p`, as in JAX; anything else
  binds the generic `reduce_window_p`.

  Args:
    operand: an array, or a pytree of arrays of equal shapes.
    init_value: a scalar, or a pytree of scalars with operand's structure and
      dtypes, combined in once per window (padding and the holes of
      `base_dilation` add no elements, which for an identity is the same as
      holding it).
    computation: the combining function.
    window_dimensions: the window size, one positive int per dimension.
    window_strides: the step between windows, one positive int per dimension
      (default: all 1).
    padding: 'VALID', 'SAME' or 'SAME_LOWER' (see `lax.padtype_to_pads`), or
      one ``(low, high)`` pair of ints per dimension.
    base_dilation: the operand's dilation, one positive int per dimension
      (default: all 1).
    window_dilation: the window's dilation, one positive int per dimension
      (default: all 1).

  Returns:
    A pytree with operand's structure of arrays of shape
    ``reduce_window_shape_tuple(...)`` and the operands' dtypes.

  Raises:
    ValueError: the structures of operand, init_value and the computation's
      result differ, or there is no operand.
    TypeError: a window param is malformed or of the wrong length, an init
      value is not a scalar or its dtype differs from its operand's.
    RuntimeError: `padding` is an unknown string.

  >>> import xjax.numpy as jnp
  >>> from xjax import lax
  >>> reduce_window(jnp.arange(5.0), 0.0, lax.add, (2,))
  Array([1., 3., 5., 7.], dtype=float32)

  Mirrors `jax.lax.reduce_window`.
  """
  flat_operands, operand_tree = tree_util.tree_flatten(operand)
  flat_inits, init_tree = tree_util.tree_flatten(init_value)
  if operand_tree != init_tree:
    raise ValueError("Operands must have the same tree structure as init_values: "
                     f"{operand_tree} vs. {init_tree}")
  if not flat_operands:
    raise ValueError("reduce_window must have at least one operand.")
  if window_strides is None:
    window_strides = (1,) * len(window_dimensions)
  # Checked before any padding arithmetic divides by them (JAX's TypeError).
  _check_window_arg("reduce_window", "window_strides", window_strides, True)
  if isinstance(padding, str):
    dilated_window = (window_dimensions if window_dilation is None
                      else _dilate_shape(window_dimensions, window_dilation))
    padding = padtype_to_pads(core.get_aval(flat_operands[0]).shape, dilated_window,
                              window_strides, padding)
  params = _window_params(window_dimensions, window_strides, padding, base_dilation,
                          window_dilation)
  monoid_reducer = _monoid_window_reducer(computation, flat_inits)
  if monoid_reducer is not None:
    out = monoid_reducer(flat_operands[0], **params)
    return tree_util.tree_unflatten(operand_tree, [out])
  init_avals = tuple(core.get_aval(x) for x in flat_inits)
  closed, out_tree = _window_reduction_jaxpr(computation, init_avals, init_tree,
                                             core.trace_context())
  if operand_tree != out_tree:
    raise ValueError("reduce_window output must have the same tree structure as the operands "
                     f"{operand_tree} vs. {out_tree}")
  outs = reduce_window_p.bind(*flat_operands, *flat_inits, jaxpr=closed.jaxpr,
                              consts=_hashable_consts("reduce_window", closed.consts), **params)
  return tree_util.tree_unflatten(out_tree, outs)


def _monoid_window_reducer(computation, flat_inits):
  """The monoid primitive's helper `computation` from this init value amounts to, or None."""
  if len(flat_inits) != 1:
    return None
  value = reductions._concrete_scalar(flat_inits[0])
  if value is None:
    return None
  dtype = core.get_aval(flat_inits[0]).dtype
  for op, identity, reducer in ((ew.add, reductions._sum_identity, _reduce_window_sum),
                                (ew.max, reductions._max_identity, _reduce_window_max),
                                (ew.min, reductions._min_identity, _reduce_window_min)):
    if computation is op:
      return reducer if np.equal(value, identity(dtype)) else None
  return None


def _reduce_window_abstract_eval(*avals, jaxpr, consts, window_dimensions, window_strides,
                                 padding, base_dilation, window_dilation):
  operands, inits = avals[:len(avals) // 2], avals[len(avals) // 2:]
  if any(o.dtype != i.dtype for o, i in zip(operands, inits, strict=True)):
    raise TypeError("reduce_window got inconsistent dtypes for operands and init_values: got "
                    f"operand dtypes {[o.dtype for o in operands]} and init_value dtypes "
                    f"{[i.dtype for i in inits]}.")
  if any(i.shape != () for i in inits):
    raise TypeError("reduce_window expected init_values to be scalars but init_values have "
                    f"shapes {[i.shape for i in inits]}.")
  if len({o.shape for o in operands}) != 1:
    raise TypeError("reduce_window operands must have equal shapes, got "
                    f"{[o.shape for o in operands]}.")
  shape = _common_shape_rule(operands[0], window_dimensions, window_strides, padding,
                             base_dilation, window_dilation)
  return [core.ShapedArray(shape, o.dtype) for o in operands]


def _reduce_window_jvp(primals, tangents, *, jaxpr, consts, **params):
  """JAX's rule: a reduce_window over (primals, tangents) of the computation's JVP."""
  n = len(primals) // 2
  operands, inits = primals[:n], primals[n:]
  if any(type(t) is not ad.Zero for t in tangents[n:]):
    raise TypeError("reduce_window jvp does not support non-zero init_value_tangent.")
  operand_tangents = [ad.instantiate_zeros(t) for t in tangents[:n]]
  init_tangents = [ad.instantiate_zeros(t) for t in tangents[n:]]
  jvp_closed = ad.jvp_jaxpr(core.ClosedJaxpr(jaxpr, list(consts)), [True] * (2 * n))

  def combine(left, right):
    # left, right: (primals..., tangents...) of one side; the jvp jaxpr takes
    # (left primals, right primals, left tangents, right tangents).
    return core.jaxpr_as_fun(jvp_closed)(*left[:n], *right[:n], *left[n:], *right[n:])

  outs = reduce_window([*operands, *operand_tangents], [*inits, *init_tangents], combine,
                       params["window_dimensions"], params["window_strides"], params["padding"],
                       params["base_dilation"], params["window_dilation"])
  return outs[:n], outs[n:]


def _reduce_window_batch(axis_data, args, dims, *, jaxpr, consts, **params):
  """Batch axes go first; the window gets a size-1 dimension there."""
  n = len(args) // 2
  if any(d is not batching.not_mapped for d in dims[n:]):
    raise NotImplementedError("reduce_window batching is not implemented for initial values")
  operands = [batching.bdim_at_front(x, d, axis_data.size) for x, d in zip(args[:n], dims[:n])]
  outs = reduce_window_p.bind(*operands, *args[n:], jaxpr=jaxpr, consts=consts,
                              **_with_leading_window(params))
  return outs, [0] * n


def _reduce_window_lowering(ctx, *args, jaxpr, consts, **params):
  n = len(args) // 2
  region = reductions.jaxpr_region(ctx, core.ClosedJaxpr(jaxpr, list(consts)))
  return _reduce_window_op(ctx, args[:n], args[n:], region, **params)


reduce_window_p = standard_primitive("reduce_window", _reduce_window_abstract_eval,
                                     _reduce_window_lowering, multiple_results=True)
reduce_window_p.def_jvp(_reduce_window_jvp)
reduce_window_p.def_batch(_reduce_window_batch)


# ----------------------------------------------------------------------------
# reduce_window_sum, reduce_window_max, reduce_window_min: the monoid windowed reductions


def _monoid_abstract_eval(name, check_number):
  def abstract_eval(operand, **params):
    if check_number and operand.dtype not in KINDS["num"]:
      raise TypeError(f"operand to {name} must have a number dtype, got {operand.dtype.name}")
    return core.ShapedArray(_common_shape_rule(operand, **params), operand.dtype,
                            operand.weak_type)
  return abstract_eval


def _monoid_lowering(identity, combine):
  """A `stablehlo.reduce_window` of `combine` from its identity."""
  def lowering(ctx, x, **params):
    dtype = ctx.avals_in[0].dtype
    scalar = core.ShapedArray((), dtype)
    region = reductions.fun_region(ctx, lambda a, b: [combine(a, b)], [scalar, scalar])
    init = ctx.constant(identity(dtype))
    return _reduce_window_op(ctx, [x], [init], region, **params)[0]
  return lowering


def _monoid_batch(helper):
  """The batch axis stays in place; the window gets a size-1 dimension there."""
  def rule(axis_data, args, dims, **params):
    (x,), (bdim,) = args, dims
    params = {k: (*v[:bdim], (0, 0) if k == "padding" else 1, *v[bdim:])
              for k, v in params.items()}
    return helper(x, **params), bdim
  return rule


def _reduce_window_sum(operand, window_dimensions, window_strides, padding, base_dilation=None,
                       window_dilation=None):
  """Binds `reduce_window_sum_p` (the sum of each window; padding counts as 0)."""
  return reduce_window_sum_p.bind(operand, **_window_params(
      window_dimensions, window_strides, padding, base_dilation, window_dilation))


def _conv_vjp_lhs_padding(in_shape, window_dimensions, window_strides, out_shape, padding,
                          lhs_dilation, rhs_dilation):
  """The padding that makes a strided window sum the transpose of a windowed reduction."""
  lhs = _dilate_shape(in_shape, lhs_dilation)
  rhs = _dilate_shape(window_dimensions, rhs_dilation)
  out = _dilate_shape(out_shape, window_strides)
  # NumPy ints, as in JAX (they show as np.int64(...) in the printed pad params)
  before = np.subtract(rhs, [lo for lo, _ in padding], dtype=np.int64) - 1
  after = np.add(lhs, rhs, dtype=np.int64) - 1 - np.array(out, np.int64) - before
  return list(zip(before, after))


def _reduce_window_sum_transpose(ct, operand, *, window_dimensions, window_strides, padding,
                                 base_dilation, window_dilation):
  # Each input element is summed into the windows that cover it: spread the
  # cotangent back by the strides, pad it, and sum windows with stride base_dilation.
  in_shape = operand.aval.shape
  pads = _conv_vjp_lhs_padding(in_shape, window_dimensions, window_strides,
                               core.get_aval(ct).shape, padding, base_dilation, window_dilation)
  config = [(lo, hi, s - 1) for (lo, hi), s in zip(pads, window_strides)]
  padded = pad(ct, ew._const(ct, 0), config)
  ones = (1,) * len(in_shape)
  out = _reduce_window_sum(padded, window_dimensions, base_dilation, [(0, 0)] * len(in_shape),
                           base_dilation=ones, window_dilation=window_dilation)
  assert core.get_aval(out).shape == in_shape, ("internal: transpose shape", out, in_shape)
  return [out]


reduce_window_sum_p = standard_primitive(
    "reduce_window_sum", _monoid_abstract_eval("reduce_window_sum", True),
    _monoid_lowering(reductions._sum_identity, ew.add))
ad.deflinear(reduce_window_sum_p, _reduce_window_sum_transpose)
reduce_window_sum_p.def_batch(_monoid_batch(_reduce_window_sum))


def _reduce_window_max(operand, window_dimensions, window_strides, padding, base_dilation=None,
                       window_dilation=None):
  """Binds `reduce_window_max_p` (the maximum of each window; padding counts as -inf)."""
  return reduce_window_max_p.bind(operand, **_window_params(
      window_dimensions, window_strides, padding, base_dilation, window_dilation))


def _chooser_jvp(select_prim):
  """The tangent at each window's selected element (the max for `ge`, the min for `le`)."""
  def jvp(t, operand, **params):
    return _select_and_gather_add(t, operand, select_prim, **params)
  return jvp


reduce_window_max_p = standard_primitive(
    "reduce_window_max", _monoid_abstract_eval("reduce_window_max", False),
    _monoid_lowering(reductions._max_identity, reductions._max_combine))
ad.defjvp(reduce_window_max_p, _chooser_jvp(ew.ge_p))
reduce_window_max_p.def_batch(_monoid_batch(_reduce_window_max))


def _reduce_window_min(operand, window_dimensions, window_strides, padding, base_dilation=None,
                       window_dilation=None):
  """Binds `reduce_window_min_p` (the minimum of each window; padding counts as +inf)."""
  return reduce_window_min_p.bind(operand, **_window_params(
      window_dimensions, window_strides, padding, base_dilation, window_dilation))


reduce_window_min_p = standard_primitive(
    "reduce_window_min", _monoid_abstract_eval("reduce_window_min", False),
    _monoid_lowering(reductions._min_identity, reductions._min_combine))
ad.defjvp(reduce_window_min_p, _chooser_jvp(ew.le_p))
reduce_window_min_p.def_batch(_monoid_batch(_reduce_window_min))


# ----------------------------------------------------------------------------
# select_and_scatter: scatter `source` to the element each window selects


def _select_and_scatter(operand, select, window_dimensions, window_strides, padding, source,
                        init_value, scatter):
  """Binds `select_and_scatter_p`: each window of operand picks one element with `select`
  (a scalar predicate "x is preferred to y"), and source's value for that window is
  combined there with `scatter`; unpicked elements hold `init_value`."""
  aval = core.get_aval(init_value)
  select_jaxpr, select_consts = _scalar_jaxpr(select, aval)
  scatter_jaxpr, scatter_consts = _scalar_jaxpr(scatter, aval)
  return select_and_scatter_p.bind(
      operand, source, init_value, select_jaxpr=select_jaxpr,
      select_consts=_hashable_consts("select_and_scatter", select_consts),
      scatter_jaxpr=scatter_jaxpr,
      scatter_consts=_hashable_consts("select_and_scatter", scatter_consts),
      window_dimensions=_ints(window_dimensions), window_strides=_ints(window_strides),
      padding=_canonical_padding(padding))


def _select_and_scatter_abstract_eval(operand, source, init_value, *, select_jaxpr,
                                      select_consts, scatter_jaxpr, scatter_consts,
                                      window_dimensions, window_strides, padding):
  _check_window_arg("select_and_scatter", "window_dimensions", window_dimensions, False)
  _check_window_arg("select_and_scatter", "window_strides", window_strides, False)
  if len(window_dimensions) != len(window_strides):
    raise TypeError("select_and_scatter got inconsistent window_strides and window_dimensions: "
                    f"got window_strides {window_strides} and window_dimensions "
                    f"{window_dimensions}.")
  return core.ShapedArray(operand.shape, operand.dtype,
                          operand.weak_type and source.weak_type and init_value.weak_type)


def _select_and_scatter_batch(axis_data, args, dims, **params):
  """Batch axes of operand and source go first; the window gets a size-1 dimension there."""
  (operand, source, init_value), (o_dim, s_dim, i_dim) = args, dims
  if i_dim is not batching.not_mapped:
    raise NotImplementedError("select_and_scatter batching is not implemented for initial "
                              "values")
  operand = batching.bdim_at_front(operand, o_dim, axis_data.size)
  source = batching.bdim_at_front(source, s_dim, axis_data.size)
  window = _with_leading_window(params)
  return select_and_scatter_p.bind(operand, source, init_value, **{**params, **window}), 0


def _select_and_scatter_lowering(ctx, operand, source, init_value, *, select_jaxpr,
                                 select_consts, scatter_jaxpr, scatter_consts,
                                 window_dimensions, window_strides, padding):
  select = reductions.jaxpr_region(ctx, core.ClosedJaxpr(select_jaxpr, list(select_consts)))
  scatter = reductions.jaxpr_region(ctx, core.ClosedJaxpr(scatter_jaxpr, list(scatter_consts)))
  attrs = (f"padding = {_padding_attr(padding)}, "
           f"window_dimensions = {hlo.i64_array(window_dimensions)}, "
           f"window_strides = {hlo.i64_array(window_strides)}")
  return ctx.op1("stablehlo.select_and_scatter", [operand, source, init_value],
                 hlo.aval_type(ctx.avals_out[0]), attrs, [select, scatter])


select_and_scatter_p = standard_primitive("select_and_scatter",
                                          _select_and_scatter_abstract_eval,
                                          _select_and_scatter_lowering)
select_and_scatter_p.def_batch(_select_and_scatter_batch)


# ----------------------------------------------------------------------------
# select_and_scatter_add: the transpose of a max/min pool's tangent map


def _select_and_scatter_add(source, operand, select_prim, window_dimensions, window_strides,
                            padding):
  """Binds `select_and_scatter_add_p`: adds each window's `source` value at the element
  of `operand` that window selects (its max for `ge_p`, its min for `le_p`)."""
  return select_and_scatter_add_p.bind(
      source, operand, select_prim=select_prim, window_dimensions=_ints(window_dimensions),
      window_strides=_ints(window_strides), padding=_canonical_padding(padding))


def _select_and_scatter_add_abstract_eval(source, operand, *, select_prim, window_dimensions,
                                          window_strides, padding):
  return core.ShapedArray(operand.shape, source.dtype, source.weak_type and operand.weak_type)


def _select_and_scatter_add_jvp(primals, tangents, *, select_prim, **params):
  # Linear in source; the selection is piecewise constant in operand.
  source, operand = primals
  out = _select_and_scatter_add(source, operand, select_prim, **params)
  t_source = tangents[0]
  if type(t_source) is ad.Zero:
    return out, ad.Zero.from_primal_value(out)
  return out, _select_and_scatter_add(t_source, operand, select_prim, **params)


def _select_and_scatter_add_transpose(ct, source, operand, *, select_prim, window_dimensions,
                                      window_strides, padding):
  assert ad.is_undefined_primal(source) and not ad.is_undefined_primal(operand), (
      "internal: select_and_scatter_add transposed in operand")
  if type(ct) is ad.Zero:
    return [ad.Zero(source.aval), None]
  ones = (1,) * len(window_dimensions)
  return [_select_and_gather_add(ct, operand, select_prim, window_dimensions, window_strides,
                                 padding, ones, ones), None]


def _select_and_scatter_add_batch(axis_data, args, dims, *, select_prim, **params):
  source, operand = (batching.bdim_at_front(x, d, axis_data.size) for x, d in zip(args, dims))
  return _select_and_scatter_add(source, operand, select_prim,
                                 **_with_leading_window(params)), 0


def _select_and_scatter_add_impl(source, operand, *, select_prim, window_dimensions,
                                 window_strides, padding):
  """Pads operand with the selection's identity (XLA's CPU and GPU backends mishandle
  padded select_and_scatter), scatters with no padding, and slices the padding off."""
  dtype = core.get_aval(source).dtype
  identity = reductions._max_identity if select_prim is ew.ge_p else reductions._min_identity
  padded = pad(operand, identity(dtype), [(lo, hi, 0) for lo, hi in padding])
  out = _select_and_scatter(padded, lambda x, y: select_prim.bind(x, y), window_dimensions,
                            window_strides, [(0, 0)] * len(padding), source,
                            np.zeros((), dtype),
                            ew.bitwise_or if dtype == np.bool_ else ew.add)
  shape = core.get_aval(operand).shape
  return lax_slice(out, [lo for lo, _ in padding],
                   [lo + d for (lo, _), d in zip(padding, shape)])


select_and_scatter_add_p = standard_primitive(
    "select_and_scatter_add", _select_and_scatter_add_abstract_eval,
    lower_fun(_select_and_scatter_add_impl, multiple_results=False))
select_and_scatter_add_p.def_jvp(_select_and_scatter_add_jvp)
select_and_scatter_add_p.def_transpose(_select_and_scatter_add_transpose)
select_and_scatter_add_p.def_batch(_select_and_scatter_add_batch)


# ----------------------------------------------------------------------------
# select_and_gather_add: the tangent map of a max/min pool


def _select_and_gather_add(tangents, operand, select_prim, window_dimensions, window_strides,
                           padding, base_dilation, window_dilation):
  """Binds `select_and_gather_add_p`: for each window, the element of `tangents` at the
  position where `operand` is selected (its max for `ge_p`, its min for `le_p`)."""
  return select_and_gather_add_p.bind(
      tangents, operand, select_prim=select_prim,
      **_window_params(window_dimensions, window_strides, padding, base_dilation,
                       window_dilation))


def _select_and_gather_add_abstract_eval(tangents, operand, *, select_prim, **params):
  if tangents.shape != operand.shape:
    raise TypeError("select_and_gather_add tangents and operand shapes must match, got "
                    f"{tangents.shape} and {operand.shape}.")
  return core.ShapedArray(_common_shape_rule(operand, **params), tangents.dtype,
                          tangents.weak_type and operand.weak_type)


def _select_and_gather_add_jvp(primals, tangents, *, select_prim, **params):
  # Linear in tangents; the selection is piecewise constant in operand.
  source, operand = primals
  out = _select_and_gather_add(source, operand, select_prim, **params)
  t_source = tangents[0]
  if type(t_source) is ad.Zero:
    return out, ad.Zero.from_primal_value(out)
  return out, _select_and_gather_add(t_source, operand, select_prim, **params)


def _select_and_gather_add_transpose(ct, tangents, operand, *, select_prim, window_dimensions,
                                     window_strides, padding, base_dilation, window_dilation):
  assert ad.is_undefined_primal(tangents) and not ad.is_undefined_primal(operand), (
      "internal: select_and_gather_add transposed in operand")
  if any(d != 1 for d in window_dilation):
    raise NotImplementedError("VJP not implemented for select_and_gather (MaxPool) with window "
                              f"dilation, got window_dilation={window_dilation}.")
  if type(ct) is ad.Zero:
    return [ad.Zero(tangents.aval), None]
  dilated = any(d != 1 for d in base_dilation)
  if dilated:  # the holes of the dilation hold the identity, so no window selects them
    identity = (reductions._max_identity if select_prim is ew.ge_p
                else reductions._min_identity)
    operand = pad(operand, identity(core.get_aval(operand).dtype),
                  [(0, 0, d - 1) for d in base_dilation])
  out = _select_and_scatter_add(ct, operand, select_prim, window_dimensions, window_strides,
                                padding)
  if dilated:
    shape = core.get_aval(out).shape
    out = lax_slice(out, (0,) * len(shape), shape, base_dilation)
  return [out, None]


def _select_and_gather_add_batch(axis_data, args, dims, *, select_prim, **params):
  tangents, operand = (batching.bdim_at_front(x, d, axis_data.size) for x, d in zip(args, dims))
  return _select_and_gather_add(tangents, operand, select_prim,
                                **_with_leading_window(params)), 0


def _select_and_gather_add_impl(tangents, operand, *, select_prim, window_dimensions,
                                window_strides, padding, base_dilation, window_dilation):
  """A reduce_window over (operand, tangent) pairs keeping the pair whose operand is selected."""
  def reducer(x, y):
    (kx, vx), (ky, vy) = x, y
    which = select_prim.bind(kx, ky)
    return ew.select_n(which, ky, kx), ew.select_n(which, vy, vx)

  dtype = core.get_aval(operand).dtype
  init = -np.inf if select_prim is ew.ge_p else np.inf
  _, out = reduce_window((operand, tangents), (np.array(init, dtype), np.array(0, dtype)),
                         reducer, window_dimensions, window_strides, padding, base_dilation,
                         window_dilation)
  return out


select_and_gather_add_p = standard_primitive(
    "select_and_gather_add", _select_and_gather_add_abstract_eval,
    lower_fun(_select_and_gather_add_impl, multiple_results=False))
select_and_gather_add_p.def_jvp(_select_and_gather_add_jvp)
select_and_gather_add_p.def_transpose(_select_and_gather_add_transpose)
select_and_gather_add_p.def_batch(_select_and_gather_add_batch)
