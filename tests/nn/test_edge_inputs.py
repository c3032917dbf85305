"""xjax.nn on bad arguments and empty inputs: JAX 0.10.2's errors and values.

one_hot: a negative `num_classes` used to give an empty array (JAX: TypeError),
a float one was truncated (JAX: TypeError), and an out-of-range negative axis
wrapped around (JAX: ValueError). logsumexp: an empty reduction used to raise
NumPy's "zero-size array to reduction operation max" (JAX: -inf, sign 0, and an
empty gradient). The references are NumPy's sum of exponentials, whose log is
-inf for an empty sum.
"""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
import xjax.scipy.special
from xjax import nn
from xjax.errors import ConcretizationTypeError

LABELS = np.array([1, 2, 0], np.int32)


def _paths(f):
  """`f` of one array argument, eagerly and under each transformation that traces it."""
  return {
      "eager": f,
      "jit": xjax.jit(f),
      "make_jaxpr": lambda x: xjax.make_jaxpr(f)(x),
      "eval_shape": lambda x: xjax.eval_shape(f, x),
      "vmap": lambda x: xjax.vmap(f)(x[None]),
  }


# ----------------------------------------------------------------------------
# one_hot


@pytest.mark.parametrize("num_classes", [-1, -5])
@pytest.mark.parametrize("path", sorted(_paths(None)))
def test_one_hot_negative_num_classes_is_a_type_error(num_classes, path):
  with pytest.raises(TypeError, match="num_classes.*non-negative") as info:
    _paths(lambda x: nn.one_hot(x, num_classes))[path](LABELS)
  assert str(num_classes) in str(info.value)


@pytest.mark.parametrize("num_classes", [2.0, 2.5, None, "3", np.float32(3)], ids=repr)
@pytest.mark.parametrize("jitted", [False, True])
def test_one_hot_non_integer_num_classes_is_a_type_error(num_classes, jitted):
  f = lambda x: nn.one_hot(x, num_classes)
  with pytest.raises(TypeError, match="num_classes.*integer"):
    (xjax.jit(f) if jitted else f)(LABELS)


def test_one_hot_traced_num_classes_names_the_argument():
  with pytest.raises(ConcretizationTypeError, match="one_hot argument `num_classes`"):
    xjax.jit(nn.one_hot)(LABELS, 3)


@pytest.mark.parametrize("num_classes", [3, np.int32(3), np.array(3), jnp.array(3), True],
                         ids=repr)
def test_one_hot_integer_likes_are_accepted(num_classes):
  n = int(num_classes)
  want = (LABELS[:, None] == np.arange(n)).astype(np.float32)
  for f in (nn.one_hot, xjax.jit(nn.one_hot, static_argnums=1)):
    if f is not nn.one_hot and isinstance(num_classes, (np.ndarray, xjax.Array)):
      f = xjax.jit(lambda x, n: nn.one_hot(x, num_classes))  # unhashable: closed over instead
    got = f(LABELS, num_classes)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert got.dtype == np.float32


def test_one_hot_zero_classes_is_empty():
  got = nn.one_hot(LABELS, 0)
  assert got.shape == (3, 0) and got.dtype == np.float32
  assert xjax.jit(lambda x: nn.one_hot(x, 0))(LABELS).shape == (3, 0)


@pytest.mark.parametrize("axis", [2, -3, 5])
def test_one_hot_axis_out_of_range_is_a_value_error(axis):
  with pytest.raises(ValueError, match=f"axis {axis} is out of bounds"):
    nn.one_hot(LABELS, 3, axis=axis)


def test_one_hot_axis_0_and_minus_2():
  want = (np.arange(3)[:, None] == LABELS[None, :]).astype(np.float32)
  np.testing.assert_array_equal(np.asarray(nn.one_hot(LABELS, 3, axis=0)), want)
  np.testing.assert_array_equal(np.asarray(nn.one_hot(LABELS, 3, axis=-2)), want)


# ----------------------------------------------------------------------------
# logsumexp on empty reductions

LOGSUMEXPS = {"nn": nn.logsumexp, "scipy.special": xjax.scipy.special.logsumexp}


def _ref_lse(a, axis=None, b=None, where=None, keepdims=False):
  a = np.asarray(a, np.float64)
  terms = np.exp(a) if b is None else np.asarray(b) * np.exp(a)
  total = np.sum(terms, axis=axis, where=True if where is None else where, keepdims=keepdims)
  with np.errstate(divide="ignore", invalid="ignore"):
    return np.log(np.abs(total)), np.sign(total)


def _check(got, want, dtype=np.float32):
  got = np.asarray(got)
  assert got.dtype == dtype
  assert got.shape == np.shape(want)
  np.testing.assert_array_equal(got, want)  # -inf and 0 exactly


CASES = [  # (shape, kwargs)
    ((0,), {}),
    ((0,), {"keepdims": True}),
    ((2, 0), {"axis": 1}),
    ((2, 0), {"axis": -1, "keepdims": True}),
    ((2, 0), {"axis": None}),
    ((2, 0), {"axis": 0}),  # a non-empty result of size 0
    ((0, 3), {"axis": (0, 1)}),
    ((0, 3), {"axis": 0}),
]


@pytest.mark.parametrize("name", sorted(LOGSUMEXPS))
@pytest.mark.parametrize("shape,kwargs", CASES, ids=str)
@pytest.mark.parametrize("jitted", [False, True])
def test_logsumexp_of_empty_is_minus_inf(name, shape, kwargs, jitted):
  f = lambda x: LOGSUMEXPS[name](x, **kwargs)
  x = np.zeros(shape, np.float32)
  want, _ = _ref_lse(x, **kwargs)
  _check((xjax.jit(f) if jitted else f)(x), want)


@pytest.mark.parametrize("name", sorted(LOGSUMEXPS))
@pytest.mark.parametrize("shape,kwargs", CASES, ids=str)
def test_logsumexp_of_empty_with_b_and_sign(name, shape, kwargs):
  x = np.zeros(shape, np.float32)
  want, want_sign = _ref_lse(x, b=np.ones(shape), **kwargs)
  for f in (LOGSUMEXPS[name], xjax.jit(LOGSUMEXPS[name], static_argnames=tuple(kwargs) + (
      "return_sign",))):
    _check(f(x, b=jnp.ones(shape), **kwargs), want)
    out, sign = f(x, return_sign=True, **kwargs)
    _check(out, want)
    _check(sign, want_sign)  # 0 for an empty sum
    out, sign = f(x, b=jnp.ones(shape), return_sign=True, **kwargs)
    _check(out, want)
    _check(sign, want_sign)


@pytest.mark.parametrize("name", sorted(LOGSUMEXPS))
@pytest.mark.parametrize("shape,axis", [((0,), None), ((2, 0), 1), ((2, 0), None), ((0, 3), 0)],
                         ids=str)
def test_grad_of_logsumexp_of_empty_is_empty(name, shape, axis):
  f = lambda x: LOGSUMEXPS[name](x, axis=axis).sum()
  x = np.zeros(shape, np.float32)
  for g in (xjax.grad(f), xjax.jit(xjax.grad(f))):
    got = g(x)
    assert got.shape == shape and got.dtype == np.float32


@pytest.mark.parametrize("name", sorted(LOGSUMEXPS))
def test_logsumexp_where_all_false(name):
  lse = LOGSUMEXPS[name]
  x = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]], np.float32)
  where = np.array([[True, False, False], [False, False, False]])
  want, want_sign = _ref_lse(x, axis=1, where=where)
  _check(lse(x, axis=1, where=where), want.astype(np.float32))
  _check(xjax.jit(lambda x: lse(x, axis=1, where=where))(x), want.astype(np.float32))
  out, sign = lse(x, axis=1, where=where, return_sign=True, keepdims=True)
  _check(out, want[:, None].astype(np.float32))
  _check(sign, want_sign[:, None])
  none = np.zeros(3, bool)
  _check(lse(x[0], where=none), np.float32(-np.inf))
  _check(lse(x[0], b=np.ones(3, np.float32), where=none), np.float32(-np.inf))
  _check(xjax.grad(lambda x: lse(x, where=none))(x[0]), np.zeros(3, np.float32))


@pytest.mark.parametrize("name", sorted(LOGSUMEXPS))
def test_logsumexp_empty_dtypes_and_vmap(name):
  lse = LOGSUMEXPS[name]
  _check(lse(np.zeros(0, np.int32)), np.float32(-np.inf))  # integers promote to float
  _check(lse(np.zeros(0, np.float16)), np.float16(-np.inf), np.float16)
  _check(xjax.vmap(lse)(np.zeros((2, 0), np.float32)), np.full(2, -np.inf, np.float32))
  assert xjax.vmap(lse)(np.zeros((0, 3), np.float32)).shape == (0,)


@pytest.mark.parametrize("name", sorted(LOGSUMEXPS))
def test_logsumexp_rejects_lists(name):
  with pytest.raises(TypeError, match="logsumexp requires ndarray or scalar arguments"):
    LOGSUMEXPS[name]([1.0, 2.0])
  with pytest.raises(TypeError, match="at position 1"):
    LOGSUMEXPS[name](np.ones(2, np.float32), b=[1.0, 2.0])


def test_logsumexp_nonempty_unchanged():
  x = np.array([[0.3, -0.2, 1.1], [2.0, 0.0, -3.0]], np.float32)
  b = np.array([[1.0, -2.0, 0.5], [0.0, 1.0, 1.0]], np.float32)
  for kwargs in ({}, {"axis": 1}, {"axis": 0, "b": b}, {"axis": 1, "b": b}):
    want, want_sign = _ref_lse(x, **kwargs)
    out, sign = nn.logsumexp(x, return_sign=True, **kwargs)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(sign), want_sign)
  out = nn.logsumexp(np.array([1, 2], np.int32))  # integers promote to float32
  assert out.dtype == np.float32
  np.testing.assert_allclose(float(out), np.log(np.e + np.e ** 2), rtol=1e-6)


# ----------------------------------------------------------------------------
# softmax, log_softmax and max on empty inputs


@pytest.mark.parametrize("fn", [nn.softmax, nn.log_softmax], ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape,axis", [((0,), -1), ((2, 0), 1), ((2, 0), 0), ((2, 0), None)],
                         ids=str)
def test_softmax_of_empty_is_empty(fn, shape, axis):
  x = np.zeros(shape, np.float32)
  for f in (lambda x: fn(x, axis=axis), xjax.jit(lambda x: fn(x, axis=axis))):
    got = f(x)
    assert got.shape == shape and got.dtype == np.float32
  g = xjax.grad(lambda x: fn(x, axis=axis).sum())(x)
  assert g.shape == shape and g.dtype == np.float32


def test_softmax_where_all_false():
  x = np.ones(3, np.float32)
  none = np.zeros(3, bool)
  _check(nn.softmax(x, where=none), np.zeros(3, np.float32))
  _check(nn.log_softmax(x, where=none), np.full(3, -np.inf, np.float32))
  for fn in (nn.softmax, nn.log_softmax):
    _check(xjax.grad(lambda x: fn(x, where=none).sum())(x), np.zeros(3, np.float32))


@pytest.mark.parametrize("fn,np_fn", [(jnp.max, np.max), (jnp.amax, np.amax), (jnp.min, np.min),
                                      (jnp.amin, np.amin)], ids=lambda f: f.__name__)
def test_max_of_empty_needs_initial(fn, np_fn):
  e = np.zeros((2, 0), np.float32)
  for f in (fn, xjax.jit(fn, static_argnames=("axis",))):
    with pytest.raises(ValueError, match="zero-size array to reduction operation"):
      f(e, axis=1)
  _check(fn(e, axis=1, initial=-np.inf), np_fn(e, axis=1, initial=-np.inf))
  _check(xjax.jit(lambda x: fn(x, axis=1, initial=0.0, keepdims=True))(e),
         np_fn(e, axis=1, initial=0.0, keepdims=True))
  _check(fn(e, axis=0), np_fn(e, axis=0))  # a zero-size result needs no identity
  _check(fn(np.zeros(0, np.int32), initial=3), np.int32(3), np.int32)
  _check(xjax.vmap(lambda x: fn(x, initial=1.0))(e), np.ones(2, np.float32))
  assert xjax.grad(lambda x: fn(x, initial=0.0))(np.zeros(0, np.float32)).shape == (0,)
  with pytest.raises(ValueError, match="to use a where mask one has to specify 'initial'"):
    fn(np.ones(3, np.float32), where=np.zeros(3, bool))
  _check(fn(np.ones(3, np.float32), where=np.zeros(3, bool), initial=5.0), np.float32(5.0))
