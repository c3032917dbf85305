"""Shared test configuration: jaxpr typechecking on, seeded RNG, x64 fixture, the `slow`
marker of the tests listed in tests/slow_tests.txt."""
import collections
import os
import pathlib
import re
import resource
import time

import numpy as np
import pytest

import xjax
from xjax._src.config import config

# tests/multidevice needs 8 CPU devices, which must be asked for before the first
# client is made: `make test` runs it in a second pytest process with XLA_FLAGS set.
_forced = re.search(r"--xla_force_host_platform_device_count=(\d+)", os.environ.get("XLA_FLAGS", ""))
if not _forced or int(_forced.group(1)) != 8:
  collect_ignore = ["multidevice"]

# The fast tier, `make test-fast`, runs -m 'not nightly and not slow'. Tests that start fresh
# Python processes carry @pytest.mark.slow in their files; tests that took more than
# SLOW_CPU_S of CPU time in-process are listed in tests/slow_tests.txt (a node id, or a test
# function's id for all its cases) and get the marker here. `pytest --record-slow` (`make
# slow-list`) measures the tests it runs and adds those over SLOW_CPU_S to the list.
SLOW_LIST = pathlib.Path(__file__).with_name("slow_tests.txt")
SLOW_CPU_S = 0.1


def pytest_addoption(parser):
  parser.addoption("--record-slow", action="store_true",
                   help="measure each test's CPU time and add those over %s s to "
                        "tests/slow_tests.txt" % SLOW_CPU_S)


def _read_slow_list():
  if not SLOW_LIST.exists():
    return set()
  return {line.strip() for line in SLOW_LIST.read_text().splitlines()
          if line.strip() and not line.startswith("#")}


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(config, items):
  listed = _read_slow_list()
  for item in items:
    if item.nodeid in listed or item.nodeid.split("[", 1)[0] in listed:
      item.add_marker(pytest.mark.slow)


_CPU_KEY = pytest.StashKey[float]()


def _cpu_s():
  children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the Python processes it starts
  return time.process_time() + children.ru_utime + children.ru_stime


def _cpu_phase(item):
  if item.config.getoption("record_slow") and item.get_closest_marker("slow") is None:
    start = _cpu_s()
    yield
    item.stash[_CPU_KEY] = item.stash.get(_CPU_KEY, 0.0) + _cpu_s() - start
  else:
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
  yield from _cpu_phase(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
  yield from _cpu_phase(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
  yield from _cpu_phase(item)
  if _CPU_KEY in item.stash:  # travels to the xdist controller with the teardown report
    item.user_properties.append(("cpu_s", item.stash[_CPU_KEY]))


_recorded = {}


def pytest_runtest_logreport(report):
  if report.when == "teardown":
    for name, value in report.user_properties:
      if name == "cpu_s":
        _recorded[report.nodeid] = value


def pytest_sessionfinish(session):
  if session.config.getoption("record_slow") and not hasattr(session.config, "workerinput"):
    add_to_slow_list(_recorded)


def add_to_slow_list(recorded):
  """Adds to tests/slow_tests.txt the tests of `recorded` (node id to CPU seconds) over
  SLOW_CPU_S; a function whose cases all are becomes one line. Of a module whose tests
  recorded all are, the quickest stays out if it took under 10 * SLOW_CPU_S."""
  entries = _read_slow_list()
  by_module = collections.defaultdict(dict)
  for nodeid, cpu in recorded.items():
    by_module[nodeid.split("::", 1)[0]][nodeid] = cpu
  for times in by_module.values():
    slow = {n for n, cpu in times.items() if cpu > SLOW_CPU_S}
    quickest = min(times, key=times.get)
    if slow == set(times) and times[quickest] < 10 * SLOW_CPU_S:
      slow.discard(quickest)
    functions = collections.defaultdict(set)
    for n in times:
      functions[n.split("[", 1)[0]].add(n)
    for function, cases in functions.items():
      if len(cases) > 1 and cases <= slow and not any(e.startswith(function + "[") for e in entries):
        entries.add(function)
      else:
        entries |= cases & slow
  header = ("# Tests that took more than %s s of CPU time in-process: tests/conftest.py marks them\n"
            "# `slow`, so `make test-fast` skips them (`make test` runs them). A line is a test's node\n"
            "# id, or a test function's id for all its cases. `make slow-list` adds to it.\n" % SLOW_CPU_S)
  SLOW_LIST.write_text(header + "".join(e + "\n" for e in sorted(entries)))


@pytest.fixture(autouse=True)
def _enable_checks():
  with config.override("jax_enable_checks", True):
    yield


@pytest.fixture(autouse=True, scope="module")
def _release_executables():
  # Each compiled program holds memory mappings; one worker running thousands of
  # tests would otherwise reach the kernel's limit (vm.max_map_count) and XLA's
  # JIT fails to map new code. Dropping the caches after each module frees them.
  yield
  xjax.clear_caches()


@pytest.fixture
def rng():
  return np.random.default_rng(0)


@pytest.fixture
def x64():
  with xjax._src.config.enable_x64(True):
    yield
