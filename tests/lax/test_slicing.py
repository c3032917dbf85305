"""Slicing and indexing lax primitives (slice, dynamic_slice, dynamic_update_slice,
gather, the scatter family) and the helpers over them, against NumPy and real
JAX 0.10.2's output.

Each case runs eagerly and under `xjax.jit` (the results must be identical),
is compared with a NumPy reference, and its abstract eval is compared with
the computed result (shape, dtype, weak type). Out-of-bounds behaviour
follows JAX's modes: clamping, filling and dropping. Printed jaxprs and error
messages are what real JAX 0.10.2 prints and raises.
"""
import json
import os

import ml_dtypes
import numpy as np
import pytest

import xjax
from xjax._src import core
from xjax._src.lax import elementwise as ew
from xjax._src.lax import gather_scatter as G
from xjax._src.lax import slicing as L
from xjax._src.lax import structural as S

GOLDEN = os.path.join(os.path.dirname(__file__), os.pardir, "golden", "jaxprs.json")

bf16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.dtype(t) for t in (np.float32, np.float16, np.int32, np.uint8, np.bool_,
                                np.complex64)] + [bf16]
GD = G.GatherDimensionNumbers
SD = G.ScatterDimensionNumbers
Mode = G.GatherScatterMode


def rand(rng, shape, dtype):
  """Random small integer-valued data (so sums are exact even in bfloat16)."""
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return np.asarray(rng.random(shape) < 0.5)
  x = rng.integers(0 if dtype.kind == "u" else -9, 10, size=shape)
  if dtype.kind == "c":
    x = x + 1j * rng.integers(-9, 10, size=shape)
  return np.asarray(x, dtype)


def _bits(x):
  """`x` as NumPy data compared exactly (bfloat16 by its value as float32; NaNs equal)."""
  x = np.asarray(x)
  return x.astype(np.float32) if x.dtype == bf16 else x


def check(fun, args, expected):
  """`fun(*args)` eagerly and under jit equals `expected` exactly; abstract eval agrees."""
  eager = fun(*args)
  jitted = xjax.jit(fun)(*args)
  expected = np.asarray(expected)
  for out in (eager, jitted):
    assert isinstance(out, xjax.Array), type(out)
    assert out.dtype == expected.dtype and out.shape == expected.shape, (out, expected)
    np.testing.assert_array_equal(_bits(out), _bits(expected))
  out_aval, = xjax.make_jaxpr(fun)(*args).out_avals
  assert out_aval == core.get_aval(eager) == core.get_aval(jitted)
  return eager


def weak(shape, value=1.0):
  """A weakly typed float32 Array of `shape`."""
  return S.full(shape, value)


# ----------------------------------------------------------------------------
# slice

SLICE_CASES = [
    ((), (), (), None),
    ((0,), (0,), (0,), None),
    ((1,), (0,), (1,), None),
    ((5,), (1,), (3,), None),
    ((5,), (0,), (5,), (2,)),
    ((5,), (2,), (2,), None),
    ((6,), (1,), (6,), (3,)),
    ((3, 4), (1, 0), (3, 4), (1, 3)),
    ((2, 0, 3), (0, 0, 1), (2, 0, 3), None),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape,start,limit,strides", SLICE_CASES, ids=str)
def test_slice_matches_numpy(shape, start, limit, strides, dtype, rng):
  x = rand(rng, shape, dtype)
  steps = strides or (1,) * len(shape)
  expected = x[tuple(slice(a, b, s) for a, b, s in zip(start, limit, steps))]
  check(lambda x: L.slice(x, start, limit, strides), (x,), expected)


def test_slice_keeps_weak_type():
  assert L.slice(weak((4,)), (1,), (3,)).weak_type


# ----------------------------------------------------------------------------
# dynamic_slice, dynamic_update_slice


def np_dynamic_slice(x, starts, sizes):
  """XLA's rule: negative starts wrap once, then starts clamp so the slice fits."""
  starts = [s + d if s < 0 else s for s, d in zip(starts, x.shape)]
  starts = [min(max(s, 0), d - n) for s, d, n in zip(starts, x.shape, sizes)]
  return x[tuple(slice(s, s + n) for s, n in zip(starts, sizes))], starts


DYNAMIC_SLICE_CASES = [
    ((), (), ()),
    ((0,), (0,), (0,)),
    ((1,), (0,), (1,)),
    ((5,), (1,), (2,)),
    ((5,), (4,), (2,)),      # clamped to start 3
    ((5,), (9,), (3,)),      # clamped
    ((5,), (-1,), (2,)),     # wraps to 4, then clamps to 3
    ((5,), (-9,), (2,)),     # clamps to 0
    ((3, 4), (2, -2), (2, 2)),
    ((2, 0, 3), (1, 0, 5), (1, 0, 2)),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape,starts,sizes", DYNAMIC_SLICE_CASES, ids=str)
def test_dynamic_slice_matches_numpy(shape, starts, sizes, dtype, rng):
  x = rand(rng, shape, dtype)
  expected, _ = np_dynamic_slice(x, starts, sizes)
  indices = [np.int32(s) for s in starts]
  check(lambda x, *i: L.dynamic_slice(x, i, sizes), (x, *indices), expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape,starts,sizes", DYNAMIC_SLICE_CASES, ids=str)
def test_dynamic_update_slice_matches_numpy(shape, starts, sizes, dtype, rng):
  x = rand(rng, shape, dtype)
  update = rand(rng, sizes, dtype)
  _, clamped = np_dynamic_slice(x, starts, sizes)
  expected = x.copy()
  expected[tuple(slice(s, s + n) for s, n in zip(clamped, sizes))] = update
  indices = [np.int32(s) for s in starts]
  check(lambda x, u, *i: L.dynamic_update_slice(x, u, i), (x, update, *indices), expected)


def test_dynamic_slice_static_indices_are_wrapped_on_the_host():
  text = str(xjax.make_jaxpr(lambda x: L.dynamic_slice(x, (-1, 1), (2, 2)))(
      np.ones((2, 3), np.float32)))
  assert text == ("{ lambda ; a:f32[2,3]. let\n"
                  "    b:f32[2,2] = dynamic_slice[slice_sizes=(2, 2)] a 1:i32[] 1:i32[]\n"
                  "  in (b,) }")


def test_dynamic_slice_accepts_an_index_array_and_unsigned_indices(rng):
  x = rand(rng, (4, 5), np.float32)
  out = L.dynamic_slice(x, np.array([1, 2], np.int32), (2, 2))
  np.testing.assert_array_equal(np.asarray(out), x[1:3, 2:4])
  out = L.dynamic_slice(x, (np.uint8(3), np.uint8(250)), (1, 2))
  np.testing.assert_array_equal(np.asarray(out), x[3:4, 3:5])


def test_dynamic_slice_weak_types_follow_jax():
  assert L.dynamic_slice(weak((4,)), (1,), (2,)).weak_type
  # dynamic_update_slice is weak only when every operand (indices included) is.
  assert not L.dynamic_update_slice(weak((4,)), weak((2,)), (1,)).weak_type


def test_in_dim_helpers_match_numpy(rng):
  x = rand(rng, (3, 4), np.float32)
  np.testing.assert_array_equal(np.asarray(L.slice_in_dim(x, 1, None, axis=1)), x[:, 1:])
  np.testing.assert_array_equal(np.asarray(L.slice_in_dim(x, -2, -1, 1, 1)), x[:, -2:-1])
  np.testing.assert_array_equal(np.asarray(L.slice_in_dim(x, 0, 3, 2)), x[0:3:2])
  np.testing.assert_array_equal(np.asarray(L.index_in_dim(x, -1, 1, False)), x[:, -1])
  np.testing.assert_array_equal(np.asarray(L.index_in_dim(x, 1)), x[1:2])
  np.testing.assert_array_equal(np.asarray(L.dynamic_slice_in_dim(x, -2, 2, 1)), x[:, 2:4])
  np.testing.assert_array_equal(np.asarray(L.dynamic_index_in_dim(x, 2, 0, False)), x[2])
  np.testing.assert_array_equal(np.asarray(L.dynamic_index_in_dim(x, np.int32(5), 1)), x[:, 3:4])
  row = rand(rng, (4,), np.float32)
  expected = x.copy()
  expected[1] = row
  np.testing.assert_array_equal(np.asarray(L.dynamic_update_index_in_dim(x, row, 1, 0)), expected)
  expected = x.copy()
  expected[:, 2:4] = x[:, :2]
  np.testing.assert_array_equal(
      np.asarray(L.dynamic_update_slice_in_dim(x, x[:, :2], 3, axis=1)), expected)


def test_index_take_wraps_indices(rng):
  x = rand(rng, (3, 4), np.float32)
  idx = np.array([0, -1, 5], np.int32)
  np.testing.assert_array_equal(np.asarray(G.index_take(x, (idx,), (0,))), x[idx % 3])
  rows, cols = np.array([0, 2], np.int32), np.array([3, -1], np.int32)
  np.testing.assert_array_equal(np.asarray(G.index_take(x, (rows, cols), (0, 1))),
                                x[rows, cols % 4])


def test_dynamic_index_in_dim_is_a_jit_as_in_jax():
  text = str(xjax.make_jaxpr(lambda x, i: L.dynamic_index_in_dim(x, i, axis=1, keepdims=False))(
      np.ones((2, 3), np.float32), np.int32(1)))
  assert text == (
      "{ lambda ; a:f32[2,3] b:i32[]. let\n"
      "    c:f32[2] = jit[\n"
      "      name=dynamic_index_in_dim\n"
      "      jaxpr={ lambda ; a:f32[2,3] b:i32[]. let\n"
      "          d:bool[] = lt b 0:i32[]\n"
      "          e:i32[] = add b 3:i32[]\n"
      "          f:i32[] = select_n d b e\n"
      "          g:f32[2,1] = dynamic_slice[slice_sizes=(2, 1)] a 0:i32[] f\n"
      "          c:f32[2] = squeeze[dimensions=(1,)] g\n"
      "        in (c,) }\n"
      "    ] a b\n"
      "  in (c,) }")


# ----------------------------------------------------------------------------
# gather


def test_gather_scatter_mode_from_any():
  assert Mode.from_any("clip") is Mode.CLIP
  assert Mode.from_any("fill") is Mode.from_any("drop") is Mode.from_any(None) \
      is Mode.FILL_OR_DROP
  assert Mode.from_any("promise_in_bounds") is Mode.PROMISE_IN_BOUNDS
  assert Mode.from_any("one_hot") is Mode.ONE_HOT
  assert Mode.from_any(Mode.CLIP) is Mode.CLIP
  assert str(Mode.PROMISE_IN_BOUNDS) == "GatherScatterMode.PROMISE_IN_BOUNDS"


def test_dimension_numbers_print_like_jax():
  assert str(GD((), (0,), (0,))) == (
      "GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,), "
      "operand_batching_dims=(), start_indices_batching_dims=())")
  assert str(SD((), (0,), (0,))) == (
      "ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), "
      "scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), "
      "scatter_indices_batching_dims=())")


def default_fill(dtype):
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return True
  if dtype.kind in "iu":
    return np.iinfo(dtype).min if dtype.kind == "i" else np.iinfo(dtype).max
  return np.nan


def np_take(x, idx, mode, fill_value=None):
  """x[idx] along axis 0 for 1-component indices of shape (..., 1), under `mode`."""
  idx = idx[..., 0].astype(np.int64)
  n = x.shape[0]
  out = x[np.clip(idx, 0, n - 1)] if n else np.zeros(idx.shape + x.shape[1:], x.dtype)
  if mode == "fill":
    bad = (idx < 0) | (idx >= n)
    fill = default_fill(x.dtype) if fill_value is None else fill_value
    out = out.copy()
    out[bad] = fill
  return out


TAKE_INDICES = [[[0], [7], [-1], [2]], [[4]], [[3], [3]], np.zeros((0, 1)),
                [[[1], [2]], [[5], [0]]]]


@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("idx", TAKE_INDICES, ids=str)
def test_gather_points_matches_numpy(idx, dtype, mode, rng):
  x = rand(rng, (5,), dtype)
  idx = np.asarray(idx, np.int32)
  dnums = GD(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
  check(lambda x, i: G.gather(x, i, dnums, (1,), mode=mode), (x, idx), np_take(x, idx, mode))


@pytest.mark.parametrize("mode", ["clip", "fill", None])
@pytest.mark.parametrize("index_dtype", [np.int32, np.uint8, np.int8, np.int64, np.uint32],
                         ids=str)
def test_gather_rows_matches_numpy(index_dtype, mode, rng):
  x = rand(rng, (4, 3), np.float32)
  idx = np.array([[1], [3], [250], [0], [2]]).astype(index_dtype)
  dnums = GD(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
  expected = np_take(x, idx.astype(np.int64), "fill" if mode == "fill" else "clip")
  check(lambda x, i: G.gather(x, i, dnums, (1, 3), mode=mode), (x, idx), expected)


@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_gather_windows_clamp_or_fill_whole_windows(mode, rng):
  x = rand(rng, (6,), np.int32)
  starts = np.array([[0], [2], [4], [5], [-1], [9]], np.int32)
  dnums = GD(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,))
  rows = []
  for (s,) in starts:
    if mode == "fill" and not 0 <= s <= 3:
      rows.append(np.full(3, np.iinfo(np.int32).min, np.int32))  # the whole window
    else:
      s = min(max(s, 0), 3)
      rows.append(x[s:s + 3])
  check(lambda x, i: G.gather(x, i, dnums, (3,), mode=mode), (x, starts), np.stack(rows))


@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_gather_2d_points_need_every_component_in_bounds(mode, rng):
  x = rand(rng, (3, 4), np.float32)
  idx = np.array([[0, 0], [2, 3], [3, 0], [1, -1], [2, 9]], np.int32)
  dnums = GD(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
  clipped = x[np.clip(idx[:, 0], 0, 2), np.clip(idx[:, 1], 0, 3)]
  if mode == "fill":
    clipped[2:] = np.nan
  check(lambda x, i: G.gather(x, i, dnums, (1, 1), mode=mode), (x, idx), clipped)


def test_gather_with_batching_dims_matches_a_loop(rng):
  x = rand(rng, (3, 5), np.float32)
  idx = rng.integers(0, 5, size=(3, 4, 1)).astype(np.int32)
  dnums = GD(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
             operand_batching_dims=(0,), start_indices_batching_dims=(0,))
  expected = np.stack([x[b, idx[b, :, 0]] for b in range(3)])
  check(lambda x, i: G.gather(x, i, dnums, (1, 1)), (x, idx), expected)


def test_gather_scalar_output_and_user_fill_value(rng):
  x = rand(rng, (5,), np.float32)
  dnums = GD(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
  check(lambda x: G.gather(x, np.array([3], np.int32), dnums, (1,)), (x,), x[3])
  check(lambda x: G.gather(x, np.array([[8], [1]], np.int32), dnums, (1,), mode="fill",
                           fill_value=-2), (x,), np.array([-2, x[1]], np.float32))


def test_gather_weak_type_is_the_operands():
  dnums = GD(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
  assert G.gather(weak((3,)), np.array([[1]], np.int32), dnums, (1,)).weak_type


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gather_default_fill_values_follow_jax(dtype):
  dnums = GD(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
  out = G.gather(np.zeros(3, dtype), np.array([[5]], np.int32), dnums, (1,), mode="fill")
  np.testing.assert_array_equal(_bits(out), _bits(np.array([default_fill(dtype)], dtype)))


# ----------------------------------------------------------------------------
# scatter


def _ufunc_at(kind, out, idx, upd):
  if kind == "scatter":
    out[idx] = upd
  else:
    ufunc = {"scatter_add": np.add, "scatter_mul": np.multiply, "scatter_min": np.minimum,
             "scatter_max": np.maximum, "scatter_sub": np.subtract}[kind]
    if out.dtype == np.bool_ and kind == "scatter_add":
      ufunc = np.logical_or
    if out.dtype == np.bool_ and kind == "scatter_mul":
      ufunc = np.logical_and
    ufunc.at(out, idx, upd)


def np_scatter_points(kind, x, idx, updates, mode):
  """Scatter along axis 0 for 1-component indices: clip clamps, the others drop."""
  idx = idx[..., 0].astype(np.int64).ravel()
  updates = updates.reshape(idx.shape)
  n = x.shape[0]
  if mode == "clip":
    keep, idx = np.ones(idx.shape, bool), np.clip(idx, 0, n - 1)
  else:
    keep = (idx >= 0) & (idx < n)
  out = x.copy()
  _ufunc_at(kind, out, idx[keep], updates[keep])
  return out


SCATTER_KINDS = ["scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max",
                 "scatter_sub"]


def _dtypes_for(kind):
  if kind in ("scatter_sub", "scatter_add", "scatter_mul"):
    return [d for d in DTYPES if d != np.bool_]  # JAX rejects bool for arithmetic scatters
  if kind in ("scatter_min", "scatter_max"):
    return [d for d in DTYPES if d.kind != "c"]  # NumPy orders complex differently
  return DTYPES


# Every dtype under the default mode; the other modes for a few dtypes (compiles are slow).
SCATTER_CASES = [(k, d, m) for k in SCATTER_KINDS for d in _dtypes_for(k)
                 for m in (["fill", "clip", "promise_in_bounds"] if d in DTYPES[:3] else ["fill"])]


@pytest.mark.parametrize("kind,dtype,mode", SCATTER_CASES, ids=str)
def test_scatter_points_match_numpy(kind, dtype, mode, rng):
  x = rand(rng, (6,), dtype)
  if kind == "scatter":  # no duplicates (their order is unspecified) after clamping
    idx = np.array([[0], [-3], [9], [2]], np.int32) if mode != "clip" else \
        np.array([[1], [9], [2]], np.int32)
  else:  # duplicates accumulate; out-of-bounds either clamp or drop
    idx = np.array([[1], [1], [7], [-1], [5], [1]], np.int32)
  updates = rand(rng, idx.shape[:1], dtype)
  fun = getattr(G, kind)
  dnums = SD(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
  check(lambda x, i, u: fun(x, i, u, dnums, mode=mode), (x, idx, updates),
        np_scatter_points(kind, x, idx, updates, mode))


def test_scatter_add_accumulates_duplicates():
  dnums = SD(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
  idx = np.array([[2], [2], [2], [0]], np.int32)
  out = G.scatter_add(np.zeros(3, np.float32), idx, np.array([1, 2, 3, 4], np.float32), dnums)
  np.testing.assert_array_equal(np.asarray(out), [4, 0, 6])


@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_scatter_windows_clamp_or_drop_whole_windows(mode, rng):
  x = rand(rng, (6,), np.float32)
  starts = np.array([[0], [2], [4], [-1]], np.int32)
  updates = rand(rng, (4, 3), np.float32)
  dnums = SD(update_window_dims=(1,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))
  expected = x.copy()
  for (s,), u in zip(starts, updates):
    if mode == "clip":
      s = min(max(s, 0), 3)
    elif not 0 <= s <= 3:
      continue  # the whole window is dropped, even its in-bounds part
    expected[s:s + 3] += u
  check(lambda x, i, u: G.scatter_add(x, i, u, dnums, mode=mode), (x, starts, updates), expected)


def test_scatter_rows_and_batching_dims_match_numpy(rng):
  x = rand(rng, (4, 3), np.float32)
  idx = np.array([[3], [0]], np.int32)
  rows = rand(rng, (2, 3), np.float32)
  dnums = SD(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
  expected = x.copy()
  expected[[3, 0]] = rows
  check(lambda x, i, u: G.scatter(x, i, u, dnums), (x, idx, rows), expected)
  idx = np.array([[[1], [2]], [[0], [0]], [[2], [1]], [[1], [1]]], np.int32)
  updates = rand(rng, (4, 2), np.float32)
  dnums = SD(update_window_dims=(), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
             operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
  expected = x.copy()
  for b in range(4):
    np.add.at(expected[b], idx[b, :, 0], updates[b])
  check(lambda x, i, u: G.scatter_add(x, i, u, dnums), (x, idx, updates), expected)


def test_scatter_with_empty_updates_is_the_identity(rng):
  x = rand(rng, (3,), np.float32)
  dnums = SD(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
  check(lambda x: G.scatter_add(x, np.zeros((0, 1), np.int32), np.zeros(0, np.float32), dnums),
        (x,), x)


def test_scatter_apply_applies_func_per_index(rng):
  x = np.arange(5, dtype=np.float32)
  idx = np.array([[0], [7], [-1], [2]], np.int32)
  dnums = SD(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
  double = lambda v: ew.mul(v, np.float32(2))  # noqa: E731
  check(lambda x: G.scatter_apply(x, idx, double, dnums, update_shape=(4,)), (x,),
        np.array([0, 1, 4, 3, 4], np.float32))
  # Under clip, index 0 is hit twice (0 and the clamped -1) and 4 once.
  check(lambda x: G.scatter_apply(x, idx, double, dnums, update_shape=(4,), mode="clip"), (x,),
        np.array([0, 1, 4, 3, 8], np.float32))


def test_scatter_weak_type_is_the_operands():
  dnums = SD(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
  assert G.scatter_add(weak((3,)), np.array([[1]], np.int32), np.ones(1, np.float32),
                       dnums).weak_type
  assert not G.scatter(np.ones(3, np.float32), np.array([[1]], np.int32), weak((1,)),
                       dnums).weak_type


def test_equal_scatters_share_one_update_jaxpr_when_printed():
  dnums = SD(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
  text = str(xjax.make_jaxpr(lambda x, i, u: (G.scatter_add(x, i, u, dnums),
                                              G.scatter_add(x, i, u, dnums)))(
      np.ones(5, np.float32), np.zeros((3, 1), np.int32), np.ones(3, np.float32)))
  assert text.startswith("let jaxpr = { lambda ; a:f32[] b:f32[]. let c:f32[] = add a b in (c,) }"
                         " in\n{ lambda ; d:f32[5] e:i32[3,1] f:f32[3]. let\n")
  assert text.count("update_jaxpr=jaxpr") == 2


# ----------------------------------------------------------------------------
# Printed jaxprs against the goldens recorded from real JAX (built with lax calls:
# jnp indexing produces the same equations)

with open(GOLDEN) as _f:
  _GOLDEN_CASES = json.load(_f)["cases"]


def _normalize_index(i, n):
  return ew.select_n(ew.lt(i, 0), i, ew.add(i, n))


def _gather_idx_array(x, idx):
  i = S.broadcast_in_dim(_normalize_index(idx, 5), (2, 1), (0,))
  dnums = GD(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
  return G.gather(x, i, dnums, (1,), mode=Mode.PROMISE_IN_BOUNDS)


def _at_set(x):
  dnums = SD(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
  return G.scatter(x, S.broadcast_in_dim(1, (1,), ()), 7.0, dnums, indices_are_sorted=True,
                   unique_indices=True, mode=Mode.FILL_OR_DROP)


def _at_add_idx(x, idx, v):
  i = S.broadcast_in_dim(_normalize_index(idx, 5), (2, 1), (0,))
  dnums = SD(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
  return G.scatter_add(x, i, v, dnums, mode=Mode.FILL_OR_DROP)


def _f32(*shape):
  return (np.arange(int(np.prod(shape)), dtype=np.float32) / 4 - 1).reshape(shape)


@pytest.mark.parametrize("case_id,fun,args", [
    ("slice_1_3", lambda x: L.slice(x, (1,), (3,)), (_f32(5),)),
    ("slice_step_2", lambda x: L.slice(x, (0,), (5,), (2,)), (_f32(5),)),
    ("index_int_0", lambda x: S.squeeze(L.slice(x, (0, 0), (1, 4)), (0,)), (_f32(3, 4),)),
    ("dynamic_slice", lambda x, i: L.dynamic_slice(x, (i,), (2,)), (_f32(5), np.int32(1))),
    ("gather_idx_array", _gather_idx_array, (_f32(5), np.array([0, 2], np.int32))),
    ("at_set", _at_set, (_f32(4),)),
    ("at_add_idx", _at_add_idx, (_f32(5), np.array([0, 3], np.int32), _f32(2))),
], ids=lambda v: v if isinstance(v, str) else "")
def test_jaxpr_matches_golden(case_id, fun, args):
  assert str(xjax.make_jaxpr(fun)(*args)) == _GOLDEN_CASES[case_id]["text"]


# ----------------------------------------------------------------------------
# Errors: JAX 0.10.2's classes and messages (recorded eagerly; the eager slice runs as
# a dynamic_slice in JAX, hence the np.int64 sizes)

x = np.ones((2, 3), np.float32)
v = np.arange(5, dtype=np.float32)
I21 = np.zeros((2, 1), np.int32)
I31 = np.zeros((3, 1), np.int32)
U2 = np.ones(2, np.float32)

ERRORS = [
    (lambda: L.slice(x, (0, 0), (3, 3)), TypeError,
     'slice slice_sizes must be less than or equal to operand shape, got slice_sizes '
     '(np.int64(3), np.int64(3)) for operand shape (2, 3).'),
    (lambda: L.slice(x, (1, 0), (0, 3)), TypeError,
     'slice slice_sizes must be greater than or equal to zero, got slice_sizes of '
     '(np.int64(-1), np.int64(3)).'),
    (lambda: L.slice(x, (0, 0), (1, 3), (1,)), TypeError,
     'slice strides must have length equal to the number of dimensions of the operand, got '
     'strides (1,) for operand shape (2, 3).'),
    (lambda: L.slice(x, (0, 0), (1, 3), (1, -1)), TypeError,
     'slice strides must have every element be nonnegative, got (1, -1).'),
    (lambda: L.dynamic_slice(x, (0,), (1, 1)), ValueError,
     'Length of slice indices must match number of operand dimensions (1 vs (2, 3))'),
    (lambda: L.dynamic_slice(x, (0, 0), (3, 1)), TypeError,
     'slice slice_sizes must be less than or equal to operand shape, got slice_sizes (3, 1) '
     'for operand shape (2, 3).'),
    (lambda: L.dynamic_slice(x, (0, 0), (-1, 1)), TypeError,
     'slice slice_sizes must be greater than or equal to zero, got slice_sizes of (-1, 1).'),
    (lambda: L.dynamic_slice(x, (0., 0), (1, 1)), TypeError,
     'index arguments to dynamic_slice must be integers of the same type, got: float32, '
     'int32'),
    (lambda: L.dynamic_slice(x, (np.int32(0), np.uint32(0)), (1, 1)), TypeError,
     'index arguments to dynamic_slice must be integers of the same type, got: int32, uint32'),
    (lambda: L.dynamic_slice(x, (np.zeros(2, np.int32), 0), (1, 1)), TypeError,
     'start_indices arguments to dynamic_slice must be scalars,  got indices '
     '(ShapedArray(int32[2]), ShapedArray(int32[]))'),
    (lambda: L.dynamic_slice(x, I21, (1, 1)), ValueError,
     'Slice indices must be a 1D sequence, got (2, 1)'),
    (lambda: L.dynamic_slice(x, (-1, 0), (1, 1), allow_negative_indices=False), ValueError,
     'Index -1 is out of bounds for dimension 2 if allow_negative_indices=False'),
    (lambda: L.dynamic_update_slice(x, np.ones(3, np.float32), (0, 0)), TypeError,
     'dynamic_update_slice update must have the same rank as operand, got update shape (3,) '
     'for operand shape (2, 3).'),
    (lambda: L.dynamic_update_slice(x, np.ones((1, 3), np.float32), (0,)), ValueError,
     'Length of slice indices must match number of operand dimensions (1 vs (2, 3))'),
    (lambda: L.dynamic_update_slice(x, np.ones((3, 3), np.float32), (0, 0)), TypeError,
     'dynamic_update_slice update shape must be smaller than operand shape, got update shape '
     '(3, 3) for operand shape (2, 3).'),
    (lambda: L.dynamic_update_slice(x, np.ones((1, 3), np.int32), (0, 0)), TypeError,
     'lax.dynamic_update_slice requires arguments to have the same dtypes, got float32, '
     'int32.'),
    (lambda: L.dynamic_update_slice(x, np.ones((1, 3), np.float32), (0., 0)), TypeError,
     'index arguments to dynamic_update_slice must be integers of the same type, got '
     'float32, int32'),
    (lambda: L.index_in_dim(x, 5), IndexError,
     'index 5 is out of bounds for axis 0 with size 2'),
    (lambda: G.GatherScatterMode.from_any('bad'), ValueError,
     'Unknown gather mode "bad"'),
    (lambda: G.gather(v, np.zeros((2, 1), np.float32), GD((), (0,), (0,)), (1,)), ValueError,
     'indices must have an integer type'),
    (lambda: G.gather(v, I21, GD((), (0,), (0, 0)), (1,)), TypeError,
     'Gather op has 2 elements in start_index_map and the bound of dimension '
     'index_vector_dim=1 of indices is 1. These two numbers must be equal.'),
    (lambda: G.gather(v, I21, GD((), (0,), (1,)), (1,)), TypeError,
     'Invalid start_index_map; domain is [0, 1), got: 0->1.'),
    (lambda: G.gather(v, I21, GD((1, 0), (), (0,)), (1,)), TypeError,
     'offset_dims in gather op must be sorted; got (1, 0)'),
    (lambda: G.gather(v, I21, GD((5,), (), (0,)), (1,)), TypeError,
     'Offset dimension 0 in gather op is out of bounds; got 5, but should have been in [0, '
     '2)'),
    (lambda: G.gather(v, I21, GD((), (0,), (0,)), (1, 1)), TypeError,
     'Gather op must have one slice size for every input dimension; got: len(slice_sizes)=2, '
     'input_shape.rank=1'),
    (lambda: G.gather(v, I21, GD((), (), (0,)), (1,)), TypeError,
     'All components of the offset index in a gather op must either be a offset dimension or '
     'explicitly collapsed/batching; got len(slice_sizes)=1, output_slice_sizes=(), '
     'collapsed_slice_dims=(), operand_batching_dims=().'),
    (lambda: G.gather(v, I21, GD((), (0,), (0,)), (2,)), TypeError,
     'Gather op can only collapse slice dims with bound 1, but bound is 2 for index 0 at '
     'position 0.'),
    (lambda: G.gather(v, I21, GD((), (0,), (0,)), (6,)), TypeError,
     'Slice size at index 0 in gather op is out of range, must be within [0, 5 + 1), got 6.'),
    (lambda: G.gather(v, I21, GD((), (1,), (0,)), (1,)), TypeError,
     'Invalid collapsed_slice_dims set in gather op; valid range is [0, 1); got: 1.'),
    (lambda: G.gather(x, I21, GD((), (0, 0), (0,)), (1, 1)), TypeError,
     'collapsed_slice_dims in gather op must not repeat; got: (0, 0).'),
    (lambda: G.gather(x, I21, GD((1,), (1,), (0,), (0,), (0,)), (1, 3)), TypeError,
     'start_index_map and operand_batching_dims in gather op must be disjoint; got: (0,) and '
     '(0,).'),
    (lambda: G.gather(x, I21, GD((1,), (), (1,), (0,), (1,)), (1, 3)), TypeError,
     'Gather op cannot have the index vector dimension as a batching dimension; got (1,).'),
    (lambda: G.gather(x, I21, GD((1,), (), (1,), (0,), ()), (1, 3)), TypeError,
     'Gather op requires equal numbers of operand_batching_dims and '
     'start_indices_batching_dims, got (0,) and().'),
    (lambda: G.gather(x, I31, GD((1,), (), (1,), (0,), (0,)), (1, 3)), TypeError,
     'Gather op requires operand batching dimensions and indices batching dimensions to have '
     'the same shape, got (2,) and (3,).'),
    (lambda: G.gather(x, I21, GD((1,), (), (1,), (0,), (0,)), (2, 3)), TypeError,
     'Gather op can only have operand batching dims with bound 0/1, but bound is 2 for index '
     '0 at position 0.'),
    (lambda: G.gather(v, np.zeros((), np.int32), GD((), (0,), ()), (1,)), TypeError,
     'Gather index leaf dimension must be within [0, rank(indices) + 1). rank(indices) is 0 '
     'and gather index leaf dimension is -1.'),
    (lambda: G.gather(v, I21, GD((), (0,), (0,)), (1,), mode='bad'), ValueError,
     'Unknown gather mode "bad"'),
    (lambda: G.scatter(v, np.zeros((2, 1), np.float32), U2, SD((), (0,), (0,))), ValueError,
     'indices must have an integer type'),
    (lambda: G.scatter(v, I21, np.ones(2, np.int32), SD((), (0,), (0,))), TypeError,
     'lax.scatter requires arguments to have the same dtypes, got float32, int32.'),
    (lambda: G.scatter_add(v, I21, np.ones(2, np.int32), SD((), (0,), (0,))), TypeError,
     'lax.scatter requires arguments to have the same dtypes, got float32, int32.'),
    (lambda: G.scatter(v, I21, np.ones((2, 1), np.float32), SD((), (0,), (0,))), TypeError,
     'Updates tensor must be of rank 1; got 2.'),
    (lambda: G.scatter(v, I21, np.ones(3, np.float32), SD((), (0,), (0,))), TypeError,
     'Bounds of the scatter dimensions of updates must be the same as the bounds of the '
     'corresponding dimensions of scatter indices. For scatter dimension 0, updates bound is '
     '3, indices bound is 2.'),
    (lambda: G.scatter(v, I21, np.ones((2, 1), np.float32), SD((1,), (0,), (0,))), TypeError,
     "Scatter op has window of size 2; doesn't match operand of rank 1."),
    (lambda: G.scatter(v, I21, np.ones((2, 6), np.float32), SD((1,), (), (0,))), TypeError,
     'Bounds of the window dimensions of updates must not exceed the bounds of the '
     'corresponding dimensions of operand. For dimension 1, updates bound is 6, operand '
     'bound is 5.'),
    (lambda: G.scatter(v, I21, U2, SD((), (0,), (1,))), TypeError,
     'Invalid scatter_dims_to_operand_dims mapping; domain is [0, 1), got: 0->1.'),
    (lambda: G.scatter(v, I21, U2, SD((), (0,), (0, 0))), TypeError,
     'Scatter op has 2 elements in scatter_dims_to_operand_dims and the bound of dimension '
     'index_vector_dim=1 of indices is 1. These two numbers must be equal'),
    (lambda: G.scatter(v, I21, U2, SD((), (1,), (0,))), TypeError,
     'Invalid inserted_window_dims set in scatter op; valid range is [0, 1); got: 1.'),
    (lambda: G.scatter(v, I21, np.ones((2, 1), np.float32), SD((1, 0), (), (0,))), TypeError,
     'Updates tensor must be of rank 3; got 2.'),
    (lambda: G.scatter(x, I21, U2, SD((), (1, 0), (1,))), TypeError,
     'inserted_window_dims in scatter op must be sorted; got (1, 0)'),
    (lambda: G.scatter(x, I21, U2, SD((), (1,), (1,), (0,), ())), TypeError,
     'Scatter op requires equal numbers of operand_batching_dims and '
     'scatter_indices_batching_dims, got (0,) and ().'),
    (lambda: G.scatter(x, I21, U2, SD((), (1,), (1,), (0,), (1,))), TypeError,
     'Scatter op cannot have the index vector dimension as a batching dimension; got (1,).'),
    (lambda: G.scatter(x, I31, np.ones(3, np.float32), SD((), (1,), (1,), (0,), (0,))), TypeError,
     'Scatter op requires operand batching dimensions and indices batching dimensions to '
     'have the same shape, got (2,) and (3,).'),
    (lambda: G.scatter(x, I21, U2, SD((), (0,), (1,), (0,), (0,))), TypeError,
     'inserted_window_dims and operand_batching_dims in scatter op must be disjoint; got: '
     '(0,) and (0,).'),
    (lambda: G.scatter(x, I21, U2, SD((), (), (0,), (0,), (0,))), TypeError,
     'scatter_dims_to_operand_dims and operand_batching_dims in scatter op must be disjoint; '
     'got: (0,) and (0,).'),]


@pytest.mark.parametrize("thunk,exc,message", ERRORS, ids=[e[2][:60] for e in ERRORS])
def test_errors_match_jax(thunk, exc, message):
  with pytest.raises(exc) as info:
    thunk()
  assert str(info.value) == message


# Under jit JAX checks a slice with the slice rule itself (its eager path differs).
JIT_SLICE_ERRORS = [
    (lambda x: L.slice(x, (0, 0, 0), (1, 1, 1)),
     "slice start_indices must have length equal to the number of dimensions of the operand, "
     "got indices (0, 0, 0) for operand shape (2, 3)."),
    (lambda x: L.slice(x, (0, 0), (1,)),
     "slice limit_indices must have the same length as start_indices, got start_indices (0, 0) "
     "and limit_indices (1,)."),
    (lambda x: L.slice(x, (0, 0), (3, 3)),
     "slice limit_indices must be less than or equal to operand shape, got limit_indices (3, 3) "
     "for operand shape (2, 3)."),
    (lambda x: L.slice(x, (-1, 0), (1, 3)),
     "slice start_indices must have every element be nonnegative, got (-1, 0)."),
    (lambda x: L.slice(x, (0.5, 0), (1, 3)),
     "slice start_indices must have every element be an integer type, got (<class 'float'>, "
     "<class 'int'>)."),
]


@pytest.mark.parametrize("fun,message", JIT_SLICE_ERRORS, ids=[e[1][:50] for e in JIT_SLICE_ERRORS])
def test_slice_errors_under_jit_match_jax(fun, message):
  with pytest.raises(TypeError) as info:
    xjax.jit(fun)(x)
  assert str(info.value) == message
