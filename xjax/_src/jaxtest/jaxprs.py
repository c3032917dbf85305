"""Jaxpr inspection of JAX's test suite: equations of a jaxpr and its inner jaxprs, the
precision and preferred element type of its `dot_general` equations, forward and backward
jaxprs of a function, and the jit implementations tests are parameterized over."""
from __future__ import annotations

import functools

from xjax._src import api
from xjax._src import core
from xjax._src.jit import jit


def iter_eqns(jaxpr):
  """Every equation of `jaxpr` and, recursively, of the jaxprs in its equations' params."""
  yield from jaxpr.eqns
  for eqn in jaxpr.eqns:
    for inner in core.jaxprs_in_params(eqn.params):
      yield from iter_eqns(inner)


def _dot_params(fun, args, name):
  jaxpr = api.make_jaxpr(fun)(*args)
  return [eqn.params[name] for eqn in iter_eqns(jaxpr.jaxpr)
          if eqn.primitive.name == "dot_general"]


def assert_dot_precision(expected_precision, fun, *args):
  """Every `dot_general` in `fun`'s jaxpr has precision `expected_precision` (both operands
  when the precision is a pair)."""
  for precision in _dot_params(fun, args, "precision"):
    msg = f"Unexpected precision: {expected_precision} != {precision}"
    if isinstance(precision, tuple):
      assert precision[0] == expected_precision, msg
      assert precision[1] == expected_precision, msg
    else:
      assert precision == expected_precision, msg


def assert_dot_preferred_element_type(expected, fun, *args, **kwargs):
  """Every `dot_general` in the jaxpr of ``fun(*args, **kwargs)`` prefers `expected`."""
  for pref in _dot_params(functools.partial(fun, **kwargs), args, "preferred_element_type"):
    assert expected == pref, f"Unexpected preferred_element_type: {expected} != {pref}"


def fwd_bwd_jaxprs(f, *example_args):
  """The jaxprs of ``vjp(f, *args)`` and of applying its vjp function."""
  fwd_jaxpr, (y_shape, res_shape) = api.make_jaxpr(
      lambda *args: api.vjp(f, *args), return_shape=True)(*example_args)
  bwd_jaxpr = api.make_jaxpr(lambda res, outs: res(outs))(res_shape, y_shape)
  return fwd_jaxpr, bwd_jaxpr


def _noop_jit(f, *args, **kwargs):
  return f


def _named_jit(f, *args, **kwargs):
  return jit(f, *args, **kwargs)


_named_jit._name = "jit"
_noop_jit._name = "noop"
JIT_IMPLEMENTATION = (_named_jit, _noop_jit)
