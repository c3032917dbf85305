"""Tests for xjax/_src/numpy/vectorize.py: jnp.vectorize against np.vectorize, with
generalized-ufunc signatures, excluded arguments, JAX's error messages, and composition
with jit, vmap and grad."""
import warnings

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from jnp_checks import rand


@pytest.fixture
def rng():
  return np.random.default_rng(0)


def _close(actual, expected, tol=1e-5):
  assert np.shape(actual) == np.shape(expected), (np.shape(actual), np.shape(expected))
  np.testing.assert_allclose(np.asarray(actual), expected, rtol=tol, atol=tol)


CONTEXT = "on vectorized function with excluded=frozenset() and signature="


# ----------------------------------------------------------------------------
# Without a signature: elementwise over broadcast arguments


@pytest.mark.parametrize("shapes", [((), ()), ((3,), ()), ((2, 1), (3,)), ((2, 3), (2, 3)),
                                    ((0,), (1,)), ((1, 1), (1,)), ((4, 1, 2), (3, 1))])
def test_vectorize_scalar_function_matches_numpy(rng, shapes):
  def f(a, b):
    return a * 2 + b if a > b else a - b  # Python control flow is fine under vectorize in NumPy

  def jf(a, b):
    return jnp.where(a > b, a * 2 + b, a - b)

  a = rand(rng, shapes[0], np.float32)
  b = rand(rng, shapes[1], np.float32)
  expected = np.vectorize(f, otypes=[np.float32])(a, b)
  _close(jnp.vectorize(jf)(a, b), expected)
  _close(xjax.jit(jnp.vectorize(jf))(a, b), expected)


def test_vectorize_sees_scalars_and_keeps_dtypes():
  seen = []

  def f(x, y):
    seen.append((x.shape, y.shape))
    return x + y

  out = jnp.vectorize(f)(jnp.ones((2, 3), jnp.int32), jnp.ones(3, jnp.int32))
  assert out.shape == (2, 3) and out.dtype == np.int32
  assert seen == [((), ())]
  out = jnp.vectorize(lambda a, b: a + b)(1, 2)
  assert out.shape == () and out.dtype == np.int32 and out.weak_type
  out = jnp.vectorize(lambda a: a.sum())([1, 2])  # lists are converted, as with jnp.asarray
  np.testing.assert_array_equal(out, [1, 2])
  out = jnp.vectorize(lambda a: 3)(jnp.ones((2, 3)))
  assert out.shape == (2, 3) and out.dtype == np.int32


def test_vectorize_pytree_outputs_without_signature(rng):
  x = rand(rng, (2, 1), np.float32)
  out = jnp.vectorize(lambda a, b: (a + b, {"p": a * b}))(x, jnp.ones(3))
  assert out[0].shape == (2, 3) and out[1]["p"].shape == (2, 3)
  _close(out[1]["p"], np.broadcast_to(x, (2, 3)))
  # every loop dim of size 1 everywhere is restored on every output
  out = jnp.vectorize(lambda a: [a, a + 1])(jnp.ones((1, 1)))
  assert [o.shape for o in out] == [(1, 1), (1, 1)]


def test_vectorize_keeps_function_name_and_doc():
  def my_fun(x):
    """Doc of my_fun."""
    return x

  v = jnp.vectorize(my_fun)
  assert v.__name__ == "my_fun" and v.__doc__ == "Doc of my_fun."


# ----------------------------------------------------------------------------
# Signatures: core dimensions


@pytest.mark.parametrize("shapes", [((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
                                    ((5, 1, 2, 3), (7, 3, 4)), ((1, 2, 3), (6, 3, 4)),
                                    ((0, 2, 3), (3, 4)), ((2, 0), (0, 4))])
def test_vectorize_matmul_signature_matches_numpy(rng, shapes):
  sig = "(n,m),(m,k)->(n,k)"
  a = rand(rng, shapes[0], np.float32)
  b = rand(rng, shapes[1], np.float32)
  expected = np.vectorize(np.matmul, signature=sig, otypes=[np.float32])(a, b)
  f = jnp.vectorize(jnp.matmul, signature=sig)
  _close(f(a, b), expected)
  _close(xjax.jit(f)(a, b), expected)


def test_vectorize_core_dims_seen_by_function():
  seen = []

  def f(x, y):
    seen.append((x.shape, y.shape))
    return jnp.sum(x) * y

  out = jnp.vectorize(f, signature="(n),()->()")(jnp.ones((4, 1, 3)), jnp.ones((5,)))
  assert out.shape == (4, 5)
  assert seen == [((3,), ())]
  np.testing.assert_array_equal(out, np.full((4, 5), 3.0))


def test_vectorize_multiple_outputs(rng):
  def f(x):
    return jnp.sum(x), x * 2

  x = rand(rng, (4, 3), np.float32)
  s, d = jnp.vectorize(f, signature="(n)->(),(n)")(x)
  ns, nd = np.vectorize(lambda v: (v.sum(), v * 2), signature="(n)->(),(n)")(x)
  _close(s, ns)
  _close(d, nd)
  s, d = jnp.vectorize(f, signature="(n)->(),(n)")(jnp.ones((1, 3)))
  assert s.shape == (1,) and d.shape == (1, 3)


def test_vectorize_output_core_dims_from_nowhere():
  # an output core dim not named by any input is allowed (its size comes from the function)
  f = jnp.vectorize(lambda x: jnp.stack([x, x, x]), signature="()->(k)")
  assert f(jnp.ones((2, 5))).shape == (2, 5, 3)


def test_vectorize_empty_loop_and_core_dims():
  f = jnp.vectorize(lambda a: a.sum(), signature="(n)->()")
  np.testing.assert_array_equal(f(jnp.ones((2, 0))), [0., 0.])
  assert f(jnp.ones((0, 3))).shape == (0,)
  assert f(jnp.ones(3)).shape == ()
  # a "()" core signature on a 2-D input loops over both dims
  assert jnp.vectorize(lambda a: a.sum(), signature="()->()")(jnp.ones((2, 3))).shape == (2, 3)
  # dimension names are \w+ (digits and underscores)
  f = jnp.vectorize(lambda a: a.sum(), signature="(n_1)->()")
  assert f(jnp.ones((2, 3))).shape == (2,)


# ----------------------------------------------------------------------------
# excluded, None and keyword arguments


def test_vectorize_excluded_positional_and_keyword(rng):
  x = rand(rng, (3,), np.float32)
  out = jnp.vectorize(lambda a, b: a + len(b), excluded={1})(x, [1, 2])
  _close(out, x + 2)
  out = jnp.vectorize(lambda a, b=None: a + len(b), excluded={"b"})(x, b=[1, 2])
  _close(out, x + 2)

  def pick(i, table):
    return table[i]

  out = jnp.vectorize(pick, excluded={1})(jnp.array([2, 0, 1]), jnp.array([10., 20., 30.]))
  np.testing.assert_array_equal(out, [30., 10., 20.])
  # excluded positions beyond the call are ignored
  assert jnp.vectorize(lambda a: a, excluded={3})(jnp.ones(2)).shape == (2,)


def test_vectorize_none_arguments_pass_through():
  f = jnp.vectorize(lambda a, b: (a if b is None else b) * 2)
  np.testing.assert_array_equal(f(jnp.ones(3), None), np.full(3, 2.))
  np.testing.assert_array_equal(f(None, jnp.ones(3)), np.full(3, 2.))  # JAX 0.10.2 fails here
  with pytest.raises(ValueError, match=r"Cannot pass None at locations \{1\} with "
                                       r"signature='\(n\),\(n\)->\(n\)'"):
    jnp.vectorize(lambda a, b: a, signature="(n),(n)->(n)")(jnp.ones(3), None)


def test_vectorize_keyword_arguments_are_vectorized_like_numpy():
  # NumPy vectorizes keyword arguments after the positional ones (JAX 0.10.2 drops them)
  f = lambda x, y=1: x * y  # noqa: E731
  x, y = np.arange(2.0), np.arange(3.0)[:, None]
  expected = np.vectorize(f)(x, y=y)
  _close(jnp.vectorize(f)(x, y=y), expected)
  sig = "(n),()->(n)"
  expected = np.vectorize(f, signature=sig)(x, y=y)
  _close(jnp.vectorize(f, signature=sig)(x, y=y), expected)


def test_vectorize_excluded_validation():
  f = lambda a, b: a + b  # noqa: E731
  with pytest.raises(TypeError, match=r"can only exclude integer or string arguments, but "
                                      r"excluded=\{1.5\}"):
    jnp.vectorize(f, excluded={1.5})
  with pytest.raises(ValueError, match=r"excluded=\{-1\} contains negative numbers"):
    jnp.vectorize(f, excluded={-1})


# ----------------------------------------------------------------------------
# Errors, in JAX's words


def test_vectorize_signature_errors():
  mm = jnp.vectorize(jnp.matmul, signature="(n,m),(m,k)->(n,k)")
  with pytest.raises(ValueError, match=r"inconsistent size for core dimension 'm': 2 vs 3 "
                                       + CONTEXT.replace("(", r"\(").replace(")", r"\)")):
    mm(jnp.ones((2, 3)), jnp.ones((2, 4)))
  with pytest.raises(ValueError, match=r"input with shape \(3,\) does not have enough dimensions "
                                       r"for all core dimensions \('n', 'm'\)"):
    mm(jnp.ones((3,)), jnp.ones((3, 4)))
  with pytest.raises(TypeError, match="wrong number of positional arguments: expected 2, got 1"):
    mm(jnp.ones((2, 3)))
  with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
    mm(jnp.ones((2, 2, 3)), jnp.ones((4, 3, 4)))
  for bad in ["(n)->", "(n) -> ()", "n->()", "(n),->()", "(n)->(),"]:
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
      jnp.vectorize(jnp.sum, signature=bad)(jnp.ones(3))


def test_vectorize_output_errors():
  with pytest.raises(TypeError, match="output must be a tuple when multiple outputs are expected"):
    jnp.vectorize(lambda x: x.sum(), signature="(n)->(),()")(jnp.ones(3))
  with pytest.raises(TypeError, match="wrong number of output arguments: expected 1, got 2"):
    jnp.vectorize(lambda x: (x.sum(), x.sum()), signature="(n)->()")(jnp.ones(3))
  with pytest.raises(ValueError, match=r"output shape \(3,\) does not match core dimensions "
                                       r"\('m', 'n'\)"):
    jnp.vectorize(lambda x: x, signature="(n)->(m,n)")(jnp.ones(3))
  with pytest.raises(ValueError, match="inconsistent size for core dimension 'n': 2 vs 3"):
    jnp.vectorize(lambda x: x[:2], signature="(n)->(n)")(jnp.ones(3))
  # output checks also run on the batched (vmapped) call
  with pytest.raises(ValueError, match="inconsistent size for core dimension 'n': 2 vs 3"):
    jnp.vectorize(lambda x: x[:2], signature="(n)->(n)")(jnp.ones((4, 3)))


def test_vectorize_rank_promotion_config():
  f = jnp.vectorize(lambda a, b: a + b)
  with xjax.numpy_rank_promotion("raise"):
    with pytest.raises(ValueError, match="require rank promotion for jnp.vectorize function"):
      f(jnp.ones((2, 3)), jnp.ones(3))
    assert f(jnp.ones((2, 3)), 1.0).shape == (2, 3)  # scalars never count
  with xjax.numpy_rank_promotion("warn"):
    with pytest.warns(UserWarning, match="require rank promotion"):
      f(jnp.ones((2, 3)), jnp.ones(3))
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    f(jnp.ones((2, 3)), jnp.ones(3))


# ----------------------------------------------------------------------------
# Composition with jit, vmap and grad


def test_vectorize_under_jit_vmap_grad(rng):
  def norm(x):
    return jnp.sqrt(jnp.sum(x * x))

  vnorm = jnp.vectorize(norm, signature="(n)->()")
  x = rand(rng, (4, 5, 3), np.float32)
  expected = np.sqrt((x * x).sum(-1))
  _close(vnorm(x), expected)
  _close(xjax.jit(vnorm)(x), expected)
  _close(xjax.vmap(vnorm)(x), expected)
  _close(xjax.vmap(vnorm, in_axes=1)(x), expected.T)
  _close(xjax.vmap(xjax.vmap(vnorm))(x), expected)
  g = xjax.grad(lambda y: jnp.sum(vnorm(y)))(x)
  _close(g, x / expected[..., None])
  g = xjax.jit(xjax.grad(lambda y: jnp.sum(vnorm(y))))(x)
  _close(g, x / expected[..., None])
  # vectorize of a gradient: the elementwise derivative of sin
  dsin = jnp.vectorize(xjax.grad(jnp.sin))
  _close(dsin(x[0]), np.cos(x[0]))
  _close(xjax.jit(dsin)(x[0]), np.cos(x[0]))


def test_vectorize_jit_inside_and_broadcast_unmapped(rng):
  calls = []

  @xjax.jit
  def inner(a, b):
    calls.append(1)
    return a @ b

  f = jnp.vectorize(inner, signature="(n,m),(m)->(n)")
  a = rand(rng, (2, 3), np.float32)
  b = rand(rng, (5, 3), np.float32)
  _close(f(a, b), np.einsum("nm,km->kn", a, b))
  _close(xjax.vmap(f, in_axes=(None, 0))(a, b), np.einsum("nm,km->kn", a, b))
