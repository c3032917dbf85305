"""lax.linalg.cholesky and triangular_solve: values against NumPy/SciPy,
reconstruction, batching, vmap, derivatives, printed jaxprs and errors."""
import numpy as np
import pytest
import scipy.linalg

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src import test_util as jtu
from xjax.lax import linalg as L

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
TOL = {np.dtype(np.float32): 1e-4, np.dtype(np.complex64): 1e-4,
       np.dtype(np.float64): 1e-10, np.dtype(np.complex128): 1e-10}


def _random(rng, shape, dtype):
  x = rng.standard_normal(shape)
  if np.issubdtype(dtype, np.complexfloating):
    x = x + 1j * rng.standard_normal(shape)
  return x.astype(dtype)


def _spd(rng, shape, dtype):
  """Well-conditioned Hermitian positive-definite matrices of `shape` (..., n, n)."""
  a = _random(rng, shape, dtype)
  n = shape[-1]
  return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


@pytest.fixture(autouse=True)
def _x64_for_all():
  with xjax._src.config.enable_x64(True):
    yield


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 5, 5), (2, 3, 3, 3), (0, 0), (3, 0, 0),
                                   (0, 2, 2)])
def test_cholesky_matches_numpy_and_reconstructs(rng, dtype, shape):
  a = _spd(rng, shape, dtype)
  tol = TOL[np.dtype(dtype)]
  for fn in (L.cholesky, xjax.jit(L.cholesky)):
    l = np.asarray(fn(a))
    assert l.dtype == dtype and l.shape == shape
    np.testing.assert_allclose(l, np.linalg.cholesky(a) if a.size else a, rtol=tol, atol=tol)
    np.testing.assert_allclose(l @ np.conj(np.swapaxes(l, -1, -2)), a, rtol=tol,
                               atol=tol * shape[-1] if shape[-1] else tol)
    assert np.all(np.triu(l, 1) == 0)


def test_cholesky_of_indefinite_matrix_is_nan_per_matrix(rng):
  good = _spd(rng, (3, 3), np.float32)
  batch = np.stack([good, -np.eye(3, dtype=np.float32)])
  out = np.asarray(L.cholesky(batch))
  assert np.all(np.isfinite(out[0]))
  assert np.all(np.isnan(out[1][np.tril_indices(3)])) and np.all(np.triu(out[1], 1) == 0)


def test_cholesky_symmetrize_input(rng):
  a = _spd(rng, (4, 4), np.float64)
  lower_only = np.tril(a) + np.triu(np.full((4, 4), 1e3), 1)
  np.testing.assert_allclose(L.cholesky(lower_only, symmetrize_input=False),
                             np.linalg.cholesky(a), rtol=1e-10)
  skewed = a + np.triu(np.ones((4, 4)), 1) - np.tril(np.ones((4, 4)), -1)
  np.testing.assert_allclose(L.cholesky(skewed), np.linalg.cholesky(a), rtol=1e-10)


def test_cholesky_of_integers_is_float_as_in_jax():
  # JAX's true division: int32 -> float32 even with x64 on, int64 -> float64.
  for int_dtype, float_dtype in ((np.int32, np.float32), (np.int64, np.float64)):
    out = L.cholesky(4 * np.eye(2, dtype=int_dtype))
    assert out.dtype == float_dtype
    np.testing.assert_array_equal(out, 2 * np.eye(2))


def test_cholesky_vmap_matches_loop(rng):
  a = _spd(rng, (3, 2, 4, 4), np.float32)
  out = xjax.vmap(L.cholesky, in_axes=1)(a)
  expected = np.stack([np.linalg.cholesky(a[:, i]) for i in range(2)])
  np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_cholesky_grads(rng, dtype):
  a = _spd(rng, (3, 3), dtype)
  jtu.check_grads(lambda x: L.cholesky(x), (a,), order=2, modes=("fwd", "rev"),
                  atol=1e-5, rtol=1e-5)
  jtu.check_grads(lambda x: L.cholesky(x), (np.stack([a, a + np.eye(3)]),), order=1,
                  atol=1e-5, rtol=1e-5)


def test_cholesky_errors():
  with pytest.raises(ValueError, match=r"The input to cholesky must be a square matrix. "
                                       r"Got shape \(2, 3\)."):
    L.cholesky(np.ones((2, 3), np.float32), symmetrize_input=False)
  with pytest.raises(TypeError, match="cholesky does not accept dtype int32 at position 0"):
    L.cholesky(np.ones((2, 2), np.int32), symmetrize_input=False)
  with pytest.raises(TypeError, match="must have rank at least 2"):
    L.cholesky(np.ones((2,), np.float32), symmetrize_input=False)


JAX_CHOLESKY_JAXPR = """\
{ lambda ; a:f32[2,4,4]. let
    b:f32[2,4,4] = transpose[permutation=(0, 2, 1)] a
    c:f32[2,4,4] = add a b
    d:f32[2,4,4] = div c 2.0:f32[]
    e:f32[2,4,4] = cholesky d
    f:i32[4,4] = iota[dimension=0 dtype=int32 shape=(4, 4) sharding=None] 
    g:i32[4,4] = add f 0:i32[]
    h:i32[4,4] = iota[dimension=1 dtype=int32 shape=(4, 4) sharding=None] 
    i:bool[4,4] = ge g h
    j:bool[2,4,4] = broadcast_in_dim[broadcast_dimensions=(1, 2)] i
    k:f32[2,4,4] = broadcast_in_dim 0.0:f32[]
    l:f32[2,4,4] = select_n j k e
  in (l,) }"""

JAX_TRSM_JAXPR = """\
{ lambda ; a:f32[4,4] b:f32[4]. let
    c:f32[4,1] = broadcast_in_dim[broadcast_dimensions=(0,)] b
    d:f32[4,1] = triangular_solve[
      conjugate_a=False
      left_side=True
      lower=True
      transpose_a=False
      unit_diagonal=False
    ] a c
    e:f32[4] = squeeze[dimensions=(1,)] d
  in (e,) }"""


@pytest.fixture
def _x32():
  """The golden jaxprs were printed by JAX with x64 off (index dtypes are int32 there)."""
  with xjax._src.config.enable_x64(False):
    yield


def test_printed_jaxprs_match_jax(_x32):
  a = np.eye(4, dtype=np.float32)
  assert str(xjax.make_jaxpr(L.cholesky)(np.stack([a, a]))) == JAX_CHOLESKY_JAXPR
  f = lambda a, b: L.triangular_solve(a, b, left_side=True, lower=True)
  assert str(xjax.make_jaxpr(f)(a, a[:, 0])) == JAX_TRSM_JAXPR


def _op(a, lower, transpose_a, conjugate_a, unit_diagonal):
  a = np.tril(a) if lower else np.triu(a)
  if unit_diagonal:
    a = a - np.diag(np.diag(a)) + np.eye(a.shape[-1])
  if conjugate_a:
    a = np.conj(a)
  return a.T if transpose_a else a


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
@pytest.mark.parametrize("conjugate_a", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
def test_triangular_solve_all_flags(rng, dtype, left_side, lower, transpose_a, conjugate_a,
                                    unit_diagonal):
  a = _random(rng, (4, 4), dtype) + 4 * np.eye(4, dtype=dtype)
  b = _random(rng, (4, 3) if left_side else (3, 4), dtype)
  kw = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
            conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
  x = np.asarray(xjax.jit(lambda a, b: L.triangular_solve(a, b, **kw))(a, b))
  op = _op(a, lower, transpose_a, conjugate_a and np.iscomplexobj(a), unit_diagonal)
  residual = op @ x - b if left_side else x @ op - b
  assert np.abs(residual).max() < 50 * TOL[np.dtype(dtype)]


@pytest.mark.parametrize("left_side", [True, False])
def test_triangular_solve_batched_and_vector(rng, left_side):
  a = np.tril(_random(rng, (2, 4, 4), np.float64)) + 4 * np.eye(4)
  b = _random(rng, (2, 4, 3) if left_side else (2, 3, 4), np.float64)
  x = L.triangular_solve(a, b, left_side=left_side, lower=True)
  for i in range(2):
    expected = (scipy.linalg.solve_triangular(a[i], b[i], lower=True) if left_side
                else scipy.linalg.solve_triangular(a[i].T, b[i].T, lower=False).T)
    np.testing.assert_allclose(x[i], expected, rtol=1e-10)
  v = _random(rng, (2, 4), np.float64)
  xv = L.triangular_solve(a, v, left_side=left_side, lower=True)
  assert xv.shape == (2, 4)
  for i in range(2):
    expected = (scipy.linalg.solve_triangular(a[i], v[i], lower=True) if left_side
                else scipy.linalg.solve_triangular(a[i].T, v[i], lower=False))
    np.testing.assert_allclose(xv[i], expected, rtol=1e-10)


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("a_axis, b_axis", [(None, 0), (0, None), (0, 0), (None, 2), (2, 1)])
def test_triangular_solve_vmap_matches_loop(rng, left_side, a_axis, b_axis):
  n = 3
  a = np.tril(_random(rng, (4, 4), np.float64)) + 4 * np.eye(4)
  b = _random(rng, (4, 2) if left_side else (2, 4), np.float64)
  a_b = np.stack([a + i for i in range(n)], axis=a_axis) if a_axis is not None else a
  b_b = np.stack([b * (i + 1) for i in range(n)], axis=b_axis) if b_axis is not None else b
  f = lambda a, b: L.triangular_solve(a, b, left_side=left_side, lower=True)
  out = xjax.vmap(f, in_axes=(a_axis, b_axis))(a_b, b_b)
  for i in range(n):
    ai = np.take(a_b, i, a_axis) if a_axis is not None else a
    bi = np.take(b_b, i, b_axis) if b_axis is not None else b
    np.testing.assert_allclose(out[i], f(ai, bi), rtol=1e-10)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("transpose_a, conjugate_a", [(False, False), (True, False), (True, True),
                                                      (False, True)])
def test_triangular_solve_grads(rng, dtype, left_side, transpose_a, conjugate_a):
  a = np.tril(_random(rng, (3, 3), dtype)) + 3 * np.eye(3)
  b = _random(rng, (3, 2) if left_side else (2, 3), dtype)
  f = lambda a, b: L.triangular_solve(a, b, left_side=left_side, lower=True,
                                      transpose_a=transpose_a, conjugate_a=conjugate_a)
  jtu.check_grads(f, (a, b), order=2, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


def test_triangular_solve_is_linear_in_b(rng):
  a = np.tril(_random(rng, (3, 3), np.float64)) + 3 * np.eye(3)
  b = _random(rng, (3, 2), np.float64)
  f = lambda b: L.triangular_solve(a, b, left_side=True, lower=True)
  f_vjp = lambda ct: xjax.vjp(f, b)[1](ct)[0]
  jaxpr = str(xjax.make_jaxpr(f_vjp)(np.ones((3, 2))))
  assert "transpose_a=True" in jaxpr and jaxpr.count("triangular_solve") == 2
  ct = f_vjp(np.ones((3, 2)))
  np.testing.assert_allclose(ct, np.linalg.solve(np.tril(a).T, np.ones((3, 2))), rtol=1e-10)


def test_triangular_solve_errors():
  with pytest.raises(ValueError, match="The first input to triangular_solve must be a square"):
    L.triangular_solve(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))
  with pytest.raises(ValueError, match=r"Incompatible shapes for arguments to triangular_solve: "
                                       r"\(2, 2\) and \(3, 2\)."):
    L.triangular_solve(np.ones((2, 2), np.float32), np.ones((3, 2), np.float32), left_side=True)
  with pytest.raises(TypeError, match="triangular_solve does not accept dtype int32"):
    L.triangular_solve(np.ones((2, 2), np.int32), np.ones((2, 2), np.int32))
