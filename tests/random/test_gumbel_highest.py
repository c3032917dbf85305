"""gumbel(mode='highest') and its exact 64-bit-fraction to float32 conversion, as in JAX."""
import numpy as np
import pytest

import xjax
from xjax import random
from xjax._src import config
from xjax._src.random.distributions import _safe_int_to_float


@config.threefry_partitionable(True)  # JAX 0.10.2's default stream layout
def test_highest_mode_matches_jax_bits():
  # JAX 0.10.2: jax.random.gumbel(jax.random.key(3), (5,), mode="highest")
  expected = [2.5647566318511963, -1.023512363433838, -0.04578254744410515,
              -1.312118411064148, 1.1200802326202393]
  out = random.gumbel(random.key(3), (5,), mode="highest")
  assert out.dtype == np.float32
  np.testing.assert_array_equal(np.asarray(out), np.asarray(expected, np.float32))
  jitted = xjax.jit(lambda k: random.gumbel(k, (5,), mode="highest"))(random.key(3))
  np.testing.assert_array_equal(jitted, out)
  assert random.gumbel(random.key(3), (2,), np.float16, mode="highest").dtype == np.float16


def test_safe_int_to_float_truncates_64_bit_fractions():
  nmant = np.finfo(np.float32).nmant
  mask = (1 << (nmant + 1)) - 1
  for shift in range(64 - (nmant + 1)):
    i = mask << shift
    words = np.array([i >> 32, i & 0xFFFFFFFF], np.uint32)
    f = _safe_int_to_float(words, np.float32)
    assert int(float(np.ldexp(np.float32(f), 64))) == i
  with pytest.raises(RuntimeError, match="u32 -> f32"):
    _safe_int_to_float(np.zeros(2, np.int32), np.float32)
