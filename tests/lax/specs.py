"""The lax spec table: one entry per primitive (or per variant of one), read by the generic tests.

Each `Spec` names the lax function and primitive it tests, a NumPy/SciPy
reference with XLA's semantics (saturating float->int conversion, integer
wraparound, XLA's shift and division-by-zero rules), argument makers, the
argument shapes (0-d, empty and size-1 included), the dtypes the primitive
accepts and is tested with, tolerances, and fields later issues read (grad
order, linearity). `tests/lax/test_rules.py` runs its generic tests over
`SPECS`; `tests/lax/test_registry.py` checks that every primitive has one.

The accepted dtype lists were read off real JAX 0.10.2 (calling each lax
function on each dtype). `EXAMPLES` holds known answers printed by real JAX
0.10.2 for the corner cases where XLA's semantics matter most.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

import ml_dtypes
import numpy as np
import scipy.special

import xjax.test_util as jtu
from xjax import lax
from xjax._src import core
from xjax._src.lax import elementwise as lax_elementwise
from xjax._src.lax import gather_scatter as lax_gather_scatter
from xjax._src.lax import reductions as lax_reductions
from xjax._src.lax import slicing as lax_slicing
from xjax._src.lax import sorting as lax_sorting
from xjax._src.lax import structural as lax_structural

builtins_slice = slice

# ----------------------------------------------------------------------------
# Dtypes

BOOL = np.dtype(np.bool_)
I8, I16, I32 = np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32)
U8, U32 = np.dtype(np.uint8), np.dtype(np.uint32)
F16, BF16, F32, F64 = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16),
                       np.dtype(np.float32), np.dtype(np.float64))
C64 = np.dtype(np.complex64)

# Every dtype a spec may list; float64 cases run under `enable_x64`.
ALL_DTYPES = (F32, F16, BF16, F64, I8, I16, I32, U8, U32, BOOL, C64)
FLOATS = (F32, F16, BF16, F64)
SIGNED = (I8, I16, I32)
UNSIGNED = (U8, U32)
INTS = SIGNED + UNSIGNED
INEXACT = FLOATS + (C64,)
NUMERIC = INEXACT + INTS
ORDERED = FLOATS + INTS + (BOOL,)
EVERY = NUMERIC + (BOOL,)


def x64_dtype(dtype) -> bool:
  """Whether a case of this dtype must run with x64 enabled."""
  return np.dtype(dtype) in (F64, np.dtype(np.int64), np.dtype(np.uint64),
                             np.dtype(np.complex128))


# ----------------------------------------------------------------------------
# The table's row type


@dataclasses.dataclass(frozen=True)
class Config:
  """One argument configuration: a shape per operand and static params."""
  shapes: tuple
  params: dict = dataclasses.field(default_factory=dict)
  label: str | None = None  # the kind, for configs without operands

  @property
  def kind(self) -> str:
    """'scalar' (all operands 0-d), 'empty' (an operand of size 0), 'size_one' or 'general'."""
    if self.label is not None:
      return self.label
    sizes = [int(np.prod(s, dtype=np.int64)) for s in self.shapes]
    if all(s == () for s in self.shapes):
      return "scalar"
    if 0 in sizes:
      return "empty"
    if max(sizes) == 1:
      return "size_one"
    return "general"


@dataclasses.dataclass(frozen=True)
class Spec:
  """How to test one primitive (or one variant of it).

  Attributes:
    name: the entry's unique id (the primitive's name, or name_variant).
    primitive: the `Primitive` it exercises.
    fun: the lax function, called as ``fun(*operands, **params)``.
    ref: the reference on NumPy arrays, ``ref(*operands, **params)``; its
      outputs fix the expected shapes, dtypes and values.
    makers: one argument maker factory per operand: ``factory(rng)`` gives
      ``maker(shape, dtype) -> np.ndarray`` (see `xjax.test_util.rand_*`).
    dtypes: the dtypes the primitive accepts and is tested with.
    configs: the operand shapes (and params) sampled with the dtypes.
    arg_dtypes: the operand dtypes for a spec dtype (default: all that dtype).
    dtype_params: extra params for a spec dtype (e.g. a target dtype).
    tol: tolerance by dtype (rtol and atol), overriding `jtu.tolerance`.
    weak_args: the operands whose weak types decide the result's weak type
      (weak iff all of them are); these may be Python scalars. "all": every
      operand. None: skip the weak-type test (the result's weak type is a param).
    also_accepts: dtypes the primitive accepts but the value tests skip
      (the comment at the entry says why); the rejection test skips them too.
    check_rejects: whether dtypes outside `dtypes` must raise TypeError
      (False where acceptance depends on params, e.g. a target dtype, or
      where the entry tests a subset of the accepted dtypes).
    mixes_dtypes: whether operands of different dtypes are accepted.
    reject_error: the error class for a dtype outside `dtypes` (JAX's; TypeError
      but for a few primitives).
    bad_configs: operand shapes (and params) that must raise: a `Config`
      (TypeError) or a ``(Config, error class)`` pair, with JAX's class.
    grad_order: the derivative order to check later (0: not differentiable).
    linear: the operands in which the primitive is linear (for transpose tests).
  """
  name: str
  primitive: core.Primitive
  fun: Callable
  ref: Callable
  makers: tuple
  dtypes: tuple
  configs: tuple
  arg_dtypes: Callable | None = None
  dtype_params: Callable | None = None
  tol: dict | None = None
  weak_args: Any = "all"
  also_accepts: tuple = ()
  check_rejects: bool = True
  mixes_dtypes: bool = False
  reject_error: Callable = lambda dtype: TypeError
  bad_configs: tuple = ()
  grad_order: int = 0
  linear: tuple = ()

  def operand_dtypes(self, dtype) -> tuple:
    if self.arg_dtypes is not None:
      return tuple(np.dtype(d) for d in self.arg_dtypes(np.dtype(dtype)))
    return (np.dtype(dtype),) * len(self.makers)

  @property
  def weak_operands(self) -> tuple | None:
    if self.weak_args == "all":
      return tuple(range(len(self.makers)))
    return self.weak_args

  def params_for(self, config: Config, dtype) -> dict:
    params = dict(config.params)
    if self.dtype_params is not None:
      params.update(self.dtype_params(np.dtype(dtype)))
    return params

  def make_args(self, rng, config: Config, dtype) -> list:
    return [factory(rng)(shape, d) for factory, shape, d in
            zip(self.makers, config.shapes, self.operand_dtypes(dtype), strict=True)]

  def __repr__(self):
    return f"Spec({self.name})"


def configs(*shape_tuples, params=None) -> tuple:
  """Configs from operand-shape tuples, each with every param dict given."""
  return tuple(Config(tuple(tuple(s) for s in shapes), dict(p))
               for shapes in shape_tuples for p in (params or [{}]))


UNARY_SHAPES = tuple((s,) for s in jtu.ALL_SHAPES)
BINARY_SHAPES = tuple((s, s) for s in jtu.ALL_SHAPES) + (
    ((), (3,)), ((2, 3), ()), ((1, 3), (2, 3)), ((2, 1), (1, 3)), ((0, 3), (1, 3)))

# ----------------------------------------------------------------------------
# Reference helpers: XLA's semantics in NumPy


def _wide(x: np.ndarray) -> np.ndarray:
  """Floats as float64, complex as complex128 (exact); other dtypes unchanged."""
  x = np.asarray(x)
  if x.dtype.kind == "c":
    return x.astype(np.complex128)
  if x.dtype.kind == "f" or x.dtype == BF16:
    return x.astype(np.float64)
  return x


def same(d):
  return d


def to_bool(d):
  return BOOL


def to_real(d):
  return np.dtype(np.float64) if d == np.dtype(np.complex128) else (
      F32 if d == C64 else d)


def to_complex(d):
  return np.dtype(np.complex128) if d == F64 else C64


def wide(fn, out=same):
  """A reference computed in float64/complex128 and rounded to ``out(dtype of operand 0)``.

  Integer and boolean operands are used as they are (NumPy wraps around as XLA does).
  """
  def ref(*args, **params):
    dtype = np.asarray(args[0]).dtype
    with np.errstate(all="ignore"):
      result = fn(*[_wide(a) for a in args], **params)
      return np.asarray(result).astype(out(dtype))
  ref.__name__ = getattr(fn, "__name__", "ref")
  return ref


def ref_split(x, sizes, axis):
  x = np.asarray(x)
  return tuple(np.split(x, np.cumsum(sizes)[:-1].astype(int), axis))


def native(fn, out=same):
  """A reference computed in the operands' own dtype (for bit-exact operations)."""
  def ref(*args, **params):
    dtype = np.asarray(args[0]).dtype
    with np.errstate(all="ignore"):
      return np.asarray(fn(*[np.asarray(a) for a in args], **params)).astype(out(dtype))
  ref.__name__ = getattr(fn, "__name__", "ref")
  return ref


def _unsigned(dtype):
  return np.dtype(f"uint{np.dtype(dtype).itemsize * 8}")


def _signed(dtype):
  return np.dtype(f"int{np.dtype(dtype).itemsize * 8}")


def ref_round_away_from_zero(x):
  return np.sign(x) * np.floor(np.abs(x) + 0.5)


def ref_sign(x):
  if x.dtype.kind == "c":
    mag = np.abs(x)
    return np.where(mag == 0, 0, x / np.where(mag == 0, 1, mag))
  return np.sign(x)


def ref_logistic(x):
  return 1 / (1 + np.exp(-x))


def ref_population_count(x):
  return np.bitwise_count(x.view(_unsigned(x.dtype))).astype(x.dtype)


def ref_clz(x):
  u = x.view(_unsigned(x.dtype)).astype(np.uint64)
  bits = x.dtype.itemsize * 8
  count = np.full(x.shape, bits, np.int64)
  for i in range(bits):
    count = np.where((u >> np.uint64(i)) != 0, bits - i - 1, count)
  return count.astype(x.dtype)


def ref_div(x, y):
  """Division; for integers XLA's: truncation toward zero, x / 0 = -1, INT_MIN / -1 = INT_MIN."""
  if x.dtype.kind not in "iu":
    return x / y
  xi, yi = x.astype(np.int64), y.astype(np.int64)
  safe = np.where(yi == 0, 1, yi)
  q = np.abs(xi) // np.abs(safe) * np.sign(xi) * np.sign(safe)
  return np.where(yi == 0, -1, q).astype(x.dtype)


def ref_rem(x, y):
  """Remainder with the dividend's sign; for integers x % 0 = x, INT_MIN % -1 = 0."""
  if x.dtype.kind not in "iu":
    return np.fmod(x, y)
  xi, yi = x.astype(np.int64), y.astype(np.int64)
  q = ref_div(x.astype(np.int64), y.astype(np.int64))
  return np.where(yi == 0, xi, xi - q * yi).astype(x.dtype)


def _shift_amounts(x, y):
  bits = x.dtype.itemsize * 8
  amount = np.asarray(y).view(_unsigned(y.dtype)).astype(np.uint64)
  big = amount >= bits
  return np.where(big, 0, amount).astype(np.uint64), big


def ref_shift_left(x, y):
  """x << y; amounts of at least the bit width (or negative) give 0, as in XLA."""
  amount, big = _shift_amounts(x, y)
  u = x.view(_unsigned(x.dtype)).astype(np.uint64)
  mask = np.uint64((1 << (x.dtype.itemsize * 8)) - 1)
  out = np.where(big, np.uint64(0), (u << amount) & mask)
  return out.astype(_unsigned(x.dtype)).view(x.dtype)


def ref_shift_right_logical(x, y):
  amount, big = _shift_amounts(x, y)
  u = x.view(_unsigned(x.dtype)).astype(np.uint64)
  out = np.where(big, np.uint64(0), u >> amount)
  return out.astype(_unsigned(x.dtype)).view(x.dtype)


def ref_shift_right_arithmetic(x, y):
  """x >> y filling with the sign bit (of the bits read as signed, for unsigned x too)."""
  amount, big = _shift_amounts(x, y)
  s = x.view(_signed(x.dtype)).astype(np.int64)
  out = np.where(big, np.where(s < 0, -1, 0), s >> amount.astype(np.int64))
  return out.astype(_signed(x.dtype)).view(x.dtype)


def ref_atan2(x, y):
  if x.dtype.kind == "c":
    # XLA's complex atan2: -i log((y + i x) / sqrt(x^2 + y^2)).
    return -1j * np.log((y + 1j * x) / np.sqrt(x * x + y * y))
  return np.arctan2(x, y)


def ref_pow(x, y):
  return np.power(x, y.astype(x.dtype))


def ref_select_n(which, *cases):
  return np.choose(np.asarray(which).astype(np.int64), np.broadcast_arrays(*cases))


def ref_clamp(lo, x, hi):
  return np.minimum(np.maximum(x, lo), hi)


def ref_convert_element_type(x, *, new_dtype):
  """XLA's conversion: complex -> real drops the imaginary part; float -> int
  truncates and saturates (NaN -> 0); int -> int wraps around."""
  new_dtype = np.dtype(new_dtype)
  if x.dtype.kind == "c" and new_dtype.kind != "c":
    x = x.real
  with np.errstate(all="ignore"):
    if new_dtype == BOOL:
      return x != 0
    if new_dtype.kind in "iu" and (x.dtype.kind == "f" or x.dtype == BF16):
      info = np.iinfo(new_dtype)
      w = x.astype(np.float64)
      inner = np.where(np.isnan(w), 0, np.clip(np.trunc(w), info.min, info.max))
      return np.where(w >= float(info.max), info.max, inner.astype(new_dtype)).astype(new_dtype)
    return x.astype(new_dtype)


def ref_bitcast_convert_type(x, *, new_dtype):
  x = np.array(x, order="C")
  old, new = x.dtype.itemsize, np.dtype(new_dtype).itemsize
  flat = x.reshape(-1).view(new_dtype)
  shape = x.shape if old == new else (*x.shape, old // new) if old > new else x.shape[:-1]
  return flat.reshape(shape)


_REDUCED_TYPES = {(5, 10): np.float16, (8, 7): ml_dtypes.bfloat16,
                  (5, 2): ml_dtypes.float8_e5m2, (4, 3): ml_dtypes.float8_e4m3}


def ref_reduce_precision(x, *, exponent_bits, mantissa_bits):
  """Round to the narrower format; its subnormals flush to zero, as XLA does."""
  target = np.dtype(_REDUCED_TYPES[(exponent_bits, mantissa_bits)])
  rounded = x.astype(np.float64).astype(target).astype(np.float64)
  tiny = float(ml_dtypes.finfo(target).smallest_normal)
  return np.where(np.abs(rounded) < tiny, 0.0 * rounded, rounded).astype(x.dtype)


def ref_dot_general(lhs, rhs, *, dimension_numbers, preferred_element_type=None):
  (lc, rc), (lb, rb) = dimension_numbers
  letters = iter("abcdefghijklmnopqrstuvwxyz")
  lhs_idx, rhs_idx = [None] * lhs.ndim, [None] * rhs.ndim
  for i, j in zip(lb, rb):
    lhs_idx[i] = rhs_idx[j] = next(letters)
  for i, j in zip(lc, rc):
    lhs_idx[i] = rhs_idx[j] = next(letters)
  lhs_idx = [c or next(letters) for c in lhs_idx]
  rhs_idx = [c or next(letters) for c in rhs_idx]
  out = ([lhs_idx[i] for i in lb]
         + [c for i, c in enumerate(lhs_idx) if i not in lb and i not in lc]
         + [c for i, c in enumerate(rhs_idx) if i not in rb and i not in rc])
  wider = lambda d: (d.kind == "c", d.kind == "f" or d == BF16, d.itemsize, d.kind != "u")
  dtype = np.dtype(preferred_element_type or max(lhs.dtype, rhs.dtype, key=wider))
  spec = f"{''.join(lhs_idx)},{''.join(rhs_idx)}->{''.join(out)}"
  if lhs.dtype == BOOL and rhs.dtype == BOOL:
    acc = np.einsum(spec, lhs.astype(np.int64), rhs.astype(np.int64)) != 0
  elif lhs.dtype.kind in "biu" and rhs.dtype.kind in "biu":
    acc = np.einsum(spec, lhs.astype(np.int64), rhs.astype(np.int64))
  else:
    acc = np.einsum(spec, _wide(lhs), _wide(rhs))
  with np.errstate(all="ignore"):
    return np.asarray(acc).astype(dtype)


# ----------------------------------------------------------------------------
# Argument makers (factories of rng)

default = jtu.rand_default
positive = jtu.rand_positive
nonzero = jtu.rand_nonzero
special = jtu.rand_some_special
small_int = jtu.rand_small_int
full_range = jtu.rand_full_range_int
boolean = jtu.rand_bool
not_int = jtu.rand_not_small_int


def uniform(low, high):
  return functools.partial(jtu.rand_uniform, low=low, high=high)


def by_dtype(**factories):
  """A maker choosing its factory by dtype kind: keys 'f', 'c', 'i', 'u', 'b' (and 'other')."""
  def factory(rng):
    makers = {k: f(rng) for k, f in factories.items()}

    def maker(shape, dtype):
      kind = "f" if np.dtype(dtype) == BF16 else np.dtype(dtype).kind
      return makers.get(kind, makers.get("other"))(shape, dtype)
    return maker
  return factory


# Integers across the whole range (wraparound) and floats with specials.
arith = by_dtype(f=special, c=default, i=full_range, u=full_range, b=boolean)


def shift_amounts(rng):
  """Shift amounts mostly within the bit width, some at or beyond it (and negative)."""
  def maker(shape, dtype):
    dtype = np.dtype(dtype)
    bits = dtype.itemsize * 8
    low = -3 if dtype.kind == "i" else 0
    return rng.integers(low, bits + 3, shape).astype(dtype)
  return maker


def convert_values(rng):
  """Values for conversions: moderate, fractional, huge, +-inf and NaN."""
  specials = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 255.5, 256.0, -0.7, 127.9, 7e4])
  base = jtu.rand_default(rng, scale=100.0)

  def maker(shape, dtype):
    x = base(shape, dtype)
    if np.dtype(dtype).kind not in "fc" and np.dtype(dtype) != BF16 or not x.size:
      return full_range(rng)(shape, dtype) if np.dtype(dtype).kind in "iu" else x
    pick = rng.random(shape) < 0.5
    with np.errstate(over="ignore"):
      values = specials[rng.integers(0, len(specials), shape)].astype(dtype)
    return np.where(pick, values, x)
  return maker


def whole_number(low, high):
  """Whole numbers in [low, high) in any dtype (polygamma's order m)."""
  def factory(rng):
    return jtu.rand_int(rng, low, high)
  return factory


def which_maker(n_cases):
  def factory(rng):
    def maker(shape, dtype):
      if np.dtype(dtype) == BOOL:
        return rng.random(shape) < 0.5
      return rng.integers(0, n_cases, shape).astype(dtype)
    return maker
  return factory


# ----------------------------------------------------------------------------
# Elementwise entries

TRANSCENDENTAL_TOL = {F32: 1e-5, C64: 1e-5, F64: 1e-12, F16: 2e-3, BF16: 2e-2}
LOOSE_TOL = {F32: 1e-4, C64: 1e-4, F64: 1e-10, F16: 5e-3, BF16: 3e-2}


def unary(name, ref, dtypes, maker=default, *, fun=None, prim=None, tol=None, grad_order=0,
          linear=(), also_accepts=(), shapes=UNARY_SHAPES, **kw):
  fun = fun or getattr(lax, name)
  prim = prim or getattr(lax, f"{name}_p")
  return Spec(name, prim, fun, ref, (maker,), tuple(dtypes), configs(*shapes), tol=tol,
              grad_order=grad_order, linear=linear, also_accepts=also_accepts, **kw)


BINARY_BAD_SHAPES = configs(((2,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 2)))


def binary(name, ref, dtypes, makers=(default, default), *, fun=None, prim=None, tol=None,
           grad_order=0, linear=(), also_accepts=(), shapes=BINARY_SHAPES, **kw):
  fun = fun or getattr(lax, name)
  prim = prim or getattr(lax, f"{name}_p")
  return Spec(name, prim, fun, ref, tuple(makers), tuple(dtypes), configs(*shapes), tol=tol,
              grad_order=grad_order, linear=linear, also_accepts=also_accepts,
              bad_configs=BINARY_BAD_SHAPES, **kw)


T = TRANSCENDENTAL_TOL

ELEMENTWISE = [
    unary("neg", native(np.negative), NUMERIC, arith, grad_order=2, linear=(0,)),
    unary("floor", native(np.floor), FLOATS, special),
    unary("ceil", native(np.ceil), FLOATS, special),
    unary("round", wide(ref_round_away_from_zero), FLOATS, special),
    Spec("round_to_nearest_even", lax.round_p,
         lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), wide(np.rint),
         (special,), FLOATS, configs(*UNARY_SHAPES)),
    unary("is_finite", native(np.isfinite, to_bool), FLOATS, special),
    unary("exp", wide(np.exp), INEXACT, tol=T, grad_order=2),
    unary("exp2", wide(np.exp2), INEXACT, tol=T, grad_order=2),
    unary("log", wide(np.log), INEXACT, by_dtype(f=positive, c=default), tol=T, grad_order=2),
    unary("log1p", wide(np.log1p), INEXACT, by_dtype(f=uniform(-0.9, 5), c=uniform(-0.5, 2)),
          tol=T, grad_order=2),
    unary("expm1", wide(np.expm1), INEXACT, tol=T, grad_order=2),
    unary("tanh", wide(np.tanh), INEXACT, tol=T, grad_order=2),
    unary("logistic", wide(ref_logistic), INEXACT, tol=T, grad_order=2),
    unary("sin", wide(np.sin), INEXACT, tol=T, grad_order=2),
    unary("cos", wide(np.cos), INEXACT, tol=T, grad_order=2),
    unary("tan", wide(np.tan), INEXACT, uniform(-1.3, 1.3), tol=LOOSE_TOL, grad_order=2),
    unary("asin", wide(np.arcsin), INEXACT, uniform(-0.95, 0.95), tol=T, grad_order=2),
    unary("acos", wide(np.arccos), INEXACT, uniform(-0.95, 0.95), tol=T, grad_order=2),
    unary("atan", wide(np.arctan), INEXACT, uniform(-0.9, 0.9), tol=T, grad_order=2),
    unary("sinh", wide(np.sinh), INEXACT, tol=T, grad_order=2),
    unary("cosh", wide(np.cosh), INEXACT, tol=T, grad_order=2),
    unary("asinh", wide(np.arcsinh), INEXACT, uniform(-0.9, 0.9), tol=T, grad_order=2),
    unary("acosh", wide(np.arccosh), INEXACT, by_dtype(f=uniform(1.1, 6), c=uniform(1.1, 3)),
          tol=LOOSE_TOL, grad_order=2),
    unary("atanh", wide(np.arctanh), INEXACT, uniform(-0.9, 0.9), tol=T, grad_order=2),
    unary("sqrt", wide(np.sqrt), INEXACT, by_dtype(f=positive, c=default), tol=T, grad_order=2),
    unary("rsqrt", wide(lambda x: 1 / np.sqrt(x)), INEXACT, by_dtype(f=positive, c=default),
          tol=T, grad_order=2),
    unary("cbrt", wide(np.cbrt), FLOATS, tol=T, grad_order=2),
    unary("abs", native(np.abs, to_real), SIGNED + INEXACT,
          by_dtype(f=special, c=default, i=full_range), tol=T, grad_order=2),
    unary("sign", wide(ref_sign), NUMERIC, by_dtype(f=special, c=default, i=full_range,
                                                     u=full_range)),
    unary("erf", wide(scipy.special.erf), FLOATS, tol=T, grad_order=2),
    unary("erfc", wide(scipy.special.erfc), FLOATS, uniform(-2, 3), tol=T, grad_order=2),
    unary("erf_inv", wide(scipy.special.erfinv), FLOATS, uniform(-0.95, 0.95), tol=LOOSE_TOL,
          grad_order=2),
    unary("lgamma", wide(scipy.special.gammaln), FLOATS, not_int, tol=LOOSE_TOL, grad_order=2),
    unary("digamma", wide(scipy.special.digamma), FLOATS, not_int,
          tol={**LOOSE_TOL, F32: 5e-4}, grad_order=2),
    unary("bitwise_not", native(np.invert), INTS + (BOOL,), by_dtype(i=full_range, u=full_range,
                                                                       b=boolean),
          prim=lax.not_p),
    unary("population_count", native(ref_population_count), INTS, full_range),
    unary("clz", native(ref_clz), INTS, full_range),
    unary("real", native(np.real, to_real), (C64,), grad_order=2, linear=(0,)),
    unary("imag", native(np.imag, to_real), (C64,), grad_order=2, linear=(0,)),
    unary("conj", native(np.conj, to_complex), (F32, F64, C64), grad_order=2, linear=(0,)),
    unary("square", wide(np.square), NUMERIC, by_dtype(f=default, c=default, i=full_range,
                                                        u=full_range), tol=T, grad_order=2),
    Spec("integer_pow", lax.integer_pow_p, lax.integer_pow,
         wide(lambda x, y: np.power(x, y) if x.dtype.kind in "iu" else np.power(x, float(y))),
         (by_dtype(f=nonzero, c=nonzero, i=full_range, u=full_range),), NUMERIC,
         configs(*UNARY_SHAPES, params=[{"y": 0}, {"y": 1}, {"y": 3}, {"y": 6}]),
         tol=LOOSE_TOL, grad_order=2, weak_args=(0,)),
    Spec("integer_pow_negative", lax.integer_pow_p, lax.integer_pow,
         wide(lambda x, y: np.power(x, float(y))), (nonzero,), INEXACT,
         configs(*UNARY_SHAPES, params=[{"y": -1}, {"y": -2}, {"y": -5}]),
         tol=LOOSE_TOL, grad_order=2, weak_args=(0,)),
    Spec("reduce_precision", lax.reduce_precision_p, lax.reduce_precision,
         native(ref_reduce_precision), (special,), FLOATS,
         configs(*UNARY_SHAPES, params=[{"exponent_bits": 5, "mantissa_bits": 10},
                                        {"exponent_bits": 8, "mantissa_bits": 7},
                                        {"exponent_bits": 5, "mantissa_bits": 2},
                                        {"exponent_bits": 4, "mantissa_bits": 3}]),
         grad_order=2, linear=(0,), weak_args=(0,)),
    Spec("copy", lax.copy_p, lax_elementwise._copy, native(np.copy), (arith,), EVERY,
         configs(*UNARY_SHAPES), grad_order=2, linear=(0,)),
    # The identity with a zero derivative (so no finite-difference check: grad_order 0).
    Spec("stop_gradient", lax.stop_gradient_p, lax.stop_gradient_p.bind, native(np.copy),
         (arith,), EVERY, configs(*UNARY_SHAPES)),

    binary("add", wide(np.add), NUMERIC, (arith, arith), grad_order=2, linear=(0, 1)),
    binary("sub", wide(np.subtract), NUMERIC, (arith, arith), grad_order=2, linear=(0, 1)),
    binary("mul", wide(np.multiply), NUMERIC, (arith, arith), grad_order=2, linear=(0, 1)),
    binary("div", wide(ref_div), NUMERIC,
           (by_dtype(f=special, c=default, i=full_range, u=full_range),
            by_dtype(f=nonzero, c=nonzero, i=small_int, u=small_int)),
           tol=T, grad_order=2, linear=(0,)),
    binary("rem", wide(ref_rem), FLOATS + INTS,
           (by_dtype(f=default, i=full_range, u=full_range),
            by_dtype(f=nonzero, i=small_int, u=small_int)), tol=T, grad_order=2),
    # Complex max/min order lexicographically (NumPy's order too); NaN excluded there.
    binary("max", native(np.maximum), EVERY, (arith, arith), grad_order=1),
    binary("min", native(np.minimum), EVERY, (arith, arith), grad_order=1),
    binary("atan2", wide(ref_atan2), INEXACT,
           (by_dtype(f=special, c=uniform(0.2, 1)), by_dtype(f=special, c=uniform(0.2, 1))),
           tol=T, grad_order=2),
    binary("nextafter", native(np.nextafter), FLOATS, (special, special)),
    # Not differentiable in the order m (JAX raises): derivatives in x are checked in
    # tests/lax/test_ad_rules.py (and through digamma's).
    binary("polygamma", wide(lambda m, x: scipy.special.polygamma(m.astype(np.int64), x)),
           FLOATS, (whole_number(0, 4), not_int), tol={**LOOSE_TOL, F32: 5e-4, F16: 3e-2},
           shapes=tuple((s, s) for s in jtu.ALL_SHAPES) + (((), (3,)), ((1, 3), (2, 3)))),
    binary("bitwise_and", native(np.bitwise_and), INTS + (BOOL,), (arith, arith),
           prim=lax.and_p),
    binary("bitwise_or", native(np.bitwise_or), INTS + (BOOL,), (arith, arith), prim=lax.or_p),
    binary("bitwise_xor", native(np.bitwise_xor), INTS + (BOOL,), (arith, arith),
           prim=lax.xor_p),
    binary("shift_left", native(ref_shift_left), INTS, (full_range, shift_amounts)),
    binary("shift_right_arithmetic", native(ref_shift_right_arithmetic), INTS,
           (full_range, shift_amounts)),
    binary("shift_right_logical", native(ref_shift_right_logical), INTS,
           (full_range, shift_amounts)),
    binary("complex", wide(lambda x, y: x + 1j * y, to_complex), (F32, F64),
           grad_order=2, linear=(0, 1)),
    binary("pow", wide(np.power), INEXACT, (by_dtype(f=positive, c=default), default),
           tol=LOOSE_TOL, grad_order=2),
    Spec("pow_int_exponent", lax.pow_p, lax.pow, wide(ref_pow), (nonzero, small_int), INEXACT,
         configs(*BINARY_SHAPES), arg_dtypes=lambda d: (d, I32), tol=T, grad_order=1,
         bad_configs=BINARY_BAD_SHAPES),
    *[binary(name, native(fn, to_bool), dtypes, (arith, arith))
      for name, fn, dtypes in [("eq", np.equal, EVERY), ("ne", np.not_equal, EVERY),
                               ("lt", np.less, ORDERED), ("le", np.less_equal, ORDERED),
                               ("gt", np.greater, ORDERED), ("ge", np.greater_equal, ORDERED)]],

    # XLA's complex clamp uses no documented order; complex is accepted but not value-tested.
    Spec("clamp", lax.clamp_p, lax.clamp, native(ref_clamp), (arith, arith, arith), ORDERED,
         configs(((), (3,), ()), ((), (), ()), ((0,), (0,), (0,)), ((2, 3), (2, 3), ()),
                 ((), (1,), (1,)), ((2, 3), (2, 3), (2, 3))),
         also_accepts=(C64,), grad_order=1,
         bad_configs=configs(((2,), (3,), ()), ((), (3,), (2,)), ((1,), (3,), ()))),
    Spec("select_n", lax.select_n_p, lax.select_n, ref_select_n,
         (which_maker(2), arith, arith), EVERY,
         configs(((), (3,), (3,)), ((), (), ()), ((3,), (3,), (3,)), ((0,), (0,), (0,)),
                 ((2, 3), (2, 3), (2, 3)), ((1,), (1,), (1,))),
         arg_dtypes=lambda d: (BOOL, d, d), weak_args=(1, 2), grad_order=2, linear=(1, 2),
         bad_configs=configs(((2,), (3,), (3,)), ((), (3,), (2,)), ((1,), (3,), (3,)))),
    Spec("select_n_int_predicate", lax.select_n_p, lax.select_n,
         lambda which, *cases: ref_select_n(which, *cases),
         (which_maker(3), arith, arith, arith), (F32, I32, BOOL),
         configs(((2, 3),) * 4, ((),) * 4, ((0,),) * 4, ((), (3,), (3,), (3,))),
         arg_dtypes=lambda d: (I32, d, d, d), weak_args=(1, 2, 3), check_rejects=False,
         grad_order=2, linear=(1, 2, 3)),
    Spec("select_n_uint8_predicate", lax.select_n_p, lax.select_n,
         lambda which, *cases: ref_select_n(which, *cases),
         (which_maker(2), arith, arith), (F32,), configs(((4,),) * 3),
         arg_dtypes=lambda d: (U8, d, d), weak_args=(1, 2), check_rejects=False),
]


CONVERSIONS = [
    Spec("convert_element_type", lax.convert_element_type_p, lax.convert_element_type,
         ref_convert_element_type, (convert_values,), EVERY,
         configs(*UNARY_SHAPES, params=[{"new_dtype": d} for d in ALL_DTYPES]),
         weak_args=None, check_rejects=False, grad_order=2, linear=(0,)),
    Spec("bitcast_convert_type", lax.bitcast_convert_type_p, lax.bitcast_convert_type,
         ref_bitcast_convert_type, (by_dtype(f=default, c=default, other=full_range),),
         (F32, F16, BF16, I8, I16, I32, U8, U32), configs(*UNARY_SHAPES),
         dtype_params=lambda d: {"new_dtype": {F32: I32, F16: I16, BF16: U8, I8: U8, I16: F16,
                                                I32: F32, U8: I8, U32: F32}[d]},
         weak_args=None, check_rejects=False),
    Spec("bitcast_convert_type_narrowing", lax.bitcast_convert_type_p, lax.bitcast_convert_type,
         ref_bitcast_convert_type, (by_dtype(f=default, other=full_range),),
         (F32, I32, U32, I16), configs(*UNARY_SHAPES),
         dtype_params=lambda d: {"new_dtype": U8 if d.itemsize == 2 else I16},
         weak_args=None, check_rejects=False),
    Spec("bitcast_convert_type_widening", lax.bitcast_convert_type_p, lax.bitcast_convert_type,
         ref_bitcast_convert_type, (full_range,), (U8, I8),
         configs(((4,),), ((3, 4),), ((0, 4),), ((1, 4),)),
         dtype_params=lambda d: {"new_dtype": I32 if d == U8 else U32}, weak_args=None,
         check_rejects=False),
]

# ----------------------------------------------------------------------------
# dot_general

_DOT_CONFIGS = tuple(
    Config(shapes, {"dimension_numbers": dn}) for shapes, dn in [
        (((3,), (3,)), (((0,), (0,)), ((), ()))),              # vector dot: 0-d result
        (((2, 3), (3, 4)), (((1,), (0,)), ((), ()))),          # matmul
        (((3, 2), (3, 4)), (((0,), (0,)), ((), ()))),          # contract leading dims
        (((5, 2, 3), (5, 3, 4)), (((2,), (1,)), ((0,), (0,)))),  # batched matmul
        (((2, 0), (0, 4)), (((1,), (0,)), ((), ()))),          # empty contraction: zeros
        (((0, 3), (3, 4)), (((1,), (0,)), ((), ()))),          # empty result
        (((1, 1), (1, 1)), (((1,), (0,)), ((), ()))),          # size one
        (((2,), (3,)), (((), ()), ((), ()))),                  # outer product
        (((), ()), (((), ()), ((), ()))),                      # scalars
        (((2, 3, 4), (4, 3)), (((1, 2), (1, 0)), ((), ()))),   # two contracting dims
    ])

DOT = [
    Spec("dot_general", lax.dot_general_p, lax.dot_general, ref_dot_general,
         (by_dtype(f=default, c=default, i=small_int, u=small_int, b=boolean),) * 2, EVERY,
         _DOT_CONFIGS, tol={F32: 1e-5, C64: 1e-5, F64: 1e-12, F16: 1e-2, BF16: 5e-2},
         grad_order=2, linear=(0, 1), mixes_dtypes=True,
         bad_configs=(Config(((2, 3), (4, 5)), {"dimension_numbers": (((1,), (0,)), ((), ()))}),
                      Config(((2, 3), (2, 3)), {"dimension_numbers": (((1,), (1,)), ((0,), (1,)))}),
                      Config(((2, 3), (3,)), {"dimension_numbers": (((2,), (0,)), ((), ()))}))),
    Spec("dot_general_preferred", lax.dot_general_p, lax.dot_general, ref_dot_general,
         (by_dtype(f=default, i=small_int, u=small_int),) * 2, (I8, U8, F16, BF16),
         _DOT_CONFIGS[:6],
         dtype_params=lambda d: {"preferred_element_type": F32 if d.kind == "f" or d == BF16
                                 else (I32 if d.kind == "i" else U32)},
         tol={F32: 1e-5}, check_rejects=False, grad_order=2, linear=(0, 1)),
    # Operands of different dtypes: the result has the wider one (XLA's rule, as in JAX).
    Spec("dot_general_mixed_dtypes", lax.dot_general_p, lax.dot_general, ref_dot_general,
         (by_dtype(f=default, i=small_int, u=small_int),) * 2, (I8, U8, F16, F32),
         _DOT_CONFIGS[:6],
         arg_dtypes=lambda d: {I8: (I8, I32), U8: (U8, I16), F16: (F32, F16), F32: (I32, F32)}[d],
         tol={F32: 1e-5, I32: 0}, check_rejects=False, grad_order=2, linear=(0, 1)),
]

# ----------------------------------------------------------------------------
# Shapes: broadcast_in_dim, reshape, transpose, squeeze, rev, pad, concatenate, iota


def ref_broadcast_in_dim(x, *, shape, broadcast_dimensions):
  expanded = [1] * len(shape)
  for i, d in enumerate(broadcast_dimensions):
    expanded[d] = x.shape[i]
  return np.broadcast_to(x.reshape(expanded), shape)


def ref_reshape(x, *, new_sizes, dimensions):
  return np.reshape(x if dimensions is None else np.transpose(x, dimensions), new_sizes)


def ref_pad(x, padding_value, *, padding_config):
  """lax.pad: interior padding first, then low/high edges (negative amounts crop)."""
  out = x
  for axis, (low, high, interior) in enumerate(padding_config):
    n = out.shape[axis]
    if interior > 0 and n > 1:
      shape = list(out.shape)
      shape[axis] = n + (n - 1) * interior
      spaced = np.full(shape, padding_value, x.dtype)
      index = [builtins_slice(None)] * out.ndim
      index[axis] = builtins_slice(None, None, interior + 1)
      spaced[tuple(index)] = out
      out = spaced
    for amount, at_start in ((low, True), (high, False)):
      if amount > 0:
        shape = list(out.shape)
        shape[axis] = amount
        block = np.full(shape, padding_value, x.dtype)
        out = np.concatenate([block, out] if at_start else [out, block], axis)
      elif amount < 0:
        index = [builtins_slice(None)] * out.ndim
        index[axis] = builtins_slice(-amount, None) if at_start else \
            builtins_slice(None, out.shape[axis] + amount)
        out = out[tuple(index)]
  return out


def ref_iota(*, dtype, shape, dimension):
  counts = np.arange(shape[dimension]).reshape([-1 if i == dimension else 1
                                                for i in range(len(shape))])
  return np.broadcast_to(counts, shape).astype(dtype)


def _bcast(shape, out, dims):
  return Config((shape,), {"shape": out, "broadcast_dimensions": dims})


def _reshape(shape, new_sizes, dimensions=None):
  return Config((shape,), {"new_sizes": new_sizes, "dimensions": dimensions})


def _one(shape, **params):
  return Config((shape,), params)


def _pad(shape, config):
  return Config((shape, ()), {"padding_config": config})


def _iota(shape, dimension, label):
  return Config((), {"shape": shape, "dimension": dimension}, label)


structural = lax_structural

STRUCTURAL = [
    Spec("broadcast_in_dim", structural.broadcast_in_dim_p,
         lambda x, **p: structural.broadcast_in_dim(x, **p), native(ref_broadcast_in_dim),
         (arith,), EVERY,
         (_bcast((3,), (2, 3), (1,)), _bcast((), (2, 3), ()), _bcast((1, 3), (4, 3), (0, 1)),
          _bcast((2, 1), (2, 0), (0, 1)), _bcast((0,), (2, 0), (1,)), _bcast((), (1,), ()),
          _bcast((2, 3), (2, 4, 3), (0, 2)), _bcast((1,), (1, 1), (1,))),
         grad_order=2, linear=(0,),
         bad_configs=(_bcast((3,), (2, 4), (1,)), _bcast((2, 3), (2, 3), (1, 0)),
                      _bcast((3,), (3,), ()))),
    Spec("reshape", structural.reshape_p, lambda x, **p: structural.reshape(x, **p),
         native(ref_reshape), (arith,), EVERY,
         (_reshape((2, 3), (3, 2)), _reshape((2, 3), (6,)), _reshape((), (1, 1)),
          _reshape((0, 3), (3, 0)), _reshape((2, 3), (6,), (1, 0)), _reshape((1,), ()),
          _reshape((2, 3, 4), (4, 6), (2, 0, 1))),
         grad_order=2, linear=(0,)),
    Spec("transpose", structural.transpose_p, lambda x, **p: structural.transpose(x, **p),
         native(lambda x, permutation: np.transpose(x, permutation)), (arith,), EVERY,
         (_one((2, 3), permutation=(1, 0)), _one((2, 3, 4), permutation=(2, 0, 1)),
          _one((0, 3), permutation=(1, 0)), _one((1, 1), permutation=(1, 0)),
          _one((), permutation=())),
         grad_order=2, linear=(0,), bad_configs=(_one((2, 3), permutation=(0, 0)),)),
    Spec("squeeze", structural.squeeze_p, lambda x, **p: structural.squeeze(x, **p),
         native(lambda x, dimensions: np.squeeze(x, axis=dimensions)), (arith,), EVERY,
         (_one((1, 3), dimensions=(0,)), _one((2, 1, 3), dimensions=(1,)),
          _one((1,), dimensions=(0,)), _one((1, 0), dimensions=(0,)),
          _one((1, 1), dimensions=(0, 1)), _one((2, 1, 1), dimensions=(-1,))),
         grad_order=2, linear=(0,), bad_configs=((_one((2, 3), dimensions=(0,)), ValueError),)),
    Spec("rev", structural.rev_p, lambda x, **p: structural.rev(x, **p),
         native(lambda x, dimensions: np.flip(x, dimensions) if dimensions else x.copy()),
         (arith,), EVERY,
         (_one((3,), dimensions=(0,)), _one((2, 3), dimensions=(0, 1)),
          _one((2, 3), dimensions=(1,)), _one((0, 3), dimensions=(1,)),
          _one((1,), dimensions=(0,)), _one((), dimensions=())),
         grad_order=2, linear=(0,)),
    Spec("pad", structural.pad_p, lambda x, v, **p: structural.pad(x, v, **p), native(ref_pad),
         (arith, arith), EVERY,
         (_pad((3,), ((1, 2, 1),)), _pad((2, 3), ((0, 0, 0), (1, -1, 2))), _pad((), ()),
          _pad((0,), ((2, 1, 3),)), _pad((3,), ((-1, -1, 0),)), _pad((1,), ((0, 0, 4),)),
          _pad((2, 3), ((-2, 1, 1), (0, 0, 0))), _pad((4,), ((-3, 0, 1),))),
         weak_args=(0, 1), grad_order=2, linear=(0, 1),
         bad_configs=((_pad((3,), ((1, 1, 1), (0, 0, 0))), ValueError),)),
    Spec("concatenate", structural.concatenate_p,
         lambda *xs, dimension: structural.concatenate(xs, dimension),
         native(lambda *xs, dimension: np.concatenate(xs, dimension)), (arith,) * 3, EVERY,
         configs(((2, 3), (1, 3), (0, 3)), params=[{"dimension": 0}]) +
         configs(((2, 1), (2, 3), (2, 0)), ((0, 1), (0, 3), (0, 0)), params=[{"dimension": 1}]) +
         configs(((3,), (2,), (1,)), ((1,), (1,), (1,)), params=[{"dimension": 0}]),
         grad_order=2, linear=(0, 1, 2),
         bad_configs=configs(((2, 3), (2, 4), (2, 3)), params=[{"dimension": 0}])),
    Spec("split", structural.split_p,
         lambda x, sizes, axis: tuple(structural.split(x, sizes, axis)), ref_split, (arith,), EVERY,
         configs(((5,),), params=[{"sizes": (2, 3), "axis": 0}, {"sizes": (0, 5), "axis": 0}]) +
         configs(((2, 4),), params=[{"sizes": (1, 1, 2), "axis": 1}, {"sizes": (2,), "axis": 0}]) +
         configs(((2, 0),), params=[{"sizes": (0, 0), "axis": 1}]) +
         configs(((1, 1),), params=[{"sizes": (1,), "axis": -1}]),
         grad_order=2, linear=(0,),
         bad_configs=((configs(((2, 4),), params=[{"sizes": (1, 2), "axis": 1}])[0], ValueError),)),
    Spec("iota", structural.iota_p,
         lambda **p: structural.broadcasted_iota(p["dtype"], p["shape"], p["dimension"]),
         ref_iota, (), NUMERIC,
         (_iota((3,), 0, "general"), _iota((2, 3), 1, "general"), _iota((2, 3), 0, "general"),
          _iota((0,), 0, "empty"), _iota((1,), 0, "size_one"), _iota((4, 0), 0, "empty")),
         dtype_params=lambda d: {"dtype": d}, weak_args=None),
]

# ----------------------------------------------------------------------------
# Reductions


def _identity(kind, dtype):
  dtype = np.dtype(dtype)
  if kind == "max":
    if dtype == BOOL:
      return np.array(False)
    return (np.array(-np.inf).astype(dtype) if dtype.kind in "fc" or dtype == BF16
            else np.array(np.iinfo(dtype).min, dtype))
  if dtype == BOOL:
    return np.array(True)
  return (np.array(np.inf).astype(dtype) if dtype.kind in "fc" or dtype == BF16
          else np.array(np.iinfo(dtype).max, dtype))


def _reduce_ref(kind):
  def ref(x, *, axes):
    if kind in ("max", "min"):
      ufunc = np.maximum if kind == "max" else np.minimum
      return ufunc.reduce(x, axis=axes, initial=_identity(kind, x.dtype).astype(x.dtype)[()]) \
          if x.size == 0 else ufunc.reduce(x, axis=axes)
    if kind in ("sum", "prod"):
      fn = np.sum if kind == "sum" else np.prod
      return fn(x, axis=axes, dtype=x.dtype if x.dtype.kind in "iu" else None)
    ufunc = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[kind]
    initial = np.array(-1).astype(x.dtype) if kind == "and" else np.zeros((), x.dtype)
    if x.dtype == BOOL:
      initial = np.array(kind == "and")
    return ufunc.reduce(x, axis=axes, initial=initial[()])
  return ref


def max_identity(rng):
  return lambda shape, dtype: np.full(shape, _identity("max", dtype), dtype)


def min_identity(rng):
  return lambda shape, dtype: np.full(shape, _identity("min", dtype), dtype)


def _axes(shape, *axes):
  return Config((shape,), {"axes": tuple(axes)})


_REDUCE_CONFIGS = (_axes((2, 3), 0), _axes((2, 3), 1), _axes((2, 3), 0, 1), _axes((3,), 0),
                   _axes((), ), _axes((0, 3), 0), _axes((2, 0), 0), _axes((1, 1), 1),
                   _axes((2, 3, 4), 0, 2))
_REDUCE_BAD = ((_axes((2, 3), 2), ValueError), (_axes((2, 3), 0, 0), ValueError))
_BOUNDED = by_dtype(f=uniform(0.5, 1.5), c=uniform(0.5, 1.2), i=full_range, u=full_range,
                    b=boolean)

reductions = lax_reductions

REDUCTIONS = [
    Spec("reduce_sum", reductions.reduce_sum_p, lambda x, **p: reductions.reduce_sum(x, **p),
         wide(_reduce_ref("sum")), (_BOUNDED,), NUMERIC, _REDUCE_CONFIGS,
         tol={**TRANSCENDENTAL_TOL, BF16: 5e-2, F16: 5e-3}, grad_order=2, linear=(0,)),
    Spec("reduce_prod", reductions.reduce_prod_p, lambda x, **p: reductions.reduce_prod(x, **p),
         wide(_reduce_ref("prod")), (_BOUNDED,), NUMERIC, _REDUCE_CONFIGS,
         tol={**TRANSCENDENTAL_TOL, BF16: 5e-2, F16: 5e-3}, grad_order=2),
    Spec("reduce_max", reductions.reduce_max_p, lambda x, **p: reductions.reduce_max(x, **p),
         wide(_reduce_ref("max")), (arith,), EVERY, _REDUCE_CONFIGS, grad_order=1,
         bad_configs=_REDUCE_BAD),
    Spec("reduce_min", reductions.reduce_min_p, lambda x, **p: reductions.reduce_min(x, **p),
         wide(_reduce_ref("min")), (arith,), EVERY, _REDUCE_CONFIGS, grad_order=1),
    *[Spec(f"reduce_{kind}", getattr(reductions, f"reduce_{kind}_p"),
           functools.partial(lambda x, fn, **p: fn(x, **p),
                             fn=getattr(reductions, f"reduce_{kind}")),
           native(_reduce_ref(kind)), (arith,), INTS + (BOOL,), _REDUCE_CONFIGS,
           weak_args=None)  # never weakly typed in JAX, even for a Python scalar operand
      for kind in ("and", "or", "xor")],
    # `computation` with `init_values` must be a monoid (XLA may apply the init any
    # number of times), so the inits are identities; a lambda is not recognized
    # as a known monoid, so these bind reduce_p.
    Spec("reduce", reductions.reduce_p,
         lambda x, init, dimensions: reductions.reduce(x, init, lambda a, b: lax.max(a, b),
                                                       dimensions),
         wide(lambda x, init, dimensions: np.max(x, axis=dimensions, initial=init[()])),
         (special, max_identity), FLOATS,
         configs(((2, 3), ()), ((2, 0), ()), params=[{"dimensions": (1,)}]) +
         configs(((2, 3), ()), ((0, 3), ()), ((3,), ()), params=[{"dimensions": (0,)}]) +
         configs(((), ()), params=[{"dimensions": ()}]),
         check_rejects=False),
    Spec("reduce_variadic", reductions.reduce_p,
         lambda x, y, ix, iy, dimensions: tuple(reductions.reduce(
             (x, y), (ix, iy), lambda a, b: (lax.max(a[0], b[0]), lax.min(a[1], b[1])),
             dimensions)),
         lambda x, y, ix, iy, dimensions: (np.max(x, axis=dimensions, initial=ix[()]),
                                           np.min(y, axis=dimensions, initial=iy[()])),
         (default, default, max_identity, min_identity), (F32, I32, U8),
         configs(((2, 3), (2, 3), (), ()), ((0, 3), (0, 3), (), ()),
                 params=[{"dimensions": (0,)}, {"dimensions": (0, 1)}]),
         arg_dtypes=lambda d: (d, I32, d, I32), weak_args=None, check_rejects=False),
    *[Spec(name, getattr(reductions, f"{name}_p"),
           functools.partial(lambda x, fn, **p: fn(x, **p), fn=getattr(reductions, name)),
           functools.partial(
               lambda x, np_fn, axis, index_dtype: np_fn(x, axis=axis).astype(index_dtype),
               np_fn=np_fn),
           (arith,), ORDERED,
           configs(((2, 3),), ((3,),), ((3, 1),), params=[{"axis": 0, "index_dtype": I32}]) +
           configs(((2, 3),), ((1, 1),), ((2, 4),), params=[{"axis": 1, "index_dtype": U8}]),
           weak_args=None,
           bad_configs=(*configs(((2, 3),), params=[{"axis": 1, "index_dtype": F32}]),
                        *[(c, ValueError) for c in configs(
                            ((2, 0),), params=[{"axis": 1, "index_dtype": I32}])]))
      for name, np_fn in (("argmax", np.argmax), ("argmin", np.argmin))],
]


def _cumulative_ref(kind):
  def ref(x, *, axis, reverse):
    if reverse:
      x = np.flip(x, axis)
    if kind == "cumsum":
      out = np.cumsum(x, axis=axis, dtype=x.dtype if x.dtype.kind in "iu" else None)
    elif kind == "cumprod":
      out = np.cumprod(x, axis=axis, dtype=x.dtype if x.dtype.kind in "iu" else None)
    elif kind == "cummax":
      out = np.maximum.accumulate(x, axis=axis)
    elif kind == "cummin":
      out = np.minimum.accumulate(x, axis=axis)
    elif x.dtype.kind == "c":
      out = np.log(np.cumsum(np.exp(x), axis=axis))
    else:
      out = np.logaddexp.accumulate(x, axis=axis)
    return np.flip(out, axis) if reverse else out
  return ref


_CUMULATIVE_CONFIGS = (
    configs(((4,),), ((2, 3),), ((0,),), ((1,),), ((3, 0),),
            params=[{"axis": 0, "reverse": False}, {"axis": 0, "reverse": True}])
    + configs(((2, 3),), params=[{"axis": 1, "reverse": False}, {"axis": 1, "reverse": True}]))

CUMULATIVE = [
    Spec("cumsum", reductions.cumsum_p, lambda x, **p: reductions.cumsum(x, **p),
         wide(_cumulative_ref("cumsum")), (_BOUNDED,), NUMERIC, _CUMULATIVE_CONFIGS,
         tol={**TRANSCENDENTAL_TOL, BF16: 5e-2, F16: 5e-3}, grad_order=2, linear=(0,)),
    Spec("cumprod", reductions.cumprod_p, lambda x, **p: reductions.cumprod(x, **p),
         wide(_cumulative_ref("cumprod")), (_BOUNDED,), NUMERIC, _CUMULATIVE_CONFIGS,
         tol={**TRANSCENDENTAL_TOL, BF16: 5e-2, F16: 5e-3}, grad_order=2),
    Spec("cummax", reductions.cummax_p, lambda x, **p: reductions.cummax(x, **p),
         wide(_cumulative_ref("cummax")), (arith,), NUMERIC, _CUMULATIVE_CONFIGS, grad_order=1),
    Spec("cummin", reductions.cummin_p, lambda x, **p: reductions.cummin(x, **p),
         wide(_cumulative_ref("cummin")), (arith,), NUMERIC, _CUMULATIVE_CONFIGS, grad_order=1),
    # Integer operands raise OverflowError (no -inf identity), as in JAX.
    Spec("cumlogsumexp", reductions.cumlogsumexp_p, lambda x, **p: reductions.cumlogsumexp(x, **p),
         wide(_cumulative_ref("cumlogsumexp")), (uniform(-2, 2),), INEXACT, _CUMULATIVE_CONFIGS,
         tol=LOOSE_TOL, grad_order=2,
         reject_error=lambda d: OverflowError if d.kind in "iu" else TypeError),
]

# ----------------------------------------------------------------------------
# Sorting


def ref_sort(*operands, dimension, is_stable, num_keys):
  """A stable lexicographic sort on the first `num_keys` operands (NaN last)."""
  keys = [np.moveaxis(k, dimension, -1) for k in operands[:num_keys]]
  moved = [np.moveaxis(x, dimension, -1) for x in operands]
  out = [np.empty_like(x) for x in moved]
  for index in np.ndindex(*moved[0].shape[:-1]):
    rows = [k[index] for k in keys]
    order = sorted(range(moved[0].shape[-1]),
                   key=lambda i: tuple(_sort_key(r[i]) for r in rows) + (i,))
    for o, x in zip(out, moved):
      o[index] = x[index][order]
  out = [np.moveaxis(o, -1, dimension) for o in out]
  return out[0] if len(out) == 1 else tuple(out)


def _sort_key(v):
  v = v.item() if hasattr(v, "item") else v
  if isinstance(v, complex):
    return (_sort_key(v.real), _sort_key(v.imag))
  if isinstance(v, float) and np.isnan(v):
    return (1, 0.0)
  return (0, v)


def ref_top_k(x, *, k):
  """The k largest along the last axis, NaN largest, lower index first among equals."""
  values = np.empty((*x.shape[:-1], k), x.dtype)
  indices = np.empty((*x.shape[:-1], k), np.int32)

  def descending(row, i):
    v = float(row[i])
    return (0, 0.0, i) if np.isnan(v) else (1, -v, i)
  for index in np.ndindex(*x.shape[:-1]):
    row = x[index]
    order = sorted(range(row.shape[0]), key=lambda i: descending(row, i))[:k]
    values[index] = row[order]
    indices[index] = order
  return values, indices


def _sort_configs(n_operands):
  return configs(((5,),) * n_operands, ((2, 3),) * n_operands, ((0,),) * n_operands,
                 ((1,),) * n_operands, ((3, 0),) * n_operands,
                 params=[{"dimension": -1, "is_stable": True, "num_keys": 1}]) + \
      configs(((3, 2),) * n_operands, params=[{"dimension": 0, "is_stable": True, "num_keys": 1}])


sorting = lax_sorting

SORTING = [
    Spec("sort", sorting.sort_p, lambda x, **p: sorting.sort(x, **p), ref_sort,
         (by_dtype(f=special, c=default, i=small_int, u=small_int, b=boolean),), EVERY,
         _sort_configs(1), weak_args=None, grad_order=2),
    Spec("sort_multiple_operands", sorting.sort_p,
         lambda k1, k2, v, **p: tuple(sorting.sort((k1, k2, v), **p)), ref_sort,
         (small_int, small_int, default), (F32, I32, U8, BOOL),
         tuple(Config(c.shapes, {**c.params, "num_keys": nk}) for c in _sort_configs(3)
               for nk in (1, 2)),
         arg_dtypes=lambda d: (d, d, F32), weak_args=None, check_rejects=False),
    Spec("top_k", sorting.top_k_p, lambda x, **p: tuple(sorting.top_k(x, **p)), ref_top_k,
         (by_dtype(f=default, i=small_int, u=small_int, b=boolean),), ORDERED,
         configs(((5,),), ((2, 4),), params=[{"k": 2}, {"k": 0}]) +
         configs(((1,),), ((3, 1),), params=[{"k": 1}]) + configs(((0,),), params=[{"k": 0}]),
         weak_args=None, grad_order=1,
         reject_error=lambda d: ValueError if d.kind == "c" else TypeError),
]

# ----------------------------------------------------------------------------
# Slicing: slice, dynamic_slice, dynamic_update_slice, gather, scatter


def _clamped_starts(operand_shape, window, starts):
  out = []
  for dim, size, s in zip(operand_shape, window, starts, strict=True):
    s = int(s)
    s = s + dim if s < 0 else s
    out.append(min(max(s, 0), dim - size))
  return out


def ref_dynamic_slice(x, *starts, slice_sizes):
  begin = _clamped_starts(x.shape, slice_sizes, starts)
  return x[tuple(builtins_slice(b, b + n) for b, n in zip(begin, slice_sizes))].copy()


def ref_dynamic_update_slice(x, update, *starts):
  begin = _clamped_starts(x.shape, update.shape, starts)
  out = x.copy()
  out[tuple(builtins_slice(b, b + n) for b, n in zip(begin, update.shape))] = update
  return out


def ref_slice(x, *, start_indices, limit_indices, strides):
  steps = strides or (1,) * x.ndim
  return x[tuple(builtins_slice(b, e, s) for b, e, s in
                 zip(start_indices, limit_indices, steps))].copy()


def _window_start(operand_shape, window, start, mode):
  """The start of a window, or None to drop/fill it (XLA's and JAX's out-of-bounds rules)."""
  in_bounds = all(0 <= s <= d - w for s, d, w in zip(start, operand_shape, window))
  if not in_bounds and mode == "drop":
    return None
  return [min(max(s, 0), d - w) for s, d, w in zip(start, operand_shape, window)]


def ref_gather(x, indices, *, dimension_numbers, slice_sizes, mode=None, fill_value=None):
  dn = dimension_numbers
  batching = tuple(getattr(dn, "operand_batching_dims", ()))
  index_batching = tuple(getattr(dn, "start_indices_batching_dims", ()))
  kept = [d for d in range(x.ndim) if d not in dn.collapsed_slice_dims and d not in batching]
  batch_shape = indices.shape[:-1]
  out_rank = len(batch_shape) + len(dn.offset_dims)
  batch_out_dims = [d for d in range(out_rank) if d not in dn.offset_dims]
  out_shape = [0] * out_rank
  for d, n in zip(batch_out_dims, batch_shape):
    out_shape[d] = n
  for d, k in zip(dn.offset_dims, kept):
    out_shape[d] = slice_sizes[k]
  fill = np.nan if x.dtype.kind in "fc" or x.dtype == BF16 else (
      True if x.dtype == BOOL else (np.iinfo(x.dtype).min if x.dtype.kind == "i"
                                    else np.iinfo(x.dtype).max))
  fill = fill if fill_value is None else fill_value
  rule = "drop" if _mode_name(mode) == "FILL_OR_DROP" else "clip"
  out = np.empty(out_shape, x.dtype)
  for out_index in np.ndindex(*out_shape):
    batch = tuple(out_index[d] for d in batch_out_dims)
    start = [0] * x.ndim
    for k, d in enumerate(dn.start_index_map):
      start[d] = int(indices[batch][k])
    for od, idd in zip(batching, index_batching):
      start[od] = batch[idd]
    start = _window_start(x.shape, slice_sizes, start, rule)
    if start is None:
      out[out_index] = fill
      continue
    for d, k in zip(dn.offset_dims, kept):
      start[k] += out_index[d]
    out[out_index] = x[tuple(start)]
  return out


def _mode_name(mode):
  if mode is None:
    return "PROMISE_IN_BOUNDS"
  if isinstance(mode, str):
    return {"clip": "CLIP", "fill": "FILL_OR_DROP", "drop": "FILL_OR_DROP",
            "promise_in_bounds": "PROMISE_IN_BOUNDS"}[mode]
  return mode.name


def _scatter_ref(combine):
  def ref(x, indices, updates, *, dimension_numbers, mode=None):
    dn = dimension_numbers
    batching = tuple(getattr(dn, "operand_batching_dims", ()))
    index_batching = tuple(getattr(dn, "scatter_indices_batching_dims", ()))
    window_operand_dims = [d for d in range(x.ndim)
                           if d not in dn.inserted_window_dims and d not in batching]
    window = [1] * x.ndim
    for k, d in zip(dn.update_window_dims, window_operand_dims):
      window[d] = updates.shape[k]
    scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    rule = "clip" if _mode_name(mode) == "CLIP" else "drop"
    out = x.copy()
    for u_index in np.ndindex(*updates.shape):
      batch = tuple(u_index[d] for d in scatter_dims)
      start = [0] * x.ndim
      for k, d in enumerate(dn.scatter_dims_to_operand_dims):
        start[d] = int(indices[batch][k])
      for od, idd in zip(batching, index_batching):
        start[od] = batch[idd]
      start = _window_start(x.shape, window, start, rule)
      if start is None:
        continue
      for k, d in zip(dn.update_window_dims, window_operand_dims):
        start[d] += u_index[k]
      target = tuple(start)
      out[target] = combine(out[target], updates[u_index])
    return out
  return ref


slicing = lax_slicing
GD, SD = lax_gather_scatter.GatherDimensionNumbers, lax_gather_scatter.ScatterDimensionNumbers

_ROWS = GD(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
_POINTS = GD(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
_WINDOWS = GD(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1))
_BATCHED = GD(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(1,),
              operand_batching_dims=(0,), start_indices_batching_dims=(0,))


def _gather(x_shape, idx_shape, dn, sizes, mode=None):
  return Config((x_shape, idx_shape), {"dimension_numbers": dn, "slice_sizes": sizes,
                                       "mode": mode})


_GATHER_CONFIGS = (
    _gather((4, 3), (5, 1), _ROWS, (1, 3)), _gather((4, 3), (5, 1), _ROWS, (1, 3), "clip"),
    _gather((4, 3), (5, 1), _ROWS, (1, 3), "fill"), _gather((4, 3), (2, 2), _POINTS, (1, 1)),
    _gather((4, 3), (2, 2), _WINDOWS, (2, 2), "fill"), _gather((4, 3), (0, 1), _ROWS, (1, 3)),
    _gather((4, 3), (1, 1), _ROWS, (1, 3)), _gather((3, 4), (3, 1), _BATCHED, (1, 2)),
    _gather((0, 3), (2, 1), GD(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0,)),
            (0, 3), "fill"))

_S_ROWS = SD(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
_S_POINTS = SD(update_window_dims=(), inserted_window_dims=(0, 1),
               scatter_dims_to_operand_dims=(0, 1))
_S_WINDOWS = SD(update_window_dims=(1, 2), inserted_window_dims=(),
                scatter_dims_to_operand_dims=(0, 1))


def _scatter(x_shape, idx_shape, u_shape, dn, mode=None):
  return Config((x_shape, idx_shape, u_shape), {"dimension_numbers": dn, "mode": mode})


# A plain scatter of duplicate indices or overlapping windows depends on the order: avoided.
_SET_SCATTER_CONFIGS = (
    _scatter((4, 3), (3, 1), (3, 3), _S_ROWS), _scatter((4, 3), (3, 1), (3, 3), _S_ROWS, "clip"),
    _scatter((4, 3), (3, 2), (3,), _S_POINTS), _scatter((4, 3), (0, 1), (0, 3), _S_ROWS),
    _scatter((4, 3), (1, 1), (1, 3), _S_ROWS))
_SCATTER_CONFIGS = (
    _scatter((4, 3), (5, 1), (5, 3), _S_ROWS), _scatter((4, 3), (5, 1), (5, 3), _S_ROWS, "clip"),
    _scatter((4, 3), (3, 2), (3,), _S_POINTS), _scatter((4, 3), (2, 2), (2, 2, 2), _S_WINDOWS),
    _scatter((4, 3), (0, 1), (0, 3), _S_ROWS), _scatter((4, 3), (1, 1), (1, 3), _S_ROWS))


def index_maker(low, high):
  return lambda rng: (lambda shape, dtype: rng.integers(low, high, shape).astype(dtype))


def unique_rows(rng):
  """Distinct in-range row indices, at most 4 (so a plain scatter does not depend on order)."""
  def maker(shape, dtype):
    rows = rng.permutation(4)[:shape[0]]
    columns = [rng.integers(0, 3, shape[0]) for _ in range(shape[-1] - 1)]
    return np.stack([rows, *columns], -1).reshape(shape).astype(dtype)
  return maker


_SCATTERS = {"scatter": lambda a, b: b, "scatter_add": lambda a, b: a + b,
             "scatter_sub": lambda a, b: a - b, "scatter_mul": lambda a, b: a * b,
             "scatter_min": np.minimum, "scatter_max": np.maximum}
_SCATTER_PRIMS = {"scatter": "scatter_p", "scatter_add": "scatter_add_p",
                  "scatter_sub": "scatter_sub_p", "scatter_mul": "scatter_mul_p",
                  "scatter_min": "scatter_min_p", "scatter_max": "scatter_max_p"}
_SCATTER_INTS = by_dtype(f=default, c=default, i=small_int, u=small_int, b=boolean)

SLICING = [
    Spec("slice", slicing.slice_p, lambda x, **p: slicing.slice(x, **p), native(ref_slice),
         (arith,), EVERY,
         tuple(Config((shape,), {"start_indices": b, "limit_indices": e, "strides": s})
               for shape, b, e, s in [((5,), (1,), (4,), None), ((4, 3), (1, 0), (4, 2), (2, 1)),
                                      ((5,), (2,), (2,), None), ((), (), (), None),
                                      ((0, 3), (0, 1), (0, 3), None), ((1,), (0,), (1,), (1,)),
                                      ((6,), (0,), (6,), (4,))]),
         grad_order=2, linear=(0,),
         bad_configs=(Config(((5,),), {"start_indices": (3,), "limit_indices": (2,),
                                       "strides": None}),)),
    Spec("dynamic_slice", slicing.dynamic_slice_p,
         lambda x, *idx, slice_sizes: slicing.dynamic_slice(x, idx, slice_sizes),
         native(ref_dynamic_slice), (arith, index_maker(-6, 7), index_maker(-6, 7)), EVERY,
         configs(((4, 3), (), ()), params=[{"slice_sizes": (2, 2)}, {"slice_sizes": (4, 0)},
                                             {"slice_sizes": (1, 1)}, {"slice_sizes": (4, 3)}]) +
         configs(((0, 3), (), ()), params=[{"slice_sizes": (0, 2)}]),
         arg_dtypes=lambda d: (d, I32, I32), weak_args=(0,), grad_order=2, linear=(0,)),
    Spec("dynamic_update_slice", slicing.dynamic_update_slice_p,
         lambda x, u, *idx: slicing.dynamic_update_slice(x, u, idx),
         native(ref_dynamic_update_slice),
         (arith, arith, index_maker(-6, 7), index_maker(-6, 7)), EVERY,
         configs(((4, 3), (2, 2), (), ()), ((4, 3), (4, 3), (), ()), ((4, 3), (0, 2), (), ()),
                 ((1, 1), (1, 1), (), ()), ((0, 3), (0, 1), (), ())),
         arg_dtypes=lambda d: (d, d, I32, I32), weak_args=None, grad_order=2, linear=(0, 1)),
    Spec("gather", lax_gather_scatter.gather_p,
         lambda x, idx, **p: lax_gather_scatter.gather(x, idx, **p),
         ref_gather, (arith, index_maker(-2, 6)), EVERY, _GATHER_CONFIGS,
         arg_dtypes=lambda d: (d, I32), weak_args=None, grad_order=2, linear=(0,)),
    *[Spec(name, getattr(lax_gather_scatter, _SCATTER_PRIMS[name]),
           functools.partial(lambda x, idx, u, fn, **p: fn(x, idx, u, **p),
                             fn=getattr(lax_gather_scatter, name)),
           native(_scatter_ref(combine)),
           (_SCATTER_INTS, unique_rows if name == "scatter" else index_maker(-1, 5),
            _SCATTER_INTS), dtypes, _SET_SCATTER_CONFIGS if name == "scatter" else _SCATTER_CONFIGS,
           arg_dtypes=lambda d: (d, I32, d), weak_args=None,
           tol={**TRANSCENDENTAL_TOL, F16: 5e-3, BF16: 5e-2}, grad_order=2,
           linear=(0, 2) if name in ("scatter_add", "scatter_sub") else ())
      for name, combine, dtypes in [
          ("scatter", _SCATTERS["scatter"], EVERY),
          ("scatter_add", _SCATTERS["scatter_add"], NUMERIC),
          ("scatter_sub", _SCATTERS["scatter_sub"], NUMERIC),
          ("scatter_mul", _SCATTERS["scatter_mul"], NUMERIC),
          ("scatter_min", _SCATTERS["scatter_min"], EVERY),
          ("scatter_max", _SCATTERS["scatter_max"], EVERY)]],
    # scatter_mul promising unique_indices=True (distinct in-range rows, so the promise
    # holds): the only form JAX 0.10.2 differentiates in the updates (without it, its
    # rules raise NotImplementedError; test_ad_rules checks both).
    Spec("scatter_mul_unique", lax_gather_scatter.scatter_mul_p,
         lambda x, idx, u, **p: lax_gather_scatter.scatter_mul(x, idx, u, unique_indices=True, **p),
         native(_scatter_ref(_SCATTERS["scatter_mul"])),
         (_SCATTER_INTS, unique_rows, _SCATTER_INTS), NUMERIC, _SET_SCATTER_CONFIGS,
         arg_dtypes=lambda d: (d, I32, d), weak_args=None,
         tol={**TRANSCENDENTAL_TOL, F16: 5e-3, BF16: 5e-2}, grad_order=2),
]

# ----------------------------------------------------------------------------
# The table

SPECS = ELEMENTWISE + CONVERSIONS + DOT + STRUCTURAL + REDUCTIONS + CUMULATIVE + SORTING + SLICING
SPECS_BY_NAME = {s.name: s for s in SPECS}
assert len(SPECS_BY_NAME) == len(SPECS), "duplicate spec names"

# Where xjax knowingly differs from JAX 0.10.2: (test, spec name, dtype name) -> reason.
# The matching cases are marked xfail(strict=True), so a fix makes them fail loudly.
KNOWN_DIVERGENCES = {
    ("rejects_unlisted_dtypes", "add", "bool"):
        "lax.add accepts bool (as OR); JAX rejects it, and jnp.add relies on it",
    ("rejects_unlisted_dtypes", "mul", "bool"):
        "lax.mul accepts bool (as AND); JAX rejects it, and jnp.multiply relies on it",
}

# ----------------------------------------------------------------------------
# Known answers, printed by real JAX 0.10.2: (id, fun, args, expected)

nan, inf = np.nan, np.inf


def _a(values, dtype):
  with np.errstate(over="ignore"):
    return np.array(values, dtype=np.dtype(dtype))


def _to(dtype):
  return lambda x: lax.convert_element_type(x, dtype)


_I8_SHIFTED = _a([1, -8, 127, -128, 5], I8)
_U8_SHIFTED = _a([1, 200, 255, 128, 5], U8)
_I8_AMOUNTS = _a([0, 1, 7, 8, 9], I8)
_I8_OUT_OF_RANGE = _a([-1, 100, 3, 8, -128], I8)
_U8_AMOUNTS = _a([0, 7, 8, 9, 255], U8)

EXAMPLES = [
    # The Sharp Bits example: jnp.arange(254.0, 258.0).astype('uint8').
    ("convert_sharp_bits_uint8", _to(U8), (_a([254, 255, 256, 257], F32),),
     _a([254, 255, 255, 255], U8)),
    ("convert_f32_int32_saturates", _to(I32), (_a([nan, inf, -inf, 3e9, -3e9, 2.7, -2.7], F32),),
     _a([0, 2147483647, -2147483648, 2147483647, -2147483648, 2, -2], I32)),
    ("convert_f32_uint8_saturates", _to(U8), (_a([nan, inf, -inf, 300, -3, 2.7, -2.7], F32),),
     _a([0, 255, 0, 255, 0, 2, 0], U8)),
    ("convert_f32_uint32_saturates", _to(U32), (_a([nan, inf, -inf, 3e9, -3e9, 2.7, -2.7], F32),),
     _a([0, 4294967295, 0, 3000000000, 0, 2, 0], U32)),
    ("convert_f16_int16_saturates", _to(I16), (_a([nan, inf, -inf, 3e4, -3e4, 2.7, -2.7], F16),),
     _a([0, 32767, -32768, 30000, -30000, 2, -2], I16)),
    ("convert_bf16_int16_saturates", _to(I16), (_a([nan, inf, -inf, 3e4, -3e4, 2.7, -2.7], BF16),),
     _a([0, 32767, -32768, 29952, -29952, 2, -2], I16)),
    ("convert_f16_int32_infinities", _to(I32), (_a([-inf, inf, nan, -7e4, 7e4], F16),),
     _a([-2147483648, 2147483647, 0, -2147483648, 2147483647], I32)),
    ("convert_f16_uint32_infinities", _to(U32), (_a([-inf, inf, nan, -7e4, 7e4], F16),),
     _a([0, 4294967295, 0, 0, 4294967295], U32)),
    ("convert_complex_to_bool_reads_real_part", _to(BOOL),
     (_a([1j, 0, 2.7 - 1j, -3e9, complex(nan, 0)], C64),),
     _a([False, False, True, True, True], BOOL)),
    ("convert_int32_to_uint8_wraps", _to(U8), (_a([-1, 300, 70000], I32),), _a([255, 44, 112], U8)),
    ("convert_nan_to_bool_is_true", _to(BOOL), (_a([nan, -0.0], F32),), _a([True, False], BOOL)),
    ("shift_left_int8", lax.shift_left, (_I8_SHIFTED, _I8_AMOUNTS), _a([1, -16, -128, 0, 0], I8)),
    ("shift_right_arithmetic_int8", lax.shift_right_arithmetic, (_I8_SHIFTED, _I8_AMOUNTS),
     _a([1, -4, 0, -1, 0], I8)),
    ("shift_right_logical_int8", lax.shift_right_logical, (_I8_SHIFTED, _I8_AMOUNTS),
     _a([1, 124, 0, 0, 0], I8)),
    ("shift_left_int8_out_of_range", lax.shift_left, (_I8_SHIFTED, _I8_OUT_OF_RANGE),
     _a([0, 0, -8, 0, 0], I8)),
    ("shift_right_arithmetic_int8_out_of_range", lax.shift_right_arithmetic,
     (_I8_SHIFTED, _I8_OUT_OF_RANGE), _a([0, -1, 15, -1, 0], I8)),
    ("shift_right_logical_int8_out_of_range", lax.shift_right_logical,
     (_I8_SHIFTED, _I8_OUT_OF_RANGE), _a([0, 0, 15, 0, 0], I8)),
    ("shift_left_uint8_out_of_range", lax.shift_left, (_U8_SHIFTED, _U8_AMOUNTS),
     _a([1, 0, 0, 0, 0], U8)),
    ("shift_right_arithmetic_uint8_reads_sign_bit", lax.shift_right_arithmetic,
     (_U8_SHIFTED, _U8_AMOUNTS), _a([1, 255, 255, 255, 0], U8)),
    ("shift_right_logical_uint8_out_of_range", lax.shift_right_logical, (_U8_SHIFTED, _U8_AMOUNTS),
     _a([1, 1, 0, 0, 0], U8)),
    ("shift_left_uint32_out_of_range", lax.shift_left,
     (_a([1, 1, 1], U32), _a([31, 32, 4294967295], U32)), _a([2147483648, 0, 0], U32)),
    ("rem_int_sign_of_dividend", lax.rem, (_a([-7, 7, -7, 7], I32), _a([3, -3, -3, 3], I32)),
     _a([-1, 1, -1, 1], I32)),
    ("rem_float_sign_of_dividend", lax.rem, (_a([-7, 7, -7, 7], F32), _a([3, -3, -3, 3], F32)),
     _a([-1, 1, -1, 1], F32)),
    ("div_int_truncates", lax.div, (_a([-7, 7, -7, 7], I32), _a([3, -3, -3, 3], I32)),
     _a([-2, -2, 2, 2], I32)),
    ("div_int8_by_zero_and_overflow", lax.div, (_a([-7, 7, -128], I8), _a([0, 0, -1], I8)),
     _a([-1, -1, -128], I8)),
    ("rem_int8_by_zero_and_overflow", lax.rem, (_a([-7, 7, -128], I8), _a([0, 0, -1], I8)),
     _a([-7, 7, 0], I8)),
    ("div_uint8_by_zero", lax.div, (_a([5, 0, 255], U8), _a([0, 0, 0], U8)),
     _a([255, 255, 255], U8)),
    ("rem_uint8_by_zero", lax.rem, (_a([5, 0, 255], U8), _a([0, 0, 0], U8)), _a([5, 0, 255], U8)),
    ("round_away_from_zero", lax.round, (_a([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997], F32),),
     _a([1, 2, 3, -1, -3, 0], F32)),
    ("round_to_nearest_even", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
     (_a([0.5, 1.5, 2.5, -0.5, -2.5], F32),), _a([0, 2, 2, -0.0, -2], F32)),
    ("pow_int32_exponent", lax.pow, (_a([2, 3, 0, -2, 2], F32), _a([3, -2, -1, 3, 0], I32)),
     _a([8, 1 / 9, inf, -8, 1], F32)),
    ("pow_float_exponent", lax.pow, (_a([0, -2, 2, -8], F32), _a([0, 2, 0.5, 1 / 3], F32)),
     _a([1, 4, np.sqrt(2), nan], F32)),
    ("integer_pow_negative_exponent", lambda x: lax.integer_pow(x, -2), (_a([2, 0, -4], F32),),
     _a([0.25, inf, 0.0625], F32)),
    ("integer_pow_int8_wraps", lambda x: lax.integer_pow(x, 5), (_a([3, -3, 100], I8),),
     _a([-13, 13, 0], I8)),
    ("population_count_int8", lax.population_count, (_a([-1, 0, 7], I8),), _a([8, 0, 3], I8)),
    ("population_count_uint32", lax.population_count, (_a([0, 1, 4294967295], U32),),
     _a([0, 1, 32], U32)),
    ("clz_int8", lax.clz, (_a([-1, 0, 7], I8),), _a([0, 8, 5], I8)),
    ("clz_int32", lax.clz, (_a([0, 1, -1], I32),), _a([32, 31, 0], I32)),
    ("clz_uint32", lax.clz, (_a([1, 0, 7], U32),), _a([31, 32, 29], U32)),
    ("neg_int8_min_wraps", lax.neg, (_a([-128, 127], I8),), _a([-128, -127], I8)),
    ("abs_int8_min_wraps", lax.abs, (_a([-128, -5], I8),), _a([-128, 5], I8)),
    ("sign_float_specials", lax.sign, (_a([-0.0, 0.0, nan, -inf, 2.5], F32),),
     _a([-0.0, 0, nan, -1, 1], F32)),
    ("sign_uint8", lax.sign, (_a([0, 3, 255], U8),), _a([0, 1, 1], U8)),
    ("sign_complex", lax.sign, (_a([3 + 4j, 0], C64),), _a([0.6 + 0.8j, 0], C64)),
    ("abs_complex_is_real", lax.abs, (_a([3 + 4j, -1j], C64),), _a([5, 1], F32)),
    ("atan2_signed_zeros", lax.atan2,
     (_a([0.0, -0.0, 0.0, -0.0, 1, -1], F32), _a([0.0, 0.0, -0.0, -0.0, 0, 0], F32)),
     _a([0, -0.0, np.pi, -np.pi, np.pi / 2, -np.pi / 2], F32)),
    ("atan2_complex", lax.atan2, (_a([1 + 1j], C64), _a([2 - 1j], C64)),
     _a([0.2940013 + 0.64123726j], C64)),
    ("max_nan_propagates", lax.max, (_a([nan, 1.0, 0.0], F32), _a([1.0, nan, -0.0], F32)),
     _a([nan, nan, 0], F32)),
    ("min_nan_propagates", lax.min, (_a([nan, 1.0], F32), _a([1.0, nan], F32)),
     _a([nan, nan], F32)),
    ("max_complex_lexicographic", lax.max,
     (_a([1 + 5j, 2, 1 + 1j, 3 - 1j], C64), _a([1 + 2j, 1 + 9j, 1 + 1j, 3 + 1j], C64)),
     _a([1 + 5j, 2, 1 + 1j, 3 + 1j], C64)),
    ("eq_with_nan", lax.eq, (_a([nan, 1.0], F32), _a([nan, 1.0], F32)), _a([False, True], BOOL)),
    ("ne_with_nan", lax.ne, (_a([nan, 1.0], F32), _a([nan, 1.0], F32)), _a([True, False], BOOL)),
    ("lt_with_nan", lax.lt, (_a([nan, 1.0, 0.0], F32), _a([1.0, nan, nan], F32)),
     _a([False, False, False], BOOL)),
    ("ge_with_nan", lax.ge, (_a([nan, 1.0], F32), _a([1.0, nan], F32)), _a([False, False], BOOL)),
    ("is_finite_float16", lax.is_finite, (_a([inf, nan, 1.0, -inf, 65504], F16),),
     _a([False, False, True, False, True], BOOL)),
    ("nextafter_float32", lax.nextafter, (_a([1.0, 0.0, 1.0], F32), _a([2.0, -1.0, 1.0], F32)),
     _a([np.nextafter(np.float32(1), np.float32(2)), -1e-45, 1.0], F32)),
    ("nextafter_float16_nan", lax.nextafter, (_a([0.0, nan, 1.0], F16), _a([1.0, 1.0, nan], F16)),
     _a([6e-08, nan, nan], F16)),
    ("erf_inv_bounds", lax.erf_inv, (_a([-1, 1, 0.5, 2], F32),),
     _a([-inf, inf, 0.47693628, nan], F32)),
    ("lgamma_poles", lax.lgamma, (_a([0, -1, 0.5, -2.5], F32),),
     _a([inf, inf, 0.5723648, -0.0562439], F32)),
    ("digamma_poles", lax.digamma, (_a([0, -1, 0.5, -2.5], F32),),
     _a([nan, nan, -1.96351, 1.1031562], F32)),
    ("logistic_saturates", lax.logistic, (_a([-100.0, 100.0], F32),), _a([0.0, 1.0], F32)),
    ("select_n_int32_predicate", lax.select_n,
     (_a([2, 0, 1], I32), _a([0, 0, 0], F32), _a([1, 1, 1], F32), _a([2, 2, 2], F32)),
     _a([2, 0, 1], F32)),
    ("select_n_bool_predicate", lax.select_n,
     (_a([True, False], BOOL), _a([0, 0], F32), _a([1, 1], F32)), _a([1, 0], F32)),
    ("select_n_int8_predicate", lax.select_n, (_a([1, 0], I8), _a([0, 0], F32), _a([1, 1], F32)),
     _a([1, 0], F32)),
    ("clamp_scalar_bounds", lax.clamp, (_a(0, F32), _a([-1, 0.5, 3, nan], F32), _a(2, F32)),
     _a([0, 0.5, 2, nan], F32)),
    ("clamp_bool", lax.clamp, (_a(False, BOOL), _a([True, False], BOOL), _a(True, BOOL)),
     _a([True, False], BOOL)),
    ("reduce_precision_flushes_subnormals", lambda x: lax.reduce_precision(x, 5, 10),
     (_a([1.1, 70000, 1e-6, 3.3e-5], F32),), _a([1.0996094, inf, 0, 0], F32)),
    ("reduce_precision_e5m2", lambda x: lax.reduce_precision(x, 5, 2),
     (_a([1.1, 70000, 1e-6, 3.3e-5, 57344, 61440], F32),), _a([1, inf, 0, 0, 57344, inf], F32)),
    ("bitcast_f32_to_int32", lambda x: lax.bitcast_convert_type(x, I32), (_a([1.0], F32),),
     _a([1065353216], I32)),
    ("bitcast_f32_to_uint8", lambda x: lax.bitcast_convert_type(x, U8), (_a([1.0], F32),),
     _a([[0, 0, 128, 63]], U8)),
    ("complex_from_parts", lax.complex, (_a([1, 2], F32), _a([3, -4], F32)),
     _a([1 + 3j, 2 - 4j], C64)),
    ("conj_of_real_is_complex", lax.conj, (_a([1, 2], F32),), _a([1, 2], C64)),
    ("exp_complex", lax.exp, (_a([1 + 1j, -1 + 0j], C64),), _a([np.exp(1 + 1j), np.exp(-1)], C64)),
    ("log_complex", lax.log, (_a([1 + 1j, -1 + 0j], C64),), _a([np.log(1 + 1j), np.pi * 1j], C64)),
    ("sqrt_complex", lax.sqrt, (_a([1 + 1j, -1 + 0j], C64),), _a([np.sqrt(1 + 1j), 1j], C64)),
    ("expm1_complex", lax.expm1, (_a([1 + 1j], C64),), _a([0.46869382 + 2.2873552j], C64)),
    ("log1p_complex", lax.log1p, (_a([1 + 1j], C64),), _a([0.804719 + 0.4636476j], C64)),
    ("exp2_complex", lax.exp2, (_a([1 + 1j], C64),), _a([1.5384778 + 1.2779225j], C64)),
    ("real_imag", lambda x: (lax.real(x), lax.imag(x)), (_a([1 + 2j], C64),),
     (_a([1], F32), _a([2], F32))),
    ("dot_general_mixed_int8_int32", lambda x, y: lax.dot_general(x, y, (((0,), (0,)), ((), ()))),
     (_a([100, 100], I8), _a([3, 2], I32)), _a(500, I32)),
    ("dot_general_int8_wraps", lambda x, y: lax.dot_general(x, y, (((0,), (0,)), ((), ()))),
     (_a([100, 100], I8), _a([3, 2], I8)), _a(-12, I8)),
]
EXAMPLES_BY_ID = {e[0]: e for e in EXAMPLES}
assert len(EXAMPLES_BY_ID) == len(EXAMPLES), "duplicate example ids"
