"""Reductions, argmax/argmin and cumulative reductions against NumPy and real JAX's output.

Each case runs eagerly and under `xjax.jit` (the results must agree), is
compared with NumPy, and its abstract eval is compared with the computed
result (shape, dtype, weak type). Printed params and error messages are
compared with what real JAX 0.10.2 prints and raises.
"""
import json
import os
import re

import ml_dtypes
import numpy as np
import pytest

import xjax
from xjax._src import core
from xjax._src.lax import elementwise as ew
from xjax._src.lax import reductions as red

GOLDEN = os.path.join(os.path.dirname(__file__), os.pardir, "golden", "jaxprs.json")

bf16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float32), np.dtype(np.float16), bf16]
INTS = [np.dtype(t) for t in (np.int32, np.int8, np.uint8, np.uint32)]
BOOL = [np.dtype(np.bool_)]
COMPLEX = [np.dtype(np.complex64)]
ALL = FLOATS + INTS + BOOL + COMPLEX

# (shape, axes): 0-d, empty arrays and axes, size 1, several ranks.
SHAPES_AXES = [
    ((), ()),
    ((5,), (0,)),
    ((5,), ()),
    ((0,), (0,)),
    ((1,), (0,)),
    ((3, 0), (1,)),
    ((2, 3, 4), (0, 2)),
    ((2, 3, 4), (1,)),
]
FEW_SHAPES_AXES = [((), ()), ((2, 3, 4), (0, 2))]
# Every shape for these dtypes; a few shapes for the others (to keep the suite quick).
FULL_DTYPES = [np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.bool_)]
# Empty arrays of every dtype are covered by test_reductions_of_empty_axes_give_the_identity.


def cases(table, shapes, few_shapes):
  """pytest params (name, fun, reference, dtype, *shape case) for a table of primitives."""
  return [pytest.param(name, fun, reference, dtype, *shape_case,
                       id=f"{name}-{dtype}-" + "-".join(map(str, shape_case)))
          for name, fun, reference, dtypes in table for dtype in dtypes
          for shape_case in (shapes if dtype in FULL_DTYPES else few_shapes)]


def rand(rng, shape, dtype, *, small=False, nans=False):
  """Random values of `dtype`; `small` keeps products from overflowing."""
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return rng.random(shape) < 0.5
  if dtype.kind in "iu":
    info = np.iinfo(dtype)
    lo, hi = (max(info.min, -3), 4) if small else (max(info.min, -100), min(info.max, 100))
    return rng.integers(lo, hi, size=shape).astype(dtype)
  scale = 1.5 if small else 3.0
  x = rng.uniform(-scale, scale, size=shape)
  if dtype.kind == "c":
    x = x + 1j * rng.uniform(-scale, scale, size=shape)
  if nans and x.size:
    x[rng.random(shape) < 0.2] = np.nan
  return x.astype(dtype)


def tolerance(dtype):
  dtype = np.dtype(dtype)
  return {np.dtype(np.float16): 2e-2, bf16: 1e-1}.get(dtype, 1e-5)


def assert_close(actual, expected, dtype):
  actual = np.asarray(actual)
  assert actual.dtype == np.dtype(dtype), (actual.dtype, dtype)
  assert actual.shape == np.shape(expected), (actual.shape, np.shape(expected))
  if np.dtype(dtype).kind in "fcV" or np.dtype(dtype) == bf16:
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    np.testing.assert_allclose(actual.astype(wide), np.asarray(expected).astype(wide),
                               rtol=tolerance(dtype), atol=tolerance(dtype))
  else:
    np.testing.assert_array_equal(actual, expected)


def _exact(x):
  """`x` as a NumPy array whose NaNs compare equal (bfloat16 widened to float32)."""
  x = np.asarray(x)
  return x.astype(np.float32) if x.dtype == bf16 else x


def check(fun, x, expected, dtype):
  """`fun(x)` eagerly and under jit matches `expected`; abstract eval matches the result."""
  eager = fun(x)
  jitted = xjax.jit(fun)(x)
  assert_close(eager, expected, dtype)
  assert_close(jitted, expected, dtype)
  np.testing.assert_array_equal(_exact(eager), _exact(jitted))
  out_aval, = xjax.make_jaxpr(fun)(x).out_avals
  assert out_aval == core.get_aval(eager) == core.get_aval(jitted)


def _wide(x):
  """A copy NumPy computes in exactly (bfloat16 and float16 widen to float32)."""
  if x.dtype in (bf16, np.dtype(np.float16)):
    return x.astype(np.float32)
  return x


# ----------------------------------------------------------------------------
# Monoid reductions


def _np_sum(x, axes):
  return np.sum(_wide(x), axis=axes, dtype=_wide(x).dtype).astype(x.dtype)


def _np_prod(x, axes):
  return np.prod(_wide(x), axis=axes, dtype=_wide(x).dtype).astype(x.dtype)


def _np_max(x, axes):
  return np.max(_wide(x), axis=axes, initial=red._max_identity(_wide(x).dtype)).astype(x.dtype) \
      if x.dtype.kind != "c" else _complex_extreme(x, axes, np.max, -np.inf)


def _np_min(x, axes):
  return np.min(_wide(x), axis=axes, initial=red._min_identity(_wide(x).dtype)).astype(x.dtype) \
      if x.dtype.kind != "c" else _complex_extreme(x, axes, np.min, np.inf)


def _complex_extreme(x, axes, fn, identity):
  if x.size == 0 or any(x.shape[a] == 0 for a in axes):
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return np.full(shape, identity, x.dtype)
  return fn(x, axis=axes)


def _np_bitwise(ufunc):
  def reference(x, axes):
    return ufunc.reduce(x, axis=axes) if axes else x
  return reference


MONOIDS = [
    ("reduce_sum", red.reduce_sum, _np_sum, FLOATS + INTS + COMPLEX),
    ("reduce_prod", red.reduce_prod, _np_prod, FLOATS + INTS + COMPLEX),
    ("reduce_max", red.reduce_max, _np_max, ALL),
    ("reduce_min", red.reduce_min, _np_min, ALL),
    ("reduce_and", red.reduce_and, _np_bitwise(np.bitwise_and), INTS + BOOL),
    ("reduce_or", red.reduce_or, _np_bitwise(np.bitwise_or), INTS + BOOL),
    ("reduce_xor", red.reduce_xor, _np_bitwise(np.bitwise_xor), INTS + BOOL),
]


@pytest.mark.parametrize("name,fun,reference,dtype,shape,axes",
                         cases(MONOIDS, SHAPES_AXES, FEW_SHAPES_AXES))
def test_monoid_reduction_matches_numpy(name, fun, reference, dtype, shape, axes, rng):
  x = rand(rng, shape, dtype, small=name == "reduce_prod")
  check(lambda x: fun(x, axes), x, reference(x, axes), dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", ["reduce_max", "reduce_min"])
def test_reduce_max_min_propagate_nan(name, dtype, rng):
  x = rand(rng, (4, 6), dtype, nans=True)
  x[1, 2] = np.nan
  x[2] = np.nan
  fun = getattr(red, name)
  reference = {"reduce_max": np.max, "reduce_min": np.min}[name]
  check(lambda x: fun(x, (1,)), x, reference(x.astype(np.float32), axis=1).astype(dtype), dtype)


def test_reduce_complex_max_is_lexicographic():
  x = np.array([1 + 1j, 1 + 2j, 2 + 0j, 2 - 1j], np.complex64)
  assert complex(red.reduce_max(x, (0,))) == 2 + 0j
  assert complex(red.reduce_min(x, (0,))) == 1 + 1j


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_reductions_of_empty_axes_give_the_identity(dtype):
  x = np.zeros((0, 2), dtype)
  expected = {
      "reduce_sum": 0, "reduce_prod": 1,
      "reduce_max": red._max_identity(dtype), "reduce_min": red._min_identity(dtype),
      "reduce_and": np.array(-1).astype(dtype), "reduce_or": 0, "reduce_xor": 0,
  }
  for name, fun, _, dtypes in MONOIDS:
    if dtype in dtypes:
      out = fun(x, (0,))
      np.testing.assert_array_equal(np.asarray(out), np.full((2,), expected[name], dtype))


def test_identities_are_jax_values():
  assert red._max_identity(np.float16) == -np.inf
  assert red._min_identity(bf16) == np.inf
  assert red._max_identity(np.int8) == -128
  assert red._min_identity(np.uint32) == 2**32 - 1
  assert not red._max_identity(np.bool_) and red._min_identity(np.bool_)
  assert red._and_identity(np.uint8) == 255


def test_reduce_sum_wraps_integers_like_numpy():
  x = np.full((10,), 100, np.int8)
  assert int(red.reduce_sum(x, (0,))) == int(np.sum(x, dtype=np.int8))


def test_reduction_weak_types():
  weak = lambda x: ew.convert_element_type(x, x.dtype, weak_type=True)
  x = np.ones((2, 3), np.int32)
  cases = [
      (lambda x: red.reduce_sum(weak(x), (0,)), True),
      (lambda x: red.reduce_prod(weak(x), (0,)), True),
      (lambda x: red.reduce_max(weak(x), (0,)), True),
      (lambda x: red.reduce_min(weak(x), (0,)), True),
      (lambda x: red.reduce_and(weak(x), (0,)), False),
      (lambda x: red.reduce_or(weak(x), (0,)), False),
      (lambda x: red.reduce_xor(weak(x), (0,)), False),
      (lambda x: red.argmax(weak(x), 0, np.int32), False),
      (lambda x: red.argmin(weak(x), 0, np.int32), False),
      (lambda x: red.cumsum(weak(x)), True),
      (lambda x: red.cummax(weak(x)), True),
      (lambda x: red.reduce_sum(x, (0,)), False),
  ]
  for fun, expected in cases:
    out_aval, = xjax.make_jaxpr(fun)(x).out_avals
    assert out_aval.weak_type is expected, fun
    assert xjax.jit(fun)(x).weak_type is expected
  assert red.reduce_sum(3.0, ()).weak_type
  assert red.reduce_max(3, ()).weak_type


# ----------------------------------------------------------------------------
# The generic reduce


def test_reduce_with_a_known_monoid_becomes_the_primitive():
  x = np.arange(6, dtype=np.float32).reshape(2, 3)
  text = str(xjax.make_jaxpr(lambda x: red.reduce(x, 0.0, ew.add, (0,)))(x))
  assert "reduce_sum[axes=(0,) out_sharding=None]" in text
  text = str(xjax.make_jaxpr(lambda x: red.reduce(x, 1.0, ew.mul, (0,)))(x))
  assert "reduce_prod[axes=(0,)]" in text
  text = str(xjax.make_jaxpr(lambda x: red.reduce(x, -np.inf, ew.max, (1,)))(x))
  assert "reduce_max[axes=(1,)]" in text
  np.testing.assert_array_equal(red.reduce(x, np.float32(0), ew.add, (0,)), x.sum(0))


def test_reduce_with_another_init_is_the_reduce_primitive():
  x = np.arange(6, dtype=np.float32).reshape(2, 3)
  jaxpr = xjax.make_jaxpr(lambda x: red.reduce(x, np.float32(1), ew.add, (0,)))(x)
  eqn, = jaxpr.eqns
  assert eqn.primitive is red.reduce_p
  assert eqn.params["dimensions"] == (0,) and eqn.params["computation"] is ew.add
  assert str(eqn.params["jaxpr"]) == "{ lambda ; a:f32[] b:f32[]. let c:f32[] = add a b in (c,) }"


@pytest.mark.parametrize("jit", [False, True])
def test_reduce_variadic_matches_numpy(jit, rng):
  x = rand(rng, (3, 4, 5), np.float32)
  y = rand(rng, (3, 4, 5), np.int32)

  def f(x, y):
    return red.reduce((x, y), (np.float32(0), np.int32(-2**31)),
                      lambda a, b: (ew.add(a[0], b[0]), ew.max(a[1], b[1])), (0, 2))
  if jit:
    f = xjax.jit(f)
  s, m = f(x, y)
  np.testing.assert_allclose(s, x.sum((0, 2)), rtol=1e-5)
  np.testing.assert_array_equal(m, y.max((0, 2)))


def test_reduce_generic_on_empty_axis_gives_init():
  add = lambda a, b: ew.add(a, b)  # not `lax.add` itself: the generic path
  out = red.reduce(np.ones((0, 2), np.float32), np.float32(0), add, (0,))
  np.testing.assert_array_equal(out, np.zeros(2, np.float32))


def test_reduce_generic_weak_type_and_cache():
  add = lambda a, b: ew.add(a, b)
  x = ew.convert_element_type(np.ones(3, np.int32), np.int32, weak_type=True)
  out_aval, = xjax.make_jaxpr(lambda: red.reduce(x, 0, add, (0,)))().out_avals
  assert out_aval.weak_type
  out_aval, = xjax.make_jaxpr(lambda: red.reduce(x, np.int32(0), add, (0,)))().out_avals
  assert not out_aval.weak_type
  j1 = xjax.make_jaxpr(lambda y: red.reduce(y, np.int32(0), add, (0,)))(np.ones(3, np.int32))
  j2 = xjax.make_jaxpr(lambda y: red.reduce(y, np.int32(0), add, (0,)))(np.ones(3, np.int32))
  assert j1.eqns[0].params["jaxpr"] is j2.eqns[0].params["jaxpr"]


def test_reduce_with_traced_init_is_generic():
  f = lambda x, i: red.reduce(x, i, ew.add, (0,))
  jaxpr = xjax.make_jaxpr(f)(np.ones(3, np.float32), np.float32(0))
  assert jaxpr.eqns[0].primitive is red.reduce_p
  assert float(xjax.jit(f)(np.ones(3, np.float32), np.float32(0))) == 3.0


# ----------------------------------------------------------------------------
# argmax, argmin

ARG_SHAPES = [((5,), 0), ((1,), 0), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), 2), ((4, 0), 0)]
ARGMINMAX = [(name, getattr(red, name), getattr(np, name), FLOATS + INTS + BOOL)
             for name in ("argmax", "argmin")]


@pytest.mark.parametrize("name,fun,reference,dtype,shape,axis",
                         cases(ARGMINMAX, ARG_SHAPES, [((2, 3, 4), 1)]))
def test_argminmax_matches_numpy(name, fun, reference, dtype, shape, axis, rng):
  x = rand(rng, shape, dtype, nans=True)
  if dtype.kind in "iu":
    x = (x % 4).astype(dtype)  # ties
  reference = reference(_wide(x), axis=axis).astype(np.int32)
  check(lambda x: fun(x, axis, np.int32), x, reference, np.int32)


def test_argmax_nan_wins_and_ties_go_first():
  x = np.array([1.0, np.nan, 3.0, np.nan, 3.0], np.float32)
  assert int(red.argmax(x, 0, np.int32)) == 1
  assert int(red.argmin(x, 0, np.int32)) == 1
  y = np.array([1.0, 3.0, 3.0, -1.0, -1.0], np.float32)
  assert int(red.argmax(y, 0, np.int32)) == 1
  assert int(red.argmin(y, 0, np.int32)) == 3
  z = np.array([0.0, -0.0, 0.0], np.float32)
  assert int(red.argmax(z, 0, np.int32)) == 0
  # Long rows, where XLA combines partial results in a tree.
  long = np.zeros(10000, np.float32)
  long[[7000, 9000]] = np.nan
  assert int(xjax.jit(lambda v: red.argmax(v, 0, np.int32))(long)) == 7000
  long = np.zeros(10000, np.float32)
  long[[5001, 8000]] = 2.0
  assert int(red.argmax(long, 0, np.int32)) == 5001


def test_argmax_index_dtype():
  x = np.array([1.0, 5.0, 3.0], np.float32)
  out = red.argmax(x, 0, np.uint8)
  assert out.dtype == np.uint8 and int(out) == 1


# ----------------------------------------------------------------------------
# Cumulative reductions


def _np_cumulative(accumulate):
  def reference(x, axis, reverse):
    w = _wide(x)
    if reverse:
      w = np.flip(w, axis)
    out = accumulate(w, axis)
    if reverse:
      out = np.flip(out, axis)
    return out.astype(x.dtype)
  return reference


def _complex_accumulate(x, axis, better):
  x = np.moveaxis(x.copy(), axis, 0)
  for i in range(1, x.shape[0]):
    prev, cur = x[i - 1], x[i]
    x[i] = np.where(better(prev, cur), prev, cur)
  return np.moveaxis(x, 0, axis)


def _lex_gt(a, b):
  return (a.real > b.real) | ((a.real == b.real) & (a.imag > b.imag))


def _lex_lt(a, b):
  return (a.real < b.real) | ((a.real == b.real) & (a.imag < b.imag))


def _cummax(x, axis):
  return _complex_accumulate(x, axis, _lex_gt) if x.dtype.kind == "c" \
      else np.maximum.accumulate(x, axis)


def _cummin(x, axis):
  return _complex_accumulate(x, axis, _lex_lt) if x.dtype.kind == "c" \
      else np.minimum.accumulate(x, axis)


def _cumlogsumexp(x, axis):
  if x.dtype.kind == "c":
    out = np.log(np.cumsum(np.exp(x.astype(np.complex128)), axis))
    return out.real + 1j * (np.angle(np.exp(1j * out.imag)))
  return np.logaddexp.accumulate(x.astype(np.float64), axis)


CUMULATIVE = [
    ("cumsum", red.cumsum, _np_cumulative(lambda x, a: np.cumsum(x, a, dtype=x.dtype)),
     FLOATS + INTS + COMPLEX),
    ("cumprod", red.cumprod, _np_cumulative(lambda x, a: np.cumprod(x, a, dtype=x.dtype)),
     FLOATS + INTS + COMPLEX),
    ("cummax", red.cummax, _np_cumulative(_cummax), FLOATS + INTS + COMPLEX),
    ("cummin", red.cummin, _np_cumulative(_cummin), FLOATS + INTS + COMPLEX),
    ("cumlogsumexp", red.cumlogsumexp, _np_cumulative(_cumlogsumexp), FLOATS + COMPLEX),
]
CUM_SHAPES = [((5,), 0, False), ((5,), 0, True), ((1,), 0, False), ((0,), 0, False),
              ((3, 0), 1, True), ((3, 4), 0, True), ((2, 3, 4), 1, False), ((2, 3, 4), 2, True)]
FEW_CUM_SHAPES = [((3, 4), 1, True), ((2, 3, 4), 1, False)]


@pytest.mark.parametrize("name,fun,reference,dtype,shape,axis,reverse",
                         cases(CUMULATIVE, CUM_SHAPES, FEW_CUM_SHAPES))
def test_cumulative_matches_numpy(name, fun, reference, dtype, shape, axis, reverse, rng):
  x = rand(rng, shape, dtype, small=name == "cumprod")
  check(lambda x: fun(x, axis, reverse), x, reference(x, axis, reverse), dtype)


def test_cumulative_nan_and_inf():
  x = np.array([1.0, np.nan, 3.0], np.float32)
  np.testing.assert_array_equal(red.cummax(x), [1.0, np.nan, np.nan])
  np.testing.assert_array_equal(red.cumsum(x, reverse=True), [np.nan, np.nan, 3.0])
  y = np.array([1, 2, -np.inf, np.inf, 3], np.float32)
  np.testing.assert_allclose(red.cumlogsumexp(y), np.logaddexp.accumulate(y), rtol=1e-6)
  z = np.array([-np.inf, -np.inf, 0.0], np.float32)
  np.testing.assert_array_equal(red.cumlogsumexp(z), [-np.inf, -np.inf, 0.0])


def test_cumsum_wraps_int8():
  x = np.array([100, 100, 100], np.int8)
  np.testing.assert_array_equal(red.cumsum(x), np.array([100, -56, 44], np.int8))


def test_cumsum_long_axis(rng):
  x = rand(rng, (3, 2000), np.int32)
  np.testing.assert_array_equal(xjax.jit(lambda x: red.cumsum(x, 1))(x), np.cumsum(x, 1))


# ----------------------------------------------------------------------------
# Printed params (real JAX's goldens) and errors (real JAX 0.10.2's texts)


def _golden_text(case):
  with open(GOLDEN) as f:
    return json.load(f)["cases"][case]["text"]


def _golden_eqn(case, prim):
  text = _golden_text(case)
  match = re.search(rf"\b{re.escape(prim)}\[[^\]]*\]", text)
  assert match, (case, text)
  return match.group(0)


def _eqn_text(fun, *args, prim):
  text = str(xjax.make_jaxpr(fun)(*args))
  match = re.search(rf"\b{re.escape(prim)}\[[^\]]*\]", text)
  assert match, text
  return match.group(0)


f32_23 = np.zeros((2, 3), np.float32)
f32_4 = np.zeros((4,), np.float32)


@pytest.mark.parametrize("case,prim,fun,arg", [
    ("argmax_axis1", "argmax", lambda x: red.argmax(x, 1, np.int32), f32_23),
    ("max_keepdims", "reduce_max", lambda x: red.reduce_max(x, (0,)), f32_23),
    ("sum_axis", "reduce_sum", lambda x: red.reduce_sum(x, (1,)), f32_23),
    ("cumsum", "cumsum", lambda x: red.cumsum(x), f32_4),
    ("lax_cumlogsumexp", "cumlogsumexp", lambda x: red.cumlogsumexp(x), f32_4),
])
def test_printed_params_match_jax(case, prim, fun, arg):
  assert _eqn_text(fun, arg, prim=prim) == _golden_eqn(case, prim)


def test_lax_cumlogsumexp_jaxpr_matches_jax():
  text = _golden_text("lax_cumlogsumexp")
  assert str(xjax.make_jaxpr(lambda x: red.cumlogsumexp(x))(f32_4)) == text


def test_printed_params_of_other_primitives():
  b = np.zeros(3, bool)
  assert str(xjax.make_jaxpr(lambda x: red.reduce_prod(x, (0,)))(f32_23)) == (
      "{ lambda ; a:f32[2,3]. let b:f32[3] = reduce_prod[axes=(0,)] a in (b,) }")
  assert str(xjax.make_jaxpr(lambda x: red.reduce_and(x, (0,)))(b)) == (
      "{ lambda ; a:bool[3]. let b:bool[] = reduce_and[axes=(0,)] a in (b,) }")
  assert str(xjax.make_jaxpr(lambda x: red.cumsum(x, 1, True))(f32_23)) == (
      "{ lambda ; a:f32[2,3]. let b:f32[2,3] = cumsum[axis=1 reverse=True] a in (b,) }")


x23 = np.arange(6, dtype=np.float32).reshape(2, 3)
ERRORS = [
    (lambda: red.reduce_sum(np.array([True]), (0,)), TypeError,
     "reduce_sum does not accept dtype bool. Accepted dtypes are subtypes of number."),
    (lambda: red.reduce_prod(np.array([True]), (0,)), TypeError,
     "reduce_prod does not accept dtype bool. Accepted dtypes are subtypes of number."),
    (lambda: red.reduce_and(x23, (0,)), TypeError,
     "logical reduction requires operand dtype bool or int, got float32."),
    (lambda: red.reduce_sum(x23, (2,)), ValueError,
     "reduction axes (2,) contains out-of-bounds indices for float32[2,3]."),
    (lambda: red.reduce_sum(x23, (-1,)), ValueError,
     "reduction axes (-1,) contains out-of-bounds indices for float32[2,3]."),
    (lambda: red.reduce_sum(x23, (0, 0)), ValueError,
     "duplicate value in 'axes' of reduction: (0, 0)"),
    (lambda: red.reduce_max(x23, (2,)), ValueError,
     "reduction axes (2,) contains out-of-bounds indices for float32[2,3]."),
    (lambda: red.reduce_and(np.ones(3, np.int32), (2,)), IndexError,
     "index 2 is out of bounds for axis 0 with size 1"),
    (lambda: red.argmax(np.zeros((0, 3), np.float32), 0, np.int32), ValueError,
     "argmin and argmax require non-empty reduced dimension. operand.shape=(0, 3) axis=0"),
    (lambda: red.argmax(x23, 2, np.int32), ValueError, "Invalid axis 2 for operand shape (2, 3)"),
    (lambda: red.argmax(x23, -1, np.int32), ValueError, "Invalid axis -1 for operand shape (2, 3)"),
    (lambda: red.argmax(np.float32(1), 0, np.int32), ValueError,
     "Invalid axis 0 for operand shape ()"),
    (lambda: red.argmax(x23, 0, np.float32), TypeError,
     "index_dtype must be an integer type, but got float32"),
    (lambda: red.argmax(np.array([1 + 1j], np.complex64), 0, np.int32), TypeError,
     "gt does not accept dtype complex64 at position 0. Accepted dtypes at position 0 are "
     "subtypes of integer, floating, bool."),
    (lambda: red.cumsum(np.array([True])), TypeError,
     "cumsum does not accept dtype bool. Accepted dtypes are subtypes of number."),
    (lambda: red.cummax(np.array([True])), TypeError,
     "cummax does not accept dtype bool. Accepted dtypes are subtypes of number."),
    (lambda: red.cumsum(x23, -1), ValueError, "XLA operations do not allow negative axes"),
    (lambda: red.cumsum(x23, 2), ValueError, "axis 2 is out of bounds for array of shape (2, 3)"),
    (lambda: red.cumsum(np.float32(3), 0), ValueError,
     "axis 0 is out of bounds for array of shape ()"),
    (lambda: red.cumlogsumexp(np.array([1, 2], np.int32)), OverflowError,
     "cannot convert float infinity to integer"),
    (lambda: red.reduce(x23, np.zeros(2, np.float32), ew.max, (0,)), ValueError,
     "reduce found non-scalar initial value: [(2,)]"),
    (lambda: red.reduce(x23, np.int32(1), ew.max, (0,)), TypeError,
     "reduce operand dtypes should match corresponding initial value dtypes, got "
     "operands=[ShapedArray(float32[2,3])] and initial_values=[ShapedArray(int32[])]"),
    (lambda: red.reduce((x23, x23), 0.0, ew.max, (0,)), ValueError,
     "Operands must have the same tree structure as init_values: PyTreeDef((*, *)) vs. "
     "PyTreeDef(*)"),
    (lambda: red.reduce(np.ones(3, np.float32), np.float32(2), ew.add, (1,)), IndexError,
     "index 1 is out of bounds for axis 0 with size 1"),
]


@pytest.mark.parametrize("thunk,exc,message", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_match_jax(thunk, exc, message):
  with pytest.raises(exc) as info:
    thunk()
  assert str(info.value) == message


def test_reduce_computation_returning_a_non_array():
  bad = lambda a, b: "x"
  with pytest.raises(TypeError, match=r"function <lambda> at .*test_reductions.py:\d+ traced "
                     r"for reduce comp returned a value of type <class 'str'>, which is not a "
                     "valid JAX type"):
    red.reduce(np.ones(3, np.float32), np.float32(2), bad, (0,))
