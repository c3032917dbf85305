"""The Sharp Bits, "Random Numbers" and the 64-bit uniform example (seed 001), printed outputs."""
import warnings

import numpy as np
import pytest

import xjax.numpy as jnp
from xjax import random
from xjax._src.config import enable_x64


def test_key_prints_as_in_the_sharp_bits(capsys):
  key = random.key(0)
  print(repr(key))
  assert capsys.readouterr().out == "Array((), dtype=key<fry>) overlaying:\n[0 0]\n"


def test_reusing_a_key_repeats_the_numbers(capsys):
  key = random.key(0)
  print(random.normal(key, shape=(1,)))
  print(key)
  # No no no!
  print(random.normal(key, shape=(1,)))
  print(key)
  assert capsys.readouterr().out == (
      "[-0.20584226]\n"
      "Array((), dtype=key<fry>) overlaying:\n[0 0]\n"
      "[-0.20584226]\n"
      "Array((), dtype=key<fry>) overlaying:\n[0 0]\n")


def test_splitting_gives_fresh_subkeys(capsys):
  key = random.key(0)
  for _ in range(2):
    print("old key", key)
    key, subkey = random.split(key)
    normal_pseudorandom = random.normal(subkey, shape=(1,))
    print(r"    \---SPLIT --> new key   ", key)
    print(r"             \--> new subkey", subkey, "--> normal", normal_pseudorandom)
  assert capsys.readouterr().out == (
      "old key Array((), dtype=key<fry>) overlaying:\n[0 0]\n"
      "    \\---SPLIT --> new key    Array((), dtype=key<fry>) overlaying:\n"
      "[4146024105  967050713]\n"
      "             \\--> new subkey Array((), dtype=key<fry>) overlaying:\n"
      "[2718843009 1272950319] --> normal [-1.2515389]\n"
      "old key Array((), dtype=key<fry>) overlaying:\n[4146024105  967050713]\n"
      "    \\---SPLIT --> new key    Array((), dtype=key<fry>) overlaying:\n"
      "[2384771982 3928867769]\n"
      "             \\--> new subkey Array((), dtype=key<fry>) overlaying:\n"
      "[1278412471 2182328957] --> normal [-0.58665055]\n")


def test_splitting_into_several_subkeys(capsys):
  key = random.key(0)
  for _ in range(2):
    key, subkey = random.split(key)
  key, *subkeys = random.split(key, 4)
  for subkey in subkeys:
    print(random.normal(subkey, shape=(1,)))
  assert capsys.readouterr().out == "[-0.37533438]\n[0.98645043]\n[0.14553197]\n"


def test_float64_uniform_is_truncated_without_x64():
  with pytest.warns(UserWarning, match="is not available, and will be truncated to dtype float32"):
    x = random.uniform(random.key(0), (1000,), dtype=jnp.float64)
  assert x.dtype == np.dtype("float32")


def test_float64_uniform_with_x64():
  with enable_x64(True), warnings.catch_warnings():
    warnings.simplefilter("error")
    x = random.uniform(random.key(0), (1000,), dtype=jnp.float64)
  assert x.dtype == np.dtype("float64")
