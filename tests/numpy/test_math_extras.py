"""Tests for xjax/_src/numpy/math_extras.py against NumPy (and JAX 0.10.2 where they differ)."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from jnp_checks import FLOAT_DTYPES, bf16, check, rand


@pytest.fixture
def rng():
  return np.random.default_rng(0)


# ----------------------------------------------------------------------------
# gcd, lcm


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8])
@pytest.mark.parametrize("shapes", [((5,), (5,)), ((2, 3), (3,)), ((), (4,)), ((0,), (0,))])
def test_gcd_lcm_match_numpy(rng, dtype, shapes):
  scale = 3 if dtype == np.int32 else 1  # keep lcm inside int8/uint8
  a = rand(rng, shapes[0], dtype) * scale
  b = rand(rng, shapes[1], dtype) * scale
  check(jnp.gcd, np.gcd, a.astype(dtype), b.astype(dtype))
  check(jnp.lcm, np.lcm, a.astype(dtype), b.astype(dtype))


def test_gcd_lcm_scalars_weak_and_signs():
  out = jnp.gcd(-12, 18)
  assert int(out) == 6 and out.dtype == np.int32 and out.weak_type
  assert int(jnp.lcm(-4, 6)) == 12 and int(jnp.lcm(0, 0)) == 0 and int(jnp.gcd(0, 0)) == 0
  assert jnp.gcd(jnp.int8(12), 18).dtype == np.int8


def test_lcm_wraps_around_as_numpy_does():
  # |x1| * (|x2| // gcd) in int8: past 127 it wraps, negative (NumPy and JAX agree).
  a = np.array([10, -16, 14, 23], np.int8)
  b = np.array([-8, 31, 9, 2], np.int8)
  np.testing.assert_array_equal(jnp.lcm(a, b), np.lcm(a, b))
  assert int(jnp.lcm(a, b)[1]) < 0


@pytest.mark.parametrize("fn", [jnp.gcd, jnp.lcm])
@pytest.mark.parametrize("args", [(1.0, 2.0), (True, False), (jnp.ones(2), 3)])
def test_gcd_lcm_reject_non_integers(fn, args):
  with pytest.raises(ValueError, match="must be integers"):
    fn(*args)


def test_gcd_under_vmap():
  out = xjax.vmap(jnp.gcd)(jnp.array([12, 7, 0, 9]), jnp.array([18, 21, 5, 0]))
  np.testing.assert_array_equal(out, [6, 7, 5, 9])


# ----------------------------------------------------------------------------
# ldexp, frexp, modf, spacing


@pytest.mark.parametrize("dtype", [np.float32, np.float16, bf16, np.int32])
def test_ldexp_matches_numpy(rng, dtype):
  x = rand(rng, (7,), dtype)
  e = rng.integers(-10, 10, size=(7,)).astype(np.int32)
  want = np.float32 if np.dtype(dtype).kind == "i" else dtype
  check(jnp.ldexp, lambda a, b: np.ldexp(a, b), x, e, dtype=want)


def test_ldexp_extremes_and_errors():
  out = jnp.ldexp(jnp.array([0.5, 1.5, 3.0, -0.0, np.inf, np.nan]),
                  jnp.array([128, -150, 200, 5, -3, 2]))
  np.testing.assert_array_equal(out, np.float32([2.0 ** 127, 0, np.inf, -0.0, np.inf, np.nan]))
  assert jnp.ldexp(1, 3).dtype == np.float32 and not jnp.ldexp(1.0, 3).weak_type
  with pytest.raises(ValueError, match="ldexp not supported for input types"):
    jnp.ldexp(1.0, 3.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, bf16])
def test_frexp_matches_numpy(rng, dtype):
  x = np.concatenate([rand(rng, (6,), dtype) * 100, np.array([0, -0.0, np.inf, -np.inf, np.nan, 1],
                                                              dtype)])
  m, e = jnp.frexp(x)
  _, e_jit = xjax.jit(jnp.frexp)(x)
  np.testing.assert_array_equal(e, e_jit)
  wm, we = np.frexp(x.astype(np.float32))
  assert m.dtype == np.dtype(dtype) and e.dtype == np.int32
  np.testing.assert_array_equal(np.asarray(m).astype(np.float32), wm)
  np.testing.assert_array_equal(e, we)


def test_frexp_int_and_complex():
  m, e = jnp.frexp(3)
  assert float(m) == 0.75 and int(e) == 2 and m.dtype == np.float32
  with pytest.raises(TypeError, match="frexp does not support complex"):
    jnp.frexp(1j)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [np.int32])
def test_modf_matches_numpy(rng, dtype):
  x = rand(rng, (2, 3), dtype) * 2
  check(jnp.modf, np.modf, x, dtype=np.float32 if np.dtype(dtype).kind == "i" else dtype)


def test_modf_special_values_as_jax():
  frac, whole = jnp.modf(jnp.array([np.inf, -np.inf, np.nan, -0.0, -3.5]))
  # JAX (unlike NumPy) gives NaN as the fractional part of infinities.
  np.testing.assert_array_equal(frac, [np.nan, np.nan, np.nan, 0.0, -0.5])
  np.testing.assert_array_equal(whole, [np.inf, -np.inf, np.nan, -0.0, -3.0])
  assert jnp.modf(-3.5)[0].weak_type
  with pytest.raises(NotImplementedError, match="'out' argument to jnp.modf"):
    jnp.modf(jnp.ones(2), out=1)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_spacing_matches_numpy(rng, dtype):
  x = np.concatenate([rand(rng, (5,), dtype) * 1000, np.array([1, -1, 0, np.nan], dtype)])
  check(jnp.spacing, np.spacing, x)


def test_spacing_signed_zero_bf16_and_complex():
  np.testing.assert_array_equal(np.signbit(jnp.spacing(jnp.array([-0.0, 0.0]))), [True, False])
  out = jnp.spacing(jnp.array([-1.0, 1.0], bf16))
  np.testing.assert_array_equal(np.asarray(out).astype(np.float32), [-2.0 ** -7, 2.0 ** -7])
  with pytest.raises(ValueError, match="spacing is not defined for complex"):
    jnp.spacing(1j)


def test_spacing_inf_and_int():
  out = jnp.spacing(jnp.array([np.inf, -np.inf]))
  assert np.isnan(np.asarray(out)).all()  # JAX: NaN (NumPy also)
  assert float(jnp.spacing(1)) == np.float32(2.0 ** -23)


# ----------------------------------------------------------------------------
# nan_to_num


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.complex64, np.int32, np.bool_])
def test_nan_to_num_matches_numpy(dtype):
  x = np.array([1, np.nan, np.inf, -np.inf, -2], np.float64)
  if np.dtype(dtype).kind == "c":
    x = x + 1j * x[::-1]
  x = x.astype(dtype) if np.dtype(dtype).kind in "fc" else np.array([1, 0, 3], dtype)
  check(jnp.nan_to_num, np.nan_to_num, x)
  check(lambda a: jnp.nan_to_num(a, nan=5, posinf=3, neginf=-7),
        lambda a: np.nan_to_num(a, nan=5, posinf=3, neginf=-7), x)


def test_nan_to_num_weak_types_as_jax():
  assert not jnp.nan_to_num(2.0).weak_type  # float results are strong in JAX
  assert jnp.nan_to_num(3).weak_type


# ----------------------------------------------------------------------------
# diff, ediff1d


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.complex64, bf16])
@pytest.mark.parametrize("shape,axis,n", [((5,), -1, 1), ((3, 4), 0, 2), ((3, 4), -1, 3),
                                          ((2, 3), 1, 5), ((0,), 0, 1), ((2, 3), 1, 0)])
def test_diff_matches_numpy(rng, dtype, shape, axis, n):
  x = rand(rng, shape, dtype)
  check(lambda a: jnp.diff(a, n=n, axis=axis), lambda a: np.diff(a, n=n, axis=axis), x,
        dtype=dtype)


def test_diff_prepend_append(rng):
  x = rand(rng, (2, 3), np.int32)
  check(lambda a: jnp.diff(a, axis=0, append=jnp.array([[1, 1, 1]])),
        lambda a: np.diff(a, axis=0, append=np.array([[1, 1, 1]])), x)
  y = rand(rng, (3, 4), np.float32)
  check(lambda a: jnp.diff(a, n=2, prepend=1.5, append=-2.0),
        lambda a: np.diff(a, n=2, prepend=1.5, append=-2.0), y)
  out = jnp.diff(jnp.arange(3), prepend=1.5)
  np.testing.assert_array_equal(out, [-1.5, 1.0, 1.0])
  assert out.dtype == np.float32 and out.weak_type  # as JAX


def test_diff_errors():
  with pytest.raises(ValueError, match="at least one dimensional"):
    jnp.diff(jnp.array(3))
  with pytest.raises(ValueError, match="order must be non-negative but got -1"):
    jnp.diff(jnp.arange(3), n=-1)
  with pytest.raises(ValueError, match="out of bounds"):
    jnp.diff(jnp.ones((2, 3)), axis=2)


def test_ediff1d_matches_numpy(rng):
  x = rand(rng, (2, 3), np.float32)
  check(jnp.ediff1d, np.ediff1d, x)
  check(lambda a: jnp.ediff1d(a, to_end=jnp.array([1, 2]), to_begin=-5),
        lambda a: np.ediff1d(a, to_end=[1, 2], to_begin=-5), x)
  out = jnp.ediff1d(jnp.arange(3), to_begin=5.5, to_end=jnp.array([1, 2]))
  np.testing.assert_array_equal(out, [5, 1, 1, 1, 2])  # to_begin cast to int, as JAX
  assert out.dtype == np.int32
  assert jnp.ediff1d(jnp.array(3)).shape == (0,)
  with pytest.raises(TypeError, match="sub does not accept dtype bool"):
    jnp.ediff1d(jnp.array([True, False]))


# ----------------------------------------------------------------------------
# unwrap


@pytest.mark.parametrize("axis", [-1, 0])
def test_unwrap_matches_numpy(rng, axis):
  x = np.cumsum(rng.uniform(-4, 4, size=(6, 5)), axis=axis).astype(np.float32)
  check(lambda a: jnp.unwrap(a, axis=axis), lambda a: np.unwrap(a, axis=axis), x, tol=1e-4)
  check(lambda a: jnp.unwrap(a, discont=4.0, axis=axis, period=5.0),
        lambda a: np.unwrap(a, discont=4.0, axis=axis, period=5.0), x, tol=1e-4)


def test_unwrap_integer_and_errors():
  # JAX uses integer arithmetic for integer input (NumPy gives [0, -2, -4, -6]).
  out = jnp.unwrap(jnp.array([0, 3, 6, 9]), period=5)
  np.testing.assert_array_equal(out, [0, 2, 4, 6])
  assert out.dtype == np.int32
  np.testing.assert_array_equal(jnp.unwrap(jnp.array([0, 4, 8, 1]), discont=1, period=5),
                                [0, -1, -2, -4])
  assert jnp.unwrap(jnp.zeros(0, np.int32)).dtype == np.float32
  with pytest.raises(ValueError, match="does not support complex"):
    jnp.unwrap(jnp.array([1j]))
  with pytest.raises(IndexError):
    jnp.unwrap(jnp.array(1.0))


# ----------------------------------------------------------------------------
# gradient


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("shape", [(4,), (3, 5), (2, 2)])
def test_gradient_matches_numpy(rng, dtype, shape):
  x = rand(rng, shape, dtype)
  check(jnp.gradient, np.gradient, x, dtype=np.float32)
  check(lambda a: jnp.gradient(a, axis=-1), lambda a: np.gradient(a, axis=-1), x,
        dtype=np.float32)


def test_gradient_spacings(rng):
  x = rand(rng, (4, 5), np.float32)
  check(lambda a: jnp.gradient(a, 2.0), lambda a: np.gradient(a, 2.0), x)
  check(lambda a: jnp.gradient(a, 2.0, 0.5), lambda a: np.gradient(a, 2.0, 0.5), x)
  coords = np.array([0.0, 1.0, 3.0, 4.0, 7.5], np.float32)
  check(lambda a: jnp.gradient(a, coords, axis=1), lambda a: np.gradient(a, coords, axis=1), x)
  check(lambda a: jnp.gradient(a, axis=(1, 0)), lambda a: np.gradient(a, axis=(1, 0)), x)


def test_gradient_errors_and_edge_cases():
  assert jnp.gradient(jnp.array(1.0)) == []
  # One axis gives the array itself, even when asked for as a tuple (as JAX).
  assert jnp.gradient(jnp.ones((3, 4)), axis=(1,)).shape == (3, 4)
  with pytest.raises(ValueError, match="at least 2 elements are required"):
    jnp.gradient(jnp.ones(1))
  with pytest.raises(NotImplementedError, match="'edge_order' argument to jnp.gradient"):
    jnp.gradient(jnp.ones(3), edge_order=1)
  with pytest.raises(TypeError, match="Invalid number of spacing arguments 3"):
    jnp.gradient(jnp.ones((3, 4)), 1.0, 2.0, 3.0)
  with pytest.raises(ValueError, match="Spacing arrays must have the same length"):
    jnp.gradient(jnp.ones((3, 4)), jnp.ones(2))


def test_gradient_under_vmap():
  x = jnp.array([[0.0, 3.0, 6.5, 0.1], [1.0, 2.0, 4.0, 8.0]])
  np.testing.assert_allclose(xjax.vmap(jnp.gradient)(x), np.gradient(np.asarray(x), axis=1),
                             rtol=1e-6)


# ----------------------------------------------------------------------------
# interp


@pytest.mark.parametrize("fp_dtype", [np.float32, np.int32, np.complex64])
def test_interp_matches_numpy(rng, fp_dtype):
  xp = np.sort(rng.uniform(-3, 3, size=7)).astype(np.float32)
  fp = rand(rng, (7,), fp_dtype)
  x = np.concatenate([rng.uniform(-4, 4, size=(10,)), xp[:2], [np.nan]]).astype(np.float32)
  want = np.float32 if np.dtype(fp_dtype).kind == "i" else fp_dtype
  check(lambda a: jnp.interp(a, xp, fp), lambda a: np.interp(a, xp, fp), x, dtype=want, tol=1e-5)
  check(lambda a: jnp.interp(a, xp, fp, left=-10, right=10),
        lambda a: np.interp(a, xp, fp, left=-10, right=10), x, dtype=want, tol=1e-5)


def test_interp_period_matches_numpy(rng):
  xp = rng.uniform(0, 360, size=6).astype(np.float32)
  fp = rng.uniform(-1, 1, size=6).astype(np.float32)
  x = rng.uniform(-720, 720, size=(3, 4)).astype(np.float32)
  check(lambda a: jnp.interp(a, xp, fp, period=360), lambda a: np.interp(a, xp, fp, period=360),
        x, tol=1e-4)


def test_interp_extrapolate_and_errors():
  xp, fp = jnp.array([1.0, 2.0]), jnp.array([3.0, 5.0])
  out = jnp.interp(jnp.array([0.0, 1.5, 3.0]), xp, fp, left="extrapolate", right="extrapolate")
  np.testing.assert_allclose(out, [1.0, 4.0, 7.0])
  assert jnp.interp(1.5, jnp.array([1.0, 2], np.float16), jnp.array([3.0, 5], np.float16)).dtype \
      == np.float16
  with pytest.raises(ValueError, match="only valid string value of `left` is 'extrapolate'"):
    jnp.interp(1.0, xp, fp, left="foo")
  with pytest.raises(ValueError, match="one-dimensional arrays of equal size"):
    jnp.interp(1.0, jnp.array([1.0, 2, 5]), fp)
  with pytest.raises(ValueError, match="one-dimensional arrays of equal size"):
    jnp.interp(1.0, xp[None], fp)


def test_interp_under_vmap():
  f = xjax.vmap(lambda x: jnp.interp(x, jnp.array([0.0, 1, 2]), jnp.array([0.0, 10, 0])))
  np.testing.assert_allclose(f(jnp.array([0.5, 1.5, 3.0])), [5.0, 5.0, 0.0])


# ----------------------------------------------------------------------------
# cross, kron


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # NumPy on 2-vectors
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64])
@pytest.mark.parametrize("sa,sb,kw", [((3,), (3,), {}), ((2,), (2,), {}), ((3,), (2,), {}),
                                      ((4, 3), (3, 4), dict(axisb=0, axisc=0)),
                                      ((5, 2), (2,), {}), ((3, 2, 5), (3, 2, 5), dict(axis=0)),
                                      ((2, 3), (1, 3), dict(axisc=0))])
def test_cross_matches_numpy(rng, dtype, sa, sb, kw):
  a, b = rand(rng, sa, dtype), rand(rng, sb, dtype)
  check(lambda x, y: jnp.cross(x, y, **kw), lambda x, y: np.cross(x, y, **kw), a, b)


def test_cross_errors():
  with pytest.raises(ValueError, match="Dimension must be either 2 or 3 for cross product"):
    jnp.cross(jnp.ones(4), jnp.ones(3))
  with pytest.raises(TypeError):
    jnp.cross(jnp.ones((4, 3), bool), jnp.ones((4, 3), bool))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.complex64])
@pytest.mark.parametrize("sa,sb", [((2, 2), (2, 3)), ((3,), (2, 2)), ((), (3,)), ((2, 0), (3, 1)),
                                   ((2, 1, 2), (2, 2))])
def test_kron_matches_numpy(rng, dtype, sa, sb):
  check(jnp.kron, np.kron, rand(rng, sa, dtype), rand(rng, sb, dtype))


def test_kron_weak_scalars():
  out = jnp.kron(2, 3)
  assert int(out) == 6 and out.weak_type


# ----------------------------------------------------------------------------
# sinc, i0


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64, bf16])
def test_sinc_matches_numpy(rng, dtype):
  x = np.concatenate([rand(rng, (8,), dtype), np.zeros(1, dtype)])
  want = np.float32 if np.dtype(dtype).kind == "i" else dtype
  check(jnp.sinc, np.sinc, x, dtype=want)


def test_sinc_zero_and_derivatives():
  out = jnp.sinc(0)
  assert float(out) == 1.0 and out.weak_type
  assert float(xjax.grad(jnp.sinc)(0.0)) == 0.0
  np.testing.assert_allclose(xjax.grad(xjax.grad(jnp.sinc))(0.0), -np.pi ** 2 / 3, rtol=1e-5)
  np.testing.assert_allclose(xjax.grad(jnp.sinc)(0.3), (np.cos(0.3 * np.pi) * 0.3 * np.pi
                                                        - np.sin(0.3 * np.pi)) / (np.pi * 0.09),
                             rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16])
def test_i0_matches_numpy(rng, dtype):
  x = (rand(rng, (12,), dtype) * 4).astype(dtype)
  want = np.float32 if np.dtype(dtype).kind == "i" else dtype
  check(jnp.i0, np.i0, x, dtype=want, tol=1e-5 if dtype != np.float16 else 2e-3)


def test_i0_large_inf_and_errors():
  x = np.array([-30.0, 9.0, 30.0], np.float32)
  np.testing.assert_allclose(jnp.i0(x), np.i0(x.astype(np.float64)), rtol=1e-5)
  assert np.isnan(float(jnp.i0(np.inf)))  # as JAX: exp(inf) * 0
  assert jnp.i0(0.0).weak_type
  with pytest.raises(ValueError, match="Unsupported input type to jax.numpy.i0: complex64"):
    jnp.i0(1j)
  np.testing.assert_allclose(xjax.grad(jnp.i0)(1.0), 0.5651591, rtol=1e-5)  # I1(1)


# ----------------------------------------------------------------------------
# Window functions


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
@pytest.mark.parametrize("M", [0, 1, 2, 5, 8])
def test_windows_match_numpy(name, M):
  out = getattr(jnp, name)(M)
  assert out.dtype == np.float32 and out.shape == (M,)
  np.testing.assert_allclose(out, getattr(np, name)(M), atol=2e-6)


@pytest.mark.parametrize("M,beta", [(0, 3.0), (1, 3.0), (5, 3.0), (8, 0.0), (7, 14.0)])
def test_kaiser_matches_numpy(M, beta):
  out = jnp.kaiser(M, beta)
  assert out.dtype == np.float32 and out.shape == (M,)
  np.testing.assert_allclose(out, np.kaiser(M, beta), rtol=1e-5, atol=1e-6)


def test_window_needs_concrete_length():
  with pytest.raises(xjax.errors.ConcretizationTypeError):
    xjax.jit(jnp.hanning)(4)


# ----------------------------------------------------------------------------
# isreal, iscomplex, isrealobj


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.complex64])
def test_isreal_iscomplex_match_numpy(dtype):
  x = np.array([1, 0, 2], dtype) if dtype != np.complex64 else np.array([1j, 1 + 0j, 0], dtype)
  check(jnp.isreal, np.isreal, x)
  check(jnp.iscomplex, np.iscomplex, x)


def test_isreal_weak_and_isrealobj():
  assert jnp.isreal(1).weak_type and bool(jnp.isreal(1))
  assert not bool(jnp.iscomplex(1.0))
  assert jnp.isrealobj(1) is True and jnp.isrealobj(jnp.ones(2, np.complex64)) is False
  assert jnp.isrealobj(np.array([1j])) is False


def test_i0_and_frexp_derivatives_follow_jax_rules():
  assert float(xjax.grad(jnp.i0)(0.0)) == 0.0  # exactly, as JAX's rule
  np.testing.assert_allclose(xjax.grad(jnp.i0)(1.0), 0.5651591, rtol=1e-5)  # I1(1)
  (m, e), (dm, de) = xjax.jvp(jnp.frexp, (3.0,), (1.0,))
  assert (float(m), int(e), float(dm)) == (0.75, 2, 0.25) and de.dtype == xjax.dtypes.float0
  np.testing.assert_allclose(xjax.jit(xjax.grad(lambda x: jnp.frexp(x)[0]))(jnp.float32(12.0)),
                             1 / 16)
