"""Lowering: a jaxpr becomes StableHLO module text.

`lower_jaxpr_to_module` walks the equations with the usual read/write
environment loop and calls each primitive's `lowering` rule with a
`LoweringContext` (which knows the equation's input and output avals and
emits operations) and the operand values. Higher-order primitives emit
regions with `LoweringContext.region` or private functions with
`LoweringContext.call`.
"""
from __future__ import annotations

import contextlib
import itertools

import numpy as np

from xjax._src import core
from xjax._src import effects
from xjax._src import stablehlo as hlo
from xjax._src.interpreters import partial_eval as pe


class Value:
  """An SSA value of the module being built: its name and tensor type."""
  __slots__ = ("name", "type")

  def __init__(self, name: str, type_: str):
    self.name = name
    self.type = type_

  def __repr__(self):
    return self.name


class AxisContext:
  """The mesh axes a manual (per-device) body runs over, for the collectives in it.

  Inside `shard_map`'s body every value is one device's shard and named-axis
  collectives become cross-device operations. Device ids are logical: the
  position of a device in `mesh.devices.flat`, which is the computation's
  device assignment order.
  """

  def __init__(self, mesh, manual_axes):
    self.mesh = mesh
    self.manual_axes = frozenset(manual_axes)

  def axis_size(self, name) -> int:
    return self.mesh.shape[name]

  def replica_groups(self, axes) -> list[list[int]]:
    """The groups of logical device ids that differ only along `axes`.

    One group per position on the other mesh axes; inside a group the ids are
    ordered by the members' linear index along `axes` (row-major, in the order
    `axes` gives them), which is the order of `axis_index`.
    """
    names = list(self.mesh.axis_names)
    ids = np.arange(self.mesh.devices.size).reshape(self.mesh.devices.shape)
    order = [names.index(a) for a in axes]
    rest = [i for i in range(len(names)) if i not in order]
    moved = ids.transpose(rest + order)
    return moved.reshape(-1, int(np.prod([ids.shape[i] for i in order], dtype=np.int64))).tolist()


@contextlib.contextmanager
def manual_axes(module: "ModuleContext", mesh, manual):
  """Lowers a manual (per-device) body over `manual` axes of `mesh`.

  Sets ``module.axis_context`` for the collectives' lowering rules and binds
  the manual axes as named axes (`core.extend_axis_env`) for as long as the
  body is emitted: lowering rules that trace again (a scan lowered as a while
  loop, `lower_fun` rules, ...) then see the axes their collectives name, as
  the body's first trace did.
  """
  outer = module.axis_context
  module.axis_context = AxisContext(mesh, manual)
  try:
    with contextlib.ExitStack() as stack:
      for name in mesh.axis_names:
        if name in manual:
          stack.enter_context(core.extend_axis_env(name, mesh.shape[name]))
      yield module.axis_context
  finally:
    module.axis_context = outer


class SpmdModule:
  """What makes a module one program over a mesh: the mesh (declared as Shardy's
  ``@mesh``), a sharding or None (XLA chooses) per argument and per result, and
  the donated arguments' aliases (argument index to result index)."""

  def __init__(self, mesh, in_shardings, out_shardings, aliases=None):
    self.mesh = mesh
    self.in_shardings = in_shardings
    self.out_shardings = out_shardings
    self.aliases = aliases or {}

  def mesh_declaration(self) -> str:
    axes = ", ".join(f'"{n}"={s}' for n, s in zip(self.mesh.axis_names, self.mesh.axis_sizes))
    return f"  sdy.mesh @mesh = <[{axes}]>"


def _sharding_attr(sharding, aval) -> str | None:
  if sharding is None:
    return None
  # (A key array's data has the key's trailing dimensions too, unsplit.)
  return f"sdy.sharding = {sharding.sdy_text(len(core.physical_aval(aval).shape))}"


class ModuleContext:
  """State shared by all functions of one module: names and private functions."""

  def __init__(self, name: str, num_replicas: int = 1, axis_env=()):
    self.name = name
    self.functions: list[str] = []
    self.function_names: dict = {}
    self.used_names: set[str] = {"main"}
    self.num_replicas = num_replicas
    self.axis_env = axis_env
    self.host_callbacks: list = []
    # Set while lowering a manual body (shard_map): its collectives cross devices.
    self.axis_context: AxisContext | None = None
    self.spmd: SpmdModule | None = None  # set when the module runs over a mesh
    self._channels = itertools.count(1)

  def next_channel(self) -> int:
    """A fresh channel id for a cross-device collective (unique in the module)."""
    return next(self._channels)

  def fresh_function_name(self, base: str) -> str:
    base = "".join(c if c.isalnum() or c == "_" else "_" for c in base) or "fn"
    name, i = base, 0
    while name in self.used_names:
      i += 1
      name = f"{base}_{i}"
    self.used_names.add(name)
    return name


class LoweringContext:
  """Emits the operations of one function body (or region) into `lines`."""

  def __init__(self, module: ModuleContext, counter=None, indent: str = "    "):
    self.module = module
    self.lines: list[str] = []
    self.counter = counter if counter is not None else itertools.count()
    self.indent = indent
    self.avals_in: list = []
    self.avals_out: list = []
    self.token: Value | None = None  # the last ordered effect's token in this body

  def fresh(self) -> str:
    return f"%{next(self.counter)}"

  def op(self, name: str, operands, result_types, attrs: str | None = None,
         regions=None, attr_dict: str | None = None):
    """Emits ``"name"(operands) <{attrs}> (regions) {attr_dict} : (types) -> results``;
    returns result Values. `attrs` are the op's own (properties); `attr_dict` holds
    discardable ones (``sdy.sharding = ...``)."""
    result_types = list(result_types)
    res = self.fresh()
    n = len(result_types)
    lhs = "" if n == 0 else (f"{res} = " if n == 1 else f"{res}:{n} = ")
    text = f'{lhs}"{name}"({", ".join(v.name for v in operands)})'
    if attrs:
      text += f" <{{{attrs}}}>"
    if regions:
      text += " (" + ", ".join(regions) + ")"
    if attr_dict:
      text += f" {{{attr_dict}}}"
    ins = ", ".join(v.type for v in operands)
    outs = result_types[0] if n == 1 else f"({', '.join(result_types)})"
    text += f" : ({ins}) -> {outs}"
    self.lines.append(self.indent + text)
    if n == 1:
      return [Value(res, result_types[0])]
    return [Value(f"{res}#{i}", t) for i, t in enumerate(result_types)]

  def op1(self, name, operands, result_type, attrs=None, regions=None) -> Value:
    return self.op(name, operands, [result_type], attrs, regions)[0]

  def constant(self, value, dtype=None) -> Value:
    value = np.asarray(value, dtype)
    if value.dtype.names == ("float0",):  # float0 has no data: bool zeros, as in JAX
      value = np.zeros(value.shape, np.bool_)
    ty = hlo.tensor_type(value.shape, value.dtype)
    return self.op1("stablehlo.constant", [], ty, f"value = {hlo.dense_elements(value)} : {ty}")

  def region(self, arg_types, body) -> str:
    """A region whose block takes `arg_types`; `body(ctx, args)` returns the values to return."""
    sub = LoweringContext(self.module, self.counter, self.indent + "  ")
    args = [Value(f"%arg_r{next(self.counter)}", t) for t in arg_types]
    results = body(sub, args)
    sub.lines.append(sub.indent + f'"stablehlo.return"({", ".join(v.name for v in results)}) : '
                     f'({", ".join(v.type for v in results)}) -> ()')
    head = ", ".join(f"{a.name}: {a.type}" for a in args)
    return ("{\n" + self.indent + f"^bb0({head}):\n" + "\n".join(sub.lines)
            + "\n" + self.indent + "}")

  def call(self, closed_jaxpr: core.ClosedJaxpr, name: str, args) -> list[Value]:
    """Emits `closed_jaxpr` as a private function (once per jaxpr) and calls it.

    A function with ordered effects takes this body's token first and returns
    the token of its last ordered effect first.
    """
    key = id(closed_jaxpr)
    ordered = effects.has_ordered(closed_jaxpr.jaxpr.effects)
    entry = self.module.function_names.get(key)
    if entry is None:
      fname = self.module.fresh_function_name(name)
      self.module.functions.append(_function_text(self.module, fname, closed_jaxpr, public=False,
                                                  token=ordered))
      entry = self.module.function_names[key] = (fname, closed_jaxpr)  # keep jaxpr alive
    fname = entry[0]
    out_types = [hlo.aval_type(a) for a in closed_jaxpr.out_avals]
    if not ordered:
      return self.op("func.call", args, out_types, f"callee = @{fname}")
    outs = self.op("func.call", [self.ordered_token(), *args], [hlo.TOKEN_TYPE, *out_types],
                   f"callee = @{fname}")
    self.token = outs[0]
    return outs[1:]

  def ordered_token(self) -> Value:
    """The token ordered effects of this body chain through (made on first use)."""
    if self.token is None:
      self.token = self.op1("stablehlo.after_all", [], hlo.TOKEN_TYPE)
    return self.token

  def host_callback(self, callback, operands, result_avals, *, has_side_effect: bool,
                    ordered: bool = False, device_index: int = 0) -> list[Value]:
    """Emits a call of the Python function `callback` on the host.

    `callback` takes the operands as NumPy arrays and returns a sequence of
    NumPy arrays matching `result_avals`. An `ordered` call takes and returns
    this body's ordered-effect token, so it runs after the previous ordered
    call and before the next. In a module over a mesh the call carries the
    sharding XLA's partitioner needs (`_callback_sharding`); `device_index`
    is the device that runs it under automatic partitioning.
    """
    result_types = [hlo.aval_type(a) for a in result_avals]
    ranks = [len(a.shape) for a in result_avals]
    if ordered:
      ranks = [0, *ranks]
      operands = [self.ordered_token(), *operands]
      result_types = [hlo.TOKEN_TYPE, *result_types]
      fn = _callback_with_token(callback)
    else:
      fn = callback
    index = len(self.module.host_callbacks)
    self.module.host_callbacks.append(fn)
    attrs = ('call_target_name = "xla_ffi_python_cpu_callback", api_version = 4 : i32, '
             f"backend_config = {{index = {index} : ui64}}")
    if has_side_effect:
      attrs += ", has_side_effect = true"
    sharding = self._callback_sharding(ranks, device_index)
    outs = self.op("stablehlo.custom_call", operands, result_types, attrs,
                   attr_dict=sharding and f"sdy.sharding = {sharding}")
    if ordered:
      self.token, outs = outs[0], outs[1:]
    if sharding is not None and self.module.axis_context is None:
      # The results of a call on one device, replicated onto every device (JAX leaves them
      # on that device, a placement xjax's arrays do not have).
      outs = [self.op1("sdy.sharding_constraint", [v], v.type,
                       f"sharding = #sdy.sharding<@mesh, [{', '.join(['{}'] * r)}]>")
              for v, r in zip(outs, ranks[len(ranks) - len(outs):])]
    return outs

  def _callback_sharding(self, ranks, device_index: int) -> str | None:
    """Shardy's sharding of a host callback with results of `ranks`, or None outside a mesh.

    Under automatic partitioning the callback runs once, on the whole values, on
    one device (a maximal sharding); in a manual body (`shard_map`, `pmap`) every
    device runs it on its own values, with nothing left to partition. One entry
    per result, and one for a call without results, as JAX emits them.
    """
    if self.module.spmd is None:
      return None
    ranks = ranks or [0]
    if self.module.axis_context is None:
      entries = [f"<mesh<[], device_ids=[{device_index}]>, []>"] * len(ranks)
    else:
      entries = ["<mesh<[]>, [" + ", ".join(["{}"] * r) + "]>" for r in ranks]
    return f"#sdy.sharding_per_value<[{', '.join(entries)}]>"

  def broadcast_to(self, value: Value, aval_in, aval_out) -> Value:
    """Broadcasts an operand (rank 0, or the same rank with size-1 dims) to `aval_out`'s shape."""
    if tuple(aval_in.shape) == tuple(aval_out.shape):
      return value
    dims = hlo.i64_array(range(len(aval_out.shape) - len(aval_in.shape), len(aval_out.shape)))
    ty = hlo.tensor_type(aval_out.shape, aval_in.dtype)
    return self.op1("stablehlo.broadcast_in_dim", [value], ty, f"broadcast_dimensions = {dims}")


def _callback_with_token(callback):
  # XLA passes the token as None and expects it back first.
  return lambda token, *args: (token, *callback(*args))


def lower_jaxpr_body(ctx: LoweringContext, jaxpr: core.Jaxpr, consts, args) -> list[Value]:
    """Emits the equations of `jaxpr` into `ctx`; returns the output values."""
    env: dict = {}

    def read(v):
      if type(v) is core.Literal:
        return ctx.constant(np.asarray(v.val, v.aval.dtype))
      return env[v]

    env.update(zip(jaxpr.constvars, consts, strict=True))
    env.update(zip(jaxpr.invars, args, strict=True))
    for eqn in jaxpr.eqns:
      rule = eqn.primitive.lowering
      if rule is None:
        raise core.missing_rule("Lowering", eqn.primitive)
      ctx.avals_in = [v.aval for v in eqn.invars]
      ctx.avals_out = [v.aval for v in eqn.outvars]
      outs = rule(ctx, *map(read, eqn.invars), **eqn.params)
      if not eqn.primitive.multiple_results:
        outs = [outs]
      if ctx.module.spmd is not None and ctx.module.axis_context is None:
        outs = _pin_explicit_shardings(ctx, eqn.outvars, outs)
      env.update(zip(eqn.outvars, outs, strict=True))
    return [read(v) for v in jaxpr.outvars]


def _pin_explicit_shardings(ctx, outvars, outs) -> list:
  """Values typed over Explicit mesh axes (split or replicated on them), pinned so
  (``sdy.sharding_constraint``), as JAX's lowering does for every typed result."""
  pinned = []
  for v, out in zip(outvars, outs):
    sharding = getattr(v.aval, "sharding", None)
    if sharding is not None:
      out = ctx.op1("sdy.sharding_constraint", [out], out.type,
                    f"sharding = {sharding.sdy_text(len(v.aval.shape))}")
    pinned.append(out)
  return pinned


def _function_text(module: ModuleContext, name: str, closed_jaxpr: core.ClosedJaxpr,
                   public: bool, consts_as_args: bool = False, token: bool = False,
                   arg_attrs=None, result_attrs=None) -> str:
  jaxpr = closed_jaxpr.jaxpr
  ctx = LoweringContext(module)
  arg_avals = ([v.aval for v in jaxpr.constvars] if consts_as_args else []) + jaxpr.in_avals
  args = [Value(f"%arg{i}", hlo.aval_type(a)) for i, a in enumerate(arg_avals)]
  if consts_as_args:
    consts, args_ = args[:len(jaxpr.constvars)], args[len(jaxpr.constvars):]
  else:
    consts = [ctx.constant(np.asarray(c)) for c in closed_jaxpr.consts]
    args_ = args
  if token:
    ctx.token = Value("%arg_token", hlo.TOKEN_TYPE)
    args = [ctx.token, *args]
  outs = lower_jaxpr_body(ctx, jaxpr, consts, args_)
  out_types = [hlo.aval_type(a) for a in jaxpr.out_avals]
  if token:
    outs, out_types = [ctx.token, *outs], [hlo.TOKEN_TYPE, *out_types]
  ctx.lines.append(f'    "func.return"({", ".join(v.name for v in outs)}) : '
                   f'({", ".join(out_types)}) -> ()')
  sig = ", ".join(f"{a.name}: {a.type}" + (f" {{{attr}}}" if arg_attrs and (attr := arg_attrs[i])
                                              else "")
                  for i, a in enumerate(args))
  if result_attrs:
    out_types = [t + (f" {{{attr}}}" if attr else "") for t, attr in zip(out_types, result_attrs)]
  visibility = "public" if public else "private"
  return (f"  func.func {visibility} @{name}({sig}) -> ({', '.join(out_types)}) {{\n"
          + "\n".join(ctx.lines) + "\n  }")


def lower_jaxpr_to_module(closed_jaxpr: core.ClosedJaxpr, name: str = "main_fn",
                          num_replicas: int = 1, axis_env=(), *, aliases=None,
                          spmd: SpmdModule | None = None) -> tuple[str, list]:
  """The StableHLO module text for `closed_jaxpr`, whose consts become leading arguments.

  `aliases` maps donated argument indices (consts counted) to the result each
  may be written into (``tf.aliasing_output``). With `spmd` the module is one
  program over its mesh, with Shardy's sharding attributes.

  Returns (text, host_callbacks).
  """
  module = ModuleContext(name, num_replicas, axis_env)
  module.spmd = spmd
  n_args = len(closed_jaxpr.jaxpr.constvars) + len(closed_jaxpr.jaxpr.invars)
  arg_avals = [v.aval for v in closed_jaxpr.jaxpr.constvars] + list(closed_jaxpr.in_avals)
  arg_attrs = [[] for _ in range(n_args)]
  result_attrs = None
  num_partitions = 1
  prefix = []
  if spmd is not None:
    num_partitions = spmd.mesh.size
    prefix.append(spmd.mesh_declaration())
    for i, (s, a) in enumerate(zip(spmd.in_shardings, arg_avals)):
      if (attr := _sharding_attr(s, a)):
        arg_attrs[i].append(attr)
    result_attrs = [_sharding_attr(s, a) for s, a in zip(spmd.out_shardings,
                                                          closed_jaxpr.out_avals)]
  for i, j in (aliases or {}).items():
    arg_attrs[i].append(f"tf.aliasing_output = {j} : i32")
  if spmd is not None:
    # Over a mesh a donated buffer is offered, and XLA pairs it with a result of the
    # same layout (as JAX does: results may be split differently from arguments).
    for i in spmd.aliases:
      arg_attrs[i].insert(0, "jax.buffer_donor = true")
  main = _function_text(module, "main", closed_jaxpr, public=True, consts_as_args=True,
                        arg_attrs=[", ".join(a) for a in arg_attrs], result_attrs=result_attrs)
  attrs = (f"mhlo.num_partitions = {num_partitions} : i32, "
           f"mhlo.num_replicas = {num_replicas} : i32")
  text = (f"module @{module.fresh_function_name(name)} attributes {{{attrs}}} {{\n"
          + "\n".join([*prefix, main, *module.functions]) + "\n}\n")
  return text, module.host_callbacks


def lower_fun(fun, multiple_results: bool):
  """A lowering rule that traces ``fun(*operands, **params)`` on the eqn's avals and inlines it.

  For primitives whose lowering is clearest written with other primitives.
  """
  def rule(ctx, *args, **params):
    avals_in, avals_out = ctx.avals_in, ctx.avals_out

    def flat(*xs):
      out = fun(*xs, **params)
      return list(out) if multiple_results else [out]

    closed = pe.trace_to_jaxpr(flat, avals_in)
    consts = [ctx.constant(np.asarray(c)) for c in closed.consts]
    outs = lower_jaxpr_body(ctx, closed.jaxpr, consts, list(args))
    ctx.avals_in, ctx.avals_out = avals_in, avals_out
    return outs if multiple_results else outs[0]

  return rule
