"""Structural lax primitives (transpose, squeeze, expand_dims, rev, pad, concatenate,
iota) and the helpers over them, against NumPy and real JAX 0.10.2's output.

Each case runs eagerly and under `xjax.jit` (the results must be identical),
is compared with NumPy, and its abstract eval is compared with the computed
result (shape, dtype, weak type). Printed jaxprs and error messages are what
real JAX 0.10.2 prints and raises.
"""
import json
import os

import ml_dtypes
import numpy as np
import pytest

import xjax
from xjax._src import core
from xjax._src.lax import structural as S

GOLDEN = os.path.join(os.path.dirname(__file__), os.pardir, "golden", "jaxprs.json")

bf16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.dtype(t) for t in (np.float32, np.float16, np.int32, np.uint8, np.bool_,
                                np.complex64)] + [bf16]


def rand(rng, shape, dtype):
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return rng.random(shape) < 0.5
  if dtype.kind in "iu":
    return rng.integers(0 if dtype.kind == "u" else -100, 100, size=shape).astype(dtype)
  x = rng.uniform(-3, 3, size=shape)
  if dtype.kind == "c":
    x = x + 1j * rng.uniform(-3, 3, size=shape)
  return x.astype(dtype)


def _bits(x):
  """`x` as NumPy data compared exactly (bfloat16 by its bits)."""
  x = np.asarray(x)
  return x.view(np.uint16) if x.dtype == bf16 else x


def check(fun, args, expected):
  """`fun(*args)` eagerly and under jit equals `expected` exactly; abstract eval agrees."""
  eager = fun(*args)
  jitted = xjax.jit(fun)(*args)
  expected = np.asarray(expected)
  for out in (eager, jitted):
    assert isinstance(out, xjax.Array), type(out)
    assert out.dtype == expected.dtype and out.shape == expected.shape, (out, expected)
    np.testing.assert_array_equal(_bits(out), _bits(expected))
  out_aval, = xjax.make_jaxpr(fun)(*args).out_avals
  assert out_aval == core.get_aval(eager) == core.get_aval(jitted)
  return eager


def weak(shape, value=1.0):
  """A weakly typed float32 Array of `shape`."""
  out = S.full(shape, value)
  assert out.weak_type
  return out


# ----------------------------------------------------------------------------
# transpose

TRANSPOSE_CASES = [((), ()), ((0,), (0,)), ((1,), (0,)), ((2, 3), (1, 0)), ((2, 0, 3), (2, 0, 1)),
                   ((2, 3, 4), (1, 2, 0)), ((1, 1), (1, 0))]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape,perm", TRANSPOSE_CASES, ids=str)
def test_transpose_matches_numpy(shape, perm, dtype, rng):
  x = rand(rng, shape, dtype)
  check(lambda x: S.transpose(x, perm), (x,), np.transpose(x, perm))


def test_transpose_keeps_weak_type_and_skips_identity():
  x = weak((2, 3))
  assert S.transpose(x, (1, 0)).weak_type
  assert S.transpose(x, (0, 1)) is x
  assert str(xjax.make_jaxpr(lambda x: S.transpose(x, [0, 1]))(x)) == \
      "{ lambda ; a:f32[2,3]. let  in (a,) }"


# ----------------------------------------------------------------------------
# squeeze, expand_dims

SQUEEZE_CASES = [((1,), (0,)), ((3, 1), (1,)), ((3, 1), (-1,)), ((1, 0, 1), (0, 2)),
                 ((1, 1), (0, 1)), ((2, 3), ())]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape,dims", SQUEEZE_CASES, ids=str)
def test_squeeze_matches_numpy(shape, dims, dtype, rng):
  x = rand(rng, shape, dtype)
  check(lambda x: S.squeeze(x, dims), (x,), np.squeeze(x, dims))


EXPAND_CASES = [((), (0,)), ((3,), (0, 2)), ((3,), (-1,)), ((2, 0), (1,)), ((2, 3), (0, 3, -1))]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape,dims", EXPAND_CASES, ids=str)
def test_expand_dims_matches_numpy(shape, dims, dtype, rng):
  x = rand(rng, shape, dtype)
  check(lambda x: S.expand_dims(x, dims), (x,), np.expand_dims(x, dims))


def test_expand_dims_is_a_broadcast_in_dim_as_in_jax():
  text = str(xjax.make_jaxpr(lambda x: S.expand_dims(x, (0,)))(np.ones((2, 3), np.float32)))
  assert text == ("{ lambda ; a:f32[2,3]. let\n"
                  "    b:f32[1,2,3] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a\n"
                  "  in (b,) }")


def test_squeeze_and_expand_dims_keep_weak_type():
  assert S.squeeze(weak((3, 1)), (1,)).weak_type
  assert S.expand_dims(weak((3,)), (1,)).weak_type


# ----------------------------------------------------------------------------
# rev

REV_CASES = [((), ()), ((0,), (0,)), ((1,), (0,)), ((5,), (0,)), ((2, 3), (1,)),
             ((2, 3, 4), (0, 2)), ((2, 3), ())]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape,dims", REV_CASES, ids=str)
def test_rev_matches_numpy(shape, dims, dtype, rng):
  x = rand(rng, shape, dtype)
  check(lambda x: S.rev(x, dims), (x,), np.flip(x, dims) if dims else x)


# ----------------------------------------------------------------------------
# pad


def np_pad(x, value, config):
  """NumPy reference for lax.pad: interior padding, then (possibly negative) edges."""
  for axis, (lo, hi, interior) in enumerate(config):
    n = x.shape[axis]
    size = n + max(n - 1, 0) * interior
    shape = list(x.shape)
    shape[axis] = size
    out = np.full(shape, value, x.dtype)
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(0, size, interior + 1)
    out[tuple(idx)] = x
    before = [(0, 0)] * x.ndim
    before[axis] = (max(lo, 0), max(hi, 0))
    out = np.pad(out, before, constant_values=np.asarray(value, x.dtype))
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(max(-lo, 0), out.shape[axis] - max(-hi, 0))
    x = out[tuple(idx)]
  return x


PAD_CASES = [
    ((), ()),
    ((0,), ((1, 2, 0),)),
    ((0,), ((1, 1, 3),)),
    ((1,), ((0, 0, 5),)),
    ((4,), ((1, 2, 1),)),
    ((4,), ((-1, -2, 0),)),
    ((4,), ((-2, 3, 2),)),
    ((2, 3), ((1, 0, 0), (0, 2, 1))),
    ((2, 3), ((-1, 1, 1), (2, -3, 0))),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape,config", PAD_CASES, ids=str)
def test_pad_matches_numpy(shape, config, dtype, rng):
  x = rand(rng, shape, dtype)
  value = rand(rng, (), dtype)
  check(lambda x, v: S.pad(x, v, config), (x, value), np_pad(x, value, config))


def test_pad_weak_type_needs_both_weak():
  assert S.pad(weak((2,)), 0.0, ((1, 1, 0),)).weak_type
  assert not S.pad(weak((2,)), np.float32(0), ((1, 1, 0),)).weak_type
  assert not S.pad(np.ones(2, np.float32), 0.0, ((1, 1, 0),)).weak_type


def test_pad_keeps_the_users_config_values_in_the_jaxpr():
  config = ((np.int64(1), 2, 0), (0, 0, 1))
  text = str(xjax.make_jaxpr(lambda x: S.pad(x, 0.0, config))(np.ones((2, 3), np.float32)))
  assert text == ("{ lambda ; a:f32[2,3]. let\n"
                  "    b:f32[5,5] = pad[padding_config=((np.int64(1), 2, 0), (0, 0, 1))] a "
                  "0.0:f32[]\n"
                  "  in (b,) }")


# ----------------------------------------------------------------------------
# concatenate

CONCAT_CASES = [([(3,)], 0), ([(2,), (3,)], 0), ([(0,), (2,)], 0), ([(0,), (0,)], 0),
                ([(2, 3), (2, 1), (2, 0)], 1), ([(1, 2), (3, 2)], 0), ([(1,), (1,), (1,)], 0)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shapes,dim", CONCAT_CASES, ids=str)
def test_concatenate_matches_numpy(shapes, dim, dtype, rng):
  xs = [rand(rng, s, dtype) for s in shapes]
  check(lambda *xs: S.concatenate(xs, dim), xs, np.concatenate(xs, dim))


def test_concatenate_is_weak_only_if_all_operands_are():
  assert S.concatenate([weak((2,)), weak((1,))], 0).weak_type
  assert not S.concatenate([weak((2,)), np.ones(1, np.float32)], 0).weak_type


def test_concatenate_of_one_array_returns_it():
  x = weak((2,))
  assert S.concatenate([x], 0) is x


# ----------------------------------------------------------------------------
# iota, broadcasted_iota

IOTA_DTYPES = [d for d in DTYPES if d != np.bool_]


@pytest.mark.parametrize("dtype", IOTA_DTYPES, ids=str)
@pytest.mark.parametrize("shape,dim", [((0,), 0), ((1,), 0), ((5,), 0), ((2, 3), 0),
                                       ((2, 3), 1), ((2, 0, 4), 2)], ids=str)
def test_broadcasted_iota_matches_numpy(shape, dim, dtype):
  expected = np.broadcast_to(
      np.arange(shape[dim]).reshape([-1 if i == dim else 1 for i in range(len(shape))]),
      shape).astype(dtype)
  out = check(lambda: S.broadcasted_iota(dtype, shape, dim), (), expected)
  assert not out.weak_type


def test_iota_is_a_vector():
  np.testing.assert_array_equal(np.asarray(S.iota(np.int32, 4)), np.arange(4, dtype=np.int32))
  assert S.iota(np.float64, 2).dtype == np.float32  # canonicalized without x64


def test_iota_prints_like_jax():
  text = str(xjax.make_jaxpr(lambda: S.iota(np.int32, 4))())
  assert text == ("{ lambda ; . let\n"
                  "    a:i32[4] = iota[dimension=0 dtype=int32 shape=(4,) sharding=None] \n"
                  "  in (a,) }")


# ----------------------------------------------------------------------------
# full, full_like, collapse, broadcast_to_rank


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (2, 3)], ids=str)
def test_full_matches_numpy(shape, dtype):
  check(lambda: S.full(shape, 1, dtype), (), np.full(shape, 1, dtype))


def test_full_weak_types_follow_jax():
  assert S.full((2,), 1.0).weak_type                  # a Python scalar: weak
  assert S.full((), 1.0).weak_type
  assert not S.full((2,), 1.0, np.float32).weak_type   # an explicit dtype: strong
  assert not S.full((2,), np.float32(1)).weak_type
  assert repr(S.full((), 1.0)) == "Array(1., dtype=float32, weak_type=True)"


def test_full_like_follows_jax():
  assert repr(S.full_like(np.ones(2, np.int32), 2.7)) == "Array([2, 2], dtype=int32)"
  assert repr(S.full_like(2.0, 3)) == "Array(3., dtype=float32, weak_type=True)"
  assert S.full_like(weak((2,)), 1).weak_type
  assert not S.full_like(weak((2,)), 1, np.float32).weak_type
  assert S.full_like(np.ones((2, 3), np.float32), 0, shape=(4,)).shape == (4,)


def test_full_prints_like_jax():
  text = str(xjax.make_jaxpr(lambda x: (S.full((2, 3), 1.0), S.full_like(x, 2), S.full((), 1.0)))(
      np.ones((2, 3), np.float32)))
  assert text == ("{ lambda ; a:f32[2,3]. let\n"
                  "    b:f32[2,3] = broadcast_in_dim 1.0:f32[]\n"
                  "    c:f32[2,3] = broadcast_in_dim 2.0:f32[]\n"
                  "  in (b, c, 1.0:f32[]) }")


@pytest.mark.parametrize("start,stop,shape", [(0, None, (24,)), (1, None, (2, 12)), (0, 2, (6, 4)),
                                              (-2, -1, (2, 3, 4)), (1, 1, (2, 1, 3, 4))], ids=str)
def test_collapse_matches_numpy(start, stop, shape, rng):
  x = rand(rng, (2, 3, 4), np.float32)
  check(lambda x: S.collapse(x, start, stop), (x,), x.reshape(shape))


def test_broadcast_to_rank_adds_leading_dims():
  out = S.broadcast_to_rank(np.ones(3, np.float64), 3)
  assert out.shape == (1, 1, 3) and out.dtype == np.float32
  assert repr(S.broadcast_to_rank(2.0, 2)) == "Array([[2.]], dtype=float32, weak_type=True)"
  assert isinstance(S.broadcast_to_rank(np.ones(3), 1), xjax.Array)


# ----------------------------------------------------------------------------
# Printed jaxprs against the goldens recorded from real JAX

with open(GOLDEN) as _f:
  _GOLDEN_CASES = json.load(_f)["cases"]


@pytest.mark.parametrize("case_id,fun,args", [
    ("transpose", lambda x: S.transpose(x, (1, 0)), (np.ones((2, 3), np.float32),)),
    ("transpose_axes", lambda x: S.transpose(x, (1, 2, 0)), (np.ones((2, 3, 4), np.float32),)),
    ("squeeze", lambda x: S.squeeze(x, (1,)), (np.ones((3, 1), np.float32),)),
    ("concatenate", lambda x, y: S.concatenate([x, y], 0),
     (np.ones(2, np.float32), np.ones(3, np.float32))),
], ids=lambda v: v if isinstance(v, str) else "")
def test_jaxpr_matches_golden(case_id, fun, args):
  assert str(xjax.make_jaxpr(fun)(*args)) == _GOLDEN_CASES[case_id]["text"]


def test_pad_eqn_matches_golden():
  # The golden goes through jnp.pad (a jit of convert + pad); its pad equation is ours.
  golden = _GOLDEN_CASES["pad"]["text"]
  eqn = next(line.strip() for line in golden.splitlines() if "pad[" in line)
  config = ((np.int64(1), np.int64(2), 0),)
  text = str(xjax.make_jaxpr(lambda x: S.pad(x, np.float32(0), config))(np.ones(3, np.float32)))
  ours = next(line.strip() for line in text.splitlines() if "pad[" in line)
  assert ours.replace("0.0:f32[]", "d") == eqn


# ----------------------------------------------------------------------------
# Errors: JAX 0.10.2's classes and messages

x23 = np.ones((2, 3), np.float32)
y31 = np.ones((3, 1), np.float32)
v5 = np.arange(5, dtype=np.float32)

ERRORS = [
    (lambda: S.squeeze(y31, (0,)), ValueError,
     "cannot select an axis to squeeze out which has size not equal to one, got shape=(3, 1) "
     "and dimensions=(0,)"),
    (lambda: S.squeeze(y31, (2,)), ValueError, "axis 2 is out of bounds for array of dimension 2"),
    (lambda: S.expand_dims(y31, (0, 0)), ValueError, "repeated axis in lax.expand_dims: (0, 0)"),
    (lambda: S.expand_dims(y31, (5,)), ValueError,
     "axis 5 is out of bounds for array of dimension 3"),
    (lambda: S.rev(y31, (0, 0)), TypeError, "rev dimensions must be unique, got (0, 0)."),
    (lambda: S.rev(y31, (2,)), TypeError,
     "rev dimensions must all be less than operand ndim, got dimensions (2,) for operand ndim 2."),
    (lambda: S.rev(y31, (-1,)), TypeError,
     "rev dimensions must have every element be nonnegative, got (-1,)."),
    (lambda: S.pad(y31, np.float16(0), ((0, 0, 0), (0, 0, 0))), TypeError,
     "pad operand and padding_value must be same dtype: got float32 and float16."),
    (lambda: S.pad(y31, np.zeros(2, np.float32), ((0, 0, 0), (0, 0, 0))), ValueError,
     "padding_value must be a scalar; got np.shape(padding_value)=(2,)"),
    (lambda: S.pad(y31, np.float32(0), ((0, 0, 0),)), ValueError,
     "length of padding_config must equal the number of axes of operand, got padding_config "
     "((0, 0, 0),) for operand shape (3, 1)"),
    (lambda: S.pad(y31, np.float32(0), ((0, 0, -1), (0, 0, 0))), ValueError,
     "interior padding in padding_config must be nonnegative, got padding_config "
     "((0, 0, -1), (0, 0, 0))"),
    (lambda: S.pad(y31, np.float32(0), ((-5, 0, 0), (0, 0, 0))), ValueError,
     "Dimension size after padding is not at least 0, got result shape (-2, 1), for "
     "padding_config ((-5, 0, 0), (0, 0, 0)) and operand shape (3, 1)"),
    (lambda: S.iota(bool, 3), TypeError,
     "iota does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, "
     "complexfloating."),
    (lambda: S.broadcasted_iota(np.int32, (2, 3), 2), ValueError,
     "iota dimension must be between 0 and len(shape), got dimension=2 for shape=(2, 3)"),
    (lambda: S.iota(np.int32, -1), TypeError,
     "iota shape must have every element be nonnegative, got (-1,)."),
    (lambda: S.full((2,), np.ones(2)), TypeError,
     "full must be called with scalar fill_value, got fill_value.shape (2,)."),
    (lambda: S.concatenate([], 0), ValueError,
     "concatenate requires a non-empty sequences of arrays"),
    (lambda: S.concatenate([x23, x23.astype(np.int32)], 0), TypeError,
     "lax.concatenate requires arguments to have the same dtypes, got float32, int32. (Tip: "
     "jnp.concatenate is a similar function that does automatic type promotion on inputs)."),
    (lambda: S.concatenate([x23, v5], 0), TypeError,
     "Cannot concatenate arrays with different numbers of dimensions: got (2, 3), (5,)."),
    (lambda: S.concatenate([x23, x23], 2), TypeError,
     "concatenate dimension out of bounds: dimension 2 for shapes (2, 3), (2, 3)."),
    (lambda: S.concatenate([np.ones((2, 3)), np.ones((2, 4))], 0), TypeError,
     "Cannot concatenate arrays with shapes that differ in dimensions other than the one being "
     "concatenated: concatenating along dimension 0 for shapes (2, 3), (2, 4)."),
    (lambda: S.transpose(x23, (0,)), TypeError,
     "transpose permutation isn't a permutation of operand dimensions, got permutation (0,) for "
     "operand shape (2, 3)."),
    (lambda: S.transpose(x23, (0, 0)), TypeError,
     "transpose permutation isn't a permutation of operand dimensions, got permutation (0, 0) for "
     "operand shape (2, 3)."),
    (lambda: S.collapse(x23, 1, 0), ValueError,
     "Invalid dimension range passed to collapse: (2, 3)[1:0]"),
]


@pytest.mark.parametrize("thunk,exc,message", ERRORS, ids=[e[2][:60] for e in ERRORS])
def test_errors_match_jax(thunk, exc, message):
  with pytest.raises(exc) as info:
    thunk()
  assert str(info.value) == message


def test_errors_are_raised_under_jit_too():
  with pytest.raises(TypeError, match="transpose permutation isn't a permutation"):
    xjax.jit(lambda x: S.transpose(x, (0, 0)))(x23)
