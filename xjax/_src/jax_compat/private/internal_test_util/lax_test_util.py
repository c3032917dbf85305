"""`jax._src.internal_test_util.lax_test_util` under `xjax.install_as_jax()`: the tables
JAX's lax tests (lax_test.py, lax_vmap_test.py, lax_vmap_op_test.py, pmap_test.py) are
parameterized by.

* dtype lists (`float_dtypes`, `int_dtypes`, `default_dtypes`, `all_dtypes`, ...), fixed
  when this module is imported: without jax_enable_x64 they leave out int64, uint64,
  float64 and complex128, as JAX's test_util does on CPU and GPU;
* `compatible_shapes` and `python_scalar_types`;
* op records: `lax_ops()` (elementwise lax operations with arity, dtypes, argument maker
  and tolerance), `lax_out_dtype_ops()`, `lax_reduce_ops()`, `lax_named_reduce_ops()`;
* batching helpers: `all_bdims`, `add_bdim`, `slicer`, `args_slicer`.

The records' argument makers are the ``rand_*`` factories of the stand-in for JAX's
test_util, `xjax._src.jaxtest`, looked up when a record table is built; should that module
be missing, a record holds a named placeholder that looks the factory up when called.
"""
from __future__ import annotations

import collections
import itertools

import ml_dtypes
import numpy as np

from xjax import lax
from xjax._src.config import config


# ---------------------------------------------------------------------------------------
# Dtype lists and shapes.

_NEEDS_X64 = (np.int64, np.uint64, np.float64, np.complex128)


def _available(*candidates):
  """The candidate dtypes the current mode supports (64-bit ones only with x64)."""
  x64 = bool(config.jax_enable_x64)
  return [d for d in candidates if x64 or d not in _NEEDS_X64]


float_dtypes = _available(ml_dtypes.bfloat16, np.float16, np.float32, np.float64)
complex_elem_dtypes = _available(np.float32, np.float64)
complex_dtypes = _available(np.complex64, np.complex128)
inexact_dtypes = float_dtypes + complex_dtypes
int_dtypes = _available(np.int8, np.int16, np.int32, np.int64)
uint_dtypes = _available(np.uint8, np.uint16, np.uint32, np.uint64)
bool_dtypes = _available(np.bool_)

default_dtypes = float_dtypes + int_dtypes
number_dtypes = float_dtypes + complex_dtypes + int_dtypes + uint_dtypes
all_dtypes = number_dtypes + bool_dtypes
python_scalar_types = [bool, int, float, complex]

# Groups of shapes that broadcast together; the lax tests draw an op's operands from one.
compatible_shapes = [[(3,)], [(3, 4), (3, 1), (1, 4)], [(2, 3, 4), (2, 1, 4)]]


# ---------------------------------------------------------------------------------------
# Argument makers.

class _DeferredRandFactory:
  """Stands for the test_util factory `name` until the stand-in module can be imported."""

  def __init__(self, name):
    self.__name__ = self.__qualname__ = name

  def __call__(self, *args, **kwargs):
    return _resolve_rand(self.__name__)(*args, **kwargs)

  def __repr__(self):
    return f"<test_util.{self.__name__} (deferred)>"


def _resolve_rand(name):
  from xjax._src import jaxtest
  return getattr(jaxtest, name)


def _rand(name):
  """The test_util argument-maker factory `name` (rand_default, rand_small, ...)."""
  try:
    return _resolve_rand(name)
  except ModuleNotFoundError as e:
    if e.name not in ("xjax._src.jaxtest", "xjax._src"):
      raise
    return _DeferredRandFactory(name)


# ---------------------------------------------------------------------------------------
# Op records.

OpRecord = collections.namedtuple("OpRecord", ["op", "nargs", "dtypes", "rng_factory", "tol"])


def op_record(op, nargs, dtypes, rng_factory, tol=None):
  return OpRecord(op, nargs, dtypes, rng_factory, tol)


def _records(rows):
  """OpRecords from rows (op name, arity, dtypes, rand factory name[, tolerance])."""
  return [op_record(name, nargs, dtypes, _rand(rand), *tol)
          for name, nargs, dtypes, rand, *tol in rows]


def lax_out_dtype_ops():
  """Operations taking an `out_dtype` argument."""
  return _records([("mul", 2, default_dtypes + complex_dtypes, "rand_small")])


def lax_ops():
  """The elementwise lax operations the lax tests check against `lax_reference`."""
  fc = float_dtypes + complex_dtypes
  numbers = default_dtypes + complex_dtypes
  integers = int_dtypes + uint_dtypes
  not_bf16 = [d for d in float_dtypes if d != ml_dtypes.bfloat16]
  not_half = [d for d in not_bf16 if d != np.float16]
  return _records([
      ("neg", 1, numbers, "rand_small"),
      ("sign", 1, default_dtypes + uint_dtypes, "rand_small"),
      ("floor", 1, float_dtypes, "rand_small"),
      ("ceil", 1, float_dtypes, "rand_small"),
      ("round", 1, float_dtypes, "rand_default"),
      ("nextafter", 2, not_bf16, "rand_default", 0),
      ("is_finite", 1, float_dtypes, "rand_small"),
      ("exp", 1, fc, "rand_small"),
      ("exp2", 1, fc, "rand_small"),
      # expm1 of float64 on CPU is accurate to about float32 precision only.
      ("expm1", 1, fc, "rand_small", {np.float64: 1e-8}),
      ("log", 1, fc, "rand_positive"),
      ("log1p", 1, fc, "rand_positive"),
      # tanh of complex128 (CPU) and of float64 (GPU) has about float32 precision.
      ("tanh", 1, fc, "rand_small", {np.float64: 1e-9, np.complex128: 1e-7}),
      ("logistic", 1, fc, "rand_default"),
      ("sin", 1, fc, "rand_default"),
      ("cos", 1, fc, "rand_default"),
      ("atan2", 2, float_dtypes, "rand_default"),
      ("sqrt", 1, float_dtypes, "rand_positive"),
      ("sqrt", 1, complex_dtypes, "rand_default"),
      ("rsqrt", 1, float_dtypes, "rand_positive"),
      ("rsqrt", 1, complex_dtypes, "rand_default"),
      ("cbrt", 1, float_dtypes, "rand_default"),
      ("square", 1, fc, "rand_default"),
      ("reciprocal", 1, fc, "rand_positive"),
      ("tan", 1, fc, "rand_default", {np.float32: 3e-5}),
      ("asin", 1, fc, "rand_small", {np.complex128: 5e-12}),
      ("acos", 1, fc, "rand_small"),
      ("atan", 1, fc, "rand_small"),
      ("asinh", 1, fc, "rand_default", {np.complex64: 1e-4, np.complex128: 1e-5}),
      ("acosh", 1, fc, "rand_positive"),
      # atanh has about float32 precision.
      ("atanh", 1, fc, "rand_small", {np.float64: 1e-9}),
      ("sinh", 1, fc, "rand_default"),
      ("cosh", 1, fc, "rand_default"),
      ("lgamma", 1, float_dtypes, "rand_positive", {np.float32: 1e-5, np.float64: 1e-14}),
      ("digamma", 1, float_dtypes, "rand_positive", {np.float64: 1e-14}),
      ("betainc", 3, float_dtypes, "rand_uniform", {np.float32: 2e-5, np.float64: 1e-12}),
      ("igamma", 2, not_half, "rand_positive", {np.float64: 1e-14}),
      ("igammac", 2, not_half, "rand_positive", {np.float64: 1e-14}),
      ("erf", 1, float_dtypes, "rand_small"),
      ("erfc", 1, float_dtypes, "rand_small"),
      # XLA's erf_inv approximation is accurate to float32 precision only.
      ("erf_inv", 1, float_dtypes, "rand_small", {np.float64: 1e-9}),
      ("bessel_i0e", 1, float_dtypes, "rand_default"),
      ("bessel_i1e", 1, float_dtypes, "rand_default"),
      ("real", 1, complex_dtypes, "rand_default"),
      ("imag", 1, complex_dtypes, "rand_default"),
      ("complex", 2, complex_elem_dtypes, "rand_default"),
      ("conj", 1, complex_elem_dtypes + complex_dtypes, "rand_default"),
      ("abs", 1, numbers, "rand_default"),
      ("pow", 2, fc, "rand_positive"),
      ("bitwise_and", 2, bool_dtypes, "rand_small"),
      ("bitwise_not", 1, bool_dtypes, "rand_small"),
      ("bitwise_or", 2, bool_dtypes, "rand_small"),
      ("bitwise_xor", 2, bool_dtypes, "rand_small"),
      ("population_count", 1, integers, "rand_int"),
      ("clz", 1, integers, "rand_int"),
      ("add", 2, numbers, "rand_small"),
      ("sub", 2, numbers, "rand_small"),
      ("mul", 2, numbers, "rand_small"),
      ("mulhi", 2, integers, "rand_fullrange"),
      ("div", 2, numbers, "rand_nonzero"),
      ("rem", 2, default_dtypes, "rand_nonzero"),
      ("max", 2, all_dtypes, "rand_small"),
      ("min", 2, all_dtypes, "rand_small"),
      ("eq", 2, all_dtypes, "rand_some_equal"),
      ("ne", 2, all_dtypes, "rand_small"),
      ("ge", 2, default_dtypes, "rand_small"),
      ("gt", 2, default_dtypes, "rand_small"),
      ("le", 2, default_dtypes, "rand_small"),
      ("lt", 2, default_dtypes, "rand_small"),
  ])


ReducerOpRecord = collections.namedtuple(
    "ReducerOpRecord", ["op", "reference_op", "init_val", "dtypes", "primitive"])


def lax_reduce_ops():
  """lax.reduce computations with their NumPy ufunc, identity element, dtypes and the
  monoid primitive lax.reduce should lower to."""
  bitwise = int_dtypes + uint_dtypes + bool_dtypes
  low, high = (lambda t: np.iinfo(t).min), (lambda t: np.iinfo(t).max)
  rows = [
      (lax.add, np.add, 0, default_dtypes, lax.reduce_sum_p),
      (lax.mul, np.multiply, 1, default_dtypes, lax.reduce_prod_p),
      (lax.max, np.maximum, 0, uint_dtypes + bool_dtypes, lax.reduce_max_p),
      (lax.max, np.maximum, -np.inf, float_dtypes, lax.reduce_max_p),
      (lax.max, np.maximum, low(np.int32), [np.int32], lax.reduce_max_p),
      (lax.max, np.maximum, low(np.int64), [np.int64], lax.reduce_max_p),
      (lax.min, np.minimum, np.inf, float_dtypes, lax.reduce_min_p),
      (lax.min, np.minimum, high(np.int32), [np.int32], lax.reduce_min_p),
      (lax.min, np.minimum, high(np.int64), [np.int64], lax.reduce_min_p),
      (lax.min, np.minimum, high(np.uint32), [np.uint32], lax.reduce_min_p),
      (lax.min, np.minimum, high(np.uint64), [np.uint64], lax.reduce_min_p),
      (lax.bitwise_and, np.bitwise_and, -1, bitwise, lax.reduce_and_p),
      (lax.bitwise_or, np.bitwise_or, 0, bitwise, lax.reduce_or_p),
      (lax.bitwise_xor, np.bitwise_xor, 0, bitwise, lax.reduce_xor_p),
  ]
  return [ReducerOpRecord(*row) for row in rows]


NamedReducerOpRecord = collections.namedtuple(
    "NamedReducerOpRecord", ["op", "reference_op", "dtypes"])


def lax_named_reduce_ops():
  """The lax.reduce_<name> functions with the NumPy reduction each should agree with."""
  bitwise = bool_dtypes + int_dtypes + uint_dtypes
  return [
      NamedReducerOpRecord(lax.reduce_sum, np.sum, number_dtypes),
      NamedReducerOpRecord(lax.reduce_prod, np.prod, number_dtypes),
      NamedReducerOpRecord(lax.reduce_max, np.max, all_dtypes),
      NamedReducerOpRecord(lax.reduce_min, np.min, all_dtypes),
      NamedReducerOpRecord(lax.reduce_and, np.bitwise_and.reduce, bitwise),
      NamedReducerOpRecord(lax.reduce_or, np.bitwise_or.reduce, bitwise),
      NamedReducerOpRecord(lax.reduce_xor, np.bitwise_xor.reduce, bitwise),
  ]


# ---------------------------------------------------------------------------------------
# Batching helpers.

def all_bdims(*shapes):
  """Every choice of a batch axis per operand (None: unbatched; otherwise a position
  0..ndim to insert it at), except the choice that batches no operand."""
  per_operand = [[None, *range(len(shape) + 1)] for shape in shapes]
  return (choice for choice in itertools.product(*per_operand)
          if any(b is not None for b in choice))


def add_bdim(bdim_size, bdim, shape):
  """`shape` with an axis of `bdim_size` inserted at `bdim` (unchanged if bdim is None)."""
  if bdim is None:
    return tuple(shape)
  return (*shape[:bdim], bdim_size, *shape[bdim:])


def slicer(x, bdim):
  """i -> the i-th slice of `x` along its batch axis `bdim` (`x` itself if unbatched)."""
  if bdim is None:
    return lambda _: x
  return lambda i: lax.index_in_dim(x, i, bdim, keepdims=False)


def args_slicer(args, bdims):
  """i -> the list of the i-th slices of `args` along their batch axes `bdims`."""
  if len(args) != len(bdims):
    raise ValueError(f"{len(args)} arguments but {len(bdims)} batch axes")
  slicers = [slicer(x, b) for x, b in zip(args, bdims)]
  return lambda i: [s(i) for s in slicers]
