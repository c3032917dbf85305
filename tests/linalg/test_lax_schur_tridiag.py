"""lax.linalg schur, hessenberg, tridiagonal, tridiagonal_solve, symmetric_product and
cholesky_update: values against NumPy/SciPy and reconstruction identities, batching,
vmap, jit, derivatives (where JAX defines them), lowering, printed jaxprs and errors."""
import numpy as np
import pytest
import scipy.linalg

import xjax
from xjax._src import test_util as jtu
from xjax.lax import linalg as L

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
REAL_DTYPES = [np.float32, np.float64]
TOL = {np.dtype(np.float32): 2e-4, np.dtype(np.complex64): 2e-4,
       np.dtype(np.float64): 1e-10, np.dtype(np.complex128): 1e-10}
SHAPES = [(1, 1), (5, 5), (2, 3, 3, 3)]


def _random(rng, shape, dtype):
  x = rng.standard_normal(shape)
  if np.issubdtype(dtype, np.complexfloating):
    x = x + 1j * rng.standard_normal(shape)
  return x.astype(dtype)


def _hermitian(rng, shape, dtype):
  a = _random(rng, shape, dtype)
  return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(dtype)


def _H(x):
  return np.conj(np.swapaxes(x, -1, -2))


def _flat(x, core_ndim):
  """x as a list of its core arrays (its last `core_ndim` axes), batch axes flattened."""
  core = x.shape[x.ndim - core_ndim:]
  return list(x.reshape((int(np.prod(x.shape[:x.ndim - core_ndim])),) + core))


def _tol(dtype, n=1):
  return TOL[np.dtype(dtype)] * max(n, 1)


@pytest.fixture(autouse=True)
def _x64_for_all():
  with xjax._src.config.enable_x64(True):
    yield


# ----------------------------------------------------------------------------
# schur


def _check_quasi_triangular(t, complex_input):
  n = t.shape[-1]
  if complex_input or n < 2:
    assert np.all(np.tril(t, -1) == 0)
    return
  assert np.all(np.tril(t, -2) == 0)
  sub = np.diagonal(t, -1, -2, -1) != 0
  # Real Schur form: 2x2 blocks never overlap (no two consecutive nonzero subdiagonals).
  assert not np.any(sub[..., 1:] & sub[..., :-1])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES + [(0, 0)])
def test_schur_reconstructs_and_is_quasi_triangular(rng, dtype, shape):
  a = _random(rng, shape, dtype)
  n = shape[-1]
  tol = _tol(dtype, n)
  for fn in (L.schur, xjax.jit(L.schur)):
    t, z = map(np.asarray, fn(a))
    assert t.dtype == z.dtype == dtype and t.shape == z.shape == shape
    np.testing.assert_allclose(z @ t @ _H(z), a, rtol=tol, atol=tol)
    np.testing.assert_allclose(_H(z) @ z, np.broadcast_to(np.eye(n), shape), atol=tol)
    for tt in _flat(t, 2):
      _check_quasi_triangular(tt, np.issubdtype(dtype, np.complexfloating))
    # T has A's eigenvalues (each of A's is near one of T's, and conversely).
    for tt, aa in zip(_flat(t, 2), _flat(a, 2)) if n else ():
      ev_t, ev_a = np.linalg.eigvals(tt), np.linalg.eigvals(aa)
      dist = np.abs(ev_t[:, None] - ev_a[None, :])
      assert np.all(dist.min(0) < 10 * tol) and np.all(dist.min(1) < 10 * tol)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_schur_matches_scipy(rng, dtype):
  a = _random(rng, (5, 5), dtype)
  t, z = L.schur(a)
  t_ref, z_ref = scipy.linalg.schur(a, output="complex" if dtype == np.complex128 else "real")
  np.testing.assert_allclose(t, t_ref, rtol=1e-10, atol=1e-10)
  np.testing.assert_allclose(z, z_ref, rtol=1e-10, atol=1e-10)


def test_schur_without_vectors(rng):
  a = _random(rng, (2, 4, 4), np.float32)
  out = L.schur(a, compute_schur_vectors=False)
  assert isinstance(out, list) and len(out) == 1
  np.testing.assert_allclose(out[0], L.schur(a)[0], rtol=1e-6, atol=1e-6)


def test_schur_failure_is_nan_per_matrix(rng):
  a = np.stack([_random(rng, (3, 3), np.float32), np.full((3, 3), np.nan, np.float32)])
  t, z = map(np.asarray, L.schur(a))
  assert np.all(np.isfinite(t[0])) and np.all(np.isfinite(z[0]))
  assert np.all(np.isnan(t[1])) and np.all(np.isnan(z[1]))


def test_schur_vmap_matches_loop(rng):
  a = _random(rng, (3, 2, 4, 4), np.float64)
  t, z = xjax.vmap(L.schur, in_axes=1)(a)
  for i in range(2):
    t_i, z_i = L.schur(a[:, i])
    np.testing.assert_allclose(t[i], t_i, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(z[i], z_i, rtol=1e-12, atol=1e-12)


def test_schur_errors(rng):
  with pytest.raises(NotImplementedError, match="The sort feature of LAPACK's gees routine"):
    L.schur(np.eye(3, dtype=np.float32), sort_eig_vals=True)
  # As in JAX, the sort flag only fails once the call is lowered.
  xjax.make_jaxpr(lambda x: L.schur(x, sort_eig_vals=True))(np.eye(3, dtype=np.float32))
  with pytest.raises(ValueError, match=r"The input to schur must be a square matrix. "
                                       r"Got shape \(3, 4\)."):
    L.schur(np.ones((3, 4), np.float32))
  with pytest.raises(TypeError, match=r"Input 0 to schur must have rank at least 2, but got "
                                      r"shape=\(3,\)"):
    L.schur(np.ones((3,), np.float32))
  with pytest.raises(TypeError, match="schur does not accept dtype int32"):
    L.schur(np.ones((3, 3), np.int32))
  a = _random(rng, (3, 3), np.float64)
  with pytest.raises(NotImplementedError, match="schur"):
    xjax.jvp(L.schur, (a,), (a,))


# ----------------------------------------------------------------------------
# hessenberg


def _householder_q(vectors, taus):
  """Q = H_0 H_1 ... from reflectors v_i (v_i[first(i)] = 1) and scalars taus."""
  n = vectors[0].shape[0] if vectors else 1
  q = np.eye(n, dtype=np.complex128)
  for v, tau in zip(vectors, taus):
    q = q @ (np.eye(n) - tau * np.outer(v, np.conj(v)))
  return q


def _hessenberg_q(a, taus):
  n = a.shape[-1]
  vectors = []
  for i in range(n - 1):
    v = np.zeros(n, np.complex128)
    v[i + 1] = 1
    v[i + 2:] = a[i + 2:, i]
    vectors.append(v)
  return _householder_q(vectors, taus)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_hessenberg_reconstructs(rng, dtype, shape):
  a = _random(rng, shape, dtype)
  n = shape[-1]
  tol = _tol(dtype, n)
  for fn in (L.hessenberg, xjax.jit(L.hessenberg)):
    h_and_v, taus = map(np.asarray, fn(a))
    assert h_and_v.dtype == taus.dtype == dtype
    assert h_and_v.shape == shape and taus.shape == shape[:-2] + (n - 1,)
    for x, hv, tau in zip(_flat(a, 2), _flat(h_and_v, 2),
                          _flat(taus, 1)):
      q = _hessenberg_q(hv, tau)
      h = np.triu(hv, -1)
      np.testing.assert_allclose(q @ h @ _H(q), x, rtol=tol, atol=tol)
      np.testing.assert_allclose(_H(q) @ q, np.eye(n), atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_hessenberg_matches_scipy(rng, dtype):
  a = _random(rng, (5, 5), dtype)
  h_and_v, _ = L.hessenberg(a)
  np.testing.assert_allclose(np.triu(np.asarray(h_and_v), -1), scipy.linalg.hessenberg(a),
                             rtol=1e-10, atol=1e-10)


def test_hessenberg_vmap_matches_loop(rng):
  a = _random(rng, (4, 4, 3), np.float32)
  hv, taus = xjax.vmap(L.hessenberg, in_axes=2)(a)
  for i in range(3):
    hv_i, taus_i = L.hessenberg(a[:, :, i])
    np.testing.assert_allclose(hv[i], hv_i, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(taus[i], taus_i, rtol=1e-6, atol=1e-6)


def test_hessenberg_errors(rng):
  with pytest.raises(ValueError, match=r"Argument to Hessenberg reduction must have shape "
                                       r"\[..., n, n\], got shape \(3, 4\)"):
    L.hessenberg(np.ones((3, 4), np.float32))
  with pytest.raises(ValueError, match="Hessenberg reduction must have n >= 1"):
    L.hessenberg(np.ones((0, 0), np.float32))
  with pytest.raises(TypeError, match="hessenberg does not accept dtype int32"):
    L.hessenberg(np.ones((3, 3), np.int32))
  a = _random(rng, (3, 3), np.float64)
  with pytest.raises(NotImplementedError, match="hessenberg"):
    xjax.jvp(L.hessenberg, (a,), (a,))


# ----------------------------------------------------------------------------
# tridiagonal


def _tridiagonal_q(a, taus, lower):
  n = a.shape[-1]
  vectors = []
  for i in range(n - 1):
    v = np.zeros(n, np.complex128)
    if lower:  # Q = H_0 ... H_{n-2}; v_i = (0, .., 0, 1, a[i+2:, i])
      v[i + 1] = 1
      v[i + 2:] = a[i + 2:, i]
    else:      # Q = H_{n-2} ... H_0; v_i = (a[:i, i+1], 1, 0, .., 0)
      v[i] = 1
      v[:i] = a[:i, i + 1]
    vectors.append(v)
  if not lower:
    vectors, taus = vectors[::-1], taus[::-1]
  return _householder_q(vectors, taus)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal_reconstructs(rng, dtype, shape, lower):
  a = _hermitian(rng, shape, dtype)
  n = shape[-1]
  tol = _tol(dtype, n)
  real = np.dtype(dtype).type(0).real.dtype
  fns = (lambda x: L.tridiagonal(x, lower=lower),
         xjax.jit(lambda x: L.tridiagonal(x, lower=lower)))
  for fn in fns:
    arr, d, e, taus = map(np.asarray, fn(a))
    assert arr.dtype == taus.dtype == dtype and d.dtype == e.dtype == real
    assert arr.shape == shape and d.shape == shape[:-1]
    assert e.shape == taus.shape == shape[:-2] + (n - 1,)
    for x, ar, dd, ee, tau in zip(_flat(a, 2), _flat(arr, 2),
                                  _flat(d, 1), _flat(e, 1),
                                  _flat(taus, 1)):
      t = np.diag(dd) + np.diag(ee, -1) + np.diag(ee, 1)
      q = _tridiagonal_q(ar, tau, lower)
      np.testing.assert_allclose(q @ t @ _H(q), x, rtol=tol, atol=tol)
      np.testing.assert_allclose(np.real(np.diagonal(ar)), dd, rtol=tol, atol=tol)
      np.testing.assert_allclose(np.real(np.diagonal(ar, -1 if lower else 1)), ee,
                                 rtol=tol, atol=tol)
      np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(t)), np.linalg.eigvalsh(x),
                                 rtol=tol, atol=tol)


def test_tridiagonal_reads_one_triangle(rng):
  a = _hermitian(rng, (4, 4), np.float64)
  junk = np.triu(np.full((4, 4), 1e3), 1)
  for want, got in zip(L.tridiagonal(a), L.tridiagonal(np.tril(a) + junk)):
    np.testing.assert_allclose(np.tril(got) if got.ndim == 2 else got,
                               np.tril(want) if want.ndim == 2 else want, rtol=1e-12)


def test_tridiagonal_vmap_matches_loop(rng):
  a = _hermitian(rng, (3, 4, 4), np.complex64)
  outs = xjax.vmap(lambda x: L.tridiagonal(x, lower=False))(a)
  for i in range(3):
    for got, want in zip(outs, L.tridiagonal(a[i], lower=False)):
      np.testing.assert_allclose(got[i], want, rtol=1e-6, atol=1e-6)


def test_tridiagonal_errors(rng):
  for shape in [(3, 4), (0, 0)]:
    with pytest.raises(ValueError, match=r"The input to tridiagonal must be a square matrix. "
                                         rf"Got shape \({shape[0]}, {shape[1]}\)."):
      L.tridiagonal(np.ones(shape, np.float32))
  with pytest.raises(TypeError, match="tridiagonal does not accept dtype int32"):
    L.tridiagonal(np.ones((3, 3), np.int32))
  a = _hermitian(rng, (3, 3), np.float64)
  with pytest.raises(NotImplementedError, match="tridiagonal"):
    xjax.jvp(L.tridiagonal, (a,), (a,))


# ----------------------------------------------------------------------------
# tridiagonal_solve


def _tridiag_system(rng, batch, m, k, dtype):
  dl = _random(rng, batch + (m,), dtype)
  du = _random(rng, batch + (m,), dtype)
  d = (_random(rng, batch + (m,), dtype) + 4).astype(dtype)  # diagonally dominant
  b = _random(rng, batch + (m, k), dtype)
  return dl, d, du, b


def _dense(dl, d, du):
  m = d.shape[-1]
  a = d[..., :, None] * np.eye(m)
  idx = np.arange(m - 1)
  a[..., idx + 1, idx] = dl[..., 1:]
  a[..., idx, idx + 1] = du[..., :-1]
  return a


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch,m,k", [((), 1, 1), ((), 5, 3), ((2,), 4, 2), ((2, 3), 6, 1)])
def test_tridiagonal_solve_matches_dense_solve(rng, dtype, batch, m, k):
  dl, d, du, b = _tridiag_system(rng, batch, m, k, dtype)
  expected = np.linalg.solve(_dense(dl, d, du).astype(np.complex128), b)
  tol = _tol(dtype, m)
  for fn in (L.tridiagonal_solve, xjax.jit(L.tridiagonal_solve)):
    x = np.asarray(fn(dl, d, du, b))
    assert x.dtype == dtype and x.shape == b.shape
    np.testing.assert_allclose(x, expected, rtol=tol, atol=tol)


def test_tridiagonal_solve_matches_scipy_banded(rng):
  dl, d, du, b = _tridiag_system(rng, (), 6, 2, np.float64)
  ab = np.stack([np.concatenate([[0], du[:-1]]), d, np.concatenate([dl[1:], [0]])])
  np.testing.assert_allclose(L.tridiagonal_solve(dl, d, du, b),
                             scipy.linalg.solve_banded((1, 1), ab, b), rtol=1e-12)


def test_tridiagonal_solve_empty_system():
  z = np.zeros(0, np.float64)
  b = np.zeros((0, 2))
  assert L.tridiagonal_solve(z, z, z, b).shape == (0, 2)
  grad = xjax.grad(lambda b: L.tridiagonal_solve(z, z, z, b).sum())(b)
  assert grad.shape == (0, 2)


def test_tridiagonal_solve_singular(rng):
  z = np.zeros(4, np.float64)
  b = np.ones((4, 2))
  assert np.all(np.isnan(np.asarray(L.tridiagonal_solve(z, z, z, b))))
  perturbed = np.asarray(L.tridiagonal_solve(z, z, z, b, perturb_singular=True))
  assert np.all(np.isfinite(perturbed))
  # A nonsingular system is solved exactly with the perturbation on too.
  dl, d, du, b = _tridiag_system(rng, (2,), 5, 2, np.complex128)
  np.testing.assert_allclose(L.tridiagonal_solve(dl, d, du, b, perturb_singular=True),
                             L.tridiagonal_solve(dl, d, du, b), rtol=1e-12)


@pytest.mark.parametrize("in_axes", [(None, None, None, 0), (None, None, None, 2),
                                     (0, None, None, 1), (0, 0, 0, 0), (None, 0, None, None)])
def test_tridiagonal_solve_vmap_matches_loop(rng, in_axes):
  dl, d, du, b = _tridiag_system(rng, (), 5, 2, np.float64)
  args = [dl, d, du, b]
  batched = []
  for x, ax in zip(args, in_axes):
    if ax is None:
      batched.append(x)
    else:
      stack = np.stack([x + 0.1 * i for i in range(3)])
      batched.append(np.moveaxis(stack, 0, ax))
  out = xjax.vmap(L.tridiagonal_solve, in_axes=in_axes)(*batched)
  for i in range(3):
    args_i = [x if ax is None else np.take(x, i, axis=ax) for x, ax in zip(batched, in_axes)]
    np.testing.assert_allclose(out[i], L.tridiagonal_solve(*args_i), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_tridiagonal_solve_grads(rng, dtype):
  dl, d, du, b = _tridiag_system(rng, (), 4, 2, dtype)
  jtu.check_grads(L.tridiagonal_solve, (dl, d, du, b), order=2, modes=("fwd", "rev"),
                  atol=1e-5, rtol=1e-5)
  dl, d, du, b = _tridiag_system(rng, (2,), 3, 1, dtype)
  jtu.check_grads(lambda b: L.tridiagonal_solve(dl, d, du, b), (b,), order=1,
                  modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


def test_tridiagonal_solve_is_linear_in_b(rng):
  dl, d, du, b = _tridiag_system(rng, (), 5, 2, np.float64)
  ct = rng.standard_normal(b.shape)
  _, vjp = xjax.vjp(lambda b: L.tridiagonal_solve(dl, d, du, b), b)
  (got,) = vjp(ct)
  np.testing.assert_allclose(got, np.linalg.solve(_dense(dl, d, du).T, ct), rtol=1e-12)


def test_tridiagonal_solve_errors():
  f = np.ones(4, np.float32)
  with pytest.raises(TypeError, match="all diagonal arguments have the same shape"):
    L.tridiagonal_solve(f, f, np.ones(3, np.float32), np.ones((4, 2), np.float32))
  with pytest.raises(TypeError, match="the leading ndim-1 dimensions of b equal the "
                                      "dimensions of the diagonal arguments"):
    L.tridiagonal_solve(f, f, f, np.ones((3, 2), np.float32))
  with pytest.raises(TypeError, match="Input 3 to tridiagonal_solve must have rank at least 2"):
    L.tridiagonal_solve(f, f, f, np.ones((4,), np.float32))
  with pytest.raises(TypeError, match=r"lax.tridiagonal_solve requires arguments to have the "
                                      r"same dtypes, got float32, float32, float32, float64."):
    L.tridiagonal_solve(f, f, f, np.ones((4, 2), np.float64))
  i = np.ones(4, np.int32)
  with pytest.raises(TypeError, match="tridiagonal_solve does not accept dtype int32 at "
                                      "position 0"):
    L.tridiagonal_solve(i, i, i, np.ones((4, 2), np.int32))


# ----------------------------------------------------------------------------
# symmetric_product


@pytest.mark.parametrize("dtype", REAL_DTYPES)
@pytest.mark.parametrize("batch", [(), (2, 3)])
@pytest.mark.parametrize("alpha,beta", [(1., 0.), (2., -0.5), (3, 2)])
def test_symmetric_product_values(rng, dtype, batch, alpha, beta):
  a = _random(rng, batch + (3, 5), dtype)
  c = _hermitian(rng, batch + (3, 3), dtype)
  expected = alpha * a @ np.swapaxes(a, -1, -2) + beta * c
  tol = _tol(dtype, 5)
  f = lambda a, c: L.symmetric_product(a, c, alpha=alpha, beta=beta)
  for fn in (f, xjax.jit(f)):
    out = np.asarray(fn(a, c))
    assert out.dtype == dtype and out.shape == c.shape
    np.testing.assert_allclose(out, expected, rtol=tol, atol=tol)


def test_symmetric_product_symmetrize_output(rng):
  a = _random(rng, (2, 3, 4), np.float64)
  c = _random(rng, (2, 3, 3), np.float64)  # not symmetric: only its lower triangle counts
  out = np.asarray(L.symmetric_product(a, c, beta=1., symmetrize_output=True))
  low = np.tril(a @ np.swapaxes(a, -1, -2) + c)
  np.testing.assert_allclose(out, low + np.swapaxes(np.tril(low, -1), -1, -2), rtol=1e-12)


def test_symmetric_product_vmap_matches_loop(rng):
  a = _random(rng, (3, 4, 2), np.float32)
  c = _hermitian(rng, (3, 3), np.float32)
  out = xjax.vmap(lambda a: L.symmetric_product(a, c, alpha=2., beta=1.), in_axes=2)(a)
  for i in range(2):
    np.testing.assert_allclose(out[i], L.symmetric_product(a[..., i], c, alpha=2., beta=1.),
                               rtol=1e-6)


def test_symmetric_product_errors(rng):
  a = np.ones((3, 4), np.float32)
  with pytest.raises(TypeError, match="symmetric_product does not accept dtype complex64 at "
                                      "position 0"):
    L.symmetric_product(a.astype(np.complex64), np.ones((3, 3), np.complex64))
  with pytest.raises(TypeError, match=r"lax.symmetric_product requires arguments to have the "
                                      r"same dtypes, got float32, float64."):
    L.symmetric_product(a, np.ones((3, 3), np.float64))
  with pytest.raises(ValueError, match=r"symmetric_update expects a rectangular matrix of "
                                       r"shape \(m, n\) and a square matrix of shape \(n, n\). "
                                       r"Got shapes \(3, 4\) and \(4, 4\)."):
    L.symmetric_product(a, np.ones((4, 4), np.float32))
  with pytest.raises(TypeError, match="Input 1 to symmetric_product must have rank at least 2"):
    L.symmetric_product(a, np.float32(1))
  c = np.eye(3)
  with pytest.raises(NotImplementedError, match="symmetric_product"):
    xjax.jvp(L.symmetric_product, (a.astype(np.float64), c), (a.astype(np.float64), c))


# ----------------------------------------------------------------------------
# cholesky_update


@pytest.mark.parametrize("dtype", REAL_DTYPES)
@pytest.mark.parametrize("n", [1, 4])
def test_cholesky_update_matches_numpy(rng, dtype, n):
  x = rng.standard_normal((n, n))
  a = x @ x.T + n * np.eye(n)
  w = rng.standard_normal(n)
  r = np.linalg.cholesky(a).T.astype(dtype)
  expected = np.linalg.cholesky(a + np.outer(w, w)).T
  tol = _tol(dtype, n)
  for fn in (L.cholesky_update, xjax.jit(L.cholesky_update)):
    out = np.asarray(fn(r, w.astype(dtype)))
    assert out.dtype == dtype and out.shape == (n, n)
    np.testing.assert_allclose(out, expected, rtol=tol, atol=tol)
    np.testing.assert_allclose(out.T @ out, a + np.outer(w, w), rtol=tol, atol=tol)


def test_cholesky_update_with_zero_entries(rng):
  r = np.linalg.cholesky(np.diag([4., 9., 16.])).T
  w = np.array([0., 2., 0.])  # zero entries take the identity rotation
  np.testing.assert_allclose(L.cholesky_update(r, w),
                             np.linalg.cholesky(np.diag([4., 13., 16.])).T, rtol=1e-12)


def test_cholesky_update_errors():
  r = np.eye(3, dtype=np.float32)
  w = np.ones(3, np.float32)
  with pytest.raises(TypeError, match="cholesky_update does not accept dtype complex64"):
    L.cholesky_update(r.astype(np.complex64), w.astype(np.complex64))
  with pytest.raises(TypeError, match=r"lax.cholesky_update requires arguments to have the "
                                      r"same dtypes, got float64, float32."):
    L.cholesky_update(r.astype(np.float64), w)
  with pytest.raises(ValueError, match=r"Rank-1 update to Cholesky decomposition takes a "
                                       r"square matrix and a vector of the same size as input. "
                                       r"Got shapes \(3, 3\) and \(4,\) instead"):
    L.cholesky_update(r, np.ones(4, np.float32))
  with pytest.raises(TypeError, match=r"Input 0 to cholesky_update must have a rank of exactly "
                                      r"2, but got shape=\(2, 3, 3\)"):
    L.cholesky_update(np.stack([r, r]), np.stack([w, w]))
  with pytest.raises(NotImplementedError, match="cholesky_update"):
    xjax.vmap(L.cholesky_update)(np.stack([r, r]), np.stack([w, w]))
  with pytest.raises(NotImplementedError, match="cholesky_update"):
    xjax.jvp(L.cholesky_update, (r, w), (r, w))


# ----------------------------------------------------------------------------
# Lowering to the LAPACK kernels, and printed jaxprs (recorded from JAX 0.10.2)


@pytest.mark.parametrize("fn,args,target,attrs", [
    (L.schur, (np.ones((3, 3), np.float32),), "lapack_sgees_ffi",
     "{mode = 86 : ui8, sort = 78 : ui8}"),
    (lambda x: L.schur(x, compute_schur_vectors=False), (np.ones((3, 3), np.complex64),),
     "lapack_cgees_ffi", "{mode = 78 : ui8, sort = 78 : ui8}"),
    (L.hessenberg, (np.ones((3, 3), np.float64),), "lapack_dgehrd_ffi",
     "{high = 3 : i32, low = 1 : i32}"),
    (L.tridiagonal, (np.ones((3, 3), np.complex128),), "lapack_zhetrd_ffi", "{uplo = 76 : ui8}"),
    (lambda x: L.tridiagonal(x, lower=False), (np.ones((3, 3), np.float32),),
     "lapack_ssytrd_ffi", "{uplo = 85 : ui8}"),
    (L.tridiagonal_solve, (*[np.ones(4, np.float32)] * 3, np.ones((4, 2), np.float32)),
     "lapack_sgtsv_ffi", "{}"),
    (lambda *a: L.tridiagonal_solve(*a, perturb_singular=True),
     (*[np.ones(4, np.float32)] * 3, np.ones((4, 2), np.float32)),
     "tridiagonal_solve_perturbed_ffi", "{}"),
])
def test_lowers_to_jax_lapack_kernel(fn, args, target, attrs):
  text = xjax.jit(fn).lower(*args).compiler_ir()
  assert f'call_target_name = "{target}"' in text
  assert f"backend_config = {attrs}" in text


def test_symmetric_product_and_cholesky_update_lower_without_custom_calls():
  a = np.ones((2, 3), np.float32)
  assert "custom_call" not in xjax.jit(L.symmetric_product).lower(a, np.eye(2, dtype=a.dtype)
                                                                  ).as_text()
  text = xjax.jit(L.cholesky_update).lower(np.eye(3, dtype=np.float32),
                                           np.ones(3, np.float32)).as_text()
  assert "custom_call" not in text and "stablehlo.case" in text


JAX_SCHUR_JAXPR = """\
{ lambda ; a:f32[3,3]. let
    b:f32[3,3] c:f32[3,3] = schur[
      compute_schur_vectors=True
      select_callable=None
      sort_eig_vals=False
    ] a
  in (b, c) }"""

JAX_TRIDIAGONAL_JAXPR = """\
{ lambda ; a:c64[3,3]. let
    b:c64[3,3] c:f32[3] d:f32[2] e:c64[2] = tridiagonal[lower=True] a
  in (b, c, d, e) }"""

JAX_HESSENBERG_VMAP_JAXPR = """\
{ lambda ; a:f32[2,3,3]. let b:f32[2,3,3] c:f32[2,2] = hessenberg a in (b, c) }"""

JAX_TRIDIAGONAL_SOLVE_GRAD_JAXPR = """\
{ lambda ; a:f32[4] b:f32[4] c:f32[4] d:f32[4,2]. let
    e:f32[4,2] = tridiagonal_solve[perturb_singular=False] a b c d
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] e
    f:f32[4,2] = broadcast_in_dim 1.0:f32[]
    _:f32[1] = slice[limit_indices=(4,) start_indices=(3,) strides=None] c
    g:f32[1] = broadcast_in_dim 0.0:f32[]
    h:f32[3] = slice[limit_indices=(3,) start_indices=(0,) strides=None] c
    i:f32[4] = concatenate[dimension=0] g h
    j:f32[3] = slice[limit_indices=(4,) start_indices=(1,) strides=None] a
    _:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] a
    k:f32[1] = broadcast_in_dim 0.0:f32[]
    l:f32[4] = concatenate[dimension=0] j k
    m:f32[4,2] = tridiagonal_solve[perturb_singular=False] i b l f
  in (m,) }"""

JAX_TRIDIAGONAL_SOLVE_VMAP_JAXPR = """\
{ lambda ; a:f32[4] b:f32[4] c:f32[4] d:f32[3,4,2]. let
    e:f32[4,3,2] = transpose[permutation=(1, 0, 2)] d
    f:f32[4,6] = reshape[dimensions=None new_sizes=(4, 6) sharding=None] e
    g:f32[4,6] = tridiagonal_solve[perturb_singular=False] a b c f
    h:f32[4,3,2] = reshape[dimensions=None new_sizes=(4, 3, 2) sharding=None] g
    i:f32[3,4,2] = transpose[permutation=(1, 0, 2)] h
  in (i,) }"""

JAX_SYMMETRIC_PRODUCT_JAXPR = """\
{ lambda ; a:f32[2,3] b:f32[2,2]. let
    c:f32[2,2] = symmetric_product[alpha=2.0 beta=3.0] a b
    d:i32[2,2] = iota[dimension=0 dtype=int32 shape=(2, 2) sharding=None] 
    e:i32[2,2] = add d -1:i32[]
    f:i32[2,2] = iota[dimension=1 dtype=int32 shape=(2, 2) sharding=None] 
    g:bool[2,2] = ge e f
    h:f32[2,2] = broadcast_in_dim 0.0:f32[]
    i:f32[2,2] = select_n g h c
    j:f32[2,2] = transpose[permutation=(1, 0)] i
    k:i32[2,2] = iota[dimension=0 dtype=int32 shape=(2, 2) sharding=None] 
    l:i32[2,2] = add k 0:i32[]
    m:i32[2,2] = iota[dimension=1 dtype=int32 shape=(2, 2) sharding=None] 
    n:bool[2,2] = ge l m
    o:f32[2,2] = broadcast_in_dim 0.0:f32[]
    p:f32[2,2] = select_n n o c
    q:f32[2,2] = add p j
  in (q,) }"""

JAX_CHOLESKY_UPDATE_JAXPR = """\
{ lambda ; a:f32[3,3] b:f32[3]. let c:f32[3,3] = cholesky_update a b in (c,) }"""


@pytest.fixture
def _x32():
  """The golden jaxprs were printed by JAX with x64 off (index dtypes are int32 there)."""
  with xjax._src.config.enable_x64(False):
    yield


def test_printed_jaxprs_match_jax(_x32):
  f32 = np.float32
  assert str(xjax.make_jaxpr(L.schur)(np.ones((3, 3), f32))) == JAX_SCHUR_JAXPR
  assert (str(xjax.make_jaxpr(L.tridiagonal)(np.ones((3, 3), np.complex64)))
          == JAX_TRIDIAGONAL_JAXPR)
  assert (str(xjax.make_jaxpr(xjax.vmap(L.hessenberg))(np.ones((2, 3, 3), f32)))
          == JAX_HESSENBERG_VMAP_JAXPR)
  d, b = np.ones(4, f32), np.ones((4, 2), f32)
  grad_b = lambda dl, d, du, b: xjax.grad(
      lambda b: L.tridiagonal_solve(dl, d, du, b).sum())(b)
  assert str(xjax.make_jaxpr(grad_b)(d, d, d, b)) == JAX_TRIDIAGONAL_SOLVE_GRAD_JAXPR
  vmapped = xjax.vmap(L.tridiagonal_solve, (None, None, None, 0))
  assert (str(xjax.make_jaxpr(vmapped)(d, d, d, np.ones((3, 4, 2), f32)))
          == JAX_TRIDIAGONAL_SOLVE_VMAP_JAXPR)
  sym = lambda a, c: L.symmetric_product(a, c, alpha=2., beta=3., symmetrize_output=True)
  assert (str(xjax.make_jaxpr(sym)(np.ones((2, 3), f32), np.ones((2, 2), f32)))
          == JAX_SYMMETRIC_PRODUCT_JAXPR)
  assert (str(xjax.make_jaxpr(L.cholesky_update)(np.eye(3, dtype=f32), np.ones(3, f32)))
          == JAX_CHOLESKY_UPDATE_JAXPR)
