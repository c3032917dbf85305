"""Tokens: `create_token` and `after_all`, XLA's handles for ordering side effects.

A token carries no data. Its aval is `core.abstract_token` (printed ``Tok``),
it lowers to ``!stablehlo.token``, and outside a trace its value is an
`array.Token` holding XLA's token buffer. Tokens have no tangents (the JVP of
either primitive is a symbolic zero) and are never batched.
"""
from __future__ import annotations

from xjax._src import core
from xjax._src import stablehlo as hlo
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.lax.utils import standard_primitive

# ----------------------------------------------------------------------------
# create_token


def create_token(_=None):
  """A new token, with no side effects it must wait for.

  Args:
    _: ignored (accepted for compatibility with older callers that passed an
      array to depend on).

  Returns:
    A token: a `Tok` value while tracing, an `xjax` token object otherwise.

  Mirrors `jax.lax.create_token`.
  """
  return create_token_p.bind()


def _create_token_lowering(ctx):
  return ctx.op1("stablehlo.create_token", [], hlo.TOKEN_TYPE)


create_token_p = standard_primitive("create_token", lambda: core.abstract_token,
                                    _create_token_lowering)
# No operands, so neither a tangent nor a batched value ever reaches it.

# ----------------------------------------------------------------------------
# after_all


def after_all(*operands):
  """A token that is ready only once every token in `operands` is.

  Args:
    *operands: tokens (none at all gives a fresh token).

  Returns:
    A token.

  Raises:
    TypeError: an operand is not a token.

  Mirrors `jax.lax.after_all`.
  """
  return after_all_p.bind(*operands)


def _after_all_abstract_eval(*avals):
  if any(a is not core.abstract_token for a in avals):
    raise TypeError("Arguments to after_all must be tokens")
  return core.abstract_token


def _after_all_lowering(ctx, *tokens):
  return ctx.op1("stablehlo.after_all", tokens, hlo.TOKEN_TYPE)


def _after_all_batch(axis_data, args, dims):
  # Only tokens pass abstract eval, and a token is never batched: any mapped
  # operand is an array, which after_all refuses.
  if any(d is not batching.not_mapped for d in dims):
    raise TypeError("Arguments to after_all must be tokens")
  return after_all_p.bind(*args), batching.not_mapped


after_all_p = standard_primitive("after_all", _after_all_abstract_eval, _after_all_lowering)
ad.defjvp_zero(after_all_p)
after_all_p.def_batch(_after_all_batch)
