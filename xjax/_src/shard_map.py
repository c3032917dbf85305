"""`shard_map`: a function applied to the shards of its arguments over a device mesh.

The body is traced once on per-device shapes (each `in_specs` entry divides
the dimensions it names by the product of the mesh axes named there), with
the manual mesh axes bound as named axes (`core.extend_axis_env`) so that
`lax.psum(x, 'x')` and the other collectives work inside it. The result is
one `shard_map` equation carrying the body as a jaxpr, with JAX 0.10.2's name
and params (``check_vma``, ``in_specs``, ``jaxpr``, ``mesh``,
``newly_manual_axes``, ``out_specs``).

* Abstract evaluation multiplies the body's output shapes back along
  `out_specs` (a dimension named ``'x'`` grows by the size of axis ``'x'``).
* Eagerly, the equation is compiled as one SPMD program over the mesh (a
  `jit` of the function, as JAX does) and run on arguments placed as
  `in_specs` say; results come back as Arrays sharded as `out_specs` say.
* Lowering emits Shardy's ``sdy.manual_computation`` inside an SPMD module
  over the mesh; while its body is emitted, ``ctx.module.axis_context`` names
  the manual axes, which the collectives' lowering rules read.
* JVP, partial evaluation (linearize), transposition and batching transform
  the body and bind a new `shard_map`; transposition follows JAX's
  ``check_vma=False`` rule (replicated cotangents are divided by the number of
  devices that hold them, and input cotangents summed over the axes their
  spec leaves out), which gives the same gradients for well-formed programs.

With ``check_vma=True`` (the default) the body's avals carry JAX's varying
manual axes (`aval.mat.varying`, printed ``{V:x}``; `xjax._src.vma`), and
the body's context mesh has its manual axes typed Manual; `pvary` is
inserted where operands' types differ (a cast that changes no value, which
transposes to the identity under the check_vma=False rule above). An inference over the traced body (`shard_map_vma`: collectives
that reduce over an axis make their result invariant along it; cond, while
and scan by fixpoint rules) checks the out_specs and gives residuals their
specs; always, it refuses control flow whose devices could run different
collectives (a predicate that varies between devices over branches or
iterations that communicate), which would deadlock XLA's collectives and
abort the process.
"""
from __future__ import annotations

import contextlib
import inspect
import math

import numpy as np

from xjax._src import api_util
from xjax._src import core
from xjax._src import dispatch
from xjax._src import dtypes
from xjax._src import executable_cache
from xjax._src import source_info
from xjax._src import stablehlo as hlo
from xjax._src import tree_util
from xjax._src import vma as vma_lib
from xjax._src.shard_map_vma import (
    _COLLECTIVES, _check_collectives_agree, _names_param, _varying_axes)
from xjax._src.array import Array
from xjax._src.config import config
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import lowering
from xjax._src.interpreters import partial_eval as pe
from xjax._src.lax import elementwise as ew
from xjax._src.lax import parallel
from xjax._src.lax import structural
from xjax._src.sharding import mesh as mesh_lib
from xjax._src.sharding import shardings
from xjax._src.sharding import spmd
from xjax._src.sharding.mesh import AbstractMesh, AxisType, Mesh
from xjax._src.sharding.partition_spec import PartitionSpec, axes_of

P = PartitionSpec
core.vma_rule_hook = vma_lib.make_hook(core)


class InferFromArgs:
  """The default of `in_specs`: take each argument's spec from its sharding."""

  def __repr__(self):
    return "jax.sharding.Infer"


Infer = InferFromArgs()


# ----------------------------------------------------------------------------
# The public function


def shard_map(f=None, /, *, out_specs, in_specs=Infer, mesh=None, axis_names=frozenset(),
              check_vma: bool = True):
  """Maps `f` over the shards of its arguments, one instance per device of `mesh`.

  Args:
    f: the per-device function. It takes the shards of the mapped arguments
      (arrays whose dimensions are divided as `in_specs` says) and returns
      shards of the outputs. Without `f`, returns a decorator.
    out_specs: a pytree prefix of f's output with `PartitionSpec` leaves: a
      dimension naming mesh axes is the concatenation of the devices' blocks
      along those axes; a mesh axis left out promises the output is the same
      on all devices along it.
    in_specs: a pytree prefix of the argument tuple with `PartitionSpec` leaves
      (None leaves pass their arguments through as static Python values). By
      default (`Infer`), taken from the arguments' shardings, which needs
      `Explicit` mesh axes.
    mesh: a `Mesh` or `AbstractMesh`; default the context mesh (`set_mesh`).
    axis_names: the set of mesh axes `f` is manual over (default: all). The
      other axes stay automatic (XLA partitions along them).
    check_vma: check that each output is replicated along the manual mesh
      axes its out_spec leaves out (as a psum over them makes it).

  Returns:
    A function taking the global arguments and returning the global outputs.

  Raises:
    TypeError: `f` is not callable; a spec is not a PartitionSpec; axis_names
      is not a set.
    ValueError: no mesh; specs naming non-manual axes; specs that are not
      pytree prefixes of the arguments/outputs; specs longer than the value's
      rank; dimensions not divisible by their mesh axes; an out_spec promising
      a replication the body does not establish (with check_vma).

  Mirrors `jax.shard_map`.
  """
  kwargs = dict(mesh=mesh, in_specs=in_specs, out_specs=out_specs, axis_names=axis_names,
                check_vma=check_vma)
  if f is None:
    return lambda g: _shard_map(g, **kwargs)
  return _shard_map(f, **kwargs)


def smap(f=None, /, *, in_axes=Infer, out_axes, axis_name):
  """Maps `f` over the shards of its arguments along the one mesh axis `axis_name`.

  A `shard_map` over the context mesh, manual over `axis_name` only (the other
  mesh axes stay as they are), with `check_vma=True`.

  Args:
    f: the per-shard function. Without `f`, returns a decorator.
    in_axes: an int, None, or a tuple (one entry per positional argument, a
      pytree prefix) of ints and Nones: the dimension of each argument split
      over `axis_name` (None: not split). By default (`Infer`), taken from the
      arguments' shardings, which needs `axis_name` to be an Explicit axis.
    out_axes: an int, None, or a pytree prefix of f's output with int/None
      leaves: the dimension of each output along which the shards are
      concatenated (None: the output is the same on every shard).
    axis_name: the mesh axis `f` is manual over.

  Returns:
    A function taking the global arguments and returning the global outputs.

  Raises:
    TypeError: `axis_name` is a list or tuple; in_axes/out_axes of other
      types; in_axes left to `Infer` for an axis that is not Explicit.
    ValueError: as `shard_map` (no context mesh, ...).

  Mirrors `jax.smap`.
  """
  kwargs = dict(in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
  if f is None:
    return lambda g: _smap(g, **kwargs)
  return _smap(f, **kwargs)


def _axes_to_spec(axis_name, axis) -> PartitionSpec:
  return P() if axis is None else P(*[None] * axis, axis_name)


def _smap(f, *, in_axes, out_axes, axis_name):
  if isinstance(axis_name, (list, tuple)):
    raise TypeError(f"smap axis_name should be a `str` or a `Hashable`, but got {axis_name}")
  if in_axes is not None and in_axes is not Infer and not isinstance(in_axes, (int, tuple)):
    raise TypeError(
        "smap in_axes must be an int, None, jax.sharding.Infer, or a tuple of entries "
        f"corresponding to the positional arguments passed to the function, but got {in_axes}.")
  if in_axes is not Infer and not all(isinstance(l, int) for l in tree_util.tree_leaves(in_axes)):
    raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or (nested) "
                    f"container with those types as leaves, but got {in_axes}.")
  if not all(isinstance(l, int) for l in tree_util.tree_leaves(out_axes)):
    raise TypeError("smap out_axes must be an int, None, or (nested) container with those "
                    f"types as leaves, but got {out_axes}.")
  to_spec = lambda axes: tree_util.tree_map(lambda a: _axes_to_spec(axis_name, a), axes,
                                            is_leaf=lambda x: x is None)
  in_specs = Infer if in_axes is Infer else to_spec(in_axes)
  return _shard_map(f, mesh=None, in_specs=in_specs, out_specs=to_spec(out_axes),
                    axis_names={axis_name}, check_vma=True, _smap=True)


def _shard_map(f, *, mesh, in_specs, out_specs, axis_names, check_vma, _smap=False):
  if not callable(f):
    raise TypeError("shard_map requires a callable for its first argument, "
                    f"but got {f} of type {type(f)}.")
  # Eager calls: (in_tree, avals, specs, mesh, trace context) -> traced body, as jit caches.
  traces = executable_cache.LRUCache("shard_map traces", 64)

  def wrapped(*args):
    the_mesh, names = _check_mesh_and_specs(mesh, axis_names, in_specs, out_specs, _smap)
    leaves_with_paths, in_tree = tree_util.tree_flatten_with_path(args)
    leaves = [x for _, x in leaves_with_paths]
    try:
      specs_flat = tree_util.broadcast_prefix(in_specs, args, is_leaf=lambda x: x is None)
    except ValueError:
      raise tree_util.prefix_errors(in_specs, args, is_leaf=lambda x: x is None)[0](
          "shard_map in_specs") from None
    if in_specs is Infer:
      specs_flat = [_inferred_spec(x, names) for x in leaves]
    dyn = [s is not None for s in specs_flat]
    avals = [api_util.shaped_abstractify(x) for x, d in zip(leaves, dyn) if d]
    dyn_specs = tuple(s for s in specs_flat if s is not None)
    _check_specs_vs_args(f, the_mesh, args, in_tree, in_specs, specs_flat, leaves)
    _check_explicit_inputs(the_mesh, names, specs_flat, leaves)
    newly_manual = frozenset(names) - frozenset(the_mesh.manual_axes)
    manual = newly_manual | frozenset(the_mesh.manual_axes)
    trace = lambda: _trace_body(f, the_mesh, manual, args, in_tree, leaves, dyn, dyn_specs,
                                avals, out_specs, check_vma)
    if all(dyn) and core.current_trace() is core.eval_trace:
      entry = traces.get_or_build(
          (in_tree, tuple(avals), dyn_specs, the_mesh, core.trace_context()), trace)
    else:
      entry = trace()
    body, out_tree, out_specs_flat = entry
    dyn_args = [x for x, d in zip(leaves, dyn) if d]
    outs = _bind_closed(body, dyn_args, dyn_specs, out_specs_flat, mesh=the_mesh,
                        check_vma=check_vma, newly_manual_axes=newly_manual)
    return tree_util.tree_unflatten(out_tree, outs)

  wrapped.__name__ = getattr(f, "__name__", "shard_map")
  wrapped.__qualname__ = getattr(f, "__qualname__", wrapped.__name__)
  wrapped.__doc__ = getattr(f, "__doc__", None)
  wrapped.__wrapped__ = f
  return wrapped


def _trace_body(f, mesh, manual, args, in_tree, leaves, dyn, in_specs, avals, out_specs,
                check_vma):
  """The body's closed jaxpr on per-device avals, its out_tree and flat out_specs."""
  store: dict = {}

  def flat_body(*dyn_args):
    it = iter(dyn_args)
    all_args = [next(it) if d else x for x, d in zip(leaves, dyn)]
    ans = f(*tree_util.tree_unflatten(in_tree, all_args))
    out_leaves_with_paths, out_tree = tree_util.tree_flatten_with_path(ans)
    try:
      specs = tree_util.broadcast_prefix(out_specs, ans, is_leaf=lambda x: x is None)
    except ValueError:
      raise tree_util.prefix_errors(out_specs, ans, is_leaf=lambda x: x is None)[0](
          "shard_map out_specs") from None
    store.update(out_tree=out_tree, specs=tuple(specs))
    return [x for _, x in out_leaves_with_paths]

  per_device = [_shard_aval(mesh, s, a, check_vma) for s, a in zip(in_specs, avals)]
  info = pe.DebugInfo("shard_map", source_info.fun_sourceinfo(f), None)
  with _axis_env(mesh, manual, check_vma):
    closed = pe.trace_to_jaxpr(flat_body, per_device, info)
  out_tree, specs = store["out_tree"], store["specs"]
  _check_out_ranks(f, out_tree, out_specs, specs, closed.out_avals)
  in_vma = [frozenset()] * len(closed.jaxpr.constvars) + [
      frozenset(n for e in s for n in axes_of(e)) & manual for s in in_specs]
  # Always: programs whose devices could run different collectives never reach XLA.
  vma = _check_collectives_agree(closed.jaxpr, in_vma, manual)
  if check_vma:
    _check_vma(f, mesh, manual, out_tree, out_specs, specs, vma)
  return _hoist_consts(closed), out_tree, specs


def _hoist_consts(closed: core.ClosedJaxpr) -> tuple[core.Jaxpr, list]:
  """The body as a jaxpr without constvars (they lead its invars), and the consts."""
  jaxpr = closed.jaxpr.replace(constvars=[], invars=[*closed.jaxpr.constvars,
                                                     *closed.jaxpr.invars])
  return jaxpr, list(closed.consts)


def _bind_closed(closed, args, in_specs, out_specs, **params):
  """Binds `shard_map` for a body (a ClosedJaxpr, or a `_hoist_consts` pair): its consts
  become leading replicated operands."""
  jaxpr, consts = _hoist_consts(closed) if isinstance(closed, core.ClosedJaxpr) else closed
  return shard_map_p.bind(*consts, *args, jaxpr=jaxpr,
                          in_specs=(P(),) * len(consts) + tuple(in_specs),
                          out_specs=tuple(out_specs), **params)


def _inferred_spec(x, manual) -> PartitionSpec:
  """An argument's spec from its NamedSharding, restricted to the manual axes (Infer)."""
  sharding = getattr(x, "_sharding", None)
  if sharding is None and isinstance(x, core.Tracer):  # a traced value split over Explicit axes
    sharding = getattr(x.aval, "sharding", None)
  spec = getattr(sharding, "spec", None)
  if spec is None:
    return P()
  out = []
  for entry in spec:
    names = tuple(n for n in axes_of(entry) if n in manual)
    out.append(None if not names else names[0] if len(names) == 1 else names)
  return P(*out)


# ----------------------------------------------------------------------------
# Checks and JAX's error messages


def _check_mesh_and_specs(mesh, axis_names, in_specs, out_specs, _smap=False):
  """The mesh to use and the manual axis names, after JAX's checks."""
  ctx_mesh = mesh_lib.get_abstract_mesh()
  if mesh is None:
    mesh = mesh_lib.get_concrete_mesh()
    if mesh is None:
      raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter "
                       "into a mesh context")
  elif (isinstance(mesh, (Mesh, AbstractMesh)) and not ctx_mesh.empty
        and mesh.abstract_mesh != ctx_mesh):
    raise ValueError(f"The context mesh {ctx_mesh} should match the mesh passed to shard_map "
                     f"{mesh}")
  if not isinstance(mesh, (Mesh, AbstractMesh)):
    raise TypeError("shard_map requires a `jax.sharding.Mesh` or a "
                    "`jax.sharding.AbstractMesh` instance for its second argument, but got "
                    f"{mesh} of type {type(mesh)}.")
  if mesh.empty:
    raise ValueError(f"shard_map requires a non-empty mesh. Got {mesh}")
  if not isinstance(axis_names, (frozenset, set)):
    raise TypeError("`axis_names` argument of shard_map should be of type `frozenset` or "
                    f"`set`. Got type: {type(axis_names)}")
  all_names = frozenset(mesh.axis_names)
  axis_names = frozenset(axis_names) or all_names
  if not axis_names <= all_names:
    raise ValueError(f"jax.shard_map requires axis_names={axis_names} to be a subset of "
                     f"mesh.axis_names={all_names}")
  types = dict(zip(mesh.axis_names, mesh.axis_types))
  if in_specs is Infer and not all(types[a] is AxisType.Explicit for a in axis_names):
    kinds = ", ".join(f"AxisType.{types[a].name}" for a in axis_names)
    if _smap:
      raise TypeError(f"in_axes was not specified when axis_name={axis_names} was of type "
                      f"{kinds}")
    raise TypeError("shard_map in_specs argument must be a pytree of "
                    "`jax.sharding.PartitionSpec` instances, but it was `None` when "
                    f"axis_names={axis_names} are of type {kinds}")
  if in_specs is not Infer and in_specs is not None:  # (None: every argument is static)
    _check_specs("in", in_specs, axis_names)
  _check_specs("out", out_specs, axis_names)
  return mesh, axis_names


def _check_specs(prefix: str, specs, manual) -> None:
  if prefix == "in" and specs is None:
    raise TypeError(
        "shard_map in_specs argument must be a pytree of `jax.sharding.PartitionSpec` "
        "instances, but it was None.\nInstead of `in_specs=None`, did you mean "
        "`in_specs=P()`, where `P = jax.sharding.PartitionSpec`?")
  pairs, _ = tree_util.tree_flatten_with_path(specs)
  bad_types = [f"  {prefix}_specs{tree_util.keystr(k)} is {x} of type {type(x).__name__}, "
               for k, x in pairs if not isinstance(x, PartitionSpec)]
  if bad_types:
    raise TypeError(f"shard_map {prefix}_specs argument must be a pytree of "
                    "`jax.sharding.PartitionSpec` instances, but:\n\n" + "\n\n".join(bad_types)
                    + f"\n\nCheck the {prefix}_specs values passed to shard_map.")
  bad_names = [f"  {prefix}_specs{tree_util.keystr(k)} refers to {n!r}"
               for k, p in pairs for e in p for n in axes_of(e) if n not in manual]
  if bad_names:
    raise ValueError(f"shard_map {prefix}_specs argument must refer to an axis marked as "
                     f"manual ({manual}), but:\n\n" + "\n\n".join(bad_names)
                     + f"\n\nCheck the {prefix}_specs values passed to shard_map.")


def _spec_names(spec) -> dict:
  """Dimension -> the mesh axes it is split over."""
  return {d: axes_of(e) for d, e in enumerate(spec) if axes_of(e)}


def _arg_binding(f, in_tree, key) -> str:
  """JAX's ", where args[i] is bound to f's parameter 'x'," for an argument path."""
  try:
    sig = inspect.signature(f)
    sig.bind(*tree_util.tree_unflatten(in_tree, [False] * in_tree.num_leaves))
  except (TypeError, ValueError):
    return ""
  name = api_util.fun_name(f)
  params = [p for p in sig.parameters.values()
            if p.kind not in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_KEYWORD)]
  idx = key[0].idx
  if idx >= len(params) or params[idx].kind == inspect.Parameter.VAR_POSITIONAL:
    return (f", where args[{idx}] is the index {idx - len(params) + 1} component of {name}'s "
            f"varargs parameter '{params[-1].name}',")
  return f", where args[{idx}] is bound to {name}'s parameter '{params[idx]}',"


def _spec_paths(specs, full_tree) -> list:
  """Per leaf of `full_tree`: the key path of the spec covering it."""
  pairs, treedef = tree_util.tree_flatten_with_path(specs, is_leaf=lambda x: x is None)
  index_tree = tree_util.tree_unflatten(treedef, list(range(len(pairs))))
  return [pairs[i][0] for i in tree_util.broadcast_prefix(index_tree, full_tree)]


def _rank_error(prefix: str, f, fails, tail: str = "") -> ValueError:
  """JAX's message for specs longer than the values' ranks; `fails`: (spec_key, spec, text, aval)."""
  name = api_util.fun_name(f)
  msgs = [f"* {prefix}_specs{tree_util.keystr(sk)} is {spec} which has length {len(spec)}, but "
          f"{where} has shape {aval.update(vma=frozenset()).str_short()}, which has rank {len(aval.shape)} (and "
          f"{len(aval.shape)} < {len(spec)})" for sk, spec, where, aval in fails]
  if len(msgs) == 1:
    msgs = [msgs[0][2:]]
  msg = (f"shard_map applied to the function '{name}' was given an {prefix}_specs entry which "
         f"is too long to be compatible with the corresponding {prefix}put value from the "
         "function:\n\n" + "\n\n".join(msgs) + "\n\n"
         f"Entries in {prefix}_specs must be of length no greater than the number of axes in "
         f"the corresponding {prefix}put value.\n\n"
         f"Either revise the spec to be shorter, or modify '{name}' so that its {prefix}puts "
         "have sufficient rank.")
  if any(not aval.shape for *_, aval in fails):
    msg += (f"\n\nFor scalar values (rank 0), consider using an {prefix}_specs entry of `P()`, "
            "where `P = jax.sharding.PartitionSpec`." + tail)
  return ValueError(msg)


def _check_specs_vs_args(f, mesh, args, in_tree, in_specs, specs_flat, leaves) -> None:
  paths = [p for p, _ in tree_util.tree_flatten_with_path(args)[0]]
  spec_paths = (_spec_paths(in_specs, args) if in_specs is not Infer
                else [()] * len(leaves))
  rows = [(sk, s, k, api_util.shaped_abstractify(x))
          for sk, s, k, x in zip(spec_paths, specs_flat, paths, leaves) if s is not None]
  fails = [(sk, s, f"the passed args{tree_util.keystr(k)}{_arg_binding(f, in_tree, k)}", a)
           for sk, s, k, a in rows if len(s) > len(a.shape)]
  if fails:
    raise _rank_error("in", f, fails)
  msgs = []
  for sk, s, k, a in rows:
    for d, names in _spec_names(s).items():
      size = math.prod(mesh.shape[n] for n in names)
      if a.shape[d] % size:
        axis = f"axes {names}" if len(names) > 1 else f"axis '{names[0]}'"
        total = "total " if len(names) > 1 else ""
        msgs.append(
            f"* the passed args{tree_util.keystr(k)} of shape {a.str_short()}"
            f"{_arg_binding(f, in_tree, k)} corresponds to in_specs{tree_util.keystr(sk)} of "
            f"value {s}, which maps array axis {d} (of size {a.shape[d]}) to mesh {axis} (of "
            f"{total}size {size}), but {size} does not evenly divide {a.shape[d]}")
  if msgs:
    if len(msgs) == 1:
      msgs = [msgs[0][2:]]
    name = getattr(f, "__name__", str(f))
    raise ValueError(
        f"shard_map applied to the function '{name}' was given argument arrays with axis sizes "
        "that are not evenly divisible by the corresponding mesh axis sizes:\n\n"
        f"The mesh given has shape {tuple(mesh.axis_sizes)} with corresponding axis names "
        f"{mesh.axis_names}.\n\n" + "\n\n".join(msgs) + "\n\n"
        "Array arguments' axis sizes must be evenly divisible by the mesh axis or axes "
        "indicated by the corresponding elements of the argument's in_specs entry. Consider "
        "checking that in_specs are correct, and if so consider changing the mesh axis sizes "
        f"or else padding the input and adapting '{name}' appropriately.")


def _check_explicit_inputs(mesh, manual, specs_flat, leaves) -> None:
  """Over a mesh whose axes are all Explicit and all manual here, each argument typed with a
  sharding (an Array or tracer over Explicit axes) must already be laid out as its in_spec
  says (JAX's check: shard_map does not reshard). Unlike JAX, an argument without a
  sharding (a host value, an uncommitted Array) is accepted and split as in_specs say."""
  types = dict(zip(mesh.axis_names, mesh.axis_types))
  if frozenset(manual) != frozenset(mesh.axis_names) or not all(
      types[a] is AxisType.Explicit for a in manual):
    return
  for x, spec in zip(leaves, specs_flat):
    if spec is None:
      continue
    aval = api_util.shaped_abstractify(x)
    sharding = getattr(aval, "sharding", None)
    if sharding is None:
      continue
    spec = spec._normalized_spec_for_aval(len(aval.shape))
    arg_spec = sharding.spec
    if arg_spec != spec:
      raise ValueError(
          f"in_specs passed to shard_map: {spec} does not match the specs of the input: "
          f"{arg_spec} for arg: {aval.str_short()}. `in_specs` is an optional argument so you "
          "can omit specifying it and shard_map will infer the in_specs from the arguments. "
          "If you want to reshard your inputs, you can use `jax.reshard` on the arguments "
          "and then pass those args to shard_map.")


def _check_out_ranks(f, out_tree, out_specs, specs, out_avals) -> None:
  full = tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves)
  spec_paths = _spec_paths(out_specs, full)
  paths = [p for p, _ in tree_util.tree_flatten_with_path(full)[0]]
  name = api_util.fun_name(f)
  fails = [(sk, s, f"{name}(*args){tree_util.keystr(k)}", a)
           for sk, s, k, a in zip(spec_paths, specs, paths, out_avals)
           if s is not None and len(s) > len(a.shape)]
  if fails:
    raise _rank_error("out", f, fails, " In particular, for rank 0 outputs which are not "
                      "constant over the mesh, add at least one (singleton) axis to them so "
                      "that they can be concatenated using out_specs.")


def _check_vma(f, mesh, manual, out_tree, out_specs, specs, vma) -> None:
  full = tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves)
  spec_paths = _spec_paths(out_specs, full)
  order = lambda names: ",".join(n for n in mesh.axis_names if n in names)
  msgs = []
  for sk, spec, varying in zip(spec_paths, specs, vma):
    if spec is None:
      continue
    named = frozenset(n for e in spec for n in axes_of(e))
    if not (varying - named) & manual:
      continue
    unmentioned = [n for n in mesh.axis_names if n not in named]
    where = f"out_specs{tree_util.keystr(sk)} is {spec} which implies that the corresponding "
    if len(unmentioned) > 1:
      msgs.append(f"* {where}output value is only varying across mesh axes {{{order(named)}}} "
                  f"and not {{{order([n for n in unmentioned if n in varying])}}}, but it was "
                  f"inferred to be possibly varying over {{{order(varying)}}}")
    else:
      msgs.append(f"* {where}output value is replicated across mesh axis '{unmentioned[0]}', "
                  "but could not infer replication over any axes")
  if not msgs:
    return
  if len(msgs) == 1:
    msgs = [msgs[0][2:]]
  name = getattr(f, "__name__", str(f))
  raise ValueError(
      f"shard_map applied to the function '{name}' was given out_specs which require "
      "replication which can't be statically inferred given the mesh:\n\n"
      f"The mesh given has shape {tuple(mesh.axis_sizes)} with corresponding axis names "
      f"{mesh.axis_names}.\n\n" + "\n\n".join(msgs) + "\n\n"
      "Check if these output values are meant to be replicated over those mesh axes. If not, "
      "consider revising the corresponding out_specs entries. If so, consider disabling the "
      "check by passing the check_vma=False argument to `jax.shard_map`.")


# ----------------------------------------------------------------------------
# Per-device and global avals, and the axis environment of a body


def _shard_aval(mesh, spec, aval, check_vma=False):
  """The per-device aval of a global `aval` split as `spec` says; with `check_vma` it
  varies along the axes `spec` names (besides those it varied along already)."""
  names = _spec_names(spec)
  shape = tuple(d // math.prod(mesh.shape[n] for n in names.get(i, ()))
                for i, d in enumerate(aval.shape))
  vma = getattr(aval, "vma", frozenset())
  if check_vma:
    vma = vma | frozenset(n for ns in names.values() for n in ns)
  return aval.update(shape=shape, vma=vma)


def _unshard_aval(mesh, spec, aval, newly_manual=frozenset()):
  """The global aval of per-device blocks `aval` concatenated as `spec` says (varying
  only along the manual axes of an enclosing shard_map)."""
  names = _spec_names(spec)
  shape = tuple(d * math.prod(mesh.shape[n] for n in names.get(i, ()))
                for i, d in enumerate(aval.shape))
  vma = getattr(aval, "vma", frozenset())
  return aval.update(shape=shape, vma=vma - frozenset(newly_manual) if vma else vma)


def _all_manual(mesh, newly_manual_axes) -> frozenset:
  return frozenset(newly_manual_axes) | frozenset(mesh.manual_axes)


@contextlib.contextmanager
def _axis_env(mesh, manual, check_vma=False, manual_mesh=True):
  """Binds the manual mesh axes as named axes with their sizes (for the collectives), turns
  the vma rules on or off (`check_vma`), and makes the context mesh's manual axes Manual."""
  with contextlib.ExitStack() as stack:
    for name in mesh.axis_names:
      if name in manual:
        stack.enter_context(core.extend_axis_env(name, mesh.shape[name]))
    stack.enter_context(vma_lib.checking(core, check_vma))
    manual_mesh = _manual_context_mesh(mesh, manual) if manual_mesh else None
    if manual_mesh is not None:
      stack.enter_context(mesh_lib.use_mesh(manual_mesh))
    yield


def _manual_context_mesh(mesh, manual):
  """The concrete context mesh inside a body: the context's (else `mesh` if concrete) with
  the `manual` axes Manual; None when there is no concrete mesh of `mesh`'s shape."""
  concrete = mesh_lib.get_concrete_mesh()
  if concrete is None or concrete.shape_tuple != mesh.shape_tuple:
    concrete = mesh if isinstance(mesh, Mesh) else None
  if concrete is None:
    return None
  return concrete.update_axis_types({n: AxisType.Manual for n in manual})


# ----------------------------------------------------------------------------
# shard_map_p


shard_map_p = core.Primitive("shard_map", multiple_results=True)


@shard_map_p.def_abstract_eval
def _shard_map_abstract_eval(*avals, jaxpr, mesh, in_specs, out_specs, check_vma,
                             newly_manual_axes):
  assert len(avals) == len(jaxpr.invars) == len(in_specs), ("internal: shard_map arity",
                                                             len(avals), len(in_specs))
  assert len(jaxpr.outvars) == len(out_specs), "internal: shard_map out_specs arity"
  return [_unshard_aval(mesh, s, v.aval, newly_manual_axes)
          for s, v in zip(out_specs, jaxpr.outvars)]


def _concrete_mesh(mesh, args) -> Mesh:
  """The devices an eager shard_map runs on: an AbstractMesh takes the context mesh's, and
  then (as JAX) the mesh of any argument with a NamedSharding over a mesh with axes."""
  if isinstance(mesh, Mesh):
    return mesh
  concrete = mesh_lib.get_concrete_mesh()
  if concrete is not None and not concrete.empty:
    mesh = concrete
  for a in args:
    m = getattr(getattr(a, "_sharding", None), "mesh", None)
    if isinstance(m, Mesh) and m.axis_names:
      if m.shape_tuple != mesh.shape_tuple:
        raise ValueError(f"Mesh shape of the input {m.shape_tuple} does not match the mesh "
                         f"shape passed to shard_map  {mesh.shape_tuple} for shape "
                         f"{core.get_aval(a).str_short()}")
      mesh = m
  if not isinstance(mesh, Mesh):
    raise ValueError("Please pass `jax.Array`s with a `NamedSharding` as input to `shard_map` "
                     "when passing `AbstractMesh` to the mesh argument.")
  return mesh


@shard_map_p.def_impl
def _shard_map_impl(*args, jaxpr, mesh, in_specs, out_specs, check_vma, newly_manual_axes):
  # As JAX: an eager shard_map is a jit of it, one SPMD program over the mesh, cached by
  # what the body computes (a new lambda each call compiles once).
  concrete = _concrete_mesh(mesh, args)
  avals = tuple(a.aval if type(a) is Array else core.get_aval(a) for a in args)
  params = dict(jaxpr=jaxpr, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                check_vma=check_vma, newly_manual_axes=newly_manual_axes)
  key = ("shard_map", dispatch.params_key(shard_map_p, params), avals, concrete,
         config.context_id())

  def build():
    closed = dispatch._one_eqn_jaxpr(shard_map_p, avals, params)
    return spmd.compile_spmd(
        closed, concrete, [shardings.NamedSharding(concrete, s) for s in in_specs],
        [shardings.NamedSharding(concrete, s) for s in out_specs], "shard_map")
  return executable_cache.executables.get_or_build(key, build).run(list(args))


# JVP: the body's JVP, with each nonzero tangent split like its primal.


def _shard_map_jvp(primals, tangents, *, jaxpr, mesh, in_specs, out_specs, check_vma,
                   newly_manual_axes):
  nonzeros = [type(t) is not ad.Zero for t in tangents]
  with _axis_env(mesh, _all_manual(mesh, newly_manual_axes), check_vma):
    jvp = ad.jvp_jaxpr(core.ClosedJaxpr(jaxpr, ()), nonzeros)
  nz_tangents = [t for t in tangents if type(t) is not ad.Zero]
  tangent_specs = [s for s, nz in zip(in_specs, nonzeros) if nz]
  outs = _bind_closed(jvp, [*primals, *nz_tangents], (*in_specs, *tangent_specs),
                      (*out_specs, *out_specs), mesh=mesh, check_vma=check_vma,
                      newly_manual_axes=newly_manual_axes)
  n = len(out_specs)
  return outs[:n], outs[n:]


shard_map_p.def_jvp(_shard_map_jvp)


# Partial evaluation: a known shard_map computing the known outputs and the
# residuals, and a staged one for the rest. Each device's residuals are
# concatenated along a leading axis split over all manual axes (scalars get a
# size-1 axis first), as JAX does.


def _residual_spec(mesh, manual) -> PartitionSpec:
  """A residual varying along the `manual` axes: split over them (concatenated per device)."""
  names = tuple(n for n in mesh.axis_names if n in manual)
  if not names:
    return P()
  return P(names if len(names) != 1 else names[0])


def _with_scalar_residuals_promoted(known: core.ClosedJaxpr, n_known: int, manual, mesh,
                                    check_vma):
  """`known` with its rank-0 residual outputs given a leading axis of size 1."""
  res_avals = known.out_avals[n_known:]
  if all(a.shape for a in res_avals):
    return known

  def fun(*args):
    outs = core.eval_jaxpr(known.jaxpr, known.consts, *args)
    return [*outs[:n_known], *(o if a.shape else structural.broadcast_in_dim(o, (1,), ())
                               for o, a in zip(outs[n_known:], res_avals))]

  with _axis_env(mesh, manual, check_vma):
    return pe.trace_to_jaxpr(fun, known.in_avals)


def _with_scalar_residuals_demoted(unknown: core.ClosedJaxpr, res_avals, promoted, manual,
                                   mesh, check_vma):
  """`unknown` taking its `promoted` (rank-0) residuals with a leading axis of size 1."""
  if not any(promoted):
    return unknown
  n = len(res_avals)

  def fun(*args):
    res = [structural.reshape(r, ()) if p else r for r, p in zip(args[:n], promoted)]
    return core.eval_jaxpr(unknown.jaxpr, unknown.consts, *res, *args[n:])

  in_avals = [a.update(shape=(1,)) if p else a for a, p in zip(res_avals, promoted)] + list(
      unknown.in_avals[n:])
  with _axis_env(mesh, manual, check_vma):
    return pe.trace_to_jaxpr(fun, in_avals)


def _residual_forwarding(known: core.ClosedJaxpr, n_known: int):
  """Per residual of `known`, the index of the known input it is (else None) and of the known
  output it is (else None); and `known` without those residual outputs."""
  jaxpr = known.jaxpr
  inputs = {v: i for i, v in enumerate(jaxpr.invars)}
  outputs = {}
  for j, v in enumerate(jaxpr.outvars[:n_known]):
    if type(v) is not core.Literal:
      outputs.setdefault(v, j)
  in_fwd, out_fwd, kept = [], [], list(jaxpr.outvars[:n_known])
  for v in jaxpr.outvars[n_known:]:
    i = inputs.get(v) if type(v) is not core.Literal else None
    j = outputs.get(v) if type(v) is not core.Literal and i is None else None
    in_fwd.append(i)
    out_fwd.append(j)
    if i is None and j is None:
      kept.append(v)
  if len(kept) == len(jaxpr.outvars):
    return in_fwd, out_fwd, known
  return in_fwd, out_fwd, core.ClosedJaxpr(jaxpr.replace(outvars=kept), known.consts)


def _shard_map_partial_eval(trace, args, unknowns, *, jaxpr, mesh, in_specs, out_specs,
                            check_vma, newly_manual_axes):
  manual = _all_manual(mesh, newly_manual_axes)
  with _axis_env(mesh, manual, check_vma):
    known, unknown, out_unknowns, num_res = pe.partial_eval_jaxpr(
        core.ClosedJaxpr(jaxpr, ()), unknowns)
  n_known = len(known.out_avals) - num_res
  res_avals = known.out_avals[n_known:]
  # As JAX, with check_vma a residual is split only over the axes along which it may vary
  # (the varying-axes inference over the known body; every manual axis otherwise).
  if check_vma:
    outer = frozenset(mesh.manual_axes)
    known_in_vma = [frozenset(n for e in s for n in axes_of(e)) | outer
                    for s, u in zip(in_specs, unknowns) if not u]
    res_vma = _varying_axes(known.jaxpr, [outer] * len(known.jaxpr.constvars) + known_in_vma)
    res_vma = [v & manual for v in res_vma[n_known:]]
  else:
    res_vma = [manual] * num_res
  # As JAX: a residual that is a known input or a known output is passed as that value
  # (with its spec) instead of being a second output of the known shard_map.
  in_fwd, out_fwd, known = _residual_forwarding(known, n_known)
  fwd = [i is not None or j is not None for i, j in zip(in_fwd, out_fwd)]
  known = _with_scalar_residuals_promoted(known, n_known, manual, mesh, check_vma)
  promoted = [not f and not a.shape for f, a in zip(fwd, res_avals)]
  unknown = _with_scalar_residuals_demoted(unknown, res_avals, promoted, manual, mesh,
                                           check_vma)
  known_in_specs = [s for s, u in zip(in_specs, unknowns) if not u]
  known_out_specs = [s for s, u in zip(out_specs, out_unknowns) if not u]
  params = dict(mesh=mesh, check_vma=check_vma, newly_manual_axes=newly_manual_axes)
  known_args = [a for a, u in zip(args, unknowns) if not u]
  new_res_specs = [_residual_spec(mesh, v) for v, f in zip(res_vma, fwd) if not f]
  with core.set_current_trace(trace.parent_trace):
    known_outs = _bind_closed(known, known_args, known_in_specs,
                              (*known_out_specs, *new_res_specs), **params)
  new_res, new_specs = iter(known_outs[n_known:]), iter(new_res_specs)
  residuals, res_specs = [], []
  for i, j in zip(in_fwd, out_fwd):
    if i is not None:
      residuals.append(known_args[i])
      res_specs.append(known_in_specs[i])
    elif j is not None:
      residuals.append(known_outs[j])
      res_specs.append(known_out_specs[j])
    else:
      residuals.append(next(new_res))
      res_specs.append(next(new_specs))
  unknown_args = [a for a, u in zip(args, unknowns) if u]
  unknown_in_specs = [s for s, u in zip(in_specs, unknowns) if u]
  unknown_out_specs = tuple(s for s, u in zip(out_specs, out_unknowns) if u)
  staged = unknown.jaxpr.replace(constvars=[], invars=[*unknown.jaxpr.constvars,
                                                       *unknown.jaxpr.invars])
  unknown_outs = trace.stage(shard_map_p, [*unknown.consts, *residuals, *unknown_args], dict(
      params, jaxpr=staged, out_specs=unknown_out_specs,
      in_specs=(P(),) * len(unknown.consts) + tuple(res_specs) + tuple(unknown_in_specs)))
  known_iter, unknown_iter = iter(known_outs[:n_known]), iter(unknown_outs)
  return [next(unknown_iter) if u else next(known_iter) for u in out_unknowns]


shard_map_p.def_partial_eval(_shard_map_partial_eval)


def _shard_map_dce(used_outputs, eqn):
  """Drops the outputs nothing uses, the body's work for them, and the inputs left unread."""
  if not any(used_outputs) and not core.is_live_regardless(eqn):
    return [False] * len(eqn.invars), None
  p = eqn.params
  body, used_inputs = pe.dce_jaxpr(p["jaxpr"], used_outputs)
  keep = lambda xs, used: [x for x, u in zip(xs, used) if u]
  new_eqn = eqn.replace(
      invars=keep(eqn.invars, used_inputs), outvars=keep(eqn.outvars, used_outputs),
      params=dict(p, jaxpr=body, in_specs=tuple(keep(p["in_specs"], used_inputs)),
                  out_specs=tuple(keep(p["out_specs"], used_outputs))))
  return used_inputs, new_eqn


shard_map_p.def_dce(_shard_map_dce)


# Transposition (JAX's check_vma=False rule).


def _unmentioned(mesh, spec, manual) -> tuple:
  """The manual axes `spec` does not name: along them the value is replicated."""
  named = {n for e in spec for n in axes_of(e)}
  return tuple(n for n in mesh.axis_names if n in manual and n not in named)


def _shard_map_transpose(cts, *args, jaxpr, mesh, in_specs, out_specs, check_vma,
                         newly_manual_axes):
  manual = _all_manual(mesh, newly_manual_axes)
  undefined = [ad.is_undefined_primal(a) for a in args]
  nz_cts = []
  for ct, s in zip(cts, out_specs):
    if type(ct) is ad.Zero:
      continue
    # A replicated output's cotangent reaches every device holding a copy: share it out.
    copies = math.prod(mesh.shape[n] for n in _unmentioned(mesh, s, manual))
    dtype = core.get_aval(ct).dtype
    if copies != 1 and dtype.names is None:  # not float0
      ct = ew.div(ct, np.asarray(copies, dtype))
    nz_cts.append((ct, s))
  defined = [(a, s) for a, s, u in zip(args, in_specs, undefined) if not u]

  def body(*inputs):
    ct_iter, def_iter = iter(inputs[:len(nz_cts)]), iter(inputs[len(nz_cts):])
    body_cts = [ad.Zero(v.aval.to_tangent_aval()) if type(ct) is ad.Zero else next(ct_iter)
                for ct, v in zip(cts, jaxpr.outvars)]
    primals = [ad.UndefinedPrimal(v.aval) if u else next(def_iter)
               for v, u in zip(jaxpr.invars, undefined)]
    in_cts = ad.backward_pass(jaxpr, (), primals, body_cts)
    outs = []
    for ct, v, s, u in zip(in_cts, jaxpr.invars, in_specs, undefined):
      if not u:
        continue
      if type(ct) is ad.Zero:
        outs.append(ad.zeros_like_aval(v.aval.to_tangent_aval()))
        continue
      # An input replicated along some axes gathers the cotangents of all its copies.
      axes = _unmentioned(mesh, s, manual)
      float0 = core.get_aval(ct).dtype.names is not None
      outs.append(parallel.psum(ct, axes) if axes and not float0 else ct)
    return outs

  in_avals = ([_shard_aval(mesh, s, core.get_aval(ct), check_vma) for ct, s in nz_cts]
              + [_shard_aval(mesh, s, core.get_aval(a), check_vma) for a, s in defined])
  with _axis_env(mesh, manual, check_vma):
    closed = pe.trace_to_jaxpr(body, in_avals)
  outs = iter(_bind_closed(
      closed, [ct for ct, _ in nz_cts] + [a for a, _ in defined],
      [s for _, s in nz_cts] + [s for _, s in defined],
      [s for s, u in zip(in_specs, undefined) if u], mesh=mesh, check_vma=check_vma,
      newly_manual_axes=newly_manual_axes))
  return [next(outs) if u else None for u in undefined]


shard_map_p.def_transpose(_shard_map_transpose)


# Batching: the batch axis is an unsplit dimension of every shard.


def _shard_map_batch(axis_data, args, dims, *, jaxpr, mesh, in_specs, out_specs, check_vma,
                     newly_manual_axes):
  # The batch dimension is split over vmap's spmd_axis_name (each shard then batches
  # its part of it), else unsplit.
  spmd_name = axis_data.spmd_name
  inner_axis_data = axis_data

  def batched_specs(specs, dims, what):
    if spmd_name is not None and set(spmd_name) & {n for s in specs for e in s
                                                   for n in axes_of(e)}:
      raise ValueError(f"vmap spmd_axis_name cannot appear in shard_map {what}")
    return tuple(s if d is batching.not_mapped else batching.batch_spec(s, d, spmd_name)
                 for s, d in zip(specs, dims))

  in_specs = batched_specs(in_specs, dims, "in_specs")
  closed = core.ClosedJaxpr(jaxpr, ())
  if spmd_name is not None:
    inner_axis_data = axis_data._replace(
        size=axis_data.size // math.prod(mesh.shape[n] for n in spmd_name))
    closed = _replicated_along(closed, spmd_name, mesh,
                               _all_manual(mesh, newly_manual_axes), check_vma)
  # (The context mesh stays: vmap's spmd axes come from its Explicit axes.)
  with _axis_env(mesh, _all_manual(mesh, newly_manual_axes), check_vma, manual_mesh=False):
    batched, out_dims = batching.batch_jaxpr_axes(closed, inner_axis_data, tuple(dims))
  out_specs = batched_specs(out_specs, out_dims, "out_specs")
  outs = _bind_closed(batched, args, in_specs, out_specs, mesh=mesh, check_vma=check_vma,
                      newly_manual_axes=newly_manual_axes)
  return outs, list(out_dims)


shard_map_p.def_batch(_shard_map_batch)


def _replicated_along(closed: core.ClosedJaxpr, names, mesh, manual, check_vma):
  """The body with its reductions over `names` (vmap's spmd axes) replaced by their value
  on equal operands: psum multiplies by the axes' size, pmax and pmin keep the operand.

  No in_spec names the spmd axes, so before batching every value of the body is the same
  along them (its reductions there combine copies, as a transposed body's psum does);
  once the batch is split over them, devices along them hold different batch elements,
  which the reductions must not mix. Any other use of those axes raises ValueError.
  """
  names = frozenset(names)

  def over(eqn) -> frozenset:
    return _names_param(eqn.params.get("axes", eqn.params.get("axis_name", ()))) & names

  def uses(jaxpr) -> bool:
    return any((eqn.primitive.name in _COLLECTIVES or eqn.primitive.name == "axis_index")
               and over(eqn) for eqn in jaxpr.eqns)

  def nested_uses(jaxpr) -> bool:
    return any(uses(sub) or nested_uses(sub) for eqn in jaxpr.eqns
               for sub in core.jaxprs_in_params(eqn.params))

  jaxpr = closed.jaxpr
  if not uses(jaxpr) and not nested_uses(jaxpr):
    return closed
  error = ValueError(f"vmap spmd_axis_name {tuple(names)} cannot appear in the collectives of "
                     "a shard_map body (other than psum, pmax and pmin at its top level)")
  if nested_uses(jaxpr):
    raise error
  size = math.prod(mesh.shape[n] for n in names)

  def fun(*args):
    env = dict(zip(jaxpr.constvars, closed.consts))
    env.update(zip(jaxpr.invars, args))
    read = lambda v: v.val if type(v) is core.Literal else env[v]
    for eqn in jaxpr.eqns:
      ins, name = [read(v) for v in eqn.invars], eqn.primitive.name
      if not over(eqn) or name not in _COLLECTIVES | {"axis_index"}:
        outs = eqn.primitive.bind(*ins, **eqn.params)
      elif name in ("psum", "pmax", "pmin") and eqn.params["axis_index_groups"] is None:
        rest = tuple(a for a in eqn.params["axes"] if isinstance(a, int) or a not in names)
        outs = eqn.primitive.bind(*ins, axes=rest, axis_index_groups=None) if rest else ins
        if name == "psum":
          outs = [o if core.get_aval(o).dtype == dtypes.float0 else
                  ew.mul(o, np.asarray(size, core.get_aval(o).dtype)) for o in outs]
      else:
        raise error
      outs = outs if eqn.primitive.multiple_results else [outs]
      env.update(zip(eqn.outvars, outs))
    return [read(v) for v in jaxpr.outvars]

  with _axis_env(mesh, manual, check_vma, manual_mesh=False):
    return pe.trace_to_jaxpr(fun, closed.in_avals)


# Lowering: Shardy's sdy.manual_computation, as JAX emits it.


def _sdy_sharding(spec, ndim: int, open_dims: bool) -> str:
  """``<@mesh, [{"x"}, {}]>``; with `open_dims` (partly manual) each dimension ends in ``?``."""
  dims = []
  for entry in spec._normalized_spec_for_aval(ndim):
    names = [f'"{n}"' for n in axes_of(entry)]
    if open_dims:
      names.append("?")
    dims.append("{" + ", ".join(names) + "}")
  return f"<@mesh, [{', '.join(dims)}]>"


def _shard_map_lowering(ctx, *args, jaxpr, mesh, in_specs, out_specs, check_vma,
                        newly_manual_axes):
  module = ctx.module
  if module.spmd is None:
    raise NotImplementedError(
        "internal: shard_map lowered outside an SPMD module; the enclosing program must "
        "compile over the mesh that xjax._src.sharding.spmd.program_mesh(jaxpr) returns")
  if module.spmd.mesh.shape_tuple != mesh.shape_tuple:
    raise ValueError(f"shard_map over mesh {mesh} inside a computation over mesh "
                     f"{module.spmd.mesh}: the meshes must be the same")
  outer = module.axis_context
  manual = _all_manual(mesh, newly_manual_axes) | (outer.manual_axes if outer else frozenset())
  newly = [n for n in mesh.axis_names if n in newly_manual_axes]
  avals_in, avals_out = ctx.avals_in, ctx.avals_out
  try:
    with lowering.manual_axes(module, module.spmd.mesh, manual):
      if math.prod(mesh.shape[n] for n in newly) == 1:
        return lowering.lower_jaxpr_body(ctx, jaxpr, [], list(args))
      res = ctx.fresh()  # numbered before the body, as MLIR prints it
      body = lowering.LoweringContext(module, ctx.counter, ctx.indent + "  ")
      block_args = [lowering.Value(f"%arg_r{next(ctx.counter)}", hlo.aval_type(v.aval))
                    for v in jaxpr.invars]
      results = lowering.lower_jaxpr_body(body, jaxpr, [], block_args)
      body.lines.append(body.indent + f'"sdy.return"({", ".join(v.name for v in results)}) : '
                        f'({", ".join(v.type for v in results)}) -> ()')
  finally:
    ctx.avals_in, ctx.avals_out = avals_in, avals_out
  open_dims = len(manual) < len(mesh.axis_names)
  rank = lambda a: len(core.physical_aval(a).shape)  # a key's data has trailing dimensions
  in_sh = ", ".join(_sdy_sharding(s, rank(a), open_dims) for s, a in zip(in_specs, avals_in))
  out_sh = ", ".join(_sdy_sharding(s, rank(a), open_dims)
                     for s, a in zip(out_specs, avals_out))
  out_types = [hlo.aval_type(a) for a in avals_out]
  n = len(out_types)
  lhs = "" if n == 0 else (f"{res} = " if n == 1 else f"{res}:{n} = ")
  head = ", ".join(f"{a.name}: {a.type}" for a in block_args)
  axes = ", ".join(f'"{n}"' for n in newly)
  ctx.lines.append(
      ctx.indent + f"{lhs}sdy.manual_computation({', '.join(v.name for v in args)}) "
      f"in_shardings=[{in_sh}] out_shardings=[{out_sh}] "
      f"manual_axes={{{axes}}} "
      f"({head}) {{")
  ctx.lines.extend(body.lines)
  outs_text = out_types[0] if n == 1 else f"({', '.join(out_types)})"
  ctx.lines.append(ctx.indent + f"}} : ({', '.join(v.type for v in args)}) -> {outs_text}")
  if n == 1:
    return [lowering.Value(res, out_types[0])]
  return [lowering.Value(f"{res}#{i}", t) for i, t in enumerate(out_types)]


shard_map_p.def_lowering(_shard_map_lowering)
