"""`JaxTestCase` and the numerical assertions of JAX's test suite, over xjax.

`JaxTestCase` is an `absltest` parameterized test case that runs each test under JAX's test
configuration (``jax_enable_checks``, strict dtype promotion, rank promotion raising, legacy
PRNG keys refused), gives it a NumPy `RandomState` seeded from the test's name (`self.rng()`),
and adds the comparisons the suite uses: `assertAllClose` (pytrees of arrays, per-dtype
tolerances), `assertArraysEqual`, `assertDtypesMatch`, `_CompileAndCheck` (eager against
`jit`, and no retrace on a second call) and `_CheckAgainstNumpy`. Tolerances are JAX's
(`default_tolerance`): they are tuned for its test suite.
"""
from __future__ import annotations

import contextlib
import re
import textwrap
import warnings
import zlib
from contextlib import contextmanager

import ml_dtypes
import numpy as np
from absl.testing import parameterized

from xjax._src import config as config_lib
from xjax._src import dtypes as _dtypes
from xjax._src import executable_cache
from xjax._src import tree_util
from xjax._src.config import config
from xjax._src.jit import jit
from xjax._src.jaxtest import params

# ----------------------------------------------------------------------------------------------
# Tolerances (JAX's values, by dtype)

_CUSTOM_FLOATS = [_dtypes.float4_e2m1fn, _dtypes.float8_e8m0fnu, _dtypes.float8_e3m4,
                  _dtypes.float8_e4m3, _dtypes.float8_e4m3b11fnuz, _dtypes.float8_e4m3fn,
                  _dtypes.float8_e4m3fnuz, _dtypes.float8_e5m2, _dtypes.float8_e5m2fnuz,
                  _dtypes.bfloat16]

_default_tolerance = {np.dtype(t): 0 for t in (
    np.bool_, _dtypes.int2, _dtypes.int4, np.int8, np.int16, np.int32, np.int64,
    _dtypes.uint2, _dtypes.uint4, np.uint8, np.uint16, np.uint32, np.uint64)}
_default_tolerance[np.dtype(_dtypes.float0)] = 0
_default_tolerance.update({np.dtype(t): 1e-1 for t in _CUSTOM_FLOATS})
_default_tolerance.update({
    np.dtype(_dtypes.float4_e2m1fn): 1e0, np.dtype(_dtypes.float8_e8m0fnu): 1e0,
    np.dtype(_dtypes.bfloat16): 1e-2, np.dtype(np.float16): 1e-3,
    np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-15,
    np.dtype(np.complex64): 1e-6, np.dtype(np.complex128): 1e-15,
})

default_gradient_tolerance = {np.dtype(t): 1e-1 for t in _CUSTOM_FLOATS}
default_gradient_tolerance.update({
    np.dtype(_dtypes.float4_e2m1fn): 1e0, np.dtype(_dtypes.float8_e8m0fnu): 1e0,
    np.dtype(np.float16): 1e-2, np.dtype(np.float32): 2e-3, np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3, np.dtype(np.complex128): 1e-5,
})


def default_tolerance() -> dict:
  """dtype -> the tolerance `assertAllClose` uses for it by default."""
  return _default_tolerance


def _dtype(x) -> np.dtype:
  if hasattr(x, "dtype"):
    return x.dtype
  scalar = _dtypes.python_scalar_dtypes.get(type(x))
  return np.dtype(scalar) if scalar is not None else np.asarray(x).dtype


def tolerance(dtype, tol=None):
  """The tolerance for `dtype`: `tol` itself when a number, ``tol[dtype]`` when a dict that
  has it, else the default for the canonical form of `dtype`."""
  if tol is None:
    tol = {}
  if not isinstance(tol, dict):
    return tol
  tol = {np.dtype(k): v for k, v in tol.items()}
  dtype = _dtypes.canonicalize_dtype(np.dtype(dtype))
  return tol.get(dtype, _default_tolerance[dtype])


def _as_dict(tol) -> dict:
  if isinstance(tol, dict):
    return {np.dtype(k): v for k, v in tol.items()}
  return dict.fromkeys(_default_tolerance, tol or 0)


def join_tolerance(tol1, tol2) -> dict:
  """Per dtype, the larger of two tolerances (numbers or dicts)."""
  out = _as_dict(tol1)
  for k, v in _as_dict(tol2).items():
    out[k] = max(v, out.get(k, 0))
  return out


def _upcast(x: np.ndarray) -> np.ndarray:
  if x.dtype in _CUSTOM_FLOATS:
    return x.astype(np.float32)
  if x.dtype in (_dtypes.int2, _dtypes.int4):
    return x.astype(np.int8)
  if x.dtype in (_dtypes.uint2, _dtypes.uint4):
    return x.astype(np.uint8)
  return x


def _assert_numpy_allclose(a, b, atol=None, rtol=None, err_msg=""):
  if a.dtype == b.dtype == _dtypes.float0:
    np.testing.assert_array_equal(a, b, err_msg=err_msg)
    return
  a, b = _upcast(a), _upcast(b)
  kw = {}
  if atol:
    kw["atol"] = atol
  if rtol:
    kw["rtol"] = rtol
  with np.errstate(invalid="ignore"):
    np.testing.assert_allclose(a, b, **kw, err_msg=err_msg)


def _assert_numpy_close(a, b, atol=None, rtol=None, err_msg=""):
  a, b = np.asarray(a), np.asarray(b)
  assert a.shape == b.shape, (a.shape, b.shape)
  atol = max(tolerance(a.dtype, atol), tolerance(b.dtype, atol))
  rtol = max(tolerance(a.dtype, rtol), tolerance(b.dtype, rtol))
  _assert_numpy_allclose(a, b, atol=atol * a.size, rtol=rtol * b.size, err_msg=err_msg)


def check_close(xs, ys, atol=None, rtol=None, err_msg=""):
  """Leaf by leaf, `xs` and `ys` are close (tolerances scaled by the leaf's size)."""
  tree_util.tree_map(lambda x, y: _assert_numpy_close(x, y, atol, rtol, err_msg), xs, ys)


def check_eq(xs, ys, err_msg=""):
  """Leaf by leaf, `xs` and `ys` are close with the default tolerances."""
  tree_util.tree_map(
      lambda x, y: _assert_numpy_allclose(np.asarray(x), np.asarray(y), err_msg=err_msg),
      xs, ys)


def _check_dtypes_match(xs, ys):
  def same(x, y):
    if config_lib.enable_x64.value:
      assert _dtype(x) == _dtype(y), (_dtype(x), _dtype(y))
    else:
      assert (_dtypes.canonicalize_dtype(_dtype(x))
              == _dtypes.canonicalize_dtype(_dtype(y))), (_dtype(x), _dtype(y))
  tree_util.tree_map(same, xs, ys)


def is_sequence(x) -> bool:
  try:
    iter(x)
  except TypeError:
    return False
  return True


def check_raises(thunk, err_type, msg):
  """`thunk()` raises `err_type` with a message starting with `msg`."""
  try:
    thunk()
  except err_type as e:
    assert str(e).startswith(msg), f"\n{e}\n\n{msg}\n"
  else:
    raise AssertionError(f"expected {err_type.__name__}")


def check_raises_regexp(thunk, err_type, pattern):
  """`thunk()` raises `err_type` with a message matching `pattern`."""
  try:
    thunk()
  except err_type as e:
    assert re.match(pattern, str(e)), f"{e}\n\n{pattern}\n"
  else:
    raise AssertionError(f"expected {err_type.__name__}")


def to_default_dtype(arr) -> np.ndarray:
  """`arr` as an array whose dtype is JAX's default for its kind (float32 without x64)."""
  arr = np.asarray(arr)
  default = {"b": np.bool_, "i": _dtypes.default_int_dtype, "u": _dtypes.default_uint_dtype,
             "f": _dtypes.default_float_dtype, "c": _dtypes.default_complex_dtype}.get(
                 arr.dtype.kind)
  if default is None:
    return arr
  return arr.astype(default() if callable(default) else default)


def with_jax_dtype_defaults(func, use_defaults=True):
  """`func` with its outputs cast to JAX's default dtypes (per output when `use_defaults` is a
  pytree of booleans)."""
  def wrapped(*args, **kwargs):
    result = func(*args, **kwargs)
    if isinstance(use_defaults, bool):
      return tree_util.tree_map(to_default_dtype, result) if use_defaults else result
    return tree_util.tree_map(lambda a, use: to_default_dtype(a) if use else a,
                              result, use_defaults)
  return wrapped


def num_float_bits(dtype) -> int:
  return _dtypes.finfo(_dtypes.canonicalize_dtype(dtype)).bits


# ----------------------------------------------------------------------------------------------
# Configuration

@contextmanager
def global_config_context(**kwds):
  """Sets configuration options (``config.update``) for the block, then restores them."""
  before = {}
  try:
    for name, value in kwds.items():
      before[name] = getattr(config, name)
      config.update(name, value)
    yield
  finally:
    for name, value in before.items():
      config.update(name, value)


@contextmanager
def thread_local_config_context(**kwds):
  """Sets configuration options in this thread for the block."""
  with contextlib.ExitStack() as stack:
    for name, value in kwds.items():
      stack.enter_context(_local_setting(name, value))
    yield


def _local_setting(name: str, value):
  state = _CONFIG_STATES.get(name)
  if state is not None:
    return state(value)
  if name not in config._values:
    # An option xjax fixes at JAX's default: the same value is a no-op, another raises
    # NotImplementedError when the test runs.
    from xjax._src.jax_compat.private import config as jax_config
    fixed = next((s for s in vars(jax_config).values()
                  if isinstance(s, jax_config.FixedState) and s.name == name), None)
    if fixed is not None:
      return fixed(value)
    raise AttributeError(f"xjax has no configuration option {name!r}")
  return config.override(name, value)


_CONFIG_STATES = {s.name: s for s in vars(config_lib).values()
                  if isinstance(s, config_lib.State)}


def _merged_config_decorator(attr, kwds):
  """A class decorator setting `cls.<attr>` to its bases' options updated with `kwds`."""
  def decorator(cls):
    merged = {}
    for base in cls.__bases__:
      merged.update(getattr(base, attr, {}))
    merged.update(kwds)
    setattr(cls, attr, merged)
    return cls
  return decorator


def with_config(**kwds):
  """Class decorator: each test of a `JaxTestCase` subclass runs with these options set in its
  thread (added to those of its bases)."""
  return _merged_config_decorator("_default_thread_local_config", kwds)


def with_global_config(**kwds):
  """Class decorator: each test of a `JaxTestCase` subclass runs with these options set
  process-wide."""
  return _merged_config_decorator("_default_global_config", kwds)


def strict_promotion_if_dtypes_match(dtypes):
  """Strict dtype promotion when all `dtypes` are equal, standard promotion otherwise."""
  if all(d == dtypes[0] for d in dtypes):
    return config_lib.numpy_dtype_promotion("strict")
  return config_lib.numpy_dtype_promotion("standard")


def promote_like_jnp(fun, inexact=False):
  """`fun` with its arguments first promoted to their common jnp dtype (NumPy references then
  compute in the dtype jnp would)."""
  from xjax._src.numpy import util as np_util
  promote = np_util.promote_dtypes_inexact if inexact else np_util.promote_dtypes

  def wrapper(*args, **kw):
    leaves, tree = tree_util.tree_flatten(args)
    return fun(*tree_util.tree_unflatten(tree, promote(*leaves)), **kw)
  return wrapper


# ----------------------------------------------------------------------------------------------
# Warnings

@contextmanager
def _recorded_warnings():
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    yield caught


def ignore_warning(*, message: str = "", category=Warning, **kw):
  """Decorator or context manager: warnings matching `message`/`category` are ignored."""
  class _Ignore(contextlib.ContextDecorator):
    def __enter__(self):
      self._cm = warnings.catch_warnings()
      self._cm.__enter__()
      warnings.filterwarnings("ignore", message=message, category=category, **kw)

    def __exit__(self, *exc):
      return self._cm.__exit__(*exc)
  return _Ignore()


# ----------------------------------------------------------------------------------------------
# JaxTestCase

def _executables_compiled() -> int:
  stats = executable_cache.stats().get("executables")
  return 0 if stats is None else stats.misses


class JaxTestCase(parameterized.TestCase):
  """Base class of JAX's tests: JAX's test configuration, a seeded `rng()`, numerical checks.

  Mirrors `jax._src.test_util.JaxTestCase`."""

  _default_global_config: dict = {}
  _default_thread_local_config = {
      "jax_enable_checks": True,
      "jax_numpy_dtype_promotion": "strict",
      "jax_numpy_rank_promotion": "raise",
      "jax_traceback_filtering": "off",
      "jax_legacy_prng_key": "error",
  }

  def setUp(self):
    super().setUp()
    # adler32 is stable across runs (unlike hash()) and fits RandomState's seed range.
    self._rng = np.random.RandomState(zlib.adler32(self._testMethodName.encode()))
    self.enterContext(global_config_context(**self._default_global_config))
    for name, value in self._default_thread_local_config.items():
      self.enterContext(_local_setting(name, value))

  def rng(self):
    return self._rng

  # -- comparisons --------------------------------------------------------------------------

  def assertDtypesMatch(self, actual, desired, *, canonicalize_dtypes=True):
    if not config_lib.enable_x64.value and canonicalize_dtypes:
      self.assertEqual(_dtypes.canonicalize_dtype(_dtype(actual), allow_extended_dtype=True),
                       _dtypes.canonicalize_dtype(_dtype(desired), allow_extended_dtype=True))
    else:
      self.assertEqual(_dtype(actual), _dtype(desired))

  def assertArraysEqual(self, actual, desired, *, check_dtypes=True, err_msg="",
                        allow_object_dtype=False, verbose=True):
    """`actual` and `desired` are exactly equal (and of one dtype with `check_dtypes`)."""
    if check_dtypes:
      self.assertDtypesMatch(actual, desired)
    actual, desired = np.asarray(actual), np.asarray(desired)
    if not allow_object_dtype and object in (actual.dtype, desired.dtype):
      raise TypeError(
          "assertArraysEqual may be poorly behaved when np.asarray casts to dtype=object. "
          "If comparing PRNG keys, consider random_test.KeyArrayTest.assertKeysEqual. "
          "If comparing collections of arrays, consider using assertAllClose. "
          "To let this test proceed anyway, pass allow_object_dtype=True.")
    with np.errstate(over="ignore"):
      np.testing.assert_array_equal(actual, desired, err_msg=err_msg, verbose=verbose)

  def assertArraysAllClose(self, actual, desired, *, check_dtypes=True, atol=None, rtol=None,
                           err_msg=""):
    """`actual` and `desired` (arrays) are close within the larger dtype's tolerance."""
    self.assertEqual(actual.shape, desired.shape)
    atol = max(tolerance(_dtype(actual), atol), tolerance(_dtype(desired), atol))
    rtol = max(tolerance(_dtype(actual), rtol), tolerance(_dtype(desired), rtol))
    _assert_numpy_allclose(actual, desired, atol=atol, rtol=rtol, err_msg=err_msg)
    if check_dtypes:
      self.assertDtypesMatch(actual, desired)

  def assertAllClose(self, actual, desired, *, check_dtypes=True, atol=None, rtol=None,
                     canonicalize_dtypes=True, err_msg=""):
    """`actual` and `desired` (arrays, scalars, or dicts/sequences of them) are close."""
    kw = dict(check_dtypes=check_dtypes, atol=atol, rtol=rtol,
              canonicalize_dtypes=canonicalize_dtypes, err_msg=err_msg)
    if isinstance(actual, dict):
      self.assertIsInstance(desired, dict)
      self.assertEqual(set(actual), set(desired))
      for k in actual:
        self.assertAllClose(actual[k], desired[k], **kw)
    elif is_sequence(actual) and not hasattr(actual, "__array__"):
      if not (is_sequence(desired) and not hasattr(desired, "__array__")):
        self.fail(f"Expected sequence, got {desired}")
      self.assertEqual(len(actual), len(desired))
      for a, d in zip(actual, desired):
        self.assertAllClose(a, d, **kw)
    elif hasattr(actual, "__array__") or np.isscalar(actual):
      if not (hasattr(desired, "__array__") or np.isscalar(desired)):
        self.fail(f"Expected array-like, got {desired}")
      if check_dtypes:
        self.assertDtypesMatch(actual, desired, canonicalize_dtypes=canonicalize_dtypes)
      self.assertArraysAllClose(np.asarray(actual), np.asarray(desired), check_dtypes=False,
                                atol=atol, rtol=rtol, err_msg=err_msg)
    elif actual == desired:
      return
    else:
      raise TypeError((type(actual), type(desired)))

  def assertMultiLineStrippedEqual(self, expected, what):
    """The strings are equal once dedented and stripped of the spaces around newlines."""
    def clean(s):
      return re.sub(r"\s*\n\s*", "\n", textwrap.dedent(s).strip())
    if clean(what) != clean(expected):
      print(f"Found\n{what}\n")
      self.assertMultiLineEqual(clean(expected), clean(what),
                                msg=f"Found\n{what}\nExpecting\n{expected}")

  # -- warnings -----------------------------------------------------------------------------

  @contextmanager
  def assertNoWarnings(self):
    with warnings.catch_warnings():
      warnings.simplefilter("error")
      yield

  @contextmanager
  def assertWarns(self, warning, *, msg=None):
    with _recorded_warnings() as caught:
      yield
    for w in caught:
      if isinstance(w.message, warning) and (msg is None or msg in str(w.message)):
        return
    self.fail(f"Expected warning not found {warning}:'{msg}', got {caught}")

  @contextmanager
  def assertWarnsRegex(self, warning, regex):
    pattern = re.compile(regex) if isinstance(regex, str) else regex
    with _recorded_warnings() as caught:
      yield
    for w in caught:
      if isinstance(w.message, warning) and (pattern is None
                                             or pattern.search(str(w.message))):
        return
    self.fail(f"Expected warning not found {warning}:'{pattern}', "
              f"got warnings: {[str(w.message) for w in caught]}")

  def assertDeprecationWarnsOrRaises(self, deprecation_id, message, *,
                                     error_class=ValueError):
    from xjax._src import deprecations
    if deprecations.is_accelerated(deprecation_id):
      return self.assertRaisesRegex(error_class, message)
    return self.assertWarnsRegex(DeprecationWarning, message)

  # -- transformations ----------------------------------------------------------------------

  def _CompileAndCheck(self, fun, args_maker, *, check_dtypes=True, tol=None, rtol=None,
                       atol=None, check_cache_misses=True):
    """`jit(fun)` agrees with `fun` on two sets of arguments; the second eager call compiles
    nothing new, and the second jitted call does not run Python again."""
    atol, rtol = atol or tol, rtol or tol
    args = args_maker()
    python_should_run = True

    def wrapped(*a):
      self.assertTrue(python_should_run)
      return fun(*a)

    python_ans = fun(*args)
    self.assertEqual(tree_util.tree_map(np.shape, python_ans),
                     tree_util.tree_map(lambda x: np.shape(np.asarray(x)), python_ans))
    compiled_before = _executables_compiled()
    python_ans = fun(*args)
    if check_cache_misses:
      self.assertEqual(compiled_before, _executables_compiled(),
                       f"Compilation detected during second call of {fun} in op-by-op mode.")

    cfun = jit(wrapped)
    monitored_ans = cfun(*args)
    python_should_run = False
    compiled_ans = cfun(*args)
    self.assertAllClose(monitored_ans, python_ans, check_dtypes=check_dtypes, atol=atol,
                        rtol=rtol)
    self.assertAllClose(compiled_ans, python_ans, check_dtypes=check_dtypes, atol=atol,
                        rtol=rtol)

    args = args_maker()
    python_should_run = True
    python_ans = fun(*args)
    python_should_run = False
    compiled_ans = cfun(*args)
    self.assertAllClose(compiled_ans, python_ans, check_dtypes=check_dtypes, atol=atol,
                        rtol=rtol)

  def _CheckAgainstNumpy(self, numpy_reference_op, lax_op, args_maker, check_dtypes=True,
                         tol=None, atol=None, rtol=None, canonicalize_dtypes=True):
    """`lax_op` agrees with `numpy_reference_op` on one set of arguments."""
    args = args_maker()
    lax_ans = lax_op(*args)
    numpy_ans = numpy_reference_op(*args)
    self.assertAllClose(lax_ans, numpy_ans, check_dtypes=check_dtypes, atol=atol or tol,
                        rtol=rtol or tol, canonicalize_dtypes=canonicalize_dtypes)


class BufferDonationTestCase(JaxTestCase):
  def assertDeleted(self, x):
    self.assertTrue(x.is_deleted())

  def assertNotDeleted(self, x):
    self.assertFalse(x.is_deleted())


