"""`bounded_while_loop`: a `while_loop` with a static bound on its trip count, so
it is reverse-mode differentiable.

There is no new primitive: the loop is a `scan` of `max_steps` steps whose
step runs the body under a `cond` only while the loop's condition holds (so
the carry stops changing once it is false). With checkpointing the scan is
nested, outer over about ``sqrt(max_steps)`` blocks and inner over the steps
of one block, and each block is a `checkpoint`, so the backward pass stores
O(sqrt(max_steps)) carries instead of O(max_steps). A loop that would need
more than `max_steps` steps raises an error naming `max_steps`: eagerly at
once, under `jit` at run time through a `debug_callback`.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from xjax._src import core
from xjax._src import traceback_util
from xjax._src import tree_util
from xjax._src.checkpoint import checkpoint as _checkpoint
from xjax._src.debugging import debug_callback
from xjax._src.lax.control_flow import common
from xjax._src.lax.control_flow import loops
from xjax._src.lax.control_flow.conditionals import abstractify, cond
from xjax._src.lax.control_flow.scan import scan
from xjax._src.lax.elementwise import add, bitwise_and, lt


@traceback_util.api_boundary
def bounded_while_loop(cond_fun, body_fun, init_val, max_steps, *, checkpoint=True):
  """Repeats ``val = body_fun(val)`` while ``cond_fun(val)``, at most `max_steps` times.

  Forward values are those of ``lax.while_loop(cond_fun, body_fun, init_val)``
  whenever that loop runs at most `max_steps` iterations, and the loop is
  differentiable in both modes (`jvp`, `grad`, `vjp`), batches under `vmap`
  (each element of a batched condition stops at its own step; as for
  `while_loop`, finished elements still run the body while others go on,
  their results discarded) and works under `jit`.

  Implementation and memory: a `scan` of `max_steps` steps, each step
  ``val = cond(pred, body_fun, identity, val)`` with ``pred = cond_fun(val)``
  (and the step number below `max_steps`). With ``checkpoint=True`` (the
  default) it is a scan of ``B = ceil(sqrt(max_steps))`` blocks, each a
  `checkpoint` (policy ``nothing_saveable``) of an inner scan of
  ``S = ceil(max_steps / B)`` steps (the ``B * S - max_steps`` surplus
  steps never run the body). Reverse mode then stores the carry (plus the
  step counter) at the start of each block, ``B`` carries, and while
  transposing one block recomputes it, holding that block's ``S`` steps of
  residuals: about ``2 * sqrt(max_steps)`` carry-sized residual sets at once,
  for one extra forward pass of compute. With ``checkpoint=False`` it is one
  scan whose reverse mode stores the residuals of all `max_steps` steps.
  Either way the forward pass costs `max_steps` steps of the scan, not the
  trip count (steps past the end only evaluate `cond_fun`).

  Args:
    cond_fun: a function of the carry returning a boolean scalar.
    body_fun: a function of the carry returning a carry of the same structure and types.
    init_val: the initial carry (a pytree of arrays).
    max_steps: a static non-negative Python integer, the most iterations allowed.
    checkpoint: nest and checkpoint the scan as above (True) or save every step (False).

  Returns:
    The carry after the last iteration.

  Raises:
    TypeError: as `lax.while_loop` (non-callable functions, `cond_fun` not
      returning a boolean scalar, `body_fun` changing the carry's structure or
      types); `max_steps` is not a static integer.
    ValueError: `max_steps` is negative; or the loop needs more than
      `max_steps` iterations (`cond_fun` still True after `max_steps` steps),
      when that is known while tracing: eagerly, or under `grad`/`jvp`/`vmap`
      of eager code.
    JaxRuntimeError (jaxlib's, a `RuntimeError`; `jax.errors.JaxRuntimeError`
      in JAX): the loop needs more than `max_steps` iterations and is staged
      (under `jit`, in the body of another `scan`, ...). The check is then a
      `debug_callback`, run when the compiled program executes (once per
      element under `vmap`); its `ValueError` message, naming `max_steps`, is
      in the error's text, and no outputs are returned. (A staged check that is
      evaluated op by op, as eager `checkify` does, raises the ValueError.)

  Beyond JAX: JAX has no bounded while loop in its public API.
  """
  if not (callable(body_fun) and callable(cond_fun)):
    raise TypeError("bounded_while_loop: body_fun and cond_fun arguments should be callable.")
  max_steps = _static_max_steps(max_steps)
  leaves, tree = tree_util.tree_flatten(init_val)
  avals = [abstractify(x) for x in leaves]
  cond_f, body_f, body_tree, leaves = _trace_loop_functions(cond_fun, body_fun, init_val,
                                                            tree, leaves, avals)

  def step(state, _):
    i, carry = state
    pred = cond_f(carry)
    if needs_count:
      pred = bitwise_and(pred, lt(i, np.int32(max_steps)))
    carry = cond(pred, body_f, lambda c: list(c), carry)
    return (add(i, np.int32(1)) if needs_count else i, carry), None

  if checkpoint and max_steps > 1:
    blocks = math.ceil(math.sqrt(max_steps))
    steps = math.ceil(max_steps / blocks)
    needs_count = blocks * steps != max_steps
    block = _checkpoint(lambda state: scan(step, state, None, length=steps)[0])
    (_, carry), _ = scan(lambda state, _: (block(state), None), (np.int32(0), leaves), None,
                         length=blocks)
  else:
    needs_count = False
    (_, carry), _ = scan(step, (np.int32(0), leaves), None, length=max_steps)
  _check_finished(cond_f(carry), max_steps)
  return tree_util.tree_unflatten(body_tree, carry)


def _static_max_steps(max_steps) -> int:
  if isinstance(max_steps, core.Tracer):
    value = max_steps.to_concrete_value()
    if value is None:
      raise TypeError("bounded_while_loop: max_steps must be a static Python integer, got "
                      f"{max_steps._error_repr()}.")
    max_steps = value
  try:
    n = operator.index(max_steps)
  except TypeError:
    raise TypeError("bounded_while_loop: max_steps must be a static Python integer, got "
                    f"{max_steps!r} of type {type(max_steps).__name__}.") from None
  if n < 0:
    raise ValueError(f"bounded_while_loop: max_steps must be non-negative, got {n}.")
  return n


def _trace_loop_functions(cond_fun, body_fun, init_val, tree, leaves, avals):
  """Traces and checks `cond_fun` and `body_fun` as `while_loop` does.

  Returns flat functions ``cond_f(carry) -> pred`` and ``body_f(carry) -> carry``
  evaluating the traced jaxprs, the body's output tree, and the initial leaves
  (weakly typed ones promoted to the body's types).
  """
  in_tree = tree_util.tree_structure((init_val,))
  create = lambda avals: loops.trace_cond_and_body(cond_fun, body_fun, in_tree, avals)
  cond_jaxpr, cond_consts, body_jaxpr, body_consts, body_tree = create(avals)
  body_out = body_jaxpr.out_avals
  if len(body_out) != len(avals):
    common.check_carry_type("while_loop body", body_fun, tree, avals, body_tree, body_out)
  leaves, changed = common.promote_weak_typed_inputs(leaves, avals, body_out)
  if changed:
    avals = [core.get_aval(x) for x in leaves]
    cond_jaxpr, cond_consts, body_jaxpr, body_consts, body_tree = create(avals)
  common.check_carry_type("while_loop body", body_fun, tree, avals, body_tree,
                          body_jaxpr.out_avals)
  cond_f = lambda carry: core.jaxpr_as_fun(cond_jaxpr)(*cond_consts, *carry)[0]
  body_f = lambda carry: core.jaxpr_as_fun(body_jaxpr)(*body_consts, *carry)
  return cond_f, body_f, body_tree, list(leaves)


def _exceeded_message(max_steps: int) -> str:
  return (f"bounded_while_loop: cond_fun is still True after max_steps={max_steps} "
          f"iterations; the loop needs more than max_steps={max_steps} steps. Increase "
          "max_steps.")


def _check_finished(pred, max_steps: int) -> None:
  """Raises (eagerly) or stages a run-time raise if the loop stopped at its bound."""
  value = pred.to_concrete_value() if isinstance(pred, core.Tracer) else pred
  if value is not None:
    if bool(value):
      raise ValueError(_exceeded_message(max_steps))
    return

  def raise_if_running(still_running):
    if bool(still_running):
      raise ValueError(_exceeded_message(max_steps))

  debug_callback(raise_if_running, pred)
