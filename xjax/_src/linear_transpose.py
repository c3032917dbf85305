"""linear_transpose and fwd_and_bwd: reverse mode without (or apart from) the forward pass.

* `linear_transpose(fun, *primals)` traces `fun` (promised linear) to a jaxpr
  on the primals' types and returns its transpose, run by `ad.backward_pass`.
* `fwd_and_bwd(fun, argnums)` splits `vjp` into a forward function returning
  the residuals (a pytree, so it passes through `jit`) and a backward function
  applying them to a cotangent.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import traceback_util
from xjax._src import tree_util
from xjax._src.api import _abstractify, _linearize_tree, _to_array
from xjax._src.api_util import _ensure_index_tuple, check_callable, flatten_fun_nokwargs
from xjax._src.interpreters import ad
from xjax._src.interpreters import partial_eval as pe
from xjax._src.jit import jit


def _transposed_fun(jaxpr, in_tree, out_tree, in_avals, out_avals, consts, out_cotangent):
  cts, out_tree2 = tree_util.tree_flatten(out_cotangent)
  if out_tree != out_tree2:
    raise TypeError("cotangent tree does not match function output, "
                    f"expected {out_tree} but got {out_tree2}")
  if not all(core.get_aval(c).strip_weak_type() == a.strip_weak_type()
             for a, c in zip(out_avals, cts)):
    raise TypeError("cotangent type does not match function output, "
                    f"expected {tuple(out_avals)} but got {cts}")
  undefined = [ad.UndefinedPrimal(a.to_tangent_aval()) for a in in_avals]
  in_cts = ad.backward_pass(jaxpr, consts, undefined, cts)
  return tree_util.tree_unflatten(in_tree, [_to_array(ad.instantiate_zeros(c)) for c in in_cts])


@traceback_util.api_boundary
def linear_transpose(fun: Callable, *primals, reduce_axes=()) -> Callable:
  """The transpose of `fun`, a function promised to be linear.

  Args:
    fun: the linear function.
    *primals: pytrees of arrays or objects with ``shape`` and ``dtype`` (e.g.
      `ShapeDtypeStruct`), the argument types at which `fun` is transposed.
    reduce_axes: must be empty (deprecated in JAX).

  Returns:
    A pytree-callable (a `tree_util.Partial`) mapping a cotangent of
    ``fun(*primals)``'s structure, shapes and dtypes to a tuple of cotangents
    of the primals' structure.

  Raises:
    NotImplementedError: `reduce_axes` given; or `fun` uses a primitive with
      no transpose rule (it is not linear).
    TypeError: the input and output dtypes are not all inexact or all
      integer; or, from the returned function, a cotangent of another tree
      structure or type.

  Mirrors `jax.linear_transpose`.
  """
  if reduce_axes:
    raise NotImplementedError("reduce_axes argument to transpose is deprecated")
  if not callable(fun):
    raise TypeError("the first argument must be callable")
  leaves, in_tree = tree_util.tree_flatten(primals)
  in_avals = [_abstractify(x) for x in leaves]
  flat_fun, out_tree = flatten_fun_nokwargs(fun, in_tree)
  closed = pe.trace_to_jaxpr(flat_fun, in_avals)
  # Pruned first (the equations' own DCE rules too): a jitted function's unused nonlinear
  # output, such as a comparison of the input, leaves nothing to transpose (JAX's #15660).
  closed = core.ClosedJaxpr(pe.dce_jaxpr(closed.jaxpr, [True] * len(closed.out_avals),
                                         instantiate=True)[0], closed.consts)
  out_avals = closed.out_avals
  in_dtypes = [a.dtype for a in in_avals]
  out_dtypes = [a.dtype for a in out_avals]
  if not (all(dtypes.issubdtype(d, np.inexact) for d in in_dtypes + out_dtypes)
          or all(dtypes.issubdtype(d, np.integer) for d in in_dtypes + out_dtypes)):
    raise TypeError("linear_transpose only supports [float or complex] -> [float or complex], "
                    "and integer -> integer functions, but got "
                    f"{in_dtypes} -> {out_dtypes}.")
  transposed = tree_util.Partial(_transposed_fun, closed.jaxpr, in_tree, out_tree.val,
                                 tuple(in_avals), tuple(out_avals))
  # The constants are the pytree's leaves: the function passes through jit and vmap.
  return tree_util.Partial(transposed, list(closed.consts))


# ----------------------------------------------------------------------------
# fwd_and_bwd


class _VJP:
  """The residuals of `fwd_and_bwd`'s forward pass: a pytree (the residual arrays its
  leaves) that, called on a cotangent, returns the input cotangents (as `vjp`'s function)."""

  def __init__(self, jaxpr, in_tree, out_tree, in_avals, out_avals, n_aux, residuals):
    self.jaxpr, self.in_tree, self.out_tree = jaxpr, in_tree, out_tree
    self.in_avals, self.out_avals, self.n_aux = in_avals, out_avals, n_aux
    self.residuals = residuals

  def _static(self):
    return (self.jaxpr, self.in_tree, self.out_tree, self.in_avals, self.out_avals, self.n_aux)

  def __call__(self, ct):
    ct_leaves, ct_tree = tree_util.tree_flatten(ct)
    if ct_tree != self.out_tree:
      raise TypeError(f"Tree structure of cotangent input {ct_tree}, does not match structure "
                      f"of primal output {self.out_tree}.")
    for aval, c in zip(self.out_avals, ct_leaves):
      got, expected = core.get_aval(c), aval.to_tangent_aval()
      if got.shape != expected.shape or (got.dtype != expected.dtype
                                         and got.dtype != dtypes.float0):
        raise ValueError(
            "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got "
            f"{got.str_short()}, but expected {expected.str_short()} because the "
            f"corresponding output of the differentiated function had JAX type "
            f"{aval.str_short()}")
    undefined = [ad.UndefinedPrimal(a) for a in self.in_avals]
    aux_cts = [ad.Zero(a) for a in self.jaxpr.out_avals[len(ct_leaves):]]
    cts = ad.backward_pass(self.jaxpr.jaxpr, self.residuals, undefined, [*ct_leaves, *aux_cts])
    cts = [np.zeros(a.shape, dtypes.float0) if a.dtype == dtypes.float0
           else _to_array(ad.instantiate_zeros(c)) for c, a in zip(cts, self.in_avals)]
    return tree_util.tree_unflatten(self.in_tree, cts)


tree_util.register_pytree_node(
    _VJP, lambda v: (v.residuals, v._static()),
    lambda static, residuals: _VJP(*static, list(residuals)))


def _vjp_residuals(fun, primals, has_aux: bool):
  """``(out, residuals[, aux])``: `vjp` with the pullback as a pytree `_VJP`."""
  leaves, in_tree, outs, linear, n, stores = _linearize_tree(fun, primals, has_aux)
  out_tree = stores["out_tree"]
  residuals = _VJP(linear, in_tree, out_tree,
                   tuple(core.get_aval(x).to_tangent_aval() for x in leaves),
                   tuple(core.get_aval(o) for o in outs[:n]), len(outs) - n, list(linear.consts))
  out = tree_util.tree_unflatten(out_tree, [_to_array(o) for o in outs[:n]])
  if has_aux:
    aux = [a.primal if isinstance(a, ad.JVPTracer) else a for a in outs[n:]]
    return out, residuals, tree_util.tree_unflatten(stores["aux_tree"], aux)
  return out, residuals


def fwd_and_bwd(fun: Callable, argnums: int | Sequence[int], has_aux: bool = False,
                jitted: bool = True) -> tuple[Callable, Callable]:
  """``(fwd, bwd)``: the forward and backward passes of `fun`, usable separately.

  ``fwd(*args)`` returns ``(fun(*args), residuals)`` (with ``has_aux``:
  ``(out, residuals, aux)``), differentiating the positional arguments in
  `argnums` (keyword arguments are ignored, as in JAX). ``bwd(residuals, ct)``
  returns the cotangent of the argument `argnums` names (a tuple of them for
  a sequence). The residuals are a pytree, so both may be jitted: with
  `jitted` (the default) they are, each compiling once.

  Raises:
    TypeError: `fun` is not callable. ValueError: an argnum out of range (from fwd).

  Mirrors `jax.fwd_and_bwd`.
  """
  check_callable(fun)
  nums = _ensure_index_tuple(argnums)

  def fwd(*args, **kwargs):
    del kwargs  # as JAX's fwd_and_bwd: only positional arguments reach `fun`
    for i in nums:
      if not -len(args) <= i < len(args):
        raise ValueError("Positional argument indices, e.g. for `static_argnums`, must have "
                         "value greater than or equal to -len(args) and less than len(args), "
                         f"but got value {i} for len(args) == {len(args)}.")
    dyn = [i % len(args) for i in nums]

    def partial_fun(*dyn_args):
      full = list(args)
      for i, a in zip(dyn, dyn_args):
        full[i] = a
      return fun(*full)

    return _vjp_residuals(partial_fun, tuple(args[i] for i in dyn), has_aux)

  def bwd(f_vjp, outgrad):
    g = f_vjp(outgrad)
    return g[0] if isinstance(argnums, int) else g

  if jitted:
    fwd, bwd = jit(fwd), jit(bwd)
  return fwd, bwd
