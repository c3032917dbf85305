"""xjax.scipy.linalg: values against SciPy, reconstruction identities, dtypes,
batch dimensions, vmap, jit against eager, derivatives, printed jaxprs and
errors (JAX's classes and messages)."""

import numpy as np
import pytest
import scipy.linalg as sla

import xjax
import xjax.numpy as jnp
import xjax.scipy.linalg as L
from xjax._src import test_util as jtu
from xjax._src.config import enable_x64

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
REAL = [np.float32, np.float64]


def _tol(dtype):
  return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


def _random(rng, shape, dtype):
  x = rng.standard_normal(shape)
  if np.issubdtype(dtype, np.complexfloating):
    x = x + 1j * rng.standard_normal(shape)
  return x.astype(dtype)


def _H(x):
  return np.conj(np.swapaxes(x, -1, -2))


def _spd(rng, shape, dtype):
  """Well-conditioned Hermitian positive-definite matrices of `shape` (..., n, n)."""
  a = _random(rng, shape, dtype)
  return (a @ _H(a) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _well_conditioned(rng, shape, dtype):
  return (_random(rng, shape, dtype) + 3 * np.eye(shape[-1])).astype(dtype)


def _close(actual, expected, dtype, scale=1.0):
  actual = np.asarray(actual)
  assert actual.dtype == np.dtype(dtype), (actual.dtype, dtype)
  np.testing.assert_allclose(actual, expected, rtol=_tol(dtype) * scale, atol=_tol(dtype) * scale)


@pytest.fixture(autouse=True)
def _x64_for_all():
  with enable_x64(True):
    yield


# ----------------------------------------------------------------------------
# Cholesky


@pytest.mark.parametrize("dtype,lower", list(zip(DTYPES, [False, True, True, False])))
def test_cholesky_and_cho_solve_match_scipy(rng, dtype, lower):
  a = _spd(rng, (4, 4), dtype)
  b = _random(rng, (4, 3), dtype)
  _close(L.cholesky(a, lower=lower), sla.cholesky(a, lower=lower), dtype)
  c, flag = L.cho_factor(a, lower=lower)
  assert flag is lower
  _close(L.cho_solve((c, lower), b), sla.cho_solve((sla.cholesky(a, lower=lower), lower), b),
         dtype, 10)
  _close(L.cho_solve((c, lower), b[:, 0]), np.linalg.solve(a, b[:, 0]), dtype, 10)


def test_cholesky_reads_one_triangle_and_batches(rng):
  a = _spd(rng, (2, 3, 4, 4), np.float64)
  garbage = np.triu(np.full((4, 4), 7.0), 1)
  upper = L.cholesky(a + garbage.T, lower=False)
  lower = L.cholesky(a + garbage, lower=True)
  np.testing.assert_allclose(upper, _H(np.linalg.cholesky(a)), rtol=1e-10)
  np.testing.assert_allclose(lower, np.linalg.cholesky(a), rtol=1e-10)
  b = _random(rng, (4, 2), np.float64)  # unbatched b broadcasts against batched c
  np.testing.assert_allclose(L.cho_solve((lower, True), b), np.linalg.solve(a, b), rtol=1e-9)


def test_cholesky_promotes_integers_and_ignores_scipy_flags():
  out = L.cholesky(4 * np.eye(2, dtype=np.int64), overwrite_a=True, check_finite=False)
  assert out.dtype == np.float64
  assert L.cholesky(np.eye(2, dtype=np.int32)).dtype == np.float32  # JAX: int32 -> float32
  np.testing.assert_array_equal(out, 2 * np.eye(2))
  # check_finite=True does not raise on NaN (compiled code does not check values).
  assert np.isnan(np.diag(L.cholesky(np.full((2, 2), np.nan), check_finite=True))).all()


def test_cho_solve_batched_vector_warns_as_in_jax(rng):
  a = _spd(rng, (2, 3, 3), np.float64)
  b = _random(rng, (2, 3), np.float64)
  with pytest.warns(FutureWarning, match=r"cho_solve\(c_and_lower, b\[..., None\]\)"):
    x = L.cho_solve((L.cholesky(a, lower=True), True), b)
  np.testing.assert_allclose(x, np.linalg.solve(a, b[..., None])[..., 0], rtol=1e-9)


def test_cho_solve_grads(rng):
  a = _spd(rng, (3, 3), np.float64)
  c = np.linalg.cholesky(a)
  b = _random(rng, (3, 2), np.float64)
  jtu.check_grads(lambda c, b: L.cho_solve((c, True), b), (c, b), order=1, modes=("fwd", "rev"))


# ----------------------------------------------------------------------------
# Triangular and general solves


# Each case compiles; the dtype x trans x lower product is sampled so that every
# value of each parameter appears.
@pytest.mark.parametrize("dtype,trans,lower", [
    (np.float32, 0, False), (np.float64, "T", True), (np.complex64, 2, False),
    (np.complex128, "C", True), (np.complex128, 1, False), (np.float64, "N", True)])
def test_solve_triangular_matches_scipy(rng, dtype, trans, lower):
  a = _well_conditioned(rng, (4, 4), dtype)
  b = _random(rng, (4, 2), dtype)
  expected = sla.solve_triangular(a, b, trans=trans, lower=lower)
  _close(L.solve_triangular(a, b, trans=trans, lower=lower), expected, dtype, 10)
  _close(xjax.jit(L.solve_triangular, static_argnames=("trans", "lower"))(
      a, b, trans=trans, lower=lower), expected, dtype, 10)


def test_solve_triangular_unit_diagonal_vectors_and_batches(rng):
  a = _well_conditioned(rng, (2, 4, 4), np.float64)
  b = _random(rng, (4,), np.float64)
  out = L.solve_triangular(a, b, lower=True, unit_diagonal=True, overwrite_b=True, debug=0,
                           check_finite=False)
  for i in range(2):
    unit = np.tril(a[i], -1) + np.eye(4)
    np.testing.assert_allclose(out[i], np.linalg.solve(unit, b), rtol=1e-10)
  with pytest.warns(FutureWarning, match=r"solve_triangular\(a, b\[..., None\]\)"):
    batched = L.solve_triangular(a, np.stack([b, 2 * b]))
  np.testing.assert_allclose(batched[1], sla.solve_triangular(a[1], 2 * b), rtol=1e-10)


def test_solve_triangular_promotes_mixed_dtypes():
  a = np.eye(3, dtype=np.int32)
  assert L.solve_triangular(a, np.ones(3, np.float32)).dtype == np.float32
  assert L.solve_triangular(a, np.ones(3, np.int32)).dtype == np.float32
  assert L.solve_triangular(a, np.ones(3, np.int64)).dtype == np.float64
  assert L.solve_triangular(a.astype(np.float32), np.ones(3, np.complex64)).dtype == np.complex64


def test_solve_triangular_bad_trans():
  with pytest.raises(ValueError, match="Invalid 'trans' value 3"):
    L.solve_triangular(np.eye(2), np.ones(2), trans=3)


def test_solve_triangular_grads(rng):
  a = _well_conditioned(rng, (3, 3), np.float64)
  b = _random(rng, (3, 2), np.float64)
  jtu.check_grads(lambda a, b: L.solve_triangular(a, b, lower=True, trans=1), (a, b), order=2)


def test_solve_triangular_vmap_matches_loop(rng):
  a = _well_conditioned(rng, (3, 4, 4), np.float64)
  b = _random(rng, (4, 3), np.float64)
  out = xjax.vmap(lambda a, b: L.solve_triangular(a, b, lower=True), in_axes=(0, 1))(a, b)
  np.testing.assert_allclose(out, np.stack([sla.solve_triangular(a[i], b[:, i], lower=True)
                                            for i in range(3)]), rtol=1e-10)


@pytest.mark.parametrize("dtype,assume_a", [
    (np.float32, "gen"), (np.float64, "pos"), (np.complex64, "pos"), (np.complex128, "her"),
    (np.float64, "sym")])
def test_solve_matches_numpy(rng, dtype, assume_a):
  a = _spd(rng, (4, 4), dtype)
  b = _random(rng, (4, 2), dtype)
  _close(L.solve(a, b, assume_a=assume_a), np.linalg.solve(a, b), dtype, 10)
  _close(L.solve(a, b[:, 0], assume_a=assume_a), np.linalg.solve(a, b[:, 0]), dtype, 10)


@pytest.mark.filterwarnings("ignore:jax.scipy.linalg.cho_solve:FutureWarning")  # JAX warns too
def test_solve_pos_reads_lower_or_upper_triangle_and_batches(rng):
  a = _spd(rng, (2, 4, 4), np.float64)
  b = _random(rng, (2, 4, 3), np.float64)
  expected = np.linalg.solve(a, b)
  garbage = np.triu(np.full((4, 4), 5.0), 1)
  np.testing.assert_allclose(L.solve(a + garbage, b, assume_a="pos", lower=True), expected,
                             rtol=1e-9)
  np.testing.assert_allclose(L.solve(a + garbage.T, b, assume_a="pos"), expected, rtol=1e-9)
  np.testing.assert_allclose(L.solve(a[0], b[0, :, 0], assume_a="pos"),
                             np.linalg.solve(a[0], b[0, :, 0]), rtol=1e-9)


@pytest.mark.parametrize("assume_a", ["gen", "pos"])
def test_solve_grads(rng, assume_a):
  a = _spd(rng, (3, 3), np.float64)
  b = _random(rng, (3,), np.float64)
  if assume_a == "pos":  # derivatives with respect to a symmetric matrix
    f = lambda a, b: L.solve((a + a.T) / 2, b, assume_a="pos")  # noqa: E731
  else:
    f = lambda a, b: L.solve(a, b)  # noqa: E731
  jtu.check_grads(f, (a, b), order=1)


def test_solve_errors():
  with pytest.raises(ValueError, match=r"Expected assume_a to be one of \['gen', 'sym', 'her', "
                                       r"'pos'\]; got 'banded'"):
    L.solve(np.eye(2), np.ones(2), assume_a="banded")
  with pytest.raises(ValueError, match=r"The arguments to solve must have shapes a=\[..., m, m\] "
                                       r"and b=\[..., m, k\] or b=\[..., m\]; got a=\(3, 3\) and "
                                       r"b=\(2,\)"):
    L.solve(np.eye(3), np.ones(2), assume_a="pos")


# ----------------------------------------------------------------------------
# LU


@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_factor_and_lu_solve_match_scipy(rng, dtype):
  a = _well_conditioned(rng, (4, 4), dtype)
  b = _random(rng, (4, 3), dtype)
  lu, piv = L.lu_factor(a, overwrite_a=True, check_finite=False)
  lu_s, piv_s = sla.lu_factor(a)
  _close(lu, lu_s, dtype, 10)
  assert piv.dtype == np.int32
  np.testing.assert_array_equal(piv, piv_s)
  for trans in (0, 1, 2):
    _close(L.lu_solve((lu, piv), b, trans=trans), sla.lu_solve((lu_s, piv_s), b, trans=trans),
           dtype, 10)


def test_lu_factor_batched_and_rectangular(rng):
  a = _random(rng, (2, 3, 5), np.float64)
  lu, piv = L.lu_factor(a)
  assert lu.shape == (2, 3, 5) and piv.shape == (2, 3)
  for i in range(2):
    lu_s, piv_s = sla.lu_factor(a[i])
    np.testing.assert_allclose(lu[i], lu_s, rtol=1e-10)
    np.testing.assert_array_equal(piv[i], piv_s)


def test_lu_solve_broadcasts_and_warns_on_batched_vectors(rng):
  a = _well_conditioned(rng, (2, 3, 3), np.float64)
  lu_piv = L.lu_factor(a)
  b = _random(rng, (3,), np.float64)
  np.testing.assert_allclose(L.lu_solve(lu_piv, b), np.linalg.solve(a, b[None, :, None])[..., 0],
                             rtol=1e-10)
  with pytest.warns(FutureWarning, match=r"lu_solve\(lu_and_piv, b\[..., None\]\)"):
    L.lu_solve(lu_piv, np.stack([b, b]))


def test_lu_solve_grads(rng):
  a = _well_conditioned(rng, (3, 3), np.float64)
  b = _random(rng, (3, 2), np.float64)
  lu, piv = L.lu_factor(a)
  jtu.check_grads(lambda lu, b: L.lu_solve((lu, piv), b, trans=1), (np.asarray(lu), b), order=1)


@pytest.mark.parametrize("dtype,shape", list(zip(DTYPES, [(4, 4), (5, 3), (3, 5), (4, 4)])))
def test_lu_matches_scipy(rng, dtype, shape):
  a = _random(rng, shape, dtype)
  p, l, u = L.lu(a)
  p_s, l_s, u_s = sla.lu(a)
  assert p.dtype == np.finfo(dtype).dtype  # a real permutation matrix, as in JAX
  np.testing.assert_array_equal(p, p_s)
  _close(l, l_s, dtype, 10)
  _close(u, u_s, dtype, 10)
  pl, u2 = L.lu(a, permute_l=True)
  _close(pl, p_s @ l_s, dtype, 10)
  _close(pl @ u2, a, dtype, 10)


def test_lu_takes_no_batch_dims_and_no_vectors():
  with pytest.raises(ValueError, match="too many values to unpack"):
    L.lu(np.ones((2, 3, 3)))
  with pytest.raises(TypeError, match=r"Input 0 to lu must have rank at least 2, but got "
                                      r"shape=\(4,\)"):
    L.lu(np.ones(4))


def test_lu_solve_bad_trans():
  lu_piv = L.lu_factor(np.eye(2))
  with pytest.raises(ValueError):
    L.lu_solve(lu_piv, np.ones(2), trans=3)


# ----------------------------------------------------------------------------
# QR


@pytest.mark.parametrize("dtype,shape,mode", [
    (np.float32, (4, 3), "full"), (np.float64, (3, 4), "economic"), (np.complex64, (4, 3), "r"),
    (np.complex128, (4, 3), "economic"), (np.float64, (3, 4), "r"),
    (np.complex128, (3, 4), "full")])
def test_qr_matches_scipy(rng, dtype, shape, mode):
  a = _random(rng, shape, dtype)
  out = L.qr(a, mode=mode, overwrite_a=True, lwork=3, check_finite=False)
  expected = sla.qr(a, mode=mode)
  assert len(out) == len(expected)
  for x, y in zip(out, expected):
    _close(x, y, dtype, 10)


def test_qr_pivoting_reconstructs(rng):
  a = _random(rng, (2, 5, 3), np.float64)
  q, r, p = L.qr(a, pivoting=True, mode="economic")
  assert p.dtype == np.int32 and q.shape == (2, 5, 3) and r.shape == (2, 3, 3)
  for i in range(2):
    np.testing.assert_allclose(q[i] @ r[i], a[i][:, np.asarray(p[i])], atol=1e-12)
    _, r_s, p_s = sla.qr(a[i], pivoting=True, mode="economic")
    np.testing.assert_array_equal(p[i], p_s)
    np.testing.assert_allclose(r[i], r_s, atol=1e-12)
  r_only, p_only = L.qr(a[0], mode="r", pivoting=True)
  assert r_only.shape == (5, 3) and p_only.shape == (3,)


def test_qr_bad_mode():
  with pytest.raises(ValueError, match="Unsupported QR decomposition mode 'raw'"):
    L.qr(np.eye(2), mode="raw")


@pytest.mark.parametrize("dtype,shape,mode,pivoting,conjugate", [
    (np.float64, (5, 3), "right", False, False), (np.complex128, (3, 5), "right", True, True),
    (np.complex128, (5, 3), "left", False, True), (np.float64, (3, 5), "left", True, False),
    (np.complex128, (5, 3), "right", True, False), (np.float64, (5, 3), "left", True, True)])
def test_qr_multiply_matches_scipy(rng, dtype, shape, mode, pivoting, conjugate):
  a = _random(rng, shape, dtype)
  k = min(shape)
  c = _random(rng, (k, 2) if mode == "left" else (2, shape[0]), dtype)
  out = L.qr_multiply(a, c, mode=mode, pivoting=pivoting, conjugate=conjugate)
  expected = sla.qr_multiply(a, c, mode=mode, pivoting=pivoting, conjugate=conjugate)
  assert len(out) == len(expected)
  for x, y in zip(out, expected):
    np.testing.assert_allclose(x, y, atol=1e-10)


def test_qr_multiply_vector_and_errors(rng):
  a = _random(rng, (5, 3), np.float64)
  c = _random(rng, (5,), np.float64)
  np.testing.assert_allclose(L.qr_multiply(a, c)[0], sla.qr_multiply(a, c)[0], atol=1e-12)
  with pytest.raises(ValueError, match="mode must be 'right' or 'left', got 'up'"):
    L.qr_multiply(a, c, mode="up")
  with pytest.raises(ValueError, match=r"Array shapes are not compatible for c @ Q operation: a "
                                       r"has shape \(5, 3\) so Q has 5 rows, but c has 4 columns"):
    L.qr_multiply(a, np.ones(4))
  with pytest.raises(ValueError, match=r"Q @ c operation: a has shape \(5, 3\) so Q has 3 "
                                       r"columns, but c has 4 rows \(expected 3\)"):
    L.qr_multiply(a, np.ones(4), mode="left")


# ----------------------------------------------------------------------------
# SVD, det, inv, eigh, Schur, Hessenberg


@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_det_inv_eigh_match_scipy(rng, dtype):
  a = _well_conditioned(rng, (2, 4, 4), dtype)
  h = _spd(rng, (4, 4), dtype)
  for i in range(2):
    _close(L.svd(a, compute_uv=False)[i], sla.svd(a[i], compute_uv=False), np.finfo(dtype).dtype,
           10)
    _close(L.det(a, overwrite_a=True)[i], sla.det(a[i]), dtype, 100)
    _close(L.inv(a, check_finite=False)[i], sla.inv(a[i]), dtype, 10)
  u, s, vh = L.svd(a[0], full_matrices=False, lapack_driver="gesvd")
  _close((u * s.astype(dtype)) @ vh, a[0], dtype, 10)
  assert L.svd(a[0])[0].shape == (4, 4)
  w, v = L.eigh(h, turbo=False)
  _close(w, sla.eigh(h, eigvals_only=True), np.finfo(dtype).dtype, 10)
  _close(v @ np.diag(np.asarray(w)) @ _H(np.asarray(v)), h, dtype, 10)
  # As in JAX, the input is symmetrized first: `lower` picks the kernel's triangle only.
  _close(L.eigh(h, lower=False, eigvals_only=True), np.asarray(w), w.dtype, 10)


def test_det_and_inv_grads(rng):
  a = _well_conditioned(rng, (3, 3), np.float64)
  jtu.check_grads(L.det, (a,), order=2)
  jtu.check_grads(L.inv, (a,), order=1)


def test_eigh_unimplemented_options():
  with pytest.raises(NotImplementedError, match="Only the b=None case of eigh is implemented"):
    L.eigh(np.eye(2), np.eye(2))
  with pytest.raises(NotImplementedError, match="Only the type=1 case of eigh is implemented."):
    L.eigh(np.eye(2), type=2)
  with pytest.raises(NotImplementedError, match="Only the eigvals=None case"):
    L.eigh(np.eye(2), eigvals=(0, 1))


@pytest.mark.parametrize("dtype,output",
                         list(zip(DTYPES, ["real", "complex", "real", "complex"])))
def test_schur_reconstructs(rng, dtype, output):
  a = _random(rng, (4, 4), dtype)
  t, z = L.schur(a, output=output)
  out_dtype = dtype if output == "real" else np.result_type(dtype, np.complex64)
  assert t.dtype == out_dtype and z.dtype == out_dtype
  _close(z @ t @ _H(np.asarray(z)), a, out_dtype, 10)
  if output == "complex":
    assert np.all(np.tril(np.asarray(t), -1) == 0)
    _close(np.sort_complex(np.diag(np.asarray(t))), np.sort_complex(np.linalg.eigvals(a)),
           out_dtype, 10)


def test_schur_errors():
  with pytest.raises(ValueError, match="Expected 'output' to be either 'real' or 'complex', "
                                       "got output='x'."):
    L.schur(np.eye(2), output="x")


@pytest.mark.parametrize("dtype", DTYPES)
def test_hessenberg_matches_scipy(rng, dtype):
  a = _random(rng, (5, 5), dtype)
  h, q = L.hessenberg(a, calc_q=True)
  h_s, q_s = sla.hessenberg(a, calc_q=True)
  _close(h, h_s, dtype, 10)
  _close(q, q_s, dtype, 10)
  _close(L.hessenberg(a), h_s, dtype, 10)


def test_hessenberg_batched_and_empty(rng):
  a = _random(rng, (2, 4, 4), np.complex128)
  h, q = L.hessenberg(a, calc_q=True)
  np.testing.assert_allclose(q @ h @ _H(np.asarray(q)), a, atol=1e-12)
  h0, q0 = L.hessenberg(np.zeros((0, 0), np.float32), calc_q=True)
  assert h0.shape == q0.shape == (0, 0) and h0.dtype == np.float32


# ----------------------------------------------------------------------------
# Matrix exponential


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scale", [0.005, 0.1, 0.5, 1.5, 3.0, 40.0])
def test_expm_matches_scipy_at_every_pade_degree(rng, dtype, scale):
  a = (_random(rng, (4, 4), dtype) * scale / 4).astype(dtype)
  expected = sla.expm(a)
  _close(L.expm(a), expected, dtype, 10 * max(1.0, np.abs(expected).max()))


def test_expm_batched_triangular_and_integer(rng):
  a = _random(rng, (2, 3, 3), np.float32)
  with enable_x64(False):
    out = L.expm(a)
  for i in range(2):
    np.testing.assert_allclose(out[i], sla.expm(a[i]), rtol=1e-5)
  t = np.triu(a[0]).astype(np.float64)
  np.testing.assert_allclose(L.expm(t, upper_triangular=True), sla.expm(t), rtol=1e-10)
  i = np.array([[0, 1], [0, 0]], np.int64)
  assert L.expm(i).dtype == np.float64
  np.testing.assert_allclose(L.expm(i), [[1, 1], [0, 1]], rtol=1e-12)


def test_expm_batched_under_x64(rng):
  a = _random(rng, (2, 3, 3), np.float64)
  out = L.expm(a)
  for i in range(2):
    np.testing.assert_allclose(out[i], sla.expm(a[i]), rtol=1e-10)


def test_expm_too_many_squarings_is_nan(rng):
  a = _random(rng, (3, 3), np.float32) * 30
  assert np.isnan(L.expm(a, max_squarings=2)).all()
  assert np.isfinite(L.expm(a)).all()


def test_expm_jit_matches_eager(rng):
  a = _random(rng, (3, 3), np.complex64)
  np.testing.assert_allclose(xjax.jit(L.expm)(a), L.expm(a), rtol=1e-6)


def test_expm_grads(rng):
  # Order 1 only: the second-order programs of the five-branch Pade switch take
  # over a minute to compile.
  a = _random(rng, (3, 3), np.float64) / 2
  jtu.check_grads(L.expm, (a,), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("dtype", [np.float32])
def test_expm_frechet_matches_scipy(rng, dtype):
  a = _random(rng, (4, 4), dtype) / 2
  e = _random(rng, (4, 4), dtype)
  expm_a, frechet = L.expm_frechet(a, e, method="SPS")
  expm_s, frechet_s = sla.expm_frechet(a, e)
  _close(expm_a, expm_s, dtype, 10)
  _close(frechet, frechet_s, dtype, 30)
  _close(L.expm_frechet(a, e, compute_expm=False), frechet_s, dtype, 30)


def test_expm_errors():
  with pytest.raises(ValueError, match=r"Expected A to be a \(batched\) square matrix, got "
                                       r"A.shape=\(2, 3\)."):
    L.expm(np.ones((2, 3)))
  with pytest.raises(ValueError, match=r"expected A and E to be the same shape, got "
                                       r"A.shape=\(3, 3\) E.shape=\(2, 2\)"):
    L.expm_frechet(np.eye(3), np.eye(2))
  with pytest.raises(ValueError, match=r"expected E to be a \(batched\) square matrix"):
    L.expm_frechet(np.eye(3), np.ones((3, 2)))


# ----------------------------------------------------------------------------
# Functions through the Schur form: sqrtm, rsf2csf, funm


@pytest.mark.parametrize("dtype", DTYPES)
def test_sqrtm_matches_scipy(rng, dtype):
  a = _spd(rng, (4, 4), dtype)
  out = L.sqrtm(a)
  out_dtype = np.result_type(dtype, np.complex64)
  _close(out, sla.sqrtm(a), out_dtype, 30)
  _close(out @ out, a, out_dtype, 30)


def test_sqrtm_blocksize():
  with pytest.raises(NotImplementedError, match="Blocked version is not implemented yet."):
    L.sqrtm(np.eye(2), blocksize=2)


@pytest.mark.parametrize("dtype", REAL)
def test_rsf2csf_matches_scipy(rng, dtype):
  a = _random(rng, (5, 5), dtype)
  t, z = sla.schur(a)
  t2, z2 = L.rsf2csf(t, z)
  t_s, z_s = sla.rsf2csf(t, z)
  out_dtype = np.result_type(dtype, np.complex64)
  _close(t2, t_s, out_dtype, 30)
  _close(z2, z_s, out_dtype, 30)
  assert np.all(np.tril(np.asarray(t2), -1) == 0)


def test_rsf2csf_errors():
  with pytest.raises(ValueError, match="Input 'T' must be square."):
    L.rsf2csf(np.ones((2, 3)), np.eye(2))
  with pytest.raises(ValueError, match=r"Input array shapes must match: Z: \(3, 3\) vs. "
                                       r"T: \(2, 2\)"):
    L.rsf2csf(np.eye(2), np.eye(3))


def test_funm_matches_scipy(rng):
  a = _random(rng, (4, 4), np.float64)
  out = L.funm(a, jnp.sin)
  assert out.dtype == np.complex128
  np.testing.assert_allclose(out, sla.funm(a, np.sin), atol=1e-8)
  f, err = L.funm(a, jnp.exp, disp=False)
  np.testing.assert_allclose(f, sla.expm(a), atol=1e-8)
  assert 0 < float(err) <= 1
  with pytest.raises(ValueError, match="expected square array_like input"):
    L.funm(np.ones((2, 3, 3)), jnp.sin)


# ----------------------------------------------------------------------------
# Polar decomposition


@pytest.mark.parametrize("dtype,method", list(zip(DTYPES, ["qdwh", "svd", "svd", "qdwh"])))
def test_polar_matches_scipy(rng, dtype, method):
  a = _random(rng, (5, 3), dtype)
  u, p = L.polar(a, method=method)
  u_s, p_s = sla.polar(a)
  _close(u, u_s, dtype, 50)
  _close(p, p_s, dtype, 50)
  w = _random(rng, (3, 5), dtype)
  u, p = L.polar(w, side="left", method=method)
  u_s, p_s = sla.polar(w, side="left")
  _close(u, u_s, dtype, 50)
  _close(p, p_s, dtype, 50)


def test_polar_batched_and_errors(rng):
  a = _random(rng, (2, 3, 3), np.float64)
  u, p = L.polar(a)
  for i in range(2):
    np.testing.assert_allclose(u[i] @ p[i], a[i], atol=1e-10)
  with pytest.raises(ValueError, match="The input `a` must be at least a 2-D array."):
    L.polar(np.ones(3))
  with pytest.raises(ValueError, match="The argument `side` must be either 'right' or 'left'."):
    L.polar(np.eye(2), side="up")
  with pytest.raises(ValueError, match="Unknown polar decomposition method foo."):
    L.polar(np.eye(2), method="foo")
  with pytest.raises(NotImplementedError, match=r"method='qdwh' only supports"):
    L.polar(np.ones((2, 3)))


# ----------------------------------------------------------------------------
# eigh_tridiagonal


def test_eigh_tridiagonal_matches_scipy(rng):
  dtype = np.float64
  d = _random(rng, (8,), dtype)
  e = _random(rng, (7,), dtype)
  w = L.eigh_tridiagonal(d, e, eigvals_only=True)
  _close(w, sla.eigh_tridiagonal(d, e, eigvals_only=True), dtype, 10)
  w, v = L.eigh_tridiagonal(d, e)
  t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
  _close(t @ np.asarray(v), np.asarray(v) * np.asarray(w), dtype, 30)
  _close(np.asarray(v).T @ np.asarray(v), np.eye(8), dtype, 30)
  d32, e32 = d.astype(np.float32), e.astype(np.float32)
  sel = L.eigh_tridiagonal(d32, e32, eigvals_only=True, select="i", select_range=(2, 4))
  _close(sel, sla.eigh_tridiagonal(d32, e32, eigvals_only=True, select="i", select_range=(2, 4)),
         np.float32, 10)


def test_eigh_tridiagonal_complex_and_trivial():
  d = np.array([1, 2, 3], np.complex128)
  e = np.array([1j, 0.5], np.complex128)
  t = np.diag(d) + np.diag(e, 1) + np.diag(np.conj(e), -1)
  w = L.eigh_tridiagonal(d, e, eigvals_only=True)
  assert w.dtype == np.float64
  np.testing.assert_allclose(w, np.linalg.eigvalsh(t), rtol=1e-12)
  w1, v1 = L.eigh_tridiagonal(np.array([2.0]), np.zeros(0))
  np.testing.assert_array_equal(w1, [2.0])
  np.testing.assert_array_equal(v1, [[1.0]])


def test_eigh_tridiagonal_errors():
  d, e = np.ones(3, np.float32), np.ones(2, np.float32)
  with pytest.raises(TypeError, match="diagonal and off-diagonal values must have same dtype, "
                                      "got float32 and float64"):
    L.eigh_tridiagonal(d, e.astype(np.float64))
  with pytest.raises(TypeError, match="Only float32 and float64 inputs are supported"):
    L.eigh_tridiagonal(np.ones(3, np.int32), np.ones(2, np.int32))
  with pytest.raises(NotImplementedError, match=r"select='v'\) is not implemented"):
    L.eigh_tridiagonal(d, e, select="v")
  with pytest.raises(ValueError, match="for select='i', select_range must be specified."):
    L.eigh_tridiagonal(d, e, select="i")
  with pytest.raises(ValueError, match="Got empty index range in select_range."):
    L.eigh_tridiagonal(d, e, select="i", select_range=(2, 1))


# ----------------------------------------------------------------------------
# Sylvester equations


@pytest.mark.parametrize("dtype,method", list(zip(DTYPES, ["schur", "eigen", "eigen", "schur"])))
def test_solve_sylvester_matches_scipy(rng, dtype, method):
  a = _spd(rng, (4, 4), dtype)
  b = _spd(rng, (3, 3), dtype)
  c = _random(rng, (4, 3), dtype)
  _close(L.solve_sylvester(a, b, c, method=method), sla.solve_sylvester(a, b, c), dtype, 30)


def test_solve_sylvester_singular_and_errors():
  out = L.solve_sylvester(np.eye(2), -np.eye(2), np.ones((2, 2)))
  assert np.isnan(out).all()
  with pytest.raises(ValueError, match="Incompatible shapes for Sylvester equation:\nA: "
                                       r"\(2, 2\)\nB: \(3, 3\)\nC: \(3, 3\)"):
    L.solve_sylvester(np.eye(2), np.eye(3), np.ones((3, 3)))
  with pytest.raises(ValueError, match="Unrecognized method x."):
    L.solve_sylvester(np.eye(2), np.eye(2), np.ones((2, 2)), method="x")


# ----------------------------------------------------------------------------
# block_diag and special matrices


def test_block_diag_matches_scipy():
  blocks = [np.ones((2, 2), np.int32), np.float32(3), np.arange(3, dtype=np.float32)]
  out = L.block_diag(*blocks)
  assert out.dtype == np.float32
  np.testing.assert_array_equal(out, sla.block_diag(*blocks))
  empty = L.block_diag()
  assert empty.shape == (1, 0) and empty.dtype == np.float64
  with pytest.raises(ValueError, match="Arguments to jax.scipy.linalg.block_diag must have at "
                                       "most 2 dimensions, got .* at argument 1."):
    L.block_diag(np.eye(2), np.ones((2, 2, 2)))


def test_toeplitz_hankel_circulant_match_scipy(rng):
  c = _random(rng, (3,), np.complex64)
  r = _random(rng, (5,), np.float32)
  np.testing.assert_array_equal(L.toeplitz(c, r), sla.toeplitz(c, r))
  np.testing.assert_array_equal(L.toeplitz(c), sla.toeplitz(c))
  np.testing.assert_array_equal(L.hankel(c, r), sla.hankel(c, r))
  np.testing.assert_array_equal(L.hankel(r), sla.hankel(r))
  np.testing.assert_array_equal(L.circulant(r), sla.circulant(r))
  assert L.toeplitz(c, r).dtype == np.complex64
  batched = L.toeplitz(np.arange(6).reshape(2, 3), np.arange(4))
  assert batched.shape == (2, 3, 4)
  np.testing.assert_array_equal(batched[1], sla.toeplitz(np.arange(3, 6), np.arange(4)))
  assert L.toeplitz(np.ones(0), np.ones(4)).shape == (0, 4)
  assert L.toeplitz(np.float32(2)).shape == (1, 1)
  np.testing.assert_array_equal(L.circulant(np.arange(6).reshape(2, 3))[1],
                                sla.circulant(np.arange(3, 6)))


def test_special_matrix_errors():
  with pytest.raises(TypeError, match="toeplitz requires ndarray or scalar arguments"):
    L.toeplitz([1, 2])
  with pytest.raises(ValueError, match="hankel: c must be at least 1-dimensional, got a scalar."):
    L.hankel(np.float32(1))
  with pytest.raises(ValueError, match=r"The length of s along the last axis must be one less"):
    L.leslie(np.ones(3), np.ones(3))
  with pytest.raises(ValueError, match=r"The length of `a` along the last axis must be at least "
                                       r"2; got shape \(1,\)."):
    L.companion(np.ones(1))
  with pytest.raises(ValueError, match="fiedler_companion requires the last axis"):
    L.fiedler_companion(np.ones(0))
  with pytest.raises(ValueError, match="n must be a positive integer; got 0."):
    L.convolution_matrix(np.ones(3), 0)
  with pytest.raises(ValueError, match="mode must be one of 'full', 'valid', 'same'; got 'x'."):
    L.convolution_matrix(np.ones(3), 2, "x")
  with pytest.raises(ValueError, match="Expected kind to be on of"):
    L.pascal(3, "x")
  with pytest.raises(ValueError, match="Expected kind to be one of"):
    L.invpascal(3, "x")
  with pytest.raises(ValueError, match="n must be a positive integer; got 0."):
    L.helmert(0)
  with pytest.raises(ValueError, match="n must be a positive power of 2; got 3."):
    L.hadamard(3)
  with pytest.raises(ValueError, match="scale must be None, 'sqrtn', or 'n'; got 'x'."):
    L.dft(3, "x")
  with pytest.raises(ValueError, match="dtype must be a complex floating-point type"):
    L.dft(3, dtype=np.float32)


def test_polynomial_and_other_special_matrices_match_scipy():
  f, s = np.array([0.1, 2.0, 1.5]), np.array([0.2, 0.8])
  np.testing.assert_allclose(L.leslie(f, s), sla.leslie(f, s))
  a = np.array([2.0, -3.0, 1.0, 5.0, 4.0, -1.0, 2.0])
  np.testing.assert_allclose(L.companion(a), sla.companion(a), rtol=1e-12)
  assert L.fiedler_companion(a[:1]).shape == (0, 0)  # JAX's shape (SciPy's is (0,))
  for n in (2, 3, 6):
    np.testing.assert_allclose(L.fiedler_companion(a[:n]), sla.fiedler_companion(a[:n]),
                               rtol=1e-12)
  np.testing.assert_array_equal(L.fiedler(a), sla.fiedler(a))
  assert L.companion(np.arange(1, 4)).dtype == np.float64
  k = np.array([1.0, 2.0, 3.0])
  for mode, n in (("full", 2), ("same", 5), ("valid", 2), ("valid", 5)):
    np.testing.assert_array_equal(L.convolution_matrix(k, n, mode),
                                  sla.convolution_matrix(k, n, mode))


def test_generated_matrices_match_scipy():
  np.testing.assert_allclose(L.hilbert(4), sla.hilbert(4), rtol=1e-15)
  np.testing.assert_allclose(L.invhilbert(5), sla.invhilbert(5), rtol=1e-8)
  for kind in ("symmetric", "lower", "upper"):
    p = L.pascal(5, kind)
    assert p.dtype == np.float32  # as in JAX, also with x64 on
    np.testing.assert_allclose(p, sla.pascal(5, kind), rtol=1e-5)
    np.testing.assert_allclose(L.invpascal(5, kind), sla.invpascal(5, kind), rtol=1e-8, atol=1e-8)
  np.testing.assert_allclose(L.helmert(5), sla.helmert(5), rtol=1e-12)
  np.testing.assert_allclose(L.helmert(5, full=True), sla.helmert(5, full=True), rtol=1e-12)
  np.testing.assert_array_equal(L.hadamard(8), sla.hadamard(8))
  assert L.hadamard(2, np.float32).dtype == np.float32
  for scale in (None, "sqrtn", "n"):
    np.testing.assert_allclose(L.dft(5, scale), sla.dft(5, scale), atol=1e-12)
  assert L.dft(3, dtype=np.complex64).dtype == np.complex64


def test_default_dtypes_without_x64():
  with enable_x64(False):
    assert L.hilbert(2).dtype == np.float32
    assert L.dft(2).dtype == np.complex64
    assert L.cholesky(np.eye(2, dtype=np.int32)).dtype == np.float32
    assert L.expm(np.eye(2)).dtype == np.float32


# ----------------------------------------------------------------------------
# vmap, jit and printed jaxprs


def test_vmap_matches_loop(rng):
  a = _spd(rng, (3, 4, 4), np.float64)
  b = _random(rng, (4, 2), np.float64)
  cho = xjax.vmap(lambda a: L.cho_solve(L.cho_factor(a), b))(a)
  lus = xjax.vmap(lambda a: L.lu_solve(L.lu_factor(a), b), in_axes=2)(np.moveaxis(a, 0, 2))
  with enable_x64(False):  # see test_expm_batched_under_x64
    exp = xjax.vmap(L.expm)((a / 10).astype(np.float32))
  for i in range(3):
    np.testing.assert_allclose(cho[i], np.linalg.solve(a[i], b), rtol=1e-9)
    np.testing.assert_allclose(lus[i], np.linalg.solve(a[i], b), rtol=1e-9)
    np.testing.assert_allclose(exp[i], sla.expm(a[i] / 10), rtol=1e-5)


def test_jit_matches_eager(rng):
  a = _spd(rng, (4, 4), np.float64)
  b = _random(rng, (4,), np.float64)
  for fn in (lambda a, b: L.solve(a, b, assume_a="pos"), lambda a, b: L.cho_solve((a, False), b),
             lambda a, b: L.lu_solve(L.lu_factor(a), b), lambda a, b: L.toeplitz(b, a[0])):
    np.testing.assert_allclose(xjax.jit(fn)(a, b), fn(a, b), rtol=1e-12)


SOLVE_TRIANGULAR_JAXPR = """\
{ lambda ; a:f32[3,3] b:f32[3,2]. let
    c:f32[3,2] = jit[
      name=_solve_triangular
      jaxpr={ lambda ; a:f32[3,3] b:f32[3,2]. let
          c:f32[3,2] = triangular_solve[
            conjugate_a=False
            left_side=True
            lower=True
            transpose_a=True
            unit_diagonal=False
          ] a b
        in (c,) }
    ] a b
  in (c,) }"""

BLOCK_DIAG_JAXPR = """\
{ lambda a:f32[3,2]; b:f32[3,3]. let
    c:f32[6,5] = jit[
      name=block_diag
      jaxpr={ lambda ; b:f32[3,3] a:f32[3,2]. let
          d:f32[3,3] = jit[
            name=atleast_2d
            jaxpr={ lambda ; b:f32[3,3]. let  in (b,) }
          ] b
          e:f32[3,2] = jit[
            name=atleast_2d
            jaxpr={ lambda ; a:f32[3,2]. let  in (a,) }
          ] a
          f:f32[3,5] = pad[padding_config=((0, 0, 0), (0, 2, 0))] d 0.0:f32[]
          g:f32[3,5] = pad[padding_config=((0, 0, 0), (3, 0, 0))] e 0.0:f32[]
          c:f32[6,5] = concatenate[dimension=0] f g
        in (c,) }
    ] b a
  in (c,) }"""


def test_printed_jaxprs_match_jax():
  a = np.eye(3, dtype=np.float32)
  b = np.ones((3, 2), np.float32)
  with enable_x64(False):
    text = str(xjax.make_jaxpr(lambda a, b: L.solve_triangular(a, b, lower=True, trans=1))(a, b))
    assert text == SOLVE_TRIANGULAR_JAXPR
    assert str(xjax.make_jaxpr(lambda a: L.block_diag(a, b))(a)) == BLOCK_DIAG_JAXPR


def test_public_names_match_jax():
  expected = {
      "block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion",
      "convolution_matrix", "det", "dft", "eigh", "eigh_tridiagonal", "expm", "expm_frechet",
      "fiedler", "fiedler_companion", "funm", "hadamard", "hankel", "helmert", "hessenberg",
      "hilbert", "inv", "invhilbert", "invpascal", "leslie", "lu", "lu_factor", "lu_solve",
      "pascal", "polar", "qr", "qr_multiply", "rsf2csf", "schur", "solve", "solve_sylvester",
      "solve_triangular", "sqrtm", "svd", "toeplitz"}
  assert {n for n in dir(L) if not n.startswith("_")} == expected
