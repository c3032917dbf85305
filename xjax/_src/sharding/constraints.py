"""`with_sharding_constraint` and `reshard`: saying how an intermediate value is split.

Both bind `sharding_constraint`, lowered to Shardy's ``sdy.sharding_constraint``
(XLA's partitioner then lays the value out so, moving data between devices as
needed). Eagerly they place the value on the sharding. A jit whose jaxpr
holds one runs as a program over the constraint's mesh (`jaxpr_mesh`).
"""
from __future__ import annotations

from xjax._src import core
from xjax._src import tree_util
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.sharding import spmd
from xjax._src.sharding.mesh import AxisType, Mesh, get_concrete_mesh
from xjax._src.sharding.partition_spec import PartitionSpec
from xjax._src.sharding.shardings import NamedSharding, Sharding


def _abstract_eval(x, *, sharding):
  sharding.check_shape(x.shape)
  return x


def _impl(x, *, sharding):
  return spmd.place(x, sharding)


def _lowering(ctx, x, *, sharding):
  if ctx.module.spmd is None or ctx.module.axis_context is not None:
    return x  # one device (or inside a manual body): nothing to constrain
  ndim = len(ctx.avals_in[0].shape)
  return ctx.op1("sdy.sharding_constraint", [x], x.type,
                 f"sharding = {sharding.sdy_text(ndim)}")


def _batch(axis_data, args, dims, *, sharding):
  (x,), (d,) = args, dims
  spec = list(sharding.spec._normalized_spec_for_aval(len(core.get_aval(x).shape) - 1))
  spec.insert(d, None)
  return sharding_constraint_p.bind(x, sharding=sharding.with_spec(PartitionSpec(*spec))), d


sharding_constraint_p = core.Primitive("sharding_constraint")
sharding_constraint_p.def_impl(_impl)
sharding_constraint_p.def_abstract_eval(_abstract_eval)
sharding_constraint_p.def_lowering(_lowering)
sharding_constraint_p.def_batch(_batch)
ad.deflinear(sharding_constraint_p,
             lambda ct, x, *, sharding: [sharding_constraint_p.bind(ct, sharding=sharding)])


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


def _constrain(x, shardings, what: str, check):
  leaves, tree = tree_util.tree_flatten(x)
  is_leaf = lambda v: v is None or isinstance(v, (Sharding, PartitionSpec))
  per_leaf = tree_util.broadcast_prefix(shardings, x, is_leaf=is_leaf)
  out = []
  for leaf, s in zip(leaves, per_leaf):
    s = _as_named(s, what)
    check(s)
    out.append(sharding_constraint_p.bind(leaf, sharding=s))
  return tree_util.tree_unflatten(tree, out)


def with_sharding_constraint(x, shardings):
  """`x` (a pytree of arrays) laid out as `shardings` (a pytree prefix of Shardings or
  PartitionSpecs, the latter over the context mesh) says.

  Raises:
    ValueError: a spec that names an Explicit mesh axis (use `reshard`), a
      PartitionSpec outside any mesh context, or a sharding that does not
      divide a dimension.

  Mirrors `jax.lax.with_sharding_constraint`.
  """
  def check(s):
    if isinstance(s, NamedSharding):
      explicit = {n for n, t in zip(s.mesh.axis_names, s.mesh.axis_types)
                  if t is AxisType.Explicit}
      used = {a for e in s.spec for a in ((e,) if isinstance(e, str) else (e or ()))}
      if explicit & used:
        raise ValueError(
            "The spec of NamedSharding passed to with_sharding_constraint can only refer to "
            f"Auto axes of the mesh. Got spec={s.spec!r} and mesh={s.mesh.abstract_mesh}. "
            "You probably meant to use `reshard` API?")
  return _constrain(x, shardings, "with_sharding_constraint", check)


def reshard(xs, out_shardings):
  """`xs` (a pytree of arrays) moved to `out_shardings` (Shardings or PartitionSpecs over
  the context mesh), on Explicit and Auto axes alike.

  Raises:
    ValueError: a PartitionSpec outside any mesh context, or a sharding that does
      not divide a dimension.

  Mirrors `jax.reshard`.
  """
  return _constrain(xs, out_shardings, "reshard", lambda s: None)


# ----------------------------------------------------------------------------
# The mesh a jaxpr's own equations name

def jaxpr_mesh(jaxpr: core.Jaxpr):
  """The mesh of the first sharding or mesh an equation's params hold (sub-jaxprs
  included), else None: such a program runs over that mesh's devices. (Walked at
  compile time only.)"""
  for eqn in jaxpr.eqns:
    for value in eqn.params.values():
      found = _mesh_in(value)
      if found is not None:
        return found
  return None


def _mesh_in(value):
  if isinstance(value, Mesh):
    return value
  if isinstance(value, NamedSharding) and isinstance(value.mesh, Mesh):
    return value.mesh
  if isinstance(value, core.ClosedJaxpr):
    return jaxpr_mesh(value.jaxpr)
  if isinstance(value, core.Jaxpr):
    return jaxpr_mesh(value)
  if isinstance(value, (tuple, list)):
    for v in value:
      m = _mesh_in(v)
      if m is not None:
        return m
  return None
