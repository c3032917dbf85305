"""Test helpers, one property each (mirrors `jax.test_util` and JAX's internal test_util).

* `check_against_numpy`: a function agrees with a NumPy/SciPy reference
  (shape, dtype and values within a per-dtype tolerance).
* `check_jit_matches_eager`: `jit(f)` agrees with `f`, and a second call with
  arguments of the same types does not retrace.
* `check_grads`: forward and reverse derivatives agree with finite
  differences along random directions (JAX's algorithm).
* `tolerance`: the default tolerance of a dtype.
* ``rand_*``: argument makers ``maker(shape, dtype) -> np.ndarray`` drawing
  from a seeded NumPy generator; they produce exactly the dtype asked for
  (bfloat16 included) and accept every shape, 0-d and empty ones included.
"""
from __future__ import annotations

import functools

import ml_dtypes
import numpy as np

from xjax._src import api
from xjax._src import dtypes
from xjax._src import tree_util
from xjax._src.device_put import device_put
from xjax._src.array import Array
from xjax._src.jit import jit

# ----------------------------------------------------------------------------
# Shapes and tolerances

SCALAR_SHAPE = ()
EMPTY_SHAPES = ((0,), (2, 0))
SIZE_ONE_SHAPES = ((1,), (1, 1))
NONEMPTY_SHAPES = ((3,), (2, 3), (1, 4))
ALL_SHAPES = (SCALAR_SHAPE, *EMPTY_SHAPES, *SIZE_ONE_SHAPES, *NONEMPTY_SHAPES)

_default_tolerance = {
    np.dtype(np.bool_): 0, np.dtype(np.int8): 0, np.dtype(np.int16): 0,
    np.dtype(np.int32): 0, np.dtype(np.int64): 0, np.dtype(np.uint8): 0,
    np.dtype(np.uint16): 0, np.dtype(np.uint32): 0, np.dtype(np.uint64): 0,
    np.dtype(ml_dtypes.bfloat16): 2e-2, np.dtype(np.float16): 2e-3,
    np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-15,
    np.dtype(np.complex64): 1e-6, np.dtype(np.complex128): 1e-15,
}

# Finite-difference checks are looser: the difference quotient has error O(eps**2).
_default_gradient_tolerance = {
    np.dtype(ml_dtypes.bfloat16): 1e-1, np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 2e-3, np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3, np.dtype(np.complex128): 1e-5,
}

EPS = 1e-4


def tolerance(dtype, tol=None) -> float:
  """The tolerance for comparing values of `dtype`.

  Args:
    dtype: a dtype.
    tol: None (the default for `dtype`), a number (returned as is), or a dict
      from dtype to tolerance whose missing entries fall back to the default.

  Returns:
    A float: 0 for integers and bool, looser for bfloat16 and float16.
  """
  if tol is not None and not isinstance(tol, dict):
    return tol
  dtype = np.dtype(dtype)
  if tol and dtype in {np.dtype(k) for k in tol}:
    return {np.dtype(k): v for k, v in tol.items()}[dtype]
  return _default_tolerance.get(dtype, 0)


def _as_wide(x: np.ndarray) -> np.ndarray:
  """`x` in a NumPy dtype wide enough to compare (bfloat16 -> float32)."""
  if x.dtype == np.dtype(ml_dtypes.bfloat16):
    return x.astype(np.float32)
  return x


def assert_close(actual, expected, rtol=None, atol=None, err_msg=""):
  """Asserts equal shapes and dtypes and values within tolerance (NaNs equal NaNs).

  The tolerance defaults to `tolerance` of the expected dtype; integer and
  boolean values must be equal.
  """
  actual, expected = np.asarray(actual), np.asarray(expected)
  assert actual.shape == expected.shape, (
      f"shape {actual.shape} != expected {expected.shape}. {err_msg}")
  assert actual.dtype == expected.dtype, (
      f"dtype {actual.dtype} != expected {expected.dtype}. {err_msg}")
  rtol = tolerance(expected.dtype, rtol)
  atol = tolerance(expected.dtype, atol)
  if expected.dtype.kind in "biu":
    np.testing.assert_array_equal(actual, expected, err_msg=err_msg)
    return
  with np.errstate(invalid="ignore"):
    np.testing.assert_allclose(_as_wide(actual), _as_wide(expected), rtol=rtol, atol=atol,
                               equal_nan=True, err_msg=err_msg)


# ----------------------------------------------------------------------------
# Comparisons


def _on_device(tree):
  """The NumPy arrays and scalars in `tree` as xjax Arrays (Python scalars stay as they are)."""
  return tree_util.tree_map(
      lambda x: device_put(x) if isinstance(x, (np.ndarray, np.generic)) else x, tree)


def check_against_numpy(fun, np_fun, args, rtol=None, atol=None, err_msg=""):
  """Asserts `fun(*args)` (on device) agrees with `np_fun(*args)` (on the host).

  NumPy array arguments are put on the device before `fun` sees them, so the
  compiled path runs rather than a host shortcut. Outputs may be pytrees.

  Args:
    fun: an xjax function.
    np_fun: its NumPy reference; its outputs fix the expected shapes and dtypes.
    args: the arguments (NumPy arrays or Python scalars).
    rtol, atol: tolerances (a number or a dict by dtype); default `tolerance`.

  Returns:
    The output of `fun`.
  """
  actual = fun(*[_on_device(a) for a in args])
  expected = np_fun(*args)
  actual_leaves = tree_util.tree_leaves(actual)
  expected_leaves = tree_util.tree_leaves(expected)
  assert len(actual_leaves) == len(expected_leaves), (len(actual_leaves), len(expected_leaves))
  for a, e in zip(actual_leaves, expected_leaves, strict=True):
    if isinstance(a, Array):
      assert np.asarray(a).dtype == a.dtype and np.shape(a) == a.shape, (
          f"the computed buffer ({np.asarray(a).dtype}{list(np.shape(a))}) differs from "
          f"the array's aval {a.aval}")
    assert_close(a, e, rtol=rtol, atol=atol, err_msg=err_msg)
  return actual


def check_jit_matches_eager(fun, args, rtol=None, atol=None):
  """Asserts `jit(fun)` agrees with eager `fun` and does not retrace on a second call.

  The second call uses fresh arguments of the same types (the same values,
  newly placed), so a cache keyed on types must hit.

  Args:
    fun: an xjax function of array arguments.
    args: its arguments (NumPy arrays or Python scalars).
    rtol, atol: tolerances as for `assert_close`.
  """
  traces = 0

  def counted(*xs):
    nonlocal traces
    traces += 1
    return fun(*xs)

  jitted = jit(counted)
  eager = fun(*[_on_device(a) for a in args])
  first = jitted(*[_on_device(a) for a in args])
  assert traces == 1, f"the first jit call traced {traces} times"
  second = jitted(*[_on_device(a) for a in args])
  assert traces == 1, "a second call with arguments of the same types retraced"
  for e, a1, a2 in zip(tree_util.tree_leaves(eager), tree_util.tree_leaves(first),
                       tree_util.tree_leaves(second), strict=True):
    assert a1.dtype == e.dtype and a1.shape == e.shape, (a1.aval, e.aval)
    assert a1.aval.weak_type == e.aval.weak_type, (a1.aval, e.aval)
    assert_close(a1, e, rtol=rtol, atol=atol, err_msg="jit vs eager")
    assert_close(a2, a1, rtol=0, atol=0, err_msg="second jit call")


# ----------------------------------------------------------------------------
# Argument makers


def _cast(values: np.ndarray, dtype) -> np.ndarray:
  dtype = np.dtype(dtype)
  with np.errstate(invalid="ignore", over="ignore"):
    return np.asarray(values).astype(dtype)


def _complexify(rng, shape, dtype, draw):
  if dtypes.issubdtype(dtype, np.complexfloating):
    return _cast(draw(shape) + 1j * draw(shape), dtype)
  return _cast(draw(shape), dtype)


def rand_default(rng, scale=3.0):
  """Normal values of standard deviation `scale` (rounded for integers, >= 0 for unsigned)."""
  def maker(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
      return rng.random(shape) < 0.5
    if dtype.kind in "iu":
      values = np.round(rng.normal(0, scale, shape))
      return _cast(np.abs(values) if dtype.kind == "u" else values, dtype)
    return _complexify(rng, shape, dtype, lambda s: scale * rng.standard_normal(s))
  return maker


def rand_uniform(rng, low=0.0, high=1.0):
  """Values uniform in [low, high) (real and imaginary parts, for complex)."""
  def maker(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
      return rng.integers(int(np.ceil(low)), int(np.ceil(high)), shape).astype(dtype)
    return _complexify(rng, shape, dtype, lambda s: rng.uniform(low, high, s))
  return maker


def rand_positive(rng, high=5.0):
  """Values in (0, high], bounded away from zero (1/16 at least)."""
  def maker(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
      return rng.integers(1, max(int(high), 2) + 1, shape).astype(dtype)
    return _complexify(rng, shape, dtype, lambda s: rng.uniform(1 / 16, high, s))
  return maker


def rand_nonzero(rng, scale=3.0):
  """Normal values with the zeros (and near-zeros) replaced by one."""
  base = rand_default(rng, scale)

  def maker(shape, dtype):
    x = base(shape, dtype)
    if np.dtype(dtype) == np.bool_:
      return np.ones(shape, bool)
    small = np.abs(x.astype(np.complex128)) < 0.25
    return np.where(small, np.ones((), x.dtype), x)
  return maker


def rand_int(rng, low, high):
  """Integers in [low, high) of an integer, float or bool dtype."""
  def maker(shape, dtype):
    return _cast(rng.integers(low, high, shape), dtype)
  return maker


def rand_small_int(rng):
  """Integers in [-8, 8) (in [0, 8) for unsigned dtypes)."""
  def maker(shape, dtype):
    low = 0 if np.dtype(dtype).kind == "u" else -8
    return _cast(rng.integers(low, 8, shape), dtype)
  return maker


def rand_full_range_int(rng):
  """Integers drawn from the dtype's whole range, its bounds included."""
  def maker(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
      return rng.random(shape) < 0.5
    info = np.iinfo(dtype)
    values = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    if values.size:
      edges = np.array([info.min, info.max, 0, 1][:values.size], dtype)
      values.flat[:edges.size] = edges
    return values
  return maker


def rand_bool(rng):
  """Booleans, True with probability 1/2 (cast to other dtypes as 0 and 1)."""
  def maker(shape, dtype):
    return _cast(rng.random(shape) < 0.5, dtype)
  return maker


def rand_some_special(rng, scale=3.0):
  """Normal values with NaN, +-inf and +-0 mixed in (floats); like `rand_default` otherwise."""
  base = rand_default(rng, scale)
  specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])

  def maker(shape, dtype):
    x = base(shape, dtype)
    if not dtypes.issubdtype(dtype, np.inexact) or not x.size:
      return x
    pick = rng.random(shape) < 0.4
    special = _cast(specials[rng.integers(0, len(specials), shape)], dtype)
    return np.where(pick, special, x)
  return maker


def rand_not_small_int(rng, scale=3.0):
  """Floats at least 0.05 away from every integer (for poles of gamma-type functions)."""
  base = rand_default(rng, scale)

  def maker(shape, dtype):
    x = base(shape, dtype)
    frac = np.abs(x.astype(np.float64) - np.round(x.astype(np.float64)))
    return np.where(frac < 0.05, _cast(x.astype(np.float64) + 0.25, dtype), x).astype(dtype)
  return maker


# ----------------------------------------------------------------------------
# Gradients: finite differences along random directions (JAX's check_grads)


def _autodiff(name: str):
  fn = getattr(api, name, None)
  if fn is None:
    raise NotImplementedError(f"check_grads needs xjax.{name}, which is not implemented yet")
  return fn


def _dtype(x):
  return np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype


def _rand_like(rng, x):
  # `rng` is a legacy np.random.RandomState(0), drawn as JAX's check_grads draws: the same
  # directions as JAX, so that a client's gradient test passes or fails as it does there.
  shape, dtype = np.shape(x), _dtype(x)
  draw = lambda: np.asarray(rng.randn(*shape)).astype(dtype)
  if dtypes.issubdtype(dtype, np.complexfloating):
    return draw() + dtype.type(1j) * draw()
  return draw()


def _scale(xs, a):
  return tree_util.tree_map(
      lambda x: (np.asarray(x) * np.asarray(a, _dtype(x))).astype(_dtype(x)), xs)


def _add(xs, ys):
  return tree_util.tree_map(lambda x, y: (np.asarray(x) + np.asarray(y)).astype(_dtype(x)), xs, ys)


def _sub(xs, ys):
  return tree_util.tree_map(lambda x, y: (np.asarray(x) - np.asarray(y)).astype(_dtype(x)), xs, ys)


def _safe_sub(xs, ys):
  """x - y with inf - inf = 0."""
  def sub(x, y):
    x, y = np.asarray(x), np.asarray(y)
    with np.errstate(invalid="ignore"):
      return np.where(x == y, np.zeros((), x.dtype), x - y).astype(x.dtype)
  return tree_util.tree_map(sub, xs, ys)


def _conj(xs):
  return tree_util.tree_map(lambda x: np.conj(np.asarray(x)), xs)


def _inner_prod(xs, ys):
  def contract(x, y):
    x, y = np.asarray(x), np.asarray(y)
    return np.real(np.dot(np.conj(x).reshape(-1), y.reshape(-1)))
  return sum(tree_util.tree_leaves(tree_util.tree_map(contract, xs, ys)))


def numerical_jvp(f, primals, tangents, eps=EPS):
  """The central difference (f(x + eps t) - f(x - eps t)) / (2 eps)."""
  delta = _scale(tangents, eps)
  f_pos = f(*_add(primals, delta))
  f_neg = f(*_sub(primals, delta))
  return _scale(_safe_sub(f_pos, f_neg), 0.5 / eps)


def _grad_tol(tol, dtype):
  if tol is not None and not isinstance(tol, dict):
    return tol
  merged = dict(_default_gradient_tolerance)
  merged.update({np.dtype(k): v for k, v in (tol or {}).items()})
  # As JAX's `tolerance`: the dtype as computed (float64 is float32's without x64), so a
  # Python float argument gets float32's tolerance unless x64 is on.
  return merged.get(dtypes.canonicalize_dtype(np.dtype(dtype)), 0)


def _check_close_tree(xs, ys, atol, rtol, err_msg):
  for x, y in zip(tree_util.tree_leaves(xs), tree_util.tree_leaves(ys), strict=True):
    x, y = np.asarray(x), np.asarray(y)
    assert x.shape == y.shape, (x.shape, y.shape, err_msg)
    if x.dtype.kind in "biuV":
      continue
    a, r = _grad_tol(atol, y.dtype), _grad_tol(rtol, y.dtype)
    np.testing.assert_allclose(_as_wide(x), _as_wide(y), atol=a * max(y.size, 1),
                               rtol=r * max(y.size, 1), equal_nan=True, err_msg=err_msg)


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
  """Asserts `f_jvp(args, tangents)` matches f and a central difference along a random tangent."""
  rng = np.random.RandomState(0)
  tangent = tree_util.tree_map(functools.partial(_rand_like, rng), args)
  v_out, t_out = f_jvp(args, tangent)
  _check_close_tree(v_out, f(*args), atol, rtol, f"{err_msg} primal")
  t_expected = numerical_jvp(f, args, tangent, eps=eps)
  _check_close_tree(t_out, t_expected, atol, rtol, f"{err_msg} tangent")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
  """Asserts the dot-product test <t, vjp(ct)> == <jvp(t), ct> for random t and ct."""
  rng = np.random.RandomState(0)
  v_out, vjp_fun = f_vjp(*args)
  _check_close_tree(v_out, f(*args), atol, rtol, f"{err_msg} primal")
  tangent = tree_util.tree_map(functools.partial(_rand_like, rng), args)
  tangent_out = numerical_jvp(f, args, tangent, eps=eps)
  cotangent = tree_util.tree_map(functools.partial(_rand_like, rng), v_out)
  cotangent_out = _conj(vjp_fun(_conj(cotangent)))
  ip = _inner_prod(tangent, cotangent_out)
  ip_expected = _inner_prod(tangent_out, cotangent)
  dtype = _dtype(tree_util.tree_leaves(args)[0])
  np.testing.assert_allclose(ip, ip_expected, atol=_grad_tol(atol, dtype),
                             rtol=_grad_tol(rtol, dtype),
                             err_msg=f"{err_msg} cotangent projection")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
  """Checks derivatives of f up to `order` against finite differences.

  Only one random direction is checked per derivative, so the cost does not
  grow with the input and output sizes. Higher orders differentiate the
  jvp (forward) or the vjp (reverse) of the order below.

  Args:
    f: the function, checked at ``f(*args)``.
    args: a tuple of arguments.
    order: check derivatives up to this order.
    modes: ``"fwd"`` (jvp against a central difference) and/or ``"rev"``
      (vjp by the dot-product test).
    atol, rtol: tolerances (a number or a dict by dtype).
    eps: the finite-difference step (default 1e-4).

  Raises:
    AssertionError: a derivative does not match.
    NotImplementedError: `f` uses a derivative that has no rule, as in JAX
      (e.g. of ``lax.nextafter``, or of ``lax.scatter_mul`` in its updates
      without ``unique_indices=True``); it propagates from ``jvp``/``vjp``.

  Mirrors `jax.test_util.check_grads`.
  """
  args = tuple(args)
  eps = eps or EPS
  jvp, vjp = _autodiff("jvp"), _autodiff("vjp")

  def check(f, args, order, err_msg=""):
    if "fwd" in modes:
      fwd_msg = f"JVP of {err_msg}" if err_msg else "JVP"
      check_jvp(f, functools.partial(jvp, f), args, atol, rtol, eps, fwd_msg)
      if order > 1:
        check(functools.partial(jvp, f), (args, args), order - 1, fwd_msg)
    if "rev" in modes:
      rev_msg = f"VJP of {err_msg}" if err_msg else "VJP"
      check_vjp(f, functools.partial(vjp, f), args, atol, rtol, eps, rev_msg)
      if order > 1:
        def f_vjp(*args):
          out, vjp_fun = vjp(f, *args)
          return vjp_fun(out)
        check(f_vjp, args, order - 1, rev_msg)

  check(f, args, order)
