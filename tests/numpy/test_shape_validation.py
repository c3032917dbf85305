"""Bad sizes from the user raise JAX's errors before anything reaches XLA (issue 12).

A negative, non-integer, traced or oversized size given to a creation function,
a shape-taking lax function or a random sampler used to reach XLA as a module
it could not parse (a JaxRuntimeError). The expected classes and messages are
those real JAX 0.10.2 raises for the same calls; where JAX itself hands XLA a
malformed module (jnp.tile, the bits-based random samplers, random.split,
lax.scan), xjax raises the TypeError of the primitive that receives the size.
"""
import re

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax import random
from xjax._src import stablehlo as hlo

_x = np.arange(3, dtype=np.float32)


def _key():
  return random.key(0)


def _nonneg(prim, got):
  return f"{prim} shape must have every element be nonnegative, got {got}."


def _bcast(got):
  return ("Only non-negative indices are allowed when broadcasting static shapes, but got "
          f"shape {got}.")


def _shapes(got):
  return f"Shapes must be 1D sequences of concrete values of integer type, got {got}."


# (call, class, JAX's message): negative sizes.
NEGATIVE_SIZES = {
    "jnp.zeros(-1)": (lambda: jnp.zeros(-1), TypeError, _nonneg("broadcast_in_dim", "(-1,)")),
    "jnp.ones((2,-3))": (lambda: jnp.ones((2, -3)), TypeError,
                         _nonneg("broadcast_in_dim", "(2, -3)")),
    "jnp.ones([2,-1])": (lambda: jnp.ones([2, -1]), TypeError,
                         _nonneg("broadcast_in_dim", "(2, -1)")),
    "jnp.ones(np.int64(-3))": (lambda: jnp.ones(np.int64(-3)), TypeError,
                               _nonneg("broadcast_in_dim", "(-3,)")),
    "jnp.full((-2,),1.)": (lambda: jnp.full((-2,), 1.), TypeError,
                           _nonneg("broadcast_in_dim", "(-2,)")),
    "jnp.full(ndarray)": (lambda: jnp.full(np.array([2, -1]), 0.), TypeError,
                          _nonneg("broadcast_in_dim", "(2, -1)")),
    "jnp.empty(-1)": (lambda: jnp.empty(-1), TypeError, _nonneg("broadcast_in_dim", "(-1,)")),
    "jnp.empty((2,-1))": (lambda: jnp.empty((2, -1)), TypeError,
                          _nonneg("broadcast_in_dim", "(2, -1)")),
    "jnp.zeros_like(shape=-1)": (lambda: jnp.zeros_like(_x, shape=-1), TypeError,
                                 _nonneg("broadcast_in_dim", "(-1,)")),
    "jnp.ones_like(shape=(-1,))": (lambda: jnp.ones_like(_x, shape=(-1,)), TypeError,
                                   _nonneg("broadcast_in_dim", "(-1,)")),
    "jnp.full_like(shape=(-1,))": (lambda: jnp.full_like(_x, 1, shape=(-1,)), TypeError,
                                   _nonneg("broadcast_in_dim", "(-1,)")),
    "jnp.empty_like(shape=(-1,))": (lambda: jnp.empty_like(_x, shape=(-1,)), TypeError,
                                    _nonneg("broadcast_in_dim", "(-1,)")),
    "jnp.eye(-1)": (lambda: jnp.eye(-1), ValueError,
                    "negative dimensions are not allowed, got -1 and None"),
    "jnp.eye(2,-1)": (lambda: jnp.eye(2, -1), ValueError,
                      "negative dimensions are not allowed, got 2 and -1"),
    "jnp.identity(-1)": (lambda: jnp.identity(-1), ValueError,
                         "negative dimensions are not allowed, got -1 and None"),
    "jnp.linspace(num=-1)": (lambda: jnp.linspace(0, 1, -1), ValueError,
                             "Number of samples, -1, must be non-negative."),
    "jnp.broadcast_to(x,(-1,3))": (lambda: jnp.broadcast_to(_x, (-1, 3)), TypeError,
                                   _nonneg("broadcast_in_dim", "(-1, 3)")),
    "jnp.broadcast_to(1.,(-1,))": (lambda: jnp.broadcast_to(1., (-1,)), TypeError,
                                   _nonneg("broadcast_in_dim", "(-1,)")),
    "jnp.reshape(x,(-3,-1))": (lambda: jnp.reshape(_x, (-3, -1)), TypeError,
                               "reshape new_sizes must all be positive, got (-3, -1)."),
    "jnp.reshape(x,(-2,))": (lambda: jnp.reshape(_x, (-2,)), TypeError,
                             "cannot reshape array of shape (3,) (size 3) into shape (-2,) "
                             "(size -2)"),
    "jnp.repeat(x,-1)": (lambda: jnp.repeat(_x, -1), TypeError,
                         _nonneg("broadcast_in_dim", "(3, -1)")),
    "jnp.repeat(2d,-1,axis=1)": (lambda: jnp.repeat(np.ones((2, 2)), -1, axis=1), TypeError,
                                 _nonneg("broadcast_in_dim", "(2, 2, -1)")),
    "jnp.repeat(1.,-2)": (lambda: jnp.repeat(1., -2), TypeError,
                          _nonneg("broadcast_in_dim", "(1, -2)")),
    "jnp.repeat(total_repeat_length=-1)": (
        lambda: jnp.repeat(_x, 1, total_repeat_length=-1), TypeError,
        _nonneg("broadcast_in_dim", "(-1,)")),
    "jnp.nonzero(size=-1)": (lambda: jnp.nonzero(_x, size=-1), TypeError,
                             _nonneg("broadcast_in_dim", "(-1,)")),
    "jnp.argwhere(size=-1)": (lambda: jnp.argwhere(_x, size=-1), TypeError,
                              _nonneg("broadcast_in_dim", "(-1,)")),
    "jnp.where(size=-1)": (lambda: jnp.where(_x, size=-1), TypeError,
                           _nonneg("broadcast_in_dim", "(-1,)")),
    "jnp.bincount(length=-1)": (lambda: jnp.bincount(np.arange(3), length=-1), TypeError,
                                _nonneg("broadcast_in_dim", "(-1,)")),
    "jnp.broadcast_shapes": (lambda: jnp.broadcast_shapes((2, 3), (-1,)), TypeError,
                             _bcast("(-1,)")),
    "jnp.broadcast_shapes one": (lambda: jnp.broadcast_shapes((2, -3)), TypeError,
                                 _bcast("(2, -3)")),
    "lax.full": (lambda: lax.full((-1, 2), 0.), TypeError, _nonneg("broadcast_in_dim", "(-1, 2)")),
    "lax.full_like": (lambda: lax.full_like(_x, 0., shape=(-1,)), TypeError,
                      _nonneg("broadcast_in_dim", "(-1,)")),
    "lax.broadcast": (lambda: lax.broadcast(_x, (-1,)), TypeError,
                      _nonneg("broadcast_in_dim", "(-1, 3)")),
    "lax.broadcast_in_dim": (lambda: lax.broadcast_in_dim(1., (-1,), ()), TypeError,
                             _nonneg("broadcast_in_dim", "(-1,)")),
    "lax.broadcast_in_dim list": (lambda: lax.broadcast_in_dim(1., [-1], ()), TypeError,
                                  _nonneg("broadcast_in_dim", "(-1,)")),
    "lax.reshape": (lambda: lax.reshape(_x, (-3, -1)), TypeError,
                    "reshape new_sizes must all be positive, got (-3, -1)."),
    "lax.iota": (lambda: lax.iota(np.float32, -1), TypeError, _nonneg("iota", "(-1,)")),
    "lax.broadcasted_iota": (lambda: lax.broadcasted_iota(np.float32, (-1,), 0), TypeError,
                             _nonneg("iota", "(-1,)")),
    "lax.pad interior": (lambda: lax.pad(_x, 0., [(0, 0, -1)]), ValueError,
                         "interior padding in padding_config must be nonnegative, got "
                         "padding_config ((0, 0, -1),)"),
    "lax.pad too much": (lambda: lax.pad(_x, 0., [(-4, 0, 0)]), ValueError,
                         "Dimension size after padding is not at least 0, got result shape "
                         "(-1,), for padding_config ((-4, 0, 0),) and operand shape (3,)"),
    "lax.dynamic_slice": (lambda: lax.dynamic_slice(_x, (0,), (-1,)), TypeError,
                          "slice slice_sizes must be greater than or equal to zero, got "
                          "slice_sizes of (-1,)."),
    "lax.split": (lambda: lax.split(_x, (-1, 4)), ValueError,
                  "Sizes passed to split must be nonnegative, got [-1, 4]"),
    "lax.top_k": (lambda: lax.top_k(_x, -1), ValueError,
                  "k argument to top_k must be nonnegative, got -1"),
    "random.randint": (lambda: random.randint(_key(), (-1,), 0, 3), TypeError, _bcast("(-1,)")),
    "random.bernoulli": (lambda: random.bernoulli(_key(), 0.5, (-1,)), TypeError,
                         _bcast("(-1,)")),
    "random.choice": (lambda: random.choice(_key(), 3, (-1,)), TypeError, _bcast("(-1,)")),
    "random.gamma": (lambda: random.gamma(_key(), 1., (-1,)), TypeError, _bcast("(-1,)")),
    "random.categorical": (lambda: random.categorical(_key(), _x, shape=(-1,)), TypeError,
                           _bcast("(-1,)")),
    "random.truncated_normal": (lambda: random.truncated_normal(_key(), -1., 1., (-1,)),
                                TypeError, _bcast("(-1,)")),
    "random.dirichlet": (lambda: random.dirichlet(_key(), _x, shape=(-1,)), TypeError,
                         _bcast("(-1,)")),
    "random.ball": (lambda: random.ball(_key(), 2, shape=(-1,)), TypeError, _bcast("(-1, 2)")),
    "random.rademacher": (lambda: random.rademacher(_key(), (-1,)), TypeError, _bcast("(-1,)")),
    "random.beta": (lambda: random.beta(_key(), 1., 1., (-1,)), TypeError, _bcast("(-1,)")),
    "random.binomial": (lambda: random.binomial(_key(), 3, .5, (-1,)), TypeError,
                        _bcast("(-1,)")),
    "random.geometric": (lambda: random.geometric(_key(), .5, (-1,)), TypeError,
                         _bcast("(-1,)")),
    "random.pareto": (lambda: random.pareto(_key(), 1., (-1,)), TypeError, _bcast("(-1,)")),
    "random.lognormal": (lambda: random.lognormal(_key(), 1., (-1,)), TypeError,
                         _bcast("(-1,)")),
    "random.triangular": (lambda: random.triangular(_key(), 0., .5, 1., (-1,)), TypeError,
                          _bcast("(-1,)")),
    "random.t": (lambda: random.t(_key(), 1., (-1,)), TypeError, _bcast("(-1,)")),
    "random.poisson": (lambda: random.poisson(_key(), 1., (-1,)), TypeError,
                       _nonneg("broadcast_in_dim", "(-1,)")),
}

# Calls that JAX 0.10.2 hands to XLA as a malformed module (an MLIRError there):
# xjax raises the TypeError of the primitive that receives the size.
NEGATIVE_SIZES_JAX_MALFORMED = {
    "jnp.tile(x,-1)": (lambda: jnp.tile(_x, -1),
                       "tile reps must have every element be nonnegative, got (-1,)."),
    "jnp.tile(x,(2,-1))": (lambda: jnp.tile(_x, (2, -1)),
                           "tile reps must have every element be nonnegative, got (2, -1)."),
    "jnp.tile(scalar,-1)": (lambda: jnp.tile(np.float32(1), -1),
                            "tile reps must have every element be nonnegative, got (-1,)."),
    "random.normal": (lambda: random.normal(_key(), (-1,)), _nonneg("random_bits", "(-1,)")),
    "random.normal (2,-1)": (lambda: random.normal(_key(), (2, -1)),
                             _nonneg("random_bits", "(2, -1)")),
    "random.uniform": (lambda: random.uniform(_key(), (-1,)), _nonneg("random_bits", "(-1,)")),
    "random.bits": (lambda: random.bits(_key(), (-1,)), _nonneg("random_bits", "(-1,)")),
    "random.bits uint8": (lambda: random.bits(_key(), (-1,), np.uint8),
                          _nonneg("random_bits", "(-1,)")),
    "random.bits PRNGKey": (lambda: random.bits(random.PRNGKey(0), (-1,)),
                            _nonneg("random_bits", "(-1,)")),
    "random.exponential": (lambda: random.exponential(_key(), (-1,)),
                           _nonneg("random_bits", "(-1,)")),
    "random.gumbel": (lambda: random.gumbel(_key(), (-1,)), _nonneg("random_bits", "(-1,)")),
    "random.laplace": (lambda: random.laplace(_key(), (-1,)), _nonneg("random_bits", "(-1,)")),
    "random.weibull_min": (lambda: random.weibull_min(_key(), 1., 1., (-1,)),
                           _nonneg("random_bits", "(-1,)")),
    "random.split(key,-1)": (lambda: random.split(_key(), -1), _nonneg("random_split", "(-1,)")),
    "random.split(key,(2,-1))": (lambda: random.split(_key(), (2, -1)),
                                 _nonneg("random_split", "(2, -1)")),
    "random.split(PRNGKey,-1)": (lambda: random.split(random.PRNGKey(0), -1),
                                 _nonneg("random_split", "(-1,)")),
}

# Sizes that are not integers: JAX's "Shapes must be 1D sequences ..." or the
# primitive's "must have every element be an integer type".
NON_INTEGER_SIZES = {
    "jnp.zeros(2.)": (lambda: jnp.zeros(2.), _shapes("(2.0,)")),
    "jnp.zeros((2.,3))": (lambda: jnp.zeros((2., 3)), _shapes("(2.0, 3)")),
    "jnp.zeros(None)": (lambda: jnp.zeros(None), _shapes("(None,)")),
    "jnp.ones('a')": (lambda: jnp.ones('a'), _shapes("('a',)")),
    "jnp.full((np.array([2]),),0.)": (lambda: jnp.full((np.array([2]),), 0.),
                                      _shapes("(array([2]),)")),
    "jnp.zeros_like(shape=2.)": (lambda: jnp.zeros_like(_x, shape=2.), _shapes("(2.0,)")),
    "jnp.full_like(shape=(2.,))": (lambda: jnp.full_like(_x, 1, shape=(2.,)), _shapes("(2.0,)")),
    "jnp.eye(2.)": (lambda: jnp.eye(2.), _shapes("(2.0,)") + " argument of 'N' jnp.eye()."),
    "jnp.eye(2,2.)": (lambda: jnp.eye(2, 2.), _shapes("(2.0,)") + " argument 'M' of jnp.eye()."),
    "jnp.identity(2.)": (lambda: jnp.identity(2.),
                         _shapes("(2.0,)") + " argument of 'N' jnp.eye()."),
    "jnp.broadcast_to(x,(2.,3))": (lambda: jnp.broadcast_to(_x, (2., 3)), _shapes("(2.0, 3)")),
    "jnp.reshape(x,(1.5,))": (lambda: jnp.reshape(_x, (1.5,)), _shapes("(1.5,)")),
    "jnp.tile(x,2.)": (lambda: jnp.tile(_x, 2.), _shapes("(2.0,)")),
    "jnp.repeat(x,2.)": (lambda: jnp.repeat(_x, 2.),
                         "broadcast_in_dim shape must have every element be an integer type, "
                         "got (<class 'int'>, <class 'float'>)."),
    "jnp.broadcast_shapes": (lambda: jnp.broadcast_shapes((2.,), (3,)), _shapes("(2.0,)")),
    "lax.full": (lambda: lax.full((2.,), 0.), _shapes("(2.0,)")),
    "lax.broadcast": (lambda: lax.broadcast(_x, (2.,)),
                      "broadcast_in_dim shape must have every element be an integer type, "
                      "got (<class 'float'>, <class 'int'>)."),
    "lax.broadcast_in_dim": (lambda: lax.broadcast_in_dim(_x, (2., 3), (1,)),
                             "broadcast_in_dim shape must have every element be an integer "
                             "type, got (<class 'float'>, <class 'int'>)."),
    "lax.reshape": (lambda: lax.reshape(_x, (3.,)), _shapes("(3.0,)")),
    "lax.iota": (lambda: lax.iota(np.float32, 2.), _shapes("(2.0,)")),
    "lax.pad": (lambda: lax.pad(_x, 0., [(0.5, 0, 0)]), _shapes("(3.5,)")),
    "random.normal": (lambda: random.normal(_key(), (2.,)), _shapes("(2.0,)")),
    "random.split": (lambda: random.split(_key(), 2.), _shapes("(2.0,)")),
}

# A traced size: JAX's TypeError with the concretization hint.
TRACED_SIZES = {
    "jnp.zeros": lambda n: jnp.zeros(n),
    "jnp.zeros((n,2))": lambda n: jnp.zeros((n, 2)),
    "jnp.zeros_like": lambda n: jnp.zeros_like(_x, shape=(n,)),
    "jnp.eye": lambda n: jnp.eye(n),
    "jnp.eye(M)": lambda n: jnp.eye(2, n),
    "jnp.broadcast_to": lambda n: jnp.broadcast_to(_x, (n, 3)),
    "jnp.reshape": lambda n: jnp.reshape(_x, (n,)),
    "jnp.tile": lambda n: jnp.tile(_x, n),
    "lax.full": lambda n: lax.full((n,), 0.),
    "lax.broadcast_in_dim": lambda n: lax.broadcast_in_dim(1., (n,), ()),
    "lax.broadcast": lambda n: lax.broadcast(_x, (n,)),
    "lax.reshape": lambda n: lax.reshape(_x, (n,)),
    "lax.iota": lambda n: lax.iota(np.int32, n),
    "random.normal": lambda n: random.normal(_key(), (n,)),
    "random.split": lambda n: random.split(_key(), n),
}


@pytest.mark.parametrize("name", list(NEGATIVE_SIZES))
def test_negative_size_raises_jax_error(name):
  fn, cls, msg = NEGATIVE_SIZES[name]
  with pytest.raises(cls, match=re.escape(msg)):
    fn()


@pytest.mark.parametrize("name", list(NEGATIVE_SIZES_JAX_MALFORMED))
def test_negative_size_raises_before_xla_where_jax_does_not(name):
  fn, msg = NEGATIVE_SIZES_JAX_MALFORMED[name]
  with pytest.raises(TypeError, match=re.escape(msg)):
    fn()


@pytest.mark.parametrize("name", list(NON_INTEGER_SIZES))
def test_non_integer_size_raises_jax_error(name):
  fn, msg = NON_INTEGER_SIZES[name]
  with pytest.raises(TypeError, match=re.escape(msg)):
    fn()


@pytest.mark.parametrize("name", list(TRACED_SIZES))
def test_traced_size_raises_concretization_type_error(name):
  fn = TRACED_SIZES[name]
  with pytest.raises(TypeError, match=r"(?s)Shapes must be 1D sequences of concrete values of "
                     r"integer type, got .*JitTracer\(~int32\[\]\).*static_argnums.*argument n"):
    xjax.jit(fn)(3)


@pytest.mark.parametrize("transform", ["jit", "make_jaxpr", "eval_shape", "vmap"])
@pytest.mark.parametrize("fn,msg", [
    (lambda: jnp.zeros(-1), _nonneg("broadcast_in_dim", "(-1,)")),
    (lambda: jnp.repeat(_x, -1), _nonneg("broadcast_in_dim", "(3, -1)")),
    (lambda: lax.broadcast_in_dim(1., (2, -1), ()), _nonneg("broadcast_in_dim", "(2, -1)")),
    (lambda: random.normal(_key(), (-1,)), _nonneg("random_bits", "(-1,)")),
], ids=["zeros", "repeat", "broadcast_in_dim", "random.normal"])
def test_negative_size_raises_under_transformations(transform, fn, msg):
  if transform == "vmap":
    run = lambda: xjax.vmap(lambda _: fn())(_x)  # noqa: E731
  else:
    run = lambda: getattr(xjax, transform)(fn)()  # noqa: E731
  with pytest.raises(TypeError, match=re.escape(msg)):
    run()


def test_scan_negative_length_raises_before_xla():
  with pytest.raises(ValueError, match=re.escape("scan got `length` argument of -1, which is "
                                                 "negative.")):
    lax.scan(lambda c, _: (c, c), 0., None, length=-1)


@pytest.mark.parametrize("fn,prim", [
    (lambda: jnp.zeros(2 ** 70), "broadcast_in_dim"),
    (lambda: jnp.ones((2, 2 ** 63)), "broadcast_in_dim"),
    (lambda: lax.iota(np.int32, 2 ** 70), "iota"),
    (lambda: random.normal(_key(), (2 ** 70,)), "random_bits"),
], ids=["zeros", "ones", "iota", "random.normal"])
def test_size_beyond_int64_raises_before_xla(fn, prim):
  with pytest.raises(TypeError, match=f"{prim} shape must have every element be less than 2"):
    fn()


def test_lowering_refuses_a_negative_dimension():
  with pytest.raises(TypeError, match="internal: tensor dimensions out of range"):
    hlo.tensor_type((2, -1), np.float32)


ZERO_SIZES = {
    "jnp.zeros(0)": (lambda: jnp.zeros(0), (0,)),
    "jnp.ones((2, 0))": (lambda: jnp.ones((2, 0)), (2, 0)),
    "jnp.full((0, 3), 1.)": (lambda: jnp.full((0, 3), 1.), (0, 3)),
    "jnp.empty(0)": (lambda: jnp.empty(0), (0,)),
    "jnp.zeros_like(_x, shape=0)": (lambda: jnp.zeros_like(_x, shape=0), (0,)),
    "jnp.full_like(_x, 2., shape=(3, 0))": (lambda: jnp.full_like(_x, 2., shape=(3, 0)), (3, 0)),
    "jnp.eye(0)": (lambda: jnp.eye(0), (0, 0)),
    "jnp.eye(2, 0)": (lambda: jnp.eye(2, 0), (2, 0)),
    "jnp.identity(0)": (lambda: jnp.identity(0), (0, 0)),
    "jnp.arange(0)": (lambda: jnp.arange(0), (0,)),
    "jnp.arange(-1)": (lambda: jnp.arange(-1), (0,)),
    "jnp.linspace(0, 1, 0)": (lambda: jnp.linspace(0, 1, 0), (0,)),
    "jnp.broadcast_to(_x, (0, 3))": (lambda: jnp.broadcast_to(_x, (0, 3)), (0, 3)),
    "jnp.reshape(jnp.zeros(0), (0, 5))": (lambda: jnp.reshape(jnp.zeros(0), (0, 5)), (0, 5)),
    "jnp.repeat(_x, 0)": (lambda: jnp.repeat(_x, 0), (0,)),
    "jnp.repeat(_x, 1, total_repeat_length=0)": (
        lambda: jnp.repeat(_x, 1, total_repeat_length=0), (0,)),
    "jnp.tile(_x, 0)": (lambda: jnp.tile(_x, 0), (0,)),
    "jnp.tile(_x, (0, 2))": (lambda: jnp.tile(_x, (0, 2)), (0, 6)),
    "jnp.nonzero(_x, size=0)[0]": (lambda: jnp.nonzero(_x, size=0)[0], (0,)),
    "jnp.bincount(np.arange(3), length=0)": (lambda: jnp.bincount(np.arange(3), length=0), (0,)),
    "lax.full((0, 2), 0.)": (lambda: lax.full((0, 2), 0.), (0, 2)),
    "lax.broadcast_in_dim(1., (0,), ())": (lambda: lax.broadcast_in_dim(1., (0,), ()), (0,)),
    "lax.broadcast(_x, (0,))": (lambda: lax.broadcast(_x, (0,)), (0, 3)),
    "lax.iota(np.int32, 0)": (lambda: lax.iota(np.int32, 0), (0,)),
    "lax.pad(_x, 0., [(-3, 0, 0)])": (lambda: lax.pad(_x, 0., [(-3, 0, 0)]), (0,)),
    "lax.scan(length=0)": (lambda: lax.scan(lambda c, _: (c, c), 0., None, length=0)[1], (0,)),
    "random.normal(_key(), (0,))": (lambda: random.normal(_key(), (0,)), (0,)),
    "random.uniform(_key(), (2, 0))": (lambda: random.uniform(_key(), (2, 0)), (2, 0)),
    "random.randint(_key(), (0,), 0, 3)": (lambda: random.randint(_key(), (0,), 0, 3), (0,)),
    "random.split(_key(), 0)": (lambda: random.key_data(random.split(_key(), 0)), (0, 2)),
    "random.bits(random.PRNGKey(0), (0,))": (lambda: random.bits(random.PRNGKey(0), (0,)), (0,)),
}


@pytest.mark.parametrize("name", list(ZERO_SIZES))
def test_zero_sizes_still_work(name):
  fn, shape = ZERO_SIZES[name]
  out = fn()
  assert out.shape == shape
  assert np.asarray(out).shape == shape


INT_SHAPES = {
    "random.normal(key, 2)": (lambda: random.normal(_key(), 2), (2,)),
    "random.uniform(key, 2)": (lambda: random.uniform(_key(), 2), (2,)),
    "random.randint(key, 2, 0, 3)": (lambda: random.randint(_key(), 2, 0, 3), (2,)),
    "lax.full(2, 0.)": (lambda: lax.full(2, 0.), (2,)),
    "lax.full_like(x, 0., shape=2)": (lambda: lax.full_like(_x, 0., shape=2), (2,)),
    "lax.reshape(x, 3)": (lambda: lax.reshape(_x, 3), (3,)),
    "jnp.zeros(np.int64(2))": (lambda: jnp.zeros(np.int64(2)), (2,)),
    "jnp.zeros(np.array([2, 3]))": (lambda: jnp.zeros(np.array([2, 3])), (2, 3)),
    "jnp.zeros((True,))": (lambda: jnp.zeros((True,)), (1,)),
    "jnp.eye(np.int64(2))": (lambda: jnp.eye(np.int64(2)), (2, 2)),
    "jnp.broadcast_shapes((3,), 1)": (lambda: jnp.zeros(jnp.broadcast_shapes((3,), 1)), (3,)),
}


@pytest.mark.parametrize("name", list(INT_SHAPES))
def test_a_python_int_is_a_shape(name):
  """As in JAX, one Python int is a 1-D shape wherever a shape is taken."""
  fn, shape = INT_SHAPES[name]
  assert fn().shape == shape
