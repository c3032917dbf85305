"""JAX's hijax extension API (mirrors `jax.experimental.hijax`): the names with which
libraries define high-level types and primitives. xjax does not carry hi-types through
its transformations; binding a `HiPrimitive` raises NotImplementedError (see
`xjax._src.hijax`)."""
from xjax._src.hijax import (  # noqa: F401
    AbstractValue as AbstractValue,
    AvalMutableQDD as AvalMutableQDD,
    AvalQDD as AvalQDD,
    HiPrimitive as HiPrimitive,
    HiPspec as HiPspec,
    HiType as HiType,
    MutableHiType as MutableHiType,
    VJPHiPrimitive as VJPHiPrimitive,
    Zero as Zero,
    aval_method as aval_method,
    aval_property as aval_property,
    control_flow_allowed_effects as control_flow_allowed_effects,
    instantiate_zeros as instantiate_zeros,
    is_undefined_primal as is_undefined_primal,
    register_hitype as register_hitype,
)
from xjax._src.core import ShapedArray as ShapedArray  # noqa: F401
from xjax._src.state.types import AbstractRef as AbstractRef  # noqa: F401
