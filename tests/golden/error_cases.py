"""Error golden cases, shared by tools/make_goldens.py (real JAX) and xjax's tests.

``cases(jax, jnp, lax, np)`` returns a list of ``(case_id, thunk)``; calling
``thunk()`` is expected to raise.  The golden records the exception's class name
(``type``), the class's ``__module__`` (``module``), the names of its base classes
(``mro``) and ``message = normalize(str(exc))``.

Several messages contain the file and line of the traced function
("The error occurred while tracing the function f at .../error_cases.py:NN for
jit", "from line .../error_cases.py:NN:CC (f)").  ``normalize`` replaces the
directory of this file with ``<CASES>`` so the line numbers (which come from
this very file under both libraries) still compare equal.  Never reorder lines in
this file without regenerating the goldens.

NOTE: the line numbers and column numbers recorded in errors.json refer to this
file; editing it above a case shifts them -- rerun tools/make_goldens.py.
"""

import os
import re
import sys
import sysconfig

CASES_DIR = os.path.dirname(os.path.abspath(__file__))


def normalize(text):
  """Makes messages independent of where the repo / interpreter live."""
  text = text.replace(CASES_DIR + os.sep, "<CASES>/")
  repo = os.path.dirname(os.path.dirname(CASES_DIR))
  paths = set()
  for key in ("purelib", "platlib"):
    try:
      paths.add(sysconfig.get_paths()[key])
    except KeyError:
      pass
  for p in sorted(paths, key=len, reverse=True):
    text = text.replace(p + os.sep, "<SITE>/")
  text = re.sub(r"\S*/site-packages/", "<SITE>/", text)
  text = text.replace(repo + os.sep, "<REPO>/")
  text = text.replace(sys.prefix + os.sep, "<PREFIX>/")
  text = re.sub(r" at 0x[0-9a-fA-F]+", " at 0x...", text)
  text = re.sub(r"object id \d+", "object id ...", text)
  return text


def cases(jax, jnp, lax, np):
  jit = jax.jit
  out = []

  def add(case_id, thunk):
    out.append((case_id, thunk))

  # --- seeds: Tracing page ---------------------------------------------------
  def seed_tracer_bool_neg():
    @jit
    def f(x, neg):
      return -x if neg else x
    return f(1, True)
  add("seed_tracer_bool_neg", seed_tracer_bool_neg)

  def seed_reshape_shape_prod():
    @jit
    def f(x):
      return x.reshape(jnp.array(x.shape).prod())
    x = jnp.ones((2, 3))
    return f(x)
  add("seed_reshape_shape_prod", seed_reshape_shape_prod)

  # --- seeds: Sharp Bits --------------------------------------------------------
  def seed_example_fun_ones():
    def example_fun(length, val):
      return jnp.ones((length,)) * val
    bad_example_jit = jit(example_fun)
    return bad_example_jit(10, 4)
  add("seed_example_fun_ones", seed_example_fun_ones)

  def seed_if_x_lt_3():
    @jit
    def f(x):
      if x < 3:
        return 3. * x ** 2
      else:
        return -4 * x
    return f(2)
  add("seed_if_x_lt_3", seed_if_x_lt_3)

  def seed_nansum_bool_index():
    def nansum(x):
      mask = ~jnp.isnan(x)  # boolean mask selecting non-nan values
      x_without_nans = x[mask]
      return x_without_nans.sum()
    x = jnp.array([1, 2, jnp.nan, 3, 4])
    return jax.jit(nansum)(x)
  add("seed_nansum_bool_index", seed_nansum_bool_index)

  add("seed_sum_list", lambda: jnp.sum([1, 2, 3]))

  def seed_item_assignment_2d():
    jax_array = jnp.zeros((3, 3), dtype=jnp.float32)
    jax_array[1, :] = 1.0
  add("seed_item_assignment_2d", seed_item_assignment_2d)

  def item_assignment_0():
    x = jnp.arange(3)
    x[0] = 1
  add("item_assignment_0", item_assignment_0)

  def item_assignment_tracer():
    @jit
    def f(x):
      x[0] = 1.0
      return x
    return f(jnp.zeros(3))
  add("item_assignment_tracer", item_assignment_tracer)

  # --- tracer conversions --------------------------------------------------------
  def int_of_tracer():
    @jit
    def f(x):
      return int(x)
    return f(1.0)
  add("int_of_tracer", int_of_tracer)

  def np_asarray_of_tracer():
    @jit
    def f(x):
      return np.asarray(x)
    return f(jnp.arange(3.0))
  add("np_asarray_of_tracer", np_asarray_of_tracer)

  def float_of_tracer():
    @jit
    def f(x):
      return float(x)
    return f(1.0)
  add("float_of_tracer", float_of_tracer)

  def bool_of_tracer_make_jaxpr():
    def g(x):
      return x if x > 0 else -x
    return jax.make_jaxpr(g)(1.0)
  add("bool_of_tracer_make_jaxpr", bool_of_tracer_make_jaxpr)

  def range_of_tracer():
    @jit
    def f(n):
      return sum(range(n))
    return f(3)
  add("range_of_tracer", range_of_tracer)

  def arange_of_tracer():
    @jit
    def f(n):
      return jnp.arange(n)
    return f(3)
  add("arange_of_tracer", arange_of_tracer)

  def nonzero_under_jit():
    @jit
    def f(x):
      return jnp.nonzero(x)
    return f(jnp.arange(3))
  add("nonzero_under_jit", nonzero_under_jit)

  def leaked_tracer():
    store = []

    @jit
    def f(x):
      store.append(x)
      return x
    f(1.0)
    return store[0] + 1
  add("leaked_tracer_arg", leaked_tracer)

  def leaked_tracer_intermediate():
    store = []

    @jit
    def f(x):
      y = x * 2.0
      store.append(y)
      return y
    f(1.0)
    return store[0] + 1
  add("leaked_tracer_intermediate", leaked_tracer_intermediate)

  # --- jit API misuse ---------------------------------------------------------------
  def static_argnums_unhashable():
    def f(x, n):
      return x
    return jit(f, static_argnums=(1,))(1.0, [1, 2])
  add("static_argnums_unhashable", static_argnums_unhashable)

  def static_argnums_out_of_range():
    def f(x):
      return x
    return jit(f, static_argnums=(3,))(1.0)
  add("static_argnums_out_of_range", static_argnums_out_of_range)

  def static_argnames_unknown():
    def f(x):
      return x
    return jit(f, static_argnames=("z",))(1.0)
  add("static_argnames_unknown", static_argnames_unknown)

  add("jit_non_callable", lambda: jax.jit(3))

  def jit_list_arg_to_sum():
    return jit(jnp.sum)([1, 2, 3])
  add("jit_list_arg_to_sum", jit_list_arg_to_sum)

  def jit_unexpected_kwarg():
    def f(x):
      return x
    return jit(f)(1.0, y=2.0)
  add("jit_unexpected_kwarg", jit_unexpected_kwarg)

  def jit_string_arg():
    def f(x):
      return x
    return jit(f)("hello")
  add("jit_string_arg", jit_string_arg)

  # --- shape / dtype errors ----------------------------------------------------------
  add("add_incompatible_shapes", lambda: jnp.ones(3) + jnp.ones(4))
  add("lax_add_mismatched_dtypes",
      lambda: lax.add(jnp.float32(1), jnp.int32(1)))
  add("lax_add_mismatched_shapes",
      lambda: lax.add(jnp.ones(3), jnp.ones(4)))
  add("dot_shape_mismatch", lambda: jnp.dot(jnp.ones((3, 4)), jnp.ones(5)))
  add("matmul_shape_mismatch", lambda: jnp.ones((2, 3)) @ jnp.ones((2, 3)))
  add("dot_general_shape_mismatch",
      lambda: lax.dot_general(jnp.ones((3, 4)), jnp.ones((5, 2)),
                              (((1,), (0,)), ((), ()))))
  add("reshape_wrong_size", lambda: jnp.ones(6).reshape(4))
  add("reshape_two_minus_ones", lambda: jnp.ones(6).reshape(-1, -1))
  add("zeros_float_shape", lambda: jnp.zeros((2.0,)))
  add("index_with_float", lambda: jnp.arange(3)[1.0])
  add("too_many_indices", lambda: jnp.arange(3)[0, 0])
  add("array_of_mixed_list", lambda: jnp.array([1, "a"]))
  add("concatenate_mismatch",
      lambda: jnp.concatenate([jnp.ones((2, 3)), jnp.ones((2, 4))]))
  add("transpose_bad_axes", lambda: jnp.transpose(jnp.ones((2, 3)), (0, 0)))
  add("sum_axis_out_of_bounds", lambda: jnp.sum(jnp.ones(3), axis=1))
  add("dynamic_slice_wrong_index_count",
      lambda: lax.dynamic_slice(jnp.ones((3, 3)), (0,), (1, 1)))
  add("broadcast_to_incompatible", lambda: jnp.broadcast_to(jnp.ones(3), (4,)))
  add("at_set_bad_update_shape",
      lambda: jnp.zeros(3).at[:2].set(jnp.ones(3)))
  add("bool_of_multi_element_array", lambda: bool(jnp.array([1, 2])))
  add("hash_of_array", lambda: hash(jnp.arange(3)))

  # --- control flow / transformations --------------------------------------------------
  add("cond_non_scalar_pred",
      lambda: lax.cond(jnp.array([True, False]), lambda x: x, lambda x: -x, 1.0))
  add("while_loop_carry_type_mismatch",
      lambda: lax.while_loop(lambda x: x < 10, lambda x: x + 1.5, jnp.int32(0)))
  add("scan_carry_shape_mismatch",
      lambda: lax.scan(lambda c, x: (jnp.stack([c, c]), x), 0.0, jnp.arange(3.0)))
  add("grad_non_scalar_output", lambda: jax.grad(lambda x: x * 2)(jnp.ones(3)))
  add("grad_int_input", lambda: jax.grad(lambda x: x * 2)(1))
  add("vmap_inconsistent_sizes",
      lambda: jax.vmap(lambda a, b: a + b)(jnp.ones(3), jnp.ones(4)))
  add("vmap_in_axes_out_of_range",
      lambda: jax.vmap(lambda a: a, in_axes=1)(jnp.ones(3)))

  # --- vmap ----------------------------------------------------------------------------
  add("vmap_inconsistent_sizes_many",
      lambda: jax.vmap(lambda a, b, c: a + b + c)(jnp.ones(3), jnp.ones((2, 4)), jnp.ones(3)))
  add("vmap_inconsistent_sizes_axis_size",
      lambda: jax.vmap(lambda a: a, axis_size=4)(jnp.ones(3)))
  add("vmap_inconsistent_sizes_pytree",
      lambda: jax.vmap(lambda d: d["a"] + d["b"])({"a": jnp.ones(3), "b": jnp.ones(2)}))
  add("vmap_inconsistent_sizes_kwargs",
      lambda: jax.vmap(lambda a, b: a + b)(jnp.ones(3), b=jnp.ones(2)))
  add("vmap_negative_axis_out_of_range",
      lambda: jax.vmap(lambda a: a, in_axes=-2)(jnp.ones(3)))
  add("vmap_scalar_mapped",
      lambda: jax.vmap(lambda a: a)(1.0))
  add("vmap_in_axes_wrong_length",
      lambda: jax.vmap(lambda a, b: a, in_axes=(0,))(jnp.ones(3), jnp.ones(3)))
  add("vmap_in_axes_not_prefix",
      lambda: jax.vmap(lambda t: t[0], in_axes=((0, 0, 0),))((jnp.ones(3), jnp.ones(3))))
  add("vmap_in_axes_float", lambda: jax.vmap(lambda a: a, in_axes=0.5)(jnp.ones(3)))
  add("vmap_in_axes_leaf_float",
      lambda: jax.vmap(lambda a, b: a, in_axes=(0, 1.0))(jnp.ones(3), jnp.ones(3)))
  add("vmap_out_axes_float", lambda: jax.vmap(lambda a: a, out_axes="x")(jnp.ones(3)))
  add("vmap_no_mapped_args",
      lambda: jax.vmap(lambda a: a, in_axes=None)(jnp.ones(3)))
  add("vmap_no_args", lambda: jax.vmap(lambda: 1.0)())
  add("vmap_out_axes_none_batched",
      lambda: jax.vmap(lambda a: a, out_axes=None)(jnp.ones(3)))
  add("vmap_out_axes_none_batched_named",
      lambda: jax.vmap(lambda a: a, out_axes=None, axis_name="i")(jnp.ones(3)))
  add("vmap_out_axes_none_pytree",
      lambda: jax.vmap(lambda a: (a, {"k": a}), out_axes=(0, {"k": None}))(jnp.ones(3)))
  add("vmap_out_axes_out_of_range",
      lambda: jax.vmap(lambda a: a, out_axes=2)(jnp.ones(3)))
  add("vmap_out_axes_not_prefix",
      lambda: jax.vmap(lambda a: (a, a), out_axes=(0, 0, 0))(jnp.ones(3)))
  add("vmap_python_if_on_batched",
      lambda: jax.vmap(lambda a: a if a > 0 else -a)(jnp.ones(3)))
  add("psum_unbound_eager", lambda: lax.psum(jnp.ones(3), "i"))
  add("psum_unbound_in_vmap",
      lambda: jax.vmap(lambda x: lax.psum(x, "j"), axis_name="i")(jnp.ones(3)))
  add("axis_index_unbound", lambda: lax.axis_index("i"))
  add("all_gather_unbound_in_jit", lambda: jax.jit(lambda x: lax.all_gather(x, "i"))(jnp.ones(3)))
  # --- structured control flow (issue 5) ------------------------------------------------------
  add("cf_cond_branch_structure", lambda: lax.cond(True, lambda x: x, lambda x: (x, x), 1.0))
  add("cf_cond_branch_dtype",
      lambda: lax.cond(True, lambda x: x, lambda x: x.astype(jnp.int32), 1.0))
  add("cf_cond_branch_shape", lambda: lax.cond(True, lambda x: x, lambda x: jnp.stack([x, x]), 1.0))
  add("cf_switch_branch_structure", lambda: lax.switch(0, [lambda x: x, lambda x: (x, x)], 1.0))
  add("cf_switch_empty", lambda: lax.switch(0, [], 1.0))
  add("cf_switch_float_index", lambda: lax.switch(1.5, [lambda x: x], 1.0))
  add("cf_while_cond_not_bool", lambda: lax.while_loop(lambda x: x, lambda x: x + 1, 1.0))
  add("cf_while_carry_structure",
      lambda: lax.while_loop(lambda x: x[0] < 1, lambda x: (x[0] + 1,), (1, 2)))
  add("cf_scan_not_pair", lambda: lax.scan(lambda c, x: c, 0.0, jnp.arange(3.)))
  add("cf_scan_leading_sizes",
      lambda: lax.scan(lambda c, x: (c, x), 0.0, (jnp.arange(3.), jnp.arange(4.))))
  add("cf_scan_length_mismatch",
      lambda: lax.scan(lambda c, x: (c, x), 0.0, jnp.arange(3.), length=4))
  add("cf_scan_no_length", lambda: lax.scan(lambda c, x: (c, x), 0.0, None))
  add("cf_while_grad",
      lambda: jax.grad(lambda x: lax.while_loop(lambda c: c < 10., lambda c: c * 2., x))(1.0))
  add("cf_fori_bound_types", lambda: lax.fori_loop(0, 3.0, lambda i, c: c, 1.0))
  # --- issue 12: wrong values and internal errors ----------------------------------------------
  add("fold_in_int_overflow", lambda: jax.random.fold_in(jax.random.key(0), 2 ** 40))
  add("fold_in_negative_int", lambda: jax.random.fold_in(jax.random.key(0), -1))

  def deleted_array_use():
    x = jnp.ones(3)
    x.delete()
    return x + 1
  add("deleted_array_use", deleted_array_use)

  def deleted_array_jit():
    x = jnp.ones((2, 2))
    x.delete()
    return jit(lambda a: a * 2)(x)
  add("deleted_array_jit", deleted_array_jit)
  add("tracer_item", lambda: jit(lambda a: a.item())(1.0))
  add("tracer_tolist", lambda: jit(lambda a: a.tolist())(jnp.ones(2)))
  add("device_put_int_device", lambda: jax.device_put(jnp.ones(2), 5))
  add("device_put_string_device", lambda: jax.device_put(jnp.ones(2), "gpu:7"))
  add("jacrev_int_input", lambda: jax.jacrev(lambda a: a)(1))
  add("jacrev_int_output", lambda: jax.jacrev(lambda a: jnp.round(a).astype(jnp.int32))(1.0))
  add("jacrev_complex_output", lambda: jax.jacrev(lambda a: a.astype(jnp.complex64))(1.0))
  add("einsum_tuple_operand", lambda: jnp.einsum("i,i->", (1.0, 2.0), jnp.ones(2)))
  add("einsum_interleaved_tuple_operand", lambda: jnp.einsum((1.0, 2.0), [0], jnp.ones(2), [0]))
  add("zeros_negative", lambda: jnp.zeros(-1))
  add("ones_negative_dim", lambda: jnp.ones((2, -3)))
  add("full_negative", lambda: jnp.full((-2,), 1.0))
  add("empty_negative", lambda: jnp.empty(-1))
  add("repeat_negative", lambda: jnp.repeat(jnp.ones(3), -1))
  add("lax_broadcast_in_dim_negative", lambda: lax.broadcast_in_dim(1.0, (-1,), ()))
  add("lax_full_negative", lambda: lax.full((-1, 2), 0.0))
  add("grad_reduce_axes", lambda: jax.grad(lambda a: a, reduce_axes=("i",)))
  add("matmul_precision_flag_value",
      lambda: jax.config.update("jax_default_matmul_precision", "bogus"))
  add("traceback_filtering_flag_value",
      lambda: jax.config.update("jax_traceback_filtering", "sometimes"))
  # dtype-kind errors of the elementwise primitives (JAX's type names and positions)
  add("lax_cbrt_complex", lambda: lax.cbrt(np.ones(2, np.complex64)))
  add("lax_sin_int", lambda: lax.sin(np.ones(2, np.int32)))
  add("lax_population_count_float", lambda: lax.population_count(np.ones(2, np.float32)))
  add("lax_not_float", lambda: lax.bitwise_not(np.ones(2, np.float32)))
  add("lax_shift_left_float",
      lambda: lax.shift_left(np.ones(2, np.float32), np.ones(2, np.float32)))
  add("lax_neg_bool", lambda: lax.neg(np.ones(2, bool)))
  add("lax_rem_bool", lambda: lax.rem(np.ones(2, bool), np.ones(2, bool)))
  add("lax_nextafter_int", lambda: lax.nextafter(np.ones(2, np.int32), np.ones(2, np.int32)))
  add("lax_is_finite_complex", lambda: lax.is_finite(np.ones(2, np.complex64)))
  add("lax_lgamma_complex", lambda: lax.lgamma(np.ones(2, np.complex64)))
  add("lax_atan2_int", lambda: lax.atan2(np.ones(2, np.int32), np.ones(2, np.int32)))
  add("lax_and_float", lambda: lax.bitwise_and(np.ones(2, np.float32), np.ones(2, np.float32)))

  def jacfwd_of_custom_vjp():
    @jax.custom_vjp
    def f(x):
      return jnp.sin(x)
    f.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda r, g: (r * g,))
    return jax.jacfwd(f)(jnp.ones(2))
  add("jacfwd_of_custom_vjp", jacfwd_of_custom_vjp)
  add("bitcast_bool", lambda: lax.bitcast_convert_type(np.ones(2, bool), np.uint8))
  add("bitcast_widening_mismatch",
      lambda: lax.bitcast_convert_type(np.ones((2, 3), np.uint8), np.int32))
  add("view_type_argument", lambda: jnp.arange(3).view(np.uint8, type=np.ndarray))
  add("array_flat", lambda: jnp.arange(3).flat)
  add("fromiter_refused", lambda: jnp.fromiter(range(3), int))

  def rank_promotion_raise():
    with jax.numpy_rank_promotion("raise"):
      return jnp.ones(3) + jnp.ones((2, 3))
  add("rank_promotion_raise", rank_promotion_raise)

  # (strict dtype promotion: JAX orders the dtypes in its message differently from run to
  # run, so tests/api/test_options.py checks that case instead)
  add("lax_reciprocal_int", lambda: lax.reciprocal(np.array([2, 4])))
  add("lax_broadcast_shapes_incompatible", lambda: lax.broadcast_shapes((2,), (3,)))
  add("lax_batch_matmul_1d", lambda: lax.batch_matmul(np.ones(3), np.ones((3, 3))))
  add("lax_batch_matmul_ndim", lambda: lax.batch_matmul(np.ones((2, 3, 3)), np.ones((3, 3))))
  add("lax_axis_size_unbound", lambda: lax.axis_size("i"))
  add("lax_dtype_of_list", lambda: lax.dtype([1.0]))
  return out
