"""lax.linalg lu, lu_pivots_to_permutation, lu_solve, qr and the QR pieces
(geqrf, geqp3, householder_product, ormqr): values against SciPy and
reconstruction, batching, jit, vmap, derivatives, printed jaxprs and errors."""
import numpy as np
import pytest
import scipy.linalg

import xjax
from xjax._src import test_util as jtu
from xjax._src.lax.linalg import lu as lu_module
from xjax._src.lax.linalg import qr as qr_module
from xjax.lax import linalg as L

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
TOL = {np.dtype(np.float32): 2e-4, np.dtype(np.complex64): 2e-4,
       np.dtype(np.float64): 1e-10, np.dtype(np.complex128): 1e-10}


@pytest.fixture(autouse=True)
def _x64_for_all():
  with xjax._src.config.enable_x64(True):
    yield


def _random(rng, shape, dtype):
  x = rng.standard_normal(shape)
  if np.issubdtype(dtype, np.complexfloating):
    x = x + 1j * rng.standard_normal(shape)
  return x.astype(dtype)


def _H(x):
  return np.conj(np.swapaxes(x, -1, -2))


def _permute_rows(a, perm):
  return np.take_along_axis(a, perm[..., :, None], -2)


def _reference_permutation(pivots, m):
  """The swaps applied in order to arange(m), as LAPACK's laswp does."""
  perm = np.arange(m)
  for i, j in enumerate(pivots):
    perm[i], perm[j] = perm[j], perm[i]
  return perm


# ----------------------------------------------------------------------------
# lu


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (5, 3), (3, 5), (2, 4, 4), (2, 3, 4, 2),
                                   (0, 0), (3, 0), (0, 3), (2, 0, 0)])
def test_lu_reconstructs_and_matches_pivots(rng, dtype, shape):
  a = _random(rng, shape, dtype)
  m, n = shape[-2:]
  k = min(m, n)
  tol = TOL[np.dtype(dtype)]
  for fn in (L.lu, xjax.jit(L.lu)):
    lu, pivots, perm = map(np.asarray, fn(a))
    assert lu.dtype == dtype and lu.shape == shape
    assert pivots.dtype == np.int32 and pivots.shape == shape[:-2] + (k,)
    assert perm.dtype == np.int32 and perm.shape == shape[:-2] + (m,)
    l = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=dtype)
    u = np.triu(lu[..., :k, :])
    np.testing.assert_allclose(l @ u, _permute_rows(a, perm), rtol=tol, atol=tol * max(n, 1))
    for idx in np.ndindex(shape[:-2]):
      np.testing.assert_array_equal(perm[idx], _reference_permutation(pivots[idx], m))
      # Partial pivoting: every multiplier is at most 1 in magnitude (sqrt(2)
      # for complex, where LAPACK compares pivots by |re| + |im|).
      bound = np.sqrt(2) if np.issubdtype(dtype, np.complexfloating) else 1
      assert np.all(np.abs(np.tril(lu[idx][:, :k], -1)) <= bound + tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_matches_scipy_lu_factor(rng, dtype):
  a = _random(rng, (5, 5), dtype)
  lu, pivots, _ = L.lu(a)
  lu_ref, piv_ref = scipy.linalg.lu_factor(a)
  np.testing.assert_array_equal(np.asarray(pivots), piv_ref)
  tol = TOL[np.dtype(dtype)]
  np.testing.assert_allclose(np.asarray(lu), lu_ref, rtol=tol, atol=tol)


def test_lu_of_singular_matrix_is_not_nan():
  # JAX's values: singular matrices give a zero pivot, no NaNs and no error.
  lu, pivots, perm = L.lu(np.array([[1., 2.], [2., 4.]], np.float32))
  np.testing.assert_array_equal(np.asarray(lu), np.array([[2., 4.], [0.5, 0.]], np.float32))
  np.testing.assert_array_equal(np.asarray(pivots), [1, 1])
  np.testing.assert_array_equal(np.asarray(perm), [1, 0])
  lu, _, perm = L.lu(np.zeros((2, 3, 3)))
  assert np.all(np.asarray(lu) == 0)
  np.testing.assert_array_equal(np.asarray(perm), [[0, 1, 2]] * 2)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 4), (1, 1), (0, 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_lu_python_matches_lapack_lu(rng, shape, dtype):
  # JAX's private _lu_python: the same factors and pivots as getrf, from lax operations.
  a = _random(rng, shape, dtype)
  for got, want in zip(lu_module._lu_python(a), L.lu(a), strict=True):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=TOL[np.dtype(dtype)],
                               atol=TOL[np.dtype(dtype)])
  got = xjax.jit(lu_module._lu_python)(a)
  np.testing.assert_array_equal(np.asarray(got[2]), np.asarray(L.lu(a)[2]))


def test_lu_python_of_singular_matrices_is_not_nan():
  for a in (np.zeros((2, 2), np.float32), np.array([[1., 2.], [2., 4.]], np.float32)):
    for got, want in zip(lu_module._lu_python(a), L.lu(a)):
      np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
  with pytest.raises(TypeError, match="float or complex array of rank >= 2"):
    lu_module._lu_python(np.ones((3, 3), np.int32))


def test_lu_vmap_matches_loop(rng):
  a = _random(rng, (3, 4, 4), np.float32)
  out = xjax.vmap(L.lu, in_axes=2, out_axes=[0, 1, 0])(np.moveaxis(a, 0, 2))
  for i in range(3):
    ref = L.lu(a[i])
    np.testing.assert_allclose(np.asarray(out[0][i]), np.asarray(ref[0]), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(out[1][:, i]), np.asarray(ref[1]))
    np.testing.assert_array_equal(np.asarray(out[2][i]), np.asarray(ref[2]))


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (2, 3, 4)])
def test_lu_grads_match_finite_differences(rng, shape):
  a = rng.standard_normal(shape) + np.eye(*shape[-2:])
  jtu.check_grads(lambda x: L.lu(x)[0], (a,), 2, modes=("fwd", "rev"))


def test_lu_grads_complex(rng):
  a = _random(rng, (3, 3), np.complex128) + 2 * np.eye(3)
  jtu.check_grads(lambda x: L.lu(x)[0], (a,), 1, modes=("fwd", "rev"))


def test_lu_integer_outputs_have_float0_tangents(rng):
  a = rng.standard_normal((3, 3))
  _, (_, t_piv, t_perm) = xjax.jvp(L.lu, (a,), (a,))
  assert t_piv.dtype == xjax.dtypes.float0 and t_piv.shape == (3,)
  assert t_perm.dtype == xjax.dtypes.float0 and t_perm.shape == (3,)


def test_lu_lowers_to_lapack_getrf(rng):
  text = xjax.jit(L.lu).lower(np.ones((2, 3, 5), np.float32)).compiler_ir()
  assert '"lapack_sgetrf_ffi"' in text
  assert "operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>]" in text


# ----------------------------------------------------------------------------
# lu_pivots_to_permutation


@pytest.mark.parametrize("shape,size", [((3,), 3), ((3,), 5), ((2, 4), 6), ((2, 3, 2), 2),
                                        ((0,), 3), ((2, 3), 3)])
def test_lu_pivots_to_permutation_matches_reference(rng, shape, size):
  pivots = rng.integers(0, size, shape).astype(np.int32)
  for fn in (L.lu_pivots_to_permutation, xjax.jit(L.lu_pivots_to_permutation,
                                                  static_argnums=1)):
    out = np.asarray(fn(pivots, size))
    assert out.dtype == np.int32 and out.shape == shape[:-1] + (size,)
    for idx in np.ndindex(shape[:-1]):
      np.testing.assert_array_equal(out[idx], _reference_permutation(pivots[idx], size))


def test_lu_pivots_to_permutation_index_edge_cases():
  # JAX's values for negative and out-of-range swaps (jnp indexing semantics).
  out = L.lu_pivots_to_permutation(np.array([[3, -4, 2], [1, -1, 5], [0, -9, 7]], np.int32), 4)
  np.testing.assert_array_equal(np.asarray(out), [[1, 3, 2, 0], [1, 3, 0, 0], [0, 0, 3, 3]])


def test_lu_pivots_to_permutation_vmap_matches_loop(rng):
  pivots = rng.integers(0, 5, (4, 3)).astype(np.int32)
  out = xjax.vmap(lambda p: L.lu_pivots_to_permutation(p, 5), in_axes=1)(pivots.T)
  for i in range(4):
    np.testing.assert_array_equal(np.asarray(out[i]),
                                  np.asarray(L.lu_pivots_to_permutation(pivots[i], 5)))


def test_lu_pivots_to_permutation_has_zero_tangent():
  f = lambda x: (x * 1.0, L.lu_pivots_to_permutation(np.array([1, 1], np.int32), 3))
  _, (_, t) = xjax.jvp(f, (2.0,), (1.0,))
  assert t.dtype == xjax.dtypes.float0 and t.shape == (3,)


def test_lu_pivots_to_permutation_errors():
  with pytest.raises(ValueError, match="Output permutation size 2 has to exceed the trailing "
                     "dimension of the pivots. Got pivots size 3"):
    L.lu_pivots_to_permutation(np.zeros((3,), np.int32), 2)
  with pytest.raises(TypeError, match="lu_pivots_to_permutation does not accept dtype float32 "
                     "at position 0. Accepted dtypes at position 0 are subtypes of int32."):
    L.lu_pivots_to_permutation(np.zeros((3,), np.float32), 4)
  with pytest.raises(TypeError, match="must have rank at least 1"):
    L.lu_pivots_to_permutation(np.int32(0), 4)


# ----------------------------------------------------------------------------
# lu_solve


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trans", [0, 1, 2])
def test_lu_solve_matches_scipy(rng, dtype, trans):
  a = _random(rng, (4, 4), dtype) + 4 * np.eye(4, dtype=dtype)
  b = _random(rng, (4, 3), dtype)
  lu, _, perm = L.lu(a)
  expected = scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b, trans=trans)
  tol = TOL[np.dtype(dtype)]
  np.testing.assert_allclose(np.asarray(lu_module.lu_solve(lu, perm, b, trans)), expected,
                             rtol=tol, atol=tol)
  np.testing.assert_allclose(np.asarray(lu_module.lu_solve(lu, perm, b[:, 0], trans)),
                             expected[:, 0], rtol=tol, atol=tol)


def test_lu_solve_broadcasts_batch_dims(rng):
  a = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
  lu, _, perm = L.lu(a)
  b = rng.standard_normal((4, 1, 3, 2))
  x = np.asarray(lu_module.lu_solve(lu, perm, b))
  assert x.shape == (4, 2, 3, 2)
  np.testing.assert_allclose(a @ x, np.broadcast_to(b, x.shape), atol=1e-10)
  bv = rng.standard_normal((2, 3))
  xv = np.asarray(lu_module.lu_solve(lu, perm, bv, 1))
  np.testing.assert_allclose(np.einsum("bji,bj->bi", a, xv), bv, atol=1e-10)


def test_lu_solve_vmap_matches_loop(rng):
  a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
  lu, _, perm = L.lu(a)
  bs = rng.standard_normal((5, 3))
  out = xjax.vmap(lambda b: lu_module.lu_solve(lu, perm, b, 0))(bs)
  for i in range(5):
    np.testing.assert_allclose(np.asarray(out[i]), np.linalg.solve(a, bs[i]), atol=1e-10)


def test_lu_solve_errors():
  lu, perm = np.eye(3), np.arange(3, dtype=np.int32)
  with pytest.raises(ValueError, match=r"last two dimensions of LU decomposition must be "
                     r"equal, got shape \(4, 3\)"):
    lu_module.lu_solve(np.ones((4, 3)), np.arange(4), np.ones(4), 0)
  with pytest.raises(ValueError, match=r"b matrix must have rank >= 1, got shape \(\)"):
    lu_module.lu_solve(lu, perm, np.float64(1), 0)
  with pytest.raises(ValueError, match=r"last axis of LU decomposition matrix \(shape "
                     r"\(3, 3\)\) and b array \(shape \(4,\)\) must match"):
    lu_module.lu_solve(lu, perm, np.ones(4), 0)
  with pytest.raises(ValueError, match=r"second to last axis of b array \(shape \(4, 2\)\)"):
    lu_module.lu_solve(lu, perm, np.ones((4, 2)), 0)
  with pytest.raises(ValueError, match="'trans' value must be 0, 1, or 2, got 3"):
    lu_module.lu_solve(lu, perm, np.ones((3, 2)), 3)


# ----------------------------------------------------------------------------
# qr


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 5, 3), (2, 1, 3, 4)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_qr_reconstructs_and_matches_scipy(rng, dtype, shape, full_matrices):
  a = _random(rng, shape, dtype)
  m, n = shape[-2:]
  k = m if full_matrices else min(m, n)
  tol = TOL[np.dtype(dtype)]
  fn = lambda x: L.qr(x, full_matrices=full_matrices)
  for f in (fn, xjax.jit(fn)):
    q, r = map(np.asarray, f(a))
    assert q.shape == shape[:-2] + (m, k) and r.shape == shape[:-2] + (k, n)
    assert q.dtype == dtype and r.dtype == dtype
    np.testing.assert_allclose(q @ r, a, rtol=tol, atol=tol * n)
    np.testing.assert_allclose(_H(q) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)),
                               atol=tol * m)
    assert np.all(np.tril(r, -1) == 0)
    mode = "full" if full_matrices else "economic"
    for idx in np.ndindex(shape[:-2]):
      q_ref, r_ref = scipy.linalg.qr(a[idx], mode=mode)
      np.testing.assert_allclose(q[idx], q_ref, rtol=tol, atol=tol * m)
      np.testing.assert_allclose(r[idx], r_ref, rtol=tol, atol=tol * m)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
def test_qr_pivoting_matches_scipy(rng, dtype, shape):
  a = _random(rng, shape, dtype)
  tol = TOL[np.dtype(dtype)]
  q, r, p = map(np.asarray, L.qr(a, pivoting=True))
  assert p.dtype == np.int32 and p.shape == shape[:-1][:-1] + (shape[-1],)
  np.testing.assert_allclose(q @ r, np.take_along_axis(a, p[..., None, :], -1), rtol=tol,
                             atol=tol * shape[-1])
  for idx in np.ndindex(shape[:-2]):
    q_ref, r_ref, p_ref = scipy.linalg.qr(a[idx], pivoting=True)
    np.testing.assert_array_equal(p[idx], p_ref)
    np.testing.assert_allclose(r[idx], r_ref, rtol=tol, atol=tol * shape[-1])


@pytest.mark.parametrize("shape,full_matrices,q_shape,r_shape",
                         [((3, 0), True, (3, 3), (3, 0)), ((3, 0), False, (3, 0), (0, 0)),
                          ((0, 3), False, (0, 0), (0, 3)), ((2, 0, 2), True, (2, 0, 0), (2, 0, 2))])
def test_qr_of_empty_matrices(shape, full_matrices, q_shape, r_shape):
  q, r, p = L.qr(np.zeros(shape, np.float32), full_matrices=full_matrices, pivoting=True)
  assert q.shape == q_shape and r.shape == r_shape and p.shape == shape[:-2] + shape[-1:]
  np.testing.assert_array_equal(np.asarray(q), np.broadcast_to(np.eye(*q_shape[-2:]), q_shape))
  assert np.all(np.asarray(r) == 0) and np.all(np.asarray(p) == 0)


def test_qr_vmap_matches_loop(rng):
  a = rng.standard_normal((4, 3, 5))
  q, r = xjax.vmap(lambda x: L.qr(x, full_matrices=False), in_axes=2)(a)
  for i in range(5):
    q_ref, r_ref = L.qr(a[:, :, i], full_matrices=False)
    np.testing.assert_allclose(np.asarray(q[i]), np.asarray(q_ref), atol=1e-12)
    np.testing.assert_allclose(np.asarray(r[i]), np.asarray(r_ref), atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (2, 3, 4)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_qr_grads_match_finite_differences(rng, shape, full_matrices):
  a = rng.standard_normal(shape)
  jtu.check_grads(lambda x: L.qr(x, full_matrices=full_matrices), (a,), 2, modes=("fwd", "rev"))


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (3, 5)])
def test_qr_grads_complex_and_pivoted(rng, shape):
  a = _random(rng, shape, np.complex128)
  jtu.check_grads(lambda x: L.qr(x), (a,), 1, modes=("fwd", "rev"))
  b = rng.standard_normal(shape)
  # JAX's rule is wrong for wide pivoted matrices (it uses the unpermuted x);
  # the derivative here matches finite differences.
  jtu.check_grads(lambda x: L.qr(x, pivoting=True)[:2], (b,), 1, modes=("fwd", "rev"))


def test_qr_batched_pivoted_jvp(rng):
  a = rng.standard_normal((2, 3, 5))
  t = rng.standard_normal((2, 3, 5))
  _, (dq, dr, dp) = xjax.jvp(lambda x: L.qr(x, pivoting=True), (a,), (t,))
  for i in range(2):
    _, (dq_i, dr_i, _) = xjax.jvp(lambda x: L.qr(x, pivoting=True), (a[i],), (t[i],))
    np.testing.assert_allclose(np.asarray(dq[i]), np.asarray(dq_i), atol=1e-12)
    np.testing.assert_allclose(np.asarray(dr[i]), np.asarray(dr_i), atol=1e-12)
  assert dp.dtype == xjax.dtypes.float0


def test_qr_lowers_to_geqrf_and_orgqr():
  text = xjax.jit(L.qr).lower(np.ones((4, 3), np.float32)).compiler_ir()
  assert '"lapack_sgeqrf_ffi"' in text and '"lapack_sorgqr_ffi"' in text
  text = xjax.jit(lambda x: L.qr(x, pivoting=True)).lower(
      np.ones((4, 3), np.complex64)).compiler_ir()
  assert '"lapack_cgeqp3_ffi"' in text and '"lapack_cungqr_ffi"' in text


# ----------------------------------------------------------------------------
# geqrf, geqp3, householder_product, ormqr


@pytest.mark.parametrize("dtype", DTYPES)
def test_geqrf_and_householder_product_match_scipy(rng, dtype):
  a = _random(rng, (2, 5, 3), dtype)
  tol = TOL[np.dtype(dtype)]
  h, taus = qr_module.geqrf(a)
  q = np.asarray(L.householder_product(h, taus))
  for i in range(2):
    (h_ref, taus_ref), _ = scipy.linalg.qr(a[i], mode="raw")
    np.testing.assert_allclose(np.asarray(h[i]), h_ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(np.asarray(taus[i]), taus_ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(q[i], scipy.linalg.qr(a[i], mode="economic")[0], rtol=tol,
                               atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr_matches_explicit_q(rng, dtype, left, transpose):
  a = _random(rng, (2, 4, 3), dtype)
  c = _random(rng, (2, 4, 5) if left else (2, 5, 4), dtype)
  h, taus = qr_module.geqrf(a)
  q = np.stack([scipy.linalg.qr(a[i])[0] for i in range(2)])
  q = _H(q) if transpose else q
  expected = q @ c if left else c @ q
  tol = TOL[np.dtype(dtype)]
  for fn in (L.ormqr, xjax.jit(L.ormqr, static_argnames=("left", "transpose"))):
    out = fn(h, taus, c, left=left, transpose=transpose)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=tol, atol=tol * 4)


def test_ormqr_vmap_with_unbatched_reflectors(rng):
  a = rng.standard_normal((4, 3))
  h, taus = qr_module.geqrf(a)
  cs = rng.standard_normal((6, 4, 2))
  out = xjax.vmap(lambda c: L.ormqr(h, taus, c), in_axes=0)(cs)
  q = scipy.linalg.qr(a)[0]
  np.testing.assert_allclose(np.asarray(out), q @ cs, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_geqp3_matches_scipy(rng, dtype):
  a = _random(rng, (2, 4, 3), dtype)
  tol = TOL[np.dtype(dtype)]
  h, jpvt, taus = qr_module.geqp3(a, np.zeros((2, 3), np.int32))
  assert np.asarray(jpvt).dtype == np.int32 and taus.shape == (2, 3)
  for i in range(2):
    r_ref, p_ref = scipy.linalg.qr(a[i], pivoting=True, mode="r")
    np.testing.assert_array_equal(np.asarray(jpvt[i]) - 1, p_ref)
    np.testing.assert_allclose(np.triu(np.asarray(h[i])), r_ref, rtol=tol, atol=tol * 4)


# ----------------------------------------------------------------------------
# Printed jaxprs (recorded from JAX 0.10.2) and errors

_JAXPR_LU = """\
{ lambda ; a:f32[2,4,3]. let
    b:f32[2,4,3] c:i32[2,3] d:i32[2,4] = lu a
  in (b, c, d) }"""

_JAXPR_QR = """\
{ lambda ; a:f32[2,4,3]. let
    b:f32[2,4,3] c:f32[2,3,3] = qr[
      full_matrices=False
      pivoting=False
      use_magma=None
    ] a
  in (b, c) }"""

_JAXPR_QR_PIVOTING = """\
{ lambda ; a:f32[2,4,3]. let
    b:f32[2,4,4] c:f32[2,4,3] d:i32[2,3] = qr[
      full_matrices=True
      pivoting=True
      use_magma=None
    ] a
  in (b, c, d) }"""

_JAXPR_PIVOTS = """\
{ lambda ; a:i32[2,3]. let
    b:i32[2,5] = lu_pivots_to_permutation[permutation_size=5] a
  in (b,) }"""

_JAXPR_ORMQR = """\
{ lambda ; a:c64[2,4,3] b:c64[2,3] c:c64[2,4,5]. let
    d:c64[2,4,5] = ormqr[left=True transpose=True] a b c
  in (d,) }"""

_JAXPR_GEQP3 = """\
{ lambda ; a:c64[2,4,3] b:i32[2,3]. let
    c:c64[2,4,3] d:i32[2,3] e:c64[2,3] = geqp3[use_magma=None] a b
  in (c, d, e) }"""

_JAXPR_LU_SOLVE = """\
{ lambda ; a:f32[3,3] b:i32[3] c:f32[3,2]. let
    d:f32[3,2] = jit[
      name=_lu_solve
      jaxpr={ lambda ; a:f32[3,3] b:i32[3] c:f32[3,2]. let
          e:f32[3,2] = triangular_solve[
            conjugate_a=False
            left_side=True
            lower=False
            transpose_a=True
            unit_diagonal=False
          ] a c
          f:f32[3,2] = triangular_solve[
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
          d:f32[3,2] = gather[
            dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
            fill_value=None
            indices_are_sorted=False
            mode=GatherScatterMode.PROMISE_IN_BOUNDS
            slice_sizes=(1, 2)
            unique_indices=False
          ] f m
        in (d,) }
    ] a b c
  in (d,) }"""


def test_printed_jaxprs_match_jax():
  x = np.ones((2, 4, 3), np.float32)
  a, t = np.ones((2, 4, 3), np.complex64), np.ones((2, 3), np.complex64)
  assert str(xjax.make_jaxpr(L.lu)(x)) == _JAXPR_LU
  assert str(xjax.make_jaxpr(xjax.vmap(L.lu))(x)) == _JAXPR_LU
  assert str(xjax.make_jaxpr(lambda x: L.qr(x, full_matrices=False))(x)) == _JAXPR_QR
  assert str(xjax.make_jaxpr(lambda x: L.qr(x, pivoting=True))(x)) == _JAXPR_QR_PIVOTING
  assert str(xjax.make_jaxpr(lambda p: L.lu_pivots_to_permutation(p, 5))(
      np.zeros((2, 3), np.int32))) == _JAXPR_PIVOTS
  assert str(xjax.make_jaxpr(lambda a, t, c: L.ormqr(a, t, c, transpose=True))(
      a, t, np.ones((2, 4, 5), np.complex64))) == _JAXPR_ORMQR
  assert str(xjax.make_jaxpr(qr_module.geqp3)(a, np.zeros((2, 3), np.int32))) == _JAXPR_GEQP3
  assert str(xjax.make_jaxpr(lambda l, p, b: lu_module.lu_solve(l, p, b, 1))(
      np.ones((3, 3), np.float32), np.zeros(3, np.int32),
      np.ones((3, 2), np.float32))) == _JAXPR_LU_SOLVE


@pytest.mark.parametrize("fn,name", [(L.lu, "lu"), (L.qr, "qr"), (qr_module.geqrf, "geqrf")])
def test_factorization_errors(fn, name):
  with pytest.raises(TypeError, match=f"{name} does not accept dtype int32 at position 0. "
                     "Accepted dtypes at position 0 are subtypes of floating, complexfloating."):
    fn(np.ones((3, 3), np.int32))
  with pytest.raises(TypeError, match=rf"Input 0 to {name} must have rank at least 2, but got "
                     r"shape=\(3,\)"):
    fn(np.ones((3,), np.float32))


def test_qr_piece_errors():
  f32 = np.float32
  with pytest.raises(ValueError, match=r"The first argument to householder_product must have "
                     r"at least as many rows as columns, got shape \(2, 3\)"):
    L.householder_product(np.ones((2, 3), f32), np.ones((2,), f32))
  with pytest.raises(ValueError, match="The second argument to householder_product must not "
                     "have more rows than the minimum"):
    L.householder_product(np.ones((4, 3), f32), np.ones((4,), f32))
  with pytest.raises(TypeError, match="lax.householder_product requires arguments to have the "
                     "same dtypes, got float32, float64."):
    L.householder_product(np.ones((4, 3), f32), np.ones((2,), np.float64))
  with pytest.raises(ValueError, match=r"ormqr with left=True expects c to have the same number "
                     r"of rows as the Householder matrix a. Got a shape \(4, 3\) and c shape "
                     r"\(3, 3\)."):
    L.ormqr(np.ones((4, 3), f32), np.ones((3,), f32), np.ones((3, 3), f32))
  with pytest.raises(ValueError, match="ormqr with left=False expects c to have the same number "
                     "of columns"):
    L.ormqr(np.ones((4, 3), f32), np.ones((3,), f32), np.ones((3, 3), f32), left=False)
  with pytest.raises(TypeError, match="geqp3 does not accept dtype float32 at position 1. "
                     "Accepted dtypes at position 1 are subtypes of int32."):
    qr_module.geqp3(np.ones((4, 3), f32), np.ones((3,), f32))


def test_only_qr_is_differentiable(rng):
  a = rng.standard_normal((4, 3))
  with pytest.raises(NotImplementedError, match="geqrf"):
    xjax.jvp(qr_module.geqrf, (a,), (a,))
