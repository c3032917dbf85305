"""Key-reuse checking (`debug_key_reuse`), eager part. Messages are goldens from real JAX 0.10.2."""
import pytest

import xjax
from xjax import random
from xjax._src import config as cfg
from xjax.errors import KeyReuseError

_SEE = "\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors.KeyReuseError"


def test_bits_twice_raises_jax_message():
  with cfg.debug_key_reuse(True):
    k = random.key(0)
    random.bits(k)
    with pytest.raises(KeyReuseError) as info:
      random.bits(k)
  assert str(info.value) == "Previously-consumed key passed to random_bits at index 0" + _SEE


def test_split_consumes_and_fold_in_does_not():
  with cfg.debug_key_reuse(True):
    k = random.key(0)
    random.fold_in(k, 1)
    random.fold_in(k, 2)  # fold_in does not consume, as in JAX
    random.split(k)
    with pytest.raises(KeyReuseError, match="Previously-consumed key passed to random_"):
      random.split(k)
    k1, k2 = random.split(random.key(1))
    random.bits(k1)
    random.bits(k2)


def test_clone_gives_unconsumed_key():
  with cfg.debug_key_reuse(True):
    k = random.key(0)
    random.bits(random.clone(k))
    random.bits(k)
    random.key_data(k)  # key_data does not consume


def test_raw_keys_and_flag_off_are_not_checked():
  with cfg.debug_key_reuse(True):
    rk = random.PRNGKey(0)
    random.bits(rk)
    random.bits(rk)
  k = random.key(0)
  random.bits(k)
  random.bits(k)


def test_jit_unaffected():
  with cfg.debug_key_reuse(True):
    f = xjax.jit(lambda key: random.bits(key))
    assert f(random.key(3)).shape == ()
