"""Small lax primitives and helpers: mulhi, the total-order comparisons, optimization
barriers, stage, dce_sink, empty, the XLA random-number primitives, and the
helpers broadcast_like, padtype_to_pads and shape_as_value.

Each primitive is one card (wrapper, `_p`, abstract eval with JAX's errors,
lowering, and its derivative and batching rules). The random primitives are
XLA's stateful `rng` and stateless `rng_bit_generator`; their bits are XLA's,
so results equal JAX's on the same backend.
"""
from __future__ import annotations

import enum
import operator

import numpy as np

from xjax._src import core
from xjax._src import dispatch
from xjax._src import dtypes
from xjax._src import stablehlo as hlo
from xjax._src import tree_util
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import partial_eval as pe
from xjax._src.lax import elementwise as ew
from xjax._src.lax import slicing
from xjax._src.lax import structural
from xjax._src.lax.utils import KINDS, emit_elementwise, naryop_abstract_eval, standard_primitive
from xjax._src.numpy import util

# ----------------------------------------------------------------------------
# mulhi


def mulhi(x, y, /):
  """Elementwise high half of the product: the upper N bits of the 2N-bit x * y.

  Args:
    x, y: integer arrays of one dtype and equal shapes (a rank-0 operand or
      Python scalar broadcasts).

  Returns:
    An array of the common shape and dtype (signed for signed operands).

  Raises:
    TypeError: the dtypes differ or are not integers, or the shapes differ.

  >>> import xjax.numpy as jnp
  >>> mulhi(jnp.uint32(2**31), jnp.uint32(6))
  Array(3, dtype=uint32)

  Mirrors `jax.lax.mulhi`.
  """
  return mulhi_p.bind(*ew._coerce_scalars(x, y))


def _mulhi_abstract_eval(x, y):
  # JAX's message has no tip here: jnp has no mulhi.
  if x.dtype != y.dtype and x.dtype in KINDS["int"] and y.dtype in KINDS["int"]:
    raise TypeError(f"lax.mulhi requires arguments to have the same dtypes, got "
                    f"{x.dtype.name}, {y.dtype.name}.")
  return naryop_abstract_eval("mulhi", ("int", "int"))(x, y)


mulhi_p = standard_primitive("mulhi", _mulhi_abstract_eval, emit_elementwise("chlo.mulhi"))
ad.defjvp_zero(mulhi_p)
batching.defbroadcasting(mulhi_p)

# ----------------------------------------------------------------------------
# eq_to, le_to, lt_to: comparisons in IEEE total order
#
# -NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN; so eq_to(NaN, NaN) holds and
# eq_to(-0.0, 0.0) does not. JAX has only the primitives (no wrappers).


def _total_order_lowering(direction):
  def lowering(ctx, x, y):
    out = ctx.avals_out[0]
    dtype = ctx.avals_in[0].dtype
    x = ctx.broadcast_to(x, ctx.avals_in[0], out)
    y = ctx.broadcast_to(y, ctx.avals_in[1], out)
    bool_type = hlo.aval_type(out)

    def compare(a, b, compare_type):
      return ctx.op1("stablehlo.compare", [a, b], bool_type,
                     f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
                     f"compare_type = #stablehlo<comparison_type {compare_type}>")
    if dtype.kind == "c":  # equal in total order: both parts equal (only eq_to accepts complex)
      part = hlo.tensor_type(out.shape, np.finfo(dtype).dtype)
      re = [ctx.op1("stablehlo.real", [v], part) for v in (x, y)]
      im = [ctx.op1("stablehlo.imag", [v], part) for v in (x, y)]
      return ctx.op1("stablehlo.and", [compare(*re, "TOTALORDER"), compare(*im, "TOTALORDER")],
                     bool_type)
    kind = hlo.comparison_type(dtype)
    return compare(x, y, "TOTALORDER" if kind == "FLOAT" else kind)
  return lowering


def _total_order_primitive(name, kinds, direction):
  prim = standard_primitive(name, naryop_abstract_eval(name, (kinds, kinds), ew._to_bool),
                            _total_order_lowering(direction))
  ad.defjvp_zero(prim)
  batching.defbroadcasting(prim)
  return prim


eq_to_p = _total_order_primitive("eq_to", "any", "EQ")
le_to_p = _total_order_primitive("le_to", "ordered", "LE")
lt_to_p = _total_order_primitive("lt_to", "ordered", "LT")

# ----------------------------------------------------------------------------
# optimization_barrier


def optimization_barrier(operand, /):
  """Returns `operand` unchanged, keeping XLA from moving computations across it.

  Every output is computed only after all inputs are, common subexpressions
  are not merged across the barrier, and no fusion crosses it. Outside a
  compiled function it has no effect beyond turning leaves into arrays.

  Args:
    operand: a pytree of arrays (or scalars).

  Returns:
    A pytree of arrays with the structure and values of `operand`.

  Mirrors `jax.lax.optimization_barrier`.
  """
  leaves, treedef = tree_util.tree_flatten(operand)
  return tree_util.tree_unflatten(treedef, optimization_barrier_p.bind(*leaves))


def _optimization_barrier_abstract_eval(*avals):
  return list(avals)


def _optimization_barrier_jvp(primals, tangents):
  tangents = [ad.instantiate_zeros(t) for t in tangents]
  return (optimization_barrier_p.bind(*primals), optimization_barrier_p.bind(*tangents))


def _optimization_barrier_transpose(cts, *args):
  return optimization_barrier_p.bind(*[ad.instantiate_zeros(ct) for ct in cts])


def _optimization_barrier_batch(axis_data, args, dims):
  return optimization_barrier_p.bind(*args), list(dims)


def _optimization_barrier_lowering(ctx, *xs):
  if not xs:
    return []
  return ctx.op("stablehlo.optimization_barrier", xs, [v.type for v in xs])


optimization_barrier_p = standard_primitive(
    "optimization_barrier", _optimization_barrier_abstract_eval, _optimization_barrier_lowering,
    multiple_results=True)
optimization_barrier_p.def_jvp(_optimization_barrier_jvp)
optimization_barrier_p.def_transpose(_optimization_barrier_transpose)
optimization_barrier_p.def_batch(_optimization_barrier_batch)

# ----------------------------------------------------------------------------
# convert_element_type (public)


def convert_element_type(operand, new_dtype, *, weak_type: bool = False):
  """Elementwise conversion of `operand` to `new_dtype`, as an array of the current trace.

  Float to integer conversion truncates toward zero and saturates at the integer type's
  bounds (NaN becomes 0), as XLA defines it. A Python scalar or NumPy operand is converted
  on the host and returned as an Array (or, while tracing, a constant of the jaxpr), as in
  JAX.

  Args:
    operand: an array or scalar.
    new_dtype: the target dtype (canonicalized for the x64 mode).
    weak_type: whether the result is weakly typed.

  Returns:
    An array of operand's shape and dtype `new_dtype`.

  Raises:
    ValueError: a conversion to or from a PRNG key dtype.

  Mirrors `jax.lax.convert_element_type`.
  """
  out = ew.convert_element_type(operand, new_dtype, weak_type=weak_type)
  return stage(out) if isinstance(out, np.ndarray) else out


# ----------------------------------------------------------------------------
# stage


def stage(x, /):
  """Lifts `x` into the current trace: the identity on values.

  Outside any transformation a Python scalar or NumPy array becomes an
  Array; while tracing, it becomes the jaxpr's constant (a literal for
  scalars). A traced value is returned as it is.

  Args:
    x: an array, a tracer, a NumPy array or a Python scalar.

  Returns:
    The same value as an array of the current trace.

  Raises:
    TypeError: `x` is not a JAX value (a list, a string, ...).

  Mirrors `jax.lax.stage`.
  """
  if isinstance(x, core.Tracer):
    return x
  if not core.valid_jaxtype(x):
    raise TypeError("Error interpreting argument to stage as a JAX value. The problematic "
                    f"value is of type {type(x)} and was passed to stage at position 0.")
  trace = core.current_trace()
  # JVP, batch and partial-eval traces keep a constant as it is: it belongs to
  # the staging (or eager) trace beneath them.
  while type(trace) is not pe.DynamicJaxprTrace and trace.parent_trace is not None:
    trace = trace.parent_trace
  if type(trace) is pe.DynamicJaxprTrace:
    return trace.to_jaxpr_tracer(x)
  # The value's own aval says whether it is weak (a Python scalar, a weak host constant).
  return dispatch.device_put_value(x)


# `stage` itself never binds stage_p (as in JAX, whose traces lift the value
# directly); the primitive is the identity with all its rules, for jaxprs
# that name it.
stage_p = standard_primitive("stage", lambda x: x, lambda ctx, x: x)
ad.deflinear(stage_p, lambda ct, x: [ct])
batching.defvectorized(stage_p)

# ----------------------------------------------------------------------------
# dce_sink


def dce_sink(val, *, prevent_mlir_dce: bool = False):
  """Marks every leaf of `val` as used, so dead-code elimination keeps what computes it.

  Args:
    val: a pytree of arrays.
    prevent_mlir_dce: also keep the value alive in the compiled program (a
      side-effecting custom call), not only in jaxprs.

  Returns:
    None.

  Mirrors `jax.lax.dce_sink`.
  """
  for leaf in tree_util.tree_leaves(val):
    dce_sink_p.bind(leaf, prevent_mlir_dce=prevent_mlir_dce)


def _dce_sink_lowering(ctx, x, *, prevent_mlir_dce):
  if not prevent_mlir_dce:
    return []
  ctx.op("stablehlo.custom_call", [x], [],
         'call_target_name = "dce_sink", api_version = 4 : i32, has_side_effect = true, '
         'backend_config = {}')
  return []


dce_sink_p = standard_primitive("dce_sink", lambda x, *, prevent_mlir_dce: [],
                                _dce_sink_lowering, multiple_results=True)
dce_sink_p.is_effectful = True
dce_sink_p.def_impl(lambda x, *, prevent_mlir_dce: [])
ad.deflinear(dce_sink_p, lambda cts, x, *, prevent_mlir_dce: [None])
# As in JAX, a batched value is not sunk again (the rule binds nothing).
dce_sink_p.def_batch(lambda axis_data, args, dims, *, prevent_mlir_dce: ([], []))

# ----------------------------------------------------------------------------
# empty


def empty(shape, dtype, *, out_sharding=None):
  """An array of `shape` and `dtype` whose values are unspecified.

  (On every backend xjax runs on the values are zeros; do not rely on it.)

  Args:
    shape: an int or a sequence of non-negative ints.
    dtype: the dtype of the result.
    out_sharding: must be None (xjax runs on one device).

  Returns:
    An array of `shape` and `dtype`.

  Raises:
    TypeError: `shape` is not a valid shape.
    NotImplementedError: `out_sharding` is given.

  Mirrors `jax.lax.empty`.
  """
  if out_sharding is not None:
    raise NotImplementedError("lax.empty: out_sharding is not supported by xjax")
  return empty_p.bind(shape=shape, dtype=dtype, out_sharding=None)


def _empty_abstract_eval(*, shape, dtype, out_sharding):
  shape = core.canonicalize_shape((shape,) if np.ndim(shape) == 0 else shape)
  return core.ShapedArray(shape, dtypes.canonicalize_dtype(dtype, allow_extended_dtype=True))


def _empty_lowering(ctx, *, shape, dtype, out_sharding):
  # An extended dtype (PRNG keys, ...) is zeros of its physical data.
  out = core.physical_aval(ctx.avals_out[0])
  zero = ctx.constant(np.zeros((), out.dtype))
  return ctx.broadcast_to(zero, core.ShapedArray((), out.dtype), out)


def _empty_batch(axis_data, args, dims, *, shape, dtype, out_sharding):
  shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
  return empty_p.bind(shape=(axis_data.size, *shape), dtype=dtype, out_sharding=None), 0


def _empty_pp(params):
  shown = dict(params)
  if isinstance(shown["dtype"], np.dtype):
    shown["dtype"] = shown["dtype"].name
  return shown


empty_p = standard_primitive("empty", _empty_abstract_eval, _empty_lowering, pp_params=_empty_pp)
empty_p.def_batch(_empty_batch)

# ----------------------------------------------------------------------------
# rng_uniform


def rng_uniform(a, b, shape):
  """Random numbers uniform in [a, b) from XLA's stateful generator (discouraged).

  Each call of a compiled program draws new numbers. Prefer `xjax.random`.

  Args:
    a, b: scalars of one dtype (floating or integer); the result is undefined
      when b <= a.
    shape: the shape of the result.

  Returns:
    An array of `shape` and the dtype of `a`.

  Raises:
    ValueError: `a` and `b` differ in dtype or are not scalars.

  Mirrors `jax.lax.rng_uniform`.
  """
  return rng_uniform_p.bind(a, b, shape=tuple(shape))


_RNG_UNIFORM_DTYPES = {np.dtype(d) for d in (np.float32, np.float64, np.int32, np.int64,
                                              np.uint32, np.uint64)}


def _rng_uniform_abstract_eval(a, b, *, shape):
  if a.dtype != b.dtype:
    raise ValueError(f"Arguments to rng_uniform must have identical dtypes, got {a.dtype} "
                     f"and {b.dtype}.")
  if a.shape != () or b.shape != ():
    raise ValueError(f"Arguments to rng_uniform must be scalars; got shapes {a.shape} and "
                     f"{b.shape}.")
  if a.dtype not in _RNG_UNIFORM_DTYPES:
    # JAX accepts these here and then XLA aborts the process; xjax refuses them.
    raise TypeError(f"rng_uniform does not support dtype {a.dtype.name} (XLA's rng takes "
                    "32- and 64-bit floats and integers)")
  shape = core.check_shapelike("rng_uniform", "shape", shape)
  return core.ShapedArray(shape, a.dtype, a.weak_type and b.weak_type)


def _rng_uniform_lowering(ctx, a, b, *, shape):
  out = ctx.avals_out[0]
  dims = ctx.constant(np.array(out.shape, np.int64))
  return ctx.op1("stablehlo.rng", [a, b, dims], hlo.aval_type(out),
                 "rng_distribution = #stablehlo<rng_distribution UNIFORM>")


rng_uniform_p = standard_primitive("rng_uniform", _rng_uniform_abstract_eval,
                                   _rng_uniform_lowering)
# No jvp and no batching rule, as in JAX: differentiating or vmapping it raises.

# ----------------------------------------------------------------------------
# rng_bit_generator


class RandomAlgorithm(enum.IntEnum):
  """The algorithm of `rng_bit_generator` (mirrors `jax.lax.RandomAlgorithm`)."""
  RNG_DEFAULT = 0
  RNG_THREE_FRY = 1
  RNG_PHILOX = 2

  def __str__(self):
    return self.name


_RBG_ALGORITHMS = {RandomAlgorithm.RNG_DEFAULT: "DEFAULT",
                   RandomAlgorithm.RNG_THREE_FRY: "THREE_FRY",
                   RandomAlgorithm.RNG_PHILOX: "PHILOX"}
_RBG_DTYPES = {np.dtype(d) for d in (np.uint8, np.uint16, np.uint32, np.uint64)}


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT,
                      *, out_sharding=None):
  """Random bits from XLA's stateless generator, and the next key.

  The bits depend on the backend's implementation of `algorithm` (the
  default is the platform's choice). Prefer `xjax.random`.

  Args:
    key: a uint32 array of shape (4,).
    shape: the shape of the bits.
    dtype: an unsigned integer dtype (uint64 needs x64; without it the
      result is uint32, with JAX's warning).
    algorithm: a `RandomAlgorithm`.
    out_sharding: must be None.

  Returns:
    ``(new_key, bits)``: the key's successor (same shape and dtype) and an
    array of `shape` and `dtype`.

  Raises:
    TypeError: the dtype is not an unsigned integer, the key is not uint32[4],
      or the shape is invalid.

  Mirrors `jax.lax.rng_bit_generator`.
  """
  if out_sharding is not None:
    raise NotImplementedError("rng_bit_generator: out_sharding is not supported by xjax")
  shape = core.canonicalize_shape(shape)
  requested = np.dtype(dtype)
  if requested not in _RBG_DTYPES:
    raise TypeError(f"rng_bit_generator: unsupported dtype {requested}")
  dtype = dtypes.check_user_dtype_supported(requested, "rng_bit_generator")
  return tuple(rng_bit_generator_p.bind(key, shape=shape, dtype=dtype,
                                        algorithm=RandomAlgorithm(algorithm),
                                        out_sharding=None))


def _rng_bit_generator_abstract_eval(key, *, shape, dtype, algorithm, out_sharding):
  if not ((key.shape == (4,) and key.dtype == np.uint32)
          or (key.shape == (2,) and key.dtype == np.uint64)):
    raise TypeError(f"rng_bit_generator requires a uint32[4] key, got {key.str_short()}")
  if np.dtype(dtype) not in _RBG_DTYPES:
    raise TypeError(f"rng_bit_generator: unsupported dtype {np.dtype(dtype)}")
  shape = core.check_shapelike("rng_bit_generator", "shape", shape)
  return [key.strip_weak_type(), core.ShapedArray(shape, dtype)]


def _rng_bit_generator_lowering(ctx, key, *, shape, dtype, algorithm, out_sharding):
  key_aval, bits_aval = ctx.avals_out
  u64_key = hlo.tensor_type((2,), np.uint64)
  if key_aval.dtype == np.uint32:  # XLA takes a u64[2] key: the u32[4] one, reinterpreted
    pairs = ctx.op1("stablehlo.reshape", [key], hlo.tensor_type((2, 2), np.uint32))
    key = ctx.op1("stablehlo.bitcast_convert", [pairs], u64_key)
  new_key, bits = ctx.op("stablehlo.rng_bit_generator", [key],
                         [u64_key, hlo.aval_type(bits_aval)],
                         f"rng_algorithm = #stablehlo<rng_algorithm {_RBG_ALGORITHMS[algorithm]}>")
  if key_aval.dtype == np.uint32:
    pairs = ctx.op1("stablehlo.bitcast_convert", [new_key], hlo.tensor_type((2, 2), np.uint32))
    new_key = ctx.op1("stablehlo.reshape", [pairs], hlo.aval_type(key_aval))
  return [new_key, bits]


def _rng_bit_generator_batch(axis_data, args, dims, *, shape, dtype, algorithm, out_sharding):
  # JAX's rule: the first key draws the bits of the whole batch and only it advances.
  keys = batching.moveaxis(args[0], dims[0], 0)
  new_key, bits = rng_bit_generator_p.bind(
      slicing.index_in_dim(keys, 0, keepdims=False), shape=(axis_data.size, *shape),
      dtype=dtype, algorithm=algorithm, out_sharding=out_sharding)
  return [slicing.dynamic_update_index_in_dim(keys, new_key, 0, axis=0), bits], [0, 0]


rng_bit_generator_p = standard_primitive("rng_bit_generator", _rng_bit_generator_abstract_eval,
                                         _rng_bit_generator_lowering, multiple_results=True)
ad.defjvp_zero(rng_bit_generator_p)
rng_bit_generator_p.def_batch(_rng_bit_generator_batch)

# ----------------------------------------------------------------------------
# Helpers without primitives of their own


def broadcast_like(arr, like_arr):
  """`arr` broadcast (by NumPy's rules) to the shape of `like_arr`.

  Args:
    arr: an array or scalar.
    like_arr: an array whose shape the result takes.

  Returns:
    An array of like_arr's shape and arr's dtype.

  Raises:
    ValueError: arr's shape does not broadcast to like_arr's.

  Mirrors `jax.lax.broadcast_like`.
  """
  return util.broadcast_to(arr, core.get_aval(like_arr).shape, fun_name="broadcast_like")


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
  """The (low, high) padding per spatial dimension for a padding name.

  'VALID' pads nothing; 'SAME' pads so that the output size is
  ``ceil(in / stride)``, with any odd unit of padding at the high end;
  'SAME_LOWER' puts it at the low end.

  Args:
    in_shape, window_shape, window_strides: sequences of ints, one per
      spatial dimension.
    padding: 'VALID', 'SAME' or 'SAME_LOWER' (any case).

  Returns:
    A list of ``(low, high)`` pairs of Python ints.

  Raises:
    RuntimeError: `padding` is not one of those names.
    ValueError: a window stride is not positive (JAX divides by it and returns
      garbage with a NumPy warning).

  Mirrors `jax.lax.padtype_to_pads`.
  """
  name = padding.upper() if isinstance(padding, str) else getattr(padding, "name", padding)
  if name not in ("VALID", "SAME", "SAME_LOWER"):
    raise RuntimeError("Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', "
                       f"got {padding}.")
  triples = list(zip(in_shape, window_shape, window_strides))
  if name != "VALID" and not all(int(s) >= 1 for _, _, s in triples):
    raise ValueError(f"padtype_to_pads window_strides must be positive, got "
                     f"{tuple(window_strides)}.")
  if name == "VALID":
    return [(0, 0)] * len(triples)
  pads = []
  for size, window, stride in triples:
    size, window, stride = map(operator.index, (size, window, stride))
    out_size = -(-size // stride)
    total = max((out_size - 1) * stride + window - size, 0)
    low = total // 2 if name == "SAME" else total - total // 2
    pads.append((low, total - low))
  return pads


def shape_as_value(shape):
  """`shape` as a 1-D integer array (int32, or int64 if a size needs it).

  Args:
    shape: a sequence of non-negative ints.

  Returns:
    A NumPy array of the sizes; for an empty shape, an empty int32 Array.

  Mirrors `jax.lax.shape_as_value`.
  """
  shape = tuple(operator.index(d) for d in shape)
  big = any(d > np.iinfo(np.int32).max for d in shape)
  dtype = np.dtype(np.int64 if big else np.int32)
  if not shape:
    return structural.full((0,), np.array(0, dtype))
  return np.asarray(shape, dtype)
