"""Records goldens for the named-axis collectives (tests/golden/parallel_collectives.json)
with *real* JAX.

Run with the reference virtualenv (never with xjax):

    .venv-jax/bin/python tools/golden_parallel.py

Each case is the source text of a function over `lax`, so that
tests/lax/test_parallel_collectives.py replays the same code with xjax.

* ``lowering``: the body runs under ``jax.shard_map`` (check_vma=False) on a
  (4, 2) mesh of 8 forced CPU devices with axes ('x', 'y'); recorded are the
  cross-device operations of the lowered module (name and attributes), and
  the body's jaxpr under ``make_jaxpr(axis_env=[('x', 4), ('y', 2)])``.
* ``vmap``: the function runs under ``jax.vmap(..., axis_name='i')`` (nested
  vmaps bind 'i' outside 'j') on a seeded input; recorded are input and output
  (None where JAX's own batching rules fail: grad of an untiled all_to_all).
"""
import json
import os
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "golden"))
import mlir_ops  # noqa: E402  (shared with tests/lax/test_parallel_collectives.py)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "tests", "golden", "parallel_collectives.json")

# (id, body source, local shard shape); the shard is spread over all 8 devices.
LOWERING_CASES = [
    ("psum_x", "lambda a: lax.psum(a, 'x')", (2, 4)),
    ("psum_yx", "lambda a: lax.psum(a, ('y', 'x'))", (2, 4)),
    ("psum_groups", "lambda a: lax.psum(a, 'x', axis_index_groups=[[0, 3], [1, 2]])", (2,)),
    ("pmax_xy", "lambda a: lax.pmax(a, ('x', 'y'))", (3,)),
    ("pmin_y", "lambda a: lax.pmin(a, 'y')", (3,)),
    ("all_gather_x", "lambda a: lax.all_gather(a, 'x')", (2, 3)),
    ("all_gather_y_tiled_axis1", "lambda a: lax.all_gather(a, 'y', axis=1, tiled=True)", (2, 3)),
    ("psum_scatter_x", "lambda a: lax.psum_scatter(a, 'x')", (4, 3)),
    ("psum_scatter_y_tiled", "lambda a: lax.psum_scatter(a, 'y', scatter_dimension=1, tiled=True)",
     (3, 4)),
    ("all_to_all_x_tiled", "lambda a: lax.all_to_all(a, 'x', 1, 0, tiled=True)", (2, 8)),
    ("all_to_all_x", "lambda a: lax.all_to_all(a, 'x', 0, 1)", (4, 3)),
    ("pswapaxes_y", "lambda a: lax.pswapaxes(a, 'y', 0)", (2, 3)),
    ("ppermute_x", "lambda a: lax.ppermute(a, 'x', [(0, 1), (1, 2), (2, 3), (3, 0)])", (3,)),
    ("ppermute_xy", "lambda a: lax.ppermute(a, ('x', 'y'), [(0, 5), (7, 1)])", (3,)),
    ("pshuffle_y", "lambda a: lax.pshuffle(a, 'y', [1, 0])", (3,)),
    ("axis_index_x", "lambda a: a + lax.axis_index('x')", (3,)),
    ("axis_index_xy", "lambda a: a + lax.axis_index(('x', 'y'))", (3,)),
]

# (id, function source of one member, input shape, nested) under vmap(axis_name='i').
VMAP_CASES = [
    ("psum", "lambda a: lax.psum(a, 'i')", (4, 3), False),
    ("pmax", "lambda a: lax.pmax(a, 'i')", (4, 3), False),
    ("pmean", "lambda a: lax.pmean(a, 'i')", (4, 3), False),
    ("all_gather_axis1_tiled", "lambda a: lax.all_gather(a, 'i', axis=1, tiled=True)",
     (3, 2, 4), False),
    ("psum_scatter", "lambda a: lax.psum_scatter(a, 'i')", (4, 4, 3), False),
    ("psum_scatter_dim1_tiled",
     "lambda a: lax.psum_scatter(a, 'i', scatter_dimension=1, tiled=True)", (2, 3, 4), False),
    ("all_to_all_0_1", "lambda a: lax.all_to_all(a, 'i', 0, 1)", (4, 4, 3), False),
    ("all_to_all_1_0", "lambda a: lax.all_to_all(a, 'i', 1, 0)", (3, 2, 3), False),
    ("all_to_all_tiled_1_0", "lambda a: lax.all_to_all(a, 'i', 1, 0, tiled=True)",
     (2, 3, 4), False),
    ("all_to_all_tiled_0_1", "lambda a: lax.all_to_all(a, 'i', 0, 1, tiled=True)",
     (2, 4, 3), False),
    ("pswapaxes", "lambda a: lax.pswapaxes(a, 'i', 1)", (3, 2, 3), False),
    ("ppermute_cycle", "lambda a: lax.ppermute(a, 'i', [(0, 2), (2, 1), (1, 0)])", (3, 2), False),
    ("pshuffle", "lambda a: lax.pshuffle(a, 'i', [2, 0, 3, 1])", (4, 2), False),
    ("axis_index_pair", "lambda a: a + lax.axis_index(('i', 'j'))", (3, 2), True),
    ("psum_scatter_outer", "lambda a: lax.psum_scatter(a, 'i')", (3, 2, 3), True),
    ("all_to_all_outer", "lambda a: lax.all_to_all(a, 'i', 0, 0)", (2, 3, 2), True),
    ("grad_psum_scatter_tiled",
     "jax.grad(lambda a: (lax.psum_scatter(a, 'i', tiled=True) ** 2).sum())", (2, 4), False),
    ("grad_all_to_all",
     "jax.grad(lambda a: (lax.all_to_all(a, 'i', 0, 1) * jnp.arange(3.0)).sum())",
     (3, 3, 2), False),
    ("grad_all_gather_tiled",
     "jax.grad(lambda a: (lax.all_gather(a, 'i', tiled=True) ** 3).sum())", (3, 2), False),
]

def record_lowering():
  mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
  out = {}
  for case_id, src, shape in LOWERING_CASES:
    body = eval(src)
    f = jax.shard_map(lambda a: body(a[0])[None], mesh=mesh, in_specs=P(("x", "y")),
                      out_specs=P(("x", "y")), check_vma=False)
    text = jax.jit(f).lower(jnp.zeros((8, *shape), jnp.float32)).as_text()
    jaxpr = jax.make_jaxpr(body, axis_env=[("x", 4), ("y", 2)])(np.zeros(shape, np.float32))
    out[case_id] = {"fn": src, "shape": list(shape), "ops": mlir_ops.collective_ops(text),
                    "jaxpr": str(jaxpr)}
  return out


def record_vmap():
  out = {}
  for seed, (case_id, src, shape, nested) in enumerate(VMAP_CASES):
    x = np.random.default_rng(seed).integers(-4, 5, size=shape).astype(np.float32)
    f = eval(src)
    g = jax.vmap(jax.vmap(f, axis_name="j"), axis_name="i") if nested else jax.vmap(
        f, axis_name="i")
    try:
      y = np.asarray(g(x)).tolist()
    except Exception as e:  # a JAX batching-rule bug: recorded as None
      y = None
      print(f"{case_id}: JAX raised {type(e).__name__}: {e}".splitlines()[0])
    out[case_id] = {"fn": src, "nested": nested, "x": x.tolist(), "y": y}
  return out


def main():
  golden = {"jax_version": jax.__version__, "lowering": record_lowering(),
            "vmap": record_vmap()}
  with open(OUT, "w") as f:
    json.dump(golden, f, indent=1, sort_keys=True)
    f.write("\n")
  print(f"wrote {OUT}: {len(golden['lowering'])} lowering, {len(golden['vmap'])} vmap cases")


if __name__ == "__main__":
  main()
