"""`jax._src.core` under `xjax.install_as_jax()`: aliases of xjax's core machinery for the
private names client libraries import (numpyro: `trace_state_clean`)."""
from xjax._src.core import trace_state_clean as trace_state_clean
# flax's fp8 layers annotate with `ShapedArray`.
from xjax._src.core import ShapedArray as ShapedArray  # noqa: E402
# JAX's core module re-exports its tracer errors (JAX's tests catch core.ConcretizationTypeError).
from xjax._src.errors import (  # noqa: E402
    ConcretizationTypeError as ConcretizationTypeError,
    TracerArrayConversionError as TracerArrayConversionError,
    TracerBoolConversionError as TracerBoolConversionError,
    TracerIntegerConversionError as TracerIntegerConversionError,
)
# JAX's jaxpr type checker (JAX's tests check malformed control-flow params with it).
from xjax._src.core import typecheck_jaxpr as check_jaxpr  # noqa: E402
# JAX's tests catch core.UnexpectedTracerError and check core.Token instances.
from xjax._src.errors import UnexpectedTracerError as UnexpectedTracerError  # noqa: E402
from xjax._src.array import Token as Token  # noqa: E402


def eval_context():
  """A context in which operations run eagerly (the evaluation trace current), even inside
  a transformation: JAX's ``core.eval_context``."""
  from xjax._src import core as _core
  return _core.set_current_trace(_core.eval_trace)


# The varying-manual-axes types (JAX's tests read `core.typeof(x).mat.varying`).
from xjax._src.api import typeof as typeof  # noqa: E402
from xjax._src.vma import ManualAxisType as ManualAxisType  # noqa: E402
