"""The core: abstract values, primitives and bind, traces and tracers, jaxprs.

* `ShapedArray` is the abstract value (aval) of an array: shape, dtype, weak_type.
* A `Primitive` holds all of its rules as attributes (`abstract_eval`, `jvp`,
  `transpose`, `batch`, `lowering`, ...). `Primitive.bind` hands the call to
  the current trace.
* Trace dispatch is stackless: the current trace lives in a thread-local
  context; every trace knows its `parent_trace` and carries an identity `tag`.
  A tracer belongs to a trace when their tags match; any other value reaching
  a trace is lifted into it as a constant.
* `Jaxpr`/`ClosedJaxpr` are the staged programs, printed in JAX's text format.
"""
from __future__ import annotations

import functools
import operator
import threading
import weakref
from _weakref import _remove_dead_weakref
from typing import Any, NamedTuple

import numpy as np

from xjax._src import dtypes
from xjax._src import errors
from xjax._src import vma as vma_mod
from xjax._src.config import config

# ----------------------------------------------------------------------------
# Abstract values


_no_sharding = object()  # `ShapedArray.update`'s default: keep the sharding where it still fits


def sharding_rule_hook(prim, avals, params, out):  # replaced by sharding.rules
  return out


def vma_rule_hook(prim, avals, params, out):  # replaced by xjax._src.vma
  return out


class ShardingTypeError(TypeError):
  """Operands whose shardings (on Explicit mesh axes) give no well-defined result sharding."""


class AbstractValue:
  """The base class of abstract values: `ShapedArray` and `AbstractToken` (mirrors
  `jax.core.AbstractValue`, which libraries test with isinstance)."""
  __slots__ = ()


class ShapedArray(AbstractValue):
  """The abstract value of an array: its shape, dtype and weak type.

  Mirrors `jax.core.ShapedArray`. Immutable and interned: constructing one
  returns the object already alive with the same (shape, dtype, weak_type,
  sharding), so equal avals are usually identical and jit's call paths compare
  them by identity (see `_aval_table`). The hash is cached (avals are keys of
  the jit and dispatch caches). `sharding` is set only for arrays split over
  Explicit mesh axes: a NamedSharding over the abstract mesh with one spec
  entry per dimension (printed ``float32[8@x,4]``); the sharding rules
  (`xjax._src.sharding.rules`) carry it through primitives. `vma` is the set of
  manual mesh axes along which the value varies inside a shard_map body
  (``float32[8]{V:x}``; `mat` gives it as JAX's `ManualAxisType`; see
  `xjax._src.vma`).

  Subclasses are not interned: ``Sub(shape, dtype, ...)`` is a new object each
  time (one that takes more arguments extends `__new__`).
  """
  __slots__ = ("shape", "dtype", "weak_type", "sharding", "vma", "_hash", "__weakref__")
  array_abstraction_level = 1

  def __new__(cls, shape, dtype, weak_type: bool = False, sharding=None, vma=frozenset()):
    # On the tracing hot path: normalize only what is not yet normal, then one dict lookup.
    if type(shape) is not tuple:
      shape = tuple(shape)
    try:
      dtype = _dtypes[dtype]
    except (KeyError, TypeError):  # a dtype-like not seen yet, or not hashable
      dtype = _dtype_of(dtype)
    if weak_type is not False and weak_type is not True:
      weak_type = bool(weak_type)
    key = (shape, dtype, weak_type) if sharding is None else (shape, dtype, weak_type, sharding)
    if vma:
      key = (shape, dtype, weak_type, sharding, frozenset(vma))
    if cls is ShapedArray:
      ref = _aval_table.get(key)
      if ref is not None:
        aval = ref()
        if aval is not None:
          return aval
      return _intern_aval(key)
    return _new_aval(cls, key)

  ndim = property(lambda self: len(self.shape))
  size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

  def update(self, shape=None, dtype=None, weak_type=None, sharding=_no_sharding,
             vma=None) -> ShapedArray:
    """A copy with the given fields replaced; a new shape drops the sharding unless one is given."""
    if sharding is _no_sharding:
      sharding = self.sharding if shape is None or tuple(shape) == self.shape else None
    return ShapedArray(self.shape if shape is None else shape,
                       self.dtype if dtype is None else dtype,
                       self.weak_type if weak_type is None else weak_type, sharding,
                       self.vma if vma is None else vma)

  @property
  def mat(self):
    """The manual axis type (JAX's `aval.mat`): the axes along which the value varies."""
    return vma_mod.ManualAxisType(varying=self.vma)

  manual_axis_type = mat

  def update_weak_type(self, weak_type: bool) -> ShapedArray:
    return self if weak_type == self.weak_type else self.update(weak_type=weak_type)

  def strip_weak_type(self) -> ShapedArray:
    return self.update_weak_type(False)

  def __eq__(self, other):
    # Equal interned avals are identical; the fields decide for the rest (subclasses, and
    # shapes that `_intern_aval` leaves as given).
    return other is self or (type(other) is ShapedArray and self.shape == other.shape
            and self.dtype == other.dtype and self.weak_type == other.weak_type
            and self.sharding == other.sharding and self.vma == other.vma)

  def __hash__(self):
    return self._hash

  def __reduce_ex__(self, protocol):
    # Unpickling and copying construct again, which interns. Subclasses take the default
    # (`__getnewargs__` and their slots).
    if type(self) is ShapedArray:
      return ShapedArray, (self.shape, self.dtype, self.weak_type, self.sharding, self.vma)
    return super().__reduce_ex__(protocol)

  def __getnewargs__(self):
    base = self.shape, self.dtype, self.weak_type, self.sharding
    return (*base, self.vma) if self.vma else base

  def str_short(self, short_dtypes: bool = False) -> str:
    """``float32[3,4]`` (or ``f32[3,4]`` with short dtypes; ``float32[8@x,4]`` when split)."""
    name = dtypes.short_dtype_name(self.dtype) if short_dtypes else self.dtype.name
    if self.dtype == dtypes.float0:
      name = "float0"
    if self.sharding is None:
      return f"{name}[{','.join(str(d) for d in self.shape)}]{vma_mod.vma_str(self.vma)}"
    dims = []
    for d, entry in zip(self.shape, self.sharding.spec):
      if entry is None:
        dims.append(str(d))
      elif isinstance(entry, tuple):
        dims.append(f"{d}@({','.join(map(str, entry))})")
      else:
        dims.append(f"{d}@{entry}")
    return f"{name}[{','.join(dims)}]{vma_mod.vma_str(self.vma)}"

  def __repr__(self):
    weak = ", weak_type=True" if self.weak_type else ""
    return f"ShapedArray({self.str_short()}{weak})"

  def __str__(self):
    return ("~" if self.weak_type else "") + self.str_short()

  def __len__(self):
    if not self.shape:
      raise TypeError("len() of unsized object")
    return self.shape[0]

  def to_tangent_aval(self) -> ShapedArray:
    """The aval of this value's tangents: float0 for integer, boolean and key arrays."""
    if dtypes.issubdtype(self.dtype, np.inexact):
      return self.update(weak_type=self.weak_type)
    return ShapedArray(self.shape, dtypes.float0)


# The interned avals: (shape, dtype, weak_type[, sharding]) -> a weak reference to the one
# ShapedArray with those fields, so avals of shapes no longer in use are freed. No lock:
# every change to the table is one atomic dict operation (under the GIL, and per-dict locked
# without it) that cannot undo another thread's. A new key goes in by `setdefault`: of
# threads racing to insert it one wins, and the others find its aval, alive since its
# creator holds it. An entry whose aval has died is removed by `_remove_dead_weakref`, which
# deletes only while the entry is still a dead reference (never the live one that another
# thread has just put there), and the insert is tried again. So racing threads get one
# object. Dead entries left behind are swept the same way once the table has doubled since
# the last sweep. No weak reference has a callback: one would cost more than the entry.
_aval_table: dict = {}
_aval_sweep_at = 1024  # the table size at which the next insert sweeps


# The dtype of each dtype-like seen (np.float32, "int32", the dtypes themselves, extended
# dtypes): np.dtype(spec), and even isinstance(x, np.dtype), take longer than an interned
# construction's other steps. Equal dtypes map to one (as in the aval table's keys).
_dtypes: dict = {}


def _dtype_of(spec):
  dtype = spec if isinstance(spec, dtypes.ExtendedDType) else np.dtype(spec)
  try:
    if len(_dtypes) < 4096:
      dtype = _dtypes.setdefault(dtype, dtype)
      _dtypes.setdefault(spec, dtype)
  except TypeError:  # not hashable (a structured dtype's field list)
    pass
  return dtype


_empty_vma = frozenset()


def _new_aval(cls, key) -> ShapedArray:
  aval = object.__new__(cls)
  aval.shape, aval.dtype, aval.weak_type = key[:3]
  aval.sharding = key[3] if len(key) >= 4 else None
  aval.vma = key[4] if len(key) == 5 else _empty_vma
  aval._hash = hash(key)
  return aval


def _intern_aval(key) -> ShapedArray:
  """The interned ShapedArray of the normalized `key` (`ShapedArray.__new__`'s slow path)."""
  global _aval_sweep_at
  for d in key[0]:
    if type(d) is not int:
      try:
        key = (tuple(map(operator.index, key[0])), *key[1:])  # NumPy integers become ints
      except TypeError:
        return _new_aval(ShapedArray, key)  # not an array shape: left as given, not interned
      break
  aval = _new_aval(ShapedArray, key)
  new_ref = weakref.ref(aval)
  while (ref := _aval_table.setdefault(key, new_ref)) is not new_ref:
    old = ref()
    if old is not None:
      return old
    _remove_dead_weakref(_aval_table, key)
  if len(_aval_table) >= _aval_sweep_at:
    for k, r in _aval_table.copy().items():
      if r() is None:
        _remove_dead_weakref(_aval_table, k)
    _aval_sweep_at = max(1024, 2 * len(_aval_table))
  return aval


def is_extended(aval) -> bool:
  """Whether `aval` has an extended dtype (PRNG keys: ``key<fry>``)."""
  return isinstance(getattr(aval, "dtype", None), dtypes.ExtendedDType)


def physical_aval(aval):
  """The aval of the data holding a value of `aval`: itself unless its dtype is extended,
  when the dtype's element shape is appended (``key<fry>[3]`` -> ``uint32[3,2]``)."""
  dtype = getattr(aval, "dtype", None)
  if not isinstance(dtype, dtypes.ExtendedDType):
    return aval
  return ShapedArray((*aval.shape, *dtype.physical_element_shape),
                     dtype.physical_element_dtype)


class AbstractToken(AbstractValue):
  """The abstract value of a token: an ordering handle with no shape, dtype or data.

  Tokens sequence side effects (`lax.create_token`, `lax.after_all`); they
  lower to ``!stablehlo.token``. There is one instance, `abstract_token`,
  printed ``Tok`` in jaxprs. Mirrors `jax.extend.core.AbstractToken`.
  """
  __slots__ = ()
  array_abstraction_level = 0
  weak_type = False

  def str_short(self, short_dtypes: bool = False) -> str:
    return "Tok"

  __str__ = str_short

  def __repr__(self):
    return "AbstractToken()"

  def strip_weak_type(self) -> AbstractToken:
    return self

  def update_weak_type(self, weak_type: bool) -> AbstractToken:
    return self

  def to_tangent_aval(self) -> AbstractToken:
    """Tokens are their own (zero) tangents, as in JAX."""
    return self


abstract_token = AbstractToken()


# Scalar avals, held here for good (few, and on the path of every Python scalar argument):
# found by (dtype, weak_type) without constructing one.
_scalar_avals: dict = {}
_int_bounds: dict = {}


def _scalar_aval(dtype, weak_type):
  aval = _scalar_avals.get((dtype, weak_type))
  if aval is None:
    aval = _scalar_avals[(dtype, weak_type)] = ShapedArray((), dtype, weak_type)
  return aval


def _int_aval(x: int) -> ShapedArray:
  dtype = dtypes.default_int_dtype()
  bounds = _int_bounds.get(dtype)
  if bounds is None:
    info = np.iinfo(dtype)
    bounds = _int_bounds[dtype] = (int(info.min), int(info.max))
  if not bounds[0] <= x <= bounds[1]:
    raise OverflowError(f"Python int {x} too large to convert to {dtype.name}")
  return _scalar_aval(dtype, True)


def _ndarray_aval(x: np.ndarray) -> ShapedArray:
  if x.dtype.kind in "OUSMm":  # objects, strings, dates: not array types of JAX
    raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type.")
  return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype))


# type -> function computing the aval of a value of that type. Array and the
# tracers register themselves here.
pytype_aval_mappings: dict[type, Any] = {
    bool: lambda x: _scalar_aval(np.dtype(np.bool_), False),
    int: _int_aval,
    float: lambda x: _scalar_aval(dtypes.default_float_dtype(), True),
    complex: lambda x: _scalar_aval(dtypes.default_complex_dtype(), True),
    np.ndarray: _ndarray_aval,
}
for _t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
           np.uint32, np.uint64, np.float16, np.float32, np.float64, np.complex64,
           np.complex128, dtypes.bfloat16, np.longlong, np.ulonglong):
  pytype_aval_mappings[_t] = lambda x: _scalar_aval(dtypes.canonicalize_dtype(x.dtype), False)


def _masked_array_error(x):
  raise ValueError("numpy masked arrays are not supported as direct inputs to JAX functions. "
                   "Use arr.filled() to convert the value to a standard numpy array.")


pytype_aval_mappings[np.ma.MaskedArray] = _masked_array_error


def _str_aval(x):
  raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")


pytype_aval_mappings[str] = _str_aval  # JAX's own message for strings


def check_scalar_conversion(aval) -> None:
  """JAX's TypeError for int/float/complex of an array that is not a scalar."""
  ndim = len(getattr(aval, "shape", ()))
  if ndim > 0:
    raise TypeError(f"Only scalar arrays can be converted to Python scalars; got arr.ndim={ndim}")


def check_integer_conversion(aval) -> None:
  """JAX's TypeError for `__index__` of an array that is not an integer scalar."""
  shape, dtype = getattr(aval, "shape", None), getattr(aval, "dtype", None)
  if shape is not None and not (shape == () and dtypes.issubdtype(dtype, np.integer)):
    raise TypeError("Only integer scalar arrays can be converted to a scalar index.")


def check_bool_conversion(aval) -> None:
  """JAX's ValueError for the truth value of an array of other than one element."""
  shape = getattr(aval, "shape", None)
  if shape is None:
    return
  size = 1
  for d in shape:
    size *= d
  if size == 0:
    raise ValueError("The truth value of an empty array is ambiguous. Use `array.size > 0` "
                     "to check that an array is not empty.")
  if size > 1:
    raise ValueError("The truth value of an array with more than one element is ambiguous. "
                     "Use a.any() or a.all()")


def get_aval(x) -> ShapedArray:
  """The aval of a value: an Array, a tracer, a NumPy array or a Python scalar."""
  fn = pytype_aval_mappings.get(type(x))
  if fn is not None:
    return fn(x)
  for t in type(x).__mro__[1:]:
    fn = pytype_aval_mappings.get(t)
    if fn is not None:
      pytype_aval_mappings[type(x)] = fn
      return fn(x)
  if hasattr(x, "__jax_array__"):
    return get_aval(x.__jax_array__())
  raise TypeError(f"Argument '{x}' of type '{type(x)}' is not a valid JAX type")  # JAX's typeof


def valid_jaxtype(x) -> bool:
  try:
    get_aval(x)
  except (TypeError, OverflowError):
    return False
  return True


def canonicalize_value(x):
  """A Python scalar or NumPy value as a NumPy array of its canonical dtype; a value of a
  type given a handler by `dtypes.register_canonicalize_value_handler`, as that handler
  makes it."""
  if dtypes.canonicalize_value_handlers:
    for t in type(x).__mro__:
      handler = dtypes.canonicalize_value_handlers.get(t)
      if handler is not None:
        return handler(x)
  aval = get_aval(x)
  return np.asarray(x, aval.dtype)


def canonicalize_shape(shape, context: str = "") -> tuple[int, ...]:
  """A shape (a sequence of integers, or one Python int) as a tuple of Python ints.

  Only the type is checked here: -1 passes, as `reshape` needs. The sizes are
  checked by the shape rule of the primitive that receives them
  (`check_shapelike`), so every path to XLA goes through one check.

  Raises:
    TypeError: an element is not a concrete integer (JAX's "Shapes must be 1D
      sequences of concrete values of integer type" message; for a tracer it
      adds where the tracer came from). `context` is appended to the message.
  """
  if isinstance(shape, int):
    shape = (shape,)
  try:
    return tuple(operator.index(d) for d in shape)
  except TypeError:
    pass
  raise _invalid_shape_error(shape, context)


_MAX_DIM = 2 ** 63  # sizes are i64 in StableHLO


def check_shapelike(fun_name: str, arg_name: str, obj) -> tuple[int, ...]:
  """`obj` as a tuple of Python ints, checked as a primitive's shape-like param.

  This is the one check of user-given sizes: the shape rules of the primitives
  whose output shape comes from a param (broadcast_in_dim, iota, random_bits,
  ...) call it, so no bad size reaches the lowering. It costs nothing on the
  cached paths (those never run shape rules).

  Raises:
    TypeError: with JAX's messages naming `fun_name` and `arg_name`: not a
      tuple/list/ndarray, not 1-D, an element not an integer (a tracer gets
      `canonicalize_shape`'s concretization message), or a negative element
      ("... must have every element be nonnegative, got (-1,)."). An element
      of 2**63 or more, which XLA cannot represent, is a TypeError too.
  """
  if type(obj) is tuple or type(obj) is list:  # the fast path: plain ints in range
    try:
      dims = tuple(map(operator.index, obj))
    except TypeError:
      dims = None
    if dims is not None and all(0 <= d < _MAX_DIM for d in dims):
      return dims
  if not isinstance(obj, (tuple, list, np.ndarray)):
    raise TypeError(f"{fun_name} {arg_name} must be of type tuple/list/ndarray, got {type(obj)}.")
  if isinstance(obj, np.ndarray) and obj.ndim != 1 and obj.size:
    raise TypeError(f"{fun_name} {arg_name} must be 1-dimensional, got {obj.ndim}.")
  if any(isinstance(d, Tracer) for d in obj):
    raise _invalid_shape_error(tuple(obj))
  if len(obj) and np.ndim(obj) != 1:
    raise TypeError(f"{fun_name} {arg_name} must be 1-dimensional, got {np.ndim(obj)}.")
  try:
    dims = tuple(map(operator.index, obj))
  except TypeError:
    raise TypeError(f"{fun_name} {arg_name} must have every element be an integer type, "
                    f"got {tuple(map(type, obj))}.") from None
  if not all(d >= 0 for d in dims):
    raise TypeError(f"{fun_name} {arg_name} must have every element be nonnegative, "
                    f"got {dims}.")
  if not all(d < _MAX_DIM for d in dims):
    raise TypeError(f"{fun_name} {arg_name} must have every element be less than 2**63, "
                    f"got {dims}.")
  return dims


def _invalid_shape_error(shape, context: str = "") -> TypeError:
  if isinstance(shape, (list, tuple)):
    shown = shape
  else:
    shown = [shape] if not hasattr(shape, "__iter__") else shape
  msg = ("Shapes must be 1D sequences of concrete values of integer type, "
         f"got {shown}.")
  if context:
    msg += f" {context}"
  if any(isinstance(d, Tracer) for d in (shape if isinstance(shape, (list, tuple)) else [shape])):
    msg += ("\nIf using `jit`, try using `static_argnums` or applying `jit` to "
            "smaller subfunctions.")
    for d in (shape if isinstance(shape, (list, tuple)) else [shape]):
      if isinstance(d, Tracer):
        msg += d._origin_msg()
        break
  return TypeError(msg)


# ----------------------------------------------------------------------------
# Primitives


# Every primitive made (weakly held): the rule registries of `jax.interpreters` iterate it.
all_primitives: weakref.WeakSet = weakref.WeakSet()


class Primitive:
  """A named operation with its rules as attributes.

  `bind` applies it under the current trace. The rules are set by the
  ``def_*`` decorators next to the primitive's definition; an interpreter that
  needs a missing rule raises `NotImplementedError` naming both.
  """
  multiple_results = False

  def __init__(self, name: str, multiple_results: bool = False):
    self.name = name
    self.multiple_results = multiple_results
    all_primitives.add(self)
    self._impl = None           # eager evaluation; None means dispatch.apply_primitive
    self.abstract_eval = None   # (*avals, **params) -> aval or list of avals
    self.jvp = None             # (primals, tangents, **params) -> (primal_out, tangent_out)
    self.transpose = None       # (cts, *args, **params) -> cotangents of the args
    self.batch = None           # (axis_data, args, dims, **params) -> (out, out_dim)
    self.lowering = None        # (ctx, *operands, **params) -> result values
    self.partial_eval = None    # (trace, args, unknowns, **params) -> outs; None: staged whole
    self.pp_params = None       # params -> params as printed in jaxprs
    self.pp_eqn = None          # (eqn, PpContext) -> Doc, for a fully custom print rule
    self.is_effectful = False   # kept by dead-code elimination even with no effects
    self.effects = None         # (**params) -> frozenset of effects.Effect; None: none
    self.batch_always = False   # the batch rule runs even with no batched operand (collectives)
    self.dce_rule = None        # (used_outputs, eqn) -> (used_inputs, new eqn or None), as JAX's
                                # pe.dce_rules; None: the equation stays whole or goes whole
    self.discharge = None       # (ref_ids, in_avals, args, **params) -> (new ref values, outs):
                                # its meaning with refs as values (interpreters/discharge.py)
    self.ref_primitive = False  # a state primitive: a jaxpr holding one uses state
    self.ref_allocating = False  # makes refs: a jaxpr staged with one has its refs discharged

  def __repr__(self):
    return self.name

  @property
  def impl(self):
    """Eager evaluation, a callable ``impl(*args, **params)`` as JAX's: the primitive's own
    rule (`def_impl`), else the generic dispatch that compiles it alone."""
    fn = self._impl
    return fn if fn is not None else functools.partial(_generic_impl, self)

  @impl.setter
  def impl(self, fn):
    self._impl = fn

  def bind(self, *args, **params):
    if trace_ctx.check_vma and len(args) > 1:  # in a shard_map body: operands' vma made equal
      args = vma_mod.insert_pvary(self, args, params)
    return trace_ctx.trace.process_primitive(self, args, params)

  def get_bind_params(self, params) -> dict:
    """The params to `bind` with to re-apply an equation with `params` (JAX's method:
    an interpreter calls it before binding an equation's primitive again)."""
    return params

  def def_impl(self, fn):
    # The generic dispatch read from `impl` and set back is no rule of the primitive's own.
    generic = (isinstance(fn, functools.partial) and fn.func is _generic_impl
               and fn.args == (self,))
    self._impl = None if generic else fn
    return fn

  def def_abstract_eval(self, fn):
    prim = self

    def abstract_eval(*avals, **params):
      out = fn(*avals, **params)
      for a in avals:
        if getattr(a, "sharding", None) is not None:  # split over Explicit mesh axes
          out = sharding_rule_hook(prim, avals, params, out)
          break
      if trace_ctx.check_vma:  # inside a shard_map body with check_vma
        out = vma_rule_hook(prim, avals, params, out)
      return out
    abstract_eval.__wrapped__ = fn
    # The rule is fn's: a library's primitive keeps its library's module here.
    abstract_eval.__module__ = getattr(fn, "__module__", None) or __name__
    self.abstract_eval = abstract_eval
    return fn

  def def_jvp(self, fn):
    self.jvp = fn
    return fn

  def def_transpose(self, fn):
    self.transpose = fn
    return fn

  def def_batch(self, fn):
    self.batch = fn
    return fn

  def def_lowering(self, fn):
    self.lowering = fn
    return fn

  def def_partial_eval(self, fn):
    self.partial_eval = fn
    return fn

  def def_pp_params(self, fn):
    self.pp_params = fn
    return fn

  def def_dce(self, fn):
    self.dce_rule = fn
    return fn

  def def_discharge(self, fn):
    self.discharge = fn
    return fn


def missing_rule(transformation: str, primitive: Primitive) -> NotImplementedError:
  """JAX's error for a primitive without a rule: "Differentiation rule for 'zeta' not implemented"."""
  if transformation == "Transpose":
    transformation = "Transpose rule (for reverse-mode differentiation)"
  else:
    transformation = f"{transformation} rule"
  return NotImplementedError(f"{transformation} for '{primitive.name}' not implemented")


# ----------------------------------------------------------------------------
# Traces and tracers


class TraceTag:
  """An identity token; tracers whose trace carries the same tag belong to it."""
  __slots__ = ()


class Trace:
  """An interpreter of primitives. Subclasses define `process_primitive`."""
  __slots__ = ("parent_trace", "tag", "is_valid", "__weakref__")

  def __init__(self, parent_trace=None, tag=None):
    self.parent_trace = parent_trace
    self.tag = TraceTag() if tag is None else tag
    self.is_valid = True

  def process_primitive(self, primitive, args, params):
    raise NotImplementedError

  def invalidate(self):
    self.is_valid = False

  @property
  def main(self):
    """The trace's identity tag (JAX 0.10.2 keeps `Trace.main`, once the trace's "main
    trace", as a deprecated property returning `tag`; equinox's filter_jvp compares it)."""
    return self.tag

  def __repr__(self):
    return f"{type(self).__name__}"


class EvalTrace(Trace):
  """The trace at the top of every program: primitives run eagerly."""
  __slots__ = ()

  def process_primitive(self, primitive, args, params):
    impl = primitive._impl
    if impl is None:
      return default_impl(primitive, args, params)
    return impl(*args, **params)


# Set by dispatch.py: runs a first-order primitive on concrete values.
default_impl = None


def _generic_impl(primitive, *args, **params):
  return default_impl(primitive, args, params)

eval_trace = EvalTrace()


class _TraceContext(threading.local):
  def __init__(self):
    self.trace = eval_trace
    self.axis_env = {}  # axis name -> size, for the collectives (vmap's axis_name)
    self.check_vma = False  # tracing a shard_map body whose avals carry `vma`


trace_ctx = _TraceContext()


class set_current_trace:
  """Context manager making `trace` the current trace."""
  __slots__ = ("trace", "prev")

  def __init__(self, trace):
    self.trace = trace

  def __enter__(self):
    self.prev = trace_ctx.trace
    trace_ctx.trace = self.trace

  def __exit__(self, *exc):
    trace_ctx.trace = self.prev


def current_trace() -> Trace:
  return trace_ctx.trace


def trace_state_clean() -> bool:
  """True when no transformation is active: the current trace is the eager `eval_trace`
  and no named axis is bound (mirrors JAX's private `jax._src.core.trace_state_clean`,
  which libraries such as numpyro call to tell whether they run under jit/vmap/grad)."""
  return trace_ctx.trace is eval_trace and not trace_ctx.axis_env


class extend_axis_env:
  """Context manager binding a named axis of `size` (vmap's ``axis_name``).

  Collectives (`lax.psum`, `lax.axis_index`, ...) look names up here; an inner
  binding of the same name shadows the outer one. A None name binds nothing.
  """
  __slots__ = ("name", "size", "prev")

  def __init__(self, name, size: int):
    self.name = name
    self.size = size

  def __enter__(self):
    self.prev = trace_ctx.axis_env
    if self.name is not None:
      trace_ctx.axis_env = {**self.prev, self.name: self.size}

  def __exit__(self, *exc):
    trace_ctx.axis_env = self.prev


def trace_context():
  """Everything besides a function's arguments that can change what tracing it produces:
  the configuration flags and context mesh (`config.values_key()`) and the named axes
  bound (`extend_axis_env`). Every cache of traces keys on it."""
  env = trace_ctx.axis_env
  key = config.values_key()
  return (key, tuple(env.items())) if env else key


def axis_size(name) -> int:
  """The size of the bound axis `name`; NameError (as in JAX) when it is unbound."""
  env = trace_ctx.axis_env
  if name not in env:
    raise NameError(f"unbound axis name: {name}")
  return env[name]


def escaped_tracer_error(tracer, detail: str | None = None) -> errors.UnexpectedTracerError:
  msg = ("Encountered an unexpected tracer. A function transformed by JAX had "
         "a side effect, allowing for a reference to an intermediate value with "
         f"type {tracer.aval.str_short()} wrapped in a {type(tracer).__name__} "
         "to escape the scope of the transformation.\n"
         "JAX transformations require that functions explicitly return their "
         "outputs, and disallow saving intermediate values to global state.")
  info = getattr(tracer, "_debug_info", None)
  if info is not None:
    msg += (f"\nThe function being traced when the value leaked was "
            f"{info.func_src_info} traced for {info.traced_for}.")
  src = getattr(tracer, "_source_info", None)
  frames = src.frames if src is not None else ()
  created = frames[0].summarize() if frames else ""
  shown = "\n".join(f.summarize() for f in reversed(frames))
  msg += ("\n------------------------------\n"
          f"The leaked intermediate value was created on line {created}. "
          "\n------------------------------\n"
          "When the value was created, the final 5 stack frames (most recent "
          "last) excluding JAX-internal frames were:\n------------------------------\n"
          f"{shown}\n------------------------------\n")
  if detail:
    msg += f"\nDetail: {detail}"
  msg += ("\nTo catch the leak earlier, try setting the environment variable "
          "JAX_CHECK_TRACER_LEAKS or using the `jax.checking_leaks` context manager.")
  return errors.UnexpectedTracerError(msg)


IMMUTABLE_ARRAY_MESSAGE = (
    "JAX arrays are immutable and do not support in-place item assignment. "
    "Instead of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
    "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")


def _conversion_context(fn: str) -> str:
  return (f"The problem arose with the `{fn}` function. If trying to convert the "
          f"data type of a value, try using `x.astype({fn})` or `jnp.array(x, {fn})` "
          "instead.")


class Tracer:
  """A stand-in for an array value while a function is being transformed.

  Subclasses hold the per-transformation payload and set `tracer_name`, the
  name printed in reprs (``DynamicJaxprTracer``, ``JVPTracer``, ``VmapTracer``).
  Operators and array methods are installed by `xjax._src.numpy.array_methods`.
  """
  __slots__ = ("_trace", "__weakref__")
  __array_priority__ = 1000
  tracer_name = "Tracer"

  @property
  def aval(self) -> ShapedArray:
    raise NotImplementedError

  shape = property(lambda self: self.aval.shape)
  dtype = property(lambda self: self.aval.dtype)
  ndim = property(lambda self: self.aval.ndim)
  size = property(lambda self: self.aval.size)
  weak_type = property(lambda self: self.aval.weak_type)

  def to_concrete_value(self):
    """The value if it is known while tracing (e.g. under grad), else None."""
    return None

  def _error_repr(self) -> str:
    return f"traced array with shape {self.aval.str_short()}"

  @property
  def sharding(self):
    """Not available on a tracer (JAX's AttributeError, so hasattr says False)."""
    raise AttributeError(f"The 'sharding' attribute is not available on {self._error_repr()}. "
                         "To query sharding information on tracers, use `jax.typeof(x)`.")

  def _origin_msg(self) -> str:
    return ""

  def __repr__(self):
    aval = self.aval
    weak = "~" if aval.weak_type else ""
    return f"{self.tracer_name}({weak}{aval.str_short()})"

  def __bool__(self):
    check_bool_conversion(self.aval)
    value = self.to_concrete_value()
    if value is None:
      raise errors.TracerBoolConversionError(self)
    return bool(value)

  def __index__(self):
    check_integer_conversion(self.aval)
    value = self.to_concrete_value()
    if value is None:
      raise errors.TracerIntegerConversionError(self)
    return operator.index(value)

  def __int__(self):
    check_scalar_conversion(self.aval)
    value = self.to_concrete_value()
    if value is None:
      raise errors.ConcretizationTypeError(
          self, _conversion_context("int"))
    return int(value)

  def __float__(self):
    check_scalar_conversion(self.aval)
    value = self.to_concrete_value()
    if value is None:
      raise errors.ConcretizationTypeError(
          self, _conversion_context("float"))
    return float(value)

  def __complex__(self):
    check_scalar_conversion(self.aval)
    value = self.to_concrete_value()
    if value is None:
      raise errors.ConcretizationTypeError(
          self, _conversion_context("complex"))
    return complex(value)

  def item(self, *args):
    value = self.to_concrete_value()
    if value is None:
      raise errors.ConcretizationTypeError(self, "This occurred in the item() method of jax.Array")
    return np.asarray(value).item(*args)

  def tolist(self):
    value = self.to_concrete_value()
    if value is None:
      # JAX's text names where the tracer came from twice here; so does ours.
      raise errors.ConcretizationTypeError(
          self, f"The tolist() method was called on {self._error_repr()}.{self._origin_msg()}")
    return np.asarray(value).tolist()

  def __array__(self, dtype=None, copy=None):
    # As JAX's: even a tracer of a known value (under grad, at the top) is no NumPy array.
    raise errors.TracerArrayConversionError(self)

  def __hash__(self):
    raise TypeError(f"unhashable type: {type(self).__name__}")

  def __len__(self):
    return len(self.aval)

  def __iter__(self):
    if not self.shape:
      raise TypeError("iteration over a 0-d array")
    return (self[i] for i in range(self.shape[0]))

  def __setitem__(self, idx, value):
    raise TypeError(IMMUTABLE_ARRAY_MESSAGE)

  def __reduce__(self):
    raise TypeError("tracers cannot be pickled")


# ----------------------------------------------------------------------------
# Jaxprs


class Var:
  """A variable of a jaxpr: an aval with identity (names are given when printing)."""
  __slots__ = ("aval",)

  def __init__(self, aval: ShapedArray):
    self.aval = aval

  def __repr__(self):
    return f"Var({self.aval.str_short(True)})"


class DropVar(Var):
  """An output variable nobody reads, printed as ``_``."""
  __slots__ = ()


def _literal_text(val) -> str:
  """A scalar literal's value as JAX prints it: a Python scalar as given (``0.1``, where
  its float32 value would print 0.10000000149011612), else the stored value."""
  value = np.asarray(val)
  py = getattr(val, "_py", None)  # a weak constant made from a Python scalar, as its kind
  if py is not None:
    return str({"f": float, "c": complex, "b": bool}.get(value.dtype.kind, int)(py))
  return str(value.item())


class Literal:
  """A scalar constant appearing inline in a jaxpr, printed ``1.0:f32[]``."""
  __slots__ = ("val", "aval")

  def __init__(self, val, aval: ShapedArray):
    self.val = val
    self.aval = aval

  def __repr__(self):
    return f"Literal({self.val})"

  def pretty(self) -> str:
    if np.shape(self.val):
      return f"[...]:{self.aval.str_short(True)}"
    return f"{_literal_text(self.val)}:{self.aval.str_short(True)}"


class JaxprEqn(NamedTuple):
  """One equation: ``outvars = primitive[params] invars``."""
  invars: list
  outvars: list
  primitive: Primitive
  params: dict
  source_info: Any = None

  def replace(self, **kwargs) -> JaxprEqn:
    return self._replace(**kwargs)

  def __repr__(self):
    """The equation as a jaxpr prints it (``c:f32[] = add a b``), as JAX's."""
    from xjax._src import jaxpr_pp  # printing sits above core
    return jaxpr_pp.pp_eqn_standalone(self)

  @property
  def effects(self) -> frozenset:
    """The equation's side effects (JAX's ``JaxprEqn.effects``; see `eqn_effects`)."""
    return eqn_effects(self)


def eqn_effects(eqn: JaxprEqn) -> frozenset:
  """The side effects of one equation: its primitive's, or those of the jaxprs it holds."""
  rule = eqn.primitive.effects
  if rule is not None:
    return rule(**eqn.params)
  out = frozenset()
  for jaxpr in jaxprs_in_params(eqn.params):
    out |= jaxpr.effects
  return out


def is_live_regardless(eqn: JaxprEqn) -> bool:
  """Whether dead-code elimination must keep `eqn` even when no output is used."""
  return eqn.primitive.is_effectful or bool(eqn_effects(eqn))


def has_side_effects(jaxpr: Jaxpr) -> bool:
  """Whether an equation of `jaxpr` has effects or must otherwise be kept (`is_live_regardless`)."""
  return any(is_live_regardless(eqn) for eqn in jaxpr.eqns)


class Jaxpr:
  """A staged program: constvars, invars, equations and outvars (mirrors `jax.core.Jaxpr`).

  `effects` is the union of the equations' side effects (see `eqn_effects`).
  """
  __slots__ = ("constvars", "invars", "outvars", "eqns", "debug_info", "__weakref__")

  def __init__(self, constvars, invars, outvars, eqns, debug_info=None):
    self.constvars = list(constvars)
    self.invars = list(invars)
    self.outvars = list(outvars)
    self.eqns = list(eqns)
    self.debug_info = debug_info

  in_avals = property(lambda self: [v.aval for v in self.invars])
  out_avals = property(lambda self: [v.aval for v in self.outvars])

  @property
  def effects(self) -> frozenset:
    out = frozenset()
    for eqn in self.eqns:
      out |= eqn_effects(eqn)
    return out

  def replace(self, **kwargs) -> Jaxpr:
    fields = {k: getattr(self, k) for k in _JAXPR_FIELDS}
    fields.update(kwargs)
    return Jaxpr(**fields)

  def __str__(self):
    from xjax._src import jaxpr_pp  # printing sits above core (it reads avals, eqns, params)
    return str(jaxpr_pp.pp_toplevel_jaxpr(self))

  def pretty_print(self, width: int = 80, *, use_color: bool = False) -> str:
    """The jaxpr's text, lines broken to fit `width` (mirrors JAX's `Jaxpr.pretty_print`;
    xjax prints without color, so `use_color` changes nothing)."""
    del use_color
    from xjax._src import jaxpr_pp
    return jaxpr_pp.pp_toplevel_jaxpr(self).format(width)

  __repr__ = __str__


_JAXPR_FIELDS = ("constvars", "invars", "outvars", "eqns", "debug_info")


class ClosedJaxpr:
  """A jaxpr with values for its constvars (mirrors `jax.core.ClosedJaxpr`)."""
  __slots__ = ("jaxpr", "consts", "__weakref__")

  def __init__(self, jaxpr: Jaxpr, consts):
    assert len(jaxpr.constvars) == len(consts), "internal: consts mismatch"
    self.jaxpr = jaxpr
    self.consts = list(consts)

  in_avals = property(lambda self: self.jaxpr.in_avals)
  out_avals = property(lambda self: self.jaxpr.out_avals)
  eqns = property(lambda self: self.jaxpr.eqns)
  literals = property(lambda self: self.consts)
  effects = property(lambda self: self.jaxpr.effects)

  def __str__(self):
    return str(self.jaxpr)

  def pretty_print(self, width: int = 80, *, use_color: bool = False) -> str:
    """The jaxpr's text (see `Jaxpr.pretty_print`)."""
    return self.jaxpr.pretty_print(width, use_color=use_color)

  __repr__ = __str__


def jaxpr_as_fun(closed_jaxpr: ClosedJaxpr):
  """A Python function evaluating the closed jaxpr with `bind` (so it can be transformed)."""
  return lambda *args: eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)


def eval_jaxpr(jaxpr: Jaxpr, consts, *args):
  """Evaluates `jaxpr` by binding each equation's primitive under the current trace."""
  env: dict[Var, Any] = {}

  def read(v):
    return v.val if type(v) is Literal else env[v]

  if len(args) != len(jaxpr.invars):
    raise TypeError(f"internal: jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
  env.update(zip(jaxpr.constvars, consts, strict=True))
  env.update(zip(jaxpr.invars, args, strict=True))
  for eqn in jaxpr.eqns:
    outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
    if eqn.primitive.multiple_results:
      env.update(zip(eqn.outvars, outs, strict=True))
    else:
      env[eqn.outvars[0]] = outs
  return [read(v) for v in jaxpr.outvars]


class JaxprTypeError(TypeError):
  """A jaxpr is ill-typed (an internal error in a transformation)."""


def typecheck_jaxpr(jaxpr: Jaxpr, _checked: set | None = None) -> None:
  """Checks that every variable is defined before use and every eqn's types follow its rule,
  in `jaxpr` and in every jaxpr its equations' params hold (each checked once).

  Raises:
    JaxprTypeError: naming the variable or the primitive at fault.
  """
  checked = set() if _checked is None else _checked
  if id(jaxpr) in checked:
    return
  checked.add(id(jaxpr))
  defined: set = set()

  def check_read(v, where):
    if type(v) is Literal:
      return
    if v not in defined:
      raise JaxprTypeError(f"internal: variable {v} used before definition in {where}")

  for v in (*jaxpr.constvars, *jaxpr.invars):
    if v in defined:
      raise JaxprTypeError(f"internal: variable {v} bound twice")
    defined.add(v)
  for eqn in jaxpr.eqns:
    for v in eqn.invars:
      check_read(v, eqn.primitive.name)
    if eqn.primitive.abstract_eval is not None:
      try:
        out = eqn.primitive.abstract_eval(*(v.aval for v in eqn.invars), **eqn.params)
      except NameError:
        if _checked is None:
          raise
        # An inner jaxpr (a shard_map or pmap body) may use axis names its equation binds;
        # only their binding equation's rules can type it, so its structure is checked alone.
        defined.update(eqn.outvars)
        continue
      out = out if eqn.primitive.multiple_results else [out]
      for v, aval in zip(eqn.outvars, out, strict=True):
        if v.aval != aval and not _equal_but_vma(v.aval, aval):  # rules off: checked alone
          raise JaxprTypeError(
              f"internal: {eqn.primitive.name} produced {aval} but its binder has {v.aval}")
    for inner in jaxprs_in_params(eqn.params):
      typecheck_jaxpr(inner, checked)
    defined.update(eqn.outvars)
  for v in jaxpr.outvars:
    check_read(v, "outvars")


def _equal_but_vma(a, b) -> bool:
  return (getattr(a, "vma", None) is not None and getattr(b, "vma", None) is not None
          and a.update(vma=_empty_vma) == b.update(vma=_empty_vma))


def jaxprs_in_params(params) -> list[Jaxpr]:
  out = []
  for v in params.values():
    vs = v if isinstance(v, tuple) else (v,)
    for x in vs:
      if isinstance(x, Jaxpr):
        out.append(x)
      elif isinstance(x, ClosedJaxpr):
        out.append(x.jaxpr)
  return out


def subjaxprs(jaxpr: Jaxpr):
  """The jaxprs in the params of `jaxpr`'s equations, one level down (mirrors JAX's
  ``core.subjaxprs``)."""
  for eqn in jaxpr.eqns:
    yield from jaxprs_in_params(eqn.params)


pytype_aval_mappings[Tracer] = lambda x: x.aval
