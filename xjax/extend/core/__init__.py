"""JAX's core data structures for libraries that extend it (mirrors `jax.extend.core`):
primitives, jaxprs and their parts, effects, and the current-trace queries."""
from xjax._src.extend_core import (
    array_types as array_types,
    concrete_or_error as concrete_or_error,
    find_top_trace as find_top_trace,
    gensym as gensym,
    get_opaque_trace_state as get_opaque_trace_state,
    mapped_aval as mapped_aval,
    nonempty_axis_env as nonempty_axis_env_DO_NOT_USE,
    new_jaxpr_eqn as new_jaxpr_eqn,
    no_effects as no_effects,
    primal_dtype_to_tangent_dtype as primal_dtype_to_tangent_dtype,
    set_current_trace as set_current_trace,
    subjaxprs as subjaxprs,
    take_current_trace as take_current_trace,
    unmapped_aval as unmapped_aval,
    unsafe_am_i_under_a_jit as unsafe_am_i_under_a_jit_DO_NOT_USE,
    unsafe_am_i_under_a_vmap as unsafe_am_i_under_a_vmap_DO_NOT_USE,
    unsafe_get_axis_names as unsafe_get_axis_names_DO_NOT_USE,
    Effects as Effects,
)
from xjax._src.array import Token as Token
from xjax._src.core import (
    AbstractToken as AbstractToken,
    ClosedJaxpr as ClosedJaxpr,
    DropVar as DropVar,
    Jaxpr as Jaxpr,
    JaxprEqn as JaxprEqn,
    JaxprTypeError as JaxprTypeError,
    Literal as Literal,
    Primitive as Primitive,
    TraceTag as TraceTag,
    Var as Var,
    jaxpr_as_fun as jaxpr_as_fun,
    jaxprs_in_params as jaxprs_in_params,
    typecheck_jaxpr as check_jaxpr,
    valid_jaxtype as valid_jaxtype,
)
from xjax._src.effects import Effect as Effect
from xjax._src.interpreters.partial_eval import DebugInfo as DebugInfo
from xjax.extend.core import primitives as primitives
from xjax._src.errors import InconclusiveDimensionOperation as InconclusiveDimensionOperation
