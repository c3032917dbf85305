"""Derivative rules, checked mechanically over the spec table in `specs.py`.

* Every spec with ``grad_order > 0``: `check_grads` in forward and reverse
  mode up to that order, at points away from kinks, poles and ties. The
  operands are drawn as float32 and complex64 (the spec's first inexact dtype
  where it lists neither) and checked twice: widened to float64/complex128
  under x64 with the default (tight) tolerances, where finite differences are
  accurate enough to pin the math down, and as drawn at order 1 with loose
  tolerances, for the float32 paths (dtypes, weak types, mixed operands).
  Only the inexact operands are differentiated; integer and boolean operands
  (select_n's predicate, pow's integer exponent) are held fixed, and so are
  the operands JAX does not differentiate (`AD_OPERANDS`: scatter_mul's
  updates without unique_indices=True, which raise NotImplementedError).
* Every spec with ``linear`` set: the transpose rule is the adjoint of the
  primitive, ``<ct, f(x)> == <f^T(ct), x>`` under JAX's pairing
  ``re(sum(a * b))``, by `ad.backward_pass` over the primitive's own jaxpr.
* A few composites under grad-of-jit, jit-of-grad and grad-of-grad, and
  known answers from JAX 0.10.2 where the rule's choice is a convention
  (ties of max/min, abs at 0, integer powers at 0).

The argument makers are the spec's, with non-finite values replaced and, for
the entries in `AD_MAKERS`, ranges chosen for differentiability.
"""
import zlib

import ml_dtypes
import numpy as np
import pytest

import xjax
import xjax.test_util as jtu
from xjax import lax
from xjax._src import core
from xjax._src.config import enable_x64
from xjax._src.interpreters import ad

import specs
from specs import C64, F32, F64

# Argument makers for differentiation, where the spec's own include kinks or ties.
AD_MAKERS = {
    "abs": (specs.nonzero,),
    "convert_element_type": (specs.default,),
    "clamp": (specs.uniform(-3, -1), specs.default, specs.uniform(1, 3)),
    "max": (specs.default, specs.default),
    "min": (specs.default, specs.default),
    "div": (specs.default, specs.nonzero),
    "atan2": (specs.by_dtype(f=specs.nonzero, c=specs.uniform(0.2, 1)),) * 2,
    "integer_pow": (specs.uniform(0.5, 2),),
    "integer_pow_negative": (specs.uniform(0.5, 2),),
    "cbrt": (specs.nonzero,),
    # In-bounds starts: gather's default mode fills out-of-bounds slices with NaN.
    "gather": (specs.default, specs.index_maker(0, 2)),
}

# The operands differentiated, where JAX differentiates only some: scatter_mul in its
# updates only with unique_indices=True (the scatter_mul_unique entry); without it
# JAX 0.10.2 raises NotImplementedError (test_scatter_mul_update_derivative_... below).
AD_OPERANDS = {"scatter_mul": (0,)}

# Dtypes by spec, where F32 and C64 alone would leave an operand dtype out.
AD_DTYPES = {"dot_general_mixed_dtypes": (F32, specs.F16)}

# Finite-difference step of the order-1 check in the drawn dtypes (default 1e-3,
# which balances float32 rounding against truncation): a bilinear map's central
# differences are exact, so a large step beats float16 rounding.
AD_EPS = {"dot_general": 1.0, "dot_general_preferred": 1.0, "dot_general_mixed_dtypes": 1.0}
NARROW_GRAD_TOL = {F32: 1e-2, C64: 1e-2, specs.F16: 5e-2, specs.BF16: 2e-1}

# reduce_precision is a step function that JAX differentiates (and transposes) as
# the identity: finite differences and the adjoint test say nothing about it; its
# own test below checks the rule.
NOT_FD_CHECKED = {"reduce_precision"}

# convert_element_type's differentiable targets (integer targets give float0 zeros).
CONVERT_GRAD_TARGETS = (F32, C64)


def _case_rng(*key):
  return np.random.default_rng(zlib.crc32("|".join(map(str, key)).encode()))


def _is_inexact(dtype) -> bool:
  return np.dtype(dtype).kind in "fc" or np.dtype(dtype) == specs.BF16


def _widen(dtype):
  """float64 for the real inexact dtypes, complex128 for complex64; others unchanged."""
  dtype = np.dtype(dtype)
  if dtype.kind == "c":
    return np.dtype(np.complex128)
  return F64 if _is_inexact(dtype) else dtype


def _widened(args, params):
  args = [a.astype(_widen(a.dtype)) for a in args]
  params = {k: _widen(v) if isinstance(v, np.dtype) else v for k, v in params.items()}
  return args, params


def _grad_dtypes(spec):
  if spec.name in AD_DTYPES:
    return list(AD_DTYPES[spec.name])
  picked = [d for d in (F32, C64) if d in spec.dtypes]
  return picked or [next(d for d in spec.dtypes if _is_inexact(d))]


def _grad_configs(spec):
  """The general configs (each param set once) plus the first broadcasting one."""
  picked, seen = [], set()
  for config in spec.configs:
    key = repr(sorted(config.params.items()))
    if config.kind == "general" and key not in seen:
      seen.add(key)
      picked.append(config)
  broadcasting = [c for c in spec.configs
                  if len(set(c.shapes)) > 1 and c.kind == "general" and c not in picked]
  return picked + broadcasting[:1]


def _convert_targets_ok(spec, config):
  target = config.params.get("new_dtype")
  return target is None or target in CONVERT_GRAD_TARGETS


def _finite(rng, x):
  """x with its non-finite entries replaced by standard normal draws."""
  if not _is_inexact(x.dtype) or not x.size:
    return x
  fresh = jtu.rand_default(rng, 1.0)(x.shape, x.dtype)
  return np.where(np.isfinite(x), x, fresh).astype(x.dtype)


def _make_args(spec, config, dtype, rng):
  makers = AD_MAKERS.get(spec.name, spec.makers)
  args = [factory(rng)(shape, d) for factory, shape, d in
          zip(makers, config.shapes, spec.operand_dtypes(dtype), strict=True)]
  return [_finite(rng, a) for a in args]


def _restricted(spec, params, args, positions):
  """spec.fun as a function of the operands at `positions`, the others held fixed."""
  def fun(*xs):
    full = list(args)
    for i, x in zip(positions, xs, strict=True):
      full[i] = x
    return spec.fun(*full, **params)
  return fun


def _inexact_outputs(fun):
  """`fun` with its integer and boolean outputs dropped (top_k's indices), as JAX's tests do."""
  def wrapped(*xs):
    out = fun(*xs)
    if isinstance(out, (tuple, list)):
      return tuple(o for o in out if _is_inexact(core.get_aval(o).dtype))
    return out
  return wrapped


def _grad_cases():
  for spec in specs.SPECS:
    if spec.grad_order == 0 or spec.name in NOT_FD_CHECKED:
      continue
    for config in _grad_configs(spec):
      if not _convert_targets_ok(spec, config):
        continue
      for dtype in _grad_dtypes(spec):
        shapes = "_".join("x".join(map(str, s)) or "s" for s in config.shapes)
        params = ",".join(f"{k}={v}" for k, v in config.params.items()
                          if k != "dimension_numbers")
        yield pytest.param(spec, config, dtype,
                           id=f"{spec.name}-{dtype.name}-{shapes}{'-' + params if params else ''}")


def _check_spec_grads(spec, config, dtype, widen):
  if spec.primitive.jvp is None:
    pytest.skip(f"'{spec.primitive.name}' has no jvp rule yet (test_registry reports it)")
  rng = _case_rng(spec.name, config, dtype)
  args = _make_args(spec, config, dtype, rng)
  params = spec.params_for(config, dtype)
  if widen:
    args, params = _widened(args, params)
  operands = AD_OPERANDS.get(spec.name, range(len(args)))
  positions = [i for i in operands if _is_inexact(args[i].dtype)]
  fun = _inexact_outputs(_restricted(spec, params, args, positions))
  diff_args = [xjax.device_put(args[i]) for i in positions]
  if widen:
    jtu.check_grads(fun, diff_args, order=spec.grad_order, modes=("fwd", "rev"))
  else:
    tol = NARROW_GRAD_TOL[np.dtype(dtype)]
    jtu.check_grads(fun, diff_args, order=1, modes=("fwd", "rev"), atol=tol, rtol=tol,
                    eps=AD_EPS.get(spec.name, 1e-3))


@pytest.mark.parametrize("spec, config, dtype", list(_grad_cases()))
def test_grads_match_finite_differences_in_float64(spec, config, dtype):
  with enable_x64(True):
    _check_spec_grads(spec, config, dtype, widen=True)


@pytest.mark.parametrize("spec, config, dtype", list(_grad_cases()))
def test_grads_match_finite_differences_in_drawn_dtype(spec, config, dtype):
  _check_spec_grads(spec, config, dtype, widen=False)


def _scatter_mul_update_cases():
  spec = specs.SPECS_BY_NAME["scatter_mul"]
  for config in _grad_configs(spec):
    shapes = "_".join("x".join(map(str, s)) for s in config.shapes)
    for mode in ("fwd", "rev"):
      yield pytest.param(spec, config, mode, id=f"{shapes}-mode={config.params['mode']}-{mode}")


@pytest.mark.parametrize("spec, config, mode", list(_scatter_mul_update_cases()))
def test_scatter_mul_update_derivative_needs_unique_indices(spec, config, mode):
  # JAX 0.10.2, jvp and vjp alike: NotImplementedError: scatter_mul gradients are only
  # implemented if `unique_indices=True`.
  args = _make_args(spec, config, F32, _case_rng("scatter_mul_updates", config))
  params = spec.params_for(config, F32)
  fun = _restricted(spec, params, args, (2,))
  with pytest.raises(NotImplementedError, match="only implemented if `unique_indices=True`"):
    if mode == "fwd":
      xjax.jvp(fun, (args[2],), (args[2],))
    else:
      xjax.vjp(fun, args[2])


# ----------------------------------------------------------------------------
# Transposes are adjoints


def _pair(a, b):
  """JAX's cotangent pairing re(sum(a * b)) (bilinear, no conjugation), in float64."""
  a = np.asarray(a).astype(np.complex128)
  b = np.asarray(b).astype(np.complex128)
  return float(np.real(np.sum(a * b)))


def _linear_groups(spec, config, dtype):
  """The sets of operands to transpose in together.

  A primitive linear in its linear operands jointly (add, select_n's cases)
  is transposed in all of them at once; a multilinear one (mul, dot_general:
  doubling every linear operand more than doubles the result) in each alone.
  """
  positions = tuple(i for i in spec.linear if _is_inexact(spec.operand_dtypes(dtype)[i]))
  rng = _case_rng("homogeneity", spec.name, config, dtype)
  args = _make_args(spec, config, dtype, rng)
  doubled = [a * a.dtype.type(2) if i in positions else a for i, a in enumerate(args)]
  params = spec.params_for(config, dtype)
  flat = lambda out: np.concatenate(
      [np.ravel(np.asarray(o)) for o in xjax.tree_util.tree_leaves(out)] or [np.zeros(0)])
  once = flat(spec.fun(*args, **params))
  twice = flat(spec.fun(*doubled, **params))
  joint = np.allclose(twice.astype(np.complex128), 2 * once.astype(np.complex128),
                      rtol=1e-2, atol=1e-3)
  return [positions] if joint else [(i,) for i in positions]


def _linear_cases():
  for spec in specs.SPECS:
    if not spec.linear or spec.name in NOT_FD_CHECKED:
      continue
    for config in _grad_configs(spec):
      if not _convert_targets_ok(spec, config) and config.params.get("new_dtype") not in (
          specs.F16, specs.BF16):
        continue
      for dtype in _grad_dtypes(spec):
        for positions in _linear_groups(spec, config, dtype):
          shapes = "_".join("x".join(map(str, s)) or "s" for s in config.shapes)
          target = config.params.get("new_dtype")
          yield pytest.param(spec, config, dtype, positions,
                             id=f"{spec.name}-{dtype.name}-{shapes}-args"
                             + "".join(map(str, positions))
                             + (f"-to_{target.name}" if target is not None else ""))


@pytest.mark.parametrize("spec, config, dtype, positions", list(_linear_cases()))
def test_transpose_is_adjoint(spec, config, dtype, positions):
  if spec.primitive.transpose is None:
    pytest.skip(f"'{spec.primitive.name}' has no transpose rule yet (test_registry reports it)")
  rng = _case_rng("transpose", spec.name, config, dtype, positions)
  args = _make_args(spec, config, dtype, rng)
  params = spec.params_for(config, dtype)
  fun = _restricted(spec, params, args, positions)
  xs = [args[i] for i in positions]
  closed = xjax.make_jaxpr(fun)(*xs)
  ys = core.eval_jaxpr(closed.jaxpr, closed.consts, *xs)  # one per output (split has several)
  cts = [jtu.rand_default(rng)(a.shape, a.dtype) for a in closed.out_avals]
  undefined = [ad.UndefinedPrimal(core.get_aval(x)) for x in xs]
  x_cts = ad.backward_pass(closed.jaxpr, closed.consts, undefined, cts)
  x_cts = [np.asarray(ad.instantiate_zeros(c)) for c in x_cts]
  for x, c in zip(xs, x_cts, strict=True):
    assert c.shape == x.shape and c.dtype == x.dtype, (c.shape, c.dtype, x.shape, x.dtype)
  lhs = sum(_pair(ct, y) for ct, y in zip(cts, ys, strict=True))
  rhs = sum(_pair(c, x) for x, c in zip(xs, x_cts, strict=True))
  narrowest = min([*(np.dtype(a.dtype) for a in closed.out_avals), *(x.dtype for x in xs)],
                  key=lambda d: ml_dtypes.finfo(d).nmant)
  tol = {np.dtype(specs.F16): 1e-2, np.dtype(specs.BF16): 5e-2}.get(narrowest, 1e-5)
  size = sum(x.size for x in xs) + sum(np.size(ct) for ct in cts)
  scale = np.sqrt(sum(_pair(abs(np.asarray(ct)), abs(np.asarray(ct))) for ct in cts)
                  * sum(_pair(abs(x), abs(x)) for x in xs))
  np.testing.assert_allclose(lhs, rhs, atol=tol * (scale + size), rtol=tol)


# ----------------------------------------------------------------------------
# Rules checked against their own definitions


@pytest.mark.parametrize("exponent_bits, mantissa_bits", [(5, 10), (8, 7)])
def test_reduce_precision_jvp_is_the_rounded_tangent(exponent_bits, mantissa_bits):
  x = np.array([0.1, 1.7, -3.3], np.float32)
  t = np.array([1.0, 0.123456, -2.5], np.float32)
  f = lambda v: lax.reduce_precision(v, exponent_bits, mantissa_bits)
  _, t_out = xjax.jvp(f, (x,), (t,))
  np.testing.assert_array_equal(np.asarray(t_out), np.asarray(f(t)))
  np.testing.assert_array_equal(np.asarray(xjax.grad(lambda v: f(v).sum())(x)),
                                np.ones(3, np.float32))


def test_polygamma_derivative_in_x_matches_finite_differences():
  x = np.array([0.6, 1.5, 3.2], np.float32)
  for m in (0.0, 1.0, 2.0):
    jtu.check_grads(lambda v: lax.polygamma(np.full(3, m, np.float32), v), (x,), order=2,
                    modes=("fwd", "rev"), rtol=2e-2, atol=2e-2)


def test_polygamma_is_not_differentiable_in_m():
  with pytest.raises(ValueError, match="polygamma gradient with respect to m"):
    xjax.grad(lambda m: lax.polygamma(m, 1.5))(1.0)


def test_nextafter_is_not_differentiable():
  # JAX 0.10.2: NotImplementedError: Differentiation rule for 'nextafter' not implemented
  with pytest.raises(NotImplementedError, match="nextafter"):
    xjax.grad(lambda x: lax.nextafter(x, 2.0))(1.0)


@pytest.mark.parametrize("x, expected", [(-1.0, -1.0), (0.0, 1.0), (2.0, 1.0)])
def test_abs_grad_matches_jax_at_and_around_zero(x, expected):
  assert float(xjax.grad(lax.abs)(x)) == expected


def test_abs_grad_of_complex_zero_is_zero():
  _, t = xjax.jvp(lax.abs, (np.complex64(0),), (np.complex64(1 + 1j),))
  assert float(t) == 0.0


@pytest.mark.parametrize("prim", [lax.max, lax.min])
def test_max_min_split_the_tangent_at_ties(prim):
  # JAX 0.10.2: jvp(lambda x: lax.max(x, 1.), (1.,), (1.,)) -> tangent 0.5.
  _, t = xjax.jvp(lambda x: prim(x, 1.0), (1.0,), (1.0,))
  assert float(t) == 0.5
  gx, gy = xjax.grad(prim, argnums=(0, 1))(2.0, 2.0)
  assert (float(gx), float(gy)) == (0.5, 0.5)


def test_integer_pow_grad_at_zero():
  assert float(xjax.grad(lambda x: lax.integer_pow(x, 2))(0.0)) == 0.0
  assert float(xjax.grad(lambda x: lax.integer_pow(x, 1))(0.0)) == 1.0
  assert float(xjax.grad(lambda x: lax.integer_pow(x, 0))(0.0)) == 0.0


def test_pow_with_integer_exponent_zero_has_zero_derivative_at_zero():
  g = xjax.grad(lambda x: lax.pow(x, np.int32(0)))(0.0)
  assert float(g) == 0.0


def test_pow_derivative_in_exponent_at_zero_base_is_zero():
  # JAX takes log(1) where x == 0: d/dy 0**y = 0 (not NaN).
  g = xjax.grad(lambda y: lax.pow(0.0, y), argnums=0)(2.0)
  assert float(g) == 0.0


def test_clamp_tangent_flows_through_the_chosen_bound():
  lo, x, hi = np.float32(-1), np.array([-2.0, 0.5, 3.0], np.float32), np.float32(1)
  g_lo, g_x, g_hi = xjax.grad(lambda a, b, c: lax.clamp(a, b, c).sum(), argnums=(0, 1, 2))(
      lo, x, hi)
  assert float(g_lo) == 1.0 and float(g_hi) == 1.0
  np.testing.assert_array_equal(np.asarray(g_x), [0.0, 1.0, 0.0])


@pytest.mark.parametrize("prim, dtype", [(lax.eq, F32), (lax.lt, F32), (lax.is_finite, F32),
                                         (lax.sign, F32), (lax.floor, F32), (lax.round, F32)])
def test_piecewise_constant_primitives_have_zero_tangents(prim, dtype):
  x = np.array([0.3, -1.7], dtype)
  args = (x, x) if prim in (lax.eq, lax.lt) else (x,)
  out, t = xjax.jvp(lambda *a: prim(*a), args, tuple(np.ones_like(a) for a in args))
  expected_dtype = core.get_aval(out).to_tangent_aval().dtype
  assert np.asarray(t).dtype == expected_dtype
  if expected_dtype.kind == "f":
    np.testing.assert_array_equal(np.asarray(t), np.zeros_like(np.asarray(t)))


def test_convert_to_integer_has_float0_tangent():
  _, t = xjax.jvp(lambda x: lax.convert_element_type(x, np.int32), (np.float32(2.5),),
                  (np.float32(1.0),))
  assert np.asarray(t).dtype == xjax.dtypes.float0


def test_integer_sub_of_float0_tangents_has_a_float0_tangent():
  # float -> int -> sub: both integer tangents are float0 values, not symbolic zeros.
  to_int = lambda x: lax.convert_element_type(x, np.int32)
  for f in (lambda x: lax.sub(to_int(x), to_int(2 * x)), lambda x: lax.sub(to_int(x), 3),
            lambda x: lax.sub(3, to_int(x))):
    out, t = xjax.jvp(f, (np.float32(2.5),), (np.float32(1.0),))
    assert np.asarray(t).dtype == xjax.dtypes.float0 and np.asarray(t).shape == ()


def test_convert_element_type_keeps_weak_type_in_the_cotangent():
  g = xjax.grad(lambda x: lax.convert_element_type(x, np.float32))(0.2)
  assert g.aval.weak_type  # JAX 0.10.2: Array(1., dtype=float32, weak_type=True)


def test_grads_of_weak_scalars_stay_weak():
  # JAX 0.10.2 prints weak_type=True for each of these.
  for f in (lax.sin, lax.sqrt, lambda x: x ** 3, lambda x: lax.integer_pow(x, 3), lax.asin):
    assert xjax.grad(f)(0.2).aval.weak_type
  assert not xjax.grad(lax.sqrt)(np.float32(2.0)).aval.weak_type


# ----------------------------------------------------------------------------
# Composites under jit and nested differentiation


def _mlp(w, b, x):
  h = lax.tanh(lax.add(lax.dot_general(x, w, (((1,), (0,)), ((), ()))), b))
  return lax.mul(lax.logistic(h), lax.sin(h))


def _composite(x):
  y = lax.select_n(lax.gt(x, np.float32(0)), lax.exp(x), lax.log1p(lax.square(x)))
  return lax.div(lax.atan2(y, lax.add(x, np.float32(3))), lax.sqrt(lax.add(lax.square(x),
                                                                             np.float32(1))))


COMPOSITE_ARGS = {
    "mlp": (_mlp, lambda rng: (rng.standard_normal((3, 4)).astype(np.float32),
                               rng.standard_normal((1, 4)).astype(np.float32),
                               rng.standard_normal((2, 3)).astype(np.float32))),
    "elementwise": (_composite, lambda rng: (rng.uniform(0.2, 2, (5,)).astype(np.float32)
                                             * rng.choice([-1, 1], 5).astype(np.float32),)),
}


@pytest.mark.parametrize("name", list(COMPOSITE_ARGS))
def test_composite_grads(name):
  fun, make = COMPOSITE_ARGS[name]
  args = make(np.random.default_rng(0))
  jtu.check_grads(fun, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", list(COMPOSITE_ARGS))
def test_composite_grads_under_jit(name):
  fun, make = COMPOSITE_ARGS[name]
  args = make(np.random.default_rng(1))
  jtu.check_grads(xjax.jit(fun), args, order=2, modes=("fwd", "rev"))


def _scalar_loss(fun):
  """sum(fun(*args)), as a contraction with ones (the composites' own primitives only)."""
  def loss(*args):
    y = fun(*args)
    dims = tuple(range(np.ndim(y)))
    return lax.dot_general(y, np.ones(np.shape(y), np.float32), ((dims, dims), ((), ())))
  return loss


@pytest.mark.parametrize("name", list(COMPOSITE_ARGS))
def test_jit_of_grad_matches_grad(name):
  fun, make = COMPOSITE_ARGS[name]
  args = make(np.random.default_rng(2))
  loss = _scalar_loss(fun)
  argnums = tuple(range(len(args)))
  eager = xjax.grad(loss, argnums)(*args)
  jitted = xjax.jit(xjax.grad(loss, argnums))(*args)
  grad_of_jit = xjax.grad(xjax.jit(loss), argnums)(*args)
  for e, j, gj in zip(eager, jitted, grad_of_jit, strict=True):
    np.testing.assert_allclose(np.asarray(j), np.asarray(e), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(gj), np.asarray(e), rtol=1e-5, atol=1e-6)


def test_grad_of_grad_of_scalar_functions():
  x = 0.7
  cases = [(lax.sin, -np.sin(x)), (lax.tanh, -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
           (lambda v: lax.integer_pow(v, 4), 12 * x ** 2), (lax.log, -1 / x ** 2),
           (lambda v: lax.atan2(v, 1.0), -2 * x / (1 + x ** 2) ** 2)]
  for f, expected in cases:
    np.testing.assert_allclose(float(xjax.grad(xjax.grad(f))(x)), expected, rtol=1e-5)
    np.testing.assert_allclose(float(xjax.jit(xjax.grad(xjax.grad(f)))(x)), expected, rtol=1e-5)


def test_float64_grads_are_tight(x64):
  # With x64 the finite differences are accurate: derivatives agree to ~1e-8.
  rng = np.random.default_rng(3)
  x = rng.uniform(0.3, 0.9, (4,))
  for f in (lax.tan, lax.acosh, lax.lgamma, lax.erf_inv, lax.digamma, lax.cbrt):
    arg = x + 1.0 if f is lax.acosh else x
    jtu.check_grads(f, (arg,), order=2, modes=("fwd", "rev"), eps=1e-6, atol=1e-7, rtol=1e-7)
  assert xjax.grad(lax.sin)(np.float64(0.5)).dtype == F64
