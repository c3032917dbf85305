"""Wrong values and internal errors found by trying xjax as a new user would (issue 12).

Each test failed before its fix; the expected classes and texts are JAX 0.10.2's.
"""
import threading

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import errors


# -- static arguments are keyed on their type too ------------------------------


def test_static_int_and_float_of_equal_value_compile_separately():
  f = xjax.jit(lambda n: jnp.asarray(n), static_argnums=0)
  assert f(2).dtype == np.int32
  assert f(2.0).dtype == np.float32
  assert f(True).dtype == np.bool_


def test_static_true_and_one_take_their_own_branches():
  f = xjax.jit(lambda x, flag: x + 1 if flag is True else x - 1, static_argnums=1)
  assert f(0, True) == 1
  assert f(0, 1) == -1


def test_static_argnames_are_keyed_on_type():
  f = xjax.jit(lambda x, *, n: x * n, static_argnames="n")
  assert f(jnp.ones(()), n=2).dtype == np.float32
  assert f(jnp.ones((), jnp.int32), n=2).dtype == np.int32
  assert f(jnp.ones((), jnp.int32), n=2.0).dtype == np.float32


class _RaisingEq:
  def __hash__(self):
    return 1

  def __eq__(self, other):
    raise ValueError("boom")


def test_static_argument_whose_eq_raises_gets_jax_error():
  f = xjax.jit(lambda x, e: x, static_argnums=1)
  f(1.0, _RaisingEq())
  with pytest.raises(ValueError, match=r"static arguments should be comparable using __eq__"
                     r"\.The following error was raised when comparing two objects of types "
                     r"[\s\S]*_RaisingEq[\s\S]*ValueError: boom"):
    f(1.0, _RaisingEq())


# -- Python scalars keep their sign -------------------------------------------


def test_negative_zero_after_positive_zero():
  f = xjax.jit(lambda x: 1 / x)
  assert f(0.0) == np.inf
  assert f(-0.0) == -np.inf
  assert np.signbit(jnp.multiply(-0.0, 1.0))
  assert not np.signbit(jnp.multiply(0.0, 1.0))


def test_nan_scalar_arguments():
  f = xjax.jit(lambda x: x + 1)
  for _ in range(3):
    assert np.isnan(f(float("nan")))


# -- random.fold_in ------------------------------------------------------------


@pytest.mark.parametrize("data", [2 ** 40, 2 ** 32, -1])
def test_fold_in_python_int_out_of_uint32_range_raises(data):
  with pytest.raises(OverflowError, match=f"Python integer {data} out of bounds for uint32"):
    xjax.random.fold_in(xjax.random.key(0), data)


def test_fold_in_edges_of_uint32_range():
  key = xjax.random.key(0)
  top = xjax.random.key_data(xjax.random.fold_in(key, 2 ** 32 - 1))
  wrapped = xjax.random.key_data(xjax.random.fold_in(key, np.int32(-1)))  # NumPy wraps
  np.testing.assert_array_equal(top, wrapped)


# -- deleted and donated arrays ------------------------------------------------


def _deleted():
  x = jnp.ones(3)
  x.delete()
  return x


@pytest.mark.parametrize("use", [
    lambda x: x + 1,
    lambda x: jnp.sin(x),
    lambda x: xjax.jit(lambda a: a * 2)(x),
    lambda x: np.asarray(x),
    lambda x: repr(x),
    lambda x: x.block_until_ready(),
    lambda x: xjax.device_put(x, xjax.devices()[0]),
    lambda x: xjax.device_put(x),
], ids=["add", "sin", "jit", "asarray", "repr", "block", "device_put", "device_put_default"])
def test_using_a_deleted_array_raises_runtime_error(use):
  with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[3\]\."):
    use(_deleted())


def test_using_a_donated_array_raises_runtime_error(capfd):
  y = jnp.ones(3)
  xjax.jit(lambda a: a * 2, donate_argnums=0)(y)
  assert y.is_deleted()
  with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[3\]\."):
    y + 1
  assert "ExecutePrepare" not in capfd.readouterr().err


# -- tracers ---------------------------------------------------------------------


def test_item_of_tracer_raises_concretization_error():
  with pytest.raises(errors.ConcretizationTypeError,
                     match="This occurred in the item\\(\\) method of jax.Array"):
    xjax.jit(lambda a: a.item())(1.0)


def test_tolist_of_tracer_raises_concretization_error():
  with pytest.raises(errors.ConcretizationTypeError,
                     match=r"The tolist\(\) method was called on traced array with shape "
                           r"float32\[2\]"):
    xjax.jit(lambda a: a.tolist())(jnp.ones(2))


def test_item_under_grad_uses_the_concrete_value():
  assert xjax.grad(lambda a: a * a.item())(2.0) == 2.0


# -- device_put --------------------------------------------------------------------


@pytest.mark.parametrize("device", [5, "gpu:7", object()])
def test_device_put_rejects_non_devices_with_value_error(device):
  with pytest.raises(ValueError, match="`jax.device_put` only accepts `None`"):
    xjax.device_put(jnp.ones(2), device)


def test_device_put_pytree_of_devices_must_be_a_prefix():
  d = xjax.devices()[0]
  out = xjax.device_put((1.0, 2.0), (d, None))
  assert out[0].committed and not out[1].committed
  with pytest.raises(ValueError, match="device_put device specification must be a tree prefix"):
    xjax.device_put((1.0, 2.0), (d,))


def test_device_put_may_alias_false_copies():
  x = jnp.ones(2)
  y = xjax.device_put(x, x.device, may_alias=False)
  assert y is not x
  x.delete()
  np.testing.assert_array_equal(y, np.ones(2))


# -- jacrev's dtype errors -----------------------------------------------------------


def test_jacrev_integer_input_names_jacrev():
  with pytest.raises(TypeError, match="^jacrev requires real- or complex-valued inputs"):
    xjax.jacrev(lambda a: a)(1)


def test_jacrev_integer_output_raises_type_error():
  with pytest.raises(TypeError, match="^jacrev requires real-valued outputs .* but got int32"):
    xjax.jacrev(lambda a: jnp.round(a).astype(jnp.int32))(1.0)


def test_jacrev_complex_output_needs_holomorphic():
  with pytest.raises(TypeError, match="pass holomorphic=True"):
    xjax.jacrev(lambda a: a.astype(jnp.complex64))(1.0)


# -- einsum --------------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ("i,i->", (1.0, 2.0), np.ones(2)),
    ((1.0, 2.0), [0], np.ones(2), [0]),
])
def test_einsum_tuple_operands_raise_type_error(args):
  with pytest.raises(TypeError, match="einsum requires ndarray or scalar arguments, got "
                                      "<class 'tuple'> at position 0"):
    jnp.einsum(*args)


def test_einsum_interleaved_form_matches_numpy(rng):
  a = rng.standard_normal((2, 3)).astype(np.float32)
  b = rng.standard_normal((3, 4)).astype(np.float32)
  for args in [(a, [0, 1], b, [1, 2], [0, 2]), (a, [0, 1], b, [1, 2]),
               (a, [Ellipsis, 1], b, [1, 2]), (a, [0, 0 + 1], [1])]:
    np.testing.assert_allclose(jnp.einsum(*args), np.einsum(*args), rtol=1e-5, atol=1e-6)


def test_einsum_interleaved_bad_label_raises_type_error():
  with pytest.raises(TypeError, match="lists must contain either Ellipsis"):
    jnp.einsum(np.ones(2), ["a"])


# -- a higher-order call with no batched operand that reads the vmap's axis --------


@pytest.mark.parametrize("fun, expected", [
    (lambda x: xjax.jit(lambda: xjax.lax.axis_index("i"))(), [0, 1, 2]),
    (lambda x: xjax.jit(lambda y: xjax.lax.psum(y, "i"))(2.0), [6.0, 6.0, 6.0]),
    (lambda x: xjax.lax.cond(True, lambda: xjax.lax.axis_index("i"), lambda: 0), [0, 1, 2]),
    (lambda x: xjax.lax.scan(lambda c, _: (c + xjax.lax.axis_index("i"), None), 0, None,
                             length=2)[0], [0, 2, 4]),
    (lambda x: xjax.jit(lambda: xjax.lax.all_gather(1.0, "i"))(), [[1.0] * 3] * 3),
], ids=["jit-axis_index", "jit-psum", "cond-axis_index", "scan-axis_index", "jit-all_gather"])
def test_unbatched_higher_order_call_reading_the_axis_is_batched(fun, expected):
  # Such calls ran once, unbatched, and failed to lower (JAX batches them).
  np.testing.assert_array_equal(xjax.vmap(fun, axis_name="i")(jnp.ones(3)), expected)
