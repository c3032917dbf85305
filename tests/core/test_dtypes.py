"""Dtypes: promotion against the golden table from real JAX, and the helpers.

tests/golden/promotion.json is written by tools/golden_dtypes.py.
"""
import json
import os
import re
import types
import warnings

import ml_dtypes
import numpy as np
import pytest

from xjax._src import dtypes
from xjax._src.config import config

with open(os.path.join(os.path.dirname(__file__), os.pardir, "golden", "promotion.json")) as f:
  GOLDEN = json.load(f)
NAMES = GOLDEN["types"]
WEAK_VALUES = {"weak_int": 1, "weak_float": 1.0, "weak_complex": 1j}
WEAK_TYPES = {"weak_int": int, "weak_float": float, "weak_complex": complex}
MODES = {"x64_off": False, "x64_on": True}
PAIRS = [(mode, a, b) for mode in MODES for a in NAMES for b in NAMES]


@pytest.fixture(autouse=True)
def _standard_promotion():
  """The tables assume standard promotion whatever JAX_NUMPY_DTYPE_PROMOTION says."""
  with config.override("jax_numpy_dtype_promotion", "standard"):
    yield


def _value(name):
  return WEAK_VALUES[name] if name in WEAK_VALUES else np.dtype(name)


def _record(fn):
  try:
    out, weak = fn()
    return [str(out), bool(weak)]
  except Exception as e:
    return {"error": type(e).__name__, "message": str(e)}


def _same_message(got, want):
  """Messages listing the input dtypes compare with the listed order ignored
  (JAX lists them in set order)."""
  pattern = r"\(([^()]*)\)"
  return (re.sub(pattern, "()", got, count=1) == re.sub(pattern, "()", want, count=1)
          and sorted(re.search(pattern, got).group(1).split(", "))
          == sorted(re.search(pattern, want).group(1).split(", ")))


def _check(got, want):
  if isinstance(want, dict):
    assert isinstance(got, dict), (got, want)
    assert got["error"] == want["error"]
    assert _same_message(got["message"], want["message"]), (got["message"], want["message"])
  else:
    assert got == want


def test_golden_records_jax_version():
  assert GOLDEN["jax_version"] == "0.10.2"
  assert len(NAMES) == 18
  for mode in MODES:
    assert GOLDEN[mode]["add_disagrees_with_result_type"] == {}


@pytest.mark.parametrize("mode,a,b", PAIRS)
def test_result_type_matches_golden(mode, a, b):
  with config.override("jax_enable_x64", MODES[mode]):
    got = _record(lambda: dtypes.result_type(_value(a), _value(b), return_weak_type_flag=True))
  assert got == GOLDEN[mode]["result_type"][a][b]


@pytest.mark.parametrize("mode,a,b", PAIRS)
def test_strict_result_type_matches_golden(mode, a, b):
  with config.override("jax_enable_x64", MODES[mode]), \
       config.override("jax_numpy_dtype_promotion", "strict"):
    got = _record(lambda: dtypes.result_type(_value(a), _value(b), return_weak_type_flag=True))
  _check(got, GOLDEN[mode]["strict"][a][b])


@pytest.mark.parametrize("mode", MODES)
def test_promote_types_matches_golden(mode):
  like = lambda name: WEAK_TYPES[name] if name in WEAK_TYPES else np.dtype(name)
  with config.override("jax_enable_x64", MODES[mode]):
    for a in NAMES:
      for b in NAMES:
        got = _record(lambda: (dtypes.promote_types(like(a), like(b)), False))
        assert got == GOLDEN[mode]["promote_types"][a][b], (a, b)


@pytest.mark.parametrize("mode", MODES)
def test_result_type_of_one_argument_matches_golden(mode):
  args = {"int": int, "float": float, "complex": complex, "bool": bool, "True": True,
          "1": 1, "1.0": 1.0, "1j": 1j, "None": None, "np.float64": np.float64,
          "np.int64(1)": np.int64(1), "np.zeros(2)": np.zeros(2), "'bfloat16'": "bfloat16"}
  assert set(args) == set(GOLDEN[mode]["unary"])
  with config.override("jax_enable_x64", MODES[mode]):
    for key, arg in args.items():
      got = _record(lambda: dtypes.result_type(arg, return_weak_type_flag=True))
      assert got == GOLDEN[mode]["unary"][key], key


def test_result_type_of_three_arguments_joins_all():
  with config.override("jax_enable_x64", False):
    assert dtypes.result_type(np.int8, np.uint8, 1.0) == np.float32
    assert dtypes.result_type(np.int8, 1, 2) == np.int8
    assert dtypes.result_type(1, 2.0, 3j, return_weak_type_flag=True) == (np.complex64, True)


def test_result_type_without_arguments_raises():
  with pytest.raises(ValueError, match="at least one array or dtype is required"):
    dtypes.result_type()


def test_result_type_reads_aval_weak_type():
  weak = types.SimpleNamespace(dtype=np.dtype("float32"),
                               aval=types.SimpleNamespace(weak_type=True))
  strong = types.SimpleNamespace(dtype=np.dtype("float16"),
                                 aval=types.SimpleNamespace(weak_type=False))
  with config.override("jax_enable_x64", False):
    assert dtypes.result_type(weak, return_weak_type_flag=True) == (np.float32, True)
    assert dtypes.result_type(weak, strong, return_weak_type_flag=True) == (np.float16, False)
    assert dtypes.result_type(np.int8, weak, return_weak_type_flag=True) == (np.float32, True)


def test_weak_non_default_dtypes_follow_jax():
  # Weak bfloat16 / int16 values (e.g. from lax.convert_element_type with
  # weak_type=True) keep their dtype on the lattice but result_type reports
  # the default dtype of their kind, as JAX 0.10.2 does.
  def weak(dt):
    return types.SimpleNamespace(dtype=np.dtype(dt), aval=types.SimpleNamespace(weak_type=True))
  bf16, i16 = weak(dtypes.bfloat16), weak("int16")
  with config.override("jax_enable_x64", False):
    assert dtypes.result_type(bf16, bf16, return_weak_type_flag=True) == (np.float32, True)
    assert dtypes.result_type(i16, i16, return_weak_type_flag=True) == (np.int32, True)
    assert dtypes.result_type(i16, np.int8, return_weak_type_flag=True) == (np.int8, False)
    assert dtypes.result_type(bf16, np.float16, return_weak_type_flag=True) == (np.float16, False)
    assert dtypes.lattice_result_type(bf16, bf16) == (np.dtype(dtypes.bfloat16), True)
    assert dtypes.lattice_result_type(i16, 1) == (np.int32, True)
    assert dtypes.lattice_result_type(np.int8, 1.0) == (np.float32, True)


def test_result_type_rejects_sub_byte_and_float8_mixtures():
  # Messages from JAX 0.10.2.
  with pytest.raises(dtypes.TypePromotionError) as info:
    dtypes.result_type(dtypes.float8_e4m3fn, np.float16)
  assert _same_message(str(info.value), (
      "Input dtypes ('float8_e4m3fn', 'float16') have no available implicit dtype "
      "promotion path. To avoid unintended promotion, 8-bit floats do not support "
      "implicit promotion. If you'd like your inputs to be promoted to another type, "
      "you can do so explicitly using e.g. x.astype('float32')"))
  with pytest.raises(dtypes.TypePromotionError) as info:
    dtypes.result_type(dtypes.int4, np.int8)
  assert _same_message(str(info.value), (
      "Input dtypes ('int8', 'int4') have no available implicit dtype promotion path. "
      "To avoid unintended promotion, 1-bit, 2-bit and 4-bit integers do not support "
      "implicit promotion. If you'd like your inputs to be promoted to another type, "
      "you can do so explicitly using e.g. x.astype('int32')"))
  assert dtypes.result_type(dtypes.int4, 1) == np.dtype(dtypes.int4)
  assert issubclass(dtypes.TypePromotionError, ValueError)


def test_unknown_promotion_mode_raises():
  # As in JAX, the flag's value is checked when it is set.
  with pytest.raises(ValueError, match="new enum value must be in \\['standard', 'strict'\\]"):
    with config.override("jax_numpy_dtype_promotion", "loose"):
      pass
  with pytest.raises(ValueError):
    config.update("jax_numpy_dtype_promotion", "loose")


def test_canonicalize_dtype_truncates_64_bit_types_without_x64():
  cases = {"int64": "int32", "uint64": "uint32", "float64": "float32",
           "complex128": "complex64", "int8": "int8", "bfloat16": "bfloat16", "bool": "bool"}
  for src, dst in cases.items():
    with config.override("jax_enable_x64", False):
      assert dtypes.canonicalize_dtype(src) == np.dtype(dst)
      assert dtypes.canonicalize_dtype(np.dtype(src)) == np.dtype(dst)
    with config.override("jax_enable_x64", True):
      assert dtypes.canonicalize_dtype(src) == np.dtype(src)
  with config.override("jax_enable_x64", False):
    assert dtypes.canonicalize_dtype(float) == np.float32
    assert dtypes.canonicalize_dtype(np.int64) == np.dtype(np.int32)
  with pytest.raises(TypeError, match="not understood"):
    dtypes.canonicalize_dtype("floaty")


def test_default_dtypes_follow_x64():
  fns = (dtypes.default_int_dtype, dtypes.default_uint_dtype,
         dtypes.default_float_dtype, dtypes.default_complex_dtype)
  with config.override("jax_enable_x64", False):
    assert [f() for f in fns] == [np.int32, np.uint32, np.float32, np.complex64]
  with config.override("jax_enable_x64", True):
    assert [f() for f in fns] == [np.int64, np.uint64, np.float64, np.complex128]


def test_dtype_of_values_and_dtype_likes():
  assert dtypes.python_scalar_dtypes == {bool: np.bool_, int: np.int64, float: np.float64,
                                         complex: np.complex128}
  cases = [(1, "int64"), (1.0, "float64"), (1j, "complex128"), (True, "bool"),
           (float, "float64"), ("float32", "float32"), (np.float16, "float16"),
           (dtypes.bfloat16, "bfloat16"), (np.zeros(2, np.int8), "int8"),
           (np.float64(1), "float64"), (np.dtype("uint16"), "uint16"),
           (types.SimpleNamespace(dtype=np.dtype("complex64")), "complex64")]
  with config.override("jax_enable_x64", False):
    for x, want in cases:
      assert dtypes.dtype(x) == np.dtype(want), x
      assert dtypes.dtype(x, canonicalize=True) == dtypes.canonicalize_dtype(want), x


def test_dtype_rejects_non_arrays():
  with pytest.raises(TypeError, match="Cannot determine dtype of"):
    dtypes.dtype(object())
  with pytest.raises(TypeError, match="Cannot determine dtype of"):
    dtypes.dtype([1, 2])
  with pytest.raises(TypeError, match="is not a valid JAX array type"):
    dtypes.dtype(np.array(["a"]))
  with pytest.raises(ValueError, match="Invalid argument to dtype: None."):
    dtypes.dtype(None)


def test_weak_types_and_python_scalars():
  assert [dtypes.is_weakly_typed(x) for x in (1, 1.0, 1j, True, np.float32(1), np.int64(1))] \
      == [True, True, True, False, False, False]
  assert dtypes.is_weakly_typed(types.SimpleNamespace(aval=types.SimpleNamespace(weak_type=True)))
  assert dtypes.is_weakly_typed(types.SimpleNamespace(weak_type=True))
  assert not dtypes.is_weakly_typed(types.SimpleNamespace(weak_type=False))
  assert [dtypes.is_python_scalar(x) for x in (1, 1.0, 1j, True, np.float64(1), np.zeros(()))] \
      == [True, True, True, True, False, False]


def test_scalar_type_of():
  cases = [(np.int8(1), int), (np.uint32, int), (True, bool), (np.float16(1), float),
           (dtypes.bfloat16(1), float), (np.complex64(1), complex), (dtypes.int4(1), int)]
  for x, want in cases:
    assert dtypes.scalar_type_of(x) is want, x


@pytest.mark.parametrize("a,b,want", [
    (dtypes.bfloat16, np.floating, True), (dtypes.bfloat16, np.inexact, True),
    (dtypes.bfloat16, np.number, True), (dtypes.bfloat16, np.integer, False),
    (np.float32, dtypes.bfloat16, False), ("bfloat16", "bfloat16", True),
    (dtypes.float8_e4m3fn, np.floating, True), (dtypes.int4, np.signedinteger, True),
    (dtypes.uint4, np.unsignedinteger, True), (dtypes.uint4, np.signedinteger, False),
    (dtypes.float0, np.void, True), (float, np.floating, True), (int, np.int64, True),
    ("float32", "float32", True), (np.float32, dtypes.extended, False),
    (np.int32, np.integer, True), (np.complex64, np.floating, False),
    (np.bool_, np.number, False), (dtypes.prng_key, dtypes.extended, True),
])
def test_issubdtype_matches_jax(a, b, want):
  assert dtypes.issubdtype(a, b) is want


def test_issubdtype_of_extended_dtype():
  class KeyDType(dtypes.ExtendedDType):
    type = dtypes.prng_key
    name = "key<fry>"
  key = KeyDType()
  assert dtypes.issubdtype(key, dtypes.extended)
  assert dtypes.issubdtype(key, dtypes.prng_key)
  assert dtypes.issubdtype(key, key)
  assert not dtypes.issubdtype(key, np.floating)
  assert not dtypes.issubdtype(np.float32, key)
  assert dtypes.canonicalize_dtype(key, allow_extended_dtype=True) is key
  assert dtypes.short_dtype_name(key) == str(key)


def test_isdtype_kinds():
  assert dtypes.isdtype(dtypes.bfloat16, "real floating")
  assert dtypes.isdtype(dtypes.int4, "signed integer")
  assert dtypes.isdtype(np.uint8, ("bool", "unsigned integer"))
  assert not dtypes.isdtype(np.complex64, "real floating")
  assert dtypes.isdtype(np.int8, np.int8) and not dtypes.isdtype(np.int8, np.int16)
  with pytest.raises(ValueError, match="Unrecognized kind='floaty'"):
    dtypes.isdtype(np.float32, "floaty")


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "bfloat16",
                                  "float8_e4m3fn", "float8_e5m2"])
def test_finfo_matches_numpy_and_ml_dtypes(name):
  dt = np.dtype(name)
  want = ml_dtypes.finfo(dt) if name in ("bfloat16",) or name.startswith("float8") \
      else np.finfo(dt)
  got = dtypes.finfo(dt)
  assert (got.bits, got.eps, got.max, got.min, got.tiny) == \
      (want.bits, want.eps, want.max, want.min, want.tiny)


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8", "uint32",
                                  "uint64", "int4", "uint4"])
def test_iinfo_matches_numpy_and_ml_dtypes(name):
  dt = np.dtype(name)
  want = ml_dtypes.iinfo(dt) if name.endswith("int4") else np.iinfo(dt)
  got = dtypes.iinfo(dt)
  assert (got.bits, got.min, got.max) == (want.bits, want.min, want.max)


def test_itemsize_bits_counts_sub_byte_types():
  assert [dtypes.itemsize_bits(t) for t in (np.bool_, dtypes.int4, np.float16, np.complex64)] \
      == [8, 4, 16, 64]


def test_to_inexact_complex_and_numeric():
  assert dtypes.to_inexact_dtype(np.int8) == np.float32
  assert dtypes.to_inexact_dtype(np.int32) == np.float32
  assert dtypes.to_inexact_dtype(np.int64) == np.float64
  assert dtypes.to_inexact_dtype(np.bool_) == np.float32
  assert dtypes.to_inexact_dtype(dtypes.bfloat16) == np.dtype(dtypes.bfloat16)
  assert dtypes.to_inexact_dtype(np.complex64) == np.complex64
  assert dtypes.to_complex_dtype(np.float64) == np.complex128
  assert dtypes.to_complex_dtype(dtypes.bfloat16) == np.complex64
  assert dtypes.to_complex_dtype(np.int32) == np.complex64
  assert dtypes.to_floating_dtype(np.complex128) == np.float64
  assert dtypes.to_numeric_dtype(np.bool_) == np.int32
  assert dtypes.to_numeric_dtype(np.uint8) == np.uint8


def test_short_dtype_names_match_jax():
  names = GOLDEN["x64_on"]["short_names"]
  for name, want in names.items():
    dt = dtypes.float0 if name == "float0" else np.dtype(name)
    assert dtypes.short_dtype_name(dt) == want, name


@pytest.mark.parametrize("key,dtype,fun_name", [
    ("zeros_float64", np.float64, "zeros"), ("array_uint64", "uint64", "array"),
    ("ones_complex128", np.dtype("complex128"), "ones")])
def test_user_dtype_warning_matches_jax(key, dtype, fun_name):
  (text,) = GOLDEN["x64_off"]["user_dtype_warnings"][key]
  assert text.startswith("UserWarning: ")
  with config.override("jax_enable_x64", False):
    with pytest.warns(UserWarning, match=f"^{re.escape(text[len('UserWarning: '):])}$"):
      out = dtypes.check_user_dtype_supported(dtype, fun_name)
    assert out == dtypes.canonicalize_dtype(dtype)
  assert GOLDEN["x64_on"]["user_dtype_warnings"][key] == []
  with config.override("jax_enable_x64", True), warnings.catch_warnings():
    warnings.simplefilter("error")
    assert dtypes.check_user_dtype_supported(dtype, fun_name) == np.dtype(dtype)


def test_user_dtype_checks():
  with config.override("jax_enable_x64", False), warnings.catch_warnings():
    warnings.simplefilter("error")
    assert dtypes.check_user_dtype_supported(float) == np.float32
    assert dtypes.check_user_dtype_supported(int, "zeros") == np.int32
    assert dtypes.check_user_dtype_supported("bfloat16") == np.dtype(dtypes.bfloat16)
  with pytest.warns(UserWarning, match="^Explicitly requested dtype int64 is not available,"):
    with config.override("jax_enable_x64", False):
      dtypes.check_user_dtype_supported(np.int64)
  with pytest.raises(TypeError, match=re.escape(
      "JAX only supports number, bool, and string dtypes, got dtype <class 'object'> in zeros")):
    dtypes.check_user_dtype_supported(object, "zeros")
  with pytest.raises(TypeError, match="got dtype U3$"):
    dtypes.check_user_dtype_supported("U3")
  with pytest.raises(ValueError, match="dtype must be specified."):
    dtypes.check_user_dtype_supported(None)


def test_public_module_reexports():
  import xjax.dtypes as public
  for name in ("bfloat16", "float0", "canonicalize_dtype", "result_type", "issubdtype",
               "finfo", "iinfo", "extended", "prng_key", "scalar_type_of",
               "TypePromotionError", "int4", "uint4", "float8_e4m3fn", "itemsize_bits"):
    assert getattr(public, name) is getattr(dtypes, name)
