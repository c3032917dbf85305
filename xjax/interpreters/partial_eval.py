"""Partial evaluation and staging of `WrappedFun`s (mirrors `jax.interpreters.partial_eval`).

`trace_to_jaxpr_nounits` runs a function on a mix of known values and unknown
avals (`PartialVal`s): what depends only on known values is computed now, the
rest is staged into a jaxpr. `trace_to_jaxpr_dynamic` stages the whole function.
"""
import typing as _typing
from xjax._src import core as _core
from xjax._src import linear_util as _lu
from xjax._src.interpreters import partial_eval as _pe
from xjax._src.interpreters.partial_eval import (
    DynamicJaxprTracer as DynamicJaxprTracer,
)
from xjax._src.interpreters.registries import dce_rules as dce_rules


class PartialVal(tuple):
  """A known value or an unknown abstract value (mirrors `pe.PartialVal`).

  A pair ``(aval, const)``: ``(None, value)`` is known, ``(aval, None)`` is unknown.
  """

  def __new__(cls, xs: tuple):
    pv, const = xs
    return tuple.__new__(cls, (pv, const))

  @classmethod
  def known(cls, const) -> "PartialVal":
    return PartialVal((None, const))

  @classmethod
  def unknown(cls, aval) -> "PartialVal":
    return PartialVal((aval, None))

  def is_known(self) -> bool:
    return self[0] is None

  def get_known(self):
    """The known value, or None if unknown."""
    return self[1] if self[0] is None else None

  def get_aval(self):
    """The aval: the unknown one, or that of the known value."""
    known = self.get_known()
    return _core.get_aval(known) if known is not None else self[0]


def _flat_call(fun, args):
  if isinstance(fun, _lu.WrappedFun):
    return fun.call_wrapped(*args)
  return fun(*args)


def trace_to_jaxpr_nounits(fun: _lu.WrappedFun, pvals,
                           instantiate=False):
  """Partially evaluates flat `fun` on `pvals` (mirrors `pe.trace_to_jaxpr_nounits`).

  Args:
    fun: a WrappedFun taking and returning flat lists of arrays.
    pvals: one PartialVal per input: known values are used as they are, unknown ones
      become inputs of the staged jaxpr.
    instantiate: a bool, or one per output: make that output unknown (staged) even
      when it is computable from known values.

  Returns:
    ``(jaxpr, out_pvals, consts)``: `jaxpr` takes the unknown inputs (its constvars
    take `consts`) and returns the unknown outputs; `out_pvals` gives each output as
    known (its value) or unknown (its aval).
  """
  trace = _pe.PartialEvalTrace(_core.current_trace())
  args = [trace.new_arg(pv[0]) if pv[0] is not None else pv[1] for pv in pvals]
  with _core.set_current_trace(trace):
    try:
      outs = list(_flat_call(fun, args))
    finally:
      trace.invalidate()
  inst = [instantiate] * len(outs) if isinstance(instantiate, bool) else list(instantiate)
  unknown = [trace.is_unknown(o) or i for o, i in zip(outs, inst)]
  closed = trace.to_jaxpr([o for o, u in zip(outs, unknown) if u])
  out_pvals = [PartialVal.unknown(_core.get_aval(o)) if u else PartialVal.known(o)
               for o, u in zip(outs, unknown)]
  return closed.jaxpr, out_pvals, closed.consts


def trace_to_jaxpr_dynamic(fun: _lu.WrappedFun, in_avals, *, keep_inputs=None,
                           lower: bool = False, auto_dce: bool = False):
  """Stages flat `fun` on `in_avals` into a jaxpr (mirrors `pe.trace_to_jaxpr_dynamic`).

  Returns ``(jaxpr, out_avals, consts)``; the jaxpr's constvars take `consts`.
  `keep_inputs` (one bool per input) drops the inputs marked False from the jaxpr.
  """
  del lower
  debug_info = getattr(fun, "debug_info", None)
  if debug_info is not None and not isinstance(debug_info, _pe.DebugInfo):
    debug_info = None
  closed = _pe.trace_to_jaxpr(lambda *xs: list(_flat_call(fun, xs)), list(in_avals),
                              debug_info)
  jaxpr = closed.jaxpr
  if keep_inputs is not None:
    jaxpr = jaxpr.replace(invars=[v for v, k in zip(jaxpr.invars, keep_inputs) if k])
  if auto_dce:
    jaxpr, _ = _pe.dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars), True)
  return jaxpr, list(closed.out_avals), list(closed.consts)


def dce_jaxpr(jaxpr: _core.Jaxpr, used_outputs, instantiate=False):
  """Dead-code elimination (mirrors `pe.dce_jaxpr`): ``(jaxpr, used_inputs)``.

  `used_outputs` (a bool or one per output) says which outputs to keep; unused
  inputs are dropped unless `instantiate` (a bool or one per input) keeps them.
  """
  if isinstance(used_outputs, bool):
    used_outputs = [used_outputs] * len(jaxpr.outvars)
  return _pe.dce_jaxpr(jaxpr, list(used_outputs), instantiate)


Val = _typing.Any  # a value partial evaluation computes with (`partial_eval.Val`)
