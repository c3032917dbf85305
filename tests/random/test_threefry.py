"""threefry2x32: Random123 known-answer vectors, batching, lowering on edge shapes."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.random import threefry
from xjax._src.random.threefry import threefry2x32, threefry2x32_p

U32 = np.uint32

# Published known-answer vectors of Threefry-2x32-20 (Random123's kat_vectors):
# (key, counter) -> output.
KAT = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6b200159, 0x99ba4efe)),
    ((0xffffffff, 0xffffffff), (0xffffffff, 0xffffffff), (0x1cb996fc, 0xbb002be7)),
    ((0x13198a2e, 0x03707344), (0x243f6a88, 0x85a308d3), (0xc4923a9c, 0x483df7a0)),
]


def _threefry_numpy(k1, k2, x1, x2):
  """A reference Threefry-2x32-20 in NumPy uint32 arithmetic (wrapping)."""
  rot = [[13, 15, 26, 6], [17, 29, 16, 24]]
  with np.errstate(over="ignore"):
    k1, k2, x1, x2 = (np.asarray(v, U32) for v in (k1, k2, x1, x2))
    ks = [k1, k2, k1 ^ k2 ^ U32(0x1BD11BDA)]
    x1, x2 = x1 + ks[0], x2 + ks[1]
    for g in range(5):
      for r in rot[g % 2]:
        x1 = x1 + x2
        x2 = ((x2 << U32(r)) | (x2 >> U32(32 - r))) ^ x1
      x1 = x1 + ks[(g + 1) % 3]
      x2 = x2 + ks[(g + 2) % 3] + U32(g + 1)
  return x1, x2


@pytest.mark.parametrize("key,count,expected", KAT)
def test_threefry2x32_matches_random123_known_answers(key, count, expected):
  out = threefry2x32(*(np.array(v, U32) for v in (*key, *count)))
  assert [int(o) for o in out] == list(expected)
  assert [int(o) for o in _threefry_numpy(*key, *count)] == list(expected)


@pytest.mark.parametrize("shape", [(), (0,), (1,), (7,), (3, 4)])
def test_threefry2x32_matches_numpy_reference_on_edge_shapes(rng, shape):
  args = [rng.integers(0, 2 ** 32, size=shape, dtype=np.uint32) for _ in range(4)]
  out = threefry2x32(*args)
  ref = _threefry_numpy(*args)
  for o, r in zip(out, ref):
    assert o.shape == shape and o.dtype == np.uint32
    np.testing.assert_array_equal(np.asarray(o), r)


def test_threefry2x32_broadcasts_rank0_keys(rng):
  x = rng.integers(0, 2 ** 32, size=(5,), dtype=np.uint32)
  out = threefry2x32(U32(1), U32(2), x, x[::-1].copy())
  ref = _threefry_numpy(1, 2, x, x[::-1])
  np.testing.assert_array_equal(np.asarray(out[0]), ref[0])


def test_threefry2x32_rejects_non_uint32():
  with pytest.raises(TypeError, match="must have uint32 type"):
    threefry2x32(np.int32(1), U32(2), U32(3), U32(4))


@pytest.mark.parametrize("in_axes", [(0, 0, 0, 0), (None, 0, 1, None), (0, None, None, 1)])
def test_threefry2x32_batching_matches_loop(rng, in_axes):
  shapes = {0: (3, 4), 1: (4, 3), None: (4,)}
  args = [rng.integers(0, 2 ** 32, size=shapes[a], dtype=np.uint32) for a in in_axes]
  out = xjax.vmap(threefry2x32, in_axes=in_axes)(*args)
  for i in range(3):
    sliced = [a if d is None else np.take(a, i, axis=d) for a, d in zip(args, in_axes)]
    ref = _threefry_numpy(*sliced)
    np.testing.assert_array_equal(np.asarray(out[0][i]), ref[0])
    np.testing.assert_array_equal(np.asarray(out[1][i]), ref[1])


def test_threefry2x32_under_jit_matches_eager(rng):
  args = [rng.integers(0, 2 ** 32, size=(6,), dtype=np.uint32) for _ in range(4)]
  eager = threefry2x32(*args)
  jitted = xjax.jit(threefry2x32)(*args)
  for e, j in zip(eager, jitted):
    np.testing.assert_array_equal(np.asarray(e), np.asarray(j))


def test_threefry2x32_prints_in_jaxprs():
  text = str(xjax.make_jaxpr(threefry2x32)(*[U32(0)] * 4))
  assert "threefry2x32" in text and threefry2x32_p.multiple_results


def test_threefry_2x32_odd_count_pads_with_zero():
  # JAX's layout: an odd count is padded with one 0 and split in halves.
  keys = np.array([3, 4], U32)
  counts = np.arange(5, dtype=U32)
  out = np.asarray(threefry.threefry_2x32(keys, counts))
  y1, y2 = _threefry_numpy(3, 4, np.array([0, 1, 2], U32), np.array([3, 4, 0], U32))
  np.testing.assert_array_equal(out, np.concatenate([y1, y2])[:5])


def test_threefry_split_of_batched_raw_keys_matches_per_key():
  keys = np.array([[0, 0], [1, 2], [5, 7]], U32)
  for partitionable in (False, True):
    batched = np.asarray(threefry.threefry_split(jnp.asarray(keys), (4,), partitionable))
    for i in range(3):
      single = np.asarray(threefry.threefry_split(jnp.asarray(keys[i]), (4,), partitionable))
      np.testing.assert_array_equal(batched[i], single)
