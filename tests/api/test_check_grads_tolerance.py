"""`xjax.test_util.check_grads` picks JAX's tolerances: by the dtype values are computed in
(float64 counts as float32 while x64 is off, as JAX's `tolerance` canonicalizes)."""
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.config import enable_x64
from xjax.test_util import check_grads


@xjax.custom_jvp
def _sin_off_by_1e3(x):
  return jnp.sin(x)


@_sin_off_by_1e3.defjvp
def _sin_off_by_1e3_jvp(primals, tangents):
  (x,), (t,) = primals, tangents
  return jnp.sin(x), 1.001 * jnp.cos(x) * t  # a derivative 0.1% off


def test_python_float_args_get_float32_tolerance_without_x64():
  # numpyro's test_log1mexp_grads checks float32 math from Python floats this way.
  check_grads(_sin_off_by_1e3, (0.3,), order=1)  # 0.1% is within float32's 2e-3


def test_float64_args_get_float64_tolerance_with_x64():
  with enable_x64():
    with pytest.raises(AssertionError):
      check_grads(_sin_off_by_1e3, (0.3,), order=1)
