"""The stand-ins for JAX's lax test infrastructure: `lax_reference` (NumPy models of the lax
operations) agrees with xjax.lax on small inputs, and `lax_test_util`'s tables are well
formed (every record names an operation both xjax.lax and lax_reference provide, with the
arity they take) and follow jax_enable_x64."""
import inspect

import ml_dtypes
import numpy as np
import pytest

import xjax
import xjax.lax as lax
from xjax._src.jax_compat.private import lax_reference as ref
from xjax._src.jax_compat.private.internal_test_util import lax_test_util as ltu

_NARROW = (np.float16, ml_dtypes.bfloat16)


def _rng(seed=0):
  return np.random.RandomState(seed)


def _close(actual, expected, rtol=1e-5, atol=1e-5):
  actual, expected = np.asarray(actual), np.asarray(expected)
  assert actual.shape == expected.shape, (actual.shape, expected.shape)
  assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
  if actual.dtype in (np.dtype(d) for d in _NARROW):
    actual, expected, rtol, atol = actual.astype(np.float32), expected.astype(np.float32), 2e-2, 2e-2
  np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------------------
# lax_test_util's tables.

def _arity(fn):
  if isinstance(fn, np.ufunc):
    return fn.nin
  params = inspect.signature(fn).parameters.values()
  return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
             for p in params)


def test_op_records_name_operations_of_their_arity():
  records = ltu.lax_ops() + ltu.lax_out_dtype_ops()
  assert len(ltu.lax_ops()) == 69
  known = {np.dtype(d) for d in ltu.all_dtypes}
  for rec in records:
    assert callable(getattr(lax, rec.op)), rec.op
    assert _arity(getattr(ref, rec.op)) == rec.nargs, rec.op
    assert rec.dtypes and {np.dtype(d) for d in rec.dtypes} <= known, rec.op
    assert callable(rec.rng_factory) and rec.rng_factory.__name__.startswith("rand_")
    assert rec.tol is None or rec.tol == 0 or all(np.dtype(k).kind in "fc" for k in rec.tol)


def test_an_op_records_argument_maker_draws_the_dtype_asked_for():
  rec = next(r for r in ltu.lax_ops() if r.op == "log")
  x = rec.rng_factory(_rng())((2, 3), np.float32)
  assert x.shape == (2, 3) and x.dtype == np.float32 and (x > 0).all()


def test_reducer_records_pair_a_lax_monoid_with_its_identity():
  for rec in ltu.lax_reduce_ops():
    assert rec.primitive.name.startswith("reduce_"), rec.primitive
    assert isinstance(rec.reference_op, np.ufunc) and rec.op.__name__ in (
        "add", "mul", "max", "min", "bitwise_and", "bitwise_or", "bitwise_xor")
    for dtype in rec.dtypes:
      init = np.asarray(rec.init_val).astype(dtype)
      if dtype != np.bool_ and rec.reference_op not in (np.maximum, np.minimum):
        assert rec.reference_op(init, np.asarray(3, dtype)) == 3, (rec.op, dtype)
  for rec in ltu.lax_named_reduce_ops():
    assert getattr(lax, rec.op.__name__) is rec.op and rec.dtypes


def test_dtype_lists_leave_out_64_bit_types_without_x64():
  assert ltu.default_dtypes == ltu.float_dtypes + ltu.int_dtypes
  assert ltu.all_dtypes == (ltu.float_dtypes + ltu.complex_dtypes + ltu.int_dtypes
                            + ltu.uint_dtypes + ltu.bool_dtypes)
  assert ltu.float_dtypes[:2] == [ml_dtypes.bfloat16, np.float16]
  wide = {np.int64, np.uint64, np.float64, np.complex128}
  with xjax._src.config.enable_x64(False):
    assert not wide & set(ltu._available(np.int32, *wide))
  with xjax._src.config.enable_x64(True):
    assert set(ltu._available(np.int32, *wide)) == wide | {np.int32}


def test_batching_helpers():
  assert list(ltu.all_bdims((2, 3), ())) == [
      (None, 0), (0, None), (0, 0), (1, None), (1, 0), (2, None), (2, 0)]
  assert ltu.add_bdim(5, 1, (2, 3)) == (2, 5, 3) and ltu.add_bdim(5, None, [2]) == (2,)
  x = np.arange(6).reshape(2, 3)
  first, second = ltu.args_slicer([x, 7], (1, None))(2)
  np.testing.assert_array_equal(first, [2, 5])
  assert second == 7


# ---------------------------------------------------------------------------------------
# lax_reference against xjax.lax.

def test_conv_general_dilated_with_layouts_and_dilation():
  lhs, rhs = _rng().randn(1, 6, 5, 2).astype(np.float32), _rng(1).randn(2, 3, 2, 3).astype(np.float32)
  args = ((2, 1), [(1, 0), (0, 2)], (1, 2), (2, 1), ("NHWC", "HWIO", "NHWC"))
  _close(lax.conv_general_dilated(lhs, rhs, *args), ref.conv_general_dilated(lhs, rhs, *args))


def test_conv_with_same_padding():
  lhs, rhs = _rng().randn(1, 2, 5, 4).astype(np.float32), _rng(1).randn(2, 2, 3, 2).astype(np.float32)
  _close(lax.conv(lhs, rhs, (2, 1), "SAME"), ref.conv(lhs, rhs, (2, 1), "SAME"))


def test_padtype_to_pads():
  assert ref.padtype_to_pads((9, 8), (3, 2), (2, 3), "SAME") == [(1, 1), (0, 0)]
  assert ref.padtype_to_pads((8,), (3,), (2,), "SAME") == [(0, 1)]
  assert ref.padtype_to_pads((4,), (3,), (1,), "SAME_LOWER") == [(1, 1)]
  assert ref.padtype_to_pads((4,), (2,), (1,), "same_lower") == [(1, 0)]
  assert ref.padtype_to_pads((9, 8), (3, 2), (2, 3), "VALID") == [(0, 0), (0, 0)]


def test_dot_general_with_batch_and_contracting_axes():
  x, y = _rng().randn(2, 3, 4).astype(np.float32), _rng(1).randn(4, 2, 5).astype(np.float32)
  dims = (((2,), (0,)), ((0,), (1,)))
  _close(lax.dot_general(x, y, dims), ref.dot_general(x, y, dims))


def test_dot_general_of_bfloat16_keeps_the_dtype():
  x = np.arange(6, dtype=np.float32).reshape(2, 3).astype(ml_dtypes.bfloat16)
  out = ref.dot_general(x, x, (((1,), (1,)), ((), ())))
  assert out.dtype == ml_dtypes.bfloat16
  np.testing.assert_array_equal(out.astype(np.float32), [[5, 14], [14, 50]])


def test_ragged_dot():
  lhs, rhs = _rng().randn(7, 3).astype(np.float32), _rng(1).randn(3, 3, 2).astype(np.float32)
  sizes = np.array([2, 0, 4], np.int32)  # the last row belongs to no group: zeros
  expected = ref.ragged_dot(lhs, rhs, sizes)
  np.testing.assert_array_equal(expected[6], [0, 0])
  _close(lax.ragged_dot(lhs, rhs, sizes), expected)


@pytest.mark.parametrize("computation, init", [(lax.add, 0.0), (lax.max, -np.inf)])
def test_reduce_window_with_padding_and_base_dilation(computation, init):
  x = _rng().randn(4, 5).astype(np.float32)
  init = np.float32(init)
  args = ((2, 2), (1, 2), [(0, 2), (1, 1)], (2, 1))
  _close(lax.reduce_window(x, init, computation, *args),
         ref.reduce_window(x, init, computation, *args))


def test_reduce_window_with_a_non_identity_init_folds_it_in():
  x = np.arange(6, dtype=np.float32).reshape(2, 3)
  out = ref.reduce_window(x, np.float32(10), lax.add, (1, 2), (1, 1), "VALID", ())
  np.testing.assert_array_equal(out, [[11, 13], [17, 19]])


def test_reduce_uses_the_monoid_or_folds_the_computation():
  x = np.arange(12, dtype=np.int32).reshape(3, 4)
  np.testing.assert_array_equal(ref.reduce(x, np.int32(0), lax.add, (0,)), x.sum(0))
  np.testing.assert_array_equal(ref.reduce(x, np.int32(1), lax.add, (1,)), x.sum(1) + 1)
  np.testing.assert_array_equal(ref.reduce(x, np.int32(0), lax.bitwise_or, (0, 1)), 15)


def test_pad_with_negative_and_interior_padding():
  x = _rng().randn(3, 4).astype(np.float32)
  config = [(-1, 2, 1), (2, -3, 0)]
  _close(lax.pad(x, np.float32(9), config), ref.pad(x, np.float32(9), config))
  assert ref.pad(np.zeros((0,)), 1.0, [(1, 1, 3)]).tolist() == [1.0, 1.0]


def test_sort_and_sort_key_val():
  keys = np.array([[3, 1, 2, 1], [0, 5, 5, 4]], np.int32)
  values = np.arange(8, dtype=np.float32).reshape(2, 4)
  got_keys, got_values = lax.sort_key_val(keys, values, dimension=1)
  want_keys, want_values = ref.sort_key_val(keys, values, 1)
  np.testing.assert_array_equal(got_keys, want_keys)
  np.testing.assert_array_equal(got_values, want_values)  # stable among equal keys
  np.testing.assert_array_equal(ref.sort(keys, 0), np.sort(keys, 0))


def test_top_k_takes_equal_values_in_index_order():
  x = np.array([[1, 3, 3, 2, 3], [5, 4, 4, 4, 0]], np.int32)
  values, indices = lax.top_k(x, 3)
  want_values, want_indices = ref.top_k(x, 3)
  assert want_indices.dtype == np.int32
  np.testing.assert_array_equal(want_indices, [[1, 2, 4], [0, 1, 2]])
  np.testing.assert_array_equal(values, want_values)
  np.testing.assert_array_equal(indices, want_indices)
  _, along_0 = ref.top_k(np.array([[1, 2], [1, 3], [0, 3]]), 2, axis=0)
  np.testing.assert_array_equal(along_0, [[0, 1], [1, 2]])


def test_dynamic_slice_clamps_its_start_like_lax():
  x = np.arange(20, dtype=np.float32).reshape(4, 5)
  for starts in [(1, 2), (3, 4), (-1, 0), (-9, -2)]:
    np.testing.assert_array_equal(lax.dynamic_slice(x, starts, (2, 3)),
                                  ref.dynamic_slice(x, starts, (2, 3)))


def test_dynamic_update_slice():
  x, update = np.zeros((3, 4), np.int32), np.ones((2, 2), np.int32)
  for starts in [(1, 1), (2, 3), (-1, -3)]:
    np.testing.assert_array_equal(lax.dynamic_update_slice(x, update, starts),
                                  ref.dynamic_update_slice(x, update, starts))


def test_structural_ops():
  x = np.arange(6, dtype=np.float32).reshape(2, 3)
  np.testing.assert_array_equal(ref.broadcast_in_dim(x, (2, 4, 3), (0, 2)),
                                np.broadcast_to(x[:, None, :], (2, 4, 3)))
  assert ref.broadcast(x, (5,)).shape == (5, 2, 3)
  np.testing.assert_array_equal(ref.reshape(x, (3, 2), (1, 0)), x.T.reshape(3, 2))
  np.testing.assert_array_equal(ref.slice(x, (0, 1), (2, 3), (1, 2)), x[:, 1:3:2])
  np.testing.assert_array_equal(ref.rev(x, (1,)), x[:, ::-1])
  np.testing.assert_array_equal(ref.clamp(np.float32(1), x, np.float32(3)), np.clip(x, 1, 3))
  np.testing.assert_array_equal(ref.clamp(np.float32(4), x, np.float32(3)), np.full((2, 3), 3.0))


def test_bitcast_convert_type():
  x = np.array([1.0, -2.5], np.float32)
  as_u8 = ref.bitcast_convert_type(x, np.uint8)
  assert as_u8.shape == (2, 4)
  np.testing.assert_array_equal(as_u8, lax.bitcast_convert_type(x, np.uint8))
  np.testing.assert_array_equal(ref.bitcast_convert_type(as_u8, np.float32), x)
  assert ref.bitcast_convert_type(np.float32(1), ml_dtypes.bfloat16).shape == (2,)
  nibbles = ref.bitcast_convert_type(np.array([0x2F], np.uint8), ml_dtypes.int4)
  np.testing.assert_array_equal(nibbles.astype(np.int8), [[-1, 2]])
  np.testing.assert_array_equal(ref.bitcast_convert_type(nibbles, np.uint8), [0x2F])


def test_bit_counts_of_negative_integers():
  x = np.array([0, 1, -1, -128, 127, 6], np.int8)
  np.testing.assert_array_equal(ref.population_count(x), [0, 1, 8, 1, 7, 2])
  np.testing.assert_array_equal(ref.clz(x), [8, 7, 0, 0, 1, 5])
  np.testing.assert_array_equal(lax.population_count(x), ref.population_count(x))
  np.testing.assert_array_equal(lax.clz(x), ref.clz(x))


def test_integer_division_and_remainder_truncate_toward_zero():
  lhs = np.array([7, -7, 7, -7, -2147483648, 0], np.int32)
  rhs = np.array([2, 2, -2, -2, 3, -5], np.int32)
  np.testing.assert_array_equal(ref.div(lhs, rhs), lax.div(lhs, rhs))
  np.testing.assert_array_equal(ref.rem(lhs, rhs), lax.rem(lhs, rhs))


def test_mulhi():
  x = np.array([-(2**31), 2**31 - 1, -5, 123456789], np.int32)
  y = np.array([2**31 - 1, 2**31 - 1, 7, -987654321], np.int32)
  want = ((x.astype(np.int64) * y) >> 32).astype(np.int32)
  np.testing.assert_array_equal(ref.mulhi(x, y), want)
  u = np.array([2**64 - 1, 2**63], np.uint64)
  np.testing.assert_array_equal(ref.mulhi(u, u), np.array([2**64 - 2, 2**62], np.uint64))


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_round_takes_halves_away_from_zero(dtype):
  x = np.array([0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, 3.2], np.float32).astype(dtype)
  np.testing.assert_array_equal(ref.round(x), lax.round(x))
  assert ref.round(x).dtype == np.dtype(dtype)


def test_special_functions_keep_the_operand_dtype():
  x = np.array([0.5, 1.5, 3.0], np.float16)
  for name in ("lgamma", "digamma", "erf", "erfc", "bessel_i0e", "bessel_i1e", "logistic"):
    assert getattr(ref, name)(x).dtype == np.float16, name
  _close(ref.lgamma(x.astype(np.float32)), lax.lgamma(x.astype(np.float32)))


def test_complex_and_conj():
  x, y = np.array([1.0, np.inf], np.float32), np.array([2.0, np.inf], np.float32)
  z = ref.complex(x, y)
  assert z.dtype == np.complex64 and z.tolist() == [1 + 2j, complex(np.inf, np.inf)]
  assert ref.conj(np.float64(2.0)).dtype == np.complex128
  np.testing.assert_array_equal(ref.conj(z[:1]), lax.conj(z[:1]))


def test_mul_with_out_dtype():
  x = np.array([100, 100], np.int8)
  out = ref.mul(x, x, out_dtype=np.int32)
  assert out.dtype == np.int32 and out.tolist() == [10000, 10000]
