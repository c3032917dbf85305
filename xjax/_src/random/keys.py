"""The key API of ``xjax.random``: key, PRNGKey, split, fold_in, bits and key data access.

Random functions accept typed keys (`key`, dtype ``key<fry>``) and raw keys
(`PRNGKey`, uint32 arrays of shape ``(..., 2)``); functions that return keys
return the kind they were given, as in JAX.
"""
from __future__ import annotations

from collections.abc import Sequence

import warnings

import numpy as np

from xjax._src import core
from xjax._src import dispatch
from xjax._src import dtypes
from xjax._src.array import Array
from xjax._src.config import config
from xjax._src.lax import elementwise as ew
from xjax._src.random import prng
from xjax._src.random.prng import PRNGKeyArray
from xjax._src.sharding import constraints
from xjax._src.sharding import rules


def _asarray(x):
  """`x` as an array value (Arrays and tracers pass through; others go to the device)."""
  if isinstance(x, (core.Tracer, Array)):
    return x
  return dispatch.device_put_value(x)


def default_prng_impl() -> prng.PRNGImpl:
  """The PRNG of keys made without an `impl`: ``jax_default_prng_impl`` (threefry2x32 by
  default; also rbg and unsafe_rbg)."""
  return prng.prngs[config.jax_default_prng_impl]


class PRNGSpec:
  """Names a PRNG implementation (what `key_impl` returns for unregistered ones)."""
  __slots__ = ("_impl",)

  def __init__(self, impl):
    self._impl = impl

  def __repr__(self):
    return f"PRNGSpec({self._impl.name!r})"

  def __str__(self):
    return str(self._impl)

  def __hash__(self):
    return hash(self._impl)

  def __eq__(self, other):
    return isinstance(other, PRNGSpec) and self._impl == other._impl


def resolve_prng_impl(spec) -> prng.PRNGImpl:
  if spec is None:
    return default_prng_impl()
  if type(spec) is prng.PRNGImpl:
    return spec
  if type(spec) is PRNGSpec:
    return spec._impl
  if isinstance(spec, prng.KeyTy):
    return spec._impl
  if type(spec) is str:
    if spec in prng.prngs:
      return prng.prngs[spec]
    names = ", ".join(f'"{s}"' for s in prng.prngs)
    raise ValueError(f'unrecognized PRNG implementation "{spec}". Did you mean one of: {names}?')
  raise TypeError(f"unrecognized type {type(spec)} for specifying PRNG implementation.")


def key_dtype(impl=None) -> prng.KeyTy:
  """The key dtype of a PRNG implementation (mirrors `jax.random.key_dtype`)."""
  return prng.KeyTy(resolve_prng_impl(impl))


def _is_arraylike(x) -> bool:
  return (isinstance(x, (np.ndarray, np.generic, core.Tracer, Array, int, float, complex))
          or hasattr(x, "__jax_array__"))


_LEGACY_KEY_MESSAGE = (
    "Legacy uint32 key array passed as key to jax.random function. Please create keys using "
    "jax.random.key(). If use of a raw key array was intended, set "
    'jax_legacy_prng_key="allow".')


def _check_legacy_key_allowed() -> None:
  """JAX's `jax_legacy_prng_key` check of a raw key passed to a random function."""
  mode = config.jax_legacy_prng_key
  if mode == "error":
    raise ValueError(_LEGACY_KEY_MESSAGE)
  if mode == "warn":
    warnings.warn(_LEGACY_KEY_MESSAGE, stacklevel=4)


def check_prng_key(name: str, key, *, allow_batched: bool = False):
  """``(typed key, was_raw)``: wraps raw uint32 keys, with JAX's checks and messages."""
  if isinstance(key, PRNGKeyArray):
    typed, wrapped = key, False
  elif isinstance(getattr(key, "dtype", None), prng.KeyTy):  # a bare key-typed value
    typed, wrapped = PRNGKeyArray(key.dtype._impl, key), False
  elif _is_arraylike(key):
    typed, wrapped = prng.random_wrap(key, impl=default_prng_impl()), True
    _check_legacy_key_allowed()
  else:
    raise TypeError(f"unexpected PRNG key type {type(key)}")
  if not allow_batched and typed.ndim:
    raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                     f"{np.shape(key) if wrapped else typed.shape} != (). Use jax.vmap for batching.")
  return typed, wrapped


def _return_keys(was_raw: bool, keys: PRNGKeyArray):
  return prng.random_unwrap(keys) if was_raw else keys


def _seed_value(seed):
  """The seed as an integer array; a Python int goes through int64 (wrapping in 32-bit mode)."""
  if isinstance(seed, int) and not isinstance(seed, bool):
    value = np.int64(seed)
    if not config.jax_enable_x64:
      value = value.astype(np.int32)
    return value  # a literal in jaxprs, as in JAX
  return seed if isinstance(seed, core.Tracer) else _asarray(seed)


def _key(ctor_name: str, seed, impl_spec) -> PRNGKeyArray:
  impl = resolve_prng_impl(impl_spec)
  if isinstance(seed, PRNGKeyArray):
    raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
  if np.ndim(seed) if not isinstance(seed, core.Tracer) else seed.ndim:
    raise TypeError(f"{ctor_name} accepts a scalar seed, but was given an array of shape "
                    f"{np.shape(seed)} != (). Use jax.vmap for batching")
  seed = _seed_value(seed)
  if not dtypes.issubdtype(core.get_aval(seed).dtype, np.integer):
    raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
  return prng.random_seed(seed, impl)


def key(seed, *, impl=None, dtype=None) -> PRNGKeyArray:
  """A typed PRNG key (dtype ``key<fry>``, shape ``()``) from an integer seed.

  Args:
    seed: a 64- or 32-bit integer (a Python int is taken as int64, and
      wraps to 32 bits when ``jax_enable_x64`` is off).
    impl: optional PRNG implementation name (``'threefry2x32'``).
    dtype: optional key dtype or implementation name, instead of `impl`.

  Returns:
    A scalar key array.

  >>> key(0)
  Array((), dtype=key<fry>) overlaying:
  [0 0]

  Mirrors `jax.random.key`.
  """
  if dtype is not None:
    if impl is not None:
      raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
    impl = dtype
  return _key("key", seed, impl)


def PRNGKey(seed, *, impl=None):  # noqa: N802 - JAX's name
  """A raw (legacy) PRNG key: a uint32 array of shape ``(2,)``.

  >>> PRNGKey(0)
  Array([0, 0], dtype=uint32)

  Mirrors `jax.random.PRNGKey`.
  """
  return prng.random_unwrap(_key("PRNGKey", seed, impl))


def split(key, num: int | Sequence[int] = 2):
  """Splits a key into `num` new keys (or an array of keys of shape `num`).

  Args:
    key: a typed or raw key (a single key).
    num: a positive integer, or a tuple of integers giving the shape of the
      result's key axes. Default 2.

  Returns:
    Keys of shape ``(num,)`` (or `num`), of the same kind as `key`.

  Mirrors `jax.random.split`.
  """
  typed, was_raw = check_prng_key("split", key)
  return _return_keys(was_raw, _split(typed, num))


def _split(key: PRNGKeyArray, num=2) -> PRNGKeyArray:
  if key.ndim:
    raise TypeError("split accepts a single key, but was given a key array of shape "
                    f"{key.shape} != (). Use jax.vmap for batching.")
  shape = tuple(num) if isinstance(num, Sequence) else (num,)
  shape = core.canonicalize_shape(shape)
  return prng.random_split(key, shape)


def fold_in(key, data):
  """A new key from `key` and the 32-bit integer `data` (mirrors `jax.random.fold_in`).

  Raises:
    OverflowError: `data` is a Python int outside [0, 2**32).
  """
  typed, was_raw = check_prng_key("fold_in", key)
  if np.ndim(data) if not isinstance(data, core.Tracer) else data.ndim:
    raise TypeError("fold_in accepts a scalar, but was given an array of"
                    f"shape {np.shape(data)} != (). Use jax.vmap for batching.")
  return _return_keys(was_raw, prng.random_fold_in(typed, _as_uint32(data)))


def _as_uint32(data):
  if isinstance(data, (core.Tracer, Array)):
    return ew.convert_element_type(data, np.uint32)
  # A Python int must fit; NumPy values wrap as NumPy casts them (both as in JAX).
  if type(data) is int and not 0 <= data < 2 ** 32:
    raise OverflowError(f"Python integer {data} out of bounds for uint32")
  return np.asarray(data).astype(np.uint32)  # a literal in jaxprs, as in JAX


def bits(key, shape=(), dtype=None, *, out_sharding=None):
  """Uniform random bits as unsigned integers of `dtype` (default uint32; uint64 with x64).

  Mirrors `jax.random.bits`.
  """
  typed, _ = check_prng_key("bits", key)
  if dtype is None:
    dtype = dtypes.default_uint_dtype()
  else:
    dtype = dtypes.check_user_dtype_supported(dtype, "bits")
  if not dtypes.issubdtype(dtype, np.unsignedinteger):
    raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
  shape = core.canonicalize_shape(shape)
  out = prng.random_bits(typed, np.dtype(dtype).itemsize * 8, shape)
  if out_sharding is None:
    return out
  return constraints.reshard(out, rules.canonicalize_out_sharding(out_sharding, "bits"))


def key_data(keys):
  """The uint32 key data under a key array: shape ``(*keys.shape, 2)``."""
  typed, _ = check_prng_key("key_data", keys, allow_batched=True)
  return prng.random_unwrap(typed)


def wrap_key_data(key_bits_array, *, impl=None, dtype=None) -> PRNGKeyArray:
  """A typed key array over uint32 key data of shape ``(..., 2)``."""
  if dtype is not None:
    if impl is not None:
      raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                       "jax.random.wrap_key_data")
    impl = dtype
  return prng.random_wrap(_asarray(key_bits_array), impl=resolve_prng_impl(impl))


def key_impl(keys):
  """The name of the PRNG implementation of `keys` (``'threefry2x32'``)."""
  typed, _ = check_prng_key("key_impl", keys, allow_batched=True)
  impl = typed._impl
  return impl.name if impl.name in prng.prngs else PRNGSpec(impl)


def clone(key):
  """A copy of `key` (an identity, for key-reuse checking; mirrors `jax.random.clone`).

  A typed key's clone is a new key array over the same data, unconsumed.
  """
  if isinstance(key, PRNGKeyArray):
    return PRNGKeyArray(key._impl, key._base_array)
  return key
