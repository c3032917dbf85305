"""Indexing against NumPy: ``x[idx]`` (ints, slices, None, Ellipsis, integer arrays,
boolean masks), ``x.at[idx]`` updates and reads with their out-of-bounds modes, take and
take_along_axis; the Sharp Bits examples, printed jaxprs and error messages."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import xjax
import xjax.numpy as jnp
from xjax import errors
from jnp_checks import ALL_DTYPES, check, rand

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

INDICES = [
    0, -1, 1, (1, 2), (0, -1, 3), slice(None), slice(1, None), slice(None, None, -1),
    slice(None, None, 2), (slice(None), 2), (Ellipsis, 1), (0, Ellipsis), (None, 0), (1, None),
    (None, Ellipsis, None), (slice(1, None), slice(None, None, 2)), (slice(None), slice(3, 0, -2)),
    np.array([1, 0]), np.array([-1, 0, -2]), (slice(None), np.array([2, 0])),
    (np.array([[1], [0]]), np.array([0, 2])), (0, slice(None), np.array([1, 3])),
    (np.array([0, 1]), slice(None), np.array([1, 3])), (np.array([1, 0]), None, 0),
    (Ellipsis, np.array([3, 0])), np.int32(1), (np.int64(1), np.uint8(2)),
    (slice(5, 10),), (slice(-10, 2),), (True,), (False,), (0, True),
]


@pytest.mark.parametrize("idx", INDICES, ids=repr)
def test_getitem_matches_numpy(idx):
  check(lambda a: a[idx], lambda a: a[idx], X)
  check(lambda a: a.at[idx].get(), lambda a: a[idx], X)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_getitem_dtypes(rng, dtype):
  x = rand(rng, (3, 4), dtype)
  for idx in (1, (slice(None), 2), np.array([2, 0]), (np.array([0, 2]), np.array([1, 3]))):
    check(lambda a: a[idx], lambda a: a[idx], x, dtype=x.dtype)


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3)])
def test_getitem_empty_arrays(shape):
  x = np.zeros(shape, np.float32)
  check(lambda a: a[:], lambda a: a[:], x)
  check(lambda a: a[..., :0], lambda a: a[..., :0], x)
  check(lambda a: a[np.array([], np.int32)], lambda a: a[np.array([], np.int32)], x)


def test_getitem_on_scalar():
  check(lambda a: a[()], lambda a: a[()], np.float32(3))
  check(lambda a: a[None], lambda a: a[None], np.float32(3))
  check(lambda a: a[...], lambda a: a[...], np.float32(3))


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_basic_indexing_matches_numpy_hypothesis(data):
  shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
  idx = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
  x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
  check(lambda a: a[idx], lambda a: a[idx], x)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_integer_array_indexing_matches_numpy_hypothesis(data):
  shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
  idx = data.draw(hnp.integer_array_indices(shape, result_shape=hnp.array_shapes(
      min_dims=0, max_dims=2, max_side=3), dtype=np.dtype(np.int32)))
  x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
  check(lambda a: a[idx], lambda a: a[idx], x)
  updates = np.ones(x[idx].shape, np.float32)

  def np_add(a):
    a = a.copy()
    np.add.at(a, idx, updates)
    return a
  check(lambda a: a.at[idx].add(updates), np_add, x)


def test_boolean_masks(rng):
  x = rand(rng, (3, 4), np.float32)
  mask = x > 0
  check(lambda a: a[mask], lambda a: a[mask], x, jit=False)
  check(lambda a: a[mask[:, 0]], lambda a: a[mask[:, 0]], x, jit=False)
  check(lambda a: a[1, mask[1]], lambda a: a[1, mask[1]], x, jit=False)
  check(lambda a: a.at[mask].set(0.0), lambda a: np.where(mask, 0, a).astype(np.float32), x)
  # A concrete mask is allowed under jit (it is a constant of the trace).
  check(lambda a: a[np.array([True, False, True])], lambda a: a[np.array([True, False, True])], x)
  with pytest.raises(IndexError, match="boolean index did not match shape"):
    jnp.asarray(x)[np.array([True, False])]


def test_traced_boolean_mask_raises_jax_error():
  # The Sharp Bits' nansum: a mask computed from traced values cannot index.
  def nansum(x):
    mask = ~jnp.isnan(x)
    return x[mask].sum()
  x = jnp.array([1, 2, jnp.nan, 3, 4])
  with pytest.raises(errors.NonConcreteBooleanIndexError) as info:
    xjax.jit(nansum)(x)
  assert str(info.value) == ("Array boolean indices must be concrete; got bool[5]\n\n"
                             "See https://docs.jax.dev/en/latest/errors.html"
                             "#jax.errors.NonConcreteBooleanIndexError")
  assert float(nansum(x)) == 10.0
  # The workaround from the same page.
  assert float(xjax.jit(lambda x: jnp.where(~jnp.isnan(x), x, 0).sum())(x)) == 10.0


def test_sharp_bits_out_of_bounds():
  assert repr(jnp.arange(10)[11]) == "Array(9, dtype=int32)"
  assert repr(jnp.arange(10.0).at[11].get()) == "Array(9., dtype=float32)"
  assert repr(jnp.arange(10.0).at[11].get(mode="fill", fill_value=jnp.nan)) == \
      "Array(nan, dtype=float32)"
  # Updates out of bounds are dropped.
  np.testing.assert_array_equal(jnp.arange(3.0).at[5].set(9.0), [0.0, 1.0, 2.0])
  np.testing.assert_array_equal(jnp.arange(3.0).at[np.array([0, 5])].add(1.0), [1.0, 1.0, 2.0])
  np.testing.assert_array_equal(jnp.arange(3.0).at[5].set(9.0, mode="clip"), [0.0, 1.0, 9.0])
  np.testing.assert_array_equal(jnp.arange(3.0).at[np.array([7])].get(mode="clip"), [2.0])
  out = jnp.arange(3).at[np.array([0, 7])].get(mode="fill", fill_value=-1)
  np.testing.assert_array_equal(out, [0, -1])


def test_sharp_bits_at_updates_on_5x6():
  jax_array = jnp.ones((5, 6))
  new = jax_array.at[::2, 3:].add(7.)
  assert repr(new) == (
      "Array([[1., 1., 1., 8., 8., 8.],\n       [1., 1., 1., 1., 1., 1.],\n"
      "       [1., 1., 1., 8., 8., 8.],\n       [1., 1., 1., 1., 1., 1.],\n"
      "       [1., 1., 1., 8., 8., 8.]], dtype=float32)")
  np.testing.assert_array_equal(jax_array, np.ones((5, 6)))  # unchanged
  with pytest.raises(TypeError, match="JAX arrays are immutable and do not support in-place item "
                                      "assignment"):
    jax_array[1, :] = 1.0


UPDATE_INDICES = [0, -1, (1, 2), slice(1, None), (slice(None), 3), np.array([0, 0, 2]),
                  (np.array([0, 1]), np.array([1, 1])), (slice(None, None, 2), slice(None, 2)),
                  (Ellipsis, 0), (None, 1), (slice(None, None, -1), 0)]


def _np_update(op):
  def fn(a, idx, v):
    a = a.copy()
    if op == "set":
      a[idx] = v
    else:
      getattr(np, op).at(a, idx, v)
    return a
  return fn


@pytest.mark.parametrize("idx", UPDATE_INDICES, ids=repr)
@pytest.mark.parametrize("op,np_op", [("set", "set"), ("add", "add"), ("multiply", "multiply"),
                                      ("min", "minimum"), ("max", "maximum"),
                                      ("subtract", "subtract")])
def test_at_updates_match_numpy(rng, idx, op, np_op):
  x = rand(rng, (3, 4), np.float32)
  v = np.float32(0.5)
  if op == "set" and isinstance(idx, np.ndarray):
    idx = np.array([0, 2])  # NumPy's result with repeated indices is order dependent
  check(lambda a: getattr(a.at[idx], op)(v), lambda a: _np_update(np_op)(a, idx, v), x)


def test_at_updates_with_array_values_and_dtypes(rng):
  x = rand(rng, (3, 4), np.int32)
  check(lambda a: a.at[:, 1].set(np.arange(3, dtype=np.int32)),
        lambda a: _np_update("set")(a, (slice(None), 1), np.arange(3)), x)
  check(lambda a: a.at[1].add(np.int32(2)), lambda a: _np_update("add")(a, 1, 2), x)
  out = jnp.arange(4).at[0:2].set([7, 8])
  np.testing.assert_array_equal(out, [7, 8, 2, 3])
  with pytest.warns(FutureWarning, match="scatter inputs have incompatible types"):
    out = jnp.arange(4).at[1].set(2.7)
  assert out.dtype == np.int32 and int(out[1]) == 2
  weak = jnp.asarray(1.0).at[()].set(2.0)
  assert weak.weak_type


def test_at_divide_power_apply():
  x = jnp.arange(1.0, 5.0)
  np.testing.assert_allclose(x.at[::2].divide(2.0), [0.5, 2.0, 1.5, 4.0])
  np.testing.assert_allclose(x.at[1].power(3), [1.0, 8.0, 3.0, 4.0])
  np.testing.assert_allclose(x.at[np.array([1, 1])].apply(jnp.negative), [1.0, 2.0, 3.0, 4.0])
  np.testing.assert_allclose(x.at[1:3].apply(jnp.sin), [1.0, np.sin(2.0), np.sin(3.0), 4.0],
                             rtol=1e-6)
  np.testing.assert_allclose(x.at[0].mul(5.0), [5.0, 2.0, 3.0, 4.0])


def test_at_update_errors():
  with pytest.raises(ValueError, match=r"Incompatible types for broadcasting: input "
                                       r"type=float32\[3\] and requested type=float32\[2\]"):
    jnp.zeros(3).at[:2].set(jnp.ones(3))


def test_indexing_errors():
  with pytest.raises(IndexError, match="Too many indices: array is 1-dimensional, but 2 were "
                                       "indexed"):
    jnp.arange(3)[0, 0]
  with pytest.raises(TypeError, match="Indexer must have integer or boolean type, got indexer "
                                      "with type float64"):
    jnp.arange(3)[1.0]
  with pytest.raises(TypeError, match="Indexer must have integer or boolean type, got indexer "
                                      "with type float32"):
    jnp.arange(3)[jnp.ones(1)]
  with pytest.raises(TypeError, match="Using a non-tuple sequence for multidimensional indexing"):
    jnp.ones((2, 2))[[0, slice(None)]]
  with pytest.raises(TypeError, match=r"use `arr\[array\(seq\)\]` instead of `arr\[seq\]`"):
    jnp.ones((2, 2))[[0, 1]]
  with pytest.raises(IndexError, match="an index can only have a single ellipsis"):
    jnp.ones((2, 2))[..., ...]
  with pytest.raises(TypeError, match="JAX does not support string indexing"):
    jnp.ones(2)["a"]


def test_indexing_under_jit_with_traced_indices():
  x = jnp.arange(10.0)
  f = xjax.jit(lambda a, i: a[i])
  assert float(f(x, 3)) == 3.0
  assert float(f(x, -1)) == 9.0
  assert float(f(x, 20)) == 9.0  # dynamic_slice clamps
  g = xjax.jit(lambda a, i: a.at[i].set(-1.0))
  np.testing.assert_array_equal(g(x, 2)[:4], [0.0, 1.0, -1.0, 3.0])
  h = xjax.jit(lambda a, idx: a[idx])
  np.testing.assert_array_equal(h(x, jnp.array([1, -2])), [1.0, 8.0])
  # The Sharp Bits' static loop over x[i].
  s = xjax.jit(lambda x, n: sum((x[i] for i in range(n)), 0.), static_argnums=(1,))
  assert repr(s(jnp.array([2., 3., 4.]), 2)) == "Array(5., dtype=float32)"


def test_indexing_prints_like_jax():
  f32 = np.arange(12, dtype=np.float32).reshape(3, 4)
  assert str(xjax.make_jaxpr(lambda x: x[0])(f32)) == (
      "{ lambda ; a:f32[3,4]. let\n"
      "    b:f32[1,4] = slice[limit_indices=(1, 4) start_indices=(0, 0) strides=None] a\n"
      "    c:f32[4] = squeeze[dimensions=(0,)] b\n  in (c,) }")
  assert str(xjax.make_jaxpr(lambda x: x[None])(f32[0])) == (
      "{ lambda ; a:f32[4]. let\n"
      "    b:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n  in (b,) }")
  text = str(xjax.make_jaxpr(lambda x, i: x[i])(f32[0], np.array([0, 2], np.int32)))
  assert text.startswith(
      "{ lambda ; a:f32[4] b:i32[2]. let\n    c:bool[2] = lt b 0:i32[]\n"
      "    d:i32[2] = add b 4:i32[]\n    e:i32[2] = select_n c b d\n"
      "    f:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e\n    g:f32[2] = gather[")
  assert "mode=GatherScatterMode.PROMISE_IN_BOUNDS" in text
  text = str(xjax.make_jaxpr(lambda x: x.at[1].set(7.0))(f32[0]))
  assert "b:i32[1] = broadcast_in_dim 1:i32[]" in text
  assert "mode=GatherScatterMode.FILL_OR_DROP" in text and "] a b 7.0:f32[]" in text


@pytest.mark.parametrize("mode", [None, "fill", "clip", "wrap"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_take_matches_numpy(mode, axis):
  x = np.arange(12, dtype=np.float32).reshape(3, 4)
  idx = np.array([[0, 2], [1, 2]])
  np_mode = {None: "raise", "fill": "raise"}.get(mode, mode)
  check(lambda a: jnp.take(a, idx, axis=axis, mode=mode),
        lambda a: np.take(a, idx, axis=axis, mode=np_mode), x)
  oob = np.array([-1, 5])
  if mode in ("clip", "wrap"):
    np_oob = np.array([0, 5]) if mode == "clip" else oob
    check(lambda a: jnp.take(a, oob, axis=axis, mode=mode),
          lambda a: np.take(a, np_oob, axis=axis, mode=mode), x)
  elif axis == 0:
    out = jnp.take(x, oob, axis=0, mode=mode)
    np.testing.assert_array_equal(out[0], x[-1])
    assert np.isnan(np.asarray(out[1])).all()
  with pytest.raises(NotImplementedError, match="The 'raise' mode to jnp.take is not supported."):
    jnp.take(x, idx, mode="raise")


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_take_along_axis_matches_numpy(rng, axis):
  x = rand(rng, (3, 4), np.float32)
  if axis is None:
    idx = np.argsort(x, axis=None)[:5]
  else:
    idx = np.argsort(x, axis=axis)
  check(lambda a: jnp.take_along_axis(a, idx, axis=axis),
        lambda a: np.take_along_axis(a, idx, axis=axis), x)
  check(lambda a: jnp.take_along_axis(a, jnp.argsort(a, axis=1), axis=1),
        lambda a: np.take_along_axis(a, np.argsort(a, axis=1, kind="stable"), axis=1), x)
  # Out-of-bounds indices fill with NaN by default.
  out = jnp.take_along_axis(jnp.asarray(x), jnp.array([[0, 9]]), axis=1)
  assert np.isnan(np.asarray(out)[:, 1]).all()
  with pytest.raises(TypeError, match="take_along_axis indices must be of integer type"):
    jnp.take_along_axis(x, np.ones((3, 4), np.float32), axis=1)


def test_take_along_axis_defaults_and_negative_index_wrapping():
  # JAX 0.10.2's signature: axis defaults to -1; wrap_negative_indices (default: wrap unless
  # mode="promise_in_bounds") — values recorded from JAX.
  x = jnp.array([1.0, 2.0, 3.0])
  idx = jnp.array([-1, 0])
  np.testing.assert_array_equal(jnp.take_along_axis(jnp.array([1, 2, 3]), jnp.array([2, 0])),
                                [3, 1])
  np.testing.assert_array_equal(jnp.take_along_axis(x, idx), [3.0, 1.0])
  np.testing.assert_array_equal(jnp.take_along_axis(x, idx, wrap_negative_indices=False),
                                [np.nan, 1.0])
  np.testing.assert_array_equal(
      jnp.take_along_axis(x, idx, wrap_negative_indices=False, mode="clip"), [1.0, 1.0])
  np.testing.assert_array_equal(
      jnp.take_along_axis(jnp.array([[1, 2], [3, 4]]), jnp.array([[1, 0]])), [[2, 1], [4, 3]])
  assert jnp.take_along_axis(jnp.array([False]), jnp.zeros(0, jnp.int32)).shape == (0,)


# ----------------------------------------------------------------------------
# jax.ds (a Slice with a traced start), strategies, jax_check_static_indices

def test_ds_slices_with_a_traced_start():
  from xjax._src.indexing import Slice
  x = np.arange(10, dtype=np.int32)
  f = xjax.jit(lambda x, i: x[xjax.ds(i, 3)])
  np.testing.assert_array_equal(f(x, 4), x[4:7])
  np.testing.assert_array_equal(f(x, 9), x[7:10])  # dynamic_slice clamps the start
  assert "dynamic_slice[slice_sizes=(3,)]" in str(xjax.make_jaxpr(f)(x, 4))
  g = xjax.jit(lambda x, i: x[xjax.ds(i, 3, 2)])  # strided: a gather
  np.testing.assert_array_equal(g(x, 1), x[1:7:2])
  h = xjax.jit(lambda x, i: x.at[xjax.ds(i, 2)].set(0))
  np.testing.assert_array_equal(h(x, 3), np.where((x >= 3) & (x < 5), 0, x))
  y = np.arange(12).reshape(3, 4)
  np.testing.assert_array_equal(jnp.asarray(y)[1, xjax.ds(1, 2)], y[1, 1:3])
  assert xjax.ds(None) == slice(None) and xjax.ds(4) == Slice(0, 4, 1)
  assert Slice.from_slice(slice(1, 8, 3), 10) == Slice(1, 3, 3)
  with pytest.raises(ValueError, match="stride"):
    Slice(0, 2, -1)
  # a static start is pytree metadata, a traced one a leaf
  assert xjax.tree_util.tree_leaves(xjax.ds(3, 2)) == []
  leaves = xjax.tree_util.tree_leaves(xjax.ds(jnp.int32(3), 2))
  assert len(leaves) == 1 and int(leaves[0]) == 3


def test_rewriting_take_strategies_and_their_errors():
  from xjax._src.numpy import indexing
  S = indexing.IndexingStrategy
  x = jnp.arange(12.0).reshape(3, 4)
  for strategy in S:
    if strategy != S.SCATTER:
      np.testing.assert_array_equal(indexing.rewriting_take(x, (1, slice(None, None, -1)),
                                                            strategy=strategy),
                                    np.asarray(x)[1, ::-1])
  jaxpr = str(xjax.make_jaxpr(lambda x: indexing.rewriting_take(x, 1, strategy=S.GATHER))(x))
  assert "gather" in jaxpr
  with pytest.raises(IndexError, match="index 4 out of bounds for axis 0 with size 3"):
    indexing.rewriting_take(x, 4, strategy=S.STATIC_SLICE)
  with pytest.raises(TypeError, match="static_slice: indices must be static scalars or slices"):
    indexing.rewriting_take(x, np.arange(2), strategy=S.STATIC_SLICE)
  with pytest.raises(TypeError, match="dynamic_slice: only unit steps"):
    indexing.rewriting_take(x, slice(None, None, 2), strategy=S.DYNAMIC_SLICE)
  with pytest.raises(TypeError, match="Expected strategy"):
    indexing.rewriting_take(x, 0, strategy="auto")
  # out of bounds under AUTO: clamped by the dynamic slice, no error
  np.testing.assert_array_equal(x[4], np.asarray(x)[2])


def test_check_static_indices_flag():
  from xjax._src import config as config_lib
  x = jnp.zeros((2, 3))
  with config_lib.check_static_indices(True):
    with pytest.raises(IndexError, match="index 6 out of bounds for axis 1 with size 3"):
      x[:, 6]
    assert x.at[:, 6].get(mode="clip").shape == (2,)  # only 'promise_in_bounds' is checked
  assert x[:, 6].shape == (2,)
