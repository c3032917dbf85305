"""Records custom-derivative goldens (tests/golden/custom_derivatives.json) with *real* JAX.

Run with the reference virtualenv (never with xjax):

    .venv-jax/bin/python tools/golden_custom_derivatives.py

`cases(jax, jnp, cd, api)` below is shared with tests/core/test_custom_gradient.py,
which loads this file by path and runs the same code under xjax (this module
imports no library at top level). `cd` is the custom_derivatives module, `api`
has `linear_transpose` and `fwd_and_bwd`. Each case is ``(case_id, kind, thunk)``:

* ``value``: `thunk()` returns a pytree of arrays, recorded as its treedef and, per
  leaf, dtype, shape, weak type and values;
* ``error``: `thunk()` raises; recorded as the error class name and message.
"""
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "tests", "golden", "custom_derivatives.json")


def cases(jax, jnp, cd, api):
  """The cases, as ``(case_id, kind, thunk)``."""
  out = []

  def value(case_id, thunk):
    out.append((case_id, "value", thunk))

  def error(case_id, thunk):
    out.append((case_id, "error", thunk))

  f32 = jnp.float32
  xs = jnp.arange(3.0)

  # --- custom_gradient
  @cd.custom_gradient
  def square(x):
    return x ** 2, lambda g: (g * x,)

  value("cg_value_and_grad", lambda: (square(f32(3.)), jax.grad(square)(f32(3.))))
  value("cg_jit_grad", lambda: jax.jit(jax.grad(square))(f32(3.)))
  value("cg_grad_jit", lambda: jax.grad(jax.jit(square))(f32(3.)))
  value("cg_vmap_grad", lambda: jax.vmap(jax.grad(square))(xs))
  value("cg_grad_vmap", lambda: jax.grad(lambda x: jax.vmap(square)(x).sum())(xs))
  value("cg_grad_of_grad", lambda: jax.grad(jax.grad(square))(f32(3.)))
  value("cg_vjp", lambda: jax.vjp(square, xs)[1](jnp.ones(3)))

  @cd.custom_gradient
  def mul(x, y):
    return x * y, lambda ct: (ct * y, ct * x)

  value("cg_two_args", lambda: jax.grad(mul, argnums=(0, 1))(f32(3.), f32(4.)))

  @cd.custom_gradient
  def single(x):
    return x * 2., lambda ct: ct * 5.

  value("cg_single_cotangent_not_tuple", lambda: jax.grad(single)(f32(1.)))

  @cd.custom_gradient
  def dict_fn(d):
    return d["a"] * d["b"], lambda ct: ({"a": ct * d["b"], "b": ct * d["a"]},)

  value("cg_dict_arg", lambda: jax.grad(dict_fn)({"a": f32(2.), "b": f32(3.)}))

  @cd.custom_gradient
  def two_out(x):
    return (x, 2 * x), lambda ct: (ct[0] + 3 * ct[1],)

  value("cg_tuple_out", lambda: jax.grad(lambda x: two_out(x)[1])(f32(1.)))

  @cd.custom_gradient
  def clip_grad(x):
    y = jnp.sin(x)
    return y, lambda g: (jnp.clip(g * jnp.cos(x), -0.5, 0.5),)

  value("cg_closes_over_intermediates_jit",
        lambda: jax.jit(jax.vmap(jax.grad(clip_grad)))(jnp.array([0.1, 2.0, 3.0])))
  error("cg_jvp", lambda: jax.jvp(square, (f32(3.),), (f32(1.),)))

  @cd.custom_gradient
  def bad(x):
    return x, lambda ct: (ct, ct)

  error("cg_bad_structure", lambda: jax.grad(bad)(f32(1.)))
  error("cg_kwarg", lambda: jax.grad(lambda x: mul(x, y=f32(2.)))(f32(1.)))

  # --- closure_convert
  a = f32(3.)
  value("cc_concrete_not_hoisted",
        lambda: jnp.int32(len(cd.closure_convert(lambda x: x * a, f32(1.))[1])))

  def hoisted(b):
    fn, consts = cd.closure_convert(lambda x: x * b, f32(1.))
    return fn(f32(2.), *consts), jnp.int32(len(consts))

  value("cc_grad_hoists_tracer", lambda: jax.grad(lambda b: hoisted(b)[0])(f32(3.)))
  value("cc_jit_hoists", lambda: jax.jit(hoisted)(f32(3.)))
  value("cc_vmap_keeps", lambda: jax.vmap(hoisted)(xs))

  def int_closure(n):
    fn, consts = cd.closure_convert(lambda x: x * n, f32(1.))
    return fn(f32(2.), *consts), jnp.int32(len(consts))

  value("cc_jit_int_not_hoisted", lambda: jax.jit(int_closure)(3))

  def tree_closure(b):
    fn, consts = cd.closure_convert(lambda x, y: {"s": x["p"] * b, "t": (y, b)},
                                    {"p": f32(1.)}, f32(2.))
    return fn({"p": f32(2.)}, f32(5.), *consts)

  value("cc_pytree_in_out", lambda: jax.jit(tree_closure)(f32(3.)))
  error("cc_bad_tree", lambda: cd.closure_convert(lambda x: x + 1., f32(1.))[0]((1., 2.)))

  # The pattern closure_convert is for: a custom_vjp of a higher-order function.
  def _apply(fn, x, *args):
    return fn(x, *args)

  apply = cd.custom_vjp(_apply, nondiff_argnums=(0,))

  def apply_fwd(fn, x, *args):
    return fn(x, *args), (x, args)

  def apply_bwd(fn, res, g):
    x, args = res
    _, vjp = jax.vjp(fn, x, *args)
    return vjp(g)

  apply.defvjp(apply_fwd, apply_bwd)

  def use_apply(x, c):
    fn, consts = cd.closure_convert(lambda x: jnp.sin(x) * c, x)
    return apply(fn, x, *consts)

  value("cc_custom_vjp_grads_closed_over",
        lambda: jax.grad(use_apply, argnums=(0, 1))(f32(0.5), f32(2.)))
  value("cc_custom_vjp_jit_grad",
        lambda: jax.jit(jax.grad(use_apply, argnums=(0, 1)))(f32(0.5), f32(2.)))

  # --- symbolic zeros: custom_jvp
  seen = []

  @cd.custom_jvp
  def sj(x, y):
    return x * y

  def sj_jvp(p, t):
    (x, y), (tx, ty) = p, t
    seen.append((type(tx) is cd.SymbolicZero, type(ty) is cd.SymbolicZero))
    tx = 0. if type(tx) is cd.SymbolicZero else tx * y
    ty = 0. if type(ty) is cd.SymbolicZero else x * ty
    return x * y, tx + ty

  def with_seen(thunk):
    def run():
      seen.clear()
      return thunk(), jnp.array(seen, dtype=bool).reshape(-1)
    return run

  sj.defjvp(sj_jvp)
  value("sj_off_grad", with_seen(lambda: jax.grad(sj)(f32(2.), f32(3.))))
  sj2 = cd.custom_jvp(lambda x, y: x * y)
  sj2.defjvp(sj_jvp, symbolic_zeros=True)
  value("sj_on_grad", with_seen(lambda: jax.grad(sj2)(f32(2.), f32(3.))))
  value("sj_on_jvp_explicit_zero", with_seen(
      lambda: jax.jvp(sj2, (f32(2.), f32(3.)), (f32(1.), f32(0.)))))
  value("sj_on_vmap_grad", with_seen(lambda: jax.vmap(jax.grad(sj2), (0, None))(xs, f32(3.))))
  value("sj_on_grad_vmap", with_seen(
      lambda: jax.grad(lambda x, y: jax.vmap(sj2, (0, None))(x, y).sum())(xs, f32(3.))))
  value("sj_on_jit_grad", with_seen(lambda: jax.jit(jax.grad(sj2))(f32(2.), f32(3.))))

  sj3 = cd.custom_jvp(jnp.sin)
  sj3.defjvp(lambda p, t: (jnp.sin(p[0]), cd.zero_from_primal(p[0], symbolic_zeros=True)),
             symbolic_zeros=True)
  value("sj_rule_returns_symbolic_zero", lambda: jax.jvp(sj3, (f32(1.),), (f32(1.),)))
  value("zero_from_primal", lambda: cd.zero_from_primal({"a": jnp.ones(2), "b": f32(1.)}))
  value("zero_from_primal_symbolic", lambda: jax.tree_util.tree_map(
      lambda z: jnp.array(z.shape + (type(z) is cd.SymbolicZero,)),
      cd.zero_from_primal({"a": jnp.ones((2, 3)), "b": f32(1.)}, symbolic_zeros=True)))
  error("primal_tree_values_bad_leaf", lambda: cd.custom_vjp_primal_tree_values({"a": 1.}))
  value("primal_tree_values", lambda: cd.custom_vjp_primal_tree_values(
      {"a": cd.CustomVJPPrimal(f32(1.), False), "b": [cd.CustomVJPPrimal(xs, True)]}))

  # --- symbolic zeros: custom_vjp
  def make_sv(bwd_rule=None):
    @cd.custom_vjp
    def sv(x, y):
      return x * y, x + y

    def fwd(x, y):
      seen.append((x.perturbed, y.perturbed))
      return sv(x.value, y.value), (x.value, y.value)

    def bwd(res, cts):
      x, y = res
      c1, c2 = cts
      seen.append((type(c1) is cd.SymbolicZero, type(c2) is cd.SymbolicZero))
      c1 = 0. if type(c1) is cd.SymbolicZero else c1
      c2 = 0. if type(c2) is cd.SymbolicZero else c2
      return (c1 * y + c2, None)

    sv.defvjp(fwd, bwd_rule or bwd, symbolic_zeros=True)
    return sv

  sv = make_sv()
  value("sv_grad_first_out", with_seen(lambda: jax.grad(lambda x, y: sv(x, y)[0])(f32(2.), f32(3.))))
  value("sv_grad_second_out", with_seen(
      lambda: jax.grad(lambda x, y: sv(x, y)[1], argnums=(0, 1))(f32(2.), f32(3.))))
  value("sv_jit_grad", with_seen(lambda: jax.jit(jax.grad(lambda x, y: sv(x, y)[0]))(f32(2.), f32(3.))))
  value("sv_vmap_grad", with_seen(
      lambda: jax.vmap(jax.grad(lambda x, y: sv(x, y)[0]), (0, None))(xs, f32(3.))))
  value("sv_grad_vmap", with_seen(
      lambda: jax.grad(lambda x, y: jax.vmap(sv, (0, None))(x, y)[0].sum())(xs, f32(3.))))
  value("sv_eager", with_seen(lambda: sv(f32(2.), f32(3.))))
  bad_zero = make_sv(lambda res, cts: (cd.zero_from_primal(jnp.ones(3), symbolic_zeros=True), None))
  error("sv_bwd_symbolic_zero_of_wrong_shape",
        lambda: jax.grad(lambda x, y: bad_zero(x, y)[0])(f32(2.), f32(3.)))
  wrong = cd.custom_vjp(lambda x: x * 2.)
  wrong.defvjp(lambda x: (x * 2., None), lambda _, g: (jnp.ones(3),))
  error("bwd_output_of_wrong_shape", lambda: jax.grad(wrong)(f32(1.)))
  error("optimize_remat_with_symbolic_zeros",
        lambda: sv.defvjp(lambda *a: None, lambda *a: None, symbolic_zeros=True,
                          optimize_remat=True))

  @cd.custom_vjp
  def remat_sin(x):
    return jnp.sin(x)

  remat_sin.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (c * g,), optimize_remat=True)
  value("optimize_remat_values", lambda: (
      remat_sin(f32(1.)), jax.grad(remat_sin)(f32(1.)), jax.grad(jax.checkpoint(remat_sin))(f32(1.)),
      jax.jit(jax.grad(remat_sin))(f32(1.)), jax.vmap(jax.grad(remat_sin))(xs)))

  # --- vmap: outputs unbatched where the primal function's are
  @cd.custom_jvp
  def cj(x, y):
    return x * y, y * 2.

  cj.defjvp(lambda p, t: (cj(*p), (t[0] * p[1] + p[0] * t[1], t[1] * 2.)))

  @cd.custom_vjp
  def cv(x, y):
    return x * y, y * 2.

  cv.defvjp(lambda x, y: (cv(x, y), (x, y)), lambda r, g: (g[0] * r[1], g[0] * r[0] + 2. * g[1]))
  for name, fn in (("cj", cj), ("cv", cv)):
    value(f"{name}_vmap_out_axes_none",
          lambda fn=fn: jax.vmap(fn, (0, None), (0, None))(xs, f32(3.)))
    value(f"{name}_grad_of_vmap_unbatched_arg", lambda fn=fn: jax.grad(
        lambda x, y: sum(o.sum() for o in jax.vmap(fn, (0, None), (0, None))(x, y)),
        argnums=(0, 1))(xs, f32(3.)))
    value(f"{name}_vmap_of_grad", lambda fn=fn: jax.vmap(
        jax.grad(lambda x, y: fn(x, y)[0] + fn(x, y)[1], argnums=(0, 1)), (0, None))(xs, f32(3.)))
    value(f"{name}_jit_vmap_out_axes_none",
          lambda fn=fn: jax.jit(jax.vmap(fn, (0, None), (0, None)))(xs, f32(3.))[1])
  value("cj_jvp_of_vmap", lambda: jax.jvp(jax.vmap(cj, (0, None), (0, None)),
                                          (xs, f32(3.)), (jnp.ones(3), f32(1.))))
  error("cj_kwarg", lambda: cj(f32(1.), z=f32(2.)))
  bad_jvp = cd.custom_jvp(lambda x: x)
  bad_jvp.defjvp(lambda p, t: (p[0], jnp.ones(3)))
  error("cj_tangent_of_wrong_shape", lambda: jax.jvp(bad_jvp, (f32(1.),), (f32(1.),)))

  # --- linear_transpose
  s = jax.ShapeDtypeStruct((), jnp.float32)
  lt = api.linear_transpose
  value("lt_doc", lambda: lt(lambda x, y: 0.5 * x - 0.5 * y, s, s)(f32(1.)))
  value("lt_int", lambda: lt(lambda x: 2 * x, jax.ShapeDtypeStruct((3,), jnp.int32))(
      jnp.arange(3, dtype=jnp.int32)))
  value("lt_pytree", lambda: lt(lambda d: d["a"] @ jnp.ones((2, 3)) + d["b"],
                                {"a": jnp.ones(2), "b": jnp.ones(3)})(xs))
  value("lt_complex_to_real", lambda: lt(lambda x: x.real, jax.ShapeDtypeStruct((), jnp.complex64))(
      f32(2.)))
  value("lt_unused_input", lambda: lt(lambda x, y: 3. * x, s, s)(f32(1.)))
  value("lt_constant_output", lambda: lt(lambda x: jnp.zeros(3), s)(jnp.ones(3)))
  value("lt_list_out", lambda: lt(lambda x: [x, 2. * x], s)([f32(1.), f32(1.)]))
  value("lt_matrix", lambda: lt(lambda m: m @ jnp.arange(6.).reshape(3, 2), jnp.ones((2, 3)))(
      jnp.ones((2, 2))))
  value("lt_jit", lambda: jax.jit(lt(lambda x: x * jnp.arange(3.), jnp.ones(3)))(jnp.ones(3)))
  value("lt_vmap", lambda: jax.vmap(lt(lambda x: x * jnp.arange(3.), jnp.ones(3)))(jnp.ones((2, 3))))
  value("lt_grad_through", lambda: jax.grad(
      lambda c: lt(lambda x: jnp.sum(x * jnp.arange(3.)), jnp.ones(3))(c)[0].sum())(f32(1.)))
  value("lt_closed_over_tracer", lambda: jax.grad(lambda a: lt(lambda x: a * x, s)(f32(2.))[0])(
      f32(3.)))
  value("lt_cotangent_f64_canonicalized", lambda: lt(lambda x: 2. * x, s)(jnp.float32(1)))
  error("lt_reduce_axes", lambda: lt(lambda x: x, s, reduce_axes=("i",)))
  error("lt_int_to_float", lambda: lt(lambda x: x.astype(jnp.float32),
                                      jax.ShapeDtypeStruct((), jnp.int32)))
  error("lt_cotangent_tree", lambda: lt(lambda x: (x, x), s)(f32(1.)))
  error("lt_cotangent_list_vs_tuple", lambda: lt(lambda x: [x, x], s)((f32(1.), f32(1.))))
  error("lt_cotangent_shape", lambda: lt(lambda x: 2 * x, s)(jnp.ones(3)))
  error("lt_cotangent_dtype", lambda: lt(lambda x: 2 * x, s)(jnp.ones((), jnp.int32)))
  error("lt_nonlinear_primitive", lambda: lt(jnp.sin, s)(f32(1.)))
  error("lt_not_callable", lambda: lt(3, s))

  # --- fwd_and_bwd
  def matmul_sin(x, w):
    return jnp.sin(x) @ w

  x2, w2 = jnp.ones((2, 2)), jnp.full((2, 2), 2.)

  def fab(argnums, jitted=True, fn=matmul_sin):
    fwd, bwd = api.fwd_and_bwd(fn, argnums=argnums, jitted=jitted)
    y, res = fwd(x2, w2)
    return y, bwd(res, jnp.ones((2, 2)))

  value("fab_tuple_argnums", lambda: fab((0, 1)))
  value("fab_int_argnum", lambda: fab(1))
  value("fab_one_tuple_argnum", lambda: fab((1,)))
  value("fab_not_jitted", lambda: fab(0, jitted=False))
  value("fab_negative_argnum", lambda: fab(-1))

  def with_aux():
    fwd, bwd = api.fwd_and_bwd(lambda x, w: (jnp.sin(x) * w, x), argnums=1, has_aux=True)
    y, res, aux = fwd(jnp.ones(2), f32(2.))
    return y, aux, bwd(res, jnp.ones(2))

  value("fab_has_aux", with_aux)

  def kw_ignored():
    fwd, _ = api.fwd_and_bwd(lambda x, y=f32(2.): x * y, 0)
    return fwd(f32(1.), y=f32(3.))[0]

  value("fab_keyword_arguments_ignored", kw_ignored)

  def residuals_through_jit():
    fwd, bwd = api.fwd_and_bwd(matmul_sin, argnums=0, jitted=False)
    _, res = jax.jit(fwd)(x2, w2)
    return jax.jit(bwd)(res, jnp.ones((2, 2)))

  value("fab_residuals_are_a_pytree", residuals_through_jit)
  error("fab_argnum_out_of_range", lambda: api.fwd_and_bwd(lambda x: x, argnums=1)[0](f32(1.)))
  error("fab_not_callable", lambda: api.fwd_and_bwd(3, 0))
  error("fab_bad_cotangent_shape", lambda: fab(0, fn=lambda x, w: (jnp.sin(x) @ w)[0]))
  return out


def _leaf(x, np):
  """A leaf as recorded: complex values as ``[real, imag]`` pairs."""
  a = np.asarray(x)
  values = a.ravel()
  if np.iscomplexobj(a):
    values = np.stack([values.real, values.imag], axis=-1)
  return {"dtype": a.dtype.name, "shape": list(a.shape),
          "weak_type": bool(getattr(x, "weak_type", False)), "values": values.tolist()}


def record() -> dict:
  import jax
  import jax.numpy as jnp
  import numpy as np
  from jax import custom_derivatives
  out = {}
  for case_id, kind, thunk in cases(jax, jnp, custom_derivatives, jax):
    assert case_id not in out, case_id
    if kind == "error":
      try:
        thunk()
      except Exception as e:  # noqa: BLE001 - recording whatever JAX raises
        out[case_id] = {"kind": kind, "type": type(e).__name__, "message": str(e)}
      else:
        raise AssertionError(f"{case_id} did not raise")
    else:
      leaves, tree = jax.tree_util.tree_flatten(thunk())
      out[case_id] = {"kind": kind, "tree": str(tree), "leaves": [_leaf(x, np) for x in leaves]}
  return out


def main():
  import jax
  result = {"jax_version": jax.__version__, "cases": record()}
  with open(OUT, "w") as fh:
    json.dump(result, fh, indent=1, sort_keys=True)
    fh.write("\n")
  print(f"wrote {len(result['cases'])} cases to {OUT}", file=sys.stderr)


if __name__ == "__main__":
  main()
