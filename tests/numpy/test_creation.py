"""Array creation against NumPy and JAX's conventions: array/asarray (weak types, lists
of tracers), zeros/ones/full/empty and *_like, eye/identity, arange, linspace, the
scalar types and jnp.ndarray, dtype queries and constants."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import errors
from jnp_checks import bf16, check


@pytest.mark.parametrize("obj,dtype,weak", [
    (1, np.int32, True), (1.5, np.float32, True), (True, np.bool_, False),
    (1j, np.complex64, True), ([1, 2], np.int32, False), ([1.0, 2], np.float32, False),
    ([[1, 2], [3, 4]], np.int32, False), ([True, 2.5], np.float32, False),
    (np.float64(2), np.float32, False), (np.arange(3, dtype=np.int64), np.int32, False),
    (np.float32(1), np.float32, False), ((1, 2), np.int32, False), ([], np.float32, False),
    (np.array([1, 2], bf16), bf16, False), (np.uint8(7), np.uint8, False)])
def test_array_dtypes_and_weak_types(obj, dtype, weak):
  for fn in (jnp.array, jnp.asarray):
    out = fn(obj)
    assert isinstance(out, xjax.Array)
    assert out.dtype == dtype and out.weak_type == weak, (fn, obj, out.aval)
    np.testing.assert_array_equal(np.asarray(out, np.float64) if dtype != np.complex64
                                  else np.asarray(out), np.asarray(obj))


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.int32, jnp.uint8, bool, jnp.bfloat16,
                                   jnp.complex64, float, int])
@pytest.mark.parametrize("obj", [1, 2.5, [1, 2], True])
def test_array_with_dtype(obj, dtype):
  out = jnp.array(obj, dtype=dtype)
  expected = np.array(obj).astype(xjax.dtypes.canonicalize_dtype(np.dtype(dtype)))
  assert out.dtype == expected.dtype and not out.weak_type
  np.testing.assert_array_equal(out, expected)


def test_array_of_arrays_and_ndmin():
  x = jnp.arange(3)
  assert jnp.asarray(x) is x
  check(lambda a: jnp.array([a, a + 1]), lambda a: np.array([a, a + 1]), np.arange(3, dtype=np.int32))
  out = jnp.array(3.0, ndmin=2)
  assert out.shape == (1, 1)
  assert jnp.array([jnp.float32(1), 2]).dtype == np.float32
  check(lambda a: jnp.array(a, dtype=jnp.int32), lambda a: a.astype(np.int32),
        np.array([1.5, -2.5], np.float32))


def test_array_errors():
  with pytest.raises(TypeError, match="Value 'a' with dtype <U1 is not a valid JAX array type"):
    jnp.array([1, "a"])
  with pytest.raises(ValueError, match="None is not a valid value for jnp.array"):
    jnp.array([1, None])
  with pytest.raises(ValueError, match="inhomogeneous"):
    jnp.array([[1, 2], [3]])
  with pytest.raises(NotImplementedError, match="Only implemented for order='K'"):
    jnp.array([1], order="F")


def test_64_bit_requests_warn_without_x64():
  with pytest.warns(UserWarning, match="Explicitly requested dtype float64 requested in array is "
                                       "not available"):
    assert jnp.array([1.0], dtype=np.float64).dtype == np.float32
  with pytest.warns(UserWarning, match="requested in zeros"):
    assert jnp.zeros(2, dtype=jnp.float64).dtype == np.float32
  with pytest.warns(UserWarning, match="requested in arange"):
    assert jnp.arange(3, dtype=jnp.int64).dtype == np.int32


def test_64_bit_dtypes_with_x64(x64):
  assert jnp.array(1.0).dtype == np.float64
  assert jnp.arange(3).dtype == np.int64
  assert jnp.zeros(2, dtype=jnp.float64).dtype == np.float64
  assert jnp.array([1, 2]).dtype == np.int64


def test_array_of_traced_list_prints_like_jax():
  # The Sharp Bits' permissive_sum: each element converted, given a unit axis, concatenated.
  text = str(xjax.make_jaxpr(lambda x: jnp.sum(jnp.array(x)))(list(range(3))))
  assert text == (
      "{ lambda ; a:i32[] b:i32[] c:i32[]. let\n"
      "    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
      "    e:i32[1] = broadcast_in_dim d\n"
      "    f:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b\n"
      "    g:i32[1] = broadcast_in_dim f\n"
      "    h:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c\n"
      "    i:i32[1] = broadcast_in_dim h\n"
      "    j:i32[3] = concatenate[dimension=0] e g i\n"
      "    k:i32[] = reduce_sum[axes=(0,) out_sharding=None] j\n"
      "  in (k,) }")
  assert int(xjax.jit(lambda x: jnp.sum(jnp.array(x)))(list(range(10)))) == 45
  nested = xjax.jit(lambda a, b: jnp.array([[a, b], [b, 1.0]]))(1.0, 2.0)
  np.testing.assert_array_equal(nested, [[1.0, 2.0], [2.0, 1.0]])


def test_scalars_created_under_jit_are_literals():
  text = str(xjax.make_jaxpr(lambda x: x * jnp.array(2.0) + jnp.asarray(1))(np.ones(3, np.float32)))
  assert text == ("{ lambda ; a:f32[3]. let\n    b:f32[3] = mul a 2.0:f32[]\n"
                  "    c:f32[3] = add b 1.0:f32[]\n  in (c,) }")


@pytest.mark.parametrize("fn,fill", [(jnp.zeros, 0), (jnp.ones, 1), (jnp.empty, 0)])
@pytest.mark.parametrize("shape", [(), 3, (0,), (2, 3), [1, 4]])
@pytest.mark.parametrize("dtype", [None, jnp.int32, bool, jnp.bfloat16, jnp.uint8])
def test_filled_arrays(fn, fill, shape, dtype):
  out = fn(shape, dtype)
  want = np.dtype(np.float32) if dtype is None else np.dtype(dtype)
  assert out.dtype == want and not out.weak_type
  assert out.shape == (np.empty(shape).shape)
  np.testing.assert_array_equal(np.asarray(out, np.float32), fill)


def test_full_and_like_functions():
  out = jnp.full((2,), 3)
  assert out.dtype == np.int32 and out.weak_type
  assert jnp.full((2,), 3, dtype=jnp.float32).dtype == np.float32
  np.testing.assert_array_equal(jnp.full((2, 3), jnp.arange(3)), np.full((2, 3), [0, 1, 2]))
  with pytest.raises(TypeError, match="full requires ndarray or scalar arguments"):
    jnp.full((2, 3), [1, 2, 3])
  x = jnp.arange(3)
  assert jnp.full_like(x, 2.7).dtype == np.int32
  np.testing.assert_array_equal(jnp.full_like(x, 2.7), [2, 2, 2])
  assert jnp.zeros_like(jnp.asarray(2.0)).weak_type
  assert jnp.ones_like(x, dtype=float).dtype == np.float32
  assert jnp.zeros_like(x, shape=(2, 2)).shape == (2, 2)
  assert jnp.empty_like(x).dtype == np.int32
  with pytest.raises(TypeError, match="zeros_like requires ndarray or scalar arguments"):
    jnp.zeros_like([1, 2])


def test_array_of_a_list_of_arrays_in_ml_dtypes():
  # ml_dtypes' converters take numbers and NumPy values only; Arrays in a list still convert.
  v = jnp.bfloat16(128)
  out = jnp.array([v, v + 1.0], dtype=jnp.bfloat16)
  assert out.dtype == jnp.bfloat16
  np.testing.assert_array_equal(np.asarray(out, np.float32), [128, 129])
  out = jnp.array([[jnp.ones(()), 2.0]], dtype=jnp.float8_e4m3fn)
  assert out.dtype == jnp.float8_e4m3fn and out.shape == (1, 2)
  np.testing.assert_array_equal(np.asarray(out, np.float32), [[1, 2]])


def test_like_functions_take_shape_dtype_structs_and_keys():
  # JAX's *_like accept any object with shape and dtype (optax inits optimizer state from
  # jax.ShapeDtypeStruct params); such an object gives a strongly typed result.
  s = xjax.ShapeDtypeStruct((2, 3), jnp.float16, weak_type=True)
  for fn in (jnp.zeros_like, jnp.ones_like, jnp.empty_like):
    out = fn(s)
    assert isinstance(out, xjax.Array) and out.aval == xjax.core.ShapedArray((2, 3), np.float16)
  np.testing.assert_array_equal(jnp.full_like(s, 7), np.full((2, 3), 7, np.float16))
  np.testing.assert_array_equal(jnp.full_like(s, jnp.arange(3)), np.tile(np.arange(3), (2, 1)))
  assert jnp.zeros_like(s, dtype=jnp.int32, shape=(4,)).aval.str_short() == "int32[4]"
  out = xjax.jit(lambda: jnp.ones_like(s))()
  np.testing.assert_array_equal(out, np.ones((2, 3), np.float16))
  # Typed keys (and key-typed structs) give keys whose data is the fill, as in JAX.
  key = xjax.random.key(3)
  keys = jnp.zeros_like(xjax.random.split(key, 4))
  assert keys.shape == (4,) and keys.dtype == key.dtype
  np.testing.assert_array_equal(xjax.random.key_data(keys), np.zeros((4, 2), np.uint32))
  keys = xjax.jit(lambda: jnp.zeros_like(xjax.ShapeDtypeStruct((2,), key.dtype)))()
  np.testing.assert_array_equal(xjax.random.key_data(keys), np.zeros((2, 2), np.uint32))
  keys = jnp.full_like(xjax.ShapeDtypeStruct((3,), key.dtype), key)
  np.testing.assert_array_equal(xjax.random.key_data(keys),
                                np.tile(xjax.random.key_data(key), (3, 1)))
  with pytest.raises(TypeError, match="ones_like requires ndarray or scalar arguments"):
    jnp.ones_like(object())


def test_shape_errors():
  with pytest.raises(TypeError, match=r"Shapes must be 1D sequences of concrete values of integer "
                                      r"type, got \(2.0,\)\."):
    jnp.zeros((2.0,))
  with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values"):
    xjax.jit(lambda n: jnp.ones((n,)))(3)


def test_creation_inside_jit_prints_like_jax():
  f = lambda x: x + jnp.zeros((3,)) + jnp.ones(3, dtype=jnp.int32)
  assert str(xjax.make_jaxpr(f)(np.ones(3, np.float32))) == (
      "{ lambda ; a:f32[3]. let\n    b:f32[3] = broadcast_in_dim 0.0:f32[]\n"
      "    c:f32[3] = add a b\n    d:i32[3] = broadcast_in_dim 1:i32[]\n"
      "    e:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] d\n"
      "    f:f32[3] = add c e\n  in (f,) }")


@pytest.mark.parametrize("args", [(3,), (2, 4), (3, 3, 1), (3, 4, -1), (4, None, 2), (0,)])
@pytest.mark.parametrize("dtype", [None, jnp.int32, bool])
def test_eye_matches_numpy(args, dtype):
  check(lambda: jnp.eye(*args, dtype=dtype), lambda: np.eye(*args, dtype=dtype), jit=False,
        dtype=np.float32 if dtype is None else dtype)


def test_identity_matches_numpy():
  check(lambda: jnp.identity(3), lambda: np.identity(3), jit=False, dtype=np.float32)
  check(lambda: jnp.identity(2, dtype=bool), lambda: np.identity(2, dtype=bool), jit=False)


@pytest.mark.parametrize("args", [(5,), (5.0,), (1, 5), (1, 5, 2), (0.5, 2.0, 0.3), (10, 0, -2),
                                  (3, 1), (0,), (2.5,), (-3, 3, 0.5)])
def test_arange_matches_numpy(args):
  expected = np.arange(*args)
  out = jnp.arange(*args)
  assert out.dtype == xjax.dtypes.canonicalize_dtype(expected.dtype)
  np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_arange_dtypes_and_errors():
  assert jnp.arange(3, dtype=jnp.float32).dtype == np.float32
  assert jnp.arange(jnp.int32(3)).dtype == np.int32
  np.testing.assert_array_equal(jnp.arange(254.0, 258.0).astype("uint8"), [254, 255, 255, 255])
  with pytest.raises(errors.ConcretizationTypeError,
                     match="It arose in the jnp.arange argument 'stop'"):
    xjax.jit(lambda n: jnp.arange(n))(3)
  with pytest.raises(errors.ConcretizationTypeError,
                     match="It arose in the jnp.arange argument 'start'"):
    xjax.jit(lambda n: jnp.arange(n, 5))(3)
  with pytest.raises(ValueError, match="arguments must be scalars"):
    jnp.arange(jnp.ones(2))
  assert str(xjax.make_jaxpr(lambda x: x + jnp.arange(4))(np.ones(4, np.float32))) == (
      "{ lambda ; a:f32[4]. let\n"
      "    b:i32[4] = iota[dimension=0 dtype=int32 shape=(4,) sharding=None] \n"
      "    c:f32[4] = convert_element_type[new_dtype=float32 weak_type=False] b\n"
      "    d:f32[4] = add a c\n  in (d,) }")


@pytest.mark.parametrize("args,kwargs", [((0, 1, 5), {}), ((0, 10, 4), {"endpoint": False}),
                                         ((1, 2, 1), {}), ((0, 1, 0), {}),
                                         ((2, 3, 3), {"dtype": jnp.int32}),
                                         ((np.zeros(2), np.ones(2), 3), {"axis": 1}),
                                         ((0.0, 1.0, 12), {})])
def test_linspace_matches_numpy(args, kwargs):
  np_kwargs = {k: (np.int32 if v is jnp.int32 else v) for k, v in kwargs.items()}
  out = jnp.linspace(*args, **kwargs)
  expected = np.linspace(*args, **np_kwargs)
  assert out.shape == expected.shape
  np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-7)
  out, step = jnp.linspace(0.0, 1.0, 5, retstep=True)
  np.testing.assert_allclose(step, 0.25)


def test_linspace_values_are_jax_float32():
  # The golden "medium_f32_wraps": JAX's interpolation start * (1 - t) + stop * t in float32.
  out = np.asarray(jnp.linspace(0.0, 1.0, 12))
  assert out[2] == np.float32(0.18181819) and out[10] == np.float32(0.90909094)


def test_scalar_types():
  assert repr(jnp.float32(1)) == "Array(1., dtype=float32)"
  assert repr(jnp.int32(9)) == "Array(9, dtype=int32)"
  assert jnp.bfloat16(1.5).dtype == bf16
  assert jnp.uint8([1, 2]).dtype == np.uint8
  assert np.dtype(jnp.float32) == np.float32 and jnp.float32 == np.float32
  assert jnp.dtype(jnp.int8) == np.int8
  assert hash(jnp.float32) == hash(np.float32)
  assert isinstance(np.float32(1), jnp.float32)
  assert jnp.issubdtype(jnp.bfloat16, jnp.floating)
  assert jnp.zeros(2, jnp.float16).dtype == np.float16
  with pytest.warns(UserWarning, match="Explicitly requested dtype float64"):
    assert jnp.float64(1).dtype == np.float32
  out = xjax.jit(lambda x: x + jnp.float32(1))(1)
  assert out.dtype == np.float32 and not out.weak_type


def test_ndarray_isinstance_covers_tracers():
  assert isinstance(jnp.ones(2), jnp.ndarray)
  assert not isinstance(np.ones(2), jnp.ndarray)
  assert issubclass(xjax.Array, jnp.ndarray)
  seen = []

  @xjax.jit
  def f(x):
    seen.append(isinstance(x, jnp.ndarray))
    return x
  f(1.0)
  assert seen == [True]


def test_dtype_queries_and_constants():
  assert jnp.result_type(jnp.int8, 1.0) == np.float32
  assert jnp.result_type(jnp.ones(2, jnp.int8), 1) == np.int8
  assert jnp.promote_types(jnp.int8, jnp.uint8) == np.int16
  assert jnp.promote_types(jnp.bfloat16, jnp.float16) == np.float32
  assert jnp.can_cast(jnp.int8, jnp.int32) and not jnp.can_cast(jnp.float32, jnp.int32)
  assert jnp.iinfo(jnp.int32).max == 2 ** 31 - 1
  assert jnp.finfo(jnp.bfloat16).bits == 16
  assert jnp.pi == np.pi and jnp.e == np.e and np.isinf(jnp.inf) and np.isnan(jnp.nan)
  assert jnp.newaxis is None
  assert jnp.shape([[1, 2]]) == (1, 2) and jnp.ndim(3.0) == 0 and jnp.size(jnp.ones((2, 3))) == 6
  assert jnp.ones((2, 3)).size == 6 and jnp.ones((2, 3)).ndim == 2
  assert jnp.ones(3, jnp.int8).nbytes == 3 and jnp.ones(3).itemsize == 4


def test_array_and_copy_of_an_array_make_a_new_buffer():
  # As in JAX: jnp.array (copy=True) and jnp.copy give a new array, which survives the
  # donation of the original; asarray and array(copy=False) return the array itself.
  a = jnp.arange(3.0)
  assert jnp.asarray(a) is a and jnp.array(a, copy=False) is a
  copies = [jnp.array(a), jnp.copy(a), jnp.array(a, copy=True)]
  assert all(c is not a for c in copies)
  assert [c.dtype for c in copies] == [a.dtype] * 3
  assert jnp.copy(jnp.array(1.0)).weak_type
  xjax.jit(lambda x: x + 1, donate_argnums=0)(a)
  for c in copies:
    np.testing.assert_array_equal(np.asarray(c), [0.0, 1.0, 2.0])


def test_array_reads_buffers_array_protocol_and_masked_arrays():
  import array as pyarray
  np.testing.assert_array_equal(jnp.array(pyarray.array("l", [0, 1, 2])), [0, 1, 2])
  assert jnp.asarray(pyarray.array("l", [0, 1]), copy=False).dtype == np.int32
  np.testing.assert_array_equal(jnp.array(bytearray(b"\x2a\xf3"), ndmin=2),
                                np.array(bytearray(b"\x2a\xf3"), ndmin=2))
  np.testing.assert_array_equal(jnp.array([memoryview(b"ab"), b"cd"]), [[97, 98], [99, 100]])

  class NDArrayLike:
    def __array__(self, dtype=None, copy=None):
      return np.array([1.5, 2.5], dtype=dtype)
  out = jnp.array(NDArrayLike())
  assert type(out) is xjax.Array and out.dtype == np.float32
  masked = np.ma.array([1, 2], mask=[True, False])
  np.testing.assert_array_equal(jnp.array(masked), np.array(masked))  # the mask is dropped
  with pytest.raises(ValueError, match="numpy masked arrays are not supported"):
    xjax.jit(jnp.asarray)(masked)


def test_array_positional_copy_order_ndmin_are_deprecated():
  x = jnp.array([1, 2, 3])
  with pytest.warns(DeprecationWarning, match="Passing the copy, order, and ndmin arguments"):
    assert jnp.array(x, None, False) is x
  with pytest.warns(DeprecationWarning):
    assert jnp.array(x, None, True, "K", 2).shape == (1, 3)
  with pytest.raises(TypeError, match="multiple values for argument 'copy'"):
    jnp.array(x, None, True, copy=False)
  with pytest.raises(TypeError, match="at most 5 positional arguments"):
    jnp.array(x, None, True, "K", 0, 1)


def test_creation_functions_take_single_device_shardings():
  from xjax.sharding import SingleDeviceSharding
  dev = xjax.devices()[-1]
  s = SingleDeviceSharding(dev)
  for out in (jnp.arange(5, device=s), jnp.eye(3, device=s), jnp.linspace(0, 1, 4, device=s),
              jnp.linspace(0, 1, 4, retstep=True, device=s)[0], jnp.zeros(3, device=s),
              jnp.full((2,), 1, device=s), jnp.array([1, 2], device=s),
              jnp.asarray(np.arange(3), device=s), jnp.zeros_like(np.ones(2), device=s)):
    assert out.sharding == s and out._committed
  # a committed, strongly typed input's placement carries over to *_like (as in JAX)
  x = xjax.device_put(jnp.arange(3.0), dev)
  assert jnp.zeros_like(x)._committed and jnp.full_like(x, 2).devices() == {dev}
  assert not jnp.zeros_like(jnp.arange(3.0))._committed
  y = xjax.lax.full_like(x, 1.1)
  assert y._committed and y.sharding == x.sharding
  assert not xjax.lax.full_like(jnp.arange(3.0), 1.1)._committed


def test_array_copy_makes_new_values_under_autodiff():
  f = lambda x: jnp.array(x, copy=True)
  x, xdot = jnp.ones(3), jnp.ones(3)
  y, ydot = xjax.jvp(f, (x,), (xdot,))
  assert y is not x and ydot is not xdot
  y, f_vjp = xjax.vjp(f, x)
  (xbar,) = f_vjp(xdot)
  assert y is not x and xbar is not xdot
  assert xjax.jit(lambda v: v + 7)(np.longlong(1)) == 8  # np.longlong: a distinct int64 type
