"""sort, sort_key_val and top_k against NumPy and real JAX's printed output and errors.

Each case runs eagerly and under `xjax.jit` (the results must agree), is
compared with NumPy (a stable sort, NaNs last, -0.0 equal to 0.0), and its
abstract eval is compared with the computed result.
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
from xjax._src.lax import sorting as srt

GOLDEN = os.path.join(os.path.dirname(__file__), os.pardir, "golden", "jaxprs.json")

bf16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float32), np.dtype(np.float16), bf16]
INTS = [np.dtype(t) for t in (np.int32, np.int8, np.uint8, np.uint32)]
BOOL = [np.dtype(np.bool_)]
COMPLEX = [np.dtype(np.complex64)]


def rand(rng, shape, dtype):
  """Random values with many ties; floats include NaN, -0.0, 0.0 and infinities."""
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return rng.random(shape) < 0.5
  if dtype.kind in "iu":
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -5), min(info.max, 5) + 1, size=shape).astype(dtype)
  pool = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, -1.5, 1.5, 2.0, -2.0, 0.25])
  if dtype.kind == "c":  # complex: ties in the real part, no NaNs (NumPy orders them otherwise)
    pool = pool[1:]
    pool = pool[np.isfinite(pool)]
    return (rng.choice(pool, shape) + 1j * rng.choice(pool, shape)).astype(dtype)
  return rng.choice(pool, shape).astype(dtype)


# Every shape for these dtypes; a few shapes for the others (to keep the suite quick).
FULL_DTYPES = [np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.bool_)]


def cases(dtypes, shapes, few_shapes):
  """pytest params (dtype, *shape case)."""
  return [pytest.param(dtype, *shape_case, id=f"{dtype}-" + "-".join(map(str, shape_case)))
          for dtype in dtypes for shape_case in (shapes if dtype in FULL_DTYPES else few_shapes)]


def _host(x):
  x = np.asarray(x)
  return x.astype(np.float32) if x.dtype == bf16 else x


def check(fun, args, expected):
  """`fun(*args)` eagerly and under jit equals `expected` (exactly, signs of zero included)."""
  results = [fun(*args), xjax.jit(fun)(*args)]
  out_avals = xjax.make_jaxpr(fun)(*args).out_avals
  for result in results:
    leaves = list(result) if isinstance(result, (list, tuple)) else [result]
    assert len(leaves) == len(expected) == len(out_avals)
    for leaf, want, aval in zip(leaves, expected, out_avals, strict=True):
      assert core.get_aval(leaf) == aval
      got, want = _host(leaf), _host(np.asarray(want, leaf.dtype))
      np.testing.assert_array_equal(got, want)
      if got.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


# ----------------------------------------------------------------------------
# sort

SORT_SHAPES = [((5,), -1), ((1,), 0), ((0,), 0), ((3, 4), 0), ((3, 4), -1), ((2, 3, 4), 1),
               ((3, 0), 1), ((40,), 0)]


def _np_sort(x, dimension):
  if x.dtype == bf16:
    return np.sort(x.astype(np.float32), axis=dimension, kind="stable").astype(bf16)
  return np.sort(x, axis=dimension, kind="stable")


@pytest.mark.parametrize("dtype,shape,dimension",
                         cases(FLOATS + INTS + BOOL + COMPLEX, SORT_SHAPES,
                               [((3, 4), -1), ((40,), 0)]))
def test_sort_matches_numpy(dtype, shape, dimension, rng):
  x = rand(rng, shape, dtype)
  check(lambda x: srt.sort(x, dimension), (x,), [_np_sort(x, dimension)])


def test_sort_float_order_and_stability():
  x = np.array([3.0, np.nan, -0.0, 0.0, -np.inf, -np.nan, 1.0, 0.0, -0.0], np.float32)
  out = np.asarray(srt.sort(x))
  np.testing.assert_array_equal(out, [-np.inf, -0.0, 0.0, 0.0, -0.0, 1.0, 3.0, np.nan, np.nan])
  # -0.0 and 0.0 are equal keys: a stable sort keeps their input order.
  np.testing.assert_array_equal(np.signbit(out[1:5]), [True, False, False, True])


def test_sort_unstable_sorts():
  x = np.array([3.0, np.nan, -1.0, 2.0, -1.0], np.float32)
  np.testing.assert_array_equal(srt.sort(x, is_stable=False), np.sort(x))


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.int8), bf16], ids=str)
@pytest.mark.parametrize("shape,dimension", [((50,), 0), ((4, 7), 1), ((4, 7), 0)], ids=str)
def test_sort_with_iota_is_a_stable_argsort(dtype, shape, dimension, rng):
  x = rand(rng, shape, dtype)
  iota = np.broadcast_to(
      np.arange(shape[dimension], dtype=np.int32).reshape(
          [-1 if i == dimension else 1 for i in range(len(shape))]), shape).copy()
  order = np.argsort(_host(x), axis=dimension, kind="stable").astype(np.int32)
  check(lambda x, i: srt.sort((x, i), dimension, num_keys=1), (x, iota),
        [_np_sort(x, dimension), order])


def test_sort_several_keys_is_lexicographic(rng):
  k1 = rand(rng, (30,), np.int8)
  k2 = rand(rng, (30,), np.float32)
  v = np.arange(30, dtype=np.int32)
  order = np.lexsort((_host(k2), k1))  # primary key last for np.lexsort; stable
  check(lambda a, b, c: srt.sort((a, b, c), num_keys=2), (k1, k2, v),
        [k1[order], k2[order], v[order]])


def test_sort_complex_is_lexicographic():
  x = np.array([1 + 2j, 1 + 1j, 2 - 5j, 0 - 5j, 1 + 1j], np.complex64)
  np.testing.assert_array_equal(srt.sort(x), np.sort(x))


def test_sort_key_val(rng):
  keys = rand(rng, (3, 20), np.float32)
  values = rng.integers(0, 100, (3, 20)).astype(np.int32)
  order = np.argsort(keys, axis=-1, kind="stable")
  check(lambda k, v: srt.sort_key_val(k, v), (keys, values),
        [np.take_along_axis(keys, order, -1), np.take_along_axis(values, order, -1)])


def test_sort_weak_types():
  weak = lambda x: ew.convert_element_type(x, x.dtype, weak_type=True)
  x = np.ones((3, 4), np.float32)
  avals = xjax.make_jaxpr(lambda x: srt.sort((weak(x), x), 0))(x).out_avals
  assert [a.weak_type for a in avals] == [True, False]
  assert xjax.jit(lambda x: srt.sort(weak(x)))(x).weak_type


# ----------------------------------------------------------------------------
# top_k


def _np_top_k(x, k, axis):
  """Largest first in the order NaN > inf > ... > 0.0 > -0.0 > ...; ties by lower index."""
  x = np.moveaxis(x, axis, -1)
  rows = x.reshape(-1, x.shape[-1])
  values = np.empty((rows.shape[0], k), x.dtype)
  indices = np.empty((rows.shape[0], k), np.int32)
  for r, row in enumerate(rows):
    def key(i):
      v = row[i]
      if row.dtype.kind in "biu":
        return (-int(v), i)
      v = float(v)
      return (0 if np.isnan(v) else 1, 0.0 if np.isnan(v) else -v, int(np.signbit(v)), i)
    order = sorted(range(len(row)), key=key)[:k]
    values[r], indices[r] = row[order], order
  shape = (*x.shape[:-1], k)
  return (np.moveaxis(values.reshape(shape), -1, axis),
          np.moveaxis(indices.reshape(shape), -1, axis))


TOP_K_CASES = [((5,), 2, -1), ((5,), 5, 0), ((5,), 0, 0), ((1,), 1, 0), ((3, 4), 3, 0),
               ((3, 4), 2, 1), ((2, 3, 4), 2, 1), ((0, 3), 2, 1), ((30,), 7, 0)]


@pytest.mark.parametrize("dtype,shape,k,axis",
                         cases(FLOATS + INTS + BOOL, TOP_K_CASES, [((3, 4), 2, 1), ((30,), 7, 0)]))
def test_top_k_matches_reference(dtype, shape, k, axis, rng):
  x = rand(rng, shape, dtype)
  check(lambda x: srt.top_k(x, k, axis=axis), (x,), list(_np_top_k(x, k, axis)))


def test_top_k_nan_first_and_negative_zero_below_zero():
  values, indices = srt.top_k(np.array([3.0, np.nan, 1.0, 3.0, -np.inf], np.float32), 3)
  np.testing.assert_array_equal(values, [np.nan, 3.0, 3.0])
  np.testing.assert_array_equal(indices, [1, 0, 3])
  values, indices = srt.top_k(np.array([0.0, -0.0, 0.0, -0.0], np.float32), 4)
  np.testing.assert_array_equal(indices, [0, 2, 1, 3])


def test_top_k_weak_types():
  weak = lambda x: ew.convert_element_type(x, x.dtype, weak_type=True)
  avals = xjax.make_jaxpr(lambda x: srt.top_k(weak(x), 2))(np.ones((3, 4), np.float32)).out_avals
  assert [a.weak_type for a in avals] == [True, True]  # both, as in JAX


# ----------------------------------------------------------------------------
# Printed params (real JAX's goldens) and errors (real JAX 0.10.2's texts)


def _golden(case):
  with open(GOLDEN) as f:
    return json.load(f)["cases"][case]["text"]


def _params(text, prim):
  match = re.search(rf"\b{prim}\[[^\]]*\]", text)
  assert match, text
  return match.group(0)


def test_sort_params_match_jax():
  x = np.zeros(4, np.float32)
  text = str(xjax.make_jaxpr(lambda x: srt.sort(x))(x))
  assert _params(text, "sort") == _params(_golden("sort"), "sort")
  assert "b:f32[4] = sort[dimension=0 is_stable=True num_keys=1] a" in _golden("sort")
  assert "b:f32[4] = sort[dimension=0 is_stable=True num_keys=1] a" in text
  iota = np.arange(4, dtype=np.int32)
  text = str(xjax.make_jaxpr(lambda x, i: srt.sort((x, i), 0, num_keys=1))(x, iota))
  assert _params(text, "sort") == _params(_golden("argsort"), "sort")


def test_top_k_jaxpr_matches_jax():
  text = str(xjax.make_jaxpr(lambda x: srt.top_k(x, 2))(np.zeros(5, np.float32)))
  assert text == _golden("top_k")


def test_sort_printed_params_other_settings():
  x = np.zeros((2, 3), np.float32)
  assert str(xjax.make_jaxpr(lambda x: srt.sort((x, x), 1, num_keys=2, is_stable=False))(x)) == (
      "{ lambda ; a:f32[2,3]. let\n"
      "    b:f32[2,3] c:f32[2,3] = sort[dimension=1 is_stable=False num_keys=2] a a\n"
      "  in (b, c) }")


x23 = np.arange(6, dtype=np.float32).reshape(2, 3)
ERRORS = [
    (lambda: srt.sort(np.float32(3)), ValueError,
     "axis -1 is out of bounds for array of dimension 0"),
    (lambda: srt.sort([np.zeros(3), np.zeros(4)]), TypeError,
     "Arguments to sort must have equal shapes, got: (3,) (4,)"),
    (lambda: srt.sort([np.zeros(3), np.zeros(3)], num_keys=3), ValueError,
     "num_keys=3 must be between 1 and len(operand)=2"),
    (lambda: srt.sort(np.zeros(3), num_keys=2), ValueError,
     "num_keys=2 must equal 1 for a single operand."),
    (lambda: srt.sort([]), TypeError, "Sort requires at least one operand"),
    (lambda: srt.sort(np.zeros(3), dimension=1), ValueError,
     "axis 1 is out of bounds for array of dimension 1"),
    (lambda: srt.sort_key_val(np.array([3, 1]), 5), TypeError,
     "Arguments to sort must have equal shapes, got: (2,) ()"),
    (lambda: srt.top_k(np.array([3.0, 1.0]), -1), ValueError,
     "k argument to top_k must be nonnegative, got -1"),
    (lambda: srt.top_k(np.array([3.0, 1.0]), 3), ValueError,
     "k argument to top_k must be no larger than size along axis; got k=3 with shape=[2] and "
     "axis=0"),
    (lambda: srt.top_k(np.float32(3), 1), ValueError,
     "axis -1 is out of bounds for array of dimension 0"),
    (lambda: srt.top_k(np.array([3.0, 1.0], np.complex64), 1), ValueError,
     "top_k is not compatible with complex inputs."),
    (lambda: srt.top_k(x23, 1, axis=2), ValueError,
     "axis 2 is out of bounds for array of dimension 2"),
]


@pytest.mark.parametrize("thunk,exc,message", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_match_jax(thunk, exc, message):
  with pytest.raises(exc) as info:
    thunk()
  assert str(info.value) == message
