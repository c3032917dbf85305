"""Writes tests/golden/extra_dtypes.json from real JAX (run with JAX installed).

    .venv-jax/bin/python tools/golden_extra_dtypes.py

Covers the narrow dtypes that tools/golden_dtypes.py leaves out: the sub-byte
integers (int1/2/4, uint1/2/4) and the 4-, 6- and 8-bit floats.  It runs
itself in subprocesses with JAX_ENABLE_X64=0 and =1 and records, per mode:

* ``promote_types[a][b]``: ``jnp.promote_types(a, b)`` for every pair in which
  at least one side is a narrow dtype, the other side any of the narrow types,
  the 15 dtypes of promotion.json, or the weak Python types int/float/complex;
* ``result_type[a][b]`` and ``strict[a][b]``: ``jax.dtypes.result_type(a, b,
  return_weak_type_flag=True)`` over the same pairs (weak sides given as the
  Python values 1, 1.0, 1j), standard and strict promotion;

and, once: ``finfo``/``iinfo`` fields of each narrow dtype, its short name in
printed avals, and JAX's internal ``to_inexact_dtype`` of it.
Results are ``[dtype name, weak flag]`` or ``["error", class, n, names]``:
the error's text is ``messages[n]`` with ``{dtypes}`` replaced by ``names``,
the parenthesised list of input dtypes (texts repeat, so each is stored once).
"""
import json
import os
import re
import subprocess
import sys
import warnings

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   "tests", "golden", "extra_dtypes.json")

NARROW = ["int1", "int2", "int4", "uint1", "uint2", "uint4", "float4_e2m1fn",
          "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
          "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
          "float8_e5m2fnuz", "float8_e8m0fnu"]
STRONG = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
          "bfloat16", "float16", "float32", "float64", "complex64", "complex128"]
WEAK_VALUES = {"weak_int": 1, "weak_float": 1.0, "weak_complex": 1j}
WEAK_TYPES = {"weak_int": int, "weak_float": float, "weak_complex": complex}
OTHERS = NARROW + STRONG + list(WEAK_VALUES)


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

  warnings.simplefilter("ignore")
  dt = lambda name: getattr(jnp, name).dtype if name in NARROW else np.dtype(name)
  value = lambda name: WEAK_VALUES[name] if name in WEAK_VALUES else dt(name)
  dtype_like = lambda name: WEAK_TYPES[name] if name in WEAK_TYPES else dt(name)

  def rt(*args):
    return lambda: jax.dtypes.result_type(*args, return_weak_type_flag=True)

  out = {name: {} for name in ("result_type", "strict", "promote_types")}
  pairs = [(a, b) for a in NARROW for b in OTHERS]
  pairs += [(b, a) for a, b in pairs if b not in NARROW]
  for a, b in pairs:
    out["result_type"].setdefault(a, {})[b] = _record(rt(value(a), value(b)))
    with jax.numpy_dtype_promotion("strict"):
      out["strict"].setdefault(a, {})[b] = _record(rt(value(a), value(b)))
    out["promote_types"].setdefault(a, {})[b] = _record(
        lambda: (jnp.promote_types(dtype_like(a), dtype_like(b)), False))
  json.dump(out, sys.stdout)


def once():
  import jax
  import jax._src.dtypes
  import jax.numpy as jnp
  from jax import core

  out = {"finfo": {}, "iinfo": {}, "short_names": {}, "to_inexact": {}}
  for name in NARROW:
    d = getattr(jnp, name).dtype
    out["short_names"][name] = core.ShapedArray((), d).str_short(short_dtypes=True)[:-2]
    out["to_inexact"][name] = str(jax._src.dtypes.to_inexact_dtype(d))
    if name.startswith("float"):
      fi = jnp.finfo(d)
      out["finfo"][name] = {k: str(getattr(fi, k)) for k in (
          "bits", "eps", "epsneg", "max", "min", "tiny", "smallest_normal",
          "smallest_subnormal", "resolution", "nmant", "nexp", "maxexp", "minexp",
          "machep", "negep", "iexp", "precision", "dtype")}
    else:
      ii = jnp.iinfo(d)
      out["iinfo"][name] = {k: str(getattr(ii, k)) for k in ("bits", "min", "max", "dtype")}
  return out


def main():
  import jax
  golden = {"jax_version": jax.__version__, "narrow": NARROW, "others": OTHERS}
  for x64 in (False, True):
    env = dict(os.environ, JAX_ENABLE_X64=str(int(x64)), JAX_PLATFORMS="cpu")
    text = subprocess.run([sys.executable, __file__, "--worker"], env=env, check=True,
                          capture_output=True, text=True).stdout
    golden["x64_on" if x64 else "x64_off"] = json.loads(text)
  golden.update(once())
  messages = {}
  for mode in ("x64_off", "x64_on"):
    for table in golden[mode].values():
      for row in table.values():
        for b, v in row.items():
          if isinstance(v, dict):
            names = re.search(r"\([^()]*\)", v["message"]).group(0)
            template = v["message"].replace(names, "{dtypes}", 1)
            n = messages.setdefault(template, len(messages))
            row[b] = ["error", v["error"], n, names]
  golden["messages"] = list(messages)
  with open(OUT, "w") as f:
    json.dump(golden, f, sort_keys=True, indent=None, separators=(",", ":"))
    f.write("\n")
  print(f"wrote {OUT} (jax {jax.__version__})")


if __name__ == "__main__":
  worker() if sys.argv[1:] == ["--worker"] else main()
