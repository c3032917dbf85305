"""Shared helpers for the jnp tests: NumPy-referenced checks, eager and under jit.

`check` runs an xjax function eagerly and under `xjax.jit`, compares both with
a NumPy reference (values within the dtype's tolerance), and checks the
result dtype: by default NumPy's result dtype canonicalized to 32 bits, which
is JAX's answer for most functions; tests pass `dtype=` where JAX differs
from NumPy (bfloat16 inputs, integer cumsum, ...).
"""
import ml_dtypes
import numpy as np

import xjax
from xjax._src import dtypes
from xjax._src.test_util import tolerance

bf16 = np.dtype(ml_dtypes.bfloat16)

# The dtypes the issue asks every function to be tried with (where valid).
FLOAT_DTYPES = [np.dtype(np.float32), bf16]
INT_DTYPES = [np.dtype(np.int32), np.dtype(np.uint8)]
ALL_DTYPES = [np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.bool_), np.dtype(np.uint8),
              bf16, np.dtype(np.complex64)]
SHAPES = [(), (0,), (1,), (3,), (2, 3), (1, 4), (2, 0)]


def rand(rng, shape, dtype, low=-3.0, high=3.0):
  """Random values of `shape` and exactly `dtype` (bfloat16 included)."""
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return rng.random(shape) < 0.5
  if dtype.kind == "u":
    return rng.integers(0, 10, size=shape).astype(dtype)
  if dtype.kind == "i":
    return rng.integers(-9, 10, size=shape).astype(dtype)
  x = rng.uniform(low, high, size=shape)
  if dtype.kind == "c":
    x = x + 1j * rng.uniform(low, high, size=shape)
  return x.astype(dtype)


def _host(x):
  """An argument as NumPy computes with it (bfloat16 widened to float32)."""
  if isinstance(x, np.ndarray) and x.dtype == bf16:
    return x.astype(np.float32)
  return x


def _device(x):
  return xjax.device_put(x) if isinstance(x, (np.ndarray, np.generic)) else x


def _tol(dtype, tol):
  if tol is not None:
    return tol
  return max(tolerance(dtype), 1e-5) if np.dtype(dtype).kind in "fc" or dtype == bf16 else 0


def assert_values(actual, expected, dtype, tol=None):
  actual, expected = np.asarray(actual), np.asarray(expected)
  assert actual.shape == expected.shape, (actual.shape, expected.shape)
  if dtype.kind in "biu":
    np.testing.assert_array_equal(actual, expected.astype(dtype))
    return
  wide = np.complex128 if dtype.kind == "c" else np.float64
  t = _tol(dtype, tol)
  with np.errstate(invalid="ignore", over="ignore"):
    np.testing.assert_allclose(actual.astype(wide), expected.astype(wide), rtol=t, atol=t,
                               equal_nan=True)


def check(fun, np_fun, *args, dtype=None, tol=None, jit=True, weak=None):
  """`fun(*args)` eagerly and under jit matches `np_fun(*args)`; returns the eager result.

  Args:
    fun: the xjax function (its array arguments arrive as xjax Arrays).
    np_fun: the NumPy reference (bfloat16 arguments arrive as float32).
    dtype: the expected result dtype (default: NumPy's, canonicalized).
    tol: the tolerance (default: by dtype).
    jit: also check ``xjax.jit(fun)``.
    weak: the expected weak type of the result, if it should be checked.
  """
  eager = fun(*[_device(a) for a in args])
  expected = np_fun(*[_host(a) for a in args])
  outs = [eager]
  if jit:
    outs.append(xjax.jit(fun)(*[_device(a) for a in args]))
  for out in outs:
    out_leaves = out if isinstance(out, (tuple, list)) else [out]
    exp_leaves = expected if isinstance(expected, (tuple, list)) else [expected]
    assert len(out_leaves) == len(exp_leaves)
    for o, e in zip(out_leaves, exp_leaves):
      assert isinstance(o, xjax.Array), type(o)
      want = np.dtype(dtype) if dtype is not None else dtypes.canonicalize_dtype(np.asarray(e).dtype)
      assert o.dtype == want, (o.dtype, want)
      if weak is not None:
        assert o.weak_type == weak, o.aval
      assert_values(o, e, want, tol)
  if jit:
    for a, b in zip(outs[0] if isinstance(outs[0], (tuple, list)) else [outs[0]],
                    outs[1] if isinstance(outs[1], (tuple, list)) else [outs[1]]):
      assert a.aval == b.aval, (a.aval, b.aval)
  return eager
