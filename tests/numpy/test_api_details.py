"""Details of jnp functions where JAX 0.10.2 differs from NumPy or from a first guess:
signatures, dtypes, error messages, rank promotion inside library code, recompilation
(each case checked against JAX's behaviour)."""
import inspect

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src import core


def test_shape_tuple_hint_for_creation_functions():
  for fn, name in ((jnp.ones, "ones"), (jnp.zeros, "zeros"), (jnp.empty, "empty")):
    with pytest.raises(TypeError, match=rf"Did you accidentally write `jax\.numpy\.{name}"
                                        r"\(2, 3\)` when you meant `jax\.numpy\."
                                        rf"{name}\(\(2, 3\)\)`"):
      fn(2, 3)


def test_size_shape_ndim():
  x = jnp.zeros((2, 3, 4))
  assert jnp.size(x, (0, 2)) == 8 and jnp.size(x, -1) == 4 and jnp.size(x, ()) == 1
  assert xjax.jit(lambda v: jnp.size(v, (1, 2)))(x) == 12
  for axis in [(0, 0), (1, -2)]:
    with pytest.raises(ValueError, match="repeated axis"):
      jnp.size(x, axis)
  for fn in (jnp.ndim, jnp.shape, jnp.size):
    with pytest.warns(DeprecationWarning) as record:
      fn([1, 2, 3])
    assert f"{fn.__name__} requires ndarray or scalar" in str(record[0].message)
  assert jnp.shape(3.0) == () and jnp.ndim(np.ones((2, 1))) == 2


def test_ravel_multi_index_ignore_mode_and_dtypes():
  idx = jnp.array([0, 1], dtype=jnp.int8)
  for f in (jnp.ravel_multi_index, xjax.jit(jnp.ravel_multi_index, static_argnames=(
      "dims", "mode", "dtype"))):
    out = f((idx, idx), dims=(2, 3), mode="ignore")
    assert out.dtype == np.int8 and not out.weak_type
    np.testing.assert_array_equal(out, [0, 4])
    assert f((idx, idx), dims=(2, 3), mode="ignore", dtype=jnp.int32).dtype == np.int32
  a, b = np.array([3, -1]), np.array([1, 2])
  np.testing.assert_array_equal(jnp.ravel_multi_index((a, b), (2, 3), mode="wrap"),
                                np.ravel_multi_index((a, b), (2, 3), mode="wrap"))
  with pytest.raises(ValueError, match="not large enough"):
    jnp.ravel_multi_index((idx, idx), dims=(20, 30), mode="ignore")
  with pytest.raises(ValueError, match="Expected 'raise', 'wrap', 'clip', or 'ignore'"):
    jnp.ravel_multi_index((idx, idx), dims=(2, 3), mode="bad")


def test_unravel_index_takes_traced_shapes_and_clips():
  x = np.arange(-15, 15, dtype=np.int32)
  got = xjax.jit(jnp.unravel_index)(x, (3, 4))
  want = np.unravel_index(np.where(np.clip(x, -12, 11) < 0, np.clip(x, -12, 11) + 12,
                                   np.clip(x, -12, 11)), (3, 4))
  np.testing.assert_array_equal(np.array(got), np.array(want))
  out = jnp.unravel_index(np.uint8(20), (3, 4))
  assert [int(o) for o in out] == [2, 3] and out[0].dtype == np.uint8


def test_take_along_axis_one_hot_and_index_widening():
  rng = np.random.default_rng(0)
  x = rng.random((3, 4, 5)).astype(np.float32)
  i = rng.integers(-4, 4, (3, 12, 5)).astype(np.int8)
  np.testing.assert_allclose(jnp.take_along_axis(x, i, axis=1, mode="one_hot"),
                             np.take_along_axis(x, i, axis=1), rtol=1e-6)
  np.testing.assert_array_equal(
      jnp.take_along_axis(np.arange(10.0), np.array([-1, 3, 12]), axis=0, mode="one_hot"),
      [9.0, 3.0, 0.0])
  arr = jnp.arange(200, dtype=jnp.float32)
  jaxpr = xjax.make_jaxpr(lambda v: jnp.take_along_axis(
      arr, v, axis=0, mode="promise_in_bounds", wrap_negative_indices=True))(
          jnp.array([1, 2, 3], jnp.int8))
  gather = next(e for e in jaxpr.eqns[0].params["jaxpr"].jaxpr.eqns
                if e.primitive.name == "gather")
  assert gather.invars[1].aval.dtype == np.int32


def test_complex_logaddexp2_and_clip_and_iscomplexobj():
  a = np.array([1 + 2j, -3 + 0.5j], np.complex64)
  b = np.array([0.5 - 1j, 2 + 3j], np.complex64)
  np.testing.assert_allclose(jnp.logaddexp2(a, b), np.log2(np.exp2(a) + np.exp2(b)), rtol=1e-5)
  assert xjax.grad(lambda z: jnp.logaddexp2(z, 2.0).real)(1.0 + 1j).dtype == np.complex64
  with pytest.raises(ValueError, match="Complex values have no ordering"):
    jnp.clip(np.arange(3), min=-1 + 5j)
  with pytest.raises(ValueError, match="No input was provided"):
    jnp.clip(None)
  assert xjax.jit(jnp.iscomplexobj)([1 + 1j]) and not jnp.iscomplexobj([1.0])


def test_interp_follows_jax():
  xp, fp = np.array([0.0, 1.0, 2.0, 4.0]), np.array([0.0, 2.0, 3.0, 1.0])
  x = np.linspace(-1, 5, 13)
  np.testing.assert_allclose(jnp.interp(x, xp, fp), np.interp(x, xp, fp), rtol=1e-6)
  np.testing.assert_allclose(jnp.interp(x, xp, fp, period=3), np.interp(x, xp, fp, period=3),
                             rtol=1e-5, atol=1e-6)
  with xjax.numpy_rank_promotion("raise"):  # no implicit rank promotion inside
    assert xjax.grad(lambda v: jnp.interp(v, xp, fp).sum())(np.ones((3, 4))).shape == (3, 4)
  with pytest.raises(ValueError, match="complex x values not supported"):
    jnp.interp(1j, xp, fp)
  with pytest.raises(ValueError, match="period must be a scalar"):
    jnp.interp(x, xp, fp, period=np.ones(2))


def test_linspace_with_broadcast_bounds_and_retstep():
  a, b = np.ones((2, 2)), np.arange(2.0) + 3
  for axis in (-3, 0, 2):
    got, step = jnp.linspace(a, b, 5, retstep=True, axis=axis)
    want, want_step = np.linspace(a, b, 5, retstep=True, axis=axis)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(step, want_step, rtol=1e-6)


def test_mixed_precision_dot_is_one_dot_general():
  for l, r in [(np.int8, np.float32), (np.bool_, np.int32), (np.float16, np.complex64)]:
    jaxpr = xjax.make_jaxpr(jnp.dot)(xjax.ShapeDtypeStruct((5,), l),
                                     xjax.ShapeDtypeStruct((5,), r))
    assert [e.primitive.name for e in jaxpr.eqns] == ["dot_general"]
    assert jnp.dot(np.ones(5, l), np.ones(5, r)) == 5


def test_polydiv_split_unwrap_packbits_details():
  q, r = jnp.polydiv(np.array([1.0, 2, 3], np.float32), np.array([2.0, 1], np.float32),
                     trim_leading_zeros=True)
  np.testing.assert_allclose(q, [0.5, 0.75])
  np.testing.assert_allclose(r, [2.25])
  # a concrete float number of sections counts (int()), as in JAX
  assert xjax.jvp(lambda i: jnp.split(jnp.zeros((12, 2)), i)[0], (2.0,), (1.0,))[0].shape == (6, 2)
  x = np.array([0, 3, 7, 1, -5], np.int32)
  assert jnp.unwrap(x).dtype == np.float32  # the float period promotes
  np.testing.assert_allclose(jnp.unwrap(x), np.unwrap(x), rtol=1e-5, atol=1e-5)
  np.testing.assert_array_equal(jnp.unwrap(x, period=4), np.unwrap(x, period=4))
  bits = np.random.default_rng(0).integers(0, 2, (2, 3, 4, 5)).astype(bool)
  with xjax.numpy_rank_promotion("raise"):
    for axis in (None, 0, -1):
      np.testing.assert_array_equal(jnp.packbits(bits, axis=axis), np.packbits(bits, axis=axis))


def test_piecewise_traces_its_functions_once():
  def g(v):
    g.traces += 1
    return v
  g.traces = 0
  x = jnp.arange(10.0) - 3
  for _ in range(5):
    out = jnp.piecewise(x, [x < 0], [g, 0.0])
  assert g.traces == 1
  np.testing.assert_array_equal(out, np.where(np.asarray(x) < 0, np.asarray(x), 0.0))


def test_searchsorted_index_dtype_past_int32():
  v = core.ShapedArray((), np.float32)
  fits = core.ShapedArray((np.iinfo(np.int32).max,), np.float32)
  assert xjax.eval_shape(jnp.searchsorted, fits, v).dtype == np.int32
  huge = core.ShapedArray((np.iinfo(np.int32).max + 1,), np.float32)
  # As JAX without x64: int64 is asked for (a warning), and the size does not fit int32
  with pytest.warns(UserWarning, match="Explicitly requested dtype int64"):
    with pytest.raises(OverflowError, match="Python integer 2147483648 out of bounds"):
      xjax.eval_shape(jnp.searchsorted, huge, v)


def test_signatures_follow_jax():
  assert not hasattr(jnp, "fix") and not hasattr(jnp, "row_stack")
  params = lambda f: list(inspect.signature(f).parameters)
  assert params(jnp.issubdtype) == ["arg1", "arg2"]
  assert params(jnp.isposinf) == ["x", "out"] and params(jnp.isneginf) == ["x", "out"]
  assert params(jnp.empty_like)[0] == "prototype"
  assert params(jnp.var)[-2:] == ["mean", "correction"]
  assert "mean" in params(jnp.nanvar) and "correction" not in params(jnp.nanstd)
  assert params(jnp.einsum)[:4] == ["subscripts", "operands", "out", "optimize"]
  assert "out_sharding" in params(jnp.array) and "out_sharding" in params(jnp.zeros_like)
  x = np.array([[1.0, np.nan, 3.0], [4, 5, np.nan]], np.float32)
  m = jnp.nanmean(x, axis=1, keepdims=True)
  np.testing.assert_allclose(jnp.nanvar(x, axis=1, mean=m), np.nanvar(x, axis=1))
  np.testing.assert_allclose(jnp.nanstd(x, axis=1, ddof=1, mean=m), np.nanstd(x, axis=1, ddof=1))
  with pytest.raises(ValueError, match="Only one of `device` or `out_sharding`"):
    jnp.zeros_like(x, device=xjax.devices()[0], out_sharding=xjax.P())
