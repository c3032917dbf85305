"""Keys saying what a jaxpr computes, for caches of compiled programs.

Jaxpr objects compare by identity, and transformations build new ones on
every call (`grad` of an eager `lax.cond`, a loop body wrapped afresh, a
lambda defined in the loop that calls `cond`): a cache keyed on them compiles
again each time. `structure_key(jaxpr)` is a hashable tuple equal for jaxprs
that compute the same thing: the avals of the inputs, each equation's
primitive, parameters (nested jaxprs by their own keys) and operands (as
positions, or literal bits), and which values are returned. Names, source
locations and debug info are left out.

Constants of a closed jaxpr are part of what it computes: small ones enter
the key by value (shape, dtype, bytes), larger ones by identity, and the key
holds them, so an identity is never reused while a cache holds the key.
Parameters that are neither jaxprs nor containers (ints, dtypes, enums,
callables) enter as themselves (NumPy arrays by value; other unhashable values
by identity); callables thus compare by identity, and the key keeps them alive
too.
"""
from __future__ import annotations

import weakref

import numpy as np

from xjax._src import core

# Constants with at most this many elements are keyed by value.
_VALUE_KEYED_SIZE = 64

_closed_keys: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _Identity:
  """A constant keyed by identity; holds it so its id is not reused while keyed."""
  __slots__ = ("value",)

  def __init__(self, value):
    self.value = value

  def __hash__(self):
    return id(self.value)

  def __eq__(self, other):
    return type(other) is _Identity and other.value is self.value


def const_key(value):
  """A constant's part of a key: by value when small and on the host or a device, else by
  identity."""
  aval = core.get_aval(value)
  if not isinstance(aval, core.ShapedArray):  # a token: no data to key on
    return (aval, _Identity(value))
  if aval.size <= _VALUE_KEYED_SIZE and not isinstance(value, core.Tracer):
    try:
      data = np.asarray(value)
    except Exception:  # noqa: BLE001  (e.g. an array of another process's devices)
      return (aval, _Identity(value))
    return (aval, data.tobytes())
  return (aval, _Identity(value))


def structure_key(jaxpr) -> tuple:
  """The key of a `Jaxpr` or `ClosedJaxpr` (see the module docstring)."""
  if isinstance(jaxpr, core.ClosedJaxpr):
    key = _closed_keys.get(jaxpr)
    if key is None:
      key = _closed_keys[jaxpr] = (_jaxpr_key(jaxpr.jaxpr),
                                   tuple(const_key(c) for c in jaxpr.consts))
    return key
  return _jaxpr_key(jaxpr)


def params_key(params: dict) -> tuple:
  """A primitive's parameters as a key: nested jaxprs replaced by their structure keys."""
  return tuple((k, _param_key(v)) for k, v in params.items())


def has_jaxpr_params(params: dict) -> bool:
  """Whether some parameter is (or holds) a jaxpr."""
  return any(_holds_jaxpr(v) for v in params.values())


def _holds_jaxpr(v) -> bool:
  if isinstance(v, (core.ClosedJaxpr, core.Jaxpr)):
    return True
  return isinstance(v, tuple) and any(_holds_jaxpr(x) for x in v)


def _param_key(v):
  if isinstance(v, (core.ClosedJaxpr, core.Jaxpr)):
    return structure_key(v)
  if isinstance(v, (tuple, list)):  # namedtuples too: their type is part of the key
    return (type(v), tuple(_param_key(x) for x in v))
  if isinstance(v, dict):
    return (dict, tuple((k, _param_key(x)) for k, x in v.items()))
  if isinstance(v, np.ndarray):  # e.g. a composite's attributes
    return (np.ndarray, v.dtype.str, v.shape, v.tobytes())
  try:
    hash(v)
  except TypeError:
    return _Identity(v)
  return v


def _jaxpr_key(jaxpr: core.Jaxpr) -> tuple:
  index: dict = {}

  def define(v):
    index[v] = len(index)
    return v.aval

  def use(v):
    if isinstance(v, core.Literal):
      return ("lit", v.aval, np.asarray(v.val).tobytes())
    return index[v]

  constvars = tuple(define(v) for v in jaxpr.constvars)
  invars = tuple(define(v) for v in jaxpr.invars)
  eqns = []
  for eqn in jaxpr.eqns:
    operands = tuple(use(v) for v in eqn.invars)
    outs = tuple(("_", v.aval) if isinstance(v, core.DropVar) else define(v)
                 for v in eqn.outvars)
    eqns.append((eqn.primitive, params_key(eqn.params), operands, outs))
  return (constvars, invars, tuple(eqns), tuple(use(v) for v in jaxpr.outvars))
