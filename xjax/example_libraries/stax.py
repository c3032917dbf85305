"""Stax: a small neural-network specification library (mirrors `jax.example_libraries.stax`).

A layer is an ``(init_fun, apply_fun)`` pair:

* ``init_fun(rng, input_shape) -> (output_shape, params)`` draws the layer's
  parameters from the PRNG key ``rng`` for inputs of shape ``input_shape``;
* ``apply_fun(params, inputs, **kwargs) -> outputs`` runs the layer. Layers
  that need randomness (`Dropout`) take the key as ``rng=...``.

Layer constructors use CamelCase (`Dense`, `Conv`, `Relu`), plain functions
snake_case. Combinators (`serial`, `parallel`, `shape_dependent`) build layers
from layers. As in JAX, this is an example library: it uses only the public
API.
"""
import functools
import math

from xjax import lax
from xjax import random
import xjax.numpy as jnp
from xjax.nn import (elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid,
                     softmax, softplus, standardize)
from xjax.nn.initializers import glorot_normal, normal, ones, zeros

# Older names kept by JAX's stax.
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


### Layers.

def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
  """A fully connected layer: ``inputs @ W + b``.

  ``init_fun`` maps inputs ``(..., d)`` to outputs ``(..., out_dim)`` and draws
  ``W`` of shape ``(d, out_dim)`` and ``b`` of shape ``(out_dim,)``.

  Mirrors `jax.example_libraries.stax.Dense`.
  """
  def init_fun(rng, input_shape):
    output_shape = input_shape[:-1] + (out_dim,)
    k1, k2 = random.split(rng)
    W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
    return output_shape, (W, b)
  def apply_fun(params, inputs, **kwargs):
    W, b = params
    return jnp.dot(inputs, W) + b
  return init_fun, apply_fun


def _kernel_shape(lhs_spec, rhs_spec, input_shape, out_chan, filter_shape):
  # Walk the kernel spec: 'O' is out_chan, 'I' the input's channel count, and
  # the spatial letters take the filter sizes in order.
  spatial = iter(filter_shape)
  return [out_chan if c == 'O' else
          input_shape[lhs_spec.index('C')] if c == 'I' else
          next(spatial) for c in rhs_spec]


def GeneralConv(dimension_numbers, out_chan, filter_shape,
                strides=None, padding='VALID', W_init=None,
                b_init=normal(1e-6)):
  """A convolution layer with explicit dimension numbers.

  Args:
    dimension_numbers: ``(lhs_spec, rhs_spec, out_spec)`` strings such as
      ``('NHWC', 'HWIO', 'NHWC')``, as for `lax.conv_general_dilated`.
    out_chan: the number of output channels.
    filter_shape: the spatial sizes of the kernel.
    strides: the window strides (default all 1).
    padding: ``'VALID'``, ``'SAME'``, ``'SAME_LOWER'`` or explicit pairs.
    W_init: kernel initializer (default Glorot normal over the kernel's I and O
      axes).
    b_init: bias initializer; the bias is broadcast along all but the channel
      axis of the output.

  Mirrors `jax.example_libraries.stax.GeneralConv`.
  """
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  one = (1,) * len(filter_shape)
  strides = strides or one
  W_init = W_init or glorot_normal(rhs_spec.index('I'), rhs_spec.index('O'))
  def init_fun(rng, input_shape):
    kernel_shape = _kernel_shape(lhs_spec, rhs_spec, input_shape, out_chan,
                                 filter_shape)
    output_shape = lax.conv_general_shape_tuple(
        input_shape, kernel_shape, strides, padding, dimension_numbers)
    bias_shape = [out_chan if c == 'C' else 1 for c in out_spec]
    k1, k2 = random.split(rng)
    return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))
  def apply_fun(params, inputs, **kwargs):
    W, b = params
    return lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                    dimension_numbers=dimension_numbers) + b
  return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ('NHWC', 'HWIO', 'NHWC'))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape,
                         strides=None, padding='VALID', W_init=None,
                         b_init=normal(1e-6)):
  """A transposed-convolution layer with explicit dimension numbers.

  Arguments as for `GeneralConv`; the layer applies `lax.conv_transpose`.

  Mirrors `jax.example_libraries.stax.GeneralConvTranspose`.
  """
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  one = (1,) * len(filter_shape)
  strides = strides or one
  W_init = W_init or glorot_normal(rhs_spec.index('I'), rhs_spec.index('O'))
  def init_fun(rng, input_shape):
    kernel_shape = _kernel_shape(lhs_spec, rhs_spec, input_shape, out_chan,
                                 filter_shape)
    output_shape = lax.conv_transpose_shape_tuple(
        input_shape, kernel_shape, strides, padding, dimension_numbers)
    bias_shape = [out_chan if c == 'C' else 1 for c in out_spec]
    k1, k2 = random.split(rng)
    return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))
  def apply_fun(params, inputs, **kwargs):
    W, b = params
    return lax.conv_transpose(inputs, W, strides, padding,
                              dimension_numbers=dimension_numbers) + b
  return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ('NHC', 'HIO', 'NHC'))
ConvTranspose = functools.partial(GeneralConvTranspose, ('NHWC', 'HWIO', 'NHWC'))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True,
              beta_init=zeros, gamma_init=ones):
  """Batch normalization over ``axis``: ``gamma * standardize(x) + beta``.

  ``beta`` and ``gamma`` have the input's shape without the ``axis`` dims; with
  ``center=False`` (``scale=False``) ``beta`` (``gamma``) is ``()`` and not
  applied. Statistics come from the batch itself (there is no running average).

  Mirrors `jax.example_libraries.stax.BatchNorm`.
  """
  axis = (axis,) if jnp.isscalar(axis) else axis
  def init_fun(rng, input_shape):
    shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
    k1, k2 = random.split(rng)
    beta = beta_init(k1, shape) if center else ()
    gamma = gamma_init(k2, shape) if scale else ()
    return input_shape, (beta, gamma)
  def apply_fun(params, x, **kwargs):
    beta, gamma = params
    # Index that re-inserts the normalized axes as size-1 dims.
    ed = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
    z = standardize(x, axis, epsilon=epsilon)
    if scale:
      z = gamma[ed] * z
    if center:
      z = z + beta[ed]
    return z
  return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
  """A parameterless layer applying ``fun(inputs, **fun_kwargs)``.

  Mirrors `jax.example_libraries.stax.elementwise`.
  """
  def init_fun(rng, input_shape):
    return input_shape, ()
  def apply_fun(params, inputs, **kwargs):
    return fun(inputs, **fun_kwargs)
  return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(reducer, init_val, rescaler=None):
  def PoolingLayer(window_shape, strides=None, padding='VALID', spec=None):
    """A pooling layer over the spatial dims of the input.

    Args:
      window_shape: the window's spatial sizes.
      strides: the spatial strides (default all 1).
      padding: ``'VALID'``, ``'SAME'`` or explicit pairs.
      spec: the input layout as a string with 'N' and 'C' (default: batch first,
        channels last).
    """
    strides = strides or (1,) * len(window_shape)
    rescale = rescaler(window_shape, strides, padding) if rescaler else None
    if spec is None:
      non_spatial_axes = 0, len(window_shape) + 1
    else:
      non_spatial_axes = spec.index('N'), spec.index('C')
    # Give the batch and channel axes windows and strides of 1.
    for i in sorted(non_spatial_axes):
      window_shape = window_shape[:i] + (1,) + window_shape[i:]
      strides = strides[:i] + (1,) + strides[i:]

    def init_fun(rng, input_shape):
      pads = lax.padtype_to_pads(input_shape, window_shape, strides, padding)
      ones_ = (1,) * len(window_shape)
      out_shape = lax.reduce_window_shape_tuple(
          input_shape, window_shape, strides, pads, ones_, ones_)
      return out_shape, ()
    def apply_fun(params, inputs, **kwargs):
      out = lax.reduce_window(inputs, init_val, reducer, window_shape,
                              strides, padding)
      return rescale(out, inputs, spec) if rescale else out
    return init_fun, apply_fun
  return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
MaxPool.__doc__ = """Max pooling layer. Mirrors `jax.example_libraries.stax.MaxPool`."""
SumPool = _pooling_layer(lax.add, 0.)
SumPool.__doc__ = """Sum pooling layer. Mirrors `jax.example_libraries.stax.SumPool`."""


def _normalize_by_window_size(dims, strides, padding):
  # Divides window sums by the number of input (non-padding) elements each
  # window covers.
  def rescale(outputs, inputs, spec):
    if spec is None:
      non_spatial_axes = 0, inputs.ndim - 1
    else:
      non_spatial_axes = spec.index('N'), spec.index('C')
    spatial_shape = tuple(d for i, d in enumerate(inputs.shape)
                          if i not in non_spatial_axes)
    window_sizes = lax.reduce_window(jnp.ones(spatial_shape, dtype=inputs.dtype),
                                     0., lax.add, dims, strides, padding)
    for i in sorted(non_spatial_axes):
      window_sizes = jnp.expand_dims(window_sizes, i)
    return outputs / window_sizes
  return rescale


AvgPool = _pooling_layer(lax.add, 0., _normalize_by_window_size)
AvgPool.__doc__ = """Average pooling layer. Mirrors `jax.example_libraries.stax.AvgPool`."""


def _flatten():
  def init_fun(rng, input_shape):
    return (input_shape[0], math.prod(input_shape[1:])), ()
  def apply_fun(params, inputs, **kwargs):
    return jnp.reshape(inputs, (inputs.shape[0], -1))
  return init_fun, apply_fun


# A layer flattening all but the leading dim. Mirrors `jax.example_libraries.stax.Flatten`.
Flatten = _flatten()


def _identity():
  def init_fun(rng, input_shape):
    return input_shape, ()
  def apply_fun(params, inputs, **kwargs):
    return inputs
  return init_fun, apply_fun


# A layer returning its input. Mirrors `jax.example_libraries.stax.Identity`.
Identity = _identity()


def FanOut(num):
  """A layer returning a list of ``num`` copies of its input.

  Mirrors `jax.example_libraries.stax.FanOut`.
  """
  def init_fun(rng, input_shape):
    return [input_shape] * num, ()
  def apply_fun(params, inputs, **kwargs):
    return [inputs] * num
  return init_fun, apply_fun


def _fan_in_sum():
  def init_fun(rng, input_shape):
    return input_shape[0], ()
  def apply_fun(params, inputs, **kwargs):
    return sum(inputs)
  return init_fun, apply_fun


# A layer summing a list of inputs. Mirrors `jax.example_libraries.stax.FanInSum`.
FanInSum = _fan_in_sum()


def FanInConcat(axis=-1):
  """A layer concatenating a list of inputs along ``axis``.

  Mirrors `jax.example_libraries.stax.FanInConcat`.
  """
  def init_fun(rng, input_shape):
    ax = axis % len(input_shape[0])
    concat_size = sum(shape[ax] for shape in input_shape)
    first = input_shape[0]
    return first[:ax] + (concat_size,) + first[ax + 1:], ()
  def apply_fun(params, inputs, **kwargs):
    return jnp.concatenate(inputs, axis)
  return init_fun, apply_fun


def Dropout(rate, mode='train'):
  """A dropout layer; note that ``rate`` is the probability of KEEPING an element.

  In ``mode='train'``, ``apply_fun`` keeps each element with probability
  ``rate`` (drawn by `random.bernoulli` from the key passed as ``rng=``),
  scales kept elements by ``1 / rate`` and zeroes the rest; it raises
  ``ValueError`` when called without a key. In any other mode it returns the
  input.

  Mirrors `jax.example_libraries.stax.Dropout`.
  """
  def init_fun(rng, input_shape):
    return input_shape, ()
  def apply_fun(params, inputs, **kwargs):
    rng = kwargs.get('rng', None)
    if rng is None:
      raise ValueError(
          "Dropout layer requires apply_fun to be called with a PRNG key "
          "argument. That is, instead of `apply_fun(params, inputs)`, call "
          "it like `apply_fun(params, inputs, rng)` where `rng` is a "
          "PRNG key (e.g. from `jax.random.key`).")
    if mode != 'train':
      return inputs
    keep = random.bernoulli(rng, rate, inputs.shape)
    return jnp.where(keep, inputs / rate, 0)
  return init_fun, apply_fun


### Combinators.

def serial(*layers):
  """Composes layers in sequence.

  ``init_fun`` threads the shape through the layers, giving each a fresh key
  split from ``rng``, and returns the list of their params. ``apply_fun``
  splits an ``rng=`` key into one per layer.

  Mirrors `jax.example_libraries.stax.serial`.
  """
  nlayers = len(layers)
  init_funs, apply_funs = zip(*layers)
  def init_fun(rng, input_shape):
    params = []
    for init in init_funs:
      rng, layer_rng = random.split(rng)
      input_shape, param = init(layer_rng, input_shape)
      params.append(param)
    return input_shape, params
  def apply_fun(params, inputs, **kwargs):
    rng = kwargs.pop('rng', None)
    rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
    for apply, param, layer_rng in zip(apply_funs, params, rngs):
      inputs = apply(param, inputs, rng=layer_rng, **kwargs)
    return inputs
  return init_fun, apply_fun


def parallel(*layers):
  """Applies layers side by side, layer ``k`` to the ``k``-th of a sequence of inputs.

  Often used between `FanOut` and `FanInSum` / `FanInConcat`. ``init_fun``
  takes a sequence of input shapes and returns a ``zip`` of (output shapes,
  params); ``apply_fun`` returns a list of outputs.

  Mirrors `jax.example_libraries.stax.parallel`.
  """
  nlayers = len(layers)
  init_funs, apply_funs = zip(*layers)
  def init_fun(rng, input_shape):
    rngs = random.split(rng, nlayers)
    return zip(*[init(layer_rng, shape) for init, layer_rng, shape
                 in zip(init_funs, rngs, input_shape)])
  def apply_fun(params, inputs, **kwargs):
    rng = kwargs.pop('rng', None)
    rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
    return [apply(p, x, rng=r, **kwargs)
            for apply, p, x, r in zip(apply_funs, params, inputs, rngs)]
  return init_fun, apply_fun


def shape_dependent(make_layer):
  """Builds the layer ``make_layer(input_shape)`` once the input shape is known.

  Mirrors `jax.example_libraries.stax.shape_dependent`.
  """
  def init_fun(rng, input_shape):
    return make_layer(input_shape)[0](rng, input_shape)
  def apply_fun(params, inputs, **kwargs):
    return make_layer(inputs.shape)[1](params, inputs, **kwargs)
  return init_fun, apply_fun
