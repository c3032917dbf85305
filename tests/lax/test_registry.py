"""Completeness by machine: every primitive has the rules it needs, and a spec.

The primitives are found by importing every module of the `xjax` package and
collecting the `core.Primitive` instances they hold (lax, random, jit,
checkpoint, custom derivatives, the ad helpers, control flow, collectives),
and checked against every Primitive alive, so one made inside a function is
not missed. No hand list names them.

Each primitive needs, unless `GAPS` names it with the reason:

* `abstract_eval` and `lowering`;
* `jvp` (a primitive without one is declared non-differentiable in `GAPS`);
* `batch`;
* `transpose`, when the spec table marks it linear in some operand;
* `partial_eval`, when it is higher-order (its params carry jaxprs): without
  it the generic rule stages the whole equation, and the known part of its
  jaxpr would become unknown.
* `dce_rule`, when it is higher-order: without it dead-code elimination keeps
  or drops the whole equation, never the unused parts of its jaxpr;
* `discharge`, when it is a state primitive (`ref_primitive`): it must have a
  functional meaning before lowering.

Every primitive declares these slots (and `ref_primitive`, `ref_allocating`)
in `core.Primitive.__init__`, so no interpreter reads them with a default.

A rule whose body only raises does not count as present. `impl` may stay
None: eager evaluation is generic.
"""
import ast
import functools
import gc
import importlib
import inspect
import os
import pkgutil
import textwrap

import numpy as np
import pytest

import xjax
from xjax._src import core

import specs

RULE_SLOTS = ("impl", "abstract_eval", "jvp", "transpose", "batch", "lowering", "partial_eval",
              "dce_rule", "discharge")

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _xjax_modules():
  yield xjax
  for info in pkgutil.walk_packages(xjax.__path__, prefix="xjax."):
    yield importlib.import_module(info.name)


def _all_primitives():
  """Every Primitive held by a module of xjax, sorted by name."""
  found = {}
  for module in _xjax_modules():
    for value in vars(module).values():
      if isinstance(value, core.Primitive):
        found[id(value)] = value
  return sorted(found.values(), key=lambda p: p.name)


ALL = _all_primitives()
BY_NAME = {p.name: p for p in ALL}
PRIMITIVES = [pytest.param(p, id=p.name) for p in ALL]
SPECCED = {id(s.primitive) for s in specs.SPECS}


def _defined_in_xjax(primitive) -> bool:
  rules = [getattr(primitive, slot) for slot in RULE_SLOTS]
  # A library's primitive (jax.extend.core.Primitive) may get rules built by xjax's
  # helpers (ad.defjvp, batching.defvectorized, ...); its abstract_eval is its own.
  own = getattr(primitive.abstract_eval, "__module__", None) or "xjax."
  return own.startswith("xjax.") and any(
      getattr(r, "__module__", "").startswith("xjax.") for r in rules if r is not None)


def test_registry_finds_every_primitive():
  assert len(BY_NAME) == len(ALL), "two primitives share a name"
  assert {"add", "sin", "convert_element_type", "select_n", "dot_general", "broadcast_in_dim",
          "reshape", "jit", "remat2", "custom_jvp_call", "custom_vjp_call", "custom_lin",
          "add_any", "stop_gradient", "cond", "while", "scan", "psum", "axis_index",
          "threefry2x32", "random_bits", "random_gamma"} <= set(BY_NAME)
  assert len(ALL) >= 120


def test_every_live_primitive_is_held_by_a_module():
  """A primitive kept only in a function's closure or a table would escape the walk."""
  found = {id(p) for p in ALL}
  alive = [o for o in gc.get_objects() if isinstance(o, core.Primitive) and _defined_in_xjax(o)]
  missing = [p.name for p in alive if id(p) not in found]
  assert not missing, f"primitives no module holds: {missing}"


# ----------------------------------------------------------------------------
# Known gaps: slot -> {primitive name: why it has no (real) rule}


_CUSTOM_LIN = ("the tangent part of a custom_vjp function's JVP: it is only transposed; "
               "forward mode of a custom_vjp function is an error, as in JAX")
_COMBINER = ("its jaxpr is a scalar combiner applied per element, not a body over the "
             "operands: it is staged whole like a first-order primitive, as in JAX")

_DISCHARGED = "a state primitive: discharged into functional code before lowering, as in JAX"

GAPS = {
    "lowering": {
        **dict.fromkeys(("new_ref", "empty_ref", "free_ref", "freeze", "get", "swap",
                         "addupdate", "broadcast_to"), _DISCHARGED),
        "custom_lin": "raises JAX's TypeError (forward mode of a custom_vjp function) when "
                      "a jvp of one is compiled",
    },
    "jvp": {  # declared non-differentiable; JAX 0.10.2 has no rule for these either
        "empty2": "no operands: no tangent ever reaches it",
        "iota": "no operands: no tangent ever reaches it",
        "axis_index": "no operands: no tangent ever reaches it",
        "threefry2x32": "uint32 operands: their tangents are always symbolic zeros",
        "nextafter": "not differentiable in JAX",
        "pmax": "not differentiable in JAX",
        "pmin": "not differentiable in JAX",
        "rng_uniform": "not differentiable in JAX (XLA's stateful generator)",
        "empty": "no operands: no tangent ever reaches it",
        "platform_index": "no operands: no tangent ever reaches it",
        "custom_lin": _CUSTOM_LIN,
        "composite": "JAX 0.10.2 has no JVP rule for composite (it raises JAX's ValueError)",
        "scaled_dot": "JAX 0.10.2 has no JVP or transpose rule for scaled_dot either",
        "create_token": "no operands: no tangent ever reaches it",
        "empty_ref": "no operands: no tangent ever reaches it",
        **dict.fromkeys(("schur", "hessenberg", "tridiagonal", "symmetric_product",
                         "cholesky_update", "geqrf", "geqp3", "householder_product", "ormqr"),
                        "JAX 0.10.2 defines no JVP rule for it either"),
        "select_and_scatter": "JAX 0.10.2 defines no JVP rule for it either",
        "zeta": "JAX 0.10.2 defines no JVP rule for it either",
        "igamma_grad_a": "JAX 0.10.2 defines no JVP rule for it either",
        "pure_callback": "its JVP rule raises JAX's ValueError (wrap it in custom_jvp)",
        "io_callback": "its JVP rule raises JAX's ValueError, as in JAX",
    },
    "batch": {
        "linear_call": "JAX 0.10.2 has no batching rule for it either (NotImplementedError)",
        "empty2": "no operands: no batch trace ever hands it a batched one (JAX has no rule either)",
        "iota": "no operands: no batch trace ever hands it a batched one",
        "platform_index": "no operands: no batch trace ever hands it a batched one",
        "rng_uniform": "JAX has no batching rule for it either: vmap raises NotImplementedError",
        "custom_lin": _CUSTOM_LIN,
        "composite": "JAX 0.10.2 has no batching rule for composite (NotImplementedError)",
        "create_token": "no operands: no batch trace ever hands it a batched one",
        "empty_ref": "no operands: no batch trace ever hands it a batched one",
        "cholesky_update": "JAX 0.10.2 has no batching rule for it either (rank-2 and rank-1 "
                           "operands only)",
    },
    "dce_rule": {
        **dict.fromkeys(("reduce", "scatter", "scatter-add", "scatter-sub", "scatter-mul",
                         "scatter-min", "scatter-max", "reduce_window", "select_and_scatter"),
                        _COMBINER),
        "while": "JAX 0.10.2 has no DCE rule for while either: every carry feeds the next "
                 "iteration, so the loop stays whole",
        "composite": "JAX 0.10.2 has no DCE rule for composite either: its decomposition is "
                     "kept whole, as the custom call it names",
    },
    "partial_eval": {
        "remat_opt": "as JAX, which has no partial-eval rule for it: the whole equation is "
                     "staged (custom_vjp binds it on known primals, in its fwd rule)",
        "reduce": _COMBINER,
        "scatter": _COMBINER,
        "scatter-add": _COMBINER,
        "scatter-sub": _COMBINER,
        "scatter-mul": _COMBINER,
        "scatter-min": _COMBINER,
        "scatter-max": _COMBINER,
        "reduce_window": _COMBINER,
        "select_and_scatter": _COMBINER,
    },
}

# Primitives the spec table cannot drive, and the tests that cover them.
NO_SPEC = {
    **dict.fromkeys(("psum", "pmax", "pmin", "axis_index", "all_gather", "ppermute"),
                    "api/test_vmap.py"),  # only defined inside a named axis
    **dict.fromkeys(("cond", "while", "scan"), "lax/control_flow/test_control_flow.py"),
    "jit": "api/test_jit.py",
    "all_gather_invariant": "multidevice/test_shard_map_vma_types.py",  # inside shard_map only
    **dict.fromkeys(("call", "closed_call"), "extend/test_extend.py"),
    "name": "core/test_checkpoint_policies.py",
    "linear_call": "core/test_linear_call.py",
    **dict.fromkeys(("random_wrap", "random_unwrap"), "core/test_derivative_printing.py"),
    "custom_vmap_call": "core/test_custom_batching.py",
    "empty2": "lax/test_control_flow_ad_printing.py",
    **dict.fromkeys(("remat2", "custom_jvp_call", "custom_vjp_call", "custom_lin",
                     "add_any", "remat_opt"), "api/test_grad.py"),
    **dict.fromkeys(("random_seed", "random_bits", "random_split", "random_fold_in",
                     "random_gamma"), "random/test_transforms.py"),
    "threefry2x32": "random/test_threefry.py",
    "platform_index": "lax/control_flow/test_platform_dependent.py",
    **dict.fromkeys(("stack", "unstack", "tile", "mulhi", "eq_to", "le_to", "lt_to",
                     "optimization_barrier", "stage", "dce_sink", "empty", "rng_uniform",
                     "rng_bit_generator", "approx_top_k"), "lax/test_lax_extra_a.py"),
    **dict.fromkeys(("custom_linear_solve", "composite"), "lax/test_lax_extra_b.py"),
    "ragged_dot_general": "lax/test_ragged_dot.py",
    "scaled_dot": "lax/test_scaled_dot.py",
    **dict.fromkeys(("create_token", "after_all"), "lax/test_tokens.py"),  # Tok operands
    "device_put": "lax/test_device_put.py",  # jaxprs print device placements
    # Over several devices: tests/multidevice runs with 8 forced CPU devices.
    "sharding_constraint": "multidevice/test_sharding.py",
    "reshard": "multidevice/test_explicit_sharding.py",
    **dict.fromkeys(("reduce_scatter", "all_to_all", "pbroadcast", "pvary"),
                    "lax/test_parallel_collectives.py"),
    "shard_map": "multidevice/test_shard_map.py",
    "inspect_sharding": "multidevice/test_visualize.py",
    **dict.fromkeys(("pure_callback", "io_callback"), "debugging/test_callbacks.py"),
    **dict.fromkeys(("debug_callback", "debug_print"), "debugging/test_debug_print.py"),
    "check": "debugging/test_checkify.py",
    **dict.fromkeys(("new_ref", "empty_ref", "free_ref", "freeze", "get", "swap", "addupdate",
                     "broadcast_to"), "state/test_refs.py"),
    # Matrix decompositions: values are checked by identities (Q R = A, ...) per case.
    **dict.fromkeys(("cholesky", "triangular_solve"), "linalg/test_lax_cholesky_trsm.py"),
    **dict.fromkeys(("eigh", "svd", "eig"), "linalg/test_lax_eigh_svd_eig.py"),
    **dict.fromkeys(("lu", "lu_pivots_to_permutation", "qr", "geqrf", "geqp3",
                     "householder_product", "ormqr"), "linalg/test_lax_lu_qr.py"),
    **dict.fromkeys(("schur", "hessenberg", "tridiagonal", "tridiagonal_solve",
                     "symmetric_product", "cholesky_update"), "linalg/test_lax_schur_tridiag.py"),
    "fft": "fft/test_lax_fft.py",
    "conv_general_dilated": "lax/test_convolution.py",
    **dict.fromkeys(("reduce_window", "reduce_window_sum", "reduce_window_max",
                     "reduce_window_min", "select_and_scatter", "select_and_scatter_add",
                     "select_and_gather_add"), "lax/test_windowed_reductions.py"),
    **dict.fromkeys(("bessel_i0e", "bessel_i1e", "igamma", "igammac", "igamma_grad_a",
                     "regularized_incomplete_beta", "zeta"), "lax/test_special.py"),
}


def _body(node):
  body = node.body
  if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
    body = body[1:]  # the docstring
  return body


def _returns(node) -> bool:
  """Whether `node` holds a return or yield outside nested functions."""
  for child in ast.iter_child_nodes(node):
    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
      continue
    if isinstance(child, (ast.Return, ast.Yield, ast.YieldFrom)) or _returns(child):
      return True
  return False


def only_raises(rule) -> bool:
  """Whether `rule`'s body ends in a raise and never returns (a placeholder, not a rule)."""
  while isinstance(rule, functools.partial):
    rule = rule.func
  try:
    tree = ast.parse(textwrap.dedent(inspect.getsource(inspect.unwrap(rule))))
  except (OSError, TypeError, SyntaxError):  # a builtin, or a lambda inside an expression
    return False
  node = tree.body[0]
  if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  body = _body(node)
  return bool(body) and isinstance(body[-1], ast.Raise) and not any(map(_returns, body))


def test_only_raises_tells_placeholders_from_rules():
  def placeholder(ctx, x, **params):
    """Doc."""
    raise NameError("unbound axis name: i")

  def checks_then_returns(x, *, axes):
    if axes:
      raise NameError("unbound")
    return x

  def returns_from_a_branch(x):
    if x:
      return x
    raise ValueError

  assert only_raises(placeholder)
  assert only_raises(functools.partial(placeholder, None))
  assert not only_raises(checks_then_returns)
  assert not only_raises(returns_from_a_branch)
  assert not only_raises(lambda x: x)
  assert not only_raises(len)


def has_rule(primitive, slot: str) -> bool:
  rule = getattr(primitive, slot)
  return rule is not None and not only_raises(rule)


_JAXPR_PARAM_NAMES = ("jaxpr", "branches")


def _param_names(primitive) -> set:
  """The keyword parameters (the params) its rules take."""
  names = set()
  for slot in RULE_SLOTS:
    rule = getattr(primitive, slot)
    while isinstance(rule, functools.partial):
      rule = rule.func
    try:
      parameters = inspect.signature(rule).parameters.values() if rule is not None else ()
    except (TypeError, ValueError):
      continue
    names.update(q.name for q in parameters if q.kind is q.KEYWORD_ONLY)
  return names


def is_higher_order(primitive) -> bool:
  """Whether its params carry jaxprs (``jaxpr``, ``branches``, ``*_jaxpr``)."""
  return any(n in _JAXPR_PARAM_NAMES or n.endswith(("_jaxpr", "_jaxprs"))
             for n in _param_names(primitive))


def test_higher_order_primitives_are_found():
  found = {p.name for p in ALL if is_higher_order(p)}
  assert {"jit", "remat2", "custom_jvp_call", "custom_vjp_call", "cond", "while",
          "scan"} <= found
  assert not {"add", "add_any", "stop_gradient", "psum", "sort", "random_bits"} & found


def _check_slot(primitive, slot: str, why_needed: str = ""):
  if primitive.name in GAPS.get(slot, {}):
    return
  if has_rule(primitive, slot):
    return
  rule = getattr(primitive, slot)
  detail = "no" if rule is None else f"only a placeholder that raises ({rule.__name__}) as its"
  pytest.fail(f"primitive '{primitive.name}' has {detail} {slot} rule{why_needed}: define "
              f"one, or list it in GAPS['{slot}'] with the reason")


@pytest.mark.parametrize("primitive", PRIMITIVES)
def test_primitive_has_abstract_eval_and_lowering(primitive):
  _check_slot(primitive, "abstract_eval")
  _check_slot(primitive, "lowering")


@pytest.mark.parametrize("primitive", PRIMITIVES)
def test_primitive_has_a_jvp_rule_or_is_declared_non_differentiable(primitive):
  _check_slot(primitive, "jvp")


@pytest.mark.parametrize("primitive", PRIMITIVES)
def test_primitive_has_a_batching_rule(primitive):
  _check_slot(primitive, "batch")


@pytest.mark.parametrize("primitive", PRIMITIVES)
def test_higher_order_primitive_has_a_partial_eval_rule(primitive):
  if is_higher_order(primitive):
    _check_slot(primitive, "partial_eval", " (its params carry jaxprs)")


@pytest.mark.parametrize("primitive", PRIMITIVES)
def test_higher_order_primitive_has_a_dce_rule(primitive):
  if is_higher_order(primitive):
    _check_slot(primitive, "dce_rule", " (its params carry jaxprs)")


@pytest.mark.parametrize("primitive", PRIMITIVES)
def test_state_primitive_has_a_discharge_rule(primitive):
  if primitive.ref_primitive:
    _check_slot(primitive, "discharge", " (it is a state primitive)")


def test_every_primitive_declares_the_rule_slots():
  # `impl` is a property (the generic dispatch where no rule is set) over the `_impl` slot.
  names = ("dce_rule", "discharge", "ref_primitive", "ref_allocating",
           *("_impl" if n == "impl" else n for n in RULE_SLOTS))
  undeclared = [p.name for p in ALL if not all(n in vars(p) for n in names)]
  assert not undeclared, f"primitives not made by core.Primitive.__init__: {undeclared}"
  assert {p.name for p in ALL if p.ref_primitive} >= {"get", "swap", "addupdate", "new_ref"}


def test_gaps_are_current():
  """Each listed gap names a primitive that really lacks the rule (stale entries fail)."""
  for slot, gaps in GAPS.items():
    for name in gaps:
      assert name in BY_NAME, f"GAPS['{slot}'] names '{name}', which no module defines"
      assert not has_rule(BY_NAME[name], slot), (
          f"'{name}' now has a {slot} rule: remove it from GAPS['{slot}']")
  for name in GAPS["partial_eval"]:
    assert is_higher_order(BY_NAME[name]), f"'{name}' is first-order: no partial_eval needed"


@pytest.mark.parametrize("primitive", PRIMITIVES)
def test_primitive_has_a_spec(primitive):
  if primitive.name in NO_SPEC:
    return
  assert id(primitive) in SPECCED, (
      f"primitive '{primitive.name}' has no entry in tests/lax/specs.py (or, if the table "
      "cannot drive it, a NO_SPEC entry naming its tests)")


def test_no_spec_entries_are_current():
  for name, path in NO_SPEC.items():
    assert name in BY_NAME, f"NO_SPEC names '{name}', which no module defines"
    assert id(BY_NAME[name]) not in SPECCED, f"'{name}' has a spec now: remove it from NO_SPEC"
    assert os.path.exists(os.path.join(TESTS, path)), f"NO_SPEC['{name}']: no tests/{path}"


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
