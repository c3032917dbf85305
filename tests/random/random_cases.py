"""PRNG golden cases, shared by tools/golden_random.py (real JAX) and test_random_goldens.py.

`cases(jax, jnp, np, x64)` returns ``(case_id, thunk)`` pairs; each thunk returns
an array (key arrays are recorded through ``random.key_data``). The same code
runs under JAX (to record) and xjax (to test), once per stream layout.
"""


def cases(jax, jnp, np, x64=False):
  random = jax.random
  out = []

  def add(case_id, thunk):
    out.append((case_id, thunk))

  key = random.key
  k0, k42 = key(0), key(42)

  # --- keys: seeds, split, fold_in ---------------------------------------------------------
  seeds = {"0": 0, "1": 1, "42": 42, "i32max": 2 ** 31 - 1, "neg1": -1, "big": 2 ** 32 + 5,
           "u32": np.uint32(7), "i8neg": np.int8(-3), "u64": np.uint64(2 ** 40 + 3) if x64 else
           np.uint32(2 ** 31 + 3)}
  for name, seed in seeds.items():
    add(f"key_{name}", lambda s=seed: random.key_data(key(s)))
    add(f"prngkey_{name}", lambda s=seed: random.PRNGKey(s))
  for num in (2, 3, 1, 0, (2, 3), (4, 1, 2)):
    add(f"split_{num}", lambda n=num: random.key_data(random.split(k42, n)))
  add("split_raw", lambda: random.split(random.PRNGKey(7), 5))
  add("split_twice", lambda: random.key_data(random.split(random.split(k0)[1], 3)))
  for data in (0, 1, 7, 123456789, 2 ** 32 - 1):
    add(f"fold_in_{data}", lambda d=data: random.key_data(random.fold_in(k42, d)))
  add("fold_in_raw", lambda: random.fold_in(random.PRNGKey(3), 11))
  add("fold_in_then_split", lambda: random.key_data(random.split(random.fold_in(k0, 5), 4)))

  # --- bits ----------------------------------------------------------------------------------
  shapes = {"s": (), "e": (0,), "1": (1,), "3": (3,), "5": (5,), "2x3": (2, 3), "4x5x3": (4, 5, 3),
            "7x0": (7, 0), "33": (33,)}
  uints = ["uint8", "uint16", "uint32"] + (["uint64"] if x64 else [])
  for dt in uints:
    for sname, shape in shapes.items():
      add(f"bits_{dt}_{sname}", lambda d=dt, s=shape: random.bits(k42, s, d))
  add("bits_default", lambda: random.bits(k0, (4,)))

  # --- uniform, normal -------------------------------------------------------------------------
  floats = ["float32", "float16", "bfloat16"] + (["float64"] if x64 else [])
  for dt in floats:
    for sname in ("s", "e", "3", "2x3", "33"):
      add(f"uniform_{dt}_{sname}", lambda d=dt, s=shapes[sname]: random.uniform(k42, s, d))
      add(f"normal_{dt}_{sname}", lambda d=dt, s=shapes[sname]: random.normal(k42, s, d))
  add("uniform_minmax", lambda: random.uniform(k0, (5,), minval=-3., maxval=2.))
  add("uniform_minmax_arrays", lambda: random.uniform(
      k0, (2, 3), minval=np.array([0., 1., 2.], np.float32), maxval=np.float32(5)))
  add("normal_complex64", lambda: random.normal(k42, (4,), jnp.complex64))
  add("normal_raw_key", lambda: random.normal(random.PRNGKey(1), (3,)))
  add("uniform_default", lambda: random.uniform(k0))

  # --- integers and discrete ---------------------------------------------------------------
  for dt in ["int32", "uint8", "int8", "int16", "uint32"] + (["int64", "uint64"] if x64 else []):
    add(f"randint_{dt}", lambda d=dt: random.randint(k42, (6,), 0, 100, d))
  add("randint_range", lambda: random.randint(k0, (3, 4), -5, 5))
  add("randint_full_uint8", lambda: random.randint(k0, (8,), 0, 256, jnp.uint8))
  add("randint_empty_range", lambda: random.randint(k0, (4,), 5, 5))
  add("randint_array_bounds", lambda: random.randint(
      k0, (2, 3), np.array([0, 10, 20]), np.array([5, 15, 100])))
  for p in (0.5, 0.1):
    add(f"bernoulli_{p}", lambda p=p: random.bernoulli(k42, p, (10,)))
  add("bernoulli_array_p", lambda: random.bernoulli(k0, np.array([0.1, 0.5, 0.9], np.float32)))
  add("rademacher", lambda: random.rademacher(k42, (8,)))
  add("rademacher_f32", lambda: random.rademacher(k42, (3,), jnp.float32))
  logits = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], np.float32))
  add("categorical", lambda: random.categorical(k42, logits))
  add("categorical_axis0", lambda: random.categorical(k42, logits, axis=0))
  add("categorical_shape", lambda: random.categorical(k42, logits, shape=(5, 2)))
  add("categorical_noreplace", lambda: random.categorical(
      k42, logits, shape=(2, 2), replace=False))
  add("permutation_int", lambda: random.permutation(k42, 10))
  add("permutation_array", lambda: random.permutation(k42, np.arange(12).reshape(4, 3)))
  add("permutation_axis1", lambda: random.permutation(k42, np.arange(12).reshape(3, 4), axis=1))
  add("permutation_independent", lambda: random.permutation(
      k42, np.arange(12).reshape(3, 4), axis=1, independent=True))
  add("choice_replace", lambda: random.choice(k42, 10, (6,)))
  add("choice_array", lambda: random.choice(k42, np.arange(20, 30), (2, 3)))
  add("choice_noreplace", lambda: random.choice(k42, 10, (4,), replace=False))
  add("choice_p", lambda: random.choice(k42, 5, (7,), p=np.array([.1, .2, .3, .2, .2], np.float32)))
  add("choice_p_noreplace", lambda: random.choice(
      k42, 5, (3,), replace=False, p=np.array([.1, .2, .3, .2, .2], np.float32)))
  add("choice_axis1", lambda: random.choice(k42, np.arange(12).reshape(3, 4), (2,), axis=1))
  add("geometric", lambda: random.geometric(k42, 0.3, (6,)))

  # --- continuous (closed-form transforms of uniform/normal) ---------------------------------
  for dt in ("float32", "float16", "bfloat16") + (("float64",) if x64 else ()):
    add(f"exponential_{dt}", lambda d=dt: random.exponential(k42, (5,), d))
    add(f"laplace_{dt}", lambda d=dt: random.laplace(k42, (5,), d))
    add(f"logistic_{dt}", lambda d=dt: random.logistic(k42, (5,), d))
    add(f"gumbel_{dt}", lambda d=dt: random.gumbel(k42, (5,), d))
    add(f"cauchy_{dt}", lambda d=dt: random.cauchy(k42, (5,), d))
    add(f"truncated_normal_{dt}", lambda d=dt: random.truncated_normal(k42, -1., 2., (5,), d))
  add("gumbel_high", lambda: random.gumbel(k42, (5,), mode="high"))
  add("truncated_normal_arrays", lambda: random.truncated_normal(
      k0, np.array([-2., 0.], np.float32), np.array([0., 3.], np.float32)))
  add("pareto", lambda: random.pareto(k42, 3., (5,)))
  add("maxwell", lambda: random.maxwell(k42, (5,)))
  add("double_sided_maxwell", lambda: random.double_sided_maxwell(k42, 1., 2., (5,)))
  add("weibull_min", lambda: random.weibull_min(k42, 2., 1.5, (5,)))
  add("rayleigh", lambda: random.rayleigh(k42, 2., (5,)))
  add("lognormal", lambda: random.lognormal(k42, 0.5, (5,)))
  add("triangular", lambda: random.triangular(k42, 0., 1., 3., (5,)))
  add("wald", lambda: random.wald(k42, 1.5, (5,)))
  add("ball", lambda: random.ball(k42, 3, 2, (4,)))
  add("generalized_normal", lambda: random.generalized_normal(k42, 2., (5,)))
  add("multivariate_normal", lambda: random.multivariate_normal(
      k42, np.zeros(2, np.float32), np.array([[2., .5], [.5, 1.]], np.float32), (3,)))
  add("orthogonal", lambda: random.orthogonal(k42, 3))

  # --- samplers with loops (gamma family, poisson, binomial) ----------------------------------
  add("gamma", lambda: random.gamma(k42, 2.5, (5,)))
  add("gamma_small_alpha", lambda: random.gamma(k42, np.array([0.1, 0.5, 1., 3.], np.float32)))
  add("loggamma", lambda: random.loggamma(k42, 0.5, (4,)))
  add("beta", lambda: random.beta(k42, 2., 3., (5,)))
  add("dirichlet", lambda: random.dirichlet(k42, np.array([1., 2., 3.], np.float32), (2,)))
  add("chisquare", lambda: random.chisquare(k42, 3., (5,)))
  add("t", lambda: random.t(k42, 4., (5,)))
  add("poisson_small", lambda: random.poisson(k42, 3., (6,)))
  add("poisson_large", lambda: random.poisson(k42, 30., (6,)))
  add("binomial", lambda: random.binomial(k42, 10., 0.3, (6,)))
  add("binomial_large", lambda: random.binomial(k42, 100., 0.4, (6,)))
  add("f", lambda: random.f(k42, 3., 5., (5,)))
  add("f_broadcast", lambda: random.f(k42, np.array([1., 2.], np.float32), 4.))
  add("multinomial", lambda: random.multinomial(k42, 10., np.array([.2, .3, .5], np.float32)))
  add("multinomial_batched", lambda: random.multinomial(
      k42, np.array([5., 20.], np.float32), np.array([[.1, .9], [.5, .5]], np.float32),
      dtype=jnp.int32))
  add("multinomial_shape", lambda: random.multinomial(
      k42, 7., np.full(4, .25, np.float32), shape=(3, 4)))
  return out


def error_cases(jax, jnp, np):
  """``(case_id, thunk)`` pairs whose thunk raises; the class and message are recorded."""
  random = jax.random
  k = random.key(0)
  return [
      ("raw_key_bad_shape", lambda: random.normal(jnp.zeros(3, jnp.uint32))),
      ("raw_key_bad_dtype", lambda: random.normal(jnp.zeros(2, jnp.int32))),
      ("raw_key_not_array", lambda: random.normal(3)),
      ("batched_raw_key", lambda: random.normal(jnp.zeros((2, 2), jnp.uint32))),
      ("batched_typed_key", lambda: random.normal(random.split(k))),
      ("split_batched", lambda: random.split(jnp.zeros((3, 2), jnp.uint32))),
      ("key_array_seed", lambda: random.key(jnp.zeros(2, jnp.int32))),
      ("key_to_numpy", lambda: np.asarray(k)),
      ("key_to_bool", lambda: bool(k)),
      ("scalar_key_index", lambda: k[0]),
      ("fold_in_array", lambda: random.fold_in(k, jnp.arange(2))),
      ("uniform_int_dtype", lambda: random.uniform(k, dtype=jnp.int32)),
      ("normal_int_dtype", lambda: random.normal(k, dtype=jnp.int32)),
      ("bits_signed_dtype", lambda: random.bits(k, dtype=jnp.int32)),
      ("randint_float_dtype", lambda: random.randint(k, (2,), 0, 3, jnp.float32)),
      ("uniform_shape_mismatch", lambda: random.truncated_normal(k, np.zeros(3), 1., (2,))),
      ("choice_too_many", lambda: random.choice(k, 3, (5,), replace=False)),
      ("choice_bad_p", lambda: random.choice(k, 3, (2,), p=np.ones(4) / 4)),
      ("categorical_too_many", lambda: random.categorical(
          k, np.zeros(3, np.float32), shape=(4,), replace=False)),
  ]
