"""`jax._src.dispatch.apply_primitive` with JAX's signature, for primitives JAX's tests define."""
import functools

import numpy as np

import xjax as jax
import xjax.numpy as jnp
from xjax._src import core
from xjax._src.interpreters import ad
from xjax._src.jax_compat.private import dispatch


def test_apply_primitive_as_a_primitive_impl():
  assert not hasattr(dispatch, "wait_for_tokens")
  token = jax.lax.create_token()
  tok_p = core.Primitive("token_taking_for_alias_test")
  tok_p.def_impl(functools.partial(dispatch.apply_primitive, tok_p))
  tok_p.def_abstract_eval(lambda x, y: x)
  tok_p.def_lowering(lambda ctx, x, y: x)
  ad.defjvp(tok_p, lambda g, x, token: g, None)
  x = jnp.ones((3, 2))
  np.testing.assert_array_equal(tok_p.bind(x, token), x)
  _, f_vjp = jax.vjp(lambda x: tok_p.bind(x, token), x)
  np.testing.assert_array_equal(f_vjp(x)[0], x)
