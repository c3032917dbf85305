"""jnp's NumPy-style conditionals over lax: `select` (over `where`) and `piecewise` (over `switch`)."""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src.jit import jit
from xjax._src.lax.control_flow.conditionals import switch
from xjax._src.numpy import creation
from xjax._src.numpy import lax_numpy
from xjax._src.numpy import reductions
from xjax._src.numpy import util
from xjax._src.vmap import vmap


def select(condlist, choicelist, default=0):
  """Per element, the choice of the first true condition (else `default`).

  Args:
    condlist: a sequence of boolean arrays.
    choicelist: a sequence of arrays (one per condition), broadcast together.
    default: the value where no condition holds.

  Returns:
    An array of the broadcast shape and promoted dtype.

  Mirrors `jax.numpy.select`.
  """
  if len(condlist) != len(choicelist):
    raise ValueError("condlist must have length equal to choicelist ({} vs {})".format(
        len(condlist), len(choicelist)))
  if len(condlist) == 0:
    raise ValueError("condlist must be non-empty")
  default, *choices = util.promote_dtypes(default, *choicelist)
  out = default
  # Later entries are overridden by earlier ones: the first true condition wins.
  for cond, choice in reversed(list(zip(condlist, choices))):
    out = lax_numpy.where(cond, choice, out)
  shape = np.broadcast_shapes(*(np.shape(x) for x in (*condlist, *choices, default)))
  return lax_numpy.broadcast_to(out, shape)


def piecewise(x, condlist, funclist, *args, **kw):
  """``funclist[k](x)`` where ``condlist[k]`` holds (the last true condition wins).

  One more function than conditions gives the value where none holds
  (otherwise 0). Entries of `funclist` may be constants. Each element runs
  through `lax.switch`, vectorized.

  Mirrors `jax.numpy.piecewise`.
  """
  x = creation.asarray(x)
  conds = creation.asarray(condlist, dtype=bool)
  if conds.ndim == x.ndim:
    conds = conds[None]
  nc, nf = conds.shape[0], len(funclist)
  if nf == nc + 1:
    funclist = [funclist[-1], *funclist[:-1]]
  elif nf == nc:
    funclist = [0, *funclist]
  else:
    raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are "
                     f"expected; got {nf}")
  consts = {i: c for i, c in enumerate(funclist) if not callable(c)}
  funcs = frozenset((i, f) for i, f in enumerate(funclist) if callable(f))
  # As JAX: one jit keyed on the functions, so repeated calls do not trace them again.
  return _piecewise(x, conds, consts, funcs, *args, **kw)


@jit(static_argnames=("funcs",))
def _piecewise(x, conds, consts, funcs, *args, **kw):
  funcdict = dict(funcs)
  funclist = [consts[i] if i in consts else funcdict[i] for i in range(conds.shape[0] + 1)]
  dtype = core.get_aval(x).dtype
  counts = reductions.cumsum(lax_numpy.concatenate(
      [creation.zeros_like(conds[:1], dtype=np.int32), conds.astype(np.int32)], 0), axis=0)
  indices = reductions.argmax(counts, axis=0)

  def branch(f):
    if callable(f):
      return lambda v: creation.asarray(f(v, *args, **kw)).astype(dtype)
    return lambda v: creation.full((), f, dtype)

  branches = [branch(f) for f in funclist]
  flat = vmap(lambda i, v: switch(i, branches, v))(lax_numpy.ravel(indices), lax_numpy.ravel(x))
  return lax_numpy.reshape(flat, x.shape)
