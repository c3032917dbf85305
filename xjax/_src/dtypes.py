"""Dtypes: the set xjax supports, canonicalisation, and JAX's type promotion.

xjax's dtypes differ from NumPy's in three ways, all taken from JAX 0.10.2:

* the set of types: NumPy's numeric types plus ml_dtypes' ``bfloat16``,
  float8/6/4 and sub-byte integers, plus ``float0`` for the tangents of
  integer values;
* canonicalisation: with ``jax_enable_x64`` off, 64-bit types become their
  32-bit counterparts (``canonicalize_dtype``);
* promotion: binary operations join their operand types on a lattice in which
  Python scalars are *weak* (``i*``, ``f*``, ``c*``) and take the width of the
  other operand: ``int8 + 1 -> int8``, ``bfloat16 + 1.0 -> bfloat16``
  (``result_type``, ``promote_types``).
"""
from __future__ import annotations

import functools
import warnings
from typing import Any

import ml_dtypes
import numpy as np

from xjax._src.config import config


# ---------------------------------------------------------------------------
# The scalar types and dtypes.

class extended(np.generic):
  """Abstract scalar class of the dtypes NumPy does not know (PRNG keys).

  Never instantiated; it exists for ``issubdtype(key.dtype, extended)``.
  """


class prng_key(extended):
  """Abstract scalar class of PRNG key dtypes, for ``issubdtype``."""


class ExtendedDType:
  """Base class of extended dtypes: objects with a ``type`` (a subclass of
  ``extended``), a ``name`` and ``_rules`` that say how the dtype lowers.

  An array of an extended dtype and shape S is stored (on the device, in
  StableHLO) as an array of ``physical_element_dtype`` and shape
  ``(*S, *physical_element_shape)``: a ``key<fry>[3]`` is a ``u32[3,2]``.
  A subclass gives both, or (as JAX's extended dtypes do) rules with
  ``physical_element_aval(dtype)``, the ShapedArray of one element's data.
  """
  type: type = extended
  _rules: Any = None

  def _element_aval(self):
    rule = getattr(self._rules, "physical_element_aval", None)
    return None if rule is None else rule(self)

  @property
  def physical_element_shape(self) -> tuple:
    aval = self._element_aval()
    return () if aval is None else tuple(aval.shape)

  @property
  def physical_element_dtype(self) -> np.dtype:
    aval = self._element_aval()
    return np.dtype(np.uint8) if aval is None else np.dtype(aval.dtype)


bool_ = np.bool_
bfloat16 = ml_dtypes.bfloat16
float8_e3m4 = ml_dtypes.float8_e3m4
float8_e4m3 = ml_dtypes.float8_e4m3
float8_e8m0fnu = ml_dtypes.float8_e8m0fnu
float8_e4m3b11fnuz = ml_dtypes.float8_e4m3b11fnuz
float8_e4m3fn = ml_dtypes.float8_e4m3fn
float8_e4m3fnuz = ml_dtypes.float8_e4m3fnuz
float8_e5m2 = ml_dtypes.float8_e5m2
float8_e5m2fnuz = ml_dtypes.float8_e5m2fnuz
float6_e2m3fn = ml_dtypes.float6_e2m3fn
float6_e3m2fn = ml_dtypes.float6_e3m2fn
float4_e2m1fn = ml_dtypes.float4_e2m1fn
int1, uint1 = ml_dtypes.int1, ml_dtypes.uint1  # in recent ml_dtypes (0.6 has them)
int2, uint2 = ml_dtypes.int2, ml_dtypes.uint2
int4, uint4 = ml_dtypes.int4, ml_dtypes.uint4

# The dtype of tangents of integer and boolean values: a zero-size struct.
float0 = np.dtype([("float0", np.void, 0)])

_float8_dtypes = [np.dtype(t) for t in (
    float8_e3m4, float8_e4m3, float8_e8m0fnu, float8_e4m3b11fnuz,
    float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz)]
_float6_dtypes = [np.dtype(float6_e2m3fn), np.dtype(float6_e3m2fn)]
_float4_dtypes = [np.dtype(float4_e2m1fn)]
# Floats that are not NumPy's own, narrowest first; bfloat16 last.
_custom_float_dtypes = [*_float4_dtypes, *_float6_dtypes, *_float8_dtypes,
                        np.dtype(bfloat16)]
_custom_float_scalar_types = {d.type for d in _custom_float_dtypes}

_signed_intn = [np.dtype(t) for t in (int1, int2, int4)]
_unsigned_intn = [np.dtype(t) for t in (uint1, uint2, uint4)]
_intn_dtypes = _signed_intn + _unsigned_intn
_signed_intn_types = {d.type for d in _signed_intn}
_unsigned_intn_types = {d.type for d in _unsigned_intn}

_bool_dtypes = [np.dtype(bool)]
_signed_dtypes = _signed_intn + [np.dtype(t) for t in ("int8", "int16", "int32", "int64")]
_unsigned_dtypes = _unsigned_intn + [np.dtype(t) for t in ("uint8", "uint16", "uint32", "uint64")]
_int_dtypes = _unsigned_dtypes + _signed_dtypes
_float_dtypes = _custom_float_dtypes + [np.dtype(t) for t in ("float16", "float32", "float64")]
_complex_dtypes = [np.dtype("complex64"), np.dtype("complex128")]
_numeric_dtypes = _int_dtypes + _float_dtypes + _complex_dtypes

# Every dtype an xjax array may have (strings only pass through, never promote).
_jax_dtype_set = {float0, np.dtypes.StringDType(), *_bool_dtypes, *_numeric_dtypes}

_dtype_kinds = {
    "bool": set(_bool_dtypes),
    "signed integer": set(_signed_dtypes),
    "unsigned integer": set(_unsigned_dtypes),
    "integral": set(_int_dtypes),
    "real floating": set(_float_dtypes),
    "complex floating": set(_complex_dtypes),
    "numeric": set(_numeric_dtypes),
}


# ---------------------------------------------------------------------------
# Defaults and canonicalisation.

def default_int_dtype() -> np.dtype:
  return np.dtype("int64" if config.jax_enable_x64 else "int32")


def default_uint_dtype() -> np.dtype:
  return np.dtype("uint64" if config.jax_enable_x64 else "uint32")


def default_float_dtype() -> np.dtype:
  return np.dtype("float64" if config.jax_enable_x64 else "float32")


def default_complex_dtype() -> np.dtype:
  return np.dtype("complex128" if config.jax_enable_x64 else "complex64")


# A weakly typed result takes the default dtype of its kind: these, canonicalised.
_weak_default = {k: np.dtype(v) for k, v in (
    ("b", "bool"), ("i", "int64"), ("u", "uint64"), ("f", "float64"), ("c", "complex128"))}

_to_32bit = {np.dtype(a): np.dtype(b) for a, b in (
    ("int64", "int32"), ("uint64", "uint32"),
    ("float64", "float32"), ("complex128", "complex64"))}

_canonical_cache: dict[tuple, Any] = {}


def _canonicalize(dtype, x64: bool, allow_extended_dtype: bool):
  key = (dtype, x64, allow_extended_dtype)
  try:
    return _canonical_cache[key]
  except KeyError:
    out = _canonical_cache[key] = _canonicalize_uncached(*key)
    return out
  except TypeError:  # an unhashable dtype-like, e.g. a list of struct fields
    return _canonicalize_uncached(*key)


def _canonicalize_uncached(dtype, x64: bool, allow_extended_dtype: bool):
  if isinstance(dtype, ExtendedDType) or issubdtype(dtype, extended):
    if not allow_extended_dtype:
      raise ValueError(f"internal: canonicalize_dtype called on extended dtype {dtype} "
                       "with allow_extended_dtype=False")
    return dtype
  try:
    dt = np.dtype(dtype)
  except TypeError as err:
    raise TypeError(f"dtype {dtype!r} not understood") from err
  return dt if x64 else _to_32bit.get(dt, dt)


def canonicalize_dtype(dtype, allow_extended_dtype: bool = False) -> np.dtype:
  """The dtype xjax computes in for ``dtype``: with ``jax_enable_x64`` off,
  int64, uint64, float64 and complex128 become their 32-bit counterparts.

  >>> canonicalize_dtype(np.float64)      # with jax_enable_x64 off
  dtype('float32')
  """
  return _canonicalize(dtype, config.jax_enable_x64, allow_extended_dtype)


# ---------------------------------------------------------------------------
# Python scalars, weak types and the dtype of a value.

# The dtypes of Python scalars before canonicalisation, as in JAX.
python_scalar_dtypes: dict[type, np.dtype] = {
    bool: np.dtype("bool"), int: np.dtype("int64"),
    float: np.dtype("float64"), complex: np.dtype("complex128"),
}

# Python types whose values (and the types themselves) are weakly typed.
_weak_types = (int, float, complex)


def is_python_scalar(x) -> bool:
  """True for Python ``bool``, ``int``, ``float`` and ``complex`` values
  (not their NumPy subclasses such as ``np.float64``)."""
  return type(x) in python_scalar_dtypes


# Types whose values canonicalize by a function of their own (`core.canonicalize_value`
# consults this table before the value's aval).
canonicalize_value_handlers: dict[type, Any] = {}


def register_canonicalize_value_handler(type_: type, handler) -> None:
  """Makes `core.canonicalize_value` canonicalize values of `type_` (and its subclasses) with
  `handler(x)`; None registers the identity (the values are already canonical).

  Mirrors `jax._src.dtypes.register_canonicalize_value_handler`."""
  canonicalize_value_handlers[type_] = (lambda x: x) if handler is None else handler


def is_weakly_typed(x) -> bool:
  """True for Python int/float/complex values (not bools), and for values
  whose ``aval.weak_type`` (or own ``weak_type``, for avals) is true."""
  if type(x) in _weak_types:
    return True
  try:
    return bool(x.aval.weak_type)
  except AttributeError:
    return bool(getattr(x, "weak_type", False))


_python_type_of_kind = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def _python_type_of_dtype(dt) -> type:
  if dt in _custom_float_dtypes:
    return float
  if dt in _intn_dtypes:
    return int
  try:
    return _python_type_of_kind[np.dtype(dt).kind]
  except KeyError:
    raise TypeError(f"Invalid scalar dtype {dt}") from None


def _check_jax_dtype(x, dt):
  if dt not in _jax_dtype_set and not issubdtype(dt, extended):
    raise TypeError(f"Value '{x}' with dtype {dt} is not a valid JAX array type. "
                    "Only arrays of numeric types are supported by JAX.")


def dtype(x, *, canonicalize: bool = False):
  """The dtype of a value or dtype-like ``x`` (mirrors ``jax.dtypes.dtype``).

  Accepts dtypes and dtype-likes (``'float32'``, ``np.float32``, ``float``),
  Python scalars, NumPy arrays and scalars, and objects with a ``dtype``.
  Python scalars map to ``python_scalar_dtypes`` (``dtype(1) == int64``);
  with ``canonicalize=True`` the result goes through ``canonicalize_dtype``.

  >>> dtype(1.0), dtype(1.0, canonicalize=True)    # with jax_enable_x64 off
  (dtype('float64'), dtype('float32'))
  """
  dt = _raw_dtype(x)
  return canonicalize_dtype(dt, allow_extended_dtype=True) if canonicalize else dt


def _raw_dtype(x):
  if x is None:
    raise ValueError(f"Invalid argument to dtype: {x}.")
  if isinstance(x, np.dtype) and x in _jax_dtype_set:
    return x
  if isinstance(x, type) and x in python_scalar_dtypes:
    dt = python_scalar_dtypes[x]
  elif type(x) in python_scalar_dtypes:
    dt = python_scalar_dtypes[type(x)]
  elif isinstance(x, ExtendedDType):
    return x
  elif isinstance(x, type) and issubclass(x, np.generic):
    dt = np.dtype(x)
  elif isinstance(x, (str, np.dtype)):
    dt = np.dtype(x)
    _check_jax_dtype(x, dt)
  else:
    dt = getattr(x, "dtype", None)
    if not isinstance(dt, (np.dtype, ExtendedDType)):
      try:
        dt = np.result_type(x)
      except TypeError as err:
        raise TypeError(f"Cannot determine dtype of {x}") from err
    _check_jax_dtype(x, dt)
  return dt


def scalar_type_of(x) -> type:
  """The Python scalar type (bool, int, float, complex) of a value's dtype."""
  try:
    return _python_type_of_dtype(dtype(x))
  except TypeError as err:
    raise TypeError(f"Invalid scalar value {x}") from err


# ---------------------------------------------------------------------------
# Predicates, limits and related dtypes.

finfo = ml_dtypes.finfo  # knows bfloat16 and the float8s as well as NumPy's types
iinfo = ml_dtypes.iinfo  # knows int2/int4 as well as NumPy's types


# The inexact types that have no infinity (their largest value saturates instead).
_no_inf_types = {float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2fnuz}


def supports_inf(dtype) -> bool:
  """True if `dtype` (anything `np.dtype` accepts) is inexact and represents infinity:
  False for the integer and bool types and for the float8 types without inf (e4m3fn,
  e4m3fnuz, e4m3b11fnuz, e5m2fnuz). Mirrors JAX's private `dtypes.supports_inf`."""
  dt = np.dtype(dtype)
  return dt.type not in _no_inf_types and issubdtype(dt, np.inexact)


def _issubclass(a, b) -> bool:
  try:
    return issubclass(a, b)
  except TypeError:
    return False


def _scalar_class(a) -> type:
  return a if isinstance(a, type) and _issubclass(a, np.generic) else np.dtype(a).type


_plain_dtype_args = (type, np.dtype, ExtendedDType)


def issubdtype(a, b) -> bool:
  """``np.issubdtype`` that also places bfloat16, the float8s and sub-byte
  integers in NumPy's hierarchy, and knows extended dtypes.

  >>> issubdtype(bfloat16, np.floating), issubdtype(np.float32, bfloat16)
  (True, False)
  """
  return _issubdtype(a if isinstance(a, _plain_dtype_args) else np.dtype(a),
                     b if isinstance(b, _plain_dtype_args) else np.dtype(b))


@functools.lru_cache(512)
def _issubdtype(a, b) -> bool:
  if isinstance(b, type) and _issubclass(b, extended):
    return _issubclass(a.type if isinstance(a, ExtendedDType) else _scalar_class(a), b)
  if isinstance(b, ExtendedDType):
    return isinstance(a, ExtendedDType) and a == b
  if isinstance(a, ExtendedDType):
    a = a.type
  a_sc, b_sc = _scalar_class(a), _scalar_class(b)
  if a_sc in _custom_float_scalar_types:
    return b_sc in {a_sc, np.floating, np.inexact, np.number, np.generic}
  if a_sc in _signed_intn_types:
    return b_sc in {a_sc, np.signedinteger, np.integer, np.number, np.generic}
  if a_sc in _unsigned_intn_types:
    return b_sc in {a_sc, np.unsignedinteger, np.integer, np.number, np.generic}
  return bool(np.issubdtype(a_sc, b_sc))


def isdtype(dtype, kind) -> bool:
  """Whether ``dtype`` is of ``kind`` (Array API): a kind name such as
  ``'real floating'``, a dtype, or a tuple of these.

  >>> isdtype(bfloat16, "real floating"), isdtype(np.int8, ("bool", np.int8))
  (True, True)
  """
  the_dtype = np.dtype(dtype)
  options = set()
  for k in kind if isinstance(kind, tuple) else (kind,):
    if isinstance(k, str) and k in _dtype_kinds:
      options |= _dtype_kinds[k]
      continue
    try:
      options.add(np.dtype(k))
    except TypeError as err:
      if isinstance(k, str):
        raise ValueError(f"Unrecognized kind={k!r} expected one of {list(_dtype_kinds)}, "
                         "or a compatible input for jnp.dtype()") from None
      raise TypeError(f"Expected kind to be a dtype, string, or tuple; got kind={k!r}") from err
  return the_dtype in options


def itemsize_bits(dtype) -> int:
  """Bits per element, which ``itemsize`` gets wrong for sub-byte types."""
  if dtype is None:
    raise ValueError("dtype cannot be None.")
  if np.dtype(dtype) == np.dtype(bool):
    return 8
  if issubdtype(dtype, np.integer):
    return iinfo(dtype).bits
  if issubdtype(dtype, np.floating):
    return finfo(dtype).bits
  if issubdtype(dtype, np.complexfloating):
    return 2 * finfo(dtype).bits
  raise ValueError(f"unexpected input: dtype={dtype!r}")


# As in JAX, integers up to 32 bits become float32 (even with x64 on) and
# 64-bit integers float64; the caller canonicalises.
_dtype_to_inexact = {np.dtype(k): np.dtype(v) for k, v in (
    ("bool", "float32"), ("int4", "float32"), ("uint4", "float32"),
    ("int8", "float32"), ("uint8", "float32"), ("int16", "float32"),
    ("uint16", "float32"), ("int32", "float32"), ("uint32", "float32"),
    ("int64", "float64"), ("uint64", "float64"))}


def to_numeric_dtype(dtype) -> np.dtype:
  """bool becomes int32; other dtypes are returned unchanged."""
  dt = np.dtype(dtype)
  return np.dtype("int32") if dt == np.dtype(bool) else dt


def to_inexact_dtype(dtype) -> np.dtype:
  """bool and integers become floats (see ``_dtype_to_inexact``); inexact
  dtypes are returned unchanged."""
  dt = np.dtype(dtype)
  return _dtype_to_inexact.get(dt, dt)


def to_floating_dtype(dtype) -> np.dtype:
  """Like ``to_inexact_dtype``, but complex dtypes become their real part's."""
  return finfo(to_inexact_dtype(dtype)).dtype


def to_complex_dtype(dtype) -> np.dtype:
  """complex128 for float64/complex128 (and int64), complex64 otherwise."""
  inexact = to_inexact_dtype(dtype)
  if inexact in (np.dtype("float64"), np.dtype("complex128")):
    return np.dtype("complex128")
  return np.dtype("complex64")


# ---------------------------------------------------------------------------
# The type promotion lattice.
#
# Nodes are dtypes (strong types) and the Python types int, float and complex,
# which stand for the weak types i*, f* and c*.  Each node maps to the nodes
# immediately above it.  The result of promoting several nodes is their least
# upper bound (join).

def _lattice(strict: bool, x64: bool) -> dict:
  b1, = _bool_dtypes
  u8, u16, u32, u64 = _unsigned_dtypes[-4:]
  i8, i16, i32, i64 = _signed_dtypes[-4:]
  bf16, f16, f32, f64 = _float_dtypes[-4:]
  c64, c128 = _complex_dtypes
  small_floats = _float_dtypes[:-4]
  if strict:
    # Only weak types promote: i* into any numeric type, f* into inexact ones.
    edges = {t: [] for t in _bool_dtypes + _numeric_dtypes}
    edges.update({int: [float, *_int_dtypes], float: [complex, *_float_dtypes],
                  complex: list(_complex_dtypes)})
    return edges
  return {
      b1: [int],
      int: [u8, i8, *_intn_dtypes],
      **{t: [] for t in _intn_dtypes + small_floats},
      u8: [i16, u16], u16: [i32, u32],
      # Without x64, u32 x i32 joins at i32, so that no 64-bit type arises
      # from 32-bit inputs.
      u32: [i64, u64] if x64 else [i32, u64],
      u64: [float],
      i8: [i16], i16: [i32], i32: [i64], i64: [float],
      float: [*small_floats, bf16, f16, complex],
      bf16: [f32], f16: [f32], f32: [f64, c64], f64: [c128],
      complex: [c64], c64: [c128], c128: [],
  }


def _upper_bounds(lattice: dict) -> dict:
  """Maps each node to the set of nodes at or above it (transitive closure)."""
  bounds = {}
  for node in lattice:
    seen, todo = {node}, [node]
    while todo:
      for above in lattice[todo.pop()]:
        if above not in seen:
          seen.add(above)
          todo.append(above)
    bounds[node] = seen
  return bounds


_upper_bounds_by_mode = {(mode, x64): _upper_bounds(_lattice(mode == "strict", x64))
                         for mode in ("standard", "strict") for x64 in (False, True)}


class TypePromotionError(ValueError):
  """Raised when operand types have no implicit promotion path.

  Example::

    >>> with config.override("jax_numpy_dtype_promotion", "strict"):  # doctest: +ELLIPSIS
    ...   result_type(np.int32, np.float32)
    Traceback (most recent call last):
    xjax._src.dtypes.TypePromotionError: Input dtypes ('int32', 'float32') have no ...
  """


def _no_path_message(nodes, mode: str) -> str:
  names = tuple(str(n) for n in nodes)
  head = f"Input dtypes {names} have no available implicit dtype promotion path"
  explicit = ("If you'd like your inputs to be promoted to another type, you can "
              "do so explicitly using e.g. x.astype('{}')")
  if mode == "strict":
    return (f"{head} when jax_numpy_dtype_promotion=strict. Try explicitly casting "
            "inputs to the desired output type, or set jax_numpy_dtype_promotion=standard.")
  for group, what in ((_float8_dtypes, "8-bit floats"), (_float6_dtypes, "6-bit floats"),
                      (_float4_dtypes, "4-bit floats")):
    if any(n in group for n in nodes):
      return (f"{head}. To avoid unintended promotion, {what} do not support implicit "
              "promotion. " + explicit.format("float32"))
  if any(n in _intn_dtypes for n in nodes):
    return (f"{head}. To avoid unintended promotion, 1-bit, 2-bit and 4-bit integers do "
            "not support implicit promotion. " + explicit.format("int32"))
  return f"{head}. Try explicitly casting inputs to the desired output type."


@functools.lru_cache(512)
def _least_upper_bound(mode: str, x64: bool, *nodes):
  try:
    table = _upper_bounds_by_mode[(mode, x64)]
  except KeyError:
    raise ValueError(f"Unexpected value of jax_numpy_dtype_promotion={mode!r}") from None
  try:
    bounds = [table[n] for n in nodes]
  except KeyError:
    bad = next(n for n in nodes if n not in table)
    raise ValueError(f"dtype={bad!r} is not a valid dtype for JAX type promotion.") from None
  common = set.intersection(*bounds)
  # The join is the common upper bound that lies below all the others.
  least = (common & set(nodes)) or {c for c in common if common <= table[c]}
  if len(least) == 1:
    return least.pop()
  if not least:
    raise TypePromotionError(_no_path_message(nodes, mode))
  raise TypePromotionError(f"internal: {nodes} have no unique least upper bound; "
                           f"candidates are {least}")


def _lattice_node(dt, weak: bool):
  """The lattice node of a value: its dtype, or int/float/complex if weak."""
  if not weak or dt == np.dtype(bool):
    return dt
  return _python_type_of_dtype(dt)


def _join(mode: str, x64: bool, nodes):
  # Keep first-seen order so that error messages list the inputs in order.
  return _least_upper_bound(mode, x64, *dict.fromkeys(nodes))


def promote_types(a, b) -> np.dtype:
  """The dtype a binary operation casts ``a`` and ``b`` to (``jnp.promote_types``).

  Arguments are dtype-likes; the Python types ``int``, ``float`` and
  ``complex`` are weak.  Unlike ``result_type`` nothing is canonicalised and a
  weak result is returned as its 64-bit dtype.

  >>> promote_types(np.uint8, int), promote_types(np.float16, float)
  (dtype('uint8'), dtype('float16'))
  """
  a_node = a if any(a is t for t in _weak_types) else np.dtype(a)
  b_node = b if any(b is t for t in _weak_types) else np.dtype(b)
  return np.dtype(_join(config.jax_numpy_dtype_promotion, config.jax_enable_x64,
                        (a_node, b_node)))


def _dtype_and_weak_type(x, x64: bool):
  if x is None:
    x = np.dtype("float64" if x64 else "float32")
  if isinstance(x, type):
    weak = any(x is t for t in _weak_types)
  elif isinstance(x, (np.dtype, str, np.ndarray, np.generic)):
    weak = False
  else:
    weak = any(x is t for t in _weak_types) or is_weakly_typed(x)
  return _canonicalize(_raw_dtype(x), x64, True), weak


_lattice_cache: dict = {}


_python_scalar_nodes: dict = {}


def _python_scalar_node(x, x64: bool):
  """(dtype, weak) of a Python scalar (cached per type and x64): ints, floats and complexes
  are weak, bools are not."""
  key = (type(x), x64)
  node = _python_scalar_nodes.get(key)
  if node is None:
    node = _python_scalar_nodes[key] = _dtype_and_weak_type(x, x64)
  return node


def _arg_node(x, x64: bool):
  if type(x) in python_scalar_dtypes:  # Python scalars: the most common non-array args
    return _python_scalar_node(x, x64)
  # Fast path for Arrays and tracers, whose aval holds a canonical dtype.
  aval = getattr(x, "aval", None)
  dtype = getattr(aval, "dtype", None)
  if type(dtype) is not type and isinstance(dtype, np.dtype):
    if not x64 and dtype in _to_32bit:
      dtype = _to_32bit[dtype]
    return dtype, aval.weak_type
  return _dtype_and_weak_type(x, x64)


def _lattice_result_type(args, x64: bool) -> tuple:
  mode = config.jax_numpy_dtype_promotion
  dtypes, weak_types = zip(*(_arg_node(x, x64) for x in args))
  key = (dtypes, weak_types, x64, mode)
  hit = _lattice_cache.get(key)
  if hit is None:
    hit = _lattice_cache[key] = _lattice_join(dtypes, weak_types, x64, mode)
  return hit


def _lattice_join(dtypes, weak_types, x64: bool, mode: str) -> tuple:
  if len(dtypes) == 1:
    out, weak = dtypes[0], weak_types[0]
  elif len(set(dtypes)) == 1 and not all(weak_types):
    out, weak = dtypes[0], False  # also lets equal extended dtypes through
  elif all(weak_types) and mode != "strict":
    # All weak: join the dtypes themselves, so that e.g. two weak bfloat16
    # values stay bfloat16, then mark the result weak.
    out, weak = _canonicalize(_raw_dtype(_join(mode, x64, dtypes)), x64, True), True
  else:
    joined = _join(mode, x64, (_lattice_node(d, w) for d, w in zip(dtypes, weak_types)))
    out = _canonicalize(_raw_dtype(joined), x64, True)
    weak = any(joined is t for t in _weak_types)
  return out, weak and out != _bool_dtypes[0]


def lattice_result_type(*args) -> tuple:
  """``(dtype, weak_type)`` of combining ``args``, as ``result_type`` but
  keeping a weak result's dtype: two weak bfloat16 values give weak bfloat16.
  jnp's ``promote_dtypes`` uses this."""
  return _lattice_result_type(args, config.jax_enable_x64)


def result_type(*args, return_weak_type_flag: bool = False):
  """The canonical dtype of combining ``args`` under JAX's promotion rules.

  ``args`` may be dtypes, dtype-likes, Python scalars and the types ``int``,
  ``float``, ``complex`` (weak), NumPy arrays and scalars (strong), ``None``
  (the default float dtype), and objects with ``dtype`` and ``aval.weak_type``.
  A weak result takes the default dtype of its kind.  With
  ``return_weak_type_flag`` returns ``(dtype, weak_type)``.

  >>> result_type(np.int8, 1), result_type(np.int8, 1.0)   # x64 off
  (dtype('int8'), dtype('float32'))
  """
  if not args:
    raise ValueError("at least one array or dtype is required")
  x64 = config.jax_enable_x64
  out, weak = _lattice_result_type(args, x64)
  if weak:
    kind = "f" if out in _custom_float_dtypes else out.kind
    out = _canonicalize(_weak_default[kind], x64, False)
  return (out, weak) if return_weak_type_flag else out


def safe_to_cast(input_dtype_or_value, output_dtype_or_value) -> bool:
  """Whether values of the first dtype (or value's dtype) cast to the second without loss
  under the promotion rules: the dtypes are equal, or promoting the input with the
  (strongly typed) output dtype gives the output dtype.

  >>> safe_to_cast('int16', 'float32'), safe_to_cast('float32', 'int16')
  (True, False)

  Raises:
    TypePromotionError: the dtypes differ and the promotion mode has no path between them.

  Mirrors JAX's `jax._src.dtypes.safe_to_cast`.
  """
  input_dtype = dtype(input_dtype_or_value, canonicalize=True)
  output_dtype = dtype(output_dtype_or_value, canonicalize=True)
  if input_dtype == output_dtype:
    return True
  return result_type(input_dtype_or_value, output_dtype) == output_dtype


# ---------------------------------------------------------------------------
# User-requested dtypes and short names.

def check_user_dtype_supported(dtype, fun_name: str | None = None):
  """Checks a ``dtype=`` argument a user passed to ``fun_name``; returns its
  canonical dtype.

  Python types give their default dtype.  A 64-bit dtype with
  ``jax_enable_x64`` off gives JAX's UserWarning and its 32-bit counterpart;
  a dtype JAX does not support raises TypeError.
  """
  if dtype is None:
    raise ValueError("dtype must be specified.")
  if hasattr(dtype, "aval"):
    raise ValueError("Passing an array as a dtype argument is no longer supported; "
                     "instead of dtype=arr use dtype=arr.dtype.")
  if isinstance(dtype, ExtendedDType) or issubdtype(dtype, extended):
    return dtype
  if isinstance(dtype, type) and dtype in python_scalar_dtypes:
    return canonicalize_dtype(python_scalar_dtypes[dtype])
  np_dtype = np.dtype(dtype)
  if np_dtype not in _jax_dtype_set:
    where = f" in {fun_name}" if fun_name else ""
    raise TypeError(f"JAX only supports number, bool, and string dtypes, got dtype {dtype}{where}")
  canonical = canonicalize_dtype(np_dtype)
  if canonical != np_dtype:
    where = f" requested in {fun_name}" if fun_name else ""
    warnings.warn(
        f"Explicitly requested dtype {np_dtype}{where} is not available, and will be "
        f"truncated to dtype {canonical.name}. To enable more dtypes, set the "
        "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment "
        "variable. See https://github.com/jax-ml/jax#current-gotchas for more.",
        stacklevel=3)
  return canonical


_short_names: dict = {}


def short_dtype_name(dtype) -> str:
  """The dtype's name in printed avals and jaxprs: 'f32', 'bf16', 'u8', 'c64',
  'bool', 'float0', 'f8_e4m3fn'; an extended dtype prints as ``str(dtype)``."""
  try:
    return _short_names[dtype]
  except KeyError:
    pass
  if isinstance(dtype, ExtendedDType):
    name = str(dtype)
  elif np.dtype(dtype) == float0:
    name = "float0"
  else:
    name = (np.dtype(dtype).name.replace("float", "f").replace("uint", "u")
            .replace("int", "i").replace("complex", "c"))
  _short_names[dtype] = name
  return name
