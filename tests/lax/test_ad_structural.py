"""Derivatives of the structural, slicing, reduction and sorting primitives.

* `check_grads` (forward and reverse, order 2 where the function is twice
  differentiable) on random float32 operands, over shapes with size-1 and
  empty dimensions and over the params where the rules branch: negative and
  interior padding, strided slices, clamped dynamic indices, gathers and
  scatters with several dimension numbers and out-of-bounds modes, reversed
  cumulative ops, sorts with several operands and keys.
* The transpose of every linear primitive is its adjoint:
  ``<ct, f(x)> == <f^T(ct), x>`` with ``f^T`` from `xjax.vjp` (jointly over
  all of a primitive's linear operands).
* Gradients through `jit`, JAX 0.10.2's answers where a rule picks a
  convention (ties of max/min, zeros of products), the zero gradients of
  functions of the sort order (the FAQ's "zero gradients of sort-based
  functions"), and JAX's errors where a rule is missing on purpose.
"""
import dataclasses
import zlib
from typing import Callable

import numpy as np
import pytest

import xjax
import xjax.test_util as jtu
from xjax import lax
from xjax._src import core
from xjax._src.config import enable_x64
from xjax._src.interpreters import ad

GD = lax.GatherDimensionNumbers
SD = lax.ScatterDimensionNumbers

# ----------------------------------------------------------------------------
# Cases: a function of float operands (its other arguments closed over)


@dataclasses.dataclass(frozen=True)
class Case:
  """One function to differentiate.

  Attributes:
    name: the test id.
    fun: the function of the float operands.
    shapes: the operand shapes.
    order: the derivative order to check (2 unless the function has kinks).
    linear: whether `fun` is linear in its operands jointly (adjoint test).
    maker: ``maker(rng, shape) -> float32 array`` (standard normal by default).
  """
  name: str
  fun: Callable
  shapes: tuple
  order: int = 2
  linear: bool = False
  maker: Callable | None = None

  def args(self, dtype=np.float32):
    rng = np.random.default_rng(zlib.crc32(self.name.encode()))
    make = self.maker or (lambda rng, shape: rng.standard_normal(shape))
    return [np.asarray(make(rng, s), dtype) for s in self.shapes]


def linear(name, fun, *shapes):
  return Case(name, fun, shapes, linear=True)


def _with_zeros(rng, shape):
  """Normal draws with every third element zero (products through zeros)."""
  x = rng.standard_normal(shape)
  x.reshape(-1)[::3] = 0
  return x


def _i32(*values):
  return np.asarray(values, np.int32)


ROWS = GD(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
POINTS = GD(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
WINDOWS = GD(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1))
BATCHED = GD(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,),
             operand_batching_dims=(1,), start_indices_batching_dims=(0,))
S_ROWS = SD(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
S_POINTS = SD(update_window_dims=(), inserted_window_dims=(0, 1),
              scatter_dims_to_operand_dims=(0, 1))
S_WINDOWS = SD(update_window_dims=(1, 2), inserted_window_dims=(),
               scatter_dims_to_operand_dims=(0, 1))
S_BATCHED = SD(update_window_dims=(1,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,),
               operand_batching_dims=(1,), scatter_indices_batching_dims=(0,))

ROW_IDX = _i32([2], [0], [2], [3])            # a repeated row
OOB_ROW_IDX = _i32([5], [1], [-1], [3])       # out of bounds on both sides
POINT_IDX = _i32([0, 1], [3, 2], [0, 1])      # a repeated point
WINDOW_IDX = _i32([0, 0], [2, 1])             # overlapping 2x2 windows
BATCH_IDX = _i32([1], [0], [3])               # one start row per column of a (4, 3)

STRUCTURAL = [
    linear("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3), (1,)), (3,)),
    linear("broadcast_in_dim_scalar", lambda x: lax.broadcast_in_dim(x, (2, 3), ()), ()),
    linear("broadcast_in_dim_size_one", lambda x: lax.broadcast_in_dim(x, (4, 3), (0, 1)),
           (1, 3)),
    linear("broadcast_in_dim_size_one_kept", lambda x: lax.broadcast_in_dim(x, (1, 2, 3), (0, 2)),
           (1, 3)),
    linear("broadcast_in_dim_middle", lambda x: lax.broadcast_in_dim(x, (2, 4, 3), (0, 2)),
           (2, 3)),
    linear("broadcast_in_dim_to_empty", lambda x: lax.broadcast_in_dim(x, (2, 0), (0, 1)),
           (2, 1)),
    linear("expand_dims", lambda x: lax.expand_dims(x, (0, 2)), (3,)),
    linear("reshape", lambda x: lax.reshape(x, (3, 2)), (2, 3)),
    linear("reshape_dimensions", lambda x: lax.reshape(x, (6,), (1, 0)), (2, 3)),
    linear("reshape_dimensions_3d", lambda x: lax.reshape(x, (4, 6), (2, 0, 1)), (2, 3, 4)),
    linear("reshape_scalar", lambda x: lax.reshape(x, (1, 1)), ()),
    linear("reshape_empty", lambda x: lax.reshape(x, (3, 0)), (0, 3)),
    linear("transpose", lambda x: lax.transpose(x, (1, 0)), (2, 3)),
    linear("transpose_3d", lambda x: lax.transpose(x, (2, 0, 1)), (2, 3, 4)),
    linear("transpose_empty", lambda x: lax.transpose(x, (1, 0)), (0, 3)),
    linear("squeeze", lambda x: lax.squeeze(x, (0,)), (1, 3)),
    linear("squeeze_two", lambda x: lax.squeeze(x, (1, 2)), (2, 1, 1)),
    linear("rev", lambda x: lax.rev(x, (0,)), (3,)),
    linear("rev_both", lambda x: lax.rev(x, (0, 1)), (2, 3)),
    linear("rev_empty", lambda x: lax.rev(x, (1,)), (0, 3)),
    # pad is linear in the operand and the padding value together.
    linear("pad_interior", lambda x, v: lax.pad(x, v, ((1, 2, 1),)), (3,), ()),
    linear("pad_negative_high", lambda x, v: lax.pad(x, v, ((0, 0, 0), (1, -1, 2))),
           (2, 3), ()),
    linear("pad_negative_low", lambda x, v: lax.pad(x, v, ((-2, 1, 1), (0, 0, 0))), (2, 3), ()),
    linear("pad_crop", lambda x, v: lax.pad(x, v, ((-1, -1, 0),)), (3,), ()),
    linear("pad_crop_interior", lambda x, v: lax.pad(x, v, ((-3, 0, 1),)), (4,), ()),
    linear("pad_size_one", lambda x, v: lax.pad(x, v, ((0, 0, 4),)), (1,), ()),
    linear("pad_empty", lambda x, v: lax.pad(x, v, ((2, 1, 3),)), (0,), ()),
    linear("concatenate", lambda *xs: lax.concatenate(xs, 0), (2, 3), (1, 3), (0, 3)),
    linear("concatenate_dim1", lambda *xs: lax.concatenate(xs, 1), (2, 1), (2, 3), (2, 0)),
]

SLICING = [
    linear("slice", lambda x: lax.slice(x, (1,), (4,)), (5,)),
    linear("slice_strided", lambda x: lax.slice(x, (1, 0), (4, 5), (2, 3)), (4, 5)),
    linear("slice_stride_past_end", lambda x: lax.slice(x, (0,), (6,), (4,)), (6,)),
    linear("slice_to_empty", lambda x: lax.slice(x, (1, 0), (1, 3), (2, 1)), (3, 3)),
    linear("dynamic_slice", lambda x: lax.dynamic_slice(x, (np.int32(1),), (2,)), (5,)),
    linear("dynamic_slice_negative", lambda x: lax.dynamic_slice(x, _i32(-1, 3), (2, 3)), (4, 5)),
    linear("dynamic_slice_clamped", lambda x: lax.dynamic_slice(x, _i32(10, -10), (2, 3)), (4, 5)),
    linear("dynamic_update_slice",
           lambda x, u: lax.dynamic_update_slice(x, u, (np.int32(1), np.int32(2))), (4, 5), (2, 2)),
    linear("dynamic_update_slice_clamped",
           lambda x, u: lax.dynamic_update_slice(x, u, _i32(7, -9)), (4, 5), (3, 2)),
    linear("gather_rows", lambda x: lax.gather(x, ROW_IDX, ROWS, (1, 3)), (4, 3)),
    linear("gather_rows_clip", lambda x: lax.gather(x, OOB_ROW_IDX, ROWS, (1, 3), mode="clip"),
           (4, 3)),
    linear("gather_rows_fill",
           lambda x: lax.gather(x, OOB_ROW_IDX, ROWS, (1, 3), mode="fill", fill_value=0.0), (4, 3)),
    # A nonzero fill makes the gather affine: its filled windows have zero tangents.
    Case("gather_rows_fill_value",
         lambda x: lax.gather(x, OOB_ROW_IDX, ROWS, (1, 3), mode="fill", fill_value=2.0),
         ((4, 3),)),
    linear("gather_points", lambda x: lax.gather(x, POINT_IDX, POINTS, (1, 1)), (4, 3)),
    linear("gather_windows", lambda x: lax.gather(x, WINDOW_IDX, WINDOWS, (2, 2)), (4, 3)),
    linear("gather_batched", lambda x: lax.gather(x, BATCH_IDX, BATCHED, (2, 1), mode="clip"),
           (4, 3)),
    linear("gather_no_indices", lambda x: lax.gather(x, np.zeros((0, 1), np.int32), ROWS, (1, 3)),
           (4, 3)),
    linear("scatter_add_rows", lambda x, u: lax.scatter_add(x, ROW_IDX, u, S_ROWS), (4, 3), (4, 3)),
    linear("scatter_add_drop", lambda x, u: lax.scatter_add(x, OOB_ROW_IDX, u, S_ROWS),
           (4, 3), (4, 3)),
    linear("scatter_add_clip", lambda x, u: lax.scatter_add(x, OOB_ROW_IDX, u, S_ROWS, mode="clip"),
           (4, 3), (4, 3)),
    linear("scatter_add_points", lambda x, u: lax.scatter_add(x, POINT_IDX, u, S_POINTS),
           (4, 3), (3,)),
    linear("scatter_add_windows", lambda x, u: lax.scatter_add(x, WINDOW_IDX, u, S_WINDOWS),
           (4, 3), (2, 2, 2)),
    linear("scatter_add_batched",
           lambda x, u: lax.scatter_add(x, BATCH_IDX, u, S_BATCHED, mode="clip"), (4, 3), (3, 2)),
    linear("scatter_sub_rows", lambda x, u: lax.scatter_sub(x, ROW_IDX, u, S_ROWS), (4, 3), (4, 3)),
    linear("scatter_sub_windows", lambda x, u: lax.scatter_sub(x, WINDOW_IDX, u, S_WINDOWS),
           (4, 3), (2, 2, 2)),
    # A plain scatter is linear in (operand, updates); repeated indices take the ids path.
    linear("scatter_rows", lambda x, u: lax.scatter(x, ROW_IDX, u, S_ROWS), (4, 3), (4, 3)),
    linear("scatter_rows_unique",
           lambda x, u: lax.scatter(x, _i32([3], [0]), u, S_ROWS, unique_indices=True),
           (4, 3), (2, 3)),
    linear("scatter_points_unique",
           lambda x, u: lax.scatter(x, _i32([0, 1], [3, 2]), u, S_POINTS, unique_indices=True),
           (4, 3), (2,)),
    linear("scatter_windows", lambda x, u: lax.scatter(x, WINDOW_IDX, u, S_WINDOWS),
           (4, 3), (2, 2, 2)),
    linear("scatter_drop", lambda x, u: lax.scatter(x, OOB_ROW_IDX, u, S_ROWS), (4, 3), (4, 3)),
    # scatter-mul is linear in the operand alone.
    linear("scatter_mul_operand",
           lambda x: lax.scatter_mul(x, ROW_IDX, np.linspace(-2, 2, 12, dtype=np.float32)
                                     .reshape(4, 3), S_ROWS), (4, 3)),
    Case("scatter_mul_unique",
         lambda x, u: lax.scatter_mul(x, _i32([3], [0]), u, S_ROWS, unique_indices=True),
         ((4, 3), (2, 3))),
    Case("scatter_max_rows", lambda x, u: lax.scatter_max(x, ROW_IDX, u, S_ROWS),
         ((4, 3), (4, 3)), order=1),
    Case("scatter_max_clip", lambda x, u: lax.scatter_max(x, OOB_ROW_IDX, u, S_ROWS, mode="clip"),
         ((4, 3), (4, 3)), order=1),
    Case("scatter_min_windows", lambda x, u: lax.scatter_min(x, WINDOW_IDX, u, S_WINDOWS),
         ((4, 3), (2, 2, 2)), order=1),
]


def _max(a, b):  # a lambda-free max, not recognized as a monoid: binds the generic reduce
  return lax.max(a, b)


def _max_with_index(a, b):
  """(value, index) pairs: the larger value and its index."""
  a_wins = lax.gt(a[0], b[0])
  return lax.select_n(a_wins, b[0], a[0]), lax.select_n(a_wins, b[1], a[1])


REDUCTIONS = [
    linear("reduce_sum", lambda x: lax.reduce_sum(x, (0,)), (2, 3)),
    linear("reduce_sum_all", lambda x: lax.reduce_sum(x, (0, 1)), (2, 3)),
    linear("reduce_sum_outer", lambda x: lax.reduce_sum(x, (0, 2)), (2, 3, 4)),
    linear("reduce_sum_none", lambda x: lax.reduce_sum(x, ()), ()),
    linear("reduce_sum_size_one", lambda x: lax.reduce_sum(x, (1,)), (1, 1)),
    linear("reduce_sum_empty", lambda x: lax.reduce_sum(x, (0,)), (0, 3)),
    Case("reduce_prod", lambda x: lax.reduce_prod(x, (1,)), ((2, 5),)),
    Case("reduce_prod_outer", lambda x: lax.reduce_prod(x, (0, 2)), ((2, 3, 3),)),
    Case("reduce_prod_zeros", lambda x: lax.reduce_prod(x, (0,)), ((7, 2),), maker=_with_zeros),
    Case("reduce_prod_empty", lambda x: lax.reduce_prod(x, (0,)), ((0, 3),)),
    Case("reduce_max", lambda x: lax.reduce_max(x, (1,)), ((2, 3),)),
    Case("reduce_max_outer", lambda x: lax.reduce_max(x, (0, 2)), ((2, 3, 4),)),
    Case("reduce_min", lambda x: lax.reduce_min(x, (0,)), ((4, 3),)),
    Case("reduce_min_all", lambda x: lax.reduce_min(x, (0, 1)), ((1, 1),)),
    Case("reduce", lambda x: lax.reduce(x, np.array(-np.inf, x.dtype), _max, (1,)), ((2, 3),)),
    Case("reduce_variadic",
         lambda x: lax.reduce((x, lax.broadcasted_iota(np.int32, (3, 4), 1)),
                              (np.array(-np.inf, x.dtype), np.int32(0)), _max_with_index,
                              (1,))[0],
         ((3, 4),)),
    linear("cumsum", lambda x: lax.cumsum(x, 0), (4,)),
    linear("cumsum_reverse", lambda x: lax.cumsum(x, 1, reverse=True), (2, 3)),
    linear("cumsum_empty", lambda x: lax.cumsum(x, 0), (0,)),
    Case("cumprod", lambda x: lax.cumprod(x, 0), ((5,),)),
    Case("cumprod_reverse_zeros", lambda x: lax.cumprod(x, 1, reverse=True), ((2, 6),),
         maker=_with_zeros),
    Case("cummax", lambda x: lax.cummax(x, 0), ((7,),)),
    Case("cummax_reverse", lambda x: lax.cummax(x, 1, reverse=True), ((2, 5),)),
    Case("cummin", lambda x: lax.cummin(x, 1), ((3, 4),)),
    Case("cumlogsumexp", lambda x: lax.cumlogsumexp(x, 0), ((6,),)),
    Case("cumlogsumexp_reverse", lambda x: lax.cumlogsumexp(x, 1, reverse=True), ((2, 3),)),
    Case("cumprod_size_one", lambda x: lax.cumprod(x, 0), ((1,),)),
]

SORTING = [
    Case("sort", lambda x: lax.sort(x), ((5,),)),
    Case("sort_dim0", lambda x: lax.sort(x, dimension=0), ((3, 2),)),
    Case("sort_rows", lambda x: lax.sort(x, dimension=-1), ((2, 3),)),
    Case("sort_empty", lambda x: lax.sort(x), ((0,),)),
    Case("sort_key_val", lambda k, v: lax.sort_key_val(k, v), ((2, 4), (2, 4))),
    # Keys with ties in the first key, broken by the second.
    Case("sort_two_keys", lambda k1, k2, v: lax.sort((lax.round(k1), k2, v), num_keys=2),
         ((6,), (6,), (6,))),
    Case("sort_int_keys",
         lambda v: lax.sort_key_val(_i32(3, 1, 2, 1, 0), v)[1], ((5,),)),
    Case("top_k", lambda x: lax.top_k(x, 2)[0], ((5,),)),
    Case("top_k_axis0", lambda x: lax.top_k(x, 2, axis=0)[0], ((3, 4),)),
    Case("top_k_none", lambda x: lax.top_k(x, 0)[0], ((2, 4),)),
]

CASES = STRUCTURAL + SLICING + REDUCTIONS + SORTING


def _ids(cases):
  return [pytest.param(c, id=c.name) for c in cases]


# ----------------------------------------------------------------------------
# Finite differences and adjoints


@pytest.mark.parametrize("case", _ids(CASES))
def test_grads_match_finite_differences(case):
  # A linear function's central difference is exact for any step: a long one keeps float32
  # rounding (about |f| * 6e-8 / eps) below the tolerance.
  jtu.check_grads(case.fun, case.args(), case.order, modes=("fwd", "rev"),
                  eps=0.1 if case.linear else None)


# float64 pins the math down with tight tolerances where float32 differences are loose.
@pytest.mark.parametrize("case", _ids([c for c in CASES if not c.linear]))
def test_nonlinear_grads_match_finite_differences_in_x64(case):
  with enable_x64(True):
    jtu.check_grads(case.fun, case.args(np.float64), 1, modes=("fwd", "rev"))


def _pair(a, b):
  return float(np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64)))


@pytest.mark.parametrize("case", _ids([c for c in CASES if c.linear]))
def test_transpose_is_adjoint(case):
  args = case.args()
  out, f_vjp = xjax.vjp(case.fun, *args)
  rng = np.random.default_rng(1)
  ct = rng.standard_normal(np.shape(out)).astype(np.float32)
  cts = f_vjp(ct)
  assert [np.shape(c) for c in cts] == [np.shape(a) for a in args]
  lhs = _pair(ct, out)
  rhs = sum(_pair(c, a) for c, a in zip(cts, args))
  scale = _pair(abs(ct), abs(np.asarray(out))) + sum(
      _pair(abs(np.asarray(c)), abs(a)) for c, a in zip(cts, args))
  np.testing.assert_allclose(lhs, rhs, rtol=1e-5, atol=1e-5 * scale + 1e-6)


# ----------------------------------------------------------------------------
# Composition with jit


def _composite(x, u):
  """A function touching most of the rules: pads, slices, gathers, scatters, sorts, scans."""
  y = lax.pad(x, np.float32(0.5), ((1, 1, 1), (0, -1, 1)))       # (7, 4)
  y = lax.rev(lax.slice(y, (0, 1), (7, 4), (2, 1)), (0,))          # (4, 3)
  y = lax.scatter_add(y, ROW_IDX[:2], u, S_ROWS)
  y = lax.gather(y, ROW_IDX, ROWS, (1, 3))
  y = lax.concatenate([lax.cumsum(y, 0), lax.cumprod(y, 1), lax.sort(y, dimension=1)], 1)
  y = lax.dynamic_update_slice(y, lax.broadcast_in_dim(lax.reduce_max(y, (1,)), (4, 2), (0,)),
                               _i32(0, 3))
  return lax.reduce_sum(lax.mul(y, y), (0, 1))


def test_grad_through_jit_matches_grad():
  rng = np.random.default_rng(0)
  x = rng.standard_normal((3, 3)).astype(np.float32)
  u = rng.standard_normal((2, 3)).astype(np.float32)
  expected = xjax.grad(_composite, argnums=(0, 1))(x, u)
  for got in (xjax.grad(xjax.jit(_composite), argnums=(0, 1))(x, u),
              xjax.jit(xjax.grad(_composite, argnums=(0, 1)))(x, u)):
    for g, e in zip(got, expected, strict=True):
      np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


def test_composite_grads_match_finite_differences():
  rng = np.random.default_rng(1)
  args = (rng.standard_normal((3, 3)).astype(np.float32),
          rng.standard_normal((2, 3)).astype(np.float32))
  jtu.check_grads(_composite, args, 2, modes=("fwd", "rev"), atol=1e-2, rtol=1e-2)
  jtu.check_grads(xjax.jit(_composite), args, 1, modes=("fwd", "rev"), atol=1e-2, rtol=1e-2)


# ----------------------------------------------------------------------------
# JAX's conventions, with answers printed by JAX 0.10.2

TIES = np.array([1., 3., 3., 2., 3.], np.float32)


@pytest.mark.parametrize("fun, expected", [
    # reduce_max/min average the tangent over the tied extrema.
    (lambda x: lax.reduce_max(x, (0,)), [0, 1 / 3, 1 / 3, 0, 1 / 3]),
    (lambda x: lax.reduce_min(lax.neg(x), (0,)), [0, -1 / 3, -1 / 3, 0, -1 / 3]),
    # The scan's max ties split as JAX's associative scan splits them.
    (lambda x: lax.cummax(x)[2], [0, 0.5, 0.5, 0, 0]),
    (lambda x: lax.cummax(x)[4], [0, 0.25, 0.25, 0, 0.5]),
    (lambda x: lax.cummax(x, reverse=True)[0], [0, 0.25, 0.25, 0, 0.5]),
    # Products through zeros: only a lone zero factor gets a gradient.
    (lambda x: lax.reduce_prod(lax.sub(x, np.array([0., 3., 0., 0., 0.], np.float32)), (0,)),
     [0, 18, 0, 0, 0]),
    (lambda x: lax.cumprod(lax.sub(x, np.array([0., 3., 0., 0., 0.], np.float32)))[4],
     [0, 18, 0, 0, 0]),
    (lambda x: lax.cumprod(lax.sub(x, np.array([0., 3., 0., 2., 0.], np.float32)))[4],
     [0, 0, 0, 0, 0]),
    # Sorting permutes the cotangent; top_k gathers it.
    (lambda x: lax.sort(x)[1], [0, 0, 0, 1, 0]),
    (lambda x: lax.top_k(x, 2)[0][1], [0, 0, 1, 0, 0]),
])
def test_grad_conventions_match_jax(fun, expected):
  np.testing.assert_allclose(xjax.grad(fun)(TIES), np.asarray(expected, np.float32), rtol=1e-6)


def test_scatter_max_tangent_averages_tied_updates():
  x = np.array([[1., 3.], [3., 0.]], np.float32)
  idx = _i32([0, 1], [0, 1], [1, 1])
  u = np.array([3., 3., -1.], np.float32)
  t_u = np.array([10., 100., 1000.], np.float32)
  out, t_out = xjax.jvp(lambda x, u: lax.scatter_max(x, idx, u, S_POINTS), (x, u),
                        (np.ones_like(x), t_u))
  np.testing.assert_array_equal(out, x)
  # The operand and both updates tie at (0, 1): (1 + 10 + 100) / 3.
  np.testing.assert_allclose(t_out, [[1, 37], [1, 1]], rtol=1e-6)


def test_scatter_max_clip_tangent_is_finite():
  # JAX 0.10.2 counts the updates of a clipped scatter-max without clipping and gets
  # NaN tangents where an index was clipped; the counts here use the scatter's mode.
  x = np.zeros((4, 3), np.float32)
  u = np.ones((2, 3), np.float32)
  _, t_out = xjax.jvp(lambda x, u: lax.scatter_max(x, _i32([5], [1]), u, S_ROWS, mode="clip"),
                      (x, u), (np.ones_like(x), np.full_like(u, 2.0)))
  np.testing.assert_array_equal(t_out, [[1, 1, 1], [2, 2, 2], [1, 1, 1], [2, 2, 2]])


def test_gradients_of_sort_order_are_zero():
  """The FAQ's "zero gradients of sort-based functions": ranks do not move under
  infinitesimal changes of the input."""
  x = np.array([0.3, -1.2, 2.5, 0.7], np.float32)

  def ranks(x):
    order = lax.sort((x, lax.iota(np.int32, 4)), num_keys=1)[1]
    return lax.convert_element_type(order, np.float32)

  def top_index(x):
    return lax.convert_element_type(lax.top_k(x, 1)[1][0], np.float32)

  def argmax(x):
    return lax.convert_element_type(lax.argmax(x, 0, np.int32), np.float32)

  np.testing.assert_array_equal(xjax.grad(lambda x: lax.reduce_sum(
      lax.mul(ranks(x), np.arange(4, dtype=np.float32)), (0,)))(x), np.zeros(4))
  np.testing.assert_array_equal(xjax.grad(top_index)(x), np.zeros(4))
  np.testing.assert_array_equal(xjax.grad(argmax)(x), np.zeros(4))
  np.testing.assert_array_equal(xjax.grad(
      lambda x: lax.convert_element_type(lax.argmin(x, 0, np.int32), np.float32))(x), np.zeros(4))


def test_bitwise_reductions_have_zero_tangents():
  x = np.array([3, 5, 6], np.int32)
  for reduce in (lax.reduce_and, lax.reduce_or, lax.reduce_xor):
    out, t = ad.jvp_flat(lambda x: [reduce(x, (0,))], [x],
                         [np.zeros(x.shape, xjax.dtypes.float0)])
    assert type(t[0]) is ad.Zero or np.asarray(t[0]).dtype == xjax.dtypes.float0


def test_sort_jaxpr_matches_jax():
  """grad of a sum of sorted values: sort with an iota, then a scatter-add (JAX's jaxpr)."""
  jaxpr = xjax.make_jaxpr(xjax.grad(lambda x: lax.reduce_sum(lax.sort(x), (0,))))(
      np.ones(3, np.float32))
  names = [eqn.primitive.name for eqn in jaxpr.jaxpr.eqns]
  assert names[:3] == ["iota", "sort", "broadcast_in_dim"] and names[-1] == "scatter-add", names


# ----------------------------------------------------------------------------
# Rules JAX leaves out on purpose


def test_scatter_transpose_needs_unique_indices():
  x, u = np.zeros((4, 3), np.float32), np.ones((4, 3), np.float32)
  jaxpr = xjax.make_jaxpr(lambda x, u: lax.scatter(x, ROW_IDX, u, S_ROWS))(x, u)
  undefined = [ad.UndefinedPrimal(core.get_aval(a)) for a in (x, u)]
  with pytest.raises(NotImplementedError, match="unique_indices=True"):
    ad.backward_pass(jaxpr.jaxpr, jaxpr.consts, undefined, [np.ones((4, 3), np.float32)])


def test_scatter_mul_update_grads_need_unique_indices():
  x, u = np.ones((4, 3), np.float32), np.ones((4, 3), np.float32)
  with pytest.raises(NotImplementedError, match="unique_indices=True"):
    xjax.jvp(lambda u: lax.scatter_mul(x, ROW_IDX, u, S_ROWS), (u,), (u,))


def test_scatter_apply_jvp_is_not_implemented():
  x = np.ones((4, 3), np.float32)
  with pytest.raises(NotImplementedError, match="scatter_apply JVP not implemented"):
    xjax.jvp(lambda x: lax.scatter_apply(x, ROW_IDX, lax.sin, S_ROWS, update_shape=(4, 3)),
             (x,), (x,))


def test_reduce_init_value_tangent_is_not_implemented():
  x = np.ones((2, 3), np.float32)
  with pytest.raises(NotImplementedError, match="non-zero tangents for initial values"):
    xjax.grad(lambda init: lax.reduce_sum(lax.reduce(x, init, _max, (1,)), (0,)))(
        np.float32(-np.inf))
