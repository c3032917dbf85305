"""Windowed reductions against a NumPy reference and against real JAX's printed jaxprs.

The reference dilates and pads the operand with the initial value, cuts every
(dilated) window out with `sliding_window_view`, and reduces it. Derivatives
are checked against finite differences (order 2, forward and reverse, for the
sum, max and min pools); batching against a Python loop; the printed jaxprs
against the text real JAX 0.10.2 prints; errors against JAX's classes and
messages.
"""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src import core
from xjax._src.lax import elementwise as ew
from xjax._src.lax import windowed_reductions as wr
from xjax.test_util import check_grads

# ----------------------------------------------------------------------------
# The NumPy reference


def np_padding(shape, window, strides, padding, window_dilation):
  if not isinstance(padding, str):
    return [tuple(p) for p in padding]
  window = [1 + (w - 1) * d for w, d in zip(window, window_dilation)]
  pads = []
  for size, w, s in zip(shape, window, strides):
    total = max((-(-size // s) - 1) * s + w - size, 0) if padding != "VALID" else 0
    low = total // 2 if padding in ("SAME", "VALID") else total - total // 2
    pads.append((low, total - low))
  return pads


def np_reduce_window(x, init, reduce, window, strides, padding, base_dilation, window_dilation):
  """`reduce(windows, axes)` of each window of x dilated and padded with `init`."""
  x = np.asarray(x)
  nd = x.ndim
  pads = np_padding(x.shape, window, strides, padding, window_dilation)
  dilated = np.full([max(0, 1 + (d - 1) * b) for d, b in zip(x.shape, base_dilation)], init,
                    x.dtype)
  dilated[tuple(slice(None, None, b) for b in base_dilation)] = x
  if nd == 0:  # one window holding the one element
    return x.copy()
  padded = np.pad(dilated, [(max(lo, 0), max(hi, 0)) for lo, hi in pads],
                  constant_values=np.asarray(init, x.dtype))
  padded = padded[tuple(slice(max(-lo, 0), padded.shape[i] - max(-hi, 0))
                        for i, (lo, hi) in enumerate(pads))]
  span = [1 + (w - 1) * d for w, d in zip(window, window_dilation)]
  out_shape = [max(0, (p - s) // st + 1) for p, s, st in zip(padded.shape, span, strides)]
  if 0 in out_shape:
    return np.zeros(out_shape, x.dtype)
  views = np.lib.stride_tricks.sliding_window_view(padded, span)
  views = views[tuple(slice(None, None, s) for s in strides)
                + tuple(slice(None, None, d) for d in window_dilation)]
  return reduce(views, tuple(range(nd, 2 * nd))).astype(x.dtype)


MONOIDS = {
    "sum": (lax.add, lambda dt: 0, lambda v, a: np.sum(v, a)),
    "max": (lax.max, lambda dt: -np.inf if dt.kind == "f" else
            (False if dt == np.bool_ else np.iinfo(dt).min), lambda v, a: np.max(v, a)),
    "min": (lax.min, lambda dt: np.inf if dt.kind == "f" else
            (True if dt == np.bool_ else np.iinfo(dt).max), lambda v, a: np.min(v, a)),
}

# (shape, window_dimensions, window_strides, padding, base_dilation, window_dilation)
CASES = [
    ((7,), (3,), (1,), "VALID", (1,), (1,)),
    ((7,), (2,), (2,), "SAME", (2,), (1,)),
    ((6,), (2,), (3,), ((1, 2),), (1,), (2,)),
    ((4, 5), (2, 2), (1, 1), "VALID", (1, 1), (1, 1)),
    ((4, 5), (2, 3), (2, 1), "SAME", (1, 1), (1, 1)),
    ((4, 5), (3, 2), (1, 2), "SAME_LOWER", (2, 1), (1, 2)),
    ((4, 5), (2, 2), (2, 2), ((1, 0), (2, 1)), (1, 2), (2, 1)),
    ((3, 4, 5), (2, 1, 3), (1, 2, 1), ((0, 1), (1, 1), (0, 0)), (1, 1, 2), (1, 1, 1)),
    ((2, 3, 4, 5), (1, 2, 2, 2), (1, 1, 2, 2), "SAME", (1, 1, 1, 1), (1, 1, 1, 2)),
    ((2, 3, 4, 5), (1, 3, 2, 1), (1, 1, 1, 1), ((0, 0), (-1, 1), (1, 0), (0, 0)),
     (1, 2, 1, 1), (1, 1, 1, 1)),
    ((3, 2), (5, 1), (1, 1), "VALID", (1, 1), (1, 1)),  # the window does not fit: empty
    ((), (), (), "VALID", (), ()),
]
CASE_IDS = [f"case{i}" for i in range(len(CASES))]


def rand(rng, shape, dtype):
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return rng.random(shape) < 0.5
  if dtype.kind == "i":
    return rng.integers(-20, 20, shape).astype(dtype)
  return rng.standard_normal(shape).astype(dtype)


def distinct(rng, shape, dtype=np.float64):
  """Values without ties (well apart), so max and min pools are differentiable."""
  n = int(np.prod(shape, dtype=np.int64))
  return (rng.permutation(n).reshape(shape) + rng.uniform(0.1, 0.4, shape)).astype(dtype)


def reference(name, x, case):
  _, window, strides, padding, base, wdil = case
  _, identity, reduce = MONOIDS[name]
  return np_reduce_window(x, identity(x.dtype), reduce, window, strides, padding, base, wdil)


def run(name, x, case, jit=False):
  _, window, strides, padding, base, wdil = case
  op, identity, _ = MONOIDS[name]
  init = np.asarray(identity(np.dtype(x.dtype)), x.dtype)
  fun = lambda x: wr.reduce_window(x, init, op, window, strides, padding, base, wdil)
  return (xjax.jit(fun) if jit else fun)(x)


# ----------------------------------------------------------------------------
# Values


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("name", ["sum", "max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_monoid_reduce_window_matches_numpy(name, dtype, case, rng):
  x = rand(rng, case[0], dtype)
  out = run(name, x, case)
  expected = reference(name, x, case)
  assert out.dtype == np.dtype(dtype) and out.shape == expected.shape
  np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)
  aval = core.get_aval(out)
  assert xjax.eval_shape(lambda x: run(name, x, case), x).shape == aval.shape


@pytest.mark.parametrize("name", ["max", "min"])
def test_bool_max_and_min_pools_match_numpy(name, rng):
  for case in (CASES[4], CASES[7]):
    x = rand(rng, case[0], np.bool_)
    out = run(name, x, case)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(out), reference(name, x, case))


@pytest.mark.parametrize("name", ["sum", "max", "min"])
def test_float64_pools_match_numpy_with_x64(name, rng, x64):
  for case in (CASES[5], CASES[8]):
    x = rand(rng, case[0], np.float64)
    out = run(name, x, case)
    assert out.dtype == np.float64
    np.testing.assert_allclose(np.asarray(out), reference(name, x, case), rtol=1e-13)


@pytest.mark.parametrize("case", [CASES[2], CASES[6], CASES[8]], ids=["r1", "r2", "r4"])
def test_generic_reduce_window_matches_numpy(case, rng):
  shape, window, strides, padding, base, wdil = case
  x = rng.uniform(0.5, 1.5, shape).astype(np.float32)
  out = wr.reduce_window(x, np.float32(1), lax.mul, window, strides, padding, base, wdil)
  expected = np_reduce_window(x, 1, lambda v, a: np.prod(v, a), window, strides, padding,
                              base, wdil)
  np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5)


def test_variadic_reduce_window_keeps_the_pytree_and_matches_numpy(rng):
  """A (value, index) argmax pool over a pytree of two operands."""
  x = rng.permutation(20).reshape(4, 5).astype(np.float32)
  idx = np.arange(20, dtype=np.int32).reshape(4, 5)

  def argmax_pair(a, b):
    pick = ew.ge(a["v"], b["v"])
    return {"v": ew.select_n(pick, b["v"], a["v"]), "i": ew.select_n(pick, b["i"], a["i"])}

  out = wr.reduce_window({"v": x, "i": idx}, {"v": -np.inf, "i": np.int32(-1)}, argmax_pair,
                         (2, 3), (1, 2), "SAME")
  pads = np_padding(x.shape, (2, 3), (1, 2), "SAME", (1, 1))
  values = np_reduce_window(x, -np.inf, lambda v, a: np.max(v, a), (2, 3), (1, 2), pads,
                            (1, 1), (1, 1))
  np.testing.assert_array_equal(np.asarray(out["v"]), values)
  np.testing.assert_array_equal(np.asarray(x).ravel()[np.asarray(out["i"])], values)


def test_monoid_detection_needs_the_identity(rng):
  """add from 0 and max/min from their identities become the monoid primitives; another
  init value keeps the generic primitive, and XLA combines it in once per window."""
  x = rng.standard_normal((4, 5)).astype(np.float32)

  def prims(f):
    return [e.primitive.name for e in xjax.make_jaxpr(f)(x).jaxpr.eqns]

  assert prims(lambda x: wr.reduce_window(x, 0.0, lax.add, (2, 2))) == ["reduce_window_sum"]
  assert prims(lambda x: wr.reduce_window(x, -np.inf, lax.max, (2, 2))) == ["reduce_window_max"]
  assert prims(lambda x: wr.reduce_window(x, np.inf, lax.min, (2, 2))) == ["reduce_window_min"]
  assert prims(lambda x: wr.reduce_window(x, 1.0, lax.add, (2, 2))) == ["reduce_window"]
  assert prims(lambda x: wr.reduce_window(x, 0.0, lax.max, (2, 2))) == ["reduce_window"]
  out = wr.reduce_window(x, 1.0, lax.add, (2, 2), (1, 1), ((1, 0), (0, 0)))
  expected = np_reduce_window(x, 0, lambda v, a: np.sum(v, a), (2, 2), (1, 1),
                              ((1, 0), (0, 0)), (1, 1), (1, 1))
  np.testing.assert_allclose(np.asarray(out), expected + 1, rtol=1e-5)


def test_reduce_window_shape_tuple():
  assert wr.reduce_window_shape_tuple((4, 5), (2, 2), (1, 2), ((0, 0), (1, 1))) == (3, 3)
  assert wr.reduce_window_shape_tuple((4, 5), (2, 2), (1, 1), ((0, 0), (0, 0)),
                                      (2, 1), (1, 2)) == (6, 3)
  assert wr.reduce_window_shape_tuple((3,), (5,), (1,), ((0, 0),)) == (0,)


@pytest.mark.parametrize("name", ["sum", "max", "generic"])
def test_jit_matches_eager(name, rng):
  case = CASES[6]
  x = rand(rng, case[0], np.float32)
  if name == "generic":
    fun = lambda x: wr.reduce_window(x, 1.0, lax.mul, *case[1:])
    np.testing.assert_allclose(np.asarray(xjax.jit(fun)(x)), np.asarray(fun(x)), rtol=1e-6)
  else:
    np.testing.assert_array_equal(np.asarray(run(name, x, case, jit=True)),
                                  np.asarray(run(name, x, case)))


# ----------------------------------------------------------------------------
# The select-and-scatter family


def _np_select_and_scatter_add(source, operand, window, strides, padding, pick):
  """Adds source[w] at the position `pick` (argmax/argmin) chooses in window w (first wins)."""
  fill = -np.inf if pick is np.argmax else np.inf
  padded = np.pad(operand, padding, constant_values=fill)
  out = np.zeros(padded.shape, source.dtype)
  for w in np.ndindex(*source.shape):
    corner = [i * s for i, s in zip(w, strides)]
    block = padded[tuple(slice(c, c + k) for c, k in zip(corner, window))]
    at = np.unravel_index(pick(block), block.shape)
    out[tuple(c + a for c, a in zip(corner, at))] += source[w]
  return out[tuple(slice(lo, lo + d) for (lo, _), d in zip(padding, operand.shape))]


@pytest.mark.parametrize("prim", [ew.ge_p, ew.le_p], ids=["ge", "le"])
def test_select_and_scatter_add_and_gather_add_match_numpy(prim, rng):
  operand = distinct(rng, (5, 6), np.float32)
  window, strides, padding = (2, 3), (2, 2), ((1, 0), (0, 1))
  out_shape = wr.reduce_window_shape_tuple(operand.shape, window, strides, padding)
  source = rng.standard_normal(out_shape).astype(np.float32)
  pick = np.argmax if prim is ew.ge_p else np.argmin
  scattered = wr._select_and_scatter_add(source, operand, prim, window, strides, padding)
  np.testing.assert_allclose(np.asarray(scattered), _np_select_and_scatter_add(
      source, operand, window, strides, padding, pick), rtol=1e-6)
  tangents = rng.standard_normal(operand.shape).astype(np.float32)
  gathered = wr._select_and_gather_add(tangents, operand, prim, window, strides, padding,
                                       (1, 1), (1, 1))
  # the tangent at each window's selected element
  chosen = run("max" if prim is ew.ge_p else "min", operand, (None, window, strides, padding,
                                                               (1, 1), (1, 1)))
  loc = np.asarray(chosen)[..., None] == operand.ravel()
  np.testing.assert_allclose(np.asarray(gathered), (loc * tangents.ravel()).sum(-1), rtol=1e-6)


def test_select_and_scatter_with_a_custom_scatter(rng):
  """The generic primitive: a max-selection that multiplies the source values in."""
  operand = distinct(rng, (4, 4), np.float32)
  source = rng.uniform(1, 2, (3, 3)).astype(np.float32)
  out = wr._select_and_scatter(operand, ew.ge, (2, 2), (1, 1), ((0, 0), (0, 0)), source,
                               np.float32(1), ew.mul)
  expected = np.ones((4, 4), np.float32)
  for w in np.ndindex(3, 3):
    block = operand[w[0]:w[0] + 2, w[1]:w[1] + 2]
    a, b = np.unravel_index(np.argmax(block), (2, 2))
    expected[w[0] + a, w[1] + b] *= source[w]
  np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)


# ----------------------------------------------------------------------------
# Batching


def _check_vmap(fun, args, in_axes):
  out = xjax.vmap(fun, in_axes=in_axes)(*args)
  size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
  slices = [fun(*[a if ax is None else np.take(a, i, ax) for a, ax in zip(args, in_axes)])
            for i in range(size)]
  np.testing.assert_allclose(np.asarray(out), np.stack([np.asarray(s) for s in slices]),
                             rtol=1e-6)


@pytest.mark.parametrize("name", ["sum", "max", "min", "generic"])
@pytest.mark.parametrize("axis", [0, 1])
def test_vmap_matches_a_loop(name, axis, rng):
  case = CASES[6]
  x = rand(rng, (3, *case[0]), np.float32)
  x = np.moveaxis(x, 0, axis)
  if name == "generic":
    fun = lambda x: wr.reduce_window((x, x), (1.0, 0.0), lambda a, b: (a[0] * b[0], a[1] + b[1]),
                                     *case[1:])[0]
  else:
    fun = lambda x: run(name, x, case)
  _check_vmap(fun, (x,), (axis,))


@pytest.mark.parametrize("in_axes", [(0, None), (None, 1), (1, 0)])
def test_vmap_of_select_and_gather_and_scatter_matches_a_loop(in_axes, rng):
  window, strides, padding = (2, 2), (1, 2), ((0, 1), (1, 0))
  shapes = [(4, 5) if ax is None else (4, 5)[:ax] + (3,) + (4, 5)[ax:] for ax in in_axes]
  tangents, operand = (distinct(rng, s, np.float32) for s in shapes)
  gather = lambda t, x: wr._select_and_gather_add(t, x, ew.ge_p, window, strides, padding,
                                                  (1, 1), (1, 1))
  _check_vmap(gather, (tangents, operand), in_axes)
  out_shape = wr.reduce_window_shape_tuple((4, 5), window, strides, padding)
  src_shape = out_shape if in_axes[0] is None else (
      out_shape[:in_axes[0]] + (3,) + out_shape[in_axes[0]:])
  source = rng.standard_normal(src_shape).astype(np.float32)
  scatter = lambda s, x: wr._select_and_scatter_add(s, x, ew.le_p, window, strides, padding)
  _check_vmap(scatter, (source, operand), in_axes)


def test_vmap_of_select_and_scatter_matches_a_loop(rng):
  operand = distinct(rng, (4, 3, 4), np.float32)
  source = rng.standard_normal((3, 3, 3)).astype(np.float32)
  fun = lambda x, s: wr._select_and_scatter(x, ew.ge, (2, 2), (1, 1), ((0, 0), (0, 0)), s,
                                            np.float32(0), ew.add)
  _check_vmap(fun, (operand, source), (1, 0))
  _check_vmap(fun, (operand[:, 0], source), (None, 2))


def test_vmap_of_a_max_pool_gradient_matches_a_loop(rng):
  x = distinct(rng, (3, 5, 6), np.float32)
  grad = xjax.grad(lambda x: (run("max", x, CASES[4]) ** 2).sum())
  _check_vmap(grad, (x,), (2,))


def test_batched_init_values_are_refused(rng):
  x = rng.standard_normal((4, 5)).astype(np.float32)
  with pytest.raises(NotImplementedError,
                     match="reduce_window batching is not implemented for initial values"):
    xjax.vmap(lambda i: wr.reduce_window(x, i, lax.mul, (2, 2)))(np.ones(3, np.float32))


# ----------------------------------------------------------------------------
# Derivatives


POOL_CASES = [
    ((5, 6), (2, 3), (2, 1), "SAME", (1, 1), (1, 1)),
    ((5, 6), (2, 2), (1, 2), ((1, 0), (1, 1)), (1, 2), (1, 1)),
    ((2, 4, 5), (1, 3, 2), (1, 2, 1), "VALID", (1, 1, 1), (1, 1, 1)),
]


@pytest.mark.parametrize("case", POOL_CASES, ids=["same", "base_dilation", "rank3"])
@pytest.mark.parametrize("name", ["sum", "max", "min"])
def test_pool_gradients_match_finite_differences(name, case, rng, x64):
  x = distinct(rng, case[0])
  check_grads(lambda x: run(name, x, case), (x,), 2, modes=("fwd", "rev"))


def test_sum_pool_with_window_dilation_gradient_matches_finite_differences(rng, x64):
  case = ((6, 7), (2, 3), (2, 1), ((1, 2), (0, 1)), (2, 1), (2, 2))
  check_grads(lambda x: run("sum", x, case), (distinct(rng, case[0]),), 2, modes=("fwd", "rev"))


def test_max_pool_gradient_is_one_at_each_window_maximum(rng):
  x = distinct(rng, (4, 6), np.float32)
  g = xjax.grad(lambda x: run("max", x, CASES[3]).sum())(x)
  windows = np.lib.stride_tricks.sliding_window_view(x, (2, 2))
  counts = np.zeros_like(x)
  for w in np.ndindex(*windows.shape[:2]):
    a, b = np.unravel_index(np.argmax(windows[w]), (2, 2))
    counts[w[0] + a, w[1] + b] += 1
  np.testing.assert_array_equal(np.asarray(g), counts)


def test_generic_reduce_window_has_forward_mode_only(rng, x64):
  case = ((4, 5), (2, 2), (1, 2), "SAME", (1, 1), (1, 1))
  x = rng.uniform(0.5, 1.5, case[0])
  f = lambda x: wr.reduce_window(x, 1.0, lax.mul, *case[1:])
  check_grads(f, (x,), 2, modes=("fwd",))
  with pytest.raises(NotImplementedError, match=r"Transpose rule \(for reverse-mode differentiation\) for 'reduce_window' not implemented"):
    xjax.grad(lambda x: f(x).sum())(x)
  with pytest.raises(TypeError, match="reduce_window jvp does not support non-zero "
                                      "init_value_tangent"):
    xjax.jvp(lambda i: wr.reduce_window(x, i, lax.mul, (2, 2)), (1.0,), (1.0,))


def test_max_pool_with_window_dilation_has_no_vjp(rng):
  x = distinct(rng, (5, 6), np.float32)
  f = lambda x: wr.reduce_window(x, -np.inf, lax.max, (2, 2), window_dilation=(2, 1)).sum()
  with pytest.raises(NotImplementedError,
                     match=r"VJP not implemented for select_and_gather \(MaxPool\) with window "
                           r"dilation, got window_dilation=\(2, 1\)."):
    xjax.grad(f)(x)


# ----------------------------------------------------------------------------
# Printed jaxprs (as real JAX 0.10.2 prints them)


JAXPR_SUM = """\
{ lambda ; a:f32[3,4]. let
    b:f32[3,2] = reduce_window_sum[
      base_dilation=(1, 1)
      padding=((1, 0), (0, 1))
      window_dilation=(1, 1)
      window_dimensions=(2, 2)
      window_strides=(1, 2)
    ] a
  in (b,) }"""

JAXPR_MAX = """\
{ lambda ; a:f32[3,4]. let
    b:f32[3,4] = reduce_window_max[
      base_dilation=(1, 1)
      padding=((0, 1), (0, 1))
      window_dilation=(1, 1)
      window_dimensions=(2, 2)
      window_strides=(1, 1)
    ] a
  in (b,) }"""

JAXPR_MUL = """\
{ lambda ; a:f32[3,4]. let
    b:f32[3,4] = reduce_window[
      base_dilation=(1, 1)
      consts=()
      jaxpr={ lambda ; c:f32[] d:f32[]. let e:f32[] = mul c d in (e,) }
      padding=((0, 1), (0, 1))
      window_dilation=(1, 1)
      window_dimensions=(2, 2)
      window_strides=(1, 1)
    ] a 1.0:f32[]
  in (b,) }"""

JAXPR_GRAD_MAX_POOL = """\
{ lambda ; a:f32[3,4]. let
    b:f32[1,2] = reduce_window_max[
      base_dilation=(1, 1)
      padding=((0, 0), (0, 0))
      window_dilation=(1, 1)
      window_dimensions=(2, 2)
      window_strides=(2, 2)
    ] a
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b
    c:f32[1,2] = broadcast_in_dim 1.0:f32[]
    d:f32[3,4] = select_and_scatter_add[
      padding=((0, 0), (0, 0))
      select_prim=ge
      window_dimensions=(2, 2)
      window_strides=(2, 2)
    ] c a
  in (d,) }"""

JAXPR_GRAD_SUM_POOL = """\
{ lambda ; a:f32[3,4]. let
    b:f32[2,4] = reduce_window_sum[
      base_dilation=(1, 1)
      padding=((0, 1), (0, 1))
      window_dilation=(1, 1)
      window_dimensions=(2, 2)
      window_strides=(2, 1)
    ] a
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b
    c:f32[2,4] = broadcast_in_dim 1.0:f32[]
    d:f32[4,5] = pad[
      padding_config=((np.int64(1), np.int64(0), 1), (np.int64(1), np.int64(0), 0))
    ] c 0.0:f32[]
    e:f32[3,4] = reduce_window_sum[
      base_dilation=(1, 1)
      padding=((0, 0), (0, 0))
      window_dilation=(1, 1)
      window_dimensions=(2, 2)
      window_strides=(1, 1)
    ] d
  in (e,) }"""

JAXPR_JVP_MIN_POOL = """\
{ lambda ; a:f32[3,4] b:f32[3,4]. let
    c:f32[2,3] = reduce_window_min[
      base_dilation=(1, 1)
      padding=((0, 0), (0, 0))
      window_dilation=(1, 1)
      window_dimensions=(2, 2)
      window_strides=(1, 1)
    ] a
    d:f32[2,3] = select_and_gather_add[
      base_dilation=(1, 1)
      padding=((0, 0), (0, 0))
      select_prim=le
      window_dilation=(1, 1)
      window_dimensions=(2, 2)
      window_strides=(1, 1)
    ] b a
  in (c, d) }"""


def test_printed_jaxprs_match_jax():
  x = jnp.arange(12.0).reshape(3, 4)
  show = lambda f, *args: str(xjax.make_jaxpr(f)(*args))
  assert show(lambda x: wr.reduce_window(x, 0.0, lax.add, (2, 2), (1, 2),
                                         ((1, 0), (0, 1))), x) == JAXPR_SUM
  assert show(lambda x: wr.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 1), "SAME"),
              x) == JAXPR_MAX
  assert show(lambda x: wr.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 1), "SAME"),
              x) == JAXPR_MUL
  max_pool = lambda x: wr.reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 2), "VALID").sum()
  assert show(xjax.grad(max_pool), x) == JAXPR_GRAD_MAX_POOL
  sum_pool = lambda x: wr.reduce_window(x, 0.0, lax.add, (2, 2), (2, 1), "SAME").sum()
  assert show(xjax.grad(sum_pool), x) == JAXPR_GRAD_SUM_POOL
  min_pool = lambda x: wr.reduce_window(x, jnp.inf, lax.min, (2, 2), (1, 1), "VALID")
  assert show(lambda x, t: xjax.jvp(min_pool, (x,), (t,)), x, x) == JAXPR_JVP_MIN_POOL


def test_lowering_emits_reduce_window_and_select_and_scatter():
  x = jnp.arange(12.0).reshape(3, 4)
  text = xjax.jit(lambda x: wr.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 1), "SAME",
                                             (1, 2), (2, 1))).lower(x).as_text()
  assert ('"stablehlo.reduce_window"' in text and "base_dilations = array<i64: 1, 2>, "
          "padding = dense<[[1, 1], [0, 1]]> : tensor<2x2xi64>, window_dilations = "
          "array<i64: 2, 1>, window_dimensions = array<i64: 2, 2>, window_strides = "
          "array<i64: 1, 1>" in text and "stablehlo.maximum" in text)
  grad = xjax.grad(lambda x: wr.reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 2),
                                              ((1, 0), (0, 1))).sum())
  text = xjax.jit(grad).lower(x).as_text()
  assert ('"stablehlo.select_and_scatter"' in text and "stablehlo.pad" in text
          and "window_strides = array<i64: 2, 2>" in text)


# ----------------------------------------------------------------------------
# Errors


def _raises(cls, message, f):
  with pytest.raises(cls) as info:
    f()
  assert str(info.value) == message


def test_errors_match_jax():
  x = jnp.arange(12.0).reshape(3, 4)
  rw = lambda *args, **kw: lambda: wr.reduce_window(x, *args, **kw)
  _raises(TypeError, "reduce_window window_dimensions must have every element be strictly "
          "positive, got (0, 2).", rw(0.0, lax.add, (0, 2), (1, 1)))
  _raises(TypeError, "reduce_window got the wrong number of window_dimensions for operand: got "
          "operand shape (3, 4) with window_dimensions (2,).", rw(0.0, lax.add, (2,), (1,)))
  _raises(TypeError, "reduce_window got inconsistent window_strides and window_dimensions: got "
          "window_strides (1,) and window_dimensions (2, 2).", rw(0.0, lax.add, (2, 2), (1,)))
  _raises(TypeError, "reduce_window window_strides must have every element be strictly "
          "positive, got (1, 0).", rw(0.0, lax.add, (2, 2), (1, 0)))
  _raises(TypeError, "reduce_window got inconsistent base_dilation and window_dimensions: got "
          "base_dilation (1,) and window_dimensions (2, 2).",
          rw(0.0, lax.add, (2, 2), (1, 1), "VALID", (1,)))
  _raises(TypeError, "All dilations must be positive, got (0, 1).",
          rw(0.0, lax.add, (2, 2), (1, 1), "VALID", (0, 1)))
  _raises(TypeError, "All dilations must be positive, got (1, 0).",
          rw(0.0, lax.add, (2, 2), (1, 1), "VALID", None, (1, 0)))
  _raises(RuntimeError, "Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', "
          "got FOO.", rw(0.0, lax.add, (2, 2), (1, 1), "FOO"))
  _raises(TypeError, "reduce_window got inconsistent dtypes for operands and init_values: got "
          "operand dtypes [dtype('float32')] and init_value dtypes [dtype('int32')].",
          rw(np.int32(1), lax.mul, (2, 2), (1, 1)))
  _raises(TypeError, "reduce_window expected init_values to be scalars but init_values have "
          "shapes [(2,)].", rw(np.ones(2, np.float32), lax.mul, (2, 2), (1, 1)))
  _raises(ValueError, "Operands must have the same tree structure as init_values: "
          "PyTreeDef(*) vs. PyTreeDef((*, *))", rw((0.0, 1.0), lax.add, (2, 2)))
  _raises(ValueError, "reduce_window output must have the same tree structure as the operands "
          "PyTreeDef((*, *)) vs. PyTreeDef(*)",
          lambda: wr.reduce_window((x, x), (1.0, 1.0), lambda a, b: a[0], (2, 2)))
  _raises(ValueError, "reduce_window must have at least one operand.",
          lambda: wr.reduce_window((), (), lax.add, (2, 2)))
  _raises(TypeError, "operand to reduce_window_sum must have a number dtype, got bool",
          lambda: wr.reduce_window(x > 1, False, lax.add, (2, 2)))
  with pytest.raises(ValueError, match="inconsistent padding"):
    wr.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), ((0, 0),))
  with pytest.raises(TypeError, match="traced for reduce_window comp returned a value of type "
                                      "<class 'str'>, which is not a valid JAX type"):
    wr.reduce_window(x, 1.0, lambda a, b: "x", (2, 2))
  _raises(TypeError, "select_and_gather_add tangents and operand shapes must match, got (3, 4) "
          "and (4, 3).", lambda: wr._select_and_gather_add(
              x, x.T, ew.ge_p, (2, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1)))


def test_computations_closing_over_constants(rng):
  x = rng.standard_normal((3, 4)).astype(np.float32)
  ones = np.ones(3, np.float32)  # a closed-over NumPy array (a literal of the jaxpr)
  out = wr.reduce_window(x, -np.inf, lambda a, b: lax.max(a, b) * ones.mean(), (1, 2))
  assert [e.primitive.name for e in xjax.make_jaxpr(
      lambda x: wr.reduce_window(x, -np.inf, lambda a, b: lax.max(a, b) * ones.mean(), (1, 2))
  )(x).jaxpr.eqns] == ["reduce_window"]
  np.testing.assert_allclose(np.asarray(out), np.maximum(x[:, :-1], x[:, 1:]), rtol=1e-6)
  table = jnp.array([2.0, 3.0])
  with pytest.raises(TypeError, match="In a call to primitive reduce_window, the value of "
                                      "parameter consts was not hashable"):
    wr.reduce_window(x, 1.0, lambda a, b: a * b + table[0], (2, 2))


def test_edge_shapes_rank0_negative_padding_and_empty_windows(rng):
  x = np.float32(3.0)
  assert float(wr.reduce_window(x, 1.0, lax.mul, (), (), "VALID")) == 3.0
  assert float(wr.reduce_window(x, 0.0, lax.add, (), (), "VALID")) == 3.0
  y = rng.standard_normal((3, 4)).astype(np.float32)
  out = wr.reduce_window(y, 0.0, lax.add, (2, 2), (1, 1), ((-1, 0), (0, 0)))
  assert out.shape == (1, 3)
  np.testing.assert_allclose(np.asarray(out), np_reduce_window(
      y, 0, lambda v, a: np.sum(v, a), (2, 2), (1, 1), ((-1, 0), (0, 0)), (1, 1), (1, 1)),
      rtol=1e-6)
  assert wr.reduce_window(y, -np.inf, lax.max, (5, 2)).shape == (0, 3)
