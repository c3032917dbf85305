"""Forward- and reverse-mode differentiation rules (mirrors `jax.interpreters.ad`).

`primitive_jvps` and `primitive_transposes` are views of the primitives' `jvp` and
`transpose` rules: ``primitive_jvps[p] = rule`` sets ``p.jvp``. Rule signatures are
JAX's: a jvp rule is ``rule(primals, tangents, **params) -> (primal_out, tangent_out)``
with symbolic `Zero` tangents; a transpose rule is ``rule(cts, *args, **params)`` with
`UndefinedPrimal` for the linear inputs, returning one cotangent (or None) per input.
"""
from xjax._src import core as _core
from xjax._src.interpreters import ad as _ad
from xjax._src.interpreters.ad import (
    JVPTrace as JVPTrace,
    JVPTracer as JVPTracer,
    UndefinedPrimal as UndefinedPrimal,
    Zero as Zero,
    add_tangents as add_tangents,
    defbilinear as defbilinear,
    defjvp as defjvp,
    defjvp2 as defjvp2,
    instantiate_zeros as instantiate_zeros,
    is_undefined_primal as is_undefined_primal,
    zeros_like_aval as zeros_like_aval,
)
from xjax._src.interpreters.registries import (
    primitive_jvps as primitive_jvps,
    primitive_transposes as primitive_transposes,
)

add_jaxvals_p = _ad.add_any_p


def add_jaxvals(x, y):
  """x + y for two tangents of one aval (binds `add_jaxvals_p`, printed ``add_any``)."""
  return add_jaxvals_p.bind(x, y)


def deflinear(primitive, transpose_rule):
  """Makes `primitive` linear in all its arguments (mirrors `jax.interpreters.ad.deflinear`).

  Its jvp applies the primitive to the tangents; its transpose calls
  ``transpose_rule(ct, **params)`` (the arguments are not passed: use `deflinear2`
  for a rule that needs them), which returns one cotangent per argument.
  """
  def transpose(ct, *args, **params):
    if type(ct) is Zero:
      return [Zero(a.aval) if is_undefined_primal(a) else None for a in args]
    return transpose_rule(ct, **params)
  _ad.deflinear(primitive, transpose)


def deflinear2(primitive, transpose_rule):
  """As `deflinear`, with the transpose rule given the arguments:
  ``transpose_rule(ct, *args, **params)`` (mirrors `jax.interpreters.ad.deflinear2`)."""
  def transpose(ct, *args, **params):
    if type(ct) is Zero:
      return [Zero(a.aval) if is_undefined_primal(a) else None for a in args]
    return transpose_rule(ct, *args, **params)
  _ad.deflinear(primitive, transpose)


def get_primitive_transpose(p):
  """The transpose rule of primitive `p`.

  Raises:
    NotImplementedError: `p` has none (JAX's "Transpose rule (for reverse-mode
      differentiation) for 'p' not implemented").
  """
  try:
    return primitive_transposes[p]
  except KeyError:
    raise _core.missing_rule("Transpose", p) from None

