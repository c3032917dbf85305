"""Jacobians and Hessians: `jacfwd`, `jacrev`, `hessian`, built on `vmap` as in JAX.

`jacfwd` pushes forward every standard basis vector of the inputs at once
(`vmap` of `jvp`); `jacrev` pulls back every basis vector of the outputs
(`vmap` of the `vjp` function). The stacked results are then reshaped into
one block per (output leaf, input leaf) pair of shape
``output.shape + input.shape``.
"""
from __future__ import annotations

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import traceback_util
from xjax._src import tree_util
from xjax._src.api import _check_input_dtype_grad, _diff_args, check_output_dtype_rev, jvp, vjp
from xjax._src.api_util import check_callable, wraps
from xjax._src.lax import elementwise as ew
from xjax._src.numpy import creation
from xjax._src.numpy import lax_numpy as jnp
from xjax._src.vmap import vmap


def _std_basis(leaves):
  """The standard basis of the flattened `leaves`: one array per leaf, of shape (N,) + leaf shape.

  N is the total size of the leaves; row k is the k-th basis vector. As in
  JAX, an identity matrix (in the leaves' common dtype) is cut into the
  leaves' columns, each converted to its leaf's dtype and weak type.
  """
  total = sum(core.get_aval(x).size for x in leaves)
  eye = creation.eye(total, dtype=dtypes.result_type(*leaves))
  return [_as_type_of(block, x, always=True) for block, x in zip(_unravel(eye, leaves, 1), leaves)]


def _unravel(arr, leaves, axis: int):
  """`arr`'s `axis` (of total size N) cut into one block per leaf, reshaped to the leaf's shape."""
  axis = axis % np.ndim(arr)
  sizes = [core.get_aval(x).size for x in leaves]
  cuts = np.cumsum(sizes[:-1], dtype=np.int64)
  parts = jnp.split(arr, cuts, axis) if leaves else []
  shape = np.shape(arr)
  return [jnp.reshape(part, shape[:axis] + np.shape(x) + shape[axis + 1:])
          for part, x in zip(parts, leaves)]


def _as_type_of(x, example, always: bool = False):
  """`x` converted to `example`'s dtype and weak type (its real part for a real `example`).

  With `always`, the conversion is recorded even when the type already
  agrees, as JAX's basis construction does (it re-shards there).
  """
  aval = core.get_aval(example)
  if dtypes.issubdtype(core.get_aval(x).dtype, np.complexfloating) and \
      not dtypes.issubdtype(aval.dtype, np.complexfloating):
    x = ew.real(x)
  if always and isinstance(x, core.Tracer):
    return ew.convert_element_type_p.bind(x, new_dtype=aval.dtype, weak_type=aval.weak_type,
                                          sharding=None)
  return ew.convert_element_type(x, aval.dtype, weak_type=aval.weak_type)


def _check_jacfwd_input(holomorphic: bool, x) -> None:
  dtype = core.get_aval(x).dtype
  if holomorphic and not dtypes.issubdtype(dtype, np.complexfloating):
    raise TypeError("jacfwd with holomorphic=True requires inputs with complex dtype, but got "
                    f"{dtype.name}.")
  if not holomorphic and not dtypes.issubdtype(dtype, np.floating):
    raise TypeError("jacfwd requires real-valued inputs (input dtype that is a sub-dtype of "
                    f"np.floating), but got {dtype.name}. For holomorphic differentiation, pass "
                    "holomorphic=True. For differentiation of non-holomorphic functions involving "
                    "complex inputs or integer inputs, use jax.jvp directly.")


def jacfwd(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False):
  """The Jacobian of `fun` by forward mode (`vmap` of `jvp` over the input basis).

  Args:
    fun: the function; its inputs at `argnums` must be real floating (complex
      with `holomorphic`).
    argnums: an int or tuple of ints: which positional arguments.
    has_aux: `fun` returns ``(output, aux)``; the result is ``(jacobian, aux)``.
    holomorphic: `fun` is holomorphic.

  Returns:
    A function returning, for each output leaf, a pytree over the inputs of
    blocks of shape ``output.shape + input.shape``.

  Raises:
    TypeError: inputs of a non-floating dtype (non-complex with `holomorphic`).

  Mirrors `jax.jacfwd`.
  """
  check_callable(fun)

  @traceback_util.api_boundary
  @wraps(fun)
  def jacfun(*args, **kwargs):
    single, dyn, partial_fun = _diff_args(fun, argnums, args, kwargs,
                                          lambda x: _check_jacfwd_input(holomorphic, x))
    leaves, in_tree = tree_util.tree_flatten(dyn)

    def pushfwd(*basis_leaves):
      return jvp(partial_fun, dyn, tree_util.tree_unflatten(in_tree, basis_leaves),
                 has_aux=has_aux)

    out_axes = (None, -1, None) if has_aux else (None, -1)
    res = vmap(pushfwd, out_axes=out_axes)(*_std_basis(leaves))
    y, jac = res[0], res[1]

    def unravel(y_leaf, jac_leaf):
      blocks = [_as_type_of(b, y_leaf) for b in _unravel(jac_leaf, leaves, -1)]
      tree = tree_util.tree_unflatten(in_tree, blocks)
      return tree[0] if single else tree

    jac_tree = tree_util.tree_map(unravel, y, jac)
    return (jac_tree, res[2]) if has_aux else jac_tree

  return jacfun


def jacrev(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
           allow_int: bool = False):
  """The Jacobian of `fun` by reverse mode (`vmap` of the vjp over the output basis).

  Args:
    fun: the function; see `jacfwd`. `allow_int` allows integer inputs
      (float0 blocks), as in `grad`.

  Returns:
    A function returning, for each output leaf, a pytree over the inputs of
    blocks of shape ``output.shape + input.shape``.

  Raises:
    TypeError: input or output dtypes reverse mode cannot differentiate
      (integer inputs without `allow_int`; integer outputs; complex ones
      without `holomorphic`).

  Mirrors `jax.jacrev`.
  """
  check_callable(fun)

  @traceback_util.api_boundary
  @wraps(fun)
  def jacfun(*args, **kwargs):
    single, dyn, partial_fun = _diff_args(
        fun, argnums, args, kwargs,
        lambda x: _check_input_dtype_grad(holomorphic, allow_int, x, "jacrev"))
    leaves, in_tree = tree_util.tree_flatten(dyn)
    if has_aux:
      y, pullback, aux = vjp(partial_fun, *dyn, has_aux=True)
    else:
      y, pullback = vjp(partial_fun, *dyn)
    y_leaves, y_tree = tree_util.tree_flatten(y)
    for leaf in y_leaves:
      check_output_dtype_rev(core.get_aval(leaf).dtype, holomorphic, "jacrev")

    def pull(*ct_leaves):
      return tree_util.tree_leaves(pullback(tree_util.tree_unflatten(y_tree, ct_leaves)))

    cts = vmap(pull)(*_std_basis(y_leaves))
    per_input = []
    for ct, x in zip(cts, leaves):
      if core.get_aval(ct).dtype == dtypes.float0:  # integer input under allow_int
        per_input.append([np.zeros(np.shape(o) + np.shape(x), dtypes.float0) for o in y_leaves])
        continue
      per_input.append([_as_type_of(b, x) for b in _unravel(ct, y_leaves, 0)])
    jac_leaves = []
    for j in range(len(y_leaves)):
      tree = tree_util.tree_unflatten(in_tree, [blocks[j] for blocks in per_input])
      jac_leaves.append(tree[0] if single else tree)
    jac = tree_util.tree_unflatten(y_tree, jac_leaves)
    return (jac, aux) if has_aux else jac

  return jacfun


jacobian = jacrev


def hessian(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False):
  """The Hessian of scalar `fun`: ``jacfwd(jacrev(fun))`` (mirrors `jax.hessian`)."""
  return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                has_aux=has_aux, holomorphic=holomorphic)
