"""`jit_p`: the higher-order primitive a `jit` call binds under another transformation.

Under grad, vmap or an enclosing jit, a jitted function traces to a closed jaxpr and binds
`jit_p` with it, so outer interpreters see one equation. Its rules are here, in one block:
eager evaluation (compile the jaxpr and run it), abstract evaluation, lowering (a call of a
private function of the module), jvp, partial evaluation, transpose, batching, printing and
discharge of refs. The jitted function object and its caches are in `jit.py` and
`jit_cache.py`.
"""
from __future__ import annotations

from xjax._src import core
from xjax._src import jaxpr_pp
from xjax._src import debug_nans
from xjax._src import dispatch
from xjax._src import executable_cache
from xjax._src import jaxpr_keys
from xjax._src.config import config
from xjax._src.interpreters import batching
from xjax._src.interpreters import discharge
from xjax._src.interpreters import partial_eval as pe
from xjax._src.sharding import spmd
from xjax._src.state import types as state_types


def _jit_impl(*args, jaxpr, name, donated_invars, inline, keep_unused):
  device, committed = dispatch.pick_device(args, name)
  if device is dispatch.SPMD or spmd.program_mesh(jaxpr.jaxpr) is not None:
    return _run_spmd_jaxpr(jaxpr, name, args)
  exe = _compiled_jaxpr(jaxpr, device, name)
  outs = exe.run([dispatch.to_buffer(a, device) for a in (*jaxpr.consts, *args)], committed)
  if config.jax_debug_nans or config.jax_debug_infs:
    debug_nans.check_jit(name, outs, jaxpr, args)
  return outs


def _compiled_jaxpr(jaxpr: core.ClosedJaxpr, device, name: str):
  """The executable of a nested jit's jaxpr run eagerly, taking its consts as leading
  arguments: cached by what it computes, so the new jaxpr each `grad` step builds (with new
  residuals as consts) reuses it."""
  key = ("jit", jaxpr_keys.structure_key(jaxpr.jaxpr), device)
  return dispatch.cached_executable(key, lambda: dispatch.compile_jaxpr(
      pe.convert_constvars_jaxpr(jaxpr)[0], device, f"jit_{name}"))


def _run_spmd_jaxpr(jaxpr: core.ClosedJaxpr, name: str, args):
  """A nested jit's jaxpr run eagerly as one program over the mesh its arguments (or its
  own equations) name."""
  in_shardings = tuple(spmd.in_shardings_of(args, name))

  def build():
    mesh = spmd.mesh_of(args, name) or spmd.program_mesh(jaxpr.jaxpr)
    return spmd.compile_spmd(jaxpr, mesh, in_shardings, [None] * len(jaxpr.out_avals),
                             f"jit_{name}")
  key = ("jit-spmd", jaxpr_keys.structure_key(jaxpr), in_shardings)
  return dispatch.cached_executable(key, build).run(list(args))


jit_p = core.Primitive("jit", multiple_results=True)
jit_p.def_impl(_jit_impl)


@jit_p.def_abstract_eval
def _jit_abstract_eval(*avals, jaxpr, **_):
  return jaxpr.out_avals


@jit_p.def_lowering
def _jit_lowering(ctx, *args, jaxpr, name, **_):
  return ctx.call(jaxpr, name, args)


def _jit_jvp(primals, tangents, *, jaxpr, name, donated_invars, inline, keep_unused):
  from xjax._src.interpreters import ad
  nonzeros = [type(t) is not ad.Zero for t in tangents]
  jvp_jaxpr, out_nonzeros = _jvp_jaxpr_cached(jaxpr, tuple(nonzeros))
  nz_tangents = [t for t, nz in zip(tangents, nonzeros) if nz]
  n = len(primals) + len(nz_tangents)
  outs = jit_p.bind(*primals, *nz_tangents, jaxpr=jvp_jaxpr, name=name,
                    donated_invars=(False,) * n, inline=inline, keep_unused=keep_unused)
  n_out = len(jaxpr.out_avals)
  # As in JAX, an output no nonzero input tangent reaches gets a symbolic zero tangent.
  nz_out = iter(outs[n_out:])
  return outs[:n_out], [next(nz_out) if nz else ad.Zero(aval.to_tangent_aval())
                        for nz, aval in zip(out_nonzeros, jaxpr.out_avals)]


_jvp_jaxprs = executable_cache.DerivedCache("jit jvp jaxprs")


def _jvp_jaxpr_cached(jaxpr, nonzeros):
  """The jvp of `jaxpr` for input tangents `nonzeros` (a bool each): a jaxpr from (primals,
  nonzero tangents) to (primals, nonzero output tangents), and a bool per output saying
  whether its tangent is among them (JAX's `jvp_jaxpr(..., instantiate=False)`)."""
  from xjax._src.interpreters import ad

  def build():
    closed = _discharge_internal_refs(jaxpr)
    return ad.jvp_jaxpr_nonzeros(closed, nonzeros, [False] * len(closed.out_avals))
  return _jvp_jaxprs.get_or_build(jaxpr, nonzeros, build)


def _closed_over_refs_last(jaxpr, n_consts: int, args):
  """The jit jaxpr and operands with the closed-over refs moved after the arguments
  (where JAX passes them)."""
  invars = jaxpr.jaxpr.invars
  is_ref = [i < n_consts and state_types.is_ref_aval(v.aval) for i, v in enumerate(invars)]
  order = ([i for i, r in enumerate(is_ref) if not r]
           + [i for i, r in enumerate(is_ref) if r])
  moved = jaxpr.jaxpr.replace(invars=[invars[i] for i in order])
  return core.ClosedJaxpr(moved, jaxpr.consts), [args[i] for i in order]


def _discharge_internal_refs(jaxpr):
  """`jaxpr` without state when it only uses refs it makes (differentiated as a pure function)."""
  if not state_types.uses_state(jaxpr.jaxpr):
    return jaxpr
  return discharge.discharge_internal_refs(jaxpr)


def _jit_partial_eval(trace, args, unknowns, *, jaxpr, name, donated_invars, inline,
                      keep_unused):
  # As JAX's: the known call returns no value it only forwards, and the staged (unknown)
  # call takes only the residuals and unknown inputs its jaxpr reads.
  def build():
    known, unknown, out_unknowns, num_res = pe.partial_eval_jaxpr(jaxpr, unknowns)
    return (*_forwarded_outputs(known, num_res), *_unread_inputs_dropped(unknown),
            out_unknowns, num_res)
  known, sources, unknown, read, out_unknowns, num_res = _partial_eval_jaxprs.get_or_build(
      jaxpr, tuple(unknowns), build)
  known_args = [a for a, u in zip(args, unknowns) if not u]
  with core.set_current_trace(trace.parent_trace):
    returned = jit_p.bind(*known_args, jaxpr=known, name=name,
                          donated_invars=(False,) * len(known_args), inline=inline,
                          keep_unused=keep_unused)
  # Put back what the known call forwards (outputs first: residuals may name them).
  known_outs = [returned[i] if kind == "ret" else None for kind, i in sources]
  known_outs = [known_outs[i] if kind == "out" else x
                for (kind, i), x in zip(sources, known_outs)]
  known_outs = [known_args[i] if kind == "in" else known.consts[i] if kind == "const" else x
                for (kind, i), x in zip(sources, known_outs)]
  n_known = len(known_outs) - num_res
  unknown_args = [a for a, u in zip(args, unknowns) if u]
  staged_args = [a for a, r in zip([*known_outs[n_known:], *unknown_args], read) if r]
  unknown_outs = trace.stage(jit_p, staged_args, dict(
      jaxpr=unknown, name=name, donated_invars=(False,) * len(staged_args), inline=inline,
      keep_unused=keep_unused))
  known_iter, unknown_iter = iter(known_outs[:n_known]), iter(unknown_outs)
  return [next(unknown_iter) if u else next(known_iter) for u in out_unknowns]


_partial_eval_jaxprs = executable_cache.DerivedCache("jit partial-eval jaxprs")


def _forwarded_outputs(known: core.ClosedJaxpr, num_res: int):
  """`known` without the outputs it only forwards: its inputs and constants, and
  residuals that are also primal outputs.

  Returns the pruned jaxpr and, per original output, where its value comes from:
  ("ret", i) the i-th output of the pruned call, ("in", i) the i-th input, ("const", i)
  the i-th constant, ("out", j) the value of original output j.
  """
  jaxpr = known.jaxpr
  invars = {v: i for i, v in enumerate(jaxpr.invars)}
  constvars = {v: i for i, v in enumerate(jaxpr.constvars)}
  n_primal = len(jaxpr.outvars) - num_res
  kept_primal: dict = {}
  sources, kept = [], []
  for j, v in enumerate(jaxpr.outvars):
    if type(v) is core.Var and v in invars:
      sources.append(("in", invars[v]))
    elif type(v) is core.Var and v in constvars:
      sources.append(("const", constvars[v]))
    elif j >= n_primal and type(v) is core.Var and v in kept_primal:
      sources.append(("out", kept_primal[v]))
    else:
      if j < n_primal and type(v) is core.Var:
        kept_primal.setdefault(v, j)
      sources.append(("ret", len(kept)))
      kept.append(v)
  if len(kept) == len(jaxpr.outvars):
    return known, sources
  return core.ClosedJaxpr(jaxpr.replace(outvars=kept), known.consts), sources


def _unread_inputs_dropped(closed: core.ClosedJaxpr):
  """`closed` without its dead equations and the inputs it then never reads (as JAX's
  dead-code elimination of a linear jaxpr leaves a jit), and one bool per input: whether
  kept."""
  jaxpr, kept = pe.dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars))
  if all(kept) and len(jaxpr.eqns) == len(closed.jaxpr.eqns):
    return closed, tuple(kept)
  return core.ClosedJaxpr(jaxpr, closed.consts), tuple(kept)


def _jit_transpose(cts, *args, jaxpr, name, donated_invars, inline, keep_unused):
  """One `jit` equation of the transposed jaxpr, as JAX's: it takes the defined operands
  (residuals) and the nonzero cotangents it reads, and returns the nonzero cotangents of
  the linear operands."""
  from xjax._src import dtypes
  from xjax._src.interpreters import ad
  linear = tuple(ad.is_undefined_primal(a) for a in args)
  residuals = [a for a, lin in zip(args, linear) if not lin]
  # float0 cotangents (of integer outputs) carry nothing: taken as zeros.
  cts = [ad.Zero(core.get_aval(ct)) if type(ct) is not ad.Zero
         and core.get_aval(ct).dtype == dtypes.float0 else ct for ct in cts]
  nz_cts = [ct for ct in cts if type(ct) is not ad.Zero]
  in_avals = tuple(core.get_aval(x) for x in (*residuals, *nz_cts))
  lin_avals = tuple(a.aval for a in args if ad.is_undefined_primal(a))
  ct_nonzero = tuple(type(ct) is not ad.Zero for ct in cts)
  transposed, read, out_nonzero = _transposed_jaxprs.get_or_build(
      jaxpr, (linear, ct_nonzero, in_avals, lin_avals),
      lambda: _transpose_jaxpr(jaxpr, linear, ct_nonzero, in_avals, lin_avals))
  operands = [x for x, r in zip((*residuals, *nz_cts), read) if r]
  outs = iter(jit_p.bind(*operands, jaxpr=transposed, name=name,
                         donated_invars=(False,) * len(operands), inline=inline,
                         keep_unused=keep_unused))
  lin_cts = iter([next(outs) if nz else ad.Zero(a.to_tangent_aval())
                  for a, nz in zip(lin_avals, out_nonzero)])
  return [next(lin_cts) if lin else None for lin in linear]


_transposed_jaxprs = executable_cache.DerivedCache("jit transposed jaxprs")


def _transpose_jaxpr(jaxpr, linear, ct_nonzero, in_avals, lin_avals):
  """The jaxpr from (residuals..., nonzero cotangents...) to the nonzero cotangents of the
  linear inputs of `jaxpr`, less the inputs it does not read (as JAX prunes the linear
  jaxpr before transposing it); also which inputs it reads and which cotangents are
  nonzero."""
  from xjax._src import dtypes
  from xjax._src.interpreters import ad
  n_res = linear.count(False)
  out_nonzero = []

  def transposed(*ins):
    res, lin, nz_cts = iter(ins[:n_res]), iter(lin_avals), iter(ins[n_res:])
    primals = [ad.UndefinedPrimal(next(lin)) if l else next(res) for l in linear]
    cts = [next(nz_cts) if nz else ad.Zero(a.to_tangent_aval())
           for a, nz in zip(jaxpr.out_avals, ct_nonzero)]
    cts_in = ad.backward_pass(jaxpr.jaxpr, jaxpr.consts, primals, cts)
    lin_cts = [None if type(ct) is ad.Zero or core.get_aval(ct).dtype == dtypes.float0
               else ct for ct, l in zip(cts_in, linear) if l]
    out_nonzero.extend(ct is not None for ct in lin_cts)
    return [ct for ct in lin_cts if ct is not None]

  closed, read = _unread_inputs_dropped(pe.trace_to_jaxpr(transposed, list(in_avals)))
  return closed, read, tuple(out_nonzero)


def _jit_batch(axis_data, args, dims, *, jaxpr, **params):
  # The inner jaxpr sees the batch axes where they are; its outputs keep theirs.
  batched, out_dims = batching.batch_jaxpr_axes(jaxpr, axis_data, tuple(dims))
  return jit_p.bind(*args, jaxpr=batched, **params), list(out_dims)


jit_p.def_jvp(_jit_jvp)
jit_p.def_partial_eval(_jit_partial_eval)
jit_p.def_transpose(_jit_transpose)
jit_p.def_batch(_jit_batch)
jit_p.def_dce(pe.call_dce_rule("jaxpr", per_input=("donated_invars",),
                                 keep_inputs_param="keep_unused"))


def _jit_pp_eqn(eqn, context):
  params = dict(eqn.params)
  jaxpr = params["jaxpr"].jaxpr
  if jaxpr not in context.shared_jaxprs:
    context.suggest_same_var_names(jaxpr.invars, eqn.invars)
    context.suggest_same_var_names(jaxpr.outvars, eqn.outvars)
  shown = {"name": params.pop("name")}
  del params["inline"]
  if not any(params["donated_invars"]):
    del params["donated_invars"]
  if not params["keep_unused"]:
    del params["keep_unused"]
  shown.update(sorted(params.items()))
  return jaxpr_pp.pp_eqn_with_params(eqn, context, shown)


jit_p.pp_eqn = _jit_pp_eqn


@jit_p.def_discharge
def _jit_discharge(ref_ids, in_avals, args, *, jaxpr, donated_invars, **params):
  disch, consts = discharge.consts_as_args(discharge.discharged_closed(jaxpr))
  outs = jit_p.bind(*consts, *args, jaxpr=disch,
                    donated_invars=(False,) * len(consts) + tuple(donated_invars), **params)
  n = len(jaxpr.out_avals)
  finals = iter(outs[n:])
  return [next(finals) if r is not None else None for r in ref_ids], outs[:n]
