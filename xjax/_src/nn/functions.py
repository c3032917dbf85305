"""Activation functions and friends (mirrors `jax.nn`), as compositions of jnp and lax."""
from __future__ import annotations

import math

import numpy as np

import xjax.numpy as jnp
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.jit import jit
from xjax._src.lax import elementwise as lax
from xjax._src.lax.ad_util import stop_gradient


@custom_jvp
@jit
def relu(x):
  """max(x, 0), with gradient 0 at x = 0 (mirrors `jax.nn.relu`)."""
  return jnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: jnp.where(x > 0, g, jnp.zeros_like(g)))


def relu6(x):
  """min(max(x, 0), 6) (mirrors `jax.nn.relu6`)."""
  return jnp.minimum(jnp.maximum(x, 0), 6.)


def sigmoid(x):
  """The logistic sigmoid 1 / (1 + exp(-x)) (mirrors `jax.nn.sigmoid`)."""
  return lax.logistic(jnp.asarray(x, dtype=jnp.result_type(x, float)))


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
  return x * (lax.erfc(-x * np.array(1 / math.sqrt(2), x.dtype)) / 2)


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
  """log(sum(b * exp(a))) over `axis`, computed stably (mirrors `jax.nn.logsumexp`)."""
  a = jnp.asarray(a)
  if b is not None:
    a, b = jnp.asarray(a), jnp.asarray(b)
    a = jnp.where(b != 0, a, -jnp.inf)
  amax = jnp.max(a, axis=axis, keepdims=True, where=where, initial=-jnp.inf) if where is not None \
      else jnp.max(a, axis=axis, keepdims=True)
  amax = stop_gradient(jnp.where(jnp.isfinite(amax), amax, 0))
  exp_a = jnp.exp(a - amax)
  if b is not None:
    exp_a = exp_a * b
  total = jnp.sum(exp_a, axis=axis, keepdims=True, where=where)
  sign = jnp.sign(total)
  out = jnp.log(jnp.abs(total)) + amax
  if not keepdims:
    axes = tuple(range(a.ndim)) if axis is None else axis
    out = jnp.squeeze(out, axis=axes)
    sign = jnp.squeeze(sign, axis=axes)
  if return_sign:
    return out, sign
  if b is not None:
    out = jnp.where(sign < 0, jnp.nan, out)
  return out


def softmax(x, axis=-1, where=None, initial=None):
  """exp(x) / sum(exp(x)) over `axis`, computed stably (mirrors `jax.nn.softmax`)."""
  x_max = jnp.max(x, axis, where=where, initial=-jnp.inf, keepdims=True) if where is not None \
      else jnp.max(x, axis, keepdims=True)
  unnormalized = jnp.exp(x - stop_gradient(x_max))
  if where is not None:
    unnormalized = jnp.where(where, unnormalized, 0.)
  return unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)


def log_softmax(x, axis=-1, where=None, initial=None):
  """x - logsumexp(x) over `axis`, computed stably (mirrors `jax.nn.log_softmax`)."""
  x_max = jnp.max(x, axis, where=where, initial=-jnp.inf, keepdims=True) if where is not None \
      else jnp.max(x, axis, keepdims=True)
  shifted = x - stop_gradient(x_max)
  exp_shifted = jnp.exp(shifted)
  if where is not None:
    exp_shifted = jnp.where(where, exp_shifted, 0.)
  result = shifted - jnp.log(jnp.sum(exp_shifted, axis, where=where, keepdims=True))
  if where is not None:
    return jnp.where(where, result, -jnp.inf)
  return result


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
  """(x - mean) / sqrt(variance + epsilon) over `axis` (mirrors `jax.nn.standardize`)."""
  if mean is None:
    mean = jnp.mean(x, axis, keepdims=True, where=where)
  if variance is None:
    variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where) - jnp.square(mean)
  return (x - mean) * lax.rsqrt(variance + epsilon)


def one_hot(x, num_classes: int, *, dtype=None, axis=-1):
  """One-hot encoding of integer `x` along a new axis of size num_classes.

  Entries outside [0, num_classes) give all-zero rows. Mirrors `jax.nn.one_hot`.
  """
  num_classes = int(num_classes)
  dtype = jnp.float32 if dtype is None else dtype
  x = jnp.asarray(x)
  axis = axis if axis >= 0 else x.ndim + 1 + axis
  expanded = jnp.expand_dims(x, axis)
  shape = [1] * (x.ndim + 1)
  shape[axis] = num_classes
  classes = jnp.reshape(jnp.arange(num_classes, dtype=x.dtype if jnp.issubdtype(x.dtype, jnp.integer)
                                   else jnp.int32), shape)
  return jnp.asarray(expanded == classes, dtype=dtype)
