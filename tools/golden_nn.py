"""Records goldens for xjax.nn (tests/golden/nn_initializers.json) with *real* JAX.

Run with the reference virtualenv (never with xjax):

    .venv-jax/bin/python tools/golden_nn.py

Initializer cases are data (name, factory args, key seed, shape, dtype) so
that tests/nn/test_initializers.py can replay them with xjax; each is recorded
in three modes (x32 and x64 with JAX's original threefry layout, x32 with the
partitionable one), each mode in a subprocess of its own since JAX's flags
must be set before anything is traced. Arrays are stored exactly, as dtype,
shape and the hex of their bytes. Attention cases store their inputs the same
way, with JAX's outputs.
"""
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "tests", "golden", "nn_initializers.json")
MODES = {"x32-original": (False, False), "x32-partitionable": (False, True),
         "x64-original": (True, False)}


def initializer_cases(x64):
  """(id, name, factory args, factory kwargs, seed, shape, dtype or None)."""
  real = ["float32", "float16", "bfloat16"] + (["float64"] if x64 else [])
  cplx = ["complex64"] + (["complex128"] if x64 else [])
  cases = []
  add = lambda name, args, kw, seed, shape, dtype: cases.append(
      (f"{name}{args}{sorted(kw.items())}-{seed}-{shape}-{dtype}", name, args, kw, seed,
       shape, dtype))
  for dtype in real + [None]:
    add("zeros", [], {}, 0, [2, 3], dtype)
    add("ones", [], {}, 0, [3], dtype)
    add("constant", [0.25], {}, 0, [2, 2], dtype)
    add("uniform", [], {}, 0, [4, 5], dtype)
    add("uniform", [0.3], {}, 1, [7], dtype)
    add("normal", [], {}, 0, [4, 5], dtype)
    add("normal", [2.5], {}, 3, [3, 2, 2], dtype)
    add("truncated_normal", [], {}, 0, [4, 5], dtype)
    add("truncated_normal", [0.5], {"lower": -1.0, "upper": 1.5}, 2, [6, 3], dtype)
  for dtype in real[:1] + cplx:
    add("constant", [1.5], {}, 0, [3], dtype)
  for mode in ["fan_in", "fan_out", "fan_avg", "fan_geo_avg"]:
    for dist in ["truncated_normal", "normal", "uniform"]:
      for dtype in real + cplx:
        if dist == "normal" and dtype.startswith("complex"):
          continue  # JAX's normal of a complex dtype: covered by the random goldens
        add("variance_scaling", [1.3, mode, dist], {}, 0, [5, 4], dtype)
      add("variance_scaling", [2.0, mode, dist], {}, 5, [3, 3, 4, 6], "float32")
  add("variance_scaling", [1.0, "fan_in", "normal"], {"in_axis": 0, "out_axis": 2}, 1,
      [3, 4, 5], "float32")
  add("variance_scaling", [1.0, "fan_avg", "uniform"],
      {"in_axis": [0, 1], "out_axis": [3], "batch_axis": 2}, 2, [2, 3, 4, 5], "float32")
  add("variance_scaling", [0.5, "fan_out", "truncated_normal"],
      {"in_axis": 1, "out_axis": 0, "batch_axis": [2]}, 3, [4, 6, 2], "complex64")
  for name in ["glorot_uniform", "glorot_normal", "xavier_uniform", "xavier_normal",
               "he_uniform", "he_normal", "kaiming_uniform", "kaiming_normal",
               "lecun_uniform", "lecun_normal"]:
    for dtype in real[:1] + cplx[:1] + [None]:
      add(name, [], {}, 0, [6, 4], dtype)
    add(name, [], {"in_axis": 1, "out_axis": 0, "batch_axis": 2}, 7, [3, 5, 2], "float32")
  for dtype in real + [None]:
    add("orthogonal", [], {}, 0, [4, 3], dtype)
  for dtype in cplx:
    add("orthogonal", [], {}, 0, [3, 3], dtype)
  add("orthogonal", [2.0], {}, 1, [3, 5], "float32")
  add("orthogonal", [], {"column_axis": 0}, 2, [3, 2, 4], "float32")
  add("orthogonal", [], {"column_axis": 1}, 3, [2, 4, 3], "float32")
  add("orthogonal", [], {}, 4, [0, 3], "float32")
  add("delta_orthogonal", [], {}, 0, [3, 2, 4], "float32")
  add("delta_orthogonal", [0.5], {}, 1, [3, 3, 3, 3], "float32")
  add("delta_orthogonal", [], {}, 2, [2, 3, 3, 2, 2], None)
  return cases


def error_cases():
  """(id, name, factory args, factory kwargs, shape, dtype): initializer calls that raise."""
  return [
      ("vs-1d", "variance_scaling", [1.0, "fan_in", "normal"], {}, [5], "float32"),
      ("vs-mode", "variance_scaling", [1.0, "fan_bad", "normal"], {}, [5, 4], "float32"),
      ("vs-dist", "variance_scaling", [1.0, "fan_in", "cauchy"], {}, [5, 4], "float32"),
      ("orth-1d", "orthogonal", [], {}, [5], "float32"),
      ("delta-2d", "delta_orthogonal", [], {}, [3, 4], "float32"),
      ("delta-wide", "delta_orthogonal", [], {}, [3, 4, 2], "float32"),
  ]


def attention_cases():
  """(id, {shapes of q, k, v, bias, mask, dtype}, keyword arguments)."""
  base = {"q": [2, 3, 4, 8], "k": [2, 5, 2, 8], "dtype": "float32"}
  return [
      ("plain", {"q": [2, 3, 2, 8], "k": [2, 5, 2, 8], "dtype": "float32"}, {}),
      ("gqa", base, {}),
      ("mqa-causal", {"q": [1, 4, 3, 4], "k": [1, 4, 1, 4], "dtype": "float32"},
       {"is_causal": True}),
      ("unbatched", {"q": [3, 2, 4], "k": [6, 2, 4], "dtype": "float32"}, {"scale": 0.7}),
      ("bias-mask", dict(base, bias=[2, 4, 3, 5], mask=[1, 1, 3, 5]), {}),
      ("bias-bcast", dict(base, bias=[1, 1, 3, 5]), {"is_causal": True}),
      ("seqlens", base, {"query_seq_lengths": [2, 3], "key_value_seq_lengths": [5, 1]}),
      ("window", {"q": [1, 6, 2, 4], "k": [1, 6, 2, 4], "dtype": "float32"},
       {"local_window_size": [1, 2]}),
      ("residual", dict(base, mask=[2, 4, 3, 5]), {"return_residual": True}),
      ("f64", dict(base, dtype="float64"), {"is_causal": True}),
  ]


def _enc(value):
  import numpy as np
  value = np.asarray(value)
  return {"dtype": value.dtype.name, "shape": list(value.shape),
          "hex": np.ascontiguousarray(value).tobytes().hex()}


def record(x64, partitionable):
  import jax
  import jax.numpy as jnp
  import numpy as np
  jax.config.update("jax_enable_x64", x64)
  jax.config.update("jax_threefry_partitionable", partitionable)
  from jax.nn import initializers
  out = {}
  for case_id, name, args, kw, seed, shape, dtype in initializer_cases(x64):
    init = getattr(initializers, name)
    init = init if name in ("zeros", "ones") else init(*args, **kw)
    key = jax.random.key(seed)
    out[case_id] = {"name": name, "args": args, "kwargs": kw, "seed": seed, "shape": shape,
                    "dtype": dtype}
    try:
      value = init(key, tuple(shape)) if dtype is None else init(key, tuple(shape), dtype)
      out[case_id]["out"] = _enc(value)
    except Exception as e:  # recorded: xjax must raise the same class
      out[case_id]["error"] = type(e).__name__
  return out


def record_errors():
  import jax
  from jax.nn import initializers
  out = {}
  for case_id, name, args, kw, shape, dtype in error_cases():
    try:
      getattr(initializers, name)(*args, **kw)(jax.random.key(0), tuple(shape), dtype)
    except Exception as e:
      out[case_id] = {"name": name, "args": args, "kwargs": kw, "shape": shape,
                      "dtype": dtype, "error": type(e).__name__, "message": str(e)}
    else:
      raise AssertionError(f"{case_id} did not raise")
  return out


def record_attention():
  import jax
  import numpy as np
  jax.config.update("jax_enable_x64", True)
  rng = np.random.default_rng(0)
  out = {}
  for case_id, shapes, kw in attention_cases():
    dtype = shapes["dtype"]
    inputs = {"query": rng.standard_normal(shapes["q"]).astype(dtype),
              "key": rng.standard_normal(shapes["k"]).astype(dtype),
              "value": rng.standard_normal(shapes["k"]).astype(dtype)}
    if "bias" in shapes:
      inputs["bias"] = rng.standard_normal(shapes["bias"]).astype(dtype)
    if "mask" in shapes:
      inputs["mask"] = rng.random(shapes["mask"]) < 0.7
    call_kw = dict(kw)
    for name in ("query_seq_lengths", "key_value_seq_lengths"):
      if name in call_kw:
        call_kw[name] = np.array(call_kw[name], np.int32)
    if "local_window_size" in call_kw:
      call_kw["local_window_size"] = tuple(call_kw["local_window_size"])
    result = jax.nn.dot_product_attention(**inputs, **call_kw)
    results = result if isinstance(result, tuple) else (result,)
    out[case_id] = {"inputs": {k: _enc(v) for k, v in inputs.items()}, "kwargs": kw,
                    "outs": [_enc(r) for r in results]}
  return out


def main():
  if len(sys.argv) == 2:  # child: one mode
    arg = sys.argv[1]
    result = (record_attention() if arg == "attention" else record_errors() if arg == "errors"
              else record(*MODES[arg]))
    json.dump(result, sys.stdout)
    return
  goldens = {}
  for mode in [*MODES, "errors", "attention"]:
    proc = subprocess.run([sys.executable, __file__, mode], capture_output=True, text=True,
                          check=True)
    goldens[mode] = json.loads(proc.stdout)
  with open(OUT, "w") as f:
    json.dump(goldens, f, indent=0, sort_keys=True)
    f.write("\n")
  print(f"wrote {OUT}: " + ", ".join(f"{m} {len(v)}" for m, v in goldens.items()))


if __name__ == "__main__":
  main()
