"""xjax.nn activations against NumPy/SciPy references, and their gradients."""
import numpy as np
import pytest
import scipy.special

import xjax
import xjax.numpy as jnp
from xjax import nn
from xjax.test_util import check_grads

X = np.array([-3.0, -1.5, -0.2, 0.0, 0.4, 2.0, 5.0], np.float32)


def _close(a, b, tol=1e-5):
  np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


REFERENCES = {
    "sigmoid": lambda x: scipy.special.expit(x),
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.minimum(np.maximum(x, 0), 6),
    "softplus": lambda x: np.logaddexp(x, 0),
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "silu": lambda x: x * scipy.special.expit(x),
    "log_sigmoid": lambda x: -np.logaddexp(-x, 0),
    "elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "celu": lambda x: np.maximum(x, 0) + np.minimum(np.expm1(x), 0),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_activation_matches_reference(name):
  _close(getattr(nn, name)(X), REFERENCES[name](X.astype(np.float64)), tol=2e-5)


def test_gelu_exact():
  _close(nn.gelu(X, approximate=False), X * scipy.stats.norm.cdf(X) if hasattr(scipy, "stats")
         else X * 0.5 * scipy.special.erfc(-X / np.sqrt(2)), tol=2e-5)


def test_softmax_log_softmax_logsumexp():
  x = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 100.0]], np.float32)
  _close(nn.softmax(x), scipy.special.softmax(x, axis=-1))
  _close(nn.log_softmax(x), scipy.special.log_softmax(x, axis=-1), tol=1e-4)
  _close(nn.logsumexp(x, axis=1), scipy.special.logsumexp(x, axis=1), tol=1e-4)
  _close(nn.logsumexp(x), scipy.special.logsumexp(x), tol=1e-4)
  _close(nn.softmax(x, axis=0), scipy.special.softmax(x, axis=0))


def test_one_hot_and_standardize():
  _close(nn.one_hot(jnp.array([0, 2, 5]), 3), [[1, 0, 0], [0, 0, 1], [0, 0, 0]])
  assert nn.one_hot(jnp.array([1]), 4, dtype=jnp.int32).dtype == np.int32
  x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
  _close(nn.standardize(x), (x - x.mean()) / np.sqrt(x.var() + 1e-5), tol=1e-5)


def test_standardize_algorithms_and_masks():
  # JAX's values: "fast" clips a cancelled negative variance at 0; "stable" is two-pass.
  x = jnp.array([-11.0, -11.0, -11.0]) + 3e-6
  assert not np.isnan(np.asarray(nn.standardize(x))).any()
  big = jnp.array([1e6, 1e6 + 1, 1e6 + 2], jnp.float32)
  _close(nn.standardize(big), [-316.22775, 0.0, 316.22775], tol=1e-3)
  _close(nn.standardize(big, algorithm="stable"), [-1.2247356, 0.0, 1.2247356])
  with pytest.raises(ValueError, match="Unknown algorithm 'exact'. Expected 'fast' or "
                     "'stable'."):
    nn.standardize(big, algorithm="exact")
  with pytest.raises(TypeError, match="standardize requires ndarray, scalar, or None "
                     "arguments, got <class 'list'> at position 0."):
    nn.standardize(big, mean=[1.0, 2.0, 3.0])


def test_one_hot_of_floats_is_deprecated():
  with pytest.warns(DeprecationWarning, match="jax.nn.one_hot input should be integer-typed; "
                    "got dtype=float32"):
    out = nn.one_hot(jnp.array([1.0]), 3)
  _close(out, [[0, 1, 0]])
  with xjax._src.config.enable_x64(True):
    assert nn.one_hot(jnp.array([1]), 3).dtype == np.float64


def test_softmax_custom_jvp_flag():
  # jax.softmax_custom_jvp(True): a custom_jvp rule in terms of the output, so reverse mode
  # saves only the output (JAX's residuals: 3 of total size 6 without it, 1 of size 4 with).
  from xjax._src.checkpoint import saved_residuals
  x = jnp.array([5.5, 1.3, -4.2, 0.9])
  w = jnp.array([True, False, True, True])
  with xjax.softmax_custom_jvp(False):
    res = saved_residuals(nn.softmax, x)
    plain = [xjax.grad(lambda x: (nn.softmax(x, where=m) * jnp.arange(4.0)).sum())(x)
             for m in (None, w)]
  assert sum(a.size for a, _ in res) == 6 and len(res) == 3
  with xjax.softmax_custom_jvp(True):
    res = saved_residuals(nn.softmax, x)
    assert "custom_jvp_call" in str(xjax.make_jaxpr(nn.softmax)(x))
    custom = [xjax.grad(lambda x: (nn.softmax(x, where=m) * jnp.arange(4.0)).sum())(x)
              for m in (None, w)]
    _close(nn.softmax(x), scipy.special.softmax(np.asarray(x)))
  assert [a.size for a, _ in res] == [4]
  for a, b in zip(plain, custom):
    _close(a, b)


def test_relu_gradient_at_zero_is_zero():
  assert float(xjax.grad(nn.relu)(0.0)) == 0.0
  assert float(xjax.grad(nn.relu)(2.0)) == 1.0


def test_sigmoid_gradient_values_from_the_seed():
  # The Sharp Bits: the derivative of sigmoid(x) at these points, to 2 decimals.
  xs = [-10.0, -2.0, 0.0, 2.0, 10.0]
  grads = [float(xjax.grad(nn.sigmoid)(x)) for x in xs]
  np.testing.assert_allclose(np.round(grads, 2), [0.0, 0.1, 0.25, 0.1, 0.0])


@pytest.mark.parametrize("name", ["sigmoid", "softplus", "silu", "gelu", "soft_sign", "squareplus"])
def test_smooth_activation_gradients(name):
  check_grads(getattr(nn, name), (np.array([-1.3, 0.2, 0.9], np.float32),), order=2,
              modes=("fwd", "rev"))


def test_softmax_gradients():
  check_grads(lambda x: nn.softmax(x)[1], (np.array([0.3, -0.2, 1.1], np.float32),), order=1,
              modes=("fwd", "rev"))
  check_grads(lambda x: nn.logsumexp(x), (np.array([0.3, -0.2, 1.1], np.float32),), order=2,
              modes=("rev",))


def test_relu_and_relu6_have_zero_gradient_at_their_kinks():
  # As JAX's custom JVPs (not the 1/2 that max/min give at ties).
  for fn, kinks in [(xjax.nn.relu, [0.0]), (xjax.nn.relu6, [0.0, 6.0])]:
    for k in kinks:
      assert float(xjax.grad(fn)(k)) == 0.0
    np.testing.assert_array_equal(xjax.vmap(xjax.grad(fn))(jnp.array([-1.0, 3.0, 7.0])),
                                  [0.0, 1.0, 0.0 if fn is xjax.nn.relu6 else 1.0])
  np.testing.assert_allclose(xjax.grad(xjax.nn.hard_silu)(jnp.inf), 1.0)  # JAX's value
