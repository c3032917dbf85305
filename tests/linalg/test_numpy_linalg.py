"""jnp.linalg: values against numpy.linalg on well-conditioned matrices, dtypes
(integers promote to float), batch dims, jit vs eager, vmap, derivatives,
singular input, printed jaxprs and errors."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src import test_util as jtu

LA = jnp.linalg
INEXACT = [np.float32, np.float64, np.complex64, np.complex128]
TOL = {np.dtype(np.float32): 2e-4, np.dtype(np.complex64): 2e-4,
       np.dtype(np.float64): 1e-9, np.dtype(np.complex128): 1e-9}


@pytest.fixture(autouse=True)
def _x64_for_all():
  with xjax._src.config.enable_x64(True):
    yield


def _random(rng, shape, dtype):
  if np.issubdtype(dtype, np.integer):
    return rng.integers(-4, 5, shape).astype(dtype)
  x = rng.standard_normal(shape)
  if np.issubdtype(dtype, np.complexfloating):
    x = x + 1j * rng.standard_normal(shape)
  return x.astype(dtype)


def _well_conditioned(rng, shape, dtype):
  """Random square matrices with a dominant diagonal."""
  a = _random(rng, shape, dtype)
  return (a + 3 * shape[-1] * np.eye(shape[-1])).astype(dtype)


def _hermitian(rng, shape, dtype):
  a = _random(rng, shape, dtype)
  return (a + np.conj(np.swapaxes(a, -1, -2))).astype(dtype)


def _tol(dtype):
  return TOL.get(np.dtype(dtype), 2e-4)


def _close(actual, expected, dtype, scale=1.0):
  tol = _tol(dtype) * scale
  np.testing.assert_allclose(np.asarray(actual), expected, rtol=tol, atol=tol)


def _result_dtype(dtype):
  """jnp.linalg's dtype for `dtype` input under x64 (JAX's): int64 becomes float64, narrower
  integers float32."""
  if np.issubdtype(dtype, np.integer):
    return np.dtype(np.float64 if np.dtype(dtype).itemsize == 8 else np.float32)
  return np.dtype(dtype)


def test_public_names_are_jax_names():
  names = sorted(n for n in dir(LA) if not n.startswith("_"))
  assert names == [
      "cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
      "inv", "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
      "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve",
      "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot",
      "vector_norm"]


# ----------------------------------------------------------------------------
# Norms


VECTOR_ORDS = [None, 2, np.inf, -np.inf, 0, 1, -1, 3, 0.5, -2.5]
MATRIX_ORDS = [None, "fro", "nuc", np.inf, -np.inf, 1, -1, 2, -2]


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
@pytest.mark.parametrize("ord", VECTOR_ORDS)
def test_norm_vector_ords_match_numpy(rng, dtype, ord):  # noqa: A002
  x = _random(rng, (3, 5), dtype)
  x[0, 1] = 0
  for axis, keepdims in [(-1, False), (0, True)]:
    out = LA.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    expected = np.linalg.norm(x.astype(_result_dtype(dtype)), ord=ord, axis=axis,
                              keepdims=keepdims)
    assert out.dtype == np.abs(np.zeros((), _result_dtype(dtype))).dtype
    _close(out, expected, dtype)
  _close(LA.norm(x[0], ord=ord), np.linalg.norm(x[0].astype(_result_dtype(dtype)), ord=ord),
         dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
@pytest.mark.parametrize("ord", MATRIX_ORDS)
def test_norm_matrix_ords_match_numpy(rng, dtype, ord):  # noqa: A002
  x = _random(rng, (2, 3, 4), dtype)
  xf = x.astype(_result_dtype(dtype))
  for axis, keepdims in [((1, 2), False), ((2, 1), True), ((-1, -3), False)]:
    _close(LA.norm(x, ord=ord, axis=axis, keepdims=keepdims),
           np.linalg.norm(xf, ord=ord, axis=axis, keepdims=keepdims), dtype, 5)
  _close(LA.norm(x[0], ord=ord), np.linalg.norm(xf[0], ord=ord), dtype, 5)
  _close(LA.matrix_norm(x, ord="fro" if ord is None else ord),
         np.linalg.matrix_norm(xf, ord="fro" if ord is None else ord), dtype, 5)


@pytest.mark.parametrize("dtype", [np.int16, np.int64])
def test_norm_of_integers_promotes(rng, dtype):
  x = _random(rng, (3, 4), dtype)
  xf = x.astype(_result_dtype(dtype))
  for ord in (None, 3, -np.inf):  # noqa: A001
    out = LA.norm(x, ord=ord, axis=1)
    assert out.dtype == _result_dtype(dtype)
    _close(out, np.linalg.norm(xf, ord=ord, axis=1), dtype)
  for ord in ("nuc", 1, -2):  # noqa: A001
    _close(LA.norm(x, ord=ord), np.linalg.norm(xf, ord=ord), dtype, 5)


def test_norm_without_axis_or_ord_flattens_any_rank(rng):
  x = _random(rng, (2, 3, 4), np.float32)
  _close(LA.norm(x), np.linalg.norm(x.ravel()), np.float32)
  assert LA.norm(x, keepdims=True).shape == (1, 1, 1)
  _close(LA.norm(np.float32(-3)), 3.0, np.float32)


@pytest.mark.parametrize("ord", [2, np.inf, -np.inf, 0, 1, 3])
def test_vector_norm_matches_numpy(rng, ord):  # noqa: A002
  x = _random(rng, (2, 3, 4), np.complex64)
  for axis in [None, 1, (0, 2)]:
    _close(LA.vector_norm(x, ord=ord, axis=axis, keepdims=True),
           np.linalg.vector_norm(x, ord=ord, axis=axis, keepdims=True), np.complex64)
  # Integers are not promoted for the max-norm, as in JAX.
  assert LA.vector_norm(np.array([1, -5, 2]), ord=np.inf).dtype == np.int64


def test_norm_errors():
  x = np.ones((2, 3, 4), np.float32)
  with pytest.raises(ValueError, match="Invalid order 'bad' for matrix norm."):
    LA.norm(x, ord="bad", axis=(0, 1))
  with pytest.raises(ValueError, match=r"Improper number of axes for norm: axis=\(0, 1, 2\)"):
    LA.norm(x, ord=2)
  with pytest.raises(ValueError, match="Invalid order 'fro' for vector norm."):
    LA.norm(x, ord="fro", axis=0)
  with pytest.raises(ValueError, match="Use 'jax.numpy.inf' instead."):
    LA.vector_norm(x, ord="inf")


# ----------------------------------------------------------------------------
# Determinants, solves, inverses


@pytest.mark.parametrize("dtype", INEXACT + [np.int32])
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (2, 1, 3, 3), (2, 5, 5)])
def test_det_and_slogdet_match_numpy(rng, dtype, shape):
  a = _random(rng, shape, dtype)
  af = a.astype(_result_dtype(dtype))
  det = LA.det(a)
  assert det.dtype == _result_dtype(dtype) and det.shape == shape[:-2]
  _close(det, np.linalg.det(af), dtype, 10)
  result = LA.slogdet(a)
  assert type(result).__name__ == "SlogdetResult" and result._fields == ("sign", "logabsdet")
  sign, logdet = result
  np_sign, np_logdet = np.linalg.slogdet(af)
  _close(sign, np_sign, dtype, 10)
  _close(logdet, np_logdet, dtype, 10)
  assert logdet.dtype == np.abs(np.zeros((), _result_dtype(dtype))).dtype


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_slogdet_qr_method_matches_numpy(rng, dtype):
  a = _random(rng, (3, 4, 4), dtype)
  sign, logdet = LA.slogdet(a, method="qr")
  np_sign, np_logdet = np.linalg.slogdet(a)
  _close(sign, np_sign, dtype)
  _close(logdet, np_logdet, dtype, 10)


def test_det_of_empty_matrices():
  np.testing.assert_array_equal(LA.det(np.zeros((2, 0, 0))), [1.0, 1.0])
  assert LA.det(np.zeros((0, 4, 4))).shape == (0,)
  sign, logdet = LA.slogdet(np.zeros((0, 0)))
  assert float(sign) == 1.0 and float(logdet) == 0.0


def test_singular_matrices_give_zero_det_and_inf_values_without_error():
  a = np.array([[1., 2., 3.], [2., 4., 6.], [0., 1., 1.]])
  b = np.zeros((4, 4))
  assert float(LA.det(a)) == 0.0 and float(LA.det(b)) == 0.0
  sign, logdet = LA.slogdet(b)
  assert float(sign) == 0.0 and float(logdet) == -np.inf
  assert not np.all(np.isfinite(np.asarray(LA.inv(b))))
  assert not np.all(np.isfinite(np.asarray(LA.solve(b, np.ones(4)))))
  # As in JAX: 0/0 for p=None; the norm-based and p=-2 forms report inf.
  assert np.isnan(float(LA.cond(b))) and float(LA.cond(b, p=-2)) == np.inf
  assert float(LA.cond(b, p=1)) == np.inf and float(LA.cond(b, p="fro")) == np.inf


def test_slogdet_errors(rng):
  with pytest.raises(ValueError, match=r"Argument to slogdet\(\) must have shape \[..., n, n\], "
                     r"got \(2, 3\)"):
    LA.slogdet(np.ones((2, 3)))
  with pytest.raises(ValueError, match="Unknown slogdet method 'svd'. Supported methods are "
                     r"'lu' \(`None`\), and 'qr'."):
    LA.slogdet(np.eye(3), method="svd")
  with pytest.raises(NotImplementedError, match="slogdet method='qr' not implemented for "
                     "complex inputs"):
    LA.slogdet(np.eye(3, dtype=np.complex64), method="qr")
  with pytest.raises(ValueError, match=r"Argument to _det\(\) must have shape \[..., n, n\], "
                     r"got \(3,\)"):
    LA.det(np.ones(3))


@pytest.mark.parametrize("dtype", INEXACT + [np.int32])
@pytest.mark.parametrize("a_shape, b_shape", [
    ((4, 4), (4,)), ((3, 4, 4), (4,)), ((3, 4, 4), (3, 4, 2)), ((4, 4), (2, 4, 3)),
    ((2, 1, 4, 4), (3, 4, 1)),
])
def test_solve_matches_numpy_with_jax_shape_rules(rng, dtype, a_shape, b_shape):
  a = _well_conditioned(rng, a_shape, dtype)
  b = _random(rng, b_shape, dtype)
  x = LA.solve(a, b)
  af, bf = a.astype(_result_dtype(dtype)), b.astype(_result_dtype(dtype))
  expected = (np.linalg.solve(af, bf[..., None])[..., 0] if b.ndim == 1
              else np.linalg.solve(af, bf))
  assert x.shape == expected.shape and x.dtype == _result_dtype(dtype)
  _close(x, expected, dtype)


def test_solve_promotes_mixed_dtypes(rng):
  a = _well_conditioned(rng, (3, 3), np.float32)
  x = LA.solve(a, np.array([1, 2, 3], np.int32))
  assert x.dtype == np.float32
  _close(x, np.linalg.solve(a, [1., 2., 3.]), np.float32)
  assert LA.solve(a.astype(np.complex64), np.ones(3, np.float32)).dtype == np.complex64


def test_solve_errors():
  with pytest.raises(ValueError, match=r"left hand array must be at least two dimensional; "
                     r"got a.shape=\(3,\)"):
    LA.solve(np.ones(3), np.ones(3))
  with pytest.raises(ValueError, match=r"Invalid shapes for solve: \(2, 3, 3\), \(2, 3\). "
                     "Prior to JAX v0.5.0"):
    LA.solve(np.ones((2, 3, 3)), np.ones((2, 3)))
  with pytest.raises(ValueError, match="inconsistent size for core dimension 'm': 4 vs 3 on "
                     "vectorized function with excluded=frozenset\\(\\) and "
                     "signature='\\(m,m\\),\\(m\\)->\\(m\\)'"):
    LA.solve(np.eye(3), np.ones(4))
  with pytest.raises(ValueError, match="inconsistent size for core dimension 'm'"):
    LA.solve(np.ones((3, 4)), np.ones(4))
  with pytest.raises(ValueError, match="signature='\\(m,m\\),\\(m,n\\)->\\(m,n\\)'"):
    LA.solve(np.eye(3), np.ones((2, 4, 3)))


@pytest.mark.parametrize("dtype", INEXACT + [np.int32])
@pytest.mark.parametrize("shape", [(1, 1), (2, 3, 3), (2, 0, 0)])
def test_inv_matches_numpy(rng, dtype, shape):
  a = _well_conditioned(rng, shape, dtype)
  out = LA.inv(a)
  assert out.dtype == _result_dtype(dtype) and out.shape == shape
  _close(out, np.linalg.inv(a.astype(_result_dtype(dtype))), dtype)


def test_inv_errors():
  with pytest.raises(ValueError, match=r"Argument to inv must have shape \[..., n, n\], got "
                     r"\(2, 3\)."):
    LA.inv(np.ones((2, 3)))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -3])
def test_matrix_power_matches_numpy(rng, n):
  a = _well_conditioned(rng, (2, 3, 3), np.float64) / 9
  _close(LA.matrix_power(a, n), np.linalg.matrix_power(a, n), np.float64, 10)
  ai = rng.integers(-3, 4, (3, 3))
  if n >= 0:
    out = LA.matrix_power(ai, n)
    assert out.dtype == ai.dtype
    np.testing.assert_array_equal(out, np.linalg.matrix_power(ai, n))


def test_matrix_power_errors():
  with pytest.raises(TypeError, match="1-dimensional array given. Array must be at least "
                     "two-dimensional"):
    LA.matrix_power(np.ones(3), 2)
  with pytest.raises(TypeError, match="Last 2 dimensions of the array must be square"):
    LA.matrix_power(np.ones((2, 3)), 2)
  with pytest.raises(TypeError, match="exponent must be an integer, got 1.5"):
    LA.matrix_power(np.eye(2), 1.5)


def test_tensorinv_and_tensorsolve_match_numpy(rng):
  a = _well_conditioned(rng, (6, 6), np.float64).reshape(6, 2, 3)
  _close(LA.tensorinv(a, ind=1), np.linalg.tensorinv(a, ind=1), np.float64)
  a4 = _well_conditioned(rng, (6, 6), np.float64).reshape(2, 3, 6)
  b = _random(rng, (2, 3), np.float64)
  _close(LA.tensorsolve(a4, b), np.linalg.tensorsolve(a4, b), np.float64)
  a5 = np.moveaxis(a4.reshape(2, 3, 2, 3), 0, 3)
  _close(LA.tensorsolve(a5, b.T, axes=(3,)), np.linalg.tensorsolve(a5, b.T, axes=(3,)),
         np.float64)
  with pytest.raises(ValueError, match="ind must be a positive integer; got ind=0"):
    LA.tensorinv(a, ind=0)
  with pytest.raises(ValueError, match="tensorinv is only possible when the product"):
    LA.tensorinv(a, ind=2)
  with pytest.raises(ValueError, match="leading shape of a must match shape of b"):
    LA.tensorsolve(a4, b.T)


# ----------------------------------------------------------------------------
# Factorizations and spectral functions


@pytest.mark.parametrize("dtype", INEXACT + [np.int32])
def test_cholesky_lower_and_upper(rng, dtype):
  a = _random(rng, (2, 4, 4), dtype)
  a = (a @ np.conj(np.swapaxes(a, -1, -2)) + 16 * np.eye(4)).astype(dtype)
  expected = np.linalg.cholesky(a.astype(_result_dtype(dtype)))
  lower = LA.cholesky(a)
  assert lower.dtype == _result_dtype(dtype)
  _close(lower, expected, dtype)
  _close(LA.cholesky(a, upper=True), np.conj(np.swapaxes(expected, -1, -2)), dtype)
  # Without symmetrization only the lower triangle is read.
  garbage = np.tril(a) + np.triu(np.full_like(a, 7), 1)
  _close(LA.cholesky(garbage, symmetrize_input=False), expected, dtype)


@pytest.mark.parametrize("dtype", INEXACT + [np.int32])
def test_eigh_and_eigvalsh(rng, dtype):
  a = _hermitian(rng, (2, 5, 5), dtype)
  w, v = LA.eigh(a)
  assert type(LA.eigh(a)).__name__ == "EighResult"
  assert LA.eigh(a)._fields == ("eigenvalues", "eigenvectors")
  rdt = _result_dtype(dtype)
  assert w.dtype == np.abs(np.zeros((), rdt)).dtype and v.dtype == rdt
  _close(w, np.linalg.eigvalsh(a.astype(rdt)), dtype, 10)
  _close(np.asarray(a, rdt) @ np.asarray(v), np.asarray(v) * np.asarray(w)[..., None, :],
         dtype, 20)
  _close(LA.eigvalsh(a), np.linalg.eigvalsh(a.astype(rdt)), dtype, 10)
  # UPLO picks the triangle read when the input is not symmetrized.
  lower_only = np.tril(a) + np.triu(np.full_like(a, 5), 1)
  _close(LA.eigh(lower_only, UPLO="L", symmetrize_input=False).eigenvalues,
         np.linalg.eigvalsh(a.astype(rdt)), dtype, 10)
  upper_only = np.triu(a) + np.tril(np.full_like(a, 5), -1)
  _close(LA.eigvalsh(upper_only, UPLO="U", symmetrize_input=False),
         np.linalg.eigvalsh(a.astype(rdt)), dtype, 10)
  with pytest.raises(ValueError, match="UPLO must be one of None, 'L', or 'U', got X"):
    LA.eigh(a, UPLO="X")


@pytest.mark.parametrize("dtype", INEXACT + [np.int32])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5)])
def test_svd_and_svdvals(rng, dtype, shape):
  a = _random(rng, shape, dtype)
  rdt = _result_dtype(dtype)
  af = a.astype(rdt)
  s_np = np.linalg.svd(af, compute_uv=False)
  _close(LA.svdvals(a), s_np, dtype, 10)
  _close(LA.svd(a, compute_uv=False), s_np, dtype, 10)
  for full in (True, False):
    result = LA.svd(a, full_matrices=full)
    assert type(result).__name__ == "SVDResult" and result._fields == ("U", "S", "Vh")
    u, s, vh = result
    u_np, _, vh_np = np.linalg.svd(af, full_matrices=full)
    assert u.shape == u_np.shape and vh.shape == vh_np.shape and u.dtype == rdt
    k = min(shape[-2:])
    recon = np.asarray(u)[..., :, :k] * np.asarray(s)[..., None, :] @ np.asarray(vh)[..., :k, :]
    _close(recon, af, dtype, 10)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_svd_hermitian_and_subset(rng, dtype):
  a = _hermitian(rng, (2, 4, 4), dtype)
  u, s, vh = LA.svd(a, hermitian=True)
  _close(s, np.linalg.svd(a, compute_uv=False), dtype, 10)
  _close(np.asarray(u) * np.asarray(s)[..., None, :] @ np.asarray(vh), a, dtype, 10)
  _close(LA.svd(a, hermitian=True, compute_uv=False), np.linalg.svd(a, compute_uv=False),
         dtype, 10)
  b = _random(rng, (5, 4), dtype)
  # As in JAX 0.10.2 on CPU: subset_by_index is refused.
  with pytest.raises(ValueError, match="full_matrices and subset_by_index cannot both be set"):
    LA.svd(b, compute_uv=False, subset_by_index=(0, 2))
  with pytest.raises(NotImplementedError, match="subset_by_index not implemented for CPU"):
    LA.svd(b, full_matrices=False, compute_uv=False, subset_by_index=(0, 2))


@pytest.mark.parametrize("dtype", INEXACT + [np.int32])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5)])
def test_pinv_matches_numpy(rng, dtype, shape):
  a = _random(rng, shape, dtype)
  rdt = _result_dtype(dtype)
  out = LA.pinv(a)
  assert out.dtype == rdt and out.shape == (*shape[:-2], shape[-1], shape[-2])
  _close(out, np.linalg.pinv(a.astype(rdt)), dtype, 50)


def test_pinv_cutoffs_and_errors(rng):
  a = np.diag([1.0, 1e-3, 1e-16])
  _close(LA.pinv(a), np.diag([1.0, 1e3, 0.0]), np.float64)
  _close(LA.pinv(a, rtol=1e-2), np.diag([1.0, 0.0, 0.0]), np.float64)
  _close(LA.pinv(a, rcond=1e-2), np.diag([1.0, 0.0, 0.0]), np.float64)
  _close(LA.pinv(np.stack([a, a]), rtol=np.array([1e-2, 1e-5])),
         np.stack([np.diag([1., 0., 0.]), np.diag([1., 1e3, 0.])]), np.float64)
  h = _hermitian(rng, (3, 3), np.float64)
  _close(LA.pinv(h, hermitian=True), np.linalg.pinv(h), np.float64)
  assert LA.pinv(np.ones((2, 0, 3))).shape == (2, 3, 0)
  with pytest.raises(ValueError, match="pinv: only one of rtol and rcond may be specified."):
    LA.pinv(a, rtol=0.1, rcond=0.1)


def test_matrix_rank_matches_numpy(rng):
  a = _random(rng, (3, 5, 2), np.float64) @ _random(rng, (3, 2, 4), np.float64)
  np.testing.assert_array_equal(LA.matrix_rank(a), np.linalg.matrix_rank(a))
  np.testing.assert_array_equal(LA.matrix_rank(np.eye(4)), 4)
  np.testing.assert_array_equal(LA.matrix_rank(np.diag([1., 1e-3, 1e-9]), rtol=1e-2), 1)
  np.testing.assert_array_equal(LA.matrix_rank(np.diag([1., 1e-3, 1e-9]), tol=1e-5), 2)
  np.testing.assert_array_equal(LA.matrix_rank(_hermitian(rng, (4, 4), np.float64),
                                               hermitian=True), 4)
  assert int(LA.matrix_rank(np.zeros(3))) == 0 and int(LA.matrix_rank(np.ones(3))) == 1
  with pytest.raises(ValueError, match="matrix_rank: only one of tol or rtol may be specified."):
    LA.matrix_rank(np.eye(2), rtol=0.1, tol=0.1)


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", np.inf, -np.inf, 1, -1])
def test_cond_matches_numpy(rng, p):
  a = _random(rng, (2, 4, 4), np.float64)
  _close(LA.cond(a, p), np.linalg.cond(a, p), np.float64, 1e3)


def test_cond_errors():
  with pytest.raises(ValueError, match=r"jnp.linalg.cond: input array must be at least 2D; "
                     r"got arr.shape=\(3,\)"):
    LA.cond(np.ones(3))
  with pytest.raises(ValueError, match="input array must not be empty"):
    LA.cond(np.ones((0, 3)))
  with pytest.raises(ValueError, match=r"jnp.linalg.cond: for p=1, array must be square; "
                     r"got arr.shape=\(2, 3\)"):
    LA.cond(np.ones((2, 3)), p=1)
  _close(LA.cond(np.array([[1., 0.], [0., 2.], [0., 0.]])), 2.0, np.float64)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128, np.int32])
@pytest.mark.parametrize("b_shape", [(5,), (5, 2)])
def test_lstsq_matches_numpy(rng, dtype, b_shape):
  a = _random(rng, (5, 3), dtype)
  b = _random(rng, b_shape, dtype)
  rdt = _result_dtype(dtype)
  x, resid, rank, s = LA.lstsq(a, b)
  x_np, resid_np, rank_np, s_np = np.linalg.lstsq(a.astype(rdt), b.astype(rdt), rcond=None)
  _close(x, x_np, dtype, 10)
  _close(resid, resid_np, dtype, 50)
  assert int(rank) == rank_np
  _close(s, s_np, dtype, 10)
  # numpy_resid: an empty residual for rank-deficient or square/wide systems.
  wide = _random(rng, (3, 5), dtype)
  assert LA.lstsq(wide, b[:3], numpy_resid=True)[1].shape == (0,)
  assert LA.lstsq(wide, b[:3])[1].shape == b_shape[1:] or (1,)


def test_lstsq_errors():
  with pytest.raises(ValueError, match="Leading dimensions of input arrays must match"):
    LA.lstsq(np.ones((3, 2)), np.ones(4))
  with pytest.raises(TypeError, match="3-dimensional array given. Array must be "
                     "two-dimensional"):
    LA.lstsq(np.ones((3, 2, 2)), np.ones(3))
  with pytest.raises(TypeError, match="3-dimensional array given. Array must be one or "
                     "two-dimensional"):
    LA.lstsq(np.ones((3, 2)), np.ones((3, 2, 2)))


@pytest.mark.parametrize("dtype", INEXACT + [np.int32])
@pytest.mark.parametrize("shape", [(5, 3), (2, 3, 5)])
def test_qr_modes(rng, dtype, shape):
  a = _random(rng, shape, dtype)
  rdt = _result_dtype(dtype)
  af = a.astype(rdt)
  for mode in ("reduced", "complete"):
    result = LA.qr(a, mode=mode)
    assert type(result).__name__ == "QRResult" and result._fields == ("Q", "R")
    q, r = result
    q_np, r_np = np.linalg.qr(af, mode=mode)
    assert q.shape == q_np.shape and r.shape == r_np.shape and q.dtype == rdt
    _close(np.asarray(q) @ np.asarray(r), af, dtype, 10)
    _close(np.abs(np.asarray(r)), np.abs(r_np), dtype, 10)
    assert np.all(np.tril(np.asarray(r), -1) == 0)
  _close(np.abs(np.asarray(LA.qr(a, mode="r"))), np.abs(np.linalg.qr(af, mode="r")), dtype, 10)
  if len(shape) == 2:
    h, tau = LA.qr(a, mode="raw")
    h_np, tau_np = np.linalg.qr(af, mode="raw")
    _close(h, h_np, dtype, 10)
    _close(tau, tau_np, dtype, 10)
  with pytest.raises(ValueError, match="Unsupported QR decomposition mode 'bad'"):
    LA.qr(a, mode="bad")


@pytest.mark.parametrize("dtype", INEXACT + [np.int32])
def test_eig_and_eigvals(rng, dtype):
  a = _random(rng, (2, 4, 4), dtype)
  result = LA.eig(a)
  assert type(result).__name__ == "EigResult" and result._fields == ("eigenvalues", "eigenvectors")
  w, v = result
  assert w.dtype == np.result_type(_result_dtype(dtype), np.complex64)
  af = a.astype(_result_dtype(dtype))
  _close(af @ np.asarray(v), np.asarray(v) * np.asarray(w)[..., None, :], dtype, 50)
  _close(np.sort_complex(np.asarray(LA.eigvals(a)).ravel()),
         np.sort_complex(np.linalg.eigvals(af).ravel()), dtype, 50)


# ----------------------------------------------------------------------------
# Products and array-API names


def test_products_match_numpy(rng):
  a, b = _random(rng, (2, 3, 4), np.float32), _random(rng, (2, 4, 5), np.float32)
  _close(LA.matmul(a, b), np.matmul(a, b), np.float32)
  _close(LA.tensordot(a, b[0], axes=1), np.tensordot(a, b[0], 1), np.float32)
  _close(LA.tensordot(a, b, axes=([0, 2], [0, 1])), np.tensordot(a, b, ([0, 2], [0, 1])),
         np.float32)
  _close(LA.tensordot(a[0], a[1], axes=2), np.tensordot(a[0], a[1], 2), np.float32)
  c, d = _random(rng, (3, 4), np.complex64), _random(rng, (2, 3, 4), np.complex64)
  _close(LA.vecdot(c, d), np.linalg.vecdot(c, d), np.complex64)
  _close(LA.vecdot(c.T, d.transpose(0, 2, 1), axis=-2),
         np.linalg.vecdot(c.T, d.transpose(0, 2, 1), axis=-2), np.complex64)
  _close(LA.outer(np.arange(3), np.arange(4.)), np.outer(np.arange(3), np.arange(4.)),
         np.float64)
  u, v = _random(rng, (2, 3), np.float64), _random(rng, (3,), np.float64)
  _close(LA.cross(u, v), np.linalg.cross(u, v), np.float64)
  _close(LA.cross(u.T, np.stack([v, v], 1), axis=0), np.cross(u.T, np.stack([v, v], 1), axis=0),
         np.float64)
  mats = [_random(rng, s, np.float64) for s in [(3,), (3, 4), (4, 6), (6, 2), (2,)]]
  _close(LA.multi_dot(mats), np.linalg.multi_dot(mats), np.float64)
  _close(LA.multi_dot(mats[1:3]), mats[1] @ mats[2], np.float64)


def test_structure_functions_match_numpy(rng):
  x = _random(rng, (2, 3, 4), np.float32)
  for offset in (-1, 0, 2):
    _close(LA.diagonal(x, offset=offset), np.linalg.diagonal(x, offset=offset), np.float32)
    _close(LA.trace(x, offset=offset), np.linalg.trace(x, offset=offset), np.float32)
  assert LA.trace(np.ones((2, 2), np.int8), dtype=np.float32).dtype == np.float32
  np.testing.assert_array_equal(LA.matrix_transpose(x), np.linalg.matrix_transpose(x))


def test_product_errors():
  with pytest.raises(ValueError, match=r"Input arrays must be one-dimensional, but they are "
                     "x1.ndim=2 x2.ndim=1"):
    LA.outer(np.ones((2, 2)), np.ones(2))
  with pytest.raises(ValueError, match="Both input arrays must be \\(arrays of\\) "
                     "3-dimensional vectors, but they have x1.shape\\[axis\\]=2"):
    LA.cross(np.ones(2), np.ones(3))
  with pytest.raises(ValueError, match="matrix_transpose requires at least 2 dimensions; "
                     "got ndim=1"):
    LA.matrix_transpose(np.ones(3))
  with pytest.raises(ValueError, match="multi_dot: input arrays must all be two-dimensional, "
                     "except for the first and last array which may be 1 or 2 dimensional. "
                     r"Got array shapes \[\(\), \(\)\]"):
    LA.multi_dot([np.ones(2)])  # as in JAX: one array is split into its rows
  with pytest.raises(ValueError, match="Input arrays must be one-dimensional, but they are "
                     "x1.ndim=1 x2.ndim=0"):
    LA.outer(np.ones(2), 3)
  with pytest.raises(ValueError, match="multi_dot: input arrays must all be two-dimensional"):
    LA.multi_dot([np.ones((2, 2)), np.ones(2), np.ones((2, 2))])
  with pytest.raises(ValueError, match="multi_dot: last dimension of each array must match"):
    LA.multi_dot([np.ones((2, 3)), np.ones((2, 2))])


# ----------------------------------------------------------------------------
# jit, vmap


JIT_CASES = [
    ("det", lambda a: LA.det(a)),
    ("slogdet", lambda a: LA.slogdet(a)),
    ("inv", lambda a: LA.inv(a)),
    ("solve", lambda a: LA.solve(a, a[..., :2])),
    ("norm_nuc", lambda a: LA.norm(a, "nuc", axis=(-2, -1))),
    ("pinv", lambda a: LA.pinv(a)),
    ("eigh", lambda a: LA.eigh(a + jnp.swapaxes(a, -1, -2)).eigenvalues),
    ("svdvals", lambda a: LA.svdvals(a)),
    ("cond", lambda a: LA.cond(a, 1)),
    ("matrix_rank", lambda a: LA.matrix_rank(a)),
    ("qr", lambda a: LA.qr(a).R),
]


@pytest.mark.parametrize("name, fn", JIT_CASES, ids=[c[0] for c in JIT_CASES])
def test_jit_matches_eager_and_vmap_matches_loop(rng, name, fn):
  a = _well_conditioned(rng, (3, 4, 4), np.float64)
  eager = fn(a)
  jitted = xjax.jit(fn)(a)
  mapped = xjax.vmap(fn)(a)
  looped = [fn(a[i]) for i in range(3)]
  for e, j, m, *ls in zip(*map(xjax.tree_util.tree_leaves, (eager, jitted, mapped, *looped)),
                          strict=True):
    _close(j, e, np.float64)
    _close(m, np.stack(ls), np.float64)


def test_vmap_of_solve_with_unbatched_operand(rng):
  a = _well_conditioned(rng, (4, 4), np.float32)
  bs = _random(rng, (3, 4), np.float32)
  out = xjax.vmap(LA.solve, in_axes=(None, 0))(a, bs)
  _close(out, np.stack([np.linalg.solve(a, b) for b in bs]), np.float32)
  as_ = _well_conditioned(rng, (3, 4, 4), np.float32)
  out = xjax.vmap(LA.solve, in_axes=(0, None), out_axes=1)(as_, bs[0])
  _close(out, np.stack([np.linalg.solve(m, bs[0]) for m in as_], 1), np.float32)


# ----------------------------------------------------------------------------
# Derivatives (float64)


def _sym(a):
  return (a + jnp.swapaxes(a, -1, -2)) / 2


# (name, function, shape, second): all check order 1 forward and reverse; `second` cases
# order 2 forward as well.
GRAD_CASES = [
    ("det", lambda a: LA.det(a), (3, 3), True),
    ("det_4x4", lambda a: LA.det(a), (4, 4), False),
    ("det_2x2_batched", lambda a: LA.det(a), (2, 2, 2), True),
    ("slogdet", lambda a: LA.slogdet(a).logabsdet, (4, 4), True),
    ("slogdet_small", lambda a: LA.slogdet(a).logabsdet, (2, 2), False),
    ("slogdet_qr", lambda a: LA.slogdet(a, method="qr").logabsdet, (3, 3), False),
    ("inv", lambda a: LA.inv(a), (3, 3), True),
    ("solve_vec", lambda a: LA.solve(a, jnp.arange(3.) + a[0]), (3, 3), True),
    ("solve_mat", lambda a: LA.solve(a[..., :3], a[..., 3:]), (2, 3, 5), False),
    ("norm_fro", lambda a: LA.norm(a), (3, 4), True),
    ("norm_vec3", lambda a: LA.norm(a, ord=3, axis=1), (3, 4), False),
    ("norm_2", lambda a: LA.norm(a, ord=2), (3, 3), False),
    ("norm_nuc", lambda a: LA.norm(a, ord="nuc"), (3, 4), False),
    ("pinv", lambda a: LA.pinv(a), (4, 3), True),
    ("pinv_wide", lambda a: LA.pinv(a), (2, 3), False),
    ("eigh", lambda a: LA.eigh(_sym(a)).eigenvalues, (3, 3), True),
    ("eigh_vectors", lambda a: jnp.abs(LA.eigh(_sym(a)).eigenvectors), (3, 3), False),
    ("svdvals", lambda a: LA.svdvals(a), (4, 3), True),
    ("cholesky", lambda a: LA.cholesky(a @ a.T + 3 * jnp.eye(3)), (3, 3), False),
]


@pytest.mark.parametrize("name, fn, shape, full", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_grads_match_finite_differences(rng, name, fn, shape, full):
  a = _random(rng, shape, np.float64)
  if shape[-1] == shape[-2] and name not in ("eigh", "eigh_vectors", "norm_2", "cholesky"):
    a = a + 2 * np.eye(shape[-1])
  if full:  # second order forward (reverse of reverse costs several times more)
    jtu.check_grads(fn, (a,), order=2, modes=("fwd",), atol=1e-5, rtol=1e-5, eps=1e-6)
  jtu.check_grads(fn, (a,), order=1, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5, eps=1e-6)


@pytest.mark.parametrize("fn", [LA.inv, lambda a: LA.norm(a, ord=3, axis=0), LA.det],
                         ids=["inv", "norm3", "det3x3"])
def test_second_order_reverse_grads(rng, fn):
  a = _random(rng, (3, 3), np.float64) + 2 * np.eye(3)
  jtu.check_grads(fn, (a,), order=2, modes=("rev",), atol=1e-5, rtol=1e-5)


def test_complex_grads(rng):
  a = _random(rng, (3, 3), np.complex128) + 3 * np.eye(3)
  jtu.check_grads(lambda a: LA.slogdet(a).logabsdet, (a,), order=1, atol=1e-5, rtol=1e-5)
  jtu.check_grads(LA.det, (a,), order=1, atol=1e-5, rtol=1e-5)


def test_det_grad_of_singular_matrix_is_the_adjugate_transpose():
  a = np.array([[1., 2., 3.], [2., 4., 6.], [0., 1., 1.]])
  cof = np.array([[np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) * (-1) ** (i + j)
                   for j in range(3)] for i in range(3)])
  _close(xjax.grad(LA.det)(a), cof, np.float64)


# ----------------------------------------------------------------------------
# Printed jaxprs (recorded from JAX 0.10.2)


NORM_JAXPR = """\
{ lambda ; a:f32[3,3]. let
    b:f32[] = jit[
      name=norm
      jaxpr={ lambda ; a:f32[3,3]. let
          c:f32[3,3] = mul a a
          d:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
          b:f32[] = sqrt d
        in (b,) }
    ] a
  in (b,) }"""

NORM_ORD1_JAXPR = """\
{ lambda ; a:f32[3,3]. let
    b:f32[3] = jit[
      name=norm
      jaxpr={ lambda ; a:f32[3,3]. let
          c:f32[3,3] = abs a
          b:f32[3] = reduce_sum[axes=(1,) out_sharding=None] c
        in (b,) }
    ] a
  in (b,) }"""

SOLVE_JAXPR = """\
let _lu_solve = { lambda ; a:f32[3,3] b:i32[3] c:f32[3]. let
    d:f32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] c
    e:f32[3,1] = triangular_solve[
      conjugate_a=False
      left_side=True
      lower=False
      transpose_a=True
      unit_diagonal=False
    ] a d
    f:f32[3,1] = triangular_solve[
      conjugate_a=False
      left_side=True
      lower=True
      transpose_a=True
      unit_diagonal=True
    ] a e
    g:i32[3] = iota[dimension=0 dtype=int32 shape=(3,) sharding=None] 
    h:i32[3] i:i32[3] = sort[dimension=0 is_stable=True num_keys=1] b g
    j:bool[3] = lt i 0:i32[]
    k:i32[3] = add i 3:i32[]
    l:i32[3] = select_n j i k
    m:i32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] l
    n:f32[3,1] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1, 1)
      unique_indices=False
    ] f m
    o:f32[3] = squeeze[dimensions=(1,)] n
  in (o,) } in
{ lambda ; p:f32[3,3] q:f32[3]. let
    r:f32[3] = jit[
      name=solve
      jaxpr={ lambda ; p:f32[3,3] q:f32[3]. let
          s:f32[3,3] = stop_gradient p
          t:f32[3,3] u:i32[3] v:i32[3] = lu s
          r:f32[3] = custom_linear_solve[
            const_lengths=_LinearSolveTuple(matvec=1, vecmat=1, solve=2, transpose_solve=2)
            jaxprs=_LinearSolveTuple(matvec={ lambda ; a:f32[3,3] b:f32[3]. let
    c:f32[3] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
    ] a b
  in (c,) }, vecmat={ lambda ; a:f32[3,3] b:f32[3]. let
    c:f32[3] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
    ] b a
    d:f32[3] = reduce_sum[axes=() out_sharding=None] c
  in (d,) }, solve={ lambda ; a:f32[3,3] b:i32[3] c:f32[3]. let
    d:f32[3] = jit[
      name=_lu_solve
      jaxpr={ lambda ; a:f32[3,3] b:i32[3] c:f32[3]. let
          e:f32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] c
          f:bool[3] = lt b 0:i32[]
          g:i32[3] = add b 3:i32[]
          h:i32[3] = select_n f b g
          i:i32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] h
          j:f32[3,1] = gather[
            dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
            fill_value=None
            indices_are_sorted=False
            mode=GatherScatterMode.PROMISE_IN_BOUNDS
            slice_sizes=(1, 1)
            unique_indices=False
          ] e i
          k:f32[3,1] = triangular_solve[
            conjugate_a=False
            left_side=True
            lower=True
            transpose_a=False
            unit_diagonal=True
          ] a j
          l:f32[3,1] = triangular_solve[
            conjugate_a=False
            left_side=True
            lower=False
            transpose_a=False
            unit_diagonal=False
          ] a k
          d:f32[3] = squeeze[dimensions=(1,)] l
        in (d,) }
    ] a b c
  in (d,) }, transpose_solve=let _lu_solve = { lambda ; a:f32[3,3] b:i32[3] c:f32[3]. let
    d:f32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] c
    e:f32[3,1] = triangular_solve[
      conjugate_a=False
      left_side=True
      lower=False
      transpose_a=True
      unit_diagonal=False
    ] a d
    f:f32[3,1] = triangular_solve[
      conjugate_a=False
      left_side=True
      lower=True
      transpose_a=True
      unit_diagonal=True
    ] a e
    g:i32[3] = iota[dimension=0 dtype=int32 shape=(3,) sharding=None] 
    h:i32[3] i:i32[3] = sort[dimension=0 is_stable=True num_keys=1] b g
    j:bool[3] = lt i 0:i32[]
    k:i32[3] = add i 3:i32[]
    l:i32[3] = select_n j i k
    m:i32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] l
    n:f32[3,1] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1, 1)
      unique_indices=False
    ] f m
    o:f32[3] = squeeze[dimensions=(1,)] n
  in (o,) } in
{ lambda ; p:f32[3,3] q:i32[3] r:f32[3]. let
    s:f32[3] = jit[name=_lu_solve jaxpr=_lu_solve] p q r
  in (s,) })
          ] p p t v t v q
        in (r,) }
    ] p q
  in (r,) }"""


def test_norm_jaxprs_match_jax():
  with xjax._src.config.enable_x64(False):
    x = np.ones((3, 3), np.float32)
    assert str(xjax.make_jaxpr(LA.norm)(x)) == NORM_JAXPR
    assert str(xjax.make_jaxpr(lambda x: LA.norm(x, ord=1, axis=1))(x)) == NORM_ORD1_JAXPR


@pytest.mark.xfail(strict=True, reason="issue 14: custom_linear_solve's vecmat (the transpose "
                   "of dot_general) lacks JAX's `reduce_sum[axes=()]` equation")
def test_solve_jaxpr_matches_jax():
  with xjax._src.config.enable_x64(False):
    x, b = np.ones((3, 3), np.float32), np.ones(3, np.float32)
    assert str(xjax.make_jaxpr(LA.solve)(x, b)) == SOLVE_JAXPR


def test_solve_jaxpr_matches_jax_apart_from_vecmat_reduce_sum():
  with xjax._src.config.enable_x64(False):
    x, b = np.ones((3, 3), np.float32), np.ones(3, np.float32)
    expected = SOLVE_JAXPR.replace("    d:f32[3] = reduce_sum[axes=() out_sharding=None] c\n"
                                   "  in (d,) }, solve=", "  in (c,) }, solve=")
    assert str(xjax.make_jaxpr(LA.solve)(x, b)) == expected
