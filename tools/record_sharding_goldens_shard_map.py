"""Records tests/golden/shard_map.json: what real JAX 0.10.2 computes, prints and raises
for the shard_map and pmap cases below.

The cases are written against the `jax` module passed in, so xjax's tests
(tests/multidevice/test_shard_map.py, test_pmap.py) run the same code with
`xjax`. Run with real JAX on 8 forced CPU devices:

  XLA_FLAGS=--xla_force_host_platform_device_count=8 .venv-jax/bin/python \
      tools/record_sharding_goldens_shard_map.py

Each case is (kind, thunk): "value" records the flat outputs, "jaxpr" the text
of `make_jaxpr`, "lowering" the ``sdy.manual_computation`` lines of the
lowered module (SSA names blanked), "error" the exception's class and message.
"""
import json
import os
import re

import numpy as np

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden",
                      "shard_map.json")


def normalize_message(msg: str) -> str:
  """Sorts the members of printed frozensets/sets (their order follows string hashing)."""
  def sort_items(m):
    items = sorted(s.strip() for s in m.group(2).split(","))
    return f"{m.group(1)}{{{', '.join(items)}}}"
  return re.sub(r"(frozenset\(|=)\{([^{}]*)\}", sort_items, msg)


def manual_computation_lines(text: str) -> list:
  """The header and closing lines of each sdy.manual_computation, SSA names blanked."""
  lines = text.splitlines()
  out = []
  depth_of = []
  for line in lines:
    if "sdy.manual_computation" in line:
      out.append(line.strip())
      depth_of.append(len(line) - len(line.lstrip()))
    elif depth_of and line.strip().startswith("} : (") and (
        len(line) - len(line.lstrip()) == depth_of[-1]):
      out.append(line.strip())
      depth_of.pop()
  return [re.sub(r"%[\w#]+", "%", line) for line in out]


def shard_map_cases(jax):
  """name -> (kind, thunk) for shard_map on a (4, 2) mesh with Auto axes 'x', 'y'."""
  lax, jnp = jax.lax, jax.numpy
  P = jax.sharding.PartitionSpec
  auto = jax.sharding.AxisType.Auto
  mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(auto, auto))
  smap = jax.shard_map
  x = np.arange(32, dtype=np.float32).reshape(8, 4)
  x3 = np.arange(3 * 8 * 4, dtype=np.float32).reshape(3, 8, 4) / 10
  c = np.arange(4, dtype=np.float32)
  cases = {}

  def sm(f, in_specs, out_specs, **kw):
    return smap(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, **kw)

  fns = {
      "identity": (sm(lambda a: a, P("x"), P("x")), (x,)),
      "elementwise": (sm(lambda a: jnp.sin(a) * 2 + 1, P("x", "y"), P("x", "y")), (x,)),
      "psum_x": (sm(lambda a: lax.psum(a, "x"), P("x"), P()), (x,)),
      "psum_xy": (sm(lambda a: lax.psum(a, ("x", "y")), P("x", "y"), P()), (x,)),
      "pmean_y": (sm(lambda a: lax.pmean(a, "y"), P(None, "y"), P()), (x,)),
      "all_gather": (sm(lambda a: lax.all_gather(a, "x", tiled=True), P("x"), P(),
                        check_vma=False), (x,)),
      "all_gather_untiled": (sm(lambda a: lax.all_gather(a, "x"), P("x"), P(),
                                check_vma=False), (x,)),
      "ppermute": (sm(lambda a: lax.ppermute(a, "x", [(i, (i + 1) % 4) for i in range(4)]),
                      P("x"), P("x")), (x,)),
      "axis_index": (sm(lambda a: a + lax.axis_index("x").astype(a.dtype), P("x", "y"),
                        P("x", "y")), (x,)),
      "tuple_axes": (sm(lambda a: a * 3, P(("x", "y")), P(("x", "y"))), (x,)),
      "tuple_axes_yx": (sm(lambda a: a + 1, P(("y", "x")), P(("y", "x"))), (x,)),
      "replicated_in": (sm(lambda a, b: a + b, (P("x"), P()), P("x")), (x, c)),
      "closure_const": (sm(lambda a: a + c, P("x"), P("x"), check_vma=False), (x,)),
      "nested_jit": (sm(jax.jit(lambda a: lax.psum(jnp.cos(a), "y")), P(None, "y"), P()),
                     (x,)),
      "pytree": (sm(lambda d: (d["a"] * 2, d["b"].sum(0, keepdims=True)),
                    ({"a": P("x"), "b": P("y")},), (P("x"), P("y"))),
                 ({"a": x, "b": x[:, :2].T.copy()},)),
      "partial_manual": (sm(lambda a: lax.psum(a, "x"), P("x"), P(), axis_names={"x"}),
                         (x,)),
      "partial_manual_y": (sm(lambda a: a * 2, P(None, "y"), P(None, "y"),
                              axis_names={"y"}), (x,)),
      "unchecked_out": (sm(lambda a: a[:1] * 0 + 1, P("x"), P(), check_vma=False), (x,)),
  }
  for name, (f, args) in fns.items():
    cases[f"value_{name}"] = ("value", lambda f=f, args=args: f(*args))
  for name in ["identity", "psum_x", "all_gather", "tuple_axes", "replicated_in",
               "closure_const", "partial_manual", "pytree", "ppermute"]:
    f, args = fns[name]
    cases[f"lowering_{name}"] = ("lowering", lambda f=f, args=args: jax.jit(f).lower(*args)
                                 .as_text())

  def loss(a):
    y = sm(lambda b: lax.psum(jnp.sin(b) * b, "x"), P("x"), P())(a)
    return (y * y).sum()

  def loss_replicated(a, w):
    y = sm(lambda b, v: jnp.tanh(b * v), (P("x"), P()), P("x"))(a, w)
    return y.sum()

  cases["value_grad_psum"] = ("value", lambda: jax.grad(loss)(x / 10))
  cases["value_grad_replicated_arg"] = (
      "value", lambda: jax.grad(loss_replicated, argnums=(0, 1))(x / 10, c / 3))
  cases["value_grad_unchecked"] = ("value", lambda: jax.grad(lambda a: sm(
      lambda b: lax.psum(b * b, "x"), P("x"), P(), check_vma=False)(a).sum())(x / 10))
  cases["value_grad_all_gather"] = ("value", lambda: jax.grad(lambda a: sm(
      lambda b: jnp.sin(lax.all_gather(b, "x", tiled=True)), P("x"), P(),
      check_vma=False)(a).sum())(x / 10))
  cases["value_jvp"] = ("value", lambda: jax.jvp(
      sm(lambda b: lax.psum(b * jnp.cos(b), "y"), P(None, "y"), P()), (x / 10,), (x / 7,)))
  cases["value_jit_grad"] = ("value", lambda: jax.jit(jax.grad(loss))(x / 10))
  cases["value_vmap"] = ("value", lambda: jax.vmap(
      sm(lambda b: b * 2 + lax.psum(b, "y"), P("x", "y"), P("x", "y")))(x3))
  cases["value_vmap_axis1"] = ("value", lambda: jax.vmap(
      sm(lambda b: lax.psum(b, "x"), P("x"), P()), in_axes=1, out_axes=1)(x3.transpose(1, 0, 2)))
  cases["value_vmap_named"] = ("value", lambda: jax.vmap(
      sm(lambda b: lax.psum(b, ("x", "i")), P("x"), P(), check_vma=False), axis_name="i")(x3))
  cases["value_jit_of_shard_map"] = ("value", lambda: jax.jit(
      lambda a: jnp.exp(sm(lambda b: lax.psum(b, "x"), P("x"), P())(a * 0.1)).sum())(x))

  cases["jaxpr_identity"] = ("jaxpr", lambda: jax.make_jaxpr(
      sm(lambda a: a * 2, P("x"), P("x"), check_vma=False))(x))
  cases["jaxpr_psum"] = ("jaxpr", lambda: jax.make_jaxpr(
      sm(lambda a: lax.psum(a, "x"), P("x"), P(), check_vma=False))(x))
  cases["jaxpr_closure_const"] = ("jaxpr", lambda: jax.make_jaxpr(fns["closure_const"][0])(x))
  cases["jaxpr_two_args"] = ("jaxpr", lambda: jax.make_jaxpr(sm(
      lambda a, b: (a + b, a), (P(("x", "y")), P()), (P(("x", "y")), P(("x", "y"))),
      check_vma=False))(x, np.float32(1)))
  cases["jaxpr_partial_manual"] = ("jaxpr", lambda: jax.make_jaxpr(sm(
      lambda a: lax.psum(a, "x"), P("x"), P(), axis_names={"x"}, check_vma=False))(x))
  cases["jaxpr_vmap"] = ("jaxpr", lambda: jax.make_jaxpr(jax.vmap(sm(
      lambda b: b * 2, P("x", "y"), P("x", "y"), check_vma=False)))(x3))
  cases["jaxpr_in_jit"] = ("jaxpr", lambda: jax.make_jaxpr(jax.jit(sm(
      lambda b: jnp.sin(b), P("x"), P("x"), check_vma=False)))(x))

  def err(thunk):
    return ("error", thunk)

  ones = lambda *s: np.ones(s, np.float32)
  cases["error_in_specs_prefix"] = err(lambda: sm(lambda a: a, (P("x"), P()), P("x"))(ones(8, 4)))
  cases["error_in_specs_list"] = err(
      lambda: sm(lambda a: a, [P("x")], P("x"))(ones(8, 4), ones(8, 4)))
  cases["error_divisibility"] = err(lambda: sm(lambda a: a, P("x"), P("x"))(ones(6, 4)))
  cases["error_divisibility_tuple"] = err(
      lambda: sm(lambda a: a, P(("x", "y")), P("x"))(ones(12, 4)))
  cases["error_divisibility_second_arg"] = err(
      lambda: sm(lambda a, b: a, (P(), P(None, "y")), P())(ones(8, 4), ones(8, 3)))
  cases["error_in_rank"] = err(lambda: sm(lambda a: a, P("x", None, None), P("x"))(ones(8, 4)))
  cases["error_out_rank"] = err(
      lambda: sm(lambda a: a, P("x"), P("x", None, None))(ones(8, 4)))
  cases["error_out_rank_scalar"] = err(
      lambda: sm(lambda a: a.sum(), P("x"), P("x"))(ones(8, 4)))
  cases["error_out_specs_prefix"] = err(
      lambda: sm(lambda a: (a, a), P("x"), (P("x"), P("x"), P()))(ones(8, 4)))
  cases["error_unknown_axis"] = err(lambda: sm(lambda a: a, P("z"), P())(ones(8, 4)))
  cases["error_non_manual_axis"] = err(
      lambda: sm(lambda a: a, P("y"), P("y"), axis_names={"x"})(ones(8, 4)))
  cases["error_spec_type"] = err(lambda: sm(lambda a: a, (3,), P("x"))(ones(8, 4)))
  cases["error_not_callable"] = err(lambda: sm(3, P("x"), P("x")))
  cases["error_no_mesh"] = err(
      lambda: smap(lambda a: a, in_specs=P("x"), out_specs=P("x"))(ones(8, 4)))
  cases["error_axis_names_subset"] = err(
      lambda: sm(lambda a: a, P("x"), P("x"), axis_names={"z"})(ones(8, 4)))
  cases["error_axis_names_type"] = err(
      lambda: sm(lambda a: a, P("x"), P("x"), axis_names=["x"])(ones(8, 4)))
  cases["error_vma_one_axis"] = err(lambda: jax.make_jaxpr(smap(
      lambda a: a, mesh=jax.make_mesh((8,), ("x",), axis_types=(auto,)), in_specs=P("x"),
      out_specs=P()))(ones(8, 4)))
  cases["error_vma_two_axes"] = err(lambda: jax.make_jaxpr(sm(
      lambda a: lax.psum(a, "y"), P("x", "y"), P(None, "y")))(ones(8, 4)))
  return cases


def pmap_cases(jax):
  """name -> (kind, thunk) for pmap."""
  lax, jnp = jax.lax, jax.numpy
  x = np.arange(8, dtype=np.float32).reshape(4, 2)
  y = np.arange(24, dtype=np.float32).reshape(2, 4, 3)
  cases = {
      "value_double": ("value", lambda: jax.pmap(lambda a: a * 2)(x)),
      "value_psum": ("value", lambda: jax.pmap(lambda a: lax.psum(a, "i"), "i")(x)),
      "value_pmean": ("value", lambda: jax.pmap(lambda a: a - lax.pmean(a, "i"), "i")(x)),
      "value_axis_index": ("value", lambda: jax.pmap(
          lambda a: a * lax.axis_index("i"), "i")(x)),
      "value_in_axes_none": ("value", lambda: jax.pmap(
          lambda a, b: a + b, in_axes=(0, None))(x, np.float32(10))),
      "value_in_axes_1": ("value", lambda: jax.pmap(lambda a: a.sum(), in_axes=1)(y)),
      "value_out_axes_1": ("value", lambda: jax.pmap(
          lambda a: a * 3, in_axes=1, out_axes=1)(y)),
      "value_out_axes_none": ("value", lambda: jax.pmap(
          lambda a: lax.psum(a, "i"), "i", out_axes=None)(x)),
      "value_static": ("value", lambda: jax.pmap(
          lambda a, n: a ** n, static_broadcasted_argnums=1)(x, 3)),
      "value_kwargs": ("value", lambda: jax.pmap(lambda a, b: a - b)(x, b=x * 2)),
      "value_pytree": ("value", lambda: jax.pmap(
          lambda d: {"s": d["a"] + d["b"]})({"a": x, "b": x + 1})),
      "value_under_jit": ("value", lambda: jax.jit(
          lambda a: jax.pmap(lambda b: lax.psum(b, "i"), "i")(a) + 1)(x)),
      "value_grad": ("value", lambda: jax.grad(
          lambda a: jax.pmap(lambda b: jnp.sin(b) * lax.psum(b, "i"), "i")(a).sum())(x)),
      "value_devices": ("value", lambda: jax.pmap(
          lambda a: lax.psum(a, "i"), "i", devices=jax.devices()[4:6])(x[:2])),
      "value_nested_collective": ("value", lambda: jax.pmap(
          lambda a: jax.vmap(lambda b: lax.psum(b, ("i", "j")), axis_name="j")(a), "i")(y)),
      "jaxpr_psum": ("jaxpr", lambda: jax.make_jaxpr(
          jax.pmap(lambda a: lax.psum(a, "i"), axis_name="i"))(x)),
      "jaxpr_default_name": ("jaxpr", lambda: jax.make_jaxpr(jax.pmap(lambda a: a + 1))(x)),
      "jaxpr_axes": ("jaxpr", lambda: jax.make_jaxpr(jax.pmap(
          lambda a, b: (a * b, b), in_axes=(1, None), out_axes=(1, None)))(x.T, 3.0)),
      "jaxpr_under_jit": ("jaxpr", lambda: jax.make_jaxpr(jax.jit(
          jax.pmap(lambda a: lax.pmean(a, "i"), axis_name="i")))(x)),
      "error_too_many": ("error", lambda: jax.pmap(lambda a: a)(np.ones(9, np.float32))),
      "error_mismatched": ("error", lambda: jax.pmap(lambda a, b: a + b)(
          np.ones(4, np.float32), np.ones(3, np.float32))),
      "error_axis_size": ("error", lambda: jax.pmap(lambda a: a, axis_size=3)(
          np.ones(4, np.float32))),
      "error_no_mapped": ("error", lambda: jax.pmap(lambda a: a, in_axes=None)(
          np.ones(4, np.float32))),
      "error_in_axes_prefix": ("error", lambda: jax.pmap(lambda a: a, in_axes=(0, 0))(
          np.ones(4, np.float32))),
      "error_in_axes_type": ("error", lambda: jax.pmap(lambda a: a, in_axes=0.5)),
      "error_out_axes_type": ("error", lambda: jax.pmap(lambda a: a, out_axes="a")),
      "error_static_argnums": ("error", lambda: jax.pmap(
          lambda a: a, static_broadcasted_argnums=1)(np.ones(4, np.float32))),
      "error_empty_devices": ("error", lambda: jax.pmap(lambda a: a, devices=[])),
      "error_not_callable": ("error", lambda: jax.pmap(3)),
      "error_unbound_name": ("error", lambda: jax.pmap(lambda a: lax.psum(a, "j"), "i")(
          np.ones(4, np.float32))),
      "error_squeeze": ("error", lambda: jax.pmap(lambda a, b: a + b.sum())(
          np.ones(4, np.float32), np.ones(8, np.float32))),
  }
  return cases


def run_case(jax, kind, thunk) -> dict:
  """What a case produced, in the form stored in the golden file."""
  if kind == "error":
    try:
      result = thunk()
    except Exception as e:  # noqa: BLE001 - recording whatever JAX raises
      return {"type": type(e).__name__, "message": normalize_message(str(e))}
    return {"no_raise": True, "result": repr(result)}
  result = thunk()
  if kind == "jaxpr":
    return {"text": str(result)}
  if kind == "lowering":
    return {"lines": manual_computation_lines(result)}
  leaves = jax.tree_util.tree_leaves(result)
  return {"values": [np.asarray(v).tolist() for v in leaves],
          "shapes": [list(np.shape(v)) for v in leaves],
          "dtypes": [str(np.asarray(v).dtype) for v in leaves]}


def main():
  import jax
  assert len(jax.devices()) == 8, "set XLA_FLAGS=--xla_force_host_platform_device_count=8"
  out = {"jax_version": jax.__version__, "shard_map": {}, "pmap": {}}
  for group, make in (("shard_map", shard_map_cases), ("pmap", pmap_cases)):
    for name, (kind, thunk) in make(jax).items():
      out[group][name] = {"kind": kind, **run_case(jax, kind, thunk)}
  with open(GOLDEN, "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
  print(f"wrote {sum(len(v) for k, v in out.items() if k != 'jax_version')} cases to {GOLDEN}")


if __name__ == "__main__":
  main()
