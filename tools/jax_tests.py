"""Runs JAX's own test files against xjax (or against JAX) and compares the outcomes.

    .venv/bin/python tools/jax_tests.py lax_numpy_test fft_test          # xjax
    .venv/bin/python tools/jax_tests.py --backend jax fft_test           # JAX 0.10.2 (.venv-jax)
    .venv/bin/python tools/jax_tests.py --backend both --markdown docs/conformance.md
    .venv/bin/python tools/jax_tests.py --summary                        # saved results only

Each file of JAX 0.10.2's tests (``../shared/jax-tests/tests``, or ``--tests DIR``) runs in a
pytest process of its own, from that directory, with a per-file timeout:

* xjax: ``.venv/bin/python -m xjax -m pytest FILE`` (``import jax`` is xjax, and
  ``jax._src.test_util`` is xjax's stand-in `xjax._src.jaxtest`);
* jax: ``.venv-jax/bin/python -m pytest FILE`` (real JAX and its own test_util; the virtualenv
  of `make goldens`, given pytest and absl-py here when it lacks them).

Both get the same environment: ``JAX_NUM_GENERATED_CASES`` (``--cases``, 1 by default as in
JAX's CI), ``JAX_ENABLE_X64`` (``--x64``), ``JAX_SKIP_SLOW_TESTS=1`` and 8 forced CPU devices
(``XLA_FLAGS=--xla_force_host_platform_device_count=8``), so the same cases run on both.
A pytest plugin (tools/jax_tests_report.py) records every test's outcome as it finishes, into
``.conformance/<backend>/<file>.jsonl``; a file stopped by the timeout keeps the outcomes it
reached and the tests it did not reach count as not run. The summary prints, per file, JAX's
and xjax's passed/failed/skipped counts, how many tests pass on both, and that number as a
share of those passing on JAX (the conformance figure); ``--markdown`` writes it as a
document with the failures grouped by their first error line.

Exit status: 0, or 1 when ``--min-share`` is given and a file falls below it.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TESTS = ROOT.parent / "shared" / "jax-tests" / "tests"
RESULTS = ROOT / ".conformance"

# The files issue 35 names (remat tests are api_test's; custom_api_test holds JAX's custom
# derivative and custom object tests).
DEFAULT_FILES = [
    "lax_numpy_test", "lax_numpy_operators_test", "lax_numpy_reducers_test",
    "lax_numpy_indexing_test", "lax_numpy_einsum_test", "lax_test", "lax_autodiff_test",
    "lax_vmap_test", "lax_vmap_op_test", "lax_control_flow_test", "random_lax_test",
    "linalg_test", "fft_test", "nn_test", "lax_scipy_special_functions_test",
    "scipy_stats_test", "scipy_signal_test", "batching_test", "tree_util_test", "api_test",
    "custom_api_test", "custom_linear_solve_test", "custom_root_test", "pjit_test",
    "shard_map_test", "array_test",
]

# The sample `make test` runs (about a minute on 2 cores): small files, one case each.
SAMPLE_FILES = ["tree_util_test", "fft_test", "lax_numpy_einsum_test"]


def _python(backend: str) -> list[str]:
  if backend == "xjax":
    return [str(ROOT / ".venv" / "bin" / "python"), "-m", "xjax", "-m", "pytest"]
  return [str(ROOT / ".venv-jax" / "bin" / "python"), "-m", "pytest"]


def ensure_jax_env() -> None:
  """Gives .venv-jax the test requirements of JAX's suite when it lacks them."""
  py = ROOT / ".venv-jax" / "bin" / "python"
  if not py.exists():
    raise SystemExit(".venv-jax is missing: run `make goldens` (or see the README) first")
  probe = subprocess.run([str(py), "-c", "import pytest, absl, hypothesis, jax"],
                         capture_output=True)
  if probe.returncode != 0:
    subprocess.run([str(py), "-m", "pip", "install", "-q", "pytest", "pytest-xdist",
                    "absl-py", "hypothesis", "mpmath"], check=True)


def run_file(backend: str, name: str, args) -> dict:
  """Runs one test file; returns its summary and writes its outcomes' JSONL."""
  out_dir = Path(args.results) / backend
  out_dir.mkdir(parents=True, exist_ok=True)
  report = out_dir / f"{name}.jsonl"
  report.unlink(missing_ok=True)
  # Not the variables of a pytest run this one may be started from (pytest-xdist's worker
  # name would silence the plugin).
  env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "XDIST_"))}
  env.pop("PYTHONDONTWRITEBYTECODE", None)
  env.update({
      "JAX_TESTS_REPORT": str(report),
      "JAX_NUM_GENERATED_CASES": str(args.cases),
      "JAX_ENABLE_X64": "1" if args.x64 else "0",
      "JAX_SKIP_SLOW_TESTS": "1",
      "XLA_FLAGS": f"--xla_force_host_platform_device_count={args.devices}",
      "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "tools"),
                                                env.get("PYTHONPATH", "")) if p),
  })
  cmd = [*_python(backend), f"{name}.py", "-q", "-p", "no:cacheprovider",
         "-p", "jax_tests_report", "-o", "addopts=", "--tb=no", "--no-header", "-rN"]
  if backend == "xjax":
    cmd += ["-p", "jax_tests_xjax"]  # `import jax` is xjax in xdist's workers too
  if args.k:
    cmd += ["-k", args.k]
  if args.jobs > 1:
    cmd += ["-n", str(args.jobs)]
  start = time.monotonic()
  try:
    proc = subprocess.run(cmd, cwd=args.tests, env=env, capture_output=True, text=True,
                          timeout=args.timeout)
    timed_out, tail = False, (proc.stdout + proc.stderr)[-2000:]
  except subprocess.TimeoutExpired as e:
    timed_out, tail = True, str(e.stdout or "")[-2000:]
  summary = summarize(load(report))
  summary.update(file=name, backend=backend, seconds=round(time.monotonic() - start, 1),
                 timed_out=timed_out)
  if not summary["total"]:
    summary["error"] = tail.strip().splitlines()[-1] if tail.strip() else "no tests ran"
  (out_dir / f"{name}.summary.json").write_text(json.dumps(summary, indent=1))
  return summary


def load(path: Path) -> dict[str, dict]:
  """Test id -> its record (the worst of its phases: failed over skipped over passed)."""
  rank = {"passed": 0, "skipped": 1, "failed": 2}
  outcomes: dict[str, dict] = {}
  if not path.exists():
    return outcomes
  for line in path.read_text(encoding="utf-8").splitlines():
    rec = json.loads(line)
    old = outcomes.get(rec["id"])
    if old is None or rank[rec["outcome"]] > rank[old["outcome"]]:
      outcomes[rec["id"]] = rec
  return outcomes


def summarize(outcomes: dict[str, dict]) -> dict:
  counts = collections.Counter(r["outcome"] for r in outcomes.values())
  return {"passed": counts["passed"], "failed": counts["failed"],
          "skipped": counts["skipped"], "total": len(outcomes)}


def compare(name: str, results: Path) -> dict | None:
  """Per file: JAX's and xjax's counts and how many of JAX's passes also pass on xjax."""
  jax_path, xjax_path = results / "jax" / f"{name}.jsonl", results / "xjax" / f"{name}.jsonl"
  if not (jax_path.exists() and xjax_path.exists()):
    return None
  jax, xjax = load(jax_path), load(xjax_path)
  jax_passed = {t for t, r in jax.items() if r["outcome"] == "passed"}
  both = {t for t in jax_passed if xjax.get(t, {}).get("outcome") == "passed"}
  missing = {t: xjax.get(t, {"outcome": "not run", "message": "not run (timeout or crash)"})
             for t in sorted(jax_passed - both)}
  return {"file": name, "jax": summarize(jax), "xjax": summarize(xjax),
          "both": len(both), "jax_passed": len(jax_passed),
          "share": len(both) / len(jax_passed) if jax_passed else 1.0, "missing": missing}


def _reason(rec: dict) -> str:
  msg = (rec.get("message") or rec["outcome"]).strip()
  return msg.splitlines()[0][:160] if msg else rec["outcome"]


def print_table(rows: list[dict]) -> None:
  head = f"{'file':34} {'JAX p/f/s':>14} {'xjax p/f/s':>14} {'both':>6} {'share':>7}"
  print(head)
  print("-" * len(head))
  tot = collections.Counter()
  for r in rows:
    j, x = r["jax"], r["xjax"]
    print(f"{r['file']:34} {j['passed']:>5}/{j['failed']}/{j['skipped']:<4} "
          f"{x['passed']:>5}/{x['failed']}/{x['skipped']:<4} {r['both']:>6} "
          f"{100 * r['share']:>6.1f}%")
    tot.update(jax_passed=r["jax_passed"], both=r["both"])
  if rows:
    share = tot["both"] / tot["jax_passed"] if tot["jax_passed"] else 1.0
    print(f"{'total':34} {tot['jax_passed']:>14} {'':>14} {tot['both']:>6} "
          f"{100 * share:>6.1f}%")


def write_markdown(rows: list[dict], path: Path, args) -> None:
  lines = [
      "# Conformance: JAX 0.10.2's own tests on xjax",
      "",
      "Written by `tools/jax_tests.py --markdown` (see that file for how it runs). Both "
      f"backends ran the same cases: `JAX_NUM_GENERATED_CASES={args.cases}`, "
      f"`JAX_ENABLE_X64={int(args.x64)}`, `JAX_SKIP_SLOW_TESTS=1`, {args.devices} forced CPU "
      "devices. *Share* is the tests passing on both as a share of those passing on JAX.",
      "",
      "| file | JAX passed | JAX failed | JAX skipped | xjax passed | xjax failed | "
      "xjax skipped | both | share |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
  ]
  tot = collections.Counter()
  for r in rows:
    j, x = r["jax"], r["xjax"]
    lines.append(f"| {r['file']} | {j['passed']} | {j['failed']} | {j['skipped']} | "
                 f"{x['passed']} | {x['failed']} | {x['skipped']} | {r['both']} | "
                 f"{100 * r['share']:.1f}% |")
    tot.update(jax_passed=r["jax_passed"], both=r["both"])
  if rows:
    share = tot["both"] / tot["jax_passed"] if tot["jax_passed"] else 1.0
    lines.append(f"| **total** | {tot['jax_passed']} | | | | | | {tot['both']} | "
                 f"{100 * share:.1f}% |")
  notes = Path(args.notes) if args.notes else None
  if notes is not None and notes.exists():
    lines += ["", notes.read_text(encoding="utf-8").rstrip()]
  lines += ["", "## Tests that pass on JAX and not on xjax, by first error line", ""]
  for r in rows:
    if not r["missing"]:
      continue
    by_reason = collections.defaultdict(list)
    for test, rec in r["missing"].items():
      by_reason[_reason(rec)].append(test.split("::")[-1])
    lines += [f"### {r['file']} ({len(r['missing'])})", ""]
    for reason, tests in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
      shown = ", ".join(f"`{t}`" for t in tests[:6]) + (" ..." if len(tests) > 6 else "")
      lines.append(f"* {len(tests)} × `{reason.replace('`', chr(39))}`: {shown}")
    lines.append("")
  path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv=None) -> int:
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("files", nargs="*", help="test files (names, with or without .py); "
                 "default: the files of issue 35")
  p.add_argument("--tests", default=str(DEFAULT_TESTS), help="JAX's tests directory")
  p.add_argument("--backend", choices=("xjax", "jax", "both"), default="xjax")
  p.add_argument("--cases", type=int, default=1, help="JAX_NUM_GENERATED_CASES (default 1)")
  p.add_argument("--x64", action="store_true", help="run with JAX_ENABLE_X64=1")
  p.add_argument("--devices", type=int, default=8, help="forced CPU devices (default 8)")
  p.add_argument("--timeout", type=float, default=1800, help="seconds per file")
  p.add_argument("--jobs", type=int, default=1, help="pytest-xdist workers per file")
  p.add_argument("-k", default=None, help="pytest -k expression")
  p.add_argument("--sample", action="store_true", help="the small sample `make test` runs")
  p.add_argument("--summary", action="store_true", help="only summarize saved results")
  p.add_argument("--results", default=str(RESULTS), help="where outcomes are saved")
  p.add_argument("--markdown", default=None, help="write the comparison document here")
  p.add_argument("--notes", default=str(ROOT / "docs" / "conformance_notes.md"),
                 help="hand-written causes included in the --markdown document")
  p.add_argument("--expect", default=None,
                 help="a file of test ids (file.py::Class::test) that must pass on xjax: "
                 "exit 1 naming those that do not (the regression guard of `make test`)")
  p.add_argument("--record-expect", default=None,
                 help="write the ids passing on both backends (of the files run) here")
  p.add_argument("--min-share", type=float, default=None,
                 help="exit 1 when a compared file's share is below this (0..1)")
  args = p.parse_args(argv)
  files = [f[:-3] if f.endswith(".py") else f for f in args.files] or (
      SAMPLE_FILES if args.sample else DEFAULT_FILES)
  if not Path(args.tests).is_dir():
    print(f"jax_tests: no JAX test directory at {args.tests}; nothing to run")
    return 0
  backends = {"both": ["jax", "xjax"]}.get(args.backend, [args.backend])
  if not args.summary:
    if "jax" in backends:
      ensure_jax_env()
    for name in files:
      for backend in backends:
        s = run_file(backend, name, args)
        extra = " (timed out)" if s["timed_out"] else ""
        extra += f" [{s['error']}]" if s.get("error") else ""
        print(f"{backend:5} {name:34} passed {s['passed']:5} failed {s['failed']:4} "
              f"skipped {s['skipped']:4} in {s['seconds']:7.1f} s{extra}", flush=True)
  rows = [r for r in (compare(n, Path(args.results)) for n in files) if r is not None]
  if rows:
    print()
    print_table(rows)
  if args.markdown:
    write_markdown(rows, Path(args.markdown), args)
  if args.record_expect:
    passing = sorted(t for n in files for t, rec in load(
        Path(args.results) / "xjax" / f"{n}.jsonl").items()
        if rec["outcome"] == "passed" and load(Path(args.results) / "jax" / f"{n}.jsonl")
        .get(t, {}).get("outcome") == "passed")
    Path(args.record_expect).write_text("\n".join(passing) + "\n")
  status = 0
  if args.expect:
    expected = [t for t in Path(args.expect).read_text().split() if t.split("::")[0][:-3]
                in files]
    got = {t: rec for n in files
           for t, rec in load(Path(args.results) / "xjax" / f"{n}.jsonl").items()}
    lost = [t for t in expected if got.get(t, {}).get("outcome") != "passed"]
    for t in lost:
      print(f"REGRESSION {t}: {_reason(got.get(t, {'outcome': 'not run'}))}")
    print(f"{len(expected) - len(lost)} of {len(expected)} expected tests pass on xjax")
    status = 1 if lost else 0
  if args.min_share is not None and any(r["share"] < args.min_share for r in rows):
    status = 1
  return status


if __name__ == "__main__":
  sys.exit(main())
