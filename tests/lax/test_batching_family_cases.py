"""Batching rules of the elementwise, reduction, sorting and dot families: the cases
the generic table (`test_batching_rules.py`) does not draw.

Each value test compares `vmap` with a Python loop over the batch (stacked at
the out axis); the printed-jaxpr tests hold text printed by real JAX 0.10.2.
"""
import numpy as np
import pytest

import xjax
import xjax.test_util as jtu
from xjax import lax
from xjax._src.lax import reductions
from xjax._src.lax import sorting

B = 3


def _stack_at(xs, axis):
  return np.stack([np.asarray(x) for x in xs], axis=axis)


def _check_vmap(fun, args, in_axes, out_axes=0, rtol=None, atol=None):
  """vmap(fun) against a loop over the members; unmapped args are shared."""
  size = next(np.shape(a)[d] for a, d in zip(args, in_axes) if d is not None)
  members = [[a if d is None else np.take(a, i, axis=d) for a, d in zip(args, in_axes)]
             for i in range(size)]
  outs = [fun(*m) for m in members]
  if isinstance(outs[0], (tuple, list)):
    expected = [_stack_at([o[k] for o in outs], out_axes) for k in range(len(outs[0]))]
  else:
    expected = _stack_at(outs, out_axes)
  vmapped = xjax.vmap(fun, in_axes=tuple(in_axes), out_axes=out_axes)
  for actual in (vmapped(*args), xjax.jit(vmapped)(*args)):
    if isinstance(expected, list):
      actual = list(actual)
    jtu.assert_close(actual, expected, rtol=rtol, atol=atol)


def _batched(rng, shape, axis, dtype=np.float32):
  """B members of `shape` stacked at `axis`, or one shared member when `axis` is None."""
  x = _rand(rng, (B, *shape), dtype)
  return x[0] if axis is None else np.moveaxis(x, 0, axis)


def _rand(rng, shape, dtype=np.float32):
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return rng.random(shape) < 0.5
  if dtype.kind in "iu":
    return rng.integers(0, 5, size=shape).astype(dtype)
  if dtype.kind == "c":
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
  return rng.standard_normal(shape).astype(dtype)


# ----------------------------------------------------------------------------
# dot_general


@pytest.mark.parametrize("lhs_axis, rhs_axis", [(0, 0), (0, 2), (2, 1), (1, None), (None, 2),
                                                (3, 0)])
def test_dot_general_with_batch_dims_matches_loop(rng, lhs_axis, rhs_axis):
  # Per member: lhs (2, 4, 3) and rhs (4, 3, 5), batch dims 1 and 0 (size 4), contracting 3.
  dnums = (((2,), (1,)), ((1,), (0,)))
  lhs, rhs = _batched(rng, (2, 4, 3), lhs_axis), _batched(rng, (4, 3, 5), rhs_axis)
  _check_vmap(lambda a, b: lax.dot_general(a, b, dnums), [lhs, rhs], [lhs_axis, rhs_axis],
              out_axes=1, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("lhs_axis, rhs_axis", [(0, 1), (1, 0), (None, 0), (1, None)])
def test_dot_general_vector_and_matrix_operands_match_loop(rng, lhs_axis, rhs_axis):
  lhs, rhs = _batched(rng, (3,), lhs_axis), _batched(rng, (3, 2), rhs_axis)
  _check_vmap(lambda a, b: lax.dot(a, b), [lhs, rhs], [lhs_axis, rhs_axis], rtol=1e-5, atol=1e-5)


def test_dot_general_integer_and_preferred_type_match_loop(rng):
  lhs = _rand(rng, (B, 2, 3), np.int8)
  rhs = _rand(rng, (3, B), np.int8)
  fun = lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                     preferred_element_type=np.int32)
  _check_vmap(fun, [lhs, rhs], [0, 1])


def test_dot_general_nested_vmap_matches_loop(rng):
  # The outer batch (size 2) maps both operands; the inner one (size B) only lhs.
  lhs, rhs = _rand(rng, (B, 2, 4, 3)), _rand(rng, (3, 2, 5))
  inner = xjax.vmap(lambda a, b: lax.dot(a, b), in_axes=(0, None))
  actual = xjax.vmap(inner, in_axes=(1, 1))(lhs, rhs)
  expected = np.einsum("bikj,jil->ibkl", lhs, rhs)
  jtu.assert_close(actual, expected, rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------
# sort, top_k


@pytest.mark.parametrize("num_keys", [1, 2, 3])
@pytest.mark.parametrize("axes", [(0, 1, 2), (2, None, 0), (None, 1, None), (1, 1, 1)])
def test_sort_several_operands_matches_loop(rng, num_keys, axes):
  shape = (4, 5)
  # Small integer keys, so the later keys and stability decide ties.
  ops = [rng.integers(0, 3, size=shape).astype(np.int32), rng.integers(0, 3, size=shape).astype(np.float32),
         _rand(rng, shape)]
  batched = [o if a is None else np.stack([rng.permutation(o.ravel()).reshape(shape)
                                           for _ in range(B)], a) for o, a in zip(ops, axes)]
  for dimension in (0, 1):
    _check_vmap(lambda *xs: sorting.sort(xs, dimension=dimension, num_keys=num_keys),
                batched, list(axes), out_axes=2)


def test_sort_single_operand_keeps_the_batch_axis(rng):
  x = _rand(rng, (4, B, 5))
  _check_vmap(lambda v: sorting.sort(v, dimension=0), [x], [1], out_axes=1)


@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_top_k_matches_loop(rng, in_axis):
  x = np.moveaxis(_rand(rng, (B, 4, 6)), 0, in_axis)
  _check_vmap(lambda v: sorting.top_k(v, 3), [x], [in_axis])
  _check_vmap(lambda v: sorting.top_k(v, 2, axis=0), [x], [in_axis], out_axes=-1)


# ----------------------------------------------------------------------------
# Cumulative ops, reductions, argmax/argmin


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_with_reverse_matches_loop(rng, op, reverse):
  fun = getattr(reductions, op)
  x = _rand(rng, (2, B, 4))
  for axis in (0, 1):
    _check_vmap(lambda v: fun(v, axis=axis, reverse=reverse), [x], [1], out_axes=axis,
                rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"])
def test_reduction_over_several_axes_with_the_batch_axis_between(rng, op):
  fun = getattr(reductions, op)
  x = _rand(rng, (2, 3, B, 4, 5))
  _check_vmap(lambda v: fun(v, (0, 2, 3)), [x], [2], rtol=1e-5, atol=1e-5)
  _check_vmap(lambda v: fun(v, (1, 2)), [x], [2], out_axes=1, rtol=1e-5, atol=1e-5)
  _check_vmap(lambda v: fun(v, ()), [x], [2], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["reduce_and", "reduce_or", "reduce_xor"])
@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.uint8])
def test_bitwise_reductions_match_loop(rng, op, dtype):
  fun = getattr(reductions, op)
  x = _rand(rng, (3, B, 4), dtype)
  _check_vmap(lambda v: fun(v, (0, 1)), [x], [1])
  _check_vmap(lambda v: fun(v, (1,)), [x], [1])


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_argmax_argmin_match_loop(rng, op, in_axis):
  fun = getattr(reductions, op)
  x = np.moveaxis(rng.integers(0, 3, size=(B, 4, 5)).astype(np.float32), 0, in_axis)
  for axis in (0, 1):
    _check_vmap(lambda v: fun(v, axis, np.int32), [x], [in_axis])


def test_generic_reduce_with_a_computation_matches_loop(rng):
  x, y = _rand(rng, (4, B, 5)), rng.integers(0, 9, size=(4, 5)).astype(np.int32)

  def fun(a, b):
    return reductions.reduce((a, b), (np.float32(-np.inf), np.int32(0)),
                             lambda p, q: (lax.max(p[0], q[0]), lax.add(p[1], q[1])), (0,))
  _check_vmap(fun, [x, y], [1, None], out_axes=1)


def test_generic_reduce_with_batched_initial_values_matches_loop(rng):
  # Each member's initial value is that member's identity of the computation.
  x = _rand(rng, (B, 4, 3))
  inits = np.full((B,), -np.inf, np.float32)
  fun = lambda a, i: reductions.reduce(a, i, lambda p, q: lax.max(p, q), (0,))
  _check_vmap(fun, [x, inits], [0, 0])
  _check_vmap(fun, [np.zeros((B, 0, 3), np.float32), inits], [0, 0])
  _check_vmap(lambda a, i: reductions.reduce(a, i, lambda p, q: lax.max(p, q), ()),
              [x, inits], [0, 0])


# ----------------------------------------------------------------------------
# Elementwise: select_n, clamp, convert_element_type, bitcast, broadcasting


@pytest.mark.parametrize("axes", [(0, None, None), (0, 1, 0), (None, 0, 1), (1, 0, None),
                                  (0, 0, 0)])
def test_select_n_with_batched_or_shared_predicate(rng, axes):
  args = [_batched(rng, (2, 3), axes[0], np.bool_),
          _batched(rng, (2, 3), axes[1]), _batched(rng, (2, 3), axes[2])]
  _check_vmap(lambda p, x, y: lax.select_n(p, x, y), args, list(axes))


@pytest.mark.parametrize("axes", [(0, None, None, None), (0, 0, 1, 1), (None, 0, 0, 1),
                                  (None, 1, 0, 0), (0, None, 0, None)])
def test_select_n_with_a_scalar_integer_predicate(rng, axes):
  which = rng.integers(0, 3, size=(B,)).astype(np.int32)
  args = [which if axes[0] is not None else which[0]]
  args += [_batched(rng, (4,), d) for d in axes[1:]]
  _check_vmap(lambda p, *cs: lax.select_n(p, *cs), args, list(axes))


def test_select_n_with_scalar_cases(rng):
  which = rng.random((B,)) < 0.5
  _check_vmap(lambda p, x, y: lax.select_n(p, x, y),
              [which, np.float32(1.0), np.float32(2.0)], [0, None, None])
  _check_vmap(lambda p, x, y: lax.select_n(p, x, y),
              [np.bool_(True), _rand(rng, (B,)), np.float32(2.0)], [None, 0, None])


@pytest.mark.parametrize("axes, shapes", [
    ((None, 0, None), ((), (B, 4), ())), ((0, 0, 0), ((B,), (B, 4), (B,))),
    ((0, 1, 0), ((B, 4), (4, B), (B, 4))), ((0, None, None), ((B,), (4,), ())),
    ((None, 0, 0), ((), (B,), (B,))), ((0, None, None), ((B,), (), ())),
    ((None, None, 0), ((), (), (B,)))])
def test_clamp_with_batched_and_shared_operands(rng, axes, shapes):
  lo, x, hi = [_rand(rng, s) for s in shapes]
  lo, hi = lo - 1.5, hi + 1.5
  _check_vmap(lambda a, b, c: lax.clamp(a, b, c), [lo, x, hi], list(axes))


@pytest.mark.parametrize("src, dst", [(np.float32, np.int32), (np.int32, np.bool_),
                                      (np.complex64, np.float32), (np.uint8, np.float16)])
def test_convert_element_type_matches_loop(rng, src, dst):
  x = _rand(rng, (2, B), src) * (3 if np.dtype(src).kind == "f" else 1)
  _check_vmap(lambda v: lax.convert_element_type(v, dst), [x], [1], out_axes=1)


@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_bitcast_convert_type_widening_with_the_batch_axis_last(rng, in_axis):
  x = _batched(rng, (3, 2), in_axis, np.uint8)
  _check_vmap(lambda v: lax.bitcast_convert_type(v, np.uint16), [x], [in_axis])


@pytest.mark.parametrize("axes", [(0, None), (None, 0), (1, 0), (0, 0)])
def test_binary_ops_broadcast_rank0_and_size1_operands(rng, axes):
  # Per member: x of shape (1, 4), y of shape (3, 1); then rank-0 operands.
  args = [_batched(rng, (1, 4), axes[0]), _batched(rng, (3, 1), axes[1])]
  for op in (lax.add, lax.mul, lax.max, lax.atan2, lax.lt):
    _check_vmap(op, args, list(axes), rtol=1e-6, atol=1e-6)
  s = _rand(rng, (B,))
  _check_vmap(lax.sub, [s, args[1]], [0, axes[1]])
  if axes[0] is not None:
    _check_vmap(lax.sub, [args[0], np.float32(2.0)], [axes[0], None])
  _check_vmap(lax.pow, [s, _batched(rng, (2, 1), axes[1], np.int32)], [0, axes[1]], rtol=1e-5)


def test_add_any_and_stop_gradient_batch(rng):
  x, t = _rand(rng, (B, 3)), _rand(rng, (3, B))
  # The jvp of x * x + x adds tangents with add_any; the batches sit at different axes.
  fun = lambda a, b: xjax.jvp(lambda v: lax.add(lax.mul(v, v), v), (a,), (b,))[1]
  _check_vmap(fun, [x, t], [0, 1])
  _check_vmap(fun, [x, t[:, 0]], [0, None])
  _check_vmap(lambda a: lax.stop_gradient(a), [x], [0], out_axes=1)
  grads = xjax.vmap(xjax.grad(lambda v: lax.reduce_sum(lax.mul(v, lax.stop_gradient(v)), (0,))))(x)
  jtu.assert_close(grads, x)
