"""Regenerates tests/golden/{jaxprs,errors,reprs}.json with *real* JAX.

Run with the reference venv (never with xjax):

    /work/venvs/jaxref/bin/python tools/make_goldens.py

The case definitions live in tests/golden/{jaxpr,error,repr}_cases.py and are
shared with xjax's tests.  Each x64 mode is run in its own subprocess (JAX's
x64 flag must be set before anything is traced); the default mode (x64 off)
records every case, the x64 mode only the ids in each module's ``X64_IDS``.
"""

import argparse
import importlib
import json
import os
import subprocess
import sys
import traceback
import warnings

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(REPO, "tests", "golden")

KINDS = {
    "jaxprs": "jaxpr_cases",
    "errors": "error_cases",
    "reprs": "repr_cases",
}


def _load(name):
  if GOLDEN not in sys.path:
    sys.path.insert(0, GOLDEN)
  return importlib.import_module(name)


def _libs():
  import jax
  import jax.numpy as jnp
  import numpy as np
  from jax import lax
  return jax, jnp, lax, np


def _warnings(caught, normalize):
  return [f"{w.category.__name__}: {normalize(str(w.message))}" for w in caught]


def _mro(cls):
  return [f"{c.__module__}.{c.__qualname__}" for c in cls.__mro__
          if c is not object]


def _exc_record(e, normalize):
  return {
      "type": type(e).__name__,
      "module": type(e).__module__,
      "mro": _mro(type(e)),
      "message": normalize(str(e)),
  }


def run_jaxprs(ids, normalize):
  jax, jnp, lax, np = _libs()
  mod = _load("jaxpr_cases")
  out = {}
  for case in mod.cases(jax, jnp, lax, np):
    case_id, fn, args = case[:3]
    kw = case[3] if len(case) > 3 else {}
    if ids is not None and case_id not in ids:
      continue
    assert case_id not in out, case_id
    rec = {}
    if kw:
      rec["make_jaxpr_kwargs"] = {k: repr(v) for k, v in kw.items()}
    with warnings.catch_warnings(record=True) as caught:
      warnings.simplefilter("always")
      try:
        closed = jax.make_jaxpr(fn, **kw)(*args)
        rec["text"] = str(closed)
        rec["in_avals"] = [a.str_short() for a in closed.in_avals]
        rec["out_avals"] = [a.str_short() for a in closed.out_avals]
      except Exception as e:  # recorded, reported as unexpected
        rec["error"] = _exc_record(e, normalize)
    if caught:
      rec["warnings"] = _warnings(caught, normalize)
    out[case_id] = rec
  return out


def run_errors(ids, normalize):
  jax, jnp, lax, np = _libs()
  mod = _load("error_cases")
  out = {}
  for case_id, thunk in mod.cases(jax, jnp, lax, np):
    if ids is not None and case_id not in ids:
      continue
    assert case_id not in out, case_id
    rec = {}
    with warnings.catch_warnings(record=True) as caught:
      warnings.simplefilter("always")
      try:
        result = thunk()
      except Exception as e:
        rec.update(_exc_record(e, normalize))
      else:
        rec["no_raise"] = True
        rec["result_repr"] = normalize(repr(result))
    if caught:
      rec["warnings"] = _warnings(caught, normalize)
    out[case_id] = rec
  return out


def run_reprs(ids, normalize):
  jax, jnp, lax, np = _libs()
  mod = _load("repr_cases")
  out = {}
  for case_id, thunk in mod.cases(jax, jnp, lax, np):
    if ids is not None and case_id not in ids:
      continue
    assert case_id not in out, case_id
    rec = {}
    with warnings.catch_warnings(record=True) as caught:
      warnings.simplefilter("always")
      try:
        obj = thunk()
        rec["repr"] = normalize(repr(obj))
        rec["str"] = normalize(str(obj))
        if hasattr(obj, "fstring"):
          rec["fstring"] = normalize(obj.fstring)
      except Exception as e:  # recorded, reported as unexpected
        rec["error"] = _exc_record(e, normalize)
    if caught:
      rec["warnings"] = _warnings(caught, normalize)
    out[case_id] = rec
  return out


RUNNERS = {"jaxprs": run_jaxprs, "errors": run_errors, "reprs": run_reprs}


def child(x64):
  """Runs inside a subprocess whose JAX_ENABLE_X64 is already set."""
  import jax
  jax.config.update("jax_enable_x64", x64)
  normalize = _load("error_cases").normalize
  result = {"jax_version": jax.__version__, "x64": x64}
  for kind, modname in KINDS.items():
    ids = None
    if x64:
      ids = set(getattr(_load(modname), "X64_IDS", ()))
    result[kind] = RUNNERS[kind](ids, normalize)
    if ids is not None:
      missing = ids - set(result[kind])
      assert not missing, f"{modname}.X64_IDS names unknown cases: {missing}"
  return result


def run_child(x64):
  env = dict(os.environ)
  env["JAX_ENABLE_X64"] = "1" if x64 else "0"
  env.setdefault("JAX_PLATFORMS", "cpu")
  proc = subprocess.run(
      [sys.executable, os.path.abspath(__file__), "--child",
       "--x64" if x64 else "--no-x64"],
      env=env, cwd=REPO, capture_output=True, text=True)
  if proc.returncode != 0:
    sys.stderr.write(proc.stderr)
    raise SystemExit(f"child (x64={x64}) failed with rc={proc.returncode}")
  if proc.stderr.strip():
    sys.stderr.write(proc.stderr)
  return json.loads(proc.stdout.split("\n@@JSON@@\n", 1)[1])


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--child", action="store_true")
  ap.add_argument("--x64", dest="x64", action="store_true")
  ap.add_argument("--no-x64", dest="x64", action="store_false")
  ap.set_defaults(x64=False)
  args = ap.parse_args()

  if args.child:
    try:
      res = child(args.x64)
    except Exception:
      traceback.print_exc()
      raise SystemExit(1)
    sys.stdout.write("\n@@JSON@@\n" + json.dumps(res))
    return

  base = run_child(False)
  x64 = run_child(True)
  for kind in KINDS:
    doc = {
        "jax_version": base["jax_version"],
        "x64": False,
        "cases": base[kind],
        "x64_section": {"x64": True, "cases": x64[kind]},
    }
    path = os.path.join(GOLDEN, kind + ".json")
    with open(path, "w") as f:
      json.dump(doc, f, indent=1, sort_keys=False, ensure_ascii=False)
      f.write("\n")
    n_bad = 0
    for sec in (base[kind], x64[kind]):
      for cid, rec in sec.items():
        unexpected = ("error" in rec) if kind != "errors" else rec.get("no_raise")
        if unexpected:
          n_bad += 1
          print(f"  note: {kind}/{cid}: {rec.get('error') or rec.get('result_repr')}")
    print(f"wrote {os.path.relpath(path, REPO)}: {len(base[kind])} cases "
          f"(+{len(x64[kind])} x64), {n_bad} unexpected")


if __name__ == "__main__":
  main()
