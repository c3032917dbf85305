"""Public transformations: make_jaxpr, eval_shape, jvp, linearize, vjp, grad, value_and_grad;
named scopes, typeof, clear_caches and print_environment_info."""
from __future__ import annotations

import contextlib
import functools
import os
import platform as platform_module
import sys
import textwrap
import threading

import numpy as np

from xjax._src import backend
from xjax._src import core
from xjax._src import dispatch
from xjax._src import executable_cache
from xjax._src import dtypes
from xjax._src.devices import process_count
from xjax._src import jit as jit_module
from xjax._src import traceback_util
from xjax._src import source_info
from xjax._src import tree_util
from xjax._src import version
from xjax._src.api_util import (arg_path_name, check_callable, debug_info, flatten_fun,
                                fun_signature, shaped_abstractify,
                                wraps)
from xjax._src.array import Array
from xjax._src.shape_dtype_struct import ShapeDtypeStruct
from xjax._src.config import config
from xjax._src.interpreters import ad
from xjax._src.interpreters import partial_eval as pe
from xjax._src.lax.elementwise import convert_element_type
from xjax._src.random.prng import PRNGKeyArray


def effects_barrier():
  """Waits until the side effects of the functions called so far have happened.

  A compiled xjax call with side effects (callbacks, `debug.print`) returns
  only once they have run, so there is never anything left to wait for.
  Mirrors `jax.effects_barrier`.
  """


def typeof(x):
  """The abstract value (aval) of `x`: a `ShapedArray` such as ``float32[3]``.

  Args:
    x: an Array, tracer, NumPy value or Python scalar (scalars are weakly typed).

  Raises:
    TypeError: `x` is not a valid JAX type.

  Mirrors `jax.typeof`.
  """
  try:
    return core.get_aval(x)
  except TypeError:
    raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type") from None


class _NameStack(threading.local):
  def __init__(self):
    self.names: list[str] = []


_name_stack = _NameStack()


def current_name_stack() -> str:
  """The names of the enclosing `named_scope`s and `named_call`s, joined by '/'."""
  return "/".join(_name_stack.names)


@contextlib.contextmanager
def named_scope(name: str):
  """Context manager adding `name` to the name stack of the operations traced inside.

  xjax keeps the stack (see `current_name_stack`) but does not yet write it
  into lowered op metadata; printed jaxprs do not show it, as in JAX.

  Raises:
    TypeError: `name` is not a string.

  Mirrors `jax.named_scope`.
  """
  if not isinstance(name, str):
    raise TypeError("named_scope name argument must be a string.")
  _name_stack.names.append(name)
  try:
    yield
  finally:
    _name_stack.names.pop()


def named_call(fun, *, name: str | None = None):
  """`fun`, run inside ``named_scope(name)`` (default: `fun`'s name).

  Mirrors `jax.named_call`.
  """
  if name is None:
    name = getattr(fun, "__name__", None) or type(fun).__name__

  @functools.wraps(fun)
  def named_f(*args, **kwargs):
    with named_scope(name):
      return fun(*args, **kwargs)

  return named_f


@contextlib.contextmanager
def ensure_compile_time_eval():
  """Context manager evaluating operations on concrete values eagerly while tracing.

  Inside it, an operation under `jit` (or another staging transformation) whose
  operands are all concrete runs at once and gives a concrete Array, instead of
  being staged into the jaxpr; operations on tracers are staged as usual.

  Mirrors `jax.ensure_compile_time_eval`.
  """
  with config.override("jax_eager_constant_folding", True):
    yield


def clear_caches() -> None:
  """Clears every tracing, lowering and compilation cache (mirrors `jax.clear_caches`).

  Every LRUCache and DerivedCache (jit's per-function caches among them) and every cache
  its module registered with `executable_cache.on_clear`. (jit's converted-jaxpr memos are
  weakly keyed on the traced jaxprs cleared here: they go with them.)
  """
  executable_cache.clear_all()


def print_environment_info(return_string: bool = False) -> str | None:
  """Prints (or returns) versions (the JAX API mirrored, xjax, jaxlib, NumPy, Python),
  devices and JAX_/XLA_ environment variables.

  Mirrors `jax.print_environment_info`.
  """
  import importlib.metadata
  devs = backend.devices()
  # The first line names the JAX release whose API xjax mirrors (what `jax.__version__` says
  # under `install_as_jax`), then xjax's own version.
  info = textwrap.dedent(f"""\
  jax:    {version.JAX_VERSION} (xjax {version.__version__})
  jaxlib: {importlib.metadata.version('jaxlib')}
  numpy:  {np.__version__}
  python: {sys.version.replace(chr(10), ' ')}
  device info: {devs[0].device_kind}-{len(devs)}, {len(backend.local_devices())} local devices"
  process_count: {process_count()}
  platform: {platform_module.uname()}""")
  for key, value in os.environ.items():
    if key.startswith(("JAX_", "XLA_")):
      info += f"\n{key}={value}"
  if return_string:
    return info
  print(info)
  return None


def _abstractify(x):
  if isinstance(x, (Array, core.Tracer, ShapeDtypeStruct)) or type(x) in core.pytype_aval_mappings:
    return core.get_aval(x)
  if hasattr(x, "shape") and hasattr(x, "dtype"):  # duck-typed: its shape and dtype
    return core.ShapedArray(core.canonicalize_shape(x.shape),
                            dtypes.canonicalize_dtype(x.dtype, allow_extended_dtype=True))
  return core.get_aval(x)


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape: bool = False,
               abstracted_axes=None):
  """A function returning the ClosedJaxpr of `fun` traced on the given arguments.

  Args:
    fun: the function to trace.
    static_argnums: positions of arguments that are passed to `fun` as they
      are, not traced.
    return_shape: also return the output's pytree of ShapeDtypeStructs.

  Returns:
    A function that takes `fun`'s arguments and returns a `ClosedJaxpr`
    (printed in JAX's text format), or ``(jaxpr, shapes)``.

  Mirrors `jax.make_jaxpr`.
  """
  check_callable(fun)
  static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

  @traceback_util.api_boundary
  @wraps(fun)
  def make_jaxpr_f(*args, **kwargs):
    n = len(args)
    statics = {i if i >= 0 else i + n for i in static_argnums}
    dyn_args = tuple(a for i, a in enumerate(args) if i not in statics)

    def with_statics(*dyn, **kw):
      it = iter(dyn)
      full = [args[i] if i in statics else next(it) for i in range(n)]
      return fun(*full, **kw)

    leaves, in_tree = tree_util.tree_flatten((dyn_args, kwargs))
    try:
      avals = [_abstractify(x) for x in leaves]
    except TypeError:  # JAX's message, naming the argument
      sig = fun_signature(fun)
      for x, (path, _) in zip(leaves, tree_util.tree_flatten_with_path((dyn_args, kwargs))[0]):
        shaped_abstractify(x, fun, arg_path_name(sig, tree_util.keystr(path)))
      raise
    flat_fun, out_tree = flatten_fun(with_statics, in_tree)
    info = debug_info("jit", fun, args, kwargs, tuple(statics), ())
    with contextlib.ExitStack() as stack:
      for name, size in axis_env or ():
        stack.enter_context(core.extend_axis_env(name, size))
      closed = pe.trace_to_jaxpr(flat_fun, avals, info)
    if return_shape:
      shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in closed.out_avals]
      return closed, tree_util.tree_unflatten(out_tree.val, shapes)
    return closed

  make_jaxpr_f.__name__ = f"make_jaxpr({getattr(fun, '__name__', 'fun')})"
  if hasattr(fun, "__qualname__"):
    make_jaxpr_f.__qualname__ = f"make_jaxpr({fun.__qualname__})"
  make_jaxpr_f.__module__ = "jax"  # as JAX's
  return make_jaxpr_f


@traceback_util.api_boundary
def eval_shape(fun, *args, **kwargs):
  """The output shapes and dtypes of `fun(*args, **kwargs)`, computed without running it.

  Args:
    fun: the function.
    *args, **kwargs: arrays, ShapeDtypeStructs or anything with `shape` and
      `dtype`, in pytrees.

  Returns:
    A pytree of ShapeDtypeStructs like the output.

  Mirrors `jax.eval_shape`.
  """
  check_callable(fun)
  leaves, in_tree = tree_util.tree_flatten((args, kwargs))
  avals = tuple(_abstractify(x) for x in leaves)
  # Through jit's jaxpr cache, as in JAX: the same function at the same shapes is traced once.
  closed, out_tree = jit_module.jit(fun)._trace((), args, kwargs, leaves, in_tree, avals,
                                                traced_for="eval_shape")
  shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in closed.out_avals]
  out = tree_util.tree_unflatten(out_tree, shapes)
  # A typed key array is a pytree node in xjax (its key data is the child) but a leaf in
  # JAX: give its ShapeDtypeStruct (of the key dtype) in place of the node, as JAX does.
  is_key = lambda x: isinstance(x, PRNGKeyArray)
  return tree_util.tree_map(lambda x: x._base_array if is_key(x) else x, out, is_leaf=is_key)


# ----------------------------------------------------------------------------
# Differentiation


def _flatten_fun_aux(fun, in_tree, has_aux: bool):
  """`fun` on flat leaves; with has_aux, the aux leaves that are tracers are returned after
  the outputs, and the aux leaves with the treedef kept in `stores` (see `_aux_result`):
  as in JAX, aux leaves of any Python type (strings, ints, ...) come back unchanged."""
  stores = {}

  def flat_fun(*leaves):
    args = tree_util.tree_unflatten(in_tree, leaves)
    out = fun(*args)
    if has_aux:
      if not (isinstance(out, (list, tuple)) and len(out) == 2):
        raise TypeError("expected function with aux output to return a two-element tuple, "
                        f"but got type {type(out)} with value {out!r}")
      out, aux = out
    out_leaves, stores["out_tree"] = tree_util.tree_flatten(out)
    if has_aux:
      aux_leaves, stores["aux_tree"] = tree_util.tree_flatten(aux)
      stores["aux_leaves"] = aux_leaves
      stores["n_out"] = len(out_leaves)
      return [*out_leaves, *(l for l in aux_leaves if isinstance(l, core.Tracer))]
    return out_leaves

  return flat_fun, stores


def _aux_result(stores, traced_aux):
  """The aux pytree: the leaves kept by `_flatten_fun_aux`, each tracer among them replaced
  in order by the corresponding value of `traced_aux` (what the transformation returned)."""
  traced_aux = iter(traced_aux)
  leaves = [next(traced_aux) if isinstance(l, core.Tracer) else l
            for l in stores.pop("aux_leaves")]
  return tree_util.tree_unflatten(stores["aux_tree"], leaves)


def _to_array(x):
  if isinstance(x, (Array, core.Tracer)):
    return x
  if getattr(x, "dtype", None) == dtypes.float0:
    return np.zeros(np.shape(x), dtypes.float0)  # as JAX: float0 tangents stay NumPy arrays
  trace = core.trace_ctx.trace
  if isinstance(trace, pe.DynamicJaxprTrace) and pe.is_literalable(x):
    return trace.to_jaxpr_tracer(x)  # staged as a literal (a zero gradient prints 0.0:f32[])
  keep = isinstance(x, (int, float, complex, bool, np.ndarray))  # a weak constant stays weak
  return dispatch.device_put_value(x if keep else np.asarray(x))


def _as_output(x):
  """A value vjp and linearize hand back: a Python scalar (a typed one too) as it is, as JAX
  returns the values nothing computed; anything else as `_to_array` makes it."""
  if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
    return x
  return _to_array(x)


def _check_tangent(p, t):
  p_aval, t_aval = core.get_aval(p), core.get_aval(t)
  expected = p_aval.to_tangent_aval().dtype
  if t_aval.dtype != expected:
    raise TypeError("primal and tangent arguments to jax.jvp do not match; dtypes must be "
                    "equal, or in case of int/bool primal dtype the tangent dtype must be "
                    f"float0.Got primal dtype {p_aval.dtype} and so expected tangent dtype "
                    f"{expected}, but got tangent dtype {t_aval.dtype} instead.")
  if p_aval.shape != t_aval.shape:
    raise ValueError("jvp called with different primal and tangent shapes;"
                     f"Got primal shape {p_aval.shape} and tangent shape as {t_aval.shape}")


@traceback_util.api_boundary
def jvp(fun, primals, tangents, has_aux: bool = False):
  """Forward-mode derivative: ``(fun(*primals), d fun(primals) . tangents)``.

  Args:
    fun: a function of arrays (pytrees) returning arrays (pytrees).
    primals: a tuple or list of the arguments.
    tangents: a tuple or list of tangents with the primals' structure, shapes
      and dtypes (float0 for integer and boolean primals).
    has_aux: `fun` returns ``(output, aux)``; aux is returned undifferentiated.

  Returns:
    ``(primals_out, tangents_out)`` (plus aux).

  Raises:
    TypeError: primals/tangents are not tuples or lists, or their structures
      or dtypes do not match. ValueError: shapes do not match.

  Mirrors `jax.jvp`.
  """
  check_callable(fun)
  if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
    raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; "
                    f"found {type(primals).__name__} and {type(tangents).__name__}.")
  # As given: a tuple of primals and a list of tangents are different trees, as in JAX.
  p_leaves, p_tree = tree_util.tree_flatten(primals)
  t_leaves, t_tree = tree_util.tree_flatten(tangents)
  if p_tree != t_tree:
    raise TypeError("primal and tangent arguments to jax.jvp must have the same tree "
                    f"structure; primals have tree structure {p_tree} whereas tangents have "
                    f"tree structure {t_tree}.")
  for p, t in zip(p_leaves, t_leaves):
    _check_tangent(p, t)
  flat_fun, stores = _flatten_fun_aux(fun, p_tree, has_aux)
  outs_p, outs_t = ad.jvp_flat(flat_fun, p_leaves, t_leaves)
  # As in JAX, outputs that nothing computed (a Python scalar the function returns, an input
  # returned as is, a custom_jvp rule's Python values) come back unchanged: a tangent stays
  # as it is when its primal is such a value, and is an array otherwise.
  outs_t = [t if type(t) is not ad.Zero and not isinstance(p, (Array, core.Tracer))
            else _to_array(ad.instantiate_zeros(t)) for p, t in zip(outs_p, outs_t)]
  n = stores.get("n_out", len(outs_p))
  out_tree = stores["out_tree"]
  result = (tree_util.tree_unflatten(out_tree, outs_p[:n]),
            tree_util.tree_unflatten(out_tree, outs_t[:n]))
  if has_aux:
    return (*result, _aux_result(stores, outs_p[n:]))
  return result


def _linearize_tree(fun, primals, has_aux: bool):
  """Linearizes `fun` at the pytree `primals`: the shared part of `linearize` and `vjp`.

  Returns ``(leaves, in_tree, outs, linear, n_out, stores)``: the flat primals,
  the flat outputs (aux leaves after the first `n_out`), the linear jaxpr, and
  the stores holding ``out_tree`` (and ``aux_tree``).
  """
  check_callable(fun)
  leaves, in_tree = tree_util.tree_flatten(primals)
  flat_fun, stores = _flatten_fun_aux(fun, in_tree, has_aux)
  outs, linear = ad.linearize_flat(flat_fun, leaves)
  return leaves, in_tree, outs, linear, stores.get("n_out", len(outs)), stores


@traceback_util.api_boundary
def linearize(fun, *primals, has_aux: bool = False):
  """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the linear map at primals.

  The linear map is a staged jaxpr: evaluating it runs no primal computation.

  Mirrors `jax.linearize`.
  """
  leaves, in_tree, outs, linear, n, stores = _linearize_tree(fun, primals, has_aux)
  out_tree = stores["out_tree"]
  in_avals = tuple(core.get_aval(x).to_tangent_aval() for x in leaves)
  # A tree_util.Partial over the linear jaxpr's constants, as JAX's: it can be passed to
  # and returned from jitted functions.
  f_jvp = tree_util.Partial(functools.partial(
      _lifted_jvp, linear.jaxpr, in_avals, in_tree, out_tree, n, len(linear.consts)),
      *linear.consts)
  out = tree_util.tree_unflatten(out_tree, outs[:n])  # unchanged, as jvp's (JAX's too)
  if has_aux:
    return out, f_jvp, _aux_result(stores, outs[n:])
  return out, f_jvp


def _lifted_jvp(jaxpr, in_avals, in_tree, out_tree, n, n_consts, *args):
  """The linear map `linearize` returns: ``args`` are the jaxpr's constants, then the
  tangents."""
  consts, tangents = args[:n_consts], args[n_consts:]
  t_leaves, t_tree = tree_util.tree_flatten(tangents)
  if t_tree != in_tree:
    raise TypeError(f"linearized function called on tangent values inconsistent with the "
                    f"original primal values: expected structure {in_tree}, got {t_tree}.")
  for aval, t in zip(in_avals, t_leaves):
    got = core.get_aval(t)
    if got.shape != aval.shape or got.dtype != aval.dtype:
      raise ValueError("linearized function called on tangent values inconsistent with "
                       f"the original primal values: got tangent aval {got.str_short()} for "
                       f"primal aval {aval.str_short()}")
  outs_t = core.eval_jaxpr(jaxpr, consts, *t_leaves)
  return tree_util.tree_unflatten(out_tree, [_as_output(t) for t in outs_t[:n]])


@traceback_util.api_boundary
def vjp(fun, *primals, has_aux: bool = False):
  """``(fun(*primals), vjp_fun)`` where ``vjp_fun(ct)`` pulls a cotangent back to the inputs.

  Args:
    fun: a function of arrays (pytrees).
    *primals: the arguments.
    has_aux: `fun` returns ``(output, aux)``.

  Returns:
    ``(primals_out, vjp_fun)`` (plus aux); vjp_fun returns a tuple with one
    cotangent per primal.

  Mirrors `jax.vjp`.
  """
  leaves, in_tree, outs, linear, n, stores = _linearize_tree(fun, primals, has_aux)
  out_tree = stores["out_tree"]
  out_avals = tuple(core.get_aval(o) for o in outs[:n])
  aux_avals = tuple(core.get_aval(a).to_tangent_aval() for a in outs[n:])
  in_avals = tuple(core.get_aval(x).to_tangent_aval() for x in leaves)
  # As JAX's VJP object: the residuals that are inputs themselves are kept apart (`args_res`,
  # one pytree per argument, NotNeeded where unused), the others are `opaque_residuals`.
  leaf_index = {id(x): i for i, x in enumerate(leaves)}
  opaque, spec = [], []
  for c in linear.consts:
    if id(c) in leaf_index:
      spec.append((True, leaf_index[id(c)]))
    else:
      spec.append((False, len(opaque)))
      opaque.append(c)
  used = {i for is_arg, i in spec if is_arg}
  args_res = list(tree_util.tree_unflatten(
      in_tree, [x if i in used else NotNeeded() for i, x in enumerate(leaves)]))
  pullback = functools.partial(
      _vjp_pullback, linear.jaxpr, in_avals, out_avals, aux_avals, in_tree, out_tree,
      len(linear.consts), source_info.fun_sourceinfo(fun))
  vjp_fun = VJP((pullback, tuple(spec)), in_tree, out_tree, args_res, opaque)
  out = tree_util.tree_unflatten(out_tree, [_as_output(o) for o in outs[:n]])
  if has_aux:
    return out, vjp_fun, _aux_result(stores, outs[n:])
  return out, vjp_fun


class NotNeeded:
  """Stands in `VJP.args_res` for an input the backward pass does not use (mirrors JAX's
  ``api.NotNeeded``; a pytree with no leaves)."""
  __slots__ = ()

  def __repr__(self):
    return "NotNeeded()"


class GradValue:
  """`VJP.with_refs` argument: return this input's cotangent (mirrors ``jax.ad.GradValue``)."""
  __slots__ = ()

  def __eq__(self, other):
    return type(other) is GradValue

  __hash__ = object.__hash__


class DontWant:
  """`VJP.with_refs` argument: this input's cotangent is not wanted, so it is not computed
  (mirrors ``jax.ad.DontWant``)."""
  __slots__ = ()

  def __eq__(self, other):
    return type(other) is DontWant

  __hash__ = object.__hash__


class DidntWant:
  """`VJP.with_refs` result for an input given `DontWant` (mirrors ``jax.ad.DidntWant``; a
  pytree with no leaves)."""
  __slots__ = ()

  def __eq__(self, other):
    return type(other) is DidntWant

  __hash__ = object.__hash__


class GradRef:
  """`VJP.with_refs` result for an input given a Ref: its cotangent was added into the Ref
  (mirrors ``api.GradRef``; a pytree with no leaves)."""
  __slots__ = ()

  def __eq__(self, other):
    return type(other) is GradRef

  __hash__ = object.__hash__


for _cls in (NotNeeded, DidntWant, GradRef):
  tree_util.register_pytree_node(_cls, lambda x: ((), None), lambda _, __, c=_cls: c())


class VJP:
  """The function `vjp` returns: ``f_vjp(out_ct)`` pulls an output cotangent back to a tuple
  of input cotangents.

  Attributes:
    args_res: one pytree per primal argument, holding the inputs the backward pass reads
      (NotNeeded where it reads none); they may be replaced (by values of the same types)
      before calling, e.g. to pass them in again after dropping them.
    opaque_residuals: the other values the backward pass reads.
    in_tree, out_tree: the primals' and the outputs' pytree structures.

  A pytree (its leaves the residuals), so it passes in and out of jitted functions.
  Mirrors JAX's ``api.VJP``.
  """
  __slots__ = ("fun", "in_tree", "out_tree", "args_res", "opaque_residuals", "__weakref__")

  def __init__(self, fun, in_tree, out_tree, args_res, opaque_residuals):
    self.fun, self.in_tree, self.out_tree = fun, in_tree, out_tree
    self.args_res, self.opaque_residuals = args_res, opaque_residuals

  def _consts(self):
    _, spec = self.fun
    arg_leaves = tree_util.tree_leaves(self.args_res, is_leaf=lambda x: isinstance(x, NotNeeded))
    return [arg_leaves[i] if is_arg else self.opaque_residuals[i] for is_arg, i in spec]

  def __call__(self, *out_ct):
    pullback, _ = self.fun
    return pullback(*self._consts(), *out_ct)

  def with_refs(self, *maybe_ct_refs):
    """A function of the output cotangent that, per input leaf as `maybe_ct_refs` (one per
    primal argument) says: returns its cotangent (`GradValue`), adds it into a Ref and returns
    `GradRef()`, or does not compute it and returns `DidntWant()` (`DontWant`)."""
    from xjax._src.state import types as state_types
    is_ref = lambda x: isinstance(x, state_types.Ref)
    if maybe_ct_refs:
      wants, tree = tree_util.tree_flatten(maybe_ct_refs, is_leaf=is_ref)
      if tree != self.in_tree:
        raise TypeError(f"VJP.with_refs: expected one of GradValue(), DontWant() or a Ref per "
                        f"primal input leaf, of structure {self.in_tree}; got {tree}")
    else:
      wants = [GradValue()] * self.in_tree.num_leaves
    wanted = tuple(not isinstance(w, DontWant) for w in wants)
    pullback, _ = self.fun

    def call(out_ct):
      cts = tree_util.tree_leaves(
          pullback(*self._consts(), out_ct, wanted=wanted),
          is_leaf=lambda x: x is None)
      outs = []
      for w, ct in zip(wants, cts):
        if isinstance(w, DontWant):
          outs.append(DidntWant())
        elif is_ref(w):
          w[...] = w[...] + ct
          outs.append(GradRef())
        else:
          outs.append(ct)
      return tree_util.tree_unflatten(self.in_tree, outs)
    return call

  def __repr__(self):
    return f"VJP(in_tree={self.in_tree}, out_tree={self.out_tree})"


tree_util.register_pytree_node(
    VJP, lambda v: ((v.args_res, v.opaque_residuals), (v.fun, v.in_tree, v.out_tree)),
    lambda aux, children: VJP(*aux, *children))


def _vjp_pullback(jaxpr, in_avals, out_avals, aux_avals, in_tree, out_tree, n_consts, src,
                  *args, wanted=None):
  """The function `vjp` returns: ``args`` are the linear jaxpr's constants, then the
  cotangent; `src` names the differentiated function (``f at file:line``). With `wanted`
  (a bool per input leaf), only those inputs' cotangents are computed (None for the others)."""
  consts, cts = args[:n_consts], args[n_consts:]
  if len(cts) != 1:
    if not cts:
      raise TypeError("VJP.__call__() missing 1 required positional argument: 'out_ct'")
    raise TypeError(
        f"The function returned by `jax.vjp` applied to {src.split(' ')[0]} was called with "
        f"{len(cts)} arguments, but functions returned by `jax.vjp` must be called with a "
        "single argument corresponding to the single value returned by the function being "
        "differentiated (even if that returned value is a tuple or other container): call "
        "it with the tuple, `f_vjp((a, b))`, not `f_vjp(a, b)`.")
  (ct,) = cts
  ct_leaves, ct_tree = tree_util.tree_flatten(ct)
  if ct_tree != out_tree:
    raise ValueError(
        "unexpected tree structure.\n\nThe argument to a VJP function returned by `jax.vjp` "
        f"must match the pytree structure of the differentiated function {src}.\n\nBut the "
        f"tree structures differ: the output was {out_tree}, the argument is {ct_tree}.")
  for aval, c in zip(out_avals, ct_leaves):
    c_aval = core.get_aval(c)
    expected = aval.to_tangent_aval()
    # As JAX: the cotangent's shape and dtype are the output's tangent type's, except that
    # an output with float0 tangents (an integer or boolean output) takes any dtype.
    if c_aval.shape != expected.shape or (c_aval.dtype != expected.dtype
                                          and expected.dtype != dtypes.float0):
      raise ValueError(
          "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got "
          f"{c_aval.str_short()}, but expected {expected.str_short()} because the "
          f"corresponding output of the differentiated function had JAX type "
          f"{aval.str_short()}")
  # Outputs without tangents (float0) pass no cotangent back, whatever value was given.
  ct_leaves = [ad.Zero(a.to_tangent_aval()) if a.to_tangent_aval().dtype == dtypes.float0
               else c for a, c in zip(out_avals, ct_leaves)]
  undefined = [ad.UndefinedPrimal(a) for a in in_avals]
  aux_cts = [ad.Zero(a) for a in aux_avals]
  if wanted is None or all(wanted):
    cts = ad.backward_pass(jaxpr, consts, undefined, [*ct_leaves, *aux_cts])
  else:
    cts = _pruned_backward_pass(jaxpr, consts, undefined, [*ct_leaves, *aux_cts], wanted)
  cts = [None if wanted is not None and not w else
         _as_output(ad.instantiate_zeros(c)) if a.dtype != dtypes.float0
         else np.zeros(a.shape, dtypes.float0)
         for c, a, w in zip(cts, in_avals, wanted or [True] * len(in_avals))]
  return tree_util.tree_unflatten(in_tree, cts)


def _pruned_backward_pass(jaxpr, consts, undefined, cts, wanted):
  """The backward pass computing only the `wanted` inputs' cotangents (None for the others):
  traced, pruned of what only the others need, then evaluated."""
  zeros = [type(c) is ad.Zero for c in cts]
  given = [c for c, z in zip(cts, zeros) if not z]

  def flat(*args):
    it = iter(args[len(consts):])
    outs = ad.backward_pass(jaxpr, args[:len(consts)], undefined,
                            [c if z else next(it) for c, z in zip(cts, zeros)])
    return [ad.instantiate_zeros(o) for o, w in zip(outs, wanted) if w]

  closed = pe.trace_to_jaxpr(flat, [core.get_aval(x) for x in (*consts, *given)])
  closed, _ = pe.dce_closed_jaxpr(closed, [True] * len(closed.jaxpr.outvars), instantiate=True)
  outs = iter(core.eval_jaxpr(closed.jaxpr, closed.consts, *consts, *given))
  return [next(outs) if w else None for w in wanted]


def _check_input_dtype_grad(holomorphic: bool, allow_int: bool, x, name: str = "grad"):
  dtype = core.get_aval(x).dtype
  if holomorphic and not dtypes.issubdtype(dtype, np.complexfloating):
    raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype, "
                    f"but got {dtype.name}.")
  if (dtypes.issubdtype(dtype, np.integer) or dtype == np.bool_
      or dtypes.issubdtype(dtype, dtypes.extended)) and not allow_int:
    raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype that is a "
                    f"sub-dtype of np.inexact), but got {dtype.name}. If you want to use "
                    "Boolean- or integer-valued inputs, use vjp or set allow_int to True.")
  if not dtypes.issubdtype(dtype, np.inexact) and not (allow_int or dtype == dtypes.float0):
    raise TypeError(f"{name} requires numerical-valued inputs, but got {dtype.name}.")


def _check_scalar_output(x, holomorphic: bool):
  try:
    aval = core.get_aval(x)
  except TypeError:
    raise TypeError(f"Gradient only defined for scalar-output functions. Output was {x}.") from None
  if aval.shape != ():
    raise TypeError("Gradient only defined for scalar-output functions. Output had shape: "
                    f"{aval.shape}.")
  check_output_dtype_rev(aval.dtype, holomorphic, "grad")


def check_output_dtype_rev(dtype, holomorphic: bool, name: str):
  """JAX's errors for an output reverse mode (grad, jacrev) cannot differentiate."""
  if holomorphic:
    if not dtypes.issubdtype(dtype, np.complexfloating):
      raise TypeError(f"{name} with holomorphic=True requires outputs with complex dtype, "
                      f"but got {dtype.name}.")
  elif dtypes.issubdtype(dtype, np.complexfloating):
    raise TypeError(f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
                    f"np.floating), but got {dtype.name}. For holomorphic differentiation, pass "
                    "holomorphic=True. For differentiation of non-holomorphic functions "
                    "involving complex outputs, use jax.vjp directly.")
  elif not dtypes.issubdtype(dtype, np.floating):
    raise TypeError(f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
                    f"np.floating), but got {dtype.name}. For differentiation of functions "
                    "with integer outputs, use jax.vjp directly.")


def _argnums_tuple(argnums, n_args: int):
  single = isinstance(argnums, int)
  nums = (argnums,) if single else tuple(argnums)
  if not nums and not single:
    raise ValueError("argnums must be a non-empty int or sequence of ints, got ().")
  for i in nums:
    if not isinstance(i, int):
      raise TypeError(f"argnums must be an int or a tuple of ints, got {argnums!r}.")
  if any(i >= n_args or i < -n_args for i in nums):
    raise TypeError(f"differentiating with respect to argnums={argnums} requires at least "
                    f"{max(nums) + 1} positional arguments to be passed by the caller, but got "
                    f"only {n_args} positional arguments.")
  return single, tuple(i % n_args for i in nums)


def _with_args_at(fun, args, kwargs, nums):
  """`fun` as a function of the arguments at positions `nums` (the others fixed)."""
  def partial_fun(*dyn_args):
    full = list(args)
    for i, a in zip(nums, dyn_args):
      full[i] = a
    return fun(*full, **kwargs)
  return partial_fun


def _diff_args(fun, argnums, args, kwargs, check_leaf):
  """The arguments to differentiate: ``(single, dyn_args, partial_fun)``.

  `check_leaf` runs on each of their leaves (the input dtype checks);
  `partial_fun` is `fun` of the `dyn_args` alone.
  """
  single, nums = _argnums_tuple(argnums, len(args))
  dyn = tuple(args[i] for i in nums)
  for leaf in tree_util.tree_leaves(dyn):
    check_leaf(leaf)
  return single, dyn, _with_args_at(fun, args, kwargs, nums)


def value_and_grad(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False, reduce_axes=()):
  """A function returning ``(fun(*args), gradient of fun at args)``.

  Args:
    fun: a function with a real scalar output (complex with holomorphic=True).
    argnums: an int or tuple of ints: which positional arguments to
      differentiate with respect to.
    has_aux: `fun` returns ``(output, aux)``; the result is then
      ``((value, aux), grad)``.
    holomorphic: `fun` is holomorphic (complex inputs and output).
    allow_int: allow integer inputs (their gradients are float0 zeros).

  Returns:
    The wrapped function.

  Raises:
    TypeError: non-scalar or non-float outputs, integer inputs without
      allow_int, argnums out of range (with JAX's messages).

  Mirrors `jax.value_and_grad`.
  """
  if reduce_axes:
    raise NotImplementedError("reduce_axes argument to grad is deprecated")
  check_callable(fun)

  @traceback_util.api_boundary
  @wraps(fun)
  def value_and_grad_f(*args, **kwargs):
    single, dyn, partial_fun = _diff_args(
        fun, argnums, args, kwargs, lambda x: _check_input_dtype_grad(holomorphic, allow_int, x))

    if has_aux:
      ans, vjp_fun, aux = vjp(partial_fun, *dyn, has_aux=True)
    else:
      ans, vjp_fun = vjp(partial_fun, *dyn)
    _check_scalar_output(ans, holomorphic)
    ans_aval = core.get_aval(ans)
    one = convert_element_type(1, ans_aval.dtype, weak_type=ans_aval.weak_type)
    grads = vjp_fun(one)
    # A typed key array is a leaf in JAX: its gradient (allow_int) is float0 zeros of the
    # keys' shape, not a key array over float0 data.
    is_key = lambda x: isinstance(x, PRNGKeyArray)
    grads = tree_util.tree_map(lambda x: np.zeros(x.shape, dtypes.float0) if is_key(x) else x,
                               grads, is_leaf=is_key)
    g = grads[0] if single else tuple(grads)
    return ((ans, aux) if has_aux else ans), g

  return value_and_grad_f


def grad(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
         allow_int: bool = False, reduce_axes=()):
  """A function returning the gradient of scalar-valued `fun` at its arguments.

  See `value_and_grad` for the arguments and errors; with has_aux the result
  is ``(grad, aux)``.

  Mirrors `jax.grad`.
  """
  vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, reduce_axes)

  @traceback_util.api_boundary
  @wraps(fun)
  def grad_f(*args, **kwargs):
    value, g = vg(*args, **kwargs)
    return (g, value[1]) if has_aux else g

  return grad_f
