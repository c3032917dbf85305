"""Records tests/golden/clients/SUITE_suite_counts.json: per test file of a client library's
own test suite (optax's, chex's), how many tests pass under real JAX 0.10.2 and under xjax
(`python -m xjax -m pytest`), as tests/clients/test_SUITE.py checks them.

Usage:
  python tools/golden_client_suites.py --jax-python PYTHON SUITE [FILE ...]

PYTHON must have jax==0.10.2 and the clients (see tools/golden_clients.py); xjax runs under
this script's own Python. SUITE is a key of SUITES; FILEs are paths relative to the repository
root (default: every *_test.py of the suite). Each file runs from the repository root, as the
client tests run it, with pytest's JUnit report giving per-test outcomes (a test whose
subtest fails counts as failed). Files already in the JSON and not named keep their counts.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDENS = os.path.join(ROOT, "tests", "golden", "clients")
SUITES = {"optax": ".clients/optax-0.2.8", "chex": ".clients/chex-0.1.92",
          "flax": ".clients/flax-0.12.8"}


def suite_files(suite: str) -> list[str]:
  """Every *_test.py of the suite's source tree, relative to the repository root, sorted."""
  out = []
  for dirpath, _, names in os.walk(os.path.join(ROOT, SUITES[suite])):
    out += [os.path.relpath(os.path.join(dirpath, n), ROOT) for n in names
            if n.endswith("_test.py")]
  return sorted(out)


def junit_counts(path: str) -> dict:
  """passed / failed / errors / skipped test cases of a pytest JUnit XML report."""
  counts = dict(passed=0, failed=0, errors=0, skipped=0)
  for case in ET.parse(path).iter("testcase"):
    tags = {child.tag for child in case}
    key = ("errors" if "error" in tags else "failed" if "failure" in tags
           else "skipped" if "skipped" in tags else "passed")
    counts[key] += 1
  return counts


def run_file(command: list[str], path: str, timeout: float = 1800) -> dict:
  """Runs pytest on one test file with `command` (a Python and its leading arguments); its
  counts plus the wall seconds it took."""
  with tempfile.TemporaryDirectory() as tmp:
    report = os.path.join(tmp, "report.xml")
    start = time.time()
    proc = subprocess.run([*command, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           f"--junitxml={report}", path], capture_output=True, text=True,
                          cwd=ROOT, env=dict(os.environ, JAX_PLATFORMS="cpu"), timeout=timeout)
    seconds = round(time.time() - start, 1)
    if not os.path.exists(report):
      raise SystemExit(f"pytest wrote no report for {path}:\n{proc.stdout[-3000:]}"
                       f"{proc.stderr[-3000:]}")
    return dict(junit_counts(report), seconds=seconds)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--jax-python", required=True, help="a Python with real jax and the clients")
  parser.add_argument("suite", choices=sorted(SUITES))
  parser.add_argument("files", nargs="*")
  args = parser.parse_args()
  out_path = os.path.join(GOLDENS, f"{args.suite}_suite_counts.json")
  recorded = {}
  if os.path.exists(out_path):
    with open(out_path) as f:
      recorded = json.load(f)
  for path in args.files or suite_files(args.suite):
    jax_counts = run_file([args.jax_python], path)
    xjax_counts = run_file([sys.executable, "-m", "xjax"], path)
    recorded[path] = {"jax": jax_counts, "xjax": xjax_counts}
    print(f"{path}: passed {jax_counts['passed']} under JAX, {xjax_counts['passed']} under "
          f"xjax ({xjax_counts['seconds']} s)", flush=True)
    with open(out_path, "w") as f:
      json.dump(recorded, f, indent=1, sort_keys=True)
      f.write("\n")


if __name__ == "__main__":
  main()
