"""lax behaviours matched to JAX 0.10.2 for its lax_test suite: `mul(out_dtype=)`, composite's
lowering and errors, complex sin/cos/square accuracy, `dot`'s keyword-only signature, top_k's
index overflow check, `convert_element_type` returning Arrays, broadcast_in_dim's messages,
ragged_dot's `out_sharding`, `lax.utils.int_dtype_for_*`, and `Lowered.as_text`'s printing."""
from functools import partial

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.errors import UnexpectedTracerError
from xjax._src.lax import utils as lax_utils


# -- mul(out_dtype=) -----------------------------------------------------------------


def test_mul_out_dtype_converts_operands_first():
  x, y = np.array([1.5, 2.5], np.float16), np.array([3, -2], np.int8)
  out = lax.mul(x, y, out_dtype=np.float32)
  assert out.dtype == np.float32
  np.testing.assert_array_equal(out, [4.5, -5.0])
  jaxpr = str(xjax.make_jaxpr(lambda a, b: lax.mul(a, b, out_dtype=np.float32))(x, y))
  assert "f32[2] = mul[out_dtype=<class 'numpy.float32'>] a b" in jaxpr
  assert str(xjax.make_jaxpr(lax.mul)(x, x)).count("mul a b") == 1  # None is not shown
  weak = lax.mul(2.0, 3.0, out_dtype=np.int32)
  assert weak.dtype == np.int32 and weak.weak_type and int(weak) == 6
  with pytest.raises(TypeError):
    lax.mul(x, y)


def test_mul_out_dtype_derivatives_and_batching():
  f = lambda a, b: lax.mul(a, b, out_dtype=np.float32)
  ga, gb = xjax.grad(f, argnums=(0, 1))(np.float16(3), np.float16(2))
  assert ga.dtype == gb.dtype == np.float16 and float(ga) == 2 and float(gb) == 3
  out = xjax.vmap(f)(np.ones((3, 2), np.float16), np.full(3, 2, np.float16))
  assert out.dtype == np.float32 and out.shape == (3, 2)
  np.testing.assert_array_equal(out, np.full((3, 2), 2.0))


# -- composite -------------------------------------------------------------------------


def test_composite_prints_as_jax_with_dotted_names():
  square = lax.composite(lambda x: x ** 2, name="my.square")
  text = xjax.jit(square).lower(np.float32(2)).as_text()
  assert ('stablehlo.composite "my.square" %arg0 {decomposition = @my.square} : '
          '(tensor<f32>) -> tensor<f32>') in text
  assert "@my.square(%arg0: tensor<f32>) -> tensor<f32> {" in text


def test_composite_attributes_skip_none_and_print_dtypes():
  f = lax.composite(lambda x, **_: x + 1, "my.inc")
  text = xjax.jit(lambda x: f(x, dtype=np.dtype(np.float32), omit=None, n=1)).lower(
      np.ones(2, np.float32)).as_text()
  assert "composite_attributes = {dtype = f32, n = 1 : i64}" in text


def test_composite_constants_become_operands():
  scale = np.array([0.5, 0.4, 0.3], np.float32)
  f = partial(lax.composite(lambda x, *, s: x / s, name="my.consts"), s=scale)
  x = np.array([1.0, 2.0, 3.0], np.float32)
  np.testing.assert_allclose(f(x), x / scale)
  eqn = xjax.make_jaxpr(f)(x).jaxpr.eqns[0]
  assert len(eqn.invars) == 2 and not eqn.params["jaxpr"].consts
  assert "@my.consts(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>)" in (
      xjax.jit(f).lower(x).as_text())


def test_composite_traced_attributes_and_closures_are_errors():
  f = lax.composite(lambda x, **_: x, "my.id")
  x = np.ones(2, np.float32)
  with pytest.raises(UnexpectedTracerError, match="use numpy arrays instead"):
    xjax.jit(lambda x: f(x, t=jnp.zeros(2)))(x)

  def closes_over(x, s):
    return lax.composite(lambda y: y * s, name="my.c")(x)
  np.testing.assert_allclose(closes_over(x, jnp.float32(2)), 2 * x)
  with pytest.raises(UnexpectedTracerError, match="as a constant in the decomposition for the "
                     "composite op 'my.c'"):
    xjax.jit(closes_over)(x, np.float32(2))


# -- complex elementwise accuracy ----------------------------------------------------


def test_complex_sin_cos_keep_exact_zero_parts_at_large_imaginary():
  z = np.array([-1.7e23j, 88550680j, 0j, 1e-3 + 2j], np.complex64)
  with np.errstate(over="ignore", invalid="ignore"):
    for jf, nf in ((jnp.cos, np.cos), (jnp.sin, np.sin)):
      got, want = np.asarray(jf(z)), nf(z)
      np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
      np.testing.assert_allclose(got, want, rtol=1e-5)
  np.testing.assert_allclose(xjax.grad(lambda z: jnp.sin(z).real)(1.0 + 2j),
                             np.cos(1.0 + 2j), rtol=1e-6)  # as JAX gives it


def test_complex_square_has_exact_zero_real_part_on_the_diagonal():
  z = np.array([4.5e-8 + 4.5e-8j, 3.4e38 + 1.7e23j], np.complex64)
  out = np.asarray(jnp.square(z))
  assert out[0].real == 0 and out[0].imag > 0
  assert np.isposinf(out[1].real) and np.isposinf(out[1].imag)
  assert jnp.square(np.int32(-7)) == 49


# -- dot, top_k, convert_element_type, broadcast_in_dim --------------------------------


def test_dot_takes_keywords_only_and_needs_dimension_numbers_beyond_matrices():
  a = np.arange(5.0, dtype=np.float32)
  with pytest.raises(TypeError, match=r"dot\(\) takes 2 positional arguments"):
    lax.dot(a, a, lax.Precision.DEFAULT)
  assert float(lax.dot(a, a, precision=lax.Precision.HIGHEST)) == 30.0
  b = np.ones((2, 3, 4), np.float32)
  with pytest.raises(ValueError, match="dimension_numbers must be specified"):
    lax.dot(b, b)
  out = lax.dot(b, b, dimension_numbers=(([2], [2]), ([0], [0])))
  assert out.shape == (2, 3, 3)


def test_top_k_refuses_dimensions_past_int32_indices():
  x = xjax.ShapeDtypeStruct((2 ** 31 + 1,), np.dtype("bfloat16"))
  with pytest.raises(ValueError, match="top_k returns int32 indices, which will overflow"):
    xjax.eval_shape(lambda x: lax.top_k(x, 100), x)


@pytest.mark.parametrize("value", [1, 1.0, np.int32(1), np.float32(1), np.array(1.0)])
def test_convert_element_type_returns_arrays(value):
  out = lax.convert_element_type(value, np.float32)
  assert isinstance(out, xjax.Array) and out.dtype == np.float32 and not out.weak_type
  assert isinstance(xjax.jit(lambda v: lax.convert_element_type(v, np.int32))(value),
                    xjax.Array)
  assert str(xjax.make_jaxpr(lambda: lax.convert_element_type(np.float32(1), np.int32))()) == (
      "{ lambda ; . let  in (1:i32[],) }")


def test_broadcast_in_dim_messages_are_jaxs():
  with pytest.raises(TypeError, match="must be a subset of output dimensions"):
    lax.broadcast_in_dim(np.ones(2), (2, 3), (2,))
  with pytest.raises(TypeError, match="must not contain duplicates"):
    lax.broadcast_in_dim(np.ones((2, 2)), (2, 2), (0, 0))


# -- ragged_dot out_sharding, lax utils, config, as_text --------------------------------


def test_ragged_dot_out_sharding_types_the_result():
  mesh = xjax.make_mesh((1,), ("x",), axis_types=(xjax.sharding.AxisType.Explicit,))
  args = [jnp.ones((16, 4)), jnp.ones((2, 4, 3)), jnp.array([8, 8])]
  with xjax.sharding.use_mesh(mesh):
    f = lambda a, b, g: lax.ragged_dot(a, b, g, out_sharding=xjax.P("x", None))
    assert xjax.typeof(xjax.jit(f)(*args)).sharding.spec == xjax.P("x", None)
    assert f(*args).sharding == xjax.NamedSharding(mesh, xjax.P("x", None))
    np.testing.assert_allclose(f(*args), np.full((16, 3), 4.0))
    assert "sdy.sharding_constraint" in xjax.jit(f).lower(*args).as_text()


def test_int_dtype_for_dim_and_shape():
  i32max, u32max = np.iinfo(np.int32).max, np.iinfo(np.uint32).max
  assert lax_utils.int_dtype_for_dim(i32max, signed=True) == np.int32
  assert lax_utils.int_dtype_for_dim(i32max + 1, signed=True) == np.int64
  assert lax_utils.int_dtype_for_dim(u32max + 1, signed=False) == np.uint64
  assert lax_utils.int_dtype_for_shape([10, i32max + 1], signed=True) == np.int64
  assert lax_utils.int_dtype_for_shape([10, u32max], signed=False) == np.uint32
  assert lax_utils.int_dtype_for_shape([], signed=True) == np.int32


def test_ragged_dot_instruction_flag_is_a_state():
  from xjax._src import config
  assert config.config.jax_ragged_dot_use_ragged_dot_instruction is True
  with config.jax_ragged_dot_use_ragged_dot_instruction(False):
    assert config.config.jax_ragged_dot_use_ragged_dot_instruction is False
  assert config.config.jax_ragged_dot_use_ragged_dot_instruction is True


def test_as_text_prints_custom_assembly_and_compiler_ir_keeps_the_module_text():
  lowered = xjax.jit(lambda x: x + 1).lower(np.float32(1))
  assert "stablehlo.add %arg0, %cst : tensor<f32>" in lowered.as_text()
  assert '"stablehlo.add"' in lowered.compiler_ir()


def test_broadcast_shapes_refuses_negative_sizes():
  with pytest.raises(TypeError, match="Only non-negative indices are allowed"):
    lax.broadcast_shapes((-1,))
  with pytest.raises(TypeError, match="Shapes must be 1D sequences"):
    lax.broadcast_shapes("hello")
  assert lax.broadcast_shapes((2, 3), (3,)) == (2, 3)
