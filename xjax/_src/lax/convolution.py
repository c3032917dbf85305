"""Convolutions: `conv_general_dilated` and the wrappers and shape helpers over it.

One primitive, `conv_general_dilated`, bilinear in (lhs, rhs). Its dimension
numbers name, for each operand, which axis is the batch (or output-feature),
which the feature (or input-feature) and which the spatial axes; the shape
rule works in that canonical (N, C, spatial...) order. Both transposes are
convolutions again: the lhs cotangent convolves the stride-dilated cotangent
with the spatially flipped kernel, the rhs cotangent convolves lhs with the
cotangent (feature groups there become batch groups and back).
"""
from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import NamedTuple, Union

import numpy as np

from xjax._src import core
from xjax._src import dtypes
from xjax._src import stablehlo as hlo
from xjax._src.interpreters import ad
from xjax._src.interpreters import batching
from xjax._src.interpreters import lowering
from xjax._src.lax import elementwise as ew
from xjax._src.lax import structural
from xjax._src.lax.dot import Precision, canonicalize_precision, dot_general
from xjax._src.lax.misc_ops import padtype_to_pads
from xjax._src.lax.utils import check_dtype_kind, same_dtypes, standard_primitive


class ConvDimensionNumbers(NamedTuple):
  """The batch, feature and spatial axes of a convolution's operands and result.

  Args:
    lhs_spec: ``(batch dim, feature dim, spatial dims...)`` of the input.
    rhs_spec: ``(out feature dim, in feature dim, spatial dims...)`` of the kernel.
    out_spec: ``(batch dim, feature dim, spatial dims...)`` of the result.

  Mirrors `jax.lax.ConvDimensionNumbers`.
  """
  lhs_spec: Sequence[int]
  rhs_spec: Sequence[int]
  out_spec: Sequence[int]


ConvGeneralDilatedDimensionNumbers = Union[tuple[str, str, str], ConvDimensionNumbers, None]


# ----------------------------------------------------------------------------
# Dimension numbers and shape helpers


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
  """`dimension_numbers` as a `ConvDimensionNumbers` of axis indices.

  Args:
    lhs_shape, rhs_shape: the operand shapes (of one rank).
    dimension_numbers: None (``NC...``, ``OI...``, ``NC...``: axes in order),
      a `ConvDimensionNumbers` (returned as it is), or three strings such as
      ``('NHWC', 'HWIO', 'NHWC')``.

  Returns:
    The `ConvDimensionNumbers`.

  Raises:
    TypeError: the ranks differ, or the strings are malformed.

  Mirrors `jax.lax.conv_dimension_numbers`.
  """
  if isinstance(dimension_numbers, ConvDimensionNumbers):
    return dimension_numbers
  if len(lhs_shape) != len(rhs_shape):
    raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                    f"{len(lhs_shape)} and {len(rhs_shape)}.")
  if dimension_numbers is None:
    axes = tuple(range(len(lhs_shape)))
    return ConvDimensionNumbers(axes, axes, axes)
  if not isinstance(dimension_numbers, (list, tuple)):
    raise TypeError("convolution dimension_numbers must be tuple/list or None, got "
                    f"{type(dimension_numbers)}.")
  if len(dimension_numbers) != 3:
    raise TypeError("convolution dimension_numbers list/tuple must be length 3, got "
                    f"{len(dimension_numbers)}.")
  if not all(isinstance(s, str) for s in dimension_numbers):
    raise TypeError("convolution dimension_numbers elements must be strings, got "
                    f"{tuple(map(type, dimension_numbers))}.")
  for i, spec in enumerate(dimension_numbers):
    if len(spec) != len(lhs_shape):
      raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the ndim of "
                      f"lhs and rhs, got {len(spec)} for lhs and rhs shapes {tuple(lhs_shape)} "
                      f"and {tuple(rhs_shape)}.")
  return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def conv_general_permutations(dimension_numbers):
  """The axis permutations that put each operand in (N, C, spatial...) order.

  Spatial axes are ordered as they appear in the kernel's string, so
  ``window_strides[i]`` belongs to the i-th spatial letter of ``rhs_spec``.

  Args:
    dimension_numbers: three strings ``(lhs_spec, rhs_spec, out_spec)``; the lhs
      and output use 'N' and 'C', the kernel 'O' and 'I', and all three share
      one set of spatial letters.

  Returns:
    A triple of int tuples ``(lhs_perm, rhs_perm, out_perm)``.

  Raises:
    TypeError: a required letter is missing or repeated, or the spatial letters differ.

  Mirrors `jax.lax.conv_general_permutations`.
  """
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  charpairs = (("N", "C"), ("O", "I"), ("N", "C"))
  for i, (a, b) in enumerate(charpairs):
    if not dimension_numbers[i].count(a) == dimension_numbers[i].count(b) == 1:
      raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters '{a}' "
                      f"and '{b}' exactly once, got {dimension_numbers[i]}.")
    if len(dimension_numbers[i]) != len(set(dimension_numbers[i])):
      raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate characters, "
                      f"got {dimension_numbers[i]}.")
  if not (set(lhs_spec) - {"N", "C"} == set(rhs_spec) - {"O", "I"}
          == set(out_spec) - {"N", "C"}):
    raise TypeError("convolution dimension_numbers elements must each have the same set of "
                    f"spatial characters, got {dimension_numbers}.")

  def perm(spec, pair):
    spatial = sorted((i for i, c in enumerate(spec) if c not in pair),
                     key=lambda i: rhs_spec.index(spec[i]))
    return (spec.index(pair[0]), spec.index(pair[1]), *spatial)

  return tuple(perm(spec, pair) for spec, pair in zip(dimension_numbers, charpairs, strict=True))


def _dilate_shape(shape, dilation):
  """Each size after inserting ``dilation - 1`` holes between elements."""
  if not all(d > 0 for d in dilation):
    raise TypeError(f"All dilations must be positive, got {tuple(dilation)}.")
  dilation = (1,) * (len(shape) - len(dilation)) + tuple(dilation)
  return tuple(0 if n == 0 else 1 + d * (n - 1) for n, d in zip(shape, dilation, strict=True))


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
  """The result shape of a convolution of operands in canonical (N, C, spatial...) order.

  Args:
    lhs_shape, rhs_shape: shapes ``(N, C, *spatial)`` and ``(O, I, *window)``.
    strides: one positive int per spatial dimension.
    pads: a padding name ('SAME', 'SAME_LOWER', 'VALID') or ``(low, high)`` pairs.
    batch_group_count: the batch grouping (the result batch is ``N // count``).

  Returns:
    ``(N // batch_group_count, O, *out_spatial)``.

  Raises:
    TypeError: the number of pads is not the number of spatial dimensions.
    ValueError: negative padding removes more than the whole dimension, or a
      stride is not positive (JAX returns a meaningless shape there).

  Mirrors `jax.lax.conv_shape_tuple`.
  """
  strides = _int_tuple(strides, "conv_shape_tuple strides")
  if len(strides) != len(lhs_shape) - 2 or not all(s > 0 for s in strides):
    raise ValueError(f"conv_shape_tuple strides must be {len(lhs_shape) - 2} positive integers, "
                     f"got {strides}.")
  if isinstance(pads, str):
    pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
  if len(pads) != len(lhs_shape) - 2:
    raise TypeError("Wrong number of explicit pads for convolution: expected "
                    f"{len(lhs_shape) - 2}, got {len(pads)}.")
  padded = [int(n) + int(lo) + int(hi) for n, (lo, hi) in zip(lhs_shape[2:], pads, strict=True)]
  if any(n < 0 for n in padded):
    raise ValueError("Negative padding is larger than the size of the corresponding dimension: "
                     f"got padding={pads} for lhs_shape[2:]={tuple(lhs_shape[2:])}")
  out_space = tuple(max((n - int(k)) // int(s) + 1, 0)
                    for n, k, s in zip(padded, rhs_shape[2:], strides, strict=True))
  batch = int(lhs_shape[0]) // batch_group_count if batch_group_count > 1 else int(lhs_shape[0])
  return (batch, int(rhs_shape[0]), *out_space)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
  """The result shape of a convolution given string dimension numbers.

  Mirrors `jax.lax.conv_general_shape_tuple`.
  """
  lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
  out = conv_shape_tuple(np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm),
                         window_strides, padding)
  return tuple(int(out[i]) for i in np.argsort(out_perm))


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
  """The result shape of `conv_transpose` given string dimension numbers.

  Each spatial size is ``(in - 1) * stride - window + 2`` plus the total
  padding (for a name, the padding `conv_transpose` chooses).

  Mirrors `jax.lax.conv_transpose_shape_tuple`.
  """
  lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
  lhs_t = [int(d) for d in np.take(lhs_shape, lhs_perm)]
  rhs_t = [int(d) for d in np.take(rhs_shape, rhs_perm)]
  if isinstance(padding, str):
    padding = [_conv_transpose_padding(k, s, padding)
               for k, s in zip(rhs_t[2:], window_strides, strict=True)]
  totals = [int(np.sum(p)) for p in padding]
  out_space = [(n - 1) * s - k + 2 + p
               for n, k, s, p in zip(lhs_t[2:], rhs_t[2:], window_strides, totals, strict=True)]
  out = (lhs_t[0], rhs_t[0], *out_space)
  return tuple(int(out[i]) for i in np.argsort(out_perm))


# ----------------------------------------------------------------------------
# conv_general_dilated


def _int_tuple(values, what):
  try:
    return tuple(operator.index(v) for v in values)
  except TypeError as e:
    raise TypeError(f"{what} must be a sequence of integers, got {values!r}") from e


def _group_count(value, what):
  try:
    return operator.index(value)
  except TypeError as e:
    raise TypeError(f"conv_general_dilated {what} must be an integer, got {value!r}") from e


def _check_dilation(what, dilation, n_spatial):
  if len(dilation) != n_spatial:
    raise ValueError(f"{what} must have one entry per spatial dimension ({n_spatial}), got "
                     f"{dilation}.")
  if not all(d > 0 for d in dilation):
    raise TypeError(f"{what}: All dilations must be positive, got {dilation}.")


def _check_window_params(n_spatial, window_strides, lhs_dilation, rhs_dilation,
                         feature_group_count, batch_group_count):
  """JAX's checks of the integer params, made before any shape arithmetic divides by them.

  Raises ValueError for a stride or group count below 1 or a per-dimension
  param of the wrong length, and TypeError (JAX's class) for a dilation below 1.
  """
  for name, count in (("feature_group_count", feature_group_count),
                      ("batch_group_count", batch_group_count)):
    if not count > 0:
      raise ValueError(f"conv_general_dilated {name} must be a positive integer, got {count}.")
  if len(window_strides) != n_spatial:
    raise ValueError("conv_general_dilated window and window_strides must have the same number "
                     f"of dimensions, but got {n_spatial} and {len(window_strides)}")
  if not all(s > 0 for s in window_strides):
    raise ValueError(f"conv_general_dilated window_strides must be positive, got "
                     f"{window_strides}.")
  _check_dilation("conv_general_dilated lhs_dilation", lhs_dilation, n_spatial)
  _check_dilation("conv_general_dilated rhs_dilation", rhs_dilation, n_spatial)


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                         dimension_numbers=None, feature_group_count=1, batch_group_count=1,
                         precision=None, preferred_element_type=None, out_sharding=None):
  """General n-dimensional convolution with strides, padding, dilation and groups.

  Computes XLA's ``Conv``: for each output position, the sum over a window of
  `lhs` (zero-padded, and with ``lhs_dilation - 1`` zeros inserted between
  elements) times the kernel `rhs` (with ``rhs_dilation - 1`` holes). As in
  deep-learning libraries the kernel is not flipped (a cross-correlation).

  Args:
    lhs: the input, rank ``n + 2``.
    rhs: the kernel, rank ``n + 2``, of lhs's dtype.
    window_strides: ``n`` positive ints.
    padding: 'SAME', 'SAME_LOWER', 'VALID', or ``n`` ``(low, high)`` int pairs
      (negative values crop).
    lhs_dilation: None or ``n`` positive ints ("transposed convolution").
    rhs_dilation: None or ``n`` positive ints ("atrous convolution").
    dimension_numbers: None (``NCHW``, ``OIHW``, ``NCHW`` order), a
      `ConvDimensionNumbers`, or three strings such as
      ``('NHWC', 'HWIO', 'NHWC')``; spatial letters are matched to strides in
      the order they appear in the kernel's string.
    feature_group_count: splits lhs features into this many groups, each
      convolved with its share of the kernel's output features.
    batch_group_count: splits lhs batch into this many groups, likewise.
    precision: None, a `Precision` (or its name), or a pair of them.
    preferred_element_type: the result (accumulation) dtype, at least as wide
      as the inputs'.
    out_sharding: must be None (xjax has no sharding).

  Returns:
    The convolution, with the batch, feature and spatial axes where
    ``dimension_numbers``'s output spec puts them.

  Raises:
    TypeError: mixed dtypes, ranks that differ, malformed dimension numbers,
      non-positive dilations, or the wrong number of pads.
    ValueError: group counts that are not positive or do not divide the sizes,
      mismatched feature sizes, strides that are not positive or of the wrong
      length, malformed padding, or string padding with lhs dilation.
    RuntimeError: an unknown padding name.

  Mirrors `jax.lax.conv_general_dilated`.
  """
  if out_sharding is not None:
    raise NotImplementedError("conv_general_dilated: out_sharding is not supported by xjax")
  lhs, rhs = structural._asarray(lhs), structural._asarray(rhs)
  lhs_shape, rhs_shape = core.get_aval(lhs).shape, core.get_aval(rhs).shape
  dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
  dnums = ConvDimensionNumbers(*(tuple(int(d) for d in spec) for spec in dnums))
  n_spatial = len(lhs_shape) - 2
  window_strides = _int_tuple(window_strides, "conv_general_dilated window_strides")
  lhs_dilation = ((1,) * n_spatial if lhs_dilation is None
                  else _int_tuple(lhs_dilation, "conv_general_dilated lhs_dilation"))
  rhs_dilation = ((1,) * n_spatial if rhs_dilation is None
                  else _int_tuple(rhs_dilation, "conv_general_dilated rhs_dilation"))
  if isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
    raise ValueError("String padding is not implemented for transposed convolution using this "
                     "op. Please either exactly specify the required padding or use "
                     "conv_transpose.")
  feature_group_count = _group_count(feature_group_count, "feature_group_count")
  batch_group_count = _group_count(batch_group_count, "batch_group_count")
  _check_window_params(n_spatial, window_strides, lhs_dilation, rhs_dilation,
                       feature_group_count, batch_group_count)
  if isinstance(padding, str):
    window = np.take(rhs_shape, dnums.rhs_spec)[2:]
    padding = padtype_to_pads(np.take(lhs_shape, dnums.lhs_spec)[2:],
                              _dilate_shape(window, rhs_dilation), window_strides, padding)
  try:
    padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
  except (ValueError, TypeError) as e:
    raise ValueError("padding argument to conv_general_dilated should be a string or a "
                     f"sequence of (low, high) pairs, got {padding}") from e
  if preferred_element_type is not None:
    preferred_element_type = dtypes.canonicalize_dtype(preferred_element_type)
  return conv_general_dilated_p.bind(
      lhs, rhs, window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
      rhs_dilation=rhs_dilation, dimension_numbers=dnums,
      feature_group_count=feature_group_count, batch_group_count=batch_group_count,
      precision=canonicalize_precision(precision),
      preferred_element_type=preferred_element_type, out_sharding=None)


def _conv_general_dilated_shape(lhs, rhs, *, window_strides, padding, lhs_dilation,
                                rhs_dilation, dimension_numbers, feature_group_count,
                                batch_group_count):
  if len(lhs.shape) != len(rhs.shape):
    raise ValueError("conv_general_dilated lhs and rhs must have the same number of dimensions, "
                     f"but got {lhs.shape} and {rhs.shape}.")
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  for spec in dimension_numbers:
    if sorted(spec) != list(range(lhs.ndim)):
      raise TypeError("conv_general_dilated dimension_numbers must each be a permutation of the "
                      f"operand axes {tuple(range(lhs.ndim))}, got {dimension_numbers}.")
  _check_window_params(lhs.ndim - 2, window_strides, lhs_dilation, rhs_dilation,
                       feature_group_count, batch_group_count)
  lhs_features = lhs.shape[lhs_spec[1]]
  quot, rem = divmod(lhs_features, feature_group_count)
  if rem:
    raise ValueError("conv_general_dilated feature_group_count must divide lhs feature "
                     f"dimension size, but {feature_group_count} does not divide "
                     f"{lhs_features}.")
  if quot != rhs.shape[rhs_spec[1]]:
    raise ValueError("conv_general_dilated lhs feature dimension size divided by "
                     "feature_group_count must equal the rhs input feature dimension size, but "
                     f"{lhs_features} // {feature_group_count} != {rhs.shape[rhs_spec[1]]}.")
  if rhs.shape[rhs_spec[0]] % feature_group_count:
    raise ValueError("conv_general_dilated rhs output feature dimension size must be a multiple "
                     f"of feature_group_count, but {rhs.shape[rhs_spec[0]]} is not a multiple "
                     f"of {feature_group_count}.")
  lhs_batch = lhs.shape[lhs_spec[0]]
  if batch_group_count > 1 and lhs_batch % batch_group_count:
    raise ValueError("conv_general_dilated batch_group_count must divide lhs batch dimension "
                     f"size, but {batch_group_count} does not divide {lhs_batch}.")
  if rhs.shape[rhs_spec[0]] % batch_group_count:
    raise ValueError("conv_general_dilated rhs output feature dimension size must be a multiple "
                     f"of batch_group_count, but {rhs.shape[rhs_spec[0]]} is not a multiple of "
                     f"{batch_group_count}.")
  if batch_group_count > 1 and feature_group_count > 1:
    raise ValueError("At most one of batch_group_count and feature_group_count may be > 1, got "
                     f"batch_group_count={batch_group_count} and "
                     f"feature_group_count={feature_group_count}")
  lhs_t = _dilate_shape(np.take(lhs.shape, lhs_spec), lhs_dilation)
  rhs_t = _dilate_shape(np.take(rhs.shape, rhs_spec), rhs_dilation)
  out_t = conv_shape_tuple(lhs_t, rhs_t, window_strides, padding, batch_group_count)
  return tuple(out_t[i] for i in np.argsort(out_spec))


def _validate_preferred_element_type(input_dtype, preferred):
  """JAX's checks that `preferred` can hold a product of `input_dtype` values."""
  isdt = dtypes.issubdtype
  if not (isdt(input_dtype, np.integer) and isdt(preferred, np.floating)):
    kinds = (np.integer, np.floating, np.complexfloating)
    if any(isdt(input_dtype, t) and not isdt(preferred, t) for t in kinds):
      raise TypeError("Input type is incompatible with `preferred_element_type`. The compatible "
                      "combinations of (input_type, preferred_element_type) are (integral, "
                      "integral), (integral, floating), (floating, floating), (complex, complex.")
    if isdt(input_dtype, np.signedinteger) and not isdt(preferred, np.signedinteger):
      raise TypeError("`preferred_element_type` must have the same signedness as the original "
                      "type.")
  if np.dtype(preferred).itemsize < np.dtype(input_dtype).itemsize:
    raise TypeError("`preferred_element_type` must not be narrower than the original type.")


def _conv_general_dilated_abstract_eval(lhs, rhs, *, window_strides, padding, lhs_dilation,
                                        rhs_dilation, dimension_numbers, feature_group_count,
                                        batch_group_count, precision, preferred_element_type,
                                        out_sharding):
  check_dtype_kind("conv_general_dilated", (lhs, rhs), ("any", "any"))
  dtype = same_dtypes("conv_general_dilated", (lhs, rhs))
  if preferred_element_type is not None:
    _validate_preferred_element_type(dtype, preferred_element_type)
    dtype = preferred_element_type
  shape = _conv_general_dilated_shape(
      lhs, rhs, window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
      rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers,
      feature_group_count=feature_group_count, batch_group_count=batch_group_count)
  return core.ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)


def _conv_general_dilated_lowering(ctx, lhs, rhs, *, window_strides, padding, lhs_dilation,
                                   rhs_dilation, dimension_numbers, feature_group_count,
                                   batch_group_count, precision, preferred_element_type,
                                   out_sharding):
  params = dict(window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
                rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers,
                feature_group_count=feature_group_count, batch_group_count=batch_group_count,
                precision=precision, preferred_element_type=preferred_element_type,
                out_sharding=out_sharding)
  if dtypes.issubdtype(ctx.avals_in[0].dtype, np.complexfloating):
    # XLA's CPU and GPU backends have no fast complex convolution: JAX lowers it
    # to three real ones, and so do we.
    return lowering.lower_fun(_complex_conv, multiple_results=False)(ctx, lhs, rhs, **params)
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  window = tuple(ctx.avals_in[1].shape[i] for i in rhs_spec[2:])
  if 0 in window:
    raise ValueError("conv_general_dilated cannot lower a window (rhs spatial shape) with a "
                     f"zero-size dimension, got {window}.")
  letters = lambda spec, a, b: "[" + ", ".join(
      a if i == spec[0] else b if i == spec[1] else str(spec.index(i) - 2)
      for i in range(len(spec))) + "]"
  conv_dnums = (f"#stablehlo.conv<{letters(lhs_spec, 'b', 'f')}x{letters(rhs_spec, 'o', 'i')}"
                f"->{letters(out_spec, 'b', 'f')}>")
  n = len(window_strides)
  pads = (f"dense<{[list(p) for p in padding]}> : tensor<{n}x2xi64>" if n
          else "dense<> : tensor<0x2xi64>")
  pair = precision if isinstance(precision, tuple) else (Precision.DEFAULT, Precision.DEFAULT)
  attrs = (f"batch_group_count = {batch_group_count} : i64, dimension_numbers = {conv_dnums}, "
           f"feature_group_count = {feature_group_count} : i64, "
           f"lhs_dilation = {hlo.i64_array(lhs_dilation)}, padding = {pads}, "
           "precision_config = ["
           + ", ".join(f"#stablehlo<precision {p.name}>" for p in pair) + "], "
           f"rhs_dilation = {hlo.i64_array(rhs_dilation)}, "
           f"window_reversal = {hlo.bool_array([False] * n)}, "
           f"window_strides = {hlo.i64_array(window_strides)}")
  return ctx.op1("stablehlo.convolution", [lhs, rhs], hlo.aval_type(ctx.avals_out[0]), attrs)


def _complex_conv(lhs, rhs, *, preferred_element_type, **params):
  """A complex convolution from three real ones (Gauss's product trick), as JAX lowers it."""
  if preferred_element_type is not None:
    preferred_element_type = np.finfo(preferred_element_type).dtype
  conv = lambda x, y: conv_general_dilated_p.bind(
      x, y, preferred_element_type=preferred_element_type, **params)
  x_re, x_im, y_re, y_im = ew.real(lhs), ew.imag(lhs), ew.real(rhs), ew.imag(rhs)
  k1 = conv(ew.add(x_re, x_im), y_re)
  k2 = conv(x_re, ew.sub(y_im, y_re))
  k3 = conv(x_im, ew.add(y_re, y_im))
  return ew.complex(ew.sub(k1, k3), ew.add(k1, k2))


conv_general_dilated_p = standard_primitive("conv_general_dilated",
                                            _conv_general_dilated_abstract_eval,
                                            _conv_general_dilated_lowering)


# Transposes, ignoring spatial axes (m batch, j in feature, k out feature):
#   forward [m, j] [j, k] -> [m, k]; lhs^T: [m, k] [k, j] -> [m, j];
#   rhs^T: [j, m] [m, k] -> [j, k].
# With feature groups the rhs transpose is a batch-grouped conv, and with batch
# groups a feature-grouped one; the lhs transpose is feature-grouped in both
# cases after moving the group axis within the kernel.


def _spec_transpose(spec):
  return (spec[1], spec[0], *spec[2:])


def _vjp_lhs_padding(in_shape, window_shape, window_strides, out_shape, padding, lhs_dilation,
                     rhs_dilation):
  lhs_d = _dilate_shape(in_shape, lhs_dilation)
  rhs_d = _dilate_shape(window_shape, rhs_dilation)
  out_d = _dilate_shape(out_shape, window_strides)
  before = [k - lo - 1 for k, (lo, _) in zip(rhs_d, padding, strict=True)]
  after = [n + k - 1 - o - b for n, k, o, b in zip(lhs_d, rhs_d, out_d, before, strict=True)]
  return tuple(zip(before, after, strict=True))


def _vjp_rhs_padding(in_shape, window_shape, window_strides, out_shape, padding, lhs_dilation,
                     rhs_dilation):
  if len(in_shape) == 0:  # a 0-d convolution
    return ()
  lhs_d = _dilate_shape(in_shape, lhs_dilation)
  rhs_d = _dilate_shape(window_shape, rhs_dilation)
  out_d = _dilate_shape(out_shape, window_strides)
  lows = [lo for lo, _ in padding]
  highs = [o - n + k - lo - 1 for o, n, k, lo in zip(out_d, lhs_d, rhs_d, lows, strict=True)]
  return tuple(zip(lows, highs, strict=True))


def _conv_general_dilated_transpose_lhs(ct, lhs, rhs, *, window_strides, padding, lhs_dilation,
                                        rhs_dilation, dimension_numbers, feature_group_count,
                                        batch_group_count, precision, preferred_element_type,
                                        out_sharding):
  """The lhs cotangent: ct (dilated by the strides) convolved with the flipped kernel."""
  lhs_aval = lhs.aval
  rhs_shape = core.get_aval(rhs).shape
  ct_aval = core.get_aval(ct)
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  groups = 1
  if feature_group_count > 1 or batch_group_count > 1:
    # Move the group factor from the kernel's output features to its input features.
    groups = max(feature_group_count, batch_group_count)
    rhs = _reshape_axis_out_of(rhs_spec[0], groups, rhs)
    rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
  pads = _vjp_lhs_padding(np.take(lhs_aval.shape, lhs_spec[2:]), np.take(rhs_shape, rhs_spec[2:]),
                          window_strides, np.take(ct_aval.shape, out_spec[2:]), padding,
                          lhs_dilation, rhs_dilation)
  flipped = structural.rev(rhs, tuple(rhs_spec[2:]))
  if core.get_aval(flipped).dtype != ct_aval.dtype:
    flipped = ew.convert_element_type(flipped, ct_aval.dtype)
  out = conv_general_dilated(
      ct, flipped, window_strides=lhs_dilation, padding=pads, lhs_dilation=window_strides,
      rhs_dilation=rhs_dilation,
      dimension_numbers=ConvDimensionNumbers(out_spec, _spec_transpose(rhs_spec), lhs_spec),
      feature_group_count=groups, batch_group_count=1, precision=precision,
      preferred_element_type=preferred_element_type)
  if core.get_aval(out).dtype != lhs_aval.dtype:
    out = ew.convert_element_type(out, lhs_aval.dtype)
  if batch_group_count > 1:
    out = _reshape_axis_out_of(lhs_spec[1], batch_group_count, out)
    out = _reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
  return out


def _conv_general_dilated_transpose_rhs(ct, lhs, rhs, *, window_strides, padding, lhs_dilation,
                                        rhs_dilation, dimension_numbers, feature_group_count,
                                        batch_group_count, precision, preferred_element_type,
                                        out_sharding):
  """The rhs cotangent: lhs convolved with ct, the batch axis contracted."""
  rhs_aval = rhs.aval
  ct_aval = core.get_aval(ct)
  if math.prod(ct_aval.shape) == 0:
    # Avoid a degenerate convolution whose kernel has spatial size 0.
    return ad.Zero(rhs_aval)
  lhs_shape = core.get_aval(lhs).shape
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  feature_group_count, batch_group_count = batch_group_count, feature_group_count
  pads = _vjp_rhs_padding(np.take(lhs_shape, lhs_spec[2:]), np.take(rhs_aval.shape, rhs_spec[2:]),
                          window_strides, np.take(ct_aval.shape, out_spec[2:]), padding,
                          lhs_dilation, rhs_dilation)
  if core.get_aval(lhs).dtype != ct_aval.dtype:
    lhs = ew.convert_element_type(lhs, ct_aval.dtype)
  dnums = ConvDimensionNumbers(_spec_transpose(lhs_spec), _spec_transpose(out_spec),
                               _spec_transpose(rhs_spec))
  out = conv_general_dilated(
      lhs, ct, window_strides=rhs_dilation, padding=pads, lhs_dilation=lhs_dilation,
      rhs_dilation=window_strides, dimension_numbers=dnums,
      feature_group_count=feature_group_count, batch_group_count=batch_group_count,
      precision=precision, preferred_element_type=preferred_element_type)
  if core.get_aval(out).dtype != rhs_aval.dtype:
    out = ew.convert_element_type(out, rhs_aval.dtype)
  return out


# Bilinear: d conv(x, y) = conv(x_dot, y) + conv(x, y_dot).
ad.defbilinear(conv_general_dilated_p, _conv_general_dilated_transpose_lhs,
               _conv_general_dilated_transpose_rhs)


def _reshape_axis_into(src, dst, x):
  """Merges axis `src` into axis `dst` (numbered after removing `src`), `src` major."""
  shape = core.get_aval(x).shape
  perm = [i for i in range(len(shape)) if i != src]
  perm.insert(dst, src)
  new_shape = [d for i, d in enumerate(shape) if i != src]
  new_shape[dst] *= shape[src]
  return structural.reshape(x, tuple(new_shape), tuple(perm))


def _reshape_axis_out_of(src, size1, x):
  """Splits axis `src` into ``(size1, rest)``."""
  shape = list(core.get_aval(x).shape)
  size2, ragged = divmod(shape[src], size1)
  assert not ragged, ("internal: axis size not divisible", shape, src, size1)
  shape[src:src + 1] = [size1, size2]
  return structural.reshape(x, tuple(shape))


def _conv_general_dilated_batch(axis_data, args, dims, *, window_strides, padding, lhs_dilation,
                                rhs_dilation, dimension_numbers, feature_group_count,
                                batch_group_count, precision, preferred_element_type,
                                out_sharding):
  """JAX's rule: the vmapped axis is folded into the batch, a feature axis or a group axis.

  lhs batched: into lhs batch (with batch groups, inside each group). rhs
  batched: into kernel output features (inside each group). Both: a grouped
  conv with one group per member.
  """
  lhs, rhs = args
  lhs_bdim, rhs_bdim = dims
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  conv = lambda x, y, fgc, bgc: conv_general_dilated(
      x, y, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
      feature_group_count=fgc, batch_group_count=bgc, precision=precision,
      preferred_element_type=preferred_element_type)
  lhs_shape, rhs_shape = core.get_aval(lhs).shape, core.get_aval(rhs).shape
  unmapped = batching.not_mapped
  if ((lhs_bdim is not unmapped and lhs_shape[lhs_bdim] == 0) or
      (rhs_bdim is not unmapped and rhs_shape[rhs_bdim] == 0)):
    # An empty vmap: reshapes into groups of size 0 do not work; emit zeros.
    drop = lambda shape, b: tuple(d for i, d in enumerate(shape) if i != b)
    lhs_aval, rhs_aval = core.get_aval(lhs), core.get_aval(rhs)
    out_aval = _conv_general_dilated_abstract_eval(
        lhs_aval.update(shape=drop(lhs_shape, lhs_bdim)),
        rhs_aval.update(shape=drop(rhs_shape, rhs_bdim)),
        window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers,
        feature_group_count=feature_group_count, batch_group_count=batch_group_count,
        precision=precision, preferred_element_type=preferred_element_type,
        out_sharding=out_sharding)
    return structural.full((0, *out_aval.shape), 0, out_aval.dtype), 0
  if lhs_bdim is not unmapped and rhs_bdim is not unmapped:
    size = lhs_shape[lhs_bdim]
    if batch_group_count > 1:
      new_lhs = _reshape_axis_into(lhs_bdim, lhs_spec[0], lhs)
      batch_group_count *= size
    else:
      new_lhs = _reshape_axis_into(lhs_bdim, lhs_spec[1], lhs)
      feature_group_count *= size
    new_rhs = _reshape_axis_into(rhs_bdim, rhs_spec[0], rhs)
    out = conv(new_lhs, new_rhs, feature_group_count, batch_group_count)
    return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
  if lhs_bdim is not unmapped:
    size = lhs_shape[lhs_bdim]
    if batch_group_count == 1:
      new_lhs = _reshape_axis_into(lhs_bdim, lhs_spec[0], lhs)
    else:
      # Keep the batch groups outermost: split them off, fold the vmapped axis
      # in below them, merge back.
      new_lhs = _reshape_axis_out_of(lhs_spec[0] + int(lhs_bdim <= lhs_spec[0]),
                                     batch_group_count, lhs)
      new_lhs = _reshape_axis_into(lhs_bdim + int(lhs_spec[0] < lhs_bdim), lhs_spec[0] + 1,
                                   new_lhs)
      new_lhs = _reshape_axis_into(lhs_spec[0], lhs_spec[0], new_lhs)
    out = conv(new_lhs, rhs, feature_group_count, batch_group_count)
    return _reshape_axis_out_of(out_spec[0], size, out), out_spec[0]
  size = rhs_shape[rhs_bdim]
  if feature_group_count == 1 and batch_group_count == 1:
    new_rhs = _reshape_axis_into(rhs_bdim, rhs_spec[0], rhs)
    out = conv(lhs, new_rhs, 1, 1)
    return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
  # Groups stay outermost in the kernel's output features, as above; the
  # output features are then (group, member, feature) and regrouped as
  # (member, group, feature).
  groups = max(feature_group_count, batch_group_count)
  new_rhs = _reshape_axis_out_of(rhs_spec[0] + int(rhs_bdim <= rhs_spec[0]), groups, rhs)
  new_rhs = _reshape_axis_into(rhs_bdim + int(rhs_spec[0] < rhs_bdim), rhs_spec[0] + 1, new_rhs)
  new_rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[0], new_rhs)
  out = conv(lhs, new_rhs, feature_group_count, batch_group_count)
  out = _reshape_axis_out_of(out_spec[1], groups, out)
  out = _reshape_axis_out_of(out_spec[1] + 1, size, out)
  out = _reshape_axis_into(out_spec[1], out_spec[1] + 1, out)
  return out, out_spec[1]


conv_general_dilated_p.def_batch(_conv_general_dilated_batch)


# ----------------------------------------------------------------------------
# Wrappers


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
  """A convolution in NCHW / OIHW layout: `conv_general_dilated` without dilation or groups.

  Args:
    lhs: ``(N, C, *spatial)``; rhs: ``(O, C, *window)``, same dtype.
    window_strides: one positive int per spatial dimension.
    padding: 'SAME', 'SAME_LOWER' or 'VALID'.

  Returns:
    ``(N, O, *out_spatial)``.

  Mirrors `jax.lax.conv`.
  """
  return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                              preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
  """A convolution in NCHW / OIHW layout with explicit padding and dilations.

  Args as `conv_general_dilated` (`lhs_dilation`, `rhs_dilation` may be None).

  Mirrors `jax.lax.conv_with_general_padding`.
  """
  return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                              rhs_dilation=rhs_dilation, precision=precision,
                              preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k, s, padding):
  """The (before, after) padding of a transposed convolution along one axis.

  `k` is the (dilated) kernel size, `s` the stride; `padding` is the forward
  conv's 'SAME' or 'VALID', or its (low, high) pair.
  """
  if padding == "SAME":
    total = k + s - 2
    before = k - 1 if s > k - 1 else int(np.ceil(total / 2))
  elif padding == "VALID":
    total = k + s - 2 + max(k - s, 0)
    before = k - 1
  elif isinstance(padding, tuple):
    pads = tuple(k - p - 1 for p in padding)
    before, total = pads[0], sum(pads)
  else:
    raise ValueError(f"Invalid padding mode: {padding}")
  return before, total - before


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
  """A fractionally strided ("transposed") convolution.

  Computes a convolution of `lhs` dilated by `strides` (stride 1), with the
  output sizes of Keras's ``Conv2DTranspose``. The kernel is not flipped
  unless `transpose_kernel`.

  Args:
    lhs: rank ``n + 2`` input.
    rhs: rank ``n + 2`` kernel.
    strides: ``n`` ints, the fractional stride.
    padding: 'SAME' or 'VALID' (the forward conv's), or ``n`` ``(low, high)``
      pairs: with `use_consistent_padding` those are the forward conv's padding
      too (PyTorch's convention), otherwise the transposed conv's own.
    rhs_dilation: None or ``n`` positive ints.
    dimension_numbers: as in `conv_general_dilated`; by default TensorFlow's
      (``NHWC``, ``HWIO``, ``NHWC`` for 2-D; 0-D to 3-D have defaults).
    transpose_kernel: flip the kernel's spatial axes and swap its I and O axes,
      making this the gradient of the forward conv with that kernel.
    precision, preferred_element_type: as in `conv_general_dilated`.
    use_consistent_padding: read explicit pairs as the forward conv's padding.

  Returns:
    The transposed convolution.

  Raises:
    ValueError: rank above 5 without dimension numbers, an invalid padding,
      or `strides` or `rhs_dilation` of the wrong length.
    TypeError: `strides` or `rhs_dilation` not positive integers (JAX's class,
      as for any dilation); otherwise as `conv_general_dilated`.

  Mirrors `jax.lax.conv_transpose`.
  """
  lhs, rhs = structural._asarray(lhs), structural._asarray(rhs)
  lhs_shape, rhs_shape = core.get_aval(lhs).shape, core.get_aval(rhs).shape
  if len(lhs_shape) != len(rhs_shape) or len(lhs_shape) < 2:
    raise ValueError("conv_transpose requires lhs and rhs of one rank, at least 2, got shapes "
                     f"{lhs_shape} and {rhs_shape}.")
  ndim = len(lhs_shape)
  if dimension_numbers is None:
    defaults = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"), 4: ("NHWC", "HWIO", "NHWC"),
                5: ("NHWDC", "HWDIO", "NHWDC")}
    if ndim not in defaults:
      raise ValueError("No 4+ dimensional dimension_number defaults.")
    dimension_numbers = defaults[ndim]
  dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
  window = [int(rhs_shape[i]) for i in dn.rhs_spec[2:]]
  # The strides become lhs_dilation below: check them here, under their own name.
  strides = _int_tuple(strides, "conv_transpose strides")
  _check_dilation("conv_transpose strides", strides, ndim - 2)
  if rhs_dilation is None:
    rhs_dilation = (1,) * (ndim - 2)
  rhs_dilation = _int_tuple(rhs_dilation, "conv_transpose rhs_dilation")
  _check_dilation("conv_transpose rhs_dilation", rhs_dilation, ndim - 2)
  if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
    per_axis = [padding] * len(strides) if isinstance(padding, str) else padding
    if len(per_axis) != len(strides):
      raise TypeError("Wrong number of explicit pads for convolution: expected "
                      f"{len(strides)}, got {len(per_axis)}.")
    effective = _dilate_shape(window, rhs_dilation)
    pads = tuple(_conv_transpose_padding(k, s, tuple(p) if isinstance(p, list) else p)
                 for k, s, p in zip(effective, strides, per_axis, strict=True))
  else:
    pads = padding
  if transpose_kernel:
    for axis in dn.rhs_spec[2:]:
      rhs = structural.rev(rhs, (axis,))
    perm = list(range(ndim))
    perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
    rhs = structural.transpose(rhs, tuple(perm))
  return conv_general_dilated(lhs, rhs, (1,) * (ndim - 2), pads, strides, rhs_dilation, dn,
                              precision=precision, preferred_element_type=preferred_element_type)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
  """The patches a `conv_general_dilated` window sees, flattened into the feature axis.

  A convolution with a one-hot kernel: the output feature axis ('C') holds,
  for each input channel, the values under the window, in the order
  ``c`` then the spatial letters of the kernel spec; its size is
  ``prod(filter_shape) * C``.

  Args:
    lhs: rank ``n + 2`` input.
    filter_shape: ``n`` ints, the window, in the kernel spec's spatial order.
    window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
    preferred_element_type: as in `conv_general_dilated`.
    precision: None or one `Precision` (for lhs).

  Returns:
    The patches, laid out by ``dimension_numbers``'s output spec.

  Mirrors `jax.lax.conv_general_dilated_patches`.
  """
  lhs = structural._asarray(lhs)
  lhs_aval = core.get_aval(lhs)
  filter_shape = _int_tuple(filter_shape, "conv_general_dilated_patches filter_shape")
  if any(d < 0 for d in filter_shape):
    raise TypeError("conv_general_dilated_patches filter_shape must be non-negative, got "
                    f"{filter_shape}.")
  dnums = conv_dimension_numbers(lhs_aval.shape, (1, 1, *filter_shape), dimension_numbers)
  lhs_spec, rhs_spec, _ = dnums
  spatial = math.prod(filter_shape)
  channels = lhs_aval.shape[lhs_spec[1]]
  # Kernel (C * spatial, 1, *filter_shape): output feature c * spatial + p is a
  # one-hot at window position p, applied to channel c (feature groups).
  square = (spatial, spatial)
  eye = ew.convert_element_type(
      ew.eq(ew.add(structural.broadcasted_iota(np.int32, square, 0), np.int32(0)),
            structural.broadcasted_iota(np.int32, square, 1)), lhs_aval.dtype)
  rhs = structural.broadcast_in_dim(eye, (channels, spatial, spatial), (1, 2))
  rhs = structural.reshape(rhs, (channels * spatial, 1, *filter_shape))
  rhs = _moveaxes(rhs, (0, 1), (rhs_spec[0], rhs_spec[1]))
  return conv_general_dilated(
      lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dnums,
      feature_group_count=channels,
      precision=None if precision is None else (precision, Precision.DEFAULT),
      preferred_element_type=preferred_element_type)


def _moveaxes(x, src, dst):
  """NumPy's moveaxis for sequences of axes (a transpose; none if it is the identity)."""
  ndim = core.get_aval(x).ndim
  src = [s % ndim for s in src]
  dst = [d % ndim for d in dst]
  perm = [i for i in range(ndim) if i not in src]
  for d, s in sorted(zip(dst, src, strict=True)):
    perm.insert(d, s)
  return x if perm == list(range(ndim)) else structural.transpose(x, tuple(perm))


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape, lhs_dilation=None,
                               rhs_dilation=None, dimension_numbers=None, precision=None):
  """An unshared ("locally connected") convolution: a separate kernel per output position.

  Args:
    lhs: rank ``n + 2`` input.
    rhs: rank ``n + 2`` kernels laid out by the kernel spec: its spatial axes
      are the output positions, its 'I' axis the flattened patch (channel,
      then the window in the kernel spec's spatial order), its 'O' axis the
      output features.
    window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers:
      as in `conv_general_dilated`.
    filter_shape: ``n`` ints, the receptive window.
    precision: None, a `Precision`, or a pair.

  Returns:
    The convolution, laid out by ``dimension_numbers``'s output spec.

  Raises:
    ValueError: a dot-algorithm precision.

  Mirrors `jax.lax.conv_general_dilated_local`.
  """
  lhs = structural._asarray(lhs)
  canonical = canonicalize_precision(precision)
  if canonical is None:
    lhs_precision = None
  elif isinstance(canonical, tuple) and len(canonical) == 2:
    lhs_precision = canonical[0]
  else:
    raise ValueError(f"Unsupported precision for conv_general_dilated_local: {precision}")
  patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                         lhs_dilation, rhs_dilation, dimension_numbers,
                                         precision=lhs_precision)
  _, rhs_spec, out_spec = conv_dimension_numbers(
      core.get_aval(lhs).shape, (1, 1, *tuple(filter_shape)), dimension_numbers)
  lhs_b = list(out_spec[2:])
  rhs_b = [rhs_spec[2:][i] for i in sorted(range(len(lhs_b)), key=lambda k: lhs_b[k])]
  dn = (((out_spec[1],), (rhs_spec[1],)), (tuple(sorted(lhs_b)), tuple(rhs_b)))
  out = dot_general(patches, rhs, dimension_numbers=dn, precision=precision)
  return _moveaxes(out, (-2, -1), (out_spec[0], out_spec[1]))

