"""JAX 0.10.2's message for an eager primitive given a value that is not a JAX type."""
import numpy as np
import pytest

import xjax.numpy as jnp
from xjax import lax


def test_primitive_argument_that_is_not_a_jax_value():
  with pytest.raises(TypeError, match=r"Error interpreting argument to add as a JAX value\. The "
                     r"problematic value is of type <class 'numpy.ndarray'> and was passed to "
                     r"add at position 1\.") as info:
    lax.add(jnp.array(7), np.array("hello"))
  assert "not a valid JAX type" in str(info.value.__cause__)


@pytest.mark.parametrize("jit", [False, True])
def test_scalar_conversions_of_non_scalars(jit):
  import operator
  import xjax
  wrap = xjax.jit if jit else (lambda f: f)
  with pytest.raises(TypeError, match="Only integer scalar arrays can be converted to a "
                     "scalar index"):
    wrap(operator.index)(jnp.float32(0))
  with pytest.raises(TypeError, match=r"Only scalar arrays can be converted to Python "
                     r"scalars; got arr.ndim=1"):
    wrap(float)(jnp.arange(1.))
  with pytest.raises(ValueError, match="truth value of an empty array is ambiguous"):
    wrap(bool)(jnp.arange(0))
  with pytest.raises(ValueError, match="more than one element is ambiguous"):
    wrap(bool)(jnp.arange(3))
  if jit:
    with pytest.raises(xjax.errors.TracerIntegerConversionError):
      wrap(operator.index)(jnp.int32(0))
  else:
    assert operator.index(jnp.int32(3)) == 3 and float(jnp.float32(2)) == 2.


def test_compiled_executable_argument_checks():
  import xjax
  f = xjax.jit(lambda x: x + 1.).lower(jnp.float32(1)).compile()
  with pytest.raises(TypeError, match=r"Argument types differ .*The mismatches are:\n"
                     r"Argument 'x' compiled with float32\[\] and called with int32\[\]"):
    f(jnp.int32(1))
  with pytest.raises(TypeError, match="Cannot apply JAX transformations to a function lowered "
                     "and compiled for a particular signature. Detected argument of Tracer"):
    xjax.vmap(lambda x: f(x))(jnp.ones(3))


def test_float0_arrays_support_no_operations():
  import xjax
  zero = xjax.grad(lambda x: x + 0., allow_int=True)(1)
  assert zero.dtype == xjax.dtypes.float0
  with pytest.raises(TypeError, match="Called add with a float0 array. float0s do not support "
                     "any operations by design"):
    zero + jnp.zeros(())
  with pytest.raises(TypeError, match="Called add with a float0 at position 0. float0s do not "
                     "support any operations by design"):
    lax.add(zero, jnp.zeros(()))


def test_numpy_functions_refuse_tracers_even_of_known_values():
  import xjax
  with pytest.raises(xjax.errors.TracerArrayConversionError, match="The numpy.ndarray "
                     "conversion method __array__"):
    xjax.grad(lambda x: np.exp(x))(np.zeros(()))
