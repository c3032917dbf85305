"""Scaled dot-product attention (mirrors `jax.nn.dot_product_attention`), in jnp and lax.

Shapes use JAX's letters: B batch, T query length, S key/value length, N query
heads, K key/value heads, G = N // K query heads per key/value head, H head
size. The XLA implementation splits the N query heads into K groups of G,
vmaps the single-group computation over G, and evaluates, per group,

    logits = scale * einsum("BTNH,BSNH->BNTS", q, k) (+ bias), masked,
    probs = softmax(logits in float32), out = einsum("BNTS,BSNH->BTNH", probs, v).

Masked logits get a large negative number (-0.7 times the largest finite
value, capped to float32's range), so fully masked rows average all values,
as in JAX; rows past a query's sequence length are then zeroed.
"""
from __future__ import annotations

import numpy as np

import xjax.numpy as jnp
from xjax._src import dtypes
from xjax._src.vmap import vmap
from xjax._src.lax.ad_util import stop_gradient
from xjax._src.lax.dot_algorithms import DotAlgorithmPreset
from xjax._src.nn.functions import logsumexp, softmax


def _large_negative(dtype):
  big = min(float(dtypes.finfo(dtype).max), float(dtypes.finfo(np.float32).max))
  return jnp.asarray(-0.7 * big, dtype=dtype)


def _causal_mask(T, S):
  return jnp.tril(jnp.ones((T, S), dtype=bool))[None, None, :, :]


def _window_mask(T, S, local_window_size):
  query_pos = jnp.arange(T)
  key_pos = jnp.arange(S)
  left, right = local_window_size
  left_mask = query_pos[..., None] <= key_pos[..., None, :] + left
  right_mask = query_pos[..., None] >= key_pos[..., None, :] - right
  return jnp.logical_and(right_mask, left_mask)[None, None, :, :]


def _padding_mask_logits(T, S, q_seqlen, kv_seqlen):
  q_mask = kv_mask = True
  if q_seqlen is not None:
    q_mask = jnp.arange(0, T)[None, :, None] < q_seqlen[:, None, None]
  if kv_seqlen is not None:
    kv_mask = jnp.arange(0, S)[None, None, :] < kv_seqlen[:, None, None]
  return jnp.logical_and(q_mask, kv_mask)[:, None, :, :]


def _padding_mask_encoded(T, q_seqlen):
  return (jnp.arange(0, T)[None, :] < q_seqlen[:, None])[:, :, None, None]


def _apply_masks(logits, mask, is_causal, q_seqlen, kv_seqlen, local_window_size):
  if (mask is None and not is_causal and q_seqlen is None and kv_seqlen is None
      and local_window_size is None):
    return logits
  combined = jnp.ones_like(logits, dtype=bool)
  if mask is not None:
    combined = jnp.logical_and(combined, mask)
  T, S = logits.shape[2], logits.shape[3]
  if is_causal:
    combined = jnp.logical_and(combined, _causal_mask(T, S))
  if local_window_size is not None:
    combined = jnp.logical_and(combined, _window_mask(T, S, local_window_size))
  if q_seqlen is not None or kv_seqlen is not None:
    combined = jnp.logical_and(combined, _padding_mask_logits(T, S, q_seqlen, kv_seqlen))
  return jnp.where(combined, logits, _large_negative(logits.dtype))


def _attention_core(query, key, value, bias, mask, is_causal, scale, q_seqlen, kv_seqlen,
                    local_window_size, return_residual):
  """One group of heads: query [B, T, K, H], key/value [B, S, K, H], bias/mask [B, K, T, S]."""
  logits_dtype = jnp.promote_types(query.dtype, np.float32)
  # Half-precision queries accumulate in float32 in both passes (JAX issue 24047).
  precision = {np.dtype(dtypes.bfloat16): DotAlgorithmPreset.BF16_BF16_F32,
               np.dtype(np.float16): DotAlgorithmPreset.F16_F16_F32}.get(np.dtype(query.dtype))
  try:
    logits = jnp.einsum("BTNH,BSNH->BNTS", query, key, precision=precision,
                        preferred_element_type=logits_dtype)
  except ValueError:  # a platform without that algorithm (F16_F16_F32 on CPU): the default
    logits = jnp.einsum("BTNH,BSNH->BNTS", query, key, preferred_element_type=logits_dtype)
  logits *= jnp.array(scale, dtype=logits.dtype)
  if bias is not None:
    logits = (logits + bias).astype(logits.dtype)
  padded = _apply_masks(logits, mask, is_causal, q_seqlen, kv_seqlen, local_window_size)
  padded = padded.astype(np.float32)  # the softmax always runs in float32
  probs = softmax(padded, axis=-1).astype(key.dtype)
  encoded = jnp.einsum("BNTS,BSNH->BTNH", probs, value)
  if q_seqlen is not None:
    encoded *= _padding_mask_encoded(encoded.shape[1], q_seqlen).astype(encoded.dtype)
  if return_residual:
    lse = logsumexp(padded, axis=-1).astype(key.dtype)
    return encoded, stop_gradient(jnp.transpose(lse, (0, 2, 1)))  # B N T -> B T N
  return encoded


def _attention_xla(query, key, value, bias, mask, is_causal, scale, q_seqlen, kv_seqlen,
                   local_window_size, return_residual):
  B, T, N, H = query.shape
  _, S, K, _ = key.shape
  G = N // K
  query = jnp.reshape(query, (B, T, K, G, H))

  def grouped(t):  # [B, N or 1, T, S] -> [B, K or 1, G, T, S]
    if t is None:
      return None
    tB, tN, tT, tS = t.shape
    if tN == 1:
      return jnp.broadcast_to(t[:, :, None, :, :], (tB, tN, G, tT, tS))
    return jnp.reshape(t, (tB, K, G, tT, tS))

  core = vmap(_attention_core, in_axes=(3, None, None, 2, 2) + (None,) * 6, out_axes=3)
  out = core(query, key, value, grouped(bias), grouped(mask), is_causal, scale, q_seqlen,
             kv_seqlen, local_window_size, return_residual)
  if return_residual:
    encoded, lse = out
    return jnp.reshape(encoded, (B, T, N, H)), jnp.reshape(lse, (B, T, N))
  return jnp.reshape(out, (B, T, N, H))


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None, key_value_seq_lengths=None,
                          local_window_size=None, implementation=None,
                          return_residual=False):
  """Scaled dot-product attention, softmax(scale * Q K^T + bias) V, per head.

  Args:
    query: [B, T, N, H] or [T, N, H].
    key: [B, S, K, H] or [S, K, H], same dtype as `query`; N must be a
      multiple of K (K == N: multi-head, K < N: grouped-query attention, each
      key/value head serving N // K consecutive query heads).
    value: the shape and dtype of `key`.
    bias: optional, added to the logits; rank 4 (or less, padded with leading
      ones), broadcastable to [B, N, T, S].
    mask: optional boolean, True where attention is allowed; rank 4 (or less,
      padded), broadcastable to [B, N, T, S].
    scale: the logit scale; default 1 / sqrt(H).
    is_causal: also mask keys after the query position (a lower-triangular
      [T, S] mask).
    query_seq_lengths: optional int32 [B]; query rows at or past the length
      are masked and their outputs are zero.
    key_value_seq_lengths: optional int32 [B]; keys at or past the length are
      masked.
    local_window_size: None, an int w (meaning (w, w)) or (left, right): query
      t attends only to keys in [t - left, t + right].
    implementation: None or "xla" (both the XLA computation); "cudnn" needs
      cuDNN, which xjax does not use, and raises as JAX does without it.
    return_residual: also return the float32 logsumexp of the masked logits,
      cast to the key dtype, shape [B, T, N] (or [T, N]), without gradient.

  Returns:
    An array of `query`'s shape and dtype (with `return_residual`, a pair).

  Raises:
    ValueError: wrong ranks, shapes or dtypes of the operands (JAX's
      messages), N not a multiple of K, or an unknown `implementation`.
    RuntimeError: ``implementation="cudnn"`` ("cuDNN is not detected.").

  Mirrors `jax.nn.dot_product_attention`.
  """
  output_shape = jnp.asarray(query).shape

  def ensure_4d(t):
    t = jnp.asarray(t)
    return jnp.expand_dims(t, axis=tuple(range(4 - t.ndim))) if t.ndim < 4 else t

  query_arr, key_arr, value_arr = ensure_4d(query), ensure_4d(key), ensure_4d(value)
  bias = ensure_4d(bias) if bias is not None else None
  mask = ensure_4d(mask) if mask is not None else None
  if query_seq_lengths is not None:
    query_seq_lengths = jnp.asarray(query_seq_lengths)
  if key_value_seq_lengths is not None:
    key_value_seq_lengths = jnp.asarray(key_value_seq_lengths)
  if isinstance(local_window_size, int):
    local_window_size = (local_window_size, local_window_size)

  def check(t, shape, dtype, name):
    if t is None:
      return
    if t.ndim != len(shape):
      raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
      raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    if any(want != -1 and got != want for want, got in zip(shape, t.shape)):
      raise ValueError(f"{name} shape should be {shape}: but got {t.shape}")

  B, S, K, H = key_arr.shape
  check(value_arr, [B, S, K, H], key_arr.dtype, "value")
  check(query_arr, [B, -1, -1, H], key_arr.dtype, "query")
  check(mask, [-1] * 4, np.dtype(bool), "mask")
  check(bias, [-1] * 4, None, "bias")
  check(query_seq_lengths, [B], np.dtype("int32"), "query_seq_lengths")
  check(key_value_seq_lengths, [B], np.dtype("int32"), "key_value_seq_lengths")
  if query_arr.shape[-2] % K != 0:
    raise ValueError("The number of query heads must be a multiple of key/value heads, but "
                     f"got {query_arr.shape[-2]} vs {K}")
  scale_val = (1.0 / np.sqrt(H)) if scale is None else scale

  if implementation == "cudnn":
    raise RuntimeError("cuDNN is not detected.")  # as JAX without an NVIDIA GPU
  if implementation not in (None, "xla"):
    raise ValueError(f"Unsupported implementation option: {implementation}")
  out = _attention_xla(query_arr, key_arr, value_arr, bias, mask, is_causal, scale_val,
                       query_seq_lengths, key_value_seq_lengths, local_window_size,
                       return_residual)
  if return_residual:
    out, residual = out
    return jnp.reshape(out, output_shape), jnp.reshape(residual, output_shape[:-1])
  return jnp.reshape(out, output_shape)
