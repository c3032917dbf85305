"""PRNG implementations, the key-level primitives, and typed key arrays.

Design (see also ``xjax/random.py``):

* Key *data* is a uint32 array of shape ``(*keys_shape, 2)``. All machinery
  (jit, vmap, grad, control flow) sees only key data.
* A typed key array, `PRNGKeyArray`, is a thin wrapper holding key data
  (an `Array`, or a tracer while tracing) and its `PRNGImpl`. To xjax's
  transformations it is a pytree node whose one child is the key data, so keys
  pass through `jit` (arguments and results), `vmap`, `lax.scan` carries and
  every other pytree-based API with no special cases; to users
  (`xjax.tree_util`) it is a leaf, as in JAX. Its dtype is the extended dtype
  `KeyTy` (``key<fry>``, a subdtype of ``xjax.dtypes.prng_key``); indexing and
  reshaping act on the leading (key) axes of the data. The structural primitives
  (reshape, slicing, gather, scatter, select_n, ...) take key arrays through
  `_binds_key_arrays`, so jnp and lax functions built on them work on keys.
* Four primitives act on key data with any number of leading key axes:
  ``random_seed``, ``random_split``, ``random_fold_in`` and ``random_bits``.
  Their lowerings trace the threefry functions of ``threefry.py`` at the
  physical shapes; their batching rules only move the batch axis to the
  front, so vmap over keys needs no other batching rules. They print as in
  JAX's jaxprs (``random_bits[bit_width=32 shape=(3,)]``), but their operands
  print as ``u32[...,2]`` where JAX prints ``key<fry>[...]``. ``random_wrap`` and
  ``random_unwrap`` (identities on key data) mark where keys are made from data and
  data read from keys, as JAX's equations of those names do.
* The stream layout (``jax_threefry_partitionable``) is read when a
  primitive is bound and kept as its hidden ``partitionable`` param, so
  cached executables and jaxprs stay correct when the flag changes.
"""
from __future__ import annotations

import functools
import math
import operator
from typing import Callable, NamedTuple

import numpy as np

from xjax._src import core
from xjax._src import executable_cache
from xjax._src import dispatch
from xjax._src import dtypes
from xjax._src import jaxpr_keys
from xjax._src import stablehlo as hlo
from xjax._src import tree_util
from xjax._src import array
from xjax._src.array import Array
from xjax._src.config import config
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import partial_eval as pe
from xjax._src.lax import elementwise as ew
from xjax._src.lax import gather_scatter
from xjax._src.lax import reductions
from xjax._src.lax import slicing
from xjax._src.lax import stacking
from xjax._src.lax import structural as st
from xjax._src.random import threefry

_U32 = np.dtype(np.uint32)


# ----------------------------------------------------------------------------
# Implementations and the key dtype


class PRNGImpl(NamedTuple):
  """A PRNG: its key data shape and its functions on raw key data (mirrors JAX's)."""
  key_shape: tuple
  seed: Callable
  split: Callable
  random_bits: Callable
  fold_in: Callable
  name: str = "<unnamed>"
  tag: str = "?"

  def __hash__(self):
    return hash(self.tag)

  def __str__(self):
    return self.tag


threefry_prng_impl = PRNGImpl(
    key_shape=(2,), seed=threefry.threefry_seed, split=threefry.threefry_split,
    random_bits=threefry.threefry_random_bits, fold_in=threefry.threefry_fold_in,
    name="threefry2x32", tag="fry")

prngs: dict[str, PRNGImpl] = {threefry_prng_impl.name: threefry_prng_impl}


class KeyTy(dtypes.ExtendedDType):
  """The dtype of typed PRNG keys: ``key<fry>`` for threefry2x32."""
  type = dtypes.prng_key

  def __init__(self, impl: PRNGImpl):
    self._impl = impl

  @property
  def name(self) -> str:
    return f"key<{self._impl.tag}>"

  @property
  def itemsize(self) -> int:
    return math.prod(self._impl.key_shape) * _U32.itemsize

  @property
  def physical_element_shape(self) -> tuple:
    return self._impl.key_shape

  physical_element_dtype = _U32

  def __repr__(self):
    return self.name

  __str__ = __repr__

  def __eq__(self, other):
    return type(other) is KeyTy and self._impl == other._impl

  def __hash__(self):
    return hash((KeyTy, self._impl))


def partitionable() -> bool:
  return bool(config.jax_threefry_partitionable)


# ----------------------------------------------------------------------------
# Running on concrete keys


def key_aval(shape, impl: PRNGImpl) -> core.ShapedArray:
  return core.ShapedArray(shape, KeyTy(impl))


def _as_keys(data: Array, aval) -> Array:
  """A key-typed Array (`aval`) over the buffer of its physical data `data`."""
  return Array(data._buf, aval, data._device, data._committed)


def _as_data(keys: Array) -> Array:
  """The physical data (uint32, shape (*keys.shape, 2)) of a key-typed Array, no copy."""
  return Array(keys._buf, core.physical_aval(keys.aval), keys._device, keys._committed)


def run_eager(name: str, fn, *args, fn_key=None) -> list:
  """`fn(*args)` (a list of arrays, some key-typed) on concrete arguments.

  `fn` is traced at the arguments' avals and compiled once per jaxpr; its
  key-typed results are read out as their physical data (`random_unwrap`) and
  come back as key-typed Arrays over those buffers. A hashable `fn_key` naming
  what `fn` computes lets later calls skip the tracing too.
  """
  device, committed = dispatch.pick_device(args, name)
  avals = [core.get_aval(a) for a in args]
  memo_key = (fn_key, tuple(avals), device, config.values_key()) if fn_key is not None else None
  hit = _eager_programs.get(memo_key) if memo_key is not None else None
  if hit is None:
    out_avals = []

    def physical(*xs):
      outs = fn(*xs)
      out_avals[:] = [core.get_aval(o) for o in outs]
      return [random_unwrap_p.bind(o) if core.is_extended(a) else o
              for o, a in zip(outs, out_avals)]
    closed = pe.trace_to_jaxpr(physical, avals)
    key = ("xjax_keys", jaxpr_keys.structure_key(closed), device, config.values_key())
    hit = (dispatch.cached_executable(key, lambda: dispatch.compile_jaxpr(closed, device, name)),
           out_avals)
    if memo_key is not None:
      hit = _eager_programs.put(memo_key, hit)
  exe, out_avals = hit
  outs = exe.run([dispatch.to_buffer(a, device) for a in args], committed)
  return [_as_keys(o, a) if core.is_extended(a) else o for o, a in zip(outs, out_avals)]


# (fn_key, argument avals, device, flags) -> (executable, output avals).
_eager_programs = executable_cache.LRUCache("prng eager programs", 512)


# ----------------------------------------------------------------------------
# Lowering by tracing a function of the physical key data


@functools.lru_cache(maxsize=512)
def _traced(fun, avals, params, config_key):
  """`fun(*args, **params)` traced to a ClosedJaxpr at `avals` (cached per config)."""
  return pe.trace_to_jaxpr(lambda *args: [fun(*args, **dict(params))], list(avals))


executable_cache.on_clear(_traced.cache_clear)


def _lower_by_tracing(name, fun, key_impl: bool = False):
  """A lowering emitting `fun` (a function of the physical operands) as a private function.
  With `key_impl`, `fun` also gets the PRNG implementation (`impl`) of the key operand."""
  def lowering(ctx, *args, **params):
    avals = tuple(core.physical_aval(a) for a in ctx.avals_in)
    if key_impl:
      params = {**params, "impl": ctx.avals_in[0].dtype._impl}
    closed = _traced(fun, avals, tuple(sorted(params.items())), config.values_key())
    return ctx.call(closed, name, args)[0]
  return lowering


# The key-level functions of an implementation on physical key data with leading key axes.
# Threefry's own functions take any number of leading axes; another implementation's (JAX's
# signature: one key, `impl.key_shape`) are mapped over them with vmap, as JAX does.

def _per_key(fn, n_axes: int):
  from xjax._src.vmap import vmap  # vmap is above random in the layer order
  for _ in range(n_axes):
    fn = vmap(fn)
  return fn


def _key_axes(data, impl) -> int:
  return np.ndim(data) - len(impl.key_shape)


def seed_data(seeds, impl: PRNGImpl):
  """Key data of shape (*seeds.shape, *impl.key_shape) seeded by integer `seeds`."""
  if impl is threefry_prng_impl:
    return threefry.threefry_seed(seeds)
  return _per_key(impl.seed, np.ndim(seeds))(seeds)


def split_data(keys, impl: PRNGImpl, shape, partitionable: bool):
  """Key data of shape (*K, *shape, *key_shape): `shape` new keys from each key of `keys`."""
  if impl is threefry_prng_impl:
    return threefry.threefry_split(keys, shape, partitionable)
  return _per_key(lambda k: impl.split(k, shape), _key_axes(keys, impl))(keys)


def fold_in_data(keys, msgs, impl: PRNGImpl):
  """Key data folding uint32 `msgs` into `keys` (broadcast against each other)."""
  if impl is threefry_prng_impl:
    return threefry.threefry_fold_in(keys, msgs)
  batch = np.broadcast_shapes(np.shape(keys)[:_key_axes(keys, impl)], np.shape(msgs))
  keys = _broadcast_leading(keys, batch, len(impl.key_shape))
  msgs = _broadcast_leading(msgs, batch, 0)
  return _per_key(impl.fold_in, len(batch))(keys, msgs)


def bits_data(keys, impl: PRNGImpl, bit_width: int, shape, partitionable: bool):
  """Random bits of shape (*K, *shape) from each key of `keys`."""
  if impl is threefry_prng_impl:
    return threefry.threefry_random_bits(keys, bit_width, shape, partitionable)
  fn = lambda k: impl.random_bits(k, bit_width, shape)
  return _per_key(fn, _key_axes(keys, impl))(keys)


def _broadcast_leading(x, batch, n_trailing: int):
  shape = np.shape(x)
  lead = len(shape) - n_trailing
  target = (*batch, *shape[lead:])
  if tuple(shape) == target:
    return x
  dims = tuple(range(len(batch) - lead, len(target)))
  return st.broadcast_in_dim(x, target, dims)


def _key_prim(name, abstract_eval, fun, batch_rule, key_impl: bool = True):
  prim = core.Primitive(name)
  def impl(*args, **params):
    try:
      fn_key = (prim, tuple(sorted(params.items())))
      hash(fn_key)
    except TypeError:  # an unhashable parameter: traced on every call
      fn_key = None
    return run_eager(name, lambda *xs: [prim.bind(*xs, **params)], *args, fn_key=fn_key)[0]
  prim.def_impl(impl)
  prim.def_abstract_eval(abstract_eval)
  prim.def_lowering(_lower_by_tracing(name, fun, key_impl))
  prim.def_batch(batch_rule)
  prim.def_pp_params(lambda params: {k: v for k, v in params.items() if k != "partitionable"})
  ad.defjvp_zero(prim)
  return prim


def _check_key_aval(name, aval):
  if not isinstance(aval.dtype, KeyTy):
    raise TypeError(f"{name} accepts PRNG key arrays, got {aval.str_short()}")


def _keys_first(args, dims):
  """The keys with their batch axis first."""
  (keys,), (d,) = args, dims
  return batching.moveaxis(keys, d, 0)


# random_seed: integer seeds (any shape S) -> keys of shape S

def _seed_abstract_eval(seeds, *, impl):
  if not dtypes.issubdtype(seeds.dtype, np.integer):
    raise TypeError(f"PRNG key seed must be an integer; got {seeds.str_short()}")
  return key_aval(seeds.shape, impl)


def _seed_batch(axis_data, args, dims, *, impl):
  (seeds,), (d,) = args, dims
  return random_seed_p.bind(seeds, impl=impl), d


random_seed_p = _key_prim("random_seed", _seed_abstract_eval, seed_data, _seed_batch,
                          key_impl=False)  # its impl is a param


# random_split: keys K -> keys (*K, *shape)

def _split_abstract_eval(keys, *, shape, partitionable):
  _check_key_aval("random_split", keys)
  core.check_shapelike("random_split", "shape", shape)
  return key_aval((*keys.shape, *shape), keys.dtype._impl)


def _split_batch(axis_data, args, dims, **params):
  return random_split_p.bind(_keys_first(args, dims), **params), 0


random_split_p = _key_prim("random_split", _split_abstract_eval,
                           lambda keys, shape, partitionable, impl:
                           split_data(keys, impl, shape, partitionable), _split_batch)


# random_fold_in: keys K and uint32 messages M -> keys broadcast(K, M)

def _fold_in_abstract_eval(keys, msgs):
  _check_key_aval("random_fold_in", keys)
  shape = np.broadcast_shapes(keys.shape, msgs.shape)
  return key_aval(shape, keys.dtype._impl)


def _fold_in_batch(axis_data, args, dims):
  # Bring both to one rank, batch axis first (size 1 where unbatched).
  (keys, msgs), (kd, md) = args, dims
  rank = max(np.ndim(keys) - (kd is not None), np.ndim(msgs) - (md is not None))

  def prepare(x, d):
    x = batching.moveaxis(x, d, 0) if d is not None else st.reshape(x, (1, *np.shape(x)))
    shape = np.shape(x)
    return st.reshape(x, (shape[0], *(1,) * (rank + 1 - len(shape)), *shape[1:]))
  return random_fold_in_p.bind(prepare(keys, kd), prepare(msgs, md)), 0


random_fold_in_p = _key_prim("random_fold_in", _fold_in_abstract_eval,
                             lambda keys, msgs, impl: fold_in_data(keys, msgs, impl),
                             _fold_in_batch)


# random_bits: keys K -> uint<bit_width> (*K, *shape)

def _bits_abstract_eval(keys, *, bit_width, shape, partitionable):
  _check_key_aval("random_bits", keys)
  core.check_shapelike("random_bits", "shape", shape)
  return core.ShapedArray((*keys.shape, *shape), np.dtype(f"uint{bit_width}"))


def _bits_batch(axis_data, args, dims, **params):
  return random_bits_p.bind(_keys_first(args, dims), **params), 0


random_bits_p = _key_prim("random_bits", _bits_abstract_eval,
                          lambda keys, bit_width, shape, partitionable, impl:
                          bits_data(keys, impl, bit_width, shape, partitionable), _bits_batch)


# random_wrap / random_unwrap: key data (*K, 2) <-> keys of shape K. Identities on the
# physical data: eagerly they reinterpret the buffer; they lower to nothing.

def _identity_key_prim(name, abstract_eval, impl, batch_rule):
  prim = core.Primitive(name)
  prim.def_impl(impl)
  prim.def_abstract_eval(abstract_eval)
  prim.def_lowering(lambda ctx, data, **_: data)
  prim.def_batch(batch_rule)
  ad.defjvp_zero(prim)
  return prim


def _wrap_abstract_eval(data, *, impl):
  lead = data.ndim - len(impl.key_shape)
  if data.dtype != _U32 or lead < 0 or tuple(data.shape[lead:]) != tuple(impl.key_shape):
    shape = ", ".join(map(str, impl.key_shape))
    raise TypeError(f"random_wrap takes uint32 key data of shape (..., {shape}), got "
                    f"{data.str_short()}")
  return key_aval(data.shape[:lead], impl)


def _wrap_impl(data, *, impl):
  if type(data) is not Array:
    data = dispatch.device_put_value(data)
  return _as_keys(data, _wrap_abstract_eval(data.aval, impl=impl))


def _wrap_batch(axis_data, args, dims, *, impl):
  (data,), (d,) = args, dims
  if d >= np.ndim(data) - len(impl.key_shape):
    raise ValueError("vmap over the key-data axis of raw PRNG keys: map an axis of the "
                     f"key array instead (raw keys have shape (..., {impl.key_shape}))")
  return random_wrap_p.bind(batching.moveaxis(data, d, 0), impl=impl), 0


random_wrap_p = _identity_key_prim("random_wrap", _wrap_abstract_eval, _wrap_impl, _wrap_batch)


def _unwrap_abstract_eval(keys):
  _check_key_aval("random_unwrap", keys)
  return core.physical_aval(keys)


def _unwrap_batch(axis_data, args, dims):
  (keys,), (d,) = args, dims
  return random_unwrap_p.bind(keys), d


random_unwrap_p = _identity_key_prim("random_unwrap", _unwrap_abstract_eval, _as_data,
                                     _unwrap_batch)


# ----------------------------------------------------------------------------
# Structural primitives on key arrays: they lower as on the keys' physical data,
# whose trailing key-data axes every index, size and permutation passes through.


def _physical_lowering(rule, adapt=None):
  """`rule` run on the physical avals (and, by `adapt`, operands and params) of key arrays."""
  def lowering(ctx, *args, **params):
    avals_in, avals_out = ctx.avals_in, ctx.avals_out
    if not any(map(core.is_extended, (*avals_in, *avals_out))):
      return rule(ctx, *args, **params)
    ctx.avals_in = [core.physical_aval(a) for a in avals_in]
    ctx.avals_out = [core.physical_aval(a) for a in avals_out]
    try:
      if adapt is not None:
        args, params = adapt(ctx, avals_in, avals_out, list(args), dict(params))
      return rule(ctx, *args, **params)
    finally:
      ctx.avals_in, ctx.avals_out = avals_in, avals_out
  return lowering


def _trailing(aval) -> tuple:
  """The key-data shape of an aval of keys."""
  return aval.dtype.physical_element_shape


def _adapt_slice(ctx, avals_in, avals_out, args, params):
  extra = _trailing(avals_in[0])
  params["start_indices"] = (*params["start_indices"], *(0 for _ in extra))
  params["limit_indices"] = (*params["limit_indices"], *extra)
  if params["strides"] is not None:
    params["strides"] = (*params["strides"], *(1 for _ in extra))
  return args, params


def _adapt_reshape(ctx, avals_in, avals_out, args, params):
  aval = avals_in[0]
  params["new_sizes"] = (*params["new_sizes"], *_trailing(aval))
  if params["dimensions"] is not None:
    params["dimensions"] = (*params["dimensions"],
                            *range(aval.ndim, aval.ndim + len(_trailing(aval))))
  return args, params


def _adapt_broadcast_in_dim(ctx, avals_in, avals_out, args, params):
  extra, n = _trailing(avals_out[0]), len(avals_out[0].shape)
  params["shape"] = (*params["shape"], *extra)
  params["broadcast_dimensions"] = (*params["broadcast_dimensions"], *range(n, n + len(extra)))
  return args, params


def _adapt_transpose(ctx, avals_in, avals_out, args, params):
  aval = avals_in[0]
  params["permutation"] = (*params["permutation"],
                           *range(aval.ndim, aval.ndim + len(_trailing(aval))))
  return args, params


def _zero_indices(ctx, avals_in, n_operands, args):
  """Start indices of 0 for the key-data axes (of the other indices' dtype)."""
  index_aval = avals_in[n_operands] if len(avals_in) > n_operands else \
      core.ShapedArray((), np.int32)
  extra = _trailing(avals_in[0])
  zeros = [ctx.constant(np.zeros((), index_aval.dtype)) for _ in extra]
  ctx.avals_in = [*ctx.avals_in, *(index_aval for _ in extra)]
  return [*args, *zeros]


def _adapt_dynamic_slice(ctx, avals_in, avals_out, args, params):
  params["slice_sizes"] = (*params["slice_sizes"], *_trailing(avals_in[0]))
  return _zero_indices(ctx, avals_in, 1, args), params


def _adapt_dynamic_update_slice(ctx, avals_in, avals_out, args, params):
  return _zero_indices(ctx, avals_in, 2, args), params


def _adapt_gather(ctx, avals_in, avals_out, args, params):
  extra, n = _trailing(avals_in[0]), avals_out[0].ndim
  dn = params["dimension_numbers"]
  params["dimension_numbers"] = dn._replace(
      offset_dims=(*dn.offset_dims, *range(n, n + len(extra))))
  params["slice_sizes"] = (*params["slice_sizes"], *extra)
  return args, params


def _adapt_select_n(ctx, avals_in, avals_out, args, params):
  # The predicate, of the keys' shape, broadcast over the key-data axes.
  which, out = avals_in[0], ctx.avals_out[0]
  if which.ndim:
    which = core.ShapedArray(out.shape, which.dtype)
    args[0] = ctx.op1("stablehlo.broadcast_in_dim", [args[0]], hlo.aval_type(which),
                      f"broadcast_dimensions = {hlo.i64_array(range(avals_in[0].ndim))}")
    ctx.avals_in = [which, *ctx.avals_in[1:]]
  return args, params


def _adapt_scatter(ctx, avals_in, avals_out, args, params):
  # The key-data axes are trailing window axes of the operand and the updates.
  n = avals_in[2].ndim
  dn = params["dimension_numbers"]
  params["dimension_numbers"] = dn._replace(update_window_dims=(
      *dn.update_window_dims, *range(n, n + len(_trailing(avals_in[0])))))
  return args, params


def _adapt_tile(ctx, avals_in, avals_out, args, params):
  params["reps"] = (*params["reps"], *(1 for _ in _trailing(avals_in[0])))
  return args, params


for _prim, _adapt in [
    (slicing.slice_p, _adapt_slice), (st.reshape_p, _adapt_reshape),
    (st.broadcast_in_dim_p, _adapt_broadcast_in_dim), (st.transpose_p, _adapt_transpose),
    (st.squeeze_p, None), (st.rev_p, None), (st.concatenate_p, None), (st.split_p, None),
    (ew.copy_p, None), (stacking.tile_p, _adapt_tile), (gather_scatter.scatter_p, _adapt_scatter),
    (slicing.dynamic_slice_p, _adapt_dynamic_slice),
    (slicing.dynamic_update_slice_p, _adapt_dynamic_update_slice),
    (gather_scatter.gather_p, _adapt_gather), (ew.select_n_p, _adapt_select_n)]:
  _prim.def_lowering(_physical_lowering(_prim.lowering, _adapt))


def _key_comparison(prim, reduce):
  """`prim` (eq or ne) on key-typed operands: keys compare equal when all their data does."""
  abstract_eval, lowering = prim.abstract_eval, prim.lowering

  def key_abstract_eval(x, y, **params):
    if not (core.is_extended(x) or core.is_extended(y)):
      return abstract_eval(x, y, **params)
    if x.dtype != y.dtype:
      raise TypeError(f"{prim.name} does not accept dtypes {x.dtype}, {y.dtype}.")
    shape = x.shape if x.ndim else y.shape
    if x.ndim and y.ndim and x.shape != y.shape:
      raise TypeError(f"{prim.name} got incompatible shapes for broadcasting: "
                      f"{x.shape}, {y.shape}.")
    return core.ShapedArray(shape, np.dtype(bool))

  def on_data(x, y, *, out_shape, n_data):
    n = len(out_shape)

    def full(d):
      return st.broadcast_in_dim(d, (*out_shape, *d.shape[d.ndim - n_data:]),
                                 tuple(range(n + n_data - d.ndim, n + n_data)))
    return reduce(prim.bind(full(x), full(y)), tuple(range(n, n + n_data)))

  def key_lowering(ctx, x, y, **params):
    if not any(map(core.is_extended, ctx.avals_in)):
      return lowering(ctx, x, y, **params)
    avals = tuple(core.physical_aval(a) for a in ctx.avals_in)
    n_data = len(ctx.avals_in[0].dtype.physical_element_shape)
    closed = _traced(on_data, avals, (("n_data", n_data), ("out_shape", ctx.avals_out[0].shape)),
                     config.values_key())
    return ctx.call(closed, prim.name, [x, y])[0]

  prim.abstract_eval, prim.lowering = key_abstract_eval, key_lowering


_key_comparison(ew.eq_p, reductions.reduce_and)
_key_comparison(ew.ne_p, reductions.reduce_or)


# ----------------------------------------------------------------------------
# Typed key arrays


def _check_prng_key_data(impl: PRNGImpl, key_data) -> None:
  ndim = len(impl.key_shape)
  if not all(hasattr(key_data, attr) for attr in ("ndim", "shape", "dtype")):
    raise TypeError("JAX encountered invalid PRNG key data: expected key_data to have "
                    f"ndim, shape, and dtype attributes. Got {key_data}")
  if key_data.ndim < 1:
    raise TypeError("JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; "
                    f"got ndim={key_data.ndim}")
  if tuple(key_data.shape[-ndim:]) != impl.key_shape:
    raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to end "
                    f"with {impl.key_shape}; got shape={tuple(key_data.shape)} for impl={impl!r}")
  if key_data.dtype not in (_U32, dtypes.float0):
    raise TypeError("JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; "
                    f"got dtype={key_data.dtype}")


class PRNGKeyArray:
  """An array of typed PRNG keys: key data of shape ``(*shape, 2)`` plus its PRNG.

  Printed as ``Array((), dtype=key<fry>) overlaying:`` followed by the key
  data. Keys have no arithmetic; index, reshape and pass them to
  ``xjax.random`` functions. Mirrors JAX's ``PRNGKeyArray``.
  """
  __slots__ = ("_impl", "_base_array", "__weakref__")
  __array_priority__ = 100
  __hash__ = None

  def __init__(self, impl: PRNGImpl, key_data):
    self._impl = impl
    self._base_array = key_data

  # -- array attributes --------------------------------------------------------

  shape = property(lambda self: tuple(self._base_array.shape))
  ndim = property(lambda self: len(self.shape))
  size = property(lambda self: math.prod(self.shape))
  dtype = property(lambda self: KeyTy(self._impl))
  itemsize = property(lambda self: self.dtype.itemsize)
  nbytes = property(lambda self: self.itemsize * self.size)

  def _wrap(self, data) -> PRNGKeyArray:
    return PRNGKeyArray(self._impl, data)

  def _apply(self, name, fn, closed_over=()) -> PRNGKeyArray:
    """Keys `fn(keys)`, for `fn` a function of the key-typed value (run eagerly when concrete;
    `closed_over` is a pytree of the other values `fn` reads, such as an index)."""
    return self._wrap(_apply_to_keys(name, fn, [self._base_array], closed_over))

  def _traced(self) -> bool:
    return isinstance(self._base_array, core.Tracer)

  @property
  def device(self):
    return self._base_array.device

  def devices(self):
    return self._base_array.devices()

  @property
  def committed(self):
    return self._base_array.committed

  def block_until_ready(self):
    self._base_array.block_until_ready()
    return self

  def delete(self):
    self._base_array.delete()

  def is_deleted(self) -> bool:
    return self._base_array.is_deleted()

  def copy(self) -> PRNGKeyArray:
    if self._traced():
      return self._apply("copy", lambda b: b.copy())
    return self._wrap(_as_keys(_as_data(self._base_array).copy(), self._base_array.aval))

  # -- structure: act on the leading (key) axes --------------------------------

  def __len__(self):
    if not self.shape:
      raise TypeError("len() of unsized object")
    return self.shape[0]

  def __iter__(self):
    if not self.shape:
      raise TypeError("iteration over a 0-d key array")
    return (self[i] for i in range(self.shape[0]))

  def __getitem__(self, idx):
    if not self.shape:
      n = len(idx) if isinstance(idx, tuple) else 1
      raise IndexError(f"Too many indices: array is 0-dimensional, but {n} were indexed")
    return self._apply("getitem", lambda b: b[idx], idx)

  def reshape(self, *shape, order="C"):
    if len(shape) == 1 and not isinstance(shape[0], int) and shape[0] is not None:
      shape = tuple(shape[0])
    shape = tuple(operator.index(d) for d in shape)
    if -1 in shape:
      known = math.prod(d for d in shape if d != -1)
      shape = tuple(self.size // known if d == -1 else d for d in shape)
    if math.prod(shape) != self.size:
      raise TypeError(f"cannot reshape key array of shape {self.shape} (size {self.size}) "
                      f"into shape {shape} (size {math.prod(shape)})")
    return self._apply("reshape", lambda b: st.reshape(b, shape))

  def ravel(self, order="C"):
    return self.reshape((self.size,))

  flatten = ravel

  def squeeze(self, axis=None):
    if axis is None:
      axis = tuple(i for i, d in enumerate(self.shape) if d == 1)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = tuple(a % self.ndim for a in axes)
    for a in axes:
      if self.shape[a] != 1:
        raise ValueError("cannot select an axis to squeeze out which has size not equal to one, "
                         f"got shape={self.shape} and dimensions={axes}")
    return self.reshape(tuple(d for i, d in enumerate(self.shape) if i not in axes))

  def transpose(self, *axes):
    if not axes or axes == (None,):
      axes = tuple(reversed(range(self.ndim)))
    elif len(axes) == 1 and not isinstance(axes[0], int):
      axes = tuple(axes[0])
    perm = tuple(a % self.ndim for a in axes)
    return self._apply("transpose", lambda b: st.transpose(b, perm))

  @property
  def T(self):
    return self.transpose()

  def swapaxes(self, axis1, axis2):
    perm = list(range(self.ndim))
    a, b = axis1 % self.ndim, axis2 % self.ndim
    perm[a], perm[b] = perm[b], perm[a]
    return self.transpose(perm)

  # `at`, `take`, `==` and `!=` are jnp operations: numpy/array_methods.py installs them.

  # -- comparisons and conversions ---------------------------------------------

  def __array__(self, dtype=None, copy=None):
    raise TypeError("JAX array with PRNGKey dtype cannot be converted to a NumPy array. Use "
                    "jax.random.key_data(arr) if you wish to extract the underlying integer array.")

  def __bool__(self):
    raise TypeError("key array cannot be converted to boolean.")

  def __repr__(self):
    if self._traced():
      name = self._base_array.tracer_name
      return f"{name}({self.dtype.name}[{','.join(map(str, self.shape))}])"
    data = self._base_array
    data = data._value if type(data) is Array and core.is_extended(data.aval) else np.asarray(data)
    return f"Array({self.shape}, dtype={self.dtype.name}) overlaying:\n{data}"


tree_util.register_pytree_node(
    PRNGKeyArray, lambda k: ((k._base_array,), k._impl),
    lambda impl, children: PRNGKeyArray(impl, children[0]))
tree_util.register_public_leaf(PRNGKeyArray)  # a leaf to users, as in JAX
array.register_virtual_array(PRNGKeyArray)  # isinstance(key, jax.Array) holds, as in JAX
# jax.typeof(key) is its key-typed aval (`key<fry>[]`), as in JAX.
core.pytype_aval_mappings[PRNGKeyArray] = lambda k: key_aval(k.shape, k._impl)


def _binds_key_arrays(prim):
  """Lets `prim.bind` take typed key arrays: their key-typed data goes in, and key-typed
  results come back as key arrays, so every lax and jnp function built on `prim` (reshape,
  broadcast, where, take, ...) works on keys as in JAX. Binds without a key array pay one
  type check per operand."""
  bind = prim.bind

  def bind_with_keys(*args, **params):
    for a in args:
      if type(a) is PRNGKeyArray:
        break
    else:
      return bind(*args, **params)
    out = bind(*[a._base_array if type(a) is PRNGKeyArray else a for a in args], **params)
    if prim.multiple_results:
      return [_as_key_array(o) for o in out]
    return _as_key_array(out)
  prim.bind = bind_with_keys


def _as_key_array(x):
  """`x` as a typed key array when its dtype is a key dtype, else `x`."""
  dtype = getattr(x, "dtype", None)
  return PRNGKeyArray(dtype._impl, x) if isinstance(dtype, KeyTy) else x


for _prim in [slicing.slice_p, st.reshape_p, st.broadcast_in_dim_p, st.transpose_p, st.squeeze_p,
              st.rev_p, st.concatenate_p, st.split_p, ew.copy_p, stacking.tile_p,
              slicing.dynamic_slice_p, gather_scatter.scatter_p, slicing.dynamic_update_slice_p,
              gather_scatter.gather_p, ew.select_n_p, ew.eq_p, ew.ne_p]:
  _binds_key_arrays(_prim)


def _apply_to_keys(name, fn, bases, closed_over=()):
  """`fn(*bases)` on key-typed values: bound under the current trace when some base or
  some leaf of `closed_over` (the other values `fn` reads) is a tracer, else run eagerly."""
  if any(isinstance(b, core.Tracer) for b in (*bases, *tree_util.tree_leaves(closed_over))):
    return fn(*bases)
  return run_eager(name, lambda *bs: [fn(*bs)], *bases)[0]


def is_key_array(x) -> bool:
  return isinstance(x, PRNGKeyArray)


def _check_all_keys(name, keys) -> PRNGImpl:
  if not all(isinstance(k, PRNGKeyArray) for k in keys):
    raise TypeError(f"{name} of PRNG key arrays with non-key arrays; use "
                    "jax.random.key_data to get the keys' uint32 data")
  impls = {k._impl for k in keys}
  if len(impls) != 1:
    raise TypeError(f"{name} of key arrays of different PRNG implementations")
  return impls.pop()


def concatenate_keys(keys, axis) -> PRNGKeyArray:
  """`jnp.concatenate` of key arrays: their data joined along a key axis."""
  impl = _check_all_keys("concatenate", keys)
  if axis is None:
    keys, axis = [k.ravel() for k in keys], 0
  ndim = keys[0].ndim
  if ndim == 0:
    raise ValueError("Zero-dimensional arrays cannot be concatenated.")
  if not -ndim <= axis < ndim:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
  return PRNGKeyArray(impl, _apply_to_keys(
      "concatenate", lambda *bs: st.concatenate(bs, axis % ndim), [k._base_array for k in keys]))


def stack_keys(keys, axis) -> PRNGKeyArray:
  """`jnp.stack` of key arrays of one shape: a new key axis at `axis`."""
  impl = _check_all_keys("stack", keys)
  if len({k.shape for k in keys}) != 1:
    raise ValueError("All input arrays must have the same shape.")
  ndim = keys[0].ndim + 1
  if not -ndim <= axis < ndim:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
  axis %= ndim
  return PRNGKeyArray(impl, _apply_to_keys(
      "stack", lambda *bs: st.concatenate([st.expand_dims(b, (axis,)) for b in bs], axis),
      [k._base_array for k in keys]))


def _maybe_consume(keys: PRNGKeyArray, where: str) -> None:
  """Key-reuse checking (`jax_debug_key_reuse`) of a concrete typed key."""
  if config.jax_debug_key_reuse and not keys._traced():
    from xjax._src import key_reuse
    key_reuse.consume(keys, where)


def random_wrap(key_data, *, impl: PRNGImpl) -> PRNGKeyArray:
  """Key data (uint32, shape (..., 2)) as a typed key array, after JAX's checks."""
  _check_prng_key_data(impl, key_data)
  if key_data.dtype == dtypes.float0:  # the tangent of keys: no data to wrap
    return PRNGKeyArray(impl, key_data)
  return PRNGKeyArray(impl, random_wrap_p.bind(key_data, impl=impl))


def random_unwrap(keys: PRNGKeyArray):
  """The uint32 key data of typed keys (shape (*keys.shape, 2))."""
  data = keys._base_array
  return data if data.dtype == dtypes.float0 else random_unwrap_p.bind(data)


def random_seed(seeds, impl: PRNGImpl) -> PRNGKeyArray:
  return PRNGKeyArray(impl, random_seed_p.bind(seeds, impl=impl))


def random_split(keys: PRNGKeyArray, shape) -> PRNGKeyArray:
  _maybe_consume(keys, "random_split")
  data = random_split_p.bind(keys._base_array, shape=tuple(shape), partitionable=partitionable())
  return keys._wrap(data)


def random_fold_in(keys: PRNGKeyArray, msgs) -> PRNGKeyArray:
  return keys._wrap(random_fold_in_p.bind(keys._base_array, msgs))


def random_bits(keys: PRNGKeyArray, bit_width: int, shape):
  _maybe_consume(keys, "random_bits")
  return random_bits_p.bind(keys._base_array, bit_width=int(bit_width), shape=tuple(shape),
                            partitionable=partitionable())
