"""`composite`: a named function lowered as one `stablehlo.composite` op.

``composite[name, attributes, version, jaxpr] *args`` evaluates `jaxpr`; it
lowers to ``stablehlo.composite "name"`` whose decomposition is `jaxpr` as a
private function, so a backend may replace the whole op. The keyword
arguments of the call are static attributes. As in JAX, it has no JVP and
no batching rule.
"""
from __future__ import annotations

import functools

import numpy as np

from xjax._src import core
from xjax._src import stablehlo as hlo
from xjax._src import tree_util
from xjax._src.errors import UnexpectedTracerError
from xjax._src.api_util import flatten_fun_nokwargs
from xjax._src.interpreters import lowering
from xjax._src.interpreters import partial_eval as pe
from xjax._src.lax.control_flow.conditionals import abstractify


def composite(decomposition, name: str, version: int = 0):
  """Wraps `decomposition` so it lowers to one ``stablehlo.composite`` op named `name`.

  Args:
    decomposition: a function of arrays; its keyword arguments (Python
      scalars, strings, NumPy arrays) become the op's static attributes.
    name: the op's namespaced name (``"my_namespace.my_op"``).
    version: the op's version number.

  Returns:
    A function with `decomposition`'s signature.

  Mirrors `jax.lax.composite`.
  """
  @functools.wraps(decomposition)
  def wrapped(*args, **kwargs):
    if any(isinstance(v, core.Tracer) for v in kwargs.values()):
      raise UnexpectedTracerError(
          f"Found a JAX Tracer as an attribute in the decomposition for the composite op "
          f"'{name}'. {_CLOSURE_ADVICE}\n\nNote: If you are passing jax arrays as "
          "attributes, use numpy arrays instead.")
    leaves, in_tree = tree_util.tree_flatten(args)
    avals = [abstractify(x) for x in leaves]
    fun = functools.partial(decomposition, **kwargs)
    flat_fun, out_tree = flatten_fun_nokwargs(fun, in_tree)
    closed = pe.trace_to_jaxpr(flat_fun, avals)
    if any(isinstance(c, core.Tracer) for c in closed.consts):
      raise UnexpectedTracerError(
          f"Found a JAX Tracer as a constant in the decomposition for the composite op "
          f"'{name}'. {_CLOSURE_ADVICE}")
    # As in JAX, the decomposition's constants become its leading operands.
    jaxpr, consts = pe.convert_constvars_jaxpr(closed)
    out_tree = out_tree.val
    attributes = tuple((k, *tree_util.tree_flatten(v)) for k, v in kwargs.items())
    attributes = tuple((k, tuple(_HashableArray(x) if isinstance(x, np.ndarray) else x
                                 for x in ls), t) for k, ls, t in attributes)
    outs = composite_p.bind(*consts, *leaves, name=name, attributes=attributes,
                            version=version, jaxpr=jaxpr)
    return tree_util.tree_unflatten(out_tree, outs)
  return wrapped


class _HashableArray:
  """A NumPy attribute value held in the primitive's (hashable) params, as JAX's
  `HashableArray`: equal when the arrays are, hashed by shape, dtype and bytes."""
  __slots__ = ("val",)

  def __init__(self, val):
    self.val = val

  def __hash__(self):
    return hash((self.val.shape, self.val.dtype, self.val.tobytes()))

  def __eq__(self, other):
    return (isinstance(other, _HashableArray) and self.val.shape == other.val.shape
            and self.val.dtype == other.val.dtype and np.array_equal(self.val, other.val))

  def __repr__(self):
    return repr(self.val)


def _unwrapped(leaves):
  return [x.val if isinstance(x, _HashableArray) else x for x in leaves]


_CLOSURE_ADVICE = (
    "This means that the decomposition function closes over a value that is involved in a "
    "JAX transformation. Any values that aren't explicitly known at compile time must be "
    "explicitly passed as arguments to the composite.")


composite_p = core.Primitive("composite", multiple_results=True)


@composite_p.def_abstract_eval
def _composite_abstract_eval(*avals, name, attributes, version, jaxpr):
  return list(jaxpr.out_avals)


@composite_p.def_jvp
def _composite_jvp(primals, tangents, **params):
  raise ValueError("JVP rule for composite not implemented. You can use `jax.custom_jvp` to "
                   "add support. See "
                   "https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html")


@composite_p.def_partial_eval
def _composite_partial_eval(trace, args, unknowns, **params):
  # Opaque to partial evaluation (as in JAX): staged whole when any operand is unknown.
  return trace.stage(composite_p, args, params)


def _attr_text(value) -> str:
  """One composite attribute in MLIR syntax, as JAX writes it."""
  if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
    return hlo.element_type(np.dtype(value))
  if isinstance(value, str):
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
  if isinstance(value, (bool, np.bool_)):
    return "true" if value else "false"
  if isinstance(value, (int, np.integer)) and not isinstance(value, np.ndarray):
    dtype = np.dtype(type(value)) if isinstance(value, np.integer) else np.dtype(np.int64)
    return f"{int(value)} : {hlo.element_type(dtype)}"
  if isinstance(value, (float, np.floating)) and not isinstance(value, np.ndarray):
    dtype = np.dtype(type(value)) if isinstance(value, np.floating) else np.dtype(np.float64)
    return f"{float(value):.6e} : {hlo.element_type(dtype)}"
  value = np.asarray(value)
  ty = hlo.tensor_type(value.shape, value.dtype)
  return f"{hlo.dense_elements(value)} : {ty}"


def _function_name(module, name: str) -> str:
  """A fresh symbol for the decomposition, spelled as the composite's name where MLIR allows
  (dots included: ``@my.square``, as JAX names it)."""
  base = "".join(c if c.isalnum() or c in "_." else "_" for c in name) or "composite"
  if not (base[0].isalpha() or base[0] == "_"):
    base = "_" + base
  fname, i = base, 0
  while fname in module.used_names:
    i += 1
    fname = f"{base}_{i}"
  module.used_names.add(fname)
  return fname


@composite_p.def_lowering
def _composite_lowering(ctx, *args, name, attributes, version, jaxpr):
  fname = _function_name(ctx.module, name)
  ctx.module.functions.append(lowering._function_text(ctx.module, fname, jaxpr, public=False))
  ctx.module.function_names[("composite", fname)] = (fname, jaxpr)  # keep the jaxpr alive
  attrs = []
  for key, leaves, tree in sorted(attributes, key=lambda a: a[0]):
    value = tree_util.tree_unflatten(tree, _unwrapped(leaves))
    if value is not None:  # as in JAX, None-valued attributes are left out
      attrs.append(f"{key} = {_attr_text(value)}")
  text = f'name = "{name}", decomposition = @{fname}'
  if attrs:
    text = f"composite_attributes = {{{', '.join(attrs)}}}, " + text
  if version:
    text += f", version = {version} : i32"
  out_types = [hlo.aval_type(a) for a in ctx.avals_out]
  return ctx.op("stablehlo.composite", list(args), out_types, text)


@composite_p.def_batch
def _composite_batch(axis_data, args, dims, **params):
  raise NotImplementedError("Batching rule for 'composite' not implemented")


def _composite_pp(params):
  return {**params, "attributes": _Shown(params["attributes"])}


class _Shown:
  def __init__(self, attributes):
    self.attributes = attributes

  def __str__(self):
    items = ", ".join(f"({k!r}, {tuple(ls)!r}, {t})" for k, ls, t in self.attributes)
    return f"({items},)" if len(self.attributes) == 1 else f"({items})"


composite_p.def_pp_params(_composite_pp)
