"""custom_gradient and closure_convert, built on `custom_vjp` and on tracing to jaxprs."""
from __future__ import annotations

from xjax._src import core
from xjax._src import dtypes
from xjax._src import tree_util
from xjax._src.api_util import flatten_fun_nokwargs
from xjax._src.custom_derivatives import custom_vjp
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import partial_eval as pe


# ----------------------------------------------------------------------------
# custom_gradient


class _Residuals:
  """custom_gradient's residuals: the traced gradient function, its constants the leaves."""

  def __init__(self, jaxpr, in_tree, out_tree, consts):
    self.jaxpr, self.in_tree, self.out_tree, self.consts = jaxpr, in_tree, out_tree, consts


tree_util.register_pytree_node(
    _Residuals, lambda r: (r.consts, (r.jaxpr, r.in_tree, r.out_tree)),
    lambda aux, consts: _Residuals(*aux, list(consts)))


def custom_gradient(fun):
  """A function with a custom gradient, given as TensorFlow's ``tf.custom_gradient`` does.

  `fun(*args)` returns ``(out, vjp_fn)``: the value, and a function from an
  output cotangent to the tuple of argument cotangents (a single cotangent is
  accepted for a one-leaf argument list). `vjp_fn` may close over values of
  the forward computation; it is traced once per call, so it may not branch
  in Python on them. Built on `custom_vjp`, so forward mode raises.

  Returns:
    A function of `fun`'s arguments returning ``out``.

  Mirrors `jax.custom_gradient`.
  """
  @custom_vjp
  def wrapped_fun(*args, **kwargs):
    ans, _ = fun(*args, **kwargs)
    return ans

  def fwd(*args, **kwargs):
    ans, rule = fun(*args, **kwargs)
    ans_leaves, out_tree = tree_util.tree_flatten((ans,))
    flat_rule, in_tree = flatten_fun_nokwargs(rule, out_tree)
    closed = pe.trace_to_jaxpr(flat_rule,
                               [core.get_aval(x).to_tangent_aval() for x in ans_leaves])
    return ans, _Residuals(closed.jaxpr, in_tree.val, out_tree, list(closed.consts))

  def bwd(res, cts):
    cts_leaves, out_tree = tree_util.tree_flatten((cts,))
    if out_tree != res.out_tree:
      raise TypeError(f"{res.out_tree}\n!=\n{out_tree}")
    cts_out = tree_util.tree_unflatten(res.in_tree,
                                       core.eval_jaxpr(res.jaxpr, res.consts, *cts_leaves))
    return (cts_out,) if tree_util.treedef_is_leaf(res.in_tree) else cts_out

  wrapped_fun.defvjp(fwd, bwd)
  return wrapped_fun


# ----------------------------------------------------------------------------
# closure_convert


def _maybe_perturbed(x) -> bool:
  """False when `x` surely carries no derivative (JAX's heuristic, issue 6415)."""
  if not isinstance(x, core.Tracer):
    return False
  if isinstance(x, ad.JVPTracer):
    return type(x.tangent) is not ad.Zero or _maybe_perturbed(x.primal)
  if isinstance(x, pe.DynamicJaxprTracer):  # staged: differentiable unless float0 or a token
    return getattr(x.aval.to_tangent_aval(), "dtype", dtypes.float0) != dtypes.float0
  if isinstance(x, batching.BatchTracer):
    return _maybe_perturbed(x.val)
  return True


def closure_convert(fun, *example_args):
  """``(converted, consts)``: `fun` with the values it closes over that may carry derivatives
  made explicit arguments.

  `fun` is traced on the types of `example_args` (pytrees of arrays);
  ``converted(*args, *consts)`` computes ``fun(*args)``. Only closed-over
  tracers that may be differentiated are hoisted into `consts`; constants
  and values with no derivative stay closed over.

  Raises:
    TypeError: `converted` called with arguments of another pytree structure.

  Mirrors `jax.closure_convert`.
  """
  leaves, in_tree = tree_util.tree_flatten(example_args)
  flat_fun, out_tree = flatten_fun_nokwargs(fun, in_tree)
  closed = pe.trace_to_jaxpr(flat_fun, [core.get_aval(x) for x in leaves])
  hoist = [_maybe_perturbed(c) for c in closed.consts]
  kept = [c for c, h in zip(closed.consts, hoist) if not h]
  hoisted = [c for c, h in zip(closed.consts, hoist) if h]
  out_tree = out_tree.val

  def converted(*args_and_consts):
    n_args = len(args_and_consts) - len(hoisted)
    args, const_args = args_and_consts[:n_args], iter(args_and_consts[n_args:])
    kept_it = iter(kept)
    consts = [next(const_args) if h else next(kept_it) for h in hoist]
    flat, in_tree2 = tree_util.tree_flatten(tuple(args))
    if in_tree != in_tree2:
      raise TypeError("The inputs to the closure produced by closure_convert must have the "
                      "same Pytree structure as the example arguments passed when "
                      f"closure_convert was called. Expected {in_tree}, but got {in_tree2}")
    return tree_util.tree_unflatten(out_tree, core.eval_jaxpr(closed.jaxpr, consts, *flat))

  return converted, hoisted
