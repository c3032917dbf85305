"""A zero or negative window stride is refused before any padding arithmetic divides by it
(reduce_window raised ZeroDivisionError with 'SAME' padding)."""
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax


@pytest.mark.parametrize("padding", ["SAME", "SAME_LOWER", "VALID", ((0, 0), (1, 0))])
@pytest.mark.parametrize("strides", [(0, 1), (1, -2)])
@pytest.mark.parametrize("mode", ["eager", "jit", "make_jaxpr", "vmap"])
def test_reduce_window_refuses_non_positive_strides(padding, strides, mode):
  f = lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), strides, padding)
  x = jnp.ones((4, 4))
  run = {"eager": lambda: f(x), "jit": lambda: jax.jit(f)(x),
         "make_jaxpr": lambda: jax.make_jaxpr(f)(x),
         "vmap": lambda: jax.vmap(f)(jnp.ones((2, 4, 4)))}[mode]
  with pytest.raises(TypeError, match="window_strides must have every element be "
                                      "(strictly positive|nonnegative)"):
    run()


@pytest.mark.parametrize("padding", ["SAME", "SAME_LOWER"])
def test_padtype_to_pads_refuses_non_positive_strides(padding):
  with pytest.raises(ValueError, match="window_strides must be positive"):
    lax.padtype_to_pads((4, 4), (2, 2), (0, 1), padding)
  assert lax.padtype_to_pads((4, 4), (2, 2), (0, 1), "VALID") == [(0, 0), (0, 0)]
  assert lax.padtype_to_pads((5,), (2,), (2,), padding) == (
      [(0, 1)] if padding == "SAME" else [(1, 0)])
