"""Activation functions and friends (mirrors `jax.nn`), as compositions of jnp and lax."""
from __future__ import annotations

import dataclasses
import math
import operator
import warnings
from functools import partial
from typing import Any

import numpy as np

import xjax.numpy as jnp
from xjax._src import config as config_lib
from xjax._src import deprecations
from xjax._src.custom_derivatives import custom_jvp
from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax.dot import dot_general
from xjax._src.lax.scaled_dot import scaled_dot
from xjax._src.lax import transcendental as lax_tr
from xjax._src.lax.ad_util import stop_gradient
from xjax._src.numpy.util import (canonicalize_axis, check_arraylike, check_arraylike_or_none,
                                  concrete_or_error, ensure_arraylike, promote_dtypes_inexact)


@custom_jvp
@jit
def relu(x):
  """max(x, 0), with gradient 0 at x = 0 (mirrors `jax.nn.relu`)."""
  return jnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: jnp.where(x > 0, g, jnp.zeros_like(g)))


@custom_jvp
@jit
def relu6(x):
  """min(max(x, 0), 6), with gradient 0 at x = 0 and x = 6 (mirrors `jax.nn.relu6`)."""
  return jnp.minimum(jnp.maximum(x, 0), 6.)


relu6.defjvps(lambda g, ans, x: jnp.where((x > 0) & (x < 6), g, jnp.zeros_like(g)))


def sigmoid(x):
  """The logistic sigmoid 1 / (1 + exp(-x)) (mirrors `jax.nn.sigmoid`)."""
  return lax_tr.logistic(jnp.asarray(x, dtype=jnp.result_type(x, float)))


def log_sigmoid(x):
  """log(sigmoid(x)) = -softplus(-x) (mirrors `jax.nn.log_sigmoid`)."""
  return -softplus(-x)


def soft_sign(x):
  """x / (|x| + 1) (mirrors `jax.nn.soft_sign`)."""
  return x / (jnp.abs(x) + 1)


def softplus(x):
  """log(1 + exp(x)), computed stably (mirrors `jax.nn.softplus`)."""
  return jnp.logaddexp(x, 0)


def squareplus(x, b=4):
  """(x + sqrt(x**2 + b)) / 2, a smooth relu (mirrors `jax.nn.squareplus`)."""
  return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def silu(x):
  """x * sigmoid(x) (mirrors `jax.nn.silu`, alias `swish`)."""
  return x * sigmoid(x)


swish = silu


def hard_sigmoid(x):
  """relu6(x + 3) / 6 (mirrors `jax.nn.hard_sigmoid`)."""
  return relu6(x + 3.) / 6.


def hard_silu(x):
  """x * hard_sigmoid(x) (mirrors `jax.nn.hard_silu`, alias `hard_swish`)."""
  return x * hard_sigmoid(x)


hard_swish = hard_silu


def hard_tanh(x):
  """x clipped to [-1, 1] (mirrors `jax.nn.hard_tanh`)."""
  return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


def gelu(x, approximate: bool = True):
  """The Gaussian error linear unit; the tanh approximation by default (mirrors `jax.nn.gelu`)."""
  x = jnp.asarray(x, dtype=jnp.result_type(x, float))
  if approximate:
    cdf = 0.5 * (1.0 + jnp.tanh(np.sqrt(2 / np.pi).astype(x.dtype) * (x + 0.044715 * (x ** 3))))
    return x * cdf
  return x * (lax_tr.erfc(-x * np.array(1 / math.sqrt(2), x.dtype)) / 2)


def elu(x, alpha=1.0):
  """x for x > 0, alpha * (exp(x) - 1) otherwise (mirrors `jax.nn.elu`)."""
  safe_x = jnp.where(x > 0, 0., x)
  return jnp.where(x > 0, x, alpha * jnp.expm1(safe_x))


def celu(x, alpha=1.0):
  """max(x, 0) + alpha * min(exp(x / alpha) - 1, 0) (mirrors `jax.nn.celu`)."""
  return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


def selu(x):
  """The scaled elu with the self-normalizing constants (mirrors `jax.nn.selu`)."""
  alpha = 1.6732632423543772848170429916717
  scale = 1.0507009873554804934193349852946
  return scale * elu(x, alpha)


def leaky_relu(x, negative_slope=1e-2):
  """x for x >= 0, negative_slope * x otherwise (mirrors `jax.nn.leaky_relu`)."""
  return jnp.where(x >= 0, x, negative_slope * x)


def glu(x, axis: int = -1):
  """Gated linear unit: the first half of `axis` times sigmoid of the second (mirrors `jax.nn.glu`)."""
  size = x.shape[axis]
  if size % 2:
    raise ValueError(f"axis size must be divisible by 2, got {size}")
  a, b = jnp.split(x, 2, axis)
  return a * sigmoid(b)


def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False, where=None):
  """log(sum(b * exp(a))) over `axis`, computed stably (mirrors `jax.nn.logsumexp`).

  Integer inputs are promoted to floats. An empty reduction (a zero-size axis,
  or `where` all False) gives -inf, with sign 0 under `return_sign`. For complex input the
  result is the complex logarithm of the sum (shifted by the largest real part); with
  `return_sign`, the log of its modulus and its phase as the sign.

  Raises:
    TypeError: `a` or `b` is not an array or scalar (a list, say).
  """
  if where is not None:
    a = jnp.where(where, a, 0)
  if b is None:
    a, = promote_dtypes_inexact(ensure_arraylike("logsumexp", a))
  else:
    a, b = promote_dtypes_inexact(*ensure_arraylike("logsumexp", a, b))
    a = jnp.where(b != 0, a, -jnp.inf)
  is_complex = jnp.iscomplexobj(a)
  # The shift is the largest real part; initial=-inf: an empty reduction has a maximum
  # (then replaced by 0 below).
  amax = jnp.max(jnp.real(a), axis=axis, keepdims=True, where=where, initial=-jnp.inf)
  amax = stop_gradient(jnp.where(jnp.isfinite(amax), amax, 0))
  exp_a = jnp.exp(a - amax.astype(a.dtype))
  if b is not None:
    exp_a = exp_a * b
  total = jnp.sum(exp_a, axis=axis, keepdims=True, where=where)
  sign = jnp.sign(total)
  if return_sign or not is_complex:  # a complex result keeps the sum's phase
    total = jnp.abs(total)
  out = jnp.log(total) + amax.astype(total.dtype)
  if not keepdims:
    axes = tuple(range(a.ndim)) if axis is None else axis
    out = jnp.squeeze(out, axis=axes)
    sign = jnp.squeeze(sign, axis=axes)
  if return_sign:
    return out, sign
  if b is not None and not jnp.iscomplexobj(out):
    out = jnp.where(sign < 0, jnp.array(np.nan, out.dtype), out)
  return out


def softmax(x, axis=-1, where=None):
  """exp(x) / sum(exp(x)) over `axis` (an int, tuple or None), computed stably.

  `where` (boolean, broadcastable to `x`) restricts the sum to its True
  entries; the output is 0 elsewhere. The maximum subtracted for stability
  carries no gradient. With ``jax_softmax_custom_jvp`` on (`xjax.softmax_custom_jvp`), the
  derivative is a custom rule in terms of the output, ``y * (dx - sum(y * dx))``, which keeps
  only the output for reverse mode. Mirrors `jax.nn.softmax`.
  """
  if config_lib.config.jax_softmax_custom_jvp:
    return _softmax(x, axis, where)
  x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
  x_safe = x if where is None else jnp.where(where, x, -np.inf)
  unnormalized = jnp.exp(x_safe - stop_gradient(x_max))
  result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
  if where is not None:
    result = jnp.where(where, result, 0)
  return result


@partial(custom_jvp, nondiff_argnums=(1,))
def _softmax(x, axis=-1, where=None, initial=-np.inf):
  x_max = jnp.max(x, axis, where=where, initial=initial, keepdims=True)
  x_safe = x if where is None else jnp.where(where, x, initial)
  unnormalized = jnp.exp(x_safe - x_max)
  result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
  if where is not None:
    result = jnp.where(where, result, 0)
  return result


@_softmax.defjvp
def _softmax_jvp(axis, primals, tangents):
  (x, where, initial), (x_dot, _, _) = primals, tangents
  y = _softmax(x, axis, where, initial)
  return y, y * (x_dot - (y * x_dot).sum(axis, where=where, keepdims=True))


@jit(static_argnames=("axis",))
def log_softmax(x, axis=-1, where=None):
  """x - logsumexp(x) over `axis`, computed stably; -inf where `where` is False.

  Mirrors `jax.nn.log_softmax`.
  """
  x = ensure_arraylike("log_softmax", x)
  x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
  x_safe = x if where is None else jnp.where(where, x, -np.inf)
  shifted = x_safe - stop_gradient(x_max)
  result = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
  if where is not None:
    return jnp.where(where, result, -np.inf)
  return result


@jit(static_argnames=("axis", "algorithm"))
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm: str = "fast"):
  """(x - mean) / sqrt(variance + epsilon) over `axis`.

  Args:
    x: the array; axis: an int, tuple or None (all axes).
    mean, variance: used as given; by default ``x.mean(axis, where=where)`` and the variance
      computed by `algorithm`.
    epsilon: added to the variance.
    where: a mask of the elements the mean and variance are taken over.
    algorithm: "fast", ``mean(x**2) - mean(x)**2`` clipped at 0 (it may cancel
      catastrophically), or "stable", the two-pass ``mean((x - mean)**2)``.

  Raises:
    ValueError: another `algorithm`.

  Mirrors `jax.nn.standardize`.
  """
  check_arraylike("standardize", x)
  check_arraylike_or_none("standardize", mean, variance, where)
  if mean is None:
    mean = jnp.mean(x, axis, keepdims=True, where=where)
  if variance is None:
    if algorithm == "stable":
      variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis, keepdims=True, where=where)
    elif algorithm == "fast":
      variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where) - jnp.square(mean)
      variance = jnp.clip(variance, 0)  # cancellation can make it negative
    else:
      raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
  return jnp.subtract(x, mean) * lax_tr.rsqrt(variance + epsilon)


def one_hot(x, num_classes: int, *, dtype=None, axis=-1):
  """One-hot encoding of integer `x` along a new axis of size num_classes.

  Entries outside [0, num_classes) give all-zero rows.

  A non-integer `x` is deprecated (a DeprecationWarning, or ValueError once the deprecation
  "jax-nn-one-hot-float-input" is accelerated). `dtype` defaults to the default float dtype.

  Raises:
    TypeError: `num_classes` is not a non-negative integer (a float, say).
    ConcretizationTypeError: `num_classes` is traced (it is a shape).
    ValueError: `axis` is out of range for ``x.ndim + 1`` axes.

  Mirrors `jax.nn.one_hot`.
  """
  num_classes = concrete_or_error(num_classes,
                                  "The error arose in jax.nn.one_hot argument `num_classes`.")
  try:
    num_classes = operator.index(num_classes)
  except TypeError as e:
    raise TypeError("jax.nn.one_hot argument `num_classes` must be an integer, got "
                    f"{num_classes!r}") from e
  if num_classes < 0:
    raise TypeError("jax.nn.one_hot argument `num_classes` must be non-negative, got "
                    f"{num_classes}.")
  x = jnp.asarray(x)
  if not dtypes.isdtype(x.dtype, "integral"):  # deprecated by JAX on 2024-12-18
    deprecations.warn("jax-nn-one-hot-float-input",
                      f"jax.nn.one_hot input should be integer-typed; got dtype={x.dtype}",
                      stacklevel=1)
  dtype = dtypes.default_float_dtype() if dtype is None else dtype
  axis = canonicalize_axis(axis, x.ndim + 1)
  expanded = jnp.expand_dims(x, axis)
  shape = [1] * (x.ndim + 1)
  shape[axis] = num_classes
  classes = jnp.reshape(jnp.arange(num_classes, dtype=x.dtype if jnp.issubdtype(x.dtype, jnp.integer)
                                   else jnp.int32), shape)
  return jnp.asarray(expanded == classes, dtype=dtype)


@jit
def identity(x):
  """Returns `x` unchanged, as an array (mirrors `jax.nn.identity`).

  Raises:
    TypeError: `x` is not an array or scalar (a list, say).
  """
  return ensure_arraylike("identity", x)


@jit
def sparse_plus(x):
  """0 for x <= -1, (x + 1)**2 / 4 for -1 < x < 1, x for x >= 1 (mirrors `jax.nn.sparse_plus`).

  A smooth, convex, monotone twin of softplus that is exactly 0 below -1 and
  exactly x above 1. Returns an array of `x`'s shape.
  """
  x = ensure_arraylike("sparse_plus", x)
  return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@jit
def sparse_sigmoid(x):
  """clip((x + 1) / 2, 0, 1), the derivative of `sparse_plus` (mirrors `jax.nn.sparse_sigmoid`)."""
  return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


@jit
def mish(x):
  """x * tanh(softplus(x)) (mirrors `jax.nn.mish`)."""
  x = ensure_arraylike("mish", x)
  return x * jnp.tanh(softplus(x))


@jit(static_argnames=("axis", "keepdims"))
def logmeanexp(x, axis=None, where=None, keepdims: bool = False):
  """log(mean(exp(x))) over `axis`: logsumexp(x) - log(n), computed stably.

  Args:
    x: an array.
    axis: an int, a tuple of ints or None (all axes).
    where: an optional boolean array broadcastable to `x`; only its True
      entries count, and n is their number.
    keepdims: keep the reduced axes with size 1.

  Mirrors `jax.nn.logmeanexp`.
  """
  lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
  x = jnp.asarray(x)
  if where is None:
    axes = range(x.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    count = jnp.asarray(math.prod(x.shape[a] for a in axes), lse.dtype)
  else:
    count = jnp.sum(jnp.broadcast_to(where, x.shape), axis=axis, keepdims=keepdims,
                    dtype=lse.dtype)
  return lse - jnp.log(count)


@custom_jvp
@jit
def log1mexp(x):
  """log(1 - exp(-x)) for x >= 0, computed stably; NaN for x < 0.

  Uses log(-expm1(-x)) below log(2) and log1p(-exp(-x)) above it (Mächler's
  recipe). The derivative is 1 / expm1(x). Mirrors `jax.nn.log1mexp`.
  """
  x = ensure_arraylike("log1mexp", x)
  c = jnp.log(2.0)
  return jnp.where(x < c, jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=np.float32):
  """Block-scaled batched matmul: einsum("BMK,BNK->BMN", lhs * ls, rhs * rs).

  ``ls`` is `lhs_scales` with each element repeated over a block of
  ``K // lhs_scales.shape[-1]`` consecutive elements of the last (contracting)
  axis, and likewise ``rs``. Computed by `xjax.lax.scaled_dot` (operands and
  scales rounded to bfloat16 before multiplying), which is what JAX lowers
  this to on ROCm; JAX on CPU has no lowering and raises instead.

  Args:
    lhs: [B, M, K], typically float8_e4m3fn / float8_e5m2.
    rhs: [B, N, K].
    lhs_scales: [B, M, K_a] with K a multiple (at least 2) of K_a.
    rhs_scales: [B, N, K_b], with K_b == K_a.
    preferred_element_type: the result dtype (default float32).

  Returns:
    An array [B, M, N] of `preferred_element_type`.

  Raises:
    ValueError: operands not all 3-D, or batch / contracting / free sizes that
      do not match (JAX's messages).

  Mirrors `jax.nn.scaled_matmul`.
  """
  if not all(x.ndim == 3 for x in (lhs, rhs, lhs_scales, rhs_scales)):
    raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
  (B_a, M_a, K_a), (B_b, N_b, K_b) = lhs.shape, rhs.shape
  if K_a != K_b or B_a != B_b:
    raise ValueError("scaled_matmul requires inputs a and b to have matching batch (B) and "
                     f"contract (K) dimensions, but got shapes {lhs.shape} and {rhs.shape}")
  (B_as, M_as, K_as), (B_bs, N_bs, K_bs) = lhs_scales.shape, rhs_scales.shape
  if K_as != K_bs or B_as != B_bs:
    raise ValueError("scaled_matmul requires scales to have matching batch (B) and contract "
                     f"(K) dimensions, but got shapes {lhs_scales.shape} and "
                     f"{rhs_scales.shape}")
  if M_as != M_a or N_bs != N_b:
    raise ValueError("scaled_matmul requires scales to match non-contract dimensions of "
                     f"inputs, but got shapes a: {lhs.shape}, b: {rhs.shape}, a_scales: "
                     f"{lhs_scales.shape}, b_scales: {rhs_scales.shape}")
  preferred_element_type = dtypes.check_user_dtype_supported(preferred_element_type,
                                                             "scaled_matmul")
  return scaled_dot(lhs, rhs, lhs_scale=lhs_scales, rhs_scale=rhs_scales,
                    dimension_numbers=(((2,), (2,)), ((0,), (0,))),
                    preferred_element_type=preferred_element_type)


@dataclasses.dataclass
class BlockScaleConfig:
  """How `scaled_dot_general` quantizes one operand (mirrors JAX's `BlockScaleConfig`)."""
  mode: str
  block_size: int
  data_type: Any
  scale_type: Any
  global_scale: Any
  infer_only: bool


def get_scaled_dot_general_config(mode, global_scale=None):
  """The quantization config for `scaled_dot_general` of a microscaling `mode`.

  "mxfp8": float8_e4m3fn data, float8_e8m0fnu scales per 32 elements.
  "nvfp4": float4_e2m1fn data, float8_e4m3fn scales per 16 elements, and a
  float32 `global_scale` (default ones((1,))).

  Raises:
    ValueError: another mode. Mirrors `jax.nn.get_scaled_dot_general_config`.
  """
  if mode == "nvfp4":
    return BlockScaleConfig(
        mode="nvfp4", block_size=16, data_type=dtypes.float4_e2m1fn,
        scale_type=dtypes.float8_e4m3fn, infer_only=False,
        global_scale=jnp.ones((1,), np.float32) if global_scale is None else global_scale)
  if mode == "mxfp8":
    return BlockScaleConfig(mode="mxfp8", block_size=32, data_type=dtypes.float8_e4m3fn,
                            scale_type=dtypes.float8_e8m0fnu, global_scale=None,
                            infer_only=False)
  raise ValueError(f"Unsupported mode: {mode}")


def _e8m0_round_up(x):
  """Positive float32 values as float8_e8m0fnu exponents (uint8), rounded up to a power of
  two: any mantissa bit rounds up, except at the largest exponent and for subnormals at most
  half of the smallest normal (which round down to it)."""
  bits = jnp.asarray(x, np.float32).view(np.uint32)
  exp, mant = bits >> 23, bits & 0x7FFFFF
  up = (mant > 0) & (exp != 0xFE) & ~((exp == 0) & (mant <= 0x400000))
  return jnp.where(up, exp + 1, exp).astype(np.uint8)


def _e8m0_value(exp, dtype):
  """The power of two a float8_e8m0fnu exponent (uint8) stands for, in `dtype`; a zero
  exponent reads as the smallest value `dtype` keeps (2**-15 in float16, else 2**-127)."""
  value = (exp.astype(np.uint32) << 23).view(np.float32)
  tiny = 2.0 ** -15 if dtype == np.float16 else 2.0 ** -127
  return jnp.where(value == 0, jnp.array(tiny, np.float32), value).astype(dtype)


def quantize(x, config: BlockScaleConfig):
  """`x` [..., K] quantized per block of ``config.block_size`` elements of its last axis:
  ``(x_q, scales)`` with ``x ~ x_q * scales`` (each scale repeated over its block).

  Each block's scale is its largest magnitude over the largest value of
  ``config.data_type``: for "mxfp8" rounded up to a power of two (float8_e8m0fnu scales),
  for "nvfp4" after dividing `x` by ``config.global_scale``, clipped to and cast to
  ``config.scale_type``. The scaled values are clipped to the data type's range, then cast.

  Returns:
    ``x_q`` of ``config.data_type`` and `x`'s shape; ``scales`` of ``config.scale_type`` and
    shape ``[..., K // block_size]``.

  Raises:
    ValueError: K is not a positive multiple of the block size, or an unknown mode.

  Mirrors JAX's private `jax._src.cudnn.scaled_matmul_stablehlo.quantize`.
  """
  x = jnp.asarray(x)
  shape, block = x.shape, config.block_size
  if not (shape[-1] >= block and shape[-1] % block == 0):
    raise ValueError(f"quantize: the last dimension {shape[-1]} must be a positive multiple "
                     f"of the block size {block}")
  x = x.reshape(shape[:-1] + (shape[-1] // block, block))
  top = np.asarray(dtypes.finfo(config.data_type).max).astype(x.dtype)

  def block_scales(v):
    return jnp.max(jnp.abs(v), axis=-1, keepdims=True) / top

  if config.mode == "mxfp8":
    scales = _e8m0_round_up(block_scales(x))
    scaled = x / _e8m0_value(scales, x.dtype)
    scales = scales.view(config.scale_type)
  elif config.mode == "nvfp4":
    scale_top = np.asarray(dtypes.finfo(config.scale_type).max).astype(x.dtype)
    x = x / config.global_scale
    scales = jnp.clip(block_scales(x), 0, scale_top).astype(config.scale_type)
    scaled = x / scales.astype(np.float32)
  else:
    raise ValueError(f"Unrecognized mode: {config.mode}.")
  x_q = jnp.clip(scaled, -top, top).astype(config.data_type).reshape(shape)
  return x_q, scales.reshape(scales.shape[:-1])


def scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type=np.float32,
                       configs=None, implementation=None):
  """A dot_general with operands quantized block-wise per `configs`.

  With ``configs=None`` this is ``lax.dot_general(lhs, rhs, dimension_numbers,
  preferred_element_type=preferred_element_type)``, as in JAX. `implementation`
  is ignored (a DeprecationWarning when given).

  Raises:
    NotImplementedError: `configs` given: the quantized path is a cuDNN
      (Blackwell GPU) kernel, which JAX on CPU cannot lower either.

  Mirrors `jax.nn.scaled_dot_general`.
  """
  if implementation is not None:
    warnings.warn("Backend selector, now ignored. The system chooses the backend "
                  "automatically.", DeprecationWarning)
  if configs is None:
    return dot_general(lhs, rhs, dimension_numbers,
                       preferred_element_type=preferred_element_type)
  raise NotImplementedError("scaled_dot_general with quantization configs needs the cuDNN "
                            "scaled_matmul kernel, which xjax (like JAX on CPU) cannot lower")
