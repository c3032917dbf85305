"""Automatic differentiation: forward mode (JVP), linearization, and transposition.

* `JVPTrace` carries (primal, tangent) pairs and calls each primitive's
  `jvp` rule under its parent trace. Tangents may be symbolic `Zero`s.
* `linearize` runs the JVP trace on top of a `PartialEvalTrace`: the primal
  computation runs (known inputs only), while everything that touches a
  tangent is staged into a linear jaxpr whose constants are the residuals.
* `backward_pass` transposes a linear jaxpr: equations on known values run
  forward, then each linear equation's `transpose` rule maps output
  cotangents to input cotangents, in reverse order.

`vjp` is linearize followed by backward_pass; `grad` is vjp with a unit
cotangent.
"""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import stablehlo as hlo
from xjax._src import vma
from xjax._src.config import config
from xjax._src.interpreters import partial_eval as pe


# ----------------------------------------------------------------------------
# Symbolic zeros and tangent arithmetic


class Zero:
  """A symbolic zero tangent or cotangent of a given aval."""
  __slots__ = ("aval",)

  def __init__(self, aval: core.ShapedArray):
    self.aval = aval

  @staticmethod
  def from_primal_value(x) -> Zero:
    return Zero(core.get_aval(x).to_tangent_aval())

  def instantiate(self):
    """This zero as an array (`zeros_like_aval`), as JAX's `Zero.instantiate`."""
    return zeros_like_aval(self.aval)

  def __repr__(self):
    return f"Zero({self.aval.str_short()})"


def zeros_like_aval(aval: core.ShapedArray):
  """A zero of `aval`: a host constant (float0 zeros for integer tangents), or under a
  trace, as JAX stages one, a broadcast of a scalar zero literal. The zero of a weakly
  typed value is weak too, as in JAX."""
  if not aval.weak_type and (not aval.shape or aval.dtype == dtypes.float0
                             or core.trace_ctx.trace is core.eval_trace):
    zero = np.zeros((), aval.dtype)
    return zero if not aval.shape else np.broadcast_to(zero, aval.shape)
  return _lax_zeros(aval)


def _lax_zeros(aval):
  raise AssertionError("internal: lax.structural sets ad._lax_zeros when it is imported")


def set_lax_zeros(fn) -> None:
  """Sets how a weakly typed or staged zero is made: ``fn(aval)`` with lax's
  ``convert_element_type`` and ``broadcast_in_dim``, which sit above this module
  (JAX registers the same in `ad_util.aval_zeros_likers`)."""
  global _lax_zeros
  _lax_zeros = fn


def instantiate_zeros(t):
  return zeros_like_aval(t.aval) if type(t) is Zero else t


def _add_any_abstract_eval(x, y):
  # Tangents of one value always share its aval: add_any never broadcasts.
  assert x.shape == y.shape and x.dtype == y.dtype, ("internal: add_any of", x, y)
  return core.ShapedArray(x.shape, x.dtype, x.weak_type and y.weak_type)


add_any_p = core.Primitive("add_any")
add_any_p.def_abstract_eval(_add_any_abstract_eval)


@add_any_p.def_lowering
def _add_any_lowering(ctx, x, y):
  op = "stablehlo.or" if ctx.avals_in[0].dtype == np.bool_ else "stablehlo.add"
  return ctx.op1(op, [x, y], hlo.aval_type(ctx.avals_out[0]))


def _add_any_jvp(primals, tangents):
  t_x, t_y = tangents
  return add_any_p.bind(*primals), add_tangents(t_x, t_y)


add_any_p.def_jvp(_add_any_jvp)
add_any_p.def_transpose(lambda ct, x, y: [ct, ct])



def _stop_gradient_jvp(primals, tangents):
  (x,) = primals
  return stop_gradient_p.bind(x), Zero.from_primal_value(x)


stop_gradient_p = core.Primitive("stop_gradient")
stop_gradient_p.def_abstract_eval(lambda x: x)
stop_gradient_p.def_jvp(_stop_gradient_jvp)
stop_gradient_p.def_lowering(lambda ctx, x: x)


def add_tangents(x, y):
  """x + y for tangents, where either may be a symbolic Zero."""
  if type(x) is Zero:
    return y
  if type(y) is Zero:
    return x
  if core.get_aval(x).dtype == dtypes.float0:
    return x
  return add_any_p.bind(x, y)


# ----------------------------------------------------------------------------
# Forward mode


class JVPTracer(core.Tracer):
  """A (primal, tangent) pair under a `JVPTrace`, printed ``JVPTracer(primal=..., tangent=...)``."""
  __slots__ = ("primal", "tangent")
  tracer_name = "JVPTracer"

  def __init__(self, trace, primal, tangent):
    self._trace = trace
    self.primal = primal
    self.tangent = tangent

  @property
  def aval(self):
    return core.get_aval(self.primal)

  def to_concrete_value(self):
    primal = self.primal
    if isinstance(primal, core.Tracer):
      return primal.to_concrete_value()
    return np.asarray(primal)

  def _origin_msg(self) -> str:
    return self.primal._origin_msg() if isinstance(self.primal, core.Tracer) else ""

  def __repr__(self):
    tangent = self.tangent
    shown = tangent.aval.str_short(True) if type(tangent) is Zero else core.get_aval(tangent).str_short(True)
    if self._trace.is_linearize:
      return f"GradTracer(primal={self.primal!s}, typeof(tangent)={shown})"
    return f"JVPTracer(primal={self.primal!s}, tangent={tangent!s})"


class JVPTrace(core.Trace):
  """Interprets primitives on (primal, tangent) pairs with their jvp rules."""
  __slots__ = ("is_linearize",)

  def __init__(self, parent_trace, tag=None, is_linearize: bool = False):
    super().__init__(parent_trace, tag)
    self.is_linearize = is_linearize

  def to_primal_tangent_pair(self, x):
    if isinstance(x, JVPTracer) and x._trace.tag is self.tag:
      return x.primal, x.tangent
    return x, Zero.from_primal_value(x)

  def process_primitive(self, primitive, args, params):
    primals, tangents = zip(*map(self.to_primal_tangent_pair, args)) if args else ((), ())
    if all(type(t) is Zero for t in tangents):
      with core.set_current_trace(self.parent_trace):
        return primitive.bind(*primals, **params)
    rule = primitive.jvp
    if rule is None:
      raise core.missing_rule("Differentiation", primitive)
    with core.set_current_trace(self.parent_trace):
      primal_out, tangent_out = rule(primals, tangents, **params)
    if primitive.multiple_results:
      return [self.maybe_box(p, t) for p, t in zip(primal_out, tangent_out, strict=True)]
    return self.maybe_box(primal_out, tangent_out)

  def box(self, primal, tangent):
    return JVPTracer(self, primal, tangent)

  def maybe_box(self, primal, tangent):
    """A rule's output: a tracer of this trace, or the bare primal when the tangent is a
    symbolic zero or float0 (JAX's `maybe_jvp_tracer`): a value that no input tangent
    reaches, such as an integer output of a jitted function, is not differentiated."""
    if type(tangent) is Zero or getattr(tangent, "dtype", None) == dtypes.float0:
      return primal
    return JVPTracer(self, primal, tangent)


def maybe_jvp_tracer(trace, primal, tangent):
  """`primal` with `tangent` under `trace`; as in JAX, a symbolically zero or float0 tangent
  (of an integer or boolean input) leaves the primal untraced, so it counts as unperturbed
  (a custom_vjp rule sees ``perturbed=False``)."""
  if type(tangent) is Zero or core.get_aval(tangent).dtype == dtypes.float0:
    return primal
  return JVPTracer(trace, primal, tangent)


def jvp_flat(fun, primals, tangents, tag=None):
  """Runs `fun` (flat list in, flat list out) forward with tangents; returns (primals_out, tangents_out)."""
  trace = JVPTrace(core.current_trace(), tag)
  tracers = [maybe_jvp_tracer(trace, p, t) for p, t in zip(primals, tangents)]
  with core.set_current_trace(trace):
    try:
      outs = fun(*tracers)
    finally:
      trace.invalidate()
  pairs = [trace.to_primal_tangent_pair(o) for o in outs]
  if config.jax_check_tracer_leaks:
    from xjax._src import leak_checker  # only loaded when leak checking is on
    del tracers, outs
    leak_checker.check_trace(trace)
  return [p for p, _ in pairs], [t for _, t in pairs]


def jvp_jaxpr(closed: core.ClosedJaxpr, nonzeros) -> core.ClosedJaxpr:
  """The jaxpr computing (primals_out..., tangents_out...) from (primals..., nonzero tangents...)."""
  return jvp_jaxpr_nonzeros(closed, nonzeros, [True] * len(closed.out_avals))[0]


def jvp_jaxpr_nonzeros(closed: core.ClosedJaxpr, nonzeros, instantiate):
  """The jvp of `closed`: (primals..., nonzero tangents...) -> (primals..., nonzero tangents...).

  `instantiate` (one bool per output) forces an output tangent to be present; the others
  are present only where a nonzero input tangent reaches them (JAX's ``jvp_jaxpr(...,
  instantiate)``). Returns (jaxpr, out_nonzeros).
  """
  avals = closed.in_avals
  tangent_avals = [a.to_tangent_aval() for a, nz in zip(avals, nonzeros) if nz]
  out_nz = []

  def fun(*args):
    primals, tangent_args = args[:len(avals)], iter(args[len(avals):])
    tangents = [next(tangent_args) if nz else Zero(a.to_tangent_aval())
                for a, nz in zip(avals, nonzeros)]
    outs_p, outs_t = jvp_flat(core.jaxpr_as_fun(closed), primals, tangents)
    out_nz[:] = [type(t) is not Zero or inst for t, inst in zip(outs_t, instantiate)]
    return [*outs_p, *(instantiate_zeros(t) for t, nz in zip(outs_t, out_nz) if nz)]

  # Constants it captures (instantiated zeros) are host values: they stay in the ClosedJaxpr.
  return pe.trace_to_jaxpr(fun, [*avals, *tangent_avals]), out_nz


# ----------------------------------------------------------------------------
# Linearization


def linearize_flat(fun, primals):
  """Linearizes flat `fun` at `primals`.

  Returns (primals_out, linear closed jaxpr from tangents to tangents_out,
  which output tangents are symbolically zero).
  """
  pe_trace = pe.PartialEvalTrace(core.current_trace())
  tangents_in = [pe_trace.new_arg(core.get_aval(p).to_tangent_aval()) for p in primals]
  jvp_trace = JVPTrace(pe_trace, is_linearize=True)
  tracers = [maybe_jvp_tracer(jvp_trace, p, t) for p, t in zip(primals, tangents_in)]
  with core.set_current_trace(jvp_trace):
    try:
      outs = fun(*tracers)
    finally:
      jvp_trace.invalidate()
  pairs = [jvp_trace.to_primal_tangent_pair(o) for o in outs]
  if config.jax_check_tracer_leaks:
    from xjax._src import leak_checker  # only loaded when leak checking is on
    del tracers, outs
    leak_checker.check_trace(jvp_trace)
  primals_out = [p for p, _ in pairs]
  tangents_out = [instantiate_zeros(t) for _, t in pairs]
  pe_trace.invalidate()
  linear = pe.dce_closed_linear_jaxpr(pe_trace.to_jaxpr(tangents_out))
  return primals_out, linear


# ----------------------------------------------------------------------------
# Transposition


class UndefinedPrimal:
  """A linear input of a transpose rule: only its aval is known."""
  __slots__ = ("aval",)

  def __init__(self, aval):
    self.aval = aval

  def __repr__(self):
    return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined_primal(x) -> bool:
  return type(x) is UndefinedPrimal


def backward_pass(jaxpr: core.Jaxpr, consts, primals_in, cotangents_out):
  """Transposes `jaxpr` with respect to its UndefinedPrimal inputs.

  Returns the cotangent of each input (Zero where nothing flowed, None for
  defined, non-linear inputs).
  """
  env: dict = {}
  linear: set = set()

  def read_primal(v):
    if type(v) is core.Literal:
      return v.val
    if v in linear:
      return UndefinedPrimal(v.aval)
    return env[v]

  env.update(zip(jaxpr.constvars, consts, strict=True))
  for v, p in zip(jaxpr.invars, primals_in, strict=True):
    if is_undefined_primal(p):
      linear.add(v)
    else:
      env[v] = p
  # Forward: equations on known values only (residual computations) run now.
  linear_eqns = []
  for eqn in jaxpr.eqns:
    if any(type(v) is not core.Literal and v in linear for v in eqn.invars):
      linear.update(eqn.outvars)
      linear_eqns.append(eqn)
    else:
      outs = eqn.primitive.bind(*map(read_primal, eqn.invars), **eqn.params)
      outs = outs if eqn.primitive.multiple_results else [outs]
      env.update(zip(eqn.outvars, outs, strict=True))

  ct_env: dict = {}

  def write_ct(v, ct):
    if type(v) is core.Literal or type(ct) is Zero or ct is None or v not in linear:
      return
    ct_env[v] = add_tangents(ct_env[v], ct) if v in ct_env else ct

  def read_ct(v):
    if type(v) is core.Literal:
      return Zero(v.aval.to_tangent_aval())
    ct = ct_env.pop(v, Zero(v.aval.to_tangent_aval()))
    if core.trace_ctx.check_vma and type(ct) is not Zero:  # in a shard_map body
      ct = vma.match_primal(ct, v.aval)
    return ct

  for v, ct in zip(jaxpr.outvars, cotangents_out, strict=True):
    write_ct(v, ct)
  for eqn in reversed(linear_eqns):
    cts_out = [read_ct(v) for v in eqn.outvars]
    rule = eqn.primitive.transpose
    if rule is None:
      raise core.missing_rule("Transpose", eqn.primitive)
    if not eqn.primitive.multiple_results:
      cts_out = cts_out[0]
      if type(cts_out) is Zero:
        continue
    elif all(type(c) is Zero for c in cts_out):
      continue
    cts_in = rule(cts_out, *map(read_primal, eqn.invars), **eqn.params)
    for v, ct in zip(eqn.invars, cts_in, strict=True):
      write_ct(v, ct)
  return [read_ct(v) if is_undefined_primal(p) else None
          for v, p in zip(jaxpr.invars, primals_in)]


# ----------------------------------------------------------------------------
# Helpers for writing rules next to primitives


def defjvp(primitive, *jvp_rules):
  """Sets a jvp rule from one function per argument: `rule(t_i, *primals, **params)`.

  A None entry means the primitive is not differentiable in that argument.
  The contributions of the nonzero tangents are summed.
  """
  def rule(primals, tangents, **params):
    primal_out = primitive.bind(*primals, **params)
    tangent_out = Zero(core.get_aval(primal_out).to_tangent_aval())
    for fn, t in zip(jvp_rules, tangents):
      if fn is not None and type(t) is not Zero:
        tangent_out = add_tangents(tangent_out, fn(t, *primals, **params))
    return primal_out, tangent_out
  primitive.def_jvp(rule)
  return rule


def defjvp_zero(primitive):
  """Marks `primitive` as having zero tangents (integer or boolean outputs)."""
  def rule(primals, tangents, **params):
    out = primitive.bind(*primals, **params)
    outs = out if primitive.multiple_results else [out]
    zeros = [Zero(core.get_aval(o).to_tangent_aval()) for o in outs]
    return out, (zeros if primitive.multiple_results else zeros[0])
  primitive.def_jvp(rule)
  return rule


def defjvp2(primitive, *jvp_rules):
  """As `defjvp`, with the primal output passed too: `rule(t_i, ans, *primals, **params)`."""
  def rule(primals, tangents, **params):
    primal_out = primitive.bind(*primals, **params)
    tangent_out = Zero(core.get_aval(primal_out).to_tangent_aval())
    for fn, t in zip(jvp_rules, tangents):
      if fn is not None and type(t) is not Zero:
        tangent_out = add_tangents(tangent_out, fn(t, primal_out, *primals, **params))
    return primal_out, tangent_out
  primitive.def_jvp(rule)
  return rule


def defbilinear(primitive, lhs_transpose, rhs_transpose):
  """A primitive linear in each of its two arguments separately (mul, dot_general).

  The jvp is ``f(x_dot, y) + f(x, y_dot)``; `lhs_transpose(ct, x, y, **params)`
  gives the cotangent of an undefined x (y known), `rhs_transpose` that of y.
  """
  defjvp(primitive, lambda x_dot, x, y, **params: primitive.bind(x_dot, y, **params),
         lambda y_dot, x, y, **params: primitive.bind(x, y_dot, **params))

  def transpose(ct, x, y, **params):
    assert is_undefined_primal(x) != is_undefined_primal(y), (
        f"internal: {primitive.name} transposed in both or neither argument", x, y)
    if is_undefined_primal(x):
      return [lhs_transpose(ct, x, y, **params), None]
    return [None, rhs_transpose(ct, x, y, **params)]
  primitive.def_transpose(transpose)


def deflinear(primitive, transpose_rule):
  """A primitive linear in all its arguments: jvp applies it to the tangents.

  `transpose_rule(ct, *args, **params)` returns the cotangents of the args.
  """
  def jvp(primals, tangents, **params):
    primal_out = primitive.bind(*primals, **params)
    if any(type(t) is Zero for t in tangents):
      tangents = [instantiate_zeros(t) for t in tangents]
    return primal_out, primitive.bind(*tangents, **params)
  primitive.def_jvp(jvp)
  primitive.def_transpose(transpose_rule)


def is_linear_input(x) -> bool:
  return type(x) is UndefinedPrimal
