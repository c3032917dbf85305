"""JAX's error classes (mirrors `jax.errors`)."""
from xjax._src.errors import (
    ConcretizationTypeError as ConcretizationTypeError,
    JAXIndexError as JAXIndexError,
    JAXTypeError as JAXTypeError,
    KeyReuseError as KeyReuseError,
    NonConcreteBooleanIndexError as NonConcreteBooleanIndexError,
    TracerArrayConversionError as TracerArrayConversionError,
    TracerBoolConversionError as TracerBoolConversionError,
    TracerIntegerConversionError as TracerIntegerConversionError,
    UnexpectedTracerError as UnexpectedTracerError,
)
