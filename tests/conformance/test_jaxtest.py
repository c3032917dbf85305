"""xjax's stand-in for JAX's internal test_util (`xjax._src.jaxtest`) and the conformance runner
(tools/jax_tests.py): the generators draw what they promise, the assertions fail when they
should, and the runner counts outcomes of a small test file it runs in a fresh process."""
import json
import subprocess
import sys
import unittest
from pathlib import Path

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src import jaxtest as jtu

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.complex64, np.bool_])
@pytest.mark.parametrize("shape", [(), (3,), (2, 0), 4])
def test_generators_give_the_shape_and_dtype_asked_for(shape, dtype):
  rng = np.random.RandomState(0)
  for make in (jtu.rand_default, jtu.rand_nonzero, jtu.rand_some_zero, jtu.rand_bool,
               jtu.rand_some_inf_and_nan, jtu.rand_some_nan, jtu.rand_fullrange):
    x = make(rng)(shape, dtype)
    assert x.dtype == np.dtype(dtype) and x.shape == jtu._dims_of_shape(shape), make


def test_scalar_shapes_give_scalars():
  rng = np.random.RandomState(0)
  assert type(jtu.rand_default(rng)(jtu.NUMPY_SCALAR_SHAPE, np.float32)) is np.float32
  assert type(jtu.rand_default(rng)(jtu.PYTHON_SCALAR_SHAPE, np.float64)) is float
  assert not jtu.is_valid_shape(jtu.PYTHON_SCALAR_SHAPE, np.float32)
  assert jtu.format_shape_dtype_string((2, 3), np.float32) == "float32[2,3]"
  assert jtu.format_shape_dtype_string(jtu.PYTHON_SCALAR_SHAPE, np.int32) == "pyint32"


def test_distributions():
  rng = np.random.RandomState(1)
  pos = jtu.rand_positive(rng)((1000,), np.float32)
  assert pos.min() >= 1 and pos.max() < 3
  assert np.all(jtu.rand_nonzero(rng)((1000,), np.int32) != 0)
  uni = jtu.rand_uniform(rng, -2.0, -1.0)((1000,), np.float64)
  assert uni.min() >= -2 and uni.max() < -1
  ints = jtu.rand_int(rng, 3, 7)((1000,), np.int8)
  assert set(np.unique(ints)) == {3, 4, 5, 6}
  special = jtu.rand_some_inf_and_nan(rng)((1000,), np.float32)
  assert np.isnan(special).any() and np.isposinf(special).any() and np.isneginf(special).any()
  assert np.isfinite(jtu.rand_some_inf_and_nan(rng)((100,), np.int32)).all()
  unique = jtu.rand_indices_unique_along_axis(rng)(5, (3, 4), 1, allow_negative=False)
  assert all(len(set(row)) == 4 for row in unique)
  with pytest.raises(ValueError, match="explicit `high`"):
    jtu.rand_int(rng)((2,), np.float32)


def test_sample_product_is_a_fixed_sample_of_the_product():
  full = [dict(a=a, b=b) for a in range(4) for b in "xyz"]
  old = jtu.NUM_GENERATED_CASES.value
  try:
    jtu.NUM_GENERATED_CASES.value = 5
    cases = jtu.sample_product_testcases(a=range(4), b="xyz")
    assert len(cases) == 5 and all(c in full for c in cases)
    assert len({tuple(c.items()) for c in cases}) == 5
    assert cases == jtu.sample_product_testcases(a=range(4), b="xyz")
    jtu.NUM_GENERATED_CASES.value = 100
    assert len(jtu.sample_product_testcases(a=range(4), b="xyz")) == 12
    grouped = jtu.sample_product_testcases([dict(a=1, c=2), dict(a=3, c=4)], b=[5])
    assert sorted((c["a"], c["c"]) for c in grouped) == [(1, 2), (3, 4)]
  finally:
    jtu.NUM_GENERATED_CASES.value = old


def test_dtype_lists_follow_x64():
  assert np.float64 not in jtu.dtypes.supported([np.float64, np.float32])
  assert jtu.dtypes.supported([np.float64, np.float32]) == [np.float32]
  assert jtu.tolerance(np.float64) == jtu.tolerance(np.float32) == 1e-6
  assert jtu.tolerance(np.float16, {np.float16: 0.5}) == 0.5
  assert jtu.join_tolerance(1e-3, {np.float32: 1e-2})[np.dtype(np.float32)] == 1e-2


class _Case(jtu.JaxTestCase):
  def runTest(self):
    pass


def test_jaxtestcase_assertions_fail_when_they_should():
  case = _Case()
  case.setUp()
  try:
    case.assertAllClose(jnp.arange(3.0), np.arange(3, dtype=np.float32))
    case.assertAllClose({"a": (1.0, jnp.ones(2))}, {"a": (1.0, np.ones(2, np.float32))})
    with pytest.raises(AssertionError):
      case.assertAllClose(jnp.arange(3.0), np.arange(3, dtype=np.float32) + 1e-3)
    with pytest.raises(AssertionError):  # dtypes differ
      case.assertAllClose(jnp.arange(3), np.arange(3.0, dtype=np.float32))
    with pytest.raises(AssertionError):
      case.assertArraysEqual(jnp.arange(3), np.array([0, 1, 3], np.int32))
    # JAX's test configuration is on inside a test: rank promotion raises.
    with pytest.raises(ValueError, match="rank"):
      jnp.ones((2, 3)) + jnp.ones(3)
    with pytest.raises(ValueError, match="Legacy uint32 key"):
      xjax.random.normal(xjax.random.PRNGKey(0))
    case._CompileAndCheck(lambda x: jnp.sin(x) * 2, lambda: [np.ones(3, np.float32)])
    with pytest.raises(AssertionError):
      case._CheckAgainstNumpy(np.cos, jnp.sin, lambda: [np.ones(3, np.float32)])
  finally:
    case.doCleanups()
  assert xjax.config.jax_numpy_rank_promotion == "allow"


def test_compile_and_check_sees_a_function_that_retraces():
  case = _Case()
  case.setUp()
  calls = []

  def impure(x):
    calls.append(1)
    return x + len(calls)
  try:
    with pytest.raises(AssertionError):
      case._CompileAndCheck(impure, lambda: [np.ones(2, np.float32)])
  finally:
    case.doCleanups()


def test_skips_and_meshes():
  assert jtu.test_device_matches(["cpu"]) and not jtu.test_device_matches(["gpu"])

  class T(jtu.JaxTestCase):
    @jtu.skip_on_devices("cpu")
    def test_a(self):
      pass

    @jtu.run_on_devices("cpu")
    def test_b(self):
      pass

    # The suite's own flags are read as JAX's config._read does (JAX_SKIP_SLOW_TESTS).
    @jtu.skip_on_flag("jax_skip_slow_tests", not jtu.SKIP_SLOW_TESTS.value)
    def test_c(self):
      pass

    @jtu.skip_on_flag("jax_skip_slow_tests", jtu.SKIP_SLOW_TESTS.value)
    def test_d(self):
      pass

    @jtu.skip_on_flag("jax_enable_x64", False)
    def test_e(self):
      pass
  result = unittest.TestResult()
  unittest.defaultTestLoader.loadTestsFromTestCase(T).run(result)
  assert [t.id().split(".")[-1] for t, _ in result.skipped] == ["test_a", "test_d", "test_e"]
  assert result.testsRun == 5 and not result.failures and not result.errors
  with pytest.raises(unittest.SkipTest, match="requires 64 global devices"):
    jtu.create_mesh((8, 8), ("x", "y"))
  with jtu.count_jit_tracing_cache_miss() as traces:
    f = xjax.jit(lambda x: x * 3)
    f(1.0)
    f(2.0)
  assert traces() == 1


@pytest.mark.slow
def test_jax_src_test_util_is_the_stand_in():
  code = ("import xjax; xjax._src.jax_compat.install_as_jax(); "
          "from jax._src import test_util as jtu, config; import xjax._src.jaxtest as own; "
          "assert jtu.JaxTestCase is own.JaxTestCase; assert not config.enable_x64.value; "
          "from jax._src import lax_reference; print('ok')")
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
  assert out.stdout.strip() == "ok", out.stderr


_SAMPLE_TEST = '''
from absl.testing import absltest
import jax, jax.numpy as jnp
from jax._src import test_util as jtu

class T(jtu.JaxTestCase):
  @jtu.sample_product(n=[1, 2, 3, 4])
  def test_sum(self, n):
    self.assertAllClose(jnp.arange(n).sum(), n * (n - 1) // 2)

  def test_fails(self):
    self.assertAllClose(jnp.ones(2), jnp.zeros(2))

  @jtu.skip_on_devices("cpu")
  def test_skipped(self):
    pass
'''


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])  # 2: pytest-xdist workers import xjax as jax too
def test_runner_counts_outcomes(tmp_path, jobs):
  (tmp_path / "tests").mkdir()
  (tmp_path / "tests" / "sample_test.py").write_text(_SAMPLE_TEST)
  out = subprocess.run(
      [sys.executable, str(ROOT / "tools" / "jax_tests.py"), "sample_test", "--cases", "2",
       "--tests", str(tmp_path / "tests"), "--results", str(tmp_path / "res"),
       "--devices", "1", "--jobs", jobs], capture_output=True, text=True, timeout=300)
  assert out.returncode == 0, out.stderr
  summary = json.loads((tmp_path / "res" / "xjax" / "sample_test.summary.json").read_text())
  assert (summary["passed"], summary["failed"], summary["skipped"]) == (2, 1, 1), out.stdout
  assert "passed     2 failed    1 skipped    1" in out.stdout
