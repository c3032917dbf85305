"""Tokens: `lax.create_token`, `lax.after_all` and their primitives.

The printed jaxprs, lowered StableHLO and error messages were recorded from
real JAX 0.10.2; eager values and jit outputs are token objects, as in JAX.
"""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src import core
from xjax._src.array import Token


def jaxpr_str(fun, *args):
  return str(xjax.make_jaxpr(fun)(*args))


def test_abstract_token_prints_tok():
  assert core.abstract_token.str_short() == "Tok"
  assert str(core.abstract_token) == "Tok"
  assert core.get_aval(lax.create_token()) is core.abstract_token


def test_create_token_jaxpr():
  assert jaxpr_str(lambda: lax.create_token()) == (
      "{ lambda ; . let a:Tok = create_token  in (a,) }")
  # The argument is ignored.
  assert jaxpr_str(lambda x: lax.create_token(x), 1.0) == (
      "{ lambda ; a:f32[]. let b:Tok = create_token  in (b,) }")


def test_after_all_jaxpr():
  assert jaxpr_str(lambda x: lax.after_all(lax.create_token(), lax.create_token()), 1.0) == (
      "{ lambda ; a:f32[]. let\n"
      "    b:Tok = create_token \n"
      "    c:Tok = create_token \n"
      "    d:Tok = after_all b c\n"
      "  in (d,) }")
  assert jaxpr_str(lambda x: lax.after_all(), 1.0) == (
      "{ lambda ; a:f32[]. let b:Tok = after_all  in (b,) }")
  tok = lax.create_token()
  assert jaxpr_str(lambda x, t: lax.after_all(t, t), 1.0, tok) == (
      "{ lambda ; a:f32[] b:Tok. let c:Tok = after_all b b in (c,) }")


def test_eager_values_are_tokens():
  tok = lax.create_token()
  assert type(tok) is Token
  merged = lax.after_all(tok, lax.create_token())
  assert type(merged) is Token
  assert merged.block_until_ready() is None
  assert type(lax.after_all()) is Token


def test_jit_returns_and_takes_tokens():
  tok = xjax.jit(lambda: lax.create_token())()
  assert type(tok) is Token
  again = xjax.jit(lambda t: lax.after_all(t))(tok)
  assert type(again) is Token
  again.block_until_ready()
  out_tok, value = xjax.jit(lambda x: (lax.after_all(lax.create_token()), x + 1))(
      jnp.float32(2))
  assert type(out_tok) is Token
  np.testing.assert_array_equal(value, np.float32(3))


def test_lowering_uses_token_type():
  text = xjax.jit(lambda t: lax.after_all(t)).lower(lax.create_token()).compiler_ir()
  assert "@main(%arg0: !stablehlo.token) -> (!stablehlo.token" in text
  assert "stablehlo.after_all" in text
  text = xjax.jit(lambda: lax.create_token()).lower().compiler_ir()
  assert "stablehlo.create_token" in text
  assert "-> (!stablehlo.token" in text


def test_tokens_inside_grad_jvp_and_vmap():
  def f(x):
    lax.after_all(lax.create_token())
    return x * 2

  assert jaxpr_str(lambda x: xjax.jvp(f, (x,), (x,)), 1.0) == (
      "{ lambda ; a:f32[]. let\n"
      "    b:Tok = create_token \n"
      "    _:Tok = after_all b\n"
      "    c:f32[] = mul a 2.0:f32[]\n"
      "    d:f32[] = mul a 2.0:f32[]\n"
      "  in (c, d) }")
  assert jaxpr_str(xjax.vmap(f), jnp.ones(3)) == (
      "{ lambda ; a:f32[3]. let\n"
      "    b:Tok = create_token \n"
      "    _:Tok = after_all b\n"
      "    c:f32[3] = mul a 2.0:f32[]\n"
      "  in (c,) }")
  assert jaxpr_str(lambda x: xjax.grad(lambda x: (lax.create_token(), x * 2)[1])(x), 1.0) == (
      "{ lambda ; a:f32[]. let\n"
      "    _:Tok = create_token \n"
      "    _:f32[] = mul a 2.0:f32[]\n"
      "    b:f32[] = mul 1.0:f32[] 2.0:f32[]\n"
      "  in (b,) }")
  assert float(xjax.grad(f)(3.0)) == 2.0
  np.testing.assert_array_equal(xjax.vmap(f)(jnp.arange(3.0)), np.arange(3.0) * 2)
  primal, tangent = xjax.jit(lambda x: xjax.jvp(f, (x,), (x,)))(1.5)
  assert (float(primal), float(tangent)) == (3.0, 3.0)


def test_after_all_rejects_arrays():
  msg = "Arguments to after_all must be tokens"
  with pytest.raises(TypeError, match=msg):
    lax.after_all(1.0)
  with pytest.raises(TypeError, match=msg):
    lax.after_all(lax.create_token(), jnp.ones(2))
  with pytest.raises(TypeError, match=msg):
    xjax.jit(lax.after_all)(lax.create_token(), 1.0)
  with pytest.raises(TypeError, match=msg):
    xjax.make_jaxpr(lambda x: lax.after_all(x))(1.0)


def test_create_token_takes_at_most_one_argument():
  with pytest.raises(TypeError, match="positional argument"):
    lax.create_token(1, 2)


def test_jit_closing_over_a_token_returns_it():
  tok = lax.create_token()
  y, out = xjax.jit(lambda x: (x + 2, tok))(7)
  assert int(y) == 9 and isinstance(out, type(tok))
