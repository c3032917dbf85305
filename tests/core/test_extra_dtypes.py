"""The narrow dtypes: int1/2/4, uint1/2/4 and the 4-, 6- and 8-bit floats.

Promotion, finfo/iinfo and short names compare with tests/golden/extra_dtypes.json,
written from real JAX by tools/golden_extra_dtypes.py. Arithmetic compares with
ml_dtypes' NumPy arithmetic, eagerly and under jit. int1, uint1 and the float6s
cannot be compiled (see xjax/_src/stablehlo.py) and must say so.
"""
import json
import os
import re

import ml_dtypes
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src import dtypes
from xjax._src.config import config

with open(os.path.join(os.path.dirname(__file__), os.pardir, "golden", "extra_dtypes.json")) as f:
  GOLDEN = json.load(f)
NARROW = GOLDEN["narrow"]
NOT_COMPILABLE = ["int1", "uint1", "float6_e2m3fn", "float6_e3m2fn"]
COMPILABLE = [n for n in NARROW if n not in NOT_COMPILABLE]
INTS = [n for n in COMPILABLE if "int" in n]
FLOATS = [n for n in COMPILABLE if n.startswith("float")]
WEAK_VALUES = {"weak_int": 1, "weak_float": 1.0, "weak_complex": 1j}
WEAK_TYPES = {"weak_int": int, "weak_float": float, "weak_complex": complex}
MODES = {"x64_off": False, "x64_on": True}


def _dtype(name):
  return np.dtype(getattr(ml_dtypes, name)) if name in NARROW else np.dtype(name)


def _cases(table):
  return [(mode, a, b) for mode in MODES for a, row in GOLDEN[mode][table].items()
          for b in row]


def _record(fn):
  try:
    out, weak = fn()
    return [str(out), bool(weak)]
  except Exception as e:
    names = re.search(r"\([^()]*\)", str(e))
    if names is None:
      return ["error", type(e).__name__, str(e), None]
    return ["error", type(e).__name__, str(e).replace(names.group(0), "{dtypes}", 1),
            sorted(names.group(0)[1:-1].split(", "))]


def _expected(want):
  if want[0] != "error":
    return want
  return ["error", want[1], GOLDEN["messages"][want[2]], sorted(want[3][1:-1].split(", "))]


@pytest.fixture(autouse=True)
def _standard_promotion():
  with config.override("jax_numpy_dtype_promotion", "standard"):
    yield


def test_golden_covers_every_narrow_dtype():
  assert GOLDEN["jax_version"] == "0.10.2"
  assert len(NARROW) == 17
  for name in NARROW:
    assert name in GOLDEN["x64_off"]["promote_types"]


@pytest.mark.parametrize("mode,a,b", _cases("promote_types"))
def test_promote_types_matches_jax(mode, a, b):
  like = lambda n: WEAK_TYPES.get(n) or _dtype(n)
  with config.override("jax_enable_x64", MODES[mode]):
    got = _record(lambda: (jnp.promote_types(like(a), like(b)), False))
  assert got == _expected(GOLDEN[mode]["promote_types"][a][b])


@pytest.mark.parametrize("mode,a,b", _cases("result_type"))
def test_result_type_matches_jax(mode, a, b):
  value = lambda n: WEAK_VALUES[n] if n in WEAK_VALUES else _dtype(n)
  with config.override("jax_enable_x64", MODES[mode]):
    got = _record(lambda: dtypes.result_type(value(a), value(b), return_weak_type_flag=True))
    with config.override("jax_numpy_dtype_promotion", "strict"):
      strict = _record(lambda: dtypes.result_type(value(a), value(b),
                                                  return_weak_type_flag=True))
  assert got == _expected(GOLDEN[mode]["result_type"][a][b])
  assert strict == _expected(GOLDEN[mode]["strict"][a][b])


@pytest.mark.parametrize("name", NARROW)
def test_finfo_iinfo_short_name_and_inexact(name):
  dt = _dtype(name)
  if name in GOLDEN["finfo"]:
    info = jnp.finfo(getattr(jnp, name))
    assert {k: str(getattr(info, k)) for k in GOLDEN["finfo"][name]} == GOLDEN["finfo"][name]
  else:
    info = jnp.iinfo(getattr(jnp, name))
    assert {k: str(getattr(info, k)) for k in GOLDEN["iinfo"][name]} == GOLDEN["iinfo"][name]
  assert dtypes.short_dtype_name(dt) == GOLDEN["short_names"][name]
  assert str(dtypes.to_inexact_dtype(dt)) == GOLDEN["to_inexact"][name]


@pytest.mark.parametrize("name", NARROW)
def test_scalar_type_object(name):
  t = getattr(jnp, name)
  st = getattr(ml_dtypes, name)
  assert t.__name__ == name and t.__module__ == "xjax.numpy"
  assert np.dtype(t) == np.dtype(st) and t == st and hash(t) == hash(st)
  assert isinstance(st(1), t) and not isinstance(np.float32(1), t)
  kind = np.floating if name.startswith("float") else (
      np.unsignedinteger if name.startswith("u") else np.signedinteger)
  assert jnp.issubdtype(t, kind) and jnp.issubdtype(t, np.number)
  assert not jnp.issubdtype(t, np.complexfloating)
  assert jnp.dtype(t) == np.dtype(st)
  assert "Mirrors `jax.numpy." + name in t.__doc__


def _values(name):
  if name in INTS:
    info = ml_dtypes.iinfo(_dtype(name))
    return np.arange(info.min, info.max + 1).astype(_dtype(name))
  base = np.array([0.0, 0.5, 1.0, 1.5, 2.0, -1.0, 3.0, 0.25])
  if name == "float8_e8m0fnu":
    base = np.array([0.25, 0.5, 1.0, 2.0, 4.0, 8.0])
  return base.astype(_dtype(name))


@pytest.mark.parametrize("name", COMPILABLE)
def test_creation_and_device_put_round_trip(name):
  t = getattr(jnp, name)
  dt = _dtype(name)
  z = jnp.zeros(3, t)
  assert z.dtype == dt and z.shape == (3,)
  # Converted from 0.0: float8_e8m0fnu has no zero, so that is NaN (as in JAX).
  np.testing.assert_array_equal(np.asarray(z).astype(np.float32),
                                np.zeros(3, np.float32).astype(dt).astype(np.float32))
  o = jnp.ones((2, 2), dtype=name)
  assert o.dtype == dt
  np.testing.assert_array_equal(np.asarray(o).astype(np.float32), np.ones((2, 2)))
  x = _values(name)
  d = xjax.device_put(x)
  assert d.dtype == dt
  back = np.asarray(d)
  assert back.dtype == dt and back.tobytes() == x.tobytes()
  assert jnp.asarray(x).dtype == dt
  s = t(1)
  assert s.dtype == dt and s.shape == () and float(s) == 1.0


@pytest.mark.parametrize("name", COMPILABLE)
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_arithmetic_matches_ml_dtypes(name, jit):
  x = _values(name)
  y = x[::-1].copy()
  wrap = xjax.jit if jit else (lambda f: f)
  for op, npop in [(jnp.add, np.add), (jnp.multiply, np.multiply), (jnp.maximum, np.maximum)]:
    got = wrap(op)(x, y)
    assert got.dtype == x.dtype
    want = npop(x, y)
    np.testing.assert_array_equal(np.asarray(got).astype(np.float64),
                                  want.astype(np.float64), err_msg=f"{op} {name}")
  for op, npop in [(jnp.less, np.less), (jnp.equal, np.equal)]:
    got = wrap(op)(x, y)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(got), npop(x.astype(np.float64), y.astype(np.float64)))
  # A weak Python scalar keeps the narrow dtype.
  got = wrap(lambda a: jnp.asarray(a) + 1)(x)
  assert got.dtype == x.dtype
  np.testing.assert_array_equal(np.asarray(got).astype(np.float64),
                                (x + np.ones_like(x)).astype(np.float64))


@pytest.mark.parametrize("name", COMPILABLE)
def test_convert_under_jit(name):
  dt = _dtype(name)
  src = np.array([0.0, 1.0, -1.0, 2.0, 0.5, 3.0], np.float32)
  if name.startswith("u"):
    src = np.abs(src)
  if name == "float8_e8m0fnu":
    src = np.array([0.5, 1.0, 2.0, 4.0], np.float32)
  if name in INTS:
    # XLA's float-to-integer conversion saturates (and truncates), as in JAX;
    # NumPy's would wrap around.
    info = ml_dtypes.iinfo(dt)
    want = np.clip(np.trunc(src), info.min, info.max).astype(dt)
  else:
    want = src.astype(dt)
  to = xjax.jit(lambda a: a.astype(dt))(src)
  assert to.dtype == dt
  np.testing.assert_array_equal(np.asarray(to).astype(np.float64), want.astype(np.float64))
  back = xjax.jit(lambda a: a.astype(jnp.float32))(to)
  assert back.dtype == np.float32
  np.testing.assert_array_equal(np.asarray(back), want.astype(np.float32))
  assert jnp.astype(src, dt).dtype == dt
  # The element type appears in the jaxpr and the lowered module.
  jaxpr = xjax.make_jaxpr(lambda a: a + a)(np.zeros(2, dt))
  assert f"{GOLDEN['short_names'][name]}[2]" in str(jaxpr)


@pytest.mark.parametrize("name", INTS)
def test_integer_wraparound_and_no_implicit_promotion(name):
  x = _values(name)
  info = ml_dtypes.iinfo(x.dtype)
  got = np.asarray(jnp.add(x, np.ones_like(x))).astype(np.int64)
  want = x.astype(np.int64) + 1
  want[want > info.max] -= 2 ** info.bits
  np.testing.assert_array_equal(got, want)
  with pytest.raises(dtypes.TypePromotionError, match="4-bit integers do not support implicit"):
    jnp.add(x, np.zeros(x.shape, np.int8))


@pytest.mark.parametrize("name", FLOATS)
def test_float_no_implicit_promotion(name):
  x = _values(name)
  with pytest.raises(dtypes.TypePromotionError, match="bit floats do not support implicit"):
    jnp.add(x, np.zeros(x.shape, np.float32))
  assert jnp.add(x, 2.0).dtype == x.dtype  # weak floats join the narrow type


@pytest.mark.parametrize("name", NOT_COMPILABLE)
def test_uncompilable_dtypes_raise_clearly(name):
  t = getattr(jnp, name)
  msg = f"Computations on dtype {name} cannot be compiled"
  with pytest.raises(NotImplementedError, match=msg):
    jnp.zeros(3, t)
  with pytest.raises(NotImplementedError, match=msg):
    xjax.jit(lambda a: a.astype(t))(np.zeros(3, np.float32))
  assert jnp.promote_types(t, t) == np.dtype(t)
  assert xjax.eval_shape(lambda a: a, np.zeros(2, t)).dtype == np.dtype(t)
  if name.startswith("float6"):
    # The runtime cannot hold them either (JAX 0.10.2 fails the same way).
    with pytest.raises(RuntimeError, match="Unknown NumPy dtype"):
      xjax.device_put(np.zeros(2, t))


@pytest.mark.parametrize("name", ["int1", "uint1"])
def test_one_bit_integers_round_trip_through_device_put(name):
  x = np.array([0, 1, 0, 1]).astype(_dtype(name)) if name == "uint1" else np.array(
      [0, -1, 0, -1]).astype(_dtype(name))
  d = xjax.device_put(x)
  assert d.dtype == x.dtype
  assert np.asarray(d).tobytes() == x.tobytes()
  with pytest.raises(NotImplementedError, match=f"dtype {name} cannot be compiled"):
    d + d
