"""xjax.nn.dot_product_attention against a NumPy reference and JAX's recorded outputs."""
import json
import os

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import nn
from xjax.test_util import check_grads

GOLDENS = json.load(open(os.path.join(os.path.dirname(__file__), "..", "golden",
                                      "nn_initializers.json")))["attention"]


def reference(q, k, v, bias=None, mask=None, scale=None, is_causal=False, q_len=None,
              kv_len=None, window=None):
  """Per-head softmax(scale q k^T + bias) v in float64, with JAX's masking conventions."""
  q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
  B, T, N, H = q.shape
  S, K = k.shape[1], k.shape[2]
  scale = 1 / np.sqrt(H) if scale is None else scale
  k = np.repeat(k, N // K, axis=2)  # query head n uses key/value head n // G
  v = np.repeat(v, N // K, axis=2)
  logits = scale * np.einsum("btnh,bsnh->bnts", q, k)
  if bias is not None:
    logits = logits + bias
  allowed = np.ones((B, N, T, S), bool)
  if mask is not None:
    allowed &= mask
  t_idx, s_idx = np.arange(T)[:, None], np.arange(S)[None, :]
  if is_causal:
    allowed &= s_idx <= t_idx
  if window is not None:
    allowed &= (t_idx <= s_idx + window[0]) & (t_idx >= s_idx - window[1])
  if q_len is not None:
    allowed &= (np.arange(T)[None, :, None] < np.asarray(q_len)[:, None, None])[:, None]
  if kv_len is not None:
    allowed &= (np.arange(S)[None, None, :] < np.asarray(kv_len)[:, None, None])[:, None]
  logits = np.where(allowed, logits, -0.7 * np.finfo(np.float32).max)
  probs = np.exp(logits - logits.max(-1, keepdims=True))
  probs /= probs.sum(-1, keepdims=True)
  out = np.einsum("bnts,bsnh->btnh", probs, v)
  if q_len is not None:
    out *= (np.arange(T)[None, :] < np.asarray(q_len)[:, None])[:, :, None, None]
  return out


def _inputs(rng, q_shape, k_shape, dtype=np.float32):
  return [rng.standard_normal(s).astype(dtype) for s in (q_shape, k_shape, k_shape)]


@pytest.mark.parametrize("case", [
    dict(),
    dict(scale=0.3),
    dict(is_causal=True),
    dict(window=(1, 0)),
    dict(window=2),
    dict(q_len=[1, 3], kv_len=[4, 2]),
    dict(kv_len=[5, 1], is_causal=True),
    dict(bias=(2, 4, 3, 5)),
    dict(bias=(1, 4, 1, 5), mask=(2, 1, 3, 5)),
    dict(mask=(1, 1, 3, 5), q_len=[2, 0]),
])
@pytest.mark.parametrize("heads", [(4, 2), (4, 1)])  # MHA: the "plain" golden
def test_against_numpy(rng, case, heads):
  N, K = heads
  q, k, v = _inputs(rng, (2, 3, N, 8), (2, 5, K, 8))
  kw, ref_kw = {}, {}
  if "bias" in case:
    kw["bias"] = ref_kw["bias"] = rng.standard_normal(case["bias"]).astype(np.float32)
  if "mask" in case:
    kw["mask"] = ref_kw["mask"] = rng.random(case["mask"]) < 0.6
  for ours, theirs in [("scale", "scale"), ("is_causal", "is_causal")]:
    if ours in case:
      kw[ours] = ref_kw[theirs] = case[ours]
  if "window" in case:
    kw["local_window_size"] = case["window"]
    w = case["window"]
    ref_kw["window"] = (w, w) if isinstance(w, int) else w
  if "q_len" in case:
    kw["query_seq_lengths"] = np.array(case["q_len"], np.int32)
    ref_kw["q_len"] = case["q_len"]
  if "kv_len" in case:
    kw["key_value_seq_lengths"] = np.array(case["kv_len"], np.int32)
    ref_kw["kv_len"] = case["kv_len"]
  out = nn.dot_product_attention(q, k, v, **kw)
  assert out.shape == q.shape and out.dtype == np.float32
  np.testing.assert_allclose(np.asarray(out), reference(q, k, v, **ref_kw), rtol=2e-5,
                             atol=2e-5)
  jitted = xjax.jit(lambda q, k, v: nn.dot_product_attention(q, k, v, **kw))(q, k, v)
  np.testing.assert_allclose(np.asarray(jitted), np.asarray(out), rtol=1e-6, atol=1e-6)


def _decode(enc):
  return np.frombuffer(bytes.fromhex(enc["hex"]), np.dtype(enc["dtype"])).reshape(enc["shape"])


@pytest.mark.parametrize("case_id", sorted(GOLDENS))
def test_matches_jax_outputs(x64, case_id):
  case = GOLDENS[case_id]
  inputs = {k: _decode(v) for k, v in case["inputs"].items()}
  kw = dict(case["kwargs"])
  for name in ("query_seq_lengths", "key_value_seq_lengths"):
    if name in kw:
      kw[name] = np.array(kw[name], np.int32)
  if "local_window_size" in kw:
    kw["local_window_size"] = tuple(kw["local_window_size"])
  got = nn.dot_product_attention(**inputs, **kw)
  got = got if isinstance(got, tuple) else (got,)
  assert len(got) == len(case["outs"])
  for g, want in zip(got, case["outs"]):
    want = _decode(want)
    assert g.dtype == want.dtype and g.shape == want.shape
    tol = 1e-12 if want.dtype == np.float64 else 2e-6
    np.testing.assert_allclose(np.asarray(g), want, rtol=tol, atol=tol)


def test_unbatched_and_residual(rng):
  q, k, v = _inputs(rng, (3, 2, 4), (6, 2, 4))
  out, lse = nn.dot_product_attention(q, k, v, return_residual=True)
  np.testing.assert_allclose(np.asarray(out), reference(q[None], k[None], v[None])[0],
                             rtol=2e-5, atol=2e-5)
  logits = np.einsum("tnh,snh->nts", q.astype(np.float64), k) / 2
  np.testing.assert_allclose(np.asarray(lse),
                             np.log(np.exp(logits).sum(-1)).T, rtol=1e-5, atol=1e-5)
  assert lse.shape == (3, 2)


def test_vmap_matches_loop(rng):
  q, k, v = _inputs(rng, (3, 2, 4, 2, 8), (3, 2, 5, 1, 8))
  f = lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True)
  out = np.asarray(xjax.vmap(f)(q, k, v))
  for i in range(3):
    np.testing.assert_allclose(out[i], np.asarray(f(q[i], k[i], v[i])), rtol=1e-6, atol=1e-6)
  shared = np.asarray(xjax.vmap(f, in_axes=(0, None, None))(q, k[0], v[0]))
  for i in range(3):
    np.testing.assert_allclose(shared[i], np.asarray(f(q[i], k[0], v[0])), rtol=1e-6,
                               atol=1e-6)


def test_half_precision_inputs(rng):
  q, k, v = _inputs(rng, (1, 3, 2, 8), (1, 4, 2, 8))
  for dtype in (jnp.bfloat16, jnp.float16):
    out = nn.dot_product_attention(q.astype(dtype), k.astype(dtype), v.astype(dtype))
    assert out.dtype == dtype
    np.testing.assert_allclose(np.asarray(out, np.float32), reference(q, k, v), atol=3e-2)


@pytest.mark.parametrize("kw", [dict(), dict(is_causal=True, key_value_seq_lengths=[3, 2])])
def test_grads(x64, rng, kw):
  q, k, v = _inputs(rng, (2, 3, 2, 4), (2, 4, 1, 4), np.float64)
  bias = rng.standard_normal((1, 2, 3, 4))
  kw = {n: np.array(a, np.int32) if isinstance(a, list) else a for n, a in kw.items()}
  f = lambda q, k, v, b: nn.dot_product_attention(q, k, v, b, **kw)
  # The softmax runs in float32 even for float64 inputs (as in JAX), so finite
  # differences need a wide step and a float32-sized tolerance.
  check_grads(f, (q, k, v, bias), order=2, modes=("fwd", "rev"), atol=5e-3, rtol=5e-3, eps=1e-2)


def test_errors(rng):
  q, k, v = _inputs(rng, (1, 3, 4, 8), (1, 5, 3, 8))
  with pytest.raises(ValueError, match="The number of query heads must be a multiple of "
                     "key/value heads, but got 4 vs 3"):
    nn.dot_product_attention(q, k, v)
  q, k, v = _inputs(rng, (1, 3, 4, 8), (1, 5, 2, 8))
  with pytest.raises(ValueError, match=r"value shape should be \[1, 5, 2, 8\]: but got "
                     r"\(1, 5, 2, 7\)"):
    nn.dot_product_attention(q, k, v[..., :7])
  with pytest.raises(ValueError, match="query dtype should be float32, but got float16"):
    nn.dot_product_attention(q.astype(np.float16), k, v)
  with pytest.raises(ValueError, match="mask dtype should be bool, but got float32"):
    nn.dot_product_attention(q, k, v, mask=np.ones((1, 1, 3, 5), np.float32))
  with pytest.raises(ValueError, match="bias ndim should be 4, but got 5"):
    nn.dot_product_attention(q, k, v, bias=np.ones((1, 1, 1, 3, 5), np.float32))
  with pytest.raises(ValueError, match="query_seq_lengths dtype should be int32, but got"):
    nn.dot_product_attention(q, k, v, query_seq_lengths=np.ones((1,), np.float32))
  with pytest.raises(ValueError, match="Unsupported implementation option: triton"):
    nn.dot_product_attention(q, k, v, implementation="triton")
  with pytest.raises(RuntimeError, match="cuDNN is not detected."):
    nn.dot_product_attention(q, k, v, implementation="cudnn")
  np.testing.assert_array_equal(
      np.asarray(nn.dot_product_attention(q, k, v, implementation="xla")),
      np.asarray(nn.dot_product_attention(q, k, v)))
