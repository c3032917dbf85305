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
  return out
