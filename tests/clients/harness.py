"""Running a client library's script under xjax (`python -m xjax`) and comparing what it
prints with what the same script printed under real JAX 0.10.2 (tests/golden/clients/).

A script in tests/clients/scripts/ is written for JAX (`import jax`, the client library)
and prints one JSON object as its last line of output: names to numbers, nested lists of
numbers, strings or booleans. `tools/golden_clients.py` runs every script with a Python
that has real JAX and the clients, and stores the objects as goldens.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tools.golden_client_suites import SUITES, junit_counts

SCRIPTS = os.path.join(os.path.dirname(__file__), "scripts")
GOLDENS = os.path.join(os.path.dirname(os.path.dirname(__file__)), "golden", "clients")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def require(*modules: str):
  """Skips the calling test unless every client module is installed (`make test` installs
  them from tests/clients/requirements.txt)."""
  missing = [m for m in modules if importlib.util.find_spec(m) is None]
  if missing:
    pytest.skip(f"client libraries not installed: {', '.join(missing)} (pip install "
                "--no-deps -r tests/clients/requirements.txt, then requirements-deps.txt)")


def run_under_xjax(args: list[str], timeout: float = 600, env: dict | None = None):
  """`python -m xjax ARGS` in a fresh process from the repository root; the completed
  process (stdout, stderr, returncode)."""
  full_env = dict(os.environ, **(env or {}))
  full_env.setdefault("JAX_PLATFORMS", "cpu")
  return subprocess.run([sys.executable, "-m", "xjax", *args], capture_output=True,
                        text=True, timeout=timeout, cwd=REPO, env=full_env)


def script_output(name: str, timeout: float = 600) -> dict:
  """The JSON object that tests/clients/scripts/NAME.py prints as its last line under xjax
  (fails the test with the script's stderr if it fails)."""
  proc = run_under_xjax([os.path.join(SCRIPTS, name + ".py")], timeout)
  if proc.returncode != 0:
    pytest.fail(f"{name}.py failed under xjax (exit {proc.returncode}):\n{proc.stderr[-6000:]}")
  return json.loads(proc.stdout.strip().splitlines()[-1])


def golden(name: str) -> dict:
  """What tests/clients/scripts/NAME.py printed under real JAX."""
  with open(os.path.join(GOLDENS, name + ".json")) as f:
    return json.load(f)


def assert_matches(actual, expected, rtol: float = 1e-5, atol: float = 1e-6, path="result"):
  """`actual` equals `expected` (both decoded JSON): numbers and nested lists of numbers
  within tolerance, anything else exactly; the message names the first differing path."""
  if isinstance(expected, dict):
    assert isinstance(actual, dict) and set(actual) == set(expected), (
        f"{path}: keys {sorted(actual) if isinstance(actual, dict) else actual} != "
        f"{sorted(expected)}")
    for k in expected:
      assert_matches(actual[k], expected[k], rtol, atol, f"{path}[{k!r}]")
  elif isinstance(expected, (int, float, list)) and not isinstance(expected, bool):
    np.testing.assert_allclose(np.asarray(actual, dtype=float),
                               np.asarray(expected, dtype=float), rtol=rtol, atol=atol,
                               err_msg=path)
  else:
    assert actual == expected, f"{path}: {actual!r} != {expected!r}"


def run_suite_file(suite: str, path: str, tmp_path) -> tuple[dict, str]:
  """Runs one test file of a client's own suite (SUITES[suite]/path) under xjax from the
  repository root; its JUnit counts and pytest's output."""
  relpath = os.path.join(SUITES[suite], path)
  if not os.path.exists(os.path.join(REPO, relpath)):
    pytest.skip(f"{relpath} is missing (make test unpacks the clients' sources into .clients/)")
  report = tmp_path / "report.xml"
  proc = run_under_xjax(["-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
                         relpath], timeout=900)
  assert report.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
  return junit_counts(str(report)), proc.stdout


def assert_suite_file_passes(suite: str, path: str, tmp_path):
  """Runs SUITES[suite]/path under xjax and asserts it passes at least as many tests as
  recorded in tests/golden/clients/SUITE_suite_counts.json (its "xjax" entry)."""
  recorded = golden(f"{suite}_suite_counts")[os.path.join(SUITES[suite], path)]
  counts, output = run_suite_file(suite, path, tmp_path)
  assert counts["passed"] >= recorded["xjax"]["passed"], (
      f"{path}: {counts} under xjax, recorded {recorded}\n{output[-6000:]}")
