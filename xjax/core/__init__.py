"""Core data structures (mirrors the public parts of `jax.core`)."""
from xjax._src.core import (
    AbstractValue as AbstractValue,
    ClosedJaxpr as ClosedJaxpr,
    Jaxpr as Jaxpr,
    JaxprEqn as JaxprEqn,
    Literal as Literal,
    Primitive as Primitive,
    ShapedArray as ShapedArray,
    Trace as Trace,
    Tracer as Tracer,
    Var as Var,
    eval_jaxpr as eval_jaxpr,
    get_aval as get_aval,
    jaxpr_as_fun as jaxpr_as_fun,
)

# An operand of a jaxpr equation: a variable or a literal (`jax.core.Atom`).
Atom = Var | Literal
