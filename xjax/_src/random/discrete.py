"""Integer and index samplers: randint, categorical, permutation, choice, geometric.

JAX's algorithms (see distributions.py for the conventions): randint maps
two words of random bits into the range by modular arithmetic; permutation
sorts by random 32-bit keys, in as many rounds as make collisions unlikely;
choice without replacement uses the Gumbel top-k trick.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from xjax import numpy as jnp
from xjax._src import core
from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.numpy.util import canonicalize_axis as _canonicalize_axis
from xjax._src.numpy.util import check_arraylike as _check_arraylike
from xjax._src.lax import elementwise as lax
from xjax._src.lax import sorting
from xjax._src.lax import structural as lax_st
from xjax._src.lax import transcendental as lax_tr
from xjax._src.random import prng
from xjax._src.random.distributions import (UINT_DTYPES, _check_broadcast_shapes, _check_shape,
                                            _resharded, _select, _split, gumbel, uniform)
from xjax._src.random.keys import check_prng_key


def _const(x, value):
  return np.array(value, core.get_aval(x).dtype)


# ----------------------------------------------------------------------------
# randint


def _convert_and_clip_integer(val, dtype):
  """Integer `val` as `dtype`, clipped to the range both dtypes can hold (not wrapped)."""
  src = core.get_aval(val).dtype
  lo = _const(val, max(dtypes.iinfo(dtype).min, dtypes.iinfo(src).min))
  hi = _const(val, min(dtypes.iinfo(dtype).max, dtypes.iinfo(src).max))
  return jnp.clip(val, lo, hi).astype(dtype)


def randint(key, shape, minval, maxval, dtype=None, *, out_sharding=None):
  """Uniform random integers in [minval, maxval) (mirrors `jax.random.randint`).

  Like JAX's, slightly biased when the range is not a power of 2; 8- and
  16-bit results are sampled in 32 bits to keep the bias small. `out_sharding`
  (a NamedSharding or PartitionSpec over the context mesh) lays out and types
  the result.
  """
  key, _ = check_prng_key("randint", key)
  dtype = np.dtype(dtypes.check_user_dtype_supported(int if dtype is None else dtype, "randint"))
  shape = core.canonicalize_shape(shape)
  if not dtypes.issubdtype(dtype, np.integer):
    raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
  info = dtypes.iinfo(dtype)
  sample_dtype = dtype
  if info.bits < 32:
    sample_dtype = np.dtype("int32")
    minval = jnp.asarray(minval).astype("int32").clip(int(info.min), int(info.max))
    maxval = jnp.asarray(maxval).astype("int32").clip(int(info.min), int(info.max) + 1)
  out = _randint(key, minval, maxval, shape, sample_dtype).astype(dtype)
  return _resharded(out, out_sharding, "randint")


@functools.partial(jit, static_argnums=(3, 4))
def _randint(key, minval, maxval, shape, dtype):
  _check_shape("randint", shape, np.shape(minval), np.shape(maxval))
  minval, maxval = jnp.asarray(minval), jnp.asarray(maxval)
  if not dtypes.issubdtype(minval.dtype, np.integer):
    minval = minval.astype(int)
  if not dtypes.issubdtype(maxval.dtype, np.integer):
    maxval = maxval.astype(int)
  # randint(key, shape, 0, 256, uint8) must reach 255: remember maxval was out of range.
  maxval_out_of_range = lax.gt(
      maxval, _convert_and_clip_integer(jnp.array(dtypes.iinfo(dtype).max, dtype), maxval.dtype))
  minval = _convert_and_clip_integer(minval, dtype)
  maxval = _convert_and_clip_integer(maxval, dtype)
  minval = lax_st.broadcast_to_rank(minval, len(shape))
  maxval = lax_st.broadcast_to_rank(maxval, len(shape))
  nbits = dtypes.iinfo(dtype).bits
  if nbits not in (8, 16, 32, 64):
    raise TypeError(f"randint only accepts 8-, 16-, 32-, or 64-bit dtypes, got {dtype}")
  # Two words of bits per value, reduced modulo the span, halve the bias.
  k1, k2 = _split(key)
  higher_bits = prng.random_bits(k1, nbits, shape)
  lower_bits = prng.random_bits(k2, nbits, shape)
  span = lax.convert_element_type(maxval - minval, UINT_DTYPES[nbits])
  span = _select(maxval <= minval, lax_st.full_like(span, 1), span)  # empty range: minval
  span = _select(maxval_out_of_range & (maxval > minval), lax.add(span, _const(span, 1)), span)
  # (hi * 2**nbits + lo) % span, with 2**nbits % span computed as (2**(nbits/2) % span)**2 % span.
  multiplier = lax.rem(_const(span, 2 ** (nbits // 2)), span)
  multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
  offset = lax.add(lax.mul(lax.rem(higher_bits, span), multiplier), lax.rem(lower_bits, span))
  offset = lax.rem(offset, span)
  return lax.add(minval, lax.convert_element_type(offset, dtype))


# ----------------------------------------------------------------------------
# categorical


def categorical(key, logits, axis: int = -1, shape=None, replace: bool = True, mode=None,
                *, out_sharding=None):
  """Samples of category indices with unnormalized log-probabilities `logits` along `axis`.

  Mirrors `jax.random.categorical` (Gumbel-max; top-k without replacement).
  """
  key, _ = check_prng_key("categorical", key)
  logits = jnp.asarray(logits)
  batch_shape = tuple(np.delete(logits.shape, axis))
  if shape is None:
    shape = batch_shape
  else:
    shape = core.canonicalize_shape(shape)
    _check_shape("categorical", shape, batch_shape)
  prefix = shape[:len(shape) - len(batch_shape)]
  ndim = logits.ndim
  if replace:
    axis = axis - ndim if axis >= 0 else axis
    logits_shape = list(shape[len(shape) - len(batch_shape):])
    logits_shape.insert(axis % ndim, logits.shape[axis])
    g = gumbel(key, (*prefix, *logits_shape), logits.dtype, mode=mode)
    out = jnp.argmax(g + lax_st.expand_dims(logits, tuple(range(len(prefix)))), axis=axis)
    return _resharded(out, out_sharding, "categorical")
  logits = logits + gumbel(key, logits.shape, logits.dtype, mode=mode)
  k = math.prod(prefix)
  if k > logits.shape[axis]:
    raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number of "
                     f"categories ({logits.shape[axis]}).")
  _, indices = sorting.top_k(jnp.moveaxis(logits, axis, -1), k)
  dimensions = (indices.ndim - 1, *range(indices.ndim - 1))
  return _resharded(lax_st.reshape(indices, shape, dimensions), out_sharding, "categorical")


# ----------------------------------------------------------------------------
# permutation, choice


def permutation(key, x, axis: int = 0, independent: bool = False, *, out_sharding=None):
  """A random permutation of ``arange(x)`` or of `x` along `axis` (mirrors `jax.random.permutation`).

  With `independent`, each slice along `axis` is shuffled on its own.
  """
  key, _ = check_prng_key("permutation", key)
  _check_arraylike("permutation", x)
  ndim = np.ndim(x)
  axis = _canonicalize_axis(axis, ndim or 1)
  if not ndim:
    if not dtypes.issubdtype(dtypes.dtype(x, canonicalize=True), np.integer):
      raise TypeError("x must be an integer or at least 1-dimensional")
    out = _shuffle(key, jnp.arange(int(x)), axis)
  elif independent or ndim == 1:
    out = _shuffle(key, x, axis)
  else:
    x = jnp.asarray(x)
    ind = _shuffle(key, jnp.arange(x.shape[axis]), 0)
    out = jnp.take(x, ind, axis, unique_indices=True)
  return _resharded(out, out_sharding, "permutation")


@functools.partial(jit, static_argnums=(2,))
def _shuffle(key, x, axis):
  # Sort by random 32-bit keys; repeat with fresh keys so that ties (which a
  # stable sort would resolve by position) are unlikely: 3 log(n) / log(2**32 - 1) rounds.
  exponent = 3
  size = math.prod(np.shape(x))
  num_rounds = int(np.ceil(exponent * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
  for _ in range(num_rounds):
    key, subkey = _split(key)
    sort_keys = prng.random_bits(subkey, 32, np.shape(x))
    _, x = sorting.sort_key_val(sort_keys, x, axis)
  return x


def choice(key, a, shape: Sequence[int] = (), replace: bool = True, p=None, axis: int = 0,
           mode=None):
  """Random samples from `a` (an array, or ``arange(a)``), with or without replacement.

  Mirrors `jax.random.choice`.
  """
  key, _ = check_prng_key("choice", key)
  if not isinstance(shape, Sequence):
    raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
  _check_arraylike("choice", a)
  arr = jnp.asarray(a)
  if arr.ndim == 0:
    n_inputs = int(a)
  else:
    axis = _canonicalize_axis(axis, arr.ndim)
    n_inputs = arr.shape[axis]
  n_draws = math.prod(shape)
  if n_draws == 0:
    return jnp.zeros(shape, dtype=arr.dtype)
  if n_inputs <= 0:
    raise ValueError("a must be greater than 0 unless no samples are taken")
  if not replace and n_draws > n_inputs:
    raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                     f"(size {n_inputs}) when 'replace=False'")
  if p is None:
    if replace:
      ind = randint(key, shape, 0, n_inputs)
      result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
    else:
      slices = (slice(None),) * axis + (slice(n_draws),)
      result = permutation(key, n_inputs if arr.ndim == 0 else arr, axis)[slices]
  else:
    _check_arraylike("choice", p)
    p_arr = jnp.asarray(p)
    if not dtypes.issubdtype(p_arr.dtype, np.inexact):
      p_arr = p_arr.astype(dtypes.to_inexact_dtype(p_arr.dtype))
    if p_arr.shape != (n_inputs,):
      raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                       f"p has shape {p_arr.shape} and a.shape[axis] is {n_inputs}.")
    if replace:
      p_cuml = jnp.cumsum(p_arr)
      r = p_cuml[-1] * (1 - uniform(key, shape, dtype=p_cuml.dtype))
      ind = _searchsorted_left(p_cuml, r).astype(int)
    else:
      # The Gumbel top-k trick.
      g = gumbel(key, (n_inputs,), dtype=p_arr.dtype, mode=mode) + jnp.log(p_arr)
      ind = sorting.top_k(g, n_draws)[1].astype(int)
    result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
  return result.reshape(tuple(shape) if arr.ndim == 0 else
                        arr.shape[0:axis] + tuple(shape) + arr.shape[axis + 1:])


def _searchsorted_left(sorted_arr, v):
  """``jnp.searchsorted(sorted_arr, v)``: the count of entries below each v."""
  return jnp.sum(sorted_arr < v[..., None], axis=-1)


# ----------------------------------------------------------------------------
# geometric


def geometric(key, p, shape=None, dtype=None, *, out_sharding=None):
  """Number of Bernoulli(p) trials until the first success (mirrors `jax.random.geometric`)."""
  key, _ = check_prng_key("geometric", key)
  dtype = np.dtype(dtypes.check_user_dtype_supported(int if dtype is None else dtype, "geometric"))
  if not dtypes.issubdtype(dtype, np.integer):
    raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
  return _resharded(_geometric(key, p, _check_broadcast_shapes("geometric", shape, p), dtype),
                    out_sharding, "geometric")


@functools.partial(jit, static_argnums=(2, 3))
def _geometric(key, p, shape, dtype):
  p = jnp.asarray(p)
  if not dtypes.issubdtype(p.dtype, np.inexact):
    p = p.astype(dtypes.to_inexact_dtype(p.dtype))
  u = uniform(key, shape, p.dtype)
  u = jnp.where(u == 0, 1, u)  # log(0) would be -inf; JAX maps u = 0 to 1
  log_one_minus_p = jnp.broadcast_to(lax.log1p(-p), shape)
  g = lax.floor(lax.div(lax_tr.log(u), log_one_minus_p)) + 1
  return g.astype(dtype)

