"""lax.ragged_dot / ragged_dot_general: values against group-wise NumPy matmuls,
all three ragged modes, dtypes, jit, vmap, derivatives, errors and printed jaxprs.

The jaxpr strings were printed by JAX 0.10.2's `make_jaxpr` on the same programs.
"""
import dataclasses

import ml_dtypes
import numpy as np
import pytest

import xjax
from xjax import lax

D = lax.RaggedDotDimensionNumbers
bf16 = np.dtype(ml_dtypes.bfloat16)
RNG = np.random.default_rng(0)

# Mode 2 (ragged contracting): [m, k] x [k, n], k ragged -> [g, m, n].
CONTRACTING = D((([1], [0]), ([], [])), [1], [])
# Mode 3 (ragged batch): [b, m, k] x [b, k, n] -> [b, m, n].
BATCH = D((([2], [1]), ([0], [0])), [0], [])
# Mode 1 with a batch dim: [b, m, k] x [g, k, b, n] with group_sizes [b, g].
NONCONTRACTING_BATCHED = D((([2], [1]), ([0], [2])), [1], [0])
# Mode 1 with the lhs ragged dim last and the rhs group dim in the middle:
# [k, m] x [k, g, n] -> [m, n].
NONCONTRACTING_T = D((([0], [0]), ([], [])), [1], [1])


def _groups(group_sizes, size):
  """(start, end) of each group within `size` positions (a group may be cut or empty)."""
  ends = np.cumsum(group_sizes)
  return [(min(e - s, size), min(e, size)) for s, e in zip(group_sizes, ends)]


def ref_ragged_dot(x, w, group_sizes, integer=False):
  """Row group i of x times w[i]; rows past the last group give zeros (float64 or int64)."""
  wide = np.int64 if integer else np.float64
  x, w = np.asarray(x).astype(wide), np.asarray(w).astype(wide)
  out = np.zeros((x.shape[0], w.shape[2]), wide)
  for i, (s, e) in enumerate(_groups(group_sizes, x.shape[0])):
    out[s:e] = x[s:e] @ w[i]
  return out


def ref_contracting(x, y, group_sizes):
  x, y = x.astype(np.float64), y.astype(np.float64)
  return np.stack([x[:, s:e] @ y[s:e] for s, e in _groups(group_sizes, x.shape[1])])


def rand(shape, dtype=np.float32):
  dtype = np.dtype(dtype)
  if dtype.kind == "i":
    return RNG.integers(-9, 10, size=shape).astype(dtype)
  return RNG.standard_normal(shape).astype(dtype)


def both(fun, *args):
  """fun(*args) eagerly and under jit (they must agree exactly)."""
  eager = fun(*args)
  jitted = xjax.jit(fun)(*args)
  np.testing.assert_array_equal(np.asarray(eager), np.asarray(jitted))
  return eager


def assert_close(actual, expected, dtype):
  actual = np.asarray(actual)
  assert actual.dtype == np.dtype(dtype), (actual.dtype, dtype)
  assert actual.shape == expected.shape, (actual.shape, expected.shape)
  if np.dtype(dtype).kind in "iu":
    np.testing.assert_array_equal(actual, expected)
  else:
    tol = 2e-2 if np.dtype(dtype) == bf16 else 1e-5
    np.testing.assert_allclose(actual.astype(np.float64), expected, rtol=tol, atol=tol)


# ----------------------------------------------------------------------------
# Values


@pytest.mark.parametrize("group_sizes", [
    [2, 3, 1],   # sums to m
    [0, 4, 2],   # an empty group first
    [3, 0, 0],   # empty groups last, sum < m
    [1, 1, 1],   # sum < m: the last rows are zero
    [4, 4, 4],   # sum > m: the groups are cut at m
    [0, 0, 0],   # all empty: all zeros
])
def test_ragged_dot_matches_groupwise_matmuls(group_sizes):
  x, w = rand((6, 5)), rand((3, 5, 4))
  gs = np.array(group_sizes, np.int32)
  out = both(lax.ragged_dot, x, w, gs)
  assert_close(out, ref_ragged_dot(x, w, gs), np.float32)


@pytest.mark.parametrize("lhs_dtype,rhs_dtype,preferred,expected", [
    (np.float32, np.float32, None, np.float32),
    (bf16, bf16, None, bf16),
    (bf16, bf16, np.float32, np.float32),
    (np.int8, np.int8, np.int32, np.int32),
    (np.int8, np.int8, None, np.int8),
    (np.int32, np.int32, None, np.int32),
    (bf16, np.float32, None, np.float32),
    (np.int32, np.uint32, None, np.int32),
    (np.float16, bf16, None, bf16),
])
def test_ragged_dot_dtypes(lhs_dtype, rhs_dtype, preferred, expected):
  x, w = rand((7, 3), lhs_dtype), rand((3, 3, 2), rhs_dtype)
  if np.dtype(rhs_dtype) == np.uint32:
    w = RNG.integers(0, 5, size=(3, 3, 2)).astype(np.uint32)
  gs = np.array([2, 4, 1], np.int32)
  fun = lambda x, w, g: lax.ragged_dot(x, w, g, preferred_element_type=preferred)
  out = both(fun, x, w, gs)
  reference = ref_ragged_dot(x, w, gs, integer=np.dtype(expected).kind == "i")
  if np.dtype(expected) == np.int8:
    reference = reference.astype(np.int8)  # XLA's int8 accumulation wraps
  assert_close(out, reference, expected)


def test_int8_accumulates_in_int32_without_overflow():
  x = np.full((4, 8), 100, np.int8)
  w = np.full((2, 8, 3), 100, np.int8)
  out = lax.ragged_dot(x, w, np.array([1, 3], np.int32), preferred_element_type=np.int32)
  np.testing.assert_array_equal(np.asarray(out), np.full((4, 3), 80000, np.int32))


@pytest.mark.parametrize("gs_dtype", [np.int32, np.int8, np.uint8, np.int16])
def test_group_sizes_integer_dtypes(gs_dtype):
  x, w = rand((5, 2)), rand((2, 2, 3))
  gs = np.array([2, 3], gs_dtype)
  assert_close(lax.ragged_dot(x, w, gs), ref_ragged_dot(x, w, gs), np.float32)


def test_bool_operands():
  x, w = rand((5, 3)) > 0, rand((2, 3, 4)) > 0
  gs = np.array([3, 1], np.int32)
  out = np.asarray(lax.ragged_dot(x, w, gs))
  assert out.dtype == np.bool_
  np.testing.assert_array_equal(out, ref_ragged_dot(x, w, gs, integer=True) > 0)


def test_empty_lhs_and_zero_groups():
  w, gs = rand((2, 3, 4)), np.array([2, 3], np.int32)
  assert np.asarray(lax.ragged_dot(np.zeros((0, 3), np.float32), w, gs)).shape == (0, 4)
  out = lax.ragged_dot(rand((6, 3)), np.zeros((0, 3, 4), np.float32), np.zeros((0,), np.int32))
  np.testing.assert_array_equal(np.asarray(out), np.zeros((6, 4), np.float32))


def test_precision_arguments():
  x, w, gs = rand((6, 3)), rand((2, 3, 4)), np.array([2, 3], np.int32)
  expected = ref_ragged_dot(x, w, gs)
  for precision in [lax.Precision.HIGHEST, "highest", ("high", "default"), "BF16_BF16_F32"]:
    tol = np.float32 if precision != "BF16_BF16_F32" else None
    out = lax.ragged_dot(x, w, gs, precision=precision)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5 if tol else 2e-2,
                               atol=1e-5 if tol else 2e-2)


def test_group_offset_is_not_supported():
  x, w, gs = rand((6, 3)), rand((2, 3, 4)), np.array([2, 3], np.int32)
  with pytest.raises(NotImplementedError, match="Unimplemented group_offset support."):
    lax.ragged_dot(x, w, gs, group_offset=0)
  with pytest.raises(TypeError, match="unhashable type: 'numpy.ndarray'"):
    lax.ragged_dot(x, w, gs, group_offset=np.array([0]))


def test_noncontracting_with_batch_and_2d_group_sizes():
  x, w = rand((2, 5, 3)), rand((2, 3, 2, 4))  # [b, m, k], [g, k, b, n]
  gs = np.array([[1, 3], [4, 1]], np.int32)
  out = both(lambda x, w, g: lax.ragged_dot_general(x, w, g, NONCONTRACTING_BATCHED), x, w, gs)
  expected = np.stack([ref_ragged_dot(x[b], w[:, :, b], gs[b]) for b in range(2)])
  assert_close(out, expected, np.float32)
  # A [g] group_sizes applies to every batch member.
  out = lax.ragged_dot_general(x, w, gs[0], NONCONTRACTING_BATCHED)
  expected = np.stack([ref_ragged_dot(x[b], w[:, :, b], gs[0]) for b in range(2)])
  assert_close(out, expected, np.float32)


def test_noncontracting_transposed_layout():
  x, w = rand((3, 6)), rand((3, 2, 4))  # [k, m], [k, g, n]
  gs = np.array([4, 1], np.int32)
  out = both(lambda x, w, g: lax.ragged_dot_general(x, w, g, NONCONTRACTING_T), x, w, gs)
  assert_close(out, ref_ragged_dot(x.T, w.transpose(1, 0, 2), gs), np.float32)


@pytest.mark.parametrize("group_sizes", [[2, 4], [0, 6], [1, 2], [5, 5]])
def test_contracting_mode(group_sizes):
  x, y = rand((4, 6)), rand((6, 5))
  gs = np.array(group_sizes, np.int32)
  out = both(lambda x, y, g: lax.ragged_dot_general(x, y, g, CONTRACTING), x, y, gs)
  assert_close(out, ref_contracting(x, y, gs), np.float32)


def test_contracting_mode_with_batch():
  dims = D((([2], [1]), ([0], [0])), [2], [])  # [b, m, k] x [b, k, n], gs [b, g]
  x, y = rand((2, 3, 5)), rand((2, 5, 4))
  gs = np.array([[2, 3], [0, 4]], np.int32)
  out = both(lambda x, y, g: lax.ragged_dot_general(x, y, g, dims), x, y, gs)
  expected = np.stack([ref_contracting(x[b], y[b], gs[b]) for b in range(2)], axis=1)
  assert_close(out, expected, np.float32)


def test_batch_mode_is_dot_general():
  # JAX 0.10.2's rule ignores group_sizes when the ragged dimension is a batch one.
  x, y = rand((3, 2, 4)), rand((3, 4, 5))
  out = both(lambda x, y, g: lax.ragged_dot_general(x, y, g, BATCH), x, y,
             np.array([1, 1], np.int32))
  assert_close(out, np.einsum("bmk,bkn->bmn", x.astype(np.float64), y), np.float32)


# ----------------------------------------------------------------------------
# vmap


def test_vmap_over_axis_0():
  x, w = rand((4, 6, 3)), rand((4, 2, 3, 5))
  gs = np.array([[2, 3], [0, 6], [6, 0], [1, 1]], np.int32)
  out = xjax.vmap(lax.ragged_dot)(x, w, gs)
  assert_close(out, np.stack([ref_ragged_dot(x[i], w[i], gs[i]) for i in range(4)]), np.float32)
  out = xjax.jit(xjax.vmap(lax.ragged_dot))(x, w, gs)
  assert_close(out, np.stack([ref_ragged_dot(x[i], w[i], gs[i]) for i in range(4)]), np.float32)


def test_vmap_contracting_mode_keeps_groups_first():
  x, y = rand((3, 4, 6)), rand((3, 6, 2))
  gs = np.array([[2, 4], [6, 0], [1, 1]], np.int32)
  out = xjax.vmap(lambda x, y, g: lax.ragged_dot_general(x, y, g, CONTRACTING))(x, y, gs)
  assert_close(out, np.stack([ref_contracting(x[i], y[i], gs[i]) for i in range(3)]), np.float32)


@pytest.mark.parametrize("in_axes", [(0, 0, None), (None, 0, 0), (0, None, 0), (1, 0, 0)])
def test_vmap_over_other_axes_is_not_implemented(in_axes):
  x, w, gs = rand((6, 4, 3)), rand((4, 2, 3, 5)), np.ones((4, 2), np.int32)
  if in_axes[0] is None:
    x = x[:, 0]
  if in_axes[1] is None:
    w = w[0]
  if in_axes[2] is None:
    gs = gs[0]
  if in_axes[0] == 0:
    x = x.transpose(1, 0, 2)
  with pytest.raises(NotImplementedError, match="^ragged_dot vmap over any dim but 0 - NYI"):
    xjax.vmap(lax.ragged_dot, in_axes=in_axes)(x, w, gs)


# ----------------------------------------------------------------------------
# Derivatives


def _ref_grads(x, w, gs, ct):
  """d sum(ragged_dot(x, w) * ct) / dx and / dw."""
  x, w, ct = (a.astype(np.float64) for a in (x, w, ct))
  dx, dw = np.zeros_like(x), np.zeros_like(w)
  for i, (s, e) in enumerate(_groups(gs, x.shape[0])):
    dx[s:e] = ct[s:e] @ w[i].T
    dw[i] = x[s:e].T @ ct[s:e]
  return dx, dw


@pytest.mark.parametrize("group_sizes", [[2, 3, 1], [0, 5, 0], [1, 1, 1], [4, 4, 4]])
def test_grad_matches_analytic(group_sizes):
  x, w, ct = rand((6, 3)), rand((3, 3, 4)), rand((6, 4))
  gs = np.array(group_sizes, np.int32)
  loss = lambda x, w: (lax.ragged_dot(x, w, gs) * ct).sum()
  dx, dw = xjax.grad(loss, argnums=(0, 1))(x, w)
  ref_dx, ref_dw = _ref_grads(x, w, gs, ct)
  np.testing.assert_allclose(np.asarray(dx), ref_dx, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(np.asarray(dw), ref_dw, rtol=1e-5, atol=1e-5)
  dx, dw = xjax.jit(xjax.grad(loss, argnums=(0, 1)))(x, w)
  np.testing.assert_allclose(np.asarray(dx), ref_dx, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(np.asarray(dw), ref_dw, rtol=1e-5, atol=1e-5)


def test_grad_matches_finite_differences():
  x, w, ct = rand((5, 2)), rand((2, 2, 3)), rand((5, 3))
  gs = np.array([2, 2], np.int32)
  loss = lambda x, w: (lax.ragged_dot(x, w, gs) * ct).sum()
  dx, dw = (np.asarray(g) for g in xjax.grad(loss, argnums=(0, 1))(x, w))
  f = lambda x, w: float((ref_ragged_dot(x, w, gs) * ct).sum())
  eps = 1e-3
  for arg, grad in ((0, dx), (1, dw)):
    args = [x.astype(np.float64), w.astype(np.float64)]
    fd = np.zeros(args[arg].shape)
    for idx in np.ndindex(fd.shape):
      hi, lo = [a.copy() for a in args], [a.copy() for a in args]
      hi[arg][idx] += eps
      lo[arg][idx] -= eps
      fd[idx] = (f(*hi) - f(*lo)) / (2 * eps)
    np.testing.assert_allclose(grad, fd, rtol=1e-3, atol=1e-3)


def test_grad_bfloat16_keeps_dtypes():
  x, w = rand((4, 3), bf16), rand((2, 3, 2), bf16)
  gs = np.array([1, 3], np.int32)
  dx, dw = xjax.grad(lambda x, w: lax.ragged_dot(x, w, gs).astype(np.float32).sum(),
                     argnums=(0, 1))(x, w)
  assert np.asarray(dx).dtype == bf16 and np.asarray(dw).dtype == bf16
  ref_dx, ref_dw = _ref_grads(x, w, gs, np.ones((4, 2)))
  np.testing.assert_allclose(np.asarray(dx).astype(np.float64), ref_dx, rtol=2e-2, atol=2e-2)
  np.testing.assert_allclose(np.asarray(dw).astype(np.float64), ref_dw, rtol=2e-2, atol=2e-2)


def test_grad_with_preferred_element_type_casts_back():
  x, w = rand((4, 3), bf16), rand((2, 3, 2), bf16)
  gs = np.array([2, 2], np.int32)
  f = lambda x, w: lax.ragged_dot(x, w, gs, preferred_element_type=np.float32).sum()
  dx, dw = xjax.grad(f, argnums=(0, 1))(x, w)
  assert np.asarray(dx).dtype == bf16 and np.asarray(dw).dtype == bf16
  ref_dx, ref_dw = _ref_grads(x, w, gs, np.ones((4, 2)))
  np.testing.assert_allclose(np.asarray(dx).astype(np.float64), ref_dx, rtol=2e-2, atol=2e-2)
  np.testing.assert_allclose(np.asarray(dw).astype(np.float64), ref_dw, rtol=2e-2, atol=2e-2)


def test_grad_with_batch_dims_and_moved_group_dim():
  x, w, ct = rand((2, 5, 3)), rand((2, 3, 2, 4)), rand((2, 5, 4))
  gs = np.array([[1, 3], [4, 1]], np.int32)
  loss = lambda x, w: (lax.ragged_dot_general(x, w, gs, NONCONTRACTING_BATCHED) * ct).sum()
  dx, dw = xjax.grad(loss, argnums=(0, 1))(x, w)
  for b in range(2):
    ref_dx, ref_dw = _ref_grads(x[b], w[:, :, b], gs[b], ct[b])
    np.testing.assert_allclose(np.asarray(dx)[b], ref_dx, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(dw)[:, :, b], ref_dw, rtol=1e-5, atol=1e-5)
  # [k, m] x [k, g, n]: the cotangents come back transposed into place.
  x, w, ct = rand((3, 6)), rand((3, 2, 4)), rand((6, 4))
  gs = np.array([4, 1], np.int32)
  loss = lambda x, w: (lax.ragged_dot_general(x, w, gs, NONCONTRACTING_T) * ct).sum()
  dx, dw = xjax.grad(loss, argnums=(0, 1))(x, w)
  ref_dx, ref_dw = _ref_grads(x.T, w.transpose(1, 0, 2), gs, ct)
  np.testing.assert_allclose(np.asarray(dx), ref_dx.T, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(np.asarray(dw), ref_dw.transpose(1, 0, 2), rtol=1e-5, atol=1e-5)


def test_jvp_and_vmap_of_grad():
  x, w, gs = rand((6, 3)), rand((2, 3, 4)), np.array([2, 3], np.int32)
  dx = rand((6, 3))
  primal, tangent = xjax.jvp(lambda x: lax.ragged_dot(x, w, gs), (x,), (dx,))
  assert_close(primal, ref_ragged_dot(x, w, gs), np.float32)
  assert_close(tangent, ref_ragged_dot(dx, w, gs), np.float32)
  xs, ws, cts = rand((3, 6, 3)), rand((3, 2, 3, 4)), rand((3, 6, 4))
  gss = np.array([[2, 3], [6, 0], [0, 1]], np.int32)
  loss = lambda x, w, g, ct: (lax.ragged_dot(x, w, g) * ct).sum()
  grads = xjax.vmap(xjax.grad(loss, argnums=(0, 1)))(xs, ws, gss, cts)
  for i in range(3):
    ref_dx, ref_dw = _ref_grads(xs[i], ws[i], gss[i], cts[i])
    np.testing.assert_allclose(np.asarray(grads[0])[i], ref_dx, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(grads[1])[i], ref_dw, rtol=1e-5, atol=1e-5)
  # As in JAX: an unbatched cotangent (ones for .sum()) meets batched operands.
  with pytest.raises(NotImplementedError, match="^ragged_dot vmap over any dim but 0 - NYI"):
    xjax.vmap(xjax.grad(lambda x, w, g: lax.ragged_dot(x, w, g).sum()))(xs, ws, gss)


@pytest.mark.parametrize("dims,shapes,mode,arg", [
    (CONTRACTING, ((4, 6), (6, 5)), "RAGGED_CONTRACTING", 0),
    (CONTRACTING, ((4, 6), (6, 5)), "RAGGED_CONTRACTING", 1),
    (BATCH, ((2, 2, 4), (2, 4, 5)), "RAGGED_BATCH", 0),
    (BATCH, ((2, 2, 4), (2, 4, 5)), "RAGGED_BATCH", 1),
])
def test_grad_of_other_modes_is_not_implemented(dims, shapes, mode, arg):
  x, y, gs = rand(shapes[0]), rand(shapes[1]), np.array([1, 1], np.int32)
  which = "grad_x_dims" if arg == 0 else "grad_y_dims"
  with pytest.raises(NotImplementedError,
                     match=f"^Unimplemented {which} for ragged dot general in mode {mode}\\."):
    xjax.grad(lambda x, y: lax.ragged_dot_general(x, y, gs, dims).sum(), argnums=arg)(x, y)


# ----------------------------------------------------------------------------
# Errors (JAX 0.10.2's messages)


X, W, GS = np.ones((6, 3), np.float32), np.ones((2, 3, 4), np.float32), np.array([2, 3], np.int32)


@pytest.mark.parametrize("args,message", [
    ((X, W, GS.astype(np.float32)),
     "ragged_dot_general requires that group_sizes.dtype is subtype of np.integer."),
    ((X, W, np.int32(2)), "expected rank of group_sizes to be >=1."),
    ((X, W, np.ones((3,), np.int32)), "expected rhs group dimension size to be 3, got 2."),
    ((X, W, np.ones((6, 2), np.int32)), "expected group_sizes to have shape (2,), got (6, 2)."),
    ((X, np.ones((2, 4, 4), np.float32), GS),
     "dot_general requires contracting dimensions to have the same shape"),
])
def test_ragged_dot_errors(args, message):
  with pytest.raises(TypeError) as info:
    lax.ragged_dot(*args)
  assert message in str(info.value)


def test_narrower_preferred_integer_type_error():
  with pytest.raises(TypeError) as info:
    lax.ragged_dot(X.astype(np.int32), W.astype(np.int32), GS, preferred_element_type=np.int8)
  assert str(info.value) == (
      "`preferred_element_type` must not be narrower than the original type, got "
      "preferred_element_type of <class 'numpy.int8'> for result type of int32.")


@pytest.mark.parametrize("dims,rhs,message", [
    (D((([1], [1]), ([], [])), [0, 1], [0]), W,
     "ragged_dot_general expects exactly one lhs ragged dimension."),
    (D((([1], [1]), ([], [])), [2], [0]), W,
     "ragged_dot_general requires lhs ragged dimension numbers to be nonnegative and less than "
     "the number of axes of the lhs value, got 2 for lhs of rank 2."),
    (D((([1], [1]), ([], [])), [0], []), W,
     "ragged_dot_general requires exactly one rhs group dimension when lhs ragged dimension is "
     "noncontracting."),
    (D((([1], [1]), ([], [])), [0], [1]), W,
     "ragged_dot_general requires rhs group dimension numbers to be distinct from contracting "
     "and batch dimensions."),
    (D((([1], [1]), ([], [])), [0], [5]), W,
     "ragged_dot_general requires rhs group dimension numbers to be nonnegative and less than "
     "the number of axes of the rhs value, got 5 for rhs of rank 3."),
    (D((([1], [1]), ([], [])), [0], [2]), W, "expected rhs group dimension size to be 2, got 4."),
    (D((([1], [1]), ([], [])), [1], [0]), W,
     "ragged_dot_general requires zero group dimensions in the rhs when lhs ragged dimension "
     "is contracting or batch."),
    (D((([1], [0]), ([], [])), [1], [0]), W[0],
     "ragged_dot_general requires zero group dimensions in the rhs when lhs ragged dimension "
     "is contracting or batch."),
])
def test_ragged_dot_general_errors(dims, rhs, message):
  with pytest.raises(TypeError) as info:
    lax.ragged_dot_general(X, rhs, GS, dims)
  assert str(info.value) == message


def test_dimension_numbers_object():
  dims = D([[[1], [1]], [[], []]], [0], [0])
  assert dims == lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))
  assert dims.dot_dimension_numbers == (((1,), (1,)), ((), ()))
  assert dims.lhs_ragged_dimensions == (0,) and dims.rhs_group_dimensions == (0,)
  assert hash(dims) == hash(D((((1,), (1,)), ((), ())), (0,), (0,)))
  assert repr(dims) == ("RaggedDotDimensionNumbers(dot_dimension_numbers=(((1,), (1,)), "
                        "((), ())), lhs_ragged_dimensions=(0,), rhs_group_dimensions=(0,))")
  with pytest.raises(dataclasses.FrozenInstanceError):
    dims.lhs_ragged_dimensions = (1,)


# ----------------------------------------------------------------------------
# Printed jaxprs, as JAX 0.10.2 prints them

BASIC = """\
{ lambda ; a:f32[6,3] b:f32[2,3,4] c:i32[2]. let
    d:f32[6,4] = ragged_dot_general[
      group_offset=None
      out_sharding=None
      precision=None
      preferred_element_type=None
      ragged_dot_dimension_numbers=RaggedDotDimensionNumbers(dot_dimension_numbers=(((1,), (1,)), ((), ())), lhs_ragged_dimensions=(0,), rhs_group_dimensions=(0,))
    ] a b c
  in (d,) }"""

PREFERRED = """\
{ lambda ; a:f32[6,3] b:f32[2,3,4] c:i32[2]. let
    d:f32[6,4] = ragged_dot_general[
      group_offset=None
      out_sharding=None
      precision=(Precision.HIGHEST, Precision.HIGHEST)
      preferred_element_type=<class 'numpy.float32'>
      ragged_dot_dimension_numbers=RaggedDotDimensionNumbers(dot_dimension_numbers=(((1,), (1,)), ((), ())), lhs_ragged_dimensions=(0,), rhs_group_dimensions=(0,))
    ] a b c
  in (d,) }"""

GRAD = """\
{ lambda ; a:f32[6,3] b:f32[2,3,4] c:i32[2]. let
    d:f32[6,4] = ragged_dot_general[
      group_offset=None
      out_sharding=None
      precision=None
      preferred_element_type=None
      ragged_dot_dimension_numbers=RaggedDotDimensionNumbers(dot_dimension_numbers=(((1,), (1,)), ((), ())), lhs_ragged_dimensions=(0,), rhs_group_dimensions=(0,))
    ] a b c
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] d
    e:f32[6,4] = broadcast_in_dim 1.0:f32[]
    f:f32[2,3,4] = ragged_dot_general[
      group_offset=None
      out_sharding=None
      precision=None
      preferred_element_type=None
      ragged_dot_dimension_numbers=RaggedDotDimensionNumbers(dot_dimension_numbers=(((0,), (0,)), ((), ())), lhs_ragged_dimensions=(0,), rhs_group_dimensions=())
    ] a e c
    g:f32[6,3] = ragged_dot_general[
      group_offset=None
      out_sharding=None
      precision=None
      preferred_element_type=None
      ragged_dot_dimension_numbers=RaggedDotDimensionNumbers(dot_dimension_numbers=(((1,), (2,)), ((), ())), lhs_ragged_dimensions=(0,), rhs_group_dimensions=(0,))
    ] e b c
  in (g, f) }"""

GRAD_LHS = """\
{ lambda ; a:f32[6,3] b:f32[2,3,4] c:i32[2]. let
    d:f32[6,4] = ragged_dot_general[
      group_offset=None
      out_sharding=None
      precision=None
      preferred_element_type=None
      ragged_dot_dimension_numbers=RaggedDotDimensionNumbers(dot_dimension_numbers=(((1,), (1,)), ((), ())), lhs_ragged_dimensions=(0,), rhs_group_dimensions=(0,))
    ] a b c
    _:f32[6,4] = broadcast_in_dim 0.0:f32[]
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] d
    e:f32[6,4] = broadcast_in_dim 1.0:f32[]
    f:f32[6,3] = ragged_dot_general[
      group_offset=None
      out_sharding=None
      precision=None
      preferred_element_type=None
      ragged_dot_dimension_numbers=RaggedDotDimensionNumbers(dot_dimension_numbers=(((1,), (2,)), ((), ())), lhs_ragged_dimensions=(0,), rhs_group_dimensions=(0,))
    ] e b c
  in (f,) }"""

JVP = """\
{ lambda ; a:f32[6,3] b:f32[2,3,4] c:i32[2]. let
    d:f32[6,4] = ragged_dot_general[
      group_offset=None
      out_sharding=None
      precision=None
      preferred_element_type=None
      ragged_dot_dimension_numbers=RaggedDotDimensionNumbers(dot_dimension_numbers=(((1,), (1,)), ((), ())), lhs_ragged_dimensions=(0,), rhs_group_dimensions=(0,))
    ] a b c
    e:f32[6,4] = ragged_dot_general[
      group_offset=None
      out_sharding=None
      precision=None
      preferred_element_type=None
      ragged_dot_dimension_numbers=RaggedDotDimensionNumbers(dot_dimension_numbers=(((1,), (1,)), ((), ())), lhs_ragged_dimensions=(0,), rhs_group_dimensions=(0,))
    ] a b c
    f:f32[6,4] = broadcast_in_dim 0.0:f32[]
    g:f32[6,4] = add e f
  in (d, g) }"""

VMAP = """\
{ lambda ; a:f32[5,6,3] b:f32[5,2,3,4] c:i32[5,2]. let
    d:f32[5,6,4] = ragged_dot_general[
      group_offset=None
      out_sharding=None
      precision=None
      preferred_element_type=None
      ragged_dot_dimension_numbers=RaggedDotDimensionNumbers(dot_dimension_numbers=(((np.int64(2),), (np.int64(2),)), ((0,), (0,))), lhs_ragged_dimensions=(np.int64(1),), rhs_group_dimensions=(np.int64(1),))
    ] a b c
  in (d,) }"""

VMAP_CONTRACTING = """\
{ lambda ; a:f32[2,4,6] b:f32[2,6,5] c:i32[2,2]. let
    d:f32[2,2,4,5] = ragged_dot_general[
      group_offset=None
      out_sharding=None
      precision=None
      preferred_element_type=None
      ragged_dot_dimension_numbers=RaggedDotDimensionNumbers(dot_dimension_numbers=(((np.int64(2),), (np.int64(1),)), ((0,), (0,))), lhs_ragged_dimensions=(np.int64(2),), rhs_group_dimensions=())
    ] a b c
    e:f32[2,2,4,5] = transpose[permutation=(1, 0, 2, 3)] d
  in (e,) }"""


def _jaxpr(fun, *shapes):
  args = [np.ones(s, np.int32 if i == len(shapes) - 1 else np.float32)
          for i, s in enumerate(shapes)]
  return str(xjax.make_jaxpr(fun)(*args))


def test_printed_jaxprs():
  basic = ((6, 3), (2, 3, 4), (2,))
  assert _jaxpr(lax.ragged_dot, *basic) == BASIC
  assert _jaxpr(lambda x, w, g: lax.ragged_dot(x, w, g, preferred_element_type=np.float32,
                                               precision="highest"), *basic) == PREFERRED
  loss = lambda x, w, g: lax.ragged_dot(x, w, g).sum()
  assert _jaxpr(xjax.grad(loss, argnums=(0, 1)), *basic) == GRAD
  assert _jaxpr(xjax.grad(loss), *basic) == GRAD_LHS
  assert _jaxpr(lambda x, w, g: xjax.jvp(lambda x: lax.ragged_dot(x, w, g), (x,), (x,)),
                *basic) == JVP
  assert _jaxpr(xjax.vmap(lax.ragged_dot), (5, 6, 3), (5, 2, 3, 4), (5, 2)) == VMAP
  assert _jaxpr(xjax.vmap(lambda a, b, g: lax.ragged_dot_general(a, b, g, CONTRACTING)),
                (2, 4, 6), (2, 6, 5), (2, 2)) == VMAP_CONTRACTING
