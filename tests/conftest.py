"""Shared test configuration: jaxpr typechecking on, seeded RNG, x64 fixture."""
import numpy as np
import pytest

import xjax
from xjax._src.config import config


@pytest.fixture(autouse=True)
def _enable_checks():
  with config.override("jax_enable_checks", True):
    yield


@pytest.fixture
def rng():
  return np.random.default_rng(0)


@pytest.fixture
def x64():
  with xjax._src.config.enable_x64(True):
    yield
