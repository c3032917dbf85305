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
