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

import contextlib as _contextlib
from typing import Any as _Any

from xjax._src import core as _core
from xjax._src.api import ensure_compile_time_eval as ensure_compile_time_eval  # noqa: E402

ParamDict = dict[str, _Any]  # an equation's params (`jax.core.ParamDict`)
Value = _Any  # a value an interpreter computes with (`jax.core.Value`)


@_contextlib.contextmanager
def eval_context():
  """Runs its body under the eager evaluation trace, outside any transformation
  (mirrors `jax.core.eval_context`)."""
  with _core.set_current_trace(_core.eval_trace):
    yield


def max_dim(d1: int, d2: int) -> int:
  """The larger of two dimension sizes (mirrors `jax.core.max_dim`; xjax's sizes are ints)."""
  return max(d1, d2)


def min_dim(d1: int, d2: int) -> int:
  """The smaller of two dimension sizes (mirrors `jax.core.min_dim`)."""
  return min(d1, d2)
