"""Samplers built on loops: the gamma family, poisson and binomial (JAX's algorithms).

* `random_gamma_p` draws Gamma(a) samples with Marsaglia and Tsang's
  rejection method ("A simple method for generating gamma variables", 2000),
  one `while_loop` per element, vmapped, as JAX lowers it. Its key operand is
  raw key data, like the primitives of prng.py. Its derivative with respect
  to `a` is JAX's implicit reparameterization through `lax.random_gamma_grad`,
  so gamma and the samplers below differentiate in their shape parameters.
* loggamma, beta, dirichlet, chisquare, t, generalized_normal and ball are
  transforms of gamma samples.
* poisson: Knuth's product-of-uniforms method below lambda = 10, Hormann's
  transformed rejection above. binomial: inversion for n p <= 10, BTRS
  (Hormann 1993) above.
"""
from __future__ import annotations

import functools

import numpy as np

from xjax import numpy as jnp
from xjax._src import core
from xjax._src import dtypes
from xjax._src.config import config
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.jit import jit
from xjax._src.lax import elementwise as lax
from xjax._src.lax import structural as lax_st
from xjax._src.lax import transcendental as lax_tr
from xjax._src.lax.control_flow.loops import while_loop
from xjax._src.lax.control_flow.scan import map as scan_map, scan
from xjax._src.lax.reductions import cumsum
from xjax._src.lax.special import random_gamma_grad
from xjax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from xjax._src.random import prng
from xjax._src.random.distributions import (_check_broadcast_shapes, _check_shape, _float_dtype,
                                            _resharded, _select, _split, exponential, normal,
                                            rademacher, uniform)
from xjax._src.random.keys import check_prng_key, split
from xjax._src.vmap import vmap


def _const(x, value):
  return np.array(value, core.get_aval(x).dtype)


# ----------------------------------------------------------------------------
# One gamma sample (Marsaglia-Tsang), and random_gamma_p


def _gamma_one(key, alpha, log_space):
  zero, one, two, minus_one = (_const(alpha, v) for v in (0, 1, 2, -1))
  one_over_three, squeeze_const = _const(alpha, 1. / 3.), _const(alpha, 0.0331)
  dtype = core.get_aval(alpha).dtype
  # alpha < 1 is boosted: Gamma(alpha) ~ Gamma(alpha + 1) * Uniform**(1 / alpha),
  # in log space if asked (small alpha underflows otherwise).
  boost_mask = lax.ge(alpha, one)
  alpha_orig = alpha
  alpha = _select(boost_mask, alpha, lax.add(alpha, one))
  d = lax.sub(alpha, one_over_three)
  c = lax.div(one_over_three, lax_tr.sqrt(d))

  def cond_fn(kXVU):
    _, X, V, U = kXVU
    # Reject while U >= 1 - 0.0331 X**2 and log U >= X/2 + d (1 - V + log V).
    return lax.bitwise_and(
        lax.ge(U, lax.sub(one, lax.mul(squeeze_const, lax.mul(X, X)))),
        lax.ge(lax_tr.log(U), lax.add(lax.mul(X, _const(alpha, 0.5)),
                                      lax.mul(d, lax.add(lax.sub(one, V), lax_tr.log(V))))))

  def body_fn(kXVU):
    def next_kxv(kxv):
      key, subkey = _split(kxv[0])
      x = normal(subkey, (), dtype=dtype)
      return key, x, lax.add(one, lax.mul(x, c))

    key, x_key, u_key = _split(kXVU[0], 3)
    _, x, v = while_loop(lambda kxv: lax.le(kxv[2], zero), next_kxv, (x_key, zero, minus_one))
    return key, lax.mul(x, x), lax.mul(lax.mul(v, v), v), uniform(u_key, (), dtype=dtype)

  key, subkey = _split(key)
  _, _, V, _ = while_loop(cond_fn, body_fn, (key, zero, one, two))  # starts rejected
  if log_space:
    log_samples = lax.neg(exponential(subkey, (), dtype=dtype))
    log_boost = _select(boost_mask | (log_samples == 0), zero,
                        lax.mul(log_samples, lax.div(one, alpha_orig)))
    return lax.add(lax.add(lax_tr.log(d), lax_tr.log(V)), log_boost)
  samples = 1 - uniform(subkey, (), dtype=dtype)
  boost = _select(boost_mask, one, lax_tr.pow(samples, lax.div(one, alpha_orig)))
  return lax.mul(lax.mul(d, V), boost)


def _gamma_impl(key_data, a, *, log_space, partitionable, impl=prng.threefry_prng_impl):
  """Gamma samples of a's shape; the keys (shape a.shape[:k], of PRNG `impl`) are split to
  match a."""
  with config.override("jax_threefry_partitionable", partitionable):
    keys = prng.random_wrap(key_data, impl=impl)
    a_shape = np.shape(a)
    split_count = int(np.prod(a_shape[keys.ndim:], dtype=np.int64))
    keys = vmap(lambda k: _split(k, split_count))(keys.flatten()).flatten()
    samples = vmap(functools.partial(_gamma_one, log_space=log_space))(keys, jnp.ravel(a))
    return jnp.reshape(samples, a_shape)


def _random_gamma_abstract_eval(key_data, a, *, log_space, partitionable, impl):
  return a


def _random_gamma_batch(axis_data, args, dims, **params):
  (keys, a), (bk, ba) = args, dims
  keys = batching.bdim_at_front(keys, bk, axis_data.size)
  a = batching.bdim_at_front(a, ba, axis_data.size)
  return random_gamma_p.bind(keys, a, **params), 0


def _gamma_grad(sample, a, *, log_space):
  """d sample / d a at fixed uniform draws: implicit reparameterization (Figurnov et al.
  2018), ``-(dP/da) / (dP/dx)`` through `lax.random_gamma_grad`, per element.

  In log space, d log(x) = dx / x, with x = exp(log x) kept off zero.
  """
  size = int(np.prod(np.shape(a)))
  samples = lax_st.reshape(sample, (size,))
  alphas = lax_st.reshape(a, (size,))
  if log_space:
    samples = lax.exp(samples)
    tiny = lax_st.full_like(samples, np.finfo(samples.dtype).tiny)
    samples = lax.select_n(lax.eq(samples, lax_st.full_like(samples, 0)), samples, tiny)
    gamma_grad = lambda alpha, x: lax.div(random_gamma_grad(alpha, x), x)
  else:
    gamma_grad = random_gamma_grad
  # JAX maps sequentially on CPU (one element's series at a time) and vmaps elsewhere.
  grads = scan_map(lambda args: gamma_grad(*args), (alphas, samples))
  return lax_st.reshape(grads, np.shape(a))


def _random_gamma_jvp(primals, tangents, **params):
  key, a = primals
  out = random_gamma_p.bind(*primals, **params)
  a_dot = tangents[1]
  if type(a_dot) is ad.Zero:
    return out, ad.Zero.from_primal_value(out)
  return out, lax.mul(a_dot, _gamma_grad(out, a, log_space=params["log_space"]))


random_gamma_p = core.Primitive("random_gamma")
random_gamma_p.def_abstract_eval(_random_gamma_abstract_eval)
random_gamma_p.def_lowering(prng._lower_by_tracing("random_gamma", _gamma_impl))
random_gamma_p.def_batch(_random_gamma_batch)
random_gamma_p.def_jvp(_random_gamma_jvp)
random_gamma_p.def_pp_params(lambda params: {"log_space": params["log_space"]})


# ----------------------------------------------------------------------------
# gamma and its transforms


def gamma(key, a, shape=None, dtype=None, *, out_sharding=None):
  """Gamma(a) samples (unit scale) (mirrors `jax.random.gamma`)."""
  key, _ = check_prng_key("gamma", key)
  dtype = _float_dtype("gamma", dtype)
  if shape is not None:
    shape = core.canonicalize_shape(shape)
  return _resharded(_gamma(key, a, shape, dtype, False), out_sharding, "gamma")


def loggamma(key, a, shape=None, dtype=None, *, out_sharding=None):
  """log of Gamma(a) samples, accurate for small `a` (mirrors `jax.random.loggamma`)."""
  key, _ = check_prng_key("loggamma", key)
  dtype = _float_dtype("gamma", dtype)
  if shape is not None:
    shape = core.canonicalize_shape(shape)
  return _resharded(_gamma(key, a, shape, dtype, True), out_sharding, "loggamma")


@functools.partial(jit, static_argnums=(2, 3, 4))
def _gamma(key, a, shape, dtype, log_space):
  if shape is None:
    shape = np.shape(a)
  else:
    _check_shape("gamma", shape, np.shape(a))
  a = lax.convert_element_type(a, dtype)
  if np.shape(a) != shape:
    a = jnp.broadcast_to(a, shape)
  return random_gamma_p.bind(key._base_array, a, log_space=log_space,
                             partitionable=prng.partitionable(), impl=key._impl)


def beta(key, a, b, shape=None, dtype=None, *, out_sharding=None):
  """Beta(a, b) samples, as a ratio of gamma samples (mirrors `jax.random.beta`)."""
  key, _ = check_prng_key("beta", key)
  dtype = _float_dtype("beta", dtype)
  return _resharded(_beta(key, a, b, _check_broadcast_shapes("beta", shape, a, b), dtype),
                    out_sharding, "beta")


@functools.partial(jit, static_argnums=(3, 4))
def _beta(key, a, b, shape, dtype):
  a = jnp.broadcast_to(lax.convert_element_type(a, dtype), shape)
  b = jnp.broadcast_to(lax.convert_element_type(b, dtype), shape)
  key_a, key_b = _split(key)
  log_gamma_a = loggamma(key_a, a, shape, dtype)
  log_gamma_b = loggamma(key_b, b, shape, dtype)
  # gamma_a / (gamma_a + gamma_b), scaled by the larger one to keep precision.
  log_max = lax.max(log_gamma_a, log_gamma_b)
  gamma_a_scaled = jnp.exp(log_gamma_a - log_max)
  gamma_b_scaled = jnp.exp(log_gamma_b - log_max)
  return gamma_a_scaled / (gamma_a_scaled + gamma_b_scaled)


def dirichlet(key, alpha, shape=None, dtype=None, *, out_sharding=None):
  """Dirichlet(alpha) samples along the last axis (mirrors `jax.random.dirichlet`)."""
  key, _ = check_prng_key("dirichlet", key)
  dtype = _float_dtype("dirichlet", dtype)
  if shape is not None:
    shape = core.canonicalize_shape(shape)
  return _resharded(_dirichlet(key, alpha, shape, dtype), out_sharding, "dirichlet")


@functools.partial(jit, static_argnums=(2, 3))
def _dirichlet(key, alpha, shape, dtype):
  from xjax._src.nn.functions import softmax  # nn sits above random
  if not np.ndim(alpha) >= 1:
    raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {np.ndim(alpha)}")
  if shape is None:
    shape = np.shape(alpha)[:-1]
  else:
    _check_shape("dirichlet", shape, np.shape(alpha)[:-1])
  alpha = lax.convert_element_type(alpha, dtype)
  log_gamma_samples = loggamma(key, alpha, shape + np.shape(alpha)[-1:], dtype)
  return softmax(log_gamma_samples, -1)


def chisquare(key, df, shape=None, dtype=None, *, out_sharding=None):
  """Chi-square samples with `df` degrees of freedom (mirrors `jax.random.chisquare`)."""
  key, _ = check_prng_key("chisquare", key)
  dtype = _float_dtype("chisquare", dtype)
  return _resharded(_chisquare(key, df, _check_broadcast_shapes("chisquare", shape, df), dtype),
                    out_sharding, "chisquare")


@functools.partial(jit, static_argnums=(2, 3))
def _chisquare(key, df, shape, dtype):
  df = lax.convert_element_type(df, dtype)
  two = _const(df, 2)
  log_g = loggamma(key, lax.div(df, two), shape, dtype)
  return lax.mul(jnp.exp(log_g), two)


def f(key, dfnum, dfden, shape=None, dtype=None, *, out_sharding=None):
  """F-distribution samples: the ratio of two chi-square samples, each divided by its
  degrees of freedom.

  Args:
    key: a PRNG key.
    dfnum: the numerator's degrees of freedom, a float or array broadcastable to `shape`.
    dfden: the denominator's degrees of freedom, likewise.
    shape: the result shape; None: the broadcast shape of `dfnum` and `dfden`.
    dtype: a float dtype (default: the default float dtype).
    out_sharding: None, or the result's sharding (a NamedSharding, or a PartitionSpec over
      the context mesh).

  Returns:
    An array of `dtype` and that shape.

  Raises:
    ValueError: `dtype` is not a float dtype, or `shape` does not broadcast with the
      parameters' shapes.

  Mirrors `jax.random.f`.
  """
  key, _ = check_prng_key("f", key)
  dtype = _float_dtype("f", dtype)
  return _resharded(_f(key, dfnum, dfden, _check_broadcast_shapes("f", shape, dfnum, dfden),
                       dtype), out_sharding, "f")


@functools.partial(jit, static_argnums=(3, 4))
def _f(key, dfnum, dfden, shape, dtype):
  dfden = lax.convert_element_type(dfden, dtype)
  dfnum = lax.convert_element_type(dfnum, dtype)
  key_dfd, key_dfn = _split(key)  # JAX's order: the first key for the denominator
  num = lax.div(chisquare(key_dfn, dfnum, shape, dtype), dfnum)
  den = lax.div(chisquare(key_dfd, dfden, shape, dtype), dfden)
  return lax.div(num, den)


def t(key, df, shape=None, dtype=None, *, out_sharding=None):
  """Student's t samples with `df` degrees of freedom (mirrors `jax.random.t`)."""
  key, _ = check_prng_key("t", key)
  dtype = _float_dtype("t", dtype)
  return _resharded(_t(key, df, _check_broadcast_shapes("t", shape, df), dtype), out_sharding,
                    "t")


@functools.partial(jit, static_argnums=(2, 3))
def _t(key, df, shape, dtype):
  df = lax.convert_element_type(df, dtype)
  key_n, key_g = _split(key)
  n = normal(key_n, shape, dtype)
  half_df = lax.div(df, _const(n, 2))
  g = gamma(key_g, half_df, shape, dtype)
  return n * jnp.sqrt(half_df / g)


def generalized_normal(key, p, shape=(), dtype=None, *, out_sharding=None):
  """Generalized normal samples with shape parameter `p` (mirrors `jax.random.generalized_normal`)."""
  shape = core.canonicalize_shape(shape)
  key, _ = check_prng_key("generalized_normal", key)
  dtype = _float_dtype("generalized_normal", dtype)
  return _resharded(_generalized_normal(key, p, shape, dtype), out_sharding,
                    "generalized_normal")


@functools.partial(jit, static_argnums=(2, 3))
def _generalized_normal(key, p, shape, dtype):
  keys = split(key)
  g = gamma(keys[0], 1 / p, shape, dtype)
  r = rademacher(keys[1], shape, dtype)
  return r * g ** (1 / p)


def ball(key, d: int, p: float = 2, shape=(), dtype=None, *, out_sharding=None):
  """Samples uniform in the unit p-norm ball of dimension `d` (mirrors `jax.random.ball`)."""
  shape = core.canonicalize_shape(shape)
  key, _ = check_prng_key("ball", key)
  dtype = _float_dtype("ball", dtype)
  return _resharded(_ball(key, p, int(d), shape, dtype), out_sharding, "ball")


@functools.partial(jit, static_argnums=(2, 3, 4))
def _ball(key, p, d, shape, dtype):
  k1, k2 = split(key)
  g = generalized_normal(k1, p, (*shape, d), dtype)
  e = exponential(k2, shape, dtype)
  return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


# ----------------------------------------------------------------------------
# poisson


def poisson(key, lam, shape=None, dtype=None, *, out_sharding=None):
  """Poisson(lam) samples (mirrors `jax.random.poisson`)."""
  key, _ = check_prng_key("poisson", key)
  dtype = np.dtype(dtypes.check_user_dtype_supported(int if dtype is None else dtype, "poisson"))
  shape = np.shape(lam) if shape is None else core.canonicalize_shape(shape)
  lam = lax.convert_element_type(jnp.broadcast_to(lam, shape), np.float32)
  return _resharded(_poisson(key, lam, shape, dtype), out_sharding, "poisson")


@functools.partial(jit, static_argnums=(2, 3, 4))
def _poisson_knuth(key, lam, shape, dtype, max_iters):
  # Count uniforms until their product drops below exp(-lam).
  def body_fn(carry):
    i, k, rng, log_prod = carry
    rng, subkey = _split(rng)
    k = _select(log_prod > -lam, k + 1, k)
    u = uniform(subkey, shape, np.float32)
    return i + 1, k, rng, log_prod + jnp.log(u)

  def cond_fn(carry):
    i, log_prod = carry[0], carry[3]
    return (log_prod > -lam).any() & (i < max_iters)

  k_init = lax_st.full_like(lam, 0, dtype, shape)
  log_rate_init = lax_st.full_like(lam, 0, np.float32, shape)
  k = while_loop(cond_fn, body_fn, (0, k_init, key, log_rate_init))[1]
  return (k - 1).astype(dtype)


@functools.partial(jit, static_argnums=(2, 3, 4))
def _poisson_rejection(key, lam, shape, dtype, max_iters):
  log_lam = lax_tr.log(lam)
  b = 0.931 + 2.53 * lax_tr.sqrt(lam)
  a = -0.059 + 0.02483 * b
  inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
  v_r = 0.9277 - 3.6224 / (b - 2)

  def body_fn(carry):
    i, k_out, accepted, key = carry
    key, subkey_0, subkey_1 = _split(key, 3)
    u = uniform(subkey_0, shape, lam.dtype) - 0.5
    v = uniform(subkey_1, shape, lam.dtype)
    u_shifted = 0.5 - abs(u)
    k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
    s = lax_tr.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
    t_ = -lam + k * log_lam - lax_tr.lgamma(k + 1)
    accept1 = (u_shifted >= 0.07) & (v <= v_r)
    reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
    accept2 = s <= t_
    accept = accept1 | (~reject & accept2)
    return i + 1, _select(accept, k, k_out), accepted | accept, key

  def cond_fn(carry):
    i, _, accepted, _ = carry
    return (~accepted).any() & (i < max_iters)

  k_init = lax_st.full_like(lam, -1, lam.dtype, shape)
  accepted = lax_st.full_like(lam, False, np.dtype("bool"), shape)
  k = while_loop(cond_fn, body_fn, (0, k_init, accepted, key))[1]
  return k.astype(dtype)


@functools.partial(jit, static_argnums=(2, 3))
def _poisson(key, lam, shape, dtype):
  use_knuth = lax.ne(lam, lam) | (lam < 10)
  lam_knuth = _select(use_knuth, lam, lax_st.full_like(lam, 0.0))
  lam_rejection = _select(use_knuth, lax_st.full_like(lam, 1e5), lam)
  max_iters = dtype.type(dtypes.iinfo(dtype).max)  # in effect unbounded
  result = _select(use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
                   _poisson_rejection(key, lam_rejection, shape, dtype, max_iters))
  return _select(lam == 0, jnp.zeros_like(result), result)


# ----------------------------------------------------------------------------
# binomial


def _stirling_approx_tail(k):
  tail_values = jnp.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                           0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                           0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                           0.00833056343336287], dtype=k.dtype)
  use_tail_values = k <= 9
  k = lax.clamp(_const(k, 0.0), k, _const(k, 9.0))
  kp1sq = (k + 1) * (k + 1)
  approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
  k = jnp.floor(k)
  return _select(use_tail_values, tail_values[jnp.asarray(k, dtype="int32")], approx)


@functools.partial(jit, static_argnums=(3, 4, 5), inline=True)
def _binomial_inversion(key, count, prob, shape, dtype, max_iters):
  log1minusprob = jnp.log1p(-prob)

  def body_fn(carry):
    i, num_geom, geom_sum, key = carry
    subkey, key = split(key)
    num_geom_out = _select(geom_sum <= count, num_geom + 1, num_geom)
    u = uniform(subkey, shape, prob.dtype)
    geom = jnp.ceil(jnp.log(u) / log1minusprob)
    return i + 1, num_geom_out, geom_sum + geom, key

  def cond_fn(carry):
    i, geom_sum = carry[0], carry[2]
    return (geom_sum <= count).any() & (i < max_iters)

  num_geom_init = lax_st.full_like(prob, 0, prob.dtype, shape)
  geom_sum_init = lax_st.full_like(prob, 0, prob.dtype, shape)
  k = while_loop(cond_fn, body_fn, (0, num_geom_init, geom_sum_init, key))[1]
  return (k - 1).astype(dtype)


@functools.partial(jit, static_argnums=(3, 4, 5), inline=True)
def _btrs(key, count, prob, shape, dtype, max_iters):
  stddev = jnp.sqrt(count * prob * (1 - prob))
  b = 1.15 + 2.53 * stddev
  a = -0.0873 + 0.0248 * b + 0.01 * prob
  c = count * prob + 0.5
  v_r = 0.92 - 4.2 / b
  r = prob / (1 - prob)
  alpha = (2.83 + 5.1 / b) * stddev
  m = jnp.floor((count + 1) * prob)

  def body_fn(carry):
    i, k_out, accepted, key = carry
    key, subkey_0, subkey_1 = split(key, 3)
    u = uniform(subkey_0, shape, prob.dtype)
    v = uniform(subkey_1, shape, prob.dtype)
    u = u - 0.5
    us = 0.5 - jnp.abs(u)
    accept1 = (us >= 0.07) & (v <= v_r)
    k = jnp.floor((2 * a / us + b) * u + c)
    reject = (k < 0) | (k > count)
    v = jnp.log(v * alpha / (a / (us * us) + b))
    ub = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
          + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
          + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
          + _stirling_approx_tail(m) + _stirling_approx_tail(count - m)
          - _stirling_approx_tail(k) - _stirling_approx_tail(count - k))
    accept = accept1 | (~reject & (v <= ub))
    return i + 1, _select(accept, k, k_out), accepted | accept, key

  def cond_fn(carry):
    i, accepted = carry[0], carry[2]
    return (~accepted).any() & (i < max_iters)

  k_init = lax_st.full_like(prob, -1, prob.dtype, shape)
  carry = (0, k_init, jnp.full(shape, False, bool), key)
  return while_loop(cond_fn, body_fn, carry)[1].astype(dtype)


def binomial(key, n, p, shape=None, dtype=None):
  """Binomial(n, p) samples, as floats (mirrors `jax.random.binomial`)."""
  key, _ = check_prng_key("binomial", key)
  check_arraylike("binomial", n, p)
  dtype = _float_dtype("binomial", dtype)
  if shape is not None:
    shape = core.canonicalize_shape(shape)
  return _binomial(key, n, p, shape, dtype)


@functools.partial(jit, static_argnums=(3, 4), inline=True)
def _binomial(key, count, prob, shape, dtype):
  if shape is None:
    shape = tuple(np.broadcast_shapes(np.shape(count), np.shape(prob)))
  else:
    _check_shape("binomial", shape, np.shape(count), np.shape(prob))
  (prob,) = promote_dtypes_inexact(prob)
  count = jnp.broadcast_to(lax.convert_element_type(count, prob.dtype), shape)
  prob = jnp.broadcast_to(prob, shape)
  p_lt_half = prob < 0.5
  q = _select(p_lt_half, prob, 1.0 - prob)
  count_nan_or_neg = lax.ne(count, count) | (count < 0.0)
  count_inf = jnp.isinf(count)
  q_is_nan = lax.ne(q, q)
  q_l_0 = q < 0.0
  q = _select(q_is_nan | q_l_0, lax_st.full_like(q, 0.01), q)
  use_inversion = count_nan_or_neg | (count * q <= 10.0)
  count = jnp.floor(count)  # as np.random.binomial does for a float count
  count_inv = _select(use_inversion, count, lax_st.full_like(count, 0.0))
  count_btrs = _select(use_inversion, lax_st.full_like(count, 1e4), count)
  q_btrs = _select(use_inversion, lax_st.full_like(q, 0.5), q)
  max_iters = dtype.type(dtypes.finfo(dtype).max)
  samples = _select(use_inversion,
                    _binomial_inversion(key, count_inv, q, shape, dtype, max_iters),
                    _btrs(key, count_btrs, q_btrs, shape, dtype, max_iters))
  # NaN for an invalid q or count; inf for an infinite count.
  invalid = q_l_0 | q_is_nan | count_nan_or_neg
  samples = _select(invalid, jnp.full_like(samples, np.nan, dtype), samples)
  samples = _select(count_inf & (~invalid), jnp.full_like(samples, np.inf, dtype), samples)
  return _select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                 count.astype(dtype) - samples)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
  """Multinomial samples: the counts of each of ``p.shape[-1]`` outcomes in `n` trials.

  Outcome k's count is a binomial sample of the trials left after outcomes 0..k-1, with
  probability p_k / (p_k + ... + p_last), drawn in a `lax.scan` over the outcomes.

  Args:
    key: a PRNG key.
    n: the number of trials, broadcastable to ``p.shape[:-1]``.
    p: the outcome probabilities, along the last axis.
    shape: the result shape including the outcome axis; None: ``p.shape``.
    dtype: the result dtype (None: the default float dtype).
    unroll: passed to the `lax.scan` over the outcomes.

  Returns:
    The counts, of that shape and `dtype`.

  Raises:
    TypeError: `n` or `p` is not array-like.

  Mirrors `jax.random.multinomial`.
  """
  key, _ = check_prng_key("multinomial", key)
  check_arraylike("multinomial", n, p)
  n, p = promote_dtypes_inexact(n, p)
  if shape is None:
    shape = p.shape
  shape = core.canonicalize_shape(shape)
  n = jnp.broadcast_to(n, shape[:-1])
  p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)
  remaining = cumsum(p, 0, reverse=True)
  ratios = p / jnp.where(remaining == 0, 1, remaining)

  def draw(left, ratio_key):
    ratio, k = ratio_key
    count = binomial(k, left, ratio.clip(0, 1), dtype=left.dtype)
    return left - count, count

  _, counts = scan(draw, n, (ratios, split(key, ratios.shape[0])), unroll=unroll)
  return jnp.moveaxis(counts, 0, -1).astype(dtype)
