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


def test_registry_finds_the_lax_primitives():
  names = {p.values[0].name for p in PRIMITIVES}
  assert {"add", "sin", "convert_element_type", "select_n", "dot_general",
          "broadcast_in_dim", "reshape"} <= names
  assert len(names) >= 70


@pytest.mark.parametrize("primitive", PRIMITIVES)
def test_primitive_has_a_spec(primitive):
  assert id(primitive) in SPECCED, (
      f"primitive '{primitive.name}' has no entry in tests/lax/specs.py")


@pytest.mark.parametrize("primitive", PRIMITIVES)
def test_primitive_has_abstract_eval_and_lowering(primitive):
  missing = [slot for slot in ("abstract_eval", "lowering") if getattr(primitive, slot) is None]
  assert not missing, f"primitive '{primitive.name}' lacks {', '.join(missing)}"


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
