"""Samplers of ``xjax.random``: JAX's algorithms on top of `random_bits`.

Each public sampler checks its arguments and calls a jitted `_sampler` with
static shape and dtype, as JAX does, so results are bit-identical with JAX's
for the same key, shape and dtype (the op sequences are the same, and XLA
compiles them the same way). Like JAX's, these samplers are written over
``xjax.numpy``.
"""
from __future__ import annotations

import functools

import numpy as np

from xjax import numpy as jnp  # jnp is fully imported before xjax.random (xjax/__init__.py)
from xjax._src import core
from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax.ad_util import stop_gradient
from xjax._src.lax import elementwise as lax
from xjax._src.lax import structural as lax_st
from xjax._src.lax import transcendental as lax_tr
from xjax._src.random import prng
from xjax._src.random.keys import _split, check_prng_key
from xjax._src.sharding import constraints
from xjax._src.sharding import rules

UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
               64: np.dtype(np.uint64)}


# ----------------------------------------------------------------------------
# Helpers


def _check_shape(name: str, shape, *param_shapes) -> None:
  if param_shapes:
    result = jnp.broadcast_shapes(tuple(shape), *param_shapes)
    if tuple(shape) != result:
      raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                       "argument, and the result of broadcasting the shapes must equal the "
                       f"shape argument, but got result {result} for shape argument {shape}.")


def _float_dtype(name: str, dtype, kind=np.floating, what="a float"):
  dtype = dtypes.check_user_dtype_supported(float if dtype is None else dtype, name)
  if not dtypes.issubdtype(dtype, kind):
    raise ValueError(f"dtype argument to `{name}` must be {what} dtype, got {dtype}")
  return np.dtype(dtype)


def _random_bits(key, bit_width, shape):
  return prng.random_bits(key, bit_width, shape)


# ----------------------------------------------------------------------------
# uniform, normal


def _resharded(out, out_sharding, name):
  """`out` laid out (and typed) as `out_sharding` says, when one is given (the values do
  not depend on it)."""
  if out_sharding is None:
    return out
  return constraints.reshard(out, rules.canonicalize_out_sharding(out_sharding, name))


def uniform(key, shape=(), dtype=None, minval=0., maxval=1., *, out_sharding=None):
  """Uniform random values in [minval, maxval) of `shape` and float `dtype`.

  `out_sharding` (a NamedSharding or PartitionSpec over the context mesh) lays
  out and types the result.

  Mirrors `jax.random.uniform`.
  """
  key, _ = check_prng_key("uniform", key)
  dtype = dtypes.check_user_dtype_supported(float if dtype is None else dtype, "uniform")
  shape = core.canonicalize_shape(shape)
  if not dtypes.issubdtype(dtype, np.floating):
    raise ValueError(f"dtype argument to `uniform` must be a float dtype, got {dtype}")
  return _resharded(_uniform(key, minval, maxval, shape, np.dtype(dtype)), out_sharding,
                    "uniform")


@functools.partial(jit, static_argnums=(3, 4))
def _uniform(key, minval, maxval, shape, dtype):
  _check_shape("uniform", shape)
  minval, maxval = lax.convert_element_type(minval, dtype), lax.convert_element_type(maxval, dtype)
  minval = lax_st.broadcast_to_rank(minval, len(shape))
  maxval = lax_st.broadcast_to_rank(maxval, len(shape))
  finfo = dtypes.finfo(dtype)
  nbits, nmant = finfo.bits, finfo.nmant
  if nbits not in (8, 16, 32, 64):
    raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypesgot {dtype}.")
  # Random mantissa bits under the exponent of 1.0 give a float in [1, 2); minus 1.
  rng_bits = 8 if nmant < 8 else nbits
  bits = _random_bits(key, rng_bits, shape)
  uint_dtype = UINT_DTYPES[nbits]
  if rng_bits != nbits:
    bits = lax.convert_element_type(bits, uint_dtype)
  float_bits = lax.shift_right_logical(bits, np.array(rng_bits - nmant, uint_dtype))
  float_bits = lax.bitwise_or(float_bits, np.array(1.0, dtype).view(uint_dtype))
  floats = lax.sub(lax.bitcast_convert_type(float_bits, dtype), np.array(1.0, dtype))
  return lax.max(minval, lax_st.reshape(lax.add(lax.mul(floats, lax.sub(maxval, minval)), minval),
                                        shape))


def normal(key, shape=(), dtype=None, *, out_sharding=None):
  """Standard normal random values of `shape` and float (or complex) `dtype`.

  `out_sharding` (a NamedSharding or PartitionSpec over the context mesh) lays
  out and types the result.

  Mirrors `jax.random.normal`.
  """
  key, _ = check_prng_key("normal", key)
  shape = core.canonicalize_shape(shape)
  dtype = _float_dtype("normal", dtype, np.inexact, "a float or complex")
  return _resharded(_normal(key, shape, dtype), out_sharding, "normal")


@functools.partial(jit, static_argnums=(1, 2))
def _normal(key, shape, dtype):
  if dtypes.issubdtype(dtype, np.complexfloating):
    sqrt2 = np.array(np.sqrt(2), dtype)
    key_re, key_im = _split(key)
    real_dtype = np.array(0, dtype).real.dtype
    re = lax.convert_element_type(_normal_real(key_re, shape, real_dtype), dtype)
    im = lax.convert_element_type(_normal_real(key_im, shape, real_dtype), dtype)
    return lax.div(lax.add(re, lax.mul(np.array(1j, dtype), im)), sqrt2)
  return _normal_real(key, shape, dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _normal_real(key, shape, dtype):
  _check_shape("normal", shape)
  lo = np.nextafter(np.array(-1., dtype), np.array(0., dtype), dtype=dtype)
  u = uniform(key, shape, dtype, lo, np.array(1., dtype))
  return lax.mul(np.array(np.sqrt(2), dtype), lax_tr.erf_inv(u))


# ----------------------------------------------------------------------------
# Closed-form transforms of uniform and normal samples


def _select(pred, on_true, on_false):
  return lax.select_n(pred, on_false, on_true)


def _check_broadcast_shapes(name, shape, *args):
  arg_shapes = [np.shape(a) for a in args]
  if shape is None:
    return jnp.broadcast_shapes(*arg_shapes) if arg_shapes else ()
  shape = core.canonicalize_shape(shape)
  _check_shape(name, shape, *arg_shapes)
  return shape


def _sampler(name, impl):
  """A public sampler ``name(key, shape=(), dtype=None, *, out_sharding=None)`` calling jitted
  ``impl(key, shape, dtype)``; `out_sharding` lays the result out."""
  def sampler(key, shape=(), dtype=None, *, out_sharding=None):
    key, _ = check_prng_key(name, key)
    dtype = _float_dtype(name, dtype)
    return _resharded(impl(key, core.canonicalize_shape(shape), dtype), out_sharding, name)
  sampler.__name__ = sampler.__qualname__ = name
  return sampler


@functools.partial(jit, static_argnums=(1, 2))
def _exponential(key, shape, dtype):
  u = uniform(key, shape, dtype)
  return lax.neg(lax.log1p(lax.neg(u)))  # log(1 - u): the domain of log is (0, 1]


@functools.partial(jit, static_argnums=(1, 2))
def _laplace(key, shape, dtype):
  u = uniform(key, shape, dtype, minval=-1. + dtypes.finfo(dtype).epsneg, maxval=1.)
  return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


@functools.partial(jit, static_argnums=(1, 2))
def _logistic(key, shape, dtype):
  x = uniform(key, shape, dtype, minval=dtypes.finfo(dtype).tiny, maxval=1.)
  return lax.sub(lax_tr.log(x), lax.log1p(lax.neg(x)))


@functools.partial(jit, static_argnums=(1, 2))
def _cauchy(key, shape, dtype):
  u = uniform(key, shape, dtype, minval=dtypes.finfo(dtype).eps, maxval=1.)
  return lax_tr.tan(lax.mul(np.array(np.pi, dtype), lax.sub(u, np.array(0.5, dtype))))


exponential = _sampler("exponential", _exponential)
laplace = _sampler("laplace", _laplace)
logistic = _sampler("logistic", _logistic)
cauchy = _sampler("cauchy", _cauchy)
exponential.__doc__ = "Standard exponential samples (mirrors `jax.random.exponential`)."
laplace.__doc__ = "Standard Laplace samples (mirrors `jax.random.laplace`)."
logistic.__doc__ = "Standard logistic samples (mirrors `jax.random.logistic`)."
cauchy.__doc__ = "Standard Cauchy samples (mirrors `jax.random.cauchy`)."


def gumbel(key, shape=(), dtype=None, mode=None, *, out_sharding=None):
  """Standard Gumbel samples.

  ``mode='high'`` uses two uniforms for more dynamic range; ``mode='highest'`` (float32)
  draws 64 random bits per sample and converts them exactly, taking log1p on the lower half
  of the unit interval: the largest logits reach about 44 instead of 16 (``'low'``).

  Raises:
    ValueError: an unknown mode, or a dtype that is not floating.

  Mirrors `jax.random.gumbel`.
  """
  key, _ = check_prng_key("gumbel", key)
  dtype = _float_dtype("gumbel", dtype)
  mode = "low" if mode is None else mode
  if mode not in ("highest", "high", "low"):
    raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
  return _resharded(_gumbel(key, core.canonicalize_shape(shape), dtype, mode), out_sharding,
                    "gumbel")


def _safe_int_to_float(bits, dtype):
  """uint32 words ``bits = [hi, lo, ...]`` read as a 64-bit binary fraction, converted to the
  float32 in (0, 1) that truncates it (the leading one and the next 23 bits).

  Raises:
    RuntimeError: not uint32 bits to float32.

  Mirrors JAX's private `jax._src.random.core._safe_int_to_float`.
  """
  if bits.dtype != np.uint32 or dtype != np.float32:
    raise RuntimeError("_safe_int_to_float only works for u32 -> f32")
  info = dtypes.finfo(dtype)
  u32 = lambda v: np.array(v, np.uint32)
  hi, lo = bits[0], bits[1]
  hi_zeros, lo_zeros = lax.clz(hi), lax.clz(lo)
  hi_empty = hi_zeros == 32
  # The 32 bits that start at the leading one (shifts of 32 give 0).
  top = lax.bitwise_or(lax.shift_left(hi, hi_zeros),
                       jnp.where(hi_empty, lax.shift_left(lo, lo_zeros),
                                 lax.shift_right_logical(lo, u32(32) - hi_zeros)))
  fraction = lax.bitwise_and(lax.shift_right_logical(top, u32(32 - info.nmant - 1)),
                             u32((1 << info.nmant) - 1))
  leading_zeros = jnp.where(hi_empty, u32(32) + lo_zeros, hi_zeros)
  exponent = lax.shift_left(u32(-info.minexp) - leading_zeros, u32(info.nmant))
  exponent = lax.bitwise_and(exponent, u32((1 << 30) - (1 << (info.nmant - 1))))
  return lax.bitcast_convert_type(lax.bitwise_or(exponent, fraction), np.float32)


@functools.partial(jit, static_argnums=(1, 2, 3))
def _gumbel(key, shape, dtype, mode):
  info = dtypes.finfo(dtype)
  if mode == "highest" and dtype == np.float32:
    bits = _random_bits(key, 32, (2, *shape))
    # 1 - u as a 64-bit fraction: the complement plus one, carried from lo into hi.
    flipped = lax.bitwise_not(bits)
    carry = jnp.stack([(flipped[1] == np.uint32(0xFFFFFFFF)).astype(np.uint32),
                       jnp.ones_like(flipped[1])])
    flipped = flipped + carry
    lower_half = bits[0] < np.uint32(1 << 31)
    x = _safe_int_to_float(jnp.where(lower_half, bits, flipped), np.float32)
    return jnp.where(lower_half, -jnp.log(-jnp.log1p(-x)), -jnp.log(-jnp.log(x)))
  if mode in ("high", "highest"):
    u = _uniform(key, 0., 1., (2, *shape), dtype)
    high, low = u[0], u[1]
    x = jnp.where(high >= 0.5, high, high + 2 ** -int(info.nmant) * low + info.tiny)
    return -jnp.log(-jnp.log1p(-x))
  return -jnp.log(-jnp.log(_uniform(key, info.tiny, 1., shape, dtype)))


def truncated_normal(key, lower, upper, shape=None, dtype=None, *, out_sharding=None):
  """Standard normal samples truncated to (lower, upper) (mirrors `jax.random.truncated_normal`)."""
  if shape is not None:
    shape = core.canonicalize_shape(shape)
  key, _ = check_prng_key("truncated_normal", key)
  dtype = _float_dtype("truncated_normal", dtype)
  return _resharded(_truncated_normal(key, lower, upper, shape, dtype), out_sharding,
                    "truncated_normal")


@functools.partial(jit, static_argnums=(3, 4))
def _truncated_normal(key, lower, upper, shape, dtype):
  if shape is None:
    shape = jnp.broadcast_shapes(np.shape(lower), np.shape(upper))
  else:
    _check_shape("truncated_normal", shape, np.shape(lower), np.shape(upper))
  sqrt2 = np.array(np.sqrt(2), dtype)
  lower = lax.convert_element_type(lower, dtype)
  upper = lax.convert_element_type(upper, dtype)
  a = lax_tr.erf(jnp.true_divide(lower, sqrt2))
  b = lax_tr.erf(jnp.true_divide(upper, sqrt2))
  u = uniform(key, shape, dtype, minval=a, maxval=b)
  out = jnp.multiply(sqrt2, lax_tr.erf_inv(u))
  # Clamp into the open interval: rounding must not reach the bounds.
  return jnp.clip(out, lax.nextafter(stop_gradient(lower), np.array(np.inf, dtype)),
                  lax.nextafter(stop_gradient(upper), np.array(-np.inf, dtype)))


def pareto(key, b, shape=None, dtype=None, *, out_sharding=None):
  """Pareto samples with shape parameter `b` (mirrors `jax.random.pareto`)."""
  key, _ = check_prng_key("pareto", key)
  dtype = _float_dtype("pareto", dtype)
  return _resharded(_pareto(key, b, _check_broadcast_shapes("pareto", shape, b), dtype),
                    out_sharding, "pareto")


@functools.partial(jit, static_argnums=(2, 3))
def _pareto(key, b, shape, dtype):
  b = lax.convert_element_type(b, dtype)
  return lax.exp(jnp.true_divide(exponential(key, shape, dtype), b))


def maxwell(key, shape=(), dtype=None, *, out_sharding=None):
  """Maxwell samples: the norm of three standard normals (mirrors `jax.random.maxwell`)."""
  key, _ = check_prng_key("maxwell", key)
  dtype = _float_dtype("maxwell", dtype)
  return _resharded(_maxwell(key, core.canonicalize_shape(shape), dtype), out_sharding,
                    "maxwell")


@functools.partial(jit, static_argnums=(1, 2))
def _maxwell(key, shape, dtype):
  x = normal(key, (*shape, 3), dtype)
  return jnp.sqrt(jnp.sum(jnp.multiply(x, x), axis=-1))  # jnp.linalg.norm over the last axis


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
  """Double-sided Maxwell samples (mirrors `jax.random.double_sided_maxwell`)."""
  key, _ = check_prng_key("double_sided_maxwell", key)
  dtype = _float_dtype("double_sided_maxwell", dtype)
  return _double_sided_maxwell(key, loc, scale, core.canonicalize_shape(shape), dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _double_sided_maxwell(key, loc, scale, shape, dtype):
  params_shape = tuple(np.broadcast_shapes(np.shape(loc), np.shape(scale)))
  shape = (*(shape or params_shape), *params_shape)
  maxwell_key, sign_key = _split(key)
  maxwell_rvs = maxwell(maxwell_key, shape, dtype)
  random_sign = rademacher(sign_key, shape, dtype)
  return random_sign * maxwell_rvs * scale + loc


def weibull_min(key, scale, concentration, shape=(), dtype=None):
  """Weibull samples by the inverse CDF (mirrors `jax.random.weibull_min`)."""
  key, _ = check_prng_key("weibull_min", key)
  dtype = _float_dtype("weibull_min", dtype)
  return _weibull_min(key, scale, concentration, core.canonicalize_shape(shape), dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _weibull_min(key, scale, concentration, shape, dtype):
  u = uniform(key, shape, dtype, 0, 1)
  return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


def rayleigh(key, scale, shape=None, dtype=None, *, out_sharding=None):
  """Rayleigh samples (mirrors `jax.random.rayleigh`)."""
  key, _ = check_prng_key("rayleigh", key)
  dtype = _float_dtype("rayleigh", dtype)
  return _resharded(_rayleigh(key, scale, _check_broadcast_shapes("rayleigh", shape, scale),
                              dtype), out_sharding, "rayleigh")


@functools.partial(jit, static_argnums=(2, 3))
def _rayleigh(key, scale, shape, dtype):
  u = uniform(key, shape, dtype)
  scale = jnp.broadcast_to(scale.astype(dtype), shape)
  return lax.mul(scale, lax_tr.sqrt(lax.mul(lax_tr.log(u), np.array(-2, dtype))))


def wald(key, mean, shape=None, dtype=None, *, out_sharding=None):
  """Wald (inverse Gaussian) samples (mirrors `jax.random.wald`)."""
  key, _ = check_prng_key("wald", key)
  dtype = _float_dtype("wald", dtype)
  return _resharded(_wald(key, mean, _check_broadcast_shapes("wald", shape, mean), dtype),
                    out_sharding, "wald")


@functools.partial(jit, static_argnums=(2, 3))
def _wald(key, mean, shape, dtype):
  k1, k2 = _split(key, 2)
  mean = jnp.broadcast_to(mean.astype(dtype), shape)
  v = normal(k1, shape, dtype)
  z = uniform(k2, shape, dtype)
  y = lax.integer_pow(v, 2)
  y_sq = lax.integer_pow(y, 2)
  mean_sq = lax.integer_pow(mean, 2)
  sqrt_term = lax_tr.sqrt(4 * mean * y + mean_sq * y_sq)
  x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
  return _select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


def triangular(key, left, mode, right, shape=None, dtype=None, *, out_sharding=None):
  """Triangular samples on [left, right] with the given mode (mirrors `jax.random.triangular`)."""
  key, _ = check_prng_key("triangular", key)
  dtype = _float_dtype("triangular", dtype)
  shape = _check_broadcast_shapes("triangular", shape, left, mode, right)
  return _resharded(_triangular(key, left, mode, right, shape, dtype), out_sharding,
                    "triangular")


@functools.partial(jit, static_argnums=(4, 5), inline=True)
def _triangular(key, left, mode, right, shape, dtype):
  left = jnp.broadcast_to(lax.convert_element_type(left, dtype), shape)
  right = jnp.broadcast_to(lax.convert_element_type(right, dtype), shape)
  mode = jnp.broadcast_to(lax.convert_element_type(mode, dtype), shape)
  fc = (mode - left) / (right - left)
  u = uniform(key, shape, dtype)
  out1 = left + lax_tr.sqrt(u * (right - left) * (mode - left))
  out2 = right - lax_tr.sqrt((1 - u) * (right - left) * (right - mode))
  return _select(u < fc, out1, out2)


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None, *, out_sharding=None):
  """Log-normal samples: exp(sigma * normal) (mirrors `jax.random.lognormal`)."""
  key, _ = check_prng_key("lognormal", key)
  dtype = _float_dtype("lognormal", dtype, np.inexact, "a float or complex")
  return _resharded(_lognormal(key, sigma, _check_broadcast_shapes("lognormal", shape, sigma),
                               dtype), out_sharding, "lognormal")


@functools.partial(jit, static_argnums=(2, 3), inline=True)
def _lognormal(key, sigma, shape, dtype):
  sigma = lax.convert_element_type(sigma, dtype)
  return lax.exp(normal(key, shape, dtype) * sigma)



# ----------------------------------------------------------------------------
# bernoulli, rademacher


def bernoulli(key, p=0.5, shape=None, mode="low", *, out_sharding=None):
  """Booleans that are True with probability `p` (mirrors `jax.random.bernoulli`)."""
  if shape is not None:
    shape = core.canonicalize_shape(shape)
  if mode not in ("high", "low"):
    raise ValueError(f"got {mode=}, expected 'high' or 'low'")
  key, _ = check_prng_key("bernoulli", key)
  dtype = dtypes.dtype(p, canonicalize=True)
  if not dtypes.issubdtype(dtype, np.floating):
    raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
  return _resharded(_bernoulli(key, lax.convert_element_type(p, dtype), shape, mode),
                    out_sharding, "bernoulli")


@functools.partial(jit, static_argnums=(2, 3))
def _bernoulli(key, p, shape, mode):
  if shape is None:
    shape = np.shape(p)
  else:
    _check_shape("bernoulli", shape, np.shape(p))
  dtype = core.get_aval(p).dtype
  if mode == "high":
    u = uniform(key, (2, *shape), dtype)
    u1, u2 = u[0], u[1]
    u2 = u2 * 2 ** -int(dtypes.finfo(dtype).nmant)  # the resolution of one uniform sample
    return u2 < p - u1
  return uniform(key, shape, dtype) < p


def rademacher(key, shape=(), dtype=None, *, out_sharding=None):
  """Random signs, -1 or +1 with equal probability (mirrors `jax.random.rademacher`)."""
  key, _ = check_prng_key("rademacher", key)
  dtype = dtypes.check_user_dtype_supported(int if dtype is None else dtype, "rademacher")
  return _resharded(_rademacher(key, core.canonicalize_shape(shape), np.dtype(dtype)),
                    out_sharding, "rademacher")


@functools.partial(jit, static_argnums=(1, 2))
def _rademacher(key, shape, dtype):
  samples = bernoulli(key, 0.5, shape).astype(dtype)
  return (2 * samples - 1).astype(dtype)
