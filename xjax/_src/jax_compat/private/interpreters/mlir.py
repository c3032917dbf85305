"""`jax._src.interpreters.mlir` under `xjax.install_as_jax()`: the rule-writing API of
`jax.interpreters.mlir` (`register_lowering`, `lower_fun`, `LoweringRuleContext`, ...), which
xjax provides publicly, and `_lowerings`, JAX's table of lowering rules by primitive, as a view
of xjax's. JAX's MLIR-object internals (`ir`, `hlo`, `jaxpr_subcomp`, ...) have no counterpart:
xjax lowers to StableHLO text, not through MLIR's Python bindings."""
from xjax._src.interpreters import registries as _registries
from xjax.interpreters.mlir import (  # noqa: F401
    LoweringRuleContext,
    Value,
    emit_python_callback,
    ir_constant,
    ir_constants,
    lower_fun,
    register_lowering,
)


class _Lowerings(_registries.RuleTable):
  """The lowering rules of all primitives: setting an entry registers a rule as
  `register_lowering` does; deleting one removes the primitive's rules (every platform's)."""

  def __setitem__(self, prim, rule):
    register_lowering(prim, rule)

  def __delitem__(self, prim):
    super().__delitem__(prim)
    _registries._platform_lowerings.pop(prim, None)


_lowerings = _Lowerings("_lowerings", "lowering")

# JAX's handlers turning Python values of registered types into MLIR constants. xjax does not
# consult this table: constants reach its programs as device buffers, and a type xjax does not
# know fails there (with an error, never a wrong value). It exists so that code registering
# and removing handlers runs.
_constant_handlers: dict = {}
