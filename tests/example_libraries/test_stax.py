"""Tests of xjax.example_libraries.stax: init shapes and params vs JAX goldens, apply vs NumPy."""
import math

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import random
from xjax.example_libraries import stax
from xjax.test_util import check_grads

# Public names of jax.example_libraries.stax 0.10.2.
JAX_NAMES = [
    'AvgPool', 'BatchNorm', 'Conv', 'Conv1DTranspose', 'ConvTranspose', 'Dense', 'Dropout',
    'Elu', 'Exp', 'FanInConcat', 'FanInSum', 'FanOut', 'Flatten', 'Gelu', 'GeneralConv',
    'GeneralConvTranspose', 'Identity', 'LeakyRelu', 'LogSoftmax', 'MaxPool', 'Relu', 'Selu',
    'Sigmoid', 'Softmax', 'Softplus', 'SumPool', 'Tanh', 'elementwise', 'elu', 'functools',
    'gelu', 'glorot', 'glorot_normal', 'jnp', 'lax', 'leaky_relu', 'log_softmax', 'logsoftmax',
    'math', 'normal', 'ones', 'parallel', 'randn', 'random', 'relu', 'selu', 'serial',
    'shape_dependent', 'sigmoid', 'softmax', 'softplus', 'standardize', 'zeros']

KEY = random.PRNGKey(0)


def test_public_names_match_jax():
  assert len(JAX_NAMES) == 53
  assert sorted(n for n in dir(stax) if not n.startswith('_')) == JAX_NAMES
  assert stax.glorot is stax.glorot_normal and stax.randn is stax.normal
  assert stax.logsoftmax is xjax.nn.log_softmax and stax.lax is xjax.lax


def _shapes(tree):
  return xjax.tree.map(lambda a: tuple(np.shape(a)), tree)


def _as_tuple(shape):
  return tuple(int(d) for d in shape)


### init_fun shapes: (input shape, output shape, param shapes), recorded with jax 0.10.2.

GOLDEN_SHAPES = {
    'Dense': ((3, 5), (3, 7), ((5, 7), (7,))),
    'Dense3d': ((4, 3, 6), (4, 3, 2), ((6, 2), (2,))),
    'BatchNorm': ((2, 3, 4, 5), (2, 3, 4, 5), ((5,), (5,))),
    'BatchNorm_axis1': ((2, 3, 4), (2, 3, 4), ((2, 4), (2, 4))),
    'BatchNorm_nocenter': ((4, 3), (4, 3), ((), (3,))),
    'Flatten': ((2, 3, 4, 5), (2, 60), ()),
    'FanOut': ((2, 4), [(2, 4), (2, 4), (2, 4)], ()),
    'serial': ((5, 3), (5, 2), [((3, 4), (4,)), (), ((4, 2), (2,)), ()]),
    'resnet': ((2, 3), (2, 3), [(), (((3, 3), (3,)), ()), ()]),
    'concat': ((2, 4), (2, 8), [(), (((4, 3), (3,)), ((4, 5), (5,))), ()]),
    'concat0': ((2, 4), (6, 4), [(), ()]),
}

GOLDEN_CONV_POOL_SHAPES = {
    'Conv': ((2, 8, 9, 3), (2, 6, 7, 4), ((3, 3, 3, 4), (1, 1, 1, 4))),
    'Conv_same_strided': ((2, 8, 9, 3), (2, 4, 5, 4), ((3, 2, 3, 4), (1, 1, 1, 4))),
    'GeneralConv': ((2, 3, 7, 8), (2, 7, 9, 6), ((6, 3, 2, 3), (1, 1, 1, 6))),
    'ConvTranspose': ((2, 5, 6, 3), (2, 11, 13, 4), ((3, 3, 3, 4), (1, 1, 1, 4))),
    'ConvTranspose_same': ((2, 5, 6, 3), (2, 10, 12, 4), ((3, 3, 3, 4), (1, 1, 1, 4))),
    'Conv1DTranspose': ((2, 7, 3), (2, 22, 5), ((4, 3, 5), (1, 1, 5))),
    'MaxPool': ((2, 6, 7, 3), (2, 5, 6, 3), ()),
    'MaxPool_strided_same': ((2, 6, 7, 3), (2, 3, 4, 3), ()),
    'SumPool_spec': ((2, 3, 6, 7), (2, 3, 5, 5), ()),
    'AvgPool_same': ((1, 5, 6, 2), (1, 3, 6, 2), ()),
}


def _layer(name):
  return {
      'Dense': lambda: stax.Dense(7),
      'Dense3d': lambda: stax.Dense(2),
      'BatchNorm': lambda: stax.BatchNorm(),
      'BatchNorm_axis1': lambda: stax.BatchNorm(axis=1),
      'BatchNorm_nocenter': lambda: stax.BatchNorm(axis=(0,), center=False),
      'Flatten': lambda: stax.Flatten,
      'FanOut': lambda: stax.FanOut(3),
      'serial': lambda: stax.serial(stax.Dense(4), stax.Relu, stax.Dense(2), stax.LogSoftmax),
      'resnet': lambda: stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Identity),
                                    stax.FanInSum),
      'concat': lambda: stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Dense(5)),
                                    stax.FanInConcat()),
      'concat0': lambda: stax.serial(stax.FanOut(3), stax.FanInConcat(0)),
      'Conv': lambda: stax.Conv(4, (3, 3)),
      'Conv_same_strided': lambda: stax.Conv(4, (3, 2), strides=(2, 2), padding='SAME'),
      'GeneralConv': lambda: stax.GeneralConv(('NCHW', 'OIHW', 'NHWC'), 6, (2, 3),
                                              padding=((1, 0), (2, 1))),
      'ConvTranspose': lambda: stax.ConvTranspose(4, (3, 3), strides=(2, 2)),
      'ConvTranspose_same': lambda: stax.ConvTranspose(4, (3, 3), strides=(2, 2), padding='SAME'),
      'Conv1DTranspose': lambda: stax.Conv1DTranspose(5, (4,), strides=(3,)),
      'MaxPool': lambda: stax.MaxPool((2, 2)),
      'MaxPool_strided_same': lambda: stax.MaxPool((3, 3), strides=(2, 2), padding='SAME'),
      'SumPool_spec': lambda: stax.SumPool((2, 3), spec='NCHW'),
      'AvgPool_same': lambda: stax.AvgPool((3, 3), strides=(2, 1), padding='SAME'),
  }[name]()


def _check_init_and_apply_shapes(name, golden):
  in_shape, out_shape, param_shapes = golden
  init, apply = _layer(name)
  got_out, params = init(KEY, in_shape)
  if isinstance(out_shape, list):
    assert [_as_tuple(s) for s in got_out] == out_shape
  else:
    assert _as_tuple(got_out) == out_shape
  assert _shapes(params) == param_shapes
  # apply_fun produces what init_fun promised.
  x = jnp.ones(in_shape)
  y = apply(params, x)
  if isinstance(out_shape, list):
    assert [a.shape for a in y] == out_shape
  else:
    assert y.shape == out_shape


@pytest.mark.parametrize('name', sorted(GOLDEN_SHAPES))
def test_init_shapes_match_jax(name):
  _check_init_and_apply_shapes(name, GOLDEN_SHAPES[name])


@pytest.mark.parametrize('name', sorted(GOLDEN_CONV_POOL_SHAPES))
def test_conv_and_pool_init_shapes_match_jax(name):
  _check_init_and_apply_shapes(name, GOLDEN_CONV_POOL_SHAPES[name])


### Initializers and params: bit-exact with JAX (jax_threefry_partitionable=False).

GOLDEN_DENSE_W = [
    [-0.35336142778396606, -0.8675468564033508, 0.5147531628608704, 0.12589113414287567],
    [-0.6633047461509705, -0.7674901485443115, 0.0030345905106514692, 0.31720170378685],
    [0.11481568962335587, -0.6879004240036011, 0.8587415218353271, -0.5204911828041077],
    [-0.30894744396209717, -0.006197377573698759, 0.6831773519515991, 0.15044672787189484],
    [0.007999357767403126, -0.28398048877716064, -0.3402728736400604, -0.2188914567232132]]
GOLDEN_DENSE_B = [0.011378783732652664, -0.0014331432757899165, -0.005915363319218159,
                  0.007946622557938099]


def test_dense_params_match_jax():
  out_shape, (W, b) = stax.Dense(4)[0](KEY, (2, 5))
  assert out_shape == (2, 4) and W.dtype == np.float32 and b.dtype == np.float32
  np.testing.assert_array_equal(np.asarray(W), np.float32(GOLDEN_DENSE_W))
  np.testing.assert_array_equal(np.asarray(b), np.float32(GOLDEN_DENSE_B))


def test_initializers_match_jax():
  np.testing.assert_array_equal(
      np.asarray(stax.glorot_normal()(KEY, (3, 4))),
      np.float32([[0.6719295382499695, -0.623824954032898, 0.25656658411026, 0.34516721963882446],
                  [-0.22677673399448395, 0.3986361622810364, 0.266047865152359, -1.055719256401062],
                  [-0.12426064163446426, -0.564285159111023, -0.39088550209999084, 0.1585303246974945]]))
  np.testing.assert_array_equal(
      np.asarray(stax.glorot_normal(0, 1)(KEY, (2, 3, 2))),
      np.float32([[[0.5621765851974487, -0.5219294428825378], [0.21465900540351868, 0.2887876033782959],
                   [-0.1897350251674652, 0.3335229158401489]],
                  [[0.22259162366390228, -0.8832780718803406], [-0.10396391153335571, -0.47211483120918274],
                   [-0.3270382881164551, 0.13263598084449768]]]))
  got = stax.glorot_normal()(KEY, (2, 2), jnp.complex64)
  assert got.dtype == np.complex64
  np.testing.assert_allclose(
      np.asarray(got),
      np.complex64([[0.45794767141342163 - 0.47307440638542175j, -1.0498608350753784 + 0.39278706908226013j],
                    [-0.07385256141424179 + 0.42984163761138916j, 0.14053162932395935 - 0.6003752946853638j]]),
      rtol=1e-6)
  np.testing.assert_array_equal(
      np.asarray(stax.normal(2.)(KEY, (3,))),
      np.float32([3.6321725845336914, -0.965246319770813, 0.6797781586647034]))
  assert stax.normal()(KEY, (2,)).dtype == np.float32
  np.testing.assert_array_equal(np.asarray(stax.zeros(KEY, (2, 3))), np.zeros((2, 3)))
  np.testing.assert_array_equal(np.asarray(stax.ones(None, (2,), jnp.int32)), [1, 1])
  assert stax.ones(None, (2,)).dtype == np.float32


def test_initializer_statistics(rng):
  # Glorot normal: variance 2 / (fan_in + fan_out), truncated at 2 sigma of the
  # untruncated draw; fans include the receptive field (here 3 * 3).
  W = np.asarray(stax.glorot_normal(2, 3)(KEY, (3, 3, 40, 60)))
  fan_in, fan_out = 9 * 40, 9 * 60
  std = math.sqrt(2 / (fan_in + fan_out))
  assert abs(W.std() / std - 1) < 0.03
  assert np.abs(W).max() <= 2 * std / 0.87962566103423978 * (1 + 1e-6)


def test_initializer_defaults_follow_x64(x64):
  assert stax.normal()(KEY, (2,)).dtype == np.float64
  assert stax.zeros(None, (2,)).dtype == np.float64
  assert stax.glorot_normal()(KEY, (2, 2)).dtype == np.float64
  assert stax.glorot_normal(dtype=jnp.float32)(KEY, (2, 2)).dtype == np.float32


def test_glorot_normal_rank_error():
  with pytest.raises(ValueError) as e:
    stax.glorot_normal()(KEY, (3,))
  assert str(e.value) == (
      "Can't compute input and output sizes of a 1-dimensional weights tensor with "
      "default in_axis. Must be at least 2D or specify in_axis explicitly.")


GOLDEN_CONV_W = [[[[0.3240644633769989, 0.567857563495636]], [[-0.7394452691078186, -0.583427906036377]]],
                 [[[0.03432762250304222, -0.06227941811084747]], [[-0.3966037631034851, -0.05376385897397995]]]]
GOLDEN_CONV_B = [[[[1.9307722709527297e-07, -5.267829124022683e-07]]]]


def test_conv_params_match_jax():
  _, (W, b) = stax.Conv(2, (2, 2))[0](KEY, (1, 3, 3, 1))
  np.testing.assert_array_equal(np.asarray(W), np.float32(GOLDEN_CONV_W))
  np.testing.assert_array_equal(np.asarray(b), np.float32(GOLDEN_CONV_B))


### apply_fun values against NumPy.

def test_dense_apply(rng):
  init, apply = stax.Dense(5)
  _, (W, b) = init(KEY, (4, 3))
  x = rng.normal(size=(4, 3)).astype(np.float32)
  np.testing.assert_allclose(np.asarray(apply((W, b), x)),
                             x @ np.asarray(W) + np.asarray(b), rtol=1e-5, atol=1e-6)
  x3 = rng.normal(size=(2, 4, 3)).astype(np.float32)
  np.testing.assert_allclose(np.asarray(apply((W, b), x3)),
                             x3 @ np.asarray(W) + np.asarray(b), rtol=1e-5, atol=1e-6)
  # Custom initializers get (key, shape).
  init, _ = stax.Dense(2, W_init=stax.ones, b_init=stax.zeros)
  _, (W, b) = init(KEY, (1, 3))
  np.testing.assert_array_equal(np.asarray(W), np.ones((3, 2)))
  np.testing.assert_array_equal(np.asarray(b), np.zeros(2))


def _np_batchnorm(x, axis, beta, gamma, eps=1e-5):
  mean = x.mean(axis=axis, keepdims=True)
  var = x.var(axis=axis, keepdims=True)
  z = (x - mean) / np.sqrt(var + eps)
  keep = tuple(None if i in axis else slice(None) for i in range(x.ndim))
  if gamma is not None:
    z = gamma[keep] * z
  if beta is not None:
    z = z + beta[keep]
  return z


@pytest.mark.parametrize('kwargs, in_shape', [
    ({}, (3, 2, 4, 5)),
    ({'axis': 1}, (3, 4, 2)),
    ({'axis': (0,), 'center': False}, (6, 3)),
    ({'axis': (0, 2), 'scale': False, 'epsilon': 0.5}, (4, 3, 5)),
    ({'axis': (0,), 'center': False, 'scale': False}, (5, 2)),
])
def test_batchnorm_apply(kwargs, in_shape, rng):
  init, apply = stax.BatchNorm(**kwargs, beta_init=stax.normal(1.0), gamma_init=stax.normal(1.0))
  out_shape, (beta, gamma) = init(KEY, in_shape)
  assert out_shape == in_shape
  axis = kwargs.get('axis', (0, 1, 2))
  axis = (axis,) if isinstance(axis, int) else axis
  param_shape = tuple(d for i, d in enumerate(in_shape) if i not in axis)
  assert beta == () if kwargs.get('center', True) is False else beta.shape == param_shape
  assert gamma == () if kwargs.get('scale', True) is False else gamma.shape == param_shape
  x = rng.normal(size=in_shape).astype(np.float32) * 3 + 1
  want = _np_batchnorm(x.astype(np.float64), axis,
                       None if beta == () else np.asarray(beta, np.float64),
                       None if gamma == () else np.asarray(gamma, np.float64),
                       kwargs.get('epsilon', 1e-5))
  np.testing.assert_allclose(np.asarray(apply((beta, gamma), x)), want, rtol=1e-4, atol=1e-5)


def _gelu_tanh(x):
  return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def _log_softmax(x):
  m = x.max(-1, keepdims=True)
  return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


ACTIVATIONS = {
    'Tanh': np.tanh,
    'Relu': lambda x: np.maximum(x, 0),
    'Exp': np.exp,
    'LogSoftmax': _log_softmax,
    'Softmax': lambda x: np.exp(_log_softmax(x)),
    'Softplus': lambda x: np.logaddexp(x, 0),
    'Sigmoid': lambda x: 1 / (1 + np.exp(-x)),
    'Elu': lambda x: np.where(x > 0, x, np.expm1(x)),
    'LeakyRelu': lambda x: np.where(x >= 0, x, 0.01 * x),
    'Selu': lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
    'Gelu': _gelu_tanh,
}


@pytest.mark.parametrize('name', sorted(ACTIVATIONS))
def test_activation_layers(name, rng):
  init, apply = getattr(stax, name)
  x = rng.normal(size=(3, 4)).astype(np.float32) * 2
  out_shape, params = init(KEY, (3, 4))
  assert out_shape == (3, 4) and params == ()
  np.testing.assert_allclose(np.asarray(apply((), x)), ACTIVATIONS[name](x.astype(np.float64)),
                             rtol=2e-5, atol=2e-6)


def test_elementwise_passes_keyword_arguments():
  _, apply = stax.elementwise(xjax.nn.leaky_relu, negative_slope=0.5)
  np.testing.assert_allclose(np.asarray(apply((), jnp.array([-2., 3.]))), [-1., 3.])
  _, apply = stax.elementwise(xjax.nn.softmax, axis=0)
  out = np.asarray(apply((), jnp.ones((2, 3))))
  np.testing.assert_allclose(out, np.full((2, 3), 0.5), rtol=1e-6)


def test_flatten_and_identity(rng):
  x = rng.normal(size=(2, 3, 4)).astype(np.float32)
  np.testing.assert_array_equal(np.asarray(stax.Flatten[1]((), x)), x.reshape(2, 12))
  assert stax.Identity[0](KEY, (2, 3)) == ((2, 3), ())
  np.testing.assert_array_equal(np.asarray(stax.Identity[1]((), x)), x)


### Dropout: masks bit-exact with JAX.

def test_dropout_mask_matches_jax():
  init, apply = stax.Dropout(0.7)
  assert init(KEY, (3, 4)) == ((3, 4), ())
  out = np.asarray(apply((), jnp.ones((3, 4)), rng=random.PRNGKey(3)))
  mask = np.array([[False, True, False, True], [False, False, False, True],
                   [True, True, True, True]])
  np.testing.assert_array_equal(out != 0, mask)
  # Kept elements are scaled by 1 / rate.
  np.testing.assert_allclose(out[mask], np.float32(1 / np.float32(0.7)), rtol=1e-7)
  jitted = xjax.jit(lambda x, k: apply((), x, rng=k))(jnp.ones((3, 4)), random.PRNGKey(3))
  np.testing.assert_array_equal(np.asarray(jitted), out)


def test_dropout_eval_mode_and_missing_key(rng):
  x = rng.normal(size=(2, 3)).astype(np.float32)
  _, apply = stax.Dropout(0.5, mode='test')
  np.testing.assert_array_equal(np.asarray(apply((), x, rng=KEY)), x)
  _, apply = stax.Dropout(0.5)
  with pytest.raises(ValueError) as e:
    apply((), x)
  assert str(e.value) == (
      "Dropout layer requires apply_fun to be called with a PRNG key argument. That "
      "is, instead of `apply_fun(params, inputs)`, call it like "
      "`apply_fun(params, inputs, rng)` where `rng` is a PRNG key (e.g. from "
      "`jax.random.key`).")
  # Even in eval mode the key is required, as in JAX.
  with pytest.raises(ValueError):
    stax.Dropout(0.5, mode='test')[1]((), x)


def test_serial_and_parallel_split_keys_like_jax():
  init, apply = stax.serial(stax.Dense(3), stax.Dropout(0.5))
  _, params = init(KEY, (2, 4))
  out = apply(params, jnp.arange(8.).reshape(2, 4) / 8, rng=random.PRNGKey(1))
  np.testing.assert_allclose(np.asarray(out), [[0.0, 0.5315425395965576, 0.0],
                                               [0.0, 0.0, 0.6140518188476562]], rtol=1e-6)
  _, apply = stax.parallel(stax.Dropout(0.5), stax.Dropout(0.5))
  outs = apply(((), ()), [jnp.ones((2, 3)), jnp.ones((2, 3))], rng=random.PRNGKey(2))
  assert isinstance(outs, list)
  np.testing.assert_array_equal(np.asarray(outs[0]) != 0, [[False, True, False], [True, False, False]])
  np.testing.assert_array_equal(np.asarray(outs[1]) != 0, [[True, True, True], [False, True, True]])


### Combinators against NumPy.

def test_serial_mlp_matches_numpy(rng):
  init, apply = stax.serial(stax.Dense(4), stax.Tanh, stax.Dense(3), stax.LogSoftmax)
  out_shape, params = init(KEY, (-1, 5))
  assert out_shape == (-1, 3)
  (W1, b1), (), (W2, b2), () = params
  x = rng.normal(size=(6, 5)).astype(np.float32)
  h = np.tanh(x @ np.asarray(W1) + np.asarray(b1))
  want = _log_softmax((h @ np.asarray(W2) + np.asarray(b2)).astype(np.float64))
  np.testing.assert_allclose(np.asarray(apply(params, x)), want, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(np.asarray(xjax.jit(apply)(params, x)), want, rtol=1e-5, atol=1e-5)
  # Each layer gets its own key: the two Dense layers' weights differ.
  init2, _ = stax.serial(stax.Dense(4), stax.Dense(4))
  _, ((Wa, _), (Wb, _)) = init2(KEY, (1, 4))
  assert not np.array_equal(np.asarray(Wa), np.asarray(Wb))


def test_residual_and_concat_blocks_match_numpy(rng):
  x = rng.normal(size=(2, 3)).astype(np.float32)
  init, apply = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Identity),
                            stax.FanInSum)
  _, params = init(KEY, (2, 3))
  (W, b), () = params[1]
  np.testing.assert_allclose(np.asarray(apply(params, x)),
                             x @ np.asarray(W) + np.asarray(b) + x, rtol=1e-5, atol=1e-6)
  init, apply = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Relu),
                            stax.FanInConcat())
  _, params = init(KEY, (2, 3))
  (W, b), () = params[1]
  want = np.concatenate([x @ np.asarray(W) + np.asarray(b), np.maximum(x, 0)], axis=-1)
  np.testing.assert_allclose(np.asarray(apply(params, x)), want, rtol=1e-5, atol=1e-6)
  # The fan layers on their own.
  assert stax.FanOut(2)[1]((), x)[1] is x
  assert stax.FanInSum[0](KEY, [(2, 3), (2, 3)]) == ((2, 3), ())
  np.testing.assert_allclose(np.asarray(stax.FanInSum[1]((), [x, 2 * x, x])), 4 * x, rtol=1e-6)
  init, apply = stax.FanInConcat(axis=0)
  assert init(KEY, [(2, 3), (4, 3)]) == ((6, 3), ())
  np.testing.assert_array_equal(np.asarray(apply((), [x, x])), np.concatenate([x, x]))
  assert stax.FanInConcat(axis=-2)[0](KEY, [(5, 2, 3), (5, 1, 3)]) == ((5, 3, 3), ())


def test_parallel_init_returns_shapes_and_params():
  shapes, params = stax.parallel(stax.Dense(2), stax.Flatten)[0](KEY, [(3, 4), (3, 2, 2)])
  assert tuple(shapes) == ((3, 2), (3, 4))
  assert _shapes(params) == (((4, 2), (2,)), ())


def test_shape_dependent(rng):
  def make_layer(input_shape):
    return stax.Dense(input_shape[-1] * 2)
  init, apply = stax.shape_dependent(make_layer)
  out_shape, (W, b) = init(KEY, (2, 3))
  assert out_shape == (2, 6) and W.shape == (3, 6)
  x = rng.normal(size=(2, 3)).astype(np.float32)
  np.testing.assert_allclose(np.asarray(apply((W, b), x)), x @ np.asarray(W) + np.asarray(b),
                             rtol=1e-5, atol=1e-6)


def test_grad_through_serial_network(x64, rng):
  init, apply = stax.serial(stax.Dense(4), stax.Tanh, stax.Dense(3), stax.LogSoftmax)
  _, params = init(KEY, (2, 5))
  x = rng.normal(size=(2, 5))

  def loss(params, x):
    return -jnp.mean(apply(params, x)[:, 0])
  check_grads(loss, (params, x), order=2, modes=('fwd', 'rev'), atol=1e-4, rtol=1e-4)
  grads = xjax.grad(loss)(params, x)
  assert _shapes(grads) == _shapes(params)


def test_batchnorm_gradients(x64, rng):
  init, apply = stax.BatchNorm(axis=(0,), beta_init=stax.normal(1.0), gamma_init=stax.normal(1.0))
  _, params = init(KEY, (5, 3))
  x = rng.normal(size=(5, 3))
  check_grads(lambda p, x: jnp.sum(apply(p, x) ** 3), (params, x), order=1,
              modes=('fwd', 'rev'), atol=1e-4, rtol=1e-4)


### Convolution and pooling layers against NumPy.

def _np_conv_nhwc(x, w, strides, pads, lhs_dilation=None):
  """Cross-correlation of NHWC `x` with HWIO `w` (no kernel flip)."""
  nsp = x.ndim - 2
  lhs_dilation = lhs_dilation or (1,) * nsp
  dilated_shape = [x.shape[0]] + [(n - 1) * d + 1 for n, d in zip(x.shape[1:-1], lhs_dilation)] + [x.shape[-1]]
  xd = np.zeros(dilated_shape, x.dtype)
  xd[(slice(None),) + tuple(slice(None, None, d) for d in lhs_dilation)] = x
  xp = np.pad(xd, [(0, 0)] + list(pads) + [(0, 0)])
  k = w.shape[:nsp]
  out_sp = [(xp.shape[1 + i] - k[i]) // strides[i] + 1 for i in range(nsp)]
  out = np.zeros([x.shape[0]] + out_sp + [w.shape[-1]])
  for idx in np.ndindex(*out_sp):
    window = xp[(slice(None),) + tuple(slice(i * s, i * s + kk) for i, s, kk in zip(idx, strides, k))]
    out[(slice(None),) + idx] = np.tensordot(window, w, axes=(list(range(1, nsp + 2)), list(range(nsp + 1))))
  return out


def _same_pads(in_sizes, window, strides):
  pads = []
  for n, k, s in zip(in_sizes, window, strides):
    total = max((-(-n // s) - 1) * s + k - n, 0)
    pads.append((total // 2, total - total // 2))
  return pads


def test_conv_apply_matches_numpy(rng):
  x = rng.normal(size=(2, 6, 7, 3)).astype(np.float32)
  for strides, padding in [(None, 'VALID'), ((2, 1), 'SAME'), ((1, 2), ((1, 2), (0, 1)))]:
    init, apply = stax.Conv(4, (3, 2), strides=strides, padding=padding, b_init=stax.normal(1.0))
    out_shape, (W, b) = init(KEY, x.shape)
    s = strides or (1, 1)
    pads = ([(0, 0), (0, 0)] if padding == 'VALID' else
            _same_pads(x.shape[1:3], (3, 2), s) if padding == 'SAME' else padding)
    want = _np_conv_nhwc(x.astype(np.float64), np.asarray(W, np.float64), s, pads) + np.asarray(b)
    got = apply((W, b), x)
    assert _as_tuple(out_shape) == got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


def test_general_conv_layouts_match_conv(rng):
  # The same convolution in NCHW/OIHW/NCHW and NHWC/HWIO/NHWC layouts.
  x = rng.normal(size=(2, 5, 6, 3)).astype(np.float32)
  _, (W, b) = stax.Conv(4, (2, 3), b_init=stax.normal(1.0))[0](KEY, x.shape)
  _, apply_nchw = stax.GeneralConv(('NCHW', 'OIHW', 'NCHW'), 4, (2, 3))
  got = apply_nchw((jnp.transpose(W, (3, 2, 0, 1)), jnp.transpose(b, (0, 3, 1, 2))),
                   jnp.transpose(x, (0, 3, 1, 2)))
  want = _np_conv_nhwc(x.astype(np.float64), np.asarray(W, np.float64), (1, 1), [(0, 0), (0, 0)]) + np.asarray(b)
  np.testing.assert_allclose(np.asarray(got), want.transpose(0, 3, 1, 2), rtol=1e-4, atol=1e-4)


def _np_conv_transpose_pads(k, s, padding):
  # lax.conv_transpose's padding of the stride-dilated input.
  if padding == 'SAME':
    pad_len = k + s - 2
    lo = k - 1 if s > k - 1 else -(-pad_len // 2)
  else:
    pad_len = k + s - 2 + max(k - s, 0)
    lo = k - 1
  return lo, pad_len - lo


@pytest.mark.parametrize('padding', ['VALID', 'SAME'])
def test_conv_transpose_apply_matches_numpy(padding, rng):
  x = rng.normal(size=(2, 3, 4, 2)).astype(np.float32)
  init, apply = stax.ConvTranspose(3, (3, 2), strides=(2, 3), padding=padding, b_init=stax.normal(1.0))
  out_shape, (W, b) = init(KEY, x.shape)
  pads = [_np_conv_transpose_pads(k, s, padding) for k, s in zip((3, 2), (2, 3))]
  want = _np_conv_nhwc(x.astype(np.float64), np.asarray(W, np.float64), (1, 1), pads,
                       lhs_dilation=(2, 3)) + np.asarray(b)
  got = apply((W, b), x)
  assert _as_tuple(out_shape) == got.shape == want.shape
  np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


def test_conv1d_transpose_apply_matches_numpy(rng):
  x = rng.normal(size=(2, 5, 3)).astype(np.float32)
  init, apply = stax.Conv1DTranspose(4, (3,), strides=(2,), b_init=stax.normal(1.0))
  out_shape, (W, b) = init(KEY, x.shape)
  want = _np_conv_nhwc(x.astype(np.float64), np.asarray(W, np.float64), (1,),
                       [_np_conv_transpose_pads(3, 2, 'VALID')], lhs_dilation=(2,)) + np.asarray(b)
  got = apply((W, b), x)
  assert _as_tuple(out_shape) == got.shape == (2, 11, 4)
  np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


def _np_pool(x, window, strides, padding, reducer, fill):
  """Pools the spatial axes 1..n-2 of a batch-first, channels-last array."""
  pads = (_same_pads(x.shape[1:-1], window, strides) if padding == 'SAME'
          else [(0, 0)] * len(window))
  xp = np.pad(x, [(0, 0)] + pads + [(0, 0)], constant_values=fill)
  out_sp = [(xp.shape[1 + i] - window[i]) // strides[i] + 1 for i in range(len(window))]
  out = np.zeros([x.shape[0]] + out_sp + [x.shape[-1]])
  for idx in np.ndindex(*out_sp):
    win = xp[(slice(None),) + tuple(slice(i * s, i * s + k) for i, s, k in zip(idx, strides, window))]
    out[(slice(None),) + idx] = reducer(win, axis=tuple(range(1, 1 + len(window))))
  return out


@pytest.mark.parametrize('window, strides, padding', [
    ((2, 2), None, 'VALID'), ((3, 2), (2, 2), 'SAME'), ((2, 3), (1, 2), 'VALID')])
def test_pooling_layers_match_numpy(window, strides, padding, rng):
  x = rng.normal(size=(2, 5, 6, 3)).astype(np.float32)
  s = strides or (1,) * len(window)
  x64_ = x.astype(np.float64)
  cases = {
      'MaxPool': _np_pool(x64_, window, s, padding, np.max, -np.inf),
      'SumPool': _np_pool(x64_, window, s, padding, np.sum, 0.0),
      'AvgPool': (_np_pool(x64_, window, s, padding, np.sum, 0.0) /
                  _np_pool(np.ones_like(x64_), window, s, padding, np.sum, 0.0)),
  }
  for name, want in cases.items():
    init, apply = getattr(stax, name)(window, strides=strides, padding=padding)
    out_shape, params = init(KEY, x.shape)
    got = apply(params, x)
    assert params == () and _as_tuple(out_shape) == got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5, err_msg=name)


def test_pooling_with_spec(rng):
  x = rng.normal(size=(2, 3, 6, 5)).astype(np.float32)   # NCHW
  x_nhwc = x.transpose(0, 2, 3, 1).astype(np.float64)
  for name, want in [
      ('MaxPool', _np_pool(x_nhwc, (2, 2), (2, 1), 'SAME', np.max, -np.inf)),
      ('AvgPool', _np_pool(x_nhwc, (2, 2), (2, 1), 'SAME', np.sum, 0.0) /
                  _np_pool(np.ones_like(x_nhwc), (2, 2), (2, 1), 'SAME', np.sum, 0.0))]:
    init, apply = getattr(stax, name)((2, 2), strides=(2, 1), padding='SAME', spec='NCHW')
    out_shape, _ = init(KEY, x.shape)
    got = apply((), x)
    assert _as_tuple(out_shape) == got.shape == (2, 3, 3, 5)
    np.testing.assert_allclose(np.asarray(got), want.transpose(0, 3, 1, 2), rtol=1e-5, atol=1e-5)


def test_small_convnet_trains_under_jit(rng):
  init, apply = stax.serial(stax.Conv(4, (3, 3), padding='SAME'), stax.Relu,
                            stax.MaxPool((2, 2), strides=(2, 2)), stax.Flatten,
                            stax.Dense(3), stax.LogSoftmax)
  out_shape, params = init(KEY, (4, 6, 6, 1))
  assert _as_tuple(out_shape) == (4, 3)
  # A -1 batch size goes through Conv but the pooling shape rule turns it into
  # 0, as in JAX (recorded with jax 0.10.2).
  assert _as_tuple(init(KEY, (-1, 6, 6, 1))[0]) == (0, 3)
  x = jnp.asarray(rng.normal(size=(4, 6, 6, 1)).astype(np.float32))
  labels = jnp.asarray(np.eye(3, dtype=np.float32)[[0, 1, 2, 0]])

  def loss(params):
    return -jnp.mean(jnp.sum(apply(params, x) * labels, axis=1))

  @xjax.jit
  def step(params):
    grads = xjax.grad(loss)(params)
    return xjax.tree.map(lambda p, g: p - 0.1 * g, params, grads)

  before = float(loss(params))
  for _ in range(5):
    params = step(params)
  assert float(loss(params)) < before
