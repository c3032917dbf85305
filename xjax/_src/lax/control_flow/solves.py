"""`custom_linear_solve` and `custom_root`: solves with implicit derivatives.

``custom_linear_solve[const_lengths, jaxprs] *consts *b`` computes
``x = solve(matvec, b)``. It carries four closed jaxprs (matvec, its
transpose vecmat, solve, transpose_solve), each taking its own leading
consts. Evaluation runs `solve`; derivatives never differentiate through it:

* jvp: ``x_dot = solve(b_dot - matvec_dot(x))``, one more linear solve;
* transpose (in `b`): a linear solve of the transposed system, which swaps
  matvec with vecmat and solve with transpose_solve.

`custom_root` finds ``f(x) = 0`` with a user `solve`, and differentiates by
the implicit function theorem through `tangent_solve`, as a `custom_jvp`.
"""
from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import numpy as np

from xjax._src import api
from xjax._src import core
from xjax._src import tree_util
from xjax._src import traceback_util
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import lowering
from xjax._src.lax.control_flow import common
from xjax._src.lax.control_flow.conditionals import abstractify
from xjax._src.lax.elementwise import neg, sub


class _LinearSolveTuple(NamedTuple):
  matvec: Any
  vecmat: Any
  solve: Any
  transpose_solve: Any

  def transpose(self):
    return _LinearSolveTuple(self.vecmat, self.matvec, self.transpose_solve, self.solve)


class _RootTuple(NamedTuple):
  f: Any
  solve: Any
  l_and_s: Any


def _check_tree(func_name, expected_name, actual_tree, expected_tree, has_aux=False):
  """JAX's errors when a user function's output tree differs from its input's."""
  if has_aux:
    children = tree_util.treedef_children(actual_tree)
    if len(children) != 2:
      raise ValueError(f"{func_name}() produced a pytree with structure {actual_tree}, but a "
                       "pytree tuple with auxiliary output was expected because has_aux was "
                       "set to True.")
    actual_tree = children[0]
  if actual_tree != expected_tree:
    raise TypeError(f"{func_name}() output pytree structure must match {expected_name}, got "
                    f"{actual_tree} and {expected_tree}.")


def _shape_checked(fun, func_name, expected_avals, has_aux):
  """`fun` checking, as it is traced, that its output leaves (the first element of its pair
  with `has_aux`) have the shapes of `expected_avals`: JAX's ValueError otherwise, raised
  before the pytree structures are compared."""
  expected = [tuple(a.shape) for a in expected_avals]

  def check(y):
    actual = [np.shape(leaf) for leaf in tree_util.tree_leaves(y)]
    if actual != expected:
      raise ValueError(f"{func_name}() output shapes must match b, got {actual} and "
                       f"{expected}")

  def checked(x):
    out = fun(x)
    if not has_aux:
      check(out)
    elif isinstance(out, (tuple, list)) and len(out) == 2:
      check(out[0])  # not a pair: the structure check after tracing says so
    return out
  return checked


def _split(args, const_lengths, tuple_type):
  """Splits flat operands into one list of consts per jaxpr, and the rest."""
  groups, i = [], 0
  for n in const_lengths:
    groups.append(list(args[i:i + n]))
    i += n
  return tuple_type(*groups), list(args[i:])


def _flatten(groups):
  return [x for group in groups for x in group]


def _transpose_matvec(matvec_jaxpr, n_consts, b_tree, b_avals):
  """vecmat: the transpose of the linear map `matvec` (its consts as leading arguments)."""
  def vecmat(consts, x):
    x_flat = tree_util.tree_leaves(x)
    primals = [*consts, *(ad.UndefinedPrimal(a) for a in b_avals)]
    cts = ad.backward_pass(matvec_jaxpr.jaxpr, matvec_jaxpr.consts, primals, x_flat)[n_consts:]
    cts = [ad.instantiate_zeros(ct if ct is not None else ad.Zero(a.to_tangent_aval()))
           for ct, a in zip(cts, b_avals)]
    return tree_util.tree_unflatten(b_tree, cts)
  return vecmat


@traceback_util.api_boundary
def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
  """Solves ``matvec(x) = b`` for `x` with `solve`, with derivatives by implicit differentiation.

  Args:
    matvec: a linear function of a pytree like `b`, returning one like `b`.
    b: the right-hand side (a pytree of arrays).
    solve: ``solve(matvec, b) -> x`` (with `has_aux`, ``-> (x, aux)``).
    transpose_solve: ``transpose_solve(vecmat, b) -> x`` solving the
      transposed system; needed for reverse mode. Defaults to `solve` when
      `symmetric`.
    symmetric: whether `matvec` is its own transpose.
    has_aux: whether the solves return auxiliary data too.

  Returns:
    `x` (and the auxiliary data when `has_aux`).

  Raises:
    TypeError: an output's pytree structure differs from `b`'s; reverse mode without a
      `transpose_solve`.
    ValueError: an output's shapes differ from `b`'s; `has_aux` and a solve does not
      return a pair.

  Mirrors `jax.lax.custom_linear_solve`.
  """
  if transpose_solve is None and symmetric:
    transpose_solve = solve
  b_flat, in_args_tree = tree_util.tree_flatten((b,))
  b_avals = [abstractify(x) for x in b_flat]
  tree = tree_util.tree_structure(b)
  trace = lambda fun: common.trace_to_jaxpr(fun, in_args_tree, b_avals, "custom_linear_solve")

  matvec_jaxpr, matvec_consts, out_tree = trace(
      _shape_checked(matvec, "matvec", b_avals, False))
  _check_tree("matvec", "b", out_tree, tree)
  solve_jaxpr, solve_consts, out_tree = trace(
      _shape_checked(partial(solve, matvec), "solve", b_avals, has_aux))
  _check_tree("solve", "b", out_tree, tree, has_aux)
  if transpose_solve is None:
    vecmat_jaxpr = tr_solve_jaxpr = None
    vecmat_consts, tr_solve_consts = [], []
  else:
    if symmetric:
      vecmat = matvec
      vecmat_jaxpr, vecmat_consts = matvec_jaxpr, matvec_consts
    else:
      vecmat = partial(_transpose_matvec(matvec_jaxpr, len(matvec_consts), tree, b_avals),
                       matvec_consts)
      vecmat_jaxpr, vecmat_consts, _ = trace(vecmat)
    tr_solve_jaxpr, tr_solve_consts, out_tree = trace(_shape_checked(
        partial(transpose_solve, vecmat), "transpose_solve", b_avals, has_aux))
    _check_tree("transpose_solve", "b", out_tree, tree, has_aux)
  all_consts = [matvec_consts, vecmat_consts, solve_consts, tr_solve_consts]
  const_lengths = _LinearSolveTuple(*map(len, all_consts))
  jaxprs = _LinearSolveTuple(matvec_jaxpr, vecmat_jaxpr, solve_jaxpr, tr_solve_jaxpr)
  out = linear_solve_p.bind(*_flatten(all_consts), *b_flat, const_lengths=const_lengths,
                            jaxprs=jaxprs)
  x, aux = out[:len(b_flat)], out[len(b_flat):]
  x = tree_util.tree_unflatten(tree, x)
  if has_aux:
    _, aux_tree = tree_util.treedef_children(out_tree)
    return x, tree_util.tree_unflatten(aux_tree, aux)
  return x


linear_solve_p = core.Primitive("custom_linear_solve", multiple_results=True)


@linear_solve_p.def_abstract_eval
def _linear_solve_abstract_eval(*avals, const_lengths, jaxprs):
  return list(jaxprs.solve.out_avals)


def _linear_solve_jvp(primals, tangents, *, const_lengths, jaxprs):
  """``x_dot = solve(b_dot - matvec_dot(x))``; the solves' own consts get no derivative."""
  params = dict(const_lengths=const_lengths, jaxprs=jaxprs)
  out = linear_solve_p.bind(*primals, **params)
  consts, _ = _split(primals, const_lengths, _LinearSolveTuple)
  consts_dot, b_dot = _split(tangents, const_lengths, _LinearSolveTuple)
  n_x = len(jaxprs.matvec.out_avals)
  x, aux = out[:n_x], out[n_x:]
  if all(type(t) is ad.Zero for t in consts_dot.matvec):
    rhs = b_dot
  else:
    x_dot0 = [ad.Zero(core.get_aval(v).to_tangent_aval()) for v in x]
    _, matvec_dot = ad.jvp_flat(core.jaxpr_as_fun(jaxprs.matvec), [*consts.matvec, *x],
                                [*consts_dot.matvec, *x_dot0])
    rhs = [t if type(m) is ad.Zero else neg(m) if type(t) is ad.Zero else sub(t, m)
           for t, m in zip(b_dot, matvec_dot)]
  aux_dot = [ad.Zero(core.get_aval(a).to_tangent_aval()) for a in aux]
  if all(type(t) is ad.Zero for t in rhs):
    return out, [ad.Zero(core.get_aval(v).to_tangent_aval()) for v in x] + aux_dot
  rhs = [ad.instantiate_zeros(t) for t in rhs]
  x_dot = linear_solve_p.bind(*_flatten(consts), *rhs, **params)
  return out, x_dot[:n_x] + aux_dot


def _linear_solve_transpose(cts, *args, const_lengths, jaxprs):
  if jaxprs.transpose_solve is None:
    raise TypeError("transpose_solve required for backwards mode automatic differentiation "
                    "of custom_linear_solve")
  consts, b = _split(args, const_lengths, _LinearSolveTuple)
  assert all(ad.is_undefined_primal(x) for x in b), "internal: consts of a solve are not linear"
  cts = [ad.instantiate_zeros(ct) for ct in cts[:len(b)]]
  out = linear_solve_p.bind(*_flatten(consts.transpose()), *cts,
                            const_lengths=const_lengths.transpose(), jaxprs=jaxprs.transpose())
  return [None] * sum(const_lengths) + list(out[:len(b)])


def _linear_solve_partial_eval(trace, args, unknowns, *, const_lengths, jaxprs):
  # A solve is one opaque step: with any operand unknown it is staged whole (as in JAX);
  # its known consts become residuals. Fully known solves never reach this rule.
  return trace.stage(linear_solve_p, args, dict(const_lengths=const_lengths, jaxprs=jaxprs))


linear_solve_p.def_jvp(_linear_solve_jvp)
linear_solve_p.def_transpose(_linear_solve_transpose)
linear_solve_p.def_partial_eval(_linear_solve_partial_eval)


@linear_solve_p.def_batch
def _linear_solve_batch(axis_data, args, dims, *, const_lengths, jaxprs):
  """Batches every jaxpr; the vectors (b, x, aux) are all batched along axis 0."""
  batched = [d is not batching.not_mapped for d in dims]
  args = [batching.moveaxis(x, d, 0) if bat else x for x, d, bat in zip(args, dims, batched)]
  consts, b = _split(args, const_lengths, _LinearSolveTuple)
  consts_bat, _ = _split(batched, const_lengths, _LinearSolveTuple)
  b = [x if bat else batching.broadcast(x, axis_data.size, 0)
       for x, bat in zip(b, batched[sum(const_lengths):])]
  n_b = len(b)
  new_jaxprs = _LinearSolveTuple(*(
      None if j is None else batching.batch_jaxpr(j, axis_data, [*bat, *[True] * n_b], True)[0]
      for j, bat in zip(jaxprs, consts_bat)))
  out = linear_solve_p.bind(*_flatten(consts), *b, const_lengths=const_lengths,
                            jaxprs=new_jaxprs)
  return out, [0] * len(out)


@linear_solve_p.def_lowering
def _linear_solve_lowering(ctx, *args, const_lengths, jaxprs):
  consts, b = _split(args, const_lengths, _LinearSolveTuple)
  solve = jaxprs.solve
  inner = [ctx.constant(np.asarray(c)) for c in solve.consts]
  return lowering.lower_jaxpr_body(ctx, solve.jaxpr, inner, [*consts.solve, *b])


class _Shown:
  """A param value printed as given text (JAX prints the jaxprs' named tuple with str)."""

  def __init__(self, text):
    self.text = text

  def __str__(self):
    return self.text


def _pp_solve_tuple(t) -> str:
  fields = ", ".join(f"{k}={'None' if v is None else str(v)}" for k, v in t._asdict().items())
  return f"{type(t).__name__}({fields})"


@linear_solve_p.def_pp_params
def _linear_solve_pp(params):
  return {"const_lengths": params["const_lengths"],
          "jaxprs": _Shown(_pp_solve_tuple(params["jaxprs"]))}


# ----------------------------------------------------------------------------
# custom_root


@traceback_util.api_boundary
def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
  """Finds a root of `f` with `solve`, differentiable by the implicit function theorem.

  Args:
    f: a function of a pytree like `initial_guess`, returning one like it.
    initial_guess: the starting point (a pytree of arrays).
    solve: ``solve(f, initial_guess) -> x`` with ``f(x) = 0`` (with
      `has_aux`, ``-> (x, aux)``); it is never differentiated.
    tangent_solve: ``tangent_solve(g, y) -> x`` solving the linear system
      ``g(x) = y``, where `g` is the linearization of `f` at the root.
    has_aux: whether `solve` returns auxiliary data too.

  Returns:
    The root (and the auxiliary data when `has_aux`).

  Raises:
    TypeError: an output's pytree structure differs from `initial_guess`'s.

  Mirrors `jax.lax.custom_root`.
  """
  guess_flat, in_args_tree = tree_util.tree_flatten((initial_guess,))
  guess_avals = [abstractify(x) for x in guess_flat]
  tree = tree_util.tree_structure(initial_guess)
  f_jaxpr, f_consts, out_tree = common.trace_to_jaxpr(f, in_args_tree, guess_avals,
                                                      "custom_root")
  _check_tree("f", "initial_guess", out_tree, tree)
  solve_jaxpr, solve_consts, solution_tree = common.trace_to_jaxpr(
      partial(solve, f), in_args_tree, guess_avals, "custom_root")
  _check_tree("solve", "initial_guess", solution_tree, tree, has_aux)

  def linearize_and_solve(x, b):
    _, f_lin = api.linearize(f, x)
    return tangent_solve(f_lin, b)

  l_and_s_jaxpr, l_and_s_consts, out_tree = common.trace_to_jaxpr(
      linearize_and_solve, tree_util.tree_structure((initial_guess, initial_guess)),
      guess_avals * 2, "custom_root")
  _check_tree("tangent_solve", "x", out_tree, tree)
  all_consts = [f_consts, solve_consts, l_and_s_consts]
  const_lengths = _RootTuple(*map(len, all_consts))
  jaxprs = _RootTuple(f_jaxpr, solve_jaxpr, l_and_s_jaxpr)
  solution = _custom_root(const_lengths, jaxprs, *_flatten(all_consts), *guess_flat)
  return tree_util.tree_unflatten(solution_tree, solution)


@partial(custom_jvp, nondiff_argnums=(0, 1))
def _custom_root(const_lengths, jaxprs, *args):
  consts, guess = _split(args, const_lengths, _RootTuple)
  return core.jaxpr_as_fun(jaxprs.solve)(*consts.solve, *guess)


@_custom_root.defjvp
def _root_jvp(const_lengths, jaxprs, primals, tangents):
  """With ``F(m, u*(m)) = 0``: ``du* = -(d_u F)^-1 (d_m F dm)``, by `tangent_solve`."""
  consts, _ = _split(primals, const_lengths, _RootTuple)
  consts_dot, _ = _split(tangents, const_lengths, _RootTuple)
  out = _custom_root(const_lengths, jaxprs, *primals)
  n_x = len(jaxprs.f.out_avals)
  solution, aux = list(out[:n_x]), list(out[n_x:])
  f = core.jaxpr_as_fun(jaxprs.f)
  if consts.f:
    _, rhs = api.jvp(lambda *m: f(*m, *solution), tuple(consts.f), tuple(consts_dot.f))
  else:
    rhs = [ad.instantiate_zeros(ad.Zero(core.get_aval(x).to_tangent_aval())) for x in solution]
  solved = core.jaxpr_as_fun(jaxprs.l_and_s)(*consts.l_and_s, *solution, *rhs)
  solution_dot = [neg(t) for t in solved]
  aux_dot = [ad.instantiate_zeros(ad.Zero(core.get_aval(a).to_tangent_aval())) for a in aux]
  return [*solution, *aux], [*solution_dot, *aux_dot]
