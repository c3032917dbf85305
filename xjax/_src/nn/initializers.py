"""Weight initializers (mirrors `jax.nn.initializers`), consistent with Keras and Sonnet.

An initializer is a function ``init(key, shape, dtype=None, out_sharding=None)``
returning a fresh array of `shape`. Each draws from `xjax.random` exactly as
JAX's does (same key splits, same distributions, same scaling order), so that
for the same key the values are bit-for-bit JAX's.
"""
from __future__ import annotations

import math
import typing
from typing import Protocol

import numpy as np

import xjax.numpy as jnp
from xjax import random
from xjax._src import dtypes


@typing.runtime_checkable
class Initializer(Protocol):
  """The call signature of an initializer (mirrors `jax.nn.initializers.Initializer`)."""

  def __call__(self, key, shape, dtype=None, out_sharding=None):
    raise NotImplementedError


def _dtype(dtype):
  return dtypes.default_float_dtype() if dtype is None else dtype


def _full(shape, value, dtype, out_sharding):
  if out_sharding is None:
    return jnp.full(shape, value, dtype)
  return jnp.full(shape, value, dtype, device=out_sharding)


def zeros(key, shape, dtype=None, out_sharding=None):
  """An array of zeros of `shape` (float32, or float64 under x64, by default); `key` is unused.

  Mirrors `jax.nn.initializers.zeros`.
  """
  return _full(shape, 0, _dtype(dtype), out_sharding)


def ones(key, shape, dtype=None, out_sharding=None):
  """An array of ones of `shape` (default float dtype); `key` is unused.

  Mirrors `jax.nn.initializers.ones`.
  """
  return _full(shape, 1, _dtype(dtype), out_sharding)


def constant(value, dtype=None) -> Initializer:
  """An initializer filling its shape with `value` (mirrors `jax.nn.initializers.constant`)."""
  def init(key, shape, dtype=dtype, out_sharding=None):
    return _full(shape, value, _dtype(dtype), out_sharding)
  return init


def uniform(scale=1e-2, dtype=None) -> Initializer:
  """An initializer drawing uniformly from [0, scale) (mirrors `jax.nn.initializers.uniform`)."""
  def init(key, shape, dtype=dtype, out_sharding=None):
    dtype = _dtype(dtype)
    return random.uniform(key, shape, dtype, out_sharding=out_sharding) * jnp.array(scale, dtype)
  return init


def normal(stddev=1e-2, dtype=None) -> Initializer:
  """An initializer drawing from N(0, stddev**2) (mirrors `jax.nn.initializers.normal`)."""
  def init(key, shape, dtype=dtype, out_sharding=None):
    dtype = _dtype(dtype)
    return random.normal(key, shape, dtype, out_sharding=out_sharding) * jnp.array(stddev, dtype)
  return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0) -> Initializer:
  """An initializer drawing stddev * (a standard normal truncated to [lower, upper]).

  Mirrors `jax.nn.initializers.truncated_normal`.
  """
  def init(key, shape, dtype=dtype, out_sharding=None):
    dtype = _dtype(dtype)
    return random.truncated_normal(key, lower, upper, shape, dtype,
                                   out_sharding=out_sharding) * jnp.array(stddev, dtype)
  return init


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
  """(fan_in, fan_out): the in/out sizes times the receptive field (all other non-batch axes).

  Raises:
    ValueError: a shape of rank < 2 with the default `in_axis`.
  """
  if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
    raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional"
                     " weights tensor with default in_axis. Must be at least 2D or specify"
                     " in_axis explicitly.")

  def size(axes):
    return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)

  in_size, out_size = size(in_axis), size(out_axis)
  receptive_field = math.prod(shape) / in_size / out_size / size(batch_axis)
  return in_size * receptive_field, out_size * receptive_field


def _complex_uniform(key, shape, dtype):
  """sqrt(2 u1) * exp(2 pi i u2): uniform on the disc of radius sqrt(2) (variance 1)."""
  key_r, key_theta = random.split(key)
  real_dtype = np.array(0, dtype).real.dtype
  dtype = dtypes.to_complex_dtype(real_dtype)
  r = jnp.sqrt(2 * random.uniform(key_r, shape, real_dtype)).astype(dtype)
  theta = 2 * np.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
  return r * jnp.exp(1j * theta)


def _complex_truncated_normal(key, upper, shape, dtype):
  """A complex normal with modulus truncated to `upper`, by inverting its CDF."""
  key_r, key_theta = random.split(key)
  real_dtype = np.array(0, dtype).real.dtype
  dtype = dtypes.to_complex_dtype(real_dtype)
  t = ((1 - jnp.exp(jnp.array(-(upper ** 2), dtype)))
       * random.uniform(key_r, shape, real_dtype).astype(dtype))
  r = jnp.sqrt(-jnp.log(1 - t))
  theta = 2 * np.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
  return r * jnp.exp(1j * theta)


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None) -> Initializer:
  """An initializer whose samples have variance scale / n, n set by `mode`.

  Args:
    scale: the variance multiplier.
    mode: "fan_in", "fan_out", "fan_avg" ((fan_in + fan_out) / 2) or
      "fan_geo_avg" (sqrt(fan_in * fan_out)); fans are computed from the shape
      with `in_axis`, `out_axis` and `batch_axis` (ints or sequences of ints),
      all other axes forming the receptive field.
    distribution: "truncated_normal" (a normal truncated at two standard
      deviations, rescaled to the target variance), "normal" or "uniform".
      Complex dtypes draw a modulus and a uniform phase.
    dtype: the default dtype of the samples.

  Returns:
    ``init(key, shape, dtype=dtype, out_sharding=None)``, which raises
    ValueError for an unknown mode or distribution, or a rank < 2 shape with
    the default `in_axis`.

  Mirrors `jax.nn.initializers.variance_scaling`.
  """
  def init(key, shape, dtype=dtype, out_sharding=None):
    shape = tuple(int(d) for d in shape)
    dtype = _dtype(dtype)
    fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
    if mode == "fan_in":
      denominator = fan_in
    elif mode == "fan_out":
      denominator = fan_out
    elif mode == "fan_avg":
      denominator = (fan_in + fan_out) / 2
    elif mode == "fan_geo_avg":
      denominator = (fan_in * fan_out) ** 0.5
    else:
      raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    variance = jnp.array(scale / denominator, dtype=dtype)
    real = dtypes.issubdtype(dtype, np.floating)
    if distribution == "truncated_normal":
      if real:
        # .8796... is the stddev of a standard normal truncated to [-2, 2].
        stddev = jnp.sqrt(variance) / jnp.array(.87962566103423978, dtype)
        return random.truncated_normal(key, -2, 2, shape, dtype,
                                       out_sharding=out_sharding) * stddev
      # .9531... is the stddev of the complex normal truncated at modulus 2.
      stddev = jnp.sqrt(variance) / jnp.array(.95311164380491208, dtype)
      return _complex_truncated_normal(key, 2, shape, dtype) * stddev
    if distribution == "normal":
      return random.normal(key, shape, dtype, out_sharding=out_sharding) * jnp.sqrt(variance)
    if distribution == "uniform":
      if real:
        return (random.uniform(key, shape, dtype, -1, out_sharding=out_sharding)
                * jnp.sqrt(3 * variance))
      return _complex_uniform(key, shape, dtype) * jnp.sqrt(variance)
    raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")
  return init


def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None) -> Initializer:
  """variance_scaling(1, "fan_avg", "uniform") (mirrors `jax.nn.initializers.glorot_uniform`)."""
  return variance_scaling(1.0, "fan_avg", "uniform", in_axis=in_axis, out_axis=out_axis,
                          batch_axis=batch_axis, dtype=dtype)


def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None) -> Initializer:
  """variance_scaling(1, "fan_avg", "truncated_normal") (mirrors `jax.nn.initializers.glorot_normal`)."""
  return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis=in_axis,
                          out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)


def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None) -> Initializer:
  """variance_scaling(1, "fan_in", "uniform") (mirrors `jax.nn.initializers.lecun_uniform`)."""
  return variance_scaling(1.0, "fan_in", "uniform", in_axis=in_axis, out_axis=out_axis,
                          batch_axis=batch_axis, dtype=dtype)


def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None) -> Initializer:
  """variance_scaling(1, "fan_in", "truncated_normal") (mirrors `jax.nn.initializers.lecun_normal`)."""
  return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis=in_axis,
                          out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)


def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None) -> Initializer:
  """variance_scaling(2, "fan_in", "uniform") (mirrors `jax.nn.initializers.he_uniform`)."""
  return variance_scaling(2.0, "fan_in", "uniform", in_axis=in_axis, out_axis=out_axis,
                          batch_axis=batch_axis, dtype=dtype)


def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None) -> Initializer:
  """variance_scaling(2, "fan_in", "truncated_normal") (mirrors `jax.nn.initializers.he_normal`)."""
  return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis=in_axis,
                          out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def orthogonal(scale=1.0, column_axis=-1, dtype=None) -> Initializer:
  """An initializer of `scale` times a uniformly random orthogonal matrix.

  The shape (rank >= 2) is viewed as a matrix whose columns run along
  `column_axis` and whose rows are all the other axes flattened; that matrix
  has orthonormal columns (or rows, when it is wide). A shape with a zero
  dimension gives zeros.

  Returns:
    ``init(key, shape, dtype=dtype, out_sharding=None)``, which raises
    ValueError for a shape of rank < 2, and NotImplementedError for an
    `out_sharding`.

  Mirrors `jax.nn.initializers.orthogonal`.
  """
  def init(key, shape, dtype=dtype, out_sharding=None):
    if out_sharding is not None:
      raise NotImplementedError
    dtype = _dtype(dtype)
    if len(shape) < 2:
      raise ValueError("orthogonal initializer requires at least a 2D shape")
    if any(d == 0 for d in shape):
      return jnp.zeros(shape, dtype=dtype)
    n_cols = shape[column_axis]
    n_rows = math.prod(shape) // n_cols
    q = random.orthogonal(key, n_rows, (), dtype, n_cols)
    q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (n_cols,))
    q = jnp.moveaxis(q, -1, column_axis)
    return jnp.array(scale, dtype) * q
  return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None) -> Initializer:
  """An initializer for 1-D, 2-D or 3-D convolution kernels (shapes of rank 3, 4 or 5).

  All spatial taps are zero except the centre one (index (k - 1) // 2 along
  each spatial axis), which holds an orthogonal matrix of shape
  ``shape[-2:]`` drawn as `orthogonal` does.

  Returns:
    ``init(key, shape, dtype=dtype, out_sharding=None)``, which raises
    ValueError unless the rank is 3, 4 or 5 and ``shape[-1] >= shape[-2]``,
    and NotImplementedError for an `out_sharding`.

  Mirrors `jax.nn.initializers.delta_orthogonal`.
  """
  def init(key, shape, dtype=dtype, out_sharding=None):
    if out_sharding is not None:
      raise NotImplementedError
    dtype = _dtype(dtype)
    if len(shape) not in (3, 4, 5):
      raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
    if shape[-1] < shape[-2]:
      raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
    ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
    centre = tuple((k - 1) // 2 for k in shape[:-2])
    return jnp.zeros(shape, dtype=dtype).at[centre + (Ellipsis,)].set(ortho)
  return init
