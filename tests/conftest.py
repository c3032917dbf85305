"""Shared test configuration: jaxpr typechecking on, seeded RNG, x64 fixture."""
import os
import re

import numpy as np
import pytest

import xjax
from xjax._src.config import config

# tests/multidevice needs 8 CPU devices, which must be asked for before the first
# client is made: `make test` runs it in a second pytest process with XLA_FLAGS set.
_forced = re.search(r"--xla_force_host_platform_device_count=(\d+)", os.environ.get("XLA_FLAGS", ""))
if not _forced or int(_forced.group(1)) != 8:
  collect_ignore = ["multidevice"]


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
