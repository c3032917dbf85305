"""Tests on 8 forced CPU devices.

Run as `XLA_FLAGS=--xla_force_host_platform_device_count=8 pytest tests/multidevice`
(`make test` does): the flag must be set before the first client is made, so this
directory is skipped by the one-device run (see tests/conftest.py) and refuses to
run with any other device count.
"""
import pytest

import xjax


def pytest_sessionstart(session):
  n = len(xjax.devices())
  if n != 8:
    raise pytest.UsageError(f"tests/multidevice needs 8 devices, found {n}: set "
                            "XLA_FLAGS=--xla_force_host_platform_device_count=8")
