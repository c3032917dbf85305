"""Lowering rules for primitives (mirrors the rule-writing part of `jax.interpreters.mlir`).

``register_lowering(p, lower_fun(f, multiple_results))`` lowers primitive `p` as the
function `f` written with other primitives: the common case, fully supported. A rule
may also be written by hand as ``rule(ctx, *operands, **params) -> [results]``
using `lower_fun(...)(ctx, ...)`, `emit_python_callback` and `ir_constant`. xjax
lowers to StableHLO text rather than through MLIR's Python bindings, so rules that
construct operations with `jaxlib.mlir` dialects are not supported: lowering such a
primitive raises NotImplementedError naming it.
"""
from xjax._src.interpreters.registries import (
    LoweringRuleContext as LoweringRuleContext,
    emit_python_callback as emit_python_callback,
    ir_constant as ir_constant,
    ir_constants as ir_constants,
    lower_fun as lower_fun,
    register_lowering as register_lowering,
)
from xjax._src.interpreters.lowering import Value as Value
