"""repr()/str() golden cases, shared by tools/make_goldens.py (real JAX) and xjax's tests.

``cases(jax, jnp, lax, np)`` returns a list of ``(case_id, thunk)``; ``thunk()``
returns an object whose ``repr(obj)`` and ``str(obj)`` are recorded.

Tracers are printed *inside* the traced function; those cases return a
``Captured`` object whose ``__repr__``/``__str__`` give back the text captured
during tracing.

``X64_IDS`` names the cases that are also recorded with ``jax_enable_x64=True``.
"""

X64_IDS = (
    "weak_float_scalar",
    "weak_int_scalar",
    "array_from_py_floats",
    "array_from_py_ints",
    "arange_int",
    "arange_float",
    "float64_requested",
    "int64_requested",
    "tracer_weak_int",
    "shaped_array_f32",
)


class Captured:
  """Holds the repr/str text of an object that only existed during tracing."""

  def __init__(self, repr_text, str_text):
    self.repr_text = repr_text
    self.str_text = str_text

  def __repr__(self):
    return self.repr_text

  def __str__(self):
    return self.str_text


def _seed_prng(jax, thunk):
  """Runs thunk with the PRNG stream the seed documents print.

  Real JAX 0.10.2 defaults to ``jax_threefry_partitionable=True``, which gives a
  different stream (``normal(key(0), (1,))`` is ``[1.6226422]``); the seeds (and
  xjax) use the non-partitionable stream (``[-0.20584226]``).  Under a library
  without the ``threefry_partitionable`` context manager the thunk runs as is.
  """
  ctx = getattr(jax, "threefry_partitionable", None)
  if ctx is None:
    return thunk()
  with ctx(False):
    return thunk()


def cases(jax, jnp, lax, np):
  out = []

  def add(case_id, thunk):
    out.append((case_id, thunk))

  def capture_in_jit(fn, *args, which=0, transform=None):
    seen = []

    def traced(*a):
      r = fn(*a)
      t = r[which] if isinstance(r, tuple) else r
      seen.append(Captured(repr(t), str(t)))
      # also record the f-string form used by the Tracing seed
      seen[-1].fstring = f"{t}"
      return r

    (transform or jax.jit)(traced)(*args)
    return seen[0]

  # --- arrays of each dtype ----------------------------------------------------
  add("f32_vector", lambda: jnp.array([1.0, 2.5, -3.0], dtype=jnp.float32))
  add("f16_vector", lambda: jnp.array([1.0, 2.5, -3.0], dtype=jnp.float16))
  add("bf16_vector", lambda: jnp.array([1.0, 2.5, -3.0], dtype=jnp.bfloat16))
  add("i32_vector", lambda: jnp.array([1, -2, 3], dtype=jnp.int32))
  add("i8_vector", lambda: jnp.array([1, -2, 3], dtype=jnp.int8))
  add("i16_vector", lambda: jnp.array([1, -2, 3], dtype=jnp.int16))
  add("u8_vector", lambda: jnp.array([0, 7, 255], dtype=jnp.uint8))
  add("u32_vector", lambda: jnp.array([0, 7, 4000000000], dtype=jnp.uint32))
  add("bool_vector", lambda: jnp.array([True, False, True]))
  add("c64_vector", lambda: jnp.array([1 + 2j, -0.5j, 3], dtype=jnp.complex64))
  add("bool_2d", lambda: jnp.array([[True, False], [False, True]]))

  # --- weak types / scalars ---------------------------------------------------------
  add("weak_float_scalar", lambda: jnp.asarray(1.0))
  add("weak_int_scalar", lambda: jnp.asarray(4))
  add("strong_f32_scalar", lambda: jnp.float32(1))
  add("array_of_py_int", lambda: jnp.array(9))  # weak_type=True in JAX 0.10.2
  add("strong_i32_scalar_array", lambda: jnp.array(9, dtype=jnp.int32))
  add("strong_i32_scalar", lambda: jnp.int32(9))
  add("array_from_py_floats", lambda: jnp.array([1.0, 2.0]))
  add("array_from_py_ints", lambda: jnp.array([1, 2]))
  add("jit_identity_weak_int", lambda: jax.jit(lambda x: x)(4))
  add("jit_neg_weak_int", lambda: jax.jit(lambda x: -x)(1))
  add("bool_scalar", lambda: jnp.array(True))
  add("zero_d_f32", lambda: jnp.array(3.5, dtype=jnp.float32))
  add("zero_d_nan", lambda: jnp.array(np.nan, dtype=jnp.float32))
  add("float64_requested", lambda: jnp.zeros(2, dtype=jnp.float64))
  add("int64_requested", lambda: jnp.ones(2, dtype=jnp.int64))

  # --- seed outputs -------------------------------------------------------------------
  add("seed_cond_false",
      lambda: lax.cond(False, lambda x: x + 1, lambda x: x - 1, jnp.array([0.])))
  add("seed_arange_oob", lambda: jnp.arange(10)[11])
  add("seed_at_get_oob", lambda: jnp.arange(10.0).at[11].get())
  add("seed_at_get_fill",
      lambda: jnp.arange(10.0).at[11].get(mode="fill", fill_value=jnp.nan))
  add("seed_reshape_np_prod", lambda: jax.jit(
      lambda x: x.reshape((np.prod(x.shape),)))(jnp.ones((2, 3))))
  add("seed_while_loop", lambda: lax.while_loop(lambda x: x < 10, lambda x: x + 1, 0))
  add("seed_fori_loop", lambda: lax.fori_loop(0, 10, lambda i, x: x + i, 0))
  add("seed_static_loop", lambda: jax.jit(
      lambda x, n: sum((x[i] for i in range(n)), 0.), static_argnums=(1,))(
          jnp.array([2., 3., 4.]), 2))
  add("seed_at_add_2d", lambda: jnp.ones((5, 6)).at[::2, 3:].add(7.))
  add("seed_unsafe_cast_uint8", lambda: jnp.arange(254.0, 258.0).astype("uint8"))
  add("seed_random_key", lambda: jax.random.key(0))
  add("seed_random_normal", lambda: _seed_prng(
      jax, lambda: jax.random.normal(jax.random.key(0), shape=(1,))))
  add("seed_random_split", lambda: _seed_prng(
      jax, lambda: jax.random.split(jax.random.key(0))))
  add("seed_random_split_subkey_normal", lambda: _seed_prng(
      jax, lambda: jax.random.normal(jax.random.split(jax.random.key(0))[1], (1,))))
  add("prng_key_legacy", lambda: jax.random.PRNGKey(0))

  # --- shapes -----------------------------------------------------------------------------
  add("empty_f32", lambda: jnp.zeros((0,), jnp.float32))
  add("empty_2d", lambda: jnp.zeros((0, 3), jnp.float32))
  add("empty_i32_2d", lambda: jnp.zeros((2, 0), jnp.int32))
  add("arange_int", lambda: jnp.arange(5))
  add("arange_float", lambda: jnp.arange(5.0))
  add("f32_2d", lambda: jnp.arange(6.0).reshape(2, 3))
  add("i32_3d", lambda: jnp.arange(24).reshape(2, 3, 4))
  add("f32_2d_mixed_widths",
      lambda: jnp.array([[1.0, -200.5], [0.001, 3.0]], dtype=jnp.float32))
  add("long_i32", lambda: jnp.arange(2000))
  add("long_f32", lambda: jnp.arange(1500.0))
  add("long_2d", lambda: jnp.ones((1200, 3)))
  add("medium_f32_wraps", lambda: jnp.linspace(0.0, 1.0, 12))

  # --- float formatting ---------------------------------------------------------------------
  add("large_floats", lambda: jnp.array([1e10, 2.5e20, 1.0], dtype=jnp.float32))
  add("small_floats", lambda: jnp.array([1e-10, 3.3e-5, 1.0], dtype=jnp.float32))
  add("nan_inf", lambda: jnp.array([np.nan, np.inf, -np.inf, 0.0], dtype=jnp.float32))
  add("negative_zero", lambda: jnp.array([-0.0, 0.0], dtype=jnp.float32))
  add("f32_precision", lambda: jnp.array([1 / 3, 2 / 3, 0.1], dtype=jnp.float32))
  add("c64_nan", lambda: jnp.array([complex(np.nan, 1.0)], dtype=jnp.complex64))
  add("f16_scalar", lambda: jnp.array(0.1, dtype=jnp.float16))

  # --- tracers ---------------------------------------------------------------------------------
  x34 = np.zeros((3, 4), np.float32)
  add("tracer_f32_3x4", lambda: capture_in_jit(lambda x: x, x34))
  add("tracer_weak_int", lambda: capture_in_jit(lambda x: x, 2))
  add("tracer_weak_float", lambda: capture_in_jit(lambda x: x, 2.0))
  add("tracer_dot_result", lambda: capture_in_jit(
      lambda x, y: jnp.dot(x + 1, y + 1), x34, np.zeros(4, np.float32)))
  add("tracer_shape_prod", lambda: capture_in_jit(
      lambda x: jnp.array(x.shape).prod(), np.ones((2, 3), np.float32)))
  add("tracer_bool", lambda: capture_in_jit(lambda x: x < 3, 2))
  add("tracer_make_jaxpr", lambda: capture_in_jit(
      lambda x: x, x34, transform=jax.make_jaxpr))
  add("tracer_grad", lambda: capture_in_jit(
      lambda x: x * 2.0, 3.0, transform=jax.grad))
  add("tracer_vmap", lambda: capture_in_jit(
      lambda x: x + 1.0, x34, transform=jax.vmap))

  # --- abstract values ---------------------------------------------------------------------------
  add("shaped_array_f32", lambda: jax.core.ShapedArray((3,), jnp.float32))
  add("shaped_array_scalar_weak",
      lambda: jax.core.ShapedArray((), jnp.int32, weak_type=True))
  add("shaped_array_str_short",
      lambda: Captured(*([jax.core.ShapedArray((2, 3), jnp.float32).str_short()] * 2)))
  add("shaped_array_bool_2d", lambda: jax.core.ShapedArray((2, 0), jnp.bool_))
  add("array_aval", lambda: jnp.ones((2, 3)).aval)
  add("shape_dtype_struct", lambda: jax.ShapeDtypeStruct((3,), jnp.float32))
  add("shape_dtype_struct_int_2d", lambda: jax.ShapeDtypeStruct((2, 5), jnp.int32))
  add("eval_shape_tuple", lambda: jax.eval_shape(
      lambda x, y: (x @ y, x.sum()), x34, np.zeros((4, 2), np.float32)))
  add("eval_shape_weak", lambda: jax.eval_shape(lambda x: x * 2, 1.0))
  add("array_dtype", lambda: jnp.ones(3).dtype)
  add("array_shape", lambda: jnp.ones((2, 3)).shape)

  # --- devices ------------------------------------------------------------------------------------
  add("devices", lambda: jax.devices())
  add("device_0", lambda: jax.devices()[0])
  return out
