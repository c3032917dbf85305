"""A pytest plugin for tools/jax_tests.py: appends one JSON line per test outcome to the file
named by the environment variable JAX_TESTS_REPORT, as each test finishes (so a run cut short by
the per-file timeout still reports the tests it finished).

Each line: ``{"id": nodeid, "outcome": "passed"|"failed"|"skipped", "when": phase,
"message": first line of the failure or skip reason}``; a module that fails to import gives one
line with ``"id"`` the file and ``"when": "collect"``. Loaded with ``-p jax_tests_report``
(tools/ on PYTHONPATH); it imports neither jax nor xjax.
"""
from __future__ import annotations

import json
import os


def _write(record: dict) -> None:
  path = os.environ.get("JAX_TESTS_REPORT")
  # Under pytest-xdist the controller receives every worker's reports: only it writes.
  if path and not os.environ.get("PYTEST_XDIST_WORKER"):
    with open(path, "a", encoding="utf-8") as f:
      f.write(json.dumps(record) + "\n")


def _message(report) -> str:
  if report.skipped and isinstance(report.longrepr, tuple):
    return str(report.longrepr[2])
  crash = getattr(report.longrepr, "reprcrash", None)
  if crash is not None:
    return crash.message.splitlines()[0] if crash.message else ""
  text = str(report.longrepr or "")
  lines = [ln for ln in text.splitlines() if ln.startswith("E ")]
  return (lines[-1] if lines else text.splitlines()[-1] if text else "")[:500]


def pytest_runtest_logreport(report):
  # A test's record is its worst phase: a failure in setup, call or teardown fails it; a skip
  # in setup (or in the call, by unittest.SkipTest) skips it; else the call's pass counts.
  if report.when == "call" or report.failed or report.skipped:
    _write({"id": report.nodeid, "outcome": report.outcome, "when": report.when,
            "message": _message(report)[:500] if not report.passed else ""})


def pytest_collectreport(report):
  if report.failed:
    _write({"id": report.nodeid, "outcome": "failed", "when": "collect",
            "message": _message(report)[:500]})
