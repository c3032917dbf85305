"""Completeness by machine: every lax primitive has a spec entry and the rules it needs.

The primitives are found by walking the `xjax._src.lax` package, so a
primitive added without a spec in `specs.py` (or without an abstract eval or a
lowering) fails here. `impl` may stay None: eager evaluation is generic.
"""
import importlib
import pkgutil

import numpy as np
import pytest

import xjax
import xjax._src.lax
from xjax._src import core

import specs


def _lax_modules():
  package = xjax._src.lax
  yield from (importlib.import_module(info.name) for info in
              pkgutil.walk_packages(package.__path__, prefix=package.__name__ + "."))


def _lax_primitives():
  """Every Primitive held by a module of xjax._src.lax, with the module that defines it."""
  found = {}
  for module in _lax_modules():
    for value in vars(module).values():
      if isinstance(value, core.Primitive) and id(value) not in found:
        found[id(value)] = (module.__name__, value)
  return sorted(found.values(), key=lambda mp: (mp[0], mp[1].name))


PRIMITIVES = [pytest.param(p, id=f"{m.rsplit('.', 1)[-1]}.{p.name}") for m, p in _lax_primitives()]
SPECCED = {id(s.primitive) for s in specs.SPECS}

# Primitives the spec table cannot drive (it calls them eagerly, outside any named
# axis); their own tests say where they are covered.
NO_SPEC = {
    "psum", "pmax", "pmin", "axis_index", "all_gather", "ppermute",  # tests/api/test_vmap.py
    "cond", "while", "scan",  # tests/lax/control_flow
}


def test_registry_finds_the_lax_primitives():
  names = {p.values[0].name for p in PRIMITIVES}
  assert {"add", "sin", "convert_element_type", "select_n", "dot_general",
          "broadcast_in_dim", "reshape"} <= names
  assert len(names) >= 70


@pytest.mark.parametrize("primitive", PRIMITIVES)
def test_primitive_has_a_spec(primitive):
  if primitive.name in NO_SPEC:
    return
  assert id(primitive) in SPECCED, (
      f"primitive '{primitive.name}' has no entry in tests/lax/specs.py")


@pytest.mark.parametrize("primitive", PRIMITIVES)
def test_primitive_has_abstract_eval_and_lowering(primitive):
  missing = [slot for slot in ("abstract_eval", "lowering") if getattr(primitive, slot) is None]
  assert not missing, f"primitive '{primitive.name}' lacks {', '.join(missing)}"


def _higher_order_primitives():
  from xjax._src import checkpoint, custom_derivatives, jit
  from xjax._src.interpreters import ad
  return [jit.jit_p, checkpoint.checkpoint_p, custom_derivatives.custom_jvp_call_p,
          custom_derivatives.custom_vjp_call_p, ad.add_any_p, ad.stop_gradient_p]


# iota has no operands, so no batch trace ever hands it a batched one.
NO_BATCH_RULE = {"iota"}


@pytest.mark.parametrize("primitive", PRIMITIVES + [
    pytest.param(p, id=f"core.{p.name}") for p in _higher_order_primitives()])
def test_primitive_has_a_batching_rule(primitive):
  if primitive.name in NO_BATCH_RULE:
    return
  assert primitive.batch is not None, f"primitive '{primitive.name}' has no batching rule"


def _eqn_primitives(jaxpr):
  for eqn in jaxpr.eqns:
    yield eqn.primitive
    for value in eqn.params.values():
      inner = getattr(value, "jaxpr", None)
      if inner is not None:
        yield from _eqn_primitives(getattr(inner, "jaxpr", inner))


@pytest.mark.parametrize("spec", [pytest.param(s, id=s.name) for s in specs.SPECS])
def test_spec_fun_binds_its_primitive(spec):
  """Each entry really exercises the primitive it claims (its jaxpr contains it)."""
  config = next((c for c in spec.configs if c.kind == "general"), spec.configs[0])
  dtype = next(d for d in spec.dtypes if not specs.x64_dtype(d))
  if "new_dtype" in config.params and config.params["new_dtype"] == dtype:
    config = specs.Config(config.shapes, {**config.params, "new_dtype": specs.BOOL
                                           if dtype != specs.BOOL else specs.I32})
  args = spec.make_args(np.random.default_rng(0), config, dtype)
  params = spec.params_for(config, dtype)
  closed = xjax.make_jaxpr(lambda *a: spec.fun(*a, **params))(*args)
  assert spec.primitive in set(_eqn_primitives(closed.jaxpr)), str(closed)


# ----------------------------------------------------------------------------
# Derivative rules: the slots a spec's grad_order and linear fields call for


def _specs_of(primitive):
  return [s for s in specs.SPECS if s.primitive is primitive]


@pytest.mark.parametrize("primitive", PRIMITIVES)
def test_differentiable_primitive_has_a_jvp_rule(primitive):
  """A spec with grad_order > 0 (a derivative to check) needs the primitive's jvp rule."""
  orders = {s.name: s.grad_order for s in _specs_of(primitive) if s.grad_order > 0}
  assert not orders or primitive.jvp is not None, (
      f"primitive '{primitive.name}' has grad_order {orders} in specs.py but no jvp rule")


@pytest.mark.parametrize("primitive", PRIMITIVES)
def test_linear_primitive_has_a_transpose_rule(primitive):
  linear = {s.name: s.linear for s in _specs_of(primitive) if s.linear}
  assert not linear or primitive.transpose is not None, (
      f"primitive '{primitive.name}' is linear in {linear} in specs.py but has no transpose rule")


def _has_non_inexact_result(spec) -> bool:
  """Whether the spec's primitive gives an integer or bool result from array operands."""
  if not spec.makers:
    return False
  general = [c for c in spec.configs if c.kind == "general"] or list(spec.configs[:1])
  by_params = {repr(sorted(c.params.items())): c for c in reversed(general)}
  for config in by_params.values():
    for dtype in spec.dtypes:
      params = spec.params_for(config, dtype)
      if specs.x64_dtype(dtype) or any(specs.x64_dtype(v) for v in params.values()
                                       if isinstance(v, np.dtype)):
        continue
      args = spec.make_args(np.random.default_rng(0), config, dtype)
      structs = xjax.eval_shape(lambda *a: spec.fun(*a, **params), *args)
      if any(np.dtype(s.dtype).kind in "biu" for s in xjax.tree_util.tree_leaves(structs)):
        return True
  return False


INTEGER_RESULT_PRIMITIVES = [p for p in PRIMITIVES
                             if any(map(_has_non_inexact_result, _specs_of(p.values[0])))]


def test_integer_result_primitives_are_found():
  names = {p.values[0].name for p in INTEGER_RESULT_PRIMITIVES}
  assert {"eq", "lt", "is_finite", "population_count", "convert_element_type"} <= names


@pytest.mark.parametrize("primitive", INTEGER_RESULT_PRIMITIVES)
def test_integer_result_primitive_has_a_zero_jvp_rule(primitive):
  """Integer and bool results have float0 tangents, but the rule must exist: a float
  operand's tangent reaches it (comparisons, is_finite, conversions to int)."""
  assert primitive.jvp is not None, (
      f"primitive '{primitive.name}' has integer or bool results but no jvp rule "
      "(use ad.defjvp_zero)")
