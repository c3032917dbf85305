"""The jax.nn names added with attention: small activations, logmeanexp, scaled matmuls."""
import numpy as np
import pytest
import scipy.special

import xjax
import xjax.numpy as jnp
from xjax import nn
from xjax.test_util import check_grads

X = np.array([-3.0, -1.0, -0.6, 0.0, 0.3, 0.999, 1.0, 2.5], np.float32)
POS = np.array([1e-4, 0.1, 0.5, np.log(2), 1.0, 3.0, 30.0], np.float32)

REFERENCES = {
    "identity": (lambda x: x, X),
    "sparse_plus": (lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)), X),
    "sparse_sigmoid": (lambda x: np.clip((x + 1) / 2, 0, 1), X),
    "mish": (lambda x: x * np.tanh(np.logaddexp(x, 0)), X),
    "tanh": (np.tanh, X),
    "log1mexp": (lambda x: np.log(-np.expm1(-x.astype(np.float64))), POS),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_values_jit_and_vmap(name):
  f = getattr(nn, name)
  ref, x = REFERENCES[name]
  out = f(x)
  assert out.shape == x.shape and out.dtype == np.float32
  np.testing.assert_allclose(np.asarray(out), ref(x), rtol=2e-6, atol=1e-7)
  np.testing.assert_allclose(np.asarray(xjax.jit(f)(x)), np.asarray(out), rtol=1e-6)
  batch = np.stack([x, x[::-1]])
  np.testing.assert_allclose(np.asarray(xjax.vmap(f)(batch)),
                             np.stack([np.asarray(f(r)) for r in batch]), rtol=1e-6)


def test_log1mexp_stable_at_both_ends():
  x = np.array([1e-30, 1e-8, 50.0, 80.0], np.float32)
  np.testing.assert_allclose(np.asarray(nn.log1mexp(x)),
                             [np.log(1e-30), np.log(1e-8), -np.exp(-50.0), -np.exp(-80.0)],
                             rtol=1e-5)
  assert np.isnan(np.asarray(nn.log1mexp(-1.0)))


@pytest.mark.parametrize("name,x", [
    ("sparse_plus", np.array([-0.5, 0.2, 1.7, -2.0])),
    ("sparse_sigmoid", np.array([-0.5, 0.2, 0.7])),
    ("mish", np.array([-2.0, -0.3, 0.4, 1.5])),
    ("log1mexp", np.array([0.2, 0.6, 0.75, 4.0])),
    ("identity", np.array([-1.0, 2.0])),
])
def test_grads(x64, name, x):
  check_grads(getattr(nn, name), (x,), order=2, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6,
              eps=1e-5)


def test_log1mexp_derivative_is_one_over_expm1(x64):
  x = np.array([0.01, 0.69, 0.7, 5.0])
  np.testing.assert_allclose(np.asarray(xjax.vmap(xjax.grad(nn.log1mexp))(x)),
                             1 / np.expm1(x), rtol=1e-12)


def test_logmeanexp(rng, x64):
  x = rng.standard_normal((3, 4, 5))
  np.testing.assert_allclose(np.asarray(nn.logmeanexp(x)),
                             scipy.special.logsumexp(x) - np.log(x.size), rtol=1e-12)
  got = nn.logmeanexp(x, axis=(0, 2), keepdims=True)
  assert got.shape == (1, 4, 1)
  np.testing.assert_allclose(np.asarray(got), scipy.special.logsumexp(
      x, axis=(0, 2), keepdims=True) - np.log(15), rtol=1e-12)
  where = rng.random((4, 5)) < 0.5
  where[:, 0] = True
  got = np.asarray(nn.logmeanexp(x, axis=-1, where=where))
  want = np.log(np.sum(np.exp(x) * where, -1) / where.sum(-1))
  np.testing.assert_allclose(got, want, rtol=1e-12)
  np.testing.assert_allclose(np.asarray(nn.logmeanexp(np.arange(3))),
                             np.log(np.mean(np.exp(np.arange(3.0)))), rtol=1e-12)
  check_grads(lambda x: nn.logmeanexp(x, axis=1), (x,), order=2, modes=("fwd", "rev"))


def test_softmax_signature_matches_jax():
  x = np.array([[1.0, 2.0, -np.inf], [0.5, 0.5, 0.5]], np.float32)
  np.testing.assert_allclose(np.asarray(nn.softmax(x)), scipy.special.softmax(x, -1),
                             rtol=1e-6)
  where = np.array([True, False, True])
  np.testing.assert_allclose(np.asarray(nn.softmax(x[1], where=where)), [0.5, 0, 0.5])
  np.testing.assert_allclose(np.asarray(nn.log_softmax(x[1], where=where)),
                             [np.log(0.5), -np.inf, np.log(0.5)], rtol=1e-6)
  with pytest.raises(TypeError):
    nn.softmax(x, initial=0.0)  # JAX 0.10.2 has no `initial`


def test_identity_rejects_lists():
  with pytest.raises(TypeError, match="identity requires ndarray or scalar arguments, got "
                     "<class 'list'> at position 0."):
    nn.identity([1.0, 2.0])
  assert isinstance(nn.identity(2.0), xjax.Array)


# Printed by jax 0.10.2: jax.make_jaxpr(f)(jnp.ones(3)) (log1mexp: of 1.0).
JAX_JAXPRS = {
    "sparse_sigmoid": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = jit[
      name=sparse_sigmoid
      jaxpr={ lambda ; a:f32[3]. let
          c:f32[3] = add a 1.0:f32[]
          d:f32[3] = jit[
            name=clip
            jaxpr={ lambda ; c:f32[3] e:f32[] f:f32[]. let
                g:f32[] = convert_element_type[
                  new_dtype=float32
                  weak_type=False
                ] e
                h:f32[3] = max g c
                i:f32[] = convert_element_type[
                  new_dtype=float32
                  weak_type=False
                ] f
                d:f32[3] = min i h
              in (d,) }
          ] c 0.0:f32[] 2.0:f32[]
          b:f32[3] = mul 0.5:f32[] d
        in (b,) }
    ] a
  in (b,) }""",
    "identity": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = jit[name=identity jaxpr={ lambda ; a:f32[3]. let  in (a,) }] a
  in (b,) }""",
    "log1mexp": """\
let log1mexp = { lambda ; a:f32[]. let
    b:f32[] = log 2.0:f32[]
    c:bool[] = lt a b
    d:f32[] = neg a
    e:f32[] = expm1 d
    f:f32[] = neg e
    g:f32[] = log f
    h:f32[] = neg a
    i:f32[] = exp h
    j:f32[] = neg i
    k:f32[] = log1p j
    l:f32[] = jit[
      name=_where
      jaxpr={ lambda ; c:bool[] g:f32[] k:f32[]. let
          l:f32[] = select_n c k g
        in (l,) }
    ] c g k
  in (l,) } in
{ lambda ; m:f32[]. let
    n:f32[] = custom_jvp_call[
      name=log1mexp
      call_jaxpr={ lambda ; o:f32[]. let
          p:f32[] = jit[name=log1mexp jaxpr=log1mexp] o
        in (p,) }
      jvp=jvp
      symbolic_zeros=False
    ] m
  in (n,) }""",
}


@pytest.mark.parametrize("name", sorted(JAX_JAXPRS))
def test_jaxpr_matches_jax(name):
  arg = 1.0 if name == "log1mexp" else jnp.ones(3)
  assert str(xjax.make_jaxpr(getattr(nn, name))(arg)) == JAX_JAXPRS[name]


def test_scaled_matmul():
  rng = np.random.default_rng(1)
  a = rng.standard_normal((2, 3, 8)).astype(np.float32)
  b = rng.standard_normal((2, 4, 8)).astype(np.float32)
  sa = 2.0 ** rng.integers(-2, 3, (2, 3, 2)).astype(np.float32)
  sb = 2.0 ** rng.integers(-2, 3, (2, 4, 2)).astype(np.float32)
  a8, b8 = (np.asarray(t.astype(jnp.float8_e4m3fn)) for t in (a, b))
  sa8, sb8 = (np.asarray(t.astype(jnp.float8_e8m0fnu)) for t in (sa, sb))
  out = nn.scaled_matmul(a8, b8, sa8, sb8)
  assert out.shape == (2, 3, 4) and out.dtype == np.float32
  want = np.einsum("bmk,bnk->bmn", a8.astype(np.float64) * np.repeat(sa, 4, -1),
                   b8.astype(np.float64) * np.repeat(sb, 4, -1))
  np.testing.assert_allclose(np.asarray(out), want, rtol=1e-2, atol=1e-2)
  with pytest.raises(ValueError, match="scaled_matmul requires all inputs to be "
                     "3-dimensional arrays"):
    nn.scaled_matmul(a8[0], b8[0], sa8[0], sb8[0])
  with pytest.raises(ValueError, match="matching batch \\(B\\) and contract \\(K\\) "
                     "dimensions, but got shapes \\(2, 3, 8\\) and \\(1, 4, 8\\)"):
    nn.scaled_matmul(a8, b8[:1], sa8, sb8[:1])
  with pytest.raises(ValueError, match="scaled_matmul requires scales to match non-contract"):
    nn.scaled_matmul(a8, b8, sa8[:, :2], sb8)


def test_scaled_dot_general_and_configs():
  cfg = nn.get_scaled_dot_general_config("mxfp8")
  assert (cfg.mode, cfg.block_size, cfg.global_scale) == ("mxfp8", 32, None)
  assert np.dtype(cfg.data_type) == np.dtype(jnp.float8_e4m3fn)
  assert np.dtype(cfg.scale_type) == np.dtype(jnp.float8_e8m0fnu)
  nv = nn.get_scaled_dot_general_config("nvfp4")
  assert (nv.block_size, np.dtype(nv.data_type)) == (16, np.dtype(jnp.float4_e2m1fn))
  np.testing.assert_array_equal(np.asarray(nv.global_scale), [1.0])
  with pytest.raises(ValueError, match="Unsupported mode: int8"):
    nn.get_scaled_dot_general_config("int8")
  x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
  y = np.ones((3, 4), np.float32)
  np.testing.assert_allclose(np.asarray(nn.scaled_dot_general(x, y, (((1,), (0,)), ((), ())))),
                             x @ y)
  with pytest.warns(DeprecationWarning):
    nn.scaled_dot_general(x, y, (((1,), (0,)), ((), ())), implementation="cudnn")
  with pytest.raises(NotImplementedError):
    nn.scaled_dot_general(x, y, (((1,), (0,)), ((), ())), configs=[cfg] * 3)


def test_names_complete():
  names = {n for n in dir(nn) if not n.startswith("_")}
  assert len(names) == 36 and {"initializers", "tanh", "dot_product_attention"} <= names
  assert nn.tanh is jnp.tanh


def _np_quantize(x, cfg):
  """NumPy model of the block quantization (float64 scales, exact powers of two for mxfp8)."""
  import ml_dtypes
  blocks = x.astype(np.float64).reshape(x.shape[:-1] + (-1, cfg.block_size))
  top = float(ml_dtypes.finfo(cfg.data_type).max)
  if cfg.mode == "mxfp8":
    scale = np.max(np.abs(blocks), -1, keepdims=True) / top
    scale = 2.0 ** np.ceil(np.log2(scale.astype(np.float32)))
  else:
    blocks = blocks / float(np.asarray(cfg.global_scale)[0])
    scale = np.minimum(np.max(np.abs(blocks), -1, keepdims=True) / top,
                       float(ml_dtypes.finfo(cfg.scale_type).max))
    scale = scale.astype(np.float32).astype(cfg.scale_type).astype(np.float64)
  with np.errstate(divide="ignore"):  # blocks whose scale underflows to 0 saturate
    q = np.clip(blocks / scale, -top, top)
  q = q.astype(np.float32).astype(cfg.data_type)
  return q.reshape(x.shape), scale[..., 0]


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
def test_block_quantize_matches_a_numpy_model(mode):
  # JAX's private jax._src.cudnn.scaled_matmul_stablehlo.quantize, for scaled_matmul operands.
  from xjax._src.nn.functions import quantize
  rng = np.random.default_rng(3)
  x = (rng.standard_normal((2, 3, 64)) * np.array([1e-3, 1, 1e3])[None, :, None])
  x = x.astype(np.float32)
  cfg = nn.get_scaled_dot_general_config(mode)
  q, s = quantize(x, cfg)
  assert q.shape == x.shape and s.shape == (2, 3, 64 // cfg.block_size)
  assert q.dtype == np.dtype(cfg.data_type) and s.dtype == np.dtype(cfg.scale_type)
  q_ref, s_ref = _np_quantize(x, cfg)
  np.testing.assert_array_equal(np.asarray(s).astype(np.float64), s_ref)
  np.testing.assert_array_equal(np.asarray(q).astype(np.float32), q_ref.astype(np.float32))
  # Dequantized, the blocks come back to within the data type's precision of their largest
  # magnitude (nvfp4's float8 scales, with the default global scale 1, fit the middle row).
  back = np.asarray(q).astype(np.float32) * np.repeat(np.asarray(s).astype(np.float32),
                                                      cfg.block_size, -1)
  rows = slice(None) if mode == "mxfp8" else slice(1, 2)
  blocks = np.abs(x).reshape(2, 3, -1, cfg.block_size).max(-1)
  err = np.abs(back - x) / np.repeat(blocks, cfg.block_size, -1)
  assert err[:, rows].max() <= (0.07 if mode == "mxfp8" else 0.26)
  with pytest.raises(ValueError, match="must be a positive multiple of the block size"):
    quantize(x[..., :20], cfg)
