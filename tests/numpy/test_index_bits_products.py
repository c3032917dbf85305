"""ravel_multi_index, unravel_index, packbits, unpackbits, trapezoid, matvec, vecmat
and vecdot against NumPy (JAX's choices where they differ), eager, jit and vmap (issue 13)."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import errors


# -- multi-index arithmetic -----------------------------------------------------------


@pytest.mark.parametrize("dims", [(2, 3), (4,), (3, 1, 5)])
@pytest.mark.parametrize("order", ["C", "F"])
def test_ravel_and_unravel_round_trip_match_numpy(rng, dims, order):
  idx = tuple(rng.integers(0, d, 7) for d in dims)
  want = np.ravel_multi_index(idx, dims, order=order)
  np.testing.assert_array_equal(jnp.ravel_multi_index(idx, dims, order=order), want)
  if order == "C":
    for got, exp in zip(jnp.unravel_index(want, dims), np.unravel_index(want, dims)):
      np.testing.assert_array_equal(got, exp)


@pytest.mark.parametrize("mode", ["wrap", "clip"])
def test_ravel_multi_index_modes_match_numpy(mode):
  idx = (np.array([3, -1, 1]), np.array([0, 7, -4]))
  want = np.ravel_multi_index(idx, (2, 3), mode=mode)
  np.testing.assert_array_equal(jnp.ravel_multi_index(idx, (2, 3), mode=mode), want)
  jitted = xjax.jit(lambda i, j: jnp.ravel_multi_index((i, j), (2, 3), mode=mode))
  np.testing.assert_array_equal(jitted(*idx), want)


def test_ravel_multi_index_errors():
  with pytest.raises(ValueError, match="invalid entry in coordinates array"):
    jnp.ravel_multi_index((np.array([3]), np.array([0])), (2, 3))
  with pytest.raises(errors.ConcretizationTypeError):
    xjax.jit(lambda i: jnp.ravel_multi_index((i, i), (2, 3)))(np.array([1]))
  with pytest.raises(ValueError, match="must be a sequence of length 2"):
    jnp.ravel_multi_index((np.array([1]),), (2, 3))
  # As JAX: float indices first give a float result dtype, which is refused
  with pytest.raises(ValueError, match="is not an integer type"):
    jnp.ravel_multi_index((np.array([1.0]), np.array([1.0])), (2, 3), mode="clip")
  with pytest.raises(TypeError, match="only int indices permitted"):
    jnp.ravel_multi_index((np.array([1.0]), np.array([1.0])), (2, 3), mode="clip",
                          dtype=np.int32)


def test_unravel_index_clips_out_of_range_as_jax():
  # NumPy raises here; JAX clips into range (negative indices count from the end first).
  for flat, want in [(7, (1, 2)), (-1, (1, 2)), (-7, (0, 0)), (0, (0, 0))]:
    got = jnp.unravel_index(flat, (2, 3))
    assert tuple(int(g) for g in got) == want
  np.testing.assert_array_equal(
      xjax.vmap(lambda i: jnp.stack(jnp.unravel_index(i, (2, 3))))(np.arange(6)),
      np.stack(np.unravel_index(np.arange(6), (2, 3)), axis=1))
  with pytest.raises(TypeError, match="indices should be integers"):
    jnp.unravel_index(1.5, (2, 3))


# -- bits -------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(9,), (3, 10, 4), (0,), (2, 0)])
@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_unpackbits_match_numpy(rng, shape, axis, bitorder):
  x = rng.integers(0, 2, shape).astype(np.uint8)
  packed = np.packbits(x, axis=axis, bitorder=bitorder)
  got = jnp.packbits(x, axis=axis, bitorder=bitorder)
  assert got.dtype == np.uint8
  np.testing.assert_array_equal(got, packed)
  full = np.unpackbits(packed, axis=axis, bitorder=bitorder)
  ax = -1 if axis is None else axis
  for count in (None, 3, -2, 40):
    # NumPy's own padding for a count past the end is not zeroed for empty input: pad here.
    want = full if count is None else np.take(full, range(min(count, full.shape[ax]) if count >= 0
                                                          else full.shape[ax] + count), axis=ax)
    if count is not None and count > full.shape[ax]:
      widths = [(0, 0)] * want.ndim
      widths[ax] = (0, count - full.shape[ax])
      want = np.pad(want, widths)
    np.testing.assert_array_equal(
        jnp.unpackbits(packed, axis=axis, count=count, bitorder=bitorder), want)


def test_packbits_counts_nonzero_and_bool():
  np.testing.assert_array_equal(jnp.packbits(np.array([3, 0, -1, 0, 0, 0, 0, 0, 5])),
                                np.packbits(np.array([3, 0, -1, 0, 0, 0, 0, 0, 5]) != 0))
  np.testing.assert_array_equal(jnp.packbits(np.array([True, False])), [128])


def test_bits_dtype_errors():
  with pytest.raises(TypeError, match="Expected an input array of integer or boolean data type"):
    jnp.packbits(np.array([1.0]))
  with pytest.raises(TypeError, match="Expected an input array of unsigned byte data type"):
    jnp.unpackbits(np.array([1], np.int32))
  with pytest.raises(ValueError, match="'order' must be either 'little' or 'big'"):
    jnp.packbits(np.array([1]), bitorder="middle")


# -- trapezoid ----------------------------------------------------------------------------


@pytest.mark.parametrize("y_shape, x_kind, axis", [
    ((3,), None, -1), ((4, 5), None, 0), ((3, 4, 5), "1d", 1), ((3, 4, 5), "full", 1),
    ((1,), None, -1), ((2, 3), "1d", -1),
])
def test_trapezoid_matches_numpy(rng, y_shape, x_kind, axis):
  y = rng.standard_normal(y_shape).astype(np.float32)
  if x_kind is None:
    args, kwargs = (y,), dict(dx=0.5, axis=axis)
  elif x_kind == "1d":
    args, kwargs = (y, np.sort(rng.standard_normal(y_shape[axis]))), dict(axis=axis)
  else:
    args, kwargs = (y, np.sort(rng.standard_normal(y_shape), axis=axis)), dict(axis=axis)
  np.testing.assert_allclose(jnp.trapezoid(*args, **kwargs), np.trapezoid(*args, **kwargs),
                             rtol=1e-5, atol=1e-5)


def test_trapezoid_integers_give_float_and_mismatch_raises():
  assert jnp.trapezoid(np.array([1, 2, 3])).dtype == np.float32
  assert float(jnp.trapezoid(np.array([1, 2, 3]))) == 4.0
  with pytest.raises(ValueError, match="does not match y"):
    jnp.trapezoid(np.ones(3), np.ones(5))
  # As JAX 0.10.2 (NumPy gives 0.0): an empty axis with a constant spacing has no ends
  with pytest.raises(IndexError, match="out of bounds for axis 0 with size 0"):
    jnp.trapezoid(np.zeros(0, np.float32), dx=0.5)


def test_trapezoid_array_dx_lines_up_without_rank_promotion(rng):
  with xjax.numpy_rank_promotion("raise"):
    for ys, ds, ax in [((3, 4, 5), (4, 5), 0), ((3, 4, 5), (5,), 1),
                       ((2, 3, 4, 5), (2, 1, 3, 5), 2), ((3, 4, 5), (3, 3, 5), 1)]:
      y = rng.random(ys).astype(np.float32)
      d = rng.random(ds).astype(np.float32)
      np.testing.assert_allclose(jnp.trapezoid(y, dx=d, axis=ax),
                                 np.trapezoid(y, dx=d, axis=ax), rtol=1e-5, atol=1e-5)


# -- matvec, vecmat, vecdot --------------------------------------------------------------


@pytest.mark.parametrize("s1, s2", [((2, 3), (3,)), ((4, 1, 2, 3), (5, 3)), ((2, 3), (6, 1, 3))])
def test_matvec_matches_numpy(rng, s1, s2):
  a, v = rng.standard_normal(s1), rng.standard_normal(s2)
  np.testing.assert_allclose(jnp.matvec(a, v), np.matvec(a, v), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("s1, s2", [((3,), (3, 2)), ((5, 3), (4, 1, 3, 2))])
def test_vecmat_matches_numpy_with_conjugation(rng, s1, s2):
  v = rng.standard_normal(s1) + 1j * rng.standard_normal(s1)
  a = rng.standard_normal(s2) + 1j * rng.standard_normal(s2)
  np.testing.assert_allclose(jnp.vecmat(v.astype(np.complex64), a.astype(np.complex64)),
                             np.vecmat(v, a), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("s1, s2, axis", [((2, 3), (3,), -1), ((3, 1, 4), (2, 4), -1),
                                          ((4, 2), (4, 1), 0)])
def test_vecdot_matches_numpy(rng, s1, s2, axis):
  a = (rng.standard_normal(s1) + 1j * rng.standard_normal(s1)).astype(np.complex64)
  b = (rng.standard_normal(s2) + 1j * rng.standard_normal(s2)).astype(np.complex64)
  np.testing.assert_allclose(jnp.vecdot(a, b, axis=axis), np.vecdot(a, b, axis=axis),
                             rtol=1e-4, atol=1e-4)


def test_products_errors_and_transforms():
  a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
  with pytest.raises(ValueError, match="inconsistent size for core dimension 'm': 2 vs 3"):
    jnp.matvec(a, np.ones(2))
  with pytest.raises(ValueError, match=r"axes must match; got shapes \(2, 3\) and \(2,\)"):
    jnp.vecdot(a, np.ones(2))
  v = np.arange(3.0, dtype=np.float32)
  np.testing.assert_allclose(xjax.jit(jnp.matvec)(a, v), a @ v)
  np.testing.assert_allclose(xjax.vmap(jnp.vecdot, in_axes=(0, None))(a, v), a @ v)
  np.testing.assert_allclose(xjax.grad(lambda w: jnp.vecdot(w, v))(v), v)
