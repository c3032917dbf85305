"""The cotangents a `vjp` pullback accepts, with JAX 0.10.2's rule and message (recorded from
JAX): the shape and tangent dtype of each output, except that an output with float0 tangents
(integer or boolean) takes a cotangent of any dtype and passes nothing back."""
import re

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp


def test_shape_and_dtype_mismatches_raise_jax_message():
  _, pullback = xjax.vjp(lambda x: x * 2.0, jnp.ones(3))
  with pytest.raises(ValueError, match=re.escape(
      "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got float32[2], "
      "but expected float32[3] because the corresponding output of the differentiated "
      "function had JAX type float32[3]")):
    pullback(jnp.ones(2))
  with pytest.raises(ValueError, match=re.escape("got int32[3], but expected float32[3]")):
    pullback(jnp.ones(3, jnp.int32))
  with pytest.raises(ValueError, match=re.escape("got float16[3], but expected float32[3]")):
    pullback(jnp.ones(3, jnp.float16))
  np.testing.assert_allclose(pullback(np.ones(3))[0], np.full(3, 2.0))  # float64 -> float32


def test_integer_outputs_take_any_cotangent():
  out, pullback = xjax.vjp(lambda x: (x * 2.0, jnp.zeros(3, jnp.int32)), jnp.ones(3))
  for int_ct in (out[1], jnp.ones(3, jnp.float32), np.zeros(3, xjax.dtypes.float0)):
    np.testing.assert_allclose(pullback((out[0], int_ct))[0], np.full(3, 4.0))
  with pytest.raises(ValueError, match=re.escape("got int32[2], but expected float0[3]")):
    pullback((out[0], jnp.ones(2, jnp.int32)))
