"""Reductions against NumPy: sum/prod/max/min/mean/var/std/any/all, the nan* family,
arg reductions and cumulative reductions; dtypes, axes, keepdims, where, initial,
0-d and empty inputs, printed jaxprs and errors."""
import warnings

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from jnp_checks import ALL_DTYPES, bf16, check, rand

AXES = [None, 0, 1, -1, (0, 1)]


def _np_sum_dtype(dtype):
  # JAX accumulates integers and bools in the default 32-bit width (NumPy: 64-bit).
  dtype = np.dtype(dtype)
  if dtype == np.bool_ or (dtype.kind == "i" and dtype.itemsize < 4):
    return np.dtype(np.int32)
  if dtype.kind == "u" and dtype.itemsize < 4:
    return np.dtype(np.uint32)
  return dtype


@pytest.mark.parametrize("name", ["sum", "prod"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("axis", AXES)
def test_sum_prod_match_numpy(rng, name, dtype, axis):
  x = rand(rng, (2, 3), dtype, -2, 2)
  tol = 5e-2 if dtype == bf16 else 1e-5
  check(lambda a: getattr(jnp, name)(a, axis=axis), lambda a: getattr(np, name)(a, axis=axis),
        x, dtype=_np_sum_dtype(dtype), tol=tol)
  check(lambda a: getattr(jnp, name)(a, axis=axis, keepdims=True),
        lambda a: getattr(np, name)(a, axis=axis, keepdims=True), x, dtype=_np_sum_dtype(dtype),
        tol=tol)


@pytest.mark.parametrize("name", ["max", "min", "any", "all"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.uint8, bf16])
@pytest.mark.parametrize("axis", AXES)
def test_max_min_any_all_match_numpy(rng, name, dtype, axis):
  x = rand(rng, (2, 3), dtype)
  expected = bf16 if dtype == bf16 and name in ("max", "min") else None
  check(lambda a: getattr(jnp, name)(a, axis=axis), lambda a: getattr(np, name)(a, axis=axis),
        x, dtype=expected)
  check(lambda a: getattr(jnp, name)(a, axis=axis, keepdims=True),
        lambda a: getattr(np, name)(a, axis=axis, keepdims=True), x, dtype=expected)


@pytest.mark.parametrize("shape", [(), (0,), (1,), (2, 0), (0, 3)])
def test_reductions_on_edge_shapes(rng, shape):
  x = rand(rng, shape, np.float32)
  check(jnp.sum, np.sum, x)
  check(jnp.prod, np.prod, x)
  check(jnp.any, np.any, x)
  check(jnp.all, np.all, x)
  if 0 not in shape:
    check(jnp.max, np.max, x)
    check(jnp.argmin, np.argmin, x, dtype=np.int32)
  if len(shape) == 2:
    check(lambda a: jnp.sum(a, axis=1), lambda a: np.sum(a, axis=1), x)
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      check(lambda a: jnp.mean(a, axis=0), lambda a: np.mean(a, axis=0), x)


def test_max_of_empty_raises():
  with pytest.raises(ValueError, match="zero-size array to reduction operation max which has no "
                                       "identity"):
    jnp.max(jnp.zeros(0))
  np.testing.assert_array_equal(jnp.max(jnp.zeros(0), initial=-1.0), -1.0)


def test_where_and_initial_match_numpy(rng):
  x = rand(rng, (3, 4), np.float32)
  m = x > 0
  check(lambda a, w: jnp.sum(a, axis=1, where=w), lambda a, w: np.sum(a, axis=1, where=w), x, m)
  check(lambda a, w: jnp.max(a, initial=-10.0, where=w),
        lambda a, w: np.max(a, initial=-10.0, where=w), x, m)
  check(lambda a: jnp.sum(a, initial=3.0), lambda a: np.sum(a, initial=3.0), x)
  check(lambda a, w: jnp.mean(a, axis=0, where=w), lambda a, w: np.mean(a, axis=0, where=w), x,
        x[0] >= -5)
  with pytest.raises(ValueError, match="reduction operation max does not have an identity"):
    jnp.max(x, where=m)
  with pytest.raises(ValueError, match="where must be None or a boolean array"):
    jnp.sum(x, where=x)


def test_sum_dtype_argument(rng):
  x = rand(rng, (4,), np.int32)
  check(lambda a: jnp.sum(a, dtype=jnp.float32), lambda a: np.sum(a, dtype=np.float32), x)
  check(lambda a: jnp.sum(a, promote_integers=False),
        lambda a: np.sum(a).astype(np.uint8), rand(rng, (4,), np.uint8), dtype=np.uint8)
  with pytest.warns(UserWarning, match="Explicitly requested dtype float64"):
    assert jnp.sum(x, dtype=np.float64).dtype == np.float32


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, bf16, np.complex64])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_mean_var_std_match_numpy(rng, dtype, axis):
  x = rand(rng, (3, 4), dtype)
  inexact = np.dtype(dtype) if np.dtype(dtype).kind in "fc" or dtype == bf16 else np.float32
  real = np.float32 if np.dtype(dtype).kind == "c" else inexact
  tol = 5e-2 if dtype == bf16 else 1e-5
  to_float = lambda a: a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
  check(lambda a: jnp.mean(a, axis=axis), lambda a: np.mean(to_float(a), axis=axis), x,
        dtype=inexact, tol=tol)
  check(lambda a: jnp.var(a, axis=axis), lambda a: np.var(to_float(a), axis=axis), x,
        dtype=real, tol=tol)
  check(lambda a: jnp.std(a, axis=axis, ddof=1), lambda a: np.std(to_float(a), axis=axis, ddof=1),
        x, dtype=real, tol=tol)


def test_var_edge_cases():
  assert np.isnan(jnp.var(jnp.ones(2), ddof=2))
  np.testing.assert_allclose(jnp.std(jnp.arange(5.0), correction=1), np.std(np.arange(5.0), ddof=1),
                             rtol=1e-6)
  with pytest.raises(ValueError, match="only one of correction and ddof"):
    jnp.var(jnp.ones(3), ddof=1, correction=1)
  with pytest.raises(ValueError, match="dtype argument to jnp.std must be inexact"):
    jnp.std(jnp.ones(3), dtype=jnp.int32)


def test_mean_of_integers_is_float_and_reductions_are_strong():
  assert jnp.mean(jnp.arange(4)).dtype == np.float32
  # As in JAX, reductions convert to their result dtype: weak inputs give strong results.
  out = jnp.mean(jnp.asarray(2.0))
  assert out.dtype == np.float32 and not out.weak_type
  assert not jnp.sum(3.0).weak_type


@pytest.mark.parametrize("dtype", [np.float16, bf16])
def test_mean_upcasts_half_floats_only_without_dtype(dtype):
  x = jnp.ones(10, dtype)
  prims = [str(e.primitive) for e in xjax.make_jaxpr(jnp.mean)(x).eqns]
  assert prims == ["convert_element_type", "reduce_sum", "div", "convert_element_type"]
  prims = [str(e.primitive) for e in xjax.make_jaxpr(lambda x: jnp.mean(x, dtype=dtype))(x).eqns]
  assert prims == ["reduce_sum", "div"]
  assert jnp.mean(x, dtype=dtype).dtype == dtype


NAN_FUNCS = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"]


@pytest.mark.parametrize("name", NAN_FUNCS)
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nan_reductions_match_numpy(rng, name, axis):
  x = rand(rng, (3, 4), np.float32)
  x[0, 1] = np.nan
  x[1, 2] = np.nan
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    check(lambda a: getattr(jnp, name)(a, axis=axis), lambda a: getattr(np, name)(a, axis=axis),
          x, tol=1e-5)


def test_nan_reductions_of_all_nan_and_integers():
  x = np.array([[np.nan, np.nan], [1.0, np.nan]], np.float32)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    check(lambda a: jnp.nanmax(a, axis=1), lambda a: np.nanmax(a, axis=1), x)
    check(lambda a: jnp.nanmean(a, axis=1), lambda a: np.nanmean(a, axis=1), x)
  check(lambda a: jnp.nansum(a, axis=1), lambda a: np.nansum(a, axis=1), x)
  check(jnp.nansum, np.sum, np.arange(4, dtype=np.int32))


def test_nanargmax_of_all_nan_is_minus_one():
  # The Sharp Bits: index retrieval clamps, so an all-NaN slice gives -1 (NumPy raises).
  assert int(jnp.nanargmax(jnp.array([jnp.nan, jnp.nan]))) == -1
  x = jnp.array([[np.nan, np.nan], [1.0, np.nan], [3.0, 2.0]])
  np.testing.assert_array_equal(jnp.nanargmax(x, axis=1), [-1, 0, 0])
  np.testing.assert_array_equal(jnp.nanargmin(x, axis=1), [-1, 0, 1])
  assert jnp.nanargmax(x, axis=1).dtype == np.int32


@pytest.mark.parametrize("name", ["argmax", "argmin", "nanargmax", "nanargmin"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.uint8, bf16])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_arg_reductions_match_numpy(rng, name, dtype, axis):
  x = rand(rng, (3, 4), dtype)
  check(lambda a: getattr(jnp, name)(a, axis=axis), lambda a: getattr(np, name)(a, axis=axis), x,
        dtype=np.int32)
  check(lambda a: getattr(jnp, name)(a, axis=axis, keepdims=True),
        lambda a: getattr(np, name)(a, axis=axis, keepdims=True), x, dtype=np.int32)


def test_argmax_picks_nan_and_first_tie():
  assert int(jnp.argmax(jnp.array([1.0, np.nan, 3.0]))) == 1
  assert int(jnp.argmax(jnp.array([3, 1, 3]))) == 0
  with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
    jnp.argmax(jnp.zeros(0))


def test_count_nonzero_and_ptp_match_numpy(rng):
  x = rand(rng, (3, 4), np.int32)
  check(jnp.count_nonzero, np.count_nonzero, x, dtype=np.int32)
  check(lambda a: jnp.count_nonzero(a, axis=0), lambda a: np.count_nonzero(a, axis=0), x,
        dtype=np.int32)
  check(lambda a: jnp.ptp(a, axis=1), lambda a: np.ptp(a, axis=1), x)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "nancumsum", "nancumprod"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.uint8, bf16])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_cumulative_reductions_match_numpy(rng, name, dtype, axis):
  x = rand(rng, (3, 4), dtype, -2, 2)
  # JAX keeps integer dtypes (bool accumulates in the default int); NumPy widens to 64 bits.
  expected = {np.dtype(np.bool_): np.int32}.get(np.dtype(dtype), dtype)
  check(lambda a: getattr(jnp, name)(a, axis=axis), lambda a: getattr(np, name)(a, axis=axis), x,
        dtype=expected, tol=5e-2 if dtype == bf16 else 1e-5)


def test_cumsum_of_scalar_and_bool_dtype():
  check(jnp.cumsum, np.cumsum, np.float32(3.0))
  check(lambda a: jnp.cumsum(a, dtype=bool), lambda a: np.cumsum(a != 0) > 0,
        np.array([0, 2, 0], np.int32))


def test_reductions_refuse_lists_and_out():
  with pytest.raises(TypeError, match=r"sum requires ndarray or scalar arguments, got "
                                      r"<class 'list'> at position 0\."):
    jnp.sum([1, 2, 3])
  with pytest.raises(TypeError, match="sum requires ndarray or scalar arguments"):
    xjax.jit(jnp.sum)([1, 2, 3])
  for fn in (jnp.sum, jnp.mean, jnp.max, jnp.argmax, jnp.cumsum, jnp.std):
    with pytest.raises(NotImplementedError, match="The 'out' argument to jnp.* is not supported"):
      fn(jnp.ones(3), out=np.zeros(3))


def test_axis_errors():
  with pytest.raises(ValueError, match="axis 1 is out of bounds for array of dimension 1"):
    jnp.sum(jnp.ones(3), axis=1)
  with pytest.raises(ValueError, match="duplicate value in 'axis'"):
    jnp.sum(jnp.ones((2, 2)), axis=(0, 0))


def test_reductions_print_like_jax():
  x = np.ones((2, 3), np.float32)
  assert str(xjax.make_jaxpr(lambda a: jnp.sum(a, axis=1))(x)) == (
      "{ lambda ; a:f32[2,3]. let\n    b:f32[2] = reduce_sum[axes=(1,) out_sharding=None] a\n"
      "  in (b,) }")
  text = str(xjax.make_jaxpr(lambda a: jnp.max(a, axis=0, keepdims=True))(x))
  assert "reduce_max[axes=(0,)] a" in text and "broadcast_in_dim[broadcast_dimensions=(1,)]" in text
  assert "name=cumsum" in str(xjax.make_jaxpr(jnp.cumsum)(x))
  assert "name=_var" in str(xjax.make_jaxpr(jnp.var)(x))
  assert "name=nansum" in str(xjax.make_jaxpr(jnp.nansum)(x))
  assert "name=_nanargmax" in str(xjax.make_jaxpr(jnp.nanargmax)(x))


def test_methods_forward_to_reductions(rng):
  x = rand(rng, (3, 4), np.float32)
  check(lambda a: a.sum(axis=0), lambda a: a.sum(axis=0), x)
  check(lambda a: a.mean(), lambda a: a.mean(), x)
  check(lambda a: a.prod(1), lambda a: a.prod(1), x)
  check(lambda a: a.max(keepdims=True), lambda a: a.max(keepdims=True), x)
  check(lambda a: a.argmin(axis=1), lambda a: a.argmin(axis=1), x, dtype=np.int32)
  check(lambda a: a.std(), lambda a: a.std(), x)
  check(lambda a: a.var(axis=0), lambda a: a.var(axis=0), x)
  check(lambda a: a.cumsum(axis=1), lambda a: a.cumsum(axis=1), x)
  check(lambda a: a.cumprod(), lambda a: a.cumprod(), x, tol=1e-4)
  check(lambda a: (a > 0).any(axis=0), lambda a: (a > 0).any(axis=0), x)
  check(lambda a: (a > 0).all(), lambda a: (a > 0).all(), x)
