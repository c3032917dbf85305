"""xjax.nn.initializers, bit for bit against values recorded from JAX 0.10.2.

The goldens (tests/golden/nn_initializers.json, written by tools/golden_nn.py)
hold each case as data: the initializer's name, its factory arguments, the key
seed, shape and dtype. Cases are replayed in JAX's original threefry layout
(x32 and x64) and in the partitionable one.
"""
import json
import os

import ml_dtypes  # noqa: F401  (registers bfloat16 with NumPy)
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.config import config, enable_x64
from xjax.nn import initializers

GOLDENS = json.load(open(os.path.join(os.path.dirname(__file__), "..", "golden",
                                      "nn_initializers.json")))
MODES = {"x32-original": (False, False), "x32-partitionable": (False, True),
         "x64-original": (True, False)}
# To keep the file fast, the other two modes replay only the cases they add
# something to: float32 draws in the partitionable layout, x64 dtypes under x64.
_REPLAYED = {"x32-original": lambda dtype: True,
             "x32-partitionable": lambda dtype: dtype == "float32",
             "x64-original": lambda dtype: dtype in (None, "float64", "complex128")}
CASES = [(mode, case_id) for mode in MODES for case_id, case in GOLDENS[mode].items()
         if _REPLAYED[mode](case["dtype"])]


def _decode(enc):
  return np.frombuffer(bytes.fromhex(enc["hex"]), np.dtype(enc["dtype"])).reshape(enc["shape"])


def _make(case):
  init = getattr(initializers, case["name"])
  if case["name"] in ("zeros", "ones"):
    return init
  kw = {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}
  return init(*case["args"], **kw)


@pytest.mark.parametrize("mode,case_id", CASES)
def test_matches_jax_bit_for_bit(mode, case_id):
  case = GOLDENS[mode][case_id]
  x64, partitionable = MODES[mode]
  with enable_x64(x64), config.override("jax_threefry_partitionable", partitionable):
    init = _make(case)
    key = xjax.random.key(case["seed"])
    shape = tuple(case["shape"])
    call = (lambda: init(key, shape)) if case["dtype"] is None else (
        lambda: init(key, shape, case["dtype"]))
    if "error" in case:
      with pytest.raises(getattr(__builtins__, case["error"], Exception)):
        call()
      return
    got = np.asarray(call())
    want = _decode(case["out"])
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("case_id", sorted(GOLDENS["errors"]))
def test_errors_match_jax(case_id):
  case = GOLDENS["errors"][case_id]
  init = getattr(initializers, case["name"])(*case["args"], **case["kwargs"])
  with pytest.raises(ValueError) as info:
    init(xjax.random.key(0), tuple(case["shape"]), case["dtype"])
  assert case["error"] == "ValueError"
  assert str(info.value) == case["message"]


def test_initializer_protocol_and_aliases():
  for name in ["constant", "uniform", "normal", "truncated_normal", "orthogonal",
               "delta_orthogonal", "glorot_normal", "he_uniform", "lecun_normal"]:
    factory = getattr(initializers, name)
    init = factory(1.0) if name == "constant" else factory()
    assert isinstance(init, initializers.Initializer)
  assert isinstance(initializers.zeros, initializers.Initializer)
  assert initializers.xavier_uniform is initializers.glorot_uniform
  assert initializers.xavier_normal is initializers.glorot_normal
  assert initializers.kaiming_uniform is initializers.he_uniform
  assert initializers.kaiming_normal is initializers.he_normal


def test_statistics_and_structure():
  key = xjax.random.key(11)
  w = np.asarray(initializers.he_normal()(key, (400, 300)))
  np.testing.assert_allclose(w.var(), 2 / 400, rtol=0.05)
  assert np.abs(w).max() <= 2 * np.sqrt(2 / 400) / 0.87962566103423978 + 1e-6
  u = np.asarray(initializers.glorot_uniform()(key, (200, 300)))
  limit = np.sqrt(3 / 250)
  assert u.min() >= -limit and u.max() < limit
  q = np.asarray(initializers.orthogonal(scale=3.0)(key, (6, 4)))
  np.testing.assert_allclose(q.T @ q, 9 * np.eye(4), atol=1e-4)
  d = np.array(initializers.delta_orthogonal()(key, (3, 5, 2, 4)))
  centre = d[1, 2]
  np.testing.assert_allclose(centre @ centre.T, np.eye(2), atol=1e-5)
  d[1, 2] = 0
  assert not d.any()
  c = np.asarray(initializers.variance_scaling(1.0, "fan_in", "uniform")(key, (300, 50),
                                                                          jnp.complex64))
  assert c.dtype == np.complex64
  np.testing.assert_allclose(np.mean(np.abs(c) ** 2), 1 / 300, rtol=0.1)


def test_under_jit_and_vmap_matches_eager():
  init = initializers.lecun_normal()
  key = xjax.random.key(3)
  eager = np.asarray(init(key, (4, 3)))
  np.testing.assert_array_equal(np.asarray(xjax.jit(lambda k: init(k, (4, 3)))(key)), eager)
  keys = xjax.random.split(key, 3)
  batched = np.asarray(xjax.vmap(lambda k: init(k, (4, 3)))(keys))
  for i in range(3):
    np.testing.assert_array_equal(batched[i], np.asarray(init(keys[i], (4, 3))))


def test_default_dtype_follows_x64():
  assert initializers.zeros(None, (2,)).dtype == np.float32
  with enable_x64(True):
    assert initializers.normal()(xjax.random.key(0), (2,)).dtype == np.float64
