"""vmap(spmd_axis_name=...) and vmap(sum_match=...) cases shared by
tests/multidevice/test_vmap_spmd_axis_name.py (on xjax) and tools/golden_vmap_spmd.py
(on JAX 0.10.2, which records tests/golden/vmap_spmd.json).

A case takes the module (`xjax` or `jax`) and returns ``(function, args)``.
"""
import numpy as np


def _mesh(jax):
  return jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)


def _wsc(jax, *spec):
  s = jax.sharding
  mesh = _mesh(jax)
  return lambda a: jax.lax.with_sharding_constraint(a * 2, s.NamedSharding(mesh, s.PartitionSpec(*spec)))


def _smap(jax, body, in_spec, out_spec, **kw):
  P = jax.sharding.PartitionSpec
  return jax.shard_map(body, mesh=_mesh(jax), in_specs=P(*in_spec), out_specs=P(*out_spec), **kw)


def _arange(*shape):
  return np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 7


def cases():
  """Cases whose jaxpr (sharding specs), output sharding and values are recorded."""
  return {
      "wsc_x": lambda jax: (jax.vmap(_wsc(jax, "y"), spmd_axis_name="x"), [_arange(8, 4)]),
      "wsc_x_rank3": lambda jax: (jax.vmap(_wsc(jax, "y"), spmd_axis_name="x"),
                                  [_arange(8, 4, 2)]),
      "wsc_x_in_axes1": lambda jax: (jax.vmap(_wsc(jax, "y"), in_axes=1, spmd_axis_name="x"),
                                     [_arange(4, 8, 2)]),
      "wsc_x_trailing_none": lambda jax: (jax.vmap(_wsc(jax, None, "y"), spmd_axis_name="x"),
                                          [_arange(8, 4, 2)]),
      "wsc_x_replicated_in_axes1": lambda jax: (
          jax.vmap(_wsc(jax), in_axes=1, spmd_axis_name="x"), [_arange(4, 8, 2)]),
      "wsc_tuple": lambda jax: (jax.vmap(_wsc(jax), in_axes=1, spmd_axis_name=("x", "y")),
                                [_arange(3, 8)]),
      "wsc_no_spmd": lambda jax: (jax.vmap(_wsc(jax, "y")), [_arange(8, 4, 2)]),
      "wsc_no_spmd_in_axes1": lambda jax: (jax.vmap(_wsc(jax, None, "y"), in_axes=1),
                                           [_arange(4, 8, 2)]),
      "nested_two_names": lambda jax: (
          jax.vmap(jax.vmap(_wsc(jax), spmd_axis_name="x"), in_axes=2, spmd_axis_name="y"),
          [_arange(4, 3, 2, 5)]),
      "nested_two_names_in_axes1": lambda jax: (
          jax.vmap(jax.vmap(_wsc(jax), in_axes=1, spmd_axis_name="x"), spmd_axis_name="y"),
          [_arange(2, 3, 4, 2)]),
      "jit_inside": lambda jax: (jax.vmap(jax.jit(_wsc(jax, "y")), spmd_axis_name="x"),
                                 [_arange(8, 4)]),
      "jit_outside_out_axes1": lambda jax: (
          jax.jit(jax.vmap(_wsc(jax, "y"), out_axes=1, spmd_axis_name="x")), [_arange(8, 4)]),
      "shard_map_x": lambda jax: (
          jax.vmap(_smap(jax, lambda a: a * jax.lax.axis_index("y"), ["y"], ["y"]),
                   spmd_axis_name="x"), [_arange(8, 4)]),
      "shard_map_x_in_axes1": lambda jax: (
          jax.vmap(_smap(jax, lambda a: a + jax.lax.psum(a, "y"), [None, "y"], [None, "y"]),
                   in_axes=1, spmd_axis_name="x"), [_arange(2, 8, 4)]),
      "shard_map_unbatched_arg": lambda jax: (
          jax.vmap(_smap(jax, lambda a, b: a * b, [("y",)], [("y",)]), in_axes=(0, None),
                   spmd_axis_name="x"), [_arange(8, 4), _arange(4)]),
      "shard_map_no_spmd": lambda jax: (
          jax.vmap(_smap(jax, lambda a: a * 3, ["x"], ["x"])), [_arange(3, 8, 2)]),
      "grad_of_vmap": lambda jax: (
          jax.grad(lambda a: (jax.vmap(_wsc(jax, "y"), spmd_axis_name="x")(a) ** 2).sum()),
          [_arange(8, 4)]),
      "vmap_of_grad": lambda jax: (
          jax.vmap(jax.grad(lambda a: (_wsc(jax, "y")(a) ** 2).sum()), spmd_axis_name="x"),
          [_arange(8, 4)]),
      "sum_match": lambda jax: (jax.vmap(lambda a: a * 2, out_axes=None, sum_match=True),
                                [_arange(8, 4)]),
      "sum_match_in_axes1": lambda jax: (
          jax.vmap(lambda a: a * 2, in_axes=1, out_axes=None, sum_match=True), [_arange(8, 4)]),
      "sum_match_bool": lambda jax: (jax.vmap(lambda a: a > 2, out_axes=None, sum_match=True),
                                     [_arange(8, 4)]),
      "sum_match_mixed": lambda jax: (
          jax.vmap(lambda a, b: (a * 2, b, a), in_axes=(0, None), out_axes=(None, None, 1),
                   sum_match=True), [_arange(8, 4), np.float32(3)]),
      "sum_match_psum": lambda jax: (
          jax.vmap(lambda a: jax.lax.psum(a, "i"), axis_name="i", out_axes=None,
                   sum_match=True), [_arange(8, 4)]),
  }


def error_cases():
  """Cases whose error (class and message) is recorded."""
  groups = [[0, 1, 2, 3], [4, 5, 6, 7]]
  return {
      "wsc_spec_names_spmd": lambda jax: (jax.vmap(_wsc(jax, "y"), spmd_axis_name="y"),
                                          [_arange(8, 4)]),
      "wsc_spec_names_spmd_tuple": lambda jax: (
          jax.vmap(_wsc(jax, "y"), spmd_axis_name=("x", "y")), [_arange(8, 4)]),
      "wsc_spmd_not_in_mesh": lambda jax: (jax.vmap(_wsc(jax, "y"), spmd_axis_name="z"),
                                           [_arange(8, 4)]),
      "shard_map_in_specs_name_spmd": lambda jax: (
          jax.vmap(_smap(jax, lambda a: a, ["x"], ["x"]), spmd_axis_name="x"),
          [_arange(8, 4)]),
      "shard_map_out_specs_name_spmd": lambda jax: (
          jax.vmap(_smap(jax, lambda a: a, ["y"], ["y", "x"], check_vma=False),
                   spmd_axis_name="x"), [_arange(8, 4, 2)]),
      "no_sum_match": lambda jax: (jax.vmap(lambda a: a * 2, out_axes=None), [_arange(8, 4)]),
      "psum_groups": lambda jax: (
          jax.vmap(lambda a: jax.lax.psum(a, "i", axis_index_groups=groups), axis_name="i"),
          [_arange(8, 4)]),
      "pmax_groups": lambda jax: (
          jax.vmap(lambda a: jax.lax.pmax(a, "i", axis_index_groups=groups), axis_name="i"),
          [_arange(8, 4)]),
      "pmin_groups": lambda jax: (
          jax.vmap(lambda a: jax.lax.pmin(a, "i", axis_index_groups=groups), axis_name="i"),
          [_arange(8, 4)]),
      "all_gather_groups": lambda jax: (
          jax.vmap(lambda a: jax.lax.all_gather(a, "i", axis_index_groups=groups),
                   axis_name="i"), [_arange(8, 4)]),
  }


def constraint_specs(jaxpr) -> list:
  """The shardings of the sharding_constraint equations and the specs of the shard_map
  equations of a jaxpr, its sub-jaxprs included, in order: one repr each."""
  found = []
  for eqn in jaxpr.eqns:
    name = eqn.primitive.name
    if name == "sharding_constraint":
      found.append(f"sharding_constraint {eqn.params['sharding'].spec!r}")
    elif name == "shard_map":
      inner = [tuple(v.aval.shape) for v in eqn.params["jaxpr"].invars]
      found.append(f"shard_map in_specs={eqn.params['in_specs']!r} "
                   f"out_specs={eqn.params['out_specs']!r} inner={inner}")
    for value in eqn.params.values():
      sub = getattr(value, "jaxpr", value)
      if hasattr(sub, "eqns"):
        found.extend(constraint_specs(sub))
  return found
