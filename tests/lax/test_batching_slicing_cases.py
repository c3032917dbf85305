"""Batching rules of the slicing and structural primitives, case by case.

`test_batching_rules.py` draws one configuration per spec; these tests pin
the cases it can miss: gather and every scatter with each combination of
batched operand, indices and updates; dynamic_slice and dynamic_update_slice
with batched (and out-of-range) start indices, which become a gather or a
scatter; jnp indexing under vmap; pad with a batched padding value;
concatenate of batched and unbatched operands; nonzero in_axes and out_axes;
vmap of vmap; and printed jaxprs that must match JAX's.
"""
import itertools

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
import xjax.test_util as jtu
from xjax import lax
from xjax._src.lax import gather_scatter

B = 3


def _member(x, axis, b):
  return x if axis is None else np.take(x, b, axis=axis)


def _check_vmap(fun, args, in_axes, out_axes=0):
  """vmap and jit(vmap) of `fun` equal the members' results, stacked at out_axes."""
  size = next(np.shape(x)[a] for x, a in zip(args, in_axes) if a is not None)
  outs = [np.asarray(fun(*[_member(x, a, b) for x, a in zip(args, in_axes)]))
          for b in range(size)]
  expected = np.stack(outs, axis=out_axes)
  batched = xjax.vmap(fun, in_axes=tuple(in_axes), out_axes=out_axes)
  jtu.assert_close(batched(*args), expected, err_msg=f"vmap in_axes={in_axes}")
  jtu.assert_close(xjax.jit(batched)(*args), expected, err_msg=f"jit in_axes={in_axes}")


def _batched(x, axis, rng_draw):
  """`x` stacked B times at `axis` (each member drawn anew), or `x` itself if None."""
  if axis is None:
    return x
  return np.stack([rng_draw() for _ in range(B)], axis=axis)


# ----------------------------------------------------------------------------
# gather

_GATHER_DNUMS = gather_scatter.GatherDimensionNumbers(
    offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))


@pytest.mark.parametrize("operand_axis, indices_axis", [(0, None), (None, 0), (0, 0),
                                                        (1, 1), (2, 0), (None, 1)])
@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
def test_gather_batched_operand_indices_or_both_matches_loop(rng, operand_axis, indices_axis,
                                                             mode):
  # Rows of a [5, 3] operand; out-of-range rows clip or fill per member.
  lo, hi = (-2, 7) if mode != "promise_in_bounds" else (0, 5)
  operand = _batched(None, operand_axis, lambda: rng.normal(size=(5, 3)).astype(np.float32))
  if operand is None:
    operand = rng.normal(size=(5, 3)).astype(np.float32)
  indices = _batched(None, indices_axis, lambda: rng.integers(lo, hi, (4, 1), dtype=np.int32))
  if indices is None:
    indices = rng.integers(lo, hi, (4, 1), dtype=np.int32)
  fun = lambda x, i: gather_scatter.gather(x, i, _GATHER_DNUMS, (1, 3), mode=mode)  # noqa: E731
  _check_vmap(fun, (operand, indices), (operand_axis, indices_axis))


@pytest.mark.parametrize("unique_indices, indices_are_sorted", [(True, True), (False, False)])
def test_gather_params_kept_or_dropped_as_in_jax(unique_indices, indices_are_sorted):
  # Batched indices alone drop the promises (members may collide); otherwise they stay.
  fun = lambda x, i: gather_scatter.gather(  # noqa: E731
      x, i, _GATHER_DNUMS, (1, 3), unique_indices=unique_indices,
      indices_are_sorted=indices_are_sorted)
  x = np.zeros((5, 3), np.float32)
  i = np.zeros((2, 1), np.int32)
  for in_axes, kept in [((0, None), True), ((None, 0), False), ((0, 0), True)]:
    args = (np.stack([x] * B) if in_axes[0] == 0 else x,
            np.stack([i] * B) if in_axes[1] == 0 else i)
    eqn = xjax.make_jaxpr(xjax.vmap(fun, in_axes=in_axes))(*args).jaxpr.eqns[-1]
    assert eqn.primitive is gather_scatter.gather_p
    assert eqn.params["unique_indices"] == (unique_indices and kept), in_axes
    assert eqn.params["indices_are_sorted"] == (indices_are_sorted and kept), in_axes


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.uint8, np.complex64])
def test_gather_both_batched_dtypes_match_loop(rng, dtype):
  operand = jtu.rand_default(rng)((B, 5, 3), dtype) if dtype != np.bool_ \
      else rng.random((B, 5, 3)) < 0.5
  operand = np.asarray(operand, dtype)
  indices = rng.integers(-1, 6, (B, 2, 1), dtype=np.int32)
  fun = lambda x, i: gather_scatter.gather(x, i, _GATHER_DNUMS, (1, 3), mode="fill")  # noqa: E731
  _check_vmap(fun, (operand, indices), (0, 0))


def test_gather_with_batching_dims_batched_again_matches_loop(rng):
  # A gather that already has operand/start_indices batching dims.
  dnums = gather_scatter.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,),
                                                start_index_map=(1,), operand_batching_dims=(0,),
                                                start_indices_batching_dims=(0,))
  fun = lambda x, i: gather_scatter.gather(x, i, dnums, (1, 1))  # noqa: E731
  operand = rng.normal(size=(B, 2, 4)).astype(np.float32)
  indices = rng.integers(0, 4, (2, B, 1), dtype=np.int32)
  for in_axes in [(0, 1), (0, None), (None, 1)]:
    args = (operand if in_axes[0] is not None else operand[0],
            indices if in_axes[1] is not None else indices[:, 0])
    _check_vmap(fun, args, in_axes)


def test_gather_empty_indices_and_size_one_batch_match_loop(rng):
  operand = rng.normal(size=(1, 5, 3)).astype(np.float32)
  indices = np.zeros((1, 0, 1), np.int32)
  fun = lambda x, i: gather_scatter.gather(x, i, _GATHER_DNUMS, (1, 3))  # noqa: E731
  _check_vmap(fun, (operand, indices), (0, 0))
  _check_vmap(fun, (operand, indices[0]), (0, None))


# ----------------------------------------------------------------------------
# scatter family

_SCATTERS = [gather_scatter.scatter, gather_scatter.scatter_add, gather_scatter.scatter_sub,
             gather_scatter.scatter_mul, gather_scatter.scatter_min, gather_scatter.scatter_max]
_SCATTER_DNUMS = gather_scatter.ScatterDimensionNumbers(
    update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
_COMBOS = [axes for axes in itertools.product([None, 0], repeat=3)
           if any(a is not None for a in axes)]


@pytest.mark.parametrize("scatter_fn", _SCATTERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("axes", _COMBOS, ids=str)
def test_scatter_every_variant_and_batching_matches_loop(rng, scatter_fn, axes):
  # Unique in-range rows, so that even plain scatter is deterministic.
  def draw_indices():
    return rng.permutation(5)[:2].reshape(2, 1).astype(np.int32)
  draw = {0: lambda: rng.normal(size=(5, 3)).astype(np.float32), 1: draw_indices,
          2: lambda: rng.normal(size=(2, 3)).astype(np.float32)}
  args = [_batched(None, a, draw[k]) if a is not None else draw[k]() for k, a in enumerate(axes)]
  fun = lambda x, i, u: scatter_fn(x, i, u, _SCATTER_DNUMS)  # noqa: E731
  _check_vmap(fun, args, axes)


@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
@pytest.mark.parametrize("axes", [(None, 1, 2), (2, 0, None), (1, 1, 1)], ids=str)
def test_scatter_add_modes_out_of_range_nonzero_axes_match_loop(rng, mode, axes):
  # Out-of-range and repeated indices: clipped or dropped per member.
  lo, hi = (-2, 7) if mode != "promise_in_bounds" else (0, 5)
  shapes = [(5, 3), (4, 1), (4, 3)]
  draws = [lambda: rng.normal(size=shapes[0]).astype(np.float32),
           lambda: rng.integers(lo, hi, shapes[1], dtype=np.int32),
           lambda: rng.normal(size=shapes[2]).astype(np.float32)]
  args = [_batched(None, a, d) if a is not None else d() for a, d in zip(axes, draws)]
  fun = lambda x, i, u: gather_scatter.scatter_add(x, i, u, _SCATTER_DNUMS, mode=mode)  # noqa: E731
  _check_vmap(fun, args, axes, out_axes=1)


@pytest.mark.parametrize("dtype", [np.int32, np.complex64, np.bool_])
def test_scatter_dtypes_match_loop(rng, dtype):
  operand = np.asarray(rng.integers(0, 2, (B, 5, 3)), dtype)
  updates = np.asarray(rng.integers(0, 2, (B, 2, 3)), dtype)
  indices = np.stack([rng.permutation(5)[:2].reshape(2, 1) for _ in range(B)]).astype(np.int32)
  fn = gather_scatter.scatter if dtype == np.bool_ else gather_scatter.scatter_add
  fun = lambda x, i, u: fn(x, i, u, _SCATTER_DNUMS)  # noqa: E731
  _check_vmap(fun, (operand, indices, updates), (0, 0, 0))
  _check_vmap(fun, (operand[0], indices, updates[0]), (None, 0, None))


def test_scatter_apply_batched_indices_matches_loop(rng):
  operand = rng.normal(size=(5,)).astype(np.float32)
  indices = rng.integers(0, 5, (B, 2, 1), dtype=np.int32)
  dnums = gather_scatter.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                                 scatter_dims_to_operand_dims=(0,))
  fun = lambda x, i: gather_scatter.scatter_apply(  # noqa: E731
      x, i, lax.exp, dnums, update_shape=(2,))
  _check_vmap(fun, (operand, indices), (None, 0))


# ----------------------------------------------------------------------------
# dynamic_slice and dynamic_update_slice


@pytest.mark.parametrize("in_axes", [(0, None, None), (None, 0, None), (None, None, 0),
                                     (1, 0, 0), (None, 0, 0)], ids=str)
def test_dynamic_slice_batched_indices_clamp_per_member(rng, in_axes):
  # Starts far out of range, negative (wrapped once, then clamped) and in range.
  operand = rng.normal(size=(4, 5, 6) if in_axes[0] is None else (5, B, 6)).astype(np.float32)
  if in_axes[0] is None:
    operand = operand[0]
  starts = [np.array([-9, -1, 7], np.int32), np.array([2, -3, 10], np.int32)]
  args = [operand] + [s if a is not None else s[1] for s, a in zip(starts, in_axes[1:])]
  fun = lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3))  # noqa: E731
  _check_vmap(fun, args, in_axes, out_axes=2)
  for i, j in [(-9, 2), (7, 10), (-1, -3)]:  # the clamping itself, against NumPy
    lo_i = min(max(i + 5 if i < 0 else i, 0), 3)
    lo_j = min(max(j + 6 if j < 0 else j, 0), 3)
    ref = operand if in_axes[0] is None else operand[:, 0]
    np.testing.assert_array_equal(fun(ref, np.int32(i), np.int32(j)),
                                  ref[lo_i:lo_i + 2, lo_j:lo_j + 3])


@pytest.mark.parametrize("in_axes", [(0, None, None), (None, 0, None), (None, None, 0),
                                     (0, 0, 0), (1, None, 0), (None, 1, 0)], ids=str)
def test_dynamic_update_slice_batched_matches_loop(rng, in_axes):
  operand_shape, update_shape = (4, 5), (2, 3)

  def draw(shape, axis):
    full = rng.normal(size=(B, *shape)).astype(np.float32)
    return full[0] if axis is None else np.moveaxis(full, 0, axis)
  starts = np.array([-8, 1, 9], np.int32)
  args = (draw(operand_shape, in_axes[0]), draw(update_shape, in_axes[1]),
          starts if in_axes[2] is not None else starts[2])
  fun = lambda x, u, i: lax.dynamic_update_slice(x, u, (i, i))  # noqa: E731
  _check_vmap(fun, args, in_axes, out_axes=-1)


def test_dynamic_slice_and_update_rank0_operand_batched():
  x = np.arange(B, dtype=np.float32)
  _check_vmap(lambda x: lax.dynamic_slice(x, (), ()), (x,), (0,))
  _check_vmap(lambda x, u: lax.dynamic_update_slice(x, u, ()), (x, x + 10), (0, 0))
  _check_vmap(lambda x, u: lax.dynamic_update_slice(x, u, ()), (x, np.float32(7)), (0, None))


def test_dynamic_update_slice_int_and_bool_match_loop(rng):
  operand = rng.integers(0, 9, (B, 6), dtype=np.int32)
  update = rng.integers(0, 9, (2,), dtype=np.int32)
  idx = np.array([0, 5, -1], np.int32)
  fun = lambda x, u, i: lax.dynamic_update_slice(x, u, (i,))  # noqa: E731
  _check_vmap(fun, (operand, update, idx), (0, None, 0))
  _check_vmap(fun, (operand > 4, update > 4, idx), (0, None, 0))


def test_dynamic_index_helpers_under_vmap_match_loop(rng):
  x = rng.normal(size=(B, 4, 5)).astype(np.float32)
  i = np.array([3, -1, 9], np.int32)
  _check_vmap(lambda x, i: lax.dynamic_index_in_dim(x, i, 1, False), (x, i), (0, 0))
  _check_vmap(lambda x, i: lax.dynamic_update_index_in_dim(x, x[0] * 0, i, 0), (x, i), (0, 0))


# ----------------------------------------------------------------------------
# jnp indexing under vmap


def test_jnp_indexing_patterns_under_vmap_match_loop(rng):
  x = rng.normal(size=(B, 4, 5)).astype(np.float32)
  i = np.array([0, 3, -2], np.int32)
  idx = rng.integers(0, 4, (B, 6), dtype=np.int32)
  v = rng.normal(size=(B, 5)).astype(np.float32)
  _check_vmap(lambda x, i: x[i], (x, i), (0, 0))
  _check_vmap(lambda x, i: x[i, :], (x, i), (0, 0), out_axes=1)
  _check_vmap(lambda x, i: x[:, i], (x, i), (0, 0))
  _check_vmap(lambda x, i: jnp.asarray(x)[i], (x[0], i), (None, 0))
  _check_vmap(lambda x, i: x[i], (np.moveaxis(x, 0, 2), 2), (2, None))
  _check_vmap(lambda x, idx: x[idx], (x, idx), (0, 0))
  _check_vmap(lambda x, idx: x[idx], (x, idx[0]), (0, None))
  _check_vmap(lambda x, idx: jnp.asarray(x)[idx, 1:], (x[0], idx), (None, 0))
  _check_vmap(lambda x, i, v: jnp.asarray(x).at[i].add(v), (x, i, v), (0, 0, 0))
  _check_vmap(lambda x, i, v: jnp.asarray(x).at[i].add(v), (x[0], i, v), (None, 0, 0))
  _check_vmap(lambda x, i, v: jnp.asarray(x).at[i].set(v), (x, 1, v[0]), (0, None, None))
  _check_vmap(lambda x, idx: jnp.asarray(x).at[idx].multiply(2.0), (x, idx), (0, 0))


# ----------------------------------------------------------------------------
# Structural primitives


@pytest.mark.parametrize("in_axes", [(0, 0), (None, 0), (1, 0), (1, None)], ids=str)
def test_pad_batched_padding_value_matches_loop(rng, in_axes):
  operand = rng.normal(size=(B, 4)).astype(np.float32)
  if in_axes[0] is None:
    operand = operand[0]
  elif in_axes[0] == 1:
    operand = operand.T
  padding = np.array([7.0, -1.0, 0.5], np.float32)
  padding = padding if in_axes[1] is not None else padding[0]
  fun = lambda x, p: lax.pad(x, p, ((2, -1, 1),))  # noqa: E731
  _check_vmap(fun, (operand, padding), in_axes, out_axes=1)


def test_pad_int_and_bool_batched_padding_value_match_loop(rng):
  fun = lambda x, p: lax.pad(x, p, ((1, 2, 1), (0, 1, 0)))  # noqa: E731
  x = rng.integers(0, 5, (2, 3), dtype=np.int32)
  _check_vmap(fun, (x, np.array([9, 8, 7], np.int32)), (None, 0))
  _check_vmap(fun, (x > 2, np.array([True, False, True])), (None, 0))


def test_concatenate_batched_and_unbatched_operands_match_loop(rng):
  a = rng.normal(size=(2, B, 3)).astype(np.float32)
  b = rng.normal(size=(1, 3)).astype(np.float32)
  c = rng.normal(size=(3, B, 1)).astype(np.float32)
  fun = lambda a, b, c: lax.concatenate([a, b, c.T], 0)  # noqa: E731
  _check_vmap(fun, (a, b, c), (1, None, 1), out_axes=-1)
  _check_vmap(lambda a, b: jnp.concatenate([a, b], axis=0), (a, b), (1, None))


def test_structural_ops_nonzero_axes_match_loop(rng):
  x = rng.normal(size=(2, 3, B)).astype(np.float32)
  _check_vmap(lambda x: lax.broadcast_in_dim(x, (4, 2, 3), (1, 2)), (x,), (2,), out_axes=2)
  _check_vmap(lambda x: lax.reshape(x, (3, 2), (1, 0)), (x,), (2,), out_axes=1)
  _check_vmap(lambda x: lax.transpose(x, (1, 0)), (x,), (2,), out_axes=-1)
  _check_vmap(lambda x: lax.rev(x, (0, 1)), (x,), (2,), out_axes=1)
  _check_vmap(lambda x: lax.squeeze(x[:1], (0,)), (x,), (2,), out_axes=1)
  _check_vmap(lambda x: lax.expand_dims(x, (0, 3)), (x,), (2,), out_axes=2)
  _check_vmap(lambda x: lax.slice(x, (0, 1), (2, 3), (2, 1)), (x,), (2,), out_axes=1)
  _check_vmap(lambda x: x + lax.broadcasted_iota(np.float32, (2, 3), 1), (x,), (2,))


def test_structural_ops_rank0_and_empty_members_match_loop():
  s = np.arange(B, dtype=np.float32)
  _check_vmap(lambda x: lax.broadcast_in_dim(x, (2,), ()), (s,), (0,))
  _check_vmap(lambda x: lax.reshape(x, (1, 1)), (s,), (0,))
  _check_vmap(lambda x: lax.pad(lax.reshape(x, (1,)), x, ((1, 1, 0),)), (s,), (0,))
  e = np.zeros((B, 0, 2), np.float32)
  _check_vmap(lambda x: lax.concatenate([x, x], 0), (e,), (0,))
  _check_vmap(lambda x: lax.transpose(x, (1, 0)), (e,), (0,))
  _check_vmap(lambda x: lax.pad(x, 1.0, ((1, 0, 0), (0, 0, 0))), (e,), (0,))


# ----------------------------------------------------------------------------
# vmap of vmap


def test_vmap_of_vmap_gather_scatter_dynamic_slice_match_loops(rng):
  x = rng.normal(size=(2, B, 5, 3)).astype(np.float32)
  i = rng.integers(-5, 5, (2, B), dtype=np.int32)
  v = rng.normal(size=(2, B, 3)).astype(np.float32)
  funs = [lambda x, i, v: jnp.asarray(x)[i], lambda x, i, v: jnp.asarray(x).at[i].add(v),
          lambda x, i, v: lax.dynamic_slice(x, (i, 0), (2, 3)),
          lambda x, i, v: lax.dynamic_update_slice(x, v[None], (i, 0))]
  for fun in funs:
    expected = np.stack([np.stack([np.asarray(fun(x[a, b], i[a, b], v[a, b]))
                                   for b in range(B)]) for a in range(2)])
    jtu.assert_close(xjax.vmap(xjax.vmap(fun))(x, i, v), expected)
    # The inner vmap shares x (unbatched there), the outer maps it.
    inner = xjax.vmap(fun, in_axes=(None, 0, 0))
    expected = np.stack([np.stack([np.asarray(fun(x[a, 0], i[a, b], v[a, b]))
                                   for b in range(B)]) for a in range(2)])
    jtu.assert_close(xjax.vmap(inner, in_axes=(0, 0, 0))(x[:, 0], i, v), expected)
