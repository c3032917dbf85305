"""Stackless trace dispatch: nesting, tag matching, lifting, leaks."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src import core
from xjax._src.interpreters import partial_eval as pe


def test_current_trace_is_eval_outside_transformations():
  assert core.current_trace() is core.eval_trace


def test_trace_restored_after_tracing_even_on_error():
  def bad(x):
    raise RuntimeError("boom")
  with pytest.raises(RuntimeError):
    xjax.make_jaxpr(bad)(1.0)
  assert core.current_trace() is core.eval_trace


def test_outer_tracer_lifted_as_constant_into_inner_trace():
  seen = {}

  def outer(x):
    inner_trace = pe.DynamicJaxprTrace()
    arg = inner_trace.new_arg(core.ShapedArray((), np.float32))
    with core.set_current_trace(inner_trace):
      out = lax.add(arg, x)
    closed = inner_trace.to_jaxpr([out])
    seen["consts"] = closed.consts
    seen["jaxpr"] = str(closed)
    return x

  xjax.make_jaxpr(outer)(1.0)
  assert len(seen["consts"]) == 1 and isinstance(seen["consts"][0], core.Tracer)
  assert seen["jaxpr"].startswith("{ lambda a:f32[]; b:f32[]. let")


def test_tracer_of_finished_trace_is_a_leak():
  saved = []
  xjax.make_jaxpr(lambda x: saved.append(x) or x)(1.0)
  with pytest.raises(xjax.errors.UnexpectedTracerError):
    xjax.jit(lambda y: y + saved[0])(1.0)


def test_primitive_without_rule_names_the_rule():
  prim = core.Primitive("no_rules")
  with pytest.raises(NotImplementedError, match="Abstract evaluation rule for 'no_rules' not implemented"):
    xjax.make_jaxpr(lambda x: prim.bind(x))(1.0)


def test_tracer_python_protocols():
  def f(x):
    assert len(x) == 3
    parts = list(x) if hasattr(type(x), "__getitem__") else None
    with pytest.raises(TypeError, match="unhashable"):
      hash(x)
    with pytest.raises(TypeError, match="immutable"):
      x[0] = 1.0
    return x
  xjax.jit(f)(jnp.ones(3))
