"""`jnp.einsum` and `jnp.einsum_path`: Einstein summation as a sequence of pairwise
`lax.dot_general` contractions.

As in JAX, the operands are contracted along a path (opt_einsum's convention: each step
names the positions, in the current list of operands, of the operands it contracts; they
are removed and the result is appended at the end). 'auto' takes the path of least flop
count for up to four operands and a greedy one beyond; an explicit path is followed as
given. A label repeated within one operand takes a diagonal, labels that disappear are
summed (OR for bool), and a size-1 axis facing a longer axis of the same label broadcasts.
"""
from __future__ import annotations

import collections
import itertools

import numpy as np

from xjax._src import dtypes
from xjax._src.jit import jit
from xjax._src.lax import dot as lax_dot
from xjax._src.lax import elementwise as lax
from xjax._src.lax import reductions as lax_reductions
from xjax._src.lax import structural as lax_structural
from xjax._src.numpy import util
from xjax._src.sharding import rules
from xjax._src.sharding.constraints import reshard

_LABELS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

# opt_einsum's path optimizers (the names JAX's einsum accepts for `optimize`).
_PATH_NAMES = ("auto", "auto-hq", "optimal", "dp", "greedy", "random-greedy",
               "random-greedy-128", "branch-all", "branch-2", "branch-1", "eager")


# ----------------------------------------------------------------------------
# Subscripts and paths (computed from shapes, outside the trace)


def _parse(subscripts: str, shapes: list[tuple[int, ...]]):
  """Each operand's labels and the output's, as strings, '...' expanded to fresh letters."""
  subscripts = subscripts.replace(" ", "")
  if "->" in subscripts:
    inputs, output = subscripts.split("->")
  else:
    inputs, output = subscripts, None
  in_specs = inputs.split(",")
  if len(in_specs) != len(shapes):
    raise ValueError(f"einsum: {len(in_specs)} input subscripts for {len(shapes)} operands")
  used = set(subscripts) - set(",->.")
  for c in used:
    if c not in _LABELS:
      raise ValueError(f"einsum: invalid subscript {c!r}: labels are letters a-z, A-Z")
  spare = iter(c for c in _LABELS if c not in used)
  n_ellipsis = max([len(shape) - len(s.replace("...", ""))
                    for s, shape in zip(in_specs, shapes) if "..." in s] or [0])
  ellipsis = "".join(next(spare) for _ in range(n_ellipsis))
  specs = []
  for s, shape in zip(in_specs, shapes):
    if "..." in s:
      k = len(shape) - len(s.replace("...", ""))
      s = s.replace("...", ellipsis[n_ellipsis - k:] if k > 0 else "")
    if len(s) != len(shape):
      raise ValueError(f"einsum: subscripts {s!r} do not match an operand of rank {len(shape)}")
    specs.append(s)
  if output is None:
    counts = collections.Counter(c for s in specs for c in s if c not in ellipsis)
    output = ellipsis + "".join(sorted(c for c, n in counts.items() if n == 1))
  else:
    output = output.replace("...", ellipsis)
  seen = set("".join(specs))
  for c in output:
    if c not in seen:
      raise ValueError(f"einsum: output subscript {c!r} does not appear in the inputs")
  if len(set(output)) != len(output):
    raise ValueError(f"einsum: output subscripts {output!r} repeat a label")
  sizes: dict[str, int] = {}
  for s, shape in zip(specs, shapes):
    for c, d in zip(s, shape):
      d = int(d)
      if sizes.get(c, 1) not in (1, d) and d != 1:
        raise ValueError(f"einsum: label {c!r} has sizes {sizes[c]} and {d}, which do not "
                         "broadcast")
      sizes[c] = max(sizes.get(c, 1), d)
  return specs, output, sizes


def optimal_path(inputs, output, sizes) -> tuple[tuple[int, int], ...]:
  """The pairwise contraction order of least flop count (opt_einsum's 'optimal' and its
  cost: the size of the labels a step touches, doubled when it sums some away), as pairs
  of SSA ids: inputs are 0..n-1, the k-th step's result is n+k."""
  def size(labels):
    return int(np.prod([sizes[c] for c in labels], dtype=np.int64))

  best = {"flops": float("inf"), "path": tuple(
      (0, 1) if k == 0 else (len(inputs) + k - 1, k + 1) for k in range(len(inputs) - 1))}

  def search(path, remaining, inputs, flops):
    if len(remaining) == 1:
      best["flops"], best["path"] = flops, path
      return
    for i, j in itertools.combinations(sorted(remaining), 2):
      keep = output.union(*(inputs[r] for r in remaining - {i, j}))
      either, shared = inputs[i] | inputs[j], inputs[i] & inputs[j]
      cost = size(either) * (2 if shared - keep else 1)
      if flops + cost >= best["flops"]:
        continue
      search(path + ((i, j),), remaining - {i, j} | {len(inputs)},
             inputs + (either & keep,), flops + cost)

  search((), frozenset(range(len(inputs))), tuple(map(frozenset, inputs)), 0)
  return best["path"]


def _ssa_to_positions(ssa_path, n):
  """SSA pairs as positions in the shrinking list of operands (opt_einsum's linear form)."""
  live, out = list(range(n)), []
  for k, step in enumerate(ssa_path):
    pos = tuple(sorted(live.index(s) for s in step))
    for p in sorted(pos, reverse=True):
      del live[p]
    live.append(n + k)
    out.append(pos)
  return out


def _path(specs, output, sizes, optimize) -> tuple[tuple[int, ...], ...]:
  """The contraction path for `optimize`, as tuples of positions."""
  n = len(specs)
  if n == 1:
    return ((0,),)
  if isinstance(optimize, (list, tuple)):
    steps = list(optimize)
    if steps and isinstance(steps[0], str) and steps[0] == "einsum_path":
      steps = steps[1:]  # NumPy's form of a path
    path = tuple(tuple(int(i) for i in step) for step in steps)
    left = n
    for step in path:
      if not step or len(set(step)) != len(step) or not all(0 <= i < left for i in step):
        raise ValueError(f"einsum: invalid contraction {step} in the path {list(path)} for "
                         f"{n} operands")
      left -= len(step) - 1
    if left != 1:
      raise ValueError(f"einsum: the path {list(path)} does not contract all {n} operands")
    return path
  if optimize is False:
    return ((0, 1),) * (n - 1)
  if optimize is None or optimize is True:
    optimize = "optimal" if optimize else "auto"
  if not isinstance(optimize, str) or optimize not in _PATH_NAMES:
    raise KeyError(f"Path optimizer {optimize!r} not found, valid options are "
                   f"{', '.join(_PATH_NAMES)}.")
  if n == 2:
    return ((0, 1),)
  if optimize == "greedy" or (optimize != "optimal" and n > 4) or n > 8:
    stand_ins = [np.broadcast_to(np.zeros((), np.float32), tuple(sizes[c] for c in s))
                 for s in specs]
    path, _ = np.einsum_path(",".join(specs) + "->" + output, *stand_ins, optimize="greedy")
    return tuple(tuple(step) for step in path[1:])
  ssa = optimal_path([set(s) for s in specs], frozenset(output), sizes)
  return tuple(_ssa_to_positions(ssa, n))


def _contractions(specs, output, path):
  """Per step of `path`: (positions, input label strings, result labels, summed labels),
  the result's labels ordered as opt_einsum orders them (the output at the last step,
  else by first appearance in the inputs)."""
  specs, steps = list(specs), []
  for k, pos in enumerate(path):
    ins = [specs[p] for p in pos]
    for p in sorted(pos, reverse=True):
      del specs[p]
    keep = set(output).union(*specs)
    if k == len(path) - 1:
      result = output
    else:
      joined = "".join(ins)
      result = "".join(sorted(set(joined) & keep, key=joined.find))
    removed = frozenset(set("".join(ins)) - keep)
    steps.append((pos, tuple(ins), result, removed))
    specs.append(result)
  return tuple(steps)


# ----------------------------------------------------------------------------
# The traced contraction


def _sum(x, axes, out_dtype):
  """x summed over `axes` (OR for bool), first converted when the output dtype is wider."""
  if dtypes.promote_types(util.dtype_of(x), out_dtype) != util.dtype_of(x):
    x = lax.convert_element_type(x, out_dtype)
  axes = tuple(axes)
  if util.dtype_of(x) == np.dtype(bool):
    return lax_reductions.reduce_or(x, axes)
  return lax_reductions.reduce_sum(x, axes)


def _sum_uniques(x, names, uniques, out_dtype):
  if uniques:
    x = _sum(x, [names.index(c) for c in uniques], out_dtype)
    names = "".join(c for c in names if c not in uniques)
  return x, names


def _sum_repeats(x, names, keep, out_dtype):
  """A label repeated within `names` selects the diagonal of its axes; summed away unless
  in `keep`, where its last axis stays."""
  for c, count in collections.Counter(names).items():
    if count < 2:
      continue
    axes = [i for i, n in enumerate(names) if n == c]
    shape = util.shape(x)
    mask = None
    for a in axes[1:]:
      eq = lax.eq(lax_structural.broadcasted_iota(np.int32, shape, axes[0]),
                  lax_structural.broadcasted_iota(np.int32, shape, a))
      mask = eq if mask is None else lax.bitwise_and(mask, eq)
    x = lax.select_n(mask, lax_structural.full_like(x, 0), x)
    if c in keep:
      x = _sum(x, axes[:-1], out_dtype)
      names = "".join(n for i, n in enumerate(names) if i not in axes[:-1])
    else:
      x = _sum(x, axes, out_dtype)
      names = names.replace(c, "")
  return x, names


def _squeeze_broadcast(x, names, other_shape, other_names):
  """Drops size-1 axes whose label has another size in the other operand (broadcasting)."""
  shape = util.shape(x)
  drop = [i for i, c in enumerate(names)
          if shape[i] == 1 and c in other_names and other_shape[other_names.index(c)] != 1]
  if not drop:
    return x, names
  x = lax_structural.squeeze(x, tuple(drop))
  return x, "".join(c for i, c in enumerate(names) if i not in drop)


def _step(operands, pos, ins, result, removed, out_dtype, precision, dot_general,
          out_sharding):
  picked = [operands.pop(p) for p in sorted(pos, reverse=True)]
  if len(picked) == 1:
    (x,), (names,) = picked, ins
    counts = collections.Counter(names)
    x, names = _sum_uniques(x, names, [c for c in sorted(removed) if counts[c] == 1],
                            out_dtype)
    x, names = _sum_repeats(x, names, result, out_dtype)
  elif len(picked) == 2:
    # The higher position is popped first and is the lhs, as in opt_einsum.
    lhs, rhs = picked
    rhs_names, lhs_names = ins
    lhs, lhs_names = _squeeze_broadcast(lhs, lhs_names, util.shape(rhs), rhs_names)
    rhs, rhs_names = _squeeze_broadcast(rhs, rhs_names, util.shape(lhs), lhs_names)
    lc, rc = collections.Counter(lhs_names), collections.Counter(rhs_names)
    lhs, lhs_names = _sum_uniques(
        lhs, lhs_names, [c for c in sorted(removed) if lc[c] == 1 and rc[c] == 0], out_dtype)
    rhs, rhs_names = _sum_uniques(
        rhs, rhs_names, [c for c in sorted(removed) if rc[c] == 1 and lc[c] == 0], out_dtype)
    lhs, lhs_names = _sum_repeats(lhs, lhs_names, result + rhs_names, out_dtype)
    rhs, rhs_names = _sum_repeats(rhs, rhs_names, result + lhs_names, out_dtype)
    both = set(lhs_names) & set(rhs_names)
    contracted = [c for c in sorted(removed) if c in both]
    batch = "".join(c for c in result if c in both)
    lhs_batch = tuple(lhs_names.index(c) for c in batch)
    rhs_batch = tuple(rhs_names.index(c) for c in batch)
    lhs_cont = tuple(lhs_names.index(c) for c in contracted)
    rhs_cont = tuple(rhs_names.index(c) for c in contracted)
    lhs_free = "".join(c for c in lhs_names if c not in both)
    rhs_free = "".join(c for c in rhs_names if c not in both)
    # (rhs, lhs) first: opt_einsum's right-to-left order often needs no transpose then.
    names = batch + rhs_free + lhs_free
    if names == result:
      args, dims = (rhs, lhs), ((rhs_cont, lhs_cont), (rhs_batch, lhs_batch))
    else:
      names = batch + lhs_free + rhs_free
      args, dims = (lhs, rhs), ((lhs_cont, rhs_cont), (lhs_batch, rhs_batch))
    sharding = {} if out_sharding is None or names != result else {
        "out_sharding": out_sharding}
    x = dot_general(*args, dims, precision, preferred_element_type=out_dtype, **sharding)
  else:
    raise NotImplementedError(
        "jax.numpy.einsum does not support simultaneous contraction of 3 or more operands. "
        "Typically this means you've passed an unsupported path to the einsum optimize "
        "parameter.")
  if names != result:
    x = lax_structural.transpose(x, tuple(names.index(c) for c in result))
  operands.append(x)


@jit(static_argnames=("contractions", "precision", "preferred_element_type", "out_sharding",
                      "dot_general"), inline=True)
def _einsum(operands, contractions, precision, preferred_element_type, out_sharding=None,
            dot_general=lax_dot.dot_general):
  out_dtype, weak = (dtypes.result_type(*operands, return_weak_type_flag=True)
                     if preferred_element_type is None else (preferred_element_type, False))
  out_dtype = dtypes.canonicalize_dtype(out_dtype)
  operands = list(operands)
  direct = out_sharding if len(contractions) == 1 and len(contractions[0][0]) == 2 else None
  for pos, ins, result, removed in contractions:
    _step(operands, pos, ins, result, removed, out_dtype, precision, dot_general, direct)
  x, = operands
  x = lax.convert_element_type(x, out_dtype, weak_type=weak)
  if out_sharding is not None and util.aval_of(x).sharding != out_sharding:
    x = reshard(x, out_sharding)
  return x


# ----------------------------------------------------------------------------
# Public functions


def _interleaved_to_subscripts(*args):
  """NumPy's ``einsum(op0, sublist0, op1, sublist1, ..., [out_sublist])`` as (subscripts, operands)."""
  operands, sublists = list(args[0::2]), list(args[1::2])
  out = operands.pop() if len(args) % 2 else None  # a trailing output sublist
  util.ensure_arraylike("einsum", *operands)

  def letters(sublist):
    try:
      items = list(sublist)
    except TypeError:
      items = None
    if items is None or not all(i is Ellipsis or (isinstance(i, int) and not isinstance(i, bool))
                                for i in items):
      raise TypeError("For this input type lists must contain either Ellipsis or hashable "
                      "and comparable object (e.g. int, str).")
    for i in items:
      if i is not Ellipsis and not 0 <= i < len(_LABELS):
        raise ValueError(f"subscript is not within the valid range [0, {len(_LABELS)})")
    return "".join("..." if i is Ellipsis else _LABELS[i] for i in items)

  subscripts = ",".join(letters(s) for s in sublists)
  if out is not None:
    subscripts += "->" + letters(out)
  return subscripts, operands


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, _dot_general=None, out_sharding=None):
  """Einstein summation: ``einsum("ij,jk->ik", a, b)`` is ``a @ b``.

  The operands are contracted pairwise with `lax.dot_general` along a path (see the module
  docstring); a label repeated within one operand takes a diagonal, labels absent from
  the output are summed (OR-ed for bool), '...' stands for broadcast leading axes, and a
  size-1 axis broadcasts against a longer one of the same label.

  Args:
    subscripts: the index string, e.g. ``"bij,bjk->bik"`` (implicit output:
      the letters appearing once, sorted). NumPy's interleaved form is taken
      too: ``einsum(a, [0, 1], b, [1, 2], [0, 2])``, each operand followed by
      its list of axis labels (ints in [0, 52) or Ellipsis), then optionally
      the output's.
    *operands: the arrays.
    precision: passed to `lax.dot_general`.
    preferred_element_type: the accumulation and result dtype.
    out: unsupported; must be None.
    optimize: the contraction order: 'auto' (the default; least flops for up to four
      operands, greedy beyond), True ('optimal'), False (left to right), another of
      opt_einsum's path names, or an explicit path: a list of tuples of operand positions
      (as `einsum_path` returns; NumPy's leading 'einsum_path' is accepted).
    out_sharding: None, or a NamedSharding or PartitionSpec (over the context
      mesh) the result is typed and laid out as.
    _dot_general: (private, as in JAX) the function each pairwise contraction calls
      in place of `lax.dot_general`, as ``f(x, y, dimension_numbers, precision,
      preferred_element_type=...)``; flax's layers pass their own.

  Returns:
    The contracted array, of the operands' promoted dtype (or `preferred_element_type`).

  Raises:
    TypeError: an operand is not an array or scalar (a list or tuple, say), or
      an interleaved label is not an int or Ellipsis.
    ValueError: malformed subscripts, or label sizes that do not broadcast.
    KeyError: an unknown `optimize` name.
    NotImplementedError: an explicit path step contracting three or more operands at once.

  >>> import xjax.numpy as jnp
  >>> jnp.einsum("ij,j->i", jnp.ones((2, 3)), jnp.arange(3.0))
  Array([3., 3.], dtype=float32)

  Mirrors `jax.numpy.einsum`.
  """
  util.check_no_out("einsum", out)
  if not isinstance(subscripts, str):
    subscripts, operands = _interleaved_to_subscripts(subscripts, *operands)
  operands = util.ensure_arraylike("einsum", *operands)
  operands = operands if isinstance(operands, tuple) else (operands,)
  if preferred_element_type is not None:
    preferred_element_type = dtypes.check_user_dtype_supported(preferred_element_type, "einsum")
  specs, output, sizes = _parse(subscripts, [util.shape(x) for x in operands])
  contractions = _contractions(specs, output, _path(specs, output, sizes, optimize))
  return _einsum(list(operands), contractions=contractions, precision=precision,
                 preferred_element_type=preferred_element_type,
                 out_sharding=rules.canonicalize_out_sharding(out_sharding, "einsum"),
                 dot_general=lax_dot.dot_general if _dot_general is None else _dot_general)


def einsum_path(subscripts, /, *operands, optimize="auto"):
  """The contraction order `einsum` takes for these subscripts and shapes, with NumPy's
  report of its cost.

  Only the operands' shapes are read.

  Args:
    subscripts: the einsum subscripts.
    *operands: arrays (or anything with a shape).
    optimize: as for `einsum`: 'auto', True, False, an opt_einsum path name, or an
      explicit path.

  Returns:
    ``(path, report)``: a list of tuples of operand positions (each step's operands are
    removed and its result appended), and a string (`numpy.einsum_path`'s report).

  >>> import numpy as np
  >>> import xjax.numpy as jnp
  >>> jnp.einsum_path("ij,jk,k", np.ones((2, 3)), np.ones((3, 4)), np.ones(4))[0]
  [(1, 2), (0, 1)]

  Mirrors `jax.numpy.einsum_path`.
  """
  if not isinstance(subscripts, str):
    subscripts, operands = _interleaved_to_subscripts(subscripts, *operands)
  shapes = [np.shape(o) for o in operands]
  specs, output, sizes = _parse(subscripts, shapes)
  path = [tuple(step) for step in _path(specs, output, sizes, optimize)]
  stand_ins = [np.broadcast_to(np.zeros((), np.float32), tuple(sizes[c] for c in s))
               for s in specs]
  np_path = ["einsum_path", *path] if len(specs) > 1 else "greedy"
  _, report = np.einsum_path(",".join(specs) + "->" + output, *stand_ins, optimize=np_path)
  return path, report
