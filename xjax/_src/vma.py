"""Varying-manual-axes (vma) types: which manual mesh axes a value varies along.

Inside the body of a `shard_map` with ``check_vma=True`` every aval carries
``vma``, the set of manual mesh axes along which the value may differ between
devices (JAX 0.10.2's ``aval.mat.varying``; printed ``f32[8]{V:x}``):

* the body's arguments vary along the mesh axes their in_specs name (and along
  whatever their values already varied on, for nested shard_maps);
* a primitive's results vary along the union of its operands' axes, except
  for the rules in `_RULES`: reductions over named axes (psum, pmax, pmin) make
  the result invariant along them, `axis_index` varies along its axis and
  `pvary` adds its axes;
* a higher-order primitive (jit, cond, scan, ...) keeps the types its
  sub-jaxprs give its results.

The rule runs from `core.Primitive.def_abstract_eval`'s wrapper while
``core.trace_ctx.check_vma`` is set (by the shard_map body's tracing); then
`core.Primitive.bind` also casts (`pvary`) the operands of an n-ary primitive
that vary along fewer axes than the others (`insert_pvary`), and the
collectives cast theirs to vary along the collective's axes, as JAX does.
A `pvary` changes no value: xjax keeps JAX's check_vma=False rules for
transposition (pvary transposes to the identity, psum to a psum).
"""
from __future__ import annotations

import numpy as np

from xjax._src.config import config

_EMPTY = frozenset()


class ManualAxisType:
  """A value's manual axis type: the mesh axes it is varying, unreduced and reduced along.

  Mirrors JAX's `jax._src.core.ManualAxisType` (``aval.mat``). xjax has no
  unreduced or reduced manual types: those two are always empty.
  """
  __slots__ = ("varying", "unreduced", "reduced")

  def __init__(self, *, varying=_EMPTY, unreduced=_EMPTY, reduced=_EMPTY):
    varying, unreduced, reduced = frozenset(varying), frozenset(unreduced), frozenset(reduced)
    if varying & unreduced:
      raise ValueError("varying and unreduced cannot have common mesh axes. Got "
                       f"varying={varying} and unreduced={unreduced}")
    if varying & reduced:
      raise ValueError("varying and reduced cannot have common mesh axes. Got "
                       f"varying={varying} and reduced={reduced}")
    self.varying, self.unreduced, self.reduced = varying, unreduced, reduced

  def invarying(self, mesh) -> frozenset:
    """The manual axes of `mesh` along which the value is the same on every device."""
    return frozenset(mesh.manual_axes) - self.vur

  @property
  def vur(self) -> frozenset:
    """All axes of the three kinds."""
    return self.varying | self.unreduced | self.reduced

  def __eq__(self, other):
    return (isinstance(other, ManualAxisType) and self.varying == other.varying
            and self.unreduced == other.unreduced and self.reduced == other.reduced)

  def __hash__(self):
    return hash((self.varying, self.unreduced, self.reduced))

  def __repr__(self):
    return (f"ManualAxisType(varying={self.varying}, unreduced={self.unreduced}, "
            f"reduced={self.reduced})")

  def update(self, **kwargs) -> ManualAxisType:
    fields = dict(varying=self.varying, unreduced=self.unreduced, reduced=self.reduced)
    fields.update(kwargs)
    return ManualAxisType(**fields)


def vma_str(vma) -> str:
  """``{V:x}`` or ``{V:(x,y)}`` (axes sorted by name); empty for no axes."""
  if not vma:
    return ""
  names = sorted(map(str, vma))
  shown = names[0] if len(names) == 1 else f"({','.join(names)})"
  return f"{{V:{shown}}}"


def names_param(value) -> frozenset:
  """The axis names in a collective's axes param (positional int axes left out)."""
  values = value if isinstance(value, (tuple, list)) else (value,)
  return frozenset(v for v in values if not isinstance(v, int))


def _union(avals) -> frozenset:
  out = _EMPTY
  for a in avals:
    v = getattr(a, "vma", _EMPTY)
    if v:
      out = out | v
  return out


def _reduction(avals, params):
  if params.get("axis_index_groups") is not None:
    return _union(avals)
  return _union(avals) - names_param(params["axes"])


_RULES = {
    "psum": _reduction,
    "pmax": _reduction,
    "pmin": _reduction,
    "axis_index": lambda avals, params: names_param(params["axis_name"]),
    "pvary": lambda avals, params: _union(avals) | names_param(params["axes"]),
}


def register_rule(name: str, rule) -> None:
  """Sets the vma rule of primitive `name`: ``rule(avals, params) -> frozenset``."""
  _RULES[name] = rule


pvary = None  # (x, axes) -> x cast to vary along axes: set by lax.parallel


def match_primal(ct, primal_aval):
  """A cotangent made to vary along every axis its primal varies along (as JAX's types
  require; a `pvary`, which changes no value)."""
  missing = getattr(primal_aval, "vma", _EMPTY) - getattr(getattr(ct, "aval", None), "vma",
                                                           _EMPTY)
  if not missing or pvary is None or not hasattr(ct, "aval"):
    return ct
  return pvary(ct, tuple(sorted(missing, key=str)))


# Primitives whose operands keep their own types: collectives, casts, state and the like.
_NO_INSERT = frozenset({"psum", "pmax", "pmin", "all_gather", "all_gather_invariant",
                        "reduce_scatter", "all_to_all", "ppermute", "pbroadcast", "pvary",
                        "get", "swap", "addupdate", "ref_get", "ref_swap", "ref_addupdate"})


def insert_pvary(prim, args, params):
  """`args` with a `pvary` on each array operand that varies along fewer manual axes than
  the others together (JAX's automatic insertion, `core.auto_insert_reshard`; Python
  scalars and NumPy values included): the operands of an n-ary primitive then have one
  type. Higher-order primitives, collectives and state primitives are skipped."""
  if pvary is None or prim.name in _NO_INSERT or not config.jax_auto_pcast:
    return args
  vmas = [_operand_vma(a) for a in args]
  present = [v for v in vmas if v is not None]
  union = _EMPTY.union(*present)
  if all(v == union for v in present) or _has_jaxprs(params, _jaxpr_types):
    return args
  from xjax._src import core  # (imports this module: not at the top)
  order = list(core.trace_ctx.axis_env)
  rank = lambda n: (order.index(n) if n in order else len(order), str(n))
  return tuple(a if v is None or v == union else pvary(a, tuple(sorted(union - v, key=rank)))
               for a, v in zip(args, vmas))


def _operand_vma(x):
  """An operand's vma; None for what no pvary applies to (tokens, refs, other objects)."""
  aval = getattr(x, "aval", None)
  if aval is None:
    return _EMPTY if isinstance(x, (bool, int, float, complex, np.ndarray, np.generic)) else None
  return getattr(aval, "vma", None)


_jaxpr_types = ()  # (Jaxpr, ClosedJaxpr): set by make_hook


def _has_jaxprs(params, jaxpr_types) -> bool:
  for v in params.values():
    if isinstance(v, jaxpr_types):
      return True
    if isinstance(v, tuple) and v and isinstance(v[0], jaxpr_types):
      return True
  return False


def _check_equal(prim, avals, shaped) -> None:
  """JAX's error for operands of different vma where no pvary was inserted (auto_pcast off)."""
  vmas = [a.vma for a in avals if type(a) is shaped]
  if any(v != vmas[0] for v in vmas[1:]):
    raise ValueError(
        f"Primitive {prim.name} requires varying manual axes to match, but got {vmas}. "
        "Please open an issue at https://github.com/jax-ml/jax/issues and as a temporary "
        "workaround pass the check_vma=False argument to `jax.shard_map`")


def make_hook(core):
  """The `core.vma_rule_hook`: sets the vma of a primitive's abstract-eval results."""
  global _jaxpr_types
  shaped, jaxpr_types = core.ShapedArray, (core.Jaxpr, core.ClosedJaxpr)
  _jaxpr_types = jaxpr_types

  def with_vma(aval, vma):
    if type(aval) is shaped and aval.vma != vma:
      return aval.update(vma=vma)
    return aval

  def hook(prim, avals, params, out):
    rule = _RULES.get(prim.name)
    if rule is not None:
      vma = rule(avals, params)
    elif _has_jaxprs(params, jaxpr_types):
      return out  # the sub-jaxprs typed the results
    else:
      vma = _union(avals)
      if not config.jax_auto_pcast and prim.name not in _NO_INSERT:
        _check_equal(prim, avals, shaped)
    if prim.multiple_results:
      return [with_vma(a, vma) for a in out]
    return with_vma(out, vma)
  return hook


class checking:
  """Context manager turning the vma rules on (or off) for the tracing inside it."""
  __slots__ = ("core", "on", "prev")

  def __init__(self, core, on: bool):
    self.core, self.on = core, on

  def __enter__(self):
    self.prev = self.core.trace_ctx.check_vma
    self.core.trace_ctx.check_vma = self.on

  def __exit__(self, *exc):
    self.core.trace_ctx.check_vma = self.prev
