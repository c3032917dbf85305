"""make_jaxpr golden cases, shared by tools/make_goldens.py (real JAX) and xjax's tests.

Every case is built from the library modules passed in, so the same code runs
under real JAX (``jax, jax.numpy, jax.lax``) and under xjax
(``xjax, xjax.numpy, xjax.lax``).  Inputs are plain NumPy arrays / Python
values, so they are identical for both libraries.

``cases(jax, jnp, lax, np)`` returns a list of tuples

    (case_id, fn, args)                   -> jax.make_jaxpr(fn)(*args)
    (case_id, fn, args, make_jaxpr_kw)    -> jax.make_jaxpr(fn, **make_jaxpr_kw)(*args)

The golden text is ``str(jax.make_jaxpr(fn, **kw)(*args))``.

``X64_IDS`` names the cases that are also recorded with ``jax_enable_x64=True``.
"""

X64_IDS = (
    "binary_int_plus_py_float",
    "mixed_int32_float32",
    "astype_float_to_int",
    "astype_int_to_float",
    "arange",
    "zeros_ones_inside",
    "mean_axis0",
    "seed_permissive_sum",
    "scalar_literals",
    "argmax_axis1",
)


def cases(jax, jnp, lax, np):
  def f32(*shape):
    n = int(np.prod(shape)) if shape else 1
    return (np.arange(n, dtype=np.float32) / 4 - 1).reshape(shape)

  def i32(*shape):
    n = int(np.prod(shape)) if shape else 1
    return (np.arange(n, dtype=np.int32) - 2).reshape(shape)

  out = []

  def add(case_id, fn, args, kw=None):
    if kw is None:
      out.append((case_id, fn, tuple(args)))
    else:
      out.append((case_id, fn, tuple(args), dict(kw)))

  # --- seeds ---------------------------------------------------------------
  def f(x, y):
    return jnp.dot(x + 1, y + 1)
  add("seed_tracing_dot", f, (f32(3, 4), f32(4)))

  def permissive_sum(x):
    return jnp.sum(jnp.array(x))
  add("seed_permissive_sum", permissive_sum, (list(range(10)),))

  # --- elementwise unary ---------------------------------------------------
  add("unary_sin", lambda x: jnp.sin(x), (f32(3),))
  add("unary_exp", lambda x: jnp.exp(x), (f32(3),))
  add("unary_log", lambda x: jnp.log(x), (f32(2, 2),))
  add("unary_tanh", lambda x: jnp.tanh(x), (f32(3),))
  add("unary_logistic", lambda x: lax.logistic(x), (f32(3),))
  add("unary_erf", lambda x: lax.erf(x), (f32(3),))
  add("unary_abs_sign", lambda x: jnp.abs(x) * jnp.sign(x), (f32(3),))
  add("unary_floor_round", lambda x: jnp.floor(x) + jnp.round(x), (f32(3),))
  add("unary_integer_pow", lambda x: x ** 3, (f32(3),))
  add("unary_sqrt_rsqrt", lambda x: jnp.sqrt(x) + lax.rsqrt(x), (f32(3),))
  add("unary_neg_int", lambda x: -x, (i32(4),))

  # --- binary ops, weak types, promotion -----------------------------------
  add("binary_weak_scalars", lambda x: x * 2.0 + 1, (f32(3),))
  add("binary_int_plus_py_int", lambda x: x + 1, (i32(3),))
  add("binary_int_plus_py_float", lambda x: x + 1.5, (i32(3),))
  add("mixed_int32_float32", lambda x, y: x + y, (i32(3), f32(3)))
  add("binary_sub_div", lambda x, y: (x - y) / y, (f32(2, 3), f32(2, 3)))
  add("binary_max_min", lambda x, y: jnp.maximum(x, y) - jnp.minimum(x, 0.0),
      (f32(3), f32(3)))
  add("compare_lt_eq", lambda x, y: (x < y) & (x == 0), (f32(3), f32(3)))
  add("compare_int_ne_scalar", lambda x: x != 2, (i32(4),))
  add("where_select_n", lambda x: jnp.where(x > 0, x, 0.0), (f32(4),))

  # --- shapes ----------------------------------------------------------------
  add("broadcast_add", lambda x, y: x + y, (f32(3, 1), f32(4)))
  add("broadcast_to", lambda x: jnp.broadcast_to(x, (2, 3)), (f32(3),))
  add("reshape", lambda x: x.reshape(3, 2), (f32(2, 3),))
  add("reshape_minus_one", lambda x: jnp.reshape(x, (-1,)), (f32(2, 3),))
  add("transpose", lambda x: x.T, (f32(2, 3),))
  add("transpose_axes", lambda x: jnp.transpose(x, (1, 2, 0)), (f32(2, 3, 4),))
  add("squeeze", lambda x: jnp.squeeze(x, axis=1), (f32(3, 1),))
  add("expand_dims", lambda x: jnp.expand_dims(x, 0), (f32(3),))
  add("concatenate", lambda x, y: jnp.concatenate([x, y]), (f32(2), f32(3)))
  add("pad", lambda x: jnp.pad(x, (1, 2)), (f32(3),))

  # --- indexing --------------------------------------------------------------
  add("slice_1_3", lambda x: x[1:3], (f32(5),))
  add("slice_step_2", lambda x: x[::2], (f32(5),))
  add("index_none", lambda x: x[None], (f32(3),))
  add("index_int_0", lambda x: x[0], (f32(3, 4),))
  add("gather_idx_array", lambda x, idx: x[idx], (f32(5), np.array([0, 2], np.int32)))
  add("at_set", lambda x: x.at[1].set(7.0), (f32(4),))
  add("at_add_idx", lambda x, idx, v: x.at[idx].add(v),
      (f32(5), np.array([0, 3], np.int32), f32(2)))
  add("dynamic_slice", lambda x, i: lax.dynamic_slice(x, (i,), (2,)),
      (f32(5), np.int32(1)))

  # --- reductions / sorting ---------------------------------------------------
  add("sum_axis", lambda x: jnp.sum(x, axis=1), (f32(2, 3),))
  add("max_keepdims", lambda x: jnp.max(x, axis=0, keepdims=True), (f32(2, 3),))
  add("argmax_axis1", lambda x: jnp.argmax(x, axis=1), (f32(2, 3),))
  add("mean_axis0", lambda x: jnp.mean(x, axis=0), (f32(2, 3),))
  add("cumsum", lambda x: jnp.cumsum(x), (f32(4),))
  add("sort", lambda x: jnp.sort(x), (f32(4),))
  add("argsort", lambda x: jnp.argsort(x), (f32(4),))
  add("top_k", lambda x: lax.top_k(x, 2), (f32(5),))

  # --- dot / matmul ------------------------------------------------------------
  add("dot_vec_vec", lambda x, y: jnp.dot(x, y), (f32(3), f32(3)))
  add("matmul_mat_mat", lambda x, y: x @ y, (f32(2, 3), f32(3, 4)))
  add("matmul_batched", lambda x, y: jnp.matmul(x, y), (f32(5, 2, 3), f32(5, 3, 4)))
  add("matmul_vec_mat", lambda x, y: x @ y, (f32(3), f32(3, 2)))

  # --- creation ---------------------------------------------------------------
  add("arange", lambda x: x + jnp.arange(4), (f32(4),))
  add("zeros_ones_inside", lambda x: x + jnp.zeros((3,)) + jnp.ones(3, dtype=jnp.int32),
      (f32(3),))

  # --- constants ----------------------------------------------------------------
  c_np = np.array([1.0, 2.0, 3.0], np.float32)
  add("closure_numpy_const", lambda x: x * c_np, (f32(3),))
  c_jax = jnp.array([1.0, 2.0, 3.0])
  add("closure_jax_const", lambda x: x + c_jax, (f32(3),))
  s_np = np.float32(2.5)
  add("closure_numpy_scalar", lambda x: x * s_np, (f32(3),))
  add("scalar_literals", lambda x: x * 2 + np.int32(3) - True, (i32(3),))

  # --- nested jit ----------------------------------------------------------------
  @jax.jit
  def inner(x):
    return jnp.sin(x) * 2.0

  def outer(x):
    return inner(x) + inner(x + 1.0)
  add("nested_jit", outer, (f32(3),))

  def with_jit_lambda(x, y):
    return jax.jit(lambda a, b: a * b)(x, y) - 1
  add("nested_jit_lambda", with_jit_lambda, (f32(2), f32(2)))

  # --- naming beyond z ------------------------------------------------------------
  def many_vars(x):
    for _ in range(30):
      x = jnp.sin(x)
    return x
  add("naming_beyond_z", many_vars, (f32(2),))

  # --- pytrees ----------------------------------------------------------------------
  def tree_fn(d, t):
    return {"sum": d["a"] + t[0], "prod": (d["b"] * t[1],)}
  add("pytree_dict_tuple", tree_fn,
      ({"a": f32(2), "b": f32(3)}, (f32(2), f32(3))))

  # --- static argnums ------------------------------------------------------------------
  def static_fn(x, n):
    for _ in range(n):
      x = x * 2.0
    return x
  add("static_argnums", static_fn, (f32(2), 2), {"static_argnums": (1,)})

  # --- passthrough / constant outputs ------------------------------------------------------
  add("return_input_and_const", lambda x, y: (x, 1.0, y + 1), (f32(2), i32(2)))

  # --- dtype conversion ---------------------------------------------------------------------
  add("astype_float_to_int", lambda x: x.astype(jnp.int32), (f32(3),))
  add("astype_int_to_float", lambda x: x.astype(jnp.float32), (i32(3),))
  add("astype_to_bool", lambda x: x.astype(bool), (f32(3),))
  add("astype_same_dtype", lambda x: x.astype(jnp.float32), (f32(3),))

  # --- integer bit ops -------------------------------------------------------------------------
  add("bitwise_ops", lambda x, y: (x & y) | (x ^ ~y), (i32(3), i32(3)))
  add("shift_ops", lambda x: (x << 2) >> 1, (i32(3),))
  add("uint8_ops", lambda x: x + np.uint8(1) - x // 2, (np.arange(4, dtype=np.uint8),))
  add("bool_ops", lambda x, y: jnp.logical_not(x) | (x & y), (np.array([True, False]), np.array([False, False])))

  # --- shapes edge cases ---------------------------------------------------------------------
  add("empty_shape", lambda x: x * 2.0, (np.zeros((0,), np.float32),))
  add("zero_d", lambda x: x + 1.0, (np.float32(3.0),))
  add("python_scalar_arg", lambda x: x * 2, (3.0,))

  # --- misc lax ops ------------------------------------------------------------------------
  add("lax_clamp", lambda x: lax.clamp(0.0, x, 1.0), (f32(4),))
  add("jnp_clip", lambda x: jnp.clip(x, -0.5, 0.5), (f32(4),))
  add("lax_rem", lambda x, y: lax.rem(x, y), (f32(3), f32(3) + 3))
  add("lax_pow", lambda x, y: lax.pow(x, y), (f32(3), f32(3)))
  add("lax_atan2", lambda x, y: lax.atan2(x, y), (f32(3), f32(3)))
  add("lax_nextafter", lambda x, y: lax.nextafter(x, y), (f32(3), f32(3)))
  add("lax_cumlogsumexp", lambda x: lax.cumlogsumexp(x), (f32(4),))
  add("lax_reduce_precision", lambda x: lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10), (f32(3),))

  # --- vmap ------------------------------------------------------------------------------
  add("vmap_unary", jax.vmap(jnp.sin), (f32(3, 4),))
  add("vmap_add_unmapped", jax.vmap(lambda x, y: x + y, in_axes=(0, None)), (f32(3, 4), f32(4)))
  add("vmap_add_axes_differ", jax.vmap(lambda x, y: x * y, in_axes=(0, 1)), (f32(3, 4), f32(4, 3)))
  add("vmap_scalar_times_vector", jax.vmap(lambda a, v: a * v, in_axes=(0, None)), (f32(3), f32(4)))
  add("vmap_out_axes_1", jax.vmap(lambda x: x * 2.0, out_axes=1), (f32(3, 4),))
  add("vmap_out_axes_none_unbatched", jax.vmap(lambda x, y: (x + 1.0, y * 2.0), in_axes=(0, None),
                                               out_axes=(0, None)), (f32(3), f32(2)))
  add("vmap_broadcast_unbatched_output", jax.vmap(lambda x, y: y, in_axes=(0, None)), (f32(3), f32(2)))
  add("vmap_sum", jax.vmap(lambda x: jnp.sum(x)), (f32(3, 4),))
  add("vmap_sum_axis_in_1", jax.vmap(lambda x: jnp.sum(x, axis=0), in_axes=1), (f32(3, 4, 2),))
  add("vmap_dot_matvec", jax.vmap(jnp.dot, in_axes=(None, 0)), (f32(4, 3), f32(5, 3)))
  add("vmap_dot_both", jax.vmap(jnp.dot), (f32(5, 4, 3), f32(5, 3)))
  add("vmap_index", jax.vmap(lambda x, i: x[i]), (f32(3, 4), np.array([0, 2, 1], np.int32)))
  add("vmap_reshape", jax.vmap(lambda x: x.reshape(2, 2)), (f32(3, 4),))
  add("vmap_transpose", jax.vmap(lambda x: x.T, in_axes=1), (f32(2, 3, 4),))
  add("vmap_of_vmap", jax.vmap(jax.vmap(lambda x, y: x * y)), (f32(2, 3), f32(2, 3)))
  add("vmap_of_jit", jax.vmap(jax.jit(lambda x: jnp.sin(x) + 1.0)), (f32(3, 2),))
  add("vmap_of_grad", jax.vmap(jax.grad(lambda x: jnp.sin(x) * x)), (f32(3),))
  add("grad_of_vmap", jax.grad(lambda x: jnp.sum(jax.vmap(jnp.sin)(x))), (f32(3),))
  add("vmap_per_example_grads",
      jax.vmap(jax.grad(lambda w, x, y: (jnp.dot(x, w) - y) ** 2), in_axes=(None, 0, 0)),
      (f32(3), f32(4, 3), f32(4)))
  add("vmap_where", jax.vmap(lambda c, x: jnp.where(c, x, 0.0)),
      (np.array([True, False, True]), f32(3, 2)))
  add("vmap_cumsum", jax.vmap(lambda x: jnp.cumsum(x)), (f32(3, 4),))
  add("vmap_sort", jax.vmap(jnp.sort, in_axes=1), (f32(4, 3),))
  add("vmap_custom_jvp_logsumexp_like", jax.vmap(jax.nn.relu), (f32(3, 2),))
  add("vmap_collectives", jax.vmap(
      lambda x: (lax.psum(x, "i"), lax.pmean(x, "i"), lax.pmax(x, "i"), lax.axis_index("i")),
      axis_name="i"), (f32(3, 2),))
  add("vmap_psum_unmapped", jax.vmap(lambda x, y: lax.psum(y, "i") + x, in_axes=(0, None),
                                     axis_name="i"), (f32(3), f32(2)))
  add("collectives_axis_env", lambda x: (lax.psum(x, "i"), lax.all_gather(x, "i"),
                                         lax.axis_index("i")), (f32(2),),
      {"axis_env": [("i", 3)]})
  add("vmap_cond_batched_pred",
      jax.vmap(lambda x: lax.cond(x > 0, lambda: x, lambda: -x)), (f32(3),))
  add("vmap_cond_unbatched_pred",
      jax.vmap(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x), in_axes=(None, 0)),
      (np.bool_(True), f32(3)))
  # batching rules, family by family
  ones = lambda *shape, dtype=np.float32: np.ones(shape, dtype)
  vm = lambda fun, in_axes=0: jax.vmap(fun, in_axes=in_axes)
  add("vmap_rule_add_0_none", vm(lambda x, y: lax.add(x, y), (0, None)), (ones(2, 3), ones(3)))
  add("vmap_rule_select_n_scalar_pred", vm(lambda p, x, y: lax.select_n(p, x, y)),
      (ones(5, dtype=np.bool_), ones(5, 3), ones(5, 3)))
  add("vmap_rule_clamp_batched_lo", vm(lambda lo, x, hi: lax.clamp(lo, x, hi), (0, None, None)),
      (ones(5), ones(3), np.float32(1)))
  add("vmap_rule_reduce_sum_batch_between", vm(lambda x: lax.reduce_sum(x, (0, 2)), 1),
      (ones(2, 5, 3, 4),))
  add("vmap_rule_argmax", vm(lambda x: lax.argmax(x, 1, np.int32)), (ones(2, 3, 4),))
  add("vmap_rule_cumsum_reverse", vm(lambda x: lax.cumsum(x, 0, reverse=True), 1), (ones(2, 3),))
  add("vmap_rule_sort_two_keys",
      vm(lambda k, j, v: lax.sort((k, j, v), dimension=1, num_keys=2), (2, None, 0)),
      (ones(2, 3, 5), ones(2, 3), ones(5, 2, 3)))
  add("vmap_rule_top_k", vm(lambda x: lax.top_k(x, 2)), (ones(2, 3, 4),))
  add("vmap_rule_dot_both_batched", vm(lambda a, b: lax.dot(a, b), (0, 1)),
      (ones(5, 2, 3), ones(3, 5, 4)))
  add("vmap_rule_dot_rhs_batched", vm(lambda a, b: lax.dot(a, b), (None, 2)),
      (ones(2, 3), ones(3, 4, 5)))
  add("vmap_rule_dot_general_batch_dims",
      vm(lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), (1, 0)),
      (ones(2, 5, 3, 4), ones(5, 2, 4, 6)))
  add("vmap_rule_bitcast_narrowing", vm(lambda x: lax.bitcast_convert_type(x, np.int16)),
      (ones(5, 3, dtype=np.int32),))
  add("vmap_rule_dynamic_index", vm(lambda x, i: x[i]), (ones(3, 4), np.zeros(3, np.int32)))
  add("vmap_rule_at_set", vm(lambda x, i, v: x.at[i].set(v)),
      (ones(3, 4), np.zeros(3, np.int32), ones(3)))
  add("vmap_rule_dynamic_slice", vm(lambda x, i: lax.dynamic_slice(x, (i,), (2,))),
      (ones(3, 4), np.zeros(3, np.int32)))
  add("vmap_rule_pad_batched_value", vm(lambda x, p: lax.pad(x, p, ((1, 1, 0),)), (None, 0)),
      (ones(4), ones(3)))
  add("vmap_rule_concatenate", vm(lambda a, b: lax.concatenate([a, b], 0), (0, None)),
      (ones(3, 4), ones(2)))
  add("vmap_rule_reshape_transpose_rev", vm(lambda x: x.reshape(1, 3).T[::-1], 1), (ones(3, 4),))
  add("vmap_rule_split", vm(lambda x: lax.split(x, (1, 2), 0), 1), (ones(3, 4),))
  add("custom_jvp_relu", jax.nn.relu, (f32(3),))

  @jax.custom_vjp
  def double(x):
    return x * 2

  def double_fwd(x):
    return double(x), x

  def double_bwd(res, g):
    return (g * 2,)

  double.defvjp(double_fwd, double_bwd)
  add("custom_vjp_call", double, (f32(3),))
  add("vmap_custom_vjp_call", jax.vmap(double), (f32(3, 2),))
  add("vmap_jacfwd", jax.jacfwd(lambda x: jnp.sin(x) * 2.0), (f32(3),))
  add("vmap_jacrev", jax.jacrev(lambda x: jnp.sin(x) * 2.0), (f32(3),))
  # --- structured control flow (issue 5) ------------------------------------------------------
  add("cf_cond", lambda x: lax.cond(x > 0, lambda x: x + 1, lambda x: x - 1, x), (1.0,))
  add("cf_cond_closure", lambda x, y: lax.cond(x > 0, lambda x: x + y, lambda x: x * 2., x),
      (1.0, 2.0))
  add("cf_cond_forwarded", lambda p, x, y: lax.cond(p, lambda x, y: (x, y + 1),
                                                    lambda x, y: (x, y - 1), x, y),
      (True, 1.0, 2.0))
  add("cf_cond_float_pred", lambda p, x: lax.cond(p, lambda x: x, lambda x: x, x), (1.0, 2.0))
  add("cf_switch", lambda i, x: lax.switch(i, [lambda x: x + 1, lambda x: x * 2, jnp.sin], x),
      (1, 1.0))
  add("cf_while", lambda x: lax.while_loop(lambda c: c < 10, lambda c: c + 1, x), (0,))
  add("cf_while_consts", lambda x, y: lax.while_loop(lambda c: c[0] < y,
                                                     lambda c: (c[0] + 1, c[1] * y), (x, 1.0)),
      (0, 3.0))
  add("cf_while_forwarded_carry",
      lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1]), x), ((0, 1.0),))
  add("cf_fori_static", lambda x: lax.fori_loop(0, 10, lambda i, c: c + i, x), (0,))
  add("cf_fori_dynamic", lambda x, n: lax.fori_loop(0, n, lambda i, c: c + i, x), (0, 5))
  add("cf_scan", lambda x, xs: lax.scan(lambda c, a: (c + a, c * a), x, xs), (0.0, f32(3)))
  add("cf_scan_reverse_unroll",
      lambda x, xs: lax.scan(lambda c, a: (c + a, c * a), x, xs, reverse=True, unroll=2),
      (0.0, f32(3)))
  add("cf_scan_length", lambda x: lax.scan(lambda c, a: (c + 1., c), x, None, length=4), (0.0,))
  add("cf_scan_forwarding",
      lambda x, xs: lax.scan(lambda c, a: ((c[0], c[1] + a), a), x, xs), ((0.0, 1.0), f32(3)))
  add("cf_map", lambda xs: lax.map(jnp.sin, xs), (f32(3),))
  add("cf_map_batch_size", lambda xs: lax.map(jnp.sin, xs, batch_size=2), (f32(4),))
  # --- zero derivatives, staged as JAX stages them (issue 21) ---------------------------------
  add("grad_zero_vector", jax.grad(lambda x, y: x.sum(), argnums=1), (f32(3), f32(3)))
  add("grad_zero_scalar", jax.grad(lambda x, y: x, argnums=1), (1.0, 2.0))
  add("jvp_of_constant", lambda x: jax.jvp(lambda a: 2.0, (x,), (x,)), (1.0,))
  add("jacfwd_of_constant", jax.jacfwd(lambda x: jnp.ones(2)), (f32(3),))
  return out
