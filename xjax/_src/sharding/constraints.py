"""`with_sharding_constraint` and `reshard`: saying how an intermediate value is split.

`with_sharding_constraint` binds `sharding_constraint` (Auto axes only; on a
context mesh of Explicit axes it only asserts the type), `reshard` binds
`reshard`, whose result is typed with the new sharding (its Explicit axes).
Both lower to Shardy's ``sdy.sharding_constraint`` (XLA's partitioner then
lays the value out so, moving data between devices as needed). Eagerly they
place the value on the sharding. A jit whose jaxpr holds one runs as a
program over the constraint's mesh (`spmd.program_mesh`).
"""
from __future__ import annotations

from xjax._src import core
from xjax._src import tree_util
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.sharding import rules
from xjax._src.sharding import spmd
from xjax._src.sharding.mesh import AxisType, Mesh, get_abstract_mesh, get_concrete_mesh
from xjax._src.sharding.partition_spec import PartitionSpec, axes_of
from xjax._src.sharding.shardings import NamedSharding, Sharding


def _abstract_eval(x, *, sharding):
  sharding.check_shape(x.shape)
  return x


def _impl(x, *, sharding):
  return spmd.place(x, sharding)


def _lowering(ctx, x, *, sharding):
  manual = getattr(ctx.module.axis_context, "manual_axes", None)
  if manual and any(n in manual for e in sharding.spec if e is not PartitionSpec.UNCONSTRAINED
                    for n in axes_of(e)):  # as JAX's lowering (mlir.add_manual_axes)
    names = tuple(n for n in sharding.mesh.axis_names if n in manual)
    raise ValueError(f"pspec {sharding.spec} contains a manual axes {names} of mesh which is "
                     "not allowed. If you are using a with_sharding_constraint under a "
                     "shard_map, only use the mesh axis in PartitionSpec which are not manual.")
  if ctx.module.spmd is None or ctx.module.axis_context is not None:
    return x  # one device (or inside a manual body): nothing to constrain
  ndim = len(ctx.avals_in[0].shape)
  return ctx.op1("sdy.sharding_constraint", [x], x.type,
                 f"sharding = {sharding.sdy_text(ndim)}")


def _batch(axis_data, args, dims, *, sharding):
  """The batch dimension is split over vmap's `spmd_axis_name`, else left to XLA
  (UNCONSTRAINED), as in JAX; UNCONSTRAINED dimensions stay so."""
  (x,), (d,) = args, dims
  free_dim = PartitionSpec.UNCONSTRAINED
  spmd_name, spec, concrete = axis_data.spmd_name, sharding.spec, isinstance(sharding.mesh, Mesh)
  used = {n for e in spec if e is not None and e is not free_dim
          for n in (e if isinstance(e, tuple) else (e,))}
  if spmd_name is not None and set(spmd_name) & used:
    raise ValueError(f"vmap spmd_axis_name {spmd_name} cannot appear in "
                     f"with_sharding_constraint spec, but got spec {spec}")
  free = {i + (d <= i) for i, e in enumerate(spec) if e is free_dim}
  if spmd_name is None:
    free.add(d)
  # Over a concrete mesh JAX goes through XLA's sharding: an unconstrained dimension
  # reads as unsplit, and trailing unsplit dimensions are dropped.
  parts = [None if e is free_dim else e for e in spec] if concrete else list(spec)
  while concrete and parts and parts[-1] is None:
    parts.pop()
  parts = list(batching.batch_spec(parts, d, spmd_name))
  if free:
    parts += [None] * (len(core.get_aval(x).shape) - len(parts))
    for i in free:
      parts[i] = free_dim
  return sharding_constraint_p.bind(x, sharding=sharding.with_spec(PartitionSpec(*parts))), d


sharding_constraint_p = core.Primitive("sharding_constraint")
sharding_constraint_p.def_impl(_impl)
sharding_constraint_p.def_abstract_eval(_abstract_eval)
sharding_constraint_p.def_lowering(_lowering)
sharding_constraint_p.def_batch(_batch)
ad.deflinear(sharding_constraint_p,
             lambda ct, x, *, sharding: [sharding_constraint_p.bind(ct, sharding=sharding)])


# ----------------------------------------------------------------------------
# reshard: a new type


def _reshard_abstract_eval(x, *, dst_sharding):
  dst_sharding.check_shape(x.shape)
  return x.update(sharding=rules.aval_sharding(dst_sharding, len(x.shape)))


def _reshard_impl(x, *, dst_sharding):
  if not isinstance(dst_sharding.mesh, Mesh):
    mesh = get_concrete_mesh()
    if mesh is None:
      raise ValueError(f"reshard of a concrete array to {dst_sharding!r} needs a concrete "
                       "mesh: pass a NamedSharding over a Mesh, or use `jax.set_mesh`.")
    dst_sharding = NamedSharding(mesh, dst_sharding.spec)
  return spmd.place(x, dst_sharding)


def _reshard_batch(axis_data, args, dims, *, dst_sharding):
  (x,), (d,) = args, dims
  spec = list(dst_sharding.spec._normalized_spec_for_aval(len(core.get_aval(x).shape) - 1))
  spec.insert(d, None)
  return reshard_p.bind(x, dst_sharding=dst_sharding.with_spec(PartitionSpec(*spec))), d


def _reshard_transpose(ct, x, *, dst_sharding):
  # Back to the operand's type (unsplit, when it had none).
  back = x.aval.sharding
  spec = back.spec if back is not None else PartitionSpec()
  return [reshard_p.bind(ct, dst_sharding=dst_sharding.with_spec(spec))]


reshard_p = core.Primitive("reshard")
reshard_p.def_impl(_reshard_impl)
reshard_p.def_abstract_eval(_reshard_abstract_eval)
reshard_p.def_lowering(lambda ctx, x, *, dst_sharding: _lowering(ctx, x, sharding=dst_sharding))
reshard_p.def_batch(_reshard_batch)
reshard_p.def_pp_params(lambda params: {})  # JAX prints a bare ``reshard``
ad.deflinear(reshard_p, _reshard_transpose)


def _as_named(s, what: str):
  if isinstance(s, Sharding):
    return s
  if isinstance(s, PartitionSpec):
    mesh = get_concrete_mesh()
    if mesh is None:
      raise ValueError("Using PartitionSpec when you are not under a mesh context is not "
                       "allowed. Please pass a NamedSharding instance or enter into a mesh "
                       f"context via `jax.set_mesh`. Got {s!r}")
    return NamedSharding(mesh, s)
  raise ValueError(f"{what} expects a Sharding or a PartitionSpec, got {s!r}")


def _constrain(x, shardings, what: str, check, bind):
  leaves, tree = tree_util.tree_flatten(x)
  is_leaf = lambda v: v is None or isinstance(v, (Sharding, PartitionSpec))
  per_leaf = tree_util.broadcast_prefix(shardings, x, is_leaf=is_leaf)
  out = []
  for leaf, s in zip(leaves, per_leaf):
    s = _as_named(s, what)
    out.append(leaf if check(leaf, s) else bind(leaf, s))
  return tree_util.tree_unflatten(tree, out)


def _assert_same_type(x, s) -> None:
  ndim = len(core.get_aval(x).shape)
  typed = core.get_aval(x).sharding
  have = typed.spec._normalized_spec_for_aval(ndim) if typed is not None else (None,) * ndim
  want = s.spec._normalized_spec_for_aval(ndim)
  if tuple(have) != tuple(want):
    raise AssertionError(
        "`with_sharding_constraint` acts as an assert when all axes of mesh are of type "
        f"`Explicit`. The array sharding: {PartitionSpec(*have)!r} did not match the sharding "
        f"provided: {want!r}. Please use `jax.sharding.reshard` to shard your input to the "
        "sharding you want.")


def with_sharding_constraint(x, shardings):
  """`x` (a pytree of arrays) laid out as `shardings` (a pytree prefix of Shardings or
  PartitionSpecs, the latter over the context mesh) says.

  Under a context mesh whose axes are all Explicit, a NamedSharding is only
  compared with the value's type (and the value returned as it is).

  Raises:
    ValueError: a spec that names an Explicit mesh axis (use `reshard`), a
      PartitionSpec outside any mesh context, or a sharding that does not
      divide a dimension.
    AssertionError: under an all-Explicit context mesh, a sharding other than
      the value's type.

  Mirrors `jax.lax.with_sharding_constraint`.
  """
  context = get_abstract_mesh()
  all_explicit = bool(context.axis_types) and all(t is AxisType.Explicit
                                                   for t in context.axis_types)

  def check(x, s):
    if all_explicit and isinstance(s, NamedSharding):
      _assert_same_type(x, s)
      return True
    if isinstance(s, NamedSharding):
      explicit = {n for n, t in zip(s.mesh.axis_names, s.mesh.axis_types)
                  if t is AxisType.Explicit}
      used = {a for e in s.spec for a in axes_of(e)}
      if explicit & used:
        raise ValueError(
            "The spec of NamedSharding passed to with_sharding_constraint can only refer to "
            f"Auto axes of the mesh. Got spec={s.spec!r} and mesh={s.mesh.abstract_mesh}. "
            "You probably meant to use `reshard` API?")
    return False
  return _constrain(x, shardings, "with_sharding_constraint", check,
                    lambda v, s: sharding_constraint_p.bind(v, sharding=s))


def reshard(xs, out_shardings):
  """`xs` (a pytree of arrays) moved to `out_shardings` (NamedShardings or PartitionSpecs
  over the context mesh) whose spec names only Explicit mesh axes.

  The result's type carries the new sharding's Explicit axes, traced or not
  (``jax.typeof(reshard(x, P(None, 'x')))`` is ``f32[8,8@x]``).

  Raises:
    ValueError: a PartitionSpec outside any mesh context, a sharding other than
      a NamedSharding, a spec naming an Auto or Manual axis, or a sharding that does
      not divide a dimension.

  Mirrors `jax.reshard`.
  """
  def bind(v, s):
    if not isinstance(s, NamedSharding):
      raise ValueError("Reshard should only be used with out_shardings which are non-None "
                       f"and have a non-empty mesh. Got sharding {s}.")
    types = dict(zip(s.mesh.axis_names, s.mesh.axis_types))
    for entry in s.spec:
      for name in axes_of(entry):
        if types.get(name) in (AxisType.Auto, AxisType.Manual):
          raise ValueError(
              "PartitionSpec passed to reshard cannot contain axis names that are of type Auto "
              f"or Manual. Got PartitionSpec: {s.spec!r} with axis name: {name} of type: "
              f"AxisType.{types[name].name}.")
    ndim = len(core.get_aval(v).shape)
    return reshard_p.bind(v, dst_sharding=s.with_spec(s.spec._normalized_spec_for_aval(ndim)))
  return _constrain(xs, out_shardings, "reshard", lambda v, s: False, bind)
