"""The lax primitives and helpers of issue 13, part A, against NumPy and real JAX.

stack / unstack / tile, mulhi, the total-order comparisons (eq_to, le_to,
lt_to), optimization_barrier, stage, dce_sink, empty, rng_uniform,
rng_bit_generator, approx_max_k / approx_min_k, broadcast_like,
padtype_to_pads and shape_as_value. Values are checked against NumPy
references (or, for XLA's random bits, against values real JAX 0.10.2
printed), eagerly and under `xjax.jit`, with `xjax.vmap` and derivatives where
they apply. The printed jaxprs and the error messages were recorded from real
JAX 0.10.2.
"""
import ml_dtypes
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.config import enable_x64
from xjax._src.lax.ann import _reduction_output_size
from xjax.test_util import check_grads

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.dtype(d) for d in (np.float32, np.int32, np.uint8, np.bool_, np.complex64)] + [BF16]


def rand(rng, shape, dtype):
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return rng.random(shape) < 0.5
  if dtype.kind in "iu":
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -50), min(info.max, 50) + 1, size=shape).astype(dtype)
  if dtype.kind == "c":
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
  return rng.standard_normal(shape).astype(dtype)


def assert_same(actual, expected):
  actual = np.asarray(actual)
  expected = np.asarray(expected)
  assert actual.shape == expected.shape, (actual.shape, expected.shape)
  assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
  np.testing.assert_array_equal(actual.astype(np.float64) if actual.dtype == BF16 else actual,
                                expected.astype(np.float64) if expected.dtype == BF16 else expected)


def eager_and_jit(fun, *args):
  """fun(*args) eagerly and under jit; the two must agree; returns the eager result."""
  eager = fun(*args)
  jitted = xjax.jit(fun)(*args)
  for a, b in zip(xjax.tree_util.tree_leaves(eager), xjax.tree_util.tree_leaves(jitted)):
    assert_same(a, b)
  return eager


def jaxpr_str(fun, *args):
  return str(xjax.make_jaxpr(fun)(*args))


# ----------------------------------------------------------------------------
# stack / unstack / tile


STACK_CASES = [((3,), 2, 0), ((3,), 2, 1), ((3,), 2, -1), ((2, 3), 3, 1), ((2, 3), 1, -3),
               ((), 4, 0), ((0, 2), 2, 1), ((2, 0), 3, 2)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape,n,axis", STACK_CASES)
def test_stack_matches_numpy(shape, n, axis, dtype):
  rng = np.random.default_rng(0)
  xs = [rand(rng, shape, dtype) for _ in range(n)]
  out = eager_and_jit(lambda *a: lax.stack(a, axis=axis), *xs)
  assert_same(out, np.stack(xs, axis=axis))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape,axis", [((3,), 0), ((2, 3), 1), ((2, 3), -2), ((4, 0), 0),
                                        ((0, 4), 0), ((2, 1, 3), 2)])
def test_unstack_matches_numpy(shape, axis, dtype):
  x = rand(np.random.default_rng(1), shape, dtype)
  out = eager_and_jit(lambda a: lax.unstack(a, axis=axis), x)
  assert isinstance(out, tuple)
  expected = [np.take(x, i, axis=axis) for i in range(x.shape[axis])]
  assert len(out) == len(expected)
  for a, e in zip(out, expected):
    assert_same(a, e)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape,reps", [((2, 2), (2, 3)), ((3,), (2,)), ((2, 1), (1, 3)),
                                        ((), ()), ((2, 3), (0, 2)), ((0, 3), (2, 1)),
                                        ((2, 1, 2), (1, 2, 2))])
def test_tile_matches_numpy(shape, reps, dtype):
  x = rand(np.random.default_rng(2), shape, dtype)
  out = eager_and_jit(lambda a: lax.tile(a, reps), x)
  assert_same(out, np.tile(x, reps) if shape else x)


def test_stack_tile_unstack_docstring_values():
  x, y = jnp.array([1, 2]), jnp.array([3, 4])
  assert_same(lax.stack([x, y], axis=1), np.array([[1, 3], [2, 4]], np.int32))
  assert_same(lax.tile(jnp.array([[1], [2]]), (1, 3)), np.array([[1, 1, 1], [2, 2, 2]], np.int32))
  a, b = lax.unstack(jnp.array([[1, 2], [3, 4]]), axis=1)
  assert_same(a, np.array([1, 3], np.int32))
  assert_same(b, np.array([2, 4], np.int32))


def test_stack_weak_types_and_scalars():
  out = lax.stack([1.0, 2.0])
  assert out.dtype == np.float32 and out.weak_type
  with pytest.raises(TypeError, match="same dtypes"):  # no promotion, as in JAX
    lax.stack([jnp.int32(1), 2.0])
  assert lax.tile(3.0, ()).weak_type
  assert_same(lax.tile(np.ones(3, np.float32), (2,)), np.ones(6, np.float32))


def test_stack_tile_unstack_jaxprs_match_jax():
  x, y = jnp.ones((2, 3)), jnp.zeros((2, 3))
  assert jaxpr_str(lambda a, b: lax.stack([a, b], axis=1), x, y) == (
      "{ lambda ; a:f32[2,3] b:f32[2,3]. let c:f32[2,2,3] = stack[axis=1] a b in (c,) }")
  assert jaxpr_str(lambda a: lax.tile(a, (2, 1)), x) == (
      "{ lambda ; a:f32[2,3]. let b:f32[4,3] = tile[reps=(2, 1)] a in (b,) }")
  assert jaxpr_str(lambda a: lax.unstack(a, axis=1), x) == (
      "{ lambda ; a:f32[2,3]. let\n    b:f32[2] c:f32[2] d:f32[2] = unstack[axis=1] a\n"
      "  in (b, c, d) }")
  assert jaxpr_str(lambda a: lax.stack([a, 1.0]), 1.0) == (
      "{ lambda ; a:f32[]. let b:f32[2] = stack[axis=0] a 1.0:f32[] in (b,) }")


def test_stack_tile_unstack_errors_match_jax():
  x = jnp.ones((2, 3))
  with pytest.raises(IndexError):
    lax.stack([])
  with pytest.raises(ValueError, match=r"Cannot stack arrays with different numbers of "
                     r"dimensions: got \(2, 3\), \(3,\)\."):
    lax.stack([x, x[0]])
  with pytest.raises(ValueError, match=r"All input arrays must have the same shape\. "
                     r"Got \(3,\), \(4,\)\."):
    lax.stack([jnp.ones(3), jnp.ones(4)])
  with pytest.raises(TypeError, match=r"^lax\.stack requires arguments to have the same "
                     r"dtypes, got float32, int32\.$"):
    lax.stack([x, x.astype(jnp.int32)])
  with pytest.raises(ValueError, match="axis 3 is out of bounds for array of dimension 3"):
    lax.stack([x, x], axis=3)
  with pytest.raises(TypeError, match=r"reps length must be equal to the ndim of x, got "
                     r"len\(reps\)=1 and x\.ndim=2\."):
    lax.tile(x, (2,))
  with pytest.raises(TypeError, match="nonnegative"):
    lax.tile(x, (-1, 2))
  with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
    lax.unstack(x, axis=2)
  with pytest.raises(ValueError, match="axis 0 is out of bounds for array of dimension 0"):
    lax.unstack(jnp.float32(1))
  assert lax.unstack(jnp.zeros((0, 3))) == ()


@pytest.mark.parametrize("fun,shape", [
    (lambda a: lax.stack([a, 2 * a, jnp.sin(a)], axis=1), (2, 3)),
    (lambda a: lax.stack([a, a], axis=-1), (3,)),
    (lambda a: lax.tile(a, (2, 3)), (2, 2)),
    (lambda a: lax.tile(a, (1, 0)), (2, 2)),
    (lambda a: lax.unstack(a, axis=1)[1] * lax.unstack(a, axis=1)[0], (2, 3)),
    (lambda a: lax.stack(lax.unstack(a, axis=0)[::-1], axis=1), (3, 2)),
])
def test_stack_tile_unstack_derivatives(fun, shape):
  x = np.random.default_rng(3).standard_normal(shape)
  with enable_x64(True):  # second-order finite differences need float64
    check_grads(fun, (x,), order=2, modes=("fwd", "rev"))


def test_transposes_are_exact():
  # vjp of tile sums the tiles; vjp of stack splits; vjp of unstack stacks (Zero parts too).
  x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
  ct = np.arange(24.0, dtype=np.float32).reshape(4, 6)
  _, vjp = xjax.vjp(lambda a: lax.tile(a, (2, 2)), x)
  assert_same(vjp(ct)[0], ct.reshape(2, 2, 2, 3).sum(axis=(0, 2)))
  _, vjp = xjax.vjp(lambda a: lax.unstack(a, axis=1)[2], x)
  assert_same(vjp(np.array([5.0, 7.0], np.float32))[0],
              np.array([[0, 0, 5], [0, 0, 7]], np.float32))
  _, vjp = xjax.vjp(lambda a, b: lax.stack([a, b], axis=1), x[0], x[1])
  ga, gb = vjp(np.arange(6.0, dtype=np.float32).reshape(3, 2))
  assert_same(ga, np.array([0, 2, 4], np.float32))
  assert_same(gb, np.array([1, 3, 5], np.float32))


@pytest.mark.parametrize("in_axes", [(0, 0), (1, 1), (0, 1), (None, 0), (1, None)])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_stack_vmap(in_axes, axis):
  rng = np.random.default_rng(4)
  shapes = [(4, 3) if d == 0 else (3, 4) if d == 1 else (3,) for d in in_axes]
  xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
  out = xjax.vmap(lambda a, b: lax.stack([a, b], axis=axis), in_axes)(*xs)
  per = [np.stack([xs[0] if in_axes[0] is None else np.take(xs[0], i, in_axes[0]),
                   xs[1] if in_axes[1] is None else np.take(xs[1], i, in_axes[1])], axis=axis)
         for i in range(4)]
  assert_same(out, np.stack(per))


@pytest.mark.parametrize("in_axis", [0, 1, 2])
@pytest.mark.parametrize("axis", [0, 1])
def test_unstack_and_tile_vmap(in_axis, axis):
  x = np.random.default_rng(5).standard_normal((2, 3, 4)).astype(np.float32)
  outs = xjax.vmap(lambda a: lax.unstack(a, axis=axis), in_axis)(x)
  for j, out in enumerate(outs):
    expected = np.stack([np.take(np.take(x, i, in_axis), j, axis)
                         for i in range(x.shape[in_axis])])
    assert_same(out, expected)
  tiled = xjax.vmap(lambda a: lax.tile(a, (2, 3)), in_axis)(x)
  assert_same(tiled, np.stack([np.tile(np.take(x, i, in_axis), (2, 3))
                               for i in range(x.shape[in_axis])]))


# ----------------------------------------------------------------------------
# mulhi


def ref_mulhi(x, y):
  dtype = np.dtype(x.dtype)
  bits = dtype.itemsize * 8
  prod = [(int(a) * int(b)) >> bits for a, b in zip(x.ravel(), y.ravel())]
  # Python's >> floors, as the arithmetic high half of a two's complement product does.
  wrapped = [p % (1 << bits) for p in prod]
  return np.array(wrapped, np.uint64).astype(f"uint{bits}").view(dtype).reshape(x.shape)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32],
                         ids=lambda d: np.dtype(d).name)
def test_mulhi_matches_reference(dtype):
  info = np.iinfo(dtype)
  rng = np.random.default_rng(6)
  x = rng.integers(info.min, info.max, size=(4, 5), endpoint=True).astype(dtype)
  y = rng.integers(info.min, info.max, size=(4, 5), endpoint=True).astype(dtype)
  x[0, :3] = [info.min, info.max, 0]
  y[0, :3] = [info.min, info.max, info.max]
  out = eager_and_jit(lax.mulhi, x, y)
  assert_same(out, ref_mulhi(x, y))


def test_mulhi_known_values_and_scalars():
  assert_same(lax.mulhi(jnp.uint32(4000000000), jnp.uint32(3000000000)),
              np.uint32(2793967723))
  assert_same(lax.mulhi(jnp.int32(-4000000), jnp.int32(3000000)), np.int32(-2794))
  assert_same(lax.mulhi(jnp.int8(-100), jnp.int8(100)), np.int8(-40))
  assert_same(lax.mulhi(jnp.int32(1), 2), np.int32(0))
  assert_same(lax.mulhi(np.array([2**31, 6], np.uint32), np.uint32(6)),
              np.array([3, 0], np.uint32))


def test_mulhi_errors_jaxpr_vmap_and_grad():
  with pytest.raises(TypeError, match=r"mulhi does not accept dtype float32 at position 0\. "
                     r"Accepted dtypes at position 0 are subtypes of integer\."):
    lax.mulhi(1.0, 2.0)
  with pytest.raises(TypeError, match=r"^lax\.mulhi requires arguments to have the same "
                     r"dtypes, got int32, int8\.$"):
    lax.mulhi(jnp.int32(1), jnp.int8(2))
  with pytest.raises(TypeError, match="mulhi does not accept dtype bool"):
    lax.mulhi(True, False)
  i = jnp.arange(4, dtype=jnp.uint32)
  assert jaxpr_str(lax.mulhi, i, i) == (
      "{ lambda ; a:u32[4] b:u32[4]. let c:u32[4] = mulhi a b in (c,) }")
  x = np.array([[2**31, 7], [5, 2**30]], np.uint32)
  assert_same(xjax.vmap(lax.mulhi, (0, None))(x, np.uint32(4)), ref_mulhi(x, np.full_like(x, 4)))
  # Integer outputs: a float input's tangent gives a float0 (zero) tangent.
  _, t = xjax.jvp(lambda a: lax.mulhi(a, a), (np.int32(3),), (np.zeros((), xjax.dtypes.float0),))
  assert t.dtype == xjax.dtypes.float0


# ----------------------------------------------------------------------------
# eq_to, le_to, lt_to: IEEE total order


def total_order_key(x):
  """An integer key per float ordering -NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN."""
  x = np.asarray(x, np.float32)
  bits = x.view(np.int32).astype(np.int64)
  return np.where(bits < 0, -(bits & 0x7FFFFFFF) - 1, bits)


SPECIALS = np.array([0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1.5, -1.5, 1e-45], np.float32)


@pytest.mark.parametrize("name,ref", [("eq_to", np.equal), ("le_to", np.less_equal),
                                      ("lt_to", np.less)])
def test_total_order_comparisons_on_floats(name, ref):
  prim = getattr(lax, f"{name}_p")
  x, y = np.meshgrid(SPECIALS, SPECIALS)
  out = eager_and_jit(prim.bind, x, y)
  assert_same(out, ref(total_order_key(x), total_order_key(y)))


@pytest.mark.parametrize("dtype", [np.int8, np.uint32, np.bool_, np.int32],
                         ids=lambda d: np.dtype(d).name)
def test_total_order_comparisons_on_integers(dtype):
  rng = np.random.default_rng(7)
  x, y = rand(rng, (20,), dtype), rand(rng, (20,), dtype)
  y[:5] = x[:5]
  assert_same(eager_and_jit(lax.eq_to_p.bind, x, y), x == y)
  assert_same(eager_and_jit(lax.le_to_p.bind, x, y), x <= y)
  assert_same(eager_and_jit(lax.lt_to_p.bind, x, y), x < y)


def test_total_order_comparisons_known_values_and_rules():
  assert_same(lax.eq_to_p.bind(jnp.array([0.0, jnp.nan, -0.0]), jnp.array([-0.0, jnp.nan, 0.0])),
              np.array([False, True, False]))
  assert_same(lax.lt_to_p.bind(jnp.array([0.0, jnp.nan, -0.0, -jnp.nan]),
                               jnp.array([-0.0, jnp.inf, 0.0, -jnp.inf])),
              np.array([False, False, True, True]))
  assert_same(lax.eq_to_p.bind(jnp.array([1.0, 2]), 1.0), np.array([True, False]))
  assert_same(lax.eq_to_p.bind(np.array([1 + 1j, 2, np.nan], np.complex64),
                               np.array([1 + 1j, 2j, np.nan], np.complex64)),
              np.array([True, False, True]))
  assert jaxpr_str(lax.eq_to_p.bind, 1.0, 2.0) == (
      "{ lambda ; a:f32[] b:f32[]. let c:bool[] = eq_to a b in (c,) }")
  with pytest.raises(TypeError, match=r"lt_to does not accept dtype complex64 at position 0\. "
                     r"Accepted dtypes at position 0 are subtypes of integer, floating, bool\."):
    lax.lt_to_p.bind(jnp.array([1 + 1j]), jnp.array([1 + 2j]))
  assert_same(xjax.vmap(lambda a, b: lax.lt_to_p.bind(a, b), (0, None))(jnp.ones(3), 2.0),
              np.array([True, True, True]))
  # Bool outputs: the tangent is a symbolic zero of float0.
  grad = xjax.grad(lambda a: jnp.where(lax.le_to_p.bind(a, 1.0), a, 2 * a))(3.0)
  assert float(grad) == 2.0


# ----------------------------------------------------------------------------
# optimization_barrier


def test_optimization_barrier_pytrees_values_and_jaxprs():
  x, y = jnp.ones((2, 3)), jnp.zeros((2, 3))
  out = eager_and_jit(lambda a, b: lax.optimization_barrier((a, {"x": b})), x, y)
  assert isinstance(out, tuple) and set(out[1]) == {"x"}
  assert_same(out[0], np.ones((2, 3), np.float32))
  leaves = lax.optimization_barrier((x, 1, 2.0, np.int8(3)))
  assert [(np.asarray(v).dtype.name, getattr(v, "weak_type", None)) for v in leaves] == [
      ("float32", False), ("int32", True), ("float32", True), ("int8", False)]
  assert lax.optimization_barrier(()) == ()
  assert xjax.jit(lambda: lax.optimization_barrier(()))() == ()
  assert jaxpr_str(lambda a, b: lax.optimization_barrier((a, {"x": b})), x, y) == (
      "{ lambda ; a:f32[2,3] b:f32[2,3]. let\n"
      "    c:f32[2,3] d:f32[2,3] = optimization_barrier a b\n  in (c, d) }")
  assert jaxpr_str(lambda: lax.optimization_barrier(())) == (
      "{ lambda ; . let optimization_barrier  in () }")
  assert jaxpr_str(lambda a: lax.optimization_barrier((a, 2.0, 3)), x) == (
      "{ lambda ; a:f32[2,3]. let\n"
      "    b:f32[2,3] c:f32[] d:i32[] = optimization_barrier a 2.0:f32[] 3:i32[]\n"
      "  in (b, c, d) }")


def test_optimization_barrier_grad_and_vmap():
  x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
  g = xjax.grad(lambda a: lax.optimization_barrier(a * a).sum())(x)
  assert_same(g, 2 * x)
  assert jaxpr_str(xjax.grad(lambda a: lax.optimization_barrier(a * a).sum()), x) == (
      "{ lambda ; a:f32[2,3]. let\n"
      "    b:f32[2,3] = mul a a\n"
      "    c:f32[2,3] = optimization_barrier b\n"
      "    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c\n"
      "    d:f32[2,3] = broadcast_in_dim 1.0:f32[]\n"
      "    e:f32[2,3] = optimization_barrier d\n"
      "    f:f32[2,3] = mul a e\n"
      "    g:f32[2,3] = mul e a\n"
      "    h:f32[2,3] = add_any f g\n"
      "  in (h,) }")
  with enable_x64(True):
    check_grads(lambda a: lax.optimization_barrier((jnp.sin(a), a))[0] * a,
                (x.astype(np.float64),), order=2, modes=("fwd", "rev"))
  out = xjax.vmap(lambda a: lax.optimization_barrier((a, 2.0)))(x)
  assert_same(out[0], x)
  assert_same(out[1], np.array([2.0, 2.0], np.float32))
  assert jaxpr_str(xjax.vmap(lambda a: lax.optimization_barrier((a, 2.0))), x) == (
      "{ lambda ; a:f32[2,3]. let\n"
      "    b:f32[2,3] c:f32[] = optimization_barrier a 2.0:f32[]\n"
      "    d:f32[2] = broadcast_in_dim c\n  in (b, d) }")
  lowered = xjax.jit(lambda a: lax.optimization_barrier(a)).lower(x).as_text()
  assert "stablehlo.optimization_barrier" in lowered


# ----------------------------------------------------------------------------
# stage


def test_stage_lifts_values():
  x = jnp.ones((2, 3))
  assert jaxpr_str(lax.stage, x) == "{ lambda ; a:f32[2,3]. let  in (a,) }"
  assert jaxpr_str(lambda: lax.stage(1.0)) == "{ lambda ; . let  in (1.0:f32[],) }"
  assert jaxpr_str(lambda: lax.stage(np.ones(3))) == "{ lambda a:f32[3]; . let  in (a,) }"
  assert jaxpr_str(lambda a: lax.stage(3), x) == "{ lambda ; a:f32[2,3]. let  in (3:i32[],) }"
  three = lax.stage(3)
  assert type(three) is xjax.Array and three.weak_type and three.dtype == np.int32
  assert not lax.stage(np.int8(3)).weak_type and lax.stage(np.int8(3)).dtype == np.int8
  assert type(lax.stage(np.ones(2))) is xjax.Array
  assert_same(xjax.grad(lambda a: lax.stage(a).sum())(np.ones(2, np.float32)),
              np.ones(2, np.float32))
  assert_same(xjax.vmap(lambda a: lax.stage(a) * lax.stage(2.0))(np.ones(2, np.float32)),
              np.full(2, 2.0, np.float32))
  for bad in ([1, 2], "a"):
    with pytest.raises(TypeError, match=r"Error interpreting argument to stage as a JAX value\. "
                       rf"The problematic value is of type {type(bad)!r} and was passed to "
                       r"stage at position 0\."):
      lax.stage(bad)


def test_stage_primitive_rules():
  # `stage` never binds stage_p; the primitive is the identity with every rule.
  x = np.arange(3.0, dtype=np.float32)
  assert_same(lax.stage_p.bind(x), x)
  assert_same(xjax.jit(lax.stage_p.bind)(x), x)
  assert_same(xjax.grad(lambda a: (lax.stage_p.bind(a) ** 2).sum())(x), 2 * x)
  assert_same(xjax.vmap(lax.stage_p.bind)(x), x)
  assert jaxpr_str(lax.stage_p.bind, x) == (
      "{ lambda ; a:f32[3]. let b:f32[3] = stage a in (b,) }")


# ----------------------------------------------------------------------------
# dce_sink


def test_dce_sink():
  x = jnp.ones((2, 3))
  assert lax.dce_sink(x) is None and lax.dce_sink({"a": 1.0}) is None
  assert jaxpr_str(lax.dce_sink, x) == (
      "{ lambda ; a:f32[2,3]. let dce_sink[prevent_mlir_dce=False] a in () }")
  assert jaxpr_str(lambda a: lax.dce_sink((a, 2.0)), jnp.ones(2)) == (
      "{ lambda ; a:f32[2]. let\n    dce_sink[prevent_mlir_dce=False] a\n"
      "    dce_sink[prevent_mlir_dce=False] 2.0:f32[]\n  in () }")
  assert xjax.jit(lambda a: lax.dce_sink(a))(x) is None
  assert xjax.jit(lambda a: lax.dce_sink(a, prevent_mlir_dce=True))(x) is None
  fun = lambda a: (lax.dce_sink(a), a.sum())[1]  # noqa: E731
  assert_same(xjax.grad(fun)(jnp.ones(2)), np.ones(2, np.float32))
  assert jaxpr_str(xjax.grad(fun), jnp.ones(2)) == (
      "{ lambda ; a:f32[2]. let\n    dce_sink[prevent_mlir_dce=False] a\n"
      "    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] a\n"
      "    b:f32[2] = broadcast_in_dim 1.0:f32[]\n  in (b,) }")
  # As in JAX, vmap drops the sink of a batched value.
  assert jaxpr_str(xjax.vmap(fun), jnp.ones((3, 2))) == (
      "{ lambda ; a:f32[3,2]. let\n"
      "    b:f32[3] = reduce_sum[axes=(np.int64(1),) out_sharding=None] a\n  in (b,) }")
  assert lax.dce_sink_p.is_effectful


# ----------------------------------------------------------------------------
# empty


def test_empty():
  for shape, dtype, expected in [((2, 3), jnp.float32, ((2, 3), np.float32)),
                                 (3, np.int32, ((3,), np.int32)),
                                 ((0,), "bool", ((0,), np.bool_)),
                                 ((), BF16, ((), BF16))]:
    out = eager_and_jit(lambda: lax.empty(shape, dtype))
    assert out.shape == expected[0] and out.dtype == np.dtype(expected[1])
  assert lax.empty((2,), np.float64).dtype == np.float32  # no x64
  assert jaxpr_str(lambda: lax.empty(3, "float32")) == (
      "{ lambda ; . let\n    a:f32[3] = empty[dtype=float32 out_sharding=None shape=3] \n"
      "  in (a,) }")
  assert jaxpr_str(lambda: lax.empty((2, 3), np.dtype("int8"))) == (
      "{ lambda ; . let\n    a:i8[2,3] = empty[dtype=int8 out_sharding=None shape=(2, 3)] \n"
      "  in (a,) }")
  assert xjax.vmap(lambda a: lax.empty((2,), jnp.float32) + a)(jnp.ones(3)).shape == (3, 2)
  with pytest.raises(TypeError):
    lax.empty((-2,), np.float32)


# ----------------------------------------------------------------------------
# rng_uniform


@pytest.mark.parametrize("dtype,lo,hi", [(np.float32, -2.0, 3.0), (np.int32, 1, 5),
                                         (np.uint32, 7, 9)], ids=["f32", "i32", "u32"])
def test_rng_uniform_range_and_types(dtype, lo, hi):
  a, b = np.asarray(lo, dtype), np.asarray(hi, dtype)
  for out in (lax.rng_uniform(a, b, (1000,)), xjax.jit(lambda a, b: lax.rng_uniform(a, b, (1000,)))(a, b)):
    out = np.asarray(out)
    assert out.shape == (1000,) and out.dtype == np.dtype(dtype)
    assert (out >= lo).all() and (out < hi).all()
    assert len(np.unique(out)) > 1


def test_rng_uniform_rules_and_errors():
  out = lax.rng_uniform(1.0, 2.0, (3,))
  assert out.dtype == np.float32 and out.weak_type
  assert jaxpr_str(lambda a, b: lax.rng_uniform(a, b, (3,)), 1.0, 2.0) == (
      "{ lambda ; a:f32[] b:f32[]. let c:f32[3] = rng_uniform[shape=(3,)] a b in (c,) }")
  with pytest.raises(ValueError, match=r"Arguments to rng_uniform must be scalars; got shapes "
                     r"\(2,\) and \(2,\)\."):
    lax.rng_uniform(jnp.ones(2), jnp.ones(2), (3,))
  with pytest.raises(ValueError, match="Arguments to rng_uniform must have identical dtypes, "
                     "got float32 and int32."):
    lax.rng_uniform(jnp.float32(1), jnp.int32(5), (3,))
  with pytest.raises(NotImplementedError):
    xjax.grad(lambda a: lax.rng_uniform(a, 2.0, (3,)).sum())(1.0)
  with pytest.raises(NotImplementedError):
    xjax.vmap(lambda a: lax.rng_uniform(a, 2.0, (3,)))(jnp.ones(2))


# ----------------------------------------------------------------------------
# rng_bit_generator: values printed by real JAX 0.10.2 on CPU for key [1, 2, 3, 4]

KEY = np.array([1, 2, 3, 4], np.uint32)
RBG_GOLDEN = {
    ("RNG_DEFAULT", "uint8"): ([1, 2, 5, 4], [100, 215, 190, 1, 123]),
    ("RNG_DEFAULT", "uint16"): ([1, 2, 5, 4], [59492, 3031, 51646, 37377, 18555]),
    ("RNG_DEFAULT", "uint32"): ([1, 2, 5, 4],
                                [512747620, 1298009047, 1267190206, 761827841, 1383286907]),
    ("RNG_THREE_FRY", "uint8"): ([1, 2, 6, 4], [236, 142, 168, 94, 67]),
    ("RNG_THREE_FRY", "uint16"): ([1, 2, 6, 4], [13292, 6542, 43176, 64094, 26179]),
    ("RNG_THREE_FRY", "uint32"): ([1, 2, 6, 4],
                                  [1576285164, 2249660814, 740599976, 2425682526, 2436392515]),
    ("RNG_PHILOX", "uint8"): ([1, 2, 5, 4], [100, 215, 190, 1, 123]),
    ("RNG_PHILOX", "uint16"): ([1, 2, 5, 4], [59492, 3031, 51646, 37377, 18555]),
    ("RNG_PHILOX", "uint32"): ([1, 2, 5, 4],
                               [512747620, 1298009047, 1267190206, 761827841, 1383286907]),
}


@pytest.mark.parametrize("algorithm,dtype", sorted(RBG_GOLDEN))
def test_rng_bit_generator_matches_jax(algorithm, dtype):
  new_key, bits = eager_and_jit(
      lambda k: lax.rng_bit_generator(k, (5,), dtype=np.dtype(dtype),
                                      algorithm=lax.RandomAlgorithm[algorithm]), KEY)
  want_key, want_bits = RBG_GOLDEN[algorithm, dtype]
  assert_same(new_key, np.array(want_key, np.uint32))
  assert_same(bits, np.array(want_bits, dtype))


def test_rng_bit_generator_shapes_x64_and_jaxprs():
  new_key, bits = lax.rng_bit_generator(KEY, (2, 3))
  assert_same(bits, np.array([[512747620, 1298009047, 1267190206],
                              [761827841, 1383286907, 1639995030]], np.uint32))
  assert_same(lax.rng_bit_generator(KEY, ())[1], np.uint32(512747620))
  with pytest.warns(UserWarning, match="Explicitly requested dtype uint64"):
    assert lax.rng_bit_generator(KEY, (2,), dtype=np.uint64)[1].dtype == np.uint32
  with enable_x64(True):
    assert_same(lax.rng_bit_generator(KEY, (3,), dtype=np.uint64)[1],
                np.array([5574906407289874532, 3272025663544478142, 7043725020835825787],
                         np.uint64))
  assert jaxpr_str(lambda k: lax.rng_bit_generator(k, (2, 3)), KEY) == (
      "{ lambda ; a:u32[4]. let\n    b:u32[4] c:u32[2,3] = rng_bit_generator[\n"
      "      algorithm=RNG_DEFAULT\n      dtype=uint32\n      out_sharding=None\n"
      "      shape=(2, 3)\n    ] a\n  in (b, c) }")
  assert jaxpr_str(lambda k: lax.rng_bit_generator(
      k, (3,), dtype=np.uint8, algorithm=lax.RandomAlgorithm.RNG_PHILOX), KEY) == (
      "{ lambda ; a:u32[4]. let\n    b:u32[4] c:u8[3] = rng_bit_generator[\n"
      "      algorithm=RNG_PHILOX\n      dtype=uint8\n      out_sharding=None\n"
      "      shape=(3,)\n    ] a\n  in (b, c) }")
  assert [(a.name, int(a)) for a in lax.RandomAlgorithm] == [
      ("RNG_DEFAULT", 0), ("RNG_THREE_FRY", 1), ("RNG_PHILOX", 2)]


def test_rng_bit_generator_errors_vmap_and_jvp():
  for dtype in (np.float32, np.int32):
    with pytest.raises(TypeError, match=f"rng_bit_generator: unsupported dtype "
                       f"{np.dtype(dtype).name}"):
      lax.rng_bit_generator(KEY, (2,), dtype=dtype)
  for key in (KEY.astype(np.int32), np.zeros(2, np.uint32), np.zeros((2, 4), np.uint32)):
    with pytest.raises(TypeError, match="key"):
      lax.rng_bit_generator(key, (2,))
  with pytest.raises(TypeError):
    lax.rng_bit_generator(KEY, (2, -3))
  # JAX's batching rule: the first key draws the whole batch's bits, and only it advances.
  keys = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 9, 9, 9]], np.uint32)
  want_keys = np.array([[1, 2, 5, 4], [5, 6, 7, 8], [9, 9, 9, 9]], np.uint32)
  want_bits = np.array([[512747620, 1298009047], [1267190206, 761827841],
                        [1383286907, 1639995030]], np.uint32)
  for in_axis, ks in ((0, keys), (1, keys.T)):
    new_keys, bits = xjax.vmap(lambda k: lax.rng_bit_generator(k, (2,)), in_axis)(ks)
    assert_same(new_keys, want_keys)
    assert_same(bits, want_bits)
  _, tangents = xjax.jvp(lambda k: lax.rng_bit_generator(k, (2,)), (KEY,),
                         (np.zeros(4, xjax.dtypes.float0),))
  assert all(t.dtype == xjax.dtypes.float0 for t in tangents)


# ----------------------------------------------------------------------------
# approx_max_k / approx_min_k (exact on CPU, as in JAX)


def ref_top_k(x, k, axis, largest):
  """Stable: among equal values the lower index first."""
  order = np.argsort(-x if largest else x, axis=axis, kind="stable")
  idx = np.take(order, np.arange(k), axis=axis)
  return np.take_along_axis(x, idx, axis), idx.astype(np.int32)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16], ids=str)
@pytest.mark.parametrize("shape,k,dim", [((10,), 3, -1), ((4, 7), 2, 1), ((4, 7), 4, 0),
                                         ((2, 3, 5), 5, -1), ((3, 2, 5), 1, 1)])
@pytest.mark.parametrize("largest", [True, False])
def test_approx_top_k_matches_numpy(shape, k, dim, largest, dtype):
  rng = np.random.default_rng(8)
  x = rng.integers(-4, 5, size=shape).astype(dtype)  # many ties
  fun = lax.approx_max_k if largest else lax.approx_min_k
  values, idx = eager_and_jit(lambda a: fun(a, k, reduction_dimension=dim), x)
  want_values, want_idx = ref_top_k(x, k, dim, largest)
  assert_same(values, want_values)
  assert_same(idx, want_idx)


def test_approx_top_k_known_values_from_jax():
  x = jnp.array([[3.0, 1.0, 4.0, 1.0, 5.0], [9.0, 2.0, 6.0, 5.0, 3.0]])
  values, idx = lax.approx_max_k(x, 2, aggregate_to_topk=False)
  assert_same(values, np.array([[5, 4, 3, 1, 1], [9, 6, 5, 3, 2]], np.float32))
  assert_same(idx, np.array([[4, 2, 0, 1, 3], [0, 2, 3, 4, 1]], np.int32))
  values, idx = lax.approx_max_k(jnp.array([1.0, jnp.nan, 3.0, -0.0, 0.0]), 3)
  assert_same(values, np.array([np.nan, 3, 1], np.float32))
  assert_same(idx, np.array([1, 2, 0], np.int32))
  assert lax.approx_max_k(jnp.ones((2, 2500)), 10, recall_target=0.9,
                          aggregate_to_topk=False)[0].shape == (2, 256)


# (input size, rank, k, recall target, input size override, output size) from jaxlib's
# approx_top_k_reduction_output_size (XLA's TPU algorithm) in JAX 0.10.2.
REDUCTION_SIZES = [
    (5, 2, 1, 0.5, -1, 5), (129, 2, 1, 0.9, -1, 128), (129, 2, 10, 0.5, 258, 256),
    (129, 2, 10, 0.5, -1, 129), (1024, 2, 10, 0.95, -1, 256), (1024, 2, 10, 0.99, 2048, 512),
    (1024, 2, 50, 0.9, -1, 512), (1025, 1, 1, 0.5, -1, 1024), (1025, 1, 10, 0.5, 2050, 2048),
    (1025, 2, 10, 0.95, -1, 384), (1025, 2, 50, 0.99, 2050, 1025), (1025, 2, 50, 0.9, 2050, 384),
    (3000, 1, 50, 0.99, -1, 3000), (3000, 2, 10, 0.99, 6000, 768), (5000, 1, 50, 0.99, 10000, 3072),
    (5000, 2, 10, 0.9, -1, 256), (5000, 2, 10, 0.99, -1, 1280), (5000, 2, 10, 1.0, -1, 5000),
    (100000, 1, 50, 0.99, -1, 7168), (100000, 2, 50, 0.99, 200000, 3200),
    (100000, 2, 10, 0.99, -1, 1664), (4096, 2, 3, 0.95, 8192, 128), (1024, 1, 50, 0.99, -1, 1024),
]


@pytest.mark.parametrize("case", REDUCTION_SIZES, ids=str)
def test_approx_top_k_reduction_output_size(case):
  *args, want = case
  assert _reduction_output_size(*args) == want


def test_approx_top_k_rules_jaxprs_and_errors():
  x = jnp.array([[3.0, 1.0, 4.0, 1.0, 5.0], [9.0, 2.0, 6.0, 5.0, 3.0]])
  assert_same(xjax.grad(lambda a: lax.approx_max_k(a, 2)[0].sum())(x),
              np.array([[0, 0, 1, 0, 1], [1, 0, 1, 0, 0]], np.float32))
  assert_same(xjax.grad(lambda a: lax.approx_min_k(a, 2, reduction_dimension=0)[0].sum())(x),
              np.ones((2, 5), np.float32))
  with enable_x64(True):
    check_grads(lambda a: lax.approx_max_k(a, 3)[0] ** 2,
                (np.random.default_rng(9).standard_normal((3, 6)),), order=2,
                modes=("fwd", "rev"))
  values, idx = xjax.vmap(lambda a: lax.approx_max_k(a, 1), 1)(x)
  assert_same(values, np.array([[9], [2], [6], [5], [5]], np.float32))
  assert_same(idx, np.array([[1], [1], [1], [1], [0]], np.int32))
  header = "{ lambda ; a:f32[2,5]. let\n"
  params = ("      aggregate_to_topk=True\n      is_max_k={}\n      k=2\n"
            "      recall_target=0.95\n      reduction_dimension={}\n"
            "      reduction_input_size_override=-1\n    ] a\n")
  assert jaxpr_str(lambda a: lax.approx_max_k(a, 2), x) == (
      header + "    b:f32[2,2] c:i32[2,2] = approx_top_k[\n" + params.format(True, -1)
      + "  in (b, c) }")
  assert jaxpr_str(xjax.vmap(lambda a: lax.approx_max_k(a, 2)), x) == (
      header + "    b:f32[2,2] c:i32[2,2] = approx_top_k[\n" + params.format(True, 1)
      + "  in (b, c) }")
  assert jaxpr_str(xjax.vmap(lambda a: lax.approx_max_k(a, 2), 1), x) == (
      header + "    b:f32[2,5] c:i32[2,5] = approx_top_k[\n" + params.format(True, 0)
      + "    d:f32[5,2] = transpose[permutation=(1, 0)] b\n"
      "    e:i32[5,2] = transpose[permutation=(1, 0)] c\n  in (d, e) }")
  with pytest.raises(ValueError, match="k must be smaller than the size of reduction_dim 5, got 6"):
    lax.approx_max_k(x, 6)
  with pytest.raises(ValueError, match="k must be positive, got 0"):
    lax.approx_max_k(x, 0)
  with pytest.raises(IndexError):
    lax.approx_max_k(x, 2, reduction_dimension=2)
  with pytest.raises(TypeError, match=r"approx_top_k operand must have >= 1 dimension, got \(\)"):
    lax.approx_max_k(jnp.float32(1), 1)
  with pytest.raises(ValueError, match="operand must be a floating type"):
    lax.approx_max_k(x.astype(jnp.int32), 2)
  with pytest.raises(ValueError, match="recall_target"):
    lax.approx_max_k(x, 2, recall_target=1.5)
  with pytest.raises(ValueError, match="reduction_input_size_override"):
    lax.approx_max_k(x, 2, reduction_input_size_override=3)


# ----------------------------------------------------------------------------
# broadcast_like, padtype_to_pads, shape_as_value


def test_broadcast_like():
  assert_same(lax.broadcast_like(jnp.array([1, 2, 3]), jnp.zeros((2, 3))),
              np.array([[1, 2, 3], [1, 2, 3]], np.int32))
  out = lax.broadcast_like(1.0, jnp.ones(3, jnp.int32))
  assert out.dtype == np.float32 and out.weak_type and out.shape == (3,)
  x = jnp.ones((2, 3))
  assert jaxpr_str(lambda a: lax.broadcast_like(a[0], a), x) == (
      "{ lambda ; a:f32[2,3]. let\n"
      "    b:f32[1,3] = slice[limit_indices=(1, 3) start_indices=(0, 0) strides=None] a\n"
      "    c:f32[3] = squeeze[dimensions=(0,)] b\n"
      "    d:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(1,)] c\n  in (d,) }")
  assert jaxpr_str(lambda a, b: lax.broadcast_like(a, b), x, x) == (
      "{ lambda ; a:f32[2,3] b:f32[2,3]. let  in (a,) }")
  with pytest.raises(ValueError, match=r"Incompatible types for broadcasting: input "
                     r"type=float32\[3\] and requested type=float32\[2,4\]"):
    lax.broadcast_like(jnp.ones(3), jnp.ones((2, 4)))
  with pytest.raises(ValueError, match=r"Cannot broadcast to shape with fewer dimensions: "
                     r"arr_shape=\(2, 3\) shape=\(3,\)"):
    lax.broadcast_like(jnp.ones((2, 3)), jnp.ones((3,)))


def test_padtype_to_pads():
  assert lax.padtype_to_pads((5, 6), (2, 3), (1, 2), "SAME") == [(0, 1), (0, 1)]
  assert lax.padtype_to_pads((5, 6), (2, 3), (1, 2), "VALID") == [(0, 0), (0, 0)]
  assert lax.padtype_to_pads((5, 6), (2, 3), (1, 2), "SAME_LOWER") == [(1, 0), (1, 0)]
  assert lax.padtype_to_pads((5,), (7,), (3,), "same") == [(2, 3)]
  assert lax.padtype_to_pads((5,), (7,), (3,), "SAME_LOWER") == [(3, 2)]
  assert lax.padtype_to_pads((0,), (7,), (3,), "SAME") == [(2, 2)]
  assert lax.padtype_to_pads((5,), (2, 3), (1, 2), "SAME") == [(0, 1)]
  pads = lax.padtype_to_pads(np.array([5]), np.array([7]), np.array([3]), "SAME")
  assert pads == [(2, 3)] and type(pads[0][0]) is int
  with pytest.raises(RuntimeError, match="Unrecognized padding type: expected 'VALID', 'SAME', "
                     "or 'SAME_LOWER', got FOO."):
    lax.padtype_to_pads((5,), (2,), (1,), "FOO")


def test_shape_as_value():
  out = lax.shape_as_value((2, 3))
  assert type(out) is np.ndarray and out.dtype == np.int32 and out.tolist() == [2, 3]
  assert lax.shape_as_value((2**40,)).dtype == np.int64
  empty = lax.shape_as_value(())
  assert type(empty) is xjax.Array and empty.shape == (0,) and empty.dtype == np.int32
  assert jaxpr_str(lambda: lax.shape_as_value((2, 3))) == "{ lambda a:i32[2]; . let  in (a,) }"
  assert jaxpr_str(lambda: lax.shape_as_value(())) == (
      "{ lambda ; . let a:i32[0] = broadcast_in_dim 0:i32[] in (a,) }")


def test_stage_under_linearize_and_jit_of_vmap():
  # A staged constant is a constant of the outer program, not a linear input.
  out, f_lin = xjax.linearize(lambda a: a * lax.stage(3.0), 2.0)
  assert float(out) == 6.0 and float(f_lin(1.0)) == 3.0
  out = xjax.jit(xjax.vmap(lambda a: a + lax.stage(np.ones(2, np.float32))))(np.ones((3, 2),
                                                                                   np.float32))
  assert_same(out, np.full((3, 2), 2.0, np.float32))
