"""Reference evaluation of NumPy ufuncs with mpmath, for accuracy tests on the complex plane.

`vectorize_with_mpmath` is `np.vectorize` over mpmath numbers: NumPy floats (float32, float64
and their complex types) enter as mpmath numbers of a context whose precision is the float's
mantissa width, the function runs with optional extra precision, and the results come back
rounded to that width. `numpy_with_mpmath` holds such vectorized functions for the ufuncs the
accuracy tests compare (`sqrt`, `log1p`, `arcsin`, ...), with numpy's branch-cut and infinity
conventions, and `normalize`, which truncates a result and its reference to the bits in which
two references agree.

Mirrors the semantics of JAX's test utilities of the same names (`jax._src.test_util`).
"""
from __future__ import annotations

import numpy as np

_FLOAT_OF_COMPLEX = {"complex64": "float32", "complex128": "float64"}


class vectorize_with_mpmath(np.vectorize):
  """`np.vectorize(pyfunc)` evaluated with mpmath.

  Args (constructor):
    pyfunc: a function of mpmath numbers.
    mpmath: the mpmath module (keyword, required).
    extra_prec_multiplier: extra working precision, as a multiple of the float's precision.
    extra_prec: extra working precision in bits.
    Other arguments are `np.vectorize`'s.

  Calling it converts NumPy array and scalar arguments to mpmath numbers (exactly), evaluates
  with ``prec * extra_prec_multiplier + extra_prec`` extra bits, and converts mpmath results
  back to the arguments' NumPy dtype (other results are returned as they are).
  """

  map_float_to_complex = dict(float16="complex32", float32="complex64",
                              float64="complex128", float128="complex256",
                              longdouble="clongdouble")
  map_complex_to_float = {v: k for k, v in map_float_to_complex.items()}
  float_prec = dict(float32=24, float64=53)
  # Bounds on `exp + bitcount` of an mpmath float: below, the value becomes zero; above, a
  # signed infinity.
  float_minexp = dict(float16=-14, float32=-126, float64=-1022, float128=-16382)
  float_maxexp = dict(float16=16, float32=128, float64=1024, float128=16384)

  def __init__(self, *args, **kwargs):
    mpmath = kwargs.pop("mpmath", None)
    if mpmath is None:
      raise ValueError("vectorize_with_mpmath: no mpmath argument specified")
    self.extra_prec_multiplier = kwargs.pop("extra_prec_multiplier", 0)
    self.extra_prec = kwargs.pop("extra_prec", 0)
    self.mpmath = mpmath
    self.contexts, self.contexts_inv = {}, {}
    for fmt, prec in self.float_prec.items():
      ctx = mpmath.mp.clone()
      ctx.prec = prec
      self.contexts[fmt] = ctx
      self.contexts_inv[ctx] = fmt
    super().__init__(*args, **kwargs)

  def get_context(self, x):
    """The mpmath context of the precision of `x`'s (real) dtype."""
    if isinstance(x, (np.ndarray, np.floating, np.complexfloating)):
      name = str(x.dtype)
      return self.contexts[self.map_complex_to_float.get(name, name)]
    raise NotImplementedError(f"get mpmath context from {type(x).__name__} instance")

  def nptomp(self, x):
    """A NumPy float, complex or array of them as mpmath number(s), exactly."""
    if isinstance(x, np.ndarray):
      out = np.empty(x.shape, dtype=object)
      for index, item in np.ndenumerate(x):
        out[index] = self.nptomp(item)
      return out
    if isinstance(x, np.floating):
      ctx = self.get_context(x)
      # A float32/float64 is exact as a Python float, and its mantissa fits the context's
      # precision, so the conversion does not round.
      return ctx.make_mpf(self.mpmath.libmp.from_float(float(x), ctx.prec, ctx.rounding))
    if isinstance(x, np.complexfloating):
      re, im = self.nptomp(x.real), self.nptomp(x.imag)
      return re.context.make_mpc((re._mpf_, im._mpf_))
    raise NotImplementedError(f"convert {type(x).__name__} instance to mpmath number type")

  def _real_to_np(self, x, fmt):
    ctx = x.context
    dtype = np.dtype(fmt).type
    if ctx.isnan(x):
      return dtype(np.nan)
    if ctx.isinf(x):
      return dtype(-np.inf if x._mpf_[0] else np.inf)
    sign, man, exp, bc = self.mpmath.libmp.normalize(*x._mpf_, ctx.prec, ctx.rounding)
    if exp + bc < self.float_minexp[fmt]:
      return dtype(0.0)  # mpmath has no signed zero
    if exp + bc > self.float_maxexp[fmt]:
      return dtype(-np.inf if sign else np.inf)
    return np.ldexp(dtype(-man if sign else man), exp)

  def mptonp(self, x):
    """An mpmath number, or an object array of them, as NumPy value(s) of the dtype of its
    context's precision (rounded to that precision)."""
    if isinstance(x, np.ndarray) and x.dtype.kind == "O":
      first = x.flat[0]
      ctx = first.context
      fmt = self.contexts_inv[ctx]
      if isinstance(first, ctx.mpc):
        dtype = np.dtype(self.map_float_to_complex[fmt])
      elif isinstance(first, ctx.mpf):
        dtype = np.dtype(fmt)
      else:
        raise NotImplementedError(f"convert {type(first)} instance to numpy floating point type")
      out = np.empty(x.shape, dtype=dtype)
      for index, item in np.ndenumerate(x):
        out[index] = self.mptonp(item)
      return out
    if isinstance(x, self.mpmath.ctx_mp_python.mpnumeric):
      ctx = x.context
      fmt = self.contexts_inv[ctx]
      if isinstance(x, ctx.mpc):
        parts = np.array([self._real_to_np(x.real, fmt), self._real_to_np(x.imag, fmt)],
                         dtype=fmt)
        return parts.view(self.map_float_to_complex[fmt])[0]
      if isinstance(x, ctx.mpf):
        return self._real_to_np(x, fmt)
    raise NotImplementedError(f"convert {type(x)} instance to numpy floating point type")

  def _is_mp(self, r):
    return ((isinstance(r, np.ndarray) and r.dtype.kind == "O")
            or isinstance(r, self.mpmath.ctx_mp_python.mpnumeric))

  def __call__(self, *args, **kwargs):
    mp_args, context = [], None
    for a in args:
      if isinstance(a, (np.ndarray, np.floating, np.complexfloating)):
        mp_args.append(self.nptomp(a))
        ctx = self.get_context(a)
        assert context is None or context is ctx, "arguments of different precisions"
        context = ctx
      else:
        mp_args.append(a)
    extra = int(context.prec * self.extra_prec_multiplier) + self.extra_prec
    with context.extraprec(extra):
      result = super().__call__(*mp_args, **kwargs)
    if isinstance(result, tuple):
      return tuple(self.mptonp(r) if self._is_mp(r) else r for r in result)
    return self.mptonp(result) if self._is_mp(result) else result


class numpy_with_mpmath:
  """NumPy-named functions (`sqrt`, `log1p`, `arcsin`, `sign`, ...) evaluated with mpmath on
  NumPy arrays: each attribute is a `vectorize_with_mpmath`.

  Results follow NumPy's conventions where mpmath's differ: on branch cuts (e.g. ``arcsin``
  of a real above 1 takes the conjugate of mpmath's value) and at complex infinities (the
  limits C99 gives). `normalize(exact, reference, value)` truncates `reference` and `value`
  to the leading bits in which `reference` agrees with `exact` (relative to ``abs(exact)``),
  so that comparing the results ignores the bits the reference itself gets wrong.

  Args (constructor):
    mpmath: the mpmath module.
    extra_prec_multiplier, extra_prec: working precision, as for `vectorize_with_mpmath`.
  """

  _provides = [
      "abs", "absolute", "sqrt", "exp", "expm1", "exp2", "log", "log1p", "log10", "log2",
      "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
      "arccosh", "arctanh", "square", "positive", "negative", "conjugate", "sign", "sinc",
      "normalize",
  ]
  _mp_names = dict(abs="absmin", absolute="absmin", log="ln", arcsin="asin", arccos="acos",
                   arctan="atan", arcsinh="asinh", arccosh="acosh", arctanh="atanh")

  def __init__(self, mpmath, extra_prec_multiplier=0, extra_prec=0):
    self.mpmath = mpmath
    for name in self._provides:
      op = getattr(self, name, None)
      if op is None:
        mp_name = self._mp_names.get(name, name)
        op = (lambda mp_name: lambda x: getattr(x.context, mp_name)(x))(mp_name)
      setattr(self, name, vectorize_with_mpmath(
          op, mpmath=mpmath, extra_prec_multiplier=extra_prec_multiplier,
          extra_prec=extra_prec))

  # -- the functions below take and return mpmath numbers

  @staticmethod
  def _mpc(ctx, re, im):
    return ctx.make_mpc((ctx.convert(re)._mpf_, ctx.convert(im)._mpf_))

  def square(self, x):
    return x * x

  def positive(self, x):
    return x

  def negative(self, x):
    return -x

  def expm1(self, x):
    return x.context.expm1(x)

  def log2(self, x):
    return x.context.ln(x) / x.context.ln2

  def log10(self, x):
    return x.context.ln(x) / x.context.ln10

  def exp2(self, x):
    return x.context.exp(x * x.context.ln2)

  def sqrt(self, x):
    ctx = x.context
    if isinstance(x, ctx.mpc) and ctx.isinf(x.imag):
      return self._mpc(ctx, ctx.inf, x.imag)  # sqrt(a +- inf j) = inf +- inf j
    return ctx.sqrt(x)

  def log1p(self, x):
    ctx = x.context
    if isinstance(x, ctx.mpc) and ctx.isinf(x.real) and ctx.isinf(x.imag):
      # log(+-inf +- inf j) = inf + (pi/4 or 3pi/4, signed as the imaginary part) j
      angle = ctx.pi / 4 if x.real > 0 else 3 * ctx.pi / 4
      return self._mpc(ctx, ctx.inf, angle if x.imag > 0 else -angle)
    return ctx.log1p(x)

  def _tan_like(self, x, fn):
    ctx = x.context
    if isinstance(x, ctx.mpc):
      if ctx.isinf(x.imag) and not ctx.isnan(x.real):
        return self._mpc(ctx, ctx.zero, ctx.one if x.imag > 0 else -ctx.one)
      if ctx.isinf(x.real) and ctx.isfinite(x.imag):
        return self._mpc(ctx, ctx.nan, ctx.nan)
    return fn(x)

  def tan(self, x):
    return self._tan_like(x, x.context.tan)

  def tanh(self, x):
    return self._tan_like(x, x.context.tanh)

  def arcsin(self, x):
    ctx = x.context
    if isinstance(x, ctx.mpc):
      if ctx.isinf(x.real):
        re = (ctx.pi / (4 if ctx.isinf(x.imag) else 2)) * (-1 if x.real < 0 else 1)
        return self._mpc(ctx, re, -ctx.inf if x.imag < 0 else ctx.inf)
      if ctx.isinf(x.imag):
        return self._mpc(ctx, ctx.zero, x.imag)
      if x.real > 1 and x.imag == 0:  # numpy's side of the branch cut
        return ctx.asin(x).conjugate()
    return ctx.asin(x)

  def arccos(self, x):
    ctx = x.context
    if isinstance(x, ctx.mpc):
      if ctx.isinf(x.imag):
        if ctx.isinf(x.real):
          re = ctx.pi / 4 if x.real > 0 else 3 * ctx.pi / 4
        else:
          re = ctx.pi / 2
        return self._mpc(ctx, re, ctx.inf if x.imag < 0 else -ctx.inf)
      if ctx.isinf(x.real):
        re = ctx.zero if x.real > 0 else ctx.pi
        return self._mpc(ctx, re, ctx.inf if x.imag < 0 else -ctx.inf)
      if x.imag == 0 and x.real > 1:  # numpy's side of the branch cut
        return -ctx.acos(x)
    return ctx.acos(x)

  def arcsinh(self, x):
    ctx = x.context
    if isinstance(x, ctx.mpc):
      if ctx.isinf(x.imag):
        im = (ctx.pi / (4 if ctx.isinf(x.real) else 2)) * (-1 if x.imag < 0 else 1)
        return self._mpc(ctx, -ctx.inf if x.real < 0 else ctx.inf, im)
      if ctx.isinf(x.real):
        return self._mpc(ctx, x.real, ctx.zero)
      if x.real == 0 and x.imag < -1:  # numpy's side of the branch cut
        return (-ctx.asinh(x)).conjugate()
    return ctx.asinh(x)

  def arccosh(self, x):
    ctx = x.context
    if isinstance(x, ctx.mpc):
      sign = -1 if x.imag < 0 else 1
      if ctx.isinf(x.real):
        if ctx.isinf(x.imag):
          im = (3 if x.real < 0 else 1) * sign * ctx.pi / 4
        else:
          im = sign * ctx.pi if x.real < 0 else ctx.zero
        return self._mpc(ctx, ctx.inf, im)
      if ctx.isinf(x.imag):
        return self._mpc(ctx, ctx.inf, sign * ctx.pi / 2)
    return ctx.acosh(x)

  def arctan(self, x):
    ctx = x.context
    if isinstance(x, ctx.mpc):
      if ctx.isinf(x.real) or ctx.isinf(x.imag):
        return self._mpc(ctx, -ctx.pi / 2 if x.real < 0 else ctx.pi / 2, ctx.zero)
      if x.real == 0 and x.imag < -1:  # numpy's side of the branch cut
        return (-ctx.atan(x)).conjugate()
    return ctx.atan(x)

  def arctanh(self, x):
    ctx = x.context
    if isinstance(x, ctx.mpc):
      if ctx.isinf(x.real) or ctx.isinf(x.imag):
        return self._mpc(ctx, ctx.zero, -ctx.pi / 2 if x.imag < 0 else ctx.pi / 2)
      if x.imag == 0 and x.real > 1:  # numpy's side of the branch cut
        return ctx.atanh(x).conjugate()
    return ctx.atanh(x)

  def normalize(self, exact, reference, value):
    """`reference` and `value` truncated to the bits in which `reference` agrees with `exact`,
    all aligned to ``abs(exact)`` (per part, for complex numbers); unchanged where any of
    them is not finite."""
    ctx = exact.context
    scale = abs(exact)
    if isinstance(exact, ctx.mpc):
      rr, rv = _truncate_to_agreement(ctx, scale, exact.real, reference.real, value.real)
      ir, iv = _truncate_to_agreement(ctx, scale, exact.imag, reference.imag, value.imag)
      return ctx.make_mpc((rr._mpf_, ir._mpf_)), ctx.make_mpc((rv._mpf_, iv._mpf_))
    if isinstance(exact, ctx.mpf):
      return _truncate_to_agreement(ctx, scale, exact, reference, value)
    raise TypeError(f"normalize: not an mpmath number: {exact!r}")


def _truncate_to_agreement(ctx, scale, exact, reference, value):
  """`reference` and `value` as integers over a common binary exponent (the least of the four
  numbers' exponents), cut at the first bit where `reference` and `exact` differ, counted
  from the top of the widest mantissa; returned as numbers of that many leading bits (scaled
  by a power of two shared by both)."""
  if not (ctx.isfinite(exact) and ctx.isfinite(reference) and ctx.isfinite(value)):
    return reference, value
  parts = [x._mpf_ for x in (scale, exact, reference, value)]  # (sign, man, exp, bc)
  base = min(p[2] for p in parts)
  mans = [p[1] << (p[2] - base) for p in parts]
  width = max(m.bit_length() for m in mans)
  e_bits = format(mans[1], f"0{width}b") if width else ""
  r_bits = format(mans[2], f"0{width}b") if width else ""
  agree = 0
  for a, b in zip(e_bits, r_bits):
    if a != b:
      break
    agree += 1
  drop = width - agree

  def cut(sign, man):
    man >>= drop
    if not man:
      return -ctx.zero if sign else ctx.zero
    return ctx.make_mpf((sign, man, -agree, man.bit_length()))
  return cut(parts[2][0], mans[2]), cut(parts[3][0], mans[3])
