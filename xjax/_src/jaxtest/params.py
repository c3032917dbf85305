"""Test-case generation and dtype lists of JAX's test suite.

* `sample_product`: a decorator drawing `NUM_GENERATED_CASES` cases (the environment
  variable ``JAX_NUM_GENERATED_CASES``, 10 by default; JAX's CI runs with 1) from the cartesian
  product of its arguments, always the same ones (a fixed seed), as JAX's does.
* `parameterized_filterable`, `cases_from_gens`, `named_cases_from_sampler`: the other
  generators the suite uses.
* `dtypes`: the dtype lists (`dtypes.floating`, `dtypes.all_integer`, ...) of the device under
  test, without 64-bit types unless ``jax_enable_x64`` is on.
"""
from __future__ import annotations

import functools
import math
import os
import re
from functools import cached_property

import numpy as np
from absl.testing import parameterized

from xjax._src import config as config_lib
from xjax._src import devices
from xjax._src import dtypes as _dtypes


class _IntFlag:
  """A number read once from the environment, changeable by tests (`.value`)."""

  def __init__(self, env: str, default: int):
    self.value = int(os.getenv(env, str(default)))


NUM_GENERATED_CASES = _IntFlag("JAX_NUM_GENERATED_CASES", 10)
MAX_CASES_SAMPLING_RETRIES = _IntFlag("JAX_MAX_CASES_SAMPLING_RETRIES", 100)


class _BoolFlag:
  def __init__(self, env: str, default: bool):
    self.value = os.getenv(env, str(default)).lower() in ("1", "true", "yes", "y", "on")


SKIP_SLOW_TESTS = _BoolFlag("JAX_SKIP_SLOW_TESTS", False)

_unsafe_name_chars = re.compile(r"[ \"'\[\](){}<>=,._]+")


def sanitize_test_name(s: str) -> str:
  """`s` with each run of characters that `-k` filters mishandle replaced by one ``_``."""
  return _unsafe_name_chars.sub("_", s)


@functools.cache
def _chosen(n: int, m: int) -> np.ndarray:
  """`m` distinct case numbers out of `n`, the same in every run."""
  return np.random.RandomState(42).choice(n, size=m, replace=False)


def sample_product_testcases(*args, **kw) -> list[dict]:
  """The cases `sample_product` would run, as a list of keyword dicts.

  Each positional argument is a list of dicts (correlated parameters: one dict is chosen);
  each keyword argument is a list of values (one is chosen)."""
  groups = [list(a) for a in args]
  named = [(k, list(v)) for k, v in kw.items()]
  n = math.prod(len(g) for g in groups) * math.prod(len(v) for _, v in named)
  cases = []
  for number in _chosen(n, min(n, NUM_GENERATED_CASES.value)):
    number = int(number)
    case = {}
    for g in groups:
      case.update(g[number % len(g)])
      number //= len(g)
    for k, values in named:
      case[k] = values[number % len(values)]
      number //= len(values)
    cases.append(case)
  return cases


def sample_product(*args, **kw):
  """Decorator: `parameterized.parameters` over a fixed sample of the cartesian product of the
  arguments (see `sample_product_testcases`). Mirrors JAX's `jtu.sample_product`."""
  return parameterized.parameters(*sample_product_testcases(*args, **kw))


def cases_from_gens(*gens):
  """Cases ``(name, gen(size)...)`` for sizes 1, 3 and 10, about `NUM_GENERATED_CASES` in all."""
  sizes = (1, 3, 10)
  per_size = int(NUM_GENERATED_CASES.value / len(sizes)) + 1
  for size in sizes:
    for i in range(per_size):
      yield (f"_{size}_{i}",) + tuple(gen(size) for gen in gens)


def named_cases_from_sampler(gen):
  """Distinct named cases drawn from ``gen(choose_one)`` (which yields one case dict with a
  ``testcase_name``), until `NUM_GENERATED_CASES` are found or too many draws repeat."""
  seen = set()
  misses = 0
  rng = np.random.RandomState(42)

  def choose_one(options):
    options = options if isinstance(options, (list, tuple)) else list(options)
    return [options[rng.randint(len(options))]]

  while len(seen) < NUM_GENERATED_CASES.value and misses < MAX_CASES_SAMPLING_RETRIES.value:
    misses += 1
    cases = list(gen(choose_one))
    if not cases:
      continue
    if len(cases) > 1:
      raise RuntimeError("Generator is expected to only return a single case when sampling")
    case = cases[0]
    if case["testcase_name"] in seen:
      continue
    misses = 0
    seen.add(case["testcase_name"])
    yield case


def parameterized_filterable(*, kwargs, testcase_name=None, one_containing=None):
  """`parameterized.named_parameters` over `kwargs` (a list of keyword dicts) with names safe
  for ``-k`` filters: ``testcase_name(kw)`` when given, else the dict's own ``testcase_name``,
  else ``k=v`` pairs. `one_containing` keeps only the first case whose name contains it (under
  the bare test name). Mirrors JAX's `jtu.parameterized_filterable`."""
  if testcase_name is not None:
    cases = [dict(testcase_name=sanitize_test_name(str(testcase_name(kw))), **kw)
             for kw in kwargs]
  else:
    cases = list(kwargs)
    for kw in cases:
      name = kw.get("testcase_name")
      if name is None:
        name = "_".join(f"{k}={kw[k]}" for k in sorted(kw))
      kw["testcase_name"] = sanitize_test_name(name)
  if one_containing is None:
    return parameterized.named_parameters(*cases)
  matching = [kw for kw in cases if one_containing in kw["testcase_name"]]
  if not matching:
    raise AssertionError(f"No testcase_name contains '{one_containing}'. The testcase_name "
                         "values are\n  " + "\n  ".join(kw["testcase_name"] for kw in cases))
  only = matching[0]
  only["testcase_name"] = ""
  return parameterized.named_parameters([only])


# ----------------------------------------------------------------------------------------------
# Devices and dtypes

def device_under_test() -> str:
  """The platform tests run on: ``JAX_TEST_DUT`` if set, else the default backend's."""
  return os.getenv("JAX_TEST_DUT") or devices.default_backend()


_X64_ONLY = {np.dtype(t) for t in (np.int64, np.uint64, np.float64, np.complex128)}


def supported_dtypes() -> set:
  """The dtypes the device under test supports (64-bit ones only with ``jax_enable_x64``)."""
  base = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, _dtypes.bfloat16, np.float16, np.float32, np.float64, np.complex64,
          np.complex128]
  platform = device_under_test()
  if platform == "tpu":
    base = [np.bool_, _dtypes.int4, np.int8, np.int16, np.int32, _dtypes.uint4, np.uint8,
            np.uint16, np.uint32, _dtypes.bfloat16, np.float16, np.float32, np.complex64,
            _dtypes.float8_e4m3fn, _dtypes.float8_e4m3b11fnuz, _dtypes.float8_e5m2]
  elif platform == "gpu":
    base += [_dtypes.float8_e4m3fn, _dtypes.float8_e5m2]
  else:
    base += [_dtypes.int4, _dtypes.uint4]
  kept = set(base)
  if not config_lib.enable_x64.value:
    kept = {t for t in kept if np.dtype(t) not in _X64_ONLY}
  return kept


class _DtypeLists:
  """JAX's `jtu.dtypes`: dtype lists filtered to those `supported_dtypes` has."""

  def supported(self, dtypes) -> list:
    have = supported_dtypes()
    return [d for d in dtypes if d in have]

  @cached_property
  def custom_floats(self) -> list:
    return self.supported([
        _dtypes.bfloat16, _dtypes.float8_e4m3b11fnuz, _dtypes.float8_e4m3fn,
        _dtypes.float8_e4m3fnuz, _dtypes.float8_e5m2, _dtypes.float8_e5m2fnuz,
        _dtypes.float8_e3m4, _dtypes.float8_e4m3, _dtypes.float8_e8m0fnu,
        _dtypes.float4_e2m1fn])

  @cached_property
  def floating(self) -> list:
    return self.supported([np.float32, np.float64])

  @cached_property
  def all_floating(self) -> list:
    return self.supported([_dtypes.bfloat16, np.float16, np.float32, np.float64])

  @cached_property
  def integer(self) -> list:
    return self.supported([np.int32, np.int64])

  @cached_property
  def all_integer(self) -> list:
    return self.supported([np.int8, np.int16, np.int32, np.int64])

  @cached_property
  def unsigned(self) -> list:
    return self.supported([np.uint32, np.uint64])

  @cached_property
  def all_unsigned(self) -> list:
    return self.supported([np.uint8, np.uint16, np.uint32, np.uint64])

  @cached_property
  def complex(self) -> list:
    return self.supported([np.complex64, np.complex128])

  @cached_property
  def boolean(self) -> list:
    return self.supported([np.bool_])

  @cached_property
  def inexact(self) -> list:
    return self.floating + self.complex

  @cached_property
  def all_inexact(self) -> list:
    return self.all_floating + self.complex

  @cached_property
  def numeric(self) -> list:
    return self.floating + self.integer + self.unsigned + self.complex

  @cached_property
  def all(self) -> list:
    return (self.all_floating + self.all_integer + self.all_unsigned + self.complex
            + self.boolean)


dtypes = _DtypeLists()

_version = re.compile(r"([0-9]+(?:\.[0-9]+)*)(?:(rc|dev).*)?")


def parse_version(v: str) -> tuple[int, ...]:
  """``"1.26.4"`` -> ``(1, 26, 4)`` (a trailing rc/dev tag is dropped)."""
  m = _version.match(v)
  if m is None:
    raise ValueError(f"Unable to parse version '{v}'")
  return tuple(int(x) for x in m.group(1).split("."))


def numpy_version() -> tuple[int, ...]:
  return parse_version(np.__version__)
