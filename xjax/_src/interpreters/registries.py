"""JAX's rule tables (`ad.primitive_jvps`, `batching.primitive_batchers`, ...) as views.

xjax keeps every rule of a primitive on the primitive itself (`Primitive.jvp`,
`.transpose`, `.batch`, `.lowering`). Libraries written for JAX register rules in
tables instead: ``ad.primitive_jvps[p] = rule``. Each table here is a mutable
mapping whose item assignment sets the primitive's attribute and whose lookup
reads it, converting between JAX's rule signature and xjax's where they differ:

* jvp ``(primals, tangents, **params) -> (out, tangent_out)``: the same in both,
  with the same symbolic `ad.Zero` tangents;
* transpose ``(cts, *args, **params) -> cts of the args``: the same in both, linear
  inputs given as `ad.UndefinedPrimal`;
* batching: JAX's ``(batched_args, batch_dims, **params) -> (out, out_dims)``
  (`primitive_batchers`), ``(axis_data, args, dims, **params)``
  (`fancy_primitive_batchers`, xjax's own signature) and
  ``(axis_size, axis_name, main, args, dims, **params)`` (`axis_primitive_batchers`);
* dead-code elimination (`pe.dce_rules`): ``(used_outputs, eqn) -> (used_inputs, eqn)``
  in both;
* lowering: see `register_lowering`.
"""
from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import MutableMapping

import numpy as np

from xjax._src import callback as callback_mod
from xjax._src import core
from xjax._src.interpreters import batching
from xjax._src.interpreters import lowering as lowering_mod


def _check_primitive(table: str, prim) -> None:
  if not isinstance(prim, core.Primitive):
    raise TypeError(f"{table} keys must be primitives (jax.extend.core.Primitive), "
                    f"got {prim!r} of type {type(prim).__name__}")


class RuleTable(MutableMapping):
  """A dict-like view of one rule attribute of every primitive.

  `to_xjax(rule)` converts a rule given in the table's (JAX's) signature to the
  attribute's; `from_xjax(prim, rule)` converts back on lookup. Iteration lists
  the live primitives that have the rule.
  """

  def __init__(self, name: str, attr: str, to_xjax=None, from_xjax=None):
    self.name = name
    self.attr = attr
    self.to_xjax = to_xjax or (lambda prim, rule: rule)
    self.from_xjax = from_xjax or (lambda prim, rule: rule)

  def __setitem__(self, prim, rule):
    _check_primitive(self.name, prim)
    if not callable(rule):
      raise TypeError(f"{self.name}[{prim}] must be callable, got {rule!r}")
    setattr(prim, self.attr, self.to_xjax(prim, rule))

  def __getitem__(self, prim):
    rule = getattr(prim, self.attr, None) if isinstance(prim, core.Primitive) else None
    if rule is None:
      raise KeyError(prim)
    return self.from_xjax(prim, rule)

  def __delitem__(self, prim):
    if getattr(prim, self.attr, None) is None:
      raise KeyError(prim)
    setattr(prim, self.attr, None)

  def __contains__(self, prim):
    return isinstance(prim, core.Primitive) and getattr(prim, self.attr, None) is not None

  def __iter__(self):
    return iter([p for p in list(core.all_primitives) if getattr(p, self.attr, None) is not None])

  def __len__(self):
    return sum(1 for _ in self)

  def __repr__(self):
    return f"<{self.name}: {len(self)} primitives>"


# ----------------------------------------------------------------------------
# Batching rules


def _axis_data_from(args, dims) -> batching.AxisData | None:
  """The AxisData of a JAX-style call, which carries none: the size from a batched
  operand (None when no operand is batched)."""
  for x, d in zip(args, dims):
    if d is not batching.not_mapped:
      return batching.AxisData(None, np.shape(x)[d])
  return None


def _simple_batcher_to_xjax(prim, rule):
  @functools.wraps(rule)  # the user's rule (its module and name), in xjax's signature
  def batch(axis_data, args, dims, **params):
    return rule(args, dims, **params)
  batch.jax_rule = ("simple", rule)
  return batch


def _simple_batcher_from_xjax(prim, rule):
  kind, original = getattr(rule, "jax_rule", (None, None))
  if kind == "simple":
    return original

  def batcher(batched_args, batch_dims, **params):
    axis_data = _axis_data_from(batched_args, batch_dims)
    if axis_data is None:  # nothing batched: the primitive applies as it is (as in JAX)
      out = prim.bind(*batched_args, **params)
      return out, ([batching.not_mapped] * len(out) if prim.multiple_results
                   else batching.not_mapped)
    return rule(axis_data, batched_args, batch_dims, **params)
  return batcher


def _axis_batcher_to_xjax(prim, rule):
  @functools.wraps(rule)
  def batch(axis_data, args, dims, **params):
    return rule(axis_data.size, axis_data.name, None, args, dims, **params)
  batch.jax_rule = ("axis", rule)
  return batch


def _axis_batcher_from_xjax(prim, rule):
  kind, original = getattr(rule, "jax_rule", (None, None))
  if kind == "axis":
    return original

  def batcher(axis_size, axis_name, main, batched_args, batch_dims, **params):
    return rule(batching.AxisData(axis_name, axis_size), batched_args, batch_dims, **params)
  return batcher


# A dce rule is ``rule(used_outputs, eqn) -> (used_inputs, new eqn or None)`` in both.
dce_rules = RuleTable("dce_rules", "dce_rule")
primitive_jvps = RuleTable("primitive_jvps", "jvp")
primitive_transposes = RuleTable("primitive_transposes", "transpose")
primitive_batchers = RuleTable("primitive_batchers", "batch", _simple_batcher_to_xjax,
                               _simple_batcher_from_xjax)
fancy_primitive_batchers = RuleTable("fancy_primitive_batchers", "batch")
axis_primitive_batchers = RuleTable("axis_primitive_batchers", "batch", _axis_batcher_to_xjax,
                                    _axis_batcher_from_xjax)


# ----------------------------------------------------------------------------
# Lowering rules
#
# A JAX lowering rule is ``rule(ctx, *operands, **params) -> [one value per output]``
# with `ctx` a `LoweringRuleContext`. xjax's lowering emits StableHLO text, so a rule
# works here when it builds its outputs with the helpers of `jax.interpreters.mlir`
# that xjax provides (`lower_fun`, `emit_python_callback`, `ir_constant`): the operands
# and results are `lowering.Value`s. Rules that construct MLIR operations themselves
# (through `jaxlib.mlir` dialect bindings) cannot be given xjax's values.

_KNOWN_PLATFORMS = {"cpu": ("cpu",), "cuda": ("cuda",), "rocm": ("rocm",), "tpu": ("tpu",),
                    "gpu": ("cuda", "rocm")}
_current_ctx = threading.local()


class ModuleContextView:
  """What a JAX lowering rule sees of the module being lowered (`ctx.module_context`)."""

  def __init__(self, module, platforms):
    self.module = module
    self.platforms = platforms
    self.keepalives: list = []

  def add_keepalive(self, keepalive) -> None:
    """Keeps `keepalive` (e.g. a host callback object) alive with the module."""
    self.keepalives.append(keepalive)


class LoweringRuleContext:
  """The context a JAX lowering rule is called with (mirrors `mlir.LoweringRuleContext`).

  Attributes:
    module_context: the module being lowered (`platforms`, `add_keepalive`).
    primitive: the primitive being lowered.
    avals_in, avals_out: the avals of the equation's operands and results.
    tokens_in, tokens_out: unused by xjax (effects are ordered by xjax itself).
  """

  def __init__(self, xjax_ctx, primitive, avals_in, avals_out, module_context=None):
    self.xjax_ctx = xjax_ctx
    self.primitive = primitive
    self.avals_in = list(avals_in)
    self.avals_out = list(avals_out)
    self.module_context = module_context or _module_view(xjax_ctx.module)
    self.tokens_in = None
    self.tokens_out = None

  def replace(self, **kwargs) -> LoweringRuleContext:
    """A copy with the given attributes replaced (e.g. ``avals_in=...``)."""
    new = LoweringRuleContext(self.xjax_ctx, self.primitive, self.avals_in, self.avals_out,
                              self.module_context)
    for k, v in kwargs.items():
      if not hasattr(new, k):
        raise TypeError(f"LoweringRuleContext.replace() got an unexpected keyword argument {k!r}")
      setattr(new, k, v)
    return new

  def set_tokens_out(self, tokens_out) -> None:
    self.tokens_out = tokens_out


def _module_view(module) -> ModuleContextView:
  # One view per module, so that what rules keep alive lives as long as the module.
  view = getattr(module, "jax_module_context", None)
  if view is None:
    view = module.jax_module_context = ModuleContextView(module, [_platform()])
  return view


def _platform() -> str:
  from xjax._src import backend  # the lowering runs after the backend is up
  return backend.platform()


def current_rule_context() -> LoweringRuleContext:
  """The context of the JAX lowering rule now running (for `ir_constant`)."""
  ctx = getattr(_current_ctx, "ctx", None)
  if ctx is None:
    raise RuntimeError("no MLIR lowering rule is running: ir_constant and the other "
                       "emitters of jax.interpreters.mlir work only inside a lowering rule")
  return ctx


def xjax_context(ctx):
  """The xjax LoweringContext behind `ctx` (a LoweringRuleContext or xjax's own), with the
  avals `ctx` gives."""
  if isinstance(ctx, LoweringRuleContext):
    inner = ctx.xjax_ctx
    inner.avals_in, inner.avals_out = list(ctx.avals_in), list(ctx.avals_out)
    return inner
  return ctx


def _one_value(v):
  # JAX rules may give an output as a 1-element sequence of IR values.
  if isinstance(v, (list, tuple)) and len(v) == 1:
    return v[0]
  return v


def _from_jax_rule(prim, rule):
  """`rule`, written for JAX's lowering, as an xjax lowering rule."""
  @functools.wraps(rule)
  def lowering(ctx, *args, **params):
    rule_ctx = LoweringRuleContext(ctx, prim, ctx.avals_in, ctx.avals_out)
    avals_in, avals_out = list(ctx.avals_in), list(ctx.avals_out)
    prev = getattr(_current_ctx, "ctx", None)
    _current_ctx.ctx = rule_ctx
    try:
      outs = rule(rule_ctx, *args, **params)
    except Exception as e:  # noqa: BLE001 - re-raised unless MLIR's bindings raised it
      if _raised_in_mlir_bindings(e):
        raise _unsupported_rule(prim, "calls MLIR Python bindings") from e
      raise
    finally:
      _current_ctx.ctx = prev
      ctx.avals_in, ctx.avals_out = avals_in, avals_out
    if outs is None or not isinstance(outs, (list, tuple)):
      raise TypeError(f"the MLIR lowering rule of primitive '{prim}' must return a sequence "
                      f"of results, one per output; got {outs!r}")
    outs = [_one_value(o) for o in outs]
    if len(outs) != len(avals_out):
      raise ValueError(f"the MLIR lowering rule of primitive '{prim}' returned {len(outs)} "
                       f"results for {len(avals_out)} outputs")
    for o in outs:
      if not isinstance(o, lowering_mod.Value):
        raise _unsupported_rule(prim, f"returned {o!r}")
    return outs if prim.multiple_results else outs[0]
  lowering.jax_rule = rule
  return lowering


def _unsupported_rule(prim, what: str) -> NotImplementedError:
  return NotImplementedError(
      f"the MLIR lowering rule of primitive '{prim}' {what}: xjax lowers to StableHLO text, "
      "so a lowering rule must build its results with jax.interpreters.mlir.lower_fun, "
      "emit_python_callback or ir_constant; rules that construct MLIR operations through "
      "jaxlib.mlir dialect bindings are not supported")


def _raised_in_mlir_bindings(e: BaseException) -> bool:
  """Whether `e` came from MLIR's Python bindings (given one of xjax's values)."""
  if "incompatible function arguments" in str(e):
    return True
  tb = e.__traceback__
  while tb is not None:
    if "/mlir/" in tb.tb_frame.f_code.co_filename.replace("\\", "/"):
      return True
    tb = tb.tb_next
  return False


# prim -> {platform or None: xjax rule}; the primitive's `lowering` then dispatches on it.
_platform_lowerings: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def register_lowering(prim, rule, platform: str | None = None, inline: bool = True,
                      cacheable: bool = True) -> None:
  """Registers `rule` as the lowering of `prim` (mirrors `mlir.register_lowering`).

  A rule for a `platform` ('cpu', 'cuda', 'rocm', 'tpu' or 'gpu', which means both
  GPU platforms) takes precedence over the common rule (platform None) on that
  platform. `inline` and `cacheable` are accepted for compatibility (xjax always
  inlines lowering rules).

  Raises:
    TypeError: `prim` is not a primitive or `rule` is not callable.
    NotImplementedError: `platform` is not a known platform (JAX's error).
  """
  del inline, cacheable
  _check_primitive("register_lowering", prim)
  if not callable(rule):
    raise TypeError(f"register_lowering: rule for {prim} must be callable, got {rule!r}")
  if platform is not None and platform not in _KNOWN_PLATFORMS:
    raise NotImplementedError(
        f"Registering an MLIR lowering rule for primitive {prim} for an unknown platform "
        f"{platform}. Known platforms are: {', '.join(sorted(_KNOWN_PLATFORMS))}.")
  table = _platform_lowerings.get(prim)
  if table is None:
    table = _platform_lowerings[prim] = {}
    if prim.lowering is not None:
      table[None] = prim.lowering
    prim.lowering = _dispatching_lowering(prim, rule)
  converted = _from_jax_rule(prim, rule)
  for p in (None,) if platform is None else _KNOWN_PLATFORMS[platform]:
    table[p] = converted


def _dispatching_lowering(prim, first_rule):
  ref = weakref.ref(prim)

  @functools.wraps(first_rule, assigned=("__module__",), updated=())
  def lowering(ctx, *args, **params):
    table = _platform_lowerings.get(ref(), {})
    platform = _platform()
    rule = table.get(platform, table.get(None))
    if rule is None:
      raise NotImplementedError(
          f"MLIR translation rule for primitive '{prim.name}' not found for platform "
          f"{platform}")
    return rule(ctx, *args, **params)
  return lowering


def lower_fun(fun, multiple_results: bool = True):
  """A lowering rule that lowers ``fun(*operands, **params)`` in place of the primitive
  (mirrors `mlir.lower_fun`): `fun` is traced on the equation's operand avals and its
  equations are lowered inline. The rule returns one value per output, as JAX's do."""
  def rule(ctx, *args, **params):
    inner = xjax_context(ctx)
    out = lowering_mod.lower_fun(fun, multiple_results)(inner, *args, **params)
    return list(out) if multiple_results else [out]
  rule.lowered_fun = fun
  rule.__module__ = getattr(fun, "__module__", None) or rule.__module__
  return rule


def emit_python_callback(ctx, callback, token, operands, operand_avals, result_avals, *,
                         has_side_effect: bool, returns_token: bool = True,
                         partitioned: bool = False, sharding=None):
  """Emits a call of `callback` on the host (mirrors `mlir.emit_python_callback`).

  `callback` receives the operands as NumPy arrays and returns a sequence of arrays
  matching `result_avals`. A `token` (not None) orders the call after the previous
  ordered effect. Returns ``(results, token, keepalive)``.

  Raises:
    NotImplementedError: `partitioned` or `sharding` callbacks (not supported by xjax).
  """
  if partitioned or sharding is not None:
    raise NotImplementedError("emit_python_callback: partitioned or sharded host callbacks "
                              "are not supported by xjax")

  def run(*xs):
    return callback_mod.check_results(callback(*xs), list(result_avals))

  inner = xjax_context(ctx)
  outs = inner.host_callback(run, list(operands), list(result_avals),
                             has_side_effect=has_side_effect, ordered=token is not None)
  return outs, token, run


def ir_constant(val) -> lowering_mod.Value:
  """A constant holding the NumPy value `val`, emitted in the running lowering rule
  (mirrors `mlir.ir_constant`)."""
  return xjax_context(current_rule_context()).constant(np.asarray(val))


def ir_constants(val) -> list:
  """`ir_constant(val)` as a one-element list (mirrors `mlir.ir_constants`)."""
  return [ir_constant(val)]
