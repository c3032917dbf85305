"""lax convolutions against a direct NumPy reference and real JAX's printed output.

`conv_ref` below computes XLA's Conv by summing over each window (after
dilating, padding and permuting to NC... order), with feature and batch groups
as XLA splits them (group-major); it was checked against real JAX once when
written. Printed jaxprs, the StableHLO op and shape helpers are JAX 0.10.2's.
"""
import itertools

import ml_dtypes
import numpy as np
import pytest

import xjax
from xjax._src import core
from xjax._src.lax import convolution as lax_conv
from xjax.test_util import check_grads

bf16 = np.dtype(ml_dtypes.bfloat16)


def _perms(dimension_numbers, ndim):
  """(lhs_perm, rhs_perm, out_perm) for None or three layout strings."""
  if dimension_numbers is None:
    return (tuple(range(ndim)),) * 3
  lhs_s, rhs_s, out_s = dimension_numbers
  def perm(spec, pair):
    spatial = sorted((i for i, c in enumerate(spec) if c not in pair),
                     key=lambda i: rhs_s.index(spec[i]))
    return (spec.index(pair[0]), spec.index(pair[1]), *spatial)
  return perm(lhs_s, "NC"), perm(rhs_s, "OI"), perm(out_s, "NC")


def _dilate(x, dilation):
  """Inserts dilation-1 zeros between elements along the trailing spatial axes."""
  for ax, d in enumerate(dilation, start=2):
    if d > 1 and x.shape[ax] > 0:
      shape = list(x.shape)
      shape[ax] = (shape[ax] - 1) * d + 1
      y = np.zeros(shape, x.dtype)
      idx = [slice(None)] * x.ndim
      idx[ax] = slice(None, None, d)
      y[tuple(idx)] = x
      x = y
  return x


def _pad(x, padding):
  """Zero padding, negative values cropping, on the spatial axes."""
  for ax, (lo, hi) in enumerate(padding, start=2):
    widths = [(0, 0)] * x.ndim
    widths[ax] = (max(lo, 0), max(hi, 0))
    x = np.pad(x, widths)
    idx = [slice(None)] * x.ndim
    idx[ax] = slice(max(-lo, 0), x.shape[ax] - max(-hi, 0))
    x = x[tuple(idx)]
  return x


def _same_pads(in_shape, window, strides, lower=False):
  pads = []
  for n, k, s in zip(in_shape, window, strides):
    out = -(-n // s)
    total = max((out - 1) * s + k - n, 0)
    lo = total // 2 if not lower else total - total // 2
    pads.append((lo, total - lo))
  return pads


def conv_ref(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
             dimension_numbers=None, feature_group_count=1, batch_group_count=1):
  """XLA's Conv by direct summation over windows, in float64/complex128/int64."""
  lhs, rhs = np.asarray(lhs), np.asarray(rhs)
  nsp = lhs.ndim - 2
  lhs_perm, rhs_perm, out_perm = _perms(dimension_numbers, lhs.ndim)
  acc = np.complex128 if np.iscomplexobj(lhs) else (
      np.float64 if lhs.dtype.kind == "f" or lhs.dtype.name == "bfloat16" else np.int64)
  x = np.transpose(lhs, lhs_perm).astype(acc)
  w = np.transpose(rhs, rhs_perm).astype(acc)
  lhs_dilation = lhs_dilation or (1,) * nsp
  rhs_dilation = rhs_dilation or (1,) * nsp
  x = _dilate(x, lhs_dilation)
  w = _dilate(w, rhs_dilation)
  if isinstance(padding, str):
    padding = ([(0, 0)] * nsp if padding.upper() == "VALID" else
               _same_pads(x.shape[2:], w.shape[2:], window_strides,
                          lower=padding.upper() == "SAME_LOWER"))
  x = _pad(x, padding)
  n, c = x.shape[:2]
  o, i = w.shape[:2]
  ks = w.shape[2:]
  out_sp = [max((size - k) // s + 1, 0) for size, k, s in zip(x.shape[2:], ks, window_strides)]
  g, b = feature_group_count, batch_group_count
  out = np.zeros((n // b, o, *out_sp), acc)
  og = o // (g * b)
  for pos in itertools.product(*map(range, out_sp)):
    win = tuple(slice(p * s, p * s + k) for p, s, k in zip(pos, window_strides, ks))
    patch = x[(slice(None), slice(None), *win)]
    for gi in range(g):
      for bi in range(b):
        group = gi * b + bi
        feats = slice(group * og, (group + 1) * og)
        xs = patch[bi * (n // b):(bi + 1) * (n // b), gi * i:(gi + 1) * i]
        out[(slice(None), feats, *pos)] = np.tensordot(
            xs, w[feats], axes=(list(range(1, xs.ndim)), list(range(1, xs.ndim))))
  return np.transpose(out, np.argsort(out_perm))


def rand(rng, shape, dtype=np.float32):
  dtype = np.dtype(dtype)
  if dtype.kind in "iu":
    return rng.integers(-4, 5, size=shape).astype(dtype)
  if dtype == np.bool_:
    return rng.random(shape) < 0.5
  if dtype.kind == "c":
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
  return rng.standard_normal(shape).astype(dtype)


# (lhs shape, rhs shape, strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
#  feature_group_count, batch_group_count)
CASES = [
    ((2, 3, 9), (4, 3, 3), (1,), "SAME", None, None, None, 1, 1),
    ((2, 3, 9), (4, 3, 2), (2,), "VALID", None, (2,), None, 1, 1),
    ((1, 2, 6), (3, 2, 4), (3,), "SAME_LOWER", None, None, None, 1, 1),
    ((2, 4, 7), (6, 2, 3), (1,), [(2, -1)], (2,), None, ("NCH", "OIH", "NCH"), 2, 1),
    ((2, 7, 4), (3, 4, 5), (2,), "SAME", None, (1,), ("NWC", "WIO", "NWC"), 1, 1),
    ((2, 6, 7, 5), (4, 3, 3, 2), (2, 1), [(1, 0), (2, -1)], (2, 1), (1, 2), None, 2, 1),
    ((4, 3, 7, 5), (6, 3, 3, 2), (1, 2), "VALID", None, (2, 1), None, 1, 2),
    ((4, 5, 7, 3), (3, 2, 3, 6), (1, 2), "SAME_LOWER", None, None, ("NHWC", "HWIO", "NHWC"), 1, 2),
    ((2, 5, 6, 3), (2, 3, 1, 6), (1, 1), "SAME", None, None, ("NWHC", "WHIO", "CNHW"), 3, 1),
    ((3, 8, 6, 2), (3, 3, 2, 4), (2, 2), "SAME", None, None, ("NHWC", "HWIO", "NCHW"), 1, 1),
    ((2, 3, 4, 5, 4), (2, 3, 2, 3, 2), (1, 2, 1), "SAME", None, (1, 1, 2), None, 1, 1),
    ((1, 4, 5, 3, 2), (3, 2, 2, 1, 4), (1, 1, 2), [(0, 1), (1, 1), (2, 0)], (1, 2, 1), None,
     ("NDHWC", "DHWIO", "NCDHW"), 2, 1),
    ((6, 4, 5), (6, 4, 2), (2,), [(0, 3)], (3,), None, None, 1, 3),
    ((2, 3), (4, 3), (), (), None, None, None, 1, 1),
    ((2, 3, 0), (4, 3, 2), (1,), "SAME", None, None, None, 1, 1),
    ((2, 3, 2), (4, 3, 3), (1,), "VALID", None, None, None, 1, 1),
]
IDS = [f"case{i}" for i in range(len(CASES))]


def run(case, lhs, rhs, fn=None, **kw):
  _, _, strides, pad, ld, rd, dn, fg, bg = case
  fn = fn or lax_conv.conv_general_dilated
  return fn(lhs, rhs, strides, pad, ld, rd, dn, fg, bg, **kw)


def make(rng, case, dtype=np.float32):
  return rand(rng, case[0], dtype), rand(rng, case[1], dtype)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_conv_general_dilated_matches_reference(rng, case):
  lhs, rhs = make(rng, case)
  out = run(case, lhs, rhs, precision="highest")
  expected = run(case, lhs, rhs, fn=conv_ref)
  assert out.dtype == np.float32 and out.shape == expected.shape
  np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", CASES[3:10], ids=IDS[3:10])
def test_conv_general_dilated_float64_matches_reference(rng, x64, case):
  lhs, rhs = make(rng, case, np.float64)
  out = run(case, lhs, rhs)
  assert out.dtype == np.float64
  np.testing.assert_allclose(np.asarray(out), run(case, lhs, rhs, fn=conv_ref), rtol=1e-12,
                             atol=1e-12)


@pytest.mark.parametrize("dtype,tol", [(np.float16, 3e-2), (bf16, 1e-1)])
@pytest.mark.parametrize("case", [CASES[0], CASES[5], CASES[7]], ids=["1d", "2d-fg", "2d-bg"])
def test_conv_general_dilated_low_precision_floats(rng, case, dtype, tol):
  lhs, rhs = make(rng, case, dtype)
  out = run(case, lhs, rhs)
  assert out.dtype == np.dtype(dtype)
  np.testing.assert_allclose(np.asarray(out, np.float64), run(case, lhs, rhs, fn=conv_ref),
                             rtol=tol, atol=tol * 4)
  wide = run(case, lhs, rhs, preferred_element_type=np.float32)
  assert wide.dtype == np.float32
  np.testing.assert_allclose(np.asarray(wide), run(case, lhs, rhs, fn=conv_ref), rtol=1e-2,
                             atol=1e-2)


@pytest.mark.parametrize("case", [CASES[1], CASES[5], CASES[6], CASES[11]], ids=str)
def test_conv_general_dilated_integers_exact(rng, case):
  lhs, rhs = make(rng, case, np.int32)
  out = run(case, lhs, rhs)
  assert out.dtype == np.int32
  np.testing.assert_array_equal(np.asarray(out), run(case, lhs, rhs, fn=conv_ref))
  # int8 inputs accumulated in int32 do not wrap.
  lhs8, rhs8 = (lhs * 30).astype(np.int8), (rhs * 30).astype(np.int8)
  out = run(case, lhs8, rhs8, preferred_element_type=np.int32)
  assert out.dtype == np.int32
  np.testing.assert_array_equal(np.asarray(out),
                                run(case, lhs8.astype(np.int64), rhs8.astype(np.int64),
                                    fn=conv_ref))


@pytest.mark.parametrize("case", [CASES[0], CASES[5], CASES[6]], ids=str)
def test_conv_general_dilated_complex64(rng, case):
  lhs, rhs = make(rng, case, np.complex64)
  out = run(case, lhs, rhs, precision="highest")
  assert out.dtype == np.complex64
  np.testing.assert_allclose(np.asarray(out), run(case, lhs, rhs, fn=conv_ref), rtol=1e-4,
                             atol=1e-4)


def test_conv_general_dilated_bool_and_int_to_float(rng):
  lhs, rhs = rand(rng, (2, 3, 6), np.bool_), rand(rng, (2, 3, 3), np.bool_)
  out = lax_conv.conv_general_dilated(lhs, rhs, (1,), "VALID")
  assert out.dtype == np.bool_
  counts = conv_ref(lhs.astype(np.int64), rhs.astype(np.int64), (1,), "VALID")
  np.testing.assert_array_equal(np.asarray(out), counts > 0)
  ints = lax_conv.conv_general_dilated(lhs.astype(np.int16), rhs.astype(np.int16), (1,), "VALID",
                                       preferred_element_type=np.float32)
  assert ints.dtype == np.float32
  np.testing.assert_array_equal(np.asarray(ints), counts)


@pytest.mark.parametrize("case", CASES[:13:2], ids=IDS[:13:2])
def test_conv_general_dilated_jit_matches_eager(rng, case):
  lhs, rhs = make(rng, case)
  f = lambda x, y: run(case, x, y, precision="highest")
  eager = f(lhs, rhs)
  jitted = xjax.jit(f)(lhs, rhs)
  np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager), rtol=1e-6, atol=1e-6)
  aval = xjax.eval_shape(f, lhs, rhs)
  assert (aval.shape, aval.dtype) == (eager.shape, eager.dtype)


VMAP_CASES = [CASES[0], CASES[3], CASES[5], CASES[6], CASES[8], CASES[12], CASES[13]]


@pytest.mark.parametrize("axes", [(0, None), (None, 0), (0, 0), (2, 1), (None, 2), (1, None)])
@pytest.mark.parametrize("case", VMAP_CASES, ids=str)
def test_conv_general_dilated_vmap_matches_loop(rng, case, axes):
  size = 3
  lhs_shape, rhs_shape = case[0], case[1]
  batched = lambda shape, ax: shape if ax is None else (*shape[:ax], size, *shape[ax:])
  lhs = rand(rng, batched(lhs_shape, axes[0]))
  rhs = rand(rng, batched(rhs_shape, axes[1]))
  f = lambda x, y: run(case, x, y, precision="highest")
  out = xjax.vmap(f, in_axes=axes)(lhs, rhs)
  take = lambda x, ax, i: x if ax is None else np.take(x, i, axis=ax)
  expected = np.stack([run(case, take(lhs, axes[0], i), take(rhs, axes[1], i), fn=conv_ref)
                       for i in range(size)])
  np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-5)


def test_conv_general_dilated_vmap_of_size_zero(rng):
  f = lambda x, y: lax_conv.conv_general_dilated(x, y, (1,), "SAME")
  out = xjax.vmap(f, in_axes=(0, None))(np.zeros((0, 2, 3, 5), np.float32),
                                         rand(rng, (4, 3, 2)))
  assert out.shape == (0, 2, 4, 5) and out.dtype == np.float32


GRAD_CASES = [
    ((2, 3, 6), (2, 3, 3), (2,), "SAME", None, (2,), None, 1, 1),
    ((2, 4, 5), (4, 2, 2), (1,), [(1, 2)], (2,), None, None, 2, 1),
    ((4, 2, 5), (4, 2, 3), (2,), "VALID", None, None, None, 1, 2),
    ((1, 5, 4, 2), (2, 3, 2, 2), (2, 1), "SAME", None, (1, 2), ("NHWC", "HWIO", "NHWC"), 1, 1),
    ((2, 2, 4, 3), (4, 1, 2, 2), (1, 2), [(1, 0), (0, 1)], (1, 2), (2, 1),
     ("NCHW", "OIHW", "NHWC"), 2, 1),
    ((1, 2, 3, 3, 2), (2, 2, 2, 1, 2), (1, 1, 2), "VALID", None, None, None, 1, 1),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[f"g{i}" for i in range(len(GRAD_CASES))])
def test_conv_general_dilated_grads_match_finite_differences(rng, x64, case):
  lhs, rhs = make(rng, case, np.float64)
  f = lambda x, y: run(case, x, y)
  check_grads(f, (lhs, rhs), order=2, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("case", GRAD_CASES[:5], ids=[f"g{i}" for i in range(5)])
def test_conv_general_dilated_vjp_is_adjoint_of_reference(rng, x64, case):
  # <ct, conv(x, y)> is linear in each argument: the vjp must be its exact adjoint.
  lhs, rhs = make(rng, case, np.float64)
  out, vjp = xjax.vjp(lambda x, y: run(case, x, y), lhs, rhs)
  ct = rand(rng, out.shape, np.float64)
  ct_lhs, ct_rhs = vjp(ct)
  inner = lambda a, b: float(np.sum(np.asarray(a) * np.asarray(b)))
  ref_out = run(case, lhs, rhs, fn=conv_ref)
  np.testing.assert_allclose(inner(ct_lhs, lhs), inner(ct, ref_out), rtol=1e-10)
  np.testing.assert_allclose(inner(ct_rhs, rhs), inner(ct, ref_out), rtol=1e-10)
  dx = rand(rng, lhs.shape, np.float64)
  np.testing.assert_allclose(inner(ct_lhs, dx), inner(ct, run(case, dx, rhs, fn=conv_ref)),
                             rtol=1e-10)


def test_conv_general_dilated_grad_of_vmap_and_vmap_of_grad(rng, x64):
  case = GRAD_CASES[1]
  lhs, rhs = rand(rng, (3, *case[0]), np.float64), make(rng, case, np.float64)[1]
  loss = lambda x, y: xjax.numpy.sum(run(case, x, y) ** 2)
  per_example = xjax.vmap(xjax.grad(loss, argnums=1), in_axes=(0, None))(lhs, rhs)
  loop = np.stack([np.asarray(xjax.grad(loss, argnums=1)(lhs[i], rhs)) for i in range(3)])
  np.testing.assert_allclose(np.asarray(per_example), loop, rtol=1e-10)
  check_grads(lambda x, y: xjax.vmap(lambda a: run(case, a, y))(x), (lhs, rhs), order=1,
              modes=("rev",), atol=1e-5, rtol=1e-5)


# ----------------------------------------------------------------------------
# Wrappers


def test_conv_and_conv_with_general_padding(rng):
  lhs, rhs = rand(rng, (2, 3, 7, 6)), rand(rng, (4, 3, 3, 2))
  out = lax_conv.conv(lhs, rhs, (2, 1), "SAME", precision="highest")
  np.testing.assert_allclose(np.asarray(out), conv_ref(lhs, rhs, (2, 1), "SAME"), rtol=1e-5,
                             atol=1e-5)
  out = lax_conv.conv_with_general_padding(lhs, rhs, (1, 2), [(1, 2), (0, 1)], (2, 1), (1, 2),
                                           precision="highest")
  np.testing.assert_allclose(np.asarray(out),
                             conv_ref(lhs, rhs, (1, 2), [(1, 2), (0, 1)], (2, 1), (1, 2)),
                             rtol=1e-5, atol=1e-5)
  out = lax_conv.conv_with_general_padding(lhs, rhs, (1, 1), "VALID", None, None)
  assert out.shape == (2, 4, 5, 5)


def conv_transpose_ref(x, w, strides):
  """The gradient of a VALID forward conv (NHWC / HWIO): scatter-add of each input times w.

  `w` is the forward kernel, (*window, out, in) as `transpose_kernel=True` expects it.
  """
  n, *sizes, _ = x.shape
  window = w.shape[:-2]
  out = np.zeros((n, *[(s - 1) * st + k for s, st, k in zip(sizes, strides, window)],
                  w.shape[-2]), np.float64)
  for pos in itertools.product(*map(range, sizes)):
    for off in itertools.product(*map(range, window)):
      at = tuple(p * st + o for p, st, o in zip(pos, strides, off))
      out[(slice(None), *at)] += x[(slice(None), *pos)] @ w[off].T
  return out


@pytest.mark.parametrize("shape,window,strides", [((2, 5, 3), (3,), (2,)),
                                                  ((1, 4, 3, 2), (3, 2), (2, 1)),
                                                  ((1, 3, 2, 2, 2), (2, 2, 2), (1, 2, 1))])
def test_conv_transpose_kernel_is_gradient_of_valid_conv(rng, shape, window, strides):
  x = rand(rng, shape)
  w = rand(rng, (*window, 4, shape[-1]))
  out = lax_conv.conv_transpose(x, w, strides, "VALID", transpose_kernel=True,
                                precision="highest")
  np.testing.assert_allclose(np.asarray(out), conv_transpose_ref(x, w, strides), rtol=1e-5,
                             atol=1e-5)


@pytest.mark.parametrize("padding", ["SAME", "VALID", [(1, 2), (0, 1)]])
@pytest.mark.parametrize("consistent", [False, True])
def test_conv_transpose_equals_dilated_conv(rng, padding, consistent):
  x, w = rand(rng, (2, 5, 4, 3)), rand(rng, (3, 2, 3, 4))
  dn = ("NHWC", "HWIO", "NHWC")
  out = lax_conv.conv_transpose(x, w, (2, 3), padding, dimension_numbers=dn,
                                precision="highest", use_consistent_padding=consistent)
  if consistent or isinstance(padding, str):
    per_axis = [padding] * 2 if isinstance(padding, str) else padding
    pads = [lax_conv._conv_transpose_padding(k, s, tuple(p) if isinstance(p, list) else p)
            for k, s, p in zip((3, 2), (2, 3), per_axis)]
  else:
    pads = padding
  expected = conv_ref(x, w, (1, 1), pads, (2, 3), None, dn)
  np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-5)
  if isinstance(padding, str):
    assert out.shape == lax_conv.conv_transpose_shape_tuple(x.shape, w.shape, (2, 3), padding, dn)


def test_conv_transpose_default_layouts(rng):
  for lhs_shape, rhs_shape, strides in [((2, 3), (3, 4), ()), ((2, 5, 3), (2, 3, 4), (2,)),
                                         ((1, 3, 3, 2, 3), (2, 1, 2, 3, 2), (1, 2, 1))]:
    out = lax_conv.conv_transpose(rand(rng, lhs_shape), rand(rng, rhs_shape), strides, "SAME")
    assert out.shape == (lhs_shape[0], *[s * st for s, st in zip(lhs_shape[1:-1], strides)],
                         rhs_shape[-1])


def test_conv_general_dilated_patches_are_windows(rng):
  x = rand(rng, (2, 3, 5, 4))
  out = lax_conv.conv_general_dilated_patches(x, (2, 3), (1, 1), "VALID")
  assert out.shape == (2, 3 * 6, 4, 2)
  expected = np.zeros(out.shape, np.float32)
  for c, dh, dw in itertools.product(range(3), range(2), range(3)):
    expected[:, c * 6 + dh * 3 + dw] = x[:, c, dh:dh + 4, dw:dw + 2]
  np.testing.assert_array_equal(np.asarray(out), expected)
  # Other layouts: the patch axis sits where the output spec puts 'C'.
  nhwc = lax_conv.conv_general_dilated_patches(np.moveaxis(x, 1, -1), (2, 3), (1, 1), "VALID",
                                               dimension_numbers=("NHWC", "OIHW", "NHWC"))
  np.testing.assert_array_equal(np.asarray(nhwc), np.moveaxis(expected, 1, -1))


def test_conv_general_dilated_local_matches_unshared_reference(rng):
  x = rand(rng, (2, 3, 5, 4))
  patches = lax_conv.conv_general_dilated_patches(x, (2, 2), (1, 2), "SAME")
  _, p, oh, ow = patches.shape
  # rhs "OIHW": kernel[o, patch, h, w] for output position (h, w).
  w = rand(rng, (5, p, oh, ow))
  out = lax_conv.conv_general_dilated_local(x, w, (1, 2), "SAME", (2, 2), precision="highest")
  expected = np.einsum("nphw,ophw->nohw", np.asarray(patches), w)
  np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-5)
  with pytest.raises(ValueError, match="Unsupported precision"):
    lax_conv.conv_general_dilated_local(x, w, (1, 2), "SAME", (2, 2), precision="BF16_BF16_F32")


# ----------------------------------------------------------------------------
# Shape helpers (values printed by real JAX)


def test_shape_helpers_match_jax():
  assert lax_conv.conv_shape_tuple((2, 3, 9, 8), (4, 3, 3, 2), (2, 1), "SAME") == (2, 4, 5, 8)
  assert lax_conv.conv_shape_tuple((6, 3, 9, 8), (4, 3, 3, 2), (2, 3), [(1, 2), (0, -1)],
                                   batch_group_count=2) == (3, 4, 5, 2)
  assert lax_conv.conv_general_shape_tuple((2, 9, 8, 3), (3, 2, 3, 4), (2, 1), "VALID",
                                           ("NHWC", "HWIO", "NHWC")) == (2, 4, 7, 4)
  assert lax_conv.conv_transpose_shape_tuple((2, 9, 8, 3), (3, 2, 3, 4), (2, 1), "SAME",
                                             ("NHWC", "HWIO", "NHWC")) == (2, 18, 8, 4)
  assert lax_conv.conv_transpose_shape_tuple((2, 9, 8, 3), (3, 2, 3, 4), (2, 3), "VALID",
                                             ("NHWC", "HWIO", "NCHW")) == (2, 4, 19, 24)
  assert lax_conv.conv_general_permutations(("NWHC", "WHIO", "CNHW")) == (
      (0, 3, 1, 2), (3, 2, 0, 1), (1, 0, 3, 2))
  assert repr(lax_conv.conv_dimension_numbers((1, 2, 3), (1, 2, 3), None)) == (
      "ConvDimensionNumbers(lhs_spec=(0, 1, 2), rhs_spec=(0, 1, 2), out_spec=(0, 1, 2))")
  dn = lax_conv.conv_dimension_numbers((1,) * 5, (1,) * 5, ("NDHWC", "DHWIO", "NCDHW"))
  assert dn == lax_conv.ConvDimensionNumbers((0, 4, 1, 2, 3), (4, 3, 0, 1, 2), (0, 1, 2, 3, 4))
  assert lax_conv.conv_dimension_numbers(None, None, dn) is dn


# ----------------------------------------------------------------------------
# Printed jaxprs and StableHLO (recorded from real JAX 0.10.2)

JAXPR_CONV = """{ lambda ; a:bf16[2,8,8,3] b:bf16[3,3,3,4]. let
    c:f32[2,3,10,4] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 0), (2, 2))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
      preferred_element_type=float32
      rhs_dilation=(2, 1)
      window_strides=(2, 1)
    ] a b
  in (c,) }"""

JAXPR_CONV_TRANSPOSE = """{ lambda ; a:f32[2,8,8,3] b:f32[3,3,4,3]. let
    c:f32[3,3,4,3] = rev[dimensions=(0,)] b
    d:f32[3,3,4,3] = rev[dimensions=(1,)] c
    e:f32[3,3,3,4] = transpose[permutation=(0, 1, 3, 2)] d
    f:f32[2,16,16,4] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
      feature_group_count=1
      lhs_dilation=(2, 2)
      out_sharding=None
      padding=((2, 1), (2, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a e
  in (f,) }"""

JAXPR_GRAD_GROUPED = """{ lambda ; a:f32[2,6,7] b:f32[4,3,3]. let
    c:f32[2,4,3] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2), rhs_spec=(0, 1, 2), out_spec=(0, 1, 2))
      feature_group_count=2
      lhs_dilation=(1,)
      out_sharding=None
      padding=((1, 2),)
      precision=None
      preferred_element_type=None
      rhs_dilation=(2,)
      window_strides=(2,)
    ] a b
    _:f32[] = reduce_sum[axes=(0, 1, 2) out_sharding=None] c
    d:f32[2,4,3] = broadcast_in_dim 1.0:f32[]
    e:f32[4,3,3] = conv_general_dilated[
      batch_group_count=2
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(1, 0, 2), rhs_spec=(1, 0, 2), out_spec=(1, 0, 2))
      feature_group_count=1
      lhs_dilation=(1,)
      out_sharding=None
      padding=((1, 1),)
      precision=None
      preferred_element_type=None
      rhs_dilation=(2,)
      window_strides=(2,)
    ] a d
    f:f32[2,2,3,3] = reshape[
      dimensions=None
      new_sizes=(2, 2, 3, 3)
      sharding=None
    ] b
    g:f32[2,6,3] = reshape[
      dimensions=(1, 0, 2, 3)
      new_sizes=(2, 6, 3)
      sharding=None
    ] f
    h:f32[2,6,3] = rev[dimensions=(2,)] g
    i:f32[2,6,7] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2), rhs_spec=(1, 0, 2), out_spec=(0, 1, 2))
      feature_group_count=2
      lhs_dilation=(2,)
      out_sharding=None
      padding=((3, 3),)
      precision=None
      preferred_element_type=None
      rhs_dilation=(2,)
      window_strides=(1,)
    ] d h
  in (i, e) }"""

STABLEHLO_CONV = """%0 = "stablehlo.convolution"(%arg0, %arg1) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<[[1, 0], [2, 2]]> : tensor<2x2xi64>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>], rhs_dilation = array<i64: 2, 1>, window_reversal = array<i1: false, false>, window_strides = array<i64: 2, 1>}> : (tensor<2x8x8x3xbf16>, tensor<3x3x3x4xbf16>) -> tensor<2x3x10x4xf32>"""


def test_conv_general_dilated_jaxpr_matches_jax():
  f = lambda x, w: lax_conv.conv_general_dilated(
      x, w, (2, 1), ((1, 0), (2, 2)), (1, 1), (2, 1), ("NHWC", "HWIO", "NHWC"),
      precision="highest", preferred_element_type=np.float32)
  args = (np.ones((2, 8, 8, 3), bf16), np.ones((3, 3, 3, 4), bf16))
  assert str(xjax.make_jaxpr(f)(*args)) == JAXPR_CONV
  text = xjax.jit(f).lower(*args).compiler_ir()
  assert STABLEHLO_CONV in [line.strip() for line in text.splitlines()]


def test_conv_transpose_jaxpr_matches_jax():
  f = lambda x, w: lax_conv.conv_transpose(x, w, (2, 2), "SAME", transpose_kernel=True)
  args = (np.ones((2, 8, 8, 3), np.float32), np.ones((3, 3, 4, 3), np.float32))
  assert str(xjax.make_jaxpr(f)(*args)) == JAXPR_CONV_TRANSPOSE


def test_conv_grad_jaxpr_matches_jax():
  f = lambda x, w: lax_conv.conv_general_dilated(x, w, (2,), [(1, 2)], (1,), (2,),
                                                 feature_group_count=2).sum()
  args = (np.ones((2, 6, 7), np.float32), np.ones((4, 3, 3), np.float32))
  assert str(xjax.make_jaxpr(xjax.grad(f, argnums=(0, 1)))(*args)) == JAXPR_GRAD_GROUPED


# ----------------------------------------------------------------------------
# Errors (classes and messages as JAX raises them)

X = np.ones((2, 3, 8, 8), np.float32)
W = np.ones((4, 3, 3, 3), np.float32)
ERRORS = [
    (lambda: lax_conv.conv_general_dilated(X, W.astype(np.float16), (1, 1), "SAME"), TypeError,
     "lax.conv_general_dilated requires arguments to have the same dtypes, got float32, "
     "float16."),
    (lambda: lax_conv.conv_general_dilated(X, W[0], (1, 1), "SAME"), TypeError,
     "convolution requires lhs and rhs ndim to be equal, got 4 and 3."),
    (lambda: lax_conv.conv_general_dilated(X, W, (1,), "SAME"), ValueError,
     "conv_general_dilated window and window_strides must have the same number of dimensions, "
     "but got 2 and 1"),
    (lambda: lax_conv.conv_general_dilated(X, W, (1, 1), "FOO"), RuntimeError,
     "Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got FOO."),
    (lambda: lax_conv.conv_general_dilated(X, W, (1, 1), [(1, 1)]), TypeError,
     "Wrong number of explicit pads for convolution: expected 2, got 1."),
    (lambda: lax_conv.conv_general_dilated(X, W, (1, 1), [1, 2]), ValueError,
     "padding argument to conv_general_dilated should be a string or a sequence of (low, high) "
     "pairs, got [1, 2]"),
    (lambda: lax_conv.conv_general_dilated(X, W, (1, 1), "SAME", feature_group_count=2),
     ValueError, "conv_general_dilated feature_group_count must divide lhs feature dimension "
     "size, but 2 does not divide 3."),
    (lambda: lax_conv.conv_general_dilated(X, W, (1, 1), "SAME", feature_group_count=0),
     ValueError, "conv_general_dilated feature_group_count must be a positive integer, got 0."),
    (lambda: lax_conv.conv_general_dilated(X, W, (1, 1), "SAME", batch_group_count=3),
     ValueError, "conv_general_dilated batch_group_count must divide lhs batch dimension size, "
     "but 3 does not divide 2."),
    (lambda: lax_conv.conv_general_dilated(X, W, (1, 1), "SAME", lhs_dilation=(2, 2)),
     ValueError, "String padding is not implemented for transposed convolution using this op. "
     "Please either exactly specify the required padding or use conv_transpose."),
    (lambda: lax_conv.conv_general_dilated(X, W, (1, 1), "SAME", rhs_dilation=(0, 2)), TypeError,
     "All dilations must be positive, got (0, 2)."),
    (lambda: lax_conv.conv_general_dilated(X, W, (1, 1), "VALID",
                                           dimension_numbers=("NCHW", "OIHW")), TypeError,
     "convolution dimension_numbers list/tuple must be length 3, got 2."),
    (lambda: lax_conv.conv_general_dilated(X, W, (1, 1), "VALID",
                                           dimension_numbers=("NCHW", "OIHW", "NCHX")), TypeError,
     "convolution dimension_numbers elements must each have the same set of spatial "
     "characters, got ('NCHW', 'OIHW', 'NCHX')."),
    (lambda: lax_conv.conv_general_dilated(X, W, (1, 1), "VALID",
                                           dimension_numbers=("NCHW", "OIHW", "NCH")), TypeError,
     "convolution dimension_numbers[2] must have len equal to the ndim of lhs and rhs, got 3 for "
     "lhs and rhs shapes (2, 3, 8, 8) and (4, 3, 3, 3)."),
    (lambda: lax_conv.conv_general_dilated(X, W, (1, 1), "VALID",
                                           dimension_numbers=("NCHH", "OIHW", "NCHW")), TypeError,
     "convolution dimension_numbers[0] cannot have duplicate characters, got NCHH."),
    (lambda: lax_conv.conv_general_dilated(X, W, (1, 1), "VALID",
                                           dimension_numbers=("NNHW", "OIHW", "NCHW")), TypeError,
     "convolution dimension_numbers[0] must contain the characters 'N' and 'C' exactly once, "
     "got NNHW."),
    (lambda: lax_conv.conv_general_dilated(X, W, (1, 1), "VALID", dimension_numbers=5), TypeError,
     "convolution dimension_numbers must be tuple/list or None, got <class 'int'>."),
    (lambda: lax_conv.conv_general_dilated(X, W, (1, 1), "VALID",
                                           preferred_element_type=np.float16), TypeError,
     "`preferred_element_type` must not be narrower than the original type."),
    (lambda: lax_conv.conv_general_dilated(X.astype(np.int32), W.astype(np.int32), (1, 1),
                                           "VALID", preferred_element_type=np.uint32), TypeError,
     "`preferred_element_type` must have the same signedness as the original type."),
    (lambda: lax_conv.conv_general_dilated(X, W, (1, 1), "VALID",
                                           preferred_element_type=np.int32), TypeError,
     "Input type is incompatible with `preferred_element_type`."),
    (lambda: lax_conv.conv_general_dilated(X[:, :2], W, (1, 1), "VALID"), ValueError,
     "conv_general_dilated lhs feature dimension size divided by feature_group_count must equal "
     "the rhs input feature dimension size, but 2 // 1 != 3."),
    (lambda: lax_conv.conv_general_dilated(X, W[:3], (1, 1), "VALID", batch_group_count=2),
     ValueError, "conv_general_dilated rhs output feature dimension size must be a multiple of "
     "batch_group_count, but 3 is not a multiple of 2."),
    (lambda: lax_conv.conv_general_dilated(X, W, (1, 1), ((-12, 0), (0, 0))), ValueError,
     "Negative padding is larger than the size of the corresponding dimension"),
    (lambda: lax_conv.conv_general_dilated(X, W, (0, 1), "VALID"), ValueError,
     "window_strides must be positive"),
    (lambda: lax_conv.conv_transpose(X, W, (1, 1), "FOO"), RuntimeError,
     "Unrecognized padding type"),
]


@pytest.mark.parametrize("call,cls,message", ERRORS, ids=[f"e{i}" for i in range(len(ERRORS))])
def test_conv_errors_match_jax(call, cls, message):
  with pytest.raises(cls) as info:
    call()
  assert message in str(info.value)


def test_conv_abstract_eval_is_not_weak_for_arrays_and_checks_under_jit():
  aval = xjax.eval_shape(lambda x, w: lax_conv.conv(x, w, (1, 1), "SAME"), X, W)
  assert (aval.shape, aval.dtype) == ((2, 4, 8, 8), np.float32)
  with pytest.raises(ValueError, match="feature_group_count must divide"):
    xjax.jit(lambda x, w: lax_conv.conv_general_dilated(x, w, (1, 1), "SAME",
                                                        feature_group_count=2))(X, W)
  assert not core.get_aval(lax_conv.conv(X, W, (1, 1), "SAME")).weak_type
