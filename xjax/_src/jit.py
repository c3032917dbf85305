"""`jit`: trace once per signature, compile with XLA, cache, run.

The signature of a call is (treedef of the dynamic arguments, their avals
with weak types, the static arguments, the device, the config flags that
change programs). A miss traces the function to a jaxpr, lowers and compiles
it; a hit only flattens, looks up and executes: that is the hot path.

Under another transformation (grad, vmap, an enclosing jit), a call traces
the function to a closed jaxpr and binds `jit_p`, so outer interpreters see
one higher-order equation.
"""
from __future__ import annotations

import collections
import functools
import operator
import textwrap
import threading
import traceback
import warnings
import weakref

import numpy as np

from xjax._src import core
from xjax._src import debug_nans
from xjax._src import dispatch
from xjax._src import executable_cache
from xjax._src import jaxpr_keys
from xjax._src import monitoring
from xjax._src import stablehlo as hlo
from xjax._src import stages
from xjax._src import traceback_util
from xjax._src import tree_util
from xjax._src.api_util import (arg_path_name, check_callable, debug_info, flatten_fun,
                                fun_name, fun_signature, infer_argnums_and_argnames,
                                shaped_abstractify, validate_argnums)
from xjax._src.array import Array
from xjax._src.config import config
from xjax._src.interpreters import batching
from xjax._src.interpreters import discharge
from xjax._src.interpreters import lowering
from xjax._src.interpreters import partial_eval as pe
from xjax._src.sharding import spmd
from xjax._src.sharding.mesh import get_concrete_mesh
from xjax._src.sharding.partition_spec import PartitionSpec
from xjax._src.sharding.shardings import NamedSharding, Sharding
from xjax._src.state import types as state_types
from xjax._src import backend

_backend = backend  # `jit` has an argument of that name


# ----------------------------------------------------------------------------
# jit_p: the higher-order primitive of a nested jit


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
  return core.pp_eqn_with_params(eqn, context, shown)


jit_p.pp_eqn = _jit_pp_eqn


@discharge.register_rule(jit_p)
def _jit_discharge(ref_ids, in_avals, args, *, jaxpr, donated_invars, **params):
  disch, consts = discharge.consts_as_args(discharge.discharged_closed(jaxpr))
  outs = jit_p.bind(*consts, *args, jaxpr=disch,
                    donated_invars=(False,) * len(consts) + tuple(donated_invars), **params)
  n = len(jaxpr.out_avals)
  finals = iter(outs[n:])
  return [next(finals) if r is not None else None for r in ref_ids], outs[:n]


# ----------------------------------------------------------------------------
# The jitted function object


class _CacheEntry:
  __slots__ = ("executable", "out_tree", "donate_mask", "jaxpr", "by_leaves", "_fast")

  def __init__(self, executable, out_tree, donate_mask, jaxpr, by_leaves=False):
    self.executable = executable
    self.out_tree = out_tree
    self.donate_mask = donate_mask
    self.jaxpr = jaxpr
    # An SPMD executable (the jaxpr names a mesh) takes the argument leaves themselves.
    self.by_leaves = by_leaves
    self._fast = None

  def run_uncommitted(self, buffers):
    """The outputs (as the function returns them) for uncommitted argument buffers."""
    fast = self._fast
    if fast is None:
      fast = self._fast = _fast_runner(self)
    if fast is not False:
      try:
        return fast(buffers)
      except Exception:  # noqa: BLE001  (e.g. a deleted argument: the full path says so)
        pass
    return self.out_tree.unflatten(self.executable.run(buffers, False))


def _runs_on_buffers_alone(exe) -> bool:
  """Whether `exe` is a pure one-device program without constants, tokens or float0 outputs:
  it then runs on its arguments' buffers alone (the fast paths' condition)."""
  return (type(exe) is dispatch.Executable and not exe.const_buffers and not exe._has_tokens
          and not exe._has_float0 and exe._execute is backend.execute)


def _fast_runner(entry):
  """`entry`'s executable as one closure from argument buffers to the function's output,
  for a pure program without constants or tokens (it may run again after an error: the
  full path then reports it); False otherwise."""
  exe = entry.executable
  if not _runs_on_buffers_alone(exe):
    return False
  execute = backend.runner(exe.xla_executable, exe._handlers[False])
  device, avals = exe.device, exe.out_avals
  if tree_util.treedef_is_strict_leaf(entry.out_tree):
    aval, = avals

    def run_one(buffers):
      return Array(execute(buffers)[0], aval, device, False)
    return run_one
  unflatten = entry.out_tree.unflatten

  def run(buffers):
    return unflatten([Array(b, a, device, False) for b, a in zip(execute(buffers), avals)])
  return run


_MISS = object()

# `_fast_call`'s checks unrolled for one structure of arguments (a loop over the leaves
# costs about as much as the rest of the call): containers are matched by exact type and
# length, dicts by their keys (parameters k0, k1, ...), and leaf i must be an uncommitted
# Array of aval `a{i}` on `device`. One output is made here; several go through `finish`.
_FAST_CALL_TEMPLATE = """
def fast_call(args):
  if (len(args) != {n_args} or config.epoch != epoch or trace_ctx.trace is not eval_trace
      or get_ident() != thread):
    return _MISS
  try:
{access}
  except (KeyError, IndexError):
    return _MISS
  if {checks}:
    return _MISS
  cache.hits += 1
  try:
    outs = execute([{buffers}])
  except Exception:  # e.g. a deleted argument: the full path reports it
    return _MISS
  return {result}
"""
# Generated fast-call makers by (argument structure, single output).
_fast_call_makers = executable_cache.LRUCache("jit fast-call makers", 1024)
# Leaves beyond which a call takes the general path (generated code grows with them).
_FAST_CALL_MAX_LEAVES = 256


def _access_code(node, expr: str, lines: list, keys: list, n_leaves: list) -> bool:
  """Appends to `lines` the statements that bind the leaves of `expr` (of structure `node`)
  to x0, x1, ... in flattening order, returning _MISS when the value differs in structure;
  False where a node is not a tuple, list, dict, None or leaf (the general path serves it)."""
  if node is tree_util._LEAF:
    lines.append(f"x{n_leaves[0]} = {expr}")
    n_leaves[0] += 1
    return True
  kind, aux, children = node
  if kind is type(None):
    lines.append(f"if {expr} is not None: return _MISS")
    return True
  if kind not in (tuple, list, dict):
    return False
  var = f"t{len(lines)}"
  lines.append(f"{var} = {expr}")
  lines.append(f"if type({var}) is not {kind.__name__} or len({var}) != {len(children)}: "
               "return _MISS")
  for i, child in enumerate(children):
    if kind is dict:
      keys.append(aux[i])
      item = f"{var}[k{len(keys) - 1}]"
    else:
      item = f"{var}[{i}]"
    if not _access_code(child, item, lines, keys, n_leaves):
      return False
  return True


def _fast_call(cache, entry, args_node, avals, device):
  """The function of a call's positional arguments that runs `entry` again when they have
  the structure `args_node` (their tuple's node) with uncommitted Array leaves of `avals` on
  `device`, in this thread, under the flags and trace of now (else it returns `_MISS`): jit's
  fastest path, under 1 us above the executable's own dispatch for a few arguments. None
  where `entry` needs more than its arguments' buffers, or the structure has other nodes."""
  exe = entry.executable
  if not _runs_on_buffers_alone(exe):
    return None
  one = tree_util.treedef_is_strict_leaf(entry.out_tree)
  maker = _fast_call_makers.get((args_node, one))
  if maker is None:
    # The positional arguments' tuple is unpacked; containers among them are matched below.
    lines, keys, n_leaves, names = [], [], [0], []
    for i, child in enumerate(args_node[2]):
      names.append(f"u{i}")
      if not _access_code(child, f"u{i}", lines, keys, n_leaves):
        return None
      if child is tree_util._LEAF:
        names[-1] = lines.pop()[:-len(f" = u{i}")]
    lines.insert(0, ", ".join(names) + ", = args")
    if n_leaves[0] != len(avals):
      return None
    n = n_leaves[0]
    checks = " or ".join(f"type(x{i}) is not Array or x{i}.aval is not a{i} or x{i}._committed "
                         f"or x{i}._device is not device" for i in range(n))
    code = _FAST_CALL_TEMPLATE.format(
        n_args=len(args_node[2]), access=textwrap.indent("\n".join(lines), "    "),
        checks=checks,
        buffers=", ".join(f"x{i}._buf" for i in range(n)),
        result="Array(outs[0], out_aval, device, False)" if one else "finish(outs)")
    params = ", ".join(["cache", "execute", "finish", "out_aval", "device", "epoch", "thread",
                        *(f"a{i}" for i in range(n)), *(f"k{i}" for i in range(len(keys)))])
    namespace = dict(config=config, trace_ctx=core.trace_ctx, eval_trace=core.eval_trace,
                     get_ident=threading.get_ident, Array=Array, _MISS=_MISS)
    exec(f"def make({params}):\n" + textwrap.indent(code, "  ") + "  return fast_call\n",
         namespace)
    maker = _fast_call_makers.put((args_node, one), (namespace["make"], tuple(keys)))
  execute = backend.runner(exe.xla_executable, exe._handlers[False])
  out_avals, unflatten = exe.out_avals, entry.out_tree.unflatten
  finish = lambda outs: unflatten([Array(b, a, device, False) for b, a in zip(outs, out_avals)])
  make, keys = maker
  return make(cache, execute, finish, out_avals[0] if one else None, device, config.epoch,
              threading.get_ident(), *avals, *keys)


_function_caches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# Executables kept per jitted function (as JAX's jit cache, bounded: each holds
# memory mappings, and a loop over ever new shapes must not exhaust them).
_CACHE_SIZE = 4096

CacheInfo = collections.namedtuple("CacheInfo", "hits misses maxsize currsize last_miss")
CacheInfo.__doc__ = """A jitted function's cache statistics (`PjitFunction.cache_info`):
calls served from the cache, calls that compiled, the bound, the entries held, and why the
last miss missed."""


class _ExecutableCache(executable_cache.LRUCache):
  """A jitted function's executables by call signature: an `LRUCache` of at most
  `_CACHE_SIZE` entries (an evicted executable is freed once nothing else holds it), with
  the reason of the last miss and the memos of jit's fast paths."""
  __slots__ = ("last_miss", "memo", "fast_call")

  def __init__(self):
    super().__init__("jit signatures", _CACHE_SIZE)
    self.last_miss = None
    # The last call's signature: (avals, device, flags key, entry, tree node, committed,
    # simple, statics, plain kwargs, scalars). A call with the same flags, tree, statics
    # and leaves' avals (by identity) reuses its entry without hashing a key; when
    # `simple` (positional uncommitted Arrays on the default device or Python scalars,
    # matched by type and value with their buffers in `scalars`; keyword arguments all
    # plain values that are static or None) it also skips splitting and flattening.
    self.memo = None
    # After a call of uncommitted Arrays in positional arguments (tuples, lists and dicts of
    # them included): `_fast_call`'s function of the positional arguments, giving the
    # outputs or `_MISS` (then the paths below run).
    self.fast_call = None

  def lookup(self, key, statics, build):
    """The entry under `key` (made most recently used), else `build()` added there."""
    entry = _lookup(self, key, statics)
    if entry is None:
      return self.add(key, build)
    return entry

  def add(self, key, build):
    """After a miss: records why it missed, builds the entry and stores it."""
    self.last_miss = _miss_reason(key, self.most_recent_key())
    return self.put(key, build())

  def clear(self):
    super().clear()
    self.last_miss = None
    self.memo = None
    self.fast_call = None


_KEY_FIELDS = ("the argument structure (pytree)", "the argument shapes or dtypes",
               "the static arguments", "the device", "the configuration flags")
_SPMD_KEY_FIELDS = ("the argument structure (pytree)", "the argument shapes or dtypes",
                    "the static arguments", "the argument shardings",
                    "the configuration flags")


def _miss_reason(key, previous) -> str:
  """Why `key` missed, compared with the most recently used key."""
  try:
    return _compare_keys(key, previous)
  except Exception:  # noqa: BLE001  (a static argument whose __eq__ raises)
    return "the arguments differ from the last call's"


def _compare_keys(key, previous) -> str:
  if previous is None:
    return "first call: nothing compiled yet"
  spmd_key, spmd_previous = key[0] == "spmd", previous[0] == "spmd"
  if spmd_key != spmd_previous:
    return ("the arguments span several devices now" if spmd_key
            else "the arguments are on one device now")
  fields = _SPMD_KEY_FIELDS if spmd_key else _KEY_FIELDS
  new, old = key[spmd_key:], previous[spmd_key:]
  changed = [name for name, a, b in zip(fields, new, old) if a != b]
  if fields[1] in changed and len(new[1]) == len(old[1]):
    diffs = [f"leaf {i}: {b.str_short(True)} -> {a.str_short(True)}"
             for i, (a, b) in enumerate(zip(new[1], old[1])) if a != b]
    changed[changed.index(fields[1])] += " (" + ", ".join(diffs[:3]) + (
        ", ..." if len(diffs) > 3 else "") + ")"
  return "changed since the last call: " + "; ".join(changed) if changed else (
      "an entry evicted or cleared before")


def _caches_for(fun, options) -> tuple:
  """The (executable, jaxpr, converted-jaxpr) caches shared by every jit of `fun` with `options`."""
  try:
    per_fun = _function_caches.setdefault(fun, {})
  except TypeError:  # not weakly referenceable: caches live with this wrapper
    per_fun = {}
  caches = per_fun.get(options)
  if caches is None:
    caches = per_fun[options] = (_ExecutableCache(),
                                 executable_cache.LRUCache("jit traces", _CACHE_SIZE),
                                 weakref.WeakKeyDictionary())
  return caches


class PjitFunction:
  """A function compiled with XLA on first call for each argument signature.

  Returned by `xjax.jit` (JAX's type of the same name: libraries recognize jitted
  functions by it); call it like the function it wraps. `lower(*args)` gives the
  StableHLO text, `trace(*args)` the jaxpr.

  Its own state lives in slots, so `functools.wraps(jitted)(g)` (which every
  transformation does) copies only the wrapped function's attributes
  (`__name__`, `__doc__`, `__wrapped__`, ...) onto `g`, never this object's
  function or caches, which a later `jit(g)` would pick up (issue 12).
  """
  __slots__ = ("_fun", "_sig", "_static_argnums", "_static_argnames", "_donate_argnums",
               "_donate_argnames", "_inline", "_keep_unused", "_device", "_name",
               "_has_statics", "_inline_fast", "_cache", "_jaxpr_cache", "_converted",
               "_compiler_options", "_in_shardings", "_out_shardings", "_sharded",
               "_first_static_num", "_negative_static_nums",
               "__dict__", "__weakref__")

  def __init__(self, fun, static_argnums, static_argnames, donate_argnums,
               donate_argnames, inline, keep_unused, device, compiler_options=(),
               in_shardings=None, out_shardings=None):
    check_callable(fun)
    functools.update_wrapper(self, fun)
    self._fun = fun
    self._sig = sig = fun_signature(fun)
    self._static_argnums, self._static_argnames = infer_argnums_and_argnames(
        sig, static_argnums, static_argnames)
    validate_argnums(sig, self._static_argnums, self._static_argnames, "static")
    self._donate_argnums, self._donate_argnames = infer_argnums_and_argnames(
        sig, donate_argnums, donate_argnames)
    validate_argnums(sig, self._donate_argnums, self._donate_argnames, "donate")
    overlap = set(self._static_argnums) & set(self._donate_argnums)
    if overlap:
      raise ValueError(f"static_argnums and donate_argnums cannot intersect: {sorted(overlap)}")
    self._inline = inline
    self._keep_unused = keep_unused
    self._device = device
    self._compiler_options = compiler_options
    self._in_shardings = in_shardings
    self._out_shardings = out_shardings
    # A pytree of Nones (flax's nnx.jit passes such trees) names no sharding: unsharded.
    self._sharded = _names_a_sharding(in_shardings) or _names_a_sharding(out_shardings)
    self._name = fun_name(fun)
    self._has_statics = bool(self._static_argnums or self._static_argnames)
    self._first_static_num = min((i for i in self._static_argnums if i >= 0), default=0)
    self._negative_static_nums = any(i < 0 for i in self._static_argnums)
    self._inline_fast = inline and not self._has_statics
    # As in JAX, caches belong to the function (and options), not to this
    # wrapper: `jit(f)(x)` twice with new wrappers traces once.
    options = (self._static_argnums, self._static_argnames, self._donate_argnums,
               self._donate_argnames, inline, keep_unused, device, compiler_options,
               _hashable_tree(in_shardings), _hashable_tree(out_shardings))
    self._cache, self._jaxpr_cache, self._converted = _caches_for(fun, options)

  def __get__(self, obj, objtype=None):
    if obj is None:
      return self
    return functools.partial(self, obj)

  def __repr__(self):
    return f"<PjitFunction of {self._fun!r}>"  # JAX's repr (chex.is_traceable reads it)

  @property
  def __signature__(self):
    """The wrapped function's signature, as JAX's jitted functions give it to
    `inspect.signature` (with or without follow_wrapped; this object's `__get__` would
    otherwise make inspect take it for a builtin without one); None where the function
    has none (inspect then raises its ValueError)."""
    return self._sig

  # -- splitting static and dynamic arguments --------------------------------

  def _split(self, args, kwargs):
    """(dynamic args, dynamic kwargs, statics); statics are (position or name, type, value)
    triples: the type is part of the cache key, so `f(2)` and `f(2.0)` (equal, same
    hash) or `True` and `1` do not share an executable (issue 12). Unhashable statics
    raise when the key is looked up (`_lookup`)."""
    statics = []
    n = len(args)
    static_nums = self._static_argnums
    # Positional statics only when some static position is among the arguments (jnp's
    # functions pass theirs by keyword: the common case skips this).
    if static_nums and (n > self._first_static_num or self._negative_static_nums):
      nums = {i if i >= 0 else i + n for i in static_nums}
      dyn_args = tuple(a for i, a in enumerate(args) if i not in nums)
      statics.extend((i, type(args[i]), args[i]) for i in sorted(nums) if i < n)
    else:
      dyn_args = args
    names = self._static_argnames
    if names and kwargs:
      dyn_kwargs = {}
      named = []
      for k, v in kwargs.items():
        if k in names:
          named.append((k, type(v), v))
        else:
          dyn_kwargs[k] = v
      if len(named) > 1:
        named.sort(key=_static_name)
      statics.extend(named)
    else:
      dyn_kwargs = kwargs
    return dyn_args, dyn_kwargs, tuple(statics)

  def _rebuild(self, statics, dyn_args, dyn_kwargs):
    """The full (args, kwargs) from the dynamic ones and the static values."""
    args = list(dyn_args)
    kwargs = dict(dyn_kwargs)
    for key, _, value in statics:
      if isinstance(key, int):
        args.insert(key, value)
      else:
        kwargs[key] = value
    return args, kwargs

  def _donate_mask(self, dyn_args, dyn_kwargs, n_leaves):
    if not self._donate_argnums and not self._donate_argnames:
      return None
    static = set(self._static_argnums)
    mask = []
    pos = 0
    for i in range(len(dyn_args) + len(static)):
      if i in static:
        continue
      if pos >= len(dyn_args):
        break
      count = len(tree_util.tree_leaves(dyn_args[pos]))
      mask.extend([i in self._donate_argnums] * count)
      pos += 1
    for k in sorted(dyn_kwargs):
      count = len(tree_util.tree_leaves(dyn_kwargs[k]))
      mask.extend([k in self._donate_argnames] * count)
    assert len(mask) == n_leaves, "internal: donation mask length"
    return tuple(mask)

  # -- tracing ----------------------------------------------------------------

  def _trace(self, statics, dyn_args, dyn_kwargs, leaves, in_tree, avals, traced_for="jit"):
    key = (in_tree, avals, statics, core.trace_context())
    hit = _lookup(self._jaxpr_cache, key, statics)
    if hit is not None:
      return hit
    fun = self._fun

    def with_statics(*args, **kwargs):
      args, kwargs = self._rebuild(statics, args, kwargs)
      return fun(*args, **kwargs)

    flat_fun, out_tree = flatten_fun(with_statics, in_tree)
    full_args, full_kwargs = self._rebuild(statics, dyn_args, dyn_kwargs)
    info = debug_info(traced_for, fun, full_args, full_kwargs,
                      self._static_argnums, self._static_argnames, self._sig)
    if config.jax_explain_cache_misses:
      pe.explain_cache_miss(fun, self._jaxpr_cache.keys(), key, info)
    if core.trace_ctx.trace is core.eval_trace:  # as JAX: a top-level trace is timed
      with monitoring.timed_event(monitoring.JAXPR_TRACE_EVENT, self._name):
        closed = pe.trace_to_jaxpr(flat_fun, avals, info)
    else:
      closed = pe.trace_to_jaxpr(flat_fun, avals, info)
    result = (closed, out_tree.val)
    # A jaxpr closing over an enclosing trace's tracers is valid only in that trace.
    if not any(isinstance(c, core.Tracer) for c in closed.consts):
      self._jaxpr_cache.put(key, result)
    return result

  def _signature(self, leaves, dyn_args, dyn_kwargs):
    """(avals, device, committed, buffers) of any arguments: host values are transferred."""
    avals = self._avals(leaves, dyn_args, dyn_kwargs)
    device, committed = dispatch.pick_device(leaves, self._name)
    if self._device is not None:
      device, committed = self._device, True
    if device is dispatch.SPMD:
      return avals, device, committed, None
    return avals, device, committed, [dispatch.to_buffer(x, device, a)
                                      for x, a in zip(leaves, avals)]

  def _avals(self, leaves, dyn_args, dyn_kwargs):
    try:
      return tuple(x.aval if type(x) is Array else core.get_aval(x) for x in leaves)
    except (TypeError, OverflowError):
      self._raise_bad_argument(leaves, dyn_args, dyn_kwargs)

  def _raise_bad_argument(self, leaves, dyn_args, dyn_kwargs):
    """Raises JAX's TypeError naming the argument that is not an array type."""
    paths = [tree_util.keystr(p) for p, _ in
             tree_util.tree_flatten_with_path((dyn_args, dyn_kwargs))[0]]
    for x, path in zip(leaves, paths):
      if isinstance(x, core.Tracer):
        continue
      shaped_abstractify(x, self._fun, arg_path_name(self._sig, path))
    raise AssertionError("internal: unreachable")

  # -- calling ----------------------------------------------------------------

  def __call__(self, *args, **kwargs):
    # The hot path (measured: bench/workloads.py, "jit dispatch"). Kept to a few lines: a
    # Python frame costs in proportion to its function's locals.
    fast_call = self._cache.fast_call
    if fast_call is not None and not kwargs:
      outs = fast_call(args)
      if outs is not _MISS:
        return outs
    return self._call(args, kwargs)

  def _call(self, args, kwargs):
    # Flatten, key, look up, execute.
    try:
      disabled, check_nans, flags_key = config.dispatch_state()
      memo = self._cache.memo
      # The memo's arguments are uncommitted, so it also needs the same default device
      # (`jax.default_device` is no trace context: the flags key does not show it).
      if (memo is not None and memo[6] and memo[2] is flags_key
          and len(args) == len(memo[0]) and core.trace_ctx.trace is core.eval_trace
          and memo[1] is dispatch.default_device()
          and (memo[8] is None if not kwargs else
               memo[8] is not None and _same_plain_kwargs(kwargs, memo[8]))):
        # The fastest path: the same signature as the last call (see _ExecutableCache).
        device = memo[1]
        buffers = []
        for x, aval, scalar in zip(args, memo[0], memo[9]):
          if type(x) is Array:
            if x.aval is not aval or x._committed or x._device is not device:
              break
            buffers.append(x._buf)
          elif scalar is not None and type(x) is scalar[0] and x == scalar[1]:
            buffers.append(scalar[2])  # the same Python scalar: its buffer again
          else:
            break
        else:
          self._cache.hits += 1
          return memo[3].run_uncommitted(buffers)
      if disabled or (self._inline_fast and core.trace_ctx.trace is not core.eval_trace):
        # Inlined under a trace: the function's equations join the enclosing jaxpr.
        return self._fun(*args, **kwargs)
      if self._has_statics:
        dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
      else:
        dyn_args, dyn_kwargs, statics = args, kwargs, ()
      leaves = []
      root = tree_util.flatten_call_args(dyn_args, dyn_kwargs, leaves)
      if core.trace_ctx.trace is not core.eval_trace:
        in_tree = tree_util.PyTreeDef(root, len(leaves))
        return self._bind(statics, dyn_args, dyn_kwargs, leaves, in_tree)
      if self._sharded:
        return self._call_spmd(statics, dyn_args, dyn_kwargs, leaves, root, flags_key)
      if self._device is None:
        # The common case in one loop: uncommitted Arrays on the default device.
        device, committed = dispatch.default_device(), False
        avals, buffers = [], []
        for x in leaves:
          if type(x) is not Array or x._committed or x._device is not device:
            avals, device, committed, buffers = self._signature(leaves, dyn_args, dyn_kwargs)
            break
          avals.append(x.aval)
          buffers.append(x._buf)
      else:
        avals, device, committed, buffers = self._signature(leaves, dyn_args, dyn_kwargs)
      if device is dispatch.SPMD:
        return self._call_spmd(statics, dyn_args, dyn_kwargs, leaves, root, flags_key)
      avals = tuple(avals)
      cache = self._cache
      if (memo is not None and memo[2] is flags_key and memo[1] is device
          and memo[5] is committed and len(avals) == len(memo[0])
          and all(map(operator.is_, avals, memo[0])) and root == memo[4]
          and _same_statics(statics, memo[7])):
        # The last call's signature again (any pytree): no key to hash (hashing each aval
        # is a Python call; comparing by identity is not).
        entry = memo[3]
        cache.hits += 1
      else:
        # The bare tree node, not a PyTreeDef: tuples hash and compare at C speed.
        entry = cache.lookup((root, avals, statics, device, flags_key), statics, lambda: (
            self._compile(statics, dyn_args, dyn_kwargs, leaves,
                          tree_util.PyTreeDef(root, len(leaves)), avals, device)))
        cache.fast_call = None
        if entry.by_leaves:
          cache.memo = None
        else:
          # `simple`: positional uncommitted Arrays (and keyword arguments that are plain
          # values: statics, or None), which the first check above serves without splitting
          # or flattening (a donating entry goes the long way, which deletes donations).
          simple = (not committed and len(leaves) == len(args) and not check_nans
                    and entry.donate_mask is None
                    and all(type(x) is Array or _memo_scalar(x) for x in args)
                    and all(type(v) in _PLAIN_TYPES for v in kwargs.values()))
          scalars = tuple(None if type(x) is Array else (type(x), x, b)
                          for x, b in zip(args, buffers)) if simple else ()
          cache.memo = (avals, device, flags_key, entry, root, committed, simple, statics,
                        dict(kwargs) if kwargs else None, scalars)
          if (not kwargs and not committed and not self._has_statics and not check_nans
              and entry.donate_mask is None and 0 < len(leaves) <= _FAST_CALL_MAX_LEAVES
              and all(type(x) is Array for x in leaves)):
            # Positional Array arguments in tuples, lists and dicts: `_fast_call`.
            cache.fast_call = _fast_call(cache, entry, root[2][0], avals, device)
      if entry.donate_mask is not None and not entry.by_leaves:
        buffers = _owned_buffers(leaves, buffers, entry.donate_mask, device)
      outs = (entry.executable.run(leaves) if entry.by_leaves
              else entry.executable.run(buffers, committed))
      if entry.donate_mask is not None:
        _mark_donated(leaves, entry.donate_mask)
      if check_nans:
        # Donated arguments are gone: no de-optimized re-run then.
        debug_nans.check_jit(self._name, outs,
                             entry.jaxpr if entry.donate_mask is None else None, leaves)
      return entry.out_tree.unflatten(outs)
    except Exception as e:  # free when nothing is raised
      traceback_util.filter_traceback(e)
      raise

  # -- over several devices ---------------------------------------------------

  def _call_spmd(self, statics, dyn_args, dyn_kwargs, leaves, root, flags_key):
    """A call whose arguments or shardings span several devices: one SPMD program."""
    avals = self._avals(leaves, dyn_args, dyn_kwargs)
    in_shardings = self._leaf_in_shardings(dyn_args, dyn_kwargs, leaves)
    key = ("spmd", root, avals, statics, in_shardings, flags_key)
    entry = self._cache.lookup(key, statics, lambda: self._compile_spmd(
        statics, dyn_args, dyn_kwargs, leaves, tree_util.PyTreeDef(root, len(leaves)), avals,
        in_shardings))
    outs = entry.executable.run(leaves)
    if entry.donate_mask is not None:
      _mark_donated(leaves, entry.donate_mask)
    return entry.out_tree.unflatten(outs)

  def _leaf_in_shardings(self, dyn_args, dyn_kwargs, leaves) -> tuple:
    """Per argument leaf: jit's in_sharding for it, else the sharding it is committed to,
    else None (XLA chooses).

    Raises:
      ValueError: JAX's errors for in_shardings that are not a prefix of the positional
        arguments, for kwargs with in_shardings, and for a committed argument whose
        sharding differs from its in_sharding.
    """
    own = spmd.in_shardings_of(leaves, self._name)
    if self._in_shardings is None:
      return tuple(own)
    if dyn_kwargs:
      raise ValueError("pjit does not support kwargs when in_shardings is specified.")
    spec = _resolve_specs(self._in_shardings, "in_shardings")
    if isinstance(spec, tuple) and not isinstance(spec, PartitionSpec) and len(spec) != len(
        dyn_args):
      raise ValueError(
          "pjit in_shardings specification must be a tree prefix of the positional arguments "
          "tuple. In particular, pjit in_shardings must either be a Sharding, a PartitionSpec, "
          f"or a tuple of length equal to the number of positional arguments. But pjit "
          f"in_shardings is the wrong length: got a tuple or list of length {len(spec)} for an "
          f"args tuple of length {len(dyn_args)}.")
    try:
      per_leaf = tree_util.broadcast_prefix(spec, tuple(dyn_args), is_leaf=_is_sharding_leaf)
    except ValueError as e:
      raise ValueError(f"pjit in_shardings specification must be a tree prefix of the "
                       f"positional arguments tuple: {e}") from None
    out = []
    for x, want, have in zip(leaves, per_leaf, own):
      if want is None:
        out.append(have)
        continue
      aval = x.aval if type(x) is Array else core.get_aval(x)
      want.check_shape(aval.shape)
      if have is not None and not have.is_equivalent_to(want, len(aval.shape)):
        raise ValueError(
            "Sharding passed to jit does not match the sharding on the respective arg. Got "
            f"jit sharding: {want!r},\narg sharding: {have!r} for arg type: {aval.str_short()}")
      out.append(want)
    return tuple(out)

  def _leaf_out_shardings(self, out_tree, out_avals) -> list:
    if self._out_shardings is None:
      return [None] * len(out_avals)
    spec = _resolve_specs(self._out_shardings, "out_shardings")
    shaped = tree_util.tree_unflatten(out_tree, [0] * len(out_avals))
    try:
      per_leaf = tree_util.broadcast_prefix(spec, shaped, is_leaf=_is_sharding_leaf)
    except ValueError as e:
      raise ValueError(f"pjit out_shardings specification must be a tree prefix of the "
                       f"corresponding value: {e}") from None
    for s, a in zip(per_leaf, out_avals):
      if s is not None:
        s.check_shape(a.shape)
    return list(per_leaf)

  def _spmd_module(self, closed, out_tree, leaves, in_shardings, donate_mask):
    out_shardings = self._leaf_out_shardings(out_tree, closed.out_avals)
    mesh = spmd.mesh_of(leaves, self._name, [*in_shardings, *out_shardings])
    if mesh is None:
      mesh = spmd.program_mesh(closed.jaxpr) or get_concrete_mesh()
    if mesh is None:
      raise ValueError(f"jit of {self._name}: shardings over several devices need a mesh")
    n_consts = len(closed.consts)
    aliases = None
    if donate_mask is not None:
      aliases = {n_consts + i: j for i, j in _donation_aliases(closed, donate_mask).items()}
    return lowering.SpmdModule(mesh, [None] * n_consts + list(in_shardings), out_shardings,
                               aliases)

  def _compile_spmd(self, statics, dyn_args, dyn_kwargs, leaves, in_tree, avals, in_shardings):
    closed, out_tree = self._trace(statics, dyn_args, dyn_kwargs, leaves, in_tree, avals)
    if state_types.takes_refs(closed):
      raise NotImplementedError("jit of a function taking refs over several devices")
    donate_mask = self._donate_mask(dyn_args, dyn_kwargs, len(leaves))
    module = self._spmd_module(closed, out_tree, leaves, in_shardings, donate_mask)
    fun_name = f"jit({self._name})"
    with monitoring.timed_event(monitoring.JAXPR_TO_MLIR_MODULE_EVENT, fun_name):
      text, callbacks = lowering.lower_jaxpr_to_module(closed, f"jit_{self._name}", spmd=module)
    dispatch.log_compile(self._name, avals)
    exe = backend.compile_module(text, module.mesh._flat_devices_tuple, callbacks,
                                 compiler_options=self._compiler_options, fun_name=fun_name)
    executable = spmd.ShardedExecutable(exe, closed, module.mesh, text, len(closed.consts),
                                        closed.consts)
    return _CacheEntry(executable, out_tree, donate_mask, closed)

  def _compile(self, statics, dyn_args, dyn_kwargs, leaves, in_tree, avals, device):
    closed, out_tree = self._trace(statics, dyn_args, dyn_kwargs, leaves, in_tree, avals)
    if spmd.program_mesh(closed.jaxpr) is not None:
      # The function itself shards (with_sharding_constraint, shard_map): one SPMD program.
      entry = self._compile_spmd(statics, dyn_args, dyn_kwargs, leaves, in_tree, avals,
                                 tuple(spmd.arg_sharding(x) for x in leaves))
      entry.by_leaves = True
      return entry
    if state_types.takes_refs(closed):
      return self._compile_with_refs(closed, out_tree, leaves, device)
    donate_mask = self._donate_mask(dyn_args, dyn_kwargs, len(leaves))

    def build():
      fun_name = f"jit({self._name})"
      with monitoring.timed_event(monitoring.JAXPR_TO_MLIR_MODULE_EVENT, fun_name):
        text, callbacks = self._lower(closed, donate_mask)
      dispatch.log_compile(self._name, avals)
      exe = backend.compile_module(text, device, callbacks,
                                   compiler_options=self._compiler_options, fun_name=fun_name)
      consts = [dispatch.to_buffer(c, device) for c in closed.consts]
      return dispatch.Executable(exe, closed, device, consts, text)
    # Keyed by what the jaxpr computes: `jit(lambda ...)` made anew in a loop traces each
    # time but compiles once (JAX compiles each time).
    key = ("jitted", self._name, jaxpr_keys.structure_key(closed), device, donate_mask,
           self._compiler_options, config.values_key())
    return _CacheEntry(dispatch.cached_executable(key, build), out_tree, donate_mask, closed)

  def _compile_with_refs(self, closed, out_tree, leaves, device):
    """A function taking (or closing over) refs: checked, discharged, compiled; the
    executable writes the refs' final values back into them after each call."""
    discharge.check_jit_refs(closed, leaves)

    def compile_fn(functional):
      fun_name = f"jit({self._name})"
      with monitoring.timed_event(monitoring.JAXPR_TO_MLIR_MODULE_EVENT, fun_name):
        text, callbacks = self._lower(functional, None)
      exe = backend.compile_module(text, device, callbacks,
                                   compiler_options=self._compiler_options, fun_name=fun_name)
      consts = [dispatch.to_buffer(c, device) for c in functional.consts]
      return dispatch.Executable(exe, functional, device, consts, text)
    return _CacheEntry(dispatch.compile_with_refs(closed, compile_fn), out_tree, None, closed)

  def _lower(self, closed, donate_mask, spmd_module=None) -> tuple[str, list]:
    """The module text and its host callbacks."""
    if spmd_module is not None:
      return lowering.lower_jaxpr_to_module(closed, f"jit_{self._name}", spmd=spmd_module)
    aliases = None
    if donate_mask is not None:
      n_consts = len(closed.consts)
      aliases = {n_consts + i: j for i, j in _donation_aliases(closed, donate_mask).items()}
    return lowering.lower_jaxpr_to_module(closed, f"jit_{self._name}", aliases=aliases)

  def _bind(self, statics, dyn_args, dyn_kwargs, leaves, in_tree):
    if self._inline:
      # Inlined: the function's equations join the enclosing jaxpr directly.
      args, kwargs = self._rebuild(statics, dyn_args, dyn_kwargs)
      return self._fun(*args, **kwargs)
    avals = tuple(core.get_aval(x) for x in leaves)
    closed, out_tree = self._trace(statics, dyn_args, dyn_kwargs, leaves, in_tree, avals)
    converted = self._converted.get(closed)
    if converted is None:
      converted = pe.convert_constvars_jaxpr(closed)
      if not closed.consts:
        self._converted[closed] = converted
    jaxpr, consts = converted
    args = [*consts, *leaves]
    if any(state_types.is_ref_aval(v.aval) for v in closed.jaxpr.constvars):
      jaxpr, args = _closed_over_refs_last(jaxpr, len(consts), args)
    n = len(args)
    outs = jit_p.bind(*args, jaxpr=jaxpr, name=self._name,
                      donated_invars=(False,) * n, inline=self._inline,
                      keep_unused=self._keep_unused)
    return tree_util.tree_unflatten(out_tree, outs)

  # -- ahead-of-time ----------------------------------------------------------

  @traceback_util.api_boundary
  def trace(self, *args, **kwargs) -> Traced:
    """Traces for these arguments; `.jaxpr` is the ClosedJaxpr (mirrors `jax.jit(f).trace`)."""
    dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
    leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
    avals = self._avals(leaves, dyn_args, dyn_kwargs)
    closed, out_tree = self._trace(statics, dyn_args, dyn_kwargs, leaves, in_tree, avals)
    donate_mask = self._donate_mask(dyn_args, dyn_kwargs, len(leaves))
    module = None
    if (self._sharded or any(spmd.arg_sharding(x) is not None for x in leaves)
        or spmd.program_mesh(closed.jaxpr) is not None):
      in_shardings = self._leaf_in_shardings(dyn_args, dyn_kwargs, leaves)
      module = self._spmd_module(closed, out_tree, leaves, in_shardings, donate_mask)
    return Traced(self, closed, in_tree, out_tree, donate_mask, module)

  @traceback_util.api_boundary
  def lower(self, *args, **kwargs) -> Lowered:
    """Lowers for these arguments to StableHLO (mirrors `jax.jit(f).lower`)."""
    return self.trace(*args, **kwargs).lower()

  def eval_shape(self, *args, **kwargs):
    traced = self.trace(*args, **kwargs)
    from xjax._src.shape_dtype_struct import ShapeDtypeStruct
    return tree_util.tree_unflatten(
        traced.out_tree, [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                          for a in traced.jaxpr.out_avals])

  def clear_cache(self):
    self._cache.clear()
    self._jaxpr_cache.clear()

  def _cache_size(self) -> int:
    """The number of compiled signatures held (mirrors JAX's private method of that name)."""
    return len(self._cache)

  def cache_info(self) -> CacheInfo:
    """Hits, misses, the bound, the size and the last miss's reason of this function's
    executable cache (shared by every `jit` of the same function and options).

    Beyond JAX (whose `_cache_size()` is all it offers): ``last_miss`` says what
    changed since the previous call, e.g. "the argument shapes or dtypes (leaf 0:
    f32[3] -> f32[4])".
    """
    cache = self._cache
    return CacheInfo(cache.hits, cache.misses, _CACHE_SIZE, len(cache), cache.last_miss)


traceback_util.register_boundary(PjitFunction.__call__.__code__)


class Traced(stages.Stage):
  """A function traced for one argument signature: the jaxpr, ready to lower.

  `jaxpr` is the ClosedJaxpr, `out_info` the output ShapeDtypeStructs, `args_info` the
  arguments' `ArgInfo`s; calling it evaluates the jaxpr; `lower()` gives the `Lowered`
  stage. Mirrors `jax.stages.Traced`.
  """

  def __init__(self, jitted, jaxpr, in_tree, out_tree, donate_mask, spmd_module=None):
    self._jitted = jitted
    self.jaxpr = jaxpr
    self.out_tree = out_tree
    self.args_info = stages.make_args_info(in_tree, jaxpr.in_avals, donate_mask)
    self._donate_mask = donate_mask
    self._spmd_module = spmd_module

  @property
  def fun_name(self) -> str:
    return self._jitted._name

  @property
  def out_avals(self):
    """The output avals, as a pytree of the output's structure."""
    return tree_util.tree_unflatten(self.out_tree, self.jaxpr.out_avals)

  @property
  def out_info(self):
    return _shape_dtype_structs(self.out_tree, self.jaxpr.out_avals)

  def __call__(self, *args, **kwargs):
    """Evaluates the traced jaxpr on arguments of the same structure (dynamic ones only).

    Raises:
      TypeError: the arguments' pytree structure differs from the traced one.
    """
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    if in_tree != self.in_tree:
      raise TypeError(f"Traced function called with input pytree {in_tree}, but it was "
                      f"traced for {self.in_tree}")
    return tree_util.tree_unflatten(self.out_tree, core.jaxpr_as_fun(self.jaxpr)(*leaves))

  def lower(self, *, lowering_platforms: tuple[str, ...] | None = None) -> Lowered:
    """Lowers to StableHLO, giving the `Lowered` stage.

    Raises:
      ValueError: `lowering_platforms` names a platform other than the one present.
    """
    if lowering_platforms is not None and tuple(lowering_platforms) != (backend.platform(),):
      raise ValueError(f"lowering_platforms={lowering_platforms!r}: xjax lowers only for the "
                       f"platform present, ({backend.platform()!r},)")
    name = f"jit({self._jitted._name})"
    with monitoring.timed_event(monitoring.JAXPR_TO_MLIR_MODULE_EVENT, name):
      text, callbacks = self._jitted._lower(self.jaxpr, self._donate_mask, self._spmd_module)
    return Lowered(self, text, callbacks)


class Lowered(stages.Stage):
  """A lowered jit computation: `as_text()` is its StableHLO, `compile()` compiles it.

  Mirrors `jax.stages.Lowered`.
  """

  def __init__(self, traced: Traced, text: str, host_callbacks=()):
    self._traced = traced
    self._text = text
    self._host_callbacks = host_callbacks
    self.args_info = traced.args_info
    self.out_tree = traced.out_tree

  @property
  def out_info(self):
    return self._traced.out_info

  def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
    """The module as text: StableHLO (default, or dialect='stablehlo') or HLO (dialect='hlo').

    Raises:
      ValueError: an unknown dialect.
      NotImplementedError: debug_info=True (xjax's modules carry no source locations yet).
    """
    if debug_info:
      raise NotImplementedError("Lowered.as_text(debug_info=True) is not implemented in xjax "
                                "yet: its modules carry no source locations.")
    if dialect == "hlo":
      return backend.hlo_text(self._text)
    return self.compiler_ir(dialect)

  def compiler_ir(self, dialect: str | None = None):
    """The module: its StableHLO text (default, or dialect='stablehlo'), or for
    dialect='hlo' jaxlib's XlaComputation (``as_hlo_text()``, ...), as JAX gives.

    Raises:
      ValueError: an unknown dialect.
    """
    if dialect in (None, "stablehlo"):
      return self._text
    if dialect == "hlo":
      return backend.hlo_computation(self._text)
    raise ValueError(f"Unknown dialect {dialect!r}: use 'stablehlo' or 'hlo'.")

  def cost_analysis(self):
    """XLA's cost estimate of the unoptimized program (flops, bytes accessed, ...), or None
    where unavailable (JAX's analysis of the lowering; xjax compiles to get one)."""
    try:
      return self.compile().cost_analysis()
    except NotImplementedError:
      return None

  def compile(self, compiler_options: stages.CompilerOptions | None = None, *,
              device_assignment=None) -> Compiled:
    """Compiles the module with XLA, giving the `Compiled` stage.

    Args:
      compiler_options: XLA options (name -> value) added to the jit's own
        ``compiler_options`` (these win where both name one option).
      device_assignment: the devices to compile for: a tuple of one device (the jit's
        device or the default one if None).

    Raises:
      ValueError: a `device_assignment` of several devices for a one-device program.
    """
    options = self._traced._jitted._compiler_options
    if compiler_options:
      options = tuple(sorted({**dict(options), **dict(compiler_options)}.items()))
    name = f"jit({self._traced._jitted._name})"
    module = self._traced._spmd_module
    closed = self._traced.jaxpr
    if module is not None:
      exe = backend.compile_module(self._text, module.mesh._flat_devices_tuple,
                                   self._host_callbacks, compiler_options=options,
                                   fun_name=name)
      return Compiled(spmd.ShardedExecutable(exe, closed, module.mesh, self._text,
                                             len(closed.consts), closed.consts), self._traced)
    device = self._traced._jitted._device or dispatch.default_device()
    if device_assignment is not None:
      if len(device_assignment) != 1:
        raise ValueError(f"device_assignment={device_assignment!r}: this program runs on one "
                         f"device; pass a tuple of one device")
      device = device_assignment[0]
    exe = backend.compile_module(self._text, device, self._host_callbacks,
                                 compiler_options=options, fun_name=name)
    consts = [dispatch.to_buffer(c, device) for c in closed.consts]
    return Compiled(dispatch.Executable(exe, closed, device, consts, self._text),
                    self._traced)


class Compiled(stages.Stage):
  """A compiled jit computation, callable on arguments of the lowered signature.

  Mirrors `jax.stages.Compiled`.
  """

  def __init__(self, executable, traced: Traced):
    self._executable = executable
    self._traced = traced
    self.args_info = traced.args_info
    self.out_tree = traced.out_tree

  @property
  def out_info(self):
    return self._traced.out_info

  def as_text(self) -> str:
    """The optimized HLO of the executable."""
    return self._executable.xla_executable.hlo_modules()[0].to_string()

  def cost_analysis(self):
    """XLA's cost estimate of the executable (a dict: flops, bytes accessed, ...)."""
    return self._executable.xla_executable.cost_analysis()

  def memory_analysis(self):
    """XLA's memory estimate of the executable (argument, output, temporary sizes in
    bytes, ...), or None where the backend gives none."""
    try:
      return self._executable.xla_executable.get_compiled_memory_stats()
    except (NotImplementedError, AttributeError):
      return None

  def runtime_executable(self):
    """The underlying XLA loaded executable (for debugging; no stable API)."""
    return self._executable.xla_executable

  def __call__(self, *args, **kwargs):
    jitted = self._traced._jitted
    dyn_args, dyn_kwargs, _ = jitted._split(args, kwargs)
    leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
    if in_tree != self.in_tree:
      raise TypeError(f"Function compiled with input pytree does not match the input "
                      f"pytree it was called with: expected {self.in_tree}, got {in_tree}")
    avals = tuple(core.get_aval(x) for x in leaves)
    expected = tuple(self._traced.jaxpr.in_avals)
    if tuple(a.strip_weak_type() for a in avals) != tuple(a.strip_weak_type() for a in expected):
      raise TypeError(
          "Argument types differ from the types for which this computation was compiled. "
          f"Expected {[a.str_short() for a in expected]}, got {[a.str_short() for a in avals]}")
    mask = self._traced._donate_mask
    if isinstance(self._executable, spmd.ShardedExecutable):
      outs = self._executable.run(leaves)
    else:
      device = self._executable.device
      outs = self._executable.run(
          [dispatch.to_buffer(x, device, donated=mask is not None and mask[i])
           for i, x in enumerate(leaves)], False)
    if mask is not None:
      _mark_donated(leaves, mask)
    return tree_util.tree_unflatten(self.out_tree, outs)


def _shape_dtype_structs(out_tree, avals):
  from xjax._src.shape_dtype_struct import ShapeDtypeStruct
  return tree_util.tree_unflatten(
      out_tree, [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in avals])


_MISSING = object()

# Keyword values the fastest path compares directly (by type and value, at C speed).
_PLAIN_TYPES = frozenset({type(None), bool, int, float, str, type, np.dtype})


def _memo_scalar(x) -> bool:
  """Whether the fastest path may match Python scalar `x` by type and value: bools, ints and
  floats other than zeros (0.0 == -0.0) and NaN (never equal to itself)."""
  t = type(x)
  return t is int or t is bool or (t is float and x == x and x != 0.0)


def _same_plain_kwargs(kwargs: dict, memo: dict) -> bool:
  """Whether `kwargs` equals the remembered call's plain keyword values, types included
  (``axis=1`` is not ``axis=True``)."""
  if len(kwargs) != len(memo):
    return False
  for k, v in kwargs.items():
    m = memo.get(k, _MISSING)
    if type(v) is not type(m) or v != m:
      return False
  return True


def _same_statics(a: tuple, b: tuple) -> bool:
  """Whether two calls' statics are equal (as the cache's key lookup would find them); False
  when comparing them raises (the lookup then reports it)."""
  if a is b or (not a and not b):
    return True
  try:
    return a == b
  except Exception:  # noqa: BLE001
    return False


def _static_name(static) -> str:
  return static[0]


def _lookup(cache: dict, key, statics):
  """`cache.get(key)`, with JAX's errors when hashing or comparing static arguments raises."""
  try:
    return cache.get(key)
  except Exception as e:
    if not statics:
      raise
    for _, _, v in statics:
      try:
        hash(v)
      except TypeError as h:
        raise ValueError(
            "Non-hashable static arguments are not supported. An error occurred while trying "
            f"to hash an object of type {type(v)}, {v}. The error was:\nTypeError: {h}\n"
        ) from None
    kind = next((t for _, t, _ in statics if "__eq__" in vars(t)), statics[0][1])
    raise ValueError(
        "static arguments should be comparable using __eq__.The following error was "
        f"raised when comparing two objects of types {kind} and {kind}. The error was:\n"
        + "".join(traceback.format_exception(e))) from None


def _donation_aliases(closed: core.ClosedJaxpr, donate_mask) -> dict[int, int]:
  """Pairs each donated input with an unclaimed output of the same type; warns for the rest."""
  outs = list(closed.out_avals)
  claimed = [False] * len(outs)
  aliases, unusable = {}, []
  for i, (aval, donated) in enumerate(zip(closed.in_avals, donate_mask)):
    if not donated:
      continue
    for j, out in enumerate(outs):
      if not claimed[j] and out.shape == aval.shape and out.dtype == aval.dtype:
        claimed[j] = True
        aliases[i] = j
        break
    else:
      unusable.append(aval.str_short())
  if unusable:
    warnings.warn(f"Some donated buffers were not usable: {', '.join(unusable)}.\n"
                  "See an explanation at https://docs.jax.dev/en/latest/faq.html#buffer-donation.",
                  stacklevel=4)
  return aliases


def _is_sharding_leaf(x) -> bool:
  return x is None or isinstance(x, (Sharding, PartitionSpec))


def _names_a_sharding(tree) -> bool:
  """Whether a pytree of jit's in_shardings/out_shardings has a leaf other than None."""
  return any(s is not None for s in tree_util.tree_leaves(tree, is_leaf=_is_sharding_leaf))


def _hashable_tree(tree):
  """A hashable stand-in for a pytree of shardings (part of the cache's options key)."""
  if tree is None:
    return None
  leaves, treedef = tree_util.tree_flatten(tree, is_leaf=_is_sharding_leaf)
  return (treedef, tuple(leaves))


def _resolve_specs(tree, what: str):
  """`tree` with each bare PartitionSpec made a NamedSharding over the context mesh.

  Raises:
    RuntimeError: a PartitionSpec with no context mesh (JAX's text).
    ValueError: a leaf that is neither a sharding, a PartitionSpec nor None.
  """
  def resolve(leaf):
    if leaf is None or isinstance(leaf, Sharding):
      return leaf
    if isinstance(leaf, PartitionSpec):
      mesh = get_concrete_mesh()
      if mesh is None:
        raise RuntimeError(
            f"jit requires a non-empty mesh in context if you are passing `PartitionSpec`s to "
            f"{what}. You can define a context mesh via `jax.set_mesh(mesh)`. Alternatively, "
            f"provide `Sharding`s to {what} and then the mesh context manager is not required.")
      return NamedSharding(mesh, leaf)
    raise ValueError(f"{what} leaves must be Shardings, PartitionSpecs or None, got {leaf!r}")
  return tree_util.tree_map(resolve, tree, is_leaf=_is_sharding_leaf)


def _owned_buffers(leaves, buffers, mask, device) -> list:
  """`buffers` with each donated host value's buffer replaced by one of its own: a donated
  buffer is consumed, and the one `to_buffer` caches for a Python scalar serves every later
  use of that value in the process."""
  return [dispatch.to_buffer(x, device, donated=True) if d and type(x) is not Array else b
          for x, b, d in zip(leaves, buffers, mask)]


def _mark_donated(leaves, mask) -> None:
  for x, donated in zip(leaves, mask):
    if donated and type(x) is Array:
      x.delete()


def jit(fun=None, *, static_argnums=None, static_argnames=None, donate_argnums=None,
        donate_argnames=None, inline: bool = False, keep_unused: bool = False,
        device=None, backend=None, in_shardings=None, out_shardings=None,
        abstracted_axes=None, compiler_options=None):
  """Compiles `fun` with XLA, tracing it once per argument signature.

  Args:
    fun: a function of arrays (and pytrees of arrays) returning the same.
    static_argnums: positions of arguments treated as compile-time constants;
      they must be hashable, and each new value (or type) retraces.
    static_argnames: names of keyword arguments treated the same way.
    donate_argnums, donate_argnames: arguments whose buffers the computation
      may reuse for its outputs; they are deleted after the call.
    inline: inline this function into an enclosing jit's jaxpr.
    keep_unused: keep unused arguments in the compiled program.
    device: the device to run on (commits the outputs to it).
    backend: the platform to run on; only the one present ('cpu') is known.
    compiler_options: XLA options for this function's compilations, a dict
      of option name to value (e.g. ``{"xla_cpu_enable_fast_math": True}``).
    in_shardings: a Sharding (or PartitionSpec, over the context mesh) per
      positional argument, as a pytree prefix of the argument tuple; None
      entries keep an argument's own sharding (or let XLA choose).
    out_shardings: the same for the outputs (None: XLA's propagation chooses).
    abstracted_axes: not implemented yet; anything but None raises
      NotImplementedError.

  Returns:
    A `PjitFunction` callable; usable as a decorator, with or without arguments.

  Raises:
    TypeError: `fun` is not callable; an argument is not an array type.
    ValueError: static arguments are unhashable or name arguments `fun` lacks.
    RuntimeError: `backend` names a platform that is not present.
    NotImplementedError: abstracted_axes given.

  Mirrors `jax.jit`.
  """
  if abstracted_axes is not None:
    raise NotImplementedError("jit(abstracted_axes=...) is not implemented in xjax yet (no "
                              "shape polymorphism); leave it None.")
  if backend is not None and backend != _backend.platform():
    raise RuntimeError(f"Unknown backend: '{backend}' requested, but no platforms that are "
                       f"instances of {backend} are present. Platforms present are: "
                       f"{_backend.platform()}")
  options = () if compiler_options is None else tuple(sorted(dict(compiler_options).items()))

  def wrap(f):
    return PjitFunction(f, static_argnums, static_argnames, donate_argnums, donate_argnames,
                  inline, keep_unused, device, options, in_shardings, out_shardings)
  if fun is None:
    return wrap
  return wrap(fun)
