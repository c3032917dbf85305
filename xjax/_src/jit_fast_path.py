"""The fast paths of a jitted call: programs run on their arguments' buffers alone.

Two closures skip `Executable.run`'s general work for a pure one-device program
(`_runs_on_buffers_alone`): `_fast_runner`, an entry's runner of uncommitted buffers (the
memo tier of `PjitFunction._call`), and `_fast_call`, generated Python code that checks a
call's positional arguments against the last call's structure and avals and runs the
program (the first tier, `PjitFunction.__call__`). The tiers themselves are in `jit.py`.
"""
from __future__ import annotations

import textwrap
import threading

from xjax._src import backend
from xjax._src import core
from xjax._src import dispatch
from xjax._src import executable_cache
from xjax._src import tree_util
from xjax._src.array import Array
from xjax._src.config import config


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
  if ({checks}):
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


def _fast_call_source(args_node, one: bool):
  """The source of `_fast_call`'s `make` for positional arguments of structure `args_node`
  (one output if `one`), the dict keys it takes as k0, k1, ..., and its number of leaves;
  None where the structure has other nodes than tuples, lists, dicts, None and leaves."""
  # The positional arguments' tuple is unpacked; containers among them are matched below.
  lines, keys, n_leaves, names = [], [], [0], []
  for i, child in enumerate(args_node[2]):
    names.append(f"u{i}")
    if not _access_code(child, f"u{i}", lines, keys, n_leaves):
      return None
    if child is tree_util._LEAF:
      names[-1] = lines.pop()[:-len(f" = u{i}")]
  lines.insert(0, ", ".join(names) + ", = args")
  n = n_leaves[0]
  checks = "\n      or ".join(f"type(x{i}) is not Array or x{i}.aval is not a{i}\n      "
                              f"or x{i}._committed or x{i}._device is not device"
                              for i in range(n))
  code = _FAST_CALL_TEMPLATE.format(
      n_args=len(args_node[2]), access=textwrap.indent("\n".join(lines), "    "),
      checks=checks,
      buffers=", ".join(f"x{i}._buf" for i in range(n)),
      result="Array(outs[0], out_aval, device, False)" if one else "finish(outs)")
  params = ", ".join(["cache", "execute", "finish", "out_aval", "device", "epoch", "thread",
                      *(f"a{i}" for i in range(n)), *(f"k{i}" for i in range(len(keys)))])
  source = f"def make({params}):\n" + textwrap.indent(code, "  ") + "  return fast_call\n"
  return source, tuple(keys), n


def _fast_call(cache, entry, args_node, avals, device):
  """The function of a call's positional arguments that runs `entry` again when they have
  the structure `args_node` (their tuple's node) with uncommitted Array leaves of `avals` on
  `device`, in this thread, under the flags and trace of now (else it returns `_MISS`): jit's
  fastest path, under 1 us above the executable's own dispatch for a few arguments. None
  where `entry` needs more than its arguments' buffers, or the structure has other nodes.

  The function is generated once per (structure, single output) by `_fast_call_source`,
  run with `exec` and kept in `_fast_call_makers`; its `make` then binds one entry's values:
  the cache (for its hit count), the executable's runner, `finish` (the outputs of several
  leaves as the function's pytree), the output aval (of one), the device, `config.epoch`
  and the thread now, an aval `a{i}` per leaf `x{i}` and a key `k{j}` per dict entry. For
  ``f(x, (y, z))`` called with three uncommitted Arrays, returning one array, this is it
  (``x0, u1, = args`` unpacks the arguments; `t0` is the tuple ``(y, z)``):

      def make(cache, execute, finish, out_aval, device, epoch, thread, a0, a1, a2):

        def fast_call(args):
          if (len(args) != 2 or config.epoch != epoch or trace_ctx.trace is not eval_trace
              or get_ident() != thread):
            return _MISS
          try:
            x0, u1, = args
            t0 = u1
            if type(t0) is not tuple or len(t0) != 2: return _MISS
            x1 = t0[0]
            x2 = t0[1]
          except (KeyError, IndexError):
            return _MISS
          if (type(x0) is not Array or x0.aval is not a0
              or x0._committed or x0._device is not device
              or type(x1) is not Array or x1.aval is not a1
              or x1._committed or x1._device is not device
              or type(x2) is not Array or x2.aval is not a2
              or x2._committed or x2._device is not device):
            return _MISS
          cache.hits += 1
          try:
            outs = execute([x0._buf, x1._buf, x2._buf])
          except Exception:  # e.g. a deleted argument: the full path reports it
            return _MISS
          return Array(outs[0], out_aval, device, False)
        return fast_call
  """
  exe = entry.executable
  if not _runs_on_buffers_alone(exe):
    return None
  one = tree_util.treedef_is_strict_leaf(entry.out_tree)
  maker = _fast_call_makers.get((args_node, one))
  if maker is None:
    generated = _fast_call_source(args_node, one)
    if generated is None or generated[2] != len(avals):
      return None
    source, keys, _ = generated
    namespace = dict(config=config, trace_ctx=core.trace_ctx, eval_trace=core.eval_trace,
                     get_ident=threading.get_ident, Array=Array, _MISS=_MISS)
    exec(source, namespace)
    maker = _fast_call_makers.put((args_node, one), (namespace["make"], keys))
  execute = backend.runner(exe.xla_executable, exe._handlers[False])
  out_avals, unflatten = exe.out_avals, entry.out_tree.unflatten
  finish = lambda outs: unflatten([Array(b, a, device, False) for b, a in zip(outs, out_avals)])
  make, keys = maker
  return make(cache, execute, finish, out_avals[0] if one else None, device, config.epoch,
              threading.get_ident(), *avals, *keys)
