"""`jax._src.interpreters.mlir` under `xjax.install_as_jax()`: the rule-writing API of
`jax.interpreters.mlir` (`register_lowering`, `lower_fun`, `LoweringRuleContext`, ...), which
xjax provides publicly. JAX's MLIR-object internals (`ir`, `hlo`, `_lowerings`,
`_constant_handlers`, `jaxpr_subcomp`, ...) have no counterpart: xjax lowers to StableHLO
text, not through MLIR's Python bindings."""
from xjax.interpreters.mlir import (  # noqa: F401
    LoweringRuleContext,
    Value,
    emit_python_callback,
    ir_constant,
    ir_constants,
    lower_fun,
    register_lowering,
)
