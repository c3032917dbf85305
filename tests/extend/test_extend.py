"""JAX's extension API (issue 22): `xjax.extend` and `xjax.interpreters`.

A primitive defined by a library, with its rules registered in JAX's tables
(``ad.primitive_jvps[p] = rule``, ``batching.primitive_batchers[p] = rule``,
``mlir.register_lowering(p, mlir.lower_fun(f))``), must evaluate, differentiate,
transpose, batch and compile as it would under JAX. Derivatives are checked against
finite differences, transformed results against eager evaluation.
"""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.extend import core as jex_core
from xjax.extend import linear_util as lu
from xjax.extend import random as jex_random
from xjax.extend import source_info_util
from xjax.interpreters import ad
from xjax.interpreters import batching
from xjax.interpreters import mlir
from xjax.interpreters import partial_eval as pe
from xjax.interpreters import xla
from xjax.test_util import check_grads


# ----------------------------------------------------------------------------
# A nonlinear primitive: y = sin(x) * scale, every rule through JAX's tables

sinx_p = jex_core.Primitive("sinx_test")
sinx_p.def_impl(lambda x, *, scale: jnp.sin(x) * scale)
sinx_p.def_abstract_eval(lambda x, *, scale: xjax.core.ShapedArray(x.shape, x.dtype))


def sinx(x, scale=2.0):
  return sinx_p.bind(x, scale=scale)


def _sinx_jvp(primals, tangents, *, scale):
  (x,), (t,) = primals, tangents
  y = sinx(x, scale)
  if type(t) is ad.Zero:
    return y, ad.Zero.from_primal_value(y)
  return y, jnp.cos(x) * scale * t


def _sinx_batch(batched_args, batch_dims, *, scale):
  (x,), (d,) = batched_args, batch_dims
  return sinx(x, scale), d


ad.primitive_jvps[sinx_p] = _sinx_jvp
batching.primitive_batchers[sinx_p] = _sinx_batch
mlir.register_lowering(sinx_p, mlir.lower_fun(lambda x, *, scale: jnp.sin(x) * scale,
                                              multiple_results=False))

X = np.array([0.3, -1.2, 2.0], np.float32)
XS = np.array([[0.3, -1.2, 2.0], [1.0, 0.5, -0.7]], np.float32)


def test_custom_primitive_eager_and_jit():
  expected = np.sin(X) * 2.0
  np.testing.assert_allclose(sinx(X), expected, rtol=1e-6)
  np.testing.assert_allclose(xjax.jit(sinx)(X), expected, rtol=1e-6)
  jaxpr = xjax.make_jaxpr(sinx)(X)
  assert "sinx_test[scale=2.0]" in str(jaxpr)


def test_custom_primitive_derivatives_against_finite_differences():
  f = lambda x: jnp.sum(sinx(x) ** 2)
  check_grads(sinx, (X,), order=2, modes=("fwd", "rev"))
  # f sums to about 5: float32 rounding over the default 1e-4 step (5 * 6e-8 / 1e-4) is the
  # tolerance itself; a 3e-3 step balances rounding against truncation.
  check_grads(f, (X,), order=1, eps=3e-3)
  np.testing.assert_allclose(xjax.grad(f)(X), 2 * (2 * np.sin(X)) * 2 * np.cos(X), rtol=1e-5)
  np.testing.assert_allclose(xjax.jit(xjax.grad(f))(X), xjax.grad(f)(X), rtol=1e-6)


def test_custom_primitive_linearize_and_vjp():
  y, f_lin = xjax.linearize(sinx, X)
  t = np.array([1.0, 2.0, -1.0], np.float32)
  np.testing.assert_allclose(y, np.sin(X) * 2, rtol=1e-6)
  np.testing.assert_allclose(f_lin(t), 2 * np.cos(X) * t, rtol=1e-5)
  _, vjp = xjax.vjp(sinx, X)
  np.testing.assert_allclose(vjp(t)[0], 2 * np.cos(X) * t, rtol=1e-5)


def test_custom_primitive_vmap_and_vmap_of_grad():
  np.testing.assert_allclose(xjax.vmap(sinx)(XS), np.sin(XS) * 2, rtol=1e-6)
  np.testing.assert_allclose(xjax.vmap(sinx, in_axes=1, out_axes=1)(XS), np.sin(XS) * 2,
                             rtol=1e-6)
  g = xjax.vmap(xjax.grad(lambda x: jnp.sum(sinx(x))))
  np.testing.assert_allclose(g(XS), 2 * np.cos(XS), rtol=1e-5)
  np.testing.assert_allclose(xjax.jit(g)(XS), 2 * np.cos(XS), rtol=1e-5)
  np.testing.assert_allclose(xjax.grad(lambda x: jnp.sum(xjax.vmap(sinx)(x)))(XS),
                             2 * np.cos(XS), rtol=1e-5)


def test_custom_primitive_rules_read_back_in_jax_signature():
  assert ad.primitive_jvps[sinx_p] is _sinx_jvp
  assert batching.primitive_batchers[sinx_p] is _sinx_batch
  assert sinx_p in ad.primitive_jvps and sinx_p not in ad.primitive_transposes
  assert sinx_p in list(batching.primitive_batchers)


def test_missing_rules_get_jax_errors():
  p = jex_core.Primitive("no_rules_test")
  p.def_abstract_eval(lambda x: x)
  with pytest.raises(NotImplementedError, match="Differentiation rule for 'no_rules_test'"):
    xjax.jvp(lambda x: p.bind(x), (X,), (X,))
  with pytest.raises(NotImplementedError, match="Batching rule for 'no_rules_test'"):
    xjax.vmap(lambda x: p.bind(x))(XS)
  with pytest.raises(NotImplementedError,
                     match="Transpose rule .* for 'no_rules_test' not implemented"):
    ad.get_primitive_transpose(p)


# ----------------------------------------------------------------------------
# Linear primitives: deflinear (JAX's transpose_rule(ct, **params)) and deflinear2


scale_p = jex_core.Primitive("scale_test")
scale_p.def_abstract_eval(lambda x, *, c: xjax.core.ShapedArray(x.shape, x.dtype))
mlir.register_lowering(scale_p, mlir.lower_fun(lambda x, *, c: x * c, multiple_results=False))
ad.deflinear(scale_p, lambda ct, *, c: [scale_p.bind(ct, c=c)])
batching.defvectorized(scale_p)

flip_p = jex_core.Primitive("flip_test")  # y = x[::-1]; its transpose is itself
flip_p.def_abstract_eval(lambda x: xjax.core.ShapedArray(x.shape, x.dtype))
mlir.register_lowering(flip_p, mlir.lower_fun(lambda x: lax.rev(x, (0,)), multiple_results=False))
ad.deflinear2(flip_p, lambda ct, x: [flip_p.bind(ct)])


def _flip_batch(args, dims):
  (x,), (d,) = args, dims
  x = batching.bdim_at_front(x, d, x.shape[d])
  return xjax.vmap(lambda r: lax.rev(r, (0,)))(x), 0


batching.primitive_batchers[flip_p] = _flip_batch


def test_linear_primitives_differentiate_and_transpose():
  f = lambda x: jnp.sum(jnp.sin(scale_p.bind(x, c=3.0)) * jnp.arange(3.0))
  check_grads(f, (X,), order=2)
  np.testing.assert_allclose(xjax.grad(f)(X), 3 * np.cos(3 * X) * np.arange(3.0), rtol=1e-5)
  g = lambda x: jnp.sum(flip_p.bind(x) * jnp.arange(3.0))
  np.testing.assert_allclose(flip_p.bind(X), X[::-1])
  np.testing.assert_allclose(xjax.grad(g)(X), np.arange(3.0)[::-1])
  check_grads(lambda x: flip_p.bind(jnp.sin(x)), (X,), order=1)
  t = xjax.linear_transpose(lambda x: flip_p.bind(scale_p.bind(x, c=2.0)), X)
  np.testing.assert_allclose(t(np.arange(3.0, dtype=np.float32))[0], 2 * np.arange(3.0)[::-1])


def test_linear_primitives_under_vmap():
  np.testing.assert_allclose(xjax.vmap(lambda x: scale_p.bind(x, c=2.0))(XS), 2 * XS)
  np.testing.assert_allclose(xjax.vmap(flip_p.bind)(XS), XS[:, ::-1])
  np.testing.assert_allclose(xjax.vmap(flip_p.bind, in_axes=1, out_axes=1)(XS.T), XS.T[::-1])
  g = xjax.jit(xjax.vmap(xjax.grad(lambda x: jnp.sum(flip_p.bind(x) ** 2))))
  np.testing.assert_allclose(g(XS), 2 * XS, rtol=1e-6)


# ----------------------------------------------------------------------------
# A multiple-results primitive with the other batcher tables


def _sincos_impl(x, *, shift):
  return [jnp.sin(x) + shift, jnp.cos(x)]


sincos_p = jex_core.Primitive("sincos_test")
sincos_p.multiple_results = True
sincos_p.def_impl(_sincos_impl)
sincos_p.def_abstract_eval(lambda x, *, shift: [xjax.core.ShapedArray(x.shape, x.dtype)] * 2)
mlir.register_lowering(sincos_p, mlir.lower_fun(_sincos_impl, multiple_results=True))
seen_axis = []


def _sincos_jvp(primals, tangents, *, shift):
  (x,), (t,) = primals, tangents
  s, c = sincos_p.bind(x, shift=shift)
  t = ad.instantiate_zeros(t)
  return [s, c], [c * t, -(s - shift) * t]


def _sincos_fancy_batch(axis_data, args, dims, *, shift):
  seen_axis.append((axis_data.size, axis_data.name))
  return sincos_p.bind(*args, shift=shift), [dims[0], dims[0]]


ad.primitive_jvps[sincos_p] = _sincos_jvp
batching.fancy_primitive_batchers[sincos_p] = _sincos_fancy_batch


def test_multiple_results_primitive():
  s, c = sincos_p.bind(X, shift=1.0)
  np.testing.assert_allclose(s, np.sin(X) + 1, rtol=1e-6)
  js, jc = xjax.jit(lambda x: sincos_p.bind(x, shift=1.0))(X)
  np.testing.assert_allclose(jc, np.cos(X), rtol=1e-6)
  f = lambda x: jnp.sum(sincos_p.bind(x, shift=1.0)[0] * sincos_p.bind(x, shift=0.0)[1])
  # f sums to about 5: float32 rounding over the default 1e-4 step (5 * 6e-8 / 1e-4) is the
  # tolerance itself; a 3e-3 step balances rounding against truncation.
  check_grads(f, (X,), order=1, eps=3e-3)
  seen_axis.clear()
  out = xjax.vmap(lambda x: sincos_p.bind(x, shift=0.5), axis_name="i")(XS)
  np.testing.assert_allclose(out[0], np.sin(XS) + 0.5, rtol=1e-6)
  assert seen_axis == [(2, "i")]
  np.testing.assert_allclose(xjax.vmap(xjax.grad(f))(XS),
                             np.stack([xjax.grad(f)(r) for r in XS]), rtol=1e-5)


def test_axis_primitive_batchers_signature():
  p = jex_core.Primitive("axis_batch_test")
  p.def_abstract_eval(lambda x: x)
  p.def_impl(lambda x: x)
  mlir.register_lowering(p, mlir.lower_fun(lambda x: x, multiple_results=False))
  calls = []

  def rule(axis_size, axis_name, main, args, dims):
    calls.append((axis_size, axis_name, main))
    return p.bind(args[0] * 10), dims[0]

  batching.axis_primitive_batchers[p] = rule
  np.testing.assert_allclose(xjax.vmap(p.bind)(XS), XS * 10)
  assert calls == [(2, None, None)]
  assert batching.axis_primitive_batchers[p] is rule


def test_tables_view_xjax_rules():
  x = np.arange(3.0, dtype=np.float32)
  out, tangent = ad.primitive_jvps[lax.sin_p]((x,), (np.ones(3, np.float32),), accuracy=None)
  np.testing.assert_allclose(tangent, np.cos(x), rtol=1e-6)
  out, dim = batching.primitive_batchers[lax.add_p]((XS, x), (0, None))
  np.testing.assert_allclose(out, XS + x)
  assert dim == 0
  out, dim = batching.primitive_batchers[lax.add_p]((x, x), (None, None))
  np.testing.assert_allclose(out, 2 * x)
  assert dim is None
  assert lax.mul_p in ad.primitive_transposes and lax.sin_p not in ad.primitive_transposes
  linear_x = ad.UndefinedPrimal(xjax.core.ShapedArray((3,), np.float32))
  cts = ad.get_primitive_transpose(lax.neg_p)(x, linear_x)
  np.testing.assert_allclose(cts[0], -x)
  with pytest.raises(TypeError, match="primitive_jvps keys must be primitives"):
    ad.primitive_jvps["sin"] = _sinx_jvp
  with pytest.raises(NotImplementedError, match="Transpose rule .* for 'sin' not implemented"):
    ad.get_primitive_transpose(lax.sin_p)


def test_import_xjax_makes_interpreters_available():
  assert xjax.interpreters.ad is ad and xjax.interpreters.batching is batching
  assert xjax.interpreters.mlir is mlir and xjax.interpreters.partial_eval is pe


def test_zero_instantiate_and_bind_params():
  z = ad.Zero(xjax.core.ShapedArray((2,), np.float32))
  np.testing.assert_array_equal(z.instantiate(), np.zeros(2, np.float32))
  np.testing.assert_array_equal(ad.instantiate_zeros(z), np.zeros(2, np.float32))
  assert sinx_p.get_bind_params({"scale": 2.0}) == {"scale": 2.0}


def test_deleting_a_rule():
  p = jex_core.Primitive("delete_test")
  ad.primitive_jvps[p] = _sinx_jvp
  assert p in ad.primitive_jvps
  del ad.primitive_jvps[p]
  assert p not in ad.primitive_jvps
  with pytest.raises(KeyError):
    ad.primitive_jvps[p]


# ----------------------------------------------------------------------------
# Hand-written lowering rules


def test_hand_written_rule_with_python_callback_and_ir_constant():
  p = jex_core.Primitive("callback_test")
  p.def_abstract_eval(lambda x: xjax.core.ShapedArray(x.shape, x.dtype))
  host_calls = []

  def on_host(x):
    host_calls.append(x.shape)
    return [np.asarray(x * 3, x.dtype)]

  def rule(ctx, x):
    (y,), _, keepalive = mlir.emit_python_callback(
        ctx, on_host, None, [x], ctx.avals_in, ctx.avals_out, has_side_effect=False)
    ctx.module_context.add_keepalive(keepalive)
    (one,) = mlir.ir_constants(np.ones(ctx.avals_out[0].shape, np.float32))
    return mlir.lower_fun(lambda a, b: a + b, multiple_results=False)(
        ctx.replace(avals_in=[ctx.avals_out[0]] * 2), y, one)

  mlir.register_lowering(p, rule)
  np.testing.assert_allclose(xjax.jit(p.bind)(X), X * 3 + 1, rtol=1e-6)
  np.testing.assert_allclose(p.bind(X), X * 3 + 1, rtol=1e-6)  # no impl: compiled eagerly
  assert host_calls and host_calls[0] == (3,)


def test_rule_building_mlir_ops_is_rejected_naming_the_primitive():
  p = jex_core.Primitive("raw_mlir_test")
  p.def_abstract_eval(lambda x: x)
  mlir.register_lowering(p, lambda ctx, x: [object()])
  with pytest.raises(NotImplementedError, match="primitive 'raw_mlir_test'"):
    xjax.jit(p.bind)(X)


def test_rule_calling_mlir_bindings_is_rejected_naming_the_primitive():
  hlo = pytest.importorskip("jaxlib.mlir.dialects.stablehlo")
  p = jex_core.Primitive("mlir_bindings_test")
  p.def_abstract_eval(lambda x: x)
  mlir.register_lowering(p, lambda ctx, x: [hlo.add(x, x)])
  with pytest.raises(NotImplementedError, match="'mlir_bindings_test' calls MLIR Python bind"):
    xjax.jit(p.bind)(X)


def _primitive_with_rules(name, *rules):
  p = jex_core.Primitive(name)
  p.def_abstract_eval(lambda x: x)
  for platform, k in rules:
    mlir.register_lowering(p, mlir.lower_fun(lambda x, k=k: x + k, multiple_results=False),
                           platform)
  return p


def test_platform_specific_rule_takes_precedence():
  platform = xjax.default_backend()
  other = "tpu" if platform != "tpu" else "cpu"
  p = _primitive_with_rules("common_rule_test", (None, 1.0), (other, 5.0))
  np.testing.assert_allclose(xjax.jit(p.bind)(X), X + 1)
  p = _primitive_with_rules("own_platform_rule_test", (None, 1.0), (platform, 2.0))
  np.testing.assert_allclose(xjax.jit(p.bind)(X), X + 2)
  p = _primitive_with_rules("gpu_alias_test", (None, 1.0), ("gpu", 3.0))
  np.testing.assert_allclose(xjax.jit(p.bind)(X), X + (3 if platform in ("cuda", "rocm") else 1))
  with pytest.raises(NotImplementedError, match="unknown platform metal_test"):
    mlir.register_lowering(p, mlir.lower_fun(lambda x: x), "metal_test")


def test_only_other_platform_rule_is_an_error():
  p = jex_core.Primitive("tpu_only_test")
  p.def_abstract_eval(lambda x: x)
  other = "tpu" if xjax.default_backend() != "tpu" else "cpu"
  mlir.register_lowering(p, mlir.lower_fun(lambda x: x, multiple_results=False), other)
  with pytest.raises(NotImplementedError, match="'tpu_only_test' not found for platform"):
    xjax.jit(p.bind)(X)


def test_xla_apply_primitive():
  np.testing.assert_allclose(xla.apply_primitive(lax.add_p, X, X), 2 * X)


# ----------------------------------------------------------------------------
# linear_util and partial_eval


def _debug(f):
  return xjax.api_util.debug_info("test", f, (), {})


def test_linear_util_transformations():
  @lu.transformation2
  def add_one(f, *args):
    return [y + 1 for y in f(*args)]

  @lu.transformation_with_aux2
  def count(f, store, *args):
    out = f(*args)
    store.store(len(out))
    return out

  wrapped = lu.wrap_init(lambda x, y: [x * y, x - y], debug_info=_debug(lambda x, y: 0))
  fun, aux = count(add_one(wrapped))
  assert fun.call_wrapped(3.0, 2.0) == [7.0, 2.0]
  assert aux() == 2
  with pytest.raises(lu.StoreException):
    fun2, aux2 = count(wrapped)
    aux2()

  @lu.transformation
  def double(*args):
    out = yield args, {}
    yield [2 * y for y in out]

  assert double(wrapped).call_wrapped(3.0, 1.0) == [6.0, 4.0]
  with_params = lu.wrap_init(lambda x, *, k: [x * k], {"k": 5.0}, debug_info=_debug(lambda x: 0))
  assert with_params.call_wrapped(2.0) == [10.0]
  with pytest.warns(DeprecationWarning, match="missing a DebugInfo"):
    lu.wrap_init(lambda: [])


def test_merge_linear_aux():
  full = lambda: 1

  def raise_empty():
    raise lu.StoreException("Store empty")

  assert lu.merge_linear_aux(full, raise_empty) == (True, 1)
  assert lu.merge_linear_aux(raise_empty, full) == (False, 1)
  with pytest.raises(lu.StoreException, match="neither"):
    lu.merge_linear_aux(raise_empty, raise_empty)
  with pytest.raises(lu.StoreException, match="both"):
    lu.merge_linear_aux(full, full)


def test_lu_cache_refills_stores():
  calls = []

  def trace(fun, n):
    calls.append(n)
    return fun.call_wrapped(n)

  cached = lu.cache(trace)
  base = lambda x: [x + 1]

  @lu.transformation_with_aux2
  def tag(f, store, *args):
    store.store("aux")
    return f(*args)

  def make():
    return tag(lu.wrap_init(base, debug_info=_debug(base)))

  f1, aux1 = make()
  assert cached(f1, 1) == [2] and aux1() == "aux"
  f2, aux2 = make()
  assert cached(f2, 1) == [2] and aux2() == "aux"
  assert calls == [1]


def test_trace_to_jaxpr_nounits_splits_known_and_unknown():
  def f(x, y):
    a = jnp.sin(x) * 2  # known
    return [a, a * y, x + 1]

  fun = lu.wrap_init(f, debug_info=_debug(f))
  aval = xjax.core.ShapedArray((3,), np.float32)
  jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(
      fun, [pe.PartialVal.known(X), pe.PartialVal.unknown(aval)])
  assert out_pvals[0].is_known() and not out_pvals[1].is_known()
  np.testing.assert_allclose(out_pvals[0].get_known(), np.sin(X) * 2, rtol=1e-6)
  np.testing.assert_allclose(out_pvals[2][1], X + 1)
  assert out_pvals[1][0] == aval
  assert len(jaxpr.invars) == 1 and len(jaxpr.outvars) == 1
  y = np.array([1.0, 2.0, 3.0], np.float32)
  np.testing.assert_allclose(xjax.core.eval_jaxpr(jaxpr, consts, y)[0], np.sin(X) * 2 * y,
                             rtol=1e-6)
  _, out_pvals, _ = pe.trace_to_jaxpr_nounits(
      lu.wrap_init(f, debug_info=_debug(f)),
      [pe.PartialVal.known(X), pe.PartialVal.unknown(aval)], instantiate=True)
  assert not any(pv.is_known() for pv in out_pvals)


def test_trace_to_jaxpr_dynamic():
  f = lambda x: [jnp.cos(x) + 1]
  aval = xjax.core.ShapedArray((3,), np.float32)
  jaxpr, out_avals, consts = pe.trace_to_jaxpr_dynamic(lu.wrap_init(f, debug_info=_debug(f)),
                                                       [aval])
  assert out_avals == [aval] and consts == []
  np.testing.assert_allclose(xjax.core.eval_jaxpr(jaxpr, consts, X)[0], np.cos(X) + 1,
                             rtol=1e-6)
  used_jaxpr, used = pe.dce_jaxpr(jaxpr, [True])
  assert used == [True]


# ----------------------------------------------------------------------------
# jax.extend.core helpers, call primitives, random, source info


def test_core_helpers():
  aval = xjax.core.ShapedArray((2, 3), np.float32)
  assert jex_core.mapped_aval(2, 0, aval).shape == (3,)
  assert jex_core.mapped_aval(3, 1, aval).shape == (2,)
  assert jex_core.mapped_aval(2, None, aval) is aval
  with pytest.raises(ValueError):
    jex_core.mapped_aval(5, 0, aval)
  assert jex_core.unmapped_aval(4, 2, aval).shape == (2, 3, 4)
  assert jex_core.unmapped_aval(4, 0, aval).shape == (4, 2, 3)
  with pytest.raises(ValueError):
    jex_core.unmapped_aval(4, -1, aval)
  assert jex_core.primal_dtype_to_tangent_dtype(np.dtype(np.int32)) == xjax.dtypes.float0
  assert jex_core.primal_dtype_to_tangent_dtype(np.dtype(np.float16)) == np.float16
  a, b = jex_core.Var(aval), jex_core.Var(aval)
  eqn = jex_core.new_jaxpr_eqn([a], [b], lax.neg_p, {}, jex_core.no_effects)
  jaxpr = jex_core.Jaxpr([], [a], [b], [eqn])
  jex_core.check_jaxpr(jaxpr)
  np.testing.assert_allclose(jex_core.jaxpr_as_fun(jex_core.ClosedJaxpr(jaxpr, []))(XS)[0], -XS)
  assert jex_core.concrete_or_error(int, 3.0) == 3
  with pytest.raises(xjax.errors.ConcretizationTypeError):
    xjax.jit(lambda x: jex_core.concrete_or_error(float, x, "ctx"))(1.0)
  assert np.ndarray in jex_core.array_types
  assert isinstance(aval, xjax.core.AbstractValue)
  assert isinstance(jex_core.AbstractToken(), xjax.core.AbstractValue)


def test_opaque_trace_state_and_top_trace():
  outside = jex_core.get_opaque_trace_state()
  assert outside == jex_core.get_opaque_trace_state(convention="nnx")
  states = []
  xjax.jit(lambda x: states.append(jex_core.get_opaque_trace_state()) or x)(1.0)
  assert states[0] != outside
  traces = []
  xjax.vmap(lambda x: traces.append(jex_core.find_top_trace((x,))) or x)(X)
  assert type(traces[0]).__name__ == "BatchTrace"
  assert not jex_core.unsafe_am_i_under_a_jit_DO_NOT_USE()
  flags = []
  xjax.jit(xjax.vmap(lambda x: flags.append(
      (jex_core.unsafe_am_i_under_a_jit_DO_NOT_USE(),
       jex_core.unsafe_am_i_under_a_vmap_DO_NOT_USE(),
       jex_core.unsafe_get_axis_names_DO_NOT_USE())) or x, axis_name="b"))(X)
  assert flags == [(True, True, ["b"])]
  with jex_core.take_current_trace() as parent:
    with jex_core.set_current_trace(parent):
      assert float(jnp.sin(0.0)) == 0.0


def test_closed_call_primitive():
  prims = jex_core.primitives
  closed = xjax.make_jaxpr(lambda x: jnp.sin(x) * x)(X)
  f = lambda x: prims.closed_call_p.bind(x, call_jaxpr=closed)[0]
  expected = np.sin(X) * X
  np.testing.assert_allclose(f(X), expected, rtol=1e-6)
  np.testing.assert_allclose(xjax.jit(f)(X), expected, rtol=1e-6)
  # f sums to about 5: float32 rounding over the default 1e-4 step (5 * 6e-8 / 1e-4) is the
  # tolerance itself; a 3e-3 step balances rounding against truncation.
  check_grads(f, (X,), order=1, eps=3e-3)
  np.testing.assert_allclose(xjax.vmap(f)(np.stack([X, X])), np.stack([expected] * 2), rtol=1e-6)
  g = lambda x: jnp.sum(xjax.jit(f)(x))
  np.testing.assert_allclose(xjax.grad(g)(X), np.cos(X) * X + np.sin(X), rtol=1e-5)
  assert prims.jit_p is xjax.extend.core.primitives.jit_p
  assert prims.add_p is lax.add_p and prims.add_jaxvals_p is ad.add_jaxvals_p


def test_eval_jaxpr_p_binds_a_closed_call():
  from xjax._src.lax.eval_jaxpr import eval_jaxpr_p
  closed = xjax.make_jaxpr(lambda x: [x ** 3])(X)
  f = lambda x: eval_jaxpr_p.bind(x, jaxpr=closed)[0]
  np.testing.assert_allclose(f(X), X ** 3, rtol=1e-6)
  np.testing.assert_allclose(xjax.grad(lambda x: f(x).sum())(X), 3 * X ** 2, rtol=1e-5)
  np.testing.assert_allclose(xjax.vmap(f)(np.stack([X, X])), np.stack([X ** 3] * 2),
                             rtol=1e-6)
  # Staged as JAX stages it: a closed_call of the jaxpr.
  assert [e.primitive.name for e in xjax.make_jaxpr(f)(X).eqns] == ["closed_call"]


def test_call_primitive_and_linearize_through_calls():
  prims = jex_core.primitives
  open_jaxpr = xjax.make_jaxpr(lambda x, y: jnp.exp(x) * y)(X, X).jaxpr
  f = lambda x, y: prims.call_p.bind(x, y, call_jaxpr=open_jaxpr)[0]
  np.testing.assert_allclose(xjax.jit(f)(X, X), np.exp(X) * X, rtol=1e-6)
  y, f_lin = xjax.linearize(lambda x: f(x, X), X)
  np.testing.assert_allclose(f_lin(np.ones(3, np.float32)), np.exp(X) * X, rtol=1e-5)
  check_grads(f, (X, X), order=1)
  with pytest.raises(TypeError, match="closed_call takes 1 arguments, got 2"):
    prims.closed_call_p.bind(X, X, call_jaxpr=xjax.make_jaxpr(jnp.sin)(X))


def test_threefry_2x32_matches_jax():
  key = (np.uint32(1), np.uint32(2))
  # Recorded with JAX 0.10.2's jax.extend.random.threefry_2x32.
  np.testing.assert_array_equal(
      jex_random.threefry_2x32(key, np.arange(5, dtype=np.uint32)),
      [2052595727, 3504730591, 2527474599, 1880214352, 1914734168])
  np.testing.assert_array_equal(
      jex_random.threefry_2x32(key, np.arange(6, dtype=np.uint32).reshape(2, 3)),
      [[2052595727, 3504730591, 1038787879], [1880214352, 1914734168, 1027009547]])
  with pytest.raises(TypeError, match="uint32"):
    jex_random.threefry_2x32((np.int32(1), np.uint32(2)), np.arange(4, dtype=np.uint32))


def test_define_prng_impl_is_the_builtin_when_given_its_functions():
  impl = jex_random.threefry_prng_impl
  same = jex_random.define_prng_impl(
      key_shape=impl.key_shape, seed=impl.seed, split=impl.split,
      random_bits=impl.random_bits, fold_in=impl.fold_in, name="copy", tag="fry")
  assert same.key_shape == (2,) and same.tag == "fry"
  k = jex_random.seed_with_impl(impl, 0)
  np.testing.assert_array_equal(xjax.random.key_data(k), xjax.random.key_data(xjax.random.key(0)))


def test_register_exclusion(tmp_path):
  from xjax._src import source_info
  path = str(tmp_path)
  assert not source_info._is_internal(path + "/lib.py")
  source_info_util.register_exclusion(path)
  try:
    assert source_info._is_internal(path + "/lib.py")
  finally:
    source_info._exclusions.remove(path)
    source_info._internal_cache.clear()


def test_custom_jvp_equations_rebind_from_jax_bind_params():
  # An interpreter re-binds an equation as JAX's do (equinox's finalise_jaxpr):
  # `eqn.primitive.bind(*invals, **eqn.primitive.get_bind_params(eqn.params))`, where a
  # custom_jvp_call's params carry `subfuns=(fun, jvp)`, WrappedFuns over all operands.
  @xjax.custom_jvp
  def f(x, y):
    return jnp.sin(x) * y
  f.defjvp(lambda p, t: (f(*p), 2.0 * t[0] + 3.0 * t[1]))

  closed = xjax.make_jaxpr(lambda x: f(x, x * 2))(1.0)
  (eqn,) = [e for e in closed.jaxpr.eqns if e.primitive.name == "custom_jvp_call"]
  assert eqn.effects == frozenset()
  params = eqn.primitive.get_bind_params(eqn.params)
  fun, jvp = params["subfuns"]
  assert isinstance(fun, lu.WrappedFun) and isinstance(jvp, lu.WrappedFun)
  np.testing.assert_allclose(fun.call_wrapped(1.0, 2.0)[0], np.sin(1.0) * 2.0, rtol=1e-6)

  def rebound(x):
    return eqn.primitive.bind(x, x * 2, **params)[0]
  for g in (rebound, xjax.jit(rebound)):
    out, tangent = xjax.jvp(g, (1.0,), (1.0,))
    np.testing.assert_allclose(out, np.sin(1.0) * 2.0, rtol=1e-6)
    assert float(tangent) == 8.0  # the custom rule's, not sin's derivative
  np.testing.assert_allclose(xjax.vmap(rebound)(jnp.ones(2)), [np.sin(1.0) * 2.0] * 2,
                             rtol=1e-6)
  assert float(xjax.grad(rebound)(1.0)) == 8.0
