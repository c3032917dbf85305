"""NaN/inf debugging (`jax_debug_nans`, `jax_debug_infs`), as JAX does it.

With a flag on, every eager primitive and every jitted call checks its
floating outputs. When a jitted call's output is invalid, the call is run
again de-optimized: its jaxpr equation by equation, each primitive eagerly and
checked, so the error names the primitive that produced the value. Beyond JAX,
the error carries a note naming the user's source line of that equation.
"""
from __future__ import annotations

import threading

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import source_info
from xjax._src.config import config

_state = threading.local()


def check_outputs(name: str, outs) -> None:
  """Raises FloatingPointError when an output has a NaN (or inf), per the debug flags."""
  for out in outs:
    if not dtypes.issubdtype(out.dtype, np.inexact):
      continue
    value = out._value
    if config.jax_debug_nans and np.isnan(value).any():
      raise FloatingPointError(f"invalid value (nan) encountered in {name}")
    if config.jax_debug_infs and np.isinf(value).any():
      raise FloatingPointError(f"invalid value (inf) encountered in {name}")


def _rerunning() -> bool:
  return getattr(_state, "depth", 0) > 0


def _add_source_note(error: BaseException, name: str, info) -> None:
  if getattr(error, "_xjax_source_noted", False) or info is None:
    return
  error.add_note(f"The invalid value was produced by {name} at {info.summarize()}.")
  error._xjax_source_noted = True


def check_primitive(name: str, outs) -> None:
  """`check_outputs` for an eager primitive; the error notes the user's line that ran it."""
  try:
    check_outputs(name, outs)
  except FloatingPointError as e:
    if not _rerunning():  # a de-optimized run notes the equation's own line instead
      _add_source_note(e, name, source_info.current())
    raise


def check_jit(name: str, outs, closed_jaxpr: core.ClosedJaxpr | None, args) -> None:
  """`check_outputs` for a jitted call; on an invalid value, finds its primitive.

  Prints JAX's notice, evaluates `closed_jaxpr` on `args` equation by
  equation with every primitive checked, and raises that FloatingPointError;
  when the de-optimized run produces no invalid value, raises JAX's error
  saying so.
  """
  try:
    check_outputs(name, outs)
  except FloatingPointError as e:
    error = e
  else:
    return
  if closed_jaxpr is None:
    raise error
  print("Invalid nan value encountered in the output of a jax.jit function. "
        "Calling the de-optimized version.")
  _state.depth = getattr(_state, "depth", 0) + 1
  try:
    _eval_checked(closed_jaxpr.jaxpr, closed_jaxpr.consts, args)
  except (FloatingPointError, ZeroDivisionError) as e2:
    raise e2 from None
  finally:
    _state.depth -= 1
  raise FloatingPointError(
      f"{error}. Because jax_config.debug_nans.value and/or config.jax_debug_infs is set, "
      "the de-optimized function (i.e., the function as if the `jit` decorator were "
      "removed) was called in an attempt to get a more precise error message. However, "
      "the de-optimized function did not produce invalid values during its execution. "
      "This behavior can result from `jit` optimizations causing the invalid value to be "
      "produced. It may also arise from having nan/inf literals as inputs or outputs, like "
      "`jax.jit(lambda ...: jax.numpy.nan)(...)`. \n\nIt may be possible to avoid the invalid "
      "value by removing the `jit` decorator, at the cost of losing optimizations. \n\nIf "
      "you see this error, consider opening a bug report at https://github.com/jax-ml/jax."
  ) from None


def _eval_checked(jaxpr: core.Jaxpr, consts, args) -> None:
  """Evaluates `jaxpr` eagerly, noting the source line of the equation that fails a check."""
  env: dict = {}

  def read(v):
    return v.val if type(v) is core.Literal else env[v]

  env.update(zip(jaxpr.constvars, consts, strict=True))
  env.update(zip(jaxpr.invars, args, strict=True))
  for eqn in jaxpr.eqns:
    try:
      outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
    except FloatingPointError as e:
      _add_source_note(e, eqn.primitive.name, eqn.source_info)
      raise
    if not eqn.primitive.multiple_results:
      outs = [outs]
    env.update(zip(eqn.outvars, outs, strict=True))
