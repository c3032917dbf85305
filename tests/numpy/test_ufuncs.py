"""Elementwise jnp functions against NumPy: values, dtypes and weak types, eager and under jit.

Also JAX's printed forms (inline functions vanish into their primitives,
non-inline ones print as nested ``jit[name=...]``) and error messages.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import xjax
import xjax.numpy as jnp
from xjax._src.config import enable_x64
from jnp_checks import ALL_DTYPES, SHAPES, bf16, check, rand

UNARY_INEXACT = ["sin", "cos", "tan", "arctan", "sinh", "cosh", "tanh", "arcsinh", "exp", "exp2",
                 "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt", "deg2rad", "rad2deg",
                 "reciprocal", "arcsin", "arccos", "arctanh", "arccosh"]
POSITIVE_ONLY = {"log", "log1p", "log2", "log10", "sqrt", "arccosh", "reciprocal"}
UNIT_INTERVAL = {"arcsin", "arccos", "arctanh"}


def _domain(rng, name, shape, dtype):
  kind = np.dtype(dtype).kind
  if name in POSITIVE_ONLY and kind != "c":
    x = rand(rng, shape, dtype, 0.5, 3.0) if kind not in "iub" else \
        rng.integers(1, 5, size=shape).astype(dtype)
    return x + 1 if name == "arccosh" else x
  if name in UNIT_INTERVAL and kind in "iu":  # the integers in the domain (+-1: +-inf for arctanh)
    return rng.integers(0 if kind == "u" else -1, 2, size=shape).astype(dtype)
  if name in UNIT_INTERVAL and kind != "c":
    return rand(rng, shape, dtype, -0.9, 0.9)
  return rand(rng, shape, dtype)


def _on_float32(np_fun):
  """np_fun on integer operands converted to float32 first, as JAX's inexact-only functions do."""
  def ref(*args):
    with np.errstate(divide="ignore", invalid="ignore"):  # arctanh(1), 0 ** -1: inf
      return np_fun(*[a.astype(np.float32) if a.dtype.kind in "iub" else a for a in args])
  return ref


_COMPLEX_SCALINGS = {"deg2rad": np.float32(np.pi / 180), "rad2deg": np.float32(180 / np.pi)}


@pytest.mark.parametrize("name", UNARY_INEXACT)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, bf16, np.complex64])
def test_unary_inexact_matches_numpy(rng, name, dtype):
  x = _domain(rng, name, (2, 3), dtype)
  if dtype == np.complex64 and name == "cbrt":  # real-only, in JAX too
    with pytest.raises(TypeError, match="cbrt does not accept dtype complex64. Accepted dtypes "
                                        "are subtypes of floating."):
      jnp.cbrt(x)
    return
  if dtype == np.complex64 and name in _COMPLEX_SCALINGS:  # NumPy's take no complex input
    check(getattr(jnp, name), lambda z: z * _COMPLEX_SCALINGS[name], x, dtype=dtype, tol=1e-5)
    return
  # JAX gives integers float32 (NumPy: float64 for int32, float16 for uint8).
  out_dtype = np.float32 if np.dtype(dtype).kind in "iu" else dtype
  tol = 3e-2 if dtype == bf16 else (1e-4 if dtype == np.complex64 else 2e-5)
  # Integers are promoted to float before the function applies (NumPy's reciprocal would not).
  check(getattr(jnp, name), _on_float32(getattr(np, name)), x, dtype=out_dtype, tol=tol)


@pytest.mark.parametrize("shape", SHAPES)
def test_unary_edge_shapes(rng, shape):
  x = rand(rng, shape, np.float32)
  check(jnp.sin, np.sin, x)
  check(jnp.negative, np.negative, x)
  check(jnp.isnan, np.isnan, x)


UNARY_NUMERIC = ["negative", "positive", "sign", "square", "absolute", "floor", "ceil", "trunc",
                 "rint", "isnan", "isinf", "isfinite", "signbit", "conjugate", "real", "imag",
                 "logical_not", "fabs"]


COMPLEX_REJECTED = {"floor": TypeError, "ceil": TypeError, "trunc": TypeError,
                    "fabs": TypeError, "signbit": ValueError}


@pytest.mark.parametrize("name", UNARY_NUMERIC)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_unary_numeric_matches_numpy(rng, name, dtype):
  dtype = np.dtype(dtype)
  x = rand(rng, (2, 3), dtype)
  if dtype == np.bool_ and name in ("negative", "sign"):
    with pytest.raises(TypeError):
      getattr(jnp, name)(x)
    return
  if dtype == np.bool_ and name in ("positive", "conjugate", "signbit", "fabs"):
    # JAX: identity for bool, signbit all False, fabs of the float conversion.
    bool_refs = {"positive": lambda a: a, "conjugate": lambda a: a,
                 "signbit": lambda a: np.zeros_like(a), "fabs": lambda a: a.astype(np.float32)}
    check(getattr(jnp, name), bool_refs[name], x)
    return
  if dtype.kind == "c" and name in COMPLEX_REJECTED:
    # JAX 0.10.2: floor, ceil, trunc and fabs raise TypeError; signbit ValueError.
    with pytest.raises(COMPLEX_REJECTED[name]):
      getattr(jnp, name)(x)
    return
  np_name = {"absolute": "abs"}.get(name, name)
  np_fun = getattr(np, np_name)
  expected_dtype = None
  if dtype == bf16:
    expected_dtype = np.bool_ if name in ("isnan", "isinf", "isfinite", "signbit",
                                          "logical_not") else bf16
  if name in ("floor", "ceil", "trunc") and dtype.kind in "iub":
    expected_dtype = dtype  # JAX returns integers unchanged; NumPy too (but bool becomes bool)
  if name == "rint" and dtype.kind in "iub":
    expected_dtype = np.float32
  if name == "square" and dtype == np.bool_:
    expected_dtype, np_fun = np.int32, lambda a: np.square(a.astype(np.int32))
  if name == "fabs" and dtype.kind in "iu":
    expected_dtype = np.float32
  if name in ("real", "imag") and dtype.kind == "c":
    expected_dtype = np.float32
  check(getattr(jnp, name), np_fun, x, dtype=expected_dtype, tol=2e-2 if dtype == bf16 else None)


BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "equal", "not_equal",
          "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
          "logical_xor", "arctan2", "hypot", "copysign", "nextafter", "fmax", "fmin",
          "logaddexp", "heaviside", "float_power", "floor_divide", "remainder", "fmod"]


# Functions of inexact values: JAX converts integer operands to float32 first.
INEXACT_BINARY = {"nextafter", "arctan2", "hypot", "copysign", "logaddexp", "heaviside",
                  "float_power"}


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, bf16])
def test_binary_matches_numpy(rng, name, dtype):
  dtype = np.dtype(dtype)
  np_fun = getattr(np, name)
  x = rand(rng, (2, 3), dtype)
  y = rand(rng, (3,), dtype)
  if name in ("floor_divide", "remainder", "fmod", "divide") and dtype.kind in "iu":
    y = np.where(y == 0, 1, y).astype(dtype)
  if name == "float_power":
    x = np.abs(x)
  if name == "subtract" and dtype == np.uint8:
    x = x + y
  expected_dtype = None
  if dtype == bf16:
    expected_dtype = np.bool_ if name in ("equal", "not_equal", "less", "less_equal", "greater",
                                          "greater_equal", "logical_and", "logical_or",
                                          "logical_xor") else bf16
  elif name in ("divide",) and dtype.kind in "iu":
    expected_dtype = np.float32
  elif name in INEXACT_BINARY and dtype.kind in "iu":
    # float32 for int32 and uint8 alike (NumPy: float64 and float16).
    expected_dtype = np.float32
    np_fun = _on_float32(np_fun)
  tol = 5e-2 if dtype == bf16 else 2e-6
  if name == "nextafter" and dtype == bf16:
    # ml_dtypes' bfloat16 nextafter (check passes bfloat16 operands widened to float32).
    np_fun, tol = lambda a, b: np.nextafter(a.astype(bf16), b.astype(bf16)), 0
  check(getattr(jnp, name), np_fun, x, y, dtype=expected_dtype, tol=tol)


# JAX 0.10.2's result dtypes for integer and bool operands of inexact-only functions:
# float32, but float64 for 64-bit integers under x64 (NumPy: float16 for 8-bit operands,
# float32 for 16-bit ones, float64 for wider).
INTEGER_TO_INEXACT = [(np.bool_, False, np.float32), (np.int8, False, np.float32),
                      (np.uint8, False, np.float32), (np.int32, False, np.float32),
                      (np.uint32, False, np.float32), (np.bool_, True, np.float32),
                      (np.int16, True, np.float32), (np.uint8, True, np.float32),
                      (np.int32, True, np.float32), (np.int64, True, np.float64),
                      (np.uint64, True, np.float64)]


@pytest.mark.parametrize("dtype, x64, expected", INTEGER_TO_INEXACT)
@pytest.mark.parametrize("name", ["sin", "sqrt", "arctan2", "float_power", "hypot"])
def test_inexact_functions_promote_integers_like_jax(name, dtype, x64, expected):
  args = (np.array([0, 1, 1, 0], dtype),) * (1 if name in ("sin", "sqrt") else 2)
  np_fun = lambda *a: getattr(np, name)(*[np.asarray(v).astype(expected) for v in a])
  with enable_x64(x64):
    out = check(getattr(jnp, name), np_fun, *args, dtype=expected)
  assert not out.weak_type


@settings(max_examples=25, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3,
                                                min_side=0, max_side=3),
       name=st.sampled_from(["add", "multiply", "maximum", "less", "arctan2", "where"]))
def test_binary_broadcasting_matches_numpy(shapes, name):
  rng = np.random.default_rng(0)
  x = rand(rng, shapes.input_shapes[0], np.float32)
  y = rand(rng, shapes.input_shapes[1], np.float32)
  if name == "where":
    check(lambda a, b: jnp.where(a > 0, a, b), lambda a, b: np.where(a > 0, a, b), x, y)
  else:
    check(getattr(jnp, name), getattr(np, name), x, y)


def test_incompatible_shapes_raise_jax_error():
  with pytest.raises(TypeError, match=r"add got incompatible shapes for broadcasting: \(3,\), \(4,\)"):
    jnp.ones(3) + jnp.ones(4)


@pytest.mark.parametrize("x1,x2", [(np.arange(-7, 8), 3), (np.arange(-7, 8), -3),
                                   (np.arange(10, dtype=np.uint8), 3)])
def test_integer_division_signs_match_numpy(x1, x2):
  check(jnp.floor_divide, np.floor_divide, x1, np.int32(x2) if x2 < 0 else np.uint8(x2)
        if x1.dtype == np.uint8 else np.int32(x2), dtype=x1.dtype if x1.dtype == np.uint8 else np.int32)
  check(jnp.remainder, np.remainder, x1.astype(np.int32), np.int32(x2))
  check(jnp.fmod, np.fmod, x1.astype(np.int32), np.int32(x2))
  q, r = jnp.divmod(x1.astype(np.int32), x2)
  nq, nr = np.divmod(x1.astype(np.int32), x2)
  np.testing.assert_array_equal(q, nq)
  np.testing.assert_array_equal(r, nr)


def test_float_divmod_matches_numpy(rng):
  x = rand(rng, (20,), np.float32, -10, 10)
  check(lambda a: jnp.divmod(a, 2.5), lambda a: np.divmod(a, np.float32(2.5)), x, tol=1e-5)
  check(lambda a: a % -1.5, lambda a: np.remainder(a, np.float32(-1.5)), x, tol=1e-5)


def test_integer_division_by_zero_does_not_crash():
  # XLA defines integer x // 0 (JAX's remainder maps x % 0 to 0).
  out = jnp.remainder(jnp.arange(3), 0)
  np.testing.assert_array_equal(out, [0, 0, 0])


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int8])
def test_integer_power_matches_numpy(rng, dtype):
  x = rng.integers(0 if dtype == np.uint8 else -3, 4, size=(10,)).astype(dtype)
  p = rng.integers(0, 4, size=(10,)).astype(dtype)
  check(jnp.power, np.power, x, p)
  check(lambda a: a ** 3, lambda a: a ** 3, x)


def test_power_special_cases():
  check(lambda a: jnp.power(a, 2.5), lambda a: np.power(a, np.float32(2.5)),
        np.arange(1, 5, dtype=np.int32), dtype=np.float32)
  check(lambda a, b: a ** b, lambda a, b: a ** b, np.arange(1.0, 5.0, dtype=np.float32),
        np.array([-1, 0, 1, 2], np.int32))
  # Concrete integer exponents use integer_pow (exact repeated products).
  jaxpr = xjax.make_jaxpr(lambda x: x ** 3)(np.ones(3, np.float32))
  assert "integer_pow[y=3]" in str(jaxpr)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_])
def test_bitwise_and_shifts_match_numpy(rng, dtype):
  x = rand(rng, (6,), dtype)
  y = rand(rng, (6,), dtype)
  for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    check(getattr(jnp, name), getattr(np, name), x, y)
  check(jnp.invert, np.invert, x)
  if dtype != np.bool_:
    s = rng.integers(0, 4, size=(6,)).astype(dtype)
    check(jnp.left_shift, np.left_shift, x, s)
    check(jnp.right_shift, np.right_shift, x, s)


def test_weak_type_promotion():
  out = jnp.add(jnp.int32(1), 1.5)
  assert out.dtype == np.float32 and out.weak_type
  assert repr(out) == "Array(2.5, dtype=float32, weak_type=True)"
  assert jnp.add(jnp.int8(1), 1).dtype == np.int8
  assert jnp.add(jnp.uint8(1), jnp.int8(1)).dtype == np.int16
  assert jnp.multiply(jnp.bfloat16(2), 3.0).dtype == bf16
  assert not jnp.multiply(jnp.bfloat16(2), 3.0).weak_type
  assert jnp.add(True, True).dtype == np.bool_
  w = jnp.sin(1)
  assert w.dtype == np.float32 and w.weak_type
  assert jnp.add(1, 2).weak_type and jnp.add(1, 2).dtype == np.int32
  # Under jit, Python scalars are weakly typed arguments too.
  out = xjax.jit(jnp.add)(jnp.int32(1), 1.5)
  assert out.dtype == np.float32 and out.weak_type


def test_weak_types_survive_integer_helpers():
  for fn in (jnp.floor_divide, jnp.remainder, jnp.fmod):
    out = fn(jnp.asarray(7), 2)
    assert out.dtype == np.int32 and out.weak_type, fn
  assert jnp.fmod(jnp.arange(3, dtype=jnp.uint8), 2).dtype == np.uint8


@pytest.mark.parametrize("dtype", [np.float32, np.int32, bf16])
@pytest.mark.parametrize("decimals", [0, 1, 2])
def test_round_matches_numpy(rng, dtype, decimals):
  x = rand(rng, (10,), dtype) * 3
  if dtype == bf16:
    check(lambda a: jnp.round(a, decimals), lambda a: np.round(a, decimals), x, dtype=bf16,
          tol=5e-2)
    return
  check(lambda a: jnp.round(a, decimals), lambda a: np.round(a, decimals), x, tol=1e-5)
  check(lambda a: jnp.around(a, decimals), lambda a: np.around(a, decimals), x, tol=1e-5)


def test_round_refuses_out():
  with pytest.raises(NotImplementedError, match="The 'out' argument to jnp.round is not supported."):
    jnp.round(jnp.ones(3), out=np.zeros(3))


def test_round_ties_to_even():
  np.testing.assert_array_equal(jnp.round(jnp.array([0.5, 1.5, 2.5, -0.5])), [0., 2., 2., -0.])


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_clip_matches_numpy(rng, dtype):
  x = rand(rng, (3, 4), dtype)
  check(lambda a: jnp.clip(a, 1, 5), lambda a: np.clip(a, 1, 5), x)
  check(lambda a: jnp.clip(a, max=2), lambda a: np.clip(a, None, 2), x)
  check(lambda a: a.clip(0, 3), lambda a: a.clip(0, 3), x)
  lo = rand(rng, (4,), dtype)
  check(lambda a, b: jnp.clip(a, b), lambda a, b: np.clip(a, b, None), x, lo)


def test_where_matches_numpy(rng):
  x = rand(rng, (3, 4), np.float32)
  check(lambda a: jnp.where(a > 0, a, 0.0), lambda a: np.where(a > 0, a, np.float32(0)), x)
  check(lambda a: jnp.where(a, 1, 2), lambda a: np.where(a, 1, 2).astype(np.int32),
        rand(rng, (5,), np.int32), dtype=np.int32)
  out = jnp.where(True, 1, 2.0)
  assert out.dtype == np.float32 and out.weak_type
  with pytest.raises(ValueError, match="Either both or neither"):
    jnp.where(x > 0, x)


def test_isinf_isfinite_on_integers_and_specials():
  x = np.array([np.inf, -np.inf, np.nan, 0.0, 1.0], np.float32)
  check(jnp.isinf, np.isinf, x)
  check(jnp.isfinite, np.isfinite, x)
  check(jnp.isnan, np.isnan, x)
  check(jnp.isposinf, np.isposinf, x)
  check(jnp.isneginf, np.isneginf, x)
  np.testing.assert_array_equal(jnp.isinf(jnp.arange(3)), [False] * 3)
  np.testing.assert_array_equal(jnp.isfinite(jnp.arange(3)), [True] * 3)


def test_complex_comparisons_are_lexicographic():
  a = np.array([1 + 2j, 1 + 1j, 0 + 5j], np.complex64)
  b = np.array([1 + 1j, 1 + 1j, 1 + 0j], np.complex64)
  check(jnp.less, np.less, a, b)
  check(jnp.greater_equal, np.greater_equal, a, b)
  check(jnp.maximum, np.maximum, a, b)


def test_lists_are_refused():
  with pytest.raises(TypeError, match=r"add requires ndarray or scalar arguments, got "
                                      r"<class 'list'> at position 1\."):
    jnp.add(1, [1, 2])
  with pytest.raises(TypeError, match="sin requires ndarray or scalar arguments"):
    jnp.sin((1.0, 2.0))


def test_operators_defer_to_unknown_types():
  class Other:
    def __radd__(self, other):
      return "radd"
  assert jnp.ones(2) + Other() == "radd"


def test_operators_cover_reflected_forms(rng):
  x = rand(rng, (3,), np.float32) + 4
  check(lambda a: 2 - a, lambda a: 2 - a, x)
  check(lambda a: 2 / a, lambda a: 2 / a, x)
  check(lambda a: 7.0 // a, lambda a: np.float32(7.0) // a, x)
  check(lambda a: 7.0 % a, lambda a: np.float32(7.0) % a, x)
  check(lambda a: 2 ** a, lambda a: np.float32(2) ** a, x, tol=1e-5)
  check(lambda a: divmod(a, 2.0)[1], lambda a: np.divmod(a, np.float32(2.0))[1], x)
  check(lambda a: abs(-a), lambda a: abs(-a), x)


def test_inline_ufuncs_print_as_their_primitives():
  text = str(xjax.make_jaxpr(lambda x: jnp.sin(x) + jnp.abs(x))(np.ones(3, np.float32)))
  assert "jit" not in text and "sin a" in text and "abs a" in text


@pytest.mark.parametrize("fn,name", [(lambda x: x // 2, "floor_divide"),
                                     (lambda x: x % 2, "remainder"),
                                     (lambda x: jnp.isinf(x), "isinf"),
                                     (lambda x: jnp.round(x), "round"),
                                     (lambda x: jnp.clip(x, 0, 1), "clip"),
                                     (lambda x: jnp.where(x > 0, x, 1.0), "_where")])
def test_non_inline_ufuncs_print_nested_jit(fn, name):
  text = str(xjax.make_jaxpr(fn)(np.ones(3, np.float32)))
  assert f"name={name}" in text


def test_jit_matches_eager_for_python_scalars():
  f = xjax.jit(lambda x, y: jnp.maximum(x, y) * jnp.float32(2))
  out = f(1, 2.5)
  assert out.dtype == np.float32 and not out.weak_type and float(out) == 5.0


@pytest.mark.parametrize("name, base", [("logaddexp", np.e), ("logaddexp2", 2.0)])
def test_logaddexp_derivatives_are_smooth_at_ties_and_finite_at_infinities(name, base):
  # d/dx log_b(b**x + b**y) = b**(x - out): 1/2 each where x == y. The stable formula's max
  # and abs have kinks there; differentiating through them gave (0, 1) and a zero
  # gradient for softplus at 0 (optax's L-BFGS on a logistic loss never moved).
  fn = getattr(jnp, name)
  grad = xjax.grad(fn, argnums=(0, 1))
  for x, y in [(0.0, 0.0), (1.5, 1.5), (-3.0, -3.0), (1.0, 3.0), (2.0, -1.0)]:
    out = np.log(base ** x + base ** y) / np.log(base)
    want = (base ** (x - out), base ** (y - out))
    np.testing.assert_allclose(grad(x, y), want, rtol=1e-5)
    np.testing.assert_allclose(xjax.jit(grad)(x, y), want, rtol=1e-5)
  # At infinities, JAX's rule (+inf replaced by 0 in the exponent) gives these finite values.
  np.testing.assert_allclose(grad(1.0, np.inf), (base ** 1.0, 1.0), rtol=1e-6)
  np.testing.assert_allclose(grad(1.0, -np.inf), (1.0, 0.0))
  assert float(xjax.grad(xjax.nn.softplus)(0.0)) == 0.5
  np.testing.assert_allclose(xjax.vmap(xjax.grad(xjax.nn.softplus))(jnp.zeros(3)), [0.5] * 3)
  assert "custom_jvp_call" in str(xjax.make_jaxpr(fn)(1.0, 2.0))  # as JAX's jaxpr


def test_jaxprs_print_python_scalars_as_given():
  # JAX prints a weak literal made from a Python scalar as that scalar (0.1, 1.0 for
  # the int 1 in a float op), not its float32 value (0.10000000149011612).
  text = str(xjax.make_jaxpr(lambda x: (x * 0.1 + 1) * (1 / 3))(1.0))
  assert "0.1:f32[]" in text and "1.0:f32[]" in text and "0.3333333333333333:f32[]" in text
  assert "0.30000001192092896:f32[]" in str(
      xjax.make_jaxpr(lambda x: x * jnp.float32(0.3))(1.0))  # a NumPy value: its own value
