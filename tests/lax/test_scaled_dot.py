"""lax.scaled_dot: values against a NumPy reference (bfloat16 rounding of the
scaled operands, float64 contraction), eagerly and under jit, for float8 and
other dtypes, recorded JAX results, the printed jaxpr, the lowering, errors,
vmap, and the missing derivative rules.

The goldens and the jaxpr string were produced by JAX 0.10.2 on the same
programs.
"""
import warnings

import ml_dtypes
import numpy as np
import pytest

import xjax
from xjax import lax

bf16 = np.dtype(ml_dtypes.bfloat16)
e4m3 = np.dtype(ml_dtypes.float8_e4m3fn)
e5m2 = np.dtype(ml_dtypes.float8_e5m2)
e8m0 = np.dtype(ml_dtypes.float8_e8m0fnu)


def _default_dims(ndim):
  batch = tuple(range(ndim - 2))
  return ((ndim - 1,), (ndim - 2,)), (batch, batch)


def _to_bf16(x):
  x = np.asarray(x)
  if np.iscomplexobj(x):
    x = x.real
  return x.astype(np.float32).astype(bf16)


def _scaled(x, scale, contracting):
  """x * scale of bfloat16 factors, the scale repeated over its block of each contracting dim.

  The product stays float32: XLA on CPU does not round it to bfloat16 (nor does JAX's).
  """
  scale = np.asarray(scale).astype(np.float32)
  for d in contracting:
    scale = np.repeat(scale, x.shape[d] // scale.shape[d], axis=d)
  return _to_bf16(x).astype(np.float32) * _to_bf16(scale).astype(np.float32)


def ref_scaled_dot(lhs, rhs, lhs_scale=None, rhs_scale=None, dims=None, out=bf16):
  (lc, rc), (lb, rb) = dims or _default_dims(np.ndim(lhs))
  ones = lambda x, c: np.ones([1 if i in c else n for i, n in enumerate(np.shape(x))])
  x = _scaled(lhs, ones(lhs, lc) if lhs_scale is None else lhs_scale, lc).astype(np.float64)
  y = _scaled(rhs, ones(rhs, rc) if rhs_scale is None else rhs_scale, rc).astype(np.float64)
  lf = [d for d in range(x.ndim) if d not in lc and d not in lb]
  rf = [d for d in range(y.ndim) if d not in rc and d not in rb]
  x = np.transpose(x, [*lb, *lf, *lc])
  y = np.transpose(y, [*rb, *rc, *rf])
  bshape = x.shape[:len(lb)]
  lfs, rfs = x.shape[len(lb):len(lb) + len(lf)], y.shape[len(rb) + len(rc):]
  k = int(np.prod(x.shape[len(lb) + len(lf):]))
  r = np.matmul(x.reshape(*bshape, int(np.prod(lfs)), k), y.reshape(*bshape, k, int(np.prod(rfs))))
  return r.reshape(*bshape, *lfs, *rfs).astype(out)


RNG = np.random.default_rng(1)


def _operand(shape, dtype):
  x = RNG.normal(size=shape) * 2
  if np.dtype(dtype).kind in "iu":
    return np.round(x).astype(dtype)
  return x.astype(np.float32).astype(dtype)


def _scale(shape):
  return (2.0 ** RNG.integers(-4, 5, size=shape)).astype(np.float32).astype(e8m0)


def _check(result, expected):
  result = np.asarray(result)
  assert result.dtype == expected.dtype and result.shape == expected.shape
  tol = 2e-2 if expected.dtype in (bf16, np.float16) else 1e-5
  np.testing.assert_allclose(result.astype(np.float64), expected.astype(np.float64),
                             rtol=tol, atol=tol * np.abs(expected.astype(np.float64)).max(initial=0))


# (lhs shape, rhs shape, lhs scale shape, rhs scale shape, dimension numbers)
SHAPES = [
    ((3, 64), (64, 5), (3, 2), (2, 5), None),
    ((2, 3, 32), (2, 32, 4), (2, 3, 4), (2, 16, 4), None),
    ((2, 2, 3, 8), (2, 2, 8, 4), (2, 2, 3, 1), (2, 2, 2, 4), None),
    ((16, 3), (16, 5), (4, 3), (8, 5), (((0,), (0,)), ((), ()))),
    ((4, 2, 3, 8), (5, 8, 2, 3), (4, 2, 3, 2), (5, 4, 2, 3), (((3,), (1,)), ((1,), (2,)))),
    ((3, 8), (8, 0), (3, 4), (4, 0), None),
]


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("lhs_shape,rhs_shape,ls_shape,rs_shape,dims", SHAPES)
@pytest.mark.parametrize("out", [None, np.float32])
def test_values_float8(jit, lhs_shape, rhs_shape, ls_shape, rs_shape, dims, out):
  lhs, rhs = _operand(lhs_shape, e4m3), _operand(rhs_shape, e5m2)
  ls, rs = _scale(ls_shape), _scale(rs_shape)
  f = lambda *a: lax.scaled_dot(*a[:2], lhs_scale=a[2], rhs_scale=a[3], dimension_numbers=dims,
                                preferred_element_type=out)
  f = xjax.jit(f) if jit else f
  _check(f(lhs, rhs, ls, rs), ref_scaled_dot(lhs, rhs, ls, rs, dims, out or bf16))


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, bf16, np.float16, np.int8, np.int32, np.bool_,
                                   np.complex64, e4m3])
@pytest.mark.parametrize("out", [bf16, np.float32, np.float16])
def test_dtypes_and_default_scales(jit, dtype, out):
  lhs, rhs = _operand((2, 3, 6), dtype), _operand((2, 6, 4), dtype)
  if dtype == np.complex64:
    lhs = lhs + 1j * _operand(lhs.shape, np.float32)
  f = lambda x, y: lax.scaled_dot(x, y, preferred_element_type=out)
  f = xjax.jit(f) if jit else f
  _check(f(lhs, rhs), ref_scaled_dot(lhs, rhs, out=np.dtype(out)))


def test_scales_of_other_dtypes_and_bf16_rounding():
  # Operands and scales are rounded to bfloat16 before the multiplication; on CPU
  # their product (3 * (1 + 2**-7)) is not rounded again, as in JAX 0.10.2.
  lhs = np.array([[1 + 2 ** -9, 1, 3, 1 + 2 ** -7]], np.float32)
  rhs = np.ones((4, 1), np.float32)
  ls = np.array([[1 + 2 ** -10, 3.0]], np.float32)
  r = lax.scaled_dot(lhs, rhs, lhs_scale=ls, preferred_element_type=np.float32)
  np.testing.assert_array_equal(r, np.array([[1 + 1 + 9 + 3 * (1 + 2 ** -7)]], np.float32))
  assert r.dtype == np.float32


def test_integer_result():
  lhs = np.array([[1, 2, 3, 4]], np.float32).astype(e4m3)
  rhs = np.array([[1], [1], [2], [2]], np.float32).astype(e4m3)
  ls = np.array([[2.0, 0.5]], np.float32).astype(e8m0)
  r = lax.scaled_dot(lhs, rhs, lhs_scale=ls, preferred_element_type=np.int32)
  assert r.dtype == np.int32
  np.testing.assert_array_equal(r, [[2 + 4 + 3 + 4]])


def _golden_inputs():
  # The programs JAX 0.10.2 ran for the goldens below.
  rng = np.random.default_rng(0)
  a = rng.normal(size=(2, 64)).astype(e4m3)
  b = rng.normal(size=(64, 3)).astype(e4m3)
  sa = (2.0 ** rng.integers(-3, 4, size=(2, 2))).astype(e8m0)
  sb = (2.0 ** rng.integers(-3, 4, size=(2, 3))).astype(e8m0)
  c = rng.normal(size=(3, 8)).astype(e5m2)
  d = rng.normal(size=(8, 2)).astype(e5m2)
  p = rng.normal(size=(8, 3)).astype(np.float32)
  q = rng.normal(size=(8, 5)).astype(np.float32)
  u = rng.normal(size=(2, 1, 3, 8)).astype(e4m3)
  v = rng.normal(size=(2, 1, 8, 2)).astype(e4m3)
  su = (2.0 ** rng.integers(-2, 3, size=(2, 1, 3, 2))).astype(e8m0)
  sv = (2.0 ** rng.integers(-2, 3, size=(4, 2, 2))).astype(e8m0)
  return dict(a=a, b=b, sa=sa, sb=sb, c=c, d=d, p=p, q=q, u=u, v=v, su=su, sv=sv)


def _golden_programs():
  g = _golden_inputs()
  f32, sd = np.float32, lax.scaled_dot
  x = (1 + np.arange(48).reshape(2, 3, 8) / 256).astype(f32)
  y = (1 - np.arange(32).reshape(2, 8, 2) / 512).astype(f32)
  z = (np.arange(8).reshape(2, 4) + 1j * np.arange(8).reshape(2, 4)[::-1]).astype(np.complex64)
  sc = np.array([[4, 2], [1, 8], [.5, .25]], f32).astype(e8m0)
  return {
      "A": lambda: sd(g["a"], g["b"], lhs_scale=g["sa"], rhs_scale=g["sb"],
                      preferred_element_type=f32),
      "A_bf16": lambda: xjax.jit(lambda *s: sd(s[0], s[1], lhs_scale=s[2], rhs_scale=s[3]))(
          g["a"], g["b"], g["sa"], g["sb"]),
      "B": lambda: sd(x, y),
      "B_f32": lambda: sd(x, y, preferred_element_type=f32),
      "C_i32": lambda: sd(g["c"], g["d"], lhs_scale=sc,
                          rhs_scale=np.full((2, 2), 4., f32).astype(e8m0),
                          preferred_element_type=np.int32),
      "D": lambda: sd(z, np.ones((4, 2), f32), preferred_element_type=f32),
      "G": lambda: sd(g["p"], g["q"], rhs_scale=np.arange(1, 11, dtype=f32).reshape(2, 5),
                      dimension_numbers=(((0,), (0,)), ((), ())), preferred_element_type=f32),
      "F": lambda: sd(g["u"], g["v"], lhs_scale=g["su"], preferred_element_type=f32),
      "V": lambda: xjax.vmap(lambda s: sd(g["a"][:, :4], g["b"][:4, :2], lhs_scale=s,
                                          preferred_element_type=f32))(g["sv"]),
  }


GOLDENS = {
    "A": ("float32", [[-8.990234375, -1.485443115234375, -26.459716796875],
                      [-36.403076171875, 0.5236358642578125, 7.174560546875]]),
    "A_bf16": ("bfloat16", [[-9.0, -1.484375, -26.5], [-36.5, 0.5234375, 7.1875]]),
    "B": ("bfloat16", [[[8.0, 7.96875], [8.25, 8.25], [8.5, 8.5]],
                       [[8.4375, 8.4375], [8.6875, 8.6875], [8.9375, 8.9375]]]),
    "B_f32": ("float32", [[[7.997802734375, 7.98193359375], [8.244384765625, 8.22802734375],
                           [8.490966796875, 8.47412109375]],
                          [[8.460693359375, 8.443359375], [8.699462890625, 8.681640625],
                           [8.938232421875, 8.919921875]]]),
    "C_i32": ("int32", [[-5, -31], [-63, -117], [4, -3]]),
    "D": ("float32", [[6.0, 6.0], [22.0, 22.0]]),
    "G": ("float32", [[-6.290373802185059, -3.4134788513183594, 21.173873901367188,
                       -5.638515472412109, -43.920928955078125],
                      [1.4186820983886719, 6.7355804443359375, 11.082006454467773,
                       -28.44133758544922, -15.960931777954102],
                      [-7.959499359130859, 6.642333984375, 19.02777099609375,
                       -17.315704345703125, -37.511940002441406]]),
    "F": ("float32", [[[[-1.059326171875, 2.82421875], [-0.626953125, -1.701171875],
                        [-0.322967529296875, -5.688385009765625]]],
                      [[[-0.0458984375, -3.0528564453125], [3.412109375, -4.78662109375],
                        [3.8017578125, -4.93115234375]]]]),
    "V": ("float32", [[[0.0001220703125, 0.1142578125], [2.52197265625, -3.796875]],
                      [[-0.105224609375, 0.060546875], [5.966796875, -6.08984375]],
                      [[-0.21044921875, 0.12109375], [5.966796875, -6.08984375]],
                      [[-0.0526123046875, 0.0302734375], [-0.14617919921875, -1.2265625]]]),
}


@pytest.mark.parametrize("name", sorted(GOLDENS))
def test_matches_jax_goldens(name):
  dtype, expected = GOLDENS[name]
  r = _golden_programs()[name]()
  assert str(r.dtype) == dtype
  np.testing.assert_array_equal(np.asarray(r).astype(np.float64), np.array(expected))


JAXPR_DEFAULT_SCALES = """\
{ lambda ; a:f32[2,4] b:f32[4,3]. let
    c:bf16[2,1] = broadcast_in_dim 1.0:bf16[]
    d:f8_e8m0fnu[2,1] = convert_element_type[
      new_dtype=float8_e8m0fnu
      weak_type=False
    ] c
    e:bf16[1,3] = broadcast_in_dim 1.0:bf16[]
    f:f8_e8m0fnu[1,3] = convert_element_type[
      new_dtype=float8_e8m0fnu
      weak_type=False
    ] e
    g:bf16[2,3] = scaled_dot[
      dimension_numbers=(((1,), (0,)), ((), ()))
      preferred_element_type=bfloat16
    ] a b d f
  in (g,) }"""

JAXPR_SCALES_3D = """\
{ lambda ; a:f8_e4m3fn[2,3,64] b:f8_e4m3fn[2,64,5] c:f8_e8m0fnu[2,3,2] d:f8_e8m0fnu[2,2,5]. let
    e:f32[2,3,5] = scaled_dot[
      dimension_numbers=(((2,), (1,)), ((0,), (0,)))
      preferred_element_type=float32
    ] a b c d
  in (e,) }"""


def test_printed_jaxprs():
  x, y = np.ones((2, 4), np.float32), np.ones((4, 3), np.float32)
  assert str(xjax.make_jaxpr(lambda a, b: lax.scaled_dot(a, b))(x, y)) == JAXPR_DEFAULT_SCALES
  args = (np.ones((2, 3, 64), e4m3), np.ones((2, 64, 5), e4m3), np.ones((2, 3, 2), e8m0),
          np.ones((2, 2, 5), e8m0))
  f = lambda a, b, c, d: lax.scaled_dot(a, b, lhs_scale=c, rhs_scale=d,
                                        preferred_element_type=np.float32)
  assert str(xjax.make_jaxpr(f)(*args)) == JAXPR_SCALES_3D


def test_lowers_to_a_composite():
  args = (np.ones((2, 4), np.float32), np.ones((4, 3), np.float32),
          np.ones((2, 2), e8m0), np.ones((2, 3), e8m0))
  f = lambda a, b, c, d: lax.scaled_dot(a, b, lhs_scale=c, rhs_scale=d,
                                        preferred_element_type=np.float32)
  text = xjax.jit(f).lower(*args).compiler_ir()
  assert '"stablehlo.composite"' in text and 'name = "xla.scaled_dot"' in text
  assert "dimension_numbers = [[[1], [0]], [[], []]], preferred_element_type = f32" in text
  assert "tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xf32>" in text  # the bf16 dot


def test_float64_request_warns_and_truncates():
  with pytest.warns(UserWarning, match="requested in scaled_dot is not available"):
    r = lax.scaled_dot(np.ones((2, 4), np.float32), np.ones((4, 3), np.float32),
                       preferred_element_type=np.float64)
  assert r.dtype == np.float32


def test_tracer_operands_and_numpy_inputs():
  x, y = _operand((3, 8), np.float32), _operand((8, 2), np.float32)
  s = _scale((3, 2))
  r = xjax.jit(lambda x, s: lax.scaled_dot(x, y, lhs_scale=s))(x, s)
  _check(r, ref_scaled_dot(x, y, s))


a24, b43 = np.ones((2, 4), np.float32), np.ones((4, 3), np.float32)


@pytest.mark.parametrize("args,kwargs,exc,msg", [
    ((np.ones(4), np.ones(4)), {}, TypeError,
     "scaled_dot does not support 0-rank and 1-rank operands."),
    ((np.ones(()), np.ones(())), {}, TypeError, "does not support 0-rank"),
    ((a24, np.ones((1, 4, 3))), {}, TypeError,
     "All input tensors must have the same rank. Got lhs rank: 2 rhs rank: 3 lhs_scale "
     "rank: 2 rhs_scale rank: 3."),
    ((a24, b43), dict(lhs_scale=np.ones((2, 2, 1))), TypeError,
     "Got lhs rank: 2 rhs rank: 2 lhs_scale rank: 3 rhs_scale rank: 2."),
    ((a24, np.ones((5, 3))), {}, TypeError,
     "LHS contracting dim 1 of size 4 does not match RHS contracting dim 0 of size 5."),
    ((a24, b43), dict(lhs_scale=np.ones((2, 3))), TypeError,
     "LHS contracting dim 1 of size 4 must be divisible by its scale's dim size 3."),
    ((a24, b43), dict(lhs_scale=np.ones((2, 4))), TypeError,
     r"The ratio of LHS contracting dim 1 to its scale's dim size \(1\) must be at least 2."),
    ((a24, b43), dict(lhs_scale=np.ones((3, 2))), TypeError,
     "LHS dim 0 of size 2 does not match scale dim size 3."),
    ((a24, b43), dict(rhs_scale=np.ones((2, 2))), TypeError,
     "RHS dim 1 of size 3 does not match scale dim size 2."),
    ((np.ones((2, 2, 4)), np.ones((3, 4, 3))), {}, TypeError,
     r"All input tensors must have the same batch dimension size for batch dims \(0, 0\)."),
    ((a24, b43), dict(dimension_numbers=(((1,), (0,)), ((0,), ()))), TypeError,
     "LHS and RHS must have the same number of batch dimensions, got 1 and 0."),
    ((a24, b43), dict(dimension_numbers=(((1,), (0, 1)), ((), ()))), TypeError,
     "LHS and RHS must have the same number of contracting dimensions, got 1 and 2."),
    ((np.ones((2, 0)), np.ones((0, 3))), {}, TypeError,
     r"The ratio of LHS contracting dim 1 to its scale's dim size \(0\) must be at least 2."),
    ((a24, b43), dict(preferred_element_type="foo"), TypeError, "data type 'foo' not understood"),
    (([[1.0, 2.0]], [[1.0], [2.0]]), {}, AttributeError, "ndim"),
    ((a24, b43), dict(dimension_numbers=(((3,), (0,)), ((), ()))), IndexError, "index out of range"),
])
def test_errors(args, kwargs, exc, msg):
  with pytest.raises(exc, match=msg):
    lax.scaled_dot(*args, **kwargs)
  if exc is TypeError and "not understood" not in msg and "0-rank" not in msg:
    with pytest.raises(exc, match=msg):  # the same check when traced
      xjax.jit(lambda *a: lax.scaled_dot(*a, **kwargs))(*args)


@pytest.mark.parametrize("in_axes", [(0, None, None, None), (None, 1, None, None),
                                     (None, None, 2, None), (1, 0, 0, 1), (2, None, 1, 0)])
@pytest.mark.parametrize("jit", [False, True])
def test_vmap(in_axes, jit):
  n = 3
  base = [(2, 8), (8, 4), (2, 2), (4, 4)]
  shapes = [s if ax is None else (*s[:ax], n, *s[ax:]) for s, ax in zip(base, in_axes)]
  lhs, rhs = _operand(shapes[0], e4m3), _operand(shapes[1], e4m3)
  ls, rs = _scale(shapes[2]), _scale(shapes[3])
  f = lambda *a: lax.scaled_dot(a[0], a[1], lhs_scale=a[2], rhs_scale=a[3],
                                preferred_element_type=np.float32)
  g = xjax.vmap(f, in_axes=in_axes)
  g = xjax.jit(g) if jit else g
  out = g(lhs, rhs, ls, rs)
  take = lambda x, ax, i: x if ax is None else np.take(x, i, axis=ax)
  expected = np.stack([
      ref_scaled_dot(*[take(x, ax, i) for x, ax in zip((lhs, rhs, ls, rs), in_axes)],
                     out=np.float32) for i in range(n)])
  _check(out, expected)


def test_vmap_of_batched_dot_prints_a_new_batch_dim():
  x, y = np.ones((5, 2, 3, 8), np.float32), np.ones((2, 8, 4), np.float32)
  jaxpr = xjax.make_jaxpr(xjax.vmap(lambda a: lax.scaled_dot(a, y)))(x)
  assert "dimension_numbers=(((3,), (2,)), ((0, 1), (0, 1)))" in str(jaxpr)
  _check(xjax.vmap(lambda a: lax.scaled_dot(a, y))(x),
         np.stack([ref_scaled_dot(x[i], y) for i in range(5)]))


@pytest.mark.parametrize("transform", [
    lambda f, x: xjax.grad(lambda x: f(x).sum())(x),
    lambda f, x: xjax.jvp(f, (x,), (x,)),
    lambda f, x: xjax.linearize(f, x),
    lambda f, x: xjax.vjp(f, x),
])
def test_not_differentiable(transform):
  y = np.ones((4, 3), np.float32)
  f = lambda x: lax.scaled_dot(x, y, preferred_element_type=np.float32)
  with pytest.raises(NotImplementedError, match="Differentiation rule for 'scaled_dot'"):
    transform(f, np.ones((2, 4), np.float32))
