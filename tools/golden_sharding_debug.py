"""Records tests/golden/sharding_debug.json: JAX's output for building sharded arrays from
pieces (error messages), `visualize_sharding` (printed tables) and `inspect_array_sharding`
(the shardings it reports under jit).

Each case is an expression, evaluated on JAX here and on xjax by the tests
(tests/multidevice/test_array_construction.py, test_visualize.py) with the same names in
scope (`names` below, which the tests import), so the cases live in the golden file.
Run with real JAX (and `rich`) on 8 forced CPU devices:
  XLA_FLAGS=--xla_force_host_platform_device_count=8 \
    .venv-jax/bin/python tools/golden_sharding_debug.py
"""
import contextlib
import io
import json
import os

import numpy as np

# Environment variables that make rich print colors; the color cases set them.
COLOR_ENV = {"FORCE_COLOR": "1", "COLORTERM": "truecolor", "TERM": "xterm-256color"}
NO_COLOR_ENV = ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLORTERM")


def names(jax, jnp, Mesh, NS, P, AxisType, SingleDeviceSharding):
  """The names every case expression may use (the tests build the same with xjax)."""
  devs = jax.devices()
  mesh = jax.make_mesh((2, 4), ("x", "y"))
  amesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
  data = np.arange(64, dtype=np.float32).reshape(8, 8)

  def pieces(sharding, shape=(8, 8), values=data):
    return [jax.device_put(values[i], d) for d, i in sharding.devices_indices_map(shape).items()]

  return dict(jax=jax, jnp=jnp, lax=jax.lax, np=np, Mesh=Mesh, NS=NS, P=P, AxisType=AxisType,
              SingleDeviceSharding=SingleDeviceSharding, devs=devs, mesh=mesh, amesh=amesh,
              data=data, pieces=pieces, s=NS(mesh, P("x", "y")), sa=NS(amesh, P("x", "y")))


MAKE = "jax.make_array_from_single_device_arrays"
CONSTRUCTION_ERRORS = {
    "too_few": f"{MAKE}((8, 8), s, pieces(s)[:7])",
    "too_many": f"{MAKE}((8, 8), s, pieces(s) + pieces(s)[:1])",
    "duplicate_device": f"{MAKE}((8, 8), s, pieces(s)[:7] + pieces(s)[:1])",
    "devices_not_in_sharding":
        f"{MAKE}((8,), NS(Mesh(np.array(devs[4:]), ('x',)), P('x')), "
        "[jax.device_put(data[0, 2 * i:2 * i + 2], devs[i]) for i in range(4)])",
    "some_devices_not_in_sharding":
        f"{MAKE}((8,), NS(Mesh(np.array(devs[4:]), ('x',)), P('x')), "
        "[jax.device_put(data[0, 2 * i:2 * i + 2], devs[3 + i]) for i in range(4)])",
    "single_device_wrong_device":
        f"{MAKE}((8,), SingleDeviceSharding(devs[3]), [jax.device_put(data[0], devs[2])])",
    "shard_shape_explicit_mesh":
        f"{MAKE}((8, 8), s, [jax.device_put(np.zeros((4, 4), np.float32), d) for d in devs])",
    "shard_shape_auto_mesh":
        f"{MAKE}((8, 8), sa, [jax.device_put(np.zeros((4, 4), np.float32), d) for d in devs])",
    "global_shape_mismatch": f"{MAKE}((8, 16), s, pieces(s))",
    "dtype_differs":
        f"{MAKE}((8, 8), sa, pieces(sa)[:7] + [jax.device_put(np.zeros((4, 2), np.int32), "
        "devs[7])])",
    "dtype_argument": f"{MAKE}((8, 8), s, pieces(s), dtype=np.int32)",
    "no_arrays_no_dtype": f"{MAKE}((8, 8), s, [])",
    "no_arrays_with_dtype": f"{MAKE}((8, 8), s, [], dtype=np.float32)",
    "numpy_elements":
        f"{MAKE}((8, 8), s, [data[i] for i in s.devices_indices_map((8, 8)).values()])",
    "multi_device_element": f"{MAKE}((8, 8), s, [jax.device_put(data, s)] * 8)",
    "generator": f"{MAKE}((8, 8), s, (a for a in pieces(s)))",
    "callback_wrong_shape": "jax.make_array_from_callback((8, 8), s, lambda i: data)",
    "callback_dtype_argument":
        "jax.make_array_from_callback((8, 8), s, lambda i: data[i], dtype=np.int8)",
    "callback_dtype_differs":
        "jax.make_array_from_callback((8,), NS(amesh, P('y')), "
        "lambda i: np.zeros(2, np.int32 if i[0].start else np.float32))",
    "local_data_global_shape":
        "jax.make_array_from_process_local_data(s, data, (16, 8))",
    "local_data_tree_global_shape":
        "jax.make_array_from_process_local_data(NS(mesh, P()), {'a': data[0], 'b': data[1]}, "
        "{'a': (8,), 'b': (16,)})",
}

VISUALIZE = {
    # name: (shape, sharding expression, keyword arguments as an expression)
    "2d_xy": ((8, 8), "NS(mesh, P('x', 'y'))", "{}"),
    "2d_yx": ((8, 8), "NS(mesh, P('y', 'x'))", "{}"),
    "2d_cols": ((8, 8), "NS(mesh, P(None, 'y'))", "{}"),
    "2d_rows_partly_replicated": ((8, 8), "NS(mesh, P('x'))", "{}"),
    "2d_replicated": ((8, 8), "NS(mesh, P())", "{}"),
    "2d_wide": ((4, 64), "NS(mesh, P('x', 'y'))", "{}"),
    "2d_tall": ((64, 4), "NS(mesh, P('y', 'x'))", "{}"),
    "2d_both_axes_on_cols": ((8, 16), "NS(mesh, P(None, ('x', 'y')))", "{}"),
    "2d_scale_2": ((8, 8), "NS(mesh, P('x', 'y'))", "{'scale': 2.0}"),
    "2d_scale_half": ((8, 8), "NS(mesh, P('x', 'y'))", "{'scale': 0.5}"),
    "2d_narrow": ((8, 8), "NS(mesh, P('x', 'y'))", "{'min_width': 3, 'max_width': 40}"),
    "2d_permuted_devices":
        ((8, 8), "NS(Mesh(np.array(devs)[[3, 1, 0, 2, 7, 5, 4, 6]].reshape(2, 4), ('x', 'y')), "
         "P('x', 'y'))", "{}"),
    "2d_four_devices": ((4, 4), "NS(Mesh(np.array(devs[4:]).reshape(2, 2), ('a', 'b')), P('b'))",
                        "{}"),
    "2d_single_device": ((4, 4), "SingleDeviceSharding(devs[3])", "{}"),
    "2d_odd": ((8, 3), "NS(jax.make_mesh((8,), ('d',)), P('d'))", "{}"),
    "1d_both_axes": ((16,), "NS(mesh, P(('x', 'y')))", "{}"),
    "1d_both_axes_reversed": ((16,), "NS(mesh, P(('y', 'x')))", "{}"),
    "1d_partly_replicated": ((16,), "NS(mesh, P('y'))", "{}"),
    "1d_replicated": ((16,), "NS(mesh, P())", "{}"),
    "1d_eight": ((32,), "NS(jax.make_mesh((8,), ('d',)), P('d'))", "{}"),
    "1d_max_width": ((32,), "NS(jax.make_mesh((8,), ('d',)), P('d'))", "{'max_width': 30}"),
    "color_2d": ((8, 8), "NS(mesh, P('x', 'y'))",
                 "{'color_map': lambda v: (v, 0.5, 1 - v, 1.0)}"),
    "color_1d": ((16,), "NS(mesh, P('y'))", "{'color_map': lambda v: (0.9, v, 0.2)}"),
    # No color_map and no matplotlib (JAX's environment has none): no colors after all.
    "color_default": ((8, 8), "NS(mesh, P('x', 'y'))", "{}"),
    "color_off": ((8, 8), "NS(mesh, P('x', 'y'))",
                  "{'use_color': False, 'color_map': lambda v: (v, 0.5, 1 - v, 1.0)}"),
}

VISUALIZE_ERRORS = {
    "rank_3": "jax.debug.visualize_sharding((4, 4, 4), NS(mesh, P('x', 'y')))",
    "rank_0": "jax.debug.visualize_sharding((), NS(mesh, P()))",
    "array_rank_3": "jax.debug.visualize_array_sharding(jax.device_put(np.zeros((2, 4, 4)), "
                    "NS(mesh, P('x', 'y'))))",
}

INSPECT = {
    # name: (the argument's sharding, the inspected value as an expression of x), under jit
    "sin": ("NS(amesh, P('x', 'y'))", "jnp.sin(x)"),
    "explicit_input": ("NS(mesh, P('x', 'y'))", "jnp.sin(x)"),
    "partly_replicated": ("NS(amesh, P('y'))", "x * 2"),
    "sum_rows": ("NS(amesh, P('x', 'y'))", "x.sum(axis=0)"),
    "sum_cols": ("NS(amesh, P('x', 'y'))", "x.sum(axis=1)"),
    "sum_all": ("NS(amesh, P('x', 'y'))", "x.sum()"),
    "transpose": ("NS(amesh, P('x', 'y'))", "x.T"),
    "constraint": ("NS(amesh, P('x', 'y'))",
                   "lax.with_sharding_constraint(x, NS(amesh, P(None, ('x', 'y'))))"),
    "replicated": ("NS(amesh, P())", "x + 1"),
    "one_device": ("SingleDeviceSharding(devs[0])", "jnp.sin(x)"),
}


def _error(fn):
  try:
    fn()
  except Exception as e:  # noqa: BLE001 - recording whatever JAX raises
    return [type(e).__name__, str(e)]
  return None


def _printed(fn, color: bool) -> str:
  saved = {k: os.environ.pop(k) for k in (*NO_COLOR_ENV, *COLOR_ENV) if k in os.environ}
  if color:
    os.environ.update(COLOR_ENV)
  try:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
      fn()
    return out.getvalue()
  finally:
    for k in COLOR_ENV:
      os.environ.pop(k, None)
    os.environ.update(saved)


def main():
  import jax
  import jax.numpy as jnp
  from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding
  assert len(jax.devices()) == 8, "set XLA_FLAGS=--xla_force_host_platform_device_count=8"
  env = names(jax, jnp, Mesh, NamedSharding, PartitionSpec, AxisType, SingleDeviceSharding)
  out = {"jax_version": jax.__version__, "construction_errors": {}, "visualize": {},
         "visualize_errors": {}, "inspect": {}}
  for name, expr in CONSTRUCTION_ERRORS.items():
    err = _error(lambda: eval(expr, dict(env)))
    assert err is not None, name
    out["construction_errors"][name] = {"expr": expr, "error": err}
  for name, (shape, sharding, kwargs) in VISUALIZE.items():
    fn = lambda: jax.debug.visualize_sharding(shape, eval(sharding, dict(env)),
                                              **eval(kwargs, dict(env)))
    out["visualize"][name] = {"shape": list(shape), "sharding": sharding, "kwargs": kwargs,
                              "color": name.startswith("color"),
                              "printed": _printed(fn, name.startswith("color"))}
  for name, expr in VISUALIZE_ERRORS.items():
    out["visualize_errors"][name] = {"expr": expr, "error": _error(lambda: eval(expr, dict(env)))}
  for name, (sharding, expr) in INSPECT.items():
    seen = []
    x = jax.device_put(env["data"], eval(sharding, dict(env)))

    def f(x):
      jax.debug.inspect_array_sharding(eval(expr, dict(env, x=x)), callback=seen.append)
      return x
    jax.jit(f)(x)
    eager = []
    jax.debug.inspect_array_sharding(x, callback=eager.append)
    out["inspect"][name] = {"sharding": sharding, "expr": expr, "jit": [repr(s) for s in seen],
                            "eager": [repr(s) for s in eager]}
  path = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "sharding_debug.json")
  with open(path, "w") as f:
    json.dump(out, f, indent=1, sort_keys=True, ensure_ascii=False)
    f.write("\n")
  print(f"wrote {path}")


if __name__ == "__main__":
  main()
