"""jnp.ufunc objects (jnp.add, jnp.maximum, ..., frompyfunc) against NumPy's ufuncs.

Each method (reduce, accumulate, at, outer, reduceat) is checked against the
same method of the NumPy ufunc, eagerly and under jit, over dtypes, shapes and
axes; then errors, attributes and transformations.
"""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from jnp_checks import assert_values, check, rand

BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "logical_and", "logical_or",
          "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "logaddexp", "logaddexp2"]
UFUNCS = BINARY + ["negative"]
BITWISE = {"bitwise_and", "bitwise_or", "bitwise_xor"}
INEXACT_ONLY = {"logaddexp", "logaddexp2"}


def _dtypes_for(name):
  if name in BITWISE:
    return [np.int32, np.uint8, np.bool_]
  if name in INEXACT_ONLY:
    return [np.float32]
  if name == "subtract":
    return [np.float32, np.int32, np.uint8]
  return [np.float32, np.int32, np.bool_]


def _cases(shapes):
  return [(name, np.dtype(dt), shape) for name in BINARY for dt in _dtypes_for(name)
          for shape in shapes]


def _data(shape, dtype, seed=0):
  rng = np.random.default_rng(seed)
  if dtype == np.uint8:
    return rng.integers(0, 4, size=shape).astype(dtype)  # no wraparound differences
  if dtype.kind == "i":
    return rng.integers(-3, 4, size=shape).astype(dtype)
  return rand(rng, shape, dtype, low=-2, high=2)


def _ids(cases):
  return ["-".join(str(c) for c in case) for case in cases]


# -----------------------------------------------------------------------------
# Which functions are ufuncs, and their attributes.

@pytest.mark.parametrize("name", UFUNCS)
def test_builtin_ufunc_attributes_match_numpy(name):
  u, ref = getattr(jnp, name), getattr(np, name)
  assert isinstance(u, jnp.ufunc)
  assert (u.nin, u.nout, u.nargs) == (ref.nin, ref.nout, ref.nin)
  assert u.__name__ == name and repr(u) == f"<jnp.ufunc '{name}'>"
  if ref.identity is None:
    assert u.identity is None
  else:
    assert u.identity == ref.identity and type(u.identity) in (int, bool, float)
  assert "Mirrors `jax.numpy." in u.__doc__


@pytest.mark.parametrize("name", ["sin", "divide", "power", "equal", "arctan2", "invert"])
def test_other_functions_are_not_ufunc_objects(name):
  assert not isinstance(getattr(jnp, name), jnp.ufunc)  # as in JAX 0.10.2


def test_ufunc_properties_are_read_only_and_identity_based_equality():
  with pytest.raises(AttributeError):
    jnp.add.nin = 3
  f = lambda x, y: x + y
  a, b = jnp.frompyfunc(f, 2, 1, identity=0), jnp.frompyfunc(f, 2, 1, identity=0)
  assert a == b and hash(a) == hash(b) and a != jnp.frompyfunc(f, 2, 1)
  assert jnp.add == jnp.add and jnp.add != jnp.multiply
  u = jnp.ufunc(f, 2, 1, name="plus", nargs=3, identity=0)
  assert (u.__name__, u.nin, u.nout, u.nargs, u.identity) == ("plus", 2, 1, 3, 0)


def test_call_matches_function_and_rejects_out_and_where():
  x = np.arange(4, dtype=np.float32)
  check(lambda a: jnp.add(a, 2.0), lambda a: np.add(a, 2.0), x)
  assert jnp.add(1, 2, out=None, where=None) == 3
  with pytest.raises(NotImplementedError, match="out argument of <jnp.ufunc 'add'>"):
    jnp.add(x, x, out=x)
  with pytest.raises(NotImplementedError, match="where argument of <jnp.ufunc 'add'>"):
    jnp.add(x, x, where=True)
  with pytest.raises(TypeError, match="add requires ndarray or scalar arguments"):
    jnp.add([1], [2])


# -----------------------------------------------------------------------------
# reduce

REDUCE_LAYOUTS = [((5,), 0, False), ((2, 3), 0, True), ((2, 3), -1, False),
                  ((2, 3), None, False), ((3, 1, 2), None, True)]


@pytest.mark.parametrize("name,dtype,layout", _cases(REDUCE_LAYOUTS),
                         ids=_ids(_cases(REDUCE_LAYOUTS)))
def test_reduce(name, dtype, layout):
  shape, axis, keepdims = layout
  x = _data(shape, dtype)

  def np_reduce(a):
    if axis is None:  # NumPy refuses this for subtract; JAX reduces the flattened array
      out = getattr(np, name).reduce(a.ravel())
      return np.reshape(out, (1,) * a.ndim) if keepdims else out
    return getattr(np, name).reduce(a, axis=axis, keepdims=keepdims)

  check(lambda a: getattr(jnp, name).reduce(a, axis=axis, keepdims=keepdims), np_reduce, x)


@pytest.mark.parametrize("name", BINARY)
def test_reduce_initial_and_where(name):
  dt = np.dtype(_dtypes_for(name)[0])
  x = _data((3, 4), dt, seed=1)
  where = np.array([[True, False, True, True]] * 3)
  initial = np.array(1, dt).item()
  check(lambda a: getattr(jnp, name).reduce(a, axis=1, initial=initial, where=where),
        lambda a: getattr(np, name).reduce(a, axis=1, initial=initial, where=where), x)
  check(lambda a: getattr(jnp, name).reduce(a, axis=0, initial=initial),
        lambda a: getattr(np, name).reduce(a, axis=0, initial=initial), x)
  if getattr(jnp, name).identity is not None:
    check(lambda a: getattr(jnp, name).reduce(a, axis=0, where=where),
          lambda a: getattr(np, name).reduce(a, axis=0, where=where), x)


@pytest.mark.parametrize("name", BINARY)
def test_reduce_empty(name):
  u = getattr(jnp, name)
  dt = np.dtype(_dtypes_for(name)[0])
  x = np.zeros((0, 3), dt)
  if u.identity is None:
    with pytest.raises(ValueError, match=f"zero-size array to reduction operation"):
      u.reduce(x)
    check(lambda a: u.reduce(a, initial=2), lambda a: getattr(np, name).reduce(a, initial=2), x)
  else:
    check(lambda a: u.reduce(a), lambda a: getattr(np, name).reduce(a), x)
  check(lambda a: u.reduce(a, axis=1), lambda a: getattr(np, name).reduce(a, axis=1), x)


def test_reduce_dtype_and_tuple_axis():
  x = np.arange(6, dtype=np.int32).reshape(2, 3)
  check(lambda a: jnp.subtract.reduce(a, dtype=np.float32),
        lambda a: np.subtract.reduce(a, dtype=np.float32), x)
  check(lambda a: jnp.add.reduce(a, dtype=np.float32),
        lambda a: np.add.reduce(a, dtype=np.float32), x)
  check(lambda a: jnp.add.reduce(a, axis=(0, 1)), lambda a: np.add.reduce(a, axis=(0, 1)), x)
  check(lambda a: jnp.subtract.reduce(np.arange(3, dtype=np.int8)),
        lambda a: np.subtract.reduce(np.arange(3, dtype=np.int8)), x)
  with pytest.raises(NotImplementedError, match="tuple of axes"):
    jnp.subtract.reduce(x, axis=(0, 1))


def test_reduce_errors():
  x = np.arange(6, dtype=np.int32).reshape(2, 3)
  with pytest.raises(ValueError, match="reduce only supported for binary ufuncs"):
    jnp.negative.reduce(x)
  with pytest.raises(ValueError, match="reduction operation 'subtract' does not have an identity, "
                     "so to use a where mask one has to specify 'initial'"):
    jnp.subtract.reduce(x, where=x > 1)
  with pytest.raises(ValueError, match="where argument must have dtype=bool; got dtype=int32"):
    jnp.add.reduce(x, where=x)
  with pytest.raises(NotImplementedError, match=r"out argument of add.reduce\(\)"):
    jnp.add.reduce(x, out=x)
  with pytest.raises(TypeError, match="add.reduce requires ndarray or scalar arguments"):
    jnp.add.reduce([1, 2])
  with pytest.raises(ValueError, match="integer argument required; got dtype=float32"):
    jnp.bitwise_and.reduce(np.ones(2, np.float32))
  for u in (jnp.add, jnp.subtract):
    with pytest.raises(ValueError, match="out of bounds"):
      u.reduce(np.arange(3), axis=1)
  u = jnp.frompyfunc(lambda a, b: (a, b), 2, 2)
  with pytest.raises(ValueError, match="reduce only supported for functions returning a single"):
    u.reduce(x)


# -----------------------------------------------------------------------------
# accumulate

ACCUMULATE_LAYOUTS = [((5,), 0), ((2, 3), -1)]


@pytest.mark.parametrize("name,dtype,layout", _cases(ACCUMULATE_LAYOUTS),
                         ids=_ids(_cases(ACCUMULATE_LAYOUTS)))
def test_accumulate(name, dtype, layout):
  shape, axis = layout
  x = _data(shape, dtype)
  want = None
  if name in ("add", "multiply") and dtype != np.float32:
    want = np.int32  # jnp.cumsum / cumprod promote small integers and bools, as in JAX
  check(lambda a: getattr(jnp, name).accumulate(a, axis=axis),
        lambda a: getattr(np, name).accumulate(a, axis=axis), x, dtype=want)


def test_accumulate_dtype_empty_and_errors():
  x = np.arange(6, dtype=np.int32).reshape(2, 3)
  check(lambda a: jnp.subtract.accumulate(a, dtype=np.float32),
        lambda a: np.subtract.accumulate(a, dtype=np.float32), x)
  check(lambda a: jnp.subtract.accumulate(a, axis=1),
        lambda a: np.subtract.accumulate(a, axis=1), np.zeros((2, 0), np.float32))
  check(lambda a: jnp.maximum.accumulate(a), lambda a: np.maximum.accumulate(a),
        np.array([1.0, np.nan, 0.0, 3.0], np.float32))
  with pytest.raises(ValueError, match="accumulate does not allow multiple axes"):
    jnp.subtract.accumulate(x, axis=None)
  with pytest.raises(ValueError, match="accumulate only supported for binary ufuncs"):
    jnp.negative.accumulate(x)
  with pytest.raises(NotImplementedError, match=r"out argument of add.accumulate\(\)"):
    jnp.add.accumulate(x, out=x)
  with pytest.raises(ValueError, match="out of bounds"):
    jnp.subtract.accumulate(np.float32(3))


# -----------------------------------------------------------------------------
# at

def _np_at(name, a, indices, *b):
  out = np.array(a, copy=True)
  getattr(np, name).at(out, indices, *b)
  return out


AT_CASES = [
    ("add", np.int32, (6,), np.array([0, 0, 3, 5, 3]), np.array([1, 2, 3, 4, 5])),
    ("add", np.float32, (6,), np.array([1, 1, 1]), 2.5),
    ("subtract", np.int32, (6,), np.array([0, 0, 1]), 10),
    ("multiply", np.int32, (6,), np.array([2, 2, 4]), 3),
    ("maximum", np.int32, (6,), np.array([0, 0, 1]), np.array([7, 9, -1])),
    ("minimum", np.float32, (6,), np.array([5, 5]), np.array([-1.5, -2.5])),
    ("bitwise_or", np.int32, (6,), np.array([1, 1]), np.array([4, 8])),
    ("logical_and", np.bool_, (6,), np.array([0, 3, 3]), False),
    ("add", np.bool_, (6,), np.array([1, 1]), True),
    ("add", np.int32, (3, 4), (np.array([0, 0, 2]), np.array([1, 1, 3])), np.array([1, 2, 3])),
    ("add", np.int32, (3, 4), (np.array([0, 0]),), np.array([1, 2, 3, 4])),
    ("add", np.int32, (3, 4), (1, 2), 5),
    ("add", np.int32, (3, 4), 1, 5),
    ("subtract", np.int32, (3, 4), (slice(None), np.array([0, 0])), 1),
]


@pytest.mark.parametrize("case", AT_CASES, ids=lambda c: c[0])
def test_at(case):
  name, dtype, shape, indices, b = case
  x = _data(shape, np.dtype(dtype), seed=2)
  u = getattr(jnp, name)
  want = _np_at(name, x, indices, b)
  got = u.at(x, indices, b, inplace=False)
  assert got.dtype == want.dtype if dtype != np.float64 else True
  assert_values(got, want, np.dtype(dtype))
  if not any(isinstance(i, slice) for i in (indices if isinstance(indices, tuple) else ())):
    jitted = xjax.jit(lambda a, i, v: u.at(a, i, v, inplace=False))(x, indices, b)
    assert_values(jitted, want, np.dtype(dtype))


def test_at_unary_and_errors():
  x = np.arange(5, dtype=np.int32)
  idx = np.array([0, 0, 1])
  assert_values(jnp.negative.at(x, idx, inplace=False), _np_at("negative", x, idx),
                np.dtype(np.int32))
  with pytest.raises(NotImplementedError, match="cannot operate inplace like"):
    jnp.add.at(x, 0, 1)
  with pytest.raises(TypeError, match="non-tuple sequence"):
    jnp.maximum.at(x, [0, 1], 1, inplace=False)
  with pytest.raises(TypeError, match="add.at requires ndarray or scalar arguments"):
    jnp.add.at([1, 2], 0, 1, inplace=False)


# -----------------------------------------------------------------------------
# outer and reduceat

OUTER_CASES = [(name, np.dtype(_dtypes_for(name)[0]), shapes) for name in BINARY
               for shapes in [((3,), (4,)), ((), (2,)), ((2, 2), (3,)), ((0,), (2,)), ((), ())]]


@pytest.mark.parametrize("name,dtype,shapes", OUTER_CASES, ids=_ids(OUTER_CASES))
def test_outer(name, dtype, shapes):
  a, b = _data(shapes[0], dtype, 3), _data(shapes[1], dtype, 4)
  check(getattr(jnp, name).outer, getattr(np, name).outer, a, b)


def test_outer_mixed_dtypes_and_errors():
  check(jnp.add.outer, np.add.outer, np.arange(3, dtype=np.int32), np.arange(2.0, dtype=np.float32))
  with pytest.raises(ValueError, match="outer only supported for binary ufuncs"):
    jnp.negative.outer(np.ones(2), np.ones(2))
  with pytest.raises(TypeError, match="add.outer requires ndarray or scalar arguments"):
    jnp.add.outer([1], [2])


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "minimum",
                                  "bitwise_or", "logical_and"])
@pytest.mark.parametrize("indices", [[0, 4, 1, 5], [0, 2], [3], [1, 1, 2, 7]], ids=str)
def test_reduceat_1d(name, indices):
  # (reduceat computes in a.dtype, as in JAX: logical_and on floats gives floats.)
  dt = np.dtype(np.bool_ if name == "logical_and" else
                _dtypes_for(name)[1] if name in BITWISE else _dtypes_for(name)[0])
  x = _data((8,), dt, seed=5)
  idx = np.array(indices)
  check(lambda a, i: getattr(jnp, name).reduceat(a, i),
        lambda a, i: getattr(np, name).reduceat(a, i), x, idx)


def test_reduceat_axis_dtype_and_errors():
  x = np.arange(12, dtype=np.float32).reshape(3, 4)
  idx = np.array([0, 2, 1])
  for axis in (0, 1, -1):
    check(lambda a: jnp.add.reduceat(a, idx, axis=axis),
          lambda a: np.add.reduceat(a, idx, axis=axis), x)
  xi = np.arange(8, dtype=np.int32)
  check(lambda a: jnp.add.reduceat(a, np.array([0, 4]), dtype=np.float32),
        lambda a: np.add.reduceat(a, np.array([0, 4]), dtype=np.float32), xi)
  with pytest.raises(ValueError, match="indices must be one-dimensional"):
    jnp.add.reduceat(xi, np.array([[0]]))
  with pytest.raises(ValueError, match="a must have 1 or more dimension"):
    jnp.add.reduceat(np.int32(1), np.array([0]))
  with pytest.raises(ValueError, match="reduceat requires a single integer axis"):
    jnp.add.reduceat(xi, np.array([0]), axis=None)
  with pytest.raises(IndexError, match=r"index 8 out-of-bounds in add.reduceat \[0, 8\)"):
    jnp.add.reduceat(xi, np.array([0, 8]))
  with pytest.raises(TypeError, match="add.reduceat requires ndarray or scalar arguments"):
    jnp.add.reduceat(xi, [0, 2])
  with pytest.raises(ValueError, match="reduceat only supported for binary ufuncs"):
    jnp.negative.reduceat(xi, np.array([0]))


# -----------------------------------------------------------------------------
# frompyfunc

def test_frompyfunc_binary_matches_numpy():
  fn = lambda a, b: a * b + 1
  u = jnp.frompyfunc(fn, 2, 1)
  ref = np.frompyfunc(fn, 2, 1)
  assert isinstance(u, jnp.ufunc) and (u.nin, u.nout, u.nargs, u.identity) == (2, 1, 2, None)
  x = np.arange(6, dtype=np.int32).reshape(2, 3)
  y = np.array([2, -1, 3], np.int32)
  as_int = lambda r: np.asarray(r, dtype=np.int32)
  check(u, lambda a, b: as_int(ref(a, b)), x, y)
  check(lambda a: u(a, 2), lambda a: as_int(ref(a, 2)), np.int32(4))
  check(lambda a: u.reduce(a, axis=1), lambda a: as_int(ref.reduce(a, axis=1)), x)
  check(lambda a: u.reduce(a, axis=None), lambda a: as_int(ref.reduce(a.ravel())), x)
  check(lambda a: u.accumulate(a, axis=1), lambda a: as_int(ref.accumulate(a, axis=1)), x)
  check(u.outer, lambda a, b: as_int(ref.outer(a, b)), x[0], y)
  idx = np.array([0, 2, 1])
  check(lambda a: u.reduceat(a, idx, axis=1), lambda a: as_int(ref.reduceat(a, idx, axis=1)), x)
  want = np.array(x[0], dtype=object)
  ref.at(want, np.array([0, 0, 2]), 3)
  assert_values(u.at(x[0], np.array([0, 0, 2]), 3, inplace=False), as_int(want),
                np.dtype(np.int32))


def test_frompyfunc_identity_unary_and_multiple_outputs():
  u = jnp.frompyfunc(lambda a, b: jnp.maximum(a, b), 2, 1, identity=-100.0)
  assert u.identity == -100.0
  check(lambda a: u.reduce(a), lambda a: np.full((3,), -100.0, np.float32),
        np.zeros((0, 3), np.float32))
  x = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
  check(lambda a: u.reduce(a, where=np.array([True, False])),
        lambda a: np.maximum.reduce(a, where=np.array([True, False]), initial=-100.0), x)
  square = jnp.frompyfunc(lambda a: a * a, 1, 1)
  check(square, np.square, x)
  with pytest.raises(ValueError, match="outer only supported for binary ufuncs"):
    square.outer(x, x)
  two = jnp.frompyfunc(lambda a, b: (a + b, a - b), 2, 2)
  check(two, lambda a, b: (a + b, a - b), x, x[0])
  with pytest.raises(ValueError, match="accumulate only supported for functions returning a"):
    two.accumulate(x)
  with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
    two([1.0], 2.0)


def test_frompyfunc_empty_and_scalar_inputs():
  u = jnp.frompyfunc(lambda a, b: a - 2 * b, 2, 1)
  check(u, lambda a, b: a - 2 * b, np.zeros((0, 2), np.float32), np.ones((2,), np.float32))
  check(u, lambda a, b: a - 2 * b, np.float32(1.5), np.float32(0.25))


# -----------------------------------------------------------------------------
# Transformations

def test_vmap_and_jit_of_methods():
  x = _data((4, 5), np.dtype(np.float32), seed=7)
  assert_values(xjax.vmap(jnp.subtract.reduce)(x), np.subtract.reduce(x, axis=1),
                np.dtype(np.float32))
  assert_values(xjax.vmap(lambda r: jnp.subtract.accumulate(r))(x),
                np.subtract.accumulate(x, axis=1), np.dtype(np.float32))
  assert_values(xjax.vmap(jnp.add.outer)(x, x), np.stack([np.add.outer(r, r) for r in x]),
                np.dtype(np.float32))
  idx = np.array([0, 3])
  assert_values(xjax.vmap(lambda r: jnp.maximum.reduceat(r, idx))(x),
                np.maximum.reduceat(x, idx, axis=1), np.dtype(np.float32))
  f = xjax.jit(lambda u, a: u.reduce(a), static_argnums=0)
  assert_values(f(jnp.multiply, x), np.multiply.reduce(x), np.dtype(np.float32))
  assert_values(f(jnp.subtract, x), np.subtract.reduce(x), np.dtype(np.float32))
  assert_values(xjax.jit(jnp.add)(x, x), x + x, np.dtype(np.float32))


def test_grad_through_generic_reduce():
  x = np.array([1.0, 2.0, 3.0], np.float32)
  g = xjax.grad(lambda a: jnp.subtract.reduce(a))(x)
  assert_values(g, np.array([1.0, -1.0, -1.0]), np.dtype(np.float32))
  g = xjax.grad(lambda a: jnp.logaddexp.reduce(a))(x)
  e = np.exp(x - x.max())
  assert_values(g, e / e.sum(), np.dtype(np.float32))
