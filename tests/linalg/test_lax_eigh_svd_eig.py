"""lax.linalg.eigh, svd and eig: values against NumPy/SciPy, reconstruction
identities, batching, vmap, jit, derivatives, printed jaxprs, errors and NaNs."""
import warnings

import numpy as np
import pytest
import scipy.linalg

import xjax
import xjax.numpy as jnp
from xjax._src import test_util as jtu
from xjax.lax import linalg as L

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
TOL = {np.dtype(np.float32): 2e-4, np.dtype(np.complex64): 2e-4,
       np.dtype(np.float64): 1e-10, np.dtype(np.complex128): 1e-10}


def _random(rng, shape, dtype):
  x = rng.standard_normal(shape)
  if np.issubdtype(dtype, np.complexfloating):
    x = x + 1j * rng.standard_normal(shape)
  return x.astype(dtype)


def _hermitian(rng, shape, dtype):
  a = _random(rng, shape, dtype)
  return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(dtype)


def _h(x):
  return np.conj(np.swapaxes(x, -1, -2))


def _eye_stack(shape):
  return np.broadcast_to(np.eye(shape[-1]), shape)


@pytest.fixture(autouse=True)
def _x64_for_all():
  with xjax._src.config.enable_x64(True):
    yield


# ----------------------------------------------------------------------------
# eigh


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 1, 3, 3), (3, 0, 0)])
def test_eigh_matches_numpy_and_reconstructs(rng, dtype, shape):
  a = _hermitian(rng, shape, dtype)
  tol = TOL[np.dtype(dtype)] * max(shape[-1], 1)
  real = np.finfo(dtype).dtype
  for fn in (L.eigh, xjax.jit(L.eigh)):
    v, w = map(np.asarray, fn(a))
    assert v.dtype == dtype and v.shape == shape
    assert w.dtype == real and w.shape == shape[:-1]
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), rtol=tol, atol=tol)
    assert np.all(np.diff(w, axis=-1) >= 0)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], rtol=tol, atol=tol)
    np.testing.assert_allclose(_h(v) @ v, _eye_stack(shape), rtol=tol, atol=tol)


@pytest.mark.parametrize("lower", [True, False])
def test_eigh_reads_one_triangle_without_symmetrizing(rng, lower):
  a = _hermitian(rng, (4, 4), np.complex128)
  junk = np.full((4, 4), 1e3 + 7j)
  one_triangle = np.where(np.tri(4, dtype=bool) if lower else np.tri(4, dtype=bool).T, a, junk)
  _, w = L.eigh(one_triangle, lower=lower, symmetrize_input=False)
  np.testing.assert_allclose(w, np.linalg.eigvalsh(a), rtol=1e-10, atol=1e-10)
  # With symmetrization the junk counts: the halved Hermitian part is decomposed.
  skew = a + np.triu(np.ones((4, 4)), 1) - np.tril(np.ones((4, 4)), -1)
  np.testing.assert_allclose(L.eigh(skew)[1], np.linalg.eigvalsh(a), rtol=1e-10, atol=1e-10)


def test_eigh_of_integers_is_float32_as_in_jax():
  v, w = L.eigh(np.array([[2, 1], [1, 2]], np.int32))
  assert v.dtype == np.float32 and w.dtype == np.float32
  np.testing.assert_allclose(w, [1, 3], rtol=1e-6)


def test_eigh_subset_by_index_on_cpu():
  a = np.diag(np.arange(4.0))
  v, w = L.eigh(a, subset_by_index=(0, 4))
  np.testing.assert_allclose(w, np.arange(4.0))
  out = xjax.eval_shape(lambda x: L.eigh(x, subset_by_index=(1, 3)), a)
  assert [o.shape for o in out] == [(4, 2), (2,)]
  with pytest.raises(NotImplementedError, match="subset_by_index not supported on CPU and GPU"):
    L.eigh(a, subset_by_index=(1, 3))
  with pytest.raises(NotImplementedError,
                     match="Derivatives not defined for partial eigen decomposition."):
    xjax.jvp(lambda x: L.eigh(x, subset_by_index=(1, 3)), (a,), (a,))


@pytest.mark.parametrize("impl, msg", [("JACOBI", "Jacobi implementation is not supported on CPU"),
                                       ("QDWH", "QDWH implementation is only supported on TPU")])
def test_eigh_implementations_missing_on_cpu(impl, msg):
  with pytest.raises(NotImplementedError, match=msg):
    L.eigh(np.eye(3), implementation=L.EighImplementation[impl])
  _, w = L.eigh(np.diag([3.0, 1.0]), implementation=L.EighImplementation.QR)
  np.testing.assert_array_equal(w, [1.0, 3.0])


def test_eigh_errors():
  with pytest.raises(ValueError, match=r"Argument to symmetric eigendecomposition must have "
                     r"shape \[\.\.\., n, n\], got shape \(3, 4\)"):
    L.eigh(np.ones((3, 4)), symmetrize_input=False)
  with pytest.raises(TypeError, match="eigh does not accept dtype int32 at position 0. Accepted "
                     "dtypes at position 0 are subtypes of floating, complexfloating."):
    L.eigh(np.ones((3, 3), np.int32), symmetrize_input=False)
  with pytest.raises(TypeError, match=r"Input 0 to eigh must have rank at least 2, but got "
                     r"shape=\(3,\)"):
    L.eigh(np.ones(3), symmetrize_input=False)


# A matrix for the non-finite tests; the NaN patterns below are those JAX 0.10.2
# returns (the kernels' info flags, then NaN for the whole failed matrix).
GOOD = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 0.0], [0.5, 0.0, 1.0]], np.float32)


def test_eigh_of_non_finite_matrix_as_jax():
  broken = GOOD.copy()
  broken[0, 1] = broken[1, 0] = np.nan
  v, w = map(np.asarray, L.eigh(np.stack([GOOD, broken])))
  np.testing.assert_allclose(w[0], np.linalg.eigvalsh(GOOD), rtol=1e-5)
  assert np.all(np.isnan(v[1])) and np.all(np.isnan(w[1]))
  # An infinity does not make syevd fail: JAX returns what the kernel leaves.
  broken[0, 1] = broken[1, 0] = np.inf
  v, w = map(np.asarray, L.eigh(broken))
  assert np.all(np.isnan(w)) and np.all(np.isnan(v[:, :2]))
  np.testing.assert_array_equal(v[:, 2], [0, 0, 1])


def test_eigh_vmap_matches_loop(rng):
  a = _hermitian(rng, (3, 2, 4, 4), np.float64)  # mapped over axis 1
  a = np.swapaxes(a, 0, 1).copy()
  a_axis1 = np.moveaxis(a, 0, 1)
  v, w = xjax.vmap(L.eigh, in_axes=1)(a_axis1)
  for i in range(2):
    v_i, w_i = L.eigh(a[i])
    np.testing.assert_allclose(w[i], w_i, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.abs(v[i]), np.abs(v_i), rtol=1e-10, atol=1e-10)
  # An unbatched matrix next to a batched one, under jit.
  b = _hermitian(rng, (4, 4), np.float64)
  out = xjax.jit(xjax.vmap(lambda x, y: L.eigh(x + y)[1], in_axes=(0, None)))(a, b)
  np.testing.assert_allclose(out, np.stack([np.linalg.eigvalsh(a[i] + b) for i in range(2)]),
                             rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_eigh_grads(rng, dtype):
  a = _hermitian(rng, (4, 4), dtype)
  eigenvalues = lambda x: L.eigh(x)[1]
  jtu.check_grads(eigenvalues, (a,), 2, atol=1e-6, rtol=1e-6)

  def matrix_function(x):  # V exp(diag(w)/4) V^H: independent of the eigenvectors' phases
    v, w = L.eigh(x)
    return (v * jnp.exp(w / 4)[None, :]) @ jnp.conj(v.T)
  jtu.check_grads(matrix_function, (a,), 2, atol=1e-6, rtol=1e-6)
  projector = lambda x: jnp.abs(L.eigh(x)[0][:, 1]) ** 2
  jtu.check_grads(projector, (a,), 1, atol=1e-6, rtol=1e-6)


def test_eigh_grads_batched(rng):
  a = _hermitian(rng, (2, 3, 3), np.float64)
  jtu.check_grads(lambda x: L.eigh(x)[1], (a,), 1, atol=1e-6, rtol=1e-6)
  g = xjax.grad(lambda x: L.eigh(x)[1][..., -1].sum())(a)
  v = np.linalg.eigh(a)[1][..., :, -1]
  np.testing.assert_allclose(g, v[..., :, None] * v[..., None, :], rtol=1e-10, atol=1e-10)


def test_eigh_jvp_with_degenerate_eigenvalues_as_jax():
  # Eigenvalue tangents stay exact; eigenvector tangents divide by zero gaps.
  a = np.diag([1.0, 1.0, 2.0])
  a_dot = np.array([[1.0, 0.5, 0.0], [0.5, 2.0, 0.0], [0.0, 0.0, 3.0]])
  (v, w), (v_dot, w_dot) = xjax.jvp(L.eigh, (a,), (a_dot,))
  v = np.asarray(v)
  np.testing.assert_allclose(w_dot, np.diag(v.T @ a_dot @ v), rtol=1e-12)
  assert not np.all(np.isfinite(v_dot))


EIGH_JAXPR = """\
{ lambda ; a:f32[3,3]. let
    b:f32[3,3] = transpose[permutation=(1, 0)] a
    c:f32[3,3] = add a b
    d:f32[3,3] = div c 2.0:f32[]
    e:f32[3,3] f:f32[3] = eigh[
      algorithm=None
      lower=True
      sort_eigenvalues=True
      subset_by_index=None
    ] d
  in (e, f) }"""

EIGH_QR_COMPLEX_JAXPR = """\
{ lambda ; a:c64[3,3]. let
    b:c64[3,3] = transpose[permutation=(1, 0)] a
    c:c64[3,3] = conj[input_dtype=complex64] b
    d:c64[3,3] = add a c
    e:c64[3,3] = div d (2+0j):c64[]
    f:c64[3,3] g:f32[3] = eigh[
      algorithm=EighImplementation.QR
      lower=True
      sort_eigenvalues=True
      subset_by_index=None
    ] e
  in (f, g) }"""


def test_eigh_jaxprs_match_jax():
  assert str(xjax.make_jaxpr(L.eigh)(np.ones((3, 3), np.float32))) == EIGH_JAXPR
  qr = lambda x: L.eigh(x, implementation=L.EighImplementation.QR)
  assert str(xjax.make_jaxpr(qr)(np.ones((3, 3), np.complex64))) == EIGH_QR_COMPLEX_JAXPR


def test_eigh_lowers_to_lapack_syevd_heevd():
  for dtype, target in [(np.float32, "lapack_ssyevd_ffi"), (np.complex128, "lapack_zheevd_ffi")]:
    text = xjax.jit(lambda x: L.eigh(x, lower=False)).lower(np.ones((2, 3, 3), dtype)).compiler_ir()
    assert f'call_target_name = "{target}"' in text
    assert "backend_config = {mode = 86 : ui8, uplo = 85 : ui8}" in text


# ----------------------------------------------------------------------------
# svd


SVD_SHAPES = [(3, 3), (5, 3), (2, 1, 3, 4)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SVD_SHAPES)
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_matches_numpy_and_reconstructs(rng, dtype, shape, full_matrices):
  a = _random(rng, shape, dtype)
  m, n = shape[-2:]
  k = min(m, n)
  tol = TOL[np.dtype(dtype)] * max(m, n)
  for fn in (L.svd, xjax.jit(L.svd, static_argnames="full_matrices")):
    u, s, vh = map(np.asarray, fn(a, full_matrices=full_matrices))
    assert u.dtype == vh.dtype == dtype and s.dtype == np.finfo(dtype).dtype
    assert u.shape == shape[:-2] + ((m, m) if full_matrices else (m, k))
    assert vh.shape == shape[:-2] + ((n, n) if full_matrices else (k, n))
    assert s.shape == shape[:-2] + (k,)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=tol, atol=tol)
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a,
                               rtol=tol, atol=tol)
    uhu, vvh = _h(u) @ u, vh @ _h(vh)
    np.testing.assert_allclose(uhu, _eye_stack(uhu.shape), rtol=tol, atol=tol)
    np.testing.assert_allclose(vvh, _eye_stack(vvh.shape), rtol=tol, atol=tol)


@pytest.mark.parametrize("algorithm", [None, "DEFAULT", "QR", "DIVIDE_AND_CONQUER"])
def test_svd_algorithms_and_compute_uv(rng, algorithm):
  algorithm = None if algorithm is None else L.SvdAlgorithm[algorithm]
  a = _random(rng, (2, 4, 6), np.complex128)
  s = L.svd(a, compute_uv=False, algorithm=algorithm)
  assert isinstance(s, xjax.Array) and s.shape == (2, 4)
  np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-12)
  u, s2, vh = L.svd(a, full_matrices=False, algorithm=algorithm)
  np.testing.assert_allclose((np.asarray(u) * np.asarray(s2)[..., None, :]) @ vh, a, atol=1e-12)


def test_svd_qr_lowers_to_gesvd_and_default_to_gesdd():
  text = xjax.jit(lambda x: L.svd(x, compute_uv=False, algorithm=L.SvdAlgorithm.QR)).lower(
      np.ones((3, 4), np.complex64)).compiler_ir()
  assert 'call_target_name = "lapack_cgesvd_ffi"' in text and "mode = 78 : ui8" in text
  text = xjax.jit(lambda x: L.svd(x, full_matrices=False)).lower(np.ones((3, 4))).compiler_ir()
  assert 'call_target_name = "lapack_dgesdd_ffi"' in text and "mode = 83 : ui8" in text


@pytest.mark.parametrize("algorithm", ["JACOBI", "POLAR"])
def test_svd_gpu_algorithms_missing_on_cpu(algorithm):
  with pytest.raises(NotImplementedError,
                     match="The SVD Jacobi and Polar algorithms are not implemented on CPU."):
    L.svd(np.ones((3, 4)), algorithm=L.SvdAlgorithm[algorithm])


# (shape, full_matrices) -> shapes of (u, s, vh), as JAX 0.10.2 returns them.
EMPTY_SVD = [((0, 4), True, [(0, 0), (0,), (4, 4)]), ((0, 4), False, [(0, 0), (0,), (0, 4)]),
             ((2, 3, 0), True, [(2, 3, 3), (2, 0), (2, 0, 0)]),
             ((2, 3, 0), False, [(2, 3, 0), (2, 0), (2, 0, 0)]),
             ((0, 0), True, [(0, 0), (0,), (0, 0)])]


@pytest.mark.parametrize("shape, full_matrices, shapes", EMPTY_SVD)
def test_svd_of_empty_matrices(shape, full_matrices, shapes):
  for fn in (L.svd, xjax.jit(L.svd, static_argnames="full_matrices")):
    u, s, vh = fn(np.ones(shape, np.float32), full_matrices=full_matrices)
    assert [u.shape, s.shape, vh.shape] == shapes
    assert u.dtype == vh.dtype == s.dtype == np.float32
    full = u if shape[-2] else vh  # the side with rows gets an identity when full
    expected = _eye_stack(full.shape) if full_matrices else np.zeros(full.shape)
    np.testing.assert_array_equal(full, expected)
  assert L.svd(np.ones((3, 0)), compute_uv=False).shape == (0,)


def test_svd_subset_by_index():
  a = np.diag([3.0, 2.0, 1.0])
  with pytest.raises(ValueError, match="full_matrices and subset_by_index cannot both be set"):
    L.svd(a, subset_by_index=(0, 2))
  shapes = xjax.eval_shape(lambda x: L.svd(x, full_matrices=False, subset_by_index=(0, 2)), a)
  assert [x.shape for x in shapes] == [(3, 2), (2,), (2, 3)]
  with pytest.raises(NotImplementedError, match="subset_by_index not implemented for CPU and GPU"):
    L.svd(a, full_matrices=False, subset_by_index=(0, 2))
  np.testing.assert_allclose(L.svd(a, subset_by_index=(0, 3))[1], [3, 2, 1])


def test_svd_errors():
  with pytest.raises(TypeError, match=r"Input 0 to svd must have rank at least 2, but got "
                     r"shape=\(3,\)"):
    L.svd(np.ones(3))
  with pytest.raises(TypeError, match="svd does not accept dtype int32 at position 0. Accepted "
                     "dtypes at position 0 are subtypes of floating, complexfloating."):
    L.svd(np.ones((3, 3), np.int32))


def test_svd_of_non_finite_matrix_as_jax():
  broken = GOOD.copy()
  broken[1, 2] = np.nan
  u, s, vh = map(np.asarray, L.svd(np.stack([GOOD, broken])))
  np.testing.assert_allclose(s[0], np.linalg.svd(GOOD, compute_uv=False), rtol=1e-5)
  assert all(np.all(np.isnan(x[1])) for x in (u, s, vh))
  broken[1, 2] = np.inf
  u, s, vh = map(np.asarray, L.svd(broken))
  assert np.all(np.isnan(s)) and np.all(np.isnan(u[:, :2]))
  np.testing.assert_array_equal(u[:, 2], [1, 0, 0])


def test_svd_vmap_matches_loop(rng):
  a = _random(rng, (4, 2, 3), np.complex128)  # mapped over axis 1
  u, s, vh = xjax.vmap(lambda x: L.svd(x, full_matrices=False), in_axes=1)(a)
  for i in range(2):
    np.testing.assert_allclose(s[i], np.linalg.svd(a[:, i], compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose((np.asarray(u[i]) * np.asarray(s[i])) @ vh[i], a[:, i],
                               atol=1e-12)
  b = _random(rng, (4, 3), np.complex128)
  out = xjax.jit(xjax.vmap(lambda x, y: L.svd(x * y, compute_uv=False), in_axes=(None, 0)))(
      b, np.arange(1.0, 4.0))
  np.testing.assert_allclose(out, [np.linalg.svd(b * c, compute_uv=False) for c in (1, 2, 3)],
                             rtol=1e-12)


@pytest.mark.parametrize("dtype, shape, order", [(np.float64, (4, 3), 2),
                                                  (np.complex128, (3, 4), 2),
                                                  (np.float64, (3, 3), 1),
                                                  (np.complex128, (4, 3), 1)])
def test_svd_grads(rng, dtype, shape, order):
  a = _random(rng, shape, dtype)
  singular_values = lambda x: L.svd(x, compute_uv=False)
  jtu.check_grads(singular_values, (a,), order, atol=1e-6, rtol=1e-6)

  def reweighted(x):  # U sin(S) V^H: independent of the singular vectors' phases
    u, s, vh = L.svd(x, full_matrices=False)
    return (u * jnp.sin(s)[None, :]) @ vh
  jtu.check_grads(reweighted, (a,), order, atol=1e-6, rtol=1e-6)
  right_projector = lambda x: (lambda vh: jnp.conj(vh.T) @ vh)(L.svd(x, full_matrices=False)[2])
  jtu.check_grads(right_projector, (a,), 1, atol=1e-6, rtol=1e-6)


def test_svd_grads_batched_and_full_square(rng):
  a = _random(rng, (2, 4, 3), np.float64)
  jtu.check_grads(lambda x: L.svd(x, compute_uv=False), (a,), 1, atol=1e-6, rtol=1e-6)
  square = _random(rng, (3, 3), np.float64)
  jtu.check_grads(lambda x: (lambda u, s, vh: (u * s) @ vh)(*L.svd(x)), (square,), 1,
                  atol=1e-6, rtol=1e-6)


def test_svd_jvp_of_full_matrices_not_implemented(rng):
  a = _random(rng, (4, 3), np.float64)
  with pytest.raises(NotImplementedError,
                     match="Singular value decomposition JVP not implemented for full matrices"):
    xjax.jvp(L.svd, (a,), (a,))
  # Singular values alone are differentiable whatever full_matrices says.
  _, s_dot = xjax.jvp(lambda x: L.svd(x, compute_uv=False), (a,), (a,))
  np.testing.assert_allclose(s_dot, np.linalg.svd(a, compute_uv=False), rtol=1e-10)


SVD_JAXPR = """\
{ lambda ; a:f32[3,4]. let
    b:f32[3] c:f32[3,3] d:f32[4,4] = svd[
      algorithm=None
      compute_uv=True
      full_matrices=True
      subset_by_index=None
    ] a
  in (c, b, d) }"""

SVD_VALUES_JAXPR = """\
{ lambda ; a:f32[3,4]. let
    b:f32[3] = svd[
      algorithm=None
      compute_uv=False
      full_matrices=False
      subset_by_index=None
    ] a
  in (b,) }"""


def test_svd_jaxprs_match_jax():
  x = np.ones((3, 4), np.float32)
  assert str(xjax.make_jaxpr(L.svd)(x)) == SVD_JAXPR
  values = lambda x: L.svd(x, full_matrices=False, compute_uv=False)
  assert str(xjax.make_jaxpr(values)(x)) == SVD_VALUES_JAXPR


# ----------------------------------------------------------------------------
# eig


def _sorted_eigenvalues(w):
  return np.sort_complex(np.round(w, 6))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 1, 3, 3), (0, 0)])
def test_eig_matches_numpy_and_reconstructs(rng, dtype, shape):
  a = _random(rng, shape, dtype)
  tol = TOL[np.dtype(dtype)] * 10 * max(shape[-1], 1)
  cdtype = np.result_type(dtype, np.complex64)
  for fn in (L.eig, xjax.jit(L.eig)):
    w, vl, vr = map(np.asarray, fn(a))
    assert w.dtype == vl.dtype == vr.dtype == cdtype
    assert w.shape == shape[:-1] and vl.shape == vr.shape == shape
    np.testing.assert_allclose(a @ vr, vr * w[..., None, :], rtol=tol, atol=tol)
    np.testing.assert_allclose(_h(vl) @ a, w[..., :, None] * _h(vl), rtol=tol, atol=tol)
    batch = int(np.prod(shape[:-2]))
    for flat_w, flat_a in zip(w.reshape(batch, shape[-1]), a.reshape(batch, *shape[-2:])):
      np.testing.assert_allclose(np.sort_complex(flat_w), _sorted_by(flat_w, flat_a),
                                 rtol=tol, atol=tol)
    # LAPACK's normalisation: unit columns whose largest-magnitude entry is real.
    if a.size:
      np.testing.assert_allclose(np.linalg.norm(vr, axis=-2), 1, rtol=tol)
      k = np.argmax(np.abs(vr), axis=-2)
      np.testing.assert_allclose(np.take_along_axis(vr, k[..., None, :], -2).imag, 0, atol=tol)


def _sorted_by(w, a):
  """NumPy's eigenvalues of `a`, matched one to one with `w`, in `w`'s sorted order."""
  expected = np.linalg.eigvals(a.astype(np.complex128))
  order = [int(np.argmin(np.abs(expected - x))) for x in np.sort_complex(w)]
  assert sorted(order) == list(range(len(w)))
  return expected[order]


def test_eig_matches_scipy_eigenvectors(rng):
  a = _random(rng, (5, 5), np.float64)
  w, vl, vr = L.eig(a)
  w_ref, vl_ref, vr_ref = scipy.linalg.eig(a, left=True, right=True)
  order, order_ref = np.argsort(np.asarray(w), kind="stable"), np.argsort(w_ref, kind="stable")
  np.testing.assert_allclose(np.asarray(w)[order], w_ref[order_ref], rtol=1e-10)
  # Both follow LAPACK geev's normalisation, so the vectors agree exactly.
  np.testing.assert_allclose(np.asarray(vr)[:, order], vr_ref[:, order_ref], atol=1e-10)
  np.testing.assert_allclose(np.asarray(vl)[:, order], vl_ref[:, order_ref], atol=1e-10)


@pytest.mark.parametrize("left, right", [(True, False), (False, True), (False, False)])
def test_eig_compute_flags(rng, left, right):
  a = _random(rng, (2, 3, 3), np.float32)
  out = L.eig(a, compute_left_eigenvectors=left, compute_right_eigenvectors=right)
  assert len(out) == 1 + left + right
  w_all, vl_all, vr_all = L.eig(a)
  np.testing.assert_allclose(out[0], w_all, rtol=1e-5)
  if left:
    np.testing.assert_allclose(out[1], vl_all, atol=1e-5)
  if right:
    np.testing.assert_allclose(out[-1], vr_all, atol=1e-5)


def test_eig_implementations():
  with pytest.raises(ValueError, match="Only the lapack implementation is supported on CPU."):
    L.eig(np.eye(2), implementation=L.EigImplementation.MAGMA)
  w = L.eig(np.diag([2.0, 3.0]), implementation=L.EigImplementation.LAPACK)[0]
  np.testing.assert_allclose(w, [2, 3])
  with pytest.warns(DeprecationWarning, match="use_magma is deprecated"):
    w = L.eig(np.diag([2.0, 3.0]), use_magma=False)[0]
  np.testing.assert_allclose(w, [2, 3])
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    with pytest.raises(ValueError, match="Only the lapack implementation"):
      L.eig(np.eye(2), use_magma=True)


def test_eig_errors():
  with pytest.raises(ValueError, match=r"The input to eig must be a square matrix. Got shape "
                     r"\(3, 4\)."):
    L.eig(np.ones((3, 4)))
  with pytest.raises(TypeError, match="eig does not accept dtype int32 at position 0. Accepted "
                     "dtypes at position 0 are subtypes of floating, complexfloating."):
    L.eig(np.ones((3, 3), np.int32))
  with pytest.raises(TypeError, match="Input 0 to eig must have rank at least 2"):
    L.eig(np.ones(3))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_eig_of_non_finite_matrix_is_nan_per_matrix(dtype, bad):
  broken = GOOD.astype(dtype)
  broken[1, 2] = bad
  for out in L.eig(np.stack([GOOD.astype(dtype), broken])):
    out = np.asarray(out)
    assert np.all(np.isfinite(out[0])) and np.all(np.isnan(out[1].real))


def test_eig_vmap_matches_loop(rng):
  a = _random(rng, (3, 2, 3), np.float64)  # mapped over axis 1
  w, vl, vr = xjax.vmap(L.eig, in_axes=1)(a)
  for i in range(2):
    w_i, vl_i, vr_i = L.eig(a[:, i])
    np.testing.assert_allclose(w[i], w_i, rtol=1e-12)
    np.testing.assert_allclose(vr[i], vr_i, atol=1e-12)
    np.testing.assert_allclose(vl[i], vl_i, atol=1e-12)
  b, c = _random(rng, (3, 3), np.float64), _random(rng, (3, 3, 2), np.float64)
  values = lambda x, y: L.eig(x + y, compute_left_eigenvectors=False,
                              compute_right_eigenvectors=False)[0]
  out = xjax.jit(xjax.vmap(values, in_axes=(None, 2)))(b, c)
  for i in range(2):
    np.testing.assert_allclose(out[i], values(b, c[:, :, i]), rtol=1e-12)


# Real matrices with real eigenvalues and with a complex-conjugate pair, and a
# complex one. Generic on purpose: on special forms (a Hessenberg matrix, a pair
# built from a rotation block) LAPACK's sign choice for the real entry of a
# complex eigenvector flips under perturbation, and finite differences jump.
def _eig_test_matrices(rng):
  q = _random(rng, (3, 3), np.float64)
  real_spectrum = q @ np.diag([1.0, 2.5, -1.5]) @ np.linalg.inv(q)
  conjugate_pair = np.array([[0.5, -0.75, -0.5], [2.5, 0.95, 2.55], [-0.8, -0.55, 0.15]])
  assert np.iscomplex(np.linalg.eigvals(conjugate_pair)).sum() == 2
  return [real_spectrum, conjugate_pair, _random(rng, (3, 3), np.complex128)]


def test_eig_eigenvalue_grads(rng):
  values = lambda x: L.eig(x, compute_left_eigenvectors=False,
                           compute_right_eigenvectors=False)[0]
  for a in _eig_test_matrices(rng):
    jtu.check_grads(values, (a,), 1, atol=1e-6, rtol=1e-6)
  # The rule differentiates through the eigenvectors: second order needs the opt-in.
  a = _eig_test_matrices(rng)[1]
  with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
    xjax.hessian(lambda x: values(x).real.sum())(a)
  opted_in = lambda x: L.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False,
                             enable_eigvec_derivs=True)[0]
  jtu.check_grads(opted_in, (a,), 2, atol=1e-6, rtol=1e-6)


def test_eig_eigenvector_grads_when_enabled(rng):
  for a in _eig_test_matrices(rng):
    right = lambda x: L.eig(x, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
    jtu.check_grads(right, (a,), 1, atol=1e-6, rtol=1e-6)
    both = lambda x: L.eig(x, enable_eigvec_derivs=True)
    jtu.check_grads(both, (a,), 1, modes=("fwd",), atol=1e-6, rtol=1e-6)


def test_eig_eigenvector_grads_second_order(rng):
  a = _eig_test_matrices(rng)[1]
  right = lambda x: L.eig(x, compute_left_eigenvectors=False, enable_eigvec_derivs=True)[1]
  jtu.check_grads(right, (a,), 2, atol=1e-5, rtol=1e-5)


def test_eig_eigenvector_derivatives_need_opt_in(rng):
  a = _random(rng, (3, 3), np.float64)
  with pytest.raises(NotImplementedError, match="Pass enable_eigvec_derivs=True"):
    xjax.jvp(L.eig, (a,), (a,))
  with pytest.raises(NotImplementedError, match="Derivatives of non-symmetric eigenvectors"):
    xjax.grad(lambda x: L.eig(x)[0].real.sum())(a)


EIG_JAXPR = """\
{ lambda ; a:f32[3,3]. let
    b:c64[3] c:c64[3,3] d:c64[3,3] = eig[
      compute_left_eigenvectors=True
      compute_right_eigenvectors=True
      enable_eigvec_derivs=False
      implementation=None
    ] a
  in (b, c, d) }"""


def test_eig_jaxpr_matches_jax():
  assert str(xjax.make_jaxpr(L.eig)(np.ones((3, 3), np.float32))) == EIG_JAXPR


def test_eig_lowers_to_lapack_geev():
  text = xjax.jit(lambda x: L.eig(x, compute_left_eigenvectors=False)).lower(
      np.ones((2, 3, 3), np.float32)).compiler_ir()
  assert 'call_target_name = "lapack_sgeev_ffi"' in text
  assert "backend_config = {compute_left = 78 : ui8, compute_right = 86 : ui8}" in text
  assert '"stablehlo.complex"' in text


# ----------------------------------------------------------------------------
# All three under transformations together


def test_grads_of_batched_input_and_under_vmap(rng):
  a = _random(rng, (2, 3, 3), np.float64)
  values = lambda x: L.eig(x, compute_left_eigenvectors=False,
                           compute_right_eigenvectors=False)[0]
  jtu.check_grads(values, (a,), 1, atol=1e-6, rtol=1e-6)
  grads = [xjax.grad(lambda x: values(x).real.sum()),
           xjax.grad(lambda x: L.svd(x, compute_uv=False).sum()),
           xjax.grad(lambda x: L.eigh(x)[1][0])]
  for g in grads:
    out = xjax.jit(xjax.vmap(g))(a)
    for i in range(2):
      np.testing.assert_allclose(out[i], g(a[i]), rtol=1e-10, atol=1e-12)
