"""custom_linear_solve, custom_root, composite and dot algorithms, against NumPy references.

Printed jaxprs are compared with text recorded from real JAX 0.10.2.
"""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax

A = np.array([[4.0, 1, 0.5], [2, 5, 1], [0.3, 1, 3]], np.float32)
B = np.array([1.0, 2.0, 3.0], np.float32)


def _jacobi(matvec, b, diag):
  return lax.fori_loop(0, 200, lambda i, x: x + (b - matvec(x)) / diag, jnp.zeros_like(b))


def solve_a(a, b):
  diag = (a * jnp.eye(3)).sum(1)
  return lax.custom_linear_solve(lambda x: a @ x, b, lambda m, y: _jacobi(m, y, diag),
                                 lambda m, y: _jacobi(m, y, diag))


def _loss_ref(a, b):
  return (np.linalg.solve(a, b) ** 2).sum()


def _numeric_grads(a, b, eps=1e-4):
  a, b = a.astype(np.float64), b.astype(np.float64)
  gb = np.array([(_loss_ref(a, b + eps * e) - _loss_ref(a, b - eps * e)) / (2 * eps)
                 for e in np.eye(3)])
  ga = np.array([[(_loss_ref(a + eps * np.outer(e, f), b) - _loss_ref(a - eps * np.outer(e, f), b))
                  / (2 * eps) for f in np.eye(3)] for e in np.eye(3)])
  return ga, gb


def test_custom_linear_solve_matches_numpy_eager_and_jit():
  ref = np.linalg.solve(A, B)
  np.testing.assert_allclose(solve_a(A, B), ref, rtol=1e-5)
  np.testing.assert_allclose(xjax.jit(solve_a)(A, B), ref, rtol=1e-5)


def test_custom_linear_solve_grad_matches_finite_differences():
  ga, gb = xjax.grad(lambda a, b: (solve_a(a, b) ** 2).sum(), (0, 1))(A, B)
  nga, ngb = _numeric_grads(A, B)
  np.testing.assert_allclose(gb, ngb, rtol=1e-3, atol=1e-5)
  np.testing.assert_allclose(ga, nga, rtol=1e-3, atol=1e-5)
  jit_ga = xjax.jit(xjax.grad(lambda a, b: (solve_a(a, b) ** 2).sum()))(A, B)
  np.testing.assert_allclose(jit_ga, nga, rtol=1e-3, atol=1e-5)


def test_custom_linear_solve_jvp_matches_numpy():
  da = np.full((3, 3), 0.1, np.float32)
  db = np.array([1.0, 0, -1], np.float32)
  _, t = xjax.jvp(solve_a, (A, B), (da, db))
  x = np.linalg.solve(A.astype(np.float64), B)
  expected = np.linalg.solve(A.astype(np.float64), db - da @ x)
  np.testing.assert_allclose(t, expected, rtol=1e-4, atol=1e-6)


def test_custom_linear_solve_vmap():
  a2 = np.stack([A, 2 * A])
  b2 = np.stack([B, B + 1])
  out = xjax.vmap(solve_a)(a2, b2)
  np.testing.assert_allclose(out, np.stack([np.linalg.solve(a, b) for a, b in zip(a2, b2)]),
                             rtol=1e-5)
  out = xjax.vmap(solve_a, (None, 0))(A, b2)
  np.testing.assert_allclose(out, np.linalg.solve(A, b2.T).T, rtol=1e-5)


def test_custom_linear_solve_pytree_and_aux():
  def f(b):
    return lax.custom_linear_solve(lambda x: {"u": 2 * x["u"], "v": 4 * x["v"]}, b,
                                   lambda m, y: ({"u": y["u"] / 2, "v": y["v"] / 4}, jnp.int32(7)),
                                   symmetric=True, has_aux=True)
  b = {"u": B, "v": B[:2]}
  x, aux = f(b)
  np.testing.assert_allclose(x["u"], B / 2)
  np.testing.assert_allclose(x["v"], B[:2] / 4)
  assert int(aux) == 7
  g = xjax.grad(lambda b: f(b)[0]["u"].sum() + f(b)[0]["v"].sum())(b)
  np.testing.assert_allclose(g["u"], np.full(3, 0.5))
  np.testing.assert_allclose(g["v"], np.full(2, 0.25))


def test_custom_linear_solve_errors():
  with pytest.raises(TypeError, match="matvec\\(\\) output pytree structure must match b"):
    lax.custom_linear_solve(lambda x: [x], B, lambda m, y: y)
  with pytest.raises(ValueError, match="pytree tuple with auxiliary output was expected"):
    lax.custom_linear_solve(lambda x: x, B, lambda m, y: y, has_aux=True)
  f = lambda b: lax.custom_linear_solve(lambda x: 2 * x, b, lambda m, y: y / 2).sum()
  with pytest.raises(TypeError, match="transpose_solve required for backwards mode"):
    xjax.grad(f)(B)
  # Forward mode needs no transpose_solve.
  np.testing.assert_allclose(xjax.jvp(f, (B,), (B,))[1], B.sum() / 2)
  # Shapes are checked as JAX does: ValueError, only shapes (not dtypes), before structure.
  with pytest.raises(ValueError, match=r"solve\(\) output shapes must match b, got \[\(2,\)\] "
                     r"and \[\(\)\]"):
    lax.custom_linear_solve(lambda x: x, 1.0, lambda m, y: jnp.ones(2), lambda m, y: y)
  with pytest.raises(ValueError, match=r"matvec\(\) output shapes"):
    xjax.jvp(lambda a: lax.custom_linear_solve(lambda x: a * jnp.ones(2), 1.0,
                                               lambda m, y: y), (1.0,), (1.0,))
  with pytest.raises(ValueError, match=r"transpose_solve\(\) output shapes"):
    lax.custom_linear_solve(lambda x: x, B, lambda m, y: y, lambda m, y: y[:2])


def test_custom_linear_solve_jaxpr_matches_jax():
  def f(b):
    return lax.custom_linear_solve(lambda x: x * 2.0, b, lambda m, b: b / 2.0, symmetric=True)
  expected = """{ lambda ; a:f32[2]. let
    b:f32[2] = custom_linear_solve[
      const_lengths=_LinearSolveTuple(matvec=0, vecmat=0, solve=0, transpose_solve=0)
      jaxprs=_LinearSolveTuple(matvec={ lambda ; a:f32[2]. let b:f32[2] = mul a 2.0:f32[] in (b,) }, vecmat={ lambda ; a:f32[2]. let b:f32[2] = mul a 2.0:f32[] in (b,) }, solve={ lambda ; a:f32[2]. let b:f32[2] = div a 2.0:f32[] in (b,) }, transpose_solve={ lambda ; a:f32[2]. let b:f32[2] = div a 2.0:f32[] in (b,) })
    ] a
  in (b,) }"""
  text = str(xjax.make_jaxpr(f)(np.ones(2, np.float32)))
  body = text[text.index("custom_linear_solve["):]
  assert body.split("\n")[1:3] == expected.split("\n")[2:4]


def _sqrt_root(a):
  f = lambda x: x ** 2 - a
  def solve(f, x0):
    return lax.while_loop(lambda x: jnp.abs(f(x)) > 1e-6, lambda x: x - f(x) / (2 * x), x0)
  return lax.custom_root(f, 1.0, solve, lambda g, y: y / g(1.0))


def test_custom_root_value_grad_vmap():
  np.testing.assert_allclose(_sqrt_root(2.0), np.sqrt(2.0), rtol=1e-6)
  np.testing.assert_allclose(xjax.grad(_sqrt_root)(2.0), 0.5 / np.sqrt(2.0), rtol=1e-5)
  np.testing.assert_allclose(xjax.jit(xjax.grad(_sqrt_root))(9.0), 1 / 6, rtol=1e-5)
  a = np.array([2.0, 9.0, 16.0], np.float32)
  np.testing.assert_allclose(xjax.vmap(_sqrt_root)(a), np.sqrt(a), rtol=1e-6)
  np.testing.assert_allclose(xjax.vmap(xjax.grad(_sqrt_root))(a), 0.5 / np.sqrt(a), rtol=1e-5)


def test_custom_root_jaxpr_is_a_custom_jvp_call():
  text = str(xjax.make_jaxpr(_sqrt_root)(2.0))
  assert "custom_jvp_call[\n      name=_custom_root\n" in text
  assert "jvp=_root_jvp" in text
  assert text.strip().endswith("] a a a 1.0:f32[]\n  in (b,) }")


def test_custom_root_errors():
  with pytest.raises(TypeError, match="f\\(\\) output pytree structure must match initial_guess"):
    lax.custom_root(lambda x: (x, x), 1.0, lambda f, x: x, lambda g, y: y)


# ----------------------------------------------------------------------------
# composite


def test_composite_evaluates_and_prints_like_jax():
  scale = lax.composite(lambda x, scale: x * scale, name="my.scale", version=1)
  x = np.arange(3, dtype=np.float32)
  np.testing.assert_allclose(scale(x, scale=np.float32(2.0)), 2 * x)
  np.testing.assert_allclose(xjax.jit(lambda x: scale(x, scale=np.float32(2.0)))(x), 2 * x)
  expected = """{ lambda ; a:f32[3]. let
    b:f32[3] = composite[
      attributes=(('scale', (np.float32(2.0),), PyTreeDef(*)),)
      jaxpr={ lambda ; c:f32[3]. let d:f32[3] = mul c 2.0:f32[] in (d,) }
      name=my.scale
      version=1
    ] a
  in (b,) }"""
  assert str(xjax.make_jaxpr(lambda x: scale(x, scale=np.float32(2.0)))(x)) == expected


def test_composite_lowering_and_attributes():
  from xjax._src import api
  two = lax.composite(lambda x, y, s, n, v, f: (x * y, x + 1), name="my.two")
  kwargs = dict(s="abc", n=3, v=np.arange(3.0, dtype=np.float32), f=1.5)
  out = xjax.jit(lambda x: two(x, x, **kwargs))(np.full(3, 2.0, np.float32))
  np.testing.assert_allclose(out[0], np.full(3, 4.0))
  np.testing.assert_allclose(out[1], np.full(3, 3.0))
  text = xjax.jit(lambda x: two(x, x, **kwargs)).lower(np.ones(3, np.float32)).as_text()
  assert 'stablehlo.composite' in text and '"my.two"' in text
  assert 'composite_attributes = {f = 1.500000e+00 : f64, n = 3 : i64, s = "abc", v = ' in text
  assert ": tensor<3xf32>}" in text and "decomposition = @" in text
  del api


def test_composite_has_no_jvp_or_batching_as_in_jax():
  scale = lax.composite(lambda x: x * 2, name="my.double")
  with pytest.raises(ValueError, match="JVP rule for composite not implemented"):
    xjax.grad(lambda x: scale(x).sum())(np.ones(3, np.float32))
  with pytest.raises(NotImplementedError, match="Batching rule for 'composite'"):
    xjax.vmap(scale)(np.ones((2, 3), np.float32))


# ----------------------------------------------------------------------------
# Dot algorithms

CPU_OK = ["DEFAULT", "F16_F16_F16", "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6",
          "F32_F32_F32", "F64_F64_F64"]
X = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
Y = np.arange(12, dtype=np.float32).reshape(3, 4) / 5


def test_preset_members_are_jax_s():
  assert [p.name for p in lax.DotAlgorithmPreset] == [
      "DEFAULT", "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
      "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
      "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
      "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64"]
  assert repr(lax.DotAlgorithmPreset.F32_F32_F32) == "DotAlgorithmPreset.F32_F32_F32"
  assert lax.DotAlgorithmPreset.F16_F16_F32.accumulation_type is np.float32
  assert lax.DotAlgorithmPreset.DEFAULT.supported_lhs_types is None


@pytest.mark.parametrize("name", CPU_OK)
def test_cpu_presets_compute_the_product(name):
  tol = 1e-2 if name in ("F16_F16_F16", "BF16_BF16_F32") else 1e-5
  for precision in (name, lax.DotAlgorithmPreset[name]):
    out = xjax.jit(lambda a, b: lax.dot(a, b, precision=precision))(X, Y)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, X @ Y, rtol=tol, atol=tol)
  np.testing.assert_allclose(lax.dot(X, Y, precision=name), X @ Y, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(set(lax.DotAlgorithmPreset.__members__) - set(CPU_OK)))
def test_unsupported_presets_raise_jax_error_on_cpu(name):
  with pytest.raises(ValueError, match=f"The precision '{name}' is not supported by "
                                       "dot_general on CPU"):
    xjax.jit(lambda a, b: lax.dot(a, b, precision=name))(X, Y)


def test_preset_jaxpr_and_lowering_match_jax():
  expected = """{ lambda ; a:f32[2,3] b:f32[3,4]. let
    c:f32[2,4] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=F32_F32_F32
    ] a b
  in (c,) }"""
  assert str(xjax.make_jaxpr(lambda a, b: lax.dot(a, b, precision="F32_F32_F32"))(X, Y)) == expected
  text = xjax.jit(lambda a, b: lax.dot(a, b, precision="F16_F16_F16")).lower(X, Y).as_text()
  assert "lhs_precision_type = f16, rhs_precision_type = f16, accumulation_type = f16" in text
  assert text.count("stablehlo.convert") == 3


def test_dot_algorithm_and_grad_vmap():
  algo = lax.DotAlgorithm(np.float32, np.float32, np.float32)
  np.testing.assert_allclose(lax.dot(X, Y, precision=algo), X @ Y, rtol=1e-6)
  g = xjax.grad(lambda a: lax.dot(a, Y, precision="BF16_BF16_F32_X6").sum())(X)
  np.testing.assert_allclose(g, np.broadcast_to(Y.sum(1), X.shape), rtol=1e-5)
  out = xjax.vmap(lambda a: lax.dot(a, Y, precision="F32_F32_F32"))(np.stack([X, 2 * X]))
  np.testing.assert_allclose(out, np.stack([X @ Y, 2 * X @ Y]), rtol=1e-5)
  ints = np.ones((2, 2), np.int32)
  np.testing.assert_array_equal(lax.dot(ints, ints, precision="F32_F32_F32"), ints @ ints)


def test_accuracy_classes():
  assert [m.name for m in lax.AccuracyMode] == ["HIGHEST", "DEFAULT"]
  t = lax.Tolerance(atol=1e-3, ulps=2)
  assert (t.atol, t.rtol, t.ulps) == (1e-3, 0.0, 2)
  with pytest.raises(ValueError, match="At least one of atol, rtol, or ulps must be set"):
    lax.Tolerance()
  with pytest.raises(ValueError, match="Tolerances must be non-negative"):
    lax.Tolerance(atol=-1.0)
  np.testing.assert_allclose(lax.exp(np.float32(1.0), accuracy=lax.AccuracyMode.HIGHEST),
                             np.e, rtol=1e-6)
