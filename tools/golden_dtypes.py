"""Writes tests/golden/promotion.json from real JAX (run with JAX installed).

    /work/venvs/jaxref/bin/python tools/golden_dtypes.py

The script runs itself twice in subprocesses, with JAX_ENABLE_X64=0 and =1,
because x64 is read once at JAX's start-up.  For each mode it records, over 18
types (15 dtypes and the weak types of the Python scalars 1, 1.0 and 1j):

* ``result_type[a][b]``: ``jax.dtypes.result_type(a, b, return_weak_type_flag=True)``
  as ``[dtype name, weak flag]``, dtypes passed as ``np.dtype`` objects (strong)
  and weak types as Python scalars;
* ``add_disagrees_with_result_type``: the pairs (none at 0.10.2) where the dtype and
  ``weak_type`` of ``jnp.add(x, y)``, a strong operand being ``jnp.zeros((), a)``,
  differ from ``result_type``;
* ``strict[a][b]``: result_type under ``jax_numpy_dtype_promotion='strict'``, or
  ``{"error": class name, "message": text}``;
* ``promote_types[a][b]``: ``jnp.promote_types`` with weak types given as the
  Python types ``int``, ``float``, ``complex``;
* ``unary``: result_type of single arguments (Python types and values, None);
* ``user_dtype_warnings`` and ``short_names``.
"""
import json
import os
import subprocess
import sys
import warnings

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   "tests", "golden", "promotion.json")

STRONG = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
          "bfloat16", "float16", "float32", "float64", "complex64", "complex128"]
WEAK_VALUES = {"weak_int": 1, "weak_float": 1.0, "weak_complex": 1j}
WEAK_TYPES = {"weak_int": int, "weak_float": float, "weak_complex": complex}
NAMES = STRONG + list(WEAK_VALUES)


def _record(fn):
  try:
    dtype, weak = fn()
    return [str(dtype), bool(weak)]
  except Exception as e:  # the class and text are the golden
    return {"error": type(e).__name__, "message": str(e)}


def worker():
  import jax
  import jax.numpy as jnp
  import numpy as np
  from jax import core

  warnings.simplefilter("ignore")  # x64 truncation warnings are recorded separately
  value = lambda name: WEAK_VALUES[name] if name in WEAK_VALUES else np.dtype(name)
  dtype_like = lambda name: WEAK_TYPES[name] if name in WEAK_TYPES else np.dtype(name)
  operand = lambda name: WEAK_VALUES[name] if name in WEAK_VALUES else jnp.zeros((), name)

  def rt(*args):
    return lambda: jax.dtypes.result_type(*args, return_weak_type_flag=True)

  def add(a, b):
    z = jnp.add(operand(a), operand(b))
    return z.dtype, z.aval.weak_type

  out = {name: {} for name in ("result_type", "add", "strict", "promote_types")}
  for a in NAMES:
    for table in out.values():
      table[a] = {}
    for b in NAMES:
      out["result_type"][a][b] = _record(rt(value(a), value(b)))
      out["add"][a][b] = _record(lambda: add(a, b))
      with jax.numpy_dtype_promotion("strict"):
        out["strict"][a][b] = _record(rt(value(a), value(b)))
      out["promote_types"][a][b] = _record(
          lambda: (jnp.promote_types(dtype_like(a), dtype_like(b)), False))

  unary = {"int": int, "float": float, "complex": complex, "bool": bool, "True": True,
           "1": 1, "1.0": 1.0, "1j": 1j, "None": None, "np.float64": np.float64,
           "np.int64(1)": np.int64(1), "np.zeros(2)": np.zeros(2), "'bfloat16'": "bfloat16"}
  out["unary"] = {k: _record(rt(v)) for k, v in unary.items()}

  warnings.simplefilter("always")
  user = {"zeros_float64": lambda: jnp.zeros(3, dtype=jnp.float64),
          "array_uint64": lambda: jnp.array(1, dtype=jnp.uint64),
          "ones_complex128": lambda: jnp.ones(2, dtype="complex128")}
  out["user_dtype_warnings"] = {}
  for key, fn in user.items():
    with warnings.catch_warnings(record=True) as caught:
      warnings.simplefilter("always")
      fn()
    out["user_dtype_warnings"][key] = [f"{w.category.__name__}: {w.message}" for w in caught]

  out["short_names"] = {
      name: core.ShapedArray((), np.dtype(name)).str_short(short_dtypes=True)[:-2]
      for name in STRONG + ["float8_e4m3fn", "int4", "uint4"]}
  out["short_names"]["float0"] = core.ShapedArray(
      (), jax.dtypes.float0).str_short(short_dtypes=True)[:-2]
  json.dump(out, sys.stdout)


def _dumps(obj, depth=0):
  """JSON with one line per table row (objects deeper than three levels inline)."""
  if not isinstance(obj, dict) or not obj or depth == 3:
    return json.dumps(obj, sort_keys=True)
  pad = " " * (depth + 1)
  items = [f"{pad}{json.dumps(k)}: {_dumps(v, depth + 1)}" for k, v in sorted(obj.items())]
  return "{\n" + ",\n".join(items) + "\n" + " " * depth + "}"


def main():
  import jax
  golden = {"jax_version": jax.__version__, "types": NAMES,
            "weak_values": {k: repr(v) for k, v in WEAK_VALUES.items()}}
  for x64 in (False, True):
    env = dict(os.environ, JAX_ENABLE_X64=str(int(x64)), JAX_PLATFORMS="cpu")
    text = subprocess.run([sys.executable, __file__, "--worker"], env=env, check=True,
                          capture_output=True, text=True).stdout
    golden["x64_on" if x64 else "x64_off"] = json.loads(text)
  for mode in ("x64_off", "x64_on"):
    tables = golden[mode]
    add = tables.pop("add")
    tables["add_disagrees_with_result_type"] = {
        f"{a},{b}": add[a][b] for a in NAMES for b in NAMES
        if add[a][b] != tables["result_type"][a][b]}
  with open(OUT, "w") as f:
    f.write(_dumps(golden) + "\n")
  print(f"wrote {OUT} (jax {jax.__version__})")


if __name__ == "__main__":
  worker() if sys.argv[1:] == ["--worker"] else main()
