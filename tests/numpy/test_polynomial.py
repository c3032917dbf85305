"""Tests for xjax/_src/numpy/polynomial.py: polynomials, convolve/correlate and trim_zeros,
against NumPy (and against values from JAX 0.10.2 where JAX differs from NumPy)."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from jnp_checks import assert_values, bf16, check, rand
from xjax.errors import ConcretizationTypeError


@pytest.fixture
def rng():
  return np.random.default_rng(0)


def _inexact(*dts):
  """JAX's result dtype for NumPy-inexact-promoting functions (canonical, 32-bit)."""
  dt = np.result_type(*[np.float32 if d == bf16 else d for d in dts])
  if bf16 in dts and all(d == bf16 or np.dtype(d).kind in "biu" for d in dts):
    return bf16
  if dt.kind == "c":
    return np.dtype(np.complex64)
  return np.dtype(np.float32)


# ----------------------------------------------------------------------------
# convolve, correlate


CONV_DTYPES = [np.float32, np.int32, np.bool_, np.uint8, bf16, np.complex64]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("lengths", [(1, 1), (5, 1), (1, 4), (5, 3), (3, 5), (6, 4), (4, 6), (7, 7)])
@pytest.mark.parametrize("op", ["convolve", "correlate"])
def test_convolve_correlate_match_numpy(rng, op, lengths, mode):
  a = rand(rng, (lengths[0],), np.float32)
  v = rand(rng, (lengths[1],), np.float32)
  check(lambda x, y: getattr(jnp, op)(x, y, mode=mode),
        lambda x, y: getattr(np, op)(x, y, mode=mode), a, v, tol=1e-5)


@pytest.mark.parametrize("dtype", CONV_DTYPES, ids=str)
@pytest.mark.parametrize("op", ["convolve", "correlate"])
def test_convolve_correlate_dtypes(rng, op, dtype):
  a = rand(rng, (6,), dtype)
  v = rand(rng, (3,), dtype)
  want = _inexact(np.dtype(dtype))
  tol = 5e-2 if dtype == bf16 else None
  check(lambda x, y: getattr(jnp, op)(x, y, mode="full"),
        lambda x, y: getattr(np, op)(x.astype(np.float64) if x.dtype.kind in "biu" else x,
                                     y, mode="full"),
        a, v, dtype=want, tol=tol)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("lengths", [(5, 3), (3, 5), (4, 4), (2, 5), (1, 4), (4, 1)])
def test_correlate_conjugates_complex_v(rng, lengths, mode):
  a = rand(rng, (lengths[0],), np.complex64)
  v = rand(rng, (lengths[1],), np.complex64)
  check(lambda x, y: jnp.correlate(x, y, mode=mode),
        lambda x, y: np.correlate(x, y, mode=mode), a, v)
  check(lambda x, y: jnp.convolve(x, y, mode=mode),
        lambda x, y: np.convolve(x, y, mode=mode), a, v)


def test_correlate_same_with_longer_v_follows_jax():
  # golden values from JAX 0.10.2 (the same as NumPy's here)
  out = jnp.correlate(jnp.array([1., 2, 3, 4]), jnp.array([1., 2, 3, 4, 5, 6]), mode="same")
  np.testing.assert_array_equal(out, [32., 50., 40., 30., 20., 11.])
  out = jnp.convolve(jnp.array([1., 2, 3, 4]), jnp.array([1., 2, 3, 4, 5, 6]), mode="same")
  np.testing.assert_array_equal(out, [4., 10., 20., 30., 40., 43.])


def test_correlate_default_mode_is_valid_and_convolve_full():
  a, v = jnp.array([1., 2., 3., 4.]), jnp.array([1., 0.5])
  np.testing.assert_array_equal(jnp.correlate(a, v), np.correlate(np.asarray(a), np.asarray(v)))
  assert jnp.convolve(a, v).shape == (5,)


@pytest.mark.parametrize("pet, in_dtype, want", [
    (np.int32, np.int32, np.int32), (np.int32, np.int8, np.int32), (np.float32, np.bool_, np.float32),
    (np.bool_, np.bool_, np.bool_), (np.float32, np.int8, np.float32)])
def test_convolve_preferred_element_type(rng, pet, in_dtype, want):
  a = rand(rng, (5,), in_dtype)
  v = rand(rng, (3,), in_dtype)
  out = jnp.convolve(a, v, preferred_element_type=pet)
  assert out.dtype == np.dtype(want)
  expected = np.convolve(a.astype(np.int64), v.astype(np.int64))
  if want == np.bool_:
    expected = expected != 0
  np.testing.assert_array_equal(out, expected.astype(want))
  jitted = xjax.jit(lambda x, y: jnp.correlate(x, y, "full", preferred_element_type=pet))(a, v)
  assert jitted.dtype == np.dtype(want)


def test_convolve_mixed_int_types_promote_then_prefer():
  out = jnp.convolve(jnp.array([1, 2], jnp.uint8), jnp.array([1, 2], jnp.int8),
                     preferred_element_type=jnp.float32)
  assert out.dtype == np.float32
  np.testing.assert_array_equal(out, [1., 4., 4.])
  assert jnp.convolve(jnp.array([1, 2], bf16), jnp.array([1, 2])).dtype == bf16


@pytest.mark.parametrize("precision", [None, "highest", xjax.lax.Precision.HIGH,
                                       ("default", "highest")])
def test_convolve_precision_accepted(rng, precision):
  a, v = rand(rng, (7,), np.float32), rand(rng, (3,), np.float32)
  out = jnp.convolve(a, v, precision=precision)
  np.testing.assert_allclose(out, np.convolve(a, v), rtol=1e-2, atol=1e-2)


def test_convolve_errors():
  with pytest.raises(ValueError, match=r"mode must be one of \['full', 'same', 'valid'\]"):
    jnp.convolve(jnp.ones(3), jnp.ones(2), mode="bad")
  with pytest.raises(ValueError, match=r"convolve: inputs cannot be empty, got shapes \(0,\) "
                                       r"and \(2,\)"):
    jnp.convolve(jnp.ones(0), jnp.ones(2))
  with pytest.raises(ValueError, match="correlate: inputs cannot be empty"):
    jnp.correlate(jnp.ones(2), jnp.ones(0))
  for args in [(jnp.ones((2, 2)), jnp.ones(2)), (1.0, jnp.ones(2)), (2.0, 3.0)]:
    with pytest.raises(ValueError, match=r"convolve\(\) only support 1-dimensional inputs"):
      jnp.convolve(*args)
  with pytest.raises(ValueError, match=r"correlate\(\) only support 1-dimensional inputs"):
    jnp.correlate(jnp.ones((2, 2)), jnp.ones(2))
  with pytest.raises(TypeError, match="convolve requires ndarray or scalar arguments"):
    jnp.convolve([1, 2], jnp.ones(2))
  with pytest.raises(TypeError, match="must not be narrower"):
    jnp.convolve(jnp.array([1, 2]), jnp.array([1, 2]), preferred_element_type=jnp.int8)
  with pytest.raises(ValueError, match="precision"):
    jnp.convolve(jnp.ones(2), jnp.ones(2), precision="bogus")


def test_convolve_under_vmap_and_grad(rng):
  a = rand(rng, (4, 6), np.float32)
  v = rand(rng, (4, 3), np.float32)
  out = xjax.vmap(jnp.convolve)(a, v)
  np.testing.assert_allclose(out, np.stack([np.convolve(x, y) for x, y in zip(a, v)]),
                             rtol=1e-5, atol=1e-5)
  out = xjax.vmap(lambda x: jnp.correlate(x, v[0], mode="same"))(a)
  np.testing.assert_allclose(out, np.stack([np.correlate(x, v[0], "same") for x in a]),
                             rtol=1e-5, atol=1e-5)
  out = xjax.vmap(jnp.convolve, in_axes=(None, 1))(a[0], v.T[:, :2])
  np.testing.assert_allclose(out, np.stack([np.convolve(a[0], y) for y in v.T[:, :2].T]),
                             rtol=1e-5, atol=1e-5)
  # d/da sum(convolve(a, v) * w) = correlate(w, v, 'valid')
  w = rand(rng, (8,), np.float32)
  g = xjax.grad(lambda x: jnp.sum(jnp.convolve(x, v[0]) * w))(a[0])
  np.testing.assert_allclose(g, np.correlate(w, v[0], "valid"), rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------
# trim_zeros


@pytest.mark.parametrize("trim", ["fb", "f", "b", "F", "B", "bf", "x"])
@pytest.mark.parametrize("values", [[0, 0, 1, 2, 0], [1, 0, 2], [0, 0], [], [3], [0, 5, 0, 0]])
def test_trim_zeros_matches_numpy(values, trim):
  x = np.array(values, np.int32)
  out = jnp.trim_zeros(x, trim)
  # JAX 0.10.2 returns `filt` unchanged for a `trim` without 'f' or 'b' (NumPy raises)
  np.testing.assert_array_equal(out, x if trim == "x" else np.trim_zeros(x, trim))
  assert out.dtype == np.int32 and isinstance(out, xjax.Array)


@pytest.mark.parametrize("dtype", [np.float32, bf16, np.bool_, np.uint8, np.complex64], ids=str)
def test_trim_zeros_dtypes(dtype):
  x = np.array([0, 0, 1, 0, 2, 0], dtype)
  out = jnp.trim_zeros(x)
  assert out.dtype == np.dtype(dtype)
  np.testing.assert_array_equal(np.asarray(out), np.trim_zeros(x))
  # NaN and -0.0: NaN is kept, -0.0 trimmed
  out = jnp.trim_zeros(jnp.array([0., -0., np.nan, 0.]))
  assert out.shape == (1,) and np.isnan(out[0])
  # a complex zero only when both parts are zero
  np.testing.assert_array_equal(jnp.trim_zeros(jnp.array([0j, 1j, 0j])), [1j])


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1), [1]])
@pytest.mark.parametrize("trim", ["fb", "f", "b"])
def test_trim_zeros_axes_match_numpy(axis, trim):
  x = np.zeros((4, 5), np.float32)
  x[1, 2], x[2, 1] = 1.0, 2.0
  np.testing.assert_array_equal(jnp.trim_zeros(x, trim, axis=axis),
                                np.trim_zeros(x, trim, axis=axis))
  z = np.zeros((2, 3), np.float32)
  np.testing.assert_array_equal(jnp.trim_zeros(z, trim, axis=axis).shape,
                                np.trim_zeros(z, trim, axis=axis).shape)


def test_trim_zeros_scalars_and_errors():
  out = jnp.trim_zeros(0)
  assert out.shape == () and out.weak_type and int(out) == 0
  assert jnp.trim_zeros(jnp.ones(3), axis=()).shape == (3,)
  with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
    jnp.trim_zeros(jnp.ones((2, 2)), axis=2)
  with pytest.raises(ValueError, match=r"repeated axis: \(0, 0\)"):
    jnp.trim_zeros(jnp.ones((2, 2)), axis=(0, 0))
  with pytest.raises(TypeError, match="trim_zeros requires ndarray or scalar arguments"):
    jnp.trim_zeros([0, 1])
  with pytest.raises(ConcretizationTypeError, match="`filt` argument of trim_zeros"):
    xjax.jit(jnp.trim_zeros)(jnp.array([0, 1]))
  with pytest.raises(ConcretizationTypeError):
    xjax.vmap(jnp.trim_zeros)(jnp.ones((2, 3)))


# ----------------------------------------------------------------------------
# poly, polyval


POLY_DTYPES = [np.float32, np.int32, np.bool_, np.uint8, bf16, np.complex64]


@pytest.mark.parametrize("dtype", POLY_DTYPES, ids=str)
@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_poly_matches_numpy(rng, dtype, n):
  r = rand(rng, (n,), dtype)
  want = _inexact(np.dtype(dtype))
  expected = np.poly(r.astype(np.float32) if dtype == bf16 else r)
  tol = 5e-2 if dtype == bf16 else 1e-4
  out = check(jnp.poly, lambda x: np.poly(x), r, dtype=want, tol=tol)
  assert out.shape == np.shape(expected)


def test_poly_scalar_and_matrix_inputs():
  np.testing.assert_array_equal(jnp.poly(3), [1., -3.])
  out = jnp.poly(jnp.array([]))
  assert out.shape == () and out.dtype == np.float32 and float(out) == 1.0
  m = np.array([[1., 2.], [3., 4.]], np.float32)
  np.testing.assert_allclose(np.real(jnp.poly(m)), np.poly(m), rtol=1e-5, atol=1e-5)
  for shape in [(2, 3), (0, 0), (2, 2, 2)]:
    with pytest.raises(ValueError, match="input must be 1d or non-empty square 2d array."):
      jnp.poly(jnp.zeros(shape))


@pytest.mark.parametrize("dtype", POLY_DTYPES, ids=str)
@pytest.mark.parametrize("shapes", [((4,), ()), ((4,), (5,)), ((1,), (3,)), ((0,), (3,)),
                                    ((3, 2), (2,)), ((3, 2), (4, 1)), ((5,), (0,))])
def test_polyval_matches_numpy(rng, dtype, shapes):
  p = rand(rng, shapes[0], dtype)
  x = rand(rng, shapes[1], dtype, low=-1.5, high=1.5)
  if np.dtype(dtype).kind in "iu":
    x = rand(rng, shapes[1], dtype) % 3
  want = dtype if dtype != bf16 else bf16

  def reference(p, x):
    y = np.zeros(np.broadcast_shapes(p.shape[1:], np.shape(x)), np.result_type(p, x))
    for c in p:  # Horner's scheme in the input dtype (np.polyval promotes bools)
      y = y * x + c
    return y

  check(jnp.polyval, reference, p, x, dtype=want, tol=5e-2 if dtype == bf16 else 1e-4)


def test_polyval_promotion_unroll_and_errors():
  assert jnp.polyval(jnp.array([1, 2, 3]), 2).dtype == np.int32
  assert int(jnp.polyval(jnp.array([1, 2, 3]), 2)) == 11
  assert jnp.polyval(jnp.array([1, 2, 3]), 2.0).dtype == np.float32
  assert int(jnp.polyval(jnp.array([1, 2], jnp.uint8), 300)) == 46  # JAX 0.10.2: wraps
  assert jnp.polyval(jnp.array([1, 2]), jnp.array([1., 2], bf16)).dtype == bf16
  p, x = jnp.array([1., -2., 0.5, 3.]), jnp.linspace(-2, 2, 7)
  for unroll in (1, 2, 16):
    np.testing.assert_allclose(jnp.polyval(p, x, unroll=unroll), np.polyval(p, x), rtol=1e-6)
  with pytest.raises(IndexError):
    jnp.polyval(3, 2)


def test_polyval_under_vmap_and_grad(rng):
  p = rand(rng, (3, 5), np.float32)
  x = rand(rng, (3,), np.float32)
  out = xjax.vmap(jnp.polyval)(p, x)
  np.testing.assert_allclose(out, [np.polyval(a, b) for a, b in zip(p, x)], rtol=1e-5)
  out = xjax.vmap(jnp.polyval, in_axes=(1, None))(p, x)
  np.testing.assert_allclose(out, np.stack([np.polyval(p[:, i], x) for i in range(5)]), rtol=1e-5)
  dx = xjax.grad(jnp.polyval, argnums=1)(p[0], x[0])
  np.testing.assert_allclose(dx, np.polyval(np.polyder(p[0]), x[0]), rtol=1e-5)


# ----------------------------------------------------------------------------
# polyadd, polysub, polymul, polydiv


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, bf16, np.complex64], ids=str)
@pytest.mark.parametrize("lengths", [(1, 1), (2, 3), (4, 1), (3, 3)])
def test_polyadd_polysub_match_numpy(rng, dtype, lengths):
  a = rand(rng, (lengths[0],), dtype)
  b = rand(rng, (lengths[1],), dtype)
  tol = 1e-2 if dtype == bf16 else None
  check(jnp.polyadd, np.polyadd, a, b, dtype=dtype, tol=tol)
  check(jnp.polysub, np.polysub, a, b, dtype=dtype, tol=tol)


def test_polyadd_polysub_shapes_and_errors():
  # 2-D coefficients add along axis 0, broadcasting over the rest
  out = jnp.polyadd(jnp.ones((2, 3)), jnp.ones((3, 3)))
  np.testing.assert_array_equal(out, [[1, 1, 1], [2, 2, 2], [2, 2, 2]])
  # the shorter input's rows are its coefficients: (2,) adds to the last two rows
  np.testing.assert_array_equal(jnp.polyadd(jnp.ones((3, 2)), jnp.ones(2)),
                                [[1, 1], [2, 2], [2, 2]])
  np.testing.assert_array_equal(jnp.polyadd(jnp.array([]), jnp.array([1., 2.])), [1., 2.])
  assert jnp.polyadd(jnp.array([1, 2], jnp.int8), jnp.array([1.])).dtype == np.float32
  out = jnp.polysub(jnp.array([1, 2], jnp.uint8), jnp.array([3], jnp.uint8))
  np.testing.assert_array_equal(out, np.array([1, 255], np.uint8))
  with pytest.raises(ValueError, match="Cannot broadcast to shape with fewer dimensions"):
    jnp.polyadd(jnp.ones((2, 3)), jnp.ones((3,)))
  with pytest.raises(IndexError):
    jnp.polyadd(1, 2)
  with pytest.raises(TypeError, match="add does not accept dtype bool"):
    jnp.polyadd(jnp.array([True]), jnp.array([True, False]))
  with pytest.raises(TypeError, match="neg does not accept dtype bool"):
    jnp.polysub(jnp.array([True]), jnp.array([True, False]))


@pytest.mark.parametrize("dtype", POLY_DTYPES, ids=str)
@pytest.mark.parametrize("lengths", [(1, 1), (2, 3), (4, 1), (0, 3), (0, 0)])
def test_polymul_matches_numpy(rng, dtype, lengths):
  a = rand(rng, (lengths[0],), dtype)
  b = rand(rng, (lengths[1],), dtype)
  want = _inexact(np.dtype(dtype))

  def reference(x, y):  # like np.polymul without its trimming of leading zeros; [] is [0]
    x = x if len(x) else np.zeros(1, x.dtype)
    y = y if len(y) else np.zeros(1, y.dtype)
    return np.convolve(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64), y)

  check(jnp.polymul, reference, a, b, dtype=want, tol=5e-2 if dtype == bf16 else None)


def test_polymul_trim_leading_zeros():
  a, b = jnp.array([0, 0, 1, 2]), jnp.array([0, 1])
  out = jnp.polymul(a, b, trim_leading_zeros=True)
  np.testing.assert_array_equal(out, np.polymul(np.array([0, 0, 1, 2]), np.array([0, 1])))
  assert out.dtype == np.float32 and out.shape == (2,)
  assert jnp.polymul(a, b).shape == (5,)
  np.testing.assert_array_equal(jnp.polymul(jnp.array([0, 0]), jnp.array([0]),
                                            trim_leading_zeros=True), [0.])
  with pytest.raises(ConcretizationTypeError):
    xjax.jit(lambda x, y: jnp.polymul(x, y, trim_leading_zeros=True))(a, b)
  with pytest.raises(TypeError, match="len"):
    jnp.polymul(2, 3)
  with pytest.raises(ValueError, match="only support 1-dimensional inputs"):
    jnp.polymul(jnp.ones((2, 2)), jnp.ones(2))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, bf16, np.complex64], ids=str)
@pytest.mark.parametrize("lengths", [(1, 1), (3, 2), (5, 3), (2, 3), (4, 4), (0, 1)])
def test_polydiv_matches_numpy(rng, dtype, lengths):
  u = rand(rng, (lengths[0],), dtype)
  v = rand(rng, (lengths[1],), dtype)
  v[:1] = 2  # a nonzero leading coefficient
  want = _inexact(np.dtype(dtype))

  def reference(u, v):  # NumPy's quotient and untrimmed remainder, by long division
    wide = np.complex128 if want.kind == "c" else np.float64
    u, v = u.astype(wide), v.astype(wide)
    q = np.zeros(max(len(u) - len(v) + 1, 1), wide)
    for k in range(len(u) - len(v) + 1):
      q[k] = u[k] / v[0]
      u[k:k + len(v)] -= q[k] * v
    return q, u

  q, r = check(jnp.polydiv, reference, u, v, dtype=want, tol=5e-2 if dtype == bf16 else 1e-4)
  if lengths[0] >= lengths[1] and dtype != bf16:
    np.testing.assert_allclose(q, np.polydiv(u.astype(np.float64) if dtype == np.int32 else u,
                                             v)[0], rtol=1e-4, atol=1e-4)


def test_polydiv_trim_and_edge_cases():
  q, r = jnp.polydiv(jnp.array([1., 2, 3]), jnp.array([1., 1]), trim_leading_zeros=True)
  nq, nr = np.polydiv([1., 2, 3], [1., 1])
  np.testing.assert_allclose(q, nq)
  np.testing.assert_allclose(r, nr)
  q, r = jnp.polydiv(jnp.array([1., 2, 1]), jnp.array([1., 1]), trim_leading_zeros=True)
  assert r.shape == (0,) and r.dtype == np.float32
  # a divisor longer than the dividend: q = [0], r = u (JAX 0.10.2)
  q, r = jnp.polydiv(jnp.array([1, 2]), jnp.array([1, 2, 3]))
  np.testing.assert_array_equal(q, [0.])
  np.testing.assert_array_equal(r, [1., 2.])
  # a zero leading divisor coefficient gives inf/nan, as in JAX 0.10.2
  q, r = jnp.polydiv(jnp.array([1, 2, 3]), jnp.array([0, 1]))
  np.testing.assert_array_equal(q, [np.inf, -np.inf])
  np.testing.assert_array_equal(r, [np.nan, np.nan, np.inf])
  with pytest.raises(TypeError, match="len"):
    jnp.polydiv(3., 2.)
  with pytest.raises(ConcretizationTypeError):
    xjax.jit(lambda a, b: jnp.polydiv(a, b, trim_leading_zeros=True))(jnp.ones(3), jnp.ones(2))


def test_polymul_polydiv_under_vmap(rng):
  a = rand(rng, (3, 4), np.float32)
  b = rand(rng, (3, 2), np.float32)
  out = xjax.vmap(jnp.polymul)(a, b)
  np.testing.assert_allclose(out, np.stack([np.polymul(x, y) for x, y in zip(a, b)]),
                             rtol=1e-5, atol=1e-5)
  q, r = xjax.vmap(jnp.polydiv)(out, b)
  np.testing.assert_allclose(q, a, rtol=1e-3, atol=1e-3)
  np.testing.assert_allclose(r, np.zeros_like(r), atol=1e-3)


# ----------------------------------------------------------------------------
# polyder, polyint


@pytest.mark.parametrize("dtype", POLY_DTYPES, ids=str)
@pytest.mark.parametrize("n, m", [(4, 1), (4, 2), (4, 0), (4, 5), (0, 1), (1, 1), (7, 3)])
def test_polyder_matches_numpy(rng, dtype, n, m):
  p = rand(rng, (n,), dtype)
  want = _inexact(np.dtype(dtype))

  def reference(p):
    if m >= len(p):  # NumPy returns [0]; JAX an empty array
      return np.zeros(0, p.dtype)
    return np.polyder(p.astype(np.float64) if p.dtype.kind in "biu" else p, m)

  check(lambda x: jnp.polyder(x, m), reference, p, dtype=want,
        tol=5e-2 if dtype == bf16 else None)


@pytest.mark.parametrize("dtype", POLY_DTYPES, ids=str)
@pytest.mark.parametrize("n, m, k", [(3, 1, None), (3, 2, 3), (3, 2, [1., 2.]), (3, 0, None),
                                     (0, 1, None), (1, 3, [0.5]), (6, 4, 2.0)])
def test_polyint_matches_numpy(rng, dtype, n, m, k):
  p = rand(rng, (n,), dtype)
  want = _inexact(np.dtype(dtype))
  kk = None if k is None else np.array(k, np.float32)
  if kk is not None:
    want = _inexact(np.dtype(dtype), np.dtype(np.float32))

  def reference(p):
    p = p.astype(np.float64) if p.dtype.kind in "biu" else p
    if len(p) == 0:  # only the integration constants: those of the zero polynomial [0]
      return np.polyint(np.zeros(1), m, 0 if kk is None else kk)[1:]
    return np.polyint(p, m, 0 if kk is None else kk)

  check(lambda x: jnp.polyint(x, m, kk), reference, p, dtype=want,
        tol=5e-2 if dtype == bf16 else None)


def test_polyder_polyint_exact_coefficients_and_errors():
  np.testing.assert_array_equal(jnp.polyder(jnp.array([1, 2, 3, 4]), 2), [6., 4.])
  np.testing.assert_allclose(jnp.polyint(jnp.array([1, 2, 3]), 2, jnp.array([1, 2])),
                             [1 / 12, 1 / 3, 1.5, 1., 2.], rtol=1e-6)
  # 10! and 12!/2! are exact in float32 only if computed exactly and rounded once
  np.testing.assert_array_equal(jnp.polyder(jnp.ones(11), 10), [np.float32(3628800.)])
  assert jnp.polyint(jnp.array([1.]), 1, 2j).dtype == np.complex64
  with pytest.raises(ValueError, match="Order of derivative must be positive"):
    jnp.polyder(jnp.ones(2), -1)
  with pytest.raises(TypeError):
    jnp.polyder(jnp.ones(2), 1.5)
  with pytest.raises(TypeError, match="len"):
    jnp.polyder(3.)
  with pytest.raises(ValueError, match=r"Order of integral must be positive \(see polyder\)"):
    jnp.polyint(jnp.ones(2), -1)
  for m, k in [(2, jnp.array([1, 2, 3])), (0, jnp.array([1, 2]))]:
    with pytest.raises(ValueError, match="k must be a scalar or a rank-1 array of length 1 or m."):
      jnp.polyint(jnp.ones(3), m, k)
  with pytest.raises(ValueError, match="Non-hashable static arguments"):
    xjax.jit(lambda p, m: jnp.polyder(p, m))(jnp.ones(3), 1)


def test_polyder_polyint_under_vmap_and_jit_static_m(rng):
  p = rand(rng, (3, 5), np.float32)
  np.testing.assert_allclose(xjax.vmap(lambda x: jnp.polyder(x, 2))(p),
                             np.stack([np.polyder(x, 2) for x in p]), rtol=1e-6)
  np.testing.assert_allclose(xjax.vmap(lambda x: jnp.polyint(x, 2, 1.0))(p),
                             np.stack([np.polyint(x, 2, 1.0) for x in p]), rtol=1e-6)
  k = rand(rng, (3,), np.float32)
  np.testing.assert_allclose(xjax.vmap(lambda x, c: jnp.polyint(x, 1, c))(p, k),
                             np.stack([np.polyint(x, 1, c) for x, c in zip(p, k)]), rtol=1e-6)
  np.testing.assert_allclose(xjax.jit(jnp.polyder, static_argnums=1)(p[0], 3),
                             np.polyder(p[0], 3), rtol=1e-6)
  # polyder undoes polyint
  assert_values(jnp.polyder(jnp.polyint(p[0], 3), 3), p[0], np.dtype(np.float32), tol=1e-5)


# ----------------------------------------------------------------------------
# roots and polyfit (on jnp.linalg)


def _sorted_roots(r):
  r = np.asarray(r)
  return r[np.lexsort((np.round(r.imag, 4), np.round(r.real, 4)))]


@pytest.mark.parametrize("p", [[1., -3., 2.], [1., 0., 1.], [2., -3., 0., 5.], [4.], [0., 0., 1., -1.],
                               [1., 2., 0., 0.], [0., 0.]])
def test_roots_matches_numpy(p):
  p = np.array(p, np.float32)
  out = jnp.roots(p)
  assert out.dtype == np.complex64
  np.testing.assert_allclose(_sorted_roots(out), _sorted_roots(np.roots(p)), rtol=1e-4, atol=1e-4)


def test_roots_without_stripping_works_under_jit():
  p = np.array([0., 1., -3., 2.], np.float32)
  out = np.asarray(xjax.jit(lambda p: jnp.roots(p, strip_zeros=False))(p))
  assert out.shape == (3,) and np.isnan(out[-1])
  np.testing.assert_allclose(np.sort(out[:2].real), [1., 2.], rtol=1e-5)
  with pytest.raises(ConcretizationTypeError):
    xjax.jit(jnp.roots)(p)
  with pytest.raises(ValueError, match="Input must be a rank-1 array."):
    jnp.roots(np.ones((2, 2)))


@pytest.mark.parametrize("deg", [0, 1, 3])
@pytest.mark.parametrize("two_d", [False, True])
def test_polyfit_matches_numpy(rng, deg, two_d):
  x = np.linspace(-1, 1, 12).astype(np.float32)
  y = rng.standard_normal((12, 2) if two_d else 12).astype(np.float32)
  w = rng.uniform(0.5, 1.5, 12).astype(np.float32)
  np.testing.assert_allclose(jnp.polyfit(x, y, deg), np.polyfit(x, y, deg), rtol=2e-3, atol=2e-3)
  np.testing.assert_allclose(jnp.polyfit(x, y, deg, w=w), np.polyfit(x, y, deg, w=w),
                             rtol=2e-3, atol=2e-3)
  c, resid, rank, sv, rcond = jnp.polyfit(x, y, deg, full=True)
  c_np, resid_np, rank_np, sv_np, rcond_np = np.polyfit(x, y, deg, full=True)
  np.testing.assert_allclose(resid, resid_np, rtol=2e-3, atol=2e-3)
  assert int(rank) == rank_np
  np.testing.assert_allclose(sv, sv_np, rtol=1e-4)
  for kind in (True, "unscaled"):
    c, v = jnp.polyfit(x, y, deg, cov=kind)
    c_np, v_np = np.polyfit(x, y, deg, cov=kind)
    np.testing.assert_allclose(v, v_np, rtol=5e-3, atol=1e-5)


def test_polyfit_errors():
  with pytest.raises(ValueError, match="expected deg >= 0"):
    jnp.polyfit(np.ones(3), np.ones(3), -1)
  with pytest.raises(TypeError, match="expected 1D vector for x"):
    jnp.polyfit(np.ones((3, 1)), np.ones(3), 1)
  with pytest.raises(TypeError, match="expected x and y to have same length"):
    jnp.polyfit(np.ones(3), np.ones(4), 1)
  with pytest.raises(ValueError, match="the number of data points must exceed order"):
    jnp.polyfit(np.arange(2.), np.ones(2), 1, cov=True)


JAX_CONVOLVE_JAXPR = '''
{ lambda ; a:f32[5] b:f32[3]. let
    c:f32[7] = jit[
      name=convolve
      jaxpr={ lambda ; a:f32[5] b:f32[3]. let
          c:f32[7] = jit[
            name=_conv
            jaxpr={ lambda ; a:f32[5] b:f32[3]. let
                d:f32[3] = jit[
                  name=_flip
                  jaxpr={ lambda ; b:f32[3]. let
                      d:f32[3] = rev[dimensions=(0,)] b
                    in (d,) }
                ] b
                e:f32[1,1,5] = broadcast_in_dim[broadcast_dimensions=(2,)] a
                f:f32[1,1,3] = broadcast_in_dim[broadcast_dimensions=(2,)] d
                g:f32[1,1,7] = conv_general_dilated[
                  batch_group_count=1
                  dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2), rhs_spec=(0, 1, 2), out_spec=(0, 1, 2))
                  feature_group_count=1
                  lhs_dilation=(1,)
                  out_sharding=None
                  padding=((2, 2),)
                  precision=None
                  preferred_element_type=None
                  rhs_dilation=(1,)
                  window_strides=(1,)
                ] e f
                c:f32[7] = squeeze[dimensions=(0, 1)] g
              in (c,) }
          ] a b
        in (c,) }
    ] a b
  in (c,) }
'''.strip("\n")


def test_convolve_is_one_convolution_printed_as_jax():
  # Recorded from JAX 0.10.2: jnp.convolve lowers to one conv_general_dilated.
  out = xjax.make_jaxpr(lambda a, b: jnp.convolve(a, b))(np.ones(5, np.float32),
                                                         np.ones(3, np.float32))
  assert str(out) == JAX_CONVOLVE_JAXPR
