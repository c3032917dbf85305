"""What the linear-algebra primitives share: their shape rules, batching, and
the lowering to LAPACK's typed-FFI kernels.

On CPU each primitive lowers, as JAX's do, to a ``stablehlo.custom_call`` of
one of the LAPACK kernels jaxlib ships (``lapack_spotrf_ffi``,
``lapack_zgesdd_ffi``, ...): the same kernels, so the same numbers. The
kernels take leading batch dimensions themselves and expect column-major
matrices, which the custom call's operand and result layouts say.
"""
from __future__ import annotations

import numpy as np

from xjax._src import backend
from xjax._src import core
from xjax._src import dtypes
from xjax._src import stablehlo as hlo
from xjax._src.interpreters import batching
from xjax._src.interpreters.lowering import Value
from xjax._src.lax import elementwise as ew
from xjax._src.lax import structural
from xjax._src.lax.utils import _KIND_WORDS, KINDS, standard_primitive

# ----------------------------------------------------------------------------
# Shape rules and primitives


def batch_and_core_shapes(name: str, avals, ranks, supports_batching: bool = True):
  """Splits each operand's shape into batch dims and its last `rank` dims (JAX's errors)."""
  batch_dims, dims = [], []
  for i, (rank, aval) in enumerate(zip(ranks, avals)):
    shape = tuple(aval.shape)
    if len(shape) < rank:
      raise TypeError(f"Input {i} to {name} must have rank at least {rank}, but got "
                      f"shape={shape}")
    if not supports_batching and len(shape) != rank:
      raise TypeError(f"Input {i} to {name} must have a rank of exactly {rank}, but got "
                      f"shape={shape}")
    batch_dims.append(shape[:len(shape) - rank])
    dims.append(shape[len(shape) - rank:])
  if any(len(b) != len(batch_dims[0]) for b in batch_dims):
    raise TypeError(f"All inputs to {name} must have the same number of batch dimensions, "
                    f"but got {[len(b) for b in batch_dims]} batch dimensions for the inputs.")
  return batch_dims[0], dims


def linalg_primitive(name: str, ranks, shape_rule, lowering, *, dtype_rule=None,
                     kinds=None, multiple_results: bool = False,
                     supports_batching: bool = True, pp_params=None) -> core.Primitive:
  """A primitive on stacks of matrices (or vectors): rank-`ranks` core operands
  with common leading batch dims.

  `shape_rule(*core_shapes, **params)` returns the core output shape(s);
  `dtype_rule(*dtypes, **params)` the output dtype(s) (default: the first
  operand's, for every output); `kinds` the accepted dtype kind per operand
  (default ``inexact`` for all, as lax.linalg accepts). Batching moves every
  batch axis to the front, where the kernels take leading batch dims.
  """
  kinds = kinds or ("inexact",) * len(ranks)

  def abstract_eval(*avals, **params):
    batch, dims = batch_and_core_shapes(name, avals, ranks, supports_batching)
    shapes = shape_rule(*dims, **params)  # JAX checks shapes before dtypes
    for i, (kind, aval) in enumerate(zip(kinds, avals)):
      if aval.dtype not in KINDS[kind]:  # JAX's linalg message names the position always
        raise TypeError(f"{name} does not accept dtype {aval.dtype.name} at position {i}. "
                        f"Accepted dtypes at position {i} are subtypes of {_KIND_WORDS[kind]}.")
    out_dtypes = (dtype_rule(*(a.dtype for a in avals), **params) if dtype_rule
                  else avals[0].dtype)
    if not multiple_results:
      return core.ShapedArray(batch + tuple(shapes), out_dtypes)
    if not isinstance(out_dtypes, (list, tuple)):
      out_dtypes = [out_dtypes] * len(shapes)
    return [core.ShapedArray(batch + tuple(s), d) for s, d in zip(shapes, out_dtypes)]

  prim = standard_primitive(name, abstract_eval, lowering, multiple_results, pp_params)
  if supports_batching:
    prim.def_batch(lambda axis_data, args, dims, **params:
                   batch_at_front(prim, axis_data, args, dims, **params))
  return prim


def batch_at_front(prim, axis_data, args, dims, **params):
  """Batching by a new leading batch dimension on every operand (broadcast if unbatched)."""
  args = [batching.bdim_at_front(x, d, axis_data.size) for x, d in zip(args, dims)]
  out = prim.bind(*args, **params)
  return (out, [0] * len(out)) if prim.multiple_results else (out, 0)


INEXACT = (frozenset(dtypes._float_dtypes) | frozenset(dtypes._complex_dtypes),
           "floating, complexfloating")
INT32 = (frozenset({np.dtype(np.int32)}), "int32")


def with_dtype_check(prim: core.Primitive, allowed) -> core.Primitive:
  """Checks operand dtypes before `prim`'s abstract eval, with JAX's linalg message
  (which names the position even for one operand). `allowed`: one
  ``(dtypes, words)`` pair per operand."""
  inner = prim.abstract_eval

  def abstract_eval(*avals, **params):
    for i, ((accepted, words), aval) in enumerate(zip(allowed, avals)):
      if aval.dtype not in accepted:
        raise TypeError(f"{prim.name} does not accept dtype {aval.dtype.name} at position "
                        f"{i}. Accepted dtypes at position {i} are subtypes of {words}.")
    return inner(*avals, **params)

  prim.def_abstract_eval(abstract_eval)
  return prim


# ----------------------------------------------------------------------------
# Matrix helpers in lax ops


def eye(dtype, shape):
  """A (possibly rectangular) identity matrix of `shape`, as JAX's ``lax._eye``."""
  rows = ew.add(structural.broadcasted_iota(np.int32, shape, 0),
                structural.full((), 0, np.int32))
  cols = structural.broadcasted_iota(np.int32, shape, 1)
  return ew.convert_element_type(ew.eq(rows, cols), dtype)




def T(x):
  """Swaps the last two axes."""
  nd = core.get_aval(x).ndim
  return structural.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def H(x):
  """The conjugate transpose over the last two axes."""
  return ew.conj(T(x)) if np.issubdtype(core.get_aval(x).dtype, np.complexfloating) else T(x)


def symmetrize(x):
  """(x + x^H) / 2: the Hermitian part of a stack of square matrices.

  A true division, as JAX's: integer and boolean matrices become floats
  (float32 for 32-bit and narrower ones).
  """
  total = ew.add(x, H(x))
  dtype = core.get_aval(total).dtype
  if not np.issubdtype(dtype, np.inexact):
    total = ew.convert_element_type(total, dtypes.to_inexact_dtype(dtype))
  return ew.div(total, structural.full((), 2, core.get_aval(total).dtype))


def _triangle_mask(shape, lower: bool, k: int = 0):
  n, m = shape[-2:]
  index = dtypes.default_int_dtype()  # int64 under x64, as JAX's masks
  rows = ew.add(structural.broadcasted_iota(index, (n, m), 0), structural.full((), k, index))
  cols = structural.broadcasted_iota(index, (n, m), 1)
  mask = ew.ge(rows, cols) if lower else ew.le(rows, cols)
  return structural.broadcast_in_dim(mask, tuple(shape), (len(shape) - 2, len(shape) - 1))


def tril(x, k: int = 0):
  """The lower triangle (on and below diagonal `k`) of a stack of matrices; zeros above."""
  aval = core.get_aval(x)
  return ew.select_n(_triangle_mask(aval.shape, True, k),
                     structural.full(aval.shape, 0, aval.dtype), x)


def triu(x, k: int = 0):
  """The upper triangle (on and above diagonal `k`); zeros below."""
  aval = core.get_aval(x)
  return ew.select_n(_triangle_mask(aval.shape, False, k),
                     structural.full(aval.shape, 0, aval.dtype), x)


def eye_like(x):
  """Identity matrices shaped like the stack `x` (square in its last two axes)."""
  aval = core.get_aval(x)
  n, m = aval.shape[-2:]
  index = dtypes.default_int_dtype()
  eye = ew.eq(structural.broadcasted_iota(index, (n, m), 0),
              structural.broadcasted_iota(index, (n, m), 1))
  eye = ew.convert_element_type(eye, aval.dtype)
  return structural.broadcast_in_dim(eye, aval.shape, (aval.ndim - 2, aval.ndim - 1))


# ----------------------------------------------------------------------------
# LAPACK custom calls

_LAPACK_PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


def lapack_target(base: str, dtype) -> str:
  """The name of the LAPACK kernel for `base` (e.g. 'potrf_ffi') on `dtype`."""
  name = np.dtype(dtype).name
  if name not in _LAPACK_PREFIX:
    raise NotImplementedError(f"Unsupported dtype {name}: LAPACK kernels take float32, "
                              "float64, complex64 and complex128.")
  return f"lapack_{_LAPACK_PREFIX[name]}{base}"


def char_attr(c: str) -> str:
  """A LAPACK character flag ('L', 'U', 'N', 'T', 'C', 'V', 'A', 'S', ...) as an FFI attribute."""
  return f"{ord(c)} : ui8"


def _layout(rank: int, column_major: bool) -> str:
  if column_major and rank >= 2:
    order = (rank - 2, rank - 1, *range(rank - 3, -1, -1))
  else:
    order = tuple(range(rank - 1, -1, -1))
  ty = f"tensor<{rank}xindex>" if rank else "tensor<0xindex>"
  return f"dense<[{', '.join(map(str, order))}]> : {ty}" if rank > 1 else (
      f"dense<0> : {ty}" if rank == 1 else f"dense<> : {ty}")


def lapack_call(ctx, base: str, dtype, operands, result_avals, attrs=None,
                operand_output_aliases=None, column_major: bool = True,
                operand_avals=None) -> list[Value]:
  """Emits a custom call of LAPACK kernel `base` for `dtype`; returns its results.

  `attrs` maps FFI attribute names to typed literals (``{"uplo": char_attr("L")}``).
  Operands and results of the largest operand rank are column-major matrices;
  the others use the default layout. `operand_output_aliases` maps operand
  index to result index (the kernel writes in place, as JAX lets it).
  `operand_avals` default to the equation's input avals.
  """
  backend.register_lapack_targets()
  target = lapack_target(base, dtype)
  avals_in = ctx.avals_in if operand_avals is None else operand_avals
  max_rank = max(len(a.shape) for a in avals_in)
  op_layouts = ", ".join(_layout(len(a.shape), column_major and len(a.shape) == max_rank)
                         for a in avals_in)
  res_layouts = ", ".join(_layout(len(a.shape), column_major and len(a.shape) == max_rank)
                          for a in result_avals)
  config = ", ".join(f"{k} = {v}" for k, v in sorted((attrs or {}).items()))
  parts = [f'api_version = 4 : i32', f"backend_config = {{{config}}}",
           f'call_target_name = "{target}"', f"operand_layouts = [{op_layouts}]"]
  if operand_output_aliases:
    single = len(result_avals) == 1
    aliases = ", ".join(
        f"#stablehlo.output_operand_alias<output_tuple_indices = "
        f"[{'' if single else out}], operand_index = {op}, operand_tuple_indices = []>"
        for op, out in sorted(operand_output_aliases.items()))
    parts.append(f"output_operand_aliases = [{aliases}]")
  parts.append(f"result_layouts = [{res_layouts}]")
  types = [hlo.aval_type(a) for a in result_avals]
  return ctx.op("stablehlo.custom_call", list(operands), types, ", ".join(parts))


def info_ok_or_nan(ctx, info: Value, batch_shape, result: Value, result_aval) -> Value:
  """`result` where the kernel's `info` is 0, NaN (in every element of that matrix) elsewhere."""
  i32 = hlo.tensor_type(batch_shape, np.int32)
  zero = ctx.op1("stablehlo.broadcast_in_dim", [ctx.constant(np.int32(0))], i32,
                 "broadcast_dimensions = array<i64>")
  ok = ctx.op1("stablehlo.compare", [info, zero], hlo.tensor_type(batch_shape, np.bool_),
               "comparison_direction = #stablehlo<comparison_direction EQ>, "
               "compare_type = #stablehlo<comparison_type SIGNED>")
  shape = tuple(result_aval.shape)
  ok = ctx.op1("stablehlo.broadcast_in_dim", [ok], hlo.tensor_type(shape, np.bool_),
               f"broadcast_dimensions = {hlo.i64_array(range(len(batch_shape)))}")
  nan_value = np.array(complex(np.nan, np.nan) if np.issubdtype(result_aval.dtype, np.complexfloating)
                       else np.nan, result_aval.dtype)
  nan = ctx.op1("stablehlo.broadcast_in_dim", [ctx.constant(nan_value)],
                hlo.aval_type(result_aval), "broadcast_dimensions = array<i64>")
  return ctx.op1("stablehlo.select", [ok, result, nan], hlo.aval_type(result_aval))
