"""Tests of xjax.image (resize, scale_and_translate, ResizeMethod): values against goldens
recorded from real JAX 0.10.2 (tools/golden_image.py) and against NumPy references, jit,
vmap, derivatives, printed jaxprs and errors."""
import json
import os

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import image
from xjax._src.config import enable_x64
from xjax.test_util import check_grads

import image_cases

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "image_resize.json")
with open(GOLDEN) as f:
  _GOLDENS = json.load(f)["modes"]

Method = image.ResizeMethod


# ----------------------------------------------------------------------------
# Goldens from real JAX: every method x antialias x up/down x 1-D..4-D, uint8 / int32
# inputs, scale_and_translate


def _check_goldens(x64):
  goldens = _GOLDENS["x64" if x64 else "x32"]
  cases = dict(image_cases.cases(xjax, jnp, np, x64))
  assert set(cases) == set(goldens)
  ids = list(cases)
  got = {}
  for start in range(0, len(ids), 40):  # one XLA compile per chunk of cases keeps this fast
    chunk = ids[start:start + 40]
    got.update(zip(chunk, xjax.jit(lambda: [cases[i]() for i in chunk])()))
  failures = []
  for case_id in ids:
    want, value = goldens[case_id], np.asarray(got[case_id])
    ref = np.frombuffer(bytes.fromhex(want["hex"]), want["dtype"]).reshape(want["shape"])
    if value.dtype != ref.dtype or value.shape != ref.shape:
      failures.append(f"{case_id}: {value.dtype}{value.shape} vs {ref.dtype}{ref.shape}")
      continue
    single = not x64 or case_id == "sat-f32-scale"  # float32 weights
    tol = (2e-6 if single else 1e-12) * max(1.0, float(np.abs(ref).max(initial=0.0)))
    err = float(np.abs(value.astype(np.float64) - ref).max(initial=0.0))
    if not err <= tol:
      failures.append(f"{case_id}: max error {err:.3g} > {tol:.3g}")
  assert not failures, "\n".join(failures)


def test_against_jax_goldens():
  _check_goldens(x64=False)


def test_against_jax_goldens_x64(x64):
  _check_goldens(x64=True)


def test_eager_matches_golden():
  x = image_cases.image(np, (5, 6), "float32")
  for method in ("linear", "area"):
    want = _GOLDENS["x32"][f"resize-{method}-aa1-2d_up-float32"]
    ref = np.frombuffer(bytes.fromhex(want["hex"]), want["dtype"]).reshape(want["shape"])
    np.testing.assert_allclose(np.asarray(image.resize(x, (9, 11), method)), ref, rtol=2e-6,
                               atol=2e-6)


# ----------------------------------------------------------------------------
# NumPy references


def _linear_1d(x, n):
  """Half-pixel linear interpolation with clamped edges (antialias plays no part upsampling)."""
  m = x.shape[-1]
  sample = (np.arange(n) + 0.5) * m / n - 0.5
  return np.stack([np.interp(sample, np.arange(m), row) for row in x.reshape(-1, m)]
                  ).reshape(x.shape[:-1] + (n,))


def _keys_cubic_matrix(m, n):
  """[m, n] Keys (a = -0.5) interpolation weights, normalized over in-range taps."""
  sample = (np.arange(n) + 0.5) * m / n - 0.5
  d = np.abs(sample[None, :] - np.arange(m)[:, None])
  w = np.where(d < 1, (1.5 * d - 2.5) * d * d + 1,
               np.where(d < 2, ((-0.5 * d + 2.5) * d - 4) * d + 2, 0.0))
  return w / w.sum(0, keepdims=True)


@pytest.mark.parametrize("antialias", [True, False])
def test_linear_upsampling_matches_interp(rng, antialias):
  x = rng.standard_normal((3, 5, 4)).astype(np.float32)
  out = image.resize(x, (3, 11, 9), "bilinear", antialias=antialias)
  want = _linear_1d(np.swapaxes(_linear_1d(x, 9), 1, 2), 11).swapaxes(1, 2)
  np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5, atol=1e-5)
  assert out.dtype == np.float32


def test_cubic_upsampling_matches_numpy(rng):
  x = rng.standard_normal((6, 5)).astype(np.float32)
  out = image.resize(x, (13, 8), "bicubic")
  want = _keys_cubic_matrix(6, 13).T @ x @ _keys_cubic_matrix(5, 8)
  np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5, atol=1e-5)


def test_nearest_matches_numpy(rng):
  x = rng.integers(0, 100, size=(2, 7, 5)).astype(np.int32)
  out = image.resize(x, (2, 3, 12), "nearest")
  rows = np.floor((np.arange(3) + 0.5) * 7 / 3).astype(int)
  cols = np.floor((np.arange(12) + 0.5) * 5 / 12).astype(int)
  assert out.dtype == np.int32
  np.testing.assert_array_equal(np.asarray(out), x[:, rows][:, :, cols])


def test_area_block_mean_and_antialiased_linear_box(rng):
  x = rng.standard_normal((6, 9)).astype(np.float32)
  want = x.reshape(3, 2, 3, 3).mean(axis=(1, 3))
  np.testing.assert_allclose(np.asarray(image.resize(x, (3, 3), "area")), want, rtol=1e-5,
                             atol=1e-6)
  # Downsampling by 2 with an antialiased triangle: taps 1/8, 3/8, 3/8, 1/8 inside.
  y = rng.standard_normal(8).astype(np.float32)
  out = np.asarray(image.resize(y, (4,), "linear"))
  np.testing.assert_allclose(out[1:3], [y[2 * i - 1:2 * i + 3] @ [.125, .375, .375, .125]
                                        for i in (1, 2)], rtol=1e-5, atol=1e-6)


def test_identity_and_constant_images(rng):
  x = rng.standard_normal((4, 5)).astype(np.float32)
  for method in ("linear", "cubic", "lanczos3", "lanczos5", "area", "cubic-pytorch"):
    np.testing.assert_array_equal(np.asarray(image.resize(x, (4, 5), method)), x)
    # kernels are normalized: a constant image stays constant
    out = image.resize(np.full((5, 7), 3.0, np.float32), (9, 3), method)
    np.testing.assert_allclose(np.asarray(out), 3.0, rtol=1e-5)


def test_scale_and_translate_identity_and_shift(rng):
  x = rng.standard_normal((5, 6)).astype(np.float32)
  same = image.scale_and_translate(x, (5, 6), (0, 1), jnp.ones(2), jnp.zeros(2), "cubic")
  np.testing.assert_allclose(np.asarray(same), x, rtol=1e-6, atol=1e-6)
  # a whole-pixel shift along axis 1: column j of the output is column j - 2 of the input,
  # and the columns mapped from outside the image are zero
  shifted = image.scale_and_translate(x, (5, 6), (1,), jnp.ones(1), jnp.array([2.0]), "linear")
  np.testing.assert_allclose(np.asarray(shifted)[:, 2:], x[:, :4], rtol=1e-6, atol=1e-6)
  np.testing.assert_array_equal(np.asarray(shifted)[:, :2], 0.0)


def test_resize_dtypes():
  assert image.resize(np.ones((2, 3), np.uint8), (4, 6), "linear").dtype == np.float32
  assert image.resize(np.ones((2, 3), np.uint8), (4, 6), "nearest").dtype == np.uint8
  assert image.resize(np.ones((2, 3), bool), (4, 6), "cubic").dtype == np.float32
  assert image.resize(jnp.ones((2, 3), jnp.bfloat16), (4, 6), "cubic").dtype == jnp.bfloat16
  z = image.resize(jnp.ones((2, 3), jnp.complex64) * (1 + 2j), (4, 6), "linear")
  assert z.dtype == np.complex64
  np.testing.assert_allclose(np.asarray(z), 1 + 2j, rtol=1e-6)
  assert image.resize(np.ones((2, 3), np.float32), (0, 6), "linear").shape == (0, 6)


# ----------------------------------------------------------------------------
# Method names


def test_method_names():
  assert [m.name for m in Method] == ["NEAREST", "LINEAR", "LANCZOS3", "LANCZOS5", "CUBIC",
                                      "CUBIC_PYTORCH", "AREA"]
  assert [m.value for m in Method] == list(range(7))
  names = {"nearest": Method.NEAREST, "linear": Method.LINEAR, "bilinear": Method.LINEAR,
           "trilinear": Method.LINEAR, "triangle": Method.LINEAR,
           "lanczos3": Method.LANCZOS3, "lanczos5": Method.LANCZOS5, "cubic": Method.CUBIC,
           "bicubic": Method.CUBIC, "tricubic": Method.CUBIC,
           "cubic-pytorch": Method.CUBIC_PYTORCH, "bicubic-pytorch": Method.CUBIC_PYTORCH,
           "area": Method.AREA}
  for name, method in names.items():
    assert Method.from_string(name) is method
  x = np.arange(20.0, dtype=np.float32).reshape(4, 5)
  by_name, by_method = xjax.jit(lambda x: (
      [image.resize(x, (3, 7), name) for name in names],
      [image.resize(x, (3, 7), method) for method in names.values()]))(x)
  for a, b in zip(by_name, by_method):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
  for bad in ("Linear", "BILINEAR", "gaussian", ""):
    with pytest.raises(ValueError, match=f'^Unknown resize method "{bad}"$'):
      Method.from_string(bad)


def test_cubic_pytorch_with_antialias_is_cubic(rng):
  x = rng.standard_normal((7, 6)).astype(np.float32)
  for shape in ((3, 4), (11, 9)):
    np.testing.assert_array_equal(np.asarray(image.resize(x, shape, "cubic-pytorch")),
                                  np.asarray(image.resize(x, shape, "cubic")))
  # without antialias it is a different (edge-padded, a = -0.75) kernel
  assert not np.allclose(np.asarray(image.resize(x, (11, 9), "cubic-pytorch", False)),
                         np.asarray(image.resize(x, (11, 9), "cubic", False)))


# ----------------------------------------------------------------------------
# jit, vmap, derivatives


def test_jit_matches_eager(rng):
  x = rng.standard_normal((2, 5, 6)).astype(np.float32)
  scale, trans = jnp.array([1.6, 0.7]), jnp.array([0.3, -0.4])
  for method in ("nearest", "linear", "lanczos5", "area"):
    f = lambda x: image.resize(x, (2, 8, 4), method)
    np.testing.assert_allclose(np.asarray(xjax.jit(f)(x)), np.asarray(f(x)), rtol=1e-6,
                               atol=1e-6)
  # scale and translation traced under jit
  g = lambda x, s, t: image.scale_and_translate(x, (2, 7, 5), (1, 2), s, t, "cubic")
  np.testing.assert_allclose(np.asarray(xjax.jit(g)(x, scale, trans)),
                             np.asarray(g(x, scale, trans)), rtol=1e-6, atol=1e-6)


def test_vmap_matches_loop(rng):
  xs = rng.standard_normal((3, 5, 6)).astype(np.float32)
  for method in ("nearest", "linear", "cubic-pytorch"):
    f = lambda x: image.resize(x, (8, 3), method, antialias=False)
    out = xjax.vmap(f)(xs)
    np.testing.assert_allclose(np.asarray(out), np.stack([np.asarray(f(x)) for x in xs]),
                               rtol=1e-6, atol=1e-6)
  # batched scales with an unbatched image, and both batched
  scales = jnp.array([[1.5, 0.5], [0.8, 1.2], [2.0, 1.0]])
  trans = jnp.array([0.2, -0.3])
  g = lambda x, s: image.scale_and_translate(x, (7, 4), (0, 1), s, trans, "lanczos3")
  out = xjax.vmap(g, in_axes=(None, 0))(xs[0], scales)
  np.testing.assert_allclose(np.asarray(out), np.stack([np.asarray(g(xs[0], s)) for s in scales]),
                             rtol=1e-5, atol=1e-6)
  out = xjax.vmap(g)(xs, scales)
  np.testing.assert_allclose(np.asarray(out), np.stack([np.asarray(g(x, s))
                                                        for x, s in zip(xs, scales)]),
                             rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("method", ["linear", "cubic"])
def test_grads_wrt_image(x64, rng, method):
  x = rng.standard_normal((4, 5))
  check_grads(lambda x: image.resize(x, (7, 3), method), (x,), order=1, modes=("fwd", "rev"))
  check_grads(lambda x: image.resize(x, (2, 9), method, antialias=False), (x,), order=1,
              modes=("fwd", "rev"))


def test_grads_wrt_scale_and_translation(x64, rng):
  x = rng.standard_normal((5, 6))
  f = xjax.jit(lambda s, t: image.scale_and_translate(x, (6, 4), (0, 1), s, t, "cubic"))
  check_grads(f, (jnp.array([1.3, 0.7]), jnp.array([0.15, 0.35])), order=1,
              modes=("fwd", "rev"), eps=1e-5)


def test_resize_of_image_is_linear(x64, rng):
  x = rng.standard_normal((4, 5))
  f = lambda x: image.resize(x, (6, 3), "lanczos3")
  ct = rng.standard_normal((6, 3))
  _, vjp = xjax.vjp(f, x)
  # <f(e_ij), ct> summed: the vjp is the transposed resampling
  jac = np.stack([np.asarray(f(np.eye(20)[k].reshape(4, 5))).ravel() for k in range(20)])
  np.testing.assert_allclose(np.asarray(vjp(ct)[0]).ravel(), jac @ ct.ravel(), rtol=1e-10)


# ----------------------------------------------------------------------------
# Printed jaxprs, as real JAX 0.10.2 prints them


BILINEAR_JAXPR = """\
let _resize = { lambda ; a:f32[3,4]. let
    b:f32[] = max 0.5:f32[] 1.0:f32[]
    c:f32[6] = iota[dimension=0 dtype=float32 shape=(6,) sharding=None] 
    d:f32[6] = add c 0.5:f32[]
    e:f32[6] = mul d 0.5:f32[]
    f:f32[6] = sub e 0.0:f32[]
    g:f32[6] = sub f 0.5:f32[]
    h:f32[3] = iota[dimension=0 dtype=float32 shape=(3,) sharding=None] 
    i:f32[1,6] = broadcast_in_dim[broadcast_dimensions=(1,)] g
    j:f32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] h
    k:f32[3,6] = sub i j
    l:f32[3,6] = abs k
    m:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    n:f32[3,6] = div l m
    o:f32[3,6] = abs n
    p:f32[3,6] = sub 1.0:f32[] o
    q:f32[3,6] = max 0.0:f32[] p
    r:f32[6] = reduce_sum[axes=(0,) out_sharding=None] q
    s:f32[1,6] = broadcast_in_dim[broadcast_dimensions=(1,)] r
    t:f32[1,6] = abs s
    u:bool[1,6] = gt t 0.00011920928955078125:f32[]
    v:bool[1,6] = ne s 0.0:f32[]
    w:f32[1,6] = jit[
      name=_where
      jaxpr={ lambda ; v:bool[1,6] s:f32[1,6] x:i32[]. let
          y:f32[] = convert_element_type[new_dtype=float32 weak_type=False] x
          z:f32[1,6] = broadcast_in_dim y
          w:f32[1,6] = select_n v z s
        in (w,) }
    ] v s 1:i32[]
    ba:f32[3,6] = div q w
    bb:f32[3,6] = jit[name=_where jaxpr=_where] u ba 0:i32[]
    bc:bool[6] = ge g -0.5:f32[]
    bd:bool[6] = le g 2.5:f32[]
    be:bool[6] = and bc bd
    bf:bool[1,6] = broadcast_in_dim[broadcast_dimensions=(1,)] be
    bg:f32[3,6] = jit[name=_where jaxpr=_where] bf bb 0:i32[]
    bh:f32[] = max 0.5:f32[] 1.0:f32[]
    bi:f32[8] = iota[dimension=0 dtype=float32 shape=(8,) sharding=None] 
    bj:f32[8] = add bi 0.5:f32[]
    bk:f32[8] = mul bj 0.5:f32[]
    bl:f32[8] = sub bk 0.0:f32[]
    bm:f32[8] = sub bl 0.5:f32[]
    bn:f32[4] = iota[dimension=0 dtype=float32 shape=(4,) sharding=None] 
    bo:f32[1,8] = broadcast_in_dim[broadcast_dimensions=(1,)] bm
    bp:f32[4,1] = broadcast_in_dim[broadcast_dimensions=(0,)] bn
    bq:f32[4,8] = sub bo bp
    br:f32[4,8] = abs bq
    bs:f32[] = convert_element_type[new_dtype=float32 weak_type=False] bh
    bt:f32[4,8] = div br bs
    bu:f32[4,8] = abs bt
    bv:f32[4,8] = sub 1.0:f32[] bu
    bw:f32[4,8] = max 0.0:f32[] bv
    bx:f32[8] = reduce_sum[axes=(0,) out_sharding=None] bw
    by:f32[1,8] = broadcast_in_dim[broadcast_dimensions=(1,)] bx
    bz:f32[1,8] = abs by
    ca:bool[1,8] = gt bz 0.00011920928955078125:f32[]
    cb:bool[1,8] = ne by 0.0:f32[]
    cc:f32[1,8] = jit[
      name=_where
      jaxpr={ lambda ; cb:bool[1,8] by:f32[1,8] cd:i32[]. let
          ce:f32[] = convert_element_type[new_dtype=float32 weak_type=False] cd
          cf:f32[1,8] = broadcast_in_dim ce
          cc:f32[1,8] = select_n cb cf by
        in (cc,) }
    ] cb by 1:i32[]
    cg:f32[4,8] = div bw cc
    ch:f32[4,8] = jit[name=_where jaxpr=_where1] ca cg 0:i32[]
    ci:bool[8] = ge bm -0.5:f32[]
    cj:bool[8] = le bm 3.5:f32[]
    ck:bool[8] = and ci cj
    cl:bool[1,8] = broadcast_in_dim[broadcast_dimensions=(1,)] ck
    cm:f32[4,8] = jit[name=_where jaxpr=_where1] cl ch 0:i32[]
    cn:f32[8,3] = dot_general[
      dimension_numbers=(([0], [1]), ([], []))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
      preferred_element_type=float32
    ] cm a
    co:f32[6,8] = dot_general[
      dimension_numbers=(([0], [1]), ([], []))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
      preferred_element_type=float32
    ] bg cn
  in (co,) } in
let _where = { lambda ; cp:bool[1,6] cq:f32[3,6] cr:i32[]. let
    cs:f32[] = convert_element_type[new_dtype=float32 weak_type=False] cr
    ct:bool[3,6] = broadcast_in_dim[broadcast_dimensions=(0, 1)] cp
    cu:f32[3,6] = broadcast_in_dim cs
    cv:f32[3,6] = select_n ct cu cq
  in (cv,) } in
let _where1 = { lambda ; cw:bool[1,8] cx:f32[4,8] cy:i32[]. let
    cz:f32[] = convert_element_type[new_dtype=float32 weak_type=False] cy
    da:bool[4,8] = broadcast_in_dim[broadcast_dimensions=(0, 1)] cw
    db:f32[4,8] = broadcast_in_dim cz
    dc:f32[4,8] = select_n da db cx
  in (dc,) } in
{ lambda ; dd:f32[3,4]. let
    de:f32[6,8] = jit[name=_resize jaxpr=_resize] dd
  in (de,) }"""

NEAREST_JAXPR = """\
let _resize = { lambda ; a:f32[1,3,4]. let
    b:f32[6] = iota[dimension=0 dtype=float32 shape=(6,) sharding=None] 
    c:f32[6] = add b 0.5:f32[]
    d:f32[6] = mul c 3.0:f32[]
    e:f32[6] = div d 6.0:f32[]
    f:f32[6] = floor e
    g:i32[6] = convert_element_type[new_dtype=int32 weak_type=False] f
    h:bool[6] = lt g 0:i32[]
    i:i32[6] = add g 3:i32[]
    j:i32[6] = select_n h g i
    k:i32[6,1] = broadcast_in_dim[broadcast_dimensions=(0,)] j
    l:f32[1,6,4] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(0, 2), collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1, 1, 4)
      unique_indices=False
    ] a k
    m:f32[8] = iota[dimension=0 dtype=float32 shape=(8,) sharding=None] 
    n:f32[8] = add m 0.5:f32[]
    o:f32[8] = mul n 4.0:f32[]
    p:f32[8] = div o 8.0:f32[]
    q:f32[8] = floor p
    r:i32[8] = convert_element_type[new_dtype=int32 weak_type=False] q
    s:bool[8] = lt r 0:i32[]
    t:i32[8] = add r 4:i32[]
    u:i32[8] = select_n s r t
    v:i32[8,1] = broadcast_in_dim[broadcast_dimensions=(0,)] u
    w:f32[1,6,8] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(0, 1), collapsed_slice_dims=(2,), start_index_map=(2,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1, 6, 1)
      unique_indices=False
    ] l v
  in (w,) } in
{ lambda ; x:f32[1,3,4]. let
    y:f32[1,6,8] = jit[name=_resize jaxpr=_resize] x
  in (y,) }"""


def test_jaxprs():
  x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
  assert str(xjax.make_jaxpr(lambda x: image.resize(x, (6, 8), "bilinear"))(x)) == BILINEAR_JAXPR
  assert str(xjax.make_jaxpr(lambda x: image.resize(x, (1, 6, 8), "nearest"))(x[None])) \
      == NEAREST_JAXPR


# ----------------------------------------------------------------------------
# Errors, as JAX raises them


def _raises(cls, message, fun, *args):
  with pytest.raises(cls) as info:
    fun(*args)
  assert str(info.value) == message


def test_errors():
  x = jnp.ones((3, 4))
  ones, zeros = jnp.ones(2), jnp.zeros(2)
  _raises(ValueError, "shape must have length equal to the number of dimensions of x;  "
          "(3, 4, 5) vs (3, 4)", image.resize, x, (3, 4, 5), "linear")
  _raises(ValueError, "shape must have length equal to the number of dimensions of x;  "
          "(6,) vs (3, 4)", image.scale_and_translate, x, (6,), (0, 1), ones, zeros, "linear")
  _raises(ValueError, 'Unknown resize method "bogus"', image.resize, x, (6, 8), "bogus")
  _raises(ValueError, 'Unknown resize method "Linear"', image.scale_and_translate, x, (6, 8),
          (0, 1), ones, zeros, "Linear")
  _raises(ValueError, "Nearest neighbor resampling is not currently supported for "
          "scale_and_translate.", image.scale_and_translate, x, (6, 8), (0, 1), ones, zeros,
          "nearest")
  _raises(TypeError, "Shapes must be 1D sequences of concrete values of integer type, got "
          "(6.0, 8).", image.resize, x, (6.0, 8), "linear")
  _raises(TypeError, "Cannot determine dtype of [1.5, 0.7]", image.scale_and_translate, x,
          (6, 8), (0, 1), [1.5, 0.7], [0.0, 1.0], "linear")
  with pytest.raises(AssertionError):  # not a method
    image.resize(x, (6, 8), 3)
  with pytest.raises(AssertionError):  # one scale per spatial dim
    image.scale_and_translate(x, (6, 8), (0, 1), jnp.ones(3), zeros, "linear")


def test_public_names():
  assert xjax.image is image
  assert {n for n in dir(image) if not n.startswith("_")} == {
      "ResizeMethod", "resize", "scale_and_translate"}
