"""JAX's error classes (mirrors `jax.errors`)."""
from xjax._src.errors import (
    ConcretizationTypeError as ConcretizationTypeError,
    InconclusiveDimensionOperation as InconclusiveDimensionOperation,
    JAXIndexError as JAXIndexError,
    JAXTypeError as JAXTypeError,
    KeyReuseError as KeyReuseError,
    NonConcreteBooleanIndexError as NonConcreteBooleanIndexError,
    TracerArrayConversionError as TracerArrayConversionError,
    TracerBoolConversionError as TracerBoolConversionError,
    TracerIntegerConversionError as TracerIntegerConversionError,
    UnexpectedTracerError as UnexpectedTracerError,
)
from xjax._src.core import JaxprTypeError as JaxprTypeError
from xjax._src import backend as _backend

# The class of errors the runtime reports (a failed host callback, a disallowed transfer,
# a deleted buffer, XLA's own errors): jaxlib's, as in JAX, named after this module.
JaxRuntimeError = _backend.runtime_error_class()
JaxRuntimeError.__module__ = "xjax.errors"
del _backend
